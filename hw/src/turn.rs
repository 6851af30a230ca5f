//! One QP's turn on the send path: context, lookahead and segmentation.
//!
//! The scheduler (`sched.rs`) hands the engine QPNs. Each turn loads the
//! QP's context, fetches WQEs at the SQ consumer index by DMA (no per-QP WQE
//! cache), checks the lkey against the MR table, and segments the message at
//! the path MTU: per packet one DMA payload read and one TX descriptor, until
//! the turn's burst budget (SCHED_BURST_BYTES) is spent; then the engine
//! reports the turn's end to the scheduler, with whether the QP has more to
//! send.
//!
//! WQEs come from the WQE fetch block (`fetch.rs`), which the engine asks
//! for batches: at the start of a turn, while a WQE is segmented (prefetch;
//! only if the turn's budget reaches past that WQE or no other QP waits, as
//! a turn's end waits for its fetches to return), and for the next scheduled
//! QP one turn ahead (lookahead), so neither waits a PCIe round trip. WQEs left in the buffer when a turn ends are dropped
//! and fetched again next turn. At the end of a turn the engine re-reads the
//! QP's producer index, QPC and error flag; when no other QP is scheduled the
//! turn simply continues (round robin over one QP), so a lone QP keeps its
//! WQEs.
//!
//! Rewinds (go-back-N retransmissions asked for by the host's slow path)
//! are applied between turns, when the engine holds no QP's state: the QP's
//! SSN, PSN and message offset are overwritten (its error flag kept) and the
//! QP is kicked into the scheduler like a doorbell. A pending rewind ends
//! the current turn at its next boundary and holds off lookahead, so a busy
//! QP cannot starve it.
//!
//! A rewind with its `one` bit is a single-packet resend (selective
//! repeat). It carries its WQE, so it needs no DMA fetch and does not end
//! the running turn: at the next packet boundary (or while the turn waits
//! for a WQE fetch, or between turns) the engine parks the turn's QP
//! context, WQE and position in shadow registers, loads the resend's QP
//! context, checks its lkey, sends the one packet, and restores the turn.
//! The resend's QP keeps its state and schedule.
//!
//! RDMA READ: a READ WQE is one request packet (no payload) that uses as
//! many PSNs as its response has packets, sent only when the WQE is the
//! QP's lACK or follows READs in flight (all WQEs since lACK are READs, at
//! most `RD_IN_FLIGHT`; otherwise the turn waits while no other QP or
//! rewind needs the engine), and it arms the responder block with the PSNs
//! its response uses. The responder's READ response jobs
//! come through the same queue head as resends (ahead of the host's) and
//! are sent the same way, but every packet of the response at once.

use crate::ack::APSN_BITS;
use crate::desc::{
    ArmPack, ErrPack, LackUnpack, QpcView, RewindPack, RewindUnpack, SendWqeView, SqStatePack, SqStateUnpack,
    TxDescPack, ARM_BITS, LACK_BITS, REW_BITS, REW_ONE_BIT, REW_WQE_BIT, SEND_OP_READ_RESP, TXD_BITS,
};
use crate::fetch::WqeFetch;
use crate::num::Num;
use crate::reg::Reg;
use crate::table::Table;
use rnic_spec::desc::{cqe_status, send_op};
use rnic_spec::params::{dma_tag, ACK_REQ_EVERY, SCHED_BURST_BYTES};
use rnic_spec::params::{MR_BITS, QPN_BITS, RD_IN_FLIGHT, SPRAY_WINDOW_PKTS};
use rnic_spec::wire::opcode;
use rust_hdl::prelude::*;

/// DMA read tag of WQE fetches (bit 6); payload reads use tag 0.
pub const TAG_WQE: u64 = dma_tag::SQ_WQE as u64;

#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
enum SqState {
    Idle,
    Load,
    Check,
    WqeReq,
    Prefetch,
    WqePop,
    Drain,
    TurnEnd,
    PiCheck,
    Resume,
    LaPop,
    LaAddr,
    /// The looked-ahead QP's words are shown; whether it has nothing to send is registered (`la_empty_q`).
    LaWait,
    LaCheck,
    LaReq,
    Swap,
    /// Two cycles (`mr_wait`): the WQE's entry 0 is read in the first; in the second its MR word is on
    /// `mr_data`, and its check and bus address are registered (`mr_key_q`, `mr_room_q`, `wqe_iova_q`)
    /// for `MrCheck`.
    MrRead,
    MrCheck,
    Seg,
    LocalErr,
    Save,
    RwLook,
    RwSave,
    RwKick,
    RsCheck,
    RsEnd,
    RsRet,
    RqJob,
}

