//! Completion queues and work completions.

use crate::ctx::{busy, Context, CtxState};
use crate::error::Queue;
use crate::qp::enter_error;
use crate::ring::{self, cqe_owner_valid, matches_low16};
use crate::{DestroyError, Error, Resource, Result};
use rnic_driver::{DmaAccess, DmaBuf};
use rnic_spec::desc::{cqe_flags, cqe_op, cqe_status, Cqe, CQE_BYTES};
use rnic_spec::regs::{self, cq, NUM_STAGE};
use std::collections::VecDeque;
use std::sync::{Arc, Weak};
use zerocopy::FromBytes;

use crate::event::{ChanInner, CompChannel};

/// Completion status (`ibv_wc_status`; values from `rnic_spec::desc::cqe_status`).
/// The default is `Success`, ibverbs' value 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum WcStatus {
    /// Success.
    #[default]
    Success,
    /// Local length error (message longer than the receive buffer).
    LocLenErr,
    /// Local QP operation error: the NIC found a WQE with an opcode the host may not post.
    LocQpOpErr,
    /// Local protection error (bad lkey or address outside the local MR).
    LocProtErr,
    /// Flushed because the QP entered the error state.
    WrFlushErr,
    /// The responder NAKed the request as invalid.
    RemInvReqErr,
    /// Remote access error (bad rkey, bounds, or permission at the responder).
    RemAccessErr,
    /// Remote operation error.
    RemOpErr,
    /// No ACK progress after `retry_cnt` retransmission timeouts.
    RetryExcErr,
    /// The responder had no receive WQE (RNR NAK) more than `rnr_retry` times.
    RnrRetryExcErr,
    /// A status value the library does not know.
    Other(u8),
}

impl WcStatus {
    /// From the CQE's status byte.
    pub fn from_raw(v: u8) -> Self {
        match v {
            cqe_status::SUCCESS => WcStatus::Success,
            cqe_status::LOC_LEN_ERR => WcStatus::LocLenErr,
            cqe_status::LOC_QP_OP_ERR => WcStatus::LocQpOpErr,
            cqe_status::LOC_PROT_ERR => WcStatus::LocProtErr,
            cqe_status::WR_FLUSH_ERR => WcStatus::WrFlushErr,
            cqe_status::REM_INV_REQ_ERR => WcStatus::RemInvReqErr,
            cqe_status::REM_ACCESS_ERR => WcStatus::RemAccessErr,
            cqe_status::REM_OP_ERR => WcStatus::RemOpErr,
            cqe_status::RETRY_EXC_ERR => WcStatus::RetryExcErr,
            cqe_status::RNR_RETRY_EXC_ERR => WcStatus::RnrRetryExcErr,
            o => WcStatus::Other(o),
        }
    }

    /// The CQE status byte.
    pub fn raw(self) -> u8 {
        match self {
            WcStatus::Success => cqe_status::SUCCESS,
            WcStatus::LocLenErr => cqe_status::LOC_LEN_ERR,
            WcStatus::LocQpOpErr => cqe_status::LOC_QP_OP_ERR,
            WcStatus::LocProtErr => cqe_status::LOC_PROT_ERR,
            WcStatus::WrFlushErr => cqe_status::WR_FLUSH_ERR,
            WcStatus::RemInvReqErr => cqe_status::REM_INV_REQ_ERR,
            WcStatus::RemAccessErr => cqe_status::REM_ACCESS_ERR,
            WcStatus::RemOpErr => cqe_status::REM_OP_ERR,
            WcStatus::RetryExcErr => cqe_status::RETRY_EXC_ERR,
            WcStatus::RnrRetryExcErr => cqe_status::RNR_RETRY_EXC_ERR,
            WcStatus::Other(o) => o,
        }
    }

    /// Whether the work request succeeded.
    pub fn is_ok(self) -> bool {
        self == WcStatus::Success
    }
}

/// Completion opcode (`ibv_wc_opcode`; values from `rnic_spec::desc::cqe_op`).
/// The default is `Send`, ibverbs' value 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum WcOpcode {
    /// A SEND completed at the requester.
    #[default]
    Send,
    /// An RDMA WRITE completed at the requester.
    RdmaWrite,
    /// An RDMA READ completed at the requester: all of its data has landed
    /// in the WR's scatter entry (`IBV_WC_RDMA_READ`).
    RdmaRead,
    /// A SEND was received.
    Recv,
    /// An RDMA WRITE with immediate data consumed a receive WR (`byte_len`
    /// is the length written).
    RecvRdmaWithImm,
    /// An opcode the library does not know.
    Other(u8),
}

