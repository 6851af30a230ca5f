//! `CdcFifo`: a frame FIFO between two clock domains, for the MAC's
//! 322 MHz AXI4-Stream and the core's 250 MHz clock on a board.
//!
//! A dual-clock RAM of `2^N` entries with Gray-coded pointers, each crossing
//! into the other domain through two flip-flops (the only signals that
//! cross; a board's constraints give them a max delay of one period of the
//! faster clock). The writer publishes its pointer only at a frame's last
//! beat, so the reader never sees part of a frame: on the TX side the MAC,
//! which must get a frame's beats back to back, cannot run dry in the
//! middle of one (the FIFO must hold the largest frame); on the RX side the
//! core gets whole frames.
//!
//! When the FIFO is full, a writer with `drop_on_full` low waits (`ready`
//! low, TX); with it high `ready` stays high (the MAC's RX stream has no
//! ready) and the frame is dropped: its beats already written are taken
//! back, the rest are discarded up to its last beat, and `dropped` pulses
//! once. A frame whose last beat comes with `wr_bad` (the MAC's FCS error)
//! is taken back the same way. Reading is first-word-fall-through. Each side has its own
//! synchronous reset, in its own clock domain; a board resets both together
//! (a reset of one side alone leaves the other's pointer stale).

use crate::reg::Reg;
use rust_hdl::prelude::*;

/// A frame FIFO between two clock domains.
#[derive(LogicBlock)]
pub struct CdcFifo<D: Synth, const N: usize, const NP1: usize> {
    /// Write-side clock.
    pub wr_clock: Signal<In, Clock>,
    /// Write-side synchronous reset, active high.
    pub wr_reset: Signal<In, Bit>,
    /// Drop a frame that does not fit instead of waiting (tie high for a MAC's RX stream).
    pub drop_on_full: Signal<In, Bit>,
    /// A beat is offered.
    pub wr_valid: Signal<In, Bit>,
    /// Taken (always high with `drop_on_full`).
    pub wr_ready: Signal<Out, Bit>,
    /// The beat.
    pub wr_data: Signal<In, D>,
    /// The frame's last beat.
    pub wr_last: Signal<In, Bit>,
    /// With the last beat: the frame is bad (the MAC's FCS error); it is taken back.
    pub wr_bad: Signal<In, Bit>,
    /// Pulse (write clock): a frame was dropped.
    pub dropped: Signal<Out, Bit>,
    /// Read-side clock.
    pub rd_clock: Signal<In, Clock>,
    /// Read-side synchronous reset, active high.
    pub rd_reset: Signal<In, Bit>,
    /// A beat is at the head.
    pub rd_valid: Signal<Out, Bit>,
    /// Pop it.
    pub rd_ready: Signal<In, Bit>,
    /// The head beat.
    pub rd_data: Signal<Out, D>,
    /// The head beat is its frame's last.
    pub rd_last: Signal<Out, Bit>,
    ram: RAM<D, N>,
    last_ram: RAM<Bit, N>,
    /// Write side: next entry, the pointer published (binary and Gray), the frame is being dropped.
    wr_ptr: Reg<Bits<NP1>>,
    wr_pub: Reg<Bits<NP1>>,
    wr_pub_gray: Reg<Bits<NP1>>,
    dropping: Reg<Bit>,
    drop_pulse: Reg<Bit>,
    /// The read pointer's Gray code, through two write-clock flip-flops.
    rd_gray_s1: Reg<Bits<NP1>>,
    rd_gray_s2: Reg<Bits<NP1>>,
    /// Read side: the head entry, and its Gray code (registered: only flip-flops cross).
    rd_ptr: Reg<Bits<NP1>>,
    rd_ptr_gray: Reg<Bits<NP1>>,
    /// The published write pointer's Gray code, through two read-clock flip-flops.
    wr_gray_s1: Reg<Bits<NP1>>,
    wr_gray_s2: Reg<Bits<NP1>>,
    wr_gray: Signal<Local, Bits<NP1>>,
    wr_next: Signal<Local, Bits<NP1>>,
    full: Signal<Local, Bit>,
    empty: Signal<Local, Bit>,
    rd_next: Signal<Local, Bits<NP1>>,
    /// The two top bits: a Gray pointer `2^N` ahead of another differs from it in exactly these.
    top2: Constant<Bits<NP1>>,
}

impl<D: Synth, const N: usize, const NP1: usize> Default for CdcFifo<D, N, NP1> {
    fn default() -> Self {
        assert!(N >= 2 && N + 1 == NP1, "CdcFifo: NP1 must be N + 1, N at least 2");
        Self {
            wr_clock: Default::default(),
            wr_reset: Default::default(),
            drop_on_full: Default::default(),
            wr_valid: Default::default(),
            wr_ready: Default::default(),
            wr_data: Default::default(),
            wr_last: Default::default(),
            wr_bad: Default::default(),
            dropped: Default::default(),
            rd_clock: Default::default(),
            rd_reset: Default::default(),
            rd_valid: Default::default(),
            rd_ready: Default::default(),
            rd_data: Default::default(),
            rd_last: Default::default(),
            ram: Default::default(),
            last_ram: Default::default(),
            wr_ptr: Default::default(),
            wr_pub: Default::default(),
            wr_pub_gray: Default::default(),
            dropping: Default::default(),
            drop_pulse: Default::default(),
            rd_gray_s1: Default::default(),
            rd_gray_s2: Default::default(),
            rd_ptr: Default::default(),
            rd_ptr_gray: Default::default(),
            wr_gray_s1: Default::default(),
            wr_gray_s2: Default::default(),
            wr_gray: Default::default(),
            wr_next: Default::default(),
            full: Default::default(),
            empty: Default::default(),
            rd_next: Default::default(),
            top2: Constant::new(Bits::<NP1>::from(3u64 << (N - 1))),
        }
    }
}

