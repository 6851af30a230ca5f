//! Inline sends and the WQE push window, end to end.
//!
//! - An inline WR's payload is copied at post time: the source is
//!   overwritten right after each post, and every destination byte is still
//!   the original, for every size from 1 to `MAX_INLINE_DATA`, WRITE and
//!   SEND, with the push window on and off, and in batches that go round the
//!   inline buffer's ring.
//! - A single WR to an idle SQ is pushed: the NIC's `SQ_PUSHED` counter
//!   counts each one, and none when the push is off or WRs come in batches.
//! - The NIC uses the push slot only when it is whole and current: pushes
//!   torn by a missing word, and a push committed before a QP commit, are
//!   ignored (the WQE comes from the ring), while the same whole push is used
//!   (a positive control: it sends what the push words say).

use rnic::{AccessFlags, Mr, Mtu, Qp, QpInitAttr, RecvWr, SendFlags, SendWr, WcOpcode, WcStatus, WrOpcode};
use rnic_spec::desc::{send_op, wqe_flags, SendWqe};
use rnic_spec::regs::{self, counters};
use rnic_tests::{assert_no_violations, assert_same, fill_sentinel, pair, read_all, stream, wait, Nics, World, SEED};
use rnic_tools::bench::connect;
use rnic_tools::pattern;
use zerocopy::IntoBytes;

/// Bytes of each message's destination slot.
const SLOT: usize = 320;

fn pushed(nics: &Nics) -> u64 {
    nics.cluster.lock().read_reg(0, counters::SQ_PUSHED).unwrap()
}

fn inline_wr<'a>(k: u64, opcode: WrOpcode, src: &'a Mr, len: u32) -> SendWr<'a> {
    SendWr { wr_id: k, send_flags: SendFlags::SIGNALED | SendFlags::INLINE, opcode, sg_list: src.sge(0, len).into() }
}

/// Posts one inline WR per size, one at a time (each to an idle SQ), the
/// source overwritten right after the post; returns what the destination must hold.
fn one_at_a_time(w: &World, sizes: &[u32], send: bool, src: &Mr, dst: &Mr, mut want: Vec<u8>) -> Vec<u8> {
    let (a, b) = &w.conns[0];
    for (k, &size) in sizes.iter().enumerate() {
        let data = pattern::make(SEED, stream(send as u32, k as u32), size as usize);
        src.write(0, &data).unwrap();
        let at = (k * SLOT) as u64;
        let opcode = if send {
            b.post_recv(&RecvWr { wr_id: k as u64, sg_list: &[dst.sge(at, size)] }).unwrap();
            WrOpcode::Send
        } else {
            WrOpcode::RdmaWrite { remote_addr: dst.addr() + at, rkey: dst.rkey() }
        };
        a.post_send(&inline_wr(k as u64, opcode, src, size)).unwrap();
        src.write(0, &vec![0xA5; size as usize]).unwrap();
        want[at as usize..at as usize + size as usize].copy_from_slice(&data);
        let wc = &wait(&w.cq_a, 1, size as u64)[0];
        assert_eq!((wc.wr_id, wc.status, wc.byte_len), (k as u64, WcStatus::Success, size), "size {size}: {wc:?}");
        if send {
            let rc = &wait(&w.cq_b, 1, 0)[0];
            assert_eq!((rc.status, rc.opcode, rc.byte_len), (WcStatus::Success, WcOpcode::Recv, size), "{rc:?}");
        }
    }
    want
}

