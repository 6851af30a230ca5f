//! Receiver SACK generation (STrack §3.3.1), also used single-path by SRNIC's
//! selective repeat.
//!
//! The receiver keeps `EPSN` and a 256-bit arrival bitmap starting at EPSN
//! (bit `i` ⇔ PSN `EPSN + i` received; bit 0 is always clear). A SACK carries
//! one 64-bit *segment* of that bitmap.
//!
//! A SACK is generated on a packet arrival when any of the four conditions of
//! §3.3.1 holds:
//! 1. at least `ack_coalesce_bytes` new bytes arrived since the last SACK;
//! 2. the packet carries the current EPSN;
//! 3. the packet is a probe;
//! 4. the packet requests an ACK (e.g. the last packet of a message).
//!
//! Segment choice: the receiver records the lowest PSN that arrived since the
//! last SACK and sends the segment that contains it (segment 0, based at EPSN,
//! when that PSN is at or below EPSN) — retransmission starts from the lowest
//! unacknowledged PSN, so that is where the sender needs the freshest view. A
//! probe asks for the segment containing its requested SACK base.
//!
//! `bytes_recvd` counts payload bytes with duplicates eliminated; `ooo_count`
//! is the number of packets held above EPSN (the bitmap's population count).
//! Packets at or beyond `EPSN + 256` cannot be tracked and are dropped (the
//! sender never sends them: its window is limited to the same 256 packets).

use crate::Nanos;

/// Size of the receiver's arrival bitmap in packets.
pub const RX_BITMAP_BITS: u32 = 256;
/// Size of the bitmap segment carried in one SACK.
pub const SACK_SEGMENT_BITS: u32 = 64;

/// A 256-bit bitmap with the shifts the transports need.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bitmap256(pub [u64; 4]);

impl Bitmap256 {
    /// Bit `i` (0 ≤ i < 256).
    pub fn get(&self, i: u32) -> bool {
        i < 256 && self.0[(i / 64) as usize] >> (i % 64) & 1 == 1
    }
    /// Sets bit `i` (ignored when `i ≥ 256`).
    pub fn set(&mut self, i: u32) {
        if i < 256 {
            self.0[(i / 64) as usize] |= 1 << (i % 64);
        }
    }
    /// Clears bit `i`.
    pub fn clear(&mut self, i: u32) {
        if i < 256 {
            self.0[(i / 64) as usize] &= !(1 << (i % 64));
        }
    }
    /// Shifts right by `n` (bit `n` becomes bit 0).
    pub fn shr(&mut self, n: u32) {
        if n == 0 {
            return;
        }
        if n >= 256 {
            self.0 = [0; 4];
            return;
        }
        let (w, b) = ((n / 64) as usize, n % 64);
        let mut out = [0u64; 4];
        for (i, o) in out.iter_mut().enumerate() {
            let lo = i + w;
            if lo < 4 {
                *o = self.0[lo] >> b;
                if b != 0 && lo + 1 < 4 {
                    *o |= self.0[lo + 1] << (64 - b);
                }
            }
        }
        self.0 = out;
    }
    /// Number of consecutive set bits starting at bit 0.
    pub fn trailing_ones(&self) -> u32 {
        let mut n = 0;
        for w in self.0 {
            let t = w.trailing_ones();
            n += t;
            if t < 64 {
                break;
            }
        }
        n
    }
    /// Population count.
    pub fn count(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }
    /// Index of the first set bit in `[from, to)`, if any.
    pub fn first_set(&self, from: u32, to: u32) -> Option<u32> {
        let to = to.min(256);
        let mut i = from;
        while i < to {
            let w = self.0[(i / 64) as usize] >> (i % 64);
            if w != 0 {
                let j = i + w.trailing_zeros();
                return (j < to).then_some(j);
            }
            i = (i / 64 + 1) * 64;
        }
        None
    }
    /// Index of the highest set bit, if any.
    pub fn highest_set(&self) -> Option<u32> {
        (0..4).rev().find(|&w| self.0[w] != 0).map(|w| w as u32 * 64 + 63 - self.0[w].leading_zeros())
    }
}

/// What the receiver needs from a data (or probe) packet's headers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DataMeta {
    /// Packet sequence number (for a probe: the requested SACK base).
    pub psn: u32,
    /// Payload bytes (0 for a probe).
    pub bytes: u32,
    /// ECN-CE on arrival.
    pub ecn: bool,
    /// Entropy (path id) the sender used.
    pub entropy: u8,
    /// Sender's timestamp, echoed for the RTT.
    pub ts: Nanos,
    /// This is a probe packet (condition 3).
    pub probe: bool,
    /// The packet requests an ACK (condition 4).
    pub ack_req: bool,
}

