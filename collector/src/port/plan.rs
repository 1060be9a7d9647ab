//! What to compile for another product: every module a launched kernel
//! came from, with all it was built from (its SPIR-V, build flags,
//! specialization constants), the kernels to create in it and their
//! launches; and the kernels that cannot be ported, each with why.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use xpu_asm_record::read::{Api, Module, ProcessRecord};
use xpu_asm_record::shapes::ShapeKey;

/// One module to compile: what the program built it from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct PlanModule {
    /// What makes it this module: [`module_key`].
    pub key: String,
    /// `level_zero` or `opencl`.
    pub api: String,
    /// `spirv`, or `native`: a Level Zero module created from a binary,
    /// created from it again (the product's driver takes the member of a
    /// fat binary for it, or compiles the SPIR-V the binary carries, or
    /// refuses it, as for the program).
    #[serde(default = "spirv_format")]
    pub format: String,
    /// Its SPIR-V, saved under `port/spirv/<sha256>.spv`; a native
    /// module's binary, under `modules/`.
    pub spirv: PathBuf,
    pub sha256: String,
    pub build_flags: String,
    /// SpecId and the bytes of its value, as hex.
    pub spec_constants: Vec<(u32, String)>,
    /// The launched kernels, created in it so that the record has them:
    /// each name's exact bytes (any bytes, as the program gave them; hex
    /// in the plan's JSON).
    #[serde(with = "hex_names")]
    pub kernels: Vec<Vec<u8>>,
    /// A module built from several SPIR-V inputs
    /// (`ze_module_program_exp_desc_t`): the inputs after the first (the
    /// first is `spirv`, `build_flags` and `spec_constants` above).
    #[serde(default)]
    pub more_inputs: Vec<PlanInput>,
    /// With several inputs: the descriptor's own build flags, as the
    /// program passed them (`None`: NULL).
    #[serde(default)]
    pub program_build_flags: Option<String>,
}

/// One more SPIR-V input of a module built from several.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct PlanInput {
    /// Saved under `port/spirv/<sha256>.spv`.
    pub spirv: PathBuf,
    pub sha256: String,
    pub build_flags: String,
    /// SpecId and the bytes of its value, as hex.
    pub spec_constants: Vec<(u32, String)>,
}

/// Constants as Level Zero takes them: each value in the low bytes of a
/// `u64`.
pub fn ze_constants(spec_constants: &[(u32, String)]) -> Vec<(u32, u64)> {
    spec_constants
        .iter()
        .map(|(id, hex)| {
            let mut b = [0u8; 8];
            let v = xpu_asm_record::unhex(hex).unwrap_or_default();
            let n = v.len().min(8);
            b[..n].copy_from_slice(&v[..n]);
            (*id, u64::from_le_bytes(b))
        })
        .collect()
}

impl PlanModule {
    /// The constants as OpenCL takes them: each value's bytes.
    pub fn constant_bytes(&self) -> Vec<(u32, Vec<u8>)> {
        self.spec_constants
            .iter()
            .map(|(id, hex)| (*id, xpu_asm_record::unhex(hex).unwrap_or_default()))
            .collect()
    }

    /// The constants as Level Zero takes them: each value in the low
    /// bytes of a `u64`.
    pub fn constants(&self) -> Vec<(u32, u64)> {
        ze_constants(&self.spec_constants)
    }
}

fn spirv_format() -> String {
    "spirv".into()
}

/// The modules one child compiles.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Plan {
    pub modules: Vec<PlanModule>,
}

/// A launched kernel, by its module's key and its name.
pub type KernelKey = (String, Vec<u8>);

/// A launched kernel of the run as its report entry is told apart: its
/// API (`level_zero`, `opencl`), its module's SHA-256 and its name's bytes.
pub type RunKernel = (String, String, Vec<u8>);

