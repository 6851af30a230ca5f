//! Fabric scenarios of cosimulated NICs: flows (a QP each, under STrack's
//! window or not, sprayed or not) between NICs on a switch or a leaf-spine
//! fabric, all posted at once ([`run_flows`]); an incast of `fan_in`
//! senders into one receiver ([`run_incast`]) and a permutation across two
//! leaves ([`cross_leaf_permutation`]) are built on it. Every byte is
//! verified at its receiver. The run is sampled in bins: the deepest
//! backlog of one switch queue, and each flow's sender's link bytes.

use rnic::{AccessFlags, CcNetwork, Mtu, QpAttr, SendWr, WcStatus, WrOpcode};
use rnic_sim::SimConfig;
use rnic_spec::params::{CLOCK_HZ, CLOCK_PS};

use crate::bench::{connect, initial_psn};
use crate::cosim::Nics;
use crate::pattern;

/// A sender QP's congestion window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Window {
    /// None.
    Off,
    /// STrack's (`QpAttr::strack_cc`).
    Strack,
    /// DCTCP's (`QpAttr::dctcp_cc`).
    Dctcp,
}

/// How every sender QP of a scenario sends: its window, its spraying and
/// the network its window is tuned for.
#[derive(Clone, Copy, Debug)]
pub struct FlowTransport {
    /// The window.
    pub window: Window,
    /// Entropies the QP sprays over (0: one port).
    pub paths: u16,
    /// Spray in plain round robin instead of STrack's adaptive choice.
    pub oblivious: bool,
    /// The network the windows are tuned for (every NIC's `set_cc_network`).
    pub net: CcNetwork,
}

impl Default for FlowTransport {
    /// STrack's window on one port, the library's default network.
    fn default() -> Self {
        FlowTransport { window: Window::Strack, paths: 0, oblivious: false, net: CcNetwork::default() }
    }
}

impl FlowTransport {
    /// The sender QP's attributes (set in INIT).
    pub fn qp_attr(&self) -> QpAttr {
        QpAttr {
            strack_cc: Some(self.window == Window::Strack),
            dctcp_cc: Some(self.window == Window::Dctcp),
            max_paths: Some(self.paths),
            spray_oblivious: Some(self.oblivious),
            ..QpAttr::init()
        }
    }
}

/// An incast: senders 0..fan_in each write `msgs` messages of `size` bytes
/// to NIC `fan_in` at once.
#[derive(Clone, Debug)]
pub struct IncastConfig {
    /// Senders.
    pub fan_in: usize,
    /// Messages per sender.
    pub msgs: u32,
    /// Message size, bytes.
    pub size: usize,
    /// How each sender's QP sends.
    pub transport: FlowTransport,
    /// Switch queues mark CE above this many bytes (None: no marking).
    pub ecn_bytes: Option<u64>,
    /// Switch queue buffer, bytes.
    pub buffer_bytes: u64,
    /// Sampling bin, cycles.
    pub bin_cycles: u64,
    /// Data pattern seed.
    pub seed: u64,
}

impl Default for IncastConfig {
    fn default() -> Self {
        IncastConfig {
            fan_in: 8,
            msgs: 16,
            size: 64 * 1024,
            transport: FlowTransport::default(),
            ecn_bytes: Some(32 << 10),
            buffer_bytes: 1 << 20,
            bin_cycles: 500,
            seed: 0x5EED_2026,
        }
    }
}

/// One sender of an incast.
#[derive(Clone, Debug, Default)]
pub struct FlowResult {
    /// Payload bytes it wrote.
    pub bytes: u64,
    /// Cycles from the start to its last completion.
    pub done_cycles: u64,
    /// Its goodput over that time, Gb/s.
    pub gbps: f64,
    /// Its link's bytes per bin (payload, headers, resends).
    pub sent_per_bin: Vec<u64>,
}

