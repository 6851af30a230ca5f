//! DMA muxes: the one DMA read port and the one DMA write port shared by
//! the engines.
//!
//! Requests: the responder's receive-WQE fetch (a SEND's first packet is
//! waiting on it) wins over the send path's WQE batches and payload reads.
//! Each request carries a tag from `rnic_spec::params::dma_tag`, and the
//! completion brings it back: bit 7 alone routes the beat to the responder,
//! bit 6 alone to the send path's WQE buffer, neither or both (a gathered
//! piece, `dma_tag::SQ_GATHER`) to the TX builder as payload.
//! Completions of one requester return in its request order (the PCIe model
//! returns all of them in order; out-of-order completion is issue work for
//! the PCIe front end).
//!
//! Writes: CQEs from the completion writer go before the responder's
//! placement beats; see [`DmaWriteMux`].

use crate::num::Num;
use rnic_spec::desc::RECV_WQE_BYTES;
use rnic_spec::params::dma_tag;
use rust_hdl::prelude::*;

/// Arbitration of DMA read requests and routing of their completions by tag.
#[derive(LogicBlock, Default)]
pub struct DmaReadMux {
    /// Responder: fetch one receive WQE at this address.
    pub rq_valid: Signal<In, Bit>,
    /// Responder: request taken.
    pub rq_ready: Signal<Out, Bit>,
    /// Responder: receive WQE bus address.
    pub rq_addr: Signal<In, Bits<64>>,
    /// Send path: read request valid.
    pub sq_valid: Signal<In, Bit>,
    /// Send path: request taken.
    pub sq_ready: Signal<Out, Bit>,
    /// Send path: bus address.
    pub sq_addr: Signal<In, Bits<64>>,
    /// Send path: length in bytes.
    pub sq_len: Signal<In, Bits<16>>,
    /// Send path: tag (WQE batch or payload).
    pub sq_tag: Signal<In, Bits<8>>,
    /// DMA port: request valid.
    pub req_valid: Signal<Out, Bit>,
    /// DMA port: request ready.
    pub req_ready: Signal<In, Bit>,
    /// DMA port: bus address.
    pub req_addr: Signal<Out, Bits<64>>,
    /// DMA port: length in bytes.
    pub req_len: Signal<Out, Bits<16>>,
    /// DMA port: tag.
    pub req_tag: Signal<Out, Bits<8>>,
    /// DMA port: completion beat valid.
    pub cpl_valid: Signal<In, Bit>,
    /// DMA port: completion beat taken.
    pub cpl_ready: Signal<Out, Bit>,
    /// DMA port: completion data.
    pub cpl_data: Signal<In, Bits<512>>,
    /// DMA port: completion tag.
    pub cpl_tag: Signal<In, Bits<8>>,
    /// To the responder: a receive WQE.
    pub rwqe_valid: Signal<Out, Bit>,
    /// From the responder: receive WQE taken.
    pub rwqe_ready: Signal<In, Bit>,
    /// To the send path: a beat of send WQEs.
    pub wqe_valid: Signal<Out, Bit>,
    /// From the send path: WQE beat taken.
    pub wqe_ready: Signal<In, Bit>,
    /// To the TX builder: a payload beat.
    pub pl_valid: Signal<Out, Bit>,
    /// From the TX builder: payload beat taken.
    pub pl_ready: Signal<In, Bit>,
    /// Completion data, to whichever consumer `*_valid` names.
    pub data: Signal<Out, Bits<512>>,
    to_rq: Signal<Local, Bit>,
    to_sq_wqe: Signal<Local, Bit>,
    tag_rq_wqe: Num<{ dma_tag::RQ_WQE as u64 }, 8>,
    tag_sq_wqe: Num<{ dma_tag::SQ_WQE as u64 }, 8>,
    rwqe_len: Num<{ RECV_WQE_BYTES as u64 }, 16>,
}

// Routing by one tag bit each: the tags must be distinct single bits, and
// payload reads carry neither or both.
const _: () = assert!(
    dma_tag::RQ_WQE.count_ones() == 1
        && dma_tag::SQ_WQE.count_ones() == 1
        && dma_tag::RQ_WQE != dma_tag::SQ_WQE
        && dma_tag::SQ_PAYLOAD & (dma_tag::RQ_WQE | dma_tag::SQ_WQE) == 0
        && dma_tag::SQ_GATHER == dma_tag::RQ_WQE | dma_tag::SQ_WQE
);