/// STrack's SACK (Figure 7 fields + the echoed ones).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sack {
    /// Expected PSN (cumulative: everything below is received).
    pub epsn: u32,
    /// Base PSN of `bitmap`.
    pub sack_base: u32,
    /// Bit `i` ⇔ PSN `sack_base + i` received.
    pub bitmap: u64,
    /// Total payload bytes received, duplicates eliminated.
    pub bytes_recvd: u64,
    /// Out-of-order packets held above EPSN.
    pub ooo_count: u32,
    /// Echoed ECN mark of the packet that triggered the SACK.
    pub ecn: bool,
    /// Echoed entropy.
    pub entropy: u8,
    /// Echoed send timestamp.
    pub ts_echo: Nanos,
    /// The SACK answers a probe.
    pub probe_reply: bool,
}

/// Why the receiver generated a SACK (lowest-numbered condition that held).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckReason {
    /// (1) enough bytes since the last SACK.
    Bytes,
    /// (2) the packet carried EPSN.
    Epsn,
    /// (3) probe.
    Probe,
    /// (4) ACK requested.
    Requested,
}

/// Arrival classification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxVerdict {
    /// New data, placed.
    New,
    /// Already received (duplicate), not counted.
    Duplicate,
    /// Beyond the 256-packet bitmap: dropped.
    OutOfWindow,
    /// A probe (no payload).
    Probe,
}

/// Per-connection receiver state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SackReceiver {
    /// Expected PSN.
    pub epsn: u32,
    /// Arrival bitmap from EPSN.
    pub bitmap: Bitmap256,
    /// Unique payload bytes received.
    pub bytes_recvd: u64,
    /// New bytes since the last SACK.
    pub bytes_since_ack: u32,
    /// Lowest PSN that arrived since the last SACK.
    pub lowest_since_ack: Option<u32>,
    /// Coalescing threshold (condition 1), bytes.
    pub ack_coalesce_bytes: u32,
    /// SACKs generated.
    pub sacks_sent: u64,
}

impl SackReceiver {
    /// A receiver expecting PSN 0, coalescing ACKs every `ack_coalesce_bytes`.
    pub fn new(ack_coalesce_bytes: u32) -> Self {
        Self {
            epsn: 0,
            bitmap: Bitmap256::default(),
            bytes_recvd: 0,
            bytes_since_ack: 0,
            lowest_since_ack: None,
            ack_coalesce_bytes,
            sacks_sent: 0,
        }
    }

    /// Out-of-order packets held above EPSN.
    pub fn ooo_count(&self) -> u32 {
        self.bitmap.count()
    }

