//! `rnic-driver`: how the host library reaches a NIC.
//!
//! One trait, [`Device`], with backends: the cosimulated NIC (in `rnic-sim`,
//! which implements this trait) and a board through VFIO ([`vfio`]: BAR0
//! through a mmap of the vfio-pci region, DMA memory mapped into the
//! IOMMU). Callers see only the trait. A [`DeviceSpec`] (`cosim`,
//! `vfio:0000:3b:00.0`, `vfio-user:PATH`) names which one to open.
#![deny(missing_docs)]

pub mod hostbuf;
pub mod iova;
mod mapped;
pub mod spec;
pub mod vfio;
pub mod vfio_user;

pub use hostbuf::HostBuf;
pub use spec::{DeviceSpec, PciAddr, SpecError};
pub use vfio::VfioDevice;
pub use vfio_user::VfioUserDevice;

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use thiserror::Error;

/// Access a DMA mapping grants the device (the IOMMU permissions under VFIO;
/// in cosimulation, the harness's shadow checks every DMA against them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DmaAccess {
    /// The device may read (DMA read) this range.
    pub device_read: bool,
    /// The device may write (DMA write) this range.
    pub device_write: bool,
}

/// A block of host memory the device can reach by DMA.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DmaBuf {
    /// Bus address (IOVA) the device uses.
    pub bus_addr: u64,
    /// Length in bytes.
    pub len: usize,
}

/// Driver errors.
#[derive(Debug, Error)]
pub enum DriverError {
    /// Host memory for DMA could not be allocated.
    #[error("cannot allocate {len} bytes of DMA memory: {reason}")]
    DmaAlloc {
        /// Bytes requested.
        len: usize,
        /// Why.
        reason: String,
    },
    /// An access fell outside a DMA buffer.
    #[error("access of {len} bytes at {addr:#x} is outside DMA buffer [{base:#x}, +{size})")]
    OutOfBounds {
        /// Start of the access.
        addr: u64,
        /// Length of the access.
        len: usize,
        /// Buffer base.
        base: u64,
        /// Buffer length.
        size: usize,
    },
    /// A device could not be opened; `why` names the missing piece and how to fix it.
    #[error("cannot open {device}: {why}")]
    Open {
        /// The device string.
        device: String,
        /// What is missing.
        why: String,
    },
    /// The device is gone or failed (e.g. the simulation reported a fatal DMA violation).
    #[error("device failure: {0}")]
    Device(String),
}

