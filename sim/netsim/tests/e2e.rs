//! Small end-to-end runs asserting behaviour (never wall time).

use std::cell::RefCell;
use std::rc::Rc;

use rnic_netsim::endpoint::{EchoEndpoint, Frame, FrameEndpoint};
use rnic_netsim::sim::{Report, Sim, SimConfig, Transport};
use rnic_netsim::time::{ser_ps, ClockDomain, PS_PER_US};
use rnic_netsim::topo::{FabricSpec, Topology};
use rnic_netsim::traffic::{self, FlowSpec, Workload};

const SEED: u64 = 7;
const ALL: [Transport; 5] =
    [Transport::Strack, Transport::StrackOblivious, Transport::Roce, Transport::RocePfc, Transport::Srnic];

fn fabric(hosts: u32, radix: u32, oversub: u32) -> Topology {
    Topology::build(&FabricSpec::leaf_spine(hosts, radix, oversub, 100, 1000).unwrap()).unwrap()
}

fn run(topo: Topology, t: Transport, w: &Workload, tweak: impl FnOnce(&mut SimConfig)) -> Report {
    let mut cfg = SimConfig::paper_defaults(t, &topo, 4096, SEED);
    tweak(&mut cfg);
    Sim::new(topo, cfg, w).unwrap().run()
}

/// Every flow completed, every byte was delivered exactly once, and every
/// data packet lost in the fabric was followed by a retransmission.
fn assert_reliable(r: &Report, ctx: &str) {
    for (i, f) in r.flows.iter().enumerate() {
        assert!(f.fct().is_some(), "{ctx}: flow {i} unfinished (seed {SEED})");
        assert_eq!(f.delivered, f.bytes, "{ctx}: flow {i} delivered {} of {} (seed {SEED})", f.delivered, f.bytes);
        assert!(
            f.retransmits >= f.data_lost,
            "{ctx}: flow {i} lost {} data packets but retransmitted {} (seed {SEED})",
            f.data_lost,
            f.retransmits
        );
    }
}

#[test]
fn permutation_completes_for_every_transport() {
    for t in ALL {
        let w = traffic::permutation(32, 256 << 10, SEED);
        let r = run(fabric(32, 8, 1), t, &w, |_| {});
        assert_reliable(&r, t.name());
        assert_eq!(r.drops, 0, "{}: a full-bisection permutation should not overflow 5-BDP buffers", t.name());
    }
}

#[test]
fn random_loss_is_recovered_by_every_transport() {
    for t in ALL {
        let w = traffic::permutation(16, 512 << 10, SEED);
        let r = run(fabric(16, 8, 1), t, &w, |c| c.loss_ppm = 20_000);
        assert!(r.random_losses > 0, "{}: loss injection did nothing", t.name());
        assert_reliable(&r, &format!("{} at 2% loss", t.name()));
        assert!(r.retransmits() > 0);
    }
}

#[test]
fn strack_incast_drops_are_retransmitted_and_queue_settles() {
    let topo = fabric(32, 8, 1);
    let w = traffic::incast(32, 16, 0, 2 << 20, 4, SEED);
    let r = run(topo, Transport::Strack, &w, |c| c.series_bin_ps = 5 * PS_PER_US);
    assert_reliable(&r, "strack 16:1");
    // the last-hop queue after the first 100 µs stays well below its early peak
    let q = &r.last_hop_qdelay;
    let early = q[..20.min(q.len())].iter().copied().max().unwrap();
    let first_end = r.flows.iter().map(|f| f.end).min().unwrap();
    let late_bins = &q[40..(first_end / r.series_bin_ps) as usize];
    let late = late_bins.iter().copied().max().unwrap();
    assert!(late * 2 < early || late < 3 * 8_500_000, "late queueing {late} ps vs early peak {early} ps");
}

