//! The scripts the docs name as commands run as written: each has its run
//! bit and a `#!` line (`scripts/release.sh` as the README writes it must
//! not say "Permission denied").

use super::*;
use std::os::unix::fs::PermissionsExt;

/// The docs a user reads commands from: the README, docs/ and the skill.
fn command_docs(root: &Path) -> Vec<PathBuf> {
    let mut docs = vec![root.join("README.md"), root.join("skills/xpu-asm/SKILL.md")];
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    pages.sort();
    docs.extend(pages);
    docs
}

/// The scripts `text` names as a command: a code span that starts with
/// `scripts/NAME`, or a line of a code block that does (after a `$ `
/// prompt, if any).
pub(crate) fn scripts_named_as_commands(text: &str) -> BTreeSet<String> {
    let mut named = BTreeSet::new();
    let mut take = |s: &str| {
        let s = s.trim().trim_start_matches("$ ");
        if let Some(rest) = s.strip_prefix("scripts/") {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || "._-".contains(*c))
                .collect();
            if !name.is_empty() && !name.ends_with('.') {
                named.insert(format!("scripts/{name}"));
            }
        }
    };
    let mut in_block = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
        } else if in_block {
            take(line);
        } else {
            line.split('`').skip(1).step_by(2).for_each(&mut take);
        }
    }
    named
}

#[test]
fn every_script_the_docs_name_as_a_command_has_its_run_bit() {
    let root = workspace_dir();
    let mut bad = Vec::new();
    let mut seen = BTreeSet::new();
    for doc in command_docs(&root) {
        let text =
            std::fs::read_to_string(&doc).unwrap_or_else(|e| panic!("{}: {e}", doc.display()));
        for s in scripts_named_as_commands(&text) {
            if !seen.insert(s.clone()) {
                continue;
            }
            let path = root.join(&s);
            let why = match std::fs::metadata(&path) {
                Err(e) => Some(format!("{e}")),
                Ok(m) if m.permissions().mode() & 0o111 == 0 => {
                    Some("no run bit (chmod +x, and commit the mode)".into())
                }
                Ok(_) => {
                    let head = std::fs::read(&path).unwrap_or_default();
                    (!head.starts_with(b"#!")).then(|| "no #! line".to_string())
                }
            };
            if let Some(why) = why {
                bad.push(format!(
                    "{s} (named in {}): {why}",
                    doc.strip_prefix(&root).unwrap_or(&doc).display()
                ));
            }
        }
    }
    assert!(
        seen.len() >= 15,
        "too few scripts found in the docs: {seen:?}"
    );
    assert!(
        bad.is_empty(),
        "scripts the docs name as commands that do not run as written:\n  {}",
        bad.join("\n  ")
    );
}

#[test]
fn scripts_named_as_commands_are_read_from_spans_and_blocks() {
    let text = "Run `scripts/a.sh --x` or `bash scripts/b.sh`.\n```sh\n$ scripts/c.py\nscripts/d.sh  # x\n  see scripts/e.sh\n```\n`scripts/`";
    let got: Vec<String> = scripts_named_as_commands(text).into_iter().collect();
    assert_eq!(got, ["scripts/a.sh", "scripts/c.py", "scripts/d.sh"]);
}
