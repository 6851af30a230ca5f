//! Helpers of the end-to-end tests (tests/tests/*.rs): a connected pair of
//! cosimulated NICs, transfers whose every byte is checked (payload against
//! a seeded pattern, and the bytes around it against a sentinel), and the
//! DMA shadow check.
#![deny(missing_docs)]

use rnic::{
    AccessFlags, Context, Cq, Mr, Mtu, Pd, Qp, QpAttr, QpInitAttr, RecvWr, SendWr, WcOpcode, WcStatus, WorkCompletion,
    WrOpcode,
};
use rnic_sim::SimConfig;
use rnic_tools::bench::{connect, initial_psn};
use rnic_tools::pattern;

pub use rnic_tools::cosim::Nics;
pub mod golden;

/// Seed of every pattern in the tests (printed with any mismatch).
pub const SEED: u64 = 0x7E57_0001;
/// Stream of the sentinel that fills destination memory before a test.
pub const SENTINEL: u64 = u64::MAX;

/// Two cosimulated NICs with the default configuration.
pub fn pair() -> Nics {
    pair_with(SimConfig::default())
}

/// Two cosimulated NICs with `cfg`. With `RUST_LOG` set, the host
/// library's logs go to stderr (`--nocapture` shows them).
pub fn pair_with(cfg: SimConfig) -> Nics {
    if std::env::var_os("RUST_LOG").is_some() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_test_writer()
            .try_init();
    }
    Nics::new(2, cfg).unwrap_or_else(|e| panic!("{e}"))
}

/// Fails the test if the DMA shadow recorded any violation.
pub fn assert_no_violations(nics: &Nics) {
    let v = nics.violations();
    assert!(v.is_empty(), "{} DMA shadow violations:\n{}", v.len(), v.join("\n"));
    let underruns = nics.cluster.lock().fabric().tx_underruns();
    assert_eq!(underruns, 0, "TX beats that came after the MAC had run dry mid-frame (a real MAC aborts the frame)");
    let c = nics.cluster.lock();
    for i in 0..c.len() {
        let [cpl_err, bad_req, _] = c.nic(i).shell_errors();
        assert_eq!(
            (cpl_err, bad_req),
            (0, 0),
            "NIC {i}'s board shell dropped PCIe completions or refused BAR requests"
        );
    }
}

/// Device cycles to wait for `bytes` of traffic: about 6x the time at line
/// rate (~50 B/cycle) plus 800 us for setup and PCIe round trips.
pub fn timeout_for(bytes: u64) -> u64 {
    200_000 + bytes / 8
}

/// Which operation a transfer uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// RDMA WRITE.
    Write,
    /// SEND.
    Send,
    /// RDMA READ: NIC0 (the requester) reads NIC1's memory into its own.
    Read,
}

/// PDs, CQs and `n` connected QP pairs: side A on NIC0 (requester), side B on NIC1.
pub struct World {
    /// NIC0's context.
    pub ctx_a: Context,
    /// NIC1's context.
    pub ctx_b: Context,
    /// NIC0's PD.
    pub pd_a: Pd,
    /// NIC1's PD.
    pub pd_b: Pd,
    /// NIC0's CQ (all its QPs, send and receive).
    pub cq_a: Cq,
    /// NIC1's CQ.
    pub cq_b: Cq,
    /// `(a, b)` QP pairs, connected.
    pub conns: Vec<(Qp, Qp)>,
}

impl World {
    /// `n` QP pairs, each side allowing `depth` send and `depth` receive WRs.
    pub fn new(nics: &Nics, n: u32, depth: u32, mtu: Mtu) -> World {
        World::with_selective_repeat(nics, n, depth, mtu, true)
    }

    /// As [`World::new`], with the responders' selective repeat on or off
    /// (off: go-back-N, the responder accepts packets in order only).
    pub fn with_selective_repeat(nics: &Nics, n: u32, depth: u32, mtu: Mtu, sr: bool) -> World {
        World::build(nics, n, depth, mtu, sr, 0, QpAttr::default())
    }

    /// As [`World::new`], with NIC0's QPs under STrack's congestion window
    /// (`QpAttr::strack_cc`), spraying over `max_paths` entropies (0: off).
    pub fn strack(nics: &Nics, n: u32, depth: u32, mtu: Mtu, max_paths: u16) -> World {
        let req = QpAttr { max_paths: Some(max_paths), strack_cc: Some(true), ..QpAttr::default() };
        World::build(nics, n, depth, mtu, true, 0, req)
    }

