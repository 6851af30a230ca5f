//! Memory regions.

use crate::ctx::{Context, MrSlot, Pd};
use crate::{DestroyError, Error, Result, VA_OFFSET};
use rnic_driver::{DmaAccess, DmaBuf};
use rnic_spec::regs::{self, mr, NUM_STAGE};

/// MR access flags: the contract's [`regs::Access`] (values of `ibv_access_flags`).
pub use rnic_spec::regs::Access as AccessFlags;

/// Largest MR the library registers (the bus model and the hosts we target
/// hand out contiguous IOVA ranges well below this).
const MAX_MR_LEN: u64 = 1 << 40;

/// Device cycles `dereg_mr` waits for the NIC's MR fence (4 ms at 250 MHz;
/// a fence waits for at most one packet and the reads in flight).
const MR_FENCE_TIMEOUT_CYCLES: u64 = 1_000_000;

/// A registered memory region (`ibv_mr`). The memory is either DMA memory
/// the library allocated through the device ([`Pd::reg_mr`]) or the
/// application's own ([`Pd::reg_mr_on`], [`Pd::reg_mr_raw`]); the
/// application reaches it with [`Mr::write`] / [`Mr::read`] (on its own
/// memory, also directly), the NIC by virtual address [`Mr::addr`] and key.
/// The MR holds its PD. Dropping an `Mr` deregisters it (errors ignored);
/// [`Mr::dereg_mr`] reports them.
pub struct Mr {
    pd: Pd,
    index: u32,
    key: u32,
    buf: DmaBuf,
    access: AccessFlags,
    live: bool,
    app: Option<Box<AppMem>>,
}

/// The application's memory under an MR.
struct AppMem {
    /// Address of byte 0 (the MR's virtual address).
    ptr: usize,
    /// What owns the memory, kept while the MR lives ([`Pd::reg_mr_on`]).
    owner: Option<Box<dyn Send + Sync>>,
}

/// One scatter/gather entry: `len` bytes at `offset` inside `mr`.
#[derive(Clone, Copy)]
pub struct Sge<'a> {
    /// The region.
    pub mr: &'a Mr,
    /// Byte offset inside the region.
    pub offset: u64,
    /// Length in bytes.
    pub len: u32,
}

impl<'a> Sge<'a> {
    /// `len` bytes at `offset` of `mr`.
    pub fn new(mr: &'a Mr, offset: u64, len: u32) -> Self {
        Sge { mr, offset, len }
    }
}

impl Pd {
    /// Registers `len` bytes of fresh, zeroed DMA memory (`ibv_reg_mr`).
    /// The device may read it always (a SEND's or WRITE's source, a READ's
    /// source with `REMOTE_READ`), and write it only with `LOCAL_WRITE`
    /// (receive buffers, the destination of the region's own RDMA READs)
    /// or `REMOTE_WRITE`.
    pub fn reg_mr(&self, len: usize, access: AccessFlags) -> Result<Mr> {
        self.register(len, access, |dev, dma| dev.alloc_dma(len, dma), None)
    }

