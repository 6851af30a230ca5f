//! PCIe DMA front end, read side: turns the core's DMA reads (1..=4096
//! bytes at any address, completions wanted in request order and packed
//! from lane 0) into PCIe memory read requests and puts their completions,
//! which real PCIe returns out of order across tags and split at the read
//! completion boundary, back in order.
//!
//! The PCIe side follows the Requester interfaces of the UltraScale+ PCIe
//! integrated block: `rq_*` carries one memory read request (no longer than
//! Max_Read_Request_Size and within a 4 KiB page), `rc_*` one beat of a
//! completion in address-aligned mode (the byte at address A sits in lane
//! A mod 64; lanes outside the completion hold anything). The completion
//! descriptor's fields a beat needs travel beside it: the tag, the low 12
//! address bits of the beat's first byte (`rc_addr`, the descriptor's
//! Lower Address advanced per beat) and Request Completed on the beat that
//! ends the request (`rc_done`). `rc` has no ready: an endpoint must take
//! every completion, so space is reserved before a request is issued.
//!
//! Reorder buffer: a ring of 64-byte blocks in block RAM. A core request
//! is accepted only when the ring has room for the most host blocks a
//! request can touch (65), and takes the blocks it does touch;
//! its splits (cut at MRRS-aligned addresses, which are also 4 KiB-safe)
//! each take a tag whose table entry says where its first block lives in
//! the ring, so a completion beat goes straight to its block. Completions
//! split at RCB-aligned addresses, so no block is shared by two of them.
//! The output starts a core request once all its blocks are filled (so its
//! beats then flow one a cycle: the TX builder never waits mid-frame for a
//! payload beat, which a MAC would take as an underrun); a frontier pointer
//! walks the filled blocks in ring order, one a cycle, to tell. It reads the
//! request's blocks in order and shifts by the request address's offset in
//! its first block (two blocks make one output beat), zeroing the bytes
//! past the request's length.
//!
//! Not handled: completions with an error status (UR/CA; the simulator's
//! IOMMU check reports those accesses instead) and poisoned data.

use crate::fifo::Fifo;
use crate::num::Num;
use crate::reg::Reg;
use rnic_spec::params::{DMA_RD_MAX_LEN, DMA_RD_RING_LOG2, PCIE_TAG_BITS};
use rust_hdl::prelude::*;

/// Ring blocks.
const RING: u64 = 1 << DMA_RD_RING_LOG2;
/// Most ring blocks one request touches (4096 bytes at an unaligned address).
const MAX_BLOCKS: u64 = DMA_RD_MAX_LEN as u64 / 64 + 1;
/// Per-request record, in request order: ring base [8:0], ring blocks
/// [15:9], length [28:16], offset in the first block [34:29], core tag
/// [42:35], the base's wrap bit [43].
const META_BITS: usize = 44;
/// Tag table entry: ring index of the split's first block [8:0], its
/// block number in the 4 KiB page [14:9].
const TAGT_BITS: usize = 15;
/// Output FIFO entry: data [511:0], core tag [519:512], last [520].
const OUT_BITS: usize = 521;
/// Output FIFO depth (a ring read takes one cycle, so a few entries keep
/// one beat a cycle going under back-pressure).
const OUT_DEPTH: u64 = 4;

const _: () = assert!(DMA_RD_RING_LOG2 == 9 && PCIE_TAG_BITS == 8);