    /// As [`World::strack`], spraying obliviously (plain round robin over
    /// the entropies, `QpAttr::spray_oblivious`).
    pub fn strack_oblivious(nics: &Nics, n: u32, depth: u32, mtu: Mtu, max_paths: u16) -> World {
        let req = QpAttr {
            max_paths: Some(max_paths),
            strack_cc: Some(true),
            spray_oblivious: Some(true),
            ..QpAttr::default()
        };
        World::build(nics, n, depth, mtu, true, 0, req)
    }

    /// As [`World::new`], with NIC0's QPs spraying their requests over
    /// `max_paths` entropies (`QpAttr::max_paths`; 0: off).
    pub fn sprayed(nics: &Nics, n: u32, depth: u32, mtu: Mtu, max_paths: u16) -> World {
        World::build(nics, n, depth, mtu, true, 0, QpAttr { max_paths: Some(max_paths), ..QpAttr::default() })
    }

    /// As [`World::new`], on the `n` highest QPNs of both NICs (the last
    /// pair on QPN `params::NUM_QPS - 1`): QPs created first and dropped
    /// afterwards take the QPNs below.
    pub fn highest(nics: &Nics, n: u32, depth: u32, mtu: Mtu) -> World {
        let skip = rnic_spec::params::NUM_QPS as u32 - FIRST_QPN - n;
        World::build(nics, n, depth, mtu, true, skip, QpAttr::default())
    }

    /// `req`: NIC0's QPs' STrack attributes (`max_paths`, `strack_cc`, `spray_oblivious`), set in INIT.
    fn build(nics: &Nics, n: u32, depth: u32, mtu: Mtu, sr: bool, skip: u32, req: QpAttr) -> World {
        World::build_inline(nics, n, depth, mtu, sr, skip, req, 0)
    }

    /// As [`World::new`], with every QP's `max_inline_data` at `max_inline`.
    pub fn inline(nics: &Nics, n: u32, depth: u32, mtu: Mtu, max_inline: u32) -> World {
        World::build_inline(nics, n, depth, mtu, true, 0, QpAttr::default(), max_inline)
    }

    #[allow(clippy::too_many_arguments)]
    fn build_inline(
        nics: &Nics,
        n: u32,
        depth: u32,
        mtu: Mtu,
        sr: bool,
        skip: u32,
        req: QpAttr,
        max_inline: u32,
    ) -> World {
        let (ctx_a, ctx_b) = (nics.ctxs[0].clone(), nics.ctxs[1].clone());
        let pd_a = ctx_a.alloc_pd().unwrap();
        let pd_b = ctx_b.alloc_pd().unwrap();
        let cq_a = ctx_a.create_cq(2 * n * depth).unwrap();
        let cq_b = ctx_b.create_cq(2 * n * depth).unwrap();
        let placeholders: Vec<Qp> = (0..skip)
            .flat_map(|_| [(&pd_a, &cq_a), (&pd_b, &cq_b)])
            .map(|(pd, cq)| pd.create_qp(QpInitAttr::new(cq, cq, 0, 0)).unwrap())
            .collect();
        let mut conns = Vec::new();
        for i in 0..n {
            let attr = |cq: &Cq| QpInitAttr { max_inline_data: max_inline, ..QpInitAttr::new(cq, cq, depth, depth) };
            let a = pd_a.create_qp(attr(&cq_a)).unwrap();
            let b = pd_b.create_qp(attr(&cq_b)).unwrap();
            a.modify(&QpAttr { qp_state: QpAttr::init().qp_state, selective_repeat: Some(sr), ..req.clone() }).unwrap();
            b.modify(&QpAttr { selective_repeat: Some(sr), ..QpAttr::init() }).unwrap();
            connect(&ctx_a, &a, initial_psn(SEED, 0, i), &ctx_b, &b, initial_psn(SEED, 1, i), mtu).unwrap();
            conns.push((a, b));
        }
        if skip > 0 {
            let top = rnic_spec::params::NUM_QPS as u32 - 1;
            let (a, b) = conns.last().expect("at least one pair");
            assert_eq!((a.qp_num(), b.qp_num()), (top, top), "the last pair takes the highest QPN on both NICs");
        }
        drop(placeholders);
        World { ctx_a, ctx_b, pd_a, pd_b, cq_a, cq_b, conns }
    }
}

/// The first QPN the library hands out (0 and 1 are reserved, as in IB).
const FIRST_QPN: u32 = 2;

/// Guard bytes before the first slot of a transfer's destination.
const LEAD: usize = 64;

