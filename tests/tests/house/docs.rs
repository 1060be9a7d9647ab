//! The files named in docs/internals.md: the tables of each crate's files.

use super::*;

/// The source files (paths under `src/`) that the rows of the table in
/// `text` name: a row starting with a folder (`` `dir/` ``, or `(top)`)
/// names the files of its other cells in that folder; a row starting with
/// a file names that file.
pub(crate) fn named_in_table(text: &str) -> BTreeSet<String> {
    let mut named = BTreeSet::new();
    for row in text.lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let Some(first) = cells.get(1) else { continue };
        let ticked = |cell: &str| -> Vec<String> {
            cell.split('`')
                .skip(1)
                .step_by(2)
                .filter(|t| t.ends_with(".rs"))
                .map(str::to_string)
                .collect()
        };
        let dir = match *first {
            "(top)" => Some(String::new()),
            f if f.starts_with('`') && f.ends_with("/`") => Some(f.trim_matches('`').to_string()),
            _ => None,
        };
        match dir {
            Some(dir) => {
                for cell in &cells[2..] {
                    named.extend(ticked(cell).into_iter().map(|f| format!("{dir}{f}")));
                }
            }
            None => named.extend(ticked(first)),
        }
    }
    named
}

/// The part of `doc` from the line holding `from` to the line holding
/// `to` (or its end).
pub(crate) fn section<'a>(doc: &'a str, from: &str, to: Option<&str>) -> &'a str {
    let start = doc
        .find(from)
        .unwrap_or_else(|| panic!("docs/internals.md has no {from:?}"));
    let rest = &doc[start..];
    match to.and_then(|t| rest.find(t)) {
        Some(end) => &rest[..end],
        None => rest,
    }
}

/// Every `.rs` file under `src`, as a path relative to it.
pub(crate) fn source_files(src: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).expect("a source folder") {
            let p = e.expect("an entry").path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(src).expect("under src");
                out.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

/// The source files of `krate` that `named` leaves out.
pub(crate) fn unnamed(krate: &str, named: &BTreeSet<String>) -> Vec<String> {
    source_files(&workspace_dir().join(krate).join("src"))
        .into_iter()
        .filter(|f| !named.contains(f))
        .map(|f| format!("{krate}/src/{f}"))
        .collect()
}
