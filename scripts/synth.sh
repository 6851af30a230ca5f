#!/usr/bin/env bash
# Synthesizes RTL tops with Yosys for a Xilinx UltraScale+ part
# (`synth_xilinx -family xcup`) and prints, per top, the cells it maps to
# (LUTs, flip-flops, block RAM, UltraRAM, DSPs, carry and wide-mux cells)
# and the longest combinational path, in cells and in estimated LUT levels
# (scripts/synth_depth.py: a carry stage or wide mux counts a fraction of a
# LUT level, as on the part). A resource and depth report, not timing
# closure: no placement and no routing.
#
#   scripts/synth.sh              # the NIC core (several minutes)
#   scripts/synth.sh icrc sq      # any tops of `rnic_hw::verilog_tops`
#   scripts/synth.sh --check      # every top of hw/synth-budget.txt against
#                                 # its budget; writes target/synth/report.md
#                                 # and fails on a top over budget (LUT, FF,
#                                 # block RAM, path in cells, LUT levels)
#   RNIC_SYNTH_BUDGET=FILE        # another budget file (same format)
#   RNIC_SYNTH_ENDS=N             # also list the N deepest path ends per top
#                                 # (in target/synth/TOP.depth)
#   RNIC_SYNTH_PATHS=A,B          # also the path into each named end (net names
#                                 # as the ends list prints them: cc.newc$d) and
#                                 # the registers within a level of its depth
#                                 # (an end Yosys left unnamed is listed by the
#                                 # register it feeds: "> turn.state$q (in)")
#
# The path is measured on the mapped netlist without its flip-flop, RAM,
# shift register and DSP cells, so it is the deepest chain of LUT,
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

# One row per top: LUT FF RAMB36 RAMB18 URAM DSP CARRY MUXF path levels.
synth_top() {
    local t=$1
    yosys -q -l "$out/$t.log" -p "read_verilog $out/$t.v; synth_xilinx -family xcup -top top -flatten; \
        tee -q -o $out/$t.stat stat; setattr -unset src; setattr -unset src w:*; write_json $out/$t.json; \
        delete t:FD* t:RAM* t:SRL* t:DSP* t:URAM*; tee -q -o $out/$t.ltp ltp" \
        2>"$out/$t.warnings"
    python3 scripts/synth_depth.py "$out/$t.json" ${RNIC_SYNTH_ENDS:+"$RNIC_SYNTH_ENDS"} >"$out/$t.depth"
    rm -f "$out/$t.json"
    count() { awk -v re="$1" '$1 ~ re { n += $2 } END { print n + 0 }' "$out/$t.stat"; }
    local path
    path=$(sed -n 's/.*Longest topological path in top (length=\([0-9]*\)).*/\1/p' "$out/$t.ltp" | head -1)
    local levels
    levels=$(awk 'NR == 1 { print $1 }' "$out/$t.depth")
    echo "$(count '^LUT[1-6]$') $(count '^FD[A-Z]*$') $(count '^RAMB36') $(count '^RAMB18') $(count '^URAM') \
$(count '^DSP') $(count '^CARRY') $(count '^MUXF') ${path:-?} ${levels:-?}"
}

over=()
{
    echo "# Synthesis report"
    echo
    echo "Written by \`scripts/synth.sh$(printf ' %s' "$@")\` on $(date -u +%Y-%m-%d) with $(yosys -V | head -1 | cut -d' ' -f1-2)"
    echo "(\`synth_xilinx -family xcup\`): cells per top, and the longest chain of LUT, wide-mux"
    echo "and carry cells between flip-flops, RAMs and DSPs, counted in cells and in estimated LUT"
    echo "levels (\`scripts/synth_depth.py\`: a LUT and its net 1, a wide mux or the entry into a carry"
    echo "chain 1/4, each CARRY4 along a chain 1/8; about 8 levels fit in 4 ns). Budgets: \`$budget_file\`."
    echo
    echo "| top | LUT | FF | RAMB36 | RAMB18 | URAM | DSP | CARRY | MUXF | longest path (cells) | LUT levels | budget: LUT / FF / RAMB36-equivalent / path / levels |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
} >"$out/report.partial"
printf '%-12s %8s %8s %7s %7s %5s %5s %7s %7s %6s %7s\n' top LUT FF RAMB36 RAMB18 URAM DSP CARRY MUXF path levels
for t in "${tops[@]}"; do
    if [ ! -f "$out/$t.v" ]; then
        echo "synth.sh: no top '$t' (tops: $(cd "$out" && ls ./*.v | sed 's|./||; s|\.v$||' | tr '\n' ' '))" >&2
        exit 1
    fi
    start=$SECONDS
    echo "synth.sh: $t ..." >&2
    read -r lut ff r36 r18 uram dsp carry muxf path levels < <(synth_top "$t")
    printf '%-12s %8s %8s %7s %7s %5s %5s %7s %7s %6s %7s   (%ds)\n' "$t" "$lut" "$ff" "$r36" "$r18" "$uram" "$dsp" \
        "$carry" "$muxf" "$path" "$levels" $((SECONDS - start))
    btext="none"
    if read -r _ blut bff bram bpath blevels < <(awk -v t="$t" '$1 == t' "$budget_file"); then
        btext="$blut / $bff / $bram / $bpath / ${blevels:-none}"
        # A RAMB18 is half a RAMB36.
        ram2=$((2 * r36 + r18))
        [ "$lut" -gt "$blut" ] && over+=("$t: $lut LUTs, budget $blut")
        [ "$ff" -gt "$bff" ] && over+=("$t: $ff flip-flops, budget $bff")
        [ "$ram2" -gt $((2 * bram)) ] && over+=("$t: $r36 RAMB36 + $r18 RAMB18, budget $bram RAMB36")
        if [ "$path" -gt "$bpath" ]; then
            over+=("$t: a path of $path cells, budget $bpath")
        fi
        if [ -n "${blevels:-}" ] && awk -v a="$levels" -v b="$blevels" 'BEGIN { exit !(a > b) }'; then
            over+=("$t: a path of $levels LUT levels, budget $blevels (target/synth/$t.depth)")
        elif [ -z "${blevels:-}" ] && [ "$check" = 1 ]; then
            over+=("$t: no LUT-level budget in $budget_file")
        fi
    elif [ "$check" = 1 ]; then
        over+=("$t: no budget in $budget_file")
    fi
    echo "| $t | $lut | $ff | $r36 | $r18 | $uram | $dsp | $carry | $muxf | $path | $levels | $btext |" >>"$out/report.partial"
done
mv "$out/report.partial" "$report"
echo "synth.sh: report in $report" >&2
if [ "$check" = 1 ] && [ ${#over[@]} -gt 0 ]; then
    printf 'synth.sh: over budget (%s):\n' "$budget_file" >&2
    printf '  %s\n' "${over[@]}" >&2
    exit 1
fi
