//! `rnic-driver`: how the host library reaches a NIC.
//!
//! One trait, [`Device`], with backends: the cosimulated NIC (in `rnic-sim`,
//! which implements this trait) today, and VFIO (BAR0 through a mmap of the
//! vfio-pci region, DMA memory mapped into the IOMMU) later. Callers see
//! only the trait.
#![deny(missing_docs)]

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
}
