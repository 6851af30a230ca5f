//! The host library from several threads, as ibverbs objects are used: a
//! thread per QP posts WRITEs or SENDs while one thread polls the
//! requester's CQ and another keeps receives posted on the responder and
//! polls its CQ. Every byte of the destination is checked, the completions
//! come in posting order per QP, and nothing is left over.

use rnic::{AccessFlags, Context, Cq, Mr, Mtu, Pd, Qp, RecvWr, SendWr, WcOpcode, WcStatus, WrOpcode};
use rnic_tests::{assert_no_violations, assert_same, fill_sentinel, pair, read_all, stream, World, SEED};
use rnic_tools::pattern;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

fn shareable<T: Send + Sync>() {}

#[test]
fn verbs_objects_can_be_shared_between_threads() {
    shareable::<Context>();
    shareable::<Pd>();
    shareable::<Cq>();
    shareable::<Qp>();
    shareable::<Mr>();
}

/// QP pairs: the first half WRITE, the second half SEND.
const QPS: u32 = 4;
/// Messages per QP.
const MSGS: u32 = 40;
/// Send and receive WRs each QP allows: the posters wait for completions.
const DEPTH: u32 = 6;
/// Largest message.
const MAX: usize = 9000;
/// Guard bytes before the first slot.
const LEAD: usize = 64;
/// Cycles without any new completion that count as a stall. The run's own
/// length depends on how the OS schedules the threads (simulated time moves
/// while a poster waits for a core), so only progress is checked.
const STALL_CYCLES: u64 = 400_000;

/// Message `m` of QP index `q`: 1 to `MAX` bytes, varied.
fn size_of(q: u32, m: u32) -> usize {
    1 + ((q as usize * 7919 + m as usize * 104_729) % MAX)
}

fn is_send(q: u32) -> bool {
    q >= QPS / 2
}

