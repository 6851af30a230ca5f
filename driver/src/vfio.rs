//! The VFIO backend: a board bound to vfio-pci, driven from user space.
//!
//! Opening a device walks VFIO's chain (container `/dev/vfio/vfio`, the
//! device's IOMMU group `/dev/vfio/N`, the device) and checks every link on
//! the way, so an error names the missing piece and how to fix it. BAR0 is
//! mapped with mmap and registers are 64-bit volatile loads and stores. DMA
//! memory is anonymous memory (2 MiB hugepages for buffers of 2 MiB and
//! more, where the kernel has them) mapped into the IOMMU at IOVA = its
//! virtual address, with the device's read/write permission as the IOMMU's.
//! The application's own memory (`map_host`) is mapped where it is, page by
//! page, at bus addresses of its own ([`crate::iova`]).
//!
//! Everything the backend asks of the kernel goes through [`VfioKernel`];
//! [`LinuxVfio`] is the kernel itself, and the unit tests put a model of it
//! in its place, so discovery, the checks, the DMA bookkeeping and the error
//! messages are tested on machines without a board.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::fs::OpenOptions;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{fence, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use memmap2::{MmapOptions, MmapRaw};
use rnic_spec::{params, regs};
use vfio_bindings::bindings::vfio as sys;

use crate::iova::{HostMaps, IOVA_PAGE};
use crate::mapped::{self, Mapped};
use crate::{Device, DmaAccess, DmaBuf, DriverError, PciAddr};

/// Page size DMA buffers are rounded up to (the IOMMU's smallest).
pub const DMA_PAGE: usize = 4096;
/// Hugepage size used for DMA buffers of at least this many bytes.
pub const DMA_HUGEPAGE: usize = 2 << 20;

/// What `VFIO_DEVICE_GET_INFO` reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DevInfo {
    /// `VFIO_DEVICE_FLAGS_*`.
    pub flags: u32,
    /// Regions (BARs, config space, ...).
    pub num_regions: u32,
    /// Interrupt indexes (INTx, MSI, MSI-X, ...).
    pub num_irqs: u32,
}

/// What `VFIO_DEVICE_GET_REGION_INFO` reports for one region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegionInfo {
    /// `VFIO_REGION_INFO_FLAG_*`.
    pub flags: u32,
    /// Size in bytes.
    pub size: u64,
    /// Offset of the region in the device file (for pread, pwrite, mmap).
    pub offset: u64,
}

/// The kernel as the VFIO backend uses it: sysfs lookups, the VFIO ioctls
/// and mmap of device regions. [`LinuxVfio`] is the real one.
pub trait VfioKernel: Send + Sync {
    /// Whether sysfs lists PCI device `addr`.
    fn pci_exists(&self, addr: PciAddr) -> bool;
    /// The driver `addr` is bound to (`None`: no driver).
    fn pci_driver(&self, addr: PciAddr) -> Option<String>;
    /// The IOMMU group of `addr` (`None`: the IOMMU is off).
    fn iommu_group(&self, addr: PciAddr) -> Option<u32>;
    /// Opens `/dev/vfio/vfio`.
    fn open_container(&self) -> io::Result<OwnedFd>;
    /// Opens `/dev/vfio/<group>`.
    fn open_group(&self, group: u32) -> io::Result<OwnedFd>;
    /// `VFIO_GET_API_VERSION`.
    fn api_version(&self, container: RawFd) -> io::Result<i32>;
    /// `VFIO_CHECK_EXTENSION`.
    fn check_extension(&self, container: RawFd, ext: u32) -> io::Result<bool>;
    /// `VFIO_GROUP_GET_STATUS`: the group's flags.
    fn group_flags(&self, group: RawFd) -> io::Result<u32>;
    /// `VFIO_GROUP_SET_CONTAINER`.
    fn set_container(&self, group: RawFd, container: RawFd) -> io::Result<()>;
    /// `VFIO_SET_IOMMU`.
    fn set_iommu(&self, container: RawFd, kind: u32) -> io::Result<()>;
    /// `VFIO_GROUP_GET_DEVICE_FD` for the device named `name` (its PCI address).
    fn device_fd(&self, group: RawFd, name: &str) -> io::Result<OwnedFd>;
    /// `VFIO_DEVICE_GET_INFO`.
    fn device_info(&self, dev: RawFd) -> io::Result<DevInfo>;
    /// `VFIO_DEVICE_GET_REGION_INFO` for region `index`.
    fn region_info(&self, dev: RawFd, index: u32) -> io::Result<RegionInfo>;
    /// `VFIO_DEVICE_GET_IRQ_INFO`: the vectors of interrupt index `index`.
    fn irq_count(&self, dev: RawFd, index: u32) -> io::Result<u32>;
    /// pread on the device file (config space).
    fn read_at(&self, dev: RawFd, offset: u64, buf: &mut [u8]) -> io::Result<()>;
    /// pwrite on the device file (config space).
    fn write_at(&self, dev: RawFd, offset: u64, buf: &[u8]) -> io::Result<()>;
    /// mmap of `len` bytes of the device file at `offset` (a BAR).
    fn map_region(&self, dev: RawFd, offset: u64, len: usize) -> io::Result<MmapRaw>;
    /// `VFIO_IOMMU_MAP_DMA` (`flags`: `VFIO_DMA_MAP_FLAG_READ`/`WRITE`).
    fn map_dma(&self, container: RawFd, vaddr: u64, iova: u64, len: u64, flags: u32) -> io::Result<()>;
    /// `VFIO_IOMMU_UNMAP_DMA`.
    fn unmap_dma(&self, container: RawFd, iova: u64, len: u64) -> io::Result<()>;
    /// `VFIO_DEVICE_SET_IRQS` on interrupt index `index`: vector `i` triggers
    /// eventfd `fds[i]` (-1: none); an empty `fds` disables the index.
    fn set_irqs(&self, dev: RawFd, index: u32, fds: &[RawFd]) -> io::Result<()>;
}

