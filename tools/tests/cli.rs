//! `rnic-perf` as a user runs it: the fault flags act on the links, losses
//! are recovered and counted, bad values are refused; perftest's tables
//! (bandwidth with its peak, latency), -n per QP, -a, -D, -b, --counters,
//! and a reader that closes stdout early.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn perf(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rnic-perf")).args(args).output().expect("rnic-perf runs");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

#[test]
fn duplicated_frames_are_absorbed_and_counted() {
    let (ok, out, err) = perf(&["write_bw", "-s", "4096", "-n", "100", "--dup", "5"]);
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("verified 409600 bytes: OK"), "{out}");
    // 100 messages of one QP are too few to reach steady state, and the tool says so.
    let steady = out.lines().find(|l| l.starts_with(" steady state  : ")).unwrap_or_else(|| panic!("{out}"));
    assert!(steady.contains("TOO SHORT"), "{steady}");
    let dups: u64 = out
        .lines()
        .filter(|l| l.starts_with(" link of NIC"))
        .map(|l| {
            l.split(", ")
                .find(|f| f.ends_with(" duplicated"))
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
                .parse::<u64>()
                .unwrap()
        })
        .sum();
    assert!(dups > 0, "5% of the frames are duplicated: {out}");
}

#[test]
fn lost_frames_are_recovered_and_counted() {
    // 100 per QP: 200 messages.
    let (ok, out, err) = perf(&["write_bw", "-s", "4096", "-n", "100", "-q", "2", "--loss", "5"]);
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("verified 819200 bytes: OK"), "{out}");
    let line = out.lines().find(|l| l.starts_with(" loss recovery")).unwrap_or_else(|| panic!("{out}"));
    let counts = line.split(';').next().unwrap();
    let count = |what: &str| -> u64 {
        counts.split(", ").find_map(|f| f.strip_suffix(what).and_then(|n| n.parse().ok())).unwrap()
    };
    // Selective repeat is on by default: losses are resent packet by packet.
    assert!(count(" resends") > 0, "5% loss needs resends: {line}");
    assert!(count(" placed out of order") > 0, "{line}");
}

#[test]
fn bad_fault_values_are_refused() {
    let (ok, _, err) = perf(&["write_bw", "--loss", "150"]);
    assert!(!ok && err.contains("not a percentage"), "{err}");
    let (ok, _, err) = perf(&["write_bw", "--burst", "0.5"]);
    assert!(!ok && err.contains("--burst 0.5 must be at least 1"), "{err}");
}

/// Runs `args`, which must succeed, and returns stdout.
fn perf_ok(args: &[&str]) -> String {
    let (ok, out, err) = perf(args);
    assert!(ok, "rnic-perf {}:\n{out}\n{err}", args.join(" "));
    out
}

/// The whitespace-separated fields of the table rows under the header line containing `header`.
fn rows(out: &str, header: &str) -> Vec<Vec<f64>> {
    out.lines()
        .skip_while(|l| !l.contains(header))
        .skip(1)
        .take_while(|l| !l.starts_with("---"))
        .map(|l| l.split_whitespace().map(|f| f.parse().unwrap_or_else(|_| panic!("{l}\n{out}"))).collect())
        .collect()
}

const LAT_HEADER: &str = " #bytes     #iterations    t_min[usec]    t_max[usec]    t_typical[usec]  t_avg[usec]    \
                          t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]";
const BW_HEADER: &str = " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]";

#[test]
fn latency_tests_print_perftest_latency_table() {
    for test in ["write_lat", "read_lat", "send_lat"] {
        let out = perf_ok(&[test, "-s", "64", "-n", "30"]);
        assert!(out.contains(LAT_HEADER), "{out}");
        let r = rows(&out, "t_typical[usec]");
        assert_eq!(r.len(), 1, "{out}");
        let [bytes, iters, min, max, typical, avg, stdev, p99, p999] = r[0][..] else { panic!("{out}") };
        assert_eq!((bytes, iters), (64.0, 30.0), "{out}");
        assert!(min > 0.0 && min <= typical && typical <= max, "{out}");
        assert!(min <= avg && avg <= max && stdev >= 0.0, "{out}");
        assert!(typical <= p99 && p99 <= p999 && p999 <= max, "{out}");
        // Doorbell to completion includes at least the MMIO write (0.5 us) and a PCIe round trip (1 us).
        assert!(min > 1.5 && max < 50.0, "{out}");
        assert!(out.contains(" TX depth       : 1\n"), "{out}");
        assert!(out.contains(" verified 1920 bytes: OK"), "{out}");
    }
}

