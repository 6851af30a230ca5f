//! MSI-X: the table and pending bits of the NIC's interrupt vectors, and the
//! armed bit of every CQ (completion events, `ibv_req_notify_cq`).
//!
//! The host arms a CQ (`rnic_spec::regs::REG_CQ_ARM`); the completion
//! writer reports every CQE it writes (`ev`). A CQE to an armed CQ whose
//! events are on disarms it and sets its vector's pending bit. The lowest
//! pending vector that is not masked is offered (registered) to the
//! completion writer, which sends the message as a 4-byte DMA write after
//! the CQE's write; the pending bit clears when the writer takes it, so the
//! events of one vector before that give one message. The table is laid
//! out as PCI's (`rnic_spec::regs::MSIX_TABLE`); every vector is masked
//! after a reset.
//!
//! What is not modelled: the MSI-X capability in configuration space
//! (function mask and enable bits are the PCIe IP's); the vector control's
//! other bits read as 0.

use crate::reg::Reg;
use rnic_spec::params::{CQ_BITS, NUM_CQS};
use rnic_spec::regs::{cq, MSIX_VECTORS};
use rust_hdl::prelude::*;

// The armed bits fit one 64-bit register; vectors are 3 bits.
const _: () = assert!(NUM_CQS == 64 && MSIX_VECTORS == 8 && cq::VECTOR.width == 3);

/// MSI-X table, pending bits and CQ arming.
#[derive(LogicBlock, Default)]
pub struct Msix {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: every register of the block back to its power-on state (all vectors masked, nothing armed or pending).
    pub reset: Signal<In, Bit>,
    /// A table word is written.
    pub tbl_we: Signal<In, Bit>,
    /// Its index: vector `idx >> 1`, word `idx & 1` (0: address, 1: data and vector control).
    pub tbl_idx: Signal<In, Bits<4>>,
    /// The word written.
    pub tbl_data: Signal<In, Bits<64>>,
    /// Table word read index (as `tbl_idx`).
    pub rd_idx: Signal<In, Bits<4>>,
    /// The table word at `rd_idx`.
    pub rd_data: Signal<Out, Bits<64>>,
    /// The pending bit array.
    pub pba: Signal<Out, Bits<8>>,
    /// Pulse: arm CQ `arm_cqn`.
    pub arm: Signal<In, Bit>,
    /// The CQ armed.
    pub arm_cqn: Signal<In, Bits<CQ_BITS>>,
    /// Pulse: CQ `disarm_cqn` was committed (set up again): it is disarmed.
    pub disarm: Signal<In, Bit>,
    /// The CQ committed.
    pub disarm_cqn: Signal<In, Bits<CQ_BITS>>,
    /// The armed bit of every CQ.
    pub armed: Signal<Out, Bits<64>>,
    /// Pulse: a CQE was written to CQ `ev_cqn`.
    pub ev: Signal<In, Bit>,
    /// Its CQ.
    pub ev_cqn: Signal<In, Bits<CQ_BITS>>,
    /// The CQ's vector (`cq::VECTOR`).
    pub ev_vec: Signal<In, Bits<3>>,
    /// The CQ's events are on (`cq::EVENTS`).
    pub ev_on: Signal<In, Bit>,
    /// A message is offered to the completion writer.
    pub irq_valid: Signal<Out, Bit>,
    /// The writer takes it (its pending bit clears).
    pub irq_ready: Signal<In, Bit>,
    /// The message's address.
    pub irq_addr: Signal<Out, Bits<64>>,
    /// The message's data.
    pub irq_data: Signal<Out, Bits<32>>,
    a0: Reg<Bits<64>>,
    a1: Reg<Bits<64>>,
    a2: Reg<Bits<64>>,
    a3: Reg<Bits<64>>,
    a4: Reg<Bits<64>>,
    a5: Reg<Bits<64>>,
    a6: Reg<Bits<64>>,
    a7: Reg<Bits<64>>,
    d0: Reg<Bits<32>>,
    d1: Reg<Bits<32>>,
    d2: Reg<Bits<32>>,
    d3: Reg<Bits<32>>,
    d4: Reg<Bits<32>>,
    d5: Reg<Bits<32>>,
    d6: Reg<Bits<32>>,
    d7: Reg<Bits<32>>,
    /// Bit `v`: vector `v` is unmasked (zero after reset: all masked).
    unmasked: Reg<Bits<8>>,
    pend: Reg<Bits<8>>,
    armed_q: Reg<Bits<64>>,
    /// The offered message: valid, vector, address, data (registered from the pending bits).
    v_q: Reg<Bit>,
    sel_q: Reg<Bits<3>>,
    addr_q: Reg<Bits<64>>,
    data_q: Reg<Bits<32>>,
    live: Signal<Local, Bits<8>>,
    sel: Signal<Local, Bits<3>>,
    vbit: Signal<Local, Bits<8>>,
    take: Signal<Local, Bit>,
    set: Signal<Local, Bits<8>>,
    clear: Signal<Local, Bits<8>>,
    arm_set: Signal<Local, Bits<64>>,
    arm_clear: Signal<Local, Bits<64>>,
    hit: Signal<Local, Bit>,
    /// The armed bits shifted to the event's CQ, the unmasked bits to the read vector.
    ev_armed: Signal<Local, Bits<64>>,
    rd_unm: Signal<Local, Bits<8>>,
}

