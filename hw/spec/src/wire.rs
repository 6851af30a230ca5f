//! The wire format: Ethernet / IPv4 / UDP 4791 / BTH / RETH or AETH /
//! rnic extension / payload / pad / ICRC.
//!
//! Every rnic frame has a fixed 128-byte header so the payload starts on a
//! 64-byte datapath beat: the TX builder and RX parser never shift payload
//! bytes across lanes (no barrel shifter on the 512-bit path). Standard
//! tools decode Ethernet/IPv4/UDP/BTH and check the ICRC; they see the
//! extension bytes as the start of the payload (or, for WRITE FIRST/ONLY,
//! the first 16 as a RETH, which is what they are).
//!
//! | bytes   | request (SEND/WRITE)                      | ACK / NAK                       |
//! |---------|-------------------------------------------|---------------------------------|
//! | 0..14   | Ethernet II, type 0x0800                  | same                            |
//! | 14..34  | IPv4, no options, DF, TTL 64, proto 17    | same                            |
//! | 34..42  | UDP, dport 4791, sport = entropy, csum 0  | same                            |
//! | 42..54  | BTH                                       | BTH (opcode 0x11)               |
//! | 54..70  | RETH: packet's remote VA, rkey, msg len   | 54..58 AETH (syndrome, MSN)     |
//! | 70..74  | SSN (24 bit): message sequence number     | 58..62 echoed SSN               |
//! | 74..78  | PSN_OFFSET: packet index in the message   | 62..66 echoed PSN_OFFSET        |
//! | 78..86  | TX timestamp (cycles)                     | 66..74 echoed TX timestamp      |
//! | 86..128 | zero                                      | 74..76 echoed entropy, 76 ECN echo, 77 zero, 78..82 ePSN, 82..86 SACK base, 86..94 SACK bitmap, 94..102 bytes received, 102..106 OOO count, rest zero |
//!
//! All multi-byte wire fields are big-endian. The payload is padded with
//! zeros to a multiple of 4 (BTH PadCnt), then the 4-byte ICRC follows,
//! least significant byte first. The Ethernet FCS is added by the MAC and
//! is not part of the frames the core exchanges.
//!
//! The SACK fields of the ACK are reserved for STrack; the current RTL
//! fills ePSN and leaves SACK base/bitmap/bytes/OOO zero.

use crc::{Crc, CRC_32_ISO_HDLC};

/// RoCEv2 UDP destination port.
pub const ROCE_UDP_PORT: u16 = 4791;
/// Ethertype IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// Fixed header length (payload starts here).
pub const HDR_LEN: usize = 128;
/// ICRC length.
pub const ICRC_LEN: usize = 4;
/// Per-frame wire overhead outside the frame the core sees: FCS 4,
/// preamble+SFD 8, inter-frame gap 12.
pub const WIRE_OVERHEAD: usize = 24;
/// IPv4 flags+fragment-offset bits that mark a fragment (MF and the offset):
/// the receiver drops any frame with one of them set.
pub const IP_MF_OFFSET_MASK: u16 = 0x3FFF;
/// Minimum Ethernet frame length without FCS.
pub const MIN_FRAME: usize = 60;

