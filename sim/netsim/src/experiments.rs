//! The STrack-evaluation scenarios (§4.2) at a scale that runs on a laptop:
//! permutation sweeps, failed links, incast, loss tolerance, and the speed
//! benchmark. Each prints a Markdown table and writes CSV/PNG files.

use std::fmt::Write as _;
use std::path::Path;

use crate::output::{line_plot, Series, Summary};
use crate::sim::{Report, Sim, SimConfig, Transport};
use crate::time::{Ps, PS_PER_US};
use crate::topo::{FabricSpec, Topology};
use crate::traffic::{incast, permutation, Workload};

/// Fabric used by an experiment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fabric {
    /// Hosts.
    pub nodes: u32,
    /// Switch radix.
    pub radix: u32,
    /// Oversubscription at the ToR.
    pub oversub: u32,
    /// 2 = leaf-spine, 3 = fat tree.
    pub tiers: u8,
    /// Link speed, Gbit/s.
    pub gbps: u32,
    /// Per-link latency, ns.
    pub latency_ns: u32,
}

impl Fabric {
    /// The paper's 2-tier fat tree scaled down: radix chosen so that the ToR
    /// count equals the spine count (128 nodes: radix 16; 1024: radix 64).
    pub fn two_tier(nodes: u32, oversub: u32) -> Self {
        let radix = match nodes {
            n if n <= 32 => 8,
            n if n <= 128 => 16,
            n if n <= 512 => 32,
            n if n <= 2048 => 64,
            _ => 128,
        };
        Self { nodes, radix, oversub, tiers: 2, gbps: 400, latency_ns: 1000 }
    }

    /// The k-ary 3-tier fat tree with `nodes` = k³/4 hosts (128: k = 8,
    /// 1024: k = 16, 3456: k = 24).
    pub fn fat_tree(nodes: u32, oversub: u32) -> Self {
        let radix = (2..=128).step_by(2).find(|k| k * k * k / 4 >= nodes).unwrap_or(128);
        Self { nodes, radix, oversub, tiers: 3, gbps: 400, latency_ns: 1000 }
    }

    /// Spec of this fabric.
    pub fn spec(&self) -> Result<FabricSpec, String> {
        if self.tiers == 3 {
            FabricSpec::fat_tree(self.nodes, self.radix, self.oversub, self.gbps, self.latency_ns)
        } else {
            FabricSpec::leaf_spine(self.nodes, self.radix, self.oversub, self.gbps, self.latency_ns)
        }
    }

    /// Short label.
    pub fn label(&self) -> String {
        format!("{} nodes, {}-tier, {}:1", self.nodes, self.tiers, self.oversub)
    }
}

/// STrack window settings of an experiment: `None` keeps
/// [`SimConfig::paper_defaults`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tune {
    /// Maximum window, % of the BDP.
    pub max_cwnd_pct: Option<u32>,
    /// Window at a flow's start, % of the BDP.
    pub init_cwnd_pct: Option<u32>,
}

impl Tune {
    /// Applies the settings to `cfg` (STrack transports only).
    pub fn apply(&self, cfg: &mut SimConfig) {
        if matches!(cfg.transport, Transport::Strack | Transport::StrackOblivious) {
            if let Some(p) = self.max_cwnd_pct {
                cfg.max_cwnd_pct = p;
            }
            if let Some(p) = self.init_cwnd_pct {
                cfg.init_cwnd_pct = Some(p);
            }
        }
    }

    /// File-name suffix, empty for the defaults.
    pub fn suffix(&self) -> String {
        let mut s = String::new();
        if let Some(p) = self.max_cwnd_pct {
            s += &format!("_cwnd{p}");
        }
        if let Some(p) = self.init_cwnd_pct {
            s += &format!("_init{p}");
        }
        s
    }

    /// Human-readable description, empty for the defaults.
    pub fn label(&self) -> String {
        let mut v = Vec::new();
        if let Some(p) = self.max_cwnd_pct {
            v.push(format!("max cwnd {p}% BDP"));
        }
        if let Some(p) = self.init_cwnd_pct {
            v.push(format!("initial cwnd {p}% BDP"));
        }
        v.join(", ")
    }
}

/// A max FCT with, for single-path transports, the most flows sharing one
/// switch-to-switch link in brackets.
pub fn fct_cell(s: &Summary) -> String {
    fct_cell_prec(s, 0)
}

