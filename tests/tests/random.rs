//! Constrained-random end-to-end tests against the golden model
//! (`rnic_tests::golden`): random mixes of RDMA WRITE and SEND (and RDMA
//! READ in the `random_reads*` tests and some soak worlds) between two
//! cosimulated NICs, every byte of every registered region and every
//! completion compared with the model's prediction.
//!
//! Stimulus (per world = one cluster, derived from a seed):
//! * message sizes 64 k + r: r walks through every residue 0..63 in a random
//!   order, k is random below 3 x MTU / 64 (20 % of the time below 3, 10 % just
//!   below or above a packet boundary); now and then a large size up to 1 MiB;
//!   one zero-length message per world;
//! * every PMTU; 1 to 254 QP pairs, QPNs up to 255 (lower QPNs are taken by
//!   placeholder QPs that are dropped afterwards); NIC0 and NIC1 use different
//!   QPNs for a pair; random SQ/RQ depths, 1 to 3 CQs per NIC, random initial
//!   PSNs (some just below the 24-bit wrap); two QPs in five (on either
//!   NIC) spray their requests over 1 to 256 entropies (a third of them
//!   obliviously), and one in three is under a congestion window (STrack's
//!   or DCTCP's);
//! * QPs with a `max_inline_data` of 0, 16, 64, 65 or 256 bytes, half of the
//!   legal WRITEs and SENDs that fit posted inline (`SendFlags::INLINE`);
//!   a single WR to an idle SQ goes through the WQE push window, with its
//!   payload when it is inline and at most 64 bytes;
//! * random batches for `post_send_batch` / `post_recv_batch`, receives posted
//!   ahead of their SENDs, random idle gaps (0 to 5000 cycles) between posts,
//!   random PCIe and MMIO latencies;
//! * sources at random offsets of a source MR, destinations at random offsets
//!   (every alignment mod 64) inside destination MRs of odd lengths filled with
//!   a sentinel pattern; receive buffers exactly as long as the message or longer;
//!   two SEND receives in five posted as a scatter list (the buffer cut at
//!   random points into 2 to `MAX_RECV_SGE` entries, some empty, in shuffled
//!   order; a generator of its own);
//! * two in five legal WRITEs and SENDs posted with a two-entry gather list
//!   (the source range cut at a random byte; a generator of its own).
//!
//! READs: each NIC of a world with READs has a read-only region
//! (REMOTE_READ) filled with a pattern before the run and never written,
//! which READs read at random offsets, and a region (LOCAL_WRITE) that only
//! READs write, each READ of a round into its own bytes; so a READ's result
//! does not depend on timing. Everything about READs is drawn from a
//! generator of its own, and a world without READs (every test but the
//! `random_reads*` ones) registers no READ regions and draws nothing from
//! it, so it runs exactly as before READs existed.
//!
//! The run is cut into rounds. Within a round no two messages touch the
//! same bytes, so the outcome does not depend on timing. Each completion is
//! checked against the model when it is polled (with the data of that
//! message); at the end of a round, after a quiet period, every byte of
//! every MR of both NICs is compared and no extra completion may have come.
//!
//! Replay a failure: `RNIC_RANDOM_SEED=<seed> cargo test --release -p rnic-tests --test random -- <test> --nocapture`
//! (`RNIC_RANDOM_PCAP=FILE` also writes every frame the NICs send to a pcap).
//! `RNIC_RANDOM_AVOID_KNOWN=1` leaves out what used to hit RTL defects, all
//! fixed since and covered by `regressions.rs` (messages of 58..60 bytes mod
//! 64; more than 16 QPs; multi-packet WRITEs past the end of their region in
//! `random_errors`), to check the harness itself on an RTL that has them.
//! Soak: `RNIC_SOAK_MSGS=1000000 cargo test --release -p rnic-tests --test random -- soak --nocapture`
//! (four worlds in ten with loss, duplication and some reordering on the links;
//! three in ten with READs).

use rnic::{
    AccessFlags, Context, Cq, Mr, Mtu, Pd, Qp, QpAttr, QpInitAttr, QpState, RecvWr, SendWr, WcStatus, WrOpcode,
    MAX_RECV_SGE,
};
use rnic_sim::{RandomFaults, SimConfig, SimTop};
use rnic_spec::params;
use rnic_tests::golden::{Golden, Matched, MemMismatch, MrId, MrInfo, QpId, Queue, RecvOp, SendOp, Verb};
use rnic_tests::Nics;
use rnic_tools::bench::connect;
use rnic_tools::pattern;
use std::collections::VecDeque;
use std::time::Instant;

// ---------------------------------------------------------------- randomness

use rnic_sim::rng::SplitMix as Rng;

// ---------------------------------------------------------------- parameters

/// How the QPNs of a world are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Qpns {
    /// 2, 3, 4, ... (what a fresh context hands out).
    Low,
    /// Random QPNs in the upper half, 255 always among them.
    High,
    /// Every QPN the NIC has (2..=255).
    All,
}

/// A world: everything the seed decides up front.
#[derive(Clone, Debug)]
struct Params {
    test: &'static str,
    seed: u64,
    mtu: Mtu,
    pairs: usize,
    qpns: Qpns,
    /// Traffic in both directions (NIC1 also requests).
    bidir: bool,
    /// Percentage of SENDs (the rest are WRITEs).
    send_pct: u32,
    /// Percentage of messages that are RDMA READs (0: none, and no READ regions).
    read_pct: u32,
    /// Per mille of messages with a large size (up to 1 MiB).
    large_permille: u64,
    /// Messages in the world.
    msgs: u64,
    /// Most messages per round.
    round_max: u64,
    /// Inject failing operations (oversized SEND, bad WRITE key or bounds).
    errors: bool,
    pcie_rtt_ns: u64,
    /// PCIe max payload, max read request, read completion boundary (bytes) and round-trip spread (ns).
    pcie_sizes: (u32, u32, u32, u64),
    mmio_latency_ns: u64,
    /// Leave out the known RTL defects (see the file's doc).
    avoid_known: bool,
    /// Faults on both links (loss, duplication, reordering), seeded from the world's seed.
    faults: Option<Faults>,
    /// Selective-repeat windows each responder lends (`Context::set_sr_windows`; `None`: all).
    sr_windows: Option<u32>,
    /// The board shell instead of the core alone (else `RNIC_SIM_TOP`).
    shell: bool,
}

/// Random faults a test puts on both links.
#[derive(Clone, Copy, Debug, Default)]
struct Faults {
    /// Fraction of frames lost.
    loss: f64,
    /// Fraction of frames delivered twice.
    dup: f64,
    /// Extra delay of each frame, uniform up to this (reorders frames).
    jitter_ns: u64,
}

/// What a test fixes; the rest comes from the seed.
#[derive(Clone, Copy, Default)]
struct Spec {
    mtu: Option<Mtu>,
    pairs: Option<usize>,
    qpns: Option<Qpns>,
    bidir: Option<bool>,
    send_pct: Option<u32>,
    large_permille: Option<u64>,
    read_pct: Option<u32>,
    msgs: u64,
    errors: bool,
    faults: Option<Faults>,
    sr_windows: Option<u32>,
    /// Simulate the board shell (the PCIe block's interfaces and the MAC FIFOs) instead of the core alone.
    shell: bool,
}

const MTUS: [Mtu; 5] = [Mtu::Mtu256, Mtu::Mtu512, Mtu::Mtu1024, Mtu::Mtu2048, Mtu::Mtu4096];
/// Most QPs the known doorbell defect allows.
const SAFE_QPS: usize = 16;
/// Largest message.
const MAX_LARGE: u64 = 1 << 20;

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0")
}