/// Byte offsets of header fields.
pub mod off {
    /// Ethernet destination MAC.
    pub const ETH_DST: usize = 0;
    /// Ethernet source MAC.
    pub const ETH_SRC: usize = 6;
    /// Ethertype.
    pub const ETH_TYPE: usize = 12;
    /// IPv4 header start.
    pub const IP: usize = 14;
    /// IPv4 TOS (DSCP+ECN) byte.
    pub const IP_TOS: usize = 15;
    /// IPv4 total length.
    pub const IP_LEN: usize = 16;
    /// IPv4 flags (DF, MF) and fragment offset.
    pub const IP_FLAGS: usize = 20;
    /// IPv4 TTL.
    pub const IP_TTL: usize = 22;
    /// IPv4 protocol.
    pub const IP_PROTO: usize = 23;
    /// IPv4 header checksum.
    pub const IP_CSUM: usize = 24;
    /// IPv4 source address.
    pub const IP_SRC: usize = 26;
    /// IPv4 destination address.
    pub const IP_DST: usize = 30;
    /// UDP source port (entropy).
    pub const UDP_SPORT: usize = 34;
    /// UDP destination port.
    pub const UDP_DPORT: usize = 36;
    /// UDP length.
    pub const UDP_LEN: usize = 38;
    /// UDP checksum.
    pub const UDP_CSUM: usize = 40;
    /// BTH start / opcode.
    pub const BTH: usize = 42;
    /// BTH flags: SE(7) M(6) PadCnt(5:4) TVer(3:0).
    pub const BTH_FLAGS: usize = 43;
    /// BTH P_Key.
    pub const BTH_PKEY: usize = 44;
    /// BTH FECN/BECN/resv6 byte (masked in the ICRC).
    pub const BTH_RESV8A: usize = 46;
    /// BTH destination QP (24 bit).
    pub const BTH_DQPN: usize = 47;
    /// BTH AckReq(7) / resv7.
    pub const BTH_ACKREQ: usize = 50;
    /// BTH PSN (24 bit).
    pub const BTH_PSN: usize = 51;
    /// RETH virtual address (this packet's remote address).
    pub const RETH_VA: usize = 54;
    /// RETH rkey.
    pub const RETH_RKEY: usize = 62;
    /// RETH DMA length (the whole message's length).
    pub const RETH_LEN: usize = 66;
    /// Request extension: SSN.
    pub const RXT_SSN: usize = 70;
    /// Request extension: PSN_OFFSET.
    pub const RXT_PSN_OFFSET: usize = 74;
    /// Request extension: TX timestamp.
    pub const RXT_TS: usize = 78;
    /// AETH syndrome.
    pub const AETH_SYNDROME: usize = 54;
    /// AETH MSN (24 bit).
    pub const AETH_MSN: usize = 55;
    /// ACK extension: echoed SSN.
    pub const AXT_SSN: usize = 58;
    /// ACK extension: echoed PSN_OFFSET.
    pub const AXT_PSN_OFFSET: usize = 62;
    /// ACK extension: echoed TX timestamp.
    pub const AXT_TS: usize = 66;
    /// ACK extension: echoed entropy (UDP source port of the request).
    pub const AXT_ENTROPY: usize = 74;
    /// ACK extension: ECN echo (the request's IP ECN bits).
    pub const AXT_ECN: usize = 76;
    /// ACK extension: expected PSN (ePSN) at the responder.
    pub const AXT_EPSN: usize = 78;
    /// ACK extension: SACK base PSN.
    pub const AXT_SACK_BASE: usize = 82;
    /// ACK extension: 64-bit SACK bitmap segment.
    pub const AXT_SACK_BITMAP: usize = 86;
    /// ACK extension: bytes received.
    pub const AXT_BYTES_RX: usize = 94;
    /// ACK extension: out-of-order count.
    pub const AXT_OOO: usize = 102;
}

/// BTH opcodes (RC).
pub mod opcode {
    /// SEND First.
    pub const SEND_FIRST: u8 = 0x00;
    /// SEND Middle.
    pub const SEND_MIDDLE: u8 = 0x01;
    /// SEND Last.
    pub const SEND_LAST: u8 = 0x02;
    /// SEND Only.
    pub const SEND_ONLY: u8 = 0x04;
    /// RDMA WRITE First.
    pub const WRITE_FIRST: u8 = 0x06;
    /// RDMA WRITE Middle.
    pub const WRITE_MIDDLE: u8 = 0x07;
    /// RDMA WRITE Last.
    pub const WRITE_LAST: u8 = 0x08;
    /// RDMA WRITE Only.
    pub const WRITE_ONLY: u8 = 0x0A;
    /// Acknowledge (ACK or NAK, by AETH syndrome).
    pub const ACK: u8 = 0x11;

