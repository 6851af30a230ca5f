//! BAR0 register map. All registers are 64 bits wide at 8-byte-aligned
//! byte offsets. Table entries (QPC, MR, CQ) are written through eight
//! staging words followed by a commit register naming the entry, so one
//! register port serves every table without a wide bus.

use bitflags::bitflags;

/// Read-only identification: `ID_MAGIC << 32 | version`.
pub const REG_ID: u32 = 0x000;
/// The value of the upper half of [`REG_ID`]: ASCII "RNIC".
pub const ID_MAGIC: u64 = 0x524E_4943;
/// The lower half of [`REG_ID`]: the register map's version.
pub const ID_VERSION: u64 = 1;
/// Read-only capabilities: `[7:0]` QPN bits, `[15:8]` MR bits, `[23:16]` CQ bits,
/// [`CAPS_PUSH`], `[31:28]` the number of MSI-X vectors ([`CAPS_MSIX_SHIFT`]).
pub const REG_CAPS: u32 = 0x008;
/// [`REG_CAPS`] bit: the NIC has the WQE push window ([`PUSH_BASE`]).
pub const CAPS_PUSH: u64 = 1 << 24;
/// [`REG_CAPS`] `[31:28]`: the number of MSI-X vectors ([`MSIX_VECTORS`]).
pub const CAPS_MSIX_SHIFT: u32 = 28;
/// Source MAC address of this NIC, `[47:0]`, first wire byte in `[47:40]`.
pub const REG_SRC_MAC: u32 = 0x010;
/// Source IPv4 address of this NIC, `[31:0]`, first wire byte in `[31:24]`.
pub const REG_SRC_IP: u32 = 0x018;
/// Free-running cycle counter (read-only); also the TX timestamp source.
pub const REG_CYCLES: u32 = 0x020;
/// Read-only status: [`STATUS_READY`].
pub const REG_STATUS: u32 = 0x028;
/// [`REG_STATUS`] bit: the core has cleared its tables after power-on or a
/// reset and takes commands. Until then register writes other than to the
/// source addresses are lost; the driver waits for it before anything else.
pub const STATUS_READY: u64 = 1;

/// First of the eight staging words (`REG_STAGE + 8*i`).
pub const REG_STAGE: u32 = 0x100;
/// Number of staging words.
pub const NUM_STAGE: usize = 8;
/// Write `qpn | flags`: copies the staging words into that QP's context (see
/// [`qpc`]). With [`QP_COMMIT_RESET_RESP`] the responder state (ePSN from
/// `RQ_PSN`, MSN, RQ consumer index) is reset; with [`QP_COMMIT_RESET_REQ`] the
/// requester state (next PSN from `SQ_PSN`, SSN, SQ consumer index, error flag).
/// The library commits with both at RTR and with only the requester flag at RTS.
pub const REG_QP_COMMIT: u32 = 0x140;
/// [`REG_QP_COMMIT`] flag: reset the responder's dynamic state.
pub const QP_COMMIT_RESET_RESP: u64 = 1 << 32;
/// [`REG_QP_COMMIT`] flag: reset the requester's dynamic state.
pub const QP_COMMIT_RESET_REQ: u64 = 1 << 33;
/// Write an MR index: copies the staging words into the MR table (see [`mr`]).
pub const REG_MR_COMMIT: u32 = 0x148;
/// Write a CQN: copies the staging words into the CQ table (see [`cq`]) and
/// resets the CQ's producer index to 0.
pub const REG_CQ_COMMIT: u32 = 0x150;

