//! Reliable-connected queue pairs: creation, the state machine, posting.

use crate::cq::{WcOpcode, WcStatus, WorkCompletion};
use crate::ctx::{Context, CtxState, NetAddr, Pd};
use crate::error::Queue;
use crate::mr::{AccessFlags, Sge};
use crate::recovery::{rnr_timer_us, RecoveryStats, ReqRecovery};
use crate::resp_recovery::RespRecovery;
use crate::ring::{self, used};
use crate::{Cq, DestroyError, Error, Result};
use rnic_driver::{DmaAccess, DmaBuf};
use rnic_spec::desc::{send_op, wqe_flags, RecvWqe, SendWqe, WqeSge, RECV_WQE_BYTES, SEND_WQE_BYTES};
use rnic_spec::params::{self, MAX_PATHS};
use rnic_spec::regs::{self, qpc, NUM_STAGE};
use zerocopy::IntoBytes;

/// QPNs 0 and 1 are the SMI/GSI QPs in InfiniBand; tools (Wireshark) decode
/// traffic to QP1 as management datagrams, so data QPs start at 2.
const FIRST_QPN: usize = 2;
/// Largest QPN the wire and the QPC `REMOTE_QPN` field carry.
const QPN_MAX: u32 = (1 << 24) - 1;
/// PSNs are 24 bits.
const PSN_MAX: u32 = (1 << 24) - 1;
/// UDP source port base (`rnic_spec::params::UDP_SPORT_BASE`).
const UDP_SPORT_BASE: u64 = rnic_spec::params::UDP_SPORT_BASE as u64;
/// Default `retry_cnt` (ibverbs' largest).
const DEFAULT_RETRY_CNT: u8 = 7;
/// Default `rnr_retry`: forever.
const DEFAULT_RNR_RETRY: u8 = crate::recovery::RNR_RETRY_INFINITE;
/// Default `min_rnr_timer` code: 10 µs.
const DEFAULT_MIN_RNR_TIMER: u8 = 1;

/// Device cycles of a `min_rnr_timer` code.
fn rnr_timer_cycles(code: u8) -> u64 {
    (rnr_timer_us(code) * params::CLOCK_HZ as f64 / 1e6).round() as u64
}

/// QP states (`ibv_qp_state`, the subset an RC QP of this NIC uses).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum QpState {
    /// Just created or reset: nothing is processed.
    #[default]
    Reset,
    /// Initialized: receives may be posted.
    Init,
    /// Ready to receive: the responder accepts requests.
    Rtr,
    /// Ready to send: the requester transmits.
    Rts,
    /// Error: outstanding and new WRs complete with `WrFlushErr`.
    Error,
}

/// Whether ibverbs allows modifying an RC QP from `from` to `to`.
pub fn transition_allowed(from: QpState, to: QpState) -> bool {
    use QpState::*;
    matches!((from, to), (_, Reset) | (_, Error) | (Reset, Init) | (Init, Init) | (Init, Rtr) | (Rtr, Rts) | (Rts, Rts))
}

/// Path MTU (`ibv_mtu`; the discriminants are ibverbs' values).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mtu {
    /// 256 bytes.
    Mtu256 = 1,
    /// 512 bytes.
    Mtu512 = 2,
    /// 1024 bytes.
    Mtu1024 = 3,
    /// 2048 bytes.
    Mtu2048 = 4,
    /// 4096 bytes.
    Mtu4096 = 5,
}

impl Mtu {
    /// log2 of the payload bytes per packet.
    pub fn log2(self) -> u8 {
        params::PMTU_LOG2_MIN + self as u8 - 1
    }

    /// Payload bytes per packet.
    pub fn bytes(self) -> u32 {
        1 << self.log2()
    }

    /// The MTU of exactly `bytes` bytes (256, 512, 1024, 2048 or 4096).
    pub fn from_bytes(bytes: u32) -> Option<Mtu> {
        [Mtu::Mtu256, Mtu::Mtu512, Mtu::Mtu1024, Mtu::Mtu2048, Mtu::Mtu4096].into_iter().find(|m| m.bytes() == bytes)
    }
}

/// QP creation attributes (`ibv_qp_init_attr`, RC only).
#[derive(Clone)]
pub struct QpInitAttr {
    /// CQ for send completions.
    pub send_cq: Cq,
    /// CQ for receive completions (may be the same CQ).
    pub recv_cq: Cq,
    /// Most send WRs outstanding at once (0..=32768).
    pub max_send_wr: u32,
    /// Most receive WRs outstanding at once (0..=32768).
    pub max_recv_wr: u32,
    /// Most bytes a send WR may carry inline ([`SendFlags::INLINE`];
    /// 0..=[`MAX_INLINE_DATA`]). The library keeps a copy of each inline
    /// payload in a buffer of its own (registered in the QP's PD, one MR),
    /// so the WR's source may be reused as soon as the post returns.
    pub max_inline_data: u32,
    /// Every send WR gets a work completion when it succeeds, whether or not
    /// it has [`SendFlags::SIGNALED`] (`sq_sig_all`).
    pub sq_sig_all: bool,
}

impl QpInitAttr {
    /// Attributes with these CQs and queue depths, no inline data and
    /// `sq_sig_all` off; set the others with struct update syntax:
    /// `QpInitAttr { max_inline_data: 64, ..QpInitAttr::new(&cq, &cq, 128, 128) }`.
    pub fn new(send_cq: &Cq, recv_cq: &Cq, max_send_wr: u32, max_recv_wr: u32) -> QpInitAttr {
        QpInitAttr {
            send_cq: send_cq.clone(),
            recv_cq: recv_cq.clone(),
            max_send_wr,
            max_recv_wr,
            max_inline_data: 0,
            sq_sig_all: false,
        }
    }
}

/// The most `max_inline_data` a QP may ask for.
pub const MAX_INLINE_DATA: u32 = 256;

/// Attributes for [`Qp::modify`] (`ibv_qp_attr`): `qp_state` is the target,
/// the options are the attributes given (the attribute mask of ibverbs).
/// INIT→RTR requires `path_mtu`, `dest_qp_num`, `rq_psn` and `dest`;
/// RTR→RTS requires `sq_psn`; other transitions take none.
#[derive(Clone, Debug, Default)]
pub struct QpAttr {
    /// Target state.
    pub qp_state: QpState,
    /// Path MTU.
    pub path_mtu: Option<Mtu>,
    /// Remote QPN.
    pub dest_qp_num: Option<u32>,
    /// First PSN the responder expects.
    pub rq_psn: Option<u32>,
    /// First PSN the requester sends.
    pub sq_psn: Option<u32>,
    /// Remote NIC's MAC and IP (the address vector).
    pub dest: Option<NetAddr>,
    /// Retransmission timeouts in a row without progress before a send WR
    /// fails with `RetryExcErr` (0..=7; default 7). Any transition may set it.
    pub retry_cnt: Option<u8>,
    /// RNR NAKs in a row before a send WR fails with `RnrRetryExcErr`
    /// (0..=7, 7: retry forever; default 7). Any transition may set it.
    pub rnr_retry: Option<u8>,
    /// How long the requester waits after an RNR NAK before resending, as
    /// ibverbs' 5-bit `min_rnr_timer` code ([`crate::rnr_timer_us`]; default
    /// 1 = 10 µs). Here it is the requester's own setting, not the
    /// responder's: the RNR NAK carries no timer.
    pub min_rnr_timer: Option<u8>,
    /// Selective repeat at this QP's responder: WRITE packets that arrive
    /// ahead of the expected PSN (within `params::SR_WINDOW`) are placed
    /// instead of dropped, so the peer resends only what was lost (default
    /// on). Off, the responder accepts packets in order only (go-back-N).
    /// Takes effect at the next INIT→RTR. Not an ibverbs attribute.
    pub selective_repeat: Option<bool>,
    /// STrack's adaptive packet spraying of this QP's requests over this
    /// many entropies (UDP source ports; 1..=`params::MAX_PATHS`): the NIC
    /// picks each packet's port, skipping ports whose ACKs came back
    /// ECN-marked, and asks an ACK for every packet. 0 (the default): one
    /// port for all packets. Any transition may set it; it takes effect (and
    /// the QP's path selector starts afresh) at the next transition that
    /// programs the NIC (not INIT→INIT or RTS→RTS). Not an ibverbs attribute.
    pub max_paths: Option<u16>,
    /// STrack's congestion window (`Context::set_cc_network`): a packet
    /// goes only while the QP's packets in flight (past its latest ACK's
    /// ePSN and the packets the peer holds beyond it, STrack's SACK) are
    /// fewer than the window holds packets, every packet asks for an ACK,
    /// and the ACKs' RTT, ECN echo and bytes received move the window (Algorithms 1, 2
    /// and 4 of STrack). Default off. Any transition may set it; it takes
    /// effect, with the window at its largest, at the next transition that
    /// programs the NIC (not INIT→INIT or RTS→RTS). Not an ibverbs attribute.
    pub strack_cc: Option<bool>,
    /// With `max_paths`: spray obliviously, the comparison point of
    /// STrack's paper: the packets take the QP's entropies in plain round
    /// robin, whatever their ACKs' ECN echo and the window say. Default off
    /// (adaptive). Takes effect as `max_paths` does. Not an ibverbs attribute.
    pub spray_oblivious: Option<bool>,
    /// DCTCP's congestion window (SRNIC's choice) instead of STrack's: the
    /// send path gates the QP as with `strack_cc`, but once per window α
    /// follows the fraction of bytes whose ACKs echoed ECN, the first echo
    /// of a window cuts it by `1 − α/2` and clean ACKs add one MTU per
    /// window (`Context::set_cc_network` sets the MTU and the largest
    /// window). `Some(true)` turns the window on; it cannot be combined
    /// with `strack_cc: Some(true)`. Default off. Takes effect as
    /// `strack_cc` does. Not an ibverbs attribute.
    pub dctcp_cc: Option<bool>,
}

