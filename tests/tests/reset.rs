//! The core's synchronous reset: a function-level reset in the middle of
//! traffic leaves both NICs exactly as a reset of idle NICs does.
//!
//! Two pairs of NICs run the same script from power-on. Pair B is dirtied
//! first: four QP pairs (STrack window and spraying on the requesters,
//! selective repeat on the responders) carry WRITEs, SENDs and READs with
//! lost packets, and at cycle `R`, mid-transfer, both of its NICs are reset.
//! Pair A idles until the same cycle and is reset there. After the reset
//! both pairs wait for the fabric to drain, open the NICs again (which
//! waits for `STATUS_READY`) and run the same workload (the three
//! operations, one with losses, every byte checked). Everything the
//! workload shows must then be identical, cycle for cycle: when it finishes,
//! every event counter of both NICs, the DMA statistics and the link
//! statistics. A register, FIFO or table the reset missed would let B's
//! dirty state leak into its run and show up as a difference (or a failed
//! transfer).

use rnic::{AccessFlags, Mtu, RecvWr, SendWr, WrOpcode};
use rnic_sim::pcie::DmaStats;
use rnic_sim::{FrameClass, LinkStats};
use rnic_spec::regs::counters::COUNT;
use rnic_tests::{assert_no_violations, pair, transfer_in, Op, World};
use rnic_tools::cosim::Nics;

/// QP pairs of both the dirtying traffic and the workload after the reset.
const QPS: u32 = 4;
/// Cycles from the end of the dirtying posts to the reset.
const DIRTY_CYCLES: u64 = 6_000;
/// Cycles after the reset before the NICs are opened again: frames still on
/// the wire arrive and are dropped meanwhile (well above the fabric's delay).
const DRAIN_CYCLES: u64 = 50_000;

/// What the workload after the reset shows.
#[derive(Debug, PartialEq)]
struct Outcome {
    /// Cycle the NICs were opened again, and the cycle the workload ended.
    opened: u64,
    ended: u64,
    /// Per NIC, the counters the workload moved.
    counters: Vec<[u64; COUNT]>,
    /// Per NIC, the DMA statistics since the reset (a fresh PCIe model).
    dma: Vec<DmaStats>,
    /// Per NIC, what its egress link carried during the workload.
    links: Vec<LinkStats>,
}

/// Posts WRITEs, SENDs and READs on `QPS` pairs with a few requests lost,
/// runs until they are under way, and abandons everything (the process
/// "dies"). Returns how many requests were still unanswered.
fn dirty(nics: &Nics) -> usize {
    let w = World::strack(nics, QPS, 64, Mtu::Mtu1024, 8);
    {
        let mut c = nics.cluster.borrow_mut();
        c.faults(0).drop_matching(30, 3, Box::new(|f: &FrameClass| f.is_request()));
        c.faults(1).drop_matching(5, 2, Box::new(|f: &FrameClass| f.is_ack()));
    }
    let size = 20_000usize;
    let src = w.pd_a.reg_mr(size * 8, AccessFlags::REMOTE_READ | AccessFlags::LOCAL_WRITE).unwrap();
    let dst = w.pd_b.reg_mr(size * 8, AccessFlags::REMOTE_WRITE | AccessFlags::LOCAL_WRITE).unwrap();
    let rsrc = w.pd_b.reg_mr(size * 8, AccessFlags::REMOTE_READ).unwrap();
    for (q, (a, b)) in w.conns.iter().enumerate() {
        let off = (q * size) as u64;
        b.post_recv_batch(&[RecvWr { wr_id: 1, sg: dst.sge(off + 4 * size as u64, size as u32) }]).unwrap();
        let wrs = vec![
            SendWr {
                wr_id: 1,
                opcode: WrOpcode::RdmaWrite { remote_addr: dst.addr() + off, rkey: dst.rkey() },
                sg: src.sge(off, size as u32),
            },
            SendWr { wr_id: 2, opcode: WrOpcode::Send, sg: src.sge(off, size as u32) },
            SendWr {
                wr_id: 3,
                opcode: WrOpcode::RdmaRead { remote_addr: rsrc.addr() + off, rkey: rsrc.rkey() },
                sg: src.sge(off + 4 * size as u64, size as u32),
            },
        ];
        a.post_send_batch(&wrs).unwrap();
    }
    nics.cluster.borrow_mut().run(DIRTY_CYCLES);
    let done = w.cq_a.poll_cq_vec(64).unwrap().len();
    assert_no_violations(nics);
    std::mem::forget((src, dst, rsrc, w));
    3 * QPS as usize - done
}

/// Resets both NICs at cycle `at`, lets the fabric drain, opens them again
/// and runs the workload.
fn reset_and_run(nics: &mut Nics, at: u64) -> Outcome {
    {
        let mut c = nics.cluster.borrow_mut();
        assert!(c.now() <= at, "the reset cycle {at} is already past ({})", c.now());
        let left = at - c.now();
        c.run(left);
        for i in 0..2 {
            c.faults(i).clear_rules();
        }
    }
    nics.reset();
    nics.cluster.borrow_mut().run(DRAIN_CYCLES);
    nics.reopen().unwrap_or_else(|e| panic!("{e}"));
    let opened = nics.cluster.borrow().now();
    let links0: Vec<LinkStats> = (0..2).map(|i| nics.cluster.borrow().fabric().link_stats(i)).collect();
    let before = nics.counters().unwrap();
    {
        let w = World::strack(nics, QPS, 16, Mtu::Mtu1024, 8);
        transfer_in(&w, Op::Write, 6_000, 4);
        nics.cluster.borrow_mut().faults(0).drop_matching(7, 2, Box::new(|f: &FrameClass| f.is_request()));
        transfer_in(&w, Op::Send, 3_000, 4);
        transfer_in(&w, Op::Read, 5_000, 2);
    }
    assert_no_violations(nics);
    let after = nics.counters().unwrap();
    assert!(before.stable && after.stable, "counters moved while read");
    let c = nics.cluster.borrow();
    Outcome {
        opened,
        ended: c.now(),
        counters: (0..2)
            .map(|n| std::array::from_fn(|k| after.values[n][k].wrapping_sub(before.values[n][k])))
            .collect(),
        dma: (0..2).map(|i| c.nic(i).dma_stats()).collect(),
        links: (0..2)
            .map(|i| {
                let (s, s0) = (c.fabric().link_stats(i), links0[i]);
                LinkStats {
                    frames: s.frames - s0.frames,
                    bytes: s.bytes - s0.bytes,
                    dropped: s.dropped - s0.dropped,
                    corrupted: s.corrupted - s0.corrupted,
                    delayed: s.delayed - s0.delayed,
                    duplicated: s.duplicated - s0.duplicated,
                    retransmissions: s.retransmissions - s0.retransmissions,
                }
            })
            .collect(),
    }
}

#[test]
fn reset_mid_traffic_is_indistinguishable_from_a_reset_of_idle_nics() {
    let mut b = pair();
    let unanswered = dirty(&b);
    assert!(unanswered > 0, "the dirtying traffic finished before the reset: nothing was in flight");
    let at = b.cluster.borrow().now();
    let dirty_run = reset_and_run(&mut b, at);

    let mut a = pair();
    let clean_run = reset_and_run(&mut a, at);
    assert!(dirty_run.links[0].dropped > 0, "the workload lost no packet: {dirty_run:?}");
    assert_eq!(dirty_run, clean_run, "after a reset mid-traffic (left) vs of idle NICs (right)");
}
