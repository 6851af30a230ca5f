//! Faults on a NIC's egress link: the lossy, reordering fabric rnic is built for.
//!
//! Every fault is seeded and reproducible. Three kinds combine on one link,
//! applied in this order to each frame the NIC transmits:
//!
//! 1. **Scripted**: drop the next `n` frames, delay, duplicate or corrupt the
//!    next one ([`LinkFaults::drop_next`] and friends).
//! 2. **Targeted**: drop matches of a predicate on the frame's
//!    [`FrameClass`] (opcode, QP, PSN, first/last, ACK/NAK, retransmission),
//!    after skipping some ([`LinkFaults::drop_matching`]), so a test can lose
//!    "the 3rd SEND Last of QP 5" or "every ACK".
//! 3. **Random** ([`RandomFaults`]): loss at a rate, in bursts of a mean
//!    length (a two-state Gilbert–Elliott chain), duplication, corruption of
//!    one byte, and a uniform extra delay per frame (jitter), which reorders
//!    frames that are closer together than the jitter.
//!
//! A closure hook ([`LinkFaults::set_hook`]) runs last and may change or
//! drop any frame.

use std::collections::{HashMap, VecDeque};

use rnic_spec::wire::{Opcode, Packet, Syndrome, HDR_LEN, ICRC_LEN};

use crate::rng::SplitMix;

/// Decides whether a frame is delivered; may modify it. `true` delivers.
pub type FrameHook = Box<dyn FnMut(&mut Vec<u8>) -> bool + Send>;

/// A predicate on a frame's class, for [`LinkFaults::drop_matching`].
pub type FramePredicate = Box<dyn FnMut(&FrameClass) -> bool + Send>;

/// What a fault predicate sees of an rnic frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameClass {
    /// BTH opcode.
    pub opcode: Opcode,
    /// BTH destination QPN.
    pub dqpn: u32,
    /// BTH PSN.
    pub psn: u32,
    /// AETH syndrome (ACKs only).
    pub syndrome: Option<Syndrome>,
    /// A request whose PSN this link already carried for the same QP
    /// (at or behind the highest PSN seen, in 24-bit serial order).
    pub retransmission: bool,
}

impl FrameClass {
    /// The class of `frame`, or `None` if it is not a RoCEv2 frame of rnic's
    /// layout (the checksums are not looked at).
    pub fn of(frame: &[u8]) -> Option<FrameClass> {
        let p = Packet::new_checked(frame).ok()?;
        let opcode = p.opcode();
        Some(FrameClass {
            opcode,
            dqpn: p.dest_qpn(),
            psn: p.psn(),
            syndrome: opcode.is_ack().then(|| p.syndrome()),
            retransmission: false,
        })
    }

    /// A request (anything but an ACK/NAK).
    pub fn is_request(&self) -> bool {
        !self.opcode.is_ack()
    }

    /// A positive ACK.
    pub fn is_ack(&self) -> bool {
        self.syndrome.is_some_and(|s| s.is_ack())
    }

    /// A NAK (RNR or one of the NAK codes).
    pub fn is_nak(&self) -> bool {
        self.syndrome.is_some_and(|s| s.is_nak())
    }
}

/// Seeded random faults of one link. The default is a perfect link.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RandomFaults {
    /// Fraction of frames lost (0.01 = 1 %).
    pub loss: f64,
    /// Mean length of a loss burst in frames; at most 1 means independent losses.
    pub burst: f64,
    /// Fraction of delivered frames delivered twice.
    pub dup: f64,
    /// Fraction of delivered frames with one byte (after the Ethernet
    /// header, before the ICRC) flipped, so the receiver's checks see them.
    pub corrupt: f64,
    /// Each delivered frame arrives up to this many ns late (uniform), so
    /// frames closer together than this are reordered.
    pub jitter_ns: u64,
    /// Seed of the link's generator.
    pub seed: u64,
}

