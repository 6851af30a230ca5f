//! ACK receiver: the requester's completions.
//!
//! The responder checks an ACK frame's QPN and source (only the QP's peer
//! may acknowledge its requests) and hands it over as an [`AckInPack`] word:
//! QPN, MSN, AETH syndrome, the QP's send CQ and SQ producer index. Per QP
//! the receiver keeps lACK, the SSN up to which WQEs are completed
//! (`acked`), and whether the requester failed (`err`), in its own table.
//! An ACK completes every WQE from lACK up to its MSN, one completion
//! request per WQE, in order. A NAK (but a PSN sequence NAK) or an RNR NAK
//! completes the WQE it names with the matching error, fails the requester
//! and raises the QP's error flag, which stops the SQ engine. An ACK that
//! would complete WQEs never posted is ignored and counted; a stale one
//! (behind lACK) is ignored. The send path's local errors (a WQE whose lkey
//! failed) complete here too, so every requester completion of a QP comes
//! from one block, in order.
//!
//! While the QP waits for READ responses, the responder marks every
//! ACK word `HOLD`: it completes nothing (a READ is lACK and its data has
//! not all landed), an ACK's MSN is kept per QP (`HeldPack`; one beyond the
//! posted WQEs is not kept, and counted), and an error
//! NAK for a later WQE is ignored. A READ's last response packet comes as
//! an `RDONE` word and completes the READ (it must be lACK's); the last
//! READ in flight's (`RDEND`) also completes up to the kept MSN if that is
//! further (before, the kept MSN may cover READs whose data has not landed).
//!
//! Loss recovery is the host's slow path; this block reports to it, as
//! CtrlQ entries through the completion writer:
//! - a PSN sequence NAK (a request packet was lost or overtaken). A placed
//!   NAK (selective repeat) for the PSN after the QP's previous placed NAK,
//!   at the same ePSN, of a packet sent within the same 16 us as the last
//!   report's, says nothing new: it is folded (per QP, up to 15 in a row)
//!   and the next report carries how many were (`plen`);
//! - an RNR NAK (the peer had no receive WQE posted): the WQE does not fail,
//!   the host resends after its RNR timer and counts rnr_retry;
//! - a retransmission timeout. Between ACKs the block scans the QPs' state
//!   words round robin (a scanned timestamp, no per-QP counter ticking): a
//!   QP with WQEs sent (at least in part) and not acknowledged and no ACK
//!   for `rto` cycles (doubled per timeout in a row, up to 8x) is reported
//!   with its count of timeouts in a row, and
//!   its timestamp restarts; any ACK (also one inside a message) restarts
//!   it and clears the count; a QP with nothing in flight has its timestamp
//!   refreshed, so its timer starts when it next sends. The host resends
//!   (an SQ rewind) and gives up after `retry_cnt` timeouts in a row.
//!
//! [`AckInPack`]: crate::desc::AckInPack

use crate::desc::{
    AckInUnpack, CqReqPack, CtlReqPack, ErrUnpack, HeldPack, LackPack, NakFoldPack, NakFoldUnpack, ReqStatePack,
    ReqStateUnpack, ACKIN_BITS, ACKIN_HOLD, ACKIN_RDEND, ACKIN_RDONE, ACKIN_REPORT, CQR_BITS, CTLR_BITS, LACK_BITS,
    RQS_BITS,
};
use crate::fifo::Fifo;
use crate::num::Num;
use crate::reg::Reg;
use crate::spray::{OP_ACK, OP_RESET};
use crate::table::Table;
use rnic_spec::desc::{cqe_op, cqe_status, ctrlq_kind};
use rnic_spec::params::{MAX_PATHS, QPN_BITS};
use rnic_spec::wire::syndrome;
use rust_hdl::prelude::*;

#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
enum AckState {
    Idle,
    Reset,
    Look,
    Load,
    Held,
    Proc,
    CqeAcked,
    CqeNakd,
    Save,
    CqeLocalErr,
    CtlNak,
    ScanLook,
    ScanLoad,
    ScanChk,
    CtlTmo,
    ScanSave,
    CtlRep,
    CtlPrb,
    ScanPrb,
}

