//! The vfio-user backend: a NIC served by another process over a UNIX
//! socket (`rnic-simd` serves cosimulated NICs this way), used as a PCIe
//! device is through VFIO.
//!
//! - Registers are 8-byte accesses of region 0 (BAR0), each a message and
//!   its reply.
//! - DMA memory is a memfd mapped in this process and shared with the server
//!   by file descriptor (`DMA_MAP`) at IOVA = its virtual address: the
//!   NIC's DMA lands directly in it, and `write_mem`/`read_mem` are plain
//!   copies in this process.
//! - Application memory (`map_host`) must lie in a [`HostBuf`]: its memfd
//!   is shared at the offset of the registered pages, at bus addresses of
//!   their own ([`crate::iova`]). Heap memory has no file to share and is
//!   refused with a message that says so.
//! - MSI-X vectors are bound to eventfds (`SET_IRQS`).
//!
//! Limits of the `vfio_user` crate's client (0.1.7), which this backend
//! uses:
//! - Every mapping is requested read-write, so the server's shadow check
//!   cannot hold a buffer to the access it was created with. The NIC's own
//!   MR checks still apply.
//! - A refused `DMA_MAP` is not reported back to the client. The server
//!   prints the refusal, and the NIC's DMA to that buffer then fails the
//!   server's shadow check, which the server also prints.

use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use memmap2::{MmapOptions, MmapRaw};
use rnic_spec::regs;
use vfio_bindings::bindings::vfio as sys;

use crate::hostbuf::{self, HostBuf};
use crate::iova::HostMaps;
use crate::mapped::{self, Mapped};
use crate::{Device, DmaAccess, DmaBuf, DriverError};

/// How long `wait` sleeps: the server simulates a few cycles meanwhile.
const WAIT_STEP: Duration = Duration::from_micros(20);

impl Mapped for HostBuf {
    fn mem(&self) -> &MmapRaw {
        self.raw()
    }
    fn len(&self) -> usize {
        HostBuf::len(self)
    }
}

/// A NIC behind a vfio-user socket (module doc).
pub struct VfioUserDevice {
    path: PathBuf,
    client: Mutex<vfio_user::Client>,
    dma: Mutex<BTreeMap<u64, HostBuf>>,
    /// Application memory mapped by `map_host`.
    host: Mutex<HostMaps>,
    msix_vectors: u32,
    /// The eventfd bound to each MSI-X vector (-1: none).
    irq_fds: Mutex<Vec<RawFd>>,
    /// The server's clock page (region [`CLOCK_REGION`]), when it offers one.
    clock: Option<MmapRaw>,
}

/// The region a server may offer as a clock page: its first word is the
/// device's cycle count, read without a message (`rnic-simd` offers it).
pub const CLOCK_REGION: u32 = sys::VFIO_PCI_BAR2_REGION_INDEX;

fn dev_err(path: &Path, what: &str, e: impl std::fmt::Display) -> DriverError {
    DriverError::Device(format!("vfio-user:{}: {what}: {e}", path.display()))
}

impl VfioUserDevice {
    /// Connects to the server at `path` and checks that an rnic answers.
    pub fn open(path: &Path) -> Result<VfioUserDevice, DriverError> {
        let fail = |why: String| DriverError::Open { device: format!("vfio-user:{}", path.display()), why };
        if !path.exists() {
            return Err(fail(format!(
                "{} does not exist: start the server first (`rnic-simd`, which prints its sockets)",
                path.display()
            )));
        }
        let client = vfio_user::Client::new(path).map_err(|e| {
            fail(format!("cannot connect: {e} (is a server listening there, and is no other client attached? the server takes one client per NIC)"))
        })?;
        let bar = client.region(sys::VFIO_PCI_BAR0_REGION_INDEX).map(|r| r.size).unwrap_or(0);
        if bar < regs::BAR0_BYTES {
            return Err(fail(format!("the server's BAR0 is {bar} bytes, rnic's is {}", regs::BAR0_BYTES)));
        }
        let clock = match client.region(CLOCK_REGION) {
            Some(r) if r.size >= 8 => match &r.file_offset {
                Some(fo) => Some(
                    MmapOptions::new()
                        .offset(fo.start())
                        .len(8)
                        .map_raw_read_only(fo.file())
                        .map_err(|e| fail(format!("mapping the clock page: {e}")))?,
                ),
                None => None,
            },
            _ => None,
        };
        let mut client = client;
        let msix_vectors = client.get_irq_info(sys::VFIO_PCI_MSIX_IRQ_INDEX).map(|i| i.count).unwrap_or(0);
        let dev = VfioUserDevice {
            path: path.to_path_buf(),
            client: Mutex::new(client),
            dma: Mutex::new(BTreeMap::new()),
            host: Mutex::new(HostMaps::new()),
            msix_vectors,
            irq_fds: Mutex::new(vec![-1; msix_vectors as usize]),
            clock,
        };
        let id = dev.read_reg(regs::REG_ID)?;
        if id >> 32 != regs::ID_MAGIC {
            return Err(fail(format!("REG_ID is {id:#018x}, not rnic's")));
        }
        Ok(dev)
    }

