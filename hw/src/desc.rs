//! Descriptor words passed between engines through FIFOs.

use rust_hdl::prelude::*;

/// Width of a TX descriptor word ([`TxDescPack`]).
pub const TXD_BITS: usize = 785;

// ACKs add the SACK fields (`rnic_spec::wire`): SACK base, bitmap segment, OOO count, bytes received.
// `inl`: the payload comes from the push slot's FIFO, not from a DMA read.
crate::pack_blocks!(TxDescPack, TxDescUnpack, 785, [
    is_ack: 1, dst_mac: 48, dst_ip: 32, sport: 16, opcode: 8, dqpn: 24, ack_req: 1,
    psn: 24, plen: 13, va: 64, rkey: 32, msg_len: 32, ssn: 24, psn_offset: 24, ts: 64,
    syndrome: 8, msn: 24, epsn: 24, ecn_echo: 8, rsn: 16, imm: 32, ack_flags: 2, msn_psn: 24,
    laddr: 64, lkey: 32, sack_base: 24, sack_bitmap: 64, ooo: 16, bytes_rx: 32, inl: 1,
]);
const _: () = assert!(TxDescPack::WIDTH == TXD_BITS);

/// Width of an RX descriptor word ([`RxDescPack`]).
pub const RXD_BITS: usize = 656;

crate::pack_blocks!(RxDescPack, RxDescUnpack, 656, [
    opcode: 8, dqpn: 24, psn: 24, ack_req: 1, va: 64, rkey: 32, msg_len: 32, ssn: 24,
    psn_offset: 24, ts: 64, syndrome: 8, msn: 24, src_mac: 48, src_ip: 32, sport: 16,
    ecn: 8, plen: 13, rptr: 10, nbeats: 7, imm: 32, laddr: 64, lkey: 32, rsn: 16,
]);
const _: () = assert!(RxDescPack::WIDTH == RXD_BITS);

crate::pack_blocks!(ErrPack, ErrUnpack, 64, [qpn: 8, ssn: 24, cqn: 16, status: 8]);

/// Width of a completion request word ([`CqReqPack`]).
pub const CQR_BITS: usize = 128;

// A completion request to the completion writer (`crate::cqw`).
crate::pack_blocks!(CqReqPack, CqReqUnpack, 128, [
    cqn: 16, idx: 16, status: 8, op: 8, len: 32, qpn: 8, imm: 32, flags: 8,
]);
const _: () = assert!(CqReqPack::WIDTH == CQR_BITS);

/// Width of an ACK word handed to the ACK receiver ([`AckInPack`]).
pub const ACKIN_BITS: usize = 288;

// An ACK handed from the responder to the ACK receiver (`crate::ack`), with
// what a NAK reports: the PSN, SSN and PSN_OFFSET it echoes, the responder's
// ePSN and the ACK extension's flags (`ack_flags`); MSN_PSN, where
// message MSN starts (the first PSN of the requester's oldest
// unacknowledged WQE); the low 24 bits of the echoed TX timestamp; and for
// STrack's path selector the echoed entropy (low byte of the request's UDP
// source port) and whether the request arrived ECN-marked (CE), valid
// where `fb` is set (a word made from an ACK or NAK frame, not from a READ
// response or a report); and the SACK's OOO count (12 bits: the responder
// never holds more) and bytes received (zero where `fb` is clear).
crate::pack_blocks!(AckInPack, AckInUnpack, 288, [
    qpn: 8, msn: 24, syndrome: 8, cqn: 16, sq_pi: 16, psn: 24, epsn: 24, ssn: 24, psn_offset: 24, flags: 8,
    msn_psn: 24, ts: 24, entropy: 8, ce: 1, fb: 1, ooo: 12, bytes_rx: 32,
]);
const _: () = assert!(AckInPack::WIDTH == ACKIN_BITS);

/// Bit of [`AckInPack`]'s `flags` the responder sets on an ACK or NAK that
/// arrives while the QP waits for a READ's response: it completes nothing
/// (the READ is the oldest WQE and its data has not all landed); an ACK's
/// MSN is kept until the READ is done.
pub const ACKIN_HOLD: u64 = 0x40;
/// Bit of [`AckInPack`]'s `flags` on a word made from a READ response
/// packet rather than an ACK: its last packet completes the READ (MSN = its
/// SSN + 1, or a kept MSN beyond it), the others only restart the timer.
pub const ACKIN_RDONE: u64 = 0x20;
/// Bit of [`AckInPack`]'s `flags` on an `RDONE` word whose packet ends the
/// last READ sent: the QP waits for no more READ responses, so a kept MSN
/// beyond the READ is applied now (never earlier: it may cover READs whose
/// data has not landed).
pub const ACKIN_RDEND: u64 = 0x10;
/// Bit of [`AckInPack`]'s `flags` on a responder's report for the host's
/// software recovery rather than an ACK: the ACK receiver only writes it to
/// the CtrlQ, with `syndrome` as the entry's kind, the low 5 bits of
/// `flags` as its flags (`rnic_spec::desc::resp_report`) and the low 4 bits
/// of `cqn` as its `episode` (the QP's responder generation).
pub const ACKIN_REPORT: u64 = 0x80;

