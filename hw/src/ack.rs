//! ACK receiver: the requester's completions.
//!
//! The responder checks an ACK frame's QPN and source (only the QP's peer
//! may acknowledge its requests) and hands it over as an [`AckInPack`] word:
//! QPN, MSN, AETH syndrome, the QP's send CQ and SQ producer index. Per QP
//! the receiver keeps lACK, the SSN up to which WQEs are completed
//! (`acked`), and whether the requester failed (`err`), in its own table.
//! An ACK completes every WQE from lACK up to its MSN, one completion
//! request per WQE, in order. A NAK (but a PSN sequence NAK) or an RNR NAK
//! completes the WQE it names with the matching error, fails the requester
//! and raises the QP's error flag, which stops the SQ engine. An ACK that
//! would complete WQEs never posted is ignored and counted; a stale one
//! (behind lACK) is ignored. The send path's local errors (a WQE whose lkey
//! failed) complete here too, so every requester completion of a QP comes
//! from one block, in order.
//!
//! A PSN sequence NAK (a request packet was lost or overtaken) is reported
//! to the host's slow path as a CtrlQ entry through the completion writer.
//!
//! Partial: nothing is retransmitted yet (selective repeat comes with the
//! loss-recovery work); an RNR NAK fails the WQE instead of retrying.
//!
//! [`AckInPack`]: crate::desc::AckInPack

use crate::desc::{
    AckInUnpack, CqReqPack, CtlReqPack, ErrUnpack, ReqStatePack, ReqStateUnpack, ACKIN_BITS, CQR_BITS, CTLR_BITS,
};
use crate::num::Num;
use rnic_spec::desc::{cqe_op, cqe_status, ctrlq_kind};
use rnic_spec::params::QPN_BITS;
use rnic_spec::wire::syndrome;
use rust_hdl::prelude::*;

#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
enum AckState {
    Idle,
    Reset,
    Look,
    Load,
    Proc,
    CqeAcked,
    CqeNakd,
    Save,
    CqeLocalErr,
    CtlNak,
}

/// The ACK receiver.
#[derive(LogicBlock, Default)]
pub struct AckRecv {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// An ACK from the responder (`AckInPack`).
    pub ack_valid: Signal<In, Bit>,
    /// The ACK word.
    pub ack_data: Signal<In, Bits<ACKIN_BITS>>,
    /// The ACK is taken.
    pub ack_ready: Signal<Out, Bit>,
    /// Local error FIFO empty.
    pub lerr_empty: Signal<In, Bit>,
    /// Local error at the FIFO head.
    pub lerr_data: Signal<In, Bits<64>>,
    /// Pop the local error FIFO.
    pub lerr_pop: Signal<Out, Bit>,
    /// QP commit with a requester reset.
    pub rst_valid: Signal<In, Bit>,
    /// QPN of the reset.
    pub rst_qpn: Signal<In, Bits<QPN_BITS>>,
    /// Requester state table read address.
    pub rqs_addr: Signal<Out, Bits<QPN_BITS>>,
    /// Requester state read data (`ReqStatePack`, one cycle after the address).
    pub rqs_data: Signal<In, Bits<32>>,
    /// Requester state write enable.
    pub rqs_we: Signal<Out, Bit>,
    /// Requester state write address.
    pub rqs_waddr: Signal<Out, Bits<QPN_BITS>>,
    /// Requester state write data.
    pub rqs_wdata: Signal<Out, Bits<32>>,
    /// Completion request to the completion writer.
    pub cqr_valid: Signal<Out, Bit>,
    /// The completion writer took the request.
    pub cqr_ready: Signal<In, Bit>,
    /// The request (`CqReqPack`).
    pub cqr_data: Signal<Out, Bits<CQR_BITS>>,
    /// QP error flag write enable (read by the SQ engine).
    pub qperr_we: Signal<Out, Bit>,
    /// QP error flag write address.
    pub qperr_waddr: Signal<Out, Bits<QPN_BITS>>,
    /// A CtrlQ entry request (PSN sequence NAKs) to the completion writer.
    pub ctl_valid: Signal<Out, Bit>,
    /// The completion writer took it.
    pub ctl_ready: Signal<In, Bit>,
    /// The request (`CtlReqPack`).
    pub ctl_data: Signal<Out, Bits<CTLR_BITS>>,
    /// Pulse: NAK received.
    pub cnt_nak: Signal<Out, Bit>,
    /// Pulse: an ACK or NAK for a WQE never posted (ignored).
    pub cnt_bad: Signal<Out, Bit>,
    /// Nothing in progress or queued (a queued word shows two cycles after it is taken).
    pub idle: Signal<Out, Bit>,
    ackq: SynchronousFIFO<Bits<ACKIN_BITS>, 2, 3, 1>,
    rstq: SynchronousFIFO<Bits<QPN_BITS>, 3, 4, 1>,
    state: DFF<AckState>,
    word: DFF<Bits<ACKIN_BITS>>,
    rst_q: DFF<Bits<QPN_BITS>>,
    rs: DFF<Bits<32>>,
    cqr: CqReqPack,
    ctl: CtlReqPack,
    kind_req_nak_psn: Num<{ ctrlq_kind::REQ_NAK_PSN as u64 }, 8>,
    cq_num: DFF<Bits<16>>,
    c_idx: DFF<Bits<16>>,
    c_status: DFF<Bits<8>>,
    c_qpn: DFF<Bits<QPN_BITS>>,
    au: AckInUnpack,
    ru: ReqStateUnpack,
    reqp: ReqStatePack,
    eu: ErrUnpack,
    /// MSN − lACK: how many WQEs the ACK completes (bit 23 set: stale).
    ack_dist: Signal<Local, Bits<24>>,
    posted16: Signal<Local, Bits<16>>,
    posted: Signal<Local, Bits<24>>,
    syn_class: Signal<Local, Bits<3>>,
    syn_nak_psn_seq: Num<{ syndrome::NAK_PSN_SEQ as u64 }, 8>,
    syn_nak_rem_access: Num<{ syndrome::NAK_REM_ACCESS as u64 }, 8>,
    syn_nak_rem_op: Num<{ syndrome::NAK_REM_OP as u64 }, 8>,
    /// AETH syndrome classes (bits 7:5): ACK, RNR NAK, NAK.
    class_ack: Num<{ (syndrome::ACK >> 5) as u64 }, 3>,
    class_rnr: Num<{ (syndrome::RNR_NAK >> 5) as u64 }, 3>,
    class_nak: Num<{ (syndrome::NAK_PSN_SEQ >> 5) as u64 }, 3>,
    st_success: Num<{ cqe_status::SUCCESS as u64 }, 8>,
    st_rem_inv_req_err: Num<{ cqe_status::REM_INV_REQ_ERR as u64 }, 8>,
    st_rem_access_err: Num<{ cqe_status::REM_ACCESS_ERR as u64 }, 8>,
    st_rem_op_err: Num<{ cqe_status::REM_OP_ERR as u64 }, 8>,
    st_rnr_retry_exc_err: Num<{ cqe_status::RNR_RETRY_EXC_ERR as u64 }, 8>,
    cqe_op_requester: Num<{ cqe_op::REQUESTER as u64 }, 8>,
}

