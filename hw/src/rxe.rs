//! The receive side: the responder, the ACK receiver and the completion
//! writer. The responder hands ACKs to the ACK receiver; both send
//! completion requests to the completion writer through a round-robin mux;
//! the responder's placement and the CQE writes share the DMA write port
//! through a mux that gives the (one-beat) CQE writes priority.
//! Its ports are those of the receive engine the core connects; the
//! Verilator top `resp` is this block, so the responder's block test covers
//! the three together.

use crate::ack::{AckRecv, APSN_BITS, SENT_BITS};
use crate::cqw::{CqReqMux, CqWriter};
use crate::desc::{ARM_BITS, LACK_BITS, REW_BITS, RQS_BITS, RXD_BITS, RXS_BITS, SWC_BITS, TXD_BITS};
use crate::dma::DmaWriteMux;
use crate::resp::Responder;
use rnic_spec::params::{CQ_BITS, MR_BITS, QPN_BITS};
use rust_hdl::prelude::*;

/// Responder, ACK receiver and completion writer.
#[derive(LogicBlock, Default)]
pub struct RxEngine {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: every register and FIFO of the block back to its power-on state (block RAM contents are kept).
    pub reset: Signal<In, Bit>,
    /// The core's table scrub after a reset: each table writes zero at `scrub_addr` (the block is held in reset meanwhile).
    pub scrub: Signal<In, Bit>,
    /// The entry the scrub clears this cycle.
    pub scrub_addr: Signal<In, Bits<QPN_BITS>>,
    /// Descriptor FIFO empty.
    pub desc_empty: Signal<In, Bit>,
    /// Descriptor at the FIFO head.
    pub desc_data: Signal<In, Bits<RXD_BITS>>,
    /// Pop the descriptor FIFO.
    pub desc_pop: Signal<Out, Bit>,
    /// Ring read pointer (consumed up to here).
    pub rptr: Signal<Out, Bits<10>>,
    /// Ring read address (data one cycle later).
    pub ring_raddr: Signal<Out, Bits<10>>,
    /// Ring read data.
    pub ring_rdata: Signal<In, Bits<512>>,
    /// Local error FIFO empty.
    pub lerr_empty: Signal<In, Bit>,
    /// Local error at the FIFO head.
    pub lerr_data: Signal<In, Bits<64>>,
    /// Pop the local error FIFO.
    pub lerr_pop: Signal<Out, Bit>,
    /// QPC read address.
    pub qpc_addr: Signal<Out, Bits<QPN_BITS>>,
    /// QPC read data.
    pub qpc_data: Signal<In, Bits<448>>,
    /// RX state read address.
    pub rxs_addr: Signal<Out, Bits<QPN_BITS>>,
    /// RX state read data.
    pub rxs_data: Signal<In, Bits<RXS_BITS>>,
    /// RX state write enable.
    pub rxs_we: Signal<Out, Bit>,
    /// RX state write address.
    pub rxs_waddr: Signal<Out, Bits<QPN_BITS>>,
    /// RX state write data.
    pub rxs_wdata: Signal<Out, Bits<RXS_BITS>>,
    /// RQ producer index read address.
    pub rqpi_addr: Signal<Out, Bits<QPN_BITS>>,
    /// RQ producer index.
    pub rqpi_data: Signal<In, Bits<16>>,
    /// SQ producer index of the same QP (bounds the MSN an ACK may carry).
    pub sqpi_data: Signal<In, Bits<16>>,
    /// MR table read address.
    pub mr_addr: Signal<Out, Bits<MR_BITS>>,
    /// MR table read data.
    pub mr_data: Signal<In, Bits<256>>,
    /// CQ table read address.
    pub cq_addr: Signal<Out, Bits<CQ_BITS>>,
    /// CQ table read data.
    pub cq_data: Signal<In, Bits<128>>,
    /// CQ producer index read address (= `cq_addr`).
    pub cqpi_data: Signal<In, Bits<32>>,
    /// CQ producer index write enable.
    pub cqpi_we: Signal<Out, Bit>,
    /// CQ producer index write data.
    pub cqpi_wdata: Signal<Out, Bits<32>>,
    /// QP error flag write enable (read by the SQ engine).
    pub qperr_we: Signal<Out, Bit>,
    /// QP error flag write address.
    pub qperr_waddr: Signal<Out, Bits<QPN_BITS>>,
    /// lACK table write enable (read by the turn engine).
    pub lack_we: Signal<Out, Bit>,
    /// lACK table write address.
    pub lack_waddr: Signal<Out, Bits<QPN_BITS>>,
    /// lACK table write data (`LackPack`).
    pub lack_wdata: Signal<Out, Bits<LACK_BITS>>,
    /// Requester state table read address (the ACK receiver's lACK table).
    pub rqs_addr: Signal<Out, Bits<QPN_BITS>>,
    /// Requester state read data.
    pub rqs_data: Signal<In, Bits<RQS_BITS>>,
    /// Requester state write enable.
    pub rqs_we: Signal<Out, Bit>,
    /// Requester state write address.
    pub rqs_waddr: Signal<Out, Bits<QPN_BITS>>,
    /// Requester state write data.
    pub rqs_wdata: Signal<Out, Bits<RQS_BITS>>,
    /// Cycle counter.
    pub now: Signal<In, Bits<64>>,
    /// Retransmission timeout in cycles (`REG_RTO`).
    pub rto: Signal<In, Bits<32>>,
    /// Probe timeout in cycles (`REG_PROBE`).
    pub probe_to: Signal<In, Bits<32>>,
    /// Sent-mark read address of the ACK receiver's timeout scan.
    pub tmo_sent_addr: Signal<Out, Bits<QPN_BITS>>,
    /// Sent-mark read data of the timeout scan.
    pub tmo_sent_data: Signal<In, Bits<SENT_BITS>>,
    /// Pulse: a retransmission timeout was reported.
    pub cnt_rto: Signal<Out, Bit>,
    /// Pulse: an ACK found the window engine busy (`AckRecv::cnt_cc_skip`).
    pub cnt_cc_skip: Signal<Out, Bit>,
    /// DMA read request valid (receive WQE).
    pub rd_valid: Signal<Out, Bit>,
    /// DMA read request ready.
    pub rd_ready: Signal<In, Bit>,
    /// DMA read address.
    pub rd_addr: Signal<Out, Bits<64>>,
    /// Receive WQE completion valid.
    pub rwqe_valid: Signal<In, Bit>,
    /// Receive WQE completion data.
    pub rwqe_data: Signal<In, Bits<512>>,
    /// Receive WQE completion ready.
    pub rwqe_ready: Signal<Out, Bit>,
    /// DMA write valid.
    pub wr_valid: Signal<Out, Bit>,
    /// DMA write ready.
    pub wr_ready: Signal<In, Bit>,
    /// DMA write address.
    pub wr_addr: Signal<Out, Bits<64>>,
    /// DMA write data.
    pub wr_data: Signal<Out, Bits<512>>,
    /// DMA write length.
    pub wr_len: Signal<Out, Bits<7>>,
    /// DMA write: lane of the first byte.
    pub wr_lane: Signal<Out, Bits<6>>,
    /// ACK FIFO write.
    pub ack_write: Signal<Out, Bit>,
    /// ACK descriptor.
    pub ack_data: Signal<Out, Bits<TXD_BITS>>,
    /// ACK FIFO full.
    pub ack_full: Signal<In, Bit>,
    /// Pulse: header error (bad QPN, opcode, QP not ready).
    pub cnt_hdr: Signal<Out, Bit>,
    /// Pulse: PSN sequence error NAK sent.
    pub cnt_psn: Signal<Out, Bit>,
    /// Pulse: remote access error NAK sent.
    pub cnt_access: Signal<Out, Bit>,
    /// Pulse: duplicate request.
    pub cnt_dup: Signal<Out, Bit>,
    /// Pulse: RNR NAK sent.
    pub cnt_rnr: Signal<Out, Bit>,
    /// Pulse: NAK received.
    pub cnt_nak: Signal<Out, Bit>,
    /// Pulse: ACK received.
    pub cnt_ack: Signal<Out, Bit>,
    /// Pulse: an ACK or NAK for a WQE never posted (ignored; a header error).
    pub cnt_ack_bad: Signal<Out, Bit>,
    /// Pulse: CQE written.
    pub cnt_cqe: Signal<Out, Bit>,
    /// An MSI-X message is offered (`crate::msix`).
    pub irq_valid: Signal<In, Bit>,
    /// The completion writer takes it.
    pub irq_ready: Signal<Out, Bit>,
    /// The message's address.
    pub irq_addr: Signal<In, Bits<64>>,
    /// The message's data.
    pub irq_data: Signal<In, Bits<32>>,
    /// Pulse: MSI-X message sent.
    pub cnt_irq: Signal<Out, Bit>,
    /// Pulse: a CQE was written to CQ `cq_ev_cqn`.
    pub cq_ev: Signal<Out, Bit>,
    /// The CQ of that CQE.
    pub cq_ev_cqn: Signal<Out, Bits<CQ_BITS>>,
    /// Its vector.
    pub cq_ev_vec: Signal<Out, Bits<3>>,
    /// Its events are on.
    pub cq_ev_on: Signal<Out, Bit>,
    /// CtrlQ ring bus address.
    pub ctrlq_base: Signal<In, Bits<64>>,
    /// The CtrlQ's entries (0: none).
    pub ctrlq_size: Signal<In, Bits<32>>,
    /// The host's CtrlQ consumer index.
    pub ctrlq_ci: Signal<In, Bits<32>>,
    /// Pulse: the CtrlQ was set up again.
    pub ctrlq_reset: Signal<In, Bit>,
    /// Pulse: CtrlQ entry written.
    pub cnt_ctl: Signal<Out, Bit>,
    /// Pulse: CtrlQ event dropped (ring full or not set up).
    pub cnt_ctl_drop: Signal<Out, Bit>,
    /// Between packets, no ACK or completion in progress (the MR fence waits for it).
    pub idle: Signal<Out, Bit>,
    /// Pulse: invalid request NAKed (opcode sequence, lengths, PSN_OFFSET).
    pub cnt_inv: Signal<Out, Bit>,
    /// Pulse: a request placed out of order (selective repeat).
    pub cnt_ooo: Signal<Out, Bit>,
    /// Pulse: a request placed out of order through software recovery (no window was free).
    pub cnt_sw: Signal<Out, Bit>,
    /// Windows of the selective-repeat pool held back (`REG_SR_POOL_HOLD`).
    pub sr_pool_hold: Signal<In, Bits<8>>,
    /// A software-recovery command (`SwCmdPack`).
    pub swc_valid: Signal<In, Bit>,
    /// The command word.
    pub swc_data: Signal<In, Bits<SWC_BITS>>,
    /// Pulse: a command found the queue full and was dropped.
    pub swc_drop: Signal<Out, Bit>,
    /// QP commit: reset request valid.
    pub rst_valid: Signal<In, Bit>,
    /// QP commit: `{epsn[33:10], reset_req[9], reset_resp[8], qpn[7:0]}`.
    pub rst_data: Signal<In, Bits<40>>,
    /// QP commit: the QP's number of entropies (`qpc::MAX_PATHS`).
    pub rst_max_paths: Signal<In, Bits<9>>,
    /// QP commit: the QP's congestion window is on (`qpc::CC`).
    pub rst_cc_on: Signal<In, Bit>,
    /// QP commit: the QP sprays obliviously (`qpc::SPRAY_OBLIVIOUS`).
    pub rst_oblivious: Signal<In, Bit>,
    /// QP commit: the QP's window is DCTCP's (`qpc::CC_DCTCP`).
    pub rst_dctcp: Signal<In, Bit>,
    /// The ACK receiver's request to the window engine (`AckRecv::cc_valid`).
    pub cc_valid: Signal<Out, Bit>,
    /// The window engine takes it.
    pub cc_ready: Signal<In, Bit>,
    /// Its QP.
    pub cc_qpn: Signal<Out, Bits<QPN_BITS>>,
    /// `cc::OP_INIT` or `cc::OP_ACK`.
    pub cc_op: Signal<Out, Bit>,
    /// Now, ns.
    pub cc_now: Signal<Out, Bits<32>>,
    /// ACK: CE echoed.
    pub cc_ecn: Signal<Out, Bit>,
    /// ACK: RTT, ns.
    pub cc_rtt: Signal<Out, Bits<32>>,
    /// ACK: SACK bytes received; init: 0.
    pub cc_bytes: Signal<Out, Bits<32>>,
    /// Init: the window is on.
    pub cc_on: Signal<Out, Bit>,
    /// Init: the window is DCTCP's.
    pub cc_dctcp: Signal<Out, Bit>,
    /// ACK: its ePSN.
    pub cc_epsn: Signal<Out, Bits<24>>,
    /// The ACK receiver's request to the path selector (`AckRecv::spray_valid`).
    pub spray_valid: Signal<Out, Bit>,
    /// The path selector takes it.
    pub spray_ready: Signal<In, Bit>,
    /// Its QP.
    pub spray_qpn: Signal<Out, Bits<QPN_BITS>>,
    /// `spray::OP_ACK` or `spray::OP_RESET`.
    pub spray_op: Signal<Out, Bits<2>>,
    /// ACK: ECN-marked.
    pub spray_ecn: Signal<Out, Bit>,
    /// ACK: the echoed entropy.
    pub spray_path: Signal<Out, Bits<8>>,
    /// Reset: the number of entropies.
    pub spray_max_paths: Signal<Out, Bits<9>>,
    /// (`AckRecv::spray_oblivious`)
    pub spray_oblivious: Signal<Out, Bit>,
    /// Acknowledged-PSN table write (`AckRecv::apsn_we`).
    pub apsn_we: Signal<Out, Bit>,
    /// Its QP.
    pub apsn_waddr: Signal<Out, Bits<QPN_BITS>>,
    /// The ePSN an ACK or NAK carried.
    pub apsn_wdata: Signal<Out, Bits<APSN_BITS>>,
    /// The send path sent a READ request (`ArmPack`).
    pub arm_write: Signal<In, Bit>,
    /// The arm word.
    pub arm_data: Signal<In, Bits<ARM_BITS>>,
    /// The arm queue is full.
    pub arm_full: Signal<Out, Bit>,
    /// A READ response job for the send path (`RewindPack`).
    pub job_write: Signal<Out, Bit>,
    /// The job word.
    pub job_data: Signal<Out, Bits<REW_BITS>>,
    /// The send path's job queue is full.
    pub job_full: Signal<In, Bit>,
    /// Job sequence table write (`Responder::jseq_we`).
    pub jseq_we: Signal<Out, Bit>,
    /// Its address.
    pub jseq_waddr: Signal<Out, Bits<QPN_BITS>>,
    /// Its data.
    pub jseq_wdata: Signal<Out, Bits<3>>,
    resp: Responder,
    ack: AckRecv,
    cqmux: CqReqMux,
    cqw: CqWriter,
    wrmux: DmaWriteMux,
}