#[test]
fn posters_and_pollers_on_their_own_threads() {
    let nics = pair();
    let w = World::new(&nics, QPS, DEPTH, Mtu::Mtu4096);
    let slot = MAX.div_ceil(64) * 64 + 64;
    let off = |q: u32, m: u32| LEAD + (q * MSGS + m) as usize * slot;
    let total = off(QPS, 0);
    let src = w.pd_a.reg_mr(total, AccessFlags::empty()).unwrap();
    let dst = w.pd_b.reg_mr(total, AccessFlags::REMOTE_WRITE | AccessFlags::LOCAL_WRITE).unwrap();
    let mut want = fill_sentinel(&dst);
    let mut bytes = 0u64;
    for q in 0..QPS {
        for m in 0..MSGS {
            let (o, n) = (off(q, m), size_of(q, m));
            let data = pattern::make(SEED, stream(q, m), n);
            src.write(o as u64, &data).unwrap();
            want[o..o + n].copy_from_slice(&data);
            bytes += n as u64;
        }
    }
    let index_a = |qpn: u32| w.conns.iter().position(|(a, _)| a.qp_num() == qpn).expect("a QP of the world") as u32;
    let index_b = |qpn: u32| w.conns.iter().position(|(_, b)| b.qp_num() == qpn).expect("a QP of the world") as u32;
    // Completions seen per QP index: the requester's (send) and the responder's (receive).
    let done_a: Vec<AtomicU32> = (0..QPS).map(|_| AtomicU32::new(0)).collect();
    let done_b: Vec<AtomicU32> = (0..QPS).map(|_| AtomicU32::new(0)).collect();
    let dev = w.ctx_a.device().clone();
    // The cycle of the last completion seen on either side.
    let progress = AtomicU64::new(dev.now_cycles());
    let in_time = |what: &str| {
        let seen = |d: &[AtomicU32]| d.iter().map(|c| c.load(Ordering::Acquire)).collect::<Vec<_>>();
        let (now, last) = (dev.now_cycles(), progress.load(Ordering::Acquire));
        assert!(
            now < last + STALL_CYCLES,
            "{what}: no completion from cycle {last} to {now} ({bytes} bytes in all); completions per QP index: requester {:?}, responder {:?}",
            seen(&done_a),
            seen(&done_b)
        );
    };
    // One poll of `cq`: each completion must be the next of its QP (`index` maps its QPN to
    // the QP index, `op` gives the expected opcode); with none, simulated time moves on.
    let take = |cq: &Cq,
                ctx: &Context,
                what: &str,
                index: &dyn Fn(u32) -> u32,
                op: &dyn Fn(u32) -> WcOpcode,
                done: &[AtomicU32]| {
        let wcs = cq.poll_cq_vec(16).unwrap();
        if wcs.is_empty() {
            in_time(what);
            // Let the other threads post before simulated time moves on.
            std::thread::yield_now();
            ctx.device().wait().unwrap();
        } else {
            progress.store(dev.now_cycles(), Ordering::Release);
        }
        for wc in &wcs {
            let q = index(wc.qp_num);
            let m = done[q as usize].load(Ordering::Acquire);
            assert_eq!(wc.status, WcStatus::Success, "{what}: {wc:?}");
            assert_eq!(
                (wc.wr_id, wc.opcode, wc.byte_len as usize),
                (m as u64, op(q), size_of(q, m)),
                "{what}, QP index {q}: {wc:?}"
            );
            done[q as usize].store(m + 1, Ordering::Release);
        }
        wcs.len() as u32
    };
    std::thread::scope(|s| {
        for q in 0..QPS {
            let (a, _) = &w.conns[q as usize];
            let (src, dst, done_a, in_time) = (&src, &dst, &done_a, &in_time);
            s.spawn(move || {
                for m in 0..MSGS {
                    while m - done_a[q as usize].load(Ordering::Acquire) >= DEPTH {
                        in_time(&format!("poster of QP index {q}"));
                        std::thread::yield_now();
                    }
                    let o = off(q, m) as u64;
                    let opcode = if is_send(q) {
                        WrOpcode::Send
                    } else {
                        WrOpcode::RdmaWrite { remote_addr: dst.addr() + o, rkey: dst.rkey() }
                    };
                    a.post_send(&SendWr {
                        send_flags: rnic::SendFlags::SIGNALED,
                        wr_id: m as u64,
                        opcode,
                        sg_list: src.sge(o, size_of(q, m) as u32).into(),
                    })
                    .unwrap();
                }
            });
        }
        // The responder's thread: keeps up to DEPTH receives posted on each SEND QP and takes their completions.
        s.spawn(|| {
            let mut posted = [0u32; QPS as usize];
            let mut left = (QPS / 2) * MSGS;
            while left > 0 {
                for q in (0..QPS).filter(|&q| is_send(q)) {
                    let b = &w.conns[q as usize].1;
                    while posted[q as usize] < MSGS
                        && posted[q as usize] - done_b[q as usize].load(Ordering::Acquire) < DEPTH
                    {
                        let m = posted[q as usize];
                        b.post_recv(&RecvWr { wr_id: m as u64, sg_list: &[dst.sge(off(q, m) as u64, slot as u32)] })
                            .unwrap();
                        posted[q as usize] += 1;
                    }
                }
                let recv = |q: u32| {
                    assert!(is_send(q), "a receive completion on WRITE QP index {q}");
                    WcOpcode::Recv
                };
                left -= take(&w.cq_b, &w.ctx_b, "the responder's poller", &index_b, &recv, &done_b);
            }
        });
        // The requester's poller.
        s.spawn(|| {
            let mut left = QPS * MSGS;
            let sent = |q: u32| if is_send(q) { WcOpcode::Send } else { WcOpcode::RdmaWrite };
            while left > 0 {
                left -= take(&w.cq_a, &w.ctx_a, "the requester's poller", &index_a, &sent, &done_a);
            }
        });
    });
    let got = read_all(&dst);
    assert_same("guard bytes before the first slot", &got[..LEAD], &want[..LEAD], LEAD, 1, 0);
    for q in 0..QPS {
        for m in 0..MSGS {
            let o = off(q, m);
            assert_same(
                &format!("QP index {q} message {m}"),
                &got[o..o + slot],
                &want[o..o + slot],
                slot,
                1,
                size_of(q, m),
            );
        }
    }
    assert!(
        w.cq_a.poll_cq_vec(1).unwrap().is_empty() && w.cq_b.poll_cq_vec(1).unwrap().is_empty(),
        "extra completions"
    );
    drop(w);
    assert_no_violations(&nics);
}
