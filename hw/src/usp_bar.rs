//! The BAR0 adapter of a board top: the UltraScale+ PCIe block's completer
//! interfaces (`m_axis_cq` requests in, `s_axis_cc` completions out; 512-bit,
//! Dword-aligned, straddle off) to the core's register port.
//!
//! The host reaches rnic's registers with 64-bit loads and stores, so a
//! request is taken when it is one register: a memory write of two Dwords
//! at an 8-byte-aligned offset with every byte enabled becomes one register
//! write; a memory read of those two Dwords, or of one Dword with every byte
//! enabled (either half of a register), one register read, answered with a
//! successful completion when the core replies. A read of any other shape,
//! and every other non-posted request (I/O, atomics, locked reads), gets an
//! Unsupported Request completion; other posted requests (writes of other
//! shapes, messages) are dropped. Both give a `bad_req` pulse. Requests are
//! served one at a time, in order: `tready` is low from a read until its
//! completion is taken (PCIe lets posted writes pass reads, it does not
//! require it). Non-posted credit is not used (`pcie_cq_np_req` held at 1).
//!
//! The register offset is the request's address within the BAR: the low
//! `BAR aperture` bits (CQ descriptor bits 120:115), at most 32.
//!
//! Fields used (PG213): CQ descriptor address `[63:2]`, address type
//! `[1:0]`, Dword count `[74:64]`, request type `[78:75]`, requester ID
//! `[95:80]`, tag `[103:96]`, target function `[111:104]`, BAR aperture
//! `[120:115]`, TC `[123:121]`, attributes `[126:124]`; `tuser` first and
//! last byte enables `[3:0]`, `[11:8]`. CC descriptor: lower address
//! `[6:0]`, address type `[9:8]`, byte count `[28:16]`, Dword count
//! `[42:32]`, status `[45:43]`, requester ID `[63:48]`, tag `[71:64]`,
//! function `[79:72]`, TC `[91:89]`, attributes `[94:92]`; payload from
//! lane 12.

use crate::num::Num;
use crate::reg::Reg;
use rnic_spec::usp;
use rust_hdl::prelude::*;

// The descriptor and tuser positions written below as literals (rust-hdl slices need them).
const _: () = assert!(usp::RQ_ADDR_LSB == 0 && usp::RQ_DWORDS_LSB == 64 && usp::RQ_TYPE_LSB == 75);
const _: () = assert!(usp::RQ_REQ_ID_LSB == 80 && usp::RQ_TAG_LSB == 96 && usp::CQ_FUNC_LSB == 104);
const _: () = assert!(usp::CQ_BAR_APERTURE_LSB == 115 && usp::RQ_TC_LSB == 121 && usp::RQ_ATTR_LSB == 124);
const _: () = assert!(usp::CQ_USER_FIRST_BE_LSB == 0 && usp::CQ_USER_LAST_BE_LSB == 8);
const _: () = assert!(usp::CC_AT_LSB == 8 && usp::CC_BYTE_COUNT_LSB == 16 && usp::CC_DWORDS_LSB == 32);
const _: () = assert!(usp::CC_STATUS_LSB == 43 && usp::CC_REQ_ID_LSB == 48 && usp::CC_TAG_LSB == 64);
const _: () = assert!(usp::CC_FUNC_LSB == 72 && usp::CC_TC_LSB == 89 && usp::CC_ATTR_LSB == 92);
const _: () = assert!(usp::RC_DESC_BYTES == 12 && usp::RQ_DESC_BYTES == 16 && usp::CPL_UR == 1);

#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
enum BarState {
    Idle,
    /// A register read is with the core.
    WaitRd,
    /// A completion is offered on CC.
    SendCc,
    /// The rest of a multi-beat request is dropped.
    Drain,
}

