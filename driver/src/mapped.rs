//! The CPU's side of DMA buffers that this process maps (the VFIO and
//! vfio-user backends): `write_mem` and `read_mem` as copies into the one
//! buffer that holds the whole range.

use std::collections::BTreeMap;

use memmap2::MmapRaw;

use crate::DriverError;

/// A DMA buffer mapped in this process, keyed by its bus address.
pub(crate) trait Mapped {
    /// This process's mapping (at least `len()` bytes).
    fn mem(&self) -> &MmapRaw;
    /// Bytes the caller asked for: accesses past them are refused.
    fn len(&self) -> usize;
}

/// The bytes `[addr, addr + n)` of the buffer holding them, as a pointer.
fn locate<T: Mapped>(bufs: &BTreeMap<u64, T>, device: &str, addr: u64, n: usize) -> Result<*mut u8, DriverError> {
    let Some((&base, m)) = bufs.range(..=addr).next_back() else {
        return Err(DriverError::Device(format!("{device}: no DMA buffer holds address {addr:#x}")));
    };
    let off = addr - base;
    if off.checked_add(n as u64).is_none_or(|end| end > m.len() as u64) {
        return Err(DriverError::OutOfBounds { addr, len: n, base, size: m.len() });
    }
    // SAFETY: [off, off + n) lies inside the mapping, which `bufs` keeps alive.
    Ok(unsafe { m.mem().as_mut_ptr().add(off as usize) })
}

/// Copies `data` into the buffer at bus address `addr`.
pub(crate) fn write<T: Mapped>(
    bufs: &BTreeMap<u64, T>,
    device: &str,
    addr: u64,
    data: &[u8],
) -> Result<(), DriverError> {
    let p = locate(bufs, device, addr, data.len())?;
    // SAFETY: locate checked that data.len() bytes at `p` are inside a live mapping.
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p, data.len()) };
    Ok(())
}

/// Copies from the buffer at bus address `addr` into `out`.
pub(crate) fn read<T: Mapped>(
    bufs: &BTreeMap<u64, T>,
    device: &str,
    addr: u64,
    out: &mut [u8],
) -> Result<(), DriverError> {
    let p = locate(bufs, device, addr, out.len())?;
    // SAFETY: locate checked that out.len() bytes at `p` are inside a live mapping.
    unsafe { std::ptr::copy_nonoverlapping(p, out.as_mut_ptr(), out.len()) };
    Ok(())
}
