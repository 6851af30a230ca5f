//! `RnicShell`: the core with the board adapters around it, the one module
//! a board's top level instantiates between the Xilinx IP cores: the
//! UltraScale+ PCIe block's four AXI4-Stream interfaces (through
//! [`crate::usp_bar`], [`crate::usp_rq`] and [`crate::usp_rc`]) and the
//! 100G CMAC's AXI4-Stream TX and RX (through two [`crate::cdc::CdcFifo`]s
//! between the MAC's clock and the core's).
//!
//! Clocks: `clock` is the PCIe block's `user_clk` (250 MHz), the core's;
//! `mac_clock` is the CMAC's `gt_txusrclk2` (322.27 MHz), which also clocks
//! its RX stream (`rx_clk` tied to it). Resets: `reset` (core clock) and
//! `mac_reset` (MAC clock), both synchronous and active high. Either one
//! resets both FIFOs: each reset is carried into the other domain through
//! two flip-flops, so a link that goes down does not reset the core, and a
//! function reset of the core empties the MAC-side FIFOs too. A core reset
//! that arrives while the MAC is in the middle of a frame ends that frame
//! with a one-byte beat carrying `mac_tx_tuser` (the CMAC sends it with a
//! bad FCS, so no receiver takes it) rather than leaving it open.
//!
//! The TX FIFO holds a whole frame before the MAC sees it (the CMAC must get
//! a frame's beats back to back); the RX FIFO drops a frame that does not
//! fit, and one the MAC marks bad (`tuser` on the last beat: FCS error), and
//! pulses `mac_rx_dropped` (MAC clock) for each; each drop is also counted in
//! the core's `RX_MAC_DROP` register (a 4-bit Gray count crosses to the
//! core's clock, which counts up to it one a cycle: drops come at most one
//! every two MAC cycles, so the core side keeps up and none is lost).

use crate::cdc::CdcFifo;
use crate::core::RnicCore;
use crate::reg::Reg;
use crate::usp_bar::UspBar;
use crate::usp_rc::UspRc;
use crate::usp_rq::UspRq;
use rnic_spec::{params, wire};
use rust_hdl::prelude::*;

/// log2 of each MAC FIFO's depth in 64-byte beats: 32 KiB, the depth of one
/// row of 72-bit-wide block RAMs the 576-bit beat needs anyway (eight
/// RAMB36), so the largest jumbo frame a CMAC passes (16,383 bytes) fits and
/// the RX side rides out the core's stalls.
pub const MAC_FIFO_LOG2: usize = 9;
/// The largest frame: rnic's header, a 4 KiB payload, the ICRC.
const MAX_FRAME_BEATS: usize = (wire::HDR_LEN + (1 << params::PMTU_LOG2_MAX) + 4).div_ceil(params::DATA_BYTES);
// The TX FIFO publishes whole frames, so the largest must fit, with room for the RX side's pointer round trip.
const _: () = assert!(MAX_FRAME_BEATS + 16 <= 1 << MAC_FIFO_LOG2 && 16_383usize.div_ceil(64) <= 1 << MAC_FIFO_LOG2);

