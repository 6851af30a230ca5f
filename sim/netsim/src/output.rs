//! Reports: stdout summary, CSV files and PNG plots (plotters' bitmap
//! backend; text is drawn with an embedded DejaVu font through ab_glyph, so no
//! fontconfig or system fonts are needed).

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use plotters::prelude::*;

use crate::sim::Report;
use crate::time::PS_PER_US;

/// Headline numbers of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Flows in the workload.
    pub flows: usize,
    /// Flows that completed.
    pub completed: usize,
    /// Max FCT, µs.
    pub max_fct_us: f64,
    /// 99th percentile FCT, µs.
    pub p99_fct_us: f64,
    /// Mean FCT, µs.
    pub mean_fct_us: f64,
    /// Retransmitted packets.
    pub retransmits: u64,
    /// Congestion drops.
    pub drops: u64,
    /// Injected random losses.
    pub random_losses: u64,
    /// ECN marks.
    pub ecn_marks: u64,
    /// PFC pause frames.
    pub pauses: u64,
    /// Total paused link time, µs.
    pub pause_us: f64,
    /// Probes.
    pub probes: u64,
    /// Timeouts.
    pub timeouts: u64,
    /// ECN-echo ACKs at senders.
    pub ecn_echoes: u64,
    /// ECN-marked entropies skipped by STrack's path selection.
    pub lb_skips: u64,
    /// Largest per-flow reorder span (packets) over all flows.
    pub max_reorder: u32,
    /// 99th percentile over flows of the per-flow reorder span.
    pub p99_reorder: u32,
    /// Single-path transports: most flows sharing one switch-to-switch
    /// link (0 for sprayed transports).
    pub flows_per_fabric_link: u32,
    /// Single-path transports: most flows on any link, host links included.
    pub flows_per_link: u32,
    /// Bytes on the busiest switch-to-switch link.
    pub fabric_link_max_bytes: u64,
    /// Mean bytes over the switch-to-switch links that carried any.
    pub fabric_link_mean_bytes: u64,
    /// Simulated time, µs.
    pub sim_us: f64,
    /// Events.
    pub events: u64,
    /// Wall seconds.
    pub wall_s: f64,
}

impl Summary {
    /// Summarises a report.
    pub fn of(r: &Report) -> Self {
        let f = r.fcts_us();
        let pct = |q: f64| {
            if f.is_empty() {
                f64::NAN
            } else {
                f[((f.len() as f64 * q).ceil() as usize).clamp(1, f.len()) - 1]
            }
        };
        Self {
            flows: r.flows.len(),
            completed: r.completed(),
            max_fct_us: f.last().copied().unwrap_or(f64::NAN),
            p99_fct_us: pct(0.99),
            mean_fct_us: if f.is_empty() { f64::NAN } else { f.iter().sum::<f64>() / f.len() as f64 },
            retransmits: r.retransmits(),
            drops: r.drops,
            random_losses: r.random_losses,
            ecn_marks: r.ecn_marks,
            pauses: r.pauses,
            pause_us: r.pause_ps as f64 / PS_PER_US as f64,
            probes: r.probes,
            timeouts: r.timeouts,
            ecn_echoes: r.ecn_echoes,
            lb_skips: r.lb_skips,
            max_reorder: r.flows.iter().map(|f| f.max_reorder).max().unwrap_or(0),
            p99_reorder: {
                let mut v: Vec<u32> = r.flows.iter().map(|f| f.max_reorder).collect();
                v.sort_unstable();
                if v.is_empty() {
                    0
                } else {
                    v[((v.len() as f64 * 0.99).ceil() as usize).clamp(1, v.len()) - 1]
                }
            },
            flows_per_fabric_link: r.max_flows_per_fabric_link,
            flows_per_link: r.max_flows_per_link,
            fabric_link_max_bytes: r.fabric_link_max_bytes,
            fabric_link_mean_bytes: r.fabric_link_mean_bytes,
            sim_us: r.end_ps as f64 / PS_PER_US as f64,
            events: r.events,
            wall_s: r.wall_s,
        }
    }

    /// Events per wall second.
    pub fn events_per_s(&self) -> f64 {
        self.events as f64 / self.wall_s.max(1e-9)
    }

