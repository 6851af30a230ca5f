//! Adaptive load balancing with the ECN path bitmap (STrack Algo 3, §3.1).
//!
//! ## Intended semantics (the paper's pseudo-code has slips)
//!
//! * **Bit meaning.** A set bit means "this entropy came back ECN-marked: avoid
//!   it". The bitmap starts all-clear (every path usable), and `choose_path`
//!   *skips* entropies whose bit is set. The pseudo-code's `update_ecn_bitmap`
//!   writes `bitmap[path] = 0` on ECN and `= 1` on a clean ACK, which is the
//!   opposite of what `choose_path` tests (`while bitmap[rr] != 0` skips) and
//!   of the text ("if an ACK comes back with an ECN mark, it is marked in the
//!   corresponding position"). We implement the text: ECN sets, clean clears.
//! * **Invalidating `next_path_id`.** On an ECN-marked ACK the pseudo-code sets
//!   `next_path_id = -(path_id)`, and `choose_path` tests `next_path_id > 0`:
//!   with `path_id = 0` that would make a marked entropy 0 look valid and, for a
//!   clean ACK on entropy 0, would wrongly ignore it. Intended: a marked ACK
//!   invalidates the remembered entropy, a clean ACK on *any* entropy
//!   (including 0) is reused for the next packet. We keep an `Option`.
//! * **Aging.** "One packet only clears one bit": while scanning, the first
//!   marked entropy skipped is cleared, so a marked path becomes eligible again
//!   after about one round-robin lap (≈ one or two RTTs, the paper's reset).
//!   This also guarantees the scan terminates when every bit is set.
//! * **Active set.** The round robin runs over `paths = max(8, min(max_paths,
//!   2·cwnd_packets))` entropies, so the bitmap stays fresh relative to the
//!   window (§3.1). The entropy remembered from a clean ACK is used even if it
//!   lies outside the current active set (it was good one RTT ago).
//! * **Foreign entropies.** An ACK echoing an entropy at or beyond
//!   `max_paths` (one this connection never sent on: a misbehaving peer, or
//!   an ACK that echoes no request) is ignored, so every packet stays on one
//!   of the connection's `max_paths` entropies.

/// Maximum number of entropies (bitmap size), as in the paper's evaluation.
pub const MAX_PATHS: usize = 256;

/// STrack's adaptive path selector for one connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdaptiveLb {
    /// ECN bitmap: bit `i` set ⇔ entropy `i` was ECN-marked and is avoided.
    bitmap: [u64; MAX_PATHS / 64],
    /// Round-robin pointer (`rr` in Algo 3).
    rr: u16,
    /// Entropy of the last ECN-free ACK, to clock the next packet onto.
    next_path_id: Option<u8>,
    /// `max_paths` (≤ 256).
    max_paths: u16,
    /// Marked entropies skipped by `choose_path` so far (statistics only).
    pub skipped: u64,
}

impl AdaptiveLb {
    /// A selector over `max_paths` entropies (1 ..= 256), all usable.
    pub fn new(max_paths: u16) -> Self {
        assert!((1..=MAX_PATHS as u16).contains(&max_paths));
        Self { bitmap: [0; 4], rr: 0, next_path_id: None, max_paths, skipped: 0 }
    }

    /// Is entropy `p` marked (avoided)?
    pub fn is_marked(&self, p: u8) -> bool {
        self.bitmap[p as usize / 64] >> (p % 64) & 1 == 1
    }

    /// Number of marked entropies.
    pub fn marked_count(&self) -> u32 {
        self.bitmap.iter().map(|w| w.count_ones()).sum()
    }

    fn set(&mut self, p: usize, v: bool) {
        if v {
            self.bitmap[p / 64] |= 1 << (p % 64);
        } else {
            self.bitmap[p / 64] &= !(1 << (p % 64));
        }
    }

    /// `update_ecn_bitmap(ecn, path_id)`: called for every ACK.
    pub fn update_ecn_bitmap(&mut self, ecn: bool, path_id: u8) {
        if path_id as u16 >= self.max_paths {
            return;
        }
        if ecn {
            self.next_path_id = None;
            self.set(path_id as usize, true);
        } else {
            self.next_path_id = Some(path_id);
            self.set(path_id as usize, false);
        }
    }

    /// Size of the active round-robin set for a window of `cwnd_packets`.
    pub fn active_paths(&self, cwnd_packets: u32) -> u16 {
        let p = (2 * cwnd_packets).min(self.max_paths as u32).max(8);
        p.min(self.max_paths as u32) as u16
    }

    /// `choose_path()`: entropy for the next data packet.
    pub fn choose_path(&mut self, cwnd_packets: u32) -> u8 {
        if let Some(p) = self.next_path_id.take() {
            self.rr = p as u16;
            return p;
        }
        let paths = self.active_paths(cwnd_packets);
        let mut cleared_one = false;
        self.rr = (self.rr + 1) % paths;
        while self.is_marked(self.rr as u8) {
            self.skipped += 1;
            if !cleared_one {
                self.set(self.rr as usize, false);
                cleared_one = true;
            }
            self.rr = (self.rr + 1) % paths;
        }
        self.rr as u8
    }
}

