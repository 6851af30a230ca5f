//! Block-level Verilator test of the requester-request adapter
//! (`hw/src/usp_rq.rs`, top "usp_rq") against a model of the UltraScale+
//! PCIe block's `s_axis_rq` (512-bit, Dword-aligned, no straddle, PG213's
//! request descriptor as `rnic_spec::usp` defines it).
//!
//! Stimulus: memory reads of 1..=4096 bytes and write TLPs of 1..=512 bytes
//! (some up to 4096) at any address inside a 4 KiB page, the lowest and
//! highest offsets and lengths weighted, given as the core gives them
//! (address-aligned write beats with junk outside the TLP, address and
//! length on the first beat only); random gaps on both inputs and random
//! `tready`. Checked: every packet follows AXI4-Stream (held while not
//! ready), its descriptor (address, Dword count, type, tag, the rest zero),
//! `tkeep` exactly its Dwords, `tlast` on its last beat, `tuser`'s byte
//! enables, `is_sop`/`is_eop` and end pointer, every write byte in place
//! with exactly the TLP's bytes enabled, reads and writes each in order; an
//! adapter that takes more than one extra cycle per write TLP is reported.

mod common;

use common::block_seeds;
use rnic_sim::model::Model;
use rnic_sim::rng::SplitMix as Rng;
use rnic_spec::usp::{self, dword_span, get_field, RqDesc};
use std::collections::VecDeque;

struct Rd {
    addr: u64,
    len: u64,
    tag: u8,
}

struct Wr {
    addr: u64,
    bytes: Vec<u8>,
}

impl Wr {
    /// The core's address-aligned beats, junk outside the TLP.
    fn beats(&self, r: &mut Rng) -> Vec<[u8; 64]> {
        let (a, len) = (self.addr, self.bytes.len() as u64);
        (a / 64..=(a + len - 1) / 64)
            .map(|blk| {
                let mut b = [0u8; 64];
                for (i, x) in b.iter_mut().enumerate() {
                    let at = blk * 64 + i as u64;
                    *x = if at >= a && at < a + len { self.bytes[(at - a) as usize] } else { r.below(256) as u8 };
                }
                b
            })
            .collect()
    }
}

fn rand_req(r: &mut Rng, max: u64) -> (u64, u64) {
    let start = match r.below(4) {
        0 => r.below(68),
        1 => 4096 - 1 - r.below(68),
        _ => r.below(4096),
    };
    let room = (4096 - start).min(max);
    let len = match r.below(4) {
        0 => 1 + r.below(room.min(9)),
        1 => room - r.below(room.min(4)),
        _ => 1 + r.below(room),
    };
    (0x7_0000_0000u64 + 4096 * r.below(1 << 24) + start, len)
}

/// Result of one seed: reads, writes, cycles, output beats.
struct Stats {
    reads: usize,
    writes: usize,
    cycles: u64,
    idle_in_cycles: u64,
}

