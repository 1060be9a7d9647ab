//! What a module was built from beyond its first input's bytes and build
//! flags: its specialization constants (`"spec_constants"`, Level Zero's
//! `ze_module_constants_t` or OpenCL's `clSetProgramSpecializationConstant`)
//! and, for a module of several SPIR-V inputs, each input (`"inputs"`).
//! Written by the interposer without a version change: a record without
//! them reads as before (none).

use serde_json::Value;

/// One specialization constant: its SpecId and the bytes of its value
/// (little-endian, its type's size), as the driver read them.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SpecConstant {
    pub id: u32,
    pub value: Vec<u8>,
}

/// One input of a module built from several.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModuleInput {
    pub size: u64,
    pub sha256: String,
    pub build_flags: String,
    pub spec_constants: Vec<SpecConstant>,
}

/// The `spec_constants` of an event object (a module or one of its
/// inputs); an entry without an id or whose value is not hex is left out.
pub fn spec_constants(v: &Value) -> Vec<SpecConstant> {
    let Some(list) = v.get("spec_constants").and_then(Value::as_array) else {
        return Vec::new();
    };
    let mut out: Vec<SpecConstant> = list
        .iter()
        .filter_map(|c| {
            Some(SpecConstant {
                id: u32::try_from(c.get("id")?.as_u64()?).ok()?,
                value: crate::unhex(c.get("value")?.as_str()?)?,
            })
        })
        .collect();
    out.sort();
    out
}

/// The `inputs` of a module event.
pub fn inputs(v: &Value) -> Vec<ModuleInput> {
    let Some(list) = v.get("inputs").and_then(Value::as_array) else {
        return Vec::new();
    };
    list.iter()
        .map(|i| ModuleInput {
            size: i.get("size").and_then(Value::as_u64).unwrap_or(0),
            sha256: i
                .get("sha256")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            build_flags: i
                .get("build_flags")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            spec_constants: spec_constants(i),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::read::{parse_events, ProcessRecord};

    #[test]
    fn constants_and_inputs_read_back() {
        let events = concat!(
            r#"{"record":"xpu-asm","version":2,"type":"process","pid":1,"host":"h"}"#,
            "\n",
            r#"{"type":"module","id":1,"format":"spirv","size":8,"sha256":"ab","build_flags":"-g","kernel_names":["k"],"spec_constants":[{"id":9,"value":"0000000000000440"},{"id":3,"value":"feffffff"},{"id":4,"value":"zz"}]}"#,
            "\n",
            r#"{"type":"module","id":2,"format":"spirv","size":8,"sha256":"cd","build_flags":"","kernel_names":[],"inputs":[{"size":8,"sha256":"cd","build_flags":"-O1","spec_constants":[{"id":1,"value":"01"}]},{"size":4,"sha256":"ef"}]}"#,
            "\n",
            r#"{"type":"module","id":3,"format":"spirv","size":8,"sha256":"01","build_flags":"","kernel_names":[]}"#,
            "\n",
        );
        let mut rec = ProcessRecord::default();
        parse_events(events.as_bytes(), "t", &mut rec);
        let m = &rec.modules[&1];
        assert_eq!(
            m.spec_constants,
            vec![
                super::SpecConstant {
                    id: 3,
                    value: vec![0xfe, 0xff, 0xff, 0xff]
                },
                super::SpecConstant {
                    id: 9,
                    value: 2.5f64.to_le_bytes().to_vec()
                },
            ]
        );
        let two = &rec.modules[&2];
        assert_eq!(two.inputs.len(), 2);
        assert_eq!(two.inputs[0].build_flags, "-O1");
        assert_eq!(two.inputs[0].spec_constants[0].value, vec![1]);
        assert_eq!(two.inputs[1].sha256, "ef");
        assert!(two.inputs[1].spec_constants.is_empty());
        assert!(rec.modules[&3].spec_constants.is_empty() && rec.modules[&3].inputs.is_empty());
    }
}
