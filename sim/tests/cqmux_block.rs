//! Block-level Verilator test of the completion-request mux
//! (`rnic_hw::cqw::CqReqMux`, top "cq_mux") against its contract, with
//! random stimulus.
//!
//! Two sources (the responder's receive completions, the ACK receiver's
//! requester completions) offer numbered requests, each holding its request
//! until taken; the completion writer's `ready` is random. Checked every
//! cycle: the output is valid exactly when a source offers; the word is the
//! chosen source's; a source sees ready only when its request is the one
//! taken; each source's requests come out once and in order; and when both
//! offer, neither is passed over twice in a row (round robin).

mod common;

use common::{block_seeds, p};
use rnic_sim::model::Model;
use rnic_sim::rng::SplitMix as Rng;

fn run(seed: u64, offer_pct: u64, ready_pct: u64, cycles: u64) -> Result<(u64, u64, u64), String> {
    let mut m = Model::new("cq_mux").map_err(|e| e.to_string())?;
    let ports = ["a_valid", "a_data", "a_ready", "b_valid", "b_data", "b_ready", "valid", "data", "ready"];
    let [av, ad, ar, bv, bd, br, v, d, rdy] = ports.map(|n| p(&m, n));
    let mut r = Rng::new(seed);
    // Next number to offer and next expected out, per source; the word carries (source, number).
    let (mut next, mut out) = ([0u64; 2], [0u64; 2]);
    let mut offering = [false; 2];
    // Transfers of the other source in a row while this one offered.
    let mut passed = [0u64; 2];
    let mut both = 0u64;
    let word = |src: usize, n: u64| -> [u32; 3] { [n as u32, (n >> 32) as u32, 0xC0 + src as u32] };
    for t in 0..cycles {
        let ctx = |w: String| format!("seed {seed:#x} cycle {t}: {w}");
        for o in offering.iter_mut() {
            if !*o && r.below(100) < offer_pct {
                *o = true;
            }
        }
        let ready = r.below(100) < ready_pct;
        m.set(av, offering[0] as u64);
        m.set_wide(ad, &word(0, next[0]));
        m.set(bv, offering[1] as u64);
        m.set_wide(bd, &word(1, next[1]));
        m.set(rdy, ready as u64);
        m.eval();
        let valid = m.get(v) == 1;
        if valid != (offering[0] || offering[1]) {
            return Err(ctx(format!("valid {valid} with offers {offering:?}")));
        }
        let readies = [m.get(ar) == 1, m.get(br) == 1];
        if readies[0] && readies[1] {
            return Err(ctx("both sources see ready".into()));
        }
        if valid {
            let mut w = [0u32; 3];
            m.get_wide(d, &mut w);
            let src = w[2].wrapping_sub(0xC0) as usize;
            if src > 1 || !offering[src] {
                return Err(ctx(format!("word {w:x?} from no offering source")));
            }
            let n = w[0] as u64 | (w[1] as u64) << 32;
            if n != next[src] {
                return Err(ctx(format!("source {src} word {n}, offered {}", next[src])));
            }
            if readies[src] != ready || readies[1 - src] {
                return Err(ctx(format!("ready {ready}, source readies {readies:?}, chosen {src}")));
            }
            if ready {
                if n != out[src] {
                    return Err(ctx(format!("source {src}: request {n} out, expected {}", out[src])));
                }
                out[src] += 1;
                next[src] += 1;
                offering[src] = false;
                if offering[1 - src] {
                    passed[1 - src] += 1;
                    both += 1;
                    if passed[1 - src] > 1 {
                        return Err(ctx(format!("source {} passed over twice in a row", 1 - src)));
                    }
                }
                passed[src] = 0;
            }
        } else if readies[0] || readies[1] {
            return Err(ctx("a source sees ready with nothing offered".into()));
        }
        m.tick();
    }
    Ok((out[0], out[1], both))
}

fn check(name: &str, base: u64, offer_pct: u64, ready_pct: u64) {
    for seed in block_seeds("RNIC_CQMUX_BLOCK", base) {
        match run(seed, offer_pct, ready_pct, 100_000) {
            Ok((a, b, both)) => {
                eprintln!("cqmux_block {name} seed {seed:#x}: {a} + {b} requests, {both} taken while the other waited")
            }
            Err(e) => panic!(
                "cqmux_block {name}: {e}\nreplay: RNIC_CQMUX_BLOCK_SEED={seed:#x} cargo test --release -p rnic-sim --test cqmux_block"
            ),
        }
    }
}

#[test]
fn cqmux_block_contended() {
    check("contended", 0xC0_0000, 60, 40);
}

#[test]
fn cqmux_block_sparse() {
    check("sparse", 0xC0_1000, 5, 90);
}