fn parse_u64(s: &str) -> Option<u64> {
    let s = s.trim().replace('_', "");
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

impl Params {
    fn new(test: &'static str, seed: u64, spec: Spec) -> Params {
        let mut r = Rng::new(seed ^ 0xA11CE);
        let avoid_known = env_flag("RNIC_RANDOM_AVOID_KNOWN");
        let mtu = spec.mtu.unwrap_or_else(|| r.pick(&MTUS));
        let mut qpns = spec.qpns.unwrap_or_else(|| if r.pct(25) { Qpns::High } else { Qpns::Low });
        let mut pairs = match qpns {
            Qpns::All => params::NUM_QPS - 2,
            _ => spec.pairs.unwrap_or_else(|| if r.pct(20) { 1 } else { r.range(2, 8) as usize }),
        };
        if avoid_known && pairs > SAFE_QPS {
            pairs = SAFE_QPS;
            qpns = Qpns::High;
        }
        let errors = spec.errors;
        let bidir = !errors && spec.bidir.unwrap_or_else(|| r.pct(30));
        let send_pct = spec.send_pct.unwrap_or_else(|| r.pick(&[20, 50, 50, 80]));
        let large_permille = spec.large_permille.unwrap_or(15);
        // PCIe round trip 100 ns .. 4 us, MMIO one way 100 ns .. 1.5 us, log-uniform-ish.
        let pcie_rtt_ns = r.pick(&[100, 250, 500, 1000, 1000, 2000, 4000]) + r.below(100);
        let mmio_latency_ns = r.pick(&[100, 300, 500, 500, 1500]) + r.below(50);
        let round_max = r.pick(&[8, 32, 64, 128]);
        let mps = r.pick(&[128, 256, 256, 512]);
        let mrrs = r.pick(&[128, 256, 512, 512, 1024, 4096]);
        let rcb = if r.pct(25) { 128 } else { 64 };
        let pcie_sizes = (mps, mrrs, rcb, r.pick(&[0, 200, 200, 800]));
        Params {
            test,
            seed,
            mtu,
            pairs,
            qpns,
            bidir,
            send_pct,
            read_pct: spec.read_pct.unwrap_or(0),
            large_permille,
            msgs: spec.msgs,
            round_max,
            errors,
            pcie_rtt_ns,
            pcie_sizes,
            mmio_latency_ns,
            avoid_known,
            faults: spec.faults,
            sr_windows: spec.sr_windows,
            shell: spec.shell,
        }
    }

    /// A world of the soak: everything random.
    fn soak(seed: u64, msgs: u64) -> Params {
        let mut r = Rng::new(seed ^ 0x50AC);
        let qpns = match r.below(10) {
            0 => Qpns::All,
            1..=3 => Qpns::High,
            _ => Qpns::Low,
        };
        let pairs = if r.pct(20) { r.range(9, 48) as usize } else { r.range(1, 8) as usize };
        // Four worlds in ten run over faulty links (reordering only at the
        // 4 KiB MTU: go-back-N pays a rewind per overtaken packet).
        let faults = r.pct(40).then(|| Faults {
            loss: r.pick(&[0.001, 0.01, 0.03]),
            dup: r.pick(&[0.0, 0.01]),
            jitter_ns: r.pick(&[0, 0, 300]),
        });
        // From a generator of its own, so the worlds' other parameters are as before READs.
        let read_pct = Rng::new(seed ^ 0x4EAD_50AC).pct(30).then_some(10);
        // Likewise: a fifth of the worlds lend few or no selective-repeat windows (software recovery).
        let sr_windows =
            Rng::new(seed ^ 0x5B17_50AC).pick(&[None, None, None, None, Some(0), Some(2), None, None, None, None]);
        let spec = Spec {
            pairs: Some(pairs),
            qpns: Some(qpns),
            read_pct,
            sr_windows,
            large_permille: Some(r.pick(&[0, 5, 15, 50])),
            msgs,
            faults,
            mtu: faults.filter(|f| f.jitter_ns > 0).map(|_| Mtu::Mtu4096),
            ..Default::default()
        };
        Params::new("soak", seed, spec)
    }

    fn replay(&self) -> String {
        if self.test == "soak" {
            format!("RNIC_RANDOM_SEED={:#x} RNIC_SOAK_MSGS={} cargo test --release -p rnic-tests --test random -- soak --nocapture", self.seed, self.msgs)
        } else {
            format!(
                "RNIC_RANDOM_SEED={:#x} cargo test --release -p rnic-tests --test random -- {} --exact --nocapture",
                self.seed, self.test
            )
        }
    }
}

// ---------------------------------------------------------------- the world

/// One NIC's resources.
struct Node {
    ctx: Context,
    /// Per QP of this NIC (pair order): (send CQ index, receive CQ index).
    cqs: Vec<Cq>,
    /// Source region (the NIC may only read it).
    src: Mr,
    src_id: MrId,
    /// Destination regions: (region, model id, accepts RDMA WRITE).
    dsts: Vec<(Mr, MrId, bool)>,
    /// The regions of READs (worlds with READs).
    reads: Option<ReadRegions>,
    _pd: Pd,
}

/// A NIC's regions for RDMA READs.
struct ReadRegions {
    /// READ sources at this NIC (REMOTE_READ): a pattern written before the run, never changed.
    src: Mr,
    src_id: MrId,
    /// Destinations of this NIC's own READs (LOCAL_WRITE), written by nothing else.
    dst: Mr,
    dst_id: MrId,
}

/// A connected QP pair: `qp[n]` lives on NIC n.
struct Pair {
    qp: [Qp; 2],
    id: [QpId; 2],
    /// Each QP's `max_inline_data`.
    inline: [u32; 2],
    /// No longer used (it failed on purpose).
    dead: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Write,
    Send,
    Read,
}

/// How a message is meant to go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Legal: must succeed.
    Legal,
    /// A SEND longer than its receive buffer.
    Oversize,
    /// A WRITE with a wrong key tag, or (every other one) the region's lkey in place of its rkey.
    BadKey,
    /// A WRITE ending one byte past its region.
    PastEnd,
    /// A WRITE to a region without REMOTE_WRITE.
    NoRemoteWrite,
    /// A READ from a region without REMOTE_READ.
    NoRemoteRead,
    /// Posted behind a failing WR on the same QP: flushed.
    Doomed,
}

#[derive(Clone, Debug)]
struct Msg {
    /// Number in the world (also the wr_id of the send and of its receive).
    id: u64,
    pair: usize,
    /// Requester NIC.
    req: usize,
    /// Index of this message among the messages of its requester QP.
    idx: u64,
    op: Op,
    kind: Kind,
    size: u32,
    /// Offset in the requester's source region (a READ: in the responder's READ source region).
    src_off: u64,
    /// Destination region (index into the responder's `dsts`; a READ: unused).
    dst: usize,
    /// Offset in that region (a READ: in the requester's READ destination region).
    dst_off: u64,
    /// Receive buffer length (SEND).
    recv_len: u32,
    /// WRITE target or READ source.
    remote_addr: u64,
    rkey: u32,
    /// Immediate data (SEND or WRITE with immediate; a WRITE with immediate
    /// also consumes a receive WR, posted with an empty buffer).
    imm: Option<u32>,
}

impl Msg {
    /// Whether it consumes a receive WR at the responder.
    fn consumes_recv(&self) -> bool {
        self.op == Op::Send || self.imm.is_some()
    }
}

/// Counters of a run.
#[derive(Default, Clone, Copy)]
struct Stats {
    msgs: u64,
    sends: u64,
    writes: u64,
    reads: u64,
    payload: u64,
    /// Bytes compared (payload checks at completion and whole-MR sweeps).
    verified: u64,
    rounds: u64,
    completions: u64,
    errors_injected: u64,
    /// Bit r: a message of size = r mod 64 was sent.
    residues: u64,
    /// Largest message.
    largest: u32,
    /// Zero-length messages.
    zero: u64,
    /// Receives posted as scatter lists.
    recv_lists: u64,
    /// WRITEs and SENDs posted with a two-entry gather list.
    send_lists: u64,
}

struct World {
    p: Params,
    rng: Rng,
    /// Everything about READs (so worlds without them draw as before).
    read_rng: Rng,
    /// Inline sends: each QP's `max_inline_data` and which WRs go inline (a generator of its own).
    inline_rng: Rng,
    /// Which SEND receives are scatter lists, and their layout (a generator of its own).
    list_rng: Rng,
    /// Which WRITEs and SENDs gather from two entries, and where the source is cut (a generator of its own).
    gather_rng: Rng,
    /// Residues still to use in the READs' cycle through 0..63.
    read_residues: Vec<u32>,
    pairs: Vec<Pair>,
    nodes: Vec<Node>,
    model: Golden,
    /// Residues still to use in the current cycle through 0..63.
    residues: Vec<u32>,
    next_id: u64,
    /// Per requester lane (pair * 2 + req): messages so far.
    lane_count: Vec<u64>,
    /// A zero-length message was generated.
    zero_done: bool,
    /// The message that did not fit the last round.
    carry: Option<(usize, usize, Op, u32)>,
    round: u64,
    /// Messages of the current round, indexed by `id - round_base`.
    msgs: Vec<Msg>,
    /// Messages of the last few rounds (to name the owner of stray bytes).
    history: VecDeque<Vec<Msg>>,
    round_base: u64,
    stats: Stats,
    last_progress: u64,
    qpns_used: [Vec<u32>; 2],
    nics: Nics,
}

const SENTINEL: u64 = u64::MAX;

fn lane(pair: usize, nic: usize) -> usize {
    pair * 2 + nic
}

