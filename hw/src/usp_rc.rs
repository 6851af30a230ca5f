//! The requester-completion adapter of a board top: the UltraScale+ PCIe
//! block's `m_axis_rc` (512-bit AXI4-Stream, Dword-aligned mode, straddle
//! off) to the core's completion port (`pcie_rc_*`: address-aligned beats,
//! one 64-byte host block each, no ready).
//!
//! A completion TLP comes as one AXI4-Stream packet: a 3-DW descriptor in
//! lanes 0..12 of its first beat, then its payload from lane 12, Dword by
//! Dword from the Dword that holds its first byte. The core wants the byte
//! at address A in lane A mod 64 of a beat that covers A's 64-byte block, and
//! the low 12 address bits of the beat's first byte. So every output beat is
//! a window of two consecutive input beats, rotated by a fixed amount per
//! completion (`12 - (lower address mod 64, rounded down to a Dword)`, mod
//! 64). When that is negative the first block is out with the first beat;
//! otherwise a block needs the beat after it. Either way a completion may
//! need one block more than it has beats: that block leaves in a flush cycle
//! with `tready` low, the only time the adapter holds the PCIe block back
//! (PG213 lets the user "prolong a beat at any time"). Lanes of an output
//! beat outside the completion are not zeroed: the core's read front end
//! ignores them (no block is shared by two completions).
//!
//! The descriptor fields used (PG213, requester completion descriptor):
//! lower address `[11:0]`, error code `[15:12]`, Request Completed `[30]`,
//! Dword count `[42:32]`, completion status `[45:43]`, poisoned `[46]`, tag
//! `[71:64]`. A completion with an error code, a status other than
//! successful or poisoned data gives no beat and a `cpl_err` pulse, as does
//! the rest of one that `discontinue` (`tuser[96]`) cuts short (blocks
//! already passed on are not recalled). The core does not recover such
//! reads yet: the read that owns the tag then never finishes.

use crate::num::Num;
use crate::reg::Reg;
use rnic_spec::usp;
use rust_hdl::prelude::*;

// The descriptor and tuser positions written below as literals (rust-hdl slices need them).
const _: () = assert!(usp::RC_LOWER_ADDR_LSB == 0 && usp::RC_ERR_LSB == 12 && usp::RC_REQ_DONE_BIT == 30);
const _: () = assert!(usp::RC_DWORDS_LSB == 32 && usp::RC_STATUS_LSB == 43 && usp::RC_POISON_BIT == 46);
const _: () = assert!(usp::RC_TAG_LSB == 64 && usp::RC_USER_DISCONTINUE_BIT == 96 && usp::RC_DESC_BYTES == 12);