/// The BAR0 adapter.
#[derive(LogicBlock, Default)]
pub struct UspBar {
    /// Core clock (the PCIe block's 250 MHz user clock).
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: every register to its power-on value.
    pub reset: Signal<In, Bit>,
    /// `m_axis_cq_tdata`.
    pub cq_tdata: Signal<In, Bits<512>>,
    /// `m_axis_cq_tuser` (183 bits; the byte enables are read).
    pub cq_tuser: Signal<In, Bits<183>>,
    /// `m_axis_cq_tlast`.
    pub cq_tlast: Signal<In, Bit>,
    /// `m_axis_cq_tvalid`.
    pub cq_tvalid: Signal<In, Bit>,
    /// `m_axis_cq_tready`.
    pub cq_tready: Signal<Out, Bit>,
    /// `pcie_cq_np_req`: held at 1 (no non-posted back-pressure).
    pub cq_np_req: Signal<Out, Bits<2>>,
    /// `s_axis_cc_tdata`.
    pub cc_tdata: Signal<Out, Bits<512>>,
    /// `s_axis_cc_tuser` (81 bits, all zero: no straddle, no discontinue).
    pub cc_tuser: Signal<Out, Bits<81>>,
    /// `s_axis_cc_tkeep`.
    pub cc_tkeep: Signal<Out, Bits<16>>,
    /// `s_axis_cc_tlast`.
    pub cc_tlast: Signal<Out, Bit>,
    /// `s_axis_cc_tvalid`.
    pub cc_tvalid: Signal<Out, Bit>,
    /// `s_axis_cc_tready` (bit 0 is read).
    pub cc_tready: Signal<In, Bits<4>>,
    /// To the core: a register write.
    pub reg_wr_valid: Signal<Out, Bit>,
    /// To the core: its offset.
    pub reg_wr_addr: Signal<Out, Bits<32>>,
    /// To the core: its value.
    pub reg_wr_data: Signal<Out, Bits<64>>,
    /// To the core: a register read.
    pub reg_rd_valid: Signal<Out, Bit>,
    /// To the core: its offset.
    pub reg_rd_addr: Signal<Out, Bits<32>>,
    /// From the core: the read's value.
    pub reg_rd_resp_valid: Signal<In, Bit>,
    /// From the core: the value.
    pub reg_rd_resp_data: Signal<In, Bits<64>>,
    /// Pulse: a request was refused (UR completion) or dropped.
    pub bad_req: Signal<Out, Bit>,
    state: Reg<BarState>,
    /// The completion being built: low address bits, address type, requester ID, tag, function, TC, attributes.
    lo_addr: Reg<Bits<7>>,
    at: Reg<Bits<2>>,
    req_id: Reg<Bits<16>>,
    tag: Reg<Bits<8>>,
    func: Reg<Bits<8>>,
    tc: Reg<Bits<3>>,
    attr: Reg<Bits<3>>,
    /// Payload Dwords (1 or 2; 0 for an Unsupported Request).
    dwords: Reg<Bits<2>>,
    /// Unsupported Request.
    ur: Reg<Bit>,
    rdata: Reg<Bits<64>>,
    wr_v: Reg<Bit>,
    wr_a: Reg<Bits<32>>,
    wr_d: Reg<Bits<64>>,
    rd_v: Reg<Bit>,
    rd_a: Reg<Bits<32>>,
    bad: Reg<Bit>,
    take: Signal<Local, Bit>,
    q_addr: Signal<Local, Bits<64>>,
    q_dwords: Signal<Local, Bits<11>>,
    q_type: Signal<Local, Bits<4>>,
    q_fbe: Signal<Local, Bits<4>>,
    q_lbe: Signal<Local, Bits<4>>,
    q_aperture: Signal<Local, Bits<6>>,
    /// The address bits inside the BAR: ones below the aperture.
    q_mask: Signal<Local, Bits<32>>,
    q_off: Signal<Local, Bits<32>>,
    /// One whole register: two Dwords at an 8-byte boundary, every byte enabled.
    q_two: Signal<Local, Bit>,
    /// One whole Dword.
    q_one: Signal<Local, Bit>,
    q_posted: Signal<Local, Bit>,
    /// The read's Dword(s) placed at lane 12.
    payload: Signal<Local, Bits<64>>,
    byte_count: Signal<Local, Bits<13>>,
    desc: Signal<Local, Bits<96>>,
    all_ones: Num<0xFFFF_FFFF, 32>,
    /// Dword count 2, 1.
    two: Num<2, 11>,
    one: Num<1, 11>,
    ty_mem_rd: Num<0, 4>,
    ty_mem_wr: Num<1, 4>,
    ty_msg: Num<12, 4>,
    ty_msg_vd: Num<13, 4>,
    ty_msg_ats: Num<14, 4>,
    be_all: Num<15, 4>,
}

