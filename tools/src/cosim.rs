//! Glue between the cosimulated cluster (`rnic-sim`) and the host library:
//! one place that knows how the NICs of a cluster are opened.

use rnic::{Context, Device, NetAddr};
use rnic_sim::{Cluster, ClusterStats, CosimDevice, SimConfig};
use std::cell::RefCell;
use std::net::Ipv4Addr;
use std::rc::Rc;

/// The address of NIC `i` of a cluster (the simulator's `mac_of`/`ip_of`).
pub fn nic_addr(i: usize) -> NetAddr {
    NetAddr { mac: rnic_sim::mac_of(i), ip: Ipv4Addr::from(rnic_sim::ip_of(i)) }
}

/// A cosimulated cluster with every NIC opened through the library.
pub struct Nics {
    /// The simulation, shared with the devices.
    pub cluster: Rc<RefCell<Cluster>>,
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
            .map(|(i, d)| (Rc::new(d) as Rc<dyn Device>, nic_addr(i)));
        let ctxs = rnic::open_devices(devs).map_err(|e| format!("cannot open the NICs: {e}"))?;
        Ok(Nics { cluster, ctxs })
    }

    /// DMA shadow violations so far, one line each.
    pub fn violations(&self) -> Vec<String> {
        self.cluster.borrow().violations().iter().map(|(i, v)| format!("nic{i}: {v}")).collect()
    }

    /// Simulator statistics (cycles, wall time spent stepping, links, DMA).
    pub fn stats(&self) -> ClusterStats {
        self.cluster.borrow().stats()
    }

    /// Flushes the pcap capture, if any.
    pub fn flush(&self) {
        self.cluster.borrow_mut().flush();
    }
}
