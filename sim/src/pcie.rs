//! The PCIe side of one NIC: DMA reads and writes against host memory with
//! latency, per-direction bandwidth and the IOMMU shadow check.
//!
//! Pure Rust, cycle-stepped, no Verilator: [`crate::SimNic`] connects it to
//! the core's ports. Each cycle: [`Pcie::begin_cycle`] (posted writes land,
//! credit refills, the next completion beat is prepared), then the caller
//! presents [`Pcie::cpl`], [`Pcie::rd_req_ready`] and [`Pcie::wr_ready`],
//! evaluates the core and reports the handshakes that fired.
//!
//! Timing: a read accepted at cycle `t` has its first completion beat
//! available at `t + rtt`; completion data is read from host memory when the
//! beat is sent. A write accepted at `t` lands in host memory at
//! `t + rtt/2`, in order, so a later read always sees it (PCIe ordering: reads
//! do not pass posted writes). Bandwidth: completion data (downstream) and
//! write data plus read requests (upstream) are charged in TLPs of `mps`
//! bytes (requests per `mrrs` bytes) plus `tlp_overhead` bytes each, against
//! a token bucket of `pcie_gbps` per direction that holds at most one TLP of burst.

use std::collections::VecDeque;

use rnic_spec::params::{CLOCK_HZ, DATA_BYTES, DMA_RD_MAX_LEN};

use crate::config::{ns_to_cycles, SimConfig};
use crate::mem::{DmaDir, HostMem, Violation};

/// Most DMA reads in flight (the core's tag is 8 bits).
pub const MAX_READS: usize = 256;

/// A byte-rate limiter in milli-bytes: refilled every cycle, spent when a
/// transfer moves; a transfer may start while the balance is positive.
#[derive(Clone, Debug)]
pub struct TokenBucket {
    level: i64,
    rate: i64,
    cap: i64,
}

impl TokenBucket {
    /// A bucket passing `gbps` Gb/s at the core clock, bursting up to `burst_bytes`.
    pub fn new(gbps: f64, burst_bytes: u64) -> TokenBucket {
        let rate = (gbps * 1e9 / 8.0 / CLOCK_HZ as f64 * 1000.0).round() as i64;
        let cap = burst_bytes as i64 * 1000 + rate;
        TokenBucket { level: cap, rate, cap }
    }
    /// Milli-bytes added per cycle.
    pub fn rate_millibytes(&self) -> i64 {
        self.rate
    }
    /// Adds one cycle's credit.
    #[inline]
    pub fn refill(&mut self) {
        self.level = (self.level + self.rate).min(self.cap);
    }
    /// True if a transfer may start this cycle.
    #[inline]
    pub fn ok(&self) -> bool {
        self.level > 0
    }
    /// Spends `bytes` (the balance may go negative; it is repaid before the next start).
    #[inline]
    pub fn spend(&mut self, bytes: u64) {
        self.level -= bytes as i64 * 1000;
    }
}

#[derive(Clone, Copy, Debug)]
struct PendingRead {
    addr: u64,
    len: u32,
    tag: u8,
    due: u64,
    sent: u32,
    denied: bool,
}

#[derive(Clone, Copy)]
struct PendingWrite {
    addr: u64,
    len: u8,
    due: u64,
    data: [u8; DATA_BYTES],
}

/// A read-completion beat presented to the core.
#[derive(Clone, Copy, Debug)]
pub struct CplBeat {
    /// Data, packed from lane 0, zero past the request's length.
    pub data: [u8; DATA_BYTES],
    /// The request's tag.
    pub tag: u8,
    /// Last beat of the request.
    pub last: bool,
}

/// DMA counters of one NIC.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DmaStats {
    /// Read requests accepted.
    pub rd_reqs: u64,
    /// Bytes requested by reads.
    pub rd_bytes: u64,
    /// Completion beats delivered.
    pub cpl_beats: u64,
    /// Write beats accepted.
    pub wr_beats: u64,
    /// Bytes written (accepted, permitted).
    pub wr_bytes: u64,
    /// Cycles a completion was ready in time but held back by downstream bandwidth.
    pub cpl_bw_stall: u64,
}

/// The PCIe/DMA model of one NIC.
pub struct Pcie {
    rtt: u64,
    half_rtt: u64,
    mps: u32,
    mrrs: u32,
    overhead: u32,
    down: TokenBucket,
    up: TokenBucket,
    reads: VecDeque<PendingRead>,
    writes: VecDeque<PendingWrite>,
    write_cap: usize,
    cpl: Option<CplBeat>,
    cpl_new: bool,
    /// End address of the last write beat and bytes in its TLP (for TLP coalescing).
    wr_next: u64,
    wr_tlp_fill: u32,
    violations: Vec<Violation>,
    stats: DmaStats,
}