/// Names as hex strings in JSON: a name is any bytes, and a plan's JSON
/// must carry them exactly.
mod hex_names {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(names: &[Vec<u8>], s: S) -> Result<S::Ok, S::Error> {
        let hex: Vec<String> = names.iter().map(|n| xpu_asm_record::hex(n)).collect();
        hex.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Vec<u8>>, D::Error> {
        Vec::<String>::deserialize(d)?
            .iter()
            .map(|h| {
                xpu_asm_record::unhex(h)
                    .ok_or_else(|| serde::de::Error::custom(format!("not hex: {h:?}")))
            })
            .collect()
    }
}

/// Everything to port: the modules, each launched kernel's counts, the
/// kernels that cannot be ported and why.
#[derive(Debug, Default)]
pub struct Ported {
    pub modules: Vec<PlanModule>,
    /// (launches, appended) of each kernel, summed over processes.
    pub counts: BTreeMap<KernelKey, (u64, u64)>,
    /// Each kernel's launch shapes, (launches, appended) of each, summed
    /// over processes: the port's kernels are launched as the run's were.
    pub shapes: BTreeMap<KernelKey, BTreeMap<ShapeKey, (u64, u64)>>,
    /// Each launched kernel that cannot be ported, and why.
    pub not_ported: BTreeMap<RunKernel, String>,
}

impl Ported {
    /// Why the run's kernel `name` of the module of SHA-256 `sha` made
    /// through `api` cannot be ported, if it cannot.
    pub fn why_not(&self, api: &str, sha: Option<&str>, name: &[u8]) -> Option<&String> {
        let key = (api.to_string(), sha?.to_ascii_lowercase(), name.to_vec());
        self.not_ported.get(&key)
    }

    /// The plan's module that holds kernel `name` of the run's module of
    /// SHA-256 `sha` made through `api`.
    pub fn module_of(&self, api: &str, sha: Option<&str>, name: &[u8]) -> Option<&PlanModule> {
        let sha = sha?;
        self.modules.iter().find(|m| {
            m.api == api
                && m.sha256.eq_ignore_ascii_case(sha)
                && m.kernels.iter().any(|k| k == name)
        })
    }
}

/// What makes a module the module it is, for a compile: its API, SPIR-V,
/// build flags and constants (16 hex digits of their SHA-256).
pub fn module_key(api: &str, sha256: &str, flags: &str, constants: &[(u32, String)]) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    h.update(api.as_bytes());
    h.update([0]);
    h.update(sha256.to_ascii_lowercase().as_bytes());
    h.update([0]);
    h.update(flags.as_bytes());
    for (id, v) in constants {
        h.update(format!("\0{id}={v}").as_bytes());
    }
    xpu_asm_record::hex(&h.finalize()[..8])
}

/// The constants of a recorded module as a plan holds them.
pub fn recorded_constants(m: &Module) -> Vec<(u32, String)> {
    m.spec_constants
        .iter()
        .map(|c| (c.id, xpu_asm_record::hex(&c.value)))
        .collect()
}

fn api_name(a: Api) -> &'static str {
    a.as_str()
}

/// The key of a recorded module (of all its inputs, when several).
pub fn key_of(m: &Module) -> String {
    let key = module_key(
        api_name(m.api),
        &m.sha256,
        &m.build_flags,
        &recorded_constants(m),
    );
    let key = match &m.program_build_flags {
        Some(f) if m.inputs.len() > 1 => module_key(&key, "", f, &[]),
        _ => key,
    };
    m.inputs.iter().skip(1).fold(key, |key, i| {
        let constants: Vec<(u32, String)> = i
            .spec_constants
            .iter()
            .map(|c| (c.id, xpu_asm_record::hex(&c.value)))
            .collect();
        module_key(&key, &i.sha256, &i.build_flags, &constants)
    })
}

/// The plan of the capture `dir`'s records: every module with a launched
/// kernel, its SPIR-V found and saved under `spirv_dir`.
pub fn plan(dir: &Path, records: &[ProcessRecord], spirv_dir: &Path) -> Ported {
    let mut out = Ported::default();
    let mut modules: BTreeMap<String, PlanModule> = BTreeMap::new();
    let mut spirv_of: BTreeMap<String, Result<PathBuf, String>> = BTreeMap::new();
    for rec in records {
        for k in rec
            .kernels
            .values()
            .filter(|k| k.launches > 0 || k.appended > 0)
        {
            let Some(m) = rec.modules.get(&k.module) else {
                continue;
            };
            let name = k.name.clone();
            let run_kernel = (
                api_name(m.api).to_string(),
                m.sha256.to_ascii_lowercase(),
                name.clone(),
            );
            if let Some(why) = unportable(m) {
                out.not_ported.insert(run_kernel, why);
                continue;
            }
            let found = spirv_of
                .entry(m.sha256.to_ascii_lowercase())
                .or_insert_with(|| match m.format.as_str() {
                    "native" => native_input(dir, m),
                    _ => save_spirv(dir, rec, m, &m.sha256, spirv_dir),
                });
            let spirv = match found {
                Ok(p) => p.clone(),
                Err(why) => {
                    out.not_ported.insert(run_kernel, why.clone());
                    continue;
                }
            };
            let more_inputs = match more_inputs(dir, rec, m, spirv_dir, &mut spirv_of) {
                Ok(i) => i,
                Err(why) => {
                    out.not_ported.insert(run_kernel, why);
                    continue;
                }
            };
            let key = key_of(m);
            let pm = modules.entry(key.clone()).or_insert_with(|| PlanModule {
                key: key.clone(),
                api: api_name(m.api).to_string(),
                format: m.format.clone(),
                spirv,
                sha256: m.sha256.to_ascii_lowercase(),
                build_flags: m.build_flags.clone(),
                spec_constants: recorded_constants(m),
                kernels: Vec::new(),
                more_inputs,
                program_build_flags: m.program_build_flags.clone(),
            });
            if !pm.kernels.contains(&name) {
                pm.kernels.push(name);
            }
            let c = out.counts.entry((key.clone(), k.name.clone())).or_default();
            c.0 += k.launches;
            c.1 += k.appended;
            let shapes = out.shapes.entry((key, k.name.clone())).or_default();
            for sh in &k.shapes {
                let c = shapes.entry(sh.key).or_default();
                c.0 += sh.launches;
                c.1 += sh.appended;
            }
        }
    }
    out.modules = modules.into_values().collect();
    out
}