#[test]
fn ecn_marked_entropies_are_skipped() {
    // ECN marks in an incast travel back in SACKs; STrack's path selection
    // records them and skips those entropies; oblivious spray never does.
    let w = traffic::incast(32, 16, 0, 1 << 20, 4, SEED);
    let a = run(fabric(32, 8, 1), Transport::Strack, &w, |_| {});
    let o = run(fabric(32, 8, 1), Transport::StrackOblivious, &w, |_| {});
    assert!(a.ecn_marks > 0 && a.ecn_echoes > 0, "marks {} echoes {}", a.ecn_marks, a.ecn_echoes);
    assert!(a.lb_skips > 0, "no marked entropy was skipped (seed {SEED})");
    assert!(o.ecn_echoes > 0);
    assert_eq!(o.lb_skips, 0);
}

#[test]
fn roce_incast_is_lossless_with_pfc() {
    let w = traffic::incast(32, 16, 0, 1 << 20, 4, SEED);
    let r = run(fabric(32, 8, 1), Transport::Roce, &w, |_| {});
    assert_reliable(&r, "roce 16:1");
    assert_eq!(r.drops, 0, "PFC must prevent congestion drops");
    assert!(r.pauses > 0 && r.pause_ps > 0, "a 16:1 incast must trigger PFC");
    assert_eq!(r.retransmits(), 0);
}

#[test]
fn roce_pfc_alone_is_lossless_unmarked_and_at_line_rate() {
    let w = traffic::incast(32, 16, 0, 1 << 20, 4, SEED);
    let r = run(fabric(32, 8, 1), Transport::RocePfc, &w, |_| {});
    assert_reliable(&r, "roce-pfc 16:1");
    assert_eq!((r.drops, r.ecn_marks, r.retransmits()), (0, 0, 0));
    assert!(r.pauses > 0, "a 16:1 incast must trigger PFC");
    // PFC alone keeps the receiver's link busy: the incast ends within 2 %
    // of serializing all 16 MiB at 100 Gb/s
    let wire = 16u64 * (1 << 20) / 4096 * (4096 + 64);
    let ideal = ser_ps(wire, 100);
    let last = r.flows.iter().map(|f| f.end).max().unwrap();
    assert!(last < ideal + ideal / 50, "last flow ends at {last} ps, line rate {ideal} ps");
}

#[test]
fn single_path_flows_per_link_are_counted() {
    // 16 senders on three other ToRs to host 0: all 16 share host 0's last
    // hop, and the four spine→ToR links into host 0's ToR carry all of them
    let w = traffic::incast(32, 16, 0, 64 << 10, 4, SEED);
    for t in [Transport::Roce, Transport::RocePfc, Transport::Srnic] {
        let r = run(fabric(32, 8, 1), t, &w, |_| {});
        assert_eq!(r.max_flows_per_link, 16, "{}", t.name());
        assert!((4..=16).contains(&r.max_flows_per_fabric_link), "{}: {}", t.name(), r.max_flows_per_fabric_link);
    }
    // the count follows the packets: on a permutation, a link whose count
    // is zero carried no data
    let w = traffic::permutation(32, 64 << 10, SEED);
    let r = run(fabric(32, 8, 1), Transport::RocePfc, &w, |_| {});
    assert!(r.max_flows_per_fabric_link >= 1);
    let s = run(fabric(32, 8, 1), Transport::Strack, &w, |_| {});
    assert_eq!((s.max_flows_per_link, s.max_flows_per_fabric_link), (0, 0), "sprayed flows have no single path");
    assert!(s.fabric_link_max_bytes >= s.fabric_link_mean_bytes && s.fabric_link_mean_bytes > 0);
}

#[test]
fn control_packets_behind_data_still_deliver_everything() {
    let w = traffic::permutation(32, 256 << 10, SEED);
    for t in [Transport::Strack, Transport::Roce, Transport::Srnic] {
        let r = run(fabric(32, 8, 1), t, &w, |c| c.ctrl_priority = false);
        assert_reliable(&r, &format!("{} without a control priority", t.name()));
    }
}

