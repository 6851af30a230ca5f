//! `rnic-netsim`: command-line front end. `rnic-netsim run --help` and
//! `rnic-netsim experiment --help` list every option; see README.md.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};
use rnic_model::dcqcn::DcqcnParams;
use rnic_netsim::experiments::{self, Fabric, Tune};
use rnic_netsim::output::{plot_run, write_csvs, Summary};
use rnic_netsim::sim::{Sim, SimConfig, Transport};
use rnic_netsim::time::PS_PER_US;
use rnic_netsim::topo::{FabricSpec, Topology};
use rnic_netsim::traffic::{self, Workload};

#[derive(Parser)]
#[command(name = "rnic-netsim", version, about = "Packet-level fabric simulator: STrack vs RoCEv2 vs SRNIC")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, ValueEnum)]
enum TopoKind {
    /// 2-tier leaf-spine ("2-tier fat tree" in the STrack paper).
    LeafSpine,
    /// 3-tier k-ary fat tree.
    FatTree,
}

#[derive(Clone, Copy, ValueEnum)]
enum DcqcnProfile {
    /// NVIDIA ConnectX firmware defaults (α period 1 µs, increase timer 300 µs,
    /// byte counter 32 KB, F = 1, R_AI 5 Mb/s, R_HAI 50 Mb/s), CNPs ≥ 50 µs apart.
    Connectx,
    /// htsim's DCQCN: R_AI = line/20, R_HAI = line/10.
    Htsim,
    /// The DCQCN paper's steps scaled by line rate: R_AI = line/1000, R_HAI = line/100.
    Paper,
}