impl QpAttr {
    /// RESET→INIT.
    pub fn init() -> Self {
        QpAttr { qp_state: QpState::Init, ..Default::default() }
    }

    /// INIT→RTR towards `dest_qp_num` on the NIC at `dest`.
    pub fn rtr(dest: NetAddr, dest_qp_num: u32, rq_psn: u32, path_mtu: Mtu) -> Self {
        QpAttr {
            qp_state: QpState::Rtr,
            path_mtu: Some(path_mtu),
            dest_qp_num: Some(dest_qp_num),
            rq_psn: Some(rq_psn),
            dest: Some(dest),
            ..Default::default()
        }
    }

    /// RTR→RTS.
    pub fn rts(sq_psn: u32) -> Self {
        QpAttr { qp_state: QpState::Rts, sq_psn: Some(sq_psn), ..Default::default() }
    }

    /// Any state → `state` without attributes (ERROR, RESET).
    pub fn to(state: QpState) -> Self {
        QpAttr { qp_state: state, ..Default::default() }
    }

    fn given(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        if self.path_mtu.is_some() {
            v.push("path_mtu");
        }
        if self.dest_qp_num.is_some() {
            v.push("dest_qp_num");
        }
        if self.rq_psn.is_some() {
            v.push("rq_psn");
        }
        if self.sq_psn.is_some() {
            v.push("sq_psn");
        }
        if self.dest.is_some() {
            v.push("dest");
        }
        v
    }
}

/// Attributes a transition requires and accepts (ibverbs' table, reduced to the ones this NIC has).
fn transition_attrs(from: QpState, to: QpState) -> &'static [&'static str] {
    match (from, to) {
        (QpState::Init, QpState::Rtr) => &["path_mtu", "dest_qp_num", "rq_psn", "dest"],
        (QpState::Rtr, QpState::Rts) => &["sq_psn"],
        _ => &[],
    }
}

/// Checks a transition and its attributes against ibverbs' rules.
pub fn check_modify(qpn: u32, from: QpState, attr: &QpAttr) -> Result<()> {
    let to = attr.qp_state;
    if !transition_allowed(from, to) {
        return Err(Error::BadTransition { qpn, from, to });
    }
    let want = transition_attrs(from, to);
    let given = attr.given();
    if let Some(extra) = given.iter().find(|a| !want.contains(a)) {
        return Err(Error::BadAttr {
            qpn,
            attr: extra,
            why: format!("is not accepted by the {from:?} -> {to:?} transition"),
        });
    }
    if let Some(missing) = want.iter().find(|a| !given.contains(a)) {
        return Err(Error::MissingAttr { qpn, from, to, attr: missing });
    }
    for (name, v, max) in
        [("retry_cnt", attr.retry_cnt, 7), ("rnr_retry", attr.rnr_retry, 7), ("min_rnr_timer", attr.min_rnr_timer, 31)]
    {
        if let Some(v) = v.filter(|&v| v > max) {
            return Err(Error::BadAttr { qpn, attr: name, why: format!("{v} is above {max}") });
        }
    }
    if attr.strack_cc == Some(true) && attr.dctcp_cc == Some(true) {
        return Err(Error::BadAttr {
            qpn,
            attr: "dctcp_cc",
            why: "a QP has one window: STrack's (strack_cc) or DCTCP's (dctcp_cc), not both".into(),
        });
    }
    if let Some(n) = attr.max_paths.filter(|&n| n as usize > MAX_PATHS) {
        return Err(Error::BadAttr { qpn, attr: "max_paths", why: format!("{n} is above {MAX_PATHS}") });
    }
    if let Some(d) = attr.dest_qp_num.filter(|&d| d > QPN_MAX) {
        return Err(Error::BadAttr { qpn, attr: "dest_qp_num", why: format!("{d:#x} does not fit 24 bits") });
    }
    for (name, v) in [("rq_psn", attr.rq_psn), ("sq_psn", attr.sq_psn)] {
        if let Some(p) = v.filter(|&p| p > PSN_MAX) {
            return Err(Error::BadAttr { qpn, attr: name, why: format!("{p:#x} does not fit 24 bits") });
        }
    }
    Ok(())
}

/// Send work request opcodes (`ibv_wr_opcode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WrOpcode {
    /// RDMA WRITE to `remote_addr` (a VA in the remote MR) with `rkey`.
    RdmaWrite {
        /// Remote virtual address.
        remote_addr: u64,
        /// Remote key.
        rkey: u32,
    },
    /// SEND into the next receive WR of the remote QP.
    Send,
    /// RDMA WRITE with immediate data: also consumes the next receive WR of
    /// the remote QP, which completes with `imm` (`IBV_WR_RDMA_WRITE_WITH_IMM`).
    RdmaWriteWithImm {
        /// Remote virtual address.
        remote_addr: u64,
        /// Remote key.
        rkey: u32,
        /// Immediate data for the remote completion.
        imm: u32,
    },
    /// SEND with immediate data (`IBV_WR_SEND_WITH_IMM`).
    SendWithImm {
        /// Immediate data for the remote completion.
        imm: u32,
    },
    /// RDMA READ (`IBV_WR_RDMA_READ`): the WR's `sg.len` bytes from
    /// `remote_addr` (a VA in the remote MR, which needs `REMOTE_READ`) with
    /// `rkey` land in the WR's scatter entry, whose MR needs `LOCAL_WRITE`
    /// (the post is refused otherwise). It consumes no receive WR at the
    /// remote QP and completes as [`WcOpcode::RdmaRead`] once all of its
    /// data has landed. WRs posted behind it are not held back until then
    /// (there is no `IBV_SEND_FENCE`): one that reads the READ's
    /// destination may see the bytes from before the READ, so wait for the
    /// READ's completion first.
    RdmaRead {
        /// Remote virtual address.
        remote_addr: u64,
        /// Remote key.
        rkey: u32,
    },
}

impl WrOpcode {
    /// Whether the operation consumes a receive WR at the remote QP.
    pub fn consumes_recv(&self) -> bool {
        matches!(self, WrOpcode::Send | WrOpcode::SendWithImm { .. } | WrOpcode::RdmaWriteWithImm { .. })
    }

    /// Whether the NIC writes the WR's scatter entry (so its MR needs `LOCAL_WRITE`).
    pub(crate) fn writes_local(&self) -> bool {
        matches!(self, WrOpcode::RdmaRead { .. })
    }
}

bitflags::bitflags! {
    /// A send WR's flags (`ibv_send_flags`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
    pub struct SendFlags: u32 {
        /// The WR gets a work completion when it succeeds (`IBV_SEND_SIGNALED`).
        /// Without it only a failure is reported (the error completion, and
        /// the flush completions behind it). The NIC still writes a CQE for
        /// every WR, which `poll_cq` consumes: an unsignaled WR holds its SQ
        /// slot and a CQ entry until a poll of its CQ passes it, so a CQ must
        /// still cover every WR outstanding on it, signaled or not.
        const SIGNALED = 1 << 1;
        /// The payload is copied at post time (`IBV_SEND_INLINE`): the
        /// source may change right after the post. Up to the QP's
        /// `max_inline_data` bytes; not for RDMA READ. An inline WR of at
        /// most 64 bytes posted to an idle SQ goes to the NIC with its
        /// doorbell (the WQE push window), payload and all, with no DMA read.
        const INLINE = 1 << 3;
    }
}

