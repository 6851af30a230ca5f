//! `rnic-perf`: perftest-style bandwidth benchmark over two cosimulated NICs
//! (NIC0 requester, NIC1 responder), every byte verified. Tests: `write_bw`,
//! `send_bw` (data from NIC0 to NIC1) and `read_bw` (NIC0 reads NIC1's memory).

use clap::{Parser, ValueEnum};
use rnic::Mtu;
use rnic_sim::{RandomFaults, SimConfig};
use rnic_tools::bench::{self, BenchConfig, Mode, Report};
use rnic_tools::cosim::Nics;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, ValueEnum)]
#[allow(clippy::enum_variant_names)] // perftest's names: ib_write_bw, ib_send_bw, ib_read_bw
enum Test {
    /// RDMA WRITE bandwidth (like ib_write_bw).
    #[value(name = "write_bw")]
    WriteBw,
    /// SEND bandwidth (like ib_send_bw).
    #[value(name = "send_bw")]
    SendBw,
    /// RDMA READ bandwidth (like ib_read_bw): NIC0 reads NIC1's memory into its own.
    #[value(name = "read_bw")]
    ReadBw,
}

/// Bandwidth and message rate between two cosimulated rnic NICs (NIC0
/// requester, NIC1 responder): write_bw, send_bw or read_bw.
#[derive(Parser, Debug)]
#[command(name = "rnic-perf", version, about)]
struct Args {
    /// Benchmark to run.
    test: Test,
    /// Message size in bytes.
    #[arg(short = 's', long = "size", default_value_t = 65536)]
    size: u32,
    /// Number of messages (spread round-robin over the QPs).
    #[arg(short = 'n', long = "iters", default_value_t = 1000)]
    iters: u64,
    /// Number of QPs.
    #[arg(short = 'q', long = "qps", default_value_t = 1)]
    qps: u32,
    /// Path MTU in bytes (256, 512, 1024, 2048 or 4096).
    #[arg(long, default_value_t = 4096)]
    mtu: u32,
    /// Write every frame to this pcap file.
    #[arg(long)]
    pcap: Option<PathBuf>,
    /// PCIe round trip of DMA reads, ns.
    #[arg(long, default_value_t = 1000)]
    pcie_rtt_ns: u64,
    /// Work requests in flight per QP.
    #[arg(short = 't', long = "tx-depth", default_value_t = 128)]
    tx_depth: u32,
    /// Seed of the data patterns and initial PSNs.
    #[arg(long, default_value_t = 0x5EED_2026)]
    seed: u64,
    /// Fail when nothing completes for this many cycles.
    #[arg(long, default_value_t = 2_000_000)]
    stall_cycles: u64,
    /// Lose this percentage of the frames on each link (both directions).
    /// The host library's slow path recovers (go-back-N resends; the
    /// report counts NAKs, timeouts and rewinds).
    #[arg(long, default_value_t = 0.0, value_parser = percent)]
    loss: f64,
    /// Mean length of a loss burst in frames (1: independent losses).
    #[arg(long, default_value_t = 1.0)]
    burst: f64,
    /// Delay each frame by up to this many ns (uniform), which reorders
    /// frames closer together than that.
    #[arg(long, default_value_t = 0)]
    reorder_ns: u64,
    /// Deliver this percentage of the frames twice.
    #[arg(long, default_value_t = 0.0, value_parser = percent)]
    dup: f64,
    /// Flip one bit in this percentage of the frames (the receiver's ICRC check drops them).
    #[arg(long, default_value_t = 0.0, value_parser = percent)]
    corrupt: f64,
}

/// A percentage in [0, 100].
fn percent(v: &str) -> Result<f64, String> {
    let p: f64 = v.parse().map_err(|_| format!("{v} is not a number"))?;
    if (0.0..=100.0).contains(&p) {
        Ok(p)
    } else {
        Err(format!("{v} is not a percentage between 0 and 100"))
    }
}

