//! The wire format: Ethernet / IPv4 / UDP 4791 / BTH / RETH or AETH /
//! rnic extension / payload / pad / ICRC.
//!
//! Every rnic frame has a fixed 128-byte header so the payload starts on a
//! 64-byte datapath beat: the TX builder and RX parser never shift payload
//! bytes across lanes (no barrel shifter on the 512-bit path). Standard
//! tools decode Ethernet/IPv4/UDP/BTH and check the ICRC; they see the
//! extension bytes as the start of the payload (or, for WRITE FIRST/ONLY,
//! the first 16 as a RETH, which is what they are). For the opcodes with
//! immediate data they read the 4 bytes where the standard puts the ImmDt
//! header (byte 54 for SEND, 70 for WRITE Only), which is not where rnic
//! carries the immediate (bytes 90..94): the value they show is not the
//! immediate.
//!
//! | bytes   | request (SEND/WRITE/READ, READ response)  | ACK / NAK                       |
//! |---------|-------------------------------------------|---------------------------------|
//! | 0..14   | Ethernet II, type 0x0800                  | same                            |
//! | 14..34  | IPv4, no options, DF, TTL 64, proto 17    | same                            |
//! | 34..42  | UDP, dport 4791, sport = entropy, csum 0  | same                            |
//! | 42..54  | BTH                                       | BTH (opcode 0x11)               |
//! | 54..70  | RETH: packet's remote VA, rkey, msg len   | 54..58 AETH (syndrome, MSN)     |
//! | 70..74  | SSN (24 bit): message sequence number     | 58..62 echoed SSN               |
//! | 74..78  | PSN_OFFSET: packet index in the message   | 62..66 echoed PSN_OFFSET        |
//! | 78..86  | TX timestamp (cycles)                     | 66..74 echoed TX timestamp      |
//! | 86..90  | RSN (16 bit): receive WQE index a SEND or WRITE-with-immediate consumes | (see the next row) |
//! | 90..94  | immediate data (opcodes with immediate)   | (see the next row)              |
//! | 94..102 | READ request: requester's local address   | (see the next row)              |
//! | 102..106| READ request: requester's lkey            | (see the next row)              |
//! | 106..128| zero                                      | 74..76 echoed entropy, 76 ECN echo, 77 flags, 78..82 ePSN, 82..86 SACK base, 86..90 OOO count, 90..94 MSN_PSN, 94..102 SACK bitmap, 102..106 bytes received, rest zero |
//!
//! All multi-byte wire fields are big-endian. The payload is padded with
//! zeros to a multiple of 4 (BTH PadCnt), then the 4-byte ICRC follows,
//! least significant byte first. The Ethernet FCS is added by the MAC and
//! is not part of the frames the core exchanges.
//!
//! RDMA READ: the request (opcode 0x0C) has the request layout; its RETH
//! names the responder's memory (VA, rkey, length), and its extension adds
//! where the data lands at the requester (local address and lkey). It uses
//! as many PSNs as its response has packets. Each READ response packet
//! (0x0D..0x10) has the request layout too, not the standard AETH: its
//! RETH carries the requester's local address of this packet (the
//! request's plus the offset), the requester's lkey and the READ's length,
//! and its SSN the requester's SSN of the READ, so the requester places it
//! and knows which WQE it finishes without keeping a table. Standard
//! decoders read the first four RETH bytes of a READ response as an AETH.
//!
//! MSN_PSN is the PSN at which message MSN starts: the first packet of the
//! oldest message the responder has not completed, which is the first
//! packet of the requester's oldest unacknowledged WQE. It sits where a
//! request carries its immediate, so the RX parser reads both through one
//! field.
//!
//! The SACK fields (STrack §3.3.1) say what the responder holds beyond
//! ePSN: the OOO count is the number of packets placed past ePSN (in
//! software recovery: the length of the run the responder remembers), the
//! SACK bitmap is one 64-bit segment of the responder's arrival bitmap,
//! bit `i` meaning PSN `SACK base + i` is placed, where SACK base is ePSN
//! or ePSN + 64: the segment holding the PSN this ACK answers. Bytes
//! received counts payload bytes placed for the first time, mod 2^32. An
//! ACK that answers no data packet (a READ response, a software-recovery
//! ACK) has them zero.
//!
//! # Layers of access
//!
//! The same layout is offered at four levels; all of them are defined by
//! the field table in [`field`], so they cannot disagree.
//!
//! * [`field`]: every header field as a [`Field`], its byte range (start and
//!   width in one place), plus masks for the fields narrower than a byte
//!   (BTH PadCnt and AckReq, IPv4 ECN, DF, MF and fragment offset).
//!   [`off`] repeats the start offsets as plain numbers, derived from
//!   [`field`], for code that only needs a byte index (the RTL generator).
//! * [`Packet`]: a view over a byte buffer (anything `AsRef<[u8]>`), with a
//!   getter per field and, when the buffer is `AsMut<[u8]>`, a setter per
//!   field. [`Packet::new_checked`] makes sure every getter is in bounds and
//!   that the frame is IPv4/UDP/4791 with a consistent length;
//!   [`Packet::new_unchecked`] does not (its getters panic on short
//!   buffers). Opcodes and syndromes come out as the [`Opcode`] and
//!   [`Syndrome`] enums, which keep unknown values.
//! * [`RequestRepr`] (SEND/WRITE) and [`AckRepr`] (ACK/NAK): the decoded
//!   header as plain values. `parse` checks the frame completely (lengths,
//!   type, IPv4 checksum, ICRC, opcode kind); `emit` writes a complete
//!   frame (fixed fields, lengths, pad, IPv4 checksum, ICRC) into a buffer
//!   of exactly `buffer_len()` bytes.
//! * [`Frame`]: one owned struct for both kinds, as used by the simulator
//!   and the tests; [`Frame::encode`] and [`Frame::decode`] go through the
//!   representations.
//!
//! ```
//! use rnic_spec::wire::{Opcode, Packet, RequestRepr};
//!
//! let repr = RequestRepr {
//!     dst_mac: [2, 0, 0, 0, 0, 2],
//!     src_mac: [2, 0, 0, 0, 0, 1],
//!     ecn: 0,
//!     src_ip: 0x0a00_0001,
//!     dst_ip: 0x0a00_0002,
//!     sport: 0xC000,
//!     opcode: Opcode::SendOnly,
//!     dqpn: 5,
//!     ack_req: true,
//!     psn: 100,
//!     va: 0,
//!     rkey: 0,
//!     msg_len: 3,
//!     ssn: 1,
//!     psn_offset: 0,
//!     ts: 0,
//!     rsn: 0,
//!     imm: 0,
//!     laddr: 0,
//!     lkey: 0,
//!     payload: b"abc",
//! };
//! let mut buf = vec![0u8; repr.buffer_len()];
//! repr.emit(&mut Packet::new_unchecked(&mut buf[..]));
//!
//! let packet = Packet::new_checked(&buf[..]).unwrap();
//! assert_eq!(packet.pad_count(), 1);
//! assert_eq!(packet.payload(), b"abc");
//! assert_eq!(RequestRepr::parse(&packet), Ok(repr));
//! ```

use crc::{Crc, CRC_32_ISO_HDLC};
use std::ops::Range;

/// RoCEv2 UDP destination port.
pub const ROCE_UDP_PORT: u16 = 4791;
/// Ethertype IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// IPv4 version 4 with a 5-word header (no options): the first IPv4 byte.
pub const IPV4_VER_IHL: u8 = 0x45;
/// IPv4 protocol number of UDP.
pub const IP_PROTO_UDP: u8 = 17;
/// The TTL rnic sends with.
pub const IP_TTL_DEFAULT: u8 = 64;
/// IPv4 ECN codepoint ECT(0): rnic sends every frame ECN-capable, so a
/// congested switch marks it (CE) instead of dropping it, and the ACK's
/// echo tells STrack's path selector which entropy was congested.
pub const IP_ECN_ECT0: u8 = 0x02;
/// IPv4 ECN codepoint CE (congestion experienced), set by switches.
pub const IP_ECN_CE: u8 = 0x03;
/// The BTH P_Key rnic sends with (the default partition, full member).
pub const BTH_PKEY_DEFAULT: u16 = 0xFFFF;
/// Fixed header length (payload starts here).
pub const HDR_LEN: usize = 128;
/// ICRC length.
pub const ICRC_LEN: usize = 4;
/// Per-frame wire overhead outside the frame the core sees: FCS 4,
/// preamble+SFD 8, inter-frame gap 12.
pub const WIRE_OVERHEAD: usize = 24;
/// IPv4 flags+fragment-offset bits that mark a fragment (MF and the offset):
/// the receiver drops any frame with one of them set.
pub const IP_MF_OFFSET_MASK: u16 = field::IP_MF | field::IP_FRAG_OFFSET_MASK;
/// Minimum Ethernet frame length without FCS.
pub const MIN_FRAME: usize = 60;

/// Zero bytes appended to a payload of `payload_len` bytes (BTH PadCnt).
pub const fn pad_len(payload_len: usize) -> usize {
    (4 - payload_len % 4) % 4
}

/// Length of a frame carrying `payload_len` payload bytes: header, payload,
/// pad and ICRC.
pub const fn frame_len(payload_len: usize) -> usize {
    HDR_LEN + payload_len + pad_len(payload_len) + ICRC_LEN
}

/// The byte range of one header field: `len` bytes from byte `start` of the
/// frame, big-endian.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Field {
    /// Offset of the field's first byte in the frame.
    pub start: usize,
    /// Width in bytes.
    pub len: usize,
}

impl Field {
    /// The field of `len` bytes at `start`.
    pub const fn new(start: usize, len: usize) -> Field {
        Field { start, len }
    }

    /// Offset one past the field's last byte.
    pub const fn end(self) -> usize {
        self.start + self.len
    }

    /// The field's bytes as a range, for slicing a frame.
    pub const fn range(self) -> Range<usize> {
        self.start..self.end()
    }

    /// Whether `self` lies entirely within `outer`.
    pub const fn is_within(self, outer: Field) -> bool {
        self.start >= outer.start && self.end() <= outer.end()
    }

    /// The field's value in `frame`, read big-endian. Fields of up to 8 bytes.
    ///
    /// # Panics
    /// If `frame` ends before the field does.
    pub fn get(self, frame: &[u8]) -> u64 {
        debug_assert!(self.len <= 8, "{self:?} is wider than 64 bits");
        frame[self.range()].iter().fold(0, |acc, &b| (acc << 8) | u64::from(b))
    }

