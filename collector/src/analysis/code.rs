//! Per kernel, from its code: the control flow, loops and register
//! pressure of each listed launched kernel ([`super::flow`]), read
//! from the module binary the driver ran (saved under `modules/` for every
//! module), whichever source its ISA text came from: a kernel whose ISA is
//! IGC's dump is analysed from the same binary, so both sources give the
//! same figures.
//!
//! IGA decodes the kernel's code (its operands: through IGA's KernelView
//! API, [`xpu_asm_isa::native::kv`], else from IGA's JSON of the code,
//! [`xpu_asm_isa::igajson`], which give the same), and
//! [`super::live`] computes which registers are live; each
//! instruction is classified from the ISA text shown for the kernel (its
//! instructions mapped to IGA's by position, which also brings the source
//! lines of a `-g` build), or from IGA's own text when the two do not line
//! up. When no analysis can be made, the kernel keeps everything else and
//! `flow_reason` says why.

// IGA's errors carry its messages; they are rare and off the hot path.
#![allow(clippy::result_large_err)]

use super::flow::{self, Flow, Inputs, SourceRef};
use crate::matching::KernelMatch;
use crate::sources::binaries::{read_and_parse, request, BinaryKey, Parsed, Request};
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use xpu_asm_isa::decoded::Code;
use xpu_asm_isa::fast::FastMap;
use xpu_asm_isa::header::AsmHeader;
use xpu_asm_isa::igajson;
use xpu_asm_isa::line::{lines, Line};
use xpu_asm_isa::mix::{classify, Class, Classifier};
use xpu_asm_isa::native::iga::{Iga, IgaError};
use xpu_asm_isa::native::{NativeKernel, Platform, Program};
use xpu_asm_record::read::{Api, ProcessRecord};

/// Set (to anything but empty or `0`): no kernel's code is analysed (each
/// gets a `flow_reason` saying so); for timing, or when no analysis is
/// wanted.
pub const NO_FLOW_ENV: &str = "XPU_ASM_NO_FLOW";

/// Kernels of more code than this many bytes (default
/// [`DEFAULT_MAX_CODE_BYTES`]) are not analysed.
pub const MAX_CODE_ENV: &str = "XPU_ASM_FLOW_MAX_BYTES";
pub const DEFAULT_MAX_CODE_BYTES: usize = 1 << 20;

/// Set to `iga`: live registers from IGA's own dataflow (`-Xprint-defs`)
/// instead of xpu-asm's analysis of the operands: to compare the two. IGA's
/// dataflow follows one path per use and grows faster than the code (with
/// IGC 1's IGA about 1.7 s for 1,338 instructions, 16 KiB).
pub const LIVENESS_ENV: &str = "XPU_ASM_LIVENESS";

/// How each code's operands are read: unset, through IGA's KernelView API
/// and, where that cannot be (an IGA without it, a code it cannot decode),
/// from IGA's JSON of the code; `kv`: through the KernelView API only (a
/// code it cannot decode gets a `flow_reason`); `json`: from IGA's JSON
/// only (its formatter's output, parsed: the same figures, in about three
/// times the time). To compare the two. IGA's dataflow ([`LIVENESS_ENV`])
/// comes with its JSON only.
pub const DECODER_ENV: &str = "XPU_ASM_DECODER";

/// IGA's decoding of each distinct kernel code (by platform and SHA-256
/// of the code), made once however many kernels have that code (the same
/// module in many processes, ranks or builds).
struct CodeCache {
    codes: Mutex<HashMap<CodeKey, Arc<CodeCell>>>,
    /// IGA's dataflow asked for ([`LIVENESS_ENV`]): its JSON.
    dataflow: bool,
    /// [`DECODER_ENV`]'s value.
    decoder: String,
}

/// A code: its platform's `iga_gen` and its SHA-256.
type CodeKey = (u32, [u8; 32]);

/// One code decoded, by the first kernel that needs it (or why it cannot
/// be).
type CodeCell = OnceLock<Result<Arc<Code>, String>>;

impl CodeCache {
    fn code(&self, iga: &Iga, platform: &Platform, code: &[u8]) -> Result<Arc<Code>, String> {
        let key = (platform.iga_gen, Sha256::digest(code).into());
        let cell = {
            let mut map = self.codes.lock().unwrap_or_else(|e| e.into_inner());
            Arc::clone(map.entry(key).or_default())
        };
        cell.get_or_init(|| self.decode(iga, platform, code).map(Arc::new))
            .clone()
    }