fn main() -> ExitCode {
    let a = Args::parse();
    match run(&a) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rnic-perf: FAILED: {e}");
            eprintln!("rnic-perf: seed {:#x}; rerun with the same arguments to reproduce", a.seed);
            ExitCode::FAILURE
        }
    }
}

fn run(a: &Args) -> Result<(), String> {
    let mtu = Mtu::from_bytes(a.mtu).ok_or(format!("--mtu {} is not one of 256, 512, 1024, 2048, 4096", a.mtu))?;
    let cfg = SimConfig { pcap: a.pcap.clone(), pcie_rtt_ns: a.pcie_rtt_ns, ..Default::default() };
    let nics = Nics::new(2, cfg)?;
    if a.burst < 1.0 {
        return Err(format!("--burst {} must be at least 1 (frames)", a.burst));
    }
    let faults = RandomFaults {
        loss: a.loss / 100.0,
        burst: a.burst,
        dup: a.dup / 100.0,
        corrupt: a.corrupt / 100.0,
        jitter_ns: a.reorder_ns,
        seed: a.seed,
    };
    if !faults.is_perfect() {
        for nic in 0..2 {
            // Each direction gets its own pattern, reproducible from --seed.
            nics.cluster
                .borrow_mut()
                .faults(nic)
                .set_random(RandomFaults { seed: a.seed ^ ((nic as u64 + 1) << 32), ..faults });
        }
    }
    let mut c = BenchConfig::new(match a.test {
        Test::WriteBw => Mode::WriteBw,
        Test::SendBw => Mode::SendBw,
        Test::ReadBw => Mode::ReadBw,
    });
    c.size = a.size;
    c.iters = a.iters;
    c.qps = a.qps;
    c.mtu = mtu;
    c.tx_depth = a.tx_depth;
    c.seed = a.seed;
    c.stall_cycles = a.stall_cycles;
    c.progress = std::io::stderr().is_terminal();
    let (name, flow) = match a.test {
        Test::WriteBw => ("RDMA_Write", "NIC0 -> NIC1"),
        Test::SendBw => ("Send", "NIC0 -> NIC1"),
        Test::ReadBw => ("RDMA_Read", "NIC0 reads NIC1"),
    };
    println!("---------------------------------------------------------------------------------------");
    println!("                    {name} BW Test (rnic cosimulation, {flow})");
    println!(" Number of qps   : {:<10} Transport type : RC", a.qps);
    println!(" Mtu             : {:<10} TX depth       : {}", a.mtu, a.tx_depth);
    println!(
        " PCIe RTT        : {:<10} Clock          : {} MHz",
        format!("{} ns", a.pcie_rtt_ns),
        rnic_spec::params::CLOCK_HZ / 1_000_000
    );
    if !faults.is_perfect() {
        println!(
            " Link faults     : loss {}% (bursts of {} frames), reorder up to {} ns, dup {}%, corrupt {}%, both directions",
            a.loss, a.burst, a.reorder_ns, a.dup, a.corrupt
        );
    }
    println!("---------------------------------------------------------------------------------------");
    let result = bench::run(&nics.ctxs[0], &nics.ctxs[1], &c);
    let violations = nics.violations();
    let r = match result {
        Ok(r) => r,
        Err(e) => {
            let mut msg = e.to_string();
            if !violations.is_empty() {
                msg += &format!(
                    "\nDMA violations ({}): {}",
                    violations.len(),
                    violations.iter().take(5).cloned().collect::<Vec<_>>().join("; ")
                );
            }
            return Err(msg);
        }
    };
    print_report(a, &r);
    let st = nics.stats();
    if !faults.is_perfect() {
        let rec = &r.recovery;
        let reg = |nic: usize, off: u32| nics.cluster.borrow_mut().read_reg(nic, off).unwrap_or(0);
        let entries = reg(0, rnic_spec::regs::counters::CTRLQ_ENTRIES);
        // CtrlQ entries the NIC wrote plus the slow path's 8-byte register writes.
        let slow_bytes = entries * rnic_spec::desc::CTRLQ_ENTRY_BYTES as u64 + rec.reg_writes * 8;
        let payload = r.size as u64 * r.iters;
        // The slow path runs in both contexts' polling threads (the requester's handles the NAKs).
        let (cpu, entries) = nics
            .ctxs
            .iter()
            .map(|c| c.slow_path_time())
            .fold((std::time::Duration::ZERO, 0u64), |(t, n), (dt, dn)| (t + dt, n + dn));
        let run_us = r.cycles as f64 * 1e6 / rnic_spec::params::CLOCK_HZ as f64;
        let cpu_us = cpu.as_secs_f64() * 1e6;
        println!(
            " loss recovery : {} PSN NAKs, {} timeouts, {} RNR NAKs, {} placed out of order, {} resends, {} resent again, {} rewinds; slow path PCIe {} B ({:.3}% of payload)",
            rec.psn_naks,
            rec.timeouts,
            rec.rnr_naks,
            rec.ooo_placed,
            rec.resends,
            rec.resends_again,
            rec.rewinds,
            slow_bytes,
            100.0 * slow_bytes as f64 / payload.max(1) as f64
        );
        println!(
            " episodes      : {} recovery episodes; the send path skipped to lACK {} times",
            rec.episodes,
            reg(0, rnic_spec::regs::counters::SQ_SKIPS)
        );
        println!(
            " SR windows    : {} packets placed out of order on NIC1, {} not placed for want of a free window (pool of {})",
            reg(1, rnic_spec::regs::counters::RX_OOO_PLACED),
            reg(1, rnic_spec::regs::counters::RX_OOO_NO_WINDOW),
            rnic_spec::params::SR_POOL
        );
        println!(
            " slow path CPU : {:.1} us for {} CtrlQ entries ({:.0} ns each), {:.2}% of one core over the {:.1} us run",
            cpu_us,
            entries,
            if entries > 0 { cpu_us * 1e3 / entries as f64 } else { 0.0 },
            100.0 * cpu_us / run_us.max(1e-9),
            run_us
        );
        for (i, l) in st.links.iter().enumerate() {
            println!(
                " link of NIC{i}: {} frames, {} dropped, {} delayed, {} duplicated, {} corrupted, {} retransmitted",
                l.frames, l.dropped, l.delayed, l.duplicated, l.corrupted, l.retransmissions
            );
        }
    }
    println!(
        " simulator: {} cycles in {:.2} s of stepping, {:.0} cycles/s (whole run incl. setup)",
        st.cycles,
        st.wall.as_secs_f64(),
        st.cycles_per_sec
    );
    println!(" DMA violations: {}", violations.len());
    if !violations.is_empty() {
        for v in violations.iter().take(10) {
            println!("   {v}");
        }
        return Err(format!("{} DMA violations", violations.len()));
    }
    println!(" verified {} bytes: OK", r.verified_bytes);
    Ok(())
}

