//! Source lines of a zebin built with line information (`-g`): its DWARF
//! line tables (`.debug_line`), per kernel, by byte offset in the kernel's
//! code.
//!
//! IGC 2 writes one compilation unit per kernel, each with a line program
//! of one sequence. The addresses in the zebin are not final: each
//! sequence's `DW_LNE_set_address` (and the units' `DW_AT_stmt_list`,
//! `DW_AT_low_pc`, ...) is 0, and `.rela.debug_line` (`.rela.debug_info`)
//! relocates it against a symbol named after the kernel's section
//! (`.text.<kernel>`, the symbol's own section index is the relocated
//! section's, not the kernel's), as NEO does when it hands the binary to a
//! debugger. The relocations are applied here with each kernel's section
//! at a base of its own, so that every address says whose code it is in.
//!
//! Some symbols have no name (IGC 2.40 leaves one kernel's nameless in most
//! multi-kernel binaries): a sequence relocated against one is the kernel's
//! that its unit's subprogram names, or else the one kernel no other
//! sequence is for.

use object::read::elf::ElfFile64;
use object::{Endianness, Object, ObjectSection, ObjectSymbol, RelocationFlags, RelocationTarget};
use std::borrow::Cow;
use std::collections::HashMap;

/// zebin's relocation types (NEO's `zebin_elf.h`).
const R_ZE_SYM_ADDR: u32 = 1;
const R_ZE_SYM_ADDR_32: u32 = 2;
const R_ZE_SYM_ADDR_32_HI: u32 = 3;

/// The address bits of an offset in a kernel's code; the bits above are
/// its section's index plus one (0: a symbol that named no section).
const OFFSET_BITS: u32 = 32;

/// A kernel's line table: where in its code each source line's
/// instructions begin.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineTable {
    /// The source files, as IGC names them in its dumps: the line
    /// program's directory and file name joined (`<dir>/<name>`).
    pub files: Vec<String>,
    /// The rows, by offset; each holds until the next one.
    pub rows: Vec<LineRow>,
}

/// One row of a line table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineRow {
    /// Byte offset in the kernel's code.
    pub offset: u64,
    /// Index in [`LineTable::files`]; `None` for the end of a sequence
    /// (no line from here on) or a file the table does not name.
    pub file: Option<usize>,
    /// The line, 0 for none (DWARF's "no source line").
    pub line: u32,
    /// DWARF's `prologue_end`: the first instruction past the function's
    /// prologue.
    pub prologue_end: bool,
}

type Slice<'a> = gimli::EndianSlice<'a, gimli::LittleEndian>;

/// The line tables of a zebin's kernels, by kernel name; empty without
/// `.debug_line` or when the DWARF cannot be read (the kernels are there
/// all the same, without source lines).
pub(crate) fn line_tables(file: &ElfFile64<Endianness>) -> HashMap<Vec<u8>, LineTable> {
    if file.section_by_name(".debug_line").is_none() {
        return HashMap::new();
    }
    let kernels = kernel_sections(file);
    let sections = match gimli::DwarfSections::load(|id| section(file, &kernels, id.name())) {
        Ok(s) => s,
        Err(()) => return HashMap::new(),
    };
    let dwarf = sections.borrow(|s| Slice::new(s, gimli::LittleEndian));
    let units = units(&dwarf).unwrap_or_default();
    assign(units, &kernels)
}

/// The kernel of each `.text.<kernel>` section, by section index.
fn kernel_sections(file: &ElfFile64<Endianness>) -> HashMap<usize, Vec<u8>> {
    file.sections()
        .filter_map(|s| {
            let name = s.name_bytes().ok()?.strip_prefix(b".text.")?;
            (!name.is_empty()).then(|| (s.index().0, name.to_vec()))
        })
        .collect()
}

