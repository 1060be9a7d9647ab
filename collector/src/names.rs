//! Kernel names: demangling, shortening for a table, escaping for a
//! terminal, and safe file names. Names come from the program (C strings):
//! they may hold `/`, spaces, `..`, newlines, thousands of characters or
//! bytes that are not UTF-8, so nothing here trusts them.

use crate::apart::{split_top, telling_of_all, told_apart, TOLD_APART_MAX};
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use xpu_asm_isa::fast::{FastHash, FastMap};

/// Names longer than this are not given to the demangler (its cost grows
/// with the input; real mangled names stay far below this).
const DEMANGLE_MAX: usize = 64 * 1024;

/// `typeinfo name for` is what `_ZTS<type>` demangles to; SYCL names kernels
/// by such typeinfo names, and the type alone is what a person wants to see.
const TYPEINFO_PREFIX: &str = "typeinfo name for ";

/// The demangled form of `name`, or the name itself (lossily decoded) when
/// it is not an Itanium-mangled name.
pub fn demangle(name: &[u8]) -> String {
    if name.starts_with(b"_Z") && name.len() <= DEMANGLE_MAX {
        if let Ok(sym) = cpp_demangle::Symbol::new(name) {
            let opts = cpp_demangle::DemangleOptions::new();
            if let Ok(s) = sym.demangle(&opts) {
                return match s.strip_prefix(TYPEINFO_PREFIX) {
                    Some(t) => t.to_string(),
                    None => s,
                };
            }
        }
    }
    String::from_utf8_lossy(name).into_owned()
}

pub use crate::shown::{
    escape_for_terminal, in_message, invisible, needs_escape, readable, EMPTY_NAME,
    MESSAGE_NAME_MAX,
};

/// Shortens a (demangled) name to at most `max` characters, in steps that
/// keep the most telling part: drop the parameter list of a function, then
/// elide template arguments, then cut the middle.
pub fn shorten(name: &str, max: usize) -> String {
    let max = max.max(8);
    if name.chars().count() <= max {
        return name.to_string();
    }
    let no_params = strip_trailing_params(name);
    if no_params.chars().count() <= max {
        return no_params.to_string();
    }
    let no_templates = elide_templates(no_params);
    if no_templates.chars().count() <= max {
        return no_templates;
    }
    cut_middle(&no_templates, max)
}

/// `ns::f<int>(float*, int)` -> `ns::f<int>`; leaves names without a
/// trailing, balanced parameter list alone.
fn strip_trailing_params(name: &str) -> &str {
    let trimmed = name.trim_end();
    let trimmed = trimmed.strip_suffix(" const").unwrap_or(trimmed);
    if !trimmed.ends_with(')') {
        return name;
    }
    // On bytes: the brackets are ASCII, so each is a character boundary.
    let mut depth = 0i64;
    for (i, &c) in trimmed.as_bytes().iter().enumerate().rev() {
        match c {
            b')' => depth += 1,
            b'(' => {
                depth -= 1;
                if depth == 0 {
                    if i == 0 {
                        return name;
                    }
                    return &trimmed[..i];
                }
            }
            _ => {}
        }
    }
    name
}

/// `a<b<c>, d>::e<f>` -> `a<…>::e<…>`
fn elide_templates(name: &str) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    for c in name.chars() {
        match c {
            '<' => {
                if depth == 0 {
                    out.push_str("<…");
                }
                depth += 1;
            }
            '>' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    out.push('>');
                }
            }
            c if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

fn cut_middle(s: &str, max: usize) -> String {
    let chars: Vec<char> = s.chars().collect();
    if chars.len() <= max {
        return s.to_string();
    }
    let keep = max - 1;
    let head = keep / 2;
    let tail = keep - head;
    let mut out: String = chars[..head].iter().collect();
    out.push('…');
    out.extend(&chars[chars.len() - tail..]);
    out
}

/// Names for a table column of `max` characters that tell each kernel
/// from the others: a name that fits stays whole; a longer one loses, in
/// turn, its parameter list, its namespaces (as many leading ones as the
/// kernels' names still differ without) and those inside its template
/// arguments, the template arguments that are the same in every kernel of
/// its innermost name (`add_contig_kernel<float, float, float>`), then
/// [`shorten`]'s steps. A ` [module 1234abcd]` suffix, and an API's
/// ([`api_tag`]), are kept whole.
pub fn distinct(names: &[String], max: usize) -> Vec<String> {
    distinct_first(names, max, names.len())
}

