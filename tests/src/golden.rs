//! A golden model of RDMA semantics for the end-to-end tests.
//!
//! Given the same sequence of verbs the application posts (registrations,
//! CPU writes into regions, `post_recv`, `post_send`), the model predicts
//!
//! * every byte of every registered region on every NIC, and
//! * every work completion, per QP and per queue (send / receive) in order:
//!   status, opcode, `byte_len`, `wr_id` and `qp_num`.
//!
//! It knows nothing about time. Each verb takes effect when it is posted,
//! in program order, which is what an RC connection guarantees for the
//! operations of one send queue. Operations on different QPs run
//! concurrently on the NICs, so the model refuses stimulus whose result
//! would depend on timing: while an operation is outstanding, no other queue
//! may write bytes it reads or writes (it panics with `stimulus error`, a bug
//! of the test, not of the NIC). A receive buffer counts as written from its
//! `post_recv` until its completion.
//!
//! Semantics modelled (IBA, RC):
//!
//! * RDMA WRITE: the remote key must name a valid region on the peer's NIC,
//!   of the peer QP's PD, with REMOTE_WRITE, covering `[remote_addr,
//!   remote_addr + len)`; then the source bytes are placed there. Otherwise
//!   the requester completes with `RemAccessErr` and nothing is written. A
//!   zero-length WRITE places nothing and checks no key (IBA C9-88).
//! * SEND: consumes the oldest posted receive WR of the peer QP and places
//!   the message at the start of its buffer; the receive completes with
//!   `byte_len` = message length. With no receive posted the requester
//!   completes with `RnrRetryExcErr` (the harness sets `rnr_retry` 0, so
//!   the first RNR NAK fails the WR; retries are tested on their own). A SEND
//!   longer than the receive buffer completes with `RemInvReqErr`; the
//!   receive buffer's content becomes unpredictable, every byte outside it
//!   stays; the responder may complete that receive with `LocLenErr` or a
//!   flush, or not at all (optional completions).
//! * A requester completion carries the posted opcode and length (the
//!   library fills them from the WR); a flushed WR has `byte_len` 0.
//! * After an error completion the library moves the QP to ERROR: every WR
//!   behind the failed one, posted or still to be posted, on both of its
//!   queues, completes with `WrFlushErr`, and none of them touches memory.
//!   The model requires the pair to carry no traffic in the other direction
//!   at that moment (its outcome would depend on timing).
//!
//! * Immediate data: a SEND with immediate is a SEND whose receive
//!   completion also carries the immediate; a WRITE with immediate is a
//!   WRITE that also consumes the peer's oldest posted receive WR, which
//!   completes as `RecvRdmaWithImm` with `byte_len` = message length and the
//!   immediate, and whose buffer is not written.
//!
//! * RDMA READ: the remote key must name a valid region on the peer's NIC,
//!   of the peer QP's PD, with REMOTE_READ, covering `[remote_addr,
//!   remote_addr + len)`; then those bytes are placed in the local SGE,
//!   whose region needs LOCAL_WRITE (the library refuses the post
//!   otherwise, so the model calls it a stimulus error). Otherwise the
//!   requester completes with `RemAccessErr` and nothing is written. A
//!   zero-length READ places nothing and checks no key, as a WRITE. It
//!   consumes no receive WR. A READ is not ordered with the other
//!   operations of its own queue the way they are with each other: a later
//!   WR may read its destination before the data lands (no fence), a
//!   retried READ reads its source again after later WRITEs, and a
//!   resent WRITE may read its source after an earlier READ's data landed
//!   there. So its footprints (source read, destination written) conflict
//!   with every other outstanding operation's, on its own queue too: a
//!   READ's source must stay unwritten and its destination untouched while
//!   it is outstanding. A READ queued behind a failing request is never
//!   executed (the responder answers READ requests in order only), so its
//!   destination stays predicted even with `placed_behind_errors`.
//!
//! Bytes the model does not predict (a failed SEND's receive buffer) are
//! skipped by [`Golden::compare`] until the CPU writes them again.

use rnic::{AccessFlags, WcFlags, WcOpcode, WcStatus, WorkCompletion, MAX_RECV_SGE};
use std::collections::VecDeque;
use std::fmt;

/// Index of a region in the model.
pub type MrId = usize;
/// Index of a QP in the model.
pub type QpId = usize;

/// Which queue of a QP a completion belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queue {
    /// Send queue.
    Send,
    /// Receive queue.
    Recv,
}

/// A registered region as the NIC sees it.
#[derive(Clone, Copy, Debug)]
pub struct MrInfo {
    /// NIC index.
    pub nic: usize,
    /// Protection domain number.
    pub pd: u32,
    /// Virtual address of byte 0.
    pub addr: u64,
    /// The rkey remote peers name it by (`Mr::rkey`, not its lkey).
    pub rkey: u32,
    /// Length in bytes.
    pub len: usize,
    /// Access rights.
    pub access: AccessFlags,
}

/// A send work request's operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verb {
    /// RDMA WRITE to `remote_addr` (a VA of the peer's region) with `rkey`.
    Write {
        /// Remote virtual address.
        remote_addr: u64,
        /// Remote key.
        rkey: u32,
    },
    /// SEND into the peer QP's next receive WR.
    Send,
    /// RDMA WRITE with immediate data (consumes the peer's next receive WR).
    WriteImm {
        /// Remote virtual address.
        remote_addr: u64,
        /// Remote key.
        rkey: u32,
        /// Immediate data.
        imm: u32,
    },
    /// SEND with immediate data.
    SendImm {
        /// Immediate data.
        imm: u32,
    },
    /// RDMA READ from `remote_addr` (a VA of the peer's region) with `rkey`
    /// into the local SGE.
    Read {
        /// Remote virtual address.
        remote_addr: u64,
        /// Remote key.
        rkey: u32,
    },
}

impl Verb {
    /// The opcode of its requester completion.
    pub fn wc_opcode(self) -> WcOpcode {
        match self {
            Verb::Write { .. } | Verb::WriteImm { .. } => WcOpcode::RdmaWrite,
            Verb::Send | Verb::SendImm { .. } => WcOpcode::Send,
            Verb::Read { .. } => WcOpcode::RdmaRead,
        }
    }
}

