//! The responder's slow path: software recovery, SRNIC's bitmap onloading
//! for QPs the NIC's on-chip windows cannot hold.
//!
//! The responder places packets out of order in a window borrowed from a
//! pool of `params::SR_POOL`. A QP whose first out-of-order packet finds
//! the pool empty goes to software recovery: the NIC places its plain WRITE
//! packets up to `params::SW_SR_SPAN` PSNs ahead of ePSN, reports each one
//! (`ctrlq_kind::RESP_OOO`: PSN, PSN_OFFSET, whether it ends its message)
//! and every packet it then takes at ePSN (`resp_report::INORDER`, with
//! the new ePSN), and keeps only the most advanced run of consecutive PSNs
//! it placed (`[psn_left, psn_right]`). When ePSN reaches `psn_left`, the
//! NIC itself jumps past the run and the QP leaves recovery.
//!
//! The run is all the NIC remembers; a packet placed in an earlier run is
//! known only here. This module keeps the QP's bitmap (one slot per PSN
//! from the NIC's ePSN on, allocated at the first report and dropped when
//! the QP leaves recovery) and, when the slots from ePSN on are placed,
//! tells the NIC to move ePSN over them (`regs::REG_RX_SR_SET`): from the
//! ePSN it knows, to the first hole or to `psn_left`, whichever comes
//! first, with the messages that end in between. The NIC applies it only
//! at that ePSN and not past `psn_left` (SRNIC's exit rule, Figure 8: a
//! report still on its way cannot be overtaken), answers with
//! `ctrlq_kind::RESP_SYNC`, and at `psn_left` jumps past the run.
//!
//! Every report carries the QP's responder generation (its resets mod 16):
//! a report of another generation than the bitmap's starts a new bitmap
//! (reports of the QPN's previous life can still be in the CtrlQ after a
//! reset), and each command carries the generation, so the NIC refuses one
//! meant for another life. A refused command whose `from` is still the
//! NIC's ePSN means the bitmap no longer matches the NIC (a report was
//! lost, say the one saying the QP left recovery): the bitmap is dropped
//! rather than asked again.
//!
//! Nothing here is needed for progress: if reports are lost (CtrlQ full)
//! or the application does not poll, the requester's timeout resends from
//! ePSN and the NIC takes those packets in order until it reaches the run.

use rnic_spec::desc::{ctrlq_kind, resp_report};
use rnic_spec::params::SW_SR_SPAN;
use std::collections::VecDeque;

/// PSNs are 24 bits.
const PSN_MASK: u32 = 0xFF_FFFF;

/// `a - b` in 24-bit PSN space, signed.
fn psn_dist(a: u32, b: u32) -> i32 {
    (((a.wrapping_sub(b)) << 8) as i32) >> 8
}

/// One PSN of the bitmap.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Slot {
    /// The NIC placed the packet.
    placed: bool,
    /// It ends its message.
    last: bool,
    /// Packets of its message up to and including it (0 if it ends the message).
    pkts: u32,
    /// It is a SEND's packet (not a WRITE's).
    send: bool,
}

/// The bitmap of a QP in software recovery.
#[derive(Clone, Debug)]
struct Bitmap {
    /// The QP's responder generation the reports came from.
    gen: u8,
    /// The NIC's ePSN as last reported: the PSN of `slots[0]`.
    epsn: u32,
    slots: VecDeque<Slot>,
    /// The NIC's run `[psn_left, psn_right]`, followed from the reports by
    /// the NIC's rule (a packet right after it extends it, one further
    /// ahead starts a new one).
    run: Option<(u32, u32)>,
}

impl Bitmap {
    fn new(gen: u8, epsn: u32) -> Self {
        Bitmap { gen, epsn, slots: VecDeque::new(), run: None }
    }

    /// The NIC's ePSN moved to `epsn`: the slots behind it go.
    fn advance_to(&mut self, epsn: u32) {
        let d = psn_dist(epsn, self.epsn);
        if d <= 0 {
            return;
        }
        let n = (d as usize).min(self.slots.len());
        self.slots.drain(..n);
        self.epsn = epsn;
    }

    fn mark(&mut self, psn: u32, last: bool, send: bool, psn_offset: u32) {
        let i = psn_dist(psn, self.epsn);
        if i < 0 || i as u32 >= SW_SR_SPAN {
            return;
        }
        let i = i as usize;
        if self.slots.len() <= i {
            self.slots.resize(i + 1, Slot::default());
        }
        let pkts = if last { 0 } else { (psn_offset + 1) & PSN_MASK };
        self.slots[i] = Slot { placed: true, last, pkts, send };
        self.run = match self.run {
            Some((l, r)) if psn == ((r + 1) & PSN_MASK) => Some((l, psn)),
            Some((l, r)) if psn_dist(psn, r) <= 0 => Some((l, r)),
            _ => Some((psn, psn)),
        };
    }
}