/// The tags that follow a kernel's name in a capture of both APIs, by the
/// report's name of its API.
pub fn api_tag(api: &str) -> &'static str {
    match api {
        "opencl" => API_TAGS[0],
        _ => API_TAGS[1],
    }
}

const API_TAGS: [&str; 2] = [" [opencl]", " [level zero]"];

/// Where the tags after a name start (its end when there are none): the
/// module's, else the API's.
fn suffix_at(n: &str) -> usize {
    const MODULE: &str = " [module ";
    let api = || {
        API_TAGS
            .iter()
            .find(|t| n.ends_with(*t))
            .map(|t| n.len() - t.len())
    };
    n.rfind(MODULE)
        .or_else(api)
        .filter(|&i| i > 0)
        .unwrap_or(n.len())
}

/// [`distinct`] of the first `n` of `names` (told apart from all of them).
pub fn distinct_first(names: &[String], max: usize, n: usize) -> Vec<String> {
    // Each name on its own on every core (borrowed: 100,000 names would
    // be a million small allocations), the index of them all in one.
    let parts: Vec<(&str, &str)> = names.par_iter().map(|n| n.split_at(suffix_at(n))).collect();
    let parsed: Vec<Option<Parsed>> = parts
        .par_iter()
        .map(|(n, _)| Parsed::of(strip_trailing_params(n)))
        .collect();
    let index = Index::of(&parsed);
    names[..n.min(names.len())]
        .par_iter()
        .zip(&parts)
        .enumerate()
        .map(|(i, (whole, (name, suffix)))| {
            if whole.chars().count() <= max {
                return whole.clone();
            }
            let room = max.saturating_sub(suffix.chars().count()).max(8);
            let short = match &parsed[i] {
                Some(p) => p.shortest(&index, room),
                None => shorten(name, room),
            };
            format!("{short}{suffix}")
        })
        .collect()
}

/// A name as `::`-separated components, its innermost one's template
/// arguments apart.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Parsed<'a> {
    /// The components, without the innermost one's template arguments.
    path: Vec<&'a str>,
    /// The innermost component's template arguments (none: not a template).
    args: Option<Vec<String>>,
}