fn fct_cell_prec(s: &Summary, prec: usize) -> String {
    let done = if s.completed < s.flows { format!(" ({}/{} done)", s.completed, s.flows) } else { String::new() };
    if s.flows_per_link > 0 {
        format!("{:.prec$} ({}){done}", s.max_fct_us, s.flows_per_fabric_link)
    } else {
        format!("{:.prec$}{done}", s.max_fct_us)
    }
}

/// Runs one simulation.
pub fn run(topo: Topology, cfg: SimConfig, w: &Workload, progress: bool) -> Result<Report, String> {
    Ok(Sim::new(topo, cfg, w)?.with_progress(progress).run())
}

fn size_label(b: u64) -> String {
    if b >= 1 << 20 {
        format!("{} MB", b >> 20)
    } else {
        format!("{} KB", b >> 10)
    }
}

fn fmt_log2_size(v: &f64) -> String {
    size_label(2f64.powf(*v).round() as u64)
}

/// Permutation max FCT vs message size for several transports on one fabric,
/// with `failed_links` ToR↔spine links down. Returns the Markdown table and
/// writes `<stem>.csv` / `<stem>.png` into `out`.
#[allow(clippy::too_many_arguments)]
pub fn perm_sweep(
    fabric: Fabric,
    sizes: &[u64],
    transports: &[Transport],
    failed_links: u32,
    tune: Tune,
    seed: u64,
    out: &Path,
    stem: &str,
    progress: bool,
) -> Result<String, String> {
    let mut md = String::new();
    let mut csv = String::from("transport,size_bytes,flows,completed,max_fct_us,p99_fct_us,mean_fct_us,ideal_us,retransmits,drops,pauses,events,wall_s,flows_per_fabric_link\n");
    let _ = writeln!(md, "| transport | {} |", sizes.iter().map(|&s| size_label(s)).collect::<Vec<_>>().join(" | "));
    let _ = writeln!(md, "|---|{}", "---|".repeat(sizes.len()));
    let mut series: Vec<Series> = Vec::new();
    let mut ideal_row = Vec::new();
    for &t in transports {
        let mut row = Vec::new();
        let mut pts = Vec::new();
        for &size in sizes {
            let spec = fabric.spec()?;
            let mut topo = Topology::build(&spec)?;
            if failed_links > 0 {
                topo.fail_random_tier1_links(failed_links, seed)?;
            }
            let mut cfg = SimConfig::paper_defaults(t, &topo, 4096, seed);
            tune.apply(&mut cfg);
            let w = permutation(fabric.nodes, size, seed);
            let ideal = ideal_fct_us(size, &cfg);
            let r = run(topo, cfg, &w, progress)?;
            let s = Summary::of(&r);
            eprintln!(
                "  {stem} {} {}: max FCT {:.1} µs ({}/{} done, {:.1} s wall)",
                t.name(),
                size_label(size),
                s.max_fct_us,
                s.completed,
                s.flows,
                s.wall_s
            );
            let _ = writeln!(
                csv,
                "{},{size},{},{},{:.2},{:.2},{:.2},{:.2},{},{},{},{},{:.3},{}",
                t.name(),
                s.flows,
                s.completed,
                s.max_fct_us,
                s.p99_fct_us,
                s.mean_fct_us,
                ideal,
                s.retransmits,
                s.drops,
                s.pauses,
                s.events,
                s.wall_s,
                s.flows_per_fabric_link
            );
            row.push(fct_cell(&s));
            pts.push(((size as f64).log2(), s.max_fct_us));
            if ideal_row.len() < sizes.len() {
                ideal_row.push(format!("{ideal:.0}"));
            }
        }
        let _ = writeln!(md, "| {} | {} |", t.name(), row.join(" | "));
        series.push((t.name().to_string(), pts));
    }
    let _ = writeln!(md, "| *line-rate ideal* | {} |", ideal_row.join(" | "));
    std::fs::create_dir_all(out).map_err(|e| e.to_string())?;
    std::fs::write(out.join(format!("{stem}.csv")), csv).map_err(|e| e.to_string())?;
    let title = format!(
        "Permutation max FCT — {}{}{}",
        fabric.label(),
        if failed_links > 0 { format!(", {failed_links} links down") } else { String::new() },
        if tune == Tune::default() { String::new() } else { format!(", {}", tune.label()) }
    );
    line_plot(
        &out.join(format!("{stem}.png")),
        &title,
        "message size",
        "max FCT (µs, log)",
        &series,
        &fmt_log2_size,
        true,
    )?;
    Ok(md)
}

