//! Deterministic data patterns: every (seed, stream) pair gives its own byte
//! sequence, so a stale, misplaced or duplicated byte is detected.

use rnic_sim::rng::SplitMix;

/// The stream id of message `iter` on QP index `qp` (distinct for distinct pairs).
pub fn stream(qp: u32, iter: u64) -> u64 {
    (qp as u64) << 40 ^ iter
}

/// Fills `buf` with the pattern of `stream` under `seed`.
pub fn fill(seed: u64, stream: u64, buf: &mut [u8]) {
    let mut g = SplitMix(seed ^ stream.wrapping_mul(0xD6E8_FEB8_6659_FD93));
    let mut chunks = buf.chunks_exact_mut(8);
    for c in &mut chunks {
        c.copy_from_slice(&g.next().to_le_bytes());
    }
    let rest = chunks.into_remainder();
    let last = g.next().to_le_bytes();
    let n = rest.len();
    rest.copy_from_slice(&last[..n]);
}

/// The pattern of `stream` as a new vector of `len` bytes.
pub fn make(seed: u64, stream: u64, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    fill(seed, stream, &mut v);
    v
}

/// Offset of the first byte where `got` differs from the pattern, if any.
pub fn first_mismatch(seed: u64, stream: u64, got: &[u8]) -> Option<usize> {
    let want = make(seed, stream, got.len());
    got.iter().zip(&want).position(|(a, b)| a != b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_differ_and_repeat() {
        let a = make(1, stream(0, 0), 100);
        assert_eq!(a, make(1, stream(0, 0), 100));
        assert_ne!(a, make(1, stream(0, 1), 100));
        assert_ne!(a, make(1, stream(1, 0), 100));
        assert_ne!(a, make(2, stream(0, 0), 100));
        // A prefix of a longer pattern is the shorter pattern.
        assert_eq!(&make(1, 7, 13)[..], &make(1, 7, 20)[..13]);
        assert_eq!(first_mismatch(1, 7, &make(1, 7, 20)), None);
        let mut b = make(1, 7, 20);
        b[17] ^= 1;
        assert_eq!(first_mismatch(1, 7, &b), Some(17));
    }
}
