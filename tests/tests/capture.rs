//! Capture test: a small WRITE+SEND workload written to a pcap, every frame
//! decoded twice — by `rnic_spec::wire::Frame::decode` here, and by scapy's
//! independent RoCE implementation in scripts/check_pcap.py — checking BTH
//! fields (opcode sequence, destination QP, PSN increments) and the ICRC;
//! then tshark with rnic's Lua dissector (tools/wireshark/rnic.lua) decodes
//! the extension header of every frame, which must agree field by field
//! with the contract's decoder.

use pcap_file::pcap::PcapReader;
use rnic::{AccessFlags, Mtu, RecvWr, SendWr, WcStatus, WrOpcode};
use rnic_sim::SimConfig;
use rnic_spec::wire::{self, opcode, Frame};
use rnic_tests::{assert_no_violations, pair_with, stream, wait, World, SEED};
use rnic_tools::pattern;
use std::path::{Path, PathBuf};
use std::process::Command;

const MTU: Mtu = Mtu::Mtu1024;

/// Messages per QP index: (is WRITE, length).
fn workload(q: usize) -> Vec<(bool, u32)> {
    match q {
        0 => vec![(true, 3000), (true, 1), (false, 2500), (true, 2048)],
        _ => vec![(false, 63), (true, 1024), (true, 1025), (false, 1)],
    }
}

/// One flow of request packets as the checkers expect it.
struct Flow {
    a_qpn: u32,
    b_qpn: u32,
    first_psn: u32,
    msgs: Vec<(bool, u32)>,
    /// Remote VA of each WRITE message (0 for SENDs).
    vas: Vec<u64>,
    rkey: u32,
}

fn expected_opcodes(msgs: &[(bool, u32)]) -> Vec<(u8, u32, u32, usize)> {
    // (opcode, message index, packet index in message, payload length)
    let mtu = MTU.bytes();
    let mut v = Vec::new();
    for (mi, &(write, len)) in msgs.iter().enumerate() {
        let n = len.div_ceil(mtu).max(1);
        for p in 0..n {
            let plen = if p + 1 == n { len - p * mtu } else { mtu };
            v.push((opcode::request(write, p == 0, p + 1 == n), mi as u32, p, plen as usize));
        }
    }
    v
}

fn run_workload(pcap: &Path) -> Vec<Flow> {
    let nics = pair_with(SimConfig { pcap: Some(pcap.to_path_buf()), ..Default::default() });
    let mut flows = Vec::new();
    {
        let w = World::new(&nics, 2, 8, MTU);
        let slot = 4096u64;
        let src = w.pd_a.reg_mr(2 * 4 * slot as usize, AccessFlags::empty()).unwrap();
        let dst = w.pd_b.reg_mr(2 * 4 * slot as usize, AccessFlags::REMOTE_WRITE | AccessFlags::LOCAL_WRITE).unwrap();
        let mut total = 0u64;
        for (q, (a, b)) in w.conns.iter().enumerate() {
            let msgs = workload(q);
            let mut sends = Vec::new();
            let mut vas = Vec::new();
            for (m, &(write, len)) in msgs.iter().enumerate() {
                let off = (q as u64 * 4 + m as u64) * slot;
                src.write(off, &pattern::make(SEED, stream(q as u32, m as u32), len as usize)).unwrap();
                total += len as u64;
                let opcode = if write {
                    WrOpcode::RdmaWrite { remote_addr: dst.addr() + off, rkey: dst.rkey() }
                } else {
                    b.post_recv(&RecvWr { wr_id: m as u64, sg_list: &[dst.sge(off, slot as u32)] }).unwrap();
                    WrOpcode::Send
                };
                vas.push(if write { dst.addr() + off } else { 0 });
                sends.push(SendWr {
                    send_flags: rnic::SendFlags::SIGNALED,
                    wr_id: m as u64,
                    opcode,
                    sg_list: src.sge(off, len).into(),
                });
            }
            a.post_send_batch(&sends).unwrap();
            let first_psn = rnic_tools::bench::initial_psn(SEED, 0, q as u32);
            flows.push(Flow { a_qpn: a.qp_num(), b_qpn: b.qp_num(), first_psn, msgs, vas, rkey: dst.rkey() });
        }
        let wcs = wait(&w.cq_a, flows.iter().map(|f| f.msgs.len()).sum(), total);
        assert!(wcs.iter().all(|c| c.status == WcStatus::Success), "{wcs:?}");
        let sends = flows.iter().flat_map(|f| &f.msgs).filter(|m| !m.0).count();
        let wcs = wait(&w.cq_b, sends, total);
        assert!(wcs.iter().all(|c| c.status == WcStatus::Success), "{wcs:?}");
        for (q, f) in flows.iter().enumerate() {
            for (m, &(_, len)) in f.msgs.iter().enumerate() {
                let off = (q as u64 * 4 + m as u64) * slot;
                let mut got = vec![0u8; len as usize];
                dst.read(off, &mut got).unwrap();
                assert_eq!(
                    pattern::first_mismatch(SEED, stream(q as u32, m as u32), &got),
                    None,
                    "QP index {q} message {m}"
                );
            }
        }
    }
    assert_no_violations(&nics);
    drop(nics);
    flows
}

