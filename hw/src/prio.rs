//! Priority encoders: the index of a vector's lowest set bit, found in
//! groups of 16 bits. A 256-bit search as `x & -x` is a carry chain 32
//! cells deep; as two 16-way steps (each group's lowest bit, then the
//! lowest group) each step is a few LUT levels and can sit in its own
//! pipeline stage, as the spray engine does.

use rust_hdl::prelude::*;
use std::fmt::Write;

/// Verilog of a `groups` × 16-bit search: `any[g]` and `low[4g+3:4g]`
/// (`any`, `low` without a range for one group).
fn first_set_verilog(groups: usize) -> String {
    let mut v = String::from("always @(*) begin\n");
    for g in 0..groups {
        let (any, low) = if groups == 1 {
            ("any".to_string(), "low".to_string())
        } else {
            (format!("any[{g}]"), format!("low[{}:{}]", 4 * g + 3, 4 * g))
        };
        writeln!(v, "  {any} = |x[{}:{}];", 16 * g + 15, 16 * g).unwrap();
        writeln!(v, "  {low} = 4'd0;").unwrap();
        // Highest first, so the lowest set bit is the last assignment that takes.
        for b in (0..16).rev() {
            writeln!(v, "  if (x[{}]) {low} = 4'd{b};", 16 * g + b).unwrap();
        }
    }
    v.push_str("end\n");
    v
}

/// The lowest set bit of a 16-bit value (software model).
fn first_set16(x: u64) -> (bool, u64) {
    let x = x & 0xFFFF;
    (x != 0, if x == 0 { 0 } else { x.trailing_zeros() as u64 })
}

/// Per 16-bit group of a 256-bit vector: whether any bit is set, and the
/// lowest set bit's index within the group (0 for an empty group).
#[derive(LogicBlock, Default)]
pub struct FirstSet256 {
    /// The vector.
    pub x: Signal<In, Bits<256>>,
    /// Bit g: group g (bits 16g..16g+15) has a set bit.
    pub any: Signal<Out, Bits<16>>,
    /// Bits 4g..4g+3: the lowest set bit of group g, within the group.
    pub low: Signal<Out, Bits<64>>,
}

impl Logic for FirstSet256 {
    fn update(&mut self) {
        let (mut any, mut low) = (0u64, 0u64);
        for g in 0..16 {
            let (a, l) = first_set16(self.x.val().get_bits::<16>(16 * g).to_u64());
            any |= (a as u64) << g;
            low |= l << (4 * g);
        }
        self.any.next = any.into();
        self.low.next = low.into();
    }
    fn connect(&mut self) {
        self.any.connect();
        self.low.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(first_set_verilog(16))
    }
}

/// The lowest set bit of a 16-bit vector.
#[derive(LogicBlock, Default)]
pub struct FirstSet16 {
    /// The vector.
    pub x: Signal<In, Bits<16>>,
    /// A bit is set.
    pub any: Signal<Out, Bit>,
    /// The lowest set bit's index (0 when none is).
    pub low: Signal<Out, Bits<4>>,
}

impl Logic for FirstSet16 {
    fn update(&mut self) {
        let (a, l) = first_set16(self.x.val().to_u64());
        self.any.next = a;
        self.low.next = l.into();
    }
    fn connect(&mut self) {
        self.any.connect();
        self.low.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(first_set_verilog(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verilog_names_every_bit_once_per_group() {
        let v = first_set_verilog(16);
        assert_eq!(v.matches("if (x[").count(), 256);
        assert!(v.contains("any[15] = |x[255:240];"));
        assert!(first_set_verilog(1).contains("any = |x[15:0];"));
    }
}