/// The RC adapter.
#[derive(LogicBlock, Default)]
pub struct UspRc {
    /// Core clock (the PCIe block's 250 MHz user clock).
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: every register to its power-on value.
    pub reset: Signal<In, Bit>,
    /// `m_axis_rc_tdata`.
    pub rc_tdata: Signal<In, Bits<512>>,
    /// `m_axis_rc_tuser` (161 bits; only `discontinue`, bit 96, is read).
    pub rc_tuser: Signal<In, Bits<161>>,
    /// `m_axis_rc_tlast`.
    pub rc_tlast: Signal<In, Bit>,
    /// `m_axis_rc_tvalid`.
    pub rc_tvalid: Signal<In, Bit>,
    /// `m_axis_rc_tready`: low only in a flush cycle.
    pub rc_tready: Signal<Out, Bit>,
    /// To the core: a completion beat.
    pub valid: Signal<Out, Bit>,
    /// To the core: data, the byte at address A in lane A mod 64.
    pub data: Signal<Out, Bits<512>>,
    /// To the core: the completion's tag.
    pub tag: Signal<Out, Bits<8>>,
    /// To the core: low 12 bits of the address of the beat's first byte.
    pub addr: Signal<Out, Bits<12>>,
    /// To the core: the request's last beat (Request Completed, last block).
    pub done: Signal<Out, Bit>,
    /// Pulse: a completion was dropped (error code, status, poison or discontinue).
    pub cpl_err: Signal<Out, Bit>,
    /// Inside a completion (its first beat taken, not its last).
    mid: Reg<Bit>,
    /// The completion is being dropped.
    drop: Reg<Bit>,
    /// A block is left after the last beat: send it with `tready` low.
    flush: Reg<Bit>,
    /// The previous beat taken.
    prev: Reg<Bits<512>>,
    /// The completion's rotation in bytes (a multiple of 4).
    rot: Reg<Bits<6>>,
    /// Blocks of the completion not yet sent.
    left: Reg<Bits<7>>,
    /// The next block's number in its 4 KiB page (address bits 11:6).
    blk: Reg<Bits<6>>,
    /// The next block is the completion's first: its address is the lower address.
    first: Reg<Bit>,
    lower: Reg<Bits<12>>,
    ctag: Reg<Bits<8>>,
    /// Request Completed.
    reqc: Reg<Bit>,
    out_valid: Reg<Bit>,
    out_data: Reg<Bits<512>>,
    out_tag: Reg<Bits<8>>,
    out_addr: Reg<Bits<12>>,
    out_done: Reg<Bit>,
    out_err: Reg<Bit>,
    take: Signal<Local, Bit>,
    /// The window the block comes from: {newer beat, older beat}.
    win: Signal<Local, Bits<1024>>,
    shifted: Signal<Local, Bits<1024>>,
    shift: Signal<Local, Bits<11>>,
    emit: Signal<Local, Bit>,
    /// Descriptor fields of a first beat.
    d_lower: Signal<Local, Bits<12>>,
    d_dwords: Signal<Local, Bits<11>>,
    d_bad: Signal<Local, Bit>,
    d_err: Signal<Local, Bits<4>>,
    d_status: Signal<Local, Bits<3>>,
    /// The completion in hand is dropped (its first beat's verdict, or the one kept).
    dropping: Signal<Local, Bit>,
    /// Lanes of the descriptor: where the payload starts in a first beat.
    desc_bytes: Num<12, 7>,
    /// The first beat's Dword offset in its block, in bytes (0..=60).
    d_off: Signal<Local, Bits<7>>,
    /// Blocks the completion touches: (off + 4 * dwords + 63) / 64.
    d_span: Signal<Local, Bits<14>>,
    d_rot: Signal<Local, Bits<6>>,
    /// The first block leaves with the first beat (the rotation wraps: off > 12).
    d_early: Signal<Local, Bit>,
    n_left: Signal<Local, Bits<7>>,
}