/// What a scenario (an incast, a permutation) did.
#[derive(Clone, Debug, Default)]
pub struct ScenarioRun {
    /// Per sender.
    pub flows: Vec<FlowResult>,
    /// Cycles from the posts to the last completion.
    pub cycles: u64,
    /// All senders' payload over `cycles`, Gb/s.
    pub gbps: f64,
    /// The watched switch queue (an incast: the receiver's port): most bytes queued.
    pub max_backlog: u64,
    /// Frames it dropped.
    pub drops: u64,
    /// Frames it marked CE.
    pub marked: u64,
    /// The port's deepest queue in each bin, bytes.
    pub backlog_per_bin: Vec<u64>,
    /// Frames every switch queue dropped.
    pub switch_drops: u64,
    /// Bytes each spine carried (leaf-spine fabrics).
    pub spine_bytes: Vec<u64>,
    /// Sampling bin, cycles.
    pub bin_cycles: u64,
    /// The queue `backlog_per_bin` samples.
    pub watch: String,
}

impl ScenarioRun {
    /// Seconds per bin.
    pub fn bin_s(&self) -> f64 {
        self.bin_cycles as f64 / CLOCK_HZ as f64
    }

    /// Convergence time, ns: the end of the first bin from which on, until
    /// the first sender finishes, every window of `window` bins has the
    /// senders' rates (summed over the window) with Jain's index at least
    /// `jfi` and the port's queue at most `queue_bytes`. None if it never does.
    pub fn convergence_ns(&self, window: usize, jfi: f64, queue_bytes: u64) -> Option<u64> {
        let first_done = self.flows.iter().map(|f| f.done_cycles).min()?;
        let bins = (first_done / self.bin_cycles) as usize;
        let ok = |b: usize| {
            let sums: Vec<f64> = self
                .flows
                .iter()
                .map(|f| f.sent_per_bin[b..(b + window).min(f.sent_per_bin.len())].iter().sum::<u64>() as f64)
                .collect();
            jain(&sums) >= jfi
                && self.backlog_per_bin[b..(b + window).min(self.backlog_per_bin.len())]
                    .iter()
                    .all(|&q| q <= queue_bytes)
        };
        let last_start = bins.checked_sub(window)?;
        let mut start = None;
        for b in 0..=last_start {
            match (ok(b), start) {
                (true, None) => start = Some(b),
                (false, Some(_)) => start = None,
                _ => {}
            }
        }
        start.map(|b| (b as u64 + 1) * self.bin_cycles * CLOCK_PS / 1000)
    }
}

/// Jain's fairness index of `x` (1: all equal, 1/n: one takes all; 0 if all are 0).
pub fn jain(x: &[f64]) -> f64 {
    let (s, s2) = (x.iter().sum::<f64>(), x.iter().map(|v| v * v).sum::<f64>());
    if s2 == 0.0 {
        0.0
    } else {
        s * s / (x.len() as f64 * s2)
    }
}

/// Runs an incast of cosimulated NICs on one switch; every byte is checked.
/// `progress` is called once per bin with the bins done.
pub fn run_incast(cfg: &IncastConfig, progress: impl FnMut(u64)) -> Result<ScenarioRun, String> {
    if cfg.fan_in == 0 {
        return Err("an incast needs at least one sender".into());
    }
    let flows = FlowsConfig {
        sim: SimConfig {
            switch_ecn_threshold: cfg.ecn_bytes,
            switch_port_buffer: cfg.buffer_bytes,
            ..Default::default()
        },
        nics: cfg.fan_in + 1,
        flows: (0..cfg.fan_in).map(|s| (s, cfg.fan_in)).collect(),
        msgs: cfg.msgs,
        size: cfg.size,
        transport: cfg.transport,
        watch: format!("port {}", cfg.fan_in),
        bin_cycles: cfg.bin_cycles,
        seed: cfg.seed,
    };
    run_flows(&flows, progress)
}

/// Flows of cosimulated NICs on a fabric: each flow a QP of NIC `src`
/// writing `msgs` messages of `size` bytes to NIC `dst`, all posted at once.
#[derive(Clone, Debug)]
pub struct FlowsConfig {
    /// The fabric (a switch for more than two NICs, or `leaf_spine`).
    pub sim: SimConfig,
    /// NICs.
    pub nics: usize,
    /// `(src, dst)` per flow; a NIC may send and receive several.
    pub flows: Vec<(usize, usize)>,
    /// Messages per flow.
    pub msgs: u32,
    /// Message size, bytes.
    pub size: usize,
    /// How each flow's sender QP sends.
    pub transport: FlowTransport,
    /// The switch queue sampled per bin (`Fabric::queue_stats` names, e.g. `port 8`).
    pub watch: String,
    /// Sampling bin, cycles.
    pub bin_cycles: u64,
    /// Data pattern seed.
    pub seed: u64,
}

