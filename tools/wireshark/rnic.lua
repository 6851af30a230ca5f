-- Wireshark / tshark dissector for rnic's RoCEv2 extension header.
--
-- Wireshark decodes Ethernet, IPv4, UDP 4791 and the BTH of rnic's frames
-- itself (and shows the ICRC); it sees the bytes rnic adds after the BTH as
-- payload. This post-dissector adds an "rnic" tree with them, read at the
-- fixed offsets of rnic's 128-byte header (rnic_spec::wire; every field is
-- big-endian):
--
--   request (SEND, WRITE, READ request, READ response):
--     54..62 RETH VA, 62..66 rkey, 66..70 message length (on every packet),
--     70..74 SSN, 74..78 PSN_OFFSET, 78..86 TX timestamp, 86..90 RSN,
--     90..94 immediate, 94..102 READ local address, 102..106 READ lkey
--   ACK/NAK (opcode 0x11):
--     54 syndrome, 55..58 MSN (the AETH), 58..62 echoed SSN, 62..66 echoed
--     PSN_OFFSET, 66..74 echoed TX timestamp, 74..76 echoed entropy,
--     76 ECN echo, 77 flags (0x01 PLACED, 0x02 NO_ECHO), 78..82 ePSN, 82..86 SACK base,
--     86..90 OOO count, 90..94 MSN_PSN, 94..102 SACK bitmap, 102..106 bytes received
--
-- Load it for one run:  tshark -X lua_script:tools/wireshark/rnic.lua -r run.pcap -O rnic
-- or for good: copy it to ~/.local/lib/wireshark/plugins/ (Wireshark 3.x and later).
-- Display filters: rnic.ssn == 3, rnic.ack.epsn, rnic.ack.flags.placed == 1, ...

local rnic = Proto("rnic", "rnic RoCEv2 extension")

local HDR_LEN = 128
local ICRC_LEN = 4
local OP_ACK = 0x11
local OP_LAST_REQUEST = 0x10 -- SEND 0x00..0x05, WRITE 0x06..0x0B, READ request 0x0C, READ response 0x0D..0x10

local f = {
    kind = ProtoField.string("rnic.kind", "Kind"),
    va = ProtoField.uint64("rnic.va", "RETH VA", base.HEX),
    rkey = ProtoField.uint32("rnic.rkey", "RETH rkey", base.HEX),
    msg_len = ProtoField.uint32("rnic.msg_len", "Message length", base.DEC),
    ssn = ProtoField.uint32("rnic.ssn", "SSN", base.DEC),
    psn_offset = ProtoField.uint32("rnic.psn_offset", "PSN_OFFSET", base.DEC),
    ts = ProtoField.uint64("rnic.ts", "TX timestamp (cycles)", base.DEC),
    rsn = ProtoField.uint32("rnic.rsn", "RSN", base.DEC),
    imm = ProtoField.uint32("rnic.imm", "Immediate", base.HEX),
    laddr = ProtoField.uint64("rnic.laddr", "READ local address", base.HEX),
    lkey = ProtoField.uint32("rnic.lkey", "READ lkey", base.HEX),
    syndrome = ProtoField.uint8("rnic.ack.syndrome", "Syndrome", base.HEX),
    msn = ProtoField.uint32("rnic.ack.msn", "MSN", base.DEC),
    a_ssn = ProtoField.uint32("rnic.ack.ssn", "Echoed SSN", base.DEC),
    a_psn_offset = ProtoField.uint32("rnic.ack.psn_offset", "Echoed PSN_OFFSET", base.DEC),
    a_ts = ProtoField.uint64("rnic.ack.ts", "Echoed TX timestamp (cycles)", base.DEC),
    entropy = ProtoField.uint16("rnic.ack.entropy", "Echoed entropy", base.HEX),
    ecn = ProtoField.uint8("rnic.ack.ecn", "ECN echo", base.HEX),
    flags = ProtoField.uint8("rnic.ack.flags", "Flags", base.HEX),
    placed = ProtoField.bool("rnic.ack.flags.placed", "PLACED (placed out of order)", 8, nil, 0x01),
    no_echo = ProtoField.bool("rnic.ack.flags.no_echo", "NO_ECHO (answers no request: entropy and ECN echo are no feedback)", 8, nil, 0x02),
    epsn = ProtoField.uint32("rnic.ack.epsn", "ePSN", base.DEC),
    sack_base = ProtoField.uint32("rnic.ack.sack_base", "SACK base", base.DEC),
    ooo = ProtoField.uint32("rnic.ack.ooo", "OOO count", base.DEC),
    msn_psn = ProtoField.uint32("rnic.ack.msn_psn", "MSN_PSN", base.DEC),
    sack_bitmap = ProtoField.uint64("rnic.ack.sack_bitmap", "SACK bitmap", base.HEX),
    bytes_rx = ProtoField.uint32("rnic.ack.bytes_rx", "Bytes received", base.DEC),
}
rnic.fields = {
    f.kind, f.va, f.rkey, f.msg_len, f.ssn, f.psn_offset, f.ts, f.rsn, f.imm, f.laddr, f.lkey,
    f.syndrome, f.msn, f.a_ssn, f.a_psn_offset, f.a_ts, f.entropy, f.ecn, f.flags, f.placed, f.no_echo,
    f.epsn, f.sack_base, f.ooo, f.msn_psn, f.sack_bitmap, f.bytes_rx,
}

local udp_dstport = Field.new("udp.dstport")

function rnic.dissector(tvb, pinfo, tree)
    local dport = udp_dstport()
    if dport == nil or dport.value ~= 4791 or tvb:len() < HDR_LEN + ICRC_LEN then
        return
    end
    local op = tvb(42, 1):uint()
    if op == OP_ACK then
        local t = tree:add(rnic, tvb(54, HDR_LEN - 54), "rnic ACK extension")
        t:add(f.kind, "ack")
        t:add(f.syndrome, tvb(54, 1))
        t:add(f.msn, tvb(55, 3))
        t:add(f.a_ssn, tvb(58, 4))
        t:add(f.a_psn_offset, tvb(62, 4))
        t:add(f.a_ts, tvb(66, 8))
        t:add(f.entropy, tvb(74, 2))
        t:add(f.ecn, tvb(76, 1))
        local ft = t:add(f.flags, tvb(77, 1))
        ft:add(f.placed, tvb(77, 1))
        ft:add(f.no_echo, tvb(77, 1))
        t:add(f.epsn, tvb(78, 4))
        t:add(f.sack_base, tvb(82, 4))
        t:add(f.ooo, tvb(86, 4))
        t:add(f.msn_psn, tvb(90, 4))
        t:add(f.sack_bitmap, tvb(94, 8))
        t:add(f.bytes_rx, tvb(102, 4))
    elseif op <= OP_LAST_REQUEST then
        local t = tree:add(rnic, tvb(54, HDR_LEN - 54), "rnic request extension")
        t:add(f.kind, "request")
        t:add(f.va, tvb(54, 8))
        t:add(f.rkey, tvb(62, 4))
        t:add(f.msg_len, tvb(66, 4))
        t:add(f.ssn, tvb(70, 4))
        t:add(f.psn_offset, tvb(74, 4))
        t:add(f.ts, tvb(78, 8))
        t:add(f.rsn, tvb(86, 4))
        t:add(f.imm, tvb(90, 4))
        t:add(f.laddr, tvb(94, 8))
        t:add(f.lkey, tvb(102, 4))
    end
end

register_postdissector(rnic)
