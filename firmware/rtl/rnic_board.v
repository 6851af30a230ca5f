// rnic board top level: the UltraScale+ PCIe block (IP `rnic_pcie`, Gen3 x16,
// 512-bit interfaces at 250 MHz), one 100G CMAC with its transceivers (IP
// `rnic_cmac`, 4x25G, AXI4-Stream) on the board's first QSFP28 cage, and
// rnic_shell (generated from the Rust RTL by scripts/board.sh) between them.
//
// One file for every board; the board is chosen with a Verilog define
// (BOARD_U250, BOARD_U280, BOARD_VCU118), set by firmware/tcl/build.tcl.
// The board differences here are the QSFP28 cage's control pins, the LEDs
// and the free-running clock that feeds the CMAC's init_clk.
`default_nettype none

module rnic_board (
    // PCIe edge connector.
    input  wire        pcie_refclk_p,
    input  wire        pcie_refclk_n,
    input  wire        pcie_perst_n,
    input  wire [15:0] pcie_rxp,
    input  wire [15:0] pcie_rxn,
    output wire [15:0] pcie_txp,
    output wire [15:0] pcie_txn,
    // QSFP28 cage 0.
    input  wire        qsfp_refclk_p,
    input  wire        qsfp_refclk_n,
    input  wire [3:0]  qsfp_rxp,
    input  wire [3:0]  qsfp_rxn,
    output wire [3:0]  qsfp_txp,
    output wire [3:0]  qsfp_txn,
`ifdef BOARD_U280
    output wire        qsfp_refclk_oe_b,
    output wire        qsfp_refclk_fs,
`else
    output wire        qsfp_modsell,
    output wire        qsfp_resetl,
    output wire        qsfp_lpmode,
`endif
`ifdef BOARD_U250
    output wire        qsfp_refclk_reset,
    output wire [1:0]  qsfp_fs,
`endif
`ifndef BOARD_U280
    output wire [2:0]  led,
`endif
    // Free-running differential clock for the CMAC's init_clk (divided by INIT_CLK_DIV).
    input  wire        init_clk_p,
    input  wire        init_clk_n
);

`ifdef BOARD_U250
    // 300 MHz board clock / 3 = 100 MHz.
    localparam integer INIT_CLK_DIV = 3;
`else
    // U280: 100 MHz; VCU118: 125 MHz.
    localparam integer INIT_CLK_DIV = 1;
