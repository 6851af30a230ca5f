//! The VFIO backend against a model of the kernel: a machine with one
//! device whose every piece (IOMMU, binding, permissions, BAR, limits) a
//! test can take away, and that checks each ioctl's arguments as the
//! kernel would (descriptor roles, overlapping or unknown DMA ranges, the
//! locked-memory limit).

use std::collections::BTreeMap;
use std::fs::File;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::{Arc, Mutex};

use super::*;

const ADDR: PciAddr = PciAddr { domain: 0, bus: 0x3b, device: 0, function: 0 };
const BAR0_OFFSET: u64 = 0;
const CONFIG_OFFSET: u64 = 7 << 40;

/// The machine the fake kernel presents.
#[derive(Clone)]
struct Machine {
    exists: bool,
    driver: Option<String>,
    group: Option<u32>,
    container_err: Option<i32>,
    group_err: Option<i32>,
    api_version: i32,
    type1v2: bool,
    viable: bool,
    bar0_size: u64,
    bar0_flags: u32,
    reg_id: u64,
    msix: u32,
    /// Bytes the IOMMU may pin (RLIMIT_MEMLOCK).
    memlock: u64,
}

impl Default for Machine {
    fn default() -> Machine {
        Machine {
            exists: true,
            driver: Some("vfio-pci".into()),
            group: Some(42),
            container_err: None,
            group_err: None,
            api_version: 0,
            type1v2: true,
            viable: true,
            bar0_size: regs::BAR0_BYTES,
            bar0_flags: sys::VFIO_REGION_INFO_FLAG_READ
                | sys::VFIO_REGION_INFO_FLAG_WRITE
                | sys::VFIO_REGION_INFO_FLAG_MMAP,
            reg_id: regs::ID_MAGIC << 32 | 7,
            msix: regs::MSIX_VECTORS as u32,
            memlock: 64 << 20,
        }
    }
}

/// What the fake kernel saw and holds.
#[derive(Default)]
struct State {
    container: Option<RawFd>,
    group: Option<RawFd>,
    device: Option<RawFd>,
    attached: bool,
    iommu_set: bool,
    config_cmd: u16,
    /// IOVA -> (vaddr, length, flags).
    iommu: BTreeMap<u64, (u64, u64, u32)>,
    unmaps: usize,
    irqs: Vec<Vec<RawFd>>,
    bar0: Option<usize>,
}

#[derive(Clone)]
struct Fake {
    m: Machine,
    st: Arc<Mutex<State>>,
}

fn handle() -> OwnedFd {
    File::open("/dev/null").unwrap().into()
}

fn errno(e: i32) -> io::Error {
    io::Error::from_raw_os_error(e)
}

impl Fake {
    fn new(m: Machine) -> Fake {
        Fake { m, st: Arc::default() }
    }

    fn is(&self, fd: RawFd, role: fn(&State) -> Option<RawFd>) -> io::Result<()> {
        if role(&self.st.lock().unwrap()) == Some(fd) {
            Ok(())
        } else {
            Err(errno(libc::EBADF))
        }
    }
}

