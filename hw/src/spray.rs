//! STrack's adaptive packet spraying (Algorithm 3), per QP: which entropy
//! (UDP source port) a QP's next data packet takes.
//!
//! Each QP keeps a 256-bit ECN bitmap over its entropies (bit set: that
//! entropy came back ECN-marked, avoid it), a round-robin pointer `rr`, the
//! entropy of the last ECN-free ACK (`np`, valid with `np_v`) and its
//! number of entropies (`max_paths`, 1..=256). Three requests, one at a
//! time (`req_valid` while `req_ready`):
//!
//! - **ACK** (`OP_ACK`, `ecn`, `path`): a marked ACK sets the entropy's bit
//!   and forgets `np`; a clean one clears the bit and remembers the
//!   entropy, so the next packet is clocked onto it. An entropy at or
//!   beyond `max_paths` (never sent on) is ignored.
//! - **Choose** (`OP_CHOOSE`, `cwnd` in packets): the remembered entropy if
//!   there is one (once); else the round robin over the active set of
//!   `max(8, min(max_paths, 2 cwnd))` entropies (never more than
//!   `max_paths`) moves to `(rr + 1) mod paths` and on to the first entropy
//!   whose bit is clear, clearing the first marked one it skips (so a
//!   marked entropy ages out after about one lap, and the scan ends even
//!   with every bit set). The entropy comes out on `out_path` with
//!   `out_valid` for one cycle.
//! - **Reset** (`OP_RESET`, `max_paths`, `oblivious`): every entropy usable
//!   again. An oblivious QP ignores its ACKs and its window: its choices are
//!   a plain round robin over all `max_paths` entropies (the comparison
//!   point STrack's paper calls oblivious spraying).
//!
//! This is `rnic_model::strack::AdaptiveLb` (oblivious: `ObliviousLb`
//! started at entropy 1), bit for bit (its doc lists
//! where the paper's pseudo-code is read differently); the block test
//! (`sim/tests/spray_block.rs`) checks every choice against it. A choice
//! takes three cycles plus one per `paths` the round robin's `rr + 1`
//! exceeds (the modulo is a subtraction loop; after the active set shrank).
//! The scan itself is one cycle: the entropies ahead of the start that are
//! clear, isolated lowest-first (`x & -x`) and encoded with eight masks.
//!
//! In the data path (`core.rs`): the turn engine asks it for each sprayed
//! packet's entropy, the ACK receiver feeds it each ACK's echoed entropy
//! and CE bit and each QP reset; a choice carries the QP's congestion
//! window in packets (all ones for a QP without one), which sets the active set.

use crate::num::Num;
use rnic_spec::params::QPN_BITS;
use rust_hdl::prelude::*;

/// Request: an ACK's ECN feedback for an entropy.
pub const OP_ACK: u64 = 0;
/// Request: choose the entropy of the QP's next packet.
pub const OP_CHOOSE: u64 = 1;
/// Request: reset the QP's selector (all entropies usable).
pub const OP_RESET: u64 = 2;

/// Width of a QP's selector state ([`SprayStatePack`]).
pub const SPS_BITS: usize = 284;

crate::pack_blocks!(SprayStatePack, SprayStateUnpack, 284, [
    bitmap: 256, rr: 9, np_v: 1, np: 8, max_paths: 9, obl: 1,
]);
const _: () = assert!(SprayStatePack::WIDTH == SPS_BITS);

#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
enum SprayState {
    Idle,
    Load,
    Modulo,
    Exec,
}