impl RandomFaults {
    /// True if no random fault is configured.
    pub fn is_perfect(&self) -> bool {
        self.loss <= 0.0 && self.dup <= 0.0 && self.corrupt <= 0.0 && self.jitter_ns == 0
    }
}

/// Counters of a NIC's egress link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Frames the NIC transmitted.
    pub frames: u64,
    /// Bytes of those frames (without wire overhead).
    pub bytes: u64,
    /// Frames dropped by faults.
    pub dropped: u64,
    /// Frames corrupted by faults.
    pub corrupted: u64,
    /// Frames delayed by faults (scripted delay or jitter).
    pub delayed: u64,
    /// Frames duplicated by faults.
    pub duplicated: u64,
    /// Requests this link carried again (see [`FrameClass::retransmission`]),
    /// counted while random faults or drop rules are set on it.
    pub retransmissions: u64,
}

struct DropRule {
    pred: FramePredicate,
    skip: u64,
    count: u64,
}

/// Faults injected on a NIC's egress link (before the switch).
#[derive(Default)]
pub struct LinkFaults {
    drop_next: u64,
    delay_next: VecDeque<u64>,
    duplicate_next: u64,
    corrupt_next: VecDeque<(usize, u8)>,
    rules: Vec<DropRule>,
    hook: Option<FrameHook>,
    random: RandomFaults,
    rng: Option<SplitMix>,
    in_burst: bool,
    /// Highest request PSN carried per destination QPN.
    highest_psn: HashMap<u32, u32>,
}

/// `a` is at or behind `b` in 24-bit serial order.
fn psn_not_after(a: u32, b: u32) -> bool {
    b.wrapping_sub(a) & 0xFF_FFFF < 0x80_0000
}

impl LinkFaults {
    /// Drops the next `n` frames.
    pub fn drop_next(&mut self, n: u64) {
        self.drop_next += n;
    }
    /// Delivers the next frame (not dropped) `extra_ns` late, so frames sent after it overtake it (reordering).
    pub fn delay_next(&mut self, extra_ns: u64) {
        self.delay_next.push_back(extra_ns * 1000);
    }
    /// Delivers each of the next `n` frames (not dropped) twice, the copy right after the original.
    pub fn duplicate_next(&mut self, n: u64) {
        self.duplicate_next += n;
    }
    /// XORs byte `offset` of the next frame (not dropped) with `xor` (ignored if the frame is shorter).
    pub fn corrupt_next(&mut self, offset: usize, xor: u8) {
        self.corrupt_next.push_back((offset, xor));
    }
    /// Among the frames whose class matches `pred`, lets the first `skip`
    /// through and drops the next `count` (`u64::MAX`: all the rest).
    /// Frames that are not rnic frames never match.
    pub fn drop_matching(&mut self, skip: u64, count: u64, pred: FramePredicate) {
        self.rules.push(DropRule { pred, skip, count });
    }
    /// Forgets the PSNs this link carried, so none of the sender's next
    /// requests counts as a retransmission (its NIC was reset: new QPs).
    pub fn forget_psns(&mut self) {
        self.highest_psn.clear();
    }
    /// Removes every [`LinkFaults::drop_matching`] rule.
    pub fn clear_rules(&mut self) {
        self.rules.clear();
    }
    /// Runs `hook` on every frame after the other faults: it may change the frame, and drops it by returning false.
    pub fn set_hook(&mut self, hook: FrameHook) {
        self.hook = Some(hook);
    }
    /// Removes the hook.
    pub fn clear_hook(&mut self) {
        self.hook = None;
    }
    /// Sets the random faults and reseeds the link's generator.
    pub fn set_random(&mut self, random: RandomFaults) {
        self.random = random;
        self.rng = Some(SplitMix::new(random.seed));
        self.in_burst = false;
    }
    /// Drops each frame independently with probability `ppm` / 1e6, from a seeded generator.
    pub fn set_loss(&mut self, ppm: u32, seed: u64) {
        self.set_random(RandomFaults { loss: f64::from(ppm) / 1e6, seed, ..self.random });
    }

    fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.rng.as_mut().is_some_and(|r| r.chance(p))
    }

    /// One step of the loss chain: true if this frame is lost.
    fn random_loss(&mut self) -> bool {
        let RandomFaults { loss, burst, .. } = self.random;
        if loss <= 0.0 {
            return false;
        }
        if burst <= 1.0 {
            return self.chance(loss);
        }
        // Gilbert–Elliott with a lossy bad state: bursts last `burst` frames on
        // average and the stationary loss is `loss`.
        let lossy = if self.in_burst { !self.chance(1.0 / burst) } else { self.chance(loss / (burst * (1.0 - loss))) };
        self.in_burst = lossy;
        lossy
    }

    /// Extra delay (ps) and whether to duplicate, for a frame that goes on.
    pub(crate) fn take_delivery(&mut self, stats: &mut LinkStats) -> (u64, bool) {
        let mut extra = self.delay_next.pop_front().unwrap_or(0);
        if self.random.jitter_ns > 0 {
            let j = self.rng.as_mut().map_or(0, |r| r.range(0, self.random.jitter_ns * 1000));
            extra += j;
        }
        if extra > 0 {
            stats.delayed += 1;
        }
        let mut dup = self.duplicate_next > 0;
        if dup {
            self.duplicate_next -= 1;
        } else {
            dup = self.chance(self.random.dup);
        }
        if dup {
            stats.duplicated += 1;
        }
        (extra, dup)
    }

    /// Applies the faults; true if the frame goes on.
    pub(crate) fn apply(&mut self, frame: &mut Vec<u8>, stats: &mut LinkStats) -> bool {
        // Frames are parsed only on a link with faults set: a perfect link costs nothing per frame.
        let class = if self.rules.is_empty() && self.random.is_perfect() { None } else { self.classify(frame, stats) };
        if self.drop_next > 0 {
            self.drop_next -= 1;
            stats.dropped += 1;
            return false;
        }
        if let Some(class) = class {
            let mut drop = false;
            for rule in &mut self.rules {
                if rule.count > 0 && (rule.pred)(&class) {
                    if rule.skip > 0 {
                        rule.skip -= 1;
                    } else {
                        rule.count -= 1;
                        drop = true;
                    }
                }
            }
            if drop {
                stats.dropped += 1;
                return false;
            }
        }
        if self.random_loss() {
            stats.dropped += 1;
            return false;
        }
        if let Some((o, x)) = self.corrupt_next.pop_front() {
            if let Some(b) = frame.get_mut(o) {
                *b ^= x;
                stats.corrupted += 1;
            }
        }
        if frame.len() > HDR_LEN + ICRC_LEN && self.chance(self.random.corrupt) {
            if let Some(r) = self.rng.as_mut() {
                let o = r.range(14, (frame.len() - ICRC_LEN - 1) as u64) as usize;
                frame[o] ^= 1 << r.below(8);
                stats.corrupted += 1;
            }
        }
        if let Some(h) = self.hook.as_mut() {
            if !h(frame) {
                stats.dropped += 1;
                return false;
            }
        }
        true
    }

    /// The frame's class with the retransmission flag, when someone looks at it.
    fn classify(&mut self, frame: &[u8], stats: &mut LinkStats) -> Option<FrameClass> {
        let mut class = FrameClass::of(frame)?;
        if class.is_request() {
            match self.highest_psn.get_mut(&class.dqpn) {
                Some(h) if psn_not_after(class.psn, *h) => class.retransmission = true,
                Some(h) => *h = class.psn,
                None => {
                    self.highest_psn.insert(class.dqpn, class.psn);
                }
            }
            if class.retransmission {
                stats.retransmissions += 1;
            }
        }
        Some(class)
    }
}

#[cfg(test)]
mod tests {
    use rnic_spec::wire::{opcode, syndrome, Frame};

    use super::*;

    fn request(dqpn: u32, psn: u32, op: u8) -> Vec<u8> {
        Frame { opcode: op, dqpn, psn, payload: vec![psn as u8; 64], ..Frame::default() }.encode()
    }