/// A NIC as the host library sees it; shared between threads (every
/// method takes `&self`: a backend serializes what must be).
pub trait Device: Send + Sync {
    /// Reads a 64-bit BAR0 register.
    fn read_reg(&self, offset: u32) -> Result<u64, DriverError>;
    /// Writes a 64-bit BAR0 register (doorbells included).
    fn write_reg(&self, offset: u32, value: u64) -> Result<(), DriverError>;
    /// Allocates zeroed, physically contiguous (IOVA-contiguous) host memory
    /// and maps it for the device with `access`.
    fn alloc_dma(&self, len: usize, access: DmaAccess) -> Result<DmaBuf, DriverError>;
    /// Releases a buffer from [`Device::alloc_dma`]; the device loses access.
    fn free_dma(&self, buf: DmaBuf) -> Result<(), DriverError>;
    /// Changes the device's access to a buffer (e.g. when an MR with other
    /// permissions is registered over it).
    fn set_dma_access(&self, buf: DmaBuf, access: DmaAccess) -> Result<(), DriverError>;
    /// Maps `len` bytes of the application's own memory at `ptr` for the
    /// device with `access` (`ibv_reg_mr` on memory the application
    /// allocated) and returns the bus addresses the device uses for them.
    /// Over vfio-user the memory must be shared by a file ([`HostBuf`]).
    ///
    /// # Safety
    /// The memory must stay allocated until [`Device::unmap_host`] of the
    /// returned buffer has returned: the device reads and writes it until then.
    unsafe fn map_host(&self, ptr: *mut u8, len: usize, access: DmaAccess) -> Result<DmaBuf, DriverError>;
    /// Ends a mapping of [`Device::map_host`]; the device loses access at once.
    fn unmap_host(&self, buf: DmaBuf) -> Result<(), DriverError>;
    /// CPU write into DMA memory at bus address `addr`.
    fn write_mem(&self, addr: u64, data: &[u8]) -> Result<(), DriverError>;
    /// CPU read from DMA memory at bus address `addr`.
    fn read_mem(&self, addr: u64, out: &mut [u8]) -> Result<(), DriverError>;
    /// Lets the device make progress while the host waits (a spin-loop hint
    /// on hardware; advances simulated time in cosimulation).
    fn wait(&self) -> Result<(), DriverError>;
    /// The device's clock in cycles (REG_CYCLES on hardware; simulated cycles in cosimulation).
    fn now_cycles(&self) -> u64;
    /// A name for messages ("cosim:nic0", "vfio:0000:3b:00.0").
    fn name(&self) -> String;
    /// Binds eventfd `fd` to MSI-X vector `vector`, as VFIO's
    /// `VFIO_DEVICE_SET_IRQS` (MSI-X index, trigger action) does: the
    /// backend programs the vector's table entry (on VFIO the kernel does)
    /// and unmasks it, and every message of the vector adds 1 to `fd`.
    /// `None` masks the vector and unbinds it. The caller keeps `fd` open
    /// while it is bound.
    fn set_irq(&self, vector: u32, fd: Option<RawFd>) -> Result<(), DriverError>;
    /// Waits until `fd` is readable or `timeout_cycles` device cycles have
    /// passed; returns whether it is readable. On hardware this is poll(2)
    /// and the thread sleeps; in cosimulation the simulated NICs run on the
    /// waiting thread until the event or the timeout (in simulated time).
    fn wait_fd(&self, fd: RawFd, timeout_cycles: u64) -> Result<bool, DriverError>;
}

/// A Linux eventfd: what an MSI-X vector is bound to ([`Device::set_irq`])
/// and what a completion channel waits on. Non-blocking, close-on-exec.
#[derive(Debug)]
pub struct EventFd {
    fd: OwnedFd,
}

impl EventFd {
    /// A new eventfd with a count of 0.
    pub fn new() -> Result<EventFd, DriverError> {
        // SAFETY: eventfd(2) takes no pointers; a non-negative result is a new descriptor we own.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(DriverError::Device(format!("eventfd: {}", std::io::Error::last_os_error())));
        }
        // SAFETY: `fd` was just returned by eventfd(2) and is owned by nobody else.
        Ok(EventFd { fd: unsafe { OwnedFd::from_raw_fd(fd) } })
    }

    /// Reads and clears the count: the events since the last call (0: none).
    pub fn take(&self) -> Result<u64, DriverError> {
        let mut buf = [0u8; 8];
        // SAFETY: reads at most 8 bytes into a live 8-byte buffer.
        let n = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n == 8 {
            return Ok(u64::from_ne_bytes(buf));
        }
        let e = std::io::Error::last_os_error();
        if e.kind() == std::io::ErrorKind::WouldBlock {
            Ok(0)
        } else {
            Err(DriverError::Device(format!("eventfd read: {e}")))
        }
    }
}

impl AsRawFd for EventFd {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// Whether `fd` is readable, waiting at most `timeout_ms` milliseconds (0: just look; -1: forever).
pub fn poll_readable(fd: RawFd, timeout_ms: i32) -> Result<bool, DriverError> {
    let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    loop {
        // SAFETY: one valid pollfd for the duration of the call.
        let r = unsafe { libc::poll(&mut p, 1, timeout_ms) };
        if r >= 0 {
            return Ok(r > 0 && p.revents & libc::POLLIN != 0);
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(DriverError::Device(format!("poll: {e}")));
        }
    }
}