impl Pcie {
    /// A PCIe model with `cfg`'s latency and bandwidth.
    pub fn new(cfg: &SimConfig) -> Pcie {
        let rtt = ns_to_cycles(cfg.pcie_rtt_ns).max(1);
        let half_rtt = rtt / 2;
        let burst = (cfg.pcie_mps + cfg.pcie_tlp_overhead) as u64;
        // A write queue deep enough for a beat every cycle during the flight time.
        let write_cap = half_rtt as usize + 64;
        Pcie {
            rtt,
            half_rtt,
            mps: cfg.pcie_mps.max(DATA_BYTES as u32),
            mrrs: cfg.pcie_mrrs.max(1),
            overhead: cfg.pcie_tlp_overhead,
            down: TokenBucket::new(cfg.pcie_gbps, burst),
            up: TokenBucket::new(cfg.pcie_gbps, burst),
            reads: VecDeque::with_capacity(MAX_READS),
            writes: VecDeque::with_capacity(write_cap),
            write_cap,
            cpl: None,
            cpl_new: false,
            wr_next: u64::MAX,
            wr_tlp_fill: 0,
            violations: Vec::new(),
            stats: DmaStats::default(),
        }
    }

    /// Start of cycle `now`: lands due writes, refills credit, prepares the next completion beat.
    #[inline]
    pub fn begin_cycle(&mut self, now: u64, mem: &mut HostMem) {
        self.down.refill();
        self.up.refill();
        while let Some(w) = self.writes.front() {
            if w.due > now {
                break;
            }
            let w = self.writes.pop_front().expect("front exists");
            // The IOMMU is checked again when the write lands: memory freed
            // while the write was in flight is a use after free.
            if mem.dma_allowed(w.addr, w.len as u64, DmaDir::Write) {
                mem.dev_write(w.addr, &w.data[..w.len as usize]);
            } else {
                self.violation(w.addr, w.len as u32, DmaDir::Write, now);
            }
        }
        self.cpl_new = false;
        if self.cpl.is_none() {
            if let Some(r) = self.reads.front() {
                if r.due <= now {
                    if !self.down.ok() {
                        self.stats.cpl_bw_stall += 1;
                        return;
                    }
                    let mut data = [0u8; DATA_BYTES];
                    let n = (r.len.saturating_sub(r.sent) as usize).min(DATA_BYTES);
                    let (addr, denied) = (r.addr + r.sent as u64, r.denied);
                    if !denied {
                        // Memory is read when the completion is formed: it must still be mapped.
                        if mem.dma_allowed(addr, n as u64, DmaDir::Read) {
                            mem.dev_read(addr, &mut data[..n]);
                        } else {
                            self.violation(addr, n as u32, DmaDir::Read, now);
                        }
                    }
                    let r = self.reads.front().expect("front exists");
                    let last = r.sent + DATA_BYTES as u32 >= r.len;
                    self.cpl = Some(CplBeat { data, tag: r.tag, last });
                    self.cpl_new = true;
                }
            }
        }
    }

    /// The completion beat presented this cycle, if any.
    #[inline]
    pub fn cpl(&self) -> Option<&CplBeat> {
        self.cpl.as_ref()
    }

    /// True if the beat from [`Pcie::cpl`] was prepared this cycle (its data must be driven).
    #[inline]
    pub fn cpl_is_new(&self) -> bool {
        self.cpl_new
    }

    /// Whether a read request is accepted this cycle.
    #[inline]
    pub fn rd_req_ready(&self) -> bool {
        self.reads.len() < MAX_READS && self.up.ok()
    }

    /// Whether a write beat is accepted this cycle.
    #[inline]
    pub fn wr_ready(&self) -> bool {
        self.writes.len() < self.write_cap && self.up.ok()
    }

    fn violation(&mut self, addr: u64, len: u32, dir: DmaDir, cycle: u64) {
        self.violations.push(Violation { addr, len, dir, cycle });
    }

    /// A read request fired at cycle `now`.
    pub fn rd_req(&mut self, now: u64, addr: u64, len: u32, tag: u8, mem: &mut HostMem) {
        let bad_len = len == 0 || len > DMA_RD_MAX_LEN;
        let denied = bad_len || !mem.dma_allowed(addr, len as u64, DmaDir::Read);
        if denied {
            self.violation(addr, len, DmaDir::Read, now);
        }
        self.up.spend(len.div_ceil(self.mrrs).max(1) as u64 * self.overhead as u64);
        self.stats.rd_reqs += 1;
        self.stats.rd_bytes += len as u64;
        // A zero-length (bad) request still gets one zero beat so the core does not hang.
        let len = if bad_len { len.clamp(1, DMA_RD_MAX_LEN) } else { len };
        self.reads.push_back(PendingRead { addr, len, tag, due: now + self.rtt, sent: 0, denied });
    }

