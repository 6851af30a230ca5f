//! Completion writer: the one producer of every CQ.
//!
//! Takes completion requests (a [`CqReqPack`](crate::desc::CqReqPack) word
//! on a valid/ready stream) from the responder (receive completions), the
//! ACK receiver (requester completions) and the send path's local errors
//! (forwarded by the responder), and writes each as a 32-byte CQE at the
//! CQ's producer index, with the owner bit of the current pass, then bumps
//! the index. One CQE at a time: look up the CQ, wait for the table read,
//! write; the next request is taken in the cycle the write goes out, so its
//! table read sees the producer index that write bumps.
//!
//! It also writes the control queue (CtrlQ), the ring where the NIC reports
//! events to the host's slow path: a [`CtlReqPack`](crate::desc::CtlReqPack)
//! request becomes a 32-byte entry at the CtrlQ producer index (kept here),
//! with the owner bit of the pass, if the ring has a free slot by the host's
//! consumer index; otherwise (or with no CtrlQ set up) it is dropped and
//! counted. CtrlQ requests go before CQE requests.
//!
//! It sends the MSI-X messages the MSI-X block (`crate::msix`) offers, as
//! 4-byte writes through the same port, and reports every CQE it writes
//! (`ev`) to that block: a message made pending by a CQE goes out after
//! that CQE's write. CtrlQ requests go first, then messages, then CQEs.
//!
//! Ordering: a requester pushes a completion only after the DMA port has
//! accepted every write of the message it completes, and the write mux
//! passes beats through without buffering, so the CQE lands after the data.

use crate::desc::{CqReqUnpack, CqView, CqePack, CtlReqUnpack, CtrlqPack, CQR_BITS, CTLR_BITS};
use crate::mask::LowMask;
use crate::num::Num;
use crate::reg::Reg;
use rnic_spec::desc::{CQE_BYTES, CTRLQ_ENTRY_BYTES};
use rnic_spec::params::CQ_BITS;
use rust_hdl::prelude::*;

#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
enum CqwState {
    Idle,
    Look,
    Wait,
    Write,
    CtlWrite,
    IrqWrite,
}