impl World {
    fn new(p: Params) -> World {
        let mut rng = Rng::new(p.seed);
        let mut read_rng = Rng::new(p.seed ^ 0x4EAD_0000_0000);
        let mut inline_rng = Rng::new(p.seed ^ 0x1411_E000_0000);
        let inline_max: [Vec<u32>; 2] =
            std::array::from_fn(|_| (0..p.pairs).map(|_| inline_rng.pick(&[0, 0, 16, 64, 65, 256])).collect());
        // `RNIC_RANDOM_PCAP=FILE` writes every frame the NICs send (a debugging aid for replays).
        let pcap = std::env::var_os("RNIC_RANDOM_PCAP").map(std::path::PathBuf::from);
        let (pcie_mps, pcie_mrrs, pcie_rcb, pcie_jitter_ns) = p.pcie_sizes;
        let cfg = SimConfig {
            pcie_rtt_ns: p.pcie_rtt_ns,
            pcie_mps,
            pcie_mrrs,
            pcie_rcb,
            pcie_jitter_ns,
            pcie_seed: p.seed,
            mmio_latency_ns: p.mmio_latency_ns,
            pcap,
            ..SimConfig::default()
        };
        let cfg = if p.shell { SimConfig { top: SimTop::Shell, ..cfg } } else { cfg };
        let nics = Nics::new(2, cfg).unwrap_or_else(|e| panic!("{e}"));
        if let Some(f) = p.faults {
            for link in 0..2 {
                nics.cluster.lock().faults(link).set_random(RandomFaults {
                    loss: f.loss,
                    burst: 1.0,
                    dup: f.dup,
                    corrupt: 0.0,
                    jitter_ns: f.jitter_ns,
                    seed: p.seed ^ (0xFA17 << 16) ^ link as u64,
                });
            }
        }
        let mut model = Golden::new();
        // Selective repeat (on by default) may place WRITEs queued behind a failing request.
        model.placed_behind_errors = p.faults.is_some();

        // QPNs per NIC, then a random pairing so a pair's two QPNs differ.
        let qpns_used: [Vec<u32>; 2] = std::array::from_fn(|_| choose_qpns(&mut rng, p.qpns, p.pairs));
        let mut perm: Vec<usize> = (0..p.pairs).collect();
        rng.shuffle(&mut perm);
        // Depths per QP: (send, recv).
        let depths: [Vec<(u32, u32)>; 2] = std::array::from_fn(|_| {
            (0..p.pairs).map(|_| (rng.pick(&[4, 8, 16, 64, 128]), rng.pick(&[4, 8, 16, 64, 128]))).collect()
        });

        let mut nodes = Vec::new();
        let mut qps: [Vec<Option<Qp>>; 2] =
            [(0..p.pairs).map(|_| None).collect(), (0..p.pairs).map(|_| None).collect()];
        for nic in 0..2 {
            let ctx = nics.ctxs[nic].clone();
            if let Some(n) = p.sr_windows {
                ctx.set_sr_windows(n).unwrap();
            }
            let pd = ctx.alloc_pd().unwrap();
            let mut mk = |len: usize, access: AccessFlags, stream: u64| -> (Mr, MrId) {
                let mr = pd.reg_mr(len, access).unwrap();
                let id = model
                    .add_mr(MrInfo { nic, pd: pd.pdn(), addr: mr.addr(), rkey: mr.rkey(), len, access }, vec![0; len]);
                let fill = pattern::make(p.seed, stream, len);
                mr.write(0, &fill).unwrap();
                model.cpu_write(id, 0, &fill);
                (mr, id)
            };
            let rw = AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE;
            let (src, src_id) =
                mk((2 << 20) + rng.range(1, 4095) as usize, AccessFlags::empty(), SENTINEL - 1 - nic as u64);
            let mut dsts = Vec::new();
            for (i, (len, access)) in [
                ((2 << 20) + 256 + rng.range(1, 4095), rw),
                ((512 << 10) + rng.range(1, 4095), rw),
                ((192 << 10) + rng.range(1, 4095), AccessFlags::LOCAL_WRITE),
            ]
            .into_iter()
            .enumerate()
            {
                let (mr, id) = mk(len as usize, access, SENTINEL - 10 - (nic * 4 + i) as u64);
                dsts.push((mr, id, access.contains(AccessFlags::REMOTE_WRITE)));
            }
            let reads = (p.read_pct > 0).then(|| {
                let src_len = (MAX_LARGE + read_rng.range(1, 4095)) as usize;
                let (src, src_id) = mk(src_len, AccessFlags::REMOTE_READ, SENTINEL - 30 - nic as u64);
                let dst_len = (2 * MAX_LARGE + read_rng.range(1, 4095)) as usize;
                let (dst, dst_id) = mk(dst_len, AccessFlags::LOCAL_WRITE, SENTINEL - 40 - nic as u64);
                ReadRegions { src, src_id, dst, dst_id }
            });
            // CQs: 1..3 per NIC, each QP's queues spread over them.
            let ncq = rng.range(1, 3) as usize;
            let assign: Vec<(usize, usize)> =
                (0..p.pairs).map(|_| (rng.below(ncq as u64) as usize, rng.below(ncq as u64) as usize)).collect();
            let mut need = vec![0u32; ncq];
            for (i, &(s, r)) in assign.iter().enumerate() {
                need[s] += depths[nic][i].0;
                need[r] += depths[nic][i].1;
            }
            let cqs: Vec<Cq> = need.iter().map(|&n| ctx.create_cq(n.max(1)).unwrap()).collect();
            // Create QPs in QPN order; placeholders take the QPNs in between (allocation is first free).
            let mut order: Vec<usize> = (0..p.pairs).collect();
            order.sort_by_key(|&i| qpns_used[nic][i]);
            let mut placeholders = Vec::new();
            let mut next = 2u32;
            for i in order {
                let want = qpns_used[nic][i];
                while next < want {
                    let ph = pd.create_qp(QpInitAttr::new(&cqs[0], &cqs[0], 0, 0)).unwrap();
                    assert_eq!(ph.qp_num(), next, "QPN allocation is expected to take the lowest free QPN");
                    placeholders.push(ph);
                    next += 1;
                }
                let (s, r) = assign[i];
                let (sd, rd) = depths[nic][i];
                let qp = pd
                    .create_qp(QpInitAttr {
                        max_inline_data: inline_max[nic][i],
                        ..QpInitAttr::new(&cqs[s], &cqs[r], sd, rd)
                    })
                    .unwrap();
                assert_eq!(qp.qp_num(), want, "QPN allocation is expected to take the lowest free QPN");
                qps[nic][i] = Some(qp);
                next += 1;
            }
            drop(placeholders);
            nodes.push(Node { ctx, cqs, src, src_id, dsts, reads, _pd: pd });
        }
        let mut pairs = Vec::new();
        let [q0, q1] = qps;
        let mut q1: Vec<Option<Qp>> = q1;
        for (i, a) in q0.into_iter().enumerate() {
            let a = a.unwrap();
            let b = q1[perm[i]].take().unwrap();
            let psn = |r: &mut Rng| if r.pct(25) { 0xFF_FFFF - r.below(64) as u32 } else { r.below(1 << 24) as u32 };
            let (pa, pb) = (psn(&mut rng), psn(&mut rng));
            // Two QPs in five spray their requests (STrack), over 1 to 256
            // entropies, one in three of them obliviously; one QP in three
            // is under a congestion window, half of them STrack's and half
            // DCTCP's.
            for q in [&a, &b] {
                let paths = if rng.pct(40) { 1 + rng.below(256) as u16 } else { 0 };
                let (cc, dctcp, obl) = (rng.pct(33), rng.pct(50), rng.pct(33));
                if paths != 0 || cc {
                    q.modify(&QpAttr {
                        max_paths: Some(paths),
                        strack_cc: Some(cc && !dctcp),
                        dctcp_cc: Some(cc && dctcp),
                        spray_oblivious: Some(paths != 0 && obl),
                        ..QpAttr::init()
                    })
                    .unwrap();
                }
            }
            connect(&nodes[0].ctx, &a, pa, &nodes[1].ctx, &b, pb, p.mtu).unwrap();
            // The golden model's RNR rule: the first RNR NAK fails the WR.
            for q in [&a, &b] {
                q.modify(&QpAttr { qp_state: QpState::Rts, rnr_retry: Some(0), ..Default::default() }).unwrap();
            }
            let ia = model.add_qp(0, a.qp_num(), nodes[0]._pd.pdn());
            let ib = model.add_qp(1, b.qp_num(), nodes[1]._pd.pdn());
            model.connect(ia, ib);
            let inline = [inline_max[0][i], inline_max[1][perm[i]]];
            pairs.push(Pair { qp: [a, b], id: [ia, ib], inline, dead: false });
        }
        let qpns_used =
            [pairs.iter().map(|x| x.qp[0].qp_num()).collect(), pairs.iter().map(|x| x.qp[1].qp_num()).collect()];
        let now = nics.cluster.lock().now();
        World {
            rng,
            read_rng,
            inline_rng,
            list_rng: Rng::new(p.seed ^ 0x5CA7_7E40_0000),
            gather_rng: Rng::new(p.seed ^ 0x6A7E_0000_0000),
            read_residues: Vec::new(),
            lane_count: vec![0; p.pairs * 2],
            p,
            pairs,
            nodes,
            model,
            residues: Vec::new(),
            next_id: 0,
            carry: None,
            zero_done: false,
            round: 0,
            msgs: Vec::new(),
            history: VecDeque::new(),
            round_base: 0,
            stats: Stats::default(),
            last_progress: now,
            qpns_used,
            nics,
        }
    }

    fn now(&self) -> u64 {
        self.nics.cluster.lock().now()
    }

    fn run(&self, cycles: u64) {
        self.nics.cluster.lock().run(cycles);
    }

    fn describe_world(&self) -> String {
        let p = &self.p;
        let q = |n: usize| {
            let v = &self.qpns_used[n];
            if v.len() > 12 {
                format!("{} QPs, QPNs {}..={}", v.len(), v.iter().min().unwrap(), v.iter().max().unwrap())
            } else {
                format!("QPNs {v:?}")
            }
        };
        format!(
            "MTU {}, {} QP pairs ({:?}; NIC0 {}; NIC1 {}), {}directional, {}% SEND, {}% READ, {}‰ large, rounds of up to {}, PCIe RTT {} ns (spread {} ns, MPS {}, MRRS {}, RCB {}), MMIO {} ns{}{}",
            p.mtu.bytes(),
            p.pairs,
            p.qpns,
            q(0),
            q(1),
            if p.bidir { "bi" } else { "uni" },
            p.send_pct,
            p.read_pct,
            p.large_permille,
            p.round_max,
            p.pcie_rtt_ns,
            p.pcie_sizes.3,
            p.pcie_sizes.0,
            p.pcie_sizes.1,
            p.pcie_sizes.2,
            p.mmio_latency_ns,
            if p.errors { ", error injection" } else { "" },
            if p.avoid_known { ", avoiding the known defects" } else { "" },
        ) + &match p.faults {
            Some(f) => format!(", faults on both links: {:.2}% loss, {:.2}% duplicated, jitter {} ns", f.loss * 100.0, f.dup * 100.0, f.jitter_ns),
            None => String::new(),
        } + &match p.sr_windows {
            Some(n) => format!(", {n} selective-repeat windows per responder (the rest: software recovery)"),
            None => String::new(),
        } + if self.nics.cluster.lock().config().top == SimTop::Shell {
            ", on the board shell (PCIe block interfaces, MAC FIFOs)"
        } else {
            ""
        }
    }

    /// Fails the test with everything needed to find and replay the failure.
    fn fail(&self, what: String) -> ! {
        panic!(
            "\n=== random test failure: {} seed {:#x}, round {}, cycle {} ===\n{what}\nworld: {}\nreplay: {}\n",
            self.p.test,
            self.p.seed,
            self.round,
            self.now(),
            self.describe_world(),
            self.p.replay()
        )
    }

    fn msg(&self, id: u64) -> Option<&Msg> {
        if let Some(m) = id.checked_sub(self.round_base).and_then(|i| self.msgs.get(i as usize)) {
            return Some(m);
        }
        self.history.iter().flatten().find(|m| m.id == id)
    }

    /// Which recent message's data `window` (at least 8 bytes found in memory) is, and where in it.
    fn whose_bytes(&self, window: &[u8]) -> Option<(u64, usize)> {
        for m in self.msgs.iter().chain(self.history.iter().flatten()) {
            if (m.size as usize) < window.len() {
                continue;
            }
            let data = match (m.op, &self.nodes[1 - m.req].reads) {
                (Op::Read, Some(r)) => {
                    let s = m.src_off as usize;
                    self.model.mr_bytes(r.src_id).get(s..s + m.size as usize).unwrap_or_default().to_vec()
                }
                _ => pattern::make(self.p.seed, pattern::stream(lane(m.pair, m.req) as u32, m.idx), m.size as usize),
            };
            if let Some(o) = data.windows(window.len()).position(|w| w == window) {
                return Some((m.id, o));
            }
        }
        None
    }