/// The core and its board adapters.
#[derive(LogicBlock, Default)]
pub struct RnicShell {
    /// Core clock: the PCIe block's `user_clk`.
    pub clock: Signal<In, Clock>,
    /// Core reset (synchronous, active high): the PCIe block's `user_reset`.
    pub reset: Signal<In, Bit>,
    /// `m_axis_cq_tdata`.
    pub cq_tdata: Signal<In, Bits<512>>,
    /// `m_axis_cq_tuser`.
    pub cq_tuser: Signal<In, Bits<183>>,
    /// `m_axis_cq_tlast`.
    pub cq_tlast: Signal<In, Bit>,
    /// `m_axis_cq_tvalid`.
    pub cq_tvalid: Signal<In, Bit>,
    /// `m_axis_cq_tready`.
    pub cq_tready: Signal<Out, Bit>,
    /// `pcie_cq_np_req`.
    pub cq_np_req: Signal<Out, Bits<2>>,
    /// `s_axis_cc_tdata`.
    pub cc_tdata: Signal<Out, Bits<512>>,
    /// `s_axis_cc_tuser`.
    pub cc_tuser: Signal<Out, Bits<81>>,
    /// `s_axis_cc_tkeep`.
    pub cc_tkeep: Signal<Out, Bits<16>>,
    /// `s_axis_cc_tlast`.
    pub cc_tlast: Signal<Out, Bit>,
    /// `s_axis_cc_tvalid`.
    pub cc_tvalid: Signal<Out, Bit>,
    /// `s_axis_cc_tready`.
    pub cc_tready: Signal<In, Bits<4>>,
    /// `s_axis_rq_tdata`.
    pub rq_tdata: Signal<Out, Bits<512>>,
    /// `s_axis_rq_tuser`.
    pub rq_tuser: Signal<Out, Bits<137>>,
    /// `s_axis_rq_tkeep`.
    pub rq_tkeep: Signal<Out, Bits<16>>,
    /// `s_axis_rq_tlast`.
    pub rq_tlast: Signal<Out, Bit>,
    /// `s_axis_rq_tvalid`.
    pub rq_tvalid: Signal<Out, Bit>,
    /// `s_axis_rq_tready`.
    pub rq_tready: Signal<In, Bits<4>>,
    /// `m_axis_rc_tdata`.
    pub rc_tdata: Signal<In, Bits<512>>,
    /// `m_axis_rc_tuser`.
    pub rc_tuser: Signal<In, Bits<161>>,
    /// `m_axis_rc_tlast`.
    pub rc_tlast: Signal<In, Bit>,
    /// `m_axis_rc_tvalid`.
    pub rc_tvalid: Signal<In, Bit>,
    /// `m_axis_rc_tready`.
    pub rc_tready: Signal<Out, Bit>,
    /// `cfg_max_payload` (0: 128 B .. 3: 1024 B).
    pub cfg_max_payload: Signal<In, Bits<2>>,
    /// `cfg_max_read_req` (0: 128 B .. 5: 4096 B).
    pub cfg_max_read_req: Signal<In, Bits<3>>,
    /// Pulse: a completion was dropped (error status, poison, discontinue).
    pub pcie_cpl_err: Signal<Out, Bit>,
    /// Pulse: a BAR request was refused or dropped.
    pub pcie_bad_req: Signal<Out, Bit>,
    /// MAC clock: the CMAC's `gt_txusrclk2`.
    pub mac_clock: Signal<In, Clock>,
    /// MAC-side reset (synchronous to `mac_clock`, active high): the CMAC's `usr_tx_reset`.
    pub mac_reset: Signal<In, Bit>,
    /// CMAC `tx_axis_tdata`.
    pub mac_tx_tdata: Signal<Out, Bits<512>>,
    /// CMAC `tx_axis_tkeep`.
    pub mac_tx_tkeep: Signal<Out, Bits<64>>,
    /// CMAC `tx_axis_tlast`.
    pub mac_tx_tlast: Signal<Out, Bit>,
    /// CMAC `tx_axis_tuser`: with the last beat, the frame is bad (the CMAC
    /// ends it with a bad FCS). Raised on the one-byte beat that ends a frame
    /// a core reset cut off.
    pub mac_tx_tuser: Signal<Out, Bit>,
    /// CMAC `tx_axis_tvalid`.
    pub mac_tx_tvalid: Signal<Out, Bit>,
    /// CMAC `tx_axis_tready`.
    pub mac_tx_tready: Signal<In, Bit>,
    /// CMAC `rx_axis_tdata`.
    pub mac_rx_tdata: Signal<In, Bits<512>>,
    /// CMAC `rx_axis_tkeep`.
    pub mac_rx_tkeep: Signal<In, Bits<64>>,
    /// CMAC `rx_axis_tlast`.
    pub mac_rx_tlast: Signal<In, Bit>,
    /// CMAC `rx_axis_tvalid` (there is no ready).
    pub mac_rx_tvalid: Signal<In, Bit>,
    /// CMAC `rx_axis_tuser`: with the last beat, a bad frame.
    pub mac_rx_tuser: Signal<In, Bit>,
    /// Pulse (MAC clock): a received frame was dropped (FIFO full or bad frame).
    pub mac_rx_dropped: Signal<Out, Bit>,
    /// Core clock: a received frame waits in the RX FIFO for the core (a quiescence probe for tests).
    pub mac_rx_pending: Signal<Out, Bit>,
    core: RnicCore,
    bar: UspBar,
    rq: UspRq,
    rc: UspRc,
    tx_fifo: CdcFifo<Bits<576>, MAC_FIFO_LOG2, 10>,
    rx_fifo: CdcFifo<Bits<576>, MAC_FIFO_LOG2, 10>,
    /// `mac_reset` in the core's clock, and `reset` in the MAC's.
    mac_reset_s1: Reg<Bit>,
    mac_reset_s2: Reg<Bit>,
    core_reset_s1: Reg<Bit>,
    core_reset_s2: Reg<Bit>,
    /// The FIFOs' resets on each side.
    fifo_core_reset: Signal<Local, Bit>,
    fifo_mac_reset: Signal<Local, Bit>,
    /// The MAC has taken a frame's first beats and not its last.
    tx_mid: Reg<Bit>,
    /// An abort beat waits for `mac_tx_tready`.
    tx_abort: Reg<Bit>,
    /// The MAC is shown the abort beat this cycle.
    abort_now: Signal<Local, Bit>,
    tx_fire: Signal<Local, Bit>,
    /// RX drops counted in the MAC's clock (binary, and Gray to cross).
    drop_count: Reg<Bits<4>>,
    drop_gray: Reg<Bits<4>>,
    /// The Gray count in the core's clock, and the drops passed to the core's counter so far.
    drop_gray_s1: Reg<Bits<4>>,
    drop_gray_s2: Reg<Bits<4>>,
    drop_seen: Reg<Bits<4>>,
    drop_next: Signal<Local, Bits<4>>,
    drop_bin: Signal<Local, Bits<4>>,
}

