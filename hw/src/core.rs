//! The core's top level: register port, DMA port, network frame ports.

use crate::ack::{APSN_BITS, SENT_BITS};
use crate::cc::CcEngine;
use crate::desc::{RewindPack, SqStateUnpack, SwCmdPack, LACK_BITS, RQS_BITS, RXD_BITS, RXS_BITS, TXD_BITS};
use crate::dma::DmaReadMux;
use crate::fence::MrFence;
use crate::fifo::Fifo;
use crate::gather::GatherJoin;
use crate::msix::Msix;
use crate::num::Num;
use crate::pcie_rd::PcieReadFront;
use crate::pcie_wr::PcieWriteFront;
use crate::reg::Reg;
use crate::regs::Regs;
use crate::rxe::RxEngine;
use crate::rxin::RxIn;
use crate::spray::{SprayEngine, OP_CHOOSE};
use crate::sq::SqEngine;
use crate::table::Table;
use crate::txb::TxBuilder;
use rnic_spec::params::{CQ_BITS, MR_BITS, QPN_BITS};
use rust_hdl::prelude::*;

// The rewind's staging-word layout is read with literal offsets above.
// The scrub walks QPN_BITS of address; the MR and CQ tables are no deeper.
const _: () = assert!(MR_BITS <= QPN_BITS && CQ_BITS <= QPN_BITS);
const _: () = assert!(
    rnic_spec::regs::rewind::SSN.bit() == 0
        && rnic_spec::regs::rewind::PSN.bit() == 32
        && rnic_spec::regs::rewind::MSG_OFF.bit() == 64
        && rnic_spec::regs::rewind::MSG_OFF.width == 32
        && rnic_spec::regs::rewind::ONE.bit() == 63
        && rnic_spec::regs::rewind::WQE_WORD == 2
        && rnic_spec::regs::rx_sr::FROM.bit() == 0
        && rnic_spec::regs::rx_sr::TO.bit() == 32
        && rnic_spec::regs::rx_sr::ENDS.bit() == 64
        && rnic_spec::regs::rx_sr::ENDS.width == 16
        && rnic_spec::regs::rx_sr::PKTS.bit() == 96
        && rnic_spec::regs::rx_sr::SEND.bit() == 127
        && rnic_spec::regs::rx_sr::GEN.bit() == 120
        && rnic_spec::regs::rx_sr::GEN.width == 4
        && rnic_spec::regs::qpc::MAX_PATHS.bit() == 304
        && rnic_spec::regs::qpc::SQ_PSN.bit() == 384
        && rnic_spec::regs::qpc::CC.bit() == 313
        && rnic_spec::regs::qpc::SPRAY_OBLIVIOUS.bit() == 314
        && rnic_spec::regs::qpc::CC_DCTCP.bit() == 315
        && rnic_spec::regs::cc_params::DCTCP_G.bit() == 392
        && rnic_spec::regs::cc_params::DCTCP_G.width == 4
        && rnic_spec::regs::cc_params::DCTCP_MTU.bit() == 400
        && rnic_spec::regs::cc_params::DCTCP_MTU.width == 16
        && rnic_spec::regs::cc_params::INIT_CWND.bit() == 416
        && rnic_spec::regs::qpc::PMTU_LOG2.bit() == 4
        && rnic_spec::regs::cc_params::BASE_RTT.bit() == 0
        && rnic_spec::regs::cc_params::TARGET.bit() == 32
        && rnic_spec::regs::cc_params::QHIGH.bit() == 64
        && rnic_spec::regs::cc_params::MIN_CWND.bit() == 96
        && rnic_spec::regs::cc_params::MAX_CWND.bit() == 128
        && rnic_spec::regs::cc_params::GAMMA.bit() == 160
        && rnic_spec::regs::cc_params::BETA.bit() == 192
        && rnic_spec::regs::cc_params::ETA.bit() == 256
        && rnic_spec::regs::cc_params::ALPHA_RTT.bit() == 320
        && rnic_spec::regs::cc_params::EWMA_SHIFT.bit() == 384
        && rnic_spec::regs::qpc::MAX_PATHS.width == 9
);

