//! Sender loss detection and selective retransmission (STrack §3.3.2; used
//! single-path with an immediate threshold for SRNIC's selective repeat).
//!
//! The sender tracks, relative to the cumulative ACK point `snd_una`, which of
//! the next 256 packets were selectively acknowledged (`sacked`) and which are
//! declared lost and wait for retransmission (`lost`). New data is limited to
//! `snd_una + window_pkts` (≤ 256, the receiver's bitmap).
//!
//! In-flight bytes follow the paper's equation (1)–(2):
//! `inflight = bytes_sent − bytes_recvd − bytes_claimed_retransmit`, where
//! `bytes_sent` counts every transmission, `bytes_recvd` is the receiver's
//! duplicate-free count echoed in SACKs, and `bytes_claimed_retransmit` counts
//! bytes declared lost. A declared-lost packet that turns out to be received
//! before it was resent has its claim withdrawn (else it would be counted out
//! twice). A packet may be sent when `inflight < cwnd`; retransmissions go
//! first.
//!
//! Loss is inferred (entering *loss recovery*) on:
//! 1. **OOO count**: a SACK's `ooo_count` exceeds `max(cwnd_packets,
//!    ooo_min_threshold)` (STrack: min 5) — or exceeds `ooo_min_threshold`
//!    alone when `ooo_use_cwnd` is false (SRNIC single path: 0, i.e. the first
//!    out-of-order arrival, as SRNIC's NAK). Every un-SACKed packet between
//!    `snd_una` and the highest PSN known received is declared lost; recovery
//!    ends once `snd_una` passes that PSN. SACKs older than what the sender
//!    already knows (`epsn < snd_una`) do not trigger it.
//! 2. **Probe**: no SACK for `probe_after_ns` (3 network RTTs) with data
//!    outstanding → send a probe (repeated every `probe_after_ns` while
//!    unanswered). If its SACK returns with RTT < `probe_rtt_limit_ns` and no
//!    other SACK arrived since the probe was sent (Algo 1 line 10), every
//!    un-SACKed packet in flight is declared lost. Algo 1 compares `delay` —
//!    the name Algo 4 uses for the *queueing* delay `rtt − base_rtt` — with
//!    `2·net_base_rtt`, so the limit is `3·net_base_rtt` expressed as an RTT
//!    (the text's "the measured RTT is small"); reading it as `rtt <
//!    2·net_base_rtt` made every probe fail behind a last-hop queue held at
//!    the target delay, leaving tail losses to the timeout.
//! 3. **Timeout**: no advance of `snd_una` for `rto_ns` → every un-SACKed
//!    packet in flight is declared lost.
//!
//! A packet lost again while in recovery is recovered by the probe (which
//! acts during recovery too: a quick reply with nothing else received proves
//! the network drained) or the timeout; recovery is not re-entered from OOO
//! counts until it ends.

use crate::sack::{Bitmap256, Sack, RX_BITMAP_BITS};
use crate::Nanos;

/// Loss-detection configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SrConfig {
    /// Payload bytes per full packet.
    pub mtu: u32,
    /// Maximum packets beyond `snd_una` (≤ 256).
    pub window_pkts: u32,
    /// Minimum OOO threshold (STrack: 5; SRNIC: 0).
    pub ooo_min_threshold: u32,
    /// Use `max(cwnd_packets, min)` as the threshold (STrack) or `min` (SRNIC).
    pub ooo_use_cwnd: bool,
    /// Silence before a probe, ns (3 × net_base_rtt); 0 disables probes.
    pub probe_after_ns: u64,
    /// A probe's SACK with RTT below this triggers recovery (3 × net_base_rtt:
    /// queueing delay below 2 × net_base_rtt).
    pub probe_rtt_limit_ns: u64,
    /// Retransmission timeout, ns.
    pub rto_ns: u64,
}

/// Kind of a packet the sender wants to transmit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxKind {
    /// First transmission.
    New,
    /// Selective retransmission.
    Retransmit,
}

/// A transmission decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxPkt {
    /// PSN.
    pub psn: u32,
    /// Payload bytes.
    pub bytes: u32,
    /// New or retransmission.
    pub kind: TxKind,
    /// Last packet of the message: request an ACK.
    pub ack_req: bool,
}

