//! The requester's slow path: loss recovery onloaded to the host (SRNIC's
//! split, with the NIC's fast path sending in order and reporting anomalies
//! through the CtrlQ).
//!
//! This stage is go-back-N: the responder drops what arrives out of order
//! and NAKs it with the PSN it expects (ePSN); the slow path finds the WQE
//! and packet that PSN belongs to and asks the NIC to resend from there
//! (`REG_SQ_REWIND`). The NIC keeps no per-WQE state, so the library
//! records each posted WQE's first PSN. Three reports lead to a rewind:
//! - a PSN sequence NAK: rewind to its ePSN, once per ePSN (the NAKs of the
//!   packets still in flight behind the loss name the same ePSN);
//! - a retransmission timeout (no ACK for the NIC's RTO while packets are in
//!   flight: a lost tail, a lost ACK or a lost retransmission): rewind to
//!   the oldest unacknowledged WQE; the NIC counts the timeouts in a row
//!   without an ACK, and past `retry_cnt` the WQE fails with
//!   `RETRY_EXC_ERR`;
//! - an RNR NAK: rewind to its ePSN after the RNR timer, at most
//!   `rnr_retry` times in a row (7: forever), then `RNR_RETRY_EXC_ERR`.
//!
//! Selective repeat (QPs with [`crate::QpAttr::selective_repeat`]): the
//! responder places a WRITE or SEND packet that arrives ahead of ePSN (within
//! its on-chip window) and says so in its NAK (`ack_flags::PLACED`). Such a
//! NAK tells the slow path that everything between ePSN and that packet
//! which it has not seen placed is missing; it resends those packets one by
//! one (`rewind::ONE`), each once, and keeps the PSNs reported placed in a
//! set pruned as ePSN moves: the requester bitmap of SRNIC, held only while
//! the QP has packets out of order. A NAK without the flag (a packet beyond
//! the window, a SEND whose receive WQE is not posted yet) still rewinds.
//!
//! An RDMA READ uses as many PSNs as a WRITE of its length (its response
//! packets), so the same map from PSN to WR and byte offset holds. A resend
//! of any PSN inside a READ makes the NIC send a READ request for the rest
//! of the READ from that packet's offset, which the responder answers in
//! full; so holes inside one READ get one resend per decision, for the
//! lowest of them (the others are recorded as resent with it). A rewind
//! into a READ resends it from the rewind's byte offset.
//!
//! A resend can be lost too. The NIC sends a resend before the packets it
//! has not sent yet, and on one path packets arrive in the order sent; so
//! once placed NAKs name a packet [`RESEND_AGAIN_BYTES`] of sending (in
//! packets of the path MTU) beyond the one that triggered a hole's resend,
//! and that hole is still missing, its resend was lost and it is resent
//! again. At a small MTU that distance exceeds the responder's window and
//! the unplaced NAK rewinds instead; a lost resend of the last packets in
//! flight is recovered by the retransmission timeout.
//!
//! A QP that sprays its packets over several paths
//! ([`crate::QpAttr::max_paths`]) sees them overtake each other on the
//! way: a hole is a packet still on a slower path more often than a lost
//! one. Its slow path calls a hole lost only once a placed NAK names a
//! packet [`SPRAY_REORDER_PKTS`] beyond it, or once a placed NAK's SACK OOO
//! count (the packets the peer holds past its ePSN, carried in the NIC's
//! report) reaches a window's worth of packets, at least
//! [`OOO_MIN_THRESHOLD`] (STrack's out-of-order detector); it waits as much
//! longer before calling a resend lost. A loss among the last packets in
//! flight is found by the NIC's probe report (no ACK for three base RTTs):
//! the packet the latest ACK expects is resent ([`ReqRecovery::on_probe`]),
//! and the timeout is the last resort.
//!
//! The responder's side of the same split, for QPs the NIC's window pool
//! cannot hold, is `crate::resp_recovery`.

use crate::qp::{Slot, WorkQueue};
use crate::ring;
use crate::WcOpcode;
use rnic_driver::Device;
use rnic_spec::regs::{self, rewind};
use std::collections::{BTreeMap, BTreeSet};

/// PSNs are 24 bits.
const PSN_MASK: u32 = 0xFF_FFFF;

/// ibverbs' `rnr_retry` value that retries forever.
pub const RNR_RETRY_INFINITE: u8 = 7;

/// The slow path's counters for one QP ([`crate::Qp::recovery_stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecoveryStats {
    /// PSN sequence NAKs from the peer (a request packet was lost or overtaken).
    pub psn_naks: u64,
    /// RNR NAKs from the peer (no receive WQE was posted).
    pub rnr_naks: u64,
    /// Retransmission timeouts the NIC reported.
    pub timeouts: u64,
    /// Rewinds the slow path asked the NIC for (each a go-back-N retransmission).
    pub rewinds: u64,
    /// NAKs saying the peer placed the packet out of order (selective repeat).
    pub ooo_placed: u64,
    /// Single packets the slow path asked the NIC to resend (selective repeat).
    pub resends: u64,
    /// Of those, resends of a hole whose earlier resend was lost.
    pub resends_again: u64,
    /// 8-byte register writes the slow path made for its rewinds and resends.
    pub reg_writes: u64,
    /// Recovery episodes: a loss report (PSN NAK or timeout) for a PSN past
    /// everything the QP's previous episode knew about (the highest PSN its
    /// NAKs named, or everything posted when a timeout opened it) opens one.
    pub episodes: u64,
    /// Responder: packets the NIC placed out of order through software
    /// recovery (the QP had no on-chip window) and reported to this library.
    pub sw_placed: u64,
    /// Responder: software-recovery commands written (ePSN moved over PSNs
    /// only the library's bitmap knew were placed).
    pub sw_commands: u64,
    /// Responder: of those, the ones the NIC applied.
    pub sw_applied: u64,
    /// Responder: software-recovery episodes (a first report while not in recovery).
    pub sw_episodes: u64,
    /// Placed NAKs whose SACK OOO count reached the QP's threshold
    /// (STrack's out-of-order detector): every hole below the NAKed packet
    /// was called lost at once.
    pub ooo_losses: u64,
    /// Probe timeouts the NIC reported (no ACK for three base RTTs).
    pub probes: u64,
    /// Of those, the ones that resent a packet (sprayed or windowed QPs only).
    pub probe_resends: u64,
}

