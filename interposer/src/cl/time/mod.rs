//! Timing OpenCL enqueues on the device (`xpu-asm-run --time`,
//! `XPU_ASM_TIME`): none of this runs, and no hook of it is handed out,
//! unless launches are timed.
//!
//! The workload's queues are made with profiling: `clCreateCommandQueue`
//! with `CL_QUEUE_PROFILING_ENABLE` added to its properties (a value),
//! `clCreateCommandQueueWithProperties` from a copy of the workload's array
//! with it added (never the caller's array); when the driver refuses,
//! as the workload asked (its enqueues then "no profiling"). What the
//! workload can ask of them answers as without timing: the queue's
//! properties, the array it was made with, its events' profiling.
//!
//! An enqueue chosen by the policy (`xpu_asm_record::times::Policy`, by the
//! count of its kernel and shape so far) is read through the event the
//! workload asked for (as it is), or one the enqueue makes for timing
//! alone when it asked for none. Results are read only when the workload
//! itself syncs, queries or releases (the hooks of `hooks.rs`), and at
//! exit (`sync.rs`), with queries that never wait; a workload's event
//! released before its result could be read is kept by a reference of
//! timing's own until then. Each result goes into the launch's time block
//! in the counts file (`state::times`), as Level Zero's do.

pub mod hooks;
pub mod known;
pub mod launch;
pub mod sync;