/// A random permutation of `hosts` NICs on two leaves joined by `spines`
/// spines: each NIC on one leaf sends to a NIC on the other, every NIC
/// receives one flow; `(src, dst)` pairs, seeded.
pub fn cross_leaf_permutation(hosts: usize, seed: u64) -> Vec<(usize, usize)> {
    let half = hosts / 2;
    let mut order: Vec<usize> = (0..half).collect();
    let mut rng = rnic_sim::rng::SplitMix(seed);
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i as u64 + 1) as usize);
    }
    (0..half).flat_map(|i| [(i, half + order[i]), (half + order[i], (i + 1) % half)]).collect()
}

/// Runs flows of cosimulated NICs; every byte is checked at its receiver.
/// Each flow's `sent_per_bin` is its sender's link bytes (a NIC sending
/// several flows shows its total in each). `progress` is called once per
/// bin with the bins done.
pub fn run_flows(cfg: &FlowsConfig, mut progress: impl FnMut(u64)) -> Result<ScenarioRun, String> {
    if cfg.flows.is_empty() || cfg.msgs == 0 || cfg.size == 0 {
        return Err("a scenario needs at least one flow, message and byte".into());
    }
    if let Some(&(s, d)) = cfg.flows.iter().find(|&&(s, d)| s == d || s >= cfg.nics || d >= cfg.nics) {
        return Err(format!("flow {s} -> {d}: not two NICs of the {}", cfg.nics));
    }
    let nics = Nics::new(cfg.nics, cfg.sim.clone())?;
    let err = |what: &str, e: rnic::Error| format!("{what}: {e}");
    for ctx in &nics.ctxs {
        ctx.set_cc_network(cfg.transport.net).map_err(|e| err("the window's network", e))?;
    }
    let bytes = cfg.size * cfg.msgs as usize;
    let mut flows = Vec::new();
    for (f, &(s, d)) in cfg.flows.iter().enumerate() {
        let (ctx, rx) = (&nics.ctxs[s], &nics.ctxs[d]);
        let pd = ctx.alloc_pd().map_err(|e| err("sender PD", e))?;
        let pd_rx = rx.alloc_pd().map_err(|e| err("receiver PD", e))?;
        let cq = ctx.create_cq(2 * cfg.msgs).map_err(|e| err("sender CQ", e))?;
        let cq_rx = rx.create_cq(2).map_err(|e| err("receiver CQ", e))?;
        let attr = |cq: &rnic::Cq, n: u32| rnic::QpInitAttr::new(cq, cq, n, n);
        let a = pd.create_qp(attr(&cq, cfg.msgs)).map_err(|e| err("sender QP", e))?;
        let b = pd_rx.create_qp(attr(&cq_rx, 1)).map_err(|e| err("receiver QP", e))?;
        a.modify(&cfg.transport.qp_attr()).map_err(|e| err("sender QP attributes", e))?;
        let (psn_a, psn_b) = (initial_psn(cfg.seed, 0, f as u32), initial_psn(cfg.seed, 1, f as u32));
        connect(ctx, &a, psn_a, rx, &b, psn_b, Mtu::Mtu4096).map_err(|e| err("connect", e))?;
        let src = pd.reg_mr(bytes, AccessFlags::empty()).map_err(|e| err("sender MR", e))?;
        let dst = pd_rx
            .reg_mr(bytes, AccessFlags::REMOTE_WRITE | AccessFlags::LOCAL_WRITE)
            .map_err(|e| err("receiver MR", e))?;
        let data = pattern::make(cfg.seed, 100 + f as u64, bytes);
        src.write(0, &data).map_err(|e| err("sender data", e))?;
        flows.push((pd, pd_rx, cq, cq_rx, a, b, src, dst, data));
    }
    let t0 = nics.cluster.lock().now();
    for (_, _, _, _, a, _, src, dst, _) in &flows {
        let wrs: Vec<SendWr> = (0..cfg.msgs)
            .map(|m| {
                let off = m as u64 * cfg.size as u64;
                SendWr {
                    send_flags: rnic::SendFlags::SIGNALED,
                    wr_id: m as u64,
                    opcode: WrOpcode::RdmaWrite { remote_addr: dst.addr() + off, rkey: dst.rkey() },
                    sg_list: src.sge(off, cfg.size as u32).into(),
                }
            })
            .collect();
        a.post_send_batch(&wrs).map_err(|e| err("post", e))?;
    }
    let srcs: Vec<usize> = cfg.flows.iter().map(|f| f.0).collect();
    let link = |c: &rnic_sim::Cluster, s: usize| c.fabric().link_stats(s).bytes;
    let mut last_link: Vec<u64> = srcs.iter().map(|&s| link(&nics.cluster.lock(), s)).collect();
    let mut run = ScenarioRun { bin_cycles: cfg.bin_cycles, watch: cfg.watch.clone(), ..Default::default() };
    run.flows = cfg.flows.iter().map(|_| FlowResult { bytes: bytes as u64, ..Default::default() }).collect();
    nics.cluster.lock().fabric_mut().take_peak_backlogs(t0 * CLOCK_PS);
    let mut done = vec![0u32; cfg.flows.len()];
    // Long enough for every flow at a tenth of the line rate, one after the other.
    let deadline = t0 + 200_000 + (cfg.flows.len() * bytes) as u64 * 10 / 50;
    let mut next_bin = t0 + cfg.bin_cycles;
    while done.iter().any(|&d| d < cfg.msgs) {
        for (f, (_, _, cq, ..)) in flows.iter().enumerate() {
            for wc in cq.poll_cq_vec(16).map_err(|e| err("poll", e))? {
                if wc.status != WcStatus::Success {
                    return Err(format!("flow {f} ({} -> {}): {wc:?}", cfg.flows[f].0, cfg.flows[f].1));
                }
                done[f] += 1;
                if done[f] == cfg.msgs {
                    run.flows[f].done_cycles = nics.cluster.lock().now() - t0;
                }
            }
        }
        let now = nics.cluster.lock().now();
        if now >= deadline {
            return Err(format!("{done:?} of {} messages per flow done by cycle {}", cfg.msgs, now - t0));
        }
        let step = (next_bin - now).clamp(1, 16);
        nics.cluster.lock().run(step);
        for ctx in &nics.ctxs {
            ctx.progress().map_err(|e| err("progress", e))?;
        }
        if nics.cluster.lock().now() >= next_bin {
            let mut c = nics.cluster.lock();
            let now_ps = c.now() * CLOCK_PS;
            let peaks = c.fabric_mut().take_peak_backlogs(now_ps);
            run.backlog_per_bin.push(peaks.iter().find(|(n, _)| *n == cfg.watch).map_or(0, |p| p.1));
            for ((flow, last), &s) in run.flows.iter_mut().zip(last_link.iter_mut()).zip(&srcs) {
                let b = link(&c, s);
                flow.sent_per_bin.push(b - *last);
                *last = b;
            }
            next_bin += cfg.bin_cycles;
            progress(run.backlog_per_bin.len() as u64);
        }
    }
    run.cycles = nics.cluster.lock().now() - t0;
    for (f, (.., dst, data)) in flows.iter().enumerate() {
        let mut got = vec![0u8; data.len()];
        dst.read(0, &mut got).map_err(|e| err("receiver data", e))?;
        if got != *data {
            let at = got.iter().zip(data.iter()).position(|(a, b)| a != b).unwrap_or(0);
            return Err(format!("flow {f}'s bytes at NIC {} differ from byte {at} on", cfg.flows[f].1));
        }
    }
    let v = nics.violations();
    if !v.is_empty() {
        return Err(format!("DMA violations: {}", v.join("; ")));
    }
    let secs = |cycles: u64| cycles as f64 / CLOCK_HZ as f64;
    for f in &mut run.flows {
        f.gbps = f.bytes as f64 * 8.0 / secs(f.done_cycles) / 1e9;
    }
    run.gbps = (cfg.flows.len() * bytes) as f64 * 8.0 / secs(run.cycles) / 1e9;
    let c = nics.cluster.lock();
    let q =
        c.fabric().queue_stats().into_iter().find(|(n, _)| *n == cfg.watch).ok_or(format!("no queue {}", cfg.watch))?.1;
    (run.max_backlog, run.drops, run.marked) = (q.max_backlog, q.drops, q.ecn_marked);
    run.switch_drops = c.fabric().switch_stats().buffer_drops;
    run.spine_bytes = c.fabric().spine_bytes();
    Ok(run)
}