    fn describe_msg(&self, id: u64) -> String {
        let Some(m) = self.msg(id) else { return format!("message #{id} (of an earlier round)") };
        let round = if id >= self.round_base {
            "this round".to_string()
        } else {
            format!(
                "{} round(s) ago",
                self.history.iter().rev().position(|r| r.iter().any(|x| x.id == id)).map_or(0, |i| i + 1)
            )
        };
        let resp = 1 - m.req;
        let mtu = self.p.mtu.bytes();
        let last = if m.size == 0 { 0 } else { m.size - (m.size - 1) / mtu * mtu };
        let target = match m.op {
            Op::Write => {
                let off = m.remote_addr as i128 - self.nodes[resp].dsts[m.dst].0.addr() as i128;
                format!(
                    "remote addr {:#x} rkey {:#x} = NIC{resp} MR{} offset {off} (mod 64 = {})",
                    m.remote_addr,
                    m.rkey,
                    m.dst,
                    off.rem_euclid(64)
                )
            }
            Op::Send => format!(
                "receive buffer of {} B at NIC{resp} MR{} offset {} (mod 64 = {})",
                m.recv_len,
                m.dst,
                m.dst_off,
                m.dst_off % 64
            ),
            Op::Read => {
                let (src, dst) = match (&self.nodes[resp].reads, &self.nodes[m.req].reads) {
                    (Some(s), Some(d)) => (s.src.addr(), d.dst.addr()),
                    _ => (0, 0),
                };
                let off = m.remote_addr as i128 - src as i128;
                format!(
                    "remote addr {:#x} rkey {:#x} = NIC{resp} READ source offset {off} (mod 64 = {}), into NIC{} READ destination offset {} (addr {:#x}, mod 64 = {})",
                    m.remote_addr,
                    m.rkey,
                    off.rem_euclid(64),
                    m.req,
                    m.dst_off,
                    dst + m.dst_off,
                    m.dst_off % 64
                )
            }
        };
        format!(
            "message #{} ({round}) {:?}{} of {} B (mod 64 = {}, {} packet(s), last carries {} B), NIC{} QP {} -> NIC{} QP {} (pair {}, message {} of that QP); source offset {} (mod 64 = {}); {}",
            m.id,
            m.op,
            match (m.imm, m.kind) {
                (Some(i), Kind::Legal) => format!(" with immediate {i:#010x}"),
                (Some(i), k) => format!(" with immediate {i:#010x} [{k:?}]"),
                (None, Kind::Legal) => String::new(),
                (None, k) => format!(" [{k:?}]"),
            },
            m.size,
            m.size % 64,
            m.size.div_ceil(mtu).max(1),
            last,
            m.req,
            self.pairs[m.pair].qp[m.req].qp_num(),
            resp,
            self.pairs[m.pair].qp[resp].qp_num(),
            m.pair,
            m.idx,
            m.src_off,
            m.src_off % 64,
            target
        )
    }

    // ------------------------------------------------------------ stimulus

    fn next_size(&mut self) -> u32 {
        if self.residues.is_empty() {
            self.residues = (0..64).collect();
            self.rng.shuffle(&mut self.residues);
        }
        let mut r = self.residues.pop().unwrap() as u64;
        if self.p.avoid_known && (58..=60).contains(&r) {
            r -= 3;
        }
        if r == 0 && !self.zero_done {
            // One zero-length message per world.
            self.zero_done = true;
            return 0;
        }
        size_of_residue(&mut self.rng, r, self.p.mtu.bytes() as u64, self.p.large_permille)
    }

    /// The next READ's size, as [`World::next_size`]'s (no zero-length one
    /// set apart), from the READ generator and a cycle of residues of its own.
    fn next_read_size(&mut self) -> u32 {
        if self.read_residues.is_empty() {
            self.read_residues = (0..64).collect();
            self.read_rng.shuffle(&mut self.read_residues);
        }
        let mut r = self.read_residues.pop().unwrap() as u64;
        if self.p.avoid_known && (58..=60).contains(&r) {
            r -= 3;
        }
        size_of_residue(&mut self.read_rng, r, self.p.mtu.bytes() as u64, self.p.large_permille)
    }

    /// A random gap that leaves at least one byte of guard most of the time and covers every alignment.
    fn gap(&mut self) -> u64 {
        self.rng.below(192)
    }

    /// Builds the next round's messages and writes their source data.
    fn gen_round(&mut self) {
        self.round_base = self.next_id;
        let done = std::mem::take(&mut self.msgs);
        if !done.is_empty() {
            self.history.push_back(done);
            if self.history.len() > 4 {
                self.history.pop_front();
            }
        }
        let quota = self.rng.range(1, self.p.round_max);
        let mut src_cur = [0u64; 2];
        let mut dst_cur = [[0u64; 3]; 2];
        let live: Vec<usize> = (0..self.pairs.len()).filter(|&i| !self.pairs[i].dead).collect();
        if live.is_empty() {
            return;
        }
        // Pairs that failed this round get no more messages after their doomed ones.
        let mut failed_now: Vec<usize> = Vec::new();
        let mut read_cur = [0u64; 2];
        while (self.msgs.len() as u64) < quota && self.stats.msgs + (self.msgs.len() as u64) < self.p.msgs {
            if self.carry.is_none()
                && self.read_rng.pct(self.p.read_pct)
                && self.gen_read(&live, &mut failed_now, &mut read_cur, &mut src_cur, &mut dst_cur)
            {
                continue;
            }
            let (pair, req, op, size) = match self.carry.take() {
                Some(c) if !self.pairs[c.0].dead => c,
                _ => {
                    let pair = self.rng.pick(&live);
                    if failed_now.contains(&pair) {
                        continue;
                    }
                    let req = if self.p.bidir { self.rng.below(2) as usize } else { 0 };
                    let op = if self.rng.pct(self.p.send_pct) { Op::Send } else { Op::Write };
                    (pair, req, op, self.next_size())
                }
            };
            let resp = 1 - req;
            // Error injection: rare, only with errors on, never on the last live pair.
            let mut kind = Kind::Legal;
            if self.p.errors && size >= 2 && live.len() - failed_now.len() > 1 && self.rng.pct(4) {
                kind = if op == Op::Send {
                    Kind::Oversize
                } else {
                    self.rng.pick(&[Kind::BadKey, Kind::PastEnd, Kind::NoRemoteWrite])
                };
                if kind == Kind::PastEnd && self.p.avoid_known && size > self.p.mtu.bytes() {
                    // Known defect: a multi-packet WRITE past the region's end has its first packets placed.
                    kind = Kind::BadKey;
                }
            }
            // Source.
            let src_len = self.nodes[req].src.len() as u64;
            let src_off = src_cur[req] + self.gap();
            if src_off + size as u64 > src_len {
                self.carry = Some((pair, req, op, size));
                break;
            }
            // Destination: a region that can take it (WRITE needs REMOTE_WRITE).
            let mtu = self.p.mtu.bytes() as u64;
            let recv_len = match (op, kind) {
                (Op::Send, Kind::Oversize) => size - 1 - self.rng.below((size - 1).min(200) as u64) as u32,
                (Op::Send, _) => {
                    let slack = match self.rng.below(4) {
                        0 => 0,
                        1 | 2 => self.rng.range(1, 64),
                        _ => self.rng.range(65, 2 * mtu),
                    };
                    size + slack as u32
                }
                _ => size,
            };
            let mut cands: Vec<usize> = match kind {
                Kind::NoRemoteWrite => vec![2],
                _ if op == Op::Write => vec![0, 1],
                _ => vec![0, 1, 2],
            };
            self.rng.shuffle(&mut cands);
            let mut placed = None;
            for d in cands {
                let off = dst_cur[resp][d] + self.gap();
                if off + recv_len as u64 <= self.nodes[resp].dsts[d].0.len() as u64 {
                    placed = Some((d, off));
                    break;
                }
            }
            let Some((dst, dst_off)) = placed else {
                self.carry = Some((pair, req, op, size));
                break;
            };
            src_cur[req] = src_off + size as u64;
            dst_cur[resp][dst] = dst_off + recv_len as u64;
            let (mr, _, _) = &self.nodes[resp].dsts[dst];
            let (mut remote_addr, mut rkey) = (mr.addr() + dst_off, mr.rkey());
            match kind {
                Kind::BadKey if self.next_id.is_multiple_of(2) => rkey = mr.lkey(),
                Kind::BadKey => rkey ^= 0x40,
                Kind::PastEnd => remote_addr = mr.addr() + mr.len() as u64 - size as u64 + 1,
                _ => {}
            }
            let l = lane(pair, req);
            let idx = self.lane_count[l];
            self.lane_count[l] += 1;
            let id = self.next_id;
            self.next_id += 1;
            let data = pattern::make(self.p.seed, pattern::stream(l as u32, idx), size as usize);
            let node = &self.nodes[req];
            node.src.write(src_off, &data).unwrap();
            self.model.cpu_write(node.src_id, src_off, &data);
            // Immediate data on a quarter of the SENDs and of the legal WRITEs.
            let imm = ((op == Op::Send || kind == Kind::Legal) && self.rng.pct(25)).then(|| self.rng.next() as u32);
            self.msgs.push(Msg {
                id,
                pair,
                req,
                idx,
                op,
                kind,
                size,
                src_off,
                dst,
                dst_off,
                recv_len,
                remote_addr,
                rkey,
                imm,
            });
            if kind != Kind::Legal {
                self.stats.errors_injected += 1;
                // Its residue goes back to the cycle: every residue is covered by a message that moves bytes,
                // however the errors (and the completion timing the stimulus follows) fall.
                self.residues.push(size % 64);
                failed_now.push(pair);
                self.doom_behind(pair, req, &mut src_cur, &mut dst_cur);
            }
        }
    }

    /// One or two WRs behind a failing one on the same QP (lane `pair`,
    /// `req`): flushed, never executed (as many as the world still has
    /// messages for).
    fn doom_behind(&mut self, pair: usize, req: usize, src_cur: &mut [u64; 2], dst_cur: &mut [[u64; 3]; 2]) {
        let resp = 1 - req;
        let mtu = self.p.mtu.bytes() as u64;
        let src_len = self.nodes[req].src.len() as u64;
        let l = lane(pair, req);
        let room = self.p.msgs - self.stats.msgs - self.msgs.len() as u64;
        for _ in 0..self.rng.range(0, 2).min(room) {
            let size = self.rng.range(1, 3 * mtu) as u32;
            let src_off = src_cur[req] + self.gap();
            let d = self.rng.below(2) as usize;
            let dst_off = dst_cur[resp][d] + self.gap();
            if src_off + size as u64 > src_len || dst_off + size as u64 > self.nodes[resp].dsts[d].0.len() as u64 {
                break;
            }
            src_cur[req] = src_off + size as u64;
            dst_cur[resp][d] = dst_off + size as u64;
            let idx = self.lane_count[l];
            self.lane_count[l] += 1;
            let id = self.next_id;
            self.next_id += 1;
            let data = pattern::make(self.p.seed, pattern::stream(l as u32, idx), size as usize);
            let node = &self.nodes[req];
            node.src.write(src_off, &data).unwrap();
            self.model.cpu_write(node.src_id, src_off, &data);
            let mr = &self.nodes[resp].dsts[d].0;
            let op = if self.rng.pct(50) { Op::Write } else { Op::Send };
            self.msgs.push(Msg {
                id,
                pair,
                req,
                idx,
                op,
                kind: Kind::Doomed,
                size,
                src_off,
                dst: d,
                dst_off,
                recv_len: 0,
                remote_addr: mr.addr() + dst_off,
                rkey: mr.rkey(),
                imm: None,
            });
        }
    }

