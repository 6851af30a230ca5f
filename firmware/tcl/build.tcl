# Vivado batch flow of an rnic board: project, IP cores, synthesis,
# implementation, bitstream. scripts/board.sh BOARD prepares DIR and prints
# the command; run where Vivado (2022.2 or later) is installed:
#
#   vivado -mode batch -source DIR/build.tcl -tclargs DIR [JOBS]
#
# DIR holds this script, rnic_shell.v (generated from the Rust RTL),
# rnic_board.v, board.tcl, board.xdc and timing.xdc. Outputs in DIR:
# rnic_board.bit, timing.rpt, utilization.rpt; the project in DIR/project.
if {[llength $argv] < 1} {
    puts "usage: vivado -mode batch -source build.tcl -tclargs DIR \[JOBS\]"
    exit 1
}
set dir [file normalize [lindex $argv 0]]
set jobs [expr {[llength $argv] > 1 ? [lindex $argv 1] : 4}]
source $dir/board.tcl

create_project -force rnic $dir/project -part $part
add_files [list $dir/rnic_shell.v $dir/rnic_board.v]
set_property top rnic_board [current_fileset]
set_property verilog_define [list $define] [current_fileset]
add_files -fileset constrs_1 [list $dir/board.xdc $dir/timing.xdc]

# PCIe: Gen3 x16, 512-bit interfaces at 250 MHz, Dword-aligned, no straddle,
# client tags (the shell's adapters assume exactly this; docs/hardware.md).
create_ip -name $pcie_ip -vendor xilinx.com -library ip -module_name rnic_pcie
set_property -dict [concat [list \
    CONFIG.mode_selection {Advanced} \
    CONFIG.PL_LINK_CAP_MAX_LINK_SPEED {8.0_GT/s} \
    CONFIG.PL_LINK_CAP_MAX_LINK_WIDTH {X16} \
    CONFIG.axisten_if_width {512_bit} \
    CONFIG.axisten_freq {250} \
    CONFIG.AXISTEN_IF_EXT_512_CQ_STRADDLE {false} \
    CONFIG.AXISTEN_IF_EXT_512_RQ_STRADDLE {false} \
    CONFIG.AXISTEN_IF_EXT_512_RC_STRADDLE {false} \
    CONFIG.AXISTEN_IF_EXT_512_RC_4TLP_STRADDLE {false} \
    CONFIG.axisten_if_enable_client_tag {true} \
    CONFIG.extended_tag_field {true} \
    CONFIG.pf0_dev_cap_max_payload {512_bytes} \
    CONFIG.PF0_CLASS_CODE {020000} \
    CONFIG.PF0_Use_Class_Code_Lookup_Assistant {false} \
    CONFIG.pf0_bar0_64bit {true} \
    CONFIG.pf0_bar0_prefetchable {false} \
    CONFIG.pf0_bar0_scale {Megabytes} \
    CONFIG.pf0_bar0_size {4} \
    CONFIG.pf0_msi_enabled {false} \
    CONFIG.pf0_msix_enabled {false} \
    ] $pcie_board_cfg] [get_ips rnic_pcie]

# CMAC: 100GBASE-R4 (CAUI-4, 4x25G) with its transceivers, AXI4-Stream, RS-FEC.
create_ip -name cmac_usplus -vendor xilinx.com -library ip -module_name rnic_cmac
set_property -dict [concat [list \
    CONFIG.CMAC_CAUI4_MODE {1} \
    CONFIG.NUM_LANES {4x25} \
    CONFIG.USER_INTERFACE {AXIS} \
    CONFIG.GT_LOCATION {1} \
    CONFIG.INCLUDE_RS_FEC {1} \
    CONFIG.TX_FLOW_CONTROL {0} \
    CONFIG.RX_FLOW_CONTROL {0} \
    ] $cmac_board_cfg] [get_ips rnic_cmac]

generate_target all [get_ips]
synth_ip [get_ips]

launch_runs synth_1 -jobs $jobs
wait_on_run synth_1
if {[get_property PROGRESS [get_runs synth_1]] != "100%"} { error "synthesis failed" }
launch_runs impl_1 -to_step write_bitstream -jobs $jobs
wait_on_run impl_1
if {[get_property PROGRESS [get_runs impl_1]] != "100%"} { error "implementation failed" }
open_run impl_1
report_timing_summary -file $dir/timing.rpt
report_utilization -hierarchical -file $dir/utilization.rpt
file copy -force [get_property DIRECTORY [get_runs impl_1]]/rnic_board.bit $dir/rnic_board.bit
puts "rnic: bitstream $dir/rnic_board.bit, timing $dir/timing.rpt"