    /// Registers memory the application owns (`ibv_reg_mr` on its own
    /// buffer): a `Vec<u8>`, a boxed array, a [`HostBuf`](rnic_driver::HostBuf)
    /// (which every device can map, a device server in another process
    /// included), anything that is bytes and stays where it is. The MR takes
    /// `mem` for its life and drops it after deregistering; its
    /// [`Mr::addr`] is the memory's own address, and the NIC's DMA reads and
    /// writes the bytes in place. Access as for [`Pd::reg_mr`].
    pub fn reg_mr_on<M: AsMut<[u8]> + Send + Sync + 'static>(&self, mem: M, access: AccessFlags) -> Result<Mr> {
        let mut owner = Box::new(mem);
        let bytes = (*owner).as_mut();
        let (ptr, len) = (bytes.as_mut_ptr(), bytes.len());
        // SAFETY: the boxed owner keeps the bytes where they are until the MR is gone.
        unsafe { self.reg_mr_at(ptr, len, access, Some(owner)) }
    }

    /// Registers `len` bytes of the application's memory at `addr`, as
    /// `ibv_reg_mr` does; [`Pd::reg_mr_on`] is the safe form.
    ///
    /// # Safety
    /// The memory must stay allocated until the MR is deregistered or
    /// dropped (and for good if deregistration fails with
    /// [`Error::FenceTimeout`]: the NIC may still reach it).
    pub unsafe fn reg_mr_raw(&self, addr: *mut u8, len: usize, access: AccessFlags) -> Result<Mr> {
        // SAFETY: the caller's promise.
        unsafe { self.reg_mr_at(addr, len, access, None) }
    }

    /// # Safety
    /// As [`Pd::reg_mr_raw`], with `owner` (if any) keeping the memory.
    unsafe fn reg_mr_at(
        &self,
        ptr: *mut u8,
        len: usize,
        access: AccessFlags,
        owner: Option<Box<dyn Send + Sync>>,
    ) -> Result<Mr> {
        if (ptr as u64).checked_add(len as u64).is_none() {
            return Err(Error::BadSize {
                what: "MR end address",
                value: ptr as u64,
                min: 0,
                max: u64::MAX - len as u64,
            });
        }
        // SAFETY: the caller keeps the memory until the MR's teardown unmaps it.
        let map = |dev: &dyn rnic_driver::Device, dma| unsafe { dev.map_host(ptr, len, dma) };
        self.register(len, access, map, Some(Box::new(AppMem { ptr: ptr as usize, owner })))
    }

    /// Takes an MR index and key, maps the memory (`map`), commits the entry.
    fn register(
        &self,
        len: usize,
        access: AccessFlags,
        map: impl FnOnce(&dyn rnic_driver::Device, DmaAccess) -> std::result::Result<DmaBuf, rnic_driver::DriverError>,
        app: Option<Box<AppMem>>,
    ) -> Result<Mr> {
        if len == 0 || len as u64 > MAX_MR_LEN {
            return Err(Error::BadSize { what: "MR length", value: len as u64, min: 1, max: MAX_MR_LEN });
        }
        let ctx = self.context();
        let (index, key) = {
            let mut st = ctx.state();
            let index = st
                .mrs
                .iter()
                .position(|m| *m == MrSlot::Free)
                .ok_or(Error::Exhausted { what: "MR index", max: st.mrs.len() })?;
            // A new tag per registration makes keys of deregistered MRs fail at the NIC.
            let mut tag = st.mr_tag[index].wrapping_add(1);
            if tag == 0 {
                tag = 1;
            }
            st.mr_tag[index] = tag;
            let key = regs::mr_key(index as u32, tag);
            st.mrs[index] = MrSlot::Live { pdn: self.pdn(), key };
            (index as u32, key)
        };
        let dma = DmaAccess {
            device_read: true,
            device_write: access.intersects(AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE),
        };
        let buf = match map(ctx.dev(), dma) {
            Ok(b) => b,
            Err(e) => {
                ctx.state().mrs[index as usize] = MrSlot::Free;
                return Err(e.into());
            }
        };
        let m = Mr { pd: self.clone(), index, key, buf, access, live: true, app };
        // On failure `m` drops here, which invalidates the entry and frees the memory.
        m.commit(true)?;
        Ok(m)
    }
}

impl Mr {
    fn commit(&self, valid: bool) -> Result<()> {
        let mut w = [0u64; NUM_STAGE];
        mr::VA_BASE.put(&mut w, self.addr());
        mr::LENGTH.put(&mut w, self.buf.len as u64);
        mr::IOVA_BASE.put(&mut w, self.buf.bus_addr);
        mr::KEY_TAG.put(&mut w, (self.key & 0xFF) as u64);
        mr::ACCESS.put(&mut w, self.access.bits() as u64);
        mr::VALID.put(&mut w, valid as u64);
        mr::PD.put(&mut w, self.pdn() as u64);
        self.context().stage_commit(&w, mr::MR_WORDS, regs::REG_MR_COMMIT, self.index as u64)
    }

    /// Local key (`lkey`): `index << 8 | tag`.
    pub fn lkey(&self) -> u32 {
        self.key
    }

    /// Remote key (`rkey`): the lkey with its tag's top bit flipped
    /// (`regs::rkey_of`), so one is never accepted where the other belongs.
    pub fn rkey(&self) -> u32 {
        regs::rkey_of(self.key)
    }

    /// Virtual address of byte 0 (what WQEs and remote peers use): the
    /// memory's own address for the application's memory.
    pub fn addr(&self) -> u64 {
        match &self.app {
            Some(a) => a.ptr as u64,
            None => self.buf.bus_addr + VA_OFFSET,
        }
    }

    /// Whether the region is on the application's own memory.
    pub fn is_app_memory(&self) -> bool {
        self.app.is_some()
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.buf.len
    }

    /// Whether the region is empty (never: registration needs at least one byte).
    pub fn is_empty(&self) -> bool {
        self.buf.len == 0
    }

    /// Bus address (IOVA) of byte 0.
    pub fn bus_addr(&self) -> u64 {
        self.buf.bus_addr
    }

    /// Access flags.
    pub fn access(&self) -> AccessFlags {
        self.access
    }

    /// Protection domain number.
    pub fn pdn(&self) -> u32 {
        self.pd.pdn()
    }

    /// The protection domain the region is registered in.
    pub fn pd(&self) -> &Pd {
        &self.pd
    }