impl std::iter::Sum for RecoveryStats {
    /// Counters of several QPs added up.
    fn sum<I: Iterator<Item = RecoveryStats>>(it: I) -> Self {
        it.fold(RecoveryStats::default(), |a, b| RecoveryStats {
            psn_naks: a.psn_naks + b.psn_naks,
            rnr_naks: a.rnr_naks + b.rnr_naks,
            timeouts: a.timeouts + b.timeouts,
            rewinds: a.rewinds + b.rewinds,
            ooo_placed: a.ooo_placed + b.ooo_placed,
            resends: a.resends + b.resends,
            resends_again: a.resends_again + b.resends_again,
            reg_writes: a.reg_writes + b.reg_writes,
            episodes: a.episodes + b.episodes,
            sw_placed: a.sw_placed + b.sw_placed,
            sw_commands: a.sw_commands + b.sw_commands,
            sw_applied: a.sw_applied + b.sw_applied,
            sw_episodes: a.sw_episodes + b.sw_episodes,
            ooo_losses: a.ooo_losses + b.ooo_losses,
            probes: a.probes + b.probes,
            probe_resends: a.probe_resends + b.probe_resends,
        })
    }
}

/// Per-QP requester recovery state.
#[derive(Clone, Debug, Default)]
pub(crate) struct ReqRecovery {
    /// PSN of the next WQE's first packet.
    pub next_psn: u32,
    /// log2 of the path MTU (packets per message).
    pub mtu_log2: u32,
    /// Retransmission timeouts without progress before a WQE fails.
    pub retry_cnt: u8,
    /// RNR NAKs without progress before a WQE fails ([`RNR_RETRY_INFINITE`]: never).
    pub rnr_retry: u8,
    /// RNR timer in device cycles.
    pub rnr_timer_cycles: u64,
    /// ePSN of the last rewind (a NAK naming it again is from packets already in flight).
    last_rewind_psn: Option<u32>,
    /// ePSN of the last RNR NAK, and RNR NAKs in a row at that ePSN.
    rnr_at: Option<u32>,
    rnr_in_row: u32,
    /// A resend waiting for the RNR timer: (device cycle, PSN).
    pub rnr_due: Option<(u64, u32)>,
    /// PSNs the peer reported placed out of order, ahead of its ePSN.
    sacked: BTreeSet<u32>,
    /// Packets up to this PSN (from the ePSN of the same episode) have been
    /// resent or reported placed: holes past it are new.
    resent_upto: Option<u32>,
    /// Holes resent and not yet passed by ePSN, with the placed PSN whose
    /// NAK triggered their latest resend and that packet's TX timestamp.
    resent_at: BTreeMap<u32, (u32, u32)>,
    /// The highest PSN the open recovery episode knows of (none: no episode yet).
    episode_end: Option<u32>,
    /// The QP's last placed NAK the NIC reported (PSN, ePSN, echoed
    /// timestamp): the placed NAKs it folds into its next report are the
    /// PSNs right after it, at that ePSN.
    fold_head: Option<(u32, u32, u32)>,
    /// Packets a hole may be overtaken by before it counts as lost (0: at once; sprayed QPs).
    reorder_pkts: u32,
    /// A placed NAK whose SACK OOO count is at least this calls every hole below it lost (0: off).
    ooo_threshold: u32,
    /// A probe timeout resends the packet the peer expects (STrack QPs).
    probe: bool,
    pub stats: RecoveryStats,
}

/// Most single-packet resends one NAK may ask for; more holes than this
/// rewind instead (the NIC's rewind queue holds `params::REWIND_QUEUE`).
const MAX_RESENDS_PER_NAK: u32 = 8;

/// Bytes of sending past the packet that triggered a resend after which a
/// hole still reported missing means its resend was lost: the data the
/// requester sends while the NAK returns and the slow path reacts (about
/// 6 µs, 75 KB at 100 Gb/s, in the cosimulated two-NIC setup), plus margin.
pub const RESEND_AGAIN_BYTES: u32 = 96 * 1024;

/// Device cycles (30 µs) between the sending of the packet whose NAK
/// triggered a resend and the sending of a packet reported placed while
/// the hole is still missing, after which the resend counts as lost: the
/// resend went out well before that packet, on the same path. The same
/// rule as [`RESEND_AGAIN_BYTES`] in time, for a QP that shares the link
/// with others (16 QPs send 24 packets of one QP in about 120 µs, by arithmetic, after
/// the 100 µs timeout). It covers the NAK's way back, the slow path with
/// its register writes (up to 12 µs at a 1.5 µs MMIO latency, by arithmetic) and the
/// resend's payload read, with margin.
pub const RESEND_AGAIN_CYCLES: u32 = 7_500;

/// Packets a sprayed QP's slow path lets a packet be overtaken by before
/// it calls it lost (STrack's out-of-order threshold), well inside the
/// NIC's window for a sprayed QP (`params::SPRAY_WINDOW_PKTS`), so the
/// packets beyond a hole are still placed.
pub const SPRAY_REORDER_PKTS: u32 = 32;

/// The smallest out-of-order threshold of a sprayed QP (STrack's
/// `min_threshold`): a placed NAK whose SACK OOO count reaches
/// `max(largest window in packets, this)` calls every hole below it lost.
pub const OOO_MIN_THRESHOLD: u32 = 5;

/// Bits of the echoed TX timestamps in CtrlQ entries: 24, as PSNs, so
/// [`psn_dist`] measures both.
const TS_MASK: u32 = PSN_MASK;

/// `a - b` in PSN space (or of two 24-bit timestamps), as a signed
/// distance (both wrap at 24 bits).
fn psn_dist(a: u32, b: u32) -> i32 {
    (((a.wrapping_sub(b)) << 8) as i32) >> 8
}

/// What the slow path does about one report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    /// Nothing (a report about packets already resent, or stale).
    None,
    /// Resend from WQE `idx` (free-running SQ index), packet `psn`, byte `msg_off`.
    Rewind { idx: u32, psn: u32, msg_off: u32 },
    /// Resend only packet `psn` of WQE `idx`, at byte `msg_off`.
    Resend { idx: u32, psn: u32, msg_off: u32 },
    /// Resend from `psn` once the device clock reaches `at`.
    RewindAt { at: u64, psn: u32 },
    /// The WQE at `idx` fails with `status`; the QP enters ERROR.
    Fail { idx: u32, status: u8 },
}

