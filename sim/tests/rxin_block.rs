//! The RX front end (`hw/src/rxin.rs`, top "rx_in") in Verilator: good
//! frames reach the ring with the right descriptor, every malformed one is
//! dropped and counted.
//! The oracle is `rnic-spec`, never the RTL's own Rust model.

mod common;

use common::*;
use rnic_hw::desc::RxDescPack;
use rnic_hw::pack::unpack_field;
use rnic_sim::model::Model;
use rnic_spec::wire::{off, opcode, HDR_LEN};

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
