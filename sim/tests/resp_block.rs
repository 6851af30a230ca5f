//! Block-level Verilator test of the receive side (`hw/src/rxe.rs`, top
//! "resp": the responder, the ACK receiver and the completion writer) against
//! a reference model, with random stimulus.
//!
//! The harness plays the responder's environment as `hw/src/core.rs` wires
//! it: the QPC, RX-state, requester-state, RQ PI, SQ PI, MR, CQ and CQ PI tables are Rust
//! arrays with the core's block-RAM timing (read data after a clock edge is
//! the content, before that edge's write, at the address presented in the
//! cycle before the edge); the descriptor FIFO shows its head; the
//! 1024-beat RX ring holds each packet's payload + pad + ICRC beats at the
//! descriptor's `rptr` (the ring is read with the same one-cycle latency);
//! receive-WQE DMA reads are answered after a random latency; DMA writes are
//! taken with random `wr_ready` and applied to a host memory image; the ACK
//! FIFO is randomly full, and so is the send path's READ job queue
//! (`job_full`, at random and in long stretches, so the responder waits in
//! `RdJob`). Arm words (`arm_write`, `ArmPack`) are queued in the stimulus
//! among the descriptors: the harness writes one when it reaches the head
//! (never while `arm_full`) and shows the descriptor FIFO empty for a few
//! cycles after, so the arm queue shows it before the next descriptor could
//! be popped; the responder must apply it before that descriptor (arms go
//! ahead of descriptors). One parameter set has a CtrlQ (8 entries, its
//! consumer index advanced at quiescent points, so it also fills); the
//! other sets none (every report is dropped, `ctrlq_drop`).
//!
//! Stimulus: per QP, WRITE and SEND messages, some with immediate data,
//! segmented at the PMTU into descriptors (mostly valid), with faults: PSN ahead / behind (duplicate),
//! MIDDLE without FIRST and FIRST inside a message, FIRST/MIDDLE shorter
//! than the PMTU, payload over the PMTU, wrong PSN_OFFSET, RETH length
//! mismatch, bad rkey (tag, PD, permission, invalid entry, bits above the
//! index), WRITE messages running past their MR, SEND with no receive WQE
//! (RNR), WRITE with immediate and no receive WQE (RNR at its LAST), receive buffer too small, receive WQEs whose lkey fails (no
//! LOCAL_WRITE, tag, PD, bounds), frames from a wrong peer, to a QPN >= 256,
//! to a QP not in RTR, with a non-request opcode; and ACK/NAK descriptors for
//! the requester side (stale, covering posted WQEs, beyond what was posted,
//! NAK/RNR syndromes). Between batches the harness (at quiescent points)
//! posts receive WQEs, raises SQ producer indices and resets QPs through
//! `rst_valid` (responder and/or requester half).
//!
//! RDMA READ (a share of the batches, drawn from a random stream of its
//! own, so the MR table, the QPs and the other stimulus of a seed start as
//! before READ existed; a few MRs of 4 GiB and more with REMOTE_READ are
//! added in unused slots). READ requests at ePSN on MRs with REMOTE_READ
//! (lengths from 0 to 2^32 - 1, to the MR's end), and faulty ones: PSN
//! ahead, PSN behind (a resent READ, answered again; or dropped when its MR
//! check fails or it carries payload), payload, inside a message, bad rkey
//! (tag, another PD, no REMOTE_READ, invalid entry, bits above the index),
//! starting before / running past the MR, zero length with any rkey,
//! PSN_OFFSET set, from a wrong peer, to a QP not in RTR. The requester
//! side: at quiescent points a QP gets a READ to play back (its SQ PI past
//! lACK), armed in a READ batch as lACK's WQE (now and then as another
//! WQE), whose response packets then come in order into an MR with
//! LOCAL_WRITE, with faults: a gap (PSN ahead), duplicates (behind), a
//! response with nothing armed or after the READ ended, bad lkey (tag,
//! another PD, no LOCAL_WRITE, invalid, upper bits), before / past the MR,
//! payload over the PMTU (or short), an empty packet with any lkey, LAST
//! too early or missing, re-arms at `rd_psn` or at the READ's start, arm
//! bursts, a wrong peer; ACK descriptors while the READ is awaited (their
//! flags byte random: PLACED and bits to be masked off; now and then a
//! placed PSN sequence NAK continuing the QP's fold chain); requester
//! resets while armed (at random, and for a READ whose lkey keeps failing).
//!
//! The reference model gives, per descriptor, the outcome (placed,
//! duplicate re-ACK, NAK with syndrome, drop, ACK processing) and the exact
//! ordered list of the responder's side effects: receive-WQE read address,
//! every DMA write (address, length, bytes: payload chunks and CQEs with
//! owner bit), QP error-flag writes, ACK/NAK descriptors (the whole
//! 672-bit word) and READ job words (the whole 409-bit word). Checked
//! against the RTL: that sequence exactly (no other DMA write, read, ACK or
//! job), except for four streams of their own, each in order: the receive
//! CQEs, the ACK receiver's requester CQEs and CtrlQ entries, the QP
//! error-flag writes and the lACK table writes. The ACK receiver works beside the responder, and the completion
//! writer takes the two CQE streams in turn and writes each CQE a few cycles
//! later, so these may come before or after the responder's next writes. A
//! CQE's slot (address, owner bit) is assigned when it is written, from the
//! CQ's producer index then, since receive and requester CQEs may share a CQ.
//! Also checked: the responder's RX-state word of the QP after every
//! descriptor (with `rd_on`, `rd_psn`, `rd_jseq`; an arm applied to it
//! before the next descriptor included), and every QP's RX-state and
//! requester-state words at quiescent points, the CQ producer-index
//! writes, the ring `rptr` (never outside the current descriptor's beats,
//! never backwards, exactly at the descriptor's end when the next is popped
//! and at the write pointer at quiescence), the event counters, and the host
//! memory image at the end.
//!
//! READ in the model. A request at ePSN (no message in progress, no
//! payload, the MR check: valid, tag, upper rkey bits zero, PD,
//! REMOTE_READ, `[va, va + length)` inside the MR; zero length unchecked)
//! gives a job word in the main sequence (`RewindPack`, `one` set, its WQE
//! a `SEND_OP_READ_RESP` with length, VA/rkey as local address/lkey, the
//! request's laddr/lkey as remote address/rkey, the QP's job count + 1
//! mod 8 in its flags byte; the job count table write with it), then ePSN
//! moved by max(1, ceil(length / PMTU)), MSN + 1, no message in progress,
//! the hold cleared, and the ACK if AckReq; failing it a NAK REM_ACCESS (hold
//! set), with a message in progress or payload NAK INV_REQ, ahead NAK PSN
//! sequence; behind: `rx_dup`, a job (and the job count) if it has no
//! payload and passes the MR check, else nothing. A READ response packet
//! (after the QPN/peer checks, before the RTR and responder-error checks):
//! nothing awaited (`rd_on` clear) or behind `rd_psn`: dropped, `rx_dup`;
//! ahead: dropped, `rx_psn_err`, a PSN sequence NAK word to the ACK
//! receiver (HOLD, MSN its SSN, ePSN `rd_psn`, its PSN/SSN/PSN_OFFSET, no
//! timestamp); at `rd_psn`: dropped (`rx_inv_req`) unless it fits the READ: a
//! full PMTU but the last, PSN_OFFSET × PMTU + payload within the RETH length
//! and equal to it at LAST/ONLY; then the lkey check (LOCAL_WRITE, bounds, at most a
//! PMTU; an empty packet unchecked) or dropped (`rx_access_err`), placed in
//! 64-byte chunks at its address, `rd_psn` + 1, `rd_on` cleared by
//! LAST/ONLY, and an ACK word: HOLD with MSN its SSN, or at LAST/ONLY RDONE
//! with MSN SSN + 1, MSN_PSN its PSN + 1. An arm word sets `rd_on` and
//! `rd_psn`; a requester reset clears `rd_on`. The ACK receiver's model
//! covers every word, ACK descriptors (HOLD while `rd_on`, with the wire's
//! PLACED bit only) and response words alike: a HOLD word completes
//! nothing, an ACK's MSN (and MSN_PSN) kept if the furthest yet, an error
//! NAK for a WQE other than lACK ignored (`rx_hdr_err`); an RDONE word for
//! a WQE other than lACK ignored (`rx_hdr_err`, the kept MSN stays), else it
//! clears the kept MSN and completes up to it if that is further; then the
//! usual checks (failed, stale, beyond the posted WQEs); PSN sequence and
//! RNR NAKs reported (CtrlQ entry: kind, the wire's flags only, PSN, ePSN,
//! SSN, PSN_OFFSET, folded count, timestamp; or dropped), placed PSN
//! sequence NAKs folded per QP as `NakFoldPack` says. The lACK table
//! writes (a stream of their own: one per ACK that completes WQEs, with
//! its MSN and MSN_PSN, or the kept ones; zero at a requester reset) are
//! checked too.
//!
//! Seeds are fixed; a failure prints its seed. `RNIC_RESP_BLOCK_ITERS=n`
//! runs n seeds per parameter set, `RNIC_RESP_BLOCK_SEED=s` runs seed s only.

mod common;

use common::{block_seeds, near_wrap};
use rnic_hw::desc::{
    CqePack, CtrlqPack, LackPack, ReqStatePack, RewindPack, RxDescPack, RxStatePack, TxDescPack, WqeHeadPack,
    ACKIN_HOLD, ACKIN_RDEND, ACKIN_RDONE, JOB_FOLLOWS, SEND_OP_READ_RESP,
};
use rnic_hw::pack::{pack_words, unpack_field};
use rnic_hw::spray::{OP_ACK, OP_RESET};
use rnic_sim::model::{Model, PortId};
use rnic_sim::rng::SplitMix as Rng;
use rnic_spec::desc::{cqe_flags, cqe_op, cqe_status, ctrlq_kind, off, RECV_SGES};
use rnic_spec::params::MAX_PATHS;
use rnic_spec::regs::{cq, mr, qpc, Access, NUM_STAGE, RKEY_TAG_FLIP};
use rnic_spec::wire::{ack_flags, opcode, syndrome, Opcode, IP_ECN_CE};
use std::collections::{HashMap, VecDeque};

const NQPN: usize = 256;
const NMR: usize = 256;
const NCQ: usize = 64;
const RING: u64 = 1024;
/// Ring beats kept free (a maximum frame is 67 beats).
const RING_LIMIT: u64 = RING - 80;
/// Cycles without progress while work is outstanding before the run is declared stuck.
const STALL_MAX: u64 = 20_000;
const M24: u64 = 0xFF_FFFF;
const M16: u64 = 0xFFFF;
/// Bus address of the CtrlQ ring (sets with `ctrlq_log2` > 0).
const CTRLQ_BASE: u64 = 0x50_0000_0000;
/// Cycles the descriptor FIFO shows empty after an arm word is written, so
/// the arm queue shows it before the next descriptor can be popped.
const ARM_GAP: u64 = 4;

/// One parameter set.
#[derive(Clone, Copy, Debug)]
struct Cfg {
    name: &'static str,
    nq: usize,
    /// QPNs drawn from 0..qpn_max (qpn_max - 1 always used).
    qpn_max: usize,
    pmtu_log2: u32,
    /// Most packets per message.
    max_pkts: u64,
    /// Descriptors in total.
    descs: usize,
    /// Share of request descriptors with a fault.
    fault_pct: u32,
    /// Share of ACK descriptors.
    ack_pct: u32,
    /// Share of dropped frames (peer, QPN, opcode, RTR).
    drop_pct: u32,
    wr_ready_pct: u32,
    ack_full_pct: u32,
    rd_ready_pct: u32,
    lat: (u64, u64),
    /// Share of cycles a descriptor is pushed (while the batch lasts).
    push_pct: u32,
    /// ACKs beyond the posted WQEs also while the SQ PI's low 16 bits have
    /// wrapped below those of the acked count (regression
    /// `resp_block_ack_beyond_posted_after_sq_pi_wrap`).
    ack_over_pi_wrap: bool,
    /// Share of batches with READ stimulus (READ requests, arms, READ
    /// responses, ACKs while a READ is awaited).
    read_batch_pct: u32,
    /// Share of cycles `job_full` is high (outside its stall stretches).
    job_full_pct: u32,
    /// log2 of the CtrlQ's entries (0: no CtrlQ, reports are dropped).
    ctrlq_log2: u32,
}

const SETS: [Cfg; 2] = [
    Cfg {
        name: "4qp_pmtu256",
        nq: 4,
        qpn_max: 4,
        pmtu_log2: 8,
        max_pkts: 9,
        descs: 3000,
        fault_pct: 25,
        ack_pct: 12,
        drop_pct: 4,
        wr_ready_pct: 70,
        ack_full_pct: 20,
        rd_ready_pct: 70,
        lat: (1, 40),
        push_pct: 60,
        ack_over_pi_wrap: true,
        read_batch_pct: 40,
        job_full_pct: 20,
        ctrlq_log2: 0,
    },
    Cfg {
        name: "12qp_qpn255_pmtu4096",
        nq: 12,
        qpn_max: 256,
        pmtu_log2: 12,
        max_pkts: 5,
        descs: 1500,
        fault_pct: 25,
        ack_pct: 12,
        drop_pct: 4,
        wr_ready_pct: 85,
        ack_full_pct: 10,
        rd_ready_pct: 85,
        lat: (5, 200),
        push_pct: 40,
        ack_over_pi_wrap: true,
        read_batch_pct: 40,
        job_full_pct: 30,
        ctrlq_log2: 3,
    },
];

/// The RX-state word (`RxStatePack`) and the requester-state word
/// (`ReqStatePack`: `req_acked`, `req_err`), as the model keeps them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Rxs {
    epsn: u64,
    msn: u64,
    rq_ci: u64,
    rwqe_valid: bool,
    req_err: bool,
    in_msg: bool,
    in_write: bool,
    resp_err: bool,
    /// Selective repeat held off after an error NAK (the RTL writes the state it holds then).
    sr_hold: bool,
    rwqe_iova: u64,
    rwqe_len: u64,
    req_acked: u64,
    msg_pkts: u64,
    rwqe_lkey: u64,
    /// The requester's READ wait: READ responses are awaited, from PSN
    /// `rd_psn` on, up to `rd_end` (exclusive: the end of the last READ armed).
    rd_on: bool,
    rd_psn: u64,
    rd_end: u64,
    /// The responder's count of restarts of the QP's READ response jobs (mod 8).
    rd_jseq: u64,
    /// The PSN after the QP's newest job (valid with `rd_jv`): a job behind
    /// it is a restart, a job at it follows that job (`JOB_FOLLOWS`).
    rd_jend: u64,
    rd_jv: bool,
    /// SACK: packets held past ePSN (no selective repeat here: always 0),
    /// payload bytes placed (mod 2^32).
    ooo_n: u64,
    bytes_rx: u64,
}

/// 32-bit words of an RX-state word.
const RXS_WORDS: usize = RxStatePack::WIDTH.div_ceil(32);