/// The Linux kernel's VFIO (sysfs under `/sys/bus/pci`, `/dev/vfio`).
#[derive(Clone, Copy, Debug, Default)]
pub struct LinuxVfio;

fn sysfs_dev(addr: PciAddr) -> PathBuf {
    PathBuf::from(format!("/sys/bus/pci/devices/{addr}"))
}

fn link_name(p: &Path) -> Option<String> {
    std::fs::read_link(p).ok()?.file_name().map(|n| n.to_string_lossy().into_owned())
}

/// A VFIO ioctl request number: `_IO(VFIO_TYPE, VFIO_BASE + nr)`.
const fn vfio_io(nr: u32) -> libc::c_ulong {
    ((sys::VFIO_TYPE as libc::c_ulong) << 8) | (sys::VFIO_BASE + nr) as libc::c_ulong
}
const VFIO_GET_API_VERSION: libc::c_ulong = vfio_io(0);
const VFIO_CHECK_EXTENSION: libc::c_ulong = vfio_io(1);
const VFIO_SET_IOMMU: libc::c_ulong = vfio_io(2);
const VFIO_GROUP_GET_STATUS: libc::c_ulong = vfio_io(3);
const VFIO_GROUP_SET_CONTAINER: libc::c_ulong = vfio_io(4);
const VFIO_GROUP_GET_DEVICE_FD: libc::c_ulong = vfio_io(6);
const VFIO_DEVICE_GET_INFO: libc::c_ulong = vfio_io(7);
const VFIO_DEVICE_GET_REGION_INFO: libc::c_ulong = vfio_io(8);
const VFIO_DEVICE_GET_IRQ_INFO: libc::c_ulong = vfio_io(9);
const VFIO_DEVICE_SET_IRQS: libc::c_ulong = vfio_io(10);
const VFIO_IOMMU_MAP_DMA: libc::c_ulong = vfio_io(13);
const VFIO_IOMMU_UNMAP_DMA: libc::c_ulong = vfio_io(14);

