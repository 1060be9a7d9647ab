//! Finding bytes in ISA text: whitespace and words of a line, and where a
//! byte occurs (`\n`, `/`, `[`), without a call or a branch per byte.
//! The analysis runs over every line of every launched kernel's text.

/// The first byte of `b` from `i` on that is not ASCII whitespace (or its
/// length). Eight bytes at a time while they are spaces (IGC indents its
/// instructions with eight, and aligns them after predicates with more),
/// the first other one found without a branch per byte.
pub(crate) fn skip_space(b: &[u8], mut i: usize) -> usize {
    const SPACES: u64 = u64::from_le_bytes([b' '; 8]);
    while let Some(w) = b.get(i..i + 8) {
        let other = u64::from_le_bytes(w.try_into().expect("eight bytes")) ^ SPACES;
        if other != 0 {
            i += (other.trailing_zeros() / 8) as usize;
            break;
        }
        i += 8;
    }
    // Other whitespace (tabs), and the last few bytes.
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The first ASCII whitespace of `b` from `i` on (or its length): the end
/// of a word. Eight bytes at a time, as one number, whose first byte
/// below `!` is found without a branch per byte (the ends of opcodes of
/// all lengths cost a mispredicted branch each, byte by byte).
pub(crate) fn word_end(b: &[u8], mut i: usize) -> usize {
    const ONES: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_le_bytes([0x80; 8]);
    while let Some(w) = b.get(i..i + 8) {
        let w = u64::from_le_bytes(w.try_into().expect("eight bytes"));
        // The high bit of each byte below 0x21, and maybe of bytes after
        // the first such (borrows): the lowest is exact.
        let below = w.wrapping_sub(ONES * 0x21) & !w & HIGH;
        if below != 0 {
            let at = i + (below.trailing_zeros() / 8) as usize;
            if b[at].is_ascii_whitespace() {
                return at;
            }
            // A control byte, not whitespace: byte by byte from there.
            i = at;
            break;
        }
        i += 8;
    }
    while i < b.len() && !b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The offsets of `byte` in `b`, in order (as `memchr_iter`), found 64
/// bytes at a time as a mask: no call per occurrence, which for the few
/// bytes of an instruction's comment or operands cost more than the
/// search.
pub(crate) fn positions(b: &[u8], byte: u8) -> Positions<'_> {
    Positions {
        b,
        byte,
        block: 0,
        mask: mask(b, 0, byte),
    }
}

pub(crate) struct Positions<'a> {
    b: &'a [u8],
    byte: u8,
    /// The offset of the block of 64 bytes `mask` is of.
    block: usize,
    /// Bit `i`: `byte` at `block + i`, not yet given.
    mask: u64,
}

impl Iterator for Positions<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        loop {
            if self.mask != 0 {
                let at = self.block + self.mask.trailing_zeros() as usize;
                self.mask &= self.mask - 1;
                return Some(at);
            }
            let next = self.block + 64;
            if next >= self.b.len() {
                return None;
            }
            self.block = next;
            self.mask = mask(self.b, next, self.byte);
        }
    }
}

/// The ends of the lines of `text`: the offset of each `\n`, in order,
/// then the text's length (as `memchr_iter(b'\n', text)` and then
/// `text.len()`).
pub(crate) fn line_ends(text: &[u8]) -> impl Iterator<Item = usize> + '_ {
    positions(text, b'\n').chain(std::iter::once(text.len()))
}

/// Where `byte` is among the 64 bytes of `b` from `from` on (all of them
/// if fewer), bit `i` for byte `from + i`.
#[inline]
fn mask(b: &[u8], from: usize, byte: u8) -> u64 {
    let rest = &b[from..];
    if let Some(block) = rest.first_chunk::<64>() {
        return mask_of(block, byte);
    }
    if let Some(last) = b.last_chunk::<64>() {
        // The last 64 bytes, those before `from` shifted out (`rest` is
        // not empty: no block starts at the end).
        return mask_of(last, byte) >> (64 - rest.len());
    }
    if rest.len() <= 16 {
        // A few bytes (an opcode, `// $9`): fewer than a copy costs.
        return mask_by_byte(rest, byte);
    }
    let mut block = [0; 64];
    block[..rest.len()].copy_from_slice(rest);
    mask_of(&block, byte) & ((1 << rest.len()) - 1)
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn mask_of(block: &[u8; 64], byte: u8) -> u64 {
    use std::arch::x86_64::_mm_set1_epi8;
    use std::arch::x86_64::{__m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8};
    let p = block.as_ptr().cast::<__m128i>();
    // SAFETY: SSE2 is part of x86_64; the 16 bytes read at `p.add(i)` are
    // within `block` (i < 4), and the load needs no alignment.
    let [a, b, c, d] = [0, 1, 2, 3].map(|i| unsafe {
        let v = _mm_loadu_si128(p.add(i));
        u64::from(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(byte as i8))) as u16)
    });
    a | b << 16 | c << 32 | d << 48
}

#[cfg(not(target_arch = "x86_64"))]
fn mask_of(block: &[u8; 64], byte: u8) -> u64 {
    mask_by_byte(block, byte)
}

/// [`mask`] of at most 64 bytes, byte by byte.
fn mask_by_byte(b: &[u8], byte: u8) -> u64 {
    b.iter()
        .enumerate()
        .fold(0, |m, (i, &c)| m | u64::from(c == byte) << i)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Positions and ends of lines found 64 bytes at a time are memchr's,
    /// at and around the blocks' ends, for any byte (NUL too).
    #[test]
    fn positions_are_memchr() {
        for len in [0, 1, 2, 63, 64, 65, 127, 128, 129, 200] {
            for every in [1, 2, 7, 63, 64, 65, 1000] {
                for first in [0, 1, 62, 63, 64] {
                    for byte in [b'\n', 0] {
                        let text: Vec<u8> = (0..len)
                            .map(|i| {
                                let hit = i >= first && (i - first) % every == 0;
                                if hit {
                                    byte
                                } else {
                                    b'x'
                                }
                            })
                            .collect();
                        let want: Vec<usize> = memchr::memchr_iter(byte, &text).collect();
                        let got: Vec<usize> = positions(&text, byte).collect();
                        assert_eq!(got, want, "{len} {every} {first} {byte}");
                        if byte == b'\n' {
                            let ends: Vec<usize> = line_ends(&text).collect();
                            assert_eq!(ends[..ends.len() - 1], want);
                            assert_eq!(ends.last(), Some(&text.len()));
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn words_and_spaces() {
        let b = b"        (W)\t  mov.x (1|M0)\x0br1\x0c\r\n";
        assert_eq!(skip_space(b, 0), 8);
        assert_eq!(word_end(b, 8), 11);
        assert_eq!(skip_space(b, 11), 14);
        assert_eq!(word_end(b, 14), 19);
        // A vertical tab is no ASCII whitespace.
        assert_eq!(word_end(b, 20), 29);
        assert_eq!(skip_space(b, 29), b.len());
        assert_eq!(word_end(b"", 0), 0);
        assert_eq!(skip_space(b"", 0), 0);
        for i in 0..b.len() {
            let ws = |c: &u8| c.is_ascii_whitespace();
            let want = b[i..].iter().position(ws).map_or(b.len(), |k| i + k);
            assert_eq!(word_end(b, i), want, "{i}");
            let want = b[i..]
                .iter()
                .position(|c| !ws(c))
                .map_or(b.len(), |k| i + k);
            assert_eq!(skip_space(b, i), want, "{i}");
        }
    }
}