    /// Writes the low `8 * len` bits of `value` into the field, big-endian.
    /// Fields of up to 8 bytes.
    ///
    /// # Panics
    /// If `frame` ends before the field does.
    pub fn set(self, frame: &mut [u8], value: u64) {
        debug_assert!(self.len <= 8, "{self:?} is wider than 64 bits");
        for (i, b) in frame[self.range()].iter_mut().rev().enumerate() {
            *b = (value >> (8 * i)) as u8;
        }
    }
}

/// The byte range of every header field, and masks for the fields narrower
/// than a byte. The single definition of the header layout: [`off`],
/// [`Packet`] and the representations are all derived from it.
///
/// A group (`ETH`, `IPV4`, `UDP`, `BTH`, `RETH`, `RXT`, `AETH`, `AXT`)
/// covers a whole header; the fields named after it lie inside it.
pub mod field {
    use super::Field;

    /// Ethernet II header.
    pub const ETH: Field = Field::new(0, 14);
    /// Ethernet destination MAC.
    pub const ETH_DST: Field = Field::new(0, 6);
    /// Ethernet source MAC.
    pub const ETH_SRC: Field = Field::new(6, 6);
    /// Ethertype.
    pub const ETH_TYPE: Field = Field::new(12, 2);

    /// IPv4 header (no options).
    pub const IPV4: Field = Field::new(14, 20);
    /// IPv4 version (high nibble) and header length in words (low nibble).
    pub const IP_VER_IHL: Field = Field::new(14, 1);
    /// IPv4 TOS: DSCP ([`IP_DSCP_MASK`]) and ECN ([`IP_ECN_MASK`]).
    pub const IP_TOS: Field = Field::new(15, 1);
    /// IPv4 total length (from the IPv4 header to the end of the ICRC).
    pub const IP_LEN: Field = Field::new(16, 2);
    /// IPv4 identification.
    pub const IP_IDENT: Field = Field::new(18, 2);
    /// IPv4 flags and fragment offset, a 16-bit word: [`IP_DF`], [`IP_MF`],
    /// [`IP_FRAG_OFFSET_MASK`].
    pub const IP_FLAGS: Field = Field::new(20, 2);
    /// IPv4 TTL.
    pub const IP_TTL: Field = Field::new(22, 1);
    /// IPv4 protocol.
    pub const IP_PROTO: Field = Field::new(23, 1);
    /// IPv4 header checksum.
    pub const IP_CSUM: Field = Field::new(24, 2);
    /// IPv4 source address.
    pub const IP_SRC: Field = Field::new(26, 4);
    /// IPv4 destination address.
    pub const IP_DST: Field = Field::new(30, 4);

    /// UDP header.
    pub const UDP: Field = Field::new(34, 8);
    /// UDP source port (entropy).
    pub const UDP_SPORT: Field = Field::new(34, 2);
    /// UDP destination port.
    pub const UDP_DPORT: Field = Field::new(36, 2);
    /// UDP length (from the UDP header to the end of the ICRC).
    pub const UDP_LEN: Field = Field::new(38, 2);
    /// UDP checksum (always 0: not computed).
    pub const UDP_CSUM: Field = Field::new(40, 2);

    /// Base transport header.
    pub const BTH: Field = Field::new(42, 12);
    /// BTH opcode.
    pub const BTH_OPCODE: Field = Field::new(42, 1);
    /// BTH flags: SE ([`BTH_SE`]), MigReq ([`BTH_MIGREQ`]), PadCnt
    /// ([`BTH_PADCNT_MASK`]), TVer ([`BTH_TVER_MASK`]).
    pub const BTH_FLAGS: Field = Field::new(43, 1);
    /// BTH P_Key.
    pub const BTH_PKEY: Field = Field::new(44, 2);
    /// BTH FECN/BECN/resv6 byte (masked in the ICRC).
    pub const BTH_RESV8A: Field = Field::new(46, 1);
    /// BTH destination QP (24 bit).
    pub const BTH_DQPN: Field = Field::new(47, 3);
    /// BTH AckReq ([`BTH_ACKREQ_BIT`]) and resv7.
    pub const BTH_ACKREQ: Field = Field::new(50, 1);
    /// BTH PSN (24 bit).
    pub const BTH_PSN: Field = Field::new(51, 3);

    /// RDMA extended transport header (every request).
    pub const RETH: Field = Field::new(54, 16);
    /// RETH virtual address (this packet's remote address).
    pub const RETH_VA: Field = Field::new(54, 8);
    /// RETH rkey.
    pub const RETH_RKEY: Field = Field::new(62, 4);
    /// RETH DMA length (the whole message's length).
    pub const RETH_LEN: Field = Field::new(66, 4);

    /// rnic request extension.
    pub const RXT: Field = Field::new(70, 36);
    /// Request extension: SSN (24 bit, in a 32-bit field).
    pub const RXT_SSN: Field = Field::new(70, 4);
    /// Request extension: PSN_OFFSET, the packet's index in its message.
    pub const RXT_PSN_OFFSET: Field = Field::new(74, 4);
    /// Request extension: TX timestamp (cycles).
    pub const RXT_TS: Field = Field::new(78, 8);
    /// Request extension: RSN, the receive WQE index the message consumes
    /// (SEND and WRITE with immediate; 16 bits used).
    pub const RXT_RSN: Field = Field::new(86, 4);
    /// Request extension: immediate data (opcodes with immediate).
    pub const RXT_IMM: Field = Field::new(90, 4);
    /// Request extension: RDMA READ request: the requester's local address
    /// the response lands at (each READ response carries it, plus its
    /// offset, in its RETH, so the requester places it without state).
    pub const RXT_LADDR: Field = Field::new(94, 8);
    /// Request extension: RDMA READ request: the requester's lkey of that
    /// address (echoed as the READ responses' RETH rkey).
    pub const RXT_LKEY: Field = Field::new(102, 4);

    /// ACK extended transport header.
    pub const AETH: Field = Field::new(54, 4);
    /// AETH syndrome.
    pub const AETH_SYNDROME: Field = Field::new(54, 1);
    /// AETH MSN (24 bit).
    pub const AETH_MSN: Field = Field::new(55, 3);

    /// rnic ACK extension.
    pub const AXT: Field = Field::new(58, 48);
    /// ACK extension: echoed SSN.
    pub const AXT_SSN: Field = Field::new(58, 4);
    /// ACK extension: echoed PSN_OFFSET.
    pub const AXT_PSN_OFFSET: Field = Field::new(62, 4);
    /// ACK extension: echoed TX timestamp.
    pub const AXT_TS: Field = Field::new(66, 8);
    /// ACK extension: echoed entropy (UDP source port of the request).
    pub const AXT_ENTROPY: Field = Field::new(74, 2);
    /// ACK extension: ECN echo (the request's IP ECN bits).
    pub const AXT_ECN: Field = Field::new(76, 1);
    /// ACK extension: flags ([`super::ack_flags`]).
    pub const AXT_FLAGS: Field = Field::new(77, 1);
    /// ACK extension: expected PSN (ePSN) at the responder.
    pub const AXT_EPSN: Field = Field::new(78, 4);
    /// ACK extension: SACK base PSN.
    pub const AXT_SACK_BASE: Field = Field::new(82, 4);
    /// ACK extension: out-of-order count.
    pub const AXT_OOO: Field = Field::new(86, 4);
    /// ACK extension: MSN_PSN, the first PSN of message MSN (the oldest
    /// message not completed at the responder); where a request has RXT_IMM.
    pub const AXT_MSN_PSN: Field = Field::new(90, 4);
    /// ACK extension: 64-bit SACK bitmap segment.
    pub const AXT_SACK_BITMAP: Field = Field::new(94, 8);
    /// ACK extension: payload bytes received, duplicates eliminated, mod 2^32
    /// (the sender only takes differences); where a READ request has its lkey.
    pub const AXT_BYTES_RX: Field = Field::new(102, 4);

    /// ECN bits in [`IP_TOS`].
    pub const IP_ECN_MASK: u8 = 0x03;
    /// DSCP bits in [`IP_TOS`].
    pub const IP_DSCP_MASK: u8 = 0xFC;
    /// Don't-fragment flag in the [`IP_FLAGS`] word.
    pub const IP_DF: u16 = 0x4000;
    /// More-fragments flag in the [`IP_FLAGS`] word.
    pub const IP_MF: u16 = 0x2000;
    /// Fragment offset bits in the [`IP_FLAGS`] word.
    pub const IP_FRAG_OFFSET_MASK: u16 = 0x1FFF;
    /// Solicited-event bit in [`BTH_FLAGS`].
    pub const BTH_SE: u8 = 0x80;
    /// MigReq bit in [`BTH_FLAGS`].
    pub const BTH_MIGREQ: u8 = 0x40;
    /// PadCnt bits in [`BTH_FLAGS`] (shift right by [`BTH_PADCNT_SHIFT`]).
    pub const BTH_PADCNT_MASK: u8 = 0x30;
    /// Position of PadCnt in [`BTH_FLAGS`].
    pub const BTH_PADCNT_SHIFT: u32 = 4;
    /// Transport header version bits in [`BTH_FLAGS`] (0).
    pub const BTH_TVER_MASK: u8 = 0x0F;
    /// AckReq bit in [`BTH_ACKREQ`]; the other bits are resv7.
    pub const BTH_ACKREQ_BIT: u8 = 0x80;

    const _: () = assert!(RXT.end() <= super::HDR_LEN && AXT.end() <= super::HDR_LEN);
    const _: () = assert!(BTH_PADCNT_MASK >> BTH_PADCNT_SHIFT == 3);
}

/// Byte offsets of header fields: the `start` of the matching [`field`].
pub mod off {
    use super::field;

