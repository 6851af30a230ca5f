#!/usr/bin/env bash
# The main job: rnic-perf over two cosimulated NICs.
#   scripts/perf.sh                          # write_bw -s 65536 -n 1000
#   scripts/perf.sh send_bw -s 4K -n 1250 -q 4    # -n is per QP: 5000 messages
#   scripts/perf.sh read_bw -s 64K -n 1000        # NIC0 reads NIC1's memory
#   scripts/perf.sh write_bw -a                   # sizes 2 B to 8 MiB, one row each
#   scripts/perf.sh write_lat -s 64 -n 1000       # latency, one WRITE in flight
# Arguments are passed to rnic-perf (see `scripts/perf.sh --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
ensure_verilator
if [ $# -eq 0 ]; then
    set -- write_bw -s 65536 -n 1000
fi
exec cargo run --release -p rnic-tools --bin rnic-perf -- "$@"
