//! WQE fetch: SRNIC's fetch of up to n WQEs per turn, with no per-QP cache.
//!
//! One 32-entry WQE buffer serves the whole send path. The turn engine asks
//! for a batch of the current QP (`fetch_cur`: at the first WQE not yet
//! held, buffered or in flight) or of the looked-ahead QP (`fetch_la`: at its
//! SQ consumer index). A batch is up to SCHED_WQES_PER_TURN WQEs, no more
//! than are posted, than the buffer can still take, or than are left before
//! the ring's end; it is one DMA read. Completion beats arrive in request
//! order, so the buffer holds the current QP's WQEs first, then the
//! lookahead's: `nbuf`/`pf_beats` count the current QP's buffered and
//! in-flight WQEs, `nbuf2`/`pf2` the lookahead's. `swap` makes the
//! lookahead's WQEs the current QP's (its turn starts; the current QP's
//! must be gone by then). WQEs the turn engine does not use are popped and
//! dropped (a turn ends with them still buffered or in flight).

use crate::fifo::Fifo;
use crate::num::Num;
use crate::reg::Reg;
use rnic_spec::params::{dma_tag, SCHED_WQES_PER_TURN};
use rust_hdl::prelude::*;

/// The WQE fetch block.
#[derive(LogicBlock, Default)]
pub struct WqeFetch {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: every register and FIFO of the block back to its power-on state (block RAM contents are kept).
    pub reset: Signal<In, Bit>,
    /// Current QP: SQ ring base (bus address).
    pub cur_base: Signal<In, Bits<64>>,
    /// Current QP: log2 of the ring's WQE count.
    pub cur_log2: Signal<In, Bits<8>>,
    /// Current QP: SQ consumer index (SSN, low 16 bits).
    pub cur_ssn: Signal<In, Bits<16>>,
    /// Current QP: SQ producer index.
    pub cur_pi: Signal<In, Bits<16>>,
    /// The turn engine holds the WQE at `cur_ssn` (popped, being segmented).
    pub held: Signal<In, Bit>,
    /// Lookahead QP: SQ ring base.
    pub la_base: Signal<In, Bits<64>>,
    /// Lookahead QP: log2 of the ring's WQE count.
    pub la_log2: Signal<In, Bits<8>>,
    /// Lookahead QP: SQ consumer index (low 16 bits).
    pub la_ssn: Signal<In, Bits<16>>,
    /// Lookahead QP: SQ producer index.
    pub la_pi: Signal<In, Bits<16>>,
    /// Request a batch of the current QP (held until `fetch_taken`).
    pub fetch_cur: Signal<In, Bit>,
    /// Request a batch of the lookahead QP (held until `fetch_taken`).
    pub fetch_la: Signal<In, Bit>,
    /// The batch's DMA read was accepted this cycle.
    pub fetch_taken: Signal<Out, Bit>,
    /// DMA read request valid.
    pub rd_valid: Signal<Out, Bit>,
    /// DMA read request ready.
    pub rd_ready: Signal<In, Bit>,
    /// DMA read address.
    pub rd_addr: Signal<Out, Bits<64>>,
    /// DMA read length.
    pub rd_len: Signal<Out, Bits<16>>,
    /// DMA read tag.
    pub rd_tag: Signal<Out, Bits<8>>,
    /// WQE completion beat valid.
    pub wqe_valid: Signal<In, Bit>,
    /// WQE completion beat.
    pub wqe_data: Signal<In, Bits<512>>,
    /// WQE completion ready.
    pub wqe_ready: Signal<Out, Bit>,
    /// A WQE is at the buffer's head.
    pub head_valid: Signal<Out, Bit>,
    /// The WQE at the buffer's head.
    pub head: Signal<Out, Bits<512>>,
    /// Take (or drop) the head; only while `head_valid`.
    pub pop: Signal<In, Bit>,
    /// The lookahead QP's WQEs become the current QP's.
    pub swap: Signal<In, Bit>,
    /// The current QP has WQEs buffered or in flight.
    pub cur_owed: Signal<Out, Bit>,
    /// The current QP has WQEs in flight.
    pub cur_inflight: Signal<Out, Bit>,
    /// The buffer can take a whole batch.
    pub room: Signal<Out, Bit>,
    /// A `fetch_cur` now would fetch at least one WQE.
    pub can_fetch: Signal<Out, Bit>,
    wqeq: Fifo<Bits<512>, 5, 6>,
    nbuf: Reg<Bits<6>>,
    pf_beats: Reg<Bits<6>>,
    nbuf2: Reg<Bits<6>>,
    pf2: Reg<Bits<6>>,
    base: Signal<Local, Bits<64>>,
    log2: Signal<Local, Bits<8>>,
    start: Signal<Local, Bits<16>>,
    mask: Signal<Local, Bits<16>>,
    pending: Signal<Local, Bits<16>>,
    ring_room: Signal<Local, Bits<17>>,
    log2_16: Signal<Local, Bits<8>>,
    /// Free buffer entries (0..=32).
    nroom: Signal<Local, Bits<7>>,
    /// The batch's bounds, each at most 32: the buffer's room against n, the WQEs posted, those before the ring's end.
    cap: Signal<Local, Bits<7>>,
    pend_cap: Signal<Local, Bits<7>>,
    ring_cap: Signal<Local, Bits<7>>,
    nfetch: Signal<Local, Bits<7>>,
    fetch_bytes: Signal<Local, Bits<32>>,
    pf_add: Signal<Local, Bits<6>>,
    pf_sub: Signal<Local, Bits<6>>,
    pf2_add: Signal<Local, Bits<6>>,
    b_in: Signal<Local, Bit>,
    tag_sq_wqe: Num<{ dma_tag::SQ_WQE as u64 }, 8>,
    /// SRNIC's n: WQEs fetched per batch.
    wqes_per_turn: Num<{ SCHED_WQES_PER_TURN as u64 }, 7>,
    full_batch: Num<32, 7>,
}

