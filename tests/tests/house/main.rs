//! The house rules of the workspace's crates, read from their sources:
//!
//! * imports run one way: no circle between the modules of a crate (its
//!   files), nor between the folders of any folder (a folder's modules
//!   taken together), counting `use` items (`pub use` too) and `crate::`,
//!   `super::`, `self::` and child-module paths in code; test code
//!   (`#[cfg(test)]` items) and comments are left out;
//! * no function is longer than [`MAX_FN_LINES`] lines, counting the whole
//!   `fn` item from its `fn` line to its closing brace;
//! * docs/internals.md names every source file of every crate, in the
//!   table of its crate's files;
//! * no source file of a crate, nor of the test code ([`TEST_CODE`]), is
//!   longer than [`MAX_FILE_LINES`] lines.
//!
//! Each failure names the circle with the import that makes each step of
//! it, or the function with its file and line.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use xpu_asm_tests::workspace_dir;

/// Functions longer than this do not read in one pass.
const MAX_FN_LINES: usize = 80;

/// Source files longer than this hold more than one room.
const MAX_FILE_LINES: usize = 900;

/// The folders of test code held to [`MAX_FILE_LINES`] too: the test kit
/// and the integration tests of the crates.
const TEST_CODE: [&str; 4] = [
    "tests/src",
    "tests/tests",
    "collector/tests",
    "interposer/tests",
];

// ---- reading the sources ------------------------------------------------

