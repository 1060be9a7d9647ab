//! The rules, over the workspace: imports one way, every source file named
//! in docs/internals.md, no file over [`MAX_FILE_LINES`] lines (the crates'
//! and the test code's), no function over [`MAX_FN_LINES`] lines.

use super::*;

fn assert_one_way(krate: &str) {
    let src = workspace_dir().join(krate).join("src");
    let found = import_circles(&src);
    assert!(
        found.is_empty(),
        "{krate}/src imports in circles:\n{}",
        found.join("\n")
    );
    // Each folder (or file) of the crate root above those it imports.
    println!("{krate}: layers, top first:");
    for l in layers(&src) {
        println!("  {}", l.join(", "));
    }
}

fn assert_short_functions(krate: &str) {
    let root = workspace_dir();
    let found = long_functions(&root.join(krate).join("src"), &root);
    assert!(
        found.is_empty(),
        "functions over {MAX_FN_LINES} lines in {krate}/src (name their steps):\n{}",
        found.join("\n")
    );
}

#[test]
fn collector_imports_run_one_way() {
    assert_one_way("collector");
}

#[test]
fn interposer_imports_run_one_way() {
    assert_one_way("interposer");
}

#[test]
fn isa_imports_run_one_way() {
    assert_one_way("isa");
}

#[test]
fn record_imports_run_one_way() {
    assert_one_way("record");
}

#[test]
fn internals_names_every_source_file() {
    let doc = std::fs::read_to_string(workspace_dir().join("docs/internals.md"))
        .expect("docs/internals.md");
    let tables = [
        (
            "collector",
            "Each file of `collector/src/`",
            Some("`isa/` is the crate"),
        ),
        (
            "interposer",
            "## The interposer's files",
            Some("The record format is defined once"),
        ),
        ("isa", "of `isa/src/`:", None),
    ];
    let mut missing = Vec::new();
    for (krate, from, to) in tables {
        missing.extend(unnamed(krate, &named_in_table(section(&doc, from, to))));
    }
    // The record's few files are named in the text, by their paths.
    let record: BTreeSet<String> = source_files(&workspace_dir().join("record/src"))
        .into_iter()
        .filter(|f| doc.contains(&format!("`record/src/{f}`")))
        .collect();
    missing.extend(unnamed("record", &record));
    assert!(
        missing.is_empty(),
        "docs/internals.md does not name these source files (in the table of their crate's files):\n{}",
        missing.join("\n")
    );
}

#[test]
fn no_source_file_is_too_long() {
    let mut long = Vec::new();
    let crates = ["collector", "interposer", "isa", "record"].map(|k| format!("{k}/src"));
    for dir in crates.iter().map(String::as_str).chain(TEST_CODE) {
        let src = workspace_dir().join(dir);
        for f in source_files(&src) {
            let text = std::fs::read_to_string(src.join(&f)).expect("a source file");
            let n = text.lines().count();
            if n > MAX_FILE_LINES {
                long.push(format!("{dir}/{f}: {n} lines"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "source files over {MAX_FILE_LINES} lines (split each into the rooms it holds):\n{}",
        long.join("\n")
    );
}

#[test]
fn collector_functions_read_in_one_pass() {
    assert_short_functions("collector");
}

#[test]
fn interposer_functions_read_in_one_pass() {
    assert_short_functions("interposer");
}

#[test]
fn isa_functions_read_in_one_pass() {
    assert_short_functions("isa");
}

#[test]
fn record_functions_read_in_one_pass() {
    assert_short_functions("record");
}

/// The test helpers of `text`: the names of its top-level functions (no
/// indentation) that are not `#[test]` functions.
pub(crate) fn helper_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut test_attr = false;
    for line in text.lines() {
        if line.starts_with("#[") {
            test_attr |= line.starts_with("#[test");
            continue;
        }
        let rest = line
            .strip_prefix("pub(crate) ")
            .or_else(|| line.strip_prefix("pub(super) "))
            .or_else(|| line.strip_prefix("pub "))
            .unwrap_or(line);
        if let Some(name) = rest
            .strip_prefix("fn ")
            .and_then(|r| r.split(['(', '<']).next())
        {
            if !test_attr {
                names.push(name.to_string());
            }
        }
        if !line.trim().is_empty() && !line.starts_with("//") {
            test_attr = false;
        }
    }
    names
}

/// One test kit: no test helper is defined in two files of the test code
/// ([`TEST_CODE`]); a helper two files need is the kit's (`tests/src/`,
/// `collector/tests/common/`), one that does something else has a name of
/// its own (scripts/duplicate-helpers.py counts the same).
#[test]
fn no_test_helper_is_defined_twice() {
    let mut files: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for dir in TEST_CODE {
        let src = workspace_dir().join(dir);
        for f in source_files(&src) {
            let text = std::fs::read_to_string(src.join(&f)).expect("a source file");
            for name in helper_names(&text) {
                files.entry(name).or_default().insert(format!("{dir}/{f}"));
            }
        }
    }
    let twice: Vec<String> = files
        .into_iter()
        .filter(|(_, fs)| fs.len() > 1)
        .map(|(name, fs)| format!("{name}: {}", fs.into_iter().collect::<Vec<_>>().join(" ")))
        .collect();
    assert!(
        twice.is_empty(),
        "test helpers defined in more than one file (one kit: move each into tests/src/, or name it for what it does):\n{}",
        twice.join("\n")
    );
}

/// The front page: at most [`README_MAX_LINES`] lines, its first screen
/// (24 lines) the two commands on a fresh machine (the demo and the tests).
#[test]
fn the_readme_is_a_front_page() {
    const README_MAX_LINES: usize = 300;
    let root = workspace_dir();
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let lines = readme.lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines, more than {README_MAX_LINES}: move details into docs/"
    );
    let screen: Vec<&str> = readme.lines().take(24).collect();
    for command in ["scripts/demo.sh", "scripts/test.sh"] {
        assert!(
            screen.iter().any(|l| l.starts_with(command)),
            "README.md's first screen has no line starting with {command}:\n{}",
            screen.join("\n")
        );
    }
}

/// Every relative link of README.md and docs/ resolves
/// (`scripts/check-docs.py`, which asks git for the repository's files: on
/// the host, not in the sid root, which has no git).
#[cfg(not(feature = "sid"))]
#[test]
fn every_link_of_the_docs_resolves() {
    let root = workspace_dir();
    let out = std::process::Command::new("python3")
        .arg(root.join("scripts/check-docs.py"))
        .output()
        .expect("python3 scripts/check-docs.py");
    assert!(
        out.status.success(),
        "scripts/check-docs.py:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