    /// The context the region belongs to.
    pub fn context(&self) -> &Context {
        self.pd.context()
    }

    /// Checks that `[offset, offset+len)` lies inside the region.
    pub fn check_bounds(&self, offset: u64, len: u64) -> Result<()> {
        match offset.checked_add(len) {
            Some(end) if end <= self.buf.len as u64 => Ok(()),
            _ => Err(Error::OutOfBounds { key: self.key, offset, len, mr_len: self.buf.len as u64 }),
        }
    }

    /// CPU write of `data` at `offset`.
    pub fn write(&self, offset: u64, data: &[u8]) -> Result<()> {
        self.check_bounds(offset, data.len() as u64)?;
        match &self.app {
            // SAFETY: in bounds (checked) of memory the registration keeps allocated.
            Some(a) => unsafe {
                std::ptr::copy_nonoverlapping(data.as_ptr(), (a.ptr as *mut u8).add(offset as usize), data.len())
            },
            None => self.context().dev().write_mem(self.buf.bus_addr + offset, data)?,
        }
        Ok(())
    }

    /// CPU read into `out` from `offset`.
    pub fn read(&self, offset: u64, out: &mut [u8]) -> Result<()> {
        self.check_bounds(offset, out.len() as u64)?;
        match &self.app {
            // SAFETY: in bounds (checked) of memory the registration keeps allocated.
            Some(a) => unsafe {
                std::ptr::copy_nonoverlapping((a.ptr as *const u8).add(offset as usize), out.as_mut_ptr(), out.len())
            },
            None => self.context().dev().read_mem(self.buf.bus_addr + offset, out)?,
        }
        Ok(())
    }

    /// A scatter/gather entry over `len` bytes at `offset`.
    pub fn sge(&self, offset: u64, len: u32) -> Sge<'_> {
        Sge::new(self, offset, len)
    }

    /// Deregisters the region (`ibv_dereg_mr`): invalidates the NIC's entry,
    /// waits for the NIC's MR fence (no DMA through the key is still under
    /// way), then frees the memory. Work that uses the key afterwards
    /// completes with an error (REM_ACCESS_ERR, LOC_PROT_ERR, REM_OP_ERR).
    ///
    /// Consumes the handle. Nothing can keep an MR busy, so every error
    /// comes from the teardown (see [`DestroyError`]): if the NIC did not
    /// confirm the fence ([`Error::FenceTimeout`]) the memory and the MR
    /// index stay allocated for good, never freed under a live DMA. On
    /// success the index is free for the next registration, under a new key.
    pub fn dereg_mr(mut self) -> std::result::Result<(), DestroyError<Mr>> {
        self.release().map_err(DestroyError::failed)
    }

    fn release(&mut self) -> Result<()> {
        if !self.live {
            return Ok(());
        }
        self.live = false;
        let ctx = self.pd.context();
        // Invalidate, then fence: the memory is freed only once the NIC says
        // no DMA through the old key can still reach it.
        if let Err(e) = self.commit(false).and_then(|()| self.fence()) {
            ctx.state().mrs[self.index as usize] = MrSlot::Leaked;
            // The NIC may still reach the application's memory: its owner is never dropped.
            if let Some(owner) = self.app.as_mut().and_then(|a| a.owner.take()) {
                std::mem::forget(owner);
            }
            return Err(e);
        }
        ctx.state().mrs[self.index as usize] = MrSlot::Free;
        match self.app {
            Some(_) => Ok(ctx.dev().unmap_host(self.buf)?),
            None => Ok(ctx.dev().free_dma(self.buf)?),
        }
    }

    /// Starts an MR fence and waits until the NIC reports it done. On a
    /// timeout the memory is kept (leaked), never freed under a live DMA.
    fn fence(&self) -> Result<()> {
        let dev = self.context().dev();
        dev.write_reg(regs::REG_MR_FENCE, 1)?;
        let start = dev.now_cycles();
        loop {
            if dev.read_reg(regs::REG_MR_FENCE)? == 0 {
                return Ok(());
            }
            let waited = dev.now_cycles().saturating_sub(start);
            if waited > MR_FENCE_TIMEOUT_CYCLES {
                return Err(Error::FenceTimeout { key: self.key, cycles: waited });
            }
        }
    }
}

impl Drop for Mr {
    fn drop(&mut self) {
        // Errors cannot be reported from drop; `dereg_mr` reports them.
        let _ = self.release();
    }
}

impl std::fmt::Debug for Mr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mr")
            .field("key", &format_args!("{:#x}", self.key))
            .field("addr", &format_args!("{:#x}", self.addr()))
            .field("len", &self.buf.len)
            .field("access", &self.access)
            .field("pd", &self.pdn())
            .finish()
    }
}
