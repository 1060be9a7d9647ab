//! Builds capture folders for tests: records written in the real record
//! format (with `xpu_asm_record`'s own helpers) and dump folders made of the
//! real IGC files under tests/data or of synthetic ones.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use xpu_asm_collector::collect::{collect, Options};
use xpu_asm_collector::report::Report;
use xpu_asm_record as rec;

pub fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// SHA-256 (hex) of a file under tests/data.
pub fn data_sha(rel: &str) -> String {
    xpu_asm_collector::sources::dumps::sha256_file(&data_dir().join(rel))
        .expect("test data present")
}

/// Module A (vector_add, vector_add_scaled), B (vector_add, light) and C
/// (heavy) of tests/data/pvc.
pub fn sha_a() -> String {
    data_sha("pvc/OCL_asm6f30f910931b48ea.spv")
}
pub fn sha_b() -> String {
    data_sha("pvc/OCL_asm0ffa4fea61191b0a.spv")
}
pub fn sha_c() -> String {
    data_sha("pvc/OCL_asm16db3a16823c3d45.spv")
}

pub struct Module {
    pub id: u32,
    pub format: &'static str,
    pub sha256: String,
    pub build_flags: &'static str,
    /// The module's `"binary"` object, as JSON (`None`: a record from
    /// before module binaries).
    pub binary: Option<String>,
    /// The id of its device event (`device` of [`Process`]).
    pub device: Option<u32>,
    /// Its `"built_binary"` object, as JSON (`None`: the driver ran the
    /// binary passed, or a record from before built binaries).
    pub built_binary: Option<String>,
}

impl Module {
    pub fn spirv(id: u32, sha256: String) -> Self {
        Module {
            id,
            format: "spirv",
            sha256,
            build_flags: "",
            binary: None,
            device: None,
            built_binary: None,
        }
    }

    /// A native module whose binary is `bytes`, saved in the capture `out`
    /// as the interposer saves it, built for device 1 (the emulated PVC).
    pub fn native_saved(id: u32, out: &Path, bytes: &[u8]) -> Self {
        let (sha, binary) = saved_binary(out, bytes);
        Module {
            id,
            format: "native",
            sha256: sha,
            build_flags: "",
            binary: Some(binary),
            device: Some(1),
            built_binary: None,
        }
    }

    /// [`Module::native_saved`] of `passed`, which the driver did not run as
    /// passed: it built `built` instead (saved too, as `built_binary`).
    pub fn native_rebuilt(id: u32, out: &Path, passed: &[u8], built: &[u8]) -> Self {
        Module {
            built_binary: Some(saved_binary(out, built).1),
            ..Module::native_saved(id, out, passed)
        }
    }
}

/// Saves `bytes` in the capture `out` as the interposer saves a module's
/// binary; returns its SHA-256 and the record's object for it.
pub fn saved_binary(out: &Path, bytes: &[u8]) -> (String, String) {
    let sha = sha256_hex(bytes);
    let dir = out.join(rec::MODULES_DIR);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(rec::module_file_name(&sha)), bytes).unwrap();
    let object = format!(
        r#"{{"size":{},"sha256":"{sha}","file":"modules/{sha}.bin"}}"#,
        bytes.len()
    );
    (sha, object)
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    rec::hex(&sha2::Sha256::digest(bytes))
}

pub struct Kernel {
    pub id: u32,
    pub module: u32,
    pub name: Vec<u8>,
    pub launches: u64,
    pub appended: u64,
}

pub fn record_kernel(id: u32, module: u32, name: &[u8], launches: u64) -> Kernel {
    Kernel {
        id,
        module,
        name: name.to_vec(),
        launches,
        appended: launches,
    }
}

pub struct Process {
    pub host: String,
    pub pid: u32,
    /// (name, value, set by the user)
    pub env: Vec<(&'static str, &'static str, bool)>,
    pub modules: Vec<Module>,
    pub kernels: Vec<Kernel>,
    pub unknown_launches: u64,
    pub exit: Option<i32>,
    /// None: the default `dumps/<host>-<pid>`
    pub dump_dir: Option<String>,
}

impl Process {
    pub fn new(pid: u32) -> Self {
        Process {
            host: "h".into(),
            pid,
            env: vec![("IGC_ShaderDumpEnable", "1", false)],
            modules: vec![],
            kernels: vec![],
            unknown_launches: 0,
            exit: Some(0),
            dump_dir: None,
        }
    }

    pub fn dump_dir(&self) -> String {
        self.dump_dir
            .clone()
            .unwrap_or_else(|| rec::dump_dir_name(&self.host, self.pid))
    }