/// Line-rate FCT of one message (serialization of all packets at the host
/// link plus one base RTT), µs.
pub fn ideal_fct_us(size: u64, cfg: &SimConfig) -> f64 {
    let pkts = size.div_ceil(cfg.mtu as u64);
    let wire = size + pkts * cfg.hdr_bytes as u64;
    (wire as f64 * 8.0 / cfg.host_gbps as f64 + cfg.base_rtt_ns as f64) / 1e3
}

/// Convergence of an incast: first time after which the last-hop queueing
/// delay stays at or below `thresh` (until the first flow finishes).
pub fn convergence_time(r: &Report, thresh: Ps) -> Option<Ps> {
    let first_end = r.flows.iter().filter_map(|f| (f.end != u64::MAX).then_some(f.end)).min()?;
    let last_bin = (first_end / r.series_bin_ps) as usize;
    let q = &r.last_hop_qdelay;
    let mut conv = 0usize;
    for (b, &d) in q.iter().enumerate().take(last_bin) {
        if d > thresh {
            conv = b + 1;
        }
    }
    (conv < last_bin).then_some(conv as u64 * r.series_bin_ps)
}

/// N:1 incasts of `size` bytes: convergence, queueing, drops/pauses, FCT.
#[allow(clippy::too_many_arguments)]
pub fn incast_sweep(
    fabric: Fabric,
    fan_ins: &[u32],
    size: u64,
    transports: &[Transport],
    tune: Tune,
    seed: u64,
    out: &Path,
    progress: bool,
) -> Result<String, String> {
    let mut md = String::new();
    let mut csv = String::from("transport,fan_in,max_fct_us,ideal_us,converge_us,max_lasthop_qdelay_us,drops,retransmits,pauses,pause_us,events,wall_s\n");
    let _ = writeln!(md, "| transport | N:1 | max FCT (µs) | ideal (µs) | converged after (µs) | max last-hop queueing (µs) | drops | retx | pauses (paused µs) |");
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|");
    let mut q_series: Vec<Series> = Vec::new();
    for &t in transports {
        for &n in fan_ins {
            let spec = fabric.spec()?;
            let topo = Topology::build(&spec)?;
            let mut cfg = SimConfig::paper_defaults(t, &topo, 4096, seed);
            tune.apply(&mut cfg);
            cfg.tput_flows = 8;
            cfg.series_bin_ps = 5 * PS_PER_US;
            let thresh = 2 * cfg.base_rtt_ns as u64 * 1000;
            let w = incast(fabric.nodes, n, 0, size, spec.hosts_per_tor, seed);
            let ideal = ideal_fct_us(size * n as u64, &cfg);
            let r = run(topo, cfg, &w, progress)?;
            let s = Summary::of(&r);
            let conv = convergence_time(&r, thresh);
            let maxq = r.last_hop_qdelay.iter().copied().max().unwrap_or(0) as f64 / 1e6;
            eprintln!(
                "  incast {} {n}:1: max FCT {:.1} µs, converge {:?}",
                t.name(),
                s.max_fct_us,
                conv.map(|c| c / PS_PER_US)
            );
            let conv_s = conv.map(|c| format!("{}", c / PS_PER_US)).unwrap_or_else(|| "never".into());
            let _ = writeln!(
                md,
                "| {} | {n}:1 | {:.0}{} | {ideal:.0} | {conv_s} | {maxq:.1} | {} | {} | {} ({:.0}) |",
                t.name(),
                s.max_fct_us,
                if s.completed < s.flows { format!(" ({}/{} done)", s.completed, s.flows) } else { String::new() },
                s.drops,
                s.retransmits,
                s.pauses,
                s.pause_us
            );
            let _ = writeln!(
                csv,
                "{},{n},{:.2},{ideal:.2},{},{maxq:.3},{},{},{},{:.1},{},{:.3}",
                t.name(),
                s.max_fct_us,
                conv.map(|c| (c / PS_PER_US).to_string()).unwrap_or_default(),
                s.drops,
                s.retransmits,
                s.pauses,
                s.pause_us,
                s.events,
                s.wall_s
            );
            let qs = r
                .last_hop_qdelay
                .iter()
                .enumerate()
                .map(|(b, &d)| ((b as u64 * r.series_bin_ps) as f64 / 1e6, d as f64 / 1e6))
                .collect();
            q_series.push((format!("{} {n}:1", t.name()), qs));
            if n == 32 || fan_ins.len() == 1 {
                let tput: Vec<Series> = r
                    .tput
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        (
                            format!("flow {i}"),
                            v.iter()
                                .enumerate()
                                .map(|(b, &x)| {
                                    (
                                        (b as u64 * r.tput_bin_ps) as f64 / 1e6,
                                        x as f64 * 8.0 / (r.tput_bin_ps as f64 / 1e3),
                                    )
                                })
                                .collect(),
                        )
                    })
                    .collect();
                let plain = |v: &f64| format!("{v:.0}");
                line_plot(
                    &out.join(format!("incast{n}_tput_{}.png", t.name())),
                    &format!("{n}:1 incast, {} — throughput of 8 flows (100 µs bins)", t.name()),
                    "time (µs)",
                    "Gbit/s",
                    &tput,
                    &plain,
                    false,
                )?;
                let qd: Vec<Series> = vec![(
                    "last-hop queueing delay".into(),
                    r.last_hop_qdelay
                        .iter()
                        .enumerate()
                        .map(|(b, &d)| ((b as u64 * r.series_bin_ps) as f64 / 1e6, d as f64 / 1e6))
                        .collect(),
                )];
                line_plot(
                    &out.join(format!("incast{n}_queue_{}.png", t.name())),
                    &format!("{n}:1 incast, {} — last-hop queueing delay (5 µs bins)", t.name()),
                    "time (µs)",
                    "queueing delay (µs)",
                    &qd,
                    &plain,
                    false,
                )?;
                let bins = r.drops_series.len().max(r.pause_series.len());
                let dp: Vec<Series> = vec![
                    (
                        "drops per 5 µs".into(),
                        (0..bins)
                            .map(|b| {
                                (
                                    (b as u64 * r.series_bin_ps) as f64 / 1e6,
                                    r.drops_series.get(b).copied().unwrap_or(0) as f64,
                                )
                            })
                            .collect(),
                    ),
                    (
                        "PFC pause frames per 5 µs".into(),
                        (0..bins)
                            .map(|b| {
                                (
                                    (b as u64 * r.series_bin_ps) as f64 / 1e6,
                                    r.pause_series.get(b).copied().unwrap_or(0) as f64,
                                )
                            })
                            .collect(),
                    ),
                ];
                line_plot(
                    &out.join(format!("incast{n}_drops_pauses_{}.png", t.name())),
                    &format!("{n}:1 incast, {} — drops and pauses", t.name()),
                    "time (µs)",
                    "count per 5 µs",
                    &dp,
                    &plain,
                    false,
                )?;
            }
        }
    }
    std::fs::create_dir_all(out).map_err(|e| e.to_string())?;
    std::fs::write(out.join("incast.csv"), csv).map_err(|e| e.to_string())?;
    let plain = |v: &f64| format!("{v:.0}");
    let strack: Vec<Series> = q_series.iter().filter(|s| s.0.starts_with("strack")).cloned().collect();
    line_plot(
        &out.join("incast_qdelay_strack.png"),
        "STrack last-hop queueing delay (5 µs bins)",
        "time (µs)",
        "queueing delay (µs)",
        &strack,
        &plain,
        false,
    )?;
    let zoom: Vec<Series> =
        strack.iter().map(|(n, v)| (n.clone(), v.iter().copied().filter(|p| p.0 <= 600.0).collect())).collect();
    line_plot(
        &out.join("incast_qdelay_strack_first600us.png"),
        "STrack last-hop queueing delay, first 600 µs",
        "time (µs)",
        "queueing delay (µs)",
        &zoom,
        &plain,
        false,
    )?;
    let roce: Vec<Series> = q_series.iter().filter(|s| s.0.starts_with("roce")).cloned().collect();
    if !roce.is_empty() {
        line_plot(
            &out.join("incast_qdelay_roce.png"),
            "RoCEv2 last-hop queueing delay (5 µs bins)",
            "time (µs)",
            "queueing delay (µs)",
            &roce,
            &plain,
            false,
        )?;
    }
    Ok(md)
}