/// Oblivious spray (the `strack-oblivious` baseline): round robin over all
/// `max_paths` entropies regardless of feedback.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObliviousLb {
    rr: u16,
    max_paths: u16,
}

impl ObliviousLb {
    /// Round robin over `max_paths` entropies, starting at `start % max_paths`.
    pub fn new(max_paths: u16, start: u16) -> Self {
        assert!(max_paths >= 1);
        Self { rr: start % max_paths, max_paths }
    }

    /// Entropy for the next packet.
    pub fn choose_path(&mut self) -> u8 {
        let p = self.rr;
        self.rr = (self.rr + 1) % self.max_paths;
        p as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_ack_entropy_clocks_next_packet() {
        // "When an ACK comes back without an ECN mark, that entropy is used to
        // clock out the next new packet."
        let mut lb = AdaptiveLb::new(256);
        lb.update_ecn_bitmap(false, 42);
        assert_eq!(lb.choose_path(100), 42);
        // ... only once: the next packet continues round robin after 42.
        assert_eq!(lb.choose_path(100), 43);
    }

    #[test]
    fn entropy_zero_is_a_valid_clean_path() {
        // The pseudo-code's `next_path_id > 0` would ignore entropy 0.
        let mut lb = AdaptiveLb::new(256);
        for _ in 0..5 {
            lb.choose_path(100);
        }
        lb.update_ecn_bitmap(false, 0);
        assert_eq!(lb.choose_path(100), 0);
    }

    #[test]
    fn ecn_marked_entropy_is_skipped_and_invalidates_next() {
        // "If an ACK comes back with an ECN marked, it is marked in the
        // corresponding position in the bitmap. Next non-marked entropy in a
        // round robin manner is used".
        let mut lb = AdaptiveLb::new(256);
        lb.update_ecn_bitmap(false, 7);
        lb.update_ecn_bitmap(true, 8); // a later marked ACK: forget 7
        assert!(lb.is_marked(8));
        assert_eq!(lb.choose_path(4), 1); // round robin from rr=0; cwnd 4 -> 8 paths
        let seq: Vec<u8> = (0..8).map(|_| lb.choose_path(4)).collect();
        assert_eq!(seq, vec![2, 3, 4, 5, 6, 7, 0, 1]);
        // entropy 8 lies outside the 8-path active set: never chosen here.
        assert!(!seq.contains(&8));
    }

    #[test]
    fn skip_clears_only_the_first_skipped_bit() {
        let mut lb = AdaptiveLb::new(256);
        for p in [1u8, 2, 3] {
            lb.update_ecn_bitmap(true, p);
        }
        // rr=0 -> 1 (marked, cleared), 2 (marked, kept), 3 (marked, kept) -> 4
        assert_eq!(lb.choose_path(4), 4);
        assert_eq!(lb.skipped, 3);
        assert!(!lb.is_marked(1));
        assert!(lb.is_marked(2) && lb.is_marked(3));
        assert_eq!(lb.marked_count(), 2);
    }

    #[test]
    fn all_marked_terminates_on_the_cleared_bit() {
        let mut lb = AdaptiveLb::new(8);
        for p in 0..8u8 {
            lb.update_ecn_bitmap(true, p);
        }
        // rr: 0 -> 1 marked (cleared), 2..7,0 marked, wraps to 1 which is clear.
        assert_eq!(lb.choose_path(1), 1);
        assert_eq!(lb.marked_count(), 7);
    }

    #[test]
    fn active_set_tracks_window() {
        let lb = AdaptiveLb::new(256);
        assert_eq!(lb.active_paths(1), 8);
        assert_eq!(lb.active_paths(10), 20);
        assert_eq!(lb.active_paths(1000), 256);
        let small = AdaptiveLb::new(4);
        assert_eq!(small.active_paths(100), 4);
    }

    #[test]
    fn marked_paths_age_out_after_a_lap() {
        // A marked entropy becomes usable again after one round-robin lap.
        let mut lb = AdaptiveLb::new(256);
        lb.update_ecn_bitmap(true, 3);
        lb.update_ecn_bitmap(true, 5);
        let lap1: Vec<u8> = (0..6).map(|_| lb.choose_path(4)).collect();
        // each call clears the first marked entropy it skips
        assert_eq!(lap1, vec![1, 2, 4, 6, 7, 0]);
        assert_eq!(lb.marked_count(), 0);
        let lap2: Vec<u8> = (0..7).map(|_| lb.choose_path(4)).collect();
        assert_eq!(lap2, vec![1, 2, 3, 4, 5, 6, 7]); // both back in the next lap
    }

    #[test]
    fn oblivious_spray_is_plain_round_robin() {
        let mut lb = ObliviousLb::new(4, 2);
        let seq: Vec<u8> = (0..6).map(|_| lb.choose_path()).collect();
        assert_eq!(seq, vec![2, 3, 0, 1, 2, 3]);
    }
}