/// Read-only event counters, one 64-bit register each.
pub mod counters {
    /// Data packets transmitted.
    pub const TX_PKTS: u32 = 0x200;
    /// ACK/NAK packets transmitted.
    pub const TX_ACKS: u32 = 0x208;
    /// Frames received (any).
    pub const RX_FRAMES: u32 = 0x210;
    /// Frames dropped for a bad ICRC.
    pub const RX_ICRC_ERR: u32 = 0x218;
    /// Frames dropped for bad headers (not IPv4/UDP 4791, bad length, unknown opcode, bad QPN).
    pub const RX_HDR_ERR: u32 = 0x220;
    /// Frames dropped because the RX buffer was full.
    pub const RX_DROP_NOBUF: u32 = 0x228;
    /// Requests NAKed with a PSN sequence error.
    pub const RX_PSN_ERR: u32 = 0x230;
    /// Requests NAKed with a remote access error (bad rkey, bounds, permission).
    pub const RX_ACCESS_ERR: u32 = 0x238;
    /// Duplicate requests (PSN already received) re-ACKed and dropped.
    pub const RX_DUP: u32 = 0x240;
    /// SENDs NAKed because no receive WQE was posted (RNR).
    pub const RX_RNR: u32 = 0x248;
    /// NAKs received by the requester.
    pub const RX_NAK: u32 = 0x250;
    /// ACKs received by the requester.
    pub const RX_ACKS: u32 = 0x258;
    /// CQEs written.
    pub const CQES: u32 = 0x260;
    /// In-sequence requests NAKed as invalid (INV_REQ): opcode out of
    /// sequence, a FIRST/MIDDLE shorter than the PMTU, a payload longer than
    /// it, a PSN_OFFSET or a length that disagrees with the message.
    pub const RX_INV_REQ: u32 = 0x268;
    /// Register writes ignored: a commit or doorbell naming a QP, MR or CQ
    /// index the NIC does not have.
    pub const REG_ERR: u32 = 0x270;
    /// Events not reported because the CtrlQ was full or not set up.
    pub const CTRLQ_DROP: u32 = 0x278;
    /// CtrlQ entries written.
    pub const CTRLQ_ENTRIES: u32 = 0x280;
    /// SQ rewinds applied (retransmissions the host's slow path asked for
    /// through [`super::REG_SQ_REWIND`]).
    pub const SQ_REWINDS: u32 = 0x288;
    /// SQ rewinds dropped because the NIC's rewind queue was full, or
    /// single-packet resends whose WQE has an opcode the host may not post.
    pub const SQ_REWIND_DROP: u32 = 0x290;
    /// Retransmission timeouts reported (CtrlQ `REQ_TIMEOUT` entries asked for).
    pub const RTO_EXPIRED: u32 = 0x298;
    /// Requests placed out of order by the responder's selective repeat
    /// (ahead of ePSN, inside the QP's window; [`super::qpc::SR_EN`]).
    pub const RX_OOO_PLACED: u32 = 0x2A0;
    /// Single-packet resends taken from the rewind queue
    /// ([`super::rewind::ONE`]): sent, or dropped because the QP has failed
    /// or the WQE at that SSN does not hold that packet.
    pub const SQ_RESENDS: u32 = 0x2A8;
    /// Out-of-order WRITE packets the responder placed through software
    /// recovery (the QP had no window and the shared pool had none free,
    /// [`crate::params::SR_POOL`]): each is reported to the host's slow
    /// path in a CtrlQ `RESP_OOO` entry.
    pub const RX_OOO_SW: u32 = 0x2B0;
    /// Times the send path skipped ahead to lACK: a rewind (or a resend)
    /// reached a WQE the peer had acknowledged meanwhile, whose ring slot
    /// the host may already have reused; nothing more of it is sent.
    pub const SQ_SKIPS: u32 = 0x2B8;
    /// ACK or NAK frames that found STrack's window engine busy and were
    /// not fed to it. Every QP's are offered (the engine ignores those of
    /// QPs whose window, [`super::qpc::CC`], is off, busy 3 cycles each);
    /// for a QP under the window a skipped ACK's acknowledged PSNs count
    /// with the next ACK taken, its RTT and ECN sample is lost.
    pub const CC_SKIPPED: u32 = 0x2C0;
    /// Received frames the board shell dropped before the core: its RX
    /// clock-crossing FIFO was full (the core's RX front end was holding
    /// back, and a MAC cannot wait) or the MAC marked the frame bad (FCS).
    /// Always 0 on the core alone.
    pub const RX_MAC_DROP: u32 = 0x2C8;
    /// WQEs the send path took from the WQE push window
    /// ([`super::PUSH_BASE`]) instead of fetching them by DMA.
    pub const SQ_PUSHED: u32 = 0x2D0;
    /// MSI-X messages sent (completion events of armed CQs, see [`super::REG_CQ_ARM`]).
    pub const IRQS: u32 = 0x2D8;
    /// Number of counters.
    pub const COUNT: usize = 28;
    /// Every counter's name (as the host library and the tools print it) and offset, in register order.
    pub const NAMES: [(&str, u32); COUNT] = [
        ("tx_pkts", TX_PKTS),
        ("tx_acks", TX_ACKS),
        ("rx_frames", RX_FRAMES),
        ("rx_icrc_err", RX_ICRC_ERR),
        ("rx_hdr_err", RX_HDR_ERR),
        ("rx_drop_nobuf", RX_DROP_NOBUF),
        ("rx_psn_err", RX_PSN_ERR),
        ("rx_access_err", RX_ACCESS_ERR),
        ("rx_dup", RX_DUP),
        ("rx_rnr", RX_RNR),
        ("rx_nak", RX_NAK),
        ("rx_acks", RX_ACKS),
        ("cqes", CQES),
        ("rx_inv_req", RX_INV_REQ),
        ("reg_err", REG_ERR),
        ("ctrlq_drop", CTRLQ_DROP),
        ("ctrlq_entries", CTRLQ_ENTRIES),
        ("sq_rewinds", SQ_REWINDS),
        ("sq_rewind_drop", SQ_REWIND_DROP),
        ("rto_expired", RTO_EXPIRED),
        ("rx_ooo_placed", RX_OOO_PLACED),
        ("sq_resends", SQ_RESENDS),
        ("rx_ooo_sw", RX_OOO_SW),
        ("sq_skips", SQ_SKIPS),
        ("cc_skipped", CC_SKIPPED),
        ("rx_mac_drop", RX_MAC_DROP),
        ("sq_pushed", SQ_PUSHED),
        ("irqs", IRQS),
    ];
    // The counters are consecutive registers from TX_PKTS, in this order.
    const _: () = {
        let mut i = 0;
        while i < COUNT {
            assert!(NAMES[i].1 == TX_PKTS + 8 * i as u32);
            i += 1;
        }
    };
}

