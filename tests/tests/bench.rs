//! The rnic-perf engine end to end (write_bw, send_bw, read_bw): small runs by default, the heavy ones
//! behind #[ignore]:
//!     cargo test --release -p rnic-tests --test bench -- --ignored

use rnic::Mtu;
use rnic_tests::{assert_no_violations, pair};
use rnic_tools::bench::{run, BenchConfig, Mode};

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
