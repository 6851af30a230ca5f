//! `rnic-simd`: cosimulated NICs as devices for other processes. Each NIC of
//! a cluster (linked by the simulated fabric) is served over vfio-user on its
//! own UNIX socket, `DIR/nicI.sock`; an application opens it with the device
//! string `vfio-user:DIR/nicI.sock` and uses it as it would a board through
//! VFIO: BAR0 registers, DMA into memory it shares, MSI-X to its eventfds.
//! One client per NIC at a time; a client that goes away gets its NIC reset.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use rnic_sim::{serve, Cluster, SimConfig};

/// Serves cosimulated NICs over vfio-user.
#[derive(Parser, Debug)]
#[command(name = "rnic-simd", version)]
struct Cli {
    /// NICs in the cluster (two are linked back to back; more share a switch).
    #[arg(short = 'n', long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..=16))]
    nics: u16,
    /// Directory of the sockets (created if missing; relative to the working directory).
    #[arg(long, default_value = "target/rnic-simd")]
    dir: PathBuf,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // A DMA outside what a client shared is printed and counted, never fatal to the server.
    let cfg = SimConfig { fail_on_violation: false, ..SimConfig::default() };
    let cluster = match Cluster::shared(cli.nics as usize, cfg) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("rnic-simd: cannot build the cosimulated cluster: {e}");
            return ExitCode::FAILURE;
        }
    };
    let served = match serve::serve(cluster, &cli.dir) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("rnic-simd: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("rnic-simd: {} cosimulated NICs, one client each", cli.nics);
    for (i, s) in served.sockets().iter().enumerate() {
        println!("  nic{i}: vfio-user:{}", s.display());
    }
    served.join();
    ExitCode::SUCCESS
}
