//! The perftest-style engine behind `rnic-perf`: two contexts (requester and
//! responder), Q connected RC QPs, D WRs in flight per QP, every byte verified.
//! Independent of the device backend: it needs only two [`Context`]s.
//!
//! Where the data goes: WRITE and SEND move it from the requester's source
//! region to the responder's destination region; READ moves it from the
//! responder's source region (`REMOTE_READ`) to the requester's destination
//! region (`LOCAL_WRITE`). Either way each message's pattern is written into
//! its source slot before it is posted and checked in its destination slot
//! at its completion.
//!
//! Variants: a latency run ([`BenchConfig::latency`]) keeps one message in
//! flight and times each from its doorbell to its completion; a timed run
//! ([`BenchConfig::duration_cycles`]) posts for a span of simulated time
//! instead of a message count; [`run_bidir`] runs one benchmark each way at
//! once.

use crate::pattern;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rnic::{
    AccessFlags, CompChannel, Context, Cq, HostBuf, Mr, Mtu, Pd, Qp, QpAttr, QpInitAttr, RecvWr, SendWr, Sge, WcOpcode,
    WcStatus, WorkCompletion, WrOpcode,
};
use rnic_spec::params;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use thiserror::Error;

/// Which benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(clippy::enum_variant_names)] // perftest's names: ib_write_bw, ib_send_bw, ib_read_bw
pub enum Mode {
    /// RDMA WRITE bandwidth (ib_write_bw).
    WriteBw,
    /// SEND bandwidth (ib_send_bw).
    SendBw,
    /// RDMA READ bandwidth (ib_read_bw): the requester reads the responder's memory.
    ReadBw,
}

impl Mode {
    /// Whether every message may get its own destination slot, checked
    /// again at the end (one-sided operations; SEND lands in receive buffers).
    fn one_sided(self) -> bool {
        matches!(self, Mode::WriteBw | Mode::ReadBw)
    }
}

/// Benchmark parameters.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    /// Benchmark.
    pub mode: Mode,
    /// Message size in bytes.
    pub size: u32,
    /// Messages in total, spread round-robin over the QPs (`rnic-perf -n`
    /// is per QP: it passes `n * qps`). Ignored when `duration_cycles` is set.
    pub iters: u64,
    /// Number of QPs.
    pub qps: u32,
    /// Path MTU.
    pub mtu: Mtu,
    /// WRs in flight per QP.
    pub tx_depth: u32,
    /// Pattern and PSN seed.
    pub seed: u64,
    /// Fail when nothing completes for this many device cycles.
    pub stall_cycles: u64,
    /// Destination memory (bytes) up to which every WRITE or READ gets its own slot.
    pub own_slot_budget: u64,
    /// Draw a progress bar on stderr.
    pub progress: bool,
    /// Post new messages for this many device cycles from the first post
    /// (instead of `iters` messages), then wait for those in flight.
    pub duration_cycles: Option<u64>,
    /// Latency run: one QP, one message in flight (`tx_depth` is taken as
    /// 1; a SEND waits for the previous one's receive completion too), each
    /// timed from its doorbell to the host seeing its requester completion
    /// ([`Report::latencies`]). The resolution is the device's wait step
    /// (`SimConfig::wait_cycles` in the cosimulation).
    pub latency: bool,
    /// Stop with [`BenchError::Cancelled`] once this is set (checked every
    /// round of posting and polling).
    pub cancel: Option<Arc<AtomicBool>>,
    /// STrack spraying of the requester QPs over this many entropies
    /// (`QpAttr::max_paths`; 0: off).
    pub max_paths: u16,
    /// STrack's congestion window on the requester QPs (`QpAttr::strack_cc`).
    pub strack_cc: bool,
    /// Oblivious (round-robin) spraying instead of STrack's adaptive one
    /// (`QpAttr::spray_oblivious`; with `max_paths`).
    pub spray_oblivious: bool,
    /// DCTCP's congestion window on the requester QPs instead of STrack's (`QpAttr::dctcp_cc`).
    pub dctcp_cc: bool,
    /// Messages of 1 to this many bytes are posted inline (`SendFlags::INLINE`;
    /// the requester QPs' `max_inline_data`); READs never are. 0: none.
    pub inline_size: u32,
    /// Posts to an idle SQ push their WQE through the BAR (`Context::set_wqe_push`).
    pub wqe_push: bool,
    /// Sleep on completion events (perftest's `-e`): the requester CQ is on
    /// a completion channel, and a round that finds nothing to do while
    /// messages are in flight arms it and waits in `get_cq_event` instead
    /// of stepping the device. Not with SEND bandwidth runs, whose
    /// responder reposts receives from the same loop.
    pub events: bool,
    /// SEND runs: each receive WR is a scatter list of this many entries
    /// (1..=`rnic::MAX_RECV_SGE`), the receive slot cut into equal
    /// consecutive parts (the last takes the rest), so every byte is
    /// checked where it would be with one entry.
    pub recv_sge: usize,
    /// WRITE and SEND runs: each send WR gathers its payload from this
    /// many entries (1..=`rnic::MAX_SEND_SGE`), the source slot cut into
    /// equal consecutive parts (the last takes the rest).
    pub send_sge: usize,
    /// Register the source and destination on application memory (a
    /// [`rnic::HostBuf`] each, `Pd::reg_mr_on`) instead of DMA memory the
    /// library allocates: the NIC reads and writes the bytes in place.
    pub app_mem: bool,
}

impl BenchConfig {
    /// Defaults for `mode`: 64 KiB x 1000 on 1 QP, MTU 4096, 128 in flight.
    pub fn new(mode: Mode) -> Self {
        BenchConfig {
            mode,
            size: 65536,
            iters: 1000,
            qps: 1,
            mtu: Mtu::Mtu4096,
            tx_depth: 128,
            seed: 0x5EED_2026,
            stall_cycles: 2_000_000,
            own_slot_budget: 256 << 20,
            progress: false,
            duration_cycles: None,
            latency: false,
            cancel: None,
            max_paths: 0,
            strack_cc: false,
            spray_oblivious: false,
            dctcp_cc: false,
            inline_size: 0,
            wqe_push: true,
            events: false,
            recv_sge: 1,
            send_sge: 1,
            app_mem: false,
        }
    }

    /// The requester QPs' `max_inline_data`: `inline_size`, except for READs (nothing to send inline).
    pub fn max_inline(&self) -> u32 {
        if self.mode == Mode::ReadBw {
            0
        } else {
            self.inline_size
        }
    }

    /// WRs in flight per QP: `tx_depth`, or 1 in a latency run.
    pub fn in_flight(&self) -> u32 {
        if self.latency {
            1
        } else {
            self.tx_depth
        }
    }

