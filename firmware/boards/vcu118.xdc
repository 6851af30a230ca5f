# VCU118 (xcvu9p-flga2104-2L-e): pins of rnic_board.v. Sources: the board's
# user guide (UG1224) and master constraints. The transceiver lanes (PCIe:
# quads 224-227, lane 0 in quad 227; QSFP28 cage 1, the board's first:
# quad 231) are placed by the IP cores' settings in vcu118.tcl, not here.

# PCIe reference clock (100 MHz, MGTREFCLK0 of quad 225) and PERST#.
set_property PACKAGE_PIN AL9 [get_ports pcie_refclk_p]
set_property PACKAGE_PIN AL8 [get_ports pcie_refclk_n]
create_clock -name pcie_refclk -period 10.000 [get_ports pcie_refclk_p]
set_property -dict {PACKAGE_PIN AM17 IOSTANDARD LVCMOS18 PULLUP true} [get_ports pcie_perst_n]
set_false_path -from [get_ports pcie_perst_n]

# QSFP28 cage 1 reference clock: 156.25 MHz (MGTREFCLK0 of quad 231).
set_property PACKAGE_PIN W9 [get_ports qsfp_refclk_p]
set_property PACKAGE_PIN W8 [get_ports qsfp_refclk_n]
create_clock -name qsfp_refclk -period 6.400 [get_ports qsfp_refclk_p]
set_property -dict {PACKAGE_PIN AM21 IOSTANDARD LVCMOS18 SLEW SLOW DRIVE 8} [get_ports qsfp_modsell]
set_property -dict {PACKAGE_PIN BA22 IOSTANDARD LVCMOS18 SLEW SLOW DRIVE 8} [get_ports qsfp_resetl]
set_property -dict {PACKAGE_PIN AN21 IOSTANDARD LVCMOS18 SLEW SLOW DRIVE 8} [get_ports qsfp_lpmode]
set_false_path -to [get_ports {qsfp_modsell qsfp_resetl qsfp_lpmode}]

# Free-running 125 MHz clock for the CMAC's init_clk.
set_property -dict {PACKAGE_PIN AY24 IOSTANDARD LVDS} [get_ports init_clk_p]
set_property -dict {PACKAGE_PIN AY23 IOSTANDARD LVDS} [get_ports init_clk_n]
create_clock -name init_clk -period 8.000 [get_ports init_clk_p]

# LEDs (the first three GPIO LEDs).
set_property -dict {PACKAGE_PIN AT32 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {led[0]}]
set_property -dict {PACKAGE_PIN AV34 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {led[1]}]
set_property -dict {PACKAGE_PIN AY30 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {led[2]}]
set_false_path -to [get_ports {led[*]}]


# Configuration.
set_property CFGBVS GND [current_design]
set_property CONFIG_VOLTAGE 1.8 [current_design]
set_property BITSTREAM.GENERAL.COMPRESS true [current_design]
set_property BITSTREAM.CONFIG.SPI_BUSWIDTH 8 [current_design]
set_property BITSTREAM.CONFIG.SPI_32BIT_ADDR YES [current_design]