    /// The presented completion beat was accepted by the core.
    pub fn cpl_fired(&mut self) {
        let Some(beat) = self.cpl.take() else { return };
        let r = self.reads.front_mut().expect("a completion belongs to a read");
        let n = (r.len - r.sent).min(DATA_BYTES as u32);
        let tlp_start = r.sent.is_multiple_of(self.mps);
        self.down.spend(n as u64 + if tlp_start { self.overhead as u64 } else { 0 });
        r.sent += n;
        self.stats.cpl_beats += 1;
        if beat.last {
            self.reads.pop_front();
        }
    }

    /// A write beat fired at cycle `now`: `data` (1..=64 bytes) at `addr`.
    pub fn wr(&mut self, now: u64, addr: u64, data: &[u8], mem: &mut HostMem) {
        let len = data.len().min(DATA_BYTES);
        if len == 0 || !mem.dma_allowed(addr, len as u64, DmaDir::Write) {
            self.violation(addr, data.len() as u32, DmaDir::Write, now);
            return;
        }
        // Contiguous beats coalesce into TLPs of up to MPS bytes.
        let new_tlp = addr != self.wr_next || self.wr_tlp_fill + len as u32 > self.mps;
        if new_tlp {
            self.wr_tlp_fill = 0;
        }
        self.wr_tlp_fill += len as u32;
        self.wr_next = addr + len as u64;
        self.up.spend(len as u64 + if new_tlp { self.overhead as u64 } else { 0 });
        let mut w = PendingWrite { addr, len: len as u8, due: now + self.half_rtt, data: [0; DATA_BYTES] };
        w.data[..len].copy_from_slice(&data[..len]);
        self.writes.push_back(w);
        self.stats.wr_beats += 1;
        self.stats.wr_bytes += len as u64;
    }

    /// Every shadow violation so far.
    pub fn violations(&self) -> &[Violation] {
        &self.violations
    }

    /// Counters.
    pub fn stats(&self) -> DmaStats {
        self.stats
    }

    /// Reads in flight (accepted, not fully completed).
    pub fn reads_in_flight(&self) -> usize {
        self.reads.len()
    }

    /// Cycle at which the last accepted write lands (0 if none is in flight):
    /// a register read's reply may not pass it (PCIe ordering).
    pub fn last_write_due(&self) -> u64 {
        self.writes.back().map_or(0, |w| w.due)
    }

