//! The typed wire views against hand-written frames, and randomised
//! emit/parse round trips.
//!
//! The golden frames are written byte by byte from the layout table in the
//! `wire` module doc. Their IPv4 checksums and ICRCs were computed once
//! outside this crate (Python's `zlib.crc32` over the masked header, and a
//! separate ones'-complement sum) and cross-checked with scapy's RoCE
//! dissector (`scapy.contrib.roce`, `BTH.compute_icrc`), which also decoded
//! the same opcode, PadCnt, AckReq, destination QP and PSN.

use rnic_spec::wire::{
    field, frame_len, off, opcode, AckRepr, DecodeError, Frame, Opcode, Packet, RequestRepr, Syndrome, HDR_LEN,
    ICRC_LEN,
};

/// WRITE FIRST, 6 payload bytes (so 2 bytes of pad), ECN = ECT(0).
fn write_first_golden() -> Vec<u8> {
    [
        // Ethernet: dst MAC, src MAC, type IPv4.
        &[0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00][..],
        // IPv4: ver/IHL, TOS (ECN 2), total length 126, ident 0, DF, TTL 64, UDP,
        // checksum, 10.0.0.1 -> 10.0.0.2.
        &[0x45, 0x02, 0x00, 0x7E, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x26, 0x6B, 10, 0, 0, 1, 10, 0, 0, 2],
        // UDP: sport 0xC005, dport 4791, length 106, checksum 0.
        &[0xC0, 0x05, 0x12, 0xB7, 0x00, 0x6A, 0x00, 0x00],
        // BTH: opcode 0x06, PadCnt 2, P_Key 0xFFFF, resv8a, dest QP 0x105, AckReq 0, PSN 0xABCD.
        &[0x06, 0x20, 0xFF, 0xFF, 0x00, 0x00, 0x01, 0x05, 0x00, 0x00, 0xAB, 0xCD],
        // RETH: VA 0x7F00_1234_5678, rkey 0x203, DMA length 10000.
        &[0x00, 0x00, 0x7F, 0x00, 0x12, 0x34, 0x56, 0x78, 0x00, 0x00, 0x02, 0x03, 0x00, 0x00, 0x27, 0x10],
        // Extension: SSN 7, PSN_OFFSET 0, timestamp 0x1_0203_0405.
        &[0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05],
        // Bytes 86..128: zero.
        &[0; 42],
        // Payload, then 2 bytes of pad.
        &[0xDE, 0xAD, 0xBE, 0xEF, 0x01, 0x02, 0x00, 0x00],
        // ICRC 0xB11318FE, least significant byte first.
        &[0xFE, 0x18, 0x13, 0xB1],
    ]
    .concat()
}

fn write_first_repr() -> RequestRepr<'static> {
    RequestRepr {
        dst_mac: [0x02, 0, 0, 0, 0, 0x02],
        src_mac: [0x02, 0, 0, 0, 0, 0x01],
        ecn: 2,
        src_ip: 0x0A00_0001,
        dst_ip: 0x0A00_0002,
        sport: 0xC005,
        opcode: Opcode::WriteFirst,
        dqpn: 0x105,
        ack_req: false,
        psn: 0xABCD,
        va: 0x7F00_1234_5678,
        rkey: 0x203,
        msg_len: 10_000,
        ssn: 7,
        psn_offset: 0,
        ts: 0x1_0203_0405,
        rsn: 0,
        imm: 0,
        laddr: 0,
        lkey: 0,
        payload: &[0xDE, 0xAD, 0xBE, 0xEF, 0x01, 0x02],
    }
}

