//! The TX builder (`hw/src/txb.rs`, top "tx_builder") in Verilator: every
//! frame it sends decodes with `rnic-spec` and carries a valid ICRC, with and
//! without back-pressure.
//! The oracle is `rnic-spec`, never the RTL's own Rust model.

mod common;

use common::*;
use rnic_hw::desc::TxDescPack;
use rnic_hw::pack::pack_words;
use rnic_sim::model::Model;
use rnic_spec::wire::{opcode, Frame};

/// A payload as the DMA read front end delivers it: 64-byte beats, zero past the end.
fn payload_beats(payload: &[u8]) -> Vec<[u8; 64]> {
    payload
        .chunks(64)
        .map(|c| {
            let mut b = [0u8; 64];
            b[..c.len()].copy_from_slice(c);
            b
        })
        .collect()
}

fn tx_desc(f: &Frame) -> Vec<u8> {
    words_to_bytes(&pack_words(TxDescPack::FIELDS, TxDescPack::WIDTH, &tx_fields(f)))
}

/// Drives the TX builder with one descriptor (and its payload beats, held
/// back for the first `late` cycles), with `stall` inserting back-pressure,
/// and returns the frame it sends. A frame with payload must not start
/// before its first payload beat is there (a MAC takes a gap inside a frame
/// as an underrun).
fn build_frame(m: &mut Model, f: &Frame, stall: bool, late: u32) -> Vec<u8> {
    let is_ack = f.opcode == opcode::ACK;
    let (src_mac, src_ip) = (p(m, "src_mac"), p(m, "src_ip"));
    m.set(src_mac, 0x0200_0000_0001);
    m.set(src_ip, f.src_ip as u64);
    let q = if is_ack { "ack" } else { "req" };
    let (empty, data, pop) = (p(m, &format!("{q}_empty")), p(m, &format!("{q}_data")), p(m, &format!("{q}_pop")));
    let (other_empty, pl_valid, pl_data, pl_ready) =
        (p(m, if is_ack { "req_empty" } else { "ack_empty" }), p(m, "pl_valid"), p(m, "pl_data"), p(m, "pl_ready"));
    let (tx_valid, tx_ready, tx_data, tx_keep, tx_last) =
        (p(m, "tx_valid"), p(m, "tx_ready"), p(m, "tx_data"), p(m, "tx_keep"), p(m, "tx_last"));
    m.set(other_empty, 1);
    m.set(empty, 0);
    m.set_bytes(data, &tx_desc(f));
    let beats = payload_beats(&f.payload);
    let mut next_beat = 0;
    let mut out = Vec::new();
    for cycle in 0..10_000u32 {
        m.set(pl_valid, (next_beat < beats.len() && cycle >= late) as u64);
        if next_beat < beats.len() {
            m.set_bytes(pl_data, &beats[next_beat]);
        }
        m.set(tx_ready, (!stall || cycle % 3 != 1) as u64);
        m.eval();
        let popped = m.get(pop) == 1;
        if m.get(pl_valid) == 1 && m.get(pl_ready) == 1 {
            next_beat += 1;
        }
        let mut done = false;
        assert!(
            beats.is_empty() || cycle >= late || m.get(tx_valid) == 0,
            "cycle {cycle}: the frame started before its payload (due at cycle {late})"
        );
        if m.get(tx_valid) == 1 && m.get(tx_ready) == 1 {
            let keep = m.get(tx_keep);
            let d = bytes_of(m, tx_data, 64);
            let n = keep.trailing_ones() as usize;
            assert_eq!(keep, if n == 64 { u64::MAX } else { (1u64 << n) - 1 }, "keep must be contiguous from lane 0");
            out.extend_from_slice(&d[..n]);
            done = m.get(tx_last) == 1;
        }
        m.tick();
        // Inputs change after the clock edge, as a registered FIFO's would.
        if popped {
            m.set(empty, 1);
        }
        if done {
            assert_eq!(next_beat, beats.len(), "builder must take every payload beat");
            return out;
        }
    }
    panic!("no complete frame within 10000 cycles");
}