impl WcOpcode {
    /// From the CQE's opcode byte.
    pub fn from_raw(v: u8) -> Self {
        match v {
            cqe_op::SEND => WcOpcode::Send,
            cqe_op::RDMA_WRITE => WcOpcode::RdmaWrite,
            cqe_op::RDMA_READ => WcOpcode::RdmaRead,
            cqe_op::RECV => WcOpcode::Recv,
            cqe_op::RECV_RDMA_WITH_IMM => WcOpcode::RecvRdmaWithImm,
            o => WcOpcode::Other(o),
        }
    }
}

/// One work completion (`ibv_wc`). The default value (all zero, like a
/// zeroed `ibv_wc`) only fills buffers for [`Cq::poll_cq`]:
/// `[WorkCompletion::default(); 16]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkCompletion {
    /// The `wr_id` the application posted.
    pub wr_id: u64,
    /// Outcome.
    pub status: WcStatus,
    /// What completed: for send completions (and flushes) the posted operation.
    pub opcode: WcOpcode,
    /// Bytes received (receives, from the CQE) or the posted message length
    /// (send completions); 0 when flushed.
    pub byte_len: u32,
    /// Local QP number.
    pub qp_num: u32,
    /// [`WcFlags::WITH_IMM`] when `imm_data` holds immediate data.
    pub wc_flags: WcFlags,
    /// Immediate data of a SEND or RDMA WRITE with immediate (receive side).
    pub imm_data: u32,
    /// The QP number of the sender: for an RC QP, the peer it is connected
    /// to (receive completions; 0 on send completions and flushes).
    pub src_qp: u32,
    /// The NIC's raw completion status (`rnic_spec::desc::cqe_status`) of an
    /// error completion the NIC wrote; 0 on success and on flushes the
    /// library makes.
    pub vendor_err: u32,
}

bitflags::bitflags! {
    /// Work completion flags (`ibv_wc_flags`).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub struct WcFlags: u32 {
        /// The completion carries immediate data (`IBV_WC_WITH_IMM`).
        const WITH_IMM = 1 << 1;
    }
}

/// The library's state of one CQ.
pub(crate) struct CqInner {
    pub buf: DmaBuf,
    pub log2: u32,
    /// Free-running consumer index.
    pub ci: u32,
    /// Entries reserved by the QPs that complete on this CQ.
    pub committed: u32,
    /// Completions synthesized by the library (flushes), returned before the ring's.
    pub pending: VecDeque<WorkCompletion>,
    /// The MSI-X vector of its completion channel.
    pub vector: Option<u32>,
    /// Armed by `req_notify_cq` and its event not yet returned by `get_cq_event`.
    pub armed: bool,
    /// Its event happened (seen by a second `req_notify_cq`) and is not yet returned.
    pub fired: bool,
    /// Events returned by `get_cq_event` and not yet acknowledged.
    pub unacked: u32,
    /// The CQ itself, for `get_cq_event` to hand out.
    pub handle: Weak<CqLife>,
}

impl CqInner {
    pub fn entries(&self) -> u32 {
        1 << self.log2
    }
}

/// The CQ shared by its handles and the QPs that complete on it.
pub(crate) struct CqLife {
    ctx: Context,
    cqn: u32,
    /// Its completion channel, kept alive (and its vector bound) while the CQ lives.
    _chan: Option<Arc<ChanInner>>,
}

impl CqLife {
    /// Frees the ring and the CQN; later calls do nothing.
    fn release(&self) -> Result<()> {
        let taken = self.ctx.state().cqs[self.cqn as usize].take();
        match taken {
            // No QP references this CQ any more (QPs hold a handle), so the NIC will not write it.
            Some(c) => Ok(self.ctx.dev().free_dma(c.buf)?),
            None => Ok(()),
        }
    }
}

impl Drop for CqLife {
    fn drop(&mut self) {
        // Errors cannot be reported from drop; `Cq::destroy_cq` reports them.
        let _ = self.release();
    }
}

/// A completion queue (`ibv_cq`): a ring of 32-byte CQEs the NIC writes.
/// Cheap to clone; all clones are the same CQ. The QPs completing on it hold
/// it, so it is destroyed when the last handle and the last such QP are gone,
/// or explicitly with [`Cq::destroy_cq`].
#[derive(Clone)]
pub struct Cq {
    life: Arc<CqLife>,
}

