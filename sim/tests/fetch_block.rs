//! Block-level Verilator test of the WQE fetch block (`hw/src/fetch.rs`, top
//! "wqe_fetch") against a reference model, with random stimulus.
//!
//! The harness plays the turn engine and the DMA port as the send path uses
//! them: batches of the current QP while it has WQEs to fetch, one lookahead
//! batch at a time (never a current-QP batch after it until the swap),
//! WQEs held and finished, pops of the current QP's WQEs, the swap once the
//! current QP's WQEs are gone, requests held until taken with `rd_ready`
//! random, completion beats in request order after a random latency with
//! random gaps. Rings are 1 to 1024 WQEs, consumer indices anywhere in the
//! 16-bit space (so batches stop at the ring's end and the index wraps).
//!
//! Checked every cycle: each DMA read (address at the first WQE not yet held,
//! buffered or in flight, or at the lookahead's consumer index; length up to
//! 8 WQEs, no more than posted, than the buffer can take, or than are left
//! before the ring's end, then and in the cycle before; the WQE tag), that a
//! request goes out exactly from its second cycle unless a fetch, pop or
//! swap happened in the cycle before, the status outputs (`cur_owed`,
//! `cur_inflight`, `wqe_ready`; `room` and `can_fetch` as of the cycle
//! before, low after a fetch, pop or swap) against the model's counters, and that the buffer's head is the WQE the model expects (beats
//! are marked with their own address), shown at most `SHOW_LAG` cycles after
//! it arrived. The model also checks that the buffer never holds more than
//! its 32 entries.
//!
//! `RNIC_FETCH_BLOCK_ITERS=n` runs n seeds per set, `RNIC_FETCH_BLOCK_SEED=s`
//! seed s only.

mod common;

use common::{block_seeds, p};
use rnic_sim::model::Model;
use rnic_sim::rng::SplitMix as Rng;
use rnic_spec::params::{dma_tag, SCHED_WQES_PER_TURN};
use std::collections::VecDeque;

const SHOW_LAG: u64 = 2;
const BUF: u64 = 32;

/// A QP's ring as the engine presents it.
#[derive(Clone, Copy, Debug)]
struct Ring {
    base: u64,
    log2: u32,
    ssn: u16,
    /// WQEs posted beyond those fetched (the producer index is derived).
    unfetched: u16,
}

impl Ring {
    fn random(r: &mut Rng, min_unfetched: u16) -> Ring {
        let log2 = r.below(11) as u32;
        Ring {
            base: (r.below(1 << 40) << 12) | (r.below(64) << 6),
            log2,
            ssn: r.below(1 << 16) as u16,
            unfetched: (min_unfetched as u64 + r.below(40)).min(1 << log2) as u16,
        }
    }
    fn addr(&self, idx: u16) -> u64 {
        self.base + (((idx as u64) & ((1 << self.log2) - 1)) << 6)
    }
    /// WQEs a batch at `start` fetches with `nroom` free entries.
    fn nfetch(&self, start: u16, pi: u16, nroom: u64) -> u64 {
        let pending = pi.wrapping_sub(start) as u64;
        let ring_room = (1u64 << self.log2) - ((start as u64) & ((1 << self.log2) - 1));
        (SCHED_WQES_PER_TURN as u64).min(nroom).min(pending).min(ring_room)
    }
}

struct Set {
    name: &'static str,
    base_seed: u64,
    /// Read latency range in cycles.
    lat: (u64, u64),
    /// Percent of cycles `rd_ready` is high.
    ready_pct: u64,
    /// Percent of cycles the engine pops a WQE it can pop.
    pop_pct: u64,
    cycles: u64,
}

#[derive(Default)]
struct Stats {
    fetches: u64,
    la_fetches: u64,
    beats: u64,
    swaps: u64,
    full_buffer: u64,
}

