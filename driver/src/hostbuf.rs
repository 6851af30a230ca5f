//! Memory the application owns and every backend can map for DMA.
//!
//! A [`HostBuf`] is a sealed memfd mapped into this process: zeroed, on
//! 2 MiB hugepages when it is that large and the kernel has them free. A
//! board through VFIO can map any memory, but a device server in another
//! process (vfio-user) can reach only memory shared by a file descriptor,
//! and anonymous memory (the heap) has none. Every `HostBuf` is recorded in
//! a process-wide table so that a backend given a pointer into one finds
//! the file and the offset to share ([`backing`]).

use std::collections::BTreeMap;
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd};
use std::sync::{Arc, Mutex};

use memmap2::{MmapOptions, MmapRaw};

use crate::DriverError;

/// A hugepage.
const HUGEPAGE: usize = 2 << 20;
/// A small page.
const PAGE: usize = 4096;

/// A live `HostBuf` as the table holds it: mapped bytes, its file, its page size.
type Entry = (usize, Arc<File>, usize);

/// Every live `HostBuf`, by start address.
static SHARED: Mutex<BTreeMap<usize, Entry>> = Mutex::new(BTreeMap::new());

/// Application memory that any backend can map for DMA (module doc).
/// Dereferences to its bytes; the NIC may write them while registered, as
/// with any RDMA buffer.
pub struct HostBuf {
    mem: MmapRaw,
    file: Arc<File>,
    len: usize,
    hugepage: bool,
}

impl HostBuf {
    /// `len` zeroed bytes (at least one).
    pub fn new(len: usize) -> Result<HostBuf, DriverError> {
        if len == 0 {
            return Err(DriverError::DmaAlloc { len, reason: "a host buffer needs at least one byte".into() });
        }
        // Hugetlb pages are reserved at mmap: without free ones that fails, and small pages serve.
        let (file, mem, hugepage) = match (len >= HUGEPAGE).then(|| memfd(len, true)).and_then(Result::ok) {
            Some((f, m)) => (f, m, true),
            None => {
                let (f, m) = memfd(len, false).map_err(|e| DriverError::DmaAlloc { len, reason: e.to_string() })?;
                (f, m, false)
            }
        };
        let file = Arc::new(file);
        let page = if hugepage { HUGEPAGE } else { PAGE };
        SHARED.lock().unwrap().insert(mem.as_ptr() as usize, (mem.len(), file.clone(), page));
        Ok(HostBuf { mem, file, len, hugepage })
    }

    /// Bytes asked for.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it is empty (never: a buffer has at least one byte).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether it lies on 2 MiB hugepages.
    pub fn hugepage(&self) -> bool {
        self.hugepage
    }

    /// Address of byte 0.
    pub fn as_ptr(&self) -> *const u8 {
        self.mem.as_ptr()
    }

    /// Address of byte 0, for writing.
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.mem.as_mut_ptr()
    }

    /// The mapping (at least `len` bytes).
    pub(crate) fn raw(&self) -> &MmapRaw {
        &self.mem
    }

    /// The memfd behind it.
    pub(crate) fn file(&self) -> &File {
        &self.file
    }
}

/// A sealed memfd of at least `len` bytes (hugetlb pages if `huge`), mapped.
fn memfd(len: usize, huge: bool) -> std::io::Result<(File, MmapRaw)> {
    let (page, flags) = if huge { (HUGEPAGE, libc::MFD_HUGETLB | libc::MFD_HUGE_2MB) } else { (PAGE, 0) };
    // SAFETY: memfd_create takes a NUL-terminated name; a non-negative result is a new descriptor we own.
    let fd = unsafe { libc::memfd_create(c"rnic-host".as_ptr(), libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING | flags) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just created and is owned by nobody else.
    let file = unsafe { File::from_raw_fd(fd) };
    let size = len.div_ceil(page) * page;
    file.set_len(size as u64)?;
    // A device server refuses memory that could shrink under the NIC's DMA (SIGBUS).
    // SAFETY: F_ADD_SEALS takes an integer argument.
    if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_ADD_SEALS, libc::F_SEAL_SHRINK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let mem = MmapOptions::new().len(size).map_raw(&file)?;
    Ok((file, mem))
}

impl Drop for HostBuf {
    fn drop(&mut self) {
        SHARED.lock().unwrap().remove(&(self.mem.as_ptr() as usize));
    }
}

impl std::ops::Deref for HostBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: the mapping holds at least `len` bytes and lives as long as `self`.
        unsafe { std::slice::from_raw_parts(self.mem.as_ptr(), self.len) }
    }
}

impl std::ops::DerefMut for HostBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`, and `&mut self` makes this the only slice.
        unsafe { std::slice::from_raw_parts_mut(self.mem.as_mut_ptr(), self.len) }
    }
}

impl AsMut<[u8]> for HostBuf {
    fn as_mut(&mut self) -> &mut [u8] {
        self
    }
}

impl AsRef<[u8]> for HostBuf {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl std::fmt::Debug for HostBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostBuf")
            .field("addr", &self.mem.as_ptr())
            .field("len", &self.len)
            .field("hugepage", &self.hugepage)
            .finish()
    }
}

/// The file of the `HostBuf` holding `[va, va + len)`, the file offset of
/// `va` and the file's page size (a mapping of it must start and end on
/// one), if a live `HostBuf` holds all of it.
pub(crate) fn backing(va: u64, len: usize) -> Option<(Arc<File>, u64, u64)> {
    let shared = SHARED.lock().unwrap();
    let (&start, (size, file, page)) = shared.range(..=va as usize).next_back()?;
    let off = va - start as u64;
    (off.checked_add(len as u64)? <= *size as u64).then(|| (file.clone(), off, *page as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_zeroed_writable_and_found_by_their_addresses() {
        let mut b = HostBuf::new(10_000).unwrap();
        assert_eq!(b.len(), 10_000);
        assert!(b.iter().all(|&x| x == 0));
        b[9_999] = 7;
        let va = b.as_ptr() as u64;
        let (_, off, page) = backing(va + 100, 9_900).expect("inside");
        assert_eq!((off, page), (100, 4096));
        assert!(backing(va + 100, 20_000).is_none(), "past the mapping");
        let heap = [0u8; 64];
        assert!(backing(heap.as_ptr() as u64, 64).is_none(), "not a HostBuf");
        drop(b);
        assert!(backing(va, 1).is_none(), "forgotten when dropped");
        assert!(HostBuf::new(0).is_err());
        // Large buffers take hugepages when there are some (one test: the table is process-wide).
        let b = HostBuf::new(3 << 20).unwrap();
        let free: u64 = std::fs::read_to_string("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0);
        if free == 0 {
            assert!(!b.hugepage(), "no free hugepages, yet on hugepages");
        }
        let page = backing(b.as_ptr() as u64, 1).unwrap().2;
        assert_eq!(page, if b.hugepage() { HUGEPAGE as u64 } else { 4096 }, "the page size a mapping must keep to");
        assert_eq!(b.len(), 3 << 20);
        assert!(b.iter().all(|&x| x == 0));
    }
}