/// Width of a software-recovery command word ([`SwCmdPack`]).
pub const SWC_BITS: usize = 128;

// A software-recovery command from the host (`rnic_spec::regs::rx_sr`):
// PSNs `from`..`to` (exclusive) are placed, `ends` messages end among
// them, `pkts` packets of an unfinished message lead up to `to`, `send`
// that message is a SEND; `gen` the responder generation it is meant for.
crate::pack_blocks!(SwCmdPack, SwCmdUnpack, 128, [
    qpn: 8, from: 24, to: 24, ends: 16, pkts: 24, send: 1, gen: 4, rsvd: 27,
]);
const _: () = assert!(SwCmdPack::WIDTH == SWC_BITS);
/// Bit of a READ response job's WQE `flags` byte (above the 3-bit restart
/// count): the job's PSN is where the QP's previous job ends, so the send
/// path sends it only once that one is sent (its per-QP record of the next
/// response PSN says so); a job without it goes when its turn comes.
pub const JOB_FOLLOWS: u64 = 0x08;

// The ACK receiver's per-QP MSN kept while a READ's response is awaited:
// the furthest ACKed MSN and the PSN its message starts at (MSN_PSN).
crate::pack_blocks!(HeldPack, HeldUnpack, 64, [valid: 1, msn: 24, psn: 24, rsvd: 15]);

/// Width of a READ arm word ([`ArmPack`]).
pub const ARM_BITS: usize = 64;

// The turn engine sent a READ request (or resent one from an offset): its
// response uses PSNs `psn` up to `psn_end` (exclusive). `first`: no READ
// before it is awaited, so the responder block expects the response at
// `psn`; otherwise it follows the READs in flight and only the end moves.
crate::pack_blocks!(ArmPack, ArmUnpack, 64, [qpn: 8, psn: 24, psn_end: 24, first: 1, rsvd: 7]);
const _: () = assert!(ArmPack::WIDTH == ARM_BITS);

/// Width of a CtrlQ request word ([`CtlReqPack`]).
pub const CTLR_BITS: usize = 192;

// A CtrlQ entry request to the completion writer (`crate::cqw`).
crate::pack_blocks!(CtlReqPack, CtlReqUnpack, 192, [
    kind: 8, flags: 8, qpn: 8, psn: 24, epsn: 24, ssn: 24, psn_offset: 24, rsn: 16, plen: 13, imm: 32,
    episode: 4,
]);
const _: () = assert!(CtlReqPack::WIDTH == CTLR_BITS);

/// Width of a word of the lACK table ([`LackPack`]).
pub const LACK_BITS: usize = 48;

// The requester's acknowledged position, written by the ACK receiver and
// read by the turn engine: WQEs before SSN `ssn` are completed (lACK), and
// WQE `ssn` starts at PSN `psn` (the ACK's MSN_PSN). The turn engine never
// sends a packet of a WQE before lACK: its ring slot may hold a new WQE.
crate::pack_blocks!(LackPack, LackUnpack, 48, [ssn: 24, psn: 24]);
const _: () = assert!(LackPack::WIDTH == LACK_BITS);

// The ACK receiver's per-QP chain of placed NAKs (selective repeat): the
// last placed NAK's ePSN and PSN, how many it folded since the last one it
// reported, and bits 22:12 of the reported one's echoed TX timestamp (units
// of 4096 cycles, 16 us). A placed NAK for the next PSN at the same ePSN,
// of a packet sent in the same 16 us, says nothing new (no new hole) and is
// folded into the next report instead of a CtrlQ entry of its own, up to
// 15 in a row; so the slow path sees a report at least every 16 us of
// sending, which its resend-again rule in time needs.
crate::pack_blocks!(NakFoldPack, NakFoldUnpack, 64, [valid: 1, epsn: 24, last: 24, run: 4, tsc: 11]);