    /// `code` through IGA's KernelView API, else from IGA's JSON of it
    /// (whose failure is the one named: the two decode the same code), as
    /// [`DECODER_ENV`] says.
    fn decode(&self, iga: &Iga, platform: &Platform, code: &[u8]) -> Result<Code, String> {
        if !matches!(self.decoder.as_str(), "" | "kv" | "json") {
            return Err(format!(
                "not analysed: {DECODER_ENV} is {:?}; set it to kv or json, or unset it",
                self.decoder
            ));
        }
        if !self.dataflow && self.decoder != "json" {
            match iga.decode(platform, code) {
                Ok(code) => return Ok(code),
                Err(e) if self.decoder == "kv" => {
                    return Err(format!("no analysis of its code ({DECODER_ENV}=kv): {e}"))
                }
                Err(_) => {}
            }
        }
        read_json(iga.disassemble_json(platform, code, self.dataflow))
    }

    /// Forgets every code seen.
    fn clear(&self) {
        self.codes.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

/// IGA's JSON (or its error), read.
fn read_json(json: Result<String, IgaError>) -> Result<Code, String> {
    let json = json.map_err(|e| format!("IGA gave no JSON of its code: {e}"))?;
    igajson::parse(&json).map_err(|e| format!("no analysis of its code: {e}"))
}

/// A kernel's analysis, or why there is none.
pub type Outcome = Result<Flow, String>;

/// A kernel's module binary: its key and saved file, or why there is none.
type Wanted = Result<(BinaryKey, String), String>;

/// The analysis of each kernel `order` lists (indices into `launched`),
/// in that order; `None` when told to stop.
pub fn read_flows(
    dir: &Path,
    recs: &[ProcessRecord],
    launched: &[KernelMatch],
    order: &[usize],
    stop: &(dyn Fn() -> bool + Sync),
) -> Vec<Option<Outcome>> {
    if no_flow() {
        let why = format!("not analysed: {NO_FLOW_ENV} is set");
        return order.iter().map(|_| Some(Err(why.clone()))).collect();
    }
    let keys = binary_keys(recs);
    let no_binary: Wanted = Err("no process recorded its module's binary".into());
    let wanted: Vec<&Wanted> = order
        .iter()
        .map(|&i| {
            let k = &launched[i];
            keys.get(&(k.name.as_slice(), k.module_sha256.as_deref(), k.api))
                .unwrap_or(&no_binary)
        })
        .collect();
    let mut files: BTreeMap<&BinaryKey, &str> = BTreeMap::new();
    for (k, f) in wanted.iter().filter_map(|w| w.as_ref().ok()) {
        files.insert(k, f);
    }
    let files: Vec<(&BinaryKey, &str)> = files.into_iter().collect();
    let parsed: HashMap<&BinaryKey, Parsed> = files
        .par_iter()
        .map(|(k, f)| (*k, read_and_parse(dir, k, f)))
        .collect();
    let iga = igas();
    let jobs: Vec<(usize, &Wanted)> = order.iter().copied().zip(wanted).collect();
    let flows = jobs
        .par_iter()
        .map(|&(i, w)| {
            if stop() {
                return None;
            }
            let k = &launched[i];
            Some(w.as_ref().map_err(Clone::clone).and_then(|(key, _)| {
                let program = parsed[key].as_ref().map_err(|(_, why)| why.clone())?;
                analyse(k, program, iga)
            }))
        })
        .collect();
    // The figures are made: the codes are not needed again.
    iga.cache.clear();
    flows
}

/// Whether [`NO_FLOW_ENV`] asks for no analysis.
fn no_flow() -> bool {
    std::env::var_os(NO_FLOW_ENV).is_some_and(|v| !v.is_empty() && v != "0")
}

/// IGA and its decoding of the codes seen, one for the process: [`warm_up`]
/// fills it while the command runs, [`read_flows`] reads (and empties) it.
fn igas() -> &'static Igas {
    static IGAS: OnceLock<Igas> = OnceLock::new();
    IGAS.get_or_init(|| Igas {
        iga: OnceLock::new(),
        cache: CodeCache {
            codes: Mutex::default(),
            dataflow: std::env::var(LIVENESS_ENV).is_ok_and(|v| v == "iga"),
            decoder: std::env::var(DECODER_ENV).unwrap_or_default(),
        },
        max_code: std::env::var(MAX_CODE_ENV)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(DEFAULT_MAX_CODE_BYTES),
    })
}

/// The analysis begun while the command runs ([`warm_up`]).
pub struct WarmUp {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl WarmUp {
    /// Stops it (after the code it is at) and waits for it: what it made
    /// is there for [`read_flows`].
    pub fn finish(self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.thread.join();
    }
}

/// While the command runs, IGA's decoding of the code of each kernel its
/// processes create (as their records in `dir` name them, from the module
/// binaries saved there), at the lowest CPU priority, so that collecting
/// after the command finds it made: the analysis of a large kernel (tens
/// of milliseconds) then overlaps the run instead of following it. `None`
/// when no analysis is wanted or no thread could start.
pub fn warm_up(dir: &Path) -> Option<WarmUp> {
    if no_flow() {
        return None;
    }
    let dir = dir.to_path_buf();
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = Arc::clone(&stop);
    let thread = std::thread::Builder::new()
        .name("xpu-asm-warm-up".into())
        .spawn(move || {
            // SAFETY: setpriority on this thread's own id has no other
            // precondition; a failure leaves the priority as it was. The
            // thread's id by the system call: glibc has `gettid` only since
            // 2.30, and the release binary runs on 2.28.
            unsafe {
                let tid = libc::syscall(libc::SYS_gettid);
                libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, 19);
            }
            let mut seen = Seen::default();
            let start = std::time::Instant::now();
            while !stopped.load(Ordering::Relaxed) {
                warm_once(&dir, &mut seen, &stopped);
                // Every 50 ms at first; a long run is looked at less often
                // (a tenth of the time it has run, up to a second).
                let pause = (start.elapsed() / 10).clamp(
                    std::time::Duration::from_millis(50),
                    std::time::Duration::from_secs(1),
                );
                let until = std::time::Instant::now() + pause;
                while !stopped.load(Ordering::Relaxed) && std::time::Instant::now() < until {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
            }
        })
        .ok()?;
    Some(WarmUp { stop, thread })
}

/// What [`warm_once`] has done: the kernels analysed (module SHA-256,
/// name) and the module binaries read.
#[derive(Default)]
struct Seen {
    kernels: HashSet<(String, Vec<u8>)>,
    binaries: BTreeMap<BinaryKey, Program>,
}

/// One look at the records: IGA's decoding of each kernel not yet seen.
fn warm_once(dir: &Path, seen: &mut Seen, stop: &AtomicBool) {
    let Ok(recs) = xpu_asm_record::read::read_dir(&dir.join(xpu_asm_record::RECORDS_DIR)) else {
        return;
    };
    let igas = igas();
    for rec in &recs {
        for k in rec.kernels.values() {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            let Some(module) = rec.modules.get(&k.module) else {
                continue;
            };
            let id = (module.sha256.clone(), k.name.clone());
            if seen.kernels.contains(&id) {
                continue;
            }
            let Ok(Request {
                key,
                file: Some(file),
                ..
            }) = request(rec, module, &k.name)
            else {
                continue;
            };
            if !seen.binaries.contains_key(&key) {
                // A binary not yet whole is read again at the next look.
                let Ok(program) = read_and_parse(dir, &key, &file) else {
                    continue;
                };
                seen.binaries.insert(key.clone(), program);
            }
            seen.kernels.insert(id);
            // What it makes waits in the cache, and so does why it could
            // not (the collection says it again).
            let _ = kernel_code(&seen.binaries[&key], &k.name, igas);
        }
    }
}

/// A kernel by name and module SHA-256, borrowed from the records.
type KernelKey<'a> = (&'a [u8], Option<&'a str>, Api);

/// (kernel name, module SHA-256) -> its module's binary, from the first
/// process that launched it with one saved (or why none has).
fn binary_keys(recs: &[ProcessRecord]) -> FastMap<KernelKey<'_>, Wanted> {
    let mut out: FastMap<KernelKey, Wanted> = FastMap::default();
    for rec in recs {
        for k in rec.kernels.values() {
            if k.launches == 0 && k.appended == 0 {
                continue;
            }
            let Some(module) = rec.modules.get(&k.module) else {
                continue;
            };
            let key = (k.name.as_slice(), Some(module.sha256.as_str()), module.api);
            if out.get(&key).is_some_and(|r| r.is_ok()) {
                continue;
            }
            let r = match request(rec, module, &k.name) {
                Ok(r) => match r.file {
                    Some(f) => Ok((r.key, f)),
                    None => Err("its module's binary was not saved at run time".to_string()),
                },
                Err(crate::sources::Lookup::Missing(_, why)) => Err(why),
                Err(_) => Err("no module binary is recorded for it".to_string()),
            };
            out.insert(key, r);
        }
    }
    out
}

/// IGA, loaded on first need, with its decoding of the codes seen.
struct Igas {
    iga: OnceLock<Result<Iga, String>>,
    cache: CodeCache,
    max_code: usize,
}

/// The analysis of kernel `k` from its module's binary `program`.
fn analyse(k: &KernelMatch, program: &Program, igas: &Igas) -> Outcome {
    let (kernel, platform, iga, code) = kernel_code(program, &k.name, igas)?;
    let text = || iga.disassemble(platform, &kernel.code);
    from_code((*code).clone(), text, k, kernel, platform)
}

/// Kernel `name` of `program`, its platform, IGA and IGA's decoding of
/// its code (made once per distinct code), or why there is none.
#[allow(clippy::type_complexity)]
fn kernel_code<'a>(
    program: &'a Program,
    name: &[u8],
    igas: &'a Igas,
) -> Result<(&'a NativeKernel, &'a Platform, &'a Iga, Arc<Code>), String> {
    let kernel = program.kernel(name).ok_or_else(|| {
        format!(
            "its module's binary ({}) has no kernel of this name",
            program.format
        )
    })?;
    let platform = program.platform.as_ref().ok_or_else(|| {
        "its module's binary does not say which GPU it is for; IGA needs the platform".to_string()
    })?;
    if kernel.code.len() > igas.max_code {
        return Err(format!(
            "not analysed: its code is {} bytes, more than {} ({MAX_CODE_ENV})",
            kernel.code.len(),
            igas.max_code
        ));
    }
    let iga = igas
        .iga
        .get_or_init(|| Iga::load().map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| format!("no analysis of its code: {e}"))?;
    let code = igas.cache.code(iga, platform, &kernel.code)?;
    Ok((kernel, platform, iga, code))
}