#[test]
fn inline_payloads_are_copied_at_post_every_size() {
    let nics = pair();
    {
        let w = World::inline(&nics, 1, 8, Mtu::Mtu1024, rnic::MAX_INLINE_DATA);
        assert!(w.ctx_a.wqe_push(), "the NIC announces the push window (REG_CAPS) and the library uses it");
        let sizes: Vec<u32> = (1..=rnic::MAX_INLINE_DATA).collect();
        let src = w.pd_a.reg_mr(SLOT, AccessFlags::empty()).unwrap();
        let dst = w.pd_b.reg_mr(sizes.len() * SLOT, AccessFlags::REMOTE_WRITE | AccessFlags::LOCAL_WRITE).unwrap();
        for send in [false, true] {
            let p0 = pushed(&nics);
            let want = one_at_a_time(&w, &sizes, send, &src, &dst, fill_sentinel(&dst));
            assert_same(if send { "inline SENDs" } else { "inline WRITEs" }, &read_all(&dst), &want, SLOT, 1, 0);
            assert_eq!(pushed(&nics) - p0, sizes.len() as u64, "every post to the idle SQ is pushed");
        }
        // Without the push the NIC fetches WQE and payload (the library's copy) by DMA.
        w.ctx_a.set_wqe_push(false);
        let few = [1, 2, 63, 64, 65, 200, 256];
        let p0 = pushed(&nics);
        let want = one_at_a_time(&w, &few, false, &src, &dst, fill_sentinel(&dst));
        assert_same("inline WRITEs, no push", &read_all(&dst), &want, SLOT, 1, 0);
        assert_eq!(pushed(&nics), p0, "nothing pushed");
        w.ctx_a.set_wqe_push(true);
        // Batches (never pushed) go round the 8-slot inline ring; each WR's source slot is overwritten after the post.
        let (a, _) = &w.conns[0];
        let srcs = w.pd_a.reg_mr(8 * SLOT, AccessFlags::empty()).unwrap();
        let mut want = fill_sentinel(&dst);
        for round in 0..5u32 {
            let sizes: Vec<u32> = (0..8).map(|i| 1 + (round * 97 + i * 61) % rnic::MAX_INLINE_DATA).collect();
            let mut wrs = Vec::new();
            for (i, &size) in sizes.iter().enumerate() {
                let m = (round * 8) as usize + i;
                let data = pattern::make(SEED, stream(2, m as u32), size as usize);
                srcs.write((i * SLOT) as u64, &data).unwrap();
                want[m * SLOT..m * SLOT + size as usize].copy_from_slice(&data);
                let opcode = WrOpcode::RdmaWrite { remote_addr: dst.addr() + (m * SLOT) as u64, rkey: dst.rkey() };
                wrs.push(SendWr {
                    wr_id: m as u64,
                    send_flags: SendFlags::SIGNALED | SendFlags::INLINE,
                    opcode,
                    sg_list: srcs.sge((i * SLOT) as u64, size).into(),
                });
            }
            let p0 = pushed(&nics);
            a.post_send_batch(&wrs).unwrap();
            srcs.write(0, &vec![0x5A; 8 * SLOT]).unwrap();
            let wcs = wait(&w.cq_a, 8, 8 * SLOT as u64);
            assert!(wcs.iter().all(|c| c.status == WcStatus::Success), "{wcs:?}");
            assert_eq!(pushed(&nics), p0, "a batch is not pushed");
        }
        assert_same("inline WRITE batches", &read_all(&dst), &want, SLOT, 1, 0);
        // The library refuses what cannot go inline, with the reason.
        let long = inline_wr(0, WrOpcode::Send, &srcs, rnic::MAX_INLINE_DATA + 1);
        let e = a.post_send(&long).unwrap_err().to_string();
        assert!(e.contains("inline") && e.contains("max_inline_data 256"), "{e}");
        let land = w.pd_a.reg_mr(64, AccessFlags::LOCAL_WRITE).unwrap();
        let read = inline_wr(0, WrOpcode::RdmaRead { remote_addr: dst.addr(), rkey: dst.rkey() }, &land, 8);
        let e = a.post_send(&read).unwrap_err().to_string();
        assert!(e.contains("RDMA READ"), "{e}");
    }
    assert_no_violations(&nics);
}

/// The 16 words of a push of `wqe` with `payload`.
fn push_words(wqe: &SendWqe, payload: &[u8; 64]) -> Vec<u64> {
    let mut b = wqe.as_bytes().to_vec();
    b.extend_from_slice(payload);
    b.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect()
}

fn raw_push(w: &World, words: &[u64], skip: Option<usize>) {
    for (i, &v) in words.iter().enumerate() {
        if Some(i) != skip {
            w.ctx_a.device().write_reg(regs::push_word(i), v).unwrap();
        }
    }
}

/// A WRITE of 32 bytes of 0xEE into `trap`, pushed with its payload (the
/// words carry 64 bytes of 0xEE: the NIC must send only the first 32).
fn bogus(trap: &Mr, src: &Mr) -> SendWqe {
    SendWqe {
        opcode: send_op::RDMA_WRITE,
        flags: wqe_flags::PUSH_PAYLOAD,
        length: 32.into(),
        local_addr: src.addr().into(),
        lkey: src.lkey().into(),
        rkey: trap.rkey().into(),
        remote_addr: trap.addr().into(),
        ..Default::default()
    }
}

