//! Launch shapes in the counts file: each distinct shape a kernel was
//! launched with (work-group size, group count, the arguments set with a
//! size and no value) has a pair of slots of its own in the process's
//! counts file, beside the kernel's counter slot, so that a kill loses no
//! shape as it loses no count.
//!
//! A shape's first slot (its head) is laid out as a kernel's counter slot
//! (`immediate`, `regular_appended`, `regular_launched`) with its fourth
//! word tagged: [`SHAPE_TAG`] in the high half, the kernel id in the low
//! half. Its second slot (its tail) holds the shape's key ([`ShapeKey`]).
//! Every launch counts in exactly one slot: the shape's, or the kernel's
//! own counter when the kernel has no room for another shape ("other
//! shapes", [`MAX_SHAPES`] per kernel and process) or the launch path
//! gives none. A kernel's launches are therefore its counter's plus its
//! shapes'. The interposer writes the head's tag, then the tail, before
//! any launch counts there: a slot pair cut short by a kill has no
//! launches and is skipped.

/// The high half of a shape head's fourth word ("SHP1").
pub const SHAPE_TAG: u32 = 0x3150_4853;
/// Distinct shapes kept per kernel in each process: the first met; the
/// launches of further shapes count as the kernel's "other shapes". (A
/// kernel's counts file takes 64 bytes per shape: at most 16 KiB.)
pub const MAX_SHAPES: usize = 256;

/// The group count is unknown on the host (an indirect launch reads it
/// from device memory).
pub const FLAG_INDIRECT: u16 = 1;
/// The work-group size is the driver's choice (an OpenCL enqueue with a
/// NULL local size): `group_count` holds the global size instead.
pub const FLAG_NO_GROUP_SIZE: u16 = 2;
/// Launched through OpenCL (its NULL-valued arguments are `__local` ones,
/// or NULL buffers).
pub const FLAG_OPENCL: u16 = 4;

/// What tells one launch shape from another.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ShapeKey {
    /// Work-items per group in x, y, z (each below 65,536).
    pub group_size: [u16; 3],
    /// `FLAG_*`.
    pub flags: u16,
    /// Groups in x, y, z (with [`FLAG_NO_GROUP_SIZE`]: the global size).
    pub group_count: [u32; 3],
    /// The arguments set with a size and a NULL value (bit i: argument i,
    /// below 64), the kernel's local memory arguments among them.
    pub null_args: u64,
    /// The sum of the sizes those arguments were set with.
    pub null_bytes: u32,
}

impl ShapeKey {
    /// The tail slot's four words.
    pub fn tail(&self) -> [u64; 4] {
        let gs = self.group_size;
        [
            gs[0] as u64 | (gs[1] as u64) << 16 | (gs[2] as u64) << 32 | (self.flags as u64) << 48,
            self.group_count[0] as u64 | (self.group_count[1] as u64) << 32,
            self.group_count[2] as u64 | (self.null_bytes as u64) << 32,
            self.null_args,
        ]
    }

    /// The key a tail slot's words hold.
    pub fn from_tail(w: [u64; 4]) -> ShapeKey {
        ShapeKey {
            group_size: [w[0] as u16, (w[0] >> 16) as u16, (w[0] >> 32) as u16],
            flags: (w[0] >> 48) as u16,
            group_count: [w[1] as u32, (w[1] >> 32) as u32, w[2] as u32],
            null_bytes: (w[2] >> 32) as u32,
            null_args: w[3],
        }
    }
}

/// The fourth word of the head of a shape of kernel `kernel`.
pub fn head_tag(kernel: u32) -> u64 {
    (SHAPE_TAG as u64) << 32 | kernel as u64
}

/// The kernel whose shape's head this fourth word tags, if it tags one.
pub fn tagged_kernel(word: u64) -> Option<u32> {
    ((word >> 32) as u32 == SHAPE_TAG).then_some(word as u32)
}

/// A slot's four little-endian words.
pub fn words(slot: &[u8]) -> Option<[u64; 4]> {
    let w = |i: usize| -> Option<u64> {
        Some(u64::from_le_bytes(
            slot.get(i * 8..i * 8 + 8)?.try_into().ok()?,
        ))
    };
    Some([w(0)?, w(1)?, w(2)?, w(3)?])
}

