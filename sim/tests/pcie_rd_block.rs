//! The DMA front end's read side (`rnic_hw::pcie_rd`) in Verilator against
//! the simulator's PCIe model (`rnic_sim::pcie`): completions out of order
//! across tags, split at random RCB multiples, address-aligned with
//! leftover bytes in unused lanes, never refusable. The reference is host
//! memory itself: every core request must come back in request order, each
//! beat packed from lane 0 with the request's bytes, zero past its length,
//! its tag, and `last` on its final beat. The PCIe model panics on a request
//! that breaks PCIe's rules (longer than MRRS, across a 4 KiB page, a tag
//! reused while in flight).
//!
//! A read is released whole, so with a ready core its beats come one a
//! cycle without a gap (the TX builder relies on it).
//!
//! Random stimulus per seed: MRRS, MPS, RCB, round trip and jitter; core
//! requests of every length residue and the edges (1, 63..65, 4033..4096)
//! at every address residue and next to 4 KiB pages; back-pressure from the
//! core. `RNIC_PCIE_BLOCK_ITERS` sets the seed count (default 24) and
//! `RNIC_PCIE_BLOCK_SEED` replays one seed.

use rnic_driver::DmaAccess;
use rnic_sim::mem::HostMem;
use rnic_sim::model::{Model, PortId};
use rnic_sim::pcie::{Pcie, RcPorts};
use rnic_sim::rng::SplitMix as Rng;
use rnic_sim::SimConfig;
use rnic_spec::params::{pcie_size_code, CLOCK_HZ, DMA_RD_MAX_LEN};
use std::collections::VecDeque;

mod common;
use common::p;

struct Ports {
    cfg_mrrs: PortId,
    req_valid: PortId,
    req_ready: PortId,
    req_addr: PortId,
    req_len: PortId,
    req_tag: PortId,
    cpl_valid: PortId,
    cpl_ready: PortId,
    cpl_data: PortId,
    cpl_tag: PortId,
    cpl_last: PortId,
    rq_valid: PortId,
    rq_ready: PortId,
    rq_addr: PortId,
    rq_len: PortId,
    rq_tag: PortId,
    rc: RcPorts,
}

impl Ports {
    fn new(m: &Model) -> Ports {
        Ports {
            cfg_mrrs: p(m, "cfg_mrrs"),
            req_valid: p(m, "req_valid"),
            req_ready: p(m, "req_ready"),
            req_addr: p(m, "req_addr"),
            req_len: p(m, "req_len"),
            req_tag: p(m, "req_tag"),
            cpl_valid: p(m, "cpl_valid"),
            cpl_ready: p(m, "cpl_ready"),
            cpl_data: p(m, "cpl_data"),
            cpl_tag: p(m, "cpl_tag"),
            cpl_last: p(m, "cpl_last"),
            rq_valid: p(m, "rq_valid"),
            rq_ready: p(m, "rq_ready"),
            rq_addr: p(m, "rq_addr"),
            rq_len: p(m, "rq_len"),
            rq_tag: p(m, "rq_tag"),
            rc: RcPorts::resolve(m, "rc_").unwrap_or_else(|e| panic!("{e}")),
        }
    }
}

const BUF: u64 = 1 << 20;

/// A core request: bus address, length, tag.
#[derive(Clone, Copy, Debug)]
struct Req {
    addr: u64,
    len: u32,
    tag: u8,
}

fn pick_len(r: &mut Rng) -> u32 {
    match r.below(6) {
        0 => r.range(1, 130) as u32,
        1 => r.range(DMA_RD_MAX_LEN as u64 - 130, DMA_RD_MAX_LEN as u64) as u32,
        2 => r.pick(&[1, 63, 64, 65, 127, 128, 129, 512, 4032, 4033, 4095, 4096]),
        _ => r.range(1, DMA_RD_MAX_LEN as u64) as u32,
    }
}

fn pick_req(r: &mut Rng, base: u64) -> Req {
    let len = pick_len(r);
    let off = match r.below(3) {
        // Next to a 4 KiB page boundary.
        0 => (r.range(1, BUF / 4096 - 2) * 4096).wrapping_sub(r.below(130)),
        _ => r.below(BUF - 4096),
    }
    .min(BUF - DMA_RD_MAX_LEN as u64);
    Req { addr: base + off, len, tag: r.next() as u8 }
}

