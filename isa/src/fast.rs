//! A map hashed fast, for the many long names and paths a capture looks
//! up.

/// A map hashed fast: 100,000 long names are looked up and counted
/// several times for a table or a page (SipHash, which resists chosen
/// collisions, is no use for them: the map's order is never shown, and
/// its keys are the capture's own names, paths and line numbers).
pub type FastMap<K, V> = std::collections::HashMap<K, V, FastHash>;

/// A set hashed as [`FastMap`] is.
pub type FastSet<K> = std::collections::HashSet<K, FastHash>;

/// The hasher of [`FastMap`]: FxHash's (a multiply and a rotation per
/// word).
#[derive(Default, Clone, Copy)]
pub struct FastHash;

impl std::hash::BuildHasher for FastHash {
    type Hasher = FastHasher;
    fn build_hasher(&self) -> FastHasher {
        FastHasher(0)
    }
}

pub struct FastHasher(u64);

impl FastHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl std::hash::Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w));
        }
    }
    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }
    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}
