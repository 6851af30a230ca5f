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

/// `data` rotated up by `by` byte lanes (lane i to lane `(i + by) mod 64`),
/// in six stages of constant rotations, one 2:1 mux per bit each.
#[derive(LogicBlock, Default)]
pub struct ByteRotUp {
    /// Lanes to rotate by.
    pub by: Signal<In, Bits<6>>,
    /// The beat.
    pub data: Signal<In, Bits<512>>,
    /// The beat rotated.
    pub rotated: Signal<Out, Bits<512>>,
}

impl Logic for ByteRotUp {
    fn update(&mut self) {
        let k = self.by.val().to_u64() as usize;
        let d = self.data.val();
        let mut m = Bits::<512>::default();
        for i in 0..512 {
            m = m.replace_bit((i + 8 * k) % 512, d.get_bit(i));
        }
        self.rotated.next = m;
    }
    fn connect(&mut self) {
        self.rotated.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut v = String::from("always @(*) begin\n  rotated = data;\n");
        for s in 0..6 {
            let n = 8 << s;
            v += &format!("  if (by[{s}]) rotated = {{rotated[{}:0], rotated[511:{}]}};\n", 511 - n, 512 - n);
        }
        v += "end\n";
        Verilog::Custom(v)
    }
}

/// Lanes below `at` from `lo`, the others from `hi`: one compare per lane.
#[derive(LogicBlock, Default)]
pub struct LaneMerge {
    /// The first lane taken from `hi`.
    pub at: Signal<In, Bits<6>>,
    /// Beat for the lanes below `at`.
    pub lo: Signal<In, Bits<512>>,
    /// Beat for the lanes from `at` on.
    pub hi: Signal<In, Bits<512>>,
    /// The merged beat.
    pub merged: Signal<Out, Bits<512>>,
}

impl Logic for LaneMerge {
    fn update(&mut self) {
        let k = self.at.val().to_u64() as usize;
        let (lo, hi) = (self.lo.val(), self.hi.val());
        let mut m = Bits::<512>::default();
        for i in 0..512 {
            m = m.replace_bit(i, if i < 8 * k { lo.get_bit(i) } else { hi.get_bit(i) });
        }
        self.merged.next = m;
    }
    fn connect(&mut self) {
        self.merged.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut v = String::from("always @(*) begin\n");
        for i in 0..63 {
            let (h, l) = (8 * i + 7, 8 * i);
            v += &format!("  merged[{h}:{l}] = at > 6'd{i} ? lo[{h}:{l}] : hi[{h}:{l}];\n");
        }
        // No `at` is above 63: the top lane is always `hi`'s.
        v += "  merged[511:504] = hi[511:504];\n";
        v += "end\n";
        Verilog::Custom(v)
    }
}

/// The lanes of `data` whose bit in `keep` is set, the others zero: one LUT
/// per bit, where a mask expanded by shifts would be a barrel shifter.
#[derive(LogicBlock, Default)]
pub struct ByteSelect {
    /// One bit per lane.
    pub keep: Signal<In, Bits<64>>,
    /// The beat.
    pub data: Signal<In, Bits<512>>,
    /// The beat with the lanes not kept zero.
    pub kept: Signal<Out, Bits<512>>,
}

impl Logic for ByteSelect {
    fn update(&mut self) {
        let (k, d) = (self.keep.val(), self.data.val());
        let mut m = Bits::<512>::default();
        for i in 0..512 {
            m = m.replace_bit(i, k.get_bit(i / 8) & d.get_bit(i));
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
            v += &format!("  kept[{hi}:{lo}] = keep[{i}] ? data[{hi}:{lo}] : 8'd0;\n");
        }
        v += "end\n";
        Verilog::Custom(v)
    }
}

/// The byte enables of `n` bytes from lane `lane` of a 64-byte block: `lo`
/// the lanes in this block, `hi` the lanes that wrap into the next. One
/// compare pair per lane against the lane and the end, no shifter.
#[derive(LogicBlock, Default)]
pub struct LaneWindow {
    /// The first lane.
    pub lane: Signal<In, Bits<6>>,
    /// Bytes, 0..=64 (with bit 6 set: 64).
    pub n: Signal<In, Bits<7>>,
    /// Lanes `lane..min(lane + n, 64)`.
    pub lo: Signal<Out, Bits<64>>,
    /// Lanes `0..lane + n - 64`.
    pub hi: Signal<Out, Bits<64>>,
}

impl Logic for LaneWindow {
    fn update(&mut self) {
        let lane = self.lane.val().to_u64() as usize;
        let n = self.n.val().to_u64() as usize;
        let end = lane + if n & 64 != 0 { 64 } else { n };
        let (mut lo, mut hi) = (Bits::<64>::default(), Bits::<64>::default());
        for i in 0..64 {
            lo = lo.replace_bit(i, i >= lane && i < end);
            hi = hi.replace_bit(i, i + 64 < end);
        }
        self.lo.next = lo;
        self.hi.next = hi;
    }
    fn connect(&mut self) {
        self.lo.connect();
        self.hi.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut v = String::from("reg [7:0] e;\nalways @(*) begin\n  e = {2'd0, lane} + (n[6] ? 8'd64 : {1'd0, n});\n");
        for i in 0..63 {
            v += &format!("  lo[{i}] = lane <= 6'd{i} && e > 8'd{i};\n");
        }
        v += "  lo[63] = e > 8'd63;\n";
        for i in 0..64 {
            v += &format!("  hi[{i}] = e > 8'd{};\n", i + 64);
        }
        v += "end\n";
        Verilog::Custom(v)
    }
}