    /// Ethernet destination MAC.
    pub const ETH_DST: usize = field::ETH_DST.start;
    /// Ethernet source MAC.
    pub const ETH_SRC: usize = field::ETH_SRC.start;
    /// Ethertype.
    pub const ETH_TYPE: usize = field::ETH_TYPE.start;
    /// IPv4 header start.
    pub const IP: usize = field::IPV4.start;
    /// IPv4 TOS (DSCP+ECN) byte.
    pub const IP_TOS: usize = field::IP_TOS.start;
    /// IPv4 total length.
    pub const IP_LEN: usize = field::IP_LEN.start;
    /// IPv4 flags (DF, MF) and fragment offset.
    pub const IP_FLAGS: usize = field::IP_FLAGS.start;
    /// IPv4 TTL.
    pub const IP_TTL: usize = field::IP_TTL.start;
    /// IPv4 protocol.
    pub const IP_PROTO: usize = field::IP_PROTO.start;
    /// IPv4 header checksum.
    pub const IP_CSUM: usize = field::IP_CSUM.start;
    /// IPv4 source address.
    pub const IP_SRC: usize = field::IP_SRC.start;
    /// IPv4 destination address.
    pub const IP_DST: usize = field::IP_DST.start;
    /// UDP source port (entropy).
    pub const UDP_SPORT: usize = field::UDP_SPORT.start;
    /// UDP destination port.
    pub const UDP_DPORT: usize = field::UDP_DPORT.start;
    /// UDP length.
    pub const UDP_LEN: usize = field::UDP_LEN.start;
    /// UDP checksum.
    pub const UDP_CSUM: usize = field::UDP_CSUM.start;
    /// BTH start / opcode.
    pub const BTH: usize = field::BTH_OPCODE.start;
    /// BTH flags: SE(7) M(6) PadCnt(5:4) TVer(3:0).
    pub const BTH_FLAGS: usize = field::BTH_FLAGS.start;
    /// BTH P_Key.
    pub const BTH_PKEY: usize = field::BTH_PKEY.start;
    /// BTH FECN/BECN/resv6 byte (masked in the ICRC).
    pub const BTH_RESV8A: usize = field::BTH_RESV8A.start;
    /// BTH destination QP (24 bit).
    pub const BTH_DQPN: usize = field::BTH_DQPN.start;
    /// BTH AckReq(7) / resv7.
    pub const BTH_ACKREQ: usize = field::BTH_ACKREQ.start;
    /// BTH PSN (24 bit).
    pub const BTH_PSN: usize = field::BTH_PSN.start;
    /// RETH virtual address (this packet's remote address).
    pub const RETH_VA: usize = field::RETH_VA.start;
    /// RETH rkey.
    pub const RETH_RKEY: usize = field::RETH_RKEY.start;
    /// RETH DMA length (the whole message's length).
    pub const RETH_LEN: usize = field::RETH_LEN.start;
    /// Request extension: SSN.
    pub const RXT_SSN: usize = field::RXT_SSN.start;
    /// Request extension: PSN_OFFSET.
    pub const RXT_PSN_OFFSET: usize = field::RXT_PSN_OFFSET.start;
    /// Request extension: TX timestamp.
    pub const RXT_TS: usize = field::RXT_TS.start;
    /// Request extension: RSN.
    pub const RXT_RSN: usize = field::RXT_RSN.start;
    /// Request extension: immediate data.
    pub const RXT_IMM: usize = field::RXT_IMM.start;
    /// Request extension: READ request's local address.
    pub const RXT_LADDR: usize = field::RXT_LADDR.start;
    /// Request extension: READ request's lkey.
    pub const RXT_LKEY: usize = field::RXT_LKEY.start;
    /// AETH syndrome.
    pub const AETH_SYNDROME: usize = field::AETH_SYNDROME.start;
    /// AETH MSN (24 bit).
    pub const AETH_MSN: usize = field::AETH_MSN.start;
    /// ACK extension: echoed SSN.
    pub const AXT_SSN: usize = field::AXT_SSN.start;
    /// ACK extension: echoed PSN_OFFSET.
    pub const AXT_PSN_OFFSET: usize = field::AXT_PSN_OFFSET.start;
    /// ACK extension: echoed TX timestamp.
    pub const AXT_TS: usize = field::AXT_TS.start;
    /// ACK extension: echoed entropy (UDP source port of the request).
    pub const AXT_ENTROPY: usize = field::AXT_ENTROPY.start;
    /// ACK extension: ECN echo (the request's IP ECN bits).
    pub const AXT_ECN: usize = field::AXT_ECN.start;
    /// ACK extension: flags ([`super::ack_flags`]).
    pub const AXT_FLAGS: usize = field::AXT_FLAGS.start;
    /// ACK extension: expected PSN (ePSN) at the responder.
    pub const AXT_EPSN: usize = field::AXT_EPSN.start;
    /// ACK extension: SACK base PSN.
    pub const AXT_SACK_BASE: usize = field::AXT_SACK_BASE.start;
    /// ACK extension: MSN_PSN, the first PSN of message MSN.
    pub const AXT_MSN_PSN: usize = field::AXT_MSN_PSN.start;
    /// ACK extension: 64-bit SACK bitmap segment.
    pub const AXT_SACK_BITMAP: usize = field::AXT_SACK_BITMAP.start;
    /// ACK extension: bytes received.
    pub const AXT_BYTES_RX: usize = field::AXT_BYTES_RX.start;
    /// ACK extension: out-of-order count.
    pub const AXT_OOO: usize = field::AXT_OOO.start;
}

/// BTH opcodes (RC), as raw bytes. [`Opcode`] is the typed form.
pub mod opcode {
    /// SEND First.
    pub const SEND_FIRST: u8 = 0x00;
    /// SEND Middle.
    pub const SEND_MIDDLE: u8 = 0x01;
    /// SEND Last.
    pub const SEND_LAST: u8 = 0x02;
    /// SEND Last with Immediate.
    pub const SEND_LAST_IMM: u8 = 0x03;
    /// SEND Only.
    pub const SEND_ONLY: u8 = 0x04;
    /// SEND Only with Immediate.
    pub const SEND_ONLY_IMM: u8 = 0x05;
    /// RDMA WRITE First.
    pub const WRITE_FIRST: u8 = 0x06;
    /// RDMA WRITE Middle.
    pub const WRITE_MIDDLE: u8 = 0x07;
    /// RDMA WRITE Last.
    pub const WRITE_LAST: u8 = 0x08;
    /// RDMA WRITE Last with Immediate.
    pub const WRITE_LAST_IMM: u8 = 0x09;
    /// RDMA WRITE Only.
    pub const WRITE_ONLY: u8 = 0x0A;
    /// RDMA WRITE Only with Immediate.
    pub const WRITE_ONLY_IMM: u8 = 0x0B;
    /// RDMA READ Request.
    pub const READ_REQUEST: u8 = 0x0C;
    /// RDMA READ Response First.
    pub const READ_RESPONSE_FIRST: u8 = 0x0D;
    /// RDMA READ Response Middle.
    pub const READ_RESPONSE_MIDDLE: u8 = 0x0E;
    /// RDMA READ Response Last.
    pub const READ_RESPONSE_LAST: u8 = 0x0F;
    /// RDMA READ Response Only.
    pub const READ_RESPONSE_ONLY: u8 = 0x10;
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

/// A BTH opcode. The values are those of [`opcode`]; any other byte is kept
/// as [`Opcode::Unknown`], so converting a byte to an `Opcode` and back
/// always gives the byte again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Opcode {
    /// SEND First.
    SendFirst,
    /// SEND Middle.
    SendMiddle,
    /// SEND Last.
    SendLast,
    /// SEND Only.
    SendOnly,
    /// SEND Last with Immediate.
    SendLastImm,
    /// SEND Only with Immediate.
    SendOnlyImm,
    /// RDMA WRITE First.
    WriteFirst,
    /// RDMA WRITE Middle.
    WriteMiddle,
    /// RDMA WRITE Last.
    WriteLast,
    /// RDMA WRITE Only.
    WriteOnly,
    /// RDMA WRITE Last with Immediate.
    WriteLastImm,
    /// RDMA WRITE Only with Immediate.
    WriteOnlyImm,
    /// RDMA READ Request.
    ReadRequest,
    /// RDMA READ Response First.
    ReadResponseFirst,
    /// RDMA READ Response Middle.
    ReadResponseMiddle,
    /// RDMA READ Response Last.
    ReadResponseLast,
    /// RDMA READ Response Only.
    ReadResponseOnly,
    /// Acknowledge (ACK or NAK, by AETH syndrome).
    Ack,
    /// An opcode rnic does not use (the responder NAKs such requests as
    /// invalid). Holds a byte that none of the other variants stands for;
    /// [`From<u8>`] never builds it with a known value.
    Unknown(u8),
}

impl Opcode {
    /// Opcode for packet `first`/`last` of a SEND (`write == false`) or WRITE.
    pub const fn request(write: bool, first: bool, last: bool) -> Opcode {
        match (write, first, last) {
            (false, true, false) => Opcode::SendFirst,
            (false, false, false) => Opcode::SendMiddle,
            (false, false, true) => Opcode::SendLast,
            (false, true, true) => Opcode::SendOnly,
            (true, true, false) => Opcode::WriteFirst,
            (true, false, false) => Opcode::WriteMiddle,
            (true, false, true) => Opcode::WriteLast,
            (true, true, true) => Opcode::WriteOnly,
        }
    }

    /// The Last/Only opcode with immediate data for a Last/Only opcode; any
    /// other opcode is returned unchanged (only the last packet of a message
    /// carries the immediate).
    pub const fn with_imm(self) -> Opcode {
        match self {
            Opcode::SendLast => Opcode::SendLastImm,
            Opcode::SendOnly => Opcode::SendOnlyImm,
            Opcode::WriteLast => Opcode::WriteLastImm,
            Opcode::WriteOnly => Opcode::WriteOnlyImm,
            other => other,
        }
    }

    /// A packet of a SEND (with or without immediate).
    pub const fn is_send(self) -> bool {
        matches!(
            self,
            Opcode::SendFirst
                | Opcode::SendMiddle
                | Opcode::SendLast
                | Opcode::SendOnly
                | Opcode::SendLastImm
                | Opcode::SendOnlyImm
        )
    }

    /// A packet of an RDMA WRITE (with or without immediate).
    pub const fn is_write(self) -> bool {
        matches!(
            self,
            Opcode::WriteFirst
                | Opcode::WriteMiddle
                | Opcode::WriteLast
                | Opcode::WriteOnly
                | Opcode::WriteLastImm
                | Opcode::WriteOnlyImm
        )
    }

    /// The last packet of a message with immediate data.
    pub const fn has_imm(self) -> bool {
        matches!(self, Opcode::SendLastImm | Opcode::SendOnlyImm | Opcode::WriteLastImm | Opcode::WriteOnlyImm)
    }

    /// An RDMA READ request.
    pub const fn is_read_request(self) -> bool {
        matches!(self, Opcode::ReadRequest)
    }

    /// A packet of an RDMA READ response.
    pub const fn is_read_response(self) -> bool {
        matches!(
            self,
            Opcode::ReadResponseFirst
                | Opcode::ReadResponseMiddle
                | Opcode::ReadResponseLast
                | Opcode::ReadResponseOnly
        )
    }