/// Writes CQEs for completion requests.
#[derive(LogicBlock, Default)]
pub struct CqWriter {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: every register and FIFO of the block back to its power-on state (block RAM contents are kept).
    pub reset: Signal<In, Bit>,
    /// A completion request is offered.
    pub req_valid: Signal<In, Bit>,
    /// The request is taken.
    pub req_ready: Signal<Out, Bit>,
    /// The request: CQ, WQE index, status, opcode, byte count, QPN.
    pub req_data: Signal<In, Bits<CQR_BITS>>,
    /// CQ table read address (also the producer index address).
    pub cq_addr: Signal<Out, Bits<CQ_BITS>>,
    /// CQ table read data (one cycle after the address).
    pub cq_data: Signal<In, Bits<128>>,
    /// CQ producer index read data.
    pub cqpi_data: Signal<In, Bits<32>>,
    /// CQ producer index write enable.
    pub cqpi_we: Signal<Out, Bit>,
    /// CQ producer index write data.
    pub cqpi_wdata: Signal<Out, Bits<32>>,
    /// DMA write valid.
    pub wr_valid: Signal<Out, Bit>,
    /// DMA write ready.
    pub wr_ready: Signal<In, Bit>,
    /// DMA write address.
    pub wr_addr: Signal<Out, Bits<64>>,
    /// DMA write data.
    pub wr_data: Signal<Out, Bits<512>>,
    /// DMA write length.
    pub wr_len: Signal<Out, Bits<7>>,
    /// Pulse: CQE written.
    pub cnt_cqe: Signal<Out, Bit>,
    /// A CtrlQ entry request is offered.
    pub ctl_valid: Signal<In, Bit>,
    /// The CtrlQ request is taken.
    pub ctl_ready: Signal<Out, Bit>,
    /// The CtrlQ request.
    pub ctl_data: Signal<In, Bits<CTLR_BITS>>,
    /// CtrlQ ring bus address (`REG_CTRLQ_BASE`).
    pub ctrlq_base: Signal<In, Bits<64>>,
    /// The CtrlQ's entries, `1 << REG_CTRLQ_LOG2` (log2 1 to 16), registered; 0: no CtrlQ.
    pub ctrlq_size: Signal<In, Bits<32>>,
    /// The host's CtrlQ consumer index (`REG_CTRLQ_CI`).
    pub ctrlq_ci: Signal<In, Bits<32>>,
    /// Pulse: the CtrlQ was set up again (`ctrlq_size` and `ctrlq_base` already show the new ring); the
    /// producer index restarts at 0, also when an entry's write to the old ring is taken in this cycle.
    pub ctrlq_reset: Signal<In, Bit>,
    /// Pulse: CtrlQ entry written.
    pub cnt_ctl: Signal<Out, Bit>,
    /// Pulse: CtrlQ request dropped (ring full or not set up).
    pub cnt_ctl_drop: Signal<Out, Bit>,
    /// No request in progress.
    pub idle: Signal<Out, Bit>,
    /// An MSI-X message is offered.
    pub irq_valid: Signal<In, Bit>,
    /// The message is taken (it is sent next).
    pub irq_ready: Signal<Out, Bit>,
    /// The message's address.
    pub irq_addr: Signal<In, Bits<64>>,
    /// The message's data.
    pub irq_data: Signal<In, Bits<32>>,
    /// Pulse: MSI-X message sent.
    pub cnt_irq: Signal<Out, Bit>,
    /// Pulse: a CQE was written to CQ `ev_cqn` (with `cnt_cqe`).
    pub ev: Signal<Out, Bit>,
    /// The CQ of that CQE.
    pub ev_cqn: Signal<Out, Bits<CQ_BITS>>,
    /// Its vector (`cq::VECTOR`).
    pub ev_vec: Signal<Out, Bits<3>>,
    /// Its events are on (`cq::EVENTS`).
    pub ev_on: Signal<Out, Bit>,
    state: Reg<CqwState>,
    irq_a: Reg<Bits<64>>,
    irq_d: Reg<Bits<32>>,
    req: Reg<Bits<CQR_BITS>>,
    ru: CqReqUnpack,
    cv: CqView,
    cqe: CqePack,
    ctl_pi: Reg<Bits<32>>,
    ctl_req: Reg<Bits<CTLR_BITS>>,
    cu: CtlReqUnpack,
    ent: CtrlqPack,
    /// `ctrlq_size` a cycle later: the owner bit of `ctl_pi`'s slot, which moves with the reset.
    ctl_size_q: Reg<Bits<32>>,
    /// The CQE's bus address and owner bit, registered every cycle: `Write` uses those of `Wait`
    /// (the CQ's word and producer index are read from `Look` on and hold until the PI write).
    cq_waddr_q: Reg<Bits<64>>,
    cq_owner_q: Reg<Bit>,
    /// The CtrlQ has a free slot, registered every cycle from the producer index the register takes
    /// at this edge, the size and the consumer index of this cycle: `CtlWrite` (only
    /// ever entered from `Idle`, and the only state that moves `ctl_pi` but for a reset) decides
    /// on a register. The consumer index only grows, so one a cycle old is conservative.
    ctl_room_q: Reg<Bit>,
    /// The CtrlQ slot's bus address, registered likewise (the base of this cycle).
    ctl_waddr_q: Reg<Bits<64>>,
    /// `ctl_pi` after this edge.
    ctl_pi_nx: Signal<Local, Bits<32>>,
    cq_mask: Signal<Local, Bits<32>>,
    /// `cq_mask` from the ring's log2 size.
    cq_mask_of: LowMask<32>,
    cq_pass: Signal<Local, Bits<32>>,
    cqe_bytes: Num<{ CQE_BYTES as u64 }, 7>,
}

// CQE and CtrlQ slots are addressed as index << 5.
const _: () = assert!(CQE_BYTES == 32 && CTRLQ_ENTRY_BYTES == 32);

