# Alveo U280 (xcu280-fsvh2892-2L-e): pins of rnic_board.v. Sources: the
# board's user guide (UG1314) and master constraints. The transceiver lanes
# (PCIe: quads 224-227, lane 0 in quad 227; QSFP28 cage 0: quad 134) are
# placed by the IP cores' settings in u280.tcl, not here. The U280 has no
# user LEDs and no QSFP control pins wired to the FPGA.

# PCIe reference clock (100 MHz, MGTREFCLK0 of quad 225, for lanes 8-15 of x16) and PERST#.
set_property PACKAGE_PIN AR15 [get_ports pcie_refclk_p]
set_property PACKAGE_PIN AR14 [get_ports pcie_refclk_n]
create_clock -name pcie_refclk -period 10.000 [get_ports pcie_refclk_p]
set_property -dict {PACKAGE_PIN BH26 IOSTANDARD LVCMOS18 PULLUP true} [get_ports pcie_perst_n]
set_false_path -from [get_ports pcie_perst_n]

# QSFP28 cage 0 reference clock: 161.1328125 MHz (MGTREFCLK1 of quad 134, FS = 1).
set_property PACKAGE_PIN R40 [get_ports qsfp_refclk_p]
set_property PACKAGE_PIN R41 [get_ports qsfp_refclk_n]
create_clock -name qsfp_refclk -period 6.206 [get_ports qsfp_refclk_p]
set_property -dict {PACKAGE_PIN H32 IOSTANDARD LVCMOS18 SLEW SLOW DRIVE 8} [get_ports qsfp_refclk_oe_b]
set_property -dict {PACKAGE_PIN G32 IOSTANDARD LVCMOS18 SLEW SLOW DRIVE 8} [get_ports qsfp_refclk_fs]
set_false_path -to [get_ports {qsfp_refclk_oe_b qsfp_refclk_fs}]

# Free-running 100 MHz clock for the CMAC's init_clk.
set_property -dict {PACKAGE_PIN BJ43 IOSTANDARD LVDS} [get_ports init_clk_p]
set_property -dict {PACKAGE_PIN BJ44 IOSTANDARD LVDS} [get_ports init_clk_n]
create_clock -name init_clk -period 10.000 [get_ports init_clk_p]


# Configuration.
set_property CFGBVS GND [current_design]
set_property CONFIG_VOLTAGE 1.8 [current_design]
set_property CONFIG_MODE SPIx4 [current_design]
set_property BITSTREAM.GENERAL.COMPRESS true [current_design]
set_property BITSTREAM.CONFIG.SPI_BUSWIDTH 4 [current_design]
set_property BITSTREAM.CONFIG.SPI_32BIT_ADDR YES [current_design]
set_property BITSTREAM.CONFIG.UNUSEDPIN PULLUP [current_design]
