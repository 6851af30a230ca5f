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
//! CtrlQ entry requests come in between, on their own valid/ready stream:
//! each is written as the 32-byte `rnic_spec::desc::CtrlqEntry` at `CtrlQ
//! base + (CtrlQ PI mod size) x 32` with the owner bit of its pass while the
//! ring has a free slot by the host's consumer index (which the harness
//! advances at random), and dropped (`cnt_ctl_drop`) only when it has none by
//! the index of a cycle before (the writer registers its room test) or no
//! CtrlQ is set up (log2 0); the harness sets the CtrlQ up again at random
//! (new base and size, `ctrlq_reset`), which restarts the producer index,
//! also with a request offered in that cycle or one being written (a write
//! taken in the reset's cycle goes to the old ring; later ones to the new).
//! Requests are written in the order they were taken.
//!
//! Two parameter sets: tiny CQs (1 to 4 entries, the owner bit flips every
//! few CQEs) with a mostly busy DMA port, and large CQs at random bases
//! (including bases near the top of the 64-bit space) with a mostly ready
//! port. Every CQ number up to the highest is used.

mod common;

use rnic_hw::desc::{CqReqPack, CtlReqPack};
use rnic_hw::pack::pack_words;
use rnic_sim::model::{Model, PortId};
use rnic_sim::rng::SplitMix as Rng;
use rnic_spec::desc::{Cqe, CtrlqEntry, CQE_BYTES, CTRLQ_ENTRY_BYTES};
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
    imm: u32,
    flags: u8,
}

/// One CtrlQ entry request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Ctl {
    kind: u8,
    flags: u8,
    qpn: u8,
    psn: u32,
    epsn: u32,
    ssn: u32,
    psn_offset: u32,
    rsn: u16,
    plen: u16,
    imm: u32,
    episode: u8,
}

/// A request taken by the writer.
#[derive(Clone, Copy, Debug)]
enum Taken {
    Cq(Req),
    Ctl(Ctl),
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
    /// Probability (percent) that a new CtrlQ request is offered in a cycle.
    ctl_pct: u64,
    /// log2 of the CtrlQ size: drawn from this range (0: no CtrlQ).
    ctl_log2: std::ops::RangeInclusive<u32>,
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
    ctl_valid: PortId,
    ctl_ready: PortId,
    ctl_data: PortId,
    ctrlq_base: PortId,
    ctrlq_size: PortId,
    ctrlq_ci: PortId,
    ctrlq_reset: PortId,
    cnt_ctl: PortId,
    cnt_ctl_drop: PortId,
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
        ctl_valid: p("ctl_valid"),
        ctl_ready: p("ctl_ready"),
        ctl_data: p("ctl_data"),
        ctrlq_base: p("ctrlq_base"),
        ctrlq_size: p("ctrlq_size"),
        ctrlq_ci: p("ctrlq_ci"),
        ctrlq_reset: p("ctrlq_reset"),
        cnt_ctl: p("cnt_ctl"),
        cnt_ctl_drop: p("cnt_ctl_drop"),
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
            ("imm", r.imm as u64),
            ("flags", r.flags as u64),
        ],
    )
}

fn ctl_words(c: &Ctl) -> Vec<u32> {
    pack_words(
        CtlReqPack::FIELDS,
        CtlReqPack::WIDTH,
        &[
            ("kind", c.kind as u64),
            ("flags", c.flags as u64),
            ("qpn", c.qpn as u64),
            ("psn", c.psn as u64),
            ("epsn", c.epsn as u64),
            ("ssn", c.ssn as u64),
            ("psn_offset", c.psn_offset as u64),
            ("rsn", c.rsn as u64),
            ("plen", c.plen as u64),
            ("imm", c.imm as u64),
            ("episode", c.episode as u64),
        ],
    )
}

/// The CtrlQ as the harness sets it up: base, log2, the host's consumer
/// index, and the model's producer index.
#[derive(Clone, Copy)]
struct CtrlQ {
    base: u64,
    log2: u32,
    ci: u32,
    pi: u32,
}