impl Logic for RnicShell {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, mac_reset_s1, mac_reset_s2, drop_gray_s1, drop_gray_s2, drop_seen);
        dff_setup!(self, mac_clock, core_reset_s1, core_reset_s2, drop_count, drop_gray, tx_mid, tx_abort);
        // Only the MAC's own reset forgets its frame: a core reset must end it.
        self.tx_mid.reset.next = self.mac_reset.val();
        self.tx_abort.reset.next = self.mac_reset.val();
        self.drop_gray_s1.reset.next = self.reset.val();
        self.drop_gray_s2.reset.next = self.reset.val();
        self.drop_seen.reset.next = self.reset.val();
        self.drop_count.reset.next = self.mac_reset.val();
        self.drop_gray.reset.next = self.mac_reset.val();
        self.mac_reset_s1.reset.next = self.reset.val();
        self.mac_reset_s2.reset.next = self.reset.val();
        self.core_reset_s1.reset.next = self.mac_reset.val();
        self.core_reset_s2.reset.next = self.mac_reset.val();
        self.mac_reset_s1.d.next = self.mac_reset.val();
        self.mac_reset_s2.d.next = self.mac_reset_s1.q.val();
        self.core_reset_s1.d.next = self.reset.val();
        self.core_reset_s2.d.next = self.core_reset_s1.q.val();
        self.fifo_core_reset.next = self.reset.val() | self.mac_reset_s2.q.val();
        self.fifo_mac_reset.next = self.mac_reset.val() | self.core_reset_s2.q.val();
        // The core and the PCIe adapters, on the core clock.
        self.core.clock.next = self.clock.val();
        self.core.reset.next = self.reset.val();
        self.bar.clock.next = self.clock.val();
        self.bar.reset.next = self.reset.val();
        self.rq.clock.next = self.clock.val();
        self.rq.reset.next = self.reset.val();
        self.rc.clock.next = self.clock.val();
        self.rc.reset.next = self.reset.val();
        self.bar.cq_tdata.next = self.cq_tdata.val();
        self.bar.cq_tuser.next = self.cq_tuser.val();
        self.bar.cq_tlast.next = self.cq_tlast.val();
        self.bar.cq_tvalid.next = self.cq_tvalid.val();
        self.cq_tready.next = self.bar.cq_tready.val();
        self.cq_np_req.next = self.bar.cq_np_req.val();
        self.cc_tdata.next = self.bar.cc_tdata.val();
        self.cc_tuser.next = self.bar.cc_tuser.val();
        self.cc_tkeep.next = self.bar.cc_tkeep.val();
        self.cc_tlast.next = self.bar.cc_tlast.val();
        self.cc_tvalid.next = self.bar.cc_tvalid.val();
        self.bar.cc_tready.next = self.cc_tready.val();
        self.core.reg_wr_valid.next = self.bar.reg_wr_valid.val();
        self.core.reg_wr_addr.next = self.bar.reg_wr_addr.val();
        self.core.reg_wr_data.next = self.bar.reg_wr_data.val();
        self.core.reg_rd_valid.next = self.bar.reg_rd_valid.val();
        self.core.reg_rd_addr.next = self.bar.reg_rd_addr.val();
        self.bar.reg_rd_resp_valid.next = self.core.reg_rd_resp_valid.val();
        self.bar.reg_rd_resp_data.next = self.core.reg_rd_resp_data.val();
        self.pcie_bad_req.next = self.bar.bad_req.val();
        self.core.pcie_mps.next = bit_cast::<3, 2>(self.cfg_max_payload.val());
        self.core.pcie_mrrs.next = self.cfg_max_read_req.val();
        self.rq.rd_valid.next = self.core.pcie_rq_valid.val();
        self.core.pcie_rq_ready.next = self.rq.rd_ready.val();
        self.rq.rd_addr.next = self.core.pcie_rq_addr.val();
        self.rq.rd_len.next = self.core.pcie_rq_len.val();
        self.rq.rd_tag.next = self.core.pcie_rq_tag.val();
        self.rq.wr_valid.next = self.core.pcie_wr_valid.val();
        self.core.pcie_wr_ready.next = self.rq.wr_ready.val();
        self.rq.wr_first.next = self.core.pcie_wr_first.val();
        self.rq.wr_last.next = self.core.pcie_wr_last.val();
        self.rq.wr_addr.next = self.core.pcie_wr_addr.val();
        self.rq.wr_len.next = self.core.pcie_wr_len.val();
        self.rq.wr_data.next = self.core.pcie_wr_data.val();
        self.rq_tdata.next = self.rq.rq_tdata.val();
        self.rq_tuser.next = self.rq.rq_tuser.val();
        self.rq_tkeep.next = self.rq.rq_tkeep.val();
        self.rq_tlast.next = self.rq.rq_tlast.val();
        self.rq_tvalid.next = self.rq.rq_tvalid.val();
        self.rq.rq_tready.next = self.rq_tready.val();
        self.rc.rc_tdata.next = self.rc_tdata.val();
        self.rc.rc_tuser.next = self.rc_tuser.val();
        self.rc.rc_tlast.next = self.rc_tlast.val();
        self.rc.rc_tvalid.next = self.rc_tvalid.val();
        self.rc_tready.next = self.rc.rc_tready.val();
        self.core.pcie_rc_valid.next = self.rc.valid.val();
        self.core.pcie_rc_data.next = self.rc.data.val();
        self.core.pcie_rc_tag.next = self.rc.tag.val();
        self.core.pcie_rc_addr.next = self.rc.addr.val();
        self.core.pcie_rc_done.next = self.rc.done.val();
        self.pcie_cpl_err.next = self.rc.cpl_err.val();
        // TX: core clock to MAC clock, whole frames, waiting when full.
        self.tx_fifo.wr_clock.next = self.clock.val();
        self.tx_fifo.wr_reset.next = self.fifo_core_reset.val();
        self.tx_fifo.rd_clock.next = self.mac_clock.val();
        self.tx_fifo.rd_reset.next = self.fifo_mac_reset.val();
        self.tx_fifo.drop_on_full.next = false;
        self.tx_fifo.wr_bad.next = false;
        self.tx_fifo.wr_valid.next = self.core.net_tx_valid.val();
        self.core.net_tx_ready.next = self.tx_fifo.wr_ready.val();
        self.tx_fifo.wr_data.next = (bit_cast::<576, 64>(self.core.net_tx_keep.val()) << 512)
            | bit_cast::<576, 512>(self.core.net_tx_data.val());
        self.tx_fifo.wr_last.next = self.core.net_tx_last.val();
        // A reset of the FIFO's read side in the middle of a frame would leave
        // the MAC with a frame that never ends (the next frame's beats would
        // join it): the frame is ended with one byte and `tuser` instead.
        self.abort_now.next = self.tx_abort.q.val() | (self.fifo_mac_reset.val() & self.tx_mid.q.val());
        self.mac_tx_tvalid.next = self.abort_now.val() | (self.tx_fifo.rd_valid.val() & !self.fifo_mac_reset.val());
        self.tx_fifo.rd_ready.next = self.mac_tx_tready.val() & !self.abort_now.val() & !self.fifo_mac_reset.val();
        self.mac_tx_tdata.next = self.tx_fifo.rd_data.val().get_bits::<512>(0);
        self.mac_tx_tkeep.next = self.tx_fifo.rd_data.val().get_bits::<64>(512);
        self.mac_tx_tlast.next = self.tx_fifo.rd_last.val();
        self.mac_tx_tuser.next = self.abort_now.val();
        if self.abort_now.val() {
            self.mac_tx_tkeep.next = 1.into();
            self.mac_tx_tlast.next = true;
        }
        self.tx_fire.next = self.mac_tx_tvalid.val() & self.mac_tx_tready.val();
        self.tx_mid.d.next = self.tx_mid.q.val();
        if self.tx_fire.val() {
            self.tx_mid.d.next = !self.mac_tx_tlast.val();
        }
        self.tx_abort.d.next = self.abort_now.val() & !self.mac_tx_tready.val();
        // RX: MAC clock to core clock, whole frames, dropping when full or bad.
        self.rx_fifo.wr_clock.next = self.mac_clock.val();
        self.rx_fifo.wr_reset.next = self.fifo_mac_reset.val();
        self.rx_fifo.rd_clock.next = self.clock.val();
        self.rx_fifo.rd_reset.next = self.fifo_core_reset.val();
        self.rx_fifo.drop_on_full.next = true;
        self.rx_fifo.wr_valid.next = self.mac_rx_tvalid.val();
        self.rx_fifo.wr_data.next =
            (bit_cast::<576, 64>(self.mac_rx_tkeep.val()) << 512) | bit_cast::<576, 512>(self.mac_rx_tdata.val());
        self.rx_fifo.wr_last.next = self.mac_rx_tlast.val();
        self.rx_fifo.wr_bad.next = self.mac_rx_tuser.val();
        self.mac_rx_dropped.next = self.rx_fifo.dropped.val();
        // Each drop reaches the core's RX_MAC_DROP counter: a Gray count crosses
        // (no pulse is lost), and the core side counts up to it one a cycle.
        self.drop_next.next = self.drop_count.q.val();
        if self.rx_fifo.dropped.val() {
            self.drop_next.next = self.drop_count.q.val() + 1;
        }
        self.drop_count.d.next = self.drop_next.val();
        self.drop_gray.d.next = self.drop_next.val() ^ (self.drop_next.val() >> 1);
        self.drop_gray_s1.d.next = self.drop_gray.q.val();
        self.drop_gray_s2.d.next = self.drop_gray_s1.q.val();
        self.drop_bin.next = self.drop_gray_s2.q.val()
            ^ (self.drop_gray_s2.q.val() >> 1)
            ^ (self.drop_gray_s2.q.val() >> 2)
            ^ (self.drop_gray_s2.q.val() >> 3);
        self.core.net_rx_mac_drop.next = self.drop_bin.val() != self.drop_seen.q.val();
        if self.drop_bin.val() != self.drop_seen.q.val() {
            self.drop_seen.d.next = self.drop_seen.q.val() + 1;
        }
        self.core.net_rx_valid.next = self.rx_fifo.rd_valid.val();
        self.mac_rx_pending.next = self.rx_fifo.rd_valid.val();
        self.rx_fifo.rd_ready.next = self.core.net_rx_ready.val();
        self.core.net_rx_data.next = self.rx_fifo.rd_data.val().get_bits::<512>(0);
        self.core.net_rx_keep.next = self.rx_fifo.rd_data.val().get_bits::<64>(512);
        self.core.net_rx_last.next = self.rx_fifo.rd_last.val();
    }
}

/// `(module name, verilog)` of what a board build needs from rnic: the
/// shell, its top module renamed from rust-hdl's `top` to `rnic_shell`.
pub fn board_verilog() -> (String, String) {
    let (_, v) = crate::verilog_tops().into_iter().find(|(n, _)| n == "shell").expect("the shell is a top");
    let renamed = v.replacen("module top(", "module rnic_shell(", 1);
    assert_ne!(renamed, v, "rust-hdl's top module header changed");
    ("rnic_shell".to_string(), renamed)
}
