//! Block-level Verilator test of the BAR0 adapter (`hw/src/usp_bar.rs`, top
//! "usp_bar") against models of the UltraScale+ PCIe block's completer
//! interfaces (512-bit `m_axis_cq` requests and `s_axis_cc` completions,
//! PG213's descriptors, Dword-aligned) and of the core's register file.
//!
//! Stimulus: 64-bit register writes and reads, 32-bit reads of either half,
//! at random offsets of a 4 MiB BAR mapped at a random bus address, with
//! random requester IDs, tags, functions, traffic classes and attributes;
//! and requests the adapter must refuse: 32-bit writes, multi-Dword writes
//! of 16 Dwords (two beats), reads of 3 Dwords, I/O reads, messages. Random
//! gaps in `cq_tvalid`, random `cc_tready`, a register file that answers
//! after 1 to 30 cycles. Checked: every register write and read reaches the
//! core with its offset and value, in order; every read gets one completion
//! whose every descriptor field and payload byte is right (Unsupported
//! Request for the refused reads); refused requests give one `bad_req`
//! pulse each and touch no register.

mod common;

use common::block_seeds;
use rnic_sim::model::Model;
use rnic_sim::rng::SplitMix as Rng;
use rnic_spec::usp::{self, set_field};
use std::collections::{HashMap, VecDeque};

const APERTURE: u32 = 22;

/// What the core or the host must see next.
#[derive(Debug, PartialEq)]
enum Event {
    Write { off: u32, data: u64 },
    Read { off: u32 },
    Cpl { desc: [u32; 3], payload: Vec<u32>, keep: u64 },
}

/// One request as the PCIe block delivers it: its beats (data, byte enables in tuser, last).
struct Req {
    beats: Vec<([u8; 64], u32, bool)>,
}

/// The fields a completion copies from its request.
struct Ids {
    req_id: u16,
    tag: u8,
    func: u8,
    tc: u32,
    attr: u32,
}

fn cq_desc(addr: u64, dwords: u32, ty: u32, i: &Ids) -> [u32; 4] {
    let mut b = [0u8; usp::RQ_DESC_BYTES];
    set_field(&mut b, usp::RQ_ADDR_LSB, 64, addr & !3);
    set_field(&mut b, usp::RQ_DWORDS_LSB, 11, dwords as u64);
    set_field(&mut b, usp::RQ_TYPE_LSB, 4, ty as u64);
    set_field(&mut b, usp::RQ_REQ_ID_LSB, 16, i.req_id as u64);
    set_field(&mut b, usp::RQ_TAG_LSB, 8, i.tag as u64);
    set_field(&mut b, usp::CQ_FUNC_LSB, 8, i.func as u64);
    set_field(&mut b, usp::CQ_BAR_APERTURE_LSB, 6, APERTURE as u64);
    set_field(&mut b, usp::RQ_TC_LSB, 3, i.tc as u64);
    set_field(&mut b, usp::RQ_ATTR_LSB, 3, i.attr as u64);
    std::array::from_fn(|k| u32::from_le_bytes(b[4 * k..4 * k + 4].try_into().expect("4 bytes")))
}

