//! Global parameters of the core.

/// Core clock in Hz (`docs/design.md`): every simulated figure is cycles at this clock.
pub const CLOCK_HZ: u64 = 250_000_000;
/// Picoseconds per core clock cycle.
pub const CLOCK_PS: u64 = 1_000_000_000_000 / CLOCK_HZ;
/// Datapath width in bytes (512 bits, the width of the Xilinx 100G CMAC AXI-Stream).
pub const DATA_BYTES: usize = 64;
/// Datapath width in bits.
pub const DATA_BITS: usize = DATA_BYTES * 8;

/// QPN width the QPC layout is designed for (16K QPs, SRNIC's scale).
pub const QPN_BITS_MAX: usize = 14;
/// QPN width the current RTL instantiates (QPC block RAM depth = 2^QPN_BITS).
pub const QPN_BITS: usize = 8;
/// Number of QPs the current RTL holds.
pub const NUM_QPS: usize = 1 << QPN_BITS;
/// MR table index width (the MR key is `index << 8 | tag`).
pub const MR_BITS: usize = 8;
/// Number of MR table entries.
pub const NUM_MRS: usize = 1 << MR_BITS;
/// CQ number width.
pub const CQ_BITS: usize = 6;
/// Number of completion queues.
pub const NUM_CQS: usize = 1 << CQ_BITS;

/// Smallest path MTU (payload bytes per packet), log2.
pub const PMTU_LOG2_MIN: u8 = 8;
/// Largest path MTU, log2 (4096 B).
pub const PMTU_LOG2_MAX: u8 = 12;
/// Largest RDMA message the RTL accepts (bytes), bounded by the 32-bit WQE length.
pub const MAX_MSG_LEN: u64 = 1 << 31;

/// Most bytes of DMA read the SQ engine keeps in flight. SRNIC measured a
/// 1 us PCIe round trip; 1 us at 100 Gb/s is 12.5 KB, so 32 KB covers it twice.
pub const DMA_RD_MAX_INFLIGHT_BYTES: u32 = 32 * 1024;
/// Largest single DMA read request (bytes); payload reads are one per packet.
pub const DMA_RD_MAX_LEN: u32 = 4096;

/// PCIe tag width of the DMA front end's read requests (256 tags: PCIe's
/// extended tags, which the UltraScale+ integrated block supports).
pub const PCIE_TAG_BITS: usize = 8;
/// log2 of the DMA front end's completion reorder buffer in 64-byte beats
/// (512 beats, 32 KiB: [`DMA_RD_MAX_INFLIGHT_BYTES`], over twice what a 1 us
/// round trip at 100 Gb/s needs).
pub const DMA_RD_RING_LOG2: usize = 9;

/// Beats of the gather join's FIFO in front of the TX builder, log2: two of
/// the largest packets, so one gathered packet fills while the one before
/// it leaves.
pub const JOIN_BEATS_LOG2: usize = 7;

/// PCIe Device Control's code of a Max_Read_Request_Size or
/// Max_Payload_Size of `bytes` (128 << code; 128..=4096 B are codes 0..=5).
pub const fn pcie_size_code(bytes: u32) -> u8 {
    let mut code = 0;
    while code < 5 && (128u32 << code) < bytes {
        code += 1;
    }
    code
}

/// SQ scheduler: WQEs fetched per turn (SRNIC §4.3, n = 8).
pub const SCHED_WQES_PER_TURN: u32 = 8;
/// SQ scheduler: payload bytes a QP may send per turn (SRNIC burst_size).
pub const SCHED_BURST_BYTES: u32 = 16 * 1024;

/// Most entropies (UDP source ports) a sprayed QP spreads over
/// (`regs::qpc::MAX_PATHS`; STrack's per-connection ECN bitmap width).
pub const MAX_PATHS: usize = 256;
/// A sprayed QP sends a packet only while fewer than this many of its PSNs
/// are past the ePSN of its latest ACK: packets overtaken on slower paths
/// then stay inside the responder's selective-repeat window
/// ([`SR_WINDOW`]), where they are placed instead of dropped. (A fixed
/// window in packets, until STrack's congestion window gates the QP.)
pub const SPRAY_WINDOW_PKTS: u32 = 96;

/// UDP source port base of a QP (the library's `0xC000 | QPN`; RoCEv2
/// recommends 0xC000..0xFFFF for the entropy). A sprayed packet replaces
/// the low byte with its entropy.
pub const UDP_SPORT_BASE: u16 = 0xC000;
const _: () = assert!(SPRAY_WINDOW_PKTS < SR_WINDOW);

