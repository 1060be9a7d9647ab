//! The kernel names a SPIR-V module declares: the literal name of each
//! `OpEntryPoint`, the exact bytes (SPIR-V strings end at their first NUL,
//! so a name is any bytes but NUL, up to 262,128 of them in one
//! instruction of at most 65,535 words). IGC writes these names, verbatim,
//! on the `//.kernel` lines of its `.asm` dumps ([`crate::header`]).
//!
//! Only the module's first sections are read: the entry points come after
//! its capabilities, extensions, imports and memory model, before anything
//! else, so [`EntryPoints`] takes the module's bytes a piece at a time (as
//! a file is read, for its SHA-256) and stops looking at the first
//! instruction of a later section.

/// `OpEntryPoint`.
const OP_ENTRY_POINT: u32 = 15;
/// The instructions that may come before the last `OpEntryPoint`:
/// `OpCapability`, `OpExtension`, `OpExtInstImport`, `OpMemoryModel`,
/// `OpEntryPoint`. (`OpNop` and the `OpLine`s may appear anywhere, but
/// producers do not put them there.)
const PREAMBLE: [u32; 5] = [17, 10, 11, 14, OP_ENTRY_POINT];
/// The SPIR-V magic number, in the module's byte order.
const MAGIC: u32 = 0x0723_0203;
/// Words of the module header.
const HEADER_WORDS: usize = 5;

/// The entry points' names of a module, read from its bytes piece by
/// piece ([`EntryPoints::feed`]); only what the entry points need is kept.
#[derive(Debug, Default)]
pub struct EntryPoints {
    /// Bytes fed and not yet consumed (an instruction cut by a piece's end).
    pending: Vec<u8>,
    /// How many bytes of the module were consumed.
    consumed: usize,
    /// Big-endian words (from the magic number); `None` until known.
    big_endian: Option<bool>,
    /// Past the preamble, or not SPIR-V: nothing more to read.
    done: bool,
    not_spirv: bool,
    names: Vec<Vec<u8>>,
}

impl EntryPoints {
    /// Takes the next `bytes` of the module.
    pub fn feed(&mut self, bytes: &[u8]) {
        if self.done {
            return;
        }
        self.pending.extend_from_slice(bytes);
        let mut at = 0;
        loop {
            let rest = &self.pending[at..];
            if self.big_endian.is_none() {
                if rest.len() < HEADER_WORDS * 4 {
                    break;
                }
                let le = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]);
                self.big_endian = match le {
                    MAGIC => Some(false),
                    _ if le.swap_bytes() == MAGIC => Some(true),
                    _ => {
                        self.not_spirv = true;
                        self.done = true;
                        break;
                    }
                };
                at += HEADER_WORDS * 4;
                continue;
            }
            let Some(first) = rest.get(..4) else { break };
            let w = self.word(first);
            let (count, opcode) = ((w >> 16) as usize, w & 0xffff);
            if count == 0 || !PREAMBLE.contains(&opcode) {
                self.done = true;
                break;
            }
            let Some(inst) = rest.get(..count * 4) else {
                break;
            };
            if opcode == OP_ENTRY_POINT {
                // Execution model, the function's id, then the name.
                let name = inst.get(12..).unwrap_or(&[]);
                let name = self.string(name);
                self.names.push(name);
            }
            at += count * 4;
        }
        self.consumed += at;
        self.pending.drain(..at);
        if self.done {
            self.pending = Vec::new();
        }
    }

    fn word(&self, b: &[u8]) -> u32 {
        let b = [b[0], b[1], b[2], b[3]];
        match self.big_endian {
            Some(true) => u32::from_be_bytes(b),
            _ => u32::from_le_bytes(b),
        }
    }

    /// A literal string of words: its bytes in the words' order (each word
    /// little-endian in value: the first byte is the lowest), up to NUL.
    fn string(&self, words: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        for w in words.chunks_exact(4) {
            for b in self.word(w).to_le_bytes() {
                if b == 0 {
                    return out;
                }
                out.push(b);
            }
        }
        out
    }

    /// Whether the bytes fed are not a SPIR-V module.
    pub fn not_spirv(&self) -> bool {
        self.not_spirv
    }

    /// The names, in the module's order.
    pub fn names(self) -> Vec<Vec<u8>> {
        self.names
    }
}

