//! RX front end: store-and-forward. Header beats are held in registers,
//! payload beats go into the RX ring; the ICRC and the headers are checked
//! as the frame arrives, and only a frame that passes is handed to the
//! responder (as a descriptor pointing into the ring). A bad or unbufferable
//! frame is rewound out of the ring and counted: nothing of it reaches host
//! memory.
//!
//! Pipelined for timing: what the IPv4 header says about the frame's end
//! (last beat, its byte count, the header checks) is registered at beat 1;
//! each beat's ICRC contribution is registered before it is folded into
//! the state; a frame's verdict comes two cycles after its last beat (the
//! padded last beat undone in two steps, then the compare). The next
//! frame's first ring write is at its beat 2, so a rewind always lands
//! before it; the descriptor is held in a register until the verdict.

use crate::desc::{RxDescPack, RXD_BITS};
use crate::hdr::{IpSumA, IpSumB, RxHeader};
use crate::icrc::{IcrcData, IcrcFold, IcrcFoldUnpadLo, IcrcPadHi};
use crate::reg::Reg;
use rnic_spec::params::{PMTU_LOG2_MAX, RX_BUF_BEATS_LOG2};
use rnic_spec::wire::{HDR_LEN, ICRC_LEN};
use rust_hdl::prelude::*;

/// The RX front end.
#[derive(LogicBlock, Default)]
pub struct RxIn {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: every register and FIFO of the block back to its power-on state (block RAM contents are kept).
    pub reset: Signal<In, Bit>,
    /// Frame beat valid.
    pub rx_valid: Signal<In, Bit>,
    /// Frame beat.
    pub rx_data: Signal<In, Bits<512>>,
    /// Last beat of the frame.
    pub rx_last: Signal<In, Bit>,
    /// Byte enables of the beat (contiguous from lane 0).
    pub rx_keep: Signal<In, Bits<64>>,
    /// Ring write enable.
    pub ring_we: Signal<Out, Bit>,
    /// Ring write address.
    pub ring_waddr: Signal<Out, Bits<10>>,
    /// Ring write data.
    pub ring_wdata: Signal<Out, Bits<512>>,
    /// This NIC's MAC: frames for another are dropped.
    pub my_mac: Signal<In, Bits<48>>,
    /// This NIC's IPv4 address: frames for another are dropped.
    pub my_ip: Signal<In, Bits<32>>,
    /// Responder's ring read pointer (space is free behind it).
    pub rptr: Signal<In, Bits<10>>,
    /// Ready for the next beat: low between frames while the ring or the
    /// descriptor FIFO cannot take a maximum frame (the MAC turns this into
    /// a pause upstream; without one, frames are dropped and counted).
    pub rx_ready: Signal<Out, Bit>,
    /// Descriptor FIFO write.
    pub desc_write: Signal<Out, Bit>,
    /// Descriptor.
    pub desc_data: Signal<Out, Bits<RXD_BITS>>,
    /// Descriptor FIFO almost full.
    pub desc_afull: Signal<In, Bit>,
    /// Pulse: frame received.
    pub cnt_frame: Signal<Out, Bit>,
    /// Pulse: ICRC error.
    pub cnt_icrc: Signal<Out, Bit>,
    /// Pulse: header/length error.
    pub cnt_hdr: Signal<Out, Bit>,
    /// Pulse: dropped, no buffer.
    pub cnt_nobuf: Signal<Out, Bit>,
    beat: Reg<Bits<16>>,
    hdr0: Reg<Bits<512>>,
    hdr1: Reg<Bits<512>>,
    /// ICRC state through the beat before the previous one, and the previous beat's contribution.
    crc: Reg<Bits<32>>,
    dcon: Reg<Bits<32>>,
    dfirst: Reg<Bit>,
    wstart: Reg<Bits<10>>,
    wptr: Reg<Bits<10>>,
    dropping: Reg<Bit>,
    too_long: Reg<Bit>,
    /// From the IPv4 header at beat 1: frame length - 1, the last beat's ICRC-covered lanes, the header checks.
    fl1: Reg<Bits<16>>,
    lastm: Reg<Bits<64>>,
    hdr_ok: Reg<Bit>,
    /// The beat now is the frame's last by its IPv4 length (beat >= 2 and beat == last_idx), kept as the beat counts.
    at_last: Reg<Bit>,
    len_ok: Signal<Local, Bit>,
    /// Verdict pipeline: step 1 (the cycle after a last beat), step 2 (the verdict).
    ck1_v: Reg<Bit>,
    ck1_good: Reg<Bit>,
    ck1_drop: Reg<Bit>,
    ck1_z: Reg<Bit>,
    ck1_k: Reg<Bits<6>>,
    ck1_rxi: Reg<Bits<32>>,
    ck2_v: Reg<Bit>,
    ck2_good: Reg<Bit>,
    ck2_drop: Reg<Bit>,
    ck2_x: Reg<Bits<32>>,
    ck2_rxi: Reg<Bits<32>>,
    /// The descriptor of the last frame that passed its header checks.
    ck_desc: Reg<Bits<RXD_BITS>>,
    hv: RxHeader,
    ipa: IpSumA,
    ipb: IpSumB,
    /// Beat 0's IPv4 header words, carry-save reduced to four.
    ip_part: Reg<Bits<64>>,
    /// A beat was taken since the frame's start (beat != 0).
    in_frame: Reg<Bit>,
    icrc_d: IcrcData,
    icrc_f: IcrcFold,
    unpad_lo: IcrcFoldUnpadLo,
    pad_hi: IcrcPadHi,
    pack: RxDescPack,
    fl1_c: Signal<Local, Bits<16>>,
    nl4_c: Signal<Local, Bits<7>>,
    frame_len: Signal<Local, Bits<16>>,
    last_idx: Signal<Local, Bits<16>>,
    kq: Signal<Local, Bits<4>>,
    kq_neg: Signal<Local, Bits<4>>,
    rx_icrc: Signal<Local, Bits<32>>,
    used: Signal<Local, Bits<10>>,
    room: Signal<Local, Bit>,
    good: Signal<Local, Bit>,
    icrc_ok: Signal<Local, Bit>,
    icrc_sh: Signal<Local, Bits<512>>,
    plen16: Signal<Local, Bits<16>>,
    hdr_ok_c: Signal<Local, Bit>,
    nb16: Signal<Local, Bits<16>>,
    keep_ok: Signal<Local, Bit>,
    ones64: Signal<Local, Bits<64>>,
}