fn print_report(a: &Args, r: &Report) {
    println!("{}", Report::header());
    println!("{}", r.row());
    println!("---------------------------------------------------------------------------------------");
    println!(
        " simulated {:.3} us ({} cycles at {} MHz), wall {:.2} s, {:.0} simulated cycles per wall second (incl. host work and verification)",
        r.secs() * 1e6,
        r.cycles,
        rnic_spec::params::CLOCK_HZ / 1_000_000,
        r.wall.as_secs_f64(),
        r.cycles_per_sec()
    );
    if !r.own_slots && matches!(a.test, Test::WriteBw | Test::ReadBw) {
        println!(" (destination slots reused: each verified at its completion, before reuse)");
    }
    let gap = r.steady_state_gap();
    println!(
        " steady state  : second half {:.2} Gb/s, whole run {:.2} ({:.2} % apart){}",
        r.second_half_gbps(),
        r.gbps(),
        100.0 * gap,
        if gap > STEADY_GAP { "; TOO SHORT for a steady-state figure: run more iterations (-n)" } else { "" }
    );
}

/// Whole run against its second half, relative, beyond which the run is
/// called too short (doubling it would change the figure by about half
/// this, so under 1 % passes the README's steady-state rule).
const STEADY_GAP: f64 = 0.01;
