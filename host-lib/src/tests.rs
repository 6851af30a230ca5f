//! Library tests against the mock device (no RTL): register programming,
//! ring math in context, CQ sizing, completion matching and flushing,
//! object lifecycle (destroy order, parents kept alive, resource reuse).

use crate::mock::{self, MockDev};
use crate::*;
use rnic_spec::desc::{cqe_op, cqe_status, Cqe, SendWqe};
use rnic_spec::regs::{self, cq, mr, qpc};
use std::sync::{Arc, Weak};
use zerocopy::FromBytes;

fn cq_ring(ctx: &Context, cq: &Cq) -> (u64, u32) {
    let st = ctx.state();
    let c = st.cqs[cq.cqn() as usize].as_ref().unwrap();
    (c.buf.bus_addr, c.log2)
}

fn cqe(qpn: u32, idx: u16, status: u8, opcode: u8, len: u32, owner: u8) -> Cqe {
    Cqe { wqe_index: idx.into(), status, opcode, qpn: qpn.into(), byte_len: len.into(), owner, ..Default::default() }
}

fn connected(ctx: &Context, pd: &Pd, cq: &Cq, sq: u32, rq: u32) -> Qp {
    let qp = pd.create_qp(QpInitAttr::new(cq, cq, sq, rq)).unwrap();
    qp.modify(&QpAttr::init()).unwrap();
    qp.modify(&QpAttr::rtr(mock::addr(2), 9, 100, Mtu::Mtu1024)).unwrap();
    qp.modify(&QpAttr::rts(200)).unwrap();
    let _ = ctx;
    qp
}

#[test]
fn open_checks_magic_and_programs_address() {
    let dev = MockDev::new();
    let _ctx = mock::open(&dev);
    let w = dev.writes.borrow();
    assert!(w.contains(&(regs::REG_SRC_MAC, 0x0200_0000_0001)));
    assert!(w.contains(&(regs::REG_SRC_IP, 0x0a00_0001)));
    drop(w);
    let bad = Arc::new(MockDev { id: 0xdead_beef, ..Arc::try_unwrap(MockDev::new()).ok().unwrap() });
    assert!(matches!(open_device(bad as Arc<dyn Device>, mock::addr(1)), Err(Error::BadDeviceId { .. })));
}

#[test]
fn reg_mr_stages_entry_and_rolls_keys() {
    let dev = MockDev::new();
    let ctx = mock::open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let m = pd.reg_mr(5000, AccessFlags::REMOTE_WRITE | AccessFlags::LOCAL_WRITE).unwrap();
    let (idx, w) = dev.last_commit(regs::REG_MR_COMMIT);
    assert_eq!(idx, (m.lkey() >> 8) as u64);
    assert_eq!(mr::VA_BASE.get(&w), m.addr());
    assert_eq!(m.addr(), m.bus_addr() + VA_OFFSET);
    assert_eq!(mr::IOVA_BASE.get(&w), m.bus_addr());
    assert_eq!(mr::LENGTH.get(&w), 5000);
    assert_eq!(mr::KEY_TAG.get(&w), (m.lkey() & 0xFF) as u64);
    // The rkey is another value: the same index, the tag's top bit flipped.
    assert_ne!(m.rkey(), m.lkey());
    assert_eq!(m.rkey(), m.lkey() ^ regs::RKEY_TAG_FLIP);
    assert_eq!(mr::VALID.get(&w), 1);
    assert_eq!(mr::PD.get(&w), pd.pdn() as u64);
    assert_eq!(mr::ACCESS.get(&w), 3);
    assert!(dev.mem.borrow()[&m.bus_addr()].1.device_write);
    m.write(4990, &[1; 10]).unwrap();
    assert!(matches!(m.write(4991, &[1; 10]), Err(Error::OutOfBounds { mr_len: 5000, .. })));
    let old = m.lkey();
    m.dereg_mr().unwrap();
    let (_, w) = dev.last_commit(regs::REG_MR_COMMIT);
    assert_eq!(mr::VALID.get(&w), 0);
    // The same index comes back with another tag: the stale key no longer matches.
    let m2 = pd.reg_mr(64, AccessFlags::empty()).unwrap();
    assert_eq!(m2.lkey() >> 8, old >> 8);
    assert_ne!(m2.lkey(), old);
    assert!(!dev.mem.borrow()[&m2.bus_addr()].1.device_write);
    assert!(dev.mem.borrow()[&m2.bus_addr()].1.device_read);
}

#[test]
fn key_tags_never_zero_and_cycle() {
    let dev = MockDev::new();
    let ctx = mock::open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let mut seen = std::collections::HashSet::new();
    for _ in 0..600 {
        let m = pd.reg_mr(8, AccessFlags::empty()).unwrap();
        assert_ne!(m.lkey() & 0xFF, 0);
        seen.insert(m.lkey());
    }
    assert_eq!(seen.len(), 255);
}

#[test]
fn cq_and_qp_programming() {
    let dev = MockDev::new();
    let ctx = mock::open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let c = ctx.create_cq(100).unwrap();
    assert_eq!(c.entries(), 128);
    let (cqn, w) = dev.last_commit(regs::REG_CQ_COMMIT);
    assert_eq!(cqn, c.cqn() as u64);
    assert_eq!(cq::LOG2.get(&w), 7);
    let (base, _) = cq_ring(&ctx, &c);
    assert_eq!(cq::BASE.get(&w), base);
    assert!(!dev.mem.borrow()[&base].1.device_read && dev.mem.borrow()[&base].1.device_write);

    let qp = pd.create_qp(QpInitAttr::new(&c, &c, 60, 8)).unwrap();
    assert!(qp.qp_num() >= 2 && (qp.qp_num() as usize) < rnic_spec::params::NUM_QPS);
    qp.modify(&QpAttr::init()).unwrap();
    let (v, _) = dev.last_commit(regs::REG_QP_COMMIT);
    assert_eq!(v, qp.qp_num() as u64 | regs::QP_COMMIT_RESET_RESP | regs::QP_COMMIT_RESET_REQ);
    assert!(matches!(qp.modify(&QpAttr::rts(0)), Err(Error::BadTransition { .. })));
    let peer = mock::addr(2);
    qp.modify(&QpAttr::rtr(peer, 77, 0x123456, Mtu::Mtu4096)).unwrap();
    let (v, w) = dev.last_commit(regs::REG_QP_COMMIT);
    assert_eq!(v, qp.qp_num() as u64 | regs::QP_COMMIT_RESET_RESP | regs::QP_COMMIT_RESET_REQ);
    assert_eq!(qpc::RTR.get(&w), 1);
    assert_eq!(qpc::RTS.get(&w), 0);
    assert_eq!(qpc::PMTU_LOG2.get(&w), 12);
    assert_eq!(qpc::REMOTE_QPN.get(&w), 77);
    assert_eq!(qpc::DEST_IP.get(&w), 0x0a00_0002);
    assert_eq!(qpc::DEST_MAC.get(&w), 0x0200_0000_0002);
    assert_eq!(qpc::RQ_PSN.get(&w), 0x123456);
    assert_eq!(qpc::SQ_LOG2.get(&w), 6);
    assert_eq!(qpc::RQ_LOG2.get(&w), 3);
    assert_eq!(qpc::SEND_CQN.get(&w), c.cqn() as u64);
    assert_eq!(qpc::PD.get(&w), pd.pdn() as u64);
    assert_eq!(qpc::UDP_SPORT.get(&w), 0xC000 | qp.qp_num() as u64);
    qp.modify(&QpAttr::rts(0x654321)).unwrap();
    let (v, w) = dev.last_commit(regs::REG_QP_COMMIT);
    assert_eq!(v, qp.qp_num() as u64 | regs::QP_COMMIT_RESET_REQ);
    assert_eq!(qpc::RTS.get(&w), 1);
    assert_eq!(qpc::RTR.get(&w), 1);
    assert_eq!(qpc::SQ_PSN.get(&w), 0x654321);
    assert_eq!(qpc::REMOTE_QPN.get(&w), 77);
    assert_eq!(qp.state(), QpState::Rts);
}

