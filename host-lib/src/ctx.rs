//! Device context, protection domains, the library's resource tables.

use crate::cq::CqInner;
use crate::qp::QpInner;
use crate::recovery::{read_send_wqe, write_rewind, Action};
use crate::QpState;
use crate::{CompChannel, Cq, DestroyError, Error, Resource, Result};
use rnic_driver::{Device, DmaAccess, DmaBuf};
use rnic_spec::desc::{ctrlq_kind, CtrlqEntry, CTRLQ_ENTRY_BYTES};
use rnic_spec::params;
use rnic_spec::regs::{self, NUM_STAGE};
use rnic_spec::wire::ack_flags;
use std::collections::BTreeSet;
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex, MutexGuard};
use zerocopy::FromBytes;

/// Largest PD number: the QPC and MR `PD` fields are 16 bits wide (0 is never used).
const PD_MAX: u32 = 0xFFFF;

/// A NIC's network identity: what it writes as source MAC/IP, and what a
/// peer QP uses as destination at RTR.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetAddr {
    /// Ethernet MAC address.
    pub mac: [u8; 6],
    /// IPv4 address.
    pub ip: Ipv4Addr,
}

impl NetAddr {
    /// The MAC as the 48-bit register value (first wire byte in bits 47:40).
    pub fn mac_u64(&self) -> u64 {
        self.mac.iter().fold(0u64, |a, &b| (a << 8) | b as u64)
    }
}

/// What the NIC reports about itself (`ibv_query_device`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceAttr {
    /// Version (low 32 bits of REG_ID).
    pub version: u32,
    /// Raw REG_CAPS.
    pub caps: u64,
    /// QPs the library may allocate.
    pub max_qp: usize,
    /// CQs the library may allocate.
    pub max_cq: usize,
    /// MR table entries.
    pub max_mr: usize,
}

/// Retransmission timeout set at [`open_device`], in device cycles (100 µs at
/// 250 MHz: a few fabric round trips of the cosimulated cluster; a real
/// fabric with deep buffers wants milliseconds, see
/// [`Context::set_retransmit_timeout`]).
pub const DEFAULT_RTO_CYCLES: u64 = 25_000;

/// log2 of the CtrlQ's entries (4096 entries, 128 KiB).
pub(crate) const CTRLQ_LOG2: u32 = 12;

/// The context's control queue: the NIC's reports to the slow path.
pub(crate) struct CtrlQ {
    /// The ring (None once released).
    pub buf: Option<DmaBuf>,
    pub log2: u32,
    /// Free-running consumer index.
    pub ci: u32,
    /// Entries of a kind this library does not know.
    pub unknown: u64,
}

/// One entry of the library's MR table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MrSlot {
    /// Free for the next registration.
    Free,
    /// Registered in PD `pdn` under `key`.
    Live { pdn: u32, key: u32 },
    /// Deregistration failed: the memory stays allocated and the index is never used again.
    Leaked,
}

/// The library's view of one NIC's tables.
pub(crate) struct CtxState {
    /// PD numbers in use (by a `Pd` handle or by the MRs and QPs that hold one).
    pub pds: BTreeSet<u32>,
    /// Every PD number from 1 to below this one is in use (where `alloc_pd` starts looking).
    pub pd_hint: u32,
    /// Last key tag handed out per MR index (rolls so stale keys miss).
    pub mr_tag: Vec<u8>,
    pub mrs: Vec<MrSlot>,
    pub cqs: Vec<Option<CqInner>>,
    pub qps: Vec<Option<QpInner>>,
    pub ctrlq: CtrlQ,
    /// SQ rewinds written since the context opened, and the NIC's count of
    /// rewinds applied or dropped at that moment.
    pub rewinds_issued: u64,
    pub rewind_base: u64,
    /// The NIC's count of rewinds taken (since `rewind_base`) when last read.
    pub rewinds_taken_seen: u64,
    /// Rewinds and resends decided but not yet written: the NIC's rewind
    /// queue holds `params::REWIND_QUEUE`, and one written to a full queue
    /// would be dropped.
    pub rewind_backlog: std::collections::VecDeque<(u32, Action)>,
    /// Host CPU time the slow path spent on CtrlQ entries (deciding, and
    /// writing the rewinds and resends), and the entries it handled.
    pub slow_path_time: std::time::Duration,
    pub slow_path_entries: u64,
    /// Time the slow path waited for register reads (left out of
    /// `slow_path_time`: in the cosimulation that wait runs the simulator).
    pub slow_path_reg_wait: std::time::Duration,
    /// The network the windows are tuned for (the last `set_cc_network`).
    pub cc_net: CcNetwork,
    /// Bit `v`: MSI-X vector `v` is a completion channel's.
    pub irq_vectors: u32,
}

