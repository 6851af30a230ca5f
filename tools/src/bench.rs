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

use crate::pattern;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rnic::{
    AccessFlags, Context, Cq, Mr, Mtu, Pd, Qp, QpAttr, QpInitAttr, RecvWr, SendWr, WcOpcode, WcStatus, WorkCompletion,
    WrOpcode,
};
use rnic_spec::params;
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
    /// Messages in total (spread round-robin over the QPs).
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
        }
    }
}

/// What a run measured.
#[derive(Clone, Debug)]
pub struct Report {
    /// Message size.
    pub size: u32,
    /// Messages completed.
    pub iters: u64,
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
}

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

    /// perftest's table header.
    pub fn header() -> String {
        format!(" {:<11}{:<15}{:<21}{}", "#bytes", "#iterations", "BW average[Gb/sec]", "MsgRate[Mpps]")
    }

    /// perftest's table row.
    pub fn row(&self) -> String {
        format!(" {:<11}{:<15}{:<21.2}{:.6}", self.size, self.iters, self.gbps(), self.mpps())
    }
}

/// Why a run failed; every variant names where.
#[derive(Debug, Error)]
pub enum BenchError {
    /// The host library reported an error.
    #[error("{0}")]
    Lib(#[from] rnic::Error),
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
    /// Messages this QP carries.
    count: u64,
    posted: u64,
    completed: u64,
    recv_posted: u64,
    recv_completed: u64,
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
    /// Source slots per QP.
    src_slots: u64,
    /// Receive slots per QP (send_bw).
    rx_depth: u32,
    own_slots: bool,
}

fn setup(req: &Context, resp: &Context, c: &BenchConfig) -> Result<Setup, BenchError> {
    let q = c.qps as u64;
    let per_qp_max = c.iters.div_ceil(q);
    let src_slots = (c.tx_depth as u64).min(per_qp_max).max(1);
    let size = c.size as u64;
    // Receives are kept twice as deep as sends so replenishing never stalls the sender.
    let rx_depth = (c.tx_depth * 2).min(1 << rnic::ring::MAX_WQ_LOG2);
    let own_slots = c.mode.one_sided() && size * c.iters <= c.own_slot_budget;
    let dst_len = match c.mode {
        Mode::WriteBw | Mode::ReadBw if own_slots => size * c.iters,
        Mode::WriteBw | Mode::ReadBw => size * q * src_slots,
        Mode::SendBw => size * q * rx_depth as u64,
    };
    let pd_a = req.alloc_pd()?;
    let pd_b = resp.alloc_pd()?;
    let req_cq = req.create_cq(c.qps * c.tx_depth)?;
    let recv_wrs = if c.mode == Mode::SendBw { rx_depth } else { 0 };
    let resp_cq = resp.create_cq((c.qps * recv_wrs).max(1))?;
    // Source memory is read-only for the NIC, so a stray DMA write into it is a violation.
    let src_len = (size * q * src_slots).max(1) as usize;
    let (src, dst) = match c.mode {
        Mode::WriteBw => (
            pd_a.reg_mr(src_len, AccessFlags::empty())?,
            pd_b.reg_mr(dst_len.max(1) as usize, AccessFlags::REMOTE_WRITE | AccessFlags::LOCAL_WRITE)?,
        ),
        Mode::SendBw => (
            pd_a.reg_mr(src_len, AccessFlags::empty())?,
            pd_b.reg_mr(dst_len.max(1) as usize, AccessFlags::LOCAL_WRITE)?,
        ),
        Mode::ReadBw => (
            pd_b.reg_mr(src_len, AccessFlags::REMOTE_READ)?,
            pd_a.reg_mr(dst_len.max(1) as usize, AccessFlags::LOCAL_WRITE)?,
        ),
    };
    let mut lanes = Vec::new();
    for i in 0..c.qps {
        let a = pd_a.create_qp(QpInitAttr {
            send_cq: req_cq.clone(),
            recv_cq: req_cq.clone(),
            max_send_wr: c.tx_depth,
            max_recv_wr: 0,
        })?;
        let b = pd_b.create_qp(QpInitAttr {
            send_cq: resp_cq.clone(),
            recv_cq: resp_cq.clone(),
            max_send_wr: 0,
            max_recv_wr: recv_wrs,
        })?;
        connect(req, &a, initial_psn(c.seed, 0, i), resp, &b, initial_psn(c.seed, 1, i), c.mtu)?;
        let count = c.iters / q + u64::from((i as u64) < c.iters % q);
        lanes.push(Lane { req: a, resp: b, count, posted: 0, completed: 0, recv_posted: 0, recv_completed: 0 });
    }
    Ok(Setup { _pds: (pd_a, pd_b), req_cq, resp_cq, src, dst, lanes, src_slots, rx_depth, own_slots })
}

/// Runs one benchmark between `req` (NIC0) and `resp` (NIC1).
pub fn run(req: &Context, resp: &Context, c: &BenchConfig) -> Result<Report, BenchError> {
    if c.qps == 0 || c.iters == 0 || c.size == 0 || c.tx_depth == 0 {
        return Err(BenchError::Config("size, iters, qps and tx-depth must be at least 1".into()));
    }
    if c.qps as usize > params::NUM_QPS - 2 {
        return Err(BenchError::Config(format!("at most {} QPs", params::NUM_QPS - 2)));
    }
    if c.tx_depth > 1 << rnic::ring::MAX_WQ_LOG2 {
        return Err(BenchError::Config(format!("tx-depth at most {}", 1 << rnic::ring::MAX_WQ_LOG2)));
    }
    let s = setup(req, resp, c)?;
    Runner::new(req, c, s).run()
}

struct Runner<'a> {
    c: &'a BenchConfig,
    dev: &'a dyn rnic::Device,
    s: Setup,
    done: u64,
    recv_done: u64,
    last_progress: u64,
    last_completion: u64,
    /// Cycle message `iters / 2` completed.
    half_at: Option<u64>,
    verified: u64,
    scratch: Vec<u8>,
    bar: ProgressBar,
}