impl CtrlQ {
    fn room(&self) -> bool {
        (1..=16).contains(&self.log2) && self.pi.wrapping_sub(self.ci) < (1u32 << self.log2)
    }
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
    let mut taken: VecDeque<Taken> = VecDeque::new();
    let mut offered: Option<Req> = None;
    let mut ctl_offered: Option<Ctl> = None;
    let mut cq_ctl = CtrlQ { base: 0, log2: 0, ci: 0, pi: 0 };
    // The consumer index on the port a cycle ago: the writer decides on a register of it.
    let mut ci_seen = 0u32;
    let (mut ctl_made, mut ctl_written, mut ctl_dropped) = (0usize, 0usize, 0usize);
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
                imm: r.next() as u32,
                flags: r.next() as u8,
            });
            made += 1;
        }
        if offered.is_none() {
            offered = pending.pop_front();
        }
        m.set(p.req_valid, offered.is_some() as u64);
        m.set_wide(p.req_data, &offered.map(|o| req_words(&o)).unwrap_or_else(|| vec![0; 4]));
        // CtrlQ: set up again now and then (whatever is offered or in flight), the host consumes, requests arrive.
        let reset = r.below(300) == 0;
        let old_ring = cq_ctl;
        if reset {
            let log2 = spec.ctl_log2.start() + r.below((spec.ctl_log2.end() - spec.ctl_log2.start() + 1) as u64) as u32;
            cq_ctl = CtrlQ {
                base: (r.below(1 << 40) << 5) | if r.below(2) == 0 { 0xFFFF_0000_0000_0000 } else { 0 },
                log2,
                ci: 0,
                pi: 0,
            };
        }
        if cq_ctl.ci != cq_ctl.pi && r.below(100) < 20 {
            cq_ctl.ci = cq_ctl.ci.wrapping_add(1);
        }
        if ctl_offered.is_none() && ctl_made < spec.requests / 4 && r.below(100) < spec.ctl_pct {
            ctl_offered = Some(Ctl {
                kind: r.next() as u8,
                flags: r.next() as u8,
                qpn: r.next() as u8,
                psn: r.next() as u32 & 0xFF_FFFF,
                epsn: r.next() as u32 & 0xFF_FFFF,
                ssn: r.next() as u32 & 0xFF_FFFF,
                psn_offset: r.next() as u32 & 0xFF_FFFF,
                rsn: r.next() as u16,
                plen: r.below(1 << 13) as u16,
                imm: r.next() as u32,
                episode: r.below(16) as u8,
            });
            ctl_made += 1;
        }
        m.set(p.ctl_valid, ctl_offered.is_some() as u64);
        m.set_wide(p.ctl_data, &ctl_offered.map(|c| ctl_words(&c)).unwrap_or_else(|| vec![0; 6]));
        m.set_wide(p.ctrlq_base, &[cq_ctl.base as u32, (cq_ctl.base >> 32) as u32]);
        m.set(p.ctrlq_size, if (1..=16).contains(&cq_ctl.log2) { 1u64 << cq_ctl.log2 } else { 0 });
        let ci_before = ci_seen;
        ci_seen = cq_ctl.ci;
        m.set(p.ctrlq_ci, cq_ctl.ci as u64);
        m.set(p.ctrlq_reset, reset as u64);
        let wr_ready = r.below(100) < spec.wr_ready_pct;
        m.set(p.wr_ready, wr_ready as u64);
        let (base, log2) = cqs[cq_rd];
        m.set_wide(p.cq_data, &[base as u32, (base >> 32) as u32, log2, 0]);
        m.set(p.cqpi_data, pi_rd as u64);
        m.clock_low();
        if offered.is_some() && m.get(p.req_ready) != 0 {
            taken.push_back(Taken::Cq(offered.take().expect("offered")));
        }
        if ctl_offered.is_some() && m.get(p.ctl_ready) != 0 {
            if m.get(p.req_ready) != 0 {
                return Err(ctx("took a CtrlQ request and a CQE request in one cycle".into()));
            }
            taken.push_back(Taken::Ctl(ctl_offered.take().expect("offered")));
        }
        let wrote = m.get(p.wr_valid) != 0 && wr_ready;
        // What the writer decided on in the reset's cycle was registered for the old ring.
        let mut ring = if reset { old_ring } else { cq_ctl };
        let dropped = m.get(p.cnt_ctl_drop) != 0;
        if let Some(&Taken::Ctl(want)) = taken.front() {
            if dropped && wrote {
                return Err(ctx("a CtrlQ request both dropped and written".into()));
            }
            if dropped {
                if (CtrlQ { ci: ci_before, ..ring }).room() {
                    return Err(ctx(format!(
                        "CtrlQ request {want:?} dropped with room (PI {:#x} CI a cycle ago {ci_before:#x} log2 {})",
                        ring.pi, ring.log2
                    )));
                }
                taken.pop_front();
                ctl_dropped += 1;
            } else if wrote {
                if !ring.room() {
                    return Err(ctx(format!(
                        "CtrlQ entry written with the ring full or not set up (PI {:#x} CI {:#x} log2 {})",
                        ring.pi, ring.ci, ring.log2
                    )));
                }
                let pi = ring.pi;
                let addr = ring.base.wrapping_add(((pi & ((1u32 << ring.log2) - 1)) as u64) << 5);
                if m.get(p.wr_addr) != addr || m.get(p.wr_len) != CTRLQ_ENTRY_BYTES as u64 {
                    return Err(ctx(format!(
                        "CtrlQ entry written at {:#x} len {}, want {addr:#x} len 32 (PI {pi:#x})",
                        m.get(p.wr_addr),
                        m.get(p.wr_len)
                    )));
                }
                let mut beat = vec![0u8; 64];
                m.get_bytes(p.wr_data, &mut beat);
                let e =
                    CtrlqEntry::read_from_bytes(&beat[..CTRLQ_ENTRY_BYTES]).map_err(|_| ctx("entry bytes".into()))?;
                let owner = (((pi >> ring.log2) & 1) ^ 1) as u8;
                let ok = e.kind == want.kind
                    && e.flags == want.flags
                    && e.qpn.get() == want.qpn as u16
                    && e.psn.get() == want.psn
                    && e.epsn.get() == want.epsn
                    && e.ssn.get() == want.ssn
                    && e.psn_offset.get() == want.psn_offset
                    && e.rsn.get() == want.rsn
                    && e.plen.get() == want.plen
                    && e.imm.get() == want.imm
                    && e.episode == want.episode
                    && e.rsvd == [0; 2]
                    && e.owner == owner;
                if !ok {
                    return Err(ctx(format!("CtrlQ entry {e:?} for request {want:?}, owner want {owner}")));
                }
                if m.get(p.cqpi_we) != 0 {
                    return Err(ctx("a CQ producer index written with a CtrlQ entry".into()));
                }
                ring.pi = pi.wrapping_add(1);
                taken.pop_front();
                ctl_written += 1;
            }
            if (m.get(p.cnt_ctl) != 0) != (wrote && !dropped) {
                return Err(ctx(format!("cnt_ctl={} but CtrlQ entry written={wrote}", m.get(p.cnt_ctl))));
            }
            if !reset {
                cq_ctl = ring;
            }
        } else if dropped || m.get(p.cnt_ctl) != 0 {
            return Err(ctx("CtrlQ counter pulse with no CtrlQ request taken".into()));
        } else if wrote {
            let Some(Taken::Cq(want)) = taken.pop_front() else {
                return Err(ctx("a DMA write with no completion request taken".into()));
            };
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
                && cqe.imm.get() == want.imm
                && cqe.flags == want.flags
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
        let cqe_written = wrote && m.get(p.cqpi_we) != 0;
        if (m.get(p.cnt_cqe) != 0) != cqe_written {
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
        let idle = made == spec.requests
            && pending.is_empty()
            && offered.is_none()
            && taken.is_empty()
            && ctl_offered.is_none()
            && ctl_made == spec.requests / 4;
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
    if ctl_written + ctl_dropped != ctl_made || ctl_written == 0 || ctl_dropped == 0 {
        return Err(format!(
            "{} seed {seed:#x}: of {ctl_made} CtrlQ requests {ctl_written} written, {ctl_dropped} dropped (both must occur)",
            spec.name
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
        ctl_pct: 20,
        ctl_log2: 0..=2,
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
        ctl_pct: 10,
        ctl_log2: 0..=6,
    });
}