/// Requester asks for an ACK at least every this many packets (BTH AckReq),
/// and always on the last packet of a message, on the packet that spends a
/// turn's burst budget (the QP may then wait a long while for its next
/// turn; its packets in flight must not wait that long for their ACK, or
/// the retransmission timeout fires) and on a single-packet resend.
pub const ACK_REQ_EVERY: u32 = 16;
/// Selective repeat: bits of a responder window, a bitmap whose bit i is
/// PSN ePSN + i (bit 0, ePSN itself, is clear at rest). The fabric
/// simulation's largest reorder span from spraying (about one BDP, up to
/// ~100 packets of 4 KiB at 100 Gb/s) fits in 128.
pub const SR_WINDOW_BITS: usize = 128;
/// Selective repeat: how far ahead of ePSN (in PSNs) the responder places a
/// WRITE or SEND packet out of order and records it in a window. Beyond it a
/// packet is dropped and NAKed as under go-back-N.
pub const SR_WINDOW: u32 = SR_WINDOW_BITS as u32 - 1;
/// RDMA READs a QP has in flight at most (IBA's initiator depth): a READ
/// goes only if every WQE since lACK is a READ (their responses come back
/// in PSN order, placed in order) and fewer than this many are outstanding.
pub const RD_IN_FLIGHT: u32 = 2;
/// log2 of the number of windows in the responder's shared pool.
pub const SR_POOL_LOG2: usize = 6;
/// Windows in the responder's shared pool. A QP borrows one when a packet
/// of it is placed out of order and returns it once ePSN has passed every
/// packet the window holds; a QP whose out-of-order packet finds the pool
/// empty goes to software recovery instead ([`SW_SR_SPAN`], counted in
/// `regs::counters::RX_OOO_SW`). 64 windows hold a 32:1 incast with
/// every sender reordering, twice over.
pub const SR_POOL: usize = 1 << SR_POOL_LOG2;
/// Software recovery (SRNIC's bitmap onloading, for a QP that found the
/// window pool empty): how far ahead of ePSN, in PSNs, the responder places
/// a plain WRITE packet and reports it to the host's slow path through the
/// CtrlQ. The host keeps a bitmap this long per QP while the QP recovers:
/// a BDP of 100 Gb/s × 40 µs at a 1 KiB PMTU.
pub const SW_SR_SPAN: u32 = 4096;

/// Depth of the send engine's SQ rewind queue (`regs::REG_SQ_REWIND`), log2.
pub const REWIND_QUEUE_LOG2: usize = 4;
/// Depth of the send engine's SQ rewind queue.
pub const REWIND_QUEUE: usize = 1 << REWIND_QUEUE_LOG2;
/// log2 of the depth of the responder's queue of software-recovery commands
/// (`regs::REG_RX_SR_SET`).
pub const RX_SR_QUEUE_LOG2: usize = 4;
/// Depth of the responder's queue of software-recovery commands.
pub const RX_SR_QUEUE: usize = 1 << RX_SR_QUEUE_LOG2;
/// log2 of the READ response jobs the send path queues (the responder
/// waits while the queue is full): room for `RD_IN_FLIGHT` READs of each
/// of 32 QPs, so READs of many QPs do not wait in the responder's RX ring
/// behind queued ones (their requesters would time out).
pub const JOB_QUEUE_LOG2: usize = 6;

/// Tags of the core's DMA read requests: bits 7:6 route the completion back
/// to the engine that asked.
pub mod dma_tag {
    /// A payload read of the send path (one per packet).
    pub const SQ_PAYLOAD: u8 = 0x00;
    /// A batch of send WQEs for the scheduler's turn.
    pub const SQ_WQE: u8 = 0x40;
    /// A receive WQE fetched by the responder when a SEND starts.
    pub const RQ_WQE: u8 = 0x80;
    /// A piece of a send packet gathered from two scatter-gather entries
    /// (both routing bits set: payload). Bits 5:0 are the piece's length
    /// mod 64, which the gather join (`rnic_hw::gather`) needs to place the
    /// next piece (after the first) or to know whether its last beat spills
    /// over (after the second).
    pub const SQ_GATHER: u8 = 0xC0;
}

/// RX store-and-forward buffer in beats: frames are held until their ICRC is
/// checked, so a corrupt frame never reaches host memory.
pub const RX_BUF_BEATS_LOG2: usize = 10;

/// Converts core cycles to seconds.
pub fn cycles_to_secs(cycles: u64) -> f64 {
    cycles as f64 / CLOCK_HZ as f64
}