    /// Adds a READ to the round, everything about it drawn from the READ
    /// generator: from a random offset of the responder's READ source
    /// (with errors on, now and then a failing one) into the next free
    /// bytes of the requester's READ destination. False if none fits.
    fn gen_read(
        &mut self,
        live: &[usize],
        failed_now: &mut Vec<usize>,
        read_cur: &mut [u64; 2],
        src_cur: &mut [u64; 2],
        dst_cur: &mut [[u64; 3]; 2],
    ) -> bool {
        let pair = self.read_rng.pick(live);
        if failed_now.contains(&pair) {
            return false;
        }
        let req = if self.p.bidir { self.read_rng.below(2) as usize } else { 0 };
        let resp = 1 - req;
        let size = self.next_read_size();
        let mut kind = Kind::Legal;
        if self.p.errors && size >= 2 && live.len() - failed_now.len() > 1 && self.read_rng.pct(4) {
            kind = self.read_rng.pick(&[Kind::BadKey, Kind::PastEnd, Kind::NoRemoteRead]);
        }
        let (Some(src), Some(dst)) = (&self.nodes[resp].reads, &self.nodes[req].reads) else {
            return false;
        };
        let (src_addr, src_len, src_key) = (src.src.addr(), src.src.len() as u64, src.src.rkey());
        let dst_len = dst.dst.len() as u64;
        let dst_off = read_cur[req] + self.read_rng.below(192);
        if dst_off + size as u64 > dst_len {
            return false;
        }
        let src_off = self.read_rng.below(src_len - size as u64 + 1);
        let (remote_addr, rkey) = match kind {
            Kind::BadKey => (src_addr + src_off, src_key ^ 0x40),
            Kind::PastEnd => (src_addr + src_len - size as u64 + 1, src_key),
            Kind::NoRemoteRead => {
                // A WRITE destination: REMOTE_WRITE without REMOTE_READ.
                let other = &self.nodes[resp].dsts[0].0;
                (other.addr() + self.read_rng.below(other.len() as u64 - size as u64 + 1), other.rkey())
            }
            _ => (src_addr + src_off, src_key),
        };
        read_cur[req] = dst_off + size as u64;
        let l = lane(pair, req);
        let idx = self.lane_count[l];
        self.lane_count[l] += 1;
        let id = self.next_id;
        self.next_id += 1;
        self.msgs.push(Msg {
            id,
            pair,
            req,
            idx,
            op: Op::Read,
            kind,
            size,
            src_off,
            dst: 0,
            dst_off,
            recv_len: 0,
            remote_addr,
            rkey,
            imm: None,
        });
        if kind != Kind::Legal {
            self.stats.errors_injected += 1;
            self.read_residues.push(size % 64);
            failed_now.push(pair);
            self.doom_behind(pair, req, src_cur, dst_cur);
        }
        true
    }

    // ------------------------------------------------------------ running

    /// Polls every CQ of both NICs and checks each completion.
    fn poll(&mut self) {
        for nic in 0..2 {
            for c in 0..self.nodes[nic].cqs.len() {
                loop {
                    let wcs = self.nodes[nic].cqs[c]
                        .poll_cq_vec(64)
                        .unwrap_or_else(|e| self.fail(format!("poll_cq on NIC{nic}: {e}")));
                    if wcs.is_empty() {
                        break;
                    }
                    for wc in &wcs {
                        match self.model.on_completion(nic, wc) {
                            Ok(m) => self.on_match(nic, m),
                            Err(e) => {
                                let about = e.expected.map(|x| self.describe_msg(x.tag)).unwrap_or_default();
                                let got = if wc.wr_id < self.next_id {
                                    format!("\nthe completion's wr_id names {}", self.describe_msg(wc.wr_id))
                                } else {
                                    String::new()
                                };
                                self.fail(format!(
                                    "completion mismatch: {e}\nexpected completion belongs to {about}{got}"
                                ));
                            }
                        }
                    }
                    self.stats.completions += wcs.len() as u64;
                    self.last_progress = self.now();
                }
            }
        }
    }

    /// A completion matched the model: checks the data it vouches for.
    fn on_match(&mut self, _nic: usize, m: Matched) {
        if m.expected.status != WcStatus::Success {
            return;
        }
        let Some(msg) = self.msg(m.tag).cloned() else { return };
        let check =
            matches!((msg.op, m.queue), (Op::Write, Queue::Send) | (Op::Send, Queue::Recv) | (Op::Read, Queue::Send));
        if !check || msg.size == 0 {
            return;
        }
        // A READ's data lands at the requester, the others' at the responder.
        let (mr, id, region) = match (msg.op, &self.nodes[msg.req].reads) {
            (Op::Read, Some(r)) => (&r.dst, r.dst_id, format!("NIC{} READ destination", msg.req)),
            _ => {
                let resp = 1 - msg.req;
                let (mr, id, _) = &self.nodes[resp].dsts[msg.dst];
                (mr, *id, format!("NIC{resp} MR{}", msg.dst))
            }
        };
        let (s, e) = (msg.dst_off as usize, msg.dst_off as usize + msg.size as usize);
        let mut got = vec![0u8; msg.size as usize];
        mr.read(msg.dst_off, &mut got).unwrap();
        let want = &self.model.mr_bytes(id)[s..e];
        if got[..] != *want {
            let o = got.iter().zip(want).position(|(a, b)| a != b).unwrap();
            let (g, w) = (got[o], want[o]);
            let n = got.iter().zip(want).filter(|(a, b)| a != b).count();
            // Wait, then look again: wrong data, or data that lands after the completion?
            self.run(20_000);
            mr.read(msg.dst_off, &mut got).unwrap();
            let want = &self.model.mr_bytes(id)[s..e];
            let late = got[..] == *want;
            self.fail(format!(
                "data mismatch at the completion of {}:\nfirst differing byte at offset {o} of the message ({region} offset {}): got {g:#04x}, expected {w:#04x}; {n} of {} bytes differ{}",
                self.describe_msg(msg.id),
                s + o,
                msg.size,
                if late { "; 20000 cycles later the data is right: it landed AFTER the completion was visible" } else { "" }
            ));
        }
        self.stats.verified += msg.size as u64;
    }

    /// Posts up to a random number of this lane's receives (those of its next SENDs).
    fn post_recvs(&mut self, pair: usize, nic: usize, recvq: &mut VecDeque<usize>, n: usize) {
        let mut left = n.min(recvq.len());
        while left > 0 {
            let chunk = self.rng.range(1, left as u64) as usize;
            let mut sges = Vec::with_capacity(chunk);
            for _ in 0..chunk {
                let i = recvq.pop_front().unwrap();
                let m = &self.msgs[i];
                let node = &self.nodes[nic];
                let (mr, id, _) = &node.dsts[m.dst];
                let len = if m.op == Op::Send { m.recv_len } else { 0 };
                // Two in five SEND receives as a scatter list: the buffer cut at random points
                // into 2..=MAX_RECV_SGE entries (some empty), posted in shuffled order.
                let list = (m.op == Op::Send && self.list_rng.pct(40)).then(|| {
                    let k = self.list_rng.range(2, MAX_RECV_SGE as u64) as usize;
                    let mut cuts: Vec<u32> = (1..k).map(|_| self.list_rng.range(0, len as u64) as u32).collect();
                    cuts.push(0);
                    cuts.push(len);
                    cuts.sort_unstable();
                    let mut pieces: Vec<(u32, u32)> = cuts.windows(2).map(|c| (c[0], c[1] - c[0])).collect();
                    self.list_rng.shuffle(&mut pieces);
                    let mut l = [(0u32, 0u32); MAX_RECV_SGE];
                    l[..k].copy_from_slice(&pieces);
                    l
                });
                self.model.post_recv(
                    self.pairs[pair].id[nic],
                    RecvOp { wr_id: m.id, mr: *id, offset: m.dst_off, len, tag: m.id, list },
                );
                let sg = match list {
                    None => vec![mr.sge(m.dst_off, len)],
                    Some(l) => l.iter().map(|&(o, n)| mr.sge(m.dst_off + o as u64, n)).collect(),
                };
                self.stats.recv_lists += list.is_some() as u64;
                sges.push((m.id, sg));
            }
            let wrs: Vec<RecvWr> = sges.iter().map(|(id, sg)| RecvWr { wr_id: *id, sg_list: sg }).collect();
            if let Err(e) = self.pairs[pair].qp[nic].post_recv_batch(&wrs) {
                self.fail(format!(
                    "post_recv_batch of {} on NIC{nic} QP {}: {e}",
                    wrs.len(),
                    self.pairs[pair].qp[nic].qp_num()
                ));
            }
            left -= chunk;
        }
    }

