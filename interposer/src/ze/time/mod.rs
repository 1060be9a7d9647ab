//! Timing Level Zero launches on the device (`xpu-asm-run --time`,
//! `XPU_ASM_TIME`): none of this runs, and no hook of it is handed out,
//! unless launches are timed.
//!
//! A launch chosen by the policy (`xpu_asm_record::times::Policy`, by the
//! count of its kernel and shape so far) signals a kernel timestamp event
//! the interposer reads later: its own (one of its pools', per context),
//! when the launch passed none; the workload's own when it is a timestamp
//! event (the workload's pools are made with timestamps, on a copy of
//! their descriptor, unless they are IPC or counter-based ones); on an
//! in-order list, a counter-based event of the workload's without
//! timestamps is signaled by a barrier right after the kernel, which
//! signals the interposer's. Anything else is not timed, and said: an
//! event that cannot be timed without changing the workload.
//!
//! Results are read only when the workload itself syncs, queries, resets
//! or destroys (the hooks of `sync.rs`), and at exit, with
//! `zeEventQueryKernelTimestamp`, which never waits: the workload's events
//! keep their meaning, nothing is waited on, a device that never
//! completes leaves launches "not complete". Each result goes into the
//! launch's time block in the counts file (`state::times`).

pub mod fns;
pub mod hooks;
pub mod known;
pub mod launch;
pub mod sync;
