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
//! (`sim/tests/spray_block.rs`) checks every choice against it.
//!
//! A choice is a pipeline of one-cycle steps, none deeper than a few LUT
//! levels: load the QP's state; size the active set; reduce `rr + 1`
//! modulo it (a subtraction loop, one cycle more per `paths` it exceeds,
//! after the active set shrank); mask the clear entropies and those after
//! the start; find each 16-entropy group's first (`crate::prio`); pick
//! the first group and write back. Six cycles from acceptance, plus the
//! modulo's extra ones; an ACK or a reset takes two. (One cycle with a
//! 256-bit `x & -x` was a 172-cell path.)
//!
//! In the data path (`core.rs`): the turn engine asks it for each sprayed
//! packet's entropy, the ACK receiver feeds it each ACK's echoed entropy
//! and CE bit and each QP reset; a choice carries the QP's congestion
//! window in packets (all ones for a QP without one), which sets the active set.

use crate::num::Num;
use crate::prio::{FirstSet16, FirstSet256};
use crate::reg::Reg;
use crate::table::Table;
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
    Paths,
    Modulo,
    Mask,
    Group,
    Exec,
}

/// The per-QP adaptive path selector.
#[derive(LogicBlock, Default)]
pub struct SprayEngine {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: every register and FIFO of the block back to its power-on state (block RAM contents are kept).
    pub reset: Signal<In, Bit>,
    /// The core's table scrub after a reset: each table writes zero at `scrub_addr` (the block is held in reset meanwhile).
    pub scrub: Signal<In, Bit>,
    /// The entry the scrub clears this cycle.
    pub scrub_addr: Signal<In, Bits<QPN_BITS>>,
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
    qp_state: Table<Bits<SPS_BITS>, QPN_BITS>,
    state: Reg<SprayState>,
    qpn: Reg<Bits<QPN_BITS>>,
    op: Reg<Bits<2>>,
    ecn: Reg<Bit>,
    path: Reg<Bits<8>>,
    cwnd: Reg<Bits<32>>,
    maxp: Reg<Bits<9>>,
    obl: Reg<Bit>,
    st: Reg<Bits<SPS_BITS>>,
    /// The round robin's start, reduced modulo the active set.
    start: Reg<Bits<9>>,
    /// Twice the window, saturated at 511 (a window of 256 or more covers any `max_paths`).
    twice: Reg<Bits<9>>,
    /// Active entropies: max(8, min(max_paths, 2 cwnd)), at most max_paths.
    paths: Reg<Bits<9>>,
    /// The usable entropies (active, bit clear once the start's is cleared), and those of them after the start.
    free: Reg<Bits<256>>,
    ahead: Reg<Bits<256>>,
    /// The start's entropy is marked: the scan moves past it, clearing it.
    start_marked: Reg<Bit>,
    /// Per 16-entropy group of `free` and `ahead`: any usable, and the first one.
    free_any: Reg<Bits<16>>,
    free_low: Reg<Bits<64>>,
    ahead_any: Reg<Bits<16>>,
    ahead_low: Reg<Bits<64>>,
    free_groups: FirstSet256,
    ahead_groups: FirstSet256,
    free_first: FirstSet16,
    ahead_first: FirstSet16,
    su: SprayStateUnpack,
    sp: SprayStatePack,
    paths_c: Signal<Local, Bits<9>>,
    active: Signal<Local, Bits<256>>,
    start_bit: Signal<Local, Bits<256>>,
    after_start: Signal<Local, Bits<256>>,
    ones_above0: Signal<Local, Bits<256>>,
    bitmap_c: Signal<Local, Bits<256>>,
    free_c: Signal<Local, Bits<256>>,
    free_sel: Signal<Local, Bits<64>>,
    ahead_sel: Signal<Local, Bits<64>>,
    chosen: Signal<Local, Bits<8>>,
    one: Signal<Local, Bits<256>>,
    zero: Num<0, 256>,
    op_ack: Num<{ OP_ACK }, 2>,
    op_choose: Num<{ OP_CHOOSE }, 2>,
}

