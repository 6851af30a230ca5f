//! Loss recovery end to end over two cosimulated NICs: the NIC reports NAKs,
//! RNR NAKs and timeouts through its control queue, the library's slow path
//! (run by `poll_cq`) rewinds the send queue, and every byte arrives.
//!
//! - Each single fault: the first, a middle or the last packet of a WRITE,
//!   a WRITE with immediate and a SEND; an ACK; a NAK; the last ACK of the
//!   run; with the responder's selective repeat on (a lost request packet,
//!   WRITE or SEND, is the one packet resent) and off (go-back-N). Every byte of every
//!   message is checked, completions come in order with success, nothing
//!   outside the buffers is written.
//! - A QP whose peer is gone fails with `RetryExcErr` after `retry_cnt`
//!   timeouts, its other WRs are flushed, and another QP keeps running.
//! - A SEND without a posted receive is retried on RNR NAKs until the
//!   receive is posted, then completes.
//! - The responder's pool of windows overflows: the QPs without one fall
//!   back to go-back-N, and every window comes back.
//! - For seeded patterns of lost packets, the PSNs resent are the ones
//!   `rnic-model`'s selective-repeat sender resends.
//! - A timeout's rewind reaches WQEs completed meanwhile, whose ring slots
//!   the application reuses at once: the NIC skips them.
//! - A lost resend on one of 16 QPs is resent again before the timeout.
//! - Each single fault of RDMA READ: a READ request (the first, a middle,
//!   the last), the first, a middle or the last response packet of each of
//!   those, an ACK (none needed: the responses complete the READs); every
//!   byte lands in the requester's buffer, completions in order.

use rnic::{AccessFlags, Mtu, QpAttr, QpState, RecvWr, SendWr, WcOpcode, WcStatus, WrOpcode};
use rnic_sim::FrameClass;
use rnic_spec::regs::counters;
use rnic_spec::wire::Syndrome;
use rnic_tests::{assert_no_violations, assert_same, fill_sentinel, pair, read_all, stream, wait, World, SEED};
use rnic_tools::pattern;

/// Messages per run, and their size (3 packets at the 1 KiB MTU).
const MSGS: u32 = 4;
const SIZE: usize = 3 * 1024;
/// Each message's slot in the destination (guard bytes after the payload).
const SLOT: usize = SIZE + 256;

/// Which message kind a run sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Write,
    WriteImm,
    Send,
}

/// Which frame a run loses: (link, predicate), the `skip`-th match (0-based) lost once.
#[derive(Clone, Copy, Debug)]
enum Lose {
    /// A request packet of message 1 (the second) at this packet index (0, 1 or 2).
    Packet(u32),
    /// The `n`-th ACK the responder sends.
    Ack(u64),
    /// The first NAK (with a request packet lost first, so there is one).
    Nak,
}

impl Lose {
    /// Whether recovery needs a retransmission (a lost ACK is covered by the next one, but the last).
    fn needs_resend(self) -> bool {
        !matches!(self, Lose::Ack(n) if n + 1 < MSGS as u64)
    }
}

