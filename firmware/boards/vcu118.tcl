# VCU118: the part and the IP cores' board-specific settings (read by tcl/build.tcl).
set part xcvu9p-flga2104-2L-e
set define BOARD_VCU118
set pcie_ip pcie4_uscale_plus
set pcie_board_cfg [list CONFIG.pcie_blk_locn {X1Y2} CONFIG.select_quad {GTY_Quad_227}]
# QSFP28 cage 1 (the first): quad 231, 156.25 MHz reference, CMAC CMACE4_X0Y7; init_clk 125 MHz.
set cmac_board_cfg [list CONFIG.CMAC_CORE_SELECT {CMACE4_X0Y7} CONFIG.GT_GROUP_SELECT {X1Y48~X1Y51} \
    CONFIG.GT_REF_CLK_FREQ {156.25} CONFIG.GT_DRP_CLK {125.00}]