/// Packets of a message of `len` bytes at a path MTU of `2^mtu_log2`.
pub(crate) fn packets(len: u32, mtu_log2: u32) -> u32 {
    len.div_ceil(1 << mtu_log2).max(1)
}

impl ReqRecovery {
    /// State with these limits (see [`crate::QpAttr`]).
    pub fn new(retry_cnt: u8, rnr_retry: u8, rnr_timer_cycles: u64) -> Self {
        ReqRecovery { retry_cnt, rnr_retry, rnr_timer_cycles, ..Default::default() }
    }

    /// Fresh state for a requester that starts at `sq_psn`.
    pub fn start(&mut self, sq_psn: u32, mtu_log2: u32) {
        let (retry_cnt, rnr_retry, rnr_timer_cycles) = (self.retry_cnt, self.rnr_retry, self.rnr_timer_cycles);
        *self = ReqRecovery {
            next_psn: sq_psn & PSN_MASK,
            mtu_log2,
            retry_cnt,
            rnr_retry,
            rnr_timer_cycles,
            reorder_pkts: self.reorder_pkts,
            ooo_threshold: self.ooo_threshold,
            probe: self.probe,
            stats: self.stats,
            ..Default::default()
        };
    }

    /// How many packets a hole may be overtaken by before it counts as lost
    /// (0, the default: at once; [`SPRAY_REORDER_PKTS`] for a sprayed QP).
    pub fn set_reorder(&mut self, pkts: u32) {
        self.reorder_pkts = pkts;
    }

    /// STrack's out-of-order detector: a placed NAK whose SACK OOO count
    /// (the packets the responder holds past its ePSN) is at least `pkts`
    /// calls every hole below the NAKed packet lost, whatever the reorder
    /// allowance (0, the default: off).
    pub fn set_ooo_threshold(&mut self, pkts: u32) {
        self.ooo_threshold = pkts;
    }

    /// STrack's probe: a probe timeout resends one packet (default off).
    pub fn set_probe(&mut self, on: bool) {
        self.probe = on;
    }

    /// Records a WQE of `len` bytes being posted: returns its first PSN.
    pub fn post(&mut self, len: u32) -> u32 {
        let psn = self.next_psn;
        self.next_psn = (psn + packets(len, self.mtu_log2)) & PSN_MASK;
        psn
    }

    /// The outstanding WQE and byte offset that `psn` belongs to.
    fn locate(&self, sq: &WorkQueue, psn: u32) -> Option<(u32, u32)> {
        let mut idx = sq.ci;
        while idx != sq.pi {
            let s: Slot = sq.slots[ring::slot(idx, sq.log2)];
            let d = psn.wrapping_sub(s.psn) & PSN_MASK;
            if d < packets(s.len, self.mtu_log2) {
                return Some((idx, d << self.mtu_log2));
            }
            idx = idx.wrapping_add(1);
        }
        None
    }

    /// The outstanding WQE whose SSN (low 24 bits of its index) is `ssn`.
    fn by_ssn(sq: &WorkQueue, ssn: u32) -> Option<u32> {
        let mut idx = sq.ci;
        while idx != sq.pi {
            if idx & PSN_MASK == ssn & PSN_MASK {
                return Some(idx);
            }
            idx = idx.wrapping_add(1);
        }
        None
    }

    fn rewind_to(&mut self, sq: &WorkQueue, psn: u32) -> Action {
        match self.locate(sq, psn) {
            Some((idx, msg_off)) => {
                self.last_rewind_psn = Some(psn);
                // Everything from `psn` on is sent again: no hole is pending.
                self.resent_upto = None;
                self.sacked.clear();
                self.resent_at.clear();
                Action::Rewind { idx, psn, msg_off }
            }
            None => Action::None,
        }
    }

    /// A loss report: the peer expects `epsn` and the report names PSNs up
    /// to `psn`. Opens an episode if `epsn` is past the open one's end.
    fn episode(&mut self, epsn: u32, psn: u32) {
        let top = if psn_dist(psn, epsn) > 0 { psn } else { epsn } & PSN_MASK;
        match self.episode_end {
            Some(end) if psn_dist(epsn, end) <= 0 => {
                if psn_dist(top, end) > 0 {
                    self.episode_end = Some(top);
                }
            }
            _ => {
                self.stats.episodes += 1;
                self.episode_end = Some(top);
            }
        }
    }

    /// The peer NAKed packet `psn` (sent at device cycle `ts`, low 24 bits)
    /// with a PSN sequence error; it expects `epsn`. `placed`: it placed
    /// `psn` out of order (selective repeat). `folded`: placed NAKs the NIC
    /// folded into this report (the PSNs after the QP's previous placed
    /// report, at its ePSN), taken first, as if each had been reported.
    /// `ooo`: the NAK's SACK OOO count (see [`Self::set_ooo_threshold`]).
    #[allow(clippy::too_many_arguments)]
    pub fn on_psn_nak(
        &mut self,
        sq: &WorkQueue,
        epsn: u32,
        psn: u32,
        placed: bool,
        ts: u32,
        folded: u32,
        ooo: u32,
    ) -> Vec<Action> {
        let mut out = self.unfold(sq, folded);
        out.extend(self.nak(sq, epsn, psn, placed, ts, ooo));
        self.fold_head = placed.then_some((psn & PSN_MASK, epsn & PSN_MASK, ts & TS_MASK));
        out
    }

    /// The `folded` placed NAKs the NIC reports with its next CtrlQ entry
    /// of the QP: the PSNs after its previous placed report, at that
    /// report's ePSN (their own timestamps are not kept: the report's is
    /// used, which is earlier, so no resend is repeated sooner for them).
    /// Without a previous report (the CtrlQ dropped it) they are ignored.
    pub fn unfold(&mut self, sq: &WorkQueue, folded: u32) -> Vec<Action> {
        let mut out = Vec::new();
        for _ in 0..folded {
            let Some((head, epsn, ts)) = self.fold_head else { break };
            let p = (head + 1) & PSN_MASK;
            out.extend(self.nak(sq, epsn, p, true, ts, 0));
            self.fold_head = Some((p, epsn, ts));
        }
        out
    }

