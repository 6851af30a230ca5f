//! A register/memory-level fake NIC for the library's unit tests: it records
//! register writes and serves DMA memory, and the tests play the NIC by
//! writing CQEs themselves. No RTL involved.

use crate::ctx::NetAddr;
use crate::{open_device, ring, Context, Device};
use rnic_driver::{DmaAccess, DmaBuf, DriverError};
use rnic_spec::desc::Cqe;
use rnic_spec::regs::{self, NUM_STAGE};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use zerocopy::IntoBytes;

/// A `RefCell`/`Cell`-like slot of the mock that is `Sync` (a `Device` is shared between threads).
pub struct Shared<T>(Mutex<T>);

impl<T> Shared<T> {
    pub fn new(v: T) -> Shared<T> {
        Shared(Mutex::new(v))
    }
    pub fn borrow(&self) -> MutexGuard<'_, T> {
        self.0.lock().unwrap()
    }
    pub fn borrow_mut(&self) -> MutexGuard<'_, T> {
        self.0.lock().unwrap()
    }
}

impl<T: Copy> Shared<T> {
    pub fn get(&self) -> T {
        *self.0.lock().unwrap()
    }
    pub fn set(&self, v: T) {
        *self.0.lock().unwrap() = v;
    }
}

pub struct MockDev {
    pub id: u64,
    pub mem: Shared<BTreeMap<u64, (Vec<u8>, DmaAccess)>>,
    pub next: Shared<u64>,
    pub writes: Shared<Vec<(u32, u64)>>,
    pub stage: Shared<[u64; NUM_STAGE]>,
    /// (commit register, value, staging words at the commit)
    pub commits: Shared<Vec<(u32, u64, [u64; NUM_STAGE])>>,
    pub cycles: Shared<u64>,
    /// Makes the MR fence never finish (each poll of it takes 10 000 cycles).
    pub fence_stuck: Shared<bool>,
    /// Application memory mapped: bus address -> (its address, length, access).
    pub host: Shared<BTreeMap<u64, (usize, usize, DmaAccess)>>,
}

impl MockDev {
    pub fn new() -> Arc<MockDev> {
        Arc::new(MockDev {
            id: regs::ID_MAGIC << 32 | 1,
            mem: Shared::new(BTreeMap::new()),
            next: Shared::new(0x1_0000_0000),
            writes: Shared::new(Vec::new()),
            stage: Shared::new([0; NUM_STAGE]),
            commits: Shared::new(Vec::new()),
            cycles: Shared::new(0),
            fence_stuck: Shared::new(false),
            host: Shared::new(BTreeMap::new()),
        })
    }

    fn find(&self, addr: u64, len: usize) -> Result<(u64, usize), DriverError> {
        let m = self.mem.borrow();
        let (&base, (v, _)) =
            m.range(..=addr).next_back().ok_or(DriverError::Device(format!("no buffer at {addr:#x}")))?;
        if addr + len as u64 > base + v.len() as u64 {
            return Err(DriverError::OutOfBounds { addr, len, base, size: v.len() });
        }
        Ok((base, (addr - base) as usize))
    }

    /// Plays the NIC: writes a CQE into slot `idx` of the CQ ring at `base`.
    pub fn put_cqe(&self, base: u64, log2: u32, idx: u32, cqe: Cqe) {
        let addr = base + (ring::slot(idx, log2) * 32) as u64;
        self.write_mem(addr, cqe.as_bytes()).unwrap();
    }

    pub fn last_commit(&self, reg: u32) -> (u64, [u64; NUM_STAGE]) {
        let c = self.commits.borrow();
        let (_, v, w) = c.iter().rev().find(|(r, _, _)| *r == reg).expect("a commit");
        (*v, *w)
    }
}

