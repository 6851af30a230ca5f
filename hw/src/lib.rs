//! `rnic-hw`: the NIC core in rust-hdl, one module per block.
//!
//! Blocks: [`regs`] (BAR0), [`sq`] (scheduler + send path), [`txb`] (TX
//! packet builder), [`rxin`] (RX store-and-forward + checks), [`resp`]
//! (responder, ACK receiver, completions), [`icrc`], [`hdr`] (header
//! pack/unpack generated from `rnic-spec`), [`desc`]/[`pack`] (descriptor
//! words between engines).
//!
//! [`core::RnicCore`] is the top level with the vendor-neutral interfaces of
//! DESIGN.md §3. [`verilog_tops`] emits the Verilog of every top the
//! simulator verilates (the core and the per-block test tops).

pub mod core;

use rust_hdl::prelude::*;

/// Emits the Verilog of a block as a top-level module named `top`.
pub fn emit<B: Block>(mut b: B) -> String {
    b.connect_all();
    generate_verilog(&b)
}

/// `(name, verilog)` of every top-level the simulator builds a model for.
pub fn verilog_tops() -> Vec<(String, String)> {
    vec![
        ("core".to_string(), emit(core::RnicCore::default())),
        ("icrc".to_string(), emit(icrc::IcrcBeat::default())),
        ("tx_header".to_string(), emit(hdr::TxHeader::default())),
        ("rx_header".to_string(), emit(hdr::RxHeader::default())),
        ("tx_builder".to_string(), emit(txb::TxBuilder::default())),
        ("rx_in".to_string(), emit(rxin::RxIn::default())),
        ("regs".to_string(), emit(regs::Regs::default())),
        ("sq".to_string(), emit(sq::SqEngine::default())),
        ("resp".to_string(), emit(resp::Responder::default())),
    ]
}
pub mod desc;
pub mod fence;
pub mod hdr;
pub mod icrc;
pub mod pack;
pub mod regs;
pub mod resp;
pub mod rxin;
pub mod sq;
pub mod txb;

#[cfg(test)]
mod tests {
    /// rust-hdl emits `expr[...]` for a slice of a computed expression, which
    /// Verilog rejects; catch it here rather than in the Verilator build.
    #[test]
    fn emitted_verilog_slices_only_signals() {
        for (name, v) in super::verilog_tops() {
            for (i, line) in v.lines().enumerate() {
                assert!(!line.contains(")[("), "{name}.v line {}: slice of an expression: {line}", i + 1);
            }
        }
    }
}