/// A send WR as the model sees it (one SGE: `len` bytes at `offset` of `mr`;
/// the source of a WRITE or SEND, the destination of a READ).
#[derive(Clone, Copy, Debug)]
pub struct SendOp {
    /// `wr_id`.
    pub wr_id: u64,
    /// Operation.
    pub verb: Verb,
    /// Local region.
    pub mr: MrId,
    /// Offset in the local region.
    pub offset: u64,
    /// Message length.
    pub len: u32,
    /// The caller's name for this operation (returned with its completion and in mismatches).
    pub tag: u64,
}

/// A receive WR as the model sees it.
#[derive(Clone, Copy, Debug)]
pub struct RecvOp {
    /// `wr_id`.
    pub wr_id: u64,
    /// Region of the buffer.
    pub mr: MrId,
    /// Offset of the buffer in the region.
    pub offset: u64,
    /// Buffer length.
    pub len: u32,
    /// The caller's name for this receive.
    pub tag: u64,
    /// A scatter list inside the buffer: entries `(offset in the buffer,
    /// length)`, filled in this order (unused entries have length 0).
    /// `None`: one entry, the whole buffer.
    pub list: Option<[(u32, u32); MAX_RECV_SGE]>,
}

impl RecvOp {
    /// Bytes the receive takes: its list's, or the buffer's.
    pub fn capacity(&self) -> u32 {
        self.list.map_or(self.len, |l| l.iter().map(|e| e.1).sum())
    }
}

/// A completion the model predicts.
#[derive(Clone, Copy, Debug)]
pub struct Expected {
    /// `wr_id`.
    pub wr_id: u64,
    /// Status.
    pub status: WcStatus,
    /// A second acceptable status, if any.
    pub alt_status: Option<WcStatus>,
    /// Opcode.
    pub opcode: WcOpcode,
    /// `byte_len`, when predicted.
    pub byte_len: Option<u32>,
    /// Local QP number.
    pub qp_num: u32,
    /// Immediate data the completion carries (`WITH_IMM` set), or none.
    pub imm: Option<u32>,
    /// May never arrive (responder-side completions after an error).
    pub optional: bool,
    /// The tag of the WR.
    pub tag: u64,
    /// Operation id (footprint release).
    uid: u64,
}

impl Expected {
    fn matches(&self, wc: &WorkCompletion) -> bool {
        wc.wr_id == self.wr_id
            && (wc.status == self.status || Some(wc.status) == self.alt_status)
            && wc.opcode == self.opcode
            && self.byte_len.is_none_or(|l| l == wc.byte_len)
            && wc.qp_num == self.qp_num
            && wc.wc_flags.contains(WcFlags::WITH_IMM) == self.imm.is_some()
            && self.imm.is_none_or(|i| i == wc.imm_data)
    }
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "wr_id {:#x} {:?}", self.wr_id, self.status)?;
        if let Some(a) = self.alt_status {
            write!(f, "|{a:?}")?;
        }
        write!(f, " {:?} byte_len ", self.opcode)?;
        match self.byte_len {
            Some(l) => write!(f, "{l}")?,
            None => write!(f, "any")?,
        }
        if let Some(i) = self.imm {
            write!(f, " imm {i:#010x}")?;
        }
        write!(f, " qp {}{} (tag {:#x})", self.qp_num, if self.optional { " optional" } else { "" }, self.tag)
    }
}

/// What a matched completion was.
#[derive(Clone, Copy, Debug)]
pub struct Matched {
    /// The QP in the model.
    pub qp: QpId,
    /// Its queue.
    pub queue: Queue,
    /// The tag the WR was posted with.
    pub tag: u64,
    /// The completion as predicted.
    pub expected: Expected,
}

/// A completion the model did not predict.
#[derive(Clone, Debug)]
pub struct CompletionMismatch {
    /// NIC it came from.
    pub nic: usize,
    /// The completion.
    pub got: WorkCompletion,
    /// What the model expected next on that QP and queue (None: nothing, an extra completion).
    pub expected: Option<Expected>,
    /// The queue.
    pub queue: Queue,
    /// Completions matched on that queue before this one.
    pub index: u64,
}

impl fmt::Display for CompletionMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.expected {
            Some(e) => write!(
                f,
                "NIC{} QP {} {:?} queue completion #{}: got {:?}, expected {e}",
                self.nic, self.got.qp_num, self.queue, self.index, self.got
            ),
            None => write!(
                f,
                "NIC{} QP {} {:?} queue: extra completion #{} {:?} (the model expects none)",
                self.nic, self.got.qp_num, self.queue, self.index, self.got
            ),
        }
    }
}

/// The first byte of a region that differs from the model.
#[derive(Clone, Copy, Debug)]
pub struct MemMismatch {
    /// Offset in the region.
    pub offset: usize,
    /// Byte found.
    pub got: u8,
    /// Byte predicted.
    pub want: u8,
    /// Bytes differing in total.
    pub count: usize,
    /// Placement (tag, start, end) of the current epoch holding that byte.
    pub inside: Option<(u64, usize, usize)>,
    /// Nearest placement of this epoch ending at or before that byte.
    pub before: Option<(u64, usize, usize)>,
    /// Nearest placement of this epoch starting after that byte.
    pub after: Option<(u64, usize, usize)>,
}

/// Where a WRITE lands, or where a READ reads.
enum Target {
    /// Zero length: nowhere, and no key is checked.
    Nothing,
    /// In region `.0` at offset `.1`.
    At(MrId, usize),
    /// Remote access error.
    Denied,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum QpState {
    /// Working.
    Ok,
    /// In ERROR at the library (known to the model).
    Error,
    /// Peer of a failed operation: the responder may or may not report an error.
    MaybeError,
}

struct PostedRecv {
    op: RecvOp,
    uid: u64,
}

struct QpModel {
    nic: usize,
    qpn: u32,
    pd: u32,
    peer: Option<QpId>,
    state: QpState,
    /// Posted receives not yet consumed by a SEND.
    rq: VecDeque<PostedRecv>,
    sq_exp: VecDeque<Expected>,
    rq_exp: VecDeque<Expected>,
    sq_done: u64,
    rq_done: u64,
    /// Retired: its buffers are no longer tracked as in use.
    retired: bool,
}

struct MrModel {
    info: MrInfo,
    valid: bool,
    bytes: Vec<u8>,
    /// Ranges not predicted, sorted, disjoint.
    dont_care: Vec<(usize, usize)>,
    /// Placements of this epoch: (start, end, tag).
    placed: Vec<(usize, usize, u64)>,
}

/// Bytes an outstanding operation reads or writes.
#[derive(Clone, Copy, Debug)]
struct Footprint {
    mr: MrId,
    start: usize,
    end: usize,
    write: bool,
    /// Operations of one queue are ordered with each other.
    owner: (QpId, Queue),
    /// Not ordered with the other operations of its own queue either (a READ's).
    unordered: bool,
    uid: u64,
    tag: u64,
}

/// The golden model: regions and QPs of any number of NICs.
#[derive(Default)]
pub struct Golden {
    mrs: Vec<MrModel>,
    qps: Vec<QpModel>,
    live: Vec<Footprint>,
    next_uid: u64,
    /// Packets may arrive out of order (lossy or reordering links) at
    /// responders running selective repeat: a WRITE posted behind a request
    /// that fails at the responder may have been placed, in part or whole,
    /// before that request arrived and failed. Its WR completes flushed and
    /// its target bytes are not predicted (IBA leaves the target of a WR
    /// completed in error undefined); bytes outside its target still are.
    pub placed_behind_errors: bool,
}

impl Golden {
    /// An empty model.
    pub fn new() -> Golden {
        Golden::default()
    }

