//! Completion events: completion channels, `req_notify_cq`, `get_cq_event`,
//! backed by the NIC's MSI-X messages (a 4-byte write into the host's
//! interrupt window that the PCIe model turns into an eventfd signal).
//!
//! Checked: an armed CQ's next CQE gives exactly one message and one
//! event, and the CQE is in memory when the message arrives; an unarmed CQ
//! gives none; two CQs on one channel each give their event; a masked
//! vector holds its message (pending bit) until unmasked; a thread blocked
//! in `get_cq_event` wakes when another thread's SEND completes; bad
//! requests get clear errors; every byte moved is checked.

use rnic::{
    AccessFlags, CompChannel, Context, Cq, Error, Mr, Mtu, Pd, Qp, QpInitAttr, RecvWr, SendFlags, SendWr, WcOpcode,
    WcStatus, WrOpcode,
};
use rnic_sim::device::IRQ_DATA_BASE;
use rnic_sim::pcie::MSI_WINDOW;
use rnic_spec::regs;
use rnic_tests::{assert_no_violations, pair, stream, Nics, SEED};
use rnic_tools::bench::{connect, initial_psn};
use rnic_tools::pattern;

/// Cycles to wait for one small message's completion (generous: 400 µs).
const WAIT: u64 = 100_000;
/// Bytes of each message slot.
const SLOT: u64 = 4096;

/// Slot of message `m` on pair `q` (in the source and the destination MR).
fn slot(q: usize, m: u32) -> u64 {
    assert!(m < 32);
    (q as u64 * 32 + m as u64) * SLOT
}

/// NIC0 sends to NIC1 over two QP pairs; NIC1's two receive CQs are on one channel.
struct Setup {
    ctx_a: Context,
    ctx_b: Context,
    ch: CompChannel,
    cq_a: Cq,
    cq_b: [Cq; 2],
    qps: Vec<(Qp, Qp)>,
    src: Mr,
    dst: Mr,
    _pds: (Pd, Pd),
}

fn setup(nics: &Nics) -> Setup {
    let (ctx_a, ctx_b) = (nics.ctxs[0].clone(), nics.ctxs[1].clone());
    let pd_a = ctx_a.alloc_pd().unwrap();
    let pd_b = ctx_b.alloc_pd().unwrap();
    let ch = ctx_b.create_comp_channel().unwrap();
    let cq_a = ctx_a.create_cq(64).unwrap();
    let cq_b = [ctx_b.create_cq_with(32, Some(&ch)).unwrap(), ctx_b.create_cq_with(32, Some(&ch)).unwrap()];
    let mut qps = Vec::new();
    for (i, cq) in cq_b.iter().enumerate() {
        let attr = |cq: &Cq| QpInitAttr::new(cq, cq, 16, 16);
        let a = pd_a.create_qp(attr(&cq_a)).unwrap();
        let b = pd_b.create_qp(attr(cq)).unwrap();
        connect(&ctx_a, &a, initial_psn(SEED, 0, i as u32), &ctx_b, &b, initial_psn(SEED, 1, i as u32), Mtu::Mtu1024)
            .unwrap();
        qps.push((a, b));
    }
    let src = pd_a.reg_mr(64 * SLOT as usize, AccessFlags::empty()).unwrap();
    let dst = pd_b.reg_mr(64 * SLOT as usize, AccessFlags::LOCAL_WRITE).unwrap();
    Setup { ctx_a, ctx_b, ch, cq_a, cq_b, qps, src, dst, _pds: (pd_a, pd_b) }
}

impl Setup {
    /// Message `m` on pair `q`: posts its receive and its SEND (`len` bytes, at most a slot).
    fn send(&self, q: usize, m: u32, len: u32) {
        assert!(len as u64 <= SLOT);
        let data = pattern::make(SEED, stream(q as u32, m), len as usize);
        self.src.write(slot(q, m), &data).unwrap();
        let (a, b) = &self.qps[q];
        b.post_recv(&RecvWr { wr_id: m as u64, sg_list: &[self.dst.sge(slot(q, m), SLOT as u32)] }).unwrap();
        a.post_send(&SendWr {
            wr_id: m as u64,
            send_flags: SendFlags::SIGNALED,
            opcode: WrOpcode::Send,
            sg_list: self.src.sge(slot(q, m), len).into(),
        })
        .unwrap();
    }