fn run(set: &Set, seed: u64) -> Result<Stats, String> {
    let mut m = Model::new("wqe_fetch").map_err(|e| e.to_string())?;
    let pt = |n: &str| p(&m, n);
    let (cur_base, cur_log2, cur_ssn, cur_pi, held_p) =
        (pt("cur_base"), pt("cur_log2"), pt("cur_ssn"), pt("cur_pi"), pt("held"));
    let (la_base, la_log2, la_ssn, la_pi) = (pt("la_base"), pt("la_log2"), pt("la_ssn"), pt("la_pi"));
    let (fetch_cur, fetch_la, fetch_taken) = (pt("fetch_cur"), pt("fetch_la"), pt("fetch_taken"));
    let (rd_valid, rd_ready, rd_addr, rd_len, rd_tag) =
        (pt("rd_valid"), pt("rd_ready"), pt("rd_addr"), pt("rd_len"), pt("rd_tag"));
    let (wqe_valid, wqe_data, wqe_ready) = (pt("wqe_valid"), pt("wqe_data"), pt("wqe_ready"));
    let (head_valid, head, pop, swap) = (pt("head_valid"), pt("head"), pt("pop"), pt("swap"));
    let (cur_owed, cur_inflight, room, can_fetch) = (pt("cur_owed"), pt("cur_inflight"), pt("room"), pt("can_fetch"));
    let mut r = Rng::new(seed);
    let mut cur = Ring::random(&mut r, 0);
    let mut la = Ring::random(&mut r, 1);
    let mut held = false;
    // Model: counters, the buffer (WQE address, cycle written), beats in flight (address, due).
    let (mut nbuf, mut pf, mut nbuf2, mut pf2) = (0u64, 0u64, 0u64, 0u64);
    let mut buf: VecDeque<(u64, u64)> = VecDeque::new();
    let mut flight: VecDeque<(u64, u64)> = VecDeque::new();
    // A request held until taken: Some(true) lookahead, Some(false) current.
    let mut req: Option<bool> = None;
    let mut la_fetched = false;
    // The cycle before: its request, whether a fetch, pop or swap happened, the hints and batch sizes it saw.
    let mut req_prev: Option<bool> = None;
    let mut event_prev = true;
    let (mut room_prev, mut can_prev) = (false, false);
    let (mut n_cur_prev, mut n_la_prev) = (0u64, 0u64);
    let mut st = Stats::default();
    let mut words = [0u32; 16];
    for t in 0..set.cycles {
        let ctx = |w: String| format!("{} seed {seed:#x} cycle {t}: {w}", set.name);
        let start = cur.ssn.wrapping_add((nbuf + pf + held as u64) as u16);
        let pi = start.wrapping_add(cur.unfetched);
        let la_pi_v = la.ssn.wrapping_add(la.unfetched);
        m.set(cur_base, cur.base);
        m.set(cur_log2, cur.log2 as u64);
        m.set(cur_ssn, cur.ssn as u64);
        m.set(cur_pi, pi as u64);
        m.set(held_p, held as u64);
        m.set(la_base, la.base);
        m.set(la_log2, la.log2 as u64);
        m.set(la_ssn, la.ssn as u64);
        m.set(la_pi, la_pi_v as u64);
        let beat = flight.front().filter(|&&(_, due)| due <= t && r.below(100) < 80).map(|&(a, _)| a);
        m.set(wqe_valid, beat.is_some() as u64);
        words.iter_mut().for_each(|w| *w = r.next() as u32);
        if let Some(a) = beat {
            words[0] = a as u32;
            words[1] = (a >> 32) as u32;
        }
        m.set_wide(wqe_data, &words);
        let ready_in = r.below(100) < set.ready_pct;
        m.set(rd_ready, ready_in as u64);
        m.set(fetch_cur, 0);
        m.set(fetch_la, 0);
        m.set(pop, 0);
        m.set(swap, 0);
        m.clock_low();
        let nroom = BUF - nbuf - pf - nbuf2 - pf2;
        let (n_cur, n_la) = (cur.nfetch(start, pi, nroom), la.nfetch(la.ssn, la_pi_v, nroom));
        let want = [
            ("cur_owed", cur_owed, (nbuf + pf != 0) as u64),
            ("cur_inflight", cur_inflight, (pf != 0) as u64),
            ("room", room, (room_prev && !event_prev) as u64),
            ("can_fetch", can_fetch, (can_prev && !event_prev) as u64),
            ("wqe_ready", wqe_ready, (pf + pf2 != 0) as u64),
        ];
        for (n, port, v) in want {
            if m.get(port) != v {
                return Err(ctx(format!(
                    "{n} = {}, model {v} (nbuf {nbuf} pf {pf} nbuf2 {nbuf2} pf2 {pf2})",
                    m.get(port)
                )));
            }
        }
        let hv = m.get(head_valid) != 0;
        if hv {
            let mut h = [0u32; 16];
            m.get_wide(head, &mut h);
            let a = h[0] as u64 | (h[1] as u64) << 32;
            match buf.front() {
                Some(&(want, _)) if want == a => {}
                other => return Err(ctx(format!("head is the WQE at {a:#x}, model {other:x?}"))),
            }
        } else if let Some(&(a, w)) = buf.front() {
            if t >= w + SHOW_LAG {
                return Err(ctx(format!("WQE at {a:#x} buffered at cycle {w} not shown")));
            }
        }
        // The engine's moves.
        if req.is_none() && r.below(100) < 20 {
            if !la_fetched && r.below(100) < 30 && nroom >= SCHED_WQES_PER_TURN as u64 {
                req = Some(true);
            } else if !la_fetched && cur.nfetch(start, pi, nroom) != 0 {
                req = Some(false);
            }
        }
        let do_pop = hv && nbuf > 0 && !held && r.below(100) < set.pop_pct;
        let do_swap = req.is_none() && nbuf + pf == 0 && !held && la_fetched && r.below(100) < 10;
        m.set(fetch_cur, (req == Some(false)) as u64);
        m.set(fetch_la, (req == Some(true)) as u64);
        m.set(pop, do_pop as u64);
        m.set(swap, do_swap as u64);
        m.eval();
        let valid = m.get(rd_valid) != 0;
        let fresh = req.is_some() && req == req_prev && !event_prev;
        if valid != fresh {
            return Err(ctx(format!(
                "rd_valid {valid} with request {req:?}, the cycle before {req_prev:?} (fetch, pop or swap: {event_prev})"
            )));
        }
        let taken = m.get(fetch_taken) != 0;
        if taken != (valid && ready_in) {
            return Err(ctx(format!("fetch_taken {taken}, rd_valid {valid}, rd_ready {ready_in}")));
        }
        let mut fetched = None;
        if let Some(is_la) = req.filter(|_| valid) {
            let (ring, s) = if is_la { (la, la.ssn) } else { (cur, start) };
            // Sized in the cycle before; never more than fits now.
            let (n, n_now) = if is_la { (n_la_prev, n_la) } else { (n_cur_prev, n_cur) };
            if n > n_now {
                return Err(ctx(format!("a batch of {n} WQEs where {n_now} fit")));
            }
            let (a, l, tag) = (m.get(rd_addr), m.get(rd_len), m.get(rd_tag));
            if a != ring.addr(s) || l != n * 64 || tag != dma_tag::SQ_WQE as u64 {
                return Err(ctx(format!(
                    "{} batch: read {a:#x} len {l} tag {tag:#x}, model {:#x} len {} tag {:#x}",
                    if is_la { "lookahead" } else { "current" },
                    ring.addr(s),
                    n * 64,
                    dma_tag::SQ_WQE
                )));
            }
            if taken {
                fetched = Some((is_la, ring, s, n));
            }
        }
        let got_beat = beat.is_some() && pf + pf2 != 0;
        req_prev = req;
        event_prev = taken || do_pop || do_swap;
        room_prev = nroom >= SCHED_WQES_PER_TURN as u64;
        can_prev = n_cur != 0;
        (n_cur_prev, n_la_prev) = (n_cur, n_la);
        m.clock_high();
        // The model's update of this cycle.
        if got_beat {
            let (a, _) = flight.pop_front().expect("beat offered");
            buf.push_back((a, t));
            if pf > 0 {
                pf -= 1;
                nbuf += 1;
            } else {
                pf2 -= 1;
                nbuf2 += 1;
            }
            st.beats += 1;
        }
        if do_pop {
            buf.pop_front();
            nbuf -= 1;
            held = true;
        } else if held && r.below(100) < 30 {
            // The WQE held is sent: the consumer index moves past it.
            held = false;
            cur.ssn = cur.ssn.wrapping_add(1);
        }
        if let Some((is_la, ring, s, n)) = fetched {
            let lat = set.lat.0 + r.below(set.lat.1 - set.lat.0 + 1);
            let due = (t + lat).max(flight.back().map_or(0, |&(_, d)| d));
            for i in 0..n {
                flight.push_back((ring.addr(s.wrapping_add(i as u16)), due));
            }
            if is_la {
                pf2 += n;
                la_fetched = true;
                st.la_fetches += 1;
            } else {
                pf += n;
                cur.unfetched -= n as u16;
                st.fetches += 1;
            }
            req = None;
        }
        if do_swap {
            // The lookahead's turn starts: its WQEs become the current QP's.
            (nbuf, pf, nbuf2, pf2) = (nbuf2, pf2, 0, 0);
            cur = la;
            cur.unfetched = la.unfetched - (nbuf + pf) as u16;
            la = Ring::random(&mut r, 1);
            la_fetched = false;
            st.swaps += 1;
        }
        if cur.unfetched == 0 && nbuf + pf == 0 && !held && r.below(100) < 5 {
            // The engine posts more (the host rang).
            cur.unfetched = (r.below(40) as u16).min((1 << cur.log2) as u16);
        }
        if nbuf + pf + nbuf2 + pf2 > BUF {
            return Err(ctx(format!("the buffer owes {} WQEs, more than its {BUF}", nbuf + pf + nbuf2 + pf2)));
        }
        if nbuf + pf + nbuf2 + pf2 == BUF {
            st.full_buffer += 1;
        }
    }
    if st.swaps < 10 || st.fetches < 100 {
        return Err(format!(
            "{} seed {seed:#x}: too little happened ({} swaps, {} fetches)",
            set.name, st.swaps, st.fetches
        ));
    }
    Ok(st)
}

fn check(set: Set) {
    for seed in block_seeds("RNIC_FETCH_BLOCK", set.base_seed) {
        match run(&set, seed) {
            Ok(s) => eprintln!(
                "fetch_block {} seed {seed:#x}: {} batches, {} lookahead batches, {} beats, {} swaps, {} cycles with the buffer fully owed",
                set.name, s.fetches, s.la_fetches, s.beats, s.swaps, s.full_buffer
            ),
            Err(e) => panic!("{e}\nreplay: RNIC_FETCH_BLOCK_SEED={seed:#x} cargo test --release -p rnic-sim --test fetch_block"),
        }
    }
}

#[test]
fn fetch_block_short_latency_eager_engine() {
    check(Set {
        name: "short_latency_eager_engine",
        base_seed: 0xFE70_0000,
        lat: (2, 30),
        ready_pct: 90,
        pop_pct: 70,
        cycles: 200_000,
    });
}

#[test]
fn fetch_block_long_latency_slow_engine() {
    check(Set {
        name: "long_latency_slow_engine",
        base_seed: 0xFE70_1000,
        lat: (100, 600),
        ready_pct: 40,
        pop_pct: 10,
        cycles: 200_000,
    });
}