    // ----- regions -----

    /// Registers a region whose memory currently holds `contents`.
    pub fn add_mr(&mut self, info: MrInfo, contents: Vec<u8>) -> MrId {
        assert_eq!(contents.len(), info.len, "contents of the region");
        self.mrs.push(MrModel { info, valid: true, bytes: contents, dont_care: Vec::new(), placed: Vec::new() });
        self.mrs.len() - 1
    }

    /// Deregisters a region: its key no longer matches.
    pub fn dereg_mr(&mut self, mr: MrId) {
        self.mrs[mr].valid = false;
    }

    /// The region's description.
    pub fn mr_info(&self, mr: MrId) -> MrInfo {
        self.mrs[mr].info
    }

    /// The predicted content of a region.
    pub fn mr_bytes(&self, mr: MrId) -> &[u8] {
        &self.mrs[mr].bytes
    }

    /// The CPU writes `data` at `offset` of `mr`.
    pub fn cpu_write(&mut self, mr: MrId, offset: u64, data: &[u8]) {
        let (s, e) = (offset as usize, offset as usize + data.len());
        assert!(e <= self.mrs[mr].info.len, "stimulus error: CPU write [{s}, {e}) outside region {mr}");
        if let Some(f) = self.live.iter().find(|f| f.mr == mr && f.start < e && s < f.end) {
            panic!("stimulus error: CPU write [{s}, {e}) of region {mr} overlaps the outstanding operation tag {:#x} [{}, {})", f.tag, f.start, f.end);
        }
        let m = &mut self.mrs[mr];
        m.bytes[s..e].copy_from_slice(data);
        remove_range(&mut m.dont_care, s, e);
    }

    /// Starts a new epoch: forgets which message placed which bytes (used only to explain mismatches).
    pub fn new_epoch(&mut self) {
        for m in &mut self.mrs {
            m.placed.clear();
        }
    }

    /// Compares a region's actual content with the prediction.
    pub fn compare(&self, mr: MrId, got: &[u8]) -> Option<MemMismatch> {
        let m = &self.mrs[mr];
        assert_eq!(got.len(), m.bytes.len(), "compare: length of region {mr}");
        let mut first = None;
        let mut count = 0usize;
        let mut pos = 0usize;
        // Compare the predicted stretches between don't-care ranges.
        let mut stretches: Vec<(usize, usize)> = Vec::new();
        for &(s, e) in &m.dont_care {
            if s > pos {
                stretches.push((pos, s));
            }
            pos = pos.max(e);
        }
        if pos < got.len() {
            stretches.push((pos, got.len()));
        }
        for (s, e) in stretches {
            if got[s..e] == m.bytes[s..e] {
                continue;
            }
            for (i, (a, b)) in got[s..e].iter().zip(&m.bytes[s..e]).enumerate() {
                if a != b {
                    count += 1;
                    first.get_or_insert(s + i);
                }
            }
        }
        let o = first?;
        let inside = m.placed.iter().find(|p| p.0 <= o && o < p.1).map(|p| (p.2, p.0, p.1));
        let before = m.placed.iter().filter(|p| p.1 <= o).max_by_key(|p| p.1).map(|p| (p.2, p.0, p.1));
        let after = m.placed.iter().filter(|p| p.0 > o).min_by_key(|p| p.0).map(|p| (p.2, p.0, p.1));
        Some(MemMismatch { offset: o, got: got[o], want: m.bytes[o], count, inside, before, after })
    }

    // ----- QPs -----

    /// A QP `qpn` on `nic` in PD `pd`.
    pub fn add_qp(&mut self, nic: usize, qpn: u32, pd: u32) -> QpId {
        assert!(self.find_qp(nic, qpn).is_none(), "QP {qpn} on NIC{nic} exists in the model");
        self.qps.push(QpModel {
            nic,
            qpn,
            pd,
            peer: None,
            state: QpState::Ok,
            rq: VecDeque::new(),
            sq_exp: VecDeque::new(),
            rq_exp: VecDeque::new(),
            sq_done: 0,
            rq_done: 0,
            retired: false,
        });
        self.qps.len() - 1
    }

    /// Connects two QPs (RC).
    pub fn connect(&mut self, a: QpId, b: QpId) {
        self.qps[a].peer = Some(b);
        self.qps[b].peer = Some(a);
    }

    /// The QP with number `qpn` on `nic`.
    pub fn find_qp(&self, nic: usize, qpn: u32) -> Option<QpId> {
        self.qps.iter().position(|q| q.nic == nic && q.qpn == qpn && !q.retired)
    }

    /// QP number and NIC of a model QP.
    pub fn qp_addr(&self, qp: QpId) -> (usize, u32) {
        (self.qps[qp].nic, self.qps[qp].qpn)
    }

    /// Whether the QP is in ERROR (known) or may be.
    pub fn qp_failed(&self, qp: QpId) -> bool {
        self.qps[qp].state != QpState::Ok
    }

    fn uid(&mut self) -> u64 {
        self.next_uid += 1;
        self.next_uid
    }

    fn check_in_mr(&self, mr: MrId, offset: u64, len: u32, what: &str) {
        let l = self.mrs[mr].info.len as u64;
        assert!(offset + len as u64 <= l, "stimulus error: {what} [{offset}, +{len}) outside region {mr} of {l} bytes");
    }

