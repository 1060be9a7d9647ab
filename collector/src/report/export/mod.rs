//! The report's exporters, one file each: the terminal table ([`table`])
//! and JSON ([`json`]).

pub mod json;
pub mod table;
