//! The modules compiled again for their source lines: on IGC 1, a light
//! capture (`XPU_ASM_IGC`) has no `// Line` comments, which IGC 1 writes
//! only in its full dumps, so the collection compiles each launched `-g`
//! module again, once, with them (`crate::run::rebuild`). Each such
//! compile is a folder `dumps/rebuild-<16 hex>/` of the capture, holding
//! IGC's full dumps of its modules and [`MARKER`], which says what was
//! compiled there and how it went: a later collection reads it and
//! compiles nothing again.

use super::files::write_atomic;
use super::layout::CollectError;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::Path;

/// The file of a rebuild folder that says what it holds.
pub const MARKER: &str = "xpu-asm-rebuild.json";
/// How rebuild folders' names start, under `dumps/`.
pub const PREFIX: &str = "rebuild-";

/// One module to compile again: its SPIR-V (a `.spv` of the capture),
/// build flags and device, as the program's compile had them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RebuiltModule {
    /// [`module_key`]: what makes two compiles the same.
    pub key: String,
    /// The SPIR-V's SHA-256, as the records give it.
    pub sha256: String,
    /// The `.spv` to compile, relative to the capture folder.
    pub spirv: String,
    pub build_flags: String,
    /// PCI device id of the device the program built it for.
    pub device_id: Option<u32>,
    /// `built`, or why not (the driver's words and build log).
    #[serde(default)]
    pub status: Option<String>,
}

impl RebuiltModule {
    pub fn built(&self) -> bool {
        self.status.as_deref() == Some(BUILT)
    }
}

/// [`RebuiltModule::status`] of a module compiled.
pub const BUILT: &str = "built";

/// What a rebuild folder holds ([`MARKER`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Marker {
    pub schema: u32,
    pub modules: Vec<RebuiltModule>,
    /// Seconds the compile took (the child process, start to end).
    #[serde(default)]
    pub seconds: Option<f64>,
}

/// What makes two compiles of a module the same: its SPIR-V, build flags
/// and device (16 hex digits of their SHA-256).
pub fn module_key(sha256: &str, build_flags: &str, device_id: Option<u32>) -> String {
    let mut h = Sha256::new();
    h.update(sha256.to_ascii_lowercase().as_bytes());
    h.update([0]);
    h.update(build_flags.as_bytes());
    h.update([0]);
    h.update(device_id.map(|d| d.to_string()).unwrap_or_default());
    xpu_asm_record::hex(&h.finalize()[..8])
}

/// `rebuild-<16 hex>`: the folder name of a compile of `keys`.
pub fn folder_name(keys: &[&str]) -> String {
    let mut h = Sha256::new();
    for k in keys {
        h.update(k.as_bytes());
        h.update([0]);
    }
    format!("{PREFIX}{}", xpu_asm_record::hex(&h.finalize()[..8]))
}

/// The rebuild folders of the capture `dir` with their markers, by name
/// (`rebuild-...`); a folder without a readable marker is none (an
/// interrupted compile: done again).
pub fn read_markers(dir: &Path) -> Vec<(String, Marker)> {
    let dumps = dir.join(xpu_asm_record::DUMPS_DIR);
    let Ok(rd) = std::fs::read_dir(&dumps) else {
        return Vec::new();
    };
    let mut out: Vec<(String, Marker)> = rd
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with(PREFIX))
        .filter_map(|n| {
            let bytes = std::fs::read(dumps.join(&n).join(MARKER)).ok()?;
            let m: Marker = serde_json::from_slice(&bytes).ok()?;
            Some((n, m))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Writes `marker` into the rebuild folder `folder`.
pub fn write_marker(folder: &Path, marker: &Marker) -> Result<(), CollectError> {
    let mut bytes = serde_json::to_vec_pretty(marker).unwrap_or_default();
    bytes.push(b'\n');
    write_atomic(&folder.join(MARKER), &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_markers() {
        let k = module_key("AB", "-g", Some(0x0bd5));
        assert_eq!(k, module_key("ab", "-g", Some(0x0bd5)));
        assert_eq!(k.len(), 16);
        assert_ne!(k, module_key("ab", "-g ", Some(0x0bd5)));
        assert_ne!(k, module_key("ab", "-g", None));
        assert_ne!(folder_name(&["a", "b"]), folder_name(&["ab"]));
        assert!(folder_name(&["a"]).starts_with(PREFIX));

        let d = tempfile::tempdir().unwrap();
        let dumps = d.path().join("dumps");
        let m = Marker {
            schema: 1,
            modules: vec![RebuiltModule {
                key: k.clone(),
                sha256: "ab".into(),
                spirv: "dumps/h-1-x/OCL_asm00.spv".into(),
                build_flags: "-g".into(),
                device_id: Some(0x0bd5),
                status: Some(BUILT.into()),
            }],
            seconds: Some(0.5),
        };
        for name in ["rebuild-2", "rebuild-1", "h-1-x", "rebuild-empty"] {
            std::fs::create_dir_all(dumps.join(name)).unwrap();
        }
        write_marker(&dumps.join("rebuild-2"), &m).unwrap();
        write_marker(&dumps.join("rebuild-1"), &m).unwrap();
        write_marker(&dumps.join("h-1-x"), &m).unwrap();
        std::fs::write(dumps.join("rebuild-empty").join(MARKER), b"{").unwrap();
        let read = read_markers(d.path());
        let names: Vec<&str> = read.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["rebuild-1", "rebuild-2"]);
        assert_eq!(read[0].1, m);
        assert!(read[0].1.modules[0].built());
    }
}
