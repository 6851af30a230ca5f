//! Host memory of one simulated server and its IOMMU shadow.
//!
//! Memory is one flat zeroed region (reserved lazily by the OS) at bus
//! addresses `[HOST_MEM_BASE, HOST_MEM_BASE + size)`. Buffers are allocated
//! first-fit, 4 KiB aligned. Each buffer carries the device's access rights
//! ([`DmaAccess`]); [`HostMem::dma_allowed`] is the shadow check every DMA
//! of the core goes through.
//!
//! Memory another process shares with the device (a vfio-user client's
//! `DMA_MAP` with a file descriptor) is a *window*: a mapping of that
//! process's file at the bus addresses it chose, outside host memory. The
//! device reaches it like a buffer, through the same shadow check, and the
//! bytes land in the other process's memory. Memory the application of
//! this process registers (`Device::map_host`) is a window too, over its
//! own bytes, at bus addresses from `rnic_driver::iova`'s range.

use std::collections::BTreeMap;

use memmap2::MmapRaw;
use rnic_driver::iova::{APP_IOVA_BASE, APP_IOVA_END};
use rnic_driver::{DmaAccess, DmaBuf, DriverError};

/// Bus address of the first byte of host memory.
pub const HOST_MEM_BASE: u64 = 0x1000_0000;
/// Allocation granularity and alignment (a page).
pub const PAGE: u64 = 4096;

/// Direction of a DMA as the device sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DmaDir {
    /// Device reads host memory.
    Read,
    /// Device writes host memory.
    Write,
}

/// A DMA the shadow refused: outside every buffer, or without the right.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Bus address of the access.
    pub addr: u64,
    /// Length in bytes.
    pub len: u32,
    /// Read or write.
    pub dir: DmaDir,
    /// Cycle at which the core issued it.
    pub cycle: u64,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DMA {:?} of {} bytes at {:#x} (cycle {}) outside any buffer mapped for it",
            self.dir, self.len, self.addr, self.cycle
        )
    }
}

/// The memory behind a window.
enum Window {
    /// Another process's file, mapped here.
    Shared(MmapRaw),
    /// Bytes of this process's application (`map_host`): their address and length.
    Local { ptr: usize, len: usize },
}

impl Window {
    fn ptr(&self) -> *mut u8 {
        match self {
            Window::Shared(m) => m.as_mut_ptr(),
            Window::Local { ptr, .. } => *ptr as *mut u8,
        }
    }