impl Logic for CqWriter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            req,
            ctl_pi,
            ctl_req,
            ctl_size_q,
            ctl_room_q,
            ctl_waddr_q,
            cq_waddr_q,
            cq_owner_q,
            irq_a,
            irq_d
        );
        self.irq_a.reset.next = self.reset.val();
        self.irq_d.reset.next = self.reset.val();
        self.cq_waddr_q.reset.next = self.reset.val();
        self.cq_owner_q.reset.next = self.reset.val();
        self.ctl_size_q.reset.next = self.reset.val();
        self.ctl_room_q.reset.next = self.reset.val();
        self.ctl_waddr_q.reset.next = self.reset.val();
        self.state.reset.next = self.reset.val();
        self.req.reset.next = self.reset.val();
        self.ctl_pi.reset.next = self.reset.val();
        self.ctl_req.reset.next = self.reset.val();
        self.ru.pword.next = self.req.q.val();
        self.cv.word.next = self.cq_data.val();
        self.cq_addr.next = self.ru.cqn.val().get_bits::<CQ_BITS>(0);
        self.cq_mask_of.log2.next = self.cv.log2.val();
        self.cq_mask.next = self.cq_mask_of.mask.val();
        // CQE word; the owner bit flips on every pass over the ring.
        self.cqe.wqe_index.next = self.ru.idx.val();
        self.cqe.status.next = self.ru.status.val();
        self.cqe.opcode.next = self.ru.op.val();
        self.cqe.qpn.next = bit_cast::<32, 8>(self.ru.qpn.val());
        self.cqe.byte_len.next = self.ru.len.val();
        self.cqe.imm.next = self.ru.imm.val();
        self.cqe.flags.next = self.ru.flags.val();
        self.cqe.rsvd.next = 0.into();
        self.cq_pass.next = self.cqpi_data.val() >> bit_cast::<32, 8>(self.cv.log2.val());
        self.cq_owner_q.d.next = !self.cq_pass.val().get_bit(0);
        self.cqe.owner.next = 0.into();
        if self.cq_owner_q.q.val() {
            self.cqe.owner.next = 1.into();
        }
        self.req_ready.next = false;
        self.cqpi_we.next = false;
        self.cqpi_wdata.next = self.cqpi_data.val() + 1;
        self.wr_valid.next = false;
        self.cq_waddr_q.d.next =
            self.cv.base.val() + (bit_cast::<64, 32>(self.cqpi_data.val() & self.cq_mask.val()) << 5);
        self.wr_addr.next = self.cq_waddr_q.q.val();
        self.wr_data.next = bit_cast::<512, 256>(self.cqe.pword.val());
        self.wr_len.next = self.cqe_bytes.val();
        self.cnt_cqe.next = false;
        self.irq_ready.next = false;
        self.cnt_irq.next = false;
        self.ev.next = false;
        self.ev_cqn.next = self.ru.cqn.val().get_bits::<CQ_BITS>(0);
        self.ev_vec.next = self.cv.vector.val();
        self.ev_on.next = self.cv.events.val().any();
        self.idle.next = self.state.q.val() == CqwState::Idle;
        // CtrlQ entry at the CtrlQ producer index; the owner bit flips on every pass.
        self.cu.pword.next = self.ctl_req.q.val();
        self.ent.kind.next = self.cu.kind.val();
        self.ent.flags.next = self.cu.flags.val();
        self.ent.qpn.next = bit_cast::<16, 8>(self.cu.qpn.val());
        self.ent.psn.next = bit_cast::<32, 24>(self.cu.psn.val());
        self.ent.epsn.next = bit_cast::<32, 24>(self.cu.epsn.val());
        self.ent.ssn.next = bit_cast::<32, 24>(self.cu.ssn.val());
        self.ent.psn_offset.next = bit_cast::<32, 24>(self.cu.psn_offset.val());
        self.ent.rsn.next = self.cu.rsn.val();
        self.ent.plen.next = bit_cast::<16, 13>(self.cu.plen.val());
        self.ent.imm.next = self.cu.imm.val();
        self.ent.episode.next = bit_cast::<8, 4>(self.cu.episode.val());
        self.ent.rsvd.next = 0.into();
        self.ent.owner.next = 1.into();
        if (self.ctl_pi.q.val() & self.ctl_size_q.q.val()).any() {
            self.ent.owner.next = 0.into();
        }
        self.ctl_size_q.d.next = self.ctrlq_size.val();
        // Never `CtlWrite` now and then again next cycle: the index moves after this edge only by a reset.
        self.ctl_pi_nx.next = self.ctl_pi.q.val();
        if self.ctrlq_reset.val() {
            self.ctl_pi_nx.next = 0.into();
        }
        // No CtrlQ (size 0) has no room.
        self.ctl_room_q.d.next = (self.ctl_pi_nx.val() - self.ctrlq_ci.val()) < self.ctrlq_size.val();
        self.ctl_waddr_q.d.next =
            self.ctrlq_base.val() + (bit_cast::<64, 32>(self.ctl_pi_nx.val() & (self.ctrlq_size.val() - 1)) << 5);
        self.ctl_ready.next = false;
        self.cnt_ctl.next = false;
        self.cnt_ctl_drop.next = false;
        match self.state.q.val() {
            CqwState::Idle => {
                if self.ctl_valid.val() {
                    self.ctl_ready.next = true;
                    self.ctl_req.d.next = self.ctl_data.val();
                    self.state.d.next = CqwState::CtlWrite;
                } else if self.irq_valid.val() {
                    self.irq_ready.next = true;
                    self.irq_a.d.next = self.irq_addr.val();
                    self.irq_d.d.next = self.irq_data.val();
                    self.state.d.next = CqwState::IrqWrite;
                } else {
                    self.req_ready.next = true;
                    if self.req_valid.val() {
                        self.req.d.next = self.req_data.val();
                        self.state.d.next = CqwState::Look;
                    }
                }
            }
            CqwState::Look => {
                self.state.d.next = CqwState::Wait;
            }
            CqwState::Wait => {
                self.state.d.next = CqwState::Write;
            }
            CqwState::Write => {
                self.wr_valid.next = true;
                if self.wr_ready.val() {
                    self.cqpi_we.next = true;
                    self.cnt_cqe.next = true;
                    self.ev.next = true;
                    self.state.d.next = CqwState::Idle;
                    // The next request may start now: its table read comes after this PI write.
                    // Not with an MSI-X message offered: it goes first.
                    self.req_ready.next = !self.ctl_valid.val() & !self.irq_valid.val();
                    if self.req_valid.val() & !self.ctl_valid.val() & !self.irq_valid.val() {
                        self.req.d.next = self.req_data.val();
                        self.state.d.next = CqwState::Look;
                    }
                }
            }
            CqwState::CtlWrite => {
                if !self.ctl_room_q.q.val() {
                    self.cnt_ctl_drop.next = true;
                    self.state.d.next = CqwState::Idle;
                } else {
                    self.wr_valid.next = true;
                    self.wr_addr.next = self.ctl_waddr_q.q.val();
                    self.wr_data.next = bit_cast::<512, 256>(self.ent.pword.val());
                    if self.wr_ready.val() {
                        self.ctl_pi.d.next = self.ctl_pi.q.val() + 1;
                        self.cnt_ctl.next = true;
                        self.state.d.next = CqwState::Idle;
                    }
                }
            }
            CqwState::IrqWrite => {
                self.wr_valid.next = true;
                self.wr_addr.next = self.irq_a.q.val();
                self.wr_data.next = bit_cast::<512, 32>(self.irq_d.q.val());
                self.wr_len.next = 4.into();
                if self.wr_ready.val() {
                    self.cnt_irq.next = true;
                    self.state.d.next = CqwState::Idle;
                }
            }
            _ => {
                self.state.d.next = CqwState::Idle;
            }
        }
        // After the match: a reset wins over the bump of a write to the old ring in the same cycle.
        if self.ctrlq_reset.val() {
            self.ctl_pi.d.next = 0.into();
        }
    }
}

