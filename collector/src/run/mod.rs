pub mod forward;
pub mod job;
pub mod launch;
pub mod merge;