/// An ioctl whose result is a count or a descriptor: negative is an error.
fn ioctl_ret(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// `argsz` of a VFIO argument structure.
fn argsz<T>() -> u32 {
    std::mem::size_of::<T>() as u32
}

impl VfioKernel for LinuxVfio {
    fn pci_exists(&self, addr: PciAddr) -> bool {
        sysfs_dev(addr).exists()
    }

    fn pci_driver(&self, addr: PciAddr) -> Option<String> {
        link_name(&sysfs_dev(addr).join("driver"))
    }

    fn iommu_group(&self, addr: PciAddr) -> Option<u32> {
        link_name(&sysfs_dev(addr).join("iommu_group"))?.parse().ok()
    }

    fn open_container(&self) -> io::Result<OwnedFd> {
        Ok(OpenOptions::new().read(true).write(true).open("/dev/vfio/vfio")?.into())
    }

    fn open_group(&self, group: u32) -> io::Result<OwnedFd> {
        Ok(OpenOptions::new().read(true).write(true).open(format!("/dev/vfio/{group}"))?.into())
    }

    fn api_version(&self, container: RawFd) -> io::Result<i32> {
        // SAFETY: VFIO_GET_API_VERSION takes no argument.
        ioctl_ret(unsafe { libc::ioctl(container, VFIO_GET_API_VERSION) })
    }

    fn check_extension(&self, container: RawFd, ext: u32) -> io::Result<bool> {
        // SAFETY: VFIO_CHECK_EXTENSION takes the extension as an integer argument.
        Ok(ioctl_ret(unsafe { libc::ioctl(container, VFIO_CHECK_EXTENSION, ext as libc::c_ulong) })? > 0)
    }

    fn group_flags(&self, group: RawFd) -> io::Result<u32> {
        let mut st = sys::vfio_group_status { argsz: argsz::<sys::vfio_group_status>(), flags: 0 };
        // SAFETY: the kernel writes at most argsz bytes into the live struct.
        ioctl_ret(unsafe { libc::ioctl(group, VFIO_GROUP_GET_STATUS, &mut st) })?;
        Ok(st.flags)
    }

    fn set_container(&self, group: RawFd, container: RawFd) -> io::Result<()> {
        // SAFETY: the argument is a pointer to the container's descriptor, read once.
        ioctl_ret(unsafe { libc::ioctl(group, VFIO_GROUP_SET_CONTAINER, &container) }).map(drop)
    }

    fn set_iommu(&self, container: RawFd, kind: u32) -> io::Result<()> {
        // SAFETY: VFIO_SET_IOMMU takes the IOMMU type as an integer argument.
        ioctl_ret(unsafe { libc::ioctl(container, VFIO_SET_IOMMU, kind as libc::c_ulong) }).map(drop)
    }

    fn device_fd(&self, group: RawFd, name: &str) -> io::Result<OwnedFd> {
        let name = CString::new(name).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        // SAFETY: the argument is a NUL-terminated string that outlives the call.
        let fd = ioctl_ret(unsafe { libc::ioctl(group, VFIO_GROUP_GET_DEVICE_FD, name.as_ptr()) })?;
        // SAFETY: a non-negative result is a new descriptor owned by nobody else.
        Ok(unsafe { std::os::fd::FromRawFd::from_raw_fd(fd) })
    }

    fn device_info(&self, dev: RawFd) -> io::Result<DevInfo> {
        let mut i = sys::vfio_device_info { argsz: argsz::<sys::vfio_device_info>(), ..Default::default() };
        // SAFETY: the kernel writes at most argsz bytes into the live struct.
        ioctl_ret(unsafe { libc::ioctl(dev, VFIO_DEVICE_GET_INFO, &mut i) })?;
        Ok(DevInfo { flags: i.flags, num_regions: i.num_regions, num_irqs: i.num_irqs })
    }

    fn region_info(&self, dev: RawFd, index: u32) -> io::Result<RegionInfo> {
        let mut r = sys::vfio_region_info { argsz: argsz::<sys::vfio_region_info>(), index, ..Default::default() };
        // SAFETY: the kernel writes at most argsz bytes into the live struct.
        ioctl_ret(unsafe { libc::ioctl(dev, VFIO_DEVICE_GET_REGION_INFO, &mut r) })?;
        Ok(RegionInfo { flags: r.flags, size: r.size, offset: r.offset })
    }

    fn irq_count(&self, dev: RawFd, index: u32) -> io::Result<u32> {
        let mut i = sys::vfio_irq_info { argsz: argsz::<sys::vfio_irq_info>(), index, ..Default::default() };
        // SAFETY: the kernel writes at most argsz bytes into the live struct.
        ioctl_ret(unsafe { libc::ioctl(dev, VFIO_DEVICE_GET_IRQ_INFO, &mut i) })?;
        Ok(i.count)
    }

    fn read_at(&self, dev: RawFd, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        // SAFETY: pread writes at most buf.len() bytes into buf.
        let n = unsafe { libc::pread(dev, buf.as_mut_ptr().cast(), buf.len(), offset as libc::off_t) };
        match n {
            n if n < 0 => Err(io::Error::last_os_error()),
            n if n as usize == buf.len() => Ok(()),
            n => Err(io::Error::new(io::ErrorKind::UnexpectedEof, format!("read {n} of {} bytes", buf.len()))),
        }
    }

    fn write_at(&self, dev: RawFd, offset: u64, buf: &[u8]) -> io::Result<()> {
        // SAFETY: pwrite reads at most buf.len() bytes from buf.
        let n = unsafe { libc::pwrite(dev, buf.as_ptr().cast(), buf.len(), offset as libc::off_t) };
        match n {
            n if n < 0 => Err(io::Error::last_os_error()),
            n if n as usize == buf.len() => Ok(()),
            n => Err(io::Error::new(io::ErrorKind::WriteZero, format!("wrote {n} of {} bytes", buf.len()))),
        }
    }

    fn map_region(&self, dev: RawFd, offset: u64, len: usize) -> io::Result<MmapRaw> {
        MmapOptions::new().offset(offset).len(len).map_raw(dev)
    }

    fn map_dma(&self, container: RawFd, vaddr: u64, iova: u64, len: u64, flags: u32) -> io::Result<()> {
        let m = sys::vfio_iommu_type1_dma_map {
            argsz: argsz::<sys::vfio_iommu_type1_dma_map>(),
            flags,
            vaddr,
            iova,
            size: len,
        };
        // SAFETY: the kernel reads argsz bytes of the live struct.
        ioctl_ret(unsafe { libc::ioctl(container, VFIO_IOMMU_MAP_DMA, &m) }).map(drop)
    }

    fn unmap_dma(&self, container: RawFd, iova: u64, len: u64) -> io::Result<()> {
        let mut u = sys::vfio_iommu_type1_dma_unmap {
            argsz: argsz::<sys::vfio_iommu_type1_dma_unmap>(),
            flags: 0,
            iova,
            size: len,
            data: Default::default(),
        };
        // SAFETY: the kernel reads the struct and writes back the size it unmapped.
        ioctl_ret(unsafe { libc::ioctl(container, VFIO_IOMMU_UNMAP_DMA, &mut u) }).map(drop)
    }

    fn set_irqs(&self, dev: RawFd, index: u32, fds: &[RawFd]) -> io::Result<()> {
        // struct vfio_irq_set: argsz, flags, index, start, count, then the eventfds.
        let (flags, count) = if fds.is_empty() {
            (sys::VFIO_IRQ_SET_DATA_NONE | sys::VFIO_IRQ_SET_ACTION_TRIGGER, 0)
        } else {
            (sys::VFIO_IRQ_SET_DATA_EVENTFD | sys::VFIO_IRQ_SET_ACTION_TRIGGER, fds.len() as u32)
        };
        let mut words = vec![argsz::<sys::vfio_irq_set>() + 4 * count, flags, index, 0, count];
        words.extend(fds.iter().map(|&fd| fd as u32));
        // SAFETY: the kernel reads argsz bytes, all inside `words`.
        ioctl_ret(unsafe { libc::ioctl(dev, VFIO_DEVICE_SET_IRQS, words.as_ptr()) }).map(drop)
    }
}

/// One DMA buffer: its memory and what the IOMMU grants the device.
struct DmaMap {
    mem: MmapRaw,
    /// Bytes the caller asked for (accesses past them are refused).
    len: usize,
    access: DmaAccess,
    hugepage: bool,
}

impl DmaMap {
    fn iova(&self) -> u64 {
        self.mem.as_ptr() as u64
    }
}

impl Mapped for DmaMap {
    fn mem(&self) -> &MmapRaw {
        &self.mem
    }
    fn len(&self) -> usize {
        self.len
    }
}

fn dma_flags(a: DmaAccess) -> u32 {
    (if a.device_read { sys::VFIO_DMA_MAP_FLAG_READ } else { 0 })
        | (if a.device_write { sys::VFIO_DMA_MAP_FLAG_WRITE } else { 0 })
}

/// What an open VFIO device is (for bring-up messages).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VfioInfo {
    /// PCI address.
    pub addr: PciAddr,
    /// IOMMU group.
    pub group: u32,
    /// BAR0's size as the device reports it.
    pub bar0_bytes: u64,
    /// MSI-X vectors the device offers.
    pub msix_vectors: u32,
    /// DMA buffers now mapped, and of them those on hugepages.
    pub dma_buffers: (usize, usize),
}