    /// Human-readable multi-line summary.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "flows          {} ({} completed)", self.flows, self.completed);
        let _ = writeln!(
            s,
            "FCT µs         max {:.1}  p99 {:.1}  mean {:.1}",
            self.max_fct_us, self.p99_fct_us, self.mean_fct_us
        );
        let _ =
            writeln!(s, "retransmits    {}  (probes {}, timeouts {})", self.retransmits, self.probes, self.timeouts);
        let _ = writeln!(s, "drops          {} congestion, {} random loss", self.drops, self.random_losses);
        let _ = writeln!(
            s,
            "ECN            {} marks, {} echoed to senders, {} marked entropies skipped",
            self.ecn_marks, self.ecn_echoes, self.lb_skips
        );
        let _ = writeln!(
            s,
            "reordering     per-flow reorder span (packets): max {}, p99 {}",
            self.max_reorder, self.p99_reorder
        );
        let _ = writeln!(s, "PFC            {} pauses, {:.1} µs paused link time", self.pauses, self.pause_us);
        if self.flows_per_link > 0 {
            let _ = writeln!(
                s,
                "single path    up to {} flows on one fabric link ({} on any link, host links included)",
                self.flows_per_fabric_link, self.flows_per_link
            );
        }
        let _ = writeln!(
            s,
            "fabric links   busiest carried {:.3} MB, mean {:.3} MB ({:.2}x)",
            self.fabric_link_max_bytes as f64 / 1e6,
            self.fabric_link_mean_bytes as f64 / 1e6,
            self.fabric_link_max_bytes as f64 / (self.fabric_link_mean_bytes.max(1)) as f64
        );
        let _ = writeln!(
            s,
            "simulated      {:.1} µs;  {} events in {:.3} s = {:.2} M events/s",
            self.sim_us,
            self.events,
            self.wall_s,
            self.events_per_s() / 1e6
        );
        s
    }
}

fn write_file(path: &Path, s: &str) -> std::io::Result<()> {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d)?;
    }
    std::fs::File::create(path)?.write_all(s.as_bytes())
}

/// Writes `fct.csv`, `queue.csv` and `tput.csv` into `dir`.
pub fn write_csvs(r: &Report, dir: &Path) -> std::io::Result<()> {
    let mut s = String::from(
        "flow,src,dst,bytes,start_us,end_us,fct_us,pkts_sent,retransmits,data_lost,delivered,max_reorder,max_ooo\n",
    );
    for (i, f) in r.flows.iter().enumerate() {
        let us = |p: u64| if p == u64::MAX { String::new() } else { format!("{:.3}", p as f64 / 1e6) };
        let fct = f.fct().map(|p| format!("{:.3}", p as f64 / 1e6)).unwrap_or_default();
        let _ = writeln!(
            s,
            "{i},{},{},{},{},{},{fct},{},{},{},{},{},{}",
            f.src,
            f.dst,
            f.bytes,
            us(f.start),
            us(f.end),
            f.pkts_sent,
            f.retransmits,
            f.data_lost,
            f.delivered,
            f.max_reorder,
            f.max_ooo
        );
    }
    write_file(&dir.join("fct.csv"), &s)?;
    let mut q = String::from("t_us,last_hop_qdelay_us,fabric_qdelay_us,drops,pauses\n");
    let n = r.last_hop_qdelay.len().max(r.fabric_qdelay.len()).max(r.drops_series.len()).max(r.pause_series.len());
    for b in 0..n {
        let g = |v: &Vec<u64>| v.get(b).copied().unwrap_or(0) as f64 / 1e6;
        let c = |v: &Vec<u32>| v.get(b).copied().unwrap_or(0);
        let _ = writeln!(
            q,
            "{:.1},{:.3},{:.3},{},{}",
            (b as u64 * r.series_bin_ps) as f64 / 1e6,
            g(&r.last_hop_qdelay),
            g(&r.fabric_qdelay),
            c(&r.drops_series),
            c(&r.pause_series)
        );
    }
    write_file(&dir.join("queue.csv"), &q)?;
    let mut t = String::from("t_us,flow,gbps\n");
    for (fi, v) in r.tput.iter().enumerate() {
        for (b, &bytes) in v.iter().enumerate() {
            let _ = writeln!(
                t,
                "{:.1},{fi},{:.3}",
                (b as u64 * r.tput_bin_ps) as f64 / 1e6,
                bytes as f64 * 8.0 / (r.tput_bin_ps as f64 / 1e3)
            );
        }
    }
    write_file(&dir.join("tput.csv"), &t)
}

fn ensure_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular());
    });
}

/// One named line of a plot.
pub type Series = (String, Vec<(f64, f64)>);