/// The pattern stream of message `m` on QP index `q`.
pub fn stream(q: u32, m: u32) -> u64 {
    pattern::stream(q, m as u64)
}

/// Fills a whole MR with the sentinel and returns what it holds.
pub fn fill_sentinel(mr: &Mr) -> Vec<u8> {
    let v = pattern::make(SEED, SENTINEL, mr.len());
    mr.write(0, &v).unwrap();
    v
}

/// Reads a whole MR.
pub fn read_all(mr: &Mr) -> Vec<u8> {
    let mut v = vec![0u8; mr.len()];
    mr.read(0, &mut v).unwrap();
    v
}

/// Compares `got` with `want`; on a difference names the slot (QP index,
/// message) and the offset inside it, given the slot layout.
pub fn assert_same(what: &str, got: &[u8], want: &[u8], slot: usize, msgs: u32, size: usize) {
    assert_eq!(got.len(), want.len());
    if let Some(o) = got.iter().zip(want).position(|(a, b)| a != b) {
        let s = o / slot;
        let (q, m, off) = (s as u32 / msgs, s as u32 % msgs, o % slot);
        let region = if off < size { "payload" } else { "guard bytes after the payload" };
        panic!(
            "{what}: byte {o} differs (QP index {q}, message {m}, offset {off} in {region}; message size {size}): got {:#04x}, expected {:#04x}; seed {SEED:#x}",
            got[o], want[o]
        );
    }
}

/// Waits for `n` completions on `cq`, failing with the library's timeout message.
pub fn wait(cq: &Cq, n: usize, bytes: u64) -> Vec<WorkCompletion> {
    cq.wait_cq(n, timeout_for(bytes)).unwrap_or_else(|e| panic!("{e}"))
}

/// Checks that `wcs` hold, for each QP in `qpns`, `msgs` successful
/// completions of `op` with `byte_len` `size`, in posting order (`wr_id` = message index).
pub fn assert_completions(wcs: &[WorkCompletion], qpns: &[u32], msgs: u32, op: WcOpcode, size: u32) {
    for (qi, &qpn) in qpns.iter().enumerate() {
        let mine: Vec<_> = wcs.iter().filter(|w| w.qp_num == qpn).collect();
        assert_eq!(
            mine.len(),
            msgs as usize,
            "QP {qpn} (index {qi}): {} completions, expected {msgs}: {mine:?}",
            mine.len()
        );
        for (m, w) in mine.iter().enumerate() {
            assert_eq!(w.status, WcStatus::Success, "QP {qpn} message {m}: {w:?}");
            assert_eq!((w.wr_id, w.opcode, w.byte_len), (m as u64, op, size), "QP {qpn} message {m}: {w:?}");
        }
    }
}

/// Transfers `msgs` messages of `size` bytes on each of `qps` QPs (NIC0
/// the requester; a WRITE or SEND moves data from NIC0 to NIC1, a READ from
/// NIC1 to NIC0) and checks every byte of the destination memory: each
/// payload equals its pattern and every byte around it still holds the
/// sentinel.
pub fn transfer(op: Op, size: usize, qps: u32, msgs: u32, mtu: Mtu) {
    let nics = pair();
    {
        let w = World::new(&nics, qps, msgs, mtu);
        transfer_in(&w, op, size, msgs);
    }
    assert_no_violations(&nics);
}

