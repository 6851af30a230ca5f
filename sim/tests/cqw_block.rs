//! Block-level Verilator test of the completion writer (`hw/src/cqw.rs`,
//! top "cq_writer") against a reference model, with random stimulus.
//!
//! The harness plays the core around it: the CQ table and the CQ producer
//! index table are Rust arrays with the core's block-RAM timing (`read_data`
//! after a clock edge is the content, before that edge's write, at the
//! address presented in the cycle before the edge); completion requests
//! arrive with random gaps; the DMA write port is randomly not ready.
//! Checked on every cycle: each request taken is written exactly once, in
//! order, as the 32-byte CQE `rnic_spec::desc::Cqe` the host reads (fields,
//! owner bit of the current pass over the ring), at `base + (PI mod size) x
//! 32`; the producer index is bumped in the same cycle the write is taken,
//! and at no other time; `cnt_cqe` pulses once per CQE. When the stimulus
//! stops, everything is written within a bounded number of cycles.
//!
//! Two parameter sets: tiny CQs (1 to 4 entries, the owner bit flips every
//! few CQEs) with a mostly busy DMA port, and large CQs at random bases
//! (including bases near the top of the 64-bit space) with a mostly ready
//! port. Every CQ number up to the highest is used.

mod common;

use rnic_hw::desc::CqReqPack;
use rnic_hw::pack::pack_words;
use rnic_sim::model::{Model, PortId};
use rnic_sim::rng::SplitMix as Rng;
use rnic_spec::desc::{Cqe, CQE_BYTES};
use rnic_spec::params::NUM_CQS;
use std::collections::VecDeque;
use zerocopy::FromBytes;

/// One completion request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Req {
    cqn: u16,
    idx: u16,
    status: u8,
    op: u8,
    len: u32,
    qpn: u8,
}

/// What a test fixes.
struct Spec {
    name: &'static str,
    seeds: &'static [u64],
    /// log2 of the CQ sizes: drawn from this range.
    log2: std::ops::RangeInclusive<u32>,
    /// Probability (percent) that the DMA port is ready in a cycle.
    wr_ready_pct: u64,
    /// Probability (percent) that a new request is offered in a cycle.
    req_pct: u64,
    requests: usize,
}

struct Ports {
    req_valid: PortId,
    req_ready: PortId,
    req_data: PortId,
    cq_addr: PortId,
    cq_data: PortId,
    cqpi_data: PortId,
    cqpi_we: PortId,
    cqpi_wdata: PortId,
    wr_valid: PortId,
    wr_ready: PortId,
    wr_addr: PortId,
    wr_data: PortId,
    wr_len: PortId,
    cnt_cqe: PortId,
    idle: PortId,
}

fn ports(m: &Model) -> Ports {
    let p = |n: &str| m.port(n).unwrap_or_else(|e| panic!("{e}"));
    Ports {
        req_valid: p("req_valid"),
        req_ready: p("req_ready"),
        req_data: p("req_data"),
        cq_addr: p("cq_addr"),
        cq_data: p("cq_data"),
        cqpi_data: p("cqpi_data"),
        cqpi_we: p("cqpi_we"),
        cqpi_wdata: p("cqpi_wdata"),
        wr_valid: p("wr_valid"),
        wr_ready: p("wr_ready"),
        wr_addr: p("wr_addr"),
        wr_data: p("wr_data"),
        wr_len: p("wr_len"),
        cnt_cqe: p("cnt_cqe"),
        idle: p("idle"),
    }
}

fn req_words(r: &Req) -> Vec<u32> {
    pack_words(
        CqReqPack::FIELDS,
        CqReqPack::WIDTH,
        &[
            ("cqn", r.cqn as u64),
            ("idx", r.idx as u64),
            ("status", r.status as u64),
            ("op", r.op as u64),
            ("len", r.len as u64),
            ("qpn", r.qpn as u64),
        ],
    )
}