impl Logic for UspRc {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, mid, drop, flush, prev, rot, left, blk, first, lower, ctag, reqc, out_valid, out_data,
            out_tag, out_addr, out_done, out_err
        );
        self.mid.reset.next = self.reset.val();
        self.drop.reset.next = self.reset.val();
        self.flush.reset.next = self.reset.val();
        self.prev.reset.next = self.reset.val();
        self.rot.reset.next = self.reset.val();
        self.left.reset.next = self.reset.val();
        self.blk.reset.next = self.reset.val();
        self.first.reset.next = self.reset.val();
        self.lower.reset.next = self.reset.val();
        self.ctag.reset.next = self.reset.val();
        self.reqc.reset.next = self.reset.val();
        self.out_valid.reset.next = self.reset.val();
        self.out_data.reset.next = self.reset.val();
        self.out_tag.reset.next = self.reset.val();
        self.out_addr.reset.next = self.reset.val();
        self.out_done.reset.next = self.reset.val();
        self.out_err.reset.next = self.reset.val();
        self.valid.next = self.out_valid.q.val();
        self.data.next = self.out_data.q.val();
        self.tag.next = self.out_tag.q.val();
        self.addr.next = self.out_addr.q.val();
        self.done.next = self.out_done.q.val();
        self.cpl_err.next = self.out_err.q.val();
        self.rc_tready.next = !self.flush.q.val();
        self.take.next = self.rc_tvalid.val() & !self.flush.q.val();
        // The descriptor, read from every beat but used on a first one.
        self.d_lower.next = self.rc_tdata.val().get_bits::<12>(0);
        self.d_dwords.next = self.rc_tdata.val().get_bits::<11>(32);
        self.d_err.next = self.rc_tdata.val().get_bits::<4>(12);
        self.d_status.next = self.rc_tdata.val().get_bits::<3>(43);
        self.d_bad.next = self.d_err.val().any()
            | self.d_status.val().any()
            | self.rc_tdata.val().get_bit(46)
            | self.rc_tuser.val().get_bit(96);
        self.d_off.next = bit_cast::<7, 4>(self.d_lower.val().get_bits::<4>(2)) << 2;
        self.d_span.next =
            (bit_cast::<14, 7>(self.d_off.val()) + (bit_cast::<14, 11>(self.d_dwords.val()) << 2) + 63) >> 6;
        self.d_rot.next = bit_cast::<6, 7>(self.desc_bytes.val() - self.d_off.val());
        self.d_early.next = self.d_off.val() > self.desc_bytes.val();
        self.dropping.next = self.drop.q.val();
        if self.take.val() & !self.mid.q.val() {
            self.dropping.next = self.d_bad.val();
        }
        if self.take.val() & self.mid.q.val() & self.rc_tuser.val().get_bit(96) {
            self.dropping.next = true;
        }
        // The block out this cycle: from the beat taken and the one before,
        // or from the last beat alone in a flush.
        self.win.next = (bit_cast::<1024, 512>(self.rc_tdata.val()) << 512) | bit_cast::<1024, 512>(self.prev.q.val());
        if self.flush.q.val() {
            self.win.next = bit_cast::<1024, 512>(self.prev.q.val());
        }
        self.shift.next = bit_cast::<11, 6>(self.rot.q.val()) << 3;
        if self.take.val() & !self.mid.q.val() {
            self.shift.next = bit_cast::<11, 6>(self.d_rot.val()) << 3;
        }
        self.shifted.next = self.win.val() >> self.shift.val();
        self.emit.next = false;
        self.n_left.next = self.left.q.val();
        self.out_valid.d.next = false;
        self.out_done.d.next = false;
        self.out_err.d.next = false;
        if self.flush.q.val() {
            self.emit.next = true;
            self.flush.d.next = false;
        } else if self.take.val() {
            self.prev.d.next = self.rc_tdata.val();
            self.mid.d.next = !self.rc_tlast.val();
            self.drop.d.next = self.dropping.val();
            self.out_err.d.next = self.dropping.val() & !self.drop.q.val();
            if !self.mid.q.val() {
                // A first beat: take the descriptor.
                self.out_err.d.next = self.d_bad.val();
                self.rot.d.next = self.d_rot.val();
                self.n_left.next = bit_cast::<7, 14>(self.d_span.val());
                self.blk.d.next = self.d_lower.val().get_bits::<6>(6);
                self.first.d.next = true;
                self.lower.d.next = self.d_lower.val();
                self.ctag.d.next = self.rc_tdata.val().get_bits::<8>(64);
                self.reqc.d.next = self.rc_tdata.val().get_bit(30);
                self.emit.next = self.d_early.val() & !self.d_bad.val();
            } else {
                self.emit.next = !self.dropping.val();
            }
        }
        if self.emit.val() & (self.n_left.val() != 0) {
            self.out_valid.d.next = true;
            self.out_data.d.next = self.shifted.val().get_bits::<512>(0);
            self.out_tag.d.next = self.ctag.q.val();
            self.out_addr.d.next = bit_cast::<12, 6>(self.blk.q.val()) << 6;
            if self.first.q.val() {
                self.out_addr.d.next = self.lower.q.val();
            }
            self.out_done.d.next = self.reqc.q.val() & (self.n_left.val() == 1);
            self.blk.d.next = self.blk.q.val() + 1;
            self.first.d.next = false;
            if self.take.val() & !self.mid.q.val() {
                // The first block with the first beat: the descriptor's fields, not last cycle's.
                self.out_tag.d.next = self.rc_tdata.val().get_bits::<8>(64);
                self.out_addr.d.next = self.d_lower.val();
                self.out_done.d.next = self.rc_tdata.val().get_bit(30) & (self.n_left.val() == 1);
                self.blk.d.next = self.d_lower.val().get_bits::<6>(6) + 1;
            }
            self.n_left.next = self.n_left.val() - 1;
        }
        self.left.d.next = self.n_left.val();
        // A block left after the last beat goes out in a flush cycle.
        if self.take.val() & self.rc_tlast.val() & (self.n_left.val() != 0) & !self.dropping.val() {
            self.flush.d.next = true;
        }
    }
}
