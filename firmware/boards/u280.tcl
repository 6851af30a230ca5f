# Alveo U280: the part and the IP cores' board-specific settings (read by tcl/build.tcl).
# The U280's PCIe block is the CCIX-capable one (pcie4c_uscale_plus); same interfaces.
set part xcu280-fsvh2892-2L-e
set define BOARD_U280
set pcie_ip pcie4c_uscale_plus
set pcie_board_cfg [list CONFIG.pcie_blk_locn {X1Y0} CONFIG.select_quad {GTY_Quad_227}]
# QSFP28 cage 0: quad 134, 161.1328125 MHz reference, CMAC CMACE4_X0Y6; init_clk 100 MHz.
set cmac_board_cfg [list CONFIG.CMAC_CORE_SELECT {CMACE4_X0Y6} CONFIG.GT_GROUP_SELECT {X0Y40~X0Y43} \
    CONFIG.GT_REF_CLK_FREQ {161.1328125} CONFIG.GT_DRP_CLK {100.00}]
