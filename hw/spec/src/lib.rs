//! `rnic-spec`: the one definition of everything the RTL generator, the
//! simulator, the driver and the host library must agree on.
//!
//! * [`params`]: clock, datapath width, table sizes, MTU limits;
//! * [`regs`]: the BAR0 register map and the setup (staging) word layouts;
//! * [`desc`]: send/receive WQEs and CQEs as `zerocopy` structs;
//! * [`wire`]: the RoCEv2 frame layout with rnic's extension headers, a
//!   software encoder/decoder, and the ICRC.
//! * [`usp`]: the UltraScale+ PCIe block's descriptor and `tuser` layouts
//!   the board adapters use.
//!
//! No rust-hdl dependency: this crate is plain data and functions.
#![deny(missing_docs)]

pub mod desc;
pub mod params;
pub mod regs;
pub mod usp;
pub mod wire;