    /// Opcode for packet `first`/`last` of a SEND (`write == false`) or WRITE.
    pub const fn request(write: bool, first: bool, last: bool) -> u8 {
        let base = if write { WRITE_FIRST } else { SEND_FIRST };
        match (first, last) {
            (true, false) => base,
            (false, false) => base + 1,
            (false, true) => base + 2,
            (true, true) => {
                if write {
                    WRITE_ONLY
                } else {
                    SEND_ONLY
                }
            }
        }
    }
}

/// AETH syndromes.
pub mod syndrome {
    /// ACK (credit field unused: 0x1F = invalid credit count).
    pub const ACK: u8 = 0x1F;
    /// NAK: PSN sequence error.
    pub const NAK_PSN_SEQ: u8 = 0x60;
    /// NAK: invalid request.
    pub const NAK_INV_REQ: u8 = 0x61;
    /// NAK: remote access error.
    pub const NAK_REM_ACCESS: u8 = 0x62;
    /// NAK: remote operational error.
    pub const NAK_REM_OP: u8 = 0x63;
    /// RNR NAK (no receive WQE), timer field 0.
    pub const RNR_NAK: u8 = 0x20;
}

/// Standard CRC-32 (IEEE 802.3, reflected, init and xorout all ones): the ICRC polynomial.
pub const CRC32: Crc<u32> = Crc::<u32>::new(&CRC_32_ISO_HDLC);

/// ICRC of a frame whose last 4 bytes are the ICRC (their value is ignored):
/// CRC-32 over 8 bytes of 0xFF, then the frame from the IP header on with
/// the variant fields (IP TOS, TTL, checksum; UDP checksum; BTH resv8a)
/// replaced by ones.
pub fn icrc(frame: &[u8]) -> u32 {
    assert!(frame.len() >= HDR_LEN + ICRC_LEN, "frame too short for an ICRC");
    let mut hdr = [0u8; HDR_LEN - off::IP];
    hdr.copy_from_slice(&frame[off::IP..HDR_LEN]);
    for &i in
        &[off::IP_TOS, off::IP_TTL, off::IP_CSUM, off::IP_CSUM + 1, off::UDP_CSUM, off::UDP_CSUM + 1, off::BTH_RESV8A]
    {
        hdr[i - off::IP] = 0xFF;
    }
    let mut d = CRC32.digest();
    d.update(&[0xFF; 8]);
    d.update(&hdr);
    d.update(&frame[HDR_LEN..frame.len() - ICRC_LEN]);
    d.finalize()
}

/// IPv4 header checksum of the 20 bytes at `ip` (with the checksum field taken as 0).
pub fn ipv4_checksum(ip: &[u8]) -> u16 {
    let mut sum = 0u32;
    for i in (0..20).step_by(2) {
        if i != 10 {
            sum += u16::from_be_bytes([ip[i], ip[i + 1]]) as u32;
        }
    }
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

/// The fields of one rnic frame, decoded. Used by the simulator, the tests
/// and the pcap checker; the RTL builds and parses the same layout.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Frame {
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// Source MAC.
    pub src_mac: [u8; 6],
    /// IP ECN bits (TOS[1:0]).
    pub ecn: u8,
    /// Source IPv4 address.
    pub src_ip: u32,
    /// Destination IPv4 address.
    pub dst_ip: u32,
    /// UDP source port (entropy).
    pub sport: u16,
    /// BTH opcode.
    pub opcode: u8,
    /// BTH destination QPN.
    pub dqpn: u32,
    /// BTH AckReq bit.
    pub ack_req: bool,
    /// BTH PSN.
    pub psn: u32,
    /// Requests: RETH VA (this packet's remote address). ACKs: unused.
    pub va: u64,
    /// Requests: RETH rkey.
    pub rkey: u32,
    /// Requests: RETH DMA length (message length).
    pub msg_len: u32,
    /// Requests: SSN; ACKs: echoed SSN.
    pub ssn: u32,
    /// Requests: PSN_OFFSET; ACKs: echoed.
    pub psn_offset: u32,
    /// Requests: TX timestamp; ACKs: echoed.
    pub ts: u64,
    /// ACKs: AETH syndrome.
    pub syndrome: u8,
    /// ACKs: AETH MSN.
    pub msn: u32,
    /// ACKs: expected PSN.
    pub epsn: u32,
    /// ACKs: echoed entropy.
    pub echo_entropy: u16,
    /// ACKs: ECN echo.
    pub echo_ecn: u8,
    /// Payload (without pad).
    pub payload: Vec<u8>,
}

