//! The header blocks (`hw/src/hdr.rs`, tops "tx_header" and "rx_header")
//! in Verilator: the generated header against the spec's encoder, and the
//! fields extracted from a frame against the spec's decoder.
//! The oracle is `rnic-spec`, never the RTL's own Rust model.

mod common;

use common::*;
use rnic_sim::model::Model;
use rnic_spec::wire::{opcode, Frame, HDR_LEN};

/// The TX header block's two beats for `f`.
fn tx_header_of(m: &mut Model, f: &Frame) -> Vec<u8> {
    set_tx_header(m, f);
    m.eval();
    let mut hdr = bytes_of(m, p(m, "beat0"), 64);
    hdr.extend(bytes_of(m, p(m, "beat1"), 64));
    hdr
}

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
        let hdr = tx_header_of(&mut m, &f);
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

/// The IPv4 header check against RFC 1071's verification (the ten words
/// summed with end-around carry give 0xFFFF) on random headers: valid ones
/// (both encodings of a zero checksum included), wrong ones, fragments.
#[test]
fn rx_header_ipv4_check_matches_rfc1071_on_random_headers() {
    use rnic_spec::wire::{off, IP_MF_OFFSET_MASK};
    let mut m = Model::new("rx_header").unwrap();
    let mut r = rnic_sim::rng::SplitMix::new(0x1b4c_0001);
    let fold = |h: &[u8]| {
        let mut s: u32 = (0..20).step_by(2).map(|i| u16::from_be_bytes([h[i], h[i + 1]]) as u32).sum();
        while s > 0xFFFF {
            s = (s & 0xFFFF) + (s >> 16);
        }
        s
    };
    let (mut ok, mut bad) = (0, 0);
    let b = sample_frame(opcode::WRITE_ONLY, 100, 1).encode();
    for i in 0..4000 {
        let mut f = b.clone();
        let h = off::IP..off::IP + 20;
        // Words mostly large, mostly small or random: raw sums from one to nine times 0xFFFF.
        let mode = r.below(3);
        for (k, x) in f[h.clone()].iter_mut().enumerate() {
            *x = match mode {
                0 if r.pct(80) => 0xFF - r.below(4) as u8,
                1 if k % 2 == 0 => r.below(24) as u8,
                _ => r.next() as u8,
            };
        }
        if r.pct(70) {
            let fl = u16::from_be_bytes([f[off::IP_FLAGS], f[off::IP_FLAGS + 1]]) & !IP_MF_OFFSET_MASK;
            f[off::IP_FLAGS..off::IP_FLAGS + 2].copy_from_slice(&fl.to_be_bytes());
        }
        if r.pct(60) {
            f[off::IP_CSUM..off::IP_CSUM + 2].copy_from_slice(&[0, 0]);
            let mut cs = !(fold(&f[h.clone()]) as u16);
            // The other encoding of a zero sum.
            if cs == 0 && r.pct(50) {
                cs = 0xFFFF;
            }
            f[off::IP_CSUM..off::IP_CSUM + 2].copy_from_slice(&cs.to_be_bytes());
        }
        let flags = u16::from_be_bytes([f[off::IP_FLAGS], f[off::IP_FLAGS + 1]]);
        let want = fold(&f[h]) == 0xFFFF && flags & IP_MF_OFFSET_MASK == 0;
        m.set_bytes(p(&m, "beat0"), &f[..64]);
        m.set_bytes(p(&m, "beat1"), &f[64..128]);
        m.eval();
        assert_eq!(m.get(p(&m, "ip_ok")) == 1, want, "header {i}: {:02x?}", &f[off::IP..off::IP + 20]);
        if want {
            ok += 1;
        } else {
            bad += 1;
        }
    }
    assert!(ok > 1000 && bad > 1000, "{ok} valid and {bad} invalid headers");
}

/// Every payload length from 0 to 4096 (every residue of the pad), random
/// addresses with all-ones and all-zeros halves now and then, and half of the
/// headers with a destination address chosen so that the checksum's 32-bit
/// sum folds with a second end-around carry (its low half at 0xFFFF or
/// 0xFFFE below a non-zero upper half): the whole header against the spec's
/// encoder. `RNIC_HDR_BLOCK_ITERS=n` runs n seeds, `RNIC_HDR_BLOCK_SEED=s` seed s only.
#[test]
fn tx_header_matches_spec_encoder_at_every_length() {
    for seed in block_seeds("RNIC_HDR_BLOCK", 0x4d0) {
        tx_header_every_length(seed);
    }
}

fn tx_header_every_length(seed: u64) {
    use rnic_spec::wire::off;
    let mut rng = rnic_sim::rng::SplitMix::new(seed);
    let mut m = Model::new("tx_header").unwrap();
    let ops = [
        opcode::SEND_FIRST,
        opcode::SEND_MIDDLE,
        opcode::SEND_LAST,
        opcode::SEND_ONLY_IMM,
        opcode::WRITE_FIRST,
        opcode::WRITE_ONLY,
        opcode::WRITE_LAST_IMM,
        opcode::READ_RESPONSE_ONLY,
    ];
    let ip = |rng: &mut rnic_sim::rng::SplitMix| -> u32 {
        let halves = [0x0000, 0xFFFF, 0x0001, 0xFFFE];
        let hi = if rng.pct(25) { rng.pick(&halves) } else { rng.below(0x1_0000) as u32 };
        let lo = if rng.pct(25) { rng.pick(&halves) } else { rng.below(0x1_0000) as u32 };
        hi << 16 | lo
    };
    let mut second_carry = 0;
    for len in 0..=4096usize {
        let mut f = sample_frame(rng.pick(&ops), len, rng.below(256) as u8);
        f.src_ip = ip(&mut rng);
        f.dst_ip = ip(&mut rng);
        f.sport = rng.below(0x1_0000) as u16;
        if rng.pct(50) {
            // The 32-bit sum of the IP header's words but the checksum and the destination's low half.
            let b = f.encode();
            let sum: u32 = (off::IP..off::IP + 20)
                .step_by(2)
                .filter(|&o| o != off::IP_CSUM && o != off::IP_DST + 2)
                .map(|o| u16::from_be_bytes([b[o], b[o + 1]]) as u32)
                .sum();
            let t = 0xFFFF - rng.below(2) as u32;
            let d = t.wrapping_sub(sum) & 0xFFFF;
            f.dst_ip = (f.dst_ip & 0xFFFF_0000) | d;
            let total = sum + d;
            if (total & 0xFFFF) + (total >> 16) > 0xFFFF {
                second_carry += 1;
            }
        }
        let hdr = tx_header_of(&mut m, &f);
        let want = f.encode();
        for (i, (g, w)) in hdr.iter().zip(&want[..HDR_LEN]).enumerate() {
            assert_eq!(
                g, w,
                "seed {seed:#x} (RNIC_HDR_BLOCK_SEED={seed:#x}): opcode {:#x} len {len} src {:#x} dst {:#x}: header byte {i}",
                f.opcode, f.src_ip, f.dst_ip
            );
        }
    }
    assert!(second_carry > 500, "seed {seed:#x}: only {second_carry} headers needed the second end-around carry");
}