impl Logic for RxEngine {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, resp, ack, cqmux, cqw);
        self.resp.reset.next = self.reset.val();
        self.ack.reset.next = self.reset.val();
        self.cqmux.reset.next = self.reset.val();
        self.cqw.reset.next = self.reset.val();
        self.resp.desc_empty.next = self.desc_empty.val();
        self.resp.desc_data.next = self.desc_data.val();
        self.desc_pop.next = self.resp.desc_pop.val();
        self.rptr.next = self.resp.rptr.val();
        self.ring_raddr.next = self.resp.ring_raddr.val();
        self.resp.ring_rdata.next = self.ring_rdata.val();
        self.qpc_addr.next = self.resp.qpc_addr.val();
        self.resp.qpc_data.next = self.qpc_data.val();
        self.rxs_addr.next = self.resp.rxs_addr.val();
        self.resp.rxs_data.next = self.rxs_data.val();
        self.rxs_we.next = self.resp.rxs_we.val();
        self.rxs_waddr.next = self.resp.rxs_waddr.val();
        self.rxs_wdata.next = self.resp.rxs_wdata.val();
        self.rqpi_addr.next = self.resp.rqpi_addr.val();
        self.resp.rqpi_data.next = self.rqpi_data.val();
        self.resp.sqpi_data.next = self.sqpi_data.val();
        self.mr_addr.next = self.resp.mr_addr.val();
        self.resp.mr_data.next = self.mr_data.val();
        self.rd_valid.next = self.resp.rd_valid.val();
        self.resp.rd_ready.next = self.rd_ready.val();
        self.rd_addr.next = self.resp.rd_addr.val();
        self.resp.rwqe_valid.next = self.rwqe_valid.val();
        self.resp.rwqe_data.next = self.rwqe_data.val();
        self.rwqe_ready.next = self.resp.rwqe_ready.val();
        self.ack_write.next = self.resp.ack_write.val();
        self.ack_data.next = self.resp.ack_data.val();
        self.resp.ack_full.next = self.ack_full.val();
        self.cnt_hdr.next = self.resp.cnt_hdr.val();
        self.cnt_psn.next = self.resp.cnt_psn.val();
        self.cnt_access.next = self.resp.cnt_access.val();
        self.cnt_dup.next = self.resp.cnt_dup.val();
        self.cnt_rnr.next = self.resp.cnt_rnr.val();
        self.cnt_ack.next = self.resp.cnt_ack.val();
        self.cnt_inv.next = self.resp.cnt_inv.val();
        self.cnt_ooo.next = self.resp.cnt_ooo.val();
        self.cnt_sw.next = self.resp.cnt_sw.val();
        self.resp.swc_valid.next = self.swc_valid.val();
        self.resp.sr_pool_hold.next = self.sr_pool_hold.val();
        self.resp.swc_data.next = self.swc_data.val();
        self.swc_drop.next = self.resp.swc_drop.val();
        self.resp.rst_valid.next = self.rst_valid.val();
        self.resp.rst_data.next = self.rst_data.val();
        self.resp.arm_write.next = self.arm_write.val();
        self.resp.arm_data.next = self.arm_data.val();
        self.arm_full.next = self.resp.arm_full.val();
        self.job_write.next = self.resp.job_write.val();
        self.job_data.next = self.resp.job_data.val();
        self.resp.job_full.next = self.job_full.val();
        self.jseq_we.next = self.resp.jseq_we.val();
        self.jseq_waddr.next = self.resp.jseq_waddr.val();
        self.jseq_wdata.next = self.resp.jseq_wdata.val();
        // ACK receiver: ACKs from the responder, the send path's local errors, requester resets.
        self.ack.ack_valid.next = self.resp.ackr_valid.val();
        self.ack.ack_data.next = self.resp.ackr_data.val();
        self.resp.ackr_ready.next = self.ack.ack_ready.val();
        self.ack.lerr_empty.next = self.lerr_empty.val();
        self.ack.lerr_data.next = self.lerr_data.val();
        self.lerr_pop.next = self.ack.lerr_pop.val();
        self.ack.rst_valid.next = self.rst_valid.val() & self.rst_data.val().get_bit(9);
        self.ack.rst_qpn.next = self.rst_data.val().get_bits::<QPN_BITS>(0);
        self.ack.rst_max_paths.next = self.rst_max_paths.val();
        self.ack.rst_cc_on.next = self.rst_cc_on.val();
        self.ack.rst_oblivious.next = self.rst_oblivious.val();
        self.ack.rst_dctcp.next = self.rst_dctcp.val();
        self.cc_valid.next = self.ack.cc_valid.val();
        self.ack.cc_ready.next = self.cc_ready.val();
        self.cc_qpn.next = self.ack.cc_qpn.val();
        self.cc_op.next = self.ack.cc_op.val();
        self.cc_now.next = self.ack.cc_now.val();
        self.cc_ecn.next = self.ack.cc_ecn.val();
        self.cc_rtt.next = self.ack.cc_rtt.val();
        self.cc_bytes.next = self.ack.cc_bytes.val();
        self.cc_on.next = self.ack.cc_on.val();
        self.cc_dctcp.next = self.ack.cc_dctcp.val();
        self.cc_epsn.next = self.ack.cc_epsn.val();
        self.spray_valid.next = self.ack.spray_valid.val();
        self.ack.spray_ready.next = self.spray_ready.val();
        self.spray_qpn.next = self.ack.spray_qpn.val();
        self.spray_op.next = self.ack.spray_op.val();
        self.spray_ecn.next = self.ack.spray_ecn.val();
        self.spray_path.next = self.ack.spray_path.val();
        self.spray_max_paths.next = self.ack.spray_max_paths.val();
        self.spray_oblivious.next = self.ack.spray_oblivious.val();
        self.apsn_we.next = self.ack.apsn_we.val();
        self.apsn_waddr.next = self.ack.apsn_waddr.val();
        self.apsn_wdata.next = self.ack.apsn_wdata.val();
        self.rqs_addr.next = self.ack.rqs_addr.val();
        self.ack.rqs_data.next = self.rqs_data.val();
        self.rqs_we.next = self.ack.rqs_we.val();
        self.rqs_waddr.next = self.ack.rqs_waddr.val();
        self.rqs_wdata.next = self.ack.rqs_wdata.val();
        self.qperr_we.next = self.ack.qperr_we.val();
        self.qperr_waddr.next = self.ack.qperr_waddr.val();
        self.lack_we.next = self.ack.lack_we.val();
        self.lack_waddr.next = self.ack.lack_waddr.val();
        self.lack_wdata.next = self.ack.lack_wdata.val();
        self.cnt_nak.next = self.ack.cnt_nak.val();
        self.ack.now.next = self.now.val();
        self.ack.rto.next = self.rto.val();
        self.ack.probe_to.next = self.probe_to.val();
        self.tmo_sent_addr.next = self.ack.sent_addr.val();
        self.ack.sent_data.next = self.tmo_sent_data.val();
        self.cnt_rto.next = self.ack.cnt_rto.val();
        self.cnt_cc_skip.next = self.ack.cnt_cc_skip.val();
        self.cnt_ack_bad.next = self.ack.cnt_bad.val();
        // Completion requests: receive completions and requester completions.
        self.cqmux.a_valid.next = self.resp.cqr_valid.val();
        self.cqmux.a_data.next = self.resp.cqr_data.val();
        self.resp.cqr_ready.next = self.cqmux.a_ready.val();
        self.cqmux.b_valid.next = self.ack.cqr_valid.val();
        self.cqmux.b_data.next = self.ack.cqr_data.val();
        self.ack.cqr_ready.next = self.cqmux.b_ready.val();
        self.cqw.req_valid.next = self.cqmux.valid.val();
        self.cqw.req_data.next = self.cqmux.data.val();
        self.cqmux.ready.next = self.cqw.req_ready.val();
        self.cq_addr.next = self.cqw.cq_addr.val();
        self.cqw.cq_data.next = self.cq_data.val();
        self.cqw.cqpi_data.next = self.cqpi_data.val();
        self.cqpi_we.next = self.cqw.cqpi_we.val();
        self.cqpi_wdata.next = self.cqw.cqpi_wdata.val();
        self.cnt_cqe.next = self.cqw.cnt_cqe.val();
        self.cqw.irq_valid.next = self.irq_valid.val();
        self.irq_ready.next = self.cqw.irq_ready.val();
        self.cqw.irq_addr.next = self.irq_addr.val();
        self.cqw.irq_data.next = self.irq_data.val();
        self.cnt_irq.next = self.cqw.cnt_irq.val();
        self.cq_ev.next = self.cqw.ev.val();
        self.cq_ev_cqn.next = self.cqw.ev_cqn.val();
        self.cq_ev_vec.next = self.cqw.ev_vec.val();
        self.cq_ev_on.next = self.cqw.ev_on.val();
        // CtrlQ: the ACK receiver's reports.
        self.cqw.ctl_valid.next = self.ack.ctl_valid.val();
        self.cqw.ctl_data.next = self.ack.ctl_data.val();
        self.ack.ctl_ready.next = self.cqw.ctl_ready.val();
        self.cqw.ctrlq_base.next = self.ctrlq_base.val();
        self.cqw.ctrlq_size.next = self.ctrlq_size.val();
        self.cqw.ctrlq_ci.next = self.ctrlq_ci.val();
        self.cqw.ctrlq_reset.next = self.ctrlq_reset.val();
        self.cnt_ctl.next = self.cqw.cnt_ctl.val();
        self.cnt_ctl_drop.next = self.cqw.cnt_ctl_drop.val();
        // DMA writes: CQEs and placement.
        self.wrmux.cq_valid.next = self.cqw.wr_valid.val();
        self.wrmux.cq_addr.next = self.cqw.wr_addr.val();
        self.wrmux.cq_data.next = self.cqw.wr_data.val();
        self.wrmux.cq_len.next = self.cqw.wr_len.val();
        self.cqw.wr_ready.next = self.wrmux.cq_ready.val();
        self.wrmux.rsp_valid.next = self.resp.wr_valid.val();
        self.wrmux.rsp_addr.next = self.resp.wr_addr.val();
        self.wrmux.rsp_data.next = self.resp.wr_data.val();
        self.wrmux.rsp_len.next = self.resp.wr_len.val();
        self.wrmux.rsp_lane.next = self.resp.wr_lane.val();
        self.resp.wr_ready.next = self.wrmux.rsp_ready.val();
        self.wr_valid.next = self.wrmux.wr_valid.val();
        self.wrmux.wr_ready.next = self.wr_ready.val();
        self.wr_addr.next = self.wrmux.wr_addr.val();
        self.wr_data.next = self.wrmux.wr_data.val();
        self.wr_len.next = self.wrmux.wr_len.val();
        self.wr_lane.next = self.wrmux.wr_lane.val();
        self.idle.next = self.resp.idle.val() & self.ack.idle.val() & self.cqw.idle.val();
        self.resp.scrub.next = self.scrub.val();
        self.resp.scrub_addr.next = self.scrub_addr.val();
        self.ack.scrub.next = self.scrub.val();
        self.ack.scrub_addr.next = self.scrub_addr.val();
    }
}