/// The read side of the DMA front end.
#[derive(LogicBlock, Default)]
pub struct PcieReadFront {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: every register and FIFO of the block back to its power-on state (block RAM contents are kept).
    pub reset: Signal<In, Bit>,
    /// Max_Read_Request_Size, PCIe's code (128 << code bytes; 5 and above: 4096).
    pub cfg_mrrs: Signal<In, Bits<3>>,
    /// Core: read request valid.
    pub req_valid: Signal<In, Bit>,
    /// Core: request taken.
    pub req_ready: Signal<Out, Bit>,
    /// Core: bus address.
    pub req_addr: Signal<In, Bits<64>>,
    /// Core: length in bytes, 1..=4096.
    pub req_len: Signal<In, Bits<16>>,
    /// Core: tag, returned with every completion beat.
    pub req_tag: Signal<In, Bits<8>>,
    /// Core: completion beat valid (requests complete in request order).
    pub cpl_valid: Signal<Out, Bit>,
    /// Core: completion beat taken.
    pub cpl_ready: Signal<In, Bit>,
    /// Core: data packed from lane 0, zero past the request's length.
    pub cpl_data: Signal<Out, Bits<512>>,
    /// Core: the request's tag.
    pub cpl_tag: Signal<Out, Bits<8>>,
    /// Core: last beat of the request.
    pub cpl_last: Signal<Out, Bit>,
    /// PCIe requester request: a memory read valid.
    pub rq_valid: Signal<Out, Bit>,
    /// PCIe requester request: taken.
    pub rq_ready: Signal<In, Bit>,
    /// PCIe requester request: bus address.
    pub rq_addr: Signal<Out, Bits<64>>,
    /// PCIe requester request: length in bytes (at most MRRS, within a 4 KiB page).
    pub rq_len: Signal<Out, Bits<13>>,
    /// PCIe requester request: tag.
    pub rq_tag: Signal<Out, Bits<8>>,
    /// PCIe requester completion: a beat valid (no ready: always taken).
    pub rc_valid: Signal<In, Bit>,
    /// PCIe requester completion: data, address-aligned.
    pub rc_data: Signal<In, Bits<512>>,
    /// PCIe requester completion: the request's tag.
    pub rc_tag: Signal<In, Bits<8>>,
    /// PCIe requester completion: low 12 bits of the address of the beat's first byte.
    pub rc_addr: Signal<In, Bits<12>>,
    /// PCIe requester completion: this beat completes the request (its tag is free again).
    pub rc_done: Signal<In, Bit>,
    out_depth: Num<OUT_DEPTH, 3>,
    n64: Num<64, 10>,
    zero: Num<0, 512>,
    // Accept.
    req_nr: Signal<Local, Bits<13>>,
    /// Ring blocks booked and not yet released (the ring's tail less its head, kept as a count so the room check is a
    /// compare of a register against a constant, off the requesters' decision paths).
    used_q: Reg<Bits<10>>,
    /// Most blocks booked with room left for one more request.
    room_max: Num<{ RING - MAX_BLOCKS }, 10>,
    /// Blocks booked this cycle (the splitter's first cycle) and released (a request's last beat out).
    booked: Signal<Local, Bits<10>>,
    released: Signal<Local, Bits<10>>,
    take: Signal<Local, Bit>,
    tail: Reg<Bits<10>>,
    // Never full: a record holds at least one ring block until it is popped.
    meta: Fifo<Bits<META_BITS>, 9, 10>,
    // Split.
    sp_busy: Reg<Bit>,
    sp_addr: Reg<Bits<64>>,
    sp_rem: Reg<Bits<13>>,
    sp_ring: Reg<Bits<9>>,
    /// The splitter's first cycle with a request: its record and ring blocks are taken then, from the
    /// registered request (the requesters' valid and length stay off this block's adders).
    sp_new: Reg<Bit>,
    /// The request's core tag, for its record.
    sp_tag: Reg<Bits<8>>,
    /// The MRRS decoded a cycle ahead of its use: `cfg_mrrs` as registered, and bits 11:7 of MRRS - 1
    /// (reset means 128 bytes, legal under any MRRS); no request goes out while `cfg_mrrs` differs from it.
    mrrs_cfg: Reg<Bits<3>>,
    mrrs_hi: Reg<Bits<5>>,
    mrrs_mask: Signal<Local, Bits<12>>,
    /// The split address's low bits plus the chunk (at most 4096: a chunk never crosses a 4 KiB boundary), and its upper bits plus one.
    sp_lo: Signal<Local, Bits<13>>,
    sp_hi1: Signal<Local, Bits<52>>,
    /// Bytes to the next MRRS boundary less one, and the bytes themselves.
    gap: Signal<Local, Bits<12>>,
    to_bound: Signal<Local, Bits<13>>,
    /// The split ends at the MRRS boundary (the chunk is `to_bound`), not at the request's end (the chunk is `sp_rem`).
    at_bound: Signal<Local, Bit>,
    /// `at_bound` as a 13-bit and a 9-bit mask: an AND-OR pick of results summed side by side for either chunk,
    /// which synthesis cannot fold back into one sum after the chunk's compare as it does with a mux of sums.
    m_bound: Signal<Local, Bits<13>>,
    m_bound9: Signal<Local, Bits<9>>,
    chunk: Signal<Local, Bits<13>>,
    /// `sp_lo` and `sp_ring`'s next value for a chunk to the boundary and for the rest of the request.
    sp_lo_b: Signal<Local, Bits<13>>,
    sp_lo_r: Signal<Local, Bits<13>>,
    sp_ring_b: Signal<Local, Bits<9>>,
    sp_ring_r: Signal<Local, Bits<9>>,
    /// The split address's offset in its block plus the rest of the request.
    sp_end_r: Signal<Local, Bits<13>>,
    fire: Signal<Local, Bit>,
    // Tags: 0..=255 fresh after reset, then the ones completions give back.
    fresh: Reg<Bits<9>>,
    free_tags: Fifo<Bits<8>, 8, 9>,
    tag_ok: Signal<Local, Bit>,
    tag: Signal<Local, Bits<8>>,
    tags: RAM<Bits<TAGT_BITS>, 8>,
    // Completion placement.
    r1_v: Reg<Bit>,
    r1_data: Reg<Bits<512>>,
    r1_blk: Reg<Bits<6>>,
    widx: Signal<Local, Bits<9>>,
    ring: RAM<Bits<512>, 9>,
    filled: Reg<Bits<512>>,
    filled_next: Signal<Local, Bits<512>>,
    // Output.
    o_busy: Reg<Bit>,
    o_first: Reg<Bit>,
    o_tag: Reg<Bits<8>>,
    o_s: Reg<Bits<6>>,
    o_len: Reg<Bits<13>>,
    o_nr: Reg<Bits<7>>,
    o_nr0: Reg<Bits<7>>,
    o_rd: Reg<Bits<9>>,
    o_base: Reg<Bits<10>>,
    scan: Reg<Bits<10>>,
    ahead: Signal<Local, Bits<10>>,
    whole: Signal<Local, Bit>,
    ring10: Num<RING, 10>,
    o_cnt: Reg<Bits<3>>,
    step: Signal<Local, Bit>,
    b_v: Reg<Bit>,
    b_emit: Reg<Bit>,
    b_zero: Reg<Bit>,
    b_s: Reg<Bits<6>>,
    b_nb: Reg<Bits<7>>,
    b_last: Reg<Bit>,
    b_tag: Reg<Bits<8>>,
    prev: Reg<Bits<512>>,
    cur: Signal<Local, Bits<512>>,
    joined: Signal<Local, Bits<512>>,
    mask: Signal<Local, Bits<512>>,
    out: Fifo<Bits<OUT_BITS>, 2, 3>,
}