    /// Posts a batch of sends on lane (pair, req); false if nothing could be posted.
    fn post_sends(
        &mut self,
        pair: usize,
        req: usize,
        sendq: &mut VecDeque<usize>,
        recvq: &mut VecDeque<usize>,
    ) -> bool {
        let resp = 1 - req;
        let qp = &self.pairs[pair].qp[req];
        let peer = &self.pairs[pair].qp[resp];
        let free = (qp.max_send_wr() - qp.send_outstanding()) as usize;
        let want = match self.rng.below(10) {
            0..=4 => 1,
            5..=7 => self.rng.range(2, 8),
            _ => self.rng.range(9, 64),
        } as usize;
        let mut n = want.min(free).min(sendq.len());
        // Every SEND of the batch needs its receive posted first.
        let rfree = (peer.max_recv_wr() - peer.recv_outstanding()) as usize;
        let posted_ahead = |q: &VecDeque<usize>, upto: usize, msgs: &[Msg]| {
            sendq.iter().take(upto).filter(|&&i| msgs[i].consumes_recv() && q.contains(&i)).count()
        };
        while n > 0 && posted_ahead(recvq, n, &self.msgs) > rfree {
            n -= 1;
        }
        if n == 0 {
            return false;
        }
        let need = posted_ahead(recvq, n, &self.msgs);
        // The needed receives, and sometimes more for later SENDs.
        let extra = if self.rng.pct(30) { self.rng.below((rfree - need) as u64 + 1) as usize } else { 0 };
        if need + extra > 0 {
            // Receives of this lane are posted in message order, so the needed ones are the first in recvq.
            self.post_recvs(pair, resp, recvq, need + extra);
        }
        let mut wrs = Vec::with_capacity(n);
        let node = &self.nodes[req];
        for _ in 0..n {
            let i = sendq.pop_front().unwrap();
            let m = &self.msgs[i];
            let (verb, opcode) = match (m.op, m.imm) {
                (Op::Write, None) => (
                    Verb::Write { remote_addr: m.remote_addr, rkey: m.rkey },
                    WrOpcode::RdmaWrite { remote_addr: m.remote_addr, rkey: m.rkey },
                ),
                (Op::Write, Some(imm)) => (
                    Verb::WriteImm { remote_addr: m.remote_addr, rkey: m.rkey, imm },
                    WrOpcode::RdmaWriteWithImm { remote_addr: m.remote_addr, rkey: m.rkey, imm },
                ),
                (Op::Send, None) => (Verb::Send, WrOpcode::Send),
                (Op::Send, Some(imm)) => (Verb::SendImm { imm }, WrOpcode::SendWithImm { imm }),
                (Op::Read, _) => (
                    Verb::Read { remote_addr: m.remote_addr, rkey: m.rkey },
                    WrOpcode::RdmaRead { remote_addr: m.remote_addr, rkey: m.rkey },
                ),
            };
            // The local buffer: a READ's destination, the others' source.
            let (local, local_id, local_off) = match (m.op, &node.reads) {
                (Op::Read, Some(r)) => (&r.dst, r.dst_id, m.dst_off),
                _ => (&node.src, node.src_id, m.src_off),
            };
            let st = self.model.post_send(
                self.pairs[pair].id[req],
                SendOp { wr_id: m.id, verb, mr: local_id, offset: local_off, len: m.size, tag: m.id },
            );
            let expect_ok = m.kind == Kind::Legal;
            if (st == WcStatus::Success) != expect_ok {
                panic!("harness error: the model predicts {st:?} for {}", self.describe_msg(m.id));
            }
            let mut send_flags = rnic::SendFlags::SIGNALED;
            // Inline only where the post would be taken as a whole: the copy bypasses the local MR.
            if expect_ok
                && m.op != Op::Read
                && (1..=self.pairs[pair].inline[req]).contains(&m.size)
                && self.inline_rng.pct(50)
            {
                send_flags |= rnic::SendFlags::INLINE;
            }
            // Two in five legal WRITEs and SENDs gather their source from two entries: the range cut
            // at a random byte (the same bytes, so the model is unchanged; the NIC joins two reads).
            let mut sg_list = local.sge(local_off, m.size).into();
            if expect_ok && m.op != Op::Read && m.size >= 2 && self.gather_rng.pct(40) {
                let cut = self.gather_rng.range(1, m.size as u64 - 1) as u32;
                sg_list = [local.sge(local_off, cut), local.sge(local_off + cut as u64, m.size - cut)].into();
                self.stats.send_lists += 1;
            }
            wrs.push(SendWr { send_flags, wr_id: m.id, opcode, sg_list });
        }
        if let Err(e) = self.pairs[pair].qp[req].post_send_batch(&wrs) {
            self.fail(format!(
                "post_send_batch of {} on NIC{req} QP {}: {e}",
                wrs.len(),
                self.pairs[pair].qp[req].qp_num()
            ));
        }
        true
    }

    /// Posts a batch on requester lane `l` (with the receives its SENDs need).
    fn post_lane(&mut self, l: usize, sendq: &mut [VecDeque<usize>], recvq: &mut [VecDeque<usize>]) -> bool {
        let (pair, req) = (l / 2, l % 2);
        let r = lane(pair, 1 - req);
        let mut sq = std::mem::take(&mut sendq[l]);
        let mut rq = std::mem::take(&mut recvq[r]);
        let posted = self.post_sends(pair, req, &mut sq, &mut rq);
        sendq[l] = sq;
        recvq[r] = rq;
        posted
    }

    /// Cycles without any completion after which the run counts as stalled.
    fn stall_limit(&self) -> u64 {
        let biggest = self.msgs.iter().map(|m| m.size as u64).max().unwrap_or(0);
        400_000 + biggest / 2
    }

    fn check_stall(&self) {
        if self.model.pending() == 0 {
            return;
        }
        let idle = self.now() - self.last_progress;
        if idle <= self.stall_limit() {
            return;
        }
        let mut s = format!(
            "stall: no completion for {idle} cycles, {} completions outstanding. Waiting for:\n",
            self.model.pending()
        );
        let waiting = self.model.waiting();
        for (qp, queue, e) in waiting.iter().take(24) {
            let (nic, qpn) = self.model.qp_addr(*qp);
            s += &format!("  NIC{nic} QP {qpn} {queue:?} queue: {e}\n      = {}\n", self.describe_msg(e.tag));
        }
        if waiting.len() > 24 {
            s += &format!("  ... and {} more queues\n", waiting.len() - 24);
        }
        let stuck: std::collections::BTreeSet<u32> =
            waiting.iter().map(|(qp, _, _)| self.model.qp_addr(*qp).1).collect();
        s += &format!("{} queues of {} QPs stuck\n", waiting.len(), stuck.len());
        for n in 0..2 {
            s += &format!("NIC{n} counters: {}\n", self.nodes[n].ctx.counters_line());
        }
        self.fail(s)
    }

    /// One round: post everything with random batching and gaps, wait for every completion,
    /// let the NICs go quiet, then compare all memory.
    fn run_round(&mut self) {
        self.gen_round();
        if self.msgs.is_empty() {
            return;
        }
        let nl = self.pairs.len() * 2;
        let mut sendq: Vec<VecDeque<usize>> = vec![VecDeque::new(); nl];
        let mut recvq: Vec<VecDeque<usize>> = vec![VecDeque::new(); nl];
        for (i, m) in self.msgs.iter().enumerate() {
            sendq[lane(m.pair, m.req)].push_back(i);
            if m.consumes_recv() && m.kind != Kind::Doomed {
                recvq[lane(m.pair, 1 - m.req)].push_back(i);
            }
        }
        self.last_progress = self.now();
        loop {
            self.poll();
            let busy: Vec<usize> = (0..nl).filter(|&l| !sendq[l].is_empty()).collect();
            if busy.is_empty() && self.model.pending() == 0 {
                break;
            }
            self.check_stall();
            let mut posted = false;
            if !busy.is_empty() && self.rng.pct(4) {
                // A burst: many QPs ring their doorbells in the same cycle.
                let mut ls = busy.clone();
                self.rng.shuffle(&mut ls);
                let k = self.rng.range(1, ls.len() as u64) as usize;
                for &l in &ls[..k] {
                    posted |= self.post_lane(l, &mut sendq, &mut recvq);
                }
            } else if !busy.is_empty() && self.rng.pct(65) {
                let l = self.rng.pick(&busy);
                posted = self.post_lane(l, &mut sendq, &mut recvq);
            } else if self.rng.pct(15) {
                // Receives ahead of their SENDs.
                let ready: Vec<usize> = (0..nl).filter(|&l| !recvq[l].is_empty()).collect();
                if !ready.is_empty() {
                    let l = self.rng.pick(&ready);
                    let (pair, nic) = (l / 2, l % 2);
                    let q = &self.pairs[pair].qp[nic];
                    let free = (q.max_recv_wr() - q.recv_outstanding()) as usize;
                    if free > 0 {
                        let n = self.rng.range(1, free as u64) as usize;
                        let mut rq = std::mem::take(&mut recvq[l]);
                        self.post_recvs(pair, nic, &mut rq, n);
                        recvq[l] = rq;
                        posted = true;
                    }
                }
            }
            // Doorbell timing: often back to back, sometimes a short or a long pause.
            let gap = match self.rng.below(100) {
                0..=39 if posted => 0,
                0..=49 => self.rng.range(1, 64),
                50..=89 => self.rng.range(65, 1000),
                _ => self.rng.range(1001, 5000),
            };
            if gap > 0 {
                self.run(gap);
            }
        }
        // Quiet period: nothing more may complete (the model rejects extra completions).
        let quiet = self.rng.range(300, 3000);
        for _ in 0..quiet / 100 {
            self.run(100);
            self.poll();
        }
        for m in &self.msgs {
            self.stats.msgs += 1;
            self.stats.payload += m.size as u64;
            match m.op {
                Op::Send => self.stats.sends += 1,
                Op::Write => self.stats.writes += 1,
                Op::Read => self.stats.reads += 1,
            }
            if m.kind == Kind::Legal {
                self.stats.residues |= 1u64 << (m.size % 64);
            }
            self.stats.largest = self.stats.largest.max(m.size);
            self.stats.zero += (m.size == 0) as u64;
            if m.kind != Kind::Legal && m.kind != Kind::Doomed {
                self.pairs[m.pair].dead = true;
            }
        }
        for p in self.pairs.iter().filter(|p| p.dead) {
            self.model.retire(p.id[0]);
            self.model.retire(p.id[1]);
        }
        self.verify_all();
        self.stats.rounds += 1;
        self.round += 1;
        // Next round: fresh sentinel in every destination region.
        self.model.new_epoch();
        for nic in 0..2 {
            for (i, (mr, id, _)) in self.nodes[nic].dsts.iter().enumerate() {
                let fill =
                    pattern::make(self.p.seed, SENTINEL - 100 - self.round * 16 - nic as u64 * 4 - i as u64, mr.len());
                mr.write(0, &fill).unwrap();
                self.model.cpu_write(*id, 0, &fill);
            }
            if let Some(r) = &self.nodes[nic].reads {
                let fill =
                    pattern::make(self.p.seed, SENTINEL - 100 - self.round * 16 - nic as u64 * 4 - 3, r.dst.len());
                r.dst.write(0, &fill).unwrap();
                self.model.cpu_write(r.dst_id, 0, &fill);
            }
        }
    }