/// The names of `spirv`'s entry points, in its order (none when it is not
/// SPIR-V).
pub fn entry_point_names(spirv: &[u8]) -> Vec<Vec<u8>> {
    let mut e = EntryPoints::default();
    e.feed(spirv);
    e.names()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A module of `insts` (each its words), little- or big-endian.
    fn module(insts: &[Vec<u32>], big: bool) -> Vec<u8> {
        let mut words = vec![MAGIC, 0x0001_0000, 0, 10, 0];
        for i in insts {
            words.extend_from_slice(i);
        }
        words
            .iter()
            .flat_map(|w| {
                if big {
                    w.to_be_bytes()
                } else {
                    w.to_le_bytes()
                }
            })
            .collect()
    }

    /// `OpEntryPoint Kernel %id "name" %interface`.
    fn entry(id: u32, name: &[u8]) -> Vec<u32> {
        let mut s = name.to_vec();
        s.push(0);
        while s.len() % 4 != 0 {
            s.push(0);
        }
        let mut v = vec![0, 6, id];
        v.extend(
            s.chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
        );
        v.push(99);
        v[0] = ((v.len() as u32) << 16) | OP_ENTRY_POINT;
        v
    }

    #[test]
    fn every_entry_point_name_is_read_exactly() {
        // The longest a name can be beside one interface id.
        let long = vec![b'x'; 262_120];
        let names: Vec<Vec<u8>> = vec![
            b"victim".to_vec(),
            b"victim\n//.spill size 4096".to_vec(),
            b"bad\xff\xfe".to_vec(),
            Vec::new(),
            b"abc".to_vec(),
            b"abcd".to_vec(),
            long,
        ];
        let mut insts = vec![vec![0x0002_0011, 6], vec![0x0003_000e, 2, 2]];
        insts.extend(names.iter().enumerate().map(|(i, n)| entry(i as u32, n)));
        // OpExecutionMode: the next section; an entry point after it is
        // not read (no producer puts one there).
        insts.push(vec![0x0003_0010, 1, 31]);
        insts.push(entry(9, b"after"));
        for big in [false, true] {
            let m = module(&insts, big);
            let same = |got: Vec<Vec<u8>>| got == names;
            assert!(same(entry_point_names(&m)), "big-endian {big}");
            // Fed in pieces of every size, the same names.
            for piece in [1, 3, 4, 7, 4096] {
                let mut e = EntryPoints::default();
                for c in m.chunks(piece) {
                    e.feed(c);
                }
                assert!(same(e.names()), "pieces of {piece}");
            }
        }
    }

    #[test]
    fn what_is_not_spirv_has_no_names() {
        for bytes in [
            &b""[..],
            b"\x03\x02\x23",
            b"not a module at all",
            &[0u8; 64],
        ] {
            let mut e = EntryPoints::default();
            e.feed(bytes);
            assert!(e.names().is_empty());
        }
        let mut e = EntryPoints::default();
        e.feed(b"0123456789abcdefghijklmn");
        assert!(e.not_spirv());
        // A cut module: the names before the cut.
        let m = module(&[entry(1, b"a"), entry(2, b"bb")], false);
        assert_eq!(entry_point_names(&m[..m.len() - 2]), vec![b"a".to_vec()]);
        // An instruction of zero words ends the reading.
        let m = module(&[entry(1, b"a"), vec![0], entry(2, b"b")], false);
        assert_eq!(entry_point_names(&m), vec![b"a".to_vec()]);
    }
}