impl CtxState {
    /// Every live object of the context, PDs first, then CQs, MRs and QPs.
    fn live_objects(&self) -> Vec<Resource> {
        let pds = self.pds.iter().map(|&n| Resource::Pd(n));
        let cqs = self.cqs.iter().enumerate().filter(|(_, c)| c.is_some()).map(|(n, _)| Resource::Cq(n as u32));
        let mrs = self.mrs.iter().filter_map(|m| match m {
            MrSlot::Live { key, .. } => Some(Resource::Mr(*key)),
            _ => None,
        });
        let qps = self.qps.iter().flatten().map(|q| Resource::Qp(q.qpn));
        pds.chain(cqs).chain(mrs).chain(qps).collect()
    }
}

/// The [`Error::Busy`] for destroying `object`, unless nothing uses it.
pub(crate) fn busy(object: Resource, users: Vec<Resource>, other_handles: usize) -> Option<Error> {
    (!users.is_empty() || other_handles > 0).then_some(Error::Busy { object, users, other_handles })
}

pub(crate) struct CtxInner {
    pub dev: Arc<dyn Device>,
    pub addr: NetAddr,
    pub version: u32,
    pub caps: u64,
    /// Posts to an idle SQ push their WQE through the BAR ([`Context::set_wqe_push`]).
    pub push: std::sync::atomic::AtomicBool,
    pub st: Mutex<CtxState>,
}

impl Drop for CtxInner {
    /// Stops the NIC's CtrlQ reports and frees the ring (best effort: nothing can report a failure here).
    fn drop(&mut self) {
        if let Some(buf) = self.st.get_mut().unwrap_or_else(|e| e.into_inner()).ctrlq.buf.take() {
            let _ = self.dev.write_reg(regs::REG_CTRLQ_LOG2, 0);
            let _ = self.dev.free_dma(buf);
        }
    }
}