/// A send work request (`ibv_send_wr`).
#[derive(Clone, Copy)]
pub struct SendWr<'a> {
    /// Returned in the completion.
    pub wr_id: u64,
    /// [`SendFlags::SIGNALED`] for a completion on success.
    pub send_flags: SendFlags,
    /// What to do.
    pub opcode: WrOpcode,
    /// Local data (`sg_list` and `num_sge`): a SEND or WRITE gathers its
    /// payload from up to [`MAX_SEND_SGE`] entries in order; an RDMA READ
    /// lands in one. Empty for a zero-length message; entries of length 0
    /// take no bytes. `mr.sge(off, len).into()` makes a one-entry list.
    pub sg_list: SgList<'a>,
}

/// A send WR's gather list (`sg_list`/`num_sge`), held in the WR: up to
/// [`MAX_SEND_SGE`] entries, so a WR built in a loop or a closure borrows
/// no array.
#[derive(Clone, Copy, Default)]
pub struct SgList<'a> {
    entries: [Option<Sge<'a>>; MAX_SEND_SGE],
}

impl<'a> SgList<'a> {
    /// The list of `entries`, in order; more than [`MAX_SEND_SGE`] is an error.
    pub fn new(entries: &[Sge<'a>]) -> Result<Self> {
        if entries.len() > MAX_SEND_SGE {
            return Err(Error::BadSize {
                what: "send WR gather entries (max_send_sge)",
                value: entries.len() as u64,
                min: 0,
                max: MAX_SEND_SGE as u64,
            });
        }
        let mut list = Self::default();
        for (slot, e) in list.entries.iter_mut().zip(entries) {
            *slot = Some(*e);
        }
        Ok(list)
    }

    /// The entries, in order.
    pub fn iter(&self) -> impl Iterator<Item = &Sge<'a>> {
        self.entries.iter().flatten()
    }

    /// Number of entries (`num_sge`).
    pub fn len(&self) -> usize {
        self.iter().count()
    }

    /// No entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<'a> From<Sge<'a>> for SgList<'a> {
    fn from(e: Sge<'a>) -> Self {
        Self::new(&[e]).expect("one entry")
    }
}

impl<'a> From<[Sge<'a>; MAX_SEND_SGE]> for SgList<'a> {
    fn from(e: [Sge<'a>; MAX_SEND_SGE]) -> Self {
        Self::new(&e).expect("MAX_SEND_SGE entries")
    }
}

/// Gather entries a send WR may carry (`ibv_qp_cap::max_send_sge`): the
/// send WQE holds two, so the NIC reads them without a second fetch.
pub const MAX_SEND_SGE: usize = rnic_spec::desc::SEND_SGES;

impl SendWr<'_> {
    /// Message length: the bytes of the gather list.
    pub fn len(&self) -> u64 {
        self.sg_list.iter().map(|s| s.len as u64).sum()
    }

    /// The message has no payload.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entries that carry bytes (at most two once checked).
    fn pieces(&self) -> impl Iterator<Item = &Sge<'_>> {
        self.sg_list.iter().filter(|s| s.len > 0)
    }
}

/// A receive work request (`ibv_recv_wr`): a scatter list the NIC fills in
/// order, up to [`MAX_RECV_SGE`] entries.
#[derive(Clone, Copy)]
pub struct RecvWr<'a> {
    /// Returned in the completion.
    pub wr_id: u64,
    /// The buffers the message lands in, in order (`sg_list` and `num_sge`);
    /// empty for a receive that takes only zero-length messages. Entries
    /// of length 0 are allowed and take no bytes.
    pub sg_list: &'a [Sge<'a>],
}

/// Scatter entries a receive WR may carry (the NIC's receive WQE holds
/// this many; `ibv_qp_cap::max_recv_sge`).
pub const MAX_RECV_SGE: usize = rnic_spec::desc::RECV_SGES;

impl RecvWr<'_> {
    /// Bytes the scatter list holds.
    pub fn len(&self) -> u64 {
        self.sg_list.iter().map(|s| s.len as u64).sum()
    }

    /// The scatter list holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What the library remembers of a posted WR until it completes.
#[derive(Clone, Copy)]
pub(crate) struct Slot {
    pub wr_id: u64,
    pub opcode: WcOpcode,
    /// Posted length (reported as a send completion's `byte_len`).
    pub len: u32,
    /// The WQE gathers from two entries: the slow path never resends one of its packets alone (a
    /// single-packet resend carries only the WQE's first `rewind::WQE_BYTES`), it rewinds.
    pub gathered: bool,
    /// PSN of the message's first packet (send WRs; the slow path's map from PSN to WQE).
    pub psn: u32,
    /// A successful completion is reported ([`SendFlags::SIGNALED`]; every receive WR is).
    pub signaled: bool,
}

/// One work queue ring (SQ or RQ) and the library's indices.
pub(crate) struct WorkQueue {
    pub buf: DmaBuf,
    pub log2: u32,
    /// WRs that may be outstanding (`max_*_wr`).
    pub cap: u32,
    /// Free-running producer index (next WQE to write).
    pub pi: u32,
    /// Free-running index of the oldest WQE not yet completed.
    pub ci: u32,
    pub slots: Vec<Slot>,
}

impl WorkQueue {
    pub fn outstanding(&self) -> u32 {
        used(self.pi, self.ci)
    }

    /// Removes every outstanding WR, returning flush completions for them.
    fn flush(&mut self, qpn: u32) -> Vec<WorkCompletion> {
        let mut v = Vec::with_capacity(self.outstanding() as usize);
        while self.ci != self.pi {
            let s = self.slots[ring::slot(self.ci, self.log2)];
            v.push(WorkCompletion {
                wr_id: s.wr_id,
                status: WcStatus::WrFlushErr,
                opcode: s.opcode,
                byte_len: 0,
                qp_num: qpn,
                ..Default::default()
            });
            self.ci = self.ci.wrapping_add(1);
        }
        v
    }
}

/// The library's state of one QP.
pub(crate) struct QpInner {
    pub qpn: u32,
    pub pdn: u32,
    pub state: QpState,
    pub send_cqn: u32,
    pub recv_cqn: u32,
    pub sq: WorkQueue,
    pub rq: WorkQueue,
    /// The QPC staging words last committed (re-committed with changes on each transition).
    words: [u64; NUM_STAGE],
    dest_qpn: Option<u32>,
    /// RSN of the next message that consumes a remote receive WR (reset with the requester).
    rsn: u32,
    /// The last PSN sequence NAK: (PSN the peer received, PSN it expected).
    last_psn_nak: Option<(u32, u32)>,
    /// The requester's loss-recovery slow path.
    pub rec: ReqRecovery,
    /// The responder's software recovery (bitmap onloading).
    pub resp_rec: RespRecovery,
    /// The inline payload copies: one slot of `max_inline_data` (rounded up to 64) bytes per SQ slot.
    inline: Option<InlineArea>,
    /// `QpInitAttr::sq_sig_all`.
    sig_all: bool,
}

/// Where a QP's inline payloads are kept (the MR itself is held by the [`Qp`] handle).
#[derive(Clone, Copy)]
struct InlineArea {
    va: u64,
    bus: u64,
    lkey: u32,
    stride: u64,
    max: u32,
}

impl QpInner {
    /// The QP it is connected to (from RTR on).
    pub fn dest_qpn(&self) -> Option<u32> {
        self.dest_qpn
    }

    /// The peer NAKed a request with a PSN sequence error.
    pub fn note_psn_nak(&mut self, psn: u32, epsn: u32) {
        self.last_psn_nak = Some((psn, epsn));
    }

    pub fn wq_mut(&mut self, q: Queue) -> &mut WorkQueue {
        match q {
            Queue::Sq => &mut self.sq,
            Queue::Rq => &mut self.rq,
        }
    }

    pub fn describe(&self) -> String {
        format!(
            "QP {} {:?}{}: SQ {} outstanding (pi={:#x} ci={:#x} max {}), RQ {} outstanding (pi={:#x} ci={:#x} max {})",
            self.qpn,
            self.state,
            self.dest_qpn.map_or(String::new(), |d| format!(" -> QP {d}")),
            self.sq.outstanding(),
            self.sq.pi,
            self.sq.ci,
            self.sq.cap,
            self.rq.outstanding(),
            self.rq.pi,
            self.rq.ci,
            self.rq.cap,
        ) + &match self.last_psn_nak {
            Some((psn, epsn)) => format!(
                ", {} PSN sequence NAK(s) from the peer (last: it got PSN {psn:#x}, expected {epsn:#x}): a request packet was lost or overtaken",
                self.rec.stats.psn_naks
            ),
            None => String::new(),
        } + &{
            let r = &self.rec.stats;
            if r.timeouts + r.rnr_naks + r.rewinds > 0 {
                format!(
                    ", recovery: {} retransmission timeout(s), {} RNR NAK(s), {} rewind(s)",
                    r.timeouts, r.rnr_naks, r.rewinds
                )
            } else {
                String::new()
            }
        }
    }
}