#[test]
fn tx_builder_frames_decode_with_valid_icrc() {
    let mut m = Model::new("tx_builder").unwrap();
    for (i, len) in [0usize, 1, 4, 59, 60, 61, 63, 64, 65, 127, 128, 1000, 4096].into_iter().enumerate() {
        for stall in [false, true] {
            let op = if len == 0 {
                opcode::SEND_ONLY
            } else {
                [opcode::WRITE_FIRST, opcode::SEND_MIDDLE, opcode::WRITE_ONLY, opcode::WRITE_LAST_IMM][i % 4]
            };
            let f = sample_frame(op, len, i as u8);
            let got = build_frame(&mut m, &f, stall, if stall { 40 } else { 0 });
            let d = Frame::decode(&got).unwrap_or_else(|e| panic!("len {len} stall {stall}: {e}"));
            assert_eq!(d, f, "len {len} stall {stall}");
        }
    }
    let ack = sample_frame(opcode::ACK, 0, 0);
    let got = build_frame(&mut m, &ack, true, 0);
    assert_eq!(Frame::decode(&got).expect("ACK decodes"), ack);
}

/// Random request and ACK frames through the TX builder back to back:
/// every payload length 0..=130 (every residue of the last beat: the ICRC
/// in every lane, or alone in a tail beat) and random ones up to 4096,
/// payload that comes a random while after its descriptor is taken, ACKs
/// that arrive at random cycles, and a MAC that stalls at random. Each
/// frame decodes with `rnic-spec` (ICRC checked) in its queue's order, the
/// sent pulses count them, and once a frame's first beat is out the rest
/// follow with no gap (a CMAC aborts a frame on an underrun).
/// `RNIC_TXB_BLOCK_SEED=S` replays one seed.
#[test]
fn tx_builder_random_frames_back_to_back_without_gaps() {
    use std::collections::VecDeque;
    let seeds: Vec<u64> = match std::env::var("RNIC_TXB_BLOCK_SEED") {
        Ok(s) => vec![u64::from_str_radix(s.trim_start_matches("0x"), 16).expect("hex seed")],
        Err(_) => vec![0x7B10_0001, 0x7B10_0002],
    };
    for seed in seeds {
        let ctx = format!("seed {seed:#x}");
        let mut r = rnic_sim::rng::SplitMix::new(seed);
        let mut m = Model::new("tx_builder").unwrap();
        m.set(p(&m, "src_mac"), 0x0200_0000_0001);
        m.set(p(&m, "src_ip"), 0x0a00_0001);
        let mut lens: Vec<usize> = (0..=130).collect();
        lens.extend((0..30).map(|_| r.range(131, 4096) as usize));
        r.shuffle(&mut lens);
        let ops = [opcode::WRITE_FIRST, opcode::SEND_MIDDLE, opcode::WRITE_ONLY, opcode::WRITE_LAST_IMM];
        let mut reqs: VecDeque<Frame> = lens
            .iter()
            .enumerate()
            .map(|(i, &len)| {
                let mut f = sample_frame(if len == 0 { opcode::SEND_ONLY } else { r.pick(&ops) }, len, i as u8);
                f.psn = i as u32;
                f.payload.iter_mut().for_each(|b| *b = r.next() as u8);
                f
            })
            .collect();
        let mut acks_due: VecDeque<(u32, Frame)> = (0..40u32)
            .map(|i| {
                let mut a = sample_frame(opcode::ACK, 0, i as u8);
                a.psn = 0x10_0000 + i;
                (r.below(60_000) as u32, a)
            })
            .collect();
        acks_due.make_contiguous().sort_by_key(|(t, _)| *t);
        let (n_req, n_ack) = (reqs.len(), acks_due.len());
        let mut acks: VecDeque<Frame> = VecDeque::new();
        // Sent frames expected, per queue, in order; payload beats of the requests taken.
        let (mut want_req, mut want_ack): (VecDeque<Frame>, VecDeque<Frame>) = (VecDeque::new(), VecDeque::new());
        let mut payload: VecDeque<(u32, VecDeque<[u8; 64]>)> = VecDeque::new();
        let (mut out, mut in_frame, mut sent_req, mut sent_ack) = (Vec::new(), false, 0, 0);
        let mut frames_out = 0;
        let stall_pct = r.pick(&[0u32, 10, 35]);
        for cycle in 0..2_000_000u32 {
            while acks_due.front().is_some_and(|(t, _)| *t <= cycle) {
                acks.push_back(acks_due.pop_front().unwrap().1);
            }
            m.set(p(&m, "req_empty"), reqs.is_empty() as u64);
            if let Some(f) = reqs.front() {
                m.set_bytes(p(&m, "req_data"), &tx_desc(f));
            }
            m.set(p(&m, "ack_empty"), acks.is_empty() as u64);
            if let Some(f) = acks.front() {
                m.set_bytes(p(&m, "ack_data"), &tx_desc(f));
            }
            let head = payload.front().filter(|(at, _)| *at <= cycle).and_then(|(_, b)| b.front().copied());
            m.set(p(&m, "pl_valid"), head.is_some() as u64);
            if let Some(b) = head {
                m.set_bytes(p(&m, "pl_data"), &b);
            }
            m.set(p(&m, "tx_ready"), !r.pct(stall_pct) as u64);
            m.eval();
            if in_frame {
                assert_eq!(m.get(p(&m, "tx_valid")), 1, "{ctx} cycle {cycle}: a gap inside frame {frames_out}");
            }
            if head.is_some() && m.get(p(&m, "pl_ready")) == 1 {
                let (_, beats) = payload.front_mut().unwrap();
                beats.pop_front();
                if beats.is_empty() {
                    payload.pop_front();
                }
            }
            if m.get(p(&m, "tx_valid")) == 1 && m.get(p(&m, "tx_ready")) == 1 {
                let keep = m.get(p(&m, "tx_keep"));
                let n = keep.trailing_ones() as usize;
                assert_eq!(keep, if n == 64 { u64::MAX } else { (1u64 << n) - 1 }, "{ctx}: keep from lane 0");
                out.extend_from_slice(&bytes_of(&m, p(&m, "tx_data"), 64)[..n]);
                in_frame = m.get(p(&m, "tx_last")) == 0;
                if !in_frame {
                    let d = Frame::decode(&out).unwrap_or_else(|e| panic!("{ctx}: frame {frames_out}: {e}"));
                    let q = if d.opcode == opcode::ACK { &mut want_ack } else { &mut want_req };
                    let w = q.pop_front().unwrap_or_else(|| panic!("{ctx}: frame {frames_out} was never taken"));
                    assert_eq!(d, w, "{ctx}: frame {frames_out}");
                    out.clear();
                    frames_out += 1;
                }
            }
            sent_req += m.get(p(&m, "sent_req"));
            sent_ack += m.get(p(&m, "sent_ack"));
            let (req_pop, ack_pop) = (m.get(p(&m, "req_pop")) == 1, m.get(p(&m, "ack_pop")) == 1);
            m.tick();
            // FIFO heads change after the clock edge, as a registered FIFO's would.
            if ack_pop {
                want_ack.push_back(acks.pop_front().expect("ACK popped from an empty FIFO"));
            }
            if req_pop {
                let f = reqs.pop_front().expect("request popped from an empty FIFO");
                let beats: VecDeque<[u8; 64]> = payload_beats(&f.payload).into();
                if !beats.is_empty() {
                    payload.push_back((cycle + r.below(40) as u32, beats));
                }
                want_req.push_back(f);
            }
            if frames_out == n_req + n_ack {
                break;
            }
        }
        assert_eq!(frames_out, n_req + n_ack, "{ctx}: frames sent");
        assert_eq!((sent_req, sent_ack), (n_req as u64, n_ack as u64), "{ctx}: sent pulses");
        println!("tx_builder random {ctx}: {n_req} requests and {n_ack} ACKs, MAC stalls {stall_pct} %");
    }
}