    /// The buffers a run allocates.
    fn layout(&self) -> Layout {
        let q = self.qps.max(1) as u64;
        let depth = self.in_flight() as u64;
        let size = self.size as u64;
        // Messages of the busiest QP, when known.
        let per_qp_max = if self.duration_cycles.is_some() { None } else { Some(self.iters.div_ceil(q)) };
        let src_slots = depth.min(per_qp_max.unwrap_or(u64::MAX)).max(1);
        // Receives are kept twice as deep as sends so replenishing never stalls
        // the sender (and never deeper than the messages a QP gets).
        let rx_depth = (depth * 2).min(1 << rnic::ring::MAX_WQ_LOG2).min(per_qp_max.unwrap_or(u64::MAX)).max(1) as u32;
        let own_slots =
            self.mode.one_sided() && per_qp_max.is_some() && size.saturating_mul(self.iters) <= self.own_slot_budget;
        let dst_len = match self.mode {
            Mode::WriteBw | Mode::ReadBw if own_slots => size * self.iters,
            Mode::WriteBw | Mode::ReadBw => size.saturating_mul(q * src_slots),
            Mode::SendBw => size.saturating_mul(q * rx_depth as u64),
        };
        let src_len = size.saturating_mul(q * src_slots);
        Layout { src_slots, rx_depth, own_slots, src_len: src_len.max(1), dst_len: dst_len.max(1) }
    }

    /// Bytes of host memory the run's data buffers take on the requester's
    /// and on the responder's side (rings and CQs not counted): the source
    /// is the requester's for WRITE and SEND, the responder's for READ.
    pub fn buffer_bytes(&self) -> (u64, u64) {
        let l = self.layout();
        match self.mode {
            Mode::WriteBw | Mode::SendBw => (l.src_len, l.dst_len),
            Mode::ReadBw => (l.dst_len, l.src_len),
        }
    }
}

/// Sizes of a run's buffers ([`BenchConfig::layout`]).
struct Layout {
    /// Source slots per QP.
    src_slots: u64,
    /// Receive slots per QP (send_bw).
    rx_depth: u32,
    /// Whether every WRITE or READ gets its own destination slot.
    own_slots: bool,
    src_len: u64,
    dst_len: u64,
}

/// What a run measured.
#[derive(Clone, Debug)]
pub struct Report {
    /// Message size.
    pub size: u32,
    /// Messages completed (over all QPs).
    pub iters: u64,
    /// Device cycle of the first post.
    pub start: u64,
    /// Device cycles from the first post to the last completion.
    pub cycles: u64,
    /// Device cycles from the completion of message `iters / 2` to the last
    /// completion: the second half of the run, past its start-up.
    pub second_half_cycles: u64,
    /// Wall time of the same interval (including host-side pattern work and verification).
    pub wall: Duration,
    /// Payload bytes compared against the expected pattern.
    pub verified_bytes: u64,
    /// Whether every WRITE or READ had its own destination slot (else slots were reused after verification).
    pub own_slots: bool,
    /// The requester QPs' loss-recovery counters, summed.
    pub recovery: rnic::RecoveryStats,
    /// Each requester QP's congestion window at the end, bytes (QPN, window), with
    /// `strack_cc` or `dctcp_cc`; empty without.
    pub cc_windows: Vec<(u32, u64)>,
    /// Device cycle at which the host saw each requester completion, in order.
    pub completions: Vec<u64>,
    /// Device cycle each of those messages was posted (its doorbell), in the
    /// same order: `completions[k] - posts[k]` is message k's latency.
    pub posts: Vec<u64>,
    /// Device cycle at which the host saw each message delivered, in order:
    /// the responder's receive completion for a SEND, the requester's
    /// completion for a WRITE (the data placed and acknowledged) or a READ
    /// (the data back). [`Report::peak_gbps`] counts these.
    pub deliveries: Vec<u64>,
    /// Completion events the run waited for ([`BenchConfig::events`]).
    pub events: u64,
}

/// [`Report::peak_gbps`] looks at stretches of at least this fraction of the run.
pub const PEAK_WINDOW_DIVISOR: u64 = 10;

impl Report {
    /// Simulated seconds at `params::CLOCK_HZ`.
    pub fn secs(&self) -> f64 {
        params::cycles_to_secs(self.cycles)
    }

    /// Goodput in Gb/s (payload bits per simulated second).
    pub fn gbps(&self) -> f64 {
        if self.cycles == 0 {
            return 0.0;
        }
        (self.size as f64 * self.iters as f64 * 8.0) / self.secs() / 1e9
    }

    /// Messages per simulated second, in millions.
    pub fn mpps(&self) -> f64 {
        if self.cycles == 0 {
            return 0.0;
        }
        self.iters as f64 / self.secs() / 1e6
    }

    /// Peak goodput in Gb/s: the best delivery rate ([`Report::deliveries`])
    /// over a stretch of at least a tenth of the run ([`PEAK_WINDOW_DIVISOR`];
    /// the run is first post to last completion, in simulated time). For
    /// each delivery, the shortest such stretch ending at it is taken,
    /// starting at an earlier delivery (or the first post); its rate is the
    /// payload delivered after its start and up to its end over its length.
    /// The deliveries seen at the stretch's start are not counted, so a burst
    /// (one poll finding several) is not counted at both ends. The whole run
    /// counts too, so the peak is never below the average.
    pub fn peak_gbps(&self) -> f64 {
        if self.cycles == 0 || self.deliveries.is_empty() {
            return 0.0;
        }
        let w = self.cycles.div_ceil(PEAK_WINDOW_DIVISOR).max(1);
        // Time of the k-th event: the first post, then each delivery.
        let t = |k: usize| if k == 0 { self.start } else { self.deliveries[k - 1] };
        let mut best = self.iters as f64 / self.cycles as f64;
        let mut i = 0;
        for j in 1..=self.deliveries.len() {
            while i + 1 < j && t(i + 1) + w <= t(j) {
                i += 1;
            }
            if t(i) + w <= t(j) {
                best = best.max((j - i) as f64 / (t(j) - t(i)) as f64);
            }
        }
        self.size as f64 * 8.0 * best * params::CLOCK_HZ as f64 / 1e9
    }

    /// Goodput of the second half of the run (see
    /// [`Report::second_half_cycles`]) in Gb/s.
    pub fn second_half_gbps(&self) -> f64 {
        let msgs = self.iters - self.iters / 2;
        if self.second_half_cycles == 0 {
            return 0.0;
        }
        (self.size as f64 * msgs as f64 * 8.0) / params::cycles_to_secs(self.second_half_cycles) / 1e9
    }

    /// How far the whole run's goodput is from its second half's, relative
    /// to the whole run's: start-up (first fetches, the pipeline filling)
    /// and tail losses weigh on short runs. Doubling the run changes its
    /// figure by about half this.
    pub fn steady_state_gap(&self) -> f64 {
        let whole = self.gbps();
        if whole == 0.0 {
            return 0.0;
        }
        (self.second_half_gbps() - whole).abs() / whole
    }

