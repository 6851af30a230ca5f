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
//!
//! Two stages keep the logic short: every cycle, stage 1 registers each
//! bound (capped at n) and the address, for both QPs; stage 2 takes the
//! least bound. A request is held until taken and goes out from its second
//! cycle, once the registered bounds are of a cycle with the same request in
//! which no fetch, pop or swap moved the counters (a WQE arriving moves one
//! from in flight to buffered and leaves every bound as it was). `room` and
//! `can_fetch` are hints of the same age, low for a cycle after such a move.

use crate::fifo::Fifo;
use crate::num::Num;
use crate::reg::Reg;
use rnic_spec::params::{dma_tag, SCHED_WQES_PER_TURN};
use rust_hdl::prelude::*;

// The bounds are 4 bits wide and capped by testing bits 3 and up.
const _: () = assert!(SCHED_WQES_PER_TURN == 8, "fetch.rs caps batches at 8 WQEs");

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
    /// The current QP's batch bounds and address, from the last cycle's state (see `fresh`).
    ring_c: Reg<Bits<4>>,
    pcap_c: Reg<Bits<4>>,
    addr_c: Reg<Bits<64>>,
    /// The lookahead QP's, likewise.
    ring_la: Reg<Bits<4>>,
    pcap_la: Reg<Bits<4>>,
    addr_la: Reg<Bits<64>>,
    /// The buffer's room, capped at n, and whether it takes a whole batch.
    rcap: Reg<Bits<4>>,
    room_q: Reg<Bit>,
    /// Last cycle's request, and whether a fetch, pop or swap changed the counters then.
    req_cur_q: Reg<Bit>,
    req_la_q: Reg<Bit>,
    event_q: Reg<Bit>,
    /// The registered bounds hold for this cycle's request.
    fresh: Signal<Local, Bit>,
    start_c: Signal<Local, Bits<16>>,
    mask_c: Signal<Local, Bits<16>>,
    left_c: Signal<Local, Bits<16>>,
    /// The current QP's WQEs posted and not yet held, buffered or in flight: its low three bits, and
    /// whether it is under 8 as two signs beside each other (each a carry-save sum and one carry chain)
    /// instead of a zero test behind the 16-bit difference. `pend_w` is PI − SSN in 17 bits: its bit 16
    /// says how that wrapped; the difference less the buffered WQEs (less 8) is at least 0 exactly when
    /// `pend_ge0`'s (`pend_ge8`'s) bit 16 equals it.
    pend_c: Signal<Local, Bits<3>>,
    pend_w: Signal<Local, Bits<17>>,
    pend_ge0: Signal<Local, Bits<17>>,
    pend_ge8: Signal<Local, Bits<17>>,
    mask_la: Signal<Local, Bits<16>>,
    left_la: Signal<Local, Bits<16>>,
    pend_la: Signal<Local, Bits<16>>,
    /// Free buffer entries (0..=32).
    nroom: Signal<Local, Bits<7>>,
    nf_c: Signal<Local, Bits<4>>,
    nf_la: Signal<Local, Bits<4>>,
    nfetch: Signal<Local, Bits<4>>,
    /// All ones when a batch of the current (lookahead) QP is taken this cycle.
    take_cur: Signal<Local, Bits<6>>,
    take_la: Signal<Local, Bits<6>>,
    pf_sub: Signal<Local, Bits<6>>,
    b_in: Signal<Local, Bit>,
    /// The in-flight counts with and without this cycle's batch, side by side: the late
    /// handshake picks one by AND/OR instead of feeding a sum.
    pf_up: Signal<Local, Bits<6>>,
    pf_keep: Signal<Local, Bits<6>>,
    pf2_up: Signal<Local, Bits<6>>,
    pf2_keep: Signal<Local, Bits<6>>,
    pf2_nx: Signal<Local, Bits<6>>,
    tag_sq_wqe: Num<{ dma_tag::SQ_WQE as u64 }, 8>,
    ones16: Num<0xFFFF, 16>,
    full_batch: Num<32, 7>,
}

