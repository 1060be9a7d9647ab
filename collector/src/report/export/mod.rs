//! The report's exporters, one file each: the terminal table ([`table`]),
//! JSON ([`json`]) and the page to browse ([`html`]).

pub mod html;
pub mod json;
pub mod origin_text;
pub mod pieces;
pub mod shapes_text;
pub mod table;
