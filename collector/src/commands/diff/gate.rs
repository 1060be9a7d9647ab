//! `diff --fail-on`: the conditions a comparison is gated on, and which
//! hold for which kernel.

use super::compare::{
    change, fields, mix_classes, time_change, Failure, KernelDiff, Side, KERNEL_FIELDS, LOOP_FIELDS,
};
use crate::report::time::human_ns;

/// A condition of `--fail-on`.
#[derive(Debug, Clone, PartialEq)]
pub enum Condition {
    /// A kernel starts spilling or spills more (spill bytes, or spill
    /// messages).
    Spill,
    /// A loop starts spilling: spill or fill sends in a loop of B where
    /// the loop in its place in A had none (or A had no loop there).
    LoopSpill,
    /// Any field of a kernel in both changed.
    Any,
    /// A kernel of A is not in B.
    Missing,
    /// A kernel of B is not in A.
    New,
    /// `FIELD+N` / `FIELD+N%`: a field grows by more than N (percent).
    Grows {
        field: String,
        by: f64,
        percent: bool,
    },
    /// `occupancy-N` / `occupancy-N%`: the most launched shape's
    /// occupancy drops by more than N percentage points (N percent of it).
    OccupancyDrops { by: f64, percent: bool },
}

impl std::fmt::Display for Condition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Condition::Spill => f.write_str("spill"),
            Condition::LoopSpill => f.write_str("loop-spill"),
            Condition::Any => f.write_str("any"),
            Condition::Missing => f.write_str("missing"),
            Condition::New => f.write_str("new"),
            Condition::Grows { field, by, percent } => {
                write!(f, "{field}+{by}{}", if *percent { "%" } else { "" })
            }
            Condition::OccupancyDrops { by, percent } => {
                write!(f, "occupancy-{by}{}", if *percent { "%" } else { "" })
            }
        }
    }
}

/// The conditions of `--fail-on`, each as it is written and when it
/// holds: the one list that `diff --help`, `port --help`, the refusal of
/// an unknown condition and docs/usage.md's table are made from
/// ([`help`], [`markdown_table`]); [`parse_conditions`] reads them.
pub const CONDITIONS: [(&str, &str); 9] = [
    (
        "spill",
        "a kernel in both starts spilling or spills more: its `spill_bytes` (null counts as 0) \
         grow, or its spill and fill messages do",
    ),
    (
        "loop-spill",
        "a loop starts spilling: spill or fill sends in a loop of B where the loop in its place \
         in A had none (or A had no loop there)",
    ),
    ("FIELD+N", "FIELD grows by more than N (FIELD: below)"),
    (
        "FIELD+N%",
        "FIELD grows by more than N percent (from 0: any growth)",
    ),
    (
        "occupancy-N",
        "the occupancy of the kernel's most launched shape drops by more than N percentage \
         points (`occupancy-10`: 50% -> 39% holds)",
    ),
    (
        "occupancy-N%",
        "that occupancy drops by more than N percent of A's (`occupancy-10%`: 50% -> 44% holds)",
    ),
    (
        "any",
        "any field of a kernel in both differs (`time` aside)",
    ),
    ("missing", "a kernel of A is not in B"),
    ("new", "a kernel of B is not in A"),
];

/// The FIELDs of `FIELD+N`, each with what it is: a kernel's figures, its
/// mix's classes and each loop's figures.
fn field_list() -> Vec<(String, String)> {
    let mut f: Vec<(String, String)> = KERNEL_FIELDS
        .iter()
        .map(|(n, what)| (format!("`{n}`"), what.to_string()))
        .collect();
    f.push((
        "`mix.CLASS`".into(),
        format!(
            "the instructions of a class of its mix, CLASS one of {}",
            mix_classes().join(", ")
        ),
    ));
    for l in LOOP_FIELDS {
        let what = match l {
            "instructions" => "the instructions of",
            "spills" => "the spill and fill sends in",
            _ => "the highest live GRF in",
        };
        f.push((
            format!("`loop[N].{l}`"),
            format!("{what} its Nth loop (from 1, in the order of the loops' headers) where both have it"),
        ));
    }
    f
}

/// `--fail-on`'s long help: the conditions and the fields, one a line.
/// `command` is `diff` or `port`, whose conditions hold against the run.
pub fn help(command: &str) -> String {
    let against = match command {
        "port" => "a kernel on a product, against the run (A the run, B the product)",
        _ => "a kernel",
    };
    let mut s = format!(
        "Exit with 1 when a condition holds for {against}, e.g. `spill,instructions+5%` \
         (comma-separated). The conditions:\n"
    );
    for (c, when) in CONDITIONS {
        s.push_str(&format!("\n  {c}: {when}"));
    }
    s.push_str("\n\nFIELD is one of:\n");
    for (f, what) in field_list() {
        s.push_str(&format!("\n  {}: {what}", f.trim_matches('`')));
    }
    s.push_str("\n\nA field null on either side never holds.");
    s
}

