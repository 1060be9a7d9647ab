pub mod diff;
pub mod show;
