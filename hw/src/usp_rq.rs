//! The requester-request adapter of a board top: the core's DMA read
//! requests (`pcie_rq_*`) and write TLPs (`pcie_wr_*`) onto the UltraScale+
//! PCIe block's `s_axis_rq` (512-bit AXI4-Stream, Dword-aligned mode,
//! straddle off; PG213's requester request descriptor).
//!
//! A request is one AXI4-Stream packet: the 16-byte descriptor in lanes
//! 0..16 of its first beat, then (for a write) the payload from lane 16,
//! Dword by Dword from the Dword that holds its first byte; `tkeep` marks
//! the Dwords of the packet, `tuser` carries the first and last Dword byte
//! enables (and `is_sop`/`is_eop`, which the block reads only with
//! straddle on). The core's write beats are address-aligned (the byte at A
//! in lane A mod 64), so each output beat is a window of two consecutive
//! input beats shifted by a fixed amount per TLP, `(A mod 64 rounded down to
//! a Dword) - 16` mod 64 bytes:
//! - **early** (the first Dword in lanes 0..16): output beat k is the top of
//!   input beat k-1 and the bottom of beat k, out with beat k; a TLP may need
//!   one beat more than it has input beats;
//! - **late** (lanes 16..64): output beat k is the top of input beat k and
//!   the bottom of beat k+1, out with beat k+1; the last output beat leaves
//!   after the last input beat unless the TLP has one beat fewer.
//!
//! A beat that is left after the last input beat leaves in a flush cycle,
//! in which no input is taken. Reads and writes alternate at TLP
//! boundaries when both wait. The output is registered (AXI4-Stream: held
//! while `tready` is low). Write TLPs carry tag 0 (posted: no completion);
//! no request sets attributes, TC, poison or ECRC.
//!
//! The core's writes are contiguous (one run of bytes from `pcie_wr_addr`,
//! `pcie_wr_len` long), so the byte enables follow from address and length
//! and `pcie_wr_keep` is not needed.

use crate::num::Num;
use crate::reg::Reg;
use rnic_spec::usp;
use rust_hdl::prelude::*;

// The descriptor and tuser positions written below as literals.
const _: () = assert!(usp::RQ_ADDR_LSB == 0 && usp::RQ_DWORDS_LSB == 64 && usp::RQ_TYPE_LSB == 75);
const _: () = assert!(usp::RQ_TAG_LSB == 96 && usp::RQ_DESC_BYTES == 16 && usp::RQ_TUSER_BITS == 137);
const _: () = assert!(usp::RQ_USER_FIRST_BE_LSB == 0 && usp::RQ_USER_LAST_BE_LSB == 8);
const _: () = assert!(usp::RQ_USER_SOP_BIT == 20 && usp::RQ_USER_EOP_BIT == 26 && usp::RQ_USER_EOP_PTR_LSB == 28);
const _: () = assert!(usp::REQ_MEM_RD == 0 && usp::REQ_MEM_WR == 1);

