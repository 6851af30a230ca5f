//! Block-level Verilator test of the requester-completion adapter
//! (`hw/src/usp_rc.rs`, top "usp_rc") against a model of the UltraScale+
//! PCIe block's `m_axis_rc` (512-bit, Dword-aligned, no straddle, PG213's
//! completion descriptor) and the core's completion port.
//!
//! Stimulus: reads of 1..=4096 bytes at any address inside a 4 KiB page,
//! each cut into completions at random 64-byte (RCB) boundaries, the
//! completions of up to six reads interleaved TLP by TLP; random gaps in
//! `tvalid`; some completions bad (an error code, a status, poison, or
//! `discontinue` on their first beat). Checked: every good completion comes
//! out as one beat per 64-byte block it touches, in order, with its tag, the
//! address of the beat's first byte, every byte of the completion in its
//! address lane, and `done` exactly on the last block of the read's last
//! completion; a bad one gives no beat and one `cpl_err` pulse; `tready`
//! falls only for the one flush cycle a completion may need.

mod common;

use common::block_seeds;
use rnic_sim::model::Model;
use rnic_sim::rng::SplitMix as Rng;
use rnic_spec::usp::{self, set_field};
use std::collections::VecDeque;

/// One completion TLP as the PCIe block delivers it.
struct Cpl {
    tag: u8,
    /// Address of its first byte, and its length.
    addr: u64,
    len: u64,
    /// The read's last completion (Request Completed).
    last: bool,
    /// 0: good; 1: error code; 2: status; 3: poisoned; 4: discontinue.
    bad: u8,
    /// Host memory of the page the read is in.
    page: Vec<u8>,
}

impl Cpl {
    /// The AXI4-Stream beats: descriptor then the Dwords from the one that holds `addr`.
    fn beats(&self, r: &mut Rng) -> Vec<[u8; 64]> {
        let a0 = self.addr & !3;
        let dwords = ((self.addr + self.len - 1) / 4 - a0 / 4 + 1) as usize;
        let mut s = Vec::with_capacity(12 + 4 * dwords);
        let mut d = [0u8; usp::RC_DESC_BYTES];
        set_field(&mut d, usp::RC_LOWER_ADDR_LSB, 12, self.addr & 0xfff);
        set_field(&mut d, usp::RC_BYTE_COUNT_LSB, 13, self.len);
        set_field(&mut d, usp::RC_REQ_DONE_BIT, 1, self.last as u64);
        set_field(&mut d, usp::RC_DWORDS_LSB, 11, dwords as u64);
        // Requester ID and completer ID: whatever the bus carries.
        set_field(&mut d, 48, 16, 0xbeef);
        set_field(&mut d, usp::RC_TAG_LSB, 8, self.tag as u64);
        set_field(&mut d, 72, 16, 0x0100);
        match self.bad {
            1 => set_field(&mut d, usp::RC_ERR_LSB, 4, 1 + r.below(6)),
            2 => set_field(&mut d, usp::RC_STATUS_LSB, 3, [1, 2, 4][r.below(3) as usize]),
            3 => set_field(&mut d, usp::RC_POISON_BIT, 1, 1),
            _ => {}
        }
        s.extend_from_slice(&d);
        let base = a0 & 0xfff;
        for i in 0..4 * dwords as u64 {
            let at = base + i;
            // Bytes of the first and last Dwords outside the completion are whatever the bus carries.
            let inside = at >= (self.addr & 0xfff) && at < (self.addr & 0xfff) + self.len;
            s.push(if inside { self.page[at as usize] } else { r.below(256) as u8 });
        }
        s.chunks(64)
            .map(|c| {
                let mut b = [0u8; 64];
                for x in b.iter_mut() {
                    *x = r.below(256) as u8;
                }
                b[..c.len()].copy_from_slice(c);
                b
            })
            .collect()
    }
}

/// What the core must see for one block.
struct Want {
    tag: u8,
    addr: u16,
    done: bool,
    /// Lanes of the completion in this block, and their bytes.
    lanes: std::ops::Range<usize>,
    bytes: [u8; 64],
}

/// The completions of a random workload, interleaved TLP by TLP.
fn workload(r: &mut Rng, reads: usize) -> Vec<Cpl> {
    let mut active: Vec<VecDeque<Cpl>> = Vec::new();
    let mut out = Vec::new();
    let mut started = 0;
    while started < reads || !active.is_empty() {
        while started < reads && active.len() < 1 + r.below(6) as usize {
            let tag = (started % 256) as u8;
            let start = match r.below(4) {
                0 => r.below(64),
                1 => 4096 - 1 - r.below(64),
                _ => r.below(4096),
            };
            let len = match r.below(4) {
                0 => 1 + r.below(16),
                1 => 4096 - start,
                _ => 1 + r.below(4096 - start),
            };
            let page: Vec<u8> = (0..4096).map(|_| r.below(256) as u8).collect();
            let base = 0x1_2345_0000u64 + 4096 * r.below(1 << 20);
            let (mut a, end) = (start, start + len);
            let mut q = VecDeque::new();
            while a < end {
                // The next cut: a random RCB boundary after `a` (or the end).
                let next_rcb = (a / 64 + 1) * 64;
                let b =
                    if next_rcb >= end { end } else { (next_rcb + 64 * r.below(1 + (end - next_rcb) / 64)).min(end) };
                let bad = if r.below(100) < 2 { 1 + r.below(4) as u8 } else { 0 };
                q.push_back(Cpl { tag, addr: base + a, len: b - a, last: b == end, bad, page: page.clone() });
                a = b;
            }
            active.push(q);
            started += 1;
        }
        let i = r.below(active.len() as u64) as usize;
        out.push(active[i].pop_front().unwrap());
        if active[i].is_empty() {
            active.swap_remove(i);
        }
    }
    out
}

