//! Unsignaled send WRs (`SendFlags` without `SIGNALED`), as ibverbs has
//! them: a WR that succeeds unsignaled gets no work completion, a signaled
//! one does; a failure is always reported, with the flushes behind it; the
//! SQ slots of unsignaled WRs are free again once a poll passes their
//! NIC-written completions. Every destination byte is checked.

use rnic::{AccessFlags, Mtu, QpState, RecvWr, SendFlags, SendWr, WcOpcode, WcStatus, WrOpcode};
use rnic_tests::{assert_no_violations, assert_same, fill_sentinel, pair, read_all, stream, wait, World, SEED};
use rnic_tools::pattern;

/// WRs per QP and round; the SQ holds exactly this many.
const DEPTH: u32 = 24;
/// Bytes of each message's slot (the largest message is smaller).
const SLOT: usize = 3072;

fn size_of(m: u32) -> u32 {
    1 + (m * 397) % 3000
}

fn flags(signaled: bool) -> SendFlags {
    if signaled {
        SendFlags::SIGNALED
    } else {
        SendFlags::empty()
    }
}

#[test]
fn only_signaled_successes_and_every_failure_complete() {
    let nics = pair();
    {
        let w = World::new(&nics, 2, DEPTH, Mtu::Mtu1024);
        let (writer, _) = &w.conns[0];
        let (sender, receiver) = &w.conns[1];
        // Two rounds of WRITEs on QP 0, then one of SENDs on QP 1, each in its own third of the MRs.
        let total = 3 * DEPTH as usize * SLOT;
        let src = w.pd_a.reg_mr(total, AccessFlags::empty()).unwrap();
        let dst = w.pd_b.reg_mr(total, AccessFlags::REMOTE_WRITE | AccessFlags::LOCAL_WRITE).unwrap();
        let mut want = fill_sentinel(&dst);
        let off = |k: u32| k as u64 * SLOT as u64;
        for k in 0..3 * DEPTH {
            let data = pattern::make(SEED, stream(k / DEPTH, k % DEPTH), size_of(k) as usize);
            src.write(off(k), &data).unwrap();
            want[off(k) as usize..off(k) as usize + data.len()].copy_from_slice(&data);
        }
        let write = |k: u32, signaled: bool| SendWr {
            wr_id: k as u64,
            send_flags: flags(signaled),
            opcode: WrOpcode::RdmaWrite { remote_addr: dst.addr() + off(k), rkey: dst.rkey() },
            sg_list: src.sge(off(k), size_of(k)).into(),
        };
        // Round 1: every fourth WRITE signaled (the last one included).
        let wrs: Vec<SendWr> = (0..DEPTH).map(|k| write(k, k % 4 == 3)).collect();
        writer.post_send_batch(&wrs).unwrap();
        let wcs = wait(&w.cq_a, 6, total as u64);
        let got: Vec<_> = wcs.iter().map(|c| (c.wr_id, c.status, c.opcode, c.byte_len)).collect();
        let signaled: Vec<_> = (0..DEPTH)
            .filter(|k| k % 4 == 3)
            .map(|k| (k as u64, WcStatus::Success, WcOpcode::RdmaWrite, size_of(k)))
            .collect();
        assert_eq!(got, signaled, "round 1: the signaled WRITEs only");
        // Round 2: a full SQ again (the unsignaled WRs' slots were freed), only the last one signaled.
        let wrs: Vec<SendWr> = (DEPTH..2 * DEPTH).map(|k| write(k, k == 2 * DEPTH - 1)).collect();
        writer.post_send_batch(&wrs).unwrap();
        let wcs = wait(&w.cq_a, 1, total as u64);
        assert_eq!((wcs[0].wr_id, wcs[0].status), ((2 * DEPTH - 1) as u64, WcStatus::Success), "round 2");
        // SENDs, all unsignaled but the last: every receive still completes.
        let sges: Vec<_> = (2 * DEPTH..3 * DEPTH).map(|k| (k, dst.sge(off(k), SLOT as u32))).collect();
        let recvs: Vec<RecvWr> =
            sges.iter().map(|(k, sg)| RecvWr { wr_id: *k as u64, sg_list: std::slice::from_ref(sg) }).collect();
        receiver.post_recv_batch(&recvs).unwrap();
        let sends: Vec<SendWr> = (2 * DEPTH..3 * DEPTH)
            .map(|k| SendWr {
                wr_id: k as u64,
                send_flags: flags(k == 3 * DEPTH - 1),
                opcode: WrOpcode::Send,
                sg_list: src.sge(off(k), size_of(k)).into(),
            })
            .collect();
        sender.post_send_batch(&sends).unwrap();
        let wcs = wait(&w.cq_a, 1, total as u64);
        assert_eq!((wcs[0].wr_id, wcs[0].opcode), ((3 * DEPTH - 1) as u64, WcOpcode::Send), "the last SEND");
        let rwcs = wait(&w.cq_b, DEPTH as usize, total as u64);
        assert!(
            rwcs.iter()
                .zip(2 * DEPTH..)
                .all(|(c, k)| c.wr_id == k as u64 && c.status == WcStatus::Success && c.byte_len == size_of(k)),
            "receives: {rwcs:?}"
        );
        assert_same("WRITE and SEND destinations", &read_all(&dst), &want, SLOT, 3 * DEPTH, 0);
        // Nothing else comes, however long one waits.
        for _ in 0..2000 {
            w.ctx_a.device().wait().unwrap();
        }
        assert!(
            w.cq_a.poll_cq_vec(4).unwrap().is_empty() && w.cq_b.poll_cq_vec(4).unwrap().is_empty(),
            "extra completions"
        );

        // A failing unsignaled WRITE (bad rkey) between unsignaled good ones: the
        // good one before it completes silently, the failure and the flushes behind it are reported.
        let bad = SendWr {
            wr_id: 100,
            send_flags: SendFlags::empty(),
            opcode: WrOpcode::RdmaWrite { remote_addr: dst.addr(), rkey: dst.rkey() ^ 0x40 },
            sg_list: src.sge(0, 64).into(),
        };
        writer
            .post_send_batch(&[
                write(0, false),
                bad,
                SendWr { wr_id: 101, ..write(1, false) },
                SendWr { wr_id: 102, ..write(2, true) },
            ])
            .unwrap();
        let wcs = wait(&w.cq_a, 3, 4096);
        let got: Vec<_> = wcs.iter().map(|c| (c.wr_id, c.status)).collect();
        assert_eq!(got, vec![(100, WcStatus::RemAccessErr), (101, WcStatus::WrFlushErr), (102, WcStatus::WrFlushErr)]);
        assert_eq!(writer.state(), QpState::Error);
        assert_same("after the failure", &read_all(&dst), &want, SLOT, 3 * DEPTH, 0);
    }
    assert_no_violations(&nics);
}

