//! The ICRC block (`hw/src/icrc.rs`, top "icrc") in Verilator: its running
//! CRC over 64-byte beats against `rnic_spec::wire::icrc`.
//! The oracle is `rnic-spec`, never the RTL's own Rust model.

mod common;

use common::*;
use rnic_sim::model::Model;
use rnic_spec::wire::{icrc, opcode};

#[test]
fn icrc_block_matches_spec_icrc() {
    let mut m = Model::new("icrc").unwrap();
    let (state, data, first, nbytes, out) =
        (p(&m, "state"), p(&m, "data"), p(&m, "first"), p(&m, "nbytes"), p(&m, "state_out"));
    // Every residue of the last beat's byte count (payloads 0..=130), and long frames.
    for len in (0usize..=130).chain([1000, 4095, 4096]) {
        let f = sample_frame(opcode::WRITE_ONLY, len, len as u8).encode();
        let covered = f.len() - 4;
        let mut s = 0u64;
        for (i, chunk) in f[..covered].chunks(64).enumerate() {
            let mut beat = [0u8; 64];
            beat[..chunk.len()].copy_from_slice(chunk);
            m.set(state, s);
            m.set_bytes(data, &beat);
            m.set(first, (i == 0) as u64);
            m.set(nbytes, chunk.len() as u64);
            m.eval();
            s = m.get(out);
        }
        assert_eq!(!(s as u32), icrc(&f), "payload length {len}");
    }
}
