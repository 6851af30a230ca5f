#!/usr/bin/env python3
"""Decode an rnic capture with scapy's RoCEv2 layer (an implementation
independent of rnic-spec) and check it.

For every frame: Ethernet/IPv4/UDP 4791/BTH decode, the IPv4 header
checksum, and the ICRC recomputed by scapy equal to the one on the wire.
With --expect (JSON describing the workload), for every flow: the request
opcode sequence, destination QP, PSNs incrementing by one from the first
PSN, payload lengths, RETH DMA length, and ACKs (not NAKs) back to the
requester covering the last request. Exit status 0 only if all holds.

--expect format:
  {"mtu": 1024, "flows": [{"req_ip": "10.0.0.1", "resp_ip": "10.0.0.2",
    "req_qpn": 2, "resp_qpn": 2, "first_psn": 123,
    "msgs": [["write", 3000], ["send", 1]]}]}
"""

import argparse
import json
import struct
import sys

try:
    from scapy.all import rdpcap, raw
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether
    from scapy.contrib.roce import BTH, AETH
except ImportError:
    print("check_pcap.py: scapy is missing; install it with: pip install scapy==2.6.1", file=sys.stderr)
    sys.exit(2)

ROCE_PORT = 4791
ACK = 0x11
# rnic's fixed header is 128 bytes; BTH ends at 54, so 74 bytes of RETH and
# rnic extension precede the payload of every request (rnic-spec wire.rs).
HDR_LEN = 128
BTH_END = 54
EXT_LEN = HDR_LEN - BTH_END
PSN_MASK = (1 << 24) - 1

OPS = {
    ("send", True, False): 0x00, ("send", False, False): 0x01,
    ("send", False, True): 0x02, ("send", True, True): 0x04,
    ("write", True, False): 0x06, ("write", False, False): 0x07,
    ("write", False, True): 0x08, ("write", True, True): 0x0A,
}


def fail(msg):
    print("check_pcap.py: FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def check_frame(i, pkt):
    """Structure, IPv4 checksum and ICRC of one frame."""
    if not (pkt.haslayer(Ether) and pkt.haslayer(IP) and pkt.haslayer(UDP) and pkt.haslayer(BTH)):
        fail("frame %d is not Ethernet/IPv4/UDP/BTH: %s" % (i, pkt.summary()))
    if pkt[UDP].dport != ROCE_PORT:
        fail("frame %d: UDP destination port %d" % (i, pkt[UDP].dport))
    ip = IP(raw(pkt[IP]))
    wire_csum = ip.chksum
    ip.chksum = None
    if IP(raw(ip)).chksum != wire_csum:
        fail("frame %d: IPv4 checksum %#06x, scapy computes %#06x" % (i, wire_csum, IP(raw(ip)).chksum))
    wire_icrc = raw(pkt)[-4:]
    computed = pkt[BTH].compute_icrc(None)
    if wire_icrc != computed:
        fail("frame %d (opcode %#04x, PSN %d): ICRC on the wire %s, scapy computes %s"
             % (i, pkt[BTH].opcode, pkt[BTH].psn, wire_icrc.hex(), computed.hex()))


def expected_packets(msgs, mtu):
    """(opcode, message index, packet index, payload length) of each request packet."""
    out = []
    for mi, (op, length) in enumerate(msgs):
        n = max(1, -(-length // mtu))
        for p in range(n):
            plen = length - p * mtu if p == n - 1 else mtu
            out.append((OPS[(op, p == 0, p == n - 1)], mi, p, plen))
    return out


def check_flow(fi, flow, mtu, frames):
    """Requests of one QP pair and the ACKs that answer them; returns frame indices used."""
    used = set()
    reqs = [(i, p) for i, p in frames
            if p[IP].src == flow["req_ip"] and p[BTH].dqpn == flow["resp_qpn"] and p[BTH].opcode != ACK]
    want = expected_packets(flow["msgs"], mtu)
    if len(reqs) != len(want):
        fail("flow %d: %d request frames, expected %d" % (fi, len(reqs), len(want)))
    for k, ((i, p), (op, mi, pi, plen)) in enumerate(zip(reqs, want)):
        where = "flow %d frame %d (request %d: message %d packet %d)" % (fi, i, k, mi, pi)
        b = p[BTH]
        if b.opcode != op:
            fail("%s: opcode %#04x, expected %#04x" % (where, b.opcode, op))
        psn = (flow["first_psn"] + k) & PSN_MASK
        if b.psn != psn:
            fail("%s: PSN %d, expected %d" % (where, b.psn, psn))
        if p[IP].dst != flow["resp_ip"]:
            fail("%s: destination IP %s" % (where, p[IP].dst))
        body = raw(b.payload)
        got_plen = len(body) - EXT_LEN - b.padcount
        if got_plen != plen:
            fail("%s: payload %d bytes, expected %d" % (where, got_plen, plen))
        _va, _rkey, dmalen = struct.unpack("!QII", body[:16])
        if dmalen != flow["msgs"][mi][1]:
            fail("%s: RETH DMA length %d, expected %d" % (where, dmalen, flow["msgs"][mi][1]))
        if pi == max(1, -(-flow["msgs"][mi][1] // mtu)) - 1 and not b.ackreq:
            fail("%s: last packet of a message without AckReq" % where)
        used.add(i)
    acks = [(i, p) for i, p in frames
            if p[IP].src == flow["resp_ip"] and p[BTH].dqpn == flow["req_qpn"] and p[BTH].opcode == ACK]
    if not acks:
        fail("flow %d: no ACK to QP %d" % (fi, flow["req_qpn"]))
    for i, p in acks:
        if not p.haslayer(AETH):
            fail("flow %d frame %d: ACK without AETH" % (fi, i))
        if p[AETH].syndrome >> 5 != 0:
            fail("flow %d frame %d: NAK (syndrome %#04x) for PSN %d" % (fi, i, p[AETH].syndrome, p[BTH].psn))
        used.add(i)
    last = (flow["first_psn"] + len(want) - 1) & PSN_MASK
    if acks[-1][1][BTH].psn != last:
        fail("flow %d: last ACK for PSN %d, expected %d" % (fi, acks[-1][1][BTH].psn, last))
    return used, len(reqs), len(acks)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pcap")
    ap.add_argument("--expect", help="JSON description of the workload (see above)")
    a = ap.parse_args()
    pkts = rdpcap(a.pcap)
    if len(pkts) == 0:
        fail("%s holds no frames" % a.pcap)
    frames = list(enumerate(pkts))
    for i, p in frames:
        check_frame(i, p)
    summary = "%d frames decoded by scapy, ICRC and IPv4 checksum OK" % len(pkts)
    if a.expect:
        exp = json.loads(a.expect)
        used = set()
        nreq = nack = 0
        for fi, flow in enumerate(exp["flows"]):
            u, r, k = check_flow(fi, flow, exp["mtu"], frames)
            used |= u
            nreq += r
            nack += k
        stray = [i for i, _ in frames if i not in used]
        if stray:
            fail("%d frames belong to no expected flow, first: frame %d %s" % (len(stray), stray[0], pkts[stray[0]].summary()))
        summary += "; %d flows: %d requests, %d ACKs as expected" % (len(exp["flows"]), nreq, nack)
    print("check_pcap.py: OK: " + summary)


if __name__ == "__main__":
    main()