    /// Device cycles per wall-clock second.
    pub fn cycles_per_sec(&self) -> f64 {
        self.cycles as f64 / self.wall.as_secs_f64().max(1e-9)
    }

    /// The two directions of a bidirectional run ([`run_bidir`]) as one:
    /// their messages and bytes added up over the span from the first post of
    /// either to the last completion of either (perftest's `-b` reports the sum).
    pub fn combine(a: &Report, b: &Report) -> Report {
        let start = a.start.min(b.start);
        let end = (a.start + a.cycles).max(b.start + b.cycles);
        let mut pairs: Vec<(u64, u64)> = a
            .completions
            .iter()
            .zip(&a.posts)
            .chain(b.completions.iter().zip(&b.posts))
            .map(|(&c, &p)| (c, p))
            .collect();
        pairs.sort_unstable();
        let (completions, posts): (Vec<u64>, Vec<u64>) = pairs.into_iter().unzip();
        let mut deliveries: Vec<u64> = a.deliveries.iter().chain(&b.deliveries).copied().collect();
        deliveries.sort_unstable();
        let iters = a.iters + b.iters;
        let half_at = if iters / 2 >= 1 { completions[(iters / 2 - 1) as usize] } else { start };
        Report {
            size: a.size,
            iters,
            start,
            cycles: end - start,
            second_half_cycles: end - half_at,
            wall: a.wall.max(b.wall),
            verified_bytes: a.verified_bytes + b.verified_bytes,
            own_slots: a.own_slots && b.own_slots,
            recovery: [a.recovery, b.recovery].into_iter().sum(),
            cc_windows: a.cc_windows.iter().chain(&b.cc_windows).copied().collect(),
            completions,
            posts,
            deliveries,
            events: a.events + b.events,
        }
    }

    /// perftest's bandwidth table header.
    pub fn header() -> String {
        format!(
            " {:<11}{:<15}{:<19}{:<21}{}",
            "#bytes", "#iterations", "BW peak[Gb/sec]", "BW average[Gb/sec]", "MsgRate[Mpps]"
        )
    }

    /// perftest's bandwidth table row (Gb/s with 2 decimals, or 6 below 0.1
    /// Gb/s on average, as perftest does).
    pub fn row(&self) -> String {
        let p = if self.gbps() < 0.1 { 6 } else { 2 };
        format!(
            " {:<11}{:<15}{:<19.p$}{:<21.p$}{:.6}",
            self.size,
            self.iters,
            self.peak_gbps(),
            self.gbps(),
            self.mpps()
        )
    }

    /// Each message's device cycles from its doorbell to the host seeing
    /// its requester completion, in completion order (in a latency run, one
    /// message in flight, this is its latency).
    pub fn latencies(&self) -> Vec<u64> {
        self.completions.iter().zip(&self.posts).map(|(&c, &p)| c - p).collect()
    }

    /// Statistics of [`Report::latencies`] (None if there are none).
    pub fn latency_stats(&self) -> Option<LatencyStats> {
        LatencyStats::of(&self.latencies())
    }

    /// perftest's latency table header (times in simulated microseconds).
    pub fn lat_header() -> String {
        format!(
            " {:<11}{:<15}{:<15}{:<15}{:<17}{:<15}{:<16}{:<23}{}",
            "#bytes",
            "#iterations",
            "t_min[usec]",
            "t_max[usec]",
            "t_typical[usec]",
            "t_avg[usec]",
            "t_stdev[usec]",
            "99% percentile[usec]",
            "99.9% percentile[usec]"
        )
    }

    /// perftest's latency table row (see [`LatencyStats`]).
    pub fn lat_row(&self) -> String {
        let s = self.latency_stats().unwrap_or_default();
        let us = |c: f64| c * 1e6 / params::CLOCK_HZ as f64;
        format!(
            " {:<11}{:<15}{:<15.3}{:<15.3}{:<17.3}{:<15.3}{:<16.3}{:<23.3}{:.3}",
            self.size,
            self.iters,
            us(s.min as f64),
            us(s.max as f64),
            us(s.typical),
            us(s.avg),
            us(s.stdev),
            us(s.p99 as f64),
            us(s.p999 as f64)
        )
    }
}

/// Latency statistics, in device cycles.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LatencyStats {
    /// Shortest sample.
    pub min: u64,
    /// Longest sample.
    pub max: u64,
    /// The median (the mean of the two middle samples for an even count), perftest's t_typical.
    pub typical: f64,
    /// The mean.
    pub avg: f64,
    /// The population standard deviation.
    pub stdev: f64,
    /// 99th percentile, nearest rank: the smallest sample with at least 99 % of the samples at or below it.
    pub p99: u64,
    /// 99.9th percentile, nearest rank.
    pub p999: u64,
}

impl LatencyStats {
    /// The statistics of `samples` (None if empty).
    pub fn of(samples: &[u64]) -> Option<LatencyStats> {
        if samples.is_empty() {
            return None;
        }
        let mut v = samples.to_vec();
        v.sort_unstable();
        let n = v.len();
        let typical = if n % 2 == 1 { v[n / 2] as f64 } else { (v[n / 2 - 1] + v[n / 2]) as f64 / 2.0 };
        let avg = v.iter().map(|&x| x as f64).sum::<f64>() / n as f64;
        let var = v.iter().map(|&x| (x as f64 - avg).powi(2)).sum::<f64>() / n as f64;
        let rank = |per_mille: usize| v[(n * per_mille).div_ceil(1000).max(1) - 1];
        Some(LatencyStats {
            min: v[0],
            max: v[n - 1],
            typical,
            avg,
            stdev: var.sqrt(),
            p99: rank(990),
            p999: rank(999),
        })
    }
}

