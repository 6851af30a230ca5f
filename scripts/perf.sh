#!/usr/bin/env bash
# The main job: rnic-perf over two cosimulated NICs.
#   scripts/perf.sh                          # write_bw -s 65536 -n 1000
#   scripts/perf.sh send_bw -s 4096 -n 5000 -q 4
#   scripts/perf.sh read_bw -s 65536 -n 1000      # NIC0 reads NIC1's memory
# Arguments are passed to rnic-perf (see `scripts/perf.sh --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
ensure_verilator
if [ $# -eq 0 ]; then
    set -- write_bw -s 65536 -n 1000
fi
exec cargo run --release -p rnic-tools --bin rnic-perf -- "$@"
