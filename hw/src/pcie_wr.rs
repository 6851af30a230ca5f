//! PCIe DMA front end, write side: turns the core's DMA writes (1..=64
//! bytes from lane 0 at any address, one beat each) into PCIe memory write
//! TLPs: contiguous bytes coalesced up to Max_Payload_Size, never across an
//! MPS-aligned address (so never across a 4 KiB page), address-aligned
//! beats with byte enables, in the order the core wrote them (PCIe's
//! posted writes stay in order).
//!
//! The PCIe side (`rqw_*`) is a memory write on the UltraScale+ PCIe
//! block's requester request interface in address-aligned mode: the
//! descriptor's fields (address, length in bytes) beside the TLP's first
//! beat, the byte at address A in lane A mod 64, `rqw_keep` the bytes of
//! the beat that belong to the TLP. The board top level will put the
//! descriptor on the stream and mux these writes with the read requests.
//!
//! Three steps, each a cycle:
//! - **Gather.** A core write is rotated from its source lanes into its
//!   64-byte host block (and the next one, when it spills) and merged into the block being
//!   gathered while it continues the previous write's bytes. A block goes
//!   on when its last lane is written, when a write that does not continue
//!   it arrives (that write waits a cycle), or after `IDLE_FLUSH` cycles
//!   without a write.
//! - **Packetize.** Blocks join the open TLP while their first byte
//!   follows its last and the TLP has not reached an MPS-aligned address or
//!   a block that ends short of its last lane; otherwise the TLP is closed
//!   (its descriptor queued) and the block opens the next one. An open TLP
//!   is also closed after `IDLE_FLUSH` quiet cycles.
//! - **Send.** A closed TLP's blocks are sent with its descriptor on the
//!   first beat.
//!
//! A core write's bytes sit at lanes `wr_lane..wr_lane + wr_len` of its
//! beat (a scatter list's piece starts mid-beat; CQEs start at lane 0);
//! the lane plus the length must not pass 64. Core writes longer than 64
//! bytes are taken as 64 (the core's width allows up to 127; it never
//! writes more than 64).

use crate::fifo::Fifo;
use crate::mask::{ByteRotUp, ByteSelect, LaneWindow};
use crate::num::Num;
use crate::reg::Reg;
use rust_hdl::prelude::*;

/// Quiet cycles after which a partly gathered block and the open TLP go out.
const IDLE_FLUSH: u64 = 4;
/// Block FIFO: data [511:0], byte enables [575:512], core writes that end in the block [582:576].
const BLK_BITS: usize = 583;
/// log2 of the block FIFO's depth (32 blocks: four TLPs of 512 bytes).
const BLK_LOG2: usize = 5;
/// TLP descriptor FIFO: address [63:0], length [76:64].
const DESC_BITS: usize = 77;

