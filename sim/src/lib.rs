//! `rnic-sim`: Verilator cosimulation of the rnic core.
//!
//! * [`model`]: any verilated top (the core, per-block test tops) driven by port name.
//! * [`SimNic`]: the "core" top with its host memory ([`mem`]), PCIe/DMA model
//!   ([`pcie`], latency, bandwidth, IOMMU shadow check) and MMIO register path.
//! * [`Cluster`]: N NICs on one clock, joined by the Ethernet [`fabric`]
//!   (100 GbE links, a switch for N > 2, [`faults`], [`pcap`] capture).
//! * [`CosimDevice`]: NIC i of a cluster as an [`rnic_driver::Device`].
//!
//! The build script verilates every top of `rnic_hw::verilog_tops()`; the
//! C++ is compiled at -O1 by default (`RNIC_SIM_CXX_OPT` overrides), VCD
//! waveforms need the `vcd` feature.
#![deny(missing_docs)]

pub mod cluster;
pub mod config;
pub mod device;
pub mod fabric;
pub mod faults;
pub mod mem;
pub mod model;
pub mod nic;
pub mod pcap;
pub mod pcie;
pub mod rng;
pub mod serve;
pub mod usp;

pub use cluster::{Cluster, ClusterGuard, ClusterStats, SharedCluster};
pub use config::{LeafSpine, SimConfig};
pub use device::CosimDevice;
pub use fabric::{ip_of, ip_reg, mac_of, mac_reg};
pub use faults::{FrameClass, LinkFaults, LinkStats, RandomFaults};
pub use mem::{DmaDir, Violation, HOST_MEM_BASE};
pub use model::{Model, ModelError, PortDir, PortId, PortInfo, WaveFormat, WaveWindow};
pub use nic::{wave_path, SimNic, SimTop};

/// Errors of the simulator.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// Model instantiation, port lookup or tracing failed.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// A file (pcap, VCD directory) could not be written.
    #[error("i/o: {0}")]
    Io(String),
    /// The core did not answer a register read.
    #[error("nic{nic}: register read of {addr:#x} issued at cycle {issued} got no response within {cycles} cycles (reg_rd_resp_valid never rose)")]
    RegTimeout {
        /// NIC index.
        nic: usize,
        /// Register offset.
        addr: u32,
        /// Cycle the read reached the core.
        issued: u64,
        /// The timeout.
        cycles: u64,
    },
    /// A register read was posted while another was outstanding.
    #[error("nic{nic}: a register read is already outstanding")]
    RegBusy {
        /// NIC index.
        nic: usize,
    },
    /// A read result was asked for with no read posted.
    #[error("nic{nic}: no register read posted")]
    NoRead {
        /// NIC index.
        nic: usize,
    },
}
