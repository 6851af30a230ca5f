//! DCTCP window (SRNIC §5: "In SRNIC, we use DCTCP"; Alizadeh et al. 2010).
//!
//! * `α ← (1 − g)·α + g·F` once per window of data, `F` = fraction of
//!   acknowledged bytes whose ACK echoed ECN-CE, `g = 1/16`.
//! * On the first ECN-echo of a window: `cwnd ← cwnd·(1 − α/2)` (once per
//!   window).
//! * Otherwise additive increase of one MTU per window:
//!   `cwnd += MTU·acked/cwnd`.
//! * Starts at `max_cwnd` (RDMA NICs start at line rate), α starts at 1.
//!
//! Formats: `cwnd` bytes Q24.8, α Q16.16. The window's acknowledged and
//! marked bytes are 32-bit counters that saturate; PSNs are 24-bit
//! (RoCEv2's), compared by wrapping distance; the first ACK after `new`
//! ends a window whatever its PSN. The RTL (`hw/src/cc.rs`) is this, bit
//! for bit.

use crate::{Q16_ONE, Q8, Q8_SHIFT};

/// DCTCP's `g` as a right shift: 1/16, the DCTCP paper's.
pub const G_SHIFT: u32 = 4;

/// DCTCP parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DctcpParams {
    /// MTU bytes.
    pub mtu: u32,
    /// g as a right shift (4 → 1/16).
    pub g_shift: u32,
    /// Maximum window, Q24.8.
    pub max_cwnd: Q8,
    /// Minimum window, Q24.8.
    pub min_cwnd: Q8,
}

/// DCTCP state for one connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dctcp {
    /// Parameters.
    pub p: DctcpParams,
    /// Window, bytes Q24.8.
    pub cwnd: Q8,
    /// α, Q16.16.
    pub alpha_q16: u32,
    acked: u32,
    marked: u32,
    /// The PSN whose acknowledgement ends the window (`None`: the next ACK does).
    window_end_psn: Option<u32>,
    cut_this_window: bool,
}

/// What one ACK did to the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DctcpAction {
    /// No ECN echo: additive increase.
    Increase,
    /// The window's first ECN echo: `cwnd·(1 − α/2)`.
    Cut,
    /// An ECN echo in a window already cut: no change.
    Hold,
}

/// 24-bit PSN mask.
const PSN_MASK: u32 = 0xFF_FFFF;

/// `a` is at or past `b` in 24-bit serial arithmetic.
fn psn_ge(a: u32, b: u32) -> bool {
    a.wrapping_sub(b) & PSN_MASK < 0x80_0000
}

impl Dctcp {
    /// New connection at `max_cwnd`.
    pub fn new(p: DctcpParams) -> Self {
        Self {
            p,
            cwnd: p.max_cwnd,
            alpha_q16: Q16_ONE,
            acked: 0,
            marked: 0,
            window_end_psn: None,
            cut_this_window: false,
        }
    }

    /// Window in whole bytes.
    pub fn cwnd_bytes(&self) -> u64 {
        (self.cwnd >> Q8_SHIFT) as u64
    }

