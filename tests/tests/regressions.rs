//! Regressions of the defects adversarial testing found in the data path
//! (each test failed on the code before its fix): message sizes whose last
//! packet carries 58-60 bytes mod 64, doorbells of many QPs at once, MRs
//! deregistered while the NIC uses them, a receive WQE the NIC may not write
//! through. Frame-level defects (lengths, pad, PSN_OFFSET overflow, header
//! checks) are covered by the receive-path fuzzer (`fuzz.rs`).

use rnic::{AccessFlags, Mtu, QpState, RecvWr, SendWr, WcOpcode, WcStatus, WrOpcode};
use rnic_tests::{
    assert_no_violations, fill_sentinel, pair, read_all, stream, transfer, transfer_in, wait, Op, World, SEED,
};
use rnic_tools::pattern;

/// Sizes whose last packet leaves 58, 59 or 60 bytes in its last 64-byte
/// beat once pad and ICRC are added (the responder freed one ring slot too
/// many), with their neighbours.
#[test]
fn last_packet_residues_58_to_60() {
    for (mtu, sizes) in
        [(Mtu::Mtu4096, &[57usize, 58, 59, 60, 61, 124, 4092, 4096 + 60][..]), (Mtu::Mtu1024, &[2044, 1024 + 59][..])]
    {
        for &size in sizes {
            for op in [Op::Write, Op::Send] {
                transfer(op, size, 2, 3, mtu);
            }
        }
    }
}

/// 64 QPs ring their doorbells in the same few cycles: every one is served
/// (the doorbell queue used to hold 16 and drop the rest).
#[test]
fn doorbells_of_64_qps_at_once() {
    transfer(Op::Write, 4096, 64, 3, Mtu::Mtu4096);
}

/// Every QP the NIC holds, up to the highest QPN, sends and is verified.
#[test]
fn every_qpn_up_to_the_highest() {
    // QPNs 0 and 1 are reserved (as in IB), so QPNs 2..=255 are all the QPs there are.
    let n = rnic_spec::params::NUM_QPS as u32 - 2;
    transfer(Op::Send, 200, n, 1, Mtu::Mtu256);
}

/// A QP whose message is half sent waits for its next turn for several
/// retransmission timeouts (many QPs of long messages share the link), with
/// every packet it sent acknowledged: nothing is in flight, so it is not
/// timed out. The timeout used to fire, rewind the message to its start, and
/// the QP's next turn resent the same first packets; `rnic-perf write_bw -s
/// 64K -q 252` (100 us timeout, about 330 us between a QP's turns) completed
/// no message at all.
#[test]
fn a_qp_waiting_for_its_turn_with_every_packet_answered_is_not_timed_out() {
    let nics = pair();
    // A 20 us timeout; 48 QPs' 16 KiB turns take about 63 us at 100 Gb/s.
    for c in &nics.ctxs {
        c.set_retransmit_timeout(5_000).unwrap();
    }
    {
        let w = World::new(&nics, 48, 3, Mtu::Mtu4096);
        transfer_in(&w, Op::Write, 64 * 1024, 3);
        let rec: rnic::RecoveryStats = w.conns.iter().map(|c| c.0.recovery_stats()).sum();
        assert_eq!((rec.timeouts, rec.rewinds), (0, 0), "{rec:?}");
    }
    assert_no_violations(&nics);
}

const BIG: usize = 1 << 20;

/// The length of the prefix of `data` that a WRITE stopped midway placed in
/// `dst`; past it, whole 4 KiB packets are either there or not (a packet
/// being placed may match by chance), then `dst` must hold its `sentinel`.
fn placed_prefix(dst: &rnic::Mr, data: &[u8], sentinel: &[u8]) -> usize {
    let got = read_all(dst);
    let n = got.iter().zip(data).take_while(|(g, d)| g == d).count();
    let tail = n.div_ceil(4096) * 4096;
    assert!(got[tail..] == sentinel[tail..], "bytes beyond the prefix of the message changed");
    n
}

