//! The PCIe side of one NIC: the PCIe block's requester interfaces as the
//! core's DMA front end (`rnic_hw::pcie_rd`) sees them, against host memory
//! with latency, per-direction bandwidth and the IOMMU shadow check.
//!
//! Pure Rust, cycle-stepped, no Verilator: [`crate::SimNic`] connects it to
//! the core's ports. Each cycle: [`Pcie::begin_cycle`] (posted writes land,
//! credit refills, this cycle's completion beat is formed), then the caller
//! presents [`Pcie::rc`], [`Pcie::rq_ready`] and [`Pcie::wr_ready`],
//! evaluates the core and reports the handshakes that fired.
//!
//! Reads behave as a root complex's do, inconvenient parts included:
//! - a read request must follow PCIe's rules (at most MRRS bytes, within a
//!   4 KiB page, a tag not in flight); the model panics on a broken rule;
//! - a read accepted at cycle `t` is due at `t + rtt` give or take half
//!   the jitter; among the oldest few due reads the next completion is
//!   picked at random, so completions come back out of order across tags;
//! - each completion ends at an RCB-aligned address (or the request's end)
//!   and carries at most MPS bytes, its size drawn at random; its beats
//!   are address-aligned and the lanes outside it hold leftover bytes;
//! - there is no ready: the core must take every beat in its cycle.
//!
//! Writes arrive as memory write TLPs (descriptor on the first beat,
//! address-aligned beats with byte enables); the model panics on a TLP
//! longer than MPS or across a 4 KiB page, and on byte enables or a last
//! flag that do not match the descriptor.
//!
//! MSI-X: a write into [`MSI_WINDOW`] (x86's interrupt address range) is
//! an interrupt message, not memory: it must be one 4-byte, dword-aligned
//! TLP (anything else there is a violation); it arrives in order with the
//! writes before it, is logged ([`Pcie::msis`]) and signals the eventfd
//! bound to its data ([`Pcie::bind_irq`], what VFIO's `SET_IRQS` does).
//!
//! Completion data is read from host memory when the beat is sent. A write
//! accepted at `t` lands in host memory at `t + rtt/2`, in order, so a later
//! read always sees it (PCIe ordering: reads do not pass posted writes).
//! Bandwidth: completion data (downstream) and write data plus read
//! requests (upstream) are charged per TLP with `tlp_overhead` bytes each,
//! against a token bucket of `pcie_gbps` per direction that holds at most
//! one TLP of burst.

use std::collections::VecDeque;
use std::ops::Range;
use std::os::fd::RawFd;

use rnic_spec::params::{CLOCK_HZ, DATA_BYTES, PCIE_TAG_BITS};

use crate::config::{ns_to_cycles, SimConfig};
use crate::mem::{DmaDir, HostMem, Violation};
use crate::model::{Model, ModelError, PortId};
use crate::rng::SplitMix;

/// Most DMA reads in flight (one per PCIe tag).
pub const MAX_READS: usize = 1 << PCIE_TAG_BITS;

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
    due: u64,
    /// The earliest any read issued with or after this one can be due
    /// (issue cycle + rtt - jitter/2): the scan for due reads stops here.
    earliest: u64,
    /// Bytes already sent in whole completions.
    sent: u32,
    denied: bool,
}

/// The completion TLP being sent: bytes `[next, end)` of read `tag` are left.
#[derive(Clone, Copy, Debug)]
struct CplTlp {
    tag: u8,
    next: u32,
    end: u32,
}

/// The write TLP being received: its end address and the next beat's first byte.
#[derive(Clone, Copy, Debug)]
struct WriteTlp {
    end: u64,
    next: u64,
}

#[derive(Clone, Copy)]
struct PendingWrite {
    addr: u64,
    len: u8,
    due: u64,
    /// An MSI-X message (into [`MSI_WINDOW`]), not a memory write.
    msi: bool,
    data: [u8; DATA_BYTES],
}

/// The host's interrupt address range (x86's): a device write there is an
/// MSI/MSI-X message.
pub const MSI_WINDOW: Range<u64> = 0xFEE0_0000..0xFEF0_0000;

