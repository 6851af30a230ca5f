//! STrack's congestion window end to end over cosimulated NICs
//! (`QpAttr::strack_cc`): the NIC's window engine takes every ACK's RTT,
//! ECN echo and acknowledged PSNs, and the send path holds a QP whose
//! PSNs past its latest ACK fill the window. Every byte of every message
//! is checked.
//!
//! - One QP under the window on a cable: every byte arrives, at the rate
//!   the run prints.
//! - An incast: NICs 0 and 1 write to NIC 2 through the switch at once,
//!   its port to NIC 2 marking CE above 32 KiB. Without windows the port's
//!   queue fills its buffer and drops; under STrack's windows its deepest
//!   backlog is smaller and it drops less. Every byte arrives either way.

use rnic::{AccessFlags, Mtu, QpAttr, SendWr, WcStatus, WrOpcode};
use rnic_sim::SimConfig;
use rnic_tests::{assert_no_violations, pair, transfer_in, Op, World, SEED};
use rnic_tools::bench::{connect, initial_psn};
use rnic_tools::pattern;

#[test]
fn one_qp_under_the_window_delivers_every_byte() {
    let nics = pair();
    let t0 = nics.cluster.borrow().now();
    {
        let w = World::strack(&nics, 1, 32, Mtu::Mtu4096, 0);
        transfer_in(&w, Op::Write, 64 * 1024, 32);
    }
    let cycles = nics.cluster.borrow().now() - t0;
    let skipped = nics.cluster.borrow_mut().read_reg(0, rnic_spec::regs::counters::CC_SKIPPED).unwrap();
    let acks = nics.cluster.borrow_mut().read_reg(0, rnic_spec::regs::counters::RX_ACKS).unwrap();
    eprintln!(
        "64 KiB x 32 under STrack's window: {:.1} Gb/s (with setup); {skipped} of {acks} ACKs found the window engine busy",
        (32 * 64 * 1024 * 8) as f64 / (cycles as f64 / rnic_spec::params::CLOCK_HZ as f64) / 1e9
    );
    assert!(skipped < acks, "the window engine took ACKs");
    assert_no_violations(&nics);
}

/// What an incast of NICs 0 and 1 into NIC 2 did at the switch port to NIC 2.
struct Incast {
    max_backlog: u64,
    drops: u64,
    marked: u64,
    gbps: f64,
}

/// NICs 0 and 1 each write `msgs` x 64 KiB to NIC 2 at once, under STrack's windows or not.
fn incast(cc: bool, msgs: u32) -> Incast {
    let cfg = SimConfig { switch_ecn_threshold: Some(32 << 10), ..Default::default() };
    let nics = rnic_tools::cosim::Nics::new(3, cfg).unwrap_or_else(|e| panic!("{e}"));
    let size = 64 * 1024usize;
    let rx = &nics.ctxs[2];
    let pd_rx = rx.alloc_pd().unwrap();
    let cq_rx = rx.create_cq(64).unwrap();
    let mut senders = Vec::new();
    for s in 0..2usize {
        let ctx = &nics.ctxs[s];
        let pd = ctx.alloc_pd().unwrap();
        let cq = ctx.create_cq(2 * msgs).unwrap();
        let attr = |cq: &rnic::Cq, n: u32| rnic::QpInitAttr {
            send_cq: cq.clone(),
            recv_cq: cq.clone(),
            max_send_wr: n,
            max_recv_wr: n,
        };
        let a = pd.create_qp(attr(&cq, msgs)).unwrap();
        let b = pd_rx.create_qp(attr(&cq_rx, 1)).unwrap();
        a.modify(&QpAttr { strack_cc: Some(cc), ..QpAttr::init() }).unwrap();
        connect(ctx, &a, initial_psn(SEED, s as u32, 0), rx, &b, initial_psn(SEED, 2, s as u32), Mtu::Mtu4096).unwrap();
        let src = pd.reg_mr(size * msgs as usize, AccessFlags::empty()).unwrap();
        let dst = pd_rx.reg_mr(size * msgs as usize, AccessFlags::REMOTE_WRITE | AccessFlags::LOCAL_WRITE).unwrap();
        let data = pattern::make(SEED, 100 + s as u64, size * msgs as usize);
        src.write(0, &data).unwrap();
        senders.push((pd, cq, a, b, src, dst, data));
    }
    let t0 = nics.cluster.borrow().now();
    for (_, _, a, _, src, dst, _) in &senders {
        let wrs: Vec<SendWr> = (0..msgs)
            .map(|m| {
                let off = m as u64 * size as u64;
                SendWr {
                    wr_id: m as u64,
                    opcode: WrOpcode::RdmaWrite { remote_addr: dst.addr() + off, rkey: dst.rkey() },
                    sg: src.sge(off, size as u32),
                }
            })
            .collect();
        a.post_send_batch(&wrs).unwrap();
    }
    let mut done = [0u32; 2];
    let deadline = t0 + rnic_tests::timeout_for(2 * msgs as u64 * size as u64);
    while done.iter().any(|&d| d < msgs) {
        for (s, (_, cq, ..)) in senders.iter().enumerate() {
            for wc in cq.poll_cq_vec(16).unwrap() {
                assert_eq!(wc.status, WcStatus::Success, "NIC{s}: {wc:?}");
                done[s] += 1;
            }
        }
        let now = nics.cluster.borrow().now();
        assert!(now < deadline, "incast (windows {cc}): {done:?} of {msgs} done by cycle {now}");
        nics.cluster.borrow_mut().run(16);
        rx.progress().unwrap();
    }
    let cycles = nics.cluster.borrow().now() - t0;
    for (s, (_, _, _, _, _, dst, data)) in senders.iter().enumerate() {
        let mut got = vec![0u8; data.len()];
        dst.read(0, &mut got).unwrap();
        assert!(got == *data, "NIC{s}'s bytes at NIC2 differ (windows {cc})");
    }
    assert_no_violations(&nics);
    let c = nics.cluster.borrow();
    let q = c.fabric().queue_stats().into_iter().find(|(n, _)| n == "port 2").expect("port 2").1;
    Incast {
        max_backlog: q.max_backlog,
        drops: q.drops,
        marked: q.ecn_marked,
        gbps: (2 * msgs as usize * size) as f64 * 8.0 / (cycles as f64 / rnic_spec::params::CLOCK_HZ as f64) / 1e9,
    }
}

#[test]
fn incast_under_strack_windows_keeps_the_switch_queue_shorter() {
    let (blind, cc) = (incast(false, 48), incast(true, 48));
    for (name, r) in [("no window", &blind), ("STrack's window", &cc)] {
        eprintln!(
            "2:1 incast, {name}: {:.1} Gb/s, port to NIC2 at most {} B queued, {} drops, {} CE marks",
            r.gbps, r.max_backlog, r.drops, r.marked
        );
    }
    assert!(cc.marked > 0, "the switch marked CE under the windows");
    assert!(cc.max_backlog < blind.max_backlog, "the windows keep the queue shorter");
    assert!(cc.drops <= blind.drops, "no more drops under the windows");
}