/// The table of docs/usage.md: the conditions, then the fields, as
/// markdown (the docs' table is this text; a unit test compares them).
pub fn markdown_table() -> String {
    let mut s = String::from("| condition | holds when |\n| --- | --- |\n");
    for (c, when) in CONDITIONS {
        s.push_str(&format!("| `{c}` | {when} |\n"));
    }
    s.push_str("\n| FIELD | the figure |\n| --- | --- |\n");
    for (f, what) in field_list() {
        s.push_str(&format!("| {f} | {what} |\n"));
    }
    s
}

/// Why `c` is not a condition: the conditions there are, and the fields.
fn unknown(c: &str) -> String {
    let names: Vec<&str> = CONDITIONS.iter().map(|(n, _)| *n).collect();
    let loops: Vec<String> = LOOP_FIELDS.iter().map(|f| format!("loop[N].{f}")).collect();
    format!(
        "unknown condition {c:?}: expected {}, with FIELD one of {}, {} \
         (`xpu-asm-run diff --help` says what each is)",
        names.join(", "),
        fields().join(", "),
        loops.join(", ")
    )
}

/// The conditions of one `--fail-on`.
#[derive(Debug, Clone, PartialEq)]
pub struct FailOn(pub Vec<Condition>);

/// Parses `spill,instructions+5%`.
pub fn parse_conditions(s: &str) -> Result<Vec<Condition>, String> {
    let known = fields();
    s.split(',')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(|c| match c {
            "spill" => Ok(Condition::Spill),
            "loop-spill" => Ok(Condition::LoopSpill),
            "any" => Ok(Condition::Any),
            "missing" => Ok(Condition::Missing),
            "new" => Ok(Condition::New),
            _ if c.starts_with("occupancy-") => {
                let amount = &c["occupancy-".len()..];
                let (num, percent) = match amount.strip_suffix('%') {
                    Some(n) => (n, true),
                    None => (amount, false),
                };
                match num.parse::<f64>() {
                    Ok(by) if by >= 0.0 && by.is_finite() => {
                        Ok(Condition::OccupancyDrops { by, percent })
                    }
                    _ => Err(format!(
                        "bad condition {c:?}: occupancy-N drops by more than N points, \
                         occupancy-N% by more than N percent (N a number, 0 or more)"
                    )),
                }
            }
            _ => {
                let bad = || unknown(c);
                let (field, amount) = c.split_once('+').ok_or_else(bad)?;
                let per_loop = field
                    .strip_prefix("loop[")
                    .and_then(|r| r.split_once("]."))
                    .is_some_and(|(n, f)| {
                        n.parse::<usize>().is_ok_and(|n| n >= 1) && LOOP_FIELDS.contains(&f)
                    });
                if !per_loop && !known.iter().any(|k| k == field) {
                    return Err(bad());
                }
                let (num, percent) = match amount.strip_suffix('%') {
                    Some(n) => (n, true),
                    None => (amount, false),
                };
                let by: f64 = num.parse().map_err(|_| bad())?;
                if !(by >= 0.0 && by.is_finite()) {
                    return Err(bad());
                }
                Ok(Condition::Grows {
                    field: field.to_string(),
                    by,
                    percent,
                })
            }
        })
        .collect::<Result<Vec<_>, _>>()
        .and_then(|v| {
            if v.is_empty() {
                Err("no condition given (e.g. --fail-on spill,instructions+5%)".into())
            } else {
                Ok(v)
            }
        })
}