/// A board through VFIO (module doc). Dropping it unmaps every DMA buffer
/// from the IOMMU before the memory is freed.
pub struct VfioDevice<K: VfioKernel = LinuxVfio> {
    kernel: K,
    addr: PciAddr,
    group: u32,
    bar0: MmapRaw,
    bar0_bytes: u64,
    msix_vectors: u32,
    dma: Mutex<BTreeMap<u64, DmaMap>>,
    /// Application memory mapped by `map_host`.
    host: Mutex<HostMaps>,
    irq_fds: Mutex<Vec<RawFd>>,
    /// `REG_CYCLES` at open and the host's monotonic time then: device time
    /// is kept from the host's clock, not read over PCIe at each look.
    clock: (u64, Instant),
    // Declared last: dropped after the maps above are undone.
    device: OwnedFd,
    _group_fd: OwnedFd,
    container: OwnedFd,
}

const PCI_COMMAND: u64 = 4;
const PCI_COMMAND_MEMORY: u16 = 1 << 1;
const PCI_COMMAND_MASTER: u16 = 1 << 2;

impl VfioDevice<LinuxVfio> {
    /// Opens the board at `addr` through the kernel's VFIO.
    pub fn open(addr: PciAddr) -> Result<VfioDevice<LinuxVfio>, DriverError> {
        VfioDevice::open_with(LinuxVfio, addr)
    }
}

