//! IGA's JSON of a kernel (`-Xprint-json -Xprint-defs`, the C API's
//! `IGA_FORMATTING_OPT_PRINT_JSON | IGA_FORMATTING_OPT_PRINT_DEFS`), read
//! into what the analysis of [`super::flow`] needs: the blocks in order,
//! each with its first instruction (and, from IGA 2's JSON, its
//! successors), and per instruction its opcode, whether it is predicated,
//! the labels it jumps to, and the live GRF bytes of IGA's dataflow.
//!
//! Two versions exist. IGC 1's IGA writes version 1.0: `insts`, the blocks
//! as `{"kind":"L","value":"L0312"}` before their instructions, no edges.
//! IGC 2's writes version 2.0: `elems`, each block `{"kind":"L","id":1,
//! "symbol":"L0312","preds":[0],"succs":[2,3]}` (an absent list is empty).
//! In both, an instruction is `{"kind":"I","id":N,"op":...,"pred":...,
//! "srcs":[{"kind":"LB","target":"L0384"},...],"opts":["EOT"],
//! "liveTotals":{"r":BYTES,...}}`.

use serde::de::IgnoredAny;
use serde::Deserialize;

/// One kernel as IGA's JSON gives it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Code {
    /// The JSON's `version` (`1.0`, `2.0`).
    pub version: String,
    /// IGA's name of the platform (`xehpc`, `xe2`, ...).
    pub platform: String,
    pub blocks: Vec<Block>,
    pub insts: Vec<Inst>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Block {
    /// Its label (`L0312`: the byte offset of its first instruction).
    pub label: String,
    /// Index of its first instruction (its instructions run to the next
    /// block's first).
    pub first: usize,
    /// Successors by block index, when IGA gave them (version 2.0).
    pub succs: Option<Vec<usize>>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Inst {
    pub op: String,
    pub predicated: bool,
    /// The labels it may jump to (`LB` operands).
    pub targets: Vec<String>,
    /// Ends the thread (`{EOT}`).
    pub eot: bool,
    /// Live GRF bytes at this instruction (IGA's `liveTotals.r`).
    pub live_bytes: Option<u64>,
}

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
    /// Version 1.0's label.
    value: Option<String>,
    /// Version 2.0's label.
    symbol: Option<String>,
    succs: Option<Vec<usize>>,
    op: Option<String>,
    #[serde(default)]
    pred: Option<IgnoredAny>,
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
    #[error("IGA's JSON has no live register totals (no `liveTotals`: IGA ignored the definitions option)")]
    NoLiveTotals,
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
    for e in elems {
        match e.kind.as_str() {
            "L" => code.blocks.push(Block {
                label: e.symbol.or(e.value).unwrap_or_default(),
                first: code.insts.len(),
                succs: has_edges.then(|| e.succs.unwrap_or_default()),
            }),
            "I" => code.insts.push(inst(e)),
            _ => {}
        }
    }
    if !code.insts.is_empty() && code.insts.iter().all(|i| i.live_bytes.is_none()) {
        return Err(JsonError::NoLiveTotals);
    }
    if code.blocks.first().map_or(true, |b| b.first != 0) && !code.insts.is_empty() {
        // Instructions before any label: a block of their own.
        code.blocks.insert(
            0,
            Block {
                label: String::new(),
                first: 0,
                succs: None,
            },
        );
    }
    Ok(code)
}

fn inst(e: Elem) -> Inst {
    let targets = e
        .srcs
        .unwrap_or_default()
        .into_iter()
        .filter(|s| s.kind.as_deref() == Some("LB"))
        .filter_map(|s| s.target)
        .collect();
    Inst {
        op: e.op.unwrap_or_default(),
        predicated: e.pred.is_some(),
        targets,
        eot: e.opts.unwrap_or_default().iter().any(|o| o == "EOT"),
        live_bytes: e.live.and_then(|l| l.r),
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
          {"kind":"L","id":0,"symbol":"L0000","succs":[1]},
          {"kind":"I","id":0,"op":"mov","liveTotals":{"r":64}},
          {"kind":"L","id":1,"symbol":"L0016","preds":[0]},
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
        assert_eq!(
            parse(r#"{"insts":[{"kind":"I","op":"mov"}]}"#),
            Err(JsonError::NoLiveTotals)
        );
    }
}
