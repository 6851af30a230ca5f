//! Block-level Verilator test of the ACK receiver (`hw/src/ack.rs`, top
//! "ack_recv") against a reference model, with random stimulus.
//!
//! The harness plays the responder (ACK words, held until taken), the SQ
//! engine's local-error FIFO, the requester-state table (a Rust array with
//! the core's block-RAM timing), QP commits with a requester reset (at
//! quiescent points, as the host resets only idle QPs) and the completion
//! writer (`cqr_ready` random). ACKs come for a few QPs (QPN 0 and the
//! highest among them) with lACK anywhere in the 24-bit space: stale ones,
//! ones completing one or many WQEs, ones beyond what was posted, and every
//! syndrome class (ACK, RNR NAK, reserved, each NAK code).
//!
//! The model processes each ACK in order as the block must: WQEs from lACK
//! up to the MSN complete with Success; a NAK (but PSN sequence) completes
//! the next WQE with its error, fails the requester and raises the QP's
//! error flag; a PSN sequence NAK and an RNR NAK are reported as CtrlQ
//! requests (their PSN, ePSN, SSN, PSN_OFFSET and echoed timestamp; the
//! writer's `ctl_ready` random) and fail nothing; an ACK for a WQE never posted is ignored and
//! counted; nothing happens on a failed requester. Placed PSN sequence NAKs
//! come in chains (a fifth of the batches are mostly one QP's, for
//! consecutive PSNs, sent close together): the model folds one into the
//! next report as the block must (the PSN after the chain's last, the same
//! ePSN, the same 4096-cycle unit of echoed timestamp, at most 15 in a row)
//! and checks each report's count of folded NAKs.
//!
//! With a retransmission timeout set (the `rto` sets, long quiet gaps
//! between batches; the sent-mark table is the posted index, as if every
//! posted WQE were sent), every timeout report is checked against the
//! block's own state word (the model runs a batch ahead): the QP has WQEs
//! outstanding and has not failed, the report's SSN is its lACK and its
//! count one more than the timeouts in a row the word holds (saturating at
//! 15), and more than `rto` cycles passed since the timer start the word
//! holds (`rto` doubled per timeout in a row the word holds, up to 8x). The timer start is checked where it is written: a write is never
//! from the future or long past, an ACK that moves lACK clears the count,
//! and an idle QP's timer was refreshed within a scan period when it gets
//! WQEs. A QP outstanding and not acknowledged is reported within that
//! timeout plus two scan periods of its timer start. Checked for every set: the
//! completion requests (two streams, each in
//! order: ACK completions and local errors), the CtrlQ requests in order,
//! the QP error-flag writes, the NAK and bad-ACK counters, and every QP's
//! requester-state word at each quiescent point; and the lACK table: each
//! ACK that moves lACK writes (lACK, its MSN_PSN) for the turn engine, a
//! requester reset writes zero, in order, and no successful completion is
//! requested before the table shows its WQE acknowledged.
//!
//! READ waits: some words carry the responder's `HOLD` mark (the QP waits
//! for a READ's response): they complete nothing, an ACK's MSN is kept per
//! QP if it is the furthest yet and within the posted WQEs (beyond them: ignored
//! and counted), and an error NAK for a WQE other than lACK
//! is ignored and counted; NAKs are still reported. `RDONE` words (a READ's
//! last response packet) complete lACK's WQE (their MSN must be lACK + 1,
//! else ignored and counted); marked `RDEND` (the last READ in flight) also
//! up to the kept MSN if that is further, with the kept MSN_PSN for the
//! lACK table, and clear it; without the mark the kept MSN stays.
//!
//! STrack's path selector: every word from an ACK or NAK frame (`fb`) is
//! handed to it in order as an `OP_ACK` request with the word's echoed
//! entropy and CE bit (READ response words, also HOLD ones, are not), and every requester reset as an `OP_RESET` with the commit's
//! `MAX_PATHS` (0 taken as 1, above 256 as 256); the selector's
//! `spray_ready` is random, and the block holds its ACKs while a request waits.
//!
//! Every word (ACK, NAK or READ response) writes its QP's acknowledged
//! PSN (the word's ePSN, with its SACK OOO count above it) for the turn
//! engine, in order. The window engine gets each `fb` word's ECN, RTT and
//! SACK bytes received, and each requester reset an init with the QP's
//! `CC` bit and a bytes count of 0.
//!
//! `RNIC_ACK_BLOCK_ITERS=n` runs n seeds per set, `RNIC_ACK_BLOCK_SEED=s`
//! seed s only.

mod common;

use common::{block_seeds, near_wrap, p};
use rnic_hw::cc::{OP_ACK as CC_OP_ACK, OP_INIT};
use rnic_hw::desc::{
    AckInPack, CqReqPack, CtlReqPack, ErrPack, LackPack, ReqStatePack, ACKIN_HOLD, ACKIN_RDEND, ACKIN_RDONE,
};
use rnic_hw::pack::{pack_words, unpack_field};
use rnic_hw::spray::{OP_ACK, OP_RESET};
use rnic_sim::model::Model;
use rnic_sim::rng::SplitMix as Rng;
use rnic_spec::desc::{cqe_op, cqe_status, ctrlq_kind};
use rnic_spec::params::{MAX_PATHS, NUM_QPS};
use rnic_spec::wire::syndrome;
use std::collections::VecDeque;

/// A CtrlQ request the model owes, field by field (see `want_ctl`).
type CtlWant = (u64, u64, u64, u64, u64, u64, u64, u64, u64, u64);

const M16: u64 = 0xFFFF;
const M24: u64 = 0xFF_FFFF;

