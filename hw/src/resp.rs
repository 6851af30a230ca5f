//! Responder: takes checked frames from the RX ring.
//!
//! RDMA READ: a READ request at ePSN is checked (rkey, REMOTE_READ, bounds)
//! and queued as a response job for the send path, which sends the response
//! like a WRITE of ours; a duplicate is answered again. At the requester, a
//! READ response packet is placed only if it is the one the QP's READ
//! expects next (`rd_on`, `rd_psn`, armed by the send path), at the address
//! and lkey it echoes; a gap is reported as a PSN sequence NAK.
//!
//! Requests: PSN check against ePSN (duplicates re-ACKed, gaps NAKed), then
//! placement straight into host memory (no reorder buffer): a WRITE packet
//! carries its own remote address, checked against the MR table (rkey, tag,
//! PD, REMOTE_WRITE, bounds); a SEND fetches its receive WQE when its first
//! packet arrives (cache-free RQ) and places at PSN_OFFSET x PMTU. A receive
//! WQE with a scatter list (entries past the first not all empty) is not
//! cached per QP: the last one fetched stays in `rwqe`, tagged with its QPN
//! and RSN, and any other packet fetches its own. For every packet each
//! entry is checked against its MR, the entry holding the packet's first
//! byte is found by subtracting lengths, and the packet is written piece by
//! piece, each write a run of one ring beat's lanes inside one entry
//! (`wr_lane`), so no byte shifter is needed.
//!
//! Selective repeat: a WRITE or SEND packet up to 127 PSNs ahead of ePSN is
//! placed too (a SEND's in the receive WQE its RSN names), recorded in a
//! window borrowed from a shared pool, with a per-slot record of the
//! completion it may end; when the packet at ePSN arrives, ePSN slides over
//! the placed packets behind it and writes their completions in order. A QP
//! that finds the pool empty goes to software recovery instead (SRNIC's
//! bitmap onloading): its plain WRITE packets up to `SW_SR_SPAN` ahead are
//! placed and reported to the host through the CtrlQ, the QP keeps only the
//! most advanced run of placed PSNs (`[sw_left, sw_right]`), and the host's
//! bitmap moves ePSN over what the responder forgot (`REG_RX_SR_SET`,
//! Figure 8's exit rule); ePSN reaching `sw_left` jumps past the run. ACKs echo
//! SSN/PSN_OFFSET/timestamp/entropy. ACKs to our own requests, once their
//! QPN and source are checked, go to the ACK receiver (`crate::ack`). Every
//! receive completion goes as a request to the completion writer
//! (`crate::cqw`), so each CQ has one producer; `crate::rxe` joins them.

use crate::desc::{
    AckInPack, ArmUnpack, CqReqPack, MrView, OooRwqePack, OooRwqeUnpack, QpcView, RecvWqeView, RewindPack,
    RxDescUnpack, RxStatePack, RxStateUnpack, SgeView, SrSidePack, SrSideUnpack, SrWinPack, SrWinUnpack, SwCmdUnpack,
    TxDescPack, WqeHeadPack, ACKIN_BITS, ACKIN_HOLD, ACKIN_RDEND, ACKIN_RDONE, ACKIN_REPORT, ARM_BITS, CQR_BITS,
    JOB_FOLLOWS, OCW_BITS, REW_BITS, RXD_BITS, RXS_BITS, RXS_SR_WIN_BIT, SEND_OP_READ_RESP, SRS_BITS, SRW_BITS,
    SWC_BITS, TXD_BITS,
};
use crate::fifo::Fifo;
use crate::mask::LowMask;
use crate::num::Num;
use crate::reg::Reg;
use crate::table::Table;
use rnic_spec::desc::{cqe_flags, cqe_op, cqe_status, ctrlq_kind, resp_report};
use rnic_spec::params::dma_tag;
use rnic_spec::params::{MR_BITS, QPN_BITS, RX_SR_QUEUE_LOG2, SW_SR_SPAN};
use rnic_spec::params::{SR_POOL, SR_POOL_LOG2, SR_WINDOW, SR_WINDOW_BITS};
use rnic_spec::regs::{qpc, RKEY_TAG_FLIP};
use rnic_spec::wire::{ack_flags, opcode, syndrome, IP_ECN_CE};
use rust_hdl::prelude::*;

/// DMA read tag of receive WQE fetches (bit 7).
pub const TAG_RWQE: u64 = dma_tag::RQ_WQE as u64;

#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
enum RState {
    Idle,
    RstLook,
    RstWait,
    RstApply,
    Look,
    Look2,
    /// The packet's checks are registered for `Dispatch` (their inputs hold from here).
    Look3,
    Dispatch,
    WrMr,
    WrMrChk,
    SendChk,
    RwqeReq,
    RwqeWait,
    RwqeMr,
    /// The receive WQE's MR word is on the port; it is registered (`mr_q`).
    RwqeMrWord,
    RwqeMrChk,
    /// The receive WQE's MR check, registered in `RwqeMrChk`, is used.
    RwqeMrUse,
    RwqeErr,
    /// Scatter list: entry `sg_i` has its MR read.
    LstMr,
    /// Scatter list: that entry's MR word is on the port; it is registered (`mr_q`).
    LstWord,
    /// Scatter list: that entry's check is registered (`rw_key_q`, `rw_room_q`) from the registered word.
    LstChk,
    /// Scatter list: the check is used; on to the next entry.
    LstUse,
    /// Scatter list: entries wholly before the packet's first byte are passed.
    LstSkip,
    /// Scatter list: the packet is written, a piece per cycle.
    LstData,
    /// Scatter list: the next entry's length and address are loaded.
    LstLoad,
    SendPlace,
    Data,
    Finish,
    Slide,
    Save,
    AckChk,
    Nak,
    AckFwd,
    CqeRecv,
    ArmLook,
    ArmWait,
    ArmApply,
    RdMr,
    RdMrChk,
    RdJob,
    RdDone,
    RspMr,
    RspMrChk,
    RspSave,
    SwLook,
    SwWait,
    /// The command's checks are registered (`swc_ok_q`, `swc_exit_q`) for `SwApply`.
    SwChk,
    SwApply,
    SwAck,
    SwRep,
}