/// A shape's slot pair as bytes (for tools and tests that write counts
/// files): its launches and appends (as regular-list counts), its key.
pub fn encode_shape(kernel: u32, launches: u64, appended: u64, key: &ShapeKey) -> [u8; 64] {
    let mut s = [0u8; 64];
    let head = [0, appended, launches, head_tag(kernel)];
    for (i, w) in head.iter().chain(key.tail().iter()).enumerate() {
        s[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
    }
    s
}

/// One shape read from a counts file: its kernel, key and counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotShape {
    pub kernel: u32,
    pub key: ShapeKey,
    pub launches: u64,
    pub appended: u64,
}

/// The shapes in the slots of a counts file (`slots` of them, after its
/// header of `header` bytes, each `slot` bytes), and the ids of the slots
/// they take. A pair with no launch (cut short by a kill, or never
/// launched) is left out.
pub fn shapes_in(
    bytes: &[u8],
    header: usize,
    slot: usize,
    slots: usize,
) -> (Vec<SlotShape>, std::collections::HashSet<u32>) {
    let s = scan(bytes, header, slot, slots);
    (s.shapes, s.taken)
}

/// What the slots of a counts file hold besides counters: shapes (with
/// the slot id of each one's head, in `heads`), time blocks
/// ([`crate::times`]) and the ids of every slot either takes.
#[derive(Debug, Default)]
pub struct Scan {
    pub shapes: Vec<SlotShape>,
    /// The head slot id of each of `shapes`, in the same order.
    pub heads: Vec<u32>,
    /// Each time block that holds anything: its owner's slot id and times.
    pub blocks: Vec<(u32, crate::times::Times)>,
    pub taken: std::collections::HashSet<u32>,
}

/// Reads the shapes and time blocks of a counts file's slots (as
/// [`shapes_in`]), each slot of a block skipped as a block's.
pub fn scan(bytes: &[u8], header: usize, slot: usize, slots: usize) -> Scan {
    let slot_words = |id: usize| -> Option<[u64; 4]> {
        let off = header + id * slot;
        words(bytes.get(off..off + slot)?)
    };
    let mut s = Scan::default();
    let mut id = 1;
    while id < slots {
        let Some(head) = slot_words(id) else { break };
        if let Some(owner) = crate::times::timed_owner(head[3]) {
            id += read_block(bytes, header + id * slot, id as u32, owner, &mut s);
            continue;
        }
        let Some(kernel) = tagged_kernel(head[3]) else {
            id += 1;
            continue;
        };
        s.taken.insert(id as u32);
        s.taken.insert(id as u32 + 1);
        let tail = slot_words(id + 1).unwrap_or_default();
        let (launches, appended) = (head[0].wrapping_add(head[2]), head[0].wrapping_add(head[1]));
        if launches != 0 || appended != 0 {
            s.heads.push(id as u32);
            s.shapes.push(SlotShape {
                kernel,
                key: ShapeKey::from_tail(tail),
                launches,
                appended,
            });
        }
        id += 2;
    }
    s
}

/// The time block at byte `off` (slot id `id`), kept in `s` when it holds
/// anything; the slots it takes (at least 1).
fn read_block(bytes: &[u8], off: usize, id: u32, owner: u32, s: &mut Scan) -> usize {
    use crate::times::{Times, BLOCK_WORDS, W_LAYOUT};
    let word = |w: usize| -> Option<u64> {
        let at = off + w * 8;
        Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
    };
    let len = match word(W_LAYOUT).map(|l| l as u32 as usize) {
        Some(l) if (2..=crate::CHUNK_SLOTS).contains(&l) => l,
        _ => 1,
    };
    s.taken.extend(id..id + len as u32);
    let all: Option<Vec<u64>> = (0..BLOCK_WORDS).map(word).collect();
    if let Some(t) = all.as_deref().and_then(Times::from_words) {
        s.blocks.push((owner, t));
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_through_their_tail() {
        let k = ShapeKey {
            group_size: [1024, 3, 65535],
            flags: FLAG_INDIRECT | FLAG_OPENCL,
            group_count: [u32::MAX, 7, 123_456],
            null_args: 1 << 63 | 5,
            null_bytes: 4096,
        };
        assert_eq!(ShapeKey::from_tail(k.tail()), k);
        assert_eq!(tagged_kernel(head_tag(77)), Some(77));
        assert_eq!(tagged_kernel(12), None);
    }
}