fn run(spec: &Spec, seed: u64) -> Result<(), String> {
    let mut m = Model::new("cq_writer").map_err(|e| e.to_string())?;
    let p = ports(&m);
    let mut r = Rng::new(seed);
    // CQ table: (base, log2); producer indices.
    let cqs: Vec<(u64, u32)> = (0..NUM_CQS)
        .map(|i| {
            let log2 = spec.log2.start() + r.below((spec.log2.end() - spec.log2.start() + 1) as u64) as u32;
            let base = match i % 3 {
                0 => r.next() & !31,
                1 => (u64::MAX - ((1u64 << log2) * 32) / 2) & !31,
                _ => r.below(1 << 40) << 5,
            };
            (base, log2)
        })
        .collect();
    let mut pi_ram: Vec<u32> = (0..NUM_CQS).map(|_| r.next() as u32).collect();
    let mut model_pi = pi_ram.clone();
    let (mut cq_rd, mut pi_rd) = (0usize, 0u32);
    let mut pending: VecDeque<Req> = VecDeque::new();
    let mut taken: VecDeque<Req> = VecDeque::new();
    let mut offered: Option<Req> = None;
    let (mut made, mut written) = (0usize, 0usize);
    let mut quiet = 0u64;
    for cycle in 0u64.. {
        let ctx = |what: String| format!("{} seed {seed:#x} cycle {cycle}: {what}", spec.name);
        if made < spec.requests && r.below(100) < spec.req_pct {
            let cqn = if made % 17 == 0 { (NUM_CQS - 1) as u16 } else { r.below(NUM_CQS as u64) as u16 };
            pending.push_back(Req {
                cqn,
                idx: r.next() as u16,
                status: r.next() as u8,
                op: r.next() as u8,
                len: r.next() as u32,
                qpn: r.next() as u8,
            });
            made += 1;
        }
        if offered.is_none() {
            offered = pending.pop_front();
        }
        m.set(p.req_valid, offered.is_some() as u64);
        m.set_wide(p.req_data, &offered.map(|o| req_words(&o)).unwrap_or_else(|| vec![0; 3]));
        let wr_ready = r.below(100) < spec.wr_ready_pct;
        m.set(p.wr_ready, wr_ready as u64);
        let (base, log2) = cqs[cq_rd];
        m.set_wide(p.cq_data, &[base as u32, (base >> 32) as u32, log2, 0]);
        m.set(p.cqpi_data, pi_rd as u64);
        m.clock_low();
        if offered.is_some() && m.get(p.req_ready) != 0 {
            taken.push_back(offered.take().expect("offered"));
        }
        let wrote = m.get(p.wr_valid) != 0 && wr_ready;
        if wrote {
            let want = taken.pop_front().ok_or_else(|| ctx("a DMA write with no completion request taken".into()))?;
            let cqn = want.cqn as usize;
            let (base, log2) = cqs[cqn];
            let pi = model_pi[cqn];
            let addr = base.wrapping_add(((pi & ((1u32 << log2) - 1)) as u64) << 5);
            if m.get(p.wr_addr) != addr || m.get(p.wr_len) != CQE_BYTES as u64 {
                return Err(ctx(format!(
                    "CQE of {want:?} written at {:#x} len {}, want {addr:#x} len {CQE_BYTES} (CQ {cqn} PI {pi:#x} log2 {log2})",
                    m.get(p.wr_addr),
                    m.get(p.wr_len)
                )));
            }
            let mut beat = vec![0u8; 64];
            m.get_bytes(p.wr_data, &mut beat);
            let cqe = Cqe::read_from_bytes(&beat[..CQE_BYTES]).map_err(|_| ctx("CQE bytes".into()))?;
            let owner = (((pi >> log2) & 1) ^ 1) as u8;
            let ok = cqe.wqe_index.get() == want.idx
                && cqe.status == want.status
                && cqe.opcode == want.op
                && cqe.qpn.get() == want.qpn as u32
                && cqe.byte_len.get() == want.len
                && cqe.rsvd.iter().all(|&b| b == 0)
                && cqe.owner == owner;
            if !ok {
                return Err(ctx(format!("CQE {cqe:?} for request {want:?}, owner want {owner} (PI {pi:#x})")));
            }
            if m.get(p.cqpi_we) == 0 || m.get(p.cqpi_wdata) != pi.wrapping_add(1) as u64 {
                return Err(ctx(format!(
                    "CQE taken but PI write we={} data={:#x}, want {:#x}",
                    m.get(p.cqpi_we),
                    m.get(p.cqpi_wdata),
                    pi.wrapping_add(1)
                )));
            }
            if m.get(p.cq_addr) != cqn as u64 {
                return Err(ctx(format!("PI written at CQ {}, want {cqn}", m.get(p.cq_addr))));
            }
            model_pi[cqn] = pi.wrapping_add(1);
            written += 1;
        } else if m.get(p.cqpi_we) != 0 {
            return Err(ctx("PI written without a CQE".into()));
        }
        if (m.get(p.cnt_cqe) != 0) != wrote {
            return Err(ctx(format!("cnt_cqe={} but CQE taken={wrote}", m.get(p.cnt_cqe))));
        }
        // Block RAMs: read data is the content before this edge's write.
        let addr = m.get(p.cq_addr) as usize;
        cq_rd = addr;
        pi_rd = pi_ram[addr];
        if m.get(p.cqpi_we) != 0 {
            pi_ram[addr] = m.get(p.cqpi_wdata) as u32;
        }
        m.clock_high();
        let idle = made == spec.requests && pending.is_empty() && offered.is_none() && taken.is_empty();
        if idle {
            quiet += 1;
            if quiet > 8 {
                if m.get(p.idle) == 0 {
                    return Err(ctx("all written but the writer is not idle".into()));
                }
                break;
            }
        } else if made == spec.requests {
            quiet += 1;
            if quiet > 50 * spec.requests as u64 {
                return Err(ctx(format!("{} requests never written", taken.len() + pending.len())));
            }
        }
    }
    if written != spec.requests || model_pi != pi_ram {
        return Err(format!(
            "{} seed {seed:#x}: {written} of {} CQEs written, PI tables differ",
            spec.name, spec.requests
        ));
    }
    Ok(())
}

fn check(spec: Spec) {
    let seeds: Vec<u64> = match common::env_u64("RNIC_RANDOM_SEED") {
        Some(s) => vec![s],
        None => spec.seeds.to_vec(),
    };
    for seed in seeds {
        if let Err(e) = run(&spec, seed) {
            panic!(
                "{e}\nreplay: RNIC_RANDOM_SEED={seed:#x} cargo test --release -p rnic-sim --test cqw_block -- {} --exact",
                spec.name
            );
        }
    }
}

#[test]
fn tiny_cqs_busy_port() {
    check(Spec {
        name: "tiny_cqs_busy_port",
        seeds: &[0xC0E0_0001, 0xC0E0_0002],
        log2: 0..=2,
        wr_ready_pct: 25,
        req_pct: 40,
        requests: 3000,
    });
}

#[test]
fn large_cqs_ready_port() {
    check(Spec {
        name: "large_cqs_ready_port",
        seeds: &[0xC0E0_0101, 0xC0E0_0102],
        log2: 8..=20,
        wr_ready_pct: 90,
        req_pct: 70,
        requests: 3000,
    });
}
