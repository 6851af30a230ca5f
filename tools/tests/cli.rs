//! `rnic-perf` as a user runs it: the fault flags act on the links, losses
//! are recovered and counted, bad values are refused.

use std::process::Command;

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
    let (ok, out, err) = perf(&["write_bw", "-s", "4096", "-n", "200", "-q", "2", "--loss", "5"]);
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