/// An MSI-X message as it reached the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Msi {
    /// Cycle it arrived (the write landed).
    pub cycle: u64,
    /// Its address.
    pub addr: u64,
    /// Its data.
    pub data: u32,
}

/// One beat of a read completion, as the PCIe block's requester-completion
/// interface presents it in address-aligned mode.
#[derive(Clone, Copy, Debug)]
pub struct RcBeat {
    /// Data: the byte at address A in lane A mod 64; lanes outside this
    /// completion hold leftover bytes, not zeros.
    pub data: [u8; DATA_BYTES],
    /// The request's tag.
    pub tag: u8,
    /// Low 12 bits of the address of the beat's first byte.
    pub addr: u16,
    /// Request Completed: the last beat of the request's last completion.
    pub done: bool,
    /// Bytes of the completion in this beat (from lane `addr mod 64`).
    pub bytes: u8,
    /// The first beat of a completion TLP.
    pub tlp_first: bool,
    /// The last beat of a completion TLP.
    pub tlp_last: bool,
}

/// The requester-completion ports of a Verilated top, by name: `prefix`
/// `valid`, `data`, `tag`, `addr`, `done` (the core's are `pcie_rc_*`, the
/// read front end's own top's `rc_*`).
#[derive(Clone, Copy, Debug)]
pub struct RcPorts {
    valid: PortId,
    data: PortId,
    tag: PortId,
    addr: PortId,
    done: PortId,
}

impl RcPorts {
    /// Looks the five ports up in `m`.
    pub fn resolve(m: &Model, prefix: &str) -> Result<RcPorts, ModelError> {
        let p = |n: &str| m.port(&format!("{prefix}{n}"));
        Ok(RcPorts { valid: p("valid")?, data: p("data")?, tag: p("tag")?, addr: p("addr")?, done: p("done")? })
    }

    /// Presents `pcie`'s completion beat of this cycle, or none (a beat lasts one cycle: there is no ready).
    #[inline]
    pub fn drive(&self, m: &mut Model, pcie: &Pcie) {
        match pcie.rc() {
            Some(b) => {
                m.set_bytes(self.data, &b.data);
                m.set(self.tag, b.tag as u64);
                m.set(self.addr, b.addr as u64);
                m.set(self.done, b.done as u64);
                m.set(self.valid, 1);
            }
            None => m.set(self.valid, 0),
        }
    }
}

/// DMA counters of one NIC.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DmaStats {
    /// Read requests accepted (PCIe requests, after the front end's split).
    pub rd_reqs: u64,
    /// Bytes requested by reads.
    pub rd_bytes: u64,
    /// Completion TLPs sent.
    pub cpl_tlps: u64,
    /// Completion beats sent.
    pub cpl_beats: u64,
    /// Write TLPs accepted.
    pub wr_tlps: u64,
    /// Write beats accepted.
    pub wr_beats: u64,
    /// Bytes written (accepted, permitted).
    pub wr_bytes: u64,
    /// Cycles a completion was ready in time but held back by downstream bandwidth.
    pub cpl_bw_stall: u64,
    /// MSI-X messages that arrived.
    pub msis: u64,
    /// Of them, messages whose data no eventfd is bound to (spurious).
    pub msis_unbound: u64,
}

/// The PCIe/DMA model of one NIC.
pub struct Pcie {
    rtt: u64,
    jitter: u64,
    half_rtt: u64,
    mps: u32,
    mrrs: u32,
    rcb: u32,
    overhead: u32,
    down: TokenBucket,
    up: TokenBucket,
    /// Reads in flight by tag, and their tags in issue order.
    reads: Vec<Option<PendingRead>>,
    order: VecDeque<u8>,
    tlp: Option<CplTlp>,
    rng: SplitMix,
    writes: VecDeque<PendingWrite>,
    write_cap: usize,
    rc: Option<RcBeat>,
    wtlp: Option<WriteTlp>,
    violations: Vec<Violation>,
    stats: DmaStats,
    msis: Vec<Msi>,
    irq_fds: Vec<(u32, RawFd)>,
}

