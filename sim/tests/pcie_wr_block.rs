//! The DMA front end's write side (`rnic_hw::pcie_wr`) in Verilator against
//! the simulator's PCIe model, which panics on a write TLP that breaks
//! PCIe's rules (longer than MPS, across a 4 KiB page) or whose beats do
//! not match its descriptor (byte enables, last flag). The reference is a
//! replay of the core's writes, in order, on a copy of host memory: after
//! every write has landed the two must be equal byte for byte, so a lost,
//! misplaced, reordered or widened write fails.
//!
//! Random stimulus per seed: MPS; runs of contiguous bytes (like a
//! packet's placement) cut into beats of 1..=64 bytes at every address
//! residue, half of them from a lane inside the beat (a scatter list's
//! pieces), lone short writes (like CQEs), writes over earlier ones (order
//! matters), idle gaps and back-pressure from PCIe. `RNIC_PCIE_BLOCK_ITERS`
//! sets the seed count (default 24), `RNIC_PCIE_BLOCK_SEED` replays one.

use rnic_driver::DmaAccess;
use rnic_sim::mem::HostMem;
use rnic_sim::model::{Model, PortId};
use rnic_sim::pcie::Pcie;
use rnic_sim::rng::SplitMix as Rng;
use rnic_sim::SimConfig;
use rnic_spec::params::{pcie_size_code, CLOCK_HZ};

mod common;
use common::p;

struct Ports {
    cfg_mps: PortId,
    wr_valid: PortId,
    wr_ready: PortId,
    wr_addr: PortId,
    wr_data: PortId,
    wr_len: PortId,
    wr_lane: PortId,
    rqw_valid: PortId,
    rqw_ready: PortId,
    rqw_first: PortId,
    rqw_last: PortId,
    rqw_addr: PortId,
    rqw_len: PortId,
    rqw_data: PortId,
    rqw_keep: PortId,
    accepted: PortId,
    retired: PortId,
}

impl Ports {
    fn new(m: &Model) -> Ports {
        Ports {
            cfg_mps: p(m, "cfg_mps"),
            wr_valid: p(m, "wr_valid"),
            wr_ready: p(m, "wr_ready"),
            wr_addr: p(m, "wr_addr"),
            wr_data: p(m, "wr_data"),
            wr_len: p(m, "wr_len"),
            wr_lane: p(m, "wr_lane"),
            rqw_valid: p(m, "rqw_valid"),
            rqw_ready: p(m, "rqw_ready"),
            rqw_first: p(m, "rqw_first"),
            rqw_last: p(m, "rqw_last"),
            rqw_addr: p(m, "rqw_addr"),
            rqw_len: p(m, "rqw_len"),
            rqw_data: p(m, "rqw_data"),
            rqw_keep: p(m, "rqw_keep"),
            accepted: p(m, "accepted"),
            retired: p(m, "retired"),
        }
    }
}

const BUF: u64 = 1 << 18;

/// One core write: address, bytes (1..=64) and the beat lane they start at.
struct Write {
    addr: u64,
    data: Vec<u8>,
    lane: usize,
}

/// A stream of core writes: contiguous runs cut into beats, lone short
/// writes, and writes over earlier bytes.
fn writes(r: &mut Rng, base: u64, n: usize) -> Vec<Write> {
    let mut out = Vec::new();
    while out.len() < n {
        let start = r.below(BUF - 20_000);
        match r.below(4) {
            0 => {
                let len = r.range(1, 64) as usize;
                out.push(Write { addr: base + start, data: (0..len).map(|_| r.next() as u8).collect(), lane: 0 });
            }
            _ => {
                // A run: next to a 4 KiB page end a third of the time.
                let at = if r.pct(33) { (start | 4095) - r.below(200) } else { start };
                let total = r.range(1, 9000);
                let mut off = 0;
                // Beats of 64 after a first one that reaches a block boundary, or random cuts.
                let aligned_cuts = r.pct(50);
                while off < total {
                    let a = base + at + off;
                    let max = if aligned_cuts { 64 - a % 64 } else { r.range(1, 64) };
                    let len = max.min(total - off) as usize;
                    out.push(Write { addr: a, data: (0..len).map(|_| r.next() as u8).collect(), lane: 0 });
                    off += len as u64;
                }
            }
        }
    }
    // Half the writes start mid-beat (a scatter list's pieces do), at any lane that holds them.
    for w in &mut out {
        if r.pct(50) {
            w.lane = r.below(65 - w.data.len() as u64) as usize;
        }
    }
    out
}

