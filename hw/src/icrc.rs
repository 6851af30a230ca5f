//! ICRC engine: CRC-32 over one 512-bit beat per cycle.
//!
//! The beat update is a GF(2) matrix (state and data bits in, state bits
//! out) computed here from the bit-serial definition and emitted as XOR
//! trees. Two tricks keep it one engine for every length:
//! * leading: the ICRC input starts with 8 bytes of 0xFF where the frame
//!   has the 14-byte Ethernet header, so beat 0 is fed as 6 zero bytes,
//!   8 bytes of 0xFF, then frame bytes 14..64; the start state is the one
//!   that 6 zero bytes turn into the CRC's initial all-ones;
//! * trailing: a partial last beat is fed zero-padded, which multiplies the
//!   state by A^k (A = one zero byte, k = pad bytes); conditional stages
//!   multiply by A^-(2^i) to undo it.
//!
//! The RX front end and the TX builder pipeline that arithmetic, since the state update is
//! linear: [`IcrcData`] is a beat's contribution from a zero state (no
//! state input, so it can sit a cycle ahead of the state), [`IcrcFold`]
//! adds it to `A^64` times the state (the only loop, two LUT levels), and
//! [`IcrcUnpadLo`] / [`IcrcUnpadHi`] undo a padded last beat (a multiple
//! of 4 pad bytes: four stages, two per cycle). [`IcrcBeat`] chains them
//! in one cycle, as a test top.

use rnic_spec::wire::off;
use rust_hdl::prelude::*;

const POLY: u32 = 0xEDB8_8320;

/// Bit-serial reflected CRC-32 step over one byte, without init/xorout.
pub fn crc_byte(mut s: u32, b: u8) -> u32 {
    s ^= b as u32;
    for _ in 0..8 {
        s = if s & 1 != 0 { (s >> 1) ^ POLY } else { s >> 1 };
    }
    s
}

type Mat = [u32; 32]; // column i = image of basis vector e_i

fn apply(m: &Mat, v: u32) -> u32 {
    (0..32).filter(|i| v >> i & 1 != 0).fold(0, |a, i| a ^ m[i])
}
fn mul(a: &Mat, b: &Mat) -> Mat {
    let mut r = [0u32; 32];
    for i in 0..32 {
        r[i] = apply(a, b[i]);
    }
    r
}
fn zero_byte() -> Mat {
    let mut m = [0u32; 32];
    for (i, c) in m.iter_mut().enumerate() {
        *c = crc_byte(1 << i, 0);
    }
    m
}
fn invert(m: &Mat) -> Mat {
    // Gauss-Jordan on rows of [M | I]; rows as (u32 row of M, u32 row of I).
    let mut rows: Vec<(u32, u32)> = (0..32)
        .map(|r| {
            let row = (0..32).fold(0u32, |a, c| a | (((m[c] >> r) & 1) << c));
            (row, 1u32 << r)
        })
        .collect();
    for c in 0..32 {
        let p = (c..32).find(|&r| rows[r].0 >> c & 1 != 0).expect("CRC shift matrix is invertible");
        rows.swap(c, p);
        for r in 0..32 {
            if r != c && rows[r].0 >> c & 1 != 0 {
                rows[r].0 ^= rows[c].0;
                rows[r].1 ^= rows[c].1;
            }
        }
    }
    let mut inv = [0u32; 32];
    for (r, row) in rows.iter().enumerate() {
        for (c, col) in inv.iter_mut().enumerate() {
            *col |= ((row.1 >> c) & 1) << r;
        }
    }
    inv
}
fn pow(m: &Mat, mut e: u32) -> Mat {
    let mut r: Mat = core::array::from_fn(|i| 1u32 << i);
    let mut b = *m;
    while e > 0 {
        if e & 1 != 0 {
            r = mul(&b, &r);
        }
        b = mul(&b, &b);
        e >>= 1;
    }
    r
}

/// Pad bytes in front of the ICRC input in beat 0 (14-byte Ethernet header
/// replaced by 8 bytes of 0xFF).
pub const LEAD_PAD: u32 = (off::IP - 8) as u32;

/// Start state: `A^-LEAD_PAD` applied to the all-ones initial state.
pub fn lead_state() -> u32 {
    apply(&pow(&invert(&zero_byte()), LEAD_PAD), u32::MAX)
}