/// SEND ONLY of "abc" (1 byte of pad) with AckReq and the largest PSN.
fn send_only_golden() -> Vec<u8> {
    [
        // Ethernet: dst MAC, src MAC, type IPv4.
        &[0xA0, 0xB1, 0xC2, 0xD3, 0xE4, 0xF5, 0x0A, 0x1B, 0x2C, 0x3D, 0x4E, 0x5F, 0x08, 0x00][..],
        // IPv4: total length 122, DF, TTL 64, UDP, checksum, 192.168.1.10 -> 192.168.1.20.
        &[0x45, 0x00, 0x00, 0x7A, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xB7, 0x04, 192, 168, 1, 10, 192, 168, 1, 20],
        // UDP: sport 0xD00D, dport 4791, length 102, checksum 0.
        &[0xD0, 0x0D, 0x12, 0xB7, 0x00, 0x66, 0x00, 0x00],
        // BTH: opcode 0x04, PadCnt 1, P_Key, resv8a, dest QP 0x42, AckReq 1, PSN 0xFFFFFF.
        &[0x04, 0x10, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x42, 0x80, 0xFF, 0xFF, 0xFF],
        // RETH: VA 0, rkey 0, DMA length 3.
        &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x00, 0x00, 0x03],
        // Extension: SSN 0x1234, PSN_OFFSET 0, timestamp 0x1122_3344_5566_7788.
        &[0x00, 0x00, 0x12, 0x34, 0x00, 0x00, 0x00, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88],
        // Bytes 86..128: zero.
        &[0; 42],
        // Payload "abc", then 1 byte of pad.
        &[b'a', b'b', b'c', 0x00],
        // ICRC 0x0F7008DD, least significant byte first.
        &[0xDD, 0x08, 0x70, 0x0F],
    ]
    .concat()
}

fn send_only_repr() -> RequestRepr<'static> {
    RequestRepr {
        dst_mac: [0xA0, 0xB1, 0xC2, 0xD3, 0xE4, 0xF5],
        src_mac: [0x0A, 0x1B, 0x2C, 0x3D, 0x4E, 0x5F],
        ecn: 0,
        src_ip: 0xC0A8_010A,
        dst_ip: 0xC0A8_0114,
        sport: 0xD00D,
        opcode: Opcode::SendOnly,
        dqpn: 0x42,
        ack_req: true,
        psn: 0xFF_FFFF,
        va: 0,
        rkey: 0,
        msg_len: 3,
        ssn: 0x1234,
        psn_offset: 0,
        ts: 0x1122_3344_5566_7788,
        rsn: 0,
        imm: 0,
        laddr: 0,
        lkey: 0,
        payload: b"abc",
    }
}

/// The ACK of the WRITE FIRST above, with nonzero SACK fields so their
/// placement is checked too.
fn ack_golden() -> Vec<u8> {
    [
        // Ethernet: dst MAC, src MAC, type IPv4.
        &[0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x08, 0x00][..],
        // IPv4: total length 118, DF, TTL 64, UDP, checksum, 10.0.0.2 -> 10.0.0.1.
        &[0x45, 0x00, 0x00, 0x76, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x26, 0x75, 10, 0, 0, 2, 10, 0, 0, 1],
        // UDP: sport 0xC005, dport 4791, length 98, checksum 0.
        &[0xC0, 0x05, 0x12, 0xB7, 0x00, 0x62, 0x00, 0x00],
        // BTH: opcode 0x11, no pad, P_Key, resv8a, dest QP 0x105, AckReq 0, PSN 0xABCD.
        &[0x11, 0x00, 0xFF, 0xFF, 0x00, 0x00, 0x01, 0x05, 0x00, 0x00, 0xAB, 0xCD],
        // AETH: syndrome ACK, MSN 8.
        &[0x1F, 0x00, 0x00, 0x08],
        // Extension: echoed SSN 7, PSN_OFFSET 0, timestamp 0x1_0203_0405.
        &[0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05],
        // Echoed entropy 0xC005, ECN echo 2, reserved, ePSN 0xABCE.
        &[0xC0, 0x05, 0x02, 0x00, 0x00, 0x00, 0xAB, 0xCE],
        // SACK base 0xABCE, OOO count 3, MSN_PSN 0xABC0.
        &[0x00, 0x00, 0xAB, 0xCE, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0xAB, 0xC0],
        // SACK bitmap 0x8000_0000_0000_0001, bytes received 10000.
        &[0x80, 0, 0, 0, 0, 0, 0, 0x01, 0, 0, 0x27, 0x10],
        // Bytes 106..128: zero.
        &[0; 22],
        // ICRC 0x4AC28A70 (as scapy computes it), least significant byte first.
        &[0x70, 0x8A, 0xC2, 0x4A],
    ]
    .concat()
}

fn ack_repr() -> AckRepr {
    AckRepr {
        dst_mac: [0x02, 0, 0, 0, 0, 0x01],
        src_mac: [0x02, 0, 0, 0, 0, 0x02],
        ecn: 0,
        src_ip: 0x0A00_0002,
        dst_ip: 0x0A00_0001,
        sport: 0xC005,
        dqpn: 0x105,
        ack_req: false,
        psn: 0xABCD,
        syndrome: Syndrome::Ack,
        msn: 8,
        ssn: 7,
        psn_offset: 0,
        ts: 0x1_0203_0405,
        echo_entropy: 0xC005,
        echo_ecn: 2,
        ack_flags: 0,
        epsn: 0xABCE,
        msn_psn: 0xABC0,
        sack_base: 0xABCE,
        sack_bitmap: 0x8000_0000_0000_0001,
        bytes_rx: 10_000,
        ooo: 3,
    }
}