    /// Processes one arriving packet; returns its classification and the SACK
    /// to send, if one of the four conditions holds.
    pub fn on_packet(&mut self, pkt: &DataMeta) -> (RxVerdict, Option<(Sack, AckReason)>) {
        let mut reason = None;
        let verdict;
        if pkt.probe {
            verdict = RxVerdict::Probe;
            reason = Some(AckReason::Probe);
        } else {
            let was_epsn = pkt.psn == self.epsn;
            if pkt.psn.wrapping_sub(self.epsn) >= RX_BITMAP_BITS && pkt.psn >= self.epsn {
                return (RxVerdict::OutOfWindow, None);
            }
            if pkt.psn < self.epsn || self.bitmap.get(pkt.psn - self.epsn) {
                verdict = RxVerdict::Duplicate;
            } else {
                verdict = RxVerdict::New;
                self.bitmap.set(pkt.psn - self.epsn);
                self.bytes_recvd += pkt.bytes as u64;
                self.bytes_since_ack = self.bytes_since_ack.saturating_add(pkt.bytes);
                if was_epsn {
                    let t = self.bitmap.trailing_ones();
                    self.bitmap.shr(t);
                    self.epsn += t;
                }
            }
            self.lowest_since_ack = Some(self.lowest_since_ack.map_or(pkt.psn, |l| l.min(pkt.psn)));
            if self.bytes_since_ack >= self.ack_coalesce_bytes {
                reason = Some(AckReason::Bytes);
            } else if was_epsn {
                reason = Some(AckReason::Epsn);
            } else if pkt.ack_req {
                reason = Some(AckReason::Requested);
            }
        }
        let Some(reason) = reason else { return (verdict, None) };
        let focus = if pkt.probe { pkt.psn } else { self.lowest_since_ack.unwrap_or(self.epsn) };
        let seg = if focus <= self.epsn {
            0
        } else {
            ((focus - self.epsn) / SACK_SEGMENT_BITS).min(RX_BITMAP_BITS / SACK_SEGMENT_BITS - 1)
        };
        let sack = Sack {
            epsn: self.epsn,
            sack_base: self.epsn + seg * SACK_SEGMENT_BITS,
            bitmap: self.bitmap.0[seg as usize],
            bytes_recvd: self.bytes_recvd,
            ooo_count: self.ooo_count(),
            ecn: pkt.ecn,
            entropy: pkt.entropy,
            ts_echo: pkt.ts,
            probe_reply: pkt.probe,
        };
        self.bytes_since_ack = 0;
        self.lowest_since_ack = None;
        self.sacks_sent += 1;
        (verdict, Some((sack, reason)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(psn: u32) -> DataMeta {
        DataMeta { psn, bytes: 1000, ..Default::default() }
    }

    #[test]
    fn bitmap256_ops() {
        let mut b = Bitmap256::default();
        for i in [0, 1, 2, 63, 64, 130, 255] {
            b.set(i);
        }
        assert_eq!(b.trailing_ones(), 3);
        assert_eq!(b.count(), 7);
        assert_eq!(b.first_set(3, 256), Some(63));
        assert_eq!(b.first_set(65, 130), None);
        assert_eq!(b.highest_set(), Some(255));
        b.shr(63);
        assert!(b.get(0) && b.get(1) && b.get(67) && b.get(192));
        assert_eq!(b.count(), 4);
        b.shr(300);
        assert_eq!(b.count(), 0);
    }

    #[test]
    fn in_order_packets_advance_epsn_and_ack_on_epsn() {
        // condition (2): a packet with the current EPSN
        let mut r = SackReceiver::new(1 << 20);
        for psn in 0..5 {
            let (v, s) = r.on_packet(&d(psn));
            assert_eq!(v, RxVerdict::New);
            let (s, why) = s.expect("ack on EPSN");
            assert_eq!(why, AckReason::Epsn);
            assert_eq!(s.epsn, psn + 1);
            assert_eq!(s.ooo_count, 0);
            assert_eq!(s.bytes_recvd, (psn as u64 + 1) * 1000);
        }
    }

    #[test]
    fn out_of_order_packets_are_coalesced_by_bytes() {
        // condition (1): only after ack_coalesce_bytes of new data
        let mut r = SackReceiver::new(3000);
        assert!(r.on_packet(&d(2)).1.is_none());
        assert!(r.on_packet(&d(3)).1.is_none());
        let (s, why) = r.on_packet(&d(4)).1.unwrap();
        assert_eq!(why, AckReason::Bytes);
        assert_eq!((s.epsn, s.ooo_count, s.bytes_recvd), (0, 3, 3000));
        assert_eq!(s.sack_base, 0);
        assert_eq!(s.bitmap, 0b11100);
        // the hole fills: EPSN jumps over the held packets
        let (s, _) = r.on_packet(&d(0)).1.unwrap();
        assert_eq!((s.epsn, s.ooo_count), (1, 3));
        let (s, _) = r.on_packet(&d(1)).1.unwrap();
        assert_eq!((s.epsn, s.ooo_count), (5, 0));
    }

    #[test]
    fn duplicates_do_not_count_bytes() {
        let mut r = SackReceiver::new(1 << 20);
        r.on_packet(&d(0));
        r.on_packet(&d(5));
        assert_eq!(r.on_packet(&d(0)).0, RxVerdict::Duplicate);
        assert_eq!(r.on_packet(&d(5)).0, RxVerdict::Duplicate);
        assert_eq!(r.bytes_recvd, 2000);
    }

    #[test]
    fn probe_and_ack_request_force_a_sack() {
        let mut r = SackReceiver::new(1 << 20);
        r.on_packet(&d(3));
        let mut p = d(0);
        p.probe = true;
        p.bytes = 0;
        let (v, s) = r.on_packet(&p);
        assert_eq!(v, RxVerdict::Probe);
        let (s, why) = s.unwrap();
        assert_eq!(why, AckReason::Probe);
        assert!(s.probe_reply);
        assert_eq!(s.bitmap, 0b1000);
        let mut q = d(7);
        q.ack_req = true;
        assert_eq!(r.on_packet(&q).1.unwrap().1, AckReason::Requested);
    }

    #[test]
    fn segment_follows_lowest_psn_since_last_sack() {
        let mut r = SackReceiver::new(2000);
        // packets 70 and 200 (segments 1 and 3): SACK carries segment 1
        r.on_packet(&d(200));
        let (s, _) = r.on_packet(&d(70)).1.unwrap();
        assert_eq!(s.sack_base, 64);
        assert_eq!(s.bitmap, 1 << 6);
        // next SACK only saw 201 and 130: segment 2
        r.on_packet(&d(201));
        let (s, _) = r.on_packet(&d(130)).1.unwrap();
        assert_eq!(s.sack_base, 128);
        assert_eq!(s.bitmap, 1 << 2);
        assert_eq!(s.ooo_count, 4);
    }

    #[test]
    fn packets_beyond_the_bitmap_are_dropped() {
        let mut r = SackReceiver::new(1);
        assert_eq!(r.on_packet(&d(256)).0, RxVerdict::OutOfWindow);
        assert_eq!(r.on_packet(&d(255)).0, RxVerdict::New);
        assert_eq!(r.bytes_recvd, 1000);
    }

    #[test]
    fn ack_echoes_ecn_entropy_timestamp() {
        let mut r = SackReceiver::new(1);
        let p = DataMeta { psn: 0, bytes: 10, ecn: true, entropy: 77, ts: 1234, ..Default::default() };
        let (s, _) = r.on_packet(&p).1.unwrap();
        assert!(s.ecn);
        assert_eq!((s.entropy, s.ts_echo), (77, 1234));
    }
}