/// MR fence: a write starts a fence; a read returns 1 until every DMA that
/// used a key checked before the fence started has finished (the responder
/// has finished the packet it was placing, payload reads issued before have
/// completed, and, PCIe ordering, the reply is not visible before earlier
/// posted writes). `dereg_mr` invalidates the key, fences, then frees.
pub const REG_MR_FENCE: u32 = 0x158;

/// Control queue (CtrlQ): the ring in host memory where the NIC reports
/// what the slow path in host software handles (SRNIC's onloaded loss
/// recovery). Bus address of the ring; entries are
/// [`crate::desc::CtrlqEntry`] (32 bytes, owner bit as in a CQ).
pub const REG_CTRLQ_BASE: u32 = 0x160;
/// log2 of the CtrlQ's entry count (1..=16; 0: no CtrlQ, nothing is
/// reported). Writing it resets the NIC's producer index to 0.
pub const REG_CTRLQ_LOG2: u32 = 0x168;
/// The host's CtrlQ consumer index (free-running, 32 bits). The NIC writes
/// an entry only while the ring has a free slot; otherwise the event is
/// dropped and counted in [`counters::CTRLQ_DROP`].
pub const REG_CTRLQ_CI: u32 = 0x170;

/// SQ rewind (go-back-N retransmission, asked for by the host's slow path):
/// write `qpn` to make the QP's requester resend from the position in the
/// staging words ([`rewind`]): SSN, PSN and byte offset in that message.
/// The send engine applies it between turns and schedules the QP. A rewind
/// names a WQE the host has not completed; the NIC does not check that the
/// position agrees with what it sent. The queue holds
/// [`crate::params::REWIND_QUEUE`] rewinds; more are dropped and counted in
/// [`counters::SQ_REWIND_DROP`], a QPN past the table in
/// [`counters::REG_ERR`].
pub const REG_SQ_REWIND: u32 = 0x178;
/// Retransmission timeout in core clock cycles (0: off, the reset value).
/// The ACK receiver scans every QP's requester state between ACKs; a QP
/// with WQEs sent (at least in part) and not acknowledged, and no ACK for
/// longer than this, gets a CtrlQ `REQ_TIMEOUT` entry (again after each
/// further timeout). Each QP is looked at once per scan of about
/// `4 * 2^QPN_BITS` cycles, the timeout's resolution.
pub const REG_RTO: u32 = 0x180;
/// Probe timeout in core clock cycles (0: off, the reset value): the same
/// scan as [`REG_RTO`]'s (which runs while `REG_RTO` is on) gives a QP with
/// packets outstanding and no ACK for longer than this one CtrlQ
/// `REQ_PROBE` entry per stall (STrack's probe-based loss detection, about
/// three base RTTs; the library sets it with the window's network,
/// `Context::set_cc_network`).
pub const REG_PROBE: u32 = 0x1A0;

