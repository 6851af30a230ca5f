//! Block-level Verilator test of the QP scheduler (`hw/src/sched.rs`, top
//! "sched") against a reference model, with random stimulus.
//!
//! The harness plays the turn engine: it pops QPNs when the schedule queue
//! shows one (up to two QPs in service, as the engine's turn plus its
//! lookahead), ends each turn after a random time with a random "more", and
//! holds a turn end until `done_ready`. Doorbells come at random: bursts from
//! many QPs, the same QP ringing over and over, doorbells in the cycle their
//! QP is popped or ends its turn, and every QP (QPN 0 and the highest
//! included) ringing at once.
//!
//! Checked every cycle against a model of the scheduler:
//! (a) the head the block shows is the model's head (activations and
//!     requeues in FIFO order), and a QP queued `SHOW_LAG` cycles ago is shown;
//! (b) `done_ready` is low exactly while a requeue is held: one that met a
//!     doorbell activating a QP (both write the schedule queue) waits for
//!     the next cycle without such a doorbell;
//! (c) `busy` is high exactly when some QP is active;
//!
//! and over the run, from the stimulus alone:
//! (d) no doorbell is lost: each is followed by a pop of its QP in the same
//!     cycle or later, and when the stimulus stops everything drains and the
//!     block goes idle;
//! (e) no turn is spurious: each pop is owed to a doorbell (in or after the
//!     cycle of the QP's previous pop) or to a turn end with "more";
//! (f) a QP is never in the queue twice.
//!
//! Seeds are fixed; a failure prints its seed. `RNIC_SCHED_BLOCK_ITERS=n`
//! runs n seeds per set, `RNIC_SCHED_BLOCK_SEED=s` runs seed s only.

mod common;

use common::{block_seeds, p};
use rnic_sim::model::Model;
use rnic_sim::rng::SplitMix as Rng;
use rnic_spec::params::NUM_QPS;
use std::collections::VecDeque;

/// Cycles after the write that queued a QP by which the block must show it.
const SHOW_LAG: u64 = 2;
/// Cycles the drain may take once the stimulus stopped.
const DRAIN_MAX: u64 = 200_000;

/// A stimulus regime.
struct Set {
    name: &'static str,
    base_seed: u64,
    /// QPs that ring (the first is 0, the last `NUM_QPS - 1`).
    qps: usize,
    /// Per-mille chance of a doorbell per cycle.
    db_pm: u64,
    /// Per-mille chance a doorbell repeats the previous QP.
    repeat_pm: u64,
    /// Turn length range in cycles.
    turn: (u64, u64),
    /// Percent of turn ends with "more".
    more_pct: u64,
    /// Every `storm` cycles every QP rings back to back (0: never).
    storm: u64,
    /// Cycles the engine pops nothing after a storm starts (the queue fills).
    storm_stall: u64,
    cycles: u64,
}

/// The scheduler as specified.
struct Ref {
    active: Vec<bool>,
    rung: Vec<bool>,
    /// Queued QPNs with the cycle of the write.
    q: VecDeque<(usize, u64)>,
    /// A requeue waiting for a cycle without an activating doorbell.
    held: Option<usize>,
}

impl Ref {
    fn push(&mut self, qpn: usize, t: u64) -> Result<(), String> {
        if self.q.iter().any(|&(x, _)| x == qpn) || self.held == Some(qpn) {
            return Err(format!("(f) QPN {qpn} queued twice"));
        }
        self.q.push_back((qpn, t));
        Ok(())
    }
}

#[derive(Default)]
struct Stats {
    doorbells: u64,
    pops: u64,
    requeues: u64,
    done_waits: u64,
    max_queue: usize,
    storms: u64,
}