/// Reads the CtrlQ entries the NIC has written and applies them to the
/// library's state (the slow path runs in the thread that polls
/// completions), then tells the NIC how far it has read.
pub(crate) fn drain_ctrlq(ctx: &Context, st: &mut CtxState) -> Result<()> {
    let dev = ctx.dev();
    let Some(buf) = st.ctrlq.buf else { return Ok(()) };
    let log2 = st.ctrlq.log2;
    let mut consumed = false;
    let mut absorbed = false;
    loop {
        let ci = st.ctrlq.ci;
        let slot = (ci & ((1 << log2) - 1)) as u64;
        let mut raw = [0u8; CTRLQ_ENTRY_BYTES];
        dev.read_mem(buf.bus_addr + slot * CTRLQ_ENTRY_BYTES as u64, &mut raw)?;
        let e = CtrlqEntry::read_from_bytes(&raw).expect("CTRLQ_ENTRY_BYTES bytes");
        if e.owner != crate::ring::cqe_owner_valid(ci, log2) {
            break;
        }
        if !absorbed {
            // Completions first: the reports may name WRs that are already complete.
            crate::cq::absorb_cqes(ctx, st)?;
            absorbed = true;
        }
        st.ctrlq.ci = ci.wrapping_add(1);
        consumed = true;
        let qpn = e.qpn.get() as u32;
        let Some(q) = st.qps.get_mut(qpn as usize).and_then(Option::as_mut) else {
            st.ctrlq.unknown += 1;
            continue;
        };
        let live = q.state == QpState::Rts;
        tracing::debug!(dev = %ctx.dev().name(), qpn,
            kind = e.kind,
            flags = e.flags,
            psn = e.psn.get(),
            epsn = e.epsn.get(),
            ssn = e.ssn.get(),
            "CtrlQ entry"
        );
        // The device clock is read before the timer starts (in the cosim a register read runs the simulation).
        let now = if e.kind == ctrlq_kind::REQ_RNR { dev.read_reg(regs::REG_CYCLES)? } else { 0 };
        let (started, waited) = (std::time::Instant::now(), st.slow_path_reg_wait);
        if matches!(e.kind, ctrlq_kind::RESP_OOO | ctrlq_kind::RESP_SYNC) {
            // The responder's software recovery (its QP may be in RTR only).
            let cmd = q.resp_rec.on_report(e.kind, e.flags, e.psn.get(), e.epsn.get(), e.psn_offset.get(), e.episode);
            if let (Some(c), QpState::Rtr | QpState::Rts) = (cmd, q.state) {
                tracing::debug!(dev = %ctx.dev().name(), qpn, from = c.from, to = c.to, ends = c.ends, gen = c.gen, "software recovery: ePSN command");
                let mut words = [0u64; regs::NUM_STAGE];
                regs::rx_sr::FROM.put(&mut words, c.from as u64);
                regs::rx_sr::TO.put(&mut words, c.to as u64);
                regs::rx_sr::ENDS.put(&mut words, c.ends as u64);
                regs::rx_sr::PKTS.put(&mut words, c.pkts as u64);
                regs::rx_sr::SEND.put(&mut words, c.send as u64);
                regs::rx_sr::GEN.put(&mut words, c.gen as u64);
                dev.write_reg(regs::stage(0), words[0])?;
                dev.write_reg(regs::stage(1), words[1])?;
                dev.write_reg(regs::REG_RX_SR_SET, qpn as u64)?;
                q.rec.stats.reg_writes += 3;
            }
            st.slow_path_time += started.elapsed().saturating_sub(st.slow_path_reg_wait - waited);
            st.slow_path_entries += 1;
            continue;
        }
        let actions = match e.kind {
            ctrlq_kind::REQ_NAK_PSN => {
                q.note_psn_nak(e.psn.get(), e.epsn.get());
                let placed = e.flags & ack_flags::PLACED != 0;
                let (folded, ooo) = (e.plen.get() as u32, e.rsn.get() as u32);
                q.rec.on_psn_nak(&q.sq, e.epsn.get(), e.psn.get(), placed, e.imm.get(), folded, ooo)
            }
            ctrlq_kind::REQ_TIMEOUT => {
                tracing::info!(dev = %ctx.dev().name(), qpn, lack = e.ssn.get(), in_row = e.flags, "retransmission timeout");
                vec![q.rec.on_timeout(&q.sq, e.ssn.get(), e.flags)]
            }
            ctrlq_kind::REQ_PROBE => {
                let epsn = (e.flags & 1 != 0).then(|| e.epsn.get());
                tracing::debug!(dev = %ctx.dev().name(), qpn, lack = e.ssn.get(), ?epsn, "probe timeout");
                vec![q.rec.on_probe(&q.sq, e.ssn.get(), epsn)]
            }
            ctrlq_kind::REQ_RNR => {
                tracing::info!(dev = %ctx.dev().name(), qpn, epsn = e.epsn.get(), "RNR NAK: resend after the RNR timer");
                let mut a = q.rec.unfold(&q.sq, e.plen.get() as u32);
                a.push(q.rec.on_rnr(&q.sq, e.epsn.get(), now));
                a
            }
            _ => {
                tracing::warn!(dev = %ctx.dev().name(), qpn, kind = e.kind, "CtrlQ entry of an unknown kind");
                st.ctrlq.unknown += 1;
                Vec::new()
            }
        };
        if live {
            for action in actions {
                apply(ctx, st, qpn, action)?;
            }
        }
        st.slow_path_time += started.elapsed().saturating_sub(st.slow_path_reg_wait - waited);
        st.slow_path_entries += 1;
    }
    if consumed {
        dev.write_reg(regs::REG_CTRLQ_CI, st.ctrlq.ci as u64)?;
    }
    if !st.rewind_backlog.is_empty() {
        let (started, waited) = (std::time::Instant::now(), st.slow_path_reg_wait);
        issue_backlog(ctx, st)?;
        st.slow_path_time += started.elapsed().saturating_sub(st.slow_path_reg_wait - waited);
    }
    // Resends waiting for their RNR timer.
    if st.qps.iter().flatten().any(|q| q.rec.rnr_due.is_some()) {
        let now = dev.read_reg(regs::REG_CYCLES)?;
        let due: Vec<u32> =
            st.qps.iter().flatten().filter(|q| q.rec.rnr_due.is_some_and(|(at, _)| at <= now)).map(|q| q.qpn).collect();
        for qpn in due {
            let q = st.qps[qpn as usize].as_mut().expect("listed above");
            let action = q.rec.rnr_expired(&q.sq);
            if q.state == QpState::Rts {
                apply(ctx, st, qpn, action)?;
            }
        }
    }
    Ok(())
}

/// Cycles [`quiesce_rewinds`] waits for the NIC.
const REWIND_QUIESCE_CYCLES: u64 = 1_000_000;

/// Rewinds applied or dropped by the NIC so far.
fn rewinds_taken(dev: &dyn Device) -> Result<u64> {
    Ok(dev.read_reg(regs::counters::SQ_REWINDS)?
        + dev.read_reg(regs::counters::SQ_REWIND_DROP)?
        + dev.read_reg(regs::counters::SQ_RESENDS)?)
}

