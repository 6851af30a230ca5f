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

use crate::{DmaAccess, DmaBuf, DriverError};

/// First bus address handed to application memory.
pub const APP_IOVA_BASE: u64 = 1 << 47;
/// End (exclusive) of the bus addresses handed to application memory.
pub const APP_IOVA_END: u64 = 1 << 48;
/// Mapping granularity of the IOMMU (a 4 KiB page).
pub const IOVA_PAGE: u64 = 4096;

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
    pub(crate) access: DmaAccess,
}

/// A backend's application-memory mappings and the bus addresses they hold.
#[derive(Debug)]
pub(crate) struct HostMaps {
    space: IovaSpace,
    /// By the bus address of the first byte registered.
    maps: BTreeMap<u64, HostMap>,
}

impl HostMaps {
    pub(crate) fn new() -> HostMaps {
        HostMaps { space: IovaSpace::new(), maps: BTreeMap::new() }
    }

    /// Maps `len` bytes that start `in_page` bytes into a page of `page`
    /// bytes: takes bus addresses for the whole pages, calls `map(iova,
    /// span)` to map them (they are given back if it fails) and records the
    /// mapping. Returns the bus addresses of the bytes.
    pub(crate) fn map(
        &mut self,
        in_page: u64,
        len: usize,
        page: u64,
        access: DmaAccess,
        map: impl FnOnce(u64, u64) -> Result<(), DriverError>,
    ) -> Result<DmaBuf, DriverError> {
        if len == 0 {
            return Err(DriverError::DmaAlloc {
                len,
                reason: "application memory to map needs at least one byte".into(),
            });
        }
        let span = (in_page + len as u64).div_ceil(page) * page;
        let iova = self.space.alloc(span).ok_or_else(|| DriverError::DmaAlloc {
            len,
            reason: "no bus addresses left for application memory".into(),
        })?;
        if let Err(e) = map(iova, span) {
            self.space.free(iova, span);
            return Err(e);
        }
        let bus_addr = iova + in_page;
        self.maps.insert(bus_addr, HostMap { iova, span, len, access });
        Ok(DmaBuf { bus_addr, len })
    }

    /// Undoes [`HostMaps::map`] of `buf` with `unmap`; `None` if `buf` is not
    /// a mapping (then nothing is done).
    pub(crate) fn unmap(
        &mut self,
        buf: DmaBuf,
        unmap: impl FnOnce(&HostMap) -> Result<(), DriverError>,
    ) -> Option<Result<(), DriverError>> {
        let m = self.maps.get(&buf.bus_addr).filter(|m| m.len == buf.len)?;
        if let Err(e) = unmap(m) {
            return Some(Err(e));
        }
        let m = self.maps.remove(&buf.bus_addr).expect("looked up above");
        self.space.free(m.iova, m.span);
        Some(Ok(()))
    }

    /// Every mapping, forgotten here (the backend is going away).
    pub(crate) fn take_all(&mut self) -> Vec<HostMap> {
        std::mem::take(&mut self.maps).into_values().collect()
    }
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

    const RW: DmaAccess = DmaAccess { device_read: true, device_write: true };

    #[test]
    fn mappings_cover_whole_pages_and_give_their_addresses_back() {
        let mut h = HostMaps::new();
        let mut seen = Vec::new();
        let a = h
            .map(0xfff, 2, IOVA_PAGE, RW, |iova, span| {
                seen.push((iova, span));
                Ok(())
            })
            .unwrap();
        assert_eq!((a.bus_addr, seen[0]), (APP_IOVA_BASE + 0xfff, (APP_IOVA_BASE, 2 * IOVA_PAGE)));
        let b = h
            .map(0x234, 0x3000, IOVA_PAGE, RW, |iova, span| {
                seen.push((iova, span));
                Ok(())
            })
            .unwrap();
        assert_eq!(seen[1], (APP_IOVA_BASE + 2 * IOVA_PAGE, 4 * IOVA_PAGE), "whole pages, after the first");
        assert_eq!(b.bus_addr, APP_IOVA_BASE + 2 * IOVA_PAGE + 0x234);
        // A failed map gives its addresses back; a refused unmap keeps the mapping.
        let fail = || Err(DriverError::Device("no".into()));
        assert!(h.map(0, 1, 1 << 21, RW, |_, _| fail()).is_err());
        assert!(matches!(h.unmap(a, |_| fail()), Some(Err(_))));
        assert!(h.unmap(DmaBuf { bus_addr: a.bus_addr, len: 1 }, |_| Ok(())).is_none(), "wrong length");
        assert!(matches!(h.unmap(a, |_| Ok(())), Some(Ok(()))));
        assert!(h.unmap(a, |_| Ok(())).is_none(), "a second unmap");
        assert!(h.map(0, 0, IOVA_PAGE, RW, |_, _| Ok(())).is_err(), "empty");
        let c = h.map(0, IOVA_PAGE as usize, IOVA_PAGE, RW, |_, _| Ok(())).unwrap();
        assert_eq!(c.bus_addr, APP_IOVA_BASE, "a's pages came back and are reused");
        assert_eq!(h.take_all().len(), 2);
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
