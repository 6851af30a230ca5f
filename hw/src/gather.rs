//! Gather join: puts the two pieces of a send packet gathered from two
//! scatter-gather entries back into one packed payload, between the DMA
//! read mux and the TX builder.
//!
//! The turn engine reads a packet that straddles its WQE's two entries as
//! two DMA reads tagged `dma_tag::SQ_GATHER`, A (the end of entry 0) then B
//! (the start of entry 1), each tag carrying its piece's length mod 64.
//! The read front end returns each packed from lane 0, zero past its
//! length. A's beats pass; when A's length is not a multiple of 64 its
//! last beat is held (`carry`), and every beat of B is rotated up by
//! `r` = A's length mod 64 lanes and merged with the lanes below `r` held
//! from the beat before. After B's last beat one more beat leaves when its
//! bytes spill past lane 63. Beats of other payload reads pass unchanged.
//!
//! A beat is rotated as it is taken and merged (or held, or passed) the
//! cycle after, from registers on both sides of the rotator.
//!
//! Everything goes through a FIFO of `JOIN_BEATS_LOG2` beats. Between A
//! and B the read front end may pause (it starts a read once all of it has
//! landed), and a MAC aborts a frame whose beats stop: so a gathered
//! packet's first beat is held at the FIFO's head until its last beat is
//! in the FIFO (store and forward for gathered packets only; the FIFO holds
//! two of the largest, so one fills while the other leaves).

use crate::fifo::Fifo;
use crate::mask::{ByteRotUp, LaneMerge};
use crate::num::Num;
use crate::reg::Reg;
use rnic_spec::params::{dma_tag, JOIN_BEATS_LOG2, PMTU_LOG2_MAX};
use rust_hdl::prelude::*;

/// FIFO word: data [511:0], the first beat of a gathered packet [512].
const BUF_BITS: usize = 513;

const _: () = assert!(JOIN_BEATS_LOG2 == 7 && (1usize << JOIN_BEATS_LOG2) >= 2 * ((1usize << PMTU_LOG2_MAX) / 64));
const _: () = assert!(dma_tag::SQ_GATHER == 0xC0);

/// The gather join.
#[derive(LogicBlock, Default)]
pub struct GatherJoin {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: every register and FIFO of the block back to its power-on state (block RAM contents are kept).
    pub reset: Signal<In, Bit>,
    /// A payload beat from the DMA read mux.
    pub in_valid: Signal<In, Bit>,
    /// The beat, packed from lane 0, zero past its read's length.
    pub in_data: Signal<In, Bits<512>>,
    /// Its read's tag (`dma_tag::SQ_PAYLOAD`, or `SQ_GATHER` with the piece's length mod 64).
    pub in_tag: Signal<In, Bits<8>>,
    /// The last beat of its read.
    pub in_last: Signal<In, Bit>,
    /// The beat is taken.
    pub in_ready: Signal<Out, Bit>,
    /// To the TX builder: a payload beat.
    pub pl_valid: Signal<Out, Bit>,
    /// The beat.
    pub pl_data: Signal<Out, Bits<512>>,
    /// The TX builder takes it.
    pub pl_ready: Signal<In, Bit>,
    beats: Fifo<Bits<BUF_BITS>, 7, 8>,
    /// Words in the FIFO (a write is taken only with room for it and a spill).
    cnt: Reg<Bits<8>>,
    room_max: Num<{ (1 << JOIN_BEATS_LOG2) - 4 }, 8>,
    /// 0: between packets (or in a plain read), 1: in piece A, 2: in piece B.
    ph: Reg<Bits<2>>,
    /// A's length mod 64: where B's first byte goes.
    r: Reg<Bits<6>>,
    /// No beat of the gathered packet has been written yet (the next written is its first).
    gfp: Reg<Bit>,
    /// B's last beat spills: no input is taken this cycle, and the spill is written the next.
    tail: Reg<Bit>,
    tail2: Reg<Bit>,
    /// Stage 2: a beat taken the cycle before, rotated up by `r` lanes if of B (the rotator alone
    /// between registers: flattened with the merge, it maps to a 64:1 mux per bit), with what to do:
    /// write it as it is (0), merged below `r` with the beat before (1), or hold it (2).
    s_v: Reg<Bit>,
    s_beat: Reg<Bits<512>>,
    s_kind: Reg<Bits<2>>,
    s_first: Reg<Bit>,
    s_done: Reg<Bit>,
    /// The beat stage 2 saw before (the held end of A, or B's previous beat rotated).
    prev: Reg<Bits<512>>,
    /// A gathered packet's last beat was written one and two cycles ago (the FIFO shows a write two edges late).
    done1: Reg<Bit>,
    done2: Reg<Bit>,
    /// Gathered packets whose last beat the FIFO shows and whose first has not left.
    gdone: Reg<Bits<8>>,
    take: Signal<Local, Bit>,
    gathered: Signal<Local, Bit>,
    rot: ByteRotUp,
    /// B's beat after the previous beat's lanes below `r`; and the previous beat's lanes below `r` alone (the spill).
    merge: LaneMerge,
    spilled: LaneMerge,
    /// B's last beat holds this many bytes (1..=64), and spills past lane 63 with them.
    nb: Signal<Local, Bits<7>>,
    spill: Signal<Local, Bit>,
    w_first: Signal<Local, Bit>,
    w_done: Signal<Local, Bit>,
    head_first: Signal<Local, Bit>,
    pop: Signal<Local, Bit>,
}