/// Waits until the NIC has taken every SQ rewind the slow path wrote, so
/// none can land on QP `qpn` after its requester state is reset for a new
/// life (the rewind queue is not flushed by a reset); the ones for `qpn`
/// not written yet are dropped.
pub(crate) fn quiesce_rewinds(dev: &dyn Device, st: &mut CtxState, qpn: u32) -> Result<()> {
    st.rewind_backlog.retain(|&(q, _)| q != qpn);
    if st.rewinds_issued == 0 {
        return Ok(());
    }
    let start = dev.now_cycles();
    loop {
        let taken = rewinds_taken(dev)?.wrapping_sub(st.rewind_base);
        if taken >= st.rewinds_issued {
            return Ok(());
        }
        let waited = dev.now_cycles().saturating_sub(start);
        if waited > REWIND_QUIESCE_CYCLES {
            return Err(Error::RewindsPending { qpn, pending: st.rewinds_issued - taken, cycles: waited });
        }
        dev.wait()?;
    }
}

/// Carries out the slow path's decision for QP `qpn` (rewinds and resends
/// join the backlog, written as the NIC's queue has room).
fn apply(ctx: &Context, st: &mut CtxState, qpn: u32, action: Action) -> Result<()> {
    match action {
        Action::Rewind { .. } | Action::Resend { .. } => {
            st.rewind_backlog.push_back((qpn, action));
            issue_backlog(ctx, st)
        }
        _ => write_action(ctx, st, qpn, action),
    }
}

/// Writes the backlog's rewinds and resends while the NIC's rewind queue
/// has room (its fill is known from the NIC's count of those it took, read
/// again only when the queue looks full). One whose QP left RTS or whose WQE
/// completed meanwhile is dropped.
pub(crate) fn issue_backlog(ctx: &Context, st: &mut CtxState) -> Result<()> {
    while let Some(&(qpn, action)) = st.rewind_backlog.front() {
        if st.rewinds_issued - st.rewinds_taken_seen >= params::REWIND_QUEUE as u64 {
            let t = std::time::Instant::now();
            st.rewinds_taken_seen = rewinds_taken(ctx.dev())?.wrapping_sub(st.rewind_base);
            st.slow_path_reg_wait += t.elapsed();
            if st.rewinds_issued - st.rewinds_taken_seen >= params::REWIND_QUEUE as u64 {
                return Ok(());
            }
        }
        st.rewind_backlog.pop_front();
        let idx = match action {
            Action::Rewind { idx, .. } | Action::Resend { idx, .. } => idx,
            _ => continue,
        };
        let live = st
            .qps
            .get(qpn as usize)
            .and_then(Option::as_ref)
            .is_some_and(|q| q.state == QpState::Rts && idx.wrapping_sub(q.sq.ci) < q.sq.pi.wrapping_sub(q.sq.ci));
        if live {
            write_action(ctx, st, qpn, action)?;
        }
    }
    Ok(())
}

/// Writes one decision to the NIC.
fn write_action(ctx: &Context, st: &mut CtxState, qpn: u32, action: Action) -> Result<()> {
    match action {
        Action::None | Action::RewindAt { .. } => Ok(()),
        Action::Rewind { idx, psn, msg_off } => {
            tracing::debug!(dev = %ctx.dev().name(), qpn, wr_index = idx, psn, msg_off, "rewind (go-back-N from this packet)");
            st.rewinds_issued += 1;
            let writes = write_rewind(ctx.dev(), qpn, idx, psn, msg_off, None)?;
            let rec = &mut st.qps[qpn as usize].as_mut().expect("QP").rec.stats;
            rec.rewinds += 1;
            rec.reg_writes += writes;
            Ok(())
        }
        Action::Resend { idx, psn, msg_off } => {
            tracing::debug!(dev = %ctx.dev().name(), qpn, wr_index = idx, psn, msg_off, "single-packet resend");
            let wqe = read_send_wqe(ctx.dev(), &st.qps[qpn as usize].as_ref().expect("QP").sq, idx)?;
            st.rewinds_issued += 1;
            let writes = write_rewind(ctx.dev(), qpn, idx, psn, msg_off, Some(&wqe))?;
            let rec = &mut st.qps[qpn as usize].as_mut().expect("QP").rec.stats;
            rec.resends += 1;
            rec.reg_writes += writes;
            Ok(())
        }
        Action::Fail { idx, status } => crate::qp::fail_requester(ctx, st, qpn, idx, status),
    }
}

/// An open NIC (`ibv_context`). Cheap to clone; all clones share the tables.
/// Every object created from the context holds it, so the context lives
/// until the last handle and the last object are gone.
#[derive(Clone)]
pub struct Context {
    pub(crate) inner: Arc<CtxInner>,
}

