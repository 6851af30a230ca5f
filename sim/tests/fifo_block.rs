//! Block-level Verilator test of the FIFO with reset (`hw/src/fifo.rs`, top
//! "fifo": 8 words of 16 bits) against a model, with random stimulus.
//!
//! The model: a write taken (not full) at cycle t is counted by `full` from
//! cycle t+1 and readable (`empty` low, `data_out` the head) from cycle t+2;
//! a read while not empty pops the head; `almost_full` is full or 7 readable
//! words; a reset at cycle t empties the FIFO for cycle t+1 and drops that
//! cycle's write. Outputs are checked every cycle; runs alternate bursts of
//! writes and of reads so the FIFO is often full and often empty.

mod common;

use common::block_seeds;
use rnic_sim::model::Model;
use rnic_sim::rng::SplitMix as Rng;
use std::collections::VecDeque;

const DEPTH: usize = 8;
const CYCLES: u64 = 40_000;

fn run(seed: u64) -> Result<[u64; 5], String> {
    let mut m = Model::new("fifo").map_err(|e| e.to_string())?;
    let p = |n: &str| m.port(n).unwrap_or_else(|e| panic!("{e}"));
    let (reset, read, write, data_in) = (p("reset"), p("read"), p("write"), p("data_in"));
    let (data_out, empty, full, afull) = (p("data_out"), p("empty"), p("full"), p("almost_full"));
    let mut r = Rng::new(seed);
    // Words held, each with the first cycle it is readable.
    let mut q: VecDeque<(u16, u64)> = VecDeque::new();
    // Writes taken, reads taken, resets, cycles seen full, cycles seen empty.
    let mut seen = [0u64; 5];
    let (mut wr_pct, mut rd_pct) = (50, 50);
    for t in 0..CYCLES {
        let ctx = |w: String| format!("fifo seed {seed:#x} cycle {t}: {w}");
        if t % 97 == 0 {
            (wr_pct, rd_pct) = [(50, 50), (90, 10), (10, 90), (100, 0), (0, 100)][r.below(5) as usize];
        }
        let rst = r.below(1000) < 3;
        let wr = r.below(100) < wr_pct;
        let rd = r.below(100) < rd_pct;
        let word = r.below(1 << 16) as u16;
        m.set(reset, rst as u64);
        m.set(write, wr as u64);
        m.set(read, rd as u64);
        m.set(data_in, word as u64);
        m.clock_low();
        let visible = q.iter().take_while(|&&(_, at)| at <= t).count();
        let want_empty = visible == 0;
        let want_full = q.len() == DEPTH;
        let want_afull = want_full || visible == DEPTH - 1;
        let got = (m.get(empty) != 0, m.get(full) != 0, m.get(afull) != 0);
        if got != (want_empty, want_full, want_afull) {
            return Err(ctx(format!(
                "(empty, full, almost_full) = {got:?}, want {:?} with {} held, {visible} readable",
                (want_empty, want_full, want_afull),
                q.len()
            )));
        }
        if !want_empty && m.get(data_out) as u16 != q[0].0 {
            return Err(ctx(format!("head {:#06x}, want {:#06x}", m.get(data_out), q[0].0)));
        }
        if rst {
            q.clear();
            seen[2] += 1;
        } else {
            if rd && !want_empty {
                q.pop_front();
                seen[1] += 1;
            }
            if wr && !want_full {
                q.push_back((word, t + 2));
                seen[0] += 1;
            }
        }
        seen[3] += want_full as u64;
        seen[4] += want_empty as u64;
        m.clock_high();
    }
    Ok(seen)
}

#[test]
fn fifo_matches_its_model_under_random_traffic_and_resets() {
    for seed in block_seeds("RNIC_FIFO_BLOCK", 0xF1F0_0001) {
        match run(seed) {
            Ok(s) => {
                eprintln!(
                    "fifo seed {seed:#x}: {} writes, {} reads, {} resets, {} cycles full, {} empty",
                    s[0], s[1], s[2], s[3], s[4]
                );
                assert!(s[2] > 0 && s[3] > 0 && s[4] > 0, "fifo seed {seed:#x}: never reset, full or empty: {s:?}");
            }
            Err(e) => panic!("{e}"),
        }
    }
}