/// A plain (not pushed) WRITE of message `k` from `src` into slot `k` of `dst`; waits for its completion.
fn plain_write(w: &World, qp: &Qp, k: usize, src: &Mr, dst: &Mr, want: &mut [u8]) {
    let data = pattern::make(SEED, stream(3, k as u32), 100);
    src.write(0, &data).unwrap();
    want[k * SLOT..k * SLOT + 100].copy_from_slice(&data);
    let opcode = WrOpcode::RdmaWrite { remote_addr: dst.addr() + (k * SLOT) as u64, rkey: dst.rkey() };
    qp.post_send(&SendWr { wr_id: k as u64, send_flags: SendFlags::SIGNALED, opcode, sg_list: src.sge(0, 100).into() })
        .unwrap();
    let wc = &wait(&w.cq_a, 1, 100)[0];
    assert_eq!((wc.wr_id, wc.status), (k as u64, WcStatus::Success), "{wc:?}");
}

#[test]
fn the_push_slot_is_used_only_whole_and_current() {
    let nics = pair();
    {
        let w = World::inline(&nics, 1, 8, Mtu::Mtu1024, 64);
        let (a, _) = &w.conns[0];
        let src = w.pd_a.reg_mr(SLOT, AccessFlags::empty()).unwrap();
        let dst = w.pd_b.reg_mr(8 * SLOT, AccessFlags::REMOTE_WRITE).unwrap();
        let trap = w.pd_b.reg_mr(SLOT, AccessFlags::REMOTE_WRITE).unwrap();
        let mut want = fill_sentinel(&dst);
        let trap_want = fill_sentinel(&trap);
        let words = push_words(&bogus(&trap, &src), &[0xEE; 64]);
        // The library's own posts go without a push here: the slot holds only what the test writes.
        w.ctx_a.set_wqe_push(false);
        let p0 = pushed(&nics);
        // Torn pushes (a word missing) followed by the post's doorbell: not committed.
        for (k, skip) in [(0, Some(15)), (1, Some(0)), (2, Some(7))] {
            raw_push(&w, &words, skip);
            plain_write(&w, a, k, &src, &dst, &mut want);
        }
        assert_eq!(pushed(&nics), p0, "no torn push is taken");
        assert_same("WRITEs after torn pushes", &read_all(&dst), &want, SLOT, 1, 0);
        assert_same("the trap region", &read_all(&trap), &trap_want, SLOT, 1, 0);

        // A whole push committed by a doorbell while the QP cannot send, then a QP commit (connecting it): dropped.
        let cq = w.ctx_a.create_cq(8).unwrap();
        let cq_b = w.ctx_b.create_cq(8).unwrap();
        let attr = |cq: &rnic::Cq| QpInitAttr::new(cq, cq, 4, 4);
        let q2 = w.pd_a.create_qp(attr(&cq)).unwrap();
        let r2 = w.pd_b.create_qp(attr(&cq_b)).unwrap();
        raw_push(&w, &words, None);
        w.ctx_a.device().write_reg(regs::db_sq(q2.qp_num()), 1).unwrap();
        for _ in 0..200 {
            w.ctx_a.device().wait().unwrap();
        }
        connect(&w.ctx_a, &q2, 0x10, &w.ctx_b, &r2, 0x20, Mtu::Mtu1024).unwrap();
        let data = pattern::make(SEED, stream(4, 0), 100);
        src.write(0, &data).unwrap();
        want[3 * SLOT..3 * SLOT + 100].copy_from_slice(&data);
        let opcode = WrOpcode::RdmaWrite { remote_addr: dst.addr() + (3 * SLOT) as u64, rkey: dst.rkey() };
        q2.post_send(&SendWr { wr_id: 3, send_flags: SendFlags::SIGNALED, opcode, sg_list: src.sge(0, 100).into() })
            .unwrap();
        let wc = &cq.wait_cq(1, 200_000).unwrap()[0];
        assert_eq!((wc.wr_id, wc.status), (3, WcStatus::Success), "{wc:?}");
        assert_eq!(pushed(&nics), p0, "a push committed before a QP commit is dropped");
        assert_same("the WRITE after the dropped push", &read_all(&dst), &want, SLOT, 1, 0);
        assert_same("the trap region", &read_all(&trap), &trap_want, SLOT, 1, 0);

        // Positive control: the same whole push before the post's doorbell is taken, and sends what its words say.
        raw_push(&w, &words, None);
        let opcode = WrOpcode::RdmaWrite { remote_addr: dst.addr() + (4 * SLOT) as u64, rkey: dst.rkey() };
        a.post_send(&SendWr { wr_id: 4, send_flags: SendFlags::SIGNALED, opcode, sg_list: src.sge(0, 100).into() })
            .unwrap();
        let wc = &wait(&w.cq_a, 1, 100)[0];
        assert_eq!((wc.wr_id, wc.status), (4, WcStatus::Success), "{wc:?}");
        assert_eq!(pushed(&nics), p0 + 1, "the whole push is taken");
        let mut trap_now = trap_want.clone();
        trap_now[..32].fill(0xEE);
        assert_same("the trap region after the whole push", &read_all(&trap), &trap_now, SLOT, 1, 0);
        assert_same("the destination (untouched by the pushed WQE)", &read_all(&dst), &want, SLOT, 1, 0);
        drop((q2, r2));
    }
    assert_no_violations(&nics);
}