/// `sq_sig_all`: every send WR of such a QP completes on success, with or
/// without `SIGNALED`; every byte lands.
#[test]
fn sq_sig_all_signals_every_wr() {
    let nics = pair();
    {
        let (ctx_a, ctx_b) = (nics.ctxs[0].clone(), nics.ctxs[1].clone());
        let (pd_a, pd_b) = (ctx_a.alloc_pd().unwrap(), ctx_b.alloc_pd().unwrap());
        let (cq_a, cq_b) = (ctx_a.create_cq(DEPTH).unwrap(), ctx_b.create_cq(DEPTH).unwrap());
        let attr = |cq: &rnic::Cq, sig_all: bool| rnic::QpInitAttr {
            sq_sig_all: sig_all,
            ..rnic::QpInitAttr::new(cq, cq, DEPTH / 2, 0)
        };
        let a = pd_a.create_qp(attr(&cq_a, true)).unwrap();
        let b = pd_b.create_qp(attr(&cq_b, false)).unwrap();
        rnic_tools::bench::connect(&ctx_a, &a, 0x100, &ctx_b, &b, 0x200, Mtu::Mtu1024).unwrap();
        let n = DEPTH / 2;
        let src = pd_a.reg_mr(n as usize * SLOT, AccessFlags::empty()).unwrap();
        let dst = pd_b.reg_mr(n as usize * SLOT, AccessFlags::REMOTE_WRITE).unwrap();
        let mut want = fill_sentinel(&dst);
        let off = |k: u32| k as u64 * SLOT as u64;
        let wrs: Vec<SendWr> = (0..n)
            .map(|k| {
                let data = pattern::make(SEED, stream(7, k), size_of(k) as usize);
                src.write(off(k), &data).unwrap();
                want[off(k) as usize..off(k) as usize + data.len()].copy_from_slice(&data);
                SendWr {
                    wr_id: k as u64,
                    send_flags: flags(k % 3 == 0),
                    opcode: WrOpcode::RdmaWrite { remote_addr: dst.addr() + off(k), rkey: dst.rkey() },
                    sg_list: src.sge(off(k), size_of(k)).into(),
                }
            })
            .collect();
        a.post_send_batch(&wrs).unwrap();
        let wcs = wait(&cq_a, n as usize, n as u64 * SLOT as u64);
        let got: Vec<_> = wcs.iter().map(|c| (c.wr_id, c.status, c.opcode, c.byte_len)).collect();
        let all: Vec<_> = (0..n).map(|k| (k as u64, WcStatus::Success, WcOpcode::RdmaWrite, size_of(k))).collect();
        assert_eq!(got, all, "a completion for every WR, signaled or not");
        assert_same("sq_sig_all WRITEs", &read_all(&dst), &want, SLOT, 1, 0);
        drop((a, b));
    }
    assert_no_violations(&nics);
}