/// Opens a NIC: checks REG_ID's magic and programs the source MAC and IP.
pub fn open_device(dev: Arc<dyn Device>, addr: NetAddr) -> Result<Context> {
    let id = dev.read_reg(regs::REG_ID)?;
    if id >> 32 != regs::ID_MAGIC {
        return Err(Error::BadDeviceId { device: dev.name(), id, magic: regs::ID_MAGIC });
    }
    let caps = dev.read_reg(regs::REG_CAPS)?;
    wait_ready(&*dev)?;
    dev.write_reg(regs::REG_SRC_MAC, addr.mac_u64())?;
    dev.write_reg(regs::REG_SRC_IP, u32::from(addr.ip) as u64)?;
    // The CtrlQ: its size is written last, which restarts the NIC's producer index.
    let ctrlq = dev.alloc_dma(CTRLQ_ENTRY_BYTES << CTRLQ_LOG2, DmaAccess { device_read: false, device_write: true })?;
    dev.write_reg(regs::REG_CTRLQ_BASE, ctrlq.bus_addr)?;
    dev.write_reg(regs::REG_CTRLQ_CI, 0)?;
    dev.write_reg(regs::REG_CTRLQ_LOG2, CTRLQ_LOG2 as u64)?;
    dev.write_reg(regs::REG_RTO, DEFAULT_RTO_CYCLES)?;
    write_cc_params(&*dev, CcNetwork::default())?;
    let rewind_base = rewinds_taken(dev.as_ref())?;
    // Tags start at a per-index value and skip 0, so no key is ever 0.
    let mr_tag = (0..params::NUM_MRS).map(|i| (i as u8).wrapping_mul(37) | 1).collect();
    Ok(Context {
        inner: Arc::new(CtxInner {
            dev,
            addr,
            version: id as u32,
            caps,
            push: (caps & regs::CAPS_PUSH != 0).into(),
            st: Mutex::new(CtxState {
                pds: BTreeSet::new(),
                pd_hint: 1,
                mr_tag,
                mrs: vec![MrSlot::Free; params::NUM_MRS],
                cqs: (0..params::NUM_CQS).map(|_| None).collect(),
                qps: (0..params::NUM_QPS).map(|_| None).collect(),
                ctrlq: CtrlQ { buf: Some(ctrlq), log2: CTRLQ_LOG2, ci: 0, unknown: 0 },
                rewinds_issued: 0,
                rewinds_taken_seen: 0,
                rewind_backlog: std::collections::VecDeque::new(),
                slow_path_time: std::time::Duration::ZERO,
                slow_path_entries: 0,
                slow_path_reg_wait: std::time::Duration::ZERO,
                rewind_base,
                cc_net: CcNetwork::default(),
                irq_vectors: 0,
            }),
        }),
    })
}

/// Waits until the NIC has cleared its tables after power-on or a reset
/// (`STATUS_READY`); register writes before that are lost.
fn wait_ready(dev: &dyn Device) -> Result<()> {
    let start = dev.now_cycles();
    loop {
        if dev.read_reg(regs::REG_STATUS)? & regs::STATUS_READY != 0 {
            return Ok(());
        }
        let waited = dev.now_cycles().saturating_sub(start);
        if waited > READY_TIMEOUT_CYCLES {
            return Err(Error::NotReady { device: dev.name(), cycles: waited });
        }
    }
}

/// How long [`open_device`] waits for `STATUS_READY`: the scrub takes one
/// cycle per QP; this is a hundred times that at the largest QP count.
const READY_TIMEOUT_CYCLES: u64 = 100 << params::QPN_BITS_MAX;

/// Opens every NIC of a list (e.g. all NICs of a cosimulated cluster).
pub fn open_devices(devs: impl IntoIterator<Item = (Arc<dyn Device>, NetAddr)>) -> Result<Vec<Context>> {
    devs.into_iter().map(|(d, a)| open_device(d, a)).collect()
}

/// The network STrack's congestion window is tuned for: Table 1's
/// parameters scale with its bandwidth-delay product
/// (`rnic_model::strack::cc::StrackParams::from_net`). The default is the
/// cosimulated NICs' network: 100 Gb/s, 5 µs (an unloaded round trip from
/// the send path's timestamp, before the payload's PCIe read, to the
/// ACK's arrival, is about 3 µs), MTU 4096, a window of at most the BDP,
/// starting there. (netsim's tuned STrack uses 125 % and 100 %; on the
/// cosimulated fabric that helped some runs and hurt others, see the
/// README; DCTCP's largest window is the same and it starts there.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcNetwork {
    /// Line rate, Gb/s.
    pub link_gbps: u32,
    /// The network's round trip without queueing (`net_base_rtt`, also the
    /// target queueing delay), ns.
    pub base_rtt_ns: u32,
    /// MTU the window's packet-sized constants count, bytes.
    pub mtu: u32,
    /// Largest window, in percent of the bandwidth-delay product.
    pub max_cwnd_pct: u32,
    /// STrack's window at a QP's start, in percent of the bandwidth-delay
    /// product (DCTCP's starts at the largest).
    pub init_cwnd_pct: u32,
}

