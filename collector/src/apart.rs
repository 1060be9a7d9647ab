//! Same-named kernels told apart by their template arguments: each
//! argument as a tree, written with what it shares with the other
//! kernels' elided ([`told_apart`]), or only the innermost parts that
//! differ ([`telling_of_all`]), as a reader abbreviates names that differ
//! deep inside (Eigen's expressions in TensorFlow's kernels). Used by
//! [`crate::names`]'s short names.

/// Kernels of one innermost name told apart by the shape of their template
/// arguments at most this many ([`told_apart`] compares each with all).
pub const TOLD_APART_MAX: usize = 64;

/// The differing arguments of `args` (those `differs` marks), each written with
/// what it shares with the other kernels' argument there elided
/// ([`diff_form`]): `TensorAssignOp<…, TensorCwiseBinaryOp<scalar_sum_op<…>, …>>`
/// as a reader abbreviates what the names have in common.
pub fn told_apart(args: &[String], group: &[&[String]], differs: &[bool]) -> Vec<String> {
    args.iter()
        .enumerate()
        .filter(|(i, _)| differs.get(*i).copied().unwrap_or(false))
        .map(|(i, a)| {
            let mine = Arg::of(a);
            let others: Vec<Arg> = group
                .iter()
                .filter_map(|g| g.get(i))
                .filter(|o| *o != a)
                .map(|o| Arg::of(o))
                .collect();
            let others: Vec<&Arg> = others.iter().collect();
            diff_form(&mine, &others)
        })
        .collect()
}

/// The innermost parts of the differing arguments of `args` that tell it
/// from the other kernels of its name (`scalar_sum_op`), joined by `…`:
/// when every kernel of the name gets other such parts than the others.
pub fn telling_of_all(args: &[String], group: &[&[String]], differs: &[bool]) -> Option<String> {
    let tells = |args: &[String]| -> String {
        let mut out = Vec::new();
        for (i, a) in args.iter().enumerate() {
            if !differs.get(i).copied().unwrap_or(false) {
                continue;
            }
            let mine = Arg::of(a);
            let others: Vec<Arg> = group
                .iter()
                .filter_map(|g| g.get(i))
                .filter(|o| *o != a)
                .map(|o| Arg::of(o))
                .collect();
            let others: Vec<&Arg> = others.iter().collect();
            telling(&mine, &others, &mut out);
        }
        out.join("…")
    };
    let mine = tells(args);
    let all: std::collections::HashSet<String> = group.iter().map(|g| tells(g)).collect();
    (!mine.is_empty() && all.len() == group.len()).then_some(mine)
}

/// The innermost parts of `a` by which [`diff_form`] tells it from
/// `others`, into `out`.
fn telling(a: &Arg, others: &[&Arg], out: &mut Vec<String>) {
    if a.args.is_empty() {
        out.push(a.head.to_string());
        return;
    }
    let same: Vec<&Arg> = others
        .iter()
        .filter(|o| o.head == a.head && o.args.len() == a.args.len())
        .copied()
        .collect();
    if same.is_empty() {
        out.push(a.head.to_string());
        return;
    }
    for (j, c) in a.args.iter().enumerate() {
        let apart: Vec<&Arg> = same
            .iter()
            .map(|o| &o.args[j])
            .filter(|x| *x != c)
            .collect();
        if !apart.is_empty() {
            telling(c, &apart, out);
        }
    }
}

/// A template argument as a tree: `Map<Tensor<float, 2>, 16>` is `Map`
/// with two arguments.
#[derive(Debug, PartialEq, Eq)]
struct Arg<'a> {
    head: &'a str,
    args: Vec<Arg<'a>>,
}

impl<'a> Arg<'a> {
    /// Unbalanced text is one leaf; a trailing `const` is dropped.
    fn of(s: &'a str) -> Arg<'a> {
        let s = s.trim();
        let s = s.strip_suffix(" const").unwrap_or(s);
        let (Some(i), true) = (s.find('<'), s.ends_with('>')) else {
            return Arg {
                head: s,
                args: Vec::new(),
            };
        };
        match split_top(&s[i + 1..s.len() - 1], ",") {
            Some(parts) if i > 0 => Arg {
                head: &s[..i],
                args: parts.into_iter().map(Arg::of).collect(),
            },
            _ => Arg {
                head: s,
                args: Vec::new(),
            },
        }
    }

    fn text(&self) -> String {
        if self.args.is_empty() {
            return self.head.to_string();
        }
        let args: Vec<String> = self.args.iter().map(Arg::text).collect();
        format!("{}<{}>", self.head, args.join(", "))
    }
}

/// `a` written so that it still differs from each of `others` (none equal
/// to it): an argument that every other of its shape has the same becomes
/// `…` (a run of them one), and a shape no other has keeps only its head.
fn diff_form(a: &Arg, others: &[&Arg]) -> String {
    if a.args.is_empty() {
        return a.head.to_string();
    }
    let same: Vec<&Arg> = others
        .iter()
        .filter(|o| o.head == a.head && o.args.len() == a.args.len())
        .copied()
        .collect();
    if same.is_empty() {
        return format!("{}<…>", a.head);
    }
    let mut parts: Vec<String> = Vec::new();
    for (j, c) in a.args.iter().enumerate() {
        let apart: Vec<&Arg> = same
            .iter()
            .map(|o| &o.args[j])
            .filter(|x| *x != c)
            .collect();
        if apart.is_empty() {
            if parts.last().map(String::as_str) != Some("…") {
                parts.push("…".to_string());
            }
        } else if c.text().chars().count() <= 12 {
            parts.push(c.text());
        } else {
            parts.push(diff_form(c, &apart));
        }
    }
    format!("{}<{}>", a.head, parts.join(", "))
}

/// `s` split at each `sep` outside brackets (`<>`, `()`, `[]`, `{}`);
/// `None` when the brackets do not balance.
pub fn split_top<'a>(s: &'a str, sep: &str) -> Option<Vec<&'a str>> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'<' | b'(' | b'[' | b'{' => depth += 1,
            b'>' | b')' | b']' | b'}' => depth -= 1,
            _ if depth == 0 && b[i..].starts_with(sep.as_bytes()) => {
                out.push(&s[start..i]);
                i += sep.len();
                start = i;
                continue;
            }
            _ => {}
        }
        if depth < 0 {
            return None;
        }
        i += 1;
    }
    (depth == 0).then(|| {
        out.push(&s[start..]);
        out
    })
}
