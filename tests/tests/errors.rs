//! Remote access errors: a WRITE with a bad key or outside the target region
//! completes with REM_ACCESS_ERR, the WRs behind it are flushed, the target
//! memory is untouched, and another QP keeps running meanwhile. An RDMA
//! READ with a bad key, outside its source region or from a region without
//! REMOTE_READ fails the same way, and nothing lands in the requester's
//! buffers. A SEND longer than the receive buffer fails with
//! REM_INV_REQ_ERR the same way.

use rnic::{AccessFlags, Mr, Mtu, QpAttr, QpState, RecvWr, SendWr, WcOpcode, WcStatus, WrOpcode};
use rnic_tests::{assert_no_violations, assert_same, fill_sentinel, pair, read_all, stream, wait, World, SEED};
use rnic_tools::pattern;

const LEN: usize = 4096;
const MSG: u32 = 256;

/// How the bad QP's first WRITE is wrong.
#[derive(Debug, Clone, Copy)]
enum Fault {
    /// The target MR's key with a different tag.
    BadKeyTag,
    /// The key of an MR that was deregistered (its index now holds another MR).
    StaleKey,
    /// A key whose MR index was never registered.
    UnknownIndex,
    /// Ends one byte past the target region.
    PastEnd,
    /// Starts one byte before the target region.
    BeforeStart,
    /// The target region lacks the operation's remote access right:
    /// REMOTE_WRITE for a WRITE, REMOTE_READ for a READ (it has the other).
    NoRemoteAccess,
}