fn wants(c: &Cpl) -> Vec<Want> {
    let (a, b) = (c.addr & 0xfff, (c.addr & 0xfff) + c.len);
    (a / 64..=(b - 1) / 64)
        .map(|blk| {
            let lo = a.max(blk * 64);
            let hi = b.min(blk * 64 + 64);
            let mut bytes = [0u8; 64];
            bytes[(lo % 64) as usize..(lo % 64 + hi - lo) as usize].copy_from_slice(&c.page[lo as usize..hi as usize]);
            Want {
                tag: c.tag,
                addr: if blk == a / 64 { a as u16 } else { (blk * 64) as u16 },
                done: c.last && blk == (b - 1) / 64,
                lanes: (lo % 64) as usize..(lo % 64 + hi - lo) as usize,
                bytes,
            }
        })
        .collect()
}

fn run(seed: u64) -> Result<(usize, usize, u64), String> {
    let mut m = Model::new("usp_rc").map_err(|e| e.to_string())?;
    let p = |n: &str| m.port(n).unwrap_or_else(|e| panic!("{e}"));
    let (tdata, tuser, tlast, tvalid, tready) =
        (p("rc_tdata"), p("rc_tuser"), p("rc_tlast"), p("rc_tvalid"), p("rc_tready"));
    let (valid, data, tag, addr, done, err) = (p("valid"), p("data"), p("tag"), p("addr"), p("done"), p("cpl_err"));
    let mut r = Rng::new(seed);
    let cpls = workload(&mut r, 400);
    let mut want: VecDeque<Want> = VecDeque::new();
    let mut errs_owed = 0u64;
    // The beats still to present: (beat, last, discontinue).
    let mut beats: VecDeque<([u8; 64], bool, bool)> = VecDeque::new();
    let mut next = 0;
    let (mut blocks, mut stalls, mut errs, mut idle) = (0usize, 0u64, 0u64, 0);
    let gap_pct = [0, 10, 50][r.below(3) as usize];
    for t in 0..2_000_000u64 {
        let ctx = |w: String| format!("usp_rc seed {seed:#x} cycle {t}: {w}");
        if beats.is_empty() && next < cpls.len() {
            let c = &cpls[next];
            next += 1;
            let bs = c.beats(&mut r);
            let n = bs.len();
            for (i, b) in bs.into_iter().enumerate() {
                beats.push_back((b, i + 1 == n, c.bad == 4 && i == 0));
            }
            if c.bad == 0 {
                want.extend(wants(c));
            } else {
                errs_owed += 1;
            }
        }
        // Done once nothing is owed for two cycles (the last pulse is registered).
        idle = if beats.is_empty() && want.is_empty() { idle + 1 } else { 0 };
        if idle > 2 {
            if errs != errs_owed {
                return Err(ctx(format!("{errs} cpl_err pulses for {errs_owed} bad completions")));
            }
            return Ok((blocks, cpls.len(), stalls));
        }
        let show = !beats.is_empty() && r.below(100) >= gap_pct;
        if let Some((b, last, disc)) = beats.front() {
            m.set_bytes(tdata, b);
            m.set(tlast, *last as u64);
            let mut u = [0u32; 6];
            u[usp::RC_USER_DISCONTINUE_BIT / 32] = (*disc as u32) << (usp::RC_USER_DISCONTINUE_BIT % 32);
            m.set_wide(tuser, &u);
        }
        m.set(tvalid, show as u64);
        m.clock_low();
        if m.get(valid) != 0 {
            let w = want.pop_front().ok_or_else(|| ctx("a beat nobody asked for".into()))?;
            let mut got = [0u8; 64];
            m.get_bytes(data, &mut got);
            let (gt, ga, gd) = (m.get(tag) as u8, m.get(addr) as u16, m.get(done) != 0);
            if (gt, ga, gd) != (w.tag, w.addr, w.done) {
                return Err(ctx(format!("(tag, addr, done) = {:?}, want {:?}", (gt, ga, gd), (w.tag, w.addr, w.done))));
            }
            if got[w.lanes.clone()] != w.bytes[w.lanes.clone()] {
                return Err(ctx(format!("tag {} addr {:#x}: lanes {:?} differ", w.tag, w.addr, w.lanes)));
            }
            blocks += 1;
        }
        errs += m.get(err);
        if m.get(tready) == 0 {
            stalls += 1;
        } else if show {
            beats.pop_front();
        }
        m.clock_high();
    }
    Err(format!("usp_rc seed {seed:#x}: did not finish"))
}

#[test]
fn rc_adapter_places_every_completion_byte_in_its_lane() {
    for seed in block_seeds("RNIC_USP_RC_BLOCK", 0x05B0_0001) {
        match run(seed) {
            Ok((blocks, cpls, stalls)) => {
                eprintln!("usp_rc seed {seed:#x}: {cpls} completions, {blocks} blocks, {stalls} flush cycles");
                assert!(stalls <= cpls as u64, "usp_rc seed {seed:#x}: more flush cycles than completions");
            }
            Err(e) => panic!("{e}"),
        }
    }
}