    /// Opcode for packet `first`/`last` of an RDMA READ response.
    pub const fn read_response(first: bool, last: bool) -> Opcode {
        match (first, last) {
            (true, false) => Opcode::ReadResponseFirst,
            (false, false) => Opcode::ReadResponseMiddle,
            (false, true) => Opcode::ReadResponseLast,
            (true, true) => Opcode::ReadResponseOnly,
        }
    }

    /// An ACK or NAK.
    pub const fn is_ack(self) -> bool {
        matches!(self, Opcode::Ack)
    }

    /// The first packet of its message (First or Only).
    pub const fn is_first(self) -> bool {
        matches!(
            self,
            Opcode::SendFirst
                | Opcode::SendOnly
                | Opcode::SendOnlyImm
                | Opcode::WriteFirst
                | Opcode::WriteOnly
                | Opcode::WriteOnlyImm
                | Opcode::ReadRequest
                | Opcode::ReadResponseFirst
                | Opcode::ReadResponseOnly
        )
    }

    /// The last packet of its message (Last or Only).
    pub const fn is_last(self) -> bool {
        matches!(
            self,
            Opcode::SendLast
                | Opcode::SendOnly
                | Opcode::SendLastImm
                | Opcode::SendOnlyImm
                | Opcode::WriteLast
                | Opcode::WriteOnly
                | Opcode::WriteLastImm
                | Opcode::WriteOnlyImm
                | Opcode::ReadRequest
                | Opcode::ReadResponseLast
                | Opcode::ReadResponseOnly
        )
    }

    /// Whether standard RoCEv2 decoders read bytes 54..70 as a RETH:
    /// WRITE First, WRITE Only and READ Request. rnic fills the RETH bytes in every
    /// request (see [`RequestRepr`]); for the other opcodes, standard tools
    /// see them as the start of the payload.
    pub const fn has_reth(self) -> bool {
        matches!(self, Opcode::WriteFirst | Opcode::WriteOnly | Opcode::WriteOnlyImm | Opcode::ReadRequest)
    }
}

impl From<u8> for Opcode {
    fn from(value: u8) -> Opcode {
        match value {
            opcode::SEND_FIRST => Opcode::SendFirst,
            opcode::SEND_MIDDLE => Opcode::SendMiddle,
            opcode::SEND_LAST => Opcode::SendLast,
            opcode::SEND_ONLY => Opcode::SendOnly,
            opcode::SEND_LAST_IMM => Opcode::SendLastImm,
            opcode::SEND_ONLY_IMM => Opcode::SendOnlyImm,
            opcode::WRITE_FIRST => Opcode::WriteFirst,
            opcode::WRITE_MIDDLE => Opcode::WriteMiddle,
            opcode::WRITE_LAST => Opcode::WriteLast,
            opcode::WRITE_ONLY => Opcode::WriteOnly,
            opcode::WRITE_LAST_IMM => Opcode::WriteLastImm,
            opcode::WRITE_ONLY_IMM => Opcode::WriteOnlyImm,
            opcode::READ_REQUEST => Opcode::ReadRequest,
            opcode::READ_RESPONSE_FIRST => Opcode::ReadResponseFirst,
            opcode::READ_RESPONSE_MIDDLE => Opcode::ReadResponseMiddle,
            opcode::READ_RESPONSE_LAST => Opcode::ReadResponseLast,
            opcode::READ_RESPONSE_ONLY => Opcode::ReadResponseOnly,
            opcode::ACK => Opcode::Ack,
            other => Opcode::Unknown(other),
        }
    }
}

impl From<Opcode> for u8 {
    fn from(value: Opcode) -> u8 {
        match value {
            Opcode::SendFirst => opcode::SEND_FIRST,
            Opcode::SendMiddle => opcode::SEND_MIDDLE,
            Opcode::SendLast => opcode::SEND_LAST,
            Opcode::SendOnly => opcode::SEND_ONLY,
            Opcode::SendLastImm => opcode::SEND_LAST_IMM,
            Opcode::SendOnlyImm => opcode::SEND_ONLY_IMM,
            Opcode::WriteFirst => opcode::WRITE_FIRST,
            Opcode::WriteMiddle => opcode::WRITE_MIDDLE,
            Opcode::WriteLast => opcode::WRITE_LAST,
            Opcode::WriteOnly => opcode::WRITE_ONLY,
            Opcode::WriteLastImm => opcode::WRITE_LAST_IMM,
            Opcode::WriteOnlyImm => opcode::WRITE_ONLY_IMM,
            Opcode::ReadRequest => opcode::READ_REQUEST,
            Opcode::ReadResponseFirst => opcode::READ_RESPONSE_FIRST,
            Opcode::ReadResponseMiddle => opcode::READ_RESPONSE_MIDDLE,
            Opcode::ReadResponseLast => opcode::READ_RESPONSE_LAST,
            Opcode::ReadResponseOnly => opcode::READ_RESPONSE_ONLY,
            Opcode::Ack => opcode::ACK,
            Opcode::Unknown(other) => other,
        }
    }
}

/// Bits of the ACK extension's flags byte ([`field::AXT_FLAGS`]).
pub mod ack_flags {
    /// A PSN sequence NAK whose request the responder placed out of order
    /// (selective repeat): only the packets before it that it has not
    /// placed need resending, not this one.
    pub const PLACED: u8 = 0x01;
    /// An ACK that answers no request packet (the responder's ACK after
    /// the host's software recovery moved its ePSN): its echoed entropy
    /// and ECN are not feedback for the requester's path selector.
    pub const NO_ECHO: u8 = 0x02;
}

/// AETH syndromes, as raw bytes. [`Syndrome`] is the typed form.
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

/// An AETH syndrome. The values are exactly those of [`syndrome`] (the ones
/// rnic sends); any other byte, including ACKs with a credit count and RNR
/// NAKs with a nonzero timer, is kept as [`Syndrome::Unknown`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Syndrome {
    /// ACK.
    Ack,
    /// RNR NAK (no receive WQE), timer field 0.
    RnrNak,
    /// NAK: PSN sequence error.
    NakPsnSeq,
    /// NAK: invalid request.
    NakInvReq,
    /// NAK: remote access error.
    NakRemAccess,
    /// NAK: remote operational error.
    NakRemOp,
    /// Any other syndrome byte. Holds a byte that none of the other variants
    /// stands for; [`From<u8>`] never builds it with a known value.
    Unknown(u8),
}

impl Syndrome {
    /// The positive acknowledgement.
    pub const fn is_ack(self) -> bool {
        matches!(self, Syndrome::Ack)
    }

    /// One of the NAKs rnic sends (RNR or one of the four NAK codes).
    pub const fn is_nak(self) -> bool {
        matches!(
            self,
            Syndrome::RnrNak | Syndrome::NakPsnSeq | Syndrome::NakInvReq | Syndrome::NakRemAccess | Syndrome::NakRemOp
        )
    }
}

impl From<u8> for Syndrome {
    fn from(value: u8) -> Syndrome {
        match value {
            syndrome::ACK => Syndrome::Ack,
            syndrome::RNR_NAK => Syndrome::RnrNak,
            syndrome::NAK_PSN_SEQ => Syndrome::NakPsnSeq,
            syndrome::NAK_INV_REQ => Syndrome::NakInvReq,
            syndrome::NAK_REM_ACCESS => Syndrome::NakRemAccess,
            syndrome::NAK_REM_OP => Syndrome::NakRemOp,
            other => Syndrome::Unknown(other),
        }
    }
}

impl From<Syndrome> for u8 {
    fn from(value: Syndrome) -> u8 {
        match value {
            Syndrome::Ack => syndrome::ACK,
            Syndrome::RnrNak => syndrome::RNR_NAK,
            Syndrome::NakPsnSeq => syndrome::NAK_PSN_SEQ,
            Syndrome::NakInvReq => syndrome::NAK_INV_REQ,
            Syndrome::NakRemAccess => syndrome::NAK_REM_ACCESS,
            Syndrome::NakRemOp => syndrome::NAK_REM_OP,
            Syndrome::Unknown(other) => other,
        }
    }
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
    for f in [field::IP_TOS, field::IP_TTL, field::IP_CSUM, field::UDP_CSUM, field::BTH_RESV8A] {
        hdr[f.start - off::IP..f.end() - off::IP].fill(0xFF);
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
    /// A valid frame of the other kind: an ACK given to
    /// [`RequestRepr::parse`], or a request to [`AckRepr::parse`].
    /// [`Frame::decode`] takes both kinds and never returns this.
    WrongKind {
        /// The BTH opcode of the frame.
        opcode: u8,
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
            DecodeError::WrongKind { opcode } => write!(f, "opcode {opcode:#04x} is the other kind of frame"),
        }
    }
}
impl std::error::Error for DecodeError {}