impl CcNetwork {
    /// The largest window, bytes: `max_cwnd_pct` of the bandwidth-delay product.
    pub fn max_window_bytes(&self) -> u64 {
        self.link_gbps as u64 * self.base_rtt_ns as u64 / 8 * self.max_cwnd_pct as u64 / 100
    }
}

impl Default for CcNetwork {
    fn default() -> Self {
        CcNetwork { link_gbps: 100, base_rtt_ns: 5_000, mtu: 4096, max_cwnd_pct: 100, init_cwnd_pct: 100 }
    }
}

/// Writes STrack's parameters for `net` (`REG_CC_PARAMS`).
fn write_cc_params(dev: &dyn Device, net: CcNetwork) -> Result<()> {
    use rnic_spec::regs::cc_params as f;
    let p = rnic_model::strack::cc::StrackParams::from_net(
        rnic_model::NetParams { link_gbps: net.link_gbps, base_rtt_ns: net.base_rtt_ns, mtu: net.mtu },
        net.max_cwnd_pct,
    );
    let mut w = [0u64; regs::NUM_STAGE];
    f::BASE_RTT.put(&mut w, p.net_base_rtt_ns as u64);
    f::TARGET.put(&mut w, p.target_qdelay_ns as u64);
    f::QHIGH.put(&mut w, p.target_qhigh_ns as u64);
    f::MIN_CWND.put(&mut w, p.min_cwnd as u64);
    f::MAX_CWND.put(&mut w, p.max_cwnd as u64);
    f::GAMMA.put(&mut w, p.gamma_q16 as u64);
    f::BETA.put(&mut w, p.beta_q8);
    f::ETA.put(&mut w, p.eta_q8);
    f::ALPHA_RTT.put(&mut w, p.alpha_rtt_q8);
    f::EWMA_SHIFT.put(&mut w, p.ewma_shift as u64);
    f::DCTCP_G.put(&mut w, rnic_model::dctcp::G_SHIFT as u64);
    f::DCTCP_MTU.put(&mut w, net.mtu as u64);
    let init = rnic_model::strack::cc::StrackParams::from_net(
        rnic_model::NetParams { link_gbps: net.link_gbps, base_rtt_ns: net.base_rtt_ns, mtu: net.mtu },
        net.init_cwnd_pct,
    );
    f::INIT_CWND.put(&mut w, init.max_cwnd as u64);
    // STrack's probe: three base RTTs without an ACK (cycles of the core clock).
    let probe_cycles = 3 * net.base_rtt_ns as u64 * (params::CLOCK_HZ / 1_000_000) / 1_000;
    dev.write_reg(regs::REG_PROBE, probe_cycles)?;
    for (i, v) in w.iter().enumerate() {
        dev.write_reg(regs::REG_STAGE + 8 * i as u32, *v)?;
    }
    Ok(dev.write_reg(regs::REG_CC_PARAMS, 0)?)
}

impl Context {
    /// Tunes STrack's congestion window (`QpAttr::strack_cc`) and DCTCP's
    /// (`QpAttr::dctcp_cc`: the same smallest and largest window, one
    /// `mtu` of increase per window, g = 1/16) for `net`, for every QP of
    /// the device; QPs started before keep their windows.
    /// The rates and delays must be positive and the window at least 1 %
    /// of the BDP.
    pub fn set_cc_network(&self, net: CcNetwork) -> Result<()> {
        for (what, v, min, max) in [
            ("link_gbps", net.link_gbps as u64, 1, 3_200),
            ("base_rtt_ns", net.base_rtt_ns as u64, 100, 10_000_000),
            ("mtu", net.mtu as u64, 256, 4096),
            ("max_cwnd_pct", net.max_cwnd_pct as u64, 1, 1_000),
            ("init_cwnd_pct", net.init_cwnd_pct as u64, 1, 1_000),
        ] {
            if !(min..=max).contains(&v) {
                return Err(Error::BadSize { what, value: v, min, max });
            }
        }
        write_cc_params(self.dev(), net)?;
        self.state().cc_net = net;
        Ok(())
    }

    /// Sets the NIC's retransmission timeout (`REG_RTO`) in device cycles,
    /// for every QP of the device (0 turns timeouts off: a lost tail packet
    /// then stalls its QP). At most `u32::MAX`.
    pub fn set_retransmit_timeout(&self, cycles: u64) -> Result<()> {
        if cycles > u32::MAX as u64 {
            return Err(Error::BadSize {
                what: "retransmit timeout cycles",
                value: cycles,
                min: 0,
                max: u32::MAX as u64,
            });
        }
        Ok(self.dev().write_reg(regs::REG_RTO, cycles)?)
    }