/// The RQ adapter.
#[derive(LogicBlock, Default)]
pub struct UspRq {
    /// Core clock (the PCIe block's 250 MHz user clock).
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: every register to its power-on value.
    pub reset: Signal<In, Bit>,
    /// From the core: a memory read request (`pcie_rq_valid`).
    pub rd_valid: Signal<In, Bit>,
    /// To the core: taken.
    pub rd_ready: Signal<Out, Bit>,
    /// Its bus address.
    pub rd_addr: Signal<In, Bits<64>>,
    /// Its length in bytes (1..=4096, inside a 4 KiB page).
    pub rd_len: Signal<In, Bits<13>>,
    /// Its tag.
    pub rd_tag: Signal<In, Bits<8>>,
    /// From the core: a write TLP beat (`pcie_wr_valid`).
    pub wr_valid: Signal<In, Bit>,
    /// To the core: taken.
    pub wr_ready: Signal<Out, Bit>,
    /// The TLP's first beat: address and length are valid.
    pub wr_first: Signal<In, Bit>,
    /// The TLP's last beat.
    pub wr_last: Signal<In, Bit>,
    /// The TLP's bus address.
    pub wr_addr: Signal<In, Bits<64>>,
    /// The TLP's length in bytes (1..=512, inside a 4 KiB page).
    pub wr_len: Signal<In, Bits<13>>,
    /// Beat data, address-aligned.
    pub wr_data: Signal<In, Bits<512>>,
    /// `s_axis_rq_tdata`.
    pub rq_tdata: Signal<Out, Bits<512>>,
    /// `s_axis_rq_tuser`.
    pub rq_tuser: Signal<Out, Bits<137>>,
    /// `s_axis_rq_tkeep` (one bit per Dword).
    pub rq_tkeep: Signal<Out, Bits<16>>,
    /// `s_axis_rq_tlast`.
    pub rq_tlast: Signal<Out, Bit>,
    /// `s_axis_rq_tvalid`.
    pub rq_tvalid: Signal<Out, Bit>,
    /// `s_axis_rq_tready` (four equal bits; bit 0 is read).
    pub rq_tready: Signal<In, Bits<4>>,
    o_valid: Reg<Bit>,
    o_data: Reg<Bits<512>>,
    o_keep: Reg<Bits<16>>,
    o_last: Reg<Bit>,
    /// `tuser` bits 39:0 (the rest are zero).
    o_user: Reg<Bits<40>>,
    /// Input beats of a write TLP are being taken (its first is taken, its last not yet).
    in_wr: Reg<Bit>,
    /// The write's last output beat is owed: send it with no input taken.
    flush: Reg<Bit>,
    /// The write's descriptor has not gone out yet (late mode, before its second beat).
    first_out: Reg<Bit>,
    /// The write needs a flush after its last input beat.
    need_flush: Reg<Bit>,
    /// The write's shift in bytes, descriptor, byte enables, last beat's `tkeep` and last Dword.
    sh: Reg<Bits<6>>,
    desc: Reg<Bits<128>>,
    fbe: Reg<Bits<4>>,
    lbe: Reg<Bits<4>>,
    last_keep: Reg<Bits<16>>,
    eptr: Reg<Bits<4>>,
    /// The previous input beat.
    prev: Reg<Bits<512>>,
    /// A write goes first when both a read and a write wait (alternation).
    prefer_wr: Reg<Bit>,
    adv: Signal<Local, Bit>,
    idle: Signal<Local, Bit>,
    pick_wr: Signal<Local, Bit>,
    pick_rd: Signal<Local, Bit>,
    /// A read's descriptor and byte enables, from its own inputs (no pick in front of the sums).
    r_off: Signal<Local, Bits<2>>,
    r_ndw: Signal<Local, Bits<11>>,
    r_end: Signal<Local, Bits<2>>,
    r_fmask: Signal<Local, Bits<4>>,
    r_lmask: Signal<Local, Bits<4>>,
    r_fbe: Signal<Local, Bits<4>>,
    r_lbe: Signal<Local, Bits<4>>,
    r_desc: Signal<Local, Bits<128>>,
    /// The same for a write TLP (its first beat's address and length), and its beats and shape.
    d_off: Signal<Local, Bits<2>>,
    /// Its first Dword's lane (0..=60).
    d_a0: Signal<Local, Bits<7>>,
    d_ndw: Signal<Local, Bits<11>>,
    /// Input and output beats of a write.
    d_in: Signal<Local, Bits<14>>,
    d_out: Signal<Local, Bits<14>>,
    d_late: Signal<Local, Bit>,
    d_need_flush: Signal<Local, Bit>,
    d_sh: Signal<Local, Bits<6>>,
    /// Dwords in the last output beat, mod 16.
    d_lastdw: Signal<Local, Bits<4>>,
    d_last_keep: Signal<Local, Bits<16>>,
    d_end: Signal<Local, Bits<2>>,
    d_fmask: Signal<Local, Bits<4>>,
    d_lmask: Signal<Local, Bits<4>>,
    d_fbe: Signal<Local, Bits<4>>,
    d_lbe: Signal<Local, Bits<4>>,
    d_desc: Signal<Local, Bits<128>>,
    /// The output beat of this cycle (when `emit`): first (descriptor in lanes 0..16), last.
    emit: Signal<Local, Bit>,
    e_first: Signal<Local, Bit>,
    e_last: Signal<Local, Bit>,
    e_desc: Signal<Local, Bits<128>>,
    e_fbe: Signal<Local, Bits<4>>,
    e_lbe: Signal<Local, Bits<4>>,
    e_last_keep: Signal<Local, Bits<16>>,
    e_eptr: Signal<Local, Bits<4>>,
    e_user: Signal<Local, Bits<40>>,
    sh_now: Signal<Local, Bits<6>>,
    /// {this input beat, the previous one}, shifted.
    win: Signal<Local, Bits<1024>>,
    shifted: Signal<Local, Bits<1024>>,
    ones16: Num<0xFFFF, 16>,
    f4: Num<0xF, 4>,
    one40: Num<1, 40>,
    one_dw: Num<1, 11>,
    /// The descriptor's 16 bytes plus a round-up of 63, for the output beat count.
    desc_round: Num<79, 14>,
    shift_early: Num<48, 7>,
    ty_mem_rd: Num<0, 4>,
    ty_mem_wr: Num<1, 4>,
    zero_tag: Num<0, 8>,
    read_keep: Num<0xF, 16>,
    read_eptr: Num<3, 4>,
}