impl Logic for PcieReadFront {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, tail, sp_busy, sp_addr, sp_rem, sp_ring, sp_new, sp_tag, used_q, fresh, r1_v, r1_data, r1_blk,
            filled, o_busy, o_first, o_tag, o_s, o_len, o_nr, o_nr0, o_rd, o_base, scan, o_cnt, b_v, b_emit, b_zero,
            b_s, b_nb, b_last, b_tag, prev, mrrs_cfg, mrrs_hi
        );
        self.mrrs_cfg.reset.next = self.reset.val();
        self.mrrs_hi.reset.next = self.reset.val();
        self.tail.reset.next = self.reset.val();
        self.sp_busy.reset.next = self.reset.val();
        self.sp_addr.reset.next = self.reset.val();
        self.sp_rem.reset.next = self.reset.val();
        self.sp_ring.reset.next = self.reset.val();
        self.sp_new.reset.next = self.reset.val();
        self.used_q.reset.next = self.reset.val();
        self.sp_tag.reset.next = self.reset.val();
        self.fresh.reset.next = self.reset.val();
        self.r1_v.reset.next = self.reset.val();
        self.r1_data.reset.next = self.reset.val();
        self.r1_blk.reset.next = self.reset.val();
        self.filled.reset.next = self.reset.val();
        self.o_busy.reset.next = self.reset.val();
        self.o_first.reset.next = self.reset.val();
        self.o_tag.reset.next = self.reset.val();
        self.o_s.reset.next = self.reset.val();
        self.o_len.reset.next = self.reset.val();
        self.o_nr.reset.next = self.reset.val();
        self.o_nr0.reset.next = self.reset.val();
        self.o_rd.reset.next = self.reset.val();
        self.o_base.reset.next = self.reset.val();
        self.scan.reset.next = self.reset.val();
        self.o_cnt.reset.next = self.reset.val();
        self.b_v.reset.next = self.reset.val();
        self.b_emit.reset.next = self.reset.val();
        self.b_zero.reset.next = self.reset.val();
        self.b_s.reset.next = self.reset.val();
        self.b_nb.reset.next = self.reset.val();
        self.b_last.reset.next = self.reset.val();
        self.b_tag.reset.next = self.reset.val();
        self.prev.reset.next = self.reset.val();
        clock!(self, clock, meta, free_tags, out);
        self.meta.reset.next = self.reset.val();
        self.free_tags.reset.next = self.reset.val();
        self.out.reset.next = self.reset.val();
        self.tags.read_clock.next = self.clock.val();
        self.tags.write_clock.next = self.clock.val();
        self.ring.read_clock.next = self.clock.val();
        self.ring.write_clock.next = self.clock.val();

        // Accept a core request when the splitter is free and the ring can
        // hold the most blocks a request touches (ready depends on state
        // alone: the requesters' valid and address may depend on ready).
        self.req_nr.next = (bit_cast::<13, 6>(self.sp_addr.q.val().get_bits::<6>(0)) + self.sp_rem.q.val() + 63) >> 6;
        self.req_ready.next = !self.sp_busy.q.val() & (self.used_q.q.val() <= self.room_max.val());
        self.take.next = self.req_valid.val() & self.req_ready.val();
        // The record and the ring blocks in the splitter's first cycle (no take meanwhile: the splitter is busy).
        self.meta.write.next = self.sp_new.q.val();
        self.meta.data_in.next = bit_cast::<META_BITS, 9>(self.tail.q.val().get_bits::<9>(0))
            | (bit_cast::<META_BITS, 7>(self.req_nr.val().get_bits::<7>(0)) << 9)
            | (bit_cast::<META_BITS, 13>(self.sp_rem.q.val()) << 16)
            | (bit_cast::<META_BITS, 6>(self.sp_addr.q.val().get_bits::<6>(0)) << 29)
            | (bit_cast::<META_BITS, 8>(self.sp_tag.q.val()) << 35)
            | (bit_cast::<META_BITS, 1>(self.tail.q.val().get_bits::<1>(9)) << 43);
        self.booked.next = 0.into();
        if self.sp_new.q.val() {
            self.tail.d.next = self.tail.q.val() + self.req_nr.val().get_bits::<10>(0);
            self.booked.next = self.req_nr.val().get_bits::<10>(0);
        }
        self.sp_new.d.next = self.take.val();
        if self.take.val() {
            self.sp_busy.d.next = true;
            self.sp_addr.d.next = self.req_addr.val();
            self.sp_rem.d.next = self.req_len.val().get_bits::<13>(0);
            self.sp_ring.d.next = self.tail.q.val().get_bits::<9>(0);
            self.sp_tag.d.next = self.req_tag.val();
        }

        // Split at MRRS-aligned addresses, one request a cycle while tags last.
        self.mrrs_cfg.d.next = self.cfg_mrrs.val();
        self.mrrs_hi.d.next = 0x1F.into();
        if self.cfg_mrrs.val() == 0 {
            self.mrrs_hi.d.next = 0x00.into();
        }
        if self.cfg_mrrs.val() == 1 {
            self.mrrs_hi.d.next = 0x01.into();
        }
        if self.cfg_mrrs.val() == 2 {
            self.mrrs_hi.d.next = 0x03.into();
        }
        if self.cfg_mrrs.val() == 3 {
            self.mrrs_hi.d.next = 0x07.into();
        }
        if self.cfg_mrrs.val() == 4 {
            self.mrrs_hi.d.next = 0x0F.into();
        }
        self.mrrs_mask.next = (bit_cast::<12, 5>(self.mrrs_hi.q.val()) << 7) | 0x7F;
        // MRRS - (A mod MRRS) is (!A & (MRRS - 1)) + 1.
        self.gap.next = !self.sp_addr.q.val().get_bits::<12>(0) & self.mrrs_mask.val();
        self.to_bound.next = bit_cast::<13, 12>(self.gap.val()) + 1;
        self.at_bound.next = self.to_bound.val() < self.sp_rem.q.val();
        self.m_bound.next = 0.into();
        self.m_bound9.next = 0.into();
        if self.at_bound.val() {
            self.m_bound.next = 0x1FFF.into();
            self.m_bound9.next = 0x1FF.into();
        }
        self.chunk.next = (self.to_bound.val() & self.m_bound.val()) | (self.sp_rem.q.val() & !self.m_bound.val());
        // A + to_bound is (A | (MRRS - 1)) + 1: the gap's bits are the ones A lacks below MRRS.
        self.sp_lo_b.next = bit_cast::<13, 12>(self.sp_addr.q.val().get_bits::<12>(0) | self.mrrs_mask.val()) + 1;
        self.sp_lo_r.next = bit_cast::<13, 12>(self.sp_addr.q.val().get_bits::<12>(0)) + self.sp_rem.q.val();
        self.sp_lo.next = (self.sp_lo_b.val() & self.m_bound.val()) | (self.sp_lo_r.val() & !self.m_bound.val());
        self.sp_hi1.next = self.sp_addr.q.val().get_bits::<52>(12) + 1;
        // A chunk to the boundary ends a block: it spans the gap's blocks plus one (A mod 64 + gap mod 64 is 63).
        self.sp_ring_b.next = self.sp_ring.q.val() + bit_cast::<9, 6>(self.gap.val().get_bits::<6>(6)) + 1;
        self.sp_end_r.next = bit_cast::<13, 6>(self.sp_addr.q.val().get_bits::<6>(0)) + self.sp_rem.q.val();
        self.sp_ring_r.next = self.sp_ring.q.val() + bit_cast::<9, 7>(self.sp_end_r.val().get_bits::<7>(6));
        self.tag_ok.next = !self.fresh.q.val().get_bit(8) | !self.free_tags.empty.val();
        self.tag.next = self.fresh.q.val().get_bits::<8>(0);
        if self.fresh.q.val().get_bit(8) {
            self.tag.next = self.free_tags.data_out.val();
        }
        self.rq_valid.next = self.sp_busy.q.val() & self.tag_ok.val() & (self.cfg_mrrs.val() == self.mrrs_cfg.q.val());
        self.rq_addr.next = self.sp_addr.q.val();
        self.rq_len.next = self.chunk.val();
        self.rq_tag.next = self.tag.val();
        self.fire.next = self.rq_valid.val() & self.rq_ready.val();
        self.free_tags.read.next = self.fire.val() & self.fresh.q.val().get_bit(8);
        self.tags.write_enable.next = self.fire.val();
        self.tags.write_address.next = self.tag.val();
        self.tags.write_data.next = bit_cast::<TAGT_BITS, 9>(self.sp_ring.q.val())
            | (bit_cast::<TAGT_BITS, 6>(self.sp_addr.q.val().get_bits::<6>(6)) << 9);
        if self.fire.val() {
            if !self.fresh.q.val().get_bit(8) {
                self.fresh.d.next = self.fresh.q.val() + 1;
            }
            // The upper bits step by the low bits' carry: no 64-bit carry chain after the chunk.
            self.sp_addr.d.next = (bit_cast::<64, 52>(self.sp_addr.q.val().get_bits::<52>(12)) << 12)
                | bit_cast::<64, 12>(self.sp_lo.val().get_bits::<12>(0));
            if self.sp_lo.val().get_bit(12) {
                self.sp_addr.d.next = (bit_cast::<64, 52>(self.sp_hi1.val()) << 12)
                    | bit_cast::<64, 12>(self.sp_lo.val().get_bits::<12>(0));
            }
            // To the boundary, the rest less gap + 1 (the sum with the gap's complement); else nothing is left.
            self.sp_rem.d.next =
                (self.sp_rem.q.val() + (bit_cast::<13, 12>(!self.gap.val()) | 0x1000)) & self.m_bound.val();
            self.sp_ring.d.next =
                (self.sp_ring_b.val() & self.m_bound9.val()) | (self.sp_ring_r.val() & !self.m_bound9.val());
            if !self.at_bound.val() {
                self.sp_busy.d.next = false;
            }
        }

        // Completions: look the tag up, then write the beat to its block.
        self.tags.read_address.next = self.rc_tag.val();
        self.r1_v.d.next = self.rc_valid.val();
        self.r1_data.d.next = self.rc_data.val();
        self.r1_blk.d.next = self.rc_addr.val().get_bits::<6>(6);
        self.free_tags.write.next = self.rc_valid.val() & self.rc_done.val();
        self.free_tags.data_in.next = self.rc_tag.val();
        self.widx.next = self.tags.read_data.val().get_bits::<9>(0)
            + bit_cast::<9, 6>(self.r1_blk.q.val() - self.tags.read_data.val().get_bits::<6>(9));
        self.ring.write_enable.next = self.r1_v.q.val();
        self.ring.write_address.next = self.widx.val();
        self.ring.write_data.next = self.r1_data.q.val();

        // Output, step 1: read the request's next block once it is filled
        // (past its last block, a zero block that needs no wait).
        // The frontier: blocks from the oldest up to `scan` are all filled.
        if (self.scan.q.val() != self.tail.q.val())
            & self.filled.q.val().get_bit(self.scan.q.val().get_bits::<9>(0).index())
        {
            self.scan.d.next = self.scan.q.val() + 1;
        }
        self.ahead.next = self.scan.q.val() - self.o_base.q.val();
        self.whole.next =
            (self.ahead.val() <= self.ring10.val()) & (self.ahead.val() >= bit_cast::<10, 7>(self.o_nr0.q.val()));
        // Once the first step has seen the whole read filled, every later step's block is there.
        self.step.next = self.o_busy.q.val()
            & ((self.o_first.q.val() & self.whole.val())
                | (!self.o_first.q.val() & (self.o_cnt.q.val() < self.out_depth.val())));
        self.ring.read_address.next = self.o_rd.q.val();
        self.b_v.d.next = self.step.val();
        self.b_emit.d.next = !self.o_first.q.val();
        self.b_zero.d.next = self.o_nr.q.val() == 0;
        self.b_s.d.next = self.o_s.q.val();
        self.b_tag.d.next = self.o_tag.q.val();
        self.b_last.d.next = self.o_len.q.val() <= 64;
        self.b_nb.d.next = 64.into();
        if self.o_len.q.val() <= 64 {
            self.b_nb.d.next = self.o_len.q.val().get_bits::<7>(0);
        }
        self.filled_next.next = self.filled.q.val();
        if self.r1_v.q.val() {
            self.filled_next.next = self.filled_next.val().replace_bit(self.widx.val().index(), true);
        }
        if self.step.val() & (self.o_nr.q.val() != 0) {
            self.filled_next.next = self.filled_next.val().replace_bit(self.o_rd.q.val().index(), false);
            self.o_rd.d.next = self.o_rd.q.val() + 1;
            self.o_nr.d.next = self.o_nr.q.val() - 1;
        }
        self.filled.d.next = self.filled_next.val();
        self.released.next = 0.into();
        if self.step.val() {
            if self.o_first.q.val() {
                self.o_first.d.next = false;
            } else {
                self.o_len.d.next = self.o_len.q.val() - 64;
                if self.o_len.q.val() <= 64 {
                    self.o_busy.d.next = false;
                    self.released.next = bit_cast::<10, 7>(self.o_nr0.q.val());
                }
            }
        }
        self.used_q.d.next = self.used_q.q.val() + self.booked.val() - self.released.val();
        self.meta.read.next = false;
        if !self.o_busy.q.val() & !self.meta.empty.val() {
            self.meta.read.next = true;
            self.o_busy.d.next = true;
            self.o_first.d.next = true;
            self.o_rd.d.next = self.meta.data_out.val().get_bits::<9>(0);
            self.o_base.d.next = bit_cast::<10, 9>(self.meta.data_out.val().get_bits::<9>(0))
                | (bit_cast::<10, 1>(self.meta.data_out.val().get_bits::<1>(43)) << 9);
            self.o_nr.d.next = self.meta.data_out.val().get_bits::<7>(9);
            self.o_nr0.d.next = self.meta.data_out.val().get_bits::<7>(9);
            self.o_len.d.next = self.meta.data_out.val().get_bits::<13>(16);
            self.o_s.d.next = self.meta.data_out.val().get_bits::<6>(29);
            self.o_tag.d.next = self.meta.data_out.val().get_bits::<8>(35);
        }

        // Output, step 2: output beat k is blocks k and k+1 shifted by the offset.
        self.cur.next = self.ring.read_data.val();
        if self.b_zero.q.val() {
            self.cur.next = 0.into();
        }
        self.joined.next = self.prev.q.val() >> (bit_cast::<10, 6>(self.b_s.q.val()) << 3);
        if self.b_s.q.val() != 0 {
            self.joined.next = (self.prev.q.val() >> (bit_cast::<10, 6>(self.b_s.q.val()) << 3))
                | (self.cur.val() << ((self.n64.val() - bit_cast::<10, 6>(self.b_s.q.val())) << 3));
        }
        self.mask.next = !self.zero.val() >> ((self.n64.val() - bit_cast::<10, 7>(self.b_nb.q.val())) << 3);
        if self.b_v.q.val() {
            self.prev.d.next = self.cur.val();
        }
        self.out.write.next = self.b_v.q.val() & self.b_emit.q.val();
        self.out.data_in.next = bit_cast::<OUT_BITS, 512>(self.joined.val() & self.mask.val())
            | (bit_cast::<OUT_BITS, 8>(self.b_tag.q.val()) << 512)
            | (bit_cast::<OUT_BITS, 1>(self.b_last.q.val().into()) << 520);
        self.cpl_valid.next = !self.out.empty.val();
        self.cpl_data.next = self.out.data_out.val().get_bits::<512>(0);
        self.cpl_tag.next = self.out.data_out.val().get_bits::<8>(512);
        self.cpl_last.next = self.out.data_out.val().get_bit(520);
        self.out.read.next = self.cpl_valid.val() & self.cpl_ready.val();
        // Slots are reserved when a block read that will emit is started and released when the core takes a beat.
        self.o_cnt.d.next = self.o_cnt.q.val();
        if (self.step.val() & !self.o_first.q.val()) & !self.out.read.val() {
            self.o_cnt.d.next = self.o_cnt.q.val() + 1;
        }
        if !(self.step.val() & !self.o_first.q.val()) & self.out.read.val() {
            self.o_cnt.d.next = self.o_cnt.q.val() - 1;
        }
    }
}