    /// How many of its on-chip selective-repeat windows
    /// (`params::SR_POOL`, all by default) the NIC's responder lends to QPs
    /// at once. A QP that finds none goes to software recovery: its
    /// out-of-order WRITE packets are placed and reported to this library,
    /// which keeps their bitmap. Fewer windows put more of the work on the
    /// host; 0 sends every QP's recovery there (for tests and experiments).
    pub fn set_sr_windows(&self, windows: u32) -> Result<()> {
        if windows > params::SR_POOL as u32 {
            return Err(Error::BadSize {
                what: "selective-repeat windows",
                value: windows as u64,
                min: 0,
                max: params::SR_POOL as u64,
            });
        }
        Ok(self.dev().write_reg(regs::REG_SR_POOL_HOLD, (params::SR_POOL as u32 - windows) as u64)?)
    }

    /// Runs the loss-recovery slow path without polling a CQ: reads the
    /// NIC's control queue and acts on it. An application that polls a CQ
    /// of this context does this already; a passive side (the target of
    /// RDMA WRITEs that polls nothing) calls it now and then so that its
    /// responder's software recovery moves on without waiting for the
    /// requester's retransmission timeout.
    pub fn progress(&self) -> Result<()> {
        let mut st = self.state();
        drain_ctrlq(self, &mut st)
    }

    /// The device backend.
    pub fn device(&self) -> &Arc<dyn Device> {
        &self.inner.dev
    }

    /// This NIC's MAC and IP.
    pub fn addr(&self) -> NetAddr {
        self.inner.addr
    }

    /// Device attributes (`ibv_query_device`).
    pub fn query_device(&self) -> DeviceAttr {
        DeviceAttr {
            version: self.inner.version,
            caps: self.inner.caps,
            max_qp: params::NUM_QPS,
            max_cq: params::NUM_CQS,
            max_mr: params::NUM_MRS,
        }
    }

    /// Host CPU time the loss-recovery slow path has spent in this context
    /// (deciding on CtrlQ entries and writing the rewinds and resends they
    /// cause; not the completion intake, and not the time register reads
    /// wait for the device), and the CtrlQ entries it handled.
    pub fn slow_path_time(&self) -> (std::time::Duration, u64) {
        let st = self.state();
        (st.slow_path_time, st.slow_path_entries)
    }

    /// The NIC's event counters, by name (`regs::counters`).
    pub fn counters(&self) -> Result<Vec<(&'static str, u64)>> {
        regs::counters::NAMES.iter().map(|&(n, offset)| Ok((n, self.inner.dev.read_reg(offset)?))).collect()
    }

    /// The counters as one `name=value` line, zeros omitted (for messages).
    pub fn counters_line(&self) -> String {
        match self.counters() {
            Ok(c) => {
                let v: Vec<String> = c.iter().filter(|(_, v)| *v != 0).map(|(n, v)| format!("{n}={v}")).collect();
                if v.is_empty() {
                    "all counters 0".into()
                } else {
                    v.join(" ")
                }
            }
            Err(e) => format!("counters unreadable: {e}"),
        }
    }