/// The turn engine (context, lookahead, segmentation; WQE fetch inside).
#[derive(LogicBlock, Default)]
pub struct TurnEngine {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: every register and FIFO of the block back to its power-on state (block RAM contents are kept).
    pub reset: Signal<In, Bit>,
    /// The core's table scrub after a reset: each table writes zero at `scrub_addr` (the block is held in reset meanwhile).
    pub scrub: Signal<In, Bit>,
    /// The entry the scrub clears this cycle.
    pub scrub_addr: Signal<In, Bits<QPN_BITS>>,
    /// A QP waits in the schedule queue.
    pub sched_valid: Signal<In, Bit>,
    /// QPN at the head of the schedule queue.
    pub sched_qpn: Signal<In, Bits<QPN_BITS>>,
    /// Pop the schedule queue's head: its turn (or lookahead) starts.
    pub sched_pop: Signal<Out, Bit>,
    /// End of a turn (or a looked-ahead QP with nothing to send).
    pub done_valid: Signal<Out, Bit>,
    /// QPN whose turn ended.
    pub done_qpn: Signal<Out, Bits<QPN_BITS>>,
    /// The QP has more to send: back to the schedule queue.
    pub done_more: Signal<Out, Bit>,
    /// The scheduler takes the turn end.
    pub done_ready: Signal<In, Bit>,
    /// Cycle counter (TX timestamps).
    pub now: Signal<In, Bits<64>>,
    /// QPC table read address.
    pub qpc_addr: Signal<Out, Bits<QPN_BITS>>,
    /// QPC table read data (one cycle after the address).
    pub qpc_data: Signal<In, Bits<448>>,
    /// SQ producer index table read address.
    pub sqpi_addr: Signal<Out, Bits<QPN_BITS>>,
    /// SQ producer index read data.
    pub sqpi_data: Signal<In, Bits<16>>,
    /// SQ state table read address.
    pub st_addr: Signal<Out, Bits<QPN_BITS>>,
    /// SQ state read data.
    pub st_data: Signal<In, Bits<128>>,
    /// SQ state write enable.
    pub st_we: Signal<Out, Bit>,
    /// SQ state write address.
    pub st_waddr: Signal<Out, Bits<QPN_BITS>>,
    /// SQ state write data.
    pub st_wdata: Signal<Out, Bits<128>>,
    /// QP error table read address (errors reported by the ACK path).
    pub err_addr: Signal<Out, Bits<QPN_BITS>>,
    /// QP error flag.
    pub err_data: Signal<In, Bit>,
    /// lACK table read address: always the current QP.
    pub lack_addr: Signal<Out, Bits<QPN_BITS>>,
    /// lACK table read data (`LackPack`, one cycle after the address).
    pub lack_data: Signal<In, Bits<LACK_BITS>>,
    /// MR table read address.
    pub mr_addr: Signal<Out, Bits<MR_BITS>>,
    /// MR table read data.
    pub mr_data: Signal<In, Bits<256>>,
    /// DMA read request valid.
    pub rd_valid: Signal<Out, Bit>,
    /// DMA read request ready.
    pub rd_ready: Signal<In, Bit>,
    /// DMA read address.
    pub rd_addr: Signal<Out, Bits<64>>,
    /// DMA read length.
    pub rd_len: Signal<Out, Bits<16>>,
    /// DMA read tag.
    pub rd_tag: Signal<Out, Bits<8>>,
    /// WQE completion valid.
    pub wqe_valid: Signal<In, Bit>,
    /// WQE completion data.
    pub wqe_data: Signal<In, Bits<512>>,
    /// WQE completion ready.
    pub wqe_ready: Signal<Out, Bit>,
    /// TX descriptor FIFO write.
    pub txd_write: Signal<Out, Bit>,
    /// TX descriptor.
    pub txd_data: Signal<Out, Bits<TXD_BITS>>,
    /// TX descriptor FIFO full.
    pub txd_full: Signal<In, Bit>,
    /// Local error (to the completion writer) write.
    pub lerr_write: Signal<Out, Bit>,
    /// Local error word.
    pub lerr_data: Signal<Out, Bits<64>>,
    /// Local error FIFO full.
    pub lerr_full: Signal<In, Bit>,
    /// A rewind waits (`RewindPack`).
    pub rew_valid: Signal<In, Bit>,
    /// The rewind at the queue head.
    pub rew_data: Signal<In, Bits<REW_BITS>>,
    /// Pop the rewind queue.
    pub rew_pop: Signal<Out, Bit>,
    /// Schedule a rewound QP (a doorbell into the scheduler).
    pub kick_valid: Signal<Out, Bit>,
    /// QPN of the kick.
    pub kick_qpn: Signal<Out, Bits<QPN_BITS>>,
    /// The scheduler takes the kick this cycle.
    pub kick_ready: Signal<In, Bit>,
    /// A READ request was sent: the responder block expects its response (`ArmPack`).
    pub arm_write: Signal<Out, Bit>,
    /// The arm word.
    pub arm_data: Signal<Out, Bits<ARM_BITS>>,
    /// The arm queue is full: a READ request waits.
    pub arm_full: Signal<In, Bit>,
    /// The rest of a READ response job whose turn's share is spent, back to the job queue's tail.
    pub rq_valid: Signal<Out, Bit>,
    /// The job word (`RewindPack`: its PSN and offset moved on).
    pub rq_data: Signal<Out, Bits<REW_BITS>>,
    /// The job queue takes it.
    pub rq_ready: Signal<In, Bit>,
    /// Job sequence table read address: always the current QP.
    pub jseq_addr: Signal<Out, Bits<QPN_BITS>>,
    /// The QP's newest READ response job (one cycle after the address): an older job is stale.
    pub jseq_data: Signal<In, Bits<3>>,
    /// Window table read address: the QP of the next cycle (`qpn.d`), so the window arrives with it.
    pub cwnd_addr: Signal<Out, Bits<QPN_BITS>>,
    /// The QP's STrack window (bytes Q24.8, one cycle after the address).
    pub cwnd_data: Signal<In, Bits<32>>,
    /// Acknowledged-PSN table read address: always the current QP.
    pub apsn_addr: Signal<Out, Bits<QPN_BITS>>,
    /// `{ooo[35:24], epsn[23:0]}` of the QP's latest ACK or NAK: its ePSN
    /// and SACK OOO count (one cycle after the address).
    pub apsn_data: Signal<In, Bits<APSN_BITS>>,
    /// A choice asked of STrack's path selector (`crate::spray`,
    /// `OP_CHOOSE`): the entropy of the QP's next packet. Held until
    /// `spray_ready`.
    pub spray_valid: Signal<Out, Bit>,
    /// The selector takes the request this cycle.
    pub spray_ready: Signal<In, Bit>,
    /// Its QP.
    pub spray_qpn: Signal<Out, Bits<QPN_BITS>>,
    /// Its congestion window in packets (all ones for a QP without one):
    /// the selector's active set follows it.
    pub spray_cwnd: Signal<Out, Bits<32>>,
    /// Pulse: the selector's answer (`spray_path`).
    pub spray_done: Signal<In, Bit>,
    /// Pulse: a new request packet (not a resend, not a READ response) of
    /// QP `nxt_qpn` went out; `nxt_psn` is the PSN after it (DCTCP's `snd_nxt`).
    pub nxt_we: Signal<Out, Bit>,
    /// Its QP.
    pub nxt_qpn: Signal<Out, Bits<QPN_BITS>>,
    /// The PSN after it.
    pub nxt_psn: Signal<Out, Bits<24>>,
    /// The chosen entropy.
    pub spray_path: Signal<In, Bits<8>>,
    /// Pulse: a rewind was applied.
    pub cnt_rewind: Signal<Out, Bit>,
    /// Pulse: the turn skipped to lACK, past WQEs completed while a rewind resent them.
    pub cnt_skip: Signal<Out, Bit>,
    /// The WQE push slot (`crate::push`) holds a committed WQE.
    pub push_valid: Signal<In, Bit>,
    /// Its QPN.
    pub push_qpn: Signal<In, Bits<QPN_BITS>>,
    /// Its SQ index (low 16 bits).
    pub push_ssn: Signal<In, Bits<16>>,
    /// The pushed WQE.
    pub push_wqe: Signal<In, Bits<512>>,
    /// The pushed payload words.
    pub push_pl: Signal<In, Bits<512>>,
    /// The slot's WQE is taken (or popped from a fetch instead): the slot is free.
    pub push_take: Signal<Out, Bit>,
    /// Pulse: the WQE was taken from the push slot (no fetch).
    pub cnt_push: Signal<Out, Bit>,
    /// Check, for the tests (the core leaves it unread): `Seg` took its packet arithmetic as fresh
    /// though one of its inputs moved in the cycle before (`seg_fresh` rests on an argument).
    pub seg_stale: Signal<Out, Bit>,
    /// A packet's payload from the push slot, for the TX builder (its descriptor has `inl` set).
    pub ipl_write: Signal<Out, Bit>,
    /// The payload beat.
    pub ipl_data: Signal<Out, Bits<512>>,
    /// The pushed-payload FIFO is full: such a packet waits.
    pub ipl_full: Signal<In, Bit>,
    /// Pulse: a single-packet resend was taken from the queue (sent, or
    /// dropped: its QP failed or left RTS, its lkey fails, or its offset is
    /// past the end of the WQE it carries).
    pub cnt_resend: Signal<Out, Bit>,
    fetch: WqeFetch,
    armp: ArmPack,
    rqp: RewindPack,
    /// Bytes of the READ response job sent in this share (a share is a turn's budget).
    jbytes: Reg<Bits<32>>,
    /// Per QP, the PSN after the last READ response packet sent (or after a
    /// job dropped for its MR): a job marked `JOB_FOLLOWS` goes only when
    /// its PSN is this one (the job it follows is sent), else it queues
    /// again; so round-robin shares keep each QP's responses in PSN order.
    rsp_next: Table<Bits<24>, QPN_BITS>,
    /// The job dropped (its MR check failed): the QP's next response PSN moves past it.
    jdrop: Reg<Bit>,
    /// The queue head's job follows one not yet sent.
    j_wait: Signal<Local, Bit>,
    /// The job in hand was only queued again (`j_wait`): its share is not spent.
    jrot: Reg<Bit>,
    /// Bytes the turns sent since the last READ response job's share ended (saturating at a budget).
    own_bytes: Reg<Bits<32>>,
    /// `own_bytes` has reached a budget, a cycle late (a fairness share: off by a cycle is harmless).
    own_full_q: Reg<Bit>,
    /// The queue head is a READ response job.
    head_job: Signal<Local, Bit>,
    /// The WQE is an RDMA READ (one request packet, as many PSNs as its response has packets).
    is_read: Signal<Local, Bit>,
    /// The WQE is a READ response job from the responder (`SEND_OP_READ_RESP`).
    is_rsp: Signal<Local, Bit>,
    /// The rewind taken is a READ response job (not the host's resend).
    rw_job: Signal<Local, Bit>,
    /// A READ may go: it is the QP's oldest unacknowledged WQE (lACK), so
    /// any READ before it has landed and the responder block waits for no other.
    rd_gate: Signal<Local, Bit>,
    /// `rd_gate` a cycle later. Its inputs hold into `Seg` (the QPN, SSN and resend flag change
    /// at least two states before it, a READ is a message's one packet) except lACK, which only
    /// moves forward and opens the gate: a cycle late at worst.
    rd_gate_q: Reg<Bit>,
    /// `rd_npkts` a cycle later, for a dropped READ response job in `RsEnd` (entered from
    /// `MrCheck` or `Seg` without a packet sent, so of the same WQE, offset and PMTU).
    rd_npkts_q: Reg<Bits<24>>,
    /// The QP's last WQE sent was a READ (and so were all since lACK): a
    /// READ may follow it while fewer than `RD_IN_FLIGHT` are outstanding.
    rd_run: Reg<Bit>,
    rd_run2: Reg<Bit>,
    /// WQEs outstanding before the current one (SSN - lACK).
    rd_out: Signal<Local, Bits<24>>,
    rd_max: Num<{ RD_IN_FLIGHT as u64 }, 24>,
    /// PSNs of a READ request (packets of its response; at least one).
    rd_npkts: Signal<Local, Bits<24>>,
    rd_npkts32: Signal<Local, Bits<32>>,
    psn_step: Signal<Local, Bits<24>>,
    /// Budget the packet spends.
    cost: Signal<Local, Bits<32>>,
    /// The packet is sprayed: its QP has `MAX_PATHS` set and it is not a
    /// READ response (no ACK echoes a response's entropy).
    spray_on: Signal<Local, Bit>,
    /// The packet may go as far as its entropy is concerned: not sprayed, or an entropy chosen for its QP is in hand.
    ent_ok: Signal<Local, Bit>,
    /// An entropy chosen for QP `ent_qpn` and not yet used.
    ent_v: Reg<Bit>,
    ent: Reg<Bits<8>>,
    ent_qpn: Reg<Bits<QPN_BITS>>,
    /// A choice was asked for and its answer has not come.
    ent_wait: Reg<Bit>,
    /// The UDP source port's bytes a sprayed packet keeps (the low byte is the entropy).
    sport_hi: Num<0xFF00, 16>,
    /// The packet's PSN less the ePSN of the QP's latest ACK (bit 23 set: behind it, after a rewind).
    apsn_ahead: Signal<Local, Bits<24>>,
    /// The packets in flight before this one by the latest ACK: the packet's PSN less the PSNs the
    /// peer holds (its ePSN plus its OOO count), in 25 bits (bit 24 says how the 24-bit difference wrapped).
    sack_ahead: Signal<Local, Bits<25>>,
    /// The same less the window `cc_raw`, as one carry-save sum beside it (not a compare behind a
    /// subtract): bit 24 equal to `sack_ahead`'s means at least `cc_raw.q` packets are in flight.
    sack_over: Signal<Local, Bits<25>>,
    /// Carry-free test of PSN == ePSN + OOO count: the carry each bit needs (`a ^ b ^ c`) and the one
    /// the bit below gives (the majority) agree at every bit.
    sack_t: Signal<Local, Bits<24>>,
    sack_m: Signal<Local, Bits<24>>,
    /// No packet in flight before this one.
    sack_zero: Signal<Local, Bit>,
    /// A packet (not a resend, not a READ request) waits when it is sprayed
    /// and `SPRAY_WINDOW_PKTS` past the latest ePSN (the responder's reorder
    /// window), or under the congestion window with a window of packets in flight.
    win_wait: Signal<Local, Bit>,
    /// The packet is under STrack's congestion window (`qpc::CC`; not a READ response).
    cc_on: Signal<Local, Bit>,
    /// The window in packets of the path MTU (at least one).
    cc_pkts: Signal<Local, Bits<24>>,
    /// The same before it is raised to one (`win_wait_c` tests `>= 1` and `>= cc_raw` apart, so the
    /// zero test is off its path), registered: the table is read at the next QPN (`qpn.d`), so
    /// the shift by the PMTU is off the path from the RAM's output and the window is as fresh as before.
    cc_raw: Reg<Bits<24>>,
    cwnd_bytes: Signal<Local, Bits<32>>,
    /// Something else needs the engine (a QP scheduled or looked ahead, a
    /// rewind), or the QP failed or left RTS: a turn held in `Seg` ends.
    others_wait: Signal<Local, Bit>,
    spray_win: Num<{ SPRAY_WINDOW_PKTS as u64 }, 24>,
    no_window: Num<0xFFFF_FFFF, 32>,
    op_read_req: Num<{ opcode::READ_REQUEST as u64 }, 8>,
    op_rsp_first: Num<{ opcode::READ_RESPONSE_FIRST as u64 }, 8>,
    op_rsp_middle: Num<{ opcode::READ_RESPONSE_MIDDLE as u64 }, 8>,
    op_rsp_last: Num<{ opcode::READ_RESPONSE_LAST as u64 }, 8>,
    op_rsp_only: Num<{ opcode::READ_RESPONSE_ONLY as u64 }, 8>,
    send_op_read: Num<{ send_op::RDMA_READ as u64 }, 8>,
    send_op_read_resp: Num<{ SEND_OP_READ_RESP as u64 }, 8>,
    resend: Reg<Bit>,
    rew: Reg<Bits<REW_BITS>>,
    rwu: RewindUnpack,
    /// The resend interrupts a turn: restore it afterwards (else back to Idle).
    rs_turn: Reg<Bit>,
    /// State the interrupted turn resumes in.
    rs_ret: Reg<SqState>,
    sv_qpn: Reg<Bits<QPN_BITS>>,
    sv_qpc: Reg<Bits<448>>,
    sv_wqe: Reg<Bits<512>>,
    sv_ssn: Reg<Bits<24>>,
    sv_psn: Reg<Bits<24>>,
    sv_msg_off: Reg<Bits<32>>,
    sv_iova: Reg<Bits<64>>,
    sv_iova1: Reg<Bits<64>>,
    /// A resend at the queue head interrupts the turn this cycle: before
    /// the turn's next packet (`Seg`) or while it waits for a fetch (`WqePop`).
    park: Signal<Local, Bit>,
    rwp: SqStatePack,
    lu: LackUnpack,
    /// lACK − SSN (bit 23 set: the WQE is not yet acknowledged).
    lack_dist: Signal<Local, Bits<24>>,
    /// The WQE in hand is completed: the peer holds all of it, and its ring
    /// slot may already hold a new WQE. Nothing more of it is sent.
    stale: Signal<Local, Bit>,
    state: Reg<SqState>,
    qpn: Reg<Bits<QPN_BITS>>,
    held: Reg<Bit>,
    la_active: Reg<Bit>,
    la_to_seg: Reg<Bit>,
    qpn2: Reg<Bits<QPN_BITS>>,
    qpc2: Reg<Bits<448>>,
    ssn2: Reg<Bits<24>>,
    psn2: Reg<Bits<24>>,
    msg_off2: Reg<Bits<32>>,
    sq_pi2: Reg<Bits<16>>,
    lerr2: Reg<Bit>,
    qv2: QpcView,
    qpc: Reg<Bits<448>>,
    wqe: Reg<Bits<512>>,
    ssn: Reg<Bits<24>>,
    psn: Reg<Bits<24>>,
    msg_off: Reg<Bits<32>>,
    sq_pi: Reg<Bits<16>>,
    qp_err: Reg<Bit>,
    local_err: Reg<Bit>,
    keep_active: Reg<Bit>,
    budget: Reg<Bits<32>>,
    iova: Reg<Bits<64>>,
    /// The bus address of the WQE's second gather entry (`MrCheck1`).
    iova1: Reg<Bits<64>>,
    qv: QpcView,
    wv: SendWqeView,
    mv: crate::desc::MrView,
    stu: SqStateUnpack,
    stp: SqStatePack,
    txp: TxDescPack,
    errp: ErrPack,
    /// The PMTU in bytes, decoded into a register (`seg_fresh` checks the PMTU two cycles back for it).
    pmtu: Signal<Local, Bits<32>>,
    pmtu_q: Reg<Bits<32>>,
    remaining: Signal<Local, Bits<32>>,
    /// WQE length less the message offset in 33 bits (bit 32: the offset is past the length), and that less
    /// the PMTU and one in 34 (non-negative: more than a PMTU remains), side by side rather than chained.
    rem33: Signal<Local, Bits<33>>,
    past_pmtu: Signal<Local, Bits<34>>,
    pkt_len: Signal<Local, Bits<32>>,
    /// Seg's packet arithmetic from the cycle before (the `_c` signals registered): the
    /// packet's length, whether it is the message's last, the budget it spends, its PSNs,
    /// whether the window holds it back, and the budget compares.
    pkt_len_s: Reg<Bits<32>>,
    last_s: Reg<Bit>,
    /// The packet's length is zero (it reads no payload).
    pkt_zero_s: Reg<Bit>,
    /// The WQE after this one is at the producer index (the turn ends after this message): from
    /// the SSN and PI of the cycle before, which move only with a packet (after which `Seg` waits
    /// a cycle) or in states at least two cycles before `Seg` (`PiCheck`, then `Resume`).
    pi_end_s: Reg<Bit>,
    cost_s: Reg<Bits<32>>,
    psn_step_s: Reg<Bits<24>>,
    win_wait_s: Reg<Bit>,
    bud_le_cost_s: Reg<Bit>,
    bud_le_pkt_s: Reg<Bit>,
    /// The inputs of that arithmetic in the cycle before (the PMTU also two cycles before:
    /// `pmtu_q` follows the QPC a cycle late), compared for `seg_stale` only. The arithmetic is
    /// fresh (`seg_fresh`) unless a packet went (`fire_q`) or the turn resumed (`resumed_q`) in the
    /// cycle before: every other state that writes its inputs (the offset, PSN, budget and QPC, and
    /// the WQE, QPN and resend flag: `Check`, `PiCheck`, `Swap`, `RsCheck`, `RsEnd`, `WqePop`, a
    /// stale skip) is at least two cycles before the next `Seg` (`MrRead` takes two, `RsRet` three).
    p_off: Reg<Bits<32>>,
    p_pmtu: Reg<Bits<4>>,
    p_maxp: Reg<Bits<9>>,
    p_cc: Reg<Bit>,
    p_psn: Reg<Bits<24>>,
    p_budget: Reg<Bits<32>>,
    p_pmtu2: Reg<Bits<4>>,
    seg_same: Signal<Local, Bit>,
    fire_q: Reg<Bit>,
    resumed_q: Reg<Bit>,
    seg_fresh: Signal<Local, Bit>,
    pkt_len_c: Signal<Local, Bits<32>>,
    last_c: Signal<Local, Bit>,
    cost_c: Signal<Local, Bits<32>>,
    psn_step_c: Signal<Local, Bits<24>>,
    win_wait_c: Signal<Local, Bit>,
    /// More than a PMTU remains (or the offset is past the length): the packet is a full PMTU.
    sel_pmtu: Signal<Local, Bit>,
    /// The turn's budget is at most a PMTU, at most the bytes remaining.
    le_pmtu: Signal<Local, Bit>,
    le_rem: Signal<Local, Bit>,
    le_pmtu_sum: Signal<Local, Bits<34>>,
    le_rem_sum: Signal<Local, Bits<34>>,
    /// The bytes remaining less one (`length + !msg_off`: one carry chain).
    rem_m1: Signal<Local, Bits<32>>,
    first: Signal<Local, Bit>,
    last: Signal<Local, Bit>,
    is_write: Signal<Local, Bit>,
    has_imm: Signal<Local, Bit>,
    op_plain: Signal<Local, Bits<8>>,
    /// The MR check (or an empty WQE) two cycles after the word, and not `bad_op`: Seg's per-packet
    /// re-check (its WQE and MR entry have been there three cycles by then).
    mr_ok_q: Reg<Bit>,
    /// A WQE from the host's ring (or push) with an opcode the host may not post (above RDMA_READ; the
    /// responder's READ response jobs come only through the job queue, as resends).
    bad_op: Signal<Local, Bit>,
    /// `bad_op` a cycle later, with `mr_ok_q`: the local error's status.
    bad_op_q: Reg<Bit>,
    /// RsRet's cycles so far (0 to 2): the restored WQE's entry 0 is read in the first and its check
    /// registered in the second and third, so `mr_ok_q` holds it when RsRet ends.
    ret_wait: Reg<Bits<2>>,
    /// `MrRead`'s first cycle is over.
    mr_wait: Reg<Bit>,
    /// The MR port alternates between the WQE's two gather entries: entry 1's word is asked for
    /// next cycle (forced to entry 0 where a WQE is new: the first cycle of `MrRead` and of `RsRet`).
    msel: Reg<Bit>,
    /// The entry asked for this cycle.
    sel_now: Signal<Local, Bit>,
    /// Its address, length and key.
    sel_addr: Signal<Local, Bits<64>>,
    sel_len: Signal<Local, Bits<32>>,
    sel_lkey: Signal<Local, Bits<32>>,
    /// Entry 0's length: the WQE's less entry 1's.
    len0: Signal<Local, Bits<32>>,
    /// The entry whose MR word is on `mr_data` now (1: entry 1), its address, key and empty flag.
    chk_sel_q: Reg<Bit>,
    chk_addr_q: Reg<Bits<64>>,
    chk_lkey_q: Reg<Bits<32>>,
    chk_zero_q: Reg<Bit>,
    /// The MR word's check, registered in two parts so that the bounds sum's carry chain ends at a
    /// register: the entry is valid, of the lkey's tag and the QP's PD, and the range starts at or
    /// past `va_base` (`mr_key_q`); the range ends within the MR (`mr_room` not negative, `mr_room_q`).
    mr_key_q: Reg<Bit>,
    mr_room_q: Reg<Bit>,
    /// `chk_sel_q` and `chk_zero_q` a cycle later, with `mr_key_q` and `mr_room_q`.
    chk_sel2_q: Reg<Bit>,
    chk_zero2_q: Reg<Bit>,
    /// `mr_ok_q` of entry 1 (true for an empty entry).
    mr1_ok_q: Reg<Bit>,
    /// A new WQE's entry 1 is not checked yet: Seg waits for `mr1_ok_q`.
    mr1_pend: Reg<Bit>,
    /// The MR check of the entry on `mr_data` a cycle ago (`mr_key_q`, `mr_room_q`), not `bad_op`.
    ok_c: Signal<Local, Bit>,
    /// Gather arithmetic beside the packet's (registered as `_s`): entry 0's bytes from the
    /// offset on (`la`, 34 bits: negative once past it), the offset is in entry 1 (`in1`), the
    /// packet straddles the two (`strad`), B's length (`lb`) and the offset into entry 1 (`off1`).
    la34: Signal<Local, Bits<34>>,
    /// `la34 - 1` and `la34 - pmtu`, each one sum of the registers: their signs are `in1` (`la34 <= 0`)
    /// and the "less than a PMTU left" half of `strad`, with no zero test or compare behind a sum.
    la_m1: Signal<Local, Bits<34>>,
    la_mp: Signal<Local, Bits<34>>,
    in1_c: Signal<Local, Bit>,
    lb_c: Signal<Local, Bits<32>>,
    la_s: Reg<Bits<32>>,
    lb_s: Reg<Bits<32>>,
    in1_s: Reg<Bit>,
    strad_s: Reg<Bit>,
    off1_s: Reg<Bits<32>>,
    /// The packet is gathered from the WQE's two entries (entry 1 not empty, payload not pushed).
    gat_s: Reg<Bit>,
    /// Piece A of a straddling packet is asked for: B is next, then the packet goes (no park between).
    b_pend: Reg<Bit>,
    /// The packet goes this cycle (descriptor written, PSN, offset and budget advanced).
    fire: Signal<Local, Bit>,
    tag_sq_gather: Num<{ dma_tag::SQ_GATHER as u64 }, 8>,
    /// va_base + length - local_addr - WQE length, wide enough not to wrap: negative when the WQE ends past the MR.
    mr_room: Signal<Local, Bits<66>>,
    /// Its terms from the WQE (-local_addr - WQE length), registered: they reach the check with the
    /// MR word read at the WQE's lkey (both a cycle after the WQE), so the check adds one carry-save stage.
    mr_k_q: Reg<Bits<66>>,
    /// `WqeReq` looked at the push slot for a cycle (its compare, `push_hit_q`, is of this WQE now).
    push_chk: Reg<Bit>,
    /// `WqeReq` asked the fetch block for WQEs: the slot is no longer taken.
    push_asked: Reg<Bit>,
    /// The slot holds the current QP's WQE at its SSN, registered.
    push_hit_q: Reg<Bit>,
    /// The slot holds the current QP's WQE at its SSN.
    push_match: Signal<Local, Bit>,
    /// The pushed WQE's payload is in the slot (`wqe_flags::PUSH_PAYLOAD`, 1 to 64 bytes, not a READ).
    push_pl_ok: Signal<Local, Bit>,
    /// The WQE in hand was pushed with its payload, which `ipl` holds: its one packet reads no DMA.
    pushed_pl: Reg<Bit>,
    ipl: Reg<Bits<512>>,
    /// The pushed payload zero past its length (the host's words there are not trusted: the ICRC expects zeros).
    ipl_keep: crate::mask::ByteKeep,
    /// The packet's payload comes from `ipl` (not for a resend: that carries its own WQE).
    ipl_use: Signal<Local, Bit>,
    /// The looked-ahead QP has nothing to send (error, nothing posted past its SSN, not ready),
    /// registered every cycle from the words at the read addresses: `LaCheck` reads it from `LaWait`.
    la_empty_q: Reg<Bit>,
    /// A READ response job's bytes this turn plus a PMTU reach the burst, registered: `Seg` sends at
    /// most every other cycle (`seg_fresh`), so it is of the job's current bytes and PMTU.
    jb_over_q: Reg<Bit>,
    /// The WQE's bus address: iova_base + (local_addr - va_base).
    wqe_iova: Signal<Local, Bits<64>>,
    /// The turn's budget reaches past the WQE's rest (`remaining < budget`), registered: `MrCheck` reads
    /// it from `MrRead`'s second cycle, whose WQE, message offset and budget are its own.
    bud_past_q: Reg<Bit>,
    /// `wqe_iova` a cycle later, with `mr_key_q` and `mr_room_q`: `iova` and `iova1` are taken from the
    /// word whose check they go with.
    wqe_iova_q: Reg<Bits<64>>,
    off_sh: Signal<Local, Bits<32>>,
    ssn_next16: Signal<Local, Bits<16>>,
    op_send_first: Num<{ opcode::SEND_FIRST as u64 }, 8>,
    op_send_middle: Num<{ opcode::SEND_MIDDLE as u64 }, 8>,
    op_send_last: Num<{ opcode::SEND_LAST as u64 }, 8>,
    op_send_only: Num<{ opcode::SEND_ONLY as u64 }, 8>,
    op_write_first: Num<{ opcode::WRITE_FIRST as u64 }, 8>,
    op_write_middle: Num<{ opcode::WRITE_MIDDLE as u64 }, 8>,
    op_write_last: Num<{ opcode::WRITE_LAST as u64 }, 8>,
    op_write_only: Num<{ opcode::WRITE_ONLY as u64 }, 8>,
    /// Requests carry no AETH: their descriptor's syndrome is zero.
    no_syndrome: Num<0, 8>,
    st_loc_prot_err: Num<{ cqe_status::LOC_PROT_ERR as u64 }, 8>,
    st_loc_qp_op_err: Num<{ cqe_status::LOC_QP_OP_ERR as u64 }, 8>,
    tag_sq_payload: Num<{ dma_tag::SQ_PAYLOAD as u64 }, 8>,
    /// SRNIC's burst_size: payload bytes per turn.
    burst_bytes: Num<{ SCHED_BURST_BYTES as u64 }, 32>,
    /// PSN_OFFSET bits that are all ones on every ACK_REQ_EVERY-th packet.
    ack_req_mask: Num<{ (ACK_REQ_EVERY - 1) as u64 }, 24>,
}

