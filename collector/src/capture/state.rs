//! `collect.json`: what the first collection learned from dump files it
//! then pruned ([`CollectState`]), so that a later `collect` reports the same.

use super::files::Usage;
use super::layout::STATE_FILE;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CollectState {
    pub schema: u32,
    pub dumps_before: Option<Usage>,
    /// shown `.asm` path -> whether its code is the final binary
    #[serde(default)]
    pub final_binary: BTreeMap<String, bool>,
    /// A module linked from several SPIR-V inputs told by its code:
    /// "FOLDER HASH" (the dump folder as shown, the hash of the linked
    /// module's files) -> [its dump key, its module's SHA-256]
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub linked: BTreeMap<String, [String; 2]>,
}

/// `collect.json` of an earlier collection, or nothing learned yet.
pub fn read_state(dir: &Path, warnings: &mut Vec<String>) -> CollectState {
    match std::fs::read(dir.join(STATE_FILE)) {
        Ok(b) => serde_json::from_slice(&b).unwrap_or_else(|e| {
            warnings.push(format!(
                "{STATE_FILE}: unreadable ({e}); rebuilt from the dumps"
            ));
            CollectState::default()
        }),
        Err(_) => CollectState::default(),
    }
}