fn emit_request(repr: &RequestRepr) -> Vec<u8> {
    // Start from garbage: emit must write every byte.
    let mut buf = vec![0xA5; repr.buffer_len()];
    repr.emit(&mut Packet::new_unchecked(&mut buf[..]));
    buf
}

fn emit_ack(repr: &AckRepr) -> Vec<u8> {
    let mut buf = vec![0xA5; repr.buffer_len()];
    repr.emit(&mut Packet::new_unchecked(&mut buf[..]));
    buf
}

#[test]
fn golden_write_first() {
    let want = write_first_golden();
    let repr = write_first_repr();
    assert_eq!(want.len(), 140);
    assert_eq!(emit_request(&repr), want);

    let packet = Packet::new_checked(&want[..]).unwrap();
    assert_eq!(RequestRepr::parse(&packet), Ok(repr));
    assert!(packet.opcode().has_reth() && packet.opcode().is_first() && !packet.opcode().is_last());
    assert_eq!((packet.ip_total_len(), packet.udp_len(), packet.pad_count()), (126, 106, 2));
    assert_eq!((packet.ip_checksum(), packet.icrc()), (0x266B, 0xB113_18FE));
    assert!(packet.ip_dont_frag() && !packet.ip_is_fragment());
    assert_eq!(packet.payload(), repr.payload);

    // Frame is the same frame.
    assert_eq!(Frame::from(repr).encode(), want);
    assert_eq!(Frame::decode(&want).unwrap(), Frame::from(repr));
}

#[test]
fn golden_send_only() {
    let want = send_only_golden();
    let repr = send_only_repr();
    assert_eq!(want.len(), 136);
    assert_eq!(emit_request(&repr), want);

    let packet = Packet::new_checked(&want[..]).unwrap();
    assert_eq!(RequestRepr::parse(&packet), Ok(repr));
    assert!(packet.ack_req());
    assert_eq!((packet.opcode(), packet.psn(), packet.dest_qpn()), (Opcode::SendOnly, 0xFF_FFFF, 0x42));
    assert_eq!(packet.payload(), b"abc");
    assert_eq!(Frame::from(repr).encode(), want);
    assert_eq!(Frame::decode(&want).unwrap(), Frame::from(repr));
}

#[test]
fn golden_ack() {
    let want = ack_golden();
    let repr = ack_repr();
    assert_eq!(want.len(), 132);
    assert_eq!(emit_ack(&repr), want);

    let packet = Packet::new_checked(&want[..]).unwrap();
    assert_eq!(AckRepr::parse(&packet), Ok(repr));
    assert_eq!((packet.syndrome(), packet.msn(), packet.epsn()), (Syndrome::Ack, 8, 0xABCE));
    assert_eq!((packet.msn_psn(), packet.ooo_count(), packet.imm()), (0xABC0, 3, 0xABC0));
    assert!(packet.payload().is_empty());

    // Frame carries the SACK fields: decoding and encoding it is lossless.
    let frame = Frame::decode(&want).unwrap();
    assert_eq!(frame, Frame::from(repr));
    assert_eq!(frame.as_ack(), Some(repr));
    assert_eq!(frame.encode(), want);
}

fn parse_request(b: &[u8]) -> Result<RequestRepr<'_>, DecodeError> {
    RequestRepr::parse(&Packet::new_unchecked(b))
}

#[test]
fn parse_reports_each_error() {
    let good = write_first_golden();

    assert_eq!(parse_request(&good[..HDR_LEN + ICRC_LEN - 1]), Err(DecodeError::Length { frame: 131, ip_total: 0 }));
    assert_eq!(parse_request(&good[..good.len() - 4]), Err(DecodeError::Length { frame: 136, ip_total: 126 }));
    for at in [off::ETH_TYPE, off::IP, off::IP_PROTO, off::UDP_DPORT + 1] {
        let mut b = good.clone();
        b[at] ^= 0x01;
        assert_eq!(parse_request(&b), Err(DecodeError::NotRoce), "byte {at}");
    }
    let mut b = good.clone();
    b[off::IP_TTL] = 63;
    assert_eq!(parse_request(&b), Err(DecodeError::IpChecksum { got: 0x266B, want: 0x276B }));
    let mut b = good.clone();
    b[HDR_LEN] ^= 0xFF;
    assert!(matches!(parse_request(&b), Err(DecodeError::Icrc { got: 0xB113_18FE, .. })));

    let ack = ack_golden();
    assert_eq!(parse_request(&ack), Err(DecodeError::WrongKind { opcode: opcode::ACK }));
    assert_eq!(AckRepr::parse(&Packet::new_unchecked(&good[..])), Err(DecodeError::WrongKind { opcode: 0x06 }));
    assert!(DecodeError::WrongKind { opcode: opcode::ACK }.to_string().contains("0x11"));
}

