//! `Table`: a block RAM of `2^N` words (one read port, one write port, reads
//! registered) with a clear port: the scrub after a reset zeroes one entry
//! per cycle through it, ahead of the normal write.
//!
//! The clear lives in the RAM's clocked write process rather than as a mux
//! in front of `write_*`, so it adds no combinational path through the
//! block that owns the table.

use rust_hdl::prelude::*;
use std::collections::BTreeMap;

/// A RAM of `2^N` words of `D`, zero at power-on, with a clear port.
#[derive(LogicBlock, Default)]
pub struct Table<D: Synth, const N: usize> {
    /// Read address, taken at the read clock's edge.
    pub read_address: Signal<In, Bits<N>>,
    /// Read clock.
    pub read_clock: Signal<In, Clock>,
    /// The word at the address of the last edge.
    pub read_data: Signal<Out, D>,
    /// Write address.
    pub write_address: Signal<In, Bits<N>>,
    /// Write clock.
    pub write_clock: Signal<In, Clock>,
    /// Word written.
    pub write_data: Signal<In, D>,
    /// Write `write_data` at `write_address` (ignored while `clear`).
    pub write_enable: Signal<In, Bit>,
    /// Write zero at `clear_address` instead.
    pub clear: Signal<In, Bit>,
    /// The entry `clear` zeroes.
    pub clear_address: Signal<In, Bits<N>>,
    _sim: BTreeMap<Bits<N>, D>,
}

impl<D: Synth, const N: usize> Logic for Table<D, N> {
    fn update(&mut self) {
        if self.read_clock.pos_edge() {
            self.read_data.next = self._sim.get(&self.read_address.val()).copied().unwrap_or_default();
        }
        if self.write_clock.pos_edge() {
            if self.clear.val() {
                self._sim.remove(&self.clear_address.val());
            } else if self.write_enable.val() {
                self._sim.insert(self.write_address.val(), self.write_data.val());
            }
        }
    }
    fn connect(&mut self) {
        self.read_data.connect();
    }
    fn hdl(&self) -> Verilog {
        let top = D::BITS - 1;
        let last = (1usize << N) - 1;
        Verilog::Custom(format!(
            "\
reg [{top}:0] mem[{last}:0];

always @(posedge read_clock) begin
   read_data <= mem[read_address];
end

always @(posedge write_clock) begin
   if (clear) mem[clear_address] <= 0;
   else if (write_enable) mem[write_address] <= write_data;
end
"
        ))
    }
    fn timing(&self) -> Vec<TimingInfo> {
        vec![
            TimingInfo {
                name: "table_read".into(),
                clock: "read_clock".into(),
                inputs: vec!["read_address".into()],
                outputs: vec!["read_data".into()],
            },
            TimingInfo {
                name: "table_write".into(),
                clock: "write_clock".into(),
                inputs: vec![
                    "write_address".into(),
                    "write_data".into(),
                    "write_enable".into(),
                    "clear".into(),
                    "clear_address".into(),
                ],
                outputs: vec![],
            },
        ]
    }
}