/// The write side of the DMA front end.
#[derive(LogicBlock, Default)]
pub struct PcieWriteFront {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: every register and FIFO of the block back to its power-on state (block RAM contents are kept).
    pub reset: Signal<In, Bit>,
    /// Max_Payload_Size, PCIe's code (128 << code bytes); TLPs are coalesced
    /// up to it, at most 512 bytes (codes 2 and above).
    pub cfg_mps: Signal<In, Bits<3>>,
    /// Core: a write beat valid.
    pub wr_valid: Signal<In, Bit>,
    /// Core: taken.
    pub wr_ready: Signal<Out, Bit>,
    /// Core: bus address of the first byte.
    pub wr_addr: Signal<In, Bits<64>>,
    /// Core: data, its first byte at lane `wr_lane`.
    pub wr_data: Signal<In, Bits<512>>,
    /// Core: the lane of the first byte (lane + length at most 64).
    pub wr_lane: Signal<In, Bits<6>>,
    /// Core: bytes, 1..=64.
    pub wr_len: Signal<In, Bits<7>>,
    /// PCIe requester request: a memory write beat valid.
    pub rqw_valid: Signal<Out, Bit>,
    /// PCIe requester request: taken.
    pub rqw_ready: Signal<In, Bit>,
    /// First beat of a TLP (`rqw_addr` and `rqw_len` are its descriptor).
    pub rqw_first: Signal<Out, Bit>,
    /// Last beat of a TLP.
    pub rqw_last: Signal<Out, Bit>,
    /// The TLP's bus address.
    pub rqw_addr: Signal<Out, Bits<64>>,
    /// The TLP's length in bytes (1..=MPS).
    pub rqw_len: Signal<Out, Bits<13>>,
    /// Beat data, address-aligned.
    pub rqw_data: Signal<Out, Bits<512>>,
    /// Byte enables of the beat.
    pub rqw_keep: Signal<Out, Bits<64>>,
    /// Core writes taken so far, this cycle's included (wraps).
    pub accepted: Signal<Out, Bits<16>>,
    /// Core writes of which every byte has gone to PCIe (wraps): a register
    /// read's reply must wait until this reaches `accepted` as it was when
    /// the reply was made, or it would pass a posted write.
    pub retired: Signal<Out, Bits<16>>,
    acc: Reg<Bits<16>>,
    ret: Reg<Bits<16>>,
    c_ends: Reg<Bits<7>>,
    e_ends: Signal<Local, Bits<7>>,
    in_take: Signal<Local, Bit>,
    idle_flush: Num<IDLE_FLUSH, 4>,
    n64: Num<64, 10>,
    n512: Num<512, 10>,
    blk_room: Num<{ (1 << BLK_LOG2) - 2 }, 6>,
    // Input register: the core's beat waits here, so ready depends on registers only.
    in_v: Reg<Bit>,
    in_addr: Reg<Bits<64>>,
    in_data: Reg<Bits<512>>,
    in_len: Reg<Bits<7>>,
    /// Rotation from source lanes to address lanes: address lane less source lane, mod 64
    /// (taken with the beat, so the subtract is not in front of the shift).
    in_rl: Reg<Bits<6>>,
    /// The beat rotated to its address lanes, its bytes then kept by the byte enables of this
    /// block (lo) and of the next (hi): source lanes need no mask of their own.
    rot: ByteRotUp,
    lo_sel: ByteSelect,
    hi_sel: ByteSelect,
    n: Signal<Local, Bits<10>>,
    lo_data: Signal<Local, Bits<512>>,
    hi_data: Signal<Local, Bits<512>>,
    /// The beat's byte enables at its lanes: this block's and the next's.
    kk: LaneWindow,
    in_end: Signal<Local, Bits<64>>,
    /// lane + n (at most 127): bits 5..0 the end's lane, bit 6 the carry into the block address.
    end7: Signal<Local, Bits<7>>,
    /// The next block's address (in_addr's bits 63..6 plus one): two halves, the high one's
    /// increment picked by the low one being all ones.
    blk_lo1: Signal<Local, Bits<26>>,
    blk_hi1: Signal<Local, Bits<32>>,
    blk_next: Signal<Local, Bits<58>>,
    acc1: Signal<Local, Bits<16>>,
    eq_in: Signal<Local, Bit>,
    eq_c: Signal<Local, Bit>,
    cont: Signal<Local, Bit>,
    fills: Signal<Local, Bit>,
    spills: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
    // Gathered block: data zero outside its bytes; [c_start, c_end) its bytes.
    c_v: Reg<Bit>,
    c_start: Reg<Bits<64>>,
    c_end: Reg<Bits<64>>,
    c_data: Reg<Bits<512>>,
    c_keep: Reg<Bits<64>>,
    idle: Reg<Bits<4>>,
    quiet: Signal<Local, Bit>,
    // A block handed to the packetizer this cycle.
    e_v: Signal<Local, Bit>,
    e_start: Signal<Local, Bits<64>>,
    e_end: Signal<Local, Bits<64>>,
    e_data: Signal<Local, Bits<512>>,
    e_keep: Signal<Local, Bits<64>>,
    can_emit: Signal<Local, Bit>,
    // Open TLP.
    t_open: Reg<Bit>,
    t_full: Reg<Bit>,
    t_addr: Reg<Bits<64>>,
    t_end: Reg<Bits<64>>,
    mps_mask: Signal<Local, Bits<64>>,
    t_cont: Signal<Local, Bit>,
    close: Signal<Local, Bit>,
    t_len: Signal<Local, Bits<64>>,
    blocks: Fifo<Bits<BLK_BITS>, BLK_LOG2, { BLK_LOG2 + 1 }>,
    blk_cnt: Reg<Bits<6>>,
    descs: Fifo<Bits<DESC_BITS>, BLK_LOG2, { BLK_LOG2 + 1 }>,
    // Send.
    o_busy: Reg<Bit>,
    o_first: Reg<Bit>,
    o_addr: Reg<Bits<64>>,
    o_len: Reg<Bits<13>>,
    o_left: Reg<Bits<4>>,
    d_blocks: Signal<Local, Bits<13>>,
    send: Signal<Local, Bit>,
}