/// Deregistering the target MR of a WRITE in flight fences the NIC: no byte
/// lands after `dereg_mr` returns (a new MR over the same memory stays
/// untouched) and the WRITE completes with REM_ACCESS_ERR, never Success.
#[test]
fn dereg_target_mr_during_write() {
    let nics = pair();
    {
        let w = World::new(&nics, 1, 4, Mtu::Mtu4096);
        let (a, _) = &w.conns[0];
        let src = w.pd_a.reg_mr(BIG, AccessFlags::empty()).unwrap();
        src.write(0, &pattern::make(SEED, stream(0, 0), BIG)).unwrap();
        let target = w.pd_b.reg_mr(BIG, AccessFlags::REMOTE_WRITE | AccessFlags::LOCAL_WRITE).unwrap();
        fill_sentinel(&target);
        let (addr, rkey) = (target.addr(), target.rkey());
        a.post_send(&SendWr {
            send_flags: rnic::SendFlags::SIGNALED,
            wr_id: 7,
            opcode: WrOpcode::RdmaWrite { remote_addr: addr, rkey },
            sg_list: src.sge(0, BIG as u32).into(),
        })
        .unwrap();
        // Let a part of the message land, then pull the region away.
        nics.cluster.lock().run(8_000);
        let old_bus = target.bus_addr();
        target.dereg_mr().unwrap();
        let reuse = w.pd_b.reg_mr(BIG, AccessFlags::REMOTE_WRITE | AccessFlags::LOCAL_WRITE).unwrap();
        assert_eq!(reuse.bus_addr(), old_bus, "the test needs the new MR over the freed memory");
        let before = fill_sentinel(&reuse);
        let wcs = wait(&w.cq_a, 1, BIG as u64);
        assert_eq!((wcs[0].wr_id, wcs[0].status), (7, WcStatus::RemAccessErr), "{wcs:?}");
        assert_eq!(a.state(), QpState::Error);
        nics.cluster.lock().run(20_000);
        assert!(
            read_all(&reuse) == before,
            "bytes of the deregistered MR's WRITE landed in the next MR over that memory"
        );
    }
    assert_no_violations(&nics);
}

/// Deregistering the source MR of a WRITE in flight: the NIC stops reading
/// it (a read of freed memory is a DMA violation), the WRITE completes with
/// LOC_PROT_ERR, and what reached the target is a prefix of the message.
#[test]
fn dereg_source_mr_during_write() {
    let nics = pair();
    {
        let w = World::new(&nics, 1, 4, Mtu::Mtu4096);
        let (a, _) = &w.conns[0];
        let src = w.pd_a.reg_mr(BIG, AccessFlags::empty()).unwrap();
        let data = pattern::make(SEED, stream(0, 1), BIG);
        src.write(0, &data).unwrap();
        let dst = w.pd_b.reg_mr(BIG, AccessFlags::REMOTE_WRITE | AccessFlags::LOCAL_WRITE).unwrap();
        let sentinel = fill_sentinel(&dst);
        a.post_send(&SendWr {
            send_flags: rnic::SendFlags::SIGNALED,
            wr_id: 9,
            opcode: WrOpcode::RdmaWrite { remote_addr: dst.addr(), rkey: dst.rkey() },
            sg_list: src.sge(0, BIG as u32).into(),
        })
        .unwrap();
        nics.cluster.lock().run(8_000);
        src.dereg_mr().unwrap();
        let wcs = wait(&w.cq_a, 1, BIG as u64);
        assert_eq!((wcs[0].wr_id, wcs[0].status), (9, WcStatus::LocProtErr), "{wcs:?}");
        nics.cluster.lock().run(20_000);
        let n = placed_prefix(&dst, &data, &sentinel);
        assert!(n < BIG, "the whole message arrived although its source was deregistered");
    }
    assert_no_violations(&nics);
}

/// Deregistering the MR of a gathered WRITE's second entry while the NIC
/// still sends from the first: the WRITE completes with LOC_PROT_ERR, no byte
/// of the second entry reaches the target (none is read from freed memory:
/// that would be a DMA violation), and the target past the placed prefix
/// keeps its sentinel.
#[test]
fn dereg_second_entry_mr_during_gathered_write() {
    let half = BIG / 2;
    let nics = pair();
    {
        let w = World::new(&nics, 1, 4, Mtu::Mtu4096);
        let (a, _) = &w.conns[0];
        let data = pattern::make(SEED, stream(0, 3), BIG);
        let src0 = w.pd_a.reg_mr(half, AccessFlags::empty()).unwrap();
        src0.write(0, &data[..half]).unwrap();
        let src1 = w.pd_a.reg_mr(half, AccessFlags::empty()).unwrap();
        src1.write(0, &data[half..]).unwrap();
        let dst = w.pd_b.reg_mr(BIG, AccessFlags::REMOTE_WRITE | AccessFlags::LOCAL_WRITE).unwrap();
        let sentinel = fill_sentinel(&dst);
        a.post_send(&SendWr {
            send_flags: rnic::SendFlags::SIGNALED,
            wr_id: 11,
            opcode: WrOpcode::RdmaWrite { remote_addr: dst.addr(), rkey: dst.rkey() },
            sg_list: [src0.sge(0, half as u32), src1.sge(0, half as u32)].into(),
        })
        .unwrap();
        // About 380 KB of the first entry's 512 KiB have gone by then.
        nics.cluster.lock().run(8_000);
        src1.dereg_mr().unwrap();
        let wcs = wait(&w.cq_a, 1, BIG as u64);
        assert_eq!((wcs[0].wr_id, wcs[0].status), (11, WcStatus::LocProtErr), "{wcs:?}");
        nics.cluster.lock().run(20_000);
        let n = placed_prefix(&dst, &data, &sentinel);
        assert!(n > 0, "nothing of the first entry arrived: the test stopped the WRITE too early");
        assert!(n <= half, "{n} bytes arrived: the second entry's bytes were sent after its MR was deregistered");
    }
    assert_no_violations(&nics);
}