/// Width of the ACK receiver's per-QP state word ([`ReqStatePack`]).
pub const RQS_BITS: usize = 64;

// The ACK receiver's per-QP state: lACK (WQEs completed up to this SSN), the
// failed flag, the timeouts reported since the last ACK (saturating) and the
// cycle of the last ACK or report (low 32 bits, for the RTO).
crate::pack_blocks!(ReqStatePack, ReqStateUnpack, 64, [acked: 24, err: 1, retries: 4, probed: 1, rsvd: 2, ts: 32]);
const _: () = assert!(ReqStatePack::WIDTH == RQS_BITS);

use rnic_spec::regs::{cq, mr, qpc};

crate::field_view!(QpcView, 448, [
    rts: 1 = qpc::RTS, rtr: 1 = qpc::RTR, pmtu_log2: 4 = qpc::PMTU_LOG2,
    remote_qpn: 24 = qpc::REMOTE_QPN, send_cqn: 16 = qpc::SEND_CQN, recv_cqn: 16 = qpc::RECV_CQN,
    sq_base: 64 = qpc::SQ_BASE, rq_base: 64 = qpc::RQ_BASE, sq_log2: 8 = qpc::SQ_LOG2,
    rq_log2: 8 = qpc::RQ_LOG2, pd: 16 = qpc::PD, dest_ip: 32 = qpc::DEST_IP,
    udp_sport: 16 = qpc::UDP_SPORT, dest_mac: 48 = qpc::DEST_MAC, sq_psn: 24 = qpc::SQ_PSN,
    rq_psn: 24 = qpc::RQ_PSN, sr_en: 1 = qpc::SR_EN, max_paths: 9 = qpc::MAX_PATHS, cc: 1 = qpc::CC,
    spray_oblivious: 1 = qpc::SPRAY_OBLIVIOUS,
]);

crate::field_view!(MrView, 256, [
    va_base: 64 = mr::VA_BASE, length: 64 = mr::LENGTH, iova_base: 64 = mr::IOVA_BASE,
    key_tag: 8 = mr::KEY_TAG, access: 8 = mr::ACCESS, valid: 1 = mr::VALID, pd: 16 = mr::PD,
]);

crate::field_view!(CqView, 128, [base: 64 = cq::BASE, log2: 8 = cq::LOG2, vector: 3 = cq::VECTOR, events: 1 = cq::EVENTS]);

use rnic_spec::desc::off as d;

crate::bit_view!(SendWqeView, 512, [
    opcode: 8 @ d::SWQE_OPCODE * 8, length: 32 @ d::SWQE_LENGTH * 8,
    local_addr: 64 @ d::SWQE_LOCAL_ADDR * 8, lkey: 32 @ d::SWQE_LKEY * 8,
    rkey: 32 @ d::SWQE_RKEY * 8, remote_addr: 64 @ d::SWQE_REMOTE_ADDR * 8,
    imm: 32 @ d::SWQE_IMM * 8, rsn: 16 @ d::SWQE_RSN * 8,
    addr1: 64 @ d::SWQE_ADDR1 * 8, len1: 32 @ d::SWQE_LEN1 * 8, lkey1: 32 @ d::SWQE_LKEY1 * 8,
]);

// The first scatter entry's length and key (its address is read through `SgeView`), and the
// lengths of the other three (not all empty: a scatter list).
crate::bit_view!(RecvWqeView, 512, [
    length: 32 @ d::RWQE_LENGTH * 8, lkey: 32 @ d::RWQE_LKEY * 8,
    length1: 32 @ (d::RWQE_LENGTH + d::RWQE_SGE_BYTES) * 8,
    length2: 32 @ (d::RWQE_LENGTH + 2 * d::RWQE_SGE_BYTES) * 8,
    length3: 32 @ (d::RWQE_LENGTH + 3 * d::RWQE_SGE_BYTES) * 8,
]);

// One scatter entry of a receive WQE, picked out of the beat.
crate::bit_view!(SgeView, 128, [
    addr: 64 @ d::RWQE_ADDR * 8, length: 32 @ d::RWQE_LENGTH * 8, lkey: 32 @ d::RWQE_LKEY * 8,
]);