fn run(seed: u64) -> Result<Stats, String> {
    let mut m = Model::new("usp_rq").map_err(|e| e.to_string())?;
    let p = |n: &str| m.port(n).unwrap_or_else(|e| panic!("{e}"));
    let (rd_valid, rd_ready, rd_addr, rd_len, rd_tag) =
        (p("rd_valid"), p("rd_ready"), p("rd_addr"), p("rd_len"), p("rd_tag"));
    let (wr_valid, wr_ready, wr_first, wr_last, wr_addr, wr_len, wr_data) =
        (p("wr_valid"), p("wr_ready"), p("wr_first"), p("wr_last"), p("wr_addr"), p("wr_len"), p("wr_data"));
    let (tdata, tuser, tkeep, tlast, tvalid, tready) =
        (p("rq_tdata"), p("rq_tuser"), p("rq_tkeep"), p("rq_tlast"), p("rq_tvalid"), p("rq_tready"));
    let mut r = Rng::new(seed);
    let n = 300;
    let mut reads: VecDeque<Rd> = (0..n)
        .map(|i| {
            let (addr, len) = rand_req(&mut r, 4096);
            Rd { addr, len, tag: (i % 256) as u8 }
        })
        .collect();
    let mut writes: VecDeque<Wr> = (0..n)
        .map(|_| {
            let max = if r.pct(10) { 4096 } else { 512 };
            let (addr, len) = rand_req(&mut r, max);
            Wr { addr, bytes: (0..len).map(|_| r.below(256) as u8).collect() }
        })
        .collect();
    let (mut want_rd, mut want_wr): (VecDeque<Rd>, VecDeque<Wr>) = (VecDeque::new(), VecDeque::new());
    let mut wbeats: VecDeque<([u8; 64], bool, bool, u64, u64)> = VecDeque::new();
    let (gap_rd, gap_wr, gap_out) = (r.pick(&[0u32, 20, 70]), r.pick(&[0u32, 10, 50]), r.pick(&[0u32, 10, 50]));
    let (mut show_rd, mut show_wr) = (false, false);
    // The packet being received, and the last beat offered but not taken (AXI4-Stream hold check).
    let mut pkt: Vec<([u8; 64], u16, Vec<u32>)> = Vec::new();
    let mut held: Option<([u8; 64], u16, bool, Vec<u32>)> = None;
    let (mut done_rd, mut done_wr, mut idle_in) = (0usize, 0usize, 0u64);
    for t in 0..400_000u64 {
        let ctx = |w: String| format!("usp_rq seed {seed:#x} cycle {t}: {w}");
        if wbeats.is_empty() {
            if let Some(w) = writes.pop_front() {
                let bs = w.beats(&mut r);
                let k = bs.len();
                for (i, b) in bs.into_iter().enumerate() {
                    // Address and length are valid on the first beat only.
                    let (a, l) = if i == 0 { (w.addr, w.bytes.len() as u64) } else { (r.next(), r.below(8192)) };
                    wbeats.push_back((b, i == 0, i + 1 == k, a, l));
                }
                want_wr.push_back(w);
            }
        }
        if want_rd.is_empty() && want_wr.is_empty() && reads.is_empty() && wbeats.is_empty() && writes.is_empty() {
            return Ok(Stats { reads: done_rd, writes: done_wr, cycles: t, idle_in_cycles: idle_in });
        }
        // Inputs keep their offer until taken.
        show_rd = !reads.is_empty() && (show_rd || !r.pct(gap_rd));
        show_wr = !wbeats.is_empty() && (show_wr || !r.pct(gap_wr));
        if let Some(q) = reads.front() {
            m.set(rd_addr, q.addr);
            m.set(rd_len, q.len);
            m.set(rd_tag, q.tag as u64);
        }
        m.set(rd_valid, show_rd as u64);
        if let Some((b, first, last, a, l)) = wbeats.front() {
            m.set_bytes(wr_data, b);
            m.set(wr_first, *first as u64);
            m.set(wr_last, *last as u64);
            m.set(wr_addr, *a);
            m.set(wr_len, *l);
        }
        m.set(wr_valid, show_wr as u64);
        let ready = !r.pct(gap_out);
        m.set(tready, if ready { 0xF } else { 0 });
        m.clock_low();
        let mut user = vec![0u32; 5];
        m.get_wide(tuser, &mut user);
        let mut data = [0u8; 64];
        m.get_bytes(tdata, &mut data);
        let (keep, last, valid) = (m.get(tkeep) as u16, m.get(tlast) != 0, m.get(tvalid) != 0);
        if let Some((hd, hk, hl, hu)) = held.take() {
            if !valid || hk != keep || hl != last || hu != user {
                return Err(ctx("a beat offered without tready changed or was withdrawn".into()));
            }
            let n = 4 * keep.count_ones() as usize;
            if hd[..n] != data[..n] {
                return Err(ctx("the data of a beat offered without tready changed".into()));
            }
        }
        if valid && !ready {
            held = Some((data, keep, last, user.clone()));
        }
        if valid && ready {
            pkt.push((data, keep, user));
            if last {
                let beats = std::mem::take(&mut pkt);
                let is_wr = check_packet(&beats, &mut want_rd, &mut want_wr).map_err(ctx)?;
                if is_wr {
                    done_wr += 1;
                } else {
                    done_rd += 1;
                }
            }
        }
        let took_rd = show_rd && m.get(rd_ready) != 0;
        let took_wr = show_wr && m.get(wr_ready) != 0;
        if show_wr && !took_wr && !took_rd && ready {
            idle_in += 1;
        }
        if took_rd {
            want_rd.push_back(reads.pop_front().unwrap());
            show_rd = false;
        }
        if took_wr {
            wbeats.pop_front();
            show_wr = false;
        }
        m.clock_high();
    }
    Err(format!("usp_rq seed {seed:#x}: did not finish"))
}