fn run(kind: Kind, lose: Lose, sr: bool) {
    let nics = pair();
    {
        let w = World::with_selective_repeat(&nics, 1, 2 * MSGS, Mtu::Mtu1024, sr);
        let (qa, qb) = &w.conns[0];
        let total = SLOT * MSGS as usize;
        let src = w.pd_a.reg_mr(total, AccessFlags::empty()).unwrap();
        for m in 0..MSGS {
            src.write((m as usize * SLOT) as u64, &pattern::make(SEED, stream(0, m), SIZE)).unwrap();
        }
        let dst = w.pd_b.reg_mr(total, AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE).unwrap();
        let snapshot = fill_sentinel(&dst);
        {
            let mut c = nics.cluster.lock();
            // Request packets carry message 1's packets at PSNs sq_psn + 3 .. + 5.
            match lose {
                Lose::Packet(i) => {
                    c.faults(0).drop_matching(3 + i as u64, 1, Box::new(|f: &FrameClass| !f.opcode.is_ack()))
                }
                Lose::Ack(n) => {
                    c.faults(1).drop_matching(n, 1, Box::new(|f: &FrameClass| f.syndrome == Some(Syndrome::Ack)))
                }
                Lose::Nak => {
                    c.faults(0).drop_matching(3, 1, Box::new(|f: &FrameClass| !f.opcode.is_ack()));
                    c.faults(1).drop_matching(0, 1, Box::new(|f: &FrameClass| f.syndrome == Some(Syndrome::NakPsnSeq)));
                }
            }
        }
        for m in 0..MSGS {
            if kind != Kind::Write {
                qb.post_recv(&RecvWr {
                    wr_id: 100 + m as u64,
                    sg_list: &[dst.sge((m as usize * SLOT) as u64, SIZE as u32)],
                })
                .unwrap();
            }
        }
        for m in 0..MSGS {
            let remote_addr = dst.addr() + (m as usize * SLOT) as u64;
            let opcode = match kind {
                Kind::Write => WrOpcode::RdmaWrite { remote_addr, rkey: dst.rkey() },
                Kind::WriteImm => WrOpcode::RdmaWriteWithImm { remote_addr, rkey: dst.rkey(), imm: 0xA000 + m },
                Kind::Send => WrOpcode::Send,
            };
            qa.post_send(&SendWr {
                send_flags: rnic::SendFlags::SIGNALED,
                wr_id: m as u64,
                opcode,
                sg_list: src.sge((m as usize * SLOT) as u64, SIZE as u32).into(),
            })
            .unwrap();
        }
        let wcs = wait(&w.cq_a, MSGS as usize, 40 * total as u64);
        let got: Vec<_> = wcs.iter().map(|c| (c.wr_id, c.status, c.opcode)).collect();
        let op = if kind == Kind::Send { WcOpcode::Send } else { WcOpcode::RdmaWrite };
        let want: Vec<_> = (0..MSGS as u64).map(|m| (m, WcStatus::Success, op)).collect();
        assert_eq!(got, want, "{kind:?} losing {lose:?} (sr {sr}): requester completions");
        if kind != Kind::Write {
            let r = wait(&w.cq_b, MSGS as usize, total as u64);
            for (m, c) in r.iter().enumerate() {
                assert_eq!((c.wr_id, c.status, c.byte_len), (100 + m as u64, WcStatus::Success, SIZE as u32), "{r:?}");
                if kind == Kind::WriteImm {
                    assert_eq!((c.opcode, c.imm_data), (WcOpcode::RecvRdmaWithImm, 0xA000 + m as u32), "{r:?}");
                }
            }
        }
        let mut want = snapshot.clone();
        for m in 0..MSGS as usize {
            want[m * SLOT..m * SLOT + SIZE].copy_from_slice(&pattern::make(SEED, stream(0, m as u32), SIZE));
        }
        assert_same(&format!("{kind:?} losing {lose:?}"), &read_all(&dst), &want, SLOT, MSGS, SIZE);
        let stats = qa.recovery_stats();
        eprintln!("{kind:?} losing {lose:?} (sr {sr}): {stats:?}, {} cycles", nics.cluster.lock().now());
        let reg = |nic: usize, r: u32| nics.cluster.lock().read_reg(nic, r).unwrap();
        let dropped: u64 = nics.cluster.lock().stats().links.iter().map(|l| l.dropped).sum();
        assert!(dropped >= 1, "{kind:?} losing {lose:?}: the fault never matched");
        if lose.needs_resend() {
            assert!(
                stats.rewinds + stats.resends >= 1,
                "{kind:?} losing {lose:?}: recovered without a retransmission? {stats:?}"
            );
            assert!(stats.episodes >= 1, "{kind:?} losing {lose:?}: {stats:?}");
        } else {
            assert_eq!(stats.episodes, 0, "{kind:?} losing {lose:?}: a lost ACK the next one covers: {stats:?}");
        }
        if sr && matches!(lose, Lose::Packet(_)) {
            // Selective repeat: the packets after the loss were placed (a SEND's in the receive
            // buffer its RSN names, their completions written as ePSN passes them), only the lost
            // one is resent.
            assert_eq!((stats.rewinds, stats.resends), (0, 1), "{kind:?} losing {lose:?}: {stats:?}");
            assert_eq!(stats.episodes, 1, "{kind:?} losing {lose:?}: one loss, one episode: {stats:?}");
            // Every placed NAK reached the requester; the slow path learns of those the NIC
            // reported or folded into a later report (the last ones of a chain need no report).
            let placed = reg(1, counters::RX_OOO_PLACED);
            assert_eq!(reg(0, counters::RX_NAK), placed, "{stats:?}");
            assert!(stats.ooo_placed >= 1 && stats.ooo_placed <= placed, "{stats:?}, {placed} placed");
        }
        if !sr {
            assert_eq!((stats.resends, stats.ooo_placed), (0, 0), "go-back-N: {stats:?}");
        }
        assert_eq!(reg(0, counters::SQ_REWINDS), stats.rewinds, "{stats:?}");
        assert_eq!(reg(0, counters::SQ_RESENDS), stats.resends, "{stats:?}");
        assert_eq!(reg(0, counters::CTRLQ_DROP), 0);
        assert_eq!(qa.state(), QpState::Rts);
    }
    assert_no_violations(&nics);
}

#[test]
fn single_losses_of_write_packets_recover() {
    for sr in [true, false] {
        for i in 0..3 {
            run(Kind::Write, Lose::Packet(i), sr);
        }
    }
}

#[test]
fn single_losses_of_write_with_immediate_packets_recover() {
    for sr in [true, false] {
        for i in 0..3 {
            run(Kind::WriteImm, Lose::Packet(i), sr);
        }
    }
}

#[test]
fn single_losses_of_send_packets_recover() {
    for sr in [true, false] {
        for i in 0..3 {
            run(Kind::Send, Lose::Packet(i), sr);
        }
    }
}

#[test]
fn lost_acks_and_naks_recover() {
    for sr in [true, false] {
        for kind in [Kind::Write, Kind::Send] {
            run(kind, Lose::Ack(0), sr);
            run(kind, Lose::Ack(1), sr);
            // The last ACK: only the retransmission timeout notices.
            run(kind, Lose::Ack(MSGS as u64 - 1), sr);
            run(kind, Lose::Nak, sr);
        }
    }
}

/// Which frame a READ run loses.
#[derive(Clone, Copy, Debug)]
enum ReadLose {
    /// The READ request of message `m` (requester to responder).
    Request(u32),
    /// Response packet `i` (0, 1 or 2) of message `m` (responder to requester).
    Response(u32, u32),
    /// The `n`-th ACK the responder sends (READ requests are acknowledged
    /// too; their responses complete the READs, so no ACK is needed).
    Ack(u64),
}