/// Why a run failed; every variant names where.
#[derive(Debug, Error)]
pub enum BenchError {
    /// The host library reported an error.
    #[error("{0}")]
    Lib(#[from] rnic::Error),
    /// The other process of a two-process run failed, or talking to it did.
    #[error("{0}")]
    Peer(String),
    /// Invalid parameters.
    #[error("bad parameters: {0}")]
    Config(String),
    /// A completion had an error status or unexpected fields.
    #[error("{side} QP {qpn} (index {qp_index}), iteration {iter}: {what}")]
    Completion {
        /// "requester" or "responder".
        side: &'static str,
        /// QP number.
        qpn: u32,
        /// QP index in the run.
        qp_index: u32,
        /// Global iteration number.
        iter: u64,
        /// What was wrong.
        what: String,
    },
    /// Data at the destination differs from what was sent.
    #[error("data mismatch: QP index {qp_index}, iteration {iter}, offset {offset} of {size}: got {got:#04x}, expected {want:#04x} (seed {seed:#x})")]
    Mismatch {
        /// QP index in the run.
        qp_index: u32,
        /// Global iteration number.
        iter: u64,
        /// Byte offset inside the message.
        offset: usize,
        /// Message size.
        size: u32,
        /// Byte found.
        got: u8,
        /// Byte expected.
        want: u8,
        /// Pattern seed.
        seed: u64,
    },
    /// [`BenchConfig::cancel`] was set.
    #[error("cancelled")]
    Cancelled,
    /// Nothing completed for too long.
    #[error("no progress for {cycles} cycles ({done} of {total} messages done); requester {req}; responder {resp}")]
    Stall {
        /// Cycles without progress.
        cycles: u64,
        /// Messages completed.
        done: u64,
        /// Messages in the run.
        total: u64,
        /// Requester CQ and QP state.
        req: String,
        /// Responder CQ and QP state.
        resp: String,
    },
}

/// Deterministic initial PSN of QP index `i` on side `side` (perftest uses random PSNs).
pub fn initial_psn(seed: u64, side: u32, i: u32) -> u32 {
    (pattern::make(seed, pattern::stream(side, i as u64 | 1 << 39), 4).iter().fold(0u32, |a, &b| a << 8 | b as u32))
        & 0xFF_FFFF
}

/// Brings two fresh QPs (on `a_ctx` and `b_ctx`) to RTS, connected to each other.
pub fn connect(a_ctx: &Context, a: &Qp, a_psn: u32, b_ctx: &Context, b: &Qp, b_psn: u32, mtu: Mtu) -> rnic::Result<()> {
    a.modify(&QpAttr::init())?;
    b.modify(&QpAttr::init())?;
    a.modify(&QpAttr::rtr(b_ctx.addr(), b.qp_num(), b_psn, mtu))?;
    b.modify(&QpAttr::rtr(a_ctx.addr(), a.qp_num(), a_psn, mtu))?;
    a.modify(&QpAttr::rts(a_psn))?;
    b.modify(&QpAttr::rts(b_psn))?;
    Ok(())
}

/// Per-QP bookkeeping of a run.
struct Lane {
    req: Qp,
    resp: Qp,
    /// Messages this QP carries (`u64::MAX` in a timed run until it stops posting).
    count: u64,
    posted: u64,
    completed: u64,
    recv_posted: u64,
    recv_completed: u64,
    /// Doorbell cycle of each message posted and not completed, in order.
    posted_at: VecDeque<u64>,
}

/// Everything a run allocates.
struct Setup {
    _pds: (Pd, Pd),
    req_cq: Cq,
    resp_cq: Cq,
    /// Where the messages' data is written before posting: the requester's
    /// (WRITE, SEND) or the responder's (READ).
    src: Mr,
    /// Where it lands: the responder's (WRITE, SEND) or the requester's (READ).
    dst: Mr,
    lanes: Vec<Lane>,
    /// The requester CQ's completion channel ([`BenchConfig::events`]).
    chan: Option<CompChannel>,
    /// Completion events taken.
    events: u64,
    /// Source slots per QP.
    src_slots: u64,
    /// Receive slots per QP (send_bw).
    rx_depth: u32,
    own_slots: bool,
}

fn setup(req: &Context, resp: &Context, c: &BenchConfig) -> Result<Setup, BenchError> {
    req.set_wqe_push(c.wqe_push);
    let q = c.qps as u64;
    let depth = c.in_flight();
    let Layout { src_slots, rx_depth, own_slots, src_len, dst_len } = c.layout();
    let pd_a = req.alloc_pd()?;
    let pd_b = resp.alloc_pd()?;
    let chan = if c.events { Some(req.create_comp_channel()?) } else { None };
    let req_cq = req.create_cq_with(c.qps * depth, chan.as_ref())?;
    let recv_wrs = if c.mode == Mode::SendBw { rx_depth } else { 0 };
    let resp_cq = resp.create_cq((c.qps * recv_wrs).max(1))?;
    // Source memory is read-only for the NIC, so a stray DMA write into it is a violation.
    let (src_len, dst_len) = (src_len as usize, dst_len as usize);
    let reg = |pd: &Pd, len: usize, access: AccessFlags| -> Result<Mr, BenchError> {
        Ok(match c.app_mem {
            true => pd.reg_mr_on(HostBuf::new(len).map_err(rnic::Error::from)?, access)?,
            false => pd.reg_mr(len, access)?,
        })
    };
    let (src, dst) = match c.mode {
        Mode::WriteBw => (
            reg(&pd_a, src_len, AccessFlags::empty())?,
            reg(&pd_b, dst_len, AccessFlags::REMOTE_WRITE | AccessFlags::LOCAL_WRITE)?,
        ),
        Mode::SendBw => (reg(&pd_a, src_len, AccessFlags::empty())?, reg(&pd_b, dst_len, AccessFlags::LOCAL_WRITE)?),
        Mode::ReadBw => {
            (reg(&pd_b, src_len, AccessFlags::REMOTE_READ)?, reg(&pd_a, dst_len, AccessFlags::LOCAL_WRITE)?)
        }
    };
    let mut lanes = Vec::new();
    for i in 0..c.qps {
        let a = pd_a
            .create_qp(QpInitAttr { max_inline_data: c.max_inline(), ..QpInitAttr::new(&req_cq, &req_cq, depth, 0) })?;
        let b = pd_b.create_qp(QpInitAttr::new(&resp_cq, &resp_cq, 0, recv_wrs))?;
        if c.max_paths != 0 || c.strack_cc || c.dctcp_cc {
            // Set in INIT; the connection's next transitions program them into the NIC.
            a.modify(&QpAttr {
                max_paths: Some(c.max_paths),
                strack_cc: Some(c.strack_cc),
                spray_oblivious: Some(c.spray_oblivious),
                dctcp_cc: Some(c.dctcp_cc),
                ..QpAttr::init()
            })?;
        }
        connect(req, &a, initial_psn(c.seed, 0, i), resp, &b, initial_psn(c.seed, 1, i), c.mtu)?;
        let count =
            if c.duration_cycles.is_some() { u64::MAX } else { c.iters / q + u64::from((i as u64) < c.iters % q) };
        lanes.push(Lane {
            req: a,
            resp: b,
            count,
            posted: 0,
            completed: 0,
            recv_posted: 0,
            recv_completed: 0,
            posted_at: VecDeque::new(),
        });
    }
    Ok(Setup { _pds: (pd_a, pd_b), req_cq, resp_cq, src, dst, lanes, chan, events: 0, src_slots, rx_depth, own_slots })
}

/// Refuses parameters the engine cannot run; `qps_per_nic` is the QPs each NIC will hold.
fn validate(c: &BenchConfig, qps_per_nic: u64) -> Result<(), BenchError> {
    if c.qps == 0 || c.size == 0 || c.tx_depth == 0 {
        return Err(BenchError::Config("size, qps and tx-depth must be at least 1".into()));
    }
    match c.duration_cycles {
        Some(0) => return Err(BenchError::Config("the duration must be at least 1 cycle".into())),
        None if c.iters == 0 => return Err(BenchError::Config("iters must be at least 1".into())),
        _ => {}
    }
    if c.size as u64 > params::MAX_MSG_LEN {
        return Err(BenchError::Config(format!("size at most {} bytes", params::MAX_MSG_LEN)));
    }
    if qps_per_nic > params::NUM_QPS as u64 - 2 {
        return Err(BenchError::Config(format!("at most {} QPs per NIC", params::NUM_QPS - 2)));
    }
    if c.tx_depth > 1 << rnic::ring::MAX_WQ_LOG2 {
        return Err(BenchError::Config(format!("tx-depth at most {}", 1 << rnic::ring::MAX_WQ_LOG2)));
    }
    if c.latency && c.qps != 1 {
        return Err(BenchError::Config("a latency run has one QP".into()));
    }
    if c.events && c.mode == Mode::SendBw && !c.latency {
        return Err(BenchError::Config(
            "events (-e) with send_bw: the responder's receives are reposted by the same loop, which would sleep"
                .into(),
        ));
    }
    Ok(())
}

/// Runs one benchmark between `req` (NIC0) and `resp` (NIC1).
pub fn run(req: &Context, resp: &Context, c: &BenchConfig) -> Result<Report, BenchError> {
    validate(c, c.qps as u64)?;
    let s = setup(req, resp, c)?;
    let mut r = Runner::new(req, c, s);
    r.start()?;
    while !r.finished() {
        if !r.step()? {
            r.idle()?;
        }
    }
    r.finish()
}

/// Seed of the second direction of [`run_bidir`] (XORed into `seed`), so
/// the two directions carry different patterns and PSNs.
pub const BIDIR_SEED: u64 = 0xB1D1_0000_0000;

/// Runs the benchmark both ways at once: `a` to `b` with `c`, and `b` to
/// `a` with `c` under `seed ^ BIDIR_SEED`, each with its own QPs, half the
/// destination slot budget each, every byte verified. Returns the reports of
/// the two directions (a to b first); [`Report::combine`] adds them up.
pub fn run_bidir(a: &Context, b: &Context, c: &BenchConfig) -> Result<(Report, Report), BenchError> {
    if c.latency {
        return Err(BenchError::Config("a latency run is one-way".into()));
    }
    if c.events {
        return Err(BenchError::Config("events (-e) in a bidirectional run: one loop drives both directions".into()));
    }
    validate(c, 2 * c.qps as u64)?;
    let mut c_ab = c.clone();
    c_ab.own_slot_budget /= 2;
    let mut c_ba = c_ab.clone();
    c_ba.seed ^= BIDIR_SEED;
    c_ba.progress = false;
    let s_ab = setup(a, b, &c_ab)?;
    let s_ba = setup(b, a, &c_ba)?;
    let mut ab = Runner::new(a, &c_ab, s_ab);
    let mut ba = Runner::new(b, &c_ba, s_ba);
    ab.start()?;
    ba.start()?;
    while !(ab.finished() && ba.finished()) {
        let mut progress = false;
        for r in [&mut ab, &mut ba] {
            if !r.finished() {
                progress |= r.step()?;
            }
        }
        if !progress {
            // Either device steps the whole cluster.
            ab.dev.wait().map_err(rnic::Error::from)?;
        }
    }
    Ok((ab.finish()?, ba.finish()?))
}

struct Runner<'a> {
    c: &'a BenchConfig,
    dev: &'a dyn rnic::Device,
    s: Setup,
    /// Cycle of the first post.
    start: u64,
    /// Timed run: the cycle from which nothing new is posted.
    deadline: Option<u64>,
    done: u64,
    recv_done: u64,
    last_progress: u64,
    last_completion: u64,
    completions: Vec<u64>,
    posts: Vec<u64>,
    deliveries: Vec<u64>,
    verified: u64,
    scratch: Vec<u8>,
    /// Completion buffer, reused: polling does not allocate.
    wcs: Vec<WorkCompletion>,
    wall: Instant,
    bar: ProgressBar,
}

