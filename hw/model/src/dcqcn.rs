//! DCQCN (Zhu et al., SIGCOMM 2015): RoCEv2's rate-based congestion control,
//! the baseline STrack is compared with (§4.1).
//!
//! **Notification point** (receiver): on an ECN-CE data packet, send a CNP,
//! at most one per `cnp_interval_ns` (50 µs) per flow.
//!
//! **Reaction point** (sender), rate `Rc` (current) and `Rt` (target):
//! * on a CNP: `Rt ← Rc`, `Rc ← Rc·(1 − α/2)`, `α ← (1 − g)·α + g`, and reset
//!   the increase timer, byte counter and stage counters;
//! * α timer (every `alpha_timer_ns` = 55 µs without a CNP): `α ← (1 − g)·α`;
//! * rate-increase events — the increase timer (`timer_ns` = 55 µs) or the
//!   byte counter (`byte_counter` bytes sent) — advance counters `T` and `BC`:
//!   fast recovery while `max(T, BC) < F` (`Rc ← (Rt + Rc)/2`); additive
//!   increase when one counter reached F (`Rt += R_AI`); hyper increase when
//!   both did (`Rt += R_HAI`), then `Rc ← (Rt + Rc)/2`. Rates are capped at
//!   line rate and floored at `min_rate`.
//!
//! Formats: rates in Mbit/s (`u32`), α in Q16.16, g = 2⁻`g_shift`.
//! Timers are evaluated lazily by [`DcqcnRp::advance`] so the model has no
//! background clock (the hardware's timer wheel fires the same events).

use crate::{Nanos, Q16_ONE};

/// DCQCN parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DcqcnParams {
    /// Line rate, Mbit/s.
    pub line_rate_mbps: u32,
    /// Floor, Mbit/s.
    pub min_rate_mbps: u32,
    /// g = 2^-g_shift (1/256).
    pub g_shift: u32,
    /// Additive increase step, Mbit/s.
    pub rai_mbps: u32,
    /// Hyper increase step, Mbit/s.
    pub rhai_mbps: u32,
    /// Rate-increase timer, ns.
    pub timer_ns: u64,
    /// Byte counter, bytes.
    pub byte_counter: u64,
    /// Fast-recovery stages F.
    pub f: u32,
    /// α update timer, ns.
    pub alpha_timer_ns: u64,
    /// Minimum CNP spacing at the notification point, ns.
    pub cnp_interval_ns: u64,
}

impl DcqcnParams {
    /// Defaults of the DCQCN paper, steps scaled with the line rate
    /// (R_AI = line/1000, R_HAI = line/100; the paper's 40 Mb/s at 40 Gb/s).
    pub fn for_line_rate(line_rate_gbps: u32) -> Self {
        let line = line_rate_gbps * 1000;
        Self {
            line_rate_mbps: line,
            min_rate_mbps: 100,
            g_shift: 8,
            rai_mbps: (line / 1000).max(1),
            rhai_mbps: (line / 100).max(1),
            timer_ns: 55_000,
            byte_counter: 10 * 1024 * 1024,
            f: 5,
            alpha_timer_ns: 55_000,
            cnp_interval_ns: 50_000,
        }
    }

    /// NVIDIA ConnectX firmware defaults for the reaction point (mlxconfig
    /// `DCE_TCP_RTT` = 1 µs α period, `RPG_TIME_RESET` = 300 µs,
    /// `RPG_BYTE_RESET` = 32767 B, `RPG_THRESHOLD` = 1, `RPG_AI_RATE` = 5
    /// Mb/s, `RPG_HAI_RATE` = 50 Mb/s; g = 1/256 for `DCE_TCP_G` = 1019/1024),
    /// with the DCQCN paper's 50 µs CNP spacing at the notification point
    /// (ConnectX: 4 µs; see `docs/netsim-results.md` for why). α decays
    /// within microseconds, so a cut is deep only while CNPs keep coming, and
    /// the 32 KB byte counter brings a cut flow back within a few µs.
    pub fn connectx(line_rate_gbps: u32) -> Self {
        Self {
            rai_mbps: 5,
            rhai_mbps: 50,
            timer_ns: 300_000,
            byte_counter: 32_767,
            f: 1,
            alpha_timer_ns: 1_000,
            ..Self::for_line_rate(line_rate_gbps)
        }
    }

    /// htsim's DCQCN source (`DCQCNSrc`): the DCQCN paper's timers, byte
    /// counter, F and g, with increase steps of R_AI = line/20 and R_HAI =
    /// line/10 (5 and 10 Gb/s at 100 Gb/s; 20 and 40 Gb/s at 400 Gb/s) — a
    /// flow cut by a CNP regains its rate in tens of µs, not milliseconds.
    pub fn htsim(line_rate_gbps: u32) -> Self {
        let line = line_rate_gbps * 1000;
        Self { rai_mbps: (line / 20).max(1), rhai_mbps: (line / 10).max(1), ..Self::for_line_rate(line_rate_gbps) }
    }
}