/// Byte mask (bit per byte) of beat 0 bytes forced to 0xFF: the 8-byte
/// 0xFF prefix and the variant fields (IP TOS, TTL, checksum; UDP checksum; BTH resv8a).
pub fn beat0_ones() -> u64 {
    let mut m = 0u64;
    for b in LEAD_PAD as usize..off::IP {
        m |= 1 << b;
    }
    for b in
        [off::IP_TOS, off::IP_TTL, off::IP_CSUM, off::IP_CSUM + 1, off::UDP_CSUM, off::UDP_CSUM + 1, off::BTH_RESV8A]
    {
        m |= 1 << b;
    }
    m
}

/// Software model of [`IcrcBeat`]: the state after `nbytes` bytes of `beat`.
pub fn model_beat(state: u32, beat: &[u8; 64], first: bool, nbytes: usize) -> u32 {
    let mut s = if first { lead_state() } else { state };
    let ones = beat0_ones();
    for (i, &b) in beat.iter().enumerate().take(nbytes) {
        let b = if first && i < LEAD_PAD as usize {
            0
        } else if first && ones >> i & 1 != 0 {
            0xFF
        } else {
            b
        };
        s = crc_byte(s, b);
    }
    s
}

/// One beat of ICRC in one cycle: `state_out` = CRC state after the first
/// `nbytes` bytes of `data` (a multiple of 4 in 4..=64, as every frame's
/// ICRC-covered bytes in a beat are), from `state` (or from the start state
/// when `first`). The ICRC of a frame is `!state_out` after its last
/// covered byte. The pipeline's pieces chained without registers: the
/// Verilator test top for them (`sim/tests/icrc_block.rs`), not used in the
/// core, where they sit in separate stages.
#[derive(LogicBlock, Default)]
pub struct IcrcBeat {
    /// State in (ignored when `first`).
    pub state: Signal<In, Bits<32>>,
    /// Beat (frame byte 0 of this beat in lane 0).
    pub data: Signal<In, Bits<512>>,
    /// This is beat 0 of the frame: apply the Ethernet-header replacement and field masks.
    pub first: Signal<In, Bit>,
    /// Bytes of the beat covered by the CRC (4..=64, a multiple of 4).
    pub nbytes: Signal<In, Bits<7>>,
    /// State out.
    pub state_out: Signal<Out, Bits<32>>,
    contribution: IcrcData,
    fold: IcrcFold,
    unpad_lo: IcrcUnpadLo,
    unpad_hi: IcrcUnpadHi,
    ones: Signal<Local, Bits<64>>,
    k: Signal<Local, Bits<7>>,
}

impl Logic for IcrcBeat {
    #[hdl_gen]
    fn update(&mut self) {
        self.ones.next = 0xFFFF_FFFF_FFFF_FFFF_u64.into();
        self.contribution.data.next = self.data.val();
        self.contribution.first.next = self.first.val();
        self.contribution.keep.next = !(self.ones.val() << bit_cast::<64, 7>(self.nbytes.val()));
        self.fold.state.next = self.state.val();
        self.fold.d.next = self.contribution.d.val();
        self.fold.first.next = self.first.val();
        // The zero bytes the full-beat fold appended, undone.
        self.k.next = bits::<7>(64) - self.nbytes.val();
        self.unpad_lo.state.next = self.fold.state_out.val();
        self.unpad_lo.k.next = self.k.val().get_bits::<6>(0);
        self.unpad_hi.state.next = self.unpad_lo.state_out.val();
        self.unpad_hi.k.next = self.k.val().get_bits::<6>(0);
        self.state_out.next = self.unpad_hi.state_out.val();
    }
}

/// Columns of the full-beat update for the state bits (`A^64`).
fn state_cols() -> [u32; 32] {
    let mut scol = [0u32; 32];
    for (i, c) in scol.iter_mut().enumerate() {
        *c = (0..64).fold(1u32 << i, |s, _| crc_byte(s, 0));
    }
    scol
}

/// Columns of the full-beat update for the 512 data bits (from a zero state).
fn data_cols() -> Vec<u32> {
    let mut dcol = vec![0u32; 512];
    for (i, c) in dcol.iter_mut().enumerate() {
        let mut s = 0u32;
        for byte in 0..64 {
            let b = if byte == i / 8 { 1u8 << (i % 8) } else { 0 };
            s = crc_byte(s, b);
        }
        *c = s;
    }
    dcol
}

/// Beat 0's masks as 512-bit binary literals: bytes forced to ones, bytes kept.
fn beat0_masks() -> (String, String) {
    let ones = beat0_ones();
    let mut ones_mask = String::new();
    let mut keep_mask = String::new();
    for byte in (0..64).rev() {
        let one = ones >> byte & 1 != 0;
        let kept = byte >= off::IP && !one;
        ones_mask.push_str(if one { "11111111" } else { "00000000" });
        keep_mask.push_str(if kept { "11111111" } else { "00000000" });
    }
    (ones_mask, keep_mask)
}

