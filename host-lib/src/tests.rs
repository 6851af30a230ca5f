//! Library tests against the mock device (no RTL): register programming,
//! ring math in context, CQ sizing, completion matching and flushing.

use crate::mock::{self, MockDev};
use crate::*;
use rnic_spec::desc::{cqe_op, cqe_status, Cqe, SendWqe};
use rnic_spec::regs::{self, cq, mr, qpc};
use std::rc::Rc;
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
    let qp = pd
        .create_qp(QpInitAttr { send_cq: cq.clone(), recv_cq: cq.clone(), max_send_wr: sq, max_recv_wr: rq })
        .unwrap();
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
    let bad = Rc::new(MockDev { id: 0xdead_beef, ..Rc::try_unwrap(MockDev::new()).ok().unwrap() });
    assert!(matches!(open_device(bad as Rc<dyn Device>, mock::addr(1)), Err(Error::BadDeviceId { .. })));
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

    let qp =
        pd.create_qp(QpInitAttr { send_cq: c.clone(), recv_cq: c.clone(), max_send_wr: 60, max_recv_wr: 8 }).unwrap();
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
    let a =
        pd.create_qp(QpInitAttr { send_cq: c.clone(), recv_cq: c.clone(), max_send_wr: 32, max_recv_wr: 16 }).unwrap();
    let e = pd
        .create_qp(QpInitAttr { send_cq: c.clone(), recv_cq: c.clone(), max_send_wr: 16, max_recv_wr: 1 })
        .unwrap_err();
    assert!(matches!(e, Error::CqTooSmall { entries: 64, committed: 48, needed: 17, .. }), "{e}");
    let b =
        pd.create_qp(QpInitAttr { send_cq: c.clone(), recv_cq: c.clone(), max_send_wr: 16, max_recv_wr: 0 }).unwrap();
    drop(a);
    // Destroying a QP returns its reservation.
    let _c2 =
        pd.create_qp(QpInitAttr { send_cq: c.clone(), recv_cq: c.clone(), max_send_wr: 48, max_recv_wr: 0 }).unwrap();
    drop(b);
    let big = pd.create_qp(QpInitAttr { send_cq: c.clone(), recv_cq: c.clone(), max_send_wr: 1 << 16, max_recv_wr: 0 });
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
    for round in 0..3u32 {
        let wrs: Vec<SendWr> = (0..3)
            .map(|i| SendWr {
                wr_id: (round * 10 + i) as u64,
                opcode: WrOpcode::RdmaWrite { remote_addr: 0xAB00 + i as u64, rkey: 0x1234 },
                sg: m.sge(i as u64 * 100, 100 + i),
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
        let wcs = c.poll_cq(10).unwrap();
        assert_eq!(
            wcs.iter().map(|w| w.wr_id).collect::<Vec<_>>(),
            vec![(round * 10) as u64, (round * 10 + 1) as u64, (round * 10 + 2) as u64]
        );
        assert!(wcs.iter().all(|w| w.status == WcStatus::Success && w.opcode == WcOpcode::RdmaWrite));
        assert_eq!(wcs.iter().map(|w| w.byte_len).collect::<Vec<_>>(), vec![100, 101, 102]);
        idx += 3;
    }
    assert!(c.poll_cq(4).unwrap().is_empty());
    let e = qp.post_send(&SendWr { wr_id: 0, opcode: WrOpcode::Send, sg: m.sge(4000, 97) }).unwrap_err();
    assert!(matches!(e, Error::OutOfBounds { offset: 4000, len: 97, mr_len: 4096, .. }), "{e}");
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
    for n in 0..40u32 {
        qp.post_recv(&RecvWr { wr_id: 1000 + n as u64, sg: m.sge(0, 64) }).unwrap();
        assert!(c.poll_cq(1).unwrap().is_empty(), "the previous pass's CQE must not be taken as new");
        dev.put_cqe(base, log2, n, cqe(qp.qp_num(), n as u16, 0, cqe_op::RECV, 7, ring::cqe_owner_valid(n, log2)));
        let w = c.poll_cq(4).unwrap();
        assert_eq!(w.len(), 1);
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
    let wr = |id| SendWr { wr_id: id, opcode: WrOpcode::RdmaWrite { remote_addr: 0, rkey: 0xBAD }, sg: m.sge(0, 8) };
    bad.post_send_batch(&[wr(1), wr(2), wr(3)]).unwrap();
    bad.post_recv(&RecvWr { wr_id: 9, sg: m.sge(0, 8) }).unwrap();
    good.post_send_batch(&[wr(11), wr(12)]).unwrap();
    dev.put_cqe(base, log2, 0, cqe(good.qp_num(), 0, 0, cqe_op::RDMA_WRITE, 8, 1));
    dev.put_cqe(base, log2, 1, cqe(bad.qp_num(), 0, cqe_status::REM_ACCESS_ERR, cqe_op::RDMA_WRITE, 8, 1));
    let w = c.poll_cq(16).unwrap();
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
    assert_eq!(c.poll_cq(4).unwrap()[0].status, WcStatus::WrFlushErr);
    dev.put_cqe(base, log2, 2, cqe(good.qp_num(), 1, 0, cqe_op::RDMA_WRITE, 8, 1));
    assert_eq!(c.poll_cq(4).unwrap()[0].wr_id, 12);
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
    qp.post_send(&SendWr { wr_id: 1, opcode: WrOpcode::Send, sg: m.sge(0, 4) }).unwrap();
    dev.put_cqe(base, log2, 0, cqe(qp.qp_num(), 5, 0, cqe_op::SEND, 4, 1));
    let e = c.poll_cq(1).unwrap_err();
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
    qp.post_send(&SendWr { wr_id: 1, opcode: WrOpcode::Send, sg: m.sge(0, 4) }).unwrap();
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
    let qp =
        pd.create_qp(QpInitAttr { send_cq: c.clone(), recv_cq: c.clone(), max_send_wr: 4, max_recv_wr: 4 }).unwrap();
    let send = SendWr { wr_id: 1, opcode: WrOpcode::Send, sg: m.sge(0, 4) };
    assert!(matches!(
        qp.post_recv(&RecvWr { wr_id: 1, sg: m.sge(0, 4) }),
        Err(Error::BadState { state: QpState::Reset, .. })
    ));
    qp.modify(&QpAttr::init()).unwrap();
    assert!(matches!(qp.post_send(&send), Err(Error::BadState { state: QpState::Init, .. })));
    qp.post_recv(&RecvWr { wr_id: 1, sg: m.sge(0, 4) }).unwrap();
    assert!(matches!(qp.post_recv(&RecvWr { wr_id: 2, sg: m2.sge(0, 4) }), Err(Error::PdMismatch { .. })));
    qp.modify(&QpAttr::rtr(mock::addr(2), 3, 0, Mtu::Mtu256)).unwrap();
    // The receive posted in INIT is announced again after the responder reset.
    assert_eq!(*dev.writes.borrow().last().unwrap(), (regs::db_rq(qp.qp_num()), 1));
}
