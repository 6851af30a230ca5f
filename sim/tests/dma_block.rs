//! The DMA muxes (`rnic_hw::dma`) in Verilator, against reference models of
//! their contracts. Read mux: the responder's receive-WQE fetch wins the
//! request port, a request is taken only from the requester that won, and
//! every completion beat goes to exactly one consumer, chosen by the tag's
//! routing bits, with back-pressure from that consumer alone. Write mux: a
//! CQE beat wins over a placement beat, the port carries exactly the winner's
//! address, data and length, and a source sees ready only when its beat is
//! the one the port takes.
//!
//! Random stimulus (fixed seeds, printed on failure) over every tag value
//! and every combination of valid/ready, plus a table of the named tags.

use rnic_sim::model::{Model, PortId};
use rnic_sim::rng::SplitMix as Rng;
use rnic_spec::desc::RECV_WQE_BYTES;
use rnic_spec::params::dma_tag;

struct Ports {
    rq_valid: PortId,
    rq_ready: PortId,
    rq_addr: PortId,
    sq_valid: PortId,
    sq_ready: PortId,
    sq_addr: PortId,
    sq_len: PortId,
    sq_tag: PortId,
    req_valid: PortId,
    req_ready: PortId,
    req_addr: PortId,
    req_len: PortId,
    req_tag: PortId,
    cpl_valid: PortId,
    cpl_ready: PortId,
    cpl_data: PortId,
    cpl_tag: PortId,
    rwqe_valid: PortId,
    rwqe_ready: PortId,
    wqe_valid: PortId,
    wqe_ready: PortId,
    pl_valid: PortId,
    pl_ready: PortId,
    data: PortId,
}

impl Ports {
    fn new(m: &Model) -> Ports {
        let p = |n: &str| m.port(n).unwrap_or_else(|e| panic!("{e}"));
        Ports {
            rq_valid: p("rq_valid"),
            rq_ready: p("rq_ready"),
            rq_addr: p("rq_addr"),
            sq_valid: p("sq_valid"),
            sq_ready: p("sq_ready"),
            sq_addr: p("sq_addr"),
            sq_len: p("sq_len"),
            sq_tag: p("sq_tag"),
            req_valid: p("req_valid"),
            req_ready: p("req_ready"),
            req_addr: p("req_addr"),
            req_len: p("req_len"),
            req_tag: p("req_tag"),
            cpl_valid: p("cpl_valid"),
            cpl_ready: p("cpl_ready"),
            cpl_data: p("cpl_data"),
            cpl_tag: p("cpl_tag"),
            rwqe_valid: p("rwqe_valid"),
            rwqe_ready: p("rwqe_ready"),
            wqe_valid: p("wqe_valid"),
            wqe_ready: p("wqe_ready"),
            pl_valid: p("pl_valid"),
            pl_ready: p("pl_ready"),
            data: p("data"),
        }
    }
}

/// One cycle's inputs.
#[derive(Clone, Copy, Debug)]
struct In {
    rq_valid: bool,
    rq_addr: u64,
    sq_valid: bool,
    sq_addr: u64,
    sq_len: u16,
    sq_tag: u8,
    req_ready: bool,
    cpl_valid: bool,
    cpl_tag: u8,
    cpl_word: [u32; 16],
    rwqe_ready: bool,
    wqe_ready: bool,
    pl_ready: bool,
}

/// What the contract says the outputs are.
#[derive(Debug, PartialEq, Eq)]
struct Out {
    req: Option<(u64, u16, u8)>,
    rq_taken: bool,
    sq_taken: bool,
    /// (responder, send WQEs, payload) valid.
    route: (bool, bool, bool),
    cpl_taken: bool,
}

/// Which consumer a tag goes to: 0 responder, 1 send WQEs, 2 payload (neither routing bit, or both: a gathered piece).
fn consumer(tag: u8) -> usize {
    match (tag & dma_tag::RQ_WQE != 0, tag & dma_tag::SQ_WQE != 0) {
        (true, false) => 0,
        (false, true) => 1,
        _ => 2,
    }
}

fn reference(i: &In) -> Out {
    let req = if i.rq_valid {
        Some((i.rq_addr, RECV_WQE_BYTES as u16, dma_tag::RQ_WQE))
    } else if i.sq_valid {
        Some((i.sq_addr, i.sq_len, i.sq_tag))
    } else {
        None
    };
    let c = consumer(i.cpl_tag);
    let readies = [i.rwqe_ready, i.wqe_ready, i.pl_ready];
    let v = |k: usize| i.cpl_valid && c == k;
    Out {
        req,
        rq_taken: i.rq_valid && i.req_ready,
        sq_taken: i.sq_valid && i.req_ready && !i.rq_valid,
        route: (v(0), v(1), v(2)),
        cpl_taken: i.cpl_valid && readies[c],
    }
}