impl Logic for Msix {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, a0, a1, a2, a3, a4, a5, a6, a7, d0, d1, d2, d3, d4, d5, d6, d7, unmasked, pend, armed_q, v_q,
            sel_q, addr_q, data_q
        );
        self.a0.reset.next = self.reset.val();
        self.a1.reset.next = self.reset.val();
        self.a2.reset.next = self.reset.val();
        self.a3.reset.next = self.reset.val();
        self.a4.reset.next = self.reset.val();
        self.a5.reset.next = self.reset.val();
        self.a6.reset.next = self.reset.val();
        self.a7.reset.next = self.reset.val();
        self.d0.reset.next = self.reset.val();
        self.d1.reset.next = self.reset.val();
        self.d2.reset.next = self.reset.val();
        self.d3.reset.next = self.reset.val();
        self.d4.reset.next = self.reset.val();
        self.d5.reset.next = self.reset.val();
        self.d6.reset.next = self.reset.val();
        self.d7.reset.next = self.reset.val();
        self.unmasked.reset.next = self.reset.val();
        self.pend.reset.next = self.reset.val();
        self.armed_q.reset.next = self.reset.val();
        self.v_q.reset.next = self.reset.val();
        self.sel_q.reset.next = self.reset.val();
        self.addr_q.reset.next = self.reset.val();
        self.data_q.reset.next = self.reset.val();
        // Table writes: the address's bits 1:0 are dropped (a message is a dword write).
        self.vbit.next = bits::<8>(1) << bit_cast::<8, 3>(self.tbl_idx.val().get_bits::<3>(1));
        if self.tbl_we.val() {
            match self.tbl_idx.val().index() {
                0 => self.a0.d.next = self.tbl_data.val() & !bits::<64>(3),
                1 => self.d0.d.next = self.tbl_data.val().get_bits::<32>(0),
                2 => self.a1.d.next = self.tbl_data.val() & !bits::<64>(3),
                3 => self.d1.d.next = self.tbl_data.val().get_bits::<32>(0),
                4 => self.a2.d.next = self.tbl_data.val() & !bits::<64>(3),
                5 => self.d2.d.next = self.tbl_data.val().get_bits::<32>(0),
                6 => self.a3.d.next = self.tbl_data.val() & !bits::<64>(3),
                7 => self.d3.d.next = self.tbl_data.val().get_bits::<32>(0),
                8 => self.a4.d.next = self.tbl_data.val() & !bits::<64>(3),
                9 => self.d4.d.next = self.tbl_data.val().get_bits::<32>(0),
                10 => self.a5.d.next = self.tbl_data.val() & !bits::<64>(3),
                11 => self.d5.d.next = self.tbl_data.val().get_bits::<32>(0),
                12 => self.a6.d.next = self.tbl_data.val() & !bits::<64>(3),
                13 => self.d6.d.next = self.tbl_data.val().get_bits::<32>(0),
                14 => self.a7.d.next = self.tbl_data.val() & !bits::<64>(3),
                15 => self.d7.d.next = self.tbl_data.val().get_bits::<32>(0),
                _ => {}
            }
            if self.tbl_idx.val().get_bit(0) {
                if self.tbl_data.val().get_bit(32) {
                    self.unmasked.d.next = self.unmasked.q.val() & !self.vbit.val();
                } else {
                    self.unmasked.d.next = self.unmasked.q.val() | self.vbit.val();
                }
            }
        }
        self.rd_data.next = 0.into();
        match self.rd_idx.val().index() {
            0 => self.rd_data.next = self.a0.q.val(),
            1 => self.rd_data.next = bit_cast::<64, 32>(self.d0.q.val()),
            2 => self.rd_data.next = self.a1.q.val(),
            3 => self.rd_data.next = bit_cast::<64, 32>(self.d1.q.val()),
            4 => self.rd_data.next = self.a2.q.val(),
            5 => self.rd_data.next = bit_cast::<64, 32>(self.d2.q.val()),
            6 => self.rd_data.next = self.a3.q.val(),
            7 => self.rd_data.next = bit_cast::<64, 32>(self.d3.q.val()),
            8 => self.rd_data.next = self.a4.q.val(),
            9 => self.rd_data.next = bit_cast::<64, 32>(self.d4.q.val()),
            10 => self.rd_data.next = self.a5.q.val(),
            11 => self.rd_data.next = bit_cast::<64, 32>(self.d5.q.val()),
            12 => self.rd_data.next = self.a6.q.val(),
            13 => self.rd_data.next = bit_cast::<64, 32>(self.d6.q.val()),
            14 => self.rd_data.next = self.a7.q.val(),
            15 => self.rd_data.next = bit_cast::<64, 32>(self.d7.q.val()),
            _ => {}
        }
        // The vector control word: the mask bit (1 = masked).
        self.rd_unm.next = self.unmasked.q.val() >> bit_cast::<8, 3>(self.rd_idx.val().get_bits::<3>(1));
        if self.rd_idx.val().get_bit(0) & !self.rd_unm.val().get_bit(0) {
            self.rd_data.next = self.rd_data.val() | (bits::<64>(1) << 32);
        }
        self.pba.next = self.pend.q.val();
        // Arming: an arm wins over a same-cycle event or commit (it is for the next CQE).
        self.ev_armed.next = self.armed_q.q.val() >> bit_cast::<64, CQ_BITS>(self.ev_cqn.val());
        self.hit.next = self.ev.val() & self.ev_on.val() & self.ev_armed.val().get_bit(0);
        self.arm_set.next = 0.into();
        if self.arm.val() {
            self.arm_set.next = bits::<64>(1) << bit_cast::<64, CQ_BITS>(self.arm_cqn.val());
        }
        self.arm_clear.next = 0.into();
        if self.hit.val() {
            self.arm_clear.next = bits::<64>(1) << bit_cast::<64, CQ_BITS>(self.ev_cqn.val());
        }
        if self.disarm.val() {
            self.arm_clear.next =
                self.arm_clear.val() | (bits::<64>(1) << bit_cast::<64, CQ_BITS>(self.disarm_cqn.val()));
        }
        self.armed_q.d.next = (self.armed_q.q.val() & !self.arm_clear.val()) | self.arm_set.val();
        self.armed.next = self.armed_q.q.val();
        // Pending bits: a new event wins over the take of the same vector.
        self.take.next = self.v_q.q.val() & self.irq_ready.val();
        self.set.next = 0.into();
        if self.hit.val() {
            self.set.next = bits::<8>(1) << bit_cast::<8, 3>(self.ev_vec.val());
        }
        self.clear.next = 0.into();
        if self.take.val() {
            self.clear.next = bits::<8>(1) << bit_cast::<8, 3>(self.sel_q.q.val());
        }
        self.pend.d.next = (self.pend.q.val() & !self.clear.val()) | self.set.val();
        // Offer the lowest pending unmasked vector; none the cycle after a take (its bit is still set).
        self.live.next = self.pend.q.val() & self.unmasked.q.val();
        self.sel.next = 0.into();
        if self.live.val().get_bit(7) {
            self.sel.next = 7.into();
        }
        if self.live.val().get_bit(6) {
            self.sel.next = 6.into();
        }
        if self.live.val().get_bit(5) {
            self.sel.next = 5.into();
        }
        if self.live.val().get_bit(4) {
            self.sel.next = 4.into();
        }
        if self.live.val().get_bit(3) {
            self.sel.next = 3.into();
        }
        if self.live.val().get_bit(2) {
            self.sel.next = 2.into();
        }
        if self.live.val().get_bit(1) {
            self.sel.next = 1.into();
        }
        if self.live.val().get_bit(0) {
            self.sel.next = 0.into();
        }
        self.v_q.d.next = self.live.val().any() & !self.take.val();
        self.sel_q.d.next = self.sel.val();
        self.addr_q.d.next = self.a0.q.val();
        self.data_q.d.next = self.d0.q.val();
        match self.sel.val().index() {
            1 => {
                self.addr_q.d.next = self.a1.q.val();
                self.data_q.d.next = self.d1.q.val();
            }
            2 => {
                self.addr_q.d.next = self.a2.q.val();
                self.data_q.d.next = self.d2.q.val();
            }
            3 => {
                self.addr_q.d.next = self.a3.q.val();
                self.data_q.d.next = self.d3.q.val();
            }
            4 => {
                self.addr_q.d.next = self.a4.q.val();
                self.data_q.d.next = self.d4.q.val();
            }
            5 => {
                self.addr_q.d.next = self.a5.q.val();
                self.data_q.d.next = self.d5.q.val();
            }
            6 => {
                self.addr_q.d.next = self.a6.q.val();
                self.data_q.d.next = self.d6.q.val();
            }
            7 => {
                self.addr_q.d.next = self.a7.q.val();
                self.data_q.d.next = self.d7.q.val();
            }
            _ => {}
        }
        self.irq_valid.next = self.v_q.q.val();
        self.irq_addr.next = self.addr_q.q.val();
        self.irq_data.next = self.data_q.q.val();
    }
}