fn access_error(fault: Fault) {
    let nics = pair();
    {
        let w = World::new(&nics, 2, 8, Mtu::Mtu1024);
        let (bad, _) = &w.conns[0];
        let (good, _) = &w.conns[1];
        let stale = w.pd_b.reg_mr(LEN, AccessFlags::REMOTE_WRITE).unwrap();
        let stale_key = stale.rkey();
        stale.dereg_mr().unwrap();
        let target_access = match fault {
            Fault::NoRemoteAccess => AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_READ,
            _ => AccessFlags::REMOTE_WRITE | AccessFlags::LOCAL_WRITE,
        };
        let target: Mr = w.pd_b.reg_mr(LEN, target_access).unwrap();
        let good_dst = w.pd_b.reg_mr(LEN * 8, AccessFlags::REMOTE_WRITE).unwrap();
        let src = w.pd_a.reg_mr(LEN * 8, AccessFlags::empty()).unwrap();
        for m in 0..8 {
            src.write(m * LEN as u64, &pattern::make(SEED, stream(0, m as u32), LEN)).unwrap();
        }
        let snapshot = fill_sentinel(&target);
        let good_before = fill_sentinel(&good_dst);

        let (addr, rkey) = match fault {
            Fault::BadKeyTag => (target.addr(), target.rkey() ^ 0x40),
            Fault::StaleKey => (target.addr(), stale_key),
            Fault::UnknownIndex => {
                (target.addr(), rnic_spec::regs::mr_key(rnic_spec::params::NUM_MRS as u32 - 1, 0x5A))
            }
            Fault::PastEnd => (target.addr() + (LEN as u64 - MSG as u64 + 1), target.rkey()),
            Fault::BeforeStart => (target.addr() - 1, target.rkey()),
            Fault::NoRemoteAccess => (target.addr(), target.rkey()),
        };
        if matches!(fault, Fault::StaleKey) {
            assert_ne!(stale_key, target.rkey(), "the stale key must differ from the live one");
        }
        // The bad WRITE, then two valid-looking WRITEs into the same region: they must be flushed, not executed.
        let bad_wrs = [
            SendWr {
                send_flags: rnic::SendFlags::SIGNALED,
                wr_id: 100,
                opcode: WrOpcode::RdmaWrite { remote_addr: addr, rkey },
                sg_list: src.sge(0, MSG).into(),
            },
            SendWr {
                send_flags: rnic::SendFlags::SIGNALED,
                wr_id: 101,
                opcode: WrOpcode::RdmaWrite { remote_addr: target.addr(), rkey: target.rkey() },
                sg_list: src.sge(0, MSG).into(),
            },
            SendWr {
                send_flags: rnic::SendFlags::SIGNALED,
                wr_id: 102,
                opcode: WrOpcode::RdmaWrite { remote_addr: target.addr() + 512, rkey: target.rkey() },
                sg_list: src.sge(0, MSG).into(),
            },
        ];
        let good_wr = |m: u64| SendWr {
            send_flags: rnic::SendFlags::SIGNALED,
            wr_id: m,
            opcode: WrOpcode::RdmaWrite { remote_addr: good_dst.addr() + m * LEN as u64, rkey: good_dst.rkey() },
            sg_list: src.sge(m * LEN as u64, LEN as u32).into(),
        };
        bad.post_send_batch(&bad_wrs).unwrap();
        good.post_send_batch(&[good_wr(0), good_wr(1), good_wr(2), good_wr(3)]).unwrap();

        let wcs = wait(&w.cq_a, 7, 8 * LEN as u64);
        let on_bad: Vec<_> = wcs.iter().filter(|c| c.qp_num == bad.qp_num()).map(|c| (c.wr_id, c.status)).collect();
        assert_eq!(
            on_bad,
            vec![(100, WcStatus::RemAccessErr), (101, WcStatus::WrFlushErr), (102, WcStatus::WrFlushErr)],
            "{fault:?}: completions of the bad QP"
        );
        let first = wcs.iter().find(|c| c.wr_id == 100).unwrap();
        assert_eq!(first.opcode, WcOpcode::RdmaWrite);
        // The NIC's own status code, as ibverbs' vendor_err; a send completion names no source QP.
        assert_eq!((first.vendor_err, first.src_qp), (rnic_spec::desc::cqe_status::REM_ACCESS_ERR as u32, 0));
        assert!(wcs.iter().filter(|c| c.wr_id == 101 || c.wr_id == 102).all(|c| c.vendor_err == 0));
        let on_good: Vec<_> = wcs.iter().filter(|c| c.qp_num == good.qp_num()).collect();
        assert_eq!(on_good.len(), 4, "{fault:?}: good QP completions {on_good:?}");
        assert!(
            on_good.iter().enumerate().all(|(i, c)| c.wr_id == i as u64 && c.status == WcStatus::Success),
            "{on_good:?}"
        );
        assert_eq!(bad.state(), QpState::Error);
        assert_eq!(good.state(), QpState::Rts);

        // The good QP keeps running after the other QP failed.
        good.post_send_batch(&[good_wr(4), good_wr(5)]).unwrap();
        let more = wait(&w.cq_a, 2, 2 * LEN as u64);
        assert!(more.iter().all(|c| c.status == WcStatus::Success && c.qp_num == good.qp_num()), "{more:?}");

        // Posting on the failed QP completes at once with a flush.
        bad.post_send(&bad_wrs[1]).unwrap();
        assert_eq!(
            w.cq_a.poll_cq_vec(4).unwrap().iter().map(|c| (c.wr_id, c.status)).collect::<Vec<_>>(),
            vec![(101, WcStatus::WrFlushErr)]
        );

        assert_same(&format!("{fault:?}: target region"), &read_all(&target), &snapshot, LEN, 1, 0);
        let mut want = good_before;
        for m in 0..6 {
            let o = m * LEN;
            want[o..o + LEN].copy_from_slice(&pattern::make(SEED, stream(0, m as u32), LEN));
        }
        assert_same(&format!("{fault:?}: good QP's destination"), &read_all(&good_dst), &want, LEN, 8, LEN);
    }
    assert_no_violations(&nics);
}

#[test]
fn write_bad_key_tag() {
    access_error(Fault::BadKeyTag);
}

#[test]
fn write_stale_key_after_dereg() {
    access_error(Fault::StaleKey);
}

#[test]
fn write_unknown_mr_index() {
    access_error(Fault::UnknownIndex);
}

#[test]
fn write_past_end_of_region() {
    access_error(Fault::PastEnd);
}

#[test]
fn write_before_start_of_region() {
    access_error(Fault::BeforeStart);
}