/// The responder.
#[derive(LogicBlock, Default)]
pub struct Responder {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: every register and FIFO of the block back to its power-on state (block RAM contents are kept).
    pub reset: Signal<In, Bit>,
    /// The core's table scrub after a reset: each table writes zero at `scrub_addr` (the block is held in reset meanwhile).
    pub scrub: Signal<In, Bit>,
    /// The entry the scrub clears this cycle.
    pub scrub_addr: Signal<In, Bits<QPN_BITS>>,
    /// Descriptor FIFO empty.
    pub desc_empty: Signal<In, Bit>,
    /// Descriptor at the FIFO head.
    pub desc_data: Signal<In, Bits<RXD_BITS>>,
    /// Pop the descriptor FIFO.
    pub desc_pop: Signal<Out, Bit>,
    /// Ring read pointer (consumed up to here).
    pub rptr: Signal<Out, Bits<10>>,
    /// Ring read address (data one cycle later).
    pub ring_raddr: Signal<Out, Bits<10>>,
    /// Ring read data.
    pub ring_rdata: Signal<In, Bits<512>>,
    /// QPC read address.
    pub qpc_addr: Signal<Out, Bits<QPN_BITS>>,
    /// QPC read data.
    pub qpc_data: Signal<In, Bits<448>>,
    /// RX state read address.
    pub rxs_addr: Signal<Out, Bits<QPN_BITS>>,
    /// RX state read data.
    pub rxs_data: Signal<In, Bits<RXS_BITS>>,
    /// RX state write enable.
    pub rxs_we: Signal<Out, Bit>,
    /// RX state write address.
    pub rxs_waddr: Signal<Out, Bits<QPN_BITS>>,
    /// RX state write data.
    pub rxs_wdata: Signal<Out, Bits<RXS_BITS>>,
    /// RQ producer index read address.
    pub rqpi_addr: Signal<Out, Bits<QPN_BITS>>,
    /// RQ producer index.
    pub rqpi_data: Signal<In, Bits<16>>,
    /// SQ producer index of the same QP (bounds the MSN an ACK may carry).
    pub sqpi_data: Signal<In, Bits<16>>,
    /// MR table read address.
    pub mr_addr: Signal<Out, Bits<MR_BITS>>,
    /// MR table read data.
    pub mr_data: Signal<In, Bits<256>>,
    /// Completion request to the completion writer.
    pub cqr_valid: Signal<Out, Bit>,
    /// The completion writer took the request.
    pub cqr_ready: Signal<In, Bit>,
    /// The request (`CqReqPack`).
    pub cqr_data: Signal<Out, Bits<CQR_BITS>>,
    /// An ACK to the ACK receiver (`AckInPack`).
    pub ackr_valid: Signal<Out, Bit>,
    /// The ACK word.
    pub ackr_data: Signal<Out, Bits<ACKIN_BITS>>,
    /// The ACK receiver took it.
    pub ackr_ready: Signal<In, Bit>,
    /// DMA read request valid (receive WQE).
    pub rd_valid: Signal<Out, Bit>,
    /// DMA read request ready.
    pub rd_ready: Signal<In, Bit>,
    /// DMA read address.
    pub rd_addr: Signal<Out, Bits<64>>,
    /// Receive WQE completion valid.
    pub rwqe_valid: Signal<In, Bit>,
    /// Receive WQE completion data.
    pub rwqe_data: Signal<In, Bits<512>>,
    /// Receive WQE completion ready.
    pub rwqe_ready: Signal<Out, Bit>,
    /// DMA write valid.
    pub wr_valid: Signal<Out, Bit>,
    /// DMA write ready.
    pub wr_ready: Signal<In, Bit>,
    /// DMA write address.
    pub wr_addr: Signal<Out, Bits<64>>,
    /// DMA write data.
    pub wr_data: Signal<Out, Bits<512>>,
    /// DMA write length.
    pub wr_len: Signal<Out, Bits<7>>,
    /// DMA write: lane of the first byte in `wr_data`.
    pub wr_lane: Signal<Out, Bits<6>>,
    /// ACK FIFO write.
    pub ack_write: Signal<Out, Bit>,
    /// ACK descriptor.
    pub ack_data: Signal<Out, Bits<TXD_BITS>>,
    /// ACK FIFO full.
    pub ack_full: Signal<In, Bit>,
    /// Pulse: header error (bad QPN, opcode, QP not ready).
    pub cnt_hdr: Signal<Out, Bit>,
    /// Pulse: PSN sequence error NAK sent.
    pub cnt_psn: Signal<Out, Bit>,
    /// Pulse: remote access error NAK sent.
    pub cnt_access: Signal<Out, Bit>,
    /// Pulse: duplicate request.
    pub cnt_dup: Signal<Out, Bit>,
    /// Pulse: RNR NAK sent.
    pub cnt_rnr: Signal<Out, Bit>,
    /// Pulse: ACK received.
    pub cnt_ack: Signal<Out, Bit>,
    /// Between packets (the MR fence waits for it).
    pub idle: Signal<Out, Bit>,
    /// Pulse: invalid request NAKed (opcode sequence, lengths, PSN_OFFSET).
    pub cnt_inv: Signal<Out, Bit>,
    /// Pulse: a request placed out of order (selective repeat).
    pub cnt_ooo: Signal<Out, Bit>,
    /// Pulse: a request placed out of order through software recovery (no window was free).
    pub cnt_sw: Signal<Out, Bit>,
    /// Windows of the pool held back (`regs::REG_SR_POOL_HOLD`): at most
    /// `SR_POOL` minus this many are lent at once.
    pub sr_pool_hold: Signal<In, Bits<8>>,
    /// Windows lent to QPs now.
    lent: Reg<Bits<8>>,
    /// A window may be lent: one is free and fewer than the cap are lent.
    pool_avail: Signal<Local, Bit>,
    /// A software-recovery command from the host (`SwCmdPack`, `regs::REG_RX_SR_SET`).
    pub swc_valid: Signal<In, Bit>,
    /// The command word.
    pub swc_data: Signal<In, Bits<SWC_BITS>>,
    /// Pulse: a command found the queue full and was dropped.
    pub swc_drop: Signal<Out, Bit>,
    swq: Fifo<Bits<SWC_BITS>, RX_SR_QUEUE_LOG2, { RX_SR_QUEUE_LOG2 + 1 }>,
    sw_word: Reg<Bits<SWC_BITS>>,
    swu: SwCmdUnpack,
    /// The packet out of order is placed through software recovery (not a window).
    sw: Reg<Bit>,
    /// A report for the host's software recovery follows the packet or command.
    sw_rep: Reg<Bit>,
    /// The report: CtrlQ kind, `resp_report` flags, PSN, PSN_OFFSET, QPN.
    rep_kind: Reg<Bits<8>>,
    rep_flags: Reg<Bits<8>>,
    rep_psn: Reg<Bits<24>>,
    rep_off: Reg<Bits<24>>,
    rep_qpn: Reg<Bits<QPN_BITS>>,
    /// The packet may be placed through software recovery: a plain WRITE
    /// within `SW_SR_SPAN` of a QP holding no window, which is in recovery
    /// already or finds the pool empty.
    sw_take: Signal<Local, Bit>,
    /// The packet lies in the QP's recovery run `[sw_left, sw_right]` (placed already).
    sw_in_run: Signal<Local, Bit>,
    /// PSN − sw_left, sw_right − sw_left, PSN − (sw_right + 1).
    sw_ld: Signal<Local, Bits<24>>,
    sw_rl: Signal<Local, Bits<24>>,
    sw_rd: Signal<Local, Bits<24>>,
    /// The packet starts a new run: the QP is not in recovery yet, or it lies beyond the run's end + 1.
    sw_new: Signal<Local, Bit>,
    /// The packet at ePSN (or a READ request) is taken in order this cycle.
    acc_io: Signal<Local, Bit>,
    /// A command's TO − FROM and sw_left − FROM.
    swc_rel: Signal<Local, Bits<24>>,
    swc_lim: Signal<Local, Bits<24>>,
    /// ePSN − 1 (the ACK of a command), sw_right + 1 (past the run).
    sw_ack_psn: Signal<Local, Bits<24>>,
    sw_past: Signal<Local, Bits<24>>,
    /// ePSN after an in-order packet minus sw_left, after a READ request's packets and after one
    /// packet, side by side (the state picks one).
    sw_pass_rd: Signal<Local, Bits<24>>,
    sw_pass_one: Signal<Local, Bits<24>>,
    /// The carry each bit of ePSN + n must take in for the sum to be sw_left (`a ^ b ^ c`), and
    /// the carry it would give out (the majority): the sum is sw_left when they chain, a test
    /// of one LUT per bit and an AND, not a carry chain and a zero test behind it.
    sw_t_rd: Signal<Local, Bits<24>>,
    sw_m_rd: Signal<Local, Bits<24>>,
    sw_t_one: Signal<Local, Bits<24>>,
    sw_m_one: Signal<Local, Bits<24>>,
    /// ePSN after an in-order packet is sw_left (the run's start).
    sw_at: Signal<Local, Bit>,
    /// ePSN after an in-order packet is past the run's start (the picked sum's bit 23 clear).
    sw_fwd: Signal<Local, Bit>,
    /// In `RdDone`: the READ request's sum and test are the ones picked (by AND/OR).
    sel_rd: Signal<Local, Bit>,
    /// The window after a READ request's packets (`rcv`, `last` shifted by them), registered: win and the count hold from Dispatch to `RdDone`.
    rd_rcv_q: Reg<Bits<SR_WINDOW_BITS>>,
    rd_last_q: Reg<Bits<SR_WINDOW_BITS>>,
    /// The software-recovery command applies at the QP's ePSN and within its run; its TO is the run's start.
    swc_ok_q: Reg<Bit>,
    swc_exit_q: Reg<Bit>,
    sw_span: Num<{ SW_SR_SPAN as u64 }, 24>,
    kind_resp_ooo: Num<{ ctrlq_kind::RESP_OOO as u64 }, 8>,
    kind_resp_sync: Num<{ ctrlq_kind::RESP_SYNC as u64 }, 8>,
    flag_report: Num<{ ACKIN_REPORT }, 8>,
    rf_last: Num<{ resp_report::LAST as u64 }, 8>,
    rf_inorder: Num<{ resp_report::INORDER as u64 }, 8>,
    rf_exited: Num<{ resp_report::EXITED as u64 }, 8>,
    rf_applied: Num<{ resp_report::APPLIED as u64 }, 8>,
    rf_send: Num<{ resp_report::SEND as u64 }, 8>,
    /// QP commit: reset request valid.
    pub rst_valid: Signal<In, Bit>,
    /// QP commit: `{epsn[33:10], reset_req[9], reset_resp[8], qpn[7:0]}`.
    pub rst_data: Signal<In, Bits<40>>,
    rstq: Fifo<Bits<40>, 3, 4>,
    /// The turn engine sent a READ request (`ArmPack`): expect its response.
    pub arm_write: Signal<In, Bit>,
    /// The arm word.
    pub arm_data: Signal<In, Bits<ARM_BITS>>,
    /// The arm queue is full (the turn engine holds the READ request back).
    pub arm_full: Signal<Out, Bit>,
    /// A READ response job for the send path (`RewindPack`, `one` set, its
    /// WQE a `SEND_OP_READ_RESP`).
    pub job_write: Signal<Out, Bit>,
    /// The job word.
    pub job_data: Signal<Out, Bits<REW_BITS>>,
    /// The job queue is full.
    pub job_full: Signal<In, Bit>,
    /// Job sequence table write (per QP, the newest job's `rd_jseq`, read by the send path).
    pub jseq_we: Signal<Out, Bit>,
    /// Its address (QPN).
    pub jseq_waddr: Signal<Out, Bits<QPN_BITS>>,
    /// Its data.
    pub jseq_wdata: Signal<Out, Bits<3>>,
    jseq_next: Signal<Local, Bits<3>>,
    armq: Fifo<Bits<ARM_BITS>, 3, 4>,
    arm_word: Reg<Bits<ARM_BITS>>,
    armu: ArmUnpack,
    jobp: RewindPack,
    jwqe: WqeHeadPack,
    /// The READ request is a duplicate (behind ePSN): answered again, no state change.
    rd_dup: Reg<Bit>,
    is_read_req: Signal<Local, Bit>,
    /// A READ response packet (to our own READ request).
    is_rsp: Signal<Local, Bit>,
    rsp_last: Signal<Local, Bit>,
    /// A READ response packet that does not fit its response: more than a PMTU,
    /// short but not the last, past the READ's length, or a last that does not end it.
    rsp_len_bad: Signal<Local, Bit>,
    /// Response PSN − the PSN the QP's READ expects next (bit 23 set: behind).
    rd_diff: Signal<Local, Bits<24>>,
    /// Packets of a READ's response (at least one).
    rd_npkts: Signal<Local, Bits<24>>,
    /// The READ's length over the PMTU, and whether it leaves a remainder (`rd_npkts` = their sum):
    /// a shift and a mask of the length, not a sum ahead of the shift.
    rd_quot: Signal<Local, Bits<32>>,
    rd_rem: Signal<Local, Bit>,
    ones32: Num<0xFFFF_FFFF, 32>,
    /// `rd_npkts` a cycle later: the READ states use it two states after the QPC and descriptor settle.
    rd_npkts_q: Reg<Bits<24>>,
    op_read_req: Num<{ opcode::READ_REQUEST as u64 }, 8>,
    op_rsp_first: Num<{ opcode::READ_RESPONSE_FIRST as u64 }, 8>,
    op_rsp_middle: Num<{ opcode::READ_RESPONSE_MIDDLE as u64 }, 8>,
    op_rsp_last: Num<{ opcode::READ_RESPONSE_LAST as u64 }, 8>,
    op_rsp_only: Num<{ opcode::READ_RESPONSE_ONLY as u64 }, 8>,
    send_op_read_resp: Num<{ SEND_OP_READ_RESP as u64 }, 8>,
    flag_hold: Num<{ ACKIN_HOLD }, 8>,
    /// IP ECN codepoint CE, as an ACK's ECN echo byte carries it.
    ecn_ce: Num<{ IP_ECN_CE as u64 }, 8>,
    flag_placed: Num<{ ack_flags::PLACED as u64 }, 8>,
    flag_no_echo: Num<{ ack_flags::NO_ECHO as u64 }, 8>,
    /// `NO_ECHO` as the TX descriptor's two `ack_flags` bits.
    no_echo2: Num<{ ack_flags::NO_ECHO as u64 }, 2>,
    flag_rdone: Num<{ ACKIN_RDONE }, 8>,
    flag_rdend: Num<{ ACKIN_RDEND }, 8>,
    /// The READ response job is a restart (a resent READ): its PSN is not
    /// ahead of the QP's newest job's, so the jobs queued before it are stale.
    rd_restart: Signal<Local, Bit>,
    /// The READ response packet is behind the awaited one: its word only restarts the timer.
    rsp_dup: Reg<Bit>,
    /// The job starts where the QP's newest ends (`JOB_FOLLOWS`).
    rd_follows: Signal<Local, Bit>,
    job_follows: Num<{ JOB_FOLLOWS }, 8>,
    /// The PSN after the awaited one, and after the packet's (named: Verilog would widen the sums and miss the wrap).
    rd_psn_next: Signal<Local, Bits<24>>,
    /// The arm's end minus the awaited end (bit 23 clear, non-zero: the arm's is later).
    arm_ahead: Signal<Local, Bits<24>>,
    psn_next: Signal<Local, Bits<24>>,
    rd_jdist: Signal<Local, Bits<24>>,
    /// Selective repeat's shared pool of windows (`SrWinPack`), addressed
    /// by the QP's `sr_win`; read data one cycle after the address.
    pool: Table<Bits<SRW_BITS>, SR_POOL_LOG2>,
    /// Indices of the windows no QP holds.
    freeq: Fifo<Bits<SR_POOL_LOG2>, SR_POOL_LOG2, { SR_POOL_LOG2 + 1 }>,
    /// Windows put in the free list after power-up (all of them before the first packet).
    init_n: Reg<Bits<8>>,
    /// The window of the packet's QP (zero if it holds none).
    win: Reg<Bits<SRW_BITS>>,
    wu: SrWinUnpack,
    wp: SrWinPack,
    /// A completion record per window slot (`SrSidePack`), addressed by
    /// `{window, PSN mod 128}`: written when a packet is placed out of
    /// order, read by the slide that passes it (read one cycle ahead).
    side: RAM<Bits<SRS_BITS>, SIDE_LOG2>,
    sdu: SrSideUnpack,
    sdp: SrSidePack,
    /// The slide goes on after the completion being written.
    slide_cont: Reg<Bit>,
    /// The receive buffer a SEND packet is placed in (IOVA, length): the
    /// QP's cached one, or the one its RSN names (fetched).
    sp_iova: Reg<Bits<64>>,
    sp_len: Reg<Bits<32>>,
    /// The packet's receive WQE is a scatter list (`LstMr` on).
    lst: Reg<Bit>,
    /// Scatter list: the entry checked or placed into (0 outside the list's states, so the
    /// receive WQE checks read the first entry).
    sg_i: Reg<Bits<2>>,
    /// The entry `sg_i` of `rwqe`, and its bus address from `sg_iova`.
    sel: Signal<Local, Bits<128>>,
    sel_sh: Signal<Local, Bits<512>>,
    iova_sh: Signal<Local, Bits<256>>,
    sv: SgeView,
    sel_iova: Signal<Local, Bits<64>>,
    /// Scatter list: the length of entry `sg_i` from a register, so `LstSkip`'s compare does not
    /// wait on the four-way select; a cycle behind `sg_i` and `rwqe` except where `LstSkip` moves it.
    sg_len: Reg<Bits<32>>,
    /// The length of entry `sg_i + 1`, and `sg_skip - sg_len` one bit wider (its top bit the borrow).
    sg_i1: Signal<Local, Bits<2>>,
    sg_len_nx: Signal<Local, Bits<32>>,
    skip_d: Signal<Local, Bits<33>>,
    /// Scatter list: the entries' bus addresses, entry i's in bits 64i+63..64i (shifted in from the top as checked).
    sg_iova: Reg<Bits<256>>,
    /// The scatter list in `rwqe` passed its checks for this QPN and RSN; the next packet that
    /// needs it skips the fetch (not the checks). Dropped when `rwqe` is fetched again or any
    /// QP's receive WQE is consumed.
    lc_valid: Reg<Bit>,
    lc_qpn: Reg<Bits<QPN_BITS>>,
    lc_rsn: Reg<Bits<16>>,
    /// The RSN whose receive WQE the packet needs: its own out of order, else `rq_ci`.
    rsn_need: Signal<Local, Bits<16>>,
    lc_hit: Signal<Local, Bit>,
    /// Scatter list: the lengths checked so far (34 bits: four of 2^32 do not wrap).
    sg_tot: Reg<Bits<34>>,
    sg_tot_nx: Signal<Local, Bits<34>>,
    /// Scatter list: the packet's message offset not yet passed by skipped entries.
    sg_skip: Reg<Bits<32>>,
    /// Scatter list: bytes left in the bottom entry; the ring lane of the packet's next byte.
    sg_left: Reg<Bits<32>>,
    sg_lane: Reg<Bits<6>>,
    /// Scatter list: this cycle's piece, min(64 - lane, bytes left of the packet, of the entry).
    sg_w: Signal<Local, Bits<16>>,
    /// 64 - lane; left < it, sg_left < it, sg_left < left.
    sg_room: Signal<Local, Bits<16>>,
    sg_lt_rl: Signal<Local, Bit>,
    sg_lt_rs: Signal<Local, Bit>,
    sg_lt_ls: Signal<Local, Bit>,
    /// The lane after the piece, with the carry that says the beat is done.
    sg_end: Signal<Local, Bits<7>>,
    /// The lane after a piece of `left` or of `sg_left` bytes (a piece of the room ends the beat: 64).
    end_l: Signal<Local, Bits<7>>,
    end_s: Signal<Local, Bits<7>>,
    end_64: Signal<Local, Bits<7>>,
    /// The piece is `left` (else `sg_left`'s low half, else the room): the compares' pick.
    sg_is_l: Signal<Local, Bit>,
    sg_is_s: Signal<Local, Bit>,
    /// dest, left and sg_left after each of the three pieces, summed side by side
    /// and then picked, so no sum waits for the compares.
    dest_r: Signal<Local, Bits<64>>,
    dest_l: Signal<Local, Bits<64>>,
    dest_s: Signal<Local, Bits<64>>,
    sg_dest: Signal<Local, Bits<64>>,
    /// The pick as three 64-bit masks: an AND-OR choice, which synthesis cannot
    /// fold back into one sum after a mux as it does with a mux of sums.
    m_r: Signal<Local, Bits<64>>,
    m_l: Signal<Local, Bits<64>>,
    m_s: Signal<Local, Bits<64>>,
    /// The differences one bit wider: the top bit (the borrow) is the compare, so each compare is the
    /// difference's own carry chain (a zero-extended operand's top half is not a zero test in front of it).
    left_r: Signal<Local, Bits<17>>,
    left_s: Signal<Local, Bits<16>>,
    left_nx: Signal<Local, Bits<16>>,
    sgl_r: Signal<Local, Bits<33>>,
    sgl_l: Signal<Local, Bits<33>>,
    sgl_nx: Signal<Local, Bits<32>>,
    /// The piece ends the packet: left == the piece.
    sg_fin: Signal<Local, Bit>,
    /// The WQE's entries past the first are not all empty.
    is_list: Signal<Local, Bit>,
    /// The packet's RSN names a posted receive WQE (rq_ci <= RSN < rq_pi).
    rsn_posted: Signal<Local, Bit>,
    /// An out-of-order SEND packet of the message the QP has started: its
    /// receive buffer is the QP's cached one.
    rsn_cached: Signal<Local, Bit>,
    /// This in-order packet ends a message that writes a receive completion.
    fin_cqe: Signal<Local, Bit>,
    /// The receive WQE last fetched for a packet out of order, per QPN mod
    /// 16 (`OooRwqePack`), so the other packets of its message are placed
    /// without a fetch each; dropped when its WQE is consumed or its QP's
    /// responder is reset. Read at the packet's QPN from `Look` on.
    occ: Table<Bits<OCW_BITS>, OCC_LOG2>,
    ocu: OooRwqeUnpack,
    ocp: OooRwqePack,
    /// The packet's RSN is the cached one's.
    oc_hit: Signal<Local, Bit>,
    /// The cached WQE's MR still grants it (tag, PD, LOCAL_WRITE).
    key_ok_oc: Signal<Local, Bit>,
    /// The QP's cached receive buffer's MR still grants it (tag, PD, LOCAL_WRITE).
    key_ok_cached: Signal<Local, Bit>,
    rst_word: Reg<Bits<40>>,
    state: Reg<RState>,
    rx_desc: Reg<Bits<RXD_BITS>>,
    qpc: Reg<Bits<448>>,
    rs: Reg<Bits<RXS_BITS>>,
    rq_pi: Reg<Bits<16>>,
    sq_pi: Reg<Bits<16>>,
    rp: Reg<Bits<10>>,
    /// `Dispatch`'s checks, registered every cycle (in `Look3` for it): the
    /// peer matches, the READ response is behind / ahead of the one awaited,
    /// its length is bad, the PSN is behind / ahead of ePSN, software recovery
    /// takes it / it is in the run placed, selective repeat may place it /
    /// placed it before, a window is free, its receive WQE is posted, it is an
    /// invalid request, no receive WQE is posted.
    d_peer_ok: Reg<Bit>,
    d_rd_behind: Reg<Bit>,
    d_rd_ahead: Reg<Bit>,
    d_rsp_len_bad: Reg<Bit>,
    d_psn_behind: Reg<Bit>,
    d_psn_ahead: Reg<Bit>,
    d_sw_take: Reg<Bit>,
    d_sw_in_run: Reg<Bit>,
    d_sr_ok: Reg<Bit>,
    d_placed: Reg<Bit>,
    d_pool_avail: Reg<Bit>,
    d_rsn_posted: Reg<Bit>,
    d_inv_req: Reg<Bit>,
    d_rnr_imm: Reg<Bit>,
    end_ptr: Reg<Bits<10>>,
    dest: Reg<Bits<64>>,
    left: Reg<Bits<16>>,
    syn: Reg<Bits<8>>,
    rwqe: Reg<Bits<512>>,
    send_off: Reg<Bits<32>>,
    need_cqe: Reg<Bit>,
    ooo: Reg<Bit>,
    placed: Reg<Bit>,
    slid: Reg<Bit>,
    nak_after_cqe: Reg<Bit>,
    cq_num: Reg<Bits<16>>,
    c_idx: Reg<Bits<16>>,
    c_status: Reg<Bits<8>>,
    c_op: Reg<Bits<8>>,
    c_len: Reg<Bits<32>>,
    c_qpn: Reg<Bits<QPN_BITS>>,
    c_imm: Reg<Bits<32>>,
    c_flags: Reg<Bits<8>>,
    du: RxDescUnpack,
    qv: QpcView,
    /// PSN_OFFSET x PMTU, registered from the descriptor and QPC the registers
    /// take at this edge, so it always equals it for `du` and `qv`.
    off64_q: Reg<Bits<64>>,
    /// `off64_q`'s next value.
    off64_nx: Signal<Local, Bits<64>>,
    /// The message length less the packet's offset in it, registered with `off64_q` (`msg_tail` is this less the packet's length).
    tail_k_q: Reg<Bits<41>>,
    /// Minus the packet's offset and payload, registered every cycle (du and `off64_q` hold from `Look` on, cycles
    /// before `SendPlace`): `sp_tail` is one two-term sum behind `sp_len`.
    sp_k_q: Reg<Bits<41>>,
    rsu: RxStateUnpack,
    rsp: RxStatePack,
    mv: MrView,
    /// The MR word a cycle later: the WRITE, READ and READ response checks read the MR of the
    /// packet's key (the default read address, from Dispatch on) from the cycle before theirs.
    mr_q: Reg<Bits<256>>,
    mq: MrView,
    /// The READ request lies in an MR that grants it; the READ response packet in its lkey's MR;
    /// the WRITE message in its rkey's MR (registered a cycle before the `*MrChk` state reads them).
    rd_ok_q: Reg<Bit>,
    rsp_ok_q: Reg<Bit>,
    wr_ok_q: Reg<Bit>,
    /// `key_ok` of `mq`.
    key_okq: Signal<Local, Bit>,
    rv: RecvWqeView,
    aw: AckInPack,
    cqr: CqReqPack,
    ackp: TxDescPack,
    rp_next: Signal<Local, Bits<10>>,
    op: Signal<Local, Bits<8>>,
    is_send: Signal<Local, Bit>,
    is_write: Signal<Local, Bit>,
    is_first: Signal<Local, Bit>,
    is_last: Signal<Local, Bit>,
    is_imm: Signal<Local, Bit>,
    psn_diff: Signal<Local, Bits<24>>,
    nbeats: Signal<Local, Bits<10>>,
    plen64: Signal<Local, Bits<64>>,
    key_ok: Signal<Local, Bit>,
    /// The packet's RETH key is the rkey of a valid MR of the QP's PD (its tag with
    /// `RKEY_TAG_FLIP` flipped, no bits above the index).
    rkey_ok: Signal<Local, Bit>,
    /// A READ response's key (the requester's lkey it echoes) names a valid MR of the QP's PD.
    echo_ok: Signal<Local, Bit>,
    rkey_flip: Num<{ RKEY_TAG_FLIP as u64 }, 8>,
    rkey_flip32: Num<{ RKEY_TAG_FLIP as u64 }, 32>,
    /// The packet's RETH VA is at or above that MR's start (READ request, READ response).
    va_in_mr: Signal<Local, Bit>,
    /// va_base + length - VA - length of the READ / of this packet / of the receive WQE's buffer,
    /// and the same for the WRITE's whole message (from its first byte): wide enough not to wrap,
    /// negative when the range ends past the MR.
    rd_room: Signal<Local, Bits<66>>,
    pkt_room: Signal<Local, Bits<66>>,
    rw_room: Signal<Local, Bits<66>>,
    msg_room: Signal<Local, Bits<66>>,
    /// The terms of those sums that do not come from the MR word (-VA - length), registered every
    /// cycle: each check adds the MR's va_base and length to one, a single carry-save stage.
    rd_k_q: Reg<Bits<66>>,
    pkt_k_q: Reg<Bits<66>>,
    rw_k_q: Reg<Bits<66>>,
    msg_k_q: Reg<Bits<66>>,
    /// The WRITE message's first byte (VA - offset) less va_base: negative when below the MR.
    msg_lo: Signal<Local, Bits<66>>,
    /// The WRITE message's first byte, VA - PSN_OFFSET x PMTU modulo 2^64.
    msg_start: Reg<Bits<64>>,
    /// The receive WQE's buffer passes its MR's checks (valid, PD, key, access, bounds), a cycle after the MR
    /// word is registered (`mq`): two after it is on the port. Registered in two parts, the bounds sum's
    /// sign apart from the rest, so the 66-bit carry chain ends at a flip-flop.
    rw_key_q: Reg<Bit>,
    rw_room_q: Reg<Bit>,
    rw_ok: Signal<Local, Bit>,
    /// Bus addresses of the packet's VA and of the receive WQE's buffer: iova_base + (VA - va_base).
    va_iova: Signal<Local, Bits<64>>,
    rw_iova: Signal<Local, Bits<64>>,
    rq_mask: Signal<Local, Bits<16>>,
    /// `rq_mask` from the ring's log2 size.
    rq_mask_of: LowMask<16>,
    chunk: Signal<Local, Bits<16>>,
    peer_ok: Signal<Local, Bit>,
    pmtu64: Signal<Local, Bits<64>>,
    off64: Signal<Local, Bits<64>>,
    /// Message length less the packet's offset and payload (PSN_OFFSET x PMTU is below 2^40): negative when the packet
    /// ends past the message; the same against a receive WQE's buffer length.
    msg_tail: Signal<Local, Bits<41>>,
    sp_tail: Signal<Local, Bits<41>>,
    msg_len64: Signal<Local, Bits<64>>,
    inv_req: Signal<Local, Bit>,
    len_inv: Signal<Local, Bit>,
    in_window: Signal<Local, Bit>,
    sr_bit: Signal<Local, Bits<SR_WINDOW_BITS>>,
    /// The received bits of the QP's window as the pool shows it (Dispatch).
    pool_rcv: Signal<Local, Bits<SR_WINDOW_BITS>>,
    /// `pool_rcv` shifted down by the packet's distance from ePSN: bit 0 is its bit (a mux, not a decoder and an OR).
    rcv_at: Signal<Local, Bits<SR_WINDOW_BITS>>,
    /// SACK: the software-recovery run's length, and the answered PSN past ePSN.
    sw_run: Signal<Local, Bits<24>>,
    sack_rel: Signal<Local, Bits<24>>,
    /// The largest OOO count an ACK word carries.
    ooo_max: Num<0xFFF, 12>,
    pool_n: Num<{ SR_POOL as u64 }, 8>,
    sr_ok: Signal<Local, Bit>,
    op_send_first: Num<{ opcode::SEND_FIRST as u64 }, 8>,
    op_send_middle: Num<{ opcode::SEND_MIDDLE as u64 }, 8>,
    op_send_last: Num<{ opcode::SEND_LAST as u64 }, 8>,
    op_send_only: Num<{ opcode::SEND_ONLY as u64 }, 8>,
    op_write_first: Num<{ opcode::WRITE_FIRST as u64 }, 8>,
    op_write_middle: Num<{ opcode::WRITE_MIDDLE as u64 }, 8>,
    op_write_last: Num<{ opcode::WRITE_LAST as u64 }, 8>,
    op_write_only: Num<{ opcode::WRITE_ONLY as u64 }, 8>,
    op_send_last_imm: Num<{ opcode::SEND_LAST_IMM as u64 }, 8>,
    op_send_only_imm: Num<{ opcode::SEND_ONLY_IMM as u64 }, 8>,
    op_write_last_imm: Num<{ opcode::WRITE_LAST_IMM as u64 }, 8>,
    op_write_only_imm: Num<{ opcode::WRITE_ONLY_IMM as u64 }, 8>,
    op_ack: Num<{ opcode::ACK as u64 }, 8>,
    syn_ack: Num<{ syndrome::ACK as u64 }, 8>,
    syn_rnr_nak: Num<{ syndrome::RNR_NAK as u64 }, 8>,
    syn_nak_psn_seq: Num<{ syndrome::NAK_PSN_SEQ as u64 }, 8>,
    syn_nak_inv_req: Num<{ syndrome::NAK_INV_REQ as u64 }, 8>,
    syn_nak_rem_access: Num<{ syndrome::NAK_REM_ACCESS as u64 }, 8>,
    syn_nak_rem_op: Num<{ syndrome::NAK_REM_OP as u64 }, 8>,
    st_success: Num<{ cqe_status::SUCCESS as u64 }, 8>,
    st_loc_prot_err: Num<{ cqe_status::LOC_PROT_ERR as u64 }, 8>,
    cqe_op_recv: Num<{ cqe_op::RECV as u64 }, 8>,
    cqe_op_recv_imm: Num<{ cqe_op::RECV_RDMA_WITH_IMM as u64 }, 8>,
    flag_with_imm: Num<{ cqe_flags::WITH_IMM as u64 }, 8>,
    /// The last PSN ahead of ePSN the window holds.
    sr_window: Num<{ SR_WINDOW as u64 }, 24>,
}

