//! Cosimulated NICs served to other processes over vfio-user (`rnic-simd`).
//!
//! Each NIC of a cluster listens on its own UNIX socket and looks to a client
//! like a PCIe device through VFIO:
//! - BAR0 is vfio-user region 0, and every 8-byte access is a register access
//!   of the NIC;
//! - the client's DMA memory arrives as file descriptors (`DMA_MAP`), which
//!   the server maps as windows of the NIC's host memory, so the NIC's DMA
//!   lands in the client's memory and passes the same shadow check as in
//!   process;
//! - MSI-X vectors are bound to the client's eventfds (`SET_IRQS`);
//! - region 2 ([`CLOCK_REGION`]) is a page the client maps, whose first
//!   word is the simulated cycle count, so reading the device's clock costs
//!   the client no simulated time. On a board that read is an MMIO read of
//!   `REG_CYCLES`, about a microsecond.
//!
//! The simulation runs continuously while any client is attached (a clock
//! thread), and register reads run it until their reply is back. A client
//! that goes away (closed, or killed mid-transfer) gets its NIC a
//! function-level reset: its QPs, mappings and interrupt bindings are
//! dropped, the other NICs carry on, and the socket takes the next client.
//!
//! A region access that the device cannot serve reads as all ones and is
//! ignored as a write, as a PCIe device answers an unsupported request.
//! It is never an error reply, because the vfio_user crate's client (0.1.7)
//! does not read error replies to region accesses.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use memmap2::{MmapOptions, MmapRaw};
use rnic_driver::vfio_user::CLOCK_REGION;
use rnic_driver::{Device, DmaAccess};
use rnic_spec::regs;
use vfio_bindings::bindings::vfio as sys;
use vfio_user::{DmaMapFlags, DmaUnmapFlags, IrqInfo, Server, ServerBackend, ServerRegion, SparseArea};

use crate::{CosimDevice, SharedCluster};

/// Cycles the clock thread runs per turn of the cluster lock.
const CLOCK_CHUNK: u64 = 16;

/// Bytes of the clock page.
const CLOCK_BYTES: usize = 4096;

/// What the serving threads share.
struct Shared {
    cluster: Arc<SharedCluster>,
    /// Clients attached now.
    attached: AtomicUsize,
    /// Threads waiting for the cluster lock (the clock thread lets them pass).
    waiting: AtomicUsize,
    /// The clock page: its file (shared with every client) and the server's mapping.
    clock_file: File,
    clock: MmapRaw,
}

impl Shared {
    /// Runs `f` with priority over the clock thread, then publishes the time it left.
    fn access<R>(&self, f: impl FnOnce() -> R) -> R {
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let r = f();
        self.publish(self.cluster.lock().now());
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        r
    }

    /// Writes the cycle count into the clock page.
    fn publish(&self, now: u64) {
        // SAFETY: the page is mapped for the life of `self` and its first word is aligned.
        unsafe { std::ptr::write_volatile(self.clock.as_mut_ptr().cast::<u64>(), now) }
    }
}

/// One NIC's side of the vfio-user protocol.
struct NicBackend {
    shared: Arc<Shared>,
    dev: CosimDevice,
    /// The client's eventfds, one per MSI-X vector, kept open while bound.
    irq_files: Vec<Option<File>>,
    /// The client has sent a command beyond the version handshake (it counts as attached).
    attached: bool,
}

