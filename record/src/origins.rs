//! Reading the record's origins back: the loaded objects (`object`
//! events), the call stacks of kernels' first launches (`stack` events)
//! and a module's creation (its `stack` and `input_object`).

use serde_json::Value;

/// A loaded object the process named: the program (empty `path`) or a
/// shared library, where it was loaded and its GNU build id (hex; empty
/// when it has none).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Object {
    pub id: u32,
    pub path: Vec<u8>,
    pub base: u64,
    pub start: u64,
    pub end: u64,
    pub build_id: String,
}

/// The call stack of a launch of kernel `kernel` (its first in the
/// process, or the first from another call site): return addresses,
/// innermost first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LaunchStack {
    pub kernel: u32,
    pub frames: Vec<u64>,
}

/// How a module was created: the stack of its creation and, for the
/// bytes the program passed, the object whose image held them
/// (`Some(None)`: none, memory of the process; `None`: not recorded).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Creation {
    pub stack: Vec<u64>,
    pub input_object: Option<Option<u32>>,
}

/// An `object` event, into `objects` (by id).
pub(crate) fn object_event(v: &Value, objects: &mut std::collections::BTreeMap<u32, Object>) {
    let o = object(v);
    objects.insert(o.id, o);
}

fn object(v: &Value) -> Object {
    // The path as the interposer writes names: `path`, or `path_hex`.
    let path = match v.get("path").and_then(Value::as_str) {
        Some(p) => p.as_bytes().to_vec(),
        None => v
            .get("path_hex")
            .and_then(Value::as_str)
            .and_then(crate::unhex)
            .unwrap_or_default(),
    };
    Object {
        id: v.get("id").and_then(Value::as_u64).unwrap_or(0) as u32,
        path,
        base: v.get("base").and_then(Value::as_u64).unwrap_or(0),
        start: v.get("start").and_then(Value::as_u64).unwrap_or(0),
        end: v.get("end").and_then(Value::as_u64).unwrap_or(0),
        build_id: v
            .get("build_id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
    }
}

fn frames(v: Option<&Value>) -> Vec<u64> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default()
}

pub(crate) fn stack_event(v: &Value) -> LaunchStack {
    LaunchStack {
        kernel: v.get("kernel").and_then(Value::as_u64).unwrap_or(0) as u32,
        frames: frames(v.get("frames")),
    }
}

/// A module event's creation fields (records before them: empty).
pub(crate) fn creation(v: &Value) -> Creation {
    Creation {
        stack: frames(v.get("stack")),
        input_object: v
            .get("input_object")
            .map(|o| o.as_u64().map(|id| id as u32)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_stacks_and_creations_read_back() {
        let v: Value = serde_json::from_str(
            r#"{"type":"object","id":3,"path":"/lib/libx.so","base":4096,"start":4096,"end":8192,"build_id":"ab"}"#,
        )
        .unwrap();
        let o = object(&v);
        assert_eq!(
            (o.id, o.path.as_slice(), o.end, o.build_id.as_str()),
            (3, &b"/lib/libx.so"[..], 8192, "ab")
        );
        let v: Value =
            serde_json::from_str(r#"{"type":"stack","kernel":7,"frames":[5,6]}"#).unwrap();
        assert_eq!(
            stack_event(&v),
            LaunchStack {
                kernel: 7,
                frames: vec![5, 6]
            }
        );
        let v: Value = serde_json::from_str(r#"{"stack":[1],"input_object":null}"#).unwrap();
        assert_eq!(creation(&v).input_object, Some(None));
        let v: Value = serde_json::from_str(r#"{"stack":[1],"input_object":2}"#).unwrap();
        assert_eq!(creation(&v).input_object, Some(Some(2)));
        assert_eq!(creation(&serde_json::json!({})), Creation::default());
    }
}