/// Reads the model looks at when it picks the next completion (the oldest
/// few that are due): completions of different tags come back out of order.
const PICK_WINDOW: usize = 4;

impl Pcie {
    /// A PCIe model with `cfg`'s latency, bandwidth and sizes; `stream`
    /// (the NIC's index) varies its seed so NICs do not draw alike.
    pub fn new(cfg: &SimConfig, stream: u64) -> Pcie {
        let rtt = ns_to_cycles(cfg.pcie_rtt_ns).max(1);
        let jitter = ns_to_cycles(cfg.pcie_jitter_ns).min(rtt);
        let half_rtt = rtt / 2;
        let burst = (cfg.pcie_mps + cfg.pcie_tlp_overhead) as u64;
        // A write queue deep enough for a beat every cycle during the flight time.
        let write_cap = half_rtt as usize + 64;
        assert!(
            cfg.pcie_rcb.is_power_of_two() && (64..=cfg.pcie_mps).contains(&cfg.pcie_rcb),
            "PCIe RCB {} must be a power of two from 64 to MPS ({})",
            cfg.pcie_rcb,
            cfg.pcie_mps
        );
        assert!(
            cfg.pcie_mrrs.is_power_of_two() && (128..=4096).contains(&cfg.pcie_mrrs),
            "PCIe MRRS {} must be a power of two from 128 to 4096",
            cfg.pcie_mrrs
        );
        assert!(
            cfg.pcie_mps.is_power_of_two() && (128..=4096).contains(&cfg.pcie_mps),
            "PCIe MPS {} must be a power of two from 128 to 4096",
            cfg.pcie_mps
        );
        Pcie {
            rtt,
            jitter,
            half_rtt,
            mps: cfg.pcie_mps,
            mrrs: cfg.pcie_mrrs,
            rcb: cfg.pcie_rcb,
            overhead: cfg.pcie_tlp_overhead,
            down: TokenBucket::new(cfg.pcie_gbps, burst),
            up: TokenBucket::new(cfg.pcie_gbps, burst),
            reads: vec![None; MAX_READS],
            order: VecDeque::with_capacity(MAX_READS),
            tlp: None,
            rng: SplitMix::new(cfg.pcie_seed ^ stream.wrapping_mul(0xA076_1D64_78BD_642F)),
            writes: VecDeque::with_capacity(write_cap),
            write_cap,
            rc: None,
            wtlp: None,
            violations: Vec::new(),
            stats: DmaStats::default(),
            msis: Vec::new(),
            irq_fds: Vec::new(),
        }
    }

    /// Start of cycle `now`: lands due writes, refills credit, forms this cycle's completion beat.
    #[inline]
    pub fn begin_cycle(&mut self, now: u64, mem: &mut HostMem) {
        self.down.refill();
        self.up.refill();
        while let Some(w) = self.writes.front() {
            if w.due > now {
                break;
            }
            let w = self.writes.pop_front().expect("front exists");
            if w.msi {
                self.deliver_msi(now, w.addr, u32::from_le_bytes(w.data[..4].try_into().expect("4 bytes")));
                continue;
            }
            // The IOMMU is checked again when the write lands: memory freed
            // while the write was in flight is a use after free.
            if mem.dma_allowed(w.addr, w.len as u64, DmaDir::Write) {
                mem.dev_write(w.addr, &w.data[..w.len as usize]);
            } else {
                self.violation(w.addr, w.len as u32, DmaDir::Write, now);
            }
        }
        self.rc = None;
        if self.tlp.is_none() && !self.order.is_empty() {
            self.start_tlp(now);
        }
        if self.tlp.is_some() {
            if self.down.ok() {
                self.send_beat(now, mem);
            } else {
                self.stats.cpl_bw_stall += 1;
            }
        }
    }