    /// Whether a post of one WR to an idle SQ (nothing outstanding) writes
    /// the WQE, and an inline payload of up to 64 bytes, through the NIC's
    /// push window with its doorbell, so the NIC starts it without a DMA
    /// read (on by default where `REG_CAPS` has [`regs::CAPS_PUSH`]).
    pub fn wqe_push(&self) -> bool {
        self.inner.push.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Turns the WQE push on or off (on only where the NIC has it): off,
    /// every WQE and payload is fetched by DMA, as with a NIC without it.
    pub fn set_wqe_push(&self, on: bool) {
        let on = on && self.inner.caps & regs::CAPS_PUSH != 0;
        self.inner.push.store(on, std::sync::atomic::Ordering::Relaxed);
    }

    /// Allocates a protection domain (`ibv_alloc_pd`) with the lowest free
    /// PD number: numbers of released PDs are used again.
    pub fn alloc_pd(&self) -> Result<Pd> {
        let mut st = self.state();
        let mut pdn = st.pd_hint;
        for &used in st.pds.range(pdn..) {
            if used != pdn {
                break;
            }
            pdn += 1;
        }
        if pdn > PD_MAX {
            return Err(Error::Exhausted { what: "PD", max: PD_MAX as usize });
        }
        st.pds.insert(pdn);
        st.pd_hint = pdn + 1;
        Ok(Pd { inner: Arc::new(PdInner { ctx: self.clone(), pdn }) })
    }

    /// Creates a completion queue of at least `depth` entries (`ibv_create_cq`).
    pub fn create_cq(&self, depth: u32) -> Result<Cq> {
        Cq::create(self, depth, None)
    }

    /// Creates a completion queue of at least `depth` entries whose events
    /// (after [`Cq::req_notify_cq`]) go to `channel` (`ibv_create_cq` with
    /// a `channel`).
    pub fn create_cq_with(&self, depth: u32, channel: Option<&CompChannel>) -> Result<Cq> {
        Cq::create(self, depth, channel)
    }

    /// Creates a completion channel (`ibv_create_comp_channel`): one of the
    /// NIC's MSI-X vectors, bound to an eventfd.
    pub fn create_comp_channel(&self) -> Result<CompChannel> {
        CompChannel::create(self)
    }

    /// Closes the context (`ibv_close_device`), consuming this handle.
    ///
    /// Fails with [`Error::Busy`] naming what is still alive (PDs, CQs, MRs,
    /// QPs, or other clones of this handle), and hands the context back in
    /// the [`DestroyError`]. A context that is merely dropped stays open
    /// until its last object is gone.
    pub fn close_device(self) -> std::result::Result<(), DestroyError<Context>> {
        let users = self.state().live_objects();
        // PDs and CQs hold the context; MRs and QPs reach it through their PD.
        let held = users.iter().filter(|u| matches!(u, Resource::Pd(_) | Resource::Cq(_))).count();
        let others = Arc::strong_count(&self.inner).saturating_sub(1 + held);
        match busy(Resource::Context, users, others) {
            Some(e) => Err(DestroyError::busy(self, e)),
            None => Ok(()),
        }
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, CtxState> {
        self.inner.st.lock().expect("another thread panicked while it held this context's state")
    }

    pub(crate) fn dev(&self) -> &dyn Device {
        &*self.inner.dev
    }

    pub(crate) fn same(&self, other: &Context) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Writes the first `n` staging words, then `value` to the commit register.
    pub(crate) fn stage_commit(&self, words: &[u64; NUM_STAGE], n: usize, commit_reg: u32, value: u64) -> Result<()> {
        for (i, w) in words.iter().take(n).enumerate() {
            self.dev().write_reg(regs::stage(i), *w)?;
        }
        self.dev().write_reg(commit_reg, value)?;
        Ok(())
    }
}

/// The state of one PD, shared by its handles and by the MRs and QPs in it.
pub(crate) struct PdInner {
    ctx: Context,
    pdn: u32,
}

impl Drop for PdInner {
    fn drop(&mut self) {
        // The last handle, MR and QP of the PD are gone: its number is free again.
        let mut st = self.ctx.state();
        st.pds.remove(&self.pdn);
        st.pd_hint = st.pd_hint.min(self.pdn);
    }
}

/// A protection domain (`ibv_pd`): MRs and QPs of one PD may be used together.
/// Cheap to clone; all clones are the same PD. Its MRs and QPs hold it, so
/// the PD lives until the last handle and the last of them are gone.
#[derive(Clone)]
pub struct Pd {
    inner: Arc<PdInner>,
}

impl Pd {
    /// The PD number written into QPC and MR entries.
    pub fn pdn(&self) -> u32 {
        self.inner.pdn
    }

    /// The context this PD belongs to.
    pub fn context(&self) -> &Context {
        &self.inner.ctx
    }

    /// Deallocates the PD (`ibv_dealloc_pd`), consuming this handle.
    ///
    /// Fails with [`Error::Busy`] naming the MRs and QPs still in the PD
    /// (or other clones of this handle), and hands the PD back in the
    /// [`DestroyError`]. On success the PD number is free for [`Context::alloc_pd`].
    pub fn dealloc_pd(self) -> std::result::Result<(), DestroyError<Pd>> {
        let pdn = self.pdn();
        let users: Vec<Resource> = {
            let st = self.context().state();
            let mrs = st.mrs.iter().filter_map(|m| match *m {
                MrSlot::Live { pdn: p, key } if p == pdn => Some(Resource::Mr(key)),
                _ => None,
            });
            mrs.chain(st.qps.iter().flatten().filter(|q| q.pdn == pdn).map(|q| Resource::Qp(q.qpn))).collect()
        };
        // Each MR and QP of the PD holds one reference.
        let others = Arc::strong_count(&self.inner).saturating_sub(1 + users.len());
        match busy(Resource::Pd(pdn), users, others) {
            Some(e) => Err(DestroyError::busy(self, e)),
            None => Ok(()),
        }
    }
}
