//! TX packet builder: turns descriptors (requests from the SQ engine, ACKs
//! and NAKs from the RX engine; ACKs first between frames) into frames:
//! two header beats, the payload beats from the DMA read completions, and
//! the ICRC, computed one beat per cycle as the frame goes out.
//!
//! Pipelined for timing. The header of the descriptor at a FIFO head is
//! built and registered as the descriptor is taken. Beats then pass two
//! stages before the MAC: in the first, each beat's ICRC contribution
//! ([`IcrcData`]) is registered; moving to the second it is folded into
//! the state and a padded last beat half undone; out of the second, the
//! other half is undone and the ICRC lands in the lanes after the payload
//! (or alone in a tail beat). A stall from the MAC holds every stage, so a
//! frame leaves without gaps once its first beat has (a CMAC aborts a
//! frame on an underrun).

use crate::desc::{TxDescUnpack, TXD_BITS};
use crate::hdr::TxHeader;
use crate::icrc::{IcrcData, IcrcFold, IcrcFoldUnpadLo, IcrcUnpadHi};
use crate::reg::Reg;
use rust_hdl::prelude::*;

#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
enum TxState {
    Idle,
    Hdr0,
    Hdr1,
    Payload,
    Tail,
}

/// The TX packet builder.
#[derive(LogicBlock, Default)]
pub struct TxBuilder {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: every register and FIFO of the block back to its power-on state (block RAM contents are kept).
    pub reset: Signal<In, Bit>,
    /// Source MAC of this NIC.
    pub src_mac: Signal<In, Bits<48>>,
    /// Source IPv4 of this NIC.
    pub src_ip: Signal<In, Bits<32>>,
    /// Request descriptor FIFO empty.
    pub req_empty: Signal<In, Bit>,
    /// Request descriptor at the FIFO head.
    pub req_data: Signal<In, Bits<TXD_BITS>>,
    /// Pop the request FIFO.
    pub req_pop: Signal<Out, Bit>,
    /// ACK descriptor FIFO empty.
    pub ack_empty: Signal<In, Bit>,
    /// ACK descriptor at the FIFO head.
    pub ack_data: Signal<In, Bits<TXD_BITS>>,
    /// Pop the ACK FIFO.
    pub ack_pop: Signal<Out, Bit>,
    /// Payload beat valid (DMA read completion for the current request).
    pub pl_valid: Signal<In, Bit>,
    /// Payload beat.
    pub pl_data: Signal<In, Bits<512>>,
    /// Payload beat taken.
    pub pl_ready: Signal<Out, Bit>,
    /// Pushed payload beat valid (the head of the push slot's FIFO, for a descriptor with `inl`).
    pub ipl_valid: Signal<In, Bit>,
    /// Pushed payload beat.
    pub ipl_data: Signal<In, Bits<512>>,
    /// Pushed payload beat taken.
    pub ipl_ready: Signal<Out, Bit>,
    /// Frame out valid.
    pub tx_valid: Signal<Out, Bit>,
    /// Frame out ready.
    pub tx_ready: Signal<In, Bit>,
    /// Frame out data.
    pub tx_data: Signal<Out, Bits<512>>,
    /// Frame out byte enables.
    pub tx_keep: Signal<Out, Bits<64>>,
    /// Frame out last beat.
    pub tx_last: Signal<Out, Bit>,
    /// Pulses when a request frame is complete.
    pub sent_req: Signal<Out, Bit>,
    /// Pulses when an ACK/NAK frame is complete.
    pub sent_ack: Signal<Out, Bit>,
    state: Reg<TxState>,
    /// The frame's payload length and kind (the rest of its descriptor is in its header beats).
    plen: Reg<Bits<13>>,
    is_ack: Reg<Bit>,
    /// The frame's payload is a pushed beat (`ipl_*`), not DMA read data (`pl_*`).
    inl: Reg<Bit>,
    /// The payload source the frame reads: valid and data.
    src_v: Signal<Local, Bit>,
    src_data: Signal<Local, Bits<512>>,
    rem: Reg<Bits<16>>,
    /// `rem < 64`, kept beside `rem` (it moves by 64, or is loaded with `padded`).
    rem_lt64: Reg<Bit>,
    /// The frame's header beats, built as its descriptor was taken.
    hb0: Reg<Bits<512>>,
    hb1: Reg<Bits<512>>,
    /// Stage 1: a beat and its ICRC contribution.
    p1_v: Reg<Bit>,
    p1_data: Reg<Bits<512>>,
    p1_first: Reg<Bit>,
    p1_last: Reg<Bit>,
    p1_nb: Reg<Bits<7>>,
    p1_ack: Reg<Bit>,
    p1_d: Reg<Bits<32>>,
    /// Stage 2 (presented to the MAC): a beat, and for a last beat its ICRC half undone.
    p2_v: Reg<Bit>,
    p2_data: Reg<Bits<512>>,
    p2_last: Reg<Bit>,
    p2_nb: Reg<Bits<7>>,
    p2_ack: Reg<Bit>,
    p2_x: Reg<Bits<32>>,
    /// ICRC state through the beats that left stage 1.
    crc: Reg<Bits<32>>,
    dn: TxDescUnpack,
    hdr: TxHeader,
    icrc_d: IcrcData,
    icrc_f: IcrcFold,
    unpad_lo: IcrcFoldUnpadLo,
    unpad_hi: IcrcUnpadHi,
    padded: Signal<Local, Bits<16>>,
    /// The beat the frame sequencer offers stage 1: valid, data, beat 0, last, bytes before the ICRC.
    f_v: Signal<Local, Bit>,
    f_data: Signal<Local, Bits<512>>,
    f_first: Signal<Local, Bit>,
    f_last: Signal<Local, Bit>,
    f_nb: Signal<Local, Bits<7>>,
    /// The stages move (stage 2 is empty or the MAC takes its beat).
    adv: Signal<Local, Bit>,
    ones64: Signal<Local, Bits<64>>,
    icrc_val: Signal<Local, Bits<32>>,
    lane: Signal<Local, Bits<4>>,
    k1: Signal<Local, Bits<7>>,
    k2: Signal<Local, Bits<7>>,
}

