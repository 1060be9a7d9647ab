//! Modules of kernels whose names are any bytes: SPIR-V assembled by
//! `spirv-as` (SPIRV-Tools, installed by scripts/install-deps.sh on the
//! host and in the sid root) from text the test writes, so that a name can
//! hold what no OpenCL C compiler makes (newlines, invalid UTF-8, bidi
//! controls, the empty name, 250,000 bytes), and the steps that launch
//! them by the exact bytes (`named:M:FILE:N` of both workloads: the name
//! is the file's bytes, which no command line limits).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The body of a kernel of [`assemble`]: every kernel of a module has the
/// same code, so each one's figures must equal those of any other.
const BODY: &str = "OpStore %p%i %one Aligned 4\n";

/// A `"..."` literal of SPIR-V's assembly: `"` and `\` escaped, every
/// other byte as it is (spirv-as copies it into the binary).
fn literal(name: &[u8]) -> Vec<u8> {
    let mut out = vec![b'"'];
    for &b in name {
        if b == b'"' || b == b'\\' {
            out.push(b'\\');
        }
        out.push(b);
    }
    out.push(b'"');
    out
}

/// The SPIR-V assembly of a module with one kernel per name of `names`,
/// each `void k(global float *p) { *p = 1.0f; }`, SPIR-V 1.0.
pub fn module_text(names: &[&[u8]]) -> Vec<u8> {
    let mut t = b"OpCapability Addresses\nOpCapability Kernel\nOpCapability Int64\n\
                  OpMemoryModel Physical64 OpenCL\n"
        .to_vec();
    for (i, n) in names.iter().enumerate() {
        t.extend_from_slice(format!("OpEntryPoint Kernel %k{i} ").as_bytes());
        t.extend(literal(n));
        t.push(b'\n');
    }
    t.extend_from_slice(
        b"%void = OpTypeVoid\n%float = OpTypeFloat 32\n\
          %ptr = OpTypePointer CrossWorkgroup %float\n\
          %fn = OpTypeFunction %void %ptr\n%one = OpConstant %float 1\n",
    );
    for i in 0..names.len() {
        t.extend_from_slice(
            format!(
                "%k{i} = OpFunction %void None %fn\n%p{i} = OpFunctionParameter %ptr\n\
                 %l{i} = OpLabel\n{}OpReturn\nOpFunctionEnd\n",
                BODY.replace("%i", &i.to_string())
            )
            .as_bytes(),
        );
    }
    t
}

/// `dir/<stem>.spv`: the module of [`module_text`] assembled by
/// `spirv-as` (its text beside it, `<stem>.spvasm`).
pub fn assemble(dir: &Path, stem: &str, names: &[&[u8]]) -> PathBuf {
    std::fs::create_dir_all(dir).expect("the module's folder");
    let text = dir.join(format!("{stem}.spvasm"));
    let spv = dir.join(format!("{stem}.spv"));
    std::fs::write(&text, module_text(names)).expect("the module's text");
    let out = Command::new("spirv-as")
        .arg("--target-env")
        .arg("spv1.0")
        .arg(&text)
        .arg("-o")
        .arg(&spv)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run spirv-as ({e}): scripts/install-deps.sh installs spirv-tools")
        });
    assert!(
        out.status.success() && spv.is_file(),
        "spirv-as {} failed ({}): {}",
        text.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    spv
}

/// Each name written to `dir/name-<i>` for the workloads' `named` steps.
pub fn name_files(dir: &Path, names: &[&[u8]]) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).expect("the names' folder");
    names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let p = dir.join(format!("name-{i}"));
            std::fs::write(&p, n).expect("a name's file");
            p
        })
        .collect()
}

/// The steps `named:MODULE:FILE:N` that launch each kernel of `names`
/// `launches[i]` times, by the exact bytes of its name (files made in
/// `dir`; no path may hold `:`).
pub fn named_steps(dir: &Path, module: &str, names: &[&[u8]], launches: &[u64]) -> Vec<String> {
    assert_eq!(names.len(), launches.len(), "a launch count per name");
    name_files(dir, names)
        .iter()
        .zip(launches)
        .map(|(f, n)| {
            let f = f.to_str().expect("a UTF-8 path");
            assert!(!f.contains(':'), "{f}: a step's fields are split at ':'");
            format!("named:{module}:{f}:{n}")
        })
        .collect()
}

/// The escapes a page marks in a name as the terminal shows it (`\u{..}`,
/// `\n`, `\t`, `\xff`), in order.
pub fn escapes_in(shown: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = shown;
    while let Some(i) = rest.find('\\') {
        let tail = &rest[i..];
        let n = match tail.as_bytes().get(1) {
            Some(b'u') => tail.find('}').map_or(2, |e| e + 1),
            Some(b'x') => 4,
            _ => 2,
        };
        out.push(tail[..n].to_string());
        rest = &tail[n..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_literal_escapes_only_quotes_and_backslashes() {
        assert_eq!(literal(b"a\"b\\c\n\xff"), b"\"a\\\"b\\\\c\n\xff\"".to_vec());
        assert_eq!(literal(b""), b"\"\"".to_vec());
    }
}