/// Software recovery's new ePSN (SRNIC's bitmap onloading): write `qpn` to
/// tell the QP's responder, from the staging words ([`rx_sr`]), that every
/// PSN from `FROM` up to `TO` (exclusive) has been received and placed,
/// with `ENDS` messages ending among them. The responder applies it only
/// if the QP is in software recovery, in generation `GEN` (its responder
/// resets mod 16, the `episode` of its reports), its ePSN is `FROM` and `TO` is
/// ahead of it and not past `psn_left`, the first PSN of the most advanced
/// run of packets it placed in recovery (SRNIC's exit rule, Figure 8):
/// then ePSN := `TO`, and if `TO` is `psn_left`, ePSN := `psn_right + 1`
/// and the QP leaves recovery. Either way it answers with a CtrlQ
/// `RESP_SYNC` entry, and an ACK goes to the requester if ePSN moved.
/// Commands are queued ([`crate::params::RX_SR_QUEUE`] deep); one that
/// finds the queue full is dropped and counted in [`counters::REG_ERR`].
pub const REG_RX_SR_SET: u32 = 0x188;

/// Selective-repeat windows of the responder's pool held back (0, the
/// reset value, to [`crate::params::SR_POOL`]): the responder lends at most
/// `SR_POOL` minus this many at once, so more QPs go to software recovery.
/// For tests and experiments with the slow path; readable.
pub const REG_SR_POOL_HOLD: u32 = 0x190;

/// STrack's congestion-control parameters (Table 1, in `rnic-model`'s
/// fixed-point formats), the same for every QP: a write (any value) takes
/// them from the staging words ([`cc_params`]). Until the first write they
/// are zero and no QP should enable [`qpc::CC`].
pub const REG_CC_PARAMS: u32 = 0x198;
/// A QP's congestion window, for the host to watch: a write selects the QP
/// (its QPN in the low bits), a read after it returns that QP's window as
/// the window engine last wrote it (bytes, Q24.8; STrack's or DCTCP's; for
/// a QP whose window is off, the largest, where its last requester reset
/// started it; 0 for a QPN never reset).
pub const REG_CC_WINDOW: u32 = 0x1A8;

/// Arm a CQ for one completion event (`ibv_req_notify_cq`): write its CQN.
/// The next CQE the NIC writes to that CQ, if the CQ has
/// [`cq::EVENTS`], disarms it and makes its vector ([`cq::VECTOR`]) pending;
/// a pending vector that is not masked sends its MSI-X message (a 4-byte
/// memory write of the entry's data to its address, after the CQE's write,
/// so the CQE is in memory when the interrupt arrives). Several events of
/// one vector before its message is sent give one message. Arming an armed
/// CQ changes nothing; a CQ commit disarms the CQ. A CQN past the table is
/// ignored and counted in [`counters::REG_ERR`].
pub const REG_CQ_ARM: u32 = 0x1B0;
/// Read-only: bit `c` is 1 while CQ `c` is armed ([`REG_CQ_ARM`]); the
/// host reads it to learn which of a vector's CQs had their event. All
/// [`crate::params::NUM_CQS`] CQs fit one word.
pub const REG_CQ_ARMED: u32 = 0x1B8;

/// MSI-X vectors of the NIC.
pub const MSIX_VECTORS: usize = 8;
const _: () = assert!(crate::params::NUM_CQS <= 64 && MSIX_VECTORS == 1 << cq::VECTOR.width);
/// The MSI-X table, laid out as PCI's: vector `v`'s entry is 16 bytes at
/// `MSIX_TABLE + 16*v`, a 64-bit word of message address ([`msix_addr`];
/// bits 1:0 are ignored, a message is a dword write) and a word of message
/// data `[31:0]` and vector control `[32]` (mask, [`MSIX_MASKED`])
/// ([`msix_ctrl`]). Every vector is masked after power-on and after a
/// reset of the core. Reads return what was written.
pub const MSIX_TABLE: u32 = 0x38_0000;
/// The MSI-X pending bit array (read-only): bit `v` is 1 while vector `v`
/// has a message to send (masked, or waiting for the DMA write port).
pub const MSIX_PBA: u32 = 0x38_0800;
/// Vector control bit of [`msix_ctrl`]: the vector is masked; its events
/// stay pending and its message goes out when it is unmasked.
pub const MSIX_MASKED: u64 = 1 << 32;
/// Byte offset of MSI-X vector `v`'s message address.
pub const fn msix_addr(v: usize) -> u32 {
    MSIX_TABLE + 16 * v as u32
}
/// Byte offset of MSI-X vector `v`'s message data and vector control.
pub const fn msix_ctrl(v: usize) -> u32 {
    MSIX_TABLE + 16 * v as u32 + 8
}