fn commit_qpc(ctx: &Context, qpn: u32, words: &[u64; NUM_STAGE], flags: u64) -> Result<()> {
    ctx.stage_commit(words, qpc::QPC_WORDS, regs::REG_QP_COMMIT, qpn as u64 | flags)
}

/// Moves a QP to ERROR: stops it at the NIC (requester and responder, so no
/// buffer reported as flushed is written later) and flushes every
/// outstanding WR to its CQ, in queue order (as rdma-core does).
pub(crate) fn enter_error(ctx: &Context, st: &mut CtxState, qpn: u32) -> Result<()> {
    let qp = st.qps[qpn as usize].as_mut().expect("QP exists");
    if qp.state == QpState::Error {
        return Ok(());
    }
    qp.state = QpState::Error;
    tracing::warn!(dev = %ctx.dev().name(), qpn, sq_outstanding = qp.sq.outstanding(), rq_outstanding = qp.rq.outstanding(), "QP enters ERROR: its outstanding WRs are flushed");
    qpc::RTS.put(&mut qp.words, 0);
    qpc::RTR.put(&mut qp.words, 0);
    let words = qp.words;
    let (scq, rcq) = (qp.send_cqn, qp.recv_cqn);
    let sq = qp.sq.flush(qpn);
    let rq = qp.rq.flush(qpn);
    st.cqs[scq as usize].as_mut().expect("send CQ exists").pending.extend(sq);
    st.cqs[rcq as usize].as_mut().expect("recv CQ exists").pending.extend(rq);
    // No reset flags: the NIC keeps its dynamic state, the QP only stops.
    commit_qpc(ctx, qpn, &words, 0)
}

/// The requester gave up on the WR at free-running SQ index `idx` (retries
/// exhausted): the WRs before it were acknowledged and complete with
/// success, it completes with `status`, and the QP enters ERROR (the rest
/// flushed). The NIC's own CQEs for the acknowledged WRs are then ignored,
/// as every CQE of a QP in ERROR is.
pub(crate) fn fail_requester(ctx: &Context, st: &mut CtxState, qpn: u32, idx: u32, status: u8) -> Result<()> {
    tracing::warn!(dev = %ctx.dev().name(), qpn, wr_index = idx, status = ?WcStatus::from_raw(status), "retries exhausted: the requester gives up");
    let qp = st.qps[qpn as usize].as_mut().expect("QP exists");
    let mut done = Vec::new();
    while qp.sq.ci != qp.sq.pi {
        let s = qp.sq.slots[ring::slot(qp.sq.ci, qp.sq.log2)];
        let failed = qp.sq.ci == idx;
        if !failed && !s.signaled {
            qp.sq.ci = qp.sq.ci.wrapping_add(1);
            continue;
        }
        done.push(WorkCompletion {
            wr_id: s.wr_id,
            status: if failed { WcStatus::from_raw(status) } else { WcStatus::Success },
            opcode: s.opcode,
            byte_len: if failed { 0 } else { s.len },
            qp_num: qpn,
            ..Default::default()
        });
        qp.sq.ci = qp.sq.ci.wrapping_add(1);
        if failed {
            break;
        }
    }
    let scq = qp.send_cqn;
    st.cqs[scq as usize].as_mut().expect("send CQ exists").pending.extend(done);
    enter_error(ctx, st, qpn)
}

/// An RC queue pair (`ibv_qp`). It holds its PD and its CQs, so they live
/// at least as long as the QP. Dropping it destroys the QP (errors ignored);
/// [`Qp::destroy_qp`] reports them.
pub struct Qp {
    pd: Pd,
    send_cq: Cq,
    recv_cq: Cq,
    qpn: u32,
    /// The MR of the inline payload copies (a QP with `max_inline_data` > 0).
    inline_mr: Option<Box<crate::Mr>>,
}

impl Pd {
    /// Creates an RC QP in RESET (`ibv_create_qp`). Fails if a CQ could
    /// overflow: each CQ must hold every WR that can be outstanding on it.
    pub fn create_qp(&self, attr: QpInitAttr) -> Result<Qp> {
        let ctx = self.context();
        for cq in [&attr.send_cq, &attr.recv_cq] {
            if !ctx.same(cq.context()) {
                return Err(Error::ForeignCq { cqn: cq.cqn() });
            }
        }
        if attr.max_inline_data > MAX_INLINE_DATA {
            return Err(Error::BadSize {
                what: "max_inline_data",
                value: attr.max_inline_data as u64,
                min: 0,
                max: MAX_INLINE_DATA as u64,
            });
        }
        let max_wr = 1u64 << ring::MAX_WQ_LOG2;
        for (what, v) in [("max_send_wr", attr.max_send_wr), ("max_recv_wr", attr.max_recv_wr)] {
            if v as u64 > max_wr {
                return Err(Error::BadSize { what, value: v as u64, min: 0, max: max_wr });
            }
        }
        let (scq, rcq) = (attr.send_cq.cqn(), attr.recv_cq.cqn());
        let qpn = {
            let mut st = ctx.state();
            let qpn = (FIRST_QPN..st.qps.len())
                .find(|&i| st.qps[i].is_none())
                .ok_or(Error::Exhausted { what: "QPN", max: st.qps.len() - FIRST_QPN })? as u32;
            reserve_cq_entries(&mut st, qpn, scq, attr.max_send_wr, rcq, attr.max_recv_wr)?;
            qpn
        };
        let release = |e: Error| {
            let mut st = ctx.state();
            st.cqs[scq as usize].as_mut().expect("CQ").committed -= attr.max_send_wr;
            st.cqs[rcq as usize].as_mut().expect("CQ").committed -= attr.max_recv_wr;
            e
        };
        let sq_log2 = ring::log2_entries(attr.max_send_wr);
        let stride = (attr.max_inline_data as u64).next_multiple_of(64);
        let inline_mr = match attr.max_inline_data {
            0 => None,
            _ => Some(Box::new(self.reg_mr((stride << sq_log2) as usize, AccessFlags::empty()).map_err(release)?)),
        };
        let inline = inline_mr.as_ref().map(|m| InlineArea {
            va: m.addr(),
            bus: m.bus_addr(),
            lkey: m.lkey(),
            stride,
            max: attr.max_inline_data,
        });
        let sq = alloc_wq(ctx, attr.max_send_wr, SEND_WQE_BYTES).map_err(release)?;
        let rq = match alloc_wq(ctx, attr.max_recv_wr, RECV_WQE_BYTES) {
            Ok(rq) => rq,
            Err(e) => {
                let _ = ctx.dev().free_dma(sq.buf);
                return Err(release(e));
            }
        };
        let mut words = [0u64; NUM_STAGE];
        qpc::SEND_CQN.put(&mut words, scq as u64);
        qpc::RECV_CQN.put(&mut words, rcq as u64);
        qpc::SQ_BASE.put(&mut words, sq.buf.bus_addr);
        qpc::RQ_BASE.put(&mut words, rq.buf.bus_addr);
        qpc::SQ_LOG2.put(&mut words, sq.log2 as u64);
        qpc::RQ_LOG2.put(&mut words, rq.log2 as u64);
        qpc::PD.put(&mut words, self.pdn() as u64);
        qpc::UDP_SPORT.put(&mut words, UDP_SPORT_BASE | qpn as u64);
        qpc::SR_EN.put(&mut words, 1);
        ctx.state().qps[qpn as usize] = Some(QpInner {
            qpn,
            pdn: self.pdn(),
            state: QpState::Reset,
            send_cqn: scq,
            recv_cqn: rcq,
            sq,
            rq,
            words,
            dest_qpn: None,
            rsn: 0,
            last_psn_nak: None,
            rec: ReqRecovery::new(DEFAULT_RETRY_CNT, DEFAULT_RNR_RETRY, rnr_timer_cycles(DEFAULT_MIN_RNR_TIMER)),
            resp_rec: RespRecovery::default(),
            inline,
            sig_all: attr.sq_sig_all,
        });
        Ok(Qp { pd: self.clone(), send_cq: attr.send_cq, recv_cq: attr.recv_cq, qpn, inline_mr })
    }
}