/// A view of one rnic frame in a byte buffer, from the Ethernet destination
/// MAC to the ICRC.
///
/// Getters read the fields in place; when `T` is also `AsMut<[u8]>`, setters
/// write them. A packet made with [`Packet::new_checked`] is long enough for
/// every getter and setter; with [`Packet::new_unchecked`] they panic if the
/// buffer is shorter than [`HDR_LEN`] + [`ICRC_LEN`]. Nothing but
/// [`Packet::check_checksums`] looks at the checksums, and setters do not
/// update them: call [`Packet::fill_checksums`] after the last one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps `buffer` without looking at it.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wraps `buffer` after [`Packet::check`]: long enough, IPv4 without
    /// options, UDP port 4791, IPv4 total length matching the buffer.
    pub fn new_checked(buffer: T) -> Result<Packet<T>, DecodeError> {
        let packet = Packet::new_unchecked(buffer);
        packet.check()?;
        Ok(packet)
    }

    /// The checks of [`Packet::new_checked`], in order:
    /// [`DecodeError::Length`] if the buffer is shorter than header + ICRC,
    /// [`DecodeError::NotRoce`] if it is not Ethernet/IPv4 (no options)/UDP
    /// to port 4791, [`DecodeError::Length`] if the IPv4 total length does
    /// not end the frame at the end of the buffer. Does not look at the
    /// checksums (see [`Packet::check_checksums`]) or the opcode.
    pub fn check(&self) -> Result<(), DecodeError> {
        let frame = self.buffer.as_ref().len();
        if frame < HDR_LEN + ICRC_LEN {
            return Err(DecodeError::Length { frame, ip_total: 0 });
        }
        if self.ethertype() != ETHERTYPE_IPV4
            || self.ip_ver_ihl() != IPV4_VER_IHL
            || self.ip_protocol() != IP_PROTO_UDP
            || self.udp_dst_port() != ROCE_UDP_PORT
        {
            return Err(DecodeError::NotRoce);
        }
        let ip_total = usize::from(self.ip_total_len());
        if field::IPV4.start + ip_total != frame {
            return Err(DecodeError::Length { frame, ip_total });
        }
        Ok(())
    }

    /// The IPv4 header checksum, then the ICRC: [`DecodeError::IpChecksum`]
    /// or [`DecodeError::Icrc`] for the first one that is wrong.
    pub fn check_checksums(&self) -> Result<(), DecodeError> {
        let (got, want) = (self.ip_checksum(), ipv4_checksum(&self.buffer.as_ref()[field::IPV4.range()]));
        if got != want {
            return Err(DecodeError::IpChecksum { got, want });
        }
        let (got, want) = (self.icrc(), icrc(self.buffer.as_ref()));
        if got != want {
            return Err(DecodeError::Icrc { got, want });
        }
        Ok(())
    }

    /// The wrapped buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Destination MAC.
    pub fn dst_mac(&self) -> [u8; 6] {
        self.mac(field::ETH_DST)
    }

    /// Source MAC.
    pub fn src_mac(&self) -> [u8; 6] {
        self.mac(field::ETH_SRC)
    }

    fn mac(&self, f: Field) -> [u8; 6] {
        let mut mac = [0; 6];
        mac.copy_from_slice(&self.buffer.as_ref()[f.range()]);
        mac
    }

    /// IPv4 ECN bits (the low two bits of the TOS byte).
    pub fn ip_ecn(&self) -> u8 {
        self.ip_tos() & field::IP_ECN_MASK
    }

    /// IPv4 don't-fragment flag.
    pub fn ip_dont_frag(&self) -> bool {
        self.ip_flags_frag() & field::IP_DF != 0
    }

    /// Whether the IPv4 header marks a fragment (MF or a nonzero offset,
    /// [`IP_MF_OFFSET_MASK`]); the receiver drops such frames.
    pub fn ip_is_fragment(&self) -> bool {
        self.ip_flags_frag() & IP_MF_OFFSET_MASK != 0
    }

    /// BTH opcode.
    pub fn opcode(&self) -> Opcode {
        Opcode::from(self.buffer.as_ref()[field::BTH_OPCODE.start])
    }

    /// BTH PadCnt: zero bytes between the payload and the ICRC.
    pub fn pad_count(&self) -> u8 {
        (self.bth_flags() & field::BTH_PADCNT_MASK) >> field::BTH_PADCNT_SHIFT
    }

    /// BTH AckReq bit.
    pub fn ack_req(&self) -> bool {
        self.buffer.as_ref()[field::BTH_ACKREQ.start] & field::BTH_ACKREQ_BIT != 0
    }

    /// AETH syndrome (meaningful in ACKs).
    pub fn syndrome(&self) -> Syndrome {
        Syndrome::from(self.buffer.as_ref()[field::AETH_SYNDROME.start])
    }

    /// The ICRC stored in the last four bytes (least significant byte first).
    pub fn icrc(&self) -> u32 {
        let b = self.buffer.as_ref();
        let mut le = [0; ICRC_LEN];
        le.copy_from_slice(&b[b.len() - ICRC_LEN..]);
        u32::from_le_bytes(le)
    }

    /// The payload without pad: from [`HDR_LEN`] up to the pad and ICRC. A
    /// PadCnt larger than the space after the header counts as all of it.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.payload_range()]
    }

    fn payload_range(&self) -> Range<usize> {
        let end = self.buffer.as_ref().len() - ICRC_LEN;
        let pad = usize::from(self.pad_count()).min(end - HDR_LEN);
        HDR_LEN..end - pad
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Sets the destination MAC.
    pub fn set_dst_mac(&mut self, mac: [u8; 6]) {
        self.buffer.as_mut()[field::ETH_DST.range()].copy_from_slice(&mac);
    }

    /// Sets the source MAC.
    pub fn set_src_mac(&mut self, mac: [u8; 6]) {
        self.buffer.as_mut()[field::ETH_SRC.range()].copy_from_slice(&mac);
    }

    /// Sets the IPv4 ECN bits to the low two bits of `ecn`, keeping the DSCP.
    pub fn set_ip_ecn(&mut self, ecn: u8) {
        let tos = self.ip_tos();
        self.set_ip_tos((tos & field::IP_DSCP_MASK) | (ecn & field::IP_ECN_MASK));
    }

    /// Sets the BTH opcode.
    pub fn set_opcode(&mut self, opcode: Opcode) {
        self.buffer.as_mut()[field::BTH_OPCODE.start] = opcode.into();
    }

    /// Sets BTH PadCnt to the low two bits of `pad`, keeping the other flags.
    pub fn set_pad_count(&mut self, pad: u8) {
        let flags = self.bth_flags() & !field::BTH_PADCNT_MASK;
        self.set_bth_flags(flags | ((pad << field::BTH_PADCNT_SHIFT) & field::BTH_PADCNT_MASK));
    }

    /// Sets the BTH AckReq bit, keeping resv7.
    pub fn set_ack_req(&mut self, ack_req: bool) {
        let b = &mut self.buffer.as_mut()[field::BTH_ACKREQ.start];
        *b = (*b & !field::BTH_ACKREQ_BIT) | if ack_req { field::BTH_ACKREQ_BIT } else { 0 };
    }

    /// Sets the AETH syndrome.
    pub fn set_syndrome(&mut self, syndrome: Syndrome) {
        self.buffer.as_mut()[field::AETH_SYNDROME.start] = syndrome.into();
    }

    /// Stores `icrc` in the last four bytes (least significant byte first).
    pub fn set_icrc(&mut self, icrc: u32) {
        let b = self.buffer.as_mut();
        let n = b.len();
        b[n - ICRC_LEN..].copy_from_slice(&icrc.to_le_bytes());
    }

    /// The payload without pad, writable. Its length follows from the buffer
    /// length and PadCnt, as for [`Packet::payload`].
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let range = self.payload_range();
        &mut self.buffer.as_mut()[range]
    }

    /// Computes and stores the IPv4 header checksum.
    pub fn fill_ip_checksum(&mut self) {
        let cs = ipv4_checksum(&self.buffer.as_ref()[field::IPV4.range()]);
        self.set_ip_checksum(cs);
    }

    /// Computes and stores the ICRC (after every other byte is final; the
    /// ICRC does not cover TOS, TTL or the IPv4 checksum).
    pub fn fill_icrc(&mut self) {
        let c = icrc(self.buffer.as_ref());
        self.set_icrc(c);
    }

    /// [`Packet::fill_ip_checksum`], then [`Packet::fill_icrc`].
    pub fn fill_checksums(&mut self) {
        self.fill_ip_checksum();
        self.fill_icrc();
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Packet<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

/// Getters and setters of the fields that are plain big-endian integers.
macro_rules! int_fields {
    ($($(#[doc = $doc:literal])* $get:ident, $set:ident: $ty:ty = $field:expr;)*) => {
        impl<T: AsRef<[u8]>> Packet<T> {
            $(
                $(#[doc = $doc])*
                #[inline]
                pub fn $get(&self) -> $ty {
                    $field.get(self.buffer.as_ref()) as $ty
                }
            )*
        }

        impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
            $(
                #[doc = concat!("Sets the field read by [`Packet::", stringify!($get), "`].")]
                #[inline]
                pub fn $set(&mut self, value: $ty) {
                    $field.set(self.buffer.as_mut(), u64::from(value));
                }
            )*
        }
    };
}

int_fields! {
    /// Ethertype.
    ethertype, set_ethertype: u16 = field::ETH_TYPE;
    /// IPv4 version and header length byte ([`IPV4_VER_IHL`] for rnic).
    ip_ver_ihl, set_ip_ver_ihl: u8 = field::IP_VER_IHL;
    /// IPv4 TOS byte (DSCP and ECN).
    ip_tos, set_ip_tos: u8 = field::IP_TOS;
    /// IPv4 total length.
    ip_total_len, set_ip_total_len: u16 = field::IP_LEN;
    /// IPv4 identification.
    ip_ident, set_ip_ident: u16 = field::IP_IDENT;
    /// IPv4 flags and fragment offset word ([`field::IP_DF`], [`field::IP_MF`],
    /// [`field::IP_FRAG_OFFSET_MASK`]).
    ip_flags_frag, set_ip_flags_frag: u16 = field::IP_FLAGS;
    /// IPv4 TTL.
    ip_ttl, set_ip_ttl: u8 = field::IP_TTL;
    /// IPv4 protocol.
    ip_protocol, set_ip_protocol: u8 = field::IP_PROTO;
    /// IPv4 header checksum as stored.
    ip_checksum, set_ip_checksum: u16 = field::IP_CSUM;
    /// IPv4 source address.
    ip_src, set_ip_src: u32 = field::IP_SRC;
    /// IPv4 destination address.
    ip_dst, set_ip_dst: u32 = field::IP_DST;
    /// UDP source port (entropy).
    udp_src_port, set_udp_src_port: u16 = field::UDP_SPORT;
    /// UDP destination port.
    udp_dst_port, set_udp_dst_port: u16 = field::UDP_DPORT;
    /// UDP length.
    udp_len, set_udp_len: u16 = field::UDP_LEN;
    /// UDP checksum.
    udp_checksum, set_udp_checksum: u16 = field::UDP_CSUM;
    /// BTH flags byte: SE, MigReq, PadCnt, TVer.
    bth_flags, set_bth_flags: u8 = field::BTH_FLAGS;
    /// BTH P_Key.
    pkey, set_pkey: u16 = field::BTH_PKEY;
    /// BTH FECN/BECN/resv6 byte.
    bth_resv8a, set_bth_resv8a: u8 = field::BTH_RESV8A;
    /// BTH destination QPN (24 bit; the setter keeps the low 24 bits).
    dest_qpn, set_dest_qpn: u32 = field::BTH_DQPN;
    /// BTH PSN (24 bit; the setter keeps the low 24 bits).
    psn, set_psn: u32 = field::BTH_PSN;
    /// Requests: RETH virtual address (this packet's remote address).
    reth_va, set_reth_va: u64 = field::RETH_VA;
    /// Requests: RETH rkey.
    reth_rkey, set_reth_rkey: u32 = field::RETH_RKEY;
    /// Requests: RETH DMA length (the whole message's length).
    reth_len, set_reth_len: u32 = field::RETH_LEN;
    /// Requests: SSN from the request extension.
    ssn, set_ssn: u32 = field::RXT_SSN;
    /// Requests: PSN_OFFSET from the request extension.
    psn_offset, set_psn_offset: u32 = field::RXT_PSN_OFFSET;
    /// Requests: TX timestamp from the request extension.
    timestamp, set_timestamp: u64 = field::RXT_TS;
    /// Requests: RSN from the request extension.
    rsn, set_rsn: u32 = field::RXT_RSN;
    /// Requests: immediate data from the request extension.
    imm, set_imm: u32 = field::RXT_IMM;
    /// READ requests: the requester's local address.
    laddr, set_laddr: u64 = field::RXT_LADDR;
    /// READ requests: the requester's lkey.
    lkey, set_lkey: u32 = field::RXT_LKEY;
    /// ACKs: AETH MSN (24 bit; the setter keeps the low 24 bits).
    msn, set_msn: u32 = field::AETH_MSN;
    /// ACKs: echoed SSN.
    ack_ssn, set_ack_ssn: u32 = field::AXT_SSN;
    /// ACKs: echoed PSN_OFFSET.
    ack_psn_offset, set_ack_psn_offset: u32 = field::AXT_PSN_OFFSET;
    /// ACKs: echoed TX timestamp.
    ack_timestamp, set_ack_timestamp: u64 = field::AXT_TS;
    /// ACKs: echoed entropy (the request's UDP source port).
    echo_entropy, set_echo_entropy: u16 = field::AXT_ENTROPY;
    /// ACKs: ECN echo (the request's IP ECN bits).
    echo_ecn, set_echo_ecn: u8 = field::AXT_ECN;
    /// ACKs: flags ([`ack_flags`]).
    ack_flags, set_ack_flags: u8 = field::AXT_FLAGS;
    /// ACKs: expected PSN at the responder.
    epsn, set_epsn: u32 = field::AXT_EPSN;
    /// ACKs: SACK base PSN.
    sack_base, set_sack_base: u32 = field::AXT_SACK_BASE;
    /// ACKs: MSN_PSN, the first PSN of message MSN (24 bit).
    msn_psn, set_msn_psn: u32 = field::AXT_MSN_PSN;
    /// ACKs: 64-bit SACK bitmap segment.
    sack_bitmap, set_sack_bitmap: u64 = field::AXT_SACK_BITMAP;
    /// ACKs: bytes received.
    bytes_received, set_bytes_received: u32 = field::AXT_BYTES_RX;
    /// ACKs: out-of-order count.
    ooo_count, set_ooo_count: u32 = field::AXT_OOO;
}

/// The fields every frame has (Ethernet, IPv4, UDP, BTH), as both
/// representations carry them.
#[derive(Clone, Copy)]
struct Envelope {
    dst_mac: [u8; 6],
    src_mac: [u8; 6],
    ecn: u8,
    src_ip: u32,
    dst_ip: u32,
    sport: u16,
    opcode: Opcode,
    dqpn: u32,
    ack_req: bool,
    psn: u32,
}

impl Envelope {
    /// Checks `packet` completely (structure, checksums, opcode kind) and
    /// reads its envelope.
    fn parse<T: AsRef<[u8]>>(packet: &Packet<T>, ack: bool) -> Result<Envelope, DecodeError> {
        packet.check()?;
        packet.check_checksums()?;
        let opcode = packet.opcode();
        if opcode.is_ack() != ack {
            return Err(DecodeError::WrongKind { opcode: opcode.into() });
        }
        Ok(Envelope {
            dst_mac: packet.dst_mac(),
            src_mac: packet.src_mac(),
            ecn: packet.ip_ecn(),
            src_ip: packet.ip_src(),
            dst_ip: packet.ip_dst(),
            sport: packet.udp_src_port(),
            opcode,
            dqpn: packet.dest_qpn(),
            ack_req: packet.ack_req(),
            psn: packet.psn(),
        })
    }

    /// Zeroes the header and the pad of a frame with `payload_len` payload
    /// bytes, then writes the envelope, rnic's fixed values and the lengths.
    /// The kind-specific fields, the payload and the checksums are left to
    /// the caller.
    ///
    /// # Panics
    /// If the buffer is not [`frame_len`]`(payload_len)` bytes long.
    fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>, payload_len: usize) {
        let len = packet.buffer.as_ref().len();
        assert_eq!(len, frame_len(payload_len), "buffer length for a frame with {payload_len} payload bytes");
        let buf = packet.buffer.as_mut();
        buf[..HDR_LEN].fill(0);
        buf[HDR_LEN + payload_len..len - ICRC_LEN].fill(0);
        packet.set_dst_mac(self.dst_mac);
        packet.set_src_mac(self.src_mac);
        packet.set_ethertype(ETHERTYPE_IPV4);
        packet.set_ip_ver_ihl(IPV4_VER_IHL);
        packet.set_ip_ecn(self.ecn);
        packet.set_ip_total_len((len - field::IPV4.start) as u16);
        packet.set_ip_flags_frag(field::IP_DF);
        packet.set_ip_ttl(IP_TTL_DEFAULT);
        packet.set_ip_protocol(IP_PROTO_UDP);
        packet.set_ip_src(self.src_ip);
        packet.set_ip_dst(self.dst_ip);
        packet.set_udp_src_port(self.sport);
        packet.set_udp_dst_port(ROCE_UDP_PORT);
        packet.set_udp_len((len - field::UDP.start) as u16);
        packet.set_opcode(self.opcode);
        packet.set_pad_count(pad_len(payload_len) as u8);
        packet.set_pkey(BTH_PKEY_DEFAULT);
        packet.set_dest_qpn(self.dqpn);
        packet.set_ack_req(self.ack_req);
        packet.set_psn(self.psn);
    }
}

/// A request: one packet of a SEND or RDMA WRITE, with its payload.
///
/// Every frame whose opcode is not ACK has this layout, so `opcode` may also
/// be [`Opcode::Unknown`]: that represents the malformed requests the
/// responder answers with an invalid-request NAK. Code that only accepts
/// SEND and WRITE checks [`Opcode::is_send`] or [`Opcode::is_write`]. The
/// RETH fields are carried by every request, not only WRITE First/Only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestRepr<'a> {
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// Source MAC.
    pub src_mac: [u8; 6],
    /// IP ECN bits (TOS\[1:0\]; the DSCP is sent as 0).
    pub ecn: u8,
    /// Source IPv4 address.
    pub src_ip: u32,
    /// Destination IPv4 address.
    pub dst_ip: u32,
    /// UDP source port (entropy).
    pub sport: u16,
    /// BTH opcode; anything but [`Opcode::Ack`].
    pub opcode: Opcode,
    /// BTH destination QPN (24 bit).
    pub dqpn: u32,
    /// BTH AckReq bit.
    pub ack_req: bool,
    /// BTH PSN (24 bit).
    pub psn: u32,
    /// RETH VA: this packet's remote address.
    pub va: u64,
    /// RETH rkey.
    pub rkey: u32,
    /// RETH DMA length: the whole message's length.
    pub msg_len: u32,
    /// Extension: SSN, the message's sequence number.
    pub ssn: u32,
    /// Extension: PSN_OFFSET, the packet's index in its message.
    pub psn_offset: u32,
    /// Extension: TX timestamp (cycles).
    pub ts: u64,
    /// Extension: RSN, the receive WQE index a SEND or WRITE with immediate consumes.
    pub rsn: u32,
    /// Extension: immediate data (meaningful with [`Opcode::has_imm`]).
    pub imm: u32,
    /// Extension: a READ request's local address at the requester (0 otherwise).
    pub laddr: u64,
    /// Extension: a READ request's lkey at the requester (0 otherwise).
    pub lkey: u32,
    /// Payload, without pad.
    pub payload: &'a [u8],
}

impl<'a> RequestRepr<'a> {
    /// Reads a request from `packet` after checking it completely:
    /// [`Packet::check`], [`Packet::check_checksums`], then
    /// [`DecodeError::WrongKind`] if it is an ACK. The payload borrows the
    /// packet's buffer.
    pub fn parse<B: AsRef<[u8]> + ?Sized>(packet: &Packet<&'a B>) -> Result<RequestRepr<'a>, DecodeError> {
        let env = Envelope::parse(packet, false)?;
        let bytes: &'a [u8] = packet.buffer.as_ref();
        Ok(RequestRepr {
            dst_mac: env.dst_mac,
            src_mac: env.src_mac,
            ecn: env.ecn,
            src_ip: env.src_ip,
            dst_ip: env.dst_ip,
            sport: env.sport,
            opcode: env.opcode,
            dqpn: env.dqpn,
            ack_req: env.ack_req,
            psn: env.psn,
            va: packet.reth_va(),
            rkey: packet.reth_rkey(),
            msg_len: packet.reth_len(),
            ssn: packet.ssn(),
            psn_offset: packet.psn_offset(),
            ts: packet.timestamp(),
            rsn: packet.rsn(),
            imm: packet.imm(),
            laddr: packet.laddr(),
            lkey: packet.lkey(),
            payload: &bytes[packet.payload_range()],
        })
    }

    /// Length of the frame [`RequestRepr::emit`] writes.
    pub const fn buffer_len(&self) -> usize {
        frame_len(self.payload.len())
    }

    /// Writes the complete frame into `packet`: every header byte (reserved
    /// ones zero), payload, pad, IPv4 checksum and ICRC.
    ///
    /// # Panics
    /// If the buffer is not [`RequestRepr::buffer_len`] bytes long, or the
    /// opcode is [`Opcode::Ack`].
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        assert!(!self.opcode.is_ack(), "a request cannot have the ACK opcode");
        self.envelope().emit(packet, self.payload.len());
        packet.set_reth_va(self.va);
        packet.set_reth_rkey(self.rkey);
        packet.set_reth_len(self.msg_len);
        packet.set_ssn(self.ssn);
        packet.set_psn_offset(self.psn_offset);
        packet.set_timestamp(self.ts);
        packet.set_rsn(self.rsn);
        packet.set_imm(self.imm);
        packet.set_laddr(self.laddr);
        packet.set_lkey(self.lkey);
        packet.payload_mut().copy_from_slice(self.payload);
        packet.fill_checksums();
    }

    fn envelope(&self) -> Envelope {
        Envelope {
            dst_mac: self.dst_mac,
            src_mac: self.src_mac,
            ecn: self.ecn,
            src_ip: self.src_ip,
            dst_ip: self.dst_ip,
            sport: self.sport,
            opcode: self.opcode,
            dqpn: self.dqpn,
            ack_req: self.ack_req,
            psn: self.psn,
        }
    }
}

/// An ACK or NAK (opcode ACK; the syndrome says which).
///
/// ACKs have no payload: [`AckRepr::parse`] ignores any bytes between the
/// header and the ICRC, and [`AckRepr::emit`] writes none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckRepr {
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// Source MAC.
    pub src_mac: [u8; 6],
    /// IP ECN bits (TOS\[1:0\]; the DSCP is sent as 0).
    pub ecn: u8,
    /// Source IPv4 address.
    pub src_ip: u32,
    /// Destination IPv4 address.
    pub dst_ip: u32,
    /// UDP source port (entropy).
    pub sport: u16,
    /// BTH destination QPN (24 bit).
    pub dqpn: u32,
    /// BTH AckReq bit.
    pub ack_req: bool,
    /// BTH PSN (24 bit): the PSN acknowledged.
    pub psn: u32,
    /// AETH syndrome: ACK or which NAK.
    pub syndrome: Syndrome,
    /// AETH MSN (24 bit).
    pub msn: u32,
    /// Extension: echoed SSN.
    pub ssn: u32,
    /// Extension: echoed PSN_OFFSET.
    pub psn_offset: u32,
    /// Extension: echoed TX timestamp.
    pub ts: u64,
    /// Extension: echoed entropy (the request's UDP source port).
    pub echo_entropy: u16,
    /// Extension: ECN echo (the request's IP ECN bits).
    pub echo_ecn: u8,
    /// Extension: flags ([`ack_flags`]).
    pub ack_flags: u8,
    /// Extension: expected PSN at the responder.
    pub epsn: u32,
    /// Extension: MSN_PSN, the first PSN of message MSN.
    pub msn_psn: u32,
    /// Extension: SACK base PSN (ePSN or ePSN + 64).
    pub sack_base: u32,
    /// Extension: SACK bitmap segment (bit `i`: PSN `sack_base + i` placed).
    pub sack_bitmap: u64,
    /// Extension: payload bytes received, duplicates eliminated, mod 2^32.
    pub bytes_rx: u32,
    /// Extension: out-of-order count (packets placed beyond ePSN).
    pub ooo: u32,
}