/// `text` with comments blanked and the contents of string and character
/// literals replaced by `s`, every newline kept (so line numbers hold).
fn strip(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, c: u8| out.push(if c == b'\n' { b'\n' } else { b' ' });
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == b'/' && next == Some(b'/') {
            while i < b.len() && b[i] != b'\n' {
                out.push(b' ');
                i += 1;
            }
        } else if c == b'/' && next == Some(b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
        } else if let Some(hashes) = raw_string_at(b, i) {
            // r"..." or r#"..."# (or br...): the quotes kept, the rest blanked.
            let open = b[i..].iter().position(|&x| x == b'"').unwrap() + i;
            out.extend_from_slice(&b[i..=open]);
            i = open + 1;
            let closes =
                |j: usize| b[j] == b'"' && (1..=hashes).all(|k| b.get(j + k) == Some(&b'#'));
            while i < b.len() && !closes(i) {
                blank_literal(&mut out, b[i]);
                i += 1;
            }
            let end = (i + 1 + hashes).min(b.len());
            out.extend_from_slice(&b[i.min(end)..end]);
            i = end;
        } else if c == b'"' {
            out.push(b'"');
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    blank_literal(&mut out, b[i]);
                    i += 1;
                }
                if i < b.len() {
                    blank_literal(&mut out, b[i]);
                    i += 1;
                }
            }
            if i < b.len() {
                out.push(b'"');
                i += 1;
            }
        } else if c == b'\'' {
            // A character literal ('x', '\n', '\u{..}', '{'), else a lifetime.
            let end = if next == Some(b'\\') {
                // The escaped character, then the closing quote.
                b.get(i + 3..)
                    .and_then(|rest| rest.iter().position(|&x| x == b'\''))
                    .map(|p| i + 3 + p)
            } else if b.get(i + 2) == Some(&b'\'') {
                Some(i + 2)
            } else {
                // A multi-byte character.
                std::str::from_utf8(&b[i + 1..(i + 6).min(b.len())])
                    .ok()
                    .or_else(|| std::str::from_utf8(&b[i + 1..(i + 5).min(b.len())]).ok())
                    .and_then(|s| s.chars().next())
                    .filter(|ch| ch.len_utf8() > 1)
                    .and_then(|ch| {
                        (b.get(i + 1 + ch.len_utf8()) == Some(&b'\''))
                            .then(|| i + 1 + ch.len_utf8())
                    })
            };
            match end {
                Some(e) => {
                    out.push(b'\'');
                    for &x in &b[i + 1..e] {
                        blank_literal(&mut out, x);
                    }
                    out.push(b'\'');
                    i = e + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn ident_before(b: &[u8], i: usize) -> bool {
    i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')
}

/// The number of `#` of a raw string starting at `i` (`r"`, `r#"`, `br"`).
fn raw_string_at(b: &[u8], i: usize) -> Option<usize> {
    let r = match b[i] {
        b'r' => i,
        b'b' if b.get(i + 1) == Some(&b'r') => i + 1,
        _ => return None,
    };
    if ident_before(b, i) {
        return None;
    }
    let hashes = b[r + 1..].iter().take_while(|&&x| x == b'#').count();
    (b.get(r + 1 + hashes) == Some(&b'"')).then_some(hashes)
}

fn blank_literal(out: &mut Vec<u8>, c: u8) {
    match c {
        b'\n' => out.push(b'\n'),
        // Only the first byte of a multi-byte character stands for it.
        0x80..=0xbf => {}
        _ => out.push(b's'),
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    Path,
    Punct(u8),
}

/// Tokens of stripped text, each with its line (1-based).
fn tokens(text: &str) -> Vec<(Tok, usize)> {
    let b = text.as_bytes();
    let mut v = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line += 1;
            i += 1;
        } else if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            v.push((Tok::Ident(text[s..i].to_string()), line));
        } else if c == b':' && b.get(i + 1) == Some(&b':') {
            v.push((Tok::Path, line));
            i += 2;
        } else {
            v.push((Tok::Punct(c), line));
            i += 1;
        }
    }
    v
}

/// The token ranges of items under `#[cfg(test)]` (the attribute up to
/// the item's `;` or closing brace).
fn test_items(t: &[(Tok, usize)]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let is = |i: usize, tok: Tok| t.get(i).map(|x| &x.0) == Some(&tok);
    let ident = |s: &str| Tok::Ident(s.to_string());
    let mut i = 0;
    while i < t.len() {
        let cfg_test = is(i, Tok::Punct(b'#'))
            && is(i + 1, Tok::Punct(b'['))
            && is(i + 2, ident("cfg"))
            && is(i + 3, Tok::Punct(b'('))
            && is(i + 4, ident("test"))
            && is(i + 5, Tok::Punct(b')'))
            && is(i + 6, Tok::Punct(b']'));
        if !cfg_test {
            i += 1;
            continue;
        }
        let start = i;
        let mut j = i + 7;
        let mut depth = 0usize;
        while j < t.len() {
            match t[j].0 {
                Tok::Punct(b'{') => depth += 1,
                Tok::Punct(b'}') => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                Tok::Punct(b';') if depth == 0 => break,
                _ => {}
            }
            j += 1;
        }
        out.push((start, j));
        i = j + 1;
    }
    out
}

/// Inline modules (`mod name { ... }`) by token range; also those a macro
/// defines (`mod $name { ... }`), inside which `super` is the module the
/// macro is used in.
fn inline_modules(t: &[(Tok, usize)]) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    for i in 0..t.len() {
        let Tok::Ident(kw) = &t[i].0 else { continue };
        if kw != "mod" {
            continue;
        }
        let metavariable = t.get(i + 1).map(|x| &x.0) == Some(&Tok::Punct(b'$'));
        let at = if metavariable { i + 2 } else { i + 1 };
        let (Some((Tok::Ident(name), _)), Some((Tok::Punct(b'{'), _))) = (t.get(at), t.get(at + 1))
        else {
            continue;
        };
        let name = if metavariable {
            format!("${name}")
        } else {
            name.clone()
        };
        let mut depth = 0usize;
        let mut j = at + 1;
        while j < t.len() {
            match t[j].0 {
                Tok::Punct(b'{') => depth += 1,
                Tok::Punct(b'}') => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            j += 1;
        }
        out.push((i, j, name));
    }
    out
}

/// A path met in a module: its segments and line.
#[derive(Debug, Clone)]
struct PathRef {
    segments: Vec<String>,
    line: usize,
    /// The inline modules (names) it is inside, outermost first.
    inside: Vec<String>,
}

/// Every path in `t` outside test items: the full paths of `use` trees,
/// and every `a::b::c` in code (not the tails of longer ones).
fn paths(t: &[(Tok, usize)]) -> Vec<PathRef> {
    let skipped = test_items(t);
    let inline = inline_modules(t);
    let in_test = |i: usize| skipped.iter().any(|&(s, e)| i >= s && i <= e);
    let inside = |i: usize| -> Vec<String> {
        inline
            .iter()
            .filter(|(s, e, _)| i > *s && i < *e)
            .map(|(_, _, n)| n.clone())
            .collect()
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < t.len() {
        if in_test(i) {
            i += 1;
            continue;
        }
        match &t[i].0 {
            Tok::Ident(kw) if kw == "use" => {
                let end = (i..t.len())
                    .find(|&j| t[j].0 == Tok::Punct(b';'))
                    .unwrap_or(t.len());
                let mut trees = Vec::new();
                let mut pos = i + 1;
                use_tree(t, &mut pos, end, Vec::new(), &mut trees);
                for segments in trees {
                    out.push(PathRef {
                        segments,
                        line: t[i].1,
                        inside: inside(i),
                    });
                }
                i = end + 1;
            }
            Tok::Ident(first) if i == 0 || t[i - 1].0 != Tok::Path => {
                let mut segments = vec![first.clone()];
                let mut j = i + 1;
                while let (Some((Tok::Path, _)), Some((Tok::Ident(s), _))) =
                    (t.get(j), t.get(j + 1))
                {
                    segments.push(s.clone());
                    j += 2;
                }
                if segments.len() > 1 {
                    out.push(PathRef {
                        segments,
                        line: t[i].1,
                        inside: inside(i),
                    });
                }
                i = j;
            }
            _ => i += 1,
        }
    }
    out
}

/// Parses one use tree at `*pos` (before `end`), pushing each full path.
fn use_tree(
    t: &[(Tok, usize)],
    pos: &mut usize,
    end: usize,
    prefix: Vec<String>,
    out: &mut Vec<Vec<String>>,
) {
    let mut path = prefix;
    while *pos < end {
        match &t[*pos].0 {
            Tok::Ident(s) if s == "as" => {
                *pos += 2;
                break;
            }
            Tok::Ident(s) if s == "self" && !path.is_empty() => *pos += 1,
            Tok::Ident(s) => {
                path.push(s.clone());
                *pos += 1;
            }
            Tok::Path => *pos += 1,
            Tok::Punct(b'*') => *pos += 1,
            Tok::Punct(b'{') => {
                *pos += 1;
                while *pos < end && t[*pos].0 != Tok::Punct(b'}') {
                    use_tree(t, pos, end, path.clone(), out);
                    if *pos < end && t[*pos].0 == Tok::Punct(b',') {
                        *pos += 1;
                    }
                }
                *pos += 1;
                return;
            }
            _ => break,
        }
    }
    if !path.is_empty() {
        out.push(path);
    }
}

// ---- the module graph -----------------------------------------------------

/// A module: its path from the crate root (empty for the root).
type ModPath = Vec<String>;

fn show_mod(m: &ModPath) -> String {
    if m.is_empty() {
        "crate".to_string()
    } else {
        m.join("::")
    }
}

/// Why there is an edge: where, and the path.
#[derive(Debug, Clone)]
struct Evidence {
    file: String,
    line: usize,
    path: String,
}

struct Graph {
    /// Every file module.
    modules: BTreeSet<ModPath>,
    edges: BTreeMap<(ModPath, ModPath), Evidence>,
}

/// The crate's file modules: `lib.rs` is the root, `a/mod.rs` and `a.rs`
/// are `a`, `a/b.rs` is `a::b`. Binaries' roots (`main.rs`, `bin/`) are
/// other crates and are left out.
fn file_modules(src: &Path) -> Vec<(ModPath, PathBuf)> {
    fn walk(dir: &Path, rel: &[String], out: &mut Vec<(ModPath, PathBuf)>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = rd.filter_map(|e| e.ok()).map(|e| e.path()).collect();
        entries.sort();
        for p in entries {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                if rel.is_empty() && name == "bin" {
                    continue;
                }
                let mut r = rel.to_vec();
                r.push(name);
                walk(&p, &r, out);
            } else if let Some(stem) = name.strip_suffix(".rs") {
                let mut m = rel.to_vec();
                match (rel.is_empty(), stem) {
                    (true, "lib") => {}
                    (true, "main") => continue,
                    (_, "mod") => {}
                    _ => m.push(stem.to_string()),
                }
                out.push((m, p));
            }
        }
    }
    let mut out = Vec::new();
    walk(src, &[], &mut out);
    out
}

/// The module a path names from module `at` (inside the inline modules
/// `inside`), or `None` for a path out of the crate or to a name in scope.
fn resolve(p: &PathRef, at: &ModPath, known: &BTreeSet<ModPath>) -> Option<ModPath> {
    let mut here: ModPath = at.clone();
    here.extend(p.inside.iter().cloned());
    let mut segs = p.segments.iter().peekable();
    let mut abs: ModPath = match segs.peek().map(|s| s.as_str()) {
        Some("crate") => {
            segs.next();
            Vec::new()
        }
        Some("self") => {
            segs.next();
            here.clone()
        }
        Some("super") => {
            let mut m = here.clone();
            while segs.peek().map(|s| s.as_str()) == Some("super") {
                segs.next();
                m.pop();
            }
            m
        }
        Some(first) => {
            // A child module named relative to this one (Rust 2018 paths).
            let mut child = here.clone();
            child.push(first.to_string());
            if !known.contains(&child) {
                return None;
            }
            here.clone()
        }
        None => return None,
    };
    abs.extend(segs.cloned());
    // The longest prefix that is a module. Inline modules are their file's.
    (0..=abs.len())
        .rev()
        .map(|k| abs[..k].to_vec())
        .find(|m| known.contains(m))
}

/// The import graph of the crate whose sources are in `src`.
fn graph(src: &Path) -> Graph {
    let files = file_modules(src);
    let mut modules: BTreeSet<ModPath> = files.iter().map(|(m, _)| m.clone()).collect();
    let mut parsed = Vec::new();
    for (m, file) in &files {
        let text =
            std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let t = tokens(&strip(&text));
        for (_, _, name) in inline_modules(&t) {
            let mut im = m.clone();
            im.push(name);
            modules.insert(im);
        }
        parsed.push((m.clone(), file, paths(&t)));
    }
    let file_of = |m: &ModPath| -> ModPath {
        (0..=m.len())
            .rev()
            .map(|k| m[..k].to_vec())
            .find(|p| files.iter().any(|(f, _)| f == p))
            .unwrap_or_default()
    };
    let mut edges = BTreeMap::new();
    for (m, file, refs) in parsed {
        for p in refs {
            let Some(target) = resolve(&p, &m, &modules) else {
                continue;
            };
            let target = file_of(&target);
            if target == m {
                continue;
            }
            let rel = file.strip_prefix(src).unwrap_or(file).display().to_string();
            edges.entry((m.clone(), target)).or_insert(Evidence {
                file: rel,
                line: p.line,
                path: p.segments.join("::"),
            });
        }
    }
    let modules = files.into_iter().map(|(m, _)| m).collect();
    Graph { modules, edges }
}

/// Strongly connected components of more than one node.
fn circles<N: Ord + Clone>(nodes: &BTreeSet<N>, edges: &BTreeSet<(N, N)>) -> Vec<Vec<N>> {
    // Kosaraju: finish order on the graph, then components on its reverse.
    let succ = |n: &N| -> Vec<N> {
        edges
            .iter()
            .filter(|(a, _)| a == n)
            .map(|(_, b)| b.clone())
            .collect()
    };
    let pred = |n: &N| -> Vec<N> {
        edges
            .iter()
            .filter(|(_, b)| b == n)
            .map(|(a, _)| a.clone())
            .collect()
    };
    let mut seen = BTreeSet::new();
    let mut order = Vec::new();
    for n in nodes {
        if seen.contains(n) {
            continue;
        }
        let mut stack = vec![(n.clone(), false)];
        while let Some((x, done)) = stack.pop() {
            if done {
                order.push(x);
                continue;
            }
            if !seen.insert(x.clone()) {
                continue;
            }
            stack.push((x.clone(), true));
            for y in succ(&x) {
                if !seen.contains(&y) {
                    stack.push((y, false));
                }
            }
        }
    }
    let mut assigned = BTreeSet::new();
    let mut out = Vec::new();
    for n in order.iter().rev() {
        if assigned.contains(n) {
            continue;
        }
        let mut comp = Vec::new();
        let mut stack = vec![n.clone()];
        while let Some(x) = stack.pop() {
            if !assigned.insert(x.clone()) {
                continue;
            }
            comp.push(x.clone());
            stack.extend(pred(&x).into_iter().filter(|y| !assigned.contains(y)));
        }
        if comp.len() > 1 {
            comp.sort();
            out.push(comp);
        }
    }
    out.sort();
    out
}

/// A shortest way round a component, from its first node back to it.
fn cycle_in<N: Ord + Clone>(comp: &[N], edges: &BTreeSet<(N, N)>) -> Vec<N> {
    let start = comp[0].clone();
    let mut from: BTreeMap<N, N> = BTreeMap::new();
    let mut queue = VecDeque::from([start.clone()]);
    while let Some(x) = queue.pop_front() {
        for (_, y) in edges.iter().filter(|(a, b)| *a == x && comp.contains(b)) {
            if *y == start {
                let mut path = vec![x.clone()];
                let mut cur = x.clone();
                while cur != start {
                    cur = from[&cur].clone();
                    path.push(cur.clone());
                }
                path.reverse();
                path.push(start);
                return path;
            }
            if !from.contains_key(y) {
                from.insert(y.clone(), x.clone());
                queue.push_back(y.clone());
            }
        }
    }
    comp.to_vec()
}

/// The folder-level groups: for folder `f`, the child (module or folder)
/// of `f` that module `m` is in, if `m` is under `f` and not `f` itself.
fn group_in(f: &ModPath, m: &ModPath) -> Option<ModPath> {
    (m.len() > f.len() && m.starts_with(f)).then(|| m[..=f.len()].to_vec())
}

/// Every circle of the crate in `src`, each named with the imports that
/// make it; empty when imports run one way.
fn import_circles(src: &Path) -> Vec<String> {
    let g = graph(src);
    let mut out = Vec::new();
    let module_edges: BTreeSet<(ModPath, ModPath)> = g.edges.keys().cloned().collect();
    for comp in circles(&g.modules, &module_edges) {
        let cycle = cycle_in(&comp, &module_edges);
        let why: Vec<String> = cycle
            .windows(2)
            .map(|w| {
                let e = &g.edges[&(w[0].clone(), w[1].clone())];
                format!("{}:{} imports {}", e.file, e.line, e.path)
            })
            .collect();
        out.push(format!(
            "circle: {} ({})",
            cycle.iter().map(show_mod).collect::<Vec<_>>().join(" -> "),
            why.join("; ")
        ));
    }
    // Folders: the children of each folder, each taken whole.
    let folders: BTreeSet<ModPath> = g
        .modules
        .iter()
        .flat_map(|m| (0..m.len()).map(|k| m[..k].to_vec()))
        .collect();
    for f in folders {
        let mut edges: BTreeMap<(ModPath, ModPath), &Evidence> = BTreeMap::new();
        for ((a, b), e) in &g.edges {
            if let (Some(ga), Some(gb)) = (group_in(&f, a), group_in(&f, b)) {
                if ga != gb {
                    edges.entry((ga, gb)).or_insert(e);
                }
            }
        }
        let keys: BTreeSet<(ModPath, ModPath)> = edges.keys().cloned().collect();
        let nodes: BTreeSet<ModPath> = keys
            .iter()
            .flat_map(|(a, b)| [a.clone(), b.clone()])
            .collect();
        for comp in circles(&nodes, &keys) {
            // A circle of single files is a circle of modules, named above.
            if comp.iter().all(|c| {
                !g.modules
                    .iter()
                    .any(|m| m.len() > c.len() && m.starts_with(c))
            }) {
                continue;
            }
            let cycle = cycle_in(&comp, &keys);
            let why: Vec<String> = cycle
                .windows(2)
                .map(|w| {
                    let e = edges[&(w[0].clone(), w[1].clone())];
                    format!("{}:{} imports {}", e.file, e.line, e.path)
                })
                .collect();
            out.push(format!(
                "circle between folders: {} ({})",
                cycle.iter().map(show_mod).collect::<Vec<_>>().join(" -> "),
                why.join("; ")
            ));
        }
    }
    out
}

/// The crate root's children in layers, top (imported by none) first:
/// each is above everything it imports.
fn layers(src: &Path) -> Vec<Vec<String>> {
    let g = graph(src);
    let root = Vec::new();
    let mut edges: BTreeSet<(ModPath, ModPath)> = BTreeSet::new();
    let mut nodes: BTreeSet<ModPath> = BTreeSet::new();
    for m in &g.modules {
        nodes.extend(group_in(&root, m));
    }
    for (a, b) in g.edges.keys() {
        if let (Some(ga), Some(gb)) = (group_in(&root, a), group_in(&root, b)) {
            if ga != gb {
                edges.insert((ga, gb));
            }
        }
    }
    // Height: the longest chain of imports below a node.
    let mut height: BTreeMap<ModPath, usize> = BTreeMap::new();
    fn h(
        n: &ModPath,
        e: &BTreeSet<(ModPath, ModPath)>,
        memo: &mut BTreeMap<ModPath, usize>,
        depth: usize,
    ) -> usize {
        if let Some(v) = memo.get(n) {
            return *v;
        }
        if depth > 64 {
            return 0;
        }
        let v = e
            .iter()
            .filter(|(a, _)| a == n)
            .map(|(_, b)| h(b, e, memo, depth + 1) + 1)
            .max()
            .unwrap_or(0);
        memo.insert(n.clone(), v);
        v
    }
    for n in &nodes {
        h(n, &edges, &mut height, 0);
    }
    let top = height.values().copied().max().unwrap_or(0);
    (0..=top)
        .rev()
        .map(|l| {
            height
                .iter()
                .filter(|(_, v)| **v == l)
                .map(|(n, _)| show_mod(n))
                .collect()
        })
        .collect()
}

mod checks;
mod docs;
mod examples;
mod lengths;
mod rules;
mod scripts;

use docs::*;
use lengths::*;
use rules::helper_names;