fn drive(m: &mut Model, p: &Ports, i: &In) -> Out {
    m.set(p.rq_valid, i.rq_valid as u64);
    m.set(p.rq_addr, i.rq_addr);
    m.set(p.sq_valid, i.sq_valid as u64);
    m.set(p.sq_addr, i.sq_addr);
    m.set(p.sq_len, i.sq_len as u64);
    m.set(p.sq_tag, i.sq_tag as u64);
    m.set(p.req_ready, i.req_ready as u64);
    m.set(p.cpl_valid, i.cpl_valid as u64);
    m.set(p.cpl_tag, i.cpl_tag as u64);
    m.set_wide(p.cpl_data, &i.cpl_word);
    m.set(p.rwqe_ready, i.rwqe_ready as u64);
    m.set(p.wqe_ready, i.wqe_ready as u64);
    m.set(p.pl_ready, i.pl_ready as u64);
    m.eval();
    let mut data = [0u32; 16];
    m.get_wide(p.data, &mut data);
    assert_eq!(data, i.cpl_word, "completion data not passed through");
    let req_valid = m.get(p.req_valid) != 0;
    let ready = m.get(p.cpl_ready) != 0;
    Out {
        req: req_valid.then(|| (m.get(p.req_addr), m.get(p.req_len) as u16, m.get(p.req_tag) as u8)),
        rq_taken: i.rq_valid && m.get(p.rq_ready) != 0,
        sq_taken: i.sq_valid && m.get(p.sq_ready) != 0,
        route: (m.get(p.rwqe_valid) != 0, m.get(p.wqe_valid) != 0, m.get(p.pl_valid) != 0),
        cpl_taken: i.cpl_valid && ready,
    }
}

fn random_in(r: &mut Rng) -> In {
    let mut w = [0u32; 16];
    for x in &mut w {
        *x = r.next() as u32;
    }
    In {
        rq_valid: r.below(2) == 1,
        rq_addr: r.next(),
        sq_valid: r.below(2) == 1,
        sq_addr: r.next(),
        sq_len: r.next() as u16,
        sq_tag: [dma_tag::SQ_WQE, dma_tag::SQ_PAYLOAD, r.next() as u8][r.below(3) as usize],
        req_ready: r.below(2) == 1,
        cpl_valid: r.below(4) != 0,
        cpl_tag: r.next() as u8,
        cpl_word: w,
        rwqe_ready: r.below(2) == 1,
        wqe_ready: r.below(2) == 1,
        pl_ready: r.below(2) == 1,
    }
}

#[test]
fn random_cycles_match_the_reference() {
    let mut m = Model::new("dma_read").unwrap();
    let p = Ports::new(&m);
    for seed in [0xD3A0_0001u64, 0xD3A0_0002] {
        let mut r = Rng::new(seed);
        let mut seen_tags = [false; 256];
        for cycle in 0..20_000 {
            let i = random_in(&mut r);
            seen_tags[i.cpl_tag as usize] = true;
            let got = drive(&mut m, &p, &i);
            let want = reference(&i);
            assert_eq!(got, want, "seed {seed:#x} cycle {cycle}: inputs {i:?}");
            // Exactly one consumer sees a valid completion beat.
            let n = got.route.0 as u8 + got.route.1 as u8 + got.route.2 as u8;
            assert_eq!(n, i.cpl_valid as u8, "seed {seed:#x} cycle {cycle}: {n} consumers for one beat");
        }
        assert!(seen_tags.iter().all(|&s| s), "seed {seed:#x}: not every tag value was tried");
    }
}

