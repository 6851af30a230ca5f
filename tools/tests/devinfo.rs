//! `rnic-devinfo` as a user runs it: a cosimulated NIC's identity, status and
//! DMA check; device strings that do not parse, a PCI address with no device
//! and a vfio-user socket nobody serves each end with a message
//! and a failing status. (`simd.rs` opens NICs that another process serves.)

use std::process::Command;

fn devinfo(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rnic-devinfo")).args(args).output().expect("rnic-devinfo runs");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

fn field<'a>(out: &'a str, name: &str) -> &'a str {
    out.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|r| r.trim_start().strip_prefix(": ")))
        .unwrap_or_else(|| panic!("no {name:?} line in\n{out}"))
}

#[test]
fn a_cosimulated_nic_reports_itself_and_passes_the_dma_check() {
    for (args, name) in [(&[][..], "cosim:nic0"), (&["--dev", "cosim:1", "--dma-bytes", "5000"][..], "cosim:nic1")] {
        let (ok, out, err) = devinfo(args);
        assert!(ok, "{args:?}\n{out}\n{err}");
        assert_eq!(field(&out, "device"), name);
        assert_eq!(field(&out, "version"), rnic_spec::regs::ID_VERSION.to_string());
        let qps = 1usize << rnic_spec::params::QPN_BITS;
        assert!(field(&out, "QPs, MRs, CQs").starts_with(&format!("{qps}, ")), "{out}");
        assert_eq!(field(&out, "status"), "ready");
        assert_eq!(field(&out, "counters"), "all 0");
        let want = if args.is_empty() { 4 << 20 } else { 5000 };
        assert!(field(&out, "DMA check").starts_with(&format!("{want} bytes at bus address ")), "{out}");
        assert!(field(&out, "DMA check").ends_with("freed: OK"), "{out}");
    }
}

#[test]
fn devices_that_cannot_be_opened_are_refused_with_the_reason() {
    let cases = [
        (vec!["--dev", "nic0"], "bad device string \"nic0\": unknown kind"),
        (vec!["--dev", "vfio:3b:00.8"], "function 0x8 is above 0x7"),
        (vec!["--dev", "vfio:fffe:ff:1f.7"], "cannot open vfio:fffe:ff:1f.7: there is no PCI device fffe:ff:1f.7"),
        (
            vec!["--dev", "vfio-user:/run/rnic/nic0.sock"],
            "/run/rnic/nic0.sock does not exist: start the server first (`rnic-simd`",
        ),
        (vec!["--dev", "cosim:16"], "NICs 0 to 15"),
        (vec!["--dma-bytes", "0"], "--dma-bytes"),
    ];
    for (args, want) in cases {
        let (ok, out, err) = devinfo(&args);
        assert!(!ok, "{args:?} succeeded:\n{out}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!out.contains("DMA check"), "{args:?}: {out}");
    }
}
