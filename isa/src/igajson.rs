//! IGA's JSON of a kernel (`-Xprint-json`, the C API's
//! `IGA_FORMATTING_OPT_PRINT_JSON`), read into the [`Code`] that the analysis of
//! the collector's `analysis::flow` and the collector's `analysis::live` needs: the blocks in order, each with
//! its first instruction (and, from IGA 2's JSON, its successors), and per
//! instruction its opcode, execution size, whether it is predicated, the
//! labels it jumps to, its register operands, and (when IGA was asked for
//! its dataflow, `-Xprint-defs`) the live GRF bytes of that dataflow.
//!
//! Two versions exist. IGC 1's IGA writes version 1.0: `insts`, the blocks
//! as `{"kind":"L","value":"L0312"}` before their instructions, no edges.
//! IGC 2's writes version 2.0: `elems`, each block `{"kind":"L","id":1,
//! "symbol":"L0312","preds":[0],"succs":[2,3]}` (an absent list is empty).
//! In both, an instruction is `{"kind":"I","id":N,"op":...,"pred":...,
//! "srcs":[{"kind":"LB","target":"L0384"},...],"opts":["EOT"],
//! "liveTotals":{"r":BYTES,...}}`. Operands differ in spelling: version
//! 1.0 writes a register `{"rn":"r","r":N,"sr":S}` and a region
//! `{"Vt":V,"Wi":W,"Hz":H}` (a destination's `{"Hz":H}`), a send's address
//! `{"kind":"AD","addr":{"reg":..,"len":N},"offset":IMM}`; version 2.0
//! leaves out a zero `r` or `sr`, writes `{"v":V,"w":W,"h":H}`, and
//! `{"kind":"AD","areg":..,"alen":N,"aoff":IMM}`. Both give a send's data
//! registers as `{"kind":"DA","reg":..,"len":N}`.

use super::decoded::{add_entry_block, type_bits, Block, Code, Inst, Operand};
use serde::de::IgnoredAny;
use serde::Deserialize;

#[derive(Deserialize)]
struct Doc {
    #[serde(default)]
    version: String,
    #[serde(default)]
    platform: String,
    insts: Option<Vec<Elem>>,
    elems: Option<Vec<Elem>>,
}

#[derive(Deserialize)]
struct Elem {
    kind: String,
    /// Version 2.0's block id (from 1), which `succs` name.
    id: Option<i64>,
    /// Version 1.0's label.
    value: Option<String>,
    /// Version 2.0's label.
    symbol: Option<String>,
    succs: Option<Vec<usize>>,
    op: Option<String>,
    subop: Option<String>,
    es: Option<u32>,
    #[serde(default)]
    pred: Option<IgnoredAny>,
    #[serde(default)]
    dst: Option<Src>,
    #[serde(default)]
    srcs: Option<Vec<Src>>,
    #[serde(default)]
    opts: Option<Vec<String>>,
    #[serde(rename = "liveTotals")]
    live: Option<Live>,
}

#[derive(Deserialize)]
struct Src {
    kind: Option<String>,
    target: Option<String>,
    /// An immediate's value, from what IGA writes (`0x20F3100`, `-8`; not
    /// `1.5`).
    #[serde(default, deserialize_with = "immediate")]
    value: Option<u64>,
    reg: Option<Reg>,
    rgn: Option<Rgn>,
    #[serde(rename = "type")]
    ty: Option<String>,
    len: Option<u32>,
    /// Version 1.0's address and immediate offset.
    addr: Option<Addr>,
    offset: Option<i64>,
    surf: Option<Surf>,
    /// Version 2.0's address, its length, immediate offset and surface.
    areg: Option<Reg>,
    alen: Option<u32>,
    aoff: Option<i64>,
    stype: Option<String>,
}

#[derive(Deserialize)]
struct Reg {
    rn: Option<String>,
    r: Option<u32>,
    sr: Option<u32>,
}

#[derive(Deserialize)]
struct Rgn {
    #[serde(rename = "Vt", alias = "v", default, deserialize_with = "number")]
    vt: Option<u32>,
    #[serde(rename = "Wi", alias = "w", default, deserialize_with = "number")]
    wi: Option<u32>,
    #[serde(rename = "Hz", alias = "h", default, deserialize_with = "number")]
    hz: Option<u32>,
}

