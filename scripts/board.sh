#!/usr/bin/env bash
# Prepares the Vivado build of an rnic board: generates the shell's Verilog
# from the Rust RTL and gathers it with the board top, constraints and Tcl
# flow into target/board/BOARD/, lints the board top there with Verilator
# (the IP cores as port-only stubs), and prints the Vivado command.
#
#   scripts/board.sh u250            # or u280, vcu118; several at once
#   scripts/board.sh --all           # every board
#   scripts/board.sh --check         # every board, plus a Yosys check that
#                                    # the flattened shell has no
#                                    # combinational loop (run by scripts/test.sh)
#   scripts/board.sh --vivado u250   # and run the Vivado flow (needs vivado on PATH)
#
# What is checked here: generation, Verilator -Wall lint of the whole board
# top with the shell, the loop check. What needs Vivado and a board: the IP
# cores' ports and settings, synthesis, placement, timing, the bitstream.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
ensure_verilator
boards=()
check=0
vivado=0
for a in "$@"; do
    case "$a" in
        --all) boards=(u250 u280 vcu118) ;;
        --check) check=1; boards=(u250 u280 vcu118) ;;
        --vivado) vivado=1 ;;
        u250|u280|vcu118) boards+=("$a") ;;
        *) echo "board.sh: unknown board or flag '$a' (boards: u250 u280 vcu118)" >&2; exit 2 ;;
    esac
done
if [ ${#boards[@]} = 0 ]; then
    sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
out=target/board
mkdir -p "$out"
echo "board.sh: generating rnic_shell.v" >&2
cargo run --release -q -p rnic-hw --example emit -- --shell "$out" >/dev/null
for b in "${boards[@]}"; do
    d="$out/$b"
    mkdir -p "$d"
    cp "$out/rnic_shell.v" firmware/rtl/rnic_board.v firmware/tcl/build.tcl firmware/tcl/timing.xdc "$d/"
    cp "firmware/boards/$b.tcl" "$d/board.tcl"
    cp "firmware/boards/$b.xdc" "$d/board.xdc"
    define=$(sed -n 's/^set define //p' "$d/board.tcl")
    echo "board.sh: $b: Verilator lint of rnic_board ($define)" >&2
    verilator --lint-only -Wall --no-timing "-D$define" hw/verilator.vlt firmware/lint/board.vlt \
        firmware/lint/ip_stubs.v "$d/rnic_board.v" "$d/rnic_shell.v" --top-module rnic_board
    echo "board.sh: $b: ready in $d; build with: vivado -mode batch -source $d/build.tcl -tclargs $d" >&2
    if [ "$vivado" = 1 ]; then
        command -v vivado >/dev/null 2>&1 || { echo "board.sh: vivado is not on PATH" >&2; exit 1; }
        vivado -mode batch -nojournal -log "$d/vivado.log" -source "$d/build.tcl" -tclargs "$d"
    fi
done
if [ "$check" = 1 ]; then
    ensure_yosys
    echo "board.sh: Yosys: no combinational loop in the flattened shell" >&2
    yosys -q -p "read_verilog $out/rnic_shell.v; hierarchy -top rnic_shell; proc; flatten; opt_clean; check -assert" \
        > "$out/loop-check.log" 2>&1 || { cat "$out/loop-check.log" >&2; echo "board.sh: the shell has a combinational loop or another error" >&2; exit 1; }
    echo "board.sh: check passed" >&2
fi