/// Why a frame could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// Shorter than header + ICRC, or IP length disagrees with the frame.
    Length {
        /// Bytes in the frame.
        frame: usize,
        /// What the IPv4 total length says.
        ip_total: usize,
    },
    /// Not IPv4 / UDP / port 4791, or IP options present.
    NotRoce,
    /// IPv4 header checksum wrong.
    IpChecksum {
        /// The checksum in the header.
        got: u16,
        /// The checksum of the header.
        want: u16,
    },
    /// ICRC wrong.
    Icrc {
        /// The ICRC in the frame.
        got: u32,
        /// The ICRC of the frame.
        want: u32,
    },
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::Length { frame, ip_total } => {
                write!(f, "frame of {frame} bytes has IP total length {ip_total}")
            }
            DecodeError::NotRoce => write!(f, "not an IPv4/UDP/4791 RoCEv2 frame"),
            DecodeError::IpChecksum { got, want } => write!(f, "IPv4 checksum {got:#06x}, expected {want:#06x}"),
            DecodeError::Icrc { got, want } => write!(f, "ICRC {got:#010x}, expected {want:#010x}"),
        }
    }
}
impl std::error::Error for DecodeError {}

fn be(b: &[u8]) -> u64 {
    b.iter().fold(0u64, |a, &x| (a << 8) | x as u64)
}
fn put_be(b: &mut [u8], v: u64) {
    let n = b.len();
    for (i, x) in b.iter_mut().enumerate() {
        *x = (v >> (8 * (n - 1 - i))) as u8;
    }
}

impl Frame {
    /// Whether this is an ACK/NAK.
    pub fn is_ack(&self) -> bool {
        self.opcode == opcode::ACK
    }