    fn reg_ok(&self, offset: u32) -> Result<(), DriverError> {
        if !offset.is_multiple_of(8) || offset as u64 + 8 > regs::BAR0_BYTES {
            return Err(dev_err(
                &self.path,
                "register access",
                format!("offset {offset:#x} is not an 8-byte word inside BAR0"),
            ));
        }
        Ok(())
    }
}

impl Drop for VfioUserDevice {
    fn drop(&mut self) {
        let maps = std::mem::take(&mut *self.dma.lock().unwrap());
        let host = self.host.lock().unwrap().take_all();
        let mut c = self.client.lock().unwrap();
        for (iova, m) in &maps {
            let _ = c.dma_unmap(*iova, m.raw().len() as u64);
        }
        for m in &host {
            let _ = c.dma_unmap(m.iova, m.span);
        }
        let _ = c.shutdown();
    }
}

impl Device for VfioUserDevice {
    fn read_reg(&self, offset: u32) -> Result<u64, DriverError> {
        self.reg_ok(offset)?;
        let mut b = [0u8; 8];
        self.client
            .lock()
            .unwrap()
            .region_read(sys::VFIO_PCI_BAR0_REGION_INDEX, offset as u64, &mut b)
            .map_err(|e| dev_err(&self.path, "register read", e))?;
        Ok(u64::from_le_bytes(b))
    }

    fn write_reg(&self, offset: u32, value: u64) -> Result<(), DriverError> {
        self.reg_ok(offset)?;
        self.client
            .lock()
            .unwrap()
            .region_write(sys::VFIO_PCI_BAR0_REGION_INDEX, offset as u64, &value.to_le_bytes())
            .map_err(|e| dev_err(&self.path, "register write", e))
    }

    fn alloc_dma(&self, len: usize, _access: DmaAccess) -> Result<DmaBuf, DriverError> {
        if len == 0 {
            return Err(DriverError::DmaAlloc { len, reason: "a DMA buffer needs at least one byte".into() });
        }
        let buf = HostBuf::new(len)?;
        let iova = buf.as_ptr() as u64;
        self.client
            .lock()
            .unwrap()
            .dma_map(0, iova, buf.raw().len() as u64, buf.file().as_raw_fd())
            .map_err(|e| DriverError::DmaAlloc { len, reason: format!("DMA_MAP: {e}") })?;
        self.dma.lock().unwrap().insert(iova, buf);
        Ok(DmaBuf { bus_addr: iova, len })
    }

    fn free_dma(&self, buf: DmaBuf) -> Result<(), DriverError> {
        let mut dma = self.dma.lock().unwrap();
        match dma.get(&buf.bus_addr) {
            Some(m) if m.len() == buf.len => {
                let size = m.raw().len() as u64;
                self.client
                    .lock()
                    .unwrap()
                    .dma_unmap(buf.bus_addr, size)
                    .map_err(|e| dev_err(&self.path, "DMA_UNMAP", e))?;
                dma.remove(&buf.bus_addr);
                Ok(())
            }
            _ => Err(dev_err(
                &self.path,
                "free_dma",
                format!("{} bytes at {:#x} is not a buffer of alloc_dma", buf.len, buf.bus_addr),
            )),
        }
    }

    fn set_dma_access(&self, buf: DmaBuf, _access: DmaAccess) -> Result<(), DriverError> {
        // The crate's client maps every buffer read-write (module doc): only the buffer is checked.
        match self.dma.lock().unwrap().get(&buf.bus_addr) {
            Some(m) if m.len() == buf.len => Ok(()),
            _ => Err(dev_err(
                &self.path,
                "set_dma_access",
                format!("{} bytes at {:#x} is not a buffer of alloc_dma", buf.len, buf.bus_addr),
            )),
        }
    }

