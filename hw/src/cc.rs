//! STrack's window congestion control per QP (Algorithm 4 with Algorithm
//! 1's RTT bookkeeping and Algorithm 2's achieved BDP), in the fixed-point
//! formats of `rnic_model::strack::cc::StrackCc`, bit for bit.
//!
//! Per QP one state word ([`CcStatePack`], 321 bits): the window (bytes,
//! Q24.8), the smallest RTT seen, the EWMA of the queueing delay (ns,
//! Q24.8), the times of the last decrease and the last fairness nudge, the
//! achieved-BDP meter (bytes acknowledged since its last clear, the time of
//! that clear, the last completed measurement), whether the QP's window is
//! on and the last SACK bytes-received count taken (an ACK acknowledges the
//! bytes its count moved past that one: every packet the peer placed, in
//! order or not, as STrack's SACK counts them). Times are the low
//! 32 bits of a nanosecond clock, compared by wrapping subtraction, so a
//! QP idle for more than 4.29 s reads as if the time wrapped (the model
//! keeps 64-bit times); the byte meter is 48 bits (the model's 64).
//!
//! Two requests, one at a time (`req_valid` while `req_ready`):
//!
//! - **Init** (`OP_INIT`): the QP starts at `init_cwnd` (`max_cwnd` if 0;
//!   a DCTCP QP at `max_cwnd`), its
//!   RTT at the network's base RTT, its timers at `now`, its last bytes
//!   count at 0 (where the peer's count starts when its QP is reset); with
//!   its window on or off (an off QP's ACKs are ignored, and answered by
//!   nothing).
//! - **ACK** (`OP_ACK`): an ACK at `now` with its RTT, ECN mark, bytes
//!   received (it newly acknowledges their advance past the last count,
//!   none for a stale one: a wrapping difference of 2^31 or more) and
//!   whether it answers a probe. The engine takes
//!   the RTT into the minimum, the bytes into the achieved-BDP meter (a
//!   probe's bytes are not counted there), the queueing delay into the
//!   EWMA, and moves the window by the first of Algorithm 4's branches
//!   that applies: a constant increase (no ECN, delay above `target_Qhigh`),
//!   an increase by how far the delay is under `target_Qdelay` (no ECN),
//!   once per base RTT a cut to the achieved BDP (delay above
//!   `target_Qhigh`, achieved BDP under an eighth of `max_cwnd`) or a
//!   multiplicative decrease (`1 − γ (avg − target) / avg`, at least one
//!   half), else nothing; then once per base RTT the fairness nudge `η`, and
//!   the window is clamped to `[min_cwnd, max_cwnd]`. `out_valid` pulses
//!   with the QP, its new window and the branch taken ([`ACT_HOLD`] ..
//!   [`ACT_DECREASE`]); the core keeps the window in a table the turn
//!   engine reads.
//!
//! The parameters (Table 1 in the model's formats) are inputs, the same for
//! every QP. The arithmetic is sequential: one multiplier of 64 × 32 bits
//! (four 16 × 16 products per half of the 32-bit operand, two cycles) and
//! one divider of 64 by 32 bits (restoring, two quotient bits a cycle, 32
//! cycles), shared by the branches. From the cycle it is taken to its
//! result, an ACK takes 9 cycles when it holds the window or cuts it to the
//! achieved BDP, 45 for the constant increase, 48 for the multiplicative
//! decrease and 81 for the delay-gain increase (the EWMA's subtract, shift
//! and add and the window's nudge and clamp each have a cycle, for timing) (measured by the block
//! test, which prints them). At one ACK per 4 KiB packet on a single QP at
//! line rate (a packet every 66 cycles) the delay-gain branch is too slow
//! for every ACK: the ACK receiver offers each ACK once, and one that finds
//! the engine busy is not fed (its bytes count with the next ACK taken,
//! through the bytes-received count; its RTT and ECN sample is lost).

use crate::num::Num;
use crate::reg::Reg;
use crate::table::Table;
use rnic_spec::params::QPN_BITS;
use rust_hdl::prelude::*;

/// Request: start a QP's state.
pub const OP_INIT: u64 = 0;
/// Request: an ACK.
pub const OP_ACK: u64 = 1;

/// Branch taken: the window held (only the fairness nudge and the clamp applied).
pub const ACT_HOLD: u64 = 0;
/// Branch taken: the constant increase (Algorithm 4 line 7).
pub const ACT_CONST: u64 = 1;
/// Branch taken: the increase by the delay under target (line 9).
pub const ACT_GAIN: u64 = 2;
/// Branch taken: the cut to the achieved BDP (line 12).
pub const ACT_ABDP: u64 = 3;
/// Branch taken: the multiplicative decrease (line 15).
pub const ACT_DECREASE: u64 = 4;
/// DCTCP: the additive increase (no ECN echo).
pub const ACT_DCTCP_INC: u64 = 5;
/// DCTCP: the window's first ECN echo, the cut by `1 − α/2` (a later echo in the window holds: `ACT_HOLD`).
pub const ACT_DCTCP_CUT: u64 = 6;

/// Width of a QP's state word ([`CcStatePack`]).
pub const CCS_BITS: usize = 322;

crate::pack_blocks!(CcStatePack, CcStateUnpack, 322, [
    cwnd: 32, base_rtt: 32, avg: 32, last_dec: 32, last_fair: 32, rx_count: 48, clear_ts: 32, achieved: 48,
    on: 1, last_bytes: 32, dctcp: 1,
]);
const _: () = assert!(CcStatePack::WIDTH == CCS_BITS);