/// `MSGS` READs of `SIZE` bytes (3 response packets each) on one QP with
/// one frame lost: every byte lands in the requester's buffer, guard bytes
/// untouched, completions `RdmaRead` in order.
fn run_read(lose: ReadLose, sr: bool) {
    let nics = pair();
    {
        let w = World::with_selective_repeat(&nics, 1, 2 * MSGS, Mtu::Mtu1024, sr);
        let (qa, _qb) = &w.conns[0];
        let total = SLOT * MSGS as usize;
        let src = w.pd_b.reg_mr(total, AccessFlags::REMOTE_READ).unwrap();
        for m in 0..MSGS {
            src.write((m as usize * SLOT) as u64, &pattern::make(SEED, stream(0, m), SIZE)).unwrap();
        }
        let dst = w.pd_a.reg_mr(total, AccessFlags::LOCAL_WRITE).unwrap();
        let snapshot = fill_sentinel(&dst);
        {
            let mut c = nics.cluster.lock();
            let data = |f: &FrameClass| !f.opcode.is_ack();
            match lose {
                ReadLose::Request(m) => c.faults(0).drop_matching(m as u64, 1, Box::new(data)),
                ReadLose::Response(m, i) => c.faults(1).drop_matching(3 * m as u64 + i as u64, 1, Box::new(data)),
                ReadLose::Ack(n) => {
                    c.faults(1).drop_matching(n, 1, Box::new(|f: &FrameClass| f.syndrome == Some(Syndrome::Ack)))
                }
            }
        }
        for m in 0..MSGS {
            let remote_addr = src.addr() + (m as usize * SLOT) as u64;
            qa.post_send(&SendWr {
                send_flags: rnic::SendFlags::SIGNALED,
                wr_id: m as u64,
                opcode: WrOpcode::RdmaRead { remote_addr, rkey: src.rkey() },
                sg_list: dst.sge((m as usize * SLOT) as u64, SIZE as u32).into(),
            })
            .unwrap();
        }
        let wcs = wait(&w.cq_a, MSGS as usize, 40 * total as u64);
        let got: Vec<_> = wcs.iter().map(|c| (c.wr_id, c.status, c.opcode)).collect();
        let want: Vec<_> = (0..MSGS as u64).map(|m| (m, WcStatus::Success, WcOpcode::RdmaRead)).collect();
        assert_eq!(got, want, "READ losing {lose:?} (sr {sr}): requester completions");
        let mut want = snapshot.clone();
        for m in 0..MSGS as usize {
            want[m * SLOT..m * SLOT + SIZE].copy_from_slice(&pattern::make(SEED, stream(0, m as u32), SIZE));
        }
        assert_same(&format!("READ losing {lose:?}"), &read_all(&dst), &want, SLOT, MSGS, SIZE);
        let stats = qa.recovery_stats();
        eprintln!("READ losing {lose:?} (sr {sr}): {stats:?}, {} cycles", nics.cluster.lock().now());
        let reg = |nic: usize, r: u32| nics.cluster.lock().read_reg(nic, r).unwrap();
        let dropped: u64 = nics.cluster.lock().stats().links.iter().map(|l| l.dropped).sum();
        assert!(dropped >= 1, "READ losing {lose:?}: the fault never matched");
        if matches!(lose, ReadLose::Ack(_)) {
            assert_eq!(stats.episodes, 0, "READ losing {lose:?}: the responses complete the READs: {stats:?}");
        } else {
            assert!(stats.rewinds + stats.resends >= 1, "READ losing {lose:?}: no retransmission? {stats:?}");
            assert!(stats.episodes >= 1, "READ losing {lose:?}: {stats:?}");
        }
        assert_eq!(reg(0, counters::SQ_REWINDS), stats.rewinds, "{stats:?}");
        assert_eq!(reg(0, counters::SQ_RESENDS), stats.resends, "{stats:?}");
        assert_eq!(reg(0, counters::CTRLQ_DROP), 0);
        assert_eq!(qa.state(), QpState::Rts);
    }
    assert_no_violations(&nics);
}

#[test]
fn single_losses_of_read_requests_and_responses_recover() {
    for sr in [true, false] {
        for m in [0, 1, MSGS - 1] {
            run_read(ReadLose::Request(m), sr);
            for i in 0..3 {
                run_read(ReadLose::Response(m, i), sr);
            }
        }
    }
}

/// A lost ACK of a READ request needs nothing: the READ's response completes it.
/// (A lost NAK: a QP has at most two READs in flight, and the request
/// after a lost one is NAKed; if that NAK is lost too, the timeout resends
/// from lACK, as `single_losses_of_read_requests_and_responses_recover`
/// shows for a lost request with no NAK at all.)
#[test]
fn lost_acks_of_reads_need_no_retransmission() {
    for sr in [true, false] {
        run_read(ReadLose::Ack(0), sr);
        run_read(ReadLose::Ack(MSGS as u64 - 1), sr);
    }
}

/// A QP whose peer is gone (every frame to it lost) fails its oldest WR with
/// `RetryExcErr` after `retry_cnt` retransmission timeouts and flushes the
/// rest; a QP beside it keeps running, every byte checked.
#[test]
fn peer_gone_fails_with_retry_exceeded_and_spares_other_qps() {
    let nics = pair();
    {
        let w = World::new(&nics, 2, 8, Mtu::Mtu1024);
        let (dead_a, dead_b) = &w.conns[0];
        let (good_a, _) = &w.conns[1];
        const RETRY_CNT: u8 = 2;
        dead_a.modify(&QpAttr { qp_state: QpState::Rts, retry_cnt: Some(RETRY_CNT), ..Default::default() }).unwrap();
        w.ctx_a.set_retransmit_timeout(5_000).unwrap();
        let gone = dead_b.qp_num();
        nics.cluster.lock().faults(0).drop_matching(0, u64::MAX, Box::new(move |f: &FrameClass| f.dqpn == gone));
        let src = w.pd_a.reg_mr(SIZE, AccessFlags::empty()).unwrap();
        src.write(0, &pattern::make(SEED, stream(1, 0), SIZE)).unwrap();
        let dst = w.pd_b.reg_mr(2 * SLOT, AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE).unwrap();
        let snapshot = fill_sentinel(&dst);
        for m in 0..3u64 {
            let opcode = WrOpcode::RdmaWrite { remote_addr: dst.addr(), rkey: dst.rkey() };
            dead_a
                .post_send(&SendWr {
                    send_flags: rnic::SendFlags::SIGNALED,
                    wr_id: m,
                    opcode,
                    sg_list: src.sge(0, SIZE as u32).into(),
                })
                .unwrap();
        }
        let opcode = WrOpcode::RdmaWrite { remote_addr: dst.addr() + SLOT as u64, rkey: dst.rkey() };
        good_a
            .post_send(&SendWr {
                send_flags: rnic::SendFlags::SIGNALED,
                wr_id: 10,
                opcode,
                sg_list: src.sge(0, SIZE as u32).into(),
            })
            .unwrap();
        let wcs = w.cq_a.wait_cq(4, 200_000).unwrap_or_else(|e| panic!("{e}"));
        let dead: Vec<_> = wcs.iter().filter(|c| c.qp_num == dead_a.qp_num()).map(|c| (c.wr_id, c.status)).collect();
        assert_eq!(dead, vec![(0, WcStatus::RetryExcErr), (1, WcStatus::WrFlushErr), (2, WcStatus::WrFlushErr)]);
        let good: Vec<_> = wcs.iter().filter(|c| c.qp_num == good_a.qp_num()).map(|c| (c.wr_id, c.status)).collect();
        assert_eq!(good, vec![(10, WcStatus::Success)]);
        assert_eq!(dead_a.state(), QpState::Error);
        let stats = dead_a.recovery_stats();
        assert_eq!((stats.timeouts, stats.rewinds), (RETRY_CNT as u64 + 1, RETRY_CNT as u64), "{stats:?}");
        let mut want = snapshot.clone();
        want[SLOT..SLOT + SIZE].copy_from_slice(&pattern::make(SEED, stream(1, 0), SIZE));
        assert_same("the dead QP writes nothing, the good one its message", &read_all(&dst), &want, SLOT, 2, SIZE);
    }
    assert_no_violations(&nics);
}

