//! `rnic-devinfo`: what a NIC says about itself (`ibv_devinfo`'s job), and a
//! bring-up check of the path to it. It opens the device named by `--dev`,
//! reads its identification, capabilities, status, addresses, clock and
//! non-zero counters, and maps a DMA buffer, writes it and reads it back
//! from the host, and frees it (the IOMMU path under VFIO; the NIC itself
//! does not touch the buffer). It programs no register.

use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use rnic::{Device, DmaAccess};
use rnic_driver::{DeviceSpec, VfioDevice};
use rnic_sim::{Cluster, CosimDevice, SimConfig};
use rnic_spec::{params, regs};

/// Shows what a NIC reports and checks the host's path to it.
#[derive(Parser, Debug)]
#[command(name = "rnic-devinfo", version)]
struct Cli {
    /// The device: `cosim` or `cosim:N` (NIC N of an in-process cosimulated
    /// cluster), `vfio:DDDD:BB:DD.F` (a board bound to vfio-pci) or
    /// `vfio-user:PATH` (a NIC served by `rnic-simd`).
    #[arg(short = 'd', long = "dev", default_value = "cosim")]
    dev: DeviceSpec,
    /// Bytes of the DMA buffer the host check maps, writes and reads back.
    #[arg(long, default_value = "4M", value_parser = rnic_tools::args::parse_size)]
    dma_bytes: u32,
}

/// The most NICs `cosim:N` builds (each is a Verilator model).
const MAX_COSIM_NICS: usize = 16;

fn open(spec: &DeviceSpec) -> Result<(Arc<dyn Device>, Vec<String>), String> {
    match spec {
        DeviceSpec::Cosim { nic } => {
            if *nic >= MAX_COSIM_NICS {
                return Err(format!("cosim:{nic}: the cluster this tool builds has NICs 0 to {}", MAX_COSIM_NICS - 1));
            }
            let cluster = Cluster::shared(nic + 1, SimConfig::default())
                .map_err(|e| format!("cannot build the cosimulated cluster: {e}"))?;
            let dev = CosimDevice::new(&cluster, *nic);
            let lines =
                vec![format!("cosimulated NIC {nic} of {}, the core at {} MHz", nic + 1, params::CLOCK_HZ / 1_000_000)];
            Ok((Arc::new(dev), lines))
        }
        DeviceSpec::Vfio(addr) => {
            let d = VfioDevice::open(*addr).map_err(|e| e.to_string())?;
            let i = d.info();
            let lines = vec![
                format!("IOMMU group    : {}", i.group),
                format!("BAR0           : {} KiB", i.bar0_bytes >> 10),
                format!("MSI-X (VFIO)   : {} vectors", i.msix_vectors),
            ];
            Ok((Arc::new(d), lines))
        }
        DeviceSpec::VfioUser(_) => {
            Ok((rnic_tools::devices::open(spec)?, vec!["served over vfio-user by another process".to_string()]))
        }
    }
}

/// Reads the registers and prints them.
fn report(dev: &dyn Device, extra: &[String]) -> Result<(), String> {
    let rd = |off: u32| dev.read_reg(off).map_err(|e| format!("reading BAR0 at {off:#x}: {e}"));
    let id = rd(regs::REG_ID)?;
    if id >> 32 != regs::ID_MAGIC {
        return Err(format!("{}: REG_ID is {id:#018x}, not rnic's", dev.name()));
    }
    // A cosimulated NIC clears its tables first; a board has long since.
    let start = dev.now_cycles();
    while rd(regs::REG_STATUS)? & regs::STATUS_READY == 0 && dev.now_cycles() - start < 4 << params::QPN_BITS_MAX {
        dev.wait().map_err(|e| e.to_string())?;
    }
    let caps = rd(regs::REG_CAPS)?;
    let status = rd(regs::REG_STATUS)?;
    let mac = rd(regs::REG_SRC_MAC)?;
    let ip = rd(regs::REG_SRC_IP)? as u32;
    let cycles = dev.now_cycles();
    println!("device         : {}", dev.name());
    for l in extra {
        println!("{l}");
    }
    println!("version        : {}", id as u32);
    println!(
        "QPs, MRs, CQs  : {}, {}, {} (REG_CAPS {caps:#x})",
        1u64 << (caps & 0xff),
        1u64 << ((caps >> 8) & 0xff),
        1u64 << ((caps >> 16) & 0xff)
    );
    println!("WQE push       : {}", if caps & regs::CAPS_PUSH != 0 { "yes" } else { "no" });
    println!("MSI-X vectors  : {}", caps >> regs::CAPS_MSIX_SHIFT & 0xf);
    println!(
        "status         : {}",
        if status & regs::STATUS_READY != 0 { "ready" } else { "NOT READY (still clearing its tables)" }
    );
    let m = mac.to_be_bytes();
    println!(
        "source MAC, IP : {:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}, {} (0: not set yet)",
        m[2],
        m[3],
        m[4],
        m[5],
        m[6],
        m[7],
        std::net::Ipv4Addr::from(ip)
    );
    println!(
        "clock          : {cycles} cycles ({:.6} s at {} MHz)",
        params::cycles_to_secs(cycles),
        params::CLOCK_HZ / 1_000_000
    );
    let mut nonzero = Vec::new();
    for &(name, off) in regs::counters::NAMES.iter() {
        let v = rd(off)?;
        if v != 0 {
            nonzero.push(format!("{name}={v}"));
        }
    }
    println!("counters       : {}", if nonzero.is_empty() { "all 0".to_string() } else { nonzero.join(" ") });
    Ok(())
}

/// Maps a buffer, writes a pattern, reads it back, frees it.
fn dma_check(dev: &dyn Device, len: usize) -> Result<(), String> {
    let buf = dev
        .alloc_dma(len, DmaAccess { device_read: true, device_write: true })
        .map_err(|e| format!("DMA check: {e}"))?;
    let pat: Vec<u8> = (0..len).map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[3]).collect();
    let mut back = vec![0u8; len];
    let r = dev.write_mem(buf.bus_addr, &pat).and_then(|()| dev.read_mem(buf.bus_addr, &mut back));
    let freed = dev.free_dma(buf);
    r.map_err(|e| format!("DMA check: {e}"))?;
    freed.map_err(|e| format!("DMA check: freeing the buffer: {e}"))?;
    if let Some(i) = (0..len).find(|&i| back[i] != pat[i]) {
        return Err(format!(
            "DMA check: byte {i} of the buffer at {:#x} read back {:#04x}, written {:#04x}",
            buf.bus_addr, back[i], pat[i]
        ));
    }
    println!(
        "DMA check      : {len} bytes at bus address {:#x} mapped, written, read back and freed: OK",
        buf.bus_addr
    );
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let run = || -> Result<(), String> {
        let (dev, extra) = open(&cli.dev)?;
        report(&*dev, &extra)?;
        dma_check(&*dev, cli.dma_bytes as usize)
    };
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rnic-devinfo: {e}");
            ExitCode::FAILURE
        }
    }
}