#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
enum CcState {
    Idle,
    Load,
    Pre,
    Ewma,
    EwmaShift,
    EwmaAdd,
    Branch,
    MulA,
    DivA,
    MulB1,
    DivB1,
    MulB2,
    DivB2,
    MulC1,
    DivC,
    MulC2,
    Fair,
    Clamp,
    Write,
    DBranch,
    DMulCut,
    DMulInc,
    DDivInc,
    DAlpha,
    DDivAlpha,
    DAlphaAdd,
}

/// The per-QP STrack window engine.
#[derive(LogicBlock, Default)]
pub struct CcEngine {
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
    /// `OP_INIT` or `OP_ACK`.
    pub req_op: Signal<In, Bit>,
    /// Time of the request (ns, low 32 bits).
    pub req_now: Signal<In, Bits<32>>,
    /// ACK: ECN-marked.
    pub req_ecn: Signal<In, Bit>,
    /// ACK: its RTT sample (ns).
    pub req_rtt: Signal<In, Bits<32>>,
    /// ACK: the SACK's bytes received (mod 2^32).
    pub req_bytes: Signal<In, Bits<32>>,
    /// Init: the QP's window is on (off: its ACKs are ignored).
    pub req_on: Signal<In, Bit>,
    /// Init: the window is DCTCP's (else STrack's).
    pub req_dctcp: Signal<In, Bit>,
    /// ACK: its ePSN (DCTCP's `snd_una`).
    pub req_epsn: Signal<In, Bits<24>>,
    /// Write of a QP's next PSN to send (DCTCP's `snd_nxt`, read with each ACK): the turn engine's new request packets.
    pub nxt_we: Signal<In, Bit>,
    /// Its QP.
    pub nxt_qpn: Signal<In, Bits<QPN_BITS>>,
    /// The PSN after the packet.
    pub nxt_psn: Signal<In, Bits<24>>,
    /// ACK: it answers a probe (its bytes are not counted in the achieved BDP).
    pub req_probe: Signal<In, Bit>,
    /// `net_base_rtt` (ns): a QP's RTT at Init.
    pub p_base_rtt: Signal<In, Bits<32>>,
    /// `target_Qdelay` (ns).
    pub p_target: Signal<In, Bits<32>>,
    /// `target_Qhigh` (ns).
    pub p_qhigh: Signal<In, Bits<32>>,
    /// The EWMA weight as a right shift (0..=31).
    pub p_ewma_shift: Signal<In, Bits<5>>,
    /// β in bytes, Q24.8.
    pub p_beta: Signal<In, Bits<64>>,
    /// η in bytes, Q24.8.
    pub p_eta: Signal<In, Bits<64>>,
    /// `α · base_rtt` in bytes, Q24.8.
    pub p_alpha_rtt: Signal<In, Bits<64>>,
    /// γ, Q16.16.
    pub p_gamma: Signal<In, Bits<32>>,
    /// Largest window, bytes Q24.8.
    pub p_max_cwnd: Signal<In, Bits<32>>,
    /// Smallest window, bytes Q24.8.
    pub p_min_cwnd: Signal<In, Bits<32>>,
    /// STrack's window at Init, bytes Q24.8 (0: `p_max_cwnd`).
    pub p_init_cwnd: Signal<In, Bits<32>>,
    /// DCTCP's `g` as a right shift (0..=15).
    pub p_dctcp_g: Signal<In, Bits<4>>,
    /// DCTCP's increase per window, bytes (the MTU).
    pub p_dctcp_mtu: Signal<In, Bits<16>>,
    /// Pulse: the request is done; `out_cwnd` and `out_action` hold its result.
    pub out_valid: Signal<Out, Bit>,
    /// The QP of the result.
    pub out_qpn: Signal<Out, Bits<QPN_BITS>>,
    /// The QP's window after the request (bytes, Q24.8).
    pub out_cwnd: Signal<Out, Bits<32>>,
    /// The branch an ACK took (`ACT_*`).
    pub out_action: Signal<Out, Bits<3>>,
    qp_state: Table<Bits<CCS_BITS>, QPN_BITS>,
    /// DCTCP's `snd_nxt` per QP.
    snd_nxt: Table<Bits<24>, QPN_BITS>,
    state: Reg<CcState>,
    qpn: Reg<Bits<QPN_BITS>>,
    op: Reg<Bit>,
    now: Reg<Bits<32>>,
    ecn: Reg<Bit>,
    rtt: Reg<Bits<32>>,
    bytes: Reg<Bits<32>>,
    req_on_q: Reg<Bit>,
    /// Bytes the ACK newly acknowledges: its bytes count's advance over the QP's last.
    acked: Reg<Bits<40>>,
    probe: Reg<Bit>,
    on: Reg<Bit>,
    last_bytes: Reg<Bits<32>>,
    /// DCTCP (the state word's fields are shared: see `DBranch`).
    dctcp: Reg<Bit>,
    req_dctcp_q: Reg<Bit>,
    /// DCTCP: the ACK's ePSN and the QP's `snd_nxt`; the ACK ends the window.
    epsn: Reg<Bits<24>>,
    nxt: Reg<Bits<24>>,
    w_end: Reg<Bit>,
    /// DCTCP: the window's bytes acknowledged and marked after this ACK (33 bits before saturating).
    d_acc: Signal<Local, Bits<33>>,
    d_mk: Signal<Local, Bits<33>>,
    d_acc32: Signal<Local, Bits<32>>,
    d_mk32: Signal<Local, Bits<32>>,
    /// DCTCP: ePSN − window end (24-bit serial distance); `snd_nxt` − (ePSN + 1); ePSN + 1.
    d_past: Signal<Local, Bits<24>>,
    d_nxt_ahead: Signal<Local, Bits<24>>,
    d_una1: Signal<Local, Bits<24>>,
    d_end_new: Signal<Local, Bits<24>>,
    /// DCTCP: `cwnd >> 8` at least 1; `1 − α/2` (Q16.16); α after the decay, before the new fraction.
    d_cwnd_b: Signal<Local, Bits<32>>,
    d_factor: Signal<Local, Bits<32>>,
    d_decay: Signal<Local, Bits<32>>,
    d_mtu_q8: Signal<Local, Bits<64>>,
    /// The divider's numerator at `div_go` (default the product).
    div_num: Signal<Local, Bits<64>>,
    /// The bytes count's advance (bit 31 set: behind the last one, a stale ACK).
    bytes_adv: Signal<Local, Bits<32>>,
    acked_l: Signal<Local, Bits<40>>,
    /// The QP's state word as read.
    st: Reg<Bits<CCS_BITS>>,
    /// The QP's state as it is being updated.
    cwnd: Reg<Bits<32>>,
    base_rtt: Reg<Bits<32>>,
    avg: Reg<Bits<32>>,
    last_dec: Reg<Bits<32>>,
    last_fair: Reg<Bits<32>>,
    rx_count: Reg<Bits<48>>,
    clear_ts: Reg<Bits<32>>,
    achieved: Reg<Bits<48>>,
    /// The ACK's queueing delay, and the decisions taken from the state before the branch.
    delay: Reg<Bits<32>>,
    can_dec: Reg<Bit>,
    can_fair: Reg<Bit>,
    /// The window read in `Pre` is 0 (the branches take it as 1, `cwnd1`), registered there for timing.
    cwnd_z: Reg<Bit>,
    /// The window being computed (64 bits, wrapping as the model's `u64`).
    newc: Reg<Bits<64>>,
    action: Reg<Bits<3>>,
    su: CcStateUnpack,
    sp: CcStatePack,
    /// The multiplier: `ma × mb` (low 64 bits) into `macc`; `mstep` 1 and 2 are its two cycles.
    ma: Reg<Bits<64>>,
    mb: Reg<Bits<32>>,
    macc: Reg<Bits<64>>,
    mstep: Reg<Bits<2>>,
    /// `ma` times one 16-bit half of `mb`, low 64 bits.
    mhalf: Signal<Local, Bits<16>>,
    mpart: Signal<Local, Bits<64>>,
    /// The divider: `dnum / dden` into `dq`, two quotient bits a cycle while `dcnt` counts down.
    dnum: Reg<Bits<64>>,
    dden: Reg<Bits<32>>,
    drem: Reg<Bits<33>>,
    dq: Reg<Bits<64>>,
    dcnt: Reg<Bits<6>>,
    /// Start a division of the product (`macc`) by `div_den` this cycle.
    div_go: Signal<Local, Bit>,
    div_den: Signal<Local, Bits<32>>,
    dr1: Signal<Local, Bits<33>>,
    dge1: Signal<Local, Bit>,
    dr1s: Signal<Local, Bits<33>>,
    dr2: Signal<Local, Bits<33>>,
    dge2: Signal<Local, Bit>,
    dr2s: Signal<Local, Bits<33>>,
    /// Pre-branch arithmetic on the loaded state.
    base_new: Signal<Local, Bits<32>>,
    delay_l: Signal<Local, Bits<32>>,
    interval: Signal<Local, Bits<33>>,
    since_clear: Signal<Local, Bits<32>>,
    since_dec: Signal<Local, Bits<32>>,
    since_fair: Signal<Local, Bits<32>>,
    abdp_add: Signal<Local, Bits<48>>,
    d_q8: Signal<Local, Bits<40>>,
    e_diff: Signal<Local, Bits<40>>,
    /// The EWMA's signed difference, registered after its subtract and again after its shift.
    ediff: Reg<Bits<40>>,
    e_shift: Signal<Local, Bits<40>>,
    avg_new: Signal<Local, Bits<40>>,
    /// Branch inputs on the updated state.
    avg_delay: Signal<Local, Bits<32>>,
    cwnd1: Signal<Local, Bits<32>>,
    /// The window plus the divider's quotient (`cwnd1`, or `cwnd` under DCTCP), and `newc`'s pick:
    /// the FSM's plain sources in `newc_m`, the two sums by AND-OR masks, which synthesis cannot
    /// fold into one adder behind the state decode.
    w_dq: Signal<Local, Bits<64>>,
    newc_m: Signal<Local, Bits<64>>,
    take_wdq: Signal<Local, Bit>,
    take_nudged: Signal<Local, Bit>,
    m_wdq: Signal<Local, Bits<64>>,
    m_nudged: Signal<Local, Bits<64>>,
    acked_q8: Signal<Local, Bits<32>>,
    achieved_q8: Signal<Local, Bits<56>>,
    max_bytes8: Signal<Local, Bits<48>>,
    cut: Signal<Local, Bits<64>>,
    one_minus_cut: Signal<Local, Bits<64>>,
    factor: Signal<Local, Bits<32>>,
    clamped: Signal<Local, Bits<64>>,
    nudged: Signal<Local, Bits<64>>,
    op_ack: Num<{ OP_ACK }, 1>,
    act_hold: Num<{ ACT_HOLD }, 3>,
    act_const: Num<{ ACT_CONST }, 3>,
    act_gain: Num<{ ACT_GAIN }, 3>,
    act_abdp: Num<{ ACT_ABDP }, 3>,
    act_decrease: Num<{ ACT_DECREASE }, 3>,
    act_dctcp_inc: Num<{ ACT_DCTCP_INC }, 3>,
    act_dctcp_cut: Num<{ ACT_DCTCP_CUT }, 3>,
    u32_max33: Num<0xFFFF_FFFF, 33>,
    /// The largest acknowledged byte count that is scaled as is (the model's `min(acked, 2^23)`).
    acked_cap: Num<0x80_0000, 32>,
    /// The largest delay the EWMA takes (`u32::MAX >> 8`).
    delay_cap: Num<0xFF_FFFF, 32>,
    q16_one: Num<0x1_0000, 64>,
    q16_half: Num<0x8000, 64>,
    u32_max: Num<0xFFFF_FFFF, 56>,
}