/// A SEND to a peer without a posted receive is retried on RNR NAKs (the
/// default `rnr_retry` 7 retries forever) and completes once the receive is
/// posted; with `rnr_retry` 2 it fails with `RnrRetryExcErr` after three.
#[test]
fn rnr_naks_are_retried_until_a_receive_is_posted() {
    let nics = pair();
    {
        let w = World::new(&nics, 2, 8, Mtu::Mtu1024);
        let (qa, qb) = &w.conns[0];
        let (limited_a, _) = &w.conns[1];
        limited_a.modify(&QpAttr { qp_state: QpState::Rts, rnr_retry: Some(2), ..Default::default() }).unwrap();
        let src = w.pd_a.reg_mr(SIZE, AccessFlags::empty()).unwrap();
        src.write(0, &pattern::make(SEED, stream(2, 0), SIZE)).unwrap();
        let dst = w.pd_b.reg_mr(SLOT, AccessFlags::LOCAL_WRITE).unwrap();
        let snapshot = fill_sentinel(&dst);
        qa.post_send(&SendWr {
            send_flags: rnic::SendFlags::SIGNALED,
            wr_id: 1,
            opcode: WrOpcode::Send,
            sg_list: src.sge(0, SIZE as u32).into(),
        })
        .unwrap();
        limited_a
            .post_send(&SendWr {
                send_flags: rnic::SendFlags::SIGNALED,
                wr_id: 2,
                opcode: WrOpcode::Send,
                sg_list: src.sge(0, 100).into(),
            })
            .unwrap();
        // 10 us RNR timer: about ten retries in 30,000 cycles; only the limited QP completes.
        let wcs = w.cq_a.wait_cq(1, 30_000).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((wcs[0].wr_id, wcs[0].status), (2, WcStatus::RnrRetryExcErr), "{wcs:?}");
        assert_eq!(limited_a.recovery_stats().rnr_naks, 3);
        let err = w.cq_a.wait_cq(1, 30_000).expect_err("no receive is posted yet");
        assert!(err.to_string().contains("RNR NAK(s)"), "{err}");
        let naks = qa.recovery_stats().rnr_naks;
        assert!(naks >= 3, "{naks} RNR NAKs in 60,000 cycles with a 2,500-cycle RNR timer");
        qb.post_recv(&RecvWr { wr_id: 7, sg_list: &[dst.sge(0, SIZE as u32)] }).unwrap();
        let wcs = wait(&w.cq_a, 1, SIZE as u64);
        assert_eq!((wcs[0].wr_id, wcs[0].status), (1, WcStatus::Success));
        let r = wait(&w.cq_b, 1, SIZE as u64);
        assert_eq!((r[0].wr_id, r[0].status, r[0].byte_len), (7, WcStatus::Success, SIZE as u32));
        let mut want = snapshot.clone();
        want[..SIZE].copy_from_slice(&pattern::make(SEED, stream(2, 0), SIZE));
        assert_same("the retried SEND", &read_all(&dst), &want, SLOT, 1, SIZE);
        assert_eq!(qa.state(), QpState::Rts);
    }
    assert_no_violations(&nics);
}