/// Goodput of one long flow between two ToRs under random loss.
pub fn loss_sweep(
    fabric: Fabric,
    size: u64,
    rates_ppm: &[u32],
    transports: &[Transport],
    seed: u64,
    out: &Path,
    progress: bool,
) -> Result<String, String> {
    let mut md = String::new();
    let mut csv =
        String::from("transport,loss_ppm,goodput_gbps,fct_us,completed,retransmits,random_losses,timeouts,probes\n");
    let _ = writeln!(
        md,
        "| transport | {} |",
        rates_ppm.iter().map(|&r| format!("{}% loss", r as f64 / 10_000.0)).collect::<Vec<_>>().join(" | ")
    );
    let _ = writeln!(md, "|---|{}", "---|".repeat(rates_ppm.len()));
    let mut series = Vec::new();
    for &t in transports {
        let mut row = Vec::new();
        let mut pts = Vec::new();
        for &ppm in rates_ppm {
            let spec = fabric.spec()?;
            let topo = Topology::build(&spec)?;
            let mut cfg = SimConfig::paper_defaults(t, &topo, 4096, seed);
            cfg.loss_ppm = ppm;
            cfg.stop_at_ps = 200_000 * PS_PER_US;
            let dst = spec.hosts_per_tor; // first host of the next ToR
            let w = Workload {
                nodes: fabric.nodes,
                flows: vec![crate::traffic::FlowSpec { src: 0, dst, bytes: size, start: 0, deps: vec![] }],
            };
            let r = run(topo, cfg, &w, progress)?;
            let f = &r.flows[0];
            let (gp, fct) = match f.fct() {
                Some(fct) => (size as f64 * 8.0 / (fct as f64 / 1e3), fct as f64 / 1e6),
                None => (f.delivered as f64 * 8.0 / ((r.end_ps - f.start) as f64 / 1e3), f64::NAN),
            };
            eprintln!("  loss {} {}ppm: goodput {:.1} Gb/s", t.name(), ppm, gp);
            let _ = writeln!(
                csv,
                "{},{ppm},{gp:.2},{fct:.1},{},{},{},{},{}",
                t.name(),
                f.end != u64::MAX,
                f.retransmits,
                r.random_losses,
                r.timeouts,
                r.probes
            );
            row.push(format!("{gp:.1}{}", if f.end == u64::MAX { " (unfinished at 200 ms)" } else { "" }));
            pts.push((ppm as f64 / 10_000.0, gp));
        }
        let _ = writeln!(md, "| {} | {} |", t.name(), row.join(" | "));
        series.push((t.name().to_string(), pts));
    }
    std::fs::create_dir_all(out).map_err(|e| e.to_string())?;
    std::fs::write(out.join("loss.csv"), csv).map_err(|e| e.to_string())?;
    let pct = |v: &f64| format!("{v:.1}%");
    line_plot(
        &out.join("loss.png"),
        &format!("Goodput of one {} flow under random loss", size_label(size)),
        "loss rate",
        "goodput (Gbit/s)",
        &series,
        &pct,
        false,
    )?;
    Ok(md)
}