/// `name[j] = XOR of src[i]` over the columns whose bit j is set (`1'b0` for none).
fn xor_rows(v: &mut String, indent: &str, name: &str, src: &str, cols: &[u32], extra: Option<&str>) {
    use std::fmt::Write;
    for j in 0..32 {
        let mut terms: Vec<String> =
            cols.iter().enumerate().filter(|(_, c)| *c >> j & 1 != 0).map(|(i, _)| format!("{src}[{i}]")).collect();
        if let Some(e) = extra {
            terms.push(format!("{e}[{j}]"));
        }
        let rhs = if terms.is_empty() { "1'b0".to_string() } else { terms.join(" ^ ") };
        writeln!(v, "{indent}{name}[{j}] = {rhs};").unwrap();
    }
}

/// Model of [`IcrcData`]: a beat's contribution to the state, from a zero
/// state, with the bytes outside `keep` zeroed (after beat 0's masks).
pub fn model_data(beat: &[u8; 64], first: bool, keep: u64) -> u32 {
    let ones = beat0_ones();
    let mut s = 0u32;
    for (i, &b) in beat.iter().enumerate() {
        let b = match (first, ones >> i & 1 != 0) {
            (true, true) => 0xFF,
            (true, false) if i < off::IP => 0,
            _ => b,
        };
        s = crc_byte(s, if keep >> i & 1 != 0 { b } else { 0 });
    }
    s
}

/// Model of [`IcrcFold`]: the state after a full beat whose contribution is `d`.
pub fn model_fold(state: u32, d: u32, first: bool) -> u32 {
    let a64 = pow(&zero_byte(), 64);
    apply(&a64, if first { lead_state() } else { state }) ^ d
}

/// Model of the unpad stages: `A^-k` applied to the state (undoes k zero bytes).
pub fn model_unpad(state: u32, k: u32) -> u32 {
    apply(&pow(&invert(&zero_byte()), k), state)
}

/// A beat's ICRC contribution from a zero state: `data` masked as beat 0
/// when `first` (the Ethernet header replaced, variant fields forced to
/// ones), bytes whose `keep` bit is clear zeroed (a last beat's tail).
/// Combinational, no state input.
#[derive(LogicBlock, Default)]
pub struct IcrcData {
    /// Beat (frame byte 0 of this beat in lane 0).
    pub data: Signal<In, Bits<512>>,
    /// Beat 0 of the frame.
    pub first: Signal<In, Bit>,
    /// Byte lanes covered by the CRC.
    pub keep: Signal<In, Bits<64>>,
    /// The contribution (XOR it into `A^64` times the state).
    pub d: Signal<Out, Bits<32>>,
}

impl Logic for IcrcData {
    fn update(&mut self) {
        let mut beat = [0u8; 64];
        for (i, b) in beat.iter_mut().enumerate() {
            *b = self.data.val().get_bits::<8>(8 * i).index() as u8;
        }
        self.d.next = (model_data(&beat, self.first.val(), self.keep.val().to_u64()) as u64).into();
    }
    fn connect(&mut self) {
        self.d.connect();
    }
    fn hdl(&self) -> Verilog {
        use std::fmt::Write;
        let (ones_mask, keep_mask) = beat0_masks();
        let mut v = String::from("reg [511:0] m;\nalways @(*) begin\n  m = data;\n");
        writeln!(v, "  if (first) m = (data & 512'b{keep_mask}) | 512'b{ones_mask};").unwrap();
        for byte in 0..64 {
            writeln!(v, "  if (!keep[{byte}]) m[{}:{}] = 8'd0;", 8 * byte + 7, 8 * byte).unwrap();
        }
        xor_rows(&mut v, "  ", "d", "m", &data_cols(), None);
        v.push_str("end\n");
        Verilog::Custom(v)
    }
}

/// The state after a full beat: `A^64` times `state` (or the start state
/// when `first`) plus the beat's contribution `d` ([`IcrcData`]).
#[derive(LogicBlock, Default)]
pub struct IcrcFold {
    /// State before the beat (ignored when `first`).
    pub state: Signal<In, Bits<32>>,
    /// The beat's contribution.
    pub d: Signal<In, Bits<32>>,
    /// The beat is beat 0 of the frame.
    pub first: Signal<In, Bit>,
    /// State after the beat.
    pub state_out: Signal<Out, Bits<32>>,
}