/// What entered loss recovery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossTrigger {
    /// OOO count over threshold.
    Ooo,
    /// Probe answered quickly with nothing else received.
    Probe,
    /// Retransmission timeout.
    Timeout,
}

/// Timer outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerAction {
    /// Send a probe asking for a SACK based at `sack_base`.
    SendProbe {
        /// Requested SACK base (= snd_una).
        sack_base: u32,
    },
    /// Timeout: packets were declared lost.
    Timeout,
}

/// Result of processing one SACK.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckOutcome {
    /// Newly received bytes (delta of `bytes_recvd`).
    pub newly_recvd: u64,
    /// `snd_una` advanced.
    pub cum_advanced: bool,
    /// Loss recovery was entered by this SACK.
    pub entered_recovery: Option<LossTrigger>,
    /// The SACK answered our outstanding probe.
    pub probe_reply: bool,
}

/// Counters for reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SrStats {
    /// Packets retransmitted.
    pub retransmits: u64,
    /// Probes sent.
    pub probes: u64,
    /// Timeouts.
    pub timeouts: u64,
    /// Recoveries entered from OOO counts.
    pub ooo_recoveries: u64,
    /// Recoveries entered from probes.
    pub probe_recoveries: u64,
}

/// Selective-repeat sender state for one message / connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SrSender {
    /// Configuration.
    pub cfg: SrConfig,
    /// Message length in bytes.
    pub total_bytes: u64,
    /// Message length in packets.
    pub total_pkts: u32,
    /// Cumulative ACK point.
    pub snd_una: u32,
    /// Next new PSN.
    pub snd_nxt: u32,
    sacked: Bitmap256,
    lost: Bitmap256,
    /// Every transmission's bytes.
    pub bytes_sent: u64,
    /// Receiver's duplicate-free byte count (max echoed).
    pub bytes_recvd: u64,
    /// Bytes declared lost.
    pub bytes_claimed: u64,
    /// One past the highest PSN known received.
    pub hi_rcvd: u32,
    /// Loss recovery: last PSN to recover.
    pub recovery_end: Option<u32>,
    /// Time of the last SACK.
    pub last_ack_ts: Nanos,
    /// Outstanding probe's send time.
    pub probe_sent_ts: Option<Nanos>,
    acks_since_probe: u32,
    /// Time `snd_una` last advanced (RTO reference).
    pub last_progress_ts: Nanos,
    /// Counters.
    pub stats: SrStats,
}

impl SrSender {
    /// A sender for a `total_bytes` message starting at `now`.
    pub fn new(cfg: SrConfig, total_bytes: u64, now: Nanos) -> Self {
        assert!(cfg.window_pkts >= 1 && cfg.window_pkts <= RX_BITMAP_BITS);
        let total_pkts = total_bytes.div_ceil(cfg.mtu as u64).max(1) as u32;
        Self {
            cfg,
            total_bytes,
            total_pkts,
            snd_una: 0,
            snd_nxt: 0,
            sacked: Bitmap256::default(),
            lost: Bitmap256::default(),
            bytes_sent: 0,
            bytes_recvd: 0,
            bytes_claimed: 0,
            hi_rcvd: 0,
            recovery_end: None,
            last_ack_ts: now,
            probe_sent_ts: None,
            acks_since_probe: 0,
            last_progress_ts: now,
            stats: SrStats::default(),
        }
    }

    /// Payload bytes of packet `psn`.
    pub fn pkt_bytes(&self, psn: u32) -> u32 {
        let off = psn as u64 * self.cfg.mtu as u64;
        (self.total_bytes.saturating_sub(off)).min(self.cfg.mtu as u64).max(if self.total_bytes == 0 { 0 } else { 1 })
            as u32
    }

    /// Equation (1)–(2).
    pub fn inflight(&self) -> u64 {
        self.bytes_sent.saturating_sub(self.bytes_recvd).saturating_sub(self.bytes_claimed)
    }

    /// Every packet acknowledged cumulatively.
    pub fn is_complete(&self) -> bool {
        self.snd_una >= self.total_pkts
    }

    /// Packets waiting for retransmission.
    pub fn lost_pending(&self) -> u32 {
        self.lost.count()
    }

