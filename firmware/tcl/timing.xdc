# Timing constraints of rnic_board.v common to every board.
#
# The core runs on the PCIe block's user_clk (250 MHz), the MAC side of the
# shell on the CMAC's gt_txusrclk2 (322.27 MHz); both are generated clocks
# the IP cores constrain. Between them only the shell's clock-crossing
# FIFOs' Gray pointers and reset synchronizers cross (flip-flop to
# flip-flop), and the FIFO RAMs' read side (written at least two cycles
# before it is read). Each such path gets at most one period of the faster
# clock, with no clock skew counted.
set core_clk [get_clocks -of_objects [get_pins pcie/user_clk]]
set mac_clk [get_clocks -of_objects [get_pins cmac/gt_txusrclk2]]
set_max_delay -datapath_only -from $core_clk -to $mac_clk 3.103
set_max_delay -datapath_only -from $mac_clk -to $core_clk 3.103

# The synchronizers' flip-flops: placed together, never retimed.
set_property ASYNC_REG TRUE [get_cells -hierarchical -filter {NAME =~ *gray_s1* || NAME =~ *gray_s2* || NAME =~ *reset_s1* || NAME =~ *reset_s2*}]
set_property ASYNC_REG TRUE [get_cells -hierarchical -filter {NAME =~ *lnk_sync* || NAME =~ *aligned_sync* || NAME =~ *drop_sync*}]
# The LED and link-up synchronizers' sources are quasi-static.
set_false_path -to [get_cells -hierarchical -filter {NAME =~ *lnk_sync_reg[0]* || NAME =~ *aligned_sync_reg[0]* || NAME =~ *drop_sync_reg[0]*}]
