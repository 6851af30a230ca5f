//! The UltraScale+ integrated block for PCI Express (PG213) as the board
//! adapters use it: 512-bit user interfaces, Dword-aligned, straddle off.
//! Bit positions of the descriptors (in the first beat's `tdata`) and of
//! the `tuser` fields the adapters read or drive, and encoders/decoders the
//! block tests' models of the PCIe block use. The RTL (`rnic_hw::usp_*`)
//! writes the same positions as literals (rust-hdl slices need them) and
//! asserts at compile time that they equal these.

/// Bytes of the requester request (RQ) and completer request (CQ) descriptors.
pub const RQ_DESC_BYTES: usize = 16;
/// Bytes of the requester completion (RC) and completer completion (CC) descriptors.
pub const RC_DESC_BYTES: usize = 12;

/// RQ/CQ descriptor: address bits 63:2 in bits 63:2 (bits 1:0 are the address type).
pub const RQ_ADDR_LSB: usize = 0;
/// RQ/CQ descriptor: Dword count, 11 bits.
pub const RQ_DWORDS_LSB: usize = 64;
/// RQ/CQ descriptor: request type, 4 bits.
pub const RQ_TYPE_LSB: usize = 75;
/// RQ descriptor: poisoned request.
pub const RQ_POISON_BIT: usize = 79;
/// RQ/CQ descriptor: requester ID, 16 bits.
pub const RQ_REQ_ID_LSB: usize = 80;
/// RQ/CQ descriptor: tag, 8 bits.
pub const RQ_TAG_LSB: usize = 96;
/// CQ descriptor: the target function, 8 bits.
pub const CQ_FUNC_LSB: usize = 104;
/// CQ descriptor: the BAR the request hit, 3 bits.
pub const CQ_BAR_ID_LSB: usize = 112;
/// CQ descriptor: log2 of that BAR's size, 6 bits.
pub const CQ_BAR_APERTURE_LSB: usize = 115;
/// RQ descriptor: requester ID enable (0: the block fills in its own ID).
pub const RQ_REQ_ID_EN_BIT: usize = 120;
/// RQ/CQ descriptor: traffic class, 3 bits.
pub const RQ_TC_LSB: usize = 121;
/// RQ/CQ descriptor: attributes, 3 bits.
pub const RQ_ATTR_LSB: usize = 124;
/// RQ descriptor: force ECRC.
pub const RQ_ECRC_BIT: usize = 127;

/// Request type: memory read.
pub const REQ_MEM_RD: u8 = 0;
/// Request type: memory write.
pub const REQ_MEM_WR: u8 = 1;

/// `s_axis_rq_tuser` width at 512 bits.
pub const RQ_TUSER_BITS: usize = 137;
/// RQ `tuser`: first Dword byte enables of the first TLP, 4 bits.
pub const RQ_USER_FIRST_BE_LSB: usize = 0;
/// RQ `tuser`: last Dword byte enables of the first TLP, 4 bits (0 for a 1-Dword request).
pub const RQ_USER_LAST_BE_LSB: usize = 8;
/// RQ `tuser`: `is_sop[0]`, a TLP starts in the beat.
pub const RQ_USER_SOP_BIT: usize = 20;
/// RQ `tuser`: `is_eop[0]`, a TLP ends in the beat.
pub const RQ_USER_EOP_BIT: usize = 26;
/// RQ `tuser`: `is_eop0_ptr`, the last Dword of the TLP ending in the beat, 4 bits.
pub const RQ_USER_EOP_PTR_LSB: usize = 28;

/// RC descriptor: lower address, 12 bits.
pub const RC_LOWER_ADDR_LSB: usize = 0;
/// RC descriptor: error code, 4 bits.
pub const RC_ERR_LSB: usize = 12;
/// RC descriptor: byte count, 13 bits.
pub const RC_BYTE_COUNT_LSB: usize = 16;
/// RC descriptor: Request Completed.
pub const RC_REQ_DONE_BIT: usize = 30;
/// RC/CC descriptor: Dword count, 11 bits.
pub const RC_DWORDS_LSB: usize = 32;
/// RC/CC descriptor: completion status, 3 bits.
pub const RC_STATUS_LSB: usize = 43;
/// RC descriptor: poisoned completion.
pub const RC_POISON_BIT: usize = 46;
/// RC/CC descriptor: tag, 8 bits.
pub const RC_TAG_LSB: usize = 64;
/// `m_axis_rc_tuser`: `discontinue`.
pub const RC_USER_DISCONTINUE_BIT: usize = 96;
/// `m_axis_cq_tuser`: first and last Dword byte enables, 4 bits each (as RQ's).
pub const CQ_USER_FIRST_BE_LSB: usize = 0;
/// See [`CQ_USER_FIRST_BE_LSB`].
pub const CQ_USER_LAST_BE_LSB: usize = 8;

/// CC descriptor: lower address, 7 bits.
pub const CC_LOWER_ADDR_LSB: usize = 0;
/// CC descriptor: address type, 2 bits.
pub const CC_AT_LSB: usize = 8;
/// CC descriptor: byte count, 13 bits.
pub const CC_BYTE_COUNT_LSB: usize = 16;
/// CC descriptor: Dword count, 11 bits (as RC's).
pub const CC_DWORDS_LSB: usize = RC_DWORDS_LSB;
/// CC descriptor: completion status, 3 bits (as RC's).
pub const CC_STATUS_LSB: usize = RC_STATUS_LSB;
/// CC descriptor: requester ID, 16 bits.
pub const CC_REQ_ID_LSB: usize = 48;
/// CC descriptor: tag, 8 bits (as RC's).
pub const CC_TAG_LSB: usize = RC_TAG_LSB;
/// CC descriptor: completer function, 8 bits.
pub const CC_FUNC_LSB: usize = 72;
/// CC descriptor: traffic class, 3 bits.
pub const CC_TC_LSB: usize = 89;
/// CC descriptor: attributes, 3 bits.
pub const CC_ATTR_LSB: usize = 92;
/// Completion status: Unsupported Request.
pub const CPL_UR: u8 = 1;