impl Logic for AckRecv {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, state, word, rst_q, rs, cq_num, c_idx, c_status, c_qpn);
        clock!(self, clock, ackq, rstq);
        self.ackq.write.next = self.ack_valid.val() & !self.ackq.full.val();
        self.ackq.data_in.next = self.ack_data.val();
        self.ack_ready.next = !self.ackq.full.val();
        self.ackq.read.next = false;
        self.rstq.write.next = self.rst_valid.val();
        self.rstq.data_in.next = self.rst_qpn.val();
        self.rstq.read.next = false;
        self.au.pword.next = self.word.q.val();
        self.ru.pword.next = self.rs.q.val();
        self.eu.pword.next = self.lerr_data.val();
        self.reqp.acked.next = self.ru.acked.val() + 1;
        self.reqp.err.next = self.ru.err.val();
        self.reqp.rsvd.next = 0.into();
        self.ack_dist.next = self.au.msn.val() - self.ru.acked.val();
        // WQEs posted and not yet completed, in the PI's 16 bits (Verilog would widen the difference).
        self.posted16.next = self.au.sq_pi.val() - self.ru.acked.val().get_bits::<16>(0);
        self.posted.next = bit_cast::<24, 16>(self.posted16.val());
        self.syn_class.next = self.au.syndrome.val().get_bits::<3>(5);
        self.rqs_addr.next = self.au.qpn.val();
        self.rqs_we.next = false;
        self.rqs_waddr.next = self.au.qpn.val();
        self.rqs_wdata.next = self.rs.q.val();
        self.qperr_we.next = false;
        self.qperr_waddr.next = self.au.qpn.val();
        self.lerr_pop.next = false;
        self.cnt_nak.next = false;
        self.cnt_bad.next = false;
        self.cqr.cqn.next = self.cq_num.q.val();
        self.cqr.idx.next = self.c_idx.q.val();
        self.cqr.status.next = self.c_status.q.val();
        self.cqr.op.next = self.cqe_op_requester.val();
        self.cqr.len.next = 0.into();
        self.cqr.qpn.next = self.c_qpn.q.val();
        self.cqr.imm.next = 0.into();
        self.cqr.flags.next = 0.into();
        self.cqr_data.next = self.cqr.pword.val();
        self.cqr_valid.next = false;
        // A PSN sequence NAK's report for the host's slow path (CtrlQ).
        self.ctl.kind.next = self.kind_req_nak_psn.val();
        self.ctl.flags.next = 0.into();
        self.ctl.qpn.next = self.au.qpn.val();
        self.ctl.psn.next = self.au.psn.val();
        self.ctl.epsn.next = self.au.epsn.val();
        self.ctl.ssn.next = self.au.ssn.val();
        self.ctl.psn_offset.next = self.au.psn_offset.val();
        self.ctl.rsn.next = 0.into();
        self.ctl.plen.next = 0.into();
        self.ctl.imm.next = 0.into();
        self.ctl.episode.next = 0.into();
        self.ctl_data.next = self.ctl.pword.val();
        self.ctl_valid.next = false;
        self.idle.next = (self.state.q.val() == AckState::Idle) & self.ackq.empty.val() & self.rstq.empty.val();
        match self.state.q.val() {
            AckState::Idle => {
                if !self.rstq.empty.val() {
                    self.rst_q.d.next = self.rstq.data_out.val();
                    self.rstq.read.next = true;
                    self.state.d.next = AckState::Reset;
                } else if !self.lerr_empty.val() {
                    self.lerr_pop.next = true;
                    self.cq_num.d.next = self.eu.cqn.val();
                    self.c_idx.d.next = self.eu.ssn.val().get_bits::<16>(0);
                    self.c_status.d.next = self.eu.status.val();
                    self.c_qpn.d.next = self.eu.qpn.val();
                    self.state.d.next = AckState::CqeLocalErr;
                } else if !self.ackq.empty.val() {
                    self.word.d.next = self.ackq.data_out.val();
                    self.ackq.read.next = true;
                    self.state.d.next = AckState::Look;
                }
            }
            AckState::Reset => {
                // A requester reset: lACK 0, not failed.
                self.rqs_we.next = true;
                self.rqs_waddr.next = self.rst_q.q.val();
                self.rqs_wdata.next = 0.into();
                self.state.d.next = AckState::Idle;
            }
            AckState::Look => {
                // The table address is presented now; the word is read next cycle.
                self.state.d.next = AckState::Load;
            }
            AckState::Load => {
                self.rs.d.next = self.rqs_data.val();
                self.cq_num.d.next = self.au.cqn.val();
                self.c_qpn.d.next = self.au.qpn.val();
                self.state.d.next = AckState::Proc;
            }
            AckState::Proc => {
                // Complete every WQE the MSN covers, one request per pass.
                self.c_idx.d.next = self.ru.acked.val().get_bits::<16>(0);
                self.c_status.d.next = self.st_success.val();
                if self.ru.err.val().any() | self.ack_dist.val().get_bit(23) {
                    // Failed requester, or a stale ACK (behind lACK).
                    self.state.d.next = AckState::Idle;
                } else if (self.ack_dist.val() > self.posted.val())
                    | ((self.ack_dist.val() == self.posted.val()) & (self.syn_class.val() != self.class_ack.val()))
                {
                    // Acknowledges (or NAKs) a WQE never posted: bad input, ignored.
                    self.cnt_bad.next = true;
                    self.state.d.next = AckState::Idle;
                } else if self.ru.acked.val() != self.au.msn.val() {
                    self.rs.d.next = self.reqp.pword.val();
                    self.state.d.next = AckState::CqeAcked;
                } else if (self.syn_class.val() == self.class_nak.val())
                    & (self.au.syndrome.val() != self.syn_nak_psn_seq.val())
                {
                    self.cnt_nak.next = true;
                    self.c_status.d.next = self.st_rem_inv_req_err.val();
                    if self.au.syndrome.val() == self.syn_nak_rem_access.val() {
                        self.c_status.d.next = self.st_rem_access_err.val();
                    }
                    if self.au.syndrome.val() == self.syn_nak_rem_op.val() {
                        self.c_status.d.next = self.st_rem_op_err.val();
                    }
                    self.reqp.err.next = 1.into();
                    self.rs.d.next = self.reqp.pword.val();
                    self.qperr_we.next = true;
                    self.state.d.next = AckState::CqeNakd;
                } else if self.syn_class.val() == self.class_rnr.val() {
                    // RNR: retry is not implemented; fail the WQE.
                    self.cnt_nak.next = true;
                    self.c_status.d.next = self.st_rnr_retry_exc_err.val();
                    self.reqp.err.next = 1.into();
                    self.rs.d.next = self.reqp.pword.val();
                    self.qperr_we.next = true;
                    self.state.d.next = AckState::CqeNakd;
                } else {
                    self.state.d.next = AckState::Save;
                    if self.syn_class.val() == self.class_nak.val() {
                        self.cnt_nak.next = true;
                        self.state.d.next = AckState::CtlNak;
                    }
                }
            }
            // Each completion waits until the completion writer takes it.
            AckState::CqeAcked => {
                self.cqr_valid.next = true;
                if self.cqr_ready.val() {
                    self.state.d.next = AckState::Proc;
                }
            }
            AckState::CqeNakd => {
                self.cqr_valid.next = true;
                if self.cqr_ready.val() {
                    self.state.d.next = AckState::Save;
                }
            }
            AckState::Save => {
                self.rqs_we.next = true;
                self.state.d.next = AckState::Idle;
            }
            AckState::CtlNak => {
                self.ctl_valid.next = true;
                if self.ctl_ready.val() {
                    self.state.d.next = AckState::Save;
                }
            }
            AckState::CqeLocalErr => {
                self.cqr_valid.next = true;
                if self.cqr_ready.val() {
                    self.state.d.next = AckState::Idle;
                }
            }
            _ => {
                self.state.d.next = AckState::Idle;
            }
        }
    }
}