impl Logic for WqeFetch {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, nbuf, pf_beats, nbuf2, pf2);
        self.nbuf.reset.next = self.reset.val();
        self.pf_beats.reset.next = self.reset.val();
        self.nbuf2.reset.next = self.reset.val();
        self.pf2.reset.next = self.reset.val();
        clock!(self, clock, wqeq);
        self.wqeq.reset.next = self.reset.val();
        // The batch: the lookahead's at its consumer index, or the current
        // QP's after the WQE held, those buffered and those in flight.
        self.base.next = self.cur_base.val();
        self.log2.next = self.cur_log2.val();
        self.start.next = self.cur_ssn.val()
            + bit_cast::<16, 6>(self.nbuf.q.val())
            + bit_cast::<16, 6>(self.pf_beats.q.val())
            + bit_cast::<16, 1>(self.held.val().into());
        if self.fetch_la.val() {
            self.base.next = self.la_base.val();
            self.log2.next = self.la_log2.val();
            self.start.next = self.la_ssn.val();
        }
        self.mask.next = (bits::<16>(1) << bit_cast::<16, 8>(self.log2.val())) - 1;
        if self.fetch_la.val() {
            self.pending.next = self.la_pi.val() - self.la_ssn.val();
        } else {
            // One sum, not the start's sum then a subtract.
            self.pending.next = self.cur_pi.val()
                - self.cur_ssn.val()
                - bit_cast::<16, 6>(self.nbuf.q.val())
                - bit_cast::<16, 6>(self.pf_beats.q.val())
                - bit_cast::<16, 1>(self.held.val().into());
        }
        // A ring of 2^16 WQEs or more (the 16-bit indices cover 2^16) counts as 2^16.
        self.log2_16.next = self.log2.val();
        if self.log2.val() > 16 {
            self.log2_16.next = 16.into();
        }
        self.ring_room.next = (bits::<17>(1) << bit_cast::<17, 8>(self.log2_16.val()))
            - bit_cast::<17, 16>(self.start.val() & self.mask.val());
        self.nroom.next = self.full_batch.val()
            - bit_cast::<7, 6>(self.nbuf.q.val())
            - bit_cast::<7, 6>(self.pf_beats.q.val())
            - bit_cast::<7, 6>(self.nbuf2.q.val())
            - bit_cast::<7, 6>(self.pf2.q.val());
        // The three bounds are capped at n (at most 32) side by side, then the least is taken.
        self.cap.next = self.wqes_per_turn.val();
        if self.nroom.val() < self.wqes_per_turn.val() {
            self.cap.next = self.nroom.val();
        }
        self.pend_cap.next = self.wqes_per_turn.val();
        if self.pending.val() < bit_cast::<16, 7>(self.wqes_per_turn.val()) {
            self.pend_cap.next = self.pending.val().get_bits::<7>(0);
        }
        self.ring_cap.next = self.wqes_per_turn.val();
        if self.ring_room.val() < bit_cast::<17, 7>(self.wqes_per_turn.val()) {
            self.ring_cap.next = self.ring_room.val().get_bits::<7>(0);
        }
        self.nfetch.next = self.cap.val();
        if (self.pend_cap.val() <= self.cap.val()) & (self.pend_cap.val() <= self.ring_cap.val()) {
            self.nfetch.next = self.pend_cap.val();
        } else if self.ring_cap.val() <= self.cap.val() {
            self.nfetch.next = self.ring_cap.val();
        }
        self.rd_valid.next = self.fetch_cur.val() | self.fetch_la.val();
        self.rd_addr.next = self.base.val() + (bit_cast::<64, 16>(self.start.val() & self.mask.val()) << 6);
        self.fetch_bytes.next = bit_cast::<32, 7>(self.nfetch.val()) << 6;
        self.rd_len.next = self.fetch_bytes.val().get_bits::<16>(0);
        self.rd_tag.next = self.tag_sq_wqe.val();
        self.fetch_taken.next = self.rd_valid.val() & self.rd_ready.val();
        self.pf_add.next = 0.into();
        self.pf2_add.next = 0.into();
        if self.fetch_taken.val() {
            if self.fetch_la.val() {
                self.pf2_add.next = self.nfetch.val().get_bits::<6>(0);
            } else {
                self.pf_add.next = self.nfetch.val().get_bits::<6>(0);
            }
        }
        self.cur_owed.next = (self.nbuf.q.val() != 0) | (self.pf_beats.q.val() != 0);
        self.cur_inflight.next = self.pf_beats.q.val() != 0;
        self.room.next = self.nroom.val() >= self.wqes_per_turn.val();
        self.can_fetch.next = self.nfetch.val() != 0;
        self.head_valid.next = !self.wqeq.empty.val();
        self.head.next = self.wqeq.data_out.val();
        self.wqeq.read.next = self.pop.val();
        self.wqeq.data_in.next = self.wqe_data.val();
        self.wqeq.write.next = false;
        // Beats are taken whenever fetches are outstanding (sized to the buffer's room).
        self.wqe_ready.next = (self.pf_beats.q.val() != 0) | (self.pf2.q.val() != 0);
        self.pf_sub.next = 0.into();
        self.b_in.next = false;
        if self.wqe_valid.val() & (self.pf_beats.q.val() != 0) {
            self.wqeq.write.next = true;
            self.pf_sub.next = 1.into();
        } else if self.wqe_valid.val() & (self.pf2.q.val() != 0) {
            self.wqeq.write.next = true;
            self.b_in.next = true;
        }
        self.pf_beats.d.next = self.pf_beats.q.val() + self.pf_add.val() - self.pf_sub.val();
        self.nbuf.d.next = self.nbuf.q.val();
        if (self.pf_sub.val() != 0) & !self.wqeq.read.val() {
            self.nbuf.d.next = self.nbuf.q.val() + 1;
        }
        if self.wqeq.read.val() & (self.pf_sub.val() == 0) {
            self.nbuf.d.next = self.nbuf.q.val() - 1;
        }
        self.pf2.d.next = self.pf2.q.val() + self.pf2_add.val();
        self.nbuf2.d.next = self.nbuf2.q.val();
        if self.b_in.val() {
            self.pf2.d.next = self.pf2.q.val() + self.pf2_add.val() - 1;
            self.nbuf2.d.next = self.nbuf2.q.val() + 1;
        }
        if self.swap.val() {
            // The current QP's buffer is empty here; the lookahead's becomes current.
            self.pf_beats.d.next = self.pf2.d.val();
            self.nbuf.d.next = self.nbuf2.d.val();
            self.pf2.d.next = 0.into();
            self.nbuf2.d.next = 0.into();
        }
    }
}
