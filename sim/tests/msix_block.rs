//! Block-level Verilator test of the MSI-X block (`rnic_hw::msix::Msix`,
//! top "msix") against a reference model of its contract, with random
//! stimulus.
//!
//! Each cycle, at random: table writes (address or data/mask words of any
//! vector), arms and commits (disarms) of any CQ including the highest,
//! CQE events of any CQ with any vector, events on or off, and the
//! completion writer's take. The model keeps the table, the mask bits,
//! the pending bits and the armed bits as `rnic_spec::regs` describes them
//! and is checked every cycle against the block's outputs:
//! - `armed` and `pba` equal the model's;
//! - a table read returns the word last written (address bits 1:0
//!   dropped; the mask bit in bit 32 of the data word);
//! - the message offered is that of the lowest pending, unmasked vector
//!   of the cycle before (none the cycle after a take), with the vector's
//!   address and data of that cycle; taking it clears that pending bit
//!   (unless an event sets it again the same cycle);
//! - one message per vector per take: the messages taken never exceed
//!   the events that made a vector pending.

mod common;

use common::{block_seeds, p};
use rnic_sim::model::Model;
use rnic_sim::rng::SplitMix as Rng;
use rnic_spec::params::NUM_CQS;
use rnic_spec::regs::MSIX_VECTORS;

const V: usize = MSIX_VECTORS;

#[derive(Default)]
struct Ref {
    addr: [u64; V],
    data: [u32; V],
    unmasked: u8,
    pend: u8,
    armed: u64,
}

struct Stats {
    events: u64,
    hits: u64,
    taken: u64,
    masked_waits: u64,
}