impl<'a> Parsed<'a> {
    /// `None` for what does not parse as balanced brackets.
    fn of(name: &'a str) -> Option<Parsed<'a>> {
        let mut path = split_top(name, "::")?;
        let last = path.pop()?;
        let (base, args) = match last.find('<') {
            Some(i) if last.ends_with('>') && i > 0 => {
                let inner = &last[i + 1..last.len() - 1];
                let args = split_top(inner, ",")?
                    .into_iter()
                    .map(|a| strip_qualifiers(a.trim()))
                    .collect();
                (&last[..i], Some(args))
            }
            _ => (last, None),
        };
        path.push(base);
        Some(Parsed { path, args })
    }

    /// The fewest trailing components that no kernel of another path ends in.
    fn unique_tail(&self, index: &Index) -> usize {
        let n = self.path.len();
        (1..=n)
            .find(|&k| index.tails.get(&self.path[n - k..]).is_some_and(|t| !t.1))
            .unwrap_or(n)
    }

    /// The first form that fits `room`, else [`shorten`] of the last.
    fn shortest(&self, index: &Index, room: usize) -> String {
        let k = self.unique_tail(index);
        let path = self.path[self.path.len() - k..].join("::");
        let with = |args: &[String]| format!("{path}<{}>", args.join(", "));
        let Some(args) = &self.args else {
            return shorten(&path, room);
        };
        let all_args = with(args);
        if all_args.chars().count() <= room {
            return all_args;
        }
        // The arguments that differ among the kernels of this innermost name.
        let at = self.path.last().and_then(|b| index.args.get(b));
        let differing: Vec<String> = args
            .iter()
            .enumerate()
            .filter(|(i, _)| at.and_then(|at| at.get(*i)).is_some_and(|p| p.differs))
            .map(|(_, a)| a.clone())
            .collect();
        // Each differing argument with what it shares with the others
        // elided, when that tells them apart in less room.
        let differs: Vec<bool> = at.map_or(Vec::new(), |at| at.iter().map(|p| p.differs).collect());
        let group = index
            .groups
            .get(self.path.last().copied().unwrap_or_default());
        let differing = match group {
            Some(group) if !differing.is_empty() && with(&differing).chars().count() > room => {
                told_apart(args, group, &differs)
            }
            _ => differing,
        };
        if !differing.is_empty() && with(&differing).chars().count() <= room {
            return with(&differing);
        }
        if let Some(tells) = group
            .and_then(|g| telling_of_all(args, g, &differs))
            .filter(|t| format!("{path}<…{t}…>").chars().count() <= room)
        {
            return format!("{path}<…{tells}…>");
        }
        // None differs (one kernel of this name): its leading arguments.
        let keep = if differing.is_empty() {
            args
        } else {
            &differing
        };
        let n = (0..=keep.len())
            .rev()
            .find(|&n| {
                let more = if n < keep.len() { ", …" } else { "" };
                with(&keep[..n]).chars().count() + more.chars().count() <= room
            })
            .unwrap_or(0);
        let short = match n {
            0 => format!("{path}<…>"),
            n if n < keep.len() => format!("{path}<{}, …>", keep[..n].join(", ")),
            _ => with(keep),
        };
        shorten(&short, room)
    }
}

/// What [`Parsed::shortest`] asks of all the names, found once (asked of
/// every other name for each, it made the table of 100,000 kernels take
/// minutes).
struct Index<'a> {
    /// Each trailing run of components of a path: whether more than one
    /// path ends in it (the first path seen with it, and that).
    tails: FastMap<&'a [&'a str], (&'a [&'a str], bool)>,
    /// Each innermost name with template arguments: per argument
    /// position, whether its kernels' arguments there are not all the same
    /// (one lacks it, or two differ).
    args: FastMap<&'a str, Vec<Position<'a>>>,
    /// Each innermost name's kernels' template arguments, for a name of
    /// at most [`TOLD_APART_MAX`] kernels.
    groups: FastMap<&'a str, Vec<&'a [String]>>,
}

struct Position<'a> {
    first: &'a str,
    /// Kernels of the name that have an argument here.
    with: usize,
    differs: bool,
}

impl<'a> Index<'a> {
    fn of(parsed: &'a [Option<Parsed<'a>>]) -> Index<'a> {
        let mut tails: FastMap<&[&str], (&[&str], bool)> =
            FastMap::with_capacity_and_hasher(parsed.len(), FastHash);
        let mut args: FastMap<&str, (usize, Vec<Position>)> = FastMap::default();
        let mut groups: FastMap<&str, Vec<&[String]>> = FastMap::default();
        for p in parsed.iter().flatten() {
            let n = p.path.len();
            for k in 1..=n {
                let t = tails.entry(&p.path[n - k..]).or_insert((&p.path, false));
                t.1 |= t.0 != p.path.as_slice();
            }
            let (Some(base), Some(a)) = (p.path.last(), &p.args) else {
                continue;
            };
            let (kernels, at) = args.entry(*base).or_default();
            *kernels += 1;
            groups.entry(*base).or_default().push(a.as_slice());
            for (i, v) in a.iter().enumerate() {
                match at.get_mut(i) {
                    Some(pos) => {
                        pos.with += 1;
                        pos.differs |= pos.first != v.as_str();
                    }
                    None => at.push(Position {
                        first: v,
                        with: 1,
                        differs: false,
                    }),
                }
            }
        }
        let args = args
            .into_iter()
            .map(|(base, (kernels, mut at))| {
                for pos in &mut at {
                    // A kernel of the name without an argument here.
                    pos.differs |= pos.with < kernels;
                }
                (base, at)
            })
            .collect();
        groups.retain(|_, g| g.len() <= TOLD_APART_MAX);
        Index {
            tails,
            args,
            groups,
        }
    }
}

/// `sycl::_V1::vec<std::complex<float>, 4>` -> `vec<complex<float>, 4>`:
/// every `name::` qualifier dropped.
fn strip_qualifiers(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut word = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        if c == ':' && chars.peek() == Some(&':') {
            chars.next();
            word.clear();
            continue;
        }
        out.push_str(&word);
        word.clear();
        out.push(c);
    }
    out.push_str(&word);
    out
}

