//! Block-level Verilator test of the window engine (`hw/src/cc.rs`, top
//! "cc") against `rnic_model::strack::cc::StrackCc` and, for the QPs whose
//! window is DCTCP's, `rnic_model::dctcp::Dctcp`, bit for bit.
//!
//! Each seed draws a network (line rate 10 to 800 Gb/s, base RTT 1 to
//! 50 µs, MTU 256 to 4096, a window cap of 50 to 125 % of the BDP; the
//! paper's 400 Gb/s, 8 µs, 4 KiB among them), the EWMA weight and
//! `target_Qhigh`, and runs random ACK streams on a few QPs (the highest
//! QPN among them) through phases: an idle network (RTT at the base, or a
//! new minimum now and then), a queue building (delays between target and
//! `target_Qhigh`), heavy congestion (beyond `target_Qhigh`, ECN marks),
//! and recovery; acknowledged bytes from 0 to past the model's 2^23 cap,
//! probes, ACKs in bursts and after long gaps, and QPs re-initialised. The
//! nanosecond clock starts just below 2^32, so the engine's 32-bit times
//! wrap during the run. STrack's first window is the largest or a random
//! one (past the largest too). A third of the QP inits choose DCTCP (with a
//! random g and MTU): their ACKs carry an ePSN that starts near the 24-bit
//! wrap and moves with the acknowledged packets (stale ones too), and the
//! QP's `snd_nxt` is written now and then, ahead of the ePSN or (a rewind)
//! behind it. After every request the engine's window and the branch it
//! took must be the model's. The cycles each branch took are
//! printed. `RNIC_CC_BLOCK_SEED=S` replays one seed, `RNIC_CC_BLOCK_OPS=N`
//! runs longer.

use std::collections::BTreeMap;

use rnic_hw::cc::{
    ACT_ABDP, ACT_CONST, ACT_DCTCP_CUT, ACT_DCTCP_INC, ACT_DECREASE, ACT_GAIN, ACT_HOLD, OP_ACK, OP_INIT,
};
use rnic_model::dctcp::{Dctcp, DctcpAction, DctcpParams};
use rnic_model::strack::cc::{CwndAction, StrackCc, StrackParams};
use rnic_model::NetParams;
use rnic_sim::model::Model;
use rnic_sim::rng::SplitMix as Rng;
use rnic_spec::params::NUM_QPS;

fn action_code(a: CwndAction) -> u64 {
    match a {
        CwndAction::Hold => ACT_HOLD,
        CwndAction::ConstIncrease => ACT_CONST,
        CwndAction::RttGainIncrease => ACT_GAIN,
        CwndAction::AchievedBdpCut => ACT_ABDP,
        CwndAction::MultiplicativeDecrease => ACT_DECREASE,
    }
}

fn pick_params(r: &mut Rng) -> StrackParams {
    let net = if r.pct(30) {
        NetParams { link_gbps: 400, base_rtt_ns: 8_000, mtu: 4096 }
    } else {
        NetParams {
            link_gbps: r.range(10, 800) as u32,
            base_rtt_ns: r.range(1_000, 50_000) as u32,
            mtu: 256 << r.below(5),
        }
    };
    let mut p = StrackParams::from_net(net, r.pick(&[100, 125, 50, 80]));
    if r.pct(60) {
        // Beyond 8 the EWMA's negative steps need an arithmetic shift to stay exact in 32 bits.
        p.ewma_shift = r.pick(&[0, 1, 2, 4, 6, 9, 12, 20, 31]);
    }
    if r.pct(30) {
        p.target_qhigh_ns = p.target_qdelay_ns * r.range(2, 4) as u32;
    }
    p
}

/// One ACK: its RTT, ECN mark, the packets its ePSN moves (negative:
/// a stale ACK) and probe bit, by phase.
fn pick_ack(r: &mut Rng, p: &StrackParams, phase: u64) -> (u32, bool, i64, bool) {
    let base = p.net_base_rtt_ns;
    let (t, h) = (p.target_qdelay_ns, p.target_qhigh_ns);
    // RTTs stay at or above half the base RTT, so the model's u64 products do not overflow.
    let rtt = match phase {
        0 => base + if r.pct(10) { 0 } else { r.below(t as u64 / 2 + 1) as u32 },
        1 => base + r.range(t as u64 / 2, h as u64 + t as u64) as u32,
        2 => base + r.range(h as u64, 4 * h as u64) as u32,
        _ => base / 2 + r.below(base as u64 + 1) as u32,
    };
    let ecn = match phase {
        2 => r.pct(70),
        1 => r.pct(20),
        _ => r.pct(3),
    };
    let adv = match r.below(20) {
        0 | 1 => 0,
        2 => -(r.range(1, 40) as i64),
        3 => r.range(1 << 11, 1 << 20) as i64,
        4 | 5 => r.below(256) as i64,
        _ => r.range(1, 8) as i64,
    };
    (rtt, ecn, adv, r.pct(5))
}