    /// Compares every byte of every region of both NICs with the model.
    fn verify_all(&mut self) {
        for nic in 0..2 {
            let node = &self.nodes[nic];
            let mut regions: Vec<(&Mr, MrId, String)> =
                std::iter::once((&node.src, node.src_id, "source MR".to_string()))
                    .chain(node.dsts.iter().enumerate().map(|(i, (mr, id, _))| (mr, *id, format!("MR{i}"))))
                    .collect();
            if let Some(r) = &node.reads {
                regions.push((&r.src, r.src_id, "READ source".to_string()));
                regions.push((&r.dst, r.dst_id, "READ destination".to_string()));
            }
            for (mr, id, name) in regions {
                let mut got = vec![0u8; mr.len()];
                mr.read(0, &mut got).unwrap();
                if let Some(mm) = self.model.compare(id, &got) {
                    let found = got.get(mm.offset..mm.offset + 16).and_then(|w| self.whose_bytes(w));
                    let found = match found {
                        Some((mid, o)) => {
                            format!("  the bytes found there are bytes {o}.. of {}\n", self.describe_msg(mid))
                        }
                        None => "  the bytes found there are not from any message of the last rounds\n".into(),
                    };
                    self.fail(format!(
                        "memory mismatch in NIC{nic} {name} ({} B): {}{found}",
                        mr.len(),
                        self.explain(&mm)
                    ));
                }
                self.stats.verified += got.len() as u64;
            }
        }
    }

    fn explain(&self, mm: &MemMismatch) -> String {
        let mut s = format!(
            "first differing byte at offset {} (mod 64 = {}): got {:#04x}, expected {:#04x}; {} bytes differ\n",
            mm.offset,
            mm.offset % 64,
            mm.got,
            mm.want,
            mm.count
        );
        match mm.inside {
            Some((tag, start, _)) => s += &format!("  byte {} of {}\n", mm.offset - start, self.describe_msg(tag)),
            None => {
                s += "  outside every message placed this round (a guard / sentinel byte)\n";
                if let Some((tag, _, end)) = mm.before {
                    s += &format!("  {} bytes after the end of {}\n", mm.offset - end, self.describe_msg(tag));
                }
                if let Some((tag, start, _)) = mm.after {
                    s += &format!("  {} bytes before the start of {}\n", start - mm.offset, self.describe_msg(tag));
                }
            }
        }
        s
    }

    /// Runs the whole world; returns its counters.
    fn run_all(&mut self, mut progress: impl FnMut(&World)) -> Stats {
        while self.stats.msgs < self.p.msgs {
            let before = self.stats.msgs;
            self.run_round();
            progress(self);
            if self.stats.msgs == before {
                if self.pairs.iter().all(|p| p.dead) {
                    break;
                }
                panic!("harness error: a round without messages (carry {:?})", self.carry);
            }
        }
        // Final quiet period, then late optional completions are given up on.
        for _ in 0..50 {
            self.run(200);
            self.poll();
        }
        let missing = self.model.settle();
        if !missing.is_empty() {
            self.fail(format!(
                "{} completions never arrived, first: {} = {}",
                missing.len(),
                missing[0],
                self.describe_msg(missing[0].tag)
            ));
        }
        self.verify_all();
        let v = self.nics.violations();
        if !v.is_empty() {
            self.fail(format!("{} DMA shadow violations:\n{}", v.len(), v.join("\n")));
        }
        self.stats
    }
}

/// A message size of residue `r` mod 64 at path MTU `mtu`: large (up to
/// [`MAX_LARGE`]) `large_permille` times in a thousand, otherwise within the
/// first beats, around a packet boundary or below three packets.
fn size_of_residue(rng: &mut Rng, r: u64, mtu: u64, large_permille: u64) -> u32 {
    let size = if rng.below(1000) < large_permille {
        (64 * rng.below(MAX_LARGE / 64 + 1) + r).min(MAX_LARGE)
    } else {
        let k = match rng.below(10) {
            // Within the first beats.
            0 | 1 => rng.below(3),
            // Just below or above a packet boundary.
            2 => rng.range(1, 3) * (mtu / 64) - rng.below(2),
            _ => rng.below(3 * mtu / 64),
        };
        64 * k + r
    };
    size as u32
}

/// `n` distinct QPNs for one NIC.
fn choose_qpns(rng: &mut Rng, mode: Qpns, n: usize) -> Vec<u32> {
    let max = params::NUM_QPS as u32 - 1;
    match mode {
        Qpns::Low => (2..2 + n as u32).collect(),
        Qpns::All => (2..=max).collect(),
        Qpns::High => {
            let mut v = vec![max];
            let lo = (params::NUM_QPS as u32 / 2).min(max + 1 - n as u32);
            while v.len() < n {
                let q = rng.range(lo as u64, max as u64) as u32;
                if !v.contains(&q) {
                    v.push(q);
                }
            }
            rng.shuffle(&mut v);
            v
        }
    }
}

// ---------------------------------------------------------------- tests

/// Seeds of a test: its fixed ones, or `RNIC_RANDOM_SEED`.
fn seeds(fixed: &[u64]) -> Vec<u64> {
    match std::env::var("RNIC_RANDOM_SEED") {
        Ok(s) => vec![parse_u64(&s).unwrap_or_else(|| panic!("RNIC_RANDOM_SEED={s:?} is not a number"))],
        Err(_) => fixed.to_vec(),
    }
}

fn random_test(test: &'static str, fixed: &[u64], spec: Spec) {
    for seed in seeds(fixed) {
        let p = Params::new(test, seed, spec);
        let wall = Instant::now();
        let mut w = World::new(p.clone());
        eprintln!("{test}: seed {seed:#x}: {}", w.describe_world());
        let s = w.run_all(|_| {});
        rnic_tests::assert_no_violations(&w.nics);
        if p.shell {
            // A MAC's RX stream cannot wait: where the core's RX front end holds
            // it back (its buffer full), the shell's RX FIFO drops frames and the
            // transport recovers them, as on a board.
            let mut c = w.nics.cluster.lock();
            let drops: Vec<u64> = (0..c.len()).map(|i| c.nic(i).shell_errors()[2]).collect();
            eprintln!("{test}: seed {seed:#x}: frames the shells' RX FIFOs dropped, per NIC: {drops:?}");
            for (i, &d) in drops.iter().enumerate() {
                let counted = c.read_reg(i, rnic_spec::regs::counters::RX_MAC_DROP).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(
                    counted, d,
                    "{test}: seed {seed:#x}: NIC {i}'s RX_MAC_DROP counter against the shell's drop pulses"
                );
            }
        }
        let cycles = w.now();
        let sim = w.nics.stats().wall.as_secs_f64();
        eprintln!(
            "{test}: seed {seed:#x}: {} messages ({} SEND, {} WRITE, {} READ, {} failing on purpose, {} of 0 B, {} receives as scatter lists, {} sends gathered), {} payload bytes (largest {}), {} rounds, {} completions, {} bytes verified, {} cycles in {:.1} s ({sim:.1} s simulating)",
            s.msgs,
            s.sends,
            s.writes,
            s.reads,
            s.errors_injected,
            s.zero,
            s.recv_lists,
            s.send_lists,
            s.payload,
            s.largest,
            s.rounds,
            s.completions,
            s.verified,
            cycles,
            wall.elapsed().as_secs_f64()
        );
        assert_eq!(s.msgs, p.msgs, "every message of the world was run");
        if p.errors {
            assert!(s.errors_injected > 0, "errors were injected");
        }
        if p.read_pct > 0 {
            assert!(s.reads > 0, "READs were posted");
        }
        if s.sends >= 20 {
            assert!(s.recv_lists > 0, "receives were posted as scatter lists");
        }
        if s.sends + s.writes >= 20 {
            assert!(s.send_lists > 0, "sends were posted with gather lists");
        }
        if !p.avoid_known && s.msgs >= 64 {
            assert_eq!(s.residues, u64::MAX, "every size residue mod 64 was covered: {:#x}", s.residues);
        }
        if matches!(p.qpns, Qpns::High | Qpns::All) {
            let top = params::NUM_QPS as u32 - 1;
            assert!(w.qpns_used.iter().all(|v| v.contains(&top)), "QPN {top} used on both NICs");
        }
    }
}

#[test]
fn random_mtu256() {
    random_test(
        "random_mtu256",
        &[0x2560_0001, 0x2560_0002, 0x2560_0003],
        Spec { mtu: Some(Mtu::Mtu256), msgs: 250, ..Default::default() },
    );
}

#[test]
fn random_mtu512() {
    random_test(
        "random_mtu512",
        &[0x5120_0001, 0x5120_0002, 0x5120_0003],
        Spec { mtu: Some(Mtu::Mtu512), msgs: 250, ..Default::default() },
    );
}

#[test]
fn random_mtu1024() {
    random_test(
        "random_mtu1024",
        &[0x1024_0001, 0x1024_0002, 0x1024_0003],
        Spec { mtu: Some(Mtu::Mtu1024), msgs: 250, ..Default::default() },
    );
}

#[test]
fn random_mtu2048() {
    random_test(
        "random_mtu2048",
        &[0x2048_0001, 0x2048_0002, 0x2048_0003],
        Spec { mtu: Some(Mtu::Mtu2048), msgs: 250, ..Default::default() },
    );
}

#[test]
fn random_mtu4096() {
    random_test(
        "random_mtu4096",
        &[0x4096_0001, 0x4096_0002, 0x4096_0003],
        Spec { mtu: Some(Mtu::Mtu4096), msgs: 250, ..Default::default() },
    );
}

/// Traffic both ways on every pair: each NIC is requester and responder at once.
#[test]
fn random_bidir() {
    random_test(
        "random_bidir",
        &[0xB1D1_0001, 0xB1D1_0002],
        Spec { bidir: Some(true), pairs: Some(4), msgs: 300, ..Default::default() },
    );
}

/// A few pairs on the highest QPNs (255 included on both NICs).
#[test]
fn random_high_qpns() {
    random_test(
        "random_high_qpns",
        &[0x0FF0_0001, 0x0FF0_0002],
        Spec { qpns: Some(Qpns::High), pairs: Some(6), msgs: 300, ..Default::default() },
    );
}

/// Every QPN of both NICs (2..=255) in use, bursts of many doorbells at once.
#[test]
fn random_all_qps() {
    random_test(
        "random_all_qps",
        &[0xA110_0001, 0xA110_0002],
        Spec { qpns: Some(Qpns::All), msgs: 500, ..Default::default() },
    );
}

/// Many large messages (up to 1 MiB) between small ones.
#[test]
fn random_large() {
    random_test(
        "random_large",
        &[0x1A26_0001, 0x1A26_0002],
        Spec { large_permille: Some(200), msgs: 60, ..Default::default() },
    );
}

/// Legal traffic with failing operations mixed in: oversized SENDs and
/// WRITEs with a bad key, past the region's end or without REMOTE_WRITE.
/// Each failing pair must report the error and flush, the others go on.
#[test]
fn random_errors() {
    random_test(
        "random_errors",
        &[0xE220_0001, 0xE220_0002],
        Spec { pairs: Some(8), msgs: 200, errors: true, ..Default::default() },
    );
}