#[test]
fn cq_must_cover_outstanding_wrs() {
    let dev = MockDev::new();
    let ctx = mock::open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let c = ctx.create_cq(64).unwrap();
    let a = pd.create_qp(QpInitAttr::new(&c, &c, 32, 16)).unwrap();
    let e = pd.create_qp(QpInitAttr::new(&c, &c, 16, 1)).unwrap_err();
    assert!(matches!(e, Error::CqTooSmall { entries: 64, committed: 48, needed: 17, .. }), "{e}");
    let b = pd.create_qp(QpInitAttr::new(&c, &c, 16, 0)).unwrap();
    drop(a);
    // Destroying a QP returns its reservation.
    let _c2 = pd.create_qp(QpInitAttr::new(&c, &c, 48, 0)).unwrap();
    drop(b);
    let big = pd.create_qp(QpInitAttr::new(&c, &c, 1 << 16, 0));
    assert!(matches!(big, Err(Error::BadSize { what: "max_send_wr", .. })));
}

#[test]
fn post_send_writes_wqes_and_doorbell_with_wrap() {
    let dev = MockDev::new();
    let ctx = mock::open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let c = ctx.create_cq(64).unwrap();
    let m = pd.reg_mr(4096, AccessFlags::LOCAL_WRITE).unwrap();
    let qp = connected(&ctx, &pd, &c, 4, 4);
    let (base, log2) = cq_ring(&ctx, &c);
    let sq_base = ctx.state().qps[qp.qp_num() as usize].as_ref().unwrap().sq.buf.bus_addr;
    let mut idx = 0u32;
    let mut buf = [WorkCompletion::default(); 10];
    for round in 0..3u32 {
        let wrs: Vec<SendWr> = (0..3)
            .map(|i| SendWr {
                send_flags: crate::SendFlags::SIGNALED,
                wr_id: (round * 10 + i) as u64,
                opcode: WrOpcode::RdmaWrite { remote_addr: 0xAB00 + i as u64, rkey: 0x1234 },
                sg_list: m.sge(i as u64 * 100, 100 + i).into(),
            })
            .collect();
        qp.post_send_batch(&wrs).unwrap();
        let db = *dev.writes.borrow().last().unwrap();
        assert_eq!(db, (regs::db_sq(qp.qp_num()), (idx + 3) as u64));
        for i in 0..3 {
            let mut b = [0u8; 64];
            dev.read_mem(sq_base + (ring::slot(idx + i, 2) * 64) as u64, &mut b).unwrap();
            let w = SendWqe::read_from_bytes(&b).unwrap();
            assert_eq!(w.opcode, rnic_spec::desc::send_op::RDMA_WRITE);
            assert_eq!(w.length.get(), 100 + i);
            assert_eq!(w.local_addr.get(), m.addr() + i as u64 * 100);
            assert_eq!(w.lkey.get(), m.lkey());
            assert_eq!(w.rkey.get(), 0x1234);
            assert_eq!(w.remote_addr.get(), 0xAB00 + i as u64);
        }
        // A fourth would still fit, but a batch of two more would exceed max_send_wr = 4.
        assert!(matches!(qp.post_send_batch(&wrs[..2]), Err(Error::QueueFull { outstanding: 3, max: 4, .. })));
        for i in 0..3 {
            let ci = round * 3 + i;
            // Like the RTL: a requester CQE names the WQE only (opcode 0, length 0).
            dev.put_cqe(base, log2, ci, cqe(qp.qp_num(), (idx + i) as u16, 0, 0, 0, ring::cqe_owner_valid(ci, log2)));
        }
        let n = c.poll_cq(&mut buf).unwrap();
        let wcs = &buf[..n];
        assert_eq!(
            wcs.iter().map(|w| w.wr_id).collect::<Vec<_>>(),
            vec![(round * 10) as u64, (round * 10 + 1) as u64, (round * 10 + 2) as u64]
        );
        assert!(wcs.iter().all(|w| w.status == WcStatus::Success && w.opcode == WcOpcode::RdmaWrite));
        assert_eq!(wcs.iter().map(|w| w.byte_len).collect::<Vec<_>>(), vec![100, 101, 102]);
        idx += 3;
    }
    assert_eq!(c.poll_cq(&mut buf).unwrap(), 0);
    let e = qp
        .post_send(&SendWr {
            send_flags: crate::SendFlags::SIGNALED,
            wr_id: 0,
            opcode: WrOpcode::Send,
            sg_list: m.sge(4000, 97).into(),
        })
        .unwrap_err();
    assert!(matches!(e, Error::OutOfBounds { offset: 4000, len: 97, mr_len: 4096, .. }), "{e}");
}

/// The send WQE at free-running SQ index `idx` of `qp`, as the library wrote it.
fn send_wqe(dev: &MockDev, qp: &Qp, idx: u32) -> SendWqe {
    let (base, log2) = {
        let st = qp.context().state();
        let q = st.qps[qp.qp_num() as usize].as_ref().unwrap();
        (q.sq.buf.bus_addr, q.sq.log2)
    };
    let mut b = [0u8; 64];
    dev.read_mem(base + (ring::slot(idx, log2) * 64) as u64, &mut b).unwrap();
    SendWqe::read_from_bytes(&b).unwrap()
}

