//! Block-level Verilator test of the gather join (`hw/src/gather.rs`, top
//! "gather") against a model: random packets, plain (one read, any length
//! 1..=4096) or gathered from two pieces (`dma_tag::SQ_GATHER` tags, every
//! residue of both lengths mod 64 reachable), fed as the read front end
//! delivers them (a read's beats back to back, packed from lane 0, zero past
//! its length; random pauses between reads, also between a packet's two
//! pieces) while the TX builder side takes beats with random back-pressure.
//!
//! Checked every cycle: each beat out is the next 64 bytes of the packets'
//! payloads concatenated packet by packet (zero past a packet's end), and
//! once a packet's first beat has left, its next beat is offered in every
//! cycle until its last (a MAC aborts a frame whose beats stop). Every
//! packet fed comes out.

mod common;

use common::{block_seeds, p};
use rnic_sim::model::Model;
use rnic_sim::rng::SplitMix as Rng;
use rnic_spec::params::dma_tag;
use std::collections::VecDeque;

/// One read as the front end returns it: beats of 64 bytes, its tag.
struct Read {
    beats: Vec<[u8; 64]>,
    tag: u8,
}

fn beats_of(bytes: &[u8]) -> Vec<[u8; 64]> {
    bytes
        .chunks(64)
        .map(|c| {
            let mut b = [0u8; 64];
            b[..c.len()].copy_from_slice(c);
            b
        })
        .collect()
}

/// A length of 1..=max, often at a multiple of 64 or one off it.
fn length(r: &mut Rng, max: u64) -> usize {
    let n = match r.below(4) {
        0 => r.range(1, 5) * 64,
        1 => r.range(1, 5) * 64 + r.range(0, 3) - 1,
        2 => r.range(1, 130),
        _ => r.range(1, max + 1),
    };
    n.clamp(1, max) as usize
}

struct Stats {
    packets: u64,
    gathered: u64,
    spills: u64,
}

fn run(seed: u64, packets: usize) -> Result<Stats, String> {
    let mut m = Model::new("gather").map_err(|e| e.to_string())?;
    let (reset, in_valid, in_data, in_tag, in_last, in_ready) =
        (p(&m, "reset"), p(&m, "in_valid"), p(&m, "in_data"), p(&m, "in_tag"), p(&m, "in_last"), p(&m, "in_ready"));
    let (pl_valid, pl_data, pl_ready) = (p(&m, "pl_valid"), p(&m, "pl_data"), p(&m, "pl_ready"));
    let mut r = Rng::new(seed);
    let mut reads: VecDeque<Read> = VecDeque::new();
    // Expected beats out, each with whether it is its packet's first and last.
    let mut want: VecDeque<([u8; 64], bool, bool)> = VecDeque::new();
    let mut st = Stats { packets: 0, gathered: 0, spills: 0 };
    for _ in 0..packets {
        let total = length(&mut r, 4096);
        let payload: Vec<u8> = (0..total).map(|_| r.next() as u8).collect();
        if total >= 2 && r.below(3) != 0 {
            let la = length(&mut r, total as u64 - 1);
            let lb = total - la;
            reads.push_back(Read { beats: beats_of(&payload[..la]), tag: dma_tag::SQ_GATHER | (la % 64) as u8 });
            reads.push_back(Read { beats: beats_of(&payload[la..]), tag: dma_tag::SQ_GATHER | (lb % 64) as u8 });
            st.gathered += 1;
            st.spills += (!la.is_multiple_of(64) && la % 64 + (lb - 1) % 64 + 1 > 64) as u64;
        } else {
            reads.push_back(Read { beats: beats_of(&payload), tag: dma_tag::SQ_PAYLOAD });
        }
        let bs = beats_of(&payload);
        let n = bs.len();
        want.extend(bs.into_iter().enumerate().map(|(i, b)| (b, i == 0, i + 1 == n)));
        st.packets += 1;
    }
    m.set(reset, 1);
    m.tick();
    m.set(reset, 0);
    let (mut beat, mut gap) = (0usize, 0u64);
    let mut in_packet = false;
    let mut ready_pct = 100;
    let mut out = [0u8; 64];
    let limit = 200 * want.len() as u64 + 10_000;
    for t in 0..limit {
        if want.is_empty() {
            return Ok(st);
        }
        let ctx = |w: String| format!("gather seed {seed:#x} cycle {t}: {w}");
        if t % 61 == 0 {
            ready_pct = [100, 100, 90, 50, 10][r.below(5) as usize];
        }
        let rd = reads.front();
        let offer = rd.is_some() && gap == 0;
        m.set(in_valid, offer as u64);
        if let Some(rd) = rd {
            m.set_bytes(in_data, &rd.beats[beat]);
            m.set(in_tag, rd.tag as u64);
            m.set(in_last, (beat + 1 == rd.beats.len()) as u64);
        }
        let ready = r.below(100) < ready_pct;
        m.set(pl_ready, ready as u64);
        m.clock_low();
        let valid = m.get(pl_valid) != 0;
        if in_packet && !valid {
            return Err(ctx(format!("the beat after one taken mid-packet is not offered ({} beats left)", want.len())));
        }
        if valid {
            m.get_bytes(pl_data, &mut out);
            let (b, first, last) = want[0];
            if out != b {
                let lane = (0..64).find(|&i| out[i] != b[i]).unwrap();
                return Err(ctx(format!(
                    "beat differs from lane {lane}: got {:02x?}, want {:02x?} (packet's first beat: {first})",
                    &out[lane..(lane + 8).min(64)],
                    &b[lane..(lane + 8).min(64)]
                )));
            }
            if ready {
                want.pop_front();
                in_packet = !last;
            }
        }
        if offer && m.get(in_ready) != 0 {
            beat += 1;
            if beat == reads[0].beats.len() {
                reads.pop_front();
                beat = 0;
                gap = [0, 0, 1, 2, 5, 30][r.below(6) as usize];
            }
        } else {
            gap = gap.saturating_sub(1);
        }
        m.clock_high();
    }
    Err(format!("gather seed {seed:#x}: {} beats never came out ({} reads not taken)", want.len(), reads.len()))
}

#[test]
fn gathered_pieces_are_packed_and_leave_without_gaps() {
    let (mut packets, mut gathered, mut spills) = (0, 0, 0);
    for seed in block_seeds("GATHER", 0x501) {
        let st = run(seed, 600).unwrap_or_else(|e| panic!("{e}"));
        packets += st.packets;
        gathered += st.gathered;
        spills += st.spills;
    }
    // The stimulus reaches both kinds and the spill beat.
    assert!(
        gathered > 100 && packets > gathered + 50 && spills > 20,
        "{packets} packets, {gathered} gathered, {spills} spills"
    );
}