impl Cq {
    pub(crate) fn create(ctx: &Context, depth: u32, channel: Option<&CompChannel>) -> Result<Cq> {
        let max = 1u64 << ring::MAX_CQ_LOG2;
        if depth == 0 || depth as u64 > max {
            return Err(Error::BadSize { what: "CQ depth", value: depth as u64, min: 1, max });
        }
        if let Some(ch) = channel {
            if !ch.context().same(ctx) {
                return Err(Error::Unsupported { what: "a completion channel of another device context".into() });
            }
        }
        let log2 = ring::log2_entries(depth);
        let cqn = {
            let st = ctx.state();
            st.cqs.iter().position(Option::is_none).ok_or(Error::Exhausted { what: "CQN", max: st.cqs.len() })?
        };
        // The NIC only writes CQEs; it never needs to read them.
        let buf = ctx.dev().alloc_dma(CQE_BYTES << log2, DmaAccess { device_read: false, device_write: true })?;
        let chan = channel.map(|c| c.inner().clone());
        let vector = chan.as_ref().map(|c| c.vector);
        let life = Arc::new(CqLife { ctx: ctx.clone(), cqn: cqn as u32, _chan: chan });
        ctx.state().cqs[cqn] = Some(CqInner {
            buf,
            log2,
            ci: 0,
            committed: 0,
            pending: VecDeque::new(),
            vector,
            armed: false,
            fired: false,
            unacked: 0,
            handle: Arc::downgrade(&life),
        });
        let cq = Cq { life };
        let mut w = [0u64; NUM_STAGE];
        cq::BASE.put(&mut w, buf.bus_addr);
        cq::LOG2.put(&mut w, log2 as u64);
        if let Some(v) = vector {
            cq::VECTOR.put(&mut w, v as u64);
            cq::EVENTS.put(&mut w, 1);
        }
        ctx.stage_commit(&w, cq::CQ_WORDS, regs::REG_CQ_COMMIT, cqn as u64)?;
        Ok(cq)
    }

    pub(crate) fn from_life(life: Arc<CqLife>) -> Cq {
        Cq { life }
    }

    /// Asks for one completion event (`ibv_req_notify_cq`): the next CQE
    /// the NIC writes to this CQ makes [`CompChannel::get_cq_event`] return
    /// it. Completions already in the ring do not count: poll after arming,
    /// as with ibverbs. Returns once the arm has taken effect and every CQE
    /// the NIC wrote before it is in memory, so that poll sees them (a
    /// register read after the arm: PCIe orders its reply behind the NIC's
    /// earlier writes). `solicited_only` is not supported (the NIC has no
    /// solicited-event bit) and fails.
    pub fn req_notify_cq(&self, solicited_only: bool) -> Result<()> {
        if solicited_only {
            return Err(Error::Unsupported {
                what: "solicited-only completion events (the NIC has no solicited-event bit)".into(),
            });
        }
        let ctx = &self.life.ctx;
        let cqn = self.life.cqn;
        let mut st = ctx.state();
        let cq = st.cqs[cqn as usize].as_mut().expect("live CQ handle has a table entry");
        if cq.vector.is_none() {
            return Err(Error::NoChannel { cqn });
        }
        // Armed again before its event was returned: keep the event if it already happened.
        if cq.armed && !cq.fired && ctx.dev().read_reg(regs::REG_CQ_ARMED)? >> cqn & 1 == 0 {
            cq.fired = true;
        }
        cq.armed = true;
        ctx.dev().write_reg(regs::REG_CQ_ARM, cqn as u64)?;
        // Without the flush, a CQE on its way to memory when the arm lands is neither polled nor an event.
        ctx.dev().read_reg(regs::REG_CQ_ARMED)?;
        Ok(())
    }

    /// Acknowledges `n` events [`CompChannel::get_cq_event`] returned for
    /// this CQ (`ibv_ack_cq_events`). Fails if fewer are unacknowledged.
    pub fn ack_cq_events(&self, n: u32) -> Result<()> {
        let mut st = self.life.ctx.state();
        let cq = st.cqs[self.life.cqn as usize].as_mut().expect("live CQ handle has a table entry");
        if n > cq.unacked {
            return Err(Error::BadSize {
                what: "CQ events acknowledged",
                value: n as u64,
                min: 0,
                max: cq.unacked as u64,
            });
        }
        cq.unacked -= n;
        Ok(())
    }

    /// CQ number.
    pub fn cqn(&self) -> u32 {
        self.life.cqn
    }

    /// The context this CQ belongs to.
    pub fn context(&self) -> &Context {
        &self.life.ctx
    }

    /// Number of CQEs the ring holds (the depth rounded up to a power of two).
    pub fn entries(&self) -> u32 {
        self.life.ctx.state().cqs[self.life.cqn as usize].as_ref().map_or(0, CqInner::entries)
    }