#[test]
fn write_without_remote_write_permission() {
    access_error(Fault::NoRemoteAccess);
}

/// The bad QP's first READ (`len` bytes) is wrong by `fault`; the two
/// READs behind it are valid and must be flushed without landing. Another
/// QP READs meanwhile and goes on after the failure.
fn read_access_error(fault: Fault, len: u32) {
    let nics = pair();
    {
        let w = World::new(&nics, 2, 8, Mtu::Mtu1024);
        let (bad, _) = &w.conns[0];
        let (good, _) = &w.conns[1];
        let stale = w.pd_b.reg_mr(LEN, AccessFlags::REMOTE_READ).unwrap();
        let stale_key = stale.rkey();
        stale.dereg_mr().unwrap();
        let target_access = match fault {
            Fault::NoRemoteAccess => AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
            _ => AccessFlags::REMOTE_READ,
        };
        // The bad READ's source: bytes that must not reach the requester.
        let target: Mr = w.pd_b.reg_mr(LEN, target_access).unwrap();
        let target_data = pattern::make(SEED, stream(5, 0), LEN);
        target.write(0, &target_data).unwrap();
        let good_src = w.pd_b.reg_mr(LEN * 8, AccessFlags::REMOTE_READ).unwrap();
        for m in 0..8 {
            good_src.write(m * LEN as u64, &pattern::make(SEED, stream(0, m as u32), LEN)).unwrap();
        }
        let dst = w.pd_a.reg_mr(LEN * 3, AccessFlags::LOCAL_WRITE).unwrap();
        let good_dst = w.pd_a.reg_mr(LEN * 8, AccessFlags::LOCAL_WRITE).unwrap();
        let snapshot = fill_sentinel(&dst);
        let good_before = fill_sentinel(&good_dst);

        let (addr, rkey) = match fault {
            Fault::BadKeyTag => (target.addr(), target.rkey() ^ 0x40),
            Fault::StaleKey => (target.addr(), stale_key),
            Fault::UnknownIndex => {
                (target.addr(), rnic_spec::regs::mr_key(rnic_spec::params::NUM_MRS as u32 - 1, 0x5A))
            }
            Fault::PastEnd => (target.addr() + (LEN as u64 - len as u64 + 1), target.rkey()),
            Fault::BeforeStart => (target.addr() - 1, target.rkey()),
            Fault::NoRemoteAccess => (target.addr(), target.rkey()),
        };
        if matches!(fault, Fault::StaleKey) {
            assert_ne!(stale_key, target.rkey(), "the stale key must differ from the live one");
        }
        let read = |wr_id, remote_addr, rkey, off: u64| SendWr {
            send_flags: rnic::SendFlags::SIGNALED,
            wr_id,
            opcode: WrOpcode::RdmaRead { remote_addr, rkey },
            sg_list: dst.sge(off, len).into(),
        };
        let bad_wrs = [
            read(100, addr, rkey, 0),
            read(101, good_src.addr(), good_src.rkey(), LEN as u64),
            read(102, good_src.addr() + 512, good_src.rkey(), 2 * LEN as u64),
        ];
        let good_wr = |m: u64| SendWr {
            send_flags: rnic::SendFlags::SIGNALED,
            wr_id: m,
            opcode: WrOpcode::RdmaRead { remote_addr: good_src.addr() + m * LEN as u64, rkey: good_src.rkey() },
            sg_list: good_dst.sge(m * LEN as u64, LEN as u32).into(),
        };
        bad.post_send_batch(&bad_wrs).unwrap();
        good.post_send_batch(&[good_wr(0), good_wr(1), good_wr(2), good_wr(3)]).unwrap();

        let wcs = wait(&w.cq_a, 7, 8 * LEN as u64);
        let on_bad: Vec<_> =
            wcs.iter().filter(|c| c.qp_num == bad.qp_num()).map(|c| (c.wr_id, c.status, c.opcode)).collect();
        assert_eq!(
            on_bad,
            vec![
                (100, WcStatus::RemAccessErr, WcOpcode::RdmaRead),
                (101, WcStatus::WrFlushErr, WcOpcode::RdmaRead),
                (102, WcStatus::WrFlushErr, WcOpcode::RdmaRead)
            ],
            "{fault:?}: completions of the bad QP"
        );
        let on_good: Vec<_> = wcs.iter().filter(|c| c.qp_num == good.qp_num()).collect();
        assert_eq!(on_good.len(), 4, "{fault:?}: good QP completions {on_good:?}");
        assert!(
            on_good.iter().enumerate().all(|(i, c)| c.wr_id == i as u64
                && c.status == WcStatus::Success
                && c.opcode == WcOpcode::RdmaRead
                && c.byte_len == LEN as u32),
            "{on_good:?}"
        );
        assert_eq!(bad.state(), QpState::Error);
        assert_eq!(good.state(), QpState::Rts);

        // The good QP keeps running after the other QP failed.
        good.post_send_batch(&[good_wr(4), good_wr(5)]).unwrap();
        let more = wait(&w.cq_a, 2, 2 * LEN as u64);
        assert!(more.iter().all(|c| c.status == WcStatus::Success && c.qp_num == good.qp_num()), "{more:?}");

        // Posting on the failed QP completes at once with a flush.
        bad.post_send(&bad_wrs[1]).unwrap();
        assert_eq!(
            w.cq_a.poll_cq_vec(4).unwrap().iter().map(|c| (c.wr_id, c.status)).collect::<Vec<_>>(),
            vec![(101, WcStatus::WrFlushErr)]
        );

        nics.cluster.lock().run(20_000);
        assert_same(&format!("{fault:?}: the bad QP's READ destinations"), &read_all(&dst), &snapshot, LEN, 3, 0);
        assert_same(&format!("{fault:?}: the bad READ's source"), &read_all(&target), &target_data, LEN, 1, 0);
        let mut want = good_before;
        for m in 0..6 {
            let o = m * LEN;
            want[o..o + LEN].copy_from_slice(&pattern::make(SEED, stream(0, m as u32), LEN));
        }
        assert_same(&format!("{fault:?}: good QP's destination"), &read_all(&good_dst), &want, LEN, 8, LEN);
    }
    assert_no_violations(&nics);
}