#[test]
fn iterations_are_per_qp() {
    let out = perf_ok(&["write_bw", "-s", "4K", "-q", "2", "-n", "10"]);
    assert!(out.contains(" Iterations      : 10 per QP (20 in total)"), "{out}");
    assert!(out.contains(BW_HEADER), "{out}");
    let r = rows(&out, "BW peak[Gb/sec]");
    let [bytes, iters, peak, avg, mpps] = r[0][..] else { panic!("{out}") };
    assert_eq!((bytes, iters), (4096.0, 20.0), "{out}");
    assert!(avg > 0.0 && peak >= avg && mpps > 0.0, "{out}");
    assert!(out.contains(" verified 81920 bytes: OK"), "{out}");
    // The old meaning, a total spread round-robin.
    let out = perf_ok(&["write_bw", "-s", "4K", "-q", "4", "--total-iters", "10"]);
    assert_eq!(rows(&out, "BW peak[Gb/sec]")[0][1], 10.0, "{out}");
    assert!(out.contains(" verified 40960 bytes: OK"), "{out}");
}

#[test]
fn counters_of_both_nics() {
    let out = perf_ok(&["write_bw", "-s", "4K", "-n", "20", "--counters"]);
    let head = out.lines().position(|l| l.starts_with(" counters      : both NICs")).unwrap_or_else(|| panic!("{out}"));
    assert!(out.lines().nth(head).unwrap().contains("no counter moved"), "{out}");
    let cols: Vec<&str> = out.lines().nth(head + 1).unwrap().split_whitespace().collect();
    assert_eq!(cols, ["counter", "NIC0", "NIC1"], "{out}");
    let counter = |name: &str| -> (u64, u64) {
        let l = out.lines().find(|l| l.split_whitespace().next() == Some(name)).unwrap_or_else(|| panic!("{out}"));
        let v: Vec<u64> = l.split_whitespace().skip(1).map(|f| f.parse().unwrap()).collect();
        (v[0], v[1])
    };
    // 20 one-packet WRITEs from NIC0, each acknowledged by NIC1.
    assert_eq!(counter("tx_pkts"), (20, 0), "{out}");
    assert_eq!(counter("rx_frames").1, 20, "{out}");
    assert!(counter("tx_acks").1 > 0 && counter("rx_acks").0 == counter("tx_acks").1, "{out}");
    assert_eq!(counter("cqes").0, 20, "{out}");
    assert_eq!(counter("rx_icrc_err"), (0, 0), "{out}");
}

#[test]
fn sweep_prints_one_row_per_size() {
    let out = perf_ok(&["write_bw", "-a", "-n", "1"]);
    let r = rows(&out, "BW peak[Gb/sec]");
    let sizes: Vec<f64> = r.iter().map(|f| f[0]).collect();
    let want: Vec<f64> = (1..=23).map(|b| (1u64 << b) as f64).collect();
    assert_eq!(sizes, want, "{out}");
    assert!(r.iter().all(|f| f.len() == 5 && f[1] == 1.0 && f[3] > 0.0), "{out}");
    assert!(out.contains(" sweep         : 23 sizes"), "{out}");
    assert!(out.contains(&format!(" verified {} bytes: OK", (1u64 << 24) - 2)), "{out}");
}

#[test]
fn qp_sweep_prints_a_row_per_count_and_writes_its_table_and_plots() {
    let dir = std::env::temp_dir().join(format!("rnic-qp-sweep-{}", std::process::id()));
    let out = perf_ok(&["send_bw", "-s", "2K", "-n", "8", "--qps-sweep", "1,3,252", "--plot", dir.to_str().unwrap()]);
    assert!(out.contains(" Number of qps   : 1, 3, 252 (a run each)"), "{out}");
    assert!(out.contains(" Iterations      : 8 per QP, at each QP count"), "{out}");
    // qps, bytes, iterations, peak, average, Mpps, second half (a short run says so after them).
    let r: Vec<Vec<f64>> = out
        .lines()
        .skip_while(|l| !l.starts_with(" #qps "))
        .skip(1)
        .take_while(|l| !l.starts_with("---"))
        .map(|l| l.split_whitespace().take(7).map(|f| f.parse().unwrap_or_else(|_| panic!("{l}\n{out}"))).collect())
        .collect();
    assert_eq!(r.iter().map(|f| f[0]).collect::<Vec<_>>(), [1.0, 3.0, 252.0], "{out}");
    for f in &r {
        assert_eq!((f[1], f[2]), (2048.0, 8.0 * f[0]), "{out}");
        assert!(f[4] > 0.0 && f[3] >= f[4] && f[5] > 0.0 && f[6] > 0.0, "{out}");
    }
    assert!(out.contains(" sweep         : 3 QP counts"), "{out}");
    assert!(out.contains(&format!(" verified {} bytes: OK", 2048 * 8 * 256)), "{out}");
    let csv = std::fs::read_to_string(dir.join("qp_sweep.csv")).expect("qp_sweep.csv");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "qps,bytes,iterations,gbps_average,gbps_peak,gbps_second_half,mpps", "{csv}");
    assert_eq!(lines.len(), 4, "{csv}");
    assert!(lines[3].starts_with("252,2048,2016,"), "{csv}");
    for png in ["qp_sweep_gbps.png", "qp_sweep_mpps.png"] {
        let b = std::fs::read(dir.join(png)).expect(png);
        assert!(b.len() > 1000 && b.starts_with(b"\x89PNG"), "{png}");
    }
    let _ = std::fs::remove_dir_all(&dir);
    let refused = |args: &[&str], why: &str| {
        let (ok, out, err) = perf(args);
        assert!(!ok && err.contains(why), "{args:?}: {out}\n{err}");
    };
    refused(&["write_bw", "--qps-sweep", "1,0"], "--qps-sweep 0: 1 to 254 QPs");
    refused(&["write_bw", "--qps-sweep", "255"], "--qps-sweep 255: 1 to 254 QPs");
    refused(&["write_bw", "-b", "--qps-sweep", "128"], "--qps-sweep 128: 1 to 127 QPs");
    refused(&["write_bw", "-q", "2", "--qps-sweep", "4"], "cannot be used with");
    refused(&["write_lat", "--qps-sweep", "2"], "one QP");
}