fn read_pcap(path: &Path) -> Vec<Vec<u8>> {
    let f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut r = PcapReader::new(f).expect("pcap header");
    let mut frames = Vec::new();
    while let Some(p) = r.next_packet() {
        frames.push(p.expect("pcap record").data.into_owned());
    }
    frames
}

/// Decodes every frame with the contract's decoder and checks each flow.
fn check_with_spec(frames: &[Vec<u8>], flows: &[Flow]) {
    let a_ip = u32::from(rnic_tools::cosim::nic_addr(0).ip);
    let b_ip = u32::from(rnic_tools::cosim::nic_addr(1).ip);
    let decoded: Vec<Frame> = frames
        .iter()
        .enumerate()
        .map(|(i, f)| Frame::decode(f).unwrap_or_else(|e| panic!("frame {i} ({} bytes): {e}", f.len())))
        .collect();
    for (q, flow) in flows.iter().enumerate() {
        let reqs: Vec<&Frame> =
            decoded.iter().filter(|f| !f.is_ack() && f.src_ip == a_ip && f.dqpn == flow.b_qpn).collect();
        let want = expected_opcodes(&flow.msgs);
        assert_eq!(reqs.len(), want.len(), "QP index {q}: {} request frames, expected {}", reqs.len(), want.len());
        let ssn0 = reqs[0].ssn;
        for (i, (f, &(op, mi, pi, plen))) in reqs.iter().zip(&want).enumerate() {
            let ctx = format!("QP index {q}, request frame {i} (message {mi}, packet {pi})");
            assert_eq!(f.opcode, op, "{ctx}: opcode");
            assert_eq!(f.psn, (flow.first_psn + i as u32) & 0xFF_FFFF, "{ctx}: PSN");
            assert_eq!(f.dst_ip, b_ip, "{ctx}: destination IP");
            assert_eq!(f.ssn, ssn0 + mi, "{ctx}: SSN");
            assert_eq!(f.psn_offset, pi, "{ctx}: PSN_OFFSET");
            assert_eq!(f.payload.len(), plen, "{ctx}: payload length");
            assert_eq!(f.msg_len, flow.msgs[mi as usize].1, "{ctx}: RETH length");
            if flow.msgs[mi as usize].0 {
                assert_eq!(f.va, flow.vas[mi as usize] + (pi * MTU.bytes()) as u64, "{ctx}: RETH VA");
                assert_eq!(f.rkey, flow.rkey, "{ctx}: RETH rkey");
            }
            let whole = pattern::make(SEED, stream(q as u32, mi), flow.msgs[mi as usize].1 as usize);
            let at = (pi * MTU.bytes()) as usize;
            assert_eq!(f.payload, whole[at..at + plen], "{ctx}: payload bytes");
            if pi + 1 == flow.msgs[mi as usize].1.div_ceil(MTU.bytes()).max(1) {
                assert!(f.ack_req, "{ctx}: the last packet of a message must request an ACK");
            }
        }
        let acks: Vec<&Frame> =
            decoded.iter().filter(|f| f.is_ack() && f.src_ip == b_ip && f.dqpn == flow.a_qpn).collect();
        assert!(!acks.is_empty(), "QP index {q}: no ACK");
        for a in &acks {
            assert_eq!(a.syndrome, wire::syndrome::ACK, "QP index {q}: unexpected NAK {a:?}");
        }
        let last = (flow.first_psn + want.len() as u32 - 1) & 0xFF_FFFF;
        assert_eq!(acks.last().unwrap().psn, last, "QP index {q}: the last ACK must cover the last request");
    }
}

fn scapy_instruction() -> String {
    "scapy is not installed for python3: run `pip install scapy==2.6.1` (or `bash scripts/test.sh`, which installs it)"
        .into()
}

