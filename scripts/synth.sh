#!/usr/bin/env bash
# Synthesizes RTL tops with Yosys for a Xilinx UltraScale+ part
# (`synth_xilinx -family xcup`) and prints, per top, the cells it maps to
# (LUTs, flip-flops, block RAM, carry and wide-mux cells) and the longest
# combinational path in cells. A resource report, not timing closure: no
# placement, no routing, and a carry chain counts one cell per stage.
#
#   scripts/synth.sh              # the NIC core (several minutes)
#   scripts/synth.sh icrc sq      # any tops of `rnic_hw::verilog_tops`
#
# Output files (Verilog, Yosys statistics and path) go to target/synth.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v yosys >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt-get install -y yosys >/dev/null
    else
        echo "synth.sh: Yosys is missing: sudo apt-get install -y yosys" >&2
        exit 1
    fi
fi

out=target/synth
mkdir -p "$out"
cargo run --release -q -p rnic-hw --example emit "$out" >/dev/null
tops=("$@")
[ ${#tops[@]} -eq 0 ] && tops=(core)

printf '%-12s %8s %8s %8s %8s %8s %8s %12s\n' top LUT FF RAMB36 RAMB18 CARRY MUXF 'path cells'
for t in "${tops[@]}"; do
    if [ ! -f "$out/$t.v" ]; then
        echo "synth.sh: no top '$t' (tops: $(cd "$out" && ls ./*.v | sed 's|./||; s|\.v$||' | tr '\n' ' '))" >&2
        exit 1
    fi
    echo "synth.sh: $t ..." >&2
    yosys -q -l "$out/$t.log" -p "read_verilog $out/$t.v; synth_xilinx -family xcup -top top -flatten; \
        tee -q -o $out/$t.stat stat; tee -q -o $out/$t.ltp ltp -noff"
    count() { awk -v re="$1" '$1 ~ re { n += $2 } END { print n + 0 }' "$out/$t.stat"; }
    path=$(sed -n 's/.*Longest topological path in top (length=\([0-9]*\)).*/\1/p' "$out/$t.ltp" | head -1)
    printf '%-12s %8s %8s %8s %8s %8s %8s %12s\n' "$t" "$(count '^LUT[1-6]$')" "$(count '^FD[A-Z]*$')" \
        "$(count '^RAMB36')" "$(count '^RAMB18')" "$(count '^CARRY')" "$(count '^MUXF')" "${path:-?}"
done