/// Line chart into a PNG. `x_fmt` formats x tick labels.
pub fn line_plot(
    path: &Path,
    title: &str,
    xlabel: &str,
    ylabel: &str,
    series: &[Series],
    x_fmt: &dyn Fn(&f64) -> String,
    y_log: bool,
) -> Result<(), String> {
    ensure_font();
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).map_err(|e| e.to_string())?;
    }
    let pts = series.iter().flat_map(|s| s.1.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in pts {
        if x.is_finite() && y.is_finite() {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
    }
    if x0 > x1 {
        (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    // legend where the data is not: upper left unless the left quarter peaks high
    let left_peak = series
        .iter()
        .flat_map(|s| s.1.iter())
        .filter(|p| p.0 <= x0 + (x1 - x0) * 0.3 && p.1.is_finite())
        .map(|p| p.1)
        .fold(f64::MIN, f64::max);
    let legend_pos =
        if left_peak > y0 + (y1 - y0) * 0.6 { SeriesLabelPosition::UpperRight } else { SeriesLabelPosition::UpperLeft };
    let root = BitMapBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let colors = [
        RGBColor(31, 119, 180),
        RGBColor(214, 39, 40),
        RGBColor(44, 160, 44),
        RGBColor(255, 127, 14),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
        RGBColor(188, 189, 34),
        RGBColor(23, 190, 207),
    ];
    macro_rules! draw {
        ($chart:expr) => {{
            let mut chart = $chart;
            chart
                .configure_mesh()
                .x_desc(xlabel)
                .y_desc(ylabel)
                .x_label_formatter(x_fmt)
                .label_style(("sans-serif", 14))
                .draw()
                .map_err(|e| e.to_string())?;
            for (i, (name, pts)) in series.iter().enumerate() {
                let c = colors[i % colors.len()];
                let pts: Vec<(f64, f64)> = pts
                    .iter()
                    .copied()
                    .filter(|p| p.0.is_finite() && p.1.is_finite() && (!y_log || p.1 > 0.0))
                    .collect();
                chart
                    .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))
                    .map_err(|e| e.to_string())?
                    .label(name.as_str())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2)));
                if pts.len() <= 40 {
                    chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, c.filled()))).map_err(|e| e.to_string())?;
                }
            }
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .label_font(("sans-serif", 14))
                .position(legend_pos)
                .draw()
                .map_err(|e| e.to_string())?;
        }};
    }
    let mut b = ChartBuilder::on(&root);
    b.caption(title, ("sans-serif", 20)).margin(12).margin_right(40).x_label_area_size(45).y_label_area_size(70);
    if y_log {
        let lo = if y0 > 0.0 { y0 * 0.8 } else { 1e-3 };
        draw!(b.build_cartesian_2d(x0..x1, (lo..(y1 * 1.25).max(lo * 10.0)).log_scale()).map_err(|e| e.to_string())?);
    } else {
        let top = if y1 > y0 { y1 * 1.08 } else { y0 + 1.0 };
        draw!(b.build_cartesian_2d(x0..x1, y0.min(0.0)..top).map_err(|e| e.to_string())?);
    }
    root.present().map_err(|e| e.to_string())?;
    Ok(())
}

/// FCT CDF, last-hop queue delay over time and per-flow throughput plots of
/// one run into `dir` (`fct_cdf.png`, `qdelay.png`, `tput.png`).
pub fn plot_run(r: &Report, dir: &Path, label: &str) -> Result<(), String> {
    let f = r.fcts_us();
    let n = f.len().max(1) as f64;
    let cdf: Vec<(f64, f64)> = f.iter().enumerate().map(|(i, &x)| (x, (i + 1) as f64 / n)).collect();
    let plain = |v: &f64| format!("{v:.0}");
    line_plot(
        &dir.join("fct_cdf.png"),
        &format!("FCT CDF — {label}"),
        "FCT (µs)",
        "fraction of flows",
        &[(label.to_string(), cdf)],
        &plain,
        false,
    )?;
    line_plot(
        &dir.join("qdelay.png"),
        &format!("Max queueing delay — {label}"),
        "time (µs)",
        "queueing delay (µs)",
        &qdelay_series(r),
        &plain,
        false,
    )?;
    let t: Vec<Series> = r
        .tput
        .iter()
        .enumerate()
        .map(|(i, v)| {
            (
                format!("flow {i}"),
                v.iter()
                    .enumerate()
                    .map(|(b, &bytes)| {
                        ((b as u64 * r.tput_bin_ps) as f64 / 1e6, bytes as f64 * 8.0 / (r.tput_bin_ps as f64 / 1e3))
                    })
                    .collect(),
            )
        })
        .collect();
    line_plot(
        &dir.join("tput.png"),
        &format!("Per-flow throughput — {label}"),
        "time (µs)",
        "Gbit/s",
        &t,
        &plain,
        false,
    )
}

/// Last-hop and fabric queueing-delay series of a run (µs vs µs).
pub fn qdelay_series(r: &Report) -> Vec<Series> {
    let conv = |v: &Vec<u64>| {
        v.iter()
            .enumerate()
            .map(|(b, &d)| ((b as u64 * r.series_bin_ps) as f64 / 1e6, d as f64 / 1e6))
            .collect::<Vec<_>>()
    };
    vec![
        ("last hop (ToR→host)".into(), conv(&r.last_hop_qdelay)),
        ("fabric (switch↔switch)".into(), conv(&r.fabric_qdelay)),
    ]
}