impl Logic for GatherJoin {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, cnt, ph, r, gfp, tail, tail2, s_v, s_beat, s_kind, s_first, s_done, prev, done1, done2, gdone
        );
        self.cnt.reset.next = self.reset.val();
        self.ph.reset.next = self.reset.val();
        self.r.reset.next = self.reset.val();
        self.gfp.reset.next = self.reset.val();
        self.tail.reset.next = self.reset.val();
        self.tail2.reset.next = self.reset.val();
        self.s_v.reset.next = self.reset.val();
        self.s_beat.reset.next = self.reset.val();
        self.s_kind.reset.next = self.reset.val();
        self.s_first.reset.next = self.reset.val();
        self.s_done.reset.next = self.reset.val();
        self.prev.reset.next = self.reset.val();
        self.done1.reset.next = self.reset.val();
        self.done2.reset.next = self.reset.val();
        self.gdone.reset.next = self.reset.val();
        clock!(self, clock, beats);
        self.beats.reset.next = self.reset.val();

        // Stage 1: take a beat, decide what becomes of it, rotate it if it is B's.
        self.in_ready.next = (self.cnt.q.val() < self.room_max.val()) & !self.tail.q.val();
        self.take.next = self.in_valid.val() & self.in_ready.val();
        self.gathered.next = self.in_tag.val().get_bits::<2>(6) == 3;
        self.rot.by.next = 0.into();
        if self.ph.q.val() == 2 {
            self.rot.by.next = self.r.q.val();
        }
        self.rot.data.next = self.in_data.val();
        self.nb.next = bit_cast::<7, 6>(self.in_tag.val().get_bits::<6>(0));
        if self.in_tag.val().get_bits::<6>(0) == 0 {
            self.nb.next = 64.into();
        }
        self.spill.next = (bit_cast::<8, 6>(self.r.q.val()) + bit_cast::<8, 7>(self.nb.val())) > 64;
        self.s_v.d.next = self.take.val();
        self.s_beat.d.next = self.rot.rotated.val();
        self.s_kind.d.next = 0.into();
        self.s_first.d.next = false;
        self.s_done.d.next = false;
        self.tail.d.next = false;
        if self.take.val() {
            if self.ph.q.val() == 2 {
                self.s_kind.d.next = 1.into();
                self.s_first.d.next = self.gfp.q.val();
                self.gfp.d.next = false;
                if self.in_last.val() {
                    self.ph.d.next = 0.into();
                    if (self.r.q.val() != 0) & self.spill.val() {
                        self.tail.d.next = true;
                    } else {
                        self.s_done.d.next = true;
                    }
                }
            } else if (self.ph.q.val() == 1) | self.gathered.val() {
                // Piece A: its beats pass, its last is held when B starts in it.
                if self.ph.q.val() == 0 {
                    self.r.d.next = self.in_tag.val().get_bits::<6>(0);
                    self.ph.d.next = 1.into();
                }
                self.s_first.d.next = self.gfp.q.val() | (self.ph.q.val() == 0);
                self.gfp.d.next = false;
                if self.in_last.val() {
                    self.ph.d.next = 2.into();
                    if ((self.ph.q.val() == 0) & (self.in_tag.val().get_bits::<6>(0) != 0))
                        | ((self.ph.q.val() == 1) & (self.r.q.val() != 0))
                    {
                        self.s_kind.d.next = 2.into();
                        self.s_first.d.next = false;
                        self.gfp.d.next = self.gfp.q.val() | (self.ph.q.val() == 0);
                    }
                }
            }
        }

        // Stage 2: write the beat (or the merge, or the spill) to the FIFO.
        self.merge.at.next = self.r.q.val();
        self.merge.lo.next = self.prev.q.val();
        self.merge.hi.next = self.s_beat.q.val();
        self.spilled.at.next = self.r.q.val();
        self.spilled.lo.next = self.prev.q.val();
        self.spilled.hi.next = 0.into();
        self.tail2.d.next = self.tail.q.val();
        self.beats.write.next = false;
        self.beats.data_in.next = bit_cast::<BUF_BITS, 512>(self.s_beat.q.val());
        self.w_first.next = false;
        self.w_done.next = false;
        if self.tail2.q.val() {
            self.beats.write.next = true;
            self.beats.data_in.next = bit_cast::<BUF_BITS, 512>(self.spilled.merged.val());
            self.w_done.next = true;
        } else if self.s_v.q.val() {
            self.prev.d.next = self.s_beat.q.val();
            self.beats.write.next = self.s_kind.q.val() != 2;
            if self.s_kind.q.val() == 1 {
                self.beats.data_in.next = bit_cast::<BUF_BITS, 512>(self.merge.merged.val());
            }
            self.w_first.next = self.s_first.q.val();
            self.w_done.next = self.s_done.q.val();
        }
        if self.w_first.val() {
            self.beats.data_in.next = self.beats.data_in.val() | (bits::<BUF_BITS>(1) << 512);
        }
        self.done1.d.next = self.w_done.val();
        self.done2.d.next = self.done1.q.val();

        // Out: a gathered packet's first beat waits until its last is in the FIFO.
        self.head_first.next = self.beats.data_out.val().get_bit(512);
        self.pl_valid.next = !self.beats.empty.val() & (!self.head_first.val() | (self.gdone.q.val() != 0));
        self.pl_data.next = self.beats.data_out.val().get_bits::<512>(0);
        self.pop.next = self.pl_valid.val() & self.pl_ready.val();
        self.beats.read.next = self.pop.val();
        if self.beats.write.val() & !self.pop.val() {
            self.cnt.d.next = self.cnt.q.val() + 1;
        }
        if !self.beats.write.val() & self.pop.val() {
            self.cnt.d.next = self.cnt.q.val() - 1;
        }
        if self.done2.q.val() & !(self.pop.val() & self.head_first.val()) {
            self.gdone.d.next = self.gdone.q.val() + 1;
        }
        if !self.done2.q.val() & (self.pop.val() & self.head_first.val()) {
            self.gdone.d.next = self.gdone.q.val() - 1;
        }
    }
}