/// Reads `n` bits at `lsb` of a little-endian byte string.
pub fn get_field(b: &[u8], lsb: usize, n: usize) -> u64 {
    (0..n).map(|i| (((b[(lsb + i) / 8] >> ((lsb + i) % 8)) & 1) as u64) << i).sum()
}

/// Writes the low `n` bits of `v` at `lsb` of a little-endian byte string.
pub fn set_field(b: &mut [u8], lsb: usize, n: usize, v: u64) {
    for i in 0..n {
        let (byte, bit) = ((lsb + i) / 8, (lsb + i) % 8);
        b[byte] = (b[byte] & !(1 << bit)) | ((((v >> i) & 1) as u8) << bit);
    }
}

/// A requester request descriptor (RQ), fields as PG213 names them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RqDesc {
    /// Bus address of the first Dword (bits 1:0 are the address type).
    pub addr: u64,
    /// Dword count (1..=1024).
    pub dwords: u16,
    /// Request type ([`REQ_MEM_RD`], [`REQ_MEM_WR`], ...).
    pub req_type: u8,
    /// Poisoned.
    pub poison: bool,
    /// Tag.
    pub tag: u8,
    /// Requester ID enable.
    pub req_id_en: bool,
    /// Traffic class.
    pub tc: u8,
    /// Attributes (ID ordering, relaxed ordering, no snoop).
    pub attr: u8,
    /// Force ECRC.
    pub ecrc: bool,
}

impl RqDesc {
    /// Decodes the first 16 bytes of a beat.
    pub fn decode(b: &[u8]) -> RqDesc {
        RqDesc {
            addr: get_field(b, RQ_ADDR_LSB, 64),
            dwords: get_field(b, RQ_DWORDS_LSB, 11) as u16,
            req_type: get_field(b, RQ_TYPE_LSB, 4) as u8,
            poison: get_field(b, RQ_POISON_BIT, 1) != 0,
            tag: get_field(b, RQ_TAG_LSB, 8) as u8,
            req_id_en: get_field(b, RQ_REQ_ID_EN_BIT, 1) != 0,
            tc: get_field(b, RQ_TC_LSB, 3) as u8,
            attr: get_field(b, RQ_ATTR_LSB, 3) as u8,
            ecrc: get_field(b, RQ_ECRC_BIT, 1) != 0,
        }
    }
}

/// The Dword count and first/last Dword byte enables of a request for
/// `len` (>= 1) bytes at `addr`, as PCIe forms them (last is 0 for one Dword).
pub fn dword_span(addr: u64, len: u64) -> (u16, u8, u8) {
    let off = (addr & 3) as u32;
    let dwords = ((off as u64 + len).div_ceil(4)) as u16;
    let end = ((off as u64 + len) & 3) as u32;
    let last = if end == 0 { 0xF } else { (1u8 << end) - 1 };
    let first = (0xFu8 << off) & 0xF;
    if dwords == 1 {
        (1, first & last, 0)
    } else {
        (dwords, first, last)
    }
}

/// The bytes a request covers, from its Dword address, Dword count and
/// first/last byte enables: the inverse of [`dword_span`].
pub fn byte_range(dword_addr: u64, dwords: u16, first_be: u8, last_be: u8) -> (u64, u64) {
    let skip = first_be.trailing_zeros() as u64;
    let top = if dwords == 1 { first_be } else { last_be };
    let drop = top.leading_zeros() as u64 - 4;
    (dword_addr + skip, 4 * dwords as u64 - skip - drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip_at_any_position() {
        let mut b = [0u8; 16];
        set_field(&mut b, RQ_TAG_LSB, 8, 0xA5);
        set_field(&mut b, RQ_DWORDS_LSB, 11, 1024);
        set_field(&mut b, RQ_TYPE_LSB, 4, REQ_MEM_WR as u64);
        let d = RqDesc::decode(&b);
        assert_eq!((d.tag, d.dwords, d.req_type), (0xA5, 1024, REQ_MEM_WR));
        assert_eq!(get_field(&b, 96, 8), 0xA5);
    }

    #[test]
    fn dword_span_matches_pcie_byte_enable_rules() {
        assert_eq!(dword_span(0x1000, 1), (1, 0b0001, 0));
        assert_eq!(dword_span(0x1003, 1), (1, 0b1000, 0));
        assert_eq!(dword_span(0x1001, 2), (1, 0b0110, 0));
        assert_eq!(dword_span(0x1000, 4), (1, 0b1111, 0));
        assert_eq!(dword_span(0x1003, 2), (2, 0b1000, 0b0001));
        assert_eq!(dword_span(0x1000, 8), (2, 0b1111, 0b1111));
        assert_eq!(dword_span(0x1002, 4096 - 2), (1024, 0b1100, 0b1111));
        assert_eq!(dword_span(0x1001, 9), (3, 0b1110, 0b0011));
    }

    #[test]
    fn byte_range_inverts_dword_span_at_every_offset_and_length() {
        for off in 0..8u64 {
            for len in 1..=300u64 {
                let (dw, f, l) = dword_span(0x2000 + off, len);
                assert_eq!(
                    byte_range((0x2000 + off) & !3, dw, f, l),
                    (0x2000 + off, len),
                    "offset {off}, length {len}"
                );
            }
        }
    }
}