impl<K: VfioKernel> VfioDevice<K> {
    /// Opens the device at `addr` through `kernel`: checks each piece VFIO
    /// needs, enables memory decoding and bus mastering, maps BAR0 and
    /// checks that rnic answers in it (`REG_ID`).
    pub fn open_with(kernel: K, addr: PciAddr) -> Result<VfioDevice<K>, DriverError> {
        let fail = |why: String| DriverError::Open { device: format!("vfio:{addr}"), why };
        let sys_dev = sysfs_dev(addr);
        if !kernel.pci_exists(addr) {
            return Err(fail(format!(
                "there is no PCI device {addr} ({} is missing; `lspci -D` lists the devices)",
                sys_dev.display()
            )));
        }
        let group = kernel.iommu_group(addr).ok_or_else(|| {
            fail(format!(
                "{addr} has no IOMMU group, so the IOMMU is off: add intel_iommu=on (Intel) or amd_iommu=on (AMD) to the kernel command line and reboot; `ls /sys/kernel/iommu_groups` then lists groups"
            ))
        })?;
        let bind = format!(
            "echo vfio-pci > {d}/driver_override; echo {addr} > /sys/bus/pci/drivers_probe (after `modprobe vfio-pci`)",
            d = sys_dev.display()
        );
        match kernel.pci_driver(addr) {
            Some(d) if d == "vfio-pci" => {}
            Some(d) => {
                return Err(fail(format!(
                    "{addr} is bound to {d}, not vfio-pci: echo {addr} > {}/driver/unbind; {bind}",
                    sys_dev.display()
                )))
            }
            None => return Err(fail(format!("{addr} is bound to no driver, not vfio-pci: {bind}"))),
        }
        let container = kernel.open_container().map_err(|e| {
            fail(match e.kind() {
                io::ErrorKind::NotFound => "/dev/vfio/vfio is missing: load the module with `modprobe vfio-pci`".to_string(),
                io::ErrorKind::PermissionDenied => {
                    "no permission to open /dev/vfio/vfio: run as root, or give your user the VFIO devices (docs/bringup.md)".to_string()
                }
                _ => format!("cannot open /dev/vfio/vfio: {e}"),
            })
        })?;
        let c = container.as_raw_fd();
        let v = kernel.api_version(c).map_err(|e| fail(format!("VFIO_GET_API_VERSION: {e}")))?;
        if v != sys::VFIO_API_VERSION as i32 {
            return Err(fail(format!("the kernel's VFIO API is version {v}, rnic speaks {}", sys::VFIO_API_VERSION)));
        }
        if !kernel
            .check_extension(c, sys::VFIO_TYPE1v2_IOMMU)
            .map_err(|e| fail(format!("VFIO_CHECK_EXTENSION: {e}")))?
        {
            return Err(fail("the kernel's VFIO has no type-1 v2 IOMMU (CONFIG_VFIO_IOMMU_TYPE1)".into()));
        }
        let group_fd = kernel.open_group(group).map_err(|e| {
            fail(match (e.kind(), e.raw_os_error()) {
                (io::ErrorKind::PermissionDenied, _) => {
                    format!("no permission to open /dev/vfio/{group}: run as root, or `chown $USER /dev/vfio/{group}`")
                }
                (_, Some(libc::EBUSY)) => {
                    format!("IOMMU group {group} is open in another process (another rnic application, or a VM given the device)")
                }
                (io::ErrorKind::NotFound, _) => format!("/dev/vfio/{group} is missing: is {addr} really bound to vfio-pci?"),
                _ => format!("cannot open /dev/vfio/{group}: {e}"),
            })
        })?;
        let g = group_fd.as_raw_fd();
        let flags = kernel.group_flags(g).map_err(|e| fail(format!("VFIO_GROUP_GET_STATUS: {e}")))?;
        if flags & sys::VFIO_GROUP_FLAGS_VIABLE == 0 {
            return Err(fail(format!(
                "IOMMU group {group} is not viable: every device in it must be bound to vfio-pci or to no driver (`ls /sys/kernel/iommu_groups/{group}/devices`)"
            )));
        }
        kernel.set_container(g, c).map_err(|e| fail(format!("VFIO_GROUP_SET_CONTAINER: {e}")))?;
        kernel.set_iommu(c, sys::VFIO_TYPE1v2_IOMMU).map_err(|e| fail(format!("VFIO_SET_IOMMU: {e}")))?;
        let device =
            kernel.device_fd(g, &addr.to_string()).map_err(|e| fail(format!("VFIO_GROUP_GET_DEVICE_FD: {e}")))?;
        let d = device.as_raw_fd();
        let info = kernel.device_info(d).map_err(|e| fail(format!("VFIO_DEVICE_GET_INFO: {e}")))?;
        if info.flags & sys::VFIO_DEVICE_FLAGS_PCI == 0 || info.num_regions <= sys::VFIO_PCI_CONFIG_REGION_INDEX {
            return Err(fail(format!(
                "VFIO does not present {addr} as a PCI device (flags {:#x}, {} regions)",
                info.flags, info.num_regions
            )));
        }
        let bar = kernel
            .region_info(d, sys::VFIO_PCI_BAR0_REGION_INDEX)
            .map_err(|e| fail(format!("BAR0's region info: {e}")))?;
        if bar.size < regs::BAR0_BYTES {
            return Err(fail(format!(
                "BAR0 is {} bytes, rnic's is {}: the FPGA holds another design (load rnic's bitstream and rescan the bus)",
                bar.size,
                regs::BAR0_BYTES
            )));
        }
        let need = sys::VFIO_REGION_INFO_FLAG_READ | sys::VFIO_REGION_INFO_FLAG_WRITE | sys::VFIO_REGION_INFO_FLAG_MMAP;
        if bar.flags & need != need {
            return Err(fail(format!("BAR0 cannot be mapped read-write (region flags {:#x})", bar.flags)));
        }
        let cfg = kernel
            .region_info(d, sys::VFIO_PCI_CONFIG_REGION_INDEX)
            .map_err(|e| fail(format!("config space region info: {e}")))?;
        let mut cmd = [0u8; 2];
        kernel.read_at(d, cfg.offset + PCI_COMMAND, &mut cmd).map_err(|e| fail(format!("reading PCI_COMMAND: {e}")))?;
        let cmd = u16::from_le_bytes(cmd) | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER;
        kernel
            .write_at(d, cfg.offset + PCI_COMMAND, &cmd.to_le_bytes())
            .map_err(|e| fail(format!("enabling memory decoding and bus mastering: {e}")))?;
        let bar0 = kernel
            .map_region(d, bar.offset, regs::BAR0_BYTES as usize)
            .map_err(|e| fail(format!("mapping BAR0: {e}")))?;
        let msix_vectors = if info.num_irqs > sys::VFIO_PCI_MSIX_IRQ_INDEX {
            kernel.irq_count(d, sys::VFIO_PCI_MSIX_IRQ_INDEX).map_err(|e| fail(format!("MSI-X info: {e}")))?
        } else {
            0
        };
        let mut dev = VfioDevice {
            kernel,
            addr,
            group,
            bar0,
            bar0_bytes: bar.size,
            msix_vectors,
            dma: Mutex::new(BTreeMap::new()),
            host: Mutex::new(HostMaps::new()),
            irq_fds: Mutex::new(Vec::new()),
            clock: (0, Instant::now()),
            device,
            _group_fd: group_fd,
            container,
        };
        let id = dev.load(regs::REG_ID);
        if id == u64::MAX {
            return Err(fail(format!(
                "BAR0 reads all ones: {addr} does not answer (PCIe link down, or the FPGA was reprogrammed after boot: rescan the bus)"
            )));
        }
        if id >> 32 != regs::ID_MAGIC {
            return Err(fail(format!(
                "REG_ID is {id:#018x}, not rnic's ({:#x} in bits 63:32): the FPGA holds another design",
                regs::ID_MAGIC
            )));
        }
        dev.clock = (dev.load(regs::REG_CYCLES), Instant::now());
        Ok(dev)
    }

