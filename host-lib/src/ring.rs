//! Ring index arithmetic shared by the SQ, RQ and CQ (pure functions, unit-tested).
//!
//! Producer and consumer indices are free-running `u32` counters; a slot is
//! the index masked by the ring size. The NIC sees the low 16 bits of the
//! SQ/RQ indices (doorbells, `Cqe::wqe_index`), so work queues hold at most
//! 2^15 entries, which keeps 16-bit differences unambiguous.

/// Largest SQ/RQ ring, log2 (16-bit indices on the wire of the doorbell and CQE).
pub const MAX_WQ_LOG2: u32 = 15;
/// Largest CQ ring, log2 (the `LOG2` field is 8 bits; 2^20 CQEs = 32 MiB is plenty).
pub const MAX_CQ_LOG2: u32 = 20;

/// log2 of the smallest power of two holding `n` entries (`n == 0` counts as 1).
pub fn log2_entries(n: u32) -> u32 {
    n.max(1).next_power_of_two().trailing_zeros()
}

/// Slot of free-running index `idx` in a ring of `2^log2` entries.
pub fn slot(idx: u32, log2: u32) -> usize {
    (idx & ((1u32 << log2) - 1)) as usize
}

/// Owner bit value that marks the CQE at consumer index `ci` as valid: the
/// NIC writes 1 on the first pass over the ring, 0 on the second, and so on.
pub fn cqe_owner_valid(ci: u32, log2: u32) -> u8 {
    (((ci >> log2) & 1) ^ 1) as u8
}

/// Entries in use between a consumer and a producer index.
pub fn used(pi: u32, ci: u32) -> u32 {
    pi.wrapping_sub(ci)
}

/// Whether free-running index `idx` has low 16 bits `low16`: checks a CQE's
/// `wqe_index` against the oldest outstanding WQE.
pub fn matches_low16(idx: u32, low16: u16) -> bool {
    idx as u16 == low16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_up_to_powers_of_two() {
        assert_eq!(log2_entries(0), 0);
        assert_eq!(log2_entries(1), 0);
        assert_eq!(log2_entries(2), 1);
        assert_eq!(log2_entries(3), 2);
        assert_eq!(log2_entries(128), 7);
        assert_eq!(log2_entries(129), 8);
    }

    #[test]
    fn slots_wrap_and_survive_u32_overflow() {
        assert_eq!(slot(0, 3), 0);
        assert_eq!(slot(7, 3), 7);
        assert_eq!(slot(8, 3), 0);
        assert_eq!(slot(u32::MAX, 3), 7);
        assert_eq!(slot(u32::MAX.wrapping_add(1), 3), 0);
        assert_eq!(used(2, u32::MAX - 1), 4);
    }

    #[test]
    fn owner_bit_alternates_per_pass() {
        // Ring of 4: first pass expects 1, second 0, third 1.
        for ci in 0..4 {
            assert_eq!(cqe_owner_valid(ci, 2), 1);
        }
        for ci in 4..8 {
            assert_eq!(cqe_owner_valid(ci, 2), 0);
        }
        assert_eq!(cqe_owner_valid(8, 2), 1);
        // A ring of one entry flips every CQE.
        assert_eq!(cqe_owner_valid(0, 0), 1);
        assert_eq!(cqe_owner_valid(1, 0), 0);
        // Across u32 wrap the parity stays consistent (2^32 is an even number of passes).
        assert_eq!(cqe_owner_valid(u32::MAX, 2), 0);
        assert_eq!(cqe_owner_valid(u32::MAX.wrapping_add(1), 2), 1);
    }

    #[test]
    fn low16_matching() {
        assert!(matches_low16(0x1_0005, 5));
        assert!(!matches_low16(0x1_0005, 6));
    }
}
