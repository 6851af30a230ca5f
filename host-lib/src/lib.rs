//! `rnic`: the host library of the rnic NIC, a verbs-like API whose names
//! mirror rdma-core's libibverbs.
//!
//! ```text
//! open_device(dev, addr) -> Context
//! Context::alloc_pd() -> Pd          Context::create_cq(depth) -> Cq
//! Pd::reg_mr(len, access) -> Mr      Pd::create_qp(QpInitAttr) -> Qp
//! Mr::{lkey, rkey, addr, write, read, dereg_mr}
//! Qp::modify(QpAttr)  RESET -> INIT -> RTR -> RTS (ERROR on an error completion)
//! Qp::post_send / post_recv (single or batched, one doorbell per batch)
//! Cq::poll_cq(max) / Cq::wait_cq(n, timeout_cycles) -> WorkCompletion
//! ```
//!
//! The library programs the NIC only through [`rnic_driver::Device`] and the
//! contract in [`rnic_spec`] (register map, staging word layouts, descriptor
//! structs). Objects are single-threaded handles (`Rc`), like one verbs
//! context used from one thread.
#![deny(missing_docs)]

mod cq;
mod ctx;
mod error;
mod mr;
mod qp;
pub mod ring;

pub use cq::{Cq, WcOpcode, WcStatus, WorkCompletion};
pub use ctx::{open_device, open_devices, Context, DeviceAttr, NetAddr, Pd};
pub use error::{Error, Queue, Result};
pub use mr::{AccessFlags, Mr, Sge};
pub use qp::{Mtu, Qp, QpAttr, QpInitAttr, QpState, RecvWr, SendWr, WrOpcode};
pub use rnic_driver::{Device, DmaAccess, DmaBuf, DriverError};

/// Offset added to an MR's bus address to form the virtual address the
/// application and the wire use, so the NIC's VA -> IOVA translation is
/// exercised for real (a bug that skips it would DMA to a wrong address).
pub const VA_OFFSET: u64 = 0x7f00_0000_0000;

#[cfg(test)]
mod mock;
#[cfg(test)]
mod tests;