impl Logic for CcEngine {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            ediff,
            state,
            qpn,
            op,
            now,
            ecn,
            rtt,
            acked,
            probe,
            st,
            cwnd,
            base_rtt,
            avg,
            last_dec,
            last_fair,
            rx_count,
            clear_ts,
            achieved,
            delay,
            can_dec,
            can_fair,
            cwnd_z,
            newc,
            action,
            ma,
            mb,
            macc,
            mstep,
            dnum,
            dden,
            drem,
            dq,
            dcnt,
            bytes,
            req_on_q,
            on,
            last_bytes,
            dctcp,
            req_dctcp_q,
            epsn,
            nxt,
            w_end
        );
        self.ediff.reset.next = self.reset.val();
        self.state.reset.next = self.reset.val();
        self.qpn.reset.next = self.reset.val();
        self.op.reset.next = self.reset.val();
        self.now.reset.next = self.reset.val();
        self.ecn.reset.next = self.reset.val();
        self.rtt.reset.next = self.reset.val();
        self.acked.reset.next = self.reset.val();
        self.probe.reset.next = self.reset.val();
        self.st.reset.next = self.reset.val();
        self.cwnd.reset.next = self.reset.val();
        self.base_rtt.reset.next = self.reset.val();
        self.avg.reset.next = self.reset.val();
        self.last_dec.reset.next = self.reset.val();
        self.last_fair.reset.next = self.reset.val();
        self.rx_count.reset.next = self.reset.val();
        self.clear_ts.reset.next = self.reset.val();
        self.achieved.reset.next = self.reset.val();
        self.delay.reset.next = self.reset.val();
        self.can_dec.reset.next = self.reset.val();
        self.can_fair.reset.next = self.reset.val();
        self.cwnd_z.reset.next = self.reset.val();
        self.newc.reset.next = self.reset.val();
        self.action.reset.next = self.reset.val();
        self.ma.reset.next = self.reset.val();
        self.mb.reset.next = self.reset.val();
        self.macc.reset.next = self.reset.val();
        self.mstep.reset.next = self.reset.val();
        self.dnum.reset.next = self.reset.val();
        self.dden.reset.next = self.reset.val();
        self.drem.reset.next = self.reset.val();
        self.dq.reset.next = self.reset.val();
        self.dcnt.reset.next = self.reset.val();
        self.bytes.reset.next = self.reset.val();
        self.req_on_q.reset.next = self.reset.val();
        self.on.reset.next = self.reset.val();
        self.last_bytes.reset.next = self.reset.val();
        self.dctcp.reset.next = self.reset.val();
        self.req_dctcp_q.reset.next = self.reset.val();
        self.epsn.reset.next = self.reset.val();
        self.nxt.reset.next = self.reset.val();
        self.w_end.reset.next = self.reset.val();
        self.snd_nxt.read_clock.next = self.clock.val();
        self.snd_nxt.write_clock.next = self.clock.val();
        self.snd_nxt.clear.next = self.scrub.val();
        self.snd_nxt.clear_address.next = self.scrub_addr.val();
        self.snd_nxt.read_address.next = self.req_qpn.val();
        self.snd_nxt.write_address.next = self.nxt_qpn.val();
        self.snd_nxt.write_enable.next = self.nxt_we.val();
        self.snd_nxt.write_data.next = self.nxt_psn.val();
        self.qp_state.read_clock.next = self.clock.val();
        self.qp_state.write_clock.next = self.clock.val();
        self.qp_state.clear.next = self.scrub.val();
        self.qp_state.clear_address.next = self.scrub_addr.val();
        self.qp_state.read_address.next = self.req_qpn.val();
        self.qp_state.write_address.next = self.qpn.q.val();
        self.qp_state.write_enable.next = false;
        self.su.pword.next = self.st.q.val();
        self.sp.cwnd.next = self.cwnd.q.val();
        self.sp.base_rtt.next = self.base_rtt.q.val();
        self.sp.avg.next = self.avg.q.val();
        self.sp.last_dec.next = self.last_dec.q.val();
        self.sp.last_fair.next = self.last_fair.q.val();
        self.sp.rx_count.next = self.rx_count.q.val();
        self.sp.clear_ts.next = self.clear_ts.q.val();
        self.sp.achieved.next = self.achieved.q.val();
        self.sp.on.next = self.on.q.val().into();
        self.sp.last_bytes.next = self.last_bytes.q.val();
        self.sp.dctcp.next = self.dctcp.q.val().into();
        self.qp_state.write_data.next = self.sp.pword.val();
        self.req_ready.next = self.state.q.val() == CcState::Idle;
        self.out_valid.next = false;
        self.out_cwnd.next = self.cwnd.q.val();
        self.out_qpn.next = self.qpn.q.val();
        self.out_action.next = self.action.q.val();
        // The multiplier: the low half of `mb` first, then the high half, shifted.
        self.mhalf.next = self.mb.q.val().get_bits::<16>(0);
        if self.mstep.q.val() == 2 {
            self.mhalf.next = self.mb.q.val().get_bits::<16>(16);
        }
        self.mpart.next = bit_cast::<64, 32>(self.ma.q.val().get_bits::<16>(0) * self.mhalf.val())
            + (bit_cast::<64, 32>(self.ma.q.val().get_bits::<16>(16) * self.mhalf.val()) << 16)
            + (bit_cast::<64, 32>(self.ma.q.val().get_bits::<16>(32) * self.mhalf.val()) << 32)
            + (bit_cast::<64, 32>(self.ma.q.val().get_bits::<16>(48) * self.mhalf.val()) << 48);
        if self.mstep.q.val() == 1 {
            self.macc.d.next = self.mpart.val();
            self.mstep.d.next = 2.into();
        } else if self.mstep.q.val() == 2 {
            self.macc.d.next = self.macc.q.val() + (self.mpart.val() << 16);
            self.mstep.d.next = 0.into();
        }
        // The divider: two restoring steps a cycle (the remainder stays below the divisor, so 33 bits hold it shifted).
        self.dr1.next = (self.drem.q.val() << 1) | bit_cast::<33, 1>(self.dnum.q.val().get_bit(63).into());
        self.dge1.next = self.dr1.val() >= bit_cast::<33, 32>(self.dden.q.val());
        self.dr1s.next = self.dr1.val();
        if self.dge1.val() {
            self.dr1s.next = self.dr1.val() - bit_cast::<33, 32>(self.dden.q.val());
        }
        self.dr2.next = (self.dr1s.val() << 1) | bit_cast::<33, 1>(self.dnum.q.val().get_bit(62).into());
        self.dge2.next = self.dr2.val() >= bit_cast::<33, 32>(self.dden.q.val());
        self.dr2s.next = self.dr2.val();
        if self.dge2.val() {
            self.dr2s.next = self.dr2.val() - bit_cast::<33, 32>(self.dden.q.val());
        }
        if self.dcnt.q.val() != 0 {
            self.drem.d.next = self.dr2s.val();
            self.dnum.d.next = self.dnum.q.val() << 2;
            self.dq.d.next = (self.dq.q.val() << 2)
                | (bit_cast::<64, 1>(self.dge1.val().into()) << 1)
                | bit_cast::<64, 1>(self.dge2.val().into());
            self.dcnt.d.next = self.dcnt.q.val() - 1;
        }
        // Algorithm 1's bookkeeping on the loaded state (used in `Pre`).
        self.base_new.next = self.su.base_rtt.val();
        if self.rtt.q.val() < self.su.base_rtt.val() {
            self.base_new.next = self.rtt.q.val();
        }
        self.delay_l.next = self.rtt.q.val() - self.base_new.val();
        self.interval.next = bit_cast::<33, 32>(self.base_rtt.q.val()) + bit_cast::<33, 32>(self.p_target.val());
        self.since_clear.next = self.now.q.val() - self.clear_ts.q.val();
        self.since_dec.next = self.now.q.val() - self.su.last_dec.val();
        self.since_fair.next = self.now.q.val() - self.su.last_fair.val();
        self.bytes_adv.next = self.bytes.q.val() - self.su.last_bytes.val();
        self.acked_l.next = bit_cast::<40, 32>(self.bytes_adv.val());
        if self.bytes_adv.val().get_bit(31) {
            self.acked_l.next = 0.into();
        }
        // The achieved-BDP meter and DCTCP's counters move a cycle after `Pre`, on the registered bytes.
        self.abdp_add.next = bit_cast::<48, 40>(self.acked.q.val());
        if self.probe.q.val() {
            self.abdp_add.next = 0.into();
        }
        // EWMA: avg + ((min(delay, 2^24 - 1) << 8) - avg) >> ewma_shift, the difference signed (40 bits);
        // the subtract in `Ewma`, the shift in `EwmaShift`, the add in `EwmaAdd`, from the registered delay and old average.
        self.d_q8.next = bit_cast::<40, 32>(self.delay.q.val()) << 8;
        if self.delay.q.val() > self.delay_cap.val() {
            self.d_q8.next = bit_cast::<40, 32>(self.delay_cap.val()) << 8;
        }
        self.e_diff.next = self.d_q8.val() - bit_cast::<40, 32>(self.avg.q.val());
        self.e_shift.next = self.ediff.q.val() >> bit_cast::<40, 5>(self.p_ewma_shift.val());
        if self.ediff.q.val().get_bit(39) {
            self.e_shift.next = !((!self.ediff.q.val()) >> bit_cast::<40, 5>(self.p_ewma_shift.val()));
        }
        self.avg_new.next = bit_cast::<40, 32>(self.avg.q.val()) + self.ediff.q.val();
        // Branch inputs on the updated state.
        self.avg_delay.next = self.avg.q.val() >> 8;
        // `cwnd` and `cwnd_z` are both loaded in `Pre` and held through the branches that read `cwnd1`.
        self.cwnd1.next = self.cwnd.q.val() | bit_cast::<32, 1>(self.cwnd_z.q.val().into());
        self.acked_q8.next = self.acked.q.val().get_bits::<32>(0) << 8;
        if self.acked.q.val() > bit_cast::<40, 32>(self.acked_cap.val()) {
            self.acked_q8.next = self.acked_cap.val() << 8;
        }
        self.achieved_q8.next = bit_cast::<56, 48>(self.achieved.q.val()) << 8;
        self.max_bytes8.next = bit_cast::<48, 32>(self.p_max_cwnd.val() >> 11);
        self.cut.next = self.dq.q.val();
        self.one_minus_cut.next = self.q16_one.val() - self.cut.val();
        self.factor.next = self.q16_half.val().get_bits::<32>(0);
        if self.cut.val() < self.q16_half.val() {
            self.factor.next = self.one_minus_cut.val().get_bits::<32>(0);
        }
        self.w_dq.next = bit_cast::<64, 32>(self.cwnd1.val()) + self.dq.q.val();
        if self.dctcp.q.val() {
            self.w_dq.next = bit_cast::<64, 32>(self.cwnd.q.val()) + self.dq.q.val();
        }
        self.newc_m.next = self.newc.q.val();
        self.take_wdq.next = false;
        self.take_nudged.next = false;
        self.nudged.next = self.newc.q.val();
        if self.can_fair.q.val() {
            self.nudged.next = self.newc.q.val() + self.p_eta.val();
        }
        // The clamp in `Clamp`, on the nudged window `Fair` left in `newc`.
        self.clamped.next = self.newc.q.val();
        if self.newc.q.val() < bit_cast::<64, 32>(self.p_min_cwnd.val()) {
            self.clamped.next = bit_cast::<64, 32>(self.p_min_cwnd.val());
        }
        if self.newc.q.val() > bit_cast::<64, 32>(self.p_max_cwnd.val()) {
            self.clamped.next = bit_cast::<64, 32>(self.p_max_cwnd.val());
        }
        // DCTCP (the model's `Dctcp`): the window's counters saturate at 32 bits; PSNs compare by 24-bit distance.
        self.d_acc.next =
            bit_cast::<33, 32>(self.rx_count.q.val().get_bits::<32>(0)) + bit_cast::<33, 40>(self.acked.q.val());
        self.d_acc32.next = self.d_acc.val().get_bits::<32>(0);
        if self.d_acc.val() > self.u32_max33.val() {
            self.d_acc32.next = self.u32_max33.val().get_bits::<32>(0);
        }
        self.d_mk.next =
            bit_cast::<33, 32>(self.achieved.q.val().get_bits::<32>(0)) + bit_cast::<33, 40>(self.acked.q.val());
        self.d_mk32.next = self.d_mk.val().get_bits::<32>(0);
        if self.d_mk.val() > self.u32_max33.val() {
            self.d_mk32.next = self.u32_max33.val().get_bits::<32>(0);
        }
        self.d_past.next = self.epsn.q.val() - self.su.last_dec.val().get_bits::<24>(0);
        self.d_una1.next = self.epsn.q.val() + 1;
        self.d_nxt_ahead.next = self.nxt.q.val() - self.d_una1.val();
        self.d_end_new.next = self.d_una1.val();
        if !self.d_nxt_ahead.val().get_bit(23) {
            self.d_end_new.next = self.nxt.q.val();
        }
        self.d_cwnd_b.next = self.cwnd.q.val() >> 8;
        if self.d_cwnd_b.val() == 0 {
            self.d_cwnd_b.next = 1.into();
        }
        self.d_factor.next = self.q16_one.val().get_bits::<32>(0) - (self.avg.q.val() >> 1);
        // α · g, shifted in `DBranch` (α does not move before `DAlpha`), subtracted in `DAlpha`.
        self.d_decay.next = self.avg.q.val() - self.ediff.q.val().get_bits::<32>(0);
        self.d_mtu_q8.next = bit_cast::<64, 16>(self.p_dctcp_mtu.val()) << 8;
        // A multiply done in a `Mul*` state starts the division of its product by `div_den` (default the window).
        self.div_go.next = false;
        self.div_den.next = self.cwnd1.val();
        self.div_num.next = self.macc.q.val();
        match self.state.q.val() {
            CcState::Idle => {
                if self.req_valid.val() {
                    self.qpn.d.next = self.req_qpn.val();
                    self.op.d.next = self.req_op.val();
                    self.now.d.next = self.req_now.val();
                    self.ecn.d.next = self.req_ecn.val();
                    self.rtt.d.next = self.req_rtt.val();
                    self.bytes.d.next = self.req_bytes.val();
                    self.req_on_q.d.next = self.req_on.val();
                    self.req_dctcp_q.d.next = self.req_dctcp.val();
                    self.epsn.d.next = self.req_epsn.val();
                    self.probe.d.next = self.req_probe.val();
                    self.state.d.next = CcState::Load;
                }
            }
            CcState::Load => {
                // The state word is read this cycle (addressed with the request).
                self.st.d.next = self.qp_state.read_data.val();
                self.nxt.d.next = self.snd_nxt.read_data.val();
                self.state.d.next = CcState::Pre;
                if self.op.q.val() != self.op_ack.val() {
                    self.cwnd.d.next = self.p_max_cwnd.val();
                    if (self.p_init_cwnd.val() != 0) & !self.req_dctcp_q.q.val() {
                        self.cwnd.d.next = self.p_init_cwnd.val();
                    }
                    self.base_rtt.d.next = self.p_base_rtt.val();
                    self.avg.d.next = 0.into();
                    self.last_dec.d.next = self.now.q.val();
                    self.last_fair.d.next = self.now.q.val();
                    self.rx_count.d.next = 0.into();
                    self.clear_ts.d.next = self.now.q.val();
                    self.achieved.d.next = 0.into();
                    self.on.d.next = self.req_on_q.q.val();
                    self.last_bytes.d.next = 0.into();
                    self.dctcp.d.next = self.req_dctcp_q.q.val();
                    if self.req_dctcp_q.q.val() {
                        // DCTCP: α = 1, the window's counters 0, its end unset (bit 1: the next ACK ends it).
                        self.avg.d.next = self.q16_one.val().get_bits::<32>(0);
                        self.last_dec.d.next = 0.into();
                        self.last_fair.d.next = 2.into();
                    }
                    self.action.d.next = self.act_hold.val();
                    self.state.d.next = CcState::Write;
                }
            }
            CcState::Pre => {
                // Algorithm 1 lines 5-8 and Algorithm 2; the EWMA and the timers of Algorithm 4.
                // A QP whose window is off ignores its ACKs.
                self.on.d.next = self.su.on.val().any();
                self.last_bytes.d.next = self.su.last_bytes.val();
                if (self.bytes_adv.val() != 0) & !self.bytes_adv.val().get_bit(31) {
                    self.last_bytes.d.next = self.bytes.q.val();
                }
                self.acked.d.next = self.acked_l.val();
                self.cwnd.d.next = self.su.cwnd.val();
                self.cwnd_z.d.next = self.su.cwnd.val() == 0;
                self.base_rtt.d.next = self.base_new.val();
                self.delay.d.next = self.delay_l.val();
                self.last_dec.d.next = self.su.last_dec.val();
                self.last_fair.d.next = self.su.last_fair.val();
                self.rx_count.d.next = self.su.rx_count.val();
                self.clear_ts.d.next = self.su.clear_ts.val();
                self.achieved.d.next = self.su.achieved.val();
                // `since > max(1, min(rtt, base_rtt))`, as three compares side by side (not behind the min).
                self.can_dec.d.next = (self.since_dec.val().get_bits::<31>(1) != 0)
                    & ((self.since_dec.val() > self.rtt.q.val()) | (self.since_dec.val() > self.su.base_rtt.val()));
                self.can_fair.d.next = (self.since_fair.val().get_bits::<31>(1) != 0)
                    & ((self.since_fair.val() > self.rtt.q.val()) | (self.since_fair.val() > self.su.base_rtt.val()));
                self.avg.d.next = self.su.avg.val();
                self.dctcp.d.next = self.su.dctcp.val().any();
                self.state.d.next = CcState::Ewma;
                if self.su.dctcp.val().any() {
                    // DCTCP's state in the shared fields: α in `avg`, the window's acknowledged and marked
                    // bytes in `rx_count` and `achieved`, its end PSN in `last_dec`, `last_fair` bit 0 the
                    // window was cut and bit 1 its end is unset.
                    self.base_rtt.d.next = self.su.base_rtt.val();
                    self.avg.d.next = self.su.avg.val();
                    self.can_fair.d.next = false;
                    self.w_end.d.next = self.su.last_fair.val().get_bit(1) | !self.d_past.val().get_bit(23);
                    self.state.d.next = CcState::DBranch;
                }
                if !self.su.on.val().any() {
                    self.state.d.next = CcState::Idle;
                }
            }
            CcState::Ewma => {
                // Algorithm 2: the bytes into the meter, which completes a measurement once per base RTT + target.
                self.rx_count.d.next = self.rx_count.q.val() + self.abdp_add.val();
                if bit_cast::<33, 32>(self.since_clear.val()) > self.interval.val() {
                    self.achieved.d.next = self.rx_count.q.val() + self.abdp_add.val();
                    self.rx_count.d.next = 0.into();
                    self.clear_ts.d.next = self.now.q.val();
                }
                self.ediff.d.next = self.e_diff.val();
                self.state.d.next = CcState::EwmaShift;
            }
            CcState::EwmaShift => {
                self.ediff.d.next = self.e_shift.val();
                self.state.d.next = CcState::EwmaAdd;
            }
            CcState::EwmaAdd => {
                self.avg.d.next = self.avg_new.val().get_bits::<32>(0);
                self.state.d.next = CcState::Branch;
            }
            CcState::Branch => {
                self.newc_m.next = bit_cast::<64, 32>(self.cwnd1.val());
                self.action.d.next = self.act_hold.val();
                self.state.d.next = CcState::Fair;
                if !self.ecn.q.val() & (self.delay.q.val() > self.p_qhigh.val()) {
                    self.ma.d.next = self.p_beta.val();
                    self.mb.d.next = self.acked_q8.val();
                    self.mstep.d.next = 1.into();
                    self.action.d.next = self.act_const.val();
                    self.state.d.next = CcState::MulA;
                } else if !self.ecn.q.val() & (self.delay.q.val() < self.p_target.val()) {
                    self.ma.d.next = self.p_alpha_rtt.val();
                    self.mb.d.next = self.p_target.val() - self.delay.q.val();
                    self.mstep.d.next = 1.into();
                    self.action.d.next = self.act_gain.val();
                    self.state.d.next = CcState::MulB1;
                } else if self.can_dec.q.val() & (self.avg_delay.val() > self.p_target.val()) {
                    if (self.delay.q.val() > self.p_qhigh.val()) & (self.achieved.q.val() < self.max_bytes8.val()) {
                        self.newc_m.next = bit_cast::<64, 56>(self.achieved_q8.val());
                        if self.achieved_q8.val() > self.u32_max.val() {
                            self.newc_m.next = bit_cast::<64, 56>(self.u32_max.val());
                        }
                        self.last_dec.d.next = self.now.q.val();
                        self.action.d.next = self.act_abdp.val();
                    } else if self.delay.q.val() > self.p_target.val() {
                        self.ma.d.next = bit_cast::<64, 32>(self.p_gamma.val());
                        self.mb.d.next = self.avg_delay.val() - self.p_target.val();
                        self.mstep.d.next = 1.into();
                        self.action.d.next = self.act_decrease.val();
                        self.state.d.next = CcState::MulC1;
                    }
                }
            }
            CcState::MulA => {
                if self.mstep.q.val() == 0 {
                    self.div_go.next = true;
                    self.state.d.next = CcState::DivA;
                }
            }
            CcState::DivA => {
                if self.dcnt.q.val() == 0 {
                    self.take_wdq.next = true;
                    self.state.d.next = CcState::Fair;
                }
            }
            CcState::MulB1 => {
                if self.mstep.q.val() == 0 {
                    self.div_go.next = true;
                    self.div_den.next = self.base_rtt.q.val();
                    if self.base_rtt.q.val() == 0 {
                        self.div_den.next = 1.into();
                    }
                    self.state.d.next = CcState::DivB1;
                }
            }
            CcState::DivB1 => {
                if self.dcnt.q.val() == 0 {
                    self.ma.d.next = self.dq.q.val();
                    self.mb.d.next = self.acked_q8.val();
                    self.mstep.d.next = 1.into();
                    self.state.d.next = CcState::MulB2;
                }
            }
            CcState::MulB2 => {
                if self.mstep.q.val() == 0 {
                    self.div_go.next = true;
                    self.state.d.next = CcState::DivB2;
                }
            }
            CcState::DivB2 => {
                if self.dcnt.q.val() == 0 {
                    self.take_wdq.next = true;
                    self.state.d.next = CcState::Fair;
                }
            }
            CcState::MulC1 => {
                if self.mstep.q.val() == 0 {
                    self.div_go.next = true;
                    self.div_den.next = self.avg_delay.val();
                    self.state.d.next = CcState::DivC;
                }
            }
            CcState::DivC => {
                if self.dcnt.q.val() == 0 {
                    self.ma.d.next = bit_cast::<64, 32>(self.cwnd1.val());
                    self.mb.d.next = self.factor.val();
                    self.mstep.d.next = 1.into();
                    self.state.d.next = CcState::MulC2;
                }
            }
            CcState::MulC2 => {
                if self.mstep.q.val() == 0 {
                    self.newc_m.next = self.macc.q.val() >> 16;
                    self.last_dec.d.next = self.now.q.val();
                    self.state.d.next = CcState::Fair;
                }
            }
            CcState::Fair => {
                if self.can_fair.q.val() {
                    self.last_fair.d.next = self.now.q.val();
                }
                self.take_nudged.next = true;
                self.state.d.next = CcState::Clamp;
            }
            CcState::Clamp => {
                self.cwnd.d.next = self.clamped.val().get_bits::<32>(0);
                self.state.d.next = CcState::Write;
            }
            CcState::DBranch => {
                self.ediff.d.next = bit_cast::<40, 32>(self.avg.q.val() >> bit_cast::<32, 4>(self.p_dctcp_g.val()));
                self.rx_count.d.next = bit_cast::<48, 32>(self.d_acc32.val());
                if self.ecn.q.val() {
                    self.achieved.d.next = bit_cast::<48, 32>(self.d_mk32.val());
                }
                self.newc_m.next = bit_cast::<64, 32>(self.cwnd.q.val());
                self.action.d.next = self.act_hold.val();
                self.state.d.next = CcState::DAlpha;
                if self.ecn.q.val() {
                    if !self.last_fair.q.val().get_bit(0) {
                        self.ma.d.next = bit_cast::<64, 32>(self.cwnd.q.val());
                        self.mb.d.next = self.d_factor.val();
                        self.mstep.d.next = 1.into();
                        self.last_fair.d.next = self.last_fair.q.val() | 1;
                        self.action.d.next = self.act_dctcp_cut.val();
                        self.state.d.next = CcState::DMulCut;
                    }
                } else {
                    self.ma.d.next = self.d_mtu_q8.val();
                    self.mb.d.next = self.acked.q.val().get_bits::<32>(0);
                    self.mstep.d.next = 1.into();
                    self.action.d.next = self.act_dctcp_inc.val();
                    self.state.d.next = CcState::DMulInc;
                }
            }
            CcState::DMulCut => {
                if self.mstep.q.val() == 0 {
                    self.newc_m.next = self.macc.q.val() >> 16;
                    self.state.d.next = CcState::DAlpha;
                }
            }
            CcState::DMulInc => {
                if self.mstep.q.val() == 0 {
                    self.div_go.next = true;
                    self.div_den.next = self.d_cwnd_b.val();
                    self.state.d.next = CcState::DDivInc;
                }
            }
            CcState::DDivInc => {
                if self.dcnt.q.val() == 0 {
                    self.take_wdq.next = true;
                    self.state.d.next = CcState::DAlpha;
                }
            }
            CcState::DAlpha => {
                // The window's end: α moves by the fraction of its bytes that came back marked.
                self.state.d.next = CcState::Fair;
                if self.w_end.q.val() {
                    self.rx_count.d.next = 0.into();
                    self.achieved.d.next = 0.into();
                    self.last_dec.d.next = bit_cast::<32, 24>(self.d_end_new.val());
                    self.last_fair.d.next = 0.into();
                    self.avg.d.next = self.d_decay.val();
                    if self.rx_count.q.val().get_bits::<32>(0) != 0 {
                        self.div_go.next = true;
                        self.div_num.next = bit_cast::<64, 32>(self.achieved.q.val().get_bits::<32>(0)) << 16;
                        self.div_den.next = self.rx_count.q.val().get_bits::<32>(0);
                        self.state.d.next = CcState::DDivAlpha;
                    }
                }
            }
            CcState::DDivAlpha => {
                if self.dcnt.q.val() == 0 {
                    self.ediff.d.next = bit_cast::<40, 32>(
                        self.dq.q.val().get_bits::<32>(0) >> bit_cast::<32, 4>(self.p_dctcp_g.val()),
                    );
                    self.state.d.next = CcState::DAlphaAdd;
                }
            }
            CcState::DAlphaAdd => {
                self.avg.d.next = self.avg.q.val() + self.ediff.q.val().get_bits::<32>(0);
                self.state.d.next = CcState::Fair;
            }
            CcState::Write => {
                self.qp_state.write_enable.next = true;
                self.out_valid.next = true;
                self.state.d.next = CcState::Idle;
            }
            _ => {
                self.state.d.next = CcState::Idle;
            }
        }
        self.m_wdq.next = 0.into();
        if self.take_wdq.val() {
            self.m_wdq.next = 0xFFFF_FFFF_FFFF_FFFFu64.into();
        }
        self.m_nudged.next = 0.into();
        if self.take_nudged.val() {
            self.m_nudged.next = 0xFFFF_FFFF_FFFF_FFFFu64.into();
        }
        self.newc.d.next = (self.newc_m.val() & !(self.m_wdq.val() | self.m_nudged.val()))
            | (self.w_dq.val() & self.m_wdq.val())
            | (self.nudged.val() & self.m_nudged.val());
        if self.div_go.val() {
            self.dnum.d.next = self.div_num.val();
            self.dden.d.next = self.div_den.val();
            self.drem.d.next = 0.into();
            self.dq.d.next = 0.into();
            self.dcnt.d.next = 32.into();
        }
    }
}
