//! Block-level Verilator test of the clock-domain-crossing frame FIFO
//! (`hw/src/cdc.rs`, top "cdc_fifo": 16-bit beats, 32 entries) with two
//! independent clocks: the MAC's 322.27 MHz and the core's 250 MHz in
//! both directions, and random period pairs (ratios from 1:3 to 3:1, a
//! random phase), as a board has.
//!
//! Each clock's edges are evaluated at their own times; inputs change only
//! after an edge of their clock. Frames of 1..=32 beats (32, the FIFO's
//! size, is the largest that fits) with random gaps on both sides. Checked:
//! - waiting writer (`drop_on_full` low, the TX side): every beat comes out
//!   once, in order, with its `last`; no beat of a frame is readable before
//!   the frame's last beat was written; nothing is dropped;
//! - either: a frame ending with `wr_bad` (an FCS error) never comes out
//!   and pulses `dropped`;
//! - dropping writer (high, the RX side): `ready` never falls; what comes
//!   out is whole frames, in order, each byte-exact, a subsequence of what
//!   went in; `dropped` pulses once per missing frame; a reader that keeps
//!   up (20 % faster, never paused) loses no frame of up to 16 beats, half
//!   the FIFO (the rest covers the pointers' round trip across the domains).

mod common;

use common::block_seeds;
use rnic_sim::model::Model;
use rnic_sim::rng::SplitMix as Rng;
use std::collections::VecDeque;

/// Clock periods in picoseconds: the MAC's and the core's.
const MAC_PS: u64 = 3103;
const CORE_PS: u64 = 4000;

struct Run {
    frames_in: usize,
    frames_out: usize,
    drops: u64,
}