impl Logic for DmaReadMux {
    #[hdl_gen]
    fn update(&mut self) {
        self.req_valid.next = self.rq_valid.val() | self.sq_valid.val();
        self.req_addr.next = self.sq_addr.val();
        self.req_len.next = self.sq_len.val();
        self.req_tag.next = self.sq_tag.val();
        if self.rq_valid.val() {
            self.req_addr.next = self.rq_addr.val();
            self.req_len.next = self.rwqe_len.val();
            self.req_tag.next = self.tag_rq_wqe.val();
        }
        self.rq_ready.next = self.req_ready.val();
        self.sq_ready.next = self.req_ready.val() & !self.rq_valid.val();
        self.to_rq.next =
            (self.cpl_tag.val() & self.tag_rq_wqe.val()).any() & !(self.cpl_tag.val() & self.tag_sq_wqe.val()).any();
        self.to_sq_wqe.next =
            (self.cpl_tag.val() & self.tag_sq_wqe.val()).any() & !(self.cpl_tag.val() & self.tag_rq_wqe.val()).any();
        self.data.next = self.cpl_data.val();
        self.rwqe_valid.next = self.cpl_valid.val() & self.to_rq.val();
        self.wqe_valid.next = self.cpl_valid.val() & self.to_sq_wqe.val();
        self.pl_valid.next = self.cpl_valid.val() & !self.to_rq.val() & !self.to_sq_wqe.val();
        self.cpl_ready.next = self.pl_ready.val();
        if self.to_sq_wqe.val() {
            self.cpl_ready.next = self.wqe_ready.val();
        }
        if self.to_rq.val() {
            self.cpl_ready.next = self.rwqe_ready.val();
        }
    }
}

/// The DMA write port shared by the completion writer and the responder's
/// placement. A CQE is one beat and goes first; neither source is buffered,
/// so a beat is accepted by the port in the cycle its source sees ready.
#[derive(LogicBlock, Default)]
pub struct DmaWriteMux {
    /// Completion writer: a CQE write.
    pub cq_valid: Signal<In, Bit>,
    /// Completion writer: taken.
    pub cq_ready: Signal<Out, Bit>,
    /// Completion writer: bus address.
    pub cq_addr: Signal<In, Bits<64>>,
    /// Completion writer: data from lane 0.
    pub cq_data: Signal<In, Bits<512>>,
    /// Completion writer: bytes.
    pub cq_len: Signal<In, Bits<7>>,
    /// Responder: a placement write.
    pub rsp_valid: Signal<In, Bit>,
    /// Responder: taken.
    pub rsp_ready: Signal<Out, Bit>,
    /// Responder: bus address.
    pub rsp_addr: Signal<In, Bits<64>>,
    /// Responder: data, its first byte at lane `rsp_lane`.
    pub rsp_data: Signal<In, Bits<512>>,
    /// Responder: lane of the first byte.
    pub rsp_lane: Signal<In, Bits<6>>,
    /// Responder: bytes.
    pub rsp_len: Signal<In, Bits<7>>,
    /// DMA port: write valid.
    pub wr_valid: Signal<Out, Bit>,
    /// DMA port: write ready.
    pub wr_ready: Signal<In, Bit>,
    /// DMA port: bus address.
    pub wr_addr: Signal<Out, Bits<64>>,
    /// DMA port: data.
    pub wr_data: Signal<Out, Bits<512>>,
    /// DMA port: bytes.
    pub wr_len: Signal<Out, Bits<7>>,
    /// DMA port: lane of the first byte (a CQE's is 0).
    pub wr_lane: Signal<Out, Bits<6>>,
}

impl Logic for DmaWriteMux {
    #[hdl_gen]
    fn update(&mut self) {
        self.wr_valid.next = self.cq_valid.val() | self.rsp_valid.val();
        self.wr_addr.next = self.rsp_addr.val();
        self.wr_data.next = self.rsp_data.val();
        self.wr_len.next = self.rsp_len.val();
        self.wr_lane.next = self.rsp_lane.val();
        if self.cq_valid.val() {
            self.wr_lane.next = 0.into();
            self.wr_addr.next = self.cq_addr.val();
            self.wr_data.next = self.cq_data.val();
            self.wr_len.next = self.cq_len.val();
        }
        self.cq_ready.next = self.wr_ready.val();
        self.rsp_ready.next = self.wr_ready.val() & !self.cq_valid.val();
    }
}