#[test]
fn named_tags_route_to_their_engines() {
    let mut m = Model::new("dma_read").unwrap();
    let p = Ports::new(&m);
    let idle = In {
        rq_valid: false,
        rq_addr: 0,
        sq_valid: false,
        sq_addr: 0,
        sq_len: 0,
        sq_tag: 0,
        req_ready: true,
        cpl_valid: true,
        cpl_tag: 0,
        cpl_word: [0xA5A5_5A5A; 16],
        rwqe_ready: true,
        wqe_ready: true,
        pl_ready: true,
    };
    for (tag, route) in [
        (dma_tag::RQ_WQE, (true, false, false)),
        (dma_tag::SQ_WQE, (false, true, false)),
        (dma_tag::SQ_PAYLOAD, (false, false, true)),
        (dma_tag::SQ_GATHER, (false, false, true)),
        (dma_tag::SQ_GATHER | 0x2B, (false, false, true)),
    ] {
        let got = drive(&mut m, &p, &In { cpl_tag: tag, ..idle });
        assert_eq!(got.route, route, "tag {tag:#04x}");
        // Only the chosen consumer's ready matters.
        let stalled = In { cpl_tag: tag, rwqe_ready: route.0, wqe_ready: route.1, pl_ready: route.2, ..idle };
        assert!(drive(&mut m, &p, &stalled).cpl_taken, "tag {tag:#04x}");
        let blocked = In { cpl_tag: tag, rwqe_ready: !route.0, wqe_ready: !route.1, pl_ready: !route.2, ..idle };
        assert!(!drive(&mut m, &p, &blocked).cpl_taken, "tag {tag:#04x} taken without its consumer's ready");
    }
    // Both requesters at once: the responder's 32-byte receive-WQE fetch goes first.
    let both =
        In { rq_valid: true, rq_addr: 0x1000, sq_valid: true, sq_addr: 0x2000, sq_len: 512, sq_tag: 0x40, ..idle };
    let got = drive(&mut m, &p, &both);
    assert_eq!(got.req, Some((0x1000, RECV_WQE_BYTES as u16, dma_tag::RQ_WQE)));
    assert!(got.rq_taken && !got.sq_taken);
}

#[test]
fn write_mux_random_cycles_match_the_reference() {
    let mut m = Model::new("dma_write").unwrap();
    let p = |n: &str| m.port(n).unwrap_or_else(|e| panic!("{e}"));
    let (cq_valid, cq_ready, cq_addr, cq_data, cq_len) =
        (p("cq_valid"), p("cq_ready"), p("cq_addr"), p("cq_data"), p("cq_len"));
    let (rsp_valid, rsp_ready, rsp_addr, rsp_data, rsp_len) =
        (p("rsp_valid"), p("rsp_ready"), p("rsp_addr"), p("rsp_data"), p("rsp_len"));
    let (wr_valid, wr_ready, wr_addr, wr_data, wr_len) =
        (p("wr_valid"), p("wr_ready"), p("wr_addr"), p("wr_data"), p("wr_len"));
    let (rsp_lane, wr_lane) = (p("rsp_lane"), p("wr_lane"));
    for seed in [0xD3A0_0101u64, 0xD3A0_0102] {
        let mut r = Rng::new(seed);
        let beat = |r: &mut Rng| -> [u32; 16] { std::array::from_fn(|_| r.next() as u32) };
        for cycle in 0..20_000 {
            let (cv, rv, ready) = (r.below(2) == 1, r.below(2) == 1, r.below(2) == 1);
            let (ca, ra) = (r.next(), r.next());
            let (cl, rl) = (r.below(65), r.below(65));
            let (cd, rd) = (beat(&mut r), beat(&mut r));
            let rlane = r.below(64);
            m.set(cq_valid, cv as u64);
            m.set(cq_addr, ca);
            m.set_wide(cq_data, &cd);
            m.set(cq_len, cl);
            m.set(rsp_valid, rv as u64);
            m.set(rsp_addr, ra);
            m.set_wide(rsp_data, &rd);
            m.set(rsp_len, rl);
            m.set(rsp_lane, rlane);
            m.set(wr_ready, ready as u64);
            m.eval();
            let ctx = format!("seed {seed:#x} cycle {cycle}: cq {cv} rsp {rv} ready {ready}");
            assert_eq!(m.get(wr_valid) != 0, cv || rv, "{ctx}");
            assert_eq!(m.get(cq_ready) != 0, ready, "{ctx}");
            assert_eq!(m.get(rsp_ready) != 0, ready && !cv, "{ctx}");
            if cv || rv {
                // A CQE starts at lane 0; a placement write at the lane the responder names.
                let (a, d, l, lane) = if cv { (ca, cd, cl, 0) } else { (ra, rd, rl, rlane) };
                let mut got = [0u32; 16];
                m.get_wide(wr_data, &mut got);
                assert_eq!((m.get(wr_addr), got, m.get(wr_len), m.get(wr_lane)), (a, d, l, lane), "{ctx}");
            }
        }
    }
}
