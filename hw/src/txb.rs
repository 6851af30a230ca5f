//! TX packet builder: turns descriptors (requests from the SQ engine, ACKs
//! and NAKs from the RX engine; ACKs first between frames) into frames:
//! two header beats, the payload beats from the DMA read completions, and
//! the ICRC, computed one beat per cycle as the frame goes out.

use crate::desc::{TxDescUnpack, TXD_BITS};
use crate::hdr::TxHeader;
use crate::icrc::IcrcBeat;
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
    state: DFF<TxState>,
    desc: DFF<Bits<TXD_BITS>>,
    crc: DFF<Bits<32>>,
    rem: DFF<Bits<16>>,
    du: TxDescUnpack,
    hdr: TxHeader,
    icrc: IcrcBeat,
    padded: Signal<Local, Bits<16>>,
    icrc_val: Signal<Local, Bits<32>>,
}

impl Logic for TxBuilder {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, state, desc, crc, rem);
        self.du.pword.next = self.desc.q.val();
        self.hdr.is_ack.next = self.du.is_ack.val().any();
        self.hdr.dst_mac.next = self.du.dst_mac.val();
        self.hdr.src_mac.next = self.src_mac.val();
        self.hdr.src_ip.next = self.src_ip.val();
        self.hdr.dst_ip.next = self.du.dst_ip.val();
        self.hdr.sport.next = self.du.sport.val();
        self.hdr.opcode.next = self.du.opcode.val();
        self.hdr.dqpn.next = self.du.dqpn.val();
        self.hdr.ack_req.next = self.du.ack_req.val().any();
        self.hdr.psn.next = self.du.psn.val();
        self.hdr.plen.next = self.du.plen.val();
        self.hdr.va.next = self.du.va.val();
        self.hdr.rkey.next = self.du.rkey.val();
        self.hdr.msg_len.next = self.du.msg_len.val();
        self.hdr.ssn.next = self.du.ssn.val();
        self.hdr.psn_offset.next = self.du.psn_offset.val();
        self.hdr.ts.next = self.du.ts.val();
        self.hdr.syndrome.next = self.du.syndrome.val();
        self.hdr.msn.next = self.du.msn.val();
        self.hdr.epsn.next = self.du.epsn.val();
        self.hdr.msn_psn.next = self.du.msn_psn.val();
        self.hdr.ecn_echo.next = self.du.ecn_echo.val();
        self.hdr.rsn.next = self.du.rsn.val();
        self.hdr.imm.next = self.du.imm.val();
        self.hdr.laddr.next = self.du.laddr.val();
        self.hdr.lkey.next = self.du.lkey.val();
        self.hdr.ack_flags.next = bit_cast::<8, 2>(self.du.ack_flags.val());
        self.hdr.sack_base.next = self.du.sack_base.val();
        self.hdr.sack_bitmap.next = self.du.sack_bitmap.val();
        self.hdr.ooo.next = self.du.ooo.val();
        self.hdr.bytes_rx.next = self.du.bytes_rx.val();
        // Payload length rounded up to 4 (BTH pad).
        self.padded.next = (bit_cast::<16, 13>(self.du.plen.val()) + 3) & 0xFFFC;
        self.icrc.state.next = self.crc.q.val();
        self.icrc.data.next = self.pl_data.val();
        self.icrc.first.next = false;
        self.icrc.nbytes.next = 64.into();
        self.icrc_val.next = !self.icrc.state_out.val();
        self.req_pop.next = false;
        self.ack_pop.next = false;
        self.pl_ready.next = false;
        self.tx_valid.next = false;
        self.tx_data.next = self.pl_data.val();
        self.tx_keep.next = 0xFFFF_FFFF_FFFF_FFFF_u64.into();
        self.tx_last.next = false;
        self.sent_req.next = false;
        self.sent_ack.next = false;
        match self.state.q.val() {
            TxState::Idle => {
                if !self.ack_empty.val() {
                    self.desc.d.next = self.ack_data.val();
                    self.ack_pop.next = true;
                    self.state.d.next = TxState::Hdr0;
                } else if !self.req_empty.val() {
                    self.desc.d.next = self.req_data.val();
                    self.req_pop.next = true;
                    self.state.d.next = TxState::Hdr0;
                }
            }
            TxState::Hdr0 => {
                // A frame starts only when its payload is there: the DMA
                // front end releases a read whole, so no beat comes late.
                self.tx_valid.next = (self.padded.val() == 0) | self.pl_valid.val();
                self.tx_data.next = self.hdr.beat0.val();
                self.icrc.data.next = self.hdr.beat0.val();
                self.icrc.first.next = true;
                if self.tx_ready.val() & ((self.padded.val() == 0) | self.pl_valid.val()) {
                    self.crc.d.next = self.icrc.state_out.val();
                    self.state.d.next = TxState::Hdr1;
                }
            }
            TxState::Hdr1 => {
                self.tx_valid.next = true;
                self.tx_data.next = self.hdr.beat1.val();
                self.icrc.data.next = self.hdr.beat1.val();
                if self.tx_ready.val() {
                    self.crc.d.next = self.icrc.state_out.val();
                    self.rem.d.next = self.padded.val();
                    if self.padded.val() == 0 {
                        self.state.d.next = TxState::Tail;
                    } else {
                        self.state.d.next = TxState::Payload;
                    }
                }
            }
            TxState::Payload => {
                self.tx_valid.next = self.pl_valid.val();
                self.pl_ready.next = self.tx_ready.val();
                if self.rem.q.val() < 64 {
                    // Final beat: payload, then the ICRC right after it.
                    self.icrc.nbytes.next = self.rem.q.val().get_bits::<7>(0);
                    self.tx_data.next = self.pl_data.val()
                        | (bit_cast::<512, 32>(self.icrc_val.val()) << (bit_cast::<16, 16>(self.rem.q.val()) << 3));
                    self.tx_keep.next = (bits::<64>(1) << bit_cast::<64, 16>(self.rem.q.val() + 4)) - 1;
                    self.tx_last.next = true;
                }
                if self.pl_valid.val() & self.tx_ready.val() {
                    self.crc.d.next = self.icrc.state_out.val();
                    self.rem.d.next = self.rem.q.val() - 64;
                    if self.rem.q.val() < 64 {
                        self.sent_req.next = true;
                        self.state.d.next = TxState::Idle;
                    } else if self.rem.q.val() == 64 {
                        self.state.d.next = TxState::Tail;
                    }
                }
            }
            TxState::Tail => {
                self.tx_valid.next = true;
                self.tx_data.next = bit_cast::<512, 32>(!self.crc.q.val());
                self.tx_keep.next = 0xF.into();
                self.tx_last.next = true;
                if self.tx_ready.val() {
                    self.sent_req.next = !self.du.is_ack.val().any();
                    self.sent_ack.next = self.du.is_ack.val().any();
                    self.state.d.next = TxState::Idle;
                }
            }
            _ => {
                self.state.d.next = TxState::Idle;
            }
        }
    }
}