#[test]
fn read_bad_key_tag() {
    read_access_error(Fault::BadKeyTag, MSG);
}

#[test]
fn read_stale_key_after_dereg() {
    read_access_error(Fault::StaleKey, MSG);
}

#[test]
fn read_unknown_mr_index() {
    read_access_error(Fault::UnknownIndex, MSG);
}

#[test]
fn read_past_end_of_region() {
    read_access_error(Fault::PastEnd, MSG);
}

/// A READ of several response packets whose last byte is past the region:
/// refused as a whole, no packet of it lands.
#[test]
fn read_of_several_packets_past_end_of_region() {
    read_access_error(Fault::PastEnd, 3 * 1024 + 5);
}

#[test]
fn read_before_start_of_region() {
    read_access_error(Fault::BeforeStart, MSG);
}

/// The source region allows REMOTE_WRITE but not REMOTE_READ.
#[test]
fn read_without_remote_read_permission() {
    read_access_error(Fault::NoRemoteAccess, MSG);
}

#[test]
fn send_longer_than_receive_buffer() {
    let nics = pair();
    {
        let w = World::new(&nics, 2, 8, Mtu::Mtu1024);
        let (bad_a, bad_b) = &w.conns[0];
        let (good_a, good_b) = &w.conns[1];
        let src = w.pd_a.reg_mr(LEN * 4, AccessFlags::empty()).unwrap();
        for m in 0..4 {
            src.write(m * LEN as u64, &pattern::make(SEED, stream(1, m as u32), LEN)).unwrap();
        }
        // The bad QP's receive buffer (1000 bytes) sits inside a region whose every other byte must stay untouched.
        let rbuf = w.pd_b.reg_mr(LEN, AccessFlags::LOCAL_WRITE).unwrap();
        let snapshot = fill_sentinel(&rbuf);
        let good_dst = w.pd_b.reg_mr(LEN * 4, AccessFlags::LOCAL_WRITE).unwrap();
        bad_b.post_recv(&RecvWr { wr_id: 50, sg_list: &[rbuf.sge(1024, 1000)] }).unwrap();
        for m in 0..3 {
            good_b.post_recv(&RecvWr { wr_id: m, sg_list: &[good_dst.sge(m * LEN as u64, LEN as u32)] }).unwrap();
        }
        bad_a
            .post_send_batch(&[
                SendWr {
                    send_flags: rnic::SendFlags::SIGNALED,
                    wr_id: 200,
                    opcode: WrOpcode::Send,
                    sg_list: src.sge(0, 3000).into(),
                },
                SendWr {
                    send_flags: rnic::SendFlags::SIGNALED,
                    wr_id: 201,
                    opcode: WrOpcode::Send,
                    sg_list: src.sge(0, 10).into(),
                },
            ])
            .unwrap();
        let good: Vec<SendWr> = (0..3)
            .map(|m| SendWr {
                send_flags: rnic::SendFlags::SIGNALED,
                wr_id: m,
                opcode: WrOpcode::Send,
                sg_list: src.sge(m * LEN as u64, LEN as u32).into(),
            })
            .collect();
        good_a.post_send_batch(&good).unwrap();
        let wcs = wait(&w.cq_a, 5, 4 * LEN as u64);
        let on_bad: Vec<_> = wcs.iter().filter(|c| c.qp_num == bad_a.qp_num()).map(|c| (c.wr_id, c.status)).collect();
        assert_eq!(on_bad, vec![(200, WcStatus::RemInvReqErr), (201, WcStatus::WrFlushErr)], "{wcs:?}");
        assert!(wcs.iter().filter(|c| c.qp_num == good_a.qp_num()).all(|c| c.status == WcStatus::Success), "{wcs:?}");
        assert_eq!(bad_a.state(), QpState::Error);
        // The responder may also complete the bad receive in error (LOC_LEN_ERR, as IB specifies); nothing else.
        let mut recvs = Vec::new();
        while recvs.iter().filter(|c: &&rnic::WorkCompletion| c.qp_num == good_b.qp_num()).count() < 3 {
            recvs.extend(wait(&w.cq_b, 1, 3 * LEN as u64));
        }
        for c in recvs.iter().filter(|c| c.qp_num == bad_b.qp_num()) {
            assert!(matches!(c.status, WcStatus::LocLenErr | WcStatus::WrFlushErr), "bad receive completion {c:?}");
        }
        let good_recvs: Vec<_> =
            recvs.iter().filter(|c| c.qp_num == good_b.qp_num()).map(|c| (c.wr_id, c.status, c.byte_len)).collect();
        assert_eq!(good_recvs, (0..3).map(|m| (m, WcStatus::Success, LEN as u32)).collect::<Vec<_>>());
        // Bytes past the receive buffer must never be written, whatever the responder does with the rest.
        let got = read_all(&rbuf);
        assert_same("bytes before the receive buffer", &got[..1024], &snapshot[..1024], LEN, 1, 0);
        assert_same("bytes after the receive buffer", &got[2024..], &snapshot[2024..], LEN, 1, 0);
        for m in 0..3 {
            let mut b = vec![0u8; LEN];
            good_dst.read(m * LEN as u64, &mut b).unwrap();
            assert_eq!(pattern::first_mismatch(SEED, stream(1, m as u32), &b), None, "good QP message {m}");
        }
    }
    assert_no_violations(&nics);
}