/// First 8 hex digits of the SHA-256 of the full name: tells apart names
/// that shorten to the same text.
pub fn name_tag(name: &[u8]) -> String {
    let d = Sha256::digest(name);
    xpu_asm_record::hex(&d[..4])
}

/// Longest file name [`asm_file_name`] produces.
pub const ASM_FILE_NAME_MAX: usize = 80;

/// `003-vector_add-1a2b3c4d.asm`: rank, a short safe form of the name and
/// the [`name_tag`]. Only `[A-Za-z0-9._-]`, never starting with a dot, at
/// most [`ASM_FILE_NAME_MAX`] bytes, whatever the name holds.
pub fn asm_file_name(rank: usize, demangled: &str, name: &[u8]) -> String {
    let prefix = format!("{rank:03}-");
    let suffix = format!("-{}.asm", name_tag(name));
    let room = ASM_FILE_NAME_MAX.saturating_sub(prefix.len() + suffix.len());
    let mut short = safe_component(strip_trailing_params(demangled), room.max(1));
    if short.is_empty() {
        short = "kernel".chars().take(room.max(1)).collect();
    }
    format!("{prefix}{short}{suffix}")
}

/// [`asm_file_name`] of each of `kernels` (rank, demangled name, name),
/// each named by its short form told apart from the others' ([`distinct`]
/// of the names without their parameter lists): the copies of kernels
/// that a cut prefix would not tell apart have names that do.
pub fn asm_file_names(kernels: &[(usize, &str, &[u8])]) -> Vec<String> {
    let plain: Vec<String> = kernels
        .par_iter()
        .map(|(_, d, _)| strip_trailing_params(d).to_string())
        .collect();
    let room = ASM_FILE_NAME_MAX - "000-".len() - "-12345678.asm".len();
    let short = distinct(&plain, room);
    kernels
        .par_iter()
        .zip(short)
        .map(|((rank, _, name), s)| asm_file_name(*rank, &s, name))
        .collect()
}

/// Maps `s` to `[A-Za-z0-9._-]` (runs of anything else become one `_`),
/// trims separators and dots at both ends, and cuts to `max` bytes. May
/// return an empty string.
pub fn safe_component(s: &str, max: usize) -> String {
    let mut out = String::new();
    let mut last_sep = false;
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
            out.push(c);
            last_sep = false;
        } else if !last_sep {
            out.push('_');
            last_sep = true;
        }
    }
    let trimmed = out.trim_matches(|c| c == '_' || c == '.' || c == '-');
    let mut cut: String = trimmed.chars().take(max).collect();
    while cut.ends_with(['_', '.', '-']) {
        cut.pop();
    }
    cut
}

