//! Descriptors shared by host and NIC, little-endian in host memory.

use core::mem::{offset_of, size_of};
use zerocopy::little_endian::{U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// Send WQE opcodes. Bit 0 says SEND (else RDMA WRITE), bit 1 says the
/// message carries immediate data; the RTL decodes these two bits.
pub mod send_op {
    /// RDMA WRITE.
    pub const RDMA_WRITE: u8 = 0;
    /// SEND.
    pub const SEND: u8 = 1;
    /// RDMA WRITE with immediate: consumes a receive WQE at the responder.
    pub const RDMA_WRITE_IMM: u8 = 2;
    /// SEND with immediate.
    pub const SEND_IMM: u8 = 3;
    /// RDMA READ: `length` bytes from `remote_addr`/`rkey` at the responder
    /// into `local_addr`/`lkey`.
    pub const RDMA_READ: u8 = 4;
    /// Bit of the opcode that means SEND.
    pub const SEND_BIT: u8 = 1;
    /// Bit of the opcode that means immediate data.
    pub const IMM_BIT: u8 = 2;
}

/// Send WQE flags ([`SendWqe::flags`]).
pub mod wqe_flags {
    /// The payload travels in the WQE push window's payload words
    /// ([`crate::regs::PUSH_BASE`]); ignored in a WQE read from the ring.
    pub const PUSH_PAYLOAD: u8 = 1;
}

/// A send work queue element: 64 bytes, one datapath beat.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, FromBytes, IntoBytes, KnownLayout, Immutable, PartialEq, Eq)]
pub struct SendWqe {
    /// [`send_op`] value.
    pub opcode: u8,
    /// [`wqe_flags`] bits.
    pub flags: u8,
    /// Reserved.
    pub rsvd0: U16,
    /// Message length in bytes (0 is allowed).
    pub length: U32,
    /// Local virtual address of the payload.
    pub local_addr: U64,
    /// Local MR key.
    pub lkey: U32,
    /// Remote MR key (RDMA WRITE and READ).
    pub rkey: U32,
    /// Remote virtual address (RDMA WRITE and READ).
    pub remote_addr: U64,
    /// Immediate data (opcodes with immediate), delivered in the responder's CQE.
    pub imm: U32,
    /// RSN: the index of the responder's receive WQE this message consumes
    /// (SEND and WRITE with immediate; low 16 bits). The host library counts
    /// it per QP, so the NIC keeps no counter for it; it goes on the wire so a
    /// packet that arrives out of order can find its receive WQE.
    pub rsn: U32,
    /// The gather list's second entry (SEND and WRITE; all zero for none):
    /// the message's last `sge1.length` bytes come from it, its first
    /// `length - sge1.length` from `local_addr`/`lkey`.
    pub sge1: WqeSge,
    /// Reserved.
    pub rsvd1: [u8; 8],
}

/// One scatter entry of a receive WQE: 16 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, FromBytes, IntoBytes, KnownLayout, Immutable, PartialEq, Eq)]
pub struct WqeSge {
    /// Virtual address of the buffer.
    pub addr: U64,
    /// Buffer length in bytes (0: an unused entry, skipped unchecked).
    pub length: U32,
    /// Local MR key of the buffer.
    pub lkey: U32,
}

/// Scatter entries in a receive WQE ([`RecvWqe::sge`]).
pub const RECV_SGES: usize = 4;

/// Entries of a send WQE's gather list: `local_addr`/`lkey` and [`SendWqe::sge1`].
pub const SEND_SGES: usize = 2;

/// A receive work queue element: 64 bytes, one datapath beat, a scatter
/// list of up to [`RECV_SGES`] entries. A message fills them in order;
/// entries of length 0 (the unused ones) are skipped. A WQE whose entries
/// 1.. are all of length 0 is placed as one buffer (the responder caches
/// it per QP); a longer list is fetched again for each packet.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, FromBytes, IntoBytes, KnownLayout, Immutable, PartialEq, Eq)]
pub struct RecvWqe {
    /// The scatter list.
    pub sge: [WqeSge; RECV_SGES],
}

/// CQE opcodes (the values of `ibv_wc_opcode`).
pub mod cqe_op {
    /// A SEND completed at the requester.
    pub const SEND: u8 = 0;
    /// An RDMA WRITE completed at the requester.
    pub const RDMA_WRITE: u8 = 1;
    /// An RDMA READ completed at the requester (its data has landed).
    pub const RDMA_READ: u8 = 2;
    /// A SEND was received into a receive WQE.
    pub const RECV: u8 = 128;
    /// An RDMA WRITE with immediate consumed a receive WQE (`byte_len` is the
    /// length written).
    pub const RECV_RDMA_WITH_IMM: u8 = 129;
    /// What the NIC writes in every requester completion: it does not keep
    /// the WQE's operation, the library reports the one it posted.
    pub const REQUESTER: u8 = SEND;
}

/// CQE flags (`Cqe::flags`).
pub mod cqe_flags {
    /// `imm` holds immediate data (`IBV_WC_WITH_IMM`).
    pub const WITH_IMM: u8 = 1;
}

/// CQE status codes (the values of `ibv_wc_status`).
pub mod cqe_status {
    /// Success.
    pub const SUCCESS: u8 = 0;
    /// Local length error (message longer than the receive buffer).
    pub const LOC_LEN_ERR: u8 = 1;
    /// Local QP operation error: a send WQE whose opcode is not one the host
    /// may post (above [`super::send_op::RDMA_READ`]).
    pub const LOC_QP_OP_ERR: u8 = 2;
    /// Local protection error (bad lkey or address outside the local MR).
    pub const LOC_PROT_ERR: u8 = 4;
    /// Work request flushed because the QP is in the error state.
    pub const WR_FLUSH_ERR: u8 = 5;
    /// Remote invalid request (the responder NAKed the request).
    pub const REM_INV_REQ_ERR: u8 = 9;
    /// Remote access error (bad rkey, bounds, or permission at the responder).
    pub const REM_ACCESS_ERR: u8 = 10;
    /// Remote operation error (e.g. the responder's receive buffer was invalid).
    pub const REM_OP_ERR: u8 = 11;
    /// Transport retry counter exceeded: no ACK progress after `retry_cnt`
    /// retransmission timeouts (the peer is gone or the path is broken).
    /// Reported by the host's slow path, not written by the NIC.
    pub const RETRY_EXC_ERR: u8 = 12;
    /// RNR retry exceeded: the responder had no receive WQE (RNR NAK) more
    /// than `rnr_retry` times. Reported by the host's slow path.
    pub const RNR_RETRY_EXC_ERR: u8 = 13;
}

/// A completion queue entry: 32 bytes. Valid when `owner` equals the pass
/// bit the consumer expects: 1 on the first pass over the ring, 0 on the
/// second, and so on (the ring starts zeroed).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, FromBytes, IntoBytes, KnownLayout, Immutable, PartialEq, Eq)]
pub struct Cqe {
    /// SQ or RQ index (low 16 bits) of the completed WQE.
    pub wqe_index: U16,
    /// [`cqe_status`] value.
    pub status: u8,
    /// [`cqe_op`] value.
    pub opcode: u8,
    /// Local QPN.
    pub qpn: U32,
    /// Bytes received (receive completions). Send completions carry 0 here
    /// and opcode 0: the NIC keeps no per-WQE state (SRNIC's cache-free SQ),
    /// so the library fills opcode and length from the WR it posted at `wqe_index`.
    pub byte_len: U32,
    /// Immediate data (valid with [`cqe_flags::WITH_IMM`]).
    pub imm: U32,
    /// [`cqe_flags`] bits.
    pub flags: u8,
    /// Reserved.
    pub rsvd: [u8; 14],
    /// Owner (pass) bit, written last.
    pub owner: u8,
}

/// CtrlQ entry kinds ([`CtrlqEntry::kind`]).
pub mod ctrlq_kind {
    /// Requester: the peer NAKed a request with a PSN sequence error (it
    /// expected `epsn`; `psn`, `ssn` and `psn_offset` echo the packet it
    /// received instead): a packet before it was lost.
    pub const REQ_NAK_PSN: u8 = 1;
    /// Requester: no ACK for the retransmission timeout
    /// ([`crate::regs::REG_RTO`]) while packets are sent and not
    /// acknowledged; `ssn` is the oldest unacknowledged WQE (lACK), `flags`
    /// the timeouts in a row without an ACK (1..=15, saturating).
    pub const REQ_TIMEOUT: u8 = 2;
    /// Requester: the peer answered with an RNR NAK (no receive WQE posted);
    /// `epsn` is the PSN it expects, `psn`, `ssn` and `psn_offset` name the
    /// packet it refused.
    /// The requester does not fail: the slow path resends after the RNR timer.
    pub const REQ_RNR: u8 = 3;
    /// Responder, software recovery (the QP had no selective-repeat window):
    /// a packet was placed out of order (`psn`, `psn_offset`; `epsn` is the
    /// QP's ePSN), or, with [`resp_report::INORDER`], taken at ePSN
    /// (`epsn` is the ePSN after it). `flags` are [`resp_report`] bits;
    /// `ssn` carries the QP's MSN.
    pub const RESP_OOO: u8 = 4;
    /// Responder: the answer to a software-recovery command
    /// ([`crate::regs::REG_RX_SR_SET`]): `psn` is the command's `TO`,
    /// `psn_offset` its `FROM`, `epsn` the QP's ePSN now; `flags` [`resp_report::APPLIED`] if it
    /// moved ePSN, [`resp_report::EXITED`] if the QP left recovery.
    pub const RESP_SYNC: u8 = 5;
    /// Requester: no ACK for the probe timeout ([`crate::regs::REG_PROBE`],
    /// STrack's probe, about three base RTTs) while packets are sent and not
    /// acknowledged; once until the QP's timer restarts (an ACK that
    /// completes a WQE, or a timeout). `ssn` is the oldest unacknowledged
    /// WQE (lACK), `epsn` the ePSN of the QP's latest ACK, NAK or READ
    /// response, valid if `flags` bit 0 is set (else none came since the
    /// QP's reset). The host resends the packet at `epsn` (STrack's probe:
    /// its ACK carries the SACK the paper's probe asks for).
    pub const REQ_PROBE: u8 = 6;
}

/// [`CtrlqEntry::flags`] of the responder's reports ([`ctrlq_kind::RESP_OOO`],
/// [`ctrlq_kind::RESP_SYNC`]).
pub mod resp_report {
    /// The packet ends its message.
    pub const LAST: u8 = 0x01;
    /// The packet was taken at ePSN (a hole filled), not placed ahead of it.
    pub const INORDER: u8 = 0x02;
    /// The QP left software recovery: ePSN passed every packet it placed
    /// out of order; the host drops its bitmap.
    pub const EXITED: u8 = 0x04;
    /// The command moved ePSN.
    pub const APPLIED: u8 = 0x08;
    /// The packet is a SEND's (not a WRITE's).
    pub const SEND: u8 = 0x10;
}

/// A control queue entry: 32 bytes, written by the NIC at its producer
/// index with the owner bit of the pass (as a [`Cqe`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, FromBytes, IntoBytes, KnownLayout, Immutable, PartialEq, Eq)]
pub struct CtrlqEntry {
    /// [`ctrlq_kind`] value.
    pub kind: u8,
    /// Kind-specific flags: the NAK's [`crate::wire::ack_flags`] for
    /// [`ctrlq_kind::REQ_NAK_PSN`], the timeouts in a row for
    /// [`ctrlq_kind::REQ_TIMEOUT`].
    pub flags: u8,
    /// Local QPN.
    pub qpn: U16,
    /// PSN of the packet the entry is about.
    pub psn: U32,
    /// Expected PSN at the responder (from the NAK).
    pub epsn: U32,
    /// SSN (message sequence number) of that packet.
    pub ssn: U32,
    /// PSN_OFFSET of that packet in its message.
    pub psn_offset: U32,
    /// RSN of that packet; for [`ctrlq_kind::REQ_NAK_PSN`] and
    /// [`ctrlq_kind::REQ_RNR`], the NAK's SACK OOO count (the packets the
    /// responder holds past `epsn`, saturating at 4095).
    pub rsn: U16,
    /// Payload bytes of that packet.
    pub plen: U16,
    /// Immediate data of that packet; for [`ctrlq_kind::REQ_NAK_PSN`] and
    /// [`ctrlq_kind::REQ_RNR`], the low 24 bits of the TX timestamp (the
    /// sender's cycle counter) of the packet the NAK names, as the peer
    /// echoed it.
    pub imm: U32,
    /// Recovery episode; in the responder's reports ([`ctrlq_kind::RESP_OOO`],
    /// [`ctrlq_kind::RESP_SYNC`]), the QP's responder generation: its
    /// responder resets mod 16, so reports of an earlier life of the QPN
    /// can be told apart.
    pub episode: u8,
    /// Reserved.
    pub rsvd: [u8; 2],
    /// Owner (pass) bit, written last.
    pub owner: u8,
}

const _: () = assert!(size_of::<SendWqe>() == 64);
const _: () = assert!(size_of::<RecvWqe>() == 64);
const _: () = assert!(size_of::<WqeSge>() == 16);
const _: () = assert!(size_of::<Cqe>() == 32);

/// Size of a send WQE in bytes.
pub const SEND_WQE_BYTES: usize = size_of::<SendWqe>();
/// Size of a receive WQE in bytes.
pub const RECV_WQE_BYTES: usize = size_of::<RecvWqe>();
/// Size of a CQE in bytes.
pub const CQE_BYTES: usize = size_of::<Cqe>();
/// Size of a CtrlQ entry in bytes.
pub const CTRLQ_ENTRY_BYTES: usize = size_of::<CtrlqEntry>();
const _: () = assert!(CTRLQ_ENTRY_BYTES == 32);

/// Byte offsets the RTL uses to pick fields out of a fetched descriptor beat.
pub mod off {
    use super::*;
    /// [`SendWqe::opcode`].
    pub const SWQE_OPCODE: usize = offset_of!(SendWqe, opcode);
    /// [`SendWqe::flags`].
    pub const SWQE_FLAGS: usize = offset_of!(SendWqe, flags);
    /// [`SendWqe::length`].
    pub const SWQE_LENGTH: usize = offset_of!(SendWqe, length);
    /// [`SendWqe::local_addr`].
    pub const SWQE_LOCAL_ADDR: usize = offset_of!(SendWqe, local_addr);
    /// [`SendWqe::lkey`].
    pub const SWQE_LKEY: usize = offset_of!(SendWqe, lkey);
    /// [`SendWqe::rkey`].
    pub const SWQE_RKEY: usize = offset_of!(SendWqe, rkey);
    /// [`SendWqe::remote_addr`].
    pub const SWQE_REMOTE_ADDR: usize = offset_of!(SendWqe, remote_addr);
    /// [`SendWqe::imm`].
    pub const SWQE_IMM: usize = offset_of!(SendWqe, imm);
    /// [`SendWqe::rsn`].
    pub const SWQE_RSN: usize = offset_of!(SendWqe, rsn);
    /// [`WqeSge::addr`] of a send WQE's second gather entry.
    pub const SWQE_ADDR1: usize = offset_of!(SendWqe, sge1) + offset_of!(WqeSge, addr);
    /// [`WqeSge::length`] of a send WQE's second gather entry.
    pub const SWQE_LEN1: usize = offset_of!(SendWqe, sge1) + offset_of!(WqeSge, length);
    /// [`WqeSge::lkey`] of a send WQE's second gather entry.
    pub const SWQE_LKEY1: usize = offset_of!(SendWqe, sge1) + offset_of!(WqeSge, lkey);
    /// [`WqeSge::addr`] of a receive WQE's first entry.
    pub const RWQE_ADDR: usize = offset_of!(RecvWqe, sge) + offset_of!(WqeSge, addr);
    /// [`WqeSge::length`] of a receive WQE's first entry.
    pub const RWQE_LENGTH: usize = offset_of!(RecvWqe, sge) + offset_of!(WqeSge, length);
    /// [`WqeSge::lkey`] of a receive WQE's first entry.
    pub const RWQE_LKEY: usize = offset_of!(RecvWqe, sge) + offset_of!(WqeSge, lkey);
    /// Bytes from one scatter entry of a receive WQE to the next.
    pub const RWQE_SGE_BYTES: usize = size_of::<WqeSge>();
    /// [`Cqe::wqe_index`].
    pub const CQE_WQE_INDEX: usize = offset_of!(Cqe, wqe_index);
    /// [`Cqe::status`].
    pub const CQE_STATUS: usize = offset_of!(Cqe, status);
    /// [`Cqe::opcode`].
    pub const CQE_OPCODE: usize = offset_of!(Cqe, opcode);
    /// [`Cqe::qpn`].
    pub const CQE_QPN: usize = offset_of!(Cqe, qpn);
    /// [`Cqe::byte_len`].
    pub const CQE_BYTE_LEN: usize = offset_of!(Cqe, byte_len);
    /// [`Cqe::imm`].
    pub const CQE_IMM: usize = offset_of!(Cqe, imm);
    /// [`Cqe::flags`].
    pub const CQE_FLAGS: usize = offset_of!(Cqe, flags);
    /// [`Cqe::owner`].
    pub const CQE_OWNER: usize = offset_of!(Cqe, owner);
    /// [`CtrlqEntry::psn`].
    pub const CTRLQ_PSN: usize = offset_of!(CtrlqEntry, psn);
    /// [`CtrlqEntry::imm`].
    pub const CTRLQ_IMM: usize = offset_of!(CtrlqEntry, imm);
    /// [`CtrlqEntry::owner`].
    pub const CTRLQ_OWNER: usize = offset_of!(CtrlqEntry, owner);
}
