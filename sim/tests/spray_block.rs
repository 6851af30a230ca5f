//! Block-level Verilator test of STrack's adaptive entropy selector
//! (`hw/src/spray.rs`, top "spray") against `rnic_model::strack::AdaptiveLb`,
//! bit for bit.
//!
//! Random request streams over a few QPs (including the highest QPN):
//! resets with every number of entropies (1, 2, 7, 8, 9, 64, 255, 256 and
//! random ones), ECN-marked and clean ACKs for entropies inside and
//! outside the active set (runs of marks too, so whole bitmaps fill and the
//! scan wraps and ages marks out), and choices with windows from 0 packets
//! to far beyond `max_paths`, so the active set grows and shrinks under the
//! round-robin pointer. A quarter of the resets make the QP oblivious
//! (`rnic_model::strack::lb::ObliviousLb` started at entropy 1): its ACKs
//! and windows must not move its round robin. Every chosen entropy must be
//! the model's. The
//! engine's handshake is honoured: a request is held until `req_ready`.
//! `RNIC_SPRAY_BLOCK_SEED=S` replays one seed, `RNIC_SPRAY_BLOCK_OPS=N`
//! runs longer.

use rnic_model::strack::lb::{AdaptiveLb, ObliviousLb};
use rnic_sim::model::Model;
use rnic_sim::rng::SplitMix as Rng;
use rnic_spec::params::NUM_QPS;

const OP_ACK: u64 = 0;
const OP_CHOOSE: u64 = 1;
const OP_RESET: u64 = 2;

fn pick_max_paths(r: &mut Rng) -> u16 {
    match r.below(3) {
        0 => [1u16, 2, 7, 8, 9, 64, 255, 256][r.below(8) as usize],
        _ => 1 + r.below(256) as u16,
    }
}

/// A QP's selector in the model: adaptive (Algorithm 3) or oblivious round robin.
#[derive(Clone)]
enum Lb {
    Adaptive(AdaptiveLb),
    Oblivious(ObliviousLb, u16),
}