impl DcqcnProfile {
    fn params(self, gbps: u32) -> DcqcnParams {
        match self {
            DcqcnProfile::Connectx => DcqcnParams::connectx(gbps),
            DcqcnProfile::Htsim => DcqcnParams::htsim(gbps),
            DcqcnProfile::Paper => DcqcnParams::for_line_rate(gbps),
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum TrafficKind {
    /// Random permutation.
    Perm,
    /// N:1 incast to host 0.
    Incast,
    /// All-to-all with bounded parallelism.
    A2a,
    /// Ring allreduce over all hosts.
    Ring,
    /// Double-binary-tree allreduce over all hosts.
    Dbt,
    /// One flow from host 0 to the first host of the next ToR.
    Single,
}

#[derive(Clone, Copy, ValueEnum)]
enum Scenario {
    /// Permutation max FCT vs size, 128 and 1024 nodes, 1:1 and 4:1.
    Perm,
    /// Permutation with 0.78 % and 3.1 % of ToR-spine links down.
    PermFail,
    /// 8:1, 32:1, 128:1 incast.
    Incast,
    /// One long flow under 0.1 %, 1 %, 5 % random loss.
    Loss,
    /// Speed: 128- and 1024-node permutation of 2 MB.
    Bench,
    /// STrack's window bounds on 128- and 1024-host 3-tier fat trees, several seeds.
    StrackCwnd,
    /// STrack against RoCEv2 (DCQCN profiles, PFC alone) on 1024 hosts, several seeds.
    Baseline,
}

#[derive(Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once per run
enum Cmd {
    /// One simulation.
    Run(RunArgs),
    /// A set of runs reproducing one of STrack's evaluations (Markdown to stdout).
    Experiment {
        /// Which scenario.
        #[arg(value_enum)]
        scenario: Scenario,
        /// Output directory for CSV and PNG files.
        #[arg(long, default_value = "out/netsim")]
        out: PathBuf,
        /// Fewer points (CI-sized).
        #[arg(long)]
        quick: bool,
        /// Seed (single-seed scenarios).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Seeds (strack-cwnd, baseline).
        #[arg(long, value_delimiter = ',', default_value = "1,2,3")]
        seeds: Vec<u64>,
        /// STrack maximum window in % of the BDP (perm, perm-fail, incast;
        /// default: the simulator's).
        #[arg(long)]
        max_cwnd_pct: Option<u32>,
        /// STrack window at a flow's start in % of the BDP (perm, perm-fail,
        /// incast; default: the simulator's).
        #[arg(long)]
        init_cwnd_pct: Option<u32>,
    },
}

#[derive(clap::Args)]
struct RunArgs {
    /// Topology kind (ignored with --topo-file).
    #[arg(long, value_enum, default_value = "leaf-spine")]
    topo: TopoKind,
    /// htsim topology file (Nodes/Tiers/Podsize/Tier blocks).
    #[arg(long)]
    topo_file: Option<PathBuf>,
    /// Hosts.
    #[arg(long, default_value_t = 128)]
    nodes: u32,
    /// Switch radix.
    #[arg(long, default_value_t = 16)]
    radix: u32,
    /// Oversubscription at the ToR (n means n:1).
    #[arg(long, default_value_t = 1)]
    oversub: u32,
    /// Link speed, Gbit/s.
    #[arg(long, default_value_t = 400)]
    gbps: u32,
    /// Per-link latency incl. switching, ns.
    #[arg(long, default_value_t = 1000)]
    latency_ns: u32,
    /// Write the fabric as an htsim topology file and continue.
    #[arg(long)]
    write_topo: Option<PathBuf>,
    /// Transport.
    #[arg(long, value_enum, default_value = "strack")]
    transport: Transport,
    /// Traffic pattern (ignored with --cm-file).
    #[arg(long, value_enum, default_value = "perm")]
    traffic: TrafficKind,
    /// htsim connection-matrix file.
    #[arg(long)]
    cm_file: Option<PathBuf>,
    /// Write the workload as an htsim connection matrix and continue.
    #[arg(long)]
    write_cm: Option<PathBuf>,
    /// Message size, bytes (suffixes K, M accepted).
    #[arg(long, default_value = "2M", value_parser = parse_size)]
    size: u64,
    /// Incast fan-in.
    #[arg(long, default_value_t = 32)]
    fan_in: u32,
    /// All-to-all parallelism.
    #[arg(long, default_value_t = 8)]
    parallel: u32,
    /// MTU (payload bytes per packet).
    #[arg(long, default_value_t = 4096)]
    mtu: u32,
    /// STrack/SRNIC maximum window, % of the BDP (default: STrack 125, SRNIC 100).
    #[arg(long)]
    max_cwnd_pct: Option<u32>,
    /// STrack window at a flow's start, % of the BDP (default: the maximum window).
    #[arg(long)]
    init_cwnd_pct: Option<u32>,
    /// Queue control packets (ACK/SACK/NAK/CNP) FIFO behind data at switch
    /// ports instead of in a strict-priority class.
    #[arg(long)]
    no_ctrl_priority: bool,
    /// STrack: a fixed out-of-order loss threshold in packets instead of
    /// the paper's max(window in packets, 5).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    ooo_threshold: Option<u32>,
    /// ECN Kmin, % of the BDP (default: STrack 25, RoCEv2 100).
    #[arg(long)]
    ecn_kmin_pct: Option<u32>,
    /// ECN Kmax, % of the BDP (default: STrack 75, RoCEv2 100).
    #[arg(long)]
    ecn_kmax_pct: Option<u32>,
    /// DCQCN profile (RoCEv2): `connectx` (NVIDIA ConnectX defaults, the
    /// default), `htsim` (the paper's timers, R_AI = line/20, R_HAI =
    /// line/10) or `paper` (the DCQCN paper's, steps scaled by line rate:
    /// line/1000, line/100).
    #[arg(long, value_enum, default_value = "connectx")]
    dcqcn: DcqcnProfile,
    /// DCQCN additive-increase step R_AI, Mb/s (overrides the profile).
    #[arg(long)]
    dcqcn_rai_mbps: Option<u32>,
    /// DCQCN hyper-increase step R_HAI, Mb/s (overrides the profile).
    #[arg(long)]
    dcqcn_rhai_mbps: Option<u32>,
    /// DCQCN rate-increase timer, µs (overrides the profile).
    #[arg(long)]
    dcqcn_timer_us: Option<u64>,
    /// DCQCN α-decay timer, µs (overrides the profile).
    #[arg(long)]
    dcqcn_alpha_timer_us: Option<u64>,
    /// DCQCN fast-recovery stages F (overrides the profile).
    #[arg(long)]
    dcqcn_f: Option<u32>,
    /// Minimum CNP spacing per flow at the receiver, µs (overrides the profile).
    #[arg(long)]
    dcqcn_cnp_us: Option<u64>,
    /// DCQCN byte counter, bytes (overrides the profile).
    #[arg(long, value_parser = parse_size)]
    dcqcn_byte_counter: Option<u64>,
    /// SACK coalescing at STrack/SRNIC receivers, bytes (default: one SACK per packet).
    #[arg(long, value_parser = parse_size)]
    ack_coalesce: Option<u64>,
    /// Random loss rate on delivery to hosts (e.g. 0.01 = 1 %).
    #[arg(long, default_value_t = 0.0)]
    loss: f64,
    /// Take this many random ToR-spine links down.
    #[arg(long, default_value_t = 0)]
    fail_links: u32,
    /// Take this fraction of ToR-spine links down (e.g. 0.0078).
    #[arg(long)]
    fail_frac: Option<f64>,
    /// Slow receiver: HOST:GBPS sets the ToR→HOST link speed.
    #[arg(long)]
    slow_receiver: Option<String>,
    /// Slow uplink: TOR:K:GBPS sets the speed of ToR TOR's K-th uplink
    /// (towards a spine or aggregation switch), both directions.
    #[arg(long)]
    slow_uplink: Option<String>,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Stop at this simulated time, µs.
    #[arg(long)]
    stop_us: Option<u64>,
    /// Output directory for CSV files (and PNGs with --plots).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Draw PNG plots into --out.
    #[arg(long)]
    plots: bool,
    /// Hide the progress bar.
    #[arg(long)]
    quiet: bool,
}

/// Bytes, optionally with `K`, `M` or `G` (binary), as `rnic-perf` reads them.
fn parse_size(v: &str) -> Result<u64, String> {
    Ok(rnic_units::parse_size(v)?)
}

fn run_cmd(a: RunArgs) -> Result<(), String> {
    let spec = match &a.topo_file {
        Some(p) => FabricSpec::from_htsim(&std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?)?,
        None => match a.topo {
            TopoKind::LeafSpine => FabricSpec::leaf_spine(a.nodes, a.radix, a.oversub, a.gbps, a.latency_ns)?,
            TopoKind::FatTree => FabricSpec::fat_tree(a.nodes, a.radix, a.oversub, a.gbps, a.latency_ns)?,
        },
    };
    if let Some(p) = &a.write_topo {
        std::fs::write(p, spec.to_htsim()).map_err(|e| e.to_string())?;
    }
    let mut topo = Topology::build(&spec)?;
    let n_links = topo.tier1_links().len() as u32;
    let fail = a.fail_frac.map(|f| (f * n_links as f64).round() as u32).unwrap_or(a.fail_links);
    if fail > 0 {
        topo.fail_random_tier1_links(fail, a.seed)?;
        eprintln!("{fail} of {n_links} ToR-spine links down");
    }
    if let Some(sr) = &a.slow_receiver {
        let (h, g) = sr.split_once(':').ok_or("--slow-receiver HOST:GBPS")?;
        let h: u32 = h.parse().map_err(|_| "bad host")?;
        let g: u32 = g.parse().map_err(|_| "bad Gbps")?;
        let p = topo.host_down[h as usize];
        topo.ports[p as usize].gbps = g;
    }
    if let Some(su) = &a.slow_uplink {
        let f: Vec<&str> = su.split(':').collect();
        let [t, k, g] = f[..] else { return Err(format!("--slow-uplink {su}: expected TOR:K:GBPS")) };
        let t: u32 = t.parse().map_err(|_| format!("--slow-uplink {su}: bad ToR {t}"))?;
        let k: usize = k.parse().map_err(|_| format!("--slow-uplink {su}: bad uplink {k}"))?;
        let g: u32 = g.parse().map_err(|_| format!("--slow-uplink {su}: bad Gb/s {g}"))?;
        if t as usize >= topo.tors.len() {
            return Err(format!("--slow-uplink {su}: there are {} ToRs", topo.tors.len()));
        }
        let ups = rnic_netsim::sim::tier1_port_ids(&topo, t);
        let &p = ups.get(k).ok_or(format!("--slow-uplink {su}: ToR {t} has {} uplinks", ups.len()))?;
        let r = topo.ports[p as usize].reverse;
        topo.ports[p as usize].gbps = g;
        topo.ports[r as usize].gbps = g;
        eprintln!("ToR {t}'s uplink {k} at {g} Gb/s");
    }
    let n = spec.hosts;
    let w = match &a.cm_file {
        Some(p) => Workload::from_htsim(&std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?)?,
        None => match a.traffic {
            TrafficKind::Perm => traffic::permutation(n, a.size, a.seed),
            TrafficKind::Incast => traffic::incast(n, a.fan_in, 0, a.size, spec.hosts_per_tor, a.seed),
            TrafficKind::A2a => traffic::all_to_all(n, a.size, a.parallel),
            TrafficKind::Ring => traffic::ring_allreduce(&(0..n).collect::<Vec<_>>(), a.size),
            TrafficKind::Dbt => traffic::dbt_allreduce(&(0..n).collect::<Vec<_>>(), a.size),
            TrafficKind::Single => Workload {
                nodes: n,
                flows: vec![traffic::FlowSpec {
                    src: 0,
                    dst: spec.hosts_per_tor % n,
                    bytes: a.size,
                    start: 0,
                    deps: vec![],
                }],
            },
        },
    };
    if let Some(p) = &a.write_cm {
        std::fs::write(p, w.to_htsim()).map_err(|e| e.to_string())?;
    }
    let mut cfg = SimConfig::paper_defaults(a.transport, &topo, a.mtu, a.seed);
    cfg.loss_ppm = (a.loss * 1e6).round() as u32;
    if let Some(p) = a.max_cwnd_pct {
        cfg.max_cwnd_pct = p;
    }
    cfg.dcqcn = a.dcqcn.params(cfg.host_gbps);
    if let Some(v) = a.dcqcn_rai_mbps {
        cfg.dcqcn.rai_mbps = v;
    }
    if let Some(v) = a.dcqcn_rhai_mbps {
        cfg.dcqcn.rhai_mbps = v;
    }
    if let Some(v) = a.dcqcn_timer_us {
        cfg.dcqcn.timer_ns = v * 1000;
    }
    if let Some(v) = a.dcqcn_alpha_timer_us {
        cfg.dcqcn.alpha_timer_ns = v * 1000;
    }
    if let Some(v) = a.dcqcn_f {
        cfg.dcqcn.f = v;
    }
    if let Some(v) = a.dcqcn_cnp_us {
        cfg.dcqcn.cnp_interval_ns = v * 1000;
    }
    if let Some(v) = a.dcqcn_byte_counter {
        cfg.dcqcn.byte_counter = v;
    }
    cfg.init_cwnd_pct = a.init_cwnd_pct.or(cfg.init_cwnd_pct);
    cfg.ctrl_priority &= !a.no_ctrl_priority;
    cfg.ooo_threshold = a.ooo_threshold.or(cfg.ooo_threshold);
    let bdp = cfg.net().bdp_bytes();
    if let Some(p) = a.ecn_kmin_pct {
        cfg.switch.kmin = bdp * p as u64 / 100;
    }
    if let Some(p) = a.ecn_kmax_pct {
        cfg.switch.kmax = bdp * p as u64 / 100;
    }
    if cfg.switch.kmax < cfg.switch.kmin {
        return Err(format!("ECN Kmax {} B below Kmin {} B", cfg.switch.kmax, cfg.switch.kmin));
    }
    if let Some(b) = a.ack_coalesce {
        cfg.ack_coalesce_bytes = b.max(1) as u32;
    }
    if let Some(s) = a.stop_us {
        cfg.stop_at_ps = s * PS_PER_US;
    }
    println!(
        "rnic-netsim: {} hosts, {}-tier, {}:1, {} Gb/s; {} flows; transport {}; seed {}; base RTT {} ns; loss {} ppm",
        spec.hosts,
        spec.tiers,
        spec.hosts_per_tor / spec.tor_up,
        spec.gbps[0],
        w.flows.len(),
        a.transport.name(),
        a.seed,
        cfg.base_rtt_ns,
        cfg.loss_ppm
    );
    let progress = !a.quiet && std::io::stderr().is_terminal();
    let r = Sim::new(topo, cfg, &w)?.with_progress(progress).run();
    print!("{}", Summary::of(&r).text());
    if let Some(out) = &a.out {
        write_csvs(&r, out).map_err(|e| e.to_string())?;
        if a.plots {
            plot_run(&r, out, a.transport.name())?;
        }
        println!("wrote {}", out.display());
    }
    Ok(())
}

fn experiment(s: Scenario, out: PathBuf, quick: bool, seed: u64, seeds: &[u64], tune: Tune) -> Result<(), String> {
    let progress = std::io::stderr().is_terminal();
    let kib = |k: u64| k << 10;
    let mib = |m: u64| m << 20;
    let all3 = [Transport::Strack, Transport::StrackOblivious, Transport::Roce, Transport::RocePfc];
    match s {
        Scenario::Perm | Scenario::PermFail => {
            let sizes: Vec<u64> =
                if quick { vec![kib(128), mib(2)] } else { vec![kib(128), kib(512), mib(2), mib(16)] };
            let nodes: &[u32] = if quick { &[128] } else { &[128, 1024] };
            for &n in nodes {
                let cases: Vec<(u32, u32, String)> = if matches!(s, Scenario::Perm) {
                    vec![(1, 0, format!("perm_{n}_1to1")), (4, 0, format!("perm_{n}_4to1"))]
                } else {
                    let f = Fabric::two_tier(n, 1);
                    let links = Topology::build(&f.spec()?)?.tier1_links().len() as f64;
                    let a = (links * 0.0078).round().max(1.0) as u32;
                    let b = (links * 0.031).round().max(1.0) as u32;
                    vec![(1, a, format!("permfail_{n}_{a}links")), (1, b, format!("permfail_{n}_{b}links"))]
                };
                for (os, failed, stem) in cases {
                    let stem = format!("{stem}{}", tune.suffix());
                    let f = Fabric::two_tier(n, os);
                    println!(
                        "\n### {stem}: {}{}\n",
                        f.label(),
                        if failed > 0 { format!(", {failed} ToR-spine links down") } else { String::new() }
                    );
                    println!("max FCT (µs):\n");
                    print!("{}", experiments::perm_sweep(f, &sizes, &all3, failed, tune, seed, &out, &stem, progress)?);
                }
            }
        }
        Scenario::Incast => {
            let f = Fabric::two_tier(if quick { 128 } else { 1024 }, 1);
            let fans: &[u32] = if quick { &[8, 32] } else { &[8, 32, 128] };
            let size = if quick { mib(2) } else { mib(16) };
            println!("\n### incast: {}, {} MB per sender\n", f.label(), size >> 20);
            print!(
                "{}",
                experiments::incast_sweep(
                    f,
                    fans,
                    size,
                    &[Transport::Strack, Transport::Roce, Transport::RocePfc],
                    tune,
                    seed,
                    &out,
                    progress
                )?
            );
        }
        Scenario::Loss => {
            let f = Fabric::two_tier(128, 1);
            let size = if quick { mib(8) } else { mib(64) };
            println!("\n### loss: one {} MB flow across ToRs, goodput (Gbit/s)\n", size >> 20);
            print!(
                "{}",
                experiments::loss_sweep(
                    f,
                    size,
                    &[0, 1_000, 10_000, 50_000],
                    &[Transport::Strack, Transport::Srnic, Transport::Roce],
                    seed,
                    &out,
                    progress
                )?
            );
        }
        Scenario::Bench => {
            let fabs = if quick {
                vec![Fabric::two_tier(128, 1)]
            } else {
                vec![Fabric::two_tier(128, 1), Fabric::two_tier(1024, 1)]
            };
            println!("\n### speed: STrack permutation of 2 MB\n");
            print!("{}", experiments::bench(&fabs, mib(2), seed)?);
        }
        Scenario::StrackCwnd => {
            let fabs = if quick {
                vec![Fabric::fat_tree(128, 1)]
            } else {
                vec![Fabric::fat_tree(128, 1), Fabric::fat_tree(1024, 1)]
            };
            let settings: [(u32, Option<u32>); 4] = [(100, None), (125, None), (150, None), (125, Some(100))];
            let mut cases = Vec::new();
            for f in fabs {
                for size in [mib(2), mib(16)] {
                    for (max, init) in settings {
                        let label = match init {
                            Some(i) => format!("strack, max cwnd {max} %, initial {i} %"),
                            None => format!("strack, max cwnd {max} %"),
                        };
                        cases.push(experiments::Case {
                            label,
                            fabric: f,
                            size,
                            transport: Transport::Strack,
                            tweak: Box::new(move |c: &mut SimConfig| {
                                c.max_cwnd_pct = max;
                                c.init_cwnd_pct = init;
                            }),
                        });
                    }
                }
            }
            println!("\n### strack-cwnd: STrack's window bounds, 3-tier fat trees, permutation, max FCT (µs)\n");
            print!("{}", experiments::seeds_table(&cases, seeds, &out, "strack_cwnd", progress)?);
        }
        Scenario::Baseline => {
            let fabs = if quick {
                vec![Fabric::two_tier(128, 1), Fabric::fat_tree(128, 1)]
            } else {
                vec![Fabric::two_tier(1024, 1), Fabric::fat_tree(1024, 1)]
            };
            let mut cases = Vec::new();
            for f in fabs {
                for size in [mib(2), mib(16)] {
                    let mut add = |label: &str, t: Transport, tweak: Box<dyn Fn(&mut SimConfig)>| {
                        cases.push(experiments::Case { label: label.into(), fabric: f, size, transport: t, tweak })
                    };
                    add("strack", Transport::Strack, Box::new(|_| {}));
                    add(
                        "roce, DCQCN paper steps (old default)",
                        Transport::Roce,
                        Box::new(|c: &mut SimConfig| c.dcqcn = DcqcnParams::for_line_rate(c.host_gbps)),
                    );
                    add(
                        "roce, DCQCN htsim steps",
                        Transport::Roce,
                        Box::new(|c: &mut SimConfig| c.dcqcn = DcqcnParams::htsim(c.host_gbps)),
                    );
                    add("roce, DCQCN ConnectX (default)", Transport::Roce, Box::new(|_| {}));
                    add("roce-pfc (PFC alone)", Transport::RocePfc, Box::new(|_| {}));
                }
            }
            println!("\n### baseline: STrack vs RoCEv2, permutation, max FCT (µs; single path: (most flows on one fabric link))\n");
            print!("{}", experiments::seeds_table(&cases, seeds, &out, "baseline", progress)?);
        }
    }
    Ok(())
}

fn main() {
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Run(a) => run_cmd(a),
        Cmd::Experiment { scenario, out, quick, seed, seeds, max_cwnd_pct, init_cwnd_pct } => {
            experiment(scenario, out, quick, seed, &seeds, Tune { max_cwnd_pct, init_cwnd_pct })
        }
    };
    if let Err(e) = r {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_parse_and_overflow_is_refused() {
        assert_eq!(parse_size("2M"), Ok(2 << 20));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("17"), Ok(17));
        assert_eq!(parse_size("16777216G"), Ok(1 << 54));
        assert!(parse_size("17179869184G").is_err(), "2^34 GiB = 2^64 B wraps to 0");
        assert!(parse_size("18446744073709551615K").is_err());
        assert!(parse_size("0").is_err());
        assert!(parse_size("0K").is_err());
        assert!(parse_size("x").is_err());
        assert!(parse_size("").is_err());
    }
}