/// The ACK receiver.
#[derive(LogicBlock, Default)]
pub struct AckRecv {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: every register and FIFO of the block back to its power-on state (block RAM contents are kept).
    pub reset: Signal<In, Bit>,
    /// The core's table scrub after a reset: each table writes zero at `scrub_addr` (the block is held in reset meanwhile).
    pub scrub: Signal<In, Bit>,
    /// The entry the scrub clears this cycle.
    pub scrub_addr: Signal<In, Bits<QPN_BITS>>,
    /// An ACK from the responder (`AckInPack`).
    pub ack_valid: Signal<In, Bit>,
    /// The ACK word.
    pub ack_data: Signal<In, Bits<ACKIN_BITS>>,
    /// The ACK is taken.
    pub ack_ready: Signal<Out, Bit>,
    /// Local error FIFO empty.
    pub lerr_empty: Signal<In, Bit>,
    /// Local error at the FIFO head.
    pub lerr_data: Signal<In, Bits<64>>,
    /// Pop the local error FIFO.
    pub lerr_pop: Signal<Out, Bit>,
    /// QP commit with a requester reset.
    pub rst_valid: Signal<In, Bit>,
    /// QPN of the reset.
    pub rst_qpn: Signal<In, Bits<QPN_BITS>>,
    /// The QP's number of entropies (`qpc::MAX_PATHS`, 0: not sprayed), for its path selector's reset.
    pub rst_max_paths: Signal<In, Bits<9>>,
    /// The QP's congestion window is on (`qpc::CC`), for the window engine's init.
    pub rst_cc_on: Signal<In, Bit>,
    /// The QP sprays obliviously (`qpc::SPRAY_OBLIVIOUS`), for its path selector's reset.
    pub rst_oblivious: Signal<In, Bit>,
    /// The QP's window is DCTCP's (`qpc::CC_DCTCP`), for the window engine's init.
    pub rst_dctcp: Signal<In, Bit>,
    /// A request to STrack's window engine (`crate::cc`): each ACK or NAK
    /// frame's RTT, ECN echo and SACK bytes received (`OP_ACK`, offered for
    /// one cycle: one that finds the engine busy is not fed, and its bytes
    /// count with the next), or a reset's init (`OP_INIT`, held until taken).
    pub cc_valid: Signal<Out, Bit>,
    /// The engine takes the request this cycle.
    pub cc_ready: Signal<In, Bit>,
    /// Its QP.
    pub cc_qpn: Signal<Out, Bits<QPN_BITS>>,
    /// `cc::OP_INIT` or `cc::OP_ACK`.
    pub cc_op: Signal<Out, Bit>,
    /// Now, ns (low 32 bits).
    pub cc_now: Signal<Out, Bits<32>>,
    /// ACK: ECN echo CE.
    pub cc_ecn: Signal<Out, Bit>,
    /// ACK: RTT, ns (from the echoed TX timestamp).
    pub cc_rtt: Signal<Out, Bits<32>>,
    /// ACK: the bytes received it carries (mod 2^32); init: 0, where the peer's count starts.
    pub cc_bytes: Signal<Out, Bits<32>>,
    /// Init: the window is on.
    pub cc_on: Signal<Out, Bit>,
    /// Init: the window is DCTCP's.
    pub cc_dctcp: Signal<Out, Bit>,
    /// ACK: its ePSN.
    pub cc_epsn: Signal<Out, Bits<24>>,
    /// Pulse: an ACK of a QP found the window engine busy and was not fed to it.
    pub cnt_cc_skip: Signal<Out, Bit>,
    /// A request to STrack's path selector (`crate::spray`): an ACK's
    /// echoed entropy and ECN (`OP_ACK`), or a reset at a QP commit
    /// (`OP_RESET`). Held until `spray_ready`.
    pub spray_valid: Signal<Out, Bit>,
    /// The selector takes the request this cycle.
    pub spray_ready: Signal<In, Bit>,
    /// Its QP.
    pub spray_qpn: Signal<Out, Bits<QPN_BITS>>,
    /// `spray::OP_ACK` or `spray::OP_RESET`.
    pub spray_op: Signal<Out, Bits<2>>,
    /// ACK: the request it answers arrived ECN-marked (CE).
    pub spray_ecn: Signal<Out, Bit>,
    /// ACK: the entropy it echoes.
    pub spray_path: Signal<Out, Bits<8>>,
    /// Reset: the QP's number of entropies (1..=256).
    pub spray_max_paths: Signal<Out, Bits<9>>,
    /// Reset: the QP sprays obliviously.
    pub spray_oblivious: Signal<Out, Bit>,
    /// Acknowledged-PSN table write (read by the turn engine): each ACK or
    /// NAK frame writes its QP's entry with the ePSN and SACK OOO count it
    /// carries, each READ response word with the PSN the READ's responses
    /// have reached (OOO count 0).
    pub apsn_we: Signal<Out, Bit>,
    /// Its QP.
    pub apsn_waddr: Signal<Out, Bits<QPN_BITS>>,
    /// `{ooo[35:24], epsn[23:0]}`.
    pub apsn_wdata: Signal<Out, Bits<APSN_BITS>>,
    /// Requester state table read address.
    pub rqs_addr: Signal<Out, Bits<QPN_BITS>>,
    /// Requester state read data (`ReqStatePack`, one cycle after the address).
    pub rqs_data: Signal<In, Bits<RQS_BITS>>,
    /// Requester state write enable.
    pub rqs_we: Signal<Out, Bit>,
    /// Requester state write address.
    pub rqs_waddr: Signal<Out, Bits<QPN_BITS>>,
    /// Requester state write data.
    pub rqs_wdata: Signal<Out, Bits<RQS_BITS>>,
    /// Completion request to the completion writer.
    pub cqr_valid: Signal<Out, Bit>,
    /// The completion writer took the request.
    pub cqr_ready: Signal<In, Bit>,
    /// The request (`CqReqPack`).
    pub cqr_data: Signal<Out, Bits<CQR_BITS>>,
    /// QP error flag write enable (read by the SQ engine).
    pub qperr_we: Signal<Out, Bit>,
    /// QP error flag write address.
    pub qperr_waddr: Signal<Out, Bits<QPN_BITS>>,
    /// lACK table write enable (read by the turn engine).
    pub lack_we: Signal<Out, Bit>,
    /// lACK table write address.
    pub lack_waddr: Signal<Out, Bits<QPN_BITS>>,
    /// lACK table write data (`LackPack`).
    pub lack_wdata: Signal<Out, Bits<LACK_BITS>>,
    /// A CtrlQ entry request (PSN sequence NAKs) to the completion writer.
    pub ctl_valid: Signal<Out, Bit>,
    /// The completion writer took it.
    pub ctl_ready: Signal<In, Bit>,
    /// The request (`CtlReqPack`).
    pub ctl_data: Signal<Out, Bits<CTLR_BITS>>,
    /// Cycle counter.
    pub now: Signal<In, Bits<64>>,
    /// Retransmission timeout in cycles (0: no timeouts, no scan).
    pub rto: Signal<In, Bits<32>>,
    /// Probe timeout in cycles (`REG_PROBE`; 0: off): a QP with packets
    /// outstanding and no ACK for this long gets one `REQ_PROBE` report
    /// (until its timer restarts), with the ePSN of its latest ACK.
    pub probe_to: Signal<In, Bits<32>>,
    /// Sent-mark table read address (the timeout scan): per QP, the WQEs
    /// sent at least in part (SSN, plus one while a message is half sent)
    /// and the PSN its next packet takes.
    pub sent_addr: Signal<Out, Bits<QPN_BITS>>,
    /// Sent mark read data (one cycle after the address): `{psn[39:16], mark[15:0]}` ([`SENT_BITS`]).
    pub sent_data: Signal<In, Bits<SENT_BITS>>,
    /// Pulse: a retransmission timeout was reported.
    pub cnt_rto: Signal<Out, Bit>,
    /// Pulse: NAK received.
    pub cnt_nak: Signal<Out, Bit>,
    /// Pulse: an ACK or NAK for a WQE never posted (ignored).
    pub cnt_bad: Signal<Out, Bit>,
    /// No ACK, reset or local error in progress or queued; the timeout scan
    /// may run (a queued word shows two cycles after it is taken).
    pub idle: Signal<Out, Bit>,
    ackq: Fifo<Bits<ACKIN_BITS>, 2, 3>,
    /// Per QP, the chain of placed NAKs being folded (`NakFoldPack`).
    nakf: Table<Bits<64>, QPN_BITS>,
    nf: Reg<Bits<64>>,
    /// Per QP, the MSN kept while a READ's response is awaited (`HeldPack`).
    held: Table<Bits<64>, QPN_BITS>,
    hd: Reg<Bits<64>>,
    hp: HeldPack,
    /// The MSN this ACK completes up to, and the PSN its message starts at
    /// (the ACK's own, lACK for a HOLD word, a kept one for a READ's end).
    msn_e: Reg<Bits<24>>,
    mpsn_e: Reg<Bits<24>>,
    /// The ACK word is a HOLD / RDONE word (`ACKIN_HOLD`, `ACKIN_RDONE`).
    w_hold: Signal<Local, Bit>,
    w_rdone: Signal<Local, Bit>,
    /// `Held`'s decisions, computed in `Load` from the words the tables return
    /// (`rqs_data`, the held table's `read_data`) and registered: lACK and the kept MSN as read.
    l_acked: Signal<Local, Bits<24>>,
    l_held_msn: Signal<Local, Bits<24>>,
    l_posted16: Signal<Local, Bits<16>>,
    /// lACK + 1, in 24 bits.
    l_acked1: Signal<Local, Bits<24>>,
    /// The word's MSN − lACK.
    l_msn_dist: Signal<Local, Bits<24>>,
    /// The kept MSN − the word's, and the word's − the kept one.
    l_held_dist: Signal<Local, Bits<24>>,
    l_hold_dist: Signal<Local, Bits<24>>,
    /// The word's MSN lies within the posted WQEs / beyond them.
    in_posted_q: Reg<Bit>,
    beyond_posted_q: Reg<Bit>,
    /// The kept MSN is ahead of the word's.
    held_ahead_q: Reg<Bit>,
    /// No MSN is kept, or the word's is further.
    hold_new_q: Reg<Bit>,
    /// The word's MSN is the oldest WQE's (lACK + 1).
    msn_oldest_q: Reg<Bit>,
    nfu: NakFoldUnpack,
    nfp: NakFoldPack,
    /// The chain word to write back in `Save`, and whether to.
    nf_w: Reg<Bits<64>>,
    nf_we: Reg<Bit>,
    /// Placed NAKs folded into the CtrlQ entry being written.
    ctl_run: Reg<Bits<4>>,
    /// The ACK being processed has written the lACK table.
    lack_wr: Reg<Bit>,
    /// The NAK is placed, at the chain's ePSN, for the PSN after its last, and the chain is not full.
    fold: Signal<Local, Bit>,
    /// Placed NAKs the chain folded and no report has carried yet.
    pending: Signal<Local, Bits<4>>,
    /// The chain's count after this NAK.
    nf_run: Signal<Local, Bits<4>>,
    nf_next: Signal<Local, Bits<24>>,
    /// Requester resets: one entry per QP, so commits never overflow it while the block waits on the completion writer.
    /// Each entry: `{dctcp[19], oblivious[18], cc_on[17], max_paths[16:8], qpn[7:0]}`.
    rstq: Fifo<Bits<RST_BITS>, QPN_BITS, { QPN_BITS + 1 }>,
    /// The window engine's init being offered (held until taken; the block takes no reset or ACK meanwhile).
    cr_v: Reg<Bit>,
    /// An ACK's RTT in cycles (24-bit wrap of the echoed TX timestamp).
    rtt_cyc: Signal<Local, Bits<24>>,
    op_cc_ack: Num<{ crate::cc::OP_ACK }, 1>,
    op_cc_init: Num<{ crate::cc::OP_INIT }, 1>,
    state: Reg<AckState>,
    word: Reg<Bits<ACKIN_BITS>>,
    rst_q: Reg<Bits<RST_BITS>>,
    /// The path selector's request being offered (one at a time: the
    /// block takes no ACK or reset while one waits).
    sf_v: Reg<Bit>,
    sf_qpn: Reg<Bits<QPN_BITS>>,
    sf_op: Reg<Bits<2>>,
    sf_ecn: Reg<Bit>,
    sf_path: Reg<Bits<8>>,
    sf_mp: Reg<Bits<9>>,
    sf_obl: Reg<Bit>,
    /// A reset's number of entropies for the selector: 0 (not sprayed) and values past 256 taken as 1 and 256.
    rst_mp: Signal<Local, Bits<9>>,
    max_paths: Num<{ MAX_PATHS as u64 }, 9>,
    op_spray_ack: Num<{ OP_ACK }, 2>,
    op_spray_reset: Num<{ OP_RESET }, 2>,
    rs: Reg<Bits<RQS_BITS>>,
    scan_q: Reg<Bits<QPN_BITS>>,
    scan_sent: Reg<Bits<SENT_BITS>>,
    ctl_kind: Reg<Bits<8>>,
    /// The scanned QP has WQEs sent (at least in part) and not acknowledged, and has not failed.
    outstanding: Signal<Local, Bit>,
    /// Its latest ACK, NAK or READ response expects the PSN its next packet takes: every packet
    /// sent was answered (a half-sent message waiting for its next turn has nothing in flight).
    all_answered: Signal<Local, Bit>,
    /// Cycles since the scanned QP's timer started (modulo 2^32), in 33 bits: bit 32 says how the
    /// difference wrapped, for the compares below.
    since: Signal<Local, Bits<33>>,
    /// `since` less each timeout (`rto` shifted by the retries, the probe's), each one carry-save sum of
    /// the three terms beside `since`, not a compare behind it: bit 32 equal to `since`'s is `>=`.
    over0: Signal<Local, Bits<33>>,
    over1: Signal<Local, Bits<33>>,
    over2: Signal<Local, Bits<33>>,
    over3: Signal<Local, Bits<33>>,
    over_prb: Signal<Local, Bits<33>>,
    now32: Signal<Local, Bits<32>>,
    /// The timeout of a QP whose timer has fired before without an ACK in
    /// between: `rto` doubled per timeout in a row, up to 8x (so resends of
    /// many QPs that wait behind each other do not time out again and again)
    /// has passed: four compares side by side, picked by the retries. Computed in `ScanLoad`
    /// from the word the table returns (`rqs_data`), a cycle before `ScanChk` reads it: `>=` here is `>` there.
    rto_due: Signal<Local, Bit>,
    rto_due_q: Reg<Bit>,
    /// The probe timeout has passed (STrack's probe), as `rto_due`.
    prb_due_q: Reg<Bit>,
    /// The scanned QP's retries, as the table returns its word (`ScanLoad`).
    scan_retries: Signal<Local, Bits<4>>,
    /// Its timer's start.
    scan_ts: Signal<Local, Bits<32>>,
    tsp: ReqStatePack,
    rstp: ReqStatePack,
    tmop: ReqStatePack,
    /// The scanned QP's word with its probe reported.
    prbp: ReqStatePack,
    /// Per QP: `{rd_wait[25], valid[24], ePSN[23:0]}` of its latest ACK, NAK or READ response word
    /// (the probe's report); `rd_wait`: after that word the QP still waits for READ responses
    /// (a `HOLD` word, or an `RDONE` one that does not end the last READ).
    epsn_t: Table<Bits<26>, QPN_BITS>,
    scan_epsn: Reg<Bits<26>>,
    kind_req_probe: Num<{ ctrlq_kind::REQ_PROBE as u64 }, 8>,
    epsn_valid: Num<0x100_0000, 26>,
    /// The word being written leaves the QP waiting for READ data.
    rd_wait_w: Signal<Local, Bit>,
    tmo_retries: Signal<Local, Bits<4>>,
    cqr: CqReqPack,
    ctl: CtlReqPack,
    lackp: LackPack,
    kind_req_nak_psn: Num<{ ctrlq_kind::REQ_NAK_PSN as u64 }, 8>,
    kind_req_timeout: Num<{ ctrlq_kind::REQ_TIMEOUT as u64 }, 8>,
    kind_req_rnr: Num<{ ctrlq_kind::REQ_RNR as u64 }, 8>,
    cq_num: Reg<Bits<16>>,
    c_idx: Reg<Bits<16>>,
    c_status: Reg<Bits<8>>,
    c_qpn: Reg<Bits<QPN_BITS>>,
    au: AckInUnpack,
    ru: ReqStateUnpack,
    reqp: ReqStatePack,
    eu: ErrUnpack,
    /// MSN − lACK: how many WQEs the ACK completes (bit 23 set: stale).
    ack_dist: Signal<Local, Bits<24>>,
    posted16: Signal<Local, Bits<16>>,
    posted: Signal<Local, Bits<24>>,
    syn_class: Signal<Local, Bits<3>>,
    syn_nak_psn_seq: Num<{ syndrome::NAK_PSN_SEQ as u64 }, 8>,
    syn_nak_rem_access: Num<{ syndrome::NAK_REM_ACCESS as u64 }, 8>,
    syn_nak_rem_op: Num<{ syndrome::NAK_REM_OP as u64 }, 8>,
    /// AETH syndrome classes (bits 7:5): ACK, RNR NAK, NAK.
    class_ack: Num<{ (syndrome::ACK >> 5) as u64 }, 3>,
    class_rnr: Num<{ (syndrome::RNR_NAK >> 5) as u64 }, 3>,
    class_nak: Num<{ (syndrome::NAK_PSN_SEQ >> 5) as u64 }, 3>,
    st_success: Num<{ cqe_status::SUCCESS as u64 }, 8>,
    st_rem_inv_req_err: Num<{ cqe_status::REM_INV_REQ_ERR as u64 }, 8>,
    st_rem_access_err: Num<{ cqe_status::REM_ACCESS_ERR as u64 }, 8>,
    st_rem_op_err: Num<{ cqe_status::REM_OP_ERR as u64 }, 8>,
    cqe_op_requester: Num<{ cqe_op::REQUESTER as u64 }, 8>,
    flag_hold: Num<{ ACKIN_HOLD }, 8>,
    /// The word is a responder's report for the host's software recovery (`ACKIN_REPORT`).
    flag_report: Num<{ ACKIN_REPORT }, 8>,
    /// The report's flags (`rnic_spec::desc::resp_report`).
    report_mask: Num<0x1F, 8>,
    flag_rdone: Num<{ ACKIN_RDONE }, 8>,
    flag_rdend: Num<{ ACKIN_RDEND }, 8>,
    /// The RDONE word ends the last READ sent (`ACKIN_RDEND`): a kept MSN applies now.
    w_rdend: Signal<Local, Bit>,
    flag_placed: Num<{ rnic_spec::wire::ack_flags::PLACED as u64 }, 8>,
}