    fn ack(dqpn: u32, psn: u32, syn: u8) -> Vec<u8> {
        Frame { opcode: opcode::ACK, dqpn, psn, syndrome: syn, ..Frame::default() }.encode()
    }

    /// Runs `frames` through `f`; the delivered frames' indices and the stats.
    fn pass(f: &mut LinkFaults, frames: &[Vec<u8>]) -> (Vec<usize>, LinkStats) {
        let mut stats = LinkStats::default();
        let mut out = Vec::new();
        for (i, fr) in frames.iter().enumerate() {
            let mut fr = fr.clone();
            if f.apply(&mut fr, &mut stats) {
                f.take_delivery(&mut stats);
                out.push(i);
            }
        }
        (out, stats)
    }

    #[test]
    fn classifies_requests_acks_and_naks() {
        let c = FrameClass::of(&request(7, 100, opcode::SEND_LAST)).unwrap();
        assert_eq!((c.opcode, c.dqpn, c.psn, c.syndrome), (Opcode::SendLast, 7, 100, None));
        assert!(c.is_request() && c.opcode.is_last() && !c.opcode.is_first());
        let a = FrameClass::of(&ack(3, 9, syndrome::ACK)).unwrap();
        assert!(a.is_ack() && !a.is_nak() && !a.is_request());
        let n = FrameClass::of(&ack(3, 9, syndrome::NAK_PSN_SEQ)).unwrap();
        assert!(n.is_nak() && !n.is_ack());
        assert!(FrameClass::of(&[0u8; 60]).is_none(), "not a RoCE frame");
    }

    #[test]
    fn drops_the_nth_match_of_a_predicate() {
        let mut f = LinkFaults::default();
        // The 3rd WRITE Last to QP 5, and every NAK.
        f.drop_matching(2, 1, Box::new(|c| c.dqpn == 5 && c.opcode == Opcode::WriteLast));
        f.drop_matching(0, u64::MAX, Box::new(|c| c.is_nak()));
        let mut frames = Vec::new();
        for psn in 0..6 {
            frames.push(request(5, psn, opcode::WRITE_LAST));
            frames.push(request(6, psn, opcode::WRITE_LAST));
            frames.push(ack(5, psn, syndrome::NAK_PSN_SEQ));
            frames.push(ack(5, psn, syndrome::ACK));
        }
        let (out, s) = pass(&mut f, &frames);
        let dropped: Vec<usize> = (0..frames.len()).filter(|i| !out.contains(i)).collect();
        assert_eq!(dropped, vec![2, 6, 8, 10, 14, 18, 22]);
        assert_eq!(s.dropped, 7);
    }

    #[test]
    fn marks_retransmissions_per_qp() {
        let mut f = LinkFaults::default();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let s2 = seen.clone();
        f.drop_matching(
            0,
            u64::MAX,
            Box::new(move |c| {
                s2.lock().unwrap().push(c.retransmission);
                false
            }),
        );
        let frames = [
            request(1, 0xFF_FFFE, opcode::WRITE_MIDDLE),
            request(1, 0xFF_FFFF, opcode::WRITE_MIDDLE),
            request(1, 0, opcode::WRITE_MIDDLE),
            request(2, 5, opcode::WRITE_MIDDLE),
            request(1, 0xFF_FFFF, opcode::WRITE_MIDDLE),
            request(1, 1, opcode::WRITE_MIDDLE),
            ack(1, 0, syndrome::ACK),
        ];
        let (_, s) = pass(&mut f, &frames);
        assert_eq!(*seen.lock().unwrap(), vec![false, false, false, false, true, false, false]);
        assert_eq!(s.retransmissions, 1);
    }

    fn random_run(r: RandomFaults, n: usize) -> (Vec<usize>, LinkStats) {
        let mut f = LinkFaults::default();
        f.set_random(r);
        let frames: Vec<_> = (0..n).map(|i| request(1, i as u32, opcode::WRITE_MIDDLE)).collect();
        pass(&mut f, &frames)
    }