    /// One PSN sequence NAK, reported or folded.
    fn nak(&mut self, sq: &WorkQueue, epsn: u32, psn: u32, placed: bool, ts: u32, ooo: u32) -> Vec<Action> {
        self.stats.psn_naks += 1;
        self.episode(epsn, psn);
        if self.rnr_due.is_some() {
            return Vec::new();
        }
        if !placed {
            if self.last_rewind_psn == Some(epsn) {
                return Vec::new();
            }
            return vec![self.rewind_to(sq, epsn)];
        }
        self.stats.ooo_placed += 1;
        // Forget what ePSN has passed.
        self.sacked.retain(|&p| psn_dist(p, epsn) > 0);
        self.resent_at.retain(|&h, _| psn_dist(h, epsn) >= 0);
        if psn_dist(psn, epsn) <= 0 {
            return Vec::new();
        }
        self.sacked.insert(psn & PSN_MASK);
        if self.last_rewind_psn == Some(epsn) {
            // A rewind resends from ePSN already: these NAKs are from packets in flight before it.
            return Vec::new();
        }
        // Resends overtaken by packets sent well after them were lost (later still when sprayed:
        // the resend may take the slowest path; the time rule grows by the reorder's sending at ~50 B/cycle).
        let again_pkts = ((RESEND_AGAIN_BYTES >> self.mtu_log2).max(1) + self.reorder_pkts) as i32;
        let again_cycles = (RESEND_AGAIN_CYCLES + (self.reorder_pkts << self.mtu_log2) / 50) as i32;
        let lost: Vec<u32> = self
            .resent_at
            .iter()
            .filter(|&(h, &(at, at_ts))| {
                !self.sacked.contains(h) && (psn_dist(psn, at) >= again_pkts || psn_dist(ts, at_ts) >= again_cycles)
            })
            .map(|(&h, _)| h)
            .take(MAX_RESENDS_PER_NAK as usize)
            .collect();
        let from = match self.resent_upto {
            Some(u) if psn_dist(u, epsn) >= 0 => (u + 1) & PSN_MASK,
            _ => epsn,
        };
        // Holes the NAKed packet overtook by more than the reorder allowance are lost; all of them
        // once the peer holds the OOO threshold's packets past its ePSN.
        let ooo_hit = self.ooo_threshold != 0 && ooo >= self.ooo_threshold;
        self.stats.ooo_losses += ooo_hit as u64;
        let reorder = if ooo_hit { 0 } else { self.reorder_pkts };
        let limit = psn.wrapping_sub(reorder) & PSN_MASK;
        let mut holes = Vec::new();
        let mut p = from;
        while psn_dist(p, limit) < 0 {
            if !self.sacked.contains(&p) {
                holes.push(p);
            }
            p = (p + 1) & PSN_MASK;
        }
        let upto = if reorder == 0 { psn & PSN_MASK } else { limit.wrapping_sub(1) & PSN_MASK };
        if psn_dist(upto, from) >= 0 {
            self.resent_upto = Some(upto);
        }
        if holes.len() as u32 > MAX_RESENDS_PER_NAK {
            return vec![self.rewind_to(sq, holes[0])];
        }
        let lost_n = lost.len();
        let located: Vec<(usize, u32, u32, u32)> = lost
            .into_iter()
            .chain(holes)
            .enumerate()
            .filter_map(|(i, h)| self.locate(sq, h).map(|(idx, msg_off)| (i, h, idx, msg_off)))
            .collect();
        // One resend per READ, at its lowest hole: the NIC asks for the rest of the READ from there.
        let mut read_first: BTreeMap<u32, u32> = BTreeMap::new();
        for &(_, h, idx, _) in &located {
            if Self::is_read(sq, idx) {
                let f = read_first.entry(idx).or_insert(h);
                if psn_dist(h, *f) < 0 {
                    *f = h;
                }
            }
        }
        // A gathered WQE's packet cannot be resent alone: go back to the lowest hole instead.
        if let Some(&(_, h, _, _)) = located
            .iter()
            .filter(|&&(_, _, idx, _)| Self::is_gathered(sq, idx))
            .min_by_key(|&&(_, h, _, _)| psn_dist(h, epsn))
        {
            let low = located.iter().map(|&(_, h, _, _)| h).min_by_key(|&h| psn_dist(h, epsn)).unwrap_or(h);
            return vec![self.rewind_to(sq, low)];
        }
        let mut out = Vec::new();
        for (i, h, idx, msg_off) in located {
            self.resent_at.insert(h, (psn & PSN_MASK, ts & TS_MASK));
            if read_first.get(&idx).is_some_and(|&f| f != h) {
                continue;
            }
            self.stats.resends_again += (i < lost_n) as u64;
            out.push(Action::Resend { idx, psn: h, msg_off });
        }
        out
    }

    /// Whether the WQE at free-running SQ index `idx` gathers from two entries.
    fn is_gathered(sq: &WorkQueue, idx: u32) -> bool {
        sq.slots[ring::slot(idx, sq.log2)].gathered
    }

    /// Whether the WR at free-running SQ index `idx` is an RDMA READ.
    fn is_read(sq: &WorkQueue, idx: u32) -> bool {
        sq.slots[ring::slot(idx, sq.log2)].opcode == WcOpcode::RdmaRead
    }

    /// No ACK for the RTO, the `in_row`-th time since the last ACK; `lack`
    /// is the SSN of the oldest unacknowledged WQE.
    pub fn on_timeout(&mut self, sq: &WorkQueue, lack: u32, in_row: u8) -> Action {
        self.stats.timeouts += 1;
        // The oldest unacknowledged packet is lost or unanswered: everything posted may be.
        let last_posted = self.next_psn.wrapping_sub(1) & PSN_MASK;
        match Self::by_ssn(sq, lack) {
            Some(idx) => self.episode(sq.slots[ring::slot(idx, sq.log2)].psn, last_posted),
            None => self.episode(last_posted, last_posted),
        }
        if self.rnr_due.is_some() {
            return Action::None;
        }
        let Some(idx) = Self::by_ssn(sq, lack) else { return Action::None };
        if in_row > self.retry_cnt {
            return Action::Fail { idx, status: rnic_spec::desc::cqe_status::RETRY_EXC_ERR };
        }
        let psn = sq.slots[ring::slot(idx, sq.log2)].psn;
        self.last_rewind_psn = Some(psn);
        self.resent_upto = None;
        self.sacked.clear();
        self.resent_at.clear();
        Action::Rewind { idx, psn, msg_off: 0 }
    }