impl AckRepr {
    /// Reads an ACK/NAK from `packet` after checking it completely:
    /// [`Packet::check`], [`Packet::check_checksums`], then
    /// [`DecodeError::WrongKind`] if it is a request.
    pub fn parse<T: AsRef<[u8]>>(packet: &Packet<T>) -> Result<AckRepr, DecodeError> {
        let env = Envelope::parse(packet, true)?;
        Ok(AckRepr {
            dst_mac: env.dst_mac,
            src_mac: env.src_mac,
            ecn: env.ecn,
            src_ip: env.src_ip,
            dst_ip: env.dst_ip,
            sport: env.sport,
            dqpn: env.dqpn,
            ack_req: env.ack_req,
            psn: env.psn,
            syndrome: packet.syndrome(),
            msn: packet.msn(),
            ssn: packet.ack_ssn(),
            psn_offset: packet.ack_psn_offset(),
            ts: packet.ack_timestamp(),
            echo_entropy: packet.echo_entropy(),
            echo_ecn: packet.echo_ecn(),
            ack_flags: packet.ack_flags(),
            epsn: packet.epsn(),
            msn_psn: packet.msn_psn(),
            sack_base: packet.sack_base(),
            sack_bitmap: packet.sack_bitmap(),
            bytes_rx: packet.bytes_received(),
            ooo: packet.ooo_count(),
        })
    }

