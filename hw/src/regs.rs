//! Register/doorbell block (BAR0): staging words and table commits, SQ/RQ
//! doorbells, source address registers, the cycle counter and the event
//! counters. Offsets are `rnic_spec::regs`; the decode compares against
//! them as literals, checked against the spec at compile time below.

use crate::reg::Reg;
use rnic_spec::params::QPN_BITS;
use rnic_spec::regs as r;
use rust_hdl::prelude::*;

const _: () = assert!(
    r::REG_ID == 0
        && r::REG_CAPS == 8
        && r::REG_SRC_MAC == 0x10
        && r::REG_SRC_IP == 0x18
        && r::REG_CYCLES == 0x20
        && r::REG_STATUS == 0x28
        && r::STATUS_READY == 1
        && r::REG_STAGE == 0x100
        && r::REG_QP_COMMIT == 0x140
        && r::REG_MR_COMMIT == 0x148
        && r::REG_CQ_COMMIT == 0x150
        && r::DB_SQ_BASE == 0x10_0000
        && r::DB_RQ_BASE == 0x20_0000
        && r::PUSH_BASE == 0x30_0000
        && r::PUSH_WORDS == 16
        && r::CAPS_PUSH == 1 << 24
        && r::CAPS_MSIX_SHIFT == 28
        && r::MSIX_VECTORS == 8
        && r::REG_CQ_ARM == 0x1B0
        && r::REG_CQ_ARMED == 0x1B8
        && r::MSIX_TABLE == 0x38_0000
        && r::MSIX_PBA == 0x38_0800
        && r::counters::IRQS == 0x2D8
        && r::counters::TX_PKTS == 0x200
        && r::QP_COMMIT_RESET_RESP == 1 << 32
        && r::QP_COMMIT_RESET_REQ == 1 << 33
        && r::ID_MAGIC == 0x524E_4943
        && r::ID_VERSION == 1
        && r::counters::COUNT == 28
        && r::counters::SQ_PUSHED == 0x2D0
        && r::counters::RX_MAC_DROP == 0x2C8
        && r::counters::CC_SKIPPED == 0x2C0
        && r::counters::SQ_SKIPS == 0x2B8
        && r::counters::RX_OOO_PLACED == 0x2A0
        && r::counters::SQ_RESENDS == 0x2A8
        && r::counters::RX_OOO_SW == 0x2B0
        && r::counters::SQ_REWINDS == 0x288
        && r::counters::SQ_REWIND_DROP == 0x290
        && r::counters::RTO_EXPIRED == 0x298
        && r::REG_SQ_REWIND == 0x178
        && r::REG_RTO == 0x180
        && r::REG_PROBE == 0x1A0
        && r::REG_CC_WINDOW == 0x1A8
        && r::REG_RX_SR_SET == 0x188
        && r::REG_SR_POOL_HOLD == 0x190
        && r::REG_CC_PARAMS == 0x198
        && r::counters::CTRLQ_DROP == 0x278
        && r::counters::CTRLQ_ENTRIES == 0x280
        && r::REG_CTRLQ_BASE == 0x160
        && r::REG_CTRLQ_LOG2 == 0x168
        && r::REG_CTRLQ_CI == 0x170
        && r::REG_MR_FENCE == 0x158
        && r::counters::RX_INV_REQ == 0x268
        && r::counters::REG_ERR == 0x270
);
const _: () =
    assert!(rnic_spec::params::QPN_BITS == 8 && rnic_spec::params::MR_BITS == 8 && rnic_spec::params::CQ_BITS == 6);