/// [`transfer`] on the QP pairs of `w`, on the QPNs they have (each pair
/// must allow `msgs` send and `msgs` receive WRs).
pub fn transfer_in(w: &World, op: Op, size: usize, msgs: u32) {
    let qps = w.conns.len() as u32;
    // Each message gets a slot with at least 64 guard bytes after it; the first has 64 before it too.
    let slot = size.div_ceil(64) * 64 + 64;
    let total = LEAD + slot * (qps * msgs) as usize;
    // `src` holds the data before the transfer, `dst` receives it.
    let (src, dst) = match op {
        Op::Write => (
            w.pd_a.reg_mr(total, AccessFlags::empty()).unwrap(),
            w.pd_b.reg_mr(total, AccessFlags::REMOTE_WRITE | AccessFlags::LOCAL_WRITE).unwrap(),
        ),
        Op::Send => (
            w.pd_a.reg_mr(total, AccessFlags::empty()).unwrap(),
            w.pd_b.reg_mr(total, AccessFlags::LOCAL_WRITE).unwrap(),
        ),
        Op::Read => (
            w.pd_b.reg_mr(total, AccessFlags::REMOTE_READ).unwrap(),
            w.pd_a.reg_mr(total, AccessFlags::LOCAL_WRITE).unwrap(),
        ),
    };
    let mut want = fill_sentinel(&dst);
    for q in 0..qps {
        for m in 0..msgs {
            let off = LEAD + (q * msgs + m) as usize * slot;
            let data = pattern::make(SEED, stream(q, m), size);
            src.write(off as u64, &data).unwrap();
            want[off..off + size].copy_from_slice(&data);
        }
    }
    if op == Op::Send {
        for (q, (_, b)) in w.conns.iter().enumerate() {
            let sges: Vec<_> = (0..msgs)
                .map(|m| dst.sge((LEAD + (q as u32 * msgs + m) as usize * slot) as u64, slot as u32))
                .collect();
            let wrs: Vec<RecvWr> = sges
                .iter()
                .enumerate()
                .map(|(m, sg)| RecvWr { wr_id: m as u64, sg_list: std::slice::from_ref(sg) })
                .collect();
            b.post_recv_batch(&wrs).unwrap();
        }
    }
    for (q, (a, _)) in w.conns.iter().enumerate() {
        let wrs: Vec<SendWr> = (0..msgs)
            .map(|m| {
                let off = (LEAD + (q as u32 * msgs + m) as usize * slot) as u64;
                let (opcode, local) = match op {
                    Op::Write => (WrOpcode::RdmaWrite { remote_addr: dst.addr() + off, rkey: dst.rkey() }, &src),
                    Op::Send => (WrOpcode::Send, &src),
                    Op::Read => (WrOpcode::RdmaRead { remote_addr: src.addr() + off, rkey: src.rkey() }, &dst),
                };
                SendWr {
                    send_flags: rnic::SendFlags::SIGNALED,
                    wr_id: m as u64,
                    opcode,
                    sg_list: local.sge(off, size as u32).into(),
                }
            })
            .collect();
        a.post_send_batch(&wrs).unwrap();
    }
    let n = (qps * msgs) as usize;
    let bytes = (n * size) as u64;
    let wcs = wait(&w.cq_a, n, bytes);
    let a_qpns: Vec<u32> = w.conns.iter().map(|(a, _)| a.qp_num()).collect();
    let wc_op = match op {
        Op::Write => WcOpcode::RdmaWrite,
        Op::Send => WcOpcode::Send,
        Op::Read => WcOpcode::RdmaRead,
    };
    assert_completions(&wcs, &a_qpns, msgs, wc_op, size as u32);
    if op == Op::Send {
        let wcs = wait(&w.cq_b, n, bytes);
        let b_qpns: Vec<u32> = w.conns.iter().map(|(_, b)| b.qp_num()).collect();
        assert_completions(&wcs, &b_qpns, msgs, WcOpcode::Recv, size as u32);
    }
    let what = format!("{op:?} {size} B x {msgs} on {qps} QPs");
    let got = read_all(&dst);
    assert_same(&format!("{what}, guard bytes before the first slot"), &got[..LEAD], &want[..LEAD], LEAD, 1, 0);
    assert_same(&what, &got[LEAD..], &want[LEAD..], slot, msgs, size);
    // Nothing else may arrive late.
    assert!(
        w.cq_a.poll_cq_vec(1).unwrap().is_empty() && w.cq_b.poll_cq_vec(1).unwrap().is_empty(),
        "extra completions"
    );
}

/// A `RefCell`/`Cell` stand-in for what a test shares with a link hook or
/// drop predicate (those must be `Send`: the cluster may run on any thread).
#[derive(Default)]
pub struct Shared<T>(std::sync::Mutex<T>);

impl<T> Shared<T> {
    /// A new slot holding `v`.
    pub fn new(v: T) -> Shared<T> {
        Shared(std::sync::Mutex::new(v))
    }

    /// The value, locked (as `RefCell::borrow`).
    pub fn borrow(&self) -> std::sync::MutexGuard<'_, T> {
        self.0.lock().expect("a test thread panicked with a shared value locked")
    }

    /// The value, locked (as `RefCell::borrow_mut`).
    pub fn borrow_mut(&self) -> std::sync::MutexGuard<'_, T> {
        self.borrow()
    }
}

impl<T: Copy> Shared<T> {
    /// A copy of the value (as `Cell::get`).
    pub fn get(&self) -> T {
        *self.borrow()
    }

    /// Replaces the value (as `Cell::set`).
    pub fn set(&self, v: T) {
        *self.borrow() = v;
    }
}
