//! Unit tests of the RTL blocks, run on their emitted Verilog in Verilator.
//! The oracle is `rnic-spec` (frame encoder/decoder, ICRC), never the RTL's
//! own Rust model.

use rnic_hw::desc::{RxDescPack, TxDescPack};
use rnic_hw::pack::{pack_words, unpack_field};
use rnic_sim::model::{Model, PortId};
use rnic_spec::wire::{icrc, off, opcode, Frame, HDR_LEN};

fn p(m: &Model, n: &str) -> PortId {
    m.port(n).unwrap_or_else(|e| panic!("{e}"))
}

fn bytes_of(m: &Model, port: PortId, n: usize) -> Vec<u8> {
    let mut b = vec![0u8; n];
    m.get_bytes(port, &mut b);
    b
}

fn words_to_bytes(w: &[u32]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn sample_frame(op: u8, len: usize, seed: u8) -> Frame {
    Frame {
        dst_mac: [2, 0, 0, 0, 0, 2],
        src_mac: [2, 0, 0, 0, 0, 1],
        ecn: 0,
        src_ip: 0x0a00_0001,
        dst_ip: 0x0a00_0002,
        sport: 0xC001,
        opcode: op,
        dqpn: 3,
        ack_req: true,
        psn: 0x12_3456,
        va: if op == opcode::ACK { 0 } else { 0x7f00_1000_0040 },
        rkey: if op == opcode::ACK { 0 } else { 0x0105 },
        msg_len: if op == opcode::ACK { 0 } else { len as u32 },
        ssn: 9,
        psn_offset: 2,
        ts: 0x1122_3344_5566,
        syndrome: if op == opcode::ACK { 0x1F } else { 0 },
        msn: if op == opcode::ACK { 10 } else { 0 },
        epsn: if op == opcode::ACK { 0x12_3457 } else { 0 },
        echo_entropy: if op == opcode::ACK { 0xC001 } else { 0 },
        echo_ecn: 0,
        payload: (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect(),
    }
}

#[test]
fn icrc_block_matches_spec_icrc() {
    let mut m = Model::new("icrc").unwrap();
    let (state, data, first, nbytes, out) =
        (p(&m, "state"), p(&m, "data"), p(&m, "first"), p(&m, "nbytes"), p(&m, "state_out"));
    for len in [0usize, 1, 3, 4, 56, 57, 60, 61, 64, 100, 1000, 4096] {
        let f = sample_frame(opcode::WRITE_ONLY, len, len as u8).encode();
        let covered = f.len() - 4;
        let mut s = 0u64;
        for (i, chunk) in f[..covered].chunks(64).enumerate() {
            let mut beat = [0u8; 64];
            beat[..chunk.len()].copy_from_slice(chunk);
            m.set(state, s);
            m.set_bytes(data, &beat);
            m.set(first, (i == 0) as u64);
            m.set(nbytes, chunk.len() as u64);
            m.eval();
            s = m.get(out);
        }
        assert_eq!(!(s as u32), icrc(&f), "payload length {len}");
    }
}

/// The header/descriptor fields of `f`, by the port and field names the TX
/// header block and the TX descriptor share.
fn tx_fields(f: &Frame) -> Vec<(&'static str, u64)> {
    let ack = f.opcode == opcode::ACK;
    let mac = |a: [u8; 6]| a.iter().fold(0u64, |x, &b| x << 8 | b as u64);
    vec![
        ("is_ack", ack as u64),
        ("dst_mac", mac(f.dst_mac)),
        ("dst_ip", f.dst_ip as u64),
        ("sport", f.sport as u64),
        ("opcode", f.opcode as u64),
        ("dqpn", f.dqpn as u64),
        ("ack_req", f.ack_req as u64),
        ("psn", f.psn as u64),
        ("plen", f.payload.len() as u64),
        ("va", f.va),
        ("rkey", f.rkey as u64),
        ("msg_len", f.msg_len as u64),
        ("ssn", f.ssn as u64),
        ("psn_offset", f.psn_offset as u64),
        ("ts", f.ts),
        ("syndrome", f.syndrome as u64),
        ("msn", f.msn as u64),
        ("epsn", f.epsn as u64),
        ("ecn_echo", f.echo_ecn as u64),
    ]
}

fn set_tx_header(m: &mut Model, f: &Frame) {
    let mac = |a: [u8; 6]| a.iter().fold(0u64, |x, &b| x << 8 | b as u64);
    let mut fields = tx_fields(f);
    fields.push(("src_mac", mac(f.src_mac)));
    fields.push(("src_ip", f.src_ip as u64));
    for (name, v) in fields {
        let port = p(m, name);
        m.set(port, v);
    }
}

#[test]
fn tx_header_matches_spec_encoder() {
    let mut m = Model::new("tx_header").unwrap();
    for (op, len) in
        [(opcode::WRITE_FIRST, 4096usize), (opcode::SEND_ONLY, 1), (opcode::WRITE_LAST, 63), (opcode::ACK, 0)]
    {
        let f = sample_frame(op, len, 7);
        set_tx_header(&mut m, &f);
        m.eval();
        let mut hdr = bytes_of(&m, p(&m, "beat0"), 64);
        hdr.extend(bytes_of(&m, p(&m, "beat1"), 64));
        let want = f.encode();
        for (i, (g, w)) in hdr.iter().zip(&want[..HDR_LEN]).enumerate() {
            assert_eq!(g, w, "opcode {op:#x} len {len}: header byte {i}");
        }
    }
}

#[test]
fn rx_header_extracts_spec_fields() {
    let mut m = Model::new("rx_header").unwrap();
    for op in [opcode::WRITE_MIDDLE, opcode::ACK] {
        let f = sample_frame(op, 100, 1);
        let b = f.encode();
        let (b0, b1) = (p(&m, "beat0"), p(&m, "beat1"));
        m.set_bytes(b0, &b[..64]);
        m.set_bytes(b1, &b[64..128]);
        m.eval();
        assert_eq!(m.get(p(&m, "is_roce")), 1);
        assert_eq!(m.get(p(&m, "ip_len")) as usize, b.len() - 14);
        assert_eq!(m.get(p(&m, "opcode")), op as u64);
        assert_eq!(m.get(p(&m, "dqpn")), f.dqpn as u64);
        assert_eq!(m.get(p(&m, "psn")), f.psn as u64);
        assert_eq!(m.get(p(&m, "sport")), f.sport as u64);
        assert_eq!(m.get(p(&m, "src_ip")), f.src_ip as u64);
        if op == opcode::ACK {
            assert_eq!(m.get(p(&m, "syndrome")), 0x1F);
            assert_eq!(m.get(p(&m, "msn")), f.msn as u64);
        } else {
            assert_eq!(m.get(p(&m, "va")), f.va);
            assert_eq!(m.get(p(&m, "rkey")), f.rkey as u64);
            assert_eq!(m.get(p(&m, "ssn")), f.ssn as u64);
            assert_eq!(m.get(p(&m, "psn_offset")), f.psn_offset as u64);
            assert_eq!(m.get(p(&m, "pad")), 0);
        }
        // A non-RoCE frame (UDP port changed) is recognised as such.
        let mut bad = b.clone();
        bad[37] ^= 1;
        m.set_bytes(b0, &bad[..64]);
        m.eval();
        assert_eq!(m.get(p(&m, "is_roce")), 0);
    }
}

fn tx_desc(f: &Frame) -> Vec<u8> {
    words_to_bytes(&pack_words(TxDescPack::FIELDS, TxDescPack::WIDTH, &tx_fields(f)))
}

/// Drives the TX builder with one descriptor (and its payload beats), with
/// `stall` inserting back-pressure, and returns the frame it sends.
fn build_frame(m: &mut Model, f: &Frame, stall: bool) -> Vec<u8> {
    let is_ack = f.opcode == opcode::ACK;
    let (src_mac, src_ip) = (p(m, "src_mac"), p(m, "src_ip"));
    m.set(src_mac, 0x0200_0000_0001);
    m.set(src_ip, f.src_ip as u64);
    let q = if is_ack { "ack" } else { "req" };
    let (empty, data, pop) = (p(m, &format!("{q}_empty")), p(m, &format!("{q}_data")), p(m, &format!("{q}_pop")));
    let (other_empty, pl_valid, pl_data, pl_ready) =
        (p(m, if is_ack { "req_empty" } else { "ack_empty" }), p(m, "pl_valid"), p(m, "pl_data"), p(m, "pl_ready"));
    let (tx_valid, tx_ready, tx_data, tx_keep, tx_last) =
        (p(m, "tx_valid"), p(m, "tx_ready"), p(m, "tx_data"), p(m, "tx_keep"), p(m, "tx_last"));
    m.set(other_empty, 1);
    m.set(empty, 0);
    m.set_bytes(data, &tx_desc(f));
    let beats: Vec<[u8; 64]> = f
        .payload
        .chunks(64)
        .map(|c| {
            let mut b = [0u8; 64];
            b[..c.len()].copy_from_slice(c);
            b
        })
        .collect();
    let mut next_beat = 0;
    let mut out = Vec::new();
    for cycle in 0..10_000u32 {
        m.set(pl_valid, (next_beat < beats.len()) as u64);
        if next_beat < beats.len() {
            m.set_bytes(pl_data, &beats[next_beat]);
        }
        m.set(tx_ready, (!stall || cycle % 3 != 1) as u64);
        m.eval();
        let popped = m.get(pop) == 1;
        if m.get(pl_valid) == 1 && m.get(pl_ready) == 1 {
            next_beat += 1;
        }
        let mut done = false;
        if m.get(tx_valid) == 1 && m.get(tx_ready) == 1 {
            let keep = m.get(tx_keep);
            let d = bytes_of(m, tx_data, 64);
            let n = keep.trailing_ones() as usize;
            assert_eq!(keep, if n == 64 { u64::MAX } else { (1u64 << n) - 1 }, "keep must be contiguous from lane 0");
            out.extend_from_slice(&d[..n]);
            done = m.get(tx_last) == 1;
        }
        m.tick();
        // Inputs change after the clock edge, as a registered FIFO's would.
        if popped {
            m.set(empty, 1);
        }
        if done {
            assert_eq!(next_beat, beats.len(), "builder must take every payload beat");
            return out;
        }
    }
    panic!("no complete frame within 10000 cycles");
}

#[test]
fn tx_builder_frames_decode_with_valid_icrc() {
    let mut m = Model::new("tx_builder").unwrap();
    for (i, len) in [0usize, 1, 4, 59, 60, 61, 63, 64, 65, 127, 128, 1000, 4096].into_iter().enumerate() {
        for stall in [false, true] {
            let op = if len == 0 {
                opcode::SEND_ONLY
            } else {
                [opcode::WRITE_FIRST, opcode::SEND_MIDDLE, opcode::WRITE_ONLY][i % 3]
            };
            let f = sample_frame(op, len, i as u8);
            let got = build_frame(&mut m, &f, stall);
            let d = Frame::decode(&got).unwrap_or_else(|e| panic!("len {len} stall {stall}: {e}"));
            assert_eq!(d, f, "len {len} stall {stall}");
        }
    }
    let ack = sample_frame(opcode::ACK, 0, 0);
    let got = build_frame(&mut m, &ack, true);
    assert_eq!(Frame::decode(&got).expect("ACK decodes"), ack);
}

struct RxOut {
    descs: Vec<Vec<u32>>,
    ring: Vec<(u64, Vec<u8>)>,
    icrc_err: u32,
    hdr_err: u32,
    frames: u32,
}

fn feed_rx(m: &mut Model, frames: &[Vec<u8>], rptr: u64) -> RxOut {
    let (valid, data, last) = (p(m, "rx_valid"), p(m, "rx_data"), p(m, "rx_last"));
    let (we, waddr, wdata, dw, dd) =
        (p(m, "ring_we"), p(m, "ring_waddr"), p(m, "ring_wdata"), p(m, "desc_write"), p(m, "desc_data"));
    let (c_icrc, c_hdr, c_frame, afull, rp) =
        (p(m, "cnt_icrc"), p(m, "cnt_hdr"), p(m, "cnt_frame"), p(m, "desc_afull"), p(m, "rptr"));
    let mut o = RxOut { descs: vec![], ring: vec![], icrc_err: 0, hdr_err: 0, frames: 0 };
    m.set(afull, 0);
    m.set(rp, rptr);
    m.set(p(m, "my_mac"), 0x02_00_00_00_00_02);
    m.set(p(m, "my_ip"), 0x0a00_0002);
    for f in frames {
        let n = f.len().div_ceil(64);
        for (i, c) in f.chunks(64).enumerate() {
            let mut b = [0u8; 64];
            b[..c.len()].copy_from_slice(c);
            m.set(valid, 1);
            m.set_bytes(data, &b);
            m.set(last, (i + 1 == n) as u64);
            m.set(p(m, "rx_keep"), if c.len() == 64 { u64::MAX } else { (1u64 << c.len()) - 1 });
            m.eval();
            assert_eq!(m.get(p(m, "rx_ready")), 1, "ring has room: the front end must take every beat");
            if m.get(we) == 1 {
                o.ring.push((m.get(waddr), bytes_of(m, wdata, 64)));
            }
            if m.get(dw) == 1 {
                let mut w = vec![0u32; 16];
                m.get_wide(dd, &mut w);
                o.descs.push(w);
            }
            o.icrc_err += m.get(c_icrc) as u32;
            o.hdr_err += m.get(c_hdr) as u32;
            o.frames += m.get(c_frame) as u32;
            m.tick();
        }
        m.set(valid, 0);
        m.eval();
        m.tick();
    }
    o
}

#[test]
fn rx_in_passes_good_frames_and_drops_bad_ones() {
    let mut m = Model::new("rx_in").unwrap();
    let good = sample_frame(opcode::WRITE_ONLY, 130, 5);
    let bytes = good.encode();
    let o = feed_rx(&mut m, std::slice::from_ref(&bytes), 0);
    assert_eq!((o.frames, o.icrc_err, o.hdr_err, o.descs.len()), (1, 0, 0, 1));
    let d = &o.descs[0];
    let f = |n| unpack_field(RxDescPack::FIELDS, d, n);
    assert_eq!(f("opcode"), opcode::WRITE_ONLY as u64);
    assert_eq!(f("psn"), good.psn as u64);
    assert_eq!(f("va"), good.va);
    assert_eq!(f("rkey"), good.rkey as u64);
    assert_eq!(f("plen"), 130);
    assert_eq!(f("rptr"), 0);
    // Payload beats (and the ICRC beat) were stored in order from ring slot 0.
    let stored: Vec<u8> = o.ring.iter().flat_map(|(_, b)| b.clone()).collect();
    assert_eq!(o.ring.iter().map(|(a, _)| *a).collect::<Vec<_>>(), vec![0, 1, 2]);
    assert_eq!(&stored[..130], &good.payload[..]);

    // Corrupt payload: ICRC error, no descriptor; the next good frame reuses the ring space.
    let mut bad = bytes.clone();
    bad[HDR_LEN + 7] ^= 0x40;
    let o = feed_rx(&mut m, &[bad, bytes.clone()], 3);
    assert_eq!((o.frames, o.icrc_err, o.hdr_err, o.descs.len()), (2, 1, 0, 1));
    assert_eq!(unpack_field(RxDescPack::FIELDS, &o.descs[0], "rptr"), 3);

    // Truncated frame (IP length disagrees): header error.
    let short = bytes[..bytes.len() - 64].to_vec();
    let o = feed_rx(&mut m, &[short], 6);
    assert_eq!((o.frames, o.icrc_err, o.hdr_err, o.descs.len()), (1, 0, 1, 0));

    // Frames that must never reach the responder, each a header error: for
    // another MAC or IP, a wrong IPv4 checksum, a fragment, a UDP length that
    // disagrees, a pad larger than the payload, a payload past the largest
    // PMTU (the ICRC is recomputed so only the checked field is wrong).
    let fix_icrc = |f: &mut Vec<u8>| {
        let n = f.len();
        let c = rnic_spec::wire::icrc(f);
        f[n - 4..].copy_from_slice(&c.to_le_bytes());
    };
    let fix_ipcs = |f: &mut Vec<u8>| {
        f[off::IP_CSUM..off::IP_CSUM + 2].copy_from_slice(&[0, 0]);
        let cs = rnic_spec::wire::ipv4_checksum(&f[off::IP..off::IP + 20]);
        f[off::IP_CSUM..off::IP_CSUM + 2].copy_from_slice(&cs.to_be_bytes());
    };
    let mut cases: Vec<(&str, Vec<u8>)> = Vec::new();
    let mut f = bytes.clone();
    f[off::ETH_DST + 5] ^= 1;
    cases.push(("dst MAC", f));
    let mut f = bytes.clone();
    f[off::IP_DST + 3] ^= 1;
    fix_ipcs(&mut f);
    fix_icrc(&mut f);
    cases.push(("dst IP", f));
    let mut f = bytes.clone();
    f[off::IP_CSUM] ^= 0x10;
    cases.push(("IPv4 checksum", f));
    let mut f = bytes.clone();
    f[off::IP_FLAGS] |= 0x20;
    fix_ipcs(&mut f);
    cases.push(("fragment", f));
    let mut f = bytes.clone();
    f[off::UDP_LEN + 1] ^= 4;
    cases.push(("UDP length", f));
    let mut f = sample_frame(opcode::SEND_ONLY, 0, 0).encode();
    f[off::BTH_FLAGS] |= 0x30;
    fix_icrc(&mut f);
    cases.push(("pad > payload", f));
    let mut big = sample_frame(opcode::WRITE_ONLY, 4096, 1);
    big.payload.push(0xAB);
    cases.push(("payload > 4096", big.encode()));
    for (what, f) in &cases {
        let o = feed_rx(&mut m, std::slice::from_ref(f), 6);
        assert_eq!((o.frames, o.icrc_err, o.hdr_err, o.descs.len()), (1, 0, 1, 0), "{what}");
    }
    // A frame one byte shorter than its IPv4 length in the same number of
    // beats, whose missing last ICRC byte equals the zero the lanes past the
    // end hold: the byte enables show it is short.
    let mut short1 = sample_frame(opcode::WRITE_ONLY, 132, 3).encode();
    let n = short1.len();
    short1[n - 1] = 0;
    let ip_len = u16::from_be_bytes([short1[off::IP_LEN], short1[off::IP_LEN + 1]]);
    let payload_end = n - 4;
    // Choose the last payload byte so the ICRC's last byte is 0.
    for x in 0..=255u8 {
        short1[payload_end - 1] = x;
        fix_icrc(&mut short1);
        if short1[n - 1] == 0 {
            break;
        }
    }
    assert_eq!(short1[n - 1], 0, "no payload byte gives an ICRC ending in 0");
    assert_eq!(ip_len as usize + 14, n);
    short1.truncate(n - 1);
    assert_eq!(short1.len().div_ceil(64), n.div_ceil(64), "same beat count");
    let o = feed_rx(&mut m, &[short1], 6);
    assert_eq!((o.frames, o.icrc_err, o.hdr_err, o.descs.len()), (1, 0, 1, 0), "frame one byte short");

    // A frame far longer than any legal one stores no more beats than a
    // maximum frame may use, so it cannot overrun the ring.
    let mut huge = sample_frame(opcode::WRITE_ONLY, 4096, 1);
    huge.payload = vec![0x5A; 8192 + 64];
    let o = feed_rx(&mut m, &[huge.encode()], 6);
    assert_eq!((o.frames, o.hdr_err, o.descs.len()), (1, 1, 0));
    assert!(o.ring.len() <= 65, "{} ring writes", o.ring.len());

    // Zero-length request and an ACK: descriptors with plen 0.
    let z = sample_frame(opcode::SEND_ONLY, 0, 0).encode();
    let a = sample_frame(opcode::ACK, 0, 0).encode();
    let o = feed_rx(&mut m, &[z, a], 6);
    assert_eq!(o.descs.len(), 2);
    assert_eq!(unpack_field(RxDescPack::FIELDS, &o.descs[1], "msn"), 10);
    assert_eq!(unpack_field(RxDescPack::FIELDS, &o.descs[1], "plen"), 0);

    // Ring nearly full (1000 of 1024 beats in use): no room for a maximum
    // frame, so the front end holds the next frame back instead of dropping it.
    let wptr = (o.ring.last().expect("ring writes").0 + 1) % 1024;
    let (rp, valid, ready) = (p(&m, "rptr"), p(&m, "rx_valid"), p(&m, "rx_ready"));
    m.set(rp, (wptr + 1024 - 1000) % 1024);
    m.set(valid, 1);
    m.eval();
    assert_eq!(m.get(ready), 0);
    m.set(rp, wptr);
    m.eval();
    assert_eq!(m.get(ready), 1);
}

#[test]
fn regs_decode_commits_doorbells_and_counters() {
    use rnic_spec::regs as r;
    let mut m = Model::new("regs").unwrap();
    let (wv, wa, wd, rv, ra, rrv, rrd) = (
        p(&m, "wr_valid"),
        p(&m, "wr_addr"),
        p(&m, "wr_data"),
        p(&m, "rd_valid"),
        p(&m, "rd_addr"),
        p(&m, "rd_resp_valid"),
        p(&m, "rd_resp_data"),
    );
    let (inc, qpc, sqdb, rqdb, dbq, dbv, stage) = (
        p(&m, "cnt_inc"),
        p(&m, "qp_commit"),
        p(&m, "sq_db"),
        p(&m, "rq_db"),
        p(&m, "db_qpn"),
        p(&m, "db_val"),
        p(&m, "stage"),
    );
    let write = |m: &mut Model, a: u32, d: u64| -> (u64, u64, u64, u64, u64) {
        m.set(wv, 1);
        m.set(wa, a as u64);
        m.set(wd, d);
        m.eval();
        let o = (m.get(qpc), m.get(sqdb), m.get(rqdb), m.get(dbq), m.get(dbv));
        m.tick();
        m.set(wv, 0);
        o
    };
    let read = |m: &mut Model, a: u32| -> u64 {
        m.set(rv, 1);
        m.set(ra, a as u64);
        m.eval();
        m.tick();
        m.set(rv, 0);
        for _ in 0..4 {
            m.eval();
            if m.get(rrv) == 1 {
                let v = m.get(rrd);
                m.tick();
                return v;
            }
            m.tick();
        }
        panic!("no read response for {a:#x}");
    };
    assert_eq!(read(&mut m, r::REG_ID) >> 32, r::ID_MAGIC);
    write(&mut m, r::REG_SRC_IP, 0x0a00_0002);
    assert_eq!(read(&mut m, r::REG_SRC_IP), 0x0a00_0002);
    write(&mut m, r::stage(2), 0xdead_beef_0000_1234);
    m.eval();
    let mut st = vec![0u32; 16];
    m.get_wide(stage, &mut st);
    assert_eq!((st[4], st[5]), (0x0000_1234, 0xdead_beef));
    assert_eq!(write(&mut m, r::REG_QP_COMMIT, 5).0, 1);
    assert_eq!(write(&mut m, r::db_sq(7), 42), (0, 1, 0, 7, 42));
    assert_eq!(write(&mut m, r::db_rq(255), 3), (0, 0, 1, 255, 3));
    // A doorbell or commit for an index the RTL does not hold is ignored and counted.
    let e0 = read(&mut m, r::counters::REG_ERR);
    assert_eq!(write(&mut m, r::db_sq(rnic_spec::params::NUM_QPS as u32), 1).1, 0);
    assert_eq!(write(&mut m, r::REG_QP_COMMIT, rnic_spec::params::NUM_QPS as u64 + 5).0, 0);
    assert_eq!(write(&mut m, r::REG_QP_COMMIT, (rnic_spec::params::NUM_QPS as u64 + 5) | r::QP_COMMIT_RESET_REQ).0, 0);
    assert_eq!(read(&mut m, r::counters::REG_ERR) - e0, 3);
    let c0 = read(&mut m, r::counters::RX_FRAMES);
    for _ in 0..3 {
        m.set(inc, 1 << 2);
        m.eval();
        m.tick();
    }
    m.set(inc, 0);
    assert_eq!(read(&mut m, r::counters::RX_FRAMES) - c0, 3);
    assert!(read(&mut m, r::REG_CYCLES) > 0);
}