    /// What the device is (group, BAR0, MSI-X, DMA buffers).
    pub fn info(&self) -> VfioInfo {
        let dma = self.dma.lock().unwrap();
        VfioInfo {
            addr: self.addr,
            group: self.group,
            bar0_bytes: self.bar0_bytes,
            msix_vectors: self.msix_vectors,
            dma_buffers: (dma.len(), dma.values().filter(|m| m.hugepage).count()),
        }
    }

    fn load(&self, offset: u32) -> u64 {
        // SAFETY: callers keep offset 8-aligned and inside the mapped BAR (reg_ptr).
        unsafe { std::ptr::read_volatile(self.bar0.as_ptr().add(offset as usize).cast::<u64>()) }
    }

    fn reg_ok(&self, offset: u32) -> Result<(), DriverError> {
        if !offset.is_multiple_of(8) || offset as u64 + 8 > regs::BAR0_BYTES {
            return Err(DriverError::Device(format!(
                "vfio:{}: register offset {offset:#x} is not an 8-byte word inside BAR0 ({} bytes)",
                self.addr,
                regs::BAR0_BYTES
            )));
        }
        Ok(())
    }

    fn map_into_iommu(&self, m: &DmaMap) -> Result<(), DriverError> {
        self.iommu_map(m.iova(), m.iova(), m.mem.len() as u64, m.access, m.len)
    }

