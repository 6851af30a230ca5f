//! [`rnic_driver::Device`] for a NIC of a simulated cluster.

use std::sync::Arc;

use rnic_driver::{Device, DmaAccess, DmaBuf, DriverError};

use crate::cluster::{Cluster, SharedCluster};

/// NIC `i` of a shared [`Cluster`] as a [`Device`]. Every device of a
/// cluster shares it through [`SharedCluster`] (one lock, any thread), and
/// any of them advancing time advances all NICs.
///
/// * `write_reg` is posted (returns at once; the write reaches the core after
///   `SimConfig::mmio_latency_ns`);
/// * `read_reg` runs the cluster until the response is back at the host
///   (2 x MMIO latency plus the core's time), or fails after
///   `SimConfig::reg_timeout_cycles`;
/// * `wait` runs the cluster `SimConfig::wait_cycles` cycles (default 16 = 64 ns);
/// * with `SimConfig::fail_on_violation`, each DMA shadow violation of this NIC
///   is reported once as an error by the next `wait`/`read_reg`/`write_reg`.
#[derive(Clone)]
pub struct CosimDevice {
    cluster: Arc<SharedCluster>,
    nic: usize,
}

impl CosimDevice {
    /// Device for NIC `nic` of `cluster`.
    pub fn new(cluster: &Arc<SharedCluster>, nic: usize) -> CosimDevice {
        assert!(nic < cluster.lock().len(), "no NIC {nic} in the cluster");
        CosimDevice { cluster: cluster.clone(), nic }
    }

    /// Devices for every NIC of `cluster`.
    pub fn all(cluster: &Arc<SharedCluster>) -> Vec<CosimDevice> {
        let n = cluster.lock().len();
        (0..n).map(|i| CosimDevice::new(cluster, i)).collect()
    }

    /// The shared cluster.
    pub fn cluster(&self) -> &Arc<SharedCluster> {
        &self.cluster
    }

    /// This device's NIC index.
    pub fn nic(&self) -> usize {
        self.nic
    }

    fn check_violations(&self, c: &mut Cluster) -> Result<(), DriverError> {
        if !c.config().fail_on_violation {
            return Ok(());
        }
        match c.nic_mut(self.nic).take_new_violation() {
            Some(v) => Err(DriverError::Device(format!("cosim:nic{}: {v}", self.nic))),
            None => Ok(()),
        }
    }
}

fn dev_err(e: crate::SimError) -> DriverError {
    DriverError::Device(e.to_string())
}

impl Device for CosimDevice {
    fn read_reg(&self, offset: u32) -> Result<u64, DriverError> {
        let mut c = self.cluster.lock();
        let v = c.read_reg(self.nic, offset).map_err(dev_err)?;
        self.check_violations(&mut c)?;
        Ok(v)
    }

    fn write_reg(&self, offset: u32, value: u64) -> Result<(), DriverError> {
        let mut c = self.cluster.lock();
        c.write_reg(self.nic, offset, value);
        self.check_violations(&mut c)
    }

    fn alloc_dma(&self, len: usize, access: DmaAccess) -> Result<DmaBuf, DriverError> {
        self.cluster.lock().nic_mut(self.nic).mem_mut().alloc(len, access)
    }

    fn free_dma(&self, buf: DmaBuf) -> Result<(), DriverError> {
        self.cluster.lock().nic_mut(self.nic).mem_mut().free(buf)
    }

    fn set_dma_access(&self, buf: DmaBuf, access: DmaAccess) -> Result<(), DriverError> {
        self.cluster.lock().nic_mut(self.nic).mem_mut().set_access(buf, access)
    }

    fn write_mem(&self, addr: u64, data: &[u8]) -> Result<(), DriverError> {
        self.cluster.lock().nic_mut(self.nic).mem_mut().write(addr, data)
    }

    fn read_mem(&self, addr: u64, out: &mut [u8]) -> Result<(), DriverError> {
        self.cluster.lock().nic(self.nic).mem().read(addr, out)
    }

    fn wait(&self) -> Result<(), DriverError> {
        let mut c = self.cluster.lock();
        let n = c.config().wait_cycles;
        c.run(n);
        self.check_violations(&mut c)
    }

    fn now_cycles(&self) -> u64 {
        self.cluster.lock().now()
    }

    fn name(&self) -> String {
        format!("cosim:nic{}", self.nic)
    }
}