#[test]
fn read_wqe_rsn_psns_and_completion() {
    let dev = MockDev::new();
    let ctx = mock::open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let c = ctx.create_cq(64).unwrap();
    let m = pd.reg_mr(8192, AccessFlags::LOCAL_WRITE).unwrap();
    // MTU 1024, first PSN 200.
    let qp = connected(&ctx, &pd, &c, 8, 4);
    let read = SendWr {
        send_flags: crate::SendFlags::SIGNALED,
        wr_id: 3,
        opcode: WrOpcode::RdmaRead { remote_addr: 0x7f00_1234_5678, rkey: 0x4321 },
        sg_list: m.sge(100, 3000).into(),
    };
    let send = |wr_id| SendWr {
        send_flags: crate::SendFlags::SIGNALED,
        wr_id,
        opcode: WrOpcode::Send,
        sg_list: m.sge(0, 8).into(),
    };
    qp.post_send_batch(&[send(1), send(2), read, send(4)]).unwrap();
    let w = send_wqe(&dev, &qp, 2);
    assert_eq!(w.opcode, rnic_spec::desc::send_op::RDMA_READ);
    assert_eq!(w.length.get(), 3000);
    assert_eq!((w.local_addr.get(), w.lkey.get()), (m.addr() + 100, m.lkey()));
    assert_eq!((w.remote_addr.get(), w.rkey.get()), (0x7f00_1234_5678, 0x4321));
    assert_eq!((w.imm.get(), w.rsn.get(), w.flags), (0, 0, 0));
    // The READ consumes no receive WQE at the responder: the SEND behind it gets the next RSN.
    let rsns: Vec<u32> = (0..4).map(|i| send_wqe(&dev, &qp, i).rsn.get()).collect();
    assert_eq!(rsns, vec![0, 1, 0, 2]);
    // A READ takes as many PSNs as a WRITE of its length: 3000 B at MTU 1024 is 3 packets.
    let psns: Vec<u32> = {
        let st = ctx.state();
        let q = st.qps[qp.qp_num() as usize].as_ref().unwrap();
        (0..4).map(|i| q.sq.slots[i].psn).collect()
    };
    assert_eq!(psns, vec![200, 201, 202, 205]);
    // The NIC's requester CQEs carry no opcode; the library reports the one posted.
    let (base, log2) = cq_ring(&ctx, &c);
    for i in 0..4 {
        dev.put_cqe(base, log2, i, cqe(qp.qp_num(), i as u16, 0, cqe_op::REQUESTER, 0, ring::cqe_owner_valid(i, log2)));
    }
    let got: Vec<_> = c.poll_cq_vec(8).unwrap().iter().map(|w| (w.wr_id, w.status, w.opcode, w.byte_len)).collect();
    assert_eq!(
        got,
        vec![
            (1, WcStatus::Success, WcOpcode::Send, 8),
            (2, WcStatus::Success, WcOpcode::Send, 8),
            (3, WcStatus::Success, WcOpcode::RdmaRead, 3000),
            (4, WcStatus::Success, WcOpcode::Send, 8),
        ]
    );
    assert_eq!(WcOpcode::from_raw(cqe_op::RDMA_READ), WcOpcode::RdmaRead);
    // In ERROR a READ is flushed as a READ.
    qp.modify(&QpAttr::to(QpState::Error)).unwrap();
    qp.post_send(&read).unwrap();
    let w = c.poll_cq_vec(4).unwrap();
    assert_eq!((w.len(), w[0].wr_id, w[0].status, w[0].opcode), (1, 3, WcStatus::WrFlushErr, WcOpcode::RdmaRead));
}

#[test]
fn read_into_an_mr_without_local_write_is_refused() {
    fn read(wr_id: u64, mr: &Mr) -> SendWr<'_> {
        SendWr {
            send_flags: crate::SendFlags::SIGNALED,
            wr_id,
            opcode: WrOpcode::RdmaRead { remote_addr: 0x1000, rkey: 0x99 },
            sg_list: mr.sge(0, 64).into(),
        }
    }
    let dev = MockDev::new();
    let ctx = mock::open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let c = ctx.create_cq(64).unwrap();
    let ro = pd.reg_mr(4096, AccessFlags::REMOTE_READ | AccessFlags::REMOTE_WRITE).unwrap();
    let rw = pd.reg_mr(4096, AccessFlags::LOCAL_WRITE).unwrap();
    let qp = connected(&ctx, &pd, &c, 8, 4);
    let write = SendWr {
        send_flags: crate::SendFlags::SIGNALED,
        wr_id: 1,
        opcode: WrOpcode::RdmaWrite { remote_addr: 0x1000, rkey: 0x99 },
        sg_list: ro.sge(0, 64).into(),
    };
    let writes_before = dev.writes.borrow().len();
    // One bad READ in a batch: nothing of the batch is posted.
    let e = qp.post_send_batch(&[write, read(2, &ro)]).unwrap_err();
    match &e {
        Error::MrAccess { qpn, op, key, needed, access } => {
            assert_eq!((*qpn, *op, *key), (qp.qp_num(), "IBV_WR_RDMA_READ", ro.lkey()));
            assert_eq!((*needed, *access), (AccessFlags::LOCAL_WRITE, ro.access()));
        }
        other => panic!("expected MrAccess, got {other}"),
    }
    assert!(e.to_string().contains("LOCAL_WRITE"), "{e}");
    assert_eq!(qp.send_outstanding(), 0);
    assert_eq!(dev.writes.borrow().len(), writes_before, "no WQE and no doorbell");
    // A WRITE's source needs no LOCAL_WRITE; a READ into a LOCAL_WRITE region goes.
    qp.post_send_batch(&[write, read(3, &rw)]).unwrap();
    assert_eq!(qp.send_outstanding(), 2);
    // The usual SGE checks hold for a READ too.
    assert!(matches!(
        qp.post_send(&SendWr {
            send_flags: crate::SendFlags::SIGNALED,
            sg_list: rw.sge(4090, 7).into(),
            ..read(4, &rw)
        }),
        Err(Error::OutOfBounds { .. })
    ));
}

#[test]
fn reg_mr_device_access_follows_the_flags() {
    let dev = MockDev::new();
    let ctx = mock::open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let access = |flags| {
        let m = pd.reg_mr(64, flags).unwrap();
        let a = dev.mem.borrow()[&m.bus_addr()].1;
        (a.device_read, a.device_write)
    };
    // READ responses land in LOCAL_WRITE regions; a READ's source is only read.
    assert_eq!(access(AccessFlags::LOCAL_WRITE), (true, true));
    assert_eq!(access(AccessFlags::REMOTE_READ), (true, false));
    assert_eq!(access(AccessFlags::REMOTE_WRITE), (true, true));
    assert_eq!(access(AccessFlags::REMOTE_READ | AccessFlags::LOCAL_WRITE), (true, true));
    assert_eq!(access(AccessFlags::empty()), (true, false));
}