/// The bytes of section `name` with its relocations applied; empty when
/// there is no such section. `Err` only for bytes that cannot be read.
fn section<'d>(
    file: &ElfFile64<'d, Endianness>,
    kernels: &HashMap<usize, Vec<u8>>,
    name: &str,
) -> Result<Cow<'d, [u8]>, ()> {
    let Some(s) = file.section_by_name(name) else {
        return Ok(Cow::Borrowed(&[]));
    };
    let data = s.data().map_err(|_| ())?;
    let mut relocs = s.relocations().peekable();
    if relocs.peek().is_none() {
        return Ok(Cow::Borrowed(data));
    }
    let by_name: HashMap<&[u8], usize> = kernels.iter().map(|(&i, k)| (k.as_slice(), i)).collect();
    let mut out = data.to_vec();
    for (at, r) in relocs {
        let (RelocationFlags::Elf { r_type }, RelocationTarget::Symbol(sym)) =
            (r.flags(), r.target())
        else {
            continue;
        };
        let Ok(sym) = file.symbol_by_index(sym) else {
            continue;
        };
        let base = sym
            .name_bytes()
            .ok()
            .and_then(|n| n.strip_prefix(b".text."))
            .and_then(|k| by_name.get(k))
            .map_or(0, |&i| (i as u64 + 1) << OFFSET_BITS);
        let value = base
            .wrapping_add(sym.address())
            .wrapping_add(r.addend() as u64);
        patch(&mut out, at, r_type, value);
    }
    Ok(Cow::Owned(out))
}

/// Writes a relocation's value; one that does not fit is left out.
fn patch(out: &mut [u8], at: u64, r_type: u32, value: u64) {
    let bytes: &[u8] = match r_type {
        R_ZE_SYM_ADDR => &value.to_le_bytes(),
        R_ZE_SYM_ADDR_32 => &(value as u32).to_le_bytes(),
        R_ZE_SYM_ADDR_32_HI => &((value >> 32) as u32).to_le_bytes(),
        _ => return,
    };
    let Ok(at) = usize::try_from(at) else { return };
    if let Some(dst) = at
        .checked_add(bytes.len())
        .and_then(|end| out.get_mut(at..end))
    {
        dst.copy_from_slice(bytes);
    }
}

/// One unit's rows, with the section the addresses are in.
struct UnitRows {
    /// Section index plus one of the kernel, 0 when its symbol had no name.
    base: u64,
    /// The names of the unit's subprograms with code.
    subprograms: Vec<Vec<u8>>,
    table: LineTable,
}

/// Each unit's line program's rows (a program that several units share is
/// read once).
fn units(dwarf: &gimli::Dwarf<Slice<'_>>) -> gimli::Result<Vec<UnitRows>> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut headers = dwarf.units();
    while let Some(header) = headers.next()? {
        let unit = dwarf.unit(header)?;
        let Some(program) = unit.line_program.clone() else {
            continue;
        };
        if !seen.insert(program.header().offset().0) {
            continue;
        }
        let subprograms = subprograms(dwarf, &unit)?;
        for (base, table) in rows(dwarf, &unit, program)? {
            out.push(UnitRows {
                base,
                subprograms: subprograms.clone(),
                table,
            });
        }
    }
    Ok(out)
}

/// The names (linkage name and name) of `unit`'s subprograms that have
/// code (a `DW_AT_low_pc`).
fn subprograms(
    dwarf: &gimli::Dwarf<Slice<'_>>,
    unit: &gimli::Unit<Slice<'_>>,
) -> gimli::Result<Vec<Vec<u8>>> {
    let mut names = Vec::new();
    let mut entries = unit.entries();
    while let Some((_, e)) = entries.next_dfs()? {
        if e.tag() != gimli::DW_TAG_subprogram || e.attr(gimli::DW_AT_low_pc)?.is_none() {
            continue;
        }
        for at in [gimli::DW_AT_linkage_name, gimli::DW_AT_name] {
            if let Some(v) = e.attr_value(at)? {
                if let Ok(s) = dwarf.attr_string(unit, v) {
                    names.push(s.slice().to_vec());
                }
            }
        }
    }
    Ok(names)
}