    fn add_footprint(&mut self, f: Footprint) {
        if f.start == f.end {
            return;
        }
        if let Some(o) = self.live.iter().find(|o| {
            o.mr == f.mr
                && o.start < f.end
                && f.start < o.end
                && (o.write || f.write)
                && (o.owner != f.owner || o.unordered || f.unordered)
        }) {
            panic!(
                "stimulus error: tag {:#x} {} [{}, {}) of region {} while tag {:#x} ({}) {} [{}, {}): the result would depend on timing",
                f.tag,
                if f.write { "writes" } else { "reads" },
                f.start,
                f.end,
                f.mr,
                o.tag,
                if o.owner != f.owner { "another queue" } else { "a READ on the same queue" },
                if o.write { "writes" } else { "reads" },
                o.start,
                o.end
            );
        }
        self.live.push(f);
    }

    fn release(&mut self, uid: u64) {
        self.live.retain(|f| f.uid != uid);
    }

    /// Posts a receive WR on `qp`.
    pub fn post_recv(&mut self, qp: QpId, op: RecvOp) {
        self.check_in_mr(op.mr, op.offset, op.len, "receive buffer");
        if let Some(list) = op.list {
            assert!(
                list.iter().all(|&(o, l)| o as u64 + l as u64 <= op.len as u64),
                "stimulus error: entry outside the buffer"
            );
        }
        assert_eq!(self.mrs[op.mr].info.nic, self.qps[qp].nic, "stimulus error: receive buffer on another NIC");
        let uid = self.uid();
        let q = &mut self.qps[qp];
        let flush = Expected {
            wr_id: op.wr_id,
            status: WcStatus::WrFlushErr,
            alt_status: None,
            opcode: WcOpcode::Recv,
            byte_len: Some(0),
            qp_num: q.qpn,
            imm: None,
            optional: false,
            tag: op.tag,
            uid,
        };
        match q.state {
            QpState::Error => q.rq_exp.push_back(flush),
            QpState::MaybeError => q.rq_exp.push_back(Expected { optional: true, ..flush }),
            QpState::Ok => {
                q.rq.push_back(PostedRecv { op, uid });
                let f = Footprint {
                    mr: op.mr,
                    start: op.offset as usize,
                    end: (op.offset + op.len as u64) as usize,
                    write: true,
                    owner: (qp, Queue::Recv),
                    unordered: false,
                    uid,
                    tag: op.tag,
                };
                self.add_footprint(f);
            }
        }
    }

    /// Posts a send WR on `qp`; returns the status its completion will have.
    pub fn post_send(&mut self, qp: QpId, op: SendOp) -> WcStatus {
        self.check_in_mr(op.mr, op.offset, op.len, "local buffer");
        assert_eq!(self.mrs[op.mr].info.nic, self.qps[qp].nic, "stimulus error: local buffer on another NIC");
        if let Verb::Read { .. } = op.verb {
            assert!(
                self.mrs[op.mr].info.access.contains(AccessFlags::LOCAL_WRITE),
                "stimulus error: READ into region {} without LOCAL_WRITE (the library refuses to post it)",
                op.mr
            );
        }
        let uid = self.uid();
        let me = &self.qps[qp];
        assert!(
            me.state != QpState::MaybeError,
            "stimulus error: posting on QP {} whose state depends on timing",
            me.qpn
        );
        let qpn = me.qpn;
        let mut exp = Expected {
            wr_id: op.wr_id,
            status: WcStatus::Success,
            alt_status: None,
            opcode: op.verb.wc_opcode(),
            byte_len: Some(op.len),
            qp_num: qpn,
            imm: None,
            optional: false,
            tag: op.tag,
            uid,
        };
        if me.state == QpState::Error {
            exp.status = WcStatus::WrFlushErr;
            exp.byte_len = Some(0);
            if let (true, Some(peer)) = (self.placed_behind_errors, me.peer) {
                if let Verb::Write { remote_addr, rkey } | Verb::WriteImm { remote_addr, rkey, .. } = op.verb {
                    if let Target::At(mr, off) = self.write_target(peer, remote_addr, rkey, op.len) {
                        add_range(&mut self.mrs[mr].dont_care, off, off + op.len as usize);
                    }
                }
            }
            self.qps[qp].sq_exp.push_back(exp);
            return exp.status;
        }
        let peer = me.peer.expect("stimulus error: QP not connected");
        let (s, e) = (op.offset as usize, op.offset as usize + op.len as usize);
        let status = match op.verb {
            Verb::WriteImm { remote_addr, rkey, imm } => match self.write_target(peer, remote_addr, rkey, op.len) {
                Target::Denied => WcStatus::RemAccessErr,
                target => {
                    let Some(r) = self.qps[peer].rq.pop_front() else {
                        // No receive posted: RNR at the last packet, after the others were placed.
                        if let Target::At(mr, off) = target {
                            add_range(&mut self.mrs[mr].dont_care, off, off + op.len as usize);
                        }
                        exp.status = WcStatus::RnrRetryExcErr;
                        return self.fail(qp, peer, exp, None);
                    };
                    if let Target::At(mr, off) = target {
                        self.write_into(qp, uid, &op, mr, off);
                    }
                    let rexp = Expected {
                        wr_id: r.op.wr_id,
                        status: WcStatus::Success,
                        alt_status: None,
                        opcode: WcOpcode::RecvRdmaWithImm,
                        byte_len: Some(op.len),
                        qp_num: self.qps[peer].qpn,
                        imm: Some(imm),
                        optional: false,
                        tag: r.op.tag,
                        uid: r.uid,
                    };
                    self.qps[peer].rq_exp.push_back(rexp);
                    WcStatus::Success
                }
            },
            Verb::Write { remote_addr, rkey } => match self.write_target(peer, remote_addr, rkey, op.len) {
                Target::Nothing => WcStatus::Success,
                Target::At(mr, off) => {
                    self.write_into(qp, uid, &op, mr, off);
                    WcStatus::Success
                }
                Target::Denied => WcStatus::RemAccessErr,
            },
            Verb::Read { remote_addr, rkey } => {
                match self.remote_target(peer, remote_addr, rkey, op.len, AccessFlags::REMOTE_READ) {
                    Target::Nothing => WcStatus::Success,
                    Target::At(mr, off) => {
                        self.read_from(qp, uid, &op, mr, off);
                        WcStatus::Success
                    }
                    Target::Denied => WcStatus::RemAccessErr,
                }
            }
            Verb::Send | Verb::SendImm { .. } => {
                let imm = match op.verb {
                    Verb::SendImm { imm } => Some(imm),
                    _ => None,
                };
                let Some(r) = self.qps[peer].rq.pop_front() else {
                    // No receive posted: RNR, not retried (`rnr_retry` 0).
                    exp.status = WcStatus::RnrRetryExcErr;
                    return self.fail(qp, peer, exp, None);
                };
                let peer_qpn = self.qps[peer].qpn;
                let rexp = Expected {
                    wr_id: r.op.wr_id,
                    status: WcStatus::Success,
                    alt_status: None,
                    opcode: WcOpcode::Recv,
                    byte_len: Some(op.len),
                    qp_num: peer_qpn,
                    imm,
                    optional: false,
                    tag: r.op.tag,
                    uid: r.uid,
                };
                if op.len > r.op.capacity() {
                    // Longer than the receive buffer: the buffer's content is lost, nothing else changes.
                    let rs = r.op.offset as usize;
                    let m = &mut self.mrs[r.op.mr];
                    add_range(&mut m.dont_care, rs, rs + r.op.len as usize);
                    self.release(r.uid);
                    exp.status = WcStatus::RemInvReqErr;
                    let bad_recv = Expected {
                        status: WcStatus::LocLenErr,
                        alt_status: Some(WcStatus::WrFlushErr),
                        byte_len: None,
                        imm: None,
                        optional: true,
                        ..rexp
                    };
                    return self.fail(qp, peer, exp, Some(bad_recv));
                }
                self.add_footprint(Footprint {
                    mr: op.mr,
                    start: s,
                    end: e,
                    write: false,
                    owner: (qp, Queue::Send),
                    unordered: false,
                    uid,
                    tag: op.tag,
                });
                match r.op.list {
                    None => self.place(op.mr, s, r.op.mr, r.op.offset as usize, op.len as usize, op.tag),
                    Some(list) => {
                        // The message over the entries in order.
                        let mut o = 0;
                        for (eo, el) in list {
                            let n = (el as usize).min(op.len as usize - o);
                            self.place(op.mr, s + o, r.op.mr, r.op.offset as usize + eo as usize, n, op.tag);
                            o += n;
                        }
                    }
                }
                self.qps[peer].rq_exp.push_back(rexp);
                WcStatus::Success
            }
        };
        exp.status = status;
        if status == WcStatus::Success {
            self.qps[qp].sq_exp.push_back(exp);
            status
        } else {
            self.fail(qp, peer, exp, None)
        }
    }

