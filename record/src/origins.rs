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
    /// Where in that object the bytes lie (from its base).
    pub input_offset: Option<u64>,
}

/// The device images one object registered with the SYCL runtime
/// (`__sycl_register_lib`): `object`, the one holding the registration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Registration {
    pub object: Option<u32>,
    /// How many SPIR-V (or LLVM IR) images it registered (a registration
    /// of SPIR-V alone by an object that registered SPIR-V before is not
    /// recorded).
    pub spirv: u64,
    /// Its other images, each.
    pub images: Vec<SyclImage>,
}

/// One registered device image: its target (`spir64`, `spir64_gen`, ...),
/// format (SYCL's number: 0 none, to be told by the bytes; 1 native;
/// 2 SPIR-V; 3 LLVM IR), options, size, first bytes, and where its bytes
/// lie (object and offset from the object's base; `None`: in no object).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyclImage {
    pub target: String,
    pub format: u8,
    pub compile_options: String,
    pub link_options: String,
    pub object: Option<u32>,
    pub offset: Option<u64>,
    pub size: u64,
    pub magic: Vec<u8>,
}

/// A native module the driver refused to create (`result`: its answer),
/// on device `device`, with where its bytes lay.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Refused {
    pub result: i64,
    pub size: u64,
    pub magic: Vec<u8>,
    pub device: Option<u32>,
    /// Its bytes, saved as a module's binary is (`modules/<sha256>.bin`,
    /// relative to the capture folder; `None`: not saved).
    pub binary_file: Option<String>,
    pub creation: Creation,
}

/// A `module_refused` event.
pub(crate) fn refused(v: &Value) -> Refused {
    Refused {
        result: v.get("result").and_then(Value::as_i64).unwrap_or(0),
        size: v.get("size").and_then(Value::as_u64).unwrap_or(0),
        magic: v
            .get("magic")
            .and_then(Value::as_str)
            .and_then(crate::unhex)
            .unwrap_or_default(),
        device: v.get("device").and_then(Value::as_u64).map(|d| d as u32),
        binary_file: v
            .get("binary")
            .and_then(|b| b.get("file"))
            .and_then(Value::as_str)
            .map(str::to_string),
        creation: creation(v),
    }
}

/// A `sycl_images` event.
pub(crate) fn registration(v: &Value) -> Registration {
    let text = |i: &Value, k: &str| {
        i.get(k)
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| {
                let h = i.get(format!("{k}_hex"))?.as_str()?;
                Some(String::from_utf8_lossy(&crate::unhex(h)?).into_owned())
            })
            .unwrap_or_default()
    };
    let id = |i: &Value| i.get("object").and_then(Value::as_u64).map(|o| o as u32);
    let images = v.get("images").and_then(Value::as_array);
    Registration {
        object: id(v),
        spirv: v.get("spirv").and_then(Value::as_u64).unwrap_or(0),
        images: images
            .into_iter()
            .flatten()
            .map(|i| SyclImage {
                target: text(i, "target"),
                format: i.get("format").and_then(Value::as_u64).unwrap_or(0) as u8,
                compile_options: text(i, "compile_options"),
                link_options: text(i, "link_options"),
                object: id(i),
                offset: i.get("offset").and_then(Value::as_u64),
                size: i.get("size").and_then(Value::as_u64).unwrap_or(0),
                magic: i
                    .get("magic")
                    .and_then(Value::as_str)
                    .and_then(crate::unhex)
                    .unwrap_or_default(),
            })
            .collect(),
    }
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
        input_offset: v.get("input_offset").and_then(Value::as_u64),
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
        let v: Value = serde_json::from_str(
            r#"{"type":"sycl_images","object":4,"spirv":7,"images":[{"target":"spir64_gen","format":0,"compile_options":"","link_options":"","object":4,"offset":64,"size":9,"magic":"7f454c46"},{"target":"spir64","format":2,"compile_options_hex":"2d4f32","link_options":"","object":null,"size":3,"magic":"03022307"}]}"#,
        )
        .unwrap();
        let r = registration(&v);
        assert_eq!((r.object, r.spirv), (Some(4), 7));
        assert_eq!(
            (
                r.images[0].target.as_str(),
                r.images[0].offset,
                r.images[0].size
            ),
            ("spir64_gen", Some(64), 9)
        );
        assert_eq!(r.images[0].magic, b"\x7fELF");
        assert_eq!(
            (r.images[1].object, r.images[1].compile_options.as_str()),
            (None, "-O2")
        );
    }
}
