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
    /// For each descriptor, how many ring writes had been seen when it came out.
    ring_at_desc: Vec<usize>,
    /// The read pointer follows the descriptors.
    follow: bool,
}

fn feed_rx(m: &mut Model, frames: &[Vec<u8>], rptr: u64) -> RxOut {
    feed_rx_gaps(m, &frames.iter().map(|f| (f.clone(), 1)).collect::<Vec<_>>(), Some(rptr))
}

/// Feeds each frame followed by its number of idle cycles (0: the next frame's
/// beat 0 right after its last beat), reading the outputs every cycle, and
/// runs on until the last verdict is out. The ring's read pointer stays at
/// `rptr`, or with `None` follows each descriptor (a responder that frees a
/// frame's beats as soon as it is handed over).
fn feed_rx_gaps(m: &mut Model, frames: &[(Vec<u8>, usize)], rptr: Option<u64>) -> RxOut {
    let (valid, data, last) = (p(m, "rx_valid"), p(m, "rx_data"), p(m, "rx_last"));
    let mut o =
        RxOut { descs: vec![], ring: vec![], icrc_err: 0, hdr_err: 0, frames: 0, ring_at_desc: vec![], follow: false };
    m.set(p(m, "desc_afull"), 0);
    m.set(p(m, "rptr"), rptr.unwrap_or(0));
    o.follow = rptr.is_none();
    m.set(p(m, "my_mac"), 0x02_00_00_00_00_02);
    m.set(p(m, "my_ip"), 0x0a00_0002);
    for (f, gap) in frames {
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
            sample_rx(m, &mut o);
            m.tick();
        }
        for _ in 0..*gap {
            m.set(valid, 0);
            m.eval();
            sample_rx(m, &mut o);
            m.tick();
        }
    }
    m.set(valid, 0);
    for _ in 0..4 {
        m.eval();
        sample_rx(m, &mut o);
        m.tick();
    }
    o
}

/// One cycle's outputs: a ring write, a descriptor, counter pulses.
fn sample_rx(m: &mut Model, o: &mut RxOut) {
    if m.get(p(m, "ring_we")) == 1 {
        o.ring.push((m.get(p(m, "ring_waddr")), bytes_of(m, p(m, "ring_wdata"), 64)));
    }
    if m.get(p(m, "desc_write")) == 1 {
        let mut w = vec![0u32; 21];
        m.get_wide(p(m, "desc_data"), &mut w);
        if o.follow {
            let end = unpack_field(RxDescPack::FIELDS, &w, "rptr") + unpack_field(RxDescPack::FIELDS, &w, "nbeats");
            m.set(p(m, "rptr"), end % 1024);
        }
        o.descs.push(w);
        // Where the ring stood when the descriptor came out: the frame's payload is all there.
        o.ring_at_desc.push(o.ring.len());
    }
    o.icrc_err += m.get(p(m, "cnt_icrc")) as u32;
    o.hdr_err += m.get(p(m, "cnt_hdr")) as u32;
    o.frames += m.get(p(m, "cnt_frame")) as u32;
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

/// What the front end must do with one frame, by the spec's oracle.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Verdict {
    Pass,
    Icrc,
    Hdr,
}

