//! `rnic-hw`: the NIC core in rust-hdl, one module per block.
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
    vec![("core".to_string(), emit(core::RnicCore::default()))]
}
pub mod desc;
pub mod hdr;
pub mod icrc;
pub mod pack;
pub mod sq;
pub mod txb;
pub mod rxin;
pub mod resp;
pub mod regs;