    /// Picks a due read among the oldest few and cuts its next completion:
    /// it ends at an RCB-aligned address (or the request's end) and carries
    /// at most MPS bytes, its size drawn at random.
    fn start_tlp(&mut self, now: u64) {
        let mut due = [0u8; PICK_WINDOW];
        let mut n = 0;
        for &tag in &self.order {
            let r = self.reads[tag as usize].as_ref().expect("ordered reads are in flight");
            if r.earliest > now {
                break;
            }
            if r.due <= now {
                due[n] = tag;
                n += 1;
                if n == PICK_WINDOW {
                    break;
                }
            }
        }
        if n == 0 {
            return;
        }
        let tag = due[self.rng.below(n as u64) as usize];
        let r = self.reads[tag as usize].as_ref().expect("picked read is in flight");
        let at = r.addr + r.sent as u64;
        let rcb = self.rcb as u64;
        let first_end = (at / rcb + 1) * rcb;
        let extra = (self.mps as u64 - (first_end - at)) / rcb;
        let end = (first_end + rcb * self.rng.below(extra + 1)).min(r.addr + r.len as u64);
        self.tlp = Some(CplTlp { tag, next: r.sent, end: (end - r.addr) as u32 });
    }

    fn send_beat(&mut self, now: u64, mem: &mut HostMem) {
        let t = self.tlp.expect("a completion is being sent");
        let r = *self.reads[t.tag as usize].as_ref().expect("completion of a read in flight");
        let at = r.addr + t.next as u64;
        let lane = (at % DATA_BYTES as u64) as usize;
        let n = ((DATA_BYTES - lane) as u32).min(t.end - t.next) as usize;
        let mut data = [0u8; DATA_BYTES];
        if n < DATA_BYTES {
            // Lanes outside the completion hold leftovers, not zeros.
            for chunk in data.chunks_mut(8) {
                chunk.copy_from_slice(&self.rng.next().to_le_bytes());
            }
        }
        if r.denied {
            data[lane..lane + n].fill(0);
        } else if mem.dma_allowed(at, n as u64, DmaDir::Read) {
            // Memory is read when the completion is formed: it must still be mapped.
            mem.dev_read(at, &mut data[lane..lane + n]);
        } else {
            data[lane..lane + n].fill(0);
            self.violation(at, n as u32, DmaDir::Read, now);
        }
        let first = t.next == r.sent;
        self.down.spend(n as u64 + if first { self.overhead as u64 } else { 0 });
        self.stats.cpl_beats += 1;
        self.stats.cpl_tlps += first as u64;
        let next = t.next + n as u32;
        let done = next == r.len;
        let tlp_last = next >= t.end;
        self.rc = Some(RcBeat {
            data,
            tag: t.tag,
            addr: (at & 0xfff) as u16,
            done,
            bytes: n as u8,
            tlp_first: first,
            tlp_last,
        });
        if next < t.end {
            self.tlp = Some(CplTlp { next, ..t });
            return;
        }
        self.tlp = None;
        if done {
            self.reads[t.tag as usize] = None;
            let i = self.order.iter().position(|&x| x == t.tag).expect("tag is ordered");
            self.order.remove(i);
        } else {
            self.reads[t.tag as usize].as_mut().expect("read in flight").sent = next;
        }
    }

    /// The completion beat of this cycle, if any. There is no ready: it
    /// must be taken this cycle, as a PCIe endpoint takes every completion.
    #[inline]
    pub fn rc(&self) -> Option<&RcBeat> {
        self.rc.as_ref()
    }

    /// Whether a read request is accepted this cycle.
    #[inline]
    pub fn rq_ready(&self) -> bool {
        self.order.len() < MAX_READS && self.up.ok()
    }

    /// Whether a write beat is accepted this cycle.
    #[inline]
    pub fn wr_ready(&self) -> bool {
        self.writes.len() < self.write_cap && self.up.ok()
    }

    fn violation(&mut self, addr: u64, len: u32, dir: DmaDir, cycle: u64) {
        self.violations.push(Violation { addr, len, dir, cycle });
    }