/// The analysis from IGA's JSON (or its error), with the ISA text shown for
/// `k` (else IGA's text, from `iga_text`) for the instructions' classes.
pub fn from_json(
    json: Result<String, IgaError>,
    iga_text: impl FnOnce() -> Result<String, IgaError>,
    k: &KernelMatch,
    kernel: &NativeKernel,
    platform: &Platform,
) -> Outcome {
    from_code(read_json(json)?, iga_text, k, kernel, platform)
}

/// [`from_json`] of the JSON read.
fn from_code(
    mut code: Code,
    iga_text: impl FnOnce() -> Result<String, IgaError>,
    k: &KernelMatch,
    kernel: &NativeKernel,
    platform: &Platform,
) -> Outcome {
    let n = code.insts.len();
    let shown = k
        .chosen_file()
        .and_then(|f| std::fs::read_to_string(&f.path).ok())
        .map(|t| instructions(&t, true));
    let (mut classes, source_lines) = match shown {
        Some((classes, lines)) if classes.len() == n => (classes, lines),
        _ => {
            let t = iga_text().map_err(|e| format!("IGA gave no text of its code: {e}"))?;
            let (classes, _) = instructions(&t, false);
            if classes.len() != n {
                return Err(format!(
                    "IGA's decoding has {n} instructions and its text {}: they cannot be matched",
                    classes.len()
                ));
            }
            (classes, None)
        }
    };
    infer_spills(&mut classes, k.header(), kernel);
    let inputs = Inputs {
        classes: &classes,
        lines: source_lines.as_deref(),
        grf_bytes: platform.grf_bytes(),
        budget: k.header().and_then(|h| h.grf).or(kernel.grf),
    };
    Ok(flow::analyze(&mut code, &inputs))
}