/// The per-QP adaptive path selector.
#[derive(LogicBlock, Default)]
pub struct SprayEngine {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// A request is presented.
    pub req_valid: Signal<In, Bit>,
    /// The engine takes it this cycle.
    pub req_ready: Signal<Out, Bit>,
    /// Its QP.
    pub req_qpn: Signal<In, Bits<QPN_BITS>>,
    /// `OP_ACK`, `OP_CHOOSE` or `OP_RESET`.
    pub req_op: Signal<In, Bits<2>>,
    /// ACK: the ACK was ECN-marked.
    pub req_ecn: Signal<In, Bit>,
    /// ACK: the entropy it echoes.
    pub req_path: Signal<In, Bits<8>>,
    /// Choose: the QP's window in packets.
    pub req_cwnd: Signal<In, Bits<32>>,
    /// Reset: the QP's number of entropies (1..=256).
    pub req_max_paths: Signal<In, Bits<9>>,
    /// Reset: the QP sprays obliviously (ignores ACK feedback and the window).
    pub req_oblivious: Signal<In, Bit>,
    /// Pulse: `out_path` is the chosen entropy.
    pub out_valid: Signal<Out, Bit>,
    /// The chosen entropy.
    pub out_path: Signal<Out, Bits<8>>,
    qp_state: RAM<Bits<SPS_BITS>, QPN_BITS>,
    state: DFF<SprayState>,
    qpn: DFF<Bits<QPN_BITS>>,
    op: DFF<Bits<2>>,
    ecn: DFF<Bit>,
    path: DFF<Bits<8>>,
    cwnd: DFF<Bits<32>>,
    maxp: DFF<Bits<9>>,
    obl: DFF<Bit>,
    st: DFF<Bits<SPS_BITS>>,
    /// The round robin's start, reduced modulo the active set.
    start: DFF<Bits<9>>,
    su: SprayStateUnpack,
    sp: SprayStatePack,
    /// Active entropies: max(8, min(max_paths, 2 cwnd)), at most max_paths.
    paths: Signal<Local, Bits<9>>,
    twice: Signal<Local, Bits<33>>,
    /// The active entropies as a mask, and those usable (bit clear) after the start's is cleared.
    active: Signal<Local, Bits<256>>,
    bitmap_c: Signal<Local, Bits<256>>,
    free: Signal<Local, Bits<256>>,
    ahead: Signal<Local, Bits<256>>,
    pick_from: Signal<Local, Bits<256>>,
    lowest: Signal<Local, Bits<256>>,
    start_marked: Signal<Local, Bit>,
    chosen: Signal<Local, Bits<8>>,
    /// Bit k of an entropy index: the entropies whose index has bit k set.
    m0: Signal<Local, Bits<256>>,
    m1: Signal<Local, Bits<256>>,
    m2: Signal<Local, Bits<256>>,
    m3: Signal<Local, Bits<256>>,
    m4: Signal<Local, Bits<256>>,
    m5: Signal<Local, Bits<256>>,
    m6: Signal<Local, Bits<256>>,
    m7: Signal<Local, Bits<256>>,
    one: Signal<Local, Bits<256>>,
    op_ack: Num<{ OP_ACK }, 2>,
    op_choose: Num<{ OP_CHOOSE }, 2>,
    /// 64-bit mask patterns, and widened.
    pat0: Num<0xAAAA_AAAA_AAAA_AAAA, 64>,
    pat1: Num<0xCCCC_CCCC_CCCC_CCCC, 64>,
    pat2: Num<0xF0F0_F0F0_F0F0_F0F0, 64>,
    pat3: Num<0xFF00_FF00_FF00_FF00, 64>,
    pat4: Num<0xFFFF_0000_FFFF_0000, 64>,
    pat5: Num<0xFFFF_FFFF_0000_0000, 64>,
    pat6: Num<0xFFFF_FFFF_FFFF_FFFF, 64>,
    /// (widened)
    p0: Signal<Local, Bits<256>>,
    p1: Signal<Local, Bits<256>>,
    p2: Signal<Local, Bits<256>>,
    p3: Signal<Local, Bits<256>>,
    p4: Signal<Local, Bits<256>>,
    p5: Signal<Local, Bits<256>>,
    p6: Signal<Local, Bits<256>>,
    /// The bitmap shifted down to the start.
    at_start: Signal<Local, Bits<256>>,
    /// First entropy the scan may take: the start, or the one after it if the start is marked.
    scan_from: Signal<Local, Bits<9>>,
}