#[test]
fn owner_bit_over_many_cq_passes() {
    let dev = MockDev::new();
    let ctx = mock::open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let c = ctx.create_cq(4).unwrap();
    let m = pd.reg_mr(64, AccessFlags::LOCAL_WRITE).unwrap();
    let qp = connected(&ctx, &pd, &c, 2, 2);
    let (base, log2) = cq_ring(&ctx, &c);
    let mut w = [WorkCompletion::default(); 4];
    for n in 0..40u32 {
        qp.post_recv(&RecvWr { wr_id: 1000 + n as u64, sg_list: &[m.sge(0, 64)] }).unwrap();
        assert_eq!(c.poll_cq(&mut w[..1]).unwrap(), 0, "the previous pass's CQE must not be taken as new");
        dev.put_cqe(base, log2, n, cqe(qp.qp_num(), n as u16, 0, cqe_op::RECV, 7, ring::cqe_owner_valid(n, log2)));
        assert_eq!(c.poll_cq(&mut w).unwrap(), 1);
        assert_eq!((w[0].wr_id, w[0].opcode, w[0].byte_len), (1000 + n as u64, WcOpcode::Recv, 7));
    }
}

#[test]
fn error_completion_flushes_only_that_qp() {
    let dev = MockDev::new();
    let ctx = mock::open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let c = ctx.create_cq(64).unwrap();
    let m = pd.reg_mr(4096, AccessFlags::LOCAL_WRITE).unwrap();
    let bad = connected(&ctx, &pd, &c, 8, 4);
    let good = connected(&ctx, &pd, &c, 8, 4);
    let (base, log2) = cq_ring(&ctx, &c);
    let wr = |id| SendWr {
        send_flags: crate::SendFlags::SIGNALED,
        wr_id: id,
        opcode: WrOpcode::RdmaWrite { remote_addr: 0, rkey: 0xBAD },
        sg_list: m.sge(0, 8).into(),
    };
    bad.post_send_batch(&[wr(1), wr(2), wr(3)]).unwrap();
    bad.post_recv(&RecvWr { wr_id: 9, sg_list: &[m.sge(0, 8)] }).unwrap();
    good.post_send_batch(&[wr(11), wr(12)]).unwrap();
    dev.put_cqe(base, log2, 0, cqe(good.qp_num(), 0, 0, cqe_op::RDMA_WRITE, 8, 1));
    dev.put_cqe(base, log2, 1, cqe(bad.qp_num(), 0, cqe_status::REM_ACCESS_ERR, cqe_op::RDMA_WRITE, 8, 1));
    let w = c.poll_cq_vec(16).unwrap();
    let got: Vec<_> = w.iter().map(|w| (w.qp_num, w.wr_id, w.status)).collect();
    let b = bad.qp_num();
    assert_eq!(
        got,
        vec![
            (good.qp_num(), 11, WcStatus::Success),
            (b, 1, WcStatus::RemAccessErr),
            (b, 2, WcStatus::WrFlushErr),
            (b, 3, WcStatus::WrFlushErr),
            (b, 9, WcStatus::WrFlushErr),
        ]
    );
    assert_eq!(bad.state(), QpState::Error);
    assert_eq!(good.state(), QpState::Rts);
    // The bad QP was stopped at the NIC without resetting its state.
    let (v, w) = dev.last_commit(regs::REG_QP_COMMIT);
    assert_eq!(v, b as u64);
    assert_eq!((qpc::RTS.get(&w), qpc::RTR.get(&w)), (0, 0));
    // Posting in ERROR completes at once with a flush.
    bad.post_send(&wr(4)).unwrap();
    assert_eq!(c.poll_cq_vec(4).unwrap()[0].status, WcStatus::WrFlushErr);
    dev.put_cqe(base, log2, 2, cqe(good.qp_num(), 1, 0, cqe_op::RDMA_WRITE, 8, 1));
    assert_eq!(c.poll_cq_vec(4).unwrap()[0].wr_id, 12);
    // ERROR -> RESET -> INIT works; other transitions from ERROR do not.
    assert!(matches!(bad.modify(&QpAttr::rts(0)), Err(Error::BadTransition { .. })));
    bad.modify(&QpAttr::to(QpState::Reset)).unwrap();
    bad.modify(&QpAttr::init()).unwrap();
}

#[test]
fn mismatched_cqe_is_reported() {
    let dev = MockDev::new();
    let ctx = mock::open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let c = ctx.create_cq(16).unwrap();
    let m = pd.reg_mr(64, AccessFlags::LOCAL_WRITE).unwrap();
    let qp = connected(&ctx, &pd, &c, 4, 4);
    let (base, log2) = cq_ring(&ctx, &c);
    qp.post_send(&SendWr {
        send_flags: crate::SendFlags::SIGNALED,
        wr_id: 1,
        opcode: WrOpcode::Send,
        sg_list: m.sge(0, 4).into(),
    })
    .unwrap();
    dev.put_cqe(base, log2, 0, cqe(qp.qp_num(), 5, 0, cqe_op::SEND, 4, 1));
    let e = c.poll_cq_vec(1).unwrap_err();
    assert!(matches!(e, Error::BadCqe { got: 5, .. }), "{e}");
}

#[test]
fn wait_cq_times_out_with_state() {
    let dev = MockDev::new();
    let ctx = mock::open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let c = ctx.create_cq(16).unwrap();
    let m = pd.reg_mr(64, AccessFlags::LOCAL_WRITE).unwrap();
    let qp = connected(&ctx, &pd, &c, 4, 4);
    qp.post_send(&SendWr {
        send_flags: crate::SendFlags::SIGNALED,
        wr_id: 1,
        opcode: WrOpcode::Send,
        sg_list: m.sge(0, 4).into(),
    })
    .unwrap();
    let e = c.wait_cq(1, 1000).unwrap_err();
    let s = e.to_string();
    assert!(
        s.contains("timed out") && s.contains(&format!("QP {} Rts", qp.qp_num())) && s.contains("SQ 1 outstanding"),
        "{s}"
    );
}

#[test]
fn posting_rules_by_state_and_pd() {
    let dev = MockDev::new();
    let ctx = mock::open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let pd2 = ctx.alloc_pd().unwrap();
    let c = ctx.create_cq(16).unwrap();
    let m = pd.reg_mr(64, AccessFlags::LOCAL_WRITE).unwrap();
    let m2 = pd2.reg_mr(64, AccessFlags::LOCAL_WRITE).unwrap();
    let qp = pd.create_qp(QpInitAttr::new(&c, &c, 4, 4)).unwrap();
    let send = SendWr {
        send_flags: crate::SendFlags::SIGNALED,
        wr_id: 1,
        opcode: WrOpcode::Send,
        sg_list: m.sge(0, 4).into(),
    };
    assert!(matches!(
        qp.post_recv(&RecvWr { wr_id: 1, sg_list: &[m.sge(0, 4)] }),
        Err(Error::BadState { state: QpState::Reset, .. })
    ));
    qp.modify(&QpAttr::init()).unwrap();
    assert!(matches!(qp.post_send(&send), Err(Error::BadState { state: QpState::Init, .. })));
    qp.post_recv(&RecvWr { wr_id: 1, sg_list: &[m.sge(0, 4)] }).unwrap();
    assert!(matches!(qp.post_recv(&RecvWr { wr_id: 2, sg_list: &[m2.sge(0, 4)] }), Err(Error::PdMismatch { .. })));
    qp.modify(&QpAttr::rtr(mock::addr(2), 3, 0, Mtu::Mtu256)).unwrap();
    // The receive posted in INIT is announced again after the responder reset.
    assert_eq!(*dev.writes.borrow().last().unwrap(), (regs::db_rq(qp.qp_num()), 1));
}

