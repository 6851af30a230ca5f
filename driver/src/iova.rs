//! Bus addresses for application memory.
//!
//! DMA buffers the driver allocates are mapped at IOVA = their virtual
//! address. Memory the application registers ([`crate::Device::map_host`])
//! may not be: two registrations may share a page, and the IOMMU cannot map
//! one IOVA twice. Each registration therefore gets its own page-aligned
//! range of bus addresses from [`APP_IOVA_BASE`, `APP_IOVA_END`), above
//! every user-space virtual address of a 4-level page table (so never
//! under an IOVA = VA buffer) and inside a 48-bit IOMMU's reach.

use std::collections::BTreeMap;

/// First bus address handed to application memory.
pub const APP_IOVA_BASE: u64 = 1 << 47;
/// End (exclusive) of the bus addresses handed to application memory.
pub const APP_IOVA_END: u64 = 1 << 48;
/// Mapping granularity of the IOMMU (a 4 KiB page).
pub const IOVA_PAGE: u64 = 4096;

/// The pages covering `len` bytes at virtual address `va`: (first page's
/// address, offset of `va` in it, bytes of whole pages).
pub(crate) fn page_span(va: u64, len: usize) -> (u64, u64, u64) {
    let start = va & !(IOVA_PAGE - 1);
    let off = va - start;
    (start, off, (off + len as u64).div_ceil(IOVA_PAGE) * IOVA_PAGE)
}

/// Application memory mapped for the device (`map_host`): the bus range of its pages.
#[derive(Debug)]
pub(crate) struct HostMap {
    /// Bus address of the first page.
    pub(crate) iova: u64,
    /// Bytes of whole pages mapped.
    pub(crate) span: u64,
    /// Bytes registered.
    pub(crate) len: usize,
    /// What the device may do.
    pub(crate) access: crate::DmaAccess,
}

/// A first-fit allocator of page-aligned bus address ranges.
#[derive(Debug)]
pub(crate) struct IovaSpace {
    /// Free ranges: start -> length (page multiples, coalesced).
    free: BTreeMap<u64, u64>,
}

impl IovaSpace {
    /// All of `[APP_IOVA_BASE, APP_IOVA_END)` free.
    pub(crate) fn new() -> IovaSpace {
        IovaSpace { free: BTreeMap::from([(APP_IOVA_BASE, APP_IOVA_END - APP_IOVA_BASE)]) }
    }

    /// A free range of `len` bytes (a page multiple, not zero), or `None` when none is left.
    pub(crate) fn alloc(&mut self, len: u64) -> Option<u64> {
        debug_assert!(len > 0 && len.is_multiple_of(IOVA_PAGE));
        let (&start, &flen) = self.free.iter().find(|(_, &l)| l >= len)?;
        self.free.remove(&start);
        if flen > len {
            self.free.insert(start + len, flen - len);
        }
        Some(start)
    }

    /// Returns `[start, start + len)`, which [`IovaSpace::alloc`] gave out.
    pub(crate) fn free(&mut self, mut start: u64, mut len: u64) {
        if let Some((&p, &plen)) = self.free.range(..start).next_back() {
            debug_assert!(p + plen <= start, "double free of bus addresses {start:#x}");
            if p + plen == start {
                self.free.remove(&p);
                start = p;
                len += plen;
            }
        }
        if let Some(nlen) = self.free.remove(&(start + len)) {
            len += nlen;
        }
        self.free.insert(start, len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_spans_cover_every_byte() {
        assert_eq!(page_span(0x1000, 1), (0x1000, 0, 0x1000));
        assert_eq!(page_span(0x1fff, 1), (0x1000, 0xfff, 0x1000));
        assert_eq!(page_span(0x1fff, 2), (0x1000, 0xfff, 0x2000));
        assert_eq!(page_span(0x1234, 0x3000), (0x1000, 0x234, 0x4000));
    }

    #[test]
    fn ranges_are_disjoint_and_come_back_whole() {
        let mut s = IovaSpace::new();
        let a = s.alloc(IOVA_PAGE).unwrap();
        let b = s.alloc(3 * IOVA_PAGE).unwrap();
        let c = s.alloc(IOVA_PAGE).unwrap();
        assert_eq!((a, b, c), (APP_IOVA_BASE, APP_IOVA_BASE + IOVA_PAGE, APP_IOVA_BASE + 4 * IOVA_PAGE));
        s.free(b, 3 * IOVA_PAGE);
        assert_eq!(s.alloc(2 * IOVA_PAGE), Some(b), "first fit reuses the hole");
        s.free(b, 2 * IOVA_PAGE);
        s.free(a, IOVA_PAGE);
        s.free(c, IOVA_PAGE);
        assert_eq!(s.free.len(), 1, "neighbours coalesce: {:?}", s.free);
        assert_eq!(s.alloc(APP_IOVA_END - APP_IOVA_BASE), Some(APP_IOVA_BASE));
        assert_eq!(s.alloc(IOVA_PAGE), None, "exhausted");
    }
}