    /// One ACK: `acked_bytes` newly acknowledged (below 2^32), `ecn` echo,
    /// cumulative ACK point `snd_una` and next PSN to send `snd_nxt` (window
    /// boundaries; 24-bit PSNs).
    pub fn on_ack(&mut self, acked_bytes: u64, ecn: bool, snd_una: u32, snd_nxt: u32) -> DctcpAction {
        let acked_bytes = acked_bytes.min(u32::MAX as u64);
        self.acked = self.acked.saturating_add(acked_bytes as u32);
        let action = if ecn {
            self.marked = self.marked.saturating_add(acked_bytes as u32);
            if !self.cut_this_window {
                let f = Q16_ONE as u64 - (self.alpha_q16 as u64 >> 1);
                self.cwnd = ((self.cwnd as u64 * f) >> 16) as u32;
                self.cut_this_window = true;
                DctcpAction::Cut
            } else {
                DctcpAction::Hold
            }
        } else {
            let inc = ((self.p.mtu as u64) << Q8_SHIFT) * acked_bytes / ((self.cwnd as u64 >> Q8_SHIFT).max(1));
            self.cwnd = (self.cwnd as u64 + inc).min(u32::MAX as u64) as u32;
            DctcpAction::Increase
        };
        if self.window_end_psn.is_none_or(|end| psn_ge(snd_una, end)) {
            let frac = ((self.marked as u64) << 16).checked_div(self.acked as u64).unwrap_or(0);
            let a = self.alpha_q16 as u64;
            self.alpha_q16 = (a - (a >> self.p.g_shift) + (frac >> self.p.g_shift)) as u32;
            self.acked = 0;
            self.marked = 0;
            let next = snd_una.wrapping_add(1) & PSN_MASK;
            self.window_end_psn = Some(if psn_ge(snd_nxt, next) { snd_nxt & PSN_MASK } else { next });
            self.cut_this_window = false;
        }
        self.cwnd = self.cwnd.clamp(self.p.min_cwnd, self.p.max_cwnd);
        action
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> DctcpParams {
        DctcpParams { mtu: 1000, g_shift: 4, max_cwnd: 100_000 << 8, min_cwnd: 1000 << 8 }
    }

    #[test]
    fn alpha_converges_to_marked_fraction() {
        let mut d = Dctcp::new(p());
        d.cwnd = 50_000 << 8;
        // every window: half the bytes marked, but α only moves once a window
        for w in 0..200u32 {
            let base = w * 10;
            for i in 0..10 {
                d.on_ack(1000, i % 2 == 0, base + i, base + 10);
            }
        }
        let a = d.alpha_q16 as f64 / 65536.0; // test-only float for the check
        assert!((a - 0.5).abs() < 0.02, "alpha {a}");
    }

    #[test]
    fn cut_once_per_window_by_alpha_half() {
        let mut d = Dctcp::new(p());
        d.cwnd = 80_000 << 8;
        d.window_end_psn = Some(100);
        d.alpha_q16 = Q16_ONE / 2;
        d.on_ack(1000, true, 1, 100);
        assert_eq!(d.cwnd >> 8, 60_000); // × (1 − 0.25)
        d.on_ack(1000, true, 2, 100);
        assert_eq!(d.cwnd >> 8, 60_000); // same window: no second cut
    }

    #[test]
    fn additive_increase_one_mtu_per_window() {
        let mut d = Dctcp::new(p());
        d.cwnd = 20_000 << 8;
        d.window_end_psn = Some(1000);
        for i in 0..20 {
            d.on_ack(1000, false, i, 1000);
        }
        let w = d.cwnd >> 8;
        assert!((20_900..=21_000).contains(&w), "{w}");
    }

    #[test]
    fn window_ends_across_the_psn_wrap() {
        let mut d = Dctcp::new(p());
        d.cwnd = 50_000 << 8;
        // The first ACK ends the (empty) first window; the next ends at snd_nxt, past the 24-bit wrap.
        d.on_ack(1000, false, 0xFF_FFF0, 0x00_0010);
        assert_eq!(d.window_end_psn, Some(0x10));
        assert_eq!(d.on_ack(1000, true, 0xFF_FFF8, 0x00_0010), DctcpAction::Cut);
        assert_eq!(d.on_ack(1000, true, 0x00_0002, 0x00_0010), DctcpAction::Hold, "still the same window");
        d.on_ack(1000, false, 0x00_0010, 0x00_0020);
        assert_eq!(d.window_end_psn, Some(0x20), "the window ended at its PSN");
        assert!(!d.cut_this_window);
    }

    #[test]
    fn window_bounded() {
        let mut d = Dctcp::new(p());
        for i in 0..1000 {
            d.on_ack(1000, false, i, i + 1);
        }
        assert_eq!(d.cwnd, p().max_cwnd);
        for i in 1000..2000 {
            d.on_ack(1000, true, i, i + 1);
        }
        assert_eq!(d.cwnd, p().min_cwnd);
    }
}
