//! The library's one error type: every variant names what was wrong.

use crate::{AccessFlags, QpState};
use rnic_driver::DriverError;
use thiserror::Error;

/// Which work queue of a QP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queue {
    /// Send queue.
    Sq,
    /// Receive queue.
    Rq,
}

impl std::fmt::Display for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Queue::Sq => "SQ",
            Queue::Rq => "RQ",
        })
    }
}

/// A library object, as named in [`Error::Busy`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Resource {
    /// The device context.
    Context,
    /// A protection domain, by number.
    Pd(u32),
    /// A completion queue, by CQN.
    Cq(u32),
    /// A memory region, by key.
    Mr(u32),
    /// A queue pair, by QPN.
    Qp(u32),
}

impl std::fmt::Display for Resource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Resource::Context => f.write_str("the device context"),
            Resource::Pd(n) => write!(f, "PD {n}"),
            Resource::Cq(n) => write!(f, "CQ {n}"),
            Resource::Mr(k) => write!(f, "MR key {k:#x}"),
            Resource::Qp(n) => write!(f, "QP {n}"),
        }
    }
}

/// Users named in full by [`Error::Busy`]'s message; more are counted.
const BUSY_NAMED: usize = 8;

/// The "still in use by ..." part of [`Error::Busy`]'s message.
fn busy_users(users: &[Resource], other_handles: usize) -> String {
    let mut parts: Vec<String> = users.iter().take(BUSY_NAMED).map(Resource::to_string).collect();
    if users.len() > BUSY_NAMED {
        parts.push(format!("{} more objects", users.len() - BUSY_NAMED));
    }
    match other_handles {
        0 => {}
        1 => parts.push("another handle of it".into()),
        n => parts.push(format!("{n} other handles of it")),
    }
    parts.join(", ")
}