/// log2 of BAR0's size in bytes (4 MiB: the register map, the doorbells of
/// 16K QPs, the push window and the MSI-X table).
pub const BAR0_LOG2: u32 = 22;
/// BAR0's size in bytes.
pub const BAR0_BYTES: u64 = 1 << BAR0_LOG2;
const _: () = assert!(MSIX_PBA < BAR0_BYTES as u32 && DB_RQ_BASE as u64 + 8 * (1 << 14) <= PUSH_BASE as u64);

/// SQ doorbell of QP `n` is at `DB_SQ_BASE + 8*n`; the value is the new SQ
/// producer index (free-running, low 16 bits used).
pub const DB_SQ_BASE: u32 = 0x10_0000;
/// RQ doorbell of QP `n` is at `DB_RQ_BASE + 8*n`; the value is the new RQ
/// producer index (free-running, low 16 bits used).
pub const DB_RQ_BASE: u32 = 0x20_0000;

/// WQE push window: a send WQE written through the BAR with its doorbell,
/// so the NIC needs no DMA read to start it (a doorbell that carries its
/// WQE, as low-latency NICs do). Word `i` (`PUSH_BASE + 8*i`) holds bytes
/// `8i..8i+8`, little-endian: words 0..8 the [`crate::desc::SendWqe`]
/// exactly as in the ring, words 8..16 the first 64 payload bytes.
///
/// - An SQ doorbell ([`db_sq`]) written after all [`PUSH_WORDS`] words (each
///   at least once since the previous SQ doorbell) commits them as the WQE at
///   index `PI - 1` of that QP; any SQ doorbell restarts the count.
/// - The payload words count only with [`crate::desc::wqe_flags::PUSH_PAYLOAD`]
///   in the WQE and a length of 1 to [`PUSH_PAYLOAD_MAX`] bytes: the
///   message's one packet then needs no payload read either. The bytes
///   past the length are ignored (the NIC sends zeros in their place).
/// - The NIC has one slot. It takes the WQE only when that QP's next WQE to
///   send is this index and none is fetched for it; otherwise, or when a
///   word of a later push arrives first, the WQE is fetched from the ring.
///   The ring and the payload's memory must therefore hold the same bytes
///   (retransmissions read them there too). A QP commit drops the slot.
/// - The words of one push must not interleave with another's: the host
///   serializes its pushes. Addresses past the last word are ignored and
///   counted as bad indices.
pub const PUSH_BASE: u32 = 0x30_0000;
/// Words in the push window: 8 of WQE, 8 of payload.
pub const PUSH_WORDS: usize = 16;
/// Payload bytes a push carries.
pub const PUSH_PAYLOAD_MAX: u32 = 64;

/// Byte offset of staging word `i`.
pub const fn stage(i: usize) -> u32 {
    REG_STAGE + 8 * i as u32
}
/// Byte offset of QP `qpn`'s SQ doorbell.
pub const fn db_sq(qpn: u32) -> u32 {
    DB_SQ_BASE + 8 * qpn
}
/// Byte offset of QP `qpn`'s RQ doorbell.
pub const fn db_rq(qpn: u32) -> u32 {
    DB_RQ_BASE + 8 * qpn
}
/// Byte offset of push word `i`.
pub const fn push_word(i: usize) -> u32 {
    PUSH_BASE + 8 * i as u32
}

/// A bit field inside a 64-bit staging word: `(word, lsb, width)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// Staging word index.
    pub word: usize,
    /// Least significant bit.
    pub lsb: u32,
    /// Width in bits.
    pub width: u32,
}

impl Field {
    const fn new(word: usize, lsb: u32, width: u32) -> Self {
        Field { word, lsb, width }
    }
    /// Bit position inside the concatenated staging words (`word*64 + lsb`),
    /// the layout the RTL stores in block RAM.
    pub const fn bit(&self) -> usize {
        self.word * 64 + self.lsb as usize
    }
    /// Inserts `v` into the staging words.
    pub fn put(&self, words: &mut [u64; NUM_STAGE], v: u64) {
        let mask = if self.width == 64 { u64::MAX } else { (1u64 << self.width) - 1 };
        assert!(v & !mask == 0, "value {v:#x} does not fit the {}-bit field", self.width);
        words[self.word] = (words[self.word] & !(mask << self.lsb)) | (v << self.lsb);
    }
    /// Extracts the field from the staging words.
    pub fn get(&self, words: &[u64; NUM_STAGE]) -> u64 {
        let mask = if self.width == 64 { u64::MAX } else { (1u64 << self.width) - 1 };
        (words[self.word] >> self.lsb) & mask
    }
}