// The first `regs::rewind::WQE_BYTES` of a SendWqe, field by field (the
// RewindPack's `wqe`): the responder builds a READ response job in it.
crate::pack_blocks!(WqeHeadPack, WqeHeadUnpack, 320, [
    opcode: 8, flags: 8, rsvd0: 16, length: 32, local_addr: 64, lkey: 32, rkey: 32, remote_addr: 64,
    imm: 32, rsn: 32,
]);
const _: () = assert!(
    d::SWQE_OPCODE == 0
        && d::SWQE_LENGTH == 4
        && d::SWQE_LOCAL_ADDR == 8
        && d::SWQE_LKEY == 16
        && d::SWQE_RKEY == 20
        && d::SWQE_REMOTE_ADDR == 24
        && d::SWQE_IMM == 32
        && d::SWQE_RSN == 36
);

/// The WQE opcode of a READ response job (never posted by the host, whose
/// opcodes are `send_op`'s): the responder queues one per READ request it
/// accepts, with `local_addr`/`lkey` its own memory, `remote_addr`/`rkey`
/// where the requester wants the data, and the turn engine sends it as
/// READ response packets at the request's PSNs.
pub const SEND_OP_READ_RESP: u8 = 8;
const _: () = assert!(
    SEND_OP_READ_RESP & (rnic_spec::desc::send_op::RDMA_READ | send_op_all_host()) == 0
        && rnic_spec::desc::send_op::RDMA_READ == 4
);
const fn send_op_all_host() -> u8 {
    use rnic_spec::desc::send_op as o;
    o::RDMA_WRITE | o::SEND | o::RDMA_WRITE_IMM | o::SEND_IMM | o::RDMA_READ
}

crate::pack_blocks!(SqStatePack, SqStateUnpack, 128, [ssn: 24, psn: 24, err: 1, rd_run: 1, rsvd: 14, msg_off: 32]);

/// Width of an SQ rewind word ([`RewindPack`]).
pub const REW_BITS: usize = 409;

// An SQ rewind from the host's slow path (`REG_SQ_REWIND`): the requester
// resends from here, or (`one`) resends this one packet only, of the WQE
// it carries (`wqe`: the first `regs::rewind::WQE_BYTES` of the SendWqe).
crate::pack_blocks!(RewindPack, RewindUnpack, 409, [qpn: 8, ssn: 24, psn: 24, msg_off: 32, one: 1, wqe: 320]);
const _: () = assert!(rnic_spec::regs::rewind::WQE_BYTES * 8 == 320);
/// Bit of [`RewindPack`]'s `one` field (the turn engine tests the queue head's).
pub const REW_ONE_BIT: usize = 88;
/// Bit of [`RewindPack`] where its WQE (and so the WQE's opcode byte) starts.
pub const REW_WQE_BIT: usize = 89;
const _: () = assert!(RewindPack::WIDTH == REW_BITS);

/// Width of the responder's per-QP state word ([`RxStatePack`]).
pub const RXS_BITS: usize = 438;

// The responder's per-QP state (and the requester's READ wait: `rd_on`
// while READ responses are awaited, `rd_psn` the PSN of the next packet,
// which is the only one placed, `rd_end` the PSN after the last READ sent;
// `rd_jseq` the responder's count of restarts of the QP's READ response
// jobs, mod 8: a job queued before the latest restart is dropped by the
// send path; `rd_jend` the PSN after the QP's newest job (valid with
// `rd_jv`): a job behind it is a restart, a resent READ; a job at it
// follows that job, and the send path sends it only after that one). Selective repeat: `sr_win` is the window
// the QP borrowed from the responder's pool (valid with `sr_win_valid`);
// `sr_hold`: the packet at ePSN was NAKed with an error, so nothing after
// it is placed until ePSN moves (IBA: nothing executes past a NAK error).
// Software recovery (SRNIC's bitmap onloading, for a QP without a window):
// `sw_on` while the QP's out-of-order packets go to the host's slow path;
// `[sw_left, sw_right]` the most advanced run of consecutive PSNs placed in
// it, `sw_ends` the messages ending in that run, `sw_rpk` the responder's
// position in a message after `sw_right` (packets of it so far; 0 if
// `sw_right` ends its message), `sw_rsend` whether that message is a SEND;
// `sw_gen` counts the QP's responder resets (mod 16): reports carry it and
// a command must, so none crosses into the QPN's next life. STrack's SACK:
// `ooo_n` counts the packets the window holds past ePSN (0 without one),
// `bytes_rx` the payload bytes placed for the first time (mod 2^32).
crate::pack_blocks!(RxStatePack, RxStateUnpack, 438, [
    epsn: 24, msn: 24, rq_ci: 16, rwqe_valid: 1, in_msg: 1, in_write: 1, resp_err: 1,
    sr_hold: 1, rd_jseq: 3, rwqe_iova: 64, rwqe_len: 32, msg_pkts: 24, rwqe_lkey: 32,
    sr_win_valid: 1, sr_win: 6, rd_on: 1, rd_psn: 24, rd_end: 24, rd_jend: 24, rd_jv: 1,
    sw_on: 1, sw_left: 24, sw_right: 24, sw_ends: 16, sw_rpk: 24, sw_rsend: 1, sw_gen: 4,
    ooo_n: 7, bytes_rx: 32,
]);
const _: () = assert!(rnic_spec::params::SR_POOL_LOG2 == 6);
/// Bit of [`RxStatePack`]'s `sr_win` field (the pool is addressed from the RX state RAM's output).
pub const RXS_SR_WIN_BIT: usize = 225;