/// Posts one SEND of `mr` on `qp`, plays the NIC completing it and polls the completion.
fn send_and_complete(dev: &MockDev, qp: &Qp, mr: &Mr, wr_id: u64) -> WorkCompletion {
    let ctx = qp.context();
    let cq = qp.send_cq();
    let idx = ctx.state().qps[qp.qp_num() as usize].as_ref().unwrap().sq.pi;
    qp.post_send(&SendWr {
        send_flags: crate::SendFlags::SIGNALED,
        wr_id,
        opcode: WrOpcode::Send,
        sg_list: mr.sge(0, 8).into(),
    })
    .unwrap();
    let (base, log2) = cq_ring(ctx, &cq);
    let ci = ctx.state().cqs[cq.cqn() as usize].as_ref().unwrap().ci;
    dev.put_cqe(base, log2, ci, cqe(qp.qp_num(), idx as u16, 0, 0, 0, ring::cqe_owner_valid(ci, log2)));
    let mut wc = [WorkCompletion::default(); 2];
    assert_eq!(cq.poll_cq(&mut wc).unwrap(), 1);
    assert_eq!((wc[0].wr_id, wc[0].status, wc[0].qp_num), (wr_id, WcStatus::Success, qp.qp_num()));
    wc[0]
}

/// The `Error::Busy` of a failed destroy, checking that the handle came back.
fn busy_of<T>(r: std::result::Result<(), DestroyError<T>>) -> (Resource, Vec<Resource>, usize, String, T) {
    let e = r.expect_err("destroy must fail while the object is in use");
    let msg = e.to_string();
    let (error, object) = e.into_parts();
    match error {
        Error::Busy { object: what, users, other_handles } => {
            (what, users, other_handles, msg, object.expect("a busy object comes back"))
        }
        other => panic!("expected Busy, got {other}"),
    }
}

#[test]
fn destroy_in_order_releases_everything() {
    let dev = MockDev::new();
    let ctx = mock::open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let scq = ctx.create_cq(16).unwrap();
    let rcq = ctx.create_cq(16).unwrap();
    let m = pd.reg_mr(64, AccessFlags::LOCAL_WRITE).unwrap();
    let qp = pd.create_qp(QpInitAttr::new(&scq, &rcq, 4, 4)).unwrap();
    qp.modify(&QpAttr::init()).unwrap();
    qp.post_recv(&RecvWr { wr_id: 1, sg_list: &[m.sge(0, 8)] }).unwrap();
    let qpn = qp.qp_num();
    let rings = {
        let st = ctx.state();
        let q = st.qps[qpn as usize].as_ref().unwrap();
        [q.sq.buf.bus_addr, q.rq.buf.bus_addr]
    };

    qp.destroy_qp().unwrap();
    // Disabled at the NIC, rings freed, reservations returned, table entry gone.
    let (v, w) = dev.last_commit(regs::REG_QP_COMMIT);
    assert_eq!(v, qpn as u64 | regs::QP_COMMIT_RESET_RESP | regs::QP_COMMIT_RESET_REQ);
    assert_eq!((qpc::RTS.get(&w), qpc::RTR.get(&w)), (0, 0));
    assert!(rings.iter().all(|a| !dev.mem.borrow().contains_key(a)));
    assert!(ctx.state().qps.iter().all(Option::is_none));
    assert_eq!(ctx.state().cqs[scq.cqn() as usize].as_ref().unwrap().committed, 0);
    assert_eq!(ctx.state().cqs[rcq.cqn() as usize].as_ref().unwrap().committed, 0);

    m.dereg_mr().unwrap();
    scq.destroy_cq().unwrap();
    rcq.destroy_cq().unwrap();
    pd.dealloc_pd().unwrap();
    {
        let st = ctx.state();
        assert!(st.pds.is_empty() && st.cqs.iter().all(Option::is_none));
        assert!(st.mrs.iter().all(|m| *m == ctx::MrSlot::Free));
    }
    ctx.close_device().unwrap();
    assert!(dev.mem.borrow().is_empty(), "every DMA buffer is freed");
}

#[test]
fn destroy_in_wrong_order_is_busy_and_changes_nothing() {
    let dev = MockDev::new();
    let ctx = mock::open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(16).unwrap();
    let m = pd.reg_mr(64, AccessFlags::LOCAL_WRITE).unwrap();
    let qp = connected(&ctx, &pd, &cq, 4, 4);
    let (pdn, cqn, key, qpn) = (pd.pdn(), cq.cqn(), m.lkey(), qp.qp_num());
    let commits = dev.commits.borrow().len();

    let (what, users, others, msg, ctx) = busy_of(ctx.close_device());
    assert_eq!(what, Resource::Context);
    assert_eq!(users, vec![Resource::Pd(pdn), Resource::Cq(cqn), Resource::Mr(key), Resource::Qp(qpn)]);
    assert_eq!(others, 0);
    assert!(msg.contains("device context") && msg.contains(&format!("QP {qpn}")), "{msg}");

    let (what, users, others, msg, pd) = busy_of(pd.dealloc_pd());
    assert_eq!((what, users, others), (Resource::Pd(pdn), vec![Resource::Mr(key), Resource::Qp(qpn)], 0));
    assert!(msg.contains(&format!("cannot destroy PD {pdn}: still in use by MR key {key:#x}, QP {qpn}")), "{msg}");

    let (what, users, others, msg, cq) = busy_of(cq.destroy_cq());
    assert_eq!((what, users, others), (Resource::Cq(cqn), vec![Resource::Qp(qpn)], 0));
    assert!(msg.contains(&format!("CQ {cqn}")) && msg.contains(&format!("QP {qpn}")), "{msg}");

    // Nothing was torn down: no commit reached the NIC and everything still works.
    assert_eq!(dev.commits.borrow().len(), commits);
    send_and_complete(&dev, &qp, &m, 5);
    let m2 = pd.reg_mr(32, AccessFlags::empty()).unwrap();
    assert_eq!(cq.entries(), 16);

    // The right order succeeds.
    qp.destroy_qp().unwrap();
    m.dereg_mr().unwrap();
    m2.dereg_mr().unwrap();
    cq.destroy_cq().unwrap();
    pd.dealloc_pd().unwrap();
    ctx.close_device().unwrap();
    assert!(dev.mem.borrow().is_empty());
}