    /// A memory read request fired at cycle `now`.
    ///
    /// # Panics
    /// If it breaks PCIe's rules (empty, longer than MRRS, across a 4 KiB
    /// page, or with a tag still in flight): the DMA front end has a bug.
    pub fn rq(&mut self, now: u64, addr: u64, len: u32, tag: u8, mem: &mut HostMem) {
        assert!(
            len >= 1 && len <= self.mrrs && addr / 4096 == (addr + len as u64 - 1) / 4096,
            "PCIe rule broken by the DMA front end: read of {len} bytes at {addr:#x} (MRRS {}) at cycle {now}",
            self.mrrs
        );
        assert!(
            self.reads[tag as usize].is_none(),
            "PCIe rule broken by the DMA front end: tag {tag} reused while in flight (cycle {now})"
        );
        let denied = !mem.dma_allowed(addr, len as u64, DmaDir::Read);
        if denied {
            self.violation(addr, len, DmaDir::Read, now);
        }
        self.up.spend(self.overhead as u64);
        self.stats.rd_reqs += 1;
        self.stats.rd_bytes += len as u64;
        let earliest = now + self.rtt - self.jitter / 2;
        let due = earliest + self.rng.below(self.jitter + 1);
        self.reads[tag as usize] = Some(PendingRead { addr, len, due, earliest, sent: 0, denied });
        self.order.push_back(tag);
    }

    /// A memory write beat fired at cycle `now`: on a TLP's `first` beat,
    /// `addr` and `len` are its descriptor; `data` is address-aligned and
    /// `keep` says which of its bytes belong to the TLP.
    ///
    /// # Panics
    /// If the TLP breaks PCIe's rules (empty, longer than MPS, across a
    /// 4 KiB page) or its beats do not match its descriptor (byte enables,
    /// beat count): the DMA front end has a bug.
    #[allow(clippy::too_many_arguments)] // one beat of the interface, signal by signal
    pub fn wr_beat(
        &mut self,
        now: u64,
        first: bool,
        last: bool,
        addr: u64,
        len: u32,
        data: &[u8; DATA_BYTES],
        keep: u64,
        mem: &mut HostMem,
    ) {
        if first {
            assert!(
                self.wtlp.is_none(),
                "PCIe rule broken by the DMA front end: a write TLP starts inside another (cycle {now})"
            );
            assert!(
                len >= 1 && len <= self.mps && addr / 4096 == (addr + len as u64 - 1) / 4096,
                "PCIe rule broken by the DMA front end: write of {len} bytes at {addr:#x} (MPS {}) at cycle {now}",
                self.mps
            );
            self.wtlp = Some(WriteTlp { end: addr + len as u64, next: addr });
            self.up.spend(self.overhead as u64);
            self.stats.wr_tlps += 1;
        }
        let t = self.wtlp.unwrap_or_else(|| panic!("PCIe write beat outside a TLP (cycle {now})"));
        let lane = (t.next % DATA_BYTES as u64) as usize;
        let n = ((DATA_BYTES - lane) as u64).min(t.end - t.next) as usize;
        let want = if n == DATA_BYTES { u64::MAX } else { ((1u64 << n) - 1) << lane };
        assert_eq!(
            keep, want,
            "PCIe write beat at {:#x}: byte enables {keep:#x}, the TLP needs {want:#x} (cycle {now})",
            t.next
        );
        let at = t.next;
        let ends = at + n as u64 == t.end;
        assert_eq!(
            last, ends,
            "PCIe write TLP ending at {:#x}: last flag {last} on the beat at {at:#x} (cycle {now})",
            t.end
        );
        self.wtlp = if ends { None } else { Some(WriteTlp { next: at + n as u64, ..t }) };
        self.up.spend(n as u64);
        self.stats.wr_beats += 1;
        let msi = MSI_WINDOW.contains(&at) || MSI_WINDOW.contains(&(at + n as u64 - 1));
        if msi {
            // A message is one dword write of one TLP; anything else at the interrupt window is a violation.
            if first && ends && n == 4 && at.is_multiple_of(4) && MSI_WINDOW.contains(&at) {
                let mut w =
                    PendingWrite { addr: at, len: 4, due: now + self.half_rtt, msi: true, data: [0; DATA_BYTES] };
                w.data[..4].copy_from_slice(&data[lane..lane + 4]);
                self.writes.push_back(w);
            } else {
                self.violation(at, n as u32, DmaDir::Write, now);
            }
            return;
        }
        if !mem.dma_allowed(at, n as u64, DmaDir::Write) {
            self.violation(at, n as u32, DmaDir::Write, now);
            return;
        }
        let mut w =
            PendingWrite { addr: at, len: n as u8, due: now + self.half_rtt, msi: false, data: [0; DATA_BYTES] };
        w.data[..n].copy_from_slice(&data[lane..lane + n]);
        self.writes.push_back(w);
        self.stats.wr_bytes += n as u64;
    }