/// With `rnr_retry` 0 the first RNR NAK fails the WR (ibverbs' semantics).
#[test]
fn send_without_posted_receive_gets_rnr() {
    let nics = pair();
    {
        let w = World::new(&nics, 2, 8, Mtu::Mtu4096);
        let (bad_a, _bad_b) = &w.conns[0];
        let (good_a, good_b) = &w.conns[1];
        bad_a.modify(&QpAttr { qp_state: QpState::Rts, rnr_retry: Some(0), ..Default::default() }).unwrap();
        let src = w.pd_a.reg_mr(LEN * 2, AccessFlags::empty()).unwrap();
        src.write(0, &pattern::make(SEED, stream(2, 0), LEN)).unwrap();
        let good_dst = w.pd_b.reg_mr(LEN, AccessFlags::LOCAL_WRITE).unwrap();
        let snapshot = fill_sentinel(&good_dst);
        // The bad QP's peer has no receive WQE posted: the responder answers RNR.
        bad_a
            .post_send_batch(&[
                SendWr {
                    send_flags: rnic::SendFlags::SIGNALED,
                    wr_id: 300,
                    opcode: WrOpcode::Send,
                    sg_list: src.sge(0, 100).into(),
                },
                SendWr {
                    send_flags: rnic::SendFlags::SIGNALED,
                    wr_id: 301,
                    opcode: WrOpcode::Send,
                    sg_list: src.sge(0, 10).into(),
                },
            ])
            .unwrap();
        good_b.post_recv(&RecvWr { wr_id: 7, sg_list: &[good_dst.sge(0, LEN as u32)] }).unwrap();
        good_a
            .post_send(&SendWr {
                send_flags: rnic::SendFlags::SIGNALED,
                wr_id: 8,
                opcode: WrOpcode::Send,
                sg_list: src.sge(0, LEN as u32).into(),
            })
            .unwrap();
        let wcs = wait(&w.cq_a, 3, 2 * LEN as u64);
        let on_bad: Vec<_> = wcs.iter().filter(|c| c.qp_num == bad_a.qp_num()).map(|c| (c.wr_id, c.status)).collect();
        assert_eq!(on_bad, vec![(300, WcStatus::RnrRetryExcErr), (301, WcStatus::WrFlushErr)], "{wcs:?}");
        assert_eq!(bad_a.state(), QpState::Error);
        let on_good: Vec<_> = wcs.iter().filter(|c| c.qp_num == good_a.qp_num()).map(|c| (c.wr_id, c.status)).collect();
        assert_eq!(on_good, vec![(8, WcStatus::Success)], "{wcs:?}");
        let r = wait(&w.cq_b, 1, LEN as u64);
        assert_eq!(
            (r[0].wr_id, r[0].status, r[0].byte_len, r[0].opcode),
            (7, WcStatus::Success, LEN as u32, WcOpcode::Recv)
        );
        let got = read_all(&good_dst);
        assert_eq!(pattern::first_mismatch(SEED, stream(2, 0), &got), None);
        assert_ne!(got, snapshot);
    }
    assert_no_violations(&nics);
}

