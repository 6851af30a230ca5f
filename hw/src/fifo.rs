//! `Fifo`: a first-word-fall-through FIFO of `2^N` entries in block RAM with
//! a synchronous reset (rust-hdl's `SynchronousFIFO` has none).
//!
//! Pointers are `N + 1` bits wide, so full (`2^N` apart) and empty (equal)
//! differ. The RAM reads synchronously, so its read address is the pointer
//! after this cycle's pop, and `data_out` is the head with no extra cycle. A
//! write becomes visible one cycle after it lands (the write pointer seen by
//! the reader is registered), two edges after `write`. Writes while full and
//! reads while empty are ignored. A reset empties the FIFO; the RAM keeps
//! stale words that are never read.

use crate::reg::Reg;
use rust_hdl::prelude::*;

/// A FIFO of `2^N` words of `D`; `NP1` is `N + 1` (rust-hdl's const generics
/// cannot compute it).
#[derive(LogicBlock)]
pub struct Fifo<D: Synth, const N: usize, const NP1: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: the FIFO is empty after the edge.
    pub reset: Signal<In, Bit>,
    /// Pop the head (ignored while empty).
    pub read: Signal<In, Bit>,
    /// The head, valid while not `empty`.
    pub data_out: Signal<Out, D>,
    /// No word to read.
    pub empty: Signal<Out, Bit>,
    /// Push `data_in` (ignored while full).
    pub write: Signal<In, Bit>,
    /// The word to push.
    pub data_in: Signal<In, D>,
    /// `2^N` words held.
    pub full: Signal<Out, Bit>,
    /// At least `2^N - 1` words held.
    pub almost_full: Signal<Out, Bit>,
    ram: RAM<D, N>,
    wr: Reg<Bits<NP1>>,
    /// `wr` one cycle late: what the reader may pop up to.
    wr_seen: Reg<Bits<NP1>>,
    rd: Reg<Bits<NP1>>,
    rd_next: Signal<Local, Bits<NP1>>,
    flags: FifoFlags<N, NP1>,
}

/// The status of a [`Fifo`] from its pointers alone, in its own block so the
/// simulator does not see a loop from `write` to `full` (the parent's `write`
/// usually depends on `full`).
#[derive(LogicBlock)]
pub struct FifoFlags<const N: usize, const NP1: usize> {
    /// Write pointer.
    pub wr: Signal<In, Bits<NP1>>,
    /// Write pointer one cycle late.
    pub wr_seen: Signal<In, Bits<NP1>>,
    /// Read pointer.
    pub rd: Signal<In, Bits<NP1>>,
    /// Nothing to read.
    pub empty: Signal<Out, Bit>,
    /// `2^N` words held.
    pub full: Signal<Out, Bit>,
    /// At least `2^N - 1` words held.
    pub almost_full: Signal<Out, Bit>,
    held: Signal<Local, Bits<NP1>>,
    seen: Signal<Local, Bits<NP1>>,
    size: Constant<Bits<NP1>>,
    size_m1: Constant<Bits<NP1>>,
}

impl<const N: usize, const NP1: usize> Default for FifoFlags<N, NP1> {
    fn default() -> Self {
        Self {
            wr: Default::default(),
            wr_seen: Default::default(),
            rd: Default::default(),
            empty: Default::default(),
            full: Default::default(),
            almost_full: Default::default(),
            held: Default::default(),
            seen: Default::default(),
            size: Constant::new(Bits::<NP1>::from(1u64 << N)),
            size_m1: Constant::new(Bits::<NP1>::from((1u64 << N) - 1)),
        }
    }
}

impl<const N: usize, const NP1: usize> Logic for FifoFlags<N, NP1> {
    #[hdl_gen]
    fn update(&mut self) {
        self.held.next = self.wr.val() - self.rd.val();
        self.seen.next = self.wr_seen.val() - self.rd.val();
        self.empty.next = self.wr_seen.val() == self.rd.val();
        self.full.next = self.held.val() == self.size.val();
        self.almost_full.next = (self.held.val() == self.size.val()) | (self.seen.val() == self.size_m1.val());
    }
}

impl<D: Synth, const N: usize, const NP1: usize> Default for Fifo<D, N, NP1> {
    fn default() -> Self {
        assert_eq!(N + 1, NP1, "Fifo: NP1 must be N + 1");
        Self {
            clock: Default::default(),
            reset: Default::default(),
            read: Default::default(),
            data_out: Default::default(),
            empty: Default::default(),
            write: Default::default(),
            data_in: Default::default(),
            full: Default::default(),
            almost_full: Default::default(),
            ram: Default::default(),
            wr: Default::default(),
            wr_seen: Default::default(),
            rd: Default::default(),
            rd_next: Default::default(),
            flags: Default::default(),
        }
    }
}

impl<D: Synth, const N: usize, const NP1: usize> Logic for Fifo<D, N, NP1> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, wr, wr_seen, rd);
        self.wr.reset.next = self.reset.val();
        self.wr_seen.reset.next = self.reset.val();
        self.rd.reset.next = self.reset.val();
        self.ram.read_clock.next = self.clock.val();
        self.ram.write_clock.next = self.clock.val();
        self.wr_seen.d.next = self.wr.q.val();
        self.flags.wr.next = self.wr.q.val();
        self.flags.wr_seen.next = self.wr_seen.q.val();
        self.flags.rd.next = self.rd.q.val();
        self.empty.next = self.flags.empty.val();
        self.full.next = self.flags.full.val();
        self.almost_full.next = self.flags.almost_full.val();
        self.rd_next.next = self.rd.q.val();
        if self.read.val() & !self.flags.empty.val() {
            self.rd_next.next = self.rd.q.val() + 1;
        }
        self.rd.d.next = self.rd_next.val();
        self.ram.read_address.next = self.rd_next.val().get_bits::<N>(0);
        self.data_out.next = self.ram.read_data.val();
        self.ram.write_address.next = self.wr.q.val().get_bits::<N>(0);
        self.ram.write_data.next = self.data_in.val();
        self.ram.write_enable.next = false;
        if self.write.val() & !self.flags.full.val() {
            self.ram.write_enable.next = true;
            self.wr.d.next = self.wr.q.val() + 1;
        }
    }
}