/// Reaction point (sender) state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DcqcnRp {
    /// Parameters.
    pub p: DcqcnParams,
    /// Current rate Rc, Mbit/s.
    pub rc: u32,
    /// Target rate Rt, Mbit/s.
    pub rt: u32,
    /// α, Q16.16.
    pub alpha_q16: u32,
    t_count: u32,
    bc_count: u32,
    bytes: u64,
    next_timer: Nanos,
    next_alpha: Nanos,
    /// CNPs received.
    pub cnps: u64,
}

impl DcqcnRp {
    /// Starts at line rate, α = 1.
    pub fn new(p: DcqcnParams, now: Nanos) -> Self {
        Self {
            p,
            rc: p.line_rate_mbps,
            rt: p.line_rate_mbps,
            alpha_q16: Q16_ONE,
            t_count: 0,
            bc_count: 0,
            bytes: 0,
            next_timer: now + p.timer_ns,
            next_alpha: now + p.alpha_timer_ns,
            cnps: 0,
        }
    }

    /// A CNP arrived at `now`.
    pub fn on_cnp(&mut self, now: Nanos) {
        self.advance(now);
        self.cnps += 1;
        self.rt = self.rc;
        let f = Q16_ONE as u64 - (self.alpha_q16 as u64 >> 1);
        self.rc = (((self.rc as u64 * f) >> 16) as u32).max(self.p.min_rate_mbps);
        let a = self.alpha_q16;
        self.alpha_q16 = a - (a >> self.p.g_shift) + (Q16_ONE >> self.p.g_shift);
        self.t_count = 0;
        self.bc_count = 0;
        self.bytes = 0;
        self.next_timer = now + self.p.timer_ns;
        self.next_alpha = now + self.p.alpha_timer_ns;
    }

    fn increase(&mut self) {
        let f = self.p.f;
        if self.t_count.max(self.bc_count) < f {
            // fast recovery: Rt unchanged
        } else if self.t_count >= f && self.bc_count >= f {
            self.rt = self.rt.saturating_add(self.p.rhai_mbps);
        } else {
            self.rt = self.rt.saturating_add(self.p.rai_mbps);
        }
        self.rt = self.rt.min(self.p.line_rate_mbps);
        self.rc = ((self.rt as u64 + self.rc as u64) / 2) as u32;
    }

    /// `bytes` were sent at `now` (byte counter).
    pub fn on_sent(&mut self, now: Nanos, bytes: u64) {
        self.advance(now);
        self.bytes += bytes;
        while self.bytes >= self.p.byte_counter {
            self.bytes -= self.p.byte_counter;
            self.increase();
            self.bc_count += 1;
        }
    }

    /// Fires every timer due by `now`, in time order.
    pub fn advance(&mut self, now: Nanos) {
        loop {
            let t = self.next_timer.min(self.next_alpha);
            if t > now {
                break;
            }
            if self.next_alpha <= self.next_timer {
                let a = self.alpha_q16;
                self.alpha_q16 = a - (a >> self.p.g_shift);
                self.next_alpha += self.p.alpha_timer_ns;
            } else {
                self.increase();
                self.t_count += 1;
                self.next_timer += self.p.timer_ns;
            }
            if self.rc >= self.p.line_rate_mbps && self.rt >= self.p.line_rate_mbps {
                // at line rate nothing further can change but α: jump ahead
                // (each timer by its own period; α decays once per α period,
                // at most 4096 times — it is 0 long before)
                let skip = now.saturating_sub(self.next_timer) / self.p.timer_ns;
                if skip > 64 {
                    self.next_timer += skip * self.p.timer_ns;
                }
                let decays = now.saturating_sub(self.next_alpha) / self.p.alpha_timer_ns;
                if decays > 64 {
                    for _ in 0..decays.min(4096) {
                        let a = self.alpha_q16;
                        self.alpha_q16 = a - (a >> self.p.g_shift);
                    }
                    self.next_alpha += decays * self.p.alpha_timer_ns;
                }
            }
        }
    }

    /// Current rate, Mbit/s.
    pub fn rate_mbps(&self) -> u32 {
        self.rc
    }

    /// Serialization gap at the current rate for `bytes`, in ps.
    pub fn gap_ps(&self, bytes: u64) -> u64 {
        bytes * 8 * 1_000_000 / self.rc.max(1) as u64
    }
}

/// Notification point (receiver) state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DcqcnNp {
    last_cnp: Option<Nanos>,
    /// CNPs generated.
    pub cnps: u64,
}