// The fold reads the PLACED flag as bit 0 of the ACK's flags.
const _: () = assert!(rnic_spec::wire::ack_flags::PLACED == 1);
/// A reset queue entry: `{dctcp[19], oblivious[18], cc_on[17], max_paths[16:8], qpn[7:0]}` (literal offsets above).
const RST_BITS: usize = QPN_BITS + 12;

/// Width of a sent-mark table entry: `{psn[39:16], mark[15:0]}`, the PSN
/// the QP's next packet takes and its WQEs sent at least in part.
pub const SENT_BITS: usize = 40;

/// Width of an acknowledged-PSN table entry: `{ooo[35:24], epsn[23:0]}`.
pub const APSN_BITS: usize = 36;
const _: () = assert!(QPN_BITS == 8);

/// Bit positions of the retries and the timer's start in the requester state word (sliced as literals).
const RQS_RETRIES_AT: usize = crate::pack::field_at(crate::desc::ReqStatePack::FIELDS, "retries");
const RQS_TS_AT: usize = crate::pack::field_at(crate::desc::ReqStatePack::FIELDS, "ts");
const _: () = assert!(RQS_RETRIES_AT == 25 && RQS_TS_AT == 32);
/// Bit positions `Load` slices from the words as read: lACK in the requester state word,
/// the valid bit, MSN and PSN in the held (HOLD) word.
const RQS_ACKED_AT: usize = crate::pack::field_at(crate::desc::ReqStatePack::FIELDS, "acked");
const HELD_VALID_AT: usize = crate::pack::field_at(crate::desc::HeldPack::FIELDS, "valid");
const HELD_MSN_AT: usize = crate::pack::field_at(crate::desc::HeldPack::FIELDS, "msn");
const HELD_PSN_AT: usize = crate::pack::field_at(crate::desc::HeldPack::FIELDS, "psn");
const _: () = assert!(RQS_ACKED_AT == 0 && HELD_VALID_AT == 0 && HELD_MSN_AT == 1 && HELD_PSN_AT == 25);

