//! Support for xpu-asm's integration tests: builds the C workload and its
//! kernels, runs programs under the real interposer against the real Level
//! Zero stack (see docs/real-stack.md) and reads back what they recorded.
//!
//! Everything here panics with a message that says how to fix the problem:
//! a test that cannot run its real program must fail, never skip.

pub use xpu_asm_record as record;

/// The page in a real browser.
pub mod browser;
/// Building the workloads and kernels the tests run.
pub mod build;
/// One capture builder.
pub mod capture;
/// The demo's workload and captures.
pub mod demo;
/// IGC's dump folders.
pub mod dumps;
/// Exact device times on the real NEO through the forwarding driver.
pub mod forwarding;
/// The process records of a capture.
pub mod records;
/// A capture's `report.json`.
pub mod report;
/// Running programs under the interposer.
pub mod run;
/// Scratch folders.
pub mod scratch;
/// Modules of kernels whose names are any bytes (`spirv-as`).
pub mod spirv_names;
/// The driver stacks.
pub mod stacks;
/// The device time tests' simulated driver and workload.
pub mod timing;
/// The Python venvs.
pub mod venvs;

pub use browser::*;
pub use build::*;
pub use capture::*;
pub use demo::*;
pub use dumps::*;
pub use forwarding::*;
pub use records::*;
pub use report::*;
pub use run::*;
pub use scratch::*;
pub use stacks::*;
pub use timing::*;
pub use venvs::*;

/// What the tests of parallel jobs share: commands, workload, assertions.
pub mod jobs;

/// Intel MPI from PyPI (scripts/impi-venv.sh) for the tests.
pub mod impi;

/// A one-host Slurm cluster (scripts/slurm-cluster.sh) for the tests.
pub mod slurm;

/// The SYCL 2026 test's support: today's stack in the Debian sid root.
pub mod sycl2026;