impl Logic for UspBar {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, lo_addr, at, req_id, tag, func, tc, attr, dwords, ur, rdata, wr_v, wr_a, wr_d, rd_v,
            rd_a, bad
        );
        self.state.reset.next = self.reset.val();
        self.lo_addr.reset.next = self.reset.val();
        self.at.reset.next = self.reset.val();
        self.req_id.reset.next = self.reset.val();
        self.tag.reset.next = self.reset.val();
        self.func.reset.next = self.reset.val();
        self.tc.reset.next = self.reset.val();
        self.attr.reset.next = self.reset.val();
        self.dwords.reset.next = self.reset.val();
        self.ur.reset.next = self.reset.val();
        self.rdata.reset.next = self.reset.val();
        self.wr_v.reset.next = self.reset.val();
        self.wr_a.reset.next = self.reset.val();
        self.wr_d.reset.next = self.reset.val();
        self.rd_v.reset.next = self.reset.val();
        self.rd_a.reset.next = self.reset.val();
        self.bad.reset.next = self.reset.val();
        self.cq_np_req.next = 1.into();
        self.reg_wr_valid.next = self.wr_v.q.val();
        self.reg_wr_addr.next = self.wr_a.q.val();
        self.reg_wr_data.next = self.wr_d.q.val();
        self.reg_rd_valid.next = self.rd_v.q.val();
        self.reg_rd_addr.next = self.rd_a.q.val();
        self.bad_req.next = self.bad.q.val();
        self.wr_v.d.next = false;
        self.rd_v.d.next = false;
        self.bad.d.next = false;
        // The request's descriptor, read from every beat but used on a first one.
        self.q_addr.next = self.cq_tdata.val().get_bits::<64>(0);
        self.q_dwords.next = self.cq_tdata.val().get_bits::<11>(64);
        self.q_type.next = self.cq_tdata.val().get_bits::<4>(75);
        self.q_fbe.next = self.cq_tuser.val().get_bits::<4>(0);
        self.q_lbe.next = self.cq_tuser.val().get_bits::<4>(8);
        self.q_aperture.next = self.cq_tdata.val().get_bits::<6>(115);
        self.q_mask.next = !(self.all_ones.val() << self.q_aperture.val());
        if self.q_aperture.val().get_bit(5) {
            self.q_mask.next = self.all_ones.val();
        }
        self.q_off.next = self.q_addr.val().get_bits::<32>(0) & self.q_mask.val() & !bits::<32>(3);
        self.q_two.next = (self.q_dwords.val() == self.two.val())
            & !self.q_addr.val().get_bit(2)
            & (self.q_fbe.val() == self.be_all.val())
            & (self.q_lbe.val() == self.be_all.val());
        self.q_one.next =
            (self.q_dwords.val() == self.one.val()) & (self.q_fbe.val() == self.be_all.val()) & !self.q_lbe.val().any();
        self.q_posted.next = (self.q_type.val() == self.ty_mem_wr.val())
            | (self.q_type.val() == self.ty_msg.val())
            | (self.q_type.val() == self.ty_msg_vd.val())
            | (self.q_type.val() == self.ty_msg_ats.val());
        // The completion, from the registers.
        self.byte_count.next = bit_cast::<13, 2>(self.dwords.q.val()) << 2;
        self.desc.next = bit_cast::<96, 7>(self.lo_addr.q.val())
            | (bit_cast::<96, 2>(self.at.q.val()) << 8)
            | (bit_cast::<96, 13>(self.byte_count.val()) << 16)
            | (bit_cast::<96, 2>(self.dwords.q.val()) << 32)
            | (bit_cast::<96, 1>(self.ur.q.val().into()) << 43)
            | (bit_cast::<96, 16>(self.req_id.q.val()) << 48)
            | (bit_cast::<96, 8>(self.tag.q.val()) << 64)
            | (bit_cast::<96, 8>(self.func.q.val()) << 72)
            | (bit_cast::<96, 3>(self.tc.q.val()) << 89)
            | (bit_cast::<96, 3>(self.attr.q.val()) << 92);
        self.payload.next = self.rdata.q.val();
        if self.dwords.q.val() == 1 {
            // One Dword: the half of the register the address names.
            self.payload.next = bit_cast::<64, 32>(self.rdata.q.val().get_bits::<32>(0));
            if self.lo_addr.q.val().get_bit(2) {
                self.payload.next = bit_cast::<64, 32>(self.rdata.q.val().get_bits::<32>(32));
            }
        }
        self.cc_tdata.next = bit_cast::<512, 96>(self.desc.val()) | (bit_cast::<512, 64>(self.payload.val()) << 96);
        self.cc_tuser.next = 0.into();
        self.cc_tlast.next = true;
        self.cc_tkeep.next = 0x7.into();
        if self.dwords.q.val() == 1 {
            self.cc_tkeep.next = 0xF.into();
        }
        if self.dwords.q.val() == 2 {
            self.cc_tkeep.next = 0x1F.into();
        }
        self.cc_tvalid.next = self.state.q.val() == BarState::SendCc;
        self.cq_tready.next = (self.state.q.val() == BarState::Idle) | (self.state.q.val() == BarState::Drain);
        self.take.next = self.cq_tvalid.val() & self.cq_tready.val();
        match self.state.q.val() {
            BarState::Idle => {
                if self.take.val() {
                    self.at.d.next = self.q_addr.val().get_bits::<2>(0);
                    self.req_id.d.next = self.cq_tdata.val().get_bits::<16>(80);
                    self.tag.d.next = self.cq_tdata.val().get_bits::<8>(96);
                    self.func.d.next = self.cq_tdata.val().get_bits::<8>(104);
                    self.tc.d.next = self.cq_tdata.val().get_bits::<3>(121);
                    self.attr.d.next = self.cq_tdata.val().get_bits::<3>(124);
                    // The Dword address's low bits: the completion's lower address counts bytes.
                    self.lo_addr.d.next = self.q_addr.val().get_bits::<7>(0) & bits::<7>(0x7C);
                    if self.q_posted.val() {
                        self.ur.d.next = false;
                        if (self.q_type.val() == self.ty_mem_wr.val()) & self.q_two.val() & self.cq_tlast.val() {
                            self.wr_v.d.next = true;
                            self.wr_a.d.next = self.q_off.val();
                            self.wr_d.d.next = self.cq_tdata.val().get_bits::<64>(128);
                        } else {
                            self.bad.d.next = true;
                        }
                        if !self.cq_tlast.val() {
                            self.state.d.next = BarState::Drain;
                        }
                    } else if (self.q_type.val() == self.ty_mem_rd.val()) & (self.q_two.val() | self.q_one.val()) {
                        self.rd_v.d.next = true;
                        self.rd_a.d.next = self.q_off.val() & !bits::<32>(7);
                        self.dwords.d.next = self.q_dwords.val().get_bits::<2>(0);
                        self.ur.d.next = false;
                        self.state.d.next = BarState::WaitRd;
                    } else {
                        self.bad.d.next = true;
                        self.dwords.d.next = 0.into();
                        self.ur.d.next = true;
                        self.state.d.next = BarState::SendCc;
                        if !self.cq_tlast.val() {
                            // A non-posted request with a payload (an atomic): refused once it is all in.
                            self.state.d.next = BarState::Drain;
                        }
                    }
                }
            }
            BarState::WaitRd => {
                if self.reg_rd_resp_valid.val() {
                    self.rdata.d.next = self.reg_rd_resp_data.val();
                    self.state.d.next = BarState::SendCc;
                }
            }
            BarState::SendCc => {
                if self.cc_tready.val().get_bit(0) {
                    self.state.d.next = BarState::Idle;
                }
            }
            BarState::Drain => {
                if self.take.val() & self.cq_tlast.val() {
                    self.state.d.next = BarState::Idle;
                    if self.ur.q.val() {
                        self.state.d.next = BarState::SendCc;
                    }
                }
            }
            _ => {
                self.state.d.next = BarState::Idle;
            }
        }
    }
}
