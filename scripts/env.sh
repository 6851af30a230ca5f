# Shared by scripts/perf.sh, scripts/test.sh and scripts/board.sh (sourced, not run).

# Installs Debian package $2 for command $1 when it is missing (as root,
# with apt-get), else says how.
ensure_apt_tool() {
    if command -v "$1" >/dev/null 2>&1; then
        return 0
    fi
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "$1 missing: installing $2 with apt-get" >&2
        apt-get update
        DEBIAN_FRONTEND=noninteractive apt-get install -y "$2"
    else
        echo "$1 is missing; install it with:" >&2
        echo "    sudo apt-get install -y $2" >&2
        exit 1
    fi
}

# Verilator builds the cosimulated NIC.
ensure_verilator() {
    ensure_apt_tool "${VERILATOR:-verilator}" verilator
}

# Verilator's FST waveform writer (rnic-sim's `fst` feature) compiles against zlib.
ensure_zlib() {
    if [ -e /usr/include/zlib.h ]; then
        return 0
    fi
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "zlib.h missing: installing zlib1g-dev with apt-get" >&2
        apt-get update
        DEBIAN_FRONTEND=noninteractive apt-get install -y zlib1g-dev
    else
        echo "zlib.h is missing (FST waveforms need it); install it with:" >&2
        echo "    sudo apt-get install -y zlib1g-dev" >&2
        exit 1
    fi
}

# Yosys checks the board shell for loops and synthesizes the blocks.
ensure_yosys() {
    ensure_apt_tool yosys yosys
}

# tshark runs rnic's Wireshark dissector over a capture in the capture test
# (tools/wireshark/rnic.lua).
ensure_tshark() {
    ensure_apt_tool tshark tshark
}

# scapy decodes captures independently of rnic-spec (scripts/check_pcap.py).
ensure_scapy() {
    if python3 -c "import scapy.contrib.roce" >/dev/null 2>&1; then
        return 0
    fi
    echo "scapy missing: installing it with pip" >&2
    python3 -m pip install --quiet scapy==2.6.1 || {
        echo "could not install scapy; install it with:" >&2
        echo "    python3 -m pip install scapy==2.6.1" >&2
        exit 1
    }
}
