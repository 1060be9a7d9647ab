//! The analysis of each launched kernel's code, run between matching and
//! the report: its control flow and loops ([`flow`]), which registers are
//! live where and the pressure they make ([`live`]), and where IGA decodes
//! the code for them, from the module binary the driver ran ([`code`]);
//! and the theoretical occupancy of each of its launch shapes on its device
//! ([`occupancy`]).

pub mod code;
pub mod flow;
pub mod live;
pub mod occupancy;
