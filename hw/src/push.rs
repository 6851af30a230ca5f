//! The WQE push slot: a send WQE (and up to 64 payload bytes) written
//! through the BAR with its doorbell (`rnic_spec::regs::PUSH_BASE`), so a
//! QP with nothing else to send starts its message without a PCIe read.
//!
//! One slot serves the NIC. Each push word written marks itself and drops a
//! committed WQE not yet taken; an SQ doorbell commits the slot as WQE
//! `PI - 1` of its QP if every word was written since the previous SQ
//! doorbell, and restarts the marks either way. The turn engine takes the
//! slot when the QP's next WQE is that index (`take`), and drops it when it
//! pops that WQE from a DMA fetch (also `take`); a QP commit drops it, so a
//! QPN's next life never sees a WQE of its last.

use crate::reg::Reg;
use rnic_spec::params::QPN_BITS;
use rnic_spec::regs::PUSH_WORDS;
use rust_hdl::prelude::*;

const _: () = assert!(PUSH_WORDS == 16, "push.rs holds 16 words");

// Eight words as one concatenation: a chain of wide shifts and ORs here would be
// copied by Verilator into every reader of each bit, a 64-lane mask included.
crate::pack_blocks!(Words8, Unwords8, 512, [w0: 64, w1: 64, w2: 64, w3: 64, w4: 64, w5: 64, w6: 64, w7: 64]);

/// The push slot.
#[derive(LogicBlock, Default)]
pub struct PushSlot {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: every register back to its power-on state.
    pub reset: Signal<In, Bit>,
    /// A push word is written.
    pub wr_valid: Signal<In, Bit>,
    /// Its index (0..8 the WQE, 8..16 the payload).
    pub wr_idx: Signal<In, Bits<4>>,
    /// The word.
    pub wr_data: Signal<In, Bits<64>>,
    /// An SQ doorbell.
    pub db_valid: Signal<In, Bit>,
    /// Its QPN.
    pub db_qpn: Signal<In, Bits<QPN_BITS>>,
    /// Its producer index (the pushed WQE is the one before it).
    pub db_pi: Signal<In, Bits<16>>,
    /// A QP commit: the slot is dropped.
    pub clear: Signal<In, Bit>,
    /// The turn engine takes (or drops) the committed WQE.
    pub take: Signal<In, Bit>,
    /// A committed WQE is held.
    pub valid: Signal<Out, Bit>,
    /// Its QPN.
    pub qpn: Signal<Out, Bits<QPN_BITS>>,
    /// Its SQ index (low 16 bits of the SSN).
    pub ssn: Signal<Out, Bits<16>>,
    /// The WQE.
    pub wqe: Signal<Out, Bits<512>>,
    /// The payload words (lane 0 first).
    pub payload: Signal<Out, Bits<512>>,
    v: Reg<Bit>,
    q_qpn: Reg<Bits<QPN_BITS>>,
    q_ssn: Reg<Bits<16>>,
    /// One bit per word written since the last SQ doorbell.
    marks: Reg<Bits<16>>,
    all_marks: Signal<Local, Bits<16>>,
    one16: Signal<Local, Bits<16>>,
    w0: Reg<Bits<64>>,
    w1: Reg<Bits<64>>,
    w2: Reg<Bits<64>>,
    w3: Reg<Bits<64>>,
    w4: Reg<Bits<64>>,
    w5: Reg<Bits<64>>,
    w6: Reg<Bits<64>>,
    w7: Reg<Bits<64>>,
    w8: Reg<Bits<64>>,
    w9: Reg<Bits<64>>,
    w10: Reg<Bits<64>>,
    w11: Reg<Bits<64>>,
    w12: Reg<Bits<64>>,
    w13: Reg<Bits<64>>,
    w14: Reg<Bits<64>>,
    w15: Reg<Bits<64>>,
    wqe_words: Words8,
    pl_words: Words8,
}