/// Why a module cannot be compiled for another product, if it cannot.
fn unportable(m: &Module) -> Option<String> {
    if m.format != "spirv" && m.from.as_deref() == Some("link") {
        return Some(
            "its OpenCL program was made by clLinkProgram, whose binary carries no SPIR-V: \
             there is nothing to compile for another product"
                .to_string(),
        );
    }
    if m.format == "native" && m.api == Api::OpenCl {
        return Some(
            "its OpenCL program's binary carries no SPIR-V: there is nothing to compile for \
             another product"
                .to_string(),
        );
    }
    if m.format != "spirv" && m.format != "native" {
        return Some(format!("its module's format is {}", m.format));
    }
    None
}

/// A module's SPIR-V inputs after the first (none for a module of one),
/// each found and saved as the first is.
fn more_inputs(
    dir: &Path,
    rec: &ProcessRecord,
    m: &Module,
    spirv_dir: &Path,
    spirv_of: &mut BTreeMap<String, Result<PathBuf, String>>,
) -> Result<Vec<PlanInput>, String> {
    let mut out = Vec::new();
    for (n, i) in m.inputs.iter().enumerate().skip(1) {
        let sha = i.sha256.to_ascii_lowercase();
        let found = spirv_of
            .entry(sha.clone())
            .or_insert_with(|| save_spirv(dir, rec, m, &sha, spirv_dir));
        let spirv = found.clone().map_err(|why| {
            format!(
                "input {} of the {} its module was built from: {why}",
                n + 1,
                m.inputs.len()
            )
        })?;
        out.push(PlanInput {
            spirv,
            sha256: sha,
            build_flags: i.build_flags.clone(),
            spec_constants: i
                .spec_constants
                .iter()
                .map(|c| (c.id, xpu_asm_record::hex(&c.value)))
                .collect(),
        });
    }
    Ok(out)
}

/// A native Level Zero module's input: its binary as saved (the bytes
/// the program passed).
fn native_input(dir: &Path, m: &Module) -> Result<PathBuf, String> {
    let file = m
        .binary
        .as_ref()
        .and_then(|b| b.file.as_ref())
        .ok_or("its native binary was not saved in the capture")?;
    let path = dir.join(file);
    match std::fs::read(&path) {
        Ok(b) if sha256(&b).eq_ignore_ascii_case(&m.sha256) => Ok(path),
        Ok(_) => Err(format!(
            "{file} is not the module's binary (its SHA-256 differs)"
        )),
        Err(e) => Err(format!("cannot read {file}: {e}")),
    }
}