// The completion router decodes the WQE tag by bit 6 alone; the AckReq mask
// needs a power of two.
const _: () = assert!(TAG_WQE == 0x40 && ACK_REQ_EVERY.is_power_of_two());
// The WQE opcode is decoded by bits 0 (SEND) and 1 (immediate), literal
// offsets for rust-hdl; each *_IMM wire opcode is the plain Last/Only plus one.
const _: () = assert!(
    send_op::SEND_BIT == 1
        && send_op::IMM_BIT == 2
        && send_op::RDMA_WRITE == 0
        && send_op::SEND == send_op::SEND_BIT
        && send_op::RDMA_WRITE_IMM == send_op::IMM_BIT
        && send_op::SEND_IMM == send_op::SEND_BIT | send_op::IMM_BIT
        && opcode::SEND_LAST_IMM == opcode::SEND_LAST + 1
        && opcode::SEND_ONLY_IMM == opcode::SEND_ONLY + 1
        && opcode::WRITE_LAST_IMM == opcode::WRITE_LAST + 1
        && opcode::WRITE_ONLY_IMM == opcode::WRITE_ONLY + 1
);
const _: () = assert!(rnic_spec::regs::qpc::RTS.bit() == 0);
// The pushed WQE's opcode, flags and length are read with literal offsets.
const _: () = assert!(
    rnic_spec::desc::off::SWQE_OPCODE == 0
        && rnic_spec::desc::off::SWQE_FLAGS == 1
        && rnic_spec::desc::off::SWQE_LENGTH == 4
        && rnic_spec::desc::wqe_flags::PUSH_PAYLOAD == 1
        && rnic_spec::regs::PUSH_PAYLOAD_MAX == 64
);
// The queue head's resend bit is read with a literal offset.
const _: () = assert!(REW_ONE_BIT == 88 && REW_WQE_BIT == 89);
// Widths follow QPN_BITS, but the QPN fields of the descriptor words
// (`desc.rs`, `pack_blocks!` takes literal widths) are 8 bits.
const _: () = assert!(QPN_BITS == 8);

