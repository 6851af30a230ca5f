//! Helpers shared by the per-block Verilator tests: port lookup, byte
//! access, and sample frames built with `rnic-spec` (the oracle).
// Each test file is its own crate and uses a subset of these helpers.
#![allow(dead_code)]

use rnic_sim::model::{Model, PortId};
use rnic_sim::rng::SplitMix as Rng;
use rnic_spec::wire::{opcode, Frame};

pub fn p(m: &Model, n: &str) -> PortId {
    m.port(n).unwrap_or_else(|e| panic!("{e}"))
}

pub fn bytes_of(m: &Model, port: PortId, n: usize) -> Vec<u8> {
    let mut b = vec![0u8; n];
    m.get_bytes(port, &mut b);
    b
}

pub fn words_to_bytes(w: &[u32]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn sample_frame(op: u8, len: usize, seed: u8) -> Frame {
    Frame {
        dst_mac: [2, 0, 0, 0, 0, 2],
        src_mac: [2, 0, 0, 0, 0, 1],
        ecn: rnic_spec::wire::IP_ECN_ECT0,
        src_ip: 0x0a00_0001,
        dst_ip: 0x0a00_0002,
        sport: 0xC001,
        opcode: op,
        dqpn: 3,
        ack_req: true,
        psn: 0x12_3456,
        va: if op == opcode::ACK { 0 } else { 0x7f00_1000_0040 },
        rkey: if op == opcode::ACK { 0 } else { 0x0105 },
        msg_len: if op == opcode::ACK { 0 } else { len as u32 },
        ssn: 9,
        psn_offset: 2,
        ts: 0x1122_3344_5566,
        rsn: if op == opcode::ACK { 0 } else { 0xBCDE },
        imm: if op == opcode::ACK { 0 } else { 0x8765_4321 ^ seed as u32 },
        laddr: if op == opcode::READ_REQUEST { 0x55aa_0000_1000 ^ seed as u64 } else { 0 },
        lkey: if op == opcode::READ_REQUEST { 0x0203 } else { 0 },
        syndrome: if op == opcode::ACK { 0x1F } else { 0 },
        msn: if op == opcode::ACK { 10 } else { 0 },
        epsn: if op == opcode::ACK { 0x12_3457 } else { 0 },
        msn_psn: if op == opcode::ACK { 0x12_3450 ^ seed as u32 } else { 0 },
        echo_entropy: if op == opcode::ACK { 0xC001 } else { 0 },
        echo_ecn: 0,
        ack_flags: if op == opcode::ACK { seed & 1 } else { 0 },
        sack_base: if op == opcode::ACK { 0x12_3457 + 64 * (seed as u32 & 1) } else { 0 },
        sack_bitmap: if op == opcode::ACK { 0x8000_0000_0000_0006 ^ (seed as u64) << 17 } else { 0 },
        ooo: if op == opcode::ACK { 3 + seed as u32 } else { 0 },
        bytes_rx: if op == opcode::ACK { 0xFEDC_BA98 ^ seed as u32 } else { 0 },
        payload: (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect(),
    }
}

/// The header/descriptor fields of `f`, by the port and field names the TX
/// header block and the TX descriptor share.
pub fn tx_fields(f: &Frame) -> Vec<(&'static str, u64)> {
    let ack = f.opcode == opcode::ACK;
    let mac = |a: [u8; 6]| a.iter().fold(0u64, |x, &b| x << 8 | b as u64);
    vec![
        ("is_ack", ack as u64),
        ("dst_mac", mac(f.dst_mac)),
        ("dst_ip", f.dst_ip as u64),
        ("sport", f.sport as u64),
        ("opcode", f.opcode as u64),
        ("dqpn", f.dqpn as u64),
        ("ack_req", f.ack_req as u64),
        ("psn", f.psn as u64),
        ("plen", f.payload.len() as u64),
        ("va", f.va),
        ("rkey", f.rkey as u64),
        ("msg_len", f.msg_len as u64),
        ("ssn", f.ssn as u64),
        ("psn_offset", f.psn_offset as u64),
        ("ts", f.ts),
        ("syndrome", f.syndrome as u64),
        ("msn", f.msn as u64),
        ("epsn", f.epsn as u64),
        ("ecn_echo", f.echo_ecn as u64),
        ("rsn", f.rsn as u64),
        ("imm", f.imm as u64),
        ("ack_flags", f.ack_flags as u64),
        ("msn_psn", f.msn_psn as u64),
        ("laddr", if ack { 0 } else { f.laddr }),
        ("lkey", if ack { 0 } else { f.lkey as u64 }),
        ("sack_base", f.sack_base as u64),
        ("sack_bitmap", f.sack_bitmap),
        ("ooo", f.ooo as u64),
        ("bytes_rx", f.bytes_rx as u64),
    ]
}

/// `name` as a number (decimal or `0x` hex), if set; panics on garbage.
pub fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| {
        let v = v.trim();
        let r = if let Some(h) = v.strip_prefix("0x") { u64::from_str_radix(h, 16) } else { v.parse() };
        r.unwrap_or_else(|_| panic!("{name}={v}: not a number"))
    })
}

/// Seeds of a block test: `<PREFIX>_SEED` alone if set, else
/// `<PREFIX>_ITERS` (default 1) consecutive seeds from `base`.
pub fn block_seeds(prefix: &str, base: u64) -> Vec<u64> {
    match env_u64(&format!("{prefix}_SEED")) {
        Some(s) => vec![s],
        None => (0..env_u64(&format!("{prefix}_ITERS")).unwrap_or(1).max(1)).map(|i| base + i).collect(),
    }
}

/// A value of `bits` bits near its wrap: small, just below 2^bits, or anywhere.
pub fn near_wrap(rng: &mut Rng, bits: u32) -> u64 {
    let m = (1u64 << bits) - 1;
    match rng.below(3) {
        0 => rng.below(16),
        1 => (m + 1 - rng.range(1, 12)) & m,
        _ => rng.next() & m,
    }
}