fn run(seed: u64, ops: u64) -> Result<(u64, u64, u64), String> {
    let mut m = Model::new("spray").map_err(|e| e.to_string())?;
    let p = |n: &str| m.port(n).unwrap_or_else(|e| panic!("{e}"));
    let obl_p = p("req_oblivious");
    let (valid, ready, qpn_p, op_p, ecn_p, path_p, cwnd_p, maxp_p, out_v, out_path) = (
        p("req_valid"),
        p("req_ready"),
        p("req_qpn"),
        p("req_op"),
        p("req_ecn"),
        p("req_path"),
        p("req_cwnd"),
        p("req_max_paths"),
        p("out_valid"),
        p("out_path"),
    );
    let mut r = Rng::new(seed);
    // A few QPs, the highest among them, so the table's addressing is covered.
    let qpns = [0usize, 1, 77, NUM_QPS - 1];
    let mut lbs: Vec<Option<Lb>> = vec![None; qpns.len()];
    let (mut chosen, mut acks, mut cycles) = (0u64, 0u64, 0u64);
    // Marks come in runs now and then (a congested stretch) to fill bitmaps.
    let mut mark_pct = 30;
    let mut pending: Option<(u64, usize)> = None;
    for i in 0..ops {
        let qi = r.below(qpns.len() as u64) as usize;
        if r.below(200) == 0 {
            mark_pct = [5, 30, 90, 100][r.below(4) as usize];
        }
        let mut obl = false;
        let (op, ecn, path, cwnd, maxp) = if lbs[qi].is_none() || r.below(100) == 0 {
            obl = r.below(4) == 0;
            (OP_RESET, false, 0u8, 0u32, pick_max_paths(&mut r))
        } else if r.below(100) < 55 {
            let mp = match lbs[qi].as_ref().unwrap() {
                Lb::Adaptive(lb) => lb.active_paths(u32::MAX) as u64,
                Lb::Oblivious(_, mp) => *mp as u64,
            };
            let path = if r.below(10) == 0 { r.below(256) } else { r.below(mp) };
            (OP_ACK, r.below(100) < mark_pct, path as u8, 0, 0)
        } else {
            let cwnd = match r.below(4) {
                0 => r.below(8) as u32,
                1 => r.below(300) as u32,
                2 => u32::MAX - r.below(4) as u32,
                _ => r.below(64) as u32,
            };
            (OP_CHOOSE, false, 0, cwnd, 0)
        };
        let ctx = |w: String| format!("seed {seed:#x} op {i} (QP {}): {w}", qpns[qi]);
        // Present the request until the engine takes it; watch for the answer of the previous one.
        m.set(valid, 1);
        m.set(qpn_p, qpns[qi] as u64);
        m.set(op_p, op);
        m.set(ecn_p, ecn as u64);
        m.set(path_p, path as u64);
        m.set(cwnd_p, cwnd as u64);
        m.set(maxp_p, maxp as u64);
        m.set(obl_p, obl as u64);
        let mut waited = 0;
        loop {
            m.clock_low();
            cycles += 1;
            if m.get(out_v) != 0 {
                let (want, wq) =
                    pending.take().ok_or_else(|| ctx("an entropy came out with no choice asked".into()))?;
                let got = m.get(out_path);
                if got != want {
                    return Err(ctx(format!("QP {}: chose entropy {got}, the model {want}", qpns[wq])));
                }
            }
            let taken = m.get(ready) != 0;
            m.clock_high();
            if taken {
                break;
            }
            waited += 1;
            if waited > 600 {
                return Err(ctx("the engine did not take a request for 600 cycles".into()));
            }
        }
        m.set(valid, 0);
        match op {
            OP_RESET if obl => lbs[qi] = Some(Lb::Oblivious(ObliviousLb::new(maxp, 1), maxp)),
            OP_RESET => lbs[qi] = Some(Lb::Adaptive(AdaptiveLb::new(maxp))),
            OP_ACK => {
                if let Some(Lb::Adaptive(lb)) = lbs[qi].as_mut() {
                    lb.update_ecn_bitmap(ecn, path);
                }
                acks += 1;
            }
            _ => {
                let want = match lbs[qi].as_mut().unwrap() {
                    Lb::Adaptive(lb) => lb.choose_path(cwnd),
                    Lb::Oblivious(lb, _) => lb.choose_path(),
                } as u64;
                if pending.replace((want, qi)).is_some() {
                    return Err(ctx("the previous choice never came out".into()));
                }
                chosen += 1;
            }
        }
    }
    // The last answer.
    for _ in 0..600 {
        m.clock_low();
        if m.get(out_v) != 0 {
            let (want, wq) = pending.take().ok_or("an entropy came out with no choice asked")?;
            let got = m.get(out_path);
            if got != want {
                return Err(format!("seed {seed:#x} last op: QP {}: chose entropy {got}, the model {want}", qpns[wq]));
            }
        }
        m.clock_high();
    }
    if pending.is_some() {
        return Err(format!("seed {seed:#x}: the last choice never came out"));
    }
    Ok((chosen, acks, cycles))
}

/// Seeds of the default run.
const SEEDS: u64 = 500;

#[test]
fn spray_block_matches_the_model() {
    let ops: u64 = std::env::var("RNIC_SPRAY_BLOCK_OPS").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000);
    let seeds: Vec<u64> = match std::env::var("RNIC_SPRAY_BLOCK_SEED") {
        Ok(s) => vec![u64::from_str_radix(s.trim_start_matches("0x"), 16).expect("hex seed")],
        Err(_) => (1..=SEEDS).map(|i| 0x5B4A_0000 + i).collect(),
    };
    let (n, mut total) = (seeds.len(), (0, 0));
    for seed in seeds {
        match run(seed, ops) {
            Ok((chosen, acks, cycles)) => {
                total = (total.0 + chosen, total.1 + acks);
                if seed <= 0x5B4A_0004 {
                    println!(
                        "spray_block seed {seed:#x}: {chosen} choices and {acks} ACKs match the model ({cycles} cycles)"
                    )
                }
            }
            Err(e) => panic!(
                "{e}\nreplay: RNIC_SPRAY_BLOCK_SEED={seed:#x} cargo test --release -p rnic-sim --test spray_block"
            ),
        }
    }
    println!("spray_block: {n} seeds, {} choices and {} ACKs match the model", total.0, total.1);
}