/// Errors of the `rnic` host library.
#[derive(Debug, Error)]
pub enum Error {
    /// The device backend failed.
    #[error("device: {0}")]
    Driver(#[from] DriverError),
    /// REG_ID does not carry the rnic magic.
    #[error("{device}: REG_ID reads {id:#018x}, expected magic {magic:#x} in bits 63:32")]
    BadDeviceId {
        /// Device name.
        device: String,
        /// Value read.
        id: u64,
        /// Expected magic.
        magic: u64,
    },
    /// The NIC did not report `STATUS_READY` (its tables cleared after a reset).
    #[error(
        "{device}: not ready after {cycles} cycles (REG_STATUS never showed STATUS_READY; is the core held in reset?)"
    )]
    NotReady {
        /// Device name.
        device: String,
        /// Cycles waited.
        cycles: u64,
    },
    /// `dereg_mr`: the NIC did not confirm that DMA through the key stopped.
    #[error("MR key {key:#x}: the NIC's MR fence did not finish in {cycles} cycles; the memory stays allocated")]
    FenceTimeout {
        /// The MR's key.
        key: u32,
        /// Cycles waited.
        cycles: u64,
    },
    /// Resetting or destroying a QP: the NIC did not take the SQ rewinds the
    /// slow path had asked for, so one could still land on the QP's next life.
    #[error("QP {qpn}: {pending} SQ rewind(s) asked for were not taken by the NIC in {cycles} cycles")]
    RewindsPending {
        /// The QP being reset.
        qpn: u32,
        /// Rewinds neither applied nor dropped.
        pending: u64,
        /// Cycles waited.
        cycles: u64,
    },
    /// An explicit destroy found the object still in use (ibverbs' `EBUSY`):
    /// nothing was destroyed, and the handle comes back in the [`DestroyError`].
    #[error("cannot destroy {object}: still in use by {}; destroy or drop those first", busy_users(.users, *.other_handles))]
    Busy {
        /// The object that was to be destroyed.
        object: Resource,
        /// The objects that still use it, in table order (PDs, CQs, MRs, QPs).
        users: Vec<Resource>,
        /// Further handles (clones) of the object itself.
        other_handles: usize,
    },
    /// A table (QPs, CQs, MRs) has no free entry.
    #[error("no free {what} (the NIC holds {max})")]
    Exhausted {
        /// "QPN", "CQN" or "MR index".
        what: &'static str,
        /// Table size.
        max: usize,
    },
    /// A size argument is out of range.
    #[error("{what} = {value} is out of range (allowed {min}..={max})")]
    BadSize {
        /// Which argument.
        what: &'static str,
        /// Value given.
        value: u64,
        /// Smallest allowed.
        min: u64,
        /// Largest allowed.
        max: u64,
    },
    /// Creating the QP would let more completions be outstanding than the CQ holds.
    #[error("CQ {cqn} has {entries} entries, {committed} already reserved by other QPs; QP {qpn} needs {needed} more ({queue} completions) — create a larger CQ")]
    CqTooSmall {
        /// The CQ.
        cqn: u32,
        /// Its ring size.
        entries: u32,
        /// Entries already reserved for other QPs' WRs.
        committed: u32,
        /// Entries this QP needs.
        needed: u32,
        /// QP being created.
        qpn: u32,
        /// Which of its queues overflowed the CQ ("send", "recv", "send+recv").
        queue: &'static str,
    },
    /// Illegal QP state transition (ibverbs rules).
    #[error("QP {qpn}: illegal transition {from:?} -> {to:?}")]
    BadTransition {
        /// The QP.
        qpn: u32,
        /// Current state.
        from: QpState,
        /// Requested state.
        to: QpState,
    },
    /// An attribute the transition needs was not given.
    #[error("QP {qpn}: transition {from:?} -> {to:?} requires attribute {attr}")]
    MissingAttr {
        /// The QP.
        qpn: u32,
        /// Current state.
        from: QpState,
        /// Requested state.
        to: QpState,
        /// Attribute name (ibverbs spelling).
        attr: &'static str,
    },
    /// An attribute was given that the transition does not accept, or its value is invalid.
    #[error("QP {qpn}: attribute {attr} {why}")]
    BadAttr {
        /// The QP.
        qpn: u32,
        /// Attribute name.
        attr: &'static str,
        /// What is wrong with it.
        why: String,
    },
    /// Posting is not allowed in the QP's current state.
    #[error("QP {qpn}: {op} not allowed in state {state:?}")]
    BadState {
        /// The QP.
        qpn: u32,
        /// The operation.
        op: &'static str,
        /// Current state.
        state: QpState,
    },
    /// The work queue has no room for the WRs.
    #[error("QP {qpn}: {queue} full ({outstanding} of max {max} WRs outstanding, {posting} more posted)")]
    QueueFull {
        /// The QP.
        qpn: u32,
        /// SQ or RQ.
        queue: Queue,
        /// WRs outstanding.
        outstanding: u32,
        /// Queue capacity.
        max: u32,
        /// WRs in the rejected post.
        posting: usize,
    },
    /// A send WR with [`crate::SendFlags::INLINE`] cannot be posted inline.
    #[error("QP {qpn}: inline {op} of {len} bytes refused: {why} (max_inline_data {max_inline})")]
    InlineRefused {
        /// The QP.
        qpn: u32,
        /// ibverbs' name of the WR's opcode.
        op: &'static str,
        /// The WR's length.
        len: u32,
        /// The QP's `max_inline_data`.
        max_inline: u32,
        /// Why.
        why: &'static str,
    },
    /// A scatter/gather entry or CPU access falls outside its MR.
    #[error("MR key {key:#x}: access [{offset}, +{len}) is outside the region of {mr_len} bytes")]
    OutOfBounds {
        /// The MR's lkey.
        key: u32,
        /// Offset into the MR.
        offset: u64,
        /// Length of the access.
        len: u64,
        /// MR length.
        mr_len: u64,
    },
    /// A work request needs an access right its local MR was not registered
    /// with: the NIC writes an RDMA READ's scatter entry, so its MR needs
    /// `LOCAL_WRITE`. Nothing of the post was posted.
    #[error("QP {qpn}: {op} needs {needed:?} on its local MR key {key:#x}, which was registered with {access:?}")]
    MrAccess {
        /// The QP.
        qpn: u32,
        /// The WR's opcode (ibverbs' name).
        op: &'static str,
        /// The MR's lkey.
        key: u32,
        /// The access the WR needs.
        needed: AccessFlags,
        /// The access the MR has.
        access: AccessFlags,
    },
    /// The MR belongs to another protection domain or device than the QP.
    #[error("QP {qpn} (PD {qp_pd}) cannot use MR key {key:#x} of PD {mr_pd}")]
    PdMismatch {
        /// The QP.
        qpn: u32,
        /// QP's PD.
        qp_pd: u32,
        /// MR key.
        key: u32,
        /// MR's PD.
        mr_pd: u32,
    },
    /// A CQ passed to `create_qp` belongs to another device context.
    #[error("CQ {cqn} belongs to another device context")]
    ForeignCq {
        /// The CQ.
        cqn: u32,
    },
    /// The NIC wrote a CQE the library cannot match to a posted WR.
    #[error("CQ {cqn}: CQE for QP {qpn} {queue} index {got:#06x}, but {expected}")]
    BadCqe {
        /// The CQ.
        cqn: u32,
        /// QPN in the CQE.
        qpn: u32,
        /// Queue the CQE opcode designates.
        queue: Queue,
        /// `wqe_index` in the CQE.
        got: u16,
        /// What the library expected.
        expected: String,
    },
    /// A CQ without a completion channel was asked for events.
    #[error("CQ {cqn} has no completion channel (create it with Context::create_cq_with and a CompChannel)")]
    NoChannel {
        /// The CQ.
        cqn: u32,
    },
    /// The NIC or the library does not do what was asked.
    #[error("not supported: {what}")]
    Unsupported {
        /// What was asked.
        what: String,
    },
    /// `get_cq_event` ran out of device time.
    #[error("completion channel on MSI-X vector {vector}: no event after {cycles} cycles ({armed} of its CQs armed)")]
    EventTimeout {
        /// The channel's vector.
        vector: u32,
        /// Cycles waited.
        cycles: u64,
        /// Its CQs armed and not yet reported.
        armed: usize,
    },
    /// `wait_cq` ran out of simulated/device time.
    #[error("CQ {cqn}: timed out after {cycles} cycles with {got} of {wanted} completions; {state}")]
    Timeout {
        /// The CQ.
        cqn: u32,
        /// Completions wanted.
        wanted: usize,
        /// Completions received before the timeout.
        got: usize,
        /// Cycles waited.
        cycles: u64,
        /// State of the QPs on this CQ and the NIC counters.
        state: String,
    },
}