`endif

    // ---- Clocks ----------------------------------------------------------
    wire pcie_sys_clk, pcie_sys_clk_gt, pcie_sys_clk_div2, init_clk_ibuf, init_clk;
    IBUFDS_GTE4 #(.REFCLK_HROW_CK_SEL(2'b00)) pcie_refclk_buf (
        .I(pcie_refclk_p), .IB(pcie_refclk_n), .CEB(1'b0), .O(pcie_sys_clk_gt), .ODIV2(pcie_sys_clk_div2)
    );
    BUFG_GT pcie_sys_clk_bufg (
        .I(pcie_sys_clk_div2), .CE(1'b1), .CEMASK(1'b0), .CLR(1'b0), .CLRMASK(1'b0), .DIV(3'd0), .O(pcie_sys_clk)
    );
    IBUFDS init_clk_buf (.I(init_clk_p), .IB(init_clk_n), .O(init_clk_ibuf));
    BUFGCE_DIV #(.BUFGCE_DIVIDE(INIT_CLK_DIV)) init_clk_bufg (
        .I(init_clk_ibuf), .CE(1'b1), .CLR(1'b0), .O(init_clk)
    );

    // ---- PCIe --------------------------------------------------------------
    wire         user_clk, user_reset, user_lnk_up;
    wire [511:0] cq_tdata, rc_tdata, cc_tdata, rq_tdata;
    wire [182:0] cq_tuser;
    wire [160:0] rc_tuser;
    wire [80:0]  cc_tuser;
    wire [136:0] rq_tuser;
    wire [15:0]  cc_tkeep, rq_tkeep;
    wire         cq_tlast, cq_tvalid, cq_tready, rc_tlast, rc_tvalid, rc_tready;
    wire         cc_tlast, cc_tvalid, rq_tlast, rq_tvalid;
    wire [3:0]   cc_tready, rq_tready;
    wire [1:0]   cq_np_req, cfg_max_payload;
    wire [2:0]   cfg_max_read_req;
    wire [3:0]   cfg_flr_in_process;
    wire         pcie_cpl_err, pcie_bad_req;

    // A function-level reset of PF0 resets the core (its tables are then
    // scrubbed; REG_STATUS.READY tells the host when it is done). The IP
    // waits for cfg_flr_done, given one cycle after the reset was applied.
    reg flr_seen = 1'b0;
    always @(posedge user_clk) flr_seen <= cfg_flr_in_process[0];
    wire core_reset = user_reset | cfg_flr_in_process[0];

    rnic_pcie pcie (
        .pci_exp_txp(pcie_txp), .pci_exp_txn(pcie_txn), .pci_exp_rxp(pcie_rxp), .pci_exp_rxn(pcie_rxn),
        .sys_clk(pcie_sys_clk), .sys_clk_gt(pcie_sys_clk_gt), .sys_reset(pcie_perst_n),
        .user_clk(user_clk), .user_reset(user_reset), .user_lnk_up(user_lnk_up),
        .m_axis_cq_tdata(cq_tdata), .m_axis_cq_tuser(cq_tuser), .m_axis_cq_tlast(cq_tlast),
        .m_axis_cq_tkeep(), .m_axis_cq_tvalid(cq_tvalid), .m_axis_cq_tready(cq_tready),
        .pcie_cq_np_req(cq_np_req), .pcie_cq_np_req_count(),
        .s_axis_cc_tdata(cc_tdata), .s_axis_cc_tuser(cc_tuser), .s_axis_cc_tlast(cc_tlast),
        .s_axis_cc_tkeep(cc_tkeep), .s_axis_cc_tvalid(cc_tvalid), .s_axis_cc_tready(cc_tready),
        .s_axis_rq_tdata(rq_tdata), .s_axis_rq_tuser(rq_tuser), .s_axis_rq_tlast(rq_tlast),
        .s_axis_rq_tkeep(rq_tkeep), .s_axis_rq_tvalid(rq_tvalid), .s_axis_rq_tready(rq_tready),
        .m_axis_rc_tdata(rc_tdata), .m_axis_rc_tuser(rc_tuser), .m_axis_rc_tlast(rc_tlast),
        .m_axis_rc_tkeep(), .m_axis_rc_tvalid(rc_tvalid), .m_axis_rc_tready(rc_tready),
        .cfg_max_payload(cfg_max_payload), .cfg_max_read_req(cfg_max_read_req),
        .cfg_flr_in_process(cfg_flr_in_process), .cfg_flr_done({3'b000, flr_seen & cfg_flr_in_process[0]}),
        .cfg_vf_flr_done(1'b0), .cfg_vf_flr_func_num(8'd0),
        .cfg_interrupt_int(4'd0), .cfg_interrupt_pending(4'd0),
        .cfg_config_space_enable(1'b1), .cfg_link_training_enable(1'b1),
        .cfg_mgmt_addr(10'd0), .cfg_mgmt_function_number(8'd0), .cfg_mgmt_write(1'b0),
        .cfg_mgmt_write_data(32'd0), .cfg_mgmt_byte_enable(4'd0), .cfg_mgmt_read(1'b0),
        .cfg_mgmt_debug_access(1'b0), .cfg_dsn(64'd0), .cfg_power_state_change_ack(1'b1),
        .cfg_err_cor_in(1'b0), .cfg_err_uncor_in(1'b0), .cfg_hot_reset_in(1'b0),
        .cfg_req_pm_transition_l23_ready(1'b0)
    );

    // ---- CMAC --------------------------------------------------------------
    wire         mac_clk, mac_tx_reset, mac_rx_reset, rx_aligned;
    wire [511:0] mac_tx_tdata, mac_rx_tdata;
    wire [63:0]  mac_tx_tkeep, mac_rx_tkeep;
    wire         mac_tx_tlast, mac_tx_tuser, mac_tx_tvalid, mac_tx_tready;
    wire         mac_rx_tlast, mac_rx_tvalid, mac_rx_tuser, mac_rx_dropped;

    // The init_clk domain holds the MAC in reset until the PCIe link is up (synchronized).
    reg [1:0] lnk_sync = 2'b00;
    always @(posedge init_clk) lnk_sync <= {lnk_sync[0], user_lnk_up};
    wire mac_sys_reset = ~lnk_sync[1];

    rnic_cmac cmac (
        .gt_rxp_in(qsfp_rxp), .gt_rxn_in(qsfp_rxn), .gt_txp_out(qsfp_txp), .gt_txn_out(qsfp_txn),
        .gt_ref_clk_p(qsfp_refclk_p), .gt_ref_clk_n(qsfp_refclk_n),
        .gt_txusrclk2(mac_clk), .gt_rxusrclk2(), .gt_loopback_in(12'd0), .gt_ref_clk_out(), .gt_powergoodout(),
        .gtwiz_reset_tx_datapath(1'b0), .gtwiz_reset_rx_datapath(1'b0),
        .init_clk(init_clk), .sys_reset(mac_sys_reset),
        .core_rx_reset(1'b0), .core_tx_reset(1'b0), .core_drp_reset(1'b0),
        .drp_clk(init_clk), .drp_addr(10'd0), .drp_di(16'd0), .drp_en(1'b0), .drp_we(1'b0), .drp_do(), .drp_rdy(),
        // RX on the TX user clock: one MAC clock domain.
        .rx_clk(mac_clk), .usr_rx_reset(mac_rx_reset), .usr_tx_reset(mac_tx_reset),
        .rx_axis_tvalid(mac_rx_tvalid), .rx_axis_tdata(mac_rx_tdata), .rx_axis_tlast(mac_rx_tlast),
        .rx_axis_tkeep(mac_rx_tkeep), .rx_axis_tuser(mac_rx_tuser),
        .tx_axis_tready(mac_tx_tready), .tx_axis_tvalid(mac_tx_tvalid), .tx_axis_tdata(mac_tx_tdata),
        .tx_axis_tlast(mac_tx_tlast), .tx_axis_tkeep(mac_tx_tkeep), .tx_axis_tuser(mac_tx_tuser),
        .tx_preamblein(56'd0), .rx_preambleout(), .tx_ovfout(), .tx_unfout(),
        .ctl_rx_enable(1'b1), .ctl_rx_force_resync(1'b0), .ctl_rx_test_pattern(1'b0),
        .ctl_tx_enable(rx_aligned), .ctl_tx_send_idle(1'b0), .ctl_tx_send_rfi(~rx_aligned),
        .ctl_tx_send_lfi(1'b0), .ctl_tx_test_pattern(1'b0),
        .ctl_rx_rsfec_enable(1'b1), .ctl_tx_rsfec_enable(1'b1),
        .ctl_rsfec_ieee_error_indication_mode(1'b0),
        .ctl_rx_rsfec_enable_correction(1'b1), .ctl_rx_rsfec_enable_indication(1'b1),
        .stat_rx_aligned(rx_aligned)
    );

    // ---- The NIC -----------------------------------------------------------
    rnic_shell shell (
        .clock(user_clk), .reset(core_reset),
        .cq_tdata(cq_tdata), .cq_tuser(cq_tuser), .cq_tlast(cq_tlast), .cq_tvalid(cq_tvalid),
        .cq_tready(cq_tready), .cq_np_req(cq_np_req),
        .cc_tdata(cc_tdata), .cc_tuser(cc_tuser), .cc_tkeep(cc_tkeep), .cc_tlast(cc_tlast),
        .cc_tvalid(cc_tvalid), .cc_tready(cc_tready),
        .rq_tdata(rq_tdata), .rq_tuser(rq_tuser), .rq_tkeep(rq_tkeep), .rq_tlast(rq_tlast),
        .rq_tvalid(rq_tvalid), .rq_tready(rq_tready),
        .rc_tdata(rc_tdata), .rc_tuser(rc_tuser), .rc_tlast(rc_tlast), .rc_tvalid(rc_tvalid),
        .rc_tready(rc_tready),
        .cfg_max_payload(cfg_max_payload), .cfg_max_read_req(cfg_max_read_req),
        .pcie_cpl_err(pcie_cpl_err), .pcie_bad_req(pcie_bad_req),
        .mac_clock(mac_clk), .mac_reset(mac_tx_reset | mac_rx_reset),
        .mac_tx_tdata(mac_tx_tdata), .mac_tx_tkeep(mac_tx_tkeep), .mac_tx_tlast(mac_tx_tlast), .mac_tx_tuser(mac_tx_tuser),
        .mac_tx_tvalid(mac_tx_tvalid), .mac_tx_tready(mac_tx_tready),
        .mac_rx_tdata(mac_rx_tdata), .mac_rx_tkeep(mac_rx_tkeep), .mac_rx_tlast(mac_rx_tlast),
        .mac_rx_tvalid(mac_rx_tvalid), .mac_rx_tuser(mac_rx_tuser), .mac_rx_dropped(mac_rx_dropped),
        .mac_rx_pending()
    );

    // ---- Board pins ----------------------------------------------------------
`ifdef BOARD_U280
    // The QSFP reference clock generator: enabled, 161.1328125 MHz.
    assign qsfp_refclk_oe_b = 1'b0;
    assign qsfp_refclk_fs = 1'b1;