impl<'a> Runner<'a> {
    fn new(req: &'a Context, c: &'a BenchConfig, s: Setup) -> Self {
        let bar = if c.progress {
            let (len, unit) = match c.duration_cycles {
                Some(d) => (d, "cycles"),
                None => (c.iters, "msgs"),
            };
            let b = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
            b.set_style(
                ProgressStyle::with_template(&format!(
                    "{{spinner}} [{{elapsed_precise}}] {{bar:40}} {{pos}}/{{len}} {unit} {{msg}}"
                ))
                .expect("valid template"),
            );
            b
        } else {
            ProgressBar::hidden()
        };
        Runner {
            c,
            dev: &**req.device(),
            s,
            start: 0,
            deadline: None,
            done: 0,
            recv_done: 0,
            last_progress: 0,
            last_completion: 0,
            completions: Vec::new(),
            posts: Vec::new(),
            deliveries: Vec::new(),
            verified: 0,
            scratch: vec![0u8; c.size as usize],
            wcs: vec![WorkCompletion::default(); 256],
            wall: Instant::now(),
            bar,
        }
    }

    fn q(&self) -> u64 {
        self.c.qps as u64
    }

    fn size(&self) -> u64 {
        self.c.size as u64
    }

    fn send(&self) -> bool {
        self.c.mode == Mode::SendBw
    }

    fn src_off(&self, qi: u32, k: u64) -> u64 {
        (qi as u64 * self.s.src_slots + k % self.s.src_slots) * self.size()
    }

    fn dst_off(&self, qi: u32, k: u64, g: u64) -> u64 {
        if self.s.own_slots {
            g * self.size()
        } else {
            (qi as u64 * self.s.src_slots + k % self.s.src_slots) * self.size()
        }
    }

    fn recv_off(&self, qi: u32, slot: u64) -> u64 {
        (qi as u64 * self.s.rx_depth as u64 + slot) * self.size()
    }

    /// Pre-posts the receives and starts the clock.
    fn start(&mut self) -> Result<(), BenchError> {
        if self.send() {
            for qi in 0..self.c.qps {
                self.replenish(qi)?;
            }
        }
        self.start = self.dev.now_cycles();
        self.deadline = self.c.duration_cycles.map(|d| self.start + d);
        self.wall = Instant::now();
        self.last_progress = self.start;
        self.last_completion = self.start;
        Ok(())
    }

    /// A round found nothing to do: the device runs on. With events and
    /// messages in flight, the requester CQ is armed, polled once more (a
    /// completion before the arm has no event) and the thread waits for
    /// its event.
    fn idle(&mut self) -> Result<(), BenchError> {
        let in_flight = self.s.lanes.iter().any(|l| l.posted > l.completed);
        let Some(ch) = self.s.chan.clone().filter(|_| in_flight) else {
            return Ok(self.dev.wait().map_err(rnic::Error::from)?);
        };
        self.s.req_cq.req_notify_cq(false)?;
        if self.step()? {
            return Ok(());
        }
        let cq = ch.get_cq_event(self.c.stall_cycles)?;
        cq.ack_cq_events(1)?;
        self.s.events += 1;
        Ok(())
    }