/// Result alias of the library.
pub type Result<T> = std::result::Result<T, Error>;

/// The error of an explicit destroy (`Qp::destroy_qp`, `Mr::dereg_mr`,
/// `Cq::destroy_cq`, `Pd::dealloc_pd`, `Context::close_device`).
///
/// When the object is still in use ([`Error::Busy`]) nothing was torn down
/// and [`DestroyError::into_object`] hands the handle back, fully usable.
/// Any other error happened during the teardown itself: the teardown went
/// on as far as it safely could (as a drop does) and the handle is gone.
/// Dropping the error drops a returned handle, which releases the object
/// best-effort like any drop. `?` converts it into an [`Error`](enum@Error).
pub struct DestroyError<T> {
    error: Error,
    object: Option<T>,
}

impl<T> DestroyError<T> {
    /// Still in use: the handle comes back with the error.
    pub(crate) fn busy(object: T, error: Error) -> Self {
        DestroyError { error, object: Some(object) }
    }

    /// The teardown failed partway; the handle is consumed.
    pub(crate) fn failed(error: Error) -> Self {
        DestroyError { error, object: None }
    }

    /// What went wrong.
    pub fn error(&self) -> &Error {
        &self.error
    }

    /// The handle, exactly when nothing was torn down ([`Error::Busy`]).
    pub fn into_object(self) -> Option<T> {
        self.object
    }

    /// The error and, when nothing was torn down, the handle.
    pub fn into_parts(self) -> (Error, Option<T>) {
        (self.error, self.object)
    }
}

impl<T> From<DestroyError<T>> for Error {
    fn from(e: DestroyError<T>) -> Error {
        e.error
    }
}

impl<T> std::fmt::Debug for DestroyError<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DestroyError")
            .field("error", &self.error)
            .field("handle_returned", &self.object.is_some())
            .finish()
    }
}

impl<T> std::fmt::Display for DestroyError<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

impl<T> std::error::Error for DestroyError<T> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.error)
    }
}