impl DcqcnNp {
    /// A data packet arrived; returns true if a CNP must be sent.
    pub fn on_data(&mut self, now: Nanos, ecn: bool, interval_ns: u64) -> bool {
        if !ecn {
            return false;
        }
        match self.last_cnp {
            Some(t) if now < t + interval_ns => false,
            _ => {
                self.last_cnp = Some(now);
                self.cnps += 1;
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cnp_cuts_by_alpha_half_and_raises_alpha() {
        let p = DcqcnParams::for_line_rate(400);
        let mut rp = DcqcnRp::new(p, 0);
        rp.on_cnp(1_000);
        assert_eq!(rp.rt, 400_000);
        assert_eq!(rp.rc, 200_000); // α = 1 → halve
        assert_eq!(rp.alpha_q16, Q16_ONE); // (1−g)·1 + g = 1
        rp.alpha_q16 = Q16_ONE / 2;
        rp.on_cnp(2_000);
        assert_eq!(rp.rc, 150_000); // × (1 − 0.25)
        assert_eq!(rp.alpha_q16, 32768 - 128 + 256);
    }

    #[test]
    fn alpha_decays_without_cnp() {
        let p = DcqcnParams::for_line_rate(400);
        let mut rp = DcqcnRp::new(p, 0);
        rp.on_cnp(0);
        let a0 = rp.alpha_q16;
        rp.advance(55_000);
        assert_eq!(rp.alpha_q16, a0 - (a0 >> 8));
    }

    #[test]
    fn fast_recovery_then_additive_then_hyper() {
        let p = DcqcnParams::for_line_rate(400);
        let mut rp = DcqcnRp::new(p, 0);
        rp.on_cnp(0); // rc 200G, rt 400G
        rp.on_cnp(1); // rt 200G, rc 100G
        assert_eq!((rp.rt, rp.rc), (200_000, 100_000));
        // five timer events: fast recovery halves the gap each time
        rp.advance(1 + 5 * 55_000);
        assert_eq!(rp.rt, 200_000);
        assert_eq!(rp.rc, 200_000 - 100_000 / 32);
        // sixth: additive increase of R_AI
        rp.advance(1 + 6 * 55_000);
        assert_eq!(rp.rt, 200_000 + p.rai_mbps);
        // byte counter reaching F too: hyper increase
        rp.on_sent(1 + 6 * 55_000, 6 * p.byte_counter); // BC stages 0..4 additive, 5th hyper
        assert!(rp.rt >= 200_000 + p.rai_mbps + p.rhai_mbps);
        assert!(rp.rc <= p.line_rate_mbps);
    }

    #[test]
    fn np_paces_cnps() {
        let mut np = DcqcnNp::default();
        assert!(!np.on_data(0, false, 50_000));
        assert!(np.on_data(10, true, 50_000));
        assert!(!np.on_data(40_000, true, 50_000));
        assert!(np.on_data(50_010, true, 50_000));
        assert_eq!(np.cnps, 2);
    }

    #[test]
    fn htsim_steps_are_a_twentieth_and_a_tenth_of_line_rate() {
        let p = DcqcnParams::htsim(400);
        assert_eq!((p.rai_mbps, p.rhai_mbps), (20_000, 40_000));
        let q = DcqcnParams::for_line_rate(400);
        assert_eq!(p, DcqcnParams { rai_mbps: 20_000, rhai_mbps: 40_000, ..q });
        // after two cuts and five fast-recovery stages, one additive step
        // moves the target by R_AI
        let mut rp = DcqcnRp::new(p, 0);
        rp.on_cnp(0);
        rp.on_cnp(1);
        rp.advance(1 + 6 * 55_000);
        assert_eq!(rp.rt, 200_000 + 20_000);
    }

    #[test]
    fn connectx_alpha_decays_in_microseconds_and_bytes_bring_the_rate_back() {
        let p = DcqcnParams::connectx(400);
        assert_eq!((p.rai_mbps, p.rhai_mbps, p.f, p.byte_counter), (5, 50, 1, 32_767));
        assert_eq!((p.timer_ns, p.alpha_timer_ns, p.cnp_interval_ns), (300_000, 1_000, 50_000));
        let mut rp = DcqcnRp::new(p, 0);
        rp.on_cnp(0); // α = 1: halve
        assert_eq!((rp.rt, rp.rc), (400_000, 200_000));
        // 100 µs later α has decayed by (255/256)^100 ≈ 0.68
        rp.advance(100_000);
        assert!((43_000..46_000).contains(&rp.alpha_q16), "α {}", rp.alpha_q16);
        // ten byte-counter stages (320 KB, under 13 µs at 200 Gb/s): fast
        // recovery once, then additive steps — within 0.1 % of line rate
        rp.on_sent(100_000, 10 * 32_767);
        assert!(rp.rc > 399_000, "rc {}", rp.rc);
    }

    #[test]
    fn gap_matches_rate() {
        let p = DcqcnParams::for_line_rate(400);
        let rp = DcqcnRp::new(p, 0);
        // 4096 B at 400 Gb/s = 81.92 ns
        assert_eq!(rp.gap_ps(4096), 81_920);
    }
}