/// Entries of the receive WQE cache for packets out of order (QPN mod 16).
const OCC_LOG2: usize = 4;
/// Bit position of PSN_OFFSET in the RX descriptor.
const RXD_PSN_OFFSET_AT: usize = crate::pack::field_at(crate::desc::RxDescPack::FIELDS, "psn_offset");
/// Bit position of MSG_LEN in the RX descriptor.
const RXD_MSG_LEN_AT: usize = crate::pack::field_at(crate::desc::RxDescPack::FIELDS, "msg_len");
/// Bit position of the PMTU's log2 in the QPC word.
const QPC_PMTU_LOG2_AT: usize = qpc::PMTU_LOG2.bit();

// The RTL slices these positions as literals.
const _: () = assert!(RXD_PSN_OFFSET_AT == 209 && RXD_MSG_LEN_AT == 153 && QPC_PMTU_LOG2_AT == 4);

/// Address bits of the window slots' completion records: window index, PSN mod 128.
const SIDE_LOG2: usize = SR_POOL_LOG2 + 7;
const _: () = assert!(SR_WINDOW_BITS == 1 << 7);

// rust-hdl needs literal slice offsets: the QPN's upper bits start at 8, and
// the reset word packs the QPN into bits 7:0.
const _: () = assert!(QPN_BITS == 8);
/// Bits of the 24-bit BTH destination QPN above the QPNs the NIC holds.
const QPN_HIGH_BITS: usize = 24 - QPN_BITS;
// The ACK fields taken from the request fields they overlap (see `aw` above).
const _: () = {
    use rnic_spec::wire::field as f;
    assert!(f::AXT_EPSN.start == f::RXT_TS.start && f::AXT_EPSN.len == 4 && f::RXT_TS.len == 8);
    assert!(f::AXT_SSN.start == f::RETH_VA.start + 4 && f::AXT_SSN.len == 4 && f::RETH_VA.len == 8);
    assert!(f::AXT_PSN_OFFSET.start == f::RETH_RKEY.start && f::AXT_PSN_OFFSET.len == f::RETH_RKEY.len);
};
// The descriptor's two `ack_flags` bits are bits 1:0 of the ACK extension's flags byte (`txb.rs`).
const _: () = assert!(ack_flags::PLACED == 1 && ack_flags::NO_ECHO == 2);
// The SACK segments are the window's two 64-bit halves (literal offsets above).
const _: () = assert!(SR_WINDOW_BITS == 128);
// The completion router decodes this tag by bit 7 alone.
const _: () = assert!(TAG_RWQE == 0x80);
// A receive WQE is one 512-bit beat of four 128-bit scatter entries (the list's shifts and the
// `<< 6` of its ring address), each entry's bus address 64 bits of `sg_iova`.
const _: () = assert!(
    rnic_spec::desc::RECV_WQE_BYTES == 64
        && rnic_spec::desc::RECV_SGES == 4
        && rnic_spec::desc::off::RWQE_SGE_BYTES == 16
        && rnic_spec::desc::off::RWQE_ADDR == 0
);
// The pool is addressed from the RX state RAM's output with a literal offset;
// window halves are 128 bits.
const _: () = assert!(RXS_SR_WIN_BIT == 225 && SR_POOL_LOG2 == 6 && SR_WINDOW_BITS == 128);