    #[test]
    fn random_faults_are_reproducible_per_seed() {
        let r = RandomFaults { loss: 0.05, burst: 3.0, dup: 0.01, corrupt: 0.01, jitter_ns: 500, seed: 42 };
        let a = random_run(r, 5_000);
        assert_eq!(a, random_run(r, 5_000), "same seed, same faults");
        assert_ne!(a.0, random_run(RandomFaults { seed: 43, ..r }, 5_000).0, "another seed, other losses");
    }

    #[test]
    fn independent_loss_and_dup_rates_hold() {
        let n = 200_000;
        for (loss, seed) in [(0.001, 1), (0.01, 2), (0.05, 3)] {
            let (out, s) = random_run(RandomFaults { loss, dup: 0.02, seed, ..RandomFaults::default() }, n);
            let lost = (n - out.len()) as f64;
            let mean = loss * n as f64;
            assert!((lost - mean).abs() < 5.0 * mean.sqrt() + 1.0, "loss {loss}: {lost} lost");
            let dups = s.duplicated as f64;
            let want = 0.02 * out.len() as f64;
            assert!((dups - want).abs() < 5.0 * want.sqrt(), "dup: {dups} of {}", out.len());
        }
    }

    #[test]
    fn bursts_have_the_mean_length_and_the_rate() {
        let n = 400_000;
        let (out, _) = random_run(RandomFaults { loss: 0.01, burst: 4.0, seed: 9, ..RandomFaults::default() }, n);
        let mut delivered = vec![false; n];
        let mut lost = 0;
        for &i in &out {
            delivered[i] = true;
        }
        let mut bursts = 0;
        for i in 0..n {
            if !delivered[i] {
                lost += 1;
                if i == 0 || delivered[i - 1] {
                    bursts += 1;
                }
            }
        }
        let rate = lost as f64 / n as f64;
        let mean = lost as f64 / bursts as f64;
        assert!((rate - 0.01).abs() < 0.0015, "loss rate {rate}");
        assert!((mean - 4.0).abs() < 0.4, "mean burst {mean}");
    }

    #[test]
    fn corruption_flips_one_bit_after_the_ethernet_header() {
        let n = 20_000;
        let mut f = LinkFaults::default();
        f.set_random(RandomFaults { corrupt: 0.1, seed: 5, ..RandomFaults::default() });
        let orig = request(1, 1, opcode::WRITE_MIDDLE);
        let mut stats = LinkStats::default();
        let mut changed = 0;
        for _ in 0..n {
            let mut fr = orig.clone();
            assert!(f.apply(&mut fr, &mut stats));
            let diff: Vec<usize> = (0..fr.len()).filter(|&i| fr[i] != orig[i]).collect();
            if !diff.is_empty() {
                changed += 1;
                assert_eq!(diff.len(), 1);
                let o = diff[0];
                assert!((14..fr.len() - ICRC_LEN).contains(&o));
                assert_eq!((fr[o] ^ orig[o]).count_ones(), 1);
            }
        }
        assert_eq!(changed, stats.corrupted);
        assert!((changed as f64 - 2_000.0).abs() < 250.0, "{changed} corrupted");
    }

    #[test]
    fn jitter_delays_within_its_bound() {
        let mut f = LinkFaults::default();
        f.set_random(RandomFaults { jitter_ns: 1_000, seed: 11, ..RandomFaults::default() });
        let mut stats = LinkStats::default();
        let delays: Vec<u64> = (0..10_000).map(|_| f.take_delivery(&mut stats).0).collect();
        assert!(delays.iter().all(|&d| d <= 1_000_000));
        let mean = delays.iter().sum::<u64>() as f64 / delays.len() as f64;
        assert!((mean - 500_000.0).abs() < 20_000.0, "mean jitter {mean} ps");
        assert!(delays.iter().any(|&d| d > 990_000) && delays.iter().any(|&d| d < 10_000));
    }
}