#[test]
fn timed_and_bidirectional_runs() {
    let out = perf_ok(&["write_bw", "-s", "4K", "-D", "20us"]);
    assert!(out.contains(" Iterations      : as many as 20.0 us of simulated time (5000 cycles) takes"), "{out}");
    let iters = rows(&out, "BW peak[Gb/sec]")[0][1];
    assert!(iters > 10.0, "{out}");
    assert!(out.contains(&format!(" verified {} bytes: OK", iters as u64 * 4096)), "{out}");

    let out = perf_ok(&["send_bw", "-b", "-s", "4K", "-q", "2", "-n", "20"]);
    assert!(out.contains("NIC0 <-> NIC1, bidirectional"), "{out}");
    assert_eq!(rows(&out, "BW peak[Gb/sec]")[0][1], 80.0, "2 QPs x 20 each way: {out}");
    assert!(out.contains(" directions    : NIC0 -> NIC1 "), "{out}");
    assert!(out.contains(" verified 327680 bytes: OK"), "{out}");
}

#[test]
fn perftest_flags_and_refusals() {
    let out = perf_ok(&["write_bw", "-s", "1K", "-n", "4", "-m", "1024", "--report_gbits"]);
    assert!(out.contains(" Mtu             : 1024 "), "{out}");
    let refused = |args: &[&str], why: &str| {
        let (ok, out, err) = perf(args);
        assert!(!ok && err.contains(why), "{args:?}: {out}\n{err}");
        assert!(!err.contains("panicked"), "{err}");
    };
    refused(&["write_bw", "-s", "0"], "at least 1 byte");
    refused(&["write_bw", "-s", "3G"], "too large");
    refused(&["write_bw", "-s", "4KB"], "is not a size");
    refused(&["write_bw", "-a", "-s", "4K"], "cannot be used with");
    refused(&["write_bw", "-n", "10", "-D", "1ms"], "cannot be used with");
    refused(&["write_lat", "-b"], "-b (bidirectional) is for the bandwidth tests");
    refused(&["send_lat", "-q", "2"], "one QP");
    refused(&["write_bw", "-s", "1G", "-t", "16", "-n", "100"], "simulated host memory");
    refused(&["send_bw", "-e", "-n", "4"], "events (-e) with send_bw");
    refused(&["write_bw", "-e", "-b", "-n", "4"], "events (-e) in a bidirectional run");
    // perftest's -e: the header says so and the run completes, every byte verified.
    let out = perf_ok(&["write_lat", "-s", "64", "-n", "20", "-e"]);
    assert!(out.contains(" Completions     : events"), "{out}");
    assert!(out.contains("verified 1280 bytes: OK"), "{out}");
    // Receive scatter lists: SEND tests only, 1 to 4 entries; a run places every message across them.
    refused(&["send_bw", "--recv_sge", "5"], "--recv_sge 5: a receive holds 1 to 4 entries");
    refused(&["send_bw", "--recv_sge", "0"], "--recv_sge 0");
    refused(&["write_bw", "--recv_sge", "2"], "only SEND tests post receives");
    let out = perf_ok(&["send_bw", "-s", "10000", "-n", "12", "-m", "1024", "--recv_sge", "3"]);
    assert!(out.contains(" Receive lists   : 3 entries per receive WR"), "{out}");
    assert!(out.contains("verified 120000 bytes: OK"), "{out}");
    // Send gather lists: 1 or 2 entries, not for READs; a run gathers every message from both.
    refused(&["write_bw", "--send_sge", "3"], "--send_sge 3: a send WR gathers from 1 to 2 entries");
    refused(&["read_bw", "--send_sge", "2"], "a READ lands in one entry");
    let out = perf_ok(&["write_bw", "-s", "10001", "-n", "12", "-m", "1024", "--send_sge", "2"]);
    assert!(out.contains(" Gather lists    : 2 entries per send WR"), "{out}");
    assert!(out.contains("verified 120012 bytes: OK"), "{out}");
}