/// Runs `ws` through the front end into the PCIe model; returns the cycle of
/// the last beat to PCIe and the TLP count. Checks the write counters the
/// core's register-read ordering relies on.
fn run(seed: u64, mps: u32, ws: &[Write], ready_pct: u32, gap_pct: u32, mem: &mut HostMem) -> (u64, u64) {
    let cfg = SimConfig { pcie_mps: mps, pcie_seed: seed, ..SimConfig::default() };
    let mut r = Rng::new(seed ^ 0x77);
    let mut pcie = Pcie::new(&cfg, 0);
    let mut m = Model::new("pcie_wr").unwrap();
    let ps = Ports::new(&m);
    m.set(ps.cfg_mps, pcie_size_code(mps) as u64);
    let mut next = 0;
    let mut beat = [0u8; 64];
    let mut now = 0;
    let mut quiet = 0;
    // Bytes of the writes before write i, and bytes sent to PCIe so far.
    let prefix: Vec<u64> = std::iter::once(0)
        .chain(ws.iter().scan(0u64, |acc, w| {
            *acc += w.data.len() as u64;
            Some(*acc)
        }))
        .collect();
    let mut sent_bytes = 0u64;
    let mut last_send = 0;
    let deadline = 100_000 + ws.len() as u64 * 50;
    // Until every write is taken and the front end and PCIe have been quiet a while.
    while next < ws.len() || quiet < 200 {
        assert!(now < deadline, "seed {seed:#x}: {next} of {} writes taken by cycle {now}", ws.len());
        pcie.begin_cycle(now, mem);
        let rdy = pcie.wr_ready() && r.pct(ready_pct);
        m.set(ps.rqw_ready, rdy as u64);
        let offer = next < ws.len() && !r.pct(gap_pct);
        if offer {
            let w = &ws[next];
            // Bytes outside the write's lanes are not the front end's to write.
            let mut d: [u8; 64] = std::array::from_fn(|_| r.next() as u8);
            d[w.lane..w.lane + w.data.len()].copy_from_slice(&w.data);
            m.set(ps.wr_addr, w.addr);
            m.set_bytes(ps.wr_data, &d);
            m.set(ps.wr_len, w.data.len() as u64);
            m.set(ps.wr_lane, w.lane as u64);
        }
        m.set(ps.wr_valid, offer as u64);
        m.clock_low();
        let mut busy = false;
        if offer && m.get(ps.wr_ready) != 0 {
            next += 1;
            busy = true;
        }
        assert_eq!(m.get(ps.accepted) as usize, next % 65536, "seed {seed:#x}: writes taken (cycle {now})");
        // A write counts as retired only once every byte of it has gone to PCIe (bytes leave in order).
        let retired = m.get(ps.retired) as usize;
        let before = next - (next - retired) % 65536;
        assert!(
            sent_bytes >= prefix[before],
            "seed {seed:#x}: {before} writes retired at cycle {now}, but only {sent_bytes} of their {} bytes were sent",
            prefix[before]
        );
        if rdy && m.get(ps.rqw_valid) != 0 {
            m.get_bytes(ps.rqw_data, &mut beat);
            pcie.wr_beat(
                now,
                m.get(ps.rqw_first) != 0,
                m.get(ps.rqw_last) != 0,
                m.get(ps.rqw_addr),
                m.get(ps.rqw_len) as u32,
                &beat,
                m.get(ps.rqw_keep),
                mem,
            );
            sent_bytes += m.get(ps.rqw_keep).count_ones() as u64;
            last_send = now;
            busy = true;
        }
        busy |= m.get(ps.rqw_valid) != 0 || pcie.writes_in_flight() > 0;
        quiet = if busy { 0 } else { quiet + 1 };
        m.clock_high();
        now += 1;
    }
    assert!(pcie.violations().is_empty(), "seed {seed:#x}: writes outside the buffer: {:?}", pcie.violations());
    assert_eq!(m.get(ps.retired) as usize, ws.len() % 65536, "seed {seed:#x}: every write retires");
    assert_eq!(sent_bytes, prefix[ws.len()], "seed {seed:#x}: bytes sent to PCIe");
    (last_send, pcie.stats().wr_tlps)
}

