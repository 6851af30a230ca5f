//! RoCEv2 go-back-N (the baseline's loss recovery).
//!
//! Receiver: accepts only `psn == ePSN`; an out-of-order packet is dropped and
//! answered with one NAK carrying ePSN (no further NAK until ePSN advances); a
//! duplicate is dropped and answered with an ACK (resynchronises the sender).
//! In-order packets are acknowledged every `ack_every` packets and on request.
//!
//! Sender: on NAK(ePSN) it rewinds `snd_nxt` to ePSN and resends everything
//! from there; on a timeout (no progress for `rto_ns`) it rewinds to
//! `snd_una`. No window: the rate (DCQCN) limits it.

use crate::Nanos;

/// Receiver reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GbnReply {
    /// Cumulative ACK: everything below `epsn` received.
    Ack {
        /// ePSN.
        epsn: u32,
    },
    /// Sequence error NAK: resend from `epsn`.
    Nak {
        /// ePSN.
        epsn: u32,
    },
}

/// Go-back-N receiver.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GbnReceiver {
    /// Expected PSN.
    pub epsn: u32,
    nak_sent: bool,
    since_ack: u32,
    /// ACK every this many in-order packets.
    pub ack_every: u32,
    /// Packets dropped out of order.
    pub ooo_dropped: u64,
}

impl GbnReceiver {
    /// New receiver.
    pub fn new(ack_every: u32) -> Self {
        Self { ack_every: ack_every.max(1), ..Default::default() }
    }

    /// One data packet; returns (accepted, reply).
    pub fn on_data(&mut self, psn: u32, ack_req: bool) -> (bool, Option<GbnReply>) {
        if psn == self.epsn {
            self.epsn += 1;
            self.nak_sent = false;
            self.since_ack += 1;
            if self.since_ack >= self.ack_every || ack_req {
                self.since_ack = 0;
                return (true, Some(GbnReply::Ack { epsn: self.epsn }));
            }
            (true, None)
        } else if psn > self.epsn {
            self.ooo_dropped += 1;
            if self.nak_sent {
                (false, None)
            } else {
                self.nak_sent = true;
                (false, Some(GbnReply::Nak { epsn: self.epsn }))
            }
        } else {
            (false, Some(GbnReply::Ack { epsn: self.epsn }))
        }
    }
}

/// Go-back-N sender.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GbnSender {
    /// Message packets.
    pub total_pkts: u32,
    /// Cumulative ACK point.
    pub snd_una: u32,
    /// Next PSN to (re)send.
    pub snd_nxt: u32,
    /// One past the highest PSN ever sent.
    pub max_sent: u32,
    /// Last progress time.
    pub last_progress_ts: Nanos,
    /// RTO, ns.
    pub rto_ns: u64,
    /// Packets sent again.
    pub retransmits: u64,
    /// Timeouts.
    pub timeouts: u64,
}

impl GbnSender {
    /// New sender for `total_pkts` packets.
    pub fn new(total_pkts: u32, rto_ns: u64, now: Nanos) -> Self {
        Self {
            total_pkts,
            snd_una: 0,
            snd_nxt: 0,
            max_sent: 0,
            last_progress_ts: now,
            rto_ns,
            retransmits: 0,
            timeouts: 0,
        }
    }

    /// Done?
    pub fn is_complete(&self) -> bool {
        self.snd_una >= self.total_pkts
    }

    /// Next PSN to send and whether it is a retransmission.
    pub fn next_tx(&mut self) -> Option<(u32, bool)> {
        if self.snd_nxt >= self.total_pkts {
            return None;
        }
        let psn = self.snd_nxt;
        self.snd_nxt += 1;
        let retx = psn < self.max_sent;
        if retx {
            self.retransmits += 1;
        }
        self.max_sent = self.max_sent.max(self.snd_nxt);
        Some((psn, retx))
    }

    /// Receiver reply at `now`.
    pub fn on_reply(&mut self, now: Nanos, r: GbnReply) {
        let epsn = match r {
            GbnReply::Ack { epsn } | GbnReply::Nak { epsn } => epsn,
        };
        if epsn > self.snd_una {
            self.snd_una = epsn;
            self.last_progress_ts = now;
        }
        if let GbnReply::Nak { epsn } = r {
            if epsn >= self.snd_una.min(epsn) && epsn < self.snd_nxt {
                self.snd_nxt = epsn;
            }
        }
        self.snd_nxt = self.snd_nxt.max(self.snd_una);
    }

    /// Timer check; returns true on a timeout (rewind to `snd_una`).
    pub fn on_timer(&mut self, now: Nanos) -> bool {
        if self.is_complete() || self.snd_una >= self.max_sent {
            return false;
        }
        if now >= self.last_progress_ts + self.rto_ns {
            self.snd_nxt = self.snd_una;
            self.last_progress_ts = now;
            self.timeouts += 1;
            return true;
        }
        false
    }

    /// When the timer should fire next.
    pub fn next_deadline(&self) -> Option<Nanos> {
        (!self.is_complete() && self.snd_una < self.max_sent).then_some(self.last_progress_ts + self.rto_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receiver_accepts_in_order_and_naks_once() {
        let mut r = GbnReceiver::new(2);
        assert_eq!(r.on_data(0, false), (true, None));
        assert_eq!(r.on_data(1, false), (true, Some(GbnReply::Ack { epsn: 2 })));
        assert_eq!(r.on_data(3, false), (false, Some(GbnReply::Nak { epsn: 2 })));
        assert_eq!(r.on_data(4, false), (false, None)); // one NAK per ePSN
        assert_eq!(r.on_data(2, true), (true, Some(GbnReply::Ack { epsn: 3 })));
        assert_eq!(r.on_data(1, false), (false, Some(GbnReply::Ack { epsn: 3 })));
        assert_eq!(r.ooo_dropped, 2);
    }

    #[test]
    fn sender_goes_back_to_nak_psn() {
        let mut s = GbnSender::new(10, 1_000_000, 0);
        for _ in 0..6 {
            s.next_tx();
        }
        s.on_reply(10, GbnReply::Nak { epsn: 2 });
        assert_eq!(s.snd_una, 2);
        // everything from 2 is resent, even 3..5 that may have arrived
        let v: Vec<_> = (0..5).map(|_| s.next_tx().unwrap()).collect();
        assert_eq!(v, vec![(2, true), (3, true), (4, true), (5, true), (6, false)]);
        assert_eq!(s.retransmits, 4);
    }

    #[test]
    fn timeout_rewinds_to_una() {
        let mut s = GbnSender::new(10, 100, 0);
        for _ in 0..10 {
            s.next_tx();
        }
        s.on_reply(5, GbnReply::Ack { epsn: 4 });
        assert_eq!(s.next_deadline(), Some(105));
        assert!(!s.on_timer(104));
        assert!(s.on_timer(105));
        assert_eq!(s.next_tx(), Some((4, true)));
        s.on_reply(200, GbnReply::Ack { epsn: 10 });
        assert!(s.is_complete());
        assert_eq!(s.next_deadline(), None);
    }
}