impl<'a> Runner<'a> {
    fn new(req: &'a Context, c: &'a BenchConfig, s: Setup) -> Self {
        let bar = if c.progress {
            let b = ProgressBar::with_draw_target(Some(c.iters), ProgressDrawTarget::stderr());
            b.set_style(
                ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} msgs {msg}")
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
            done: 0,
            recv_done: 0,
            last_progress: 0,
            last_completion: 0,
            half_at: None,
            verified: 0,
            scratch: vec![0u8; c.size as usize],
            bar,
        }
    }

    fn q(&self) -> u64 {
        self.c.qps as u64
    }

    fn size(&self) -> u64 {
        self.c.size as u64
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

    fn run(mut self) -> Result<Report, BenchError> {
        let send = self.c.mode == Mode::SendBw;
        if send {
            for qi in 0..self.c.qps {
                self.replenish(qi)?;
            }
        }
        let start = self.dev.now_cycles();
        let wall = Instant::now();
        self.last_progress = start;
        self.last_completion = start;
        // One completion buffer for the whole run: polling does not allocate.
        let mut wcs = [WorkCompletion::default(); 256];
        while self.done < self.c.iters || (send && self.recv_done < self.c.iters) {
            let mut progress = false;
            for qi in 0..self.c.qps {
                progress |= self.post(qi)?;
            }
            let n = self.s.req_cq.poll_cq(&mut wcs)?;
            progress |= n > 0;
            for wc in &wcs[..n] {
                self.on_send_completion(wc)?;
            }
            if send {
                let n = self.s.resp_cq.poll_cq(&mut wcs)?;
                progress |= n > 0;
                for wc in &wcs[..n] {
                    self.on_recv_completion(wc)?;
                }
            }
            let now = self.dev.now_cycles();
            if progress {
                self.last_progress = now;
                self.bar.set_position(if send { self.recv_done.min(self.done) } else { self.done });
            } else {
                if now - self.last_progress > self.c.stall_cycles {
                    return Err(BenchError::Stall {
                        cycles: now - self.last_progress,
                        done: self.done,
                        total: self.c.iters,
                        req: self.s.req_cq.describe(),
                        resp: self.s.resp_cq.describe(),
                    });
                }
                self.dev.wait().map_err(rnic::Error::from)?;
            }
        }
        let cycles = self.last_completion - start;
        let second_half_cycles = self.last_completion - self.half_at.unwrap_or(start);
        let wall = wall.elapsed();
        self.bar.finish_and_clear();
        if self.s.own_slots {
            self.final_sweep()?;
        }
        Ok(Report {
            size: self.c.size,
            iters: self.c.iters,
            cycles,
            second_half_cycles,
            wall,
            verified_bytes: self.verified,
            own_slots: self.s.own_slots,
            recovery: self.s.lanes.iter().map(|l| l.req.recovery_stats()).sum(),
        })
    }

    /// Posts as many WRs as QP `qi` may have in flight, as one batch.
    fn post(&mut self, qi: u32) -> Result<bool, BenchError> {
        let l = &self.s.lanes[qi as usize];
        let mut n = (self.c.tx_depth as u64 - (l.posted - l.completed)).min(l.count - l.posted);
        if self.c.mode == Mode::SendBw {
            // Never send more than the responder has receives posted for.
            n = n.min(l.recv_posted - l.posted);
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
            let wr = match self.c.mode {
                Mode::WriteBw => SendWr {
                    wr_id: g,
                    opcode: WrOpcode::RdmaWrite {
                        remote_addr: self.s.dst.addr() + self.dst_off(qi, k, g),
                        rkey: self.s.dst.rkey(),
                    },
                    sg: self.s.src.sge(off, self.c.size),
                },
                Mode::SendBw => SendWr { wr_id: g, opcode: WrOpcode::Send, sg: self.s.src.sge(off, self.c.size) },
                Mode::ReadBw => SendWr {
                    wr_id: g,
                    opcode: WrOpcode::RdmaRead { remote_addr: self.s.src.addr() + off, rkey: self.s.src.rkey() },
                    sg: self.s.dst.sge(self.dst_off(qi, k, g), self.c.size),
                },
            };
            wrs.push(wr);
        }
        self.s.lanes[qi as usize].req.post_send_batch(&wrs)?;
        self.s.lanes[qi as usize].posted += n;
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
        self.s.lanes[qi as usize].completed += 1;
        self.done += 1;
        self.last_completion = self.last_completion.max(self.dev.now_cycles());
        if self.done == self.c.iters / 2 && self.half_at.is_none() {
            self.half_at = Some(self.last_completion);
        }
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
        self.last_completion = self.last_completion.max(self.dev.now_cycles());
        self.replenish(qi)
    }

    /// Tops QP `qi`'s receive queue up to `rx_depth` (never past the messages it will get).
    fn replenish(&mut self, qi: u32) -> Result<(), BenchError> {
        let depth = self.s.rx_depth as u64;
        let l = &self.s.lanes[qi as usize];
        let n = (depth - (l.recv_posted - l.recv_completed)).min(l.count - l.recv_posted);
        if n == 0 {
            return Ok(());
        }
        let first = l.recv_posted;
        let wrs: Vec<RecvWr> = (first..first + n)
            .map(|j| {
                let slot = j % depth;
                RecvWr { wr_id: (qi as u64) << 32 | slot, sg: self.s.dst.sge(self.recv_off(qi, slot), self.c.size) }
            })
            .collect();
        self.s.lanes[qi as usize].resp.post_recv_batch(&wrs)?;
        self.s.lanes[qi as usize].recv_posted += n;
        Ok(())
    }

    /// Every WRITE or READ had its own slot: check them all again, so data
    /// that landed in another message's slot after that one was checked is caught.
    fn final_sweep(&mut self) -> Result<(), BenchError> {
        let verified = self.verified;
        for g in 0..self.c.iters {
            let qi = (g % self.q()) as u32;
            self.check(qi, g, g * self.size())?;
        }
        self.verified = verified;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(cycles: u64, second_half_cycles: u64) -> Report {
        Report {
            size: 4096,
            iters: 1000,
            cycles,
            second_half_cycles,
            wall: Duration::from_secs(1),
            verified_bytes: 0,
            own_slots: true,
            recovery: Default::default(),
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
}