struct Set {
    name: &'static str,
    base_seed: u64,
    qps: usize,
    /// Percent of cycles `cqr_ready` is high.
    ready_pct: u64,
    /// Percent of cycles a local error is offered.
    lerr_pct: u64,
    batches: u64,
    /// Retransmission timeout (0: off) and the quiet cycles after each batch.
    rto: u64,
    gap: u64,
    /// Probe timeout (0: off).
    probe: u64,
}

/// Cycles for the timeout scan to visit every QP once (4 per QP), with slack
/// for ACK processing between its steps.
const SCAN_PERIOD: u64 = 4 * NUM_QPS as u64 + 400;

/// The model's requester state of a QP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Req {
    acked: u64,
    err: bool,
    /// SQ producer index the responder reports (WQEs posted).
    pi: u64,
}

/// A completion request: (cqn, idx, status, op, len, qpn).
type Cqr = (u64, u64, u64, u64, u64, u64);

fn run(set: &Set, seed: u64) -> Result<(u64, u64, u64, u64, [u64; 5]), String> {
    let mut m = Model::new("ack_recv").map_err(|e| e.to_string())?;
    let pt = |n: &str| p(&m, n);
    let (ack_valid, ack_data, ack_ready) = (pt("ack_valid"), pt("ack_data"), pt("ack_ready"));
    let (lerr_empty, lerr_data, lerr_pop) = (pt("lerr_empty"), pt("lerr_data"), pt("lerr_pop"));
    let (rst_valid, rst_qpn, rst_mp) = (pt("rst_valid"), pt("rst_qpn"), pt("rst_max_paths"));
    let (spray_valid, spray_ready) = (pt("spray_valid"), pt("spray_ready"));
    let spray_f = ["spray_op", "spray_qpn", "spray_ecn", "spray_path", "spray_max_paths", "spray_oblivious"].map(pt);
    // The path selector's requests owed, in order: (op, qpn, ecn, path, max_paths, oblivious); `None` fields are
    // not checked.
    let mut want_spray: VecDeque<[Option<u64>; 6]> = VecDeque::new();
    // Acknowledged-PSN table writes owed, in order: every word's (qpn, ePSN).
    let (apsn_we, apsn_waddr, apsn_wdata) = (pt("apsn_we"), pt("apsn_waddr"), pt("apsn_wdata"));
    let mut want_apsn: VecDeque<(u64, u64)> = VecDeque::new();
    let mut want_rdwait: VecDeque<bool> = VecDeque::new();
    // The window engine's requests owed, in order: (op, qpn, ecn, echoed timestamp, ePSN, on, pmtu); an
    // ACK's is offered for one cycle (taken or not), an init's is held until taken.
    let (rst_cc_on, rst_obl, rst_dctcp) = (pt("rst_cc_on"), pt("rst_oblivious"), pt("rst_dctcp"));
    let (cc_valid, cc_ready, cnt_cc_skip) = (pt("cc_valid"), pt("cc_ready"), pt("cnt_cc_skip"));
    let cc_f = ["cc_op", "cc_qpn", "cc_ecn", "cc_now", "cc_rtt", "cc_bytes", "cc_on", "cc_dctcp", "cc_epsn"].map(pt);
    // (op, qpn, ecn, echoed timestamp, bytes, on | dctcp << 1 (init), ePSN (ACK)).
    let mut want_cc: VecDeque<(u64, u64, u64, u64, u64, u64, u64)> = VecDeque::new();
    let (mut cc_taken, mut cc_skipped) = (0u64, 0u64);
    let mut sprays = 0u64;
    let (rqs_addr, rqs_data, rqs_we, rqs_waddr, rqs_wdata) =
        (pt("rqs_addr"), pt("rqs_data"), pt("rqs_we"), pt("rqs_waddr"), pt("rqs_wdata"));
    let (cqr_valid, cqr_ready, cqr_data) = (pt("cqr_valid"), pt("cqr_ready"), pt("cqr_data"));
    let (qperr_we, qperr_waddr, cnt_nak, cnt_bad, idle) =
        (pt("qperr_we"), pt("qperr_waddr"), pt("cnt_nak"), pt("cnt_bad"), pt("idle"));
    let (ctl_valid, ctl_ready, ctl_data) = (pt("ctl_valid"), pt("ctl_ready"), pt("ctl_data"));
    let (now_p, rto_p, sqpi_addr, sqpi_data, cnt_rto) =
        (pt("now"), pt("rto"), pt("sent_addr"), pt("sent_data"), pt("cnt_rto"));
    let (lack_we, lack_waddr, lack_wdata) = (pt("lack_we"), pt("lack_waddr"), pt("lack_wdata"));
    // lACK table writes owed, in order, one per ACK that moves lACK and per
    // requester reset: (qpn, lACK, MSN_PSN); and the table as written.
    let mut want_lack: VecDeque<(u64, u64, u64)> = VecDeque::new();
    let mut lack = vec![(0u64, 0u64); NUM_QPS];
    let probe_p = pt("probe_to");
    m.set(rto_p, set.rto);
    m.set(probe_p, set.probe);
    // Per QP: the ePSN of the latest acknowledged-PSN write (the probe report's), and the probes reported.
    let mut last_epsn = vec![None::<u64>; NUM_QPS];
    let mut probes = [0u64; 2];
    // NAK reports owed: kind, qpn, psn, epsn, ssn, psn_offset, echoed timestamp, flags, placed NAKs folded.
    let mut want_ctl: VecDeque<CtlWant> = VecDeque::new();
    // Per QP, the chain of placed NAKs the block folds: (valid, ePSN, last PSN,
    // folded so far, bits 22:12 of the reported NAK's timestamp), and the last timestamp sent.
    let mut fold = vec![(false, 0u64, 0u64, 0u64, 0u64); NUM_QPS];
    let mut last_ts = vec![0u64; NUM_QPS];
    // Per QP, the MSN (and its MSN_PSN) kept from HOLD ACKs while a READ is awaited.
    let mut held: Vec<Option<(u64, u64)>> = vec![None; NUM_QPS];
    // The cycle a state word's timer started (its low 32 bits are in the word).
    let started = |w: u64, t: u64| t - ((t as u32).wrapping_sub((w >> 32) as u32) as u64);
    let (mut reports, mut got_rto) = (0u64, 0u64);
    let mut r = Rng::new(seed);
    let mut qpns = vec![0usize, NUM_QPS - 1];
    while qpns.len() < set.qps {
        let q = 2 + r.below(NUM_QPS as u64 - 3) as usize;
        if !qpns.contains(&q) {
            qpns.push(q);
        }
    }
    let cqn_of = |q: usize| (q as u64 * 7 + 3) & 0x3F;
    let mut req: Vec<Req> = (0..NUM_QPS).map(|_| Req { acked: 0, err: false, pi: 0 }).collect();
    for &q in &qpns {
        let acked = near_wrap(&mut r, 24);
        req[q] = Req { acked, err: false, pi: (acked + r.below(6)) & M16 };
    }
    let pack_req = |s: &Req| {
        let w = pack_words(ReqStatePack::FIELDS, 64, &[("acked", s.acked), ("err", s.err as u64)]);
        w[0] as u64 | (w[1] as u64) << 32
    };
    let mut tab: Vec<u64> = req.iter().map(pack_req).collect();
    let mut tab_q = 0u64;
    // The sent-mark table the scan reads (here: every posted WQE counts as sent).
    let mut pi_tab: Vec<u64> = req.iter().map(|s| s.pi).collect();
    // With it, the PSN each QP's next packet takes: most far from any ePSN (packets in flight), some the
    // latest ePSN (every packet sent answered: a half-sent message waiting for its turn is not timed out).
    let mut sent_psn: Vec<u64> = (0..NUM_QPS).map(|_| r.below(1 << 24)).collect();
    // The state words, producer indices, sent PSNs and latest ePSNs as they were before the host's last
    // changes between batches.
    let (mut tab_before, mut pi_before) = (tab.clone(), pi_tab.clone());
    // Per QP: its latest word left it waiting for READ data (the responder's ePSN then counts a READ
    // request it took, not the responses).
    let mut rd_wait = vec![false; NUM_QPS];
    let (mut sent_before, mut epsn_before, mut rdw_before) = (sent_psn.clone(), last_epsn.clone(), rd_wait.clone());
    // Every packet the QP sent was answered.
    let answered = |sent: &[u64], epsn: &[Option<u64>], rdw: &[bool], q: usize| epsn[q] == Some(sent[q]) && !rdw[q];
    let mut pi_q = 0u64;
    let (mut want_ack, mut want_lerr, mut want_qperr): (VecDeque<Cqr>, VecDeque<Cqr>, VecDeque<u64>) =
        Default::default();
    let (mut want_nak, mut want_bad, mut got_nak, mut got_bad) = (0u64, 0u64, 0u64, 0u64);
    let (mut acks, mut cqrs) = (0u64, 0u64);
    let mut t = 0u64;
    for batch in 0..set.batches {
        // A batch of ACK words and local errors, then quiescence.
        let mut rst: VecDeque<(usize, u64, u64, u64, u64)> = VecDeque::new();
        if batch % 4 == 3 {
            // Requester resets of some QPs (the host's QP commits).
            for &q in &qpns {
                if req[q].err || r.pct(20) {
                    let mp = if r.pct(20) { r.below(512) } else { r.pick(&[0, 1, 8, 64, 255, 256, 257]) as u64 };
                    let (cc_on, obl, dctcp) = (r.below(2), r.below(2), r.below(2));
                    rst.push_back((q, mp, cc_on, obl, dctcp));
                    // The reset clears the QP's latest ePSN (no packet answered yet).
                    last_epsn[q] = None;
                    want_cc.push_back((OP_INIT, q as u64, 0, 0, 0, cc_on | dctcp << 1, 0));
                    want_spray.push_back([
                        Some(OP_RESET),
                        Some(q as u64),
                        None,
                        None,
                        Some(mp.clamp(1, MAX_PATHS as u64)),
                        Some(obl),
                    ]);
                    want_lack.push_back((q as u64, 0, 0));
                    fold[q] = (false, 0, 0, 0, 0);
                    held[q] = None;
                    req[q] = Req { acked: 0, err: false, pi: r.below(4) };
                    pi_tab[q] = req[q].pi;
                }
            }
        }
        // Words are offered once the resets are done (the host resets idle QPs).
        let hold_until = t + 3 * rst.len() as u64 + 4;
        let mut words: VecDeque<Vec<u32>> = VecDeque::new();
        // A fifth of the batches are mostly one QP's placed NAKs for consecutive
        // PSNs (a loss while a window fills): long chains, past the fold limit.
        let chain = r.pct(20).then(|| qpns[r.below(qpns.len() as u64) as usize]);
        let n = if chain.is_some() { r.range(20, 48) } else { r.range(1, 24) };
        for _ in 0..n {
            let burst = chain.is_some() && r.pct(90);
            let q = if burst { chain.expect("chain") } else { qpns[r.below(qpns.len() as u64) as usize] };
            let s = req[q];
            let posted = s.pi.wrapping_sub(s.acked) & M16;
            let msn = match if burst { 7 } else { r.below(8) } {
                0 => s.acked.wrapping_sub(r.range(1, 10)) & M24,
                1 => (s.acked + posted + r.range(1, 4)) & M24,
                2 => (s.acked + posted) & M24,
                _ => (s.acked + r.below(posted + 1)) & M24,
            };
            let syn = if burst {
                syndrome::NAK_PSN_SEQ as u64
            } else {
                r.pick(&[
                    syndrome::ACK,
                    syndrome::ACK,
                    syndrome::ACK & 0x0F,
                    syndrome::RNR_NAK,
                    syndrome::NAK_PSN_SEQ,
                    syndrome::NAK_INV_REQ,
                    syndrome::NAK_REM_ACCESS,
                    syndrome::NAK_REM_OP,
                    0x45,
                ]) as u64
            };
            let cls = syn >> 5;
            let (mut psn, mut epsn, ssn, off) =
                (near_wrap(&mut r, 24), near_wrap(&mut r, 24), r.next() & M24, r.next() & M24);
            // PSN sequence NAKs: half flagged placed, and most of those the next PSN of the QP's chain.
            let placed = syn as u8 == syndrome::NAK_PSN_SEQ && r.pct(if burst { 95 } else { 50 });
            let mut ts = near_wrap(&mut r, 24);
            if placed && fold[q].0 && r.pct(if burst { 95 } else { 70 }) {
                epsn = fold[q].1;
                psn = (fold[q].2 + 1) & M24;
                // Sent a little after the chain's last: now and then into the next 8192-cycle unit.
                ts = (last_ts[q] + if r.pct(5) { r.below(4096) } else { r.below(150) }) & M24;
            }
            last_ts[q] = ts;
            let msn_psn = near_wrap(&mut r, 24);
            // The responder's READ marks: HOLD on any word, RDONE on an ACK (mostly for lACK's WQE).
            let mark = if burst { 0 } else { r.below(100) };
            let hold = mark < 15;
            let rdone = !hold && mark < 23 && cls == 0;
            let msn = if rdone && r.pct(80) { (s.acked + 1) & M24 } else { msn };
            // RDEND: the last READ in flight ends (else more READs follow it).
            let rdend = rdone && r.pct(60);
            // Words from ACK frames carry the path selector's feedback; a READ response's (RDONE, or HOLD now and then) none.
            let (entropy, ce) = (r.below(256), r.below(2));
            let fb = !(rdone || (hold && r.pct(30)));
            // SACK: the OOO count (12 bits) and bytes received (32) the word carries.
            let (ooo, bytes_rx) = (if r.pct(10) { 0xFFF } else { r.below(200) }, near_wrap(&mut r, 32));
            want_apsn.push_back((q as u64, ooo << 24 | epsn));
            // After a HOLD word, or an RDONE one not ending the last READ, the QP still waits for READ data.
            want_rdwait.push_back(hold || (rdone && !rdend));
            if fb {
                want_spray.push_back([Some(OP_ACK), Some(q as u64), Some(ce), Some(entropy), None, None]);
                want_cc.push_back((CC_OP_ACK, q as u64, ce, ts, bytes_rx, 0, epsn));
            }
            let flags = placed as u64
                | if hold { ACKIN_HOLD } else { 0 }
                | if rdone { ACKIN_RDONE } else { 0 }
                | if rdend { ACKIN_RDEND } else { 0 };
            words.push_back(pack_words(
                AckInPack::FIELDS,
                AckInPack::WIDTH,
                &[
                    ("qpn", q as u64),
                    ("msn", msn),
                    ("syndrome", syn),
                    ("cqn", cqn_of(q)),
                    ("sq_pi", s.pi),
                    ("psn", psn),
                    ("epsn", epsn),
                    ("ssn", ssn),
                    ("psn_offset", off),
                    ("msn_psn", msn_psn),
                    ("ts", ts),
                    ("flags", flags),
                    ("entropy", entropy),
                    ("ce", ce),
                    ("fb", fb as u64),
                    ("ooo", ooo),
                    ("bytes_rx", bytes_rx),
                ],
            ));
            acks += 1;
            // The model, in order. The MSN the word completes up to (and its MSN_PSN).
            let (mut msn_e, mut mpsn_e) = (msn, msn_psn);
            if hold {
                msn_e = s.acked;
                let ahead = |k: u64| {
                    let d = msn.wrapping_sub(k) & M24;
                    d != 0 && d & 0x80_0000 == 0
                };
                let d = msn.wrapping_sub(s.acked) & M24;
                let in_posted = d & 0x80_0000 == 0 && d <= posted;
                if cls == 0 && d & 0x80_0000 == 0 && d > posted {
                    // An MSN beyond the posted WQEs: not kept, counted.
                    want_bad += 1;
                }
                if cls == 0 && in_posted && held[q].is_none_or(|(k, _)| ahead(k)) {
                    held[q] = Some((msn, msn_psn));
                }
            } else if rdone {
                if msn != (s.acked + 1) & M24 {
                    want_bad += 1;
                    continue;
                }
                if let Some((k, kp)) = if rdend { held[q].take() } else { None } {
                    let d = k.wrapping_sub(msn) & M24;
                    if d != 0 && d & 0x80_0000 == 0 {
                        (msn_e, mpsn_e) = (k, kp);
                    }
                }
            }
            let dist = msn_e.wrapping_sub(s.acked) & M24;
            let s = &mut req[q];
            if s.err || dist & 0x80_0000 != 0 {
                continue;
            }
            if dist > posted || (dist == posted && cls != 0) {
                want_bad += 1;
                continue;
            }
            if s.acked != msn_e {
                want_lack.push_back((q as u64, msn_e, mpsn_e));
            } else if hold && cls == 3 && syn as u8 != syndrome::NAK_PSN_SEQ && msn != s.acked {
                // An error NAK for a WQE after the awaited READ: ignored.
                want_bad += 1;
                continue;
            }
            while s.acked != msn_e {
                want_ack.push_back((
                    cqn_of(q),
                    s.acked & M16,
                    cqe_status::SUCCESS as u64,
                    cqe_op::REQUESTER as u64,
                    0,
                    q as u64,
                ));
                s.acked = (s.acked + 1) & M24;
            }
            let status = match (cls, syn as u8) {
                (3, syndrome::NAK_PSN_SEQ) => None,
                (3, syndrome::NAK_REM_ACCESS) => Some(cqe_status::REM_ACCESS_ERR),
                (3, syndrome::NAK_REM_OP) => Some(cqe_status::REM_OP_ERR),
                (3, _) => Some(cqe_status::REM_INV_REQ_ERR),
                _ => None,
            };
            if cls == 3 || cls == 1 {
                want_nak += 1;
            }
            let f = fold[q];
            let pending = if f.0 { f.3 } else { 0 };
            if syn as u8 == syndrome::NAK_PSN_SEQ {
                if placed && f.0 && f.1 == epsn && psn == (f.2 + 1) & M24 && f.3 != 15 && f.4 == ts >> 12 & 0x7FF {
                    fold[q] = (true, epsn, psn, f.3 + 1, f.4);
                } else {
                    want_ctl.push_back((
                        ctrlq_kind::REQ_NAK_PSN as u64,
                        q as u64,
                        psn,
                        epsn,
                        ssn,
                        off,
                        ts,
                        placed as u64,
                        pending,
                        ooo,
                    ));
                    fold[q] = (placed, epsn, psn, 0, ts >> 12 & 0x7FF);
                }
            }
            if cls == 1 {
                want_ctl.push_back((ctrlq_kind::REQ_RNR as u64, q as u64, psn, epsn, ssn, off, ts, 0, pending, ooo));
                fold[q] = (false, 0, 0, 0, 0);
            }
            if let Some(st) = status {
                want_qperr.push_back(q as u64);
                want_ack.push_back((cqn_of(q), s.acked & M16, st as u64, cqe_op::REQUESTER as u64, 0, q as u64));
                s.acked = (s.acked + 1) & M24;
                s.err = true;
            }
        }
        let mut lerrs: VecDeque<Vec<u32>> = VecDeque::new();
        // The cycles.
        let mut quiet = 0u64;
        let start = t;
        while !words.is_empty() || !rst.is_empty() || !lerrs.is_empty() || quiet < 20 + set.gap {
            let now = t;
            let ctx = move |w: String| format!("{} seed {seed:#x} batch {batch} cycle {now}: {w}", set.name);
            if t - start > 200_000 {
                return Err(ctx("no progress".into()));
            }
            if !words.is_empty() && rst.is_empty() && lerrs.is_empty() && r.below(100) < set.lerr_pct {
                let q = qpns[r.below(qpns.len() as u64) as usize];
                let ssn = r.next() & M24;
                let st = r.pick(&[cqe_status::LOC_PROT_ERR, cqe_status::LOC_LEN_ERR]) as u64;
                lerrs.push_back(pack_words(
                    ErrPack::FIELDS,
                    64,
                    &[("qpn", q as u64), ("ssn", ssn), ("cqn", cqn_of(q)), ("status", st)],
                ));
                want_lerr.push_back((cqn_of(q), ssn & M16, st, cqe_op::REQUESTER as u64, 0, q as u64));
            }
            let rq = rst.pop_front();
            m.set(rst_valid, rq.is_some() as u64);
            m.set(rst_qpn, rq.map_or(0, |x| x.0) as u64);
            m.set(rst_mp, rq.map_or(0, |x| x.1));
            m.set(rst_cc_on, rq.map_or(0, |x| x.2));
            m.set(rst_obl, rq.map_or(0, |x| x.3));
            m.set(rst_dctcp, rq.map_or(0, |x| x.4));
            let ccready = r.pct(70);
            m.set(cc_ready, ccready as u64);
            let sready = r.pct(60);
            m.set(spray_ready, sready as u64);
            let offer = words.front().filter(|_| rst.is_empty() && t >= hold_until && r.pct(70)).cloned();
            m.set(ack_valid, offer.is_some() as u64);
            m.set_wide(ack_data, &offer.clone().unwrap_or(vec![0; AckInPack::WIDTH / 32]));
            let le = lerrs.front().cloned();
            m.set(lerr_empty, le.is_none() as u64);
            m.set_wide(lerr_data, &le.unwrap_or(vec![0; 2]));
            m.set(rqs_data, tab_q);
            m.set(sqpi_data, pi_q);
            m.set(now_p, t);
            let ready = r.below(100) < set.ready_pct;
            m.set(cqr_ready, ready as u64);
            let cready = r.below(100) < set.ready_pct;
            m.set(ctl_ready, cready as u64);
            m.eval();
            let mut busy =
                rq.is_some() || offer.is_some() || m.get(idle) == 0 || m.get(spray_valid) == 1 || m.get(cc_valid) == 1;
            let skip_want = m.get(cc_valid) == 1 && cc_f.map(|f| m.get(f))[0] == CC_OP_ACK && !ccready;
            if (m.get(cnt_cc_skip) == 1) != skip_want {
                return Err(ctx(format!("cnt_cc_skip {} for an ACK offer {skip_want}", m.get(cnt_cc_skip))));
            }
            if m.get(cc_valid) == 1 {
                let [op, qpn, ecn, now_ns, rtt, bytes, on, dctcp, epsn] = cc_f.map(|f| m.get(f));
                if op == CC_OP_ACK || ccready {
                    let Some(w) = want_cc.pop_front() else {
                        return Err(ctx(format!("window engine request op {op} qpn {qpn} unexpected")));
                    };
                    let got = if op == CC_OP_ACK {
                        // The RTT is the cycles since the echoed timestamp (24-bit wrap), in ns.
                        if now_ns != (t * 4) & 0xFFFF_FFFF || rtt != ((t & M24).wrapping_sub(w.3) & M24) * 4 {
                            return Err(ctx(format!("window engine ACK at now {now_ns} with rtt {rtt} for {w:x?}")));
                        }
                        (op, qpn, ecn, w.3, bytes, 0, epsn)
                    } else {
                        (op, qpn, 0, 0, bytes, on | dctcp << 1, 0)
                    };
                    if got != w {
                        return Err(ctx(format!("window engine request {got:x?}, expected {w:x?}")));
                    }
                    if ccready {
                        cc_taken += 1;
                    } else {
                        cc_skipped += 1;
                    }
                }
            }
            if m.get(apsn_we) == 1 {
                let got = (m.get(apsn_waddr), m.get(apsn_wdata));
                if want_apsn.pop_front() != Some(got) {
                    return Err(ctx(format!("acknowledged-PSN write {got:x?} (qpn, ePSN) unexpected")));
                }
                last_epsn[got.0 as usize] = Some(got.1 & M24);
                rd_wait[got.0 as usize] = want_rdwait.pop_front().expect("one per acknowledged-PSN write");
            }
            if m.get(spray_valid) == 1 && sready {
                let got = spray_f.map(|f| m.get(f));
                let Some(want) = want_spray.pop_front() else {
                    return Err(ctx(format!(
                        "path selector request {got:x?} (op, qpn, ecn, path, max_paths, oblivious) unexpected"
                    )));
                };
                if want.iter().zip(got).any(|(w, g)| w.is_some_and(|w| w != g)) {
                    return Err(ctx(format!(
                        "path selector request {got:x?} (op, qpn, ecn, path, max_paths, oblivious), expected {want:x?}"
                    )));
                }
                sprays += 1;
            }
            if offer.is_some() && m.get(ack_ready) == 1 {
                words.pop_front();
            }
            if m.get(lerr_pop) == 1 {
                if lerrs.pop_front().is_none() {
                    return Err(ctx("lerr_pop with the FIFO empty".into()));
                }
                busy = true;
            }
            if m.get(lack_we) == 1 {
                let mut w = [0u32; 2];
                m.get_wide(lack_wdata, &mut w);
                let g = |n: &str| unpack_field(LackPack::FIELDS, &w, n);
                let got = (m.get(lack_waddr), g("ssn"), g("psn"));
                if want_lack.front() != Some(&got) {
                    return Err(ctx(format!(
                        "lACK table write {got:x?}, expected {:x?} (owed {want_lack:x?})",
                        want_lack.front()
                    )));
                }
                want_lack.pop_front();
                lack[got.0 as usize] = (got.1, got.2);
            }
            if m.get(cqr_valid) == 1 && ready {
                let mut w = [0u32; CqReqPack::WIDTH / 32];
                m.get_wide(cqr_data, &mut w);
                let g = |n: &str| unpack_field(CqReqPack::FIELDS, &w, n);
                let got = (g("cqn"), g("idx"), g("status"), g("op"), g("len"), g("qpn"));
                if want_lerr.front() == Some(&got) {
                    want_lerr.pop_front();
                } else if want_ack.front() == Some(&got) {
                    want_ack.pop_front();
                    // The turn engine must see a WQE acknowledged before the host can see its completion.
                    let ahead = lack[got.5 as usize].0.wrapping_sub(got.1) & M16;
                    if got.2 == cqe_status::SUCCESS as u64 && !(1..0x8000).contains(&ahead) {
                        return Err(ctx(format!(
                            "completion of WQE {:#x} requested while the lACK table shows {:x?}",
                            got.1, lack[got.5 as usize]
                        )));
                    }
                } else {
                    return Err(ctx(format!(
                        "completion request {got:x?}, expected {:x?} (ACK) or {:x?} (local error)",
                        want_ack.front(),
                        want_lerr.front()
                    )));
                }
                cqrs += 1;
                busy = true;
            }
            if m.get(ctl_valid) == 1 && cready {
                let mut w = [0u32; CtlReqPack::WIDTH / 32];
                m.get_wide(ctl_data, &mut w);
                let g = |n: &str| unpack_field(CtlReqPack::FIELDS, &w, n);
                let timeout = g("kind") == ctrlq_kind::REQ_TIMEOUT as u64;
                // A NAK report's imm is the echoed timestamp; a timeout report has none.
                let nak = |n: &str| if timeout { 0 } else { g(n) };
                let got = (
                    g("kind"),
                    g("qpn"),
                    g("psn"),
                    g("epsn"),
                    g("ssn"),
                    g("psn_offset"),
                    nak("imm"),
                    nak("flags"),
                    nak("plen"),
                    // A NAK report's RSN field carries the NAK's SACK OOO count.
                    nak("rsn"),
                );
                let rest = [if timeout { g("rsn") | g("imm") | g("plen") } else { 0 }, g("episode")];
                if rest != [0; 2] {
                    return Err(ctx(format!("CtrlQ request {got:x?} with rest {rest:x?}")));
                }
                if got.0 == ctrlq_kind::REQ_PROBE as u64 {
                    let q = got.1 as usize;
                    let w = if tab[q] >> 29 & 1 == 0 { tab[q] } else { tab_before[q] };
                    let s = Req { acked: w & M24, err: w >> 24 & 1 != 0, pi: pi_tab[q] };
                    let from = started(w, t);
                    if set.probe == 0
                        || s.err
                        || pi_tab[q] == s.acked & M16
                        || (answered(&sent_psn, &last_epsn, &rd_wait, q)
                            && answered(&sent_before, &epsn_before, &rdw_before, q))
                        || t - from <= set.probe
                        || w >> 29 & 1 != 0
                    {
                        return Err(ctx(format!(
                            "probe report {got:x?} for qpn {q} (word {w:#x}, {s:x?}, timer from cycle {from}, probe {})",
                            set.probe
                        )));
                    }
                    let valid = g("flags") & 1 != 0;
                    if g("ssn") != s.acked || (valid && Some(g("epsn")) != last_epsn[q]) || g("flags") > 1 {
                        return Err(ctx(format!(
                            "probe report {got:x?} (flags {:#x}) for qpn {q}: lACK {:#x}, latest ePSN {:x?}",
                            g("flags"),
                            s.acked,
                            last_epsn[q]
                        )));
                    }
                    probes[valid as usize] += 1;
                } else if got.0 == ctrlq_kind::REQ_TIMEOUT as u64 {
                    let q = got.1 as usize;
                    // The block's own state word: the model runs ahead by a batch. A report
                    // may have been read before the host's changes between batches, and
                    // taken after them: it is checked against the state it read.
                    let changed = tab[q] != tab_before[q] || pi_tab[q] != pi_before[q] || sent_psn[q] != sent_before[q];
                    let (tab, pi_tab, sent, epsn, rdw) = if changed {
                        let now_ok = {
                            let w = tab[q];
                            w >> 24 & 1 == 0
                                && pi_tab[q] != w & M16
                                && got.4 == w & M24
                                && !answered(&sent_psn, &last_epsn, &rd_wait, q)
                        };
                        if now_ok {
                            (&tab, &pi_tab, &sent_psn, &last_epsn, &rd_wait)
                        } else {
                            (&tab_before, &pi_before, &sent_before, &epsn_before, &rdw_before)
                        }
                    } else {
                        (&tab, &pi_tab, &sent_psn, &last_epsn, &rd_wait)
                    };
                    let s = Req { acked: tab[q] & M24, err: tab[q] >> 24 & 1 != 0, pi: pi_tab[q] };
                    let outstanding = !s.err && pi_tab[q] != s.acked & M16 && !answered(sent, epsn, rdw, q);
                    let from = started(tab[q], t);
                    // Timeouts in a row since the last ACK: one more than the word holds, saturating.
                    let in_row = ((tab[q] >> 25 & 0xF) + 1).min(15);
                    if g("flags") != in_row {
                        return Err(ctx(format!(
                            "timeout report {got:x?} counts {} in a row, expected {in_row}",
                            g("flags")
                        )));
                    }
                    // The timeout doubles per timeout in a row the word holds, up to 8x.
                    let rto = set.rto << (tab[q] >> 25 & 0xF).min(3);
                    if set.rto == 0 || !outstanding || got.4 != s.acked || t - from <= rto {
                        return Err(ctx(format!(
                            "timeout report {got:x?} for qpn {q} ({s:x?}, posted {:#x}, timer from cycle {from}, rto {})",
                            pi_tab[q], set.rto
                        )));
                    }
                    reports += 1;
                } else if want_ctl.front() != Some(&got) {
                    return Err(ctx(format!("CtrlQ request {got:x?}, expected a NAK report {:x?}", want_ctl.front())));
                } else {
                    want_ctl.pop_front();
                    busy = true;
                }
            }
            if m.get(qperr_we) == 1 {
                let q = m.get(qperr_waddr);
                if want_qperr.pop_front() != Some(q) {
                    return Err(ctx(format!("QP error flag of qpn {q} raised unexpectedly")));
                }
                busy = true;
            }
            got_nak += m.get(cnt_nak);
            got_bad += m.get(cnt_bad);
            got_rto += m.get(cnt_rto);
            // Liveness: an outstanding QP without progress is reported in time.
            if set.rto != 0 {
                for &q in &qpns {
                    let s = Req { acked: tab[q] & M24, err: tab[q] >> 24 & 1 != 0, pi: pi_tab[q] };
                    let from = started(tab[q], t);
                    let rto = set.rto << (tab[q] >> 25 & 0xF).min(3);
                    let waits = !s.err && pi_tab[q] != s.acked & M16 && !answered(&sent_psn, &last_epsn, &rd_wait, q);
                    if waits && t > from + rto + 2 * SCAN_PERIOD {
                        return Err(ctx(format!("qpn {q} ({s:x?}) timer started at cycle {from} and not reported")));
                    }
                    // A probe is due once per stall, before the timeout (which takes the scan's turn first).
                    let probe_due = set.probe != 0 && tab[q] >> 29 & 1 == 0 && t > from + set.probe + 2 * SCAN_PERIOD;
                    if waits && probe_due && t + 2 * SCAN_PERIOD < from + rto {
                        return Err(ctx(format!("qpn {q} ({s:x?}) timer started at cycle {from}, no probe reported")));
                    }
                }
            }
            let (ra, we, wa, wd) = (m.get(rqs_addr) as usize, m.get(rqs_we) == 1, m.get(rqs_waddr), m.get(rqs_wdata));
            let pa = m.get(sqpi_addr) as usize;
            m.tick();
            tab_q = tab[ra];
            pi_q = pi_tab[pa] | sent_psn[pa] << 16;
            if we {
                let moved = (wd ^ tab[wa as usize]) & 0x1FF_FFFF != 0;
                // The timer restarts at a cycle of this ACK's processing (or the scan's look).
                let from = started(wd, t);
                if t - from > 20_000 {
                    return Err(ctx(format!(
                        "qpn {wa}: state word {wd:#x} written with a timer started at cycle {from}"
                    )));
                }
                if moved && wd >> 25 & 0xF != 0 {
                    return Err(ctx(format!("qpn {wa}: lACK moved, timeouts in a row not cleared: {wd:#x}")));
                }
                tab[wa as usize] = wd;
                // The scan's timestamp refreshes are not work.
                busy |= moved;
            }
            quiet = if busy { 0 } else { quiet + 1 };
            t += 1;
        }
        let ctx = |w: String| format!("{} seed {seed:#x} batch {batch} cycle {t}: {w}", set.name);
        if !want_lack.is_empty() {
            return Err(ctx(format!("quiet with lACK table writes owed: {:x?}", want_lack.front())));
        }
        if !want_cc.is_empty() {
            return Err(ctx(format!("quiet with window engine requests owed: {:x?}", want_cc.front())));
        }
        if !want_apsn.is_empty() {
            return Err(ctx(format!("quiet with acknowledged-PSN writes owed: {:x?}", want_apsn.front())));
        }
        if !want_spray.is_empty() {
            return Err(ctx(format!("quiet with path selector requests owed: {:x?}", want_spray.front())));
        }
        if !want_ack.is_empty() || !want_lerr.is_empty() || !want_qperr.is_empty() || !want_ctl.is_empty() {
            return Err(ctx(format!(
                "quiet with completions owed: ACK {:x?}, local error {:x?}, error flags {:?}, CtrlQ {:x?}",
                want_ack.front(),
                want_lerr.front(),
                want_qperr,
                want_ctl.front()
            )));
        }
        // A timeout report may be on its way to the writer: counted, not yet taken.
        if (got_nak, got_bad) != (want_nak, want_bad) || got_rto < reports || got_rto > reports + 1 {
            return Err(ctx(format!(
                "counters NAK {got_nak} bad {got_bad} RTO {got_rto}, expected {want_nak} {want_bad} {reports}"
            )));
        }
        for &q in &qpns {
            let g = |n: &str| unpack_field(ReqStatePack::FIELDS, &[tab[q] as u32, (tab[q] >> 32) as u32], n);
            if (g("acked"), g("err") != 0) != (req[q].acked, req[q].err) {
                return Err(ctx(format!(
                    "qpn {q}: requester state lACK {:#x} err {}, expected {:#x} {}",
                    g("acked"),
                    g("err"),
                    req[q].acked,
                    req[q].err
                )));
            }
        }
        (tab_before, pi_before) = (tab.clone(), pi_tab.clone());
        (sent_before, epsn_before, rdw_before) = (sent_psn.clone(), last_epsn.clone(), rd_wait.clone());
        // The send path moves on between batches: now and then every packet a QP sent is answered.
        for &q in &qpns {
            // Often right after a word that leaves the QP waiting for READ data (that ePSN answers nothing).
            if r.pct(if rd_wait[q] { 80 } else { 40 }) {
                sent_psn[q] = match last_epsn[q] {
                    Some(e) if r.pct(60) => e,
                    _ => r.below(1 << 24),
                };
            }
        }
        // The responder reports a new producer index between batches (WQEs posted).
        for &q in &qpns {
            if r.pct(50) {
                let was_idle = req[q].err || pi_tab[q] == req[q].acked & M16;
                req[q].pi = (req[q].pi + r.below(8)) & M16;
                pi_tab[q] = req[q].pi;
                // The timer of a QP with nothing outstanding is refreshed by the scan.
                if set.rto != 0 && was_idle && t - started(tab[q], t) > SCAN_PERIOD {
                    return Err(ctx(format!("qpn {q}: idle, but its timer started at cycle {}", started(tab[q], t))));
                }
            }
        }
    }
    Ok((acks, cqrs, want_nak, reports, [sprays, cc_taken, cc_skipped, probes[0], probes[1]]))
}

