//! SRNIC's cache-free QP scheduler: one active bit per QP and a schedule
//! queue deep enough for every QP, so no doorbell is ever dropped.
//!
//! A doorbell on an inactive QP sets its active bit and appends its QPN to
//! the schedule queue; on an active QP (queued or in service) it only marks
//! the QP rung. The send engine pops QPNs for turns (`sched_*`) and reports
//! the end of each turn (`done_*`): the QP goes to the back of the schedule
//! queue if the engine has more to send or a doorbell rang since the pop,
//! else it becomes inactive and its next doorbell brings it back. A QP is
//! thus in the schedule queue at most once, and a doorbell that arrives while
//! the engine decides a QP is done is never lost (it makes the QP stay).
//!
//! A doorbell is taken in its own cycle, always. A turn end is taken in its
//! own cycle too, unless an earlier requeue is still held: a requeue that
//! meets a doorbell of an inactive QP (which writes the schedule queue in
//! that cycle) waits in a one-entry hold and is written in the next cycle
//! without such a doorbell. `done_ready` is thus a register: the active bit a
//! doorbell's QPN selects (a 256-way mux) never reaches the turn engine.

use crate::fifo::Fifo;
use crate::reg::Reg;
use rnic_spec::params::{NUM_QPS, QPN_BITS};
use rust_hdl::prelude::*;

/// The QP scheduler: active bits, rung bits and the schedule queue.
#[derive(LogicBlock, Default)]
pub struct Scheduler {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: every register and FIFO of the block back to its power-on state (block RAM contents are kept).
    pub reset: Signal<In, Bit>,
    /// SQ doorbell (the new producer index is already in the SQ PI table).
    pub db_valid: Signal<In, Bit>,
    /// QPN of the doorbell.
    pub db_qpn: Signal<In, Bits<QPN_BITS>>,
    /// A QP waits in the schedule queue.
    pub sched_valid: Signal<Out, Bit>,
    /// QPN at the head of the schedule queue.
    pub sched_qpn: Signal<Out, Bits<QPN_BITS>>,
    /// Pop the head (its turn starts; the QP stays active); only while `sched_valid`.
    pub sched_pop: Signal<In, Bit>,
    /// End of a turn of `done_qpn`.
    pub done_valid: Signal<In, Bit>,
    /// QPN whose turn ended.
    pub done_qpn: Signal<In, Bits<QPN_BITS>>,
    /// The engine has more to send for it.
    pub done_more: Signal<In, Bit>,
    /// The turn end is taken this cycle.
    pub done_ready: Signal<Out, Bit>,
    /// Some QP is active (queued or in service).
    pub busy: Signal<Out, Bit>,
    schedq: Fifo<Bits<QPN_BITS>, QPN_BITS, { QPN_BITS + 1 }>,
    active: Reg<Bits<NUM_QPS>>,
    rung: Reg<Bits<NUM_QPS>>,
    db_new: Signal<Local, Bit>,
    requeue: Signal<Local, Bit>,
    /// The turn end is taken (`done_valid & done_ready`).
    take: Signal<Local, Bit>,
    /// The turn end taken this cycle puts its QP back into the schedule queue.
    requeue_now: Signal<Local, Bit>,
    /// A requeue waits for a cycle without a new doorbell's write.
    held: Reg<Bit>,
    /// QPN of the held requeue.
    held_qpn: Reg<Bits<QPN_BITS>>,
    one: Signal<Local, Bits<NUM_QPS>>,
    /// One-hot: the doorbell's QP (all zero without a doorbell).
    db_hot: Signal<Local, Bits<NUM_QPS>>,
    /// One-hot: the popped QP (all zero without a pop).
    pop_hot: Signal<Local, Bits<NUM_QPS>>,
    /// One-hot: the QP whose turn ends.
    done_hot: Signal<Local, Bits<NUM_QPS>>,
    active_next: Signal<Local, Bits<NUM_QPS>>,
    rung_next: Signal<Local, Bits<NUM_QPS>>,
}

// The schedule queue holds 2^QPN_BITS QPNs: one entry per QP.
const _: () = assert!(NUM_QPS == 1 << QPN_BITS);

impl Logic for Scheduler {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, active, rung, held, held_qpn);
        self.active.reset.next = self.reset.val();
        self.rung.reset.next = self.reset.val();
        self.held.reset.next = self.reset.val();
        self.held_qpn.reset.next = self.reset.val();
        clock!(self, clock, schedq);
        self.schedq.reset.next = self.reset.val();
        self.sched_valid.next = !self.schedq.empty.val();
        self.sched_qpn.next = self.schedq.data_out.val();
        self.schedq.read.next = self.sched_pop.val();
        self.busy.next = self.active.q.val().any();
        self.db_new.next = self.db_valid.val() & !self.active.q.val().get_bit(self.db_qpn.val().index());
        self.done_ready.next = !self.held.q.val();
        self.requeue.next = self.done_more.val()
            | self.rung.q.val().get_bit(self.done_qpn.val().index())
            | (self.db_valid.val() & (self.db_qpn.val() == self.done_qpn.val()));
        self.take.next = self.done_valid.val() & !self.held.q.val();
        self.requeue_now.next = self.take.val() & self.requeue.val();
        // One write per cycle: a new doorbell's QPN, else the held requeue, else this cycle's.
        self.schedq.write.next = self.db_new.val() | self.held.q.val() | self.requeue_now.val();
        self.schedq.data_in.next = self.done_qpn.val();
        if self.held.q.val() {
            self.schedq.data_in.next = self.held_qpn.q.val();
        }
        if self.db_new.val() {
            self.schedq.data_in.next = self.db_qpn.val();
        }
        self.held.d.next = self.held.q.val();
        self.held_qpn.d.next = self.held_qpn.q.val();
        if !self.db_new.val() {
            self.held.d.next = false;
        }
        if self.db_new.val() & self.requeue_now.val() {
            self.held.d.next = true;
            self.held_qpn.d.next = self.done_qpn.val();
        }
        // The bit vectors are updated bit by bit from one-hot codes: only the
        // turn end's take depends on the active bit the doorbell's QPN selects.
        self.one.next = 1.into();
        self.db_hot.next = 0.into();
        if self.db_valid.val() {
            self.db_hot.next = self.one.val() << self.db_qpn.val();
        }
        self.pop_hot.next = 0.into();
        if self.schedq.read.val() {
            self.pop_hot.next = self.one.val() << self.schedq.data_out.val();
        }
        self.done_hot.next = self.one.val() << self.done_qpn.val();
        // A doorbell activates its QP (no change if active) and rings it if it was
        // active already; a pop means doorbells from now on are news to the engine.
        self.active_next.next = self.active.q.val() | self.db_hot.val();
        self.rung_next.next = (self.rung.q.val() & !self.pop_hot.val()) | (self.db_hot.val() & self.active.q.val());
        if self.take.val() {
            self.rung_next.next = self.rung_next.val() & !self.done_hot.val();
            if !self.requeue.val() {
                self.active_next.next = self.active_next.val() & !self.done_hot.val();
            }
        }
        self.active.d.next = self.active_next.val();
        self.rung.d.next = self.rung_next.val();
    }
}
