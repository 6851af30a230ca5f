//! The core's top level: register port, DMA port, network frame ports.

use rust_hdl::prelude::*;

/// The rnic core (DESIGN.md §3 interfaces). All streams are valid/ready;
/// a beat moves on a cycle where both are high.
#[derive(LogicBlock, Default)]
pub struct RnicCore {
    /// Core clock (250 MHz target).
    pub clock: Signal<In, Clock>,
    /// BAR0 write strobe.
    pub reg_wr_valid: Signal<In, Bit>,
    /// BAR0 write byte offset.
    pub reg_wr_addr: Signal<In, Bits<32>>,
    /// BAR0 write data.
    pub reg_wr_data: Signal<In, Bits<64>>,
    /// BAR0 read strobe (one read outstanding at a time).
    pub reg_rd_valid: Signal<In, Bit>,
    /// BAR0 read byte offset.
    pub reg_rd_addr: Signal<In, Bits<32>>,
    /// Read response strobe.
    pub reg_rd_resp_valid: Signal<Out, Bit>,
    /// Read response data.
    pub reg_rd_resp_data: Signal<Out, Bits<64>>,
    /// DMA read request valid.
    pub dma_rd_req_valid: Signal<Out, Bit>,
    /// DMA read request ready.
    pub dma_rd_req_ready: Signal<In, Bit>,
    /// DMA read bus address.
    pub dma_rd_req_addr: Signal<Out, Bits<64>>,
    /// DMA read length in bytes (1..=4096).
    pub dma_rd_req_len: Signal<Out, Bits<16>>,
    /// DMA read tag, returned with the completion.
    pub dma_rd_req_tag: Signal<Out, Bits<8>>,
    /// DMA read completion valid. Completions return in request order,
    /// packed from lane 0 (the adapter realigns), bytes past the length zero.
    pub dma_rd_cpl_valid: Signal<In, Bit>,
    /// DMA read completion ready.
    pub dma_rd_cpl_ready: Signal<Out, Bit>,
    /// DMA read completion data.
    pub dma_rd_cpl_data: Signal<In, Bits<512>>,
    /// DMA read completion tag.
    pub dma_rd_cpl_tag: Signal<In, Bits<8>>,
    /// Last beat of a read completion.
    pub dma_rd_cpl_last: Signal<In, Bit>,
    /// DMA write valid: one beat writes `dma_wr_len` bytes from lane 0 at `dma_wr_addr`.
    pub dma_wr_valid: Signal<Out, Bit>,
    /// DMA write ready.
    pub dma_wr_ready: Signal<In, Bit>,
    /// DMA write bus address.
    pub dma_wr_addr: Signal<Out, Bits<64>>,
    /// DMA write data.
    pub dma_wr_data: Signal<Out, Bits<512>>,
    /// DMA write byte count (1..=64).
    pub dma_wr_len: Signal<Out, Bits<7>>,
    /// Network TX valid.
    pub net_tx_valid: Signal<Out, Bit>,
    /// Network TX ready.
    pub net_tx_ready: Signal<In, Bit>,
    /// Network TX data (frame byte 0 in lane 0).
    pub net_tx_data: Signal<Out, Bits<512>>,
    /// Network TX byte enables.
    pub net_tx_keep: Signal<Out, Bits<64>>,
    /// Network TX last beat of a frame.
    pub net_tx_last: Signal<Out, Bit>,
    /// Network RX valid.
    pub net_rx_valid: Signal<In, Bit>,
    /// Network RX ready.
    pub net_rx_ready: Signal<Out, Bit>,
    /// Network RX data.
    pub net_rx_data: Signal<In, Bits<512>>,
    /// Network RX byte enables.
    pub net_rx_keep: Signal<In, Bits<64>>,
    /// Network RX last beat of a frame.
    pub net_rx_last: Signal<In, Bit>,
}

impl Logic for RnicCore {
    #[hdl_gen]
    fn update(&mut self) {
        self.reg_rd_resp_valid.next = false;
        self.reg_rd_resp_data.next = 0.into();
        self.dma_rd_req_valid.next = false;
        self.dma_rd_req_addr.next = 0.into();
        self.dma_rd_req_len.next = 0.into();
        self.dma_rd_req_tag.next = 0.into();
        self.dma_rd_cpl_ready.next = true;
        self.dma_wr_valid.next = false;
        self.dma_wr_addr.next = 0.into();
        self.dma_wr_data.next = 0.into();
        self.dma_wr_len.next = 0.into();
        self.net_tx_valid.next = false;
        self.net_tx_data.next = 0.into();
        self.net_tx_keep.next = 0.into();
        self.net_tx_last.next = false;
        self.net_rx_ready.next = true;
    }
}