/// A command for the NIC (`regs::rx_sr`): PSNs `from..to` are placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SwCommand {
    pub from: u32,
    pub to: u32,
    /// Messages that end in `from..to`.
    pub ends: u32,
    /// Packets of the unfinished message `to - 1` belongs to (0: it ends one).
    pub pkts: u32,
    /// That message is a SEND.
    pub send: bool,
    /// The responder generation it is meant for.
    pub gen: u8,
}

/// Counters of the responder's software recovery, per QP.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RespStats {
    pub placed: u64,
    pub commands: u64,
    pub applied: u64,
    pub episodes: u64,
}

/// Per-QP state of the responder's software recovery.
#[derive(Clone, Debug, Default)]
pub(crate) struct RespRecovery {
    /// The bitmap, while the QP is in recovery.
    map: Option<Bitmap>,
    /// The command sent and not yet answered: (from, to).
    pending: Option<(u32, u32)>,
    pub stats: RespStats,
}

impl RespRecovery {
    /// The QP was reset: whatever it was recovering is gone.
    pub fn reset(&mut self) {
        self.map = None;
        self.pending = None;
    }

    /// Whether the QP is in software recovery (as far as the reports say).
    #[cfg(test)]
    fn active(&self) -> bool {
        self.map.is_some()
    }

    /// A CtrlQ report of the responder (`kind`, `flags`, `psn`, `epsn`,
    /// `psn_offset`, `episode` as in `CtrlqEntry`); the command to write, if any.
    pub fn on_report(
        &mut self,
        kind: u8,
        flags: u8,
        psn: u32,
        epsn: u32,
        psn_offset: u32,
        gen: u8,
    ) -> Option<SwCommand> {
        let (psn, epsn, gen) = (psn & PSN_MASK, epsn & PSN_MASK, gen & 0xF);
        if self.map.as_ref().is_some_and(|m| m.gen != gen) {
            // A later life of the QPN (or an earlier one's late report): start over.
            self.reset();
        }
        match kind {
            ctrlq_kind::RESP_OOO if flags & resp_report::INORDER != 0 => {
                if flags & resp_report::EXITED != 0 {
                    self.reset();
                    return None;
                }
                // ePSN moved under any command still queued: that one will be refused.
                self.pending = None;
                self.map.get_or_insert_with(|| Bitmap::new(gen, epsn)).advance_to(epsn);
            }
            ctrlq_kind::RESP_OOO => {
                self.stats.placed += 1;
                if self.map.is_none() {
                    self.stats.episodes += 1;
                }
                let m = self.map.get_or_insert_with(|| Bitmap::new(gen, epsn));
                m.advance_to(epsn);
                m.mark(psn, flags & resp_report::LAST != 0, flags & resp_report::SEND != 0, psn_offset);
            }
            ctrlq_kind::RESP_SYNC => {
                let from = psn_offset & PSN_MASK;
                if self.pending == Some((from, psn)) {
                    self.pending = None;
                }
                if flags & resp_report::APPLIED != 0 {
                    self.stats.applied += 1;
                } else if epsn == from && self.map.as_ref().is_some_and(|m| m.epsn == from) {
                    // Refused at the ePSN it was computed for: the bitmap is out of step with the NIC.
                    self.reset();
                    return None;
                }
                if flags & resp_report::EXITED != 0 {
                    self.reset();
                    return None;
                }
                if let Some(m) = self.map.as_mut() {
                    m.advance_to(epsn);
                }
            }
            _ => return None,
        }
        self.decide()
    }