/// The responder's pool of selective-repeat windows runs out: 8 more QPs
/// than windows each lose the first packet of a WRITE while the requester's
/// slow path is not polled, so every QP's later packets arrive out of order
/// at once. The first `SR_POOL` QPs borrow a window and have their
/// packets placed; the rest find none and go to software recovery
/// (`RX_OOO_SW`): their packets are placed too and reported to the
/// responder's host. Every QP gets one resend, no rewind; the resent first
/// packet reaches each software QP's run and the NIC jumps past it without
/// the host's help. Every byte arrives; a second round shows every window
/// came back to the pool. The 72 retransmissions the slow path decides at
/// once wait in the library for room in the NIC's 16-deep rewind queue
/// (none is dropped).
#[test]
fn sr_pool_overflow_goes_to_software_recovery_and_windows_return() {
    use rnic_spec::params::SR_POOL;
    const EXTRA: u32 = 8;
    let n = SR_POOL as u32 + EXTRA;
    let nics = pair();
    {
        let w = World::new(&nics, n, 4, Mtu::Mtu1024);
        // No timeout while the slow path is not polled: only the NAKs drive recovery.
        w.ctx_a.set_retransmit_timeout(1_000_000).unwrap();
        let src = w.pd_a.reg_mr(SIZE, AccessFlags::empty()).unwrap();
        src.write(0, &pattern::make(SEED, stream(2, 0), SIZE)).unwrap();
        let dst = w.pd_b.reg_mr(2 * n as usize * SLOT, AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE).unwrap();
        let snapshot = fill_sentinel(&dst);
        let reg = |nic: usize, r: u32| nics.cluster.lock().read_reg(nic, r).unwrap();
        for round in 0..2u64 {
            // Each QP's first WRITE_FIRST of this round is lost (3 packets a message: 2 arrive out of order).
            let mut seen = std::collections::HashSet::new();
            nics.cluster.lock().faults(0).drop_matching(
                0,
                n as u64,
                Box::new(move |f: &FrameClass| {
                    f.opcode == rnic_spec::wire::Opcode::WriteFirst && !f.retransmission && seen.insert(f.dqpn)
                }),
            );
            let (placed0, nowin0) = (reg(1, counters::RX_OOO_PLACED), reg(1, counters::RX_OOO_SW));
            for (i, (qa, _)) in w.conns.iter().enumerate() {
                let slot = (round as usize * n as usize + i) * SLOT;
                let opcode = WrOpcode::RdmaWrite { remote_addr: dst.addr() + slot as u64, rkey: dst.rkey() };
                qa.post_send(&SendWr {
                    send_flags: rnic::SendFlags::SIGNALED,
                    wr_id: round,
                    opcode,
                    sg_list: src.sge(0, SIZE as u32).into(),
                })
                .unwrap();
            }
            // Everything is sent and NAKed before the slow path runs.
            nics.cluster.lock().run(15_000);
            let placed = reg(1, counters::RX_OOO_PLACED) - placed0;
            let nowin = reg(1, counters::RX_OOO_SW) - nowin0;
            assert_eq!(
                (placed, nowin),
                (2 * n as u64, 2 * EXTRA as u64),
                "round {round}: packets placed out of order, and of those through software recovery"
            );
            let wcs = wait(&w.cq_a, n as usize, 4 * n as u64 * SIZE as u64);
            assert!(wcs.iter().all(|c| c.status == WcStatus::Success && c.wr_id == round), "{wcs:?}");
            nics.cluster.lock().faults(0).clear_rules();
        }
        let stats: rnic::RecoveryStats = w.conns.iter().map(|(qa, _)| qa.recovery_stats()).sum();
        assert_eq!((stats.resends, stats.rewinds, stats.timeouts), (2 * n as u64, 0, 0), "{stats:?}");
        // The responder's host saw each software QP's two packets per round, and needed no command.
        w.ctx_b.progress().unwrap();
        let resp: rnic::RecoveryStats = w.conns.iter().map(|(_, qb)| qb.recovery_stats()).sum();
        assert_eq!(
            (resp.sw_placed, resp.sw_episodes, resp.sw_commands),
            (4 * EXTRA as u64, 2 * EXTRA as u64, 0),
            "{resp:?}"
        );
        // 72 retransmissions decided at once, a 16-deep queue: the library waits for room, none is dropped.
        assert_eq!(reg(0, counters::SQ_REWIND_DROP), 0);
        let mut want = snapshot.clone();
        for s in 0..2 * n as usize {
            want[s * SLOT..s * SLOT + SIZE].copy_from_slice(&pattern::make(SEED, stream(2, 0), SIZE));
        }
        assert_same("pool overflow", &read_all(&dst), &want, SLOT, 2 * n, SIZE);
    }
    assert_no_violations(&nics);
}

/// Software recovery with holes the NIC forgets: the responder lends no
/// window (`set_sr_windows(0)`), and each QP's 8-packet WRITE loses its
/// packets 0 and 3 (and, on every third QP, also 6). The NIC places the
/// rest, reports them to its host and keeps only the most advanced run;
/// when the resent packet 0 is taken, ePSN stops at packet 1, which only
/// the host's bitmap knows was placed, and the host's command moves it on
/// (SRNIC's exit rule decides where). Both sides' slow paths are polled.
/// Every QP gets one resend per hole, no rewind, no timeout, every byte
/// arrives, and the responder's host applied commands.
#[test]
fn software_recovery_moves_epsn_over_holes_the_nic_forgot() {
    const QPS: u32 = 6;
    const PKTS: usize = 8;
    const MSG: usize = PKTS * 1024;
    let nics = pair();
    {
        let w = World::new(&nics, QPS, 4, Mtu::Mtu1024);
        w.ctx_b.set_sr_windows(0).unwrap();
        let src = w.pd_a.reg_mr(MSG, AccessFlags::empty()).unwrap();
        src.write(0, &pattern::make(SEED, stream(3, 0), MSG)).unwrap();
        let slot = MSG + 256;
        let dst = w.pd_b.reg_mr(QPS as usize * slot, AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE).unwrap();
        let snapshot = fill_sentinel(&dst);
        let reg = |nic: usize, r: u32| nics.cluster.lock().read_reg(nic, r).unwrap();
        let nowin0 = reg(1, counters::RX_OOO_SW);
        // Lost: packets 0 and 3 of every QP's message, and 6 of every third QP's (first transmissions only).
        let lost = |qi: usize| if qi.is_multiple_of(3) { vec![0u32, 3, 6] } else { vec![0, 3] };
        let mut seen = std::collections::HashMap::<u32, u32>::new();
        let plan: std::collections::HashMap<u32, Vec<u32>> =
            (0..QPS as usize).map(|qi| (w.conns[qi].1.qp_num(), lost(qi))).collect();
        let total_lost: u32 = (0..QPS as usize).map(|qi| lost(qi).len() as u32).sum();
        nics.cluster.lock().faults(0).drop_matching(
            0,
            total_lost as u64,
            Box::new(move |f: &FrameClass| {
                if f.opcode.is_ack() || f.retransmission {
                    return false;
                }
                let k = seen.entry(f.dqpn).or_default();
                let hit = plan.get(&f.dqpn).is_some_and(|l| l.contains(k));
                *k += 1;
                hit
            }),
        );
        for (qi, (qa, _)) in w.conns.iter().enumerate() {
            let opcode = WrOpcode::RdmaWrite { remote_addr: dst.addr() + (qi * slot) as u64, rkey: dst.rkey() };
            qa.post_send(&SendWr {
                send_flags: rnic::SendFlags::SIGNALED,
                wr_id: qi as u64,
                opcode,
                sg_list: src.sge(0, MSG as u32).into(),
            })
            .unwrap();
        }
        let mut wcs = Vec::new();
        for _ in 0..2_000 {
            wcs.extend(w.cq_a.poll_cq_vec(16).unwrap());
            w.ctx_b.progress().unwrap();
            if wcs.len() == QPS as usize {
                break;
            }
            nics.cluster.lock().run(500);
        }
        assert_eq!(wcs.len(), QPS as usize, "completions: {wcs:?}");
        assert!(wcs.iter().all(|c| c.status == WcStatus::Success), "{wcs:?}");
        w.ctx_b.progress().unwrap();
        let mut sw_placed = 0;
        for (qi, (qa, qb)) in w.conns.iter().enumerate() {
            let (a, b) = (qa.recovery_stats(), qb.recovery_stats());
            let holes = lost(qi).len() as u64;
            assert_eq!((a.resends, a.rewinds, a.timeouts), (holes, 0, 0), "QP {qi} requester: {a:?}");
            // Every packet that arrived ahead of ePSN was placed and reported: the
            // first transmissions past the holes, and resends of later holes that
            // came before ePSN reached them.
            assert!(b.sw_placed >= PKTS as u64 - holes && b.sw_placed < PKTS as u64, "QP {qi} responder: {b:?}");
            assert_eq!(b.sw_episodes, 1, "QP {qi} responder: {b:?}");
            sw_placed += b.sw_placed;
            assert!(b.sw_applied >= 1 && b.sw_applied <= b.sw_commands, "QP {qi} responder: {b:?}");
        }
        assert_eq!(reg(1, counters::RX_OOO_SW) - nowin0, sw_placed);
        assert_eq!(reg(1, counters::REG_ERR), 0, "no software-recovery command was dropped");
        let mut want = snapshot.clone();
        for qi in 0..QPS as usize {
            want[qi * slot..qi * slot + MSG].copy_from_slice(&pattern::make(SEED, stream(3, 0), MSG));
        }
        assert_same("software recovery", &read_all(&dst), &want, slot, QPS, MSG);
    }
    assert_no_violations(&nics);
}