    /// A WRITE of `op` on `qp` lands at `dst`+`off`: its footprints (source read, target written) and the bytes.
    fn write_into(&mut self, qp: QpId, uid: u64, op: &SendOp, dst: MrId, off: usize) {
        let (s, len) = (op.offset as usize, op.len as usize);
        let owner = (qp, Queue::Send);
        let (unordered, tag) = (false, op.tag);
        self.add_footprint(Footprint { mr: op.mr, start: s, end: s + len, write: false, owner, unordered, uid, tag });
        self.add_footprint(Footprint { mr: dst, start: off, end: off + len, write: true, owner, unordered, uid, tag });
        self.place(op.mr, s, dst, off, len, op.tag);
    }

    /// A READ of `op` on `qp` reads `src`+`off` into its SGE: its footprints
    /// (source read, destination written, neither ordered with the queue's
    /// other operations) and the bytes.
    fn read_from(&mut self, qp: QpId, uid: u64, op: &SendOp, src: MrId, off: usize) {
        let (d, len) = (op.offset as usize, op.len as usize);
        let owner = (qp, Queue::Send);
        let (unordered, tag) = (true, op.tag);
        self.add_footprint(Footprint { mr: src, start: off, end: off + len, write: false, owner, unordered, uid, tag });
        self.add_footprint(Footprint { mr: op.mr, start: d, end: d + len, write: true, owner, unordered, uid, tag });
        self.place(src, off, op.mr, d, len, op.tag);
    }

    /// Where a WRITE lands.
    fn write_target(&self, peer: QpId, addr: u64, rkey: u32, len: u32) -> Target {
        self.remote_target(peer, addr, rkey, len, AccessFlags::REMOTE_WRITE)
    }

    /// The bytes `[addr, addr + len)` of the peer's region `rkey` names, if
    /// that region allows `access` to the peer QP.
    fn remote_target(&self, peer: QpId, addr: u64, rkey: u32, len: u32, access: AccessFlags) -> Target {
        if len == 0 {
            return Target::Nothing;
        }
        let p = &self.qps[peer];
        let Some(i) = self.mrs.iter().position(|m| m.valid && m.info.nic == p.nic && m.info.rkey == rkey) else {
            return Target::Denied;
        };
        let m = &self.mrs[i].info;
        let ok = m.pd == p.pd
            && m.access.contains(access)
            && addr >= m.addr
            && addr.checked_add(len as u64).is_some_and(|end| end <= m.addr + m.len as u64);
        if ok {
            Target::At(i, (addr - m.addr) as usize)
        } else {
            Target::Denied
        }
    }

    /// Copies `len` bytes from `src`+`s` to `dst`+`d` and records the placement.
    fn place(&mut self, src: MrId, s: usize, dst: MrId, d: usize, len: usize, tag: u64) {
        if len == 0 {
            return;
        }
        if src == dst {
            self.mrs[src].bytes.copy_within(s..s + len, d);
        } else {
            let (a, b) = if src < dst {
                let (l, r) = self.mrs.split_at_mut(dst);
                (&l[src], &mut r[0])
            } else {
                let (l, r) = self.mrs.split_at_mut(src);
                (&r[0], &mut l[dst])
            };
            b.bytes[d..d + len].copy_from_slice(&a.bytes[s..s + len]);
        }
        let m = &mut self.mrs[dst];
        remove_range(&mut m.dont_care, d, d + len);
        m.placed.push((d, d + len, tag));
    }

    /// The requester's WR failed with `exp.status`: the requester goes to ERROR, its
    /// peer may report the failure too (`bad_recv`: the receive WR the request consumed).
    fn fail(&mut self, qp: QpId, peer: QpId, exp: Expected, bad_recv: Option<Expected>) -> WcStatus {
        let p = &self.qps[peer];
        let q = &self.qps[qp];
        let busy_back = !p.sq_exp.is_empty() || q.rq_exp.iter().any(|e| e.status == WcStatus::Success);
        assert!(
            !busy_back,
            "stimulus error: QP {} fails while its peer QP {} has traffic towards it outstanding: the outcome would depend on timing",
            q.qpn,
            p.qpn
        );
        self.qps[qp].sq_exp.push_back(exp);
        self.enter_error(qp);
        if let Some(r) = bad_recv {
            self.qps[peer].rq_exp.push_back(r);
        }
        // The responder may or may not go to ERROR: its posted receives may be flushed.
        let pq = &mut self.qps[peer];
        pq.state = QpState::MaybeError;
        let rest: Vec<PostedRecv> = pq.rq.drain(..).collect();
        for r in rest {
            let e = Expected {
                wr_id: r.op.wr_id,
                status: WcStatus::WrFlushErr,
                alt_status: None,
                opcode: WcOpcode::Recv,
                byte_len: Some(0),
                qp_num: pq.qpn,
                imm: None,
                optional: true,
                tag: r.op.tag,
                uid: r.uid,
            };
            pq.rq_exp.push_back(e);
        }
        exp.status
    }