/// A WQE's opcode must be one the host may post (WRITE, SEND, with
/// immediate, READ): a pushed WQE with any other (8 is the NIC's own READ
/// response job) completes with `LocQpOpErr` and sends nothing; a host
/// resend carrying such a WQE is dropped and counted in `sq_rewind_drop`.
#[test]
fn a_wqe_opcode_the_host_may_not_post_is_refused() {
    let nics = pair();
    let rx_frames = |nics: &Nics| nics.cluster.lock().read_reg(1, counters::RX_FRAMES).unwrap();
    for op in [5u8, 8, 255] {
        let w = World::inline(&nics, 1, 8, Mtu::Mtu1024, 64);
        let (a, _) = &w.conns[0];
        let src = w.pd_a.reg_mr(SLOT, AccessFlags::empty()).unwrap();
        let dst = w.pd_b.reg_mr(2 * SLOT, AccessFlags::REMOTE_WRITE).unwrap();
        let trap = w.pd_b.reg_mr(SLOT, AccessFlags::REMOTE_WRITE).unwrap();
        let dst_want = fill_sentinel(&dst);
        let trap_want = fill_sentinel(&trap);
        src.write(0, &[0xAB; 64]).unwrap();
        // A host resend carrying the bad WQE: dropped at the NIC's door.
        let wqe = SendWqe { opcode: op, ..bogus(&trap, &src) };
        let drops0 = w.ctx_a.counters().unwrap().into_iter().find(|(n, _)| *n == "sq_rewind_drop").unwrap().1;
        let mut st = [0u64; regs::NUM_STAGE];
        regs::rewind::ONE.put(&mut st, 1);
        let bytes = wqe.as_bytes();
        for (i, c) in bytes[..regs::rewind::WQE_BYTES].chunks_exact(8).enumerate() {
            st[regs::rewind::WQE_WORD + i] = u64::from_le_bytes(c.try_into().unwrap());
        }
        let dev = w.ctx_a.device().clone();
        for (i, v) in st.iter().enumerate() {
            dev.write_reg(regs::stage(i), *v).unwrap();
        }
        dev.write_reg(regs::REG_SQ_REWIND, a.qp_num() as u64).unwrap();
        let drops = w.ctx_a.counters().unwrap().into_iter().find(|(n, _)| *n == "sq_rewind_drop").unwrap().1;
        assert_eq!(drops, drops0 + 1, "opcode {op}: the resend is dropped and counted");
        // The same WQE pushed before a post's doorbell: the NIC takes it and refuses it.
        w.ctx_a.set_wqe_push(false);
        let frames0 = rx_frames(&nics);
        raw_push(&w, &push_words(&wqe, &[0xEE; 64]), None);
        let opcode = WrOpcode::RdmaWrite { remote_addr: dst.addr(), rkey: dst.rkey() };
        a.post_send(&SendWr { wr_id: 7, send_flags: SendFlags::SIGNALED, opcode, sg_list: src.sge(0, 64).into() })
            .unwrap();
        let wc = &wait(&w.cq_a, 1, 100)[0];
        assert_eq!((wc.wr_id, wc.status), (7, WcStatus::LocQpOpErr), "opcode {op}: {wc:?}");
        for _ in 0..500 {
            w.ctx_a.device().wait().unwrap();
        }
        assert_eq!(rx_frames(&nics), frames0, "opcode {op}: nothing reached the peer");
        assert_same("the destination", &read_all(&dst), &dst_want, SLOT, 1, 0);
        assert_same("the trap region", &read_all(&trap), &trap_want, SLOT, 1, 0);
    }
    assert_no_violations(&nics);
}
