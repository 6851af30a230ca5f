//! `LowMask`: the mask `2^log2 - 1` of a ring of `2^log2` entries, as a
//! thermometer code. Bit i is `log2 > i`, one small compare per bit, so
//! nothing deeper than a LUT or two stands in front of the ring-index
//! arithmetic the mask feeds (a shift and a subtract would be several
//! levels and a carry chain).

use rust_hdl::prelude::*;

/// `N` low bits of `2^log2 - 1` (all ones from `log2 >= N` on).
#[derive(LogicBlock, Default)]
pub struct LowMask<const N: usize> {
    /// The ring's log2 size.
    pub log2: Signal<In, Bits<8>>,
    /// Bit i set for i < log2.
    pub mask: Signal<Out, Bits<N>>,
}

impl<const N: usize> Logic for LowMask<N> {
    fn update(&mut self) {
        let k = self.log2.val().to_u64() as usize;
        let mut m = Bits::<N>::default();
        for i in 0..N.min(k) {
            m = m.replace_bit(i, true);
        }
        self.mask.next = m;
    }
    fn connect(&mut self) {
        self.mask.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut v = String::from("always @(*) begin\n");
        for i in 0..N {
            v += &format!("  mask[{i}] = log2 > 8'd{i};\n");
        }
        v += "end\n";
        Verilog::Custom(v)
    }
}

/// `data` with the bytes from lane `len` on cleared (lane i is bits
/// `8i+7..8i`): a beat of `len` bytes zero-padded, as the TX ICRC expects
/// its last beat. One compare per lane.
#[derive(LogicBlock, Default)]
pub struct ByteKeep {
    /// Bytes to keep (64 and up: all).
    pub len: Signal<In, Bits<8>>,
    /// The beat.
    pub data: Signal<In, Bits<512>>,
    /// The beat with lanes `len..64` zero.
    pub kept: Signal<Out, Bits<512>>,
}

impl Logic for ByteKeep {
    fn update(&mut self) {
        let k = (self.len.val().to_u64() as usize).min(64);
        let d = self.data.val();
        let mut m = Bits::<512>::default();
        for i in 0..8 * k {
            m = m.replace_bit(i, d.get_bit(i));
        }
        self.kept.next = m;
    }
    fn connect(&mut self) {
        self.kept.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut v = String::from("always @(*) begin\n");
        for i in 0..64 {
            let (hi, lo) = (8 * i + 7, 8 * i);
            v += &format!("  kept[{hi}:{lo}] = len > 8'd{i} ? data[{hi}:{lo}] : 8'd0;\n");
        }
        v += "end\n";
        Verilog::Custom(v)
    }
}