/// Random frames back to back (no idle cycle, or one or two) against the
/// spec: every payload length 0..=300 at least once (every last-beat
/// residue, the ICRC alone in a beat, in every lane) plus random lengths up
/// to 4096, corrupted payload or ICRC bytes, frames cut to one or two beats.
/// Each good frame gives one descriptor with its place in the ring, and its
/// payload is in the ring when the descriptor comes out; each bad one is
/// counted and its ring space taken by the next frame.
/// `RNIC_RXIN_BLOCK_SEED=S` replays one seed.
#[test]
fn rx_in_random_frames_back_to_back_match_the_spec() {
    let seeds: Vec<u64> = match std::env::var("RNIC_RXIN_BLOCK_SEED") {
        Ok(s) => vec![u64::from_str_radix(s.trim_start_matches("0x"), 16).expect("hex seed")],
        Err(_) => vec![0x7810_0001, 0x7810_0002],
    };
    for seed in seeds {
        let mut r = rnic_sim::rng::SplitMix::new(seed);
        let mut m = Model::new("rx_in").unwrap();
        let mut lens: Vec<usize> = (0..=300).collect();
        lens.extend((0..60).map(|_| r.range(301, 4096) as usize));
        r.shuffle(&mut lens);
        let mut frames = Vec::new();
        let mut want = Vec::new();
        for (i, &len) in lens.iter().enumerate() {
            let op = r.pick(&[opcode::WRITE_ONLY, opcode::SEND_ONLY, opcode::WRITE_ONLY_IMM]);
            let mut fr = sample_frame(op, len, i as u8);
            fr.psn = i as u32;
            fr.payload.iter_mut().for_each(|b| *b = r.next() as u8);
            let mut bytes = fr.encode();
            let n = bytes.len();
            let verdict = match r.below(10) {
                0 | 1 => {
                    // A payload or ICRC byte flipped: only the ICRC can tell.
                    let at = r.range(HDR_LEN as u64, n as u64 - 1) as usize;
                    bytes[at] ^= 1 << r.below(8);
                    Verdict::Icrc
                }
                2 => {
                    bytes.truncate(if r.pct(50) { 64 } else { 128.min(n - 1) });
                    Verdict::Hdr
                }
                _ => Verdict::Pass,
            };
            frames.push((bytes, r.pick(&[0usize, 0, 0, 1, 2])));
            want.push((verdict, fr));
        }
        let o = feed_rx_gaps(&mut m, &frames, None);
        let ctx = format!("seed {seed:#x}");
        let count = |v: Verdict| want.iter().filter(|(w, _)| *w == v).count() as u32;
        assert_eq!(o.frames as usize, frames.len(), "{ctx}: frames counted");
        assert_eq!(o.icrc_err, count(Verdict::Icrc), "{ctx}: ICRC errors");
        assert_eq!(o.hdr_err, count(Verdict::Hdr), "{ctx}: header errors");
        let good: Vec<&rnic_spec::wire::Frame> =
            want.iter().filter(|(w, _)| *w == Verdict::Pass).map(|(_, f)| f).collect();
        assert_eq!(o.descs.len(), good.len(), "{ctx}: descriptors");
        // The ring as the writes left it up to each descriptor.
        let mut ring = vec![vec![0u8; 64]; 1024];
        let mut applied = 0;
        let mut at = 0u64;
        for (k, (d, fr)) in o.descs.iter().zip(&good).enumerate() {
            for (addr, data) in &o.ring[applied..o.ring_at_desc[k]] {
                ring[*addr as usize] = data.clone();
            }
            applied = o.ring_at_desc[k];
            let f = |name: &str| unpack_field(RxDescPack::FIELDS, d, name);
            let c = format!("{ctx}: descriptor {k} (PSN {}, {} B)", fr.psn, fr.payload.len());
            assert_eq!(f("psn"), fr.psn as u64, "{c}: in order");
            assert_eq!(f("plen"), fr.payload.len() as u64, "{c}: plen");
            assert_eq!(f("rptr"), at, "{c}: ring place");
            let beats = (fr.payload.len() + rnic_spec::wire::pad_len(fr.payload.len()) + 4).div_ceil(64) as u64;
            assert_eq!(f("nbeats"), beats, "{c}: beats");
            let mut stored = Vec::new();
            for j in 0..beats {
                stored.extend_from_slice(&ring[((at + j) % 1024) as usize]);
            }
            assert_eq!(&stored[..fr.payload.len()], &fr.payload[..], "{c}: payload in the ring");
            at = (at + beats) % 1024;
        }
        println!(
            "rx_in random {ctx}: {} frames, {} passed, {} ICRC and {} header errors",
            frames.len(),
            good.len(),
            o.icrc_err,
            o.hdr_err
        );
    }
}