/// Beats of the longest legal frame: two header beats, then a PMTU-sized
/// payload with pad and ICRC. Beats past it are not stored (the frame is
/// dropped), so no frame can overrun the ring space reserved for it.
pub const RX_MAX_BEATS: u64 = 2 + ((1u64 << PMTU_LOG2_MAX) + ICRC_LEN as u64).div_ceil(64);
/// Ring slots that must be free before a frame is admitted.
const RX_ADMIT_SLOTS: u64 = RX_MAX_BEATS - 2;
// The HDL below uses these values as literals.
const _: () = assert!(RX_MAX_BEATS == 67 && RX_ADMIT_SLOTS == 65 && (1 << RX_BUF_BEATS_LOG2) - 958 > RX_ADMIT_SLOTS);
const _: () = assert!(HDR_LEN == 128 && ICRC_LEN == 4 && PMTU_LOG2_MAX == 12);

impl Logic for RxIn {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, beat, hdr0, hdr1, crc, dcon, dfirst, wstart, wptr, dropping, too_long, fl1, lastm, hdr_ok,
            ck1_v, ck1_good, ck1_drop, ck1_z, ck1_k, ck1_rxi, ck2_v, ck2_good, ck2_drop, ck2_x, ck2_rxi, at_last,
            ip_part, in_frame, ck_desc
        );
        self.beat.reset.next = self.reset.val();
        self.hdr0.reset.next = self.reset.val();
        self.hdr1.reset.next = self.reset.val();
        self.crc.reset.next = self.reset.val();
        self.dcon.reset.next = self.reset.val();
        self.dfirst.reset.next = self.reset.val();
        self.wstart.reset.next = self.reset.val();
        self.wptr.reset.next = self.reset.val();
        self.dropping.reset.next = self.reset.val();
        self.too_long.reset.next = self.reset.val();
        self.fl1.reset.next = self.reset.val();
        self.lastm.reset.next = self.reset.val();
        self.hdr_ok.reset.next = self.reset.val();
        self.ck1_v.reset.next = self.reset.val();
        self.ck1_good.reset.next = self.reset.val();
        self.ck1_drop.reset.next = self.reset.val();
        self.ck1_z.reset.next = self.reset.val();
        self.ck1_k.reset.next = self.reset.val();
        self.ck1_rxi.reset.next = self.reset.val();
        self.ck2_v.reset.next = self.reset.val();
        self.ck2_good.reset.next = self.reset.val();
        self.ck2_drop.reset.next = self.reset.val();
        self.ck2_x.reset.next = self.reset.val();
        self.at_last.reset.next = self.reset.val();
        self.ip_part.reset.next = self.reset.val();
        self.in_frame.reset.next = self.reset.val();
        self.ipa.beat0.next = self.rx_data.val();
        self.ipb.part.next = self.ip_part.q.val();
        self.ipb.beat0.next = self.hdr0.q.val();
        self.ck2_rxi.reset.next = self.reset.val();
        self.ck_desc.reset.next = self.reset.val();
        self.hv.beat0.next = self.hdr0.q.val();
        self.hv.beat1.next = self.hdr1.q.val();
        self.ones64.next = 0xFFFF_FFFF_FFFF_FFFF_u64.into();
        // Beat 1: the frame's end from the IPv4 length in header beat 0.
        self.fl1_c.next = self.hv.ip_len.val() + 13;
        self.nl4_c.next = bit_cast::<7, 6>(self.fl1_c.val().get_bits::<6>(0)) - 3;
        self.frame_len.next = self.hv.ip_len.val() + 14;
        self.plen16.next = self.frame_len.val() - 132 - bit_cast::<16, 2>(self.hv.pad.val());
        // frame_len >= 132, frame_len - 132 >= pad, plen16 <= 4096 and frame_len a multiple of 4, on the IPv4
        // length L itself (frame_len = L + 14; L = 2 mod 4 leaves 118 + pad <= L <= 4214 + pad as below).
        self.len_ok.next = (self.hv.ip_len.val().get_bits::<2>(0) == 2)
            & (self.hv.ip_len.val() <= 4214)
            & ((self.hv.ip_len.val() >= 122) | ((self.hv.pad.val() == 0) & (self.hv.ip_len.val() >= 118)));
        // Everything a frame must be before its payload may reach memory:
        // RoCEv2 to this NIC, a correct IPv4 header, UDP and IP lengths that
        // agree, room for header and ICRC, a pad no larger than what follows
        // the header, and a payload of at most the largest PMTU.
        self.hdr_ok_c.next = self.hv.is_roce.val()
            & self.ipb.ip_ok.val()
            & (self.hv.dst_mac.val() == self.my_mac.val())
            & (self.hv.dst_ip.val() == self.my_ip.val())
            & (self.hv.udp_len.val() == self.hv.ip_len.val() - 20)
            & self.len_ok.val();
        // From beat 2 on, from the registers.
        self.last_idx.next = self.fl1.q.val() >> 6;
        // The last beat must carry the last byte the IPv4 length claims: a
        // frame cut short inside its last beat would have the ICRC read from
        // lanes past its end.
        self.keep_ok.next = self.rx_keep.val().get_bit(self.fl1.q.val().get_bits::<6>(0).index());
        // The ICRC's lane in the last beat, in 4-byte steps (a legal frame's length is a multiple of 4).
        self.kq.next = self.fl1.q.val().get_bits::<4>(2);
        // Pad bytes of the last beat, 64 - 4 kq, mod 64 (kq = 0: the beat holds only the ICRC; the state before it is the one to check).
        self.kq_neg.next = !self.kq.val() + 1;
        self.icrc_sh.next = self.rx_data.val() >> (bit_cast::<512, 4>(self.kq.val()) << 5);
        self.rx_icrc.next = self.icrc_sh.val().get_bits::<32>(0);
        self.used.next = self.wptr.q.val() - self.rptr.val();
        // Room for a maximum frame's payload beats (4096 B + ICRC = 65 beats), and a descriptor slot.
        self.room.next = (self.used.val() < 958) & !self.desc_afull.val();
        self.rx_ready.next = self.room.val() | (self.beat.q.val() != 0);
        self.icrc_d.data.next = self.rx_data.val();
        self.icrc_d.first.next = !self.in_frame.q.val();
        self.icrc_d.keep.next = self.ones64.val();
        if self.at_last.q.val() {
            self.icrc_d.keep.next = self.lastm.q.val();
        }
        self.icrc_f.state.next = self.crc.q.val();
        self.icrc_f.d.next = self.dcon.q.val();
        self.icrc_f.first.next = self.dfirst.q.val();
        self.ring_we.next = false;
        self.ring_waddr.next = self.wptr.q.val();
        self.ring_wdata.next = self.rx_data.val();
        self.desc_write.next = false;
        self.cnt_frame.next = false;
        self.cnt_icrc.next = false;
        self.cnt_hdr.next = false;
        self.cnt_nobuf.next = false;
        self.good.next = false;
        self.pack.opcode.next = self.hv.opcode.val();
        self.pack.dqpn.next = self.hv.dqpn.val();
        self.pack.psn.next = self.hv.psn.val();
        self.pack.ack_req.next = self.hv.ack_req.val().into();
        self.pack.va.next = self.hv.va.val();
        self.pack.rkey.next = self.hv.rkey.val();
        self.pack.msg_len.next = self.hv.msg_len.val();
        self.pack.ssn.next = self.hv.ssn.val();
        self.pack.psn_offset.next = self.hv.psn_offset.val();
        self.pack.ts.next = self.hv.ts.val();
        self.pack.syndrome.next = self.hv.syndrome.val();
        self.pack.msn.next = self.hv.msn.val();
        self.pack.imm.next = self.hv.imm.val();
        self.pack.laddr.next = self.hv.laddr.val();
        self.pack.lkey.next = self.hv.lkey.val();
        self.pack.rsn.next = self.hv.rsn.val();
        self.pack.src_mac.next = self.hv.src_mac.val();
        self.pack.src_ip.next = self.hv.src_ip.val();
        self.pack.sport.next = self.hv.sport.val();
        self.pack.ecn.next = self.hv.ecn.val();
        self.pack.plen.next = self.plen16.val().get_bits::<13>(0);
        self.nb16.next = self.last_idx.val() - 1;
        self.pack.nbeats.next = self.nb16.val().get_bits::<7>(0);
        self.pack.rptr.next = self.wstart.q.val();
        self.desc_data.next = self.ck_desc.q.val();
        // Verdict step 1: the padded last beat folded in and half undone (no pad: the state before it).
        self.ck1_v.d.next = false;
        self.ck2_v.d.next = self.ck1_v.q.val();
        self.ck2_good.d.next = self.ck1_good.q.val();
        self.ck2_drop.d.next = self.ck1_drop.q.val();
        // The received ICRC taken the other way through the second unpad half, a stage early:
        // A^-m x = ~rxi exactly when x = A^m ~rxi.
        self.pad_hi.state.next = !self.ck1_rxi.q.val();
        self.pad_hi.k.next = self.ck1_k.q.val();
        self.ck2_rxi.d.next = self.pad_hi.state_out.val();
        self.unpad_lo.state.next = self.crc.q.val();
        self.unpad_lo.d.next = self.dcon.q.val();
        self.unpad_lo.first.next = self.dfirst.q.val();
        self.unpad_lo.k.next = self.ck1_k.q.val();
        self.ck2_x.d.next = self.unpad_lo.state_out.val();
        if self.ck1_z.q.val() {
            self.ck2_x.d.next = self.crc.q.val();
        }
        // Verdict step 2.
        self.icrc_ok.next = self.ck2_x.q.val() == self.ck2_rxi.q.val();
        if self.rx_valid.val() & self.rx_ready.val() {
            if self.beat.q.val() != 0xFFFF {
                self.beat.d.next = self.beat.q.val() + 1;
            }
            // Beat 1 to 2: last_idx from this beat's fl1 is 2 (IPv4 length 115..=178); later, the next beat is last_idx.
            self.at_last.d.next =
                (self.beat.q.val() == self.nb16.val()) & (self.beat.q.val() >= 2) & (self.beat.q.val() != 0xFFFF);
            if self.beat.q.val() == 1 {
                self.at_last.d.next = (self.hv.ip_len.val() >= 115) & (self.hv.ip_len.val() < 179);
            }
            self.crc.d.next = self.icrc_f.state_out.val();
            self.dcon.d.next = self.icrc_d.d.val();
            self.dfirst.d.next = !self.in_frame.q.val();
            self.in_frame.d.next = true;
            if self.beat.q.val() == 0 {
                self.hdr0.d.next = self.rx_data.val();
                self.ip_part.d.next = self.ipa.part.val();
                self.dropping.d.next = !self.room.val();
                self.too_long.d.next = false;
            } else if self.beat.q.val() == 1 {
                self.hdr1.d.next = self.rx_data.val();
                self.fl1.d.next = self.fl1_c.val();
                self.lastm.d.next = !(self.ones64.val() << bit_cast::<64, 7>(self.nl4_c.val()));
                self.hdr_ok.d.next = self.hdr_ok_c.val();
            } else if self.beat.q.val() >= 67 {
                self.too_long.d.next = true;
            } else {
                self.ring_we.next = !self.dropping.q.val();
                self.wptr.d.next = self.wptr.q.val() + 1;
            }
            if self.rx_last.val() {
                self.beat.d.next = 0.into();
                self.at_last.d.next = false;
                self.in_frame.d.next = false;
                self.cnt_frame.next = true;
                self.good.next = (self.beat.q.val() >= 2)
                    & (self.beat.q.val() < 67)
                    & (!self.too_long.q.val())
                    & self.hdr_ok.q.val()
                    & self.at_last.q.val()
                    & self.keep_ok.val()
                    & (!self.dropping.q.val());
                self.ck1_v.d.next = true;
                self.ck1_good.d.next = self.good.val();
                self.ck1_drop.d.next = self.dropping.q.val();
                self.ck1_z.d.next = self.kq.val() == 0;
                self.ck1_k.d.next = bit_cast::<6, 4>(self.kq_neg.val()) << 2;
                self.ck1_rxi.d.next = self.rx_icrc.val();
                if self.good.val() {
                    self.ck_desc.d.next = self.pack.pword.val();
                }
            }
        }
        // The verdict, two cycles after the last beat: before the next frame's first ring write (its beat 2).
        if self.ck2_v.q.val() {
            if self.ck2_good.q.val() & self.icrc_ok.val() {
                self.desc_write.next = true;
                self.wstart.d.next = self.wptr.q.val();
            } else {
                self.wptr.d.next = self.wstart.q.val();
                if self.ck2_drop.q.val() {
                    self.cnt_nobuf.next = true;
                } else if self.ck2_good.q.val() {
                    self.cnt_icrc.next = true;
                } else {
                    self.cnt_hdr.next = true;
                }
            }
        }
    }
}