/// Runs scripts/check_pcap.py with the expected flows as JSON.
fn check_with_scapy(pcap: &Path, flows: &[Flow]) {
    let ok = Command::new("python3")
        .args(["-c", "import scapy.contrib.roce"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(ok, "{}", scapy_instruction());
    let fl: Vec<String> = flows
        .iter()
        .map(|f| {
            let msgs: Vec<String> = f.msgs.iter().map(|&(w, l)| format!("[\"{}\", {l}]", if w { "write" } else { "send" })).collect();
            format!(
                "{{\"req_ip\": \"{}\", \"resp_ip\": \"{}\", \"req_qpn\": {}, \"resp_qpn\": {}, \"first_psn\": {}, \"msgs\": [{}]}}",
                rnic_tools::cosim::nic_addr(0).ip,
                rnic_tools::cosim::nic_addr(1).ip,
                f.a_qpn,
                f.b_qpn,
                f.first_psn,
                msgs.join(", ")
            )
        })
        .collect();
    let expect = format!("{{\"mtu\": {}, \"flows\": [{}]}}", MTU.bytes(), fl.join(", "));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/check_pcap.py");
    let out =
        Command::new("python3").arg(&script).arg(pcap).arg("--expect").arg(&expect).output().expect("run python3");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "check_pcap.py failed ({}):\n{text}", out.status);
    println!("{text}");
}

/// The fields the dissector shows, for one frame, as the contract decodes them.
fn spec_fields(f: &Frame) -> Vec<(&'static str, u64)> {
    if f.opcode == opcode::ACK {
        vec![
            ("rnic.ack.syndrome", f.syndrome as u64),
            ("rnic.ack.msn", f.msn as u64),
            ("rnic.ack.ssn", f.ssn as u64),
            ("rnic.ack.psn_offset", f.psn_offset as u64),
            ("rnic.ack.ts", f.ts),
            ("rnic.ack.entropy", f.echo_entropy as u64),
            ("rnic.ack.ecn", f.echo_ecn as u64),
            ("rnic.ack.flags", f.ack_flags as u64),
            ("rnic.ack.epsn", f.epsn as u64),
            ("rnic.ack.msn_psn", f.msn_psn as u64),
            ("rnic.ack.sack_base", f.sack_base as u64),
            ("rnic.ack.ooo", f.ooo as u64),
            ("rnic.ack.sack_bitmap", f.sack_bitmap),
            ("rnic.ack.bytes_rx", f.bytes_rx as u64),
        ]
    } else {
        vec![
            ("rnic.va", f.va),
            ("rnic.rkey", f.rkey as u64),
            ("rnic.msg_len", f.msg_len as u64),
            ("rnic.ssn", f.ssn as u64),
            ("rnic.psn_offset", f.psn_offset as u64),
            ("rnic.ts", f.ts),
            ("rnic.rsn", f.rsn as u64),
            ("rnic.imm", f.imm as u64),
            ("rnic.laddr", f.laddr),
            ("rnic.lkey", f.lkey as u64),
        ]
    }
}

/// Runs tshark with rnic's dissector over the capture: every frame's
/// extension fields must be the ones `rnic_spec` decodes.
fn check_with_tshark(pcap: &Path, frames: &[Vec<u8>]) {
    let dissector = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools/wireshark/rnic.lua");
    let names: Vec<&str> = {
        let mut v: Vec<&str> = spec_fields(&Frame { opcode: opcode::ACK, ..Default::default() })
            .into_iter()
            .chain(spec_fields(&Frame::default()))
            .map(|(n, _)| n)
            .collect();
        v.insert(0, "rnic.kind");
        v
    };
    let mut cmd = Command::new("tshark");
    cmd.arg("-X").arg(format!("lua_script:{}", dissector.display())).arg("-r").arg(pcap);
    cmd.args(["-T", "fields", "-E", "separator=;", "-E", "occurrence=f"]);
    for n in &names {
        cmd.args(["-e", n]);
    }
    let out = cmd.output().unwrap_or_else(|e| {
        panic!(
            "cannot run tshark ({e}): install it (Debian: apt-get install -y tshark; `bash scripts/test.sh` does as root)"
        )
    });
    assert!(out.status.success(), "tshark failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), frames.len(), "tshark printed {} lines for {} frames", lines.len(), frames.len());
    let num = |v: &str| match v.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => v.parse(),
    };
    let (mut reqs, mut acks) = (0, 0);
    for (i, (line, bytes)) in lines.iter().zip(frames).enumerate() {
        let got: Vec<&str> = line.split(';').collect();
        let f = Frame::decode(bytes).unwrap_or_else(|e| panic!("frame {}: {e}", i + 1));
        let kind = if f.opcode == opcode::ACK { "ack" } else { "request" };
        assert_eq!(got[0], kind, "frame {}: the dissector's kind", i + 1);
        reqs += (kind == "request") as u32;
        acks += (kind == "ack") as u32;
        for (name, want) in spec_fields(&f) {
            let at = names.iter().position(|n| *n == name).expect("listed");
            let v = got.get(at).copied().unwrap_or("");
            assert_eq!(num(v).ok(), Some(want), "frame {}: {name} shows {v:?}, the contract decodes {want:#x}", i + 1);
        }
    }
    assert!(reqs > 0 && acks > 0, "{reqs} requests and {acks} ACKs decoded");
    println!("tshark with tools/wireshark/rnic.lua: {reqs} requests and {acks} ACKs agree with rnic_spec");
}

#[test]
fn capture_decodes_with_spec_and_scapy() {
    let pcap: PathBuf =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("rnic-capture-{}.pcap", std::process::id()));
    let flows = run_workload(&pcap);
    let frames = read_pcap(&pcap);
    assert!(!frames.is_empty(), "the capture is empty");
    check_with_spec(&frames, &flows);
    check_with_scapy(&pcap, &flows);
    check_with_tshark(&pcap, &frames);
    let _ = std::fs::remove_file(&pcap);
}
