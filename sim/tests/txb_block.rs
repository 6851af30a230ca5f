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
    let beats: Vec<[u8; 64]> = f
        .payload
        .chunks(64)
        .map(|c| {
            let mut b = [0u8; 64];
            b[..c.len()].copy_from_slice(c);
            b
        })
        .collect();
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