    /// Writes `records/<host>-<pid>.events` and `.counts` under `out`.
    pub fn write(&self, out: &Path) {
        let records = out.join(rec::RECORDS_DIR);
        std::fs::create_dir_all(&records).unwrap();
        let mut ev: Vec<u8> = Vec::new();
        let env: Vec<String> = self
            .env
            .iter()
            .map(|(n, v, user)| {
                format!(
                    r#""{n}":{{"value":"{v}","set_by":"{}"}}"#,
                    if *user { "user" } else { "xpu-asm" }
                )
            })
            .collect();
        ev.extend_from_slice(
            format!(
                r#"{{"record":"xpu-asm","version":{},"type":"process","pid":{},"ppid":1,"host":"{}","exe":"/bin/test","dump_dir":"#,
                rec::VERSION,
                self.pid,
                self.host
            )
            .as_bytes(),
        );
        rec::push_json_str(&mut ev, &self.dump_dir());
        ev.extend_from_slice(format!(r#","env":{{{}}}}}"#, env.join(",")).as_bytes());
        ev.push(b'\n');
        if self.modules.iter().any(|m| m.device.is_some()) {
            ev.extend_from_slice(
                br#"{"type":"device","id":1,"vendor_id":32902,"device_id":3029,"name":"Intel(R) Graphics [0x0bd5]","ip_version":null}"#,
            );
            ev.push(b'\n');
        }
        for m in &self.modules {
            let mut extra = String::new();
            if let Some(d) = m.device {
                extra.push_str(&format!(r#","device":{d}"#));
            }
            if let Some(b) = &m.binary {
                extra.push_str(&format!(r#","binary":{b}"#));
            }
            if let Some(b) = &m.built_binary {
                extra.push_str(&format!(r#","built_binary":{b}"#));
            }
            ev.extend_from_slice(
                format!(
                    r#"{{"type":"module","id":{},"format":"{}","size":1,"sha256":"{}","build_flags":"{}","kernel_names":[]{extra}}}"#,
                    m.id, m.format, m.sha256, m.build_flags
                )
                .as_bytes(),
            );
            ev.push(b'\n');
        }
        for k in &self.kernels {
            ev.extend_from_slice(
                format!(r#"{{"type":"kernel","id":{},"module":{},"#, k.id, k.module).as_bytes(),
            );
            rec::push_json_bytes_field(&mut ev, "name", &k.name);
            ev.extend_from_slice(b"}\n");
        }
        if let Some(code) = self.exit {
            ev.extend_from_slice(format!(r#"{{"type":"exit","code":{code}}}"#).as_bytes());
            ev.push(b'\n');
        }
        std::fs::write(
            records.join(rec::events_file_name(&self.host, self.pid)),
            ev,
        )
        .unwrap();
        let max = self.kernels.iter().map(|k| k.id).max().unwrap_or(0);
        let mut counts = rec::counts_header().to_vec();
        for id in 0..=max {
            let (l, a) = if id == 0 {
                (self.unknown_launches, self.unknown_launches)
            } else {
                self.kernels
                    .iter()
                    .find(|k| k.id == id)
                    .map_or((0, 0), |k| (k.launches, k.appended))
            };
            counts.extend_from_slice(&rec::encode_slot(l, a));
        }
        std::fs::write(
            records.join(rec::counts_file_name(&self.host, self.pid)),
            counts,
        )
        .unwrap();
    }
}

/// Copies the files of tests/data/<which> into `out/<dump_dir>`.
pub fn copy_dumps(which: &str, out: &Path, dump_dir: &str) {
    let dest = out.join(dump_dir);
    std::fs::create_dir_all(&dest).unwrap();
    for e in std::fs::read_dir(data_dir().join(which)).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dest.join(e.file_name())).unwrap();
    }
}

/// A minimal `run.json`.
pub fn write_run_json(out: &Path, exit: &str) {
    std::fs::write(
        out.join("run.json"),
        format!(
            r#"{{"schema":1,"command":["./app","--x"],"cwd":"/w","interposer":"/i.so","emulate":null,"state":"ended","pid":100,"exit":{exit},"error":null,"started_unix":1,"ended_unix":2}}"#
        ),
    )
    .unwrap();
}

/// A capture with process 100 launching kernels of modules A, B and C of
/// tests/data/pvc.
pub fn pvc_capture(out: &Path) -> Process {
    let mut p = Process::new(100);
    p.modules = vec![
        Module::spirv(1, sha_a()),
        Module::spirv(2, sha_b()),
        Module::spirv(3, sha_c()),
    ];
    p.kernels = vec![
        record_kernel(1, 1, b"vector_add", 1000),
        record_kernel(2, 2, b"vector_add", 10),
        record_kernel(3, 2, b"light", 5),
        record_kernel(4, 3, b"heavy", 100),
    ];
    p.write(out);
    copy_dumps("pvc", out, &p.dump_dir());
    write_run_json(out, r#"{"code":0}"#);
    p
}

pub fn report_json(out: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap()
}

/// `collect` of `out` with the default options, which must succeed.
pub fn collect_defaults(out: &Path) -> Report {
    collect(out, &Options::default()).expect("collect succeeds")
}