/// Runs one seed; returns the PCIe read requests it took.
fn run_seed(seed: u64, nreq: usize) -> u64 {
    let mut r = Rng::new(seed);
    let mps = r.pick(&[128u32, 256, 256, 512]);
    let cfg = SimConfig {
        pcie_rtt_ns: r.pick(&[40, 200, 1000, 1000, 2000]) + r.below(100),
        pcie_jitter_ns: r.pick(&[0, 50, 200, 800]),
        pcie_mps: mps,
        pcie_mrrs: r.pick(&[128, 256, 512, 512, 1024, 2048, 4096]),
        pcie_rcb: if mps >= 128 && r.pct(30) { 128 } else { 64 },
        pcie_seed: r.next(),
        ..SimConfig::default()
    };
    let ready_pct = r.pick(&[100u32, 100, 90, 50, 10]);
    let mut mem = HostMem::new(4 * BUF);
    let buf = mem.alloc(BUF as usize, DmaAccess { device_read: true, device_write: true }).unwrap();
    let pattern: Vec<u8> = (0..BUF).map(|_| r.next() as u8).collect();
    mem.write(buf.bus_addr, &pattern).unwrap();
    let mut pcie = Pcie::new(&cfg, 0);
    let mut m = Model::new("pcie_rd").unwrap();
    let ps = Ports::new(&m);
    m.set(ps.cfg_mrrs, pcie_size_code(cfg.pcie_mrrs) as u64);
    let reqs: Vec<Req> = (0..nreq).map(|_| pick_req(&mut r, buf.bus_addr)).collect();
    let ctx = format!(
        "seed {seed:#x} (replay: RNIC_PCIE_BLOCK_SEED={seed:#x}); rtt {} ns, jitter {} ns, MPS {}, MRRS {}, RCB {}, ready {}%",
        cfg.pcie_rtt_ns, cfg.pcie_jitter_ns, cfg.pcie_mps, cfg.pcie_mrrs, cfg.pcie_rcb, ready_pct
    );
    let mut next = 0;
    let mut outstanding: VecDeque<(Req, u32)> = VecDeque::new();
    let mut accepted = Vec::new();
    let mut split = (0usize, 0u32);
    let mut done = 0;
    let mut bytes = 0u64;
    let mut beat = [0u8; 64];
    let deadline = 200_000 + nreq as u64 * 2_000;
    let mut now = 0;
    while done < nreq {
        assert!(now < deadline, "{ctx}: {done} of {nreq} requests completed by cycle {now}");
        pcie.begin_cycle(now, &mut mem);
        let rq_ready = pcie.rq_ready() && r.pct(95);
        m.set(ps.rq_ready, rq_ready as u64);
        ps.rc.drive(&mut m, &pcie);
        let offer = next < nreq && r.pct(80);
        if offer {
            let q = reqs[next];
            m.set(ps.req_addr, q.addr);
            m.set(ps.req_len, q.len as u64);
            m.set(ps.req_tag, q.tag as u64);
        }
        m.set(ps.req_valid, offer as u64);
        let cpl_ready = r.pct(ready_pct);
        m.set(ps.cpl_ready, cpl_ready as u64);
        m.clock_low();
        if offer && m.get(ps.req_ready) != 0 {
            outstanding.push_back((reqs[next], 0));
            accepted.push(reqs[next]);
            next += 1;
        }
        if rq_ready && m.get(ps.rq_valid) != 0 {
            let (a, l, t) = (m.get(ps.rq_addr), m.get(ps.rq_len) as u32, m.get(ps.rq_tag) as u8);
            // Requests are split one after another, each into consecutive pieces.
            let q = *accepted.get(split.0).unwrap_or_else(|| panic!("{ctx}: PCIe read at {a:#x} with nothing asked"));
            assert_eq!(a, q.addr + split.1 as u64, "{ctx}: PCIe read of {l} bytes: not the next piece of {q:x?}");
            assert!(split.1 + l <= q.len, "{ctx}: PCIe read at {a:#x}+{l} runs past its core request {q:x?}");
            split.1 += l;
            if split.1 == q.len {
                split = (split.0 + 1, 0);
            }
            pcie.rq(now, a, l, t, &mut mem);
        }
        // A read is released whole: once its first beat is out, a ready core gets a beat every cycle.
        if ready_pct == 100 && outstanding.front().is_some_and(|(_, sent)| *sent > 0) {
            assert!(m.get(ps.cpl_valid) != 0, "{ctx}: a gap inside request {done} at cycle {now}");
        }
        if cpl_ready && m.get(ps.cpl_valid) != 0 {
            let (q, sent) =
                outstanding.front_mut().unwrap_or_else(|| panic!("{ctx}: a completion beat with nothing asked"));
            m.get_bytes(ps.cpl_data, &mut beat);
            let n = (q.len - *sent).min(64) as usize;
            let off = (q.addr - buf.bus_addr) as usize + *sent as usize;
            let last = *sent + 64 >= q.len;
            let what = format!("{ctx}: request {done} ({q:x?}), bytes {sent}..{} at cycle {now}", *sent as usize + n);
            assert_eq!(&beat[..n], &pattern[off..off + n], "{what}: data");
            assert!(beat[n..].iter().all(|&x| x == 0), "{what}: bytes past the length are not zero");
            assert_eq!(m.get(ps.cpl_tag) as u8, q.tag, "{what}: tag");
            assert_eq!(m.get(ps.cpl_last) != 0, last, "{what}: last");
            *sent += n as u32;
            bytes += n as u64;
            if last {
                outstanding.pop_front();
                done += 1;
            }
        }
        m.clock_high();
        now += 1;
    }
    // Nothing is left over: no stray beat, nothing in flight at PCIe.
    for _ in 0..2_000 {
        pcie.begin_cycle(now, &mut mem);
        assert!(pcie.rc().is_none(), "{ctx}: a completion beat after every request finished");
        ps.rc.drive(&mut m, &pcie);
        m.set(ps.req_valid, 0);
        m.set(ps.cpl_ready, 1);
        m.clock_low();
        assert_eq!(m.get(ps.cpl_valid), 0, "{ctx}: a beat to the core after every request finished");
        assert_eq!(m.get(ps.rq_valid), 0, "{ctx}: a PCIe read after every request finished");
        m.clock_high();
        now += 1;
    }
    assert_eq!(pcie.reads_in_flight(), 0, "{ctx}: PCIe reads left in flight");
    assert!(pcie.violations().is_empty(), "{ctx}: reads outside the buffer: {:?}", pcie.violations());
    let asked: u64 = reqs.iter().map(|q| q.len as u64).sum();
    assert_eq!(bytes, asked, "{ctx}: bytes delivered");
    assert_eq!(pcie.stats().rd_bytes, asked, "{ctx}: bytes read over PCIe");
    pcie.stats().rd_reqs
}

