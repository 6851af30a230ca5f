//! Simulation parameters and their defaults.

use std::path::PathBuf;

/// PCIe Gen3 x16 data rate after 128b/130b encoding: 8 GT/s x 16 lanes x 128/130.
pub const PCIE_GEN3_X16_GBPS: f64 = 8.0 * 16.0 * 128.0 / 130.0;

/// Parameters of a simulated cluster. `SimConfig::default()` is a pair of
/// servers with Gen3 x16 NICs on a 100 GbE cable.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// DMA read round trip (request accepted to first completion beat), ns.
    /// Default 1000: SRNIC's measured PCIe round trip. Posted DMA writes land
    /// in host memory after half of it.
    pub pcie_rtt_ns: u64,
    /// PCIe link data rate per direction in Gb/s after line encoding
    /// (default [`PCIE_GEN3_X16_GBPS`], 126.0). TLP overhead is charged on top.
    pub pcie_gbps: f64,
    /// Max payload size of a TLP (bytes): write data is coalesced into TLPs
    /// of up to this size and completions carry at most this much, each
    /// TLP paying `pcie_tlp_overhead` (default 256).
    pub pcie_mps: u32,
    /// Max read request size (bytes, a power of two from 128 to 4096): the
    /// DMA front end cuts reads at multiples of it, and each piece is one
    /// request TLP upstream (default 512).
    pub pcie_mrrs: u32,
    /// Read completion boundary of the root complex (bytes, a power of two
    /// from 64 to MPS): a read's completions are cut at multiples of it
    /// (default 64, as most root complexes do).
    pub pcie_rcb: u32,
    /// Spread of the read round trip, ns: each read is due at `pcie_rtt_ns`
    /// plus or minus half of this (capped at the round trip), so
    /// completions of different reads come back out of order (default 200).
    pub pcie_jitter_ns: u64,
    /// Seed of the PCIe model's choices (round trips, completion sizes and
    /// order, the bytes in unused lanes); default 1.
    pub pcie_seed: u64,
    /// Bytes of overhead per TLP: framing 2 + sequence 2 + 4DW header 16 +
    /// LCRC 4 = 24 (default). With MPS 256 the usable rate is
    /// 126.0 x 256/280 = 115.2 Gb/s (14.4 GB/s) per direction.
    pub pcie_tlp_overhead: u32,
    /// One-way latency of MMIO (register reads and writes) between host and
    /// core, ns (default 500, half the PCIe round trip): a doorbell reaches
    /// the core 500 ns after the write, a register read takes 1 us plus the core's time.
    pub mmio_latency_ns: u64,
    /// Ethernet line rate, Gb/s (default 100).
    pub link_gbps: f64,
    /// One-way delay of a link (end of serialization at the sender to end of
    /// reception), ns: MAC/PCS/RS-FEC on both ends (~2 x 200 ns) plus a few
    /// metres of cable. Default 500. With a switch, paid on each of the two hops.
    pub link_delay_ns: u64,
    /// Extra latency of the switch (cut-through forwarding), ns (default 300).
    pub switch_latency_ns: u64,
    /// Output queue of each switch port, bytes; a frame that would exceed it
    /// is dropped (default 1 MiB, a shallow-buffer switch's per-port share).
    pub switch_port_buffer: u64,
    /// Mark ECN CE on ECN-capable frames when the output queue holds more
    /// than this many bytes (None: never mark). Default None.
    pub switch_ecn_threshold: Option<u64>,
    /// A leaf-spine fabric between the NICs instead of the cable (2 NICs)
    /// or the single switch: multipath, ECMP on the UDP source port.
    /// Default None.
    pub leaf_spine: Option<LeafSpine>,
    /// Host memory per NIC (bus addresses start at [`crate::HOST_MEM_BASE`]),
    /// bytes; reserved lazily by the OS (default 1 GiB).
    pub host_mem_bytes: u64,
    /// Write every frame any NIC transmits to this pcap file.
    pub pcap: Option<PathBuf>,
    /// Write a waveform of each NIC: `run.fst` names `run.nic0.fst`,
    /// `run.nic1.fst`, ... (`.vcd` or `.fst`, the format rnic-sim is built
    /// for: its `vcd` or `fst` feature). Default None.
    pub waves: Option<PathBuf>,
    /// The cycles the waveforms hold (default: all).
    pub waves_window: crate::WaveWindow,
    /// Cycles [`rnic_driver::Device::wait`] advances the cluster (default 16:
    /// 64 ns, below the core's reaction time, so polling does not overshoot much).
    pub wait_cycles: u64,
    /// Cycles a register read may take before it is reported as lost (default 100 000).
    pub reg_timeout_cycles: u64,
    /// When true (default) a DMA shadow violation makes the next `Device`
    /// call of that NIC fail; either way it is recorded in `violations()`.
    pub fail_on_violation: bool,
    /// The top each NIC simulates: the core alone, or the board shell
    /// around it. Default: `RNIC_SIM_TOP` (`core` or `shell`), else the core.
    pub top: crate::nic::SimTop,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            pcie_rtt_ns: 1000,
            pcie_gbps: PCIE_GEN3_X16_GBPS,
            pcie_mps: 256,
            pcie_mrrs: 512,
            pcie_tlp_overhead: 24,
            pcie_rcb: 64,
            pcie_jitter_ns: 200,
            pcie_seed: 1,
            mmio_latency_ns: 500,
            link_gbps: 100.0,
            link_delay_ns: 500,
            switch_latency_ns: 300,
            switch_port_buffer: 1 << 20,
            switch_ecn_threshold: None,
            leaf_spine: None,
            host_mem_bytes: 1 << 30,
            pcap: None,
            waves: None,
            waves_window: crate::WaveWindow::default(),
            wait_cycles: 16,
            reg_timeout_cycles: 100_000,
            fail_on_violation: true,
            top: crate::nic::SimTop::from_env(),
        }
    }
}

/// A two-tier leaf-spine fabric: every leaf (ToR) switch has one uplink to
/// every spine. NIC `i` of `n` hangs off leaf `i * leaves / n`. A frame to
/// a NIC on another leaf goes up to the spine its leaf's ECMP hash of the
/// IPv4/UDP five-tuple picks (salted per leaf, so the UDP source port, the
/// entropy, chooses the path), down to the destination's leaf and out of
/// its port; on the same leaf, straight out of the port. Every switch
/// output is a queue of `switch_port_buffer` bytes with tail drop and ECN
/// marking above `switch_ecn_threshold`, at the rate of its link.
#[derive(Clone, Debug, PartialEq)]
pub struct LeafSpine {
    /// Leaf switches (at least 1).
    pub leaves: usize,
    /// Spine switches (at least 1).
    pub spines: usize,
    /// Leaf-spine links that run at another rate than `link_gbps`, both
    /// directions: (leaf, spine, Gb/s).
    pub link_rates: Vec<(usize, usize, f64)>,
}

/// Converts nanoseconds to core cycles (rounded up).
pub fn ns_to_cycles(ns: u64) -> u64 {
    (ns * rnic_spec::params::CLOCK_HZ).div_ceil(1_000_000_000)
}
