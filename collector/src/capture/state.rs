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