#[test]
fn other_handles_keep_objects_busy() {
    let dev = MockDev::new();
    let ctx = mock::open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(16).unwrap();
    let qp = pd.create_qp(QpInitAttr::new(&cq, &cq, 2, 2));
    let qp = qp.unwrap();

    // The QP holds the CQ twice (send and receive) and the PD once; a clone is one more handle.
    let pd2 = pd.clone();
    let (_, users, others, msg, pd) = busy_of(pd.dealloc_pd());
    assert_eq!((users, others), (vec![Resource::Qp(qp.qp_num())], 1));
    assert!(msg.ends_with(&format!("QP {}, another handle of it; destroy or drop those first", qp.qp_num())), "{msg}");
    let scq = qp.send_cq();
    let (_, users, others, _, cq) = busy_of(cq.destroy_cq());
    assert_eq!((users, others), (vec![Resource::Qp(qp.qp_num())], 1));
    let ctx2 = ctx.clone();
    let (_, _, others, _, ctx) = busy_of(ctx.close_device());
    assert_eq!(others, 1);

    qp.destroy_qp().unwrap();
    let (_, users, others, _, cq) = busy_of(cq.destroy_cq());
    assert_eq!((users, others), (vec![], 1));
    drop(scq);
    cq.destroy_cq().unwrap();
    let (_, users, others, msg, pd) = busy_of(pd.dealloc_pd());
    assert_eq!((users, others), (vec![], 1));
    assert!(msg.contains("still in use by another handle of it"), "{msg}");
    drop(pd2);
    pd.dealloc_pd().unwrap();
    let (_, users, others, msg, ctx) = busy_of(ctx.close_device());
    assert_eq!((users, others), (vec![], 1));
    assert!(msg.contains("another handle"), "{msg}");
    drop(ctx2);
    // `?` turns a destroy error into the library's error.
    let close = |c: Context| -> Result<()> { Ok(c.close_device()?) };
    close(ctx).unwrap();
}

#[test]
fn busy_message_counts_long_user_lists() {
    let dev = MockDev::new();
    let ctx = mock::open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let mrs: Vec<Mr> = (0..11).map(|_| pd.reg_mr(8, AccessFlags::empty()).unwrap()).collect();
    let e: Error = pd.dealloc_pd().unwrap_err().into();
    let s = e.to_string();
    assert!(
        s.contains(&format!("MR key {:#x}", mrs[7].lkey())) && !s.contains(&format!("{:#x}", mrs[8].lkey())),
        "{s}"
    );
    assert!(s.contains("3 more objects"), "{s}");
    // Converting the error dropped the PD handle; the MRs still hold the PD.
    assert_eq!(ctx.state().pds.len(), 1);
    drop(mrs);
    assert!(ctx.state().pds.is_empty());
}

#[test]
fn destroyed_resource_numbers_are_reused() {
    let dev = MockDev::new();
    let ctx = mock::open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let pd2 = ctx.alloc_pd().unwrap();
    assert_eq!((pd.pdn(), pd2.pdn()), (1, 2));
    let cq = ctx.create_cq(8).unwrap();
    let cq2 = ctx.create_cq(8).unwrap();
    let attr = |c: &Cq, n| QpInitAttr::new(c, c, n, 0);
    let a = pd.create_qp(attr(&cq, 8)).unwrap();
    let b = pd.create_qp(attr(&cq2, 4)).unwrap();
    // The CQ is full: a's 8 send WRs reserved all its entries.
    assert!(matches!(pd.create_qp(attr(&cq, 1)), Err(Error::CqTooSmall { .. })));
    let qpn = a.qp_num();
    a.destroy_qp().unwrap();
    let a2 = pd.create_qp(attr(&cq, 8)).unwrap();
    assert_eq!(a2.qp_num(), qpn, "the lowest free QPN is taken again");
    assert!(b.qp_num() > qpn);
    drop(a2);

    let m = pd.reg_mr(16, AccessFlags::empty()).unwrap();
    let key = m.lkey();
    m.dereg_mr().unwrap();
    let m2 = pd.reg_mr(16, AccessFlags::empty()).unwrap();
    assert_eq!(m2.lkey() >> 8, key >> 8, "the MR index is taken again");
    assert_ne!(m2.lkey(), key, "under a new key");
    drop(m2);

    let cqn = cq.cqn();
    cq.destroy_cq().unwrap();
    assert_eq!(ctx.create_cq(4).unwrap().cqn(), cqn);

    let pdn = pd.pdn();
    drop(b);
    pd.dealloc_pd().unwrap();
    let pd3 = ctx.alloc_pd().unwrap();
    assert_eq!(pd3.pdn(), pdn);
    // A PD only dropped is released too, once nothing holds it.
    drop(pd3);
    assert_eq!(ctx.alloc_pd().unwrap().pdn(), pdn);
    assert_eq!(pd2.pdn(), 2);
}

#[test]
fn pd_numbers_run_out_only_while_all_are_live() {
    let dev = MockDev::new();
    let ctx = mock::open(&dev);
    let pds: Vec<Pd> = (0..0xFFFF).map(|_| ctx.alloc_pd().unwrap()).collect();
    assert_eq!(pds.last().unwrap().pdn(), 0xFFFF);
    assert!(matches!(ctx.alloc_pd(), Err(Error::Exhausted { what: "PD", max: 0xFFFF })));
    let mut pds: Vec<Option<Pd>> = pds.into_iter().map(Some).collect();
    // The lowest released number comes first.
    pds[4999] = None;
    pds[999] = None;
    for want in [1000, 5000] {
        let p = ctx.alloc_pd().unwrap();
        assert_eq!(p.pdn(), want);
        pds[want as usize - 1] = Some(p);
    }
    assert!(ctx.alloc_pd().is_err());
    drop(pds);
    for _ in 0..3 {
        let p = ctx.alloc_pd().unwrap();
        assert_eq!(p.pdn(), 1);
        p.dealloc_pd().unwrap();
    }
}

#[test]
fn qp_keeps_its_pd_cqs_and_context_alive() {
    let dev = MockDev::new();
    let ctx = mock::open(&dev);
    let weak_ctx: Weak<ctx::CtxInner> = Arc::downgrade(&ctx.inner);
    let pd = ctx.alloc_pd().unwrap();
    let scq = ctx.create_cq(8).unwrap();
    let rcq = ctx.create_cq(8).unwrap();
    let m = pd.reg_mr(64, AccessFlags::LOCAL_WRITE).unwrap();
    let qp = pd.create_qp(QpInitAttr::new(&scq, &rcq, 4, 4)).unwrap();
    qp.modify(&QpAttr::init()).unwrap();
    qp.modify(&QpAttr::rtr(mock::addr(2), 9, 0, Mtu::Mtu1024)).unwrap();
    qp.modify(&QpAttr::rts(0)).unwrap();
    let (pdn, scqn, rcqn) = (pd.pdn(), scq.cqn(), rcq.cqn());
    drop(pd);
    drop(scq);
    drop(rcq);
    drop(ctx);

    // The QP still posts and completes on the CQs whose handles are gone.
    for id in 0..6 {
        send_and_complete(&dev, &qp, &m, id);
    }
    qp.post_recv(&RecvWr { wr_id: 40, sg_list: &[m.sge(0, 8)] }).unwrap();
    assert_eq!((qp.pd().pdn(), qp.send_cq().cqn(), qp.recv_cq().cqn()), (pdn, scqn, rcqn));
    // Their numbers stay taken.
    let ctx = qp.context().clone();
    let other = ctx.alloc_pd().unwrap();
    assert_ne!(other.pdn(), pdn);
    let c = ctx.create_cq(1).unwrap();
    assert!(c.cqn() != scqn && c.cqn() != rcqn);
    drop((other, c));

    // A reset of the QP flushes to the receive CQ it holds.
    qp.modify(&QpAttr::to(QpState::Error)).unwrap();
    let wc = qp.recv_cq().poll_cq_vec(4).unwrap();
    assert_eq!((wc.len(), wc[0].wr_id, wc[0].status), (1, 40, WcStatus::WrFlushErr));

    drop(ctx);
    drop(qp);
    // The PD stays while its MR lives; with the MR gone everything is released.
    assert!(weak_ctx.upgrade().is_some_and(|c| c.st.lock().unwrap().pds.contains(&pdn)));
    drop(m);
    assert!(weak_ctx.upgrade().is_none(), "the context goes with its last object");
    assert!(dev.mem.borrow().is_empty());
}