/// QP context written by [`REG_QP_COMMIT`] (the static half of the QPC;
/// the dynamic half — SQ consumer index, next PSN, ePSN, MSN — is owned by
/// the SQ and RX engines and reset on commit).
pub mod qpc {
    use super::Field;
    /// 1: the requester may transmit (RTS); 0: doorbells are ignored.
    pub const RTS: Field = Field::new(0, 0, 1);
    /// 1: the responder accepts requests (RTR or RTS).
    pub const RTR: Field = Field::new(0, 1, 1);
    /// log2 of the path MTU in bytes (8..=12).
    pub const PMTU_LOG2: Field = Field::new(0, 4, 4);
    /// Destination (remote) QPN.
    pub const REMOTE_QPN: Field = Field::new(0, 8, 24);
    /// CQ for send completions.
    pub const SEND_CQN: Field = Field::new(0, 32, 16);
    /// CQ for receive completions.
    pub const RECV_CQN: Field = Field::new(0, 48, 16);
    /// Bus address of the send queue (64-byte WQEs).
    pub const SQ_BASE: Field = Field::new(1, 0, 64);
    /// Bus address of the receive queue (32-byte WQEs).
    pub const RQ_BASE: Field = Field::new(2, 0, 64);
    /// log2 of the SQ size in WQEs.
    pub const SQ_LOG2: Field = Field::new(3, 0, 8);
    /// log2 of the RQ size in WQEs.
    pub const RQ_LOG2: Field = Field::new(3, 8, 8);
    /// Protection domain (MR keys used by this QP must carry the same PD).
    pub const PD: Field = Field::new(3, 16, 16);
    /// 1: selective repeat at the responder: a WRITE or SEND packet up to
    /// [`crate::params::SR_WINDOW`] PSNs ahead of ePSN is placed (a SEND's
    /// in the receive WQE its RSN names, if posted) and
    /// recorded in a window the QP borrows from the responder's pool, and its NAK says so
    /// ([`crate::wire::ack_flags::PLACED`]); 0: only the packet at ePSN is
    /// accepted (go-back-N).
    pub const SR_EN: Field = Field::new(3, 32, 1);
    /// Destination IPv4 address.
    pub const DEST_IP: Field = Field::new(4, 0, 32);
    /// UDP source port (the entropy) used by this QP.
    pub const UDP_SPORT: Field = Field::new(4, 32, 16);
    /// STrack's adaptive packet spraying: the number of entropies
    /// (1..=[`crate::params::MAX_PATHS`]) the QP's request packets spread
    /// over; 0: off, every packet on [`UDP_SPORT`]. Sprayed, a packet's
    /// UDP source port is `UDP_SPORT` with its low byte replaced by the
    /// entropy the selector chose, and every packet asks for an ACK (its
    /// echoed entropy and ECN are the selector's feedback). A commit resets
    /// the QP's selector (every entropy usable again). Values above
    /// `MAX_PATHS` are taken as `MAX_PATHS`.
    pub const MAX_PATHS: Field = Field::new(4, 48, 9);
    /// 1: STrack's congestion window gates the QP's requests: a packet
    /// goes only while fewer of its PSNs than the window holds packets
    /// (at least one) are past the ePSN of the QP's latest ACK, and every
    /// packet asks for an ACK, whose RTT, ECN echo and newly acknowledged
    /// PSNs move the window ([`super::REG_CC_PARAMS`]). A commit that
    /// resets the requester starts the window at `max_cwnd`. 0: no window.
    pub const CC: Field = Field::new(4, 57, 1);
    /// 1, with [`MAX_PATHS`] set: oblivious spraying, the comparison point
    /// of STrack's paper: the QP's packets take its `MAX_PATHS` entropies in
    /// plain round robin, and ACK feedback (ECN echo, clean entropies) and
    /// the window's size do not steer the choice. 0: adaptive spraying.
    pub const SPRAY_OBLIVIOUS: Field = Field::new(4, 58, 1);
    /// 1, with [`CC`] set: the window is DCTCP's (SRNIC's choice) instead
    /// of STrack's: once per window of data α moves by the fraction of its
    /// bytes whose ACKs echoed CE, the window's first echo cuts it by
    /// `1 − α/2`, and clean ACKs add one MTU per window
    /// ([`cc_params::DCTCP_G`], [`cc_params::DCTCP_MTU`]). The send path
    /// gates the QP on it as on STrack's.
    pub const CC_DCTCP: Field = Field::new(4, 59, 1);
    /// Destination MAC address.
    pub const DEST_MAC: Field = Field::new(5, 0, 48);
    /// First PSN the requester sends.
    pub const SQ_PSN: Field = Field::new(6, 0, 24);
    /// First PSN the responder expects (ePSN).
    pub const RQ_PSN: Field = Field::new(6, 32, 24);
    /// Staging words the RTL stores in its QPC block RAM (words 0..QPC_WORDS).
    pub const QPC_WORDS: usize = 7;
}