fn check(set: Set) {
    let mut probes = 0;
    for seed in block_seeds("RNIC_ACK_BLOCK", set.base_seed) {
        match run(&set, seed) {
            Ok((a, c, n, b, [sp, cc, skip, pn, pv])) => {
                probes += pn + pv;
                eprintln!(
                    "ack_block {} seed {seed:#x}: {a} ACKs, {c} completion requests, {n} NAKs, {b} timeout reports, {} probe reports ({pv} with an ePSN), {sp} path selector requests, {cc} window engine requests taken ({skip} ACKs offered while it was busy)",
                    set.name, pn + pv
                )
            }
            Err(e) => {
                panic!("{e}\nreplay: RNIC_ACK_BLOCK_SEED={seed:#x} cargo test --release -p rnic-sim --test ack_block")
            }
        }
    }
    assert!(set.probe == 0 || probes > 0, "{}: no probe was reported", set.name);
}

#[test]
fn ack_block_3qp_ready_writer() {
    check(Set {
        name: "3qp_ready_writer",
        base_seed: 0xAC0_0000,
        qps: 3,
        ready_pct: 90,
        lerr_pct: 5,
        batches: 400,
        rto: 0,
        gap: 0,
        probe: 0,
    });
}

#[test]
fn ack_block_12qp_slow_writer_many_local_errors() {
    check(Set {
        name: "12qp_slow_writer_many_local_errors",
        base_seed: 0xAC0_1000,
        qps: 12,
        ready_pct: 20,
        lerr_pct: 30,
        batches: 400,
        rto: 0,
        gap: 0,
        probe: 0,
    });
}

#[test]
fn ack_block_rto_5qp() {
    check(Set {
        name: "rto_5qp",
        base_seed: 0xAC0_2000,
        qps: 5,
        ready_pct: 60,
        lerr_pct: 5,
        batches: 60,
        rto: 1500,
        gap: 4000,
        probe: 600,
    });
}

#[test]
fn ack_block_rto_short_timeout_slow_writer() {
    check(Set {
        name: "rto_short_timeout_slow_writer",
        base_seed: 0xAC0_3000,
        qps: 12,
        ready_pct: 15,
        lerr_pct: 10,
        batches: 60,
        rto: 300,
        gap: 3000,
        probe: 150,
    });
}