    /// Length of the frame [`AckRepr::emit`] writes: header and ICRC.
    pub const fn buffer_len(&self) -> usize {
        frame_len(0)
    }

    /// Writes the complete frame into `packet`: every header byte (reserved
    /// ones zero), IPv4 checksum and ICRC.
    ///
    /// # Panics
    /// If the buffer is not [`AckRepr::buffer_len`] bytes long.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        self.emit_header(packet, 0);
        packet.fill_checksums();
    }

    /// The header of a frame with room for `payload_len` payload bytes; no
    /// payload, no checksums.
    fn emit_header<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>, payload_len: usize) {
        let env = Envelope {
            dst_mac: self.dst_mac,
            src_mac: self.src_mac,
            ecn: self.ecn,
            src_ip: self.src_ip,
            dst_ip: self.dst_ip,
            sport: self.sport,
            opcode: Opcode::Ack,
            dqpn: self.dqpn,
            ack_req: self.ack_req,
            psn: self.psn,
        };
        env.emit(packet, payload_len);
        packet.set_syndrome(self.syndrome);
        packet.set_msn(self.msn);
        packet.set_ack_ssn(self.ssn);
        packet.set_ack_psn_offset(self.psn_offset);
        packet.set_ack_timestamp(self.ts);
        packet.set_echo_entropy(self.echo_entropy);
        packet.set_echo_ecn(self.echo_ecn);
        packet.set_ack_flags(self.ack_flags);
        packet.set_epsn(self.epsn);
        packet.set_msn_psn(self.msn_psn);
        packet.set_sack_base(self.sack_base);
        packet.set_sack_bitmap(self.sack_bitmap);
        packet.set_bytes_received(self.bytes_rx);
        packet.set_ooo_count(self.ooo);
    }
}

/// The fields of one rnic frame, decoded. Used by the simulator, the tests
/// and the pcap checker; the RTL builds and parses the same layout.
///
/// One struct for both kinds of frame: the fields of the other kind are
/// zero. [`RequestRepr`] and [`AckRepr`] are the typed forms, and
/// [`Frame::encode`] / [`Frame::decode`] go through them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Frame {
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// Source MAC.
    pub src_mac: [u8; 6],
    /// IP ECN bits (TOS\[1:0\]).
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
    /// Requests: RSN.
    pub rsn: u32,
    /// Requests: immediate data.
    pub imm: u32,
    /// READ requests: the requester's local address.
    pub laddr: u64,
    /// READ requests: the requester's lkey.
    pub lkey: u32,
    /// ACKs: AETH syndrome.
    pub syndrome: u8,
    /// ACKs: AETH MSN.
    pub msn: u32,
    /// ACKs: expected PSN.
    pub epsn: u32,
    /// ACKs: MSN_PSN, the first PSN of message MSN.
    pub msn_psn: u32,
    /// ACKs: echoed entropy.
    pub echo_entropy: u16,
    /// ACKs: ECN echo.
    pub echo_ecn: u8,
    /// ACKs: flags ([`ack_flags`]).
    pub ack_flags: u8,
    /// ACKs: SACK base PSN.
    pub sack_base: u32,
    /// ACKs: SACK bitmap segment.
    pub sack_bitmap: u64,
    /// ACKs: payload bytes received (mod 2^32).
    pub bytes_rx: u32,
    /// ACKs: out-of-order count.
    pub ooo: u32,
    /// Payload (without pad).
    pub payload: Vec<u8>,
}

impl Frame {
    /// Whether this is an ACK/NAK.
    pub fn is_ack(&self) -> bool {
        self.opcode == opcode::ACK
    }

    /// The request this frame holds (borrowing its payload); `None` for an ACK.
    pub fn as_request(&self) -> Option<RequestRepr<'_>> {
        (!self.is_ack()).then(|| self.request_repr())
    }

    /// The ACK/NAK this frame holds; `None` for a request. A payload is not
    /// part of an [`AckRepr`].
    pub fn as_ack(&self) -> Option<AckRepr> {
        self.is_ack().then(|| self.ack_repr())
    }

    fn request_repr(&self) -> RequestRepr<'_> {
        RequestRepr {
            dst_mac: self.dst_mac,
            src_mac: self.src_mac,
            ecn: self.ecn,
            src_ip: self.src_ip,
            dst_ip: self.dst_ip,
            sport: self.sport,
            opcode: self.opcode.into(),
            dqpn: self.dqpn,
            ack_req: self.ack_req,
            psn: self.psn,
            va: self.va,
            rkey: self.rkey,
            msg_len: self.msg_len,
            ssn: self.ssn,
            psn_offset: self.psn_offset,
            ts: self.ts,
            rsn: self.rsn,
            imm: self.imm,
            laddr: self.laddr,
            lkey: self.lkey,
            payload: &self.payload,
        }
    }

    fn ack_repr(&self) -> AckRepr {
        AckRepr {
            dst_mac: self.dst_mac,
            src_mac: self.src_mac,
            ecn: self.ecn,
            src_ip: self.src_ip,
            dst_ip: self.dst_ip,
            sport: self.sport,
            dqpn: self.dqpn,
            ack_req: self.ack_req,
            psn: self.psn,
            syndrome: self.syndrome.into(),
            msn: self.msn,
            ssn: self.ssn,
            psn_offset: self.psn_offset,
            ts: self.ts,
            echo_entropy: self.echo_entropy,
            echo_ecn: self.echo_ecn,
            ack_flags: self.ack_flags,
            epsn: self.epsn,
            msn_psn: self.msn_psn,
            sack_base: self.sack_base,
            sack_bitmap: self.sack_bitmap,
            bytes_rx: self.bytes_rx,
            ooo: self.ooo,
        }
    }

    /// Encodes the frame with valid IP checksum, pad and ICRC. An ACK with a
    /// payload gets it after the header, like a request.
    pub fn encode(&self) -> Vec<u8> {
        let mut buf = vec![0u8; frame_len(self.payload.len())];
        let mut packet = Packet::new_unchecked(&mut buf[..]);
        if self.is_ack() {
            self.ack_repr().emit_header(&mut packet, self.payload.len());
            packet.payload_mut().copy_from_slice(&self.payload);
            packet.fill_checksums();
        } else {
            self.request_repr().emit(&mut packet);
        }
        buf
    }

    /// Decodes and checks a frame (lengths, IPv4 checksum, ICRC).
    pub fn decode(f: &[u8]) -> Result<Frame, DecodeError> {
        let packet = Packet::new_checked(f)?;
        if packet.opcode().is_ack() {
            let mut frame = Frame::from(AckRepr::parse(&packet)?);
            frame.payload = packet.payload().to_vec();
            Ok(frame)
        } else {
            RequestRepr::parse(&packet).map(Frame::from)
        }
    }
}

impl From<RequestRepr<'_>> for Frame {
    fn from(r: RequestRepr<'_>) -> Frame {
        Frame {
            dst_mac: r.dst_mac,
            src_mac: r.src_mac,
            ecn: r.ecn,
            src_ip: r.src_ip,
            dst_ip: r.dst_ip,
            sport: r.sport,
            opcode: r.opcode.into(),
            dqpn: r.dqpn,
            ack_req: r.ack_req,
            psn: r.psn,
            va: r.va,
            rkey: r.rkey,
            msg_len: r.msg_len,
            ssn: r.ssn,
            psn_offset: r.psn_offset,
            ts: r.ts,
            rsn: r.rsn,
            imm: r.imm,
            laddr: r.laddr,
            lkey: r.lkey,
            payload: r.payload.to_vec(),
            ..Frame::default()
        }
    }
}