    /// Every message posted is complete (and received), and no more will be posted.
    fn finished(&self) -> bool {
        let send = self.send();
        self.s.lanes.iter().all(|l| l.completed == l.count && (!send || l.recv_completed == l.count))
    }

    /// Messages the run will have: planned, or posted so far in a timed run.
    fn total(&self) -> u64 {
        match self.c.duration_cycles {
            Some(_) => self.s.lanes.iter().map(|l| l.posted).sum(),
            None => self.c.iters,
        }
    }

    /// One round without stepping the device: stop posting at the deadline,
    /// post, poll both CQs. Whether anything happened; a stall is an error.
    fn step(&mut self) -> Result<bool, BenchError> {
        if self.c.cancel.as_ref().is_some_and(|f| f.load(Ordering::Relaxed)) {
            return Err(BenchError::Cancelled);
        }
        let send = self.send();
        if self.deadline.is_some_and(|d| self.dev.now_cycles() >= d) {
            self.deadline = None;
            for l in &mut self.s.lanes {
                l.count = l.posted;
            }
        }
        let mut progress = false;
        for qi in 0..self.c.qps {
            progress |= self.post(qi)?;
        }
        let mut wcs = std::mem::take(&mut self.wcs);
        let result = (|| {
            let n = self.s.req_cq.poll_cq(&mut wcs)?;
            progress |= n > 0;
            for wc in &wcs[..n] {
                self.on_send_completion(wc)?;
            }
            // The responder's CQ is polled in every test: that also runs its host's slow path
            // (software recovery); only SEND tests have completions there.
            {
                let n = self.s.resp_cq.poll_cq(&mut wcs)?;
                progress |= n > 0;
                for wc in &wcs[..n] {
                    self.on_recv_completion(wc)?;
                }
            }
            Ok::<_, BenchError>(())
        })();
        self.wcs = wcs;
        result?;
        let now = self.dev.now_cycles();
        if progress {
            self.last_progress = now;
            self.bar.set_position(match self.c.duration_cycles {
                Some(_) => now - self.start,
                None if send => self.recv_done.min(self.done),
                None => self.done,
            });
        } else if now - self.last_progress > self.c.stall_cycles {
            return Err(BenchError::Stall {
                cycles: now - self.last_progress,
                done: self.done,
                total: self.total(),
                req: self.s.req_cq.describe(),
                resp: self.s.resp_cq.describe(),
            });
        }
        Ok(progress)
    }

    fn finish(mut self) -> Result<Report, BenchError> {
        let cycles = self.last_completion - self.start;
        let half = self.done / 2;
        let half_at = if half >= 1 { self.completions[half as usize - 1] } else { self.start };
        let second_half_cycles = self.last_completion - half_at;
        let wall = self.wall.elapsed();
        self.bar.finish_and_clear();
        if self.s.own_slots {
            self.final_sweep()?;
        }
        Ok(Report {
            size: self.c.size,
            iters: self.done,
            start: self.start,
            cycles,
            second_half_cycles,
            wall,
            verified_bytes: self.verified,
            own_slots: self.s.own_slots,
            recovery: self.s.lanes.iter().flat_map(|l| [l.req.recovery_stats(), l.resp.recovery_stats()]).sum(),
            cc_windows: if self.c.strack_cc || self.c.dctcp_cc {
                self.s
                    .lanes
                    .iter()
                    .map(|l| Ok((l.req.qp_num(), l.req.cc_window_bytes()?)))
                    .collect::<Result<_, rnic::Error>>()?
            } else {
                Vec::new()
            },
            completions: std::mem::take(&mut self.completions),
            posts: std::mem::take(&mut self.posts),
            deliveries: std::mem::take(&mut self.deliveries),
            events: self.s.events,
        })
    }

    /// Posts as many WRs as QP `qi` may have in flight, as one batch.
    fn post(&mut self, qi: u32) -> Result<bool, BenchError> {
        let l = &self.s.lanes[qi as usize];
        let mut n = (self.c.in_flight() as u64 - (l.posted - l.completed)).min(l.count - l.posted);
        if self.send() {
            // Never send more than the responder has receives posted for.
            n = n.min(l.recv_posted - l.posted);
            if self.c.latency {
                // One message in flight: the previous SEND is received too.
                n = n.min(l.recv_completed + 1 - l.posted);
            }
        }
        if n == 0 {
            return Ok(false);
        }
        let first = l.posted;
        let mut wrs = Vec::with_capacity(n as usize);
        for k in first..first + n {
            let g = k * self.q() + qi as u64;
            let off = self.src_off(qi, k);
            pattern::fill(self.c.seed, pattern::stream(qi, g), &mut self.scratch);
            self.s.src.write(off, &self.scratch)?;
            let mut send_flags = rnic::SendFlags::SIGNALED;
            if (1..=self.c.max_inline()).contains(&self.c.size) {
                send_flags |= rnic::SendFlags::INLINE;
            }
            let wr = match self.c.mode {
                Mode::WriteBw => SendWr {
                    send_flags,
                    wr_id: g,
                    opcode: WrOpcode::RdmaWrite {
                        remote_addr: self.s.dst.addr() + self.dst_off(qi, k, g),
                        rkey: self.s.dst.rkey(),
                    },
                    sg_list: gather(&self.s.src, off, self.c.size, self.c.send_sge),
                },
                Mode::SendBw => SendWr {
                    send_flags,
                    wr_id: g,
                    opcode: WrOpcode::Send,
                    sg_list: gather(&self.s.src, off, self.c.size, self.c.send_sge),
                },
                Mode::ReadBw => SendWr {
                    send_flags: rnic::SendFlags::SIGNALED,
                    wr_id: g,
                    opcode: WrOpcode::RdmaRead { remote_addr: self.s.src.addr() + off, rkey: self.s.src.rkey() },
                    sg_list: self.s.dst.sge(self.dst_off(qi, k, g), self.c.size).into(),
                },
            };
            wrs.push(wr);
        }
        // The doorbell: the library writes it in this call, at this cycle.
        let now = self.dev.now_cycles();
        let l = &mut self.s.lanes[qi as usize];
        l.req.post_send_batch(&wrs)?;
        l.posted += n;
        l.posted_at.extend(std::iter::repeat_n(now, n as usize));
        Ok(true)
    }