impl Logic for PcieWriteFront {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, in_v, in_addr, in_data, in_len, in_rl, c_v, c_start, c_end, c_data, c_keep, c_ends, idle,
            t_open, t_full, t_addr, t_end, blk_cnt, o_busy, o_first, o_addr, o_len, o_left, acc, ret
        );
        self.in_v.reset.next = self.reset.val();
        self.in_addr.reset.next = self.reset.val();
        self.in_data.reset.next = self.reset.val();
        self.in_len.reset.next = self.reset.val();
        self.in_rl.reset.next = self.reset.val();
        self.c_v.reset.next = self.reset.val();
        self.c_start.reset.next = self.reset.val();
        self.c_end.reset.next = self.reset.val();
        self.c_data.reset.next = self.reset.val();
        self.c_keep.reset.next = self.reset.val();
        self.c_ends.reset.next = self.reset.val();
        self.idle.reset.next = self.reset.val();
        self.t_open.reset.next = self.reset.val();
        self.t_full.reset.next = self.reset.val();
        self.t_addr.reset.next = self.reset.val();
        self.t_end.reset.next = self.reset.val();
        self.blk_cnt.reset.next = self.reset.val();
        self.o_busy.reset.next = self.reset.val();
        self.o_first.reset.next = self.reset.val();
        self.o_addr.reset.next = self.reset.val();
        self.o_len.reset.next = self.reset.val();
        self.o_left.reset.next = self.reset.val();
        self.acc.reset.next = self.reset.val();
        self.ret.reset.next = self.reset.val();
        clock!(self, clock, blocks, descs);
        self.blocks.reset.next = self.reset.val();
        self.descs.reset.next = self.reset.val();

        // Gather: the registered beat, rotated into its block (lo) and the next (hi).
        self.n.next = bit_cast::<10, 7>(self.in_len.q.val());
        if self.in_len.q.val().get_bit(6) {
            self.n.next = 64.into();
        }
        self.kk.lane.next = self.in_addr.q.val().get_bits::<6>(0);
        self.kk.n.next = self.in_len.q.val();
        // The beat rotated from its source lanes to its address lanes, beside the byte enables: the
        // bytes enabled below lane 64 stay in this block (lo), the ones that wrapped go to the next (hi).
        self.rot.data.next = self.in_data.q.val();
        self.rot.by.next = self.in_rl.q.val();
        self.lo_sel.data.next = self.rot.rotated.val();
        self.lo_sel.keep.next = self.kk.lo.val();
        self.hi_sel.data.next = self.rot.rotated.val();
        self.hi_sel.keep.next = self.kk.hi.val();
        self.lo_data.next = self.lo_sel.kept.val();
        self.hi_data.next = self.hi_sel.kept.val();
        self.end7.next = bit_cast::<7, 6>(self.in_addr.q.val().get_bits::<6>(0)) + self.n.val().get_bits::<7>(0);
        self.blk_lo1.next = self.in_addr.q.val().get_bits::<26>(6) + 1;
        self.blk_hi1.next = self.in_addr.q.val().get_bits::<32>(32);
        if self.in_addr.q.val().get_bits::<26>(6) == 0x3FF_FFFF_u64 {
            self.blk_hi1.next = self.in_addr.q.val().get_bits::<32>(32) + 1;
        }
        self.blk_next.next = (bit_cast::<58, 32>(self.blk_hi1.val()) << 26) | bit_cast::<58, 26>(self.blk_lo1.val());
        // in_addr + n: the end's lane, and the block address or the next one.
        self.in_end.next = bit_cast::<64, 58>(self.in_addr.q.val().get_bits::<58>(6)) << 6;
        if self.end7.val().get_bit(6) {
            self.in_end.next = bit_cast::<64, 58>(self.blk_next.val()) << 6;
        }
        self.in_end.next = self.in_end.val() | bit_cast::<64, 6>(self.end7.val().get_bits::<6>(0));
        self.cont.next = self.c_v.q.val() & (self.in_addr.q.val() == self.c_end.q.val());
        self.fills.next = self.end7.val().get_bit(6);
        self.spills.next = self.end7.val().get_bit(6) & (self.end7.val().get_bits::<6>(0) != 0);
        self.quiet.next = self.idle.q.val() >= self.idle_flush.val();
        self.can_emit.next = self.blk_cnt.q.val() < self.blk_room.val();

        self.e_v.next = false;
        self.e_start.next = self.c_start.q.val();
        self.e_end.next = self.c_end.q.val();
        self.e_data.next = self.c_data.q.val();
        self.e_keep.next = self.c_keep.q.val();
        self.e_ends.next = self.c_ends.q.val();
        self.take.next = false;
        if self.can_emit.val() {
            if self.in_v.q.val() {
                if self.c_v.q.val() & !self.cont.val() {
                    // The beat does not continue the gathered block: that block goes first.
                    self.e_v.next = true;
                    self.c_v.d.next = false;
                } else {
                    self.take.next = true;
                    if self.cont.val() {
                        self.e_data.next = self.c_data.q.val() | self.lo_data.val();
                        self.e_keep.next = self.c_keep.q.val() | self.kk.lo.val();
                    } else {
                        self.e_start.next = self.in_addr.q.val();
                        self.e_data.next = self.lo_data.val();
                        self.e_keep.next = self.kk.lo.val();
                    }
                    self.e_end.next = self.in_end.val();
                    if self.spills.val() {
                        self.e_end.next = bit_cast::<64, 58>(self.blk_next.val()) << 6;
                    }
                    // The block counts the core writes whose last byte it holds.
                    if !self.cont.val() {
                        self.e_ends.next = 0.into();
                    }
                    if !self.spills.val() {
                        self.e_ends.next = self.e_ends.val() + 1;
                    }
                    if self.fills.val() {
                        self.e_v.next = true;
                        self.c_v.d.next = self.spills.val();
                        self.c_start.d.next = self.e_end.val();
                        self.c_end.d.next = self.in_end.val();
                        self.c_data.d.next = self.hi_data.val();
                        self.c_keep.d.next = self.kk.hi.val();
                        self.c_ends.d.next = 0.into();
                        if self.spills.val() {
                            self.c_ends.d.next = 1.into();
                        }
                    } else {
                        self.c_ends.d.next = self.e_ends.val();
                        self.c_v.d.next = true;
                        self.c_start.d.next = self.e_start.val();
                        self.c_end.d.next = self.e_end.val();
                        self.c_data.d.next = self.e_data.val();
                        self.c_keep.d.next = self.e_keep.val();
                    }
                }
            } else if self.c_v.q.val() & self.quiet.val() {
                self.e_v.next = true;
                self.c_v.d.next = false;
            }
        }
        self.idle.d.next = 0.into();
        if !self.in_v.q.val() & !self.quiet.val() {
            self.idle.d.next = self.idle.q.val() + 1;
        }
        if !self.in_v.q.val() & self.quiet.val() {
            self.idle.d.next = self.idle.q.val();
        }
        self.wr_ready.next = !self.in_v.q.val() | self.take.val();
        self.in_take.next = self.wr_valid.val() & self.wr_ready.val();
        // The increment beside the take, picked after it.
        self.acc1.next = self.acc.q.val() + 1;
        self.accepted.next = self.acc.q.val();
        if self.in_take.val() {
            self.accepted.next = self.acc1.val();
        }
        self.acc.d.next = self.accepted.val();
        if self.take.val() {
            self.in_v.d.next = false;
        }
        if self.in_take.val() {
            self.in_v.d.next = true;
            self.in_addr.d.next = self.wr_addr.val();
            self.in_data.d.next = self.wr_data.val();
            self.in_len.d.next = self.wr_len.val();
            self.in_rl.d.next = self.wr_addr.val().get_bits::<6>(0) - self.wr_lane.val();
        }

        // Packetize: one descriptor and one block at most per cycle.
        self.mps_mask.next = 511.into();
        if self.cfg_mps.val() == 0 {
            self.mps_mask.next = 127.into();
        }
        if self.cfg_mps.val() == 1 {
            self.mps_mask.next = 255.into();
        }
        // A TLP that reached an MPS-aligned address is full, so none crosses one.
        // e_start is in_addr exactly when a beat is taken into an empty gather (no block to continue):
        // both compares beside each other, that choice after them.
        self.eq_in.next = self.in_addr.q.val() == self.t_end.q.val();
        self.eq_c.next = self.c_start.q.val() == self.t_end.q.val();
        self.t_cont.next = self.t_open.q.val() & !self.t_full.q.val() & self.eq_c.val();
        if self.can_emit.val() & self.in_v.q.val() & !self.c_v.q.val() {
            self.t_cont.next = self.t_open.q.val() & !self.t_full.q.val() & self.eq_in.val();
        }
        self.close.next = self.t_open.q.val()
            & ((self.e_v.val() & !self.t_cont.val()) | (!self.e_v.val() & (self.t_full.q.val() | self.quiet.val())));
        self.t_len.next = self.t_end.q.val() - self.t_addr.q.val();
        self.descs.write.next = self.close.val();
        self.descs.data_in.next = bit_cast::<DESC_BITS, 64>(self.t_addr.q.val())
            | (bit_cast::<DESC_BITS, 13>(self.t_len.val().get_bits::<13>(0)) << 64);
        if self.close.val() {
            self.t_open.d.next = false;
        }
        self.blocks.write.next = self.e_v.val();
        self.blocks.data_in.next = bit_cast::<BLK_BITS, 512>(self.e_data.val())
            | (bit_cast::<BLK_BITS, 64>(self.e_keep.val()) << 512)
            | (bit_cast::<BLK_BITS, 7>(self.e_ends.val()) << 576);
        if self.e_v.val() {
            self.t_open.d.next = true;
            self.t_end.d.next = self.e_end.val();
            if !self.t_cont.val() {
                self.t_addr.d.next = self.e_start.val();
            }
            // Nothing can follow a block that ends short of its last lane or at an MPS-aligned address.
            self.t_full.d.next =
                (self.e_end.val().get_bits::<6>(0) != 0) | ((self.e_end.val() & self.mps_mask.val()) == 0);
        }

        // Send a closed TLP's blocks, its descriptor beside the first.
        self.d_blocks.next = (bit_cast::<13, 6>(self.descs.data_out.val().get_bits::<6>(0))
            + self.descs.data_out.val().get_bits::<13>(64)
            + 63)
            >> 6;
        self.rqw_valid.next = self.o_busy.q.val() & !self.blocks.empty.val();
        self.send.next = self.rqw_valid.val() & self.rqw_ready.val();
        self.descs.read.next = false;
        if self.send.val() {
            self.o_first.d.next = false;
            self.o_left.d.next = self.o_left.q.val() - 1;
            if self.o_left.q.val() == 1 {
                self.o_busy.d.next = false;
            }
        }
        // The next TLP starts in the cycle the last beat of this one goes.
        if (!self.o_busy.q.val() | (self.send.val() & (self.o_left.q.val() == 1))) & !self.descs.empty.val() {
            self.descs.read.next = true;
            self.o_busy.d.next = true;
            self.o_first.d.next = true;
            self.o_addr.d.next = self.descs.data_out.val().get_bits::<64>(0);
            self.o_len.d.next = self.descs.data_out.val().get_bits::<13>(64);
            self.o_left.d.next = self.d_blocks.val().get_bits::<4>(0);
        }
        self.rqw_first.next = self.o_first.q.val();
        self.rqw_last.next = self.o_left.q.val() == 1;
        self.rqw_addr.next = self.o_addr.q.val();
        self.rqw_len.next = self.o_len.q.val();
        self.rqw_data.next = self.blocks.data_out.val().get_bits::<512>(0);
        self.rqw_keep.next = self.blocks.data_out.val().get_bits::<64>(512);
        self.blocks.read.next = self.send.val();
        if self.send.val() {
            self.ret.d.next = self.ret.q.val() + bit_cast::<16, 7>(self.blocks.data_out.val().get_bits::<7>(576));
        }
        self.retired.next = self.ret.q.val();
        self.blk_cnt.d.next = self.blk_cnt.q.val();
        if self.e_v.val() & !self.send.val() {
            self.blk_cnt.d.next = self.blk_cnt.q.val() + 1;
        }
        if !self.e_v.val() & self.send.val() {
            self.blk_cnt.d.next = self.blk_cnt.q.val() - 1;
        }
    }
}