/// A receive WQE whose MR lacks LOCAL_WRITE: the receive completes with
/// LOC_PROT_ERR, the responder stops and the library moves the QP to ERROR,
/// the sender gets REM_OP_ERR, nothing is written, another QP keeps working.
#[test]
fn recv_into_mr_without_local_write() {
    let nics = pair();
    {
        let w = World::new(&nics, 2, 4, Mtu::Mtu1024);
        let (a, b) = &w.conns[0];
        let (ga, gb) = &w.conns[1];
        let src = w.pd_a.reg_mr(8192, AccessFlags::empty()).unwrap();
        src.write(0, &pattern::make(SEED, stream(0, 2), 8192)).unwrap();
        let ro = w.pd_b.reg_mr(4096, AccessFlags::REMOTE_WRITE).unwrap();
        let ro_before = fill_sentinel(&ro);
        let good = w.pd_b.reg_mr(4096, AccessFlags::LOCAL_WRITE).unwrap();
        fill_sentinel(&good);
        b.post_recv(&RecvWr { wr_id: 1, sg_list: &[ro.sge(0, 4096)] }).unwrap();
        gb.post_recv(&RecvWr { wr_id: 2, sg_list: &[good.sge(0, 4096)] }).unwrap();
        a.post_send(&SendWr {
            send_flags: rnic::SendFlags::SIGNALED,
            wr_id: 3,
            opcode: WrOpcode::Send,
            sg_list: src.sge(0, 3000).into(),
        })
        .unwrap();
        ga.post_send(&SendWr {
            send_flags: rnic::SendFlags::SIGNALED,
            wr_id: 4,
            opcode: WrOpcode::Send,
            sg_list: src.sge(4096, 3000).into(),
        })
        .unwrap();
        let wa = wait(&w.cq_a, 2, 8192);
        let st = |q: u32| wa.iter().find(|c| c.qp_num == q).map(|c| (c.wr_id, c.status));
        assert_eq!(st(a.qp_num()), Some((3, WcStatus::RemOpErr)), "{wa:?}");
        assert_eq!(st(ga.qp_num()), Some((4, WcStatus::Success)), "{wa:?}");
        let wb = wait(&w.cq_b, 2, 8192);
        let st = |q: u32| wb.iter().find(|c| c.qp_num == q).map(|c| (c.wr_id, c.status, c.opcode));
        assert_eq!(st(b.qp_num()), Some((1, WcStatus::LocProtErr, WcOpcode::Recv)), "{wb:?}");
        assert_eq!(st(gb.qp_num()).map(|s| s.1), Some(WcStatus::Success), "{wb:?}");
        assert_eq!(b.state(), QpState::Error);
        assert!(read_all(&ro) == ro_before, "the receive buffer without LOCAL_WRITE was written");
        assert_eq!(&read_all(&good)[..3000], &pattern::make(SEED, stream(0, 2), 8192)[4096..7096]);
    }
    assert_no_violations(&nics);
}

/// Deregistering the receive buffer's MR while a SEND is placed into it: the
/// next packet finds the key invalid, the receive completes LOC_PROT_ERR and
/// the sender REM_OP_ERR, and a new MR over the freed memory stays untouched.
#[test]
fn dereg_receive_mr_during_send() {
    let nics = pair();
    {
        let w = World::new(&nics, 1, 4, Mtu::Mtu4096);
        let (a, b) = &w.conns[0];
        let src = w.pd_a.reg_mr(BIG, AccessFlags::empty()).unwrap();
        src.write(0, &pattern::make(SEED, stream(0, 3), BIG)).unwrap();
        let rbuf = w.pd_b.reg_mr(BIG, AccessFlags::LOCAL_WRITE).unwrap();
        b.post_recv(&RecvWr { wr_id: 11, sg_list: &[rbuf.sge(0, BIG as u32)] }).unwrap();
        a.post_send(&SendWr {
            send_flags: rnic::SendFlags::SIGNALED,
            wr_id: 12,
            opcode: WrOpcode::Send,
            sg_list: src.sge(0, BIG as u32).into(),
        })
        .unwrap();
        nics.cluster.lock().run(8_000);
        let old_bus = rbuf.bus_addr();
        rbuf.dereg_mr().unwrap();
        let reuse = w.pd_b.reg_mr(BIG, AccessFlags::LOCAL_WRITE).unwrap();
        assert_eq!(reuse.bus_addr(), old_bus, "the test needs the new MR over the freed memory");
        let before = fill_sentinel(&reuse);
        let wa = wait(&w.cq_a, 1, BIG as u64);
        assert_eq!((wa[0].wr_id, wa[0].status), (12, WcStatus::RemOpErr), "{wa:?}");
        let wb = wait(&w.cq_b, 1, BIG as u64);
        assert_eq!((wb[0].wr_id, wb[0].status), (11, WcStatus::LocProtErr), "{wb:?}");
        nics.cluster.lock().run(20_000);
        assert!(read_all(&reuse) == before, "bytes of the SEND landed in the next MR over the freed receive buffer");
    }
    assert_no_violations(&nics);
}