/// Width of a selective-repeat window in the responder's pool ([`SrWinPack`]).
pub const SRW_BITS: usize = 2 * rnic_spec::params::SR_WINDOW_BITS;

// A window of the pool: bit i of `rcv` is PSN ePSN + i placed out of order
// (bit 0 is clear at rest), the same bit of `last` says that packet ended
// its message.
crate::pack_blocks!(SrWinPack, SrWinUnpack, 256, [rcv: 128, last: 128]);
const _: () = assert!(SrWinPack::WIDTH == SRW_BITS);

/// Width of a window slot's completion record ([`SrSidePack`]).
pub const SRS_BITS: usize = 68;

// What a packet placed out of order leaves for the slide that passes it,
// one record per window slot (the responder's `side` RAM, addressed by
// window and PSN mod 128): `send` a SEND packet (not a WRITE); `cmp` it
// ends a message that consumes a receive WQE (SEND, WRITE with immediate),
// whose completion gets `len` bytes and, if `with_imm`, `imm`; `wimm` that
// message is a WRITE with immediate.
crate::pack_blocks!(SrSidePack, SrSideUnpack, 68, [cmp: 1, send: 1, wimm: 1, with_imm: 1, len: 32, imm: 32]);
const _: () = assert!(SrSidePack::WIDTH == SRS_BITS);

/// Width of an entry of the responder's receive WQE cache for packets out of order ([`OooRwqePack`]).
pub const OCW_BITS: usize = 153;

// The receive WQE a packet out of order was placed through: QPN, RSN, the
// buffer's IOVA and length, its lkey (re-checked at every use).
crate::pack_blocks!(OooRwqePack, OooRwqeUnpack, 153, [valid: 1, qpn: 8, rsn: 16, iova: 64, len: 32, lkey: 32]);
const _: () = assert!(OooRwqePack::WIDTH == OCW_BITS);
const _: () = assert!(RxStatePack::WIDTH == RXS_BITS);

crate::pack_blocks!(CqePack, CqeUnpack, 256, [
    wqe_index: 16, status: 8, opcode: 8, qpn: 32, byte_len: 32, imm: 32, flags: 8, rsvd: 112, owner: 8,
]);

crate::pack_blocks!(CtrlqPack, CtrlqUnpack, 256, [
    kind: 8, flags: 8, qpn: 16, psn: 32, epsn: 32, ssn: 32, psn_offset: 32, rsn: 16, plen: 16, imm: 32,
    episode: 8, rsvd: 16, owner: 8,
]);

// The CtrlQ entry packing above must match the host's view of an entry.
const _: () = assert!(d::CTRLQ_PSN == 4 && d::CTRLQ_IMM == 24 && d::CTRLQ_OWNER == 31);

// The CQE packing above must match the host's view of a CQE.
const _: () = assert!(
    d::CQE_WQE_INDEX == 0
        && d::CQE_STATUS == 2
        && d::CQE_OPCODE == 3
        && d::CQE_QPN == 4
        && d::CQE_BYTE_LEN == 8
        && d::CQE_IMM == 12
        && d::CQE_FLAGS == 16
        && d::CQE_OWNER == 31
);

#[cfg(test)]
mod tests {
    use super::*;

    /// Bit positions the RTL reads with literal offsets match the packed layouts.
    #[test]
    fn literal_offsets_match_packing() {
        let lsb = |fields: &[(&str, usize)], name: &str| {
            let i = fields.iter().position(|f| f.0 == name).expect("field");
            fields[..i].iter().map(|f| f.1).sum::<usize>()
        };
        assert_eq!(lsb(RewindPack::FIELDS, "one"), REW_ONE_BIT);
        assert_eq!(lsb(RewindPack::FIELDS, "wqe"), REW_WQE_BIT);
        assert_eq!(lsb(RxStatePack::FIELDS, "sr_win"), RXS_SR_WIN_BIT);
    }
}