impl Logic for SprayEngine {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            qpn,
            op,
            ecn,
            path,
            cwnd,
            maxp,
            obl,
            st,
            start,
            twice,
            paths,
            free,
            ahead,
            start_marked,
            free_any,
            free_low,
            ahead_any,
            ahead_low
        );
        self.state.reset.next = self.reset.val();
        self.qpn.reset.next = self.reset.val();
        self.op.reset.next = self.reset.val();
        self.ecn.reset.next = self.reset.val();
        self.path.reset.next = self.reset.val();
        self.cwnd.reset.next = self.reset.val();
        self.maxp.reset.next = self.reset.val();
        self.obl.reset.next = self.reset.val();
        self.st.reset.next = self.reset.val();
        self.start.reset.next = self.reset.val();
        self.twice.reset.next = self.reset.val();
        self.paths.reset.next = self.reset.val();
        self.free.reset.next = self.reset.val();
        self.ahead.reset.next = self.reset.val();
        self.start_marked.reset.next = self.reset.val();
        self.free_any.reset.next = self.reset.val();
        self.free_low.reset.next = self.reset.val();
        self.ahead_any.reset.next = self.reset.val();
        self.ahead_low.reset.next = self.reset.val();
        self.qp_state.read_clock.next = self.clock.val();
        self.qp_state.write_clock.next = self.clock.val();
        self.qp_state.clear.next = self.scrub.val();
        self.qp_state.clear_address.next = self.scrub_addr.val();
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
        self.one.next = bits::<256>(1);
        // Paths step: the active set from the loaded state and the saturated window.
        // min(max(twice, 8), max_paths) when the window limits it (not oblivious, twice < max_paths), else
        // max_paths, with its compares side by side; a QP never reset (max_paths 0) acts as one with a single entropy.
        self.paths_c.next = self.su.max_paths.val();
        if self.su.max_paths.val() == 0 {
            self.paths_c.next = 1.into();
        }
        if (self.twice.q.val() < self.su.max_paths.val()) & !self.su.obl.val().any() {
            if self.twice.q.val().get_bits::<6>(3).any() {
                self.paths_c.next = self.twice.q.val();
            } else if self.su.max_paths.val().get_bits::<6>(3).any() {
                self.paths_c.next = 8.into();
            }
        }
        // Mask step: thermometer and one-hot codes of registered counts (no carry chains).
        self.active.next = !(!self.zero.val() << bit_cast::<256, 9>(self.paths.q.val()));
        self.start_bit.next = self.one.val() << bit_cast::<256, 9>(self.start.q.val());
        self.ones_above0.next = !self.zero.val() << 1;
        self.after_start.next = self.ones_above0.val() << bit_cast::<256, 9>(self.start.q.val());
        self.bitmap_c.next = self.su.bitmap.val() & !self.start_bit.val();
        self.free_c.next = !self.bitmap_c.val() & self.active.val();
        // Group step.
        self.free_groups.x.next = self.free.q.val();
        self.ahead_groups.x.next = self.ahead.q.val();
        // Exec step: the first group with a usable entropy after the start, else the first at all.
        self.free_first.x.next = self.free_any.q.val();
        self.ahead_first.x.next = self.ahead_any.q.val();
        self.free_sel.next = self.free_low.q.val() >> (bit_cast::<64, 4>(self.free_first.low.val()) << 2);
        self.ahead_sel.next = self.ahead_low.q.val() >> (bit_cast::<64, 4>(self.ahead_first.low.val()) << 2);
        // An unmarked start is itself usable and first; a marked one is cleared and skipped.
        self.chosen.next = self.start.q.val().get_bits::<8>(0);
        if self.start_marked.q.val() {
            if self.ahead_first.any.val() {
                self.chosen.next = (bit_cast::<8, 4>(self.ahead_first.low.val()) << 4)
                    | bit_cast::<8, 4>(self.ahead_sel.val().get_bits::<4>(0));
            } else {
                self.chosen.next = (bit_cast::<8, 4>(self.free_first.low.val()) << 4)
                    | bit_cast::<8, 4>(self.free_sel.val().get_bits::<4>(0));
            }
        }
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
                    self.twice.d.next = self.cwnd.q.val().get_bits::<9>(0) << 1;
                    if self.cwnd.q.val().get_bits::<24>(8).any() {
                        self.twice.d.next = 511.into();
                    }
                    self.state.d.next = SprayState::Paths;
                }
            }
            SprayState::Paths => {
                self.paths.d.next = self.paths_c.val();
                self.state.d.next = SprayState::Modulo;
            }
            SprayState::Modulo => {
                // (rr + 1) mod paths, by subtraction (rr + 1 <= 256).
                if self.start.q.val() >= self.paths.q.val() {
                    self.start.d.next = self.start.q.val() - self.paths.q.val();
                } else {
                    self.state.d.next = SprayState::Mask;
                }
            }
            SprayState::Mask => {
                self.free.d.next = self.free_c.val();
                self.ahead.d.next = self.free_c.val() & self.after_start.val();
                self.start_marked.d.next = (self.su.bitmap.val() & self.start_bit.val()).any();
                self.state.d.next = SprayState::Group;
            }
            SprayState::Group => {
                self.free_any.d.next = self.free_groups.any.val();
                self.free_low.d.next = self.free_groups.low.val();
                self.ahead_any.d.next = self.ahead_groups.any.val();
                self.ahead_low.d.next = self.ahead_groups.low.val();
                self.state.d.next = SprayState::Exec;
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
                        if self.start_marked.q.val() {
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