    /// Takes the receive completion of message `m` on pair `q` from `cq` (already there) and checks its bytes.
    fn check_recv(&self, cq: &Cq, q: usize, m: u32, len: u32) {
        let wcs = cq.poll_cq_vec(4).unwrap();
        assert_eq!(wcs.len(), 1, "message {m} of pair {q}: one receive completion, got {wcs:?}");
        let c = &wcs[0];
        assert_eq!((c.wr_id, c.status, c.opcode, c.byte_len), (m as u64, WcStatus::Success, WcOpcode::Recv, len));
        let mut got = vec![0u8; len as usize];
        self.dst.read(slot(q, m), &mut got).unwrap();
        assert_eq!(got, pattern::make(SEED, stream(q as u32, m), len as usize), "message {m} of pair {q}: payload");
    }

    /// The requester completions of `n` SENDs.
    fn drain_sends(&self, n: usize) {
        let wcs = self.cq_a.wait_cq(n, WAIT).unwrap();
        assert!(wcs.iter().all(|c| c.status == WcStatus::Success), "{wcs:?}");
    }
}

fn irqs(ctx: &Context) -> u64 {
    ctx.counters().unwrap().into_iter().find(|(n, _)| *n == "irqs").expect("an irqs counter").1
}

fn msis(nics: &Nics, nic: usize) -> Vec<rnic_sim::pcie::Msi> {
    nics.cluster.lock().nic(nic).msis().to_vec()
}

/// Runs the cluster until `pred` holds, at most `limit` cycles; returns whether it held.
fn run_until(nics: &Nics, limit: u64, mut pred: impl FnMut(&Nics) -> bool) -> bool {
    for _ in 0..limit / 16 {
        if pred(nics) {
            return true;
        }
        nics.cluster.lock().run(16);
    }
    pred(nics)
}

#[test]
fn an_armed_cq_gives_one_event_after_its_cqe() {
    let nics = pair();
    let s = setup(&nics);
    let v = s.ch.vector();
    // Not armed: a completion gives no message.
    s.send(0, 0, 100);
    s.drain_sends(1);
    let wcs = s.cq_b[0].wait_cq(1, WAIT).unwrap();
    assert_eq!(wcs[0].wr_id, 0);
    assert_eq!(msis(&nics, 1).len(), 0, "no message for an unarmed CQ");
    assert!(matches!(s.ch.get_cq_event(2_000), Err(Error::EventTimeout { armed: 0, .. })));
    // Armed: the next CQE gives one message, and the CQE is in memory when it arrives.
    s.cq_b[0].req_notify_cq(false).unwrap();
    s.send(0, 1, 1000);
    assert!(run_until(&nics, WAIT, |n| !msis(n, 1).is_empty()), "no MSI-X message after the armed CQ's CQE");
    s.check_recv(&s.cq_b[0], 0, 1, 1000);
    let m = msis(&nics, 1);
    assert_eq!(m.len(), 1);
    assert_eq!((m[0].addr, m[0].data), (MSI_WINDOW.start, IRQ_DATA_BASE + v), "the vector's table entry");
    let ev = s.ch.get_cq_event(WAIT).unwrap();
    assert_eq!(ev.cqn(), s.cq_b[0].cqn(), "the event names the armed CQ");
    ev.ack_cq_events(1).unwrap();
    assert!(matches!(ev.ack_cq_events(1), Err(Error::BadSize { .. })), "one event, one ack");
    // Disarmed by its event: the next completion gives nothing.
    s.send(0, 2, 64);
    let wcs = s.cq_b[0].wait_cq(1, WAIT).unwrap();
    assert_eq!(wcs[0].wr_id, 2);
    assert!(matches!(s.ch.get_cq_event(5_000), Err(Error::EventTimeout { .. })));
    assert_eq!(msis(&nics, 1).len(), 1, "an event disarms the CQ");
    assert_eq!(irqs(&s.ctx_b), 1, "the NIC's count of messages");
    assert_eq!(irqs(&s.ctx_a), 0);
    assert_eq!(nics.cluster.lock().nic(1).dma_stats().msis_unbound, 0);
    s.drain_sends(2);
    assert_no_violations(&nics);
}