#[test]
fn strack_starts_at_the_initial_window() {
    // An incast's first burst is the senders' initial windows: starting at
    // 100 % of the BDP drops fewer packets than starting at the 125 % maximum.
    let w = traffic::incast(32, 16, 0, 1 << 20, 4, SEED);
    let at = |init: u32| {
        let r = run(fabric(32, 8, 1), Transport::Strack, &w, |c| {
            c.max_cwnd_pct = 125;
            c.init_cwnd_pct = Some(init);
        });
        assert_reliable(&r, &format!("strack 16:1, initial window {init} %"));
        r.drops
    };
    let (d100, d125) = (at(100), at(125));
    assert!(d100 < d125, "drops {d100} (initial 100 %) vs {d125} (initial 125 %)");
}

#[test]
fn adaptive_spray_moves_traffic_off_a_degraded_path() {
    // One ToR→spine uplink runs at 12 of 100 Gb/s. Oblivious spray keeps
    // sending 1/4 of the packets through it (queue, ECN marks, reordering);
    // STrack's ACK-clocked entropy reuse and ECN skipping move traffic away.
    // (The skip of ECN-marked entropies itself is unit-tested in rnic-model.)
    let share = |t: Transport| {
        let mut topo = fabric(16, 8, 1); // 4 ToRs × 4 hosts, 4 spines
        let slow = rnic_netsim::sim::tier1_port_ids(&topo, 0)[0];
        topo.ports[slow as usize].gbps = 12;
        let ups = rnic_netsim::sim::tier1_port_ids(&topo, 0);
        let w =
            Workload { nodes: 16, flows: vec![FlowSpec { src: 0, dst: 4, bytes: 8 << 20, start: 0, deps: vec![] }] };
        let r = run(topo, t, &w, |_| {});
        assert_reliable(&r, t.name());
        let total: u64 = ups.iter().map(|&p| r.port_tx_bytes[p as usize]).sum();
        (r.port_tx_bytes[slow as usize] as f64 / total as f64, r.flows[0].fct().unwrap())
    };
    let (adaptive, fct_a) = share(Transport::Strack);
    let (oblivious, fct_o) = share(Transport::StrackOblivious);
    assert!((0.2..0.3).contains(&oblivious), "oblivious share {oblivious}");
    assert!(adaptive < 0.7 * oblivious, "adaptive share {adaptive} vs oblivious {oblivious} (seed {SEED})");
    assert!(fct_a < fct_o, "adaptive FCT {fct_a} ps vs oblivious {fct_o} ps");
}

#[test]
fn watched_port_backlog_and_frame_counts() {
    // An 8:1 incast on one ToR: the receiver's port is the only one that queues.
    let topo = fabric(16, 32, 16); // one ToR of 16 hosts, one spine
    let rx_port = topo.host_down[0];
    let w = Workload {
        nodes: 16,
        flows: (1..=8).map(|s| FlowSpec { src: s, dst: 0, bytes: 256 << 10, start: 0, deps: vec![] }).collect(),
    };
    let mut cfg = SimConfig::paper_defaults(Transport::Strack, &topo, 4096, SEED);
    cfg.series_bin_ps = PS_PER_US;
    let (hdr, wire) = (cfg.hdr_bytes as u64, (4096 + cfg.hdr_bytes) as u64);
    let r = Sim::new(topo.clone(), cfg, &w).unwrap().watch_port(rx_port).run();
    assert_reliable(&r, "strack 8:1 on one ToR");
    let peak = r.watched_backlog.iter().copied().max().unwrap();
    let held = r.port_max_q[rx_port as usize];
    assert!(peak > 4 * wire, "eight senders at line rate must queue at the receiver: {peak} bytes");
    assert!(peak + wire >= held && peak <= held + wire, "backlog {peak} vs most queued {held}");
    for f in &r.flows {
        let up = topo.host_up[f.src as usize] as usize;
        assert!(r.port_tx_frames[up] >= f.pkts_sent, "host {} sent {} frames", f.src, r.port_tx_frames[up]);
    }
    let data = r.port_tx_bytes[rx_port as usize];
    let frames = r.port_tx_frames[rx_port as usize];
    assert!(frames * hdr < data && data <= frames * wire, "{data} bytes in {frames} frames");
}