/// A timeout rewinds a QP whose peer holds everything (only its ACKs were
/// lost). The duplicate ACKs of the rewound packets complete its WQEs while
/// the NIC is still resending them, turn by turn beside a busy QP; the
/// application reuses their ring slots at once. The NIC must not send the
/// new WQEs' bytes under the old WQEs' PSNs: it skips ahead to lACK
/// (`SQ_SKIPS`) and sends the new WQEs from their own first PSN.
#[test]
fn a_rewind_skips_wqes_completed_while_it_resends_them() {
    use rnic_tests::Shared;
    use std::sync::Arc;
    // QP 0's messages: A0, A1 (their ACKs lost), then B0, B1 in A0's and A1's
    // ring slots, longer: sent under A0's position they would run past its PSNs.
    const OWN: u32 = 4;
    const LEN: [usize; OWN as usize + 1] = [64 << 10, 64 << 10, 80 << 10, 80 << 10, 64 << 10];
    const GAP: usize = (80 << 10) + 256;
    let nics = pair();
    {
        let w = World::new(&nics, 2, 2, Mtu::Mtu1024);
        let (q0, _) = &w.conns[0];
        let (q1, _) = &w.conns[1];
        let src = w.pd_a.reg_mr(GAP * (OWN as usize + 1), AccessFlags::empty()).unwrap();
        for m in 0..=OWN {
            src.write((m as usize * GAP) as u64, &pattern::make(SEED, stream(0, m), LEN[m as usize])).unwrap();
        }
        let dst =
            w.pd_b.reg_mr(GAP * (OWN as usize + 1), AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE).unwrap();
        let snapshot = fill_sentinel(&dst);
        // Every ACK to QP 0 is lost until the NIC resends (the rewind after the timeout).
        let armed = Arc::new(Shared::new(true));
        let qpn0 = w.conns[0].1.qp_num();
        {
            let mut c = nics.cluster.lock();
            let seen = armed.clone();
            // Watches QP 0's requests, drops none.
            c.faults(0).drop_matching(
                0,
                u64::MAX,
                Box::new(move |f: &FrameClass| {
                    if f.retransmission && f.dqpn == qpn0 {
                        seen.set(false);
                    }
                    false
                }),
            );
            let lose = armed.clone();
            let requester = q0.qp_num();
            c.faults(1).drop_matching(
                0,
                u64::MAX,
                Box::new(move |f: &FrameClass| lose.get() && f.opcode.is_ack() && f.dqpn == requester),
            );
        }
        let post = |qp: &rnic::Qp, m: u32, wr_id: u64| {
            let opcode = WrOpcode::RdmaWrite { remote_addr: dst.addr() + (m as usize * GAP) as u64, rkey: dst.rkey() };
            let sg = src.sge((m as usize * GAP) as u64, LEN[m as usize] as u32);
            qp.post_send(&SendWr { send_flags: rnic::SendFlags::SIGNALED, wr_id, opcode, sg_list: sg.into() }).unwrap();
        };
        post(q0, 0, 0);
        post(q0, 1, 1);
        // QP 1 keeps the scheduler alternating (its message slot is OWN), two WRs in flight.
        post(q1, OWN, 100);
        post(q1, OWN, 101);
        let (mut own, mut next_busy) = (Vec::new(), 102u64);
        let mut busy_out = 2;
        let start = nics.cluster.lock().now();
        while own.len() < OWN as usize || busy_out > 0 {
            for c in w.cq_a.poll_cq_vec(8).unwrap() {
                assert_eq!(c.status, WcStatus::Success, "{c:?}");
                if c.qp_num == q0.qp_num() {
                    // A0 and A1 completed: B0 and B1 take their ring slots at once.
                    if c.wr_id < 2 {
                        post(q0, c.wr_id as u32 + 2, c.wr_id + 2);
                    }
                    own.push(c.wr_id);
                } else {
                    busy_out -= 1;
                    if own.len() < OWN as usize {
                        post(q1, OWN, next_busy);
                        next_busy += 1;
                        busy_out += 1;
                    }
                }
            }
            let now = nics.cluster.lock().now();
            assert!(now - start < 2_000_000, "stalled: QP 0 completed {own:?}, {:?}", q0.recovery_stats());
            w.ctx_a.device().wait().unwrap();
        }
        assert_eq!(own, vec![0, 1, 2, 3], "QP 0's completions, in order");
        assert!(!armed.get(), "the timeout's rewind never resent anything");
        let reg = |nic: usize, r: u32| nics.cluster.lock().read_reg(nic, r).unwrap();
        let stats = q0.recovery_stats();
        assert!(stats.timeouts >= 1 && stats.rewinds >= 1, "{stats:?}");
        let mut want = snapshot.clone();
        for m in 0..=OWN as usize {
            want[m * GAP..m * GAP + LEN[m]].copy_from_slice(&pattern::make(SEED, stream(0, m as u32), LEN[m]));
        }
        assert_same("rewind behind completions", &read_all(&dst), &want, GAP, OWN + 1, 80 << 10);
        assert!(reg(0, counters::SQ_SKIPS) >= 1, "the rewind never reached a completed WQE: {stats:?}");
        assert_eq!((q0.state(), q1.state()), (QpState::Rts, QpState::Rts));
    }
    assert_no_violations(&nics);
}