impl Rxs {
    fn pack(&self) -> [u32; RXS_WORDS] {
        let v = pack_words(
            RxStatePack::FIELDS,
            RxStatePack::WIDTH,
            &[
                ("epsn", self.epsn),
                ("msn", self.msn),
                ("rq_ci", self.rq_ci),
                ("rwqe_valid", self.rwqe_valid as u64),
                ("in_msg", self.in_msg as u64),
                ("in_write", self.in_write as u64),
                ("resp_err", self.resp_err as u64),
                ("sr_hold", self.sr_hold as u64),
                ("rwqe_iova", self.rwqe_iova),
                ("rwqe_len", self.rwqe_len),
                ("msg_pkts", self.msg_pkts),
                ("rwqe_lkey", self.rwqe_lkey),
                ("rd_on", self.rd_on as u64),
                ("rd_psn", self.rd_psn),
                ("rd_end", self.rd_end),
                ("rd_jseq", self.rd_jseq),
                ("rd_jend", self.rd_jend),
                ("rd_jv", self.rd_jv as u64),
                ("ooo_n", self.ooo_n),
                ("bytes_rx", self.bytes_rx),
            ],
        );
        v.try_into().unwrap()
    }
    fn pack_req(&self) -> u32 {
        pack_words(ReqStatePack::FIELDS, 32, &[("acked", self.req_acked), ("err", self.req_err as u64)])[0]
    }
    /// The responder's part (the requester state zeroed).
    fn rx_part(&self) -> Rxs {
        Rxs { req_err: false, req_acked: 0, ..*self }
    }
    fn unpack(w: &[u32], req: u32) -> Rxs {
        let g = |n: &str| unpack_field(RxStatePack::FIELDS, w, n);
        let gr = |n: &str| unpack_field(ReqStatePack::FIELDS, &[req], n);
        Rxs {
            epsn: g("epsn"),
            msn: g("msn"),
            rq_ci: g("rq_ci"),
            rwqe_valid: g("rwqe_valid") != 0,
            req_err: gr("err") != 0,
            in_msg: g("in_msg") != 0,
            in_write: g("in_write") != 0,
            resp_err: g("resp_err") != 0,
            sr_hold: g("sr_hold") != 0,
            rwqe_iova: g("rwqe_iova"),
            rwqe_len: g("rwqe_len"),
            req_acked: gr("acked"),
            msg_pkts: g("msg_pkts"),
            rwqe_lkey: g("rwqe_lkey"),
            rd_on: g("rd_on") != 0,
            rd_psn: g("rd_psn"),
            rd_end: g("rd_end"),
            rd_jseq: g("rd_jseq"),
            rd_jend: g("rd_jend"),
            rd_jv: g("rd_jv") != 0,
            ooo_n: g("ooo_n"),
            bytes_rx: g("bytes_rx"),
        }
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Mr {
    va: u64,
    len: u64,
    iova: u64,
    tag: u8,
    access: u8,
    valid: bool,
    pd: u16,
}

#[derive(Clone, Copy, Debug, Default)]
struct Rwqe {
    addr: u64,
    len: u64,
    lkey: u64,
}

/// Static QPC of one QPN (unconfigured QPNs have `rtr == false`).
#[derive(Clone, Copy, Debug, Default)]
struct QpcInfo {
    rtr: bool,
    remote_qpn: u64,
    send_cqn: u64,
    recv_cqn: u64,
    rq_base: u64,
    rq_log2: u32,
    pd: u16,
    ip: u64,
    mac: u64,
}

/// A message the generator is sending on a QP.
#[derive(Clone, Copy, Debug)]
struct Msg {
    write: bool,
    len: u64,
    va: u64,
    rkey: u64,
    npkts: u64,
    ssn: u64,
    /// With immediate data: its LAST/ONLY carries the *_IMM opcode.
    imm: bool,
    /// Made to be refused at its FIRST packet: abandoned after that.
    doomed: bool,
    /// What makes it doomed.
    tag: &'static str,
}

/// The requester's READ on a QP (one at a time), whose response the
/// generator plays back: armed at `psn0`, `npkts` response packets.
#[derive(Clone, Copy, Debug)]
struct RdGen {
    /// The READ's SSN (set when it is armed: lACK, unless `wrong_ssn`).
    ssn: u64,
    len: u64,
    npkts: u64,
    laddr: u64,
    lkey: u64,
    psn0: u64,
    armed: bool,
    /// Made not to be lACK's WQE: its end is refused by the ACK receiver.
    wrong_ssn: bool,
    /// Response descriptors sent (a READ stuck on a failing lkey is reset).
    sent: u64,
}

/// The ACK receiver's chain of placed PSN sequence NAKs of a QP (`NakFoldPack`).
#[derive(Clone, Copy, Debug, Default)]
struct Fold {
    valid: bool,
    epsn: u64,
    last: u64,
    run: u64,
    tsc: u64,
}

/// An ACK word as the responder hands it to the ACK receiver (`AckInPack`,
/// the fields the receiver acts on or reports).
#[derive(Clone, Copy, Debug)]
struct AckWord {
    msn: u64,
    syn: u64,
    flags: u64,
    psn: u64,
    epsn: u64,
    ssn: u64,
    psn_offset: u64,
    ts: u64,
    msn_psn: u64,
    /// The SACK's OOO count (12 bits, saturated; 0 in a READ response's word).
    ooo: u64,
}

#[derive(Clone, Debug)]
struct Qp {
    qpn: usize,
    msg: Option<Msg>,
    /// Posted receive WQEs by RQ index (16-bit).
    rq: HashMap<u64, Rwqe>,
    ssn: u64,
    /// The requester's READ whose response is being played back.
    rd: Option<RdGen>,
}

#[derive(Clone, Debug, Default)]
struct Desc {
    op: u8,
    dqpn: u64,
    psn: u64,
    ack_req: bool,
    va: u64,
    rkey: u64,
    msg_len: u64,
    ssn: u64,
    psn_offset: u64,
    ts: u64,
    imm: u64,
    syn: u64,
    msn: u64,
    src_mac: u64,
    src_ip: u64,
    sport: u64,
    ecn: u64,
    plen: u64,
    rptr: u64,
    nbeats: u64,
    laddr: u64,
    lkey: u64,
    /// A request's RSN; an ACK's OOO count.
    rsn: u64,
    payload: Vec<u8>,
    what: String,
    /// Not a descriptor: an arm word (`ArmPack` {qpn, psn, psn_end,
    /// first}) the harness writes when it reaches the head of the stimulus
    /// queue.
    arm: bool,
    arm_end: u64,
    arm_first: bool,
}

/// An arm word applied to the RX state: READ responses awaited from `psn`
/// on if it is the first READ (or none is awaited), up to `end` or a later
/// end already awaited (a resent READ never shortens the wait).
fn apply_arm(r: &mut Rxs, psn: u64, end: u64, first: bool) {
    let d = end.wrapping_sub(r.rd_end) & M24;
    if !r.rd_on || (d != 0 && d & 0x80_0000 == 0) {
        r.rd_end = end;
    }
    if first || !r.rd_on {
        r.rd_psn = psn;
    }
    r.rd_on = true;
}

impl Desc {
    fn words(&self) -> Vec<u32> {
        pack_words(
            RxDescPack::FIELDS,
            RxDescPack::WIDTH,
            &[
                ("opcode", self.op as u64),
                ("dqpn", self.dqpn),
                ("psn", self.psn),
                ("ack_req", self.ack_req as u64),
                ("va", self.va),
                ("rkey", self.rkey),
                ("msg_len", self.msg_len),
                ("ssn", self.ssn),
                ("psn_offset", self.psn_offset),
                ("ts", self.ts),
                ("syndrome", self.syn),
                ("msn", self.msn),
                ("src_mac", self.src_mac),
                ("src_ip", self.src_ip),
                ("sport", self.sport),
                ("ecn", self.ecn),
                ("plen", self.plen),
                ("rptr", self.rptr),
                ("nbeats", self.nbeats),
                ("imm", self.imm),
                ("laddr", self.laddr),
                ("lkey", self.lkey),
                ("rsn", self.rsn),
            ],
        )
    }
}

/// An expected side effect of the responder, in program order.
#[derive(Clone, Debug)]
enum Ev {
    /// Receive-WQE fetch at this address, answered with this beat.
    Rd(u64, [u8; 64]),
    /// DMA write of these bytes; a CQE write also writes CQ PI `(cqn, new pi)`.
    Wr(u64, Vec<u8>, Option<(u64, u64)>),
    /// ACK FIFO write of this word.
    Ack(Vec<u32>),
    /// QP error flag write.
    QpErr(usize),
    /// A CQE; its slot is assigned when it is written.
    Cqe(Cqe),
    /// A READ response job word (`RewindPack`).
    Job(Vec<u32>),
    /// A CtrlQ entry write (address, bytes), in the ACK receiver's stream.
    Ctl(u64, Vec<u8>),
    /// An lACK table write: QPN, SSN (lACK), the PSN its WQE starts at.
    Lack(usize, u64, u64),
}

/// A completion as the model predicts it.
#[derive(Clone, Copy, Debug)]
struct Cqe {
    cqn: u64,
    idx: u64,
    status: u8,
    op: u8,
    len: u64,
    qpn: usize,
    imm: u64,
    flags: u8,
}

fn ev_brief(e: &Ev) -> String {
    match e {
        Ev::Rd(a, _) => format!("RWQE read {a:#x}"),
        Ev::Wr(a, b, c) => format!("DMA write {a:#x} len {}{}", b.len(), if c.is_some() { " (CQE)" } else { "" }),
        Ev::Ack(w) => format!(
            "ACK psn {:#x} syndrome {:#x} msn {:#x} epsn {:#x}",
            unpack_field(TxDescPack::FIELDS, w, "psn"),
            unpack_field(TxDescPack::FIELDS, w, "syndrome"),
            unpack_field(TxDescPack::FIELDS, w, "msn"),
            unpack_field(TxDescPack::FIELDS, w, "epsn")
        ),
        Ev::Cqe(c) => format!("CQE cq {} qpn {} idx {:#x} status {} op {}", c.cqn, c.qpn, c.idx, c.status, c.op),
        Ev::QpErr(q) => format!("QP error flag of qpn {q}"),
        Ev::Job(w) => format!(
            "READ job qpn {} ssn {:#x} psn {:#x}",
            unpack_field(RewindPack::FIELDS, w, "qpn"),
            unpack_field(RewindPack::FIELDS, w, "ssn"),
            unpack_field(RewindPack::FIELDS, w, "psn")
        ),
        Ev::Ctl(a, b) => format!("CtrlQ entry at {a:#x} kind {} qpn {}", b[0], b[2]),
        Ev::Lack(q, ssn, psn) => format!("lACK table write qpn {q} ssn {ssn:#x} psn {psn:#x}"),
    }
}

/// Counter pulses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Cnt {
    hdr: u64,
    psn: u64,
    access: u64,
    dup: u64,
    rnr: u64,
    nak: u64,
    ack: u64,
    cqe: u64,
    inv: u64,
    /// CtrlQ reports dropped: no CtrlQ set up (log2 0) or the ring full.
    ctl_drop: u64,
    /// CtrlQ entries written.
    ctl: u64,
}

#[derive(Clone, Copy)]
struct Ports {
    desc_empty: PortId,
    desc_data: PortId,
    desc_pop: PortId,
    rptr: PortId,
    ring_raddr: PortId,
    ring_rdata: PortId,
    lerr_empty: PortId,
    lerr_data: PortId,
    lerr_pop: PortId,
    qpc_addr: PortId,
    qpc_data: PortId,
    rxs_addr: PortId,
    rxs_data: PortId,
    rxs_we: PortId,
    rxs_waddr: PortId,
    rxs_wdata: PortId,
    rqpi_addr: PortId,
    rqpi_data: PortId,
    sqpi_data: PortId,
    mr_addr: PortId,
    mr_data: PortId,
    cq_addr: PortId,
    cq_data: PortId,
    cqpi_data: PortId,
    cqpi_we: PortId,
    cqpi_wdata: PortId,
    qperr_we: PortId,
    qperr_waddr: PortId,
    rqs_addr: PortId,
    rqs_data: PortId,
    rqs_we: PortId,
    rqs_waddr: PortId,
    rqs_wdata: PortId,
    lack_we: PortId,
    lack_waddr: PortId,
    lack_wdata: PortId,
    cnt_ack_bad: PortId,
    rd_valid: PortId,
    rd_ready: PortId,
    rd_addr: PortId,
    rwqe_valid: PortId,
    rwqe_data: PortId,
    rwqe_ready: PortId,
    wr_valid: PortId,
    wr_ready: PortId,
    wr_addr: PortId,
    wr_data: PortId,
    wr_len: PortId,
    wr_lane: PortId,
    ack_write: PortId,
    ack_data: PortId,
    ack_full: PortId,
    idle: PortId,
    rst_valid: PortId,
    rst_max_paths: PortId,
    /// rst_cc_on, cc_ready (driven at random; the requests are checked in `ack_block`).
    cc_in: [PortId; 2],
    spray_valid: PortId,
    spray_ready: PortId,
    /// Acknowledged-PSN table write: enable, qpn, ePSN.
    apsn: [PortId; 3],
    /// op, qpn, ecn, path, max_paths.
    spray_f: [PortId; 5],
    rst_data: PortId,
    arm_write: PortId,
    arm_data: PortId,
    arm_full: PortId,
    job_write: PortId,
    job_data: PortId,
    job_full: PortId,
    jseq_we: PortId,
    jseq_waddr: PortId,
    jseq_wdata: PortId,
    ctrlq_base: PortId,
    ctrlq_size: PortId,
    ctrlq_ci: PortId,
    ctrlq_reset: PortId,
    cnt: [PortId; 11],
}

impl Ports {
    fn new(m: &Model) -> Ports {
        let p = |n: &str| m.port(n).unwrap_or_else(|e| panic!("{e}"));
        Ports {
            desc_empty: p("desc_empty"),
            desc_data: p("desc_data"),
            desc_pop: p("desc_pop"),
            rptr: p("rptr"),
            ring_raddr: p("ring_raddr"),
            ring_rdata: p("ring_rdata"),
            lerr_empty: p("lerr_empty"),
            lerr_data: p("lerr_data"),
            lerr_pop: p("lerr_pop"),
            qpc_addr: p("qpc_addr"),
            qpc_data: p("qpc_data"),
            rxs_addr: p("rxs_addr"),
            rxs_data: p("rxs_data"),
            rxs_we: p("rxs_we"),
            rxs_waddr: p("rxs_waddr"),
            rxs_wdata: p("rxs_wdata"),
            rqpi_addr: p("rqpi_addr"),
            rqpi_data: p("rqpi_data"),
            sqpi_data: p("sqpi_data"),
            mr_addr: p("mr_addr"),
            mr_data: p("mr_data"),
            cq_addr: p("cq_addr"),
            cq_data: p("cq_data"),
            cqpi_data: p("cqpi_data"),
            cqpi_we: p("cqpi_we"),
            cqpi_wdata: p("cqpi_wdata"),
            qperr_we: p("qperr_we"),
            qperr_waddr: p("qperr_waddr"),
            rqs_addr: p("rqs_addr"),
            rqs_data: p("rqs_data"),
            rqs_we: p("rqs_we"),
            rqs_waddr: p("rqs_waddr"),
            rqs_wdata: p("rqs_wdata"),
            lack_we: p("lack_we"),
            lack_waddr: p("lack_waddr"),
            lack_wdata: p("lack_wdata"),
            cnt_ack_bad: p("cnt_ack_bad"),
            rd_valid: p("rd_valid"),
            rd_ready: p("rd_ready"),
            rd_addr: p("rd_addr"),
            rwqe_valid: p("rwqe_valid"),
            rwqe_data: p("rwqe_data"),
            rwqe_ready: p("rwqe_ready"),
            wr_valid: p("wr_valid"),
            wr_ready: p("wr_ready"),
            wr_addr: p("wr_addr"),
            wr_data: p("wr_data"),
            wr_len: p("wr_len"),
            wr_lane: p("wr_lane"),
            ack_write: p("ack_write"),
            ack_data: p("ack_data"),
            ack_full: p("ack_full"),
            idle: p("idle"),
            rst_valid: p("rst_valid"),
            rst_max_paths: p("rst_max_paths"),
            cc_in: [p("rst_cc_on"), p("cc_ready")],
            spray_valid: p("spray_valid"),
            apsn: [p("apsn_we"), p("apsn_waddr"), p("apsn_wdata")],
            spray_ready: p("spray_ready"),
            spray_f: [p("spray_op"), p("spray_qpn"), p("spray_ecn"), p("spray_path"), p("spray_max_paths")],
            rst_data: p("rst_data"),
            arm_write: p("arm_write"),
            arm_data: p("arm_data"),
            arm_full: p("arm_full"),
            job_write: p("job_write"),
            job_data: p("job_data"),
            job_full: p("job_full"),
            jseq_we: p("jseq_we"),
            jseq_waddr: p("jseq_waddr"),
            jseq_wdata: p("jseq_wdata"),
            ctrlq_base: p("ctrlq_base"),
            ctrlq_size: p("ctrlq_size"),
            ctrlq_ci: p("ctrlq_ci"),
            ctrlq_reset: p("ctrlq_reset"),
            cnt: [
                p("cnt_hdr"),
                p("cnt_psn"),
                p("cnt_access"),
                p("cnt_dup"),
                p("cnt_rnr"),
                p("cnt_nak"),
                p("cnt_ack"),
                p("cnt_cqe"),
                p("cnt_inv"),
                p("cnt_ctl_drop"),
                p("cnt_ctl"),
            ],
        }
    }
}

/// What a run did.
#[derive(Default, Debug)]
struct Stats {
    cycles: u64,
    descs: u64,
    /// Requests to the path selector (ACK feedback and resets), each checked.
    spray_reqs: u64,
    placed: u64,
    dups: u64,
    naks: HashMap<u8, u64>,
    drops: u64,
    acks_in: u64,
    cqes: u64,
    bytes: u64,
    resets: u64,
    /// READ requests accepted at ePSN (job queued, ePSN moved).
    rd_req_ok: u64,
    /// Job words (accepted READs and duplicates answered again).
    rd_jobs: u64,
    /// Duplicate READs answered again / dropped by the MR check.
    rd_dup_jobs: u64,
    rd_dup_dropped: u64,
    /// Arm words written.
    arms: u64,
    /// READ response packets placed (and their bytes), gaps (PSN ahead of
    /// rd_psn), duplicates (behind rd_psn or nothing awaited), lkey failures.
    rsp_placed: u64,
    rsp_bytes: u64,
    rsp_gaps: u64,
    rsp_dups: u64,
    rsp_access: u64,
    /// READ response packets that do not fit the READ's length (dropped, `rx_inv_req`).
    rsp_len_bad: u64,
    /// HOLD words (ACKs and responses while armed) and kept MSNs.
    hold_words: u64,
    held_kept: u64,
    /// READ ends (RDONE) accepted, of them completing past the READ by a kept MSN, and refused.
    rdone: u64,
    rdone_kept: u64,
    rdone_bad: u64,
    /// READ ends ignored as completing WQEs never posted (a kept MSN beyond them).
    rdone_over: u64,
    /// Error NAKs for a WQE after the awaited READ (ignored), and for the READ (it fails).
    hold_err_ignored: u64,
    hold_err_done: u64,
    /// Requester resets while a READ was awaited.
    rst_armed: u64,
    /// Cycles `job_full` held a due job back, and `arm_full` was high.
    job_waits: u64,
    arm_full_cycles: u64,
    /// CtrlQ entries expected written, placed NAKs folded.
    ctl_entries: u64,
    folded: u64,
    /// (stimulus tag, outcome) -> count.
    cover: std::collections::BTreeMap<(String, String), u64>,
}

/// An MR table entry as the RTL stores it.
/// The low byte of an rkey for an MR whose tag is `tag` (the lkey's, its top bit flipped).
fn rkey_tag(tag: u8) -> u64 {
    (tag as u32 ^ RKEY_TAG_FLIP) as u64
}

fn mr_word(e: &Mr) -> [u32; 8] {
    let mut w = [0u64; NUM_STAGE];
    mr::VA_BASE.put(&mut w, e.va);
    mr::LENGTH.put(&mut w, e.len);
    mr::IOVA_BASE.put(&mut w, e.iova);
    mr::KEY_TAG.put(&mut w, e.tag as u64);
    mr::ACCESS.put(&mut w, e.access as u64);
    mr::VALID.put(&mut w, e.valid as u64);
    mr::PD.put(&mut w, e.pd as u64);
    qword_to_u32::<8>(&w)
}

fn qword_to_u32<const N: usize>(w: &[u64]) -> [u32; N] {
    let mut o = [0u32; N];
    for (i, x) in o.iter_mut().enumerate() {
        *x = (w[i / 2] >> (32 * (i % 2))) as u32;
    }
    o
}

fn words_to_bytes(w: &[u32]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Sparse byte-addressed host memory.
#[derive(Default, PartialEq)]
struct Mem(HashMap<u64, Vec<u8>>);

impl Mem {
    fn write(&mut self, addr: u64, bytes: &[u8]) {
        for (i, b) in bytes.iter().enumerate() {
            let a = addr.wrapping_add(i as u64);
            self.0.entry(a >> 12).or_insert_with(|| vec![0; 4096])[(a & 4095) as usize] = *b;
        }
    }
}

struct Tb {
    cfg: Cfg,
    rng: Rng,
    /// The READ stimulus's own stream (so the MR table, the QPs and the
    /// first draws of the other stimulus stay those of the seed before READ).
    rrng: Rng,
    m: Model,
    p: Ports,
    qps: Vec<Qp>,
    qpcs: Vec<QpcInfo>,
    mrs: Vec<Mr>,
    /// MRs the host may invalidate / revalidate at quiescent points.
    flip_mrs: Vec<usize>,
    /// Tables as the RTL's words.
    qpc_tab: Vec<[u32; 14]>,
    mr_tab: Vec<[u32; 8]>,
    cq_tab: Vec<[u32; 4]>,
    rxs_tab: Vec<[u32; RXS_WORDS]>,
    rqs_tab: Vec<u32>,
    rqpi_tab: Vec<u64>,
    sqpi_tab: Vec<u64>,
    cqpi_tab: Vec<u64>,
    ring: Vec<[u8; 64]>,
    /// Registered RAM outputs.
    qpc_q: [u32; 14],
    mr_q: [u32; 8],
    cq_q: [u32; 4],
    rxs_q: [u32; RXS_WORDS],
    rqs_q: u32,
    rqpi_q: u64,
    sqpi_q: u64,
    cqpi_q: u64,
    ring_q: [u8; 64],
    /// Model state.
    rxs: Vec<Rxs>,
    cq_pi: Vec<u64>,
    cqs: Vec<(u64, u64, u32)>,
    cnt_model: Cnt,
    cnt_rtl: Cnt,
    mem_model: Mem,
    mem_rtl: Mem,
    /// Descriptor FIFO, with each descriptor's QPN and expected RX state after it.
    fifo: VecDeque<(Desc, usize, Rxs)>,
    /// Descriptor being processed: (desc, qpn, state after, start of its beats).
    cur: Option<(Desc, usize, Rxs)>,
    cur_done: u64,
    expect: VecDeque<(u64, Ev)>,
    /// Expected receive CQEs, requester CQEs and QP error-flag writes, each
    /// in order (streams of their own, see the module doc).
    expect_cqe: VecDeque<(u64, Ev)>,
    expect_req_cqe: VecDeque<(u64, Ev)>,
    expect_qperr: VecDeque<(u64, Ev)>,
    /// Expected lACK table writes, in order (the ACK receiver writes one
    /// before the first completion of an ACK, or at a requester reset).
    expect_lack: VecDeque<(u64, Ev)>,
    /// Receive-WQE completions: (ready cycle, data).
    dma: VecDeque<(u64, [u8; 64])>,
    rst_q: VecDeque<u64>,
    /// Job count table writes a responder reset makes (its QP, the count one up): jobs queued before are stale.
    rst_jseq: VecDeque<(u64, u64)>,
    rst_busy: bool,
    /// The path selector's requests owed by the ACK receiver, in order: ACK
    /// feedback (qpn, CE, echoed entropy) and requester resets (qpn, max_paths).
    want_spray_ack: VecDeque<(u64, u64, u64)>,
    want_spray_rst: VecDeque<(u64, u64)>,
    /// Acknowledged-PSN writes owed by the ACK receiver, in order: every word's (qpn, ePSN).
    want_apsn: VecDeque<(u64, u64)>,
    wp: u64,
    last_rptr: u64,
    desc_id: u64,
    cycle: u64,
    last_busy: u64,
    last_progress: u64,
    hist: VecDeque<String>,
    st: Stats,
    /// The ACK receiver's per-QP MSN (and its MSN_PSN) kept while a READ is awaited (`HeldPack`).
    held: Vec<Option<(u64, u64)>>,
    /// The ACK receiver's per-QP placed-NAK chain.
    fold: Vec<Fold>,
    /// CtrlQ producer index (the model's, as the completion writer will
    /// have it) and the consumer index the harness shows.
    ctl_pi: u64,
    ctl_ci: u64,
    /// The current batch carries READ stimulus.
    read_batch: bool,
    /// Cycles left of the FIFO shown empty after an arm word.
    arm_gap: u64,
    /// `arm_full` as last seen.
    arm_full_q: bool,
    /// QPs whose arm word was written since the last pop (their RX state may be written).
    arm_pending: Vec<usize>,
    /// `job_full` in a stretch of mostly high.
    job_stall: bool,
}

impl Tb {
    fn new(cfg: Cfg, seed: u64) -> Tb {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x7E5B);
        let mut rrng = Rng(seed.wrapping_mul(0xD1B5_4A32_D192_ED03) ^ 0x4EAD);
        let m = Model::new("resp").unwrap_or_else(|e| panic!("{e}"));
        let p = Ports::new(&m);
        let pds = [0x11u16 + rng.below(0x100) as u16, 0x300 + rng.below(0x100) as u16];

        // MR table: valid MRs of both PDs with every access mix, a few invalid entries.
        let mut slots: Vec<usize> = (0..NMR).collect();
        rng.shuffle(&mut slots);
        let mut mrs = vec![Mr::default(); NMR];
        for e in mrs.iter_mut() {
            *e = Mr {
                va: rng.next(),
                len: rng.next(),
                iova: rng.next(),
                tag: rng.next() as u8,
                access: 7,
                valid: false,
                pd: pds[0],
            };
        }
        let pmtu = 1u64 << cfg.pmtu_log2;
        for (k, &i) in slots.iter().take(40).enumerate() {
            let len = match rng.below(4) {
                0 => rng.range(1, pmtu * 2),
                1 => pmtu * rng.range(1, cfg.max_pkts),
                _ => rng.range(pmtu, pmtu * (cfg.max_pkts + 2)),
            };
            let va = if k % 13 == 0 { 0u64.wrapping_sub(len) } else { rng.below(1 << 47) };
            let access = match k % 5 {
                0 => Access::LOCAL_WRITE.bits(),
                1 => Access::REMOTE_WRITE.bits(),
                2 => Access::REMOTE_READ.bits(),
                _ => (Access::LOCAL_WRITE | Access::REMOTE_WRITE).bits(),
            };
            mrs[i] = Mr {
                va,
                len,
                iova: 0x10_0000_0000 + ((i as u64) << 24) + rng.below(1 << 12),
                tag: rng.next() as u8,
                access,
                valid: k % 11 != 10,
                pd: pds[k % 2],
            };
        }
        // READ: MRs of 4 GiB and more with REMOTE_READ only (READs up to
        // 2^32 - 1 bytes, ePSN moving by up to 2^24 packets; one ending at
        // the top of the address space), from the READ stream.
        for (k, &i) in slots[40..44].iter().enumerate() {
            let len = (1u64 << 32) + rrng.below(1 << 32);
            mrs[i] = Mr {
                va: if k == 2 { 0u64.wrapping_sub(len) } else { rrng.below(1 << 47) },
                len,
                iova: 0x10_0000_0000 + ((i as u64) << 24) + rrng.below(1 << 12),
                tag: rrng.next() as u8,
                access: Access::REMOTE_READ.bits(),
                valid: true,
                pd: pds[k % 2],
            };
        }
        let mr_tab: Vec<[u32; 8]> = mrs.iter().map(mr_word).collect();
        let flip_mrs: Vec<usize> = slots[20..40].to_vec();

        // CQs.
        let mut cqns: Vec<usize> = (0..NCQ).collect();
        rng.shuffle(&mut cqns);
        cqns.truncate(4);
        let mut cq_tab = vec![[0u32; 4]; NCQ];
        let mut cqpi_tab = vec![0u64; NCQ];
        let mut cqs = Vec::new();
        for &c in &cqns {
            let base = 0x20_0000_0000 + ((c as u64) << 16);
            let log2 = rng.range(1, 4) as u32;
            let mut w = [0u64; NUM_STAGE];
            cq::BASE.put(&mut w, base);
            cq::LOG2.put(&mut w, log2 as u64);
            cq_tab[c] = qword_to_u32::<4>(&w);
            cqpi_tab[c] = near_wrap(&mut rng, 32);
            cqs.push((c as u64, base, log2));
        }

        // QPs: unconfigured QPNs are not in RTR but have a peer too.
        let mut qpcs = vec![QpcInfo::default(); NQPN];
        for q in qpcs.iter_mut() {
            q.mac = rng.next() & ((1 << 48) - 1);
            q.ip = rng.next() & 0xFFFF_FFFF;
            q.pd = pds[0];
            q.rq_log2 = 2;
            q.rq_base = 0x30_0000_0000;
            q.send_cqn = cqns[0] as u64;
            q.recv_cqn = cqns[0] as u64;
        }
        let mut qpns: Vec<usize> = (0..cfg.qpn_max - 1).collect();
        rng.shuffle(&mut qpns);
        qpns.truncate(cfg.nq - 1);
        qpns.push(cfg.qpn_max - 1);
        let mut rxs = vec![Rxs::default(); NQPN];
        let mut rqpi_tab = vec![0u64; NQPN];
        let mut sqpi_tab = vec![0u64; NQPN];
        let mut qps = Vec::new();
        for &qpn in &qpns {
            let q = &mut qpcs[qpn];
            q.rtr = true;
            q.remote_qpn = rng.below(1 << 24);
            q.send_cqn = cqns[rng.below(4) as usize] as u64;
            q.recv_cqn = cqns[rng.below(4) as usize] as u64;
            q.rq_log2 = rng.range(0, 4) as u32;
            q.rq_base = 0x30_0000_0000 + ((qpn as u64) << 16) + 32 * rng.below(64);
            q.pd = pds[rng.below(2) as usize];
            let r = &mut rxs[qpn];
            r.epsn = near_wrap(&mut rng, 24);
            r.msn = near_wrap(&mut rng, 24);
            r.rq_ci = near_wrap(&mut rng, 16);
            r.req_acked = near_wrap(&mut rng, 24);
            rqpi_tab[qpn] = r.rq_ci;
            sqpi_tab[qpn] = (r.req_acked + rng.below(4)) & M16;
            qps.push(Qp { qpn, msg: None, rq: HashMap::new(), ssn: rng.below(1 << 24), rd: None });
        }
        for &qpn in &qpns {
            rxs[qpn].rd_psn = near_wrap(&mut rrng, 24);
            rxs[qpn].rd_jseq = rrng.below(8);
            rxs[qpn].rd_end = near_wrap(&mut rrng, 24);
            rxs[qpn].rd_jend = near_wrap(&mut rrng, 24);
            rxs[qpn].rd_jv = rrng.pct(50);
        }
        let qpc_tab: Vec<[u32; 14]> = qpcs
            .iter()
            .map(|q| {
                let mut w = [0u64; NUM_STAGE];
                qpc::RTS.put(&mut w, q.rtr as u64);
                qpc::RTR.put(&mut w, q.rtr as u64);
                qpc::PMTU_LOG2.put(&mut w, cfg.pmtu_log2 as u64);
                qpc::REMOTE_QPN.put(&mut w, q.remote_qpn);
                qpc::SEND_CQN.put(&mut w, q.send_cqn);
                qpc::RECV_CQN.put(&mut w, q.recv_cqn);
                qpc::SQ_BASE.put(&mut w, 0x40_0000_0000);
                qpc::RQ_BASE.put(&mut w, q.rq_base);
                qpc::SQ_LOG2.put(&mut w, 4);
                qpc::RQ_LOG2.put(&mut w, q.rq_log2 as u64);
                qpc::PD.put(&mut w, q.pd as u64);
                qpc::DEST_IP.put(&mut w, q.ip);
                qpc::UDP_SPORT.put(&mut w, 0xC000);
                qpc::DEST_MAC.put(&mut w, q.mac);
                qword_to_u32::<14>(&w)
            })
            .collect();
        let rxs_tab = rxs.iter().map(|r| r.pack()).collect();
        let rqs_tab = rxs.iter().map(|r| r.pack_req()).collect();
        let mut ring = vec![[0u8; 64]; RING as usize];
        for b in ring.iter_mut() {
            for x in b.iter_mut() {
                *x = rng.next() as u8;
            }
        }
        let mut cq_pi = vec![0u64; NCQ];
        cq_pi.copy_from_slice(&cqpi_tab);
        let wp = 0;
        Tb {
            cfg,
            rng,
            rrng,
            m,
            p,
            qps,
            qpcs,
            mrs,
            flip_mrs,
            qpc_tab,
            mr_tab,
            cq_tab,
            rxs_tab,
            rqs_tab,
            rqpi_tab,
            sqpi_tab,
            cqpi_tab,
            ring,
            qpc_q: [0; 14],
            mr_q: [0; 8],
            cq_q: [0; 4],
            rxs_q: [0; RXS_WORDS],
            rqs_q: 0,
            rqpi_q: 0,
            sqpi_q: 0,
            cqpi_q: 0,
            ring_q: [0; 64],
            rxs,
            cq_pi,
            cqs,
            cnt_model: Cnt::default(),
            cnt_rtl: Cnt::default(),
            mem_model: Mem::default(),
            mem_rtl: Mem::default(),
            fifo: VecDeque::new(),
            cur: None,
            cur_done: 0,
            expect: VecDeque::new(),
            expect_cqe: VecDeque::new(),
            expect_req_cqe: VecDeque::new(),
            expect_qperr: VecDeque::new(),
            expect_lack: VecDeque::new(),
            dma: VecDeque::new(),
            rst_q: VecDeque::new(),
            rst_jseq: VecDeque::new(),
            rst_busy: false,
            want_spray_ack: VecDeque::new(),
            want_spray_rst: VecDeque::new(),
            want_apsn: VecDeque::new(),
            wp,
            last_rptr: 0,
            desc_id: 0,
            cycle: 0,
            last_busy: 0,
            last_progress: 0,
            hist: VecDeque::new(),
            st: Stats::default(),
            held: vec![None; NQPN],
            fold: vec![Fold::default(); NQPN],
            ctl_pi: 0,
            ctl_ci: 0,
            read_batch: false,
            arm_gap: 0,
            arm_full_q: false,
            arm_pending: Vec::new(),
            job_stall: false,
        }
    }

    /// Runs `f` with the READ stream as `self.rng` (READ stimulus draws
    /// from its own stream, through the same generator code).
    fn with_rrng<T>(&mut self, f: impl FnOnce(&mut Tb) -> T) -> T {
        std::mem::swap(&mut self.rng, &mut self.rrng);
        let r = f(self);
        std::mem::swap(&mut self.rng, &mut self.rrng);
        r
    }

    fn note(&mut self, s: String) {
        if self.hist.len() == 40 {
            self.hist.pop_front();
        }
        self.hist.push_back(format!("[{}] {s}", self.cycle));
    }

    fn fail(&self, what: String) -> String {
        let h: Vec<&str> = self.hist.iter().map(|s| s.as_str()).collect();
        format!("cycle {}: {what}\nrecent history:\n  {}", self.cycle, h.join("\n  "))
    }

    fn pmtu(&self) -> u64 {
        1 << self.cfg.pmtu_log2
    }

    // ---------------------------------------------------------------- model

    fn cqe_ev(&mut self, cqn: u64, idx: u64, status: u8, op: u8, len: u64, qpn: usize) -> Ev {
        self.cqe_ev_imm(Cqe { cqn, idx, status, op, len, qpn, imm: 0, flags: 0 })
    }

    fn cqe_ev_imm(&mut self, c: Cqe) -> Ev {
        self.cnt_model.cqe += 1;
        self.st.cqes += 1;
        Ev::Cqe(c)
    }

    /// The DMA write of CQE `c` at its CQ's producer index now:
    /// `(address, bytes, (cqn, new producer index))`.
    fn cqe_write(&self, c: &Cqe) -> (u64, Vec<u8>, (u64, u64)) {
        let (_, base, log2) = *self.cqs.iter().find(|x| x.0 == c.cqn).expect("cq");
        let pi = self.cq_pi[c.cqn as usize];
        let owner = if (pi >> log2) & 1 == 1 { 0 } else { 1 };
        let w = pack_words(
            CqePack::FIELDS,
            256,
            &[
                ("wqe_index", c.idx & M16),
                ("status", c.status as u64),
                ("opcode", c.op as u64),
                ("qpn", c.qpn as u64),
                ("byte_len", c.len),
                ("imm", c.imm),
                ("flags", c.flags as u64),
                ("owner", owner),
            ],
        );
        let addr = base + ((pi & ((1 << log2) - 1)) << 5);
        (addr, words_to_bytes(&w), (c.cqn, (pi + 1) & 0xFFFF_FFFF))
    }

    fn ack_ev(&self, d: &Desc, q: &QpcInfo, syn: u64, s: &Rxs) -> Ev {
        Ev::Ack(pack_words(
            TxDescPack::FIELDS,
            TxDescPack::WIDTH,
            &[
                ("is_ack", 1),
                ("dst_mac", d.src_mac),
                ("dst_ip", d.src_ip),
                ("sport", d.sport),
                ("opcode", opcode::ACK as u64),
                ("dqpn", q.remote_qpn),
                ("psn", d.psn),
                ("ssn", d.ssn),
                ("psn_offset", d.psn_offset),
                ("ts", d.ts),
                ("syndrome", syn),
                ("msn", s.msn),
                ("epsn", s.epsn),
                ("ecn_echo", d.ecn),
                // Where message MSN starts: ePSN, or before it by the packets of a half-received message.
                ("msn_psn", if s.in_msg { s.epsn.wrapping_sub(s.msg_pkts) & M24 } else { s.epsn }),
                // SACK: nothing held past ePSN without selective repeat; the
                // segment is the second when the PSN answered is 64 to 2^23 past ePSN.
                ("ooo", s.ooo_n),
                (
                    "sack_base",
                    if (64..0x80_0000).contains(&(d.psn.wrapping_sub(s.epsn) & M24)) {
                        (s.epsn + 64) & M24
                    } else {
                        s.epsn
                    },
                ),
                ("bytes_rx", s.bytes_rx),
            ],
        ))
    }

    /// Receive-WQE MR check (`RwqeMrChk`); the buffer's IOVA if it passes.
    fn rwqe_ok(&self, q: &QpcInfo, w: &Rwqe) -> Option<u64> {
        let e = self.mrs[((w.lkey >> 8) & 0xFF) as usize];
        let off = w.addr.wrapping_sub(e.va);
        let ok = e.valid
            && e.pd == q.pd
            && e.tag as u64 == w.lkey & 0xFF
            && w.lkey >> 16 == 0
            && e.access & 1 != 0
            && w.addr >= e.va
            && off <= e.len
            && w.len <= e.len - off;
        ok.then(|| e.iova.wrapping_add(off))
    }

    /// WRITE MR check (`WrMrChk`): the packet's destination if it passes.
    fn write_ok(&self, q: &QpcInfo, d: &Desc) -> Option<u64> {
        let e = self.mrs[((d.rkey >> 8) & 0xFF) as usize];
        let off = d.psn_offset << self.cfg.pmtu_log2;
        let msg_va = d.va.wrapping_sub(off);
        let msg_off = msg_va.wrapping_sub(e.va);
        let ok = e.valid
            && e.pd == q.pd
            && rkey_tag(e.tag) == d.rkey & 0xFF
            && d.rkey >> 16 == 0
            && e.access & 2 != 0
            && msg_va >= e.va
            && msg_off <= e.len
            && d.msg_len <= e.len - msg_off;
        ok.then(|| e.iova.wrapping_add(d.va.wrapping_sub(e.va)))
    }

    /// READ request MR check (`RdMrChk`): the whole READ inside an MR of the
    /// QP's PD with REMOTE_READ; a zero-length READ is not checked.
    fn read_ok(&self, q: &QpcInfo, d: &Desc) -> bool {
        let e = self.mrs[((d.rkey >> 8) & 0xFF) as usize];
        let off = d.va.wrapping_sub(e.va);
        d.msg_len == 0
            || (e.valid
                && e.pd == q.pd
                && rkey_tag(e.tag) == d.rkey & 0xFF
                && d.rkey >> 16 == 0
                && e.access & 4 != 0
                && d.va >= e.va
                && off <= e.len
                && d.msg_len <= e.len - off)
    }

    /// READ response MR check (`RspMrChk`, the packet has a payload): the
    /// lkey it echoes, LOCAL_WRITE, the packet inside the MR, at most a
    /// PMTU; its destination if it passes.
    fn rsp_ok(&self, q: &QpcInfo, d: &Desc) -> Option<u64> {
        let e = self.mrs[((d.rkey >> 8) & 0xFF) as usize];
        let off = d.va.wrapping_sub(e.va);
        let ok = e.valid
            && e.pd == q.pd
            && e.tag as u64 == d.rkey & 0xFF
            && d.rkey >> 16 == 0
            && e.access & 1 != 0
            && d.va >= e.va
            && off <= e.len
            && d.plen <= e.len - off
            && d.plen <= self.pmtu();
        ok.then(|| e.iova.wrapping_add(off))
    }

    /// The job word of an accepted (or duplicate) READ request: a
    /// `SEND_OP_READ_RESP` WQE naming our memory (VA, rkey as lkey) and the
    /// requester's (its local address and lkey), at the request's SSN and
    /// PSN; its flags byte `jflags`: the QP's restart count, and `JOB_FOLLOWS`.
    fn job_ev(&self, qpn: usize, d: &Desc, jflags: u64) -> Ev {
        let wqe = pack_words(
            WqeHeadPack::FIELDS,
            WqeHeadPack::WIDTH,
            &[
                ("opcode", SEND_OP_READ_RESP as u64),
                ("flags", jflags),
                ("length", d.msg_len),
                ("local_addr", d.va),
                ("lkey", d.rkey ^ RKEY_TAG_FLIP as u64),
                ("rkey", d.lkey),
                ("remote_addr", d.laddr),
            ],
        );
        let mut w = pack_words(
            RewindPack::FIELDS,
            RewindPack::WIDTH,
            &[("qpn", qpn as u64), ("ssn", d.ssn), ("psn", d.psn), ("msg_off", 0), ("one", 1)],
        );
        let at: usize = RewindPack::FIELDS.iter().take_while(|f| f.0 != "wqe").map(|f| f.1).sum();
        for b in 0..WqeHeadPack::WIDTH {
            if wqe[b / 32] >> (b % 32) & 1 != 0 {
                w[(at + b) / 32] |= 1 << ((at + b) % 32);
            }
        }
        Ev::Job(w)
    }

    /// A report for the host's slow path: a CtrlQ entry at the producer
    /// index if the ring has room, else dropped.
    fn ctl_report(&mut self, kind: u8, qpn: usize, w: &AckWord, plen: u64, evs: &mut Vec<Ev>) {
        let size = 1u64 << self.cfg.ctrlq_log2;
        if self.cfg.ctrlq_log2 == 0 || self.ctl_pi.wrapping_sub(self.ctl_ci) & 0xFFFF_FFFF >= size {
            self.cnt_model.ctl_drop += 1;
            return;
        }
        let pi = self.ctl_pi;
        let owner = if (pi >> self.cfg.ctrlq_log2) & 1 == 1 { 0 } else { 1 };
        let e = pack_words(
            CtrlqPack::FIELDS,
            256,
            &[
                ("kind", kind as u64),
                // The wire's flags only (not the responder's HOLD/RDONE marks).
                ("flags", w.flags & 1),
                ("qpn", qpn as u64),
                ("psn", w.psn),
                ("epsn", w.epsn),
                ("ssn", w.ssn),
                ("psn_offset", w.psn_offset),
                ("plen", plen),
                ("imm", w.ts),
                // A NAK's report carries its SACK OOO count in the RSN field.
                ("rsn", w.ooo),
                ("owner", owner),
            ],
        );
        let addr = CTRLQ_BASE + ((pi & (size - 1)) << 5);
        evs.push(Ev::Ctl(addr, words_to_bytes(&e)));
        self.ctl_pi = (pi + 1) & 0xFFFF_FFFF;
        self.cnt_model.ctl += 1;
        self.st.ctl_entries += 1;
    }

    /// The ACK receiver (`crate::ack`) on one word of QP `qpn`: requester
    /// completions, the QP's error, CtrlQ reports, and the kept MSN of a
    /// READ wait. Returns a short outcome.
    fn ack_recv(&mut self, qpn: usize, w: AckWord, evs: &mut Vec<Ev>) -> String {
        self.want_apsn.push_back((qpn as u64, w.ooo << 24 | w.epsn));
        let q = self.qpcs[qpn];
        let mut s = self.rxs[qpn];
        let hold = w.flags & ACKIN_HOLD != 0;
        let rdone = w.flags & ACKIN_RDONE != 0;
        let rdend = w.flags & ACKIN_RDEND != 0;
        let cls = w.syn >> 5;
        let ahead = |a: u64, b: u64| {
            let x = a.wrapping_sub(b) & M24;
            x != 0 && x & 0x80_0000 == 0
        };
        // The MSN the word completes up to: a HOLD word none (its ACK MSN
        // kept if the furthest yet), a READ's end lACK's WQE, or up to the
        // kept MSN if that is further.
        let (mut msn_e, mut mpsn_e) = (w.msn, w.msn_psn);
        let mut pre = "";
        if hold {
            self.st.hold_words += 1;
            msn_e = s.req_acked;
            let d = w.msn.wrapping_sub(s.req_acked) & M24;
            let posted = self.sqpi_tab[qpn].wrapping_sub(s.req_acked) & M16;
            let in_posted = d & 0x80_0000 == 0 && d <= posted;
            if cls == 0 && d & 0x80_0000 == 0 && d > posted {
                // An MSN beyond the posted WQEs: not kept, counted.
                self.cnt_model.hdr += 1;
            }
            if cls == 0 && in_posted && self.held[qpn].is_none_or(|(k, _)| ahead(w.msn, k)) {
                self.held[qpn] = Some((w.msn, w.msn_psn));
                self.st.held_kept += 1;
                pre = "HOLD+kept: ";
            } else {
                pre = "HOLD: ";
            }
        } else if rdone {
            pre = "READ end: ";
            if w.msn != (s.req_acked + 1) & M24 {
                self.cnt_model.hdr += 1;
                self.st.rdone_bad += 1;
                return "READ end: not for lACK's WQE: ignored".into();
            }
            // Only the last READ in flight's end applies the kept MSN (it may cover READs still awaited).
            if let Some((k, kp)) = if rdend { self.held[qpn].take() } else { None } {
                if ahead(k, w.msn) {
                    (msn_e, mpsn_e) = (k, kp);
                    pre = "READ end+kept: ";
                }
            }
        }
        let dist = msn_e.wrapping_sub(s.req_acked) & M24;
        let posted = self.sqpi_tab[qpn].wrapping_sub(s.req_acked) & M16;
        if s.req_err || dist & 0x80_0000 != 0 {
            return format!("{pre}ACK ignored (QP failed or stale)");
        }
        if dist > posted || (dist == posted && cls != 0) {
            self.cnt_model.hdr += 1;
            if rdone {
                self.st.rdone_over += 1;
            }
            return format!("{pre}ACK ignored (beyond posted)");
        }
        if rdone {
            self.st.rdone += 1;
            if msn_e != w.msn {
                self.st.rdone_kept += 1;
            }
        }
        if s.req_acked != msn_e {
            // The acknowledged position for the turn engine, before the first completion.
            evs.push(Ev::Lack(qpn, msn_e, mpsn_e));
        }
        while s.req_acked != msn_e {
            let e = self.cqe_ev(q.send_cqn, s.req_acked, cqe_status::SUCCESS, cqe_op::SEND, 0, qpn);
            evs.push(e);
            s.req_acked = (s.req_acked + 1) & M24;
        }
        let err_nak = cls == 3 && w.syn as u8 != syndrome::NAK_PSN_SEQ;
        if err_nak && hold && w.msn != s.req_acked {
            // An error NAK for a WQE after the awaited READ: ignored.
            self.cnt_model.hdr += 1;
            self.st.hold_err_ignored += 1;
            return "HOLD: error NAK behind the awaited READ: ignored".into();
        }
        if cls == 3 || cls == 1 {
            self.cnt_model.nak += 1;
        }
        let pending = if self.fold[qpn].valid { self.fold[qpn].run } else { 0 };
        if err_nak {
            let st = match w.syn as u8 {
                syndrome::NAK_REM_ACCESS => cqe_status::REM_ACCESS_ERR,
                syndrome::NAK_REM_OP => cqe_status::REM_OP_ERR,
                _ => cqe_status::REM_INV_REQ_ERR,
            };
            evs.push(Ev::QpErr(qpn));
            if hold {
                self.st.hold_err_done += 1;
            }
            let e = self.cqe_ev(q.send_cqn, s.req_acked, st, cqe_op::SEND, 0, qpn);
            evs.push(e);
            s.req_acked = (s.req_acked + 1) & M24;
            s.req_err = true;
        } else if cls == 1 {
            // RNR: reported; the placed-NAK chain ends.
            self.fold[qpn] = Fold::default();
            self.ctl_report(ctrlq_kind::REQ_RNR, qpn, &w, pending, evs);
        } else if cls == 3 {
            // A PSN sequence NAK: reported, unless it is placed and follows
            // the chain's last (same ePSN, next PSN, same 16 us, fewer than 15 folded).
            let f = self.fold[qpn];
            let placed = w.flags & 1 != 0;
            let tsc = (w.ts >> 12) & 0x7FF;
            let folds =
                placed && f.valid && f.epsn == w.epsn && w.psn == (f.last + 1) & M24 && f.run != 15 && f.tsc == tsc;
            self.fold[qpn] = Fold {
                valid: placed,
                epsn: w.epsn,
                last: w.psn,
                run: if folds { f.run + 1 } else { 0 },
                tsc: if folds { f.tsc } else { tsc },
            };
            if folds {
                self.st.folded += 1;
            } else {
                self.ctl_report(ctrlq_kind::REQ_NAK_PSN, qpn, &w, pending, evs);
            }
        }
        self.rxs[qpn] = s;
        format!("{pre}ACK processed, acked up to {:#x}{}", s.req_acked, if s.req_err { ", QP failed" } else { "" })
    }

    /// A READ response packet (the requester side of the responder block):
    /// placed only if the QP awaits it next.
    fn model_rsp(&mut self, d: &Desc, qpn: usize, mut evs: Vec<Ev>) -> (Vec<Ev>, String) {
        let q = self.qpcs[qpn];
        let s = self.rxs[qpn];
        let last = d.op == opcode::READ_RESPONSE_LAST || d.op == opcode::READ_RESPONSE_ONLY;
        let diff = d.psn.wrapping_sub(s.rd_psn) & M24;
        if !s.rd_on {
            self.cnt_model.dup += 1;
            self.st.rsp_dups += 1;
            return (evs, "READ response dropped (no READ awaited)".into());
        }
        // The packet as an ACK word: its SSN as MSN, HOLD, rd_psn as ePSN.
        let w = AckWord {
            msn: d.ssn,
            syn: syndrome::ACK as u64,
            flags: ACKIN_HOLD,
            psn: d.psn,
            epsn: s.rd_psn,
            ssn: d.ssn,
            psn_offset: d.psn_offset,
            ts: 0,
            msn_psn: (d.psn + 1) & M24,
            ooo: 0,
        };
        if diff & 0x80_0000 != 0 {
            // Behind the awaited PSN: dropped, a HOLD word that only restarts the timer.
            self.cnt_model.dup += 1;
            self.st.rsp_dups += 1;
            let r = self.ack_recv(qpn, w, &mut evs);
            return (evs, format!("READ response dropped (behind the awaited PSN): {r}"));
        }
        if diff != 0 {
            // A packet before it was lost: a PSN sequence NAK at rd_psn.
            self.cnt_model.psn += 1;
            self.st.rsp_gaps += 1;
            let r = self.ack_recv(qpn, AckWord { syn: syndrome::NAK_PSN_SEQ as u64, ..w }, &mut evs);
            return (evs, format!("READ response gap reported: {r}"));
        }
        // Only a packet that fits the READ's length (RETH) at its PSN_OFFSET is placed, and only the last ends it.
        let (pmtu, off) = (self.pmtu(), d.psn_offset << self.pmtu().trailing_zeros());
        let end = off + d.plen;
        if d.plen > pmtu || (!last && d.plen != pmtu) || end > d.msg_len || (last && end != d.msg_len) {
            self.cnt_model.inv += 1;
            self.st.rsp_len_bad += 1;
            return (evs, "READ response dropped (does not fit the READ's length)".into());
        }
        let mut dest = None;
        if d.plen != 0 {
            match self.rsp_ok(&q, d) {
                Some(a) => dest = Some(a),
                None => {
                    self.cnt_model.access += 1;
                    self.st.rsp_access += 1;
                    return (evs, "READ response dropped (lkey)".into());
                }
            }
        }
        if let Some(a) = dest {
            self.place(a, &d.payload, &mut evs);
            self.st.rsp_bytes += d.plen;
        }
        self.st.rsp_placed += 1;
        let mut u = s;
        u.rd_psn = (s.rd_psn + 1) & M24;
        // The wait ends with the packet before rd_end (the end of the last READ armed), LAST or not.
        let ends = u.rd_psn == s.rd_end;
        if ends {
            u.rd_on = false;
        }
        self.rxs[qpn] = u;
        let w = if last {
            let flags = ACKIN_RDONE | if ends { ACKIN_RDEND } else { 0 };
            AckWord { msn: (d.ssn + 1) & M24, flags, epsn: u.rd_psn, ..w }
        } else {
            AckWord { epsn: u.rd_psn, ..w }
        };
        let r = self.ack_recv(qpn, w, &mut evs);
        let at = dest.map(|a| format!(" at {a:#x}")).unwrap_or_default();
        (evs, format!("READ response placed {} bytes{at}{}; {r}", d.plen, if last { ", READ done" } else { "" }))
    }

    fn place(&mut self, dest: u64, payload: &[u8], evs: &mut Vec<Ev>) {
        for (i, c) in payload.chunks(64).enumerate() {
            let a = dest.wrapping_add(64 * i as u64);
            self.mem_model.write(a, c);
            evs.push(Ev::Wr(a, c.to_vec(), None));
        }
        self.st.bytes += payload.len() as u64;
    }

    /// The reference model: the expected side effects of descriptor `d`
    /// (and the RX-state update), given the tables as they are now. Returns
    /// the events and a short outcome.
    fn model(&mut self, d: &Desc) -> (Vec<Ev>, String) {
        let mut evs = Vec::new();
        let qpn = (d.dqpn & 0xFF) as usize;
        let q = self.qpcs[qpn];
        let pmtu = self.pmtu();
        if d.dqpn >> 8 != 0 || d.src_mac != q.mac || d.src_ip != q.ip {
            self.cnt_model.hdr += 1;
            self.st.drops += 1;
            return (evs, "drop (QPN/peer)".into());
        }
        let s = self.rxs[qpn];
        if d.op == opcode::ACK {
            self.cnt_model.ack += 1;
            if d.psn_offset & ack_flags::NO_ECHO as u64 == 0 {
                self.want_spray_ack.push_back((
                    qpn as u64,
                    (d.psn_offset >> 8 & 0xFF == IP_ECN_CE as u64) as u64,
                    d.psn_offset >> 16 & 0xFF,
                ));
            }
            self.st.acks_in += 1;
            // The ACK's fields as the RX parser leaves them in the request
            // fields they overlap; while the QP awaits a READ, HOLD (the
            // wire's flags but PLACED masked off).
            let w = AckWord {
                msn: d.msn,
                syn: d.syn,
                flags: (d.psn_offset & 1) | if s.rd_on { ACKIN_HOLD } else { 0 },
                psn: d.psn,
                epsn: (d.ts >> 32) & M24,
                ssn: d.va & M24,
                psn_offset: d.rkey & M24,
                ts: d.ssn & M24,
                msn_psn: d.imm & M24,
                ooo: if d.rsn >> 12 != 0 { 0xFFF } else { d.rsn },
            };
            let r = self.ack_recv(qpn, w, &mut evs);
            return (evs, r);
        }
        if Opcode::from(d.op).is_read_response() {
            return self.model_rsp(d, qpn, evs);
        }
        let op = Opcode::from(d.op);
        let (is_send, is_write, first, last, imm) =
            (op.is_send(), op.is_write(), op.is_first(), op.is_last(), op.has_imm());
        let is_read = op.is_read_request();
        if !(is_send || is_write || is_read) || !q.rtr || s.resp_err {
            self.cnt_model.hdr += 1;
            self.st.drops += 1;
            return (evs, "drop (opcode/RTR/responder stopped)".into());
        }
        let diff = d.psn.wrapping_sub(s.epsn) & M24;
        let nak = |tb: &mut Tb, evs: &mut Vec<Ev>, syn: u8, st: &Rxs| {
            evs.push(tb.ack_ev(d, &q, syn as u64, st));
            *tb.st.naks.entry(syn).or_default() += 1;
            if [syndrome::NAK_INV_REQ, syndrome::NAK_REM_ACCESS, syndrome::NAK_REM_OP].contains(&syn) {
                // The responder writes back the state it holds, with placement held off.
                let req = tb.rxs[qpn];
                tb.rxs[qpn] = Rxs { sr_hold: true, req_err: req.req_err, req_acked: req.req_acked, ..*st };
            }
        };
        if is_read {
            // A READ request: behind ePSN answered again (or dropped) with
            // no ACK and no state change; ahead NAKed (never placed); at
            // ePSN checked and queued as a job, ePSN past its packets.
            // Each job carries the QP's restart count: one up if the job is
            // not ahead of the QP's newest (a resent READ; the send path drops
            // the jobs queued before it), else the same (a READ run's jobs).
            let job = self.read_ok(&q, d);
            let jd = d.psn.wrapping_sub(s.rd_jend) & M24;
            let restart = s.rd_jv && jd & 0x80_0000 != 0;
            let follows = s.rd_jv && jd == 0;
            let jseq = if restart { (s.rd_jseq + 1) & 7 } else { s.rd_jseq };
            // The job's flags byte: the count, and whether it follows the QP's previous job.
            let jflags = jseq | if follows { JOB_FOLLOWS } else { 0 };
            // Packets of its response: one per PMTU, at least one (24-bit PSN space).
            let npkts = if d.msg_len == 0 { 1 } else { (d.msg_len + pmtu - 1) >> self.cfg.pmtu_log2 };
            if job {
                let tag = if restart {
                    "restart"
                } else if follows {
                    "follows"
                } else {
                    "new run"
                };
                *self.st.cover.entry(("job".into(), tag.into())).or_default() += 1;
            }
            if diff & 0x80_0000 != 0 {
                self.cnt_model.dup += 1;
                self.st.dups += 1;
                if d.plen != 0 {
                    self.st.rd_dup_dropped += 1;
                    return (evs, "duplicate READ dropped (payload)".into());
                }
                if job {
                    evs.push(self.job_ev(qpn, d, jflags));
                    self.st.rd_jobs += 1;
                    self.st.rd_dup_jobs += 1;
                    self.rxs[qpn].rd_jseq = jseq;
                    self.rxs[qpn].rd_jend = (d.psn + npkts) & M24;
                    self.rxs[qpn].rd_jv = true;
                    return (evs, "duplicate READ answered again".into());
                }
                self.st.rd_dup_dropped += 1;
                return (evs, "duplicate READ dropped (MR check)".into());
            }
            if diff != 0 {
                self.cnt_model.psn += 1;
                nak(self, &mut evs, syndrome::NAK_PSN_SEQ, &s);
                return (evs, "NAK PSN sequence".into());
            }
            if s.in_msg || d.plen != 0 {
                self.cnt_model.inv += 1;
                nak(self, &mut evs, syndrome::NAK_INV_REQ, &s);
                return (evs, "NAK INV_REQ".into());
            }
            if !job {
                self.cnt_model.access += 1;
                nak(self, &mut evs, syndrome::NAK_REM_ACCESS, &s);
                return (evs, "NAK REM_ACCESS".into());
            }
            evs.push(self.job_ev(qpn, d, jflags));
            self.st.rd_jobs += 1;
            self.st.rd_req_ok += 1;
            let mut u = s;
            u.epsn = (s.epsn + npkts) & M24;
            u.msn = (s.msn + 1) & M24;
            u.in_msg = false;
            u.in_write = false;
            u.msg_pkts = 0;
            u.sr_hold = false;
            u.rd_jseq = jseq;
            u.rd_jend = (d.psn + npkts) & M24;
            u.rd_jv = true;
            if d.ack_req {
                evs.push(self.ack_ev(d, &q, syndrome::ACK as u64, &u));
            }
            self.rxs[qpn] = u;
            return (evs, format!("READ accepted ({npkts} packets)"));
        }
        if diff & 0x80_0000 != 0 {
            self.cnt_model.dup += 1;
            self.st.dups += 1;
            if d.ack_req {
                evs.push(self.ack_ev(d, &q, syndrome::ACK as u64, &s));
            }
            return (evs, "duplicate".into());
        }
        if diff != 0 {
            self.cnt_model.psn += 1;
            nak(self, &mut evs, syndrome::NAK_PSN_SEQ, &s);
            return (evs, "NAK PSN sequence".into());
        }
        let off = d.psn_offset << self.cfg.pmtu_log2;
        let mut inv = false;
        if first {
            inv |= s.in_msg || d.psn_offset != 0;
        } else {
            inv |= !s.in_msg || s.in_write != is_write || d.psn_offset != s.msg_pkts;
        }
        inv |= d.plen > pmtu || (!last && d.plen != pmtu);
        inv |= off + d.plen > d.msg_len;
        inv |= last && off + d.plen != d.msg_len;
        if inv {
            self.cnt_model.inv += 1;
            nak(self, &mut evs, syndrome::NAK_INV_REQ, &s);
            return (evs, "NAK INV_REQ".into());
        }
        let mut t = s;
        let dest;
        if is_write && imm && s.rq_ci == self.rqpi_tab[qpn] {
            // A WRITE with immediate consumes a receive WQE: none posted, nothing placed.
            self.cnt_model.rnr += 1;
            nak(self, &mut evs, syndrome::RNR_NAK, &s);
            return (evs, "RNR NAK (WRITE with immediate)".into());
        }
        if is_write {
            match self.write_ok(&q, d) {
                Some(a) => dest = a,
                None => {
                    self.cnt_model.access += 1;
                    nak(self, &mut evs, syndrome::NAK_REM_ACCESS, &s);
                    return (evs, "NAK REM_ACCESS".into());
                }
            }
        } else {
            let mut mr_fail = false;
            if first {
                if s.rq_ci == self.rqpi_tab[qpn] {
                    self.cnt_model.rnr += 1;
                    nak(self, &mut evs, syndrome::RNR_NAK, &s);
                    return (evs, "RNR NAK".into());
                }
                let slot = s.rq_ci & ((1 << q.rq_log2) - 1);
                let addr = q.rq_base + (slot << 6);
                let w = self
                    .qps
                    .iter()
                    .find(|x| x.qpn == qpn)
                    .and_then(|x| x.rq.get(&s.rq_ci).copied())
                    .expect("posted RWQE");
                let mut beat = [0u8; 64];
                for x in beat.iter_mut() {
                    *x = self.rng.next() as u8;
                }
                beat[off::RWQE_ADDR..off::RWQE_ADDR + 8].copy_from_slice(&w.addr.to_le_bytes());
                beat[off::RWQE_LENGTH..off::RWQE_LENGTH + 4].copy_from_slice(&(w.len as u32).to_le_bytes());
                beat[off::RWQE_LKEY..off::RWQE_LKEY + 4].copy_from_slice(&(w.lkey as u32).to_le_bytes());
                // One buffer: the other scatter entries are empty (their addresses and keys are noise).
                for e in 1..RECV_SGES {
                    let o = off::RWQE_LENGTH + e * off::RWQE_SGE_BYTES;
                    beat[o..o + 4].fill(0);
                }
                evs.push(Ev::Rd(addr, beat));
                match self.rwqe_ok(&q, &w) {
                    Some(iova) => {
                        t.rwqe_valid = true;
                        t.rwqe_lkey = w.lkey;
                        t.rwqe_iova = iova;
                        t.rwqe_len = w.len;
                    }
                    None => mr_fail = true,
                }
            } else if s.rwqe_valid {
                let e = self.mrs[((s.rwqe_lkey >> 8) & 0xFF) as usize];
                mr_fail = !(e.valid && e.pd == q.pd && e.tag as u64 == s.rwqe_lkey & 0xFF && e.access & 1 != 0);
            }
            if mr_fail {
                // RwqeErr: LOC_PROT_ERR completion, responder stops, NAK REM_OP.
                self.cnt_model.access += 1;
                let mut u = t;
                u.rq_ci = (s.rq_ci + 1) & M16;
                u.rwqe_valid = false;
                u.resp_err = true;
                let e = self.cqe_ev(q.recv_cqn, s.rq_ci, cqe_status::LOC_PROT_ERR, cqe_op::RECV, 0, qpn);
                evs.push(e);
                nak(self, &mut evs, syndrome::NAK_REM_OP, &u);
                self.rxs[qpn] = Rxs { sr_hold: true, ..u };
                let why = if first { "receive WQE fails its MR" } else { "receive buffer MR invalid mid-message" };
                return (evs, format!("{why}: LOC_PROT_ERR, NAK REM_OP"));
            }
            if !t.rwqe_valid || off + d.plen > t.rwqe_len {
                self.cnt_model.inv += 1;
                nak(self, &mut evs, syndrome::NAK_INV_REQ, &t);
                return (evs, "NAK INV_REQ (receive buffer)".into());
            }
            dest = t.rwqe_iova.wrapping_add(off);
        }
        // Placed.
        self.place(dest, &d.payload, &mut evs);
        self.st.placed += 1;
        let mut u = t;
        u.epsn = (t.epsn + 1) & M24;
        u.bytes_rx = (t.bytes_rx + d.plen) & 0xFFFF_FFFF;
        u.sr_hold = false;
        if last {
            u.msn = (t.msn + 1) & M24;
        }
        u.in_msg = !last;
        u.in_write = is_write;
        u.msg_pkts = if first { 1 } else { (t.msg_pkts + 1) & M24 };
        let (imm_val, flags) = if imm { (d.imm, cqe_flags::WITH_IMM) } else { (0, 0) };
        if is_send && last {
            u.rq_ci = (t.rq_ci + 1) & M16;
            u.rwqe_valid = false;
            let len = (off + d.plen) & 0xFFFF_FFFF;
            let c = Cqe {
                cqn: q.recv_cqn,
                idx: t.rq_ci,
                status: cqe_status::SUCCESS,
                op: cqe_op::RECV,
                len,
                qpn,
                imm: imm_val,
                flags,
            };
            let e = self.cqe_ev_imm(c);
            evs.push(e);
        }
        if is_write && imm {
            u.rq_ci = (t.rq_ci + 1) & M16;
            let c = Cqe {
                cqn: q.recv_cqn,
                idx: t.rq_ci,
                status: cqe_status::SUCCESS,
                op: cqe_op::RECV_RDMA_WITH_IMM,
                len: d.msg_len,
                qpn,
                imm: imm_val,
                flags,
            };
            let e = self.cqe_ev_imm(c);
            evs.push(e);
        }
        if d.ack_req {
            evs.push(self.ack_ev(d, &q, syndrome::ACK as u64, &u));
        }
        self.rxs[qpn] = u;
        (evs, format!("placed {} bytes at {dest:#x}", d.plen))
    }

    // ------------------------------------------------------------ stimulus

    fn base_desc(&mut self, qpn: usize) -> Desc {
        let q = self.qpcs[qpn];
        Desc {
            dqpn: qpn as u64,
            src_mac: q.mac,
            src_ip: q.ip,
            sport: self.rng.below(1 << 16),
            ecn: self.rng.below(4),
            ts: self.rng.next(),
            imm: self.rng.below(1 << 32),
            syn: self.rng.below(256),
            msn: self.rng.below(1 << 24),
            ssn: self.rng.below(1 << 24),
            va: self.rng.next(),
            rkey: self.rng.below(1 << 32),
            ..Desc::default()
        }
    }

    /// MRs of a PD with an access bit.
    fn mrs_with(&self, pd: u16, access: u8) -> Vec<usize> {
        (0..NMR).filter(|&i| self.mrs[i].valid && self.mrs[i].pd == pd && self.mrs[i].access & access != 0).collect()
    }

    fn gen_len(&mut self) -> u64 {
        let pmtu = self.pmtu();
        let max = pmtu * self.cfg.max_pkts;
        match self.rng.below(8) {
            0 => 0,
            1 => pmtu * self.rng.range(1, self.cfg.max_pkts),
            2 => self.rng.range(1, 64),
            3 => pmtu * self.rng.range(1, self.cfg.max_pkts) - self.rng.range(0, 3),
            _ => self.rng.range(1, max),
        }
    }

    /// A new message on QP `qi` (None if nothing fits).
    fn new_msg(&mut self, qi: usize) -> Option<Msg> {
        let qpn = self.qps[qi].qpn;
        let q = self.qpcs[qpn];
        let pmtu = self.pmtu();
        let mut len = self.gen_len();
        let ssn = self.qps[qi].ssn;
        self.qps[qi].ssn = (ssn + 1) & M24;
        let write = self.rng.pct(50);
        let mut doomed = false;
        let mut tag = "";
        let (mut va, mut rkey) = (self.rng.next(), self.rng.below(1 << 32));
        if write {
            let cands = self.mrs_with(q.pd, Access::REMOTE_WRITE.bits());
            let i = self.rng.pick(&cands);
            let e = self.mrs[i];
            len = len.min(e.len);
            rkey = ((i as u64) << 8) | rkey_tag(e.tag);
            va = e.va.wrapping_add(self.rng.edge_range(0, e.len - len));
            if self.rng.pct(self.cfg.fault_pct / 3) {
                // Runs past the MR (or starts before it): refused at FIRST.
                doomed = true;
                let cap = pmtu * self.cfg.max_pkts;
                tag = " [WRITE past its MR]";
                if self.rng.pct(70) {
                    // Starts inside, ends past the end.
                    let r = self.rng.range(0, e.len.min(cap - 1));
                    va = e.va.wrapping_add(e.len - r);
                    len = r + self.rng.edge_range(1, cap - r);
                } else {
                    // Starts before the MR.
                    va = e.va.wrapping_sub(self.rng.edge_range(1, 64));
                    len = self.rng.range(1, e.len.min(cap));
                }
            }
        } else {
            let ci = self.rxs[qpn].rq_ci;
            match self.qps[qi].rq.get(&ci).copied() {
                Some(w) => {
                    if self.rng.pct(self.cfg.fault_pct / 3) && w.len < pmtu * self.cfg.max_pkts {
                        // Receive buffer too small.
                        len = self.rng.edge_range(w.len + 1, pmtu * self.cfg.max_pkts);
                        doomed = true;
                        tag = " [receive buffer too small]";
                    } else {
                        len = if self.rng.pct(15) { w.len.min(pmtu * self.cfg.max_pkts) } else { len.min(w.len) };
                    }
                }
                None => {
                    // No receive WQE: RNR at FIRST.
                    if !self.rng.pct(30) {
                        return None;
                    }
                    doomed = true;
                    tag = " [no receive WQE]";
                }
            }
        }
        let npkts = len.div_ceil(pmtu).max(1);
        // A WRITE with immediate also needs a receive WQE (at its LAST): without
        // one only as a single packet, so a refused LAST does not hold the QP.
        let posted = self.qps[qi].rq.contains_key(&self.rxs[qpn].rq_ci);
        let imm = self.rng.pct(30) && (!write || posted || npkts == 1);
        if write && imm && !posted && !doomed {
            doomed = true;
            tag = " [no receive WQE]";
        }
        Some(Msg { write, len, va, rkey, npkts, ssn, imm, doomed, tag })
    }

    /// The next packet of QP `qi`'s message, maybe with a fault.
    fn gen_request(&mut self, qi: usize) -> Option<Desc> {
        let qpn = self.qps[qi].qpn;
        let s = self.rxs[qpn];
        if s.resp_err || (s.in_msg && self.qps[qi].msg.is_none()) {
            return None; // needs a reset
        }
        if self.qps[qi].msg.is_none() {
            self.qps[qi].msg = self.new_msg(qi);
        }
        let msg = self.qps[qi].msg?;
        let pmtu = self.pmtu();
        let k = if s.in_msg { s.msg_pkts } else { 0 };
        let first = k == 0;
        let last = k + 1 >= msg.npkts;
        let mut d = self.base_desc(qpn);
        d.op = opcode::request(msg.write, first, last);
        if msg.imm {
            d.op = Opcode::from(d.op).with_imm().into();
        }
        d.psn = s.epsn;
        d.psn_offset = k;
        d.plen = if last { msg.len - k * pmtu } else { pmtu };
        d.msg_len = msg.len;
        d.ssn = msg.ssn;
        d.ack_req = last || self.rng.pct(30);
        if msg.write {
            d.va = msg.va.wrapping_add(k * pmtu);
            d.rkey = msg.rkey;
        }
        d.what = format!(
            "{}{} {}/{} of len {}{}",
            if msg.write { "WRITE" } else { "SEND" },
            if msg.imm { "_IMM" } else { "" },
            k,
            msg.npkts,
            msg.len,
            msg.tag
        );
        if self.rng.pct(self.cfg.fault_pct) {
            let f = self.rng.below(9);
            let f = if f == 6 && !msg.write { 7 } else { f };
            match f {
                0 => {
                    let hi = if self.rng.pct(50) { 8 } else { 0x7F_FFFF };
                    d.psn = (s.epsn + self.rng.range(1, hi)) & M24;
                    d.what += " [PSN ahead]";
                }
                1 => {
                    let hi = if self.rng.pct(50) { 8 } else { 0x80_0000 };
                    d.psn = s.epsn.wrapping_sub(self.rng.range(1, hi)) & M24;
                    d.ack_req = self.rng.pct(70);
                    d.what += " [PSN behind]";
                }
                2 => {
                    if s.in_msg {
                        d.op = opcode::request(self.rng.pct(50), true, self.rng.pct(50));
                        d.psn_offset = 0;
                        d.what += " [FIRST/ONLY inside a message]";
                    } else {
                        d.op = opcode::request(self.rng.pct(50), false, self.rng.pct(50));
                        d.what += " [MIDDLE/LAST without FIRST]";
                    }
                }
                3 => {
                    if !last {
                        d.plen = self.rng.below(pmtu);
                        d.what += " [FIRST/MIDDLE short]";
                    } else if s.in_msg {
                        d.op = opcode::request(msg.write, false, false);
                        d.what += " [MIDDLE where LAST was due]";
                    } else {
                        d.psn_offset = 1 + self.rng.below(3);
                        d.what += " [ONLY with PSN_OFFSET]";
                    }
                }
                4 => {
                    if pmtu < 4096 {
                        d.plen = (pmtu + self.rng.range(1, 256)).min(4096);
                        d.msg_len = d.msg_len.max(off_of(k, pmtu) + d.plen);
                        d.what += " [payload > PMTU]";
                    } else {
                        d.plen = d.plen.saturating_sub(self.rng.range(1, 4));
                        d.what += " [payload shorter than RETH says]";
                    }
                }
                5 => {
                    d.psn_offset = if k > 0 && self.rng.pct(50) { k - 1 } else { (k + self.rng.range(1, 3)) & M24 };
                    if msg.write {
                        d.va = msg.va.wrapping_add(d.psn_offset * pmtu);
                    }
                    d.what += " [wrong PSN_OFFSET]";
                }
                6 => {
                    // Bad rkey (WRITE).
                    let q = self.qpcs[qpn];
                    match self.rng.below(5) {
                        // A tag off by any bits, or the MR's lkey in place of its rkey.
                        0 => {
                            d.rkey =
                                msg.rkey ^ if self.rng.pct(30) { RKEY_TAG_FLIP as u64 } else { 1 + self.rng.below(255) }
                        }
                        1 => {
                            let other = (0..NMR)
                                .filter(|&j| self.mrs[j].valid && self.mrs[j].pd != q.pd && self.mrs[j].access & 2 != 0)
                                .collect::<Vec<_>>();
                            if let Some(&j) = other.first() {
                                d.rkey = ((j as u64) << 8) | rkey_tag(self.mrs[j].tag);
                                d.va = self.mrs[j].va.wrapping_add(k * pmtu);
                            }
                        }
                        2 => {
                            let c = (0..NMR)
                                .filter(|&j| self.mrs[j].valid && self.mrs[j].pd == q.pd && self.mrs[j].access & 2 == 0)
                                .collect::<Vec<_>>();
                            if !c.is_empty() {
                                let j = self.rng.pick(&c);
                                d.rkey = ((j as u64) << 8) | rkey_tag(self.mrs[j].tag);
                                d.va = self.mrs[j].va.wrapping_add(k * pmtu);
                            }
                        }
                        3 => {
                            let c = (0..NMR).filter(|&j| !self.mrs[j].valid).collect::<Vec<_>>();
                            let j = self.rng.pick(&c);
                            d.rkey = ((j as u64) << 8) | rkey_tag(self.mrs[j].tag);
                        }
                        _ => d.rkey = msg.rkey | (self.rng.range(1, 0xFFFF) << 16),
                    }
                    d.what += " [bad rkey]";
                }
                _ => {
                    d.msg_len = if self.rng.pct(50) {
                        d.msg_len + self.rng.range(1, 3 * pmtu)
                    } else {
                        d.msg_len.saturating_sub(self.rng.range(1, 64))
                    };
                    d.what += " [RETH length mismatch]";
                }
            }
        }
        Some(d)
    }

    fn gen_ack(&mut self, qi: usize) -> Desc {
        let qpn = self.qps[qi].qpn;
        let s = self.rxs[qpn];
        let mut d = self.base_desc(qpn);
        d.op = opcode::ACK;
        d.plen = 0;
        d.psn = self.rng.below(1 << 24);
        let posted = self.sqpi_tab[qpn].wrapping_sub(s.req_acked) & M16;
        // With the SQ PI wrapped below the acked count's low 16 bits the RTL
        // once computed `posted` 24 bits wide (see the regression test); a set
        // may keep ACKs strictly below the posted WQEs there to isolate it.
        let wrapped = self.sqpi_tab[qpn] < (s.req_acked & M16);
        let safe = wrapped && !self.cfg.ack_over_pi_wrap;
        let mut kind = self.rng.below(10);
        if safe && (kind == 1 || kind == 2 || posted == 0) {
            kind = 0;
        }
        d.msn = match kind {
            0 => s.req_acked.wrapping_sub(self.rng.range(1, 10)) & M24,
            1 => (s.req_acked + posted + self.rng.range(1, 5)) & M24,
            2 => (s.req_acked + posted) & M24,
            _ if safe => (s.req_acked + self.rng.range(0, posted - 1)) & M24,
            _ => (s.req_acked + self.rng.range(0, posted)) & M24,
        };
        d.syn = *[0x1Fu64, 0x1F, 0x1F, 0x00, 0x0A, 0x60, 0x61, 0x62, 0x63, 0x20, 0x3F, 0x45, 0x7F]
            .get(self.rng.below(13) as usize)
            .unwrap();
        // The echoed entropy and ECN byte above the flags (where a request has PSN_OFFSET's upper bytes).
        let ecn_echo = if self.rng.pct(90) { self.rng.below(4) } else { self.rng.below(256) };
        // Now and then an ACK that echoes no request (`NO_ECHO`): no feedback.
        let no_echo = if self.rng.pct(10) { ack_flags::NO_ECHO as u64 } else { 0 };
        d.psn_offset = (d.psn_offset & 0xFD) | no_echo | self.rng.below(256) << 16 | ecn_echo << 8;
        // SACK: an OOO count (now and then beyond 12 bits) and bytes received.
        d.rsn = if self.rng.pct(10) { self.rng.below(1 << 16) } else { self.rng.below(128) };
        d.lkey = self.rng.below(1 << 32);
        d.what = format!("ACK msn {:#x} syndrome {:#x} (acked {:#x}, posted {})", d.msn, d.syn, s.req_acked, posted);
        d
    }

    fn gen_drop(&mut self) -> Desc {
        let qpn = self.qps[self.rng.below(self.qps.len() as u64) as usize].qpn;
        let s = self.rxs[qpn];
        let mut d = self.base_desc(qpn);
        d.op = opcode::SEND_ONLY;
        d.psn = s.epsn;
        d.plen = self.rng.below(64);
        d.msg_len = d.plen;
        match self.rng.below(5) {
            0 => {
                d.src_mac ^= 1 << self.rng.below(48);
                d.what = "wrong peer MAC".into();
            }
            1 => {
                d.src_ip ^= 1 << self.rng.below(32);
                d.what = "wrong peer IP".into();
            }
            2 => {
                d.dqpn |= self.rng.range(1, 0xFFFF) << 8;
                d.what = "QPN >= 256".into();
            }
            3 => {
                d.op = *[0x12u8, 0x13, 0x14, 0x15, 0x18, 0x64, 0xFF].get(self.rng.below(7) as usize).unwrap();
                d.what = format!("opcode {:#x}", d.op);
            }
            _ => {
                let c: Vec<usize> = (0..NQPN).filter(|&n| !self.qpcs[n].rtr).collect();
                let n = self.rng.pick(&c);
                d = self.base_desc(n);
                d.op = opcode::WRITE_ONLY;
                d.what = format!("QPN {n} not in RTR");
            }
        }
        d
    }

    // ------------------------------------------------------ READ stimulus
    //
    // These run through `with_rrng`: `self.rng` is the READ stream here.

    /// A READ request on QP `qi`: valid (an MR of its PD with REMOTE_READ)
    /// or with a fault; None if the QP has no such MR, or (half the time)
    /// while a message is in progress.
    fn gen_read_req(&mut self, qi: usize) -> Option<Desc> {
        let qpn = self.qps[qi].qpn;
        let q = self.qpcs[qpn];
        let s = self.rxs[qpn];
        let pmtu = self.pmtu();
        let cands = self.mrs_with(q.pd, Access::REMOTE_READ.bits());
        if cands.is_empty() {
            return None;
        }
        let i = self.rng.pick(&cands);
        let e = self.mrs[i];
        let cap = pmtu * self.cfg.max_pkts;
        let len = match self.rng.below(10) {
            0 => 0,
            1 => self.rng.range(1, 64),
            2 => pmtu * self.rng.range(1, self.cfg.max_pkts),
            3 => self.rng.range(cap, 64 * cap),
            4 => e.len,
            5 => self.rng.range(1 << 24, 0xFFFF_FFFF),
            6 => 0xFFFF_FFFF - self.rng.below(2 * pmtu),
            _ => self.rng.range(1, cap),
        }
        .min(e.len)
        .min(0xFFFF_FFFF);
        let va = if self.rng.pct(15) {
            e.va.wrapping_add(e.len - len)
        } else {
            e.va.wrapping_add(self.rng.range(0, e.len - len))
        };
        let mut d = self.base_desc(qpn);
        d.op = opcode::READ_REQUEST;
        d.psn = s.epsn;
        d.plen = 0;
        d.msg_len = len;
        d.va = va;
        d.rkey = ((i as u64) << 8) | rkey_tag(e.tag);
        d.ssn = self.qps[qi].ssn;
        self.qps[qi].ssn = (d.ssn + 1) & M24;
        d.laddr = self.rng.next();
        d.lkey = self.rng.below(1 << 32);
        d.ack_req = self.rng.pct(50);
        d.psn_offset = 0;
        d.what = format!("READ request of len {len}");
        if s.in_msg {
            if !self.rng.pct(12) {
                return None;
            }
            d.what += " [READ inside a message]";
            return Some(d);
        }
        if !self.rng.pct(self.cfg.fault_pct + 15) {
            return Some(d);
        }
        let bad_key = |tb: &mut Tb, d: &mut Desc| {
            let len = d.msg_len.max(1);
            match tb.rng.below(5) {
                0 => {
                    if tb.rng.pct(30) {
                        d.rkey ^= RKEY_TAG_FLIP as u64;
                        d.what += " [the MR's lkey as rkey]";
                    } else {
                        d.rkey ^= 1 + tb.rng.below(255);
                        d.what += " [rkey tag]";
                    }
                }
                1 => {
                    let c = (0..NMR)
                        .filter(|&j| tb.mrs[j].valid && tb.mrs[j].pd != q.pd && tb.mrs[j].access & 4 != 0)
                        .collect::<Vec<_>>();
                    if !c.is_empty() {
                        let j = tb.rng.pick(&c);
                        d.rkey = ((j as u64) << 8) | rkey_tag(tb.mrs[j].tag);
                        d.va = tb.mrs[j].va;
                        d.msg_len = len.min(tb.mrs[j].len);
                    }
                    d.what += " [rkey of another PD]";
                }
                2 => {
                    let c = (0..NMR)
                        .filter(|&j| tb.mrs[j].valid && tb.mrs[j].pd == q.pd && tb.mrs[j].access & 4 == 0)
                        .collect::<Vec<_>>();
                    if !c.is_empty() {
                        let j = tb.rng.pick(&c);
                        d.rkey = ((j as u64) << 8) | rkey_tag(tb.mrs[j].tag);
                        d.va = tb.mrs[j].va;
                        d.msg_len = len.min(tb.mrs[j].len);
                    }
                    d.what += " [MR without REMOTE_READ]";
                }
                3 => {
                    let c = (0..NMR).filter(|&j| !tb.mrs[j].valid).collect::<Vec<_>>();
                    let j = tb.rng.pick(&c);
                    d.rkey = ((j as u64) << 8) | rkey_tag(tb.mrs[j].tag);
                    d.what += " [invalid MR]";
                }
                _ => {
                    d.rkey |= tb.rng.range(1, 0xFFFF) << 16;
                    d.what += " [rkey bits above the index]";
                }
            }
        };
        let hi = if self.rng.pct(50) { 8 } else { 0x7F_FFFF };
        match self.rng.below(10) {
            0 => {
                d.psn = (s.epsn + self.rng.range(1, hi)) & M24;
                d.what += " [PSN ahead]";
            }
            1 | 2 => {
                // A READ resent after its response was lost (maybe from an
                // offset: the rest of it), answered again; or dropped if its
                // MR check fails now.
                d.psn = s.epsn.wrapping_sub(self.rng.range(1, hi + 1)) & M24;
                d.what += " [PSN behind]";
                if self.rng.pct(40) {
                    bad_key(self, &mut d);
                } else if self.rng.pct(20) {
                    d.plen = self.rng.range(1, pmtu.min(256));
                    d.what += " [READ with payload]";
                }
            }
            3 => {
                d.plen = self.rng.range(1, pmtu.min(256));
                d.what += " [READ with payload]";
            }
            4 | 5 => bad_key(self, &mut d),
            6 => {
                d.msg_len = d.msg_len.max(1);
                if self.rng.pct(40) {
                    d.va = e.va.wrapping_sub(self.rng.edge_range(1, 64));
                    d.what += " [starts before its MR]";
                } else {
                    let r = self.rng.edge_range(0, (d.msg_len - 1).min(e.len));
                    d.va = e.va.wrapping_add(e.len - r);
                    d.what += " [runs past its MR]";
                }
            }
            7 => {
                d.msg_len = 0;
                d.va = self.rng.next();
                d.rkey = self.rng.below(1 << 32);
                d.what += " [zero length, any rkey]";
            }
            8 => {
                d.psn_offset = self.rng.range(1, M24);
                d.what += " [READ with PSN_OFFSET]";
            }
            _ => {
                // A READ resent from an offset: the rest of it, behind ePSN.
                let k = self.rng.range(1, 8);
                d.psn = s.epsn.wrapping_sub(k) & M24;
                let off = self.rng.below(d.msg_len / pmtu + 1) * pmtu;
                d.va = d.va.wrapping_add(off.min(d.msg_len));
                d.msg_len -= off.min(d.msg_len);
                d.laddr = d.laddr.wrapping_add(off);
                d.what += " [PSN behind, resent from an offset]";
            }
        }
        Some(d)
    }

    /// Response packet `j` of READ `rd` on QP `qpn`, as the peer sends it.
    fn rsp_pkt(&mut self, qpn: usize, rd: &RdGen, j: u64) -> Desc {
        let pmtu = self.pmtu();
        let mut d = self.base_desc(qpn);
        let (first, last) = (j == 0, j + 1 >= rd.npkts);
        d.op = Opcode::read_response(first, last).into();
        d.psn = (rd.psn0 + j) & M24;
        d.va = rd.laddr.wrapping_add(j * pmtu);
        d.rkey = rd.lkey;
        d.msg_len = rd.len;
        d.ssn = rd.ssn;
        d.psn_offset = j & M24;
        d.plen = if last { rd.len.saturating_sub(j * pmtu) } else { pmtu };
        d.ack_req = self.rng.pct(30);
        d.what = format!("READ response {j}/{} of len {}", rd.npkts, rd.len);
        d
    }

    /// Queues an arm word for QP `qpn` (its READ's response from `psn` on)
    /// and applies it in the model: the responder takes it between packets,
    /// before any descriptor queued after it.
    fn push_arm(&mut self, qpn: usize, psn: u64, end: u64, first: bool, what: String) {
        apply_arm(&mut self.rxs[qpn], psn, end, first);
        self.st.arms += 1;
        let tag = what.split('[').nth(1).map(|t| t.trim_end_matches(']').to_string()).unwrap_or("arm".into());
        *self.st.cover.entry(("arm".into(), tag)).or_default() += 1;
        self.note(format!("push arm qpn {qpn:#x} psn {psn:#x} end {end:#x} first {first} ({what})"));
        let d = Desc { dqpn: qpn as u64, psn, arm: true, arm_end: end, arm_first: first, what, ..Desc::default() };
        let after = self.rxs[qpn];
        self.fifo.push_back((d, qpn, after));
    }

    /// An ACK descriptor for QP `qi` in a READ batch: the wire's flags byte
    /// (PSN_OFFSET's low byte) random, so PLACED and bits that must be
    /// masked off; now and then a placed NAK continuing the QP's chain.
    fn gen_ack_read(&mut self, qi: usize) -> Desc {
        let qpn = self.qps[qi].qpn;
        let mut d = self.gen_ack(qi);
        d.psn_offset = self.rng.below(1 << 24);
        let f = self.fold[qpn];
        if f.valid && self.rng.pct(60) {
            d.syn = syndrome::NAK_PSN_SEQ as u64;
            d.psn_offset |= 1;
            d.ts = (d.ts & !(M24 << 32)) | (f.epsn << 32);
            d.psn = (f.last + 1) & M24;
            d.ssn = (d.ssn & !(0x7FF << 12)) | (f.tsc << 12);
            d.what += " [placed NAK after the chain's last]";
        } else if self.rng.pct(30) {
            d.syn = syndrome::NAK_PSN_SEQ as u64;
            d.psn_offset |= 1;
            d.what += " [placed NAK]";
        }
        if self.rxs[qpn].rd_on {
            d.what += " [while a READ is awaited]";
        }
        d
    }

    /// The next step of QP `qi`'s READ: its arm, a response packet (maybe
    /// with a fault), a re-arm, an ACK while it is awaited. False if nothing.
    fn gen_rsp_step(&mut self, qi: usize) -> bool {
        let qpn = self.qps[qi].qpn;
        let Some(mut rd) = self.qps[qi].rd else { return false };
        let s = self.rxs[qpn];
        let pmtu = self.pmtu();
        if !rd.armed {
            if self.rng.pct(10) {
                let mut d = self.rsp_pkt(qpn, &rd, 0);
                d.what += " [response with no READ armed]";
                self.push_desc(d);
                return true;
            }
            let acked = s.req_acked;
            if rd.wrong_ssn {
                rd.ssn = (acked + self.rng.pick(&[2u64, 3, M24])) & M24;
            } else {
                // The turn engine sends a READ only as lACK's WQE, posted.
                if self.sqpi_tab[qpn].wrapping_sub(acked) & M16 == 0 {
                    return false;
                }
                rd.ssn = acked;
            }
            rd.armed = true;
            self.qps[qi].rd = Some(rd);
            let what = format!(
                "READ ssn {:#x} psn {:#x} len {} ({} packets){}",
                rd.ssn,
                rd.psn0,
                rd.len,
                rd.npkts,
                if rd.wrong_ssn { " [READ not lACK's WQE]" } else { "" }
            );
            // The first READ awaited (now and then armed as one that follows READs in flight, the same when none is).
            let first = s.rd_on || self.rng.pct(80);
            self.push_arm(qpn, rd.psn0, (rd.psn0 + rd.npkts) & M24, first, what);
            return true;
        }
        if !s.rd_on {
            // Its last packet was placed, or a requester reset ended the wait.
            if self.rng.pct(40) {
                let j = self.rng.below(rd.npkts);
                let mut d = self.rsp_pkt(qpn, &rd, j);
                d.what += " [after the READ ended]";
                self.push_desc(d);
            }
            self.qps[qi].rd = None;
            return true;
        }
        let k = s.rd_psn.wrapping_sub(rd.psn0) & M24;
        if k >= rd.npkts {
            self.qps[qi].rd = None;
            return false;
        }
        rd.sent += 1;
        self.qps[qi].rd = Some(rd);
        let mut d = self.rsp_pkt(qpn, &rd, k);
        if !self.rng.pct(self.cfg.fault_pct + 10) {
            self.push_desc(d);
            return true;
        }
        match self.rng.below(14) {
            12 => {
                // The opcode alone ends the READ (the RETH length is not checked).
                if k + 1 < rd.npkts {
                    d.op = if k == 0 { opcode::READ_RESPONSE_ONLY } else { opcode::READ_RESPONSE_LAST };
                    d.what += " [LAST before the READ's end]";
                } else {
                    d.op = if k == 0 { opcode::READ_RESPONSE_FIRST } else { opcode::READ_RESPONSE_MIDDLE };
                    d.what += " [no LAST at the READ's end]";
                }
            }
            13 => {
                // The READ resent from rd_psn several times in a row: the
                // arm queue may fill while the responder waits (job_full).
                for _ in 0..self.rng.range(2, 10) {
                    self.push_arm(qpn, s.rd_psn, (rd.psn0 + rd.npkts) & M24, true, "re-arm [arm burst]".into());
                }
                return true;
            }
            0 | 11 => {
                if k + 1 < rd.npkts {
                    let j = k + self.rng.range(1, (rd.npkts - 1 - k).min(4));
                    d = self.rsp_pkt(qpn, &rd, j);
                    d.what += " [gap]";
                } else {
                    d.psn = (d.psn + self.rng.range(1, 8)) & M24;
                    d.what += " [PSN ahead]";
                }
            }
            1 => {
                if k > 0 {
                    let j = self.rng.below(k);
                    d = self.rsp_pkt(qpn, &rd, j);
                    d.what += " [duplicate]";
                } else {
                    d.psn = d.psn.wrapping_sub(self.rng.range(1, 8)) & M24;
                    d.what += " [PSN behind]";
                }
            }
            2 | 3 => {
                let q = self.qpcs[qpn];
                match self.rng.below(5) {
                    0 => {
                        d.rkey ^= 1 + self.rng.below(255);
                        d.what += " [lkey tag]";
                    }
                    1 => {
                        let c = (0..NMR)
                            .filter(|&j| self.mrs[j].valid && self.mrs[j].pd != q.pd && self.mrs[j].access & 1 != 0)
                            .collect::<Vec<_>>();
                        if !c.is_empty() {
                            let j = self.rng.pick(&c);
                            d.rkey = ((j as u64) << 8) | self.mrs[j].tag as u64;
                            d.va = self.mrs[j].va;
                        }
                        d.what += " [lkey of another PD]";
                    }
                    2 => {
                        let c = (0..NMR)
                            .filter(|&j| self.mrs[j].valid && self.mrs[j].pd == q.pd && self.mrs[j].access & 1 == 0)
                            .collect::<Vec<_>>();
                        if !c.is_empty() {
                            let j = self.rng.pick(&c);
                            d.rkey = ((j as u64) << 8) | self.mrs[j].tag as u64;
                            d.va = self.mrs[j].va;
                        }
                        d.what += " [MR without LOCAL_WRITE]";
                    }
                    3 => {
                        let c = (0..NMR).filter(|&j| !self.mrs[j].valid).collect::<Vec<_>>();
                        let j = self.rng.pick(&c);
                        d.rkey = ((j as u64) << 8) | self.mrs[j].tag as u64;
                        d.what += " [invalid MR]";
                    }
                    _ => {
                        d.rkey |= self.rng.range(1, 0xFFFF) << 16;
                        d.what += " [lkey bits above the index]";
                    }
                }
            }
            4 => {
                let e = self.mrs[((rd.lkey >> 8) & 0xFF) as usize];
                if d.plen == 0 || self.rng.pct(40) {
                    d.va = e.va.wrapping_sub(self.rng.edge_range(1, 64));
                    d.what += " [before its MR]";
                } else {
                    d.va = e.va.wrapping_add(e.len - self.rng.edge_range(0, (d.plen - 1).min(e.len)));
                    d.what += " [past its MR]";
                }
            }
            5 => {
                if pmtu < 4096 {
                    d.plen = pmtu + self.rng.range(1, 256);
                    d.what += " [payload > PMTU]";
                } else {
                    d.plen = self.rng.below(d.plen + 1);
                    d.what += " [short payload]";
                }
            }
            6 => {
                d.plen = 0;
                d.rkey = self.rng.below(1 << 32);
                d.what += " [empty, any lkey]";
            }
            7 => {
                let end = (rd.psn0 + rd.npkts) & M24;
                if self.rng.pct(50) {
                    self.push_arm(qpn, s.rd_psn, end, true, "re-arm [re-armed at rd_psn]".into());
                } else {
                    // A READ sent after this one: the wait extends past its end
                    // (whose RDONE then leaves a kept MSN kept); no response of it comes.
                    let more = self.rng.range(1, 4);
                    self.push_arm(qpn, s.rd_end, (s.rd_end + more) & M24, false, "arm [a following READ]".into());
                }
                return true;
            }
            8 => {
                let end = (rd.psn0 + rd.npkts) & M24;
                self.push_arm(qpn, rd.psn0, end, true, "re-arm [READ resent from its start]".into());
                return true;
            }
            _ => d = self.gen_ack_read(qi),
        }
        self.push_desc(d);
        true
    }

    /// One READ stimulus descriptor (or arm) of a READ batch. False if nothing was queued.
    fn gen_read_one(&mut self) -> bool {
        let r = self.rng.below(100);
        let qi = self.rng.below(self.qps.len() as u64) as usize;
        if r < 30 {
            let Some(d) = self.gen_read_req(qi) else { return false };
            self.push_desc(d);
            return true;
        }
        if r < 36 {
            let c: Vec<usize> = (0..NQPN).filter(|&n| !self.qpcs[n].rtr).collect();
            let n = self.rng.pick(&c);
            let qpn = self.qps[qi].qpn;
            let mut d = match self.rng.below(4) {
                0 => {
                    let mut d = self.base_desc(n);
                    d.op = opcode::READ_REQUEST;
                    d.msg_len = self.rng.below(1 << 12);
                    d.what = format!("READ request to QPN {n} not in RTR");
                    d
                }
                1 => {
                    let mut d = self.base_desc(n);
                    d.op = opcode::READ_RESPONSE_ONLY;
                    d.psn = self.rxs[n].rd_psn;
                    d.plen = self.rng.below(64);
                    d.what = format!("READ response to QPN {n} not in RTR");
                    d
                }
                2 => {
                    let rd = self.qps[qi].rd.unwrap_or(RdGen {
                        ssn: 0,
                        len: 64,
                        npkts: 1,
                        laddr: 0,
                        lkey: 0,
                        psn0: self.rxs[qpn].rd_psn,
                        armed: false,
                        wrong_ssn: false,
                        sent: 0,
                    });
                    let k = self.rxs[qpn].rd_psn.wrapping_sub(rd.psn0) & M24;
                    let mut d = self.rsp_pkt(qpn, &rd, k.min(rd.npkts - 1));
                    d.src_ip ^= 1 << self.rng.below(32);
                    d.what += " [from a wrong peer]";
                    d
                }
                _ => {
                    let mut d = self.gen_read_req(qi).unwrap_or_else(|| self.base_desc(qpn));
                    d.op = opcode::READ_REQUEST;
                    d.src_mac ^= 1 << self.rng.below(48);
                    d.what += " [from a wrong peer]";
                    d
                }
            };
            if d.what.is_empty() {
                d.what = "READ request".into();
            }
            self.push_desc(d);
            return true;
        }
        if r < 46 {
            let armed: Vec<usize> = (0..self.qps.len()).filter(|&i| self.rxs[self.qps[i].qpn].rd_on).collect();
            let qi = if !armed.is_empty() && self.rng.pct(75) { self.rng.pick(&armed) } else { qi };
            let d = self.gen_ack_read(qi);
            self.push_desc(d);
            return true;
        }
        let with: Vec<usize> = (0..self.qps.len()).filter(|&i| self.qps[i].rd.is_some()).collect();
        if with.is_empty() {
            let Some(d) = self.gen_read_req(qi) else { return false };
            self.push_desc(d);
            return true;
        }
        let qi = self.rng.pick(&with);
        self.gen_rsp_step(qi)
    }

    /// At a quiescent point: the requester starts a READ on a QP now and
    /// then (armed in a later READ batch), with its SQ PI past lACK; a READ
    /// whose wait is stuck (its lkey fails) or by chance ends in a requester
    /// reset; the host consumes the CtrlQ now and then.
    fn host_read_actions(&mut self) {
        for qi in 0..self.qps.len() {
            let qpn = self.qps[qi].qpn;
            let q = self.qpcs[qpn];
            let s = self.rxs[qpn];
            let pmtu = self.pmtu();
            match self.qps[qi].rd {
                Some(rd) => {
                    if rd.armed && s.rd_on && (rd.sent > 3 * rd.npkts + 12 || self.rrng.pct(5)) {
                        // A requester reset while the READ is awaited.
                        self.rst_q.push_back((1 << 9) | qpn as u64);
                        self.st.resets += 1;
                        self.req_reset(qi);
                        self.note(format!("reset qpn {qpn} req 1 (READ awaited)"));
                    } else if !rd.armed && !rd.wrong_ssn && self.sqpi_tab[qpn].wrapping_sub(s.req_acked) & M16 == 0 {
                        self.sqpi_tab[qpn] = (s.req_acked + self.rrng.range(1, 5)) & M16;
                    }
                }
                None => {
                    let cands = self.mrs_with(q.pd, Access::LOCAL_WRITE.bits());
                    if cands.is_empty() || !self.rrng.pct(25) {
                        continue;
                    }
                    let i = self.rrng.pick(&cands);
                    let e = self.mrs[i];
                    let cap = pmtu * self.cfg.max_pkts;
                    let len = match self.rrng.below(6) {
                        0 => 0,
                        1 => self.rrng.range(1, 64),
                        2 => pmtu * self.rrng.range(1, 2 * self.cfg.max_pkts),
                        _ => self.rrng.range(1, 2 * cap),
                    }
                    .min(e.len);
                    let rd = RdGen {
                        ssn: 0,
                        len,
                        npkts: len.div_ceil(pmtu).max(1),
                        laddr: e.va.wrapping_add(self.rrng.edge_range(0, e.len - len)),
                        lkey: ((i as u64) << 8) | e.tag as u64,
                        psn0: near_wrap(&mut self.rrng, 24),
                        armed: false,
                        wrong_ssn: self.rrng.pct(8),
                        sent: 0,
                    };
                    if !rd.wrong_ssn && self.sqpi_tab[qpn].wrapping_sub(s.req_acked) & M16 == 0 {
                        self.sqpi_tab[qpn] = (s.req_acked + self.rrng.range(1, 5)) & M16;
                    }
                    self.qps[qi].rd = Some(rd);
                    self.note(format!("qpn {qpn}: READ of len {len} at {:#x} lkey {:#x} to come", rd.laddr, rd.lkey));
                }
            }
        }
        if self.rrng.pct(50) {
            self.ctl_ci = self.ctl_pi;
        }
    }

    /// The model's side of a requester reset (`rst_valid` bit 9): lACK 0,
    /// not failed, SQ PI 0, no READ awaited, no kept MSN, no NAK chain.
    fn req_reset(&mut self, qi: usize) {
        let qpn = self.qps[qi].qpn;
        if self.rxs[qpn].rd_on {
            self.st.rst_armed += 1;
        }
        self.expect_lack.push_back((self.desc_id, Ev::Lack(qpn, 0, 0)));
        let r = &mut self.rxs[qpn];
        r.req_acked = 0;
        r.req_err = false;
        r.rd_on = false;
        self.sqpi_tab[qpn] = 0;
        self.held[qpn] = None;
        self.fold[qpn] = Fold::default();
        self.qps[qi].rd = None;
    }

    /// Writes the payload beats into the ring, runs the model, queues the descriptor.
    fn push_desc(&mut self, mut d: Desc) {
        if d.op != opcode::ACK {
            d.payload = (0..d.plen).map(|_| self.rng.next() as u8).collect();
        }
        let pad = (4 - d.plen % 4) % 4;
        d.nbeats = (d.plen + pad + 4).div_ceil(64);
        d.rptr = self.wp;
        for b in 0..d.nbeats {
            let mut beat = [0u8; 64];
            for (i, x) in beat.iter_mut().enumerate() {
                let o = (b * 64) as usize + i;
                *x = if o < d.payload.len() { d.payload[o] } else { self.rng.next() as u8 };
            }
            self.ring[((self.wp + b) % RING) as usize] = beat;
        }
        self.wp = (self.wp + d.nbeats) % RING;
        let qpn = (d.dqpn & 0xFF) as usize;
        let (evs, outcome) = self.model(&d);
        let tags: Vec<String> = d
            .what
            .match_indices('[')
            .map(|(i, _)| d.what[i..].split(']').next().unwrap_or("").trim_start_matches('[').to_string())
            .collect();
        let rd_kind = if d.op == opcode::READ_REQUEST {
            Some("READ request")
        } else if Opcode::from(d.op).is_read_response() {
            Some("READ response")
        } else {
            None
        };
        let kind = if d.op == opcode::ACK {
            if tags.is_empty() {
                "ACK".to_string()
            } else {
                format!("ACK: {}", tags.join("+"))
            }
        } else if let Some(k) = rd_kind {
            if tags.is_empty() {
                format!("{k} valid")
            } else {
                format!("{k}: {}", tags.join("+"))
            }
        } else if tags.is_empty() {
            if d.what.contains("_IMM ") && Opcode::from(d.op).has_imm() {
                "valid with immediate".to_string()
            } else if d.what.contains(" of len ") {
                "valid".to_string()
            } else {
                d.what.split(' ').next().unwrap_or("").to_string()
            }
        } else {
            tags.join("+")
        };
        let oc =
            outcome.split(&[',', '('][..]).next().unwrap_or("").split(" at ").next().unwrap_or("").trim().to_string();
        let oc = if oc.starts_with("placed") {
            "placed".to_string()
        } else if oc.starts_with("READ response placed") {
            "READ response placed".to_string()
        } else {
            oc
        };
        *self.st.cover.entry((kind, oc)).or_default() += 1;
        self.note(format!(
            "push #{} qpn {:#x} op {:#x} psn {:#x} off {} plen {} msg_len {} va {:#x} rkey {:#x} ack_req {} ({}) -> {outcome}",
            self.desc_id, d.dqpn, d.op, d.psn, d.psn_offset, d.plen, d.msg_len, d.va, d.rkey, d.ack_req as u8, d.what
        ));
        for e in evs {
            match e {
                Ev::Cqe(c) if c.op == cqe_op::RECV || c.op == cqe_op::RECV_RDMA_WITH_IMM => {
                    self.expect_cqe.push_back((self.desc_id, e))
                }
                Ev::Cqe(_) | Ev::Ctl(..) => self.expect_req_cqe.push_back((self.desc_id, e)),
                Ev::QpErr(_) => self.expect_qperr.push_back((self.desc_id, e)),
                Ev::Lack(..) => self.expect_lack.push_back((self.desc_id, e)),
                _ => self.expect.push_back((self.desc_id, e)),
            }
        }
        self.desc_id += 1;
        self.st.descs += 1;
        let after = self.rxs[qpn];
        self.fifo.push_back((d, qpn, after));
    }

    /// One new descriptor.
    fn gen_one(&mut self) {
        if self.read_batch && self.rrng.pct(55) && self.with_rrng(|tb| tb.gen_read_one()) {
            return;
        }
        if self.rng.pct(self.cfg.drop_pct) {
            let d = self.gen_drop();
            self.push_desc(d);
            return;
        }
        for _ in 0..8 {
            let qi = self.rng.below(self.qps.len() as u64) as usize;
            if self.rng.pct(self.cfg.ack_pct) {
                let d = self.gen_ack(qi);
                self.push_desc(d);
                return;
            }
            if let Some(d) = self.gen_request(qi) {
                let qpn = self.qps[qi].qpn;
                let msn0 = self.rxs[qpn].msn;
                self.push_desc(d);
                // The generator follows the model: a message ends when its LAST
                // is placed (the MSN moved), a doomed one once its FIRST was refused.
                let s = self.rxs[qpn];
                if let Some(msg) = self.qps[qi].msg {
                    if s.msn != msn0 || (msg.doomed && !s.in_msg) {
                        self.qps[qi].msg = None;
                    }
                }
                return;
            }
        }
    }

    // ------------------------------------------------ host at quiescence

    fn host_actions(&mut self) {
        // dereg_mr / re-registration between packets: an MR in use by a
        // message in flight (WRITE rkey, or a SEND's receive buffer, re-checked
        // on every packet) may become invalid.
        if self.rng.pct(8) {
            let i = self.rng.pick(&self.flip_mrs);
            self.mrs[i].valid = !self.mrs[i].valid;
            self.mr_tab[i] = mr_word(&self.mrs[i]);
            self.note(format!("MR {i} valid {}", self.mrs[i].valid as u8));
        }
        for qi in 0..self.qps.len() {
            let qpn = self.qps[qi].qpn;
            let q = self.qpcs[qpn];
            let s = self.rxs[qpn];
            let stuck_msg = s.in_msg && self.qps[qi].msg.is_none_or(|m| m.doomed);
            let want_rst_resp = s.resp_err || stuck_msg || self.rng.pct(2);
            let want_rst_req = s.req_err || self.rng.pct(2);
            if (want_rst_resp || want_rst_req) && self.rng.pct(60) {
                let epsn = near_wrap(&mut self.rng, 24);
                let w = (epsn << 10) | ((want_rst_req as u64) << 9) | ((want_rst_resp as u64) << 8) | qpn as u64;
                self.rst_q.push_back(w);
                self.st.resets += 1;
                let r = &mut self.rxs[qpn];
                if want_rst_resp {
                    r.epsn = epsn;
                    r.msn = 0;
                    r.rq_ci = 0;
                    r.rwqe_valid = false;
                    r.in_msg = false;
                    r.in_write = false;
                    r.resp_err = false;
                    r.sr_hold = false;
                    r.msg_pkts = 0;
                    r.bytes_rx = 0;
                    r.rd_jseq = (r.rd_jseq + 1) & 7;
                    r.rd_jv = false;
                    self.rst_jseq.push_back((qpn as u64, r.rd_jseq));
                    self.rqpi_tab[qpn] = 0;
                    self.qps[qi].rq.clear();
                    self.qps[qi].msg = None;
                }
                if want_rst_req {
                    self.req_reset(qi);
                }
                self.note(format!(
                    "reset qpn {qpn} resp {} req {} epsn {epsn:#x}",
                    want_rst_resp as u8, want_rst_req as u8
                ));
            }
            // Post receive WQEs.
            let ci = self.rxs[qpn].rq_ci;
            let size = 1u64 << q.rq_log2;
            let mut pi = self.rqpi_tab[qpn];
            let room = size - (pi.wrapping_sub(ci) & M16);
            if room > 0 && self.rng.pct(60) {
                for _ in 0..self.rng.range(1, room) {
                    let w = self.gen_rwqe(&q);
                    self.qps[qi].rq.insert(pi, w);
                    pi = (pi + 1) & M16;
                }
                self.rqpi_tab[qpn] = pi;
            }
            if self.rng.pct(40) {
                self.sqpi_tab[qpn] = (self.sqpi_tab[qpn] + self.rng.range(0, 6)) & M16;
            }
        }
    }

    fn gen_rwqe(&mut self, q: &QpcInfo) -> Rwqe {
        let pmtu = self.pmtu();
        let good = self.mrs_with(q.pd, Access::LOCAL_WRITE.bits());
        let i = self.rng.pick(&good);
        let e = self.mrs[i];
        let len = self.rng.range(0, (pmtu * self.cfg.max_pkts).min(e.len));
        let addr = e.va.wrapping_add(self.rng.edge_range(0, e.len - len));
        let mut w = Rwqe { addr, len, lkey: ((i as u64) << 8) | e.tag as u64 };
        if self.rng.pct(self.cfg.fault_pct / 5) {
            match self.rng.below(5) {
                0 => {
                    let c: Vec<usize> = (0..NMR)
                        .filter(|&j| self.mrs[j].valid && self.mrs[j].pd == q.pd && self.mrs[j].access & 1 == 0)
                        .collect();
                    if !c.is_empty() {
                        let j = self.rng.pick(&c);
                        w.lkey = ((j as u64) << 8) | self.mrs[j].tag as u64;
                        w.addr = self.mrs[j].va;
                        w.len = w.len.min(self.mrs[j].len);
                    }
                }
                1 => w.lkey ^= 1 + self.rng.below(255),
                2 => {
                    let c: Vec<usize> = (0..NMR)
                        .filter(|&j| self.mrs[j].valid && self.mrs[j].pd != q.pd && self.mrs[j].access & 1 != 0)
                        .collect();
                    if !c.is_empty() {
                        let j = self.rng.pick(&c);
                        w.lkey = ((j as u64) << 8) | self.mrs[j].tag as u64;
                        w.addr = self.mrs[j].va;
                        w.len = w.len.min(self.mrs[j].len);
                    }
                }
                // Half of them one byte past the MR's end.
                3 => {
                    w.len = e.len - addr.wrapping_sub(e.va) + if self.rng.pct(50) { 1 } else { self.rng.range(2, 100) }
                }
                _ => w.addr = e.va.wrapping_sub(self.rng.edge_range(1, 100)),
            }
        }
        w
    }

    // ------------------------------------------------------------- clock

    fn take_expect(&mut self, got: &Ev) -> Result<Ev, String> {
        let q = match got {
            Ev::QpErr(_) => &mut self.expect_qperr,
            _ => &mut self.expect,
        };
        match q.pop_front() {
            Some((_, e)) => {
                self.last_progress = self.cycle;
                Ok(e)
            }
            None => Err(format!("unexpected {} (nothing expected)", ev_brief(got))),
        }
    }

    /// A CQE write `(addr, bytes, CQ PI write)`: the next receive or the next
    /// requester CQE, in its slot now.
    fn take_cqe(&mut self, addr: u64, data: &[u8], pi_write: Option<(u64, u64)>) -> Result<(), String> {
        let mut tried = Vec::new();
        for req in [false, true] {
            let q = if req { &self.expect_req_cqe } else { &self.expect_cqe };
            let Some((_, Ev::Cqe(c))) = q.front() else { continue };
            let c = *c;
            let (a, b, pw) = self.cqe_write(&c);
            if a == addr && b[..] == data[..] && Some(pw) == pi_write {
                if req {
                    self.expect_req_cqe.pop_front();
                } else {
                    self.expect_cqe.pop_front();
                }
                self.cq_pi[c.cqn as usize] = pw.1;
                self.mem_model.write(a, &b);
                self.last_progress = self.cycle;
                return Ok(());
            }
            tried.push(format!("{} at {a:#x} data {:02x?} PI write {pw:x?}", ev_brief(&Ev::Cqe(c)), &b[..16]));
        }
        Err(format!(
            "CQE write {addr:#x} data {:02x?} PI write {pi_write:x?}, expected one of: {}",
            &data[..data.len().min(16)],
            if tried.is_empty() { "none".to_string() } else { tried.join("; ") }
        ))
    }

    /// A CtrlQ entry write: the next of the ACK receiver's stream.
    fn take_ctl(&mut self, addr: u64, data: &[u8]) -> Result<(), String> {
        match self.expect_req_cqe.front() {
            Some((_, Ev::Ctl(a, b))) if *a == addr && b[..] == data[..] => {
                let b = b.clone();
                self.expect_req_cqe.pop_front();
                self.mem_model.write(addr, &b);
                self.last_progress = self.cycle;
                Ok(())
            }
            Some((_, Ev::Ctl(a, b))) => {
                let (fe, fw) = (ctl_fields(b), ctl_fields(data));
                let diffs: Vec<String> = fe
                    .iter()
                    .zip(&fw)
                    .filter(|(x, y)| x.1 != y.1)
                    .map(|(x, y)| format!("{}: got {:#x} expected {:#x}", x.0, y.1, x.1))
                    .collect();
                Err(format!("CtrlQ entry at {addr:#x} (expected at {a:#x}) differs: {}", diffs.join(", ")))
            }
            other => Err(format!(
                "CtrlQ entry written at {addr:#x} ({:?}), expected {}",
                ctl_fields(data),
                other.map(|e| ev_brief(&e.1)).unwrap_or("nothing in the ACK receiver's stream".into())
            )),
        }
    }

    fn step(&mut self) -> Result<(), String> {
        let p = self.p;
        let t = self.cycle;
        // Inputs. An arm word at the head of the stimulus is written; the
        // FIFO then shows empty for ARM_GAP cycles, so the responder sees
        // the arm queue non-empty before it can pop the next descriptor.
        let mut arm = None;
        if self.arm_gap > 0 {
            self.arm_gap -= 1;
        } else if self.fifo.front().is_some_and(|e| e.0.arm) && !self.arm_full_q {
            let (d, qpn, _) = self.fifo.pop_front().expect("arm");
            arm = Some(qpn as u64 | d.psn << 8 | d.arm_end << 32 | (d.arm_first as u64) << 56);
            self.arm_gap = ARM_GAP;
            // Applied after the descriptor being processed, before the next.
            if let Some((_, cq, after)) = self.cur.as_mut() {
                if *cq == qpn {
                    apply_arm(after, d.psn, d.arm_end, d.arm_first);
                }
            }
            self.arm_pending.push(qpn);
            self.note(format!("arm written: qpn {qpn:#x} psn {:#x}", d.psn));
            self.last_progress = t;
        }
        self.m.set(p.arm_write, arm.is_some() as u64);
        self.m.set(p.arm_data, arm.unwrap_or(0));
        let shown = if self.arm_gap == 0 { self.fifo.front().filter(|e| !e.0.arm) } else { None };
        match shown {
            Some((d, _, _)) => {
                let w = d.words();
                self.m.set(p.desc_empty, 0);
                self.m.set_wide(p.desc_data, &w);
            }
            None => {
                self.m.set(p.desc_empty, 1);
                self.m.set_wide(p.desc_data, &[0u32; 16]);
            }
        }
        self.m.set_bytes(p.ring_rdata, &self.ring_q);
        self.m.set(p.lerr_empty, 1);
        self.m.set(p.lerr_data, 0);
        self.m.set_wide(p.qpc_data, &self.qpc_q);
        self.m.set_wide(p.rxs_data, &self.rxs_q);
        self.m.set(p.rqs_data, self.rqs_q as u64);
        self.m.set(p.rqpi_data, self.rqpi_q);
        self.m.set(p.sqpi_data, self.sqpi_q);
        self.m.set_wide(p.mr_data, &self.mr_q);
        self.m.set_wide(p.cq_data, &self.cq_q);
        self.m.set(p.cqpi_data, self.cqpi_q);
        let rd_ready = self.rng.pct(self.cfg.rd_ready_pct);
        let wr_ready = self.rng.pct(self.cfg.wr_ready_pct);
        let ack_full = self.rng.pct(self.cfg.ack_full_pct);
        self.m.set(p.rd_ready, rd_ready as u64);
        self.m.set(p.wr_ready, wr_ready as u64);
        self.m.set(p.ack_full, ack_full as u64);
        let cpl = self.dma.front().filter(|c| c.0 <= t).map(|c| c.1);
        self.m.set(p.rwqe_valid, cpl.is_some() as u64);
        self.m.set_bytes(p.rwqe_data, &cpl.unwrap_or([0; 64]));
        let rst = self.rst_q.pop_front();
        self.m.set(p.rst_valid, rst.is_some() as u64);
        self.m.set(p.rst_data, rst.unwrap_or(0));
        let rst_mp = self.rrng.below(512);
        self.m.set(p.rst_max_paths, rst_mp);
        if let Some(w) = rst.filter(|w| w >> 9 & 1 == 1) {
            self.want_spray_rst.push_back((w & 0xFF, rst_mp.clamp(1, MAX_PATHS as u64)));
        }
        for (port, v) in p.cc_in.iter().zip([self.rrng.below(2), self.rrng.pct(70) as u64]) {
            self.m.set(*port, v);
        }
        let spray_ready = self.rrng.pct(60);
        self.m.set(p.spray_ready, spray_ready as u64);
        if rst.is_some() {
            self.rst_busy = true;
        }
        // The send path's job queue: full at random, in stretches now and then.
        if self.rrng.pct(2) {
            self.job_stall = !self.job_stall;
        }
        let job_full = if self.job_stall { self.rrng.pct(97) } else { self.rrng.pct(self.cfg.job_full_pct) };
        self.m.set(p.job_full, job_full as u64);
        if job_full && matches!(self.expect.front(), Some((_, Ev::Job(_)))) {
            self.st.job_waits += 1;
        }
        self.m.set(p.ctrlq_base, CTRLQ_BASE);
        self.m.set(p.ctrlq_size, if self.cfg.ctrlq_log2 == 0 { 0 } else { 1u64 << self.cfg.ctrlq_log2 });
        self.m.set(p.ctrlq_ci, self.ctl_ci);
        self.m.set(p.ctrlq_reset, 0);
        self.m.eval();

        // Outputs.
        let g = |m: &Model, x: PortId| m.get(x);
        let qpc_a = g(&self.m, p.qpc_addr) as usize;
        let rxs_a = g(&self.m, p.rxs_addr) as usize;
        let rqpi_a = g(&self.m, p.rqpi_addr) as usize;
        let mr_a = g(&self.m, p.mr_addr) as usize;
        let cq_a = g(&self.m, p.cq_addr) as usize;
        let ring_a = g(&self.m, p.ring_raddr) as usize;
        let rxs_we = g(&self.m, p.rxs_we) == 1;
        let rxs_waddr = g(&self.m, p.rxs_waddr) as usize;
        let mut rxs_wdata = [0u32; RXS_WORDS];
        self.m.get_wide(p.rxs_wdata, &mut rxs_wdata);
        let cqpi_we = g(&self.m, p.cqpi_we) == 1;
        let cqpi_wdata = g(&self.m, p.cqpi_wdata);
        let rqs_a = g(&self.m, p.rqs_addr) as usize;
        let rqs_we = g(&self.m, p.rqs_we) == 1;
        let rqs_waddr = g(&self.m, p.rqs_waddr) as usize;
        let rqs_wdata = g(&self.m, p.rqs_wdata) as u32;
        let qperr_waddr = g(&self.m, p.qperr_waddr) as usize;
        let ack_bad = g(&self.m, p.cnt_ack_bad) == 1;
        let pop = g(&self.m, p.desc_pop) == 1;
        let rptr = g(&self.m, p.rptr);
        let idle = g(&self.m, p.idle) == 1;
        let lerr_pop = g(&self.m, p.lerr_pop) == 1;
        let spray_valid = g(&self.m, p.spray_valid) == 1;
        if g(&self.m, p.apsn[0]) == 1 {
            let got = (g(&self.m, p.apsn[1]), g(&self.m, p.apsn[2]));
            if self.want_apsn.pop_front() != Some(got) {
                return Err(self.fail(format!(
                    "acknowledged-PSN write {got:x?} (qpn, ePSN), expected {:x?}",
                    self.want_apsn.front()
                )));
            }
        }
        if spray_valid && spray_ready {
            let [op, qpn, ecn, path, mp] = p.spray_f.map(|x| g(&self.m, x));
            let ok = match op {
                OP_ACK => self.want_spray_ack.pop_front().is_some_and(|w| w == (qpn, ecn, path)),
                OP_RESET => self.want_spray_rst.pop_front().is_some_and(|w| w == (qpn, mp)),
                _ => false,
            };
            if !ok {
                return Err(self.fail(format!(
                    "path selector request op {op} qpn {qpn} ecn {ecn} path {path:#x} max_paths {mp}, expected ACK feedback {:x?} or reset {:x?}",
                    self.want_spray_ack.front(),
                    self.want_spray_rst.front()
                )));
            }
            self.st.spray_reqs += 1;
        }
        let rd = (g(&self.m, p.rd_valid) == 1 && rd_ready).then(|| g(&self.m, p.rd_addr));
        let rwqe_take = cpl.is_some() && g(&self.m, p.rwqe_ready) == 1;
        let wr = g(&self.m, p.wr_valid) == 1 && wr_ready;
        let ack = g(&self.m, p.ack_write) == 1;
        let qperr = g(&self.m, p.qperr_we) == 1;
        let job = g(&self.m, p.job_write) == 1;
        let lack = (g(&self.m, p.lack_we) == 1).then(|| {
            let w = g(&self.m, p.lack_wdata);
            let wd = [w as u32, (w >> 32) as u32];
            (
                g(&self.m, p.lack_waddr) as usize,
                unpack_field(LackPack::FIELDS, &wd, "ssn"),
                unpack_field(LackPack::FIELDS, &wd, "psn"),
            )
        });
        let jseq_w = (g(&self.m, p.jseq_we) == 1).then(|| (g(&self.m, p.jseq_waddr), g(&self.m, p.jseq_wdata)));
        self.arm_full_q = g(&self.m, p.arm_full) == 1;
        self.st.arm_full_cycles += self.arm_full_q as u64;
        let cnts: Vec<bool> = p.cnt.iter().map(|&c| g(&self.m, c) == 1).collect();

        let r = (|| -> Result<(), String> {
            if lerr_pop {
                return Err("lerr_pop with the local error FIFO empty".into());
            }
            // Ring pointer: inside the current descriptor's beats, never backwards.
            if let Some((d, _, _)) = &self.cur {
                let dist = (rptr + RING - d.rptr) % RING;
                if dist > d.nbeats || dist < self.cur_done {
                    return Err(format!("rptr {rptr:#x} outside / behind the beats of the current descriptor (rptr {:#x}, {} beats, {} freed so far)", d.rptr, d.nbeats, self.cur_done));
                }
                self.cur_done = dist;
            } else if rptr != self.last_rptr && self.cycle > 0 {
                return Err(format!("rptr moved to {rptr:#x} with no descriptor (was {:#x})", self.last_rptr));
            }
            self.last_rptr = rptr;
            if pop {
                let (d, qpn, after) = self.fifo.pop_front().ok_or("desc_pop with the FIFO empty")?;
                if let Some((pd, pq, pafter)) = self.cur.take() {
                    let tab = Rxs::unpack(&self.rxs_tab[pq], 0).rx_part();
                    if tab != pafter.rx_part() {
                        return Err(format!(
                            "qpn {pq}: RX state after descriptor [{}] is\n  {tab:x?}\nexpected\n  {pafter:x?}",
                            pd.what
                        ));
                    }
                }
                if rptr != d.rptr {
                    return Err(format!("descriptor popped with rptr {rptr:#x}, expected {:#x} (the previous packet's beats not exactly freed)", d.rptr));
                }
                self.note(format!("pop qpn {:#x} op {:#x} psn {:#x} ({})", d.dqpn, d.op, d.psn, d.what));
                if d.arm {
                    return Err("an arm word popped as a descriptor (harness)".into());
                }
                self.arm_pending.clear();
                self.cur = Some((d, qpn, after));
                self.cur_done = 0;
                self.last_progress = self.cycle;
            }
            if let Some(addr) = rd {
                let got = Ev::Rd(addr, [0; 64]);
                match self.take_expect(&got)? {
                    Ev::Rd(a, beat) if a == addr => {
                        let lat = self.rng.range(self.cfg.lat.0, self.cfg.lat.1);
                        self.dma.push_back((t + lat, beat));
                    }
                    e => return Err(format!("got {}, expected {}", ev_brief(&got), ev_brief(&e))),
                }
            }
            if wr {
                let addr = g(&self.m, p.wr_addr);
                let len = g(&self.m, p.wr_len) as usize;
                let lane = g(&self.m, p.wr_lane) as usize;
                let mut beat = [0u8; 64];
                self.m.get_bytes(p.wr_data, &mut beat);
                if lane + len.min(64) > 64 {
                    return Err(format!("DMA write of {len} bytes from lane {lane} passes the beat"));
                }
                // The write's bytes, from its first lane.
                let mut data = [0u8; 64];
                data[..64 - lane].copy_from_slice(&beat[lane..]);
                let got = Ev::Wr(addr, data[..len.min(64)].to_vec(), cqpi_we.then_some((cq_a as u64, cqpi_wdata)));
                if len > 64 {
                    return Err(format!("DMA write len {len}"));
                }
                self.mem_rtl.write(addr, &data[..len]);
                let ctl_end = CTRLQ_BASE + (32 << self.cfg.ctrlq_log2);
                if cqpi_we {
                    self.take_cqe(addr, &data[..len], Some((cq_a as u64, cqpi_wdata)))?;
                } else if self.cfg.ctrlq_log2 > 0 && (CTRLQ_BASE..ctl_end).contains(&addr) {
                    self.take_ctl(addr, &data[..len])?;
                } else {
                    match self.take_expect(&got)? {
                        Ev::Wr(a, b, c) => {
                            if a != addr || b.len() != len || b[..] != data[..len] {
                                return Err(format!(
                                    "got DMA write {addr:#x} len {len} data {:02x?}, expected {a:#x} len {} data {:02x?}",
                                    &data[..len.min(16)],
                                    b.len(),
                                    &b[..b.len().min(16)]
                                ));
                            }
                            if c != cqpi_we.then_some((cq_a as u64, cqpi_wdata)) {
                                return Err(format!(
                                    "CQ PI write {:?} with DMA write {addr:#x}, expected {c:x?}",
                                    cqpi_we.then_some((cq_a, cqpi_wdata))
                                ));
                            }
                        }
                        e => return Err(format!("got {}, expected {}", ev_brief(&got), ev_brief(&e))),
                    }
                }
            } else if cqpi_we {
                return Err("CQ PI written without a CQE write".into());
            }
            if qperr {
                let got = Ev::QpErr(qperr_waddr);
                match self.take_expect(&got)? {
                    Ev::QpErr(q) if q == qperr_waddr => {}
                    e => return Err(format!("got {}, expected {}", ev_brief(&got), ev_brief(&e))),
                }
            }
            if ack {
                if ack_full {
                    return Err("ack_write while ack_full".into());
                }
                let mut w = [0u32; TxDescPack::WIDTH.div_ceil(32)];
                self.m.get_wide(p.ack_data, &mut w);
                let got = Ev::Ack(w.to_vec());
                match self.take_expect(&got)? {
                    Ev::Ack(e) if e[..] == w[..] => {}
                    Ev::Ack(e) => {
                        let diffs: Vec<String> = TxDescPack::FIELDS
                            .iter()
                            .filter(|(n, _)| {
                                unpack_field(TxDescPack::FIELDS, &e, n) != unpack_field(TxDescPack::FIELDS, &w, n)
                            })
                            .map(|(n, _)| {
                                format!(
                                    "{n}: got {:#x} expected {:#x}",
                                    unpack_field(TxDescPack::FIELDS, &w, n),
                                    unpack_field(TxDescPack::FIELDS, &e, n)
                                )
                            })
                            .collect();
                        return Err(format!("ACK descriptor differs: {}", diffs.join(", ")));
                    }
                    e => return Err(format!("got {}, expected {}", ev_brief(&got), ev_brief(&e))),
                }
            }
            if job {
                if job_full {
                    return Err("job_write while job_full".into());
                }
                let mut w = vec![0u32; RewindPack::WIDTH.div_ceil(32)];
                self.m.get_wide(p.job_data, &mut w);
                let got = Ev::Job(w.clone());
                match self.take_expect(&got)? {
                    Ev::Job(e) if e == w => {
                        // The job count table is written with the job: its QP, the job's count.
                        let want = (
                            unpack_field(RewindPack::FIELDS, &w, "qpn"),
                            job_fields(&w).iter().find(|f| f.0 == "wqe.flags").map(|f| f.1 & 7).unwrap_or(0),
                        );
                        if jseq_w != Some(want) {
                            return Err(format!("job count table write {jseq_w:x?} with the job, expected {want:x?}"));
                        }
                    }
                    Ev::Job(e) => {
                        let (fe, fw) = (job_fields(&e), job_fields(&w));
                        let diffs: Vec<String> = fe
                            .iter()
                            .zip(&fw)
                            .filter(|(a, b)| a.1 != b.1)
                            .map(|(a, b)| format!("{}: got {:#x} expected {:#x}", a.0, b.1, a.1))
                            .collect();
                        return Err(format!(
                            "READ job word differs: {}\n  got      {fw:x?}\n  expected {fe:x?}",
                            diffs.join(", ")
                        ));
                    }
                    e => return Err(format!("got {}, expected {}", ev_brief(&got), ev_brief(&e))),
                }
            }
            if let Some((q, ssn, psn)) = lack {
                let got = Ev::Lack(q, ssn, psn);
                match self.expect_lack.pop_front() {
                    Some((_, Ev::Lack(eq, essn, epsn))) if (eq, essn, epsn) == (q, ssn, psn) => {
                        self.last_progress = self.cycle;
                    }
                    Some((_, e)) => return Err(format!("got {}, expected {}", ev_brief(&got), ev_brief(&e))),
                    None => return Err(format!("unexpected {} (nothing expected)", ev_brief(&got))),
                }
            }
            if jseq_w.is_some() && !job {
                // Only a responder reset writes it without a job, in the order the resets were queued.
                if !self.rst_busy || jseq_w != self.rst_jseq.front().copied() {
                    return Err(format!(
                        "job count table write {jseq_w:x?} without a job (a responder reset's expected: {:x?})",
                        self.rst_jseq.front()
                    ));
                }
                self.rst_jseq.pop_front();
            }
            if rxs_we {
                let ok_addr = self.cur.as_ref().map(|c| c.1) == Some(rxs_waddr)
                    || self.rst_busy
                    || self.arm_pending.contains(&rxs_waddr);
                if !ok_addr {
                    return Err(format!("RX state write to qpn {rxs_waddr} outside its descriptor"));
                }
            }
            Ok(())
        })();
        r.map_err(|e| self.fail(e))?;
        if cnts[10] && self.cfg.ctrlq_log2 == 0 {
            return Err(self.fail("a CtrlQ entry written with no CtrlQ set up".into()));
        }
        let c = &mut self.cnt_rtl;
        // A bogus ACK is a header error, like a bad QPN (the core adds both into RX_HDR_ERR).
        if ack_bad {
            c.hdr += 1;
        }
        for (i, v) in cnts.iter().enumerate() {
            if *v {
                match i {
                    0 => c.hdr += 1,
                    1 => c.psn += 1,
                    2 => c.access += 1,
                    3 => c.dup += 1,
                    4 => c.rnr += 1,
                    5 => c.nak += 1,
                    6 => c.ack += 1,
                    7 => c.cqe += 1,
                    8 => c.inv += 1,
                    9 => c.ctl_drop += 1,
                    10 => c.ctl += 1,
                    _ => {}
                }
            }
        }
        if rwqe_take {
            self.dma.pop_front();
        }
        let busy = pop
            || !idle
            || !self.fifo.is_empty()
            || !self.expect.is_empty()
            || !self.expect_cqe.is_empty()
            || !self.expect_req_cqe.is_empty()
            || !self.expect_qperr.is_empty()
            || !self.expect_lack.is_empty()
            || rqs_we
            || !self.dma.is_empty()
            || rst.is_some()
            || !self.rst_q.is_empty()
            || arm.is_some()
            || self.arm_gap > 0
            || job
            || spray_valid
            || !self.want_spray_ack.is_empty()
            || !self.want_spray_rst.is_empty()
            || !self.want_apsn.is_empty();
        if busy {
            self.last_busy = t;
        }

        self.m.tick();
        self.qpc_q = self.qpc_tab[qpc_a];
        self.rxs_q = self.rxs_tab[rxs_a];
        self.rqs_q = self.rqs_tab[rqs_a];
        self.rqpi_q = self.rqpi_tab[rqpi_a];
        self.sqpi_q = self.sqpi_tab[rqpi_a];
        self.mr_q = self.mr_tab[mr_a];
        self.cq_q = self.cq_tab[cq_a];
        self.cqpi_q = self.cqpi_tab[cq_a];
        self.ring_q = self.ring[ring_a];
        if rxs_we {
            self.rxs_tab[rxs_waddr] = rxs_wdata;
        }
        if rqs_we {
            self.rqs_tab[rqs_waddr] = rqs_wdata;
        }
        if cqpi_we {
            self.cqpi_tab[cq_a] = cqpi_wdata;
        }
        self.cycle += 1;
        let streams = [&self.expect, &self.expect_cqe, &self.expect_req_cqe, &self.expect_qperr, &self.expect_lack];
        if (streams.iter().any(|q| !q.is_empty()) || !self.fifo.is_empty())
            && self.cycle - self.last_progress > STALL_MAX
        {
            let e = streams.iter().find_map(|q| q.front()).map(|e| ev_brief(&e.1)).unwrap_or_default();
            return Err(self.fail(format!(
                "no progress for {STALL_MAX} cycles; next expected: {e}; {} descriptors queued",
                self.fifo.len()
            )));
        }
        Ok(())
    }

    fn quiescent(&self) -> bool {
        self.cycle > self.last_busy + 6
    }

    /// At a quiescent point: everything expected happened, the ring is free,
    /// and every RX state word and the counters agree with the model.
    fn check_quiet(&mut self) -> Result<(), String> {
        if let Some((pd, pq, pafter)) = self.cur.take() {
            let tab = Rxs::unpack(&self.rxs_tab[pq], 0).rx_part();
            if tab != pafter.rx_part() {
                return Err(self.fail(format!(
                    "qpn {pq}: RX state after descriptor [{}] is\n  {tab:x?}\nexpected\n  {pafter:x?}",
                    pd.what
                )));
            }
        }
        if self.last_rptr != self.wp {
            return Err(
                self.fail(format!("quiescent with rptr {:#x}, ring written up to {:#x}", self.last_rptr, self.wp))
            );
        }
        for q in &self.qps {
            let tab = Rxs::unpack(&self.rxs_tab[q.qpn], self.rqs_tab[q.qpn]);
            if tab != self.rxs[q.qpn] {
                return Err(self.fail(format!(
                    "qpn {}: RX state at a quiescent point is\n  {tab:x?}\nexpected\n  {:x?}",
                    q.qpn, self.rxs[q.qpn]
                )));
            }
        }
        if self.cnt_rtl != self.cnt_model {
            return Err(self.fail(format!("counters {:?}, expected {:?}", self.cnt_rtl, self.cnt_model)));
        }
        for &(c, _, _) in &self.cqs {
            if self.cqpi_tab[c as usize] != self.cq_pi[c as usize] {
                return Err(self.fail(format!(
                    "CQ {c} PI {:#x}, expected {:#x}",
                    self.cqpi_tab[c as usize], self.cq_pi[c as usize]
                )));
            }
        }
        self.rst_busy = false;
        Ok(())
    }

    fn run(mut self) -> Result<Stats, String> {
        let mut batch = 0u64;
        loop {
            if batch == 0 && self.fifo.is_empty() && self.quiescent() {
                self.check_quiet()?;
                if self.st.descs as usize >= self.cfg.descs {
                    break;
                }
                self.host_actions();
                self.host_read_actions();
                batch = self.rng.range(1, 30);
                self.read_batch = self.rrng.pct(self.cfg.read_batch_pct);
            }
            if batch > 0
                && self.fifo.len() < 8
                && self.rst_q.is_empty()
                && !self.rst_busy
                && self.rng.pct(self.cfg.push_pct)
            {
                let used = (self.wp + RING - self.last_rptr) % RING;
                if used + 67 <= RING_LIMIT {
                    self.gen_one();
                    self.last_busy = self.cycle;
                    batch -= 1;
                }
            }
            // Resets are applied before the batch starts.
            if self.rst_busy && self.rst_q.is_empty() && self.quiescent() {
                self.check_quiet()?;
            }
            self.step()?;
        }
        if self.mem_rtl != self.mem_model {
            return Err(self.fail("host memory image differs from the model".into()));
        }
        self.st.cycles = self.cycle;
        Ok(self.st)
    }
}

/// The fields of a job word (`RewindPack` and its `WqeHeadPack`), for messages.
fn job_fields(w: &[u32]) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = RewindPack::FIELDS
        .iter()
        .filter(|f| f.0 != "wqe")
        .map(|f| (f.0.to_string(), unpack_field(RewindPack::FIELDS, w, f.0)))
        .collect();
    let at: usize = RewindPack::FIELDS.iter().take_while(|f| f.0 != "wqe").map(|f| f.1).sum();
    let mut wqe = vec![0u32; WqeHeadPack::WIDTH / 32];
    for b in 0..WqeHeadPack::WIDTH {
        if w[(at + b) / 32] >> ((at + b) % 32) & 1 != 0 {
            wqe[b / 32] |= 1 << (b % 32);
        }
    }
    for f in WqeHeadPack::FIELDS {
        v.push((format!("wqe.{}", f.0), unpack_field(WqeHeadPack::FIELDS, &wqe, f.0)));
    }
    v
}