    /// Encodes the frame with valid IP checksum, pad and ICRC.
    pub fn encode(&self) -> Vec<u8> {
        let pad = (4 - self.payload.len() % 4) % 4;
        let len = HDR_LEN + self.payload.len() + pad + ICRC_LEN;
        let mut f = vec![0u8; len];
        f[off::ETH_DST..off::ETH_DST + 6].copy_from_slice(&self.dst_mac);
        f[off::ETH_SRC..off::ETH_SRC + 6].copy_from_slice(&self.src_mac);
        put_be(&mut f[off::ETH_TYPE..off::ETH_TYPE + 2], ETHERTYPE_IPV4 as u64);
        f[off::IP] = 0x45;
        f[off::IP_TOS] = self.ecn & 3;
        put_be(&mut f[off::IP_LEN..off::IP_LEN + 2], (len - off::IP) as u64);
        f[off::IP + 6] = 0x40;
        f[off::IP_TTL] = 64;
        f[off::IP_PROTO] = 17;
        put_be(&mut f[off::IP_SRC..off::IP_SRC + 4], self.src_ip as u64);
        put_be(&mut f[off::IP_DST..off::IP_DST + 4], self.dst_ip as u64);
        let cs = ipv4_checksum(&f[off::IP..off::IP + 20]);
        put_be(&mut f[off::IP_CSUM..off::IP_CSUM + 2], cs as u64);
        put_be(&mut f[off::UDP_SPORT..off::UDP_SPORT + 2], self.sport as u64);
        put_be(&mut f[off::UDP_DPORT..off::UDP_DPORT + 2], ROCE_UDP_PORT as u64);
        put_be(&mut f[off::UDP_LEN..off::UDP_LEN + 2], (len - off::UDP_SPORT) as u64);
        f[off::BTH] = self.opcode;
        f[off::BTH_FLAGS] = (pad as u8) << 4;
        put_be(&mut f[off::BTH_PKEY..off::BTH_PKEY + 2], 0xFFFF);
        put_be(&mut f[off::BTH_DQPN..off::BTH_DQPN + 3], self.dqpn as u64);
        f[off::BTH_ACKREQ] = (self.ack_req as u8) << 7;
        put_be(&mut f[off::BTH_PSN..off::BTH_PSN + 3], self.psn as u64);
        if self.is_ack() {
            f[off::AETH_SYNDROME] = self.syndrome;
            put_be(&mut f[off::AETH_MSN..off::AETH_MSN + 3], self.msn as u64);
            put_be(&mut f[off::AXT_SSN..off::AXT_SSN + 4], self.ssn as u64);
            put_be(&mut f[off::AXT_PSN_OFFSET..off::AXT_PSN_OFFSET + 4], self.psn_offset as u64);
            put_be(&mut f[off::AXT_TS..off::AXT_TS + 8], self.ts);
            put_be(&mut f[off::AXT_ENTROPY..off::AXT_ENTROPY + 2], self.echo_entropy as u64);
            f[off::AXT_ECN] = self.echo_ecn;
            put_be(&mut f[off::AXT_EPSN..off::AXT_EPSN + 4], self.epsn as u64);
        } else {
            put_be(&mut f[off::RETH_VA..off::RETH_VA + 8], self.va);
            put_be(&mut f[off::RETH_RKEY..off::RETH_RKEY + 4], self.rkey as u64);
            put_be(&mut f[off::RETH_LEN..off::RETH_LEN + 4], self.msg_len as u64);
            put_be(&mut f[off::RXT_SSN..off::RXT_SSN + 4], self.ssn as u64);
            put_be(&mut f[off::RXT_PSN_OFFSET..off::RXT_PSN_OFFSET + 4], self.psn_offset as u64);
            put_be(&mut f[off::RXT_TS..off::RXT_TS + 8], self.ts);
        }
        f[HDR_LEN..HDR_LEN + self.payload.len()].copy_from_slice(&self.payload);
        let c = icrc(&f);
        f[len - 4..].copy_from_slice(&c.to_le_bytes());
        f
    }