/// Why a condition holds for a kernel, or `None`.
pub fn holds(c: &Condition, k: &KernelDiff) -> Option<String> {
    match (c, &k.a, &k.b) {
        (Condition::Missing, Some(_), None) => Some("only in A".into()),
        (Condition::New, None, Some(_)) => Some("only in B".into()),
        (Condition::Any, Some(_), Some(_)) if k.changed.iter().any(|f| f != "time") => {
            let changed: Vec<&str> = k
                .changed
                .iter()
                .map(String::as_str)
                .filter(|f| *f != "time")
                .collect();
            Some(format!("changed: {}", changed.join(", ")))
        }
        (Condition::Spill, Some(a), Some(b)) => {
            let (sa, sb) = (a.spill_bytes.unwrap_or(0), b.spill_bytes.unwrap_or(0));
            let msgs = |s: &Side| s.mix.as_ref().map(|m| m.spill + m.fill);
            if sb > sa {
                Some(format!("spill bytes {sa} -> {sb}"))
            } else {
                match (msgs(a), msgs(b)) {
                    (Some(ma), Some(mb)) if mb > ma => {
                        Some(format!("spill and fill messages {ma} -> {mb}"))
                    }
                    _ => None,
                }
            }
        }
        (Condition::LoopSpill, Some(a), Some(b)) => loop_spill(a, b),
        (Condition::Grows { field, by, percent }, Some(a), Some(b)) => {
            let (va, vb) = (a.get(field)?, b.get(field)?);
            let grew = vb as f64 - va as f64;
            let over = if *percent {
                grew > 0.0 && (va == 0 || grew * 100.0 / va as f64 > *by)
            } else {
                grew > *by
            };
            over.then(|| match field.as_str() {
                "time" => format!(
                    "time {} -> {} ({})",
                    human_ns(va),
                    human_ns(vb),
                    time_change(va, vb)
                ),
                _ => format!("{field} {va} -> {vb} ({})", change(va, vb)),
            })
        }
        (Condition::OccupancyDrops { by, percent }, Some(a), Some(b)) => {
            let (va, vb) = (a.occupancy? as f64 / 100.0, b.occupancy? as f64 / 100.0);
            let drop = va - vb;
            let over = if *percent {
                drop > 0.0 && drop * 100.0 / va > *by
            } else {
                drop > *by
            };
            over.then(|| {
                format!(
                    "occupancy {va}% -> {vb}% of its most launched shape ({} -> {})",
                    a.shape.as_deref().unwrap_or("-"),
                    b.shape.as_deref().unwrap_or("-")
                )
            })
        }
        _ => None,
    }
}

/// The first loop of `b` that spills where `a`'s loop in its place did not.
fn loop_spill(a: &Side, b: &Side) -> Option<String> {
    let lb = b.loops.as_ref()?;
    let la = a.loops.as_ref()?;
    lb.iter().enumerate().find_map(|(i, l)| {
        let before = la.get(i).map_or(0, |x| x.spills);
        (l.spills > 0 && before == 0).then(|| {
            let at = if l.lines.is_empty() {
                String::new()
            } else {
                format!(", {}", l.lines)
            };
            format!(
                "loop {} ({} instructions{at}): spill and fill sends {before} -> {}",
                i + 1,
                l.instructions,
                l.spills
            )
        })
    })
}

/// The longest kernel name a `--fail-on` line gives whole, in characters
/// (the table's widest name column).
pub const LINE_NAME_MAX: usize = 80;

/// The conditions of `fail_on` that hold, kernel by kernel in the order of
/// `kernels`, each kernel's in the order of `fail_on`, each with the name
/// its line gives ([`line_names`]).
pub fn failures(kernels: &[KernelDiff], fail_on: &[Condition]) -> Vec<Failure> {
    let mut failed = Vec::new();
    let mut of = Vec::new();
    for (i, k) in kernels.iter().enumerate() {
        for c in fail_on {
            if let Some(why) = holds(c, k) {
                failed.push(Failure {
                    condition: c.to_string(),
                    kernel: k.shown_name(),
                    why,
                    line: String::new(),
                });
                of.push(i);
            }
        }
    }
    for (f, line) in failed.iter_mut().zip(line_names(kernels, &of)) {
        f.line = line;
    }
    failed
}