#[test]
fn waveform_flags_are_checked() {
    let refused = |args: &[&str], why: &str| {
        let (ok, out, err) = perf(args);
        assert!(!ok && err.contains(why), "{args:?}: {out}\n{err}");
        assert!(!err.contains("panicked"), "{err}");
    };
    let dir = std::env::temp_dir();
    let file = |ext: &str| dir.join(format!("rnic-cli-refused-{}.{ext}", std::process::id())).display().to_string();
    refused(&["write_lat", "-n", "2", "--waves", &file("txt")], "named .vcd or .fst");
    refused(&["write_lat", "--waves-window", "1:2"], "--waves");
    refused(&["write_lat", "--waves", &file("vcd"), "--waves-window", "9:3"], "before the first");
    refused(&["write_lat", "--waves", &file("vcd"), "--waves-window", "x"], "FIRST:LAST");
    refused(&["perm", "--pcap", &file("pcap")], "not incast or perm");
    // A format this build does not write names the feature to build with.
    let built = if cfg!(feature = "fst") {
        Some("fst")
    } else if cfg!(feature = "vcd") {
        Some("vcd")
    } else {
        None
    };
    for ext in ["vcd", "fst"].into_iter().filter(|e| Some(*e) != built) {
        refused(&["write_lat", "-n", "2", "--waves", &file(ext)], &format!("`{ext}` feature"));
    }
}

/// `--waves` with a window: a file per NIC, holding those cycles in ps
/// (built with `--features vcd` or `--features fst`, as scripts/test.sh does).
#[cfg(any(feature = "vcd", feature = "fst"))]
#[test]
fn waves_of_a_window_are_written_per_nic() {
    let ext = if cfg!(feature = "fst") { "fst" } else { "vcd" };
    let base = std::env::temp_dir().join(format!("rnic-cli-waves-{}.{ext}", std::process::id()));
    let out = perf_ok(&[
        "write_lat",
        "-s",
        "64",
        "-n",
        "3",
        "--waves",
        &base.display().to_string(),
        "--waves-window",
        "100:199",
    ]);
    assert!(out.contains(" waves         : ") && out.contains("cycles 100 to 199 (one cycle = 4 ns)"), "{out}");
    for nic in 0..2 {
        let f = base.with_file_name(format!("rnic-cli-waves-{}.nic{nic}.{ext}", std::process::id()));
        let b = std::fs::read(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        std::fs::remove_file(&f).unwrap();
        let (first, last) = if ext == "fst" {
            let be = |o: usize| u64::from_be_bytes(b[o..o + 8].try_into().unwrap());
            assert_eq!(b[73] as i8, -12, "timescale 1 ps");
            (be(9), be(17))
        } else {
            let text = String::from_utf8(b).unwrap();
            assert!(text.contains("$timescale 1ps $end"));
            let stamps: Vec<u64> =
                text.lines().filter_map(|l| l.strip_prefix('#')).map(|t| t.parse().unwrap()).collect();
            (stamps[0], *stamps.last().unwrap())
        };
        // Cycle 100's clock-low edge to cycle 199's clock-high edge, at 4 ns a cycle.
        assert_eq!((first, last), (100 * 4000, 199 * 4000 + 2000), "NIC {nic}");
    }
}

/// `rnic-perf ... | head -3`: the reader goes away after the header; the
/// tool stops at once, quietly, with status 0 (it would otherwise run for
/// many minutes).
#[test]
fn closed_stdout_ends_the_run_quietly() {
    for args in [&["write_bw", "-n", "1000000"][..], &["write_lat", "-a", "-n", "100000"]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_rnic-perf"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("rnic-perf runs");
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        for _ in 0..3 {
            let mut line = String::new();
            stdout.read_line(&mut line).unwrap();
            assert!(!line.is_empty());
        }
        drop(stdout);
        let t = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if t.elapsed() > Duration::from_secs(60) {
                child.kill().unwrap();
                panic!("rnic-perf {args:?} still runs 60 s after its stdout was closed");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let err = std::io::read_to_string(child.stderr.take().unwrap()).unwrap();
        assert!(status.success(), "{args:?}: {status}\n{err}");
        assert!(!err.contains("panicked") && !err.contains("FAILED"), "{args:?}: {err}");
    }
}