    unsafe fn map_host(&self, ptr: *mut u8, len: usize, access: DmaAccess) -> Result<DmaBuf, DriverError> {
        let va = ptr as u64;
        let Some((file, file_off, page)) = hostbuf::backing(va, len) else {
            return Err(DriverError::DmaAlloc {
                len,
                reason: format!(
                    "{len} bytes at {va:#x} are not inside one HostBuf: over vfio-user the NIC's server reaches only memory shared by a file, and heap memory has none (allocate the buffer with HostBuf::new)"
                ),
            });
        };
        // The server maps the file from a page boundary of the file's own pages (2 MiB on hugetlbfs).
        let in_page = file_off % page;
        self.host.lock().unwrap().map(in_page, len, page, access, |iova, span| {
            self.client
                .lock()
                .unwrap()
                .dma_map(file_off - in_page, iova, span, file.as_raw_fd())
                .map_err(|e| DriverError::DmaAlloc { len, reason: format!("DMA_MAP: {e}") })
        })
    }

    fn unmap_host(&self, buf: DmaBuf) -> Result<(), DriverError> {
        let unmap = |m: &crate::iova::HostMap| {
            self.client.lock().unwrap().dma_unmap(m.iova, m.span).map_err(|e| dev_err(&self.path, "DMA_UNMAP", e))
        };
        self.host.lock().unwrap().unmap(buf, unmap).unwrap_or_else(|| {
            Err(dev_err(
                &self.path,
                "unmap_host",
                format!("{} bytes at {:#x} is not memory of map_host", buf.len, buf.bus_addr),
            ))
        })
    }

    fn write_mem(&self, addr: u64, data: &[u8]) -> Result<(), DriverError> {
        mapped::write(&self.dma.lock().unwrap(), &self.name(), addr, data)
    }

    fn read_mem(&self, addr: u64, out: &mut [u8]) -> Result<(), DriverError> {
        mapped::read(&self.dma.lock().unwrap(), &self.name(), addr, out)
    }

    fn wait(&self) -> Result<(), DriverError> {
        // The server's simulation runs on its own: leave it the cores.
        std::thread::sleep(WAIT_STEP);
        Ok(())
    }

    fn now_cycles(&self) -> u64 {
        match &self.clock {
            // SAFETY: the page is mapped for the life of `self` and its first word is aligned.
            Some(c) => unsafe { std::ptr::read_volatile(c.as_ptr().cast::<u64>()) },
            None => self.read_reg(regs::REG_CYCLES).unwrap_or(0),
        }
    }

    fn name(&self) -> String {
        format!("vfio-user:{}", self.path.display())
    }

    fn set_irq(&self, vector: u32, fd: Option<RawFd>) -> Result<(), DriverError> {
        if vector >= self.msix_vectors {
            return Err(dev_err(
                &self.path,
                "set_irq",
                format!("MSI-X vector {vector} does not exist (the device has {})", self.msix_vectors),
            ));
        }
        let mut bound = self.irq_fds.lock().unwrap();
        bound[vector as usize] = fd.unwrap_or(-1);
        let mut c = self.client.lock().unwrap();
        let trigger = sys::VFIO_IRQ_SET_ACTION_TRIGGER;
        let mut set = |flags: u32, start: u32, fds: &[RawFd]| {
            c.set_irqs(sys::VFIO_PCI_MSIX_IRQ_INDEX, flags, start, fds.len() as u32, fds)
                .map_err(|e| dev_err(&self.path, "SET_IRQS", e))
        };
        // A descriptor cannot say "none" over the socket: unbinding disables every vector and binds the rest again.
        match fd {
            Some(fd) => set(sys::VFIO_IRQ_SET_DATA_EVENTFD | trigger, vector, &[fd]),
            None => {
                set(sys::VFIO_IRQ_SET_DATA_NONE | trigger, 0, &[])?;
                for (v, &fd) in bound.iter().enumerate().filter(|(_, &fd)| fd >= 0) {
                    set(sys::VFIO_IRQ_SET_DATA_EVENTFD | trigger, v as u32, &[fd])?;
                }
                Ok(())
            }
        }
    }

    fn wait_fd(&self, fd: RawFd, timeout_cycles: u64) -> Result<bool, DriverError> {
        // Device time is the server's simulated time: poll in short steps and compare cycles.
        let start = self.now_cycles();
        loop {
            if crate::poll_readable(fd, 1)? {
                return Ok(true);
            }
            if self.now_cycles().saturating_sub(start) >= timeout_cycles {
                return Ok(false);
            }
            std::thread::sleep(Duration::from_micros(50));
        }
    }
}
