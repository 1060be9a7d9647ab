//! xpu-asm's collector: runs a command under the interposer ([`run`]) and
//! then matches every kernel the command launched to its GPU ISA
//! ([`collect`]). Each stage is a module, and imports run one way, from
//! the commands down to the record format:
//!
//! * [`commands`]: the command line and each command, one file each
//!   (`run`, `collect`, `merge`, `show`, `diff`);
//! * [`run`]: running a command (`xpu-asm-run -- cmd`): the launch, a job
//!   of many ranks, the launcher-inside form;
//! * [`collect`]: the pipeline of a collection: what was recorded, the
//!   sources of ISA, matching, the report;
//! * [`prune`]: the dump folders pruned to what `--keep` keeps, after
//!   matching, and `collect.json`;
//! * [`report`]: the report's model, its entries, the files a collection
//!   writes, and its exporters (the terminal table, JSON, the page);
//! * [`analysis`]: each launched kernel's code analysed (control flow,
//!   loops, liveness, pressure), between matching and the report;
//! * [`matching`]: each launched kernel tied to its ISA file;
//! * [`sources`]: the sources of ISA: IGC's dump folders and the module
//!   binaries, read by the `xpu-asm-isa` crate (native formats, IGA, ISA
//!   text: headers, source lines, instruction mix);
//! * [`kernel_isa`]: a kernel's ISA as found (its `.asm` file, where the
//!   text comes from, why a kernel has none), which the sources make and
//!   the stages above read;
//! * [`capture`]: the capture folder: its layout, its files (`run.json`,
//!   the job's files, `collect.json`), the records;
//! * [`names`]: kernel names demangled, shortened and made safe for files.

pub mod analysis;
pub mod apart;
pub mod capture;
pub mod collect;
pub mod commands;
pub mod kernel_isa;
pub mod matching;
pub mod names;
pub mod port;
pub mod prune;
pub mod report;
pub mod run;
pub mod shown;
pub mod sources;