    /// Maps `size` bytes of this process at `vaddr` to bus address `iova` (for a buffer of `len` bytes).
    fn iommu_map(&self, vaddr: u64, iova: u64, size: u64, access: DmaAccess, len: usize) -> Result<(), DriverError> {
        let flags = dma_flags(access);
        if flags == 0 {
            return Ok(());
        }
        self.kernel
            .map_dma(self.container.as_raw_fd(), vaddr, iova, size, flags)
            .map_err(|e| {
                let why = match e.raw_os_error() {
                    Some(libc::ENOMEM) | Some(libc::EPERM) => format!(
                        "{e}: the kernel pins DMA memory against the locked-memory limit ({}); raise it (`ulimit -l unlimited` as root, or memlock in /etc/security/limits.conf)",
                        memlock_limit()
                    ),
                    _ => e.to_string(),
                };
                DriverError::DmaAlloc { len, reason: format!("VFIO_IOMMU_MAP_DMA of {size} bytes at {iova:#x}: {why}") }
            })
    }

    fn unmap_from_iommu(&self, m: &DmaMap) -> Result<(), DriverError> {
        self.iommu_unmap(m.iova(), m.mem.len() as u64, m.access)
    }

    fn iommu_unmap(&self, iova: u64, size: u64, access: DmaAccess) -> Result<(), DriverError> {
        if dma_flags(access) == 0 {
            return Ok(());
        }
        self.kernel
            .unmap_dma(self.container.as_raw_fd(), iova, size)
            .map_err(|e| DriverError::Device(format!("vfio:{}: VFIO_IOMMU_UNMAP_DMA at {iova:#x}: {e}", self.addr)))
    }
}

fn memlock_limit() -> String {
    let mut r = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes one rlimit into the live struct.
    if unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut r) } != 0 {
        return "unknown".into();
    }
    if r.rlim_cur == libc::RLIM_INFINITY {
        "unlimited".into()
    } else {
        format!("{} KiB", r.rlim_cur / 1024)
    }
}

/// Anonymous zeroed memory for a DMA buffer of `len` bytes: on 2 MiB
/// hugepages when `len` is at least that and the kernel has them free,
/// otherwise on 4 KiB pages. Returns the mapping and whether it is on hugepages.
fn dma_memory(len: usize) -> io::Result<(MmapRaw, bool)> {
    if len >= DMA_HUGEPAGE {
        let rounded = len.div_ceil(DMA_HUGEPAGE) * DMA_HUGEPAGE;
        if let Ok(m) = MmapOptions::new().len(rounded).huge(Some(DMA_HUGEPAGE.trailing_zeros() as u8)).map_anon() {
            return Ok((m.into(), true));
        }
    }
    Ok((MmapOptions::new().len(len.div_ceil(DMA_PAGE) * DMA_PAGE).map_anon()?.into(), false))
}

impl<K: VfioKernel> Drop for VfioDevice<K> {
    fn drop(&mut self) {
        let maps = std::mem::take(&mut *self.dma.lock().unwrap());
        // A failure here leaves the pages pinned until the container closes just below.
        for m in maps.values() {
            let _ = self.unmap_from_iommu(m);
        }
        for m in self.host.lock().unwrap().take_all() {
            let _ = self.iommu_unmap(m.iova, m.span, m.access);
        }
    }
}

impl<K: VfioKernel> Device for VfioDevice<K> {
    fn read_reg(&self, offset: u32) -> Result<u64, DriverError> {
        self.reg_ok(offset)?;
        let v = self.load(offset);
        // Later loads of DMA memory must not pass the register read (a CQ's producer index, say).
        fence(Ordering::SeqCst);
        Ok(v)
    }

    fn write_reg(&self, offset: u32, value: u64) -> Result<(), DriverError> {
        self.reg_ok(offset)?;
        // A doorbell must reach the device after the WQE it announces is in memory.
        fence(Ordering::SeqCst);
        // SAFETY: offset is an 8-aligned word inside the mapped BAR (reg_ok).
        unsafe { std::ptr::write_volatile(self.bar0.as_mut_ptr().add(offset as usize).cast::<u64>(), value) };
        Ok(())
    }

    fn alloc_dma(&self, len: usize, access: DmaAccess) -> Result<DmaBuf, DriverError> {
        if len == 0 {
            return Err(DriverError::DmaAlloc { len, reason: "a DMA buffer needs at least one byte".into() });
        }
        let (mem, hugepage) =
            dma_memory(len).map_err(|e| DriverError::DmaAlloc { len, reason: format!("mmap: {e}") })?;
        let m = DmaMap { mem, len, access, hugepage };
        self.map_into_iommu(&m)?;
        let buf = DmaBuf { bus_addr: m.iova(), len };
        self.dma.lock().unwrap().insert(m.iova(), m);
        Ok(buf)
    }