/// The bytes an ACK's count moves by for `adv` packets of `2^pmtu` bytes:
/// now and then a short last packet, a jump of up to 2^30 (so the 32-bit
/// count wraps during a run), or a stale count behind the last.
fn bytes_step(r: &mut Rng, adv: i64, pmtu: u32) -> i64 {
    match r.below(50) {
        0 => r.range(1 << 24, 1 << 30) as i64,
        1..=4 => adv * (1 << pmtu) + r.below(1 << pmtu) as i64,
        _ => adv * (1 << pmtu),
    }
}

/// A QP's window in the model.
#[derive(Clone, Debug)]
enum Cc {
    Strack(StrackCc),
    Dctcp(Dctcp),
}

impl Cc {
    fn cwnd(&self) -> u32 {
        match self {
            Cc::Strack(c) => c.cwnd,
            Cc::Dctcp(d) => d.cwnd,
        }
    }
}

/// How far a DCTCP QP's ePSN moves with an ACK: mostly a few packets,
/// sometimes none, back (a stale ACK) or far ahead.
fn adv_psns(r: &mut Rng) -> i64 {
    match r.below(20) {
        0 | 1 => 0,
        2 => -(r.range(1, 40) as i64),
        3 => r.range(100, 1 << 22) as i64,
        _ => r.range(1, 8) as i64,
    }
}