/// The names of `kernels[i]` for each `i` of `of` as `--fail-on` lines give
/// them: escaped for a terminal, as the table names them; past
/// [`LINE_NAME_MAX`] characters shortened as the table shortens names
/// (told apart from every kernel of the comparison), with the kernel's
/// rank in A (`(#3)`, `(#3 in B)` for a kernel only in B).
fn line_names(kernels: &[KernelDiff], of: &[usize]) -> Vec<String> {
    let escaped: Vec<String> = of.iter().map(|&i| kernels[i].display_name()).collect();
    if escaped.iter().all(|n| n.chars().count() <= LINE_NAME_MAX) {
        return escaped;
    }
    let all: Vec<String> = kernels.iter().map(KernelDiff::display_name).collect();
    let short = crate::names::distinct(&all, LINE_NAME_MAX);
    of.iter()
        .map(|&i| {
            let k = &kernels[i];
            if short[i] == all[i] {
                return all[i].clone();
            }
            match (&k.a, &k.b) {
                (Some(a), _) => format!("{} (#{})", short[i], a.rank),
                (None, Some(b)) => format!("{} (#{} in B)", short[i], b.rank),
                (None, None) => short[i].clone(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::compare::LoopSide;
    use super::*;

    /// docs/usage.md's table of the conditions is [`markdown_table`], between
    /// its markers; `XPU_ASM_WRITE_DOCS=1` writes it there.
    #[test]
    fn the_docs_table_of_conditions_is_the_one_the_parser_reads() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/usage.md");
        let docs = std::fs::read_to_string(path).unwrap();
        let (begin, end) = (
            "<!-- fail-on: made from collector/src/commands/diff/gate.rs -->\n",
            "<!-- /fail-on -->",
        );
        let from = docs.find(begin).expect("the table's first marker") + begin.len();
        let to = from + docs[from..].find(end).expect("its last marker");
        let want = markdown_table();
        if std::env::var_os("XPU_ASM_WRITE_DOCS").is_some() {
            std::fs::write(path, format!("{}{want}{}", &docs[..from], &docs[to..])).unwrap();
            return;
        }
        assert_eq!(
            docs[from..to],
            want,
            "docs/usage.md's --fail-on table (XPU_ASM_WRITE_DOCS=1 cargo test -p \
             xpu-asm-collector --lib the_docs_table writes it)"
        );
        // Every condition and field the table names is one the parser takes.
        for example in [
            "spill",
            "loop-spill",
            "any",
            "missing",
            "new",
            "occupancy-10",
            "occupancy-10%",
            "occupancy+100",
        ]
        .into_iter()
        .map(String::from)
        .chain(fields().iter().map(|f| format!("{f}+1%")))
        .chain(LOOP_FIELDS.iter().map(|f| format!("loop[2].{f}+0")))
        {
            assert!(parse_conditions(&example).is_ok(), "{example}");
        }
        let names: Vec<&str> = CONDITIONS.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            names,
            [
                "spill",
                "loop-spill",
                "FIELD+N",
                "FIELD+N%",
                "occupancy-N",
                "occupancy-N%",
                "any",
                "missing",
                "new"
            ]
        );
        // The help and the refusal name every one.
        let (help, refusal) = (help("diff"), parse_conditions("instrs+5%").unwrap_err());
        for n in names
            .iter()
            .chain(&["loop[N].pressure", "mix.", "alu", "occupancy"])
        {
            assert!(help.contains(n) && refusal.contains(n), "{n}: {refusal}");
        }
    }

    #[test]
    fn conditions_parse_and_refuse() {
        assert_eq!(
            parse_conditions("spill,instructions+5%").unwrap(),
            [
                Condition::Spill,
                Condition::Grows {
                    field: "instructions".into(),
                    by: 5.0,
                    percent: true
                }
            ]
        );
        assert_eq!(
            parse_conditions("mix.spill+0").unwrap(),
            [Condition::Grows {
                field: "mix.spill".into(),
                by: 0.0,
                percent: false
            }]
        );
        for bad in [
            "",
            "spil",
            "instructions+",
            "instructions+x%",
            "bogus+1",
            "grf+-1",
        ] {
            assert!(parse_conditions(bad).is_err(), "{bad}");
        }
    }

    fn side(instructions: u64, spill: Option<u64>) -> Side {
        Side {
            rank: 1,
            module_sha256: None,
            launches: 1,
            simd: Some(32),
            grf: Some(128),
            instructions: Some(instructions),
            spill_bytes: spill,
            mix: None,
            pressure: None,
            loops: None,
            shape: None,
            occupancy: None,
            origin: None,
            time: None,
        }
    }

    #[test]
    fn occupancy_gates_by_points_and_percent() {
        let at = |pct: u64| Side {
            shape: Some("64 x 16".into()),
            occupancy: Some(pct),
            ..side(10, None)
        };
        let k = pair(at(5000), at(3750));
        let cond = |c: &str| parse_conditions(c).expect("a condition").remove(0);
        assert_eq!(
            holds(&cond("occupancy-10"), &k).as_deref(),
            Some("occupancy 50% -> 37.5% of its most launched shape (64 x 16 -> 64 x 16)")
        );
        assert_eq!(holds(&cond("occupancy-12.5"), &k), None);
        assert!(holds(&cond("occupancy-20%"), &k).is_some());
        assert_eq!(holds(&cond("occupancy-25%"), &k), None);
        assert!(parse_conditions("occupancy-x").is_err());
    }

    #[test]
    fn a_fail_on_line_names_a_long_name_shortened_with_its_rank() {
        let long = |end: &str| format!("ns::kernel<{}{end}>", "int, ".repeat(30));
        let mut kernels = Vec::new();
        for (i, name) in [long("char"), long("float"), "short\u{202e}".to_string()]
            .into_iter()
            .enumerate()
        {
            let (mut a, b) = (side(10, None), side(20, None));
            a.rank = i + 1;
            let mut k = pair(a, b);
            k.name = name.clone();
            k.demangled = name;
            kernels.push(k);
        }
        let got: Vec<String> = failures(&kernels, &[Condition::Any])
            .iter()
            .map(|f| f.line_name())
            .collect();
        assert_eq!(got.len(), 3);
        assert!(
            got[0].ends_with(" (#1)") && got[1].ends_with(" (#2)"),
            "{got:?}"
        );
        assert!(got[0].chars().count() <= LINE_NAME_MAX + 5, "{got:?}");
        assert_ne!(got[0].replace("(#1)", ""), got[1].replace("(#2)", ""));
        // A short one whole, escaped; the JSON's name whole.
        assert_eq!(got[2], "short\\u{202e}");
        assert_eq!(
            failures(&kernels, &[Condition::Any])[0].kernel,
            long("char")
        );
    }

    fn pair(a: Side, b: Side) -> KernelDiff {
        let changed = fields()
            .into_iter()
            .filter(|f| a.get(f) != b.get(f))
            .collect();
        KernelDiff {
            name: "k".into(),
            name_hex: None,
            demangled: "k".into(),
            pairing: None,
            a: Some(a),
            b: Some(b),
            changed,
        }
    }

    #[test]
    fn conditions_hold_exactly_at_their_threshold() {
        let five = parse_conditions("instructions+5%").unwrap().remove(0);
        assert!(holds(&five, &pair(side(100, None), side(105, None))).is_none());
        assert!(holds(&five, &pair(side(100, None), side(106, None))).is_some());
        assert!(holds(&five, &pair(side(100, None), side(90, None))).is_none());
        let spill = Condition::Spill;
        assert!(holds(&spill, &pair(side(1, None), side(1, Some(64)))).is_some());
        assert!(holds(&spill, &pair(side(1, Some(64)), side(1, Some(64)))).is_none());
        assert!(holds(&spill, &pair(side(1, Some(128)), side(1, Some(64)))).is_none());
        let any = Condition::Any;
        assert!(holds(&any, &pair(side(1, None), side(1, None))).is_none());
        assert!(holds(&any, &pair(side(1, None), side(2, None))).is_some());
    }

    fn with_loops(mut s: Side, pressure: u32, spills: &[u64]) -> Side {
        s.pressure = Some(pressure);
        s.loops = Some(
            spills
                .iter()
                .map(|&n| LoopSide {
                    depth: 1,
                    instructions: 10,
                    spills: n,
                    pressure,
                    lines: "lines 8-9".into(),
                })
                .collect(),
        );
        s
    }

    #[test]
    fn loops_and_pressure_are_compared_and_gated() {
        let c = parse_conditions("loop-spill,pressure+10%,loop[2].spills+0,loops+1").unwrap();
        assert_eq!(c[0], Condition::LoopSpill);
        assert_eq!(c[0].to_string(), "loop-spill");
        assert!(parse_conditions("loop[0].spills+1").is_err());
        assert!(parse_conditions("loop[1].mix+1").is_err());
        let a = with_loops(side(100, None), 50, &[0, 0]);
        let b = with_loops(side(100, None), 55, &[0, 3]);
        let d = pair(a.clone(), b.clone());
        assert_eq!(b.get("loop[2].spills"), Some(3));
        assert_eq!(b.get("loop[3].spills"), None);
        assert_eq!(b.get("loop_spills"), Some(3));
        assert_eq!(
            holds(&Condition::LoopSpill, &d).as_deref(),
            Some("loop 2 (10 instructions, lines 8-9): spill and fill sends 0 -> 3")
        );
        // Exactly at the threshold passes; above it fails.
        let grows = |by: f64, percent: bool| Condition::Grows {
            field: "pressure".into(),
            by,
            percent,
        };
        assert_eq!(holds(&grows(10.0, true), &d), None);
        assert_eq!(
            holds(&grows(9.9, true), &d).as_deref(),
            Some("pressure 50 -> 55 (+5, +10.0%)")
        );
        assert_eq!(holds(&grows(5.0, false), &d), None);
        assert!(holds(&grows(4.0, false), &d).is_some());
        // Without analysis on one side: nothing holds.
        let d = pair(side(100, None), b);
        assert_eq!(holds(&Condition::LoopSpill, &d), None);
        assert_eq!(holds(&grows(0.0, false), &d), None);
    }
}