    /// The library moves `qp` to ERROR: its unconsumed receives are flushed.
    fn enter_error(&mut self, qp: QpId) {
        let q = &mut self.qps[qp];
        q.state = QpState::Error;
        let rest: Vec<PostedRecv> = q.rq.drain(..).collect();
        for r in rest {
            let e = Expected {
                wr_id: r.op.wr_id,
                status: WcStatus::WrFlushErr,
                alt_status: None,
                opcode: WcOpcode::Recv,
                byte_len: Some(0),
                qp_num: q.qpn,
                imm: None,
                optional: false,
                tag: r.op.tag,
                uid: r.uid,
            };
            q.rq_exp.push_back(e);
        }
    }

    // ----- completions -----

    /// Checks one completion polled on `nic` against the prediction.
    pub fn on_completion(&mut self, nic: usize, wc: &WorkCompletion) -> Result<Matched, CompletionMismatch> {
        let queue =
            if matches!(wc.opcode, WcOpcode::Recv | WcOpcode::RecvRdmaWithImm) { Queue::Recv } else { Queue::Send };
        let Some(qp) = self.qps.iter().position(|q| q.nic == nic && q.qpn == wc.qp_num) else {
            return Err(CompletionMismatch { nic, got: *wc, expected: None, queue, index: 0 });
        };
        let q = &mut self.qps[qp];
        let (exp, done) = match queue {
            Queue::Send => (&mut q.sq_exp, &mut q.sq_done),
            Queue::Recv => (&mut q.rq_exp, &mut q.rq_done),
        };
        let index = *done;
        match exp.front() {
            Some(e) if e.matches(wc) => {
                let e = exp.pop_front().expect("front");
                *done += 1;
                self.release(e.uid);
                Ok(Matched { qp, queue, tag: e.tag, expected: e })
            }
            e => Err(CompletionMismatch { nic, got: *wc, expected: e.copied(), queue, index }),
        }
    }

    /// Completions predicted and not yet seen that must arrive.
    pub fn pending(&self) -> usize {
        self.qps.iter().map(|q| q.sq_exp.iter().chain(&q.rq_exp).filter(|e| !e.optional).count()).sum()
    }

    /// The next completion each queue waits for (for stall reports): (qp, queue, expected).
    pub fn waiting(&self) -> Vec<(QpId, Queue, Expected)> {
        let mut v = Vec::new();
        for (i, q) in self.qps.iter().enumerate() {
            if let Some(e) = q.sq_exp.iter().find(|e| !e.optional) {
                v.push((i, Queue::Send, *e));
            }
            if let Some(e) = q.rq_exp.iter().find(|e| !e.optional) {
                v.push((i, Queue::Recv, *e));
            }
        }
        v
    }

    /// Completions predicted (optional ones included) not yet seen on `qp`.
    pub fn outstanding(&self, qp: QpId) -> usize {
        self.qps[qp].sq_exp.len() + self.qps[qp].rq_exp.len()
    }

    /// The stimulus will never use `qp` again and no operation of it will
    /// touch memory any more: its buffers stop counting as in use. Its
    /// optional completions may still arrive and are still checked.
    pub fn retire(&mut self, qp: QpId) {
        self.live.retain(|f| f.owner.0 != qp);
        self.qps[qp].rq.clear();
        self.qps[qp].retired = true;
    }

