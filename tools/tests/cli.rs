//! `rnic-perf` as a user runs it: the fault flags act on the links, a loss
//! stops the run with a message that names it, bad values are refused.

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
fn a_lost_frame_stops_the_run_and_is_named() {
    let (ok, out, err) = perf(&["write_bw", "-s", "4096", "-n", "40", "--loss", "20", "--stall-cycles", "50000"]);
    assert!(!ok, "a loss cannot be recovered yet: {out}");
    assert!(err.contains("no progress") && err.contains("PSN sequence NAK(s) from the peer"), "{err}");
}

#[test]
fn bad_fault_values_are_refused() {
    let (ok, _, err) = perf(&["write_bw", "--loss", "150"]);
    assert!(!ok && err.contains("not a percentage"), "{err}");
    let (ok, _, err) = perf(&["write_bw", "--burst", "0.5"]);
    assert!(!ok && err.contains("--burst 0.5 must be at least 1"), "{err}");
}