#[test]
fn two_cqs_on_one_channel_each_give_their_event() {
    let nics = pair();
    let s = setup(&nics);
    for round in 0..12u32 {
        // Both armed; which pairs send varies: both, only the first, only the second.
        let which: Vec<usize> = match round % 3 {
            0 => vec![0, 1],
            1 => vec![0],
            _ => vec![1],
        };
        s.cq_b[0].req_notify_cq(false).unwrap();
        s.cq_b[1].req_notify_cq(false).unwrap();
        // Arming twice changes nothing.
        s.cq_b[1].req_notify_cq(false).unwrap();
        for &q in &which {
            s.send(q, round, 1 + round * 331 % 4000);
        }
        let mut got = Vec::new();
        for _ in &which {
            let cq = s.ch.get_cq_event(WAIT).unwrap_or_else(|e| panic!("round {round}: {e}"));
            cq.ack_cq_events(1).unwrap();
            got.push(cq.cqn());
        }
        got.sort();
        let want: Vec<u32> = which.iter().map(|&q| s.cq_b[q].cqn()).collect();
        assert_eq!(got, want, "round {round}: one event per CQ that had a CQE");
        for &q in &which {
            let cq = &s.cq_b[q];
            let wcs = cq.wait_cq(1, WAIT).unwrap();
            assert_eq!(wcs[0].wr_id, round as u64);
            let len = 1 + round * 331 % 4000;
            let mut data = vec![0u8; len as usize];
            s.dst.read(slot(q, round), &mut data).unwrap();
            assert_eq!(data, pattern::make(SEED, stream(q as u32, round), len as usize), "round {round} pair {q}");
        }
        s.drain_sends(which.len());
        // The CQ that had nothing is still armed: no event for it.
        if which.len() == 1 {
            assert!(matches!(s.ch.get_cq_event(3_000), Err(Error::EventTimeout { armed: 1, .. })));
            // Its event comes with its next CQE (the next round arms it again, which changes nothing).
        }
    }
    assert!(irqs(&s.ctx_b) >= 8, "messages were sent ({})", irqs(&s.ctx_b));
    assert_eq!(nics.cluster.lock().nic(1).dma_stats().msis_unbound, 0);
    assert_no_violations(&nics);
}

#[test]
fn a_masked_vector_holds_its_message_until_unmasked() {
    let nics = pair();
    let s = setup(&nics);
    let v = s.ch.vector() as usize;
    let dev = s.ctx_b.device().clone();
    // The table reads back what the host's binding wrote; the vector is unmasked.
    assert_eq!(dev.read_reg(regs::msix_addr(v)).unwrap(), MSI_WINDOW.start);
    let ctrl = dev.read_reg(regs::msix_ctrl(v)).unwrap();
    assert_eq!(ctrl, (IRQ_DATA_BASE + v as u32) as u64, "data, not masked");
    // Every other vector is masked after reset.
    for o in (0..regs::MSIX_VECTORS).filter(|&o| o != v) {
        assert_eq!(dev.read_reg(regs::msix_ctrl(o)).unwrap(), regs::MSIX_MASKED, "vector {o}");
    }
    dev.write_reg(regs::msix_ctrl(v), ctrl | regs::MSIX_MASKED).unwrap();
    s.cq_b[0].req_notify_cq(false).unwrap();
    assert_eq!(dev.read_reg(regs::REG_CQ_ARMED).unwrap() >> s.cq_b[0].cqn() & 1, 1, "armed");
    s.send(0, 0, 500);
    let wcs = s.cq_b[0].wait_cq(1, WAIT).unwrap();
    assert_eq!(wcs[0].wr_id, 0);
    assert_eq!(dev.read_reg(regs::REG_CQ_ARMED).unwrap() >> s.cq_b[0].cqn() & 1, 0, "disarmed by the CQE");
    assert_eq!(dev.read_reg(regs::MSIX_PBA).unwrap(), 1 << v, "the message is pending");
    nics.cluster.lock().run(5_000);
    assert!(msis(&nics, 1).is_empty(), "a masked vector sends nothing");
    dev.write_reg(regs::msix_ctrl(v), ctrl).unwrap();
    assert!(run_until(&nics, WAIT, |n| msis(n, 1).len() == 1), "unmasking sends the pending message");
    assert_eq!(dev.read_reg(regs::MSIX_PBA).unwrap(), 0);
    let ev = s.ch.get_cq_event(WAIT).unwrap();
    assert_eq!(ev.cqn(), s.cq_b[0].cqn());
    ev.ack_cq_events(1).unwrap();
    s.drain_sends(1);
    assert_no_violations(&nics);
}