/// The rows of a line program, one table per section its sequences are in
/// (the section's base, see [`UnitRows::base`]).
fn rows(
    dwarf: &gimli::Dwarf<Slice<'_>>,
    unit: &gimli::Unit<Slice<'_>>,
    program: gimli::IncompleteLineProgram<Slice<'_>>,
) -> gimli::Result<Vec<(u64, LineTable)>> {
    let mut tables: Vec<(u64, LineTable)> = Vec::new();
    // File index in the program -> index in the table's files.
    let mut files: HashMap<(u64, u64), usize> = HashMap::new();
    let mut state = program.rows();
    while let Some((header, row)) = state.next_row()? {
        let base = row.address() >> OFFSET_BITS;
        let offset = row.address() & ((1 << OFFSET_BITS) - 1);
        let t = match tables.iter().position(|(b, _)| *b == base) {
            Some(i) => i,
            None => {
                tables.push((base, LineTable::default()));
                tables.len() - 1
            }
        };
        let table = &mut tables[t].1;
        let file = if row.end_sequence() {
            None
        } else if let Some(&f) = files.get(&(base, row.file_index())) {
            Some(f)
        } else {
            let path = row.file(header).map(|f| path(dwarf, unit, header, f));
            path.map(|p| {
                table.files.push(p);
                files.insert((base, row.file_index()), table.files.len() - 1);
                table.files.len() - 1
            })
        };
        table.rows.push(LineRow {
            offset,
            file,
            line: if row.end_sequence() {
                0
            } else {
                row.line()
                    .map_or(0, |l| u32::try_from(l.get()).unwrap_or(u32::MAX))
            },
            prologue_end: row.prologue_end(),
        });
    }
    for (_, t) in &mut tables {
        // Sequences in any order; rows of one address keep theirs.
        t.rows.sort_by_key(|r| r.offset);
    }
    Ok(tables)
}

/// A file's path as IGC's dumps give it: LLVM's `sys::path::append` of its
/// directory and its name (a name that begins with `/` is appended as is).
fn path(
    dwarf: &gimli::Dwarf<Slice<'_>>,
    unit: &gimli::Unit<Slice<'_>>,
    header: &gimli::LineProgramHeader<Slice<'_>>,
    file: &gimli::FileEntry<Slice<'_>>,
) -> String {
    let text = |v| {
        dwarf
            .attr_string(unit, v)
            .map(|s| String::from_utf8_lossy(s.slice()).into_owned())
            .unwrap_or_default()
    };
    let name = text(file.path_name());
    let dir = file.directory(header).map(text).unwrap_or_default();
    if dir.is_empty() {
        return name;
    }
    if dir.ends_with('/') {
        return format!("{dir}{}", name.trim_start_matches('/'));
    }
    if name.starts_with('/') {
        return format!("{dir}{name}");
    }
    format!("{dir}/{name}")
}

/// Each unit's rows given to its kernel: by the section its addresses are
/// in, else by its subprogram's name, else to the one kernel left.
fn assign(units: Vec<UnitRows>, kernels: &HashMap<usize, Vec<u8>>) -> HashMap<Vec<u8>, LineTable> {
    let mut out: HashMap<Vec<u8>, LineTable> = HashMap::new();
    let mut unplaced = Vec::new();
    for u in units {
        let kernel = u
            .base
            .checked_sub(1)
            .and_then(|i| kernels.get(&(i as usize)));
        match kernel {
            Some(k) => merge(out.entry(k.clone()).or_default(), u.table),
            None if u.base == 0 => unplaced.push(u),
            // Another section (`.text` of stack-called functions): no
            // kernel's.
            None => {}
        }
    }
    let mut left = Vec::new();
    for u in unplaced {
        let named = u
            .subprograms
            .iter()
            .find(|n| !out.contains_key(*n) && kernels.values().any(|k| k == *n));
        match named {
            Some(k) => {
                let k = k.clone();
                merge(out.entry(k).or_default(), u.table);
            }
            None => left.push(u),
        }
    }
    let mut free = kernels.values().filter(|k| !out.contains_key(*k));
    if let ([u], Some(k), None) = (&mut left[..], free.next(), free.next()) {
        out.insert(k.clone(), std::mem::take(&mut u.table));
    }
    out
}

