# Alveo U250: the part and the IP cores' board-specific settings (read by tcl/build.tcl).
set part xcu250-figd2104-2L-e
set define BOARD_U250
set pcie_ip pcie4_uscale_plus
# The PCIe block next to the edge connector's quads 224-227.
set pcie_board_cfg [list CONFIG.pcie_blk_locn {X1Y2} CONFIG.select_quad {GTY_Quad_227}]
# QSFP28 cage 0: quad 231, 161.1328125 MHz reference, CMAC CMACE4_X0Y8; init_clk 100 MHz.
set cmac_board_cfg [list CONFIG.CMAC_CORE_SELECT {CMACE4_X0Y8} CONFIG.GT_GROUP_SELECT {X1Y48~X1Y51} \
    CONFIG.GT_REF_CLK_FREQ {161.1328125} CONFIG.GT_DRP_CLK {100.00}]