/// The fields of a CtrlQ entry (`CtrlqPack`), for messages.
fn ctl_fields(b: &[u8]) -> Vec<(&'static str, u64)> {
    let mut w = vec![0u32; 8];
    for (i, x) in b.iter().take(32).enumerate() {
        w[i / 4] |= (*x as u32) << (8 * (i % 4));
    }
    CtrlqPack::FIELDS.iter().map(|f| (f.0, unpack_field(CtrlqPack::FIELDS, &w, f.0))).collect()
}

fn off_of(k: u64, pmtu: u64) -> u64 {
    k * pmtu
}

/// Runs parameter set `cfg` on its fixed seeds (`RNIC_RESP_BLOCK_ITERS` of
/// them, default 1) or on `RNIC_RESP_BLOCK_SEED`.
fn run_set(cfg: Cfg, base_seed: u64) {
    let seeds = block_seeds("RNIC_RESP_BLOCK", base_seed);
    for seed in seeds {
        let started = std::time::Instant::now();
        eprintln!("resp_block {}: seed {seed:#x}", cfg.name);
        match Tb::new(cfg, seed).run() {
            Ok(s) => {
                if std::env::var_os("RNIC_RESP_BLOCK_COVER").is_some() {
                    for ((k, o), n) in &s.cover {
                        println!("  {k:45} -> {o:45} {n}");
                    }
                }
                let mut naks: Vec<_> = s.naks.iter().map(|(k, v)| format!("{k:#x}:{v}")).collect();
                naks.sort();
                println!(
                    "resp_block {} seed {seed:#x}: {} cycles in {:.2}s, {} descriptors, {} placed ({} KiB), {} duplicates, NAKs {{{}}}, {} dropped, {} ACKs in ({} path selector requests), {} CQEs, {} resets",
                    cfg.name,
                    s.cycles,
                    started.elapsed().as_secs_f64(),
                    s.descs,
                    s.placed,
                    s.bytes / 1024,
                    s.dups,
                    naks.join(" "),
                    s.drops,
                    s.acks_in,
                    s.spray_reqs,
                    s.cqes,
                    s.resets
                );
                println!(
                    "  READ: {} requests accepted, {} jobs ({} duplicates answered again, {} dropped), {} arms, {} response packets placed ({} KiB), {} gaps, {} duplicates, {} lkey failures, {} not fitting the READ's length, {} HOLD words ({} MSNs kept), {} READ ends ({} with a kept MSN, {} not lACK's, {} beyond posted), {} error NAKs behind a READ ignored, {} failing it, {} requester resets while armed, {} cycles a job waited on job_full, {} cycles arm_full, {} CtrlQ entries, {} placed NAKs folded",
                    s.rd_req_ok,
                    s.rd_jobs,
                    s.rd_dup_jobs,
                    s.rd_dup_dropped,
                    s.arms,
                    s.rsp_placed,
                    s.rsp_bytes / 1024,
                    s.rsp_gaps,
                    s.rsp_dups,
                    s.rsp_access,
                    s.rsp_len_bad,
                    s.hold_words,
                    s.held_kept,
                    s.rdone,
                    s.rdone_kept,
                    s.rdone_bad,
                    s.rdone_over,
                    s.hold_err_ignored,
                    s.hold_err_done,
                    s.rst_armed,
                    s.job_waits,
                    s.arm_full_cycles,
                    s.ctl_entries,
                    s.folded
                )
            }
            Err(e) => panic!(
                "resp_block {}: FAILED with seed {seed:#x} (rerun with RNIC_RESP_BLOCK_SEED={seed:#x}): {e}",
                cfg.name
            ),
        }
    }
}

