# Shared by scripts/perf.sh and scripts/test.sh (sourced, not run).

# Verilator builds the cosimulated NIC; install it when we can, else say how.
ensure_verilator() {
    if command -v "${VERILATOR:-verilator}" >/dev/null 2>&1; then
        return 0
    fi
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "verilator missing: installing it with apt-get" >&2
        apt-get update
        DEBIAN_FRONTEND=noninteractive apt-get install -y verilator
    else
        echo "verilator is missing; install it with:" >&2
        echo "    sudo apt-get install -y verilator" >&2
        exit 1
    fi
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

# tshark runs rnic's Wireshark dissector over a capture in the capture test
# (tools/wireshark/rnic.lua); install it when we can, else say how.
ensure_tshark() {
    if command -v tshark >/dev/null 2>&1; then
        return 0
    fi
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "tshark missing: installing it with apt-get" >&2
        apt-get update
        DEBIAN_FRONTEND=noninteractive apt-get install -y tshark
    else
        echo "tshark is missing; install it with:" >&2
        echo "    sudo apt-get install -y tshark" >&2
        exit 1
    fi
}