fn beat(words: &[u32]) -> [u8; 64] {
    let mut b = [0u8; 64];
    for (i, w) in words.iter().enumerate() {
        b[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
    b
}

/// A random request, the events it causes, and whether it is refused.
fn request(r: &mut Rng, regs: &mut HashMap<u32, u64>, bar: u64) -> (Req, Vec<Event>, bool) {
    let off = (r.below(1 << APERTURE) as u32) & !7;
    let ids = Ids {
        req_id: r.next() as u16,
        tag: r.next() as u8,
        func: r.below(4) as u8,
        tc: r.below(8) as u32,
        attr: r.below(8) as u32,
    };
    let (req_id, tag, func, tc, attr) = (ids.req_id, ids.tag, ids.func, ids.tc, ids.attr);
    let value =
        |regs: &HashMap<u32, u64>, off: u32| regs.get(&off).copied().unwrap_or(0x5eed_0000_0000_0000 | off as u64);
    let cpl = |lo: u32, dwords: u32, status: u32, payload: Vec<u32>| {
        let mut b = [0u8; usp::RC_DESC_BYTES];
        set_field(&mut b, usp::CC_LOWER_ADDR_LSB, 7, lo as u64);
        set_field(&mut b, usp::CC_BYTE_COUNT_LSB, 13, dwords as u64 * 4);
        set_field(&mut b, usp::CC_DWORDS_LSB, 11, dwords as u64);
        set_field(&mut b, usp::CC_STATUS_LSB, 3, status as u64);
        set_field(&mut b, usp::CC_REQ_ID_LSB, 16, req_id as u64);
        set_field(&mut b, usp::CC_TAG_LSB, 8, tag as u64);
        set_field(&mut b, usp::CC_FUNC_LSB, 8, func as u64);
        set_field(&mut b, usp::CC_TC_LSB, 3, tc as u64);
        set_field(&mut b, usp::CC_ATTR_LSB, 3, attr as u64);
        let desc = std::array::from_fn(|k| u32::from_le_bytes(b[4 * k..4 * k + 4].try_into().expect("4 bytes")));
        let keep = (1u64 << (3 + payload.len())) - 1;
        Event::Cpl { desc, payload, keep }
    };
    let kind = r.below(100);
    let addr = bar + off as u64;
    match kind {
        0..=39 => {
            let data = r.next();
            let d = cq_desc(addr, 2, 1, &ids);
            regs.insert(off, data);
            let b = beat(&[d[0], d[1], d[2], d[3], data as u32, (data >> 32) as u32]);
            (Req { beats: vec![(b, 0xF | 0xF << 8, true)] }, vec![Event::Write { off, data }], false)
        }
        40..=69 => {
            let d = cq_desc(addr, 2, 0, &ids);
            let v = value(regs, off);
            let b = beat(&d);
            (
                Req { beats: vec![(b, 0xF | 0xF << 8, true)] },
                vec![Event::Read { off }, cpl((addr & 0x7c) as u32, 2, 0, vec![v as u32, (v >> 32) as u32])],
                false,
            )
        }
        70..=84 => {
            let hi = r.below(2) as u32;
            let a = addr + 4 * hi as u64;
            let d = cq_desc(a, 1, 0, &ids);
            let v = value(regs, off);
            (
                Req { beats: vec![(beat(&d), 0xF, true)] },
                vec![Event::Read { off }, cpl((a & 0x7c) as u32, 1, 0, vec![(v >> (32 * hi)) as u32])],
                false,
            )
        }
        85..=88 => {
            // A 32-bit write: dropped.
            let d = cq_desc(addr, 1, 1, &ids);
            (Req { beats: vec![(beat(&[d[0], d[1], d[2], d[3], r.next() as u32]), 0xF, true)] }, vec![], true)
        }
        89..=91 => {
            // A 16-Dword write: two beats, dropped.
            let d = cq_desc(addr, 16, 1, &ids);
            let mut w: Vec<u32> = d.to_vec();
            w.extend((0..12).map(|_| r.next() as u32));
            let tail: Vec<u32> = (0..4).map(|_| r.next() as u32).collect();
            (Req { beats: vec![(beat(&w), 0xF | 0xF << 8, false), (beat(&tail), 0, true)] }, vec![], true)
        }
        92..=95 => {
            // A read of 3 Dwords, or an I/O read: Unsupported Request.
            let (dw, ty) = if r.below(2) == 0 { (3, 0) } else { (1, 2) };
            let d = cq_desc(addr, dw, ty, &ids);
            (Req { beats: vec![(beat(&d), 0xF | 0xF << 8, true)] }, vec![cpl((addr & 0x7c) as u32, 0, 1, vec![])], true)
        }
        _ => {
            // A message: dropped.
            let d = cq_desc(0, 0, 12, &ids);
            (Req { beats: vec![(beat(&d), 0, true)] }, vec![], true)
        }
    }
}

fn run(seed: u64) -> Result<(u64, u64), String> {
    let mut m = Model::new("usp_bar").map_err(|e| e.to_string())?;
    let p = |n: &str| m.port(n).unwrap_or_else(|e| panic!("{e}"));
    let (cq_data, cq_user, cq_last, cq_valid, cq_ready) =
        (p("cq_tdata"), p("cq_tuser"), p("cq_tlast"), p("cq_tvalid"), p("cq_tready"));
    let (cc_data, cc_keep, cc_last, cc_valid, cc_ready, np) =
        (p("cc_tdata"), p("cc_tkeep"), p("cc_tlast"), p("cc_tvalid"), p("cc_tready"), p("cq_np_req"));
    let (wr_v, wr_a, wr_d, rd_v, rd_a) =
        (p("reg_wr_valid"), p("reg_wr_addr"), p("reg_wr_data"), p("reg_rd_valid"), p("reg_rd_addr"));
    let (resp_v, resp_d, bad) = (p("reg_rd_resp_valid"), p("reg_rd_resp_data"), p("bad_req"));
    let mut r = Rng::new(seed);
    let bar = (r.below(1 << 20) << APERTURE) | 0x80_0000_0000;
    let mut model_regs: HashMap<u32, u64> = HashMap::new();
    let mut core_regs: HashMap<u32, u64> = HashMap::new();
    let mut beats: VecDeque<([u8; 64], u32, bool)> = VecDeque::new();
    let mut want: VecDeque<Event> = VecDeque::new();
    let (mut reqs, mut bad_owed, mut bad_seen, mut cpls) = (0u64, 0u64, 0u64, 0u64);
    let mut pending_read: Option<(u64, u64)> = None;
    let gap = r.below(50);
    let mut idle = 0;
    for t in 0..400_000u64 {
        let ctx = |w: String| format!("usp_bar seed {seed:#x} cycle {t}: {w}");
        if beats.is_empty() && reqs < 3_000 {
            let (q, ev, refused) = request(&mut r, &mut model_regs, bar);
            beats.extend(q.beats);
            want.extend(ev);
            bad_owed += refused as u64;
            reqs += 1;
        }
        idle = if beats.is_empty() && want.is_empty() { idle + 1 } else { 0 };
        if idle > 3 {
            if bad_seen != bad_owed {
                return Err(ctx(format!("{bad_seen} bad_req pulses for {bad_owed} refused requests")));
            }
            return Ok((reqs, cpls));
        }
        let show = !beats.is_empty() && r.below(100) >= gap;
        if let Some((b, be, last)) = beats.front() {
            m.set_bytes(cq_data, b);
            m.set_wide(cq_user, &[*be, 0, 0, 0, 0, 0]);
            m.set(cq_last, *last as u64);
        }
        m.set(cq_valid, show as u64);
        let ready = r.below(100) < 70;
        m.set(cc_ready, if ready { 0xF } else { 0 });
        let answer = pending_read.is_some_and(|(due, _)| due <= t);
        m.set(resp_v, answer as u64);
        if let Some((_, v)) = pending_read {
            m.set(resp_d, v);
        }
        m.clock_low();
        if m.get(np) != 1 {
            return Err(ctx(format!("pcie_cq_np_req = {}", m.get(np))));
        }
        if answer {
            pending_read = None;
        }
        if m.get(wr_v) != 0 {
            let got = Event::Write { off: m.get(wr_a) as u32, data: m.get(wr_d) };
            let w = want.pop_front();
            if w.as_ref() != Some(&got) {
                return Err(ctx(format!("core got {got:?}, want {w:?}")));
            }
            if let Event::Write { off, data } = got {
                core_regs.insert(off, data);
            }
        }
        if m.get(rd_v) != 0 {
            let got = Event::Read { off: m.get(rd_a) as u32 };
            let w = want.pop_front();
            if w.as_ref() != Some(&got) {
                return Err(ctx(format!("core got {got:?}, want {w:?}")));
            }
            if pending_read.is_some() {
                return Err(ctx("a second read while one is with the core".into()));
            }
            let off = m.get(rd_a) as u32;
            let v = core_regs.get(&off).copied().unwrap_or(0x5eed_0000_0000_0000 | off as u64);
            pending_read = Some((t + 1 + r.below(30), v));
        }
        if m.get(cc_valid) != 0 && ready {
            let mut b = [0u8; 64];
            m.get_bytes(cc_data, &mut b);
            let w32 = |i: usize| u32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap());
            let keep = m.get(cc_keep);
            let n = keep.count_ones() as usize;
            let got = Event::Cpl { desc: [w32(0), w32(1), w32(2)], payload: (3..n).map(w32).collect(), keep };
            if m.get(cc_last) == 0 {
                return Err(ctx("a completion without tlast".into()));
            }
            let w = want.pop_front();
            if w.as_ref() != Some(&got) {
                return Err(ctx(format!("host got {got:x?}, want {w:x?}")));
            }
            cpls += 1;
        }
        bad_seen += m.get(bad);
        if show && m.get(cq_ready) != 0 {
            beats.pop_front();
        }
        m.clock_high();
    }
    Err(format!("usp_bar seed {seed:#x}: did not finish"))
}

#[test]
fn bar_adapter_serves_register_accesses_and_refuses_the_rest() {
    for seed in block_seeds("RNIC_USP_BAR_BLOCK", 0xBA50_0001) {
        match run(seed) {
            Ok((reqs, cpls)) => eprintln!("usp_bar seed {seed:#x}: {reqs} requests, {cpls} completions"),
            Err(e) => panic!("{e}"),
        }
    }
}