impl Device for MockDev {
    fn read_reg(&self, offset: u32) -> Result<u64, DriverError> {
        Ok(match offset {
            regs::REG_ID => self.id,
            regs::REG_CYCLES => self.cycles.get(),
            regs::REG_STATUS => regs::STATUS_READY,
            regs::REG_MR_FENCE if self.fence_stuck.get() => {
                self.cycles.set(self.cycles.get() + 10_000);
                1
            }
            _ => 0,
        })
    }
    fn write_reg(&self, offset: u32, value: u64) -> Result<(), DriverError> {
        self.writes.borrow_mut().push((offset, value));
        if (regs::REG_STAGE..regs::REG_STAGE + 8 * NUM_STAGE as u32).contains(&offset) {
            self.stage.borrow_mut()[((offset - regs::REG_STAGE) / 8) as usize] = value;
        }
        if [regs::REG_QP_COMMIT, regs::REG_MR_COMMIT, regs::REG_CQ_COMMIT].contains(&offset) {
            self.commits.borrow_mut().push((offset, value, *self.stage.borrow()));
        }
        Ok(())
    }
    fn alloc_dma(&self, len: usize, access: DmaAccess) -> Result<DmaBuf, DriverError> {
        let a = self.next.get();
        self.next.set(a + (len as u64).div_ceil(4096) * 4096 + 4096);
        self.mem.borrow_mut().insert(a, (vec![0; len], access));
        Ok(DmaBuf { bus_addr: a, len })
    }
    fn free_dma(&self, buf: DmaBuf) -> Result<(), DriverError> {
        self.mem.borrow_mut().remove(&buf.bus_addr).map(|_| ()).ok_or(DriverError::Device("double free".into()))
    }
    fn set_dma_access(&self, buf: DmaBuf, access: DmaAccess) -> Result<(), DriverError> {
        self.mem.borrow_mut().get_mut(&buf.bus_addr).unwrap().1 = access;
        Ok(())
    }
    unsafe fn map_host(&self, ptr: *mut u8, len: usize, access: DmaAccess) -> Result<DmaBuf, DriverError> {
        let a = self.next.get() + ptr as u64 % 4096;
        self.next.set(self.next.get() + (len as u64 + 4096).div_ceil(4096) * 4096 + 4096);
        self.host.borrow_mut().insert(a, (ptr as usize, len, access));
        Ok(DmaBuf { bus_addr: a, len })
    }
    fn unmap_host(&self, buf: DmaBuf) -> Result<(), DriverError> {
        match self.host.borrow_mut().remove(&buf.bus_addr) {
            Some((_, len, _)) if len == buf.len => Ok(()),
            _ => Err(DriverError::Device("not mapped".into())),
        }
    }
    fn write_mem(&self, addr: u64, data: &[u8]) -> Result<(), DriverError> {
        let (b, o) = self.find(addr, data.len())?;
        self.mem.borrow_mut().get_mut(&b).unwrap().0[o..o + data.len()].copy_from_slice(data);
        Ok(())
    }
    fn read_mem(&self, addr: u64, out: &mut [u8]) -> Result<(), DriverError> {
        let (b, o) = self.find(addr, out.len())?;
        let n = out.len();
        out.copy_from_slice(&self.mem.borrow()[&b].0[o..o + n]);
        Ok(())
    }
    fn wait(&self) -> Result<(), DriverError> {
        self.cycles.set(self.cycles.get() + 100);
        Ok(())
    }
    fn now_cycles(&self) -> u64 {
        self.cycles.get()
    }
    fn name(&self) -> String {
        "mock".into()
    }

    fn set_irq(&self, _vector: u32, _fd: Option<std::os::fd::RawFd>) -> Result<(), DriverError> {
        Err(DriverError::Device("mock: no interrupts".into()))
    }

    fn wait_fd(&self, _fd: std::os::fd::RawFd, _timeout_cycles: u64) -> Result<bool, DriverError> {
        Err(DriverError::Device("mock: no interrupts".into()))
    }
}

pub fn addr(i: u8) -> NetAddr {
    NetAddr { mac: [2, 0, 0, 0, 0, i], ip: std::net::Ipv4Addr::new(10, 0, 0, i) }
}

pub fn open(dev: &Arc<MockDev>) -> Context {
    open_device(dev.clone() as Arc<dyn Device>, addr(1)).unwrap()
}