impl VfioKernel for Fake {
    fn pci_exists(&self, addr: PciAddr) -> bool {
        self.m.exists && addr == ADDR
    }
    fn pci_driver(&self, _: PciAddr) -> Option<String> {
        self.m.driver.clone()
    }
    fn iommu_group(&self, _: PciAddr) -> Option<u32> {
        self.m.group
    }
    fn open_container(&self) -> io::Result<OwnedFd> {
        if let Some(e) = self.m.container_err {
            return Err(errno(e));
        }
        let fd = handle();
        self.st.lock().unwrap().container = Some(fd.as_raw_fd());
        Ok(fd)
    }
    fn open_group(&self, group: u32) -> io::Result<OwnedFd> {
        assert_eq!(Some(group), self.m.group);
        if let Some(e) = self.m.group_err {
            return Err(errno(e));
        }
        let fd = handle();
        self.st.lock().unwrap().group = Some(fd.as_raw_fd());
        Ok(fd)
    }
    fn api_version(&self, c: RawFd) -> io::Result<i32> {
        self.is(c, |s| s.container)?;
        Ok(self.m.api_version)
    }
    fn check_extension(&self, c: RawFd, ext: u32) -> io::Result<bool> {
        self.is(c, |s| s.container)?;
        Ok(ext == sys::VFIO_TYPE1v2_IOMMU && self.m.type1v2)
    }
    fn group_flags(&self, g: RawFd) -> io::Result<u32> {
        self.is(g, |s| s.group)?;
        Ok(if self.m.viable { sys::VFIO_GROUP_FLAGS_VIABLE } else { 0 })
    }
    fn set_container(&self, g: RawFd, c: RawFd) -> io::Result<()> {
        self.is(g, |s| s.group)?;
        self.is(c, |s| s.container)?;
        self.st.lock().unwrap().attached = true;
        Ok(())
    }
    fn set_iommu(&self, c: RawFd, kind: u32) -> io::Result<()> {
        self.is(c, |s| s.container)?;
        let mut st = self.st.lock().unwrap();
        // The kernel refuses an IOMMU for a container without a group.
        if !st.attached || kind != sys::VFIO_TYPE1v2_IOMMU {
            return Err(errno(libc::EINVAL));
        }
        st.iommu_set = true;
        Ok(())
    }
    fn device_fd(&self, g: RawFd, name: &str) -> io::Result<OwnedFd> {
        self.is(g, |s| s.group)?;
        if !self.st.lock().unwrap().iommu_set || name != ADDR.to_string() {
            return Err(errno(libc::EINVAL));
        }
        let fd = handle();
        self.st.lock().unwrap().device = Some(fd.as_raw_fd());
        Ok(fd)
    }
    fn device_info(&self, d: RawFd) -> io::Result<DevInfo> {
        self.is(d, |s| s.device)?;
        Ok(DevInfo { flags: sys::VFIO_DEVICE_FLAGS_PCI, num_regions: 9, num_irqs: 5 })
    }
    fn region_info(&self, d: RawFd, index: u32) -> io::Result<RegionInfo> {
        self.is(d, |s| s.device)?;
        match index {
            sys::VFIO_PCI_BAR0_REGION_INDEX => {
                Ok(RegionInfo { flags: self.m.bar0_flags, size: self.m.bar0_size, offset: BAR0_OFFSET })
            }
            sys::VFIO_PCI_CONFIG_REGION_INDEX => Ok(RegionInfo { flags: 3, size: 256, offset: CONFIG_OFFSET }),
            _ => Err(errno(libc::EINVAL)),
        }
    }
    fn irq_count(&self, d: RawFd, index: u32) -> io::Result<u32> {
        self.is(d, |s| s.device)?;
        assert_eq!(index, sys::VFIO_PCI_MSIX_IRQ_INDEX);
        Ok(self.m.msix)
    }
    fn read_at(&self, d: RawFd, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.is(d, |s| s.device)?;
        assert_eq!((offset, buf.len()), (CONFIG_OFFSET + PCI_COMMAND, 2), "only PCI_COMMAND is read");
        buf.copy_from_slice(&self.st.lock().unwrap().config_cmd.to_le_bytes());
        Ok(())
    }
    fn write_at(&self, d: RawFd, offset: u64, buf: &[u8]) -> io::Result<()> {
        self.is(d, |s| s.device)?;
        assert_eq!((offset, buf.len()), (CONFIG_OFFSET + PCI_COMMAND, 2), "only PCI_COMMAND is written");
        self.st.lock().unwrap().config_cmd = u16::from_le_bytes([buf[0], buf[1]]);
        Ok(())
    }
    fn map_region(&self, d: RawFd, offset: u64, len: usize) -> io::Result<MmapRaw> {
        self.is(d, |s| s.device)?;
        assert_eq!(offset, BAR0_OFFSET);
        let mut m = MmapOptions::new().len(len).map_anon()?;
        // An all-ones BAR is a device that does not answer; a disabled one reads so too.
        let cmd = self.st.lock().unwrap().config_cmd;
        let id = if cmd & PCI_COMMAND_MEMORY == 0 { u64::MAX } else { self.m.reg_id };
        m[regs::REG_ID as usize..][..8].copy_from_slice(&id.to_le_bytes());
        m[regs::REG_CYCLES as usize..][..8].copy_from_slice(&1234u64.to_le_bytes());
        self.st.lock().unwrap().bar0 = Some(m.as_ptr() as usize);
        Ok(m.into())
    }
    fn map_dma(&self, c: RawFd, vaddr: u64, iova: u64, len: u64, flags: u32) -> io::Result<()> {
        self.is(c, |s| s.container)?;
        let mut st = self.st.lock().unwrap();
        let rw = sys::VFIO_DMA_MAP_FLAG_READ | sys::VFIO_DMA_MAP_FLAG_WRITE;
        if flags & rw == 0
            || flags & !rw != 0
            || len == 0
            || !len.is_multiple_of(DMA_PAGE as u64)
            || !iova.is_multiple_of(DMA_PAGE as u64)
        {
            return Err(errno(libc::EINVAL));
        }
        if st.iommu.iter().any(|(&i, &(_, l, _))| i < iova + len && iova < i + l) {
            return Err(errno(libc::EEXIST));
        }
        if st.iommu.values().map(|m| m.1).sum::<u64>() + len > self.m.memlock {
            return Err(errno(libc::ENOMEM));
        }
        st.iommu.insert(iova, (vaddr, len, flags));
        Ok(())
    }
    fn unmap_dma(&self, c: RawFd, iova: u64, len: u64) -> io::Result<()> {
        self.is(c, |s| s.container)?;
        let mut st = self.st.lock().unwrap();
        match st.iommu.get(&iova) {
            Some(&(_, l, _)) if l == len => {
                st.iommu.remove(&iova);
                st.unmaps += 1;
                Ok(())
            }
            _ => Err(errno(libc::EINVAL)),
        }
    }
    fn set_irqs(&self, d: RawFd, index: u32, fds: &[RawFd]) -> io::Result<()> {
        self.is(d, |s| s.device)?;
        assert_eq!(index, sys::VFIO_PCI_MSIX_IRQ_INDEX);
        if fds.len() > self.m.msix as usize {
            return Err(errno(libc::EINVAL));
        }
        self.st.lock().unwrap().irqs.push(fds.to_vec());
        Ok(())
    }
}