    /// Polls completions without waiting (`ibv_poll_cq`): fills the front
    /// of `wc` with up to `wc.len()` completions, oldest first, and returns
    /// how many it filled (0 when none is ready). Entries past the count are
    /// left as they were. Does not allocate, so a buffer can be reused
    /// across calls. On an error, the completions this call took before it
    /// are not reported.
    pub fn poll_cq(&self, wc: &mut [WorkCompletion]) -> Result<usize> {
        let ctx = &self.life.ctx;
        let cqn = self.life.cqn;
        let mut n = 0;
        let mut st = ctx.state();
        crate::ctx::drain_ctrlq(ctx, &mut st)?;
        while n < wc.len() {
            let cq = st.cqs[cqn as usize].as_mut().expect("live CQ handle has a table entry");
            if let Some(c) = cq.pending.pop_front() {
                wc[n] = c;
                n += 1;
                continue;
            }
            let Some(cqe) = take_cqe(ctx, cq)? else { break };
            if let Some(c) = complete(ctx, &mut st, cqn, &cqe)? {
                wc[n] = c;
                n += 1;
            }
        }
        Ok(n)
    }

    /// [`Cq::poll_cq`] into a new vector of at most `max` completions
    /// (empty when none is ready). Allocates on every call: loops that poll
    /// often should reuse a buffer with [`Cq::poll_cq`].
    pub fn poll_cq_vec(&self, max: usize) -> Result<Vec<WorkCompletion>> {
        let mut wc = vec![WorkCompletion::default(); max];
        let n = self.poll_cq(&mut wc)?;
        wc.truncate(n);
        Ok(wc)
    }

    /// Waits for exactly `n` completions, letting the device run
    /// ([`rnic_driver::Device::wait`]) between polls. Fails after
    /// `timeout_cycles` device cycles with the state of this CQ's QPs.
    pub fn wait_cq(&self, n: usize, timeout_cycles: u64) -> Result<Vec<WorkCompletion>> {
        let dev = self.life.ctx.dev();
        let start = dev.now_cycles();
        let mut got = vec![WorkCompletion::default(); n];
        let mut filled = 0;
        loop {
            filled += self.poll_cq(&mut got[filled..])?;
            if filled == n {
                return Ok(got);
            }
            let waited = dev.now_cycles().saturating_sub(start);
            if waited > timeout_cycles {
                return Err(Error::Timeout {
                    cqn: self.cqn(),
                    wanted: n,
                    got: filled,
                    cycles: waited,
                    state: self.describe(),
                });
            }
            dev.wait()?;
        }
    }

    /// Destroys the CQ (`ibv_destroy_cq`), consuming this handle.
    ///
    /// Fails with [`Error::Busy`] naming the QPs that still complete on it
    /// (or other clones of this handle), and hands the CQ back in the
    /// [`DestroyError`]. On success the ring is freed (completions not yet
    /// polled are discarded) and the CQN is free for [`Context::create_cq`].
    pub fn destroy_cq(self) -> std::result::Result<(), DestroyError<Cq>> {
        let cqn = self.cqn();
        let (users, held) = {
            let st = self.life.ctx.state();
            let mut users = Vec::new();
            let mut held = 0;
            for q in st.qps.iter().flatten() {
                // A QP holds one handle for its send CQ and one for its receive CQ.
                let n = (q.send_cqn == cqn) as usize + (q.recv_cqn == cqn) as usize;
                if n > 0 {
                    users.push(Resource::Qp(q.qpn));
                    held += n;
                }
            }
            (users, held)
        };
        let others = Arc::strong_count(&self.life).saturating_sub(1 + held);
        if let Some(e) = busy(Resource::Cq(cqn), users, others) {
            return Err(DestroyError::busy(self, e));
        }
        self.life.release().map_err(DestroyError::failed)
    }

    /// A one-line description of this CQ, its QPs and the NIC counters (for messages).
    pub fn describe(&self) -> String {
        let ctx = &self.life.ctx;
        let cqn = self.life.cqn;
        let mut s = String::new();
        {
            let st = ctx.state();
            if let Some(c) = &st.cqs[cqn as usize] {
                s += &format!("CQ {cqn}: ci={} of {} entries, {} pending flushes;", c.ci, c.entries(), c.pending.len());
            }
            for q in st.qps.iter().flatten().filter(|q| q.send_cqn == cqn || q.recv_cqn == cqn) {
                s += &format!(" {};", q.describe());
            }
        }
        s += &format!(" {}: {}", ctx.dev().name(), ctx.counters_line());
        s
    }
}