#[test]
fn resp_block_4qp_pmtu256() {
    run_set(SETS[0], 0x7100);
}

#[test]
fn resp_block_12qp_qpn255_pmtu4096() {
    run_set(SETS[1], 0x7200);
}

/// Regression of an RTL defect this test found (fixed in `hw/src/resp.rs`): the
/// ACK receiver's guard "an ACK may complete only WQEs that were posted"
/// computes `posted = bit_cast::<24, 16>(sq_pi - req_acked[15:0])`, which
/// rust-hdl emits as `posted = ((sq_pi$q - rsu$req_acked[0+:16]) & 24'hffffff)`:
/// Verilog evaluates the subtraction 24 bits wide (the width of `posted`), so
/// once the 16-bit SQ producer index has wrapped below the low 16 bits of
/// the acked count (e.g. acked 0xfffffb, PI 0x0002: 7 WQEs posted) `posted`
/// becomes 0xff0007 instead of 7. An ACK (or NAK) whose MSN lies beyond the
/// posted WQEs is then not ignored: the responder writes success CQEs for
/// WQEs that were never posted (up to 2^23 of them) and may fail the QP.
/// Seed 0x7109 of the 4-QP set, descriptor #34: ACK to QPN 2 with MSN 0x4,
/// acked 0xfffffb, SQ PI 0x0002 (posted 7, distance 9): expected ignored
/// (`rx_hdr_err`, no CQE); the RTL writes a send CQE for WQE 0xfffb at CQ
/// address 0x2000250020 (cycle 523). The same defect fails seed 0x7202 of the
/// 12-QP set when run with `ack_over_pi_wrap` (descriptor #114: ACK to QPN
/// 0x8b, MSN 0x9, syndrome 0x63, acked 0xfffffb, PI 0x0009: distance 14 =
/// posted with a NAK syndrome, must be ignored; the RTL writes a send CQE for
/// WQE 0xfffb at cycle 7052). The other tests keep ACKs strictly below the posted WQEs while
/// the PI is wrapped that way (`Cfg::ack_over_pi_wrap`).
#[test]
fn resp_block_ack_beyond_posted_after_sq_pi_wrap() {
    let mut cfg = SETS[0];
    cfg.name = "4qp_pmtu256_ack_over_pi_wrap";
    cfg.ack_over_pi_wrap = true;
    run_set(cfg, 0x7109);
}