/// Staging words of an SQ rewind ([`REG_SQ_REWIND`]).
pub mod rewind {
    use super::Field;
    /// SSN of the WQE to resend from (low 24 bits of the host's SQ index).
    pub const SSN: Field = Field::new(0, 0, 24);
    /// PSN of the first packet to resend.
    pub const PSN: Field = Field::new(0, 32, 24);
    /// Byte offset of that packet in its message (a multiple of the PMTU).
    pub const MSG_OFF: Field = Field::new(1, 0, 32);
    /// 1: resend only the packet at SSN/PSN/MSG_OFF and leave the QP's
    /// send position where it is (selective repeat's single-packet
    /// retransmission); 0: resend from there on (go-back-N).
    pub const ONE: Field = Field::new(0, 63, 1);
    /// A single-packet resend carries its WQE: staging words
    /// `WQE_WORD..WQE_WORD + WQE_BYTES / 8` hold the first [`WQE_BYTES`]
    /// bytes of the [`crate::desc::SendWqe`] (every field the NIC reads), so
    /// the NIC sends the packet without fetching the WQE again and keeps no
    /// table of outstanding requests. Go-back-N rewinds leave them zero.
    pub const WQE_WORD: usize = 2;
    /// Bytes of the WQE a resend carries (the [`crate::desc::SendWqe`] up to its reserved tail).
    pub const WQE_BYTES: usize = 40;
    const _: () = assert!(
        WQE_BYTES == core::mem::offset_of!(crate::desc::SendWqe, sge1)
            && WQE_WORD * 8 + WQE_BYTES <= super::NUM_STAGE * 8
    );
}

/// Staging words of STrack's parameters ([`REG_CC_PARAMS`]); the formats
/// are those of `rnic_model::strack::cc::StrackParams`.
pub mod cc_params {
    use super::Field;
    /// `net_base_rtt`: a QP's RTT before its first sample, ns.
    pub const BASE_RTT: Field = Field::new(0, 0, 32);
    /// `target_Qdelay`, ns.
    pub const TARGET: Field = Field::new(0, 32, 32);
    /// `target_Qhigh`, ns.
    pub const QHIGH: Field = Field::new(1, 0, 32);
    /// Smallest window, bytes Q24.8.
    pub const MIN_CWND: Field = Field::new(1, 32, 32);
    /// Largest window (and a QP's first), bytes Q24.8.
    pub const MAX_CWND: Field = Field::new(2, 0, 32);
    /// γ, Q16.16.
    pub const GAMMA: Field = Field::new(2, 32, 32);
    /// β, bytes Q24.8.
    pub const BETA: Field = Field::new(3, 0, 64);
    /// η, bytes Q24.8.
    pub const ETA: Field = Field::new(4, 0, 64);
    /// `α · base_rtt`, bytes Q24.8.
    pub const ALPHA_RTT: Field = Field::new(5, 0, 64);
    /// The delay EWMA's weight as a right shift (0..=31).
    pub const EWMA_SHIFT: Field = Field::new(6, 0, 5);
    /// DCTCP's `g` as a right shift (4: 1/16).
    pub const DCTCP_G: Field = Field::new(6, 8, 4);
    /// DCTCP's additive increase per window, bytes (the MTU).
    pub const DCTCP_MTU: Field = Field::new(6, 16, 16);
    /// STrack's window at a QP's start, bytes Q24.8 (0: `MAX_CWND`);
    /// DCTCP's starts at `MAX_CWND`.
    pub const INIT_CWND: Field = Field::new(6, 32, 32);
}

