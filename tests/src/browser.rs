//! The page in a real browser: Debian's headless Chromium driven by
//! `tests/browser/check.mjs` (playwright-core from `tests/browser/node_modules`,
//! both installed by scripts/install-deps.sh).

use crate::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// What tests/browser/check.mjs saw of the page at `page`.
pub fn browse(page: &Path, out: &Path, args: &[&str]) -> Value {
    let dir = workspace_dir().join("tests/browser");
    assert!(
        dir.join("node_modules/playwright-core").is_dir()
            && Path::new("/usr/bin/chromium").is_file(),
        "no playwright-core in {} or no /usr/bin/chromium: run scripts/install-deps.sh \
         (Debian's chromium, and `npm ci` in tests/browser)",
        dir.display()
    );
    std::fs::create_dir_all(out).expect("a screenshot folder");
    let mut cmd = Command::new("node");
    cmd.arg(dir.join("check.mjs")).arg(page).arg(out).args(args);
    let r = run(cmd, out);
    r.assert_status(0);
    let v: Value = serde_json::from_str(r.stdout().trim())
        .unwrap_or_else(|e| panic!("check.mjs printed no JSON: {e}\n{}", r.ctx()));
    assert_eq!(
        v["errors"],
        serde_json::json!([]),
        "errors in the page\n{v:#}"
    );
    assert_eq!(
        v["requests"],
        serde_json::json!([]),
        "requests off the file\n{v:#}"
    );
    v
}