#[test]
fn every_write_lands_once_in_order_in_legal_tlps() {
    let seeds: Vec<u64> = match std::env::var("RNIC_PCIE_BLOCK_SEED") {
        Ok(s) => vec![u64::from_str_radix(s.trim_start_matches("0x"), 16).expect("hex seed")],
        Err(_) => {
            let n = std::env::var("RNIC_PCIE_BLOCK_ITERS").ok().and_then(|s| s.parse().ok()).unwrap_or(24u64);
            (0..n).map(|i| 0x3C1E_0000 + i).collect()
        }
    };
    for seed in seeds {
        let mut r = Rng::new(seed);
        let mps = r.pick(&[128u32, 256, 256, 512, 1024]);
        let ready_pct = r.pick(&[100u32, 100, 70, 20]);
        let gap_pct = r.pick(&[0u32, 0, 10, 60]);
        let mut mem = HostMem::new(4 * BUF);
        let buf = mem.alloc(BUF as usize, DmaAccess { device_read: true, device_write: true }).unwrap();
        let init: Vec<u8> = (0..BUF).map(|_| r.next() as u8).collect();
        mem.write(buf.bus_addr, &init).unwrap();
        let ws = writes(&mut r, buf.bus_addr, 600);
        let mut want = init.clone();
        for w in &ws {
            let o = (w.addr - buf.bus_addr) as usize;
            want[o..o + w.data.len()].copy_from_slice(&w.data);
        }
        run(seed, mps, &ws, ready_pct, gap_pct, &mut mem);
        let mut got = vec![0u8; BUF as usize];
        mem.read(buf.bus_addr, &mut got).unwrap();
        if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
            panic!(
                "seed {seed:#x} (replay: RNIC_PCIE_BLOCK_SEED={seed:#x}; MPS {mps}, ready {ready_pct}%, gaps {gap_pct}%): \
                 byte {:#x} is {:#x}, the writes in order leave {:#x}",
                buf.bus_addr + i as u64,
                got[i],
                want[i]
            );
        }
    }
}

/// Contiguous full beats from an MPS-aligned address become exactly one TLP per MPS bytes.
#[test]
fn contiguous_beats_coalesce_into_mps_sized_tlps() {
    for mps in [128u32, 256, 512] {
        let mut mem = HostMem::new(4 * BUF);
        let buf = mem.alloc(BUF as usize, DmaAccess { device_read: true, device_write: true }).unwrap();
        let ws: Vec<Write> =
            (0..1024u64).map(|i| Write { addr: buf.bus_addr + i * 64, data: vec![i as u8; 64], lane: 0 }).collect();
        let (cycles, tlps) = run(1, mps, &ws, 100, 0, &mut mem);
        assert_eq!(tlps, 1024 * 64 / mps as u64, "MPS {mps}");
        let gbps = 1024.0 * 512.0 / (cycles as f64 / CLOCK_HZ as f64) / 1e9;
        eprintln!("MPS {mps}: 64 KiB of contiguous writes in {tlps} TLPs, {gbps:.1} Gb/s including the PCIe model's rate limit");
    }
}