/// Reserves CQ entries for a new QP's WRs, or says which CQ is too small.
fn reserve_cq_entries(st: &mut CtxState, qpn: u32, scq: u32, send: u32, rcq: u32, recv: u32) -> Result<()> {
    let need: Vec<(u32, u32, &'static str)> =
        if scq == rcq { vec![(scq, send + recv, "send+recv")] } else { vec![(scq, send, "send"), (rcq, recv, "recv")] };
    for &(cqn, needed, queue) in &need {
        let c = st.cqs[cqn as usize].as_ref().expect("live CQ handle has a table entry");
        if c.committed as u64 + needed as u64 > c.entries() as u64 {
            return Err(Error::CqTooSmall { cqn, entries: c.entries(), committed: c.committed, needed, qpn, queue });
        }
    }
    for (cqn, needed, _) in need {
        st.cqs[cqn as usize].as_mut().expect("CQ").committed += needed;
    }
    Ok(())
}

fn alloc_wq(ctx: &Context, cap: u32, wqe_bytes: usize) -> Result<WorkQueue> {
    let log2 = ring::log2_entries(cap);
    // The NIC only reads WQEs.
    let buf = ctx.dev().alloc_dma(wqe_bytes << log2, DmaAccess { device_read: true, device_write: false })?;
    Ok(WorkQueue {
        buf,
        log2,
        cap,
        pi: 0,
        ci: 0,
        slots: vec![
            Slot { wr_id: 0, opcode: WcOpcode::Send, len: 0, psn: 0, signaled: true, gathered: false };
            1 << log2
        ],
    })
}

/// Checks a receive WR's scatter list: at most [`MAX_RECV_SGE`] entries,
/// each passing [`check_sge`], no more than a message's bytes in all.
fn check_recv(ctx: &Context, qpn: u32, pdn: u32, wr: &RecvWr<'_>) -> Result<()> {
    if wr.sg_list.len() > MAX_RECV_SGE {
        return Err(Error::BadSize {
            what: "receive scatter entries",
            value: wr.sg_list.len() as u64,
            min: 0,
            max: MAX_RECV_SGE as u64,
        });
    }
    for sg in wr.sg_list {
        check_sge(ctx, qpn, pdn, sg)?;
    }
    if wr.len() > params::MAX_MSG_LEN {
        return Err(Error::BadSize { what: "receive length", value: wr.len(), min: 0, max: params::MAX_MSG_LEN });
    }
    Ok(())
}

/// Checks that an SGE's MR may be used by QP `qpn` of PD `pdn` and covers the range.
fn check_sge(ctx: &Context, qpn: u32, pdn: u32, sg: &Sge<'_>) -> Result<()> {
    if !ctx.same(sg.mr.context()) || sg.mr.pdn() != pdn {
        return Err(Error::PdMismatch { qpn, qp_pd: pdn, key: sg.mr.lkey(), mr_pd: sg.mr.pdn() });
    }
    if sg.len as u64 > params::MAX_MSG_LEN {
        return Err(Error::BadSize { what: "message length", value: sg.len as u64, min: 0, max: params::MAX_MSG_LEN });
    }
    sg.mr.check_bounds(sg.offset, sg.len as u64)
}

/// Writes `wqes` (consecutive descriptors) into a ring from index `pi` on,
/// in at most two device writes (before and after the wrap).
fn write_ring(ctx: &Context, wq: &WorkQueue, wqe_bytes: usize, bytes: &[u8]) -> Result<()> {
    let entries = 1usize << wq.log2;
    let first = ring::slot(wq.pi, wq.log2);
    let n = bytes.len() / wqe_bytes;
    let head = n.min(entries - first);
    ctx.dev().write_mem(wq.buf.bus_addr + (first * wqe_bytes) as u64, &bytes[..head * wqe_bytes])?;
    if head < n {
        ctx.dev().write_mem(wq.buf.bus_addr, &bytes[head * wqe_bytes..])?;
    }
    Ok(())
}

impl Qp {
    /// QP number.
    pub fn qp_num(&self) -> u32 {
        self.qpn
    }

    /// Current state.
    pub fn state(&self) -> QpState {
        self.with(|q| q.state)
    }

    /// Send WRs posted and not yet completed.
    pub fn send_outstanding(&self) -> u32 {
        self.with(|q| q.sq.outstanding())
    }

    /// Receive WRs posted and not yet completed.
    pub fn recv_outstanding(&self) -> u32 {
        self.with(|q| q.rq.outstanding())
    }

    /// PSN sequence NAKs the peer sent this QP (a request packet was lost or
    /// overtaken), as reported by the NIC's control queue up to the last
    /// [`crate::Cq::poll_cq`] on this context.
    pub fn peer_psn_naks(&self) -> u64 {
        self.with(|q| q.rec.stats.psn_naks)
    }

    /// The QP's congestion window in bytes as the NIC's window engine
    /// last set it (`REG_CC_WINDOW`; STrack's or DCTCP's; meaningless for
    /// a QP without a window). Not an ibverbs call.
    pub fn cc_window_bytes(&self) -> Result<u64> {
        let ctx = self.context();
        ctx.dev().write_reg(regs::REG_CC_WINDOW, self.qpn as u64)?;
        Ok((ctx.dev().read_reg(regs::REG_CC_WINDOW)? & 0xFFFF_FFFF) >> 8)
    }

    /// The loss-recovery slow path's counters for this QP (NAKs, RNR NAKs,
    /// timeouts, rewinds), as of the last [`crate::Cq::poll_cq`] on this context.
    pub fn recovery_stats(&self) -> RecoveryStats {
        self.with(|q| {
            let r = q.resp_rec.stats;
            RecoveryStats {
                sw_placed: r.placed,
                sw_commands: r.commands,
                sw_applied: r.applied,
                sw_episodes: r.episodes,
                ..q.rec.stats
            }
        })
    }

    /// `max_send_wr` from creation.
    pub fn max_send_wr(&self) -> u32 {
        self.with(|q| q.sq.cap)
    }

    /// `max_recv_wr` from creation.
    pub fn max_recv_wr(&self) -> u32 {
        self.with(|q| q.rq.cap)
    }

    /// The send CQ.
    pub fn send_cq(&self) -> Cq {
        self.send_cq.clone()
    }

    /// The receive CQ.
    pub fn recv_cq(&self) -> Cq {
        self.recv_cq.clone()
    }

    /// The protection domain the QP was created in.
    pub fn pd(&self) -> &Pd {
        &self.pd
    }

    /// The context the QP belongs to.
    pub fn context(&self) -> &Context {
        self.pd.context()
    }

    /// One line of state for messages.
    pub fn describe(&self) -> String {
        self.with(|q| q.describe())
    }

    fn with<T>(&self, f: impl FnOnce(&mut QpInner) -> T) -> T {
        f(self.context().state().qps[self.qpn as usize].as_mut().expect("live QP handle has a table entry"))
    }

    /// Modifies the QP (`ibv_modify_qp`) following ibverbs' state rules,
    /// programming the NIC's QP context on the way.
    pub fn modify(&self, attr: &QpAttr) -> Result<()> {
        let ctx = self.context();
        let qpn = self.qpn;
        let from = self.state();
        check_modify(qpn, from, attr)?;
        let to = attr.qp_state;
        let mut st = ctx.state();
        if to == QpState::Reset {
            // No rewind asked for in this life may land after the reset.
            crate::ctx::quiesce_rewinds(ctx.dev(), &mut st, qpn)?;
        }
        let cc_net = st.cc_net;
        let qp = st.qps[qpn as usize].as_mut().expect("QP");
        if let Some(v) = attr.retry_cnt {
            qp.rec.retry_cnt = v;
        }
        if let Some(v) = attr.rnr_retry {
            qp.rec.rnr_retry = v;
        }
        if let Some(v) = attr.min_rnr_timer {
            qp.rec.rnr_timer_cycles = rnr_timer_cycles(v);
        }
        if let Some(v) = attr.selective_repeat {
            qpc::SR_EN.put(&mut qp.words, v as u64);
        }
        if let Some(n) = attr.max_paths {
            qpc::MAX_PATHS.put(&mut qp.words, n as u64);
        }
        let (cc, dctcp) = window_bits(qpc::CC_DCTCP.get(&qp.words) != 0, attr.strack_cc, attr.dctcp_cc);
        if let Some(on) = cc {
            qpc::CC.put(&mut qp.words, on as u64);
        }
        qpc::CC_DCTCP.put(&mut qp.words, dctcp as u64);
        if let Some(on) = attr.spray_oblivious {
            qpc::SPRAY_OBLIVIOUS.put(&mut qp.words, on as u64);
        }
        match (from, to) {
            (_, QpState::Error) => return enter_error(ctx, &mut st, qpn),
            (_, QpState::Reset) => {
                qpc::RTS.put(&mut qp.words, 0);
                qpc::RTR.put(&mut qp.words, 0);
                // RESET discards outstanding WRs without completions (ibverbs).
                qp.sq.pi = 0;
                qp.sq.ci = 0;
                qp.rq.pi = 0;
                qp.rq.ci = 0;
                qp.dest_qpn = None;
                qp.resp_rec.reset();
                commit_qpc(ctx, qpn, &qp.words, regs::QP_COMMIT_RESET_RESP | regs::QP_COMMIT_RESET_REQ)?;
            }
            (QpState::Reset, QpState::Init) => {
                qpc::RTS.put(&mut qp.words, 0);
                qpc::RTR.put(&mut qp.words, 0);
                commit_qpc(ctx, qpn, &qp.words, regs::QP_COMMIT_RESET_RESP | regs::QP_COMMIT_RESET_REQ)?;
            }
            (QpState::Init, QpState::Rtr) => {
                let dest = attr.dest.expect("checked");
                let mtu = attr.path_mtu.expect("checked");
                let dqpn = attr.dest_qp_num.expect("checked");
                qpc::RTS.put(&mut qp.words, 0);
                qpc::RTR.put(&mut qp.words, 1);
                qpc::PMTU_LOG2.put(&mut qp.words, mtu.log2() as u64);
                qpc::REMOTE_QPN.put(&mut qp.words, dqpn as u64);
                qpc::DEST_IP.put(&mut qp.words, u32::from(dest.ip) as u64);
                qpc::DEST_MAC.put(&mut qp.words, dest.mac_u64());
                qpc::RQ_PSN.put(&mut qp.words, attr.rq_psn.expect("checked") as u64);
                qp.dest_qpn = Some(dqpn);
                qp.rsn = 0;
                qp.resp_rec.reset();
                commit_qpc(ctx, qpn, &qp.words, regs::QP_COMMIT_RESET_RESP | regs::QP_COMMIT_RESET_REQ)?;
                // Receives posted in INIT: re-announce the producer index after the responder reset.
                if qp.rq.pi != 0 {
                    ctx.dev().write_reg(regs::db_rq(qpn), (qp.rq.pi & 0xFFFF) as u64)?;
                }
            }
            (QpState::Rtr, QpState::Rts) => {
                qpc::RTS.put(&mut qp.words, 1);
                qpc::SQ_PSN.put(&mut qp.words, attr.sq_psn.expect("checked") as u64);
                qp.rsn = 0;
                let mtu_log2 = qpc::PMTU_LOG2.get(&qp.words) as u32;
                qp.rec.start(attr.sq_psn.expect("checked"), mtu_log2);
                // A sprayed QP's packets overtake each other on their paths: holes are not lost at once.
                let sprayed = qpc::MAX_PATHS.get(&qp.words) != 0;
                qp.rec.set_reorder(if sprayed { crate::recovery::SPRAY_REORDER_PKTS } else { 0 });
                // STrack's out-of-order detector: a window's worth of packets (the largest window), at least 5.
                let ooo = (cc_net.max_window_bytes() >> mtu_log2).max(crate::recovery::OOO_MIN_THRESHOLD as u64);
                qp.rec.set_ooo_threshold(if sprayed { ooo.min(u32::MAX as u64) as u32 } else { 0 });
                qp.rec.set_probe(sprayed || qpc::CC.get(&qp.words) != 0);
                commit_qpc(ctx, qpn, &qp.words, regs::QP_COMMIT_RESET_REQ)?;
            }
            // INIT→INIT and RTS→RTS carry no attributes this NIC has.
            _ => {}
        }
        tracing::debug!(dev = %ctx.dev().name(), qpn, ?from, ?to, "QP state change");
        qp.state = to;
        Ok(())
    }

    /// Posts one send WR (`ibv_post_send`).
    pub fn post_send(&self, wr: &SendWr<'_>) -> Result<()> {
        self.post_send_batch(std::slice::from_ref(wr))
    }

    /// Posts several send WRs with one doorbell. All are checked first:
    /// on error nothing is posted.
    pub fn post_send_batch(&self, wrs: &[SendWr<'_>]) -> Result<()> {
        let ctx = self.context();
        let qpn = self.qpn;
        let mut st = ctx.state();
        let qp = st.qps[qpn as usize].as_mut().expect("QP");
        match qp.state {
            QpState::Rts => {}
            QpState::Error => {
                let scq = qp.send_cqn;
                let flushed = wrs.iter().map(|w| WorkCompletion {
                    wr_id: w.wr_id,
                    status: WcStatus::WrFlushErr,
                    opcode: op_of(&w.opcode),
                    byte_len: 0,
                    qp_num: qpn,
                    ..Default::default()
                });
                st.cqs[scq as usize].as_mut().expect("CQ").pending.extend(flushed);
                return Ok(());
            }
            state => return Err(Error::BadState { qpn, op: "post_send", state }),
        }
        let out = qp.sq.outstanding();
        if out as u64 + wrs.len() as u64 > qp.sq.cap as u64 {
            return Err(Error::QueueFull {
                qpn,
                queue: Queue::Sq,
                outstanding: out,
                max: qp.sq.cap,
                posting: wrs.len(),
            });
        }
        let mut bytes = Vec::with_capacity(wrs.len() * SEND_WQE_BYTES);
        for wr in wrs {
            check_send_wr(ctx, qpn, qp.pdn, wr)?;
            check_inline(qpn, qp.inline.map_or(0, |a| a.max), wr)?;
        }
        // One WR to an idle SQ goes with its doorbell through the push window (latency-bound posts).
        let push = wrs.len() == 1 && qp.sq.outstanding() == 0 && ctx.wqe_push();
        let mut push_payload = [0u8; regs::PUSH_PAYLOAD_MAX as usize];
        let mut rsn = qp.rsn;
        for (i, wr) in wrs.iter().enumerate() {
            let len = wr.len() as u32;
            let mut pieces = wr.pieces();
            // A zero-length message still names its (first) entry, as before gather lists.
            let (mut local_addr, mut lkey) =
                pieces.next().or(wr.sg_list.iter().next()).map_or((0, 0), |s| (s.mr.addr() + s.offset, s.mr.lkey()));
            let mut sge1 = pieces.next().map_or(WqeSge::default(), |s| WqeSge {
                addr: (s.mr.addr() + s.offset).into(),
                length: s.len.into(),
                lkey: s.mr.lkey().into(),
            });
            let mut flags = 0;
            if wr.send_flags.contains(SendFlags::INLINE) && len > 0 {
                // The gather list's bytes, concatenated into the QP's inline area: one entry.
                let area = qp.inline.expect("checked by check_inline");
                let at = ring::slot(qp.sq.pi.wrapping_add(i as u32), qp.sq.log2) as u64 * area.stride;
                let mut data = vec![0u8; len as usize];
                let mut o = 0;
                for s in wr.pieces() {
                    s.mr.read(s.offset, &mut data[o..o + s.len as usize])?;
                    o += s.len as usize;
                }
                ctx.dev().write_mem(area.bus + at, &data)?;
                (local_addr, lkey, sge1) = (area.va + at, area.lkey, WqeSge::default());
                if push && len <= regs::PUSH_PAYLOAD_MAX {
                    push_payload[..data.len()].copy_from_slice(&data);
                    flags = wqe_flags::PUSH_PAYLOAD;
                }
            }
            let (opcode, rkey, remote_addr, imm) = match wr.opcode {
                WrOpcode::RdmaWrite { remote_addr, rkey } => (send_op::RDMA_WRITE, rkey, remote_addr, 0),
                WrOpcode::Send => (send_op::SEND, 0, 0, 0),
                WrOpcode::RdmaWriteWithImm { remote_addr, rkey, imm } => {
                    (send_op::RDMA_WRITE_IMM, rkey, remote_addr, imm)
                }
                WrOpcode::SendWithImm { imm } => (send_op::SEND_IMM, 0, 0, imm),
                WrOpcode::RdmaRead { remote_addr, rkey } => (send_op::RDMA_READ, rkey, remote_addr, 0),
            };
            let wqe = SendWqe {
                opcode,
                flags,
                length: len.into(),
                local_addr: local_addr.into(),
                lkey: lkey.into(),
                sge1,
                rkey: rkey.into(),
                remote_addr: remote_addr.into(),
                imm: imm.into(),
                // The contract gives a READ's WQE RSN 0 (it consumes no receive WQE).
                rsn: if matches!(wr.opcode, WrOpcode::RdmaRead { .. }) { 0 } else { rsn }.into(),
                ..Default::default()
            };
            if wr.opcode.consumes_recv() {
                rsn = rsn.wrapping_add(1);
            }
            bytes.extend_from_slice(wqe.as_bytes());
        }
        write_ring(ctx, &qp.sq, SEND_WQE_BYTES, &bytes)?;
        qp.rsn = rsn;
        for wr in wrs {
            let s = ring::slot(qp.sq.pi, qp.sq.log2);
            let len = wr.len() as u32;
            let psn = qp.rec.post(len);
            let signaled = qp.sig_all || wr.send_flags.contains(SendFlags::SIGNALED);
            // The NIC gathers from both entries unless the payload went inline.
            let gathered = wr.pieces().count() > 1 && !wr.send_flags.contains(SendFlags::INLINE);
            qp.sq.slots[s] = Slot { wr_id: wr.wr_id, opcode: op_of(&wr.opcode), len, psn, signaled, gathered };
            qp.sq.pi = qp.sq.pi.wrapping_add(1);
        }
        if push {
            // The WQE's words, then the payload's (zero past the message), then the doorbell commits them.
            let words = bytes.chunks_exact(8).chain(push_payload.chunks_exact(8));
            for (i, w) in words.enumerate() {
                ctx.dev().write_reg(regs::push_word(i), u64::from_le_bytes(w.try_into().expect("8 bytes")))?;
            }
        }
        ctx.dev().write_reg(regs::db_sq(qpn), (qp.sq.pi & 0xFFFF) as u64)?;
        Ok(())
    }

    /// Posts a list of send WRs as `ibv_post_send` does with a linked list:
    /// the WRs up to the first one that cannot be posted are posted (one
    /// doorbell), and that one is reported with its index and the reason
    /// (ibverbs' `bad_wr`); nothing after it is posted. Unlike
    /// [`Qp::post_send_batch`], which posts all or none.
    pub fn post_send_list(&self, wrs: &[SendWr<'_>]) -> std::result::Result<(), BadWr> {
        let ctx = self.context();
        let refused = self.list_refusal(Queue::Sq, wrs.len(), &[QpState::Rts], |qp, i| {
            check_send_wr(ctx, self.qpn, qp.pdn, &wrs[i])?;
            check_inline(self.qpn, qp.inline.map_or(0, |a| a.max), &wrs[i])
        });
        let n = refused.as_ref().map_or(wrs.len(), |r| r.index);
        if n > 0 {
            self.post_send_batch(&wrs[..n]).map_err(|error| BadWr { index: 0, error })?;
        }
        refused.map_or(Ok(()), Err)
    }

    /// Posts a list of receive WRs as `ibv_post_recv` does with a linked
    /// list: those before the first that cannot be posted are posted, that
    /// one is reported with its index and the reason (`bad_wr`).
    pub fn post_recv_list(&self, wrs: &[RecvWr<'_>]) -> std::result::Result<(), BadWr> {
        let ctx = self.context();
        let states = [QpState::Init, QpState::Rtr, QpState::Rts];
        let refused =
            self.list_refusal(Queue::Rq, wrs.len(), &states, |qp, i| check_recv(ctx, self.qpn, qp.pdn, &wrs[i]));
        let n = refused.as_ref().map_or(wrs.len(), |r| r.index);
        if n > 0 {
            self.post_recv_batch(&wrs[..n]).map_err(|error| BadWr { index: 0, error })?;
        }
        refused.map_or(Ok(()), Err)
    }

    /// The first of `len` WRs of a list post that cannot be posted: past
    /// the queue's room, or refused by `check`. None in a state other than
    /// `states` (the batch post then reports the state, or flushes in ERROR).
    fn list_refusal(
        &self,
        queue: Queue,
        len: usize,
        states: &[QpState],
        check: impl Fn(&QpInner, usize) -> Result<()>,
    ) -> Option<BadWr> {
        let ctx = self.context();
        let st = ctx.state();
        let qp = st.qps[self.qpn as usize].as_ref().expect("QP");
        if !states.contains(&qp.state) {
            return None;
        }
        let wq = if queue == Queue::Sq { &qp.sq } else { &qp.rq };
        let out = wq.outstanding();
        (0..len).find_map(|i| {
            let e = if i >= (wq.cap - out) as usize {
                Err(Error::QueueFull { qpn: self.qpn, queue, outstanding: out + i as u32, max: wq.cap, posting: 1 })
            } else {
                check(qp, i)
            };
            e.err().map(|error| BadWr { index: i, error })
        })
    }

    /// Posts one receive WR (`ibv_post_recv`).
    pub fn post_recv(&self, wr: &RecvWr<'_>) -> Result<()> {
        self.post_recv_batch(std::slice::from_ref(wr))
    }

    /// Posts several receive WRs with one doorbell. All are checked first:
    /// on error nothing is posted.
    pub fn post_recv_batch(&self, wrs: &[RecvWr<'_>]) -> Result<()> {
        let ctx = self.context();
        let qpn = self.qpn;
        let mut st = ctx.state();
        let qp = st.qps[qpn as usize].as_mut().expect("QP");
        match qp.state {
            QpState::Init | QpState::Rtr | QpState::Rts => {}
            QpState::Error => {
                let rcq = qp.recv_cqn;
                let flushed = wrs.iter().map(|w| WorkCompletion {
                    wr_id: w.wr_id,
                    status: WcStatus::WrFlushErr,
                    opcode: WcOpcode::Recv,
                    byte_len: 0,
                    qp_num: qpn,
                    ..Default::default()
                });
                st.cqs[rcq as usize].as_mut().expect("CQ").pending.extend(flushed);
                return Ok(());
            }
            state => return Err(Error::BadState { qpn, op: "post_recv", state }),
        }
        let out = qp.rq.outstanding();
        if out as u64 + wrs.len() as u64 > qp.rq.cap as u64 {
            return Err(Error::QueueFull {
                qpn,
                queue: Queue::Rq,
                outstanding: out,
                max: qp.rq.cap,
                posting: wrs.len(),
            });
        }
        let mut bytes = Vec::with_capacity(wrs.len() * RECV_WQE_BYTES);
        for wr in wrs {
            check_recv(ctx, qpn, qp.pdn, wr)?;
            let mut wqe = RecvWqe::default();
            for (e, sg) in wqe.sge.iter_mut().zip(wr.sg_list) {
                *e = WqeSge {
                    addr: (sg.mr.addr() + sg.offset).into(),
                    length: sg.len.into(),
                    lkey: sg.mr.lkey().into(),
                };
            }
            bytes.extend_from_slice(wqe.as_bytes());
        }
        write_ring(ctx, &qp.rq, RECV_WQE_BYTES, &bytes)?;
        for wr in wrs {
            let s = ring::slot(qp.rq.pi, qp.rq.log2);
            qp.rq.slots[s] = Slot {
                wr_id: wr.wr_id,
                opcode: WcOpcode::Recv,
                len: wr.len() as u32,
                psn: 0,
                signaled: true,
                gathered: false,
            };
            qp.rq.pi = qp.rq.pi.wrapping_add(1);
        }
        ctx.dev().write_reg(regs::db_rq(qpn), (qp.rq.pi & 0xFFFF) as u64)?;
        Ok(())
    }
}

/// A WR of a list post that was refused ([`Qp::post_send_list`],
/// [`Qp::post_recv_list`]): the WRs before `index` were posted, this one
/// and those after it were not.
#[derive(Debug)]
pub struct BadWr {
    /// Index of the refused WR in the list.
    pub index: usize,
    /// Why it was refused.
    pub error: Error,
}

impl std::fmt::Display for BadWr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "work request {} of the list was not posted: {}", self.index, self.error)
    }
}

impl std::error::Error for BadWr {}

/// The checks of one send WR before it is posted: its SGE (MR of the QP's
/// PD, within bounds) and LOCAL_WRITE for a READ's destination.
/// Checks that a WR flagged [`SendFlags::INLINE`] fits the QP's `max_inline_data` and is not a READ.
fn check_inline(qpn: u32, max_inline: u32, wr: &SendWr<'_>) -> Result<()> {
    if !wr.send_flags.contains(SendFlags::INLINE) {
        return Ok(());
    }
    let why = if matches!(wr.opcode, WrOpcode::RdmaRead { .. }) {
        "an RDMA READ has no payload to send"
    } else if wr.len() > max_inline as u64 {
        "longer than the QP's max_inline_data"
    } else {
        return Ok(());
    };
    Err(Error::InlineRefused { qpn, op: op_name(&wr.opcode), len: wr.len() as u32, max_inline, why })
}

fn check_send_wr(ctx: &Context, qpn: u32, pdn: u32, wr: &SendWr<'_>) -> Result<()> {
    for sg in wr.sg_list.iter() {
        check_sge(ctx, qpn, pdn, sg)?;
    }
    if wr.len() > params::MAX_MSG_LEN {
        return Err(Error::BadSize { what: "message length", value: wr.len(), min: 0, max: params::MAX_MSG_LEN });
    }
    if wr.opcode.writes_local() {
        if wr.pieces().count() > 1 {
            return Err(Error::BadSize {
                what: "RDMA READ destination entries with bytes (a READ lands in one)",
                value: wr.pieces().count() as u64,
                min: 0,
                max: 1,
            });
        }
        for sg in wr.sg_list.iter() {
            if !sg.mr.access().contains(AccessFlags::LOCAL_WRITE) {
                return Err(Error::MrAccess {
                    qpn,
                    op: op_name(&wr.opcode),
                    key: sg.mr.lkey(),
                    needed: AccessFlags::LOCAL_WRITE,
                    access: sg.mr.access(),
                });
            }
        }
    }
    Ok(())
}

fn op_of(op: &WrOpcode) -> WcOpcode {
    match op {
        WrOpcode::RdmaWrite { .. } | WrOpcode::RdmaWriteWithImm { .. } => WcOpcode::RdmaWrite,
        WrOpcode::Send | WrOpcode::SendWithImm { .. } => WcOpcode::Send,
        WrOpcode::RdmaRead { .. } => WcOpcode::RdmaRead,
    }
}

/// ibverbs' name of a send WR opcode (for messages).
fn op_name(op: &WrOpcode) -> &'static str {
    match op {
        WrOpcode::RdmaWrite { .. } => "IBV_WR_RDMA_WRITE",
        WrOpcode::Send => "IBV_WR_SEND",
        WrOpcode::RdmaWriteWithImm { .. } => "IBV_WR_RDMA_WRITE_WITH_IMM",
        WrOpcode::SendWithImm { .. } => "IBV_WR_SEND_WITH_IMM",
        WrOpcode::RdmaRead { .. } => "IBV_WR_RDMA_READ",
    }
}

impl Qp {
    /// Destroys the QP (`ibv_destroy_qp`), consuming the handle: disables
    /// it at the NIC, frees its rings, returns its CQ reservations and its
    /// QPN (the next [`Pd::create_qp`] takes the lowest free QPN), and lets
    /// go of its PD and CQs. Outstanding WRs are discarded without
    /// completions.
    ///
    /// Nothing can keep a QP busy, so every error comes from the teardown
    /// (see [`DestroyError`]), which finishes regardless, as a drop does.
    pub fn destroy_qp(mut self) -> std::result::Result<(), DestroyError<Qp>> {
        self.release().map_err(DestroyError::failed)
    }

    /// Tears the QP down once (later calls do nothing); reports the first error.
    fn release(&mut self) -> Result<()> {
        let ctx = self.pd.context();
        if ctx.state().qps[self.qpn as usize].is_none() {
            return Ok(());
        }
        // No rewind may land on the QPN's next life; the teardown goes on regardless.
        let quiesced = crate::ctx::quiesce_rewinds(ctx.dev(), &mut ctx.state(), self.qpn);
        let Some(mut q) = ctx.state().qps[self.qpn as usize].take() else { return Ok(()) };
        qpc::RTS.put(&mut q.words, 0);
        qpc::RTR.put(&mut q.words, 0);
        let disabled = commit_qpc(ctx, self.qpn, &q.words, regs::QP_COMMIT_RESET_RESP | regs::QP_COMMIT_RESET_REQ);
        {
            let mut st = ctx.state();
            st.cqs[q.send_cqn as usize].as_mut().expect("CQ held by the QP").committed -= q.sq.cap;
            st.cqs[q.recv_cqn as usize].as_mut().expect("CQ held by the QP").committed -= q.rq.cap;
        }
        let sq = ctx.dev().free_dma(q.sq.buf);
        let rq = ctx.dev().free_dma(q.rq.buf);
        // The QP is disabled: nothing reads the inline copies any more.
        let inline = self.inline_mr.take().map_or(Ok(()), |m| (*m).dereg_mr().map_err(Error::from));
        quiesced?;
        disabled?;
        sq?;
        rq?;
        inline
    }
}

impl Drop for Qp {
    fn drop(&mut self) {
        // Errors cannot be reported from drop; the QP is disabled and freed regardless.
        let _ = self.release();
        // The PD and CQ handles drop after this, with no borrow of the tables held.
    }
}

impl std::fmt::Debug for Qp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

/// The QPC's window bits after a modify: `CC` (None: unchanged) and
/// `CC_DCTCP`, from the QP's kind now (`dctcp_now`) and the attributes
/// (`strack_cc` and `dctcp_cc` both `Some(true)` are refused before). A QP
/// has one window; turning one kind off leaves the other kind on.
fn window_bits(dctcp_now: bool, strack: Option<bool>, dctcp: Option<bool>) -> (Option<bool>, bool) {
    match (strack, dctcp) {
        (Some(true), _) => (Some(true), false),
        (_, Some(true)) => (Some(true), true),
        (Some(false), Some(false)) => (Some(false), false),
        (Some(false), None) if !dctcp_now => (Some(false), false),
        (None, Some(false)) if dctcp_now => (Some(false), false),
        _ => (None, dctcp_now),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use QpState::{Init, Reset, Rtr, Rts};
    const ERR: QpState = QpState::Error;

    #[test]
    fn ibverbs_transitions() {
        let all = [Reset, Init, Rtr, Rts, ERR];
        for from in all {
            for to in all {
                let ok = transition_allowed(from, to);
                let expect = to == Reset
                    || to == ERR
                    || matches!((from, to), (Reset, Init) | (Init, Init) | (Init, Rtr) | (Rtr, Rts) | (Rts, Rts));
                assert_eq!(ok, expect, "{from:?} -> {to:?}");
            }
        }
        assert!(!transition_allowed(Reset, Rtr));
        assert!(!transition_allowed(Init, Rts));
        assert!(!transition_allowed(ERR, Rts));
        assert!(!transition_allowed(Rts, Rtr));
    }

    #[test]
    fn modify_checks_attributes() {
        let d = NetAddr { mac: [2, 0, 0, 0, 0, 2], ip: "10.0.0.2".parse().unwrap() };
        assert!(check_modify(5, Init, &QpAttr::rtr(d, 7, 0, Mtu::Mtu4096)).is_ok());
        let mut a = QpAttr::rtr(d, 7, 0, Mtu::Mtu4096);
        a.dest = None;
        assert!(matches!(check_modify(5, Init, &a), Err(crate::Error::MissingAttr { attr: "dest", .. })));
        let mut a = QpAttr::rtr(d, 7, 0, Mtu::Mtu4096);
        a.sq_psn = Some(1);
        assert!(matches!(check_modify(5, Init, &a), Err(crate::Error::BadAttr { attr: "sq_psn", .. })));
        assert!(matches!(
            check_modify(5, Rtr, &QpAttr::to(Rts)),
            Err(crate::Error::MissingAttr { attr: "sq_psn", .. })
        ));
        assert!(matches!(
            check_modify(5, Rtr, &QpAttr::rts(1 << 24)),
            Err(crate::Error::BadAttr { attr: "sq_psn", .. })
        ));
        assert!(matches!(
            check_modify(5, Reset, &QpAttr::rts(0)),
            Err(crate::Error::BadTransition { from: Reset, to: Rts, .. })
        ));
        assert!(matches!(
            check_modify(5, Init, &QpAttr::rtr(d, 1 << 24, 0, Mtu::Mtu256)),
            Err(crate::Error::BadAttr { attr: "dest_qp_num", .. })
        ));
        assert!(check_modify(5, Rts, &QpAttr::to(ERR)).is_ok());
        assert!(check_modify(5, ERR, &QpAttr::to(Reset)).is_ok());
    }

    #[test]
    fn one_window_per_qp() {
        // (kind now, strack_cc, dctcp_cc) -> (CC, CC_DCTCP)
        for (now, st, dc, want) in [
            (false, Some(true), None, (Some(true), false)),
            (true, Some(true), Some(false), (Some(true), false)),
            (false, None, Some(true), (Some(true), true)),
            (false, Some(false), Some(true), (Some(true), true)),
            (true, Some(false), None, (None, true)),
            (false, Some(false), None, (Some(false), false)),
            (true, None, Some(false), (Some(false), false)),
            (false, None, Some(false), (None, false)),
            (true, None, None, (None, true)),
            (true, Some(false), Some(false), (Some(false), false)),
        ] {
            assert_eq!(window_bits(now, st, dc), want, "now dctcp {now}, strack_cc {st:?}, dctcp_cc {dc:?}");
        }
        let a = QpAttr { strack_cc: Some(true), dctcp_cc: Some(true), ..QpAttr::init() };
        assert!(matches!(check_modify(5, Reset, &a), Err(crate::Error::BadAttr { attr: "dctcp_cc", .. })));
    }

    #[test]
    fn mtu_values() {
        assert_eq!(Mtu::Mtu256.log2(), params::PMTU_LOG2_MIN);
        assert_eq!(Mtu::Mtu4096.log2(), params::PMTU_LOG2_MAX);
        assert_eq!(Mtu::Mtu1024.bytes(), 1024);
        assert_eq!(Mtu::from_bytes(2048), Some(Mtu::Mtu2048));
        assert_eq!(Mtu::from_bytes(1500), None);
        assert_eq!(Mtu::Mtu4096 as u8, 5);
    }
}