/// Speed benchmark: permutation of `size` on each fabric with STrack.
pub fn bench(fabrics: &[Fabric], size: u64, seed: u64) -> Result<String, String> {
    let mut md = String::new();
    let _ = writeln!(md, "| fabric | flows | events | wall (s) | M events/s | simulated (µs) | max FCT (µs) |");
    let _ = writeln!(md, "|---|---|---|---|---|---|---|");
    for f in fabrics {
        let topo = Topology::build(&f.spec()?)?;
        let cfg = SimConfig::paper_defaults(Transport::Strack, &topo, 4096, seed);
        let w = permutation(f.nodes, size, seed);
        let r = run(topo, cfg, &w, false)?;
        let s = Summary::of(&r);
        let _ = writeln!(
            md,
            "| {} | {} | {} | {:.2} | {:.2} | {:.0} | {:.0} |",
            f.label(),
            s.flows,
            s.events,
            s.wall_s,
            s.events_per_s() / 1e6,
            s.sim_us,
            s.max_fct_us
        );
    }
    Ok(md)
}

/// One row of a multi-seed comparison: a transport on a fabric with a
/// message size and a configuration tweak.
pub struct Case {
    /// Row label (transport and setting).
    pub label: String,
    /// Fabric.
    pub fabric: Fabric,
    /// Message size, bytes.
    pub size: u64,
    /// Transport.
    pub transport: Transport,
    /// Changes to [`SimConfig::paper_defaults`].
    pub tweak: Box<dyn Fn(&mut SimConfig)>,
}