impl Logic for AckRecv {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            word,
            rst_q,
            rs,
            cq_num,
            c_idx,
            c_status,
            c_qpn,
            scan_q,
            scan_sent,
            ctl_kind,
            nf,
            nf_w,
            nf_we,
            ctl_run,
            lack_wr,
            hd,
            msn_e,
            mpsn_e,
            sf_v,
            sf_qpn,
            sf_op,
            sf_ecn,
            sf_path,
            sf_mp,
            sf_obl,
            cr_v,
            scan_epsn,
            rto_due_q,
            prb_due_q,
            in_posted_q,
            beyond_posted_q,
            held_ahead_q,
            hold_new_q,
            msn_oldest_q
        );
        self.in_posted_q.reset.next = self.reset.val();
        self.beyond_posted_q.reset.next = self.reset.val();
        self.held_ahead_q.reset.next = self.reset.val();
        self.hold_new_q.reset.next = self.reset.val();
        self.msn_oldest_q.reset.next = self.reset.val();
        self.state.reset.next = self.reset.val();
        self.rto_due_q.reset.next = self.reset.val();
        self.prb_due_q.reset.next = self.reset.val();
        self.word.reset.next = self.reset.val();
        self.rst_q.reset.next = self.reset.val();
        self.rs.reset.next = self.reset.val();
        self.cq_num.reset.next = self.reset.val();
        self.c_idx.reset.next = self.reset.val();
        self.c_status.reset.next = self.reset.val();
        self.c_qpn.reset.next = self.reset.val();
        self.scan_q.reset.next = self.reset.val();
        self.scan_sent.reset.next = self.reset.val();
        self.ctl_kind.reset.next = self.reset.val();
        self.nf.reset.next = self.reset.val();
        self.nf_w.reset.next = self.reset.val();
        self.nf_we.reset.next = self.reset.val();
        self.ctl_run.reset.next = self.reset.val();
        self.lack_wr.reset.next = self.reset.val();
        self.hd.reset.next = self.reset.val();
        self.msn_e.reset.next = self.reset.val();
        self.mpsn_e.reset.next = self.reset.val();
        self.sf_v.reset.next = self.reset.val();
        self.sf_qpn.reset.next = self.reset.val();
        self.sf_op.reset.next = self.reset.val();
        self.sf_ecn.reset.next = self.reset.val();
        self.sf_path.reset.next = self.reset.val();
        self.sf_mp.reset.next = self.reset.val();
        self.sf_obl.reset.next = self.reset.val();
        self.cr_v.reset.next = self.reset.val();
        self.scan_epsn.reset.next = self.reset.val();
        clock!(self, clock, ackq, rstq);
        self.ackq.reset.next = self.reset.val();
        self.rstq.reset.next = self.reset.val();
        self.epsn_t.read_clock.next = self.clock.val();
        self.epsn_t.write_clock.next = self.clock.val();
        self.epsn_t.clear.next = self.scrub.val();
        self.epsn_t.clear_address.next = self.scrub_addr.val();
        self.epsn_t.read_address.next = self.scan_q.q.val();
        self.nakf.read_clock.next = self.clock.val();
        self.nakf.write_clock.next = self.clock.val();
        self.nakf.clear.next = self.scrub.val();
        self.nakf.clear_address.next = self.scrub_addr.val();
        self.nakf.read_address.next = self.au.qpn.val();
        self.nakf.write_enable.next = false;
        self.nakf.write_address.next = self.au.qpn.val();
        self.nakf.write_data.next = self.nf_w.q.val();
        self.held.read_clock.next = self.clock.val();
        self.held.write_clock.next = self.clock.val();
        self.held.clear.next = self.scrub.val();
        self.held.clear_address.next = self.scrub_addr.val();
        self.held.read_address.next = self.au.qpn.val();
        self.held.write_enable.next = false;
        self.held.write_address.next = self.au.qpn.val();
        self.held.write_data.next = self.hd.q.val();
        self.w_hold.next = (self.au.flags.val() & self.flag_hold.val()).any();
        self.w_rdone.next = (self.au.flags.val() & self.flag_rdone.val()).any();
        self.w_rdend.next = (self.au.flags.val() & self.flag_rdend.val()).any();
        // MSN distances in 24 bits (Verilog would widen the differences), from the words as read
        // (`Load`), sliced at `RQS_ACKED_AT`, `HELD_VALID_AT` and `HELD_MSN_AT`.
        self.l_acked.next = self.rqs_data.val().get_bits::<24>(0);
        self.l_held_msn.next = self.held.read_data.val().get_bits::<24>(1);
        self.l_held_dist.next = self.l_held_msn.val() - self.au.msn.val();
        self.held_ahead_q.d.next =
            self.held.read_data.val().get_bit(0) & (self.l_held_dist.val() != 0) & !self.l_held_dist.val().get_bit(23);
        self.l_hold_dist.next = self.au.msn.val() - self.l_held_msn.val();
        self.hold_new_q.d.next = !self.held.read_data.val().get_bit(0)
            | ((self.l_hold_dist.val() != 0) & !self.l_hold_dist.val().get_bit(23));
        self.l_posted16.next = self.au.sq_pi.val() - self.l_acked.val().get_bits::<16>(0);
        self.l_msn_dist.next = self.au.msn.val() - self.l_acked.val();
        self.in_posted_q.d.next =
            !self.l_msn_dist.val().get_bit(23) & (self.l_msn_dist.val() <= bit_cast::<24, 16>(self.l_posted16.val()));
        self.beyond_posted_q.d.next =
            !self.l_msn_dist.val().get_bit(23) & (self.l_msn_dist.val() > bit_cast::<24, 16>(self.l_posted16.val()));
        self.l_acked1.next = self.l_acked.val() + 1;
        self.msn_oldest_q.d.next = self.au.msn.val() == self.l_acked1.val();
        // A HOLD ACK's MSN is kept if it is the furthest yet.
        self.hp.valid.next = 1.into();
        self.hp.msn.next = self.au.msn.val();
        self.hp.psn.next = self.au.msn_psn.val();
        self.hp.rsvd.next = 0.into();
        self.nfu.pword.next = self.nf.q.val();
        self.pending.next = 0.into();
        if self.nfu.valid.val().any() {
            self.pending.next = self.nfu.run.val();
        }
        // The PSN after the chain's last, in 24 bits (Verilog would widen the sum and miss the wrap).
        self.nf_next.next = self.nfu.last.val() + 1;
        self.fold.next = self.au.flags.val().get_bit(0)
            & self.nfu.valid.val().any()
            & (self.nfu.epsn.val() == self.au.epsn.val())
            & (self.au.psn.val() == self.nf_next.val())
            & (self.nfu.run.val() != 15)
            & (self.nfu.tsc.val() == self.au.ts.val().get_bits::<11>(12));
        // The chain after this NAK: one more folded, or (reported) started afresh at it if it is placed.
        self.nfp.valid.next = self.au.flags.val().get_bits::<1>(0);
        self.nfp.epsn.next = self.au.epsn.val();
        self.nfp.last.next = self.au.psn.val();
        self.nf_run.next = 0.into();
        if self.fold.val() {
            self.nf_run.next = self.nfu.run.val() + 1;
        }
        self.nfp.run.next = self.nf_run.val();
        self.nfp.tsc.next = self.au.ts.val().get_bits::<11>(12);
        if self.fold.val() {
            self.nfp.tsc.next = self.nfu.tsc.val();
        }
        self.ackq.write.next = self.ack_valid.val() & !self.ackq.full.val();
        self.ackq.data_in.next = self.ack_data.val();
        self.ack_ready.next = !self.ackq.full.val();
        self.ackq.read.next = false;
        self.rstq.write.next = self.rst_valid.val();
        self.rstq.data_in.next = bit_cast::<RST_BITS, QPN_BITS>(self.rst_qpn.val())
            | (bit_cast::<RST_BITS, 9>(self.rst_max_paths.val()) << 8)
            | (bit_cast::<RST_BITS, 1>(self.rst_cc_on.val().into()) << 17)
            | (bit_cast::<RST_BITS, 1>(self.rst_oblivious.val().into()) << 18)
            | (bit_cast::<RST_BITS, 1>(self.rst_dctcp.val().into()) << 19);
        // The window engine: an init held in `cr_v`, else the ACK `Look` offers.
        self.rtt_cyc.next = self.now.val().get_bits::<24>(0) - self.au.ts.val();
        self.cc_valid.next = self.cr_v.q.val();
        self.cc_qpn.next = self.rst_q.q.val().get_bits::<QPN_BITS>(0);
        self.cc_op.next = self.op_cc_init.val().any();
        self.cc_now.next = self.now.val().get_bits::<32>(0) << 2;
        self.cc_ecn.next = false;
        self.cc_rtt.next = bit_cast::<32, 24>(self.rtt_cyc.val()) << 2;
        self.cc_bytes.next = 0.into();
        self.cc_on.next = self.rst_q.q.val().get_bit(17);
        self.cc_dctcp.next = self.rst_q.q.val().get_bit(19);
        self.cc_epsn.next = self.au.epsn.val();
        if self.cr_v.q.val() & self.cc_ready.val() {
            self.cr_v.d.next = false;
        }
        self.rstq.read.next = false;
        // The path selector's request.
        self.spray_valid.next = self.sf_v.q.val();
        self.spray_qpn.next = self.sf_qpn.q.val();
        self.spray_op.next = self.sf_op.q.val();
        self.spray_ecn.next = self.sf_ecn.q.val();
        self.spray_path.next = self.sf_path.q.val();
        self.spray_max_paths.next = self.sf_mp.q.val();
        self.spray_oblivious.next = self.sf_obl.q.val();
        if self.sf_v.q.val() & self.spray_ready.val() {
            self.sf_v.d.next = false;
        }
        self.apsn_we.next = false;
        self.apsn_waddr.next = self.au.qpn.val();
        self.apsn_wdata.next =
            bit_cast::<APSN_BITS, 24>(self.au.epsn.val()) | (bit_cast::<APSN_BITS, 12>(self.au.ooo.val()) << 24);
        self.rst_mp.next = self.rst_q.q.val().get_bits::<9>(8);
        if self.rst_mp.val() == 0 {
            self.rst_mp.next = 1.into();
        } else if self.rst_mp.val() > self.max_paths.val() {
            self.rst_mp.next = self.max_paths.val();
        }
        self.au.pword.next = self.word.q.val();
        self.ru.pword.next = self.rs.q.val();
        self.scan_retries.next = self.rqs_data.val().get_bits::<4>(25);
        self.scan_ts.next = self.rqs_data.val().get_bits::<32>(32);
        self.eu.pword.next = self.lerr_data.val();
        self.reqp.acked.next = self.ru.acked.val() + 1;
        self.reqp.err.next = self.ru.err.val();
        self.reqp.rsvd.next = 0.into();
        self.reqp.probed.next = 0.into();
        self.reqp.retries.next = 0.into();
        self.now32.next = self.now.val().get_bits::<32>(0);
        self.reqp.ts.next = self.now32.val();
        // The scanned QP's word with its timestamp restarted.
        self.tsp.acked.next = self.ru.acked.val();
        self.tsp.err.next = self.ru.err.val();
        self.tsp.rsvd.next = 0.into();
        self.tsp.probed.next = 0.into();
        self.tsp.retries.next = 0.into();
        // A reported timeout: one more retry, the timer restarted.
        self.tmo_retries.next = self.ru.retries.val() + 1;
        if self.ru.retries.val() == 15 {
            self.tmo_retries.next = 15.into();
        }
        self.tmop.acked.next = self.ru.acked.val();
        self.tmop.err.next = self.ru.err.val();
        self.tmop.rsvd.next = 0.into();
        self.tmop.probed.next = 0.into();
        self.tmop.retries.next = self.tmo_retries.val();
        self.tmop.ts.next = self.now32.val();
        self.tsp.ts.next = self.now32.val();
        // A requester reset: lACK 0, not failed, the timer started now.
        self.rstp.acked.next = 0.into();
        self.rstp.err.next = false.into();
        self.rstp.rsvd.next = 0.into();
        self.rstp.probed.next = 0.into();
        // A probe reported: the word as it was, its probe flag set (the timer and retries kept).
        self.prbp.acked.next = self.ru.acked.val();
        self.prbp.err.next = self.ru.err.val();
        self.prbp.retries.next = self.ru.retries.val();
        self.prbp.probed.next = 1.into();
        self.prbp.rsvd.next = 0.into();
        self.prbp.ts.next = self.ru.ts.val();
        self.rstp.retries.next = 0.into();
        self.rstp.ts.next = self.now32.val();
        self.all_answered.next = self.scan_epsn.q.val().get_bit(24)
            & !self.scan_epsn.q.val().get_bit(25)
            & (self.scan_epsn.q.val().get_bits::<24>(0) == self.scan_sent.q.val().get_bits::<24>(16));
        self.outstanding.next = !self.ru.err.val().any()
            & (self.scan_sent.q.val().get_bits::<16>(0) != self.ru.acked.val().get_bits::<16>(0))
            & !self.all_answered.val();
        self.since.next = bit_cast::<33, 32>(self.now32.val()) - bit_cast::<33, 32>(self.scan_ts.val());
        self.over0.next = bit_cast::<33, 32>(self.now32.val())
            - bit_cast::<33, 32>(self.scan_ts.val())
            - bit_cast::<33, 32>(self.rto.val());
        self.over1.next = bit_cast::<33, 32>(self.now32.val())
            - bit_cast::<33, 32>(self.scan_ts.val())
            - bit_cast::<33, 32>(self.rto.val() << 1);
        self.over2.next = bit_cast::<33, 32>(self.now32.val())
            - bit_cast::<33, 32>(self.scan_ts.val())
            - bit_cast::<33, 32>(self.rto.val() << 2);
        self.over3.next = bit_cast::<33, 32>(self.now32.val())
            - bit_cast::<33, 32>(self.scan_ts.val())
            - bit_cast::<33, 32>(self.rto.val() << 3);
        self.over_prb.next = bit_cast::<33, 32>(self.now32.val())
            - bit_cast::<33, 32>(self.scan_ts.val())
            - bit_cast::<33, 32>(self.probe_to.val());
        self.rto_due.next = ((self.scan_retries.val() == 0)
            & (self.over0.val().get_bit(32) == self.since.val().get_bit(32)))
            | ((self.scan_retries.val() == 1) & (self.over1.val().get_bit(32) == self.since.val().get_bit(32)))
            | ((self.scan_retries.val() == 2) & (self.over2.val().get_bit(32) == self.since.val().get_bit(32)))
            | ((self.scan_retries.val() >= 3) & (self.over3.val().get_bit(32) == self.since.val().get_bit(32)));
        self.rto_due_q.d.next = self.rto_due.val();
        self.prb_due_q.d.next =
            (self.probe_to.val() != 0) & (self.over_prb.val().get_bit(32) == self.since.val().get_bit(32));
        self.sent_addr.next = self.scan_q.q.val();
        self.cnt_rto.next = false;
        self.cnt_cc_skip.next = false;
        self.ack_dist.next = self.msn_e.q.val() - self.ru.acked.val();
        // WQEs posted and not yet completed, in the PI's 16 bits (Verilog would widen the difference).
        self.posted16.next = self.au.sq_pi.val() - self.ru.acked.val().get_bits::<16>(0);
        self.posted.next = bit_cast::<24, 16>(self.posted16.val());
        self.syn_class.next = self.au.syndrome.val().get_bits::<3>(5);
        self.rqs_addr.next = self.au.qpn.val();
        self.rqs_we.next = false;
        self.rqs_waddr.next = self.au.qpn.val();
        self.rqs_wdata.next = self.rs.q.val();
        self.qperr_we.next = false;
        self.qperr_waddr.next = self.au.qpn.val();
        // The position the ACK acknowledges, for the turn engine: written
        // before the first completion it causes can reach the host.
        self.lackp.ssn.next = self.msn_e.q.val();
        self.lackp.psn.next = self.mpsn_e.q.val();
        self.lack_we.next = false;
        self.lack_waddr.next = self.au.qpn.val();
        self.lack_wdata.next = self.lackp.pword.val();
        self.lerr_pop.next = false;
        self.cnt_nak.next = false;
        self.cnt_bad.next = false;
        self.cqr.cqn.next = self.cq_num.q.val();
        self.cqr.idx.next = self.c_idx.q.val();
        self.cqr.status.next = self.c_status.q.val();
        self.cqr.op.next = self.cqe_op_requester.val();
        self.cqr.len.next = 0.into();
        self.cqr.qpn.next = self.c_qpn.q.val();
        self.cqr.imm.next = 0.into();
        self.cqr.flags.next = 0.into();
        self.cqr_data.next = self.cqr.pword.val();
        self.cqr_valid.next = false;
        // A PSN sequence NAK's report for the host's slow path (CtrlQ).
        self.ctl.kind.next = self.ctl_kind.q.val();
        // The host sees the wire's flags only (not the responder's HOLD/RDONE marks).
        self.ctl.flags.next = self.au.flags.val() & self.flag_placed.val();
        self.ctl.qpn.next = self.au.qpn.val();
        self.ctl.psn.next = self.au.psn.val();
        self.ctl.epsn.next = self.au.epsn.val();
        self.ctl.ssn.next = self.au.ssn.val();
        self.ctl.psn_offset.next = self.au.psn_offset.val();
        // A NAK's report carries its SACK OOO count (the slow path's loss threshold) in the RSN field.
        self.ctl.rsn.next = bit_cast::<16, 12>(self.au.ooo.val());
        // Placed NAKs folded into this report (the PSNs after the QP's previous placed report).
        self.ctl.plen.next = bit_cast::<13, 4>(self.ctl_run.q.val());
        // A NAK's report carries the echoed TX timestamp of the packet it names (cycles, low 24 bits).
        self.ctl.imm.next = bit_cast::<32, 24>(self.au.ts.val());
        self.ctl.episode.next = 0.into();
        self.ctl_data.next = self.ctl.pword.val();
        self.ctl_valid.next = false;
        // The timeout scan (and a report it sends) is not ACK work.
        self.idle.next = ((self.state.q.val() == AckState::Idle)
            | (self.state.q.val() == AckState::ScanLook)
            | (self.state.q.val() == AckState::ScanLoad)
            | (self.state.q.val() == AckState::ScanChk)
            | (self.state.q.val() == AckState::CtlTmo)
            | (self.state.q.val() == AckState::ScanSave)
            | (self.state.q.val() == AckState::CtlPrb)
            | (self.state.q.val() == AckState::ScanPrb))
            & self.ackq.empty.val()
            & self.rstq.empty.val();
        match self.state.q.val() {
            AckState::Idle => {
                self.nf_we.d.next = false;
                if !self.rstq.empty.val() & !self.sf_v.q.val() & !self.cr_v.q.val() {
                    self.rst_q.d.next = self.rstq.data_out.val();
                    self.rstq.read.next = true;
                    self.state.d.next = AckState::Reset;
                } else if !self.lerr_empty.val() {
                    self.lerr_pop.next = true;
                    self.cq_num.d.next = self.eu.cqn.val();
                    self.c_idx.d.next = self.eu.ssn.val().get_bits::<16>(0);
                    self.c_status.d.next = self.eu.status.val();
                    self.c_qpn.d.next = self.eu.qpn.val();
                    self.state.d.next = AckState::CqeLocalErr;
                } else if !self.ackq.empty.val() & !self.sf_v.q.val() & !self.cr_v.q.val() {
                    self.word.d.next = self.ackq.data_out.val();
                    self.ackq.read.next = true;
                    self.state.d.next = AckState::Look;
                } else if self.rto.val() != 0 {
                    self.state.d.next = AckState::ScanLook;
                }
            }
            AckState::ScanLook => {
                // The scanned QP's state word, sent mark and latest ePSN: addresses now.
                self.rqs_addr.next = self.scan_q.q.val();
                self.state.d.next = AckState::ScanLoad;
            }
            AckState::ScanLoad => {
                self.rs.d.next = self.rqs_data.val();
                self.scan_epsn.d.next = self.epsn_t.read_data.val();
                self.scan_sent.d.next = self.sent_data.val();
                self.state.d.next = AckState::ScanChk;
            }
            AckState::ScanChk => {
                self.ctl.qpn.next = self.scan_q.q.val();
                self.ctl.imm.next = 0.into();
                self.ctl.rsn.next = 0.into();
                self.ctl_run.d.next = 0.into();
                self.ctl.ssn.next = self.ru.acked.val();
                self.ctl.psn.next = 0.into();
                self.ctl.epsn.next = 0.into();
                self.ctl.psn_offset.next = 0.into();
                self.ctl_kind.d.next = self.kind_req_timeout.val();
                self.state.d.next = AckState::Idle;
                self.scan_q.d.next = self.scan_q.q.val() + 1;
                if !self.outstanding.val() {
                    // Nothing in flight: the timer starts afresh when the QP next posts.
                    self.rqs_we.next = true;
                    self.rqs_waddr.next = self.scan_q.q.val();
                    self.rqs_wdata.next = self.tsp.pword.val();
                } else if self.rto_due_q.q.val() {
                    self.cnt_rto.next = true;
                    self.scan_q.d.next = self.scan_q.q.val();
                    self.state.d.next = AckState::CtlTmo;
                } else if self.prb_due_q.q.val() & !self.ru.probed.val().any() {
                    self.scan_q.d.next = self.scan_q.q.val();
                    self.state.d.next = AckState::CtlPrb;
                }
            }
            AckState::CtlTmo => {
                self.ctl.flags.next = bit_cast::<8, 4>(self.tmo_retries.val());
                self.ctl.imm.next = 0.into();
                self.ctl.rsn.next = 0.into();
                self.ctl.qpn.next = self.scan_q.q.val();
                self.ctl.ssn.next = self.ru.acked.val();
                self.ctl.psn.next = 0.into();
                self.ctl.epsn.next = 0.into();
                self.ctl.psn_offset.next = 0.into();
                self.ctl_valid.next = true;
                if self.ctl_ready.val() {
                    self.state.d.next = AckState::ScanSave;
                }
            }
            AckState::CtlPrb => {
                // STrack's probe, onloaded: the host resends the packet the latest ACK expects.
                self.ctl_kind.d.next = self.kind_req_probe.val();
                self.ctl.kind.next = self.kind_req_probe.val();
                self.ctl.flags.next = bit_cast::<8, 1>(self.scan_epsn.q.val().get_bits::<1>(24));
                self.ctl.imm.next = 0.into();
                self.ctl.rsn.next = 0.into();
                self.ctl.plen.next = 0.into();
                self.ctl.qpn.next = self.scan_q.q.val();
                self.ctl.ssn.next = self.ru.acked.val();
                self.ctl.psn.next = 0.into();
                self.ctl.epsn.next = self.scan_epsn.q.val().get_bits::<24>(0);
                self.ctl.psn_offset.next = 0.into();
                self.ctl_valid.next = true;
                if self.ctl_ready.val() {
                    self.state.d.next = AckState::ScanPrb;
                }
            }
            AckState::ScanPrb => {
                self.rqs_we.next = true;
                self.rqs_waddr.next = self.scan_q.q.val();
                self.rqs_wdata.next = self.prbp.pword.val();
                self.scan_q.d.next = self.scan_q.q.val() + 1;
                self.state.d.next = AckState::Idle;
            }
            AckState::ScanSave => {
                // Reported: the next report comes one more timeout later.
                self.rqs_we.next = true;
                self.rqs_waddr.next = self.scan_q.q.val();
                self.rqs_wdata.next = self.tmop.pword.val();
                self.scan_q.d.next = self.scan_q.q.val() + 1;
                self.state.d.next = AckState::Idle;
            }
            AckState::Reset => {
                self.rqs_we.next = true;
                self.rqs_waddr.next = self.rst_q.q.val().get_bits::<QPN_BITS>(0);
                self.rqs_wdata.next = self.rstp.pword.val();
                self.lack_we.next = true;
                self.lack_waddr.next = self.rst_q.q.val().get_bits::<QPN_BITS>(0);
                self.lack_wdata.next = 0.into();
                self.held.write_enable.next = true;
                self.held.write_address.next = self.rst_q.q.val().get_bits::<QPN_BITS>(0);
                self.held.write_data.next = 0.into();
                self.nakf.write_enable.next = true;
                self.nakf.write_address.next = self.rst_q.q.val().get_bits::<QPN_BITS>(0);
                self.nakf.write_data.next = 0.into();
                self.sf_v.d.next = true;
                self.sf_qpn.d.next = self.rst_q.q.val().get_bits::<QPN_BITS>(0);
                self.sf_op.d.next = self.op_spray_reset.val();
                self.sf_mp.d.next = self.rst_mp.val();
                self.sf_obl.d.next = self.rst_q.q.val().get_bit(18);
                self.cr_v.d.next = true;
                self.state.d.next = AckState::Idle;
            }
            AckState::Look => {
                // The table address is presented now; the word is read next cycle.
                self.state.d.next = AckState::Load;
                // An ACK or NAK frame (not a report, not a READ response) is the path selector's feedback.
                // Every ACK, NAK and READ response word (not a report) says how far the peer has the QP's PSNs.
                self.apsn_we.next = !(self.au.flags.val() & self.flag_report.val()).any();
                if self.au.fb.val().any() {
                    // The window engine's sample: offered this cycle only.
                    self.cc_valid.next = true;
                    self.cc_qpn.next = self.au.qpn.val();
                    self.cc_op.next = self.op_cc_ack.val().any();
                    self.cc_ecn.next = self.au.ce.val().any();
                    self.cc_bytes.next = self.au.bytes_rx.val();
                    self.cnt_cc_skip.next = !self.cc_ready.val();
                    self.sf_v.d.next = true;
                    self.sf_qpn.d.next = self.au.qpn.val();
                    self.sf_op.d.next = self.op_spray_ack.val();
                    self.sf_ecn.d.next = self.au.ce.val().any();
                    self.sf_path.d.next = self.au.entropy.val();
                }
                if (self.au.flags.val() & self.flag_report.val()).any() {
                    // A responder's report: only written to the CtrlQ, its kind in the syndrome.
                    self.ctl_kind.d.next = self.au.syndrome.val();
                    self.state.d.next = AckState::CtlRep;
                }
            }
            AckState::CtlRep => {
                self.ctl.flags.next = self.au.flags.val() & self.report_mask.val();
                self.ctl.episode.next = self.au.cqn.val().get_bits::<4>(0);
                self.ctl.plen.next = 0.into();
                self.ctl.imm.next = 0.into();
                self.ctl_valid.next = true;
                if self.ctl_ready.val() {
                    self.state.d.next = AckState::Idle;
                }
            }
            AckState::Load => {
                self.lack_wr.d.next = false;
                self.rs.d.next = self.rqs_data.val();
                self.nf.d.next = self.nakf.read_data.val();
                self.cq_num.d.next = self.au.cqn.val();
                self.c_qpn.d.next = self.au.qpn.val();
                self.hd.d.next = self.held.read_data.val();
                self.state.d.next = AckState::Held;
            }
            AckState::Held => {
                // Which MSN the word acknowledges: a HOLD word nothing (the QP
                // waits for its READ, the oldest WQE), but an ACK's MSN is kept;
                // a READ's last response packet its MSN, or the kept one if
                // that is further (the ACKs of the WQEs after the READ came first).
                self.msn_e.d.next = self.au.msn.val();
                self.mpsn_e.d.next = self.au.msn_psn.val();
                if self.w_hold.val() {
                    self.msn_e.d.next = self.ru.acked.val();
                    // An MSN beyond the posted WQEs is bad input: not kept, counted.
                    self.cnt_bad.next = (self.syn_class.val() == self.class_ack.val()) & self.beyond_posted_q.q.val();
                    if (self.syn_class.val() == self.class_ack.val())
                        & self.in_posted_q.q.val()
                        & self.hold_new_q.q.val()
                    {
                        self.held.write_enable.next = true;
                        self.held.write_data.next = self.hp.pword.val();
                    }
                } else if self.w_rdone.val() & self.w_rdend.val() & self.msn_oldest_q.q.val() {
                    // The last READ in flight is done: the kept MSN too, if further
                    // (the held word's MSN and PSN at `HELD_MSN_AT`, `HELD_PSN_AT`).
                    if self.held_ahead_q.q.val() {
                        self.msn_e.d.next = self.hd.q.val().get_bits::<24>(1);
                        self.mpsn_e.d.next = self.hd.q.val().get_bits::<24>(25);
                    }
                    self.held.write_enable.next = true;
                    self.held.write_data.next = 0.into();
                }
                self.state.d.next = AckState::Proc;
                if self.w_rdone.val() & !self.msn_oldest_q.q.val() {
                    // A READ's end for a WQE that is not the oldest: bad input, ignored.
                    self.cnt_bad.next = true;
                    self.state.d.next = AckState::Idle;
                }
            }
            AckState::Proc => {
                // Complete every WQE the MSN covers, one request per pass.
                self.c_idx.d.next = self.ru.acked.val().get_bits::<16>(0);
                self.c_status.d.next = self.st_success.val();
                if self.ru.err.val().any() | self.ack_dist.val().get_bit(23) {
                    // Failed requester, or a stale ACK (behind lACK).
                    self.state.d.next = AckState::Idle;
                } else if (self.ack_dist.val() > self.posted.val())
                    | ((self.ack_dist.val() == self.posted.val()) & (self.syn_class.val() != self.class_ack.val()))
                {
                    // Acknowledges (or NAKs) a WQE never posted: bad input, ignored.
                    self.cnt_bad.next = true;
                    self.state.d.next = AckState::Idle;
                } else if self.ru.acked.val() != self.msn_e.q.val() {
                    // Once per ACK, at its first completion.
                    self.lack_we.next = !self.lack_wr.q.val();
                    self.lack_wr.d.next = true;
                    self.rs.d.next = self.reqp.pword.val();
                    self.state.d.next = AckState::CqeAcked;
                } else if (self.syn_class.val() == self.class_nak.val())
                    & (self.au.syndrome.val() != self.syn_nak_psn_seq.val())
                    & self.w_hold.val()
                    & (self.au.msn.val() != self.ru.acked.val())
                {
                    // An error NAK for a WQE after the awaited READ: the READ
                    // must land first; the WQE times out and is NAKed again.
                    self.cnt_bad.next = true;
                    self.state.d.next = AckState::Idle;
                } else if (self.syn_class.val() == self.class_nak.val())
                    & (self.au.syndrome.val() != self.syn_nak_psn_seq.val())
                {
                    self.cnt_nak.next = true;
                    self.c_status.d.next = self.st_rem_inv_req_err.val();
                    if self.au.syndrome.val() == self.syn_nak_rem_access.val() {
                        self.c_status.d.next = self.st_rem_access_err.val();
                    }
                    if self.au.syndrome.val() == self.syn_nak_rem_op.val() {
                        self.c_status.d.next = self.st_rem_op_err.val();
                    }
                    self.reqp.err.next = 1.into();
                    self.rs.d.next = self.reqp.pword.val();
                    self.qperr_we.next = true;
                    self.state.d.next = AckState::CqeNakd;
                } else if self.syn_class.val() == self.class_rnr.val() {
                    // RNR: the host's slow path resends after its RNR timer. The chain ends here.
                    self.cnt_nak.next = true;
                    self.ctl_kind.d.next = self.kind_req_rnr.val();
                    self.ctl_run.d.next = self.pending.val();
                    self.nf_w.d.next = 0.into();
                    self.nf_we.d.next = true;
                    self.state.d.next = AckState::CtlNak;
                } else {
                    self.state.d.next = AckState::Save;
                    if self.syn_class.val() == self.class_ack.val() {
                        // Packets acknowledged inside a message are progress too: the timer restarts.
                        self.rs.d.next = self.tsp.pword.val();
                    }
                    if self.syn_class.val() == self.class_nak.val() {
                        self.cnt_nak.next = true;
                        self.nf_w.d.next = self.nfp.pword.val();
                        self.nf_we.d.next = true;
                        if !self.fold.val() {
                            self.ctl_kind.d.next = self.kind_req_nak_psn.val();
                            self.ctl_run.d.next = self.pending.val();
                            self.state.d.next = AckState::CtlNak;
                        }
                    }
                }
            }
            // Each completion waits until the completion writer takes it.
            AckState::CqeAcked => {
                self.cqr_valid.next = true;
                if self.cqr_ready.val() {
                    self.state.d.next = AckState::Proc;
                }
            }
            AckState::CqeNakd => {
                self.cqr_valid.next = true;
                if self.cqr_ready.val() {
                    self.state.d.next = AckState::Save;
                }
            }
            AckState::Save => {
                self.rqs_we.next = true;
                self.nakf.write_enable.next = self.nf_we.q.val();
                self.state.d.next = AckState::Idle;
            }
            AckState::CtlNak => {
                self.ctl_valid.next = true;
                if self.ctl_ready.val() {
                    self.state.d.next = AckState::Save;
                }
            }
            AckState::CqeLocalErr => {
                self.cqr_valid.next = true;
                if self.cqr_ready.val() {
                    self.state.d.next = AckState::Idle;
                }
            }
            _ => {
                self.state.d.next = AckState::Idle;
            }
        }
        // The latest ePSN per QP follows the acknowledged-PSN table's writes; a reset forgets it.
        self.epsn_t.write_enable.next = self.apsn_we.val() | (self.state.q.val() == AckState::Reset);
        self.epsn_t.write_address.next = self.apsn_waddr.val();
        // The responder's ePSN counts a READ request it took, not its responses: not an answer.
        self.rd_wait_w.next =
            self.w_hold.val() | (self.w_rdone.val() & !(self.au.flags.val() & self.flag_rdend.val()).any());
        self.epsn_t.write_data.next = bit_cast::<26, 24>(self.apsn_wdata.val().get_bits::<24>(0))
            | self.epsn_valid.val()
            | (bit_cast::<26, 1>(self.rd_wait_w.val().into()) << 25);
        if self.state.q.val() == AckState::Reset {
            self.epsn_t.write_address.next = self.rst_q.q.val().get_bits::<QPN_BITS>(0);
            self.epsn_t.write_data.next = 0.into();
        }
    }
}