/// The first 12 hex digits of a SHA-256, for messages.
pub fn short_sha(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn demangles_sycl_typeinfo_names_to_the_type() {
        assert_eq!(
            demangle(b"_ZTSZ4mainEUlN4sycl3_V12idILi1EEEE_"),
            "main::{lambda(sycl::_V1::id<1>)#1}"
        );
        assert_eq!(demangle(b"_ZTS12VectorAddKer"), "VectorAddKer");
        assert_eq!(
            demangle(b"_Z10vector_addPfS_"),
            "vector_add(float*, float*)"
        );
        assert_eq!(demangle(b"vector_add"), "vector_add");
        assert_eq!(demangle(b"_Zgarbage"), "_Zgarbage");
        assert_eq!(demangle(b"bad\xffname"), "bad\u{fffd}name");
    }

    #[test]
    fn shortening_drops_params_then_templates_then_the_middle() {
        assert_eq!(shorten("vector_add", 20), "vector_add");
        assert_eq!(shorten("ns::f<int>(float*, int)", 12), "ns::f<int>");
        assert_eq!(shorten("ns::f<some::long<type>>(float*)", 12), "ns::f<…>");
        let s = shorten(&"x".repeat(100), 21);
        assert_eq!(s.chars().count(), 21);
        assert!(s.contains('…'));
        // A lambda's parameters are inside braces: not a trailing list.
        assert_eq!(
            shorten("main::{lambda(sycl::_V1::id<1, 2>)#1}", 34),
            "main::{lambda(sycl::_V1::id<…>)#1}"
        );
        let s = shorten("main::{lambda(sycl::_V1::id<1>)#1}", 30);
        assert_eq!(s.chars().count(), 30);
        assert!(s.starts_with("main::{lambda") && s.ends_with(")#1}"), "{s}");
    }

    fn assert_safe(f: &str) {
        assert!(f.len() <= ASM_FILE_NAME_MAX, "{f} is {} bytes", f.len());
        assert!(!f.starts_with('.'), "{f}");
        assert!(
            f.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)),
            "{f}"
        );
        assert!(f.ends_with(".asm"));
    }

    #[test]
    fn asm_file_names_are_safe_for_hostile_names() {
        let long = "k".repeat(4000);
        let hostile: Vec<Vec<u8>> = vec![
            b"vector_add".to_vec(),
            b"../../etc/passwd".to_vec(),
            b"..".to_vec(),
            b"/".to_vec(),
            b"a b\nc\td".to_vec(),
            long.clone().into_bytes(),
            b"bad\xff\xfename".to_vec(),
            b"".to_vec(),
            "ünï/cøde".as_bytes().to_vec(),
            b"_ZTSZ4mainEUlN4sycl3_V12idILi1EEEE_".to_vec(),
        ];
        let mut seen = std::collections::BTreeSet::new();
        for (i, n) in hostile.iter().enumerate() {
            let f = asm_file_name(i + 1, &demangle(n), n);
            assert_safe(&f);
            assert!(seen.insert(f.clone()), "duplicate {f}");
        }
        assert_eq!(
            asm_file_name(3, "vector_add", b"vector_add"),
            format!("003-vector_add-{}.asm", name_tag(b"vector_add"))
        );
        assert!(asm_file_name(1, "../../etc/passwd", b"x").starts_with("001-etc_passwd-"));
        assert!(asm_file_name(1, "..", b"..").starts_with("001-kernel-"));
        assert_safe(&asm_file_name(123456, &long, long.as_bytes()));
        // Same text, different full names: the tag tells them apart.
        assert_ne!(
            asm_file_name(1, &long, long.as_bytes()),
            asm_file_name(1, &long, format!("{long}x").as_bytes())
        );
    }

    #[test]
    fn an_api_tag_is_kept_whole_after_a_modules_or_alone() {
        let tagged: Vec<String> = [
            "dpnp::tensor::kernels::add_contig_kernel<float, float, float, 4u, 2u, true> [opencl]",
            "common_kernel [module 3e8fd3a6] [level zero]",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let got = distinct(&tagged, 44);
        assert!(got[0].ends_with(" [opencl]"), "{got:?}");
        assert!(
            got[0].chars().count() <= 44 && got[0].starts_with("add_contig_kernel<"),
            "{got:?}"
        );
        assert_eq!(got[1], "common_kernel [module 3e8fd3a6] [level zero]");
        assert_eq!(
            (api_tag("opencl"), api_tag("level_zero")),
            (" [opencl]", " [level zero]")
        );
    }

    #[test]
    fn distinct_names_keep_what_tells_kernels_apart() {
        let names: Vec<String> = [
            "dpnp::tensor::kernels::add_contig_kernel<float, float, float, 4u, 2u, true>",
            "dpnp::tensor::kernels::add_contig_kernel<int, int, int, 4u, 2u, true>",
            "dpnp::tensor::kernels::copy_kernel<sycl::_V1::vec<float, 4>, 2u>",
            "a::scale",
            "b::detail::scale",
            "main::vector_add",
            "common_kernel [module 3e8fd3a6]",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let got = distinct(&names, 40);
        assert_eq!(
            got,
            [
                "add_contig_kernel<float, float, float>",
                "add_contig_kernel<int, int, int>",
                "copy_kernel<vec<float, 4>, 2u>",
                "a::scale",
                "b::detail::scale",
                "main::vector_add",
                "common_kernel [module 3e8fd3a6]",
            ]
        );
        // Room for all the arguments: all of them, namespaces still gone.
        assert_eq!(
            distinct(&names[..2], 60)[0],
            "add_contig_kernel<float, float, float, 4u, 2u, true>"
        );
        // Same-named kernels of two namespaces keep the namespace.
        let two: Vec<String> = [
            "x::long_namespace_name::k<int>",
            "y::long_namespace_name::k<int>",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            distinct(&two, 24),
            ["x::long_nam…e_name::k<…>", "y::long_nam…e_name::k<…>"]
        );
        assert_eq!(
            distinct(&two, 30),
            [
                "x::long_namespace_name::k<int>",
                "y::long_namespace_name::k<int>"
            ]
        );
        // One kernel of its name: as many leading arguments as fit.
        let one = vec![
            "dpctl::tensor::kernels::sin::sin_contig_kernel<float, float, unsigned int, 4u, 2u>"
                .to_string(),
        ];
        assert_eq!(distinct(&one, 40), ["sin_contig_kernel<float, float, …>"]);
        // Any text at all, multi-byte characters included.
        let wide = vec![
            "ns::ключ<é, ü>::ядро<ä, 1>".repeat(3),
            "x::ядро<ö, 1>".to_string(),
        ];
        assert_eq!(distinct(&wide, 20)[1], "x::ядро<ö, 1>");
        assert!(distinct(&wide, 20)[0].chars().count() <= 20);
        // Unbalanced brackets: shortened as before.
        let odd = vec!["operator<<(std::ostream&, int) with a long tail here".to_string()];
        assert_eq!(distinct(&odd, 20), [shorten(&odd[0], 20)]);
    }

    /// Nine kernels of one template, as a TensorFlow (ITEX) training step
    /// launches them: Eigen expressions that differ deep inside.
    fn itex_like() -> Vec<String> {
        let map = "Eigen::TensorMap<Eigen::Tensor<float const, 1, 1, long>, 16, Eigen::MakePointer> const";
        let out = "Eigen::TensorMap<Eigen::Tensor<float, 1, 1, long>, 16, Eigen::MakePointer>";
        let binary = ["sum", "difference", "product", "quotient", "max", "min"].map(|op| {
            format!(
                "Eigen::TensorCwiseBinaryOp<Eigen::internal::scalar_{op}_op<float, float>, {map}, {map}>"
            )
        });
        let unary = ["sqrt", "rsqrt", "square"].map(|op| {
            format!("Eigen::TensorCwiseUnaryOp<Eigen::internal::scalar_{op}_op<float>, {map}>")
        });
        binary
            .iter()
            .chain(unary.iter())
            .map(|expr| {
                format!(
                    "itex::functor::ExecExprFunctorKernel<Eigen::TensorAssignOp<{out}, {expr} const> const, long>"
                )
            })
            .collect()
    }

    #[test]
    fn itex_like_kernels_are_told_apart_by_what_differs() {
        let names = itex_like();
        let ops = [
            "sum",
            "difference",
            "product",
            "quotient",
            "max",
            "min",
            "sqrt",
            "rsqrt",
            "square",
        ];
        // The table's default name column: what tells each apart.
        let want: Vec<String> = ops
            .iter()
            .map(|op| format!("ExecExprFunctorKernel<…scalar_{op}_op…>"))
            .collect();
        assert_eq!(distinct(&names, 60), want);
        // With room: the arguments with what they share elided.
        let wide = distinct(&names, 90);
        assert_eq!(
            wide[0],
            "ExecExprFunctorKernel<TensorAssignOp<…, TensorCwiseBinaryOp<scalar_sum_op<…>, …>>>"
        );
        assert_eq!(
            wide[6],
            "ExecExprFunctorKernel<TensorAssignOp<…, TensorCwiseUnaryOp<scalar_sqrt_op<…>, …>>>"
        );
        // Before: every one `ExecExprFunctorKernel<…>`.
        assert_eq!(wide.iter().collect::<BTreeSet<_>>().len(), 9);
        // asm/'s file names: the same short names, not a cut prefix.
        let kernels: Vec<(usize, &str, &[u8])> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (i + 1, n.as_str(), n.as_bytes()))
            .collect();
        let files = asm_file_names(&kernels);
        assert_eq!(
            files[0],
            format!(
                "001-ExecExprFunctorKernel_scalar_sum_op-{}.asm",
                name_tag(names[0].as_bytes())
            )
        );
        assert_eq!(
            files[8].len(),
            "009-ExecExprFunctorKernel_scalar_square_op-12345678.asm".len()
        );
    }
}