/// The register block.
#[derive(LogicBlock, Default)]
pub struct Regs {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: every register and FIFO of the block back to its power-on state (block RAM contents are kept).
    pub reset: Signal<In, Bit>,
    /// The core's tables are cleared (`REG_STATUS`).
    pub ready: Signal<In, Bit>,
    /// Write strobe.
    pub wr_valid: Signal<In, Bit>,
    /// Write offset.
    pub wr_addr: Signal<In, Bits<32>>,
    /// Write data.
    pub wr_data: Signal<In, Bits<64>>,
    /// Read strobe.
    pub rd_valid: Signal<In, Bit>,
    /// Read offset.
    pub rd_addr: Signal<In, Bits<32>>,
    /// Read response strobe.
    pub rd_resp_valid: Signal<Out, Bit>,
    /// Read response data.
    pub rd_resp_data: Signal<Out, Bits<64>>,
    /// Counter increment pulses, bit i = counter i (rnic_spec::regs::counters order).
    pub cnt_inc: Signal<In, Bits<28>>,
    /// More RX_HDR_ERR events this cycle (0 to 2): the RX front end (bit 4 of
    /// `cnt_inc`), the responder and the ACK receiver all drop frames for bad
    /// headers, and may do so in the same cycle.
    pub cnt_hdr2: Signal<In, Bits<2>>,
    /// Staging words 0..7 concatenated.
    pub stage: Signal<Out, Bits<512>>,
    /// QP commit strobe.
    pub qp_commit: Signal<Out, Bit>,
    /// MR commit strobe.
    pub mr_commit: Signal<Out, Bit>,
    /// CQ commit strobe.
    pub cq_commit: Signal<Out, Bit>,
    /// MR fence start strobe.
    pub fence_start: Signal<Out, Bit>,
    /// A fence is in progress (read back at `REG_MR_FENCE`).
    pub fence_busy: Signal<In, Bit>,
    /// SQ rewind strobe (`REG_SQ_REWIND`; QPN in `commit_val`, position in the staging words).
    pub sq_rewind: Signal<Out, Bit>,
    /// Software-recovery command strobe (`REG_RX_SR_SET`; QPN in `commit_val`, the rest in the staging words).
    pub rx_sr_set: Signal<Out, Bit>,
    /// Retransmission timeout in cycles (`REG_RTO`; 0: off).
    pub rto: Signal<Out, Bits<32>>,
    /// Probe timeout in cycles (`REG_PROBE`; 0: off).
    pub probe: Signal<Out, Bits<32>>,
    /// The QP whose window `REG_CC_WINDOW` reads.
    pub cc_query_qpn: Signal<Out, Bits<QPN_BITS>>,
    /// Its window (bytes, Q24.8), from the core's copy of the window table.
    pub cc_query_cwnd: Signal<In, Bits<32>>,
    /// Windows of the responder's pool held back (`REG_SR_POOL_HOLD`).
    pub sr_pool_hold: Signal<Out, Bits<8>>,
    /// STrack's parameters: the staging words as the last `REG_CC_PARAMS` write found them (`regs::cc_params`).
    pub cc_params: Signal<Out, Bits<512>>,
    /// Commit value (QPN/MR index/CQN and flags).
    pub commit_val: Signal<Out, Bits<64>>,
    /// SQ doorbell strobe.
    pub sq_db: Signal<Out, Bit>,
    /// RQ doorbell strobe.
    pub rq_db: Signal<Out, Bit>,
    /// Doorbell QPN.
    pub db_qpn: Signal<Out, Bits<QPN_BITS>>,
    /// Doorbell value (producer index).
    pub db_val: Signal<Out, Bits<16>>,
    /// A WQE push word is written (`rnic_spec::regs::PUSH_BASE`); its index is `push_idx`, its value the write's data.
    pub push_we: Signal<Out, Bit>,
    /// The push word's index.
    pub push_idx: Signal<Out, Bits<4>>,
    /// An MSI-X table word is written (`rnic_spec::regs::MSIX_TABLE`); its index is `msix_idx`, its value the write's data.
    pub msix_we: Signal<Out, Bit>,
    /// The table word's index (`(offset - MSIX_TABLE) / 8`).
    pub msix_idx: Signal<Out, Bits<4>>,
    /// The table word a read names (`msix_rd` answers it).
    pub msix_ridx: Signal<Out, Bits<4>>,
    /// The MSI-X table word at `msix_ridx`.
    pub msix_rd: Signal<In, Bits<64>>,
    /// The MSI-X pending bits (`MSIX_PBA`).
    pub msix_pba: Signal<In, Bits<8>>,
    /// Pulse: arm a CQ (`REG_CQ_ARM`; CQN in `commit_val`).
    pub cq_arm: Signal<Out, Bit>,
    /// The CQs' armed bits (`REG_CQ_ARMED`).
    pub cq_armed: Signal<In, Bits<64>>,
    /// Source MAC.
    pub src_mac: Signal<Out, Bits<48>>,
    /// Source IPv4.
    pub src_ip: Signal<Out, Bits<32>>,
    /// Cycle counter.
    pub now: Signal<Out, Bits<64>>,
    /// CtrlQ ring bus address.
    pub ctrlq_base: Signal<Out, Bits<64>>,
    /// The CtrlQ's entries, `1 << REG_CTRLQ_LOG2` for log2 1 to 16; 0: no CtrlQ (log2 0 or above 16).
    pub ctrlq_size: Signal<Out, Bits<32>>,
    /// The host's CtrlQ consumer index.
    pub ctrlq_ci: Signal<Out, Bits<32>>,
    /// Pulse, the cycle after `REG_CTRLQ_LOG2` is written (`ctrlq_size` already shows the new size): the
    /// producer index restarts.
    pub ctrlq_reset: Signal<Out, Bit>,
    st0: Reg<Bits<64>>,
    st1: Reg<Bits<64>>,
    st2: Reg<Bits<64>>,
    st3: Reg<Bits<64>>,
    st4: Reg<Bits<64>>,
    st5: Reg<Bits<64>>,
    st6: Reg<Bits<64>>,
    st7: Reg<Bits<64>>,
    mac: Reg<Bits<48>>,
    ip: Reg<Bits<32>>,
    cycles: Reg<Bits<64>>,
    resp_v: Reg<Bit>,
    resp_d: Reg<Bits<64>>,
    c0: Reg<Bits<64>>,
    c1: Reg<Bits<64>>,
    c2: Reg<Bits<64>>,
    c3: Reg<Bits<64>>,
    c4: Reg<Bits<64>>,
    c5: Reg<Bits<64>>,
    c6: Reg<Bits<64>>,
    c7: Reg<Bits<64>>,
    c8: Reg<Bits<64>>,
    c9: Reg<Bits<64>>,
    c10: Reg<Bits<64>>,
    c11: Reg<Bits<64>>,
    c12: Reg<Bits<64>>,
    c13: Reg<Bits<64>>,
    c14: Reg<Bits<64>>,
    c15: Reg<Bits<64>>,
    c16: Reg<Bits<64>>,
    c17: Reg<Bits<64>>,
    c18: Reg<Bits<64>>,
    c19: Reg<Bits<64>>,
    c20: Reg<Bits<64>>,
    c21: Reg<Bits<64>>,
    c22: Reg<Bits<64>>,
    c23: Reg<Bits<64>>,
    c24: Reg<Bits<64>>,
    c25: Reg<Bits<64>>,
    c26: Reg<Bits<64>>,
    c27: Reg<Bits<64>>,
    rto_q: Reg<Bits<32>>,
    probe_q: Reg<Bits<32>>,
    cwq_q: Reg<Bits<QPN_BITS>>,
    hold_q: Reg<Bits<8>>,
    ccp: Reg<Bits<512>>,
    ctl_base: Reg<Bits<64>>,
    ctl_log2: Reg<Bits<8>>,
    /// `ctrlq_size`, decoded when `REG_CTRLQ_LOG2` is written: the completion writer's room test starts
    /// from a flip-flop, not behind a shifter.
    ctl_size: Reg<Bits<32>>,
    ctl_ci: Reg<Bits<32>>,
    /// `REG_CTRLQ_LOG2` written: registered, so the completion writer's room test starts from a flip-flop.
    ctl_rst: Reg<Bit>,
    /// The increment pulses registered: a counter moves a cycle after its event, off the engines' decision paths.
    inc_q: Reg<Bits<28>>,
    /// `cnt_hdr2` registered with them.
    hdr2_q: Reg<Bits<2>>,
    bad_index: Signal<Local, Bit>,
    sel: Signal<Local, Bits<32>>,
}

