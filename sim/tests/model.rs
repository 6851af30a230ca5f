//! The generic model API against the emitted Verilog of every top.

use rnic_sim::model::{top_names, top_ports};
use rnic_sim::{Model, ModelError, PortDir, WaveFormat, WaveWindow};

#[test]
fn core_top_is_built_with_its_documented_ports() {
    assert!(top_names().contains(&"core"));
    let ports = top_ports("core").unwrap();
    let find = |n: &str| *ports.iter().find(|p| p.name == n).unwrap_or_else(|| panic!("port {n}"));
    assert_eq!((find("clock").width, find("clock").dir), (1, PortDir::In));
    assert_eq!((find("reset").width, find("reset").dir), (1, PortDir::In));
    assert_eq!((find("reg_wr_data").width, find("reg_wr_data").dir), (64, PortDir::In));
    assert_eq!((find("reg_rd_resp_data").width, find("reg_rd_resp_data").dir), (64, PortDir::Out));
    assert_eq!((find("pcie_rc_data").width, find("pcie_rc_data").dir), (512, PortDir::In));
    assert_eq!((find("pcie_rq_len").width, find("pcie_rq_len").dir), (13, PortDir::Out));
    assert_eq!((find("pcie_mrrs").width, find("pcie_mrrs").dir), (3, PortDir::In));
    assert_eq!((find("pcie_wr_keep").width, find("pcie_wr_keep").dir), (64, PortDir::Out));
    assert_eq!((find("net_tx_keep").width, find("net_tx_keep").dir), (64, PortDir::Out));
    assert_eq!((find("net_rx_mac_drop").width, find("net_rx_mac_drop").dir), (1, PortDir::In));
    assert_eq!(ports.len(), 40);
}

#[test]
fn inputs_of_every_width_round_trip() {
    let mut m = Model::new("core").unwrap();
    let addr = m.port("reg_wr_addr").unwrap();
    let data = m.port("reg_wr_data").unwrap();
    let tag = m.port("pcie_rc_tag").unwrap();
    let last = m.port("pcie_rc_done").unwrap();
    let cpl = m.port("pcie_rc_data").unwrap();
    let keep = m.port("net_rx_keep").unwrap();
    m.set(addr, 0x1_dead_beef);
    m.set(data, 0x0123_4567_89ab_cdef);
    m.set(tag, 0x1a5);
    m.set(last, 3);
    m.set(keep, u64::MAX);
    assert_eq!(m.get(addr), 0xdead_beef, "bits beyond the width are dropped");
    assert_eq!(m.get(data), 0x0123_4567_89ab_cdef);
    assert_eq!(m.get(tag), 0xa5);
    assert_eq!(m.get(last), 1);
    assert_eq!(m.get(keep), u64::MAX);
    let words: Vec<u32> = (0..16u32).map(|i| 0x0111_1111 * i + 7).collect();
    m.set_wide(cpl, &words);
    let mut back = [0u32; 16];
    m.get_wide(cpl, &mut back);
    assert_eq!(&back[..], &words[..]);
    assert_eq!(m.get_via_shim(cpl), words, "direct storage and the C shim agree");
    let bytes: Vec<u8> = (0..64).map(|i| i as u8 ^ 0x5a).collect();
    m.set_bytes(cpl, &bytes);
    let w = m.get_via_shim(cpl);
    assert_eq!(w[0], u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]), "byte i is bits [8i+7:8i]");
    let mut out = [0u8; 64];
    m.get_bytes(cpl, &mut out);
    assert_eq!(&out[..], &bytes[..]);
    m.set_via_shim(data, &[1, 2]);
    assert_eq!(m.get(data), 2 << 32 | 1);
    m.set_via_shim(addr, &[0xffff_ffff]);
    assert_eq!(m.get_via_shim(addr), vec![0xffff_ffff]);
    m.eval();
    m.tick();
    assert_eq!(m.time(), 2, "one cycle is two VCD time units");
}

