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