#[test]
fn mr_keeps_its_pd_alive() {
    let dev = MockDev::new();
    let ctx = mock::open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let pdn = pd.pdn();
    let m = pd.reg_mr(64, AccessFlags::LOCAL_WRITE).unwrap();
    drop(pd);
    m.write(3, b"abc").unwrap();
    let mut out = [0u8; 3];
    m.read(3, &mut out).unwrap();
    assert_eq!(&out, b"abc");
    assert_eq!((m.pdn(), m.pd().pdn()), (pdn, pdn));
    // An MR of the same PD can still be registered through the one held.
    let m2 = m.pd().reg_mr(8, AccessFlags::empty()).unwrap();
    assert_eq!(m2.pdn(), pdn);
    assert_ne!(ctx.alloc_pd().unwrap().pdn(), pdn);
    m.dereg_mr().unwrap();
    assert!(ctx.state().pds.contains(&pdn));
    m2.dereg_mr().unwrap();
    assert!(ctx.state().pds.is_empty());
    assert_eq!(ctx.alloc_pd().unwrap().pdn(), pdn);
}

#[test]
fn cq_lives_while_a_qp_completes_on_it() {
    let dev = MockDev::new();
    let ctx = mock::open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(8).unwrap();
    let m = pd.reg_mr(64, AccessFlags::LOCAL_WRITE).unwrap();
    let qp = connected(&ctx, &pd, &cq, 4, 4);
    let (cqn, (ring, _)) = (cq.cqn(), cq_ring(&ctx, &cq));
    drop(cq);
    assert!(dev.mem.borrow().contains_key(&ring));
    assert_ne!(ctx.create_cq(1).unwrap().cqn(), cqn);
    send_and_complete(&dev, &qp, &m, 1);
    qp.destroy_qp().unwrap();
    assert!(!dev.mem.borrow().contains_key(&ring), "the CQ went with its last QP");
    assert_eq!(ctx.create_cq(1).unwrap().cqn(), cqn);
}

#[test]
fn objects_keep_the_context_alive() {
    let dev = MockDev::new();
    let ctx = mock::open(&dev);
    let weak_ctx = Arc::downgrade(&ctx.inner);
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(4).unwrap();
    drop(ctx);
    let m = pd.reg_mr(8, AccessFlags::empty()).unwrap();
    assert_eq!(pd.context().query_device().max_mr, rnic_spec::params::NUM_MRS);
    assert!(cq.context().same(m.context()));
    drop((pd, m));
    assert!(weak_ctx.upgrade().is_some(), "the CQ still holds the context");
    drop(cq);
    assert!(weak_ctx.upgrade().is_none());
    assert!(dev.mem.borrow().is_empty());
}

#[test]
fn failed_dereg_keeps_the_memory_and_consumes_the_handle() {
    let dev = MockDev::new();
    let ctx = mock::open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let m = pd.reg_mr(64, AccessFlags::LOCAL_WRITE).unwrap();
    let (index, bus) = (m.lkey() >> 8, m.bus_addr());
    dev.fence_stuck.set(true);
    let e = m.dereg_mr().unwrap_err();
    assert!(matches!(e.error(), Error::FenceTimeout { .. }), "{e}");
    assert!(e.into_object().is_none(), "a torn-down MR does not come back");
    dev.fence_stuck.set(false);
    // The entry was invalidated, but the memory is never freed and the index never reused.
    let (v, w) = dev.last_commit(regs::REG_MR_COMMIT);
    assert_eq!((v, mr::VALID.get(&w)), (index as u64, 0));
    assert!(dev.mem.borrow().contains_key(&bus));
    assert_ne!(pd.reg_mr(8, AccessFlags::empty()).unwrap().lkey() >> 8, index);
    // The leaked region holds nothing: PD and context can go.
    pd.dealloc_pd().unwrap();
    ctx.close_device().unwrap();
}

#[test]
fn poll_cq_fills_at_most_the_buffer() {
    let dev = MockDev::new();
    let ctx = mock::open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(16).unwrap();
    let m = pd.reg_mr(64, AccessFlags::LOCAL_WRITE).unwrap();
    let qp = connected(&ctx, &pd, &cq, 8, 8);
    let (base, log2) = cq_ring(&ctx, &cq);
    let wrs: Vec<SendWr> = (0..5)
        .map(|i| SendWr {
            send_flags: crate::SendFlags::SIGNALED,
            wr_id: 100 + i,
            opcode: WrOpcode::Send,
            sg_list: m.sge(0, 8).into(),
        })
        .collect();
    qp.post_send_batch(&wrs).unwrap();
    for i in 0..5 {
        dev.put_cqe(base, log2, i, cqe(qp.qp_num(), i as u16, 0, 0, 0, ring::cqe_owner_valid(i, log2)));
    }
    let sentinel = WorkCompletion { wr_id: 777, ..Default::default() };
    let mut buf = [sentinel; 8];
    assert_eq!(cq.poll_cq(&mut []).unwrap(), 0, "an empty buffer takes nothing");
    assert_eq!(cq.poll_cq(&mut buf[..2]).unwrap(), 2);
    assert_eq!(buf.map(|w| w.wr_id), [100, 101, 777, 777, 777, 777, 777, 777]);
    assert_eq!(cq.poll_cq(&mut buf).unwrap(), 3);
    assert_eq!(buf.map(|w| w.wr_id)[..4], [102, 103, 104, 777]);
    assert!(buf[..3].iter().all(|w| w.status == WcStatus::Success && w.opcode == WcOpcode::Send && w.byte_len == 8));
    assert_eq!(cq.poll_cq(&mut buf).unwrap(), 0);

    // Flushes queued by the library are bounded by the buffer as well.
    let sg = [m.sge(0, 8)];
    qp.post_recv_batch(&[0, 1, 2].map(|i| RecvWr { wr_id: 200 + i, sg_list: &sg })).unwrap();
    qp.modify(&QpAttr::to(QpState::Error)).unwrap();
    assert_eq!(cq.poll_cq(&mut buf[..1]).unwrap(), 1);
    assert_eq!((buf[0].wr_id, buf[0].status), (200, WcStatus::WrFlushErr));
    assert_eq!(cq.poll_cq_vec(8).unwrap().iter().map(|w| w.wr_id).collect::<Vec<_>>(), vec![201, 202]);
    assert!(cq.poll_cq_vec(8).unwrap().is_empty());
    assert!(cq.wait_cq(0, 0).unwrap().is_empty());
}