    fn free_dma(&self, buf: DmaBuf) -> Result<(), DriverError> {
        let mut dma = self.dma.lock().unwrap();
        match dma.get(&buf.bus_addr) {
            Some(m) if m.len == buf.len => {
                self.unmap_from_iommu(m)?;
                dma.remove(&buf.bus_addr);
                Ok(())
            }
            _ => Err(DriverError::Device(format!(
                "vfio:{}: free of {} bytes at {:#x}, which is not a buffer of alloc_dma",
                self.addr, buf.len, buf.bus_addr
            ))),
        }
    }

    fn set_dma_access(&self, buf: DmaBuf, access: DmaAccess) -> Result<(), DriverError> {
        let mut dma = self.dma.lock().unwrap();
        let Some(m) = dma.get_mut(&buf.bus_addr).filter(|m| m.len == buf.len) else {
            return Err(DriverError::Device(format!(
                "vfio:{}: access change of {} bytes at {:#x}, which is not a buffer of alloc_dma",
                self.addr, buf.len, buf.bus_addr
            )));
        };
        if m.access == access {
            return Ok(());
        }
        // The IOMMU has no permission change: the range is unmapped and mapped again.
        self.unmap_from_iommu(m)?;
        m.access = access;
        self.map_into_iommu(m)
    }

    fn write_mem(&self, addr: u64, data: &[u8]) -> Result<(), DriverError> {
        mapped::write(&self.dma.lock().unwrap(), &self.name(), addr, data)
    }

    fn read_mem(&self, addr: u64, out: &mut [u8]) -> Result<(), DriverError> {
        mapped::read(&self.dma.lock().unwrap(), &self.name(), addr, out)
    }

    unsafe fn map_host(&self, ptr: *mut u8, len: usize, access: DmaAccess) -> Result<DmaBuf, DriverError> {
        let in_page = ptr as u64 % IOVA_PAGE;
        // Pages of its own per registration: two registrations may share a page, and one IOVA maps once.
        self.host.lock().unwrap().map(in_page, len, IOVA_PAGE, access, |iova, span| {
            self.iommu_map(ptr as u64 - in_page, iova, span, access, len)
        })
    }

    fn unmap_host(&self, buf: DmaBuf) -> Result<(), DriverError> {
        self.host.lock().unwrap().unmap(buf, |m| self.iommu_unmap(m.iova, m.span, m.access)).unwrap_or_else(|| {
            Err(DriverError::Device(format!(
                "vfio:{}: unmap of {} bytes at {:#x}, which is not memory of map_host",
                self.addr, buf.len, buf.bus_addr
            )))
        })
    }

    fn wait(&self) -> Result<(), DriverError> {
        std::hint::spin_loop();
        Ok(())
    }

    /// Device cycles from the host's monotonic clock at the NIC's nominal
    /// rate, counted from `REG_CYCLES` at open: no MMIO read (about a
    /// microsecond) per look at the clock.
    fn now_cycles(&self) -> u64 {
        let ns = self.clock.1.elapsed().as_nanos();
        self.clock.0 + (ns * params::CLOCK_HZ as u128 / 1_000_000_000) as u64
    }

    fn name(&self) -> String {
        format!("vfio:{}", self.addr)
    }

    fn set_irq(&self, vector: u32, fd: Option<RawFd>) -> Result<(), DriverError> {
        if vector >= self.msix_vectors {
            return Err(DriverError::Device(format!(
                "vfio:{}: MSI-X vector {vector} does not exist (the device has {})",
                self.addr, self.msix_vectors
            )));
        }
        let mut fds = self.irq_fds.lock().unwrap();
        fds.resize(self.msix_vectors as usize, -1);
        fds[vector as usize] = fd.unwrap_or(-1);
        // Every vector at once: before Linux 6.5 VFIO cannot add a vector to an enabled MSI-X block.
        let all: &[RawFd] = if fds.iter().all(|&f| f < 0) { &[] } else { &fds };
        self.kernel.set_irqs(self.device.as_raw_fd(), sys::VFIO_PCI_MSIX_IRQ_INDEX, all).map_err(|e| {
            DriverError::Device(format!("vfio:{}: VFIO_DEVICE_SET_IRQS (MSI-X vector {vector}): {e}", self.addr))
        })
    }

    fn wait_fd(&self, fd: RawFd, timeout_cycles: u64) -> Result<bool, DriverError> {
        let ms = (timeout_cycles as u128 * 1000).div_ceil(params::CLOCK_HZ as u128).min(i32::MAX as u128);
        crate::poll_readable(fd, ms as i32)
    }
}

#[cfg(test)]
mod tests;