`else
    assign qsfp_modsell = 1'b0;
    assign qsfp_resetl = 1'b1;
    assign qsfp_lpmode = 1'b0;
`endif
`ifdef BOARD_U250
    // The QSFP reference clock generator out of reset at 161.1328125 MHz.
    assign qsfp_refclk_reset = 1'b0;
    assign qsfp_fs = 2'b10;
`endif

    // Error pulses stretched so an LED shows them (about 0.5 s at 250 MHz).
    reg [26:0] err_hold = 27'd0;
    always @(posedge user_clk)
        if (pcie_cpl_err | pcie_bad_req) err_hold <= {27{1'b1}};
        else if (err_hold != 27'd0) err_hold <= err_hold - 27'd1;
    // A drop (MAC clock) toggles a flip-flop; the core clock sees the toggle.
    reg drop_toggle = 1'b0;
    always @(posedge mac_clk) if (mac_rx_dropped) drop_toggle <= ~drop_toggle;
    reg [2:0] drop_sync = 3'b000;
    always @(posedge user_clk) drop_sync <= {drop_sync[1:0], drop_toggle};
    reg [26:0] drop_hold = 27'd0;
    always @(posedge user_clk)
        if (drop_sync[2] ^ drop_sync[1]) drop_hold <= {27{1'b1}};
        else if (drop_hold != 27'd0) drop_hold <= drop_hold - 27'd1;
`ifndef BOARD_U280
    // LED 0: PCIe link up; 1: 100G link aligned; 2: a PCIe error or a dropped frame recently.
    reg [1:0] aligned_sync = 2'b00;
    always @(posedge user_clk) aligned_sync <= {aligned_sync[0], rx_aligned};
    assign led = {(err_hold != 27'd0) | (drop_hold != 27'd0), aligned_sync[1], user_lnk_up};
`else
    wire unused_status = &{1'b0, err_hold, drop_hold, rx_aligned};
`endif

endmodule

`default_nettype wire