impl Logic for SprayEngine {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, state, qpn, op, ecn, path, cwnd, maxp, obl, st, start);
        self.qp_state.read_clock.next = self.clock.val();
        self.qp_state.write_clock.next = self.clock.val();
        self.qp_state.read_address.next = self.req_qpn.val();
        self.qp_state.write_address.next = self.qpn.q.val();
        self.qp_state.write_enable.next = false;
        self.qp_state.write_data.next = self.sp.pword.val();
        self.su.pword.next = self.st.q.val();
        self.sp.bitmap.next = self.su.bitmap.val();
        self.sp.rr.next = self.su.rr.val();
        self.sp.np_v.next = self.su.np_v.val();
        self.sp.np.next = self.su.np.val();
        self.sp.max_paths.next = self.su.max_paths.val();
        self.sp.obl.next = self.su.obl.val();
        self.req_ready.next = self.state.q.val() == SprayState::Idle;
        self.out_valid.next = false;
        // The active set.
        self.twice.next = bit_cast::<33, 32>(self.cwnd.q.val()) << 1;
        self.paths.next = self.su.max_paths.val();
        if (self.twice.val() < bit_cast::<33, 9>(self.su.max_paths.val())) & !self.su.obl.val().any() {
            self.paths.next = self.twice.val().get_bits::<9>(0);
        }
        if self.paths.val() < 8 {
            self.paths.next = 8.into();
        }
        if self.paths.val() > self.su.max_paths.val() {
            self.paths.next = self.su.max_paths.val();
        }
        // A QP never reset (max_paths 0) acts as one with a single entropy.
        if self.paths.val() == 0 {
            self.paths.next = 1.into();
        }
        self.one.next = bits::<256>(1);
        self.active.next = (self.one.val() << bit_cast::<256, 9>(self.paths.val())) - self.one.val();
        // The scan: the start's bit cleared if set, then the first clear entropy after it, else the first at all.
        self.at_start.next = self.su.bitmap.val() >> bit_cast::<256, 9>(self.start.q.val());
        self.start_marked.next = self.at_start.val().get_bit(0);
        self.bitmap_c.next = self.su.bitmap.val() & !(self.one.val() << bit_cast::<256, 9>(self.start.q.val()));
        self.free.next = !self.bitmap_c.val() & self.active.val();
        self.scan_from.next = self.start.q.val();
        if self.start_marked.val() {
            self.scan_from.next = self.start.q.val() + 1;
        }
        self.ahead.next =
            self.free.val() & !((self.one.val() << bit_cast::<256, 9>(self.scan_from.val())) - self.one.val());
        self.pick_from.next = self.free.val();
        if self.ahead.val().any() {
            self.pick_from.next = self.ahead.val();
        }
        self.lowest.next = self.pick_from.val() & (!self.pick_from.val() + self.one.val());
        self.p0.next = bit_cast::<256, 64>(self.pat0.val());
        self.m0.next = self.p0.val() | (self.p0.val() << 64) | (self.p0.val() << 128) | (self.p0.val() << 192);
        self.p1.next = bit_cast::<256, 64>(self.pat1.val());
        self.m1.next = self.p1.val() | (self.p1.val() << 64) | (self.p1.val() << 128) | (self.p1.val() << 192);
        self.p2.next = bit_cast::<256, 64>(self.pat2.val());
        self.m2.next = self.p2.val() | (self.p2.val() << 64) | (self.p2.val() << 128) | (self.p2.val() << 192);
        self.p3.next = bit_cast::<256, 64>(self.pat3.val());
        self.m3.next = self.p3.val() | (self.p3.val() << 64) | (self.p3.val() << 128) | (self.p3.val() << 192);
        self.p4.next = bit_cast::<256, 64>(self.pat4.val());
        self.m4.next = self.p4.val() | (self.p4.val() << 64) | (self.p4.val() << 128) | (self.p4.val() << 192);
        self.p5.next = bit_cast::<256, 64>(self.pat5.val());
        self.m5.next = self.p5.val() | (self.p5.val() << 64) | (self.p5.val() << 128) | (self.p5.val() << 192);
        self.p6.next = bit_cast::<256, 64>(self.pat6.val());
        self.m6.next = (self.p6.val() << 64) | (self.p6.val() << 192);
        self.m7.next = (self.p6.val() << 128) | (self.p6.val() << 192);
        self.chosen.next = bit_cast::<8, 1>((self.lowest.val() & self.m0.val()).any().into())
            | (bit_cast::<8, 1>((self.lowest.val() & self.m1.val()).any().into()) << 1)
            | (bit_cast::<8, 1>((self.lowest.val() & self.m2.val()).any().into()) << 2)
            | (bit_cast::<8, 1>((self.lowest.val() & self.m3.val()).any().into()) << 3)
            | (bit_cast::<8, 1>((self.lowest.val() & self.m4.val()).any().into()) << 4)
            | (bit_cast::<8, 1>((self.lowest.val() & self.m5.val()).any().into()) << 5)
            | (bit_cast::<8, 1>((self.lowest.val() & self.m6.val()).any().into()) << 6)
            | (bit_cast::<8, 1>((self.lowest.val() & self.m7.val()).any().into()) << 7);
        self.out_path.next = self.chosen.val();
        match self.state.q.val() {
            SprayState::Idle => {
                if self.req_valid.val() {
                    self.qpn.d.next = self.req_qpn.val();
                    self.op.d.next = self.req_op.val();
                    self.ecn.d.next = self.req_ecn.val();
                    self.path.d.next = self.req_path.val();
                    self.cwnd.d.next = self.req_cwnd.val();
                    self.maxp.d.next = self.req_max_paths.val();
                    self.obl.d.next = self.req_oblivious.val();
                    self.state.d.next = SprayState::Load;
                }
            }
            SprayState::Load => {
                self.st.d.next = self.qp_state.read_data.val();
                self.state.d.next = SprayState::Exec;
                if self.op.q.val() == self.op_choose.val() {
                    self.start.d.next = self.qp_state.read_data.val().get_bits::<9>(256) + 1;
                    self.state.d.next = SprayState::Modulo;
                }
            }
            SprayState::Modulo => {
                // (rr + 1) mod paths, by subtraction (rr + 1 <= 256).
                if self.start.q.val() >= self.paths.val() {
                    self.start.d.next = self.start.q.val() - self.paths.val();
                } else {
                    self.state.d.next = SprayState::Exec;
                }
            }
            SprayState::Exec => {
                self.state.d.next = SprayState::Idle;
                self.qp_state.write_enable.next = true;
                if self.op.q.val() == self.op_ack.val() {
                    if (bit_cast::<9, 8>(self.path.q.val()) >= self.su.max_paths.val()) | self.su.obl.val().any() {
                        // An entropy the QP never sent on, or an oblivious QP: ignored.
                    } else if self.ecn.q.val() {
                        self.sp.np_v.next = 0.into();
                        self.sp.bitmap.next =
                            self.su.bitmap.val() | (self.one.val() << bit_cast::<256, 8>(self.path.q.val()));
                    } else {
                        self.sp.np_v.next = 1.into();
                        self.sp.np.next = self.path.q.val();
                        self.sp.bitmap.next =
                            self.su.bitmap.val() & !(self.one.val() << bit_cast::<256, 8>(self.path.q.val()));
                    }
                } else if self.op.q.val() == self.op_choose.val() {
                    self.out_valid.next = true;
                    if self.su.np_v.val().any() {
                        self.out_path.next = self.su.np.val();
                        self.sp.rr.next = bit_cast::<9, 8>(self.su.np.val());
                        self.sp.np_v.next = 0.into();
                    } else {
                        self.sp.rr.next = bit_cast::<9, 8>(self.chosen.val());
                        if self.start_marked.val() {
                            self.sp.bitmap.next = self.bitmap_c.val();
                        }
                    }
                } else {
                    self.sp.bitmap.next = 0.into();
                    self.sp.rr.next = 0.into();
                    self.sp.np_v.next = 0.into();
                    self.sp.np.next = 0.into();
                    self.sp.max_paths.next = self.maxp.q.val();
                    self.sp.obl.next = bit_cast::<1, 1>(self.obl.q.val().into());
                }
            }
            _ => {
                self.state.d.next = SprayState::Idle;
            }
        }
    }
}