/// Round-robin arbiter of two completion-request streams (the responder's
/// receive completions, the ACK receiver's requester completions) into the
/// completion writer; each stream's order is kept.
#[derive(LogicBlock, Default)]
pub struct CqReqMux {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: every register and FIFO of the block back to its power-on state (block RAM contents are kept).
    pub reset: Signal<In, Bit>,
    /// Stream A offers a request.
    pub a_valid: Signal<In, Bit>,
    /// Stream A's request.
    pub a_data: Signal<In, Bits<CQR_BITS>>,
    /// Stream A's request is taken.
    pub a_ready: Signal<Out, Bit>,
    /// Stream B offers a request.
    pub b_valid: Signal<In, Bit>,
    /// Stream B's request.
    pub b_data: Signal<In, Bits<CQR_BITS>>,
    /// Stream B's request is taken.
    pub b_ready: Signal<Out, Bit>,
    /// A request to the completion writer.
    pub valid: Signal<Out, Bit>,
    /// The request.
    pub data: Signal<Out, Bits<CQR_BITS>>,
    /// The completion writer takes it.
    pub ready: Signal<In, Bit>,
    last_b: Reg<Bit>,
    pick_b: Signal<Local, Bit>,
}

impl Logic for CqReqMux {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, last_b);
        self.last_b.reset.next = self.reset.val();
        // B when only B offers, or both do and A went last.
        self.pick_b.next = self.b_valid.val() & (!self.a_valid.val() | !self.last_b.q.val());
        self.valid.next = self.a_valid.val() | self.b_valid.val();
        self.data.next = self.a_data.val();
        if self.pick_b.val() {
            self.data.next = self.b_data.val();
        }
        self.a_ready.next = self.ready.val() & self.a_valid.val() & !self.pick_b.val();
        self.b_ready.next = self.ready.val() & self.pick_b.val();
        if self.valid.val() & self.ready.val() {
            self.last_b.d.next = self.pick_b.val();
        }
    }
}