/// The rnic core (interfaces: `docs/design.md`, "Interfaces of the core"). All streams are valid/ready;
/// a beat moves on a cycle where both are high.
#[derive(LogicBlock, Default)]
pub struct RnicCore {
    /// Core clock (250 MHz target).
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: every register and FIFO of the block back to its power-on state (block RAM contents are kept).
    pub reset: Signal<In, Bit>,
    /// BAR0 write strobe.
    pub reg_wr_valid: Signal<In, Bit>,
    /// BAR0 write byte offset.
    pub reg_wr_addr: Signal<In, Bits<32>>,
    /// BAR0 write data.
    pub reg_wr_data: Signal<In, Bits<64>>,
    /// BAR0 read strobe (one read outstanding at a time).
    pub reg_rd_valid: Signal<In, Bit>,
    /// BAR0 read byte offset.
    pub reg_rd_addr: Signal<In, Bits<32>>,
    /// Read response strobe.
    pub reg_rd_resp_valid: Signal<Out, Bit>,
    /// Read response data.
    pub reg_rd_resp_data: Signal<Out, Bits<64>>,
    /// PCIe Max_Read_Request_Size in Device Control's code (128 << code bytes).
    pub pcie_mrrs: Signal<In, Bits<3>>,
    /// PCIe requester request: a memory read valid (see [`PcieReadFront`]).
    pub pcie_rq_valid: Signal<Out, Bit>,
    /// PCIe requester request: taken.
    pub pcie_rq_ready: Signal<In, Bit>,
    /// PCIe requester request: bus address.
    pub pcie_rq_addr: Signal<Out, Bits<64>>,
    /// PCIe requester request: length in bytes (at most MRRS, within a 4 KiB page).
    pub pcie_rq_len: Signal<Out, Bits<13>>,
    /// PCIe requester request: tag.
    pub pcie_rq_tag: Signal<Out, Bits<8>>,
    /// PCIe requester completion: a beat valid; always taken (no ready).
    pub pcie_rc_valid: Signal<In, Bit>,
    /// PCIe requester completion: data, address-aligned (byte at address A in lane A mod 64).
    pub pcie_rc_data: Signal<In, Bits<512>>,
    /// PCIe requester completion: tag.
    pub pcie_rc_tag: Signal<In, Bits<8>>,
    /// PCIe requester completion: low 12 bits of the address of the beat's first byte.
    pub pcie_rc_addr: Signal<In, Bits<12>>,
    /// PCIe requester completion: Request Completed (the request's last beat).
    pub pcie_rc_done: Signal<In, Bit>,
    /// PCIe Max_Payload_Size in Device Control's code (128 << code bytes).
    pub pcie_mps: Signal<In, Bits<3>>,
    /// PCIe requester request: a memory write beat valid (see [`PcieWriteFront`]).
    pub pcie_wr_valid: Signal<Out, Bit>,
    /// PCIe requester request: write beat taken.
    pub pcie_wr_ready: Signal<In, Bit>,
    /// First beat of a write TLP (address and length are its descriptor).
    pub pcie_wr_first: Signal<Out, Bit>,
    /// Last beat of a write TLP.
    pub pcie_wr_last: Signal<Out, Bit>,
    /// Write TLP bus address.
    pub pcie_wr_addr: Signal<Out, Bits<64>>,
    /// Write TLP length in bytes (at most MPS, within a 4 KiB page).
    pub pcie_wr_len: Signal<Out, Bits<13>>,
    /// Write beat data, address-aligned (byte at address A in lane A mod 64).
    pub pcie_wr_data: Signal<Out, Bits<512>>,
    /// Write beat byte enables.
    pub pcie_wr_keep: Signal<Out, Bits<64>>,
    /// Network TX valid.
    pub net_tx_valid: Signal<Out, Bit>,
    /// Network TX ready.
    pub net_tx_ready: Signal<In, Bit>,
    /// Network TX data (frame byte 0 in lane 0).
    pub net_tx_data: Signal<Out, Bits<512>>,
    /// Network TX byte enables.
    pub net_tx_keep: Signal<Out, Bits<64>>,
    /// Network TX last beat of a frame.
    pub net_tx_last: Signal<Out, Bit>,
    /// Network RX valid.
    pub net_rx_valid: Signal<In, Bit>,
    /// Network RX ready.
    pub net_rx_ready: Signal<Out, Bit>,
    /// Network RX data.
    pub net_rx_data: Signal<In, Bits<512>>,
    /// Network RX byte enables.
    pub net_rx_keep: Signal<In, Bits<64>>,
    /// Network RX last beat of a frame.
    pub net_rx_last: Signal<In, Bit>,
    /// Pulse: a received frame was dropped before the core (the board shell's
    /// MAC FIFO); counted in `RX_MAC_DROP`. Tied low by the simulator's core top.
    pub net_rx_mac_drop: Signal<In, Bit>,
    regs: Regs,
    sq: SqEngine,
    txb: TxBuilder,
    rxin: RxIn,
    resp: RxEngine,
    fence: MrFence,
    /// MSI-X table and CQ arming: completion events.
    msix: Msix,
    /// STrack's per-QP path selector: the ACK receiver's feedback and resets, the turn engine's choices.
    spray: SprayEngine,
    /// STrack's per-QP congestion window: fed by the ACK receiver, read by the turn engine through `cwnd`.
    cc: CcEngine,
    /// Per QP, the window (bytes Q24.8) the window engine last computed.
    cwnd: Table<Bits<32>, QPN_BITS>,
    /// A copy of the window table for the host's reads (`REG_CC_WINDOW`).
    cwnd_host: Table<Bits<32>, QPN_BITS>,
    op_spray_choose: Num<{ OP_CHOOSE }, 2>,
    dmard: DmaReadMux,
    /// Packs a gathered packet's two pieces into one payload, in front of the TX builder.
    gather: GatherJoin,
    pcierd: PcieReadFront,
    pciewr: PcieWriteFront,
    /// The table scrub after a reset: the entry it clears next.
    scrub_addr: Reg<Bits<QPN_BITS>>,
    /// The scrub has cleared every entry (`STATUS_READY`).
    scrub_done: Reg<Bit>,
    scrub_last: Num<{ (1 << QPN_BITS) - 1 }, QPN_BITS>,
    scrubbing: Signal<Local, Bit>,
    /// The engines' reset: the core's, and the scrub.
    eng_reset: Signal<Local, Bit>,
    rr_v: Reg<Bit>,
    rr_data: Reg<Bits<64>>,
    rr_mark: Reg<Bits<16>>,
    rr_behind: Signal<Local, Bits<16>>,
    qpc_tx: Table<Bits<448>, QPN_BITS>,
    qpc_rx: Table<Bits<448>, QPN_BITS>,
    mr_tx: Table<Bits<256>, MR_BITS>,
    mr_rx: Table<Bits<256>, MR_BITS>,
    sq_pi: Table<Bits<16>, QPN_BITS>,
    rq_pi: Table<Bits<16>, QPN_BITS>,
    sq_pi_rx: Table<Bits<16>, QPN_BITS>,
    sq_state: Table<Bits<128>, QPN_BITS>,
    rx_state: Table<Bits<RXS_BITS>, QPN_BITS>,
    qp_err: Table<Bit, QPN_BITS>,
    req_state: Table<Bits<RQS_BITS>, QPN_BITS>,
    /// Per QP, lACK and the PSN its WQE starts at (ACK receiver to turn engine).
    lack: Table<Bits<LACK_BITS>, QPN_BITS>,
    /// Per QP, the ePSN and SACK OOO count of its latest ACK or NAK (ACK receiver to turn engine: the windows).
    apsn: Table<Bits<APSN_BITS>, QPN_BITS>,
    /// Per QP, the sequence number of the newest READ response job (responder to send path).
    jseq: Table<Bits<3>, QPN_BITS>,
    /// Per QP, the WQEs sent at least in part (SSN, plus one mid-message) and the PSN of its next
    /// packet: the timeout scan's view (`ack::SENT_BITS`).
    sq_sent: Table<Bits<SENT_BITS>, QPN_BITS>,
    sqst_wdata: Signal<Local, Bits<128>>,
    sent_mark: Signal<Local, Bits<SENT_BITS>>,
    /// The sent mark's WQE count: the SSN, one more while a message is half sent.
    sent_ssn: Signal<Local, Bits<16>>,
    stu: SqStateUnpack,
    rewp: RewindPack,
    swcp: SwCmdPack,
    cq_cfg: Table<Bits<128>, CQ_BITS>,
    cq_pi: Table<Bits<32>, CQ_BITS>,
    ring: RAM<Bits<512>, 10>,
    txdq: Fifo<Bits<TXD_BITS>, 3, 4>,
    /// Pushed payload beats, one per TX descriptor with `inl` (in the same order).
    iplq: Fifo<Bits<512>, 2, 3>,
    ackq: Fifo<Bits<TXD_BITS>, 3, 4>,
    rxdq: Fifo<Bits<RXD_BITS>, 4, 5>,
    lerrq: Fifo<Bits<64>, 2, 3>,
    cnt: Signal<Local, Bits<28>>,
}