impl From<AckRepr> for Frame {
    fn from(a: AckRepr) -> Frame {
        Frame {
            dst_mac: a.dst_mac,
            src_mac: a.src_mac,
            ecn: a.ecn,
            src_ip: a.src_ip,
            dst_ip: a.dst_ip,
            sport: a.sport,
            opcode: opcode::ACK,
            dqpn: a.dqpn,
            ack_req: a.ack_req,
            psn: a.psn,
            ssn: a.ssn,
            psn_offset: a.psn_offset,
            ts: a.ts,
            syndrome: a.syndrome.into(),
            msn: a.msn,
            epsn: a.epsn,
            msn_psn: a.msn_psn,
            echo_entropy: a.echo_entropy,
            echo_ecn: a.echo_ecn,
            ack_flags: a.ack_flags,
            sack_base: a.sack_base,
            sack_bitmap: a.sack_bitmap,
            bytes_rx: a.bytes_rx,
            ooo: a.ooo,
            ..Frame::default()
        }
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

    /// The offsets other crates (the RTL generator above all) are built on.
    #[test]
    fn offsets_keep_their_values() {
        let table = [
            (off::ETH_DST, 0),
            (off::ETH_SRC, 6),
            (off::ETH_TYPE, 12),
            (off::IP, 14),
            (off::IP_TOS, 15),
            (off::IP_LEN, 16),
            (off::IP_FLAGS, 20),
            (off::IP_TTL, 22),
            (off::IP_PROTO, 23),
            (off::IP_CSUM, 24),
            (off::IP_SRC, 26),
            (off::IP_DST, 30),
            (off::UDP_SPORT, 34),
            (off::UDP_DPORT, 36),
            (off::UDP_LEN, 38),
            (off::UDP_CSUM, 40),
            (off::BTH, 42),
            (off::BTH_FLAGS, 43),
            (off::BTH_PKEY, 44),
            (off::BTH_RESV8A, 46),
            (off::BTH_DQPN, 47),
            (off::BTH_ACKREQ, 50),
            (off::BTH_PSN, 51),
            (off::RETH_VA, 54),
            (off::RETH_RKEY, 62),
            (off::RETH_LEN, 66),
            (off::RXT_SSN, 70),
            (off::RXT_PSN_OFFSET, 74),
            (off::RXT_TS, 78),
            (off::AETH_SYNDROME, 54),
            (off::AETH_MSN, 55),
            (off::AXT_SSN, 58),
            (off::AXT_PSN_OFFSET, 62),
            (off::AXT_TS, 66),
            (off::AXT_ENTROPY, 74),
            (off::AXT_ECN, 76),
            (off::AXT_EPSN, 78),
            (off::AXT_SACK_BASE, 82),
            (off::AXT_OOO, 86),
            (off::AXT_MSN_PSN, 90),
            (off::AXT_SACK_BITMAP, 94),
            (off::AXT_BYTES_RX, 102),
        ];
        for (i, (got, want)) in table.into_iter().enumerate() {
            assert_eq!(got, want, "entry {i}");
        }
        assert_eq!(IP_MF_OFFSET_MASK, 0x3FFF);
    }

    /// `fields` follow each other without gap or overlap from byte 0 to `end`.
    fn assert_tiles(fields: &[Field], end: usize) {
        let mut at = 0;
        for f in fields {
            assert_eq!(f.start, at, "{f:?} should start at {at}");
            assert!(f.len > 0, "{f:?} is empty");
            at = f.end();
        }
        assert_eq!(at, end);
    }

    #[test]
    fn field_table_tiles_both_layouts() {
        use field::*;
        let common = [
            ETH_DST, ETH_SRC, ETH_TYPE, IP_VER_IHL, IP_TOS, IP_LEN, IP_IDENT, IP_FLAGS, IP_TTL, IP_PROTO, IP_CSUM,
            IP_SRC, IP_DST, UDP_SPORT, UDP_DPORT, UDP_LEN, UDP_CSUM, BTH_OPCODE, BTH_FLAGS, BTH_PKEY, BTH_RESV8A,
            BTH_DQPN, BTH_ACKREQ, BTH_PSN,
        ];
        let request =
            [RETH_VA, RETH_RKEY, RETH_LEN, RXT_SSN, RXT_PSN_OFFSET, RXT_TS, RXT_RSN, RXT_IMM, RXT_LADDR, RXT_LKEY];
        let ack = [
            AETH_SYNDROME,
            AETH_MSN,
            AXT_SSN,
            AXT_PSN_OFFSET,
            AXT_TS,
            AXT_ENTROPY,
            AXT_ECN,
            AXT_FLAGS,
            AXT_EPSN,
            AXT_SACK_BASE,
            AXT_OOO,
            AXT_MSN_PSN,
            AXT_SACK_BITMAP,
            AXT_BYTES_RX,
        ];
        assert_tiles(&[common.as_slice(), &request].concat(), 106);
        assert_tiles(&[common.as_slice(), &ack].concat(), 106);
        assert_tiles(&[ETH, IPV4, UDP, BTH, RETH, RXT], 106);
        assert_tiles(&[ETH, IPV4, UDP, BTH, AETH, AXT], 106);
        let request_groups = [ETH, IPV4, UDP, BTH, RETH, RXT];
        let ack_groups = [ETH, IPV4, UDP, BTH, AETH, AXT];
        for (fields, groups) in [
            (&[common.as_slice(), &request].concat(), request_groups),
            (&[common.as_slice(), &ack].concat(), ack_groups),
        ] {
            for f in fields {
                assert_eq!(groups.iter().filter(|g| f.is_within(**g)).count(), 1, "{f:?} in exactly one group");
            }
        }
    }

    #[test]
    fn field_get_set() {
        let mut b = [0u8; 12];
        Field::new(1, 3).set(&mut b, 0x12_3456_789A);
        assert_eq!(b[..5], [0, 0x56, 0x78, 0x9A, 0]);
        assert_eq!(Field::new(1, 3).get(&b), 0x56_789A);
        Field::new(2, 8).set(&mut b, u64::MAX - 1);
        assert_eq!(Field::new(2, 8).get(&b), u64::MAX - 1);
        assert_eq!(Field::new(1, 3).range(), 1..4);
    }

    #[test]
    fn opcode_and_syndrome_round_trip_every_byte() {
        for v in 0..=u8::MAX {
            let op = Opcode::from(v);
            assert_eq!(u8::from(op), v);
            assert_eq!(
                matches!(op, Opcode::Unknown(_)),
                !(op.is_send() || op.is_write() || op.is_ack() || op.is_read_request() || op.is_read_response())
            );
            let syn = Syndrome::from(v);
            assert_eq!(u8::from(syn), v);
            assert_eq!(matches!(syn, Syndrome::Unknown(_)), !(syn.is_ack() || syn.is_nak()));
        }
        let known = [
            (Opcode::SendFirst, opcode::SEND_FIRST),
            (Opcode::SendMiddle, opcode::SEND_MIDDLE),
            (Opcode::SendLast, opcode::SEND_LAST),
            (Opcode::SendOnly, opcode::SEND_ONLY),
            (Opcode::WriteFirst, opcode::WRITE_FIRST),
            (Opcode::WriteMiddle, opcode::WRITE_MIDDLE),
            (Opcode::WriteLast, opcode::WRITE_LAST),
            (Opcode::WriteOnly, opcode::WRITE_ONLY),
            (Opcode::Ack, opcode::ACK),
        ];
        for (op, v) in known {
            assert_eq!(Opcode::from(v), op);
        }
        let known = [
            (Syndrome::Ack, syndrome::ACK),
            (Syndrome::RnrNak, syndrome::RNR_NAK),
            (Syndrome::NakPsnSeq, syndrome::NAK_PSN_SEQ),
            (Syndrome::NakInvReq, syndrome::NAK_INV_REQ),
            (Syndrome::NakRemAccess, syndrome::NAK_REM_ACCESS),
            (Syndrome::NakRemOp, syndrome::NAK_REM_OP),
        ];
        for (syn, v) in known {
            assert_eq!(Syndrome::from(v), syn);
        }
    }

    #[test]
    fn opcode_helpers() {
        for write in [false, true] {
            for first in [false, true] {
                for last in [false, true] {
                    let op = Opcode::request(write, first, last);
                    assert_eq!(u8::from(op), opcode::request(write, first, last));
                    assert_eq!((op.is_write(), op.is_send()), (write, !write));
                    assert_eq!((op.is_first(), op.is_last()), (first, last));
                    assert_eq!(op.has_reth(), write && first);
                    assert!(!op.is_ack());
                }
            }
        }
        let ack = Opcode::Ack;
        assert!(ack.is_ack() && !ack.is_send() && !ack.is_write() && !ack.is_first() && !ack.has_reth());
        for (first, last) in [(true, false), (false, false), (false, true), (true, true)] {
            let op = Opcode::read_response(first, last);
            assert!(op.is_read_response() && !op.is_read_request() && !op.is_write() && !op.is_send());
            assert_eq!((op.is_first(), op.is_last(), op.has_reth()), (first, last, false));
        }
        let read = Opcode::ReadRequest;
        assert!(read.is_read_request() && read.is_first() && read.is_last() && read.has_reth());
        let unknown = Opcode::from(0x12);
        assert_eq!(unknown, Opcode::Unknown(0x12));
        assert!(!unknown.is_ack() && !unknown.is_send() && !unknown.is_write() && !unknown.is_last());
    }

    #[test]
    fn sub_byte_setters_keep_their_neighbours() {
        let mut buf = vec![0xFFu8; frame_len(0)];
        let mut p = Packet::new_unchecked(&mut buf[..]);
        p.set_pad_count(1);
        assert_eq!(p.bth_flags(), 0xDF);
        assert_eq!(p.pad_count(), 1);
        p.set_ack_req(false);
        assert_eq!(p.as_ref()[off::BTH_ACKREQ], 0x7F);
        assert!(!p.ack_req());
        p.set_ip_ecn(2);
        assert_eq!((p.ip_tos(), p.ip_ecn()), (0xFE, 2));
        p.set_ip_flags_frag(field::IP_DF);
        assert!(p.ip_dont_frag() && !p.ip_is_fragment());
        p.set_ip_flags_frag(field::IP_DF | 1);
        assert!(p.ip_is_fragment());
        p.set_psn(0x1AB_CDEF);
        assert_eq!((p.psn(), p.as_ref()[off::BTH_ACKREQ]), (0xAB_CDEF, 0x7F));
    }
}