/// An ACK whose MSN covers WQEs never posted (forged or corrupted in a way
/// the ICRC cannot catch) completes nothing and is counted; a stale ACK is
/// ignored; the QP keeps working.
#[test]
fn ack_for_unposted_wqes_is_ignored() {
    use rnic_spec::regs::counters;
    use rnic_spec::wire::{opcode, syndrome, Frame};
    let nics = pair();
    {
        let w = World::new(&nics, 1, 8, Mtu::Mtu4096);
        let (qa, qb) = &w.conns[0];
        let src = w.pd_a.reg_mr(LEN, AccessFlags::empty()).unwrap();
        src.write(0, &pattern::make(SEED, stream(3, 0), LEN)).unwrap();
        let dst = w.pd_b.reg_mr(LEN * 2, AccessFlags::LOCAL_WRITE).unwrap();
        for m in 0..2u64 {
            qb.post_recv(&RecvWr { wr_id: m, sg_list: &[dst.sge(m * LEN as u64, LEN as u32)] }).unwrap();
        }
        qa.post_send(&SendWr {
            send_flags: rnic::SendFlags::SIGNALED,
            wr_id: 1,
            opcode: WrOpcode::Send,
            sg_list: src.sge(0, LEN as u32).into(),
        })
        .unwrap();
        let wcs = wait(&w.cq_a, 1, LEN as u64);
        assert_eq!((wcs[0].wr_id, wcs[0].status), (1, WcStatus::Success));
        let hdr_err = |n: &rnic_tests::Nics| n.cluster.lock().read_reg(0, counters::RX_HDR_ERR).unwrap();
        let before = hdr_err(&nics);
        let forged = |msn: u32, syn: u8| {
            Frame {
                dst_mac: rnic_sim::mac_of(0),
                src_mac: rnic_sim::mac_of(1),
                src_ip: u32::from_be_bytes(rnic_sim::ip_of(1)),
                dst_ip: u32::from_be_bytes(rnic_sim::ip_of(0)),
                sport: 0xC000,
                opcode: opcode::ACK,
                dqpn: qa.qp_num(),
                syndrome: syn,
                msn,
                ..Default::default()
            }
            .encode()
        };
        // One WQE was posted and completed (MSN 1): MSN 5 and a NAK for MSN 1 name WQEs never posted; MSN 0 is stale.
        for (msn, syn) in [(5, syndrome::ACK), (1, syndrome::NAK_REM_ACCESS), (0, syndrome::ACK)] {
            nics.cluster.lock().inject_frame(0, &forged(msn, syn));
        }
        nics.cluster.lock().run(20_000);
        assert!(w.cq_a.poll_cq_vec(16).unwrap().is_empty(), "a forged ACK must complete nothing");
        assert_eq!(hdr_err(&nics) - before, 2, "the two ACKs beyond the posted WQEs are counted");
        assert_eq!(qa.state(), QpState::Rts);
        // The QP still works: the next SEND completes and lands intact.
        qa.post_send(&SendWr {
            send_flags: rnic::SendFlags::SIGNALED,
            wr_id: 2,
            opcode: WrOpcode::Send,
            sg_list: src.sge(0, LEN as u32).into(),
        })
        .unwrap();
        let wcs = wait(&w.cq_a, 1, LEN as u64);
        assert_eq!((wcs[0].wr_id, wcs[0].status), (2, WcStatus::Success));
        let r = wait(&w.cq_b, 2, 2 * LEN as u64);
        assert!(r.iter().all(|c| c.status == WcStatus::Success), "{r:?}");
        let got = read_all(&dst);
        for m in 0..2 {
            assert_eq!(pattern::first_mismatch(SEED, stream(3, 0), &got[m * LEN..(m + 1) * LEN]), None, "message {m}");
        }
    }
    assert_no_violations(&nics);
}