    /// No ACK for the probe timeout (STrack's probe, onloaded): `lack` is the
    /// SSN of the oldest unacknowledged WQE, `epsn` the ePSN of the QP's
    /// latest ACK, if one came. The packet the peer expects (that ePSN, or
    /// lACK's first packet) is resent: lost, it is recovered three base RTTs
    /// after the stall began instead of at the timeout, and its ACK carries
    /// the SACK fields the paper's probe asks for. A QP without spraying or a
    /// window (`set_probe` off) leaves the stall to the timeout.
    pub fn on_probe(&mut self, sq: &WorkQueue, lack: u32, epsn: Option<u32>) -> Action {
        self.stats.probes += 1;
        if !self.probe || self.rnr_due.is_some() {
            return Action::None;
        }
        let Some(idx) = Self::by_ssn(sq, lack) else { return Action::None };
        let first = sq.slots[ring::slot(idx, sq.log2)].psn;
        let psn = match epsn {
            Some(e) if psn_dist(e, first) >= 0 => e & PSN_MASK,
            _ => first,
        };
        match self.locate(sq, psn) {
            Some((idx, _)) if Self::is_gathered(sq, idx) => self.rewind_to(sq, psn),
            Some((idx, msg_off)) => {
                self.stats.probe_resends += 1;
                Action::Resend { idx, psn, msg_off }
            }
            None => Action::None,
        }
    }

    /// The peer answered `epsn` with an RNR NAK; the device clock reads `now`.
    pub fn on_rnr(&mut self, sq: &WorkQueue, epsn: u32, now: u64) -> Action {
        self.stats.rnr_naks += 1;
        // The NIC's chain of placed NAKs ends at an RNR NAK.
        self.fold_head = None;
        if self.rnr_due.is_some() {
            return Action::None;
        }
        let Some((idx, _)) = self.locate(sq, epsn) else { return Action::None };
        if self.rnr_at == Some(epsn) {
            self.rnr_in_row += 1;
        } else {
            self.rnr_at = Some(epsn);
            self.rnr_in_row = 1;
        }
        if self.rnr_retry != RNR_RETRY_INFINITE && self.rnr_in_row > self.rnr_retry as u32 {
            return Action::Fail { idx, status: rnic_spec::desc::cqe_status::RNR_RETRY_EXC_ERR };
        }
        let at = now + self.rnr_timer_cycles;
        self.rnr_due = Some((at, epsn));
        Action::RewindAt { at, psn: epsn }
    }

    /// The RNR timer expired: resend from the refused packet.
    pub fn rnr_expired(&mut self, sq: &WorkQueue) -> Action {
        match self.rnr_due.take() {
            Some((_, psn)) => self.rewind_to(sq, psn),
            None => Action::None,
        }
    }
}

/// Asks the NIC to resend QP `qpn`'s requests from WQE `idx`, packet `psn`,
/// byte `msg_off` on (go-back-N), or (`wqe` given) that packet only, of the
/// WQE whose first [`rewind::WQE_BYTES`] it carries (selective repeat's
/// single-packet resend: the NIC sends it without fetching the WQE again).
/// Returns the number of register writes it made.
pub(crate) fn write_rewind(
    dev: &dyn Device,
    qpn: u32,
    idx: u32,
    psn: u32,
    msg_off: u32,
    wqe: Option<&[u8; rewind::WQE_BYTES]>,
) -> crate::Result<u64> {
    let mut words = [0u64; regs::NUM_STAGE];
    rewind::SSN.put(&mut words, (idx & PSN_MASK) as u64);
    rewind::PSN.put(&mut words, (psn & PSN_MASK) as u64);
    rewind::MSG_OFF.put(&mut words, msg_off as u64);
    rewind::ONE.put(&mut words, wqe.is_some() as u64);
    let mut used = 2;
    if let Some(wqe) = wqe {
        for (i, chunk) in wqe.chunks_exact(8).enumerate() {
            words[rewind::WQE_WORD + i] = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        }
        used = rewind::WQE_WORD + rewind::WQE_BYTES / 8;
    }
    for (i, w) in words.iter().enumerate().take(used) {
        dev.write_reg(regs::stage(i), *w)?;
    }
    dev.write_reg(regs::REG_SQ_REWIND, qpn as u64)?;
    Ok(used as u64 + 1)
}

/// The first [`rewind::WQE_BYTES`] of send WQE `idx` as posted in the ring
/// (host memory: the library wrote it; a resend carries it to the NIC).
pub(crate) fn read_send_wqe(dev: &dyn Device, sq: &WorkQueue, idx: u32) -> crate::Result<[u8; rewind::WQE_BYTES]> {
    let mut out = [0u8; rewind::WQE_BYTES];
    let at = sq.buf.bus_addr + (ring::slot(idx, sq.log2) * rnic_spec::desc::SEND_WQE_BYTES) as u64;
    dev.read_mem(at, &mut out)?;
    Ok(out)
}