/// Adds `more`'s rows to `into`'s.
fn merge(into: &mut LineTable, more: LineTable) {
    if into.rows.is_empty() {
        *into = more;
        return;
    }
    let shift = into.files.len();
    into.files.extend(more.files);
    into.rows.extend(more.rows.into_iter().map(|r| LineRow {
        file: r.file.map(|f| f + shift),
        ..r
    }));
    into.rows.sort_by_key(|r| r.offset);
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::native::parse;

    /// The workload's loops module built with `-g` by ocloc 26.27 (IGC
    /// 2.40) in /tmp/xpu-asm-dwarf (tests/data/gen-neo26.sh): three kernels,
    /// the first two relocated against one nameless symbol.
    pub(crate) const LOOPS_G: &[u8] =
        include_bytes!("../../../collector/tests/data/module-binaries/loops_g.pvc.zebin");
    pub(crate) const LOOPS_CL: &str = "/tmp/xpu-asm-dwarf/kernels_loops.cl";

    fn table(bytes: &[u8], kernel: &str) -> LineTable {
        let p = parse(bytes, None).unwrap();
        let k = p
            .kernels
            .iter()
            .find(|k| k.name == kernel.as_bytes())
            .unwrap();
        k.lines
            .clone()
            .unwrap_or_else(|| panic!("{kernel} has no lines"))
    }

    fn rows(t: &LineTable) -> Vec<(u64, u32, bool)> {
        t.rows
            .iter()
            .map(|r| (r.offset, r.line, r.prologue_end))
            .collect()
    }

    #[test]
    fn each_kernel_has_its_own_rows_by_offset_in_its_code() {
        let one = table(LOOPS_G, "loop_one");
        assert_eq!(one.files, [LOOPS_CL]);
        assert_eq!(
            rows(&one),
            [
                (0, 12, false),
                (0x158, 13, true),
                (0x1c0, 16, false),
                (0x1d0, 13, false),
                (0x200, 14, false),
                (0x230, 16, false),
                (0x290, 17, false),
                (0x2a0, 16, false),
                (0x2a8, 16, false),
                (0x2b8, 17, false),
                (0x2d0, 16, false),
                (0x300, 18, false),
                (0x310, 19, false),
                (0x378, 0, false),
            ]
        );
        assert!(one.rows[..13].iter().all(|r| r.file == Some(0)));
        assert_eq!(one.rows[13].file, None);
        // The two kernels whose sequences are relocated against one
        // nameless symbol get theirs by their units' subprograms; the third
        // by its symbol. Each starts at its own first line.
        for (kernel, first, end) in [("loop_none", 6, 0x2d0), ("loop_nested", 22, 0x438)] {
            let t = table(LOOPS_G, kernel);
            assert_eq!(t.files, [LOOPS_CL], "{kernel}");
            assert_eq!(t.rows[0].line, first, "{kernel}");
            assert_eq!(t.rows.last().map(|r| r.offset), Some(end), "{kernel}");
        }
    }

    #[test]
    fn a_zebin_without_debug_info_has_no_lines() {
        let a = include_bytes!("../../../collector/tests/data/module-binaries/module_a.pvc.zebin");
        let p = parse(a, None).unwrap();
        assert_eq!(p.kernels.len(), 2);
        assert!(p.kernels.iter().all(|k| k.lines.is_none()));
    }

    /// The bytes of section `name` of a zebin: (offset, size).
    fn section_range(b: &[u8], name: &str) -> (usize, usize) {
        let f = ElfFile64::<Endianness>::parse(b).unwrap();
        let (o, s) = f.section_by_name(name).unwrap().file_range().unwrap();
        (o as usize, s as usize)
    }

    #[test]
    fn broken_dwarf_costs_the_lines_not_the_kernels() {
        for (section, fill) in [
            (".debug_line", 0xff),
            (".debug_line", 0x00),
            (".debug_info", 0xff),
            (".debug_abbrev", 0x07),
            (".rela.debug_line", 0xff),
            (".rela.debug_info", 0x41),
        ] {
            let mut b = LOOPS_G.to_vec();
            let (o, s) = section_range(&b, section);
            b[o..o + s].fill(fill);
            let p = parse(&b, None).unwrap_or_else(|e| panic!("{section} {fill:#x}: {e}"));
            assert_eq!(p.kernels.len(), 3, "{section} {fill:#x}");
            for k in &p.kernels {
                if let Some(t) = &k.lines {
                    assert!(t.rows.windows(2).all(|w| w[0].offset <= w[1].offset));
                    assert!(t
                        .rows
                        .iter()
                        .all(|r| r.file.is_none_or(|f| f < t.files.len())));
                }
            }
        }
    }
}
