//! The rnic-perf engine end to end (write_bw, send_bw, read_bw; latency,
//! timed and bidirectional runs): small runs by default, the heavy ones
//! behind #[ignore]:
//!     cargo test --release -p rnic-tests --test bench -- --ignored
//! The rnic-perf binary itself (its tables and flags) is tested in tools/tests/cli.rs.

use rnic::Mtu;
use rnic_sim::SimConfig;
use rnic_tests::{assert_no_violations, pair, pair_with};
use rnic_tools::bench::{run, run_bidir, BenchConfig, Mode, Report};

fn bench(mode: Mode, size: u32, iters: u64, qps: u32, tx_depth: u32, mtu: Mtu) {
    let nics = pair();
    let mut c = BenchConfig::new(mode);
    c.size = size;
    c.iters = iters;
    c.qps = qps;
    c.tx_depth = tx_depth;
    c.mtu = mtu;
    let r = run(&nics.ctxs[0], &nics.ctxs[1], &c)
        .unwrap_or_else(|e| panic!("{mode:?} {size} B x {iters} on {qps} QPs: {e}"));
    assert_eq!(r.iters, iters);
    assert_eq!(r.verified_bytes, size as u64 * iters, "every message verified once");
    assert!(r.cycles > 0 && r.gbps() > 0.0);
    println!("{}\n{}", rnic_tools::bench::Report::header(), r.row());
    assert_no_violations(&nics);
}

#[test]
fn write_bw_small() {
    bench(Mode::WriteBw, 4096, 64, 2, 8, Mtu::Mtu4096);
}

#[test]
fn send_bw_small() {
    bench(Mode::SendBw, 4096, 64, 2, 8, Mtu::Mtu4096);
}

#[test]
fn read_bw_small() {
    bench(Mode::ReadBw, 4096, 64, 2, 8, Mtu::Mtu4096);
}

/// Destination memory over the budget: slots are reused, each checked before reuse.
fn slot_reuse(mode: Mode) {
    let nics = pair();
    let mut c = BenchConfig::new(mode);
    c.size = 8192;
    c.iters = 40;
    c.qps = 2;
    c.tx_depth = 4;
    c.own_slot_budget = 0;
    let r = run(&nics.ctxs[0], &nics.ctxs[1], &c).unwrap_or_else(|e| panic!("{mode:?}: {e}"));
    assert!(!r.own_slots);
    assert_eq!(r.verified_bytes, 8192 * 40);
    assert_no_violations(&nics);
}

#[test]
fn write_bw_slot_reuse() {
    slot_reuse(Mode::WriteBw);
}

#[test]
fn read_bw_slot_reuse() {
    slot_reuse(Mode::ReadBw);
}

/// A small MTU: many response packets per READ, an unaligned last one.
#[test]
fn read_bw_mtu256() {
    bench(Mode::ReadBw, 10000, 32, 2, 8, Mtu::Mtu256);
}

/// One message in flight: each is posted after the previous one completed,
/// and its doorbell-to-completion time is its latency (the CQ polled every cycle).
fn latency(mode: Mode) {
    let nics = pair_with(SimConfig { wait_cycles: 1, ..Default::default() });
    let mut c = BenchConfig::new(mode);
    c.latency = true;
    c.size = 1000;
    c.iters = 20;
    let r = run(&nics.ctxs[0], &nics.ctxs[1], &c).unwrap_or_else(|e| panic!("{mode:?}: {e}"));
    assert_eq!((r.iters, r.posts.len(), r.verified_bytes), (20, 20, 20_000), "{mode:?}");
    for k in 1..r.completions.len() {
        assert!(r.posts[k] >= r.completions[k - 1], "{mode:?}: message {k} posted before {} completed", k - 1);
    }
    let s = r.latency_stats().unwrap();
    // At least the doorbell's MMIO write (125 cycles) and a PCIe round trip (250).
    assert!(s.min > 375 && s.min as f64 <= s.typical && s.typical <= s.max as f64, "{mode:?}: {s:?}");
    assert!(s.max < 10_000, "{mode:?}: {s:?}");
    println!("{}\n{}", Report::lat_header(), r.lat_row());
    assert_no_violations(&nics);
}

#[test]
fn write_latency() {
    latency(Mode::WriteBw);
}

/// perftest's `-e`: the run sleeps on completion events of the requester
/// CQ. Every message still completes and is verified, the run took events
/// (one per message at most: each waits for one), and SEND bandwidth runs
/// are refused.
fn events(mode: Mode, latency: bool) {
    let nics = pair();
    let mut c = BenchConfig::new(mode);
    c.latency = latency;
    c.events = true;
    c.size = 3000;
    c.iters = 40;
    c.tx_depth = 4;
    let r = run(&nics.ctxs[0], &nics.ctxs[1], &c).unwrap_or_else(|e| panic!("{mode:?} with events: {e}"));
    assert_eq!((r.iters, r.verified_bytes), (40, 40 * 3000), "{mode:?}");
    assert!(r.events >= 1 && r.events <= 40, "{mode:?}: {} events for 40 messages", r.events);
    if latency {
        assert_eq!(r.events, 40, "{mode:?}: one message in flight, each completion waited for");
    }
    let irqs = nics.ctxs[0].counters().unwrap().into_iter().find(|(n, _)| *n == "irqs").unwrap().1;
    assert!(irqs >= r.events, "{mode:?}: {irqs} MSI-X messages for {} events", r.events);
    assert_no_violations(&nics);
}

