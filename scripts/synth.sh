#!/usr/bin/env bash
# Synthesizes RTL tops with Yosys for a Xilinx UltraScale+ part
# (`synth_xilinx -family xcup`) and prints, per top, the cells it maps to
# (LUTs, flip-flops, block RAM, UltraRAM, DSPs, carry and wide-mux cells)
# and the longest combinational path in cells. A resource report, not
# timing closure: no placement, no routing, and a carry chain counts one
# cell per stage.
#
#   scripts/synth.sh              # the NIC core (several minutes)
#   scripts/synth.sh icrc sq      # any tops of `rnic_hw::verilog_tops`
#   scripts/synth.sh --check      # every top of hw/synth-budget.txt against
#                                 # its budget; writes target/synth/report.md
#                                 # and fails on a top over budget
#   RNIC_SYNTH_BUDGET=FILE        # another budget file (same format)
#
# The path is measured on the mapped netlist with every flip-flop, RAM,
# shift register and DSP cell removed, so it is the deepest chain of LUT,
# wide-mux and carry cells between two of those. Set RNIC_SYNTH_REPORT=FILE to
# write the report elsewhere (docs/synthesis.md is one such report,
# committed). Output files (Verilog, Yosys statistics and path) go to
# target/synth.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v yosys >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "synth.sh: installing Yosys (apt-get install -y yosys)" >&2
        (apt-get install -y yosys >/dev/null 2>&1 || { apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y yosys >/dev/null; })
    else
        echo "synth.sh: Yosys is missing: sudo apt-get install -y yosys" >&2
        exit 1
    fi
fi

budget_file=${RNIC_SYNTH_BUDGET:-hw/synth-budget.txt}
check=0
tops=()
for a in "$@"; do
    case "$a" in
        --check) check=1 ;;
        -*) echo "synth.sh: unknown option $a" >&2; exit 2 ;;
        *) tops+=("$a") ;;
    esac
done
if [ "$check" = 1 ] && [ ${#tops[@]} -eq 0 ]; then
    mapfile -t tops < <(awk '!/^#/ && NF { print $1 }' "$budget_file")
fi
[ ${#tops[@]} -eq 0 ] && tops=(core)

out=target/synth
mkdir -p "$out"
cargo run --release -q -p rnic-hw --example emit "$out" >/dev/null
report=${RNIC_SYNTH_REPORT:-$out/report.md}

# One row per top: LUT FF RAMB36 RAMB18 URAM DSP CARRY MUXF path.
synth_top() {
    local t=$1
    yosys -q -l "$out/$t.log" -p "read_verilog $out/$t.v; synth_xilinx -family xcup -top top -flatten; \
        tee -q -o $out/$t.stat stat; delete t:FD* t:RAM* t:SRL* t:DSP* t:URAM*; tee -q -o $out/$t.ltp ltp" \
        2>"$out/$t.warnings"
    count() { awk -v re="$1" '$1 ~ re { n += $2 } END { print n + 0 }' "$out/$t.stat"; }
    local path
    path=$(sed -n 's/.*Longest topological path in top (length=\([0-9]*\)).*/\1/p' "$out/$t.ltp" | head -1)
    echo "$(count '^LUT[1-6]$') $(count '^FD[A-Z]*$') $(count '^RAMB36') $(count '^RAMB18') $(count '^URAM') \
$(count '^DSP') $(count '^CARRY') $(count '^MUXF') ${path:-?}"
}

over=()
{
    echo "# Synthesis report"
    echo
    echo "Written by \`scripts/synth.sh$(printf ' %s' "$@")\` on $(date -u +%Y-%m-%d) with $(yosys -V | head -1 | cut -d' ' -f1-2)"
    echo "(\`synth_xilinx -family xcup\`): cells per top, and the longest chain of LUT, wide-mux"
    echo "and carry cells between flip-flops, RAMs and DSPs. Budgets: \`$budget_file\`."
    echo
    echo "| top | LUT | FF | RAMB36 | RAMB18 | URAM | DSP | CARRY | MUXF | longest path (cells) | budget: LUT / FF / RAMB36-equivalent / path |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
} >"$out/report.partial"
printf '%-12s %8s %8s %7s %7s %5s %5s %7s %7s %6s\n' top LUT FF RAMB36 RAMB18 URAM DSP CARRY MUXF path
for t in "${tops[@]}"; do
    if [ ! -f "$out/$t.v" ]; then
        echo "synth.sh: no top '$t' (tops: $(cd "$out" && ls ./*.v | sed 's|./||; s|\.v$||' | tr '\n' ' '))" >&2
        exit 1
    fi
    start=$SECONDS
    echo "synth.sh: $t ..." >&2
    read -r lut ff r36 r18 uram dsp carry muxf path < <(synth_top "$t")
    printf '%-12s %8s %8s %7s %7s %5s %5s %7s %7s %6s   (%ds)\n' "$t" "$lut" "$ff" "$r36" "$r18" "$uram" "$dsp" \
        "$carry" "$muxf" "$path" $((SECONDS - start))
    btext="none"
    if read -r _ blut bff bram bpath < <(awk -v t="$t" '$1 == t' "$budget_file"); then
        btext="$blut / $bff / $bram / $bpath"
        # A RAMB18 is half a RAMB36.
        ram2=$((2 * r36 + r18))
        [ "$lut" -gt "$blut" ] && over+=("$t: $lut LUTs, budget $blut")
        [ "$ff" -gt "$bff" ] && over+=("$t: $ff flip-flops, budget $bff")
        [ "$ram2" -gt $((2 * bram)) ] && over+=("$t: $r36 RAMB36 + $r18 RAMB18, budget $bram RAMB36")
        if [ "$path" -gt "$bpath" ]; then
            over+=("$t: a path of $path cells, budget $bpath")
        fi
    elif [ "$check" = 1 ]; then
        over+=("$t: no budget in $budget_file")
    fi
    echo "| $t | $lut | $ff | $r36 | $r18 | $uram | $dsp | $carry | $muxf | $path | $btext |" >>"$out/report.partial"
done
mv "$out/report.partial" "$report"
echo "synth.sh: report in $report" >&2
if [ "$check" = 1 ] && [ ${#over[@]} -gt 0 ]; then
    printf 'synth.sh: over budget (%s):\n' "$budget_file" >&2
    printf '  %s\n' "${over[@]}" >&2
    exit 1
fi