impl Logic for IcrcFold {
    fn update(&mut self) {
        let s = model_fold(self.state.val().to_u64() as u32, self.d.val().to_u64() as u32, self.first.val());
        self.state_out.next = (s as u64).into();
    }
    fn connect(&mut self) {
        self.state_out.connect();
    }
    fn hdl(&self) -> Verilog {
        use std::fmt::Write;
        let start = apply(&pow(&zero_byte(), 64), lead_state());
        let mut v = String::from("reg [31:0] f;\nalways @(*) begin\n");
        xor_rows(&mut v, "  ", "f", "state", &state_cols(), Some("d"));
        writeln!(v, "  state_out = first ? (32'h{start:08x} ^ d) : f;\nend").unwrap();
        Verilog::Custom(v)
    }
}

/// Verilog of conditional stages `from..to` of the unpad: stage i multiplies by `A^-(2^i)` when `k[i]`.
fn unpad_verilog(from: u32, to: u32) -> String {
    use std::fmt::Write;
    let a_inv = invert(&zero_byte());
    let mut v = String::new();
    // Every combination of k's bits from..to as one matrix, chosen after the
    // XOR trees (one XOR level and a mux, not one per stage).
    let n = 1u32 << (to - from);
    let names: Vec<String> = (0..n).map(|c| format!("u{c}")).collect();
    writeln!(v, "reg [31:0] {};", names.join(", ")).unwrap();
    writeln!(v, "always @(*) begin").unwrap();
    for c in 0..n {
        xor_rows(&mut v, "  ", &format!("u{c}"), "state", &pow(&a_inv, c << from), None);
    }
    writeln!(v, "  case (k[{}:{from}])", to - 1).unwrap();
    for c in 0..n {
        writeln!(v, "    {c}: state_out = u{c};").unwrap();
    }
    writeln!(v, "    default: state_out = u0;\n  endcase\nend").unwrap();
    v
}

/// First half of undoing `k` zero bytes of padding (`k` a multiple of 4 below
/// 64): `A^-(k mod 16)` times the state (stages for k's bits 2 and 3).
#[derive(LogicBlock, Default)]
pub struct IcrcUnpadLo {
    /// State.
    pub state: Signal<In, Bits<32>>,
    /// Pad bytes (bits 2 and 3 used here).
    pub k: Signal<In, Bits<6>>,
    /// State with those pad bytes undone.
    pub state_out: Signal<Out, Bits<32>>,
}

impl Logic for IcrcUnpadLo {
    fn update(&mut self) {
        let k = self.k.val().to_u64() as u32 & 0b1100;
        self.state_out.next = (model_unpad(self.state.val().to_u64() as u32, k) as u64).into();
    }
    fn connect(&mut self) {
        self.state_out.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(unpad_verilog(2, 4))
    }
}

/// [`IcrcFold`] then [`IcrcUnpadLo`] in one: `A^-(k mod 16)` times the
/// folded state, each of the four matrices composed with `A^64` so the state
/// and the contribution pass one XOR tree (not the fold's, then the unpad's).
#[derive(LogicBlock, Default)]
pub struct IcrcFoldUnpadLo {
    /// CRC state before the beat.
    pub state: Signal<In, Bits<32>>,
    /// The beat's contribution ([`IcrcData`]).
    pub d: Signal<In, Bits<32>>,
    /// The beat is a frame's first.
    pub first: Signal<In, Bit>,
    /// Pad bytes (bits 2 and 3 used).
    pub k: Signal<In, Bits<6>>,
    /// `unpad_lo(fold(state, d, first), k)`.
    pub state_out: Signal<Out, Bits<32>>,
}

impl Logic for IcrcFoldUnpadLo {
    fn update(&mut self) {
        let f = model_fold(self.state.val().to_u64() as u32, self.d.val().to_u64() as u32, self.first.val());
        let k = self.k.val().to_u64() as u32 & 0b1100;
        self.state_out.next = (model_unpad(f, k) as u64).into();
    }
    fn connect(&mut self) {
        self.state_out.connect();
    }
    fn hdl(&self) -> Verilog {
        use std::fmt::Write;
        let a_inv = invert(&zero_byte());
        let a64 = pow(&zero_byte(), 64);
        let start = apply(&a64, lead_state());
        let mut v = String::from("reg [31:0] s0, s1, s2, s3, g0, g1, g2, g3;\nalways @(*) begin\n");
        for c in 0..4u32 {
            let u = pow(&a_inv, c << 2);
            xor_rows(&mut v, "  ", &format!("s{c}"), "state", &mul(&u, &a64), None);
            xor_rows(&mut v, "  ", &format!("g{c}"), "d", &u, None);
            writeln!(v, "  if (first) s{c} = 32'h{:08x};", apply(&u, start)).unwrap();
        }
        writeln!(v, "  case (k[3:2])").unwrap();
        for c in 0..4 {
            writeln!(v, "    {c}: state_out = s{c} ^ g{c};").unwrap();
        }
        writeln!(v, "    default: state_out = s0 ^ g0;\n  endcase\nend").unwrap();
        Verilog::Custom(v)
    }
}

