//! [`rnic_driver::Device`] for a NIC of a simulated cluster.

use std::os::fd::RawFd;
use std::sync::Arc;

use rnic_driver::{Device, DmaAccess, DmaBuf, DriverError};

use crate::cluster::{Cluster, SharedCluster};
use crate::pcie::MSI_WINDOW;
use rnic_spec::regs;

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

    unsafe fn map_host(&self, ptr: *mut u8, len: usize, access: DmaAccess) -> Result<DmaBuf, DriverError> {
        // SAFETY: the caller keeps the memory allocated until unmap_host (the trait's contract).
        unsafe { self.cluster.lock().nic_mut(self.nic).mem_mut().map_local(ptr, len, access) }
    }

    fn unmap_host(&self, buf: DmaBuf) -> Result<(), DriverError> {
        self.cluster.lock().nic_mut(self.nic).mem_mut().unmap_window(buf.bus_addr, buf.len as u64)
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

    fn set_irq(&self, vector: u32, fd: Option<RawFd>) -> Result<(), DriverError> {
        if vector as usize >= regs::MSIX_VECTORS {
            return Err(DriverError::Device(format!(
                "cosim:nic{}: no MSI-X vector {vector} (the NIC has {})",
                self.nic,
                regs::MSIX_VECTORS
            )));
        }
        let v = vector as usize;
        let data = IRQ_DATA_BASE + vector;
        let mut c = self.cluster.lock();
        match fd {
            Some(fd) => {
                c.nic_mut(self.nic).bind_irq(data, Some(fd));
                c.write_reg(self.nic, regs::msix_addr(v), MSI_WINDOW.start);
                c.write_reg(self.nic, regs::msix_ctrl(v), data as u64);
            }
            None => {
                // A message already on its way after the mask arrives unbound (counted as spurious).
                c.write_reg(self.nic, regs::msix_ctrl(v), regs::MSIX_MASKED | data as u64);
                c.nic_mut(self.nic).bind_irq(data, None);
            }
        }
        self.check_violations(&mut c)
    }

    fn wait_fd(&self, fd: RawFd, timeout_cycles: u64) -> Result<bool, DriverError> {
        let start = self.now_cycles();
        loop {
            if rnic_driver::poll_readable(fd, 0)? {
                return Ok(true);
            }
            let mut c = self.cluster.lock();
            if c.now().saturating_sub(start) >= timeout_cycles {
                return Ok(false);
            }
            let n = c.config().wait_cycles;
            c.run(n);
            self.check_violations(&mut c)?;
        }
    }
}

/// The MSI-X message data the cosimulated host gives vector `v`: `IRQ_DATA_BASE + v`
/// (an x86 interrupt vector number, above the ones the CPU reserves).
pub const IRQ_DATA_BASE: u32 = 0x40;
