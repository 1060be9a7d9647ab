//! Reading a capture's `report.json`.

use serde_json::Value;
use std::path::PathBuf;

/// A count of a report's JSON.
pub fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// A finished capture's folder and its `report.json`.
pub struct Captured {
    pub out: PathBuf,
    pub report: Value,
}

impl Captured {
    /// The first kernel of the report named `name`.
    pub fn kernel(&self, name: &str) -> &Value {
        self.kernels(name)
            .first()
            .copied()
            .unwrap_or_else(|| panic!("no kernel {name} in {}", self.out.display()))
    }

    /// Every kernel of the report named `name`.
    pub fn kernels(&self, name: &str) -> Vec<&Value> {
        self.report["kernels"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|k| k["name"] == name)
            .collect()
    }

    /// The flow (loops, pressure) of kernel `name`, which must have one.
    pub fn flow(&self, name: &str) -> &Value {
        let k = self.kernel(name);
        assert!(
            k["flow"].is_object() && k["flow_reason"].is_null(),
            "{name} has no flow: {k:#}"
        );
        &k["flow"]
    }
}
