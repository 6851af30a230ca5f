#!/usr/bin/env bash
# Goodput against random loss on both links (rnic-perf write_bw, MTU 4096,
# congestion control off): 4 KiB and 64 KiB messages on 1 and 16 QPs at
# 0, 0.01, 0.1, 1 and 5 % loss. Prints a markdown table (the README's) with
# the recovery counters, the out-of-order packets the responder's window
# pool could not take, the slow path's PCIe bytes, its host CPU time and how far
# the run's goodput is from its second half's (rnic-perf's steady-state line); each row's command
# is `scripts/perf.sh write_bw -s <size> -n <n / qps> -q <qps> --loss <pct>` (rnic-perf's -n is per
# QP; the iterations column is n, the total over the QPs).
#   scripts/loss-sweep.sh            # the README's table
#   scripts/loss-sweep.sh 2          # twice the iterations (steady-state check)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
ensure_verilator
scale=${1:-1}
cargo build --release -p rnic-tools --bin rnic-perf >&2
echo "| size | QPs | loss % | iterations | Gb/s | PSN NAKs | timeouts | placed out of order | resends (again) | rewinds | not placed (no window) | slow path PCIe % of payload | slow path CPU % of a core | whole vs second half % |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for size in 4096 65536; do
    for qps in 1 16; do
        if [ "$size" = 4096 ]; then n=$((4000 * scale)); else n=$((400 * scale)); fi
        if [ $((n % qps)) != 0 ]; then
            echo "loss-sweep: $n iterations do not divide over $qps QPs" >&2
            exit 1
        fi
        per_qp=$((n / qps))
        for loss in 0 0.01 0.1 1 5; do
            echo "loss-sweep: write_bw -s $size -n $per_qp -q $qps --loss $loss ($n in total)" >&2
            out=$(target/release/rnic-perf write_bw -s "$size" -n "$per_qp" -q "$qps" --loss "$loss")
            # Row: #bytes #iterations BW peak, BW average, MsgRate.
            gbps=$(echo "$out" | awk -v s="$size" '$1 == s && NF == 5 { print $4 }')
            rec=$(echo "$out" | sed -n 's/^ loss recovery : \([0-9]*\) PSN NAKs, \([0-9]*\) timeouts, [0-9]* RNR NAKs, \([0-9]*\) placed out of order, \([0-9]*\) resends, \([0-9]*\) resent again, \([0-9]*\) rewinds; slow path PCIe [0-9]* B (\([0-9.]*\)% of payload)/\1 | \2 | \3 | \4 (\5) | \6 | \7/p')
            cpu=$(echo "$out" | sed -n 's/^ slow path CPU : .*, \([0-9.]*\)% of one core over.*/\1/p')
            nowin=$(echo "$out" | sed -n 's/^ SR windows    : [0-9]* packets placed out of order on NIC1, \([0-9]*\) not placed.*/\1/p')
            gap=$(echo "$out" | sed -n 's/^ steady state  : .*(\([0-9.]*\) % apart).*/\1/p')
            # The window column goes before the last two (PCIe and CPU).
            rec=${rec:-0 | 0 | 0 | 0 (0) | 0 | 0}
            echo "| $size | $qps | $loss | $n | $gbps | ${rec% | *} | ${nowin:-0} | ${rec##* | } | ${cpu:-0} | ${gap:-?} |"
        done
    done
done