/// Staging words of a software-recovery command ([`REG_RX_SR_SET`]).
pub mod rx_sr {
    use super::Field;
    /// The QP's ePSN the command was computed from.
    pub const FROM: Field = Field::new(0, 0, 24);
    /// The new ePSN: every PSN from `FROM` up to it has been placed.
    pub const TO: Field = Field::new(0, 32, 24);
    /// Messages that end in `[FROM, TO)` (the MSN moves by as many).
    pub const ENDS: Field = Field::new(1, 0, 16);
    /// Packets of the message PSN `TO - 1` belongs to, up to and including
    /// it, if it does not end that message (0 if it does): the responder's
    /// position inside a message at the new ePSN.
    pub const PKTS: Field = Field::new(1, 32, 24);
    /// That unfinished message is a SEND (0: a WRITE).
    pub const SEND: Field = Field::new(1, 63, 1);
    /// The QP's responder generation the command is meant for (the
    /// `episode` of the reports it was computed from): a command for an
    /// earlier life of the QPN is refused.
    pub const GEN: Field = Field::new(1, 56, 4);
}

/// MR table entry written by [`REG_MR_COMMIT`].
///
/// Translation choice: one contiguous bus (IOVA) range per MR. With VFIO the
/// driver maps each MR into the IOMMU at a contiguous IOVA, so the NIC needs
/// only `iova = va - va_base + iova_base` plus a bounds check, and no page
/// list in host memory (no page-table walk on the data path).
pub mod mr {
    use super::Field;
    /// Virtual base address the application sees.
    pub const VA_BASE: Field = Field::new(0, 0, 64);
    /// Length in bytes.
    pub const LENGTH: Field = Field::new(1, 0, 64);
    /// Bus address (IOVA) the region starts at.
    pub const IOVA_BASE: Field = Field::new(2, 0, 64);
    /// The key tag: the low 8 bits of the lkey (the rkey's with [`super::RKEY_TAG_FLIP`] flipped); the index is the upper bits.
    pub const KEY_TAG: Field = Field::new(3, 0, 8);
    /// [`super::Access`] bits.
    pub const ACCESS: Field = Field::new(3, 8, 8);
    /// 1: entry valid.
    pub const VALID: Field = Field::new(3, 16, 1);
    /// Protection domain.
    pub const PD: Field = Field::new(3, 32, 16);
    /// Staging words stored in the MR table.
    pub const MR_WORDS: usize = 4;
}

/// CQ table entry written by [`REG_CQ_COMMIT`].
pub mod cq {
    use super::Field;
    /// Bus address of the CQ ring (32-byte CQEs).
    pub const BASE: Field = Field::new(0, 0, 64);
    /// log2 of the number of CQEs.
    pub const LOG2: Field = Field::new(1, 0, 8);
    /// MSI-X vector of the CQ's completion events (below [`super::MSIX_VECTORS`]).
    pub const VECTOR: Field = Field::new(1, 8, 3);
    /// 1: an armed CQ's next CQE raises [`VECTOR`] ([`super::REG_CQ_ARM`]).
    pub const EVENTS: Field = Field::new(1, 15, 1);
    /// Staging words stored in the CQ table.
    pub const CQ_WORDS: usize = 2;
}

bitflags! {
    /// MR access flags (the values of `ibv_access_flags`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub struct Access: u8 {
        /// Local write (receive buffers).
        const LOCAL_WRITE = 1;
        /// Remote RDMA WRITE.
        const REMOTE_WRITE = 2;
        /// Remote RDMA READ.
        const REMOTE_READ = 4;
    }
}

/// The MR key of table entry `index` with tag `tag`: its lkey, the key
/// the local send path and receive buffers name it by.
pub const fn mr_key(index: u32, tag: u8) -> u32 {
    (index << 8) | tag as u32
}

/// The bit of a key's tag that tells the rkey from the lkey: a remote
/// peer's RETH must carry the MR's tag with this bit flipped, so an lkey
/// sent as an rkey (or an rkey used locally) fails the key check.
pub const RKEY_TAG_FLIP: u32 = 0x80;

/// The rkey of the MR whose lkey is `lkey`.
pub const fn rkey_of(lkey: u32) -> u32 {
    lkey ^ RKEY_TAG_FLIP
}
