//! N simulated NICs on one clock, joined by the Ethernet fabric.

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

use rnic_spec::params::CLOCK_HZ;

use crate::config::SimConfig;
use crate::fabric::{Fabric, SwitchStats};
use crate::faults::{LinkFaults, LinkStats};
use crate::mem::Violation;
use crate::nic::SimNic;
use crate::pcap::PcapSink;
use crate::pcie::DmaStats;
use crate::SimError;

/// Statistics of a cluster run.
#[derive(Clone, Debug)]
pub struct ClusterStats {
    /// Cycles simulated.
    pub cycles: u64,
    /// Simulated time in seconds (cycles at `CLOCK_HZ`).
    pub sim_secs: f64,
    /// Wall time spent stepping (in [`Cluster::run`] and friends).
    pub wall: Duration,
    /// Simulated cycles per wall second (the simulator's speed; all NICs together).
    pub cycles_per_sec: f64,
    /// Per NIC: its egress link.
    pub links: Vec<LinkStats>,
    /// Per NIC: DMA.
    pub dma: Vec<DmaStats>,
    /// The switch (zero for two NICs).
    pub switch: SwitchStats,
    /// DMA shadow violations, all NICs.
    pub violations: usize,
}

impl std::fmt::Display for ClusterStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{} cycles ({:.3} us simulated) in {:.3} s wall: {:.0} cycles/s",
            self.cycles,
            self.sim_secs * 1e6,
            self.wall.as_secs_f64(),
            self.cycles_per_sec
        )?;
        for (i, (l, d)) in self.links.iter().zip(&self.dma).enumerate() {
            writeln!(
                f,
                "nic{i}: tx {} frames {} B (dropped {}, corrupted {}); dma rd {} B in {} reqs, wr {} B",
                l.frames, l.bytes, l.dropped, l.corrupted, d.rd_bytes, d.rd_reqs, d.wr_bytes
            )?;
        }
        write!(
            f,
            "switch: forwarded {}, unknown dst {}, buffer drops {}, ecn {}; violations {}",
            self.switch.forwarded,
            self.switch.unknown_dst,
            self.switch.buffer_drops,
            self.switch.ecn_marked,
            self.violations
        )
    }
}

/// N NICs stepped together on one clock.
pub struct Cluster {
    nics: Vec<SimNic>,
    fabric: Fabric,
    cycle: u64,
    wall: Duration,
    cfg: SimConfig,
}

impl Cluster {
    /// `n` NICs (1..=255) with `cfg`. NIC i has MAC [`crate::mac_of`]`(i)` and IP [`crate::ip_of`]`(i)`
    /// (the host library writes them into `REG_SRC_MAC`/`REG_SRC_IP`).
    pub fn new(n: usize, cfg: SimConfig) -> Result<Cluster, SimError> {
        assert!((1..=255).contains(&n), "1..=255 NICs");
        let pcap = match &cfg.pcap {
            Some(p) => Some(PcapSink::create(p).map_err(|e| SimError::Io(format!("{}: {e}", p.display())))?),
            None => None,
        };
        let nics = (0..n).map(|i| SimNic::new(i, &cfg)).collect::<Result<Vec<_>, _>>()?;
        let fabric = Fabric::new(n, &cfg, pcap);
        Ok(Cluster { nics, fabric, cycle: 0, wall: Duration::ZERO, cfg })
    }

    /// [`Cluster::new`] wrapped for sharing between [`crate::CosimDevice`]s and threads.
    pub fn shared(n: usize, cfg: SimConfig) -> Result<Arc<SharedCluster>, SimError> {
        Ok(Arc::new(SharedCluster::new(Cluster::new(n, cfg)?)))
    }

    /// The configuration.
    pub fn config(&self) -> &SimConfig {
        &self.cfg
    }

    /// Number of NICs.
    pub fn len(&self) -> usize {
        self.nics.len()
    }

    /// Always false (a cluster has at least one NIC).
    pub fn is_empty(&self) -> bool {
        self.nics.is_empty()
    }

    /// The current cycle (cycles simulated so far).
    pub fn now(&self) -> u64 {
        self.cycle
    }

    /// NIC `i`.
    pub fn nic(&self, i: usize) -> &SimNic {
        &self.nics[i]
    }

    /// NIC `i`, mutable (host memory, register posting).
    pub fn nic_mut(&mut self, i: usize) -> &mut SimNic {
        &mut self.nics[i]
    }

    /// The fabric.
    pub fn fabric(&self) -> &Fabric {
        &self.fabric
    }

    /// The fabric, mutable.
    pub fn fabric_mut(&mut self) -> &mut Fabric {
        &mut self.fabric
    }

    /// Fault controls of NIC `i`'s egress link.
    pub fn faults(&mut self, i: usize) -> &mut LinkFaults {
        self.fabric.faults(i)
    }

    /// Hands `frame` to NIC `i`'s RX MAC now, as if it came off the wire
    /// (not captured in pcap, not subject to faults).
    pub fn inject_frame(&mut self, i: usize, frame: &[u8]) {
        let now_ps = self.cycle * rnic_spec::params::CLOCK_PS;
        self.fabric.inject(i, frame, now_ps);
    }

