// Port-only stand-ins for the Xilinx primitives and the two IP cores that
// firmware/rtl/rnic_board.v instantiates, so Verilator can lint the board
// top here (no Vivado). The port names and widths are transcribed from
// PG213 (pcie4_uscale_plus / pcie4c_uscale_plus, 512-bit interface), PG203
// (cmac_usplus with transceivers, AXI4-Stream) and UG974 (primitives);
// only Vivado's elaboration of the real IP checks them. No logic: outputs
// are tied to zero.
/* verilator lint_off UNUSEDSIGNAL */
/* verilator lint_off UNDRIVEN */
`default_nettype none

module IBUFDS_GTE4 #(parameter [1:0] REFCLK_HROW_CK_SEL = 2'b00) (
    input wire I, input wire IB, input wire CEB, output wire O, output wire ODIV2);
    assign O = 1'b0;
    assign ODIV2 = 1'b0;
endmodule

module BUFG_GT (input wire I, input wire CE, input wire CEMASK, input wire CLR, input wire CLRMASK,
    input wire [2:0] DIV, output wire O);
    assign O = I;
endmodule

module IBUFDS (input wire I, input wire IB, output wire O);
    assign O = I;
endmodule

module BUFGCE_DIV #(parameter integer BUFGCE_DIVIDE = 1) (input wire I, input wire CE, input wire CLR, output wire O);
    assign O = I;
endmodule

module rnic_pcie (
    output wire [15:0] pci_exp_txp, output wire [15:0] pci_exp_txn,
    input wire [15:0] pci_exp_rxp, input wire [15:0] pci_exp_rxn,
    input wire sys_clk, input wire sys_clk_gt, input wire sys_reset,
    output wire user_clk, output wire user_reset, output wire user_lnk_up,
    output wire [511:0] m_axis_cq_tdata, output wire [182:0] m_axis_cq_tuser, output wire m_axis_cq_tlast,
    output wire [15:0] m_axis_cq_tkeep, output wire m_axis_cq_tvalid, input wire m_axis_cq_tready,
    input wire [1:0] pcie_cq_np_req, output wire [5:0] pcie_cq_np_req_count,
    input wire [511:0] s_axis_cc_tdata, input wire [80:0] s_axis_cc_tuser, input wire s_axis_cc_tlast,
    input wire [15:0] s_axis_cc_tkeep, input wire s_axis_cc_tvalid, output wire [3:0] s_axis_cc_tready,
    input wire [511:0] s_axis_rq_tdata, input wire [136:0] s_axis_rq_tuser, input wire s_axis_rq_tlast,
    input wire [15:0] s_axis_rq_tkeep, input wire s_axis_rq_tvalid, output wire [3:0] s_axis_rq_tready,
    output wire [511:0] m_axis_rc_tdata, output wire [160:0] m_axis_rc_tuser, output wire m_axis_rc_tlast,
    output wire [15:0] m_axis_rc_tkeep, output wire m_axis_rc_tvalid, input wire m_axis_rc_tready,
    output wire [1:0] cfg_max_payload, output wire [2:0] cfg_max_read_req,
    output wire [3:0] cfg_flr_in_process, input wire [3:0] cfg_flr_done,
    input wire cfg_vf_flr_done, input wire [7:0] cfg_vf_flr_func_num,
    input wire [3:0] cfg_interrupt_int, input wire [3:0] cfg_interrupt_pending,
    input wire cfg_config_space_enable, input wire cfg_link_training_enable,
    input wire [9:0] cfg_mgmt_addr, input wire [7:0] cfg_mgmt_function_number, input wire cfg_mgmt_write,
    input wire [31:0] cfg_mgmt_write_data, input wire [3:0] cfg_mgmt_byte_enable, input wire cfg_mgmt_read,
    input wire cfg_mgmt_debug_access, input wire [63:0] cfg_dsn, input wire cfg_power_state_change_ack,
    input wire cfg_err_cor_in, input wire cfg_err_uncor_in, input wire cfg_hot_reset_in,
    input wire cfg_req_pm_transition_l23_ready
);
    assign {pci_exp_txp, pci_exp_txn, user_clk, user_reset, user_lnk_up} = '0;
    assign {m_axis_cq_tdata, m_axis_cq_tuser, m_axis_cq_tlast, m_axis_cq_tkeep, m_axis_cq_tvalid} = '0;
    assign {pcie_cq_np_req_count, s_axis_cc_tready, s_axis_rq_tready} = '0;
    assign {m_axis_rc_tdata, m_axis_rc_tuser, m_axis_rc_tlast, m_axis_rc_tkeep, m_axis_rc_tvalid} = '0;
    assign {cfg_max_payload, cfg_max_read_req, cfg_flr_in_process} = '0;
endmodule

module rnic_cmac (
    input wire [3:0] gt_rxp_in, input wire [3:0] gt_rxn_in, output wire [3:0] gt_txp_out, output wire [3:0] gt_txn_out,
    input wire gt_ref_clk_p, input wire gt_ref_clk_n,
    output wire gt_txusrclk2, output wire gt_rxusrclk2, input wire [11:0] gt_loopback_in,
    output wire gt_ref_clk_out, output wire [3:0] gt_powergoodout,
    input wire gtwiz_reset_tx_datapath, input wire gtwiz_reset_rx_datapath,
    input wire init_clk, input wire sys_reset,
    input wire core_rx_reset, input wire core_tx_reset, input wire core_drp_reset,
    input wire drp_clk, input wire [9:0] drp_addr, input wire [15:0] drp_di, input wire drp_en, input wire drp_we,
    output wire [15:0] drp_do, output wire drp_rdy,
    input wire rx_clk, output wire usr_rx_reset, output wire usr_tx_reset,
    output wire rx_axis_tvalid, output wire [511:0] rx_axis_tdata, output wire rx_axis_tlast,
    output wire [63:0] rx_axis_tkeep, output wire rx_axis_tuser,
    output wire tx_axis_tready, input wire tx_axis_tvalid, input wire [511:0] tx_axis_tdata,
    input wire tx_axis_tlast, input wire [63:0] tx_axis_tkeep, input wire tx_axis_tuser,
    input wire [55:0] tx_preamblein, output wire [55:0] rx_preambleout, output wire tx_ovfout, output wire tx_unfout,
    input wire ctl_rx_enable, input wire ctl_rx_force_resync, input wire ctl_rx_test_pattern,
    input wire ctl_tx_enable, input wire ctl_tx_send_idle, input wire ctl_tx_send_rfi,
    input wire ctl_tx_send_lfi, input wire ctl_tx_test_pattern,
    input wire ctl_rx_rsfec_enable, input wire ctl_tx_rsfec_enable,
    input wire ctl_rsfec_ieee_error_indication_mode,
    input wire ctl_rx_rsfec_enable_correction, input wire ctl_rx_rsfec_enable_indication,
    output wire stat_rx_aligned
);
    assign {gt_txp_out, gt_txn_out, gt_txusrclk2, gt_rxusrclk2, gt_ref_clk_out, gt_powergoodout} = '0;
    assign {drp_do, drp_rdy, usr_rx_reset, usr_tx_reset} = '0;
    assign {rx_axis_tvalid, rx_axis_tdata, rx_axis_tlast, rx_axis_tkeep, rx_axis_tuser, tx_axis_tready} = '0;
    assign {rx_preambleout, tx_ovfout, tx_unfout, stat_rx_aligned} = '0;
endmodule

`default_nettype wire