impl Logic for WqeFetch {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, nbuf, pf_beats, nbuf2, pf2, ring_c, pcap_c, addr_c, ring_la, pcap_la, addr_la, rcap, room_q,
            req_cur_q, req_la_q, event_q
        );
        self.nbuf.reset.next = self.reset.val();
        self.pf_beats.reset.next = self.reset.val();
        self.nbuf2.reset.next = self.reset.val();
        self.pf2.reset.next = self.reset.val();
        self.ring_c.reset.next = self.reset.val();
        self.pcap_c.reset.next = self.reset.val();
        self.addr_c.reset.next = self.reset.val();
        self.ring_la.reset.next = self.reset.val();
        self.pcap_la.reset.next = self.reset.val();
        self.addr_la.reset.next = self.reset.val();
        self.rcap.reset.next = self.reset.val();
        self.room_q.reset.next = self.reset.val();
        self.req_cur_q.reset.next = self.reset.val();
        self.req_la_q.reset.next = self.reset.val();
        self.event_q.reset.next = self.reset.val();
        clock!(self, clock, wqeq);
        self.wqeq.reset.next = self.reset.val();
        // Stage 1, every cycle for both QPs: each batch bound capped at n,
        // and the address. A batch starts at the current QP's first WQE not
        // yet held, buffered or in flight, or at the lookahead's consumer index.
        self.start_c.next = self.cur_ssn.val()
            + bit_cast::<16, 6>(self.nbuf.q.val())
            + bit_cast::<16, 6>(self.pf_beats.q.val())
            + bit_cast::<16, 1>(self.held.val().into());
        // A ring of 2^16 WQEs or more (the 16-bit indices cover 2^16) has an all-ones mask.
        self.mask_c.next = !(self.ones16.val() << bit_cast::<16, 8>(self.cur_log2.val()));
        self.mask_la.next = !(self.ones16.val() << bit_cast::<16, 8>(self.la_log2.val()));
        // WQEs left before the ring's end, less one: no subtract from the ring size.
        self.left_c.next = !self.start_c.val() & self.mask_c.val();
        self.left_la.next = !self.la_ssn.val() & self.mask_la.val();
        self.pend_c.next = self.cur_pi.val().get_bits::<3>(0)
            - self.cur_ssn.val().get_bits::<3>(0)
            - self.nbuf.q.val().get_bits::<3>(0)
            - self.pf_beats.q.val().get_bits::<3>(0)
            - bit_cast::<3, 1>(self.held.val().into());
        self.pend_w.next = bit_cast::<17, 16>(self.cur_pi.val()) - bit_cast::<17, 16>(self.cur_ssn.val());
        self.pend_ge0.next = bit_cast::<17, 16>(self.cur_pi.val())
            - bit_cast::<17, 16>(self.cur_ssn.val())
            - bit_cast::<17, 6>(self.nbuf.q.val())
            - bit_cast::<17, 6>(self.pf_beats.q.val())
            - bit_cast::<17, 1>(self.held.val().into());
        self.pend_ge8.next = bit_cast::<17, 16>(self.cur_pi.val())
            - bit_cast::<17, 16>(self.cur_ssn.val())
            - bit_cast::<17, 6>(self.nbuf.q.val())
            - bit_cast::<17, 6>(self.pf_beats.q.val())
            - bit_cast::<17, 1>(self.held.val().into())
            - bits::<17>(8);
        self.pend_la.next = self.la_pi.val() - self.la_ssn.val();
        self.ring_c.d.next = 8.into();
        if (self.left_c.val().get_bits::<13>(3) == 0) & (self.left_c.val().get_bits::<3>(0) != 7) {
            self.ring_c.d.next = bit_cast::<4, 3>(self.left_c.val().get_bits::<3>(0)) + 1;
        }
        self.ring_la.d.next = 8.into();
        if (self.left_la.val().get_bits::<13>(3) == 0) & (self.left_la.val().get_bits::<3>(0) != 7) {
            self.ring_la.d.next = bit_cast::<4, 3>(self.left_la.val().get_bits::<3>(0)) + 1;
        }
        self.pcap_c.d.next = 8.into();
        if (self.pend_ge0.val().get_bit(16) == self.pend_w.val().get_bit(16))
            & (self.pend_ge8.val().get_bit(16) != self.pend_w.val().get_bit(16))
        {
            self.pcap_c.d.next = bit_cast::<4, 3>(self.pend_c.val());
        }
        self.pcap_la.d.next = 8.into();
        if self.pend_la.val().get_bits::<13>(3) == 0 {
            self.pcap_la.d.next = bit_cast::<4, 3>(self.pend_la.val().get_bits::<3>(0));
        }
        self.addr_c.d.next = self.cur_base.val() + (bit_cast::<64, 16>(self.start_c.val() & self.mask_c.val()) << 6);
        self.addr_la.d.next = self.la_base.val() + (bit_cast::<64, 16>(self.la_ssn.val() & self.mask_la.val()) << 6);
        self.nroom.next = self.full_batch.val()
            - bit_cast::<7, 6>(self.nbuf.q.val())
            - bit_cast::<7, 6>(self.pf_beats.q.val())
            - bit_cast::<7, 6>(self.nbuf2.q.val())
            - bit_cast::<7, 6>(self.pf2.q.val());
        self.rcap.d.next = 8.into();
        self.room_q.d.next = true;
        if self.nroom.val().get_bits::<4>(3) == 0 {
            self.rcap.d.next = bit_cast::<4, 3>(self.nroom.val().get_bits::<3>(0));
            self.room_q.d.next = false;
        }
        // Stage 2: the least of the three bounds, side by side for both QPs.
        self.nf_c.next = self.ring_c.q.val();
        if (self.rcap.q.val() <= self.ring_c.q.val()) & (self.rcap.q.val() <= self.pcap_c.q.val()) {
            self.nf_c.next = self.rcap.q.val();
        } else if self.pcap_c.q.val() <= self.ring_c.q.val() {
            self.nf_c.next = self.pcap_c.q.val();
        }
        self.nf_la.next = self.ring_la.q.val();
        if (self.rcap.q.val() <= self.ring_la.q.val()) & (self.rcap.q.val() <= self.pcap_la.q.val()) {
            self.nf_la.next = self.rcap.q.val();
        } else if self.pcap_la.q.val() <= self.ring_la.q.val() {
            self.nf_la.next = self.pcap_la.q.val();
        }
        // Stage 1 saw this cycle's counters unless a fetch, pop or swap changed
        // them: a request goes out from its second cycle on, once nothing moved.
        self.req_cur_q.d.next = self.fetch_cur.val();
        self.req_la_q.d.next = self.fetch_la.val();
        self.fresh.next = !self.event_q.q.val()
            & ((self.fetch_cur.val() & self.req_cur_q.q.val()) | (self.fetch_la.val() & self.req_la_q.q.val()));
        self.nfetch.next = self.nf_c.val();
        self.rd_addr.next = self.addr_c.q.val();
        if self.fetch_la.val() {
            self.nfetch.next = self.nf_la.val();
            self.rd_addr.next = self.addr_la.q.val();
        }
        self.rd_valid.next = self.fresh.val();
        self.rd_len.next = bit_cast::<16, 4>(self.nfetch.val()) << 6;
        self.rd_tag.next = self.tag_sq_wqe.val();
        self.fetch_taken.next = self.rd_valid.val() & self.rd_ready.val();
        self.event_q.d.next = self.fetch_taken.val() | self.pop.val() | self.swap.val();
        self.take_cur.next = 0.into();
        self.take_la.next = 0.into();
        if self.fetch_taken.val() {
            if self.fetch_la.val() {
                self.take_la.next = 0x3F.into();
            } else {
                self.take_cur.next = 0x3F.into();
            }
        }
        self.cur_owed.next = (self.nbuf.q.val() != 0) | (self.pf_beats.q.val() != 0);
        self.cur_inflight.next = self.pf_beats.q.val() != 0;
        // Hints from stage 1: after a fetch, pop or swap they wait a cycle.
        self.room.next = self.room_q.q.val() & !self.event_q.q.val();
        self.can_fetch.next = (self.nf_c.val() != 0) & !self.event_q.q.val();
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
        self.pf_up.next = self.pf_beats.q.val() + bit_cast::<6, 4>(self.nf_c.val()) - self.pf_sub.val();
        self.pf_keep.next = self.pf_beats.q.val() - self.pf_sub.val();
        self.pf_beats.d.next = (self.pf_up.val() & self.take_cur.val()) | (self.pf_keep.val() & !self.take_cur.val());
        self.nbuf.d.next = self.nbuf.q.val();
        if (self.pf_sub.val() != 0) & !self.wqeq.read.val() {
            self.nbuf.d.next = self.nbuf.q.val() + 1;
        }
        if self.wqeq.read.val() & (self.pf_sub.val() == 0) {
            self.nbuf.d.next = self.nbuf.q.val() - 1;
        }
        self.pf2_up.next =
            self.pf2.q.val() + bit_cast::<6, 4>(self.nf_la.val()) - bit_cast::<6, 1>(self.b_in.val().into());
        self.pf2_keep.next = self.pf2.q.val() - bit_cast::<6, 1>(self.b_in.val().into());
        self.pf2_nx.next = (self.pf2_up.val() & self.take_la.val()) | (self.pf2_keep.val() & !self.take_la.val());
        self.pf2.d.next = self.pf2_nx.val();
        self.nbuf2.d.next = self.nbuf2.q.val();
        if self.b_in.val() {
            self.nbuf2.d.next = self.nbuf2.q.val() + 1;
        }
        if self.swap.val() {
            // The current QP's buffer is empty here; the lookahead's becomes current.
            self.pf_beats.d.next = self.pf2_nx.val();
            self.nbuf.d.next = self.nbuf2.d.val();
            self.pf2.d.next = 0.into();
            self.nbuf2.d.next = 0.into();
        }
    }
}