    fn len(&self) -> usize {
        match self {
            Window::Shared(m) => m.len(),
            Window::Local { len, .. } => *len,
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Mapping {
    len: u64,
    access: DmaAccess,
}

/// Host memory with an allocator and the DMA permission shadow.
pub struct HostMem {
    data: Vec<u8>,
    /// Free ranges: offset -> length (page multiples, coalesced).
    free: BTreeMap<u64, u64>,
    /// Live buffers: bus address -> mapping (exact requested length).
    bufs: BTreeMap<u64, Mapping>,
    /// Last buffer a DMA hit (most DMAs stream through one buffer).
    last_hit: Option<(u64, Mapping)>,
    /// Windows: bus address -> the memory behind it (also in `bufs`).
    windows: BTreeMap<u64, Window>,
}

impl HostMem {
    /// Host memory of `size` bytes (rounded down to pages), all free and zero.
    pub fn new(size: u64) -> HostMem {
        let size = size / PAGE * PAGE;
        let mut free = BTreeMap::new();
        if size > 0 {
            free.insert(0, size);
        }
        HostMem { data: vec![0; size as usize], free, bufs: BTreeMap::new(), last_hit: None, windows: BTreeMap::new() }
    }

    /// Total bytes of host memory.
    pub fn size(&self) -> u64 {
        self.data.len() as u64
    }

    /// Allocates `len` zeroed bytes, 4 KiB aligned, mapped for the device with `access`.
    pub fn alloc(&mut self, len: usize, access: DmaAccess) -> Result<DmaBuf, DriverError> {
        if len == 0 {
            return Err(DriverError::DmaAlloc { len, reason: "zero length".into() });
        }
        let need = (len as u64).div_ceil(PAGE) * PAGE;
        let (&off, &flen) = self.free.iter().find(|(_, &l)| l >= need).ok_or_else(|| DriverError::DmaAlloc {
            len,
            reason: format!("simulated host memory of {} bytes exhausted (SimConfig::host_mem_bytes)", self.size()),
        })?;
        self.free.remove(&off);
        if flen > need {
            self.free.insert(off + need, flen - need);
        }
        self.data[off as usize..(off + need) as usize].fill(0);
        let bus_addr = HOST_MEM_BASE + off;
        self.bufs.insert(bus_addr, Mapping { len: len as u64, access });
        self.last_hit = None;
        Ok(DmaBuf { bus_addr, len })
    }

    fn mapping(&self, buf: DmaBuf) -> Result<Mapping, DriverError> {
        match self.bufs.get(&buf.bus_addr) {
            Some(m) if m.len == buf.len as u64 && !self.windows.contains_key(&buf.bus_addr) => Ok(*m),
            _ => Err(DriverError::Device(format!("no DMA buffer of {} bytes at {:#x}", buf.len, buf.bus_addr))),
        }
    }

    /// Frees a buffer; the device loses access at once.
    pub fn free(&mut self, buf: DmaBuf) -> Result<(), DriverError> {
        self.mapping(buf)?;
        self.bufs.remove(&buf.bus_addr);
        self.last_hit = None;
        let mut off = buf.bus_addr - HOST_MEM_BASE;
        let mut len = (buf.len as u64).div_ceil(PAGE) * PAGE;
        // Coalesce with the free neighbours.
        if let Some((&poff, &plen)) = self.free.range(..off).next_back() {
            if poff + plen == off {
                self.free.remove(&poff);
                off = poff;
                len += plen;
            }
        }
        if let Some(&nlen) = self.free.get(&(off + len)) {
            self.free.remove(&(off + len));
            len += nlen;
        }
        self.free.insert(off, len);
        Ok(())
    }

    /// Changes the device's access to a buffer.
    pub fn set_access(&mut self, buf: DmaBuf, access: DmaAccess) -> Result<(), DriverError> {
        self.mapping(buf)?;
        self.bufs.insert(buf.bus_addr, Mapping { len: buf.len as u64, access });
        self.last_hit = None;
        Ok(())
    }

    /// Buffers currently allocated (windows included).
    pub fn buffers(&self) -> usize {
        self.bufs.len()
    }

    /// Maps `mem` (another process's memory) for the device at bus addresses
    /// `[iova, iova + mem.len())` with `access`. Refused when the range is
    /// empty, wraps, or overlaps host memory or another window.
    pub fn map_window(&mut self, iova: u64, mem: MmapRaw, access: DmaAccess) -> Result<(), DriverError> {
        let len = mem.len() as u64;
        let bad = |why: &str| Err(DriverError::Device(format!("DMA map of {len} bytes at {iova:#x}: {why}")));
        let Some(end) = iova.checked_add(len).filter(|_| len > 0) else {
            return bad("empty or past the end of the bus address space");
        };
        if iova < HOST_MEM_BASE + self.size() && HOST_MEM_BASE < end {
            return bad("overlaps the simulated host's own memory");
        }
        if self.windows.range(..end).next_back().is_some_and(|(&b, m)| b + m.len() as u64 > iova) {
            return bad("overlaps a range already mapped");
        }
        self.bufs.insert(iova, Mapping { len, access });
        self.windows.insert(iova, Window::Shared(mem));
        self.last_hit = None;
        Ok(())
    }

    /// Maps `len` bytes of this process's memory at `ptr` for the device
    /// with `access`, at free bus addresses of the application range that
    /// keep `ptr`'s offset in its page, and returns them.
    ///
    /// # Safety
    /// The memory must stay allocated until the window is unmapped.
    pub unsafe fn map_local(&mut self, ptr: *mut u8, len: usize, access: DmaAccess) -> Result<DmaBuf, DriverError> {
        if len == 0 {
            return Err(DriverError::DmaAlloc {
                len,
                reason: "application memory to map needs at least one byte".into(),
            });
        }
        let in_page = ptr as u64 % PAGE;
        let need = (in_page + len as u64).div_ceil(PAGE) * PAGE;
        // First fit among the windows in the range (page-aligned starts).
        let mut at = APP_IOVA_BASE;
        for (&b, m) in self.windows.range(APP_IOVA_BASE..APP_IOVA_END) {
            if b >= at + need {
                break;
            }
            at = at.max((b + m.len() as u64).div_ceil(PAGE) * PAGE);
        }
        if at + need > APP_IOVA_END {
            return Err(DriverError::DmaAlloc { len, reason: "no bus addresses left for application memory".into() });
        }
        let bus_addr = at + in_page;
        self.bufs.insert(bus_addr, Mapping { len: len as u64, access });
        self.windows.insert(bus_addr, Window::Local { ptr: ptr as usize, len });
        self.last_hit = None;
        Ok(DmaBuf { bus_addr, len })
    }

    /// Unmaps the window mapped at exactly `[iova, iova + len)`.
    pub fn unmap_window(&mut self, iova: u64, len: u64) -> Result<(), DriverError> {
        match self.windows.get(&iova) {
            Some(m) if m.len() as u64 == len => {
                self.windows.remove(&iova);
                self.bufs.remove(&iova);
                self.last_hit = None;
                Ok(())
            }
            _ => Err(DriverError::Device(format!("DMA unmap of {len} bytes at {iova:#x}: no such mapping"))),
        }
    }

    /// Unmaps every window (the process that shared them is gone); returns how many there were.
    pub fn unmap_windows(&mut self) -> usize {
        let n = self.windows.len();
        for iova in std::mem::take(&mut self.windows).into_keys() {
            self.bufs.remove(&iova);
        }
        self.last_hit = None;
        n
    }

    /// The window bytes `[addr, addr + len)` lie in, as a pointer to them.
    fn window_ptr(&self, addr: u64, len: usize) -> Option<*mut u8> {
        let (&base, m) = self.windows.range(..=addr).next_back()?;
        let off = addr - base;
        // SAFETY: off + len is inside the window's live memory (checked first).
        (off.checked_add(len as u64)? <= m.len() as u64).then(|| unsafe { m.ptr().add(off as usize) })
    }

    /// The buffer holding `[addr, addr+len)`, if one does.
    fn find(&self, addr: u64, len: u64) -> Option<(u64, Mapping)> {
        let end = addr.checked_add(len)?;
        let (&base, &m) = self.bufs.range(..=addr).next_back()?;
        (end <= base + m.len).then_some((base, m))
    }

    /// Shadow check: may the device access `[addr, addr+len)` in direction `dir`?
    #[inline]
    pub fn dma_allowed(&mut self, addr: u64, len: u64, dir: DmaDir) -> bool {
        let hit = match self.last_hit {
            Some((base, m)) if addr >= base && addr.saturating_add(len) <= base + m.len => Some((base, m)),
            _ => self.find(addr, len),
        };
        let Some((base, m)) = hit else { return false };
        self.last_hit = Some((base, m));
        match dir {
            DmaDir::Read => m.access.device_read,
            DmaDir::Write => m.access.device_write,
        }
    }

    /// Offset into `data` of `[addr, addr+len)` if it lies in host memory.
    #[inline]
    fn offset(&self, addr: u64, len: usize) -> Option<usize> {
        let off = addr.checked_sub(HOST_MEM_BASE)?;
        (off.checked_add(len as u64)? <= self.data.len() as u64).then_some(off as usize)
    }

    fn cpu_check(&self, addr: u64, len: usize) -> Result<usize, DriverError> {
        match self.find(addr, len as u64) {
            Some((base, _)) if self.windows.contains_key(&base) => Err(DriverError::Device(format!(
                "{addr:#x} is in memory the device reaches through a window (another process's DMA_MAP, or map_host); its owner reads and writes it"
            ))),
            Some(_) => Ok(self.offset(addr, len).expect("buffers lie in host memory")),
            None => {
                let (base, size) = self
                    .bufs
                    .range(..=addr)
                    .next_back()
                    .map(|(&b, m)| (b, m.len as usize))
                    .unwrap_or((HOST_MEM_BASE, 0));
                Err(DriverError::OutOfBounds { addr, len, base, size })
            }
        }
    }

    /// CPU write into an allocated buffer.
    pub fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), DriverError> {
        let off = self.cpu_check(addr, data.len())?;
        self.data[off..off + data.len()].copy_from_slice(data);
        Ok(())
    }

    /// CPU read from an allocated buffer.
    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), DriverError> {
        let off = self.cpu_check(addr, out.len())?;
        out.copy_from_slice(&self.data[off..off + out.len()]);
        Ok(())
    }

    /// Device-side read (after the shadow check): bytes outside host memory and windows read as zero.
    #[inline]
    pub fn dev_read(&self, addr: u64, out: &mut [u8]) {
        match self.offset(addr, out.len()) {
            Some(off) => out.copy_from_slice(&self.data[off..off + out.len()]),
            None => match self.window_ptr(addr, out.len()) {
                // SAFETY: window_ptr checked that out.len() bytes are inside the mapping.
                Some(p) => unsafe { std::ptr::copy_nonoverlapping(p, out.as_mut_ptr(), out.len()) },
                None => out.fill(0),
            },
        }
    }

    /// Device-side write (after the shadow check): ignored outside host memory and windows.
    #[inline]
    pub fn dev_write(&mut self, addr: u64, data: &[u8]) {
        if let Some(off) = self.offset(addr, data.len()) {
            self.data[off..off + data.len()].copy_from_slice(data);
        } else if let Some(p) = self.window_ptr(addr, data.len()) {
            // SAFETY: window_ptr checked that data.len() bytes are inside the mapping.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p, data.len()) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RW: DmaAccess = DmaAccess { device_read: true, device_write: true };
    const RO: DmaAccess = DmaAccess { device_read: true, device_write: false };

    #[test]
    fn alloc_is_page_aligned_zeroed_and_reused() {
        let mut m = HostMem::new(1 << 20);
        let a = m.alloc(100, RW).unwrap();
        let b = m.alloc(5000, RW).unwrap();
        assert_eq!(a.bus_addr, HOST_MEM_BASE);
        assert_eq!(b.bus_addr, HOST_MEM_BASE + PAGE);
        m.write(a.bus_addr, &[7; 100]).unwrap();
        m.free(a).unwrap();
        let c = m.alloc(10, RW).unwrap();
        assert_eq!(c.bus_addr, a.bus_addr, "first fit reuses the freed page");
        let mut out = [1u8; 10];
        m.read(c.bus_addr, &mut out).unwrap();
        assert_eq!(out, [0; 10], "allocations are zeroed");
        m.free(b).unwrap();
        m.free(c).unwrap();
        assert_eq!(m.free.len(), 1, "free ranges coalesce");
        assert!(m.alloc(2 << 20, RW).is_err());
    }

    #[test]
    fn shadow_checks_bounds_and_rights() {
        let mut m = HostMem::new(1 << 20);
        let a = m.alloc(100, RO).unwrap();
        assert!(m.dma_allowed(a.bus_addr, 100, DmaDir::Read));
        assert!(!m.dma_allowed(a.bus_addr, 101, DmaDir::Read), "past the exact length");
        assert!(!m.dma_allowed(a.bus_addr + 50, 64, DmaDir::Read));
        assert!(!m.dma_allowed(a.bus_addr, 8, DmaDir::Write), "read-only buffer");
        assert!(!m.dma_allowed(a.bus_addr - 8, 8, DmaDir::Read));
        m.set_access(a, RW).unwrap();
        assert!(m.dma_allowed(a.bus_addr, 8, DmaDir::Write));
        m.free(a).unwrap();
        assert!(!m.dma_allowed(a.bus_addr, 8, DmaDir::Read), "freed buffers lose access");
    }

    #[test]
    fn windows_are_reached_by_the_device_only_through_the_shadow() {
        let mut m = HostMem::new(1 << 20);
        let win = 0x7f00_0000_0000u64;
        let alias = memmap2::MmapOptions::new().len(8192).map_anon().unwrap();
        let alias_ptr = alias.as_ptr() as u64;
        m.map_window(win, alias.into(), RO).unwrap();
        assert!(m.dma_allowed(win, 8192, DmaDir::Read));
        assert!(!m.dma_allowed(win, 8193, DmaDir::Read), "past the window");
        assert!(!m.dma_allowed(win + 8, 8, DmaDir::Write), "read-only window");
        m.dev_write(win + 100, &[1, 2, 3]);
        let mut out = [0u8; 4];
        m.dev_read(win + 99, &mut out);
        assert_eq!(out, [0, 1, 2, 3]);
        // SAFETY: the window's mapping is alive until unmap_window below.
        assert_eq!(unsafe { *((alias_ptr + 101) as *const u8) }, 2, "the bytes are in the shared memory");
        // Overlaps and the simulated host's own range are refused; so is the host's CPU path.
        let other = || -> MmapRaw { memmap2::MmapOptions::new().len(4096).map_anon().unwrap().into() };
        assert!(m.map_window(win + 4096, other(), RW).is_err());
        assert!(m.map_window(win - 4095, other(), RW).is_err());
        assert!(m.map_window(HOST_MEM_BASE + 4096, other(), RW).is_err());
        m.map_window(win + 8192, other(), RW).unwrap();
        assert!(m.write(win, &[0]).is_err(), "the other process writes its own memory");
        assert!(m.free(DmaBuf { bus_addr: win, len: 8192 }).is_err(), "a window is not a buffer");
        assert!(m.unmap_window(win, 4096).is_err(), "only whole windows are unmapped");
        m.unmap_window(win, 8192).unwrap();
        assert!(!m.dma_allowed(win, 8, DmaDir::Read));
        let mut z = [7u8; 2];
        m.dev_read(win, &mut z);
        assert_eq!(z, [0, 0], "an unmapped window reads as nothing");
        assert_eq!(m.unmap_windows(), 1);
        assert_eq!(m.buffers(), 0);
    }

    #[test]
    fn cpu_access_outside_buffers_fails() {
        let mut m = HostMem::new(1 << 20);
        let a = m.alloc(16, RW).unwrap();
        assert!(m.write(a.bus_addr + 8, &[0; 16]).is_err());
        assert!(m.read(0, &mut [0; 4]).is_err());
        m.write(a.bus_addr + 8, &[3; 8]).unwrap();
        let mut out = [0; 4];
        m.dev_read(a.bus_addr + 12, &mut out);
        assert_eq!(out, [3; 4]);
    }
}
