#!/usr/bin/env bash
# Every test of the workspace: RTL block tests in Verilator, the simulator,
# the host library, and the end-to-end tests over two cosimulated NICs
# (transfers with every byte checked, access errors, the pcap checked by
# rnic-spec, by scapy and by tshark with rnic's dissector). Extra arguments go to `cargo test`.
#
# First the hygiene checks: rustfmt, clippy with warnings as errors (every
# public crate also denies missing docs), and Verilator -Wall on every top
# (run by rnic-sim's build script, waivers in hw/verilator.vlt).
# RNIC_SKIP_LINT=1 skips rustfmt and clippy.
#
# Then the end-to-end tests (rnic-tests) once more with every NIC simulated
# as the board shell (`RNIC_SIM_TOP=shell`: the core behind the UltraScale+
# PCIe adapters and the MAC clock-crossing FIFOs; of the random suite only
# its tests under loss, so CI stays well inside its 90 minutes), and the board tops: `scripts/board.sh --check` generates the shell and
# lints every board's top level with it (the Xilinx IP cores as port-only
# stubs), and checks the flattened shell for combinational loops with Yosys.
#
# Last, the synthesis budgets: `scripts/synth.sh --check` synthesizes every
# top of hw/synth-budget.txt with Yosys (installed with apt-get when run as
# root) and fails on a top over its LUT, flip-flop, block RAM or path
# budget; it writes target/synth/report.md. RNIC_SKIP_SYNTH=1 skips it.
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
ensure_tshark
ensure_zlib
profile=()
if [ "${RNIC_TEST_PROFILE:-release}" = release ]; then
    profile=(--release)
fi
lint=1
if [ "${RNIC_SKIP_LINT:-0}" = 1 ]; then
    lint=0
elif ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
    rustup component add rustfmt clippy >/dev/null 2>&1 || true
    if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
        echo "WARNING: rustfmt or clippy is not installed (rustup component add rustfmt clippy); skipping the lint checks" >&2
        lint=0
    fi
fi
if [ "$lint" = 1 ]; then
    echo "== cargo fmt --check"
    cargo fmt --all --check
    echo "== cargo clippy -D warnings"
    cargo clippy --workspace --all-targets "${profile[@]}" -- -D warnings
fi
echo "== cargo test"
cargo test --workspace "${profile[@]}" "$@"
if [ $# -eq 0 ]; then
    echo "== end-to-end tests again on the board shell (RNIC_SIM_TOP=shell: PCIe block interfaces, MAC FIFOs)"
    # Every end-to-end test file except the random suite, which the core pass already ran
    # (random_shell included); of it, the shell runs the subset under loss and reads.
    shell_tests=()
    for f in tests/tests/*.rs; do
        name=$(basename "$f" .rs)
        [ "$name" = random ] || shell_tests+=(--test "$name")
    done
    RNIC_SIM_TOP=shell cargo test -p rnic-tests "${profile[@]}" "${shell_tests[@]}"
    shell_random=(random_shell random_loss_1pct random_reads_loss_1pct random_reorder_dup_loss)
    # A renamed test would leave its filter matching nothing: each must name exactly one test.
    listed=$(RNIC_SIM_TOP=shell cargo test -q -p rnic-tests "${profile[@]}" --test random -- --list --exact "${shell_random[@]}" | grep -c ': test$' || true)
    if [ "$listed" != "${#shell_random[@]}" ]; then
        echo "test.sh: the shell pass's random tests (${shell_random[*]}) match $listed tests, not ${#shell_random[@]}" >&2
        exit 1
    fi
    RNIC_SIM_TOP=shell cargo test -p rnic-tests "${profile[@]}" --test random -- --exact "${shell_random[@]}"
    echo "== waveforms: the tracing builds (features vcd and fst: one format per Verilator model)"
    for f in vcd fst; do
        cargo test -p rnic-sim --features "$f" "${profile[@]}" --test model --test nic -- wave vcd fst
        cargo test -p rnic-tools --features "$f" "${profile[@]}" --test cli -- wave
    done
    echo "== board tops (scripts/board.sh --check: generation, Verilator lint, Yosys loop check)"
    bash scripts/board.sh --check
fi
if [ "${RNIC_SKIP_SYNTH:-0}" = 1 ] || [ $# -gt 0 ]; then
    echo "== synthesis budgets skipped (RNIC_SKIP_SYNTH=1, or arguments for cargo test were given)"
    exit 0
fi
echo "== synthesis budgets (scripts/synth.sh --check: Yosys, about 15 minutes)"
bash scripts/synth.sh --check
# The check must be able to fail: budgets below what the MR fence needs are refused,
# one of 1 LUT and one that only its depth (half a LUT level) exceeds.
tight=$(mktemp)
for budget in "fence 1 1 0 1 8" "fence 1000 1000 0 100 0.5"; do
    echo "$budget" >"$tight"
    if RNIC_SYNTH_BUDGET=$tight RNIC_SYNTH_REPORT=$tight.md bash scripts/synth.sh --check fence >/dev/null 2>&1; then
        echo "scripts/synth.sh --check passed the fence block against the budget '$budget'" >&2
        exit 1
    fi
done
rm -f "$tight" "$tight.md"
echo "== synthesis budgets: OK"