#[test]
fn list_posts_stop_at_the_bad_wr_and_post_what_came_before() {
    let dev = MockDev::new();
    let ctx = mock::open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let c = ctx.create_cq(64).unwrap();
    let m = pd.reg_mr(4096, AccessFlags::LOCAL_WRITE).unwrap();
    let qp = connected(&ctx, &pd, &c, 8, 4);
    let wr = |id: u64, off: u64| SendWr {
        send_flags: crate::SendFlags::SIGNALED,
        wr_id: id,
        opcode: WrOpcode::RdmaWrite { remote_addr: 0xAB00, rkey: 0x1234 },
        sg_list: m.sge(off, 100).into(),
    };
    // The third WR runs past its MR: the first two are posted with one doorbell, the rest not.
    let writes0 = dev.writes.borrow().len();
    let bad = qp.post_send_list(&[wr(1, 0), wr(2, 100), wr(3, 4090), wr(4, 0)]).unwrap_err();
    assert_eq!(bad.index, 2, "{bad}");
    assert!(matches!(bad.error, Error::OutOfBounds { offset: 4090, .. }), "{bad}");
    let dbs: Vec<_> =
        dev.writes.borrow()[writes0..].iter().filter(|w| w.0 == regs::db_sq(qp.qp_num())).copied().collect();
    assert_eq!(dbs, vec![(regs::db_sq(qp.qp_num()), 2)], "one doorbell for the two posted WRs");
    // Room for 6 more: a list of 7 posts 6 and reports the seventh as the queue being full.
    let bad = qp.post_send_list(&(10..17).map(|i| wr(i, 0)).collect::<Vec<_>>()).unwrap_err();
    assert_eq!(bad.index, 6, "{bad}");
    assert!(matches!(bad.error, Error::QueueFull { outstanding: 8, max: 8, .. }), "{bad}");
    assert_eq!(ctx.state().qps[qp.qp_num() as usize].as_ref().unwrap().sq.outstanding(), 8);
    // A refused first WR posts nothing; an empty list is fine.
    let writes1 = dev.writes.borrow().len();
    assert_eq!(qp.post_send_list(&[wr(20, 0)]).unwrap_err().index, 0);
    assert_eq!(dev.writes.borrow().len(), writes1, "nothing written");
    qp.post_send_list(&[]).unwrap();
    // Receive lists alike: a WR beyond its MR stops the list there.
    let bad = qp
        .post_recv_list(&[
            RecvWr { wr_id: 1, sg_list: &[m.sge(0, 64)] },
            RecvWr { wr_id: 2, sg_list: &[m.sge(4095, 2)] },
        ])
        .unwrap_err();
    assert_eq!(bad.index, 1, "{bad}");
    assert_eq!(ctx.state().qps[qp.qp_num() as usize].as_ref().unwrap().rq.outstanding(), 1);
}

/// Application memory that records when it is dropped.
struct Tracked {
    bytes: Vec<u8>,
    dropped: Arc<std::sync::atomic::AtomicBool>,
}

impl AsMut<[u8]> for Tracked {
    fn as_mut(&mut self) -> &mut [u8] {
        &mut self.bytes
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.dropped.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

fn tracked(len: usize) -> (Tracked, Arc<std::sync::atomic::AtomicBool>) {
    let dropped = Arc::new(std::sync::atomic::AtomicBool::new(false));
    (Tracked { bytes: (0..len).map(|i| i as u8).collect(), dropped: dropped.clone() }, dropped)
}

#[test]
fn an_mr_on_application_memory_names_its_own_address_and_reaches_it_directly() {
    use std::sync::atomic::Ordering::SeqCst;
    let dev = MockDev::new();
    let ctx = mock::open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let (mem, dropped) = tracked(5000);
    let ptr = mem.bytes.as_ptr() as u64;
    let dma_bufs = dev.mem.borrow().len();
    let m = pd.reg_mr_on(mem, AccessFlags::LOCAL_WRITE).unwrap();
    assert!(m.is_app_memory());
    // The entry: the memory's own address as VA, the bus address the device mapped as IOVA.
    let (_, w) = dev.last_commit(regs::REG_MR_COMMIT);
    assert_eq!((m.addr(), mr::VA_BASE.get(&w)), (ptr, ptr));
    assert_eq!(mr::IOVA_BASE.get(&w), m.bus_addr());
    assert_eq!(mr::LENGTH.get(&w), 5000);
    assert_eq!(
        dev.host.borrow().get(&m.bus_addr()).map(|&(p, l, a)| (p as u64, l, a.device_write)),
        Some((ptr, 5000, true))
    );
    // CPU reads and writes touch the memory itself, never the device's copy API.
    let mut got = [0u8; 4];
    m.read(4996, &mut got).unwrap();
    assert_eq!(got, [4996u32 as u8, 4997u32 as u8, 4998u32 as u8, 4999u32 as u8]);
    m.write(10, b"rnic").unwrap();
    // SAFETY: the MR keeps the 5000 bytes at `ptr` allocated.
    assert_eq!(unsafe { std::slice::from_raw_parts((ptr + 10) as *const u8, 4) }, b"rnic");
    assert!(m.write(4997, b"rnic").is_err(), "past the end");
    assert_eq!(dev.mem.borrow().len(), dma_bufs, "no DMA memory allocated");
    // Deregistration unmaps it and then drops the memory.
    m.dereg_mr().unwrap();
    assert!(dev.host.borrow().is_empty());
    assert!(dropped.load(SeqCst));
    // A failed deregistration never drops it: the NIC may still reach it.
    let (mem, dropped) = tracked(64);
    let m = pd.reg_mr_on(mem, AccessFlags::LOCAL_WRITE).unwrap();
    dev.fence_stuck.set(true);
    assert!(matches!(m.dereg_mr().unwrap_err().error(), Error::FenceTimeout { .. }));
    dev.fence_stuck.set(false);
    assert!(!dropped.load(SeqCst), "leaked, not freed under the NIC");
    assert_eq!(dev.host.borrow().len(), 1, "still mapped");
    // Empty memory is refused before anything is taken.
    assert!(matches!(pd.reg_mr_on(Vec::<u8>::new(), AccessFlags::empty()), Err(Error::BadSize { .. })));
}