impl<D: Synth, const N: usize, const NP1: usize> Logic for CdcFifo<D, N, NP1> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, wr_clock, wr_ptr, wr_pub, wr_pub_gray, dropping, drop_pulse, rd_gray_s1, rd_gray_s2);
        dff_setup!(self, rd_clock, rd_ptr, rd_ptr_gray, wr_gray_s1, wr_gray_s2);
        self.wr_ptr.reset.next = self.wr_reset.val();
        self.wr_pub.reset.next = self.wr_reset.val();
        self.wr_pub_gray.reset.next = self.wr_reset.val();
        self.dropping.reset.next = self.wr_reset.val();
        self.drop_pulse.reset.next = self.wr_reset.val();
        self.rd_gray_s1.reset.next = self.wr_reset.val();
        self.rd_gray_s2.reset.next = self.wr_reset.val();
        self.rd_ptr.reset.next = self.rd_reset.val();
        self.rd_ptr_gray.reset.next = self.rd_reset.val();
        self.wr_gray_s1.reset.next = self.rd_reset.val();
        self.wr_gray_s2.reset.next = self.rd_reset.val();
        self.ram.write_clock.next = self.wr_clock.val();
        self.last_ram.write_clock.next = self.wr_clock.val();
        self.ram.read_clock.next = self.rd_clock.val();
        self.last_ram.read_clock.next = self.rd_clock.val();
        // Write side.
        self.rd_gray_s1.d.next = self.rd_ptr_gray.q.val();
        self.rd_gray_s2.d.next = self.rd_gray_s1.q.val();
        self.wr_gray.next = self.wr_ptr.q.val() ^ (self.wr_ptr.q.val() >> 1);
        self.full.next = self.wr_gray.val() == (self.rd_gray_s2.q.val() ^ self.top2.val());
        self.wr_ready.next = self.drop_on_full.val() | !self.full.val();
        self.dropped.next = self.drop_pulse.q.val();
        self.drop_pulse.d.next = false;
        self.ram.write_address.next = self.wr_ptr.q.val().get_bits::<N>(0);
        self.last_ram.write_address.next = self.wr_ptr.q.val().get_bits::<N>(0);
        self.ram.write_data.next = self.wr_data.val();
        self.last_ram.write_data.next = self.wr_last.val();
        self.ram.write_enable.next = false;
        self.last_ram.write_enable.next = false;
        self.wr_next.next = self.wr_ptr.q.val() + 1;
        if self.wr_valid.val() {
            if self.dropping.q.val() {
                self.dropping.d.next = !self.wr_last.val();
            } else if self.full.val() {
                if self.drop_on_full.val() {
                    self.wr_ptr.d.next = self.wr_pub.q.val();
                    self.dropping.d.next = !self.wr_last.val();
                    self.drop_pulse.d.next = true;
                }
            } else if self.wr_last.val() & self.wr_bad.val() {
                self.wr_ptr.d.next = self.wr_pub.q.val();
                self.drop_pulse.d.next = true;
            } else {
                self.ram.write_enable.next = true;
                self.last_ram.write_enable.next = true;
                self.wr_ptr.d.next = self.wr_next.val();
                if self.wr_last.val() {
                    self.wr_pub.d.next = self.wr_next.val();
                    self.wr_pub_gray.d.next = self.wr_next.val() ^ (self.wr_next.val() >> 1);
                }
            }
        }
        // Read side.
        self.wr_gray_s1.d.next = self.wr_pub_gray.q.val();
        self.wr_gray_s2.d.next = self.wr_gray_s1.q.val();
        self.empty.next = self.rd_ptr_gray.q.val() == self.wr_gray_s2.q.val();
        self.rd_valid.next = !self.empty.val();
        self.rd_next.next = self.rd_ptr.q.val();
        if self.rd_ready.val() & !self.empty.val() {
            self.rd_next.next = self.rd_ptr.q.val() + 1;
        }
        self.rd_ptr.d.next = self.rd_next.val();
        self.rd_ptr_gray.d.next = self.rd_next.val() ^ (self.rd_next.val() >> 1);
        self.ram.read_address.next = self.rd_next.val().get_bits::<N>(0);
        self.last_ram.read_address.next = self.rd_next.val().get_bits::<N>(0);
        self.rd_data.next = self.ram.read_data.val();
        self.rd_last.next = self.last_ram.read_data.val();
    }
}