fn run(set: &Set, seed: u64) -> Result<Stats, String> {
    let mut m = Model::new("sched").map_err(|e| e.to_string())?;
    let (db_valid, db_qpn, sched_valid, sched_qpn, sched_pop) =
        (p(&m, "db_valid"), p(&m, "db_qpn"), p(&m, "sched_valid"), p(&m, "sched_qpn"), p(&m, "sched_pop"));
    let (done_valid, done_qpn, done_more, done_ready, busy) =
        (p(&m, "done_valid"), p(&m, "done_qpn"), p(&m, "done_more"), p(&m, "done_ready"), p(&m, "busy"));
    let mut r = Rng::new(seed);
    let n = NUM_QPS;
    // The QPs that ring: 0, the highest, and random others.
    let mut qps = vec![0, n - 1];
    let mut others: Vec<usize> = (1..n - 1).collect();
    r.shuffle(&mut others);
    qps.extend(others.into_iter().take(set.qps.saturating_sub(2)));
    qps.truncate(set.qps);
    let mut model = Ref { active: vec![false; n], rung: vec![false; n], q: VecDeque::new(), held: None };
    // In service: (qpn, cycle the turn ends).
    let mut service: Vec<(usize, u64)> = Vec::new();
    // A turn end presented until taken: (qpn, more).
    let mut done: Option<(usize, bool)> = None;
    // (d): the oldest unserved doorbell of each QP; (e): a pop is owed.
    let mut unserved: Vec<Option<u64>> = vec![None; n];
    let mut owed = vec![false; n];
    let mut storm_left: Vec<usize> = Vec::new();
    let mut last_db = 0usize;
    let mut stall_until = 0u64;
    let mut st = Stats::default();
    let mut t = 0u64;
    let mut quiet_since: Option<u64> = None;
    loop {
        let stimulus = t < set.cycles;
        let now = t;
        let ctx = move |w: String| format!("{} seed {seed:#x} cycle {now}: {w}", set.name);
        // Doorbell of this cycle.
        if stimulus && set.storm != 0 && t % set.storm == set.storm / 2 {
            storm_left = qps.clone();
            r.shuffle(&mut storm_left);
            st.storms += 1;
            stall_until = t + set.storm_stall;
        }
        let db = if let Some(q) = storm_left.pop() {
            Some(q)
        } else if stimulus && r.below(1000) < set.db_pm {
            Some(if r.below(1000) < set.repeat_pm { last_db } else { qps[r.below(qps.len() as u64) as usize] })
        } else {
            None
        };
        if let Some(q) = db {
            last_db = q;
        }
        m.set(db_valid, db.is_some() as u64);
        m.set(db_qpn, db.unwrap_or(0) as u64);
        m.set(sched_pop, 0);
        m.set(done_valid, 0);
        m.clock_low();
        let (valid, head, ready, b) =
            (m.get(sched_valid) != 0, m.get(sched_qpn) as usize, m.get(done_ready) != 0, m.get(busy) != 0);
        // (a)-(c) against the model.
        if valid {
            match model.q.front() {
                Some(&(h, _)) if h == head => {}
                other => return Err(ctx(format!("(a) block shows QPN {head}, model head {other:?}"))),
            }
        } else if let Some(&(h, w)) = model.q.front() {
            if t >= w + SHOW_LAG {
                return Err(ctx(format!("(a) QPN {h} queued at cycle {w} is not shown")));
            }
        }
        let want_ready = model.held.is_none();
        if ready != want_ready {
            return Err(ctx(format!("(b) done_ready {ready}, expected {want_ready} (doorbell {db:?})")));
        }
        let want_busy = model.active.iter().any(|&a| a);
        if b != want_busy {
            return Err(ctx(format!("(c) busy {b}, expected {want_busy}")));
        }
        // The engine: pop when it has room for another QP.
        let pop = valid && t >= stall_until && service.len() < 2 && r.below(100) < 60;
        if pop {
            m.set(sched_pop, 1);
        }
        // The engine: end a turn that is over (the older first).
        if done.is_none() {
            if let Some(i) = service.iter().position(|&(_, end)| end <= t) {
                let (q, _) = service.remove(i);
                let more = stimulus && r.below(100) < set.more_pct;
                done = Some((q, more));
            }
        }
        if let Some((q, more)) = done {
            m.set(done_valid, 1);
            m.set(done_qpn, q as u64);
            m.set(done_more, more as u64);
        }
        m.clock_high();
        // The model's update of this cycle, in the block's order.
        if pop {
            let (h, _) = model.q.pop_front().expect("checked above");
            model.rung[h] = false;
            if !owed[h] {
                return Err(ctx(format!("(e) QPN {h} popped with no doorbell or \"more\" since its last pop")));
            }
            owed[h] = false;
            unserved[h] = None;
            let len = set.turn.0 + r.below(set.turn.1 - set.turn.0 + 1);
            service.push((h, t + len));
            st.pops += 1;
        }
        let db_new = db.is_some_and(|q| !model.active[q]);
        if let Some(q) = db {
            st.doorbells += 1;
            owed[q] = true;
            unserved[q].get_or_insert(t);
            if pop && head == q {
                // Served by this pop: the engine reads the producer index after it.
                unserved[q] = None;
            }
            if db_new {
                model.active[q] = true;
                model.push(q, t).map_err(ctx)?;
            } else {
                model.rung[q] = true;
            }
        }
        if !db_new {
            if let Some(q) = model.held.take() {
                model.push(q, t).map_err(ctx)?;
            }
        }
        if let Some((q, more)) = done {
            if ready {
                let requeue = more || model.rung[q] || db == Some(q);
                model.rung[q] = false;
                if requeue {
                    if db_new {
                        model.held = Some(q);
                    } else {
                        model.push(q, t).map_err(ctx)?;
                    }
                    st.requeues += 1;
                    if more {
                        owed[q] = true;
                    }
                } else {
                    model.active[q] = false;
                }
                done = None;
            } else {
                st.done_waits += 1;
            }
        }
        st.max_queue = st.max_queue.max(model.q.len());
        t += 1;
        // (d) and the drain.
        if !stimulus {
            let idle = model.q.is_empty() && model.held.is_none() && service.is_empty() && done.is_none() && !b;
            if idle {
                let since = *quiet_since.get_or_insert(t);
                if t >= since + 10 {
                    if let Some(q) = unserved.iter().position(|u| u.is_some()) {
                        return Err(ctx(format!("(d) doorbell of QPN {q} at cycle {:?} never served", unserved[q])));
                    }
                    if m.get(sched_valid) != 0 || m.get(busy) != 0 {
                        return Err(ctx("block not idle after the drain".into()));
                    }
                    return Ok(st);
                }
            } else {
                quiet_since = None;
            }
            if t > set.cycles + DRAIN_MAX {
                return Err(ctx(format!("no drain: {} queued, {} in service", model.q.len(), service.len())));
            }
        }
    }
}