/// The inverse of [`IcrcUnpadHi`]: `A^(k - k mod 16)` times the state (k's
/// bits 4 and 5), four matrices chosen after their XOR trees. A check that
/// the unpadded state is `x` compares the padded state with this of `x`.
#[derive(LogicBlock, Default)]
pub struct IcrcPadHi {
    /// State in.
    pub state: Signal<In, Bits<32>>,
    /// Pad bytes (bits 4 and 5 used).
    pub k: Signal<In, Bits<6>>,
    /// `A^(k & 48)` times `state`.
    pub state_out: Signal<Out, Bits<32>>,
}

impl Logic for IcrcPadHi {
    fn update(&mut self) {
        let k = self.k.val().to_u64() as u32 & 0b11_0000;
        self.state_out.next = (apply(&pow(&zero_byte(), k), self.state.val().to_u64() as u32) as u64).into();
    }
    fn connect(&mut self) {
        self.state_out.connect();
    }
    fn hdl(&self) -> Verilog {
        use std::fmt::Write;
        let mut v = String::from("reg [31:0] p0, p1, p2, p3;\nalways @(*) begin\n");
        for c in 0..4u32 {
            xor_rows(&mut v, "  ", &format!("p{c}"), "state", &pow(&zero_byte(), c << 4), None);
        }
        writeln!(v, "  case (k[5:4])").unwrap();
        for c in 0..4 {
            writeln!(v, "    {c}: state_out = p{c};").unwrap();
        }
        writeln!(v, "    default: state_out = p0;\n  endcase\nend").unwrap();
        Verilog::Custom(v)
    }
}

/// Second half: `A^-(k - k mod 16)` times the state (k's bits 4 and 5).
#[derive(LogicBlock, Default)]
pub struct IcrcUnpadHi {
    /// State.
    pub state: Signal<In, Bits<32>>,
    /// Pad bytes (bits 4 and 5 used here).
    pub k: Signal<In, Bits<6>>,
    /// State with those pad bytes undone.
    pub state_out: Signal<Out, Bits<32>>,
}

impl Logic for IcrcUnpadHi {
    fn update(&mut self) {
        let k = self.k.val().to_u64() as u32 & 0b11_0000;
        self.state_out.next = (model_unpad(self.state.val().to_u64() as u32, k) as u64).into();
    }
    fn connect(&mut self) {
        self.state_out.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(unpad_verilog(4, 6))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rnic_spec::wire::{icrc, Frame};

    #[test]
    fn inverse_undoes_zero_bytes() {
        let a = zero_byte();
        let ai = invert(&a);
        for v in [1u32, 0xdead_beef, u32::MAX] {
            assert_eq!(apply(&ai, apply(&a, v)), v);
        }
        assert_eq!(apply(&pow(&a, LEAD_PAD), lead_state()), u32::MAX);
    }

    #[test]
    fn beat_model_matches_spec_icrc() {
        for len in [0usize, 1, 5, 60, 64, 200, 1000] {
            let f = Frame { opcode: 0x0A, payload: (0..len).map(|i| i as u8 ^ 0x5a).collect(), ..Default::default() }
                .encode();
            let covered = f.len() - 4;
            let mut s = 0;
            for (bi, chunk) in f[..covered].chunks(64).enumerate() {
                let mut beat = [0u8; 64];
                beat[..chunk.len()].copy_from_slice(chunk);
                s = model_beat(s, &beat, bi == 0, chunk.len());
            }
            assert_eq!(!s, icrc(&f), "len {len}");
        }
    }

    /// The pipelined pieces compute what the one-cycle beat does, for every
    /// last-beat length (the RX front end's split of the same arithmetic).
    #[test]
    fn data_fold_unpad_match_the_beat_model() {
        let mut r = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            r
        };
        for n in 1..=64usize {
            let mut beat = [0u8; 64];
            beat.iter_mut().for_each(|b| *b = next() as u8);
            let state = next() as u32;
            for first in [false, true] {
                if first && n < 64 {
                    continue;
                }
                let keep = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
                let full = model_fold(state, model_data(&beat, first, keep), first);
                assert_eq!(model_unpad(full, 64 - n as u32), model_beat(state, &beat, first, n), "n {n} first {first}");
            }
        }
    }
}