impl Logic for UspRq {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, o_valid, o_data, o_keep, o_last, o_user, in_wr, flush, first_out, need_flush, sh, desc, fbe,
            lbe, last_keep, eptr, prev, prefer_wr
        );
        self.o_valid.reset.next = self.reset.val();
        self.o_data.reset.next = self.reset.val();
        self.o_keep.reset.next = self.reset.val();
        self.o_last.reset.next = self.reset.val();
        self.o_user.reset.next = self.reset.val();
        self.in_wr.reset.next = self.reset.val();
        self.flush.reset.next = self.reset.val();
        self.first_out.reset.next = self.reset.val();
        self.need_flush.reset.next = self.reset.val();
        self.sh.reset.next = self.reset.val();
        self.desc.reset.next = self.reset.val();
        self.fbe.reset.next = self.reset.val();
        self.lbe.reset.next = self.reset.val();
        self.last_keep.reset.next = self.reset.val();
        self.eptr.reset.next = self.reset.val();
        self.prev.reset.next = self.reset.val();
        self.prefer_wr.reset.next = self.reset.val();
        self.rq_tvalid.next = self.o_valid.q.val();
        self.rq_tdata.next = self.o_data.q.val();
        self.rq_tkeep.next = self.o_keep.q.val();
        self.rq_tlast.next = self.o_last.q.val();
        self.rq_tuser.next = bit_cast::<137, 40>(self.o_user.q.val());
        self.adv.next = !self.o_valid.q.val() | self.rq_tready.val().get_bit(0);
        self.idle.next = !self.in_wr.q.val() & !self.flush.q.val();
        self.pick_wr.next = self.idle.val()
            & self.wr_valid.val()
            & self.wr_first.val()
            & (self.prefer_wr.q.val() | !self.rd_valid.val());
        self.pick_rd.next = self.idle.val() & self.rd_valid.val() & !self.pick_wr.val();
        // A read's descriptor and byte enables.
        self.r_off.next = self.rd_addr.val().get_bits::<2>(0);
        self.r_ndw.next =
            bit_cast::<11, 14>((bit_cast::<14, 2>(self.r_off.val()) + bit_cast::<14, 13>(self.rd_len.val()) + 3) >> 2);
        self.r_end.next = self.r_off.val() + self.rd_len.val().get_bits::<2>(0);
        self.r_fmask.next = self.f4.val() << self.r_off.val();
        self.r_lmask.next = !(self.f4.val() << self.r_end.val());
        if !self.r_end.val().any() {
            self.r_lmask.next = self.f4.val();
        }
        self.r_fbe.next = self.r_fmask.val();
        self.r_lbe.next = self.r_lmask.val();
        if self.r_ndw.val() == self.one_dw.val() {
            self.r_fbe.next = self.r_fmask.val() & self.r_lmask.val();
            self.r_lbe.next = 0.into();
        }
        self.r_desc.next = bit_cast::<128, 64>(self.rd_addr.val() & !bits::<64>(3))
            | (bit_cast::<128, 11>(self.r_ndw.val()) << 64)
            | (bit_cast::<128, 4>(self.ty_mem_rd.val()) << 75)
            | (bit_cast::<128, 8>(self.rd_tag.val()) << 96);
        // A write TLP's descriptor, byte enables, beats and shape.
        self.d_off.next = self.wr_addr.val().get_bits::<2>(0);
        self.d_a0.next = bit_cast::<7, 4>(self.wr_addr.val().get_bits::<4>(2)) << 2;
        self.d_ndw.next =
            bit_cast::<11, 14>((bit_cast::<14, 2>(self.d_off.val()) + bit_cast::<14, 13>(self.wr_len.val()) + 3) >> 2);
        self.d_in.next =
            (bit_cast::<14, 6>(self.wr_addr.val().get_bits::<6>(0)) + bit_cast::<14, 13>(self.wr_len.val()) + 63) >> 6;
        self.d_out.next = ((bit_cast::<14, 11>(self.d_ndw.val()) << 2) + self.desc_round.val()) >> 6;
        self.d_late.next = self.d_a0.val().get_bits::<3>(4).any();
        self.d_need_flush.next = self.d_out.val() > self.d_in.val();
        if self.d_late.val() {
            self.d_need_flush.next = self.d_out.val() == self.d_in.val();
        }
        self.d_sh.next = bit_cast::<6, 7>(self.d_a0.val() + self.shift_early.val());
        self.d_lastdw.next = self.d_ndw.val().get_bits::<4>(0) + 4;
        self.d_last_keep.next = !(self.ones16.val() << self.d_lastdw.val());
        if !self.d_lastdw.val().any() {
            self.d_last_keep.next = self.ones16.val();
        }
        self.d_end.next = self.d_off.val() + self.wr_len.val().get_bits::<2>(0);
        self.d_fmask.next = self.f4.val() << self.d_off.val();
        self.d_lmask.next = !(self.f4.val() << self.d_end.val());
        if !self.d_end.val().any() {
            self.d_lmask.next = self.f4.val();
        }
        self.d_fbe.next = self.d_fmask.val();
        self.d_lbe.next = self.d_lmask.val();
        if self.d_ndw.val() == self.one_dw.val() {
            self.d_fbe.next = self.d_fmask.val() & self.d_lmask.val();
            self.d_lbe.next = 0.into();
        }
        self.d_desc.next = bit_cast::<128, 64>(self.wr_addr.val() & !bits::<64>(3))
            | (bit_cast::<128, 11>(self.d_ndw.val()) << 64)
            | (bit_cast::<128, 4>(self.ty_mem_wr.val()) << 75)
            | (bit_cast::<128, 8>(self.zero_tag.val()) << 96);
        // The output beat of a write: defaults from the TLP's registers.
        self.emit.next = false;
        self.e_first.next = false;
        self.e_last.next = false;
        self.e_desc.next = self.desc.q.val();
        self.e_fbe.next = self.fbe.q.val();
        self.e_lbe.next = self.lbe.q.val();
        self.e_last_keep.next = self.last_keep.q.val();
        self.e_eptr.next = self.eptr.q.val();
        self.sh_now.next = self.sh.q.val();
        self.rd_ready.next = false;
        self.wr_ready.next = false;
        if self.adv.val() {
            if self.flush.q.val() {
                self.emit.next = true;
                self.e_first.next = self.first_out.q.val();
                self.e_last.next = true;
                self.flush.d.next = false;
                self.first_out.d.next = false;
            } else if self.in_wr.q.val() {
                self.wr_ready.next = true;
                if self.wr_valid.val() {
                    self.prev.d.next = self.wr_data.val();
                    self.emit.next = true;
                    self.e_first.next = self.first_out.q.val();
                    self.first_out.d.next = false;
                    if self.wr_last.val() {
                        self.in_wr.d.next = false;
                        self.flush.d.next = self.need_flush.q.val();
                        self.e_last.next = !self.need_flush.q.val();
                    }
                }
            } else if self.pick_rd.val() {
                self.rd_ready.next = true;
                self.prefer_wr.d.next = true;
            } else if self.pick_wr.val() {
                self.wr_ready.next = true;
                self.prefer_wr.d.next = false;
                self.prev.d.next = self.wr_data.val();
                self.sh.d.next = self.d_sh.val();
                self.sh_now.next = self.d_sh.val();
                self.desc.d.next = self.d_desc.val();
                self.fbe.d.next = self.d_fbe.val();
                self.lbe.d.next = self.d_lbe.val();
                self.last_keep.d.next = self.d_last_keep.val();
                self.eptr.d.next = self.d_lastdw.val() - 1;
                self.need_flush.d.next = self.d_need_flush.val();
                self.in_wr.d.next = !self.wr_last.val();
                self.flush.d.next = self.wr_last.val() & self.d_need_flush.val();
                self.e_desc.next = self.d_desc.val();
                self.e_fbe.next = self.d_fbe.val();
                self.e_lbe.next = self.d_lbe.val();
                self.e_last_keep.next = self.d_last_keep.val();
                self.e_eptr.next = self.d_lastdw.val() - 1;
                // Early: the first output beat leaves now; late: with the next input beat.
                self.first_out.d.next = self.d_late.val();
                self.emit.next = !self.d_late.val();
                self.e_first.next = !self.d_late.val();
                self.e_last.next = !self.d_late.val() & self.wr_last.val() & !self.d_need_flush.val();
            }
        }
        self.win.next = (bit_cast::<1024, 512>(self.wr_data.val()) << 512) | bit_cast::<1024, 512>(self.prev.q.val());
        self.shifted.next = self.win.val() >> (bit_cast::<11, 6>(self.sh_now.val()) << 3);
        self.e_user.next = bit_cast::<40, 4>(self.e_fbe.val()) | (bit_cast::<40, 4>(self.e_lbe.val()) << 8);
        if self.e_first.val() {
            self.e_user.next = self.e_user.val() | (self.one40.val() << 20);
        }
        if self.e_last.val() {
            self.e_user.next =
                self.e_user.val() | (self.one40.val() << 26) | (bit_cast::<40, 4>(self.e_eptr.val()) << 28);
        }
        if self.adv.val() {
            self.o_valid.d.next = self.emit.val() | self.pick_rd.val();
            if self.emit.val() {
                self.o_data.d.next = self.shifted.val().get_bits::<512>(0);
                if self.e_first.val() {
                    self.o_data.d.next = ((self.shifted.val().get_bits::<512>(0) >> 128) << 128)
                        | bit_cast::<512, 128>(self.e_desc.val());
                }
                self.o_keep.d.next = self.ones16.val();
                if self.e_last.val() {
                    self.o_keep.d.next = self.e_last_keep.val();
                }
                self.o_last.d.next = self.e_last.val();
                self.o_user.d.next = self.e_user.val();
            } else if self.pick_rd.val() {
                self.o_data.d.next = bit_cast::<512, 128>(self.r_desc.val());
                self.o_keep.d.next = self.read_keep.val();
                self.o_last.d.next = true;
                self.o_user.d.next = bit_cast::<40, 4>(self.r_fbe.val())
                    | (bit_cast::<40, 4>(self.r_lbe.val()) << 8)
                    | (self.one40.val() << 20)
                    | (self.one40.val() << 26)
                    | (bit_cast::<40, 4>(self.read_eptr.val()) << 28);
            }
        }
    }
}