/// A WRITE whose only packet is corrupted on the wire is dropped at the RX
/// front end (ICRC) before any byte reaches host memory, and counted.
/// Retransmission is not implemented yet, so the WRITE does not complete;
/// this test checks only that nothing of the bad frame was written.
#[test]
fn corrupted_frame_never_reaches_memory() {
    use rnic_spec::regs::counters;
    use rnic_spec::wire::HDR_LEN;
    let nics = pair();
    {
        let w = World::new(&nics, 1, 8, Mtu::Mtu4096);
        let (qa, _qb) = &w.conns[0];
        let src = w.pd_a.reg_mr(LEN, AccessFlags::empty()).unwrap();
        src.write(0, &pattern::make(SEED, stream(4, 0), LEN)).unwrap();
        let dst = w.pd_b.reg_mr(LEN, AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE).unwrap();
        let snapshot = fill_sentinel(&dst);
        let icrc_err = |n: &rnic_tests::Nics| n.cluster.lock().read_reg(1, counters::RX_ICRC_ERR).unwrap();
        let before = icrc_err(&nics);
        // One payload byte of the next frame NIC0 sends is flipped.
        nics.cluster.lock().faults(0).corrupt_next(HDR_LEN + 100, 0x20);
        qa.post_send(&SendWr {
            send_flags: rnic::SendFlags::SIGNALED,
            wr_id: 1,
            opcode: WrOpcode::RdmaWrite { remote_addr: dst.addr(), rkey: dst.rkey() },
            sg_list: src.sge(0, LEN as u32).into(),
        })
        .unwrap();
        nics.cluster.lock().run(20_000);
        assert_eq!(icrc_err(&nics) - before, 1, "the corrupted frame is counted as an ICRC error");
        assert_same("destination of the corrupted WRITE", &read_all(&dst), &snapshot, LEN, 1, LEN);
    }
    assert_no_violations(&nics);
}