#[test]
fn setters_then_fill_checksums() {
    let mut packet = Packet::new_checked(write_first_golden()).unwrap();
    packet.set_psn(0x12_3456);
    packet.set_ip_ttl(5);
    packet.set_opcode(Opcode::WriteMiddle);
    packet.payload_mut()[0] = 0x11;
    assert!(matches!(packet.check_checksums(), Err(DecodeError::IpChecksum { .. })));
    packet.fill_checksums();
    assert_eq!(packet.check_checksums(), Ok(()));
    let bytes = packet.into_inner();
    let repr = RequestRepr::parse(&Packet::new_checked(&bytes[..]).unwrap()).unwrap();
    assert_eq!((repr.psn, repr.opcode, repr.payload[0]), (0x12_3456, Opcode::WriteMiddle, 0x11));
    assert_eq!(bytes[off::IP_TTL], 5);
    assert_eq!(field::BTH_PSN.get(&bytes), 0x12_3456);
}

/// xorshift64*: a fixed-seed generator, so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn mac(&mut self) -> [u8; 6] {
        let b = self.next().to_le_bytes();
        [b[0], b[1], b[2], b[3], b[4], b[5]]
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

fn random_request<'a>(r: &mut Rng, payload: &'a [u8]) -> RequestRepr<'a> {
    let opcode = match r.below(4) {
        // Any byte but ACK: unknown opcodes have the request layout too.
        0 => Opcode::from(r.next() as u8),
        _ => Opcode::request(r.below(2) == 1, r.below(2) == 1, r.below(2) == 1),
    };
    RequestRepr {
        dst_mac: r.mac(),
        src_mac: r.mac(),
        ecn: r.below(4) as u8,
        src_ip: r.next() as u32,
        dst_ip: r.next() as u32,
        sport: r.next() as u16,
        opcode: if opcode == Opcode::Ack { Opcode::SendMiddle } else { opcode },
        dqpn: r.below(1 << 24) as u32,
        ack_req: r.below(2) == 1,
        psn: r.below(1 << 24) as u32,
        va: r.next(),
        rkey: r.next() as u32,
        msg_len: r.next() as u32,
        ssn: r.next() as u32,
        psn_offset: r.next() as u32,
        ts: r.next(),
        rsn: r.next() as u32,
        imm: r.next() as u32,
        laddr: r.next(),
        lkey: r.next() as u32,
        payload,
    }
}

fn random_ack(r: &mut Rng) -> AckRepr {
    AckRepr {
        dst_mac: r.mac(),
        src_mac: r.mac(),
        ecn: r.below(4) as u8,
        src_ip: r.next() as u32,
        dst_ip: r.next() as u32,
        sport: r.next() as u16,
        dqpn: r.below(1 << 24) as u32,
        ack_req: r.below(2) == 1,
        psn: r.below(1 << 24) as u32,
        syndrome: Syndrome::from(r.next() as u8),
        msn: r.below(1 << 24) as u32,
        ssn: r.next() as u32,
        psn_offset: r.next() as u32,
        ts: r.next(),
        echo_entropy: r.next() as u16,
        echo_ecn: r.next() as u8,
        ack_flags: r.next() as u8,
        epsn: r.next() as u32,
        msn_psn: r.next() as u32,
        sack_base: r.next() as u32,
        sack_bitmap: r.next(),
        bytes_rx: r.next() as u32,
        ooo: r.next() as u32,
    }
}