impl Logic for PushSlot {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, v, q_qpn, q_ssn, marks, w0, w1, w2, w3, w4, w5, w6, w7, w8, w9, w10, w11, w12, w13, w14, w15
        );
        self.v.reset.next = self.reset.val();
        self.q_qpn.reset.next = self.reset.val();
        self.q_ssn.reset.next = self.reset.val();
        self.marks.reset.next = self.reset.val();
        self.w0.reset.next = self.reset.val();
        self.w1.reset.next = self.reset.val();
        self.w2.reset.next = self.reset.val();
        self.w3.reset.next = self.reset.val();
        self.w4.reset.next = self.reset.val();
        self.w5.reset.next = self.reset.val();
        self.w6.reset.next = self.reset.val();
        self.w7.reset.next = self.reset.val();
        self.w8.reset.next = self.reset.val();
        self.w9.reset.next = self.reset.val();
        self.w10.reset.next = self.reset.val();
        self.w11.reset.next = self.reset.val();
        self.w12.reset.next = self.reset.val();
        self.w13.reset.next = self.reset.val();
        self.w14.reset.next = self.reset.val();
        self.w15.reset.next = self.reset.val();
        self.all_marks.next = 0xFFFF.into();
        self.one16.next = 1.into();
        self.valid.next = self.v.q.val();
        self.qpn.next = self.q_qpn.q.val();
        self.ssn.next = self.q_ssn.q.val();
        self.wqe_words.w0.next = self.w0.q.val();
        self.wqe_words.w1.next = self.w1.q.val();
        self.wqe_words.w2.next = self.w2.q.val();
        self.wqe_words.w3.next = self.w3.q.val();
        self.wqe_words.w4.next = self.w4.q.val();
        self.wqe_words.w5.next = self.w5.q.val();
        self.wqe_words.w6.next = self.w6.q.val();
        self.wqe_words.w7.next = self.w7.q.val();
        self.wqe.next = self.wqe_words.pword.val();
        self.pl_words.w0.next = self.w8.q.val();
        self.pl_words.w1.next = self.w9.q.val();
        self.pl_words.w2.next = self.w10.q.val();
        self.pl_words.w3.next = self.w11.q.val();
        self.pl_words.w4.next = self.w12.q.val();
        self.pl_words.w5.next = self.w13.q.val();
        self.pl_words.w6.next = self.w14.q.val();
        self.pl_words.w7.next = self.w15.q.val();
        self.payload.next = self.pl_words.pword.val();
        if self.take.val() | self.clear.val() {
            self.v.d.next = false;
        }
        if self.wr_valid.val() {
            self.v.d.next = false;
            self.marks.d.next = self.marks.q.val() | (self.one16.val() << bit_cast::<16, 4>(self.wr_idx.val()));
            match self.wr_idx.val().index() {
                0 => self.w0.d.next = self.wr_data.val(),
                1 => self.w1.d.next = self.wr_data.val(),
                2 => self.w2.d.next = self.wr_data.val(),
                3 => self.w3.d.next = self.wr_data.val(),
                4 => self.w4.d.next = self.wr_data.val(),
                5 => self.w5.d.next = self.wr_data.val(),
                6 => self.w6.d.next = self.wr_data.val(),
                7 => self.w7.d.next = self.wr_data.val(),
                8 => self.w8.d.next = self.wr_data.val(),
                9 => self.w9.d.next = self.wr_data.val(),
                10 => self.w10.d.next = self.wr_data.val(),
                11 => self.w11.d.next = self.wr_data.val(),
                12 => self.w12.d.next = self.wr_data.val(),
                13 => self.w13.d.next = self.wr_data.val(),
                14 => self.w14.d.next = self.wr_data.val(),
                15 => self.w15.d.next = self.wr_data.val(),
                _ => {}
            }
        }
        if self.db_valid.val() {
            self.marks.d.next = 0.into();
            if self.marks.q.val() == self.all_marks.val() {
                self.v.d.next = !self.clear.val();
                self.q_qpn.d.next = self.db_qpn.val();
                self.q_ssn.d.next = self.db_pi.val() - 1;
            }
        }
    }
}
