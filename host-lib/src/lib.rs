//! `rnic`: the host library of the rnic NIC, a verbs-like API whose names
//! mirror rdma-core's libibverbs.
//!
//! ```text
//! open_device(dev, addr) -> Context
//! Context::alloc_pd() -> Pd          Context::create_cq(depth) -> Cq
//! Pd::reg_mr(len, access) -> Mr      Pd::create_qp(QpInitAttr) -> Qp
//! Mr::{lkey, rkey, addr, write, read}
//! Qp::modify(QpAttr)  RESET -> INIT -> RTR -> RTS (ERROR on an error completion)
//! Qp::post_send / post_recv (single or batched, one doorbell per batch)
//! Cq::poll_cq(&mut [WorkCompletion]) -> count    Cq::poll_cq_vec(max) / Cq::wait_cq(n, timeout_cycles)
//! Context::set_retransmit_timeout(cycles)    Qp::recovery_stats()
//! Qp::destroy_qp  Mr::dereg_mr  Cq::destroy_cq  Pd::dealloc_pd  Context::close_device
//! ```
//!
//! The library programs the NIC only through [`rnic_driver::Device`] and the
//! contract in [`rnic_spec`] (register map, staging word layouts, descriptor
//! structs). Objects are handles (`Arc`) usable from several threads, as
//! verbs objects are: each context's state has one lock, and each call
//! holds it for its own work (a QP posted from one thread while another
//! polls its CQ is the `threads` test).
//!
//! # Loss recovery
//!
//! The NIC sends in order and reports PSN sequence NAKs, RNR NAKs and
//! retransmission timeouts through its control queue; [`Cq::poll_cq`] runs
//! the slow path that answers them (no extra thread): it asks the NIC to
//! resend from the lost packet (go-back-N for now), counts `retry_cnt` and
//! `rnr_retry` ([`QpAttr`]), and fails a WR with `RetryExcErr` or
//! `RnrRetryExcErr` when they run out. So an application that waits for
//! completions keeps recovering; one that never polls does not.
//!
//! # Lifecycle
//!
//! Objects form the tree of ibverbs: a context has PDs and CQs, a PD has
//! MRs and QPs, a QP completes on one or two CQs.
//!
//! - **Children keep their parents alive.** An MR holds its PD; a QP holds
//!   its PD, its send CQ and its receive CQ; PDs and CQs hold the context
//!   (MRs and QPs reach it through their PD). Dropping a parent's handle
//!   while children exist therefore frees nothing they use: the parent is
//!   released when its last handle and its last child are gone.
//! - **Dropping releases best-effort.** A dropped [`Qp`] is destroyed and a
//!   dropped [`Mr`] deregistered at once; a [`Pd`], [`Cq`] or [`Context`]
//!   goes when nothing holds it any more. Errors are ignored.
//! - **Explicit destroy reports errors**, as `ibv_destroy_qp`,
//!   `ibv_dereg_mr`, `ibv_destroy_cq`, `ibv_dealloc_pd` and
//!   `ibv_close_device` do: [`Qp::destroy_qp`], [`Mr::dereg_mr`],
//!   [`Cq::destroy_cq`], [`Pd::dealloc_pd`], [`Context::close_device`].
//!   Each consumes its handle and returns `Result<(), DestroyError<Self>>`.
//!   An object still in use is not destroyed: the error is [`Error::Busy`]
//!   (ibverbs' `EBUSY`) naming what uses it (the QPs on a CQ, the MRs and
//!   QPs of a PD, every live object of a context, or other clones of the
//!   handle), and [`DestroyError::into_object`] hands the handle back,
//!   unchanged. Destroy children first: QPs, then MRs, CQs and PDs, then
//!   close the context. Any other error comes from the teardown itself,
//!   which then goes as far as it safely can; the handle is gone.
//! - **Resource numbers are reused.** A released QPN, CQN, MR index or PD
//!   number is the first candidate of the next allocation (lowest free
//!   number). A reused MR index gets a new key tag, so keys of deregistered
//!   regions keep failing at the NIC.
#![deny(missing_docs)]

mod cq;
mod ctx;
mod error;
mod event;
mod mr;
mod qp;
mod recovery;
mod resp_recovery;
pub mod ring;

pub use cq::{Cq, WcFlags, WcOpcode, WcStatus, WorkCompletion};
pub use ctx::{open_device, open_devices, CcNetwork, Context, DeviceAttr, NetAddr, Pd, DEFAULT_RTO_CYCLES};
pub use error::{DestroyError, Error, Queue, Resource, Result};
pub use event::CompChannel;
pub use mr::{AccessFlags, Mr, Sge};
pub use qp::{
    BadWr, Mtu, Qp, QpAttr, QpInitAttr, QpState, RecvWr, SendFlags, SendWr, SgList, WrOpcode, MAX_INLINE_DATA,
    MAX_RECV_SGE, MAX_SEND_SGE,
};
pub use recovery::{rnr_timer_us, RecoveryStats, OOO_MIN_THRESHOLD, RNR_RETRY_INFINITE, SPRAY_REORDER_PKTS};
pub use rnic_driver::{Device, DmaAccess, DmaBuf, DriverError, HostBuf};

/// Offset added to an MR's bus address to form the virtual address the
/// application and the wire use, so the NIC's VA -> IOVA translation is
/// exercised for real (a bug that skips it would DMA to a wrong address).
pub const VA_OFFSET: u64 = 0x7f00_0000_0000;

#[cfg(test)]
mod mock;
#[cfg(test)]
mod tests;
