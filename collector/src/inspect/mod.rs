//! The commands over a capture: `show` (one kernel, read like `objdump
//! -S`) and `diff` (two captures side by side, or one kernel's two ISA
//! texts).

pub mod cfg;
pub mod diff;
pub mod show;
