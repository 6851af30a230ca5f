# Alveo U250 (xcu250-figd2104-2L-e): pins of rnic_board.v. Sources: the
# board's user guide (UG1289) and master constraints. The transceiver lanes
# (PCIe: quads 224-227, lane 0 in quad 227; QSFP28 cage 0: quad 231) are
# placed by the IP cores' settings in u250.tcl, not here.

# PCIe reference clock (100 MHz, MGTREFCLK0 of quad 226) and PERST#.
set_property PACKAGE_PIN AM11 [get_ports pcie_refclk_p]
set_property PACKAGE_PIN AM10 [get_ports pcie_refclk_n]
create_clock -name pcie_refclk -period 10.000 [get_ports pcie_refclk_p]
set_property -dict {PACKAGE_PIN BD21 IOSTANDARD LVCMOS12 PULLUP true} [get_ports pcie_perst_n]
set_false_path -from [get_ports pcie_perst_n]

# QSFP28 cage 0 reference clock: 161.1328125 MHz (MGTREFCLK1 of quad 231, FS = 0b10).
set_property PACKAGE_PIN K11 [get_ports qsfp_refclk_p]
set_property PACKAGE_PIN K10 [get_ports qsfp_refclk_n]
create_clock -name qsfp_refclk -period 6.206 [get_ports qsfp_refclk_p]
set_property -dict {PACKAGE_PIN BE16 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports qsfp_modsell]
set_property -dict {PACKAGE_PIN BE17 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports qsfp_resetl]
set_property -dict {PACKAGE_PIN BD18 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports qsfp_lpmode]
set_property -dict {PACKAGE_PIN AT22 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports qsfp_refclk_reset]
set_property -dict {PACKAGE_PIN AT20 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {qsfp_fs[0]}]
set_property -dict {PACKAGE_PIN AU22 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {qsfp_fs[1]}]
set_false_path -to [get_ports {qsfp_modsell qsfp_resetl qsfp_lpmode qsfp_refclk_reset qsfp_fs[*]}]

# Free-running 300 MHz clock (divided by 3 for the CMAC's init_clk).
set_property -dict {PACKAGE_PIN AY37 IOSTANDARD LVDS} [get_ports init_clk_p]
set_property -dict {PACKAGE_PIN AY38 IOSTANDARD LVDS} [get_ports init_clk_n]
create_clock -name init_clk -period 3.333 [get_ports init_clk_p]

# LEDs.
set_property -dict {PACKAGE_PIN BC21 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {led[0]}]
set_property -dict {PACKAGE_PIN BB21 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {led[1]}]
set_property -dict {PACKAGE_PIN BA20 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {led[2]}]
set_false_path -to [get_ports {led[*]}]


# Configuration.
set_property CFGBVS GND [current_design]
set_property CONFIG_VOLTAGE 1.8 [current_design]
set_property BITSTREAM.GENERAL.COMPRESS true [current_design]
set_property BITSTREAM.CONFIG.SPI_BUSWIDTH 4 [current_design]
set_property BITSTREAM.CONFIG.SPI_32BIT_ADDR YES [current_design]
set_property BITSTREAM.CONFIG.UNUSEDPIN PULLUP [current_design]