fn run(seed: u64, ops: u64) -> Result<BTreeMap<&'static str, (u64, u64)>, String> {
    let mut m = Model::new("cc").map_err(|e| e.to_string())?;
    let p = |m: &Model, n: &str| m.port(n).unwrap_or_else(|e| panic!("{e}"));
    let (valid, ready, out_v, out_cwnd, out_action) =
        (p(&m, "req_valid"), p(&m, "req_ready"), p(&m, "out_valid"), p(&m, "out_cwnd"), p(&m, "out_action"));
    let req = [
        "req_qpn",
        "req_op",
        "req_now",
        "req_ecn",
        "req_rtt",
        "req_bytes",
        "req_probe",
        "req_on",
        "req_dctcp",
        "req_epsn",
    ]
    .map(|n| p(&m, n));
    let (nxt_we, nxt_qpn, nxt_psn) = (p(&m, "nxt_we"), p(&m, "nxt_qpn"), p(&m, "nxt_psn"));
    let out_qpn = p(&m, "out_qpn");
    let mut r = Rng::new(seed);
    let prm = pick_params(&mut r);
    for (name, v) in [
        ("p_base_rtt", prm.net_base_rtt_ns as u64),
        ("p_target", prm.target_qdelay_ns as u64),
        ("p_qhigh", prm.target_qhigh_ns as u64),
        ("p_ewma_shift", prm.ewma_shift as u64),
        ("p_beta", prm.beta_q8),
        ("p_eta", prm.eta_q8),
        ("p_alpha_rtt", prm.alpha_rtt_q8),
        ("p_gamma", prm.gamma_q16 as u64),
        ("p_max_cwnd", prm.max_cwnd as u64),
        ("p_min_cwnd", prm.min_cwnd as u64),
    ] {
        let port = p(&m, name);
        m.set(port, v);
    }
    let dp = DctcpParams {
        mtu: r.pick(&[256u32, 1024, 4096, 4096, 65535]),
        g_shift: r.pick(&[0u32, 1, 4, 4, 4, 7, 15]),
        max_cwnd: prm.max_cwnd,
        min_cwnd: prm.min_cwnd,
    };
    // STrack's first window: 0 (the largest), or anywhere from the smallest to past the largest.
    let init_cwnd = if r.pct(40) { 0 } else { r.range(prm.min_cwnd as u64, prm.max_cwnd as u64 * 3 / 2) as u32 };
    for (name, v) in
        [("p_dctcp_g", dp.g_shift as u64), ("p_dctcp_mtu", dp.mtu as u64), ("p_init_cwnd", init_cwnd as u64)]
    {
        let port = p(&m, name);
        m.set(port, v);
    }
    let qpns = [0usize, 1, 77, NUM_QPS - 1];
    let mut ccs: Vec<Option<Cc>> = vec![None; qpns.len()];
    // Per DCTCP QP: its ePSN (`snd_una`) and the `snd_nxt` last written (24 bits).
    let mut una: Vec<u32> = vec![0; qpns.len()];
    let mut nxt: Vec<u32> = vec![0; qpns.len()];
    // Per QP: the window is on, log2 of its path MTU (the size of the byte
    // steps), the last bytes count taken; and the count its next ACK builds on.
    let mut qs: Vec<(bool, u32, u64)> = vec![(false, 12, 0); qpns.len()];
    let mut next_bytes: Vec<u64> = vec![0; qpns.len()];
    // The clock starts just below 2^32 ns: the engine's 32-bit times wrap early in the run.
    let mut now: u64 = (1 << 32) - r.range(1, 2_000_000);
    let mut phase = 0u64;
    // Per branch: requests and cycles from taken to done.
    let mut stats: BTreeMap<&'static str, (u64, u64)> = BTreeMap::new();
    for i in 0..ops {
        if r.below(300) == 0 {
            phase = r.below(4);
        }
        let qi = r.below(qpns.len() as u64) as usize;
        now += match r.below(20) {
            0 => r.range(1_000_000, 30_000_000),
            1..=5 => 0,
            _ => r.below(2 * prm.net_base_rtt_ns as u64),
        };
        let init = ccs[qi].is_none() || r.below(500) == 0;
        let dctcp = if init { r.pct(33) } else { matches!(ccs[qi], Some(Cc::Dctcp(_))) };
        if dctcp && !init {
            una[qi] = (una[qi] as i64 + adv_psns(&mut r)).rem_euclid(1 << 24) as u32;
            if r.pct(30) {
                // The turn engine sent more (or a rewind resent from behind the ePSN).
                let to = if r.pct(85) {
                    una[qi] as i64 + r.below(300) as i64
                } else {
                    una[qi] as i64 - r.range(1, 50) as i64
                };
                nxt[qi] = to.rem_euclid(1 << 24) as u32;
                m.set(nxt_we, 1);
                m.set(nxt_qpn, qpns[qi] as u64);
                m.set(nxt_psn, nxt[qi] as u64);
                m.clock_low();
                m.clock_high();
                m.set(nxt_we, 0);
            }
        } else if init {
            una[qi] = (1 << 24) - r.range(1, 5000) as u32;
        }
        let (rtt, ecn, adv, probe) = pick_ack(&mut r, &prm, phase);
        let (on, pmtu) = if init { (r.pct(90), r.range(8, 12) as u32) } else { (qs[qi].0, qs[qi].1) };
        // An init starts the count at 0 (the peer's count starts there); the request's bytes are not used.
        let bytes = if init {
            r.below(1 << 32)
        } else {
            (next_bytes[qi] as i64 + bytes_step(&mut r, adv, pmtu)).rem_euclid(1 << 32) as u64
        };
        next_bytes[qi] = if init { 0 } else { bytes };
        // The bytes the model sees: the count's advance over the last taken (none if behind).
        let d = bytes.wrapping_sub(qs[qi].2) & 0xFFFF_FFFF;
        let acked = if d < 0x8000_0000 { d } else { 0 };
        let ctx = |w: String| format!("seed {seed:#x} op {i} (QP {}, now {now}): {w}", qpns[qi]);
        let vals = [
            qpns[qi] as u64,
            if init { OP_INIT } else { OP_ACK },
            now & 0xFFFF_FFFF,
            ecn as u64,
            rtt as u64,
            bytes,
            probe as u64,
            on as u64,
            dctcp as u64,
            una[qi] as u64,
        ];
        for (port, v) in req.iter().zip(vals) {
            m.set(*port, v);
        }
        m.set(valid, 1);
        let mut waited = 0;
        loop {
            m.clock_low();
            let taken = m.get(ready) != 0;
            m.clock_high();
            if taken {
                break;
            }
            waited += 1;
            if waited > 10 {
                return Err(ctx("the engine is not ready between requests".into()));
            }
        }
        m.set(valid, 0);
        let (want_cwnd, want_act) = if init {
            let cc = if dctcp {
                Cc::Dctcp(Dctcp::new(dp))
            } else {
                let mut c = StrackCc::new(prm, now);
                if init_cwnd != 0 {
                    c.cwnd = init_cwnd;
                }
                Cc::Strack(c)
            };
            let w = cc.cwnd();
            ccs[qi] = Some(cc);
            qs[qi] = (on, pmtu, 0);
            (w, ACT_HOLD)
        } else if !on {
            // A QP whose window is off: nothing comes out, nothing changes.
            for _ in 0..8 {
                m.clock_low();
                if m.get(out_v) != 0 {
                    return Err(ctx("an ACK of a QP whose window is off was answered".into()));
                }
                m.clock_high();
            }
            let e = stats.entry("off").or_default();
            e.0 += 1;
            continue;
        } else {
            if d != 0 && d < 0x8000_0000 {
                qs[qi].2 = bytes;
            }
            match ccs[qi].as_mut().expect("initialised") {
                Cc::Strack(cc) => {
                    let a = cc.on_ack(now, ecn, rtt, acked, probe);
                    (cc.cwnd, action_code(a))
                }
                Cc::Dctcp(d) => {
                    let a = d.on_ack(acked, ecn, una[qi], nxt[qi]);
                    let code = match a {
                        DctcpAction::Increase => ACT_DCTCP_INC,
                        DctcpAction::Cut => ACT_DCTCP_CUT,
                        DctcpAction::Hold => ACT_HOLD,
                    };
                    (d.cwnd, code)
                }
            }
        };
        let mut cycles = 0u64;
        loop {
            m.clock_low();
            cycles += 1;
            if m.get(out_v) != 0 {
                let (got_cwnd, got_act) = (m.get(out_cwnd), m.get(out_action));
                if m.get(out_qpn) != qpns[qi] as u64 {
                    return Err(ctx(format!("the result names QP {}", m.get(out_qpn))));
                }
                if (got_cwnd, got_act) != (want_cwnd as u64, want_act) {
                    return Err(ctx(format!(
                        "{} (rtt {rtt}, ecn {ecn}, bytes {bytes:#x}, acked {acked}, probe {probe}, ePSN {:#x}, snd_nxt {:#x}): window {got_cwnd:#x} branch {got_act}, the model {want_cwnd:#x} branch {want_act} (model state {:?})",
                        if init { "init" } else { "ACK" },
                        una[qi],
                        nxt[qi],
                        ccs[qi]
                    )));
                }
                m.clock_high();
                break;
            }
            m.clock_high();
            if cycles > 400 {
                return Err(ctx("no answer in 400 cycles".into()));
            }
        }
        let name = match (init, dctcp) {
            (true, _) => "init",
            (false, true) => ["DCTCP hold", "", "", "", "", "DCTCP increase", "DCTCP cut"][want_act as usize],
            (false, false) => {
                ["hold", "constant increase", "delay-gain increase", "achieved-BDP cut", "multiplicative decrease"]
                    [want_act as usize]
            }
        };
        let e = stats.entry(name).or_default();
        e.0 += 1;
        e.1 = e.1.max(cycles);
    }
    Ok(stats)
}