    fn deliver_msi(&mut self, now: u64, addr: u64, data: u32) {
        self.msis.push(Msi { cycle: now, addr, data });
        self.stats.msis += 1;
        match self.irq_fds.iter().find(|(d, _)| *d == data) {
            Some(&(_, fd)) => signal_eventfd(fd),
            None => self.stats.msis_unbound += 1,
        }
    }

    /// Binds eventfd `fd` to the MSI-X messages with data `data` (each one
    /// adds 1 to it), or with `None` unbinds that data. The caller keeps
    /// the fd open while it is bound.
    pub fn bind_irq(&mut self, data: u32, fd: Option<RawFd>) {
        self.irq_fds.retain(|(d, _)| *d != data);
        if let Some(fd) = fd {
            self.irq_fds.push((data, fd));
        }
    }

    /// Every MSI-X message that arrived, in order.
    pub fn msis(&self) -> &[Msi] {
        &self.msis
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
        self.order.len()
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

/// Adds 1 to eventfd `fd` (as the kernel does for an interrupt bound by VFIO).
fn signal_eventfd(fd: RawFd) {
    let one = 1u64.to_ne_bytes();
    // SAFETY: writes 8 bytes from a live buffer to a file descriptor the binder keeps open.
    let n = unsafe { libc::write(fd, one.as_ptr().cast(), one.len()) };
    if n != one.len() as isize {
        let e = std::io::Error::last_os_error();
        // A full counter (EAGAIN) still wakes the waiter; any other failure means the binder closed the fd.
        assert!(
            e.kind() == std::io::ErrorKind::WouldBlock,
            "eventfd {fd} bound to an MSI-X vector is not writable: {e}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::HOST_MEM_BASE;
    use rnic_driver::DmaAccess;

    const RW: DmaAccess = DmaAccess { device_read: true, device_write: true };

    /// Issues `reqs` (addr, len, tag) as fast as the model takes them and
    /// returns (cycle, beat) of every completion beat.
    fn run_reads(p: &mut Pcie, mem: &mut HostMem, reqs: &[(u64, u32, u8)], cycles: u64) -> Vec<(u64, RcBeat)> {
        let mut out = Vec::new();
        let mut next = 0;
        for now in 0..cycles {
            p.begin_cycle(now, mem);
            if let Some(b) = p.rc() {
                out.push((now, *b));
            }
            if next < reqs.len() && p.rq_ready() {
                let (a, l, t) = reqs[next];
                p.rq(now, a, l, t, mem);
                next += 1;
            }
        }
        out
    }

    #[test]
    fn completions_are_address_aligned_split_at_the_rcb_and_out_of_order_across_tags() {
        let cfg = SimConfig::default();
        let mut mem = HostMem::new(1 << 22);
        let b = mem.alloc(1 << 20, RW).unwrap();
        let pattern: Vec<u8> = (0..1u32 << 20).map(|i| ((i * 7 + 3) ^ (i >> 9)) as u8).collect();
        mem.write(b.bus_addr, &pattern).unwrap();
        let mut p = Pcie::new(&cfg, 0);
        let mut rng = SplitMix::new(7);
        let mut reqs = Vec::new();
        for tag in 0..=255u8 {
            let len = rng.range(1, 512) as u32;
            let mut off = rng.below((1 << 20) - 4096);
            if off / 4096 != (off + len as u64 - 1) / 4096 {
                off -= off % 4096;
            }
            reqs.push((b.bus_addr + off, len, tag));
        }
        let beats = run_reads(&mut p, &mut mem, &reqs, 20_000);
        let (rtt, jit) = (p.rtt, p.jitter);
        let mut firsts = Vec::new();
        for &(addr, len, tag) in &reqs {
            let mine: Vec<_> = beats.iter().filter(|(_, x)| x.tag == tag).collect();
            assert!(!mine.is_empty(), "tag {tag} completed");
            let issued = reqs.iter().position(|r| r.2 == tag).unwrap() as u64;
            assert!(mine[0].0 >= issued + rtt - jit / 2, "not before the round trip");
            firsts.push(mine[0].0);
            let mut at = addr;
            for (i, (_, x)) in mine.iter().enumerate() {
                assert_eq!(x.addr as u64, at & 0xfff, "tag {tag} beat {i} address");
                let lane = (at % 64) as usize;
                let n = (64 - lane).min((addr + len as u64 - at) as usize);
                let off = (at - b.bus_addr) as usize;
                assert_eq!(&x.data[lane..lane + n], &pattern[off..off + n], "tag {tag} beat {i} data");
                assert_eq!(x.done, i == mine.len() - 1, "Request Completed only on the last beat");
                at += n as u64;
            }
            assert_eq!(at, addr + len as u64, "tag {tag}: every byte once");
        }
        assert!(firsts.windows(2).any(|w| w[1] < w[0]), "completions overtake each other across tags");
        // At least one completion per read, at most one per beat.
        assert!(p.stats().cpl_tlps >= 256 && p.stats().cpl_tlps <= p.stats().cpl_beats);
        assert!(beats.iter().any(|(_, x)| x.data.iter().any(|&v| v != 0)), "lanes outside a completion are not zeroed");
        assert_eq!(p.reads_in_flight(), 0);
        assert!(p.violations().is_empty());
    }

    #[test]
    fn downstream_bandwidth_is_gen3_x16_minus_tlp_overhead() {
        let cfg = SimConfig::default();
        let mut mem = HostMem::new(1 << 24);
        let b = mem.alloc(1 << 22, RW).unwrap();
        let mut p = Pcie::new(&cfg, 0);
        let reqs: Vec<_> = (0..1600u64).map(|i| (b.bus_addr + i * 512, 512, i as u8)).collect();
        let mut out = Vec::new();
        let mut next = 0;
        for now in 0..40_000u64 {
            p.begin_cycle(now, &mut mem);
            if p.rc().is_some() {
                out.push(now);
            }
            // A tag is used again once its read has completed.
            if next < reqs.len() && p.rq_ready() && p.reads[reqs[next].2 as usize].is_none() {
                let (a, l, t) = reqs[next];
                p.rq(now, a, l, t, &mut mem);
                next += 1;
            }
        }
        assert_eq!(out.len(), 1600 * 8);
        let span = out.last().unwrap() - out[0] + 1;
        let bytes = 1600.0 * 512.0;
        let gbps = bytes * 8.0 / (span as f64 / CLOCK_HZ as f64) / 1e9;
        let tlps = p.stats().cpl_tlps as f64;
        let expect = crate::config::PCIE_GEN3_X16_GBPS * bytes / (bytes + tlps * 24.0);
        assert!((gbps - expect).abs() / expect < 0.01, "got {gbps:.2} Gb/s, expected {expect:.2} ({tlps} TLPs)");
        // Completions of 64..=256 bytes: between 64/88 and 256/280 of the link.
        assert!(tlps > 1600.0 * 2.0 && tlps < 1600.0 * 8.0, "{tlps} TLPs for 1600 reads of 512 B");
    }

    #[test]
    #[should_panic(expected = "PCIe rule broken")]
    fn a_read_across_a_4k_page_is_a_front_end_bug() {
        let mut mem = HostMem::new(1 << 20);
        let b = mem.alloc(8192, RW).unwrap();
        let mut p = Pcie::new(&SimConfig::default(), 0);
        p.rq(0, b.bus_addr + 4000, 200, 0, &mut mem);
    }

    #[test]
    #[should_panic(expected = "tag 3 reused")]
    fn a_tag_in_flight_cannot_be_reused() {
        let mut mem = HostMem::new(1 << 20);
        let b = mem.alloc(8192, RW).unwrap();
        let mut p = Pcie::new(&SimConfig::default(), 0);
        p.rq(0, b.bus_addr, 64, 3, &mut mem);
        p.rq(1, b.bus_addr + 64, 64, 3, &mut mem);
    }

    #[test]
    #[should_panic(expected = "PCIe rule broken")]
    fn a_write_longer_than_mps_is_a_front_end_bug() {
        let mut mem = HostMem::new(1 << 20);
        let b = mem.alloc(8192, RW).unwrap();
        let mut p = Pcie::new(&SimConfig::default(), 0);
        p.wr_beat(0, true, false, b.bus_addr, 320, &[0; 64], u64::MAX, &mut mem);
    }

    #[test]
    #[should_panic(expected = "PCIe rule broken")]
    fn a_write_across_a_4k_page_is_a_front_end_bug() {
        let mut mem = HostMem::new(1 << 20);
        let b = mem.alloc(8192, RW).unwrap();
        let mut p = Pcie::new(&SimConfig::default(), 0);
        p.wr_beat(0, true, false, b.bus_addr + 4032, 128, &[0; 64], u64::MAX, &mut mem);
    }

    #[test]
    #[should_panic(expected = "byte enables")]
    fn write_byte_enables_must_match_the_descriptor() {
        let mut mem = HostMem::new(1 << 20);
        let b = mem.alloc(8192, RW).unwrap();
        let mut p = Pcie::new(&SimConfig::default(), 0);
        p.wr_beat(0, true, true, b.bus_addr + 8, 16, &[0; 64], 0xffff, &mut mem);
    }

    #[test]
    fn writes_land_after_half_rtt_in_order_and_are_rate_limited() {
        let cfg = SimConfig::default();
        let mut mem = HostMem::new(1 << 24);
        let b = mem.alloc(1 << 20, RW).unwrap();
        let mut p = Pcie::new(&cfg, 0);
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
                // TLPs of 256 bytes: four beats each.
                let data = [if accepted == 0 { 0xAA } else { accepted as u8 }; 64];
                let addr = b.bus_addr + accepted * 64 % (1 << 20);
                p.wr_beat(
                    now,
                    accepted.is_multiple_of(4),
                    accepted % 4 == 3,
                    addr & !255,
                    256,
                    &data,
                    u64::MAX,
                    &mut mem,
                );
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
        let mut p = Pcie::new(&cfg, 0);
        p.begin_cycle(0, &mut mem);
        p.wr_beat(0, true, true, ro.bus_addr, 64, &[1; 64], u64::MAX, &mut mem);
        p.rq(0, wo.bus_addr, 64, 1, &mut mem);
        p.rq(0, ro.bus_addr + 100, 64, 2, &mut mem);
        p.wr_beat(0, true, true, HOST_MEM_BASE + (1 << 19), 8, &[1; 64], 0xff, &mut mem);
        let v = p.violations().to_vec();
        assert_eq!(v.len(), 4);
        assert_eq!((v[0].dir, v[0].addr, v[0].len), (DmaDir::Write, ro.bus_addr, 64));
        assert_eq!((v[1].dir, v[1].addr), (DmaDir::Read, wo.bus_addr));
        assert_eq!((v[2].dir, v[2].addr), (DmaDir::Read, ro.bus_addr + 100));
        assert_eq!(v[3].dir, DmaDir::Write);
        let mut seen = Vec::new();
        for now in 1..600 {
            p.begin_cycle(now, &mut mem);
            if let Some(b) = p.rc() {
                seen.push(*b);
            }
        }
        assert!(seen.iter().filter(|b| b.done).count() == 2, "denied reads still complete");
        for b in &seen {
            let lane = b.addr as usize % 64;
            let n = if b.tag == 1 { 64 - lane } else { (64 - lane).min(28) };
            assert!(b.data[lane..lane + n].iter().all(|&x| x == 0), "denied reads return zeros, not memory");
        }
        let mut x = [9u8; 128];
        mem.read(ro.bus_addr, &mut x).unwrap();
        assert_eq!(x, [0; 128], "denied writes are not applied");
    }
}