fn run(seed: u64, drop_mode: bool, wr_ps: u64, rd_ps: u64, rd_gap: u32, max_frame: u64) -> Result<Run, String> {
    let mut m = Model::new("cdc_fifo").map_err(|e| e.to_string())?;
    let p = |n: &str| m.port(n).unwrap_or_else(|e| panic!("{e}"));
    let wbad = p("wr_bad");
    let (wclk, wrst, dof, wv, wr, wd, wl, dropped) = (
        p("wr_clock"),
        p("wr_reset"),
        p("drop_on_full"),
        p("wr_valid"),
        p("wr_ready"),
        p("wr_data"),
        p("wr_last"),
        p("dropped"),
    );
    let (rclk, rrst, rv, rr, rd, rl) =
        (p("rd_clock"), p("rd_reset"), p("rd_valid"), p("rd_ready"), p("rd_data"), p("rd_last"));
    let mut r = Rng::new(seed);
    let name = format!(
        "cdc seed {seed:#x} ({} writer, write {wr_ps} ps, read {rd_ps} ps)",
        if drop_mode { "dropping" } else { "waiting" }
    );
    // Frames to write: (data, last) beats, each beat numbered by frame and index.
    let nframes = 400;
    // Some frames end bad (an FCS error): they must not come out.
    let bad_pct = r.pick(&[0u32, 10]);
    let mut beats: VecDeque<(u16, bool, usize, bool)> = VecDeque::new();
    for f in 0..nframes {
        let n = if r.pct(20) { max_frame as usize } else { r.range(1, max_frame) as usize };
        let bad = r.pct(bad_pct);
        for i in 0..n {
            beats.push_back(((f as u16) << 5 ^ i as u16 ^ (r.below(1 << 11) as u16) << 5, i + 1 == n, f, bad));
        }
    }
    let sent: Vec<(u16, bool, usize)> = beats.iter().filter(|b| !b.3).map(|b| (b.0, b.1, b.2)).collect();
    let nbad = beats.iter().filter(|b| b.1 && b.3).count();
    let wr_gap = r.pick(&[0u32, 10, 40]);
    m.set(dof, drop_mode as u64);
    m.set(wrst, 1);
    m.set(rrst, 1);
    // Edges: next rising edge time of each clock (falling edges halfway).
    let (mut tw, mut tr) = (r.below(wr_ps), r.below(rd_ps));
    let (mut w_edges, mut r_edges) = (0u64, 0u64);
    let (mut w_valid, mut r_ready) = (false, false);
    let mut last_written = None::<usize>;
    let mut got: Vec<(u16, bool)> = Vec::new();
    let mut drops = 0u64;
    let mut drain = None::<u64>;
    for _ in 0..2_000_000 {
        let t = tw.min(tr);
        // Falling edges (half a period before the rising one) need no check: set the clock low.
        if tw == t {
            if w_edges >= 3 {
                // Before the write clock's edge: the handshake.
                if w_valid {
                    let ready = m.get(wr) != 0;
                    if drop_mode && !ready {
                        return Err(format!("{name}: wr_ready low with drop_on_full"));
                    }
                    if ready {
                        let b = beats.pop_front().unwrap();
                        if b.1 {
                            last_written = Some(b.2);
                        }
                    }
                }
                drops += m.get(dropped);
            }
            m.set(wclk, 1);
        }
        if tr == t {
            if r_edges >= 3 && r_ready && m.get(rv) != 0 {
                let (d, l) = (m.get(rd) as u16, m.get(rl) != 0);
                let i = got.len();
                if !drop_mode {
                    let (wd_, wl_, f) = sent[i];
                    if (d, l) != (wd_, wl_) {
                        return Err(format!("{name}: beat {i} is ({d:#06x}, {l}), want ({wd_:#06x}, {wl_})"));
                    }
                    if last_written.is_none_or(|lf| lf < f) {
                        return Err(format!("{name}: beat {i} of frame {f} read before the frame's last was written"));
                    }
                }
                got.push((d, l));
            }
            m.set(rclk, 1);
        }
        m.eval();
        // After the edges: new inputs for the domain(s) that ticked.
        if tw == t {
            w_edges += 1;
            m.set(wrst, (w_edges < 3) as u64);
            w_valid = w_edges >= 3 && !beats.is_empty() && !r.pct(wr_gap);
            if let Some(&(d, l, _, bad)) = beats.front() {
                m.set(wd, d as u64);
                m.set(wl, l as u64);
                m.set(wbad, (l && bad) as u64);
            }
            m.set(wv, w_valid as u64);
            tw += wr_ps;
        }
        if tr == t {
            r_edges += 1;
            m.set(rrst, (r_edges < 3) as u64);
            r_ready = r_edges >= 3 && (drain.is_some() || !r.pct(rd_gap));
            m.set(rr, r_ready as u64);
            tr += rd_ps;
        }
        m.eval();
        // The falling edges, before the next rising one.
        m.set(wclk, 0);
        m.set(rclk, 0);
        m.eval();
        // Written out: let the reader drain (never paused) until the pointers have long crossed.
        if beats.is_empty() && !w_valid && drain.is_none() {
            drain = Some(r_edges);
        }
        if drain.is_some_and(|d0| r_edges > d0 + 200) {
            break;
        }
    }
    // Compare: frames out must be whole frames of the input, in order.
    let mut frames_in: Vec<Vec<(u16, bool)>> = vec![Vec::new()];
    for &(d, l, _) in &sent {
        frames_in.last_mut().unwrap().push((d, l));
        if l {
            frames_in.push(Vec::new());
        }
    }
    frames_in.pop();
    let frames_sent = frames_in.len() + nbad;
    let mut frames_out: Vec<Vec<(u16, bool)>> = vec![Vec::new()];
    for &(d, l) in &got {
        frames_out.last_mut().unwrap().push((d, l));
        if l {
            frames_out.push(Vec::new());
        }
    }
    if !frames_out.pop().unwrap().is_empty() {
        return Err(format!("{name}: a partial frame came out last"));
    }
    let mut k = 0;
    for (j, f) in frames_out.iter().enumerate() {
        while k < frames_in.len() && frames_in[k] != *f {
            k += 1;
        }
        if k == frames_in.len() {
            return Err(format!("{name}: frame {j} out is not the next whole frame in: {f:x?}"));
        }
        k += 1;
    }
    if drops != (frames_sent - frames_out.len()) as u64 {
        return Err(format!(
            "{name}: {drops} drop pulses, {frames_sent} frames in ({nbad} bad), {} out",
            frames_out.len()
        ));
    }
    Ok(Run { frames_in: frames_in.len(), frames_out: frames_out.len(), drops: drops - nbad as u64 })
}

#[test]
fn cdc_fifo_crosses_every_frame_whole_and_in_order() {
    for seed in block_seeds("RNIC_CDC_BLOCK", 0xCDC0_0001) {
        let mut r = Rng::new(seed);
        let random = (r.range(1000, 9000), r.range(1000, 9000));
        for (wr_ps, rd_ps) in [(MAC_PS, CORE_PS), (CORE_PS, MAC_PS), random] {
            for drop_mode in [false, true] {
                for rd_gap in [0u32, 30, 80] {
                    let keeps_up = drop_mode && rd_gap == 0 && rd_ps * 10 < wr_ps * 8;
                    let max_frame = if keeps_up { 16 } else { 32 };
                    let s = run(r.next(), drop_mode, wr_ps, rd_ps, rd_gap, max_frame)
                        .unwrap_or_else(|e| panic!("RNIC_CDC_BLOCK_SEED={seed:#x}: {e}"));
                    if !drop_mode {
                        assert_eq!(
                            (s.frames_out, s.drops),
                            (s.frames_in, 0),
                            "cdc seed {seed:#x}: waiting writer lost frames"
                        );
                    }
                    if keeps_up {
                        assert_eq!(s.drops, 0, "cdc seed {seed:#x}: a reader at least 20 % faster, never paused, lost frames of up to 16 beats");
                    }
                    eprintln!(
                        "cdc seed {seed:#x}: write {wr_ps} ps, read {rd_ps} ps, read gaps {rd_gap} %, drop {drop_mode}: {} of {} frames, {} dropped",
                        s.frames_out, s.frames_in, s.drops
                    );
                }
            }
        }
    }
}