/// RDMA READs (15 % of the messages) among WRITEs and SENDs, MTU and QPNs
/// from the seed.
#[test]
fn random_reads() {
    random_test(
        "random_reads",
        &[0x4EAD_0001, 0x4EAD_0002, 0x4EAD_0003],
        Spec { read_pct: Some(15), msgs: 250, ..Default::default() },
    );
}

/// The board shell instead of the core alone: every register access, DMA
/// read and write through the UltraScale+ PCIe adapters and the PCIe
/// block's model (`rnic_sim::usp`), every frame through the MAC FIFOs;
/// WRITEs, SENDs and READs on QPNs from the seed. No completion may be
/// dropped and no BAR request refused; frames the RX FIFO drops (the core's
/// RX front end holds a MAC back when its buffer is full, which a real MAC
/// cannot be) are reported and recovered like losses.
#[test]
fn random_shell() {
    random_test(
        "random_shell",
        &[0x5E11_0001, 0x5E11_0002],
        Spec { read_pct: Some(15), msgs: 200, shell: true, ..Default::default() },
    );
}

/// READs at MTU 256: many response packets per READ.
#[test]
fn random_reads_mtu256() {
    random_test(
        "random_reads_mtu256",
        &[0x4EAD_2561, 0x4EAD_2562],
        Spec { mtu: Some(Mtu::Mtu256), read_pct: Some(20), msgs: 200, ..Default::default() },
    );
}

/// READs both ways on every pair: each NIC reads the other's memory while
/// answering its READs, with WRITEs and SENDs both ways.
#[test]
fn random_reads_bidir() {
    random_test(
        "random_reads_bidir",
        &[0x4EAD_B1D1, 0x4EAD_B1D2],
        Spec { bidir: Some(true), pairs: Some(4), read_pct: Some(20), msgs: 300, ..Default::default() },
    );
}

/// READs on the highest QPNs (255 included on both NICs).
#[test]
fn random_reads_high_qpns() {
    random_test(
        "random_reads_high_qpns",
        &[0x4EAD_0FF1, 0x4EAD_0FF2],
        Spec { qpns: Some(Qpns::High), pairs: Some(6), read_pct: Some(15), msgs: 300, ..Default::default() },
    );
}

/// Failing READs (bad key, past the source region's end, a region without
/// REMOTE_READ) among failing WRITEs and SENDs: each failing pair reports
/// the error and flushes, nothing lands, the others go on.
#[test]
fn random_reads_errors() {
    random_test(
        "random_reads_errors",
        &[0x4EAD_E221, 0x4EAD_E222],
        Spec { pairs: Some(8), read_pct: Some(20), msgs: 200, errors: true, ..Default::default() },
    );
}

/// READs under 1 % loss on both links: lost requests and responses are
/// recovered (resends from the lowest missing packet of a READ, rewinds,
/// timeouts), every byte still right.
#[test]
fn random_reads_loss_1pct() {
    random_test(
        "random_reads_loss_1pct",
        &[0x4EAD_1051, 0x4EAD_1052],
        Spec {
            pairs: Some(6),
            read_pct: Some(20),
            msgs: 200,
            faults: Some(Faults { loss: 0.01, ..Default::default() }),
            ..Default::default()
        },
    );
}

/// READs only on 16 QPs at 1 % loss, many of them long (up to 1 MiB): READs
/// in flight two per QP, resent from holes while the next is in flight,
/// their response jobs round robin at the responder. (At 2 % loss a READ
/// of 750 KiB of this seed outlasts the test's stall limit: READ responses
/// are placed in order only, so every hole costs a round trip, and a
/// timeout asks for the READ from its start.)
#[test]
fn random_reads_16qp_loss_1pct() {
    random_test(
        "random_reads_16qp_loss_1pct",
        &[0x4EAD_1601],
        Spec {
            pairs: Some(16),
            read_pct: Some(100),
            large_permille: Some(300),
            msgs: 240,
            faults: Some(Faults { loss: 0.01, ..Default::default() }),
            ..Default::default()
        },
    );
}

/// SENDs mostly, on 12 QPs with random QPNs in the upper half (so several
/// share an entry of the responder's out-of-order receive WQE cache, which
/// is indexed by QPN mod 16), 1 % loss and reordering: SEND packets placed
/// out of order in the receive WQEs their RSNs name, completions written as
/// ePSN passes them, every byte and completion checked.
#[test]
fn random_sends_high_qpns_loss_reorder() {
    random_test(
        "random_sends_high_qpns_loss_reorder",
        &[0x5E4D_0001],
        Spec {
            pairs: Some(12),
            qpns: Some(Qpns::High),
            send_pct: Some(80),
            msgs: 200,
            faults: Some(Faults { loss: 0.01, jitter_ns: 300, ..Default::default() }),
            ..Default::default()
        },
    );
}

/// Software recovery (the responders lend no on-chip window, so every QP's
/// out-of-order WRITE packets go through the host's bitmap): WRITEs and
/// SENDs on 8 QP pairs in both directions, 1 % loss and reordering.
#[test]
fn random_sw_recovery_loss_reorder() {
    random_test(
        "random_sw_recovery_loss_reorder",
        &[0x5B17_0001, 0x5B17_0002],
        Spec {
            pairs: Some(8),
            bidir: Some(true),
            send_pct: Some(20),
            msgs: 200,
            faults: Some(Faults { loss: 0.01, jitter_ns: 300, ..Default::default() }),
            sr_windows: Some(0),
            ..Default::default()
        },
    );
}

/// Two windows for 12 QP pairs at 3 % loss: QPs move between on-chip
/// windows and software recovery as windows come and go, on high QPNs.
#[test]
fn random_sw_recovery_two_windows_loss_3pct() {
    random_test(
        "random_sw_recovery_two_windows_loss_3pct",
        &[0x5B17_1001],
        Spec {
            pairs: Some(12),
            qpns: Some(Qpns::High),
            send_pct: Some(20),
            msgs: 200,
            faults: Some(Faults { loss: 0.03, ..Default::default() }),
            sr_windows: Some(2),
            ..Default::default()
        },
    );
}

/// Random loss on both links (data and ACKs): every byte still right, no hang.
fn lossy(test: &'static str, seeds: &[u64], loss: f64, msgs: u64) {
    random_test(
        test,
        seeds,
        Spec { pairs: Some(6), msgs, faults: Some(Faults { loss, ..Default::default() }), ..Default::default() },
    );
}

#[test]
fn random_loss_0_1pct() {
    lossy("random_loss_0_1pct", &[0x1055_0001, 0x1055_0002], 0.001, 200);
}

#[test]
fn random_loss_1pct() {
    lossy("random_loss_1pct", &[0x1055_1001, 0x1055_1002], 0.01, 200);
}

#[test]
fn random_loss_5pct() {
    lossy("random_loss_5pct", &[0x1055_5001, 0x1055_5002], 0.05, 150);
}

/// Failing operations (bad keys, bounds, oversized SENDs) under 1 % loss:
/// a lost NAK or RNR NAK is found by the timeout, the request resent and
/// refused again, and the error completes as without loss.
#[test]
fn random_errors_lossy() {
    random_test(
        "random_errors_lossy",
        &[0xE220_1001],
        Spec {
            pairs: Some(8),
            msgs: 200,
            errors: true,
            faults: Some(Faults { loss: 0.01, ..Default::default() }),
            ..Default::default()
        },
    );
}

/// Reordering, duplication and 1 % loss on both links, many QPs, both
/// directions. The jitter (up to 500 ns, one or two 4 KiB packets) is what
/// go-back-N recovery lives with: every overtaken packet costs a rewind.
/// Reordering across a BDP (2 us and more, as sprayed paths give) needs the
/// selective repeat that is not built yet; at MTU 256 and 2 us a 400 KB
/// SEND does not finish in 600,000 cycles.
#[test]
fn random_reorder_dup_loss() {
    random_test(
        "random_reorder_dup_loss",
        &[0x2E02_0001, 0x2E02_0002],
        Spec {
            mtu: Some(Mtu::Mtu4096),
            pairs: Some(24),
            qpns: Some(Qpns::High),
            bidir: Some(true),
            msgs: 200,
            faults: Some(Faults { loss: 0.01, dup: 0.01, jitter_ns: 500 }),
            ..Default::default()
        },
    );
}

/// `RNIC_SOAK_MSGS=N`: N random messages over as many worlds as needed
/// (a new cluster every 10000 messages), progress on stderr. Starts at
/// `RNIC_RANDOM_SEED` (default 0x50AC_0000_0001); world i uses seed + i.
#[test]
fn soak() {
    let Some(total) = std::env::var("RNIC_SOAK_MSGS").ok().and_then(|s| parse_u64(&s)) else {
        eprintln!("soak: set RNIC_SOAK_MSGS=N to run N random messages");
        return;
    };
    const PER_WORLD: u64 = 10_000;
    let base = std::env::var("RNIC_RANDOM_SEED").ok().and_then(|s| parse_u64(&s)).unwrap_or(0x50AC_0000_0001);
    let start = Instant::now();
    let (mut done, mut payload, mut verified) = (0u64, 0u64, 0u64);
    let mut last_line = Instant::now();
    let mut world = 0u64;
    while done < total {
        let seed = base + world;
        let p = Params::soak(seed, PER_WORLD.min(total - done).max(1));
        let mut w = World::new(p);
        eprintln!("soak: world {world} seed {seed:#x}: {}", w.describe_world());
        let s = w.run_all(|w| {
            if last_line.elapsed().as_secs() >= 30 {
                last_line = Instant::now();
                eprintln!(
                    "soak: {}/{total} messages, {} payload bytes, {} bytes verified; world {world} seed {seed:#x} at {} messages; {:.0} s",
                    done + w.stats.msgs,
                    payload + w.stats.payload,
                    verified + w.stats.verified,
                    w.stats.msgs,
                    start.elapsed().as_secs_f64()
                );
            }
        });
        done += s.msgs;
        payload += s.payload;
        verified += s.verified;
        world += 1;
        eprintln!(
            "soak: {done}/{total} messages, {payload} payload bytes, {verified} bytes verified; world {} seed {seed:#x} passed; {:.0} s",
            world - 1,
            start.elapsed().as_secs_f64()
        );
    }
}