    /// Compares message `g` of QP index `qi` at `off` in the destination MR with its pattern.
    fn check(&mut self, qi: u32, g: u64, off: u64) -> Result<(), BenchError> {
        self.s.dst.read(off, &mut self.scratch)?;
        if let Some(o) = pattern::first_mismatch(self.c.seed, pattern::stream(qi, g), &self.scratch) {
            let want = pattern::make(self.c.seed, pattern::stream(qi, g), o + 1)[o];
            return Err(BenchError::Mismatch {
                qp_index: qi,
                iter: g,
                offset: o,
                size: self.c.size,
                got: self.scratch[o],
                want,
                seed: self.c.seed,
            });
        }
        self.verified += self.size();
        Ok(())
    }

    fn bad(&self, side: &'static str, wc: &WorkCompletion, g: u64, what: String) -> BenchError {
        BenchError::Completion { side, qpn: wc.qp_num, qp_index: (g % self.q()) as u32, iter: g, what }
    }

    fn on_send_completion(&mut self, wc: &WorkCompletion) -> Result<(), BenchError> {
        let g = wc.wr_id;
        let qi = (g % self.q()) as u32;
        let k = g / self.q();
        let want_op = match self.c.mode {
            Mode::WriteBw => WcOpcode::RdmaWrite,
            Mode::SendBw => WcOpcode::Send,
            Mode::ReadBw => WcOpcode::RdmaRead,
        };
        if wc.status != WcStatus::Success {
            return Err(self.bad(
                "requester",
                wc,
                g,
                format!("completion status {:?} (seed {:#x})", wc.status, self.c.seed),
            ));
        }
        let l = &self.s.lanes[qi as usize];
        if wc.qp_num != l.req.qp_num() || k != l.completed || wc.opcode != want_op || wc.byte_len != self.c.size {
            let what = format!(
                "unexpected completion {:?} (expected QP {}, message {} of that QP, {:?}, {} bytes)",
                wc,
                l.req.qp_num(),
                l.completed,
                want_op,
                self.c.size
            );
            return Err(self.bad("requester", wc, g, what));
        }
        let now = self.dev.now_cycles();
        let l = &mut self.s.lanes[qi as usize];
        l.completed += 1;
        let posted_at = l.posted_at.pop_front().unwrap_or(now);
        self.done += 1;
        self.completions.push(now);
        self.posts.push(posted_at);
        if !self.send() {
            self.deliveries.push(now);
        }
        self.last_completion = self.last_completion.max(now);
        if self.c.mode.one_sided() {
            // A WRITE's or READ's completion means it is placed: check it before its slot is reused.
            let off = self.dst_off(qi, k, g);
            self.check(qi, g, off)?;
        }
        Ok(())
    }

    fn on_recv_completion(&mut self, wc: &WorkCompletion) -> Result<(), BenchError> {
        let qi = (wc.wr_id >> 32) as u32;
        let slot = wc.wr_id & 0xFFFF_FFFF;
        let l = &self.s.lanes[qi as usize];
        let k = l.recv_completed;
        let g = k * self.q() + qi as u64;
        if wc.status != WcStatus::Success {
            return Err(self.bad(
                "responder",
                wc,
                g,
                format!("receive completion status {:?} (seed {:#x})", wc.status, self.c.seed),
            ));
        }
        if wc.qp_num != l.resp.qp_num()
            || wc.opcode != WcOpcode::Recv
            || wc.byte_len != self.c.size
            || slot != k % self.s.rx_depth as u64
        {
            let what = format!(
                "unexpected receive completion {:?} (expected QP {}, RECV of {} bytes into slot {})",
                wc,
                l.resp.qp_num(),
                self.c.size,
                k % self.s.rx_depth as u64
            );
            return Err(self.bad("responder", wc, g, what));
        }
        let off = self.recv_off(qi, slot);
        self.check(qi, g, off)?;
        self.s.lanes[qi as usize].recv_completed += 1;
        self.recv_done += 1;
        let now = self.dev.now_cycles();
        self.deliveries.push(now);
        self.last_completion = self.last_completion.max(now);
        self.replenish(qi)
    }

    /// Tops QP `qi`'s receive queue up to `rx_depth` (never past the messages it will get).
    fn replenish(&mut self, qi: u32) -> Result<(), BenchError> {
        let depth = self.s.rx_depth as u64;
        let l = &self.s.lanes[qi as usize];
        let n = (depth - (l.recv_posted - l.recv_completed)).min(l.count.saturating_sub(l.recv_posted));
        if n == 0 {
            return Ok(());
        }
        let first = l.recv_posted;
        let (size, k) = (self.c.size, self.c.recv_sge.max(1) as u32);
        let part = size.div_ceil(k);
        let sges: Vec<(u64, Vec<Sge>)> = (first..first + n)
            .map(|j| {
                let slot = j % depth;
                let base = self.recv_off(qi, slot);
                let list = (0..k)
                    .map(|e| {
                        let start = (e * part).min(size);
                        let len = if e + 1 == k { size - start } else { part.min(size - start) };
                        self.s.dst.sge(base + start as u64, len)
                    })
                    .collect();
                ((qi as u64) << 32 | slot, list)
            })
            .collect();
        let wrs: Vec<RecvWr> = sges.iter().map(|(wr_id, sg)| RecvWr { wr_id: *wr_id, sg_list: sg }).collect();
        self.s.lanes[qi as usize].resp.post_recv_batch(&wrs)?;
        self.s.lanes[qi as usize].recv_posted += n;
        Ok(())
    }

    /// Every WRITE or READ had its own slot: check them all again, so data
    /// that landed in another message's slot after that one was checked is caught.
    fn final_sweep(&mut self) -> Result<(), BenchError> {
        let verified = self.verified;
        for g in 0..self.done {
            let qi = (g % self.q()) as u32;
            self.check(qi, g, g * self.size())?;
        }
        self.verified = verified;
        Ok(())
    }
}