/// An immediate's bits: hexadecimal (`0x20F3100`) or a decimal integer.
fn immediate<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    struct V;
    impl<'de> serde::de::Visitor<'de> for V {
        type Value = Option<u64>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an immediate value")
        }
        fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
            Ok(match v.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(h, 16).ok(),
                None => v.parse::<i64>().ok().map(|n| n as u64),
            })
        }
        fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
            Ok(Some(v))
        }
        fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
            Ok(Some(v as u64))
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok(None)
        }
    }
    d.deserialize_any(V)
}

/// A number, or `None` for anything else (`"VxH"`, `null`).
fn number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    struct V;
    impl<'de> serde::de::Visitor<'de> for V {
        type Value = Option<u32>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a region number")
        }
        fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
            Ok(u32::try_from(v).ok())
        }
        fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
            Ok(u32::try_from(v).ok())
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok(None)
        }
    }
    d.deserialize_any(V)
}

#[derive(Deserialize)]
struct Addr {
    reg: Option<Reg>,
    len: Option<u32>,
}

#[derive(Deserialize)]
struct Surf {
    #[serde(rename = "type")]
    ty: Option<String>,
}

#[derive(Deserialize)]
struct Live {
    r: Option<u64>,
}

/// Why IGA's JSON cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonError {
    #[error("IGA's JSON does not parse ({0})")]
    Syntax(String),
    #[error("IGA's JSON has neither `insts` nor `elems`")]
    NoInstructions,
}

/// Reads IGA's JSON of one kernel.
pub fn parse(json: &str) -> Result<Code, JsonError> {
    let doc: Doc = serde_json::from_str(json).map_err(|e| JsonError::Syntax(e.to_string()))?;
    let has_edges = doc.elems.is_some();
    let elems = doc.elems.or(doc.insts).ok_or(JsonError::NoInstructions)?;
    let mut code = Code {
        version: doc.version,
        platform: doc.platform,
        ..Code::default()
    };
    let mut ids = std::collections::HashMap::new();
    let mut succ_ids = Vec::new();
    for e in elems {
        match e.kind.as_str() {
            "L" => {
                if let Some(id) = e.id {
                    ids.insert(id, code.blocks.len());
                }
                succ_ids.push(e.succs.clone());
                code.blocks.push(Block {
                    label: e.symbol.or(e.value).unwrap_or_default(),
                    first: code.insts.len(),
                    succs: None,
                });
            }
            "I" => code.insts.push(inst(e)),
            _ => {}
        }
    }
    if has_edges {
        // Successors by block index, from IGA's block ids.
        for (b, succs) in code.blocks.iter_mut().zip(succ_ids) {
            b.succs = Some(
                succs
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|id| ids.get(&(*id as i64)).copied())
                    .collect(),
            );
        }
    }
    // Instructions before any label: a block of their own.
    add_entry_block(&mut code);
    Ok(code)
}

/// Reads IGA's JSON of one instruction (`{"kind":"I",...}`, what IGA's
/// `kv_get_inst_syntax` writes with `IGA_FORMATTING_OPT_PRINT_JSON`): the
/// instruction as [`parse`] reads it within a kernel's JSON.
pub fn parse_inst(json: &str) -> Result<Inst, JsonError> {
    let e: Elem = serde_json::from_str(json).map_err(|e| JsonError::Syntax(e.to_string()))?;
    if e.kind != "I" {
        return Err(JsonError::NoInstructions);
    }
    Ok(inst(e))
}

fn inst(e: Elem) -> Inst {
    let srcs = e.srcs.unwrap_or_default();
    let targets = srcs
        .iter()
        .filter(|s| s.kind.as_deref() == Some("LB"))
        .filter_map(|s| s.target.clone())
        .collect();
    Inst {
        op: e.op.unwrap_or_default(),
        subop: e.subop.unwrap_or_default(),
        es: e.es.unwrap_or(1),
        predicated: e.pred.is_some(),
        dst: e.dst.map(operand),
        srcs: srcs.into_iter().map(operand).collect(),
        targets,
        eot: e.opts.unwrap_or_default().iter().any(|o| o == "EOT"),
        live_bytes: e.live.and_then(|l| l.r),
        spilled_bytes: 0,
    }
}