impl Logic for Regs {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, st0, st1, st2, st3, st4, st5, st6, st7, mac, ip, cycles, resp_v, resp_d, c0, c1, c2, c3, c4,
            c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16, c17, c18, c19, c20, c21, c22, c23, c24, c25, c26,
            c27, rto_q, probe_q, cwq_q, hold_q, ccp, ctl_base, ctl_log2, ctl_size, ctl_ci, ctl_rst, inc_q, hdr2_q
        );
        self.st0.reset.next = self.reset.val();
        self.st1.reset.next = self.reset.val();
        self.st2.reset.next = self.reset.val();
        self.st3.reset.next = self.reset.val();
        self.st4.reset.next = self.reset.val();
        self.st5.reset.next = self.reset.val();
        self.st6.reset.next = self.reset.val();
        self.st7.reset.next = self.reset.val();
        self.mac.reset.next = self.reset.val();
        self.ip.reset.next = self.reset.val();
        self.cycles.reset.next = self.reset.val();
        self.resp_v.reset.next = self.reset.val();
        self.resp_d.reset.next = self.reset.val();
        self.c0.reset.next = self.reset.val();
        self.inc_q.reset.next = self.reset.val();
        self.hdr2_q.reset.next = self.reset.val();
        self.inc_q.d.next = self.cnt_inc.val();
        self.hdr2_q.d.next = self.cnt_hdr2.val();
        self.c1.reset.next = self.reset.val();
        self.c2.reset.next = self.reset.val();
        self.c3.reset.next = self.reset.val();
        self.c4.reset.next = self.reset.val();
        self.c5.reset.next = self.reset.val();
        self.c6.reset.next = self.reset.val();
        self.c7.reset.next = self.reset.val();
        self.c8.reset.next = self.reset.val();
        self.c9.reset.next = self.reset.val();
        self.c10.reset.next = self.reset.val();
        self.c11.reset.next = self.reset.val();
        self.c12.reset.next = self.reset.val();
        self.c13.reset.next = self.reset.val();
        self.c14.reset.next = self.reset.val();
        self.c15.reset.next = self.reset.val();
        self.c16.reset.next = self.reset.val();
        self.c17.reset.next = self.reset.val();
        self.c18.reset.next = self.reset.val();
        self.c19.reset.next = self.reset.val();
        self.c20.reset.next = self.reset.val();
        self.c21.reset.next = self.reset.val();
        self.c22.reset.next = self.reset.val();
        self.c23.reset.next = self.reset.val();
        self.c24.reset.next = self.reset.val();
        self.c25.reset.next = self.reset.val();
        self.c26.reset.next = self.reset.val();
        self.c27.reset.next = self.reset.val();
        self.rto_q.reset.next = self.reset.val();
        self.probe_q.reset.next = self.reset.val();
        self.cwq_q.reset.next = self.reset.val();
        self.hold_q.reset.next = self.reset.val();
        self.ccp.reset.next = self.reset.val();
        self.ctl_base.reset.next = self.reset.val();
        self.ctl_log2.reset.next = self.reset.val();
        self.ctl_size.reset.next = self.reset.val();
        self.ctl_ci.reset.next = self.reset.val();
        self.ctl_rst.reset.next = self.reset.val();
        self.rto.next = self.rto_q.q.val();
        self.probe.next = self.probe_q.q.val();
        self.cc_query_qpn.next = self.cwq_q.q.val();
        self.sr_pool_hold.next = self.hold_q.q.val();
        self.cc_params.next = self.ccp.q.val();
        self.sq_rewind.next = false;
        self.rx_sr_set.next = false;
        self.ctrlq_base.next = self.ctl_base.q.val();
        self.ctrlq_size.next = self.ctl_size.q.val();
        self.ctrlq_ci.next = self.ctl_ci.q.val();
        self.ctrlq_reset.next = self.ctl_rst.q.val();
        self.ctl_rst.d.next = false;
        self.cycles.d.next = self.cycles.q.val() + 1;
        self.now.next = self.cycles.q.val();
        self.src_mac.next = self.mac.q.val();
        self.src_ip.next = self.ip.q.val();
        self.stage.next = bit_cast::<512, 64>(self.st0.q.val())
            | (bit_cast::<512, 64>(self.st1.q.val()) << 64)
            | (bit_cast::<512, 64>(self.st2.q.val()) << 128)
            | (bit_cast::<512, 64>(self.st3.q.val()) << 192)
            | (bit_cast::<512, 64>(self.st4.q.val()) << 256)
            | (bit_cast::<512, 64>(self.st5.q.val()) << 320)
            | (bit_cast::<512, 64>(self.st6.q.val()) << 384)
            | (bit_cast::<512, 64>(self.st7.q.val()) << 448);
        self.commit_val.next = self.wr_data.val();
        self.qp_commit.next = false;
        self.mr_commit.next = false;
        self.cq_commit.next = false;
        self.fence_start.next = false;
        self.bad_index.next = false;
        self.sq_db.next = false;
        self.rq_db.next = false;
        self.push_we.next = false;
        self.msix_we.next = false;
        self.cq_arm.next = false;
        self.msix_idx.next = self.wr_addr.val().get_bits::<4>(3);
        self.msix_ridx.next = self.rd_addr.val().get_bits::<4>(3);
        self.push_idx.next = self.wr_addr.val().get_bits::<4>(3);
        self.db_qpn.next = self.wr_addr.val().get_bits::<8>(3);
        self.db_val.next = self.wr_data.val().get_bits::<16>(0);
        if self.wr_valid.val() {
            match self.wr_addr.val().index() {
                16 => self.mac.d.next = self.wr_data.val().get_bits::<48>(0),
                24 => self.ip.d.next = self.wr_data.val().get_bits::<32>(0),
                256 => self.st0.d.next = self.wr_data.val(),
                264 => self.st1.d.next = self.wr_data.val(),
                272 => self.st2.d.next = self.wr_data.val(),
                280 => self.st3.d.next = self.wr_data.val(),
                288 => self.st4.d.next = self.wr_data.val(),
                296 => self.st5.d.next = self.wr_data.val(),
                304 => self.st6.d.next = self.wr_data.val(),
                312 => self.st7.d.next = self.wr_data.val(),
                // A commit naming an index past its table is ignored and counted (no aliasing).
                320 => {
                    self.qp_commit.next = self.wr_data.val().get_bits::<24>(8) == 0;
                    self.bad_index.next = self.wr_data.val().get_bits::<24>(8) != 0;
                }
                328 => {
                    self.mr_commit.next = self.wr_data.val().get_bits::<24>(8) == 0;
                    self.bad_index.next = self.wr_data.val().get_bits::<24>(8) != 0;
                }
                336 => {
                    self.cq_commit.next = self.wr_data.val().get_bits::<26>(6) == 0;
                    self.bad_index.next = self.wr_data.val().get_bits::<26>(6) != 0;
                }
                344 => self.fence_start.next = true,
                352 => self.ctl_base.d.next = self.wr_data.val(),
                360 => {
                    self.ctl_log2.d.next = self.wr_data.val().get_bits::<8>(0);
                    self.ctl_size.d.next = 0.into();
                    if (self.wr_data.val().get_bits::<8>(0) != 0) & (self.wr_data.val().get_bits::<8>(0) <= 16) {
                        self.ctl_size.d.next = bits::<32>(1) << bit_cast::<32, 8>(self.wr_data.val().get_bits::<8>(0));
                    }
                    self.ctl_rst.d.next = true;
                }
                368 => self.ctl_ci.d.next = self.wr_data.val().get_bits::<32>(0),
                376 => {
                    self.sq_rewind.next = self.wr_data.val().get_bits::<24>(8) == 0;
                    self.bad_index.next = self.wr_data.val().get_bits::<24>(8) != 0;
                }
                384 => self.rto_q.d.next = self.wr_data.val().get_bits::<32>(0),
                432 => {
                    self.cq_arm.next = self.wr_data.val().get_bits::<58>(6) == 0;
                    self.bad_index.next = self.wr_data.val().get_bits::<58>(6) != 0;
                }
                416 => self.probe_q.d.next = self.wr_data.val().get_bits::<32>(0),
                424 => {
                    self.cwq_q.d.next = self.wr_data.val().get_bits::<QPN_BITS>(0);
                    // The window table is addressed in the write's cycle: a read the next cycle sees this QP's.
                    self.cc_query_qpn.next = self.wr_data.val().get_bits::<QPN_BITS>(0);
                }
                400 => self.hold_q.d.next = self.wr_data.val().get_bits::<8>(0),
                408 => self.ccp.d.next = self.stage.val(),
                392 => {
                    self.rx_sr_set.next = self.wr_data.val().get_bits::<24>(8) == 0;
                    self.bad_index.next = self.wr_data.val().get_bits::<24>(8) != 0;
                }
                _ => {}
            }
            // Doorbell pages: 0x10_0000 + 8*qpn (SQ), 0x20_0000 + 8*qpn (RQ).
            if self.wr_addr.val().get_bits::<12>(20) == 1 {
                self.sq_db.next = self.wr_addr.val().get_bits::<9>(11) == 0;
                self.bad_index.next = self.wr_addr.val().get_bits::<9>(11) != 0;
            }
            if self.wr_addr.val().get_bits::<12>(20) == 2 {
                self.rq_db.next = self.wr_addr.val().get_bits::<9>(11) == 0;
                self.bad_index.next = self.wr_addr.val().get_bits::<9>(11) != 0;
            }
            // The WQE push window: 0x30_0000 + 8*i, i < 16.
            if self.wr_addr.val().get_bits::<13>(19) == 6 {
                self.push_we.next = self.wr_addr.val().get_bits::<12>(7) == 0;
                self.bad_index.next = self.wr_addr.val().get_bits::<12>(7) != 0;
            }
            // The MSI-X table: 0x38_0000 + 8*i, i < 16 (the pending bits are read-only).
            if self.wr_addr.val().get_bits::<13>(19) == 7 {
                self.msix_we.next = self.wr_addr.val().get_bits::<12>(7) == 0;
                self.bad_index.next = self.wr_addr.val().get_bits::<12>(7) != 0;
            }
        }
        if self.inc_q.q.val().get_bit(0) {
            self.c0.d.next = self.c0.q.val() + 1;
        }
        if self.inc_q.q.val().get_bit(1) {
            self.c1.d.next = self.c1.q.val() + 1;
        }
        if self.inc_q.q.val().get_bit(2) {
            self.c2.d.next = self.c2.q.val() + 1;
        }
        if self.inc_q.q.val().get_bit(3) {
            self.c3.d.next = self.c3.q.val() + 1;
        }
        self.c4.d.next = self.c4.q.val()
            + bit_cast::<64, 1>(self.inc_q.q.val().get_bit(4).into())
            + bit_cast::<64, 2>(self.hdr2_q.q.val());
        if self.inc_q.q.val().get_bit(5) {
            self.c5.d.next = self.c5.q.val() + 1;
        }
        if self.inc_q.q.val().get_bit(6) {
            self.c6.d.next = self.c6.q.val() + 1;
        }
        if self.inc_q.q.val().get_bit(7) {
            self.c7.d.next = self.c7.q.val() + 1;
        }
        if self.inc_q.q.val().get_bit(8) {
            self.c8.d.next = self.c8.q.val() + 1;
        }
        if self.inc_q.q.val().get_bit(9) {
            self.c9.d.next = self.c9.q.val() + 1;
        }
        if self.inc_q.q.val().get_bit(10) {
            self.c10.d.next = self.c10.q.val() + 1;
        }
        if self.inc_q.q.val().get_bit(11) {
            self.c11.d.next = self.c11.q.val() + 1;
        }
        if self.inc_q.q.val().get_bit(12) {
            self.c12.d.next = self.c12.q.val() + 1;
        }
        if self.inc_q.q.val().get_bit(13) {
            self.c13.d.next = self.c13.q.val() + 1;
        }
        if self.inc_q.q.val().get_bit(14) | self.bad_index.val() {
            self.c14.d.next = self.c14.q.val() + 1;
        }
        if self.inc_q.q.val().get_bit(15) {
            self.c15.d.next = self.c15.q.val() + 1;
        }
        if self.inc_q.q.val().get_bit(16) {
            self.c16.d.next = self.c16.q.val() + 1;
        }
        if self.inc_q.q.val().get_bit(17) {
            self.c17.d.next = self.c17.q.val() + 1;
        }
        if self.inc_q.q.val().get_bit(18) {
            self.c18.d.next = self.c18.q.val() + 1;
        }
        if self.inc_q.q.val().get_bit(19) {
            self.c19.d.next = self.c19.q.val() + 1;
        }
        if self.inc_q.q.val().get_bit(20) {
            self.c20.d.next = self.c20.q.val() + 1;
        }
        if self.inc_q.q.val().get_bit(21) {
            self.c21.d.next = self.c21.q.val() + 1;
        }
        if self.inc_q.q.val().get_bit(22) {
            self.c22.d.next = self.c22.q.val() + 1;
        }
        if self.inc_q.q.val().get_bit(23) {
            self.c23.d.next = self.c23.q.val() + 1;
        }
        if self.inc_q.q.val().get_bit(24) {
            self.c24.d.next = self.c24.q.val() + 1;
        }
        if self.inc_q.q.val().get_bit(25) {
            self.c25.d.next = self.c25.q.val() + 1;
        }
        if self.inc_q.q.val().get_bit(26) {
            self.c26.d.next = self.c26.q.val() + 1;
        }
        if self.inc_q.q.val().get_bit(27) {
            self.c27.d.next = self.c27.q.val() + 1;
        }
        self.resp_v.d.next = self.rd_valid.val();
        self.sel.next = self.rd_addr.val();
        self.resp_d.d.next = 0.into();
        match self.sel.val().index() {
            0 => self.resp_d.d.next = 0x524E_4943_0000_0001_u64.into(),
            8 => self.resp_d.d.next = 0x8106_0808_u64.into(),
            16 => self.resp_d.d.next = bit_cast::<64, 48>(self.mac.q.val()),
            24 => self.resp_d.d.next = bit_cast::<64, 32>(self.ip.q.val()),
            32 => self.resp_d.d.next = self.cycles.q.val(),
            40 => self.resp_d.d.next = bit_cast::<64, 1>(self.ready.val().into()),
            512 => self.resp_d.d.next = self.c0.q.val(),
            520 => self.resp_d.d.next = self.c1.q.val(),
            528 => self.resp_d.d.next = self.c2.q.val(),
            536 => self.resp_d.d.next = self.c3.q.val(),
            544 => self.resp_d.d.next = self.c4.q.val(),
            552 => self.resp_d.d.next = self.c5.q.val(),
            560 => self.resp_d.d.next = self.c6.q.val(),
            568 => self.resp_d.d.next = self.c7.q.val(),
            576 => self.resp_d.d.next = self.c8.q.val(),
            584 => self.resp_d.d.next = self.c9.q.val(),
            592 => self.resp_d.d.next = self.c10.q.val(),
            600 => self.resp_d.d.next = self.c11.q.val(),
            608 => self.resp_d.d.next = self.c12.q.val(),
            616 => self.resp_d.d.next = self.c13.q.val(),
            624 => self.resp_d.d.next = self.c14.q.val(),
            632 => self.resp_d.d.next = self.c15.q.val(),
            640 => self.resp_d.d.next = self.c16.q.val(),
            648 => self.resp_d.d.next = self.c17.q.val(),
            656 => self.resp_d.d.next = self.c18.q.val(),
            664 => self.resp_d.d.next = self.c19.q.val(),
            672 => self.resp_d.d.next = self.c20.q.val(),
            680 => self.resp_d.d.next = self.c21.q.val(),
            688 => self.resp_d.d.next = self.c22.q.val(),
            696 => self.resp_d.d.next = self.c23.q.val(),
            704 => self.resp_d.d.next = self.c24.q.val(),
            712 => self.resp_d.d.next = self.c25.q.val(),
            720 => self.resp_d.d.next = self.c26.q.val(),
            728 => self.resp_d.d.next = self.c27.q.val(),
            440 => self.resp_d.d.next = self.cq_armed.val(),
            3672064 => self.resp_d.d.next = bit_cast::<64, 8>(self.msix_pba.val()),
            384 => self.resp_d.d.next = bit_cast::<64, 32>(self.rto_q.q.val()),
            416 => self.resp_d.d.next = bit_cast::<64, 32>(self.probe_q.q.val()),
            424 => self.resp_d.d.next = bit_cast::<64, 32>(self.cc_query_cwnd.val()),
            400 => self.resp_d.d.next = bit_cast::<64, 8>(self.hold_q.q.val()),
            352 => self.resp_d.d.next = self.ctl_base.q.val(),
            360 => self.resp_d.d.next = bit_cast::<64, 8>(self.ctl_log2.q.val()),
            368 => self.resp_d.d.next = bit_cast::<64, 32>(self.ctl_ci.q.val()),
            344 => self.resp_d.d.next = bit_cast::<64, 1>(self.fence_busy.val().into()),
            _ => {}
        }
        if (self.sel.val().get_bits::<13>(19) == 7) & (self.sel.val().get_bits::<12>(7) == 0) {
            self.resp_d.d.next = self.msix_rd.val();
        }
        self.rd_resp_valid.next = self.resp_v.q.val();
        self.rd_resp_data.next = self.resp_d.q.val();
    }
}