    /// At quiescence: gives up waiting for optional completions. Returns the
    /// non-optional ones still missing (empty when all arrived).
    pub fn settle(&mut self) -> Vec<Expected> {
        let mut missing = Vec::new();
        let mut gone = Vec::new();
        for q in &mut self.qps {
            for e in q.sq_exp.drain(..).chain(q.rq_exp.drain(..)) {
                if e.optional {
                    gone.push(e.uid);
                } else {
                    missing.push(e);
                }
            }
        }
        for uid in gone {
            self.release(uid);
        }
        missing
    }
}

/// Adds `[s, e)` to a sorted list of disjoint ranges.
fn add_range(v: &mut Vec<(usize, usize)>, s: usize, e: usize) {
    if s >= e {
        return;
    }
    remove_range(v, s, e);
    let i = v.partition_point(|r| r.0 < s);
    v.insert(i, (s, e));
}

/// Removes `[s, e)` from a sorted list of disjoint ranges.
fn remove_range(v: &mut Vec<(usize, usize)>, s: usize, e: usize) {
    if v.is_empty() || s >= e {
        return;
    }
    let mut out = Vec::with_capacity(v.len() + 1);
    for &(a, b) in v.iter() {
        if b <= s || a >= e {
            out.push((a, b));
            continue;
        }
        if a < s {
            out.push((a, s));
        }
        if b > e {
            out.push((e, b));
        }
    }
    *v = out;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mr(g: &mut Golden, nic: usize, key: u32, len: usize, access: AccessFlags) -> MrId {
        g.add_mr(MrInfo { nic, pd: 1, addr: 0x1000 * key as u64, rkey: key, len, access }, vec![0xEE; len])
    }

    fn wc(wr_id: u64, status: WcStatus, opcode: WcOpcode, byte_len: u32, qp_num: u32) -> WorkCompletion {
        WorkCompletion { wr_id, status, opcode, byte_len, qp_num, ..Default::default() }
    }

    fn pair(g: &mut Golden) -> (QpId, QpId) {
        let a = g.add_qp(0, 2, 1);
        let b = g.add_qp(1, 7, 1);
        g.connect(a, b);
        (a, b)
    }

    const RW: AccessFlags = AccessFlags::LOCAL_WRITE.union(AccessFlags::REMOTE_WRITE);

    #[test]
    fn write_and_send_place_bytes_and_complete_in_order() {
        let mut g = Golden::new();
        let src = mr(&mut g, 0, 1, 64, AccessFlags::empty());
        let dst = mr(&mut g, 1, 2, 64, RW);
        let (a, b) = pair(&mut g);
        g.cpu_write(src, 0, &[1, 2, 3, 4, 5, 6, 7, 8]);
        let addr = g.mr_info(dst).addr;
        let w = SendOp {
            wr_id: 10,
            verb: Verb::Write { remote_addr: addr + 3, rkey: 2 },
            mr: src,
            offset: 0,
            len: 4,
            tag: 1,
        };
        assert_eq!(g.post_send(a, w), WcStatus::Success);
        g.post_recv(b, RecvOp { wr_id: 20, mr: dst, offset: 32, len: 16, tag: 2, list: None });
        g.post_recv(b, RecvOp { wr_id: 21, mr: dst, offset: 48, len: 16, tag: 3, list: None });
        let s = SendOp { wr_id: 11, verb: Verb::Send, mr: src, offset: 4, len: 4, tag: 4 };
        assert_eq!(g.post_send(a, s), WcStatus::Success);
        let mut want = vec![0xEE; 64];
        want[3..7].copy_from_slice(&[1, 2, 3, 4]);
        want[32..36].copy_from_slice(&[5, 6, 7, 8]);
        assert_eq!(g.mr_bytes(dst), &want[..]);
        assert!(g.compare(dst, &want).is_none());
        let mut bad = want.clone();
        bad[40] = 0;
        let m = g.compare(dst, &bad).unwrap();
        assert_eq!((m.offset, m.count, m.inside.is_none(), m.before.map(|p| p.0)), (40, 1, true, Some(4)));
        // Out of order on one queue is a mismatch; in order matches.
        assert!(g.on_completion(0, &wc(11, WcStatus::Success, WcOpcode::Send, 4, 2)).is_err());
        assert_eq!(g.on_completion(0, &wc(10, WcStatus::Success, WcOpcode::RdmaWrite, 4, 2)).unwrap().tag, 1);
        assert!(
            g.on_completion(1, &wc(20, WcStatus::Success, WcOpcode::Recv, 5, 7)).is_err(),
            "byte_len is the message length"
        );
        assert_eq!(g.on_completion(1, &wc(20, WcStatus::Success, WcOpcode::Recv, 4, 7)).unwrap().tag, 2);
        assert_eq!(g.on_completion(0, &wc(11, WcStatus::Success, WcOpcode::Send, 4, 2)).unwrap().tag, 4);
        assert_eq!(g.pending(), 0);
        let extra = g.on_completion(0, &wc(12, WcStatus::Success, WcOpcode::Send, 4, 2)).unwrap_err();
        assert!(extra.expected.is_none());
    }

    #[test]
    fn bad_key_and_bounds_fail_and_flush() {
        let mut g = Golden::new();
        let src = mr(&mut g, 0, 1, 64, AccessFlags::empty());
        let dst = mr(&mut g, 1, 2, 64, RW);
        let (a, _b) = pair(&mut g);
        let addr = g.mr_info(dst).addr;
        let w = |wr_id, remote_addr, rkey, len| SendOp {
            wr_id,
            verb: Verb::Write { remote_addr, rkey },
            mr: src,
            offset: 0,
            len,
            tag: wr_id,
        };
        assert_eq!(g.post_send(a, w(1, addr + 60, 2, 4)), WcStatus::Success);
        assert_eq!(g.post_send(a, w(2, addr + 61, 2, 4)), WcStatus::RemAccessErr);
        assert_eq!(g.post_send(a, w(3, addr, 2, 4)), WcStatus::WrFlushErr);
        assert!(g.qp_failed(a));
        let mut g2 = Golden::new();
        let src = mr(&mut g2, 0, 1, 64, AccessFlags::empty());
        let ro = mr(&mut g2, 1, 3, 64, AccessFlags::LOCAL_WRITE);
        let (a2, _) = pair(&mut g2);
        let ro_addr = g2.mr_info(ro).addr;
        let no_remote_write = SendOp {
            wr_id: 1,
            verb: Verb::Write { remote_addr: ro_addr, rkey: 3 },
            mr: src,
            offset: 0,
            len: 1,
            tag: 0,
        };
        assert_eq!(g2.post_send(a2, no_remote_write), WcStatus::RemAccessErr);
        // A zero-length WRITE checks no key.
        let zero =
            SendOp { wr_id: 2, verb: Verb::Write { remote_addr: 0, rkey: 99 }, mr: src, offset: 0, len: 0, tag: 0 };
        let (c, _) = {
            let c = g2.add_qp(0, 3, 1);
            let d = g2.add_qp(1, 8, 1);
            g2.connect(c, d);
            (c, d)
        };
        assert_eq!(g2.post_send(c, zero), WcStatus::Success);
    }

    #[test]
    fn oversize_send_loses_only_the_receive_buffer() {
        let mut g = Golden::new();
        let src = mr(&mut g, 0, 1, 64, AccessFlags::empty());
        let dst = mr(&mut g, 1, 2, 64, AccessFlags::LOCAL_WRITE);
        let (a, b) = pair(&mut g);
        g.post_recv(b, RecvOp { wr_id: 5, mr: dst, offset: 8, len: 8, tag: 0, list: None });
        g.post_recv(b, RecvOp { wr_id: 6, mr: dst, offset: 16, len: 8, tag: 0, list: None });
        let s = |wr_id, len| SendOp { wr_id, verb: Verb::Send, mr: src, offset: 0, len, tag: 0 };
        assert_eq!(g.post_send(a, s(1, 9)), WcStatus::RemInvReqErr);
        assert_eq!(g.post_send(a, s(2, 1)), WcStatus::WrFlushErr);
        let mut got = vec![0xEE; 64];
        got[8..16].fill(0x55);
        assert!(g.compare(dst, &got).is_none(), "the receive buffer is not predicted");
        got[16] = 0;
        assert_eq!(g.compare(dst, &got).unwrap().offset, 16);
        assert!(g.on_completion(0, &wc(1, WcStatus::RemInvReqErr, WcOpcode::Send, 9, 2)).is_ok());
        assert!(g.on_completion(0, &wc(2, WcStatus::WrFlushErr, WcOpcode::Send, 0, 2)).is_ok());
        assert_eq!(g.pending(), 0);
        // The responder may report the failure (LocLenErr then flushes) or stay silent.
        assert!(g.on_completion(1, &wc(5, WcStatus::LocLenErr, WcOpcode::Recv, 123, 7)).is_ok());
        assert!(g.on_completion(1, &wc(6, WcStatus::WrFlushErr, WcOpcode::Recv, 0, 7)).is_ok());
        assert!(g.settle().is_empty());
    }

    #[test]
    #[should_panic(expected = "stimulus error")]
    fn racing_writes_from_two_qps_are_refused() {
        let mut g = Golden::new();
        let src = mr(&mut g, 0, 1, 64, AccessFlags::empty());
        let dst = mr(&mut g, 1, 2, 64, RW);
        let (a, _) = pair(&mut g);
        let c = g.add_qp(0, 3, 1);
        let d = g.add_qp(1, 8, 1);
        g.connect(c, d);
        let addr = g.mr_info(dst).addr;
        let w = |remote_addr| SendOp {
            wr_id: 0,
            verb: Verb::Write { remote_addr, rkey: 2 },
            mr: src,
            offset: 0,
            len: 8,
            tag: 0,
        };
        g.post_send(a, w(addr));
        g.post_send(c, w(addr + 4));
    }

    #[test]
    fn read_copies_remote_bytes_and_checks_remote_read() {
        let mut g = Golden::new();
        let dst = mr(&mut g, 0, 1, 64, AccessFlags::LOCAL_WRITE);
        let src = mr(&mut g, 1, 2, 64, AccessFlags::REMOTE_READ);
        let wo = mr(&mut g, 1, 3, 64, RW);
        let (a, b) = pair(&mut g);
        g.cpu_write(src, 8, &[1, 2, 3, 4, 5]);
        let addr = g.mr_info(src).addr;
        let read = |wr_id, remote_addr, rkey, offset, len| SendOp {
            wr_id,
            verb: Verb::Read { remote_addr, rkey },
            mr: dst,
            offset,
            len,
            tag: wr_id,
        };
        assert_eq!(g.post_send(a, read(1, addr + 9, 2, 60, 4)), WcStatus::Success);
        // Zero length: nothing placed, no key checked.
        assert_eq!(g.post_send(a, read(2, 0, 99, 0, 0)), WcStatus::Success);
        let mut want = [0xEE; 64];
        want[60..64].copy_from_slice(&[2, 3, 4, 5]);
        assert_eq!(g.mr_bytes(dst), &want[..]);
        assert_eq!(g.mr_bytes(src)[8..13], [1, 2, 3, 4, 5], "the source is only read");
        assert!(g.on_completion(0, &wc(1, WcStatus::Success, WcOpcode::RdmaWrite, 4, 2)).is_err());
        assert_eq!(g.on_completion(0, &wc(1, WcStatus::Success, WcOpcode::RdmaRead, 4, 2)).unwrap().tag, 1);
        assert_eq!(g.on_completion(0, &wc(2, WcStatus::Success, WcOpcode::RdmaRead, 0, 2)).unwrap().tag, 2);
        // A READ consumes no receive: the peer's posted receive waits for a SEND.
        g.post_recv(b, RecvOp { wr_id: 7, mr: wo, offset: 0, len: 8, tag: 7, list: None });
        assert_eq!(g.outstanding(b), 0);
        // A region without REMOTE_READ (it has REMOTE_WRITE): refused, nothing lands, the rest is flushed.
        let wo_addr = g.mr_info(wo).addr;
        assert_eq!(g.post_send(a, read(3, wo_addr, 3, 0, 4)), WcStatus::RemAccessErr);
        assert_eq!(g.post_send(a, read(4, addr, 2, 0, 4)), WcStatus::WrFlushErr);
        assert_eq!(g.mr_bytes(dst), &want[..]);
        assert!(g.on_completion(0, &wc(3, WcStatus::RemAccessErr, WcOpcode::RdmaRead, 4, 2)).is_ok());
        assert!(g.on_completion(0, &wc(4, WcStatus::WrFlushErr, WcOpcode::RdmaRead, 0, 2)).is_ok());
        // Past the end of the source region.
        let mut g = Golden::new();
        let dst = mr(&mut g, 0, 1, 64, AccessFlags::LOCAL_WRITE);
        let src = mr(&mut g, 1, 2, 64, AccessFlags::REMOTE_READ);
        let (a, _) = pair(&mut g);
        let addr = g.mr_info(src).addr;
        let past = SendOp {
            wr_id: 1,
            verb: Verb::Read { remote_addr: addr + 61, rkey: 2 },
            mr: dst,
            offset: 0,
            len: 4,
            tag: 0,
        };
        assert_eq!(g.post_send(a, past), WcStatus::RemAccessErr);
    }

    #[test]
    #[should_panic(expected = "a READ on the same queue")]
    fn a_read_destination_is_not_ordered_with_its_own_queue() {
        let mut g = Golden::new();
        let local = mr(&mut g, 0, 1, 64, AccessFlags::LOCAL_WRITE);
        let src = mr(&mut g, 1, 2, 64, AccessFlags::REMOTE_READ);
        let rbuf = mr(&mut g, 1, 3, 64, AccessFlags::LOCAL_WRITE);
        let (a, b) = pair(&mut g);
        let addr = g.mr_info(src).addr;
        g.post_recv(b, RecvOp { wr_id: 0, mr: rbuf, offset: 0, len: 8, tag: 0, list: None });
        let read =
            SendOp { wr_id: 1, verb: Verb::Read { remote_addr: addr, rkey: 2 }, mr: local, offset: 0, len: 8, tag: 1 };
        g.post_send(a, read);
        // A SEND of the bytes the READ is still bringing in, on the same queue.
        g.post_send(a, SendOp { wr_id: 2, verb: Verb::Send, mr: local, offset: 4, len: 8, tag: 2 });
    }

    #[test]
    #[should_panic(expected = "without LOCAL_WRITE")]
    fn a_read_into_a_region_without_local_write_is_a_stimulus_error() {
        let mut g = Golden::new();
        let local = mr(&mut g, 0, 1, 64, AccessFlags::REMOTE_WRITE);
        let src = mr(&mut g, 1, 2, 64, AccessFlags::REMOTE_READ);
        let (a, _) = pair(&mut g);
        let addr = g.mr_info(src).addr;
        g.post_send(
            a,
            SendOp { wr_id: 1, verb: Verb::Read { remote_addr: addr, rkey: 2 }, mr: local, offset: 0, len: 8, tag: 1 },
        );
    }

    #[test]
    fn ranges() {
        let mut v = Vec::new();
        add_range(&mut v, 10, 20);
        add_range(&mut v, 30, 40);
        add_range(&mut v, 15, 35);
        assert_eq!(v, vec![(10, 15), (15, 35), (35, 40)]);
        remove_range(&mut v, 12, 38);
        assert_eq!(v, vec![(10, 12), (38, 40)]);
    }
}
