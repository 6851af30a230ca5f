//! Block-level Verilator test of the MR fence (`hw/src/fence.rs`, top
//! "fence") against its contract, with random stimulus.
//!
//! The contract `dereg_mr` relies on: after the host starts a fence, `busy`
//! stays high until (a) every DMA read issued up to a few cycles after the
//! start (while the invalidating MR commit may not yet be visible to the
//! key checks) has returned its last completion beat, and (b) the responder
//! has been idle at least once since the start (the packet it was placing
//! with the old key is done). A new start restarts the fence. And `busy`
//! falls once both hold and nothing else is owed: the fence never waits for
//! reads issued after it took its snapshot.
//!
//! Stimulus: reads issued and completed in order with random latency (up to
//! 256 in flight, as the DMA port allows), the responder busy for random
//! stretches (sometimes long), fences started at random, sometimes again
//! while one is in progress. Two parameter sets: a quiet port with short
//! responder work, and a saturated port with long responder work.

use rnic_sim::model::Model;
use rnic_sim::rng::SplitMix as Rng;
use std::collections::VecDeque;

/// Reads issued up to this many cycles after a start may have passed their
/// key check against the old MR entry: the fence owes them (its settle time).
const SETTLE: u64 = 6;

struct Spec {
    name: &'static str,
    seeds: &'static [u64],
    /// Percent of cycles that issue a read (when fewer than 256 are in flight).
    issue_pct: u64,
    /// Read latency range in cycles.
    lat: (u64, u64),
    /// Longest responder busy stretch in cycles.
    busy_max: u64,
    /// Chance per 10 000 cycles of a start while a fence is in progress.
    restart: u64,
    cycles: u64,
}

fn run(spec: &Spec, seed: u64) -> Result<(u64, u64), String> {
    let mut m = Model::new("fence").map_err(|e| e.to_string())?;
    let p = |n: &str| m.port(n).unwrap_or_else(|e| panic!("{e}"));
    let (start, resp_idle, rd_issued, rd_done, busy) =
        (p("start"), p("resp_idle"), p("rd_issued"), p("rd_done"), p("busy"));
    let mut r = Rng::new(seed);
    // Completion times of reads in flight, in issue order.
    let mut inflight: VecDeque<u64> = VecDeque::new();
    let (mut issued, mut done) = (0u64, 0u64);
    // issued[] count at each cycle, to find the count at start + SETTLE.
    let mut issued_at: Vec<u64> = Vec::with_capacity(spec.cycles as usize);
    let mut resp_busy_until = 0u64;
    // The fence in progress: (start cycle, first cycle after it with the responder idle).
    let mut fence: Option<(u64, Option<u64>)> = None;
    let (mut fences, mut completed) = (0u64, 0u64);
    for t in 0..spec.cycles {
        let ctx = |w: String| format!("{} seed {seed:#x} cycle {t}: {w}", spec.name);
        // Responder: idle unless in a busy stretch.
        if t >= resp_busy_until && r.below(100) < 3 {
            resp_busy_until = t + 1 + r.below(spec.busy_max);
        }
        let idle = t >= resp_busy_until;
        let issue = inflight.len() < 256 && r.below(100) < spec.issue_pct;
        let finish = inflight.front().is_some_and(|&due| due <= t);
        let go = r.below(10_000) < if fence.is_some() { spec.restart } else { 100 };
        m.set(start, go as u64);
        m.set(resp_idle, idle as u64);
        m.set(rd_issued, issue as u64);
        m.set(rd_done, finish as u64);
        m.clock_low();
        let b = m.get(busy) != 0;
        // The contract, checked in the cycle busy is seen low after a fence.
        if let Some((s, first_idle)) = fence {
            if !b && t > s {
                if t <= s + SETTLE {
                    return Err(ctx(format!("busy fell {} cycles after the start", t - s)));
                }
                let owed = issued_at[(s + SETTLE) as usize];
                if done < owed {
                    return Err(ctx(format!(
                        "busy fell with {} reads issued before the snapshot still outstanding",
                        owed - done
                    )));
                }
                if first_idle.is_none() {
                    return Err(ctx("busy fell before the responder was idle once".into()));
                }
                fence = None;
                completed += 1;
            } else if let Some(i) = first_idle {
                // Liveness: what the fence can owe is issued by the later of the
                // settle time and the responder's first idle cycle, and completes
                // within the latency plus a full queue of reads.
                let deadline = i.max(s + SETTLE + 1) + spec.lat.1 + 256 + 10;
                if b && t > deadline {
                    return Err(ctx(format!("busy still high {} cycles after the start", t - s)));
                }
            }
        }
        if let Some((s, first_idle)) = fence.as_mut() {
            if t > *s && idle && first_idle.is_none() {
                *first_idle = Some(t);
            }
        }
        if go {
            fence = Some((t, None));
            fences += 1;
        }
        if issue {
            let lat = spec.lat.0 + r.below(spec.lat.1 - spec.lat.0 + 1);
            let due = (t + lat).max(inflight.back().copied().unwrap_or(0));
            inflight.push_back(due);
            issued += 1;
        }
        if finish {
            inflight.pop_front();
            done += 1;
        }
        issued_at.push(issued);
        m.clock_high();
        if go && m.get(busy) == 0 {
            return Err(ctx("busy not high the cycle after a start".into()));
        }
    }
    if completed * 2 < fences {
        return Err(format!("{} seed {seed:#x}: only {completed} of {fences} fences completed", spec.name));
    }
    Ok((fences, completed))
}

fn check(spec: Spec) {
    for &seed in spec.seeds {
        match run(&spec, seed) {
            Ok((f, c)) => eprintln!("{} seed {seed:#x}: {f} fences started, {c} completed", spec.name),
            Err(e) => panic!("{e}"),
        }
    }
}

#[test]
fn quiet_port_short_placements() {
    check(Spec {
        name: "quiet_port_short_placements",
        seeds: &[0xFE0C_0001, 0xFE0C_0002],
        issue_pct: 10,
        lat: (20, 300),
        busy_max: 70,
        restart: 20,
        cycles: 200_000,
    });
}

#[test]
fn saturated_port_long_placements() {
    check(Spec {
        name: "saturated_port_long_placements",
        seeds: &[0xFE0C_0101, 0xFE0C_0102],
        issue_pct: 90,
        lat: (250, 1000),
        busy_max: 2000,
        restart: 1,
        cycles: 200_000,
    });
}