/// The CQE at the CQ's consumer index if the NIC has written it (the
/// owner bit of this pass), consumed.
fn take_cqe(ctx: &Context, cq: &mut CqInner) -> Result<Option<Cqe>> {
    let mut raw = [0u8; CQE_BYTES];
    let addr = cq.buf.bus_addr + (ring::slot(cq.ci, cq.log2) * CQE_BYTES) as u64;
    ctx.dev().read_mem(addr, &mut raw)?;
    let cqe = Cqe::read_from_bytes(&raw).expect("CQE_BYTES bytes");
    if cqe.owner != cqe_owner_valid(cq.ci, cq.log2) {
        return Ok(None);
    }
    cq.ci = cq.ci.wrapping_add(1);
    Ok(Some(cqe))
}

/// Takes every CQE the NIC has written, on every CQ, into the CQs' pending
/// lists (in order), so the library's view of completed WRs is as fresh as
/// the NIC's before the slow path picks WRs to resend: a WR whose
/// completion is already written must not be resent, as the application may
/// reuse its SQ slot once it has seen that completion.
pub(crate) fn absorb_cqes(ctx: &Context, st: &mut CtxState) -> Result<()> {
    for cqn in 0..st.cqs.len() as u32 {
        while let Some(cq) = st.cqs[cqn as usize].as_mut() {
            let at = cq.pending.len();
            let Some(cqe) = take_cqe(ctx, cq)? else { break };
            if let Some(c) = complete(ctx, st, cqn, &cqe)? {
                // Before the flushes an error completion may have queued behind it.
                st.cqs[cqn as usize].as_mut().expect("CQ").pending.insert(at, c);
            }
        }
    }
    Ok(())
}

/// Matches a hardware CQE to the oldest outstanding WR of its queue.
fn complete(ctx: &Context, st: &mut CtxState, cqn: u32, cqe: &Cqe) -> Result<Option<WorkCompletion>> {
    let qpn = cqe.qpn.get();
    let queue =
        if cqe.opcode == cqe_op::RECV || cqe.opcode == cqe_op::RECV_RDMA_WITH_IMM { Queue::Rq } else { Queue::Sq };
    let got = cqe.wqe_index.get();
    let bad = |expected: String| Error::BadCqe { cqn, qpn, queue, got, expected };
    let Some(qp) = st.qps.get_mut(qpn as usize).and_then(Option::as_mut) else {
        return Err(bad("no such QP exists".into()));
    };
    let home = if queue == Queue::Sq { qp.send_cqn } else { qp.recv_cqn };
    let peer = qp.dest_qpn();
    if home != cqn {
        return Err(bad(format!("that QP's {queue} completes on CQ {home}")));
    }
    // After the QP entered ERROR its outstanding WRs were flushed already.
    if qp.state == crate::QpState::Error {
        return Ok(None);
    }
    let wq = qp.wq_mut(queue);
    if wq.outstanding() == 0 {
        return Err(bad("no WR is outstanding".into()));
    }
    if !matches_low16(wq.ci, got) {
        return Err(bad(format!("the oldest outstanding WR has index {:#06x}", wq.ci as u16)));
    }
    let slot = wq.slots[ring::slot(wq.ci, wq.log2)];
    wq.ci = wq.ci.wrapping_add(1);
    // A requester CQE only names the WQE (the NIC keeps no per-WQE state):
    // opcode and length of a send completion come from what was posted.
    let (opcode, byte_len) = match queue {
        Queue::Sq => (slot.opcode, slot.len),
        Queue::Rq => (WcOpcode::from_raw(cqe.opcode), cqe.byte_len.get()),
    };
    let with_imm = cqe.flags & cqe_flags::WITH_IMM != 0;
    let src_qp = match queue {
        Queue::Rq => peer.unwrap_or(0),
        Queue::Sq => 0,
    };
    let wc = WorkCompletion {
        wr_id: slot.wr_id,
        status: WcStatus::from_raw(cqe.status),
        opcode,
        byte_len,
        qp_num: qpn,
        wc_flags: if with_imm { WcFlags::WITH_IMM } else { WcFlags::empty() },
        imm_data: if with_imm { cqe.imm.get() } else { 0 },
        src_qp,
        vendor_err: if cqe.status == cqe_status::SUCCESS { 0 } else { cqe.status as u32 },
    };
    if !wc.status.is_ok() {
        tracing::warn!(dev = %ctx.dev().name(), qpn, wr_id = wc.wr_id, status = ?wc.status, opcode = ?wc.opcode, "error completion");
        enter_error(ctx, st, qpn)?;
    } else if !slot.signaled {
        // An unsignaled WR that succeeded: its CQE only frees its slot.
        return Ok(None);
    }
    Ok(Some(wc))
}