/// A lost packet and then its resend, on one of 16 QPs sharing the link:
/// the QP's later packets come so far apart that 96 KiB of them take longer
/// than the timeout, so the slow path must find the lost resend in time
/// (`RESEND_AGAIN_CYCLES` after the packet that triggered it) and resend it
/// again before the timeout fires; every byte arrives.
#[test]
fn a_lost_resend_among_16_qps_is_resent_again_before_the_timeout() {
    use rnic_tests::Shared;
    use std::cell::Cell;
    use std::sync::Arc;
    const QPS: u32 = 16;
    const MSGS: u32 = 6;
    const BIG: usize = 64 * 1024;
    let nics = pair();
    {
        let w = World::new(&nics, QPS, MSGS, Mtu::Mtu4096);
        let src = w.pd_a.reg_mr(BIG * MSGS as usize, AccessFlags::empty()).unwrap();
        for m in 0..MSGS {
            src.write(m as u64 * BIG as u64, &pattern::make(SEED, stream(3, m), BIG)).unwrap();
        }
        let slot = BIG + 256;
        let total = slot * (QPS * MSGS) as usize;
        let dst = w.pd_b.reg_mr(total, AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE).unwrap();
        let snapshot = fill_sentinel(&dst);
        // QP 0's 20th packet is lost, and then the first resend of it.
        let target = w.conns[0].1.qp_num();
        let lost = Arc::new(Shared::new(None::<u32>));
        let (seen, l) = (Cell::new(0u32), lost.clone());
        nics.cluster.lock().faults(0).drop_matching(
            0,
            2,
            Box::new(move |f: &FrameClass| {
                if f.opcode.is_ack() || f.dqpn != target {
                    return false;
                }
                if !f.retransmission {
                    seen.set(seen.get() + 1);
                    if seen.get() == 20 {
                        l.set(Some(f.psn));
                        return true;
                    }
                    return false;
                }
                l.get() == Some(f.psn)
            }),
        );
        for m in 0..MSGS {
            for (i, (qa, _)) in w.conns.iter().enumerate() {
                let at = (i * MSGS as usize + m as usize) * slot;
                let opcode = WrOpcode::RdmaWrite { remote_addr: dst.addr() + at as u64, rkey: dst.rkey() };
                qa.post_send(&SendWr {
                    send_flags: rnic::SendFlags::SIGNALED,
                    wr_id: m as u64,
                    opcode,
                    sg_list: src.sge(m as u64 * BIG as u64, BIG as u32).into(),
                })
                .unwrap();
            }
        }
        let wcs = wait(&w.cq_a, (QPS * MSGS) as usize, 4 * total as u64);
        assert!(wcs.iter().all(|c| c.status == WcStatus::Success), "{wcs:?}");
        let mut want = snapshot.clone();
        for i in 0..QPS as usize {
            for m in 0..MSGS as usize {
                let at = (i * MSGS as usize + m) * slot;
                want[at..at + BIG].copy_from_slice(&pattern::make(SEED, stream(3, m as u32), BIG));
            }
        }
        assert_same("lost resend", &read_all(&dst), &want, slot, QPS * MSGS, BIG);
        let dropped: u64 = nics.cluster.lock().stats().links.iter().map(|l| l.dropped).sum();
        assert_eq!(dropped, 2, "the packet and its first resend were lost");
        let stats = w.conns[0].0.recovery_stats();
        assert!(stats.resends_again >= 1, "the lost resend was not resent again: {stats:?}");
        assert_eq!(stats.timeouts, 0, "the timeout fired first: {stats:?}");
    }
    assert_no_violations(&nics);
}

