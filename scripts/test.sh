#!/usr/bin/env bash
# Every test of the workspace: RTL block tests in Verilator, the simulator,
# the host library, and the end-to-end tests over two cosimulated NICs
# (transfers with every byte checked, access errors, the pcap checked by
# rnic-spec and by scapy). Extra arguments go to `cargo test`.
#
# Profile: release. Verilating and compiling the core's C++ costs the same in
# both profiles. The cosimulation then steps 1.5-2.5x faster in release
# (rnic-perf write_bw 64 KiB: 110k vs 43k cycles/s; 64 B: 83k vs 56k, on a
# loaded 2-core box). The release build is also the one scripts/perf.sh
# uses, so CI builds once. Set RNIC_TEST_PROFILE=dev to use the dev profile.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
ensure_verilator
ensure_scapy
profile=()
if [ "${RNIC_TEST_PROFILE:-release}" = release ]; then
    profile=(--release)
fi
exec cargo test --workspace "${profile[@]}" "$@"