#[test]
fn a_blocked_waiter_wakes_when_another_thread_completes() {
    let nics = pair();
    let s = setup(&nics);
    const ROUNDS: u32 = 10;
    std::thread::scope(|scope| {
        let (go_tx, go_rx) = std::sync::mpsc::channel::<u32>();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<u32>();
        let s = &s;
        // The waiter: arms, tells the poster to go, blocks until the event, then polls.
        let waiter = scope.spawn(move || {
            for m in 0..ROUNDS {
                s.cq_b[0].req_notify_cq(false).unwrap();
                go_tx.send(m).unwrap();
                let cq = s.ch.get_cq_event(10 * WAIT).unwrap_or_else(|e| panic!("round {m}: {e}"));
                assert_eq!(cq.cqn(), s.cq_b[0].cqn());
                cq.ack_cq_events(1).unwrap();
                // The event came after the CQE was written: it is there to poll.
                let wcs = cq.poll_cq_vec(2).unwrap();
                assert_eq!(wcs.len(), 1, "round {m}: the completion is in the CQ when its event returns");
                assert_eq!((wcs[0].wr_id, wcs[0].status), (m as u64, WcStatus::Success));
                done_tx.send(m).unwrap();
            }
        });
        for m in 0..ROUNDS {
            assert_eq!(go_rx.recv().unwrap(), m);
            s.send(0, m, 100 + m * 397);
            assert_eq!(done_rx.recv().unwrap(), m);
            s.drain_sends(1);
        }
        waiter.join().unwrap();
    });
    for m in 0..ROUNDS {
        let len = 100 + m * 397;
        let mut got = vec![0u8; len as usize];
        s.dst.read(slot(0, m), &mut got).unwrap();
        assert_eq!(got, pattern::make(SEED, stream(0, m), len as usize), "message {m}");
    }
    assert_eq!(irqs(&s.ctx_b), ROUNDS as u64);
    assert_no_violations(&nics);
}

#[test]
fn bad_requests_get_clear_errors() {
    let nics = pair();
    let s = setup(&nics);
    // A CQ without a channel, solicited-only events, a channel of another context.
    assert!(matches!(s.cq_a.req_notify_cq(false), Err(Error::NoChannel { .. })));
    assert!(matches!(s.cq_b[0].req_notify_cq(true), Err(Error::Unsupported { .. })));
    assert!(matches!(s.ctx_a.create_cq_with(8, Some(&s.ch)), Err(Error::Unsupported { .. })));
    // Every vector taken: the next channel fails; a dropped channel's vector is free again.
    let more: Vec<CompChannel> = (1..regs::MSIX_VECTORS).map(|_| s.ctx_b.create_comp_channel().unwrap()).collect();
    assert!(matches!(s.ctx_b.create_comp_channel(), Err(Error::Exhausted { .. })));
    let freed = more[0].vector();
    drop(more);
    assert_eq!(s.ctx_b.create_comp_channel().unwrap().vector(), freed);
    // Arming a CQN past the table, writing past the MSI-X table or to the pending bits: ignored and counted.
    let dev = s.ctx_b.device().clone();
    let reg_err = |ctx: &Context| ctx.counters().unwrap().into_iter().find(|(n, _)| *n == "reg_err").unwrap().1;
    let before = reg_err(&s.ctx_b);
    dev.write_reg(regs::REG_CQ_ARM, rnic_spec::params::NUM_CQS as u64).unwrap();
    dev.write_reg(regs::msix_addr(regs::MSIX_VECTORS), 0x1234).unwrap();
    dev.write_reg(regs::MSIX_PBA, u64::MAX).unwrap();
    assert_eq!(reg_err(&s.ctx_b), before + 3);
    assert_eq!(dev.read_reg(regs::REG_CQ_ARMED).unwrap(), 0, "nothing armed");
    assert_eq!(dev.read_reg(regs::MSIX_PBA).unwrap(), 0);
    assert_no_violations(&nics);
}