    /// The next command: from ePSN over the placed slots, up to the first
    /// hole or the run's start. One at a time per QP.
    fn decide(&mut self) -> Option<SwCommand> {
        if self.pending.is_some() {
            return None;
        }
        let m = self.map.as_ref()?;
        let mut k = m.slots.iter().position(|s| !s.placed).unwrap_or(m.slots.len());
        if let Some((left, _)) = m.run {
            let dl = psn_dist(left, m.epsn);
            if dl > 0 && (dl as usize) < k {
                k = dl as usize;
            }
        }
        if k == 0 {
            return None;
        }
        let ends = m.slots.iter().take(k).filter(|s| s.last).count() as u32;
        let s = m.slots[k - 1];
        let cmd = SwCommand {
            from: m.epsn,
            to: (m.epsn + k as u32) & PSN_MASK,
            ends,
            pkts: s.pkts,
            send: s.send,
            gen: m.gen,
        };
        self.pending = Some((cmd.from, cmd.to));
        self.stats.commands += 1;
        Some(cmd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use resp_report::{APPLIED, EXITED, INORDER, LAST};
    use rnic_spec::desc::ctrlq_kind::{RESP_OOO, RESP_SYNC};

    /// A model of the NIC's side: ePSN, MSN, the run, and its rules for
    /// packets and commands, to check what the slow path asks for.
    struct Nic {
        epsn: u32,
        msn: u32,
        run: Option<(u32, u32, u32)>,
    }

    impl Nic {
        fn apply(&mut self, c: SwCommand) -> (u8, u32) {
            let (left, right, ends) = self.run.expect("in recovery");
            let rel = c.to.wrapping_sub(c.from) & PSN_MASK;
            let lim = left.wrapping_sub(c.from) & PSN_MASK;
            if self.epsn != c.from || rel == 0 || rel > lim {
                return (0, self.epsn);
            }
            self.epsn = c.to;
            self.msn += c.ends;
            if c.to == left {
                self.epsn = (right + 1) & PSN_MASK;
                self.msn += ends;
                self.run = None;
                return (APPLIED | EXITED, self.epsn);
            }
            (APPLIED, self.epsn)
        }
    }

    #[test]
    fn two_holes_need_one_command_and_the_run_jump() {
        // ePSN 10; 10 and 15 lost; 11..=14 (one message ending at 14) and 16..=19 placed.
        let mut r = RespRecovery::default();
        let mut nic = Nic { epsn: 10, msn: 0, run: None };
        for psn in (11..=14).chain(16..=19) {
            let last = psn == 14 || psn == 19;
            let c = r.on_report(RESP_OOO, if last { LAST } else { 0 }, psn, 10, psn % 5, 0);
            assert_eq!(c, None, "nothing is placed at ePSN yet");
            let e = nic.run.map_or(0, |(_, _, e)| e);
            nic.run = match nic.run {
                Some((l, r, _)) if psn == r + 1 => Some((l, psn, e + last as u32)),
                _ => Some((psn, psn, last as u32)),
            };
        }
        assert_eq!(nic.run.map(|(l, r, _)| (l, r)), Some((16, 19)));
        // The resend of 10 is taken in order; the NIC forgot 11..=14.
        nic.epsn = 11;
        let c = r.on_report(RESP_OOO, INORDER, 10, 11, 0, 0).expect("11..15 are placed");
        assert_eq!(c, SwCommand { from: 11, to: 15, ends: 1, pkts: 0, send: false, gen: 0 });
        let (f, e) = nic.apply(c);
        assert_eq!((f, e, nic.msn), (APPLIED, 15, 1));
        assert_eq!(r.on_report(RESP_SYNC, f, c.to, e, c.from, 0), None, "15 is still missing");
        // The resend of 15 arrives: ePSN 16 is the run's start, the NIC jumps.
        assert_eq!(r.on_report(RESP_OOO, INORDER | EXITED, 15, 20, 0, 0), None);
        assert!(!r.active());
        assert_eq!(r.stats, RespStats { placed: 8, commands: 1, applied: 1, episodes: 1 });
    }

    #[test]
    fn a_command_stops_at_the_run_and_a_late_one_is_refused() {
        let mut r = RespRecovery::default();
        // ePSN 100; 101 placed (run 101), then 103 (run 103..), 102 fills the gap later.
        assert_eq!(r.on_report(RESP_OOO, 0, 101, 100, 1, 0), None);
        assert_eq!(r.on_report(RESP_OOO, 0, 103, 100, 3, 0), None);
        assert_eq!(r.on_report(RESP_OOO, 0, 104, 100, 4, 0), None);
        assert_eq!(r.on_report(RESP_OOO, 0, 102, 100, 2, 0), None);
        // 100 arrives in order: 101..=102 placed, the run starts at 103: stop there.
        let c = r.on_report(RESP_OOO, INORDER, 100, 101, 0, 0).expect("command");
        assert_eq!(c, SwCommand { from: 101, to: 103, ends: 0, pkts: 3, send: false, gen: 0 });
        // While it waits, no second command (106 starts a new run at the NIC).
        assert_eq!(r.on_report(RESP_OOO, 0, 106, 101, 6, 0), None);
        // A duplicate of 101 was taken in order meanwhile (ePSN 102): the
        // queued command is stale. 106 started a new run, so the next
        // command goes up to the hole at 105.
        let c2 = r.on_report(RESP_OOO, INORDER, 101, 102, 1, 0).expect("command from 102");
        assert_eq!(c2, SwCommand { from: 102, to: 105, ends: 0, pkts: 5, send: false, gen: 0 });
        // The stale one's refusal does not count as the answer to the new one.
        assert_eq!(r.on_report(RESP_SYNC, 0, 103, 102, 101, 0), None);
        assert_eq!(r.pending, Some((102, 105)));
        // The new one's does; 105 is still missing.
        assert_eq!(r.on_report(RESP_SYNC, APPLIED, 105, 105, 102, 0), None);
        // Its resend is taken in order and ePSN reaches the run: the NIC jumps and leaves recovery.
        assert_eq!(r.on_report(RESP_OOO, INORDER | EXITED, 105, 107, 5, 0), None);
        assert!(!r.active());
        // A new episode starts with the next report.
        assert_eq!(r.on_report(RESP_OOO, 0, 109, 107, 2, 0), None);
        assert!(r.active());
        assert_eq!(r.stats.episodes, 2);
    }

    #[test]
    fn psns_wrap_at_24_bits() {
        let mut r = RespRecovery::default();
        let e = PSN_MASK - 1;
        assert_eq!(r.on_report(RESP_OOO, 0, PSN_MASK, e, 0, 0), None);
        assert_eq!(r.on_report(RESP_OOO, LAST, 0, e, 1, 0), None);
        assert_eq!(r.on_report(RESP_OOO, 0, 2, e, 0, 0), None);
        let c = r.on_report(RESP_OOO, INORDER, e, PSN_MASK, 0, 0).expect("command");
        assert_eq!(c, SwCommand { from: PSN_MASK, to: 1, ends: 1, pkts: 0, send: false, gen: 0 });
        assert_eq!(r.on_report(RESP_SYNC, APPLIED, 1, 1, PSN_MASK, 0), None, "1 is a hole");
        assert!(r.pending.is_none());
    }

    #[test]
    fn a_command_ending_inside_a_send_says_so() {
        use resp_report::SEND;
        let mut r = RespRecovery::default();
        // ePSN 50 lost; 51..=52 are packets 1, 2 of a SEND; 54 is further ahead (a new run).
        assert_eq!(r.on_report(RESP_OOO, SEND, 51, 50, 1, 0), None);
        assert_eq!(r.on_report(RESP_OOO, SEND, 52, 50, 2, 0), None);
        assert_eq!(r.on_report(RESP_OOO, SEND, 54, 50, 4, 0), None);
        let c = r.on_report(RESP_OOO, INORDER, 50, 51, 0, 0).expect("command");
        assert_eq!(c, SwCommand { from: 51, to: 53, ends: 0, pkts: 3, send: true, gen: 0 });
    }

    #[test]
    fn a_new_generation_starts_a_new_bitmap_and_commands_carry_it() {
        let mut r = RespRecovery::default();
        // Generation 3: 21 placed, ePSN 20.
        assert_eq!(r.on_report(RESP_OOO, 0, 21, 20, 1, 3), None);
        // The QP was reset (generation 4, ePSN 500): the old slot must not count.
        assert_eq!(r.on_report(RESP_OOO, 0, 502, 500, 2, 4), None);
        let c = r.on_report(RESP_OOO, INORDER, 500, 501, 0, 4);
        assert_eq!(c, None, "501 is a hole in the new life");
        assert_eq!(r.stats.episodes, 2);
        // 504 starts a new run; the resend of 501 is taken: 502 is placed, 503 missing.
        assert_eq!(r.on_report(RESP_OOO, 0, 504, 501, 4, 4), None);
        let c = r.on_report(RESP_OOO, INORDER, 501, 502, 1, 4);
        assert_eq!(c.map(|c| (c.from, c.to, c.gen)), Some((502, 503, 4)));
    }

    #[test]
    fn a_command_refused_at_its_own_epsn_drops_the_bitmap() {
        // The report that the QP left recovery was lost: the NIC refuses the
        // command at the very ePSN it names; asking again would only repeat it.
        let mut r = RespRecovery::default();
        assert_eq!(r.on_report(RESP_OOO, 0, 31, 30, 1, 0), None);
        assert_eq!(r.on_report(RESP_OOO, 0, 33, 30, 3, 0), None);
        let c = r.on_report(RESP_OOO, INORDER, 30, 31, 0, 0).expect("command");
        assert_eq!((c.from, c.to), (31, 32));
        assert_eq!(r.on_report(RESP_SYNC, 0, 32, 31, 31, 0), None);
        assert!(!r.active());
    }

    #[test]
    fn reports_beyond_the_span_are_ignored() {
        let mut r = RespRecovery::default();
        assert_eq!(r.on_report(RESP_OOO, 0, 10 + SW_SR_SPAN, 10, 0, 0), None);
        assert_eq!(r.map.as_ref().map(|m| m.slots.len()), Some(0));
    }
}