impl Logic for TxBuilder {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, plen, is_ack, inl, rem, rem_lt64, hb0, hb1, p1_v, p1_data, p1_first, p1_last, p1_nb,
            p1_ack, p1_d, p2_v, p2_data, p2_last, p2_nb, p2_ack, p2_x, crc
        );
        self.state.reset.next = self.reset.val();
        self.plen.reset.next = self.reset.val();
        self.is_ack.reset.next = self.reset.val();
        self.inl.reset.next = self.reset.val();
        self.rem.reset.next = self.reset.val();
        self.rem_lt64.reset.next = self.reset.val();
        self.hb0.reset.next = self.reset.val();
        self.hb1.reset.next = self.reset.val();
        self.p1_v.reset.next = self.reset.val();
        self.p1_data.reset.next = self.reset.val();
        self.p1_first.reset.next = self.reset.val();
        self.p1_last.reset.next = self.reset.val();
        self.p1_nb.reset.next = self.reset.val();
        self.p1_ack.reset.next = self.reset.val();
        self.p1_d.reset.next = self.reset.val();
        self.p2_v.reset.next = self.reset.val();
        self.p2_data.reset.next = self.reset.val();
        self.p2_last.reset.next = self.reset.val();
        self.p2_nb.reset.next = self.reset.val();
        self.p2_ack.reset.next = self.reset.val();
        self.p2_x.reset.next = self.reset.val();
        self.crc.reset.next = self.reset.val();
        // The header of the descriptor about to be taken (ACKs first).
        self.dn.pword.next = self.req_data.val();
        if !self.ack_empty.val() {
            self.dn.pword.next = self.ack_data.val();
        }
        self.hdr.is_ack.next = self.dn.is_ack.val().any();
        self.hdr.dst_mac.next = self.dn.dst_mac.val();
        self.hdr.src_mac.next = self.src_mac.val();
        self.hdr.src_ip.next = self.src_ip.val();
        self.hdr.dst_ip.next = self.dn.dst_ip.val();
        self.hdr.sport.next = self.dn.sport.val();
        self.hdr.opcode.next = self.dn.opcode.val();
        self.hdr.dqpn.next = self.dn.dqpn.val();
        self.hdr.ack_req.next = self.dn.ack_req.val().any();
        self.hdr.psn.next = self.dn.psn.val();
        self.hdr.plen.next = self.dn.plen.val();
        self.hdr.va.next = self.dn.va.val();
        self.hdr.rkey.next = self.dn.rkey.val();
        self.hdr.msg_len.next = self.dn.msg_len.val();
        self.hdr.ssn.next = self.dn.ssn.val();
        self.hdr.psn_offset.next = self.dn.psn_offset.val();
        self.hdr.ts.next = self.dn.ts.val();
        self.hdr.syndrome.next = self.dn.syndrome.val();
        self.hdr.msn.next = self.dn.msn.val();
        self.hdr.epsn.next = self.dn.epsn.val();
        self.hdr.msn_psn.next = self.dn.msn_psn.val();
        self.hdr.ecn_echo.next = self.dn.ecn_echo.val();
        self.hdr.rsn.next = self.dn.rsn.val();
        self.hdr.imm.next = self.dn.imm.val();
        self.hdr.laddr.next = self.dn.laddr.val();
        self.hdr.lkey.next = self.dn.lkey.val();
        self.hdr.ack_flags.next = bit_cast::<8, 2>(self.dn.ack_flags.val());
        self.hdr.sack_base.next = self.dn.sack_base.val();
        self.hdr.sack_bitmap.next = self.dn.sack_bitmap.val();
        self.hdr.ooo.next = self.dn.ooo.val();
        self.hdr.bytes_rx.next = self.dn.bytes_rx.val();
        // Payload length rounded up to 4 (BTH pad).
        self.padded.next = (bit_cast::<16, 13>(self.plen.q.val()) + 3) & 0xFFFC;
        self.ones64.next = 0xFFFF_FFFF_FFFF_FFFF_u64.into();
        self.adv.next = !self.p2_v.q.val() | self.tx_ready.val();
        self.req_pop.next = false;
        self.ack_pop.next = false;
        self.pl_ready.next = false;
        self.sent_req.next = false;
        self.sent_ack.next = false;
        self.f_v.next = false;
        self.src_v.next = self.pl_valid.val();
        self.src_data.next = self.pl_data.val();
        if self.inl.q.val() {
            self.src_v.next = self.ipl_valid.val();
            self.src_data.next = self.ipl_data.val();
        }
        self.ipl_ready.next = false;
        self.f_data.next = self.src_data.val();
        self.f_first.next = false;
        self.f_last.next = false;
        self.f_nb.next = 64.into();
        match self.state.q.val() {
            TxState::Idle => {
                if !self.ack_empty.val() {
                    self.ack_pop.next = true;
                } else if !self.req_empty.val() {
                    self.req_pop.next = true;
                }
                if !self.ack_empty.val() | !self.req_empty.val() {
                    self.plen.d.next = self.dn.plen.val();
                    self.is_ack.d.next = self.dn.is_ack.val().any();
                    self.inl.d.next = self.dn.inl.val().any();
                    self.hb0.d.next = self.hdr.beat0.val();
                    self.hb1.d.next = self.hdr.beat1.val();
                    self.state.d.next = TxState::Hdr0;
                }
            }
            TxState::Hdr0 => {
                // A frame starts only when its payload is there: the DMA
                // front end releases a read whole, so no beat comes late.
                self.f_v.next = (self.padded.val() == 0) | self.src_v.val();
                self.f_data.next = self.hb0.q.val();
                self.f_first.next = true;
                if self.adv.val() & self.f_v.val() {
                    self.state.d.next = TxState::Hdr1;
                }
            }
            TxState::Hdr1 => {
                self.f_v.next = true;
                self.f_data.next = self.hb1.q.val();
                if self.adv.val() {
                    self.rem.d.next = self.padded.val();
                    self.rem_lt64.d.next = self.padded.val() < 64;
                    if self.padded.val() == 0 {
                        self.state.d.next = TxState::Tail;
                    } else {
                        self.state.d.next = TxState::Payload;
                    }
                }
            }
            TxState::Payload => {
                self.f_v.next = self.src_v.val();
                self.pl_ready.next = self.adv.val() & !self.inl.q.val();
                self.ipl_ready.next = self.adv.val() & self.inl.q.val();
                if self.rem_lt64.q.val() {
                    // Final beat: payload, then the ICRC right after it.
                    self.f_last.next = true;
                    self.f_nb.next = self.rem.q.val().get_bits::<7>(0);
                }
                if self.src_v.val() & self.adv.val() {
                    self.rem.d.next = self.rem.q.val() - 64;
                    self.rem_lt64.d.next = self.rem.q.val() < 128;
                    if self.rem_lt64.q.val() {
                        self.state.d.next = TxState::Idle;
                    } else if self.rem.q.val() == 64 {
                        self.state.d.next = TxState::Tail;
                    }
                }
            }
            TxState::Tail => {
                // The ICRC alone (the payload filled its last beat, or there is none).
                self.f_v.next = true;
                self.f_data.next = 0.into();
                self.f_last.next = true;
                self.f_nb.next = 0.into();
                if self.adv.val() {
                    self.state.d.next = TxState::Idle;
                }
            }
            _ => {
                self.state.d.next = TxState::Idle;
            }
        }
        // Stage 1 takes the offered beat with its ICRC contribution (bytes past `f_nb` not covered).
        self.icrc_d.data.next = self.f_data.val();
        self.icrc_d.first.next = self.f_first.val();
        self.icrc_d.keep.next = !(self.ones64.val() << bit_cast::<64, 7>(self.f_nb.val()));
        // Into stage 2: the state through stage 1's beat, and for a last beat its pad half undone
        // (none covered: the state before it is the frame's).
        self.icrc_f.state.next = self.crc.q.val();
        self.icrc_f.d.next = self.p1_d.q.val();
        self.icrc_f.first.next = self.p1_first.q.val();
        self.k1.next = bits::<7>(64) - self.p1_nb.q.val();
        self.unpad_lo.state.next = self.crc.q.val();
        self.unpad_lo.d.next = self.p1_d.q.val();
        self.unpad_lo.first.next = self.p1_first.q.val();
        self.unpad_lo.k.next = self.k1.val().get_bits::<6>(0);
        if self.adv.val() {
            self.p1_v.d.next = self.f_v.val();
            self.p1_data.d.next = self.f_data.val();
            self.p1_first.d.next = self.f_first.val();
            self.p1_last.d.next = self.f_last.val();
            self.p1_nb.d.next = self.f_nb.val();
            self.p1_ack.d.next = self.is_ack.q.val();
            self.p1_d.d.next = self.icrc_d.d.val();
            self.p2_v.d.next = self.p1_v.q.val();
            self.p2_data.d.next = self.p1_data.q.val();
            self.p2_last.d.next = self.p1_last.q.val();
            self.p2_nb.d.next = self.p1_nb.q.val();
            self.p2_ack.d.next = self.p1_ack.q.val();
            self.p2_x.d.next = self.unpad_lo.state_out.val();
            if self.p1_nb.q.val() == 0 {
                self.p2_x.d.next = self.crc.q.val();
            }
            if self.p1_v.q.val() {
                self.crc.d.next = self.icrc_f.state_out.val();
            }
        }
        // Out of stage 2: the ICRC in the 4 lanes after the payload of a last beat (lanes there are zero).
        self.k2.next = bits::<7>(64) - self.p2_nb.q.val();
        self.unpad_hi.state.next = self.p2_x.q.val();
        self.unpad_hi.k.next = self.k2.val().get_bits::<6>(0);
        self.icrc_val.next = !self.unpad_hi.state_out.val();
        self.lane.next = self.p2_nb.q.val().get_bits::<4>(2);
        self.tx_valid.next = self.p2_v.q.val();
        self.tx_data.next = self.p2_data.q.val();
        self.tx_keep.next = self.ones64.val();
        self.tx_last.next = self.p2_last.q.val();
        if self.p2_last.q.val() {
            self.tx_data.next = self.p2_data.q.val()
                | (bit_cast::<512, 32>(self.icrc_val.val()) << (bit_cast::<512, 4>(self.lane.val()) << 5));
            self.tx_keep.next = !(self.ones64.val() << bit_cast::<64, 7>(self.p2_nb.q.val() + 4));
            if self.p2_v.q.val() & self.tx_ready.val() {
                self.sent_req.next = !self.p2_ack.q.val();
                self.sent_ack.next = self.p2_ack.q.val();
            }
        }
    }
}