impl NicBackend {
    /// Marks the client attached at its first command: the clock runs from then on.
    fn touch(&mut self) {
        if !self.attached {
            self.attached = true;
            self.shared.attached.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Prints a refused request and makes its error.
    fn refuse(&self, msg: String) -> io::Error {
        eprintln!("rnic-simd: {}: {msg}", self.dev.name());
        io::Error::other(msg)
    }

    /// The client is gone: it no longer keeps the clock running.
    fn detach(&mut self) {
        if std::mem::take(&mut self.attached) {
            self.shared.attached.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// Whether an access is one aligned 8-byte register word of BAR0.
fn reg_word(region: u32, offset: u64, len: usize) -> Option<u32> {
    (region == sys::VFIO_PCI_BAR0_REGION_INDEX
        && len == 8
        && offset.is_multiple_of(8)
        && offset.checked_add(8).is_some_and(|end| end <= regs::BAR0_BYTES))
    .then_some(offset as u32)
}

/// The device's PCI config space as the client reads it: Xilinx's vendor ID,
/// the device ID the board's PCIe IP is given, memory space and bus master on.
fn config_space() -> [u8; 64] {
    let mut c = [0u8; 64];
    c[0..2].copy_from_slice(&0x10eeu16.to_le_bytes());
    c[2..4].copy_from_slice(&0x903fu16.to_le_bytes());
    c[4..6].copy_from_slice(&0x0006u16.to_le_bytes());
    // Class: network controller, Ethernet.
    c[0x0a] = 0x00;
    c[0x0b] = 0x02;
    c
}

impl ServerBackend for NicBackend {
    fn region_read(&mut self, region: u32, offset: u64, data: &mut [u8]) -> io::Result<()> {
        self.touch();
        if let Some(off) = reg_word(region, offset, data.len()) {
            match self.shared.access(|| self.dev.read_reg(off)) {
                Ok(v) => {
                    data.copy_from_slice(&v.to_le_bytes());
                    return Ok(());
                }
                Err(e) => eprintln!("rnic-simd: {}: register read at {off:#x}: {e}", self.dev.name()),
            }
        } else if region == sys::VFIO_PCI_CONFIG_REGION_INDEX
            && offset.checked_add(data.len() as u64).is_some_and(|end| end <= 64)
        {
            data.copy_from_slice(&config_space()[offset as usize..][..data.len()]);
            return Ok(());
        }
        eprintln!(
            "rnic-simd: {}: region {region} read of {} bytes at {offset:#x}: not a register word; reads as all ones",
            self.dev.name(),
            data.len()
        );
        data.fill(0xff);
        Ok(())
    }

    fn region_write(&mut self, region: u32, offset: u64, data: &[u8]) -> io::Result<()> {
        self.touch();
        match reg_word(region, offset, data.len()) {
            Some(off) => {
                let v = u64::from_le_bytes(data.try_into().expect("8 bytes"));
                if let Err(e) = self.shared.access(|| self.dev.write_reg(off, v)) {
                    eprintln!("rnic-simd: {}: register write at {off:#x}: {e}", self.dev.name());
                }
            }
            // Config space writes (the command register) change nothing in the model.
            None if region == sys::VFIO_PCI_CONFIG_REGION_INDEX => {}
            None => eprintln!(
                "rnic-simd: {}: region {region} write of {} bytes at {offset:#x}: not a register word; ignored",
                self.dev.name(),
                data.len()
            ),
        }
        Ok(())
    }

    fn dma_map(
        &mut self,
        flags: DmaMapFlags,
        offset: u64,
        address: u64,
        size: u64,
        fd: Option<File>,
    ) -> io::Result<()> {
        self.touch();
        let fd = fd.ok_or_else(|| {
            self.refuse("DMA_MAP without a file descriptor: rnic-simd reaches client memory only through one".into())
        })?;
        let len = usize::try_from(size).map_err(io::Error::other)?;
        // Pages past the file's end would kill the server with SIGBUS when the NIC touches them.
        let file_len = fd.metadata()?.len();
        if offset.checked_add(size).is_none_or(|end| end > file_len) {
            return Err(self.refuse(format!(
                "DMA map of {size} bytes at {address:#x}: offset {offset} + {size} is past the end of the shared file ({file_len} bytes)"
            )));
        }
        // A file that could shrink later could do the same: a memfd must be sealed against it.
        // SAFETY: F_GET_SEALS reads the descriptor's seals and takes no pointer.
        let seals = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GET_SEALS) };
        if seals >= 0 && seals & libc::F_SEAL_SHRINK == 0 {
            return Err(self.refuse(format!(
                "DMA map of {size} bytes at {address:#x}: the memfd is not sealed against shrinking (F_SEAL_SHRINK)"
            )));
        }
        let mem = MmapOptions::new().offset(offset).len(len).map_raw(fd.as_raw_fd())?;
        let access = DmaAccess {
            device_read: flags.contains(DmaMapFlags::READ),
            device_write: flags.contains(DmaMapFlags::WRITE),
        };
        let r = self
            .shared
            .access(|| self.dev.cluster().lock().nic_mut(self.dev.nic()).mem_mut().map_window(address, mem, access));
        r.map_err(|e| self.refuse(e.to_string()))
    }

    fn dma_unmap(&mut self, _flags: DmaUnmapFlags, address: u64, size: u64) -> io::Result<()> {
        self.touch();
        let r = self
            .shared
            .access(|| self.dev.cluster().lock().nic_mut(self.dev.nic()).mem_mut().unmap_window(address, size));
        // Unmapping what is not mapped unmaps nothing, as under VFIO (and the crate's client cannot read an error reply here).
        if let Err(e) = r {
            self.refuse(e.to_string());
        }
        Ok(())
    }

    fn reset(&mut self) -> io::Result<()> {
        self.touch();
        self.shared.access(|| {
            self.dev.cluster().lock().reset_nic(self.dev.nic());
            give_address(&self.dev)
        })?;
        self.irq_files.iter_mut().for_each(|f| *f = None);
        Ok(())
    }

    fn set_irqs(&mut self, index: u32, flags: u32, start: u32, count: u32, fds: Vec<File>) -> io::Result<()> {
        self.touch();
        if index != sys::VFIO_PCI_MSIX_IRQ_INDEX
            || start.checked_add(count).is_none_or(|e| e as usize > regs::MSIX_VECTORS)
        {
            return Err(self.refuse(format!(
                "SET_IRQS: index {index}, vectors {start}+{count}: the NIC has MSI-X vectors 0..{}",
                regs::MSIX_VECTORS
            )));
        }
        let eventfds = flags & sys::VFIO_IRQ_SET_DATA_EVENTFD != 0;
        if eventfds && fds.len() != count as usize {
            return Err(self.refuse(format!("SET_IRQS: {count} vectors but {} eventfds", fds.len())));
        }
        // No data with count 0 disables MSI-X: every vector is unbound.
        let range = if !eventfds && count == 0 { 0..regs::MSIX_VECTORS as u32 } else { start..start + count };
        let mut fds = fds.into_iter();
        for v in range {
            let file = if eventfds { fds.next() } else { None };
            let r = self.shared.access(|| self.dev.set_irq(v, file.as_ref().map(|f| f.as_raw_fd())));
            r.map_err(io::Error::other)?;
            self.irq_files[v as usize] = file;
        }
        Ok(())
    }
}

/// Programs NIC `i`'s own MAC and IP (the fabric's addresses of NIC `i`), as a
/// board's NIC has its address before a driver opens it: a client reads them
/// from `REG_SRC_MAC` and `REG_SRC_IP` (register writes other than these are
/// lost until the NIC is ready, these are not).
fn give_address(dev: &CosimDevice) -> io::Result<()> {
    let i = dev.nic();
    dev.write_reg(regs::REG_SRC_MAC, crate::mac_reg(i)).map_err(io::Error::other)?;
    dev.write_reg(regs::REG_SRC_IP, crate::ip_reg(i)).map_err(io::Error::other)
}

/// The regions a client sees: BAR0, the clock page, config space; the other BARs, the ROM and VGA empty.
fn regions(clock: &File) -> Vec<ServerRegion> {
    (0..=sys::VFIO_PCI_VGA_REGION_INDEX)
        .map(|index| {
            let rw = sys::VFIO_REGION_INFO_FLAG_READ | sys::VFIO_REGION_INFO_FLAG_WRITE;
            let (flags, size) = match index {
                sys::VFIO_PCI_BAR0_REGION_INDEX => (rw, regs::BAR0_BYTES),
                CLOCK_REGION => (sys::VFIO_REGION_INFO_FLAG_READ | sys::VFIO_REGION_INFO_FLAG_MMAP, CLOCK_BYTES as u64),
                sys::VFIO_PCI_CONFIG_REGION_INDEX => (rw, 256),
                _ => (0, 0),
            };
            let mmap = index == CLOCK_REGION;
            ServerRegion {
                region_info: sys::vfio_region_info {
                    argsz: std::mem::size_of::<sys::vfio_region_info>() as u32,
                    flags,
                    index,
                    cap_offset: 0,
                    size,
                    offset: 0,
                },
                // The crate sends a region's descriptor only with a sparse-mmap list.
                sparse_areas: if mmap {
                    vec![SparseArea { area: sys::vfio_region_sparse_mmap_area { offset: 0, size: CLOCK_BYTES as u64 } }]
                } else {
                    Vec::new()
                },
                mmap_fd: mmap.then(|| clock.as_raw_fd()),
            }
        })
        .collect()
}

fn irqs() -> Vec<IrqInfo> {
    (0..=sys::VFIO_PCI_REQ_IRQ_INDEX)
        .map(|index| IrqInfo {
            index,
            flags: if index == sys::VFIO_PCI_MSIX_IRQ_INDEX { sys::VFIO_IRQ_INFO_EVENTFD } else { 0 },
            count: if index == sys::VFIO_PCI_MSIX_IRQ_INDEX { regs::MSIX_VECTORS as u32 } else { 0 },
        })
        .collect()
}

/// The socket of NIC `i` in directory `dir`.
pub fn socket_path(dir: &Path, i: usize) -> PathBuf {
    dir.join(format!("nic{i}.sock"))
}

/// Cosimulated NICs being served (see the module doc).
pub struct Served {
    sockets: Vec<PathBuf>,
    threads: Vec<JoinHandle<()>>,
}

impl Served {
    /// The sockets, one per NIC in NIC order.
    pub fn sockets(&self) -> &[PathBuf] {
        &self.sockets
    }

    /// Serves until the process ends.
    pub fn join(self) {
        for t in self.threads {
            let _ = t.join();
        }
    }
}

/// Binds `path`: a socket left by a server that is gone is replaced; one
/// that answers belongs to a running server and is refused.
fn bind(path: &Path, clock: &File) -> Result<Server, String> {
    if path.exists() {
        if UnixStream::connect(path).is_ok() {
            return Err(format!("{} is served by another process (another rnic-simd?)", path.display()));
        }
        std::fs::remove_file(path).map_err(|e| format!("removing the stale socket {}: {e}", path.display()))?;
    }
    Server::new(path, true, irqs(), regions(clock)).map_err(|e| format!("cannot listen on {}: {e}", path.display()))
}

/// Serves every NIC of `cluster` on `dir/nicI.sock` (creating `dir`), each
/// to one client at a time, and starts the clock thread. Returns once every
/// socket listens.
pub fn serve(cluster: Arc<SharedCluster>, dir: &Path) -> Result<Served, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let n = cluster.lock().len();
    // SAFETY: memfd_create takes a NUL-terminated name; a non-negative result is a new descriptor we own.
    let fd = unsafe { libc::memfd_create(c"rnic-simd-clock".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(format!("memfd_create for the clock page: {}", io::Error::last_os_error()));
    }
    // SAFETY: `fd` was just created and is owned by nobody else.
    let clock_file = unsafe { <File as std::os::fd::FromRawFd>::from_raw_fd(fd) };
    clock_file.set_len(CLOCK_BYTES as u64).map_err(|e| format!("sizing the clock page: {e}"))?;
    let clock =
        MmapOptions::new().len(CLOCK_BYTES).map_raw(&clock_file).map_err(|e| format!("mapping the clock page: {e}"))?;
    let shared = Arc::new(Shared {
        cluster: cluster.clone(),
        attached: AtomicUsize::new(0),
        waiting: AtomicUsize::new(0),
        clock_file,
        clock,
    });
    let mut sockets = Vec::new();
    let mut threads = Vec::new();
    for i in 0..n {
        let path = socket_path(dir, i);
        let server = bind(&path, &shared.clock_file)?;
        sockets.push(path.clone());
        let shared = shared.clone();
        let dev = CosimDevice::new(&cluster, i);
        give_address(&dev).map_err(|e| format!("nic{i}: programming its address: {e}"))?;
        threads.push(std::thread::spawn(move || serve_nic(server, &path, shared, dev)));
    }
    let clock = shared.clone();
    threads.push(std::thread::spawn(move || run_clock(&clock)));
    Ok(Served { sockets, threads })
}

/// One NIC's clients, one after the other.
fn serve_nic(server: Server, path: &Path, shared: Arc<Shared>, dev: CosimDevice) {
    let mut b = NicBackend {
        shared: shared.clone(),
        dev,
        irq_files: (0..regs::MSIX_VECTORS).map(|_| None).collect(),
        attached: false,
    };
    loop {
        let name = b.dev.name();
        // `run` accepts one client and serves it until it goes away.
        match server.run(&mut b) {
            Ok(()) => eprintln!("rnic-simd: {name}: the client on {} left; the NIC is reset", path.display()),
            Err(e) => {
                eprintln!("rnic-simd: {name}: the client on {} was dropped ({e}); the NIC is reset", path.display())
            }
        }
        let _ = b.reset();
        b.detach();
    }
}

/// Runs the cluster while clients are attached, letting register accesses pass.
fn run_clock(shared: &Shared) {
    let mut seen = 0usize;
    let mut turns = 0u64;
    loop {
        if shared.attached.load(Ordering::SeqCst) == 0 {
            std::thread::sleep(Duration::from_millis(1));
            continue;
        }
        if shared.waiting.load(Ordering::SeqCst) > 0 {
            std::thread::yield_now();
            continue;
        }
        let mut c = shared.cluster.lock();
        c.run(CLOCK_CHUNK);
        shared.publish(c.now());
        turns += 1;
        if turns.is_multiple_of(64) {
            let v = c.violations();
            // A reset drops its NIC's record, so the list can shrink.
            for (nic, v) in v.iter().skip(if v.len() < seen { 0 } else { seen }) {
                eprintln!("rnic-simd: nic{nic}: {v}");
            }
            seen = v.len();
        }
    }
}