impl Logic for RnicCore {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(
            self, clock, regs, sq, txb, rxin, resp, fence, msix, spray, cc, txdq, iplq, ackq, rxdq, lerrq, pcierd,
            pciewr, gather
        );
        // After a reset every table is cleared, one entry per cycle, with the
        // engines held in reset; the register block answers throughout.
        self.scrubbing.next = !self.scrub_done.q.val();
        self.eng_reset.next = self.reset.val() | self.scrubbing.val();
        self.regs.reset.next = self.reset.val();
        self.sq.reset.next = self.eng_reset.val();
        self.txb.reset.next = self.eng_reset.val();
        self.rxin.reset.next = self.eng_reset.val();
        self.resp.reset.next = self.eng_reset.val();
        self.fence.reset.next = self.eng_reset.val();
        self.msix.reset.next = self.eng_reset.val();
        self.spray.reset.next = self.eng_reset.val();
        self.cc.reset.next = self.eng_reset.val();
        self.txdq.reset.next = self.eng_reset.val();
        self.iplq.reset.next = self.eng_reset.val();
        self.ackq.reset.next = self.eng_reset.val();
        self.rxdq.reset.next = self.eng_reset.val();
        self.lerrq.reset.next = self.eng_reset.val();
        self.pcierd.reset.next = self.eng_reset.val();
        self.gather.reset.next = self.eng_reset.val();
        self.pciewr.reset.next = self.eng_reset.val();
        dff_setup!(self, clock, rr_v, rr_data, rr_mark, scrub_addr, scrub_done);
        self.scrub_addr.reset.next = self.reset.val();
        self.scrub_done.reset.next = self.reset.val();
        if self.scrubbing.val() {
            self.scrub_addr.d.next = self.scrub_addr.q.val() + 1;
            if self.scrub_addr.q.val() == self.scrub_last.val() {
                self.scrub_done.d.next = true;
            }
        }
        self.regs.ready.next = self.scrub_done.q.val();
        self.sq.scrub.next = self.scrubbing.val();
        self.sq.scrub_addr.next = self.scrub_addr.q.val();
        self.resp.scrub.next = self.scrubbing.val();
        self.resp.scrub_addr.next = self.scrub_addr.q.val();
        self.spray.scrub.next = self.scrubbing.val();
        self.spray.scrub_addr.next = self.scrub_addr.q.val();
        self.cc.scrub.next = self.scrubbing.val();
        self.cc.scrub_addr.next = self.scrub_addr.q.val();
        self.rr_v.reset.next = self.reset.val();
        self.rr_data.reset.next = self.reset.val();
        self.rr_mark.reset.next = self.reset.val();
        self.cwnd.read_clock.next = self.clock.val();
        self.cwnd.write_clock.next = self.clock.val();
        self.cwnd.clear.next = self.scrubbing.val();
        self.cwnd.clear_address.next = self.scrub_addr.q.val();
        self.qpc_tx.read_clock.next = self.clock.val();
        self.qpc_tx.write_clock.next = self.clock.val();
        self.qpc_tx.clear.next = self.scrubbing.val();
        self.qpc_tx.clear_address.next = self.scrub_addr.q.val();
        self.qpc_rx.read_clock.next = self.clock.val();
        self.qpc_rx.write_clock.next = self.clock.val();
        self.qpc_rx.clear.next = self.scrubbing.val();
        self.qpc_rx.clear_address.next = self.scrub_addr.q.val();
        self.mr_tx.read_clock.next = self.clock.val();
        self.mr_tx.write_clock.next = self.clock.val();
        self.mr_tx.clear.next = self.scrubbing.val();
        self.mr_tx.clear_address.next = self.scrub_addr.q.val().get_bits::<MR_BITS>(0);
        self.mr_rx.read_clock.next = self.clock.val();
        self.mr_rx.write_clock.next = self.clock.val();
        self.mr_rx.clear.next = self.scrubbing.val();
        self.mr_rx.clear_address.next = self.scrub_addr.q.val().get_bits::<MR_BITS>(0);
        self.sq_pi.read_clock.next = self.clock.val();
        self.sq_pi.write_clock.next = self.clock.val();
        self.sq_pi.clear.next = self.scrubbing.val();
        self.sq_pi.clear_address.next = self.scrub_addr.q.val();
        self.rq_pi.read_clock.next = self.clock.val();
        self.sq_pi_rx.read_clock.next = self.clock.val();
        self.sq_pi_rx.write_clock.next = self.clock.val();
        self.sq_pi_rx.clear.next = self.scrubbing.val();
        self.sq_pi_rx.clear_address.next = self.scrub_addr.q.val();
        self.sq_sent.read_clock.next = self.clock.val();
        self.sq_sent.write_clock.next = self.clock.val();
        self.sq_sent.clear.next = self.scrubbing.val();
        self.sq_sent.clear_address.next = self.scrub_addr.q.val();
        self.rq_pi.write_clock.next = self.clock.val();
        self.rq_pi.clear.next = self.scrubbing.val();
        self.rq_pi.clear_address.next = self.scrub_addr.q.val();
        self.sq_state.read_clock.next = self.clock.val();
        self.sq_state.write_clock.next = self.clock.val();
        self.sq_state.clear.next = self.scrubbing.val();
        self.sq_state.clear_address.next = self.scrub_addr.q.val();
        self.rx_state.read_clock.next = self.clock.val();
        self.rx_state.write_clock.next = self.clock.val();
        self.rx_state.clear.next = self.scrubbing.val();
        self.rx_state.clear_address.next = self.scrub_addr.q.val();
        self.qp_err.read_clock.next = self.clock.val();
        self.req_state.read_clock.next = self.clock.val();
        self.req_state.write_clock.next = self.clock.val();
        self.req_state.clear.next = self.scrubbing.val();
        self.req_state.clear_address.next = self.scrub_addr.q.val();
        self.qp_err.write_clock.next = self.clock.val();
        self.qp_err.clear.next = self.scrubbing.val();
        self.qp_err.clear_address.next = self.scrub_addr.q.val();
        self.lack.read_clock.next = self.clock.val();
        self.apsn.read_clock.next = self.clock.val();
        self.apsn.write_clock.next = self.clock.val();
        self.apsn.clear.next = self.scrubbing.val();
        self.apsn.clear_address.next = self.scrub_addr.q.val();
        self.lack.write_clock.next = self.clock.val();
        self.lack.clear.next = self.scrubbing.val();
        self.lack.clear_address.next = self.scrub_addr.q.val();
        self.jseq.read_clock.next = self.clock.val();
        self.jseq.write_clock.next = self.clock.val();
        self.jseq.clear.next = self.scrubbing.val();
        self.jseq.clear_address.next = self.scrub_addr.q.val();
        self.cq_cfg.read_clock.next = self.clock.val();
        self.cq_cfg.write_clock.next = self.clock.val();
        self.cq_cfg.clear.next = self.scrubbing.val();
        self.cq_cfg.clear_address.next = self.scrub_addr.q.val().get_bits::<CQ_BITS>(0);
        self.cq_pi.read_clock.next = self.clock.val();
        self.cq_pi.write_clock.next = self.clock.val();
        self.cq_pi.clear.next = self.scrubbing.val();
        self.cq_pi.clear_address.next = self.scrub_addr.q.val().get_bits::<CQ_BITS>(0);
        self.ring.read_clock.next = self.clock.val();
        self.ring.write_clock.next = self.clock.val();
        // Register port.
        self.regs.wr_valid.next = self.reg_wr_valid.val();
        self.regs.wr_addr.next = self.reg_wr_addr.val();
        self.regs.wr_data.next = self.reg_wr_data.val();
        self.regs.rd_valid.next = self.reg_rd_valid.val();
        self.regs.rd_addr.next = self.reg_rd_addr.val();
        // A register read's reply waits for the DMA writes taken before it to
        // leave the write front end: it may not pass them (PCIe ordering).
        if self.regs.rd_resp_valid.val() {
            self.rr_v.d.next = true;
            self.rr_data.d.next = self.regs.rd_resp_data.val();
            self.rr_mark.d.next = self.pciewr.accepted.val();
        }
        self.rr_behind.next = self.pciewr.retired.val() - self.rr_mark.q.val();
        self.reg_rd_resp_valid.next = self.rr_v.q.val() & !self.rr_behind.val().get_bit(15);
        self.reg_rd_resp_data.next = self.rr_data.q.val();
        if self.rr_v.q.val() & !self.rr_behind.val().get_bit(15) {
            self.rr_v.d.next = false;
        }
        // Tables written by commits.
        self.qpc_tx.write_enable.next = self.regs.qp_commit.val();
        self.qpc_tx.write_address.next = self.regs.commit_val.val().get_bits::<QPN_BITS>(0);
        self.qpc_tx.write_data.next = self.regs.stage.val().get_bits::<448>(0);
        self.qpc_rx.write_enable.next = self.regs.qp_commit.val();
        self.qpc_rx.write_address.next = self.regs.commit_val.val().get_bits::<QPN_BITS>(0);
        self.qpc_rx.write_data.next = self.regs.stage.val().get_bits::<448>(0);
        self.mr_tx.write_enable.next = self.regs.mr_commit.val();
        self.mr_tx.write_address.next = self.regs.commit_val.val().get_bits::<MR_BITS>(0);
        self.mr_tx.write_data.next = self.regs.stage.val().get_bits::<256>(0);
        self.mr_rx.write_enable.next = self.regs.mr_commit.val();
        self.mr_rx.write_address.next = self.regs.commit_val.val().get_bits::<MR_BITS>(0);
        self.mr_rx.write_data.next = self.regs.stage.val().get_bits::<256>(0);
        self.cq_cfg.write_enable.next = self.regs.cq_commit.val();
        self.cq_cfg.write_address.next = self.regs.commit_val.val().get_bits::<CQ_BITS>(0);
        self.cq_cfg.write_data.next = self.regs.stage.val().get_bits::<128>(0);
        // Doorbells (a requester/responder reset also zeroes the producer index).
        self.sq_pi.write_enable.next =
            self.regs.sq_db.val() | (self.regs.qp_commit.val() & self.regs.commit_val.val().get_bit(33));
        self.sq_pi.write_address.next = self.regs.db_qpn.val();
        self.sq_pi.write_data.next = self.regs.db_val.val();
        if self.regs.qp_commit.val() {
            self.sq_pi.write_address.next = self.regs.commit_val.val().get_bits::<QPN_BITS>(0);
            self.sq_pi.write_data.next = 0.into();
        }
        // The responder's copy of the SQ producer indices (bounds ACKed MSNs).
        self.sq_pi_rx.write_enable.next = self.sq_pi.write_enable.val();
        self.sq_pi_rx.write_address.next = self.sq_pi.write_address.val();
        self.sq_pi_rx.write_data.next = self.sq_pi.write_data.val();
        self.sq_sent.read_address.next = self.resp.tmo_sent_addr.val();
        self.resp.tmo_sent_data.next = self.sq_sent.read_data.val();
        self.resp.now.next = self.regs.now.val();
        self.resp.rto.next = self.regs.rto.val();
        self.resp.probe_to.next = self.regs.probe.val();
        self.rq_pi.write_enable.next =
            self.regs.rq_db.val() | (self.regs.qp_commit.val() & self.regs.commit_val.val().get_bit(32));
        self.rq_pi.write_address.next = self.regs.db_qpn.val();
        self.rq_pi.write_data.next = self.regs.db_val.val();
        if self.regs.qp_commit.val() {
            self.rq_pi.write_address.next = self.regs.commit_val.val().get_bits::<QPN_BITS>(0);
            self.rq_pi.write_data.next = 0.into();
        }
        // SQ engine.
        self.sq.db_valid.next = self.regs.sq_db.val();
        self.sq.db_qpn.next = self.regs.db_qpn.val();
        self.sq.bar_wr.next = self.reg_wr_valid.val();
        self.sq.now.next = self.regs.now.val();
        // SQ rewinds: QPN from the commit value, the position from the staging words (`regs::rewind`).
        self.rewp.qpn.next = self.regs.commit_val.val().get_bits::<QPN_BITS>(0);
        self.rewp.ssn.next = self.regs.stage.val().get_bits::<24>(0);
        self.rewp.psn.next = self.regs.stage.val().get_bits::<24>(32);
        self.rewp.msg_off.next = self.regs.stage.val().get_bits::<32>(64);
        self.rewp.one.next = self.regs.stage.val().get_bits::<1>(63);
        self.rewp.wqe.next = self.regs.stage.val().get_bits::<320>(128);
        self.sq.rew_write.next = self.regs.sq_rewind.val();
        // Software-recovery commands: QPN from the commit value, the rest from the staging words (`regs::rx_sr`).
        self.swcp.qpn.next = self.regs.commit_val.val().get_bits::<QPN_BITS>(0);
        self.swcp.from.next = self.regs.stage.val().get_bits::<24>(0);
        self.swcp.to.next = self.regs.stage.val().get_bits::<24>(32);
        self.swcp.ends.next = self.regs.stage.val().get_bits::<16>(64);
        self.swcp.pkts.next = self.regs.stage.val().get_bits::<24>(96);
        self.swcp.send.next = self.regs.stage.val().get_bits::<1>(127);
        self.swcp.gen.next = self.regs.stage.val().get_bits::<4>(120);
        self.swcp.rsvd.next = 0.into();
        self.resp.swc_valid.next = self.regs.rx_sr_set.val();
        self.resp.sr_pool_hold.next = self.regs.sr_pool_hold.val();
        self.resp.swc_data.next = self.swcp.pword.val();
        // READ requests sent tell the responder block what to expect; READ requests received queue their responses.
        self.resp.arm_write.next = self.sq.arm_write.val();
        self.resp.arm_data.next = self.sq.arm_data.val();
        self.sq.arm_full.next = self.resp.arm_full.val();
        self.sq.job_write.next = self.resp.job_write.val();
        self.sq.job_data.next = self.resp.job_data.val();
        self.resp.job_full.next = self.sq.job_full.val();
        self.jseq.read_address.next = self.sq.jseq_addr.val();
        self.sq.jseq_data.next = self.jseq.read_data.val();
        // The path selector: the ACK receiver's feedback and resets first (it
        // holds ACKs while one waits), the turn engine's choices otherwise.
        self.spray.req_valid.next = self.resp.spray_valid.val() | self.sq.spray_valid.val();
        self.spray.req_qpn.next = self.resp.spray_qpn.val();
        self.spray.req_op.next = self.resp.spray_op.val();
        self.spray.req_ecn.next = self.resp.spray_ecn.val();
        self.spray.req_path.next = self.resp.spray_path.val();
        self.spray.req_max_paths.next = self.resp.spray_max_paths.val();
        self.spray.req_oblivious.next = self.resp.spray_oblivious.val();
        // Only a choice reads the window; the turn engine's is its QP's.
        self.spray.req_cwnd.next = self.sq.spray_cwnd.val();
        if !self.resp.spray_valid.val() {
            self.spray.req_qpn.next = self.sq.spray_qpn.val();
            self.spray.req_op.next = self.op_spray_choose.val();
        }
        self.resp.spray_ready.next = self.spray.req_ready.val();
        self.sq.spray_ready.next = self.spray.req_ready.val() & !self.resp.spray_valid.val();
        self.sq.spray_done.next = self.spray.out_valid.val();
        self.sq.spray_path.next = self.spray.out_path.val();
        // The window engine: requests from the ACK receiver, parameters from `REG_CC_PARAMS` (`regs::cc_params`).
        self.cc.req_valid.next = self.resp.cc_valid.val();
        self.resp.cc_ready.next = self.cc.req_ready.val();
        self.cc.req_qpn.next = self.resp.cc_qpn.val();
        self.cc.req_op.next = self.resp.cc_op.val();
        self.cc.req_now.next = self.resp.cc_now.val();
        self.cc.req_ecn.next = self.resp.cc_ecn.val();
        self.cc.req_rtt.next = self.resp.cc_rtt.val();
        self.cc.req_bytes.next = self.resp.cc_bytes.val();
        self.cc.req_on.next = self.resp.cc_on.val();
        self.cc.req_dctcp.next = self.resp.cc_dctcp.val();
        self.cc.req_epsn.next = self.resp.cc_epsn.val();
        self.cc.nxt_we.next = self.sq.nxt_we.val();
        self.cc.nxt_qpn.next = self.sq.nxt_qpn.val();
        self.cc.nxt_psn.next = self.sq.nxt_psn.val();
        self.cc.p_dctcp_g.next = self.regs.cc_params.val().get_bits::<4>(392);
        self.cc.p_dctcp_mtu.next = self.regs.cc_params.val().get_bits::<16>(400);
        self.cc.p_init_cwnd.next = self.regs.cc_params.val().get_bits::<32>(416);
        self.cc.req_probe.next = false;
        self.cc.p_base_rtt.next = self.regs.cc_params.val().get_bits::<32>(0);
        self.cc.p_target.next = self.regs.cc_params.val().get_bits::<32>(32);
        self.cc.p_qhigh.next = self.regs.cc_params.val().get_bits::<32>(64);
        self.cc.p_min_cwnd.next = self.regs.cc_params.val().get_bits::<32>(96);
        self.cc.p_max_cwnd.next = self.regs.cc_params.val().get_bits::<32>(128);
        self.cc.p_gamma.next = self.regs.cc_params.val().get_bits::<32>(160);
        self.cc.p_beta.next = self.regs.cc_params.val().get_bits::<64>(192);
        self.cc.p_eta.next = self.regs.cc_params.val().get_bits::<64>(256);
        self.cc.p_alpha_rtt.next = self.regs.cc_params.val().get_bits::<64>(320);
        self.cc.p_ewma_shift.next = self.regs.cc_params.val().get_bits::<5>(384);
        self.cwnd.write_enable.next = self.cc.out_valid.val();
        self.cwnd.write_address.next = self.cc.out_qpn.val();
        self.cwnd.write_data.next = self.cc.out_cwnd.val();
        self.cwnd.read_address.next = self.sq.cwnd_addr.val();
        self.cwnd_host.read_clock.next = self.clock.val();
        self.cwnd_host.write_clock.next = self.clock.val();
        self.cwnd_host.clear.next = self.scrubbing.val();
        self.cwnd_host.clear_address.next = self.scrub_addr.q.val();
        self.cwnd_host.write_enable.next = self.cc.out_valid.val();
        self.cwnd_host.write_address.next = self.cc.out_qpn.val();
        self.cwnd_host.write_data.next = self.cc.out_cwnd.val();
        self.cwnd_host.read_address.next = self.regs.cc_query_qpn.val();
        self.regs.cc_query_cwnd.next = self.cwnd_host.read_data.val();
        self.sq.cwnd_data.next = self.cwnd.read_data.val();
        self.jseq.write_enable.next = self.resp.jseq_we.val();
        self.jseq.write_address.next = self.resp.jseq_waddr.val();
        self.jseq.write_data.next = self.resp.jseq_wdata.val();
        self.sq.rew_data.next = self.rewp.pword.val();
        self.qpc_tx.read_address.next = self.sq.qpc_addr.val();
        self.sq.qpc_data.next = self.qpc_tx.read_data.val();
        self.sq_pi.read_address.next = self.sq.sqpi_addr.val();
        self.sq.sqpi_data.next = self.sq_pi.read_data.val();
        self.sq_state.read_address.next = self.sq.st_addr.val();
        self.sq.st_data.next = self.sq_state.read_data.val();
        self.sq_state.write_enable.next = self.sq.st_we.val();
        self.sq_state.write_address.next = self.sq.st_waddr.val();
        self.sqst_wdata.next = self.sq.st_wdata.val();
        if self.regs.qp_commit.val() & self.regs.commit_val.val().get_bit(33) {
            self.sq_state.write_enable.next = true;
            self.sq_state.write_address.next = self.regs.commit_val.val().get_bits::<QPN_BITS>(0);
            self.sqst_wdata.next = bit_cast::<128, 24>(self.regs.stage.val().get_bits::<24>(384)) << 24;
        }
        self.sq_state.write_data.next = self.sqst_wdata.val();
        // The sent mark follows every SQ state write: the SSN, one more while a message is half sent.
        self.stu.pword.next = self.sqst_wdata.val();
        self.sent_ssn.next = self.stu.ssn.val().get_bits::<16>(0);
        if self.stu.msg_off.val() != 0 {
            self.sent_ssn.next = self.stu.ssn.val().get_bits::<16>(0) + 1;
        }
        self.sent_mark.next =
            bit_cast::<SENT_BITS, 16>(self.sent_ssn.val()) | (bit_cast::<SENT_BITS, 24>(self.stu.psn.val()) << 16);
        self.sq_sent.write_enable.next =
            self.sq.st_we.val() | (self.regs.qp_commit.val() & self.regs.commit_val.val().get_bit(33));
        self.sq_sent.write_address.next = self.sq.st_waddr.val();
        if self.regs.qp_commit.val() & self.regs.commit_val.val().get_bit(33) {
            self.sq_sent.write_address.next = self.regs.commit_val.val().get_bits::<QPN_BITS>(0);
        }
        self.sq_sent.write_data.next = self.sent_mark.val();
        self.qp_err.read_address.next = self.sq.err_addr.val();
        self.sq.err_data.next = self.qp_err.read_data.val();
        self.qp_err.write_enable.next = self.resp.qperr_we.val();
        self.qp_err.write_address.next = self.resp.qperr_waddr.val();
        self.qp_err.write_data.next = true;
        if self.regs.qp_commit.val() & self.regs.commit_val.val().get_bit(33) {
            self.qp_err.write_enable.next = true;
            self.qp_err.write_address.next = self.regs.commit_val.val().get_bits::<QPN_BITS>(0);
            self.qp_err.write_data.next = false;
        }
        // The acknowledged PSN: a requester reset starts it at the QP's first PSN (`qpc::SQ_PSN`, OOO 0), ACKs move it.
        self.apsn.read_address.next = self.sq.apsn_addr.val();
        self.sq.apsn_data.next = self.apsn.read_data.val();
        self.apsn.write_enable.next = self.resp.apsn_we.val();
        self.apsn.write_address.next = self.resp.apsn_waddr.val();
        self.apsn.write_data.next = self.resp.apsn_wdata.val();
        if self.regs.qp_commit.val() & self.regs.commit_val.val().get_bit(33) {
            self.apsn.write_enable.next = true;
            self.apsn.write_address.next = self.regs.commit_val.val().get_bits::<QPN_BITS>(0);
            self.apsn.write_data.next = bit_cast::<APSN_BITS, 24>(self.regs.stage.val().get_bits::<24>(384));
        }
        self.lack.read_address.next = self.sq.lack_addr.val();
        self.sq.lack_data.next = self.lack.read_data.val();
        self.lack.write_enable.next = self.resp.lack_we.val();
        self.lack.write_address.next = self.resp.lack_waddr.val();
        self.lack.write_data.next = self.resp.lack_wdata.val();
        // A requester reset clears it with the SQ state (the ACK receiver clears it again when it takes the reset).
        if self.regs.qp_commit.val() & self.regs.commit_val.val().get_bit(33) {
            self.lack.write_enable.next = true;
            self.lack.write_address.next = self.regs.commit_val.val().get_bits::<QPN_BITS>(0);
            self.lack.write_data.next = 0.into();
        }
        self.mr_tx.read_address.next = self.sq.mr_addr.val();
        self.sq.mr_data.next = self.mr_tx.read_data.val();
        self.txdq.write.next = self.sq.txd_write.val();
        self.txdq.data_in.next = self.sq.txd_data.val();
        self.sq.txd_full.next = self.txdq.full.val();
        self.iplq.write.next = self.sq.ipl_write.val();
        self.iplq.data_in.next = self.sq.ipl_data.val();
        self.sq.ipl_full.next = self.iplq.full.val();
        self.sq.db_pi.next = self.regs.db_val.val();
        self.sq.push_we.next = self.regs.push_we.val();
        self.sq.push_idx.next = self.regs.push_idx.val();
        self.sq.push_data.next = self.reg_wr_data.val();
        self.sq.push_clear.next = self.regs.qp_commit.val();
        self.lerrq.write.next = self.sq.lerr_write.val();
        self.lerrq.data_in.next = self.sq.lerr_data.val();
        self.sq.lerr_full.next = self.lerrq.full.val();
        // DMA reads: one port, requests arbitrated and completions routed by tag.
        self.dmard.rq_valid.next = self.resp.rd_valid.val();
        self.dmard.rq_addr.next = self.resp.rd_addr.val();
        self.resp.rd_ready.next = self.dmard.rq_ready.val();
        self.dmard.sq_valid.next = self.sq.rd_valid.val();
        self.dmard.sq_addr.next = self.sq.rd_addr.val();
        self.dmard.sq_len.next = self.sq.rd_len.val();
        self.dmard.sq_tag.next = self.sq.rd_tag.val();
        self.sq.rd_ready.next = self.dmard.sq_ready.val();
        self.pcierd.req_valid.next = self.dmard.req_valid.val();
        self.dmard.req_ready.next = self.pcierd.req_ready.val();
        self.pcierd.req_addr.next = self.dmard.req_addr.val();
        self.pcierd.req_len.next = self.dmard.req_len.val();
        self.pcierd.req_tag.next = self.dmard.req_tag.val();
        self.dmard.cpl_valid.next = self.pcierd.cpl_valid.val();
        self.pcierd.cpl_ready.next = self.dmard.cpl_ready.val();
        self.dmard.cpl_data.next = self.pcierd.cpl_data.val();
        self.dmard.cpl_tag.next = self.pcierd.cpl_tag.val();
        // The PCIe side of the reads: split, tagged, and put back in order by the front end.
        self.pcierd.cfg_mrrs.next = self.pcie_mrrs.val();
        self.pcie_rq_valid.next = self.pcierd.rq_valid.val();
        self.pcierd.rq_ready.next = self.pcie_rq_ready.val();
        self.pcie_rq_addr.next = self.pcierd.rq_addr.val();
        self.pcie_rq_len.next = self.pcierd.rq_len.val();
        self.pcie_rq_tag.next = self.pcierd.rq_tag.val();
        self.pcierd.rc_valid.next = self.pcie_rc_valid.val();
        self.pcierd.rc_data.next = self.pcie_rc_data.val();
        self.pcierd.rc_tag.next = self.pcie_rc_tag.val();
        self.pcierd.rc_addr.next = self.pcie_rc_addr.val();
        self.pcierd.rc_done.next = self.pcie_rc_done.val();
        self.resp.rwqe_valid.next = self.dmard.rwqe_valid.val();
        self.resp.rwqe_data.next = self.dmard.data.val();
        self.dmard.rwqe_ready.next = self.resp.rwqe_ready.val();
        self.sq.wqe_valid.next = self.dmard.wqe_valid.val();
        self.sq.wqe_data.next = self.dmard.data.val();
        self.dmard.wqe_ready.next = self.sq.wqe_ready.val();
        self.gather.in_valid.next = self.dmard.pl_valid.val();
        self.gather.in_data.next = self.dmard.data.val();
        self.gather.in_tag.next = self.pcierd.cpl_tag.val();
        self.gather.in_last.next = self.pcierd.cpl_last.val();
        self.dmard.pl_ready.next = self.gather.in_ready.val();
        self.txb.pl_valid.next = self.gather.pl_valid.val();
        self.txb.pl_data.next = self.gather.pl_data.val();
        self.gather.pl_ready.next = self.txb.pl_ready.val();
        self.txb.ipl_valid.next = !self.iplq.empty.val();
        self.txb.ipl_data.next = self.iplq.data_out.val();
        self.iplq.read.next = self.txb.ipl_ready.val();
        // TX builder.
        self.txb.src_mac.next = self.regs.src_mac.val();
        self.txb.src_ip.next = self.regs.src_ip.val();
        self.txb.req_empty.next = self.txdq.empty.val();
        self.txb.req_data.next = self.txdq.data_out.val();
        self.txdq.read.next = self.txb.req_pop.val();
        self.txb.ack_empty.next = self.ackq.empty.val();
        self.txb.ack_data.next = self.ackq.data_out.val();
        self.ackq.read.next = self.txb.ack_pop.val();
        self.net_tx_valid.next = self.txb.tx_valid.val();
        self.txb.tx_ready.next = self.net_tx_ready.val();
        self.net_tx_data.next = self.txb.tx_data.val();
        self.net_tx_keep.next = self.txb.tx_keep.val();
        self.net_tx_last.next = self.txb.tx_last.val();
        // RX front end: back-pressure between frames when the ring is full.
        self.net_rx_ready.next = self.rxin.rx_ready.val();
        self.rxin.rx_valid.next = self.net_rx_valid.val();
        self.rxin.rx_data.next = self.net_rx_data.val();
        self.rxin.rx_last.next = self.net_rx_last.val();
        self.rxin.rx_keep.next = self.net_rx_keep.val();
        self.ring.write_enable.next = self.rxin.ring_we.val();
        self.ring.write_address.next = self.rxin.ring_waddr.val();
        self.ring.write_data.next = self.rxin.ring_wdata.val();
        self.rxin.rptr.next = self.resp.rptr.val();
        self.rxin.my_mac.next = self.regs.src_mac.val();
        self.rxin.my_ip.next = self.regs.src_ip.val();
        self.rxdq.write.next = self.rxin.desc_write.val();
        self.rxdq.data_in.next = self.rxin.desc_data.val();
        self.rxin.desc_afull.next = self.rxdq.almost_full.val();
        // Responder.
        self.resp.desc_empty.next = self.rxdq.empty.val();
        self.resp.desc_data.next = self.rxdq.data_out.val();
        self.rxdq.read.next = self.resp.desc_pop.val();
        self.ring.read_address.next = self.resp.ring_raddr.val();
        self.resp.ring_rdata.next = self.ring.read_data.val();
        self.resp.lerr_empty.next = self.lerrq.empty.val();
        self.resp.lerr_data.next = self.lerrq.data_out.val();
        self.lerrq.read.next = self.resp.lerr_pop.val();
        self.qpc_rx.read_address.next = self.resp.qpc_addr.val();
        self.resp.qpc_data.next = self.qpc_rx.read_data.val();
        self.rx_state.read_address.next = self.resp.rxs_addr.val();
        self.resp.rxs_data.next = self.rx_state.read_data.val();
        self.rx_state.write_enable.next = self.resp.rxs_we.val();
        self.rx_state.write_address.next = self.resp.rxs_waddr.val();
        self.rx_state.write_data.next = self.resp.rxs_wdata.val();
        self.rq_pi.read_address.next = self.resp.rqpi_addr.val();
        self.resp.rqpi_data.next = self.rq_pi.read_data.val();
        self.sq_pi_rx.read_address.next = self.resp.rqpi_addr.val();
        self.resp.sqpi_data.next = self.sq_pi_rx.read_data.val();
        self.mr_rx.read_address.next = self.resp.mr_addr.val();
        self.resp.mr_data.next = self.mr_rx.read_data.val();
        self.cq_cfg.read_address.next = self.resp.cq_addr.val();
        self.resp.cq_data.next = self.cq_cfg.read_data.val();
        self.cq_pi.read_address.next = self.resp.cq_addr.val();
        self.resp.cqpi_data.next = self.cq_pi.read_data.val();
        self.cq_pi.write_enable.next = self.resp.cqpi_we.val() | self.regs.cq_commit.val();
        self.cq_pi.write_address.next = self.resp.cq_addr.val();
        self.cq_pi.write_data.next = self.resp.cqpi_wdata.val();
        if self.regs.cq_commit.val() {
            self.cq_pi.write_address.next = self.regs.commit_val.val().get_bits::<CQ_BITS>(0);
            self.cq_pi.write_data.next = 0.into();
        }
        self.req_state.read_address.next = self.resp.rqs_addr.val();
        self.resp.rqs_data.next = self.req_state.read_data.val();
        self.req_state.write_enable.next = self.resp.rqs_we.val();
        self.req_state.write_address.next = self.resp.rqs_waddr.val();
        self.req_state.write_data.next = self.resp.rqs_wdata.val();
        self.resp.rst_valid.next = self.regs.qp_commit.val();
        self.resp.rst_data.next = bit_cast::<40, QPN_BITS>(self.regs.commit_val.val().get_bits::<QPN_BITS>(0))
            | (bit_cast::<40, 2>(self.regs.commit_val.val().get_bits::<2>(32)) << 8)
            | (bit_cast::<40, 24>(self.regs.stage.val().get_bits::<24>(416)) << 10);
        self.resp.rst_max_paths.next = self.regs.stage.val().get_bits::<9>(304);
        self.resp.rst_cc_on.next = self.regs.stage.val().get_bit(313);
        self.resp.rst_oblivious.next = self.regs.stage.val().get_bit(314);
        self.resp.rst_dctcp.next = self.regs.stage.val().get_bit(315);
        // DMA writes: coalesced into PCIe write TLPs by the front end.
        self.resp.wr_ready.next = self.pciewr.wr_ready.val();
        self.pciewr.wr_valid.next = self.resp.wr_valid.val();
        self.pciewr.wr_addr.next = self.resp.wr_addr.val();
        self.pciewr.wr_data.next = self.resp.wr_data.val();
        self.pciewr.wr_len.next = self.resp.wr_len.val();
        self.pciewr.wr_lane.next = self.resp.wr_lane.val();
        self.pciewr.cfg_mps.next = self.pcie_mps.val();
        self.pcie_wr_valid.next = self.pciewr.rqw_valid.val();
        self.pciewr.rqw_ready.next = self.pcie_wr_ready.val();
        self.pcie_wr_first.next = self.pciewr.rqw_first.val();
        self.pcie_wr_last.next = self.pciewr.rqw_last.val();
        self.pcie_wr_addr.next = self.pciewr.rqw_addr.val();
        self.pcie_wr_len.next = self.pciewr.rqw_len.val();
        self.pcie_wr_data.next = self.pciewr.rqw_data.val();
        self.pcie_wr_keep.next = self.pciewr.rqw_keep.val();
        self.ackq.write.next = self.resp.ack_write.val();
        self.ackq.data_in.next = self.resp.ack_data.val();
        self.resp.ack_full.next = self.ackq.full.val();
        // Event counters (rnic_spec::regs::counters order).
        self.cnt.next = 0.into();
        if self.txb.sent_req.val() {
            self.cnt.next = self.cnt.val() | 0x1;
        }
        if self.txb.sent_ack.val() {
            self.cnt.next = self.cnt.val() | 0x2;
        }
        if self.rxin.cnt_frame.val() {
            self.cnt.next = self.cnt.val() | 0x4;
        }
        if self.rxin.cnt_icrc.val() {
            self.cnt.next = self.cnt.val() | 0x8;
        }
        if self.rxin.cnt_hdr.val() {
            self.cnt.next = self.cnt.val() | 0x10;
        }
        self.regs.cnt_hdr2.next =
            bit_cast::<2, 1>(self.resp.cnt_hdr.val().into()) + bit_cast::<2, 1>(self.resp.cnt_ack_bad.val().into());
        if self.rxin.cnt_nobuf.val() {
            self.cnt.next = self.cnt.val() | 0x20;
        }
        if self.resp.cnt_psn.val() {
            self.cnt.next = self.cnt.val() | 0x40;
        }
        if self.resp.cnt_access.val() {
            self.cnt.next = self.cnt.val() | 0x80;
        }
        if self.resp.cnt_dup.val() {
            self.cnt.next = self.cnt.val() | 0x100;
        }
        if self.resp.cnt_rnr.val() {
            self.cnt.next = self.cnt.val() | 0x200;
        }
        if self.resp.cnt_nak.val() {
            self.cnt.next = self.cnt.val() | 0x400;
        }
        if self.resp.cnt_ack.val() {
            self.cnt.next = self.cnt.val() | 0x800;
        }
        if self.resp.cnt_cqe.val() {
            self.cnt.next = self.cnt.val() | 0x1000;
        }
        if self.resp.cnt_inv.val() {
            self.cnt.next = self.cnt.val() | 0x2000;
        }
        if self.resp.swc_drop.val() {
            self.cnt.next = self.cnt.val() | 0x4000;
        }
        if self.resp.cnt_ctl_drop.val() {
            self.cnt.next = self.cnt.val() | 0x8000;
        }
        if self.resp.cnt_ctl.val() {
            self.cnt.next = self.cnt.val() | 0x1_0000;
        }
        if self.sq.cnt_rewind.val() {
            self.cnt.next = self.cnt.val() | 0x2_0000;
        }
        if self.sq.cnt_rewind_drop.val() {
            self.cnt.next = self.cnt.val() | 0x4_0000;
        }
        if self.resp.cnt_rto.val() {
            self.cnt.next = self.cnt.val() | 0x8_0000;
        }
        if self.resp.cnt_ooo.val() {
            self.cnt.next = self.cnt.val() | 0x10_0000;
        }
        if self.sq.cnt_resend.val() {
            self.cnt.next = self.cnt.val() | 0x20_0000;
        }
        if self.resp.cnt_sw.val() {
            self.cnt.next = self.cnt.val() | 0x40_0000;
        }
        if self.sq.cnt_skip.val() {
            self.cnt.next = self.cnt.val() | 0x80_0000;
        }
        if self.resp.cnt_cc_skip.val() {
            self.cnt.next = self.cnt.val() | 0x100_0000;
        }
        if self.net_rx_mac_drop.val() {
            self.cnt.next = self.cnt.val() | 0x200_0000;
        }
        if self.sq.cnt_push.val() {
            self.cnt.next = self.cnt.val() | 0x400_0000;
        }
        if self.resp.cnt_irq.val() {
            self.cnt.next = self.cnt.val() | 0x800_0000;
        }
        self.regs.cnt_inc.next = self.cnt.val();
        self.resp.ctrlq_base.next = self.regs.ctrlq_base.val();
        self.resp.ctrlq_size.next = self.regs.ctrlq_size.val();
        self.resp.ctrlq_ci.next = self.regs.ctrlq_ci.val();
        self.resp.ctrlq_reset.next = self.regs.ctrlq_reset.val();
        // Completion events: MSI-X messages through the completion writer.
        self.msix.tbl_we.next = self.regs.msix_we.val();
        self.msix.tbl_idx.next = self.regs.msix_idx.val();
        self.msix.tbl_data.next = self.regs.commit_val.val();
        self.msix.rd_idx.next = self.regs.msix_ridx.val();
        self.regs.msix_rd.next = self.msix.rd_data.val();
        self.regs.msix_pba.next = self.msix.pba.val();
        self.msix.arm.next = self.regs.cq_arm.val();
        self.msix.arm_cqn.next = self.regs.commit_val.val().get_bits::<CQ_BITS>(0);
        self.msix.disarm.next = self.regs.cq_commit.val();
        self.msix.disarm_cqn.next = self.regs.commit_val.val().get_bits::<CQ_BITS>(0);
        self.regs.cq_armed.next = self.msix.armed.val();
        self.msix.ev.next = self.resp.cq_ev.val();
        self.msix.ev_cqn.next = self.resp.cq_ev_cqn.val();
        self.msix.ev_vec.next = self.resp.cq_ev_vec.val();
        self.msix.ev_on.next = self.resp.cq_ev_on.val();
        self.resp.irq_valid.next = self.msix.irq_valid.val();
        self.msix.irq_ready.next = self.resp.irq_ready.val();
        self.resp.irq_addr.next = self.msix.irq_addr.val();
        self.resp.irq_data.next = self.msix.irq_data.val();
        // MR fence (dereg_mr).
        self.fence.start.next = self.regs.fence_start.val();
        self.fence.resp_idle.next = self.resp.idle.val();
        self.fence.rd_issued.next = self.pcierd.req_valid.val() & self.pcierd.req_ready.val();
        self.fence.rd_done.next =
            self.pcierd.cpl_valid.val() & self.pcierd.cpl_ready.val() & self.pcierd.cpl_last.val();
        self.regs.fence_busy.next = self.fence.busy.val();
    }
}