/// Seeds of the default run: each draws a network and four QPs' ACK streams.
const SEEDS: u64 = 1000;

#[test]
fn cc_block_matches_the_model() {
    let ops: u64 = std::env::var("RNIC_CC_BLOCK_OPS").ok().and_then(|v| v.parse().ok()).unwrap_or(6_000);
    let seeds: Vec<u64> = match std::env::var("RNIC_CC_BLOCK_SEED") {
        Ok(s) => vec![u64::from_str_radix(s.trim_start_matches("0x"), 16).expect("hex seed")],
        Err(_) => (1..=SEEDS).map(|i| 0xCC00_0000 + i).collect(),
    };
    let n = seeds.len();
    let mut all: BTreeMap<&'static str, (u64, u64)> = BTreeMap::new();
    for seed in seeds {
        match run(seed, ops) {
            Ok(stats) => {
                if seed <= 0xCC00_0004 {
                    println!(
                        "cc_block seed {seed:#x}: {ops} requests match the model: {stats:?} (requests, most cycles)"
                    );
                }
                for (k, (n, c)) in stats {
                    let e = all.entry(k).or_default();
                    e.0 += n;
                    e.1 = e.1.max(c);
                }
            }
            Err(e) => {
                panic!("{e}\nreplay: RNIC_CC_BLOCK_SEED={seed:#x} cargo test --release -p rnic-sim --test cc_block")
            }
        }
    }
    println!(
        "cc_block: {n} seeds ({} QP streams) of {ops} requests match the model: {all:?} (requests, most cycles)",
        n * 4
    );
    // Every branch of Algorithm 4 and of DCTCP was taken.
    for b in [
        "hold",
        "constant increase",
        "delay-gain increase",
        "achieved-BDP cut",
        "multiplicative decrease",
        "DCTCP hold",
        "DCTCP increase",
        "DCTCP cut",
    ] {
        assert!(all.get(b).is_some_and(|e| e.0 > 0), "no request took the {b} branch: {all:?}");
    }
}