#[test]
fn emit_parse_round_trips() {
    let mut r = Rng(0x5EED_F00D_1234);
    for _ in 0..5_000 {
        let len = r.below(300) as usize;
        let payload = r.bytes(len);
        let req = random_request(&mut r, &payload);
        let bytes = emit_request(&req);
        assert_eq!(bytes.len(), frame_len(payload.len()));
        assert_eq!(bytes.len() % 4, 0);
        let packet = Packet::new_checked(&bytes[..]).unwrap();
        assert_eq!(RequestRepr::parse(&packet), Ok(req));
        assert_eq!(Frame::from(req).encode(), bytes);
        assert_eq!(Frame::decode(&bytes), Ok(Frame::from(req)));

        let ack = random_ack(&mut r);
        let bytes = emit_ack(&ack);
        assert_eq!(AckRepr::parse(&Packet::new_checked(&bytes[..]).unwrap()), Ok(ack));
        assert_eq!(Frame::decode(&bytes).unwrap().as_ack().map(|a| a.epsn), Some(ack.epsn));
    }
}

/// Reads every field of a checked packet; must not panic.
fn read_everything(p: &Packet<&[u8]>) -> Vec<u64> {
    vec![
        u64::from(p.dst_mac()[0]),
        u64::from(p.src_mac()[5]),
        u64::from(p.ethertype()),
        u64::from(p.ip_ver_ihl()),
        u64::from(p.ip_tos()),
        u64::from(p.ip_ecn()),
        u64::from(p.ip_total_len()),
        u64::from(p.ip_ident()),
        u64::from(p.ip_flags_frag()),
        u64::from(p.ip_dont_frag()),
        u64::from(p.ip_is_fragment()),
        u64::from(p.ip_ttl()),
        u64::from(p.ip_protocol()),
        u64::from(p.ip_checksum()),
        u64::from(p.ip_src()),
        u64::from(p.ip_dst()),
        u64::from(p.udp_src_port()),
        u64::from(p.udp_dst_port()),
        u64::from(p.udp_len()),
        u64::from(p.udp_checksum()),
        u64::from(u8::from(p.opcode())),
        u64::from(p.bth_flags()),
        u64::from(p.pad_count()),
        u64::from(p.pkey()),
        u64::from(p.bth_resv8a()),
        u64::from(p.dest_qpn()),
        u64::from(p.ack_req()),
        u64::from(p.psn()),
        p.reth_va(),
        u64::from(p.reth_rkey()),
        u64::from(p.reth_len()),
        u64::from(p.ssn()),
        u64::from(p.psn_offset()),
        p.timestamp(),
        u64::from(u8::from(p.syndrome())),
        u64::from(p.msn()),
        u64::from(p.ack_ssn()),
        u64::from(p.ack_psn_offset()),
        p.ack_timestamp(),
        u64::from(p.echo_entropy()),
        u64::from(p.echo_ecn()),
        u64::from(p.ack_flags()),
        u64::from(p.epsn()),
        u64::from(p.sack_base()),
        p.sack_bitmap(),
        u64::from(p.bytes_received()),
        u64::from(p.ooo_count()),
        u64::from(p.icrc()),
        p.payload().len() as u64,
    ]
}

#[test]
fn new_checked_never_panics() {
    let mut r = Rng(0xBAD_F00D);
    let seeds = [write_first_golden(), send_only_golden(), ack_golden()];
    let mut accepted = 0;
    for i in 0..20_000 {
        let mut b = if i % 4 == 0 {
            let len = r.below(200) as usize;
            r.bytes(len)
        } else {
            seeds[r.below(3) as usize].clone()
        };
        for _ in 0..r.below(4) {
            if !b.is_empty() {
                let at = r.below(b.len() as u64) as usize;
                b[at] = r.next() as u8;
            }
        }
        if r.below(3) == 0 {
            b.truncate(r.below(b.len() as u64 + 1) as usize);
        }
        if r.below(2) == 0 && b.len() >= off::IP_LEN + 2 {
            // Make the IPv4 length agree, so more buffers get past the checks.
            let total = (b.len() - off::IP) as u16;
            field::IP_LEN.set(&mut b, u64::from(total));
        }
        if let Ok(p) = Packet::new_checked(&b[..]) {
            accepted += 1;
            std::hint::black_box(read_everything(&p));
            let _ = p.check_checksums();
            let _ = RequestRepr::parse(&p);
            let _ = AckRepr::parse(&p);
        }
        let _ = Frame::decode(&b);
        // Parsing without new_checked first must not panic either.
        let _ = RequestRepr::parse(&Packet::new_unchecked(&b[..]));
        let _ = AckRepr::parse(&Packet::new_unchecked(&b[..]));
    }
    assert!(accepted > 1_000, "only {accepted} buffers reached the getters");
}