    /// One cycle of every NIC and the fabric.
    #[inline]
    pub fn step(&mut self) {
        let now = self.cycle;
        for (i, nic) in self.nics.iter_mut().enumerate() {
            let (port, pool) = self.fabric.port_and_pool(i);
            nic.cycle(now, port, pool);
        }
        self.fabric.route(now * rnic_spec::params::CLOCK_PS);
        self.cycle += 1;
    }

    /// Runs `cycles` cycles.
    pub fn run(&mut self, cycles: u64) {
        let t = Instant::now();
        for _ in 0..cycles {
            self.step();
        }
        self.wall += t.elapsed();
    }

    /// Runs until `done` holds (checked before each cycle) or `max_cycles` pass; true if it held.
    pub fn run_until(&mut self, max_cycles: u64, mut done: impl FnMut(&Cluster) -> bool) -> bool {
        let t = Instant::now();
        let mut ok = false;
        for _ in 0..max_cycles {
            if done(self) {
                ok = true;
                break;
            }
            self.step();
        }
        let ok = ok || done(self);
        self.wall += t.elapsed();
        ok
    }

    /// A function-level reset of NIC `i` ([`SimNic::function_reset`]); the fabric keeps running.
    pub fn reset_nic(&mut self, i: usize) {
        let cfg = self.cfg.clone();
        self.nics[i].function_reset(&cfg);
        self.fabric.faults(i).forget_psns();
    }

    /// Posts a register write to NIC `i` (it reaches the core after the MMIO latency).
    pub fn write_reg(&mut self, i: usize, offset: u32, value: u64) {
        let now = self.cycle;
        self.nics[i].post_write(now, offset, value);
    }

    /// Reads a register of NIC `i`, running the cluster until the value reaches the host.
    pub fn read_reg(&mut self, i: usize, offset: u32) -> Result<u64, SimError> {
        let now = self.cycle;
        self.nics[i].post_read(now, offset)?;
        let t = Instant::now();
        let result = loop {
            let now = self.cycle;
            if let Some(r) = self.nics[i].read_result(now) {
                break r;
            }
            self.step();
        };
        self.wall += t.elapsed();
        result
    }

    /// Every DMA shadow violation: (NIC, violation).
    pub fn violations(&self) -> Vec<(usize, Violation)> {
        self.nics.iter().enumerate().flat_map(|(i, n)| n.violations().iter().map(move |v| (i, *v))).collect()
    }

    /// Flushes the pcap file (also done on drop).
    pub fn flush(&mut self) {
        self.fabric.flush_pcap();
    }

    /// Statistics so far.
    pub fn stats(&self) -> ClusterStats {
        let wall = self.wall.as_secs_f64();
        ClusterStats {
            cycles: self.cycle,
            sim_secs: self.cycle as f64 / CLOCK_HZ as f64,
            wall: self.wall,
            cycles_per_sec: if wall > 0.0 { self.cycle as f64 / wall } else { 0.0 },
            links: (0..self.nics.len()).map(|i| self.fabric.link_stats(i)).collect(),
            dma: self.nics.iter().map(|n| n.dma_stats()).collect(),
            switch: self.fabric.switch_stats(),
            violations: self.nics.iter().map(|n| n.violations().len()).sum(),
        }
    }
}

/// A cluster shared by the devices of its NICs, from any thread: one lock
/// around the whole simulation, so whichever thread holds it advances every
/// NIC. A thread that takes the lock again while holding it panics (it
/// would otherwise wait forever).
pub struct SharedCluster {
    cluster: Mutex<Cluster>,
    /// Id of the thread holding the lock (0: none).
    holder: AtomicU64,
}

/// The lock of a [`SharedCluster`], held until dropped.
pub struct ClusterGuard<'a> {
    guard: MutexGuard<'a, Cluster>,
    holder: &'a AtomicU64,
}

/// A small id of the calling thread (never 0).
fn thread_tag() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local! { static TAG: u64 = NEXT.fetch_add(1, Ordering::Relaxed); }
    TAG.with(|t| *t)
}

impl SharedCluster {
    /// Wraps `cluster`.
    pub fn new(cluster: Cluster) -> SharedCluster {
        SharedCluster { cluster: Mutex::new(cluster), holder: AtomicU64::new(0) }
    }

    /// Takes the cluster, waiting while another thread has it.
    pub fn lock(&self) -> ClusterGuard<'_> {
        let me = thread_tag();
        let guard = match self.cluster.try_lock() {
            Ok(g) => g,
            Err(TryLockError::WouldBlock) => {
                assert!(
                    self.holder.load(Ordering::Acquire) != me,
                    "the simulated cluster is already locked by this thread"
                );
                self.cluster.lock().expect("another thread panicked while it held the simulated cluster")
            }
            Err(TryLockError::Poisoned(_)) => panic!("another thread panicked while it held the simulated cluster"),
        };
        self.holder.store(me, Ordering::Release);
        ClusterGuard { guard, holder: &self.holder }
    }
}

impl Deref for ClusterGuard<'_> {
    type Target = Cluster;
    fn deref(&self) -> &Cluster {
        &self.guard
    }
}

impl DerefMut for ClusterGuard<'_> {
    fn deref_mut(&mut self) -> &mut Cluster {
        &mut self.guard
    }
}

impl Drop for ClusterGuard<'_> {
    fn drop(&mut self) {
        self.holder.store(0, Ordering::Release);
    }
}