impl Logic for TurnEngine {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            qpn,
            held,
            mr_ok_q,
            bad_op_q,
            mr_k_q,
            la_empty_q,
            jb_over_q,
            pkt_len_s,
            last_s,
            pkt_zero_s,
            pi_end_s,
            cost_s,
            psn_step_s,
            win_wait_s,
            cc_raw,
            bud_le_cost_s,
            bud_le_pkt_s,
            p_off,
            p_pmtu,
            p_maxp,
            p_cc,
            p_psn,
            p_budget,
            p_pmtu2,
            fire_q,
            resumed_q,
            rd_gate_q,
            rd_npkts_q,
            pmtu_q,
            ret_wait,
            mr_wait,
            la_active,
            la_to_seg,
            qpn2,
            qpc2,
            ssn2,
            rd_run,
            rd_run2,
            psn2,
            msg_off2,
            sq_pi2,
            lerr2,
            qpc,
            wqe,
            ssn,
            psn,
            msg_off,
            sq_pi,
            qp_err,
            local_err,
            keep_active,
            budget,
            iova,
            rew,
            resend,
            rs_turn,
            rs_ret,
            sv_qpn,
            sv_qpc,
            sv_wqe,
            sv_ssn,
            sv_psn,
            sv_msg_off,
            sv_iova,
            sv_iova1,
            iova1,
            msel,
            chk_sel_q,
            chk_addr_q,
            chk_lkey_q,
            chk_zero_q,
            mr1_ok_q,
            mr1_pend,
            mr_key_q,
            mr_room_q,
            chk_sel2_q,
            chk_zero2_q,
            wqe_iova_q,
            bud_past_q,
            la_s,
            lb_s,
            in1_s,
            strad_s,
            off1_s,
            gat_s,
            b_pend,
            jbytes,
            jdrop,
            jrot,
            own_bytes,
            own_full_q,
            ent_v,
            ent,
            ent_qpn,
            ent_wait,
            push_chk,
            push_asked,
            push_hit_q,
            pushed_pl,
            ipl
        );
        self.push_chk.reset.next = self.reset.val();
        self.push_asked.reset.next = self.reset.val();
        self.push_hit_q.reset.next = self.reset.val();
        self.pushed_pl.reset.next = self.reset.val();
        self.ipl.reset.next = self.reset.val();
        self.state.reset.next = self.reset.val();
        self.qpn.reset.next = self.reset.val();
        self.held.reset.next = self.reset.val();
        self.mr_ok_q.reset.next = self.reset.val();
        self.bad_op_q.reset.next = self.reset.val();
        self.mr_k_q.reset.next = self.reset.val();
        self.la_empty_q.reset.next = self.reset.val();
        self.jb_over_q.reset.next = self.reset.val();
        self.pkt_len_s.reset.next = self.reset.val();
        self.last_s.reset.next = self.reset.val();
        self.pkt_zero_s.reset.next = self.reset.val();
        self.pi_end_s.reset.next = self.reset.val();
        self.cost_s.reset.next = self.reset.val();
        self.psn_step_s.reset.next = self.reset.val();
        self.win_wait_s.reset.next = self.reset.val();
        self.cc_raw.reset.next = self.reset.val();
        self.bud_le_cost_s.reset.next = self.reset.val();
        self.bud_le_pkt_s.reset.next = self.reset.val();
        self.p_off.reset.next = self.reset.val();
        self.p_pmtu.reset.next = self.reset.val();
        self.p_maxp.reset.next = self.reset.val();
        self.p_cc.reset.next = self.reset.val();
        self.p_psn.reset.next = self.reset.val();
        self.p_budget.reset.next = self.reset.val();
        self.p_pmtu2.reset.next = self.reset.val();
        self.fire_q.reset.next = self.reset.val();
        self.resumed_q.reset.next = self.reset.val();
        self.rd_gate_q.reset.next = self.reset.val();
        self.rd_npkts_q.reset.next = self.reset.val();
        self.pmtu_q.reset.next = self.reset.val();
        self.ret_wait.reset.next = self.reset.val();
        self.mr_wait.reset.next = self.reset.val();
        self.la_active.reset.next = self.reset.val();
        self.la_to_seg.reset.next = self.reset.val();
        self.qpn2.reset.next = self.reset.val();
        self.qpc2.reset.next = self.reset.val();
        self.ssn2.reset.next = self.reset.val();
        self.rd_run.reset.next = self.reset.val();
        self.rd_run2.reset.next = self.reset.val();
        self.psn2.reset.next = self.reset.val();
        self.msg_off2.reset.next = self.reset.val();
        self.sq_pi2.reset.next = self.reset.val();
        self.lerr2.reset.next = self.reset.val();
        self.qpc.reset.next = self.reset.val();
        self.wqe.reset.next = self.reset.val();
        self.ssn.reset.next = self.reset.val();
        self.psn.reset.next = self.reset.val();
        self.msg_off.reset.next = self.reset.val();
        self.sq_pi.reset.next = self.reset.val();
        self.qp_err.reset.next = self.reset.val();
        self.local_err.reset.next = self.reset.val();
        self.keep_active.reset.next = self.reset.val();
        self.budget.reset.next = self.reset.val();
        self.iova.reset.next = self.reset.val();
        self.rew.reset.next = self.reset.val();
        self.resend.reset.next = self.reset.val();
        self.rs_turn.reset.next = self.reset.val();
        self.rs_ret.reset.next = self.reset.val();
        self.sv_qpn.reset.next = self.reset.val();
        self.sv_qpc.reset.next = self.reset.val();
        self.sv_wqe.reset.next = self.reset.val();
        self.sv_ssn.reset.next = self.reset.val();
        self.sv_psn.reset.next = self.reset.val();
        self.sv_msg_off.reset.next = self.reset.val();
        self.sv_iova.reset.next = self.reset.val();
        self.sv_iova1.reset.next = self.reset.val();
        self.iova1.reset.next = self.reset.val();
        self.msel.reset.next = self.reset.val();
        self.chk_sel_q.reset.next = self.reset.val();
        self.chk_addr_q.reset.next = self.reset.val();
        self.chk_lkey_q.reset.next = self.reset.val();
        self.chk_zero_q.reset.next = self.reset.val();
        self.mr1_ok_q.reset.next = self.reset.val();
        self.mr1_pend.reset.next = self.reset.val();
        self.mr_key_q.reset.next = self.reset.val();
        self.mr_room_q.reset.next = self.reset.val();
        self.chk_sel2_q.reset.next = self.reset.val();
        self.chk_zero2_q.reset.next = self.reset.val();
        self.wqe_iova_q.reset.next = self.reset.val();
        self.bud_past_q.reset.next = self.reset.val();
        self.la_s.reset.next = self.reset.val();
        self.lb_s.reset.next = self.reset.val();
        self.in1_s.reset.next = self.reset.val();
        self.strad_s.reset.next = self.reset.val();
        self.off1_s.reset.next = self.reset.val();
        self.gat_s.reset.next = self.reset.val();
        self.b_pend.reset.next = self.reset.val();
        self.jbytes.reset.next = self.reset.val();
        self.jdrop.reset.next = self.reset.val();
        self.jrot.reset.next = self.reset.val();
        self.own_bytes.reset.next = self.reset.val();
        self.own_full_q.reset.next = self.reset.val();
        self.ent_v.reset.next = self.reset.val();
        self.ent.reset.next = self.reset.val();
        self.ent_qpn.reset.next = self.reset.val();
        self.ent_wait.reset.next = self.reset.val();
        clock!(self, clock, fetch);
        self.fetch.reset.next = self.reset.val();
        self.rsp_next.read_clock.next = self.clock.val();
        self.rsp_next.write_clock.next = self.clock.val();
        self.rsp_next.clear.next = self.scrub.val();
        self.rsp_next.clear_address.next = self.scrub_addr.val();
        self.rsp_next.read_address.next = self.qpn.q.val();
        self.rsp_next.write_enable.next = false;
        self.rsp_next.write_address.next = self.qpn.q.val();
        self.rsp_next.write_data.next = self.psn.q.val() + 1;
        self.qv2.word.next = self.qpc2.q.val();
        // The WQE fetch block: the current and the looked-ahead QP's rings.
        self.fetch.cur_base.next = self.qv.sq_base.val();
        self.fetch.cur_log2.next = self.qv.sq_log2.val();
        self.fetch.cur_ssn.next = self.ssn.q.val().get_bits::<16>(0);
        self.fetch.cur_pi.next = self.sq_pi.q.val();
        self.fetch.held.next = self.held.q.val();
        self.fetch.la_base.next = self.qv2.sq_base.val();
        self.fetch.la_log2.next = self.qv2.sq_log2.val();
        self.fetch.la_ssn.next = self.ssn2.q.val().get_bits::<16>(0);
        self.fetch.la_pi.next = self.sq_pi2.q.val();
        self.fetch.fetch_cur.next = false;
        self.fetch.fetch_la.next = false;
        self.fetch.rd_ready.next = self.rd_ready.val();
        self.fetch.wqe_valid.next = self.wqe_valid.val();
        self.fetch.wqe_data.next = self.wqe_data.val();
        self.wqe_ready.next = self.fetch.wqe_ready.val();
        self.fetch.pop.next = false;
        self.fetch.swap.next = false;
        // The push slot: compared with the current QP's next WQE every cycle; `WqeReq` acts a cycle later.
        self.push_match.next = self.push_valid.val()
            & (self.push_qpn.val() == self.qpn.q.val())
            & (self.push_ssn.val() == self.ssn.q.val().get_bits::<16>(0));
        self.push_hit_q.d.next = self.push_match.val();
        self.push_chk.d.next = false;
        self.push_asked.d.next = false;
        self.push_take.next = false;
        self.cnt_push.next = false;
        self.push_pl_ok.next = self.push_wqe.val().get_bit(8)
            & (self.push_wqe.val().get_bits::<32>(32) != 0)
            & (self.push_wqe.val().get_bits::<32>(32) <= 64)
            & (self.push_wqe.val().get_bits::<8>(0) != self.send_op_read.val());
        self.ipl_use.next = self.pushed_pl.q.val() & !self.resend.q.val();
        self.ipl_keep.len.next = self.push_wqe.val().get_bits::<8>(32);
        self.ipl_keep.data.next = self.push_pl.val();
        self.ipl_write.next = false;
        self.ipl_data.next = self.ipl.q.val();
        self.txp.inl.next = self.ipl_use.val().into();
        // Defaults.
        self.sched_pop.next = false;
        self.fire.next = false;
        self.done_valid.next = false;
        self.done_qpn.next = self.qpn.q.val();
        self.done_more.next = self.keep_active.q.val();
        self.qpc_addr.next = self.qpn.q.val();
        self.sqpi_addr.next = self.qpn.q.val();
        self.st_addr.next = self.qpn.q.val();
        self.err_addr.next = self.qpn.q.val();
        self.lack_addr.next = self.qpn.q.val();
        self.jseq_addr.next = self.qpn.q.val();
        self.apsn_addr.next = self.qpn.q.val();
        self.wv.word.next = self.wqe.q.val();
        self.is_read.next = self.wv.opcode.val() == self.send_op_read.val();
        self.is_rsp.next = self.wv.opcode.val() == self.send_op_read_resp.val();
        self.lu.pword.next = self.lack_data.val();
        self.lack_dist.next = self.lu.ssn.val() - self.ssn.q.val();
        // (A READ response job's SSN is the requester's, not this QP's: never stale.)
        // Equal or not from the two words, beside the carry chain's sign, not a zero test behind it.
        self.stale.next =
            (self.lu.ssn.val() != self.ssn.q.val()) & !self.lack_dist.val().get_bit(23) & !self.is_rsp.val();
        self.st_we.next = false;
        self.st_waddr.next = self.qpn.q.val();
        self.txd_write.next = false;
        self.nxt_we.next = false;
        self.nxt_qpn.next = self.qpn.q.val();
        self.lerr_write.next = false;
        self.qv.word.next = self.qpc.q.val();
        self.wv.word.next = self.wqe.q.val();
        self.mv.word.next = self.mr_data.val();
        self.sel_now.next = self.msel.q.val()
            & !((self.state.q.val() == SqState::MrRead) & !self.mr_wait.q.val())
            & !((self.state.q.val() == SqState::RsRet) & (self.ret_wait.q.val() == 0));
        self.msel.d.next = !self.sel_now.val();
        self.len0.next = self.wv.length.val() - self.wv.len1.val();
        self.sel_addr.next = self.wv.local_addr.val();
        self.sel_len.next = self.len0.val();
        self.sel_lkey.next = self.wv.lkey.val();
        if self.sel_now.val() {
            self.sel_addr.next = self.wv.addr1.val();
            self.sel_len.next = self.wv.len1.val();
            self.sel_lkey.next = self.wv.lkey1.val();
        }
        self.mr_addr.next = self.sel_lkey.val().get_bits::<MR_BITS>(8);
        self.chk_sel_q.d.next = self.sel_now.val();
        self.chk_addr_q.d.next = self.sel_addr.val();
        self.chk_lkey_q.d.next = self.sel_lkey.val();
        self.chk_zero_q.d.next = self.sel_len.val() == 0;
        self.stu.pword.next = self.st_data.val();
        // State word written back.
        self.stp.ssn.next = self.ssn.q.val();
        self.stp.psn.next = self.psn.q.val();
        self.stp.err.next = self.local_err.q.val().into();
        self.stp.rd_run.next = self.rd_run.q.val().into();
        self.stp.rsvd.next = 0.into();
        self.stp.msg_off.next = self.msg_off.q.val();
        self.st_wdata.next = self.stp.pword.val();
        // A rewind's state word: the host's position, the QP's error flag kept.
        self.rwu.pword.next = self.rew.q.val();
        self.rwp.ssn.next = self.rwu.ssn.val();
        self.rwp.psn.next = self.rwu.psn.val();
        self.rwp.err.next = self.stu.err.val();
        self.rwp.rd_run.next = 0.into();
        self.rwp.rsvd.next = 0.into();
        self.rwp.msg_off.next = self.rwu.msg_off.val();
        self.rew_pop.next = false;
        self.kick_valid.next = false;
        self.kick_qpn.next = self.qpn.q.val();
        self.cnt_rewind.next = false;
        self.cnt_resend.next = false;
        self.cnt_skip.next = false;
        // STrack's path selector: one entropy asked for ahead, per QP, used by the QP's next sprayed packet.
        self.spray_valid.next = false;
        self.spray_qpn.next = self.qpn.q.val();
        self.spray_on.next = (self.qv.max_paths.val() != 0) & !self.is_rsp.val();
        self.ent_ok.next = !self.spray_on.val() | (self.ent_v.q.val() & (self.ent_qpn.q.val() == self.qpn.q.val()));
        if self.ent_v.q.val() & (self.ent_qpn.q.val() != self.qpn.q.val()) {
            // Chosen for a QP whose turn ended (or was parked) before it sent: dropped.
            self.ent_v.d.next = false;
        }
        self.apsn_ahead.next = self.psn.q.val() - self.apsn_data.val().get_bits::<24>(0);
        self.sack_ahead.next = bit_cast::<25, 24>(self.psn.q.val())
            - bit_cast::<25, 24>(self.apsn_data.val().get_bits::<24>(0))
            - bit_cast::<25, 12>(self.apsn_data.val().get_bits::<12>(24));
        self.sack_t.next = self.apsn_data.val().get_bits::<24>(0)
            ^ bit_cast::<24, 12>(self.apsn_data.val().get_bits::<12>(24))
            ^ self.psn.q.val();
        self.sack_m.next = (self.apsn_data.val().get_bits::<24>(0)
            & bit_cast::<24, 12>(self.apsn_data.val().get_bits::<12>(24)))
            | ((self.apsn_data.val().get_bits::<24>(0) | bit_cast::<24, 12>(self.apsn_data.val().get_bits::<12>(24)))
                & self.sack_t.val());
        self.sack_zero.next = !self.sack_t.val().get_bit(0)
            & (((self.sack_m.val() ^ (self.sack_t.val() >> 1)) & bits::<24>(0x7F_FFFF)) == 0);
        self.others_wait.next = self.sched_valid.val()
            | self.la_active.q.val()
            | self.rew_valid.val()
            | self.err_data.val()
            | !self.qpc_data.val().get_bit(0);
        self.cc_on.next = self.qv.cc.val().any() & !self.is_rsp.val();
        self.cwnd_bytes.next = self.cwnd_data.val() >> 8;
        self.cc_raw.d.next = self.cwnd_bytes.val().get_bits::<24>(0) >> bit_cast::<24, 4>(self.qv.pmtu_log2.val());
        self.cc_pkts.next = self.cc_raw.q.val();
        self.sack_over.next = bit_cast::<25, 24>(self.psn.q.val())
            - bit_cast::<25, 24>(self.apsn_data.val().get_bits::<24>(0))
            - bit_cast::<25, 12>(self.apsn_data.val().get_bits::<12>(24))
            - bit_cast::<25, 24>(self.cc_raw.q.val());
        if self.cc_raw.q.val() == 0 {
            self.cc_pkts.next = 1.into();
        }
        self.spray_cwnd.next = self.no_window.val();
        if self.cc_on.val() {
            self.spray_cwnd.next = bit_cast::<32, 24>(self.cc_pkts.val());
        }
        self.win_wait_c.next = (self.spray_on.val() | self.cc_on.val())
            & !self.resend.q.val()
            & !self.is_read.val()
            & ((!self.apsn_ahead.val().get_bit(23) & (self.apsn_ahead.val() >= self.spray_win.val()))
                | (self.cc_on.val()
                    & !self.sack_ahead.val().get_bit(23)
                    & !self.sack_zero.val()
                    & (self.sack_over.val().get_bit(24) == self.sack_ahead.val().get_bit(24))));
        if self.spray_done.val() & self.ent_wait.q.val() {
            self.ent.d.next = self.spray_path.val();
            self.ent_v.d.next = true;
            self.ent_wait.d.next = false;
        }
        // Segmentation arithmetic for the current packet.
        self.pmtu_q.d.next = bits::<32>(1) << bit_cast::<32, 4>(self.qv.pmtu_log2.val());
        self.pmtu.next = self.pmtu_q.q.val();
        self.rem33.next = bit_cast::<33, 32>(self.wv.length.val()) - bit_cast::<33, 32>(self.msg_off.q.val());
        self.remaining.next = self.rem33.val().get_bits::<32>(0);
        self.past_pmtu.next = bit_cast::<34, 32>(self.wv.length.val())
            - bit_cast::<34, 32>(self.msg_off.q.val())
            - bit_cast::<34, 32>(self.pmtu.val())
            - bit_cast::<34, 1>(true.into());
        self.jb_over_q.d.next = (self.jbytes.q.val() + self.pmtu.val()) >= self.burst_bytes.val();
        self.rw_job.next = self.rwu.wqe.val().get_bits::<8>(0) == self.send_op_read_resp.val();
        self.j_wait.next =
            self.rw_job.val() & self.rwu.wqe.val().get_bit(11) & (self.rwu.psn.val() != self.rsp_next.read_data.val());
        // pmtu < remaining (remaining wraps when the offset is past the length).
        self.sel_pmtu.next = self.rem33.val().get_bit(32) | !self.past_pmtu.val().get_bit(33);
        self.pkt_len_c.next = self.remaining.val();
        if self.sel_pmtu.val() {
            self.pkt_len_c.next = self.pmtu.val();
        }
        // A READ request carries no payload and is its message's one packet.
        if self.is_read.val() {
            self.pkt_len_c.next = 0.into();
        }
        // `pkt_len_c == 0` without the subtracts: nothing remains (then `sel_pmtu` is low), or a READ.
        // (A full-PMTU packet is never empty: `pmtu` is a power of two once a cycle past reset.)
        self.pkt_zero_s.d.next = self.is_read.val() | (self.wv.length.val() == self.msg_off.q.val());
        self.first.next = self.msg_off.q.val() == 0;
        // The packet is the message's last when no more than a PMTU remains (then it is all that remains).
        self.last_c.next = !self.sel_pmtu.val() | self.is_read.val();
        // The budget against each length the packet can spend, side by side, then picked as the length is.
        self.le_pmtu_sum.next = bit_cast::<34, 32>(self.budget.q.val())
            - bit_cast::<34, 32>(self.pmtu.val())
            - bit_cast::<34, 1>(true.into());
        self.le_pmtu.next = self.le_pmtu_sum.val().get_bit(33);
        self.le_rem_sum.next = bit_cast::<34, 32>(self.budget.q.val()) + bit_cast::<34, 32>(self.msg_off.q.val())
            - bit_cast::<34, 32>(self.wv.length.val())
            - bit_cast::<34, 1>(true.into());
        self.le_rem.next = self.le_rem_sum.val().get_bit(33);
        // ceil(remaining / PMTU) = ((remaining - 1) >> log2) + 1 for remaining >= 1 (0 is caught below):
        // one carry chain before the shift, an increment after, no remainder reduction between them.
        self.rem_m1.next = self.wv.length.val() + !self.msg_off.q.val();
        self.rd_npkts32.next = (self.rem_m1.val() >> bit_cast::<32, 4>(self.qv.pmtu_log2.val())) + 1;
        self.rd_npkts.next = self.rd_npkts32.val().get_bits::<24>(0);
        if self.remaining.val() == 0 {
            self.rd_npkts.next = 1.into();
        }
        self.psn_step_c.next = 1.into();
        if self.is_read.val() {
            self.psn_step_c.next = self.rd_npkts.val();
        }
        // A READ goes as lACK's WQE, or right after READs in flight (all since lACK), up to RD_IN_FLIGHT.
        self.rd_out.next = self.ssn.q.val() - self.lu.ssn.val();
        self.rd_gate.next = (self.lu.ssn.val() == self.ssn.q.val())
            | (self.rd_run.q.val() & !self.resend.q.val() & (self.rd_out.val() < self.rd_max.val()));
        self.rd_gate_q.d.next = self.rd_gate.val();
        self.rd_npkts_q.d.next = self.rd_npkts.val();
        // A READ spends the turn's budget by the bytes its response brings, as a WRITE by those it sends.
        self.cost_c.next = self.pkt_len_c.val();
        if self.is_read.val() {
            self.cost_c.next = self.remaining.val();
        }
        // Seg uses the packet arithmetic a cycle after it is computed, and
        // sends only if its inputs did not move meanwhile (after a packet,
        // a QP change or a new WQE it waits a cycle): the arithmetic is off
        // the path into the FSM.
        self.pkt_len_s.d.next = self.pkt_len_c.val();
        self.last_s.d.next = self.last_c.val();
        self.cost_s.d.next = self.cost_c.val();
        self.psn_step_s.d.next = self.psn_step_c.val();
        self.win_wait_s.d.next = self.win_wait_c.val();
        self.bud_le_cost_s.d.next = self.le_rem.val();
        if self.sel_pmtu.val() & !self.is_read.val() {
            self.bud_le_cost_s.d.next = self.le_pmtu.val();
        }
        self.bud_le_pkt_s.d.next = self.le_rem.val();
        if self.sel_pmtu.val() {
            self.bud_le_pkt_s.d.next = self.le_pmtu.val();
        }
        if self.is_read.val() {
            self.bud_le_pkt_s.d.next = self.budget.q.val() == 0;
        }
        self.la34.next = bit_cast::<34, 32>(self.wv.length.val())
            - bit_cast::<34, 32>(self.wv.len1.val())
            - bit_cast::<34, 32>(self.msg_off.q.val());
        self.la_m1.next = bit_cast::<34, 32>(self.wv.length.val()) + !bit_cast::<34, 32>(self.wv.len1.val())
            - bit_cast::<34, 32>(self.msg_off.q.val());
        self.la_mp.next = bit_cast::<34, 32>(self.wv.length.val())
            - bit_cast::<34, 32>(self.wv.len1.val())
            - bit_cast::<34, 32>(self.msg_off.q.val())
            - bit_cast::<34, 32>(self.pmtu.val());
        self.in1_c.next = self.la_m1.val().get_bit(33);
        self.lb_c.next = self.wv.len1.val();
        if self.sel_pmtu.val() {
            self.lb_c.next = self.pmtu.val() - self.la34.val().get_bits::<32>(0);
        }
        self.la_s.d.next = self.la34.val().get_bits::<32>(0);
        self.lb_s.d.next = self.lb_c.val();
        self.in1_s.d.next = self.in1_c.val();
        self.strad_s.d.next = !self.in1_c.val() & self.la_mp.val().get_bit(33);
        self.off1_s.d.next = self.msg_off.q.val() - self.len0.val();
        self.gat_s.d.next = (self.wv.len1.val() != 0) & !self.ipl_use.val();
        self.pkt_len.next = self.pkt_len_s.q.val();
        self.last.next = self.last_s.q.val();
        self.cost.next = self.cost_s.q.val();
        self.psn_step.next = self.psn_step_s.q.val();
        self.win_wait.next = self.win_wait_s.q.val();
        self.nxt_psn.next = self.psn.q.val() + self.psn_step.val();
        self.p_off.d.next = self.msg_off.q.val();
        self.p_pmtu.d.next = self.qv.pmtu_log2.val();
        self.p_maxp.d.next = self.qv.max_paths.val();
        self.p_cc.d.next = self.qv.cc.val().any();
        self.p_psn.d.next = self.psn.q.val();
        self.p_budget.d.next = self.budget.q.val();
        self.p_pmtu2.d.next = self.p_pmtu.q.val();
        self.seg_same.next = (self.p_off.q.val() == self.msg_off.q.val())
            & (self.p_pmtu.q.val() == self.qv.pmtu_log2.val())
            & (self.p_maxp.q.val() == self.qv.max_paths.val())
            & (self.p_cc.q.val() == self.qv.cc.val().any())
            & (self.p_psn.q.val() == self.psn.q.val())
            & (self.p_budget.q.val() == self.budget.q.val())
            & (self.p_pmtu2.q.val() == self.qv.pmtu_log2.val());
        self.seg_fresh.next = !self.fire_q.q.val() & !self.resumed_q.q.val();
        self.resumed_q.d.next = self.state.q.val() == SqState::Resume;
        self.seg_stale.next =
            (self.state.q.val() == SqState::Seg) & !self.b_pend.q.val() & self.seg_fresh.val() & !self.seg_same.val();
        // A READ response job interrupts a sending turn only after the turns
        // sent a budget's worth since the last job's share (the two alternate
        // by bytes); a host resend, a waiting turn or a fetch wait does not wait.
        self.own_full_q.d.next = self.own_bytes.q.val() >= self.burst_bytes.val();
        self.head_job.next = self.rew_data.val().get_bits::<8>(89) == self.send_op_read_resp.val();
        self.park.next = (self.rew_valid.val() & self.rew_data.val().get_bit(88) & !self.resend.q.val())
            & ((self.state.q.val() == SqState::Seg)
                | ((self.state.q.val() == SqState::WqePop) & !self.fetch.head_valid.val()))
            & (!self.head_job.val()
                | self.own_full_q.q.val()
                | (self.state.q.val() == SqState::WqePop)
                | (self.is_read.val() & !self.rd_gate_q.q.val()))
            & !self.b_pend.q.val();
        self.is_write.next = !self.wv.opcode.val().get_bit(0);
        self.has_imm.next = self.wv.opcode.val().get_bit(1);
        // SQ index after the current WQE, in the PI's 16 bits (Verilog would widen the sum and miss the wrap).
        self.ssn_next16.next = self.ssn.q.val().get_bits::<16>(0) + 1;
        self.pi_end_s.d.next = self.ssn_next16.val() == self.sq_pi.q.val();
        // DMA read request: a WQE batch while the fetch block asks, else a payload read.
        self.rd_valid.next = self.fetch.rd_valid.val();
        self.rd_addr.next = self.fetch.rd_addr.val();
        self.rd_len.next = self.fetch.rd_len.val();
        self.rd_tag.next = self.fetch.rd_tag.val();
        // One sum (one carry chain after a carry-save stage), not a subtract feeding two compares.
        self.la_empty_q.d.next = self.err_data.val()
            | self.stu.err.val().any()
            | (self.stu.ssn.val().get_bits::<16>(0) == self.sqpi_data.val())
            | !self.qpc_data.val().get_bit(0);
        self.mr_k_q.d.next =
            bits::<66>(0) - bit_cast::<66, 64>(self.sel_addr.val()) - bit_cast::<66, 32>(self.sel_len.val());
        self.mr_room.next =
            self.mr_k_q.q.val() + bit_cast::<66, 64>(self.mv.va_base.val()) + bit_cast::<66, 64>(self.mv.length.val());
        self.wqe_iova.next = self.mv.iova_base.val() + self.chk_addr_q.q.val() - self.mv.va_base.val();
        self.wqe_iova_q.d.next = self.wqe_iova.val();
        self.bud_past_q.d.next = self.remaining.val() < self.budget.q.val();
        self.mr_key_q.d.next = self.mv.valid.val().any()
            & (self.mv.key_tag.val() == self.chk_lkey_q.q.val().get_bits::<8>(0))
            & (self.chk_lkey_q.q.val().get_bits::<16>(16) == 0)
            & (self.mv.pd.val() == self.qv.pd.val())
            & (self.chk_addr_q.q.val() >= self.mv.va_base.val());
        self.mr_room_q.d.next = !self.mr_room.val().get_bit(65);
        self.chk_sel2_q.d.next = self.chk_sel_q.q.val();
        self.chk_zero2_q.d.next = self.chk_zero_q.q.val();
        // Not a WQE the host may post: an opcode above RDMA_READ, a READ with a gather list, or
        // entry 1 longer than the whole message.
        self.bad_op.next = !self.resend.q.val()
            & ((self.wv.opcode.val() > self.send_op_read.val())
                | (self.is_read.val() & (self.wv.len1.val() != 0))
                | (self.wv.len1.val() > self.wv.length.val()));
        self.bad_op_q.d.next = self.bad_op.val();
        // The WQE's opcode and lengths only change into `MrRead` and `RsRet`, whose waits cover the
        // two cycles: `bad_op` is taken as it is now, not from the word's cycle.
        self.ok_c.next =
            ((self.mr_key_q.q.val() & self.mr_room_q.q.val()) | self.chk_zero2_q.q.val()) & !self.bad_op.val();
        if self.chk_sel2_q.q.val() {
            self.iova1.d.next = self.wqe_iova_q.q.val();
            self.mr1_ok_q.d.next = self.ok_c.val();
            self.mr1_pend.d.next = false;
        } else {
            self.mr_ok_q.d.next = self.ok_c.val();
        }
        // A new WQE (MrRead, or RsRet restoring one): its entry 1 is checked three cycles on (an empty
        // one passes at once, not with the previous WQE's result). Set again in the second cycle, in
        // which the check's second stage still holds the previous WQE's entry.
        if (self.state.q.val() == SqState::MrRead)
            | ((self.state.q.val() == SqState::RsRet) & !self.ret_wait.q.val().get_bit(1))
        {
            self.mr1_pend.d.next = self.wv.len1.val() != 0;
            self.mr1_ok_q.d.next = self.wv.len1.val() == 0;
        }
        // TX descriptor of the current packet.
        self.txp.is_ack.next = 0.into();
        self.txp.dst_mac.next = self.qv.dest_mac.val();
        self.txp.dst_ip.next = self.qv.dest_ip.val();
        self.txp.sport.next = self.qv.udp_sport.val();
        if self.spray_on.val() {
            self.txp.sport.next = (self.qv.udp_sport.val() & self.sport_hi.val()) | bit_cast::<16, 8>(self.ent.q.val());
        }
        self.op_plain.next = self.op_write_middle.val();
        if self.is_write.val() {
            if self.first.val() & self.last.val() {
                self.op_plain.next = self.op_write_only.val();
            } else if self.first.val() {
                self.op_plain.next = self.op_write_first.val();
            } else if self.last.val() {
                self.op_plain.next = self.op_write_last.val();
            }
        } else {
            self.op_plain.next = self.op_send_middle.val();
            if self.first.val() & self.last.val() {
                self.op_plain.next = self.op_send_only.val();
            } else if self.first.val() {
                self.op_plain.next = self.op_send_first.val();
            } else if self.last.val() {
                self.op_plain.next = self.op_send_last.val();
            }
        }
        // The last packet of a message with immediate: the *_IMM opcode, one above the plain one.
        self.txp.opcode.next = self.op_plain.val();
        if self.has_imm.val() & self.last.val() {
            self.txp.opcode.next = self.op_plain.val() + 1;
        }
        if self.is_read.val() {
            self.txp.opcode.next = self.op_read_req.val();
        }
        if self.is_rsp.val() {
            self.txp.opcode.next = self.op_rsp_middle.val();
            if self.first.val() & self.last.val() {
                self.txp.opcode.next = self.op_rsp_only.val();
            } else if self.first.val() {
                self.txp.opcode.next = self.op_rsp_first.val();
            } else if self.last.val() {
                self.txp.opcode.next = self.op_rsp_last.val();
            }
        }
        self.txp.dqpn.next = self.qv.remote_qpn.val();
        self.txp.psn.next = self.psn.q.val();
        self.txp.plen.next = self.pkt_len.val().get_bits::<13>(0);
        self.txp.va.next = self.wv.remote_addr.val() + bit_cast::<64, 32>(self.msg_off.q.val());
        self.txp.rkey.next = self.wv.rkey.val();
        self.txp.msg_len.next = self.wv.length.val();
        self.txp.ssn.next = self.ssn.q.val();
        self.off_sh.next = self.msg_off.q.val() >> bit_cast::<32, 4>(self.qv.pmtu_log2.val());
        self.txp.psn_offset.next = self.off_sh.val().get_bits::<24>(0);
        // A READ request (also one resent from an offset) asks for the rest
        // of the READ: from here, this many bytes, landing at the local address from here.
        self.txp.laddr.next = 0.into();
        self.txp.lkey.next = 0.into();
        self.txp.sack_base.next = 0.into();
        self.txp.sack_bitmap.next = 0.into();
        self.txp.ooo.next = 0.into();
        self.txp.bytes_rx.next = 0.into();
        if self.is_read.val() {
            self.txp.msg_len.next = self.remaining.val();
            self.txp.psn_offset.next = 0.into();
            self.txp.laddr.next = self.wv.local_addr.val() + bit_cast::<64, 32>(self.msg_off.q.val());
            self.txp.lkey.next = self.wv.lkey.val();
        }
        self.armp.qpn.next = self.qpn.q.val();
        self.armp.psn.next = self.psn.q.val();
        self.armp.psn_end.next = self.psn.q.val() + self.psn_step.val();
        self.armp.first.next = (!self.rd_run.q.val() | self.resend.q.val()).into();
        self.armp.rsvd.next = 0.into();
        self.arm_data.next = self.armp.pword.val();
        self.arm_write.next = false;
        self.rqp.qpn.next = self.qpn.q.val();
        self.rqp.ssn.next = self.ssn.q.val();
        self.rqp.psn.next = self.psn.q.val();
        self.rqp.msg_off.next = self.msg_off.q.val();
        self.rqp.one.next = 1.into();
        self.rqp.wqe.next = self.wqe.q.val().get_bits::<320>(0);
        self.rq_data.next = self.rqp.pword.val();
        self.rq_valid.next = false;
        // AckReq: a message's last packet, every ACK_REQ_EVERY-th, a turn's
        // last (its budget spent: the QP may wait long for its next turn, and
        // its packets must not wait that long for their ACK), a resend, and
        // every sprayed packet (each ACK is the path selector's feedback on its entropy).
        self.txp.ack_req.next = (self.last.val()
            | ((self.txp.psn_offset.val() & self.ack_req_mask.val()) == self.ack_req_mask.val())
            | self.bud_le_pkt_s.q.val()
            | self.resend.q.val()
            | self.spray_on.val()
            | self.cc_on.val())
        .into();
        self.txp.ts.next = self.now.val();
        self.txp.syndrome.next = self.no_syndrome.val();
        self.txp.msn.next = 0.into();
        self.txp.epsn.next = 0.into();
        self.txp.msn_psn.next = 0.into();
        self.txp.ecn_echo.next = 0.into();
        self.txp.rsn.next = self.wv.rsn.val();
        self.txp.imm.next = self.wv.imm.val();
        self.txp.ack_flags.next = 0.into();
        self.txd_data.next = self.txp.pword.val();
        self.errp.qpn.next = self.qpn.q.val();
        self.errp.ssn.next = self.ssn.q.val();
        self.errp.cqn.next = self.qv.send_cqn.val();
        self.errp.status.next = self.st_loc_prot_err.val();
        if self.bad_op_q.q.val() {
            self.errp.status.next = self.st_loc_qp_op_err.val();
        }
        self.lerr_data.next = self.errp.pword.val();
        match self.state.q.val() {
            SqState::Idle => {
                if self.rew_valid.val() {
                    self.rew.d.next = self.rew_data.val();
                    self.qpn.d.next = self.rew_data.val().get_bits::<QPN_BITS>(0);
                    self.rew_pop.next = true;
                    self.rs_turn.d.next = false;
                    self.state.d.next = SqState::RwLook;
                } else if self.sched_valid.val() {
                    self.qpn.d.next = self.sched_qpn.val();
                    self.sched_pop.next = true;
                    self.state.d.next = SqState::Load;
                }
            }
            SqState::TurnEnd => {
                // Fresh producer index, QPC and error flag: addresses now, data next cycle.
                self.state.d.next = SqState::PiCheck;
            }
            SqState::PiCheck => {
                self.sq_pi.d.next = self.sqpi_data.val();
                self.qpc.d.next = self.qpc_data.val();
                self.qp_err.d.next = self.err_data.val();
                self.state.d.next = SqState::Resume;
            }
            SqState::Resume => {
                // Fresh QPC, error flag and producer index: the host may have
                // moved the QP out of RTS, or a NAK may have failed it.
                if (self.ssn.q.val().get_bits::<16>(0) == self.sq_pi.q.val())
                    | self.qp_err.q.val()
                    | !self.qv.rts.val().any()
                {
                    self.keep_active.d.next = false;
                    self.state.d.next = SqState::Drain;
                } else if ((self.budget.q.val() == 0) & ((self.sched_valid.val()) | self.la_active.q.val()))
                    | (self.la_active.q.val() & (self.msg_off.q.val() == 0) & !self.fetch.cur_owed.val())
                    | (self.rew_valid.val() & !self.rew_data.val().get_bit(88))
                {
                    self.state.d.next = SqState::Drain;
                } else {
                    if self.budget.q.val() == 0 {
                        self.budget.d.next = self.burst_bytes.val();
                    }
                    if self.msg_off.q.val() != 0 {
                        self.state.d.next = SqState::Seg;
                    } else if self.fetch.cur_owed.val() {
                        self.state.d.next = SqState::WqePop;
                    } else {
                        self.state.d.next = SqState::WqeReq;
                    }
                }
            }
            SqState::Load => {
                self.state.d.next = SqState::Check;
            }
            SqState::Check => {
                self.qpc.d.next = self.qpc_data.val();
                self.ssn.d.next = self.stu.ssn.val();
                self.psn.d.next = self.stu.psn.val();
                self.msg_off.d.next = self.stu.msg_off.val();
                self.local_err.d.next = self.stu.err.val().any();
                self.rd_run.d.next = self.stu.rd_run.val().any();
                self.sq_pi.d.next = self.sqpi_data.val();
                self.qp_err.d.next = self.err_data.val();
                self.budget.d.next = self.burst_bytes.val();
                self.keep_active.d.next = false;
                self.state.d.next = SqState::Save;
                if (!self.err_data.val())
                    & (!self.stu.err.val().any())
                    & (self.stu.ssn.val().get_bits::<16>(0) != self.sqpi_data.val())
                {
                    self.keep_active.d.next = true;
                    self.state.d.next = SqState::WqeReq;
                }
            }
            SqState::WqeReq => {
                // RTS is checked here, once the QPC word is registered.
                if !self.qv.rts.val().any() {
                    self.keep_active.d.next = false;
                    self.state.d.next = SqState::Save;
                } else if self.push_chk.q.val()
                    & !self.push_asked.q.val()
                    & self.push_hit_q.q.val()
                    & self.push_valid.val()
                {
                    // The WQE came with its doorbell: no fetch (the slot's words are those of the
                    // compare a cycle ago: a new push's first word would have dropped the slot).
                    self.wqe.d.next = self.push_wqe.val();
                    self.ipl.d.next = self.ipl_keep.kept.val();
                    self.pushed_pl.d.next = self.push_pl_ok.val();
                    self.push_take.next = true;
                    self.cnt_push.next = true;
                    self.held.d.next = true;
                    self.state.d.next = SqState::MrRead;
                } else {
                    // With a WQE in the slot the first cycle only looks at it; from the second, or at once
                    // with the slot empty (nothing committed now can match a cycle later), the fetch is asked for.
                    self.push_chk.d.next = true;
                    self.push_asked.d.next = self.push_chk.q.val() | !self.push_valid.val();
                    self.fetch.fetch_cur.next = self.push_chk.q.val() | !self.push_valid.val();
                    if self.fetch.fetch_taken.val() {
                        self.state.d.next = SqState::WqePop;
                    }
                }
            }
            SqState::Prefetch => {
                // Fetch the next WQEs while this one is segmented, so the
                // fetch's round trip overlaps the payload already in flight.
                self.fetch.fetch_cur.next = true;
                if self.fetch.fetch_taken.val() {
                    self.state.d.next = SqState::Seg;
                }
            }
            SqState::WqePop => {
                // The FIFO shows a write a cycle late: wait for the head.
                // While it waits, fetch the next scheduled QP's WQEs too, so
                // its turn does not start with a PCIe round trip.
                if self.park.val() {
                    // A resend while the fetch is in flight (parked below).
                } else if (!self.la_active.q.val())
                    & (self.sched_valid.val())
                    & !self.rew_valid.val()
                    & self.fetch.cur_inflight.val()
                    & self.fetch.room.val()
                {
                    self.la_to_seg.d.next = false;
                    self.state.d.next = SqState::LaPop;
                } else if self.fetch.head_valid.val() {
                    self.wqe.d.next = self.fetch.head.val();
                    self.fetch.pop.next = true;
                    self.held.d.next = true;
                    self.pushed_pl.d.next = false;
                    // A pushed copy of this WQE is not needed any more.
                    self.push_take.next = self.push_match.val();
                    self.state.d.next = SqState::MrRead;
                }
            }
            SqState::Drain => {
                // Unused WQEs of this turn are dropped (fetched again next
                // turn), including those of a fetch still in flight.
                self.held.d.next = false;
                self.pushed_pl.d.next = false;
                if !self.fetch.cur_owed.val() {
                    self.state.d.next = SqState::Save;
                } else if self.fetch.head_valid.val() {
                    self.fetch.pop.next = true;
                }
            }
            SqState::MrRead => {
                self.mr_wait.d.next = !self.mr_wait.q.val();
                if self.mr_wait.q.val() {
                    self.state.d.next = SqState::MrCheck;
                }
            }
            SqState::MrCheck => {
                if self.resend.q.val() {
                    // One packet inside the carried WQE, or nothing (a bad
                    // request from the host; no local error is raised).
                    self.iova.d.next = self.wqe_iova_q.q.val();
                    self.state.d.next = SqState::RsEnd;
                    // Its MR is checked in `Seg` (`mr_ok_q`), as every packet's is.
                    self.jdrop.d.next = true;
                    if (self.msg_off.q.val() < self.wv.length.val())
                        | ((self.wv.length.val() == 0) & (self.msg_off.q.val() == 0))
                    {
                        self.jdrop.d.next = false;
                        self.state.d.next = SqState::Seg;
                    }
                } else if self.stale.val() {
                    // A WQE behind lACK (its slot may be reused): Seg skips it, whatever its lkey.
                    self.state.d.next = SqState::Seg;
                } else {
                    // A WQE whose MR refuses it goes to `LocalErr` from `Seg`, whose first check
                    // (`mr_ok_q`, registered now) every packet passes: the MR word is not in this
                    // cycle's decision.
                    self.iova.d.next = self.wqe_iova_q.q.val();
                    self.state.d.next = SqState::Seg;
                    // Prefetch if the turn's budget reaches past this WQE, or no
                    // other QP waits (the turn goes on): else the fetch would be
                    // dropped at the turn's end, which waits for it to return.
                    if self.fetch.room.val()
                        & self.fetch.can_fetch.val()
                        & !self.la_active.q.val()
                        & (self.bud_past_q.q.val() | !self.sched_valid.val())
                    {
                        self.state.d.next = SqState::Prefetch;
                    } else if (!self.la_active.q.val())
                        & (self.sched_valid.val())
                        & !self.rew_valid.val()
                        & self.fetch.room.val()
                    {
                        self.la_to_seg.d.next = true;
                        self.state.d.next = SqState::LaPop;
                    }
                }
            }
            SqState::LocalErr => {
                if !self.lerr_full.val() {
                    self.lerr_write.next = true;
                    self.local_err.d.next = true;
                    self.keep_active.d.next = false;
                    self.state.d.next = SqState::Drain;
                }
            }
            SqState::Seg => {
                if self.spray_on.val() & !self.ent_v.q.val() & !self.ent_wait.q.val() {
                    self.spray_valid.next = true;
                    if self.spray_ready.val() {
                        self.ent_wait.d.next = true;
                        self.ent_qpn.d.next = self.qpn.q.val();
                    }
                }
                if self.b_pend.q.val() {
                    // Piece B of a straddling packet, the start of entry 1: then the packet goes.
                    if self.rd_ready.val() & !self.txd_full.val() {
                        self.rd_valid.next = true;
                        self.rd_addr.next = self.iova1.q.val();
                        self.rd_len.next = self.lb_s.q.val().get_bits::<16>(0);
                        self.rd_tag.next =
                            self.tag_sq_gather.val() | bit_cast::<8, 6>(self.lb_s.q.val().get_bits::<6>(0));
                        self.b_pend.d.next = false;
                        self.fire.next = true;
                    }
                } else if self.park.val() {
                    // A resend goes out before the turn's next packet (parked below).
                } else if self.stale.val() {
                    // A rewind (or a resend) reached a WQE the peer completed
                    // meanwhile: the QP goes on from lACK, at the PSN its WQE
                    // starts at; the WQEs fetched for this turn are dropped.
                    if self.resend.q.val() {
                        self.state.d.next = SqState::RsEnd;
                    } else {
                        self.ssn.d.next = self.lu.ssn.val();
                        self.psn.d.next = self.lu.psn.val();
                        self.msg_off.d.next = 0.into();
                        self.rd_run.d.next = false;
                        self.keep_active.d.next = self.lu.ssn.val().get_bits::<16>(0) != self.sq_pi.q.val();
                        self.cnt_skip.next = true;
                        self.state.d.next = SqState::Drain;
                    }
                } else if self.mr1_pend.q.val() {
                    // A new WQE's entry 1 is checked next cycle.
                } else if !(self.mr_ok_q.q.val() & self.mr1_ok_q.q.val()) {
                    // The lkey was invalidated (dereg_mr) mid-message: every packet re-checks it.
                    // (Or the WQE's opcode is not one the host may post: `bad_op`.)
                    self.state.d.next = SqState::LocalErr;
                    if self.resend.q.val() {
                        self.jdrop.d.next = true;
                        self.state.d.next = SqState::RsEnd;
                    }
                } else if self.is_read.val() & !self.rd_gate_q.q.val() {
                    // A READ waits until every WQE before it is acknowledged or
                    // a READ in flight (up to RD_IN_FLIGHT). It waits here while nothing else
                    // needs the engine; otherwise the turn ends and comes back.
                    // The state word is written while it waits, so the timeout
                    // scan sees the READs before it in flight.
                    self.st_we.next = !self.resend.q.val();
                    if self.resend.q.val() {
                        self.state.d.next = SqState::RsEnd;
                    } else if self.others_wait.val() {
                        self.keep_active.d.next = true;
                        self.state.d.next = SqState::Drain;
                    }
                } else if !self.seg_fresh.val() {
                    // The packet arithmetic catches up with a change of the cycle before.
                } else if self.win_wait.val() {
                    // A QP whose window (or spray reorder window) is full waits for ACKs, here while nothing else
                    // needs the engine; otherwise the turn ends and comes back.
                    self.st_we.next = true;
                    if self.others_wait.val() {
                        self.keep_active.d.next = true;
                        self.state.d.next = SqState::Drain;
                    }
                } else if (!self.txd_full.val())
                    & (self.rd_ready.val() | self.pkt_zero_s.q.val() | self.ipl_use.val())
                    & !(self.ipl_use.val() & self.ipl_full.val())
                    & !(self.is_read.val() & self.arm_full.val())
                    & self.ent_ok.val()
                {
                    if self.gat_s.q.val() & self.strad_s.q.val() {
                        // Piece A, the end of entry 0: piece B (and the packet) follows.
                        self.rd_valid.next = true;
                        self.rd_addr.next = self.iova.q.val() + bit_cast::<64, 32>(self.msg_off.q.val());
                        self.rd_len.next = self.la_s.q.val().get_bits::<16>(0);
                        self.rd_tag.next =
                            self.tag_sq_gather.val() | bit_cast::<8, 6>(self.la_s.q.val().get_bits::<6>(0));
                        self.b_pend.d.next = true;
                    } else {
                        self.fire.next = true;
                        self.rd_valid.next = !self.pkt_zero_s.q.val() & !self.ipl_use.val();
                        self.rd_addr.next = self.iova.q.val() + bit_cast::<64, 32>(self.msg_off.q.val());
                        if self.gat_s.q.val() & self.in1_s.q.val() {
                            self.rd_addr.next = self.iova1.q.val() + bit_cast::<64, 32>(self.off1_s.q.val());
                        }
                        self.rd_len.next = self.pkt_len.val().get_bits::<16>(0);
                        self.rd_tag.next = self.tag_sq_payload.val();
                    }
                }
            }
            SqState::Save => {
                // Write back the dynamic state; the scheduler requeues the QP if it has more.
                self.st_we.next = true;
                self.done_valid.next = true;
                if self.done_ready.val() {
                    if self.la_active.q.val() {
                        self.state.d.next = SqState::Swap;
                    } else {
                        self.state.d.next = SqState::Idle;
                    }
                }
            }
            SqState::Swap => {
                // The looked-ahead QP's turn starts with its WQEs already fetched.
                self.fetch.swap.next = true;
                self.qpn.d.next = self.qpn2.q.val();
                self.qpc.d.next = self.qpc2.q.val();
                self.ssn.d.next = self.ssn2.q.val();
                self.psn.d.next = self.psn2.q.val();
                self.msg_off.d.next = self.msg_off2.q.val();
                self.sq_pi.d.next = self.sq_pi2.q.val();
                self.local_err.d.next = self.lerr2.q.val();
                self.rd_run.d.next = self.rd_run2.q.val();
                self.qp_err.d.next = false;
                self.budget.d.next = self.burst_bytes.val();
                self.keep_active.d.next = true;
                self.held.d.next = false;
                self.pushed_pl.d.next = false;
                self.la_active.d.next = false;
                self.state.d.next = SqState::WqePop;
            }
            SqState::LaPop => {
                self.qpn2.d.next = self.sched_qpn.val();
                self.sched_pop.next = true;
                self.state.d.next = SqState::LaAddr;
            }
            SqState::LaAddr => {
                self.qpc_addr.next = self.qpn2.q.val();
                self.sqpi_addr.next = self.qpn2.q.val();
                self.st_addr.next = self.qpn2.q.val();
                self.err_addr.next = self.qpn2.q.val();
                self.state.d.next = SqState::LaWait;
            }
            SqState::LaWait => {
                self.qpc_addr.next = self.qpn2.q.val();
                self.sqpi_addr.next = self.qpn2.q.val();
                self.st_addr.next = self.qpn2.q.val();
                self.err_addr.next = self.qpn2.q.val();
                self.state.d.next = SqState::LaCheck;
            }
            SqState::LaCheck => {
                self.qpc_addr.next = self.qpn2.q.val();
                self.sqpi_addr.next = self.qpn2.q.val();
                self.st_addr.next = self.qpn2.q.val();
                self.err_addr.next = self.qpn2.q.val();
                self.qpc2.d.next = self.qpc_data.val();
                self.ssn2.d.next = self.stu.ssn.val();
                self.psn2.d.next = self.stu.psn.val();
                self.msg_off2.d.next = self.stu.msg_off.val();
                self.lerr2.d.next = self.stu.err.val().any();
                self.rd_run2.d.next = self.stu.rd_run.val().any();
                self.sq_pi2.d.next = self.sqpi_data.val();
                if self.la_empty_q.q.val() {
                    // Nothing to send: the QP leaves the schedule (its next doorbell brings it back).
                    self.done_valid.next = true;
                    self.done_qpn.next = self.qpn2.q.val();
                    self.done_more.next = false;
                    if self.done_ready.val() {
                        self.state.d.next = SqState::WqePop;
                        if self.la_to_seg.q.val() {
                            self.state.d.next = SqState::Seg;
                        }
                    }
                } else {
                    self.la_active.d.next = true;
                    self.state.d.next = SqState::LaReq;
                }
            }
            SqState::LaReq => {
                self.fetch.fetch_la.next = true;
                if self.fetch.fetch_taken.val() {
                    self.state.d.next = SqState::WqePop;
                    if self.la_to_seg.q.val() {
                        self.state.d.next = SqState::Seg;
                    }
                }
            }
            SqState::RwLook => {
                // The QP's state word (and for a resend its context and error
                // flag) is read: address now, data next cycle.
                self.state.d.next = SqState::RwSave;
                if self.rwu.one.val().any() {
                    self.cnt_resend.next = !self.rw_job.val();
                    self.resend.d.next = true;
                    self.state.d.next = SqState::RsCheck;
                }
            }
            SqState::RwSave => {
                self.st_we.next = true;
                self.st_wdata.next = self.rwp.pword.val();
                self.cnt_rewind.next = true;
                self.state.d.next = SqState::RwKick;
            }
            SqState::RwKick => {
                self.kick_valid.next = true;
                if self.kick_ready.val() {
                    self.state.d.next = SqState::Idle;
                }
            }
            SqState::RqJob => {
                self.rq_valid.next = true;
                if self.rq_ready.val() {
                    self.state.d.next = SqState::RsEnd;
                }
            }
            SqState::RsCheck => {
                // The packet's position and WQE come from the host; the lkey is read next.
                self.jbytes.d.next = 0.into();
                self.qpc.d.next = self.qpc_data.val();
                self.ssn.d.next = self.rwu.ssn.val();
                self.psn.d.next = self.rwu.psn.val();
                self.msg_off.d.next = self.rwu.msg_off.val();
                self.wqe.d.next = bit_cast::<512, 320>(self.rwu.wqe.val());
                self.state.d.next = SqState::MrRead;
                if self.err_data.val() | self.stu.err.val().any() | !self.qpc_data.val().get_bit(0) {
                    self.state.d.next = SqState::RsEnd;
                }
                // A READ response job the requester asked again for since (a newer job of the QP) is dropped.
                if self.rw_job.val() & (self.rwu.wqe.val().get_bits::<3>(8) != self.jseq_data.val()) {
                    self.state.d.next = SqState::RsEnd;
                } else if self.j_wait.val()
                    & !(self.err_data.val() | self.stu.err.val().any() | !self.qpc_data.val().get_bit(0))
                {
                    // Its QP's previous job is not all sent: it queues again behind it.
                    self.jrot.d.next = true;
                    self.state.d.next = SqState::RqJob;
                }
            }
            SqState::RsEnd => {
                // The interrupted turn's context comes back; its lkey is read again next.
                self.resend.d.next = false;
                self.jdrop.d.next = false;
                self.jrot.d.next = false;
                if self.is_rsp.val() & !self.jrot.q.val() {
                    self.own_bytes.d.next = 0.into();
                }
                // A job dropped for its MR: the jobs following it must not wait for it.
                if self.is_rsp.val() & self.jdrop.q.val() {
                    self.rsp_next.write_enable.next = true;
                    self.rsp_next.write_data.next = self.psn.q.val() + self.rd_npkts_q.q.val();
                }
                self.state.d.next = SqState::Idle;
                if self.rs_turn.q.val() {
                    self.qpn.d.next = self.sv_qpn.q.val();
                    self.qpc.d.next = self.sv_qpc.q.val();
                    self.wqe.d.next = self.sv_wqe.q.val();
                    self.ssn.d.next = self.sv_ssn.q.val();
                    self.psn.d.next = self.sv_psn.q.val();
                    self.msg_off.d.next = self.sv_msg_off.q.val();
                    self.iova.d.next = self.sv_iova.q.val();
                    self.iova1.d.next = self.sv_iova1.q.val();
                    self.state.d.next = SqState::RsRet;
                }
            }
            SqState::RsRet => {
                // Three cycles: Seg's `mr_ok_q` must come from the restored WQE's MR entry.
                self.ret_wait.d.next = self.ret_wait.q.val() + 1;
                if self.ret_wait.q.val().get_bit(1) {
                    self.ret_wait.d.next = 0.into();
                    self.state.d.next = self.rs_ret.q.val();
                }
            }
            _ => {
                self.state.d.next = SqState::Idle;
            }
        }
        self.fire_q.d.next = self.fire.val();
        if self.fire.val() {
            if self.spray_on.val() {
                self.ent_v.d.next = false;
            }
            self.arm_write.next = self.is_read.val();
            // A READ response packet: its QP's responses are sent up to here.
            self.rsp_next.write_enable.next = self.is_rsp.val();
            self.ipl_write.next = self.ipl_use.val();
            self.txd_write.next = true;
            self.nxt_we.next = !self.resend.q.val() & !self.is_rsp.val();
            self.psn.d.next = self.psn.q.val() + self.psn_step.val();
            self.msg_off.d.next = self.msg_off.q.val() + self.pkt_len.val();
            if self.resend.q.val() {
                // One packet (a READ response job: all of them); the
                // turn's budget, SSN and fetch are not the resend's.
                self.state.d.next = SqState::RsEnd;
                if self.is_rsp.val() & !self.last.val() {
                    // The job goes on, up to a turn's budget; the rest queues again behind the other jobs.
                    // Not the job's last packet: a full PMTU.
                    self.jbytes.d.next = self.jbytes.q.val() + self.pmtu.val();
                    self.state.d.next = SqState::Seg;
                    if self.jb_over_q.q.val() {
                        self.state.d.next = SqState::RqJob;
                    }
                }
            } else {
                self.pushed_pl.d.next = false;
                self.rd_run.d.next = self.is_read.val();
                if self.own_bytes.q.val() < self.burst_bytes.val() {
                    self.own_bytes.d.next = self.own_bytes.q.val() + self.pkt_len.val();
                }
                self.budget.d.next = self.budget.q.val() - self.cost.val();
                if self.bud_le_cost_s.q.val() {
                    self.budget.d.next = 0.into();
                }
                if self.last.val() {
                    self.msg_off.d.next = 0.into();
                    self.ssn.d.next = self.ssn.q.val() + 1;
                    // Next WQE in the same turn while budget remains.
                    self.held.d.next = false;
                    if self.pi_end_s.q.val() | self.bud_le_cost_s.q.val() {
                        self.state.d.next = SqState::TurnEnd;
                    } else if self.fetch.cur_owed.val() {
                        self.state.d.next = SqState::WqePop;
                    } else if self.la_active.q.val() {
                        // A fetch now would land behind the lookahead's: end the turn.
                        self.state.d.next = SqState::TurnEnd;
                    } else {
                        self.state.d.next = SqState::WqeReq;
                    }
                } else if self.bud_le_cost_s.q.val() {
                    self.state.d.next = SqState::TurnEnd;
                }
            }
        }
        if self.park.val() {
            // A resend interrupts the turn: its context waits in the shadow registers.
            self.rs_ret.d.next = self.state.q.val();
            self.state.d.next = SqState::RwLook;
            self.rs_turn.d.next = true;
            self.sv_qpn.d.next = self.qpn.q.val();
            self.sv_qpc.d.next = self.qpc.q.val();
            self.sv_wqe.d.next = self.wqe.q.val();
            self.sv_ssn.d.next = self.ssn.q.val();
            self.sv_psn.d.next = self.psn.q.val();
            self.sv_msg_off.d.next = self.msg_off.q.val();
            self.sv_iova.d.next = self.iova.q.val();
            self.sv_iova1.d.next = self.iova1.q.val();
            self.rew.d.next = self.rew_data.val();
            self.qpn.d.next = self.rew_data.val().get_bits::<QPN_BITS>(0);
            self.rew_pop.next = true;
        }
        // After every write of `qpn.d`: the window is read for the QPN of the next cycle.
        self.cwnd_addr.next = self.qpn.d.val();
    }
}
