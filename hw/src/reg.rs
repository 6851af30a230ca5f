//! `Reg`, the register of every block: a D flip-flop with a synchronous,
//! active-high reset to its power-on value (the type's default, all zeros;
//! an FSM's first state).
//!
//! rust-hdl's `DFF` has no reset, so a block built from it can only be
//! brought back to its power-on state by reloading the bitstream. Every block
//! takes a `reset` input and wires it to each `Reg` next to `dff_setup!`.
//! On UltraScale+ the reset maps to the flip-flop's synchronous reset pin
//! (FDRE), so it costs no logic in front of `d`.

use rust_hdl::prelude::*;

/// A D flip-flop with a synchronous reset to `T::default()`.
#[derive(Clone, Debug, LogicBlock)]
pub struct Reg<T: Synth> {
    /// Next value, taken at the rising clock edge unless `reset` is high.
    pub d: Signal<In, T>,
    /// Current value.
    pub q: Signal<Out, T>,
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: `q` becomes `T::default()` at the next edge.
    pub reset: Signal<In, Bit>,
}

impl<T: Synth> Default for Reg<T> {
    fn default() -> Self {
        Self { d: Signal::default(), q: Signal::default(), clock: Signal::default(), reset: Signal::default() }
    }
}

impl<T: Synth> Logic for Reg<T> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            self.q.next = if self.reset.val() { T::default() } else { self.d.val() };
        }
    }
    fn connect(&mut self) {
        self.q.connect();
    }
    fn hdl(&self) -> Verilog {
        let init = T::default().verilog();
        Verilog::Custom(format!(
            "\
initial begin
   q = {init:x};
end

always @(posedge clock) begin
   if (reset) q <= {init:x};
   else q <= d;
end
"
        ))
    }
    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "reg".into(),
            clock: "clock".into(),
            inputs: vec!["d".into(), "reset".into()],
            outputs: vec!["q".into()],
        }]
    }
}