impl Logic for Responder {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, rstq, freeq, armq, swq);
        self.rstq.reset.next = self.reset.val();
        self.freeq.reset.next = self.reset.val();
        self.armq.reset.next = self.reset.val();
        self.swq.reset.next = self.reset.val();
        self.pool.read_clock.next = self.clock.val();
        self.pool.write_clock.next = self.clock.val();
        self.pool.clear.next = self.scrub.val();
        self.pool.clear_address.next = self.scrub_addr.val().get_bits::<SR_POOL_LOG2>(0);
        self.side.read_clock.next = self.clock.val();
        self.occ.read_clock.next = self.clock.val();
        self.occ.write_clock.next = self.clock.val();
        self.occ.clear.next = self.scrub.val();
        self.occ.clear_address.next = self.scrub_addr.val().get_bits::<OCC_LOG2>(0);
        self.occ.read_address.next = self.du.dqpn.val().get_bits::<OCC_LOG2>(0);
        self.ocu.pword.next = self.occ.read_data.val();
        self.occ.write_enable.next = false;
        self.occ.write_address.next = self.du.dqpn.val().get_bits::<OCC_LOG2>(0);
        self.occ.write_data.next = self.ocp.pword.val();
        self.side.write_clock.next = self.clock.val();
        self.rstq.write.next = self.rst_valid.val();
        self.rstq.data_in.next = self.rst_data.val();
        self.rstq.read.next = false;
        self.armq.write.next = self.arm_write.val();
        self.armq.data_in.next = self.arm_data.val();
        self.armq.read.next = false;
        self.arm_full.next = self.armq.full.val();
        self.armu.pword.next = self.arm_word.q.val();
        self.swq.write.next = self.swc_valid.val() & !self.swq.full.val();
        self.swq.data_in.next = self.swc_data.val();
        self.swq.read.next = false;
        self.swc_drop.next = self.swc_valid.val() & self.swq.full.val();
        self.swu.pword.next = self.sw_word.q.val();
        dff_setup!(
            self,
            clock,
            rd_npkts_q,
            d_peer_ok,
            d_rd_behind,
            d_rd_ahead,
            d_rsp_len_bad,
            d_psn_behind,
            d_psn_ahead,
            d_sw_take,
            d_sw_in_run,
            d_sr_ok,
            d_placed,
            d_pool_avail,
            d_rsn_posted,
            d_inv_req,
            d_rnr_imm,
            msg_start,
            off64_q,
            tail_k_q,
            sp_k_q,
            rw_key_q,
            rw_room_q,
            rd_ok_q,
            rsp_ok_q,
            wr_ok_q,
            mr_q,
            rd_k_q,
            pkt_k_q,
            rw_k_q,
            msg_k_q,
            rd_rcv_q,
            rd_last_q,
            swc_ok_q,
            swc_exit_q,
            rst_word,
            init_n,
            win,
            state,
            rx_desc,
            qpc,
            rs,
            rq_pi,
            sq_pi,
            rp,
            end_ptr,
            dest,
            left,
            syn,
            rwqe,
            send_off,
            need_cqe,
            ooo,
            placed,
            slid,
            nak_after_cqe,
            cq_num,
            c_idx,
            c_status,
            c_op,
            c_len,
            c_qpn,
            c_imm,
            c_flags,
            arm_word,
            rd_dup,
            slide_cont,
            rsp_dup,
            sp_iova,
            sp_len,
            lst,
            sg_i,
            sg_iova,
            lc_valid,
            lc_qpn,
            lc_rsn,
            sg_tot,
            sg_skip,
            sg_len,
            sg_left,
            sg_lane,
            lent,
            sw_word,
            sw,
            sw_rep,
            rep_kind,
            rep_flags,
            rep_psn,
            rep_off,
            rep_qpn
        );
        self.rd_npkts_q.reset.next = self.reset.val();
        self.rst_word.reset.next = self.reset.val();
        self.init_n.reset.next = self.reset.val();
        self.win.reset.next = self.reset.val();
        self.state.reset.next = self.reset.val();
        self.rx_desc.reset.next = self.reset.val();
        self.qpc.reset.next = self.reset.val();
        self.rs.reset.next = self.reset.val();
        self.rq_pi.reset.next = self.reset.val();
        self.sq_pi.reset.next = self.reset.val();
        self.rp.reset.next = self.reset.val();
        self.d_peer_ok.reset.next = self.reset.val();
        self.d_rd_behind.reset.next = self.reset.val();
        self.d_rd_ahead.reset.next = self.reset.val();
        self.d_rsp_len_bad.reset.next = self.reset.val();
        self.d_psn_behind.reset.next = self.reset.val();
        self.d_psn_ahead.reset.next = self.reset.val();
        self.d_sw_take.reset.next = self.reset.val();
        self.d_sw_in_run.reset.next = self.reset.val();
        self.d_sr_ok.reset.next = self.reset.val();
        self.d_placed.reset.next = self.reset.val();
        self.d_pool_avail.reset.next = self.reset.val();
        self.d_rsn_posted.reset.next = self.reset.val();
        self.d_inv_req.reset.next = self.reset.val();
        self.d_rnr_imm.reset.next = self.reset.val();
        self.msg_start.reset.next = self.reset.val();
        self.off64_q.reset.next = self.reset.val();
        self.tail_k_q.reset.next = self.reset.val();
        self.sp_k_q.reset.next = self.reset.val();
        self.rw_key_q.reset.next = self.reset.val();
        self.rw_room_q.reset.next = self.reset.val();
        self.rd_ok_q.reset.next = self.reset.val();
        self.rsp_ok_q.reset.next = self.reset.val();
        self.wr_ok_q.reset.next = self.reset.val();
        self.mr_q.reset.next = self.reset.val();
        self.rd_k_q.reset.next = self.reset.val();
        self.pkt_k_q.reset.next = self.reset.val();
        self.rw_k_q.reset.next = self.reset.val();
        self.msg_k_q.reset.next = self.reset.val();
        self.rd_rcv_q.reset.next = self.reset.val();
        self.rd_last_q.reset.next = self.reset.val();
        self.swc_ok_q.reset.next = self.reset.val();
        self.swc_exit_q.reset.next = self.reset.val();
        self.end_ptr.reset.next = self.reset.val();
        self.dest.reset.next = self.reset.val();
        self.left.reset.next = self.reset.val();
        self.syn.reset.next = self.reset.val();
        self.rwqe.reset.next = self.reset.val();
        self.send_off.reset.next = self.reset.val();
        self.need_cqe.reset.next = self.reset.val();
        self.ooo.reset.next = self.reset.val();
        self.placed.reset.next = self.reset.val();
        self.slid.reset.next = self.reset.val();
        self.nak_after_cqe.reset.next = self.reset.val();
        self.cq_num.reset.next = self.reset.val();
        self.c_idx.reset.next = self.reset.val();
        self.c_status.reset.next = self.reset.val();
        self.c_op.reset.next = self.reset.val();
        self.c_len.reset.next = self.reset.val();
        self.c_qpn.reset.next = self.reset.val();
        self.c_imm.reset.next = self.reset.val();
        self.c_flags.reset.next = self.reset.val();
        self.arm_word.reset.next = self.reset.val();
        self.rd_dup.reset.next = self.reset.val();
        self.slide_cont.reset.next = self.reset.val();
        self.rsp_dup.reset.next = self.reset.val();
        self.sp_iova.reset.next = self.reset.val();
        self.sp_len.reset.next = self.reset.val();
        self.lst.reset.next = self.reset.val();
        self.sg_i.reset.next = self.reset.val();
        self.sg_iova.reset.next = self.reset.val();
        self.lc_valid.reset.next = self.reset.val();
        self.lc_qpn.reset.next = self.reset.val();
        self.lc_rsn.reset.next = self.reset.val();
        self.sg_tot.reset.next = self.reset.val();
        self.sg_skip.reset.next = self.reset.val();
        self.sg_len.reset.next = self.reset.val();
        self.sg_left.reset.next = self.reset.val();
        self.sg_lane.reset.next = self.reset.val();
        self.lent.reset.next = self.reset.val();
        self.sw_word.reset.next = self.reset.val();
        self.sw.reset.next = self.reset.val();
        self.sw_rep.reset.next = self.reset.val();
        self.rep_kind.reset.next = self.reset.val();
        self.rep_flags.reset.next = self.reset.val();
        self.rep_psn.reset.next = self.reset.val();
        self.rep_off.reset.next = self.reset.val();
        self.rep_qpn.reset.next = self.reset.val();
        self.du.pword.next = self.rx_desc.q.val();
        self.qv.word.next = self.qpc.q.val();
        self.rsu.pword.next = self.rs.q.val();
        self.mv.word.next = self.mr_data.val();
        self.mr_q.d.next = self.mr_data.val();
        self.mq.word.next = self.mr_q.q.val();
        self.rv.word.next = self.rwqe.q.val();
        // Field-wise edits of the RX state start from the current word.
        self.rsp.epsn.next = self.rsu.epsn.val();
        self.rsp.msn.next = self.rsu.msn.val();
        self.rsp.rq_ci.next = self.rsu.rq_ci.val();
        self.rsp.rwqe_valid.next = self.rsu.rwqe_valid.val();
        self.rsp.in_msg.next = self.rsu.in_msg.val();
        self.rsp.in_write.next = self.rsu.in_write.val();
        self.rsp.resp_err.next = self.rsu.resp_err.val();
        self.rsp.msg_pkts.next = self.rsu.msg_pkts.val();
        self.rsp.rwqe_lkey.next = self.rsu.rwqe_lkey.val();
        self.rsp.rd_jseq.next = self.rsu.rd_jseq.val();
        self.rsp.sr_hold.next = self.rsu.sr_hold.val();
        self.rsp.rwqe_iova.next = self.rsu.rwqe_iova.val();
        self.rsp.rwqe_len.next = self.rsu.rwqe_len.val();
        self.rsp.rd_on.next = self.rsu.rd_on.val();
        self.rsp.rd_psn.next = self.rsu.rd_psn.val();
        self.rsp.rd_end.next = self.rsu.rd_end.val();
        self.rsp.rd_jend.next = self.rsu.rd_jend.val();
        self.rsp.rd_jv.next = self.rsu.rd_jv.val();
        self.rsp.sr_win_valid.next = self.rsu.sr_win_valid.val();
        self.rsp.sr_win.next = self.rsu.sr_win.val();
        self.rsp.sw_on.next = self.rsu.sw_on.val();
        self.rsp.sw_left.next = self.rsu.sw_left.val();
        self.rsp.sw_right.next = self.rsu.sw_right.val();
        self.rsp.sw_ends.next = self.rsu.sw_ends.val();
        self.rsp.sw_rpk.next = self.rsu.sw_rpk.val();
        self.rsp.sw_rsend.next = self.rsu.sw_rsend.val();
        self.rsp.sw_gen.next = self.rsu.sw_gen.val();
        self.rsp.ooo_n.next = self.rsu.ooo_n.val();
        self.rsp.bytes_rx.next = self.rsu.bytes_rx.val();
        // Selective repeat's pool: the window of the QP whose RX state the RAM shows.
        self.pool.read_address.next = self.rxs_data.val().get_bits::<SR_POOL_LOG2>(225);
        self.pool.write_enable.next = false;
        self.pool.write_address.next = self.rsu.sr_win.val();
        self.wu.pword.next = self.win.q.val();
        self.wp.rcv.next = self.wu.rcv.val();
        self.wp.last.next = self.wu.last.val();
        self.pool.write_data.next = self.wp.pword.val();
        self.sdu.pword.next = self.side.read_data.val();
        self.side.write_enable.next = false;
        self.side.write_address.next = (bit_cast::<SIDE_LOG2, SR_POOL_LOG2>(self.rsu.sr_win.val()) << 7)
            | bit_cast::<SIDE_LOG2, 7>(self.du.psn.val().get_bits::<7>(0));
        self.side.write_data.next = self.sdp.pword.val();
        self.pool_rcv.next = 0.into();
        if self.rsu.sr_win_valid.val().any() {
            self.pool_rcv.next = self.pool.read_data.val().get_bits::<SR_WINDOW_BITS>(0);
        }
        // The free list: every window after power-up, then each returned one.
        self.freeq.read.next = false;
        self.freeq.write.next = false;
        self.freeq.data_in.next = self.rsu.sr_win.val();
        if self.init_n.q.val() < self.pool_n.val() {
            self.freeq.write.next = true;
            self.freeq.data_in.next = self.init_n.q.val().get_bits::<SR_POOL_LOG2>(0);
            self.init_n.d.next = self.init_n.q.val() + 1;
        }
        // Request classification.
        self.op.next = self.du.opcode.val();
        self.is_imm.next = (self.op.val() == self.op_send_last_imm.val())
            | (self.op.val() == self.op_send_only_imm.val())
            | (self.op.val() == self.op_write_last_imm.val())
            | (self.op.val() == self.op_write_only_imm.val());
        self.is_send.next = (self.op.val() == self.op_send_first.val())
            | (self.op.val() == self.op_send_middle.val())
            | (self.op.val() == self.op_send_last.val())
            | (self.op.val() == self.op_send_only.val())
            | (self.op.val() == self.op_send_last_imm.val())
            | (self.op.val() == self.op_send_only_imm.val());
        self.is_write.next = (self.op.val() == self.op_write_first.val())
            | (self.op.val() == self.op_write_middle.val())
            | (self.op.val() == self.op_write_last.val())
            | (self.op.val() == self.op_write_only.val())
            | (self.op.val() == self.op_write_last_imm.val())
            | (self.op.val() == self.op_write_only_imm.val());
        self.is_read_req.next = self.op.val() == self.op_read_req.val();
        self.is_rsp.next = (self.op.val() == self.op_rsp_first.val())
            | (self.op.val() == self.op_rsp_middle.val())
            | (self.op.val() == self.op_rsp_last.val())
            | (self.op.val() == self.op_rsp_only.val());
        self.rsp_last.next = (self.op.val() == self.op_rsp_last.val()) | (self.op.val() == self.op_rsp_only.val());
        self.rd_diff.next = self.du.psn.val() - self.rsu.rd_psn.val();
        self.rd_psn_next.next = self.rsu.rd_psn.val() + 1;
        self.arm_ahead.next = self.armu.psn_end.val() - self.rsu.rd_end.val();
        self.psn_next.next = self.du.psn.val() + 1;
        self.is_first.next = self.is_read_req.val()
            | (self.op.val() == self.op_send_first.val())
            | (self.op.val() == self.op_send_only.val())
            | (self.op.val() == self.op_send_only_imm.val())
            | (self.op.val() == self.op_write_first.val())
            | (self.op.val() == self.op_write_only.val())
            | (self.op.val() == self.op_write_only_imm.val());
        self.is_last.next = self.is_read_req.val()
            | (self.op.val() == self.op_send_last.val())
            | (self.op.val() == self.op_send_only.val())
            | (self.op.val() == self.op_write_last.val())
            | (self.op.val() == self.op_write_only.val())
            | self.is_imm.val();
        self.psn_diff.next = self.du.psn.val() - self.rsu.epsn.val();
        // Ring beats of the frame after the two header beats (payload + pad + ICRC), as stored.
        self.nbeats.next = bit_cast::<10, 7>(self.du.nbeats.val());
        self.plen64.next = bit_cast::<64, 13>(self.du.plen.val());
        self.key_ok.next = self.mv.valid.val().any() & (self.mv.pd.val() == self.qv.pd.val());
        self.key_okq.next = self.mq.valid.val().any() & (self.mq.pd.val() == self.qv.pd.val());
        self.rkey_ok.next = self.key_okq.val()
            & ((self.mq.key_tag.val() ^ self.rkey_flip.val()) == self.du.rkey.val().get_bits::<8>(0))
            & (self.du.rkey.val().get_bits::<16>(16) == 0);
        self.echo_ok.next = self.key_okq.val()
            & (self.mq.key_tag.val() == self.du.rkey.val().get_bits::<8>(0))
            & (self.du.rkey.val().get_bits::<16>(16) == 0);
        self.va_in_mr.next = self.du.va.val() >= self.mq.va_base.val();
        // Only the QP's peer may talk to it.
        self.peer_ok.next =
            (self.du.src_mac.val() == self.qv.dest_mac.val()) & (self.du.src_ip.val() == self.qv.dest_ip.val());
        // An in-sequence request must continue what came before and fit the
        // message its RETH announces: FIRST/ONLY only between messages,
        // MIDDLE/LAST only inside one of the same kind, full-PMTU packets but
        // the last, PSN_OFFSET = packets of this message so far, and the
        // bytes up to here within (at LAST: equal to) the message length.
        self.pmtu64.next = bits::<64>(1) << bit_cast::<64, 4>(self.qv.pmtu_log2.val());
        self.off64.next = self.off64_q.q.val();
        self.msg_len64.next = bit_cast::<64, 32>(self.du.msg_len.val());
        // Each bounds check is one sum (a carry-save stage and one carry chain), not a subtract feeding
        // compares; the terms known before the MR word (du holds from Look on, the receive WQE from
        // RwqeMr, msg_start from Look2) are summed a cycle or more ahead. Each sum starts with a term
        // of its own: Yosys would otherwise share va_base + length among them as one adder and chain
        // every sum's carry-save stage behind it.
        self.rd_k_q.d.next =
            bits::<66>(0) - bit_cast::<66, 64>(self.msg_len64.val()) - bit_cast::<66, 64>(self.du.va.val());
        self.pkt_k_q.d.next =
            bits::<66>(0) - bit_cast::<66, 64>(self.plen64.val()) - bit_cast::<66, 64>(self.du.va.val());
        self.rw_k_q.d.next =
            bits::<66>(0) - bit_cast::<66, 32>(self.sv.length.val()) - bit_cast::<66, 64>(self.sv.addr.val());
        self.msg_k_q.d.next =
            bits::<66>(0) - bit_cast::<66, 64>(self.msg_start.q.val()) - bit_cast::<66, 64>(self.msg_len64.val());
        self.rd_room.next =
            self.rd_k_q.q.val() + bit_cast::<66, 64>(self.mq.length.val()) + bit_cast::<66, 64>(self.mq.va_base.val());
        self.pkt_room.next =
            self.pkt_k_q.q.val() + bit_cast::<66, 64>(self.mq.length.val()) + bit_cast::<66, 64>(self.mq.va_base.val());
        self.rw_room.next =
            self.rw_k_q.q.val() + bit_cast::<66, 64>(self.mq.length.val()) + bit_cast::<66, 64>(self.mq.va_base.val());
        // The message's first byte, modulo 2^64 as the requester computes a
        // packet's VA: a message ending exactly at 2^64 has its zero-length
        // LAST at VA 0. Registered: du and the PMTU hold from Look on.
        self.msg_start.d.next = self.du.va.val() - self.off64.val();
        self.msg_room.next =
            self.msg_k_q.q.val() + bit_cast::<66, 64>(self.mq.length.val()) + bit_cast::<66, 64>(self.mq.va_base.val());
        self.msg_lo.next = bit_cast::<66, 64>(self.msg_start.q.val()) - bit_cast::<66, 64>(self.mq.va_base.val());
        // The checks of RdMrChk, RspMrChk and WrMrChk, registered in the state before (mq holds from Look3 on).
        self.rd_ok_q.d.next = (self.du.msg_len.val() == 0)
            | (self.rkey_ok.val()
                & self.mq.access.val().get_bit(2)
                & self.va_in_mr.val()
                & !self.rd_room.val().get_bit(65));
        self.rsp_ok_q.d.next = (self.du.plen.val() == 0)
            | (self.echo_ok.val()
                & self.mq.access.val().get_bit(0)
                & self.va_in_mr.val()
                & !self.pkt_room.val().get_bit(65));
        self.wr_ok_q.d.next = self.rkey_ok.val()
            & self.mq.access.val().get_bit(1)
            & !self.msg_lo.val().get_bit(65)
            & !self.msg_room.val().get_bit(65);
        self.va_iova.next = self.mq.iova_base.val() + self.du.va.val() - self.mq.va_base.val();
        self.rw_iova.next = self.mq.iova_base.val() + self.sv.addr.val() - self.mq.va_base.val();
        self.msg_tail.next = self.tail_k_q.q.val() - bit_cast::<41, 13>(self.du.plen.val());
        self.sp_k_q.d.next = bits::<41>(0)
            - bit_cast::<41, 40>(self.off64.val().get_bits::<40>(0))
            - bit_cast::<41, 13>(self.du.plen.val());
        self.sp_tail.next = bit_cast::<41, 32>(self.sp_len.q.val()) + self.sp_k_q.q.val();
        self.rsp_len_bad.next = (self.plen64.val() > self.pmtu64.val())
            | ((!self.rsp_last.val()) & (self.plen64.val() != self.pmtu64.val()))
            | self.msg_tail.val().get_bit(40)
            | (self.rsp_last.val() & (self.msg_tail.val() != 0));
        // A WRITE packet's message starts PSN_OFFSET x PMTU before its own VA;
        // the whole message must fit the MR, so a WRITE that would run past it
        // is refused at its FIRST packet, before any byte lands.
        self.inv_req.next = false;
        self.len_inv.next = false;
        if self.is_first.val() {
            if self.rsu.in_msg.val().any() {
                self.inv_req.next = true;
            }
            if self.du.psn_offset.val() != 0 {
                self.len_inv.next = true;
            }
        } else if (!self.rsu.in_msg.val().any())
            | (self.rsu.in_write.val().any() != self.is_write.val())
            | (self.du.psn_offset.val() != self.rsu.msg_pkts.val())
        {
            self.inv_req.next = true;
        }
        // The checks a packet passes on its own (those above need its
        // predecessors): an out-of-order packet is placed only if it passes them.
        if (self.plen64.val() > self.pmtu64.val()) | ((!self.is_last.val()) & (self.plen64.val() != self.pmtu64.val()))
        {
            self.len_inv.next = true;
        }
        if self.msg_tail.val().get_bit(40) {
            self.len_inv.next = true;
        }
        if self.is_last.val() & (self.msg_tail.val() != 0) {
            self.len_inv.next = true;
        }
        // A READ request carries no payload; its RETH length may be anything (the MR check bounds it).
        if self.is_read_req.val() {
            self.len_inv.next = self.du.plen.val() != 0;
        }
        if self.len_inv.val() {
            self.inv_req.next = true;
        }
        // A READ's response has a packet per PMTU of its length, and at least one.
        self.rd_quot.next = self.du.msg_len.val() >> bit_cast::<32, 4>(self.qv.pmtu_log2.val());
        self.rd_rem.next =
            (self.du.msg_len.val() & !(self.ones32.val() << bit_cast::<32, 4>(self.qv.pmtu_log2.val()))).any();
        self.rd_npkts.next = self.rd_quot.val().get_bits::<24>(0) + bit_cast::<24, 1>(self.rd_rem.val().into());
        if self.du.msg_len.val() == 0 {
            self.rd_npkts.next = 1.into();
        }
        self.rd_npkts_q.d.next = self.rd_npkts.val();
        self.rd_rcv_q.d.next = self.wu.rcv.val() >> bit_cast::<SR_WINDOW_BITS, 24>(self.rd_npkts_q.q.val());
        self.rd_last_q.d.next = self.wu.last.val() >> bit_cast::<SR_WINDOW_BITS, 24>(self.rd_npkts_q.q.val());
        // Selective repeat: a WRITE or SEND packet inside the window ahead of
        // ePSN may be placed out of order; `sr_bit` is its window bit.
        self.in_window.next = self.psn_diff.val() <= self.sr_window.val();
        self.sr_bit.next = bits::<SR_WINDOW_BITS>(1) << bit_cast::<SR_WINDOW_BITS, 24>(self.psn_diff.val());
        self.sr_ok.next = self.qv.sr_en.val().any()
            & !self.rsu.sr_hold.val().any()
            & self.in_window.val()
            & (self.is_write.val() | self.is_send.val())
            & !self.len_inv.val();
        self.pool_avail.next = (!self.freeq.empty.val())
            & (self.lent.q.val() < self.pool_n.val())
            & (self.sr_pool_hold.val() < (self.pool_n.val() - self.lent.q.val()));
        self.rsn_posted.next = (self.du.rsn.val() - self.rsu.rq_ci.val()) < (self.rq_pi.q.val() - self.rsu.rq_ci.val());
        // Software recovery: the QP's run of placed PSNs, and whether this packet may join it.
        self.sw_ld.next = self.du.psn.val() - self.rsu.sw_left.val();
        self.sw_rl.next = self.rsu.sw_right.val() - self.rsu.sw_left.val();
        self.sw_past.next = self.rsu.sw_right.val() + 1;
        self.sw_rd.next = self.du.psn.val() - self.sw_past.val();
        self.sw_new.next = (!self.rsu.sw_on.val().any()) | ((self.sw_rd.val() != 0) & !self.sw_rd.val().get_bit(23));
        self.sw_in_run.next = self.rsu.sw_on.val().any() & (self.sw_ld.val() <= self.sw_rl.val());
        self.sw_take.next = self.qv.sr_en.val().any()
            & !self.rsu.sr_hold.val().any()
            & (self.psn_diff.val() < self.sw_span.val())
            & ((self.is_write.val() & !self.is_imm.val())
                | (self.is_send.val() & !self.is_last.val() & self.rsn_posted.val()))
            & !self.len_inv.val()
            & !self.rsu.sr_win_valid.val().any()
            & (self.rsu.sw_on.val().any() | !self.pool_avail.val());
        self.swc_rel.next = self.swu.to.val() - self.swu.from.val();
        self.swc_lim.next = self.rsu.sw_left.val() - self.swu.from.val();
        // Registered every cycle; `SwApply` reads them from `SwChk`, where rs and the command word hold.
        self.swc_ok_q.d.next = self.rsu.sw_on.val().any()
            & (self.swu.gen.val() == self.rsu.sw_gen.val())
            & (self.rsu.epsn.val() == self.swu.from.val())
            & (self.swc_rel.val() != 0)
            & (self.swc_rel.val() <= self.swc_lim.val())
            & !self.swc_lim.val().get_bit(23);
        self.swc_exit_q.d.next = self.swu.to.val() == self.rsu.sw_left.val();
        self.sw_ack_psn.next = self.rsu.epsn.val() - 1;
        self.acc_io.next = false;
        self.rsn_cached.next = self.rsu.in_msg.val().any()
            & self.rsu.rwqe_valid.val().any()
            & (self.du.rsn.val() == self.rsu.rq_ci.val())
            & !self.is_first.val();
        self.fin_cqe.next = (self.is_send.val() & self.is_last.val()) | (self.is_write.val() & self.is_imm.val());
        self.key_ok_cached.next = self.key_ok.val()
            & (self.mv.key_tag.val() == self.rsu.rwqe_lkey.val().get_bits::<8>(0))
            & self.mv.access.val().get_bit(0);
        self.oc_hit.next = self.ocu.valid.val().any()
            & (self.ocu.qpn.val() == self.du.dqpn.val().get_bits::<QPN_BITS>(0))
            & (self.ocu.rsn.val() == self.du.rsn.val());
        self.key_ok_oc.next = self.key_ok.val()
            & (self.mv.key_tag.val() == self.ocu.lkey.val().get_bits::<8>(0))
            & self.mv.access.val().get_bit(0);
        self.sdp.cmp.next = (self.is_last.val() & (self.is_send.val() | self.is_imm.val())).into();
        self.sdp.send.next = self.is_send.val().into();
        self.sdp.wimm.next = (self.is_write.val() & self.is_imm.val()).into();
        self.sdp.with_imm.next = self.is_imm.val().into();
        self.sdp.len.next = self.du.msg_len.val();
        if self.is_send.val() {
            self.sdp.len.next = self.send_off.q.val() + bit_cast::<32, 13>(self.du.plen.val());
        }
        self.sdp.imm.next = 0.into();
        if self.is_imm.val() {
            self.sdp.imm.next = self.du.imm.val();
        }
        self.ocp.valid.next = 0.into();
        self.ocp.qpn.next = self.du.dqpn.val().get_bits::<QPN_BITS>(0);
        self.ocp.rsn.next = self.du.rsn.val();
        self.ocp.iova.next = self.rw_iova.val();
        self.ocp.len.next = self.rv.length.val();
        self.ocp.lkey.next = self.rv.lkey.val();
        self.rq_mask_of.log2.next = self.qv.rq_log2.val();
        self.rq_mask.next = self.rq_mask_of.mask.val();
        self.chunk.next = 64.into();
        if self.left.q.val() < 64 {
            self.chunk.next = self.left.q.val();
        }
        self.is_list.next = (self.rv.length1.val() | self.rv.length2.val() | self.rv.length3.val()).any();
        self.sg_tot_nx.next = self.sg_tot.q.val() + bit_cast::<34, 32>(self.sv.length.val());
        self.sel_sh.next = self.rwqe.q.val() >> (bit_cast::<10, 2>(self.sg_i.q.val()) << 7);
        self.sel.next = self.sel_sh.val().get_bits::<128>(0);
        self.sv.word.next = self.sel.val();
        self.iova_sh.next = self.sg_iova.q.val() >> (bit_cast::<9, 2>(self.sg_i.q.val()) << 6);
        self.sel_iova.next = self.iova_sh.val().get_bits::<64>(0);
        self.sg_len.d.next = self.sv.length.val();
        self.sg_i1.next = self.sg_i.q.val() + 1;
        self.sg_len_nx.next = self.rv.length.val();
        if self.sg_i1.val() == 1 {
            self.sg_len_nx.next = self.rv.length1.val();
        }
        if self.sg_i1.val() == 2 {
            self.sg_len_nx.next = self.rv.length2.val();
        }
        if self.sg_i1.val() == 3 {
            self.sg_len_nx.next = self.rv.length3.val();
        }
        self.skip_d.next = bit_cast::<33, 32>(self.sg_skip.q.val()) - bit_cast::<33, 32>(self.sg_len.q.val());
        self.rsn_need.next = self.rsu.rq_ci.val();
        if self.ooo.q.val() {
            self.rsn_need.next = self.du.rsn.val();
        }
        self.lc_hit.next = self.lc_valid.q.val()
            & (self.lc_qpn.q.val() == self.du.dqpn.val().get_bits::<QPN_BITS>(0))
            & (self.lc_rsn.q.val() == self.rsn_need.val());
        // The smallest of the three from three compares side by side (not chained), then one pick.
        self.sg_room.next = bits::<16>(64) - bit_cast::<16, 6>(self.sg_lane.q.val());
        self.dest_r.next = self.dest.q.val() + bit_cast::<64, 16>(self.sg_room.val());
        self.dest_l.next = self.dest.q.val() + bit_cast::<64, 16>(self.left.q.val());
        self.dest_s.next = self.dest.q.val() + bit_cast::<64, 16>(self.sg_left.q.val().get_bits::<16>(0));
        self.left_r.next = bit_cast::<17, 16>(self.left.q.val()) - bit_cast::<17, 16>(self.sg_room.val());
        self.left_s.next = self.left.q.val() - self.sg_left.q.val().get_bits::<16>(0);
        self.sgl_r.next = bit_cast::<33, 32>(self.sg_left.q.val()) - bit_cast::<33, 16>(self.sg_room.val());
        self.sgl_l.next = bit_cast::<33, 32>(self.sg_left.q.val()) - bit_cast::<33, 16>(self.left.q.val());
        self.sg_lt_rl.next = self.left_r.val().get_bit(16);
        self.sg_lt_rs.next = self.sgl_r.val().get_bit(32);
        self.sg_lt_ls.next = self.sgl_l.val().get_bit(32);
        self.sg_is_l.next = self.sg_lt_rl.val() & !self.sg_lt_ls.val();
        self.sg_is_s.next = self.sg_lt_rs.val() & self.sg_lt_ls.val();
        self.m_r.next = 0xFFFF_FFFF_FFFF_FFFFu64.into();
        self.m_l.next = 0.into();
        self.m_s.next = 0.into();
        if self.sg_is_l.val() {
            self.m_r.next = 0.into();
            self.m_l.next = 0xFFFF_FFFF_FFFF_FFFFu64.into();
        }
        if self.sg_is_s.val() {
            self.m_r.next = 0.into();
            self.m_l.next = 0.into();
            self.m_s.next = 0xFFFF_FFFF_FFFF_FFFFu64.into();
        }
        self.sg_dest.next = (self.dest_r.val() & self.m_r.val())
            | (self.dest_l.val() & self.m_l.val())
            | (self.dest_s.val() & self.m_s.val());
        self.sg_w.next = self.sg_room.val();
        // Picked by the masks too: a mux of two differences would fold back into one subtract behind the compares.
        self.left_nx.next = (self.left_r.val().get_bits::<16>(0) & self.m_r.val().get_bits::<16>(0))
            | (self.left_s.val() & self.m_s.val().get_bits::<16>(0));
        self.sgl_nx.next = (self.sgl_r.val().get_bits::<32>(0) & self.m_r.val().get_bits::<32>(0))
            | (self.sgl_l.val().get_bits::<32>(0) & self.m_l.val().get_bits::<32>(0));
        self.sg_fin.next = self.left.q.val() == self.sg_room.val();
        if self.sg_is_l.val() {
            self.sg_w.next = self.left.q.val();
            self.sg_fin.next = true;
        }
        if self.sg_is_s.val() {
            self.sg_w.next = self.sg_left.q.val().get_bits::<16>(0);
            self.sg_fin.next = self.left.q.val() == self.sg_left.q.val().get_bits::<16>(0);
        }
        self.end_l.next = bit_cast::<7, 6>(self.sg_lane.q.val()) + self.left.q.val().get_bits::<7>(0);
        self.end_s.next = bit_cast::<7, 6>(self.sg_lane.q.val()) + self.sg_left.q.val().get_bits::<7>(0);
        self.end_64.next = 64.into();
        self.sg_end.next = (self.end_64.val() & self.m_r.val().get_bits::<7>(0))
            | (self.end_l.val() & self.m_l.val().get_bits::<7>(0))
            | (self.end_s.val() & self.m_s.val().get_bits::<7>(0));
        // Ring read pointer: the RAM is addressed with next cycle's pointer.
        self.rp_next.next = self.rp.q.val();
        self.rptr.next = self.rp.q.val();
        // Defaults of ports.
        self.desc_pop.next = false;
        self.qpc_addr.next = self.du.dqpn.val().get_bits::<QPN_BITS>(0);
        self.rxs_addr.next = self.du.dqpn.val().get_bits::<QPN_BITS>(0);
        self.rqpi_addr.next = self.du.dqpn.val().get_bits::<QPN_BITS>(0);
        self.rxs_we.next = false;
        self.rxs_waddr.next = self.du.dqpn.val().get_bits::<QPN_BITS>(0);
        self.rxs_wdata.next = self.rs.q.val();
        self.mr_addr.next = self.du.rkey.val().get_bits::<MR_BITS>(8);
        // An ACK for the ACK receiver.
        self.aw.qpn.next = self.du.dqpn.val().get_bits::<QPN_BITS>(0);
        self.aw.msn.next = self.du.msn.val();
        self.aw.syndrome.next = self.du.syndrome.val();
        self.aw.cqn.next = self.qv.send_cqn.val();
        self.aw.sq_pi.next = self.sq_pi.q.val();
        // An ACK's echoed SSN/PSN_OFFSET and ePSN sit where a request has the
        // RETH VA's low half, the rkey and the timestamp's high half.
        self.aw.psn.next = self.du.psn.val();
        self.aw.epsn.next = self.du.ts.val().get_bits::<24>(32);
        self.aw.ssn.next = self.du.va.val().get_bits::<24>(0);
        self.aw.psn_offset.next = self.du.rkey.val().get_bits::<24>(0);
        // The ACK extension's flags byte sits where a request has PSN_OFFSET's low byte, MSN_PSN where it has the immediate.
        self.aw.flags.next = self.du.psn_offset.val().get_bits::<8>(0) & self.flag_placed.val();
        if self.rsu.rd_on.val().any() {
            self.aw.flags.next =
                (self.du.psn_offset.val().get_bits::<8>(0) & self.flag_placed.val()) | self.flag_hold.val();
        }
        self.aw.msn_psn.next = self.du.imm.val().get_bits::<24>(0);
        // The echoed TX timestamp's low 24 bits sit where a request has its SSN.
        self.aw.ts.next = self.du.ssn.val();
        // The echoed entropy's low byte and the ECN echo sit where a request has PSN_OFFSET's upper two bytes.
        self.aw.entropy.next = self.du.psn_offset.val().get_bits::<8>(16);
        self.aw.ce.next = (self.du.psn_offset.val().get_bits::<8>(8) == self.ecn_ce.val()).into();
        self.aw.fb.next = (!(self.du.psn_offset.val().get_bits::<8>(0) & self.flag_no_echo.val()).any()).into();
        // The SACK's OOO count sits where a request has its RSN, bytes received where a READ request has its lkey.
        self.aw.ooo.next = self.du.rsn.val().get_bits::<12>(0);
        if self.du.rsn.val().get_bits::<4>(12) != 0 {
            self.aw.ooo.next = self.ooo_max.val();
        }
        self.aw.bytes_rx.next = self.du.lkey.val();
        // A READ response packet as an ACK word: the last one completes the
        // READ (RDONE), the others and a gap complete nothing (HOLD); a gap is
        // reported as a PSN sequence NAK at the PSN the READ expects.
        if self.is_rsp.val() {
            self.aw.msn.next = self.du.ssn.val();
            self.aw.syndrome.next = self.syn.q.val();
            self.aw.epsn.next = self.rsu.rd_psn.val();
            self.aw.ssn.next = self.du.ssn.val();
            self.aw.psn_offset.next = self.du.psn_offset.val();
            self.aw.flags.next = self.flag_hold.val();
            self.aw.msn_psn.next = self.du.psn.val() + 1;
            self.aw.ts.next = 0.into();
            self.aw.entropy.next = 0.into();
            self.aw.ce.next = 0.into();
            self.aw.fb.next = 0.into();
            self.aw.ooo.next = 0.into();
            self.aw.bytes_rx.next = 0.into();
            if self.rsp_last.val() & (self.syn.q.val() == self.syn_ack.val()) & !self.rsp_dup.q.val() {
                self.aw.msn.next = self.du.ssn.val() + 1;
                self.aw.flags.next = self.flag_rdone.val();
                if self.psn_next.val() == self.rsu.rd_end.val() {
                    self.aw.flags.next = self.flag_rdone.val() | self.flag_rdend.val();
                }
            }
        }
        self.ackr_data.next = self.aw.pword.val();
        self.ackr_valid.next = false;
        // A READ response job: the request's PSN and SSN, a WQE naming our memory and the requester's.
        self.jwqe.opcode.next = self.send_op_read_resp.val();
        // The job's sequence number rides in the WQE's flags byte; the send path drops a job that is not the QP's newest.
        // Only a restart (a resent READ, behind the newest job's end) moves
        // it: the jobs of READs in flight together stay valid together, and
        // each one that starts where the previous ends is marked to follow it.
        self.rd_jdist.next = self.du.psn.val() - self.rsu.rd_jend.val();
        self.rd_restart.next = self.rsu.rd_jv.val().any() & self.rd_jdist.val().get_bit(23);
        self.rd_follows.next = self.rsu.rd_jv.val().any() & (self.rd_jdist.val() == 0);
        self.jseq_next.next = self.rsu.rd_jseq.val();
        if self.rd_restart.val() {
            self.jseq_next.next = self.rsu.rd_jseq.val() + 1;
        }
        self.jwqe.flags.next = bit_cast::<8, 3>(self.jseq_next.val());
        if self.rd_follows.val() {
            self.jwqe.flags.next = bit_cast::<8, 3>(self.jseq_next.val()) | self.job_follows.val();
        }
        self.jseq_we.next = false;
        self.jseq_waddr.next = self.du.dqpn.val().get_bits::<QPN_BITS>(0);
        self.jseq_wdata.next = self.jseq_next.val();
        self.jwqe.rsvd0.next = 0.into();
        self.jwqe.length.next = self.du.msg_len.val();
        self.jwqe.local_addr.next = self.du.va.val();
        // The job reads our memory through the MR's lkey (the rkey checked, its tag bit flipped back).
        self.jwqe.lkey.next = self.du.rkey.val() ^ self.rkey_flip32.val();
        self.jwqe.rkey.next = self.du.lkey.val();
        self.jwqe.remote_addr.next = self.du.laddr.val();
        self.jwqe.imm.next = 0.into();
        self.jwqe.rsn.next = 0.into();
        self.jobp.qpn.next = self.du.dqpn.val().get_bits::<QPN_BITS>(0);
        self.jobp.ssn.next = self.du.ssn.val();
        self.jobp.psn.next = self.du.psn.val();
        self.jobp.msg_off.next = 0.into();
        self.jobp.one.next = 1.into();
        self.jobp.wqe.next = self.jwqe.pword.val();
        self.job_data.next = self.jobp.pword.val();
        self.job_write.next = false;
        self.rd_valid.next = false;
        self.rd_addr.next =
            self.qv.rq_base.val() + (bit_cast::<64, 16>(self.rsu.rq_ci.val() & self.rq_mask.val()) << 6);
        if self.ooo.q.val() {
            self.rd_addr.next =
                self.qv.rq_base.val() + (bit_cast::<64, 16>(self.du.rsn.val() & self.rq_mask.val()) << 6);
        }
        self.rwqe_ready.next = false;
        self.wr_valid.next = false;
        self.wr_addr.next = self.dest.q.val();
        self.wr_data.next = self.ring_rdata.val();
        self.wr_len.next = self.chunk.val().get_bits::<7>(0);
        self.wr_lane.next = 0.into();
        self.ack_write.next = false;
        self.cnt_hdr.next = false;
        self.cnt_psn.next = false;
        self.cnt_access.next = false;
        self.cnt_dup.next = false;
        self.cnt_rnr.next = false;
        self.cnt_ack.next = false;
        self.cnt_inv.next = false;
        self.cnt_ooo.next = false;
        self.cnt_sw.next = false;
        self.idle.next = self.state.q.val() == RState::Idle;
        // Completion request (written by the completion writer).
        self.cqr.cqn.next = self.cq_num.q.val();
        self.cqr.idx.next = self.c_idx.q.val();
        self.cqr.status.next = self.c_status.q.val();
        self.cqr.op.next = self.c_op.q.val();
        self.cqr.len.next = self.c_len.q.val();
        self.cqr.qpn.next = self.c_qpn.q.val();
        self.cqr.imm.next = self.c_imm.q.val();
        self.cqr.flags.next = self.c_flags.q.val();
        self.cqr_data.next = self.cqr.pword.val();
        self.cqr_valid.next = false;
        // ACK/NAK descriptor: back to the sender, echoing the request.
        self.ackp.is_ack.next = 1.into();
        self.ackp.dst_mac.next = self.du.src_mac.val();
        self.ackp.dst_ip.next = self.du.src_ip.val();
        self.ackp.sport.next = self.du.sport.val();
        self.ackp.opcode.next = self.op_ack.val();
        self.ackp.dqpn.next = self.qv.remote_qpn.val();
        self.ackp.ack_req.next = 0.into();
        self.ackp.psn.next = self.du.psn.val();
        self.ackp.plen.next = 0.into();
        self.ackp.va.next = 0.into();
        self.ackp.rkey.next = 0.into();
        self.ackp.msg_len.next = 0.into();
        self.ackp.ssn.next = self.du.ssn.val();
        self.ackp.psn_offset.next = self.du.psn_offset.val();
        self.ackp.ts.next = self.du.ts.val();
        self.ackp.syndrome.next = self.syn.q.val();
        self.ackp.msn.next = self.rsu.msn.val();
        self.ackp.epsn.next = self.rsu.epsn.val();
        // Message MSN starts at ePSN, or (half received) as many packets before it as it has.
        self.ackp.msn_psn.next = self.rsu.epsn.val();
        if self.rsu.in_msg.val().any() {
            self.ackp.msn_psn.next = self.rsu.epsn.val() - self.rsu.msg_pkts.val();
        }
        self.ackp.ecn_echo.next = self.du.ecn.val();
        self.ackp.rsn.next = 0.into();
        self.ackp.imm.next = 0.into();
        self.ackp.ack_flags.next = bit_cast::<2, 1>(self.placed.q.val().into());
        self.ackp.laddr.next = 0.into();
        self.ackp.lkey.next = 0.into();
        // SACK: what the responder holds past ePSN, in the 64-bit segment holding the PSN this ACK answers.
        self.ackp.ooo.next = bit_cast::<16, 7>(self.rsu.ooo_n.val());
        self.sw_run.next = self.rsu.sw_right.val() - self.rsu.sw_left.val() + 1;
        if self.rsu.sw_on.val().any() {
            self.ackp.ooo.next = self.sw_run.val().get_bits::<16>(0);
        }
        self.sack_rel.next = self.du.psn.val() - self.rsu.epsn.val();
        self.ackp.sack_base.next = self.rsu.epsn.val();
        self.ackp.sack_bitmap.next = self.wu.rcv.val().get_bits::<64>(0);
        if !self.sack_rel.val().get_bit(23) & (self.sack_rel.val() >= 64) {
            self.ackp.sack_base.next = self.rsu.epsn.val() + 64;
            self.ackp.sack_bitmap.next = self.wu.rcv.val().get_bits::<64>(64);
        }
        self.ackp.bytes_rx.next = self.rsu.bytes_rx.val();
        self.ackp.inl.next = 0.into();
        self.ack_data.next = self.ackp.pword.val();
        // Registered a cycle ahead of Dispatch: each is deep (a PSN or length
        // sum, the PMTU shift, the window's bit) and Dispatch chains them.
        self.d_peer_ok.d.next = self.peer_ok.val();
        self.d_rd_behind.d.next = self.rd_diff.val().get_bit(23);
        self.d_rd_ahead.d.next = self.rd_diff.val() != 0;
        self.d_rsp_len_bad.d.next = self.rsp_len_bad.val();
        self.d_psn_behind.d.next = self.psn_diff.val().get_bit(23);
        self.d_psn_ahead.d.next = self.psn_diff.val() != 0;
        self.d_sw_take.d.next = self.sw_take.val();
        self.d_sw_in_run.d.next = self.sw_in_run.val();
        self.d_sr_ok.d.next = self.sr_ok.val();
        self.rcv_at.next = self.pool_rcv.val() >> bit_cast::<SR_WINDOW_BITS, 7>(self.psn_diff.val().get_bits::<7>(0));
        self.d_placed.d.next = self.rcv_at.val().get_bit(0) & (self.psn_diff.val().get_bits::<17>(7) == 0);
        self.d_pool_avail.d.next = self.pool_avail.val();
        self.d_rsn_posted.d.next = self.rsn_posted.val();
        self.d_inv_req.d.next = self.inv_req.val();
        self.d_rnr_imm.d.next = self.rsu.rq_ci.val() == self.rq_pi.q.val();
        // From the registered MR word: the raw block-RAM output is too late for the 66-bit sum.
        self.rw_key_q.d.next = self.key_okq.val()
            & (self.mq.key_tag.val() == self.sv.lkey.val().get_bits::<8>(0))
            & (self.sv.lkey.val().get_bits::<16>(16) == 0)
            & self.mq.access.val().get_bit(0)
            & (self.sv.addr.val() >= self.mq.va_base.val());
        self.rw_room_q.d.next = !self.rw_room.val().get_bit(65);
        self.rw_ok.next = self.rw_key_q.q.val() & self.rw_room_q.q.val();
        match self.state.q.val() {
            RState::Idle => {
                // Resets may run while the window free list fills at power-up (no QP holds a window yet); frames may not.
                if !self.rstq.empty.val() {
                    self.rstq.read.next = true;
                    self.rst_word.d.next = self.rstq.data_out.val();
                    self.state.d.next = RState::RstLook;
                } else if !self.armq.empty.val() {
                    self.armq.read.next = true;
                    self.arm_word.d.next = self.armq.data_out.val();
                    self.state.d.next = RState::ArmLook;
                } else if !self.swq.empty.val() {
                    self.swq.read.next = true;
                    self.sw_word.d.next = self.swq.data_out.val();
                    self.state.d.next = RState::SwLook;
                } else if (!self.desc_empty.val()) & (self.init_n.q.val() == self.pool_n.val()) {
                    self.rx_desc.d.next = self.desc_data.val();
                    self.desc_pop.next = true;
                    self.state.d.next = RState::Look;
                }
            }
            RState::RstLook => {
                self.rxs_addr.next = self.rst_word.q.val().get_bits::<QPN_BITS>(0);
                self.state.d.next = RState::RstWait;
            }
            RState::RstWait => {
                self.rs.d.next = self.rxs_data.val();
                self.state.d.next = RState::RstApply;
            }
            RState::RstApply => {
                self.lc_valid.d.next = false;
                // Read-modify-write; a requester reset (bit 9) is the ACK
                // receiver's, but for the READ wait kept here.
                if self.rst_word.q.val().get_bit(9) {
                    self.rsp.rd_on.next = 0.into();
                }
                if self.rst_word.q.val().get_bit(8) {
                    // READ response jobs still queued for the QP's previous life are stale.
                    self.rsp.rd_jseq.next = self.rsu.rd_jseq.val() + 1;
                    self.rsp.rd_jv.next = 0.into();
                    self.jseq_we.next = true;
                    self.jseq_waddr.next = self.rst_word.q.val().get_bits::<QPN_BITS>(0);
                    self.jseq_wdata.next = self.rsu.rd_jseq.val() + 1;
                    // The QP's cached WQE (if the entry is another QP's, a miss later).
                    self.occ.write_enable.next = true;
                    self.occ.write_address.next = self.rst_word.q.val().get_bits::<OCC_LOG2>(0);
                    self.rsp.epsn.next = self.rst_word.q.val().get_bits::<24>(10);
                    self.rsp.msn.next = 0.into();
                    self.rsp.rq_ci.next = 0.into();
                    self.rsp.rwqe_valid.next = 0.into();
                    self.rsp.in_msg.next = 0.into();
                    self.rsp.in_write.next = 0.into();
                    self.rsp.resp_err.next = 0.into();
                    self.rsp.msg_pkts.next = 0.into();
                    self.rsp.sr_hold.next = 0.into();
                    self.rsp.sw_on.next = 0.into();
                    // Reports and commands of the QPN's previous life no longer match.
                    self.rsp.sw_gen.next = self.rsu.sw_gen.val() + 1;
                    self.rsp.bytes_rx.next = 0.into();
                    // A window the QP holds goes back to the pool.
                    self.rsp.sr_win_valid.next = 0.into();
                    self.rsp.ooo_n.next = 0.into();
                    if self.rsu.sr_win_valid.val().any() {
                        self.freeq.write.next = true;
                    }
                }
                self.rxs_we.next = true;
                self.rxs_waddr.next = self.rst_word.q.val().get_bits::<QPN_BITS>(0);
                self.rxs_wdata.next = self.rsp.pword.val();
                self.state.d.next = RState::Idle;
            }
            RState::Look => {
                self.end_ptr.d.next = self.du.rptr.val() + self.nbeats.val();
                self.state.d.next = RState::Look2;
            }
            RState::Look2 => {
                self.qpc.d.next = self.qpc_data.val();
                self.rs.d.next = self.rxs_data.val();
                self.rq_pi.d.next = self.rqpi_data.val();
                self.sq_pi.d.next = self.sqpi_data.val();
                self.state.d.next = RState::Look3;
            }
            RState::Look3 => {
                self.state.d.next = RState::Dispatch;
            }
            RState::Dispatch => {
                self.need_cqe.d.next = false;
                self.nak_after_cqe.d.next = false;
                self.ooo.d.next = false;
                self.sw.d.next = false;
                self.sw_rep.d.next = false;
                self.placed.d.next = false;
                self.slid.d.next = false;
                self.slide_cont.d.next = false;
                self.win.d.next = 0.into();
                if self.rsu.sr_win_valid.val().any() {
                    self.win.d.next = self.pool.read_data.val();
                }
                // A SEND's receive-buffer MR is read now and checked again in
                // SendChk on every packet (dereg_mr may have invalidated it).
                if self.is_send.val() {
                    self.mr_addr.next = self.rsu.rwqe_lkey.val().get_bits::<MR_BITS>(8);
                    if self.oc_hit.val() & !self.rsn_cached.val() {
                        self.mr_addr.next = self.ocu.lkey.val().get_bits::<MR_BITS>(8);
                    }
                }
                self.c_qpn.d.next = self.du.dqpn.val().get_bits::<QPN_BITS>(0);
                if (self.du.dqpn.val().get_bits::<QPN_HIGH_BITS>(8) != 0) | !self.d_peer_ok.q.val() {
                    // No such QP, or not from its peer: dropped.
                    self.cnt_hdr.next = true;
                    self.rp_next.next = self.end_ptr.q.val();
                    self.state.d.next = RState::Idle;
                } else if self.op.val() == self.op_ack.val() {
                    self.cnt_ack.next = true;
                    self.rp_next.next = self.end_ptr.q.val();
                    self.state.d.next = RState::AckFwd;
                } else if self.is_rsp.val() {
                    // Our READ's response: only the packet the READ expects next is placed.
                    self.rsp_dup.d.next = false;
                    if !self.rsu.rd_on.val().any() {
                        self.cnt_dup.next = true;
                        self.rp_next.next = self.end_ptr.q.val();
                        self.state.d.next = RState::Idle;
                    } else if self.d_rd_behind.q.val() {
                        // Behind the awaited packet (a READ asked for again from
                        // its start): dropped, but the peer is answering, so it
                        // restarts the QP's timer (a HOLD word, completing nothing).
                        self.cnt_dup.next = true;
                        self.rsp_dup.d.next = true;
                        self.syn.d.next = self.syn_ack.val();
                        self.rp_next.next = self.end_ptr.q.val();
                        self.state.d.next = RState::AckFwd;
                    } else if self.d_rd_ahead.q.val() {
                        // A packet before it was lost: the host rewinds the READ to it.
                        self.cnt_psn.next = true;
                        self.syn.d.next = self.syn_nak_psn_seq.val();
                        self.rp_next.next = self.end_ptr.q.val();
                        self.state.d.next = RState::AckFwd;
                    } else if self.d_rsp_len_bad.q.val() {
                        // Only a packet that fits the READ's length is placed, and only its last ends it.
                        self.cnt_inv.next = true;
                        self.rp_next.next = self.end_ptr.q.val();
                        self.state.d.next = RState::Idle;
                    } else {
                        self.state.d.next = RState::RspMr;
                    }
                } else if (!(self.is_send.val() | self.is_write.val() | self.is_read_req.val()))
                    | (!self.qv.rtr.val().any())
                    | self.rsu.resp_err.val().any()
                {
                    self.cnt_hdr.next = true;
                    self.rp_next.next = self.end_ptr.q.val();
                    self.state.d.next = RState::Idle;
                } else if self.d_psn_behind.q.val() & self.is_read_req.val() {
                    // A READ behind ePSN is answered again (its response was lost); one with payload is not a READ.
                    self.cnt_dup.next = true;
                    self.rd_dup.d.next = true;
                    self.rp_next.next = self.end_ptr.q.val();
                    self.state.d.next = RState::RdMr;
                    if self.du.plen.val() != 0 {
                        self.state.d.next = RState::Idle;
                    }
                } else if self.d_psn_behind.q.val() {
                    // Behind ePSN: a duplicate; re-ACK so the requester moves on.
                    self.cnt_dup.next = true;
                    self.syn.d.next = self.syn_ack.val();
                    self.rp_next.next = self.end_ptr.q.val();
                    self.state.d.next = RState::AckChk;
                } else if self.d_psn_ahead.q.val() {
                    self.cnt_psn.next = true;
                    self.syn.d.next = self.syn_nak_psn_seq.val();
                    self.state.d.next = RState::Nak;
                    if self.d_sw_take.q.val() {
                        if self.d_sw_in_run.q.val() {
                            // In the run placed before: a duplicate, NAKed again as placed.
                            self.cnt_psn.next = false;
                            self.cnt_dup.next = true;
                            self.placed.d.next = true;
                        } else if self.is_send.val() {
                            self.ooo.d.next = true;
                            self.sw.d.next = true;
                            self.state.d.next = RState::SendChk;
                        } else {
                            self.ooo.d.next = true;
                            self.sw.d.next = true;
                            self.mr_addr.next = self.du.rkey.val().get_bits::<MR_BITS>(8);
                            self.state.d.next = RState::WrMr;
                        }
                    } else if self.d_sr_ok.q.val() & !self.rsu.sw_on.val().any() {
                        if self.d_placed.q.val() {
                            // Placed before: a duplicate, NAKed again as placed.
                            self.cnt_psn.next = false;
                            self.cnt_dup.next = true;
                            self.placed.d.next = true;
                        } else if !(self.rsu.sr_win_valid.val().any() | self.d_pool_avail.q.val()) {
                            // No window for this QP and none free (a SEND or WRITE with immediate): NAKed as under go-back-N.
                        } else if (self.is_send.val() | self.is_imm.val()) & !self.d_rsn_posted.q.val() {
                            // Its receive WQE is not posted: not placed (ePSN gets the RNR NAK).
                        } else if self.is_write.val() {
                            self.ooo.d.next = true;
                            self.mr_addr.next = self.du.rkey.val().get_bits::<MR_BITS>(8);
                            self.state.d.next = RState::WrMr;
                        } else {
                            self.ooo.d.next = true;
                            self.state.d.next = RState::SendChk;
                        }
                    }
                } else if self.d_inv_req.q.val() {
                    self.cnt_inv.next = true;
                    self.syn.d.next = self.syn_nak_inv_req.val();
                    self.state.d.next = RState::Nak;
                } else if self.is_write.val() & self.is_imm.val() & self.d_rnr_imm.q.val() {
                    // A WRITE with immediate consumes a receive WQE: none posted, nothing placed.
                    self.cnt_rnr.next = true;
                    self.syn.d.next = self.syn_rnr_nak.val();
                    self.state.d.next = RState::Nak;
                } else if self.is_write.val() {
                    self.mr_addr.next = self.du.rkey.val().get_bits::<MR_BITS>(8);
                    self.state.d.next = RState::WrMr;
                } else if self.is_read_req.val() {
                    self.rd_dup.d.next = false;
                    self.rp_next.next = self.end_ptr.q.val();
                    self.state.d.next = RState::RdMr;
                } else {
                    self.state.d.next = RState::SendChk;
                }
            }
            RState::WrMr => {
                self.state.d.next = RState::WrMrChk;
            }
            RState::ArmLook => {
                self.rxs_addr.next = self.armu.qpn.val();
                self.state.d.next = RState::ArmWait;
            }
            RState::ArmWait => {
                self.rs.d.next = self.rxs_data.val();
                self.state.d.next = RState::ArmApply;
            }
            RState::ArmApply => {
                // The QP waits for READ responses from the READ's PSN on if it
                // is the first (or none is awaited), up to its end or a later
                // one already awaited: a READ resent from a hole is followed by
                // the READs after it again, and until their ends the wait must
                // not end (its end applies the kept MSN, which may cover them).
                self.rsp.rd_on.next = 1.into();
                self.rsp.rd_end.next = self.rsu.rd_end.val();
                if (!self.rsu.rd_on.val().any()) | ((self.arm_ahead.val() != 0) & !self.arm_ahead.val().get_bit(23)) {
                    self.rsp.rd_end.next = self.armu.psn_end.val();
                }
                if self.armu.first.val().any() | !self.rsu.rd_on.val().any() {
                    self.rsp.rd_psn.next = self.armu.psn.val();
                }
                self.rxs_we.next = true;
                self.rxs_waddr.next = self.armu.qpn.val();
                self.rxs_wdata.next = self.rsp.pword.val();
                self.state.d.next = RState::Idle;
            }
            RState::RdMr => {
                self.state.d.next = RState::RdMrChk;
            }
            RState::RdMrChk => {
                // The whole READ must lie in an MR of the QP's PD with REMOTE_READ
                // (a zero-length READ reads nothing: its rkey is not checked).
                if self.rd_ok_q.q.val() {
                    self.state.d.next = RState::RdJob;
                } else if self.rd_dup.q.val() {
                    // A duplicate (counted as one) that fails now: dropped.
                    self.state.d.next = RState::Idle;
                } else {
                    self.cnt_access.next = true;
                    self.syn.d.next = self.syn_nak_rem_access.val();
                    self.state.d.next = RState::Nak;
                }
            }
            RState::RdJob => {
                // The send path answers it like a WRITE of ours (waits while its queue is full).
                if !self.job_full.val() {
                    // A newer job for the QP (a resent READ) makes any older one stale.
                    self.job_write.next = true;
                    self.jseq_we.next = true;
                    self.rsp.rd_jseq.next = self.jseq_next.val();
                    self.rsp.rd_jend.next = self.du.psn.val() + self.rd_npkts_q.q.val();
                    self.rsp.rd_jv.next = 1.into();
                    self.rs.d.next = self.rsp.pword.val();
                    self.state.d.next = RState::RdDone;
                    if self.rd_dup.q.val() {
                        self.rxs_we.next = true;
                        self.rxs_wdata.next = self.rsp.pword.val();
                        self.state.d.next = RState::Idle;
                    }
                }
            }
            RState::RdDone => {
                // ePSN passes the READ's PSNs, MSN counts it; the window moves as far.
                self.acc_io.next = true;
                self.rsp.epsn.next = self.rsu.epsn.val() + self.rd_npkts_q.q.val();
                self.rsp.msn.next = self.rsu.msn.val() + 1;
                self.rsp.in_msg.next = 0.into();
                self.rsp.in_write.next = 0.into();
                self.rsp.msg_pkts.next = 0.into();
                self.rsp.sr_hold.next = 0.into();
                self.wp.rcv.next = self.rd_rcv_q.q.val();
                self.wp.last.next = self.rd_last_q.q.val();
                self.win.d.next = self.wp.pword.val();
                if self.rsu.sr_win_valid.val().any() {
                    if self.wp.rcv.val() == 0 {
                        self.freeq.write.next = true;
                        self.rsp.sr_win_valid.next = 0.into();
                        self.rsp.ooo_n.next = 0.into();
                    } else {
                        self.pool.write_enable.next = true;
                    }
                }
                self.syn.d.next = self.syn_ack.val();
                self.rs.d.next = self.rsp.pword.val();
                self.state.d.next = RState::Save;
                if self.wp.rcv.val().get_bit(0) {
                    self.state.d.next = RState::Slide;
                }
            }
            RState::RspMr => {
                self.state.d.next = RState::RspMrChk;
            }
            RState::RspMrChk => {
                // Placed at the address it carries, through the lkey it echoes
                // (LOCAL_WRITE, bounds; its length was checked in Dispatch); an empty packet writes nothing.
                if self.rsp_ok_q.q.val() {
                    self.syn.d.next = self.syn_ack.val();
                    self.dest.d.next = self.va_iova.val();
                    self.left.d.next = bit_cast::<16, 13>(self.du.plen.val());
                    self.state.d.next = RState::Data;
                } else {
                    // Not ours to write: dropped; the READ is resent after the timeout.
                    self.cnt_access.next = true;
                    self.rp_next.next = self.end_ptr.q.val();
                    self.state.d.next = RState::Idle;
                }
            }
            RState::RspSave => {
                self.rxs_we.next = true;
                self.state.d.next = RState::AckFwd;
            }
            RState::WrMrChk => {
                if self.wr_ok_q.q.val() {
                    self.dest.d.next = self.va_iova.val();
                    self.left.d.next = bit_cast::<16, 13>(self.du.plen.val());
                    self.state.d.next = RState::Data;
                } else if self.ooo.q.val() {
                    // Not placed: the access error is reported when ePSN reaches it.
                    self.state.d.next = RState::Nak;
                } else {
                    self.cnt_access.next = true;
                    self.syn.d.next = self.syn_nak_rem_access.val();
                    self.state.d.next = RState::Nak;
                }
            }
            RState::SendChk => {
                self.lst.d.next = false;
                self.sg_i.d.next = 0.into();
                self.sp_iova.d.next = self.rsu.rwqe_iova.val();
                self.sp_len.d.next = self.rsu.rwqe_len.val();
                if self.ooo.q.val() {
                    // Out of order: the QP's cached receive buffer if the packet
                    // belongs to the message it has started, else the WQE at its RSN.
                    if !self.rsn_cached.val() {
                        self.state.d.next = RState::RwqeReq;
                        if self.oc_hit.val() & self.key_ok_oc.val() {
                            self.sp_iova.d.next = self.ocu.iova.val();
                            self.sp_len.d.next = self.ocu.len.val();
                            self.state.d.next = RState::SendPlace;
                        }
                    } else if self.key_ok_cached.val() {
                        self.state.d.next = RState::SendPlace;
                    } else {
                        self.state.d.next = RState::Nak;
                    }
                } else if self.is_first.val() | !self.rsu.rwqe_valid.val().any() {
                    // A message's first packet, or one after a slide passed its first: the WQE at rq_ci,
                    // from the out-of-order cache if a packet of its message was placed through it.
                    if self.rsu.rq_ci.val() == self.rq_pi.q.val() {
                        self.cnt_rnr.next = true;
                        self.syn.d.next = self.syn_rnr_nak.val();
                        self.state.d.next = RState::Nak;
                    } else if self.oc_hit.val() & (self.ocu.rsn.val() == self.rsu.rq_ci.val()) & self.key_ok_oc.val() {
                        self.rsp.rwqe_valid.next = 1.into();
                        self.rsp.rwqe_lkey.next = self.ocu.lkey.val();
                        self.rsp.rwqe_iova.next = self.ocu.iova.val();
                        self.rsp.rwqe_len.next = self.ocu.len.val();
                        self.rs.d.next = self.rsp.pword.val();
                        self.sp_iova.d.next = self.ocu.iova.val();
                        self.sp_len.d.next = self.ocu.len.val();
                        self.state.d.next = RState::SendPlace;
                    } else {
                        self.state.d.next = RState::RwqeReq;
                    }
                } else if self.key_ok_cached.val() {
                    self.state.d.next = RState::SendPlace;
                } else {
                    self.state.d.next = RState::RwqeErr;
                }
            }
            RState::RwqeReq => {
                if self.lc_hit.val() {
                    // The scatter list is still in `rwqe`: checked again, not fetched again.
                    self.lst.d.next = true;
                    self.sg_tot.d.next = 0.into();
                    self.state.d.next = RState::LstMr;
                } else {
                    self.rd_valid.next = true;
                    if self.rd_ready.val() {
                        self.state.d.next = RState::RwqeWait;
                    }
                }
            }
            RState::RwqeWait => {
                self.rwqe_ready.next = true;
                if self.rwqe_valid.val() {
                    self.lc_valid.d.next = false;
                    self.rwqe.d.next = self.rwqe_data.val();
                    self.state.d.next = RState::RwqeMr;
                }
            }
            RState::RwqeMr => {
                self.mr_addr.next = self.rv.lkey.val().get_bits::<MR_BITS>(8);
                self.state.d.next = RState::RwqeMrWord;
                if self.is_list.val() {
                    self.lst.d.next = true;
                    self.sg_tot.d.next = 0.into();
                    self.state.d.next = RState::LstWord;
                }
            }
            RState::LstMr => {
                self.mr_addr.next = self.sv.lkey.val().get_bits::<MR_BITS>(8);
                self.state.d.next = RState::LstWord;
            }
            RState::LstWord => {
                self.mr_addr.next = self.sv.lkey.val().get_bits::<MR_BITS>(8);
                self.state.d.next = RState::LstChk;
            }
            RState::LstChk => {
                self.mr_addr.next = self.sv.lkey.val().get_bits::<MR_BITS>(8);
                self.state.d.next = RState::LstUse;
            }
            RState::LstUse => {
                // Every entry must pass its MR's checks, but an empty one is not looked at. The QP's
                // receive buffer stays invalid, so each packet of the message comes here again.
                self.mr_addr.next = self.sv.lkey.val().get_bits::<MR_BITS>(8);
                if self.rw_ok.val() | (self.sv.length.val() == 0) {
                    self.sg_iova.d.next =
                        (self.sg_iova.q.val() >> 64) | (bit_cast::<256, 64>(self.rw_iova.val()) << 192);
                    self.sg_tot.d.next = self.sg_tot_nx.val();
                    self.sg_i.d.next = self.sg_i.q.val() + 1;
                    self.state.d.next = RState::LstMr;
                    if self.sg_i.q.val() == 3 {
                        // All four checked (sg_i wraps to 0), their bus addresses in place.
                        self.sp_len.d.next = self.sg_tot_nx.val().get_bits::<32>(0);
                        if self.sg_tot_nx.val().get_bits::<2>(32) != 0 {
                            self.sp_len.d.next = 0xFFFF_FFFF_u64.into();
                        }
                        self.lc_valid.d.next = true;
                        self.lc_qpn.d.next = self.du.dqpn.val().get_bits::<QPN_BITS>(0);
                        self.lc_rsn.d.next = self.rsn_need.val();
                        self.state.d.next = RState::SendPlace;
                    }
                } else if self.ooo.q.val() {
                    self.state.d.next = RState::Nak;
                } else {
                    self.state.d.next = RState::RwqeErr;
                }
            }
            RState::LstSkip => {
                if self.left.q.val() == 0 {
                    self.state.d.next = RState::Finish;
                } else if !self.skip_d.val().get_bit(32) {
                    // Wholly before the packet: on to the next entry.
                    self.sg_skip.d.next = self.skip_d.val().get_bits::<32>(0);
                    self.sg_i.d.next = self.sg_i.q.val() + 1;
                    self.sg_len.d.next = self.sg_len_nx.val();
                    if self.sg_i.q.val() == 3 {
                        // Past the list: SendPlace's length check makes this unreachable.
                        self.state.d.next = RState::Nak;
                    }
                } else {
                    self.sg_left.d.next = self.sg_len.q.val() - self.sg_skip.q.val();
                    self.dest.d.next = self.sel_iova.val() + bit_cast::<64, 32>(self.sg_skip.q.val());
                    self.sg_lane.d.next = 0.into();
                    self.state.d.next = RState::LstData;
                }
            }
            RState::LstData => {
                if self.sg_left.q.val() == 0 {
                    // The entry is full (or empty): on to the next.
                    self.sg_i.d.next = self.sg_i.q.val() + 1;
                    self.state.d.next = RState::LstLoad;
                    if self.sg_i.q.val() == 3 {
                        // Past the list: SendPlace's length check makes this unreachable.
                        self.state.d.next = RState::Nak;
                    }
                } else {
                    self.wr_valid.next = true;
                    self.wr_lane.next = self.sg_lane.q.val();
                    self.wr_len.next = self.sg_w.val().get_bits::<7>(0);
                    if self.wr_ready.val() {
                        self.sg_lane.d.next = self.sg_end.val().get_bits::<6>(0);
                        if self.sg_end.val().get_bit(6) {
                            self.rp_next.next = self.rp.q.val() + 1;
                        }
                        self.dest.d.next = self.sg_dest.val();
                        self.left.d.next = self.left_nx.val();
                        self.sg_left.d.next = self.sgl_nx.val();
                        if self.sg_fin.val() {
                            self.state.d.next = RState::Finish;
                        }
                    }
                }
            }
            RState::LstLoad => {
                self.sg_left.d.next = self.sv.length.val();
                self.dest.d.next = self.sel_iova.val();
                self.state.d.next = RState::LstData;
            }
            RState::RwqeMrWord => {
                self.mr_addr.next = self.rv.lkey.val().get_bits::<MR_BITS>(8);
                self.state.d.next = RState::RwqeMrChk;
            }
            RState::RwqeMrChk => {
                // The check is registered (`rw_key_q`, `rw_room_q`) from the MR word registered now (`mq`).
                self.mr_addr.next = self.rv.lkey.val().get_bits::<MR_BITS>(8);
                self.state.d.next = RState::RwqeMrUse;
            }
            RState::RwqeMrUse => {
                self.mr_addr.next = self.rv.lkey.val().get_bits::<MR_BITS>(8);
                if self.rw_ok.val() {
                    // Cached for the message's later packets, unless this packet is out of order.
                    if !self.ooo.q.val() {
                        self.rsp.rwqe_valid.next = 1.into();
                        self.rsp.rwqe_lkey.next = self.rv.lkey.val();
                        self.rsp.rwqe_iova.next = self.rw_iova.val();
                        self.rsp.rwqe_len.next = self.rv.length.val();
                        self.rs.d.next = self.rsp.pword.val();
                    }
                    self.sp_iova.d.next = self.rw_iova.val();
                    self.sp_len.d.next = self.rv.length.val();
                    if self.ooo.q.val() {
                        self.ocp.valid.next = 1.into();
                        self.occ.write_enable.next = true;
                    }
                    self.state.d.next = RState::SendPlace;
                } else if self.ooo.q.val() {
                    // Not placed; the error is the in-order packet's to report.
                    self.state.d.next = RState::Nak;
                } else {
                    self.state.d.next = RState::RwqeErr;
                }
            }
            RState::RwqeErr => {
                // A receive WQE the NIC may not write through: it completes
                // with LOC_PROT_ERR, the responder stops (the library moves
                // the QP to ERROR), and the requester gets REM_OP_ERR.
                self.cnt_access.next = true;
                self.syn.d.next = self.syn_nak_rem_op.val();
                self.rsp.rq_ci.next = self.rsu.rq_ci.val() + 1;
                self.rsp.rwqe_valid.next = 0.into();
                self.rsp.resp_err.next = 1.into();
                self.rs.d.next = self.rsp.pword.val();
                self.need_cqe.d.next = true;
                self.nak_after_cqe.d.next = true;
                self.cq_num.d.next = self.qv.recv_cqn.val();
                self.c_idx.d.next = self.rsu.rq_ci.val();
                self.c_status.d.next = self.st_loc_prot_err.val();
                self.c_op.d.next = self.cqe_op_recv.val();
                self.c_len.d.next = 0.into();
                self.c_imm.d.next = 0.into();
                self.c_flags.d.next = 0.into();
                self.state.d.next = RState::Save;
            }
            RState::SendPlace => {
                // PSN_OFFSET x PMTU from its register, not a shifter in front of the 64-bit sum.
                self.send_off.d.next = self.off64.val().get_bits::<32>(0);
                self.dest.d.next = self.sp_iova.q.val() + self.off64.val();
                self.left.d.next = bit_cast::<16, 13>(self.du.plen.val());
                self.sg_skip.d.next = self.off64.val().get_bits::<32>(0);
                if self.sp_tail.val().get_bit(40) {
                    // Past the receive buffer: an error at ePSN, not placed ahead of it.
                    if !self.ooo.q.val() {
                        self.cnt_inv.next = true;
                        self.syn.d.next = self.syn_nak_inv_req.val();
                    }
                    self.state.d.next = RState::Nak;
                } else if self.lst.q.val() {
                    self.state.d.next = RState::LstSkip;
                } else {
                    self.state.d.next = RState::Data;
                }
            }
            RState::Data => {
                if self.left.q.val() == 0 {
                    self.state.d.next = RState::Finish;
                } else {
                    self.wr_valid.next = true;
                    if self.wr_ready.val() {
                        self.rp_next.next = self.rp.q.val() + 1;
                        self.dest.d.next = self.dest.q.val() + 64;
                        self.left.d.next = self.left.q.val() - self.chunk.val();
                        if self.left.q.val() <= 64 {
                            self.state.d.next = RState::Finish;
                        }
                    }
                }
            }
            RState::Finish => {
                if self.is_rsp.val() {
                    // The READ expects the next packet; its last ends the wait.
                    self.rp_next.next = self.end_ptr.q.val();
                    self.rsp.rd_psn.next = self.rsu.rd_psn.val() + 1;
                    if self.rd_psn_next.val() == self.rsu.rd_end.val() {
                        self.rsp.rd_on.next = 0.into();
                    }
                    self.rs.d.next = self.rsp.pword.val();
                    self.state.d.next = RState::RspSave;
                } else if self.sw.q.val() {
                    // Placed in software recovery: the run grows or a more
                    // advanced one starts; the host is told (CtrlQ).
                    self.rp_next.next = self.end_ptr.q.val();
                    self.rsp.sw_on.next = 1.into();
                    self.rsp.bytes_rx.next = self.rsu.bytes_rx.val() + bit_cast::<32, 13>(self.du.plen.val());
                    // A new run (the first, or one further ahead) or the next PSN of the run: it ends at this packet.
                    if self.sw_new.val() | (self.sw_rd.val() == 0) {
                        self.rsp.sw_right.next = self.du.psn.val();
                        self.rsp.sw_ends.next = self.rsu.sw_ends.val() + bit_cast::<16, 1>(self.is_last.val().into());
                        if self.sw_new.val() {
                            self.rsp.sw_left.next = self.du.psn.val();
                            self.rsp.sw_ends.next = bit_cast::<16, 1>(self.is_last.val().into());
                        }
                        self.rsp.sw_rpk.next = self.du.psn_offset.val() + 1;
                        if self.is_last.val() {
                            self.rsp.sw_rpk.next = 0.into();
                        }
                        self.rsp.sw_rsend.next = self.is_send.val().into();
                    }
                    self.sw_rep.d.next = true;
                    self.rep_kind.d.next = self.kind_resp_ooo.val();
                    self.rep_flags.d.next = 0.into();
                    if self.is_last.val() {
                        self.rep_flags.d.next = self.rf_last.val();
                    }
                    if self.is_send.val() {
                        self.rep_flags.d.next = self.rf_send.val();
                    }
                    self.rep_psn.d.next = self.du.psn.val();
                    self.rep_off.d.next = self.du.psn_offset.val();
                    self.rep_qpn.d.next = self.du.dqpn.val().get_bits::<QPN_BITS>(0);
                    self.cnt_ooo.next = true;
                    self.cnt_sw.next = true;
                    self.placed.d.next = true;
                    self.rs.d.next = self.rsp.pword.val();
                    self.state.d.next = RState::Save;
                } else if self.ooo.q.val() {
                    // Placed out of order: recorded in the window, ePSN unchanged, NAKed as placed.
                    self.rp_next.next = self.end_ptr.q.val();
                    self.wp.rcv.next = self.wu.rcv.val() | self.sr_bit.val();
                    self.rsp.ooo_n.next = self.rsu.ooo_n.val() + 1;
                    self.rsp.bytes_rx.next = self.rsu.bytes_rx.val() + bit_cast::<32, 13>(self.du.plen.val());
                    // The ACK's SACK bitmap shows this packet.
                    self.win.d.next = self.wp.pword.val();
                    if self.is_last.val() {
                        self.wp.last.next = self.wu.last.val() | self.sr_bit.val();
                    }
                    self.pool.write_enable.next = true;
                    self.side.write_enable.next = true;
                    if !self.rsu.sr_win_valid.val().any() {
                        // The QP's first packet out of order: it borrows a window (Dispatch saw one free).
                        self.freeq.read.next = true;
                        self.rsp.sr_win_valid.next = 1.into();
                        self.rsp.sr_win.next = self.freeq.data_out.val();
                        self.pool.write_address.next = self.freeq.data_out.val();
                        self.side.write_address.next = (bit_cast::<SIDE_LOG2, SR_POOL_LOG2>(self.freeq.data_out.val())
                            << 7)
                            | bit_cast::<SIDE_LOG2, 7>(self.du.psn.val().get_bits::<7>(0));
                    }
                    self.cnt_ooo.next = true;
                    self.placed.d.next = true;
                    self.rs.d.next = self.rsp.pword.val();
                    self.state.d.next = RState::Save;
                } else {
                    self.acc_io.next = true;
                    self.rp_next.next = self.end_ptr.q.val();
                    self.rsp.epsn.next = self.rsu.epsn.val() + 1;
                    self.rsp.bytes_rx.next = self.rsu.bytes_rx.val() + bit_cast::<32, 13>(self.du.plen.val());
                    self.rsp.sr_hold.next = 0.into();
                    // The window moves with ePSN; packets placed before slide in
                    // next; an empty window goes back to the pool.
                    self.wp.rcv.next = self.wu.rcv.val() >> 1;
                    self.wp.last.next = self.wu.last.val() >> 1;
                    self.win.d.next = self.wp.pword.val();
                    if self.rsu.sr_win_valid.val().any() {
                        if self.wp.rcv.val() == 0 {
                            self.freeq.write.next = true;
                            self.rsp.sr_win_valid.next = 0.into();
                            self.rsp.ooo_n.next = 0.into();
                        } else {
                            self.pool.write_enable.next = true;
                        }
                    }
                    self.syn.d.next = self.syn_ack.val();
                    if self.is_last.val() {
                        self.rsp.msn.next = self.rsu.msn.val() + 1;
                    }
                    self.rsp.in_msg.next = (!self.is_last.val()).into();
                    self.rsp.in_write.next = self.is_write.val().into();
                    self.rsp.msg_pkts.next = self.rsu.msg_pkts.val() + 1;
                    if self.is_first.val() {
                        self.rsp.msg_pkts.next = 1.into();
                    }
                    if self.is_send.val() & self.is_last.val() {
                        self.rsp.rq_ci.next = self.rsu.rq_ci.val() + 1;
                        self.rsp.rwqe_valid.next = 0.into();
                        self.need_cqe.d.next = true;
                        self.cq_num.d.next = self.qv.recv_cqn.val();
                        self.c_idx.d.next = self.rsu.rq_ci.val();
                        self.c_status.d.next = self.st_success.val();
                        self.c_op.d.next = self.cqe_op_recv.val();
                        self.c_len.d.next = self.send_off.q.val() + bit_cast::<32, 13>(self.du.plen.val());
                    }
                    if self.is_write.val() & self.is_imm.val() {
                        self.rsp.rq_ci.next = self.rsu.rq_ci.val() + 1;
                        self.need_cqe.d.next = true;
                        self.cq_num.d.next = self.qv.recv_cqn.val();
                        self.c_idx.d.next = self.rsu.rq_ci.val();
                        self.c_status.d.next = self.st_success.val();
                        self.c_op.d.next = self.cqe_op_recv_imm.val();
                        self.c_len.d.next = self.du.msg_len.val();
                    }
                    self.c_imm.d.next = 0.into();
                    self.c_flags.d.next = 0.into();
                    if self.is_imm.val() {
                        self.c_imm.d.next = self.du.imm.val();
                        self.c_flags.d.next = self.flag_with_imm.val();
                    }
                    self.rs.d.next = self.rsp.pword.val();
                    self.state.d.next = RState::Save;
                    if self.wu.rcv.val().get_bit(1) {
                        self.state.d.next = RState::Slide;
                        // This packet's completion goes before those of the messages that slide in.
                        if self.fin_cqe.val() {
                            self.need_cqe.d.next = false;
                            self.slide_cont.d.next = true;
                            self.state.d.next = RState::CqeRecv;
                        }
                    }
                }
            }
            RState::Slide => {
                // One placed packet per cycle: ePSN passes it, MSN counts the
                // messages it ends; one that ends a SEND or a WRITE with
                // immediate consumes the receive WQE at rq_ci and writes its
                // completion from the slot's record. A record naming a WQE
                // not posted (a forged RSN) stops the slide: ePSN waits there
                // for the packet again, which then gets the RNR NAK.
                self.slide_cont.d.next = false;
                if self.wu.rcv.val().get_bit(0)
                    & self.wu.last.val().get_bit(0)
                    & self.sdu.cmp.val().any()
                    & (self.rsu.rq_ci.val() == self.rq_pi.q.val())
                {
                    self.state.d.next = RState::Save;
                } else if self.wu.rcv.val().get_bit(0) {
                    self.slid.d.next = true;
                    self.rsp.epsn.next = self.rsu.epsn.val() + 1;
                    self.rsp.ooo_n.next = self.rsu.ooo_n.val() - 1;
                    self.wp.rcv.next = self.wu.rcv.val() >> 1;
                    self.wp.last.next = self.wu.last.val() >> 1;
                    self.win.d.next = self.wp.pword.val();
                    if self.wp.rcv.val() == 0 {
                        self.freeq.write.next = true;
                        self.rsp.sr_win_valid.next = 0.into();
                        self.rsp.ooo_n.next = 0.into();
                    } else {
                        self.pool.write_enable.next = true;
                    }
                    self.rsp.in_write.next = (!self.sdu.send.val().any()).into();
                    self.rsp.in_msg.next = (!self.wu.last.val().get_bit(0)).into();
                    self.rsp.msg_pkts.next = 1.into();
                    if self.rsu.in_msg.val().any() {
                        self.rsp.msg_pkts.next = self.rsu.msg_pkts.val() + 1;
                    }
                    if self.wu.last.val().get_bit(0) {
                        self.rsp.msn.next = self.rsu.msn.val() + 1;
                        if self.sdu.cmp.val().any() {
                            self.rsp.rq_ci.next = self.rsu.rq_ci.val() + 1;
                            self.rsp.rwqe_valid.next = 0.into();
                            self.cq_num.d.next = self.qv.recv_cqn.val();
                            self.c_idx.d.next = self.rsu.rq_ci.val();
                            self.c_status.d.next = self.st_success.val();
                            self.c_op.d.next = self.cqe_op_recv.val();
                            if self.sdu.wimm.val().any() {
                                self.c_op.d.next = self.cqe_op_recv_imm.val();
                            }
                            self.c_len.d.next = self.sdu.len.val();
                            self.c_imm.d.next = self.sdu.imm.val();
                            self.c_flags.d.next = 0.into();
                            if self.sdu.with_imm.val().any() {
                                self.c_flags.d.next = self.flag_with_imm.val();
                            }
                            self.slide_cont.d.next = true;
                            self.state.d.next = RState::CqeRecv;
                        }
                    }
                    self.rs.d.next = self.rsp.pword.val();
                } else {
                    self.state.d.next = RState::Save;
                }
            }
            RState::Save => {
                self.rxs_we.next = true;
                if self.need_cqe.q.val() {
                    self.need_cqe.d.next = false;
                    self.state.d.next = RState::CqeRecv;
                } else if self.ooo.q.val() {
                    self.state.d.next = RState::Nak;
                } else {
                    self.state.d.next = RState::AckChk;
                }
            }
            RState::AckChk => {
                // Packets that slid in are acknowledged at once, asked for or not.
                if !(self.du.ack_req.val().any() | self.slid.q.val()) {
                    self.state.d.next = RState::Idle;
                    if self.sw_rep.q.val() {
                        self.state.d.next = RState::SwRep;
                    }
                } else if !self.ack_full.val() {
                    self.ack_write.next = true;
                    self.state.d.next = RState::Idle;
                    if self.sw_rep.q.val() {
                        self.state.d.next = RState::SwRep;
                    }
                }
            }
            RState::Nak => {
                self.rp_next.next = self.end_ptr.q.val();
                if (self.syn.q.val() == self.syn_nak_inv_req.val())
                    | (self.syn.q.val() == self.syn_nak_rem_access.val())
                    | (self.syn.q.val() == self.syn_nak_rem_op.val())
                {
                    // An error at ePSN: hold off out-of-order placement until ePSN moves.
                    self.rsp.sr_hold.next = 1.into();
                    self.rxs_we.next = true;
                    self.rxs_wdata.next = self.rsp.pword.val();
                }
                if !self.ack_full.val() {
                    self.ack_write.next = true;
                    self.state.d.next = RState::Idle;
                    if self.sw_rep.q.val() {
                        self.state.d.next = RState::SwRep;
                    }
                }
            }
            RState::AckFwd => {
                self.ackr_valid.next = true;
                if self.ackr_ready.val() {
                    self.state.d.next = RState::Idle;
                }
            }
            // A receive completion waits until the completion writer takes it.
            RState::CqeRecv => {
                self.cqr_valid.next = true;
                if self.cqr_ready.val() {
                    self.state.d.next = RState::AckChk;
                    if self.nak_after_cqe.q.val() {
                        self.state.d.next = RState::Nak;
                    }
                    if self.slide_cont.q.val() {
                        self.state.d.next = RState::Slide;
                    }
                }
            }
            RState::SwLook => {
                self.rxs_addr.next = self.swu.qpn.val();
                self.qpc_addr.next = self.swu.qpn.val();
                self.state.d.next = RState::SwWait;
            }
            RState::SwWait => {
                self.rs.d.next = self.rxs_data.val();
                self.qpc.d.next = self.qpc_data.val();
                self.state.d.next = RState::SwChk;
            }
            RState::SwChk => {
                self.state.d.next = RState::SwApply;
            }
            RState::SwApply => {
                // The host's bitmap says [FROM, TO) is placed: applied only
                // at the QP's ePSN and up to its run (Figure 8); reaching the
                // run jumps past it and ends recovery. Answered either way.
                self.sw_rep.d.next = true;
                self.rep_kind.d.next = self.kind_resp_sync.val();
                self.rep_flags.d.next = 0.into();
                self.rep_psn.d.next = self.swu.to.val();
                self.rep_off.d.next = self.swu.from.val();
                self.rep_qpn.d.next = self.swu.qpn.val();
                self.state.d.next = RState::SwRep;
                if self.swc_ok_q.q.val() {
                    self.rep_flags.d.next = self.rf_applied.val();
                    self.rsp.epsn.next = self.swu.to.val();
                    self.rsp.msn.next = self.rsu.msn.val() + bit_cast::<24, 16>(self.swu.ends.val());
                    self.rsp.in_msg.next = (self.swu.pkts.val() != 0).into();
                    self.rsp.in_write.next = (!self.swu.send.val().any()).into();
                    self.rsp.rwqe_valid.next = 0.into();
                    self.rsp.msg_pkts.next = self.swu.pkts.val();
                    self.rsp.sr_hold.next = 0.into();
                    if self.swc_exit_q.q.val() {
                        self.rep_flags.d.next = self.rf_applied.val() | self.rf_exited.val();
                        self.rsp.epsn.next = self.sw_past.val();
                        self.rsp.msn.next = self.rsu.msn.val()
                            + bit_cast::<24, 16>(self.swu.ends.val())
                            + bit_cast::<24, 16>(self.rsu.sw_ends.val());
                        self.rsp.in_msg.next = (self.rsu.sw_rpk.val() != 0).into();
                        self.rsp.in_write.next = (!self.rsu.sw_rsend.val().any()).into();
                        self.rsp.msg_pkts.next = self.rsu.sw_rpk.val();
                        self.rsp.sw_on.next = 0.into();
                    }
                    self.rxs_we.next = true;
                    self.rxs_waddr.next = self.swu.qpn.val();
                    self.rxs_wdata.next = self.rsp.pword.val();
                    self.rs.d.next = self.rsp.pword.val();
                    self.state.d.next = RState::SwAck;
                }
            }
            RState::SwAck => {
                // ePSN moved without a packet: an ACK to the requester, addressed from the QPC.
                self.ackp.dst_mac.next = self.qv.dest_mac.val();
                self.ackp.dst_ip.next = self.qv.dest_ip.val();
                self.ackp.sport.next = self.qv.udp_sport.val();
                self.ackp.psn.next = self.sw_ack_psn.val();
                self.ackp.ssn.next = 0.into();
                self.ackp.psn_offset.next = 0.into();
                self.ackp.ts.next = 0.into();
                self.ackp.syndrome.next = self.syn_ack.val();
                self.ackp.ecn_echo.next = 0.into();
                // It answers no request: its port and ECN echo are no feedback for the peer's path selector.
                self.ackp.ack_flags.next = self.no_echo2.val();
                if !self.ack_full.val() {
                    self.ack_write.next = true;
                    self.state.d.next = RState::SwRep;
                }
            }
            RState::SwRep => {
                // The report for the host's software recovery, through the ACK receiver to the CtrlQ.
                self.aw.qpn.next = self.rep_qpn.q.val();
                self.aw.msn.next = self.rsu.msn.val();
                self.aw.syndrome.next = self.rep_kind.q.val();
                self.aw.cqn.next = bit_cast::<16, 4>(self.rsu.sw_gen.val());
                self.aw.sq_pi.next = 0.into();
                self.aw.psn.next = self.rep_psn.q.val();
                self.aw.epsn.next = self.rsu.epsn.val();
                self.aw.ssn.next = self.rsu.msn.val();
                self.aw.psn_offset.next = self.rep_off.q.val();
                self.aw.flags.next = self.flag_report.val() | self.rep_flags.q.val();
                self.aw.msn_psn.next = 0.into();
                self.aw.ts.next = 0.into();
                self.aw.entropy.next = 0.into();
                self.aw.ce.next = 0.into();
                self.aw.fb.next = 0.into();
                self.aw.ooo.next = 0.into();
                self.aw.bytes_rx.next = 0.into();
                self.ackr_valid.next = true;
                if self.ackr_ready.val() {
                    self.sw_rep.d.next = false;
                    self.state.d.next = RState::Idle;
                }
            }
            _ => {
                self.state.d.next = RState::Idle;
            }
        }
        // In software recovery every packet taken at ePSN is reported, and
        // ePSN reaching the run jumps past it (the QP leaves recovery; the
        // jump is acknowledged at once).
        // From the QP's ePSN, not the FSM's new one: a READ request's packets in `RdDone`, else one packet.
        self.sw_pass_rd.next = self.rd_npkts_q.q.val() + self.rsu.epsn.val() - self.rsu.sw_left.val();
        self.sw_pass_one.next = self.rsu.epsn.val() + 1 - self.rsu.sw_left.val();
        self.sw_t_rd.next = self.rd_npkts_q.q.val() ^ self.rsu.epsn.val() ^ self.rsu.sw_left.val();
        self.sw_m_rd.next = (self.rd_npkts_q.q.val() & self.rsu.epsn.val())
            | ((self.rd_npkts_q.q.val() | self.rsu.epsn.val()) & self.sw_t_rd.val());
        self.sw_t_one.next = self.rsu.epsn.val() ^ bits::<24>(1) ^ self.rsu.sw_left.val();
        self.sw_m_one.next =
            (self.rsu.epsn.val() & bits::<24>(1)) | ((self.rsu.epsn.val() | bits::<24>(1)) & self.sw_t_one.val());
        self.sel_rd.next = self.state.q.val() == RState::RdDone;
        self.sw_at.next = (self.sel_rd.val()
            & !self.sw_t_rd.val().get_bit(0)
            & (((self.sw_m_rd.val() ^ (self.sw_t_rd.val() >> 1)) & bits::<24>(0x7F_FFFF)) == 0))
            | (!self.sel_rd.val()
                & !self.sw_t_one.val().get_bit(0)
                & (((self.sw_m_one.val() ^ (self.sw_t_one.val() >> 1)) & bits::<24>(0x7F_FFFF)) == 0));
        self.sw_fwd.next = (self.sel_rd.val() & !self.sw_pass_rd.val().get_bit(23))
            | (!self.sel_rd.val() & !self.sw_pass_one.val().get_bit(23));
        if self.acc_io.val() & self.rsu.sw_on.val().any() {
            self.sw_rep.d.next = true;
            self.rep_kind.d.next = self.kind_resp_ooo.val();
            self.rep_flags.d.next = self.rf_inorder.val();
            if self.is_last.val() {
                self.rep_flags.d.next = self.rf_inorder.val() | self.rf_last.val();
            }
            self.rep_psn.d.next = self.du.psn.val();
            self.rep_off.d.next = self.du.psn_offset.val();
            self.rep_qpn.d.next = self.du.dqpn.val().get_bits::<QPN_BITS>(0);
            if self.sw_at.val() {
                self.rep_flags.d.next = self.rf_inorder.val() | self.rf_exited.val();
                if self.is_last.val() {
                    self.rep_flags.d.next = self.rf_inorder.val() | self.rf_exited.val() | self.rf_last.val();
                }
                // Every packet taken in order here (a READ request too) counts as a message end if is_last.
                self.rsp.msn.next = self.rsu.msn.val()
                    + bit_cast::<24, 1>(self.is_last.val().into())
                    + bit_cast::<24, 16>(self.rsu.sw_ends.val());
                self.rsp.epsn.next = self.sw_past.val();
                self.rsp.in_msg.next = (self.rsu.sw_rpk.val() != 0).into();
                self.rsp.in_write.next = (!self.rsu.sw_rsend.val().any()).into();
                // A SEND continued after the jump fetches its receive WQE again (or finds it in the cache).
                self.rsp.rwqe_valid.next = 0.into();
                self.rsp.msg_pkts.next = self.rsu.sw_rpk.val();
                self.rsp.sw_on.next = 0.into();
                self.slid.d.next = true;
                self.rs.d.next = self.rsp.pword.val();
            } else if self.sw_fwd.val() {
                // Past the run's start (a READ request whose PSNs overlap packets
                // placed ahead, from a peer breaking the PSN order): the run no
                // longer describes what lies ahead, recovery ends without a jump.
                self.rep_flags.d.next = self.rf_inorder.val() | self.rf_exited.val();
                self.rsp.sw_on.next = 0.into();
                self.rs.d.next = self.rsp.pword.val();
            }
        }
        // Windows lent: one more at a borrow, one fewer at a return (not the free list's power-up fill).
        if self.freeq.read.val() {
            self.lent.d.next = self.lent.q.val() + 1;
        } else if self.freeq.write.val() & (self.init_n.q.val() == self.pool_n.val()) {
            self.lent.d.next = self.lent.q.val() - 1;
        }
        self.rp.d.next = self.rp_next.val();
        // A receive WQE consumed (or a responder reset) ends the kept scatter list's life: its slot may be posted again.
        if self.rsp.rq_ci.val() != self.rsu.rq_ci.val() {
            self.lc_valid.d.next = false;
        }
        self.ring_raddr.next = self.rp_next.val();
        // A receive WQE consumed now leaves the out-of-order cache.
        if (self.rsp.rq_ci.val() != self.rsu.rq_ci.val())
            & (self.ocu.qpn.val() == self.du.dqpn.val().get_bits::<QPN_BITS>(0))
            & (self.ocu.rsn.val() == self.rsu.rq_ci.val())
        {
            self.occ.write_enable.next = true;
        }
        // The slide reads the record of the slot it passes next: the one at the next cycle's ePSN.
        self.side.read_address.next = (bit_cast::<SIDE_LOG2, SR_POOL_LOG2>(self.rsp.sr_win.val()) << 7)
            | bit_cast::<SIDE_LOG2, 7>(self.rsp.epsn.val().get_bits::<7>(0));
        self.off64_nx.next = bit_cast::<64, 24>(self.rx_desc.d.val().get_bits::<24>(209))
            << bit_cast::<64, 4>(self.qpc.d.val().get_bits::<4>(4));
        self.off64_q.d.next = self.off64_nx.val();
        // From the same next descriptor (its MSG_LEN at bit 153) and QPC, so it always fits `du` and `qv`.
        self.tail_k_q.d.next = bit_cast::<41, 32>(self.rx_desc.d.val().get_bits::<32>(153))
            - bit_cast::<41, 40>(self.off64_nx.val().get_bits::<40>(0));
    }
}