    /// Writes accepted but not yet landed in host memory.
    pub fn writes_in_flight(&self) -> usize {
        self.writes.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::HOST_MEM_BASE;
    use rnic_driver::DmaAccess;

    const RW: DmaAccess = DmaAccess { device_read: true, device_write: true };

    /// A core stand-in that always accepts completions; returns (cycle, beat) of each.
    fn run_reads(p: &mut Pcie, mem: &mut HostMem, reqs: &[(u64, u32, u8)], cycles: u64) -> Vec<(u64, CplBeat)> {
        let mut out = Vec::new();
        let mut next = 0;
        for now in 0..cycles {
            p.begin_cycle(now, mem);
            if let Some(b) = p.cpl() {
                out.push((now, *b));
                p.cpl_fired();
            }
            if next < reqs.len() && p.rd_req_ready() {
                let (a, l, t) = reqs[next];
                p.rd_req(now, a, l, t, mem);
                next += 1;
            }
        }
        out
    }

    #[test]
    fn read_latency_data_packing_and_order() {
        let cfg = SimConfig::default();
        let mut mem = HostMem::new(1 << 20);
        let b = mem.alloc(8192, RW).unwrap();
        let pattern: Vec<u8> = (0..8192u32).map(|i| (i * 7 + 3) as u8).collect();
        mem.write(b.bus_addr, &pattern).unwrap();
        let mut p = Pcie::new(&cfg);
        let beats = run_reads(&mut p, &mut mem, &[(b.bus_addr + 5, 100, 9), (b.bus_addr + 1000, 64, 10)], 2000);
        assert_eq!(beats.len(), 3);
        assert_eq!(beats[0].0, 250, "1 us round trip = 250 cycles at 250 MHz");
        assert_eq!(beats[0].1.tag, 9);
        assert!(!beats[0].1.last);
        assert_eq!(&beats[0].1.data[..], &pattern[5..69]);
        assert!(beats[1].1.last);
        assert_eq!(&beats[1].1.data[..36], &pattern[69..105]);
        assert!(beats[1].1.data[36..].iter().all(|&x| x == 0), "bytes past len are zero");
        assert_eq!(beats[2].1.tag, 10);
        assert!(beats[2].1.last);
        assert_eq!(&beats[2].1.data[..], &pattern[1000..1064]);
        assert!(p.violations().is_empty());
    }

    #[test]
    fn downstream_bandwidth_is_gen3_x16_minus_tlp_overhead() {
        let cfg = SimConfig::default();
        let mut mem = HostMem::new(1 << 24);
        let b = mem.alloc(1 << 22, RW).unwrap();
        let mut p = Pcie::new(&cfg);
        let reqs: Vec<_> = (0..200u64).map(|i| (b.bus_addr + i * 4096, 4096, i as u8)).collect();
        let beats = run_reads(&mut p, &mut mem, &reqs, 20_000);
        assert_eq!(beats.len(), 200 * 64);
        let span = beats.last().unwrap().0 - beats[0].0 + 1;
        let bytes = 200.0 * 4096.0;
        let gbps = bytes * 8.0 / (span as f64 / CLOCK_HZ as f64) / 1e9;
        // 126.03 Gb/s x 256/280 = 115.2 Gb/s of payload.
        let expect = crate::config::PCIE_GEN3_X16_GBPS * 256.0 / 280.0;
        assert!((gbps - expect).abs() / expect < 0.01, "got {gbps:.2} Gb/s, expected {expect:.2}");
    }

    #[test]
    fn writes_land_after_half_rtt_in_order_and_are_rate_limited() {
        let cfg = SimConfig::default();
        let mut mem = HostMem::new(1 << 24);
        let b = mem.alloc(1 << 20, RW).unwrap();
        let mut p = Pcie::new(&cfg);
        let mut accepted = 0u64;
        let mut first_land = None;
        let mut last_accept = 0;
        for now in 0..10_000u64 {
            p.begin_cycle(now, &mut mem);
            let mut x = [0u8; 1];
            mem.read(b.bus_addr, &mut x).unwrap();
            if x[0] == 0xAA && first_land.is_none() {
                first_land = Some(now);
            }
            if accepted < 4096 && p.wr_ready() {
                let data = [if accepted == 0 { 0xAA } else { accepted as u8 }; 64];
                p.wr(now, b.bus_addr + accepted * 64 % (1 << 20), &data, &mut mem);
                accepted += 1;
                last_accept = now;
            }
        }
        assert_eq!(first_land, Some(125), "posted writes land after half the round trip");
        // 4096 beats of 64 B in TLPs of 256 B: 64 B + 24/4 B overhead per beat.
        let gbps = 4096.0 * 64.0 * 8.0 / (last_accept as f64 / CLOCK_HZ as f64) / 1e9;
        let expect = crate::config::PCIE_GEN3_X16_GBPS * 256.0 / 280.0;
        assert!((gbps - expect).abs() / expect < 0.01, "got {gbps:.2} Gb/s, expected {expect:.2}");
        assert!(p.violations().is_empty());
        assert_eq!(p.writes_in_flight(), 0);
    }

    #[test]
    fn shadow_violations_are_recorded_and_writes_dropped() {
        let cfg = SimConfig::default();
        let mut mem = HostMem::new(1 << 20);
        let ro = mem.alloc(128, DmaAccess { device_read: true, device_write: false }).unwrap();
        let wo = mem.alloc(128, DmaAccess { device_read: false, device_write: true }).unwrap();
        mem.write(wo.bus_addr, &[0x55; 128]).unwrap();
        let mut p = Pcie::new(&cfg);
        p.begin_cycle(0, &mut mem);
        p.wr(0, ro.bus_addr, &[1; 64], &mut mem);
        p.rd_req(0, wo.bus_addr, 64, 1, &mut mem);
        p.rd_req(0, ro.bus_addr + 100, 64, 2, &mut mem);
        p.wr(0, HOST_MEM_BASE + (1 << 19), &[1; 8], &mut mem);
        let v = p.violations().to_vec();
        assert_eq!(v.len(), 4);
        assert_eq!((v[0].dir, v[0].addr, v[0].len), (DmaDir::Write, ro.bus_addr, 64));
        assert_eq!((v[1].dir, v[1].addr), (DmaDir::Read, wo.bus_addr));
        assert_eq!((v[2].dir, v[2].addr), (DmaDir::Read, ro.bus_addr + 100));
        assert_eq!(v[3].dir, DmaDir::Write);
        let mut seen = Vec::new();
        for now in 1..400 {
            p.begin_cycle(now, &mut mem);
            if let Some(b) = p.cpl() {
                seen.push(*b);
                p.cpl_fired();
            }
        }
        assert_eq!(seen.len(), 2, "denied reads still complete");
        assert!(seen[0].data.iter().all(|&x| x == 0), "denied reads return zeros, not memory");
        let mut x = [9u8; 128];
        mem.read(ro.bus_addr, &mut x).unwrap();
        assert_eq!(x, [0; 128], "denied writes are not applied");
    }
}