#[test]
fn events_write_lat_write_bw_read_bw_send_lat() {
    events(Mode::WriteBw, true);
    events(Mode::WriteBw, false);
    events(Mode::ReadBw, false);
    events(Mode::SendBw, true);
    let nics = pair();
    let mut c = BenchConfig::new(Mode::SendBw);
    c.events = true;
    assert!(run(&nics.ctxs[0], &nics.ctxs[1], &c).is_err(), "send_bw with events is refused");
}

#[test]
fn send_latency() {
    latency(Mode::SendBw);
}

#[test]
fn read_latency() {
    latency(Mode::ReadBw);
}

/// A timed run posts until its deadline, then lets what is in flight complete.
#[test]
fn timed_runs_stop_posting_at_the_deadline() {
    for mode in [Mode::WriteBw, Mode::SendBw] {
        let nics = pair();
        let mut c = BenchConfig::new(mode);
        c.size = 4096;
        c.qps = 2;
        c.tx_depth = 8;
        c.duration_cycles = Some(5000);
        let r = run(&nics.ctxs[0], &nics.ctxs[1], &c).unwrap_or_else(|e| panic!("{mode:?}: {e}"));
        assert!(r.iters > 20, "{mode:?}: {} messages in 20 us", r.iters);
        assert!(r.posts.iter().all(|&p| p < r.start + 5000), "{mode:?}: posted after the deadline");
        assert!(r.cycles >= 5000 && !r.own_slots, "{mode:?}");
        assert_eq!(r.verified_bytes, 4096 * r.iters, "{mode:?}");
        assert_no_violations(&nics);
    }
}

/// Both ways at once, each direction on its own QPs with its own patterns.
#[test]
fn bidirectional_runs() {
    for mode in [Mode::WriteBw, Mode::SendBw, Mode::ReadBw] {
        let nics = pair();
        let mut c = BenchConfig::new(mode);
        c.size = 4096;
        c.iters = 32;
        c.qps = 2;
        c.tx_depth = 8;
        let (ab, ba) = run_bidir(&nics.ctxs[0], &nics.ctxs[1], &c).unwrap_or_else(|e| panic!("{mode:?}: {e}"));
        for r in [&ab, &ba] {
            assert_eq!((r.iters, r.verified_bytes), (32, 32 * 4096), "{mode:?}");
        }
        let both = Report::combine(&ab, &ba);
        assert_eq!(both.iters, 64);
        assert!(both.gbps() > ab.gbps().max(ba.gbps()), "{mode:?}: {} vs {} and {}", both.gbps(), ab.gbps(), ba.gbps());
        assert_no_violations(&nics);
    }
}

/// Several sizes on one pair of NICs, as `rnic-perf -a` runs them.
#[test]
fn runs_one_after_another_on_the_same_nics() {
    let nics = pair();
    for (mode, size) in [(Mode::WriteBw, 2), (Mode::SendBw, 3000), (Mode::ReadBw, 70_000), (Mode::WriteBw, 64)] {
        let mut c = BenchConfig::new(mode);
        c.size = size;
        c.iters = 6;
        c.qps = 3;
        let r = run(&nics.ctxs[0], &nics.ctxs[1], &c).unwrap_or_else(|e| panic!("{mode:?} {size}: {e}"));
        assert_eq!(r.verified_bytes, 6 * size as u64, "{mode:?} {size}");
    }
    assert_no_violations(&nics);
}

#[test]
#[ignore = "heavy: the default rnic-perf run (64 KiB x 1000)"]
fn write_bw_64k_x1000() {
    bench(Mode::WriteBw, 65536, 1000, 1, 128, Mtu::Mtu4096);
}

#[test]
#[ignore = "heavy: 64 KiB READs x 1000 (the write_bw default run, read the other way)"]
fn read_bw_64k_x1000() {
    bench(Mode::ReadBw, 65536, 1000, 1, 128, Mtu::Mtu4096);
}

#[test]
#[ignore = "heavy: 64 KiB SENDs x 1000 on 4 QPs"]
fn send_bw_64k_x1000_4qp() {
    bench(Mode::SendBw, 65536, 1000, 4, 64, Mtu::Mtu4096);
}

#[test]
#[ignore = "heavy: message rate, 64 B x 20000 on 16 QPs"]
fn write_bw_64b_16qp() {
    bench(Mode::WriteBw, 64, 20000, 16, 128, Mtu::Mtu4096);
}

#[test]
#[ignore = "heavy: small MTU, many packets per message"]
fn write_bw_mtu256() {
    bench(Mode::WriteBw, 65536, 200, 2, 32, Mtu::Mtu256);
}