    /// Is there anything to send (ignoring the window)?
    pub fn has_data(&self) -> bool {
        self.lost.count() > 0 || (self.snd_nxt < self.total_pkts && self.snd_nxt < self.snd_una + self.cfg.window_pkts)
    }

    /// Next packet to transmit if the window `cwnd_bytes` allows.
    pub fn next_tx(&mut self, cwnd_bytes: u64) -> Option<TxPkt> {
        if self.inflight() >= cwnd_bytes {
            return None;
        }
        if let Some(i) = self.lost.first_set(0, RX_BITMAP_BITS) {
            self.lost.clear(i);
            let psn = self.snd_una + i;
            let bytes = self.pkt_bytes(psn);
            self.bytes_sent += bytes as u64;
            self.stats.retransmits += 1;
            return Some(TxPkt { psn, bytes, kind: TxKind::Retransmit, ack_req: psn + 1 == self.total_pkts });
        }
        if self.snd_nxt < self.total_pkts && self.snd_nxt < self.snd_una + self.cfg.window_pkts {
            let psn = self.snd_nxt;
            self.snd_nxt += 1;
            let bytes = self.pkt_bytes(psn);
            self.bytes_sent += bytes as u64;
            return Some(TxPkt { psn, bytes, kind: TxKind::New, ack_req: psn + 1 == self.total_pkts });
        }
        None
    }

    fn declare_lost(&mut self, upto: u32) {
        // every un-SACKed, not-yet-declared packet in [snd_una, upto)
        let end = upto.min(self.snd_nxt).saturating_sub(self.snd_una).min(RX_BITMAP_BITS);
        for i in 0..end {
            if !self.sacked.get(i) && !self.lost.get(i) {
                self.lost.set(i);
                self.bytes_claimed += self.pkt_bytes(self.snd_una + i) as u64;
            }
        }
    }

    fn enter_recovery(&mut self, upto: u32) {
        self.declare_lost(upto);
        let end = upto.saturating_sub(1).max(self.snd_una);
        self.recovery_end = Some(self.recovery_end.map_or(end, |e| e.max(end)));
    }

    /// Processes one SACK received at `now` with the current window in packets.
    pub fn on_ack(&mut self, now: Nanos, s: &Sack, cwnd_pkts: u32) -> AckOutcome {
        let mut out = AckOutcome::default();
        if s.bytes_recvd > self.bytes_recvd {
            out.newly_recvd = s.bytes_recvd - self.bytes_recvd;
            self.bytes_recvd = s.bytes_recvd;
        }
        self.last_ack_ts = now;
        if s.probe_reply && self.probe_sent_ts.is_some() {
            out.probe_reply = true;
        } else {
            self.acks_since_probe += 1;
        }
        let stale = s.epsn < self.snd_una;
        if s.epsn > self.snd_una {
            let delta = s.epsn - self.snd_una;
            // withdraw claims on packets leaving the window still marked lost
            for i in 0..delta.min(RX_BITMAP_BITS) {
                if self.lost.get(i) {
                    self.bytes_claimed = self.bytes_claimed.saturating_sub(self.pkt_bytes(self.snd_una + i) as u64);
                }
            }
            self.sacked.shr(delta);
            self.lost.shr(delta);
            self.snd_una = s.epsn;
            self.snd_nxt = self.snd_nxt.max(self.snd_una);
            self.last_progress_ts = now;
            out.cum_advanced = true;
        }
        self.hi_rcvd = self.hi_rcvd.max(s.epsn);
        let mut bm = s.bitmap;
        while bm != 0 {
            let i = bm.trailing_zeros();
            bm &= bm - 1;
            let psn = s.sack_base + i;
            if psn >= self.snd_una && psn < self.snd_nxt && psn - self.snd_una < RX_BITMAP_BITS {
                let off = psn - self.snd_una;
                self.sacked.set(off);
                if self.lost.get(off) {
                    self.lost.clear(off);
                    self.bytes_claimed = self.bytes_claimed.saturating_sub(self.pkt_bytes(psn) as u64);
                }
            }
            if psn < self.snd_nxt {
                self.hi_rcvd = self.hi_rcvd.max(psn + 1);
            }
        }
        if let Some(end) = self.recovery_end {
            if self.snd_una > end {
                self.recovery_end = None;
            }
        }
        if out.probe_reply {
            let rtt = now.saturating_sub(s.ts_echo);
            self.probe_sent_ts = None;
            // also during recovery: a quick, lonely probe reply means the
            // network is drained, so retransmissions lost again are resent
            if rtt < self.cfg.probe_rtt_limit_ns && self.acks_since_probe == 0 && self.snd_una < self.snd_nxt {
                self.enter_recovery(self.snd_nxt);
                self.stats.probe_recoveries += 1;
                out.entered_recovery = Some(LossTrigger::Probe);
            }
        }
        if out.entered_recovery.is_none() && !stale && self.recovery_end.is_none() {
            let thr = if self.cfg.ooo_use_cwnd {
                cwnd_pkts.max(self.cfg.ooo_min_threshold)
            } else {
                self.cfg.ooo_min_threshold
            };
            if s.ooo_count > thr && self.hi_rcvd > self.snd_una {
                self.enter_recovery(self.hi_rcvd);
                self.stats.ooo_recoveries += 1;
                out.entered_recovery = Some(LossTrigger::Ooo);
            }
        }
        out
    }

