//! Level Zero: the hooks ([`hooks`]), the DDI tables they are installed
//! into ([`tables`]), the Level Zero functions the interposer calls itself
//! ([`queries`]) and the slice of the C API it needs ([`ffi`]).

pub mod ffi;
pub mod hooks;
pub mod queries;
pub mod tables;
pub mod time;