fn check(set: Set) {
    for seed in block_seeds("RNIC_SCHED_BLOCK", set.base_seed) {
        match run(&set, seed) {
            Ok(s) => eprintln!(
                "sched_block {} seed {seed:#x}: {} doorbells ({} storms), {} pops, {} requeues, {} turn ends held, queue up to {}",
                set.name, s.doorbells, s.storms, s.pops, s.requeues, s.done_waits, s.max_queue
            ),
            Err(e) => panic!("{e}\nreplay: RNIC_SCHED_BLOCK_SEED={seed:#x} cargo test --release -p rnic-sim --test sched_block"),
        }
    }
}

#[test]
fn sched_block_4qp_sparse_long_turns() {
    check(Set {
        name: "4qp_sparse_long_turns",
        base_seed: 0x5C4E_0000,
        qps: 4,
        db_pm: 20,
        repeat_pm: 300,
        turn: (1, 400),
        more_pct: 40,
        storm: 0,
        storm_stall: 0,
        cycles: 200_000,
    });
}

#[test]
fn sched_block_all_qps_storms_short_turns() {
    check(Set {
        name: "all_qps_storms_short_turns",
        base_seed: 0x5C4E_1000,
        qps: NUM_QPS,
        db_pm: 700,
        repeat_pm: 200,
        turn: (1, 6),
        more_pct: 50,
        storm: 20_000,
        storm_stall: 600,
        cycles: 200_000,
    });
}

#[test]
fn sched_block_16qp_every_cycle_doorbells() {
    check(Set {
        name: "16qp_every_cycle_doorbells",
        base_seed: 0x5C4E_2000,
        qps: 16,
        db_pm: 1000,
        repeat_pm: 500,
        turn: (1, 60),
        more_pct: 20,
        storm: 5_000,
        storm_stall: 0,
        cycles: 100_000,
    });
}
