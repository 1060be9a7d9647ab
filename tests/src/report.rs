//! Reading a capture's `report.json`.

/// A count of a report's JSON.
pub fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}
