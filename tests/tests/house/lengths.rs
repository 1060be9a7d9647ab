//! Function lengths: where each function starts and ends in a source file.

use super::*;

/// The name of the function a (stripped) line starts, if it does.
pub(crate) fn fn_name(line: &str) -> Option<&str> {
    let mut rest = line.trim_start();
    loop {
        let word_end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let word = &rest[..word_end];
        match word {
            "pub" => {
                rest = rest[3..].trim_start();
                if rest.starts_with('(') {
                    rest = rest[rest.find(')')? + 1..].trim_start();
                }
            }
            "const" | "async" | "unsafe" | "default" => rest = rest[word_end..].trim_start(),
            "extern" => {
                rest = rest[word_end..].trim_start();
                if rest.starts_with('"') {
                    rest = rest[1 + rest[1..].find('"')? + 1..].trim_start();
                }
            }
            "fn" => {
                let name = rest[2..].trim_start();
                let end = name
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(name.len());
                return (end > 0 && rest[2..].starts_with(char::is_whitespace))
                    .then(|| &name[..end]);
            }
            _ => return None,
        }
    }
}

/// `(lines, name, line)` of every function of a file's text, the whole
/// item from its `fn` line to its closing brace.
pub(crate) fn functions(text: &str) -> Vec<(usize, String, usize)> {
    let stripped = strip(text);
    let lines: Vec<&str> = stripped.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(name) = fn_name(l) else { continue };
        let mut depth = 0i64;
        let mut opened = false;
        for (j, body) in lines.iter().enumerate().skip(i) {
            for c in body.chars() {
                match c {
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => depth -= 1,
                    ';' if !opened && depth == 0 => break,
                    _ => {}
                }
                if opened && depth == 0 {
                    break;
                }
            }
            if opened && depth == 0 {
                out.push((j - i + 1, name.to_string(), i + 1));
                break;
            }
            if !opened && body.trim_end().ends_with(';') {
                break;
            }
        }
    }
    out
}

/// Every function over [`MAX_FN_LINES`] in the `.rs` files under `src`, as
/// `file:line: name is N lines`, longest first.
pub(crate) fn long_functions(src: &Path, root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().filter_map(|e| e.ok()) {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).unwrap();
                let rel = p.strip_prefix(root).unwrap_or(&p).display().to_string();
                for (n, name, line) in functions(&text) {
                    if n > MAX_FN_LINES {
                        found.push((n, format!("{rel}:{line}: {name} is {n} lines")));
                    }
                }
            }
        }
    }
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    found.into_iter().map(|(_, s)| s).collect()
}