    /// Decodes and checks a frame (lengths, IPv4 checksum, ICRC).
    pub fn decode(f: &[u8]) -> Result<Frame, DecodeError> {
        if f.len() < HDR_LEN + ICRC_LEN {
            return Err(DecodeError::Length { frame: f.len(), ip_total: 0 });
        }
        if be(&f[off::ETH_TYPE..off::ETH_TYPE + 2]) != ETHERTYPE_IPV4 as u64
            || f[off::IP] != 0x45
            || f[off::IP_PROTO] != 17
            || be(&f[off::UDP_DPORT..off::UDP_DPORT + 2]) != ROCE_UDP_PORT as u64
        {
            return Err(DecodeError::NotRoce);
        }
        let ip_total = be(&f[off::IP_LEN..off::IP_LEN + 2]) as usize;
        if ip_total + off::IP != f.len() {
            return Err(DecodeError::Length { frame: f.len(), ip_total });
        }
        let want = ipv4_checksum(&f[off::IP..off::IP + 20]);
        let got = be(&f[off::IP_CSUM..off::IP_CSUM + 2]) as u16;
        if got != want {
            return Err(DecodeError::IpChecksum { got, want });
        }
        let want = icrc(f);
        let got = u32::from_le_bytes(f[f.len() - 4..].try_into().unwrap());
        if got != want {
            return Err(DecodeError::Icrc { got, want });
        }
        let pad = ((f[off::BTH_FLAGS] >> 4) & 3) as usize;
        let opcode = f[off::BTH];
        let ack = opcode == opcode::ACK;
        let g = |o: usize, n: usize| be(&f[o..o + n]);
        Ok(Frame {
            dst_mac: f[0..6].try_into().unwrap(),
            src_mac: f[6..12].try_into().unwrap(),
            ecn: f[off::IP_TOS] & 3,
            src_ip: g(off::IP_SRC, 4) as u32,
            dst_ip: g(off::IP_DST, 4) as u32,
            sport: g(off::UDP_SPORT, 2) as u16,
            opcode,
            dqpn: g(off::BTH_DQPN, 3) as u32,
            ack_req: f[off::BTH_ACKREQ] & 0x80 != 0,
            psn: g(off::BTH_PSN, 3) as u32,
            va: if ack { 0 } else { g(off::RETH_VA, 8) },
            rkey: if ack { 0 } else { g(off::RETH_RKEY, 4) as u32 },
            msg_len: if ack { 0 } else { g(off::RETH_LEN, 4) as u32 },
            ssn: g(if ack { off::AXT_SSN } else { off::RXT_SSN }, 4) as u32,
            psn_offset: g(if ack { off::AXT_PSN_OFFSET } else { off::RXT_PSN_OFFSET }, 4) as u32,
            ts: g(if ack { off::AXT_TS } else { off::RXT_TS }, 8),
            syndrome: if ack { f[off::AETH_SYNDROME] } else { 0 },
            msn: if ack { g(off::AETH_MSN, 3) as u32 } else { 0 },
            epsn: if ack { g(off::AXT_EPSN, 4) as u32 } else { 0 },
            echo_entropy: if ack { g(off::AXT_ENTROPY, 2) as u16 } else { 0 },
            echo_ecn: if ack { f[off::AXT_ECN] } else { 0 },
            payload: f[HDR_LEN..f.len() - ICRC_LEN - pad.min(f.len() - ICRC_LEN - HDR_LEN)].to_vec(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_and_icrc_detects_corruption() {
        for len in [0usize, 1, 3, 4, 63, 64, 65, 4096] {
            let fr = Frame {
                dst_mac: [2, 0, 0, 0, 0, 2],
                src_mac: [2, 0, 0, 0, 0, 1],
                src_ip: 0x0a00_0001,
                dst_ip: 0x0a00_0002,
                sport: 0xC000,
                opcode: opcode::WRITE_ONLY,
                dqpn: 5,
                ack_req: true,
                psn: 0xABCDEF,
                va: 0x1234_5678_9abc,
                rkey: 0x100,
                msg_len: len as u32,
                ssn: 7,
                payload: (0..len).map(|i| (i * 7 + 3) as u8).collect(),
                ..Default::default()
            };
            let bytes = fr.encode();
            assert_eq!(bytes.len() % 4, 0);
            assert_eq!(Frame::decode(&bytes).unwrap(), fr);
            // TTL and TOS are outside the ICRC (rewritten by routers); payload is inside.
            let mut b = bytes.clone();
            b[off::IP_TTL] = 3;
            let cs = ipv4_checksum(&b[off::IP..off::IP + 20]);
            b[off::IP_CSUM..off::IP_CSUM + 2].copy_from_slice(&cs.to_be_bytes());
            assert!(Frame::decode(&b).is_ok());
            let mut b = bytes.clone();
            b[HDR_LEN - 1] ^= 1;
            assert!(matches!(Frame::decode(&b), Err(DecodeError::Icrc { .. })));
        }
    }

    #[test]
    fn ipv4_checksum_known_vector() {
        // The classic example header from RFC 1071 discussions (checksum 0xb861).
        let h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8,
            0x00, 0xc7,
        ];
        assert_eq!(ipv4_checksum(&h), 0xb861);
    }

    #[test]
    fn request_opcodes() {
        assert_eq!(opcode::request(true, true, true), opcode::WRITE_ONLY);
        assert_eq!(opcode::request(true, false, false), opcode::WRITE_MIDDLE);
        assert_eq!(opcode::request(false, false, true), opcode::SEND_LAST);
        assert_eq!(opcode::request(false, true, true), opcode::SEND_ONLY);
    }
}
