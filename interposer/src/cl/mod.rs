//! OpenCL: the hooks ([`hooks`]), the OpenCL functions the interposer calls
//! itself through each object's dispatch table ([`queries`]) and the slice
//! of the C API it needs ([`ffi`]).

pub mod ffi;
pub mod hooks;
pub mod queries;
pub mod time;