#[test]
fn every_read_comes_back_whole_and_in_order_over_out_of_order_split_completions() {
    let seeds: Vec<u64> = match std::env::var("RNIC_PCIE_BLOCK_SEED") {
        Ok(s) => vec![u64::from_str_radix(s.trim_start_matches("0x"), 16).expect("hex seed")],
        Err(_) => {
            let n = std::env::var("RNIC_PCIE_BLOCK_ITERS").ok().and_then(|s| s.parse().ok()).unwrap_or(24u64);
            (0..n).map(|i| 0x9C1E_0000 + i).collect()
        }
    };
    for seed in seeds {
        let pcie_reqs = run_seed(seed, 400);
        assert!(pcie_reqs >= 400, "seed {seed:#x}: every core request is at least one PCIe read");
    }
}

/// Line rate through the front end: 4 KiB reads, always-ready core, default
/// PCIe. Prints the rate (a benchmark figure, not asserted beyond making progress).
#[test]
fn sustained_rate_of_4k_reads() {
    let cfg = SimConfig::default();
    let mut mem = HostMem::new(4 * BUF);
    let buf = mem.alloc(BUF as usize, DmaAccess { device_read: true, device_write: true }).unwrap();
    let mut pcie = Pcie::new(&cfg, 0);
    let mut m = Model::new("pcie_rd").unwrap();
    let ps = Ports::new(&m);
    m.set(ps.cfg_mrrs, pcie_size_code(cfg.pcie_mrrs) as u64);
    m.set(ps.cpl_ready, 1);
    let (mut next, mut beats, mut first, mut lastc) = (0u64, 0u64, None, 0u64);
    for now in 0..40_000u64 {
        pcie.begin_cycle(now, &mut mem);
        m.set(ps.rq_ready, pcie.rq_ready() as u64);
        ps.rc.drive(&mut m, &pcie);
        m.set(ps.req_addr, buf.bus_addr + (next * 4096) % BUF);
        m.set(ps.req_len, 4096);
        m.set(ps.req_valid, 1);
        m.clock_low();
        if m.get(ps.req_ready) != 0 {
            next += 1;
        }
        if pcie.rq_ready() && m.get(ps.rq_valid) != 0 {
            pcie.rq(now, m.get(ps.rq_addr), m.get(ps.rq_len) as u32, m.get(ps.rq_tag) as u8, &mut mem);
        }
        if m.get(ps.cpl_valid) != 0 {
            beats += 1;
            first.get_or_insert(now);
            lastc = now;
        }
        m.clock_high();
    }
    let first = first.expect("completions arrived");
    let gbps = beats as f64 * 512.0 / ((lastc - first + 1) as f64 / CLOCK_HZ as f64) / 1e9;
    eprintln!("4 KiB reads through the DMA front end: {gbps:.2} Gb/s of payload ({beats} beats)");
    assert!(beats > 10_000, "the front end keeps reads going ({beats} beats)");
}