/// Writes a run's plots into `dir`: `<stem>_queue.png` (the watched
/// queue's deepest backlog per bin, KB, with `other`'s series beside it:
/// e.g. the same scenario on netsim's model hosts, (µs, bytes) points) and
/// `<stem>_rates.png` (each flow's sender's rate, Gb/s, averaged over
/// `smooth` bins). Returns the files.
pub fn plot_run(
    run: &ScenarioRun,
    other: Option<(&str, &[(f64, f64)])>,
    dir: &std::path::Path,
    stem: &str,
    title: &str,
    smooth: usize,
) -> Result<Vec<std::path::PathBuf>, String> {
    use rnic_netsim::output::{line_plot, Series};
    let bin_us = run.bin_s() * 1e6;
    let us = |x: &f64| format!("{x:.0}");
    let mut queues: Vec<Series> = vec![(
        run.watch.clone(),
        run.backlog_per_bin.iter().enumerate().map(|(b, &q)| ((b + 1) as f64 * bin_us, q as f64 / 1e3)).collect(),
    )];
    if let Some((name, pts)) = other {
        queues.push((name.to_string(), pts.iter().map(|&(t, q)| (t, q / 1e3)).collect()));
    }
    let q_path = dir.join(format!("{stem}_queue.png"));
    line_plot(
        &q_path,
        &format!("{title}: switch queue"),
        "time (us)",
        "deepest queue in the bin (KB)",
        &queues,
        &us,
        false,
    )?;
    let smooth = smooth.max(1);
    let rates: Vec<Series> = run
        .flows
        .iter()
        .enumerate()
        .map(|(s, f)| {
            let pts = f
                .sent_per_bin
                .windows(smooth)
                .enumerate()
                .map(|(b, w)| {
                    let bits = w.iter().sum::<u64>() as f64 * 8.0;
                    ((b + smooth) as f64 * bin_us, bits / (smooth as f64 * run.bin_s()) / 1e9)
                })
                .collect();
            (format!("flow {s}"), pts)
        })
        .collect();
    let r_path = dir.join(format!("{stem}_rates.png"));
    line_plot(&r_path, &format!("{title}: sender rates"), "time (us)", "Gb/s", &rates, &us, false)?;
    Ok(vec![q_path, r_path])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_index() {
        assert_eq!(jain(&[3.0, 3.0, 3.0]), 1.0);
        assert_eq!(jain(&[4.0, 0.0, 0.0, 0.0]), 0.25);
        assert_eq!(jain(&[0.0, 0.0]), 0.0);
    }

    /// Two flows: flow 1 silent for the first `late` bins, then both send
    /// alike; the queue is deep until bin `deep`.
    fn run(late: usize, deep: usize, bins: usize) -> ScenarioRun {
        let flow = |start: usize| FlowResult {
            sent_per_bin: (0..bins).map(|b| if b >= start { 1000 } else { 0 }).collect(),
            done_cycles: bins as u64 * 100,
            ..Default::default()
        };
        ScenarioRun {
            flows: vec![flow(0), flow(late)],
            backlog_per_bin: (0..bins).map(|b| if b < deep { 500_000 } else { 10_000 }).collect(),
            bin_cycles: 100,
            ..Default::default()
        }
    }

    #[test]
    fn convergence_is_where_fair_shares_and_a_short_queue_last() {
        let ns = |bins: u64| bins * 100 * CLOCK_PS / 1000;
        // Fair to 0.99 only for windows starting at bin 8 (at 7 flow 1 has 3 of 4 bins), the queue short from bin 5.
        assert_eq!(run(8, 5, 40).convergence_ns(4, 0.99, 100_000), Some(ns(9)));
        // The queue short only from bin 20: that decides.
        assert_eq!(run(8, 20, 40).convergence_ns(4, 0.99, 100_000), Some(ns(21)));
        // Never fair (flow 1 never sends), or the queue never short.
        assert_eq!(run(40, 0, 40).convergence_ns(4, 0.99, 100_000), None);
        assert_eq!(run(0, 40, 40).convergence_ns(4, 0.99, 100_000), None);
    }
}