#[test]
fn slow_receiver_limits_its_flow_only() {
    // host 4's ToR down-link at 25 of 100 Gb/s: the flow to it takes ~4× as
    // long as the same flow to a normal host, and still delivers everything.
    let mut topo = fabric(16, 8, 1);
    let p = topo.host_down[4];
    topo.ports[p as usize].gbps = 25;
    let w = Workload {
        nodes: 16,
        flows: vec![
            FlowSpec { src: 0, dst: 4, bytes: 2 << 20, start: 0, deps: vec![] },
            FlowSpec { src: 1, dst: 8, bytes: 2 << 20, start: 0, deps: vec![] },
        ],
    };
    for t in ALL {
        let r = run(topo.clone(), t, &w, |_| {});
        assert_reliable(&r, &format!("{} slow receiver", t.name()));
        let (slow, fast) = (r.flows[0].fct().unwrap(), r.flows[1].fct().unwrap());
        assert!(slow > 3 * fast && slow < 6 * fast, "{}: slow {slow} fast {fast}", t.name());
    }
}

#[test]
fn failed_links_carry_no_traffic() {
    let mut topo = fabric(32, 8, 1);
    let failed = topo.fail_random_tier1_links(3, SEED).unwrap();
    let rev: Vec<u32> = failed.iter().map(|&p| topo.ports[p as usize].reverse).collect();
    let w = traffic::permutation(32, 256 << 10, SEED);
    let r = run(topo, Transport::Strack, &w, |_| {});
    assert_reliable(&r, "strack with failed links");
    for p in failed.iter().chain(rev.iter()) {
        assert_eq!(r.port_tx_bytes[*p as usize], 0, "failed port {p} carried traffic");
    }
}

#[test]
fn oversubscribed_permutation_completes_and_is_slower() {
    let w = traffic::permutation(32, 256 << 10, SEED);
    let full = run(fabric(32, 8, 1), Transport::Strack, &w, |_| {});
    let over = run(fabric(32, 8, 4), Transport::Strack, &w, |_| {});
    assert_reliable(&over, "strack 4:1");
    let max = |r: &Report| r.flows.iter().filter_map(|f| f.fct()).max().unwrap();
    assert!(max(&over) > 2 * max(&full), "4:1 should be much slower: {} vs {}", max(&over), max(&full));
}

#[test]
fn collective_steps_respect_dependencies() {
    let ranks: Vec<u32> = (0..8).map(|i| i * 4).collect(); // one rank per ToR
    for w in [
        traffic::ring_allreduce(&ranks, 1 << 20),
        traffic::dbt_allreduce(&ranks, 1 << 20),
        traffic::all_to_all(8, 64 << 10, 2),
    ] {
        let r = run(fabric(32, 8, 1), Transport::Strack, &w, |_| {});
        assert_reliable(&r, "collective");
        for (i, f) in w.flows.iter().enumerate() {
            for &d in &f.deps {
                assert!(
                    r.flows[i].start >= r.flows[d as usize].end,
                    "flow {i} started before its dependency {d} finished"
                );
            }
        }
    }
}