/// The gather list of a WRITE or SEND of `size` bytes from `off` in `src`: `parts` equal
/// consecutive entries (the last takes the rest), at most `rnic::MAX_SEND_SGE`.
fn gather(src: &Mr, off: u64, size: u32, parts: usize) -> rnic::SgList<'_> {
    let k = parts.clamp(1, rnic::MAX_SEND_SGE) as u32;
    let part = size / k;
    let sges: Vec<rnic::Sge> = (0..k)
        .map(|i| {
            let len = if i + 1 == k { size - part * (k - 1) } else { part };
            src.sge(off + (part * i) as u64, len)
        })
        .collect();
    rnic::SgList::new(&sges).expect("at most MAX_SEND_SGE entries")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(cycles: u64, second_half_cycles: u64) -> Report {
        Report {
            size: 4096,
            iters: 1000,
            start: 0,
            cycles,
            second_half_cycles,
            wall: Duration::from_secs(1),
            verified_bytes: 0,
            own_slots: true,
            recovery: Default::default(),
            cc_windows: Vec::new(),
            completions: Vec::new(),
            posts: Vec::new(),
            deliveries: Vec::new(),
            events: 0,
        }
    }

    #[test]
    fn steady_state_gap_compares_the_second_half_with_the_whole_run() {
        // Half the messages in half the cycles: steady.
        let r = report(100_000, 50_000);
        assert!(r.steady_state_gap() < 1e-12);
        assert!((r.second_half_gbps() - r.gbps()).abs() < 1e-9);
        // A slow start: the second half runs 25 % faster than the whole.
        let r = report(100_000, 40_000);
        assert!((r.steady_state_gap() - 0.25).abs() < 1e-9, "{}", r.steady_state_gap());
        assert_eq!(report(0, 0).steady_state_gap(), 0.0);
    }

    /// A run of 1000-byte messages from cycle 0 with these deliveries (also its completions, posted at 0).
    fn delivered(at: &[u64]) -> Report {
        let last = *at.iter().max().unwrap();
        Report {
            size: 1000,
            iters: at.len() as u64,
            cycles: last,
            second_half_cycles: last,
            completions: at.to_vec(),
            posts: vec![0; at.len()],
            deliveries: at.to_vec(),
            ..report(last, last)
        }
    }

    /// Gb/s of `msgs` 1000-byte messages per `cycles`.
    fn gbps(msgs: f64, cycles: f64) -> f64 {
        1000.0 * 8.0 * msgs / cycles * params::CLOCK_HZ as f64 / 1e9
    }

    #[test]
    fn peak_is_the_best_tenth_of_the_run() {
        // Steady: the peak is the average.
        let steady: Vec<u64> = (1..=10).map(|k| 100 * k).collect();
        let r = delivered(&steady);
        assert!((r.peak_gbps() - r.gbps()).abs() < 1e-9, "{} {}", r.peak_gbps(), r.gbps());
        // Slow first half, fast second: 3 messages in the last 60 cycles (a tenth of 600).
        let mut v: Vec<u64> = (1..=5).map(|k| 100 * k).collect();
        v.extend((1..=5).map(|k| 500 + 20 * k));
        let r = delivered(&v);
        assert!((r.peak_gbps() - gbps(3.0, 60.0)).abs() < 1e-9, "{}", r.peak_gbps());
        assert!(r.peak_gbps() > 2.9 * r.gbps());
        // Bursts (one poll finds four): a burst opening a stretch is not counted.
        let r = delivered(&[400, 400, 400, 400, 800, 800, 800, 800]);
        assert!((r.peak_gbps() - r.gbps()).abs() < 1e-9, "{} {}", r.peak_gbps(), r.gbps());
        // Never below the average, even when no stretch but the whole run qualifies.
        let r = delivered(&[1000]);
        assert!((r.peak_gbps() - r.gbps()).abs() < 1e-9);
        assert_eq!(report(0, 0).peak_gbps(), 0.0);
    }

    #[test]
    fn two_directions_add_up() {
        let a = Report { start: 10, ..delivered(&[100, 200, 300, 400]) };
        let b = Report { start: 0, ..delivered(&[150, 250, 350, 450, 550, 650]) };
        let c = Report::combine(&a, &b);
        assert_eq!((c.iters, c.start, c.cycles), (10, 0, 650));
        assert_eq!(c.completions, vec![100, 150, 200, 250, 300, 350, 400, 450, 550, 650]);
        assert_eq!(c.deliveries, c.completions);
        // The 5th completion (at 300) opens the second half.
        assert_eq!(c.second_half_cycles, 650 - 300);
        assert!((c.gbps() - gbps(10.0, 650.0)).abs() < 1e-9);
    }

    #[test]
    fn latency_statistics() {
        let s = LatencyStats::of(&[5, 1, 3, 2, 4]).unwrap();
        assert_eq!((s.min, s.max, s.typical, s.avg, s.p99, s.p999), (1, 5, 3.0, 3.0, 5, 5));
        assert!((s.stdev - 2f64.sqrt()).abs() < 1e-12);
        assert_eq!(LatencyStats::of(&[4, 1, 3, 2]).unwrap().typical, 2.5);
        let v: Vec<u64> = (1..=1000).rev().collect();
        let s = LatencyStats::of(&v).unwrap();
        assert_eq!((s.min, s.max, s.p99, s.p999), (1, 1000, 990, 999));
        assert_eq!(LatencyStats::of(&[7]).unwrap().p999, 7);
        assert_eq!(LatencyStats::of(&[]), None);
        // Latencies are completion minus post, per message.
        let r = Report { posts: vec![0, 100, 200], ..delivered(&[40, 150, 230]) };
        assert_eq!(r.latencies(), vec![40, 50, 30]);
        assert_eq!(r.latency_stats().unwrap().typical, 40.0);
    }

    #[test]
    fn tables_have_perftest_columns() {
        let h = Report::header();
        let cols = ["#bytes", "#iterations", "BW peak[Gb/sec]", "BW average[Gb/sec]", "MsgRate[Mpps]"];
        assert!(cols.iter().all(|c| h.contains(c)), "{h}");
        assert_eq!(delivered(&[100, 200]).row().split_whitespace().count(), 5);
        let h = Report::lat_header();
        for c in ["t_min[usec]", "t_max[usec]", "t_typical[usec]", "t_avg[usec]", "t_stdev[usec]"] {
            assert!(h.contains(c), "{h}");
        }
        assert!(h.contains("99% percentile[usec]") && h.contains("99.9% percentile[usec]"), "{h}");
        let row = delivered(&[250, 500]).lat_row();
        let f: Vec<&str> = row.split_whitespace().collect();
        // 250 cycles at 250 MHz: 1 us.
        assert_eq!(f, ["1000", "2", "1.000", "2.000", "1.500", "1.500", "0.500", "2.000", "2.000"], "{row}");
    }

    #[test]
    fn layout_fits_the_run() {
        let mut c = BenchConfig::new(Mode::WriteBw);
        c.size = 4096;
        c.iters = 10;
        assert_eq!(c.buffer_bytes(), (10 * 4096, 10 * 4096), "10 messages: 10 source slots, 10 own destination slots");
        c.iters = 1_000_000;
        assert_eq!(c.buffer_bytes(), (128 * 4096, 128 * 4096), "past the budget: slots reused");
        c.duration_cycles = Some(1000);
        assert_eq!(c.buffer_bytes(), (128 * 4096, 128 * 4096), "timed: slots reused");
        let mut c = BenchConfig::new(Mode::SendBw);
        c.size = 1 << 20;
        c.iters = 3;
        assert_eq!(c.buffer_bytes(), (3 << 20, 3 << 20), "receives no deeper than the messages");
        let mut c = BenchConfig::new(Mode::ReadBw);
        c.latency = true;
        c.iters = 1000;
        c.size = 1 << 20;
        assert_eq!(c.in_flight(), 1);
        assert_eq!(c.buffer_bytes().1, 1 << 20, "one READ in flight: one source slot at the responder");
    }
}
