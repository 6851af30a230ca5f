//! MR fence: tells the host when no DMA that used a key checked before the
//! fence can still touch memory, so `dereg_mr` may free it.
//!
//! Every engine re-checks keys at a packet boundary: the SQ engine before
//! each payload read, the responder before each placement. So once the
//! invalidating MR commit is a few cycles old, new DMA sees it. What is left
//! is DMA already under way: the packet the responder is placing (done when
//! it is next idle) and payload reads already issued (done when the reads
//! issued up to the fence's snapshot have completed). Posted writes need no
//! wait: PCIe delivers the register read's reply behind them.
//!
//! Completions are counted in request order, which holds while the DMA port
//! returns reads in order (the PCIe front end's reorder buffer keeps it so).

use crate::reg::Reg;
use rust_hdl::prelude::*;

#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
enum FenceState {
    Idle,
    Settle,
    Drain,
}

/// The MR fence.
#[derive(LogicBlock, Default)]
pub struct MrFence {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: every register and FIFO of the block back to its power-on state (block RAM contents are kept).
    pub reset: Signal<In, Bit>,
    /// Pulse: the host wrote `REG_MR_FENCE`.
    pub start: Signal<In, Bit>,
    /// The responder is between packets.
    pub resp_idle: Signal<In, Bit>,
    /// Pulse: a DMA read request was accepted.
    pub rd_issued: Signal<In, Bit>,
    /// Pulse: the last completion beat of a DMA read was accepted.
    pub rd_done: Signal<In, Bit>,
    /// A fence is in progress.
    pub busy: Signal<Out, Bit>,
    state: Reg<FenceState>,
    settle: Reg<Bits<4>>,
    seen_idle: Reg<Bit>,
    issued: Reg<Bits<16>>,
    done: Reg<Bits<16>>,
    target: Reg<Bits<16>>,
    behind: Signal<Local, Bits<16>>,
}

impl Logic for MrFence {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, state, settle, seen_idle, issued, done, target);
        self.state.reset.next = self.reset.val();
        self.settle.reset.next = self.reset.val();
        self.seen_idle.reset.next = self.reset.val();
        self.issued.reset.next = self.reset.val();
        self.done.reset.next = self.reset.val();
        self.target.reset.next = self.reset.val();
        // At most 256 reads are in flight, so 16-bit counters compare safely across wrap.
        if self.rd_issued.val() {
            self.issued.d.next = self.issued.q.val() + 1;
        }
        if self.rd_done.val() {
            self.done.d.next = self.done.q.val() + 1;
        }
        self.behind.next = self.done.q.val() - self.target.q.val();
        self.busy.next = self.state.q.val() != FenceState::Idle;
        match self.state.q.val() {
            FenceState::Idle => {}
            FenceState::Settle => {
                // Wait until keys checked from now on see the new MR table, and the
                // responder has finished the packet it was placing.
                if self.settle.q.val() != 0 {
                    self.settle.d.next = self.settle.q.val() - 1;
                }
                if self.resp_idle.val() {
                    self.seen_idle.d.next = true;
                }
                if (self.settle.q.val() == 0) & self.seen_idle.q.val() {
                    self.target.d.next = self.issued.q.val();
                    self.state.d.next = FenceState::Drain;
                }
            }
            FenceState::Drain => {
                if !self.behind.val().get_bit(15) {
                    self.state.d.next = FenceState::Idle;
                }
            }
            _ => {
                self.state.d.next = FenceState::Idle;
            }
        }
        if self.start.val() {
            // Six: an SQ read may miss an MR commit up to 5 cycles old (its check has two register stages); 2 spare.
            self.settle.d.next = 6.into();
            self.seen_idle.d.next = false;
            self.state.d.next = FenceState::Settle;
        }
    }
}