/// The retransmissions `rnic-model`'s selective-repeat sender makes (SRNIC's
/// setting: loss inferred at the first out-of-order arrival, no probe, no
/// timeout) on one path that delivers in order after `delay` packet times
/// each way, when the first transmission of each PSN in `lost` is dropped:
/// the PSNs it resends, in order.
fn model_retransmissions(n_pkts: u32, mtu: u32, lost: &std::collections::BTreeSet<u32>, delay: u64) -> Vec<u32> {
    use rnic_model::reliability::{SrConfig, SrSender, TxKind};
    use rnic_model::sack::{DataMeta, SackReceiver};
    use std::collections::VecDeque;
    let cfg = SrConfig {
        mtu,
        window_pkts: rnic_spec::params::SR_WINDOW_BITS as u32,
        ooo_min_threshold: 0,
        ooo_use_cwnd: false,
        probe_after_ns: 0,
        probe_rtt_limit_ns: 0,
        rto_ns: u64::MAX / 4,
    };
    let mut tx = SrSender::new(cfg, n_pkts as u64 * mtu as u64, 0);
    let mut rx = SackReceiver::new(1);
    let (mut wire, mut acks) = (VecDeque::new(), VecDeque::new());
    let mut sent = std::collections::HashSet::new();
    let mut resent = Vec::new();
    for t in 0u64.. {
        assert!(t < 100 * n_pkts as u64, "the model did not finish: {tx:?}");
        if let Some(p) = tx.next_tx(u64::MAX) {
            if p.kind == TxKind::Retransmit {
                resent.push(p.psn);
            }
            if !(sent.insert(p.psn) && lost.contains(&p.psn)) {
                let d = DataMeta { psn: p.psn, bytes: p.bytes, ack_req: p.ack_req, ts: t, ..Default::default() };
                wire.push_back((t + delay, d));
            }
        }
        while wire.front().is_some_and(|&(at, _)| at <= t) {
            let (_, d) = wire.pop_front().expect("front");
            if let (_, Some((sack, _))) = rx.on_packet(&d) {
                acks.push_back((t + delay, sack));
            }
        }
        while acks.front().is_some_and(|&(at, _)| at <= t) {
            let (_, sack) = acks.pop_front().expect("front");
            tx.on_ack(t, &sack, 0);
        }
        if tx.is_complete() {
            return resent;
        }
    }
    unreachable!()
}

/// The NIC and its slow path against `rnic-model` (issue: the RTL's
/// decisions checked against the model): for the same seeded pattern of
/// lost first transmissions, the PSNs resent are the ones the model's
/// selective-repeat sender resends, in the same order, each once; every
/// completion comes in order with success and every byte arrives.
/// Intended differences, not exercised here: a lost retransmission is
/// resent again by the library once packets 96 KiB (or 40 µs) later are reported
/// placed, where the model waits for a probe or its timeout; a tail loss
/// (no later packet) waits for the NIC's timeout, which rewinds go-back-N
/// where the model resends only the unacknowledged packets; more than 8
/// holes in one NAK rewind.
#[test]
fn selective_repeat_resends_what_the_model_resends() {
    use rnic_tests::Shared;
    use std::collections::BTreeSet;
    use std::sync::Arc;
    const MSGS: u32 = 48;
    const PKTS: u32 = 4;
    const MSG: usize = PKTS as usize * 1024;
    for seed in 0x51u64..0x59 {
        let n = MSGS * PKTS;
        let mut rng = rnic_sim::rng::SplitMix(seed);
        let mut lost = BTreeSet::new();
        while lost.len() < 10 {
            lost.insert(rng.below(n as u64 - 8) as u32);
        }
        let nics = pair();
        {
            let w = World::new(&nics, 1, MSGS, Mtu::Mtu1024);
            let (qa, _) = &w.conns[0];
            let src = w.pd_a.reg_mr(MSG, AccessFlags::empty()).unwrap();
            src.write(0, &pattern::make(SEED, stream(3, seed as u32), MSG)).unwrap();
            let dst = w.pd_b.reg_mr(MSGS as usize * MSG, AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE).unwrap();
            // Link 0 carries NIC0's requests: drop the listed first transmissions, note the resent PSNs.
            let resent = Arc::new(Shared::new(Vec::new()));
            let (log, drop) = (resent.clone(), lost.clone());
            let mut first: Option<u32> = None;
            let mut index = 0u32;
            nics.cluster.lock().faults(0).drop_matching(
                0,
                u64::MAX,
                Box::new(move |f: &FrameClass| {
                    let base = *first.get_or_insert(f.psn);
                    let rel = f.psn.wrapping_sub(base) & 0xFF_FFFF;
                    if f.retransmission {
                        log.borrow_mut().push(rel);
                        return false;
                    }
                    index += 1;
                    drop.contains(&(index - 1))
                }),
            );
            for m in 0..MSGS {
                let remote_addr = dst.addr() + (m as usize * MSG) as u64;
                let opcode = WrOpcode::RdmaWrite { remote_addr, rkey: dst.rkey() };
                qa.post_send(&SendWr {
                    send_flags: rnic::SendFlags::SIGNALED,
                    wr_id: m as u64,
                    opcode,
                    sg_list: src.sge(0, MSG as u32).into(),
                })
                .unwrap();
            }
            let wcs = wait(&w.cq_a, MSGS as usize, 8 * MSGS as u64 * MSG as u64);
            let got: Vec<_> = wcs.iter().map(|c| (c.wr_id, c.status)).collect();
            let want: Vec<_> = (0..MSGS as u64).map(|m| (m, WcStatus::Success)).collect();
            assert_eq!(got, want, "seed {seed:#x}: completions in order");
            let data = read_all(&dst);
            let pat = pattern::make(SEED, stream(3, seed as u32), MSG);
            for m in 0..MSGS as usize {
                assert!(data[m * MSG..(m + 1) * MSG] == pat[..], "seed {seed:#x}: message {m} differs");
            }
            let model = model_retransmissions(n, 1024, &lost, 12);
            let rtl = resent.borrow().clone();
            assert_eq!(rtl, model, "seed {seed:#x}: lost {lost:?}: PSNs resent (NIC, model)");
            assert_eq!(model, lost.iter().copied().collect::<Vec<_>>(), "seed {seed:#x}: the model resends the lost");
            let stats = qa.recovery_stats();
            assert_eq!((stats.resends, stats.resends_again, stats.rewinds, stats.timeouts), (10, 0, 0, 0), "{stats:?}");
        }
        assert_no_violations(&nics);
    }
}