#[test]
fn unknown_tops_and_ports_are_errors() {
    assert!(matches!(Model::new("no_such_top"), Err(ModelError::NoTop(..))));
    let m = Model::new("core").unwrap();
    assert!(matches!(m.port("no_such_port"), Err(ModelError::NoPort { .. })));
}

#[test]
fn every_top_instantiates_and_clocks() {
    for name in top_names() {
        let mut m = Model::new(name).unwrap();
        assert_eq!(m.name(), name);
        assert!(!m.ports().is_empty());
        for _ in 0..10 {
            m.tick();
        }
        // Two instances of one top are independent.
        let mut a = Model::new(name).unwrap();
        let b = Model::new(name).unwrap();
        if let Some(p) = a.ports().iter().find(|p| p.dir == PortDir::In && p.name != "clock") {
            let pa = a.port(p.name).unwrap();
            let pb = b.port(p.name).unwrap();
            a.set(pa, 1);
            assert_eq!(a.get(pa), 1);
            assert_eq!(b.get(pb), 0);
        }
    }
}

/// The error of `trace` on `name`, which must fail.
fn trace_error(name: &str, window: WaveWindow) -> String {
    let mut m = Model::new("core").unwrap();
    let path = std::env::temp_dir().join(name);
    match m.trace(&path, window) {
        Err(ModelError::Trace(e)) => e,
        other => panic!("{name}: expected a trace error, got {:?}", other.map(|_| ())),
    }
}

#[test]
fn waves_refuse_what_the_build_cannot_write() {
    assert!(trace_error("x.txt", WaveWindow::default()).contains("named .vcd or .fst"));
    for f in [WaveFormat::Vcd, WaveFormat::Fst] {
        if WaveFormat::BUILT == Some(f) {
            continue;
        }
        let e = trace_error(&format!("rnic-sim-refused.{}", f.name()), WaveWindow::default());
        assert!(e.contains(&format!("`{}` feature", f.name())), "{e}");
    }
    if WaveFormat::BUILT.is_some() {
        let name = format!("rnic-sim-empty.{}", WaveFormat::BUILT.unwrap().name());
        assert!(trace_error(&name, WaveWindow { first: 5, last: Some(4) }).contains("empty"));
    }
}

/// Writes cycles 3..=5 of a 10-cycle run; returns the file (removed by the caller).
#[cfg(any(feature = "vcd", feature = "fst"))]
fn windowed_waveform(ext: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("rnic-sim-window-{}.{ext}", std::process::id()));
    let mut m = Model::new("core").unwrap();
    m.trace(&path, WaveWindow { first: 3, last: Some(5) }).unwrap();
    for cycle in 0..10 {
        m.tick();
        assert_eq!(m.tracing(), cycle < 5, "after cycle {cycle}: the file is closed with the window's last");
    }
    path
}

#[cfg(feature = "vcd")]
#[test]
fn vcd_holds_the_window_in_picoseconds() {
    let path = windowed_waveform("vcd");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(text.contains("$var") && text.contains("clock"));
    assert!(text.contains("$timescale 1ps $end"), "{}", &text[..text.len().min(400)]);
    let stamps: Vec<u64> = text.lines().filter_map(|l| l.strip_prefix('#')).map(|t| t.parse().unwrap()).collect();
    let half = rnic_spec::params::CLOCK_PS / 2;
    // Cycle n is dumped at half-cycles 2n (clock low) and 2n + 1 (clock high).
    let want: Vec<u64> = (6..=11).map(|h| h * half).collect();
    assert_eq!(stamps, want);
}

#[cfg(feature = "fst")]
#[test]
fn fst_holds_the_window_in_picoseconds() {
    let path = windowed_waveform("fst");
    let b = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    // FST's header block: tag 0, then big-endian start and end times at 9 and 17, the timescale exponent at 73.
    assert_eq!(b[0], 0, "header block first");
    let be = |o: usize| u64::from_be_bytes(b[o..o + 8].try_into().unwrap());
    let half = rnic_spec::params::CLOCK_PS / 2;
    assert_eq!((be(9), be(17)), (6 * half, 11 * half));
    assert_eq!(b[73] as i8, -12, "timescale 1 ps");
}