type Opened = (Result<VfioDevice<Fake>, DriverError>, Fake);

fn open(m: Machine) -> Opened {
    let k = Fake::new(m);
    (VfioDevice::open_with(k.clone(), ADDR), k)
}

fn open_ok() -> (VfioDevice<Fake>, Fake) {
    let (d, k) = open(Machine::default());
    (d.unwrap_or_else(|e| panic!("{e}")), k)
}

const RW: DmaAccess = DmaAccess { device_read: true, device_write: true };
const RO: DmaAccess = DmaAccess { device_read: true, device_write: false };
const WO: DmaAccess = DmaAccess { device_read: false, device_write: true };
const NONE: DmaAccess = DmaAccess { device_read: false, device_write: false };

#[test]
fn open_enables_the_device_and_maps_bar0() {
    let (d, k) = open_ok();
    let st = k.st.lock().unwrap();
    assert!(st.attached && st.iommu_set);
    assert_eq!(st.config_cmd & (PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER), PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
    drop(st);
    assert_eq!(d.name(), "vfio:0000:3b:00.0");
    assert_eq!(d.read_reg(regs::REG_ID).unwrap(), regs::ID_MAGIC << 32 | 7);
    // Device time runs from REG_CYCLES at open on the host's clock, without reading BAR0 again.
    let t0 = d.now_cycles();
    assert!(t0 >= 1234, "{t0}");
    // SAFETY: the fake's BAR0 mapping lives as long as `d`, and REG_CYCLES is an aligned word in it.
    unsafe { *((k.st.lock().unwrap().bar0.unwrap() + regs::REG_CYCLES as usize) as *mut u64) = 0 };
    std::thread::sleep(std::time::Duration::from_millis(2));
    let t1 = d.now_cycles();
    let two_ms = 2 * rnic_spec::params::CLOCK_HZ / 1000;
    assert!(t1 >= t0 + two_ms, "{t0} then {t1}: at least 2 ms of cycles");
    let i = d.info();
    assert_eq!((i.addr, i.group, i.bar0_bytes, i.msix_vectors, i.dma_buffers), (ADDR, 42, regs::BAR0_BYTES, 8, (0, 0)));
}

#[test]
fn registers_are_words_of_bar0() {
    let (d, k) = open_ok();
    let bar = k.st.lock().unwrap().bar0.unwrap();
    let last = (regs::BAR0_BYTES - 8) as u32;
    for (off, v) in [(regs::db_sq(5), 0x1234_5678_9abc_def0u64), (regs::db_rq(16383), 3), (last, u64::MAX)] {
        d.write_reg(off, v).unwrap();
        // SAFETY: the fake's BAR0 mapping is alive while `d` is.
        let seen = unsafe { std::ptr::read_volatile((bar + off as usize) as *const u64) };
        assert_eq!(seen, v, "word at {off:#x}");
        assert_eq!(d.read_reg(off).unwrap(), v);
    }
    for off in [4u32, regs::BAR0_BYTES as u32, u32::MAX - 7, last + 4] {
        let e = d.write_reg(off, 1).expect_err("bad offset");
        assert!(e.to_string().contains("not an 8-byte word inside BAR0"), "{e}");
        assert!(d.read_reg(off).is_err());
    }
}

#[test]
fn each_missing_piece_is_named_with_its_fix() {
    type Change = Box<dyn Fn(&mut Machine)>;
    let cases: Vec<(&str, Change, &str)> = vec![
        ("no device", Box::new(|m| m.exists = false), "there is no PCI device 0000:3b:00.0"),
        ("IOMMU off", Box::new(|m| m.group = None), "intel_iommu=on"),
        (
            "other driver",
            Box::new(|m| m.driver = Some("nvme".into())),
            "bound to nvme, not vfio-pci: echo 0000:3b:00.0 > /sys/bus/pci/devices/0000:3b:00.0/driver/unbind",
        ),
        (
            "no driver",
            Box::new(|m| m.driver = None),
            "bound to no driver, not vfio-pci: echo vfio-pci > /sys/bus/pci/devices/0000:3b:00.0/driver_override",
        ),
        ("no module", Box::new(|m| m.container_err = Some(libc::ENOENT)), "modprobe vfio-pci"),
        ("no permission", Box::new(|m| m.container_err = Some(libc::EACCES)), "no permission to open /dev/vfio/vfio"),
        ("API", Box::new(|m| m.api_version = 1), "VFIO API is version 1"),
        ("no type1v2", Box::new(|m| m.type1v2 = false), "no type-1 v2 IOMMU"),
        ("group permission", Box::new(|m| m.group_err = Some(libc::EACCES)), "chown $USER /dev/vfio/42"),
        ("group busy", Box::new(|m| m.group_err = Some(libc::EBUSY)), "group 42 is open in another process"),
        ("group node missing", Box::new(|m| m.group_err = Some(libc::ENOENT)), "/dev/vfio/42 is missing"),
        ("not viable", Box::new(|m| m.viable = false), "ls /sys/kernel/iommu_groups/42/devices"),
        ("small BAR0", Box::new(|m| m.bar0_size = 1 << 20), "BAR0 is 1048576 bytes, rnic's is 4194304"),
        ("BAR0 not mappable", Box::new(|m| m.bar0_flags = sys::VFIO_REGION_INFO_FLAG_READ), "BAR0 cannot be mapped"),
        ("other design", Box::new(|m| m.reg_id = 0x1234_5678_0000_0001), "REG_ID is 0x1234567800000001"),
        ("dead link", Box::new(|m| m.reg_id = u64::MAX), "reads all ones"),
    ];
    for (what, change, want) in cases {
        let mut m = Machine::default();
        change(&mut m);
        let e = open(m).0.err().unwrap_or_else(|| panic!("{what}: opened"));
        let msg = e.to_string();
        assert!(msg.starts_with("cannot open vfio:0000:3b:00.0: "), "{what}: {msg}");
        assert!(msg.contains(want), "{what}: {msg}");
    }
}

#[test]
fn dma_buffers_are_mapped_at_their_address_with_their_access() {
    let (d, k) = open_ok();
    let a = d.alloc_dma(100, RW).unwrap();
    let b = d.alloc_dma(DMA_PAGE * 3 + 1, RO).unwrap();
    let c = d.alloc_dma(8, WO).unwrap();
    let n = d.alloc_dma(16, NONE).unwrap();
    {
        let st = k.st.lock().unwrap();
        let flags = |buf: DmaBuf| st.iommu.get(&buf.bus_addr).map(|&(va, len, f)| (va == buf.bus_addr, len, f));
        assert_eq!(flags(a), Some((true, DMA_PAGE as u64, 3)));
        assert_eq!(flags(b), Some((true, 4 * DMA_PAGE as u64, sys::VFIO_DMA_MAP_FLAG_READ)));
        assert_eq!(flags(c), Some((true, DMA_PAGE as u64, sys::VFIO_DMA_MAP_FLAG_WRITE)));
        assert_eq!(flags(n), None, "no access: not in the IOMMU");
    }
    // Fresh buffers are zero; bytes written are read back; buffers do not overlap.
    let mut z = vec![0xffu8; b.len];
    d.read_mem(b.bus_addr, &mut z).unwrap();
    assert!(z.iter().all(|&x| x == 0));
    let pat: Vec<u8> = (0..b.len).map(|i| (i * 7 + 3) as u8).collect();
    d.write_mem(b.bus_addr, &pat).unwrap();
    d.write_mem(a.bus_addr + 99, &[0x5a]).unwrap();
    let mut back = vec![0u8; b.len];
    d.read_mem(b.bus_addr, &mut back).unwrap();
    assert_eq!(back, pat);
    let mut one = [0u8];
    d.read_mem(a.bus_addr + 99, &mut one).unwrap();
    assert_eq!(one, [0x5a]);
    // Past the bytes asked for (though inside the page), or before any buffer: refused.
    for (addr, len) in [(a.bus_addr + 100, 1), (a.bus_addr + 90, 11), (b.bus_addr + b.len as u64 - 1, 2), (1, 1)] {
        assert!(d.write_mem(addr, &vec![0; len]).is_err(), "write {len} at {addr:#x}");
        assert!(d.read_mem(addr, &mut vec![0; len]).is_err(), "read {len} at {addr:#x}");
    }
    let e = d.write_mem(a.bus_addr + 100, &[1]).unwrap_err();
    assert!(matches!(e, DriverError::OutOfBounds { size: 100, .. }), "{e}");
    assert_eq!(d.info().dma_buffers, (4, 0));
}

#[test]
fn access_changes_remap_and_frees_unmap() {
    let (d, k) = open_ok();
    let a = d.alloc_dma(5000, RO).unwrap();
    let flags = |k: &Fake| k.st.lock().unwrap().iommu.get(&a.bus_addr).map(|m| m.2);
    d.set_dma_access(a, RW).unwrap();
    assert_eq!(flags(&k), Some(3));
    d.set_dma_access(a, NONE).unwrap();
    assert_eq!(flags(&k), None);
    d.set_dma_access(a, WO).unwrap();
    assert_eq!(flags(&k), Some(sys::VFIO_DMA_MAP_FLAG_WRITE));
    d.write_mem(a.bus_addr, b"kept").unwrap();
    d.set_dma_access(a, RO).unwrap();
    let mut kept = [0u8; 4];
    d.read_mem(a.bus_addr, &mut kept).unwrap();
    assert_eq!(&kept, b"kept", "a remap keeps the bytes");
    assert!(d.set_dma_access(DmaBuf { bus_addr: a.bus_addr, len: 1 }, RW).is_err(), "wrong length");
    d.free_dma(a).unwrap();
    assert_eq!(flags(&k), None);
    assert!(d.free_dma(a).is_err(), "a second free");
    assert!(d.read_mem(a.bus_addr, &mut kept).is_err(), "a freed buffer");
    // Dropping the device unmaps what is still mapped.
    let b = d.alloc_dma(64, RW).unwrap();
    let c = d.alloc_dma(64, RO).unwrap();
    assert_ne!(b.bus_addr, c.bus_addr);
    let before = k.st.lock().unwrap().unmaps;
    drop(d);
    let st = k.st.lock().unwrap();
    assert!(st.iommu.is_empty());
    assert_eq!(st.unmaps, before + 2);
}

#[test]
fn the_locked_memory_limit_is_named() {
    let (d, _) = open(Machine { memlock: 8 * DMA_PAGE as u64, ..Machine::default() });
    let d = d.unwrap();
    d.alloc_dma(4 * DMA_PAGE, RW).unwrap();
    let e = d.alloc_dma(5 * DMA_PAGE, RW).unwrap_err().to_string();
    assert!(e.contains("ulimit -l") && e.contains("locked-memory limit"), "{e}");
    assert!(d.alloc_dma(0, RW).unwrap_err().to_string().contains("at least one byte"));
    assert_eq!(d.info().dma_buffers.0, 1, "the failed buffer is not kept");
}

#[test]
fn big_buffers_use_hugepages_when_there_are_any() {
    let (d, k) = open_ok();
    let len = DMA_HUGEPAGE + 1;
    let a = d.alloc_dma(len, RW).unwrap();
    let huge = d.info().dma_buffers.1 == 1;
    let mapped = k.st.lock().unwrap().iommu[&a.bus_addr].1 as usize;
    // The machine running the test may have no hugepages reserved: either way the buffer works.
    eprintln!("a {len}-byte buffer on hugepages: {huge}");
    if huge {
        assert_eq!((mapped, a.bus_addr % DMA_HUGEPAGE as u64), (2 * DMA_HUGEPAGE, 0));
    } else {
        assert_eq!(mapped, len.div_ceil(DMA_PAGE) * DMA_PAGE);
    }
    d.write_mem(a.bus_addr + len as u64 - 1, &[9]).unwrap();
    let mut b = [0u8];
    d.read_mem(a.bus_addr + len as u64 - 1, &mut b).unwrap();
    assert_eq!(b, [9]);
}

#[test]
fn msix_vectors_are_bound_as_one_block() {
    let (d, k) = open_ok();
    d.set_irq(2, Some(17)).unwrap();
    d.set_irq(0, Some(19)).unwrap();
    d.set_irq(2, None).unwrap();
    d.set_irq(0, None).unwrap();
    let e = d.set_irq(8, Some(3)).unwrap_err().to_string();
    assert!(e.contains("MSI-X vector 8 does not exist (the device has 8)"), "{e}");
    let irqs = k.st.lock().unwrap().irqs.clone();
    let v = |p: &[(usize, RawFd)]| {
        let mut a = vec![-1; 8];
        for &(i, fd) in p {
            a[i] = fd;
        }
        a
    };
    assert_eq!(irqs, vec![v(&[(2, 17)]), v(&[(0, 19), (2, 17)]), v(&[(0, 19)]), vec![]]);
}

#[test]
fn wait_fd_times_out_in_device_time() {
    let (d, _) = open_ok();
    let ev = crate::EventFd::new().unwrap();
    let t = std::time::Instant::now();
    // 2.5 ms of device cycles at 250 MHz.
    assert!(!d.wait_fd(ev.as_raw_fd(), 625_000).unwrap());
    assert!(t.elapsed() >= std::time::Duration::from_millis(2));
    // SAFETY: writes 8 bytes from a live buffer to the eventfd.
    let one = 1u64.to_ne_bytes();
    assert_eq!(unsafe { libc::write(ev.as_raw_fd(), one.as_ptr().cast(), 8) }, 8);
    assert!(d.wait_fd(ev.as_raw_fd(), 1).unwrap());
}

/// The real kernel on this machine: an address with no device gets the message; a board is
/// opened when `RNIC_VFIO_DEV` names one.
#[test]
fn linux_vfio_opens_a_board_or_names_what_is_missing() {
    let e =
        VfioDevice::open(PciAddr { domain: 0xfffe, bus: 0xff, device: 31, function: 7 }).err().expect("no such device");
    assert!(e.to_string().contains("there is no PCI device fffe:ff:1f.7"), "{e}");
    match std::env::var("RNIC_VFIO_DEV") {
        Ok(s) => {
            let addr: PciAddr = s.parse().unwrap_or_else(|e| panic!("RNIC_VFIO_DEV={s}: {e}"));
            let d = VfioDevice::open(addr).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(d.read_reg(regs::REG_ID).unwrap() >> 32, regs::ID_MAGIC);
            let buf = d.alloc_dma(1 << 16, RW).unwrap();
            d.write_mem(buf.bus_addr, &[1, 2, 3]).unwrap();
            d.free_dma(buf).unwrap();
        }
        Err(_) => eprintln!("skipped the board half: set RNIC_VFIO_DEV=DDDD:BB:DD.F to open a board bound to vfio-pci"),
    }
}

#[test]
fn application_memory_is_mapped_page_by_page_at_bus_addresses_of_its_own() {
    use crate::iova::{APP_IOVA_BASE, APP_IOVA_END};
    let (d, k) = open_ok();
    let mut heap = vec![0u8; 3 * DMA_PAGE + 100];
    let base = heap.as_mut_ptr();
    // Two registrations sharing pages, at offsets inside a page, and one of a single byte.
    // SAFETY: `heap` outlives every mapping (each is unmapped, or the device dropped, before it).
    let (a, b, c) = unsafe {
        (
            d.map_host(base.add(10), 2 * DMA_PAGE, RW).unwrap(),
            d.map_host(base.add(DMA_PAGE + 5), 2 * DMA_PAGE, RO).unwrap(),
            d.map_host(base.add(3 * DMA_PAGE + 99), 1, WO).unwrap(),
        )
    };
    let va = base as u64;
    let page = |x: u64| x & !(DMA_PAGE as u64 - 1);
    {
        let st = k.st.lock().unwrap();
        for (buf, at, len, flags) in [
            (a, va + 10, 2 * DMA_PAGE as u64, 3),
            (b, va + DMA_PAGE as u64 + 5, 2 * DMA_PAGE as u64, sys::VFIO_DMA_MAP_FLAG_READ),
            (c, va + 3 * DMA_PAGE as u64 + 99, 1, sys::VFIO_DMA_MAP_FLAG_WRITE),
        ] {
            assert!((APP_IOVA_BASE..APP_IOVA_END).contains(&buf.bus_addr), "{:#x}", buf.bus_addr);
            assert_eq!(buf.bus_addr % DMA_PAGE as u64, at % DMA_PAGE as u64, "the offset in the page is kept");
            let &(vaddr, span, f) = st.iommu.get(&page(buf.bus_addr)).expect("mapped at its page");
            assert_eq!(vaddr, page(at), "the first page of the memory");
            assert_eq!(span, (at % DMA_PAGE as u64 + len).div_ceil(DMA_PAGE as u64) * DMA_PAGE as u64, "whole pages");
            assert_eq!(f, flags);
        }
        assert_eq!(st.iommu.len(), 3);
    }
    assert!(d.unmap_host(DmaBuf { bus_addr: a.bus_addr, len: 1 }).is_err(), "wrong length");
    assert!(d.unmap_host(DmaBuf { bus_addr: a.bus_addr + 1, len: a.len }).is_err(), "wrong address");
    d.unmap_host(a).unwrap();
    assert!(d.unmap_host(a).is_err(), "a second unmap");
    assert_eq!(k.st.lock().unwrap().iommu.len(), 2);
    // SAFETY: as above.
    let e = unsafe { d.map_host(base, 0, RW) }.unwrap_err();
    assert!(e.to_string().contains("at least one byte"), "{e}");
    // Dropping the device unmaps the rest.
    drop(d);
    assert!(k.st.lock().unwrap().iommu.is_empty());
    // Past the locked-memory limit: the registration fails, names the limit, and gives its bus addresses back.
    let (d, _) = open(Machine { memlock: 2 * DMA_PAGE as u64, ..Machine::default() });
    let d = d.unwrap();
    // SAFETY: as above.
    let e = unsafe { d.map_host(base, 3 * DMA_PAGE, RW) }.unwrap_err();
    assert!(e.to_string().contains("ulimit -l"), "{e}");
    // SAFETY: as above.
    let one = unsafe { d.map_host(base, DMA_PAGE, RW) }.unwrap();
    assert_eq!(page(one.bus_addr), APP_IOVA_BASE, "the failed registration's bus addresses were returned");
    d.unmap_host(one).unwrap();
}