/// Permutations of `case.size` for every case and seed: a Markdown row per
/// case with the max FCT of each seed (single-path transports: the most
/// flows on one switch-to-switch link in brackets), their mean, the mean's
/// excess over the line-rate ideal and the busiest switch-to-switch link's
/// bytes over the mean link's (mean over seeds). Writes `<stem>.csv`.
pub fn seeds_table(cases: &[Case], seeds: &[u64], out: &Path, stem: &str, progress: bool) -> Result<String, String> {
    let mut md = String::new();
    let mut csv = String::from("case,fabric,size_bytes,transport,seed,flows,completed,max_fct_us,mean_fct_us,ideal_us,flows_per_fabric_link,flows_per_link,fabric_link_max_bytes,fabric_link_mean_bytes,retransmits,drops,ecn_marks,pauses,events,wall_s\n");
    let seed_cols: Vec<String> = seeds.iter().map(|s| format!("seed {s}")).collect();
    let _ = writeln!(
        md,
        "| fabric | size | transport | {} | mean | over ideal | busiest link / mean link |",
        seed_cols.join(" | ")
    );
    let _ = writeln!(md, "|---|---|---|{}---|---|---|", "---|".repeat(seeds.len()));
    for c in cases {
        let mut cells = Vec::new();
        let mut maxes = Vec::new();
        let mut imbalance = Vec::new();
        let mut ideal = 0.0;
        for &seed in seeds {
            let topo = Topology::build(&c.fabric.spec()?)?;
            let mut cfg = SimConfig::paper_defaults(c.transport, &topo, 4096, seed);
            (c.tweak)(&mut cfg);
            ideal = ideal_fct_us(c.size, &cfg);
            let w = permutation(c.fabric.nodes, c.size, seed);
            let r = run(topo, cfg, &w, progress)?;
            let s = Summary::of(&r);
            eprintln!(
                "  {stem} {} {} {} seed {seed}: max FCT {:.1} µs ({:.1} s wall)",
                c.fabric.label(),
                size_label(c.size),
                c.label,
                s.max_fct_us,
                s.wall_s
            );
            let _ = writeln!(
                csv,
                "\"{}\",\"{}\",{},{},{seed},{},{},{:.2},{:.2},{ideal:.2},{},{},{},{},{},{},{},{},{},{:.3}",
                c.label,
                c.fabric.label(),
                c.size,
                c.transport.name(),
                s.flows,
                s.completed,
                s.max_fct_us,
                s.mean_fct_us,
                s.flows_per_fabric_link,
                s.flows_per_link,
                s.fabric_link_max_bytes,
                s.fabric_link_mean_bytes,
                s.retransmits,
                s.drops,
                s.ecn_marks,
                s.pauses,
                s.events,
                s.wall_s
            );
            cells.push(fct_cell_prec(&s, if s.max_fct_us < 1000.0 { 1 } else { 0 }));
            maxes.push(s.max_fct_us);
            imbalance.push(s.fabric_link_max_bytes as f64 / s.fabric_link_mean_bytes.max(1) as f64);
        }
        let mean = maxes.iter().sum::<f64>() / maxes.len() as f64;
        let imb = imbalance.iter().sum::<f64>() / imbalance.len() as f64;
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {mean:.1} | {:+.1} % | {imb:.2} |",
            c.fabric.label(),
            size_label(c.size),
            c.label,
            cells.join(" | "),
            (mean / ideal - 1.0) * 100.0
        );
    }
    std::fs::create_dir_all(out).map_err(|e| e.to_string())?;
    std::fs::write(out.join(format!("{stem}.csv")), csv).map_err(|e| e.to_string())?;
    Ok(md)
}
