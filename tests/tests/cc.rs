//! STrack's congestion window end to end over cosimulated NICs
//! (`QpAttr::strack_cc`): the NIC's window engine takes every ACK's RTT,
//! ECN echo and SACK bytes received, and the send path holds a QP whose
//! packets in flight (past the latest ACK's ePSN and OOO count) fill the
//! window. Every byte of every message is checked.
//!
//! - One QP under the window on a cable: every byte arrives, at the rate
//!   the run prints.
//! - An incast: NICs 0 and 1 write to NIC 2 through the switch at once,
//!   its port to NIC 2 marking CE above 32 KiB. Without windows the port's
//!   queue fills its buffer and drops; under STrack's windows its deepest
//!   backlog is smaller and it drops less. Every byte arrives either way.
//! - An 8:1 incast under STrack's windows: at least 90 % of the line rate
//!   in aggregate, no drop, the receiver's port never holding more than the
//!   senders' first windows (8 x 62.5 KB, one BDP each) above the ECN threshold, and from
//!   some time on no more than two windows above it, with the senders
//!   sharing the port fairly.
//! - The same 8:1 incast under DCTCP's windows (`QpAttr::dctcp_cc`): at
//!   least 90 % of the line rate, no drop, the first burst bounded as
//!   above, then the queue within two windows of the ECN threshold (DCTCP's
//!   sawtooth around it) and the senders' shares of the run fair (Jain's
//!   index at least 0.95).

use rnic::Mtu;
use rnic_tests::{assert_no_violations, pair, transfer_in, Op, World};
use rnic_tools::scenario::{run_incast, FlowTransport, IncastConfig, ScenarioRun, Window};

#[test]
fn one_qp_under_the_window_delivers_every_byte() {
    let nics = pair();
    let t0 = nics.cluster.lock().now();
    {
        let w = World::strack(&nics, 1, 32, Mtu::Mtu4096, 0);
        transfer_in(&w, Op::Write, 64 * 1024, 32);
        // Nothing congests a cable: the window stays at its largest, one BDP (`REG_CC_WINDOW`).
        let net = rnic::CcNetwork::default();
        let window = w.conns[0].0.cc_window_bytes().unwrap();
        assert_eq!(window, net.max_window_bytes(), "the QP's window after the transfer");
    }
    let cycles = nics.cluster.lock().now() - t0;
    let skipped = nics.cluster.lock().read_reg(0, rnic_spec::regs::counters::CC_SKIPPED).unwrap();
    let acks = nics.cluster.lock().read_reg(0, rnic_spec::regs::counters::RX_ACKS).unwrap();
    eprintln!(
        "64 KiB x 32 under STrack's window: {:.1} Gb/s (with setup); {skipped} of {acks} ACKs found the window engine busy",
        (32 * 64 * 1024 * 8) as f64 / (cycles as f64 / rnic_spec::params::CLOCK_HZ as f64) / 1e9
    );
    assert!(skipped < acks, "the window engine took ACKs");
    assert_no_violations(&nics);
}

/// NICs 0 .. fan_in each write `msgs` x 64 KiB to the next NIC at once through the switch, its port
/// marking CE above 32 KiB, under STrack's windows or not.
fn incast(fan_in: usize, cc: bool, msgs: u32) -> ScenarioRun {
    let window = if cc { Window::Strack } else { Window::Off };
    incast_with(IncastConfig {
        fan_in,
        msgs,
        transport: FlowTransport { window, ..Default::default() },
        ..Default::default()
    })
}

fn incast_with(cfg: IncastConfig) -> ScenarioRun {
    let (fan_in, window) = (cfg.fan_in, cfg.transport.window);
    run_incast(&cfg, |_| {}).unwrap_or_else(|e| panic!("{fan_in}:1 incast (window {window:?}): {e}"))
}

#[test]
fn incast_under_strack_windows_keeps_the_switch_queue_shorter() {
    let (blind, cc) = (incast(2, false, 48), incast(2, true, 48));
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

#[test]
fn incast_8_to_1_under_strack_windows_is_bounded_at_line_rate() {
    let r = incast(8, true, 16);
    // Every sender starts at a full window: the first burst queues up to all
    // of them; once the windows have converged the queue stays within two
    // windows of the ECN threshold and the senders share the port (Jain's
    // index of their rates over 20 us windows at least 0.9).
    // STrack's window at the start: `init_cwnd_pct` of the default network's BDP.
    let net = rnic::CcNetwork::default();
    let bdp = net.link_gbps as u64 * net.base_rtt_ns as u64 / 8 * net.init_cwnd_pct as u64 / 100;
    let ecn = IncastConfig::default().ecn_bytes.expect("the incast marks CE");
    let (first_burst, steady) = (8 * bdp + ecn, ecn + 2 * bdp);
    let conv = r.convergence_ns(10, 0.9, steady);
    eprintln!(
        "8:1 incast under STrack's windows: {:.1} Gb/s, port at most {} B queued, {} drops, {} CE marks; per sender {:?} Gb/s; converged at {conv:?} ns",
        r.gbps,
        r.max_backlog,
        r.drops,
        r.marked,
        r.flows.iter().map(|f| (f.gbps * 10.0).round() / 10.0).collect::<Vec<_>>(),
    );
    assert!(r.gbps >= 0.9 * 100.0, "aggregate goodput {:.1} Gb/s", r.gbps);
    assert_eq!(r.drops, 0, "the port dropped frames");
    assert!(r.max_backlog <= first_burst, "the port queued {} B", r.max_backlog);
    assert!(conv.is_some(), "the queue never stayed under {steady} B with fair shares: {:?}", r.backlog_per_bin);
}

#[test]
fn incast_8_to_1_under_dctcp_windows_is_bounded_at_line_rate() {
    let transport = FlowTransport { window: Window::Dctcp, ..Default::default() };
    let r = incast_with(IncastConfig { fan_in: 8, msgs: 16, transport, ..Default::default() });
    // DCTCP's largest window is STrack's, and it starts there.
    let window = rnic::CcNetwork::default().max_window_bytes();
    let ecn = IncastConfig::default().ecn_bytes.expect("the incast marks CE");
    let (first_burst, steady) = (8 * window + ecn, ecn + 2 * window);
    // DCTCP converges the queue, not each 20 us share: the queue alone over 10 bins.
    let conv = r.convergence_ns(10, 0.0, steady);
    let rates: Vec<f64> = r.flows.iter().map(|f| f.gbps).collect();
    let fair = rnic_tools::scenario::jain(&rates);
    eprintln!(
        "8:1 incast under DCTCP's windows: {:.1} Gb/s, port at most {} B queued, {} drops, {} CE marks; per sender {:?} Gb/s (Jain {fair:.3}); queue settled at {conv:?} ns",
        r.gbps,
        r.max_backlog,
        r.drops,
        r.marked,
        rates.iter().map(|g| (g * 10.0).round() / 10.0).collect::<Vec<_>>(),
    );
    assert!(r.gbps >= 0.9 * 100.0, "aggregate goodput {:.1} Gb/s", r.gbps);
    assert_eq!(r.drops, 0, "the port dropped frames");
    assert!(r.marked > 0, "DCTCP runs on ECN marks");
    assert!(r.max_backlog <= first_burst, "the port queued {} B", r.max_backlog);
    assert!(conv.is_some(), "the queue never stayed under {steady} B: {:?}", r.backlog_per_bin);
    assert!(fair >= 0.95, "senders' shares {rates:?}");
}