/// Checks one received packet against the next read or write; true for a write.
fn check_packet(
    beats: &[([u8; 64], u16, Vec<u32>)],
    want_rd: &mut VecDeque<Rd>,
    want_wr: &mut VecDeque<Wr>,
) -> Result<bool, String> {
    let d = RqDesc::decode(&beats[0].0[..usp::RQ_DESC_BYTES]);
    let user_bytes: Vec<Vec<u8>> =
        beats.iter().map(|b| b.2.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>()).collect();
    let u0 = &user_bytes[0];
    let (fbe, lbe) =
        (get_field(u0, usp::RQ_USER_FIRST_BE_LSB, 4) as u8, get_field(u0, usp::RQ_USER_LAST_BE_LSB, 4) as u8);
    for (i, u) in user_bytes.iter().enumerate() {
        let (sop, eop) = (get_field(u, usp::RQ_USER_SOP_BIT, 1) != 0, get_field(u, usp::RQ_USER_EOP_BIT, 1) != 0);
        if (sop, eop) != (i == 0, i + 1 == beats.len()) {
            return Err(format!("beat {i} of {}: is_sop {sop}, is_eop {eop}", beats.len()));
        }
        let mut rest = u.clone();
        for (lsb, n) in [(0, 4), (8, 4), (usp::RQ_USER_SOP_BIT, 1), (usp::RQ_USER_EOP_BIT, 1), (28, 4)] {
            usp::set_field(&mut rest, lsb, n, 0);
        }
        if rest.iter().take(usp::RQ_TUSER_BITS.div_ceil(8)).any(|&x| x != 0) {
            return Err(format!("beat {i}: tuser bits set beyond the byte enables, is_sop and is_eop: {u:02x?}"));
        }
    }
    let total_dw = 4 + if d.req_type == usp::REQ_MEM_WR { d.dwords as usize } else { 0 };
    if beats.len() != total_dw.div_ceil(16) {
        return Err(format!("{} beats for {total_dw} Dwords ({d:?})", beats.len()));
    }
    for (i, b) in beats.iter().enumerate() {
        let dws = if i + 1 == beats.len() { total_dw - 16 * i } else { 16 };
        let want = if dws == 16 { 0xFFFF } else { (1u16 << dws) - 1 };
        if b.1 != want {
            return Err(format!("beat {i}: tkeep {:#06x}, want {want:#06x} ({d:?})", b.1));
        }
    }
    let eptr = get_field(user_bytes.last().unwrap(), usp::RQ_USER_EOP_PTR_LSB, 4) as usize;
    if eptr != (total_dw - 1) % 16 {
        return Err(format!("is_eop0_ptr {eptr}, want {}", (total_dw - 1) % 16));
    }
    let base = RqDesc { addr: 0, dwords: 0, req_type: 0, tag: 0, ..Default::default() };
    let (addr, len, tag, is_wr) = match d.req_type {
        usp::REQ_MEM_RD => {
            let q = want_rd.pop_front().ok_or("a read nobody asked for")?;
            (q.addr, q.len, q.tag, false)
        }
        usp::REQ_MEM_WR => {
            let q = want_wr.front().ok_or("a write nobody asked for")?;
            (q.addr, q.bytes.len() as u64, 0, true)
        }
        t => return Err(format!("request type {t}")),
    };
    let (dwords, want_fbe, want_lbe) = dword_span(addr, len);
    let want = RqDesc { addr: addr & !3, dwords, req_type: d.req_type, tag, ..base };
    if d != want || (fbe, lbe) != (want_fbe, want_lbe) {
        return Err(format!("descriptor {d:?} BEs ({fbe:#x}, {lbe:#x}), want {want:?} ({want_fbe:#x}, {want_lbe:#x})"));
    }
    if is_wr {
        let w = want_wr.pop_front().unwrap();
        let stream: Vec<u8> = beats.iter().flat_map(|b| b.0).collect();
        let payload = &stream[16..16 + 4 * dwords as usize];
        let a0 = addr & !3;
        for (i, &x) in payload.iter().enumerate() {
            let dw = i / 4;
            let be = if dw == 0 {
                fbe
            } else if dw + 1 == dwords as usize {
                lbe
            } else {
                0xF
            };
            let at = a0 + i as u64;
            let enabled = be >> (i % 4) & 1 != 0;
            let inside = at >= addr && at < addr + len;
            if enabled != inside {
                return Err(format!("write {addr:#x}+{len}: byte {at:#x} enabled {enabled}, inside {inside}"));
            }
            if inside && x != w.bytes[(at - addr) as usize] {
                return Err(format!(
                    "write {addr:#x}+{len}: byte {at:#x} is {x:#04x}, want {:#04x}",
                    w.bytes[(at - addr) as usize]
                ));
            }
        }
    }
    Ok(is_wr)
}

#[test]
fn rq_adapter_forms_every_request_and_places_every_write_byte() {
    for seed in block_seeds("RNIC_USP_RQ_BLOCK", 0x05B0_0301) {
        match run(seed) {
            Ok(s) => {
                eprintln!(
                    "usp_rq seed {seed:#x}: {} reads, {} writes in {} cycles, {} cycles a write beat waited with the PCIe block ready",
                    s.reads, s.writes, s.cycles, s.idle_in_cycles
                );
                assert!(
                    s.idle_in_cycles <= (s.reads + s.writes) as u64,
                    "usp_rq seed {seed:#x}: a write beat waited more than once per request"
                );
            }
            Err(e) => panic!("{e}"),
        }
    }
}