#[test]
fn a_message_aimed_at_memory_is_stopped_by_the_dma_check() {
    // A vector whose address is an ordinary host buffer the NIC may not write:
    // the message is a DMA write like any other and the IOMMU shadow refuses it.
    let nics = rnic_tests::pair_with(rnic_sim::SimConfig { fail_on_violation: false, ..Default::default() });
    let s = setup(&nics);
    let v = s.ch.vector() as usize;
    let target = s.ctx_b.alloc_pd().unwrap().reg_mr(4096, AccessFlags::empty()).unwrap();
    target.write(0, &[0x5A; 64]).unwrap();
    let dev = s.ctx_b.device().clone();
    dev.write_reg(regs::msix_addr(v), target.addr()).unwrap();
    s.cq_b[0].req_notify_cq(false).unwrap();
    s.send(0, 0, 200);
    let wcs = s.cq_b[0].wait_cq(1, WAIT).unwrap();
    assert_eq!(wcs[0].status, WcStatus::Success);
    assert!(run_until(&nics, WAIT, |_| irqs(&s.ctx_b) == 1), "the NIC sent the message");
    nics.cluster.lock().run(2_000);
    let v = nics.violations();
    assert_eq!(v.len(), 1, "{v:?}");
    let mut got = [0u8; 64];
    target.read(0, &mut got).unwrap();
    assert_eq!(got, [0x5A; 64], "nothing written");
    assert!(msis(&nics, 1).is_empty());
    s.drain_sends(1);
}

#[test]
fn message_addresses_are_dword_aligned() {
    let nics = pair();
    let s = setup(&nics);
    let v = s.ch.vector() as usize;
    let dev = s.ctx_b.device().clone();
    // Bits 1:0 of the address are dropped by the NIC: the message stays an aligned dword.
    dev.write_reg(regs::msix_addr(v), MSI_WINDOW.start + 3).unwrap();
    assert_eq!(dev.read_reg(regs::msix_addr(v)).unwrap(), MSI_WINDOW.start);
    s.cq_b[0].req_notify_cq(false).unwrap();
    s.send(0, 0, 10);
    assert!(run_until(&nics, WAIT, |n| msis(n, 1).len() == 1));
    assert!(nics.violations().is_empty());
    let _ = s.ch.get_cq_event(WAIT).unwrap();
    s.drain_sends(1);
}

/// The ibverbs waiting loop (poll; arm; poll again; sleep on the event)
/// with the arm landing at every cycle of a message's life, including the
/// cycles where its CQE is written by the NIC but not yet in host memory:
/// the poll after the arm must then see it (the arm is flushed by a
/// register read, which PCIe orders behind the NIC's earlier writes), or
/// the CQE comes after the arm and gives an event. Either way no waiter
/// sleeps through a completion.
#[test]
fn an_arm_at_any_cycle_of_a_message_misses_no_completion() {
    let nics = pair();
    let s = setup(&nics);
    let cq = &s.cq_b[0];
    let (mut polled, mut woken) = (0, 0);
    for d in 0..700u64 {
        let m = (d % 32) as u32;
        s.send(0, m, 64);
        nics.cluster.lock().run(d);
        let mut got = Vec::new();
        for _ in 0..4 {
            got = cq.poll_cq_vec(2).unwrap();
            if !got.is_empty() {
                polled += 1;
                break;
            }
            cq.req_notify_cq(false).unwrap();
            got = cq.poll_cq_vec(2).unwrap();
            if !got.is_empty() {
                polled += 1;
                break;
            }
            let ev = s.ch.get_cq_event(WAIT).unwrap_or_else(|e| panic!("arm {d} cycles after the post: {e}"));
            ev.ack_cq_events(1).unwrap();
            woken += 1;
        }
        assert_eq!(got.len(), 1, "arm {d} cycles after the post: {got:?}");
        assert_eq!((got[0].wr_id, got[0].status, got[0].byte_len), (m as u64, WcStatus::Success, 64));
        let mut data = vec![0u8; 64];
        s.dst.read(slot(0, m), &mut data).unwrap();
        assert_eq!(data, pattern::make(SEED, stream(0, m), 64), "arm {d} cycles after the post: payload");
        s.drain_sends(1);
    }
    // Both paths were taken: the sweep covers arms before and after the CQE.
    assert!(polled > 0 && woken > 0, "{polled} found by polling, {woken} by an event");
    assert_no_violations(&nics);
}
