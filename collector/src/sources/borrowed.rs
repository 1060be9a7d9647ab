//! IGC's dumps of another process of the job: a rank other than 0 dumps
//! nothing (the interposer's rule, `dumps_by` in its record), and its
//! kernel takes rank 0's dump of it when its module binary is byte for
//! byte rank 0's binary of the same module (the same SPIR-V, built into
//! the same code: the same ISA). A rank whose binary differs (another
//! build, device or driver) has no dump to borrow; its kernels' ISA comes
//! from its own module binary.

use super::dumps::DumpFolder;
use super::{IsaSource, IsaSourceKind, Lookup, Status};
use std::collections::HashMap;
use xpu_asm_record::read::{Module, ProcessRecord};

/// The dumping processes' modules, by (module SHA-256, binary SHA-256).
#[derive(Default)]
pub struct Borrowed<'a> {
    by_code: HashMap<(String, String), (&'a ProcessRecord, &'a DumpFolder, &'a Module)>,
}

/// A module's key here: its input and the code the driver made of it.
fn key(m: &Module) -> Option<(String, String)> {
    let b = m.binary.as_ref()?;
    (!m.sha256.is_empty() && !b.sha256.is_empty())
        .then(|| (m.sha256.to_ascii_lowercase(), b.sha256.to_ascii_lowercase()))
}

impl<'a> Borrowed<'a> {
    /// The modules of the processes that dumped (`isa_binary` unset),
    /// first process first; none when no process borrows.
    pub fn of(procs: impl Iterator<Item = (&'a ProcessRecord, &'a DumpFolder)> + Clone) -> Self {
        let mut b = Borrowed::default();
        if !procs.clone().any(|(r, _)| r.dumps_by.is_some()) {
            return b;
        }
        for (rec, folder) in procs.filter(|(r, _)| !r.isa_binary) {
            for m in rec.modules.values() {
                if let Some(k) = key(m) {
                    b.by_code.entry(k).or_insert((rec, folder, m));
                }
            }
        }
        b
    }
}

impl IsaSource for Borrowed<'_> {
    fn kind(&self) -> IsaSourceKind {
        IsaSourceKind::IgcDump
    }

    fn find<'s>(&'s self, rec: &ProcessRecord, module: &Module, name: &[u8]) -> Lookup<'s> {
        let Some(by) = rec.dumps_by else {
            return Lookup::Missing(Status::NoAsm, "it dumped itself".into());
        };
        match key(module).and_then(|k| self.by_code.get(&k)) {
            Some((owner, folder, m)) => folder.find(owner, m, name),
            None => Lookup::Missing(
                Status::NoAsm,
                format!(
                    "this process left its dumps to rank {by}, which has no build of this module with the same code (another build, device or driver, or rank {by} never built it)"
                ),
            ),
        }
    }
}