#[test]
fn htsim_files_drive_a_run() {
    let topo_text = "Nodes 16\nTiers 2\nPodsize 16\n\nTier 0\nDownlink_speed_Gbps 100\nRadix_Down 4\nRadix_Up 4\nDownlink_Latency_ns 1000\nSwitch_Latency_ns 0\n\nTier 1\nDownlink_speed_Gbps 100\nRadix_Down 4\nDownlink_Latency_ns 1000\nSwitch_Latency_ns 0\n";
    let cm = "Nodes 16\nConnections 3\n0->5 id 1 start 0 size 100000 send_done_trigger 1\n1->9 id 2 start 10 size 50000\n5->0 id 3 trigger 1 size 30000\ntrigger id 1 oneshot\n";
    let topo = Topology::build(&FabricSpec::from_htsim(topo_text).unwrap()).unwrap();
    let w = Workload::from_htsim(cm).unwrap();
    let r = run(topo, Transport::Strack, &w, |_| {});
    assert_reliable(&r, "htsim files");
    assert_eq!(r.flows[1].start, 10 * PS_PER_US);
    assert!(r.flows[2].start >= r.flows[0].end);
}

#[test]
fn runs_are_deterministic() {
    let w = traffic::permutation(32, 128 << 10, SEED);
    let a = run(fabric(32, 8, 1), Transport::Strack, &w, |c| c.loss_ppm = 5_000);
    let b = run(fabric(32, 8, 1), Transport::Strack, &w, |c| c.loss_ppm = 5_000);
    assert_eq!(a.flows, b.flows);
    assert_eq!(a.events, b.events);
}

/// Wraps an endpoint and logs what it receives.
struct Rec(EchoEndpoint, Rc<RefCell<Vec<(u64, Frame)>>>);

impl FrameEndpoint for Rec {
    fn clock(&self) -> ClockDomain {
        self.0.clock()
    }
    fn on_frame(&mut self, c: u64, f: Frame) {
        self.1.borrow_mut().push((c, f.clone()));
        self.0.on_frame(c, f)
    }
    fn poll_tx(&mut self, c: u64) -> Option<Frame> {
        self.0.poll_tx(c)
    }
    fn next_wakeup_cycle(&self) -> Option<u64> {
        self.0.next_wakeup_cycle()
    }
}

#[test]
fn frame_endpoints_exchange_frames_with_exact_timing() {
    // Two cycle-level endpoints (250 MHz) on hosts 0 and 5 (different ToRs):
    // a 1024-byte frame goes out at cycle 10 and is echoed back 3 cycles after
    // it arrives.
    let topo = fabric(16, 8, 1);
    let clk = ClockDomain::mhz(250);
    let mut a = EchoEndpoint::new(0, clk, 0, false);
    a.pending
        .push_back((10, Frame { src: 0, dst: 5, udp_sport: 0xc001, wire_bytes: 1024, ecn_ce: false, bytes: vec![] }));
    let b = EchoEndpoint::new(5, clk, 3, true);
    let cfg = SimConfig::paper_defaults(Transport::Strack, &topo, 4096, SEED);
    let mut sim = Sim::new(topo, cfg, &Workload { nodes: 16, flows: vec![] }).unwrap();
    let (la, lb) = (Rc::new(RefCell::new(Vec::new())), Rc::new(RefCell::new(Vec::new())));
    sim.attach_endpoint(0, Box::new(Rec(a, la.clone())));
    sim.attach_endpoint(5, Box::new(Rec(b, lb.clone())));
    sim.run();
    let (a, b) = (la.borrow(), lb.borrow());
    assert_eq!((a.len(), b.len()), (1, 1));
    // one way: 4 links of 1 µs + 4 serializations of 1024 B at 100 Gb/s
    let one_way = 4 * (PS_PER_US + ser_ps(1024, 100));
    assert_eq!(b[0].0, clk.ps_to_cycle_ceil(clk.cycle_to_ps(10) + one_way));
    assert_eq!(a[0].0, clk.ps_to_cycle_ceil(clk.cycle_to_ps(b[0].0 + 3) + one_way));
    assert_eq!((a[0].1.src, a[0].1.dst), (5, 0));
}