/// The RNR timer of ibverbs' `min_rnr_timer` code (0..=31), in microseconds
/// (IBA table 45: code 0 is 655.36 ms, codes 1.. run from 0.01 ms up).
pub fn rnr_timer_us(code: u8) -> f64 {
    const MS: [f64; 32] = [
        655.36, 0.01, 0.02, 0.03, 0.04, 0.06, 0.08, 0.12, 0.16, 0.24, 0.32, 0.48, 0.64, 0.96, 1.28, 1.92, 2.56, 3.84,
        5.12, 7.68, 10.24, 15.36, 20.48, 30.72, 40.96, 61.44, 81.92, 122.88, 163.84, 245.76, 327.68, 491.52,
    ];
    MS[(code & 31) as usize] * 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_counts() {
        assert_eq!(packets(0, 12), 1);
        assert_eq!(packets(1, 12), 1);
        assert_eq!(packets(4096, 12), 1);
        assert_eq!(packets(4097, 12), 2);
        assert_eq!(packets(1 << 20, 8), 4096);
    }

    #[test]
    fn posting_advances_the_psn_across_the_wrap() {
        let mut r = ReqRecovery::default();
        r.start(PSN_MASK - 1, 12);
        assert_eq!(r.post(8192), PSN_MASK - 1);
        assert_eq!(r.post(0), 0);
        assert_eq!(r.next_psn, 1);
    }

    /// A send queue of `n` one-packet WQEs from PSN `psn0` (MTU 4096).
    fn queue(n: u32, psn0: u32) -> (ReqRecovery, WorkQueue) {
        queue_of(n, psn0, 12, 4096)
    }

    /// A send queue of `n` WQEs of `len` bytes from PSN `psn0` at MTU `2^mtu_log2`.
    fn queue_of(n: u32, psn0: u32, mtu_log2: u32, len: u32) -> (ReqRecovery, WorkQueue) {
        let mut r = ReqRecovery::default();
        r.start(psn0, mtu_log2);
        let blank =
            Slot { wr_id: 0, opcode: crate::WcOpcode::RdmaWrite, len: 0, psn: 0, signaled: true, gathered: false };
        let mut sq = WorkQueue {
            buf: rnic_driver::DmaBuf { bus_addr: 0, len: 0 },
            log2: 6,
            cap: 64,
            pi: 0,
            ci: 0,
            slots: vec![blank; 64],
        };
        for i in 0..n {
            let psn = r.post(len);
            sq.slots[i as usize] = Slot { psn, len, ..blank };
            sq.pi += 1;
        }
        (r, sq)
    }

    /// A send queue of the WRs `(length, opcode)` from PSN `psn0` at MTU 4096.
    fn queue_mixed(psn0: u32, wrs: &[(u32, WcOpcode)]) -> (ReqRecovery, WorkQueue) {
        let (mut r, mut sq) = queue_of(0, psn0, 12, 0);
        for (i, &(len, opcode)) in wrs.iter().enumerate() {
            let psn = r.post(len);
            sq.slots[i] = Slot { wr_id: i as u64, opcode, len, psn, signaled: true, gathered: false };
            sq.pi += 1;
        }
        (r, sq)
    }

    fn resent(a: &[Action]) -> Vec<u32> {
        a.iter()
            .map(|a| match a {
                Action::Resend { psn, .. } => *psn,
                other => panic!("not a resend: {other:?}"),
            })
            .collect()
    }

    #[test]
    fn placed_naks_resend_each_hole_once_across_the_psn_wrap() {
        let e = PSN_MASK - 1;
        let (mut r, sq) = queue(20, e);
        // e lost; e+1 placed: resend e.
        assert_eq!(resent(&r.on_psn_nak(&sq, e, (e + 1) & PSN_MASK, true, 0, 0, 0)), vec![e]);
        // e+2 placed: nothing new.
        assert!(r.on_psn_nak(&sq, e, (e + 2) & PSN_MASK, true, 0, 0, 0).is_empty());
        // e+3 lost, e+4 placed: resend e+3 only.
        assert_eq!(resent(&r.on_psn_nak(&sq, e, (e + 4) & PSN_MASK, true, 0, 0, 0)), vec![(e + 3) & PSN_MASK]);
        // A stale report of e+2 again: nothing.
        assert!(r.on_psn_nak(&sq, e, (e + 2) & PSN_MASK, true, 0, 0, 0).is_empty());
        // ePSN moved to e+3; e+6 placed, e+5 missing.
        assert_eq!(
            resent(&r.on_psn_nak(&sq, (e + 3) & PSN_MASK, (e + 6) & PSN_MASK, true, 0, 0, 0)),
            vec![(e + 5) & PSN_MASK]
        );
        assert_eq!(r.stats.ooo_placed, 5);
    }

    #[test]
    fn a_probe_resends_the_packet_the_peer_expects() {
        let e = PSN_MASK - 3;
        // Four WRITEs of 16 packets each, the first at e (across the PSN wrap).
        let (mut r, sq) = queue_of(4, e, 12, 64 * 1024);
        let at = |k: u32| (e + k) & PSN_MASK;
        // Off (a QP without spraying or a window): the timeout's job.
        assert_eq!(r.on_probe(&sq, 0, Some(at(5))), Action::None);
        r.set_probe(true);
        // The latest ACK expects e+5, inside lACK's WQE: that packet, at its byte offset.
        assert_eq!(r.on_probe(&sq, 0, Some(at(5))), Action::Resend { idx: 0, psn: at(5), msg_off: 5 * 4096 });
        // In a later WQE than lACK's.
        assert_eq!(r.on_probe(&sq, 0, Some(at(17))), Action::Resend { idx: 1, psn: at(17), msg_off: 4096 });
        // No ACK yet, or one behind lACK's WQE: its first packet.
        assert_eq!(r.on_probe(&sq, 1, None), Action::Resend { idx: 1, psn: at(16), msg_off: 0 });
        assert_eq!(r.on_probe(&sq, 1, Some(at(3))), Action::Resend { idx: 1, psn: at(16), msg_off: 0 });
        // Past everything posted, or an lACK no WQE has: nothing.
        assert_eq!(r.on_probe(&sq, 0, Some(at(64))), Action::None);
        assert_eq!(r.on_probe(&sq, 9, None), Action::None);
        assert_eq!((r.stats.probes, r.stats.probe_resends), (7, 4));
    }

    #[test]
    fn a_sack_ooo_count_at_the_threshold_calls_every_hole_below_lost() {
        let e = PSN_MASK - 3;
        let (mut r, sq) = queue_of(10, e, 12, 64 * 1024);
        r.set_reorder(SPRAY_REORDER_PKTS);
        r.set_ooo_threshold(6);
        let at = |k: u32| (e + k) & PSN_MASK;
        // e and e+3 missing; e+1, e+2, e+4 .. e+6 placed: the peer holds 5 past ePSN, under 6.
        for (k, ooo) in [(1, 1), (2, 2), (4, 3), (5, 4), (6, 5)] {
            assert!(r.on_psn_nak(&sq, e, at(k), true, 0, 0, ooo).is_empty(), "psn e+{k}");
        }
        assert_eq!(r.stats.ooo_losses, 0);
        // e+7 makes 6: e and e+3 are lost, well inside the reorder allowance of 32.
        assert_eq!(resent(&r.on_psn_nak(&sq, e, at(7), true, 0, 0, 6)), vec![e, at(3)]);
        assert_eq!(r.stats.ooo_losses, 1);
        // Holes already resent are not resent again by the next count over the threshold.
        assert!(r.on_psn_nak(&sq, e, at(8), true, 0, 0, 7).is_empty());
        // Off (0), the same count does nothing.
        let (mut r, sq) = queue_of(10, e, 12, 64 * 1024);
        r.set_reorder(SPRAY_REORDER_PKTS);
        assert!(r.on_psn_nak(&sq, e, at(7), true, 0, 0, 4000).is_empty());
    }

    #[test]
    fn a_sprayed_qp_calls_a_hole_lost_only_once_overtaken_by_the_reorder_allowance() {
        let e = PSN_MASK - 3;
        // Ten WRITEs of 16 packets each.
        let (mut r, sq) = queue_of(10, e, 12, 64 * 1024);
        r.set_reorder(SPRAY_REORDER_PKTS);
        let at = |k: u32| (e + k) & PSN_MASK;
        let n = SPRAY_REORDER_PKTS;
        // e and e+1 are late; e+2 .. e+n arrive placed: nothing is lost yet.
        for k in 2..=n {
            assert!(r.on_psn_nak(&sq, e, at(k), true, 0, 0, 0).is_empty(), "psn e+{k}");
        }
        // e+1 arrives after all (placed); e+n+1 overtakes e by the allowance: e is resent, e+1 is not.
        assert!(r.on_psn_nak(&sq, e, at(1), true, 0, 0, 0).is_empty());
        assert_eq!(resent(&r.on_psn_nak(&sq, e, at(n + 1), true, 0, 0, 0)), vec![e]);
        // Further NAKs: no hole below their allowance is missing.
        assert!(r.on_psn_nak(&sq, e, at(n + 2), true, 0, 0, 0).is_empty());
        assert!(r.on_psn_nak(&sq, e, at(n + 3), true, 0, 0, 0).is_empty());
        // e+n+10 never comes: e+2n+11 calls it lost.
        for k in n + 4..2 * n + 11 {
            if k != n + 10 {
                assert!(r.on_psn_nak(&sq, e, at(k), true, 0, 0, 0).is_empty(), "psn e+{k}");
            }
        }
        assert_eq!(resent(&r.on_psn_nak(&sq, e, at(2 * n + 11), true, 0, 0, 0)), vec![at(n + 10)]);
    }

    #[test]
    fn a_lost_resend_is_resent_again_once_later_packets_overtake_it() {
        let again = RESEND_AGAIN_BYTES >> 12;
        let (mut r, sq) = queue(60, 100);
        assert_eq!(resent(&r.on_psn_nak(&sq, 100, 101, true, 0, 0, 0)), vec![100]);
        // Packets sent before the resend reached the NIC: nothing.
        for p in 102..101 + again {
            assert!(r.on_psn_nak(&sq, 100, p, true, 0, 0, 0).is_empty(), "psn {p}");
        }
        // A packet sent well after the resend, and ePSN is still 100: resend again.
        assert_eq!(resent(&r.on_psn_nak(&sq, 100, 101 + again, true, 0, 0, 0)), vec![100]);
        assert!(r.on_psn_nak(&sq, 100, 102 + again, true, 0, 0, 0).is_empty());
        assert_eq!((r.stats.resends_again, r.stats.ooo_placed), (1, again as u64 + 2));
        // The hole filled (ePSN moved): its record is gone, a new hole is resent once.
        let e = 103 + again;
        assert_eq!(resent(&r.on_psn_nak(&sq, e, e + 1, true, 0, 0, 0)), vec![e]);
        assert!(r.on_psn_nak(&sq, e, e + 2, true, 0, 0, 0).is_empty());
        assert_eq!(r.stats.resends_again, 1);
        // At MTU 512 the distance is beyond the responder's window: never again.
        let (mut r, sq) = queue_of(64, 0, 9, 4 * 512);
        const { assert!(RESEND_AGAIN_BYTES >> 9 > rnic_spec::params::SR_WINDOW) };
        assert_eq!(resent(&r.on_psn_nak(&sq, 0, 1, true, 0, 0, 0)), vec![0]);
        for p in 2..=rnic_spec::params::SR_WINDOW {
            assert!(r.on_psn_nak(&sq, 0, p, true, 0, 0, 0).is_empty(), "psn {p}");
        }
    }

    #[test]
    fn a_lost_resend_is_resent_again_once_packets_sent_well_after_it_are_placed() {
        let (mut r, sq) = queue(64, 100);
        let t0 = TS_MASK - 100;
        assert_eq!(resent(&r.on_psn_nak(&sq, 100, 101, true, t0, 0, 0)), vec![100]);
        // Placed packets sent soon after: the resend may still be on its way.
        let soon = (t0 + RESEND_AGAIN_CYCLES - 1) & TS_MASK;
        assert!(r.on_psn_nak(&sq, 100, 102, true, soon, 0, 0).is_empty());
        // One sent later than that (across the timestamp's wrap): the resend was lost.
        let late = (t0 + RESEND_AGAIN_CYCLES) & TS_MASK;
        assert_eq!(resent(&r.on_psn_nak(&sq, 100, 103, true, late, 0, 0)), vec![100]);
        // Its own clock starts again at that packet.
        assert!(r.on_psn_nak(&sq, 100, 104, true, (late + 10) & TS_MASK, 0, 0).is_empty());
        assert_eq!(r.stats.resends_again, 1);
    }

    #[test]
    fn folded_naks_decide_as_if_each_had_been_reported() {
        // Placed NAKs as the responder sends them: losses at 100, 107 and 108, 120.
        let mut naks = Vec::new();
        for p in (101..107).chain(109..120).chain(121..140) {
            naks.push((100u32, p as u32));
        }
        let (mut one, sq) = queue(64, 100);
        let each: Vec<Action> = naks.iter().flat_map(|&(e, p)| one.on_psn_nak(&sq, e, p, true, 0, 0, 0)).collect();
        // The NIC's fold: the next PSN at the same ePSN, up to 15 in a row, goes into the next report.
        let (mut folding, sq2) = queue(64, 100);
        let mut folded_acts = Vec::new();
        let (mut last, mut run, mut reports) = (None::<u32>, 0u32, 0);
        for &(e, p) in &naks {
            if last == Some(p - 1) && run < 15 {
                run += 1;
            } else {
                folded_acts.extend(folding.on_psn_nak(&sq2, e, p, true, 0, run, 0));
                run = 0;
                reports += 1;
            }
            last = Some(p);
        }
        folded_acts.extend(folding.unfold(&sq2, run));
        assert_eq!(resent(&folded_acts), resent(&each));
        // The holes, then again those still missing 24 packets (96 KiB) after their resend's trigger.
        assert_eq!(resent(&each), vec![100, 107, 108, 120, 100, 107, 108]);
        assert_eq!(folding.stats, one.stats);
        assert!(reports < naks.len() / 3, "{reports} reports for {} NAKs", naks.len());
    }

    #[test]
    fn holes_inside_a_read_get_one_resend_for_the_read() {
        const W: WcOpcode = WcOpcode::RdmaWrite;
        let mut wrs = vec![(4096, W), (4 * 4096, WcOpcode::RdmaRead)];
        wrs.extend([(4096, W); 40]);
        // WRITE 100, READ 101..=104, WRITEs 105 on.
        let (mut r, sq) = queue_mixed(100, &wrs);
        // 106 placed: holes 100..=105; the READ's four give one resend, from its first packet.
        assert_eq!(
            r.on_psn_nak(&sq, 100, 106, true, 0, 0, 0),
            vec![
                Action::Resend { idx: 0, psn: 100, msg_off: 0 },
                Action::Resend { idx: 1, psn: 101, msg_off: 0 },
                Action::Resend { idx: 2, psn: 105, msg_off: 0 },
            ]
        );
        // Packets sent before those resends: nothing.
        let again = RESEND_AGAIN_BYTES >> 12;
        for p in 107..106 + again {
            assert!(r.on_psn_nak(&sq, 100, p, true, 0, 0, 0).is_empty(), "psn {p}");
        }
        // Every hole still missing well after: resent again, the READ once.
        assert_eq!(resent(&r.on_psn_nak(&sq, 100, 106 + again, true, 0, 0, 0)), vec![100, 101, 105]);
        // The WRITEs' 100 and 105, and the READ once.
        assert_eq!(r.stats.resends_again, 3);

        // Holes in the middle of a READ: the lowest one, at its byte offset; one per decision.
        let (mut r, sq) = queue_mixed(200, &wrs);
        assert_eq!(resent(&r.on_psn_nak(&sq, 200, 202, true, 0, 0, 0)), vec![200, 201]);
        assert_eq!(
            r.on_psn_nak(&sq, 200, 205, true, 0, 0, 0),
            vec![Action::Resend { idx: 1, psn: 203, msg_off: 2 * 4096 }]
        );
    }

    #[test]
    fn the_lowest_hole_of_a_read_counts_across_the_psn_wrap() {
        let e = PSN_MASK - 1;
        let mut wrs = vec![(4 * 4096, WcOpcode::RdmaRead)];
        wrs.extend([(4096, WcOpcode::RdmaWrite); 40]);
        // READ at e, e+1, 0, 1; WRITEs from 2 on.
        let (mut r, sq) = queue_mixed(e, &wrs);
        assert_eq!(r.on_psn_nak(&sq, e, 2, true, 0, 0, 0), vec![Action::Resend { idx: 0, psn: e, msg_off: 0 }]);
        let again = RESEND_AGAIN_BYTES >> 12;
        for p in 3..2 + again {
            assert!(r.on_psn_nak(&sq, e, p, true, 0, 0, 0).is_empty(), "psn {p}");
        }
        // The lost holes are kept in PSN value order (0, 1, e, e+1): the READ's lowest is still e.
        assert_eq!(r.on_psn_nak(&sq, e, 2 + again, true, 0, 0, 0), vec![Action::Resend { idx: 0, psn: e, msg_off: 0 }]);
        assert_eq!(r.stats.resends_again, 1);
    }

    #[test]
    fn episodes_count_losses_past_the_previous_one() {
        let (mut r, sq) = queue(20, 100);
        r.on_psn_nak(&sq, 100, 101, true, 0, 0, 0);
        r.on_psn_nak(&sq, 100, 102, true, 0, 0, 0);
        // ePSN moved, but not past 102: the same episode.
        r.on_psn_nak(&sq, 102, 104, true, 0, 0, 0);
        assert_eq!(r.stats.episodes, 1);
        // ePSN past everything the episode named: a new one.
        r.on_psn_nak(&sq, 106, 108, true, 0, 0, 0);
        assert_eq!(r.stats.episodes, 2);
        // A timeout on a WQE the open episode covers opens none, and extends it to all posted (119).
        r.on_timeout(&sq, 6, 1);
        r.on_psn_nak(&sq, 115, 116, false, 0, 0, 0);
        assert_eq!(r.stats.episodes, 2);
        for _ in 0..5 {
            r.post(4096);
        }
        r.on_psn_nak(&sq, 121, 122, false, 0, 0, 0);
        assert_eq!(r.stats.episodes, 3);
    }

    #[test]
    fn many_holes_or_an_unplaced_packet_rewind() {
        let (mut r, sq) = queue(30, 100);
        match r.on_psn_nak(&sq, 100, 100 + MAX_RESENDS_PER_NAK + 2, true, 0, 0, 0).as_slice() {
            [Action::Rewind { psn: 100, .. }] => {}
            other => panic!("{other:?}"),
        }
        let (mut r, sq) = queue(30, 100);
        match r.on_psn_nak(&sq, 100, 103, false, 0, 0, 0).as_slice() {
            [Action::Rewind { psn: 100, .. }] => {}
            other => panic!("{other:?}"),
        }
        // The same ePSN again: already rewound.
        assert!(r.on_psn_nak(&sq, 100, 104, false, 0, 0, 0).is_empty());
    }

    /// Found by the lossy random tests with error injection (seed 31): after
    /// a rewind for too many holes, each placed NAK of the packets still in
    /// flight found the holes again and rewound again, and a late duplicate
    /// rewind landed on a WQE that had completed meanwhile, its ring slot
    /// reused by a new WQE.
    #[test]
    fn placed_naks_after_a_rewind_to_the_same_epsn_rewind_nothing() {
        let (mut r, sq) = queue(40, 100);
        match r.on_psn_nak(&sq, 100, 100 + MAX_RESENDS_PER_NAK + 2, true, 0, 0, 0).as_slice() {
            [Action::Rewind { psn: 100, .. }] => {}
            other => panic!("{other:?}"),
        }
        for p in 100 + MAX_RESENDS_PER_NAK + 3..130 {
            assert!(r.on_psn_nak(&sq, 100, p, true, 0, 0, 0).is_empty(), "psn {p}");
        }
        assert_eq!(r.stats.ooo_placed, 130 - (100 + MAX_RESENDS_PER_NAK + 2) as u64);
        // ePSN moved on: a new hole is resent as usual.
        assert_eq!(resent(&r.on_psn_nak(&sq, 131, 133, true, 0, 0, 0)), vec![131, 132]);
    }

    #[test]
    fn rnr_timer_table() {
        assert_eq!(rnr_timer_us(0), 655_360.0);
        assert_eq!(rnr_timer_us(1), 10.0);
        assert_eq!(rnr_timer_us(12), 640.0);
        assert_eq!(rnr_timer_us(31), 491_520.0);
    }
}