/// A GRF register's number (`None`: `null` or another file).
fn grf(r: &Option<Reg>) -> Option<u32> {
    let r = r.as_ref()?;
    (r.rn.as_deref() == Some("r")).then(|| r.r.unwrap_or(0))
}

fn operand(s: Src) -> Operand {
    match s.kind.as_deref() {
        Some("RD") | Some("MACRO") | Some("MA") => {
            let Some(reg) = s.reg.as_ref() else {
                return Operand::Other;
            };
            let rgn = s.rgn.as_ref().and_then(|g| match (g.vt, g.wi, g.hz) {
                (Some(v), Some(w), Some(h)) => Some((v, w, h)),
                (None, None, Some(h)) => Some((0, 0, h)),
                _ => None,
            });
            Operand::Region {
                grf: reg.rn.as_deref() == Some("r"),
                reg: reg.r.unwrap_or(0),
                sub: reg.sr.unwrap_or(0),
                rgn,
                bits: s.ty.as_deref().and_then(type_bits),
            }
        }
        Some("DA") => Operand::Data {
            reg: grf(&s.reg),
            len: s.len.unwrap_or(0),
        },
        Some("AD") => {
            let (reg, len) = match &s.addr {
                Some(a) => (grf(&a.reg), a.len.unwrap_or(0)),
                None => (grf(&s.areg), s.alen.unwrap_or(0)),
            };
            Operand::Address {
                reg,
                len,
                offset: s.offset.or(s.aoff).unwrap_or(0),
                surface: s.surf.and_then(|f| f.ty).or(s.stype).unwrap_or_default(),
            }
        }
        Some("IM") => s.value.map_or(Operand::Other, Operand::Immediate),
        _ => Operand::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_versions_are_read() {
        let v1 = r#"{"version":"1.0","platform":"xehpc","insts":[
          {"kind":"L","value":"L0000"},
          {"kind":"I","id":0,"pred":null,"op":"add","srcs":[],"opts":[],"liveTotals":{"r":64,"acc":0}},
          {"kind":"I","id":1,"pred":{"inv":true,"func":"","defs":[0]},"op":"jmpi","srcs":[{"kind":"LB","target":"L0000","type":null}],"opts":[],"liveTotals":{"r":70}},
          {"kind":"L","value":"L0032"},
          {"kind":"I","id":2,"pred":null,"op":"send","srcs":[],"opts":["EOT"],"liveTotals":{"r":64}}
        ]}"#;
        let c = parse(v1).unwrap();
        assert_eq!((c.version.as_str(), c.platform.as_str()), ("1.0", "xehpc"));
        assert_eq!(c.blocks.len(), 2);
        assert_eq!(
            (c.blocks[1].label.as_str(), c.blocks[1].first),
            ("L0032", 2)
        );
        assert_eq!(c.blocks[0].succs, None);
        assert!(!c.insts[0].predicated && c.insts[1].predicated);
        assert_eq!(c.insts[1].targets, ["L0000"]);
        assert!(c.insts[2].eot);
        assert_eq!(c.insts[1].live_bytes, Some(70));

        let v2 = r#"{"version":"2.0","platform":"xe2","elems":[
          {"kind":"L","id":1,"symbol":"L0000","succs":[2]},
          {"kind":"I","id":0,"op":"mov","liveTotals":{"r":64}},
          {"kind":"L","id":2,"symbol":"L0016","preds":[1]},
          {"kind":"I","id":1,"op":"send","opts":["EOT"],"liveTotals":{"r":64}}
        ]}"#;
        let c = parse(v2).unwrap();
        assert_eq!(c.blocks[0].succs, Some(vec![1]));
        assert_eq!(c.blocks[1].succs, Some(vec![]));
        assert!(!c.insts[0].predicated);
    }

    #[test]
    fn json_that_does_not_serve_is_named() {
        assert!(matches!(
            parse("L0000: mov (1) r1 r2"),
            Err(JsonError::Syntax(_))
        ));
        assert!(matches!(
            parse("{\"insts\":[{\"kind\":\"I\""),
            Err(JsonError::Syntax(_))
        ));
        assert_eq!(
            parse("{\"version\":\"1.0\"}"),
            Err(JsonError::NoInstructions)
        );
    }
}