fn run(seed: u64, cycles: u64, ev_pct: u64, take_pct: u64) -> Result<Stats, String> {
    let mut m = Model::new("msix").map_err(|e| e.to_string())?;
    let names = [
        "tbl_we",
        "tbl_idx",
        "tbl_data",
        "rd_idx",
        "rd_data",
        "pba",
        "arm",
        "arm_cqn",
        "disarm",
        "disarm_cqn",
        "armed",
        "ev",
        "ev_cqn",
        "ev_vec",
        "ev_on",
        "irq_valid",
        "irq_ready",
        "irq_addr",
        "irq_data",
    ];
    let [twe, tidx, tdat, ridx, rdat, pba, arm, armc, dis, disc, armed, ev, evc, evv, evon, iv, ir, ia, id] =
        names.map(|n| p(&m, n));
    let mut r = Rng::new(seed);
    let mut s = Ref::default();
    let mut st = Stats { events: 0, hits: 0, taken: 0, masked_waits: 0 };
    // The registered offer the block shows this cycle: vector, address, data.
    let mut offer: Option<(usize, u64, u32)> = None;
    // A few CQs carry most traffic, so arms and events meet; any CQ may appear.
    let cq = |r: &mut Rng| -> u64 {
        if r.below(4) == 0 {
            r.below(NUM_CQS as u64)
        } else {
            [0, 1, NUM_CQS as u64 - 1][r.below(3) as usize]
        }
    };
    for t in 0..cycles {
        let ctx = |w: String| format!("seed {seed:#x} cycle {t}: {w}");
        // Inputs of this cycle.
        let we = r.below(100) < 4;
        let idx = r.below(16);
        let dat = if idx.is_multiple_of(2) {
            (0xFEE0_0000 + r.below(1 << 12) * 4 + r.below(4)) | (r.below(2) << 40)
        } else {
            // Mostly unmasked, so messages flow; the mask bit 32, other bits random.
            let masked = r.below(100) < 30;
            (r.next() & !(1 << 32)) | ((masked as u64) << 32)
        };
        let rd = r.below(16);
        let (a, ac) = (r.below(100) < 8, cq(&mut r));
        let (d, dc) = (r.below(100) < 1, cq(&mut r));
        let (e, ec, evec, eon) = (r.below(100) < ev_pct, cq(&mut r), r.below(V as u64), r.below(100) < 90);
        let take = r.below(100) < take_pct;
        for (port, v) in [
            (twe, we as u64),
            (tidx, idx),
            (tdat, dat),
            (ridx, rd),
            (arm, a as u64),
            (armc, ac),
            (dis, d as u64),
            (disc, dc),
            (ev, e as u64),
            (evc, ec),
            (evv, evec),
            (evon, eon as u64),
            (ir, take as u64),
        ] {
            m.set(port, v);
        }
        m.eval();
        // Outputs against the model's state before this cycle's edge.
        if m.get(armed) != s.armed {
            return Err(ctx(format!("armed {:#x}, model {:#x}", m.get(armed), s.armed)));
        }
        if m.get(pba) != s.pend as u64 {
            return Err(ctx(format!("pba {:#x}, model {:#x}", m.get(pba), s.pend)));
        }
        let want_rd = if rd.is_multiple_of(2) {
            s.addr[rd as usize / 2]
        } else {
            let v = rd as usize / 2;
            s.data[v] as u64 | (((s.unmasked >> v) & 1 == 0) as u64) << 32
        };
        if m.get(rdat) != want_rd {
            return Err(ctx(format!("table word {rd}: {:#x}, model {want_rd:#x}", m.get(rdat))));
        }
        let valid = m.get(iv) == 1;
        let mut taken_vec = None;
        match offer {
            None if valid => return Err(ctx(format!("a message offered with none due (pend {:#x})", s.pend))),
            None => {}
            Some((v, addr, data)) => {
                // The lowest pending unmasked vector of the previous cycle, with its entry as it was then.
                let got = (m.get(ia), m.get(id) as u32);
                if !valid || got != (addr, data) {
                    return Err(ctx(format!("offer {valid} {got:x?}, model vector {v}: {addr:#x}/{data:#x}")));
                }
                if s.pend >> v & 1 == 0 {
                    return Err(ctx(format!("vector {v} offered, not pending")));
                }
                if take {
                    taken_vec = Some(v);
                    st.taken += 1;
                }
            }
        }
        st.masked_waits += (s.pend & !s.unmasked).count_ones() as u64;
        // The model's next state: the offer registered from this cycle's state, then the updates.
        let live = s.pend & s.unmasked;
        offer = (live != 0 && taken_vec.is_none()).then(|| {
            let v = live.trailing_zeros() as usize;
            (v, s.addr[v], s.data[v])
        });
        if we {
            let v = idx as usize / 2;
            if idx.is_multiple_of(2) {
                s.addr[v] = dat & !3;
            } else {
                s.data[v] = dat as u32;
                if dat >> 32 & 1 == 1 {
                    s.unmasked &= !(1 << v);
                } else {
                    s.unmasked |= 1 << v;
                }
            }
        }
        let hit = e && eon && s.armed >> ec & 1 == 1;
        st.events += e as u64;
        st.hits += hit as u64;
        let mut clear_arm = 0u64;
        if hit {
            clear_arm |= 1 << ec;
        }
        if d {
            clear_arm |= 1 << dc;
        }
        s.armed = (s.armed & !clear_arm) | if a { 1 << ac } else { 0 };
        let clear = taken_vec.map_or(0, |v| 1u8 << v);
        let set = if hit { 1u8 << evec } else { 0 };
        s.pend = (s.pend & !clear) | set;
        if st.taken > st.hits {
            return Err(ctx(format!("{} messages taken for {} events", st.taken, st.hits)));
        }
        m.tick();
    }
    Ok(st)
}

fn check(name: &str, base: u64, ev_pct: u64, take_pct: u64) {
    for seed in block_seeds("RNIC_MSIX_BLOCK", base) {
        match run(seed, 100_000, ev_pct, take_pct) {
            Ok(st) => eprintln!(
                "msix_block {name} seed {seed:#x}: {} events, {} on armed CQs, {} messages taken, {} cycles a masked vector held its message",
                st.events, st.hits, st.taken, st.masked_waits
            ),
            Err(e) => panic!(
                "msix_block {name}: {e}\nreplay: RNIC_MSIX_BLOCK_SEED={seed:#x} cargo test --release -p rnic-sim --test msix_block"
            ),
        }
    }
}

#[test]
fn msix_block_busy() {
    check("busy", 0x15_0000, 30, 30);
}

#[test]
fn msix_block_sparse() {
    check("sparse", 0x15_1000, 3, 90);
}
