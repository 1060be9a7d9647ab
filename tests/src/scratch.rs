//! Scratch folders of the tests' own, and what is in them.

use crate::*;
use std::path::{Path, PathBuf};

/// A temporary folder of the test's own, `xpu-asm-<what>-XXXXXX`, removed
/// when dropped.
pub fn temp_dir(what: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("xpu-asm-{what}-"))
        .tempdir()
        .expect("a temporary folder")
}

/// A temporary folder of the test's own ([`temp_dir`]), for a test that
/// needs the real stack ([`require_stack`] first).
pub fn stack_temp_dir(what: &str) -> tempfile::TempDir {
    require_stack();
    temp_dir(what)
}

/// Every file under `dir`, relative, with its size; for failure messages.
pub fn list_files(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = rd.filter_map(|e| e.ok()).collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let p = e.path();
            let rel = p.strip_prefix(base).unwrap_or(&p).display().to_string();
            match e.metadata() {
                Ok(m) if m.is_dir() => walk(base, &p, out),
                Ok(m) => out.push(format!("{rel} ({} bytes)", m.len())),
                Err(_) => out.push(rel),
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out
}

/// A test's scratch folder: `root` (removed when dropped) and `out` in it,
/// the capture folder (not made: xpu-asm-run makes it).
pub struct Scratch {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub out: PathBuf,
}

/// A [`Scratch`] of the test's own, `xpu-asm-<what>-XXXXXX`.
pub fn scratch(what: &str) -> Scratch {
    let dir = temp_dir(what);
    let root = dir.path().to_path_buf();
    Scratch {
        out: root.join("out"),
        root,
        _dir: dir,
    }
}

/// A [`Scratch`] for a test that needs the real stack ([`require_stack`]
/// first).
pub fn stack_scratch(what: &str) -> Scratch {
    require_stack();
    scratch(what)
}

impl Scratch {
    /// `root/name`, made.
    pub fn folder(&self, name: &str) -> PathBuf {
        let p = self.root.join(name);
        std::fs::create_dir_all(&p)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", p.display()));
        p
    }
}

impl Scratch {
    /// The same scratch, its `out` made (for a capture through
    /// `XPU_ASM_OUT`, which names a folder that exists).
    pub fn with_out_made(self) -> Scratch {
        std::fs::create_dir_all(&self.out)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", self.out.display()));
        self
    }
}

/// Every entry under `dir` but those under `except` (paths relative to
/// `dir`), by relative path: a file's SHA-256, a link's target, `dir` for
/// a folder. Two of them are equal when the folder's files are byte for
/// byte the same.
pub fn tree_digests(dir: &Path, except: &[&str]) -> std::collections::BTreeMap<String, String> {
    use sha2::{Digest, Sha256};
    fn walk(
        base: &Path,
        dir: &Path,
        except: &[&str],
        out: &mut std::collections::BTreeMap<String, String>,
    ) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.filter_map(|e| e.ok()) {
            let p = e.path();
            let rel = p.strip_prefix(base).unwrap_or(&p).display().to_string();
            if except.contains(&rel.as_str()) {
                continue;
            }
            let digest = match std::fs::symlink_metadata(&p) {
                Ok(m) if m.file_type().is_symlink() => std::fs::read_link(&p)
                    .map_or_else(|e| e.to_string(), |t| format!("-> {}", t.display())),
                Ok(m) if m.is_dir() => {
                    walk(base, &p, except, out);
                    "dir".to_string()
                }
                Ok(_) => std::fs::read(&p).map_or_else(
                    |e| format!("unreadable: {e}"),
                    |b| format!("{:x}", Sha256::digest(b)),
                ),
                Err(e) => format!("gone: {e}"),
            };
            out.insert(rel, digest);
        }
    }
    let mut out = std::collections::BTreeMap::new();
    walk(dir, dir, except, &mut out);
    out
}
