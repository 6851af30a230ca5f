//! Glue between the cosimulated cluster (`rnic-sim`) and the host library:
//! one place that knows how the NICs of a cluster are opened.

use rnic::{Context, Device, NetAddr};
use rnic_sim::{Cluster, ClusterStats, CosimDevice, SharedCluster, SimConfig};
use rnic_spec::regs::counters as ctr;
use std::net::Ipv4Addr;
use std::sync::Arc;

/// The address of NIC `i` of a cluster (the simulator's `mac_of`/`ip_of`).
pub fn nic_addr(i: usize) -> NetAddr {
    NetAddr { mac: rnic_sim::mac_of(i), ip: Ipv4Addr::from(rnic_sim::ip_of(i)) }
}

/// A cosimulated cluster with every NIC opened through the library.
pub struct Nics {
    /// The simulation, shared with the devices.
    pub cluster: Arc<SharedCluster>,
    /// One context per NIC, in NIC order.
    pub ctxs: Vec<Context>,
}

impl Nics {
    /// Builds `n` NICs with `cfg` and opens each one.
    pub fn new(n: usize, cfg: SimConfig) -> Result<Nics, String> {
        let cluster = Cluster::shared(n, cfg).map_err(|e| format!("cannot build the cosimulated cluster: {e}"))?;
        let devs = CosimDevice::all(&cluster)
            .into_iter()
            .enumerate()
            .map(|(i, d)| (Arc::new(d) as Arc<dyn Device>, nic_addr(i)));
        let ctxs = rnic::open_devices(devs).map_err(|e| format!("cannot open the NICs: {e}"))?;
        Ok(Nics { cluster, ctxs })
    }

    /// A function-level reset of every NIC at the same cycle
    /// ([`rnic_sim::SimNic::function_reset`]). The contexts and everything
    /// created from them are abandoned without a word to the device, as when
    /// the process that owned them died: handles the caller kept must not be
    /// used again. DMA shadow violations recorded before are dropped with the
    /// old PCIe models. [`Nics::reopen`] opens the NICs again.
    pub fn reset(&mut self) {
        for c in std::mem::take(&mut self.ctxs) {
            std::mem::forget(c);
        }
        let mut c = self.cluster.lock();
        for i in 0..c.len() {
            c.reset_nic(i);
        }
    }

    /// Opens every NIC again after [`Nics::reset`] (waiting for `STATUS_READY`).
    pub fn reopen(&mut self) -> Result<(), String> {
        let devs = CosimDevice::all(&self.cluster)
            .into_iter()
            .enumerate()
            .map(|(i, d)| (Arc::new(d) as Arc<dyn Device>, nic_addr(i)));
        self.ctxs = rnic::open_devices(devs).map_err(|e| format!("cannot open the NICs after the reset: {e}"))?;
        Ok(())
    }

    /// DMA shadow violations so far, one line each.
    pub fn violations(&self) -> Vec<String> {
        self.cluster.lock().violations().iter().map(|(i, v)| format!("nic{i}: {v}")).collect()
    }

    /// Simulator statistics (cycles, wall time spent stepping, links, DMA).
    pub fn stats(&self) -> ClusterStats {
        self.cluster.lock().stats()
    }

    /// Flushes the pcap capture, if any.
    pub fn flush(&self) {
        self.cluster.lock().flush();
    }

    /// Every NIC's event counters ([`COUNTERS`]) as of one simulated instant.
    ///
    /// A counter is a register, read over MMIO, which takes simulated time,
    /// and a NIC answers one read at a time. So counter `k` is read on every
    /// NIC at once (the reads posted in the same cycle reach the cores in the
    /// same cycle), and all the counters are read again, up to
    /// [`COUNTER_PASSES`] times, until two passes in a row agree: then no
    /// counter moved from the first of them to the second, and the values are
    /// those of every cycle in between ([`CounterSnapshot::stable`]).
    /// Nothing but these reads happens meanwhile (the host is not polling).
    pub fn counters(&self) -> Result<CounterSnapshot, String> {
        let mut c = self.cluster.lock();
        let mut from = c.now();
        let mut prev = read_counters(&mut c)?;
        for _ in 1..COUNTER_PASSES {
            let at = c.now();
            let cur = read_counters(&mut c)?;
            if cur == prev {
                return Ok(CounterSnapshot { from, to: c.now(), values: cur, stable: true });
            }
            (from, prev) = (at, cur);
        }
        Ok(CounterSnapshot { from, to: c.now(), values: prev, stable: false })
    }
}

/// The NICs' event counters, by name, in register order (`regs::counters::NAMES`).
pub const COUNTERS: [(&str, u32); ctr::COUNT] = ctr::NAMES;

/// Most passes [`Nics::counters`] reads before it gives up on two agreeing.
pub const COUNTER_PASSES: usize = 8;

/// The counters of every NIC ([`Nics::counters`]).
#[derive(Clone, Debug)]
pub struct CounterSnapshot {
    /// Cycle the pass these values come from began.
    pub from: u64,
    /// Cycle the last pass ended.
    pub to: u64,
    /// Per NIC, the value of each of [`COUNTERS`].
    pub values: Vec<[u64; ctr::COUNT]>,
    /// Two passes agreed: the values held at every cycle from `from` to `to`.
    /// If not, the last pass is given and each counter is that of the cycle it was read.
    pub stable: bool,
}

/// One pass over the counters: counter k of every NIC read in the same cycles.
fn read_counters(c: &mut Cluster) -> Result<Vec<[u64; ctr::COUNT]>, String> {
    let n = c.len();
    let mut values = vec![[0u64; ctr::COUNT]; n];
    for (k, &(name, offset)) in COUNTERS.iter().enumerate() {
        let now = c.now();
        for i in 0..n {
            c.nic_mut(i).post_read(now, offset).map_err(|e| format!("reading {name}: {e}"))?;
        }
        let mut pending: Vec<usize> = (0..n).collect();
        loop {
            let now = c.now();
            let mut failed = None;
            pending.retain(|&i| match c.nic_mut(i).read_result(now) {
                Some(Ok(v)) => {
                    values[i][k] = v;
                    false
                }
                Some(Err(e)) => {
                    failed = Some(format!("reading {name}: {e}"));
                    false
                }
                None => true,
            });
            if let Some(e) = failed {
                return Err(e);
            }
            if pending.is_empty() {
                break;
            }
            c.run(1);
        }
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_table_is_the_register_block_in_order() {
        for (k, &(name, offset)) in COUNTERS.iter().enumerate() {
            assert_eq!(offset, ctr::TX_PKTS + 8 * k as u32, "{name}");
        }
    }
}