/// Finds the module's SPIR-V of SHA-256 `sha` (its one input, or one of
/// its inputs: in its binary, which carries it, under `modules/`, or in
/// IGC's dump folders), checks it and saves it as `spirv_dir/<sha256>.spv`.
fn save_spirv(
    dir: &Path,
    rec: &ProcessRecord,
    m: &Module,
    sha: &str,
    spirv_dir: &Path,
) -> Result<PathBuf, String> {
    let sha = sha.to_ascii_lowercase();
    let dest = spirv_dir.join(format!("{sha}.spv"));
    if std::fs::read(&dest).is_ok_and(|b| sha256(&b) == sha) {
        return Ok(dest);
    }
    let from_binary = m
        .binary
        .as_ref()
        .and_then(|b| b.file.as_ref())
        .and_then(|f| std::fs::read(dir.join(f)).ok())
        .and_then(|b| carried_spirv(&b).filter(|s| sha256(s) == sha));
    // Kept by the interposer where the binary does not carry it (NEO 22.43's
    // Level Zero binaries under --isa binary, which has no dumps).
    let kept = || {
        std::fs::read(
            dir.join(xpu_asm_record::MODULES_DIR)
                .join(format!("{sha}.spv")),
        )
        .ok()
        .filter(|s| sha256(s) == sha)
    };
    let found = from_binary
        .or_else(kept)
        .or_else(|| dumped_spirv(dir, rec, &sha));
    let Some(spirv) = found else {
        return Err(format!(
            "its SPIR-V ({}) is neither in the module's binary, nor under modules/, nor in the dump folders",
            &sha[..sha.len().min(16)]
        ));
    };
    std::fs::create_dir_all(spirv_dir)
        .and_then(|_| std::fs::write(&dest, &spirv))
        .map_err(|e| format!("cannot write {}: {e}", dest.display()))?;
    Ok(dest)
}

fn sha256(b: &[u8]) -> String {
    use sha2::Digest;
    xpu_asm_record::hex(&sha2::Sha256::digest(b))
}

/// A `.spv` of the process's dump folder (or any) with this SHA-256.
fn dumped_spirv(dir: &Path, rec: &ProcessRecord, sha: &str) -> Option<Vec<u8>> {
    let dumps = dir.join(xpu_asm_record::DUMPS_DIR);
    let mut folders: Vec<PathBuf> = Vec::new();
    if !rec.dump_dir.is_empty() {
        folders.push(dir.join(&rec.dump_dir));
    }
    if let Ok(rd) = std::fs::read_dir(&dumps) {
        folders.extend(rd.filter_map(Result::ok).map(|e| e.path()));
    }
    folders.iter().find_map(|f| {
        std::fs::read_dir(f)
            .ok()?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "spv"))
            .find_map(|p| std::fs::read(&p).ok().filter(|b| sha256(b) == sha))
    })
}

/// The section types and names NEO gives the SPIR-V a binary carries.
const SHT_SPIRV: u32 = 0xff00_0009;

/// The SPIR-V an ELF (zebin, NEO's patch-token wrapper) or a member of an
/// `ocloc` fat binary carries.
pub fn carried_spirv(bytes: &[u8]) -> Option<Vec<u8>> {
    use object::read::archive::ArchiveFile;
    if let Ok(ar) = ArchiveFile::parse(bytes) {
        return ar
            .members()
            .filter_map(Result::ok)
            .filter_map(|m| m.data(bytes).ok())
            .find_map(carried_spirv);
    }
    elf_spirv(bytes)
}

fn elf_spirv(bytes: &[u8]) -> Option<Vec<u8>> {
    use object::read::elf::{FileHeader, SectionHeader};
    use object::{elf, Endianness};
    let header = elf::FileHeader64::<Endianness>::parse(bytes).ok()?;
    let endian = header.endian().ok()?;
    let sections = header.sections(endian, bytes).ok()?;
    sections.iter().find_map(|s| {
        let name = sections.section_name(endian, s).unwrap_or_default();
        let is_spirv = s.sh_type(endian) == SHT_SPIRV || name == b".spv" || name == b"SPIRV Object";
        if !is_spirv {
            return None;
        }
        s.data(endian, bytes).ok().map(<[u8]>::to_vec)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_constant_or_a_flag_makes_another_module() {
        let k = |f: &str, c: &[(u32, String)]| module_key("level_zero", "AB", f, c);
        let one = vec![(7u32, "04000000".to_string())];
        assert_eq!(k("-g", &one), module_key("level_zero", "ab", "-g", &one));
        assert_ne!(k("-g", &one), k("", &one));
        assert_ne!(k("-g", &one), k("-g", &[]));
        assert_ne!(k("-g", &one), k("-g", &[(7, "05000000".into())]));
        assert_ne!(k("", &[]), module_key("opencl", "ab", "", &[]));
        let m = PlanModule {
            key: String::new(),
            api: String::new(),
            format: String::new(),
            spirv: PathBuf::new(),
            sha256: String::new(),
            build_flags: String::new(),
            spec_constants: vec![(7, "feffffff".into()), (9, "01".into())],
            kernels: vec![],
            more_inputs: vec![],
            program_build_flags: None,
        };
        assert_eq!(m.constants(), vec![(7, 0xffff_fffe), (9, 1)]);
    }

    #[test]
    fn no_spirv_in_garbage() {
        assert_eq!(carried_spirv(b"not an elf"), None);
    }
}