/// Each instruction's class in ISA text, and (`with_lines`, when it has
/// line information: IGC's dump of a `-g` build, or the disassembly of a
/// binary with DWARF line tables) its source line.
#[allow(clippy::type_complexity)]
fn instructions(text: &str, with_lines: bool) -> (Vec<Class>, Option<Vec<Option<SourceRef>>>) {
    let mut classes = Vec::new();
    let mut refs = Vec::new();
    let mut file = String::new();
    let mut line: Option<u32> = None;
    let mut seen = false;
    for l in lines(text) {
        match l {
            Line::File(f) => {
                seen = true;
                file = f.to_string();
            }
            Line::Source { line: n, .. } => {
                seen = true;
                line = Some(n);
            }
            Line::Instruction(i) => {
                classes.push(classify(i));
                refs.push(line.map(|line| SourceRef {
                    file: file.clone(),
                    line,
                }));
            }
            _ => {}
        }
    }
    (classes, (with_lines && seen).then_some(refs))
}

/// A kernel that spills and has no private memory: its scratch traffic is
/// spills and fills, whether or not the text annotates them (IGC's dumps
/// do, IGA's text does not), so that both sources count alike.
fn infer_spills(classes: &mut [Class], header: Option<&AsmHeader>, kernel: &NativeKernel) {
    // The binary's figures first: the same whichever text is shown.
    let spills = kernel.spill_bytes.or(header.and_then(|h| h.spill_bytes));
    let private = kernel
        .private_memory_bytes
        .or(header.and_then(|h| h.private_memory_bytes));
    let classifier = Classifier::new(spills, private);
    for c in classes {
        *c = classifier.adjust(*c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel_isa::Status;

    fn kernel_match() -> KernelMatch {
        KernelMatch {
            name: b"k".to_vec(),
            module_sha256: Some("ab".into()),
            api: Api::LevelZero,
            counts_incomplete: false,
            launches: 3,
            appended: 0,
            pids: vec![1],
            status: Status::Matched,
            reason: None,
            candidates: Vec::new(),
            processes: Vec::new(),
            same_files: Vec::new(),
            chosen: None,
            choice: None,
        }
    }

    fn platform() -> Platform {
        Platform {
            iga_gen: (1 << 24) | 4, // IGA_XE_HPC: PVC
            name: "PVC".into(),
        }
    }

    /// IGA refusing the JSON option, or JSON that does not parse or has no
    /// instructions: a reason, and the entry keeps everything else. (The
    /// real IGA cannot be made to fail so: these texts stand in for it.)
    #[test]
    fn no_usable_json_gives_a_reason_and_leaves_the_rest() {
        let k = kernel_match();
        let nk = NativeKernel::default();
        let p = platform();
        let no_text = || -> Result<String, IgaError> { panic!("not asked for") };
        let refused = Err(IgaError::Decode {
            status: "IGA_INVALID_ARG".into(),
            messages: "unknown formatting option".into(),
        });
        let why = from_json(refused, no_text, &k, &nk, &p).unwrap_err();
        assert_eq!(
            why,
            "IGA gave no JSON of its code: IGA could not decode the kernel's code (IGA_INVALID_ARG): unknown formatting option"
        );
        let why =
            from_json(Ok("L0000:\n mov (1|M0) r1 r2".into()), no_text, &k, &nk, &p).unwrap_err();
        assert!(
            why.starts_with("no analysis of its code: IGA's JSON does not parse ("),
            "{why}"
        );
        let why =
            from_json(Ok(r#"{"insts":[{"kind":"I"#.into()), no_text, &k, &nk, &p).unwrap_err();
        assert!(why.contains("does not parse"), "{why}");
        let no_insts = r#"{"version":"1.0","platform":"xehpc"}"#;
        let why = from_json(Ok(no_insts.into()), no_text, &k, &nk, &p).unwrap_err();
        assert_eq!(
            why,
            "no analysis of its code: IGA's JSON has neither `insts` nor `elems`"
        );

        let mut entry = crate::report::KernelEntry::from_match(1, &k);
        let before = entry.clone();
        entry.set_flow(Some(Err(why.clone())));
        assert_eq!(entry.flow, None);
        assert_eq!(entry.flow_reason.as_deref(), Some(why.as_str()));
        entry.flow_reason = None;
        assert_eq!(entry, before);
    }

    /// IGA's text stands in for a shown file that does not line up; the
    /// text must have the JSON's instructions.
    #[test]
    fn the_instructions_of_json_and_text_must_match() {
        let k = kernel_match();
        let nk = NativeKernel::default();
        let json = r#"{"version":"1.0","insts":[{"kind":"L","value":"L0000"},
          {"kind":"I","id":0,"op":"add","liveTotals":{"r":130}},
          {"kind":"I","id":1,"op":"send","opts":["EOT"],"liveTotals":{"r":64}}]}"#;
        let text = "L0000:\n  add (1|M0) r1.0<1>:d r1.0<0;1,0>:d 1:w\n(W) send.gtwy (8|M0) null r127 null:0 0x0 0x02000010 {EOT} // wr:1+0, rd:0; end of thread\n";
        let f = from_json(Ok(json.into()), || Ok(text.into()), &k, &nk, &platform()).unwrap();
        assert_eq!(f.live_grf, [3, 1]);
        assert_eq!(
            f.peak.as_ref().map(|p| (p.grf, p.class.as_str())),
            Some((3, "alu"))
        );
        let short = "L0000:\n  add (1|M0) r1.0<1>:d r1.0<0;1,0>:d 1:w\n";
        let why =
            from_json(Ok(json.into()), || Ok(short.into()), &k, &nk, &platform()).unwrap_err();
        assert_eq!(
            why,
            "IGA's decoding has 2 instructions and its text 1: they cannot be matched"
        );
    }
}
