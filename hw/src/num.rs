//! Protocol numbers from `rnic-spec` inside the circuit.
//!
//! rust-hdl's `#[hdl_gen]` turns only literals and signals into Verilog, so
//! a block cannot name `rnic_spec::wire::opcode::ACK` in its `update()`.
//! A [`Num`] field carries such a number into the block instead: its value
//! is a const generic filled from the spec (`Num<{ opcode::ACK as u64 }, 8>`),
//! it derives `Default` like every other field, and the Verilog declares it
//! as a `localparam` named after the field, at exactly `N` bits.

use rust_hdl::prelude::*;

/// The number `V` as an `N`-bit constant of a block.
#[derive(Clone, Copy, Debug)]
pub struct Num<const V: u64, const N: usize>(Constant<Bits<N>>);

impl<const V: u64, const N: usize> Num<V, N> {
    /// `V` must fit in `N` bits (checked when the block is built).
    const FITS: () = assert!(N >= 64 || V >> N == 0, "a spec number does not fit its width");

    /// The value, usable in `#[hdl_gen]` kernels.
    pub fn val(&self) -> Bits<N> {
        self.0.val()
    }
}

impl<const V: u64, const N: usize> Default for Num<V, N> {
    fn default() -> Self {
        let () = Self::FITS;
        Num(Constant::new(V.into()))
    }
}

impl<const V: u64, const N: usize> Logic for Num<V, N> {
    fn update(&mut self) {}
    fn connect(&mut self) {}
}

impl<const V: u64, const N: usize> Block for Num<V, N> {
    fn connect_all(&mut self) {}
    fn update_all(&mut self) {}
    fn has_changed(&self) -> bool {
        false
    }
    fn accept(&self, name: &str, probe: &mut dyn Probe) {
        probe.visit_atom(name, &self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(LogicBlock, Default)]
    struct Uses {
        a: Signal<In, Bits<8>>,
        y: Signal<Out, Bit>,
        ack: Num<0x11, 8>,
    }

    impl Logic for Uses {
        #[hdl_gen]
        fn update(&mut self) {
            self.y.next = self.a.val() == self.ack.val();
        }
    }

    #[test]
    fn holds_its_value_and_emits_a_localparam() {
        assert_eq!(Num::<0x11, 8>::default().val(), Bits::<8>::from(0x11));
        assert_eq!(Num::<{ u64::MAX }, 64>::default().val(), Bits::<64>::from(u64::MAX));
        let mut u = Uses::default();
        u.connect_all();
        let v = generate_verilog(&u);
        assert!(v.contains("localparam  ack = 8'h11;"), "{v}");
        assert!(v.contains("y = a == ack;"), "{v}");
    }
}
