//! The header blocks (`hw/src/hdr.rs`, tops "tx_header" and "rx_header")
//! in Verilator: the generated header against the spec's encoder, and the
//! fields extracted from a frame against the spec's decoder.
//! The oracle is `rnic-spec`, never the RTL's own Rust model.

mod common;

use common::*;
use rnic_sim::model::Model;
use rnic_spec::wire::{opcode, Frame, HDR_LEN};

fn set_tx_header(m: &mut Model, f: &Frame) {
    let mac = |a: [u8; 6]| a.iter().fold(0u64, |x, &b| x << 8 | b as u64);
    let mut fields = tx_fields(f);
    fields.push(("src_mac", mac(f.src_mac)));
    fields.push(("src_ip", f.src_ip as u64));
    for (name, v) in fields {
        let port = p(m, name);
        m.set(port, v);
    }
}

#[test]
fn tx_header_matches_spec_encoder() {
    let mut m = Model::new("tx_header").unwrap();
    for (op, len) in [
        (opcode::WRITE_FIRST, 4096usize),
        (opcode::SEND_ONLY, 1),
        (opcode::WRITE_LAST, 63),
        (opcode::SEND_LAST_IMM, 5),
        (opcode::WRITE_ONLY_IMM, 0),
        (opcode::READ_REQUEST, 0),
        (opcode::READ_RESPONSE_MIDDLE, 64),
        (opcode::ACK, 0),
    ] {
        let f = sample_frame(op, len, 7);
        set_tx_header(&mut m, &f);
        m.eval();
        let mut hdr = bytes_of(&m, p(&m, "beat0"), 64);
        hdr.extend(bytes_of(&m, p(&m, "beat1"), 64));
        let want = f.encode();
        for (i, (g, w)) in hdr.iter().zip(&want[..HDR_LEN]).enumerate() {
            assert_eq!(g, w, "opcode {op:#x} len {len}: header byte {i}");
        }
    }
}

#[test]
fn rx_header_extracts_spec_fields() {
    let mut m = Model::new("rx_header").unwrap();
    for op in
        [opcode::WRITE_MIDDLE, opcode::SEND_ONLY_IMM, opcode::READ_REQUEST, opcode::READ_RESPONSE_LAST, opcode::ACK]
    {
        let f = sample_frame(op, 100, 1);
        let b = f.encode();
        let (b0, b1) = (p(&m, "beat0"), p(&m, "beat1"));
        m.set_bytes(b0, &b[..64]);
        m.set_bytes(b1, &b[64..128]);
        m.eval();
        assert_eq!(m.get(p(&m, "is_roce")), 1);
        assert_eq!(m.get(p(&m, "ip_len")) as usize, b.len() - 14);
        assert_eq!(m.get(p(&m, "opcode")), op as u64);
        assert_eq!(m.get(p(&m, "dqpn")), f.dqpn as u64);
        assert_eq!(m.get(p(&m, "psn")), f.psn as u64);
        assert_eq!(m.get(p(&m, "sport")), f.sport as u64);
        assert_eq!(m.get(p(&m, "src_ip")), f.src_ip as u64);
        if op == opcode::ACK {
            assert_eq!(m.get(p(&m, "syndrome")), 0x1F);
            assert_eq!(m.get(p(&m, "msn")), f.msn as u64);
            // The ACK fields the responder reads through the request fields they overlap.
            assert_eq!(m.get(p(&m, "ts")) >> 32 & 0xFF_FFFF, f.epsn as u64);
            assert_eq!(m.get(p(&m, "ts")) & 0xFFFF_FFFF, f.sack_base as u64);
            assert_eq!(m.get(p(&m, "rsn")), f.ooo as u64);
            assert_eq!(m.get(p(&m, "laddr")), f.sack_bitmap);
            assert_eq!(m.get(p(&m, "lkey")), f.bytes_rx as u64);
            assert_eq!(m.get(p(&m, "imm")), f.msn_psn as u64);
        } else {
            assert_eq!(m.get(p(&m, "va")), f.va);
            assert_eq!(m.get(p(&m, "rkey")), f.rkey as u64);
            assert_eq!(m.get(p(&m, "ssn")), f.ssn as u64);
            assert_eq!(m.get(p(&m, "psn_offset")), f.psn_offset as u64);
            assert_eq!(m.get(p(&m, "imm")), f.imm as u64);
            assert_eq!(m.get(p(&m, "laddr")), f.laddr);
            assert_eq!(m.get(p(&m, "lkey")), f.lkey as u64);
            assert_eq!(m.get(p(&m, "rsn")), (f.rsn & 0xFFFF) as u64);
            assert_eq!(m.get(p(&m, "pad")), 0);
        }
        // A non-RoCE frame (UDP port changed) is recognised as such.
        let mut bad = b.clone();
        bad[37] ^= 1;
        m.set_bytes(b0, &bad[..64]);
        m.eval();
        assert_eq!(m.get(p(&m, "is_roce")), 0);
    }
}