    /// Earliest time at which [`SrSender::on_timer`] may act, if any.
    pub fn next_deadline(&self) -> Option<Nanos> {
        if self.is_complete() || self.snd_una >= self.snd_nxt {
            return None;
        }
        let rto = self.last_progress_ts + self.cfg.rto_ns;
        if self.cfg.probe_after_ns == 0 {
            return Some(rto);
        }
        let probe = match self.probe_sent_ts {
            Some(t) => t + self.cfg.probe_after_ns,
            None => self.last_ack_ts + self.cfg.probe_after_ns,
        };
        Some(rto.min(probe))
    }

    /// Timer processing at `now`.
    pub fn on_timer(&mut self, now: Nanos) -> Option<TimerAction> {
        if self.is_complete() || self.snd_una >= self.snd_nxt {
            return None;
        }
        if now >= self.last_progress_ts + self.cfg.rto_ns {
            self.declare_lost(self.snd_nxt);
            self.recovery_end = Some(self.snd_nxt - 1);
            self.last_progress_ts = now;
            self.stats.timeouts += 1;
            return Some(TimerAction::Timeout);
        }
        if self.cfg.probe_after_ns > 0 {
            let due = match self.probe_sent_ts {
                Some(t) => t + self.cfg.probe_after_ns,
                None => self.last_ack_ts + self.cfg.probe_after_ns,
            };
            if now >= due {
                self.probe_sent_ts = Some(now);
                self.acks_since_probe = 0;
                self.stats.probes += 1;
                return Some(TimerAction::SendProbe { sack_base: self.snd_una });
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> SrConfig {
        SrConfig {
            mtu: 1000,
            window_pkts: 256,
            ooo_min_threshold: 5,
            ooo_use_cwnd: true,
            probe_after_ns: 24_000,
            probe_rtt_limit_ns: 16_000,
            rto_ns: 500_000,
        }
    }

    fn sack(epsn: u32, base: u32, bitmap: u64, bytes: u64, ooo: u32) -> Sack {
        Sack { epsn, sack_base: base, bitmap, bytes_recvd: bytes, ooo_count: ooo, ..Default::default() }
    }

    fn send_all(s: &mut SrSender, n: usize) -> Vec<TxPkt> {
        (0..n).filter_map(|_| s.next_tx(u64::MAX)).collect()
    }

    #[test]
    fn packets_sized_by_mtu_last_one_short_and_acked() {
        let mut s = SrSender::new(cfg(), 2500, 0);
        let v = send_all(&mut s, 5);
        assert_eq!(v.iter().map(|p| p.bytes).collect::<Vec<_>>(), vec![1000, 1000, 500]);
        assert!(v[2].ack_req && !v[1].ack_req);
        assert_eq!(s.inflight(), 2500);
        s.on_ack(10, &sack(3, 3, 0, 2500, 0), 10);
        assert!(s.is_complete());
        assert_eq!(s.inflight(), 0);
    }

    #[test]
    fn window_limits_inflight() {
        let mut s = SrSender::new(cfg(), 100_000, 0);
        let mut n = 0;
        while s.next_tx(3_500).is_some() {
            n += 1;
        }
        assert_eq!(n, 4); // sends while inflight < cwnd
        s.on_ack(1, &sack(2, 2, 0, 2000, 0), 3);
        assert!(s.next_tx(3_500).is_some());
    }

    #[test]
    fn ooo_threshold_is_max_of_cwnd_and_min() {
        // "max of the current congestion window's worth of packet number and min_threshold"
        let mut s = SrSender::new(cfg(), 100_000, 0);
        send_all(&mut s, 30);
        // PSN 0 lost; 1..=10 arrived: ooo 10, cwnd 10 packets → not yet (must exceed)
        let bm: u64 = ((1u64 << 10) - 1) << 1;
        let o = s.on_ack(5, &sack(0, 0, bm, 10_000, 10), 10);
        assert_eq!(o.entered_recovery, None);
        let o = s.on_ack(6, &sack(0, 0, bm | 1 << 11, 11_000, 11), 10);
        assert_eq!(o.entered_recovery, Some(LossTrigger::Ooo));
        // only PSN 0 is un-SACKed below the highest received (11)
        assert_eq!(s.lost_pending(), 1);
        assert_eq!(s.recovery_end, Some(11));
        // with a tiny window the minimum (5) applies
        let mut t = SrSender::new(cfg(), 100_000, 0);
        send_all(&mut t, 30);
        assert_eq!(t.on_ack(5, &sack(0, 0, 0b11110, 4_000, 4), 1).entered_recovery, None);
        assert_eq!(t.on_ack(5, &sack(0, 0, 0b1111110, 6_000, 6), 1).entered_recovery, Some(LossTrigger::Ooo));
    }

    #[test]
    fn selective_retransmission_resends_only_holes_and_exits_recovery() {
        let mut s = SrSender::new(cfg(), 20_000, 0);
        send_all(&mut s, 20);
        // 0 and 3 lost; 1,2,4..=9 received
        let bm: u64 = 0b11_1111_0110;
        let o = s.on_ack(5, &sack(0, 0, bm, 8_000, 8), 1);
        assert_eq!(o.entered_recovery, Some(LossTrigger::Ooo));
        assert_eq!(s.lost_pending(), 2);
        // inflight = 20 sent − 8 received − 2 claimed = 10 packets
        assert_eq!(s.inflight(), 10_000);
        let r1 = s.next_tx(u64::MAX).unwrap();
        let r2 = s.next_tx(u64::MAX).unwrap();
        assert_eq!((r1.psn, r1.kind), (0, TxKind::Retransmit));
        assert_eq!((r2.psn, r2.kind), (3, TxKind::Retransmit));
        assert_eq!(s.next_tx(u64::MAX), None); // all 20 sent, nothing lost
        assert_eq!(s.stats.retransmits, 2);
        s.on_ack(20, &sack(10, 10, 0, 10_000, 0), 1);
        assert_eq!(s.recovery_end, None, "recovery ends past the recorded highest PSN");
    }

    #[test]
    fn sacked_before_resend_withdraws_the_claim() {
        let mut s = SrSender::new(cfg(), 20_000, 0);
        send_all(&mut s, 20);
        s.on_ack(5, &sack(0, 0, 0b1111110, 6_000, 6), 1); // 0 declared lost
        assert_eq!(s.lost_pending(), 1);
        // the delayed original arrives before the retransmission was sent
        s.on_ack(6, &sack(7, 7, 0, 7_000, 0), 1);
        assert_eq!(s.lost_pending(), 0);
        assert_eq!(s.bytes_claimed, 0);
        assert_eq!(s.inflight(), 13_000);
        assert_eq!(s.next_tx(u64::MAX), None);
    }

    #[test]
    fn srnic_threshold_reacts_to_first_ooo_packet() {
        let mut c = cfg();
        c.ooo_min_threshold = 0;
        c.ooo_use_cwnd = false;
        let mut s = SrSender::new(c, 10_000, 0);
        send_all(&mut s, 10);
        let o = s.on_ack(5, &sack(2, 2, 0b10, 3_000, 1), 100);
        assert_eq!(o.entered_recovery, Some(LossTrigger::Ooo));
        assert_eq!(s.next_tx(u64::MAX).unwrap().psn, 2);
    }

    #[test]
    fn stale_sacks_do_not_trigger_recovery() {
        let mut s = SrSender::new(cfg(), 100_000, 0);
        send_all(&mut s, 40);
        s.on_ack(5, &sack(20, 20, 0, 20_000, 0), 1);
        let o = s.on_ack(6, &sack(3, 3, 0xffff << 1, 19_000, 16), 1);
        assert_eq!(o.entered_recovery, None);
    }

    #[test]
    fn probe_after_silence_and_recovery_on_fast_probe_reply() {
        let mut s = SrSender::new(cfg(), 5_000, 0);
        send_all(&mut s, 5); // tail: all 5 lost
        assert_eq!(s.next_deadline(), Some(24_000));
        assert_eq!(s.on_timer(23_999), None);
        assert_eq!(s.on_timer(24_000), Some(TimerAction::SendProbe { sack_base: 0 }));
        // unanswered probe is repeated after another probe interval
        assert_eq!(s.next_deadline(), Some(48_000));
        let mut reply = sack(0, 0, 0, 0, 0);
        reply.probe_reply = true;
        reply.ts_echo = 24_000;
        let o = s.on_ack(30_000, &reply, 1); // RTT 6 µs < 16 µs, nothing else came back
        assert_eq!(o.entered_recovery, Some(LossTrigger::Probe));
        assert_eq!(s.lost_pending(), 5);
        assert_eq!(s.stats.probe_recoveries, 1);
    }

    #[test]
    fn slow_probe_reply_or_other_acks_do_not_declare_loss() {
        let mut s = SrSender::new(cfg(), 5_000, 0);
        send_all(&mut s, 5);
        s.on_timer(24_000);
        let mut reply = sack(0, 0, 0, 0, 0);
        reply.probe_reply = true;
        reply.ts_echo = 24_000;
        assert_eq!(s.on_ack(50_000, &reply, 1).entered_recovery, None); // RTT 26 µs
        s.on_timer(80_000);
        s.on_ack(81_000, &sack(1, 1, 0, 1_000, 0), 1); // another ACK after the probe
        reply.ts_echo = 80_000;
        assert_eq!(s.on_ack(82_000, &reply, 1).entered_recovery, None);
    }

    #[test]
    fn probe_during_recovery_redeclares_lost_retransmissions() {
        let mut s = SrSender::new(cfg(), 20_000, 0);
        send_all(&mut s, 20);
        s.on_ack(5, &sack(0, 0, 0b1111110, 6_000, 6), 1); // PSN 0 declared lost
        assert_eq!(s.next_tx(u64::MAX).unwrap().psn, 0); // resent ... and lost again
        assert!(s.recovery_end.is_some());
        assert_eq!(s.on_timer(5 + 24_000), Some(TimerAction::SendProbe { sack_base: 0 }));
        let mut reply = sack(0, 0, 0b1111110, 6_000, 6);
        reply.probe_reply = true;
        reply.ts_echo = 24_005;
        let o = s.on_ack(30_000, &reply, 1);
        assert_eq!(o.entered_recovery, Some(LossTrigger::Probe));
        // PSN 0 again, plus the never-acknowledged tail 7..20
        assert_eq!(s.lost_pending(), 1 + 13);
        assert_eq!(s.recovery_end, Some(19));
    }

    #[test]
    fn timeout_declares_everything_unsacked_lost() {
        let mut c = cfg();
        c.probe_after_ns = 0;
        let mut s = SrSender::new(c, 10_000, 0);
        send_all(&mut s, 10);
        s.on_ack(5, &sack(2, 2, 0b1010, 4_000, 2), 1);
        assert_eq!(s.next_deadline(), Some(500_005));
        assert_eq!(s.on_timer(500_005), Some(TimerAction::Timeout));
        // 2..10 minus SACKed 3 and 5 → 6 packets
        assert_eq!(s.lost_pending(), 6);
        assert_eq!(s.stats.timeouts, 1);
    }

    #[test]
    fn window_never_exceeds_receiver_bitmap() {
        let mut c = cfg();
        c.window_pkts = 256;
        let mut s = SrSender::new(c, 1_000_000, 0);
        let v = send_all(&mut s, 1000);
        assert_eq!(v.len(), 256);
        assert!(v.iter().all(|p| p.psn < 256));
    }
}
