//! One simulated NIC: the verilated core (or the board shell around it),
//! its host memory and PCIe model, and the MMIO register path.

use std::collections::VecDeque;

use rnic_spec::params::{CLOCK_PS, DATA_BYTES};

use crate::config::{ns_to_cycles, SimConfig};
use crate::fabric::{NetPort, RxMac};
use crate::mem::{HostMem, Violation};
use crate::model::{Model, ModelError, PortId};
use crate::pcie::{DmaStats, Pcie, RcPorts};
use crate::usp::{BarOp, UspHost};
use crate::SimError;

/// Which top the NIC simulates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SimTop {
    /// The core alone, on its vendor-neutral interfaces (the default).
    #[default]
    Core,
    /// The board shell: the core behind the UltraScale+ PCIe adapters (the
    /// PCIe block's four AXI4-Stream interfaces, [`crate::usp`]) and the
    /// MAC clock-crossing FIFOs, with the MAC clock in phase with the core's.
    Shell,
}

impl SimTop {
    /// `RNIC_SIM_TOP`: `core` (or unset) or `shell`.
    ///
    /// # Panics
    /// On any other value (a typo must not silently test the core).
    pub fn from_env() -> SimTop {
        match std::env::var("RNIC_SIM_TOP").as_deref() {
            Err(_) | Ok("") | Ok("core") => SimTop::Core,
            Ok("shell") => SimTop::Shell,
            Ok(v) => panic!("RNIC_SIM_TOP={v}: use core or shell"),
        }
    }
}

/// The shell's ports besides the PCIe block's.
struct ShellPorts {
    reset: PortId,
    mac_clock: PortId,
    mac_reset: PortId,
    tx_tdata: PortId,
    tx_tkeep: PortId,
    tx_tlast: PortId,
    tx_tuser: PortId,
    tx_tvalid: PortId,
    tx_tready: PortId,
    rx_tdata: PortId,
    rx_tkeep: PortId,
    rx_tlast: PortId,
    rx_tvalid: PortId,
    rx_tuser: PortId,
    rx_dropped: PortId,
    rx_pending: PortId,
    cpl_err: PortId,
    bad_req: PortId,
}

impl ShellPorts {
    fn resolve(m: &Model) -> Result<ShellPorts, ModelError> {
        let p = |n: &str| m.port(n);
        Ok(ShellPorts {
            reset: p("reset")?,
            mac_clock: p("mac_clock")?,
            mac_reset: p("mac_reset")?,
            tx_tdata: p("mac_tx_tdata")?,
            tx_tkeep: p("mac_tx_tkeep")?,
            tx_tlast: p("mac_tx_tlast")?,
            tx_tuser: p("mac_tx_tuser")?,
            tx_tvalid: p("mac_tx_tvalid")?,
            tx_tready: p("mac_tx_tready")?,
            rx_tdata: p("mac_rx_tdata")?,
            rx_tkeep: p("mac_rx_tkeep")?,
            rx_tlast: p("mac_rx_tlast")?,
            rx_tvalid: p("mac_rx_tvalid")?,
            rx_tuser: p("mac_rx_tuser")?,
            rx_dropped: p("mac_rx_dropped")?,
            rx_pending: p("mac_rx_pending")?,
            cpl_err: p("pcie_cpl_err")?,
            bad_req: p("pcie_bad_req")?,
        })
    }
}

/// The ports of the simulated top.
enum Ports {
    Core(CorePorts),
    Shell(ShellPorts, UspHost),
}

/// Every port of the "core" top, resolved once.
struct CorePorts {
    reset: PortId,
    reg_wr_valid: PortId,
    reg_wr_addr: PortId,
    reg_wr_data: PortId,
    reg_rd_valid: PortId,
    reg_rd_addr: PortId,
    reg_rd_resp_valid: PortId,
    reg_rd_resp_data: PortId,
    pcie_mrrs: PortId,
    pcie_rq_valid: PortId,
    pcie_rq_ready: PortId,
    pcie_rq_addr: PortId,
    pcie_rq_len: PortId,
    pcie_rq_tag: PortId,
    pcie_rc: RcPorts,
    pcie_mps: PortId,
    pcie_wr_valid: PortId,
    pcie_wr_ready: PortId,
    pcie_wr_first: PortId,
    pcie_wr_last: PortId,
    pcie_wr_addr: PortId,
    pcie_wr_len: PortId,
    pcie_wr_data: PortId,
    pcie_wr_keep: PortId,
    net_tx_valid: PortId,
    net_tx_ready: PortId,
    net_tx_data: PortId,
    net_tx_keep: PortId,
    net_tx_last: PortId,
    net_rx_valid: PortId,
    net_rx_ready: PortId,
    net_rx_data: PortId,
    net_rx_keep: PortId,
    net_rx_last: PortId,
}

impl CorePorts {
    fn resolve(m: &Model) -> Result<CorePorts, ModelError> {
        Ok(CorePorts {
            reset: m.port("reset")?,
            reg_wr_valid: m.port("reg_wr_valid")?,
            reg_wr_addr: m.port("reg_wr_addr")?,
            reg_wr_data: m.port("reg_wr_data")?,
            reg_rd_valid: m.port("reg_rd_valid")?,
            reg_rd_addr: m.port("reg_rd_addr")?,
            reg_rd_resp_valid: m.port("reg_rd_resp_valid")?,
            reg_rd_resp_data: m.port("reg_rd_resp_data")?,
            pcie_mrrs: m.port("pcie_mrrs")?,
            pcie_rq_valid: m.port("pcie_rq_valid")?,
            pcie_rq_ready: m.port("pcie_rq_ready")?,
            pcie_rq_addr: m.port("pcie_rq_addr")?,
            pcie_rq_len: m.port("pcie_rq_len")?,
            pcie_rq_tag: m.port("pcie_rq_tag")?,
            pcie_rc: RcPorts::resolve(m, "pcie_rc_")?,
            pcie_mps: m.port("pcie_mps")?,
            pcie_wr_valid: m.port("pcie_wr_valid")?,
            pcie_wr_ready: m.port("pcie_wr_ready")?,
            pcie_wr_first: m.port("pcie_wr_first")?,
            pcie_wr_last: m.port("pcie_wr_last")?,
            pcie_wr_addr: m.port("pcie_wr_addr")?,
            pcie_wr_len: m.port("pcie_wr_len")?,
            pcie_wr_data: m.port("pcie_wr_data")?,
            pcie_wr_keep: m.port("pcie_wr_keep")?,
            net_tx_valid: m.port("net_tx_valid")?,
            net_tx_ready: m.port("net_tx_ready")?,
            net_tx_data: m.port("net_tx_data")?,
            net_tx_keep: m.port("net_tx_keep")?,
            net_tx_last: m.port("net_tx_last")?,
            net_rx_valid: m.port("net_rx_valid")?,
            net_rx_ready: m.port("net_rx_ready")?,
            net_rx_data: m.port("net_rx_data")?,
            net_rx_keep: m.port("net_rx_keep")?,
            net_rx_last: m.port("net_rx_last")?,
        })
    }
}

/// A host register access on its way to the core.
#[derive(Clone, Copy, Debug)]
enum RegOp {
    Write { addr: u32, data: u64 },
    Read { addr: u32 },
}

/// State of the one outstanding register read.
#[derive(Clone, Copy, Debug)]
enum ReadState {
    /// No read.
    Idle,
    /// Queued for the core (or issued at `issued` when Some).
    Pending { addr: u32, issued: Option<u64> },
    /// The value is visible to the host from cycle `visible`.
    Done { value: u64, visible: u64 },
    /// The core did not answer within the timeout.
    Lost { addr: u32, issued: u64 },
}

/// One NIC: the "core" model, host memory, PCIe, MMIO. Stepped by [`crate::Cluster`].
pub struct SimNic {
    index: usize,
    model: Model,
    p: Ports,
    mem: HostMem,
    pcie: Pcie,
    regs: VecDeque<(u64, RegOp)>,
    read: ReadState,
    mmio: u64,
    reg_timeout: u64,
    /// What the harness presented this cycle (for the handshakes).
    rx_shown: bool,
    beat: [u8; DATA_BYTES],
    /// Register read responses nobody asked for (a protocol error of the core).
    spurious_reg_resp: u64,
    violations_seen: usize,
    /// Cycles the core's reset input stays high.
    reset_left: u64,
    /// The shell's error pulses: completions dropped, BAR requests refused, received frames dropped.
    shell_errors: [u64; 3],
    /// Received frames the shell's MAC is still to report bad (FCS error); the frame under way is one; a frame is under way.
    fcs_errors_left: u64,
    rx_bad: bool,
    rx_mid: bool,
}

/// NIC `index`'s waveform file: `run.fst` gives `run.nic<index>.fst`.
pub fn wave_path(path: &std::path::Path, index: usize) -> std::path::PathBuf {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let ext = path.extension().map(|e| e.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!("{stem}.nic{index}.{ext}"))
}

/// Cycles [`SimNic::function_reset`] holds the core's reset.
pub const RESET_CYCLES: u64 = 16;

impl SimNic {
    /// NIC `index` with a fresh core and empty host memory.
    pub fn new(index: usize, cfg: &SimConfig) -> Result<SimNic, SimError> {
        let mut model = Model::new(match cfg.top {
            SimTop::Core => "core",
            SimTop::Shell => "shell",
        })?;
        if let Some(path) = &cfg.waves {
            model.trace(&wave_path(path, index), cfg.waves_window)?;
        }
        let p = match cfg.top {
            SimTop::Core => {
                let p = CorePorts::resolve(&model)?;
                // The core alone has no MAC FIFO in front of it: nothing is dropped there.
                let mac_drop = model.port("net_rx_mac_drop")?;
                model.set(mac_drop, 0);
                model.set(p.pcie_mrrs, rnic_spec::params::pcie_size_code(cfg.pcie_mrrs) as u64);
                model.set(p.pcie_mps, rnic_spec::params::pcie_size_code(cfg.pcie_mps) as u64);
                Ports::Core(p)
            }
            SimTop::Shell => {
                let host = UspHost::new(&mut model, cfg.pcie_mps, cfg.pcie_mrrs)?;
                let p = ShellPorts::resolve(&model)?;
                // The MAC side's own reset is not used: the core's reset reaches it through the shell.
                model.set(p.mac_reset, 0);
                Ports::Shell(p, host)
            }
        };
        Ok(SimNic {
            index,
            model,
            p,
            mem: HostMem::new(cfg.host_mem_bytes),
            pcie: Pcie::new(cfg, index as u64),
            regs: VecDeque::with_capacity(1024),
            read: ReadState::Idle,
            mmio: ns_to_cycles(cfg.mmio_latency_ns),
            reg_timeout: cfg.reg_timeout_cycles,
            rx_shown: false,
            beat: [0; DATA_BYTES],
            spurious_reg_resp: 0,
            violations_seen: 0,
            reset_left: 0,
            shell_errors: [0; 3],
            fcs_errors_left: 0,
            rx_bad: false,
            rx_mid: false,
        })
    }

    /// A function-level reset, as the PCIe IP gives one: the core's reset is
    /// held for [`RESET_CYCLES`] from the next cycle, DMA and register
    /// accesses in flight are dropped, and host memory is replaced by an
    /// empty one with a fresh PCIe model (the driver starts over, as after
    /// its process died). The core then clears its tables and sets
    /// `STATUS_READY`; frames already on the wire still arrive.
    pub fn function_reset(&mut self, cfg: &SimConfig) {
        self.mem = HostMem::new(cfg.host_mem_bytes);
        self.pcie = Pcie::new(cfg, self.index as u64);
        self.regs.clear();
        self.read = ReadState::Idle;
        self.violations_seen = 0;
        self.reset_left = RESET_CYCLES;
        if let Ports::Shell(_, host) = &mut self.p {
            host.reset();
        }
    }

    /// On the board shell: a received frame waits in the shell's RX FIFO
    /// for the core (tests wait for this to clear before they look at the
    /// core's counters). Always false on the core alone.
    pub fn rx_pending_in_shell(&self) -> bool {
        match &self.p {
            Ports::Shell(p, _) => self.model.get(p.rx_pending) != 0,
            Ports::Core(_) => false,
        }
    }

    /// On the board shell: the MAC reports the next `n` frames it receives
    /// as bad (an FCS error, `tuser` with the last beat), as a CMAC does for
    /// a frame damaged on the wire; the shell drops them and counts them in
    /// `RX_MAC_DROP`. No effect on the core alone.
    pub fn mac_fcs_errors(&mut self, n: u64) {
        self.fcs_errors_left += n;
    }

    /// The board shell's error pulses so far: PCIe completions dropped (error
    /// status, poison), BAR requests refused, received frames dropped (MAC
    /// FIFO full or bad). Zero with the core alone.
    pub fn shell_errors(&self) -> [u64; 3] {
        self.shell_errors
    }

    /// Index in the cluster.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The core's model (to peek at ports in tests).
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// Host memory.
    pub fn mem(&self) -> &HostMem {
        &self.mem
    }

    /// Host memory, mutable (allocation, CPU writes).
    pub fn mem_mut(&mut self) -> &mut HostMem {
        &mut self.mem
    }

    /// Every MSI-X message this NIC sent that reached the host.
    pub fn msis(&self) -> &[crate::pcie::Msi] {
        self.pcie.msis()
    }

    /// Binds eventfd `fd` to this NIC's MSI-X messages with data `data` (`None`: unbinds), see [`Pcie::bind_irq`].
    pub fn bind_irq(&mut self, data: u32, fd: Option<std::os::fd::RawFd>) {
        self.pcie.bind_irq(data, fd);
    }

    /// DMA shadow violations so far.
    pub fn violations(&self) -> &[Violation] {
        self.pcie.violations()
    }

    /// The first violation not yet returned by this call.
    pub fn take_new_violation(&mut self) -> Option<Violation> {
        let v = self.pcie.violations().get(self.violations_seen).copied();
        if v.is_some() {
            self.violations_seen += 1;
        }
        v
    }

    /// DMA counters.
    pub fn dma_stats(&self) -> DmaStats {
        self.pcie.stats()
    }

    /// Register read responses the core sent without a read outstanding.
    pub fn spurious_reg_responses(&self) -> u64 {
        self.spurious_reg_resp
    }

    /// Posts a register write at cycle `now`; it reaches the core after the MMIO latency.
    pub fn post_write(&mut self, now: u64, addr: u32, data: u64) {
        self.regs.push_back((now + self.mmio, RegOp::Write { addr, data }));
    }

    /// Posts a register read at cycle `now`; poll [`SimNic::read_result`]. One read at a time.
    pub fn post_read(&mut self, now: u64, addr: u32) -> Result<(), SimError> {
        if matches!(self.read, ReadState::Pending { .. }) {
            return Err(SimError::RegBusy { nic: self.index });
        }
        self.read = ReadState::Pending { addr, issued: None };
        self.regs.push_back((now + self.mmio, RegOp::Read { addr }));
        Ok(())
    }

    /// The posted read's value once visible to the host at cycle `now`, or its failure.
    pub fn read_result(&mut self, now: u64) -> Option<Result<u64, SimError>> {
        match self.read {
            ReadState::Done { value, visible } if visible <= now => {
                self.read = ReadState::Idle;
                Some(Ok(value))
            }
            ReadState::Lost { addr, issued } => {
                self.read = ReadState::Idle;
                Some(Err(SimError::RegTimeout { nic: self.index, addr, issued, cycles: self.reg_timeout }))
            }
            ReadState::Idle => Some(Err(SimError::NoRead { nic: self.index })),
            _ => None,
        }
    }

    /// DMA reads and writes accepted and not yet finished (a quiescence probe for tests).
    pub fn dma_in_flight(&self) -> usize {
        self.pcie.reads_in_flight() + self.pcie.writes_in_flight()
    }

    /// Register writes and reads not yet presented to the core.
    pub fn regs_queued(&self) -> usize {
        self.regs.len()
    }

    /// One clock cycle at `now`: present inputs, evaluate, take the handshakes, clock edge.
    #[inline]
    pub fn cycle(&mut self, now: u64, net: &mut NetPort, pool: &mut Vec<Vec<u8>>) {
        if matches!(self.p, Ports::Shell(..)) {
            self.cycle_shell(now, net, pool);
            return;
        }
        let now_ps = now * CLOCK_PS;
        let Ports::Core(p) = &self.p else { unreachable!("the core's ports") };
        let m = &mut self.model;

        // Register port: one access per cycle, none while a read is outstanding.
        let mut wr_valid = 0;
        let mut rd_valid = 0;
        let read_busy = matches!(self.read, ReadState::Pending { issued: Some(_), .. });
        if !read_busy {
            if let Some(&(due, op)) = self.regs.front() {
                if due <= now {
                    self.regs.pop_front();
                    match op {
                        RegOp::Write { addr, data } => {
                            m.set(p.reg_wr_addr, addr as u64);
                            m.set(p.reg_wr_data, data);
                            wr_valid = 1;
                        }
                        RegOp::Read { addr } => {
                            m.set(p.reg_rd_addr, addr as u64);
                            rd_valid = 1;
                            self.read = ReadState::Pending { addr, issued: Some(now) };
                        }
                    }
                }
            }
        }
        m.set(p.reg_wr_valid, wr_valid);
        // In reset the PCIe IP is in reset too (a function-level reset), and
        // the MAC aborts a frame the core had begun.
        let in_reset = self.reset_left > 0;
        m.set(p.reset, in_reset as u64);
        self.reset_left = self.reset_left.saturating_sub(1);
        m.set(p.reg_rd_valid, rd_valid);

        // DMA port.
        self.pcie.begin_cycle(now, &mut self.mem);
        let rq_ready = self.pcie.rq_ready() && !in_reset;
        let wr_ready = self.pcie.wr_ready() && !in_reset;
        m.set(p.pcie_rq_ready, rq_ready as u64);
        m.set(p.pcie_wr_ready, wr_ready as u64);
        p.pcie_rc.drive(m, &self.pcie);

        // Network port.
        if in_reset {
            net.tx.abort(pool);
        }
        let tx_ready = net.tx.ready(now_ps) && !in_reset;
        m.set(p.net_tx_ready, tx_ready as u64);
        self.rx_shown = present_rx(m, &mut net.rx, now_ps, [p.net_rx_data, p.net_rx_keep, p.net_rx_last]).is_some();
        m.set(p.net_rx_valid, self.rx_shown as u64);

        m.clock_low();

        // Handshakes.
        let reply = (m.get(p.reg_rd_resp_valid) != 0).then(|| m.get(p.reg_rd_resp_data));
        let visible = (now + self.mmio).max(self.pcie.last_write_due());
        reg_reply(&mut self.read, &mut self.spurious_reg_resp, self.reg_timeout, now, visible, reply);
        if rq_ready && m.get(p.pcie_rq_valid) != 0 {
            let addr = m.get(p.pcie_rq_addr);
            let len = m.get(p.pcie_rq_len) as u32;
            let tag = m.get(p.pcie_rq_tag) as u8;
            self.pcie.rq(now, addr, len, tag, &mut self.mem);
        }
        if wr_ready && m.get(p.pcie_wr_valid) != 0 {
            let first = m.get(p.pcie_wr_first) != 0;
            let last = m.get(p.pcie_wr_last) != 0;
            let addr = m.get(p.pcie_wr_addr);
            let len = m.get(p.pcie_wr_len) as u32;
            let keep = m.get(p.pcie_wr_keep);
            m.get_bytes(p.pcie_wr_data, &mut self.beat);
            self.pcie.wr_beat(now, first, last, addr, len, &self.beat, keep, &mut self.mem);
        }
        if tx_ready && m.get(p.net_tx_valid) != 0 {
            m.get_bytes(p.net_tx_data, &mut self.beat);
            let keep = m.get(p.net_tx_keep);
            let last = m.get(p.net_tx_last) != 0;
            net.tx.beat(now_ps, &self.beat, keep, last, false, pool);
        }
        if self.rx_shown && m.get(p.net_rx_ready) != 0 {
            net.rx.fired(pool);
        }

        m.clock_high();
    }

    /// One clock cycle of the board shell: the register accesses and DMA go
    /// through the PCIe block's interfaces ([`UspHost`]), frames through the
    /// MAC's (the MAC clock toggles with the core's).
    fn cycle_shell(&mut self, now: u64, net: &mut NetPort, pool: &mut Vec<Vec<u8>>) {
        let now_ps = now * CLOCK_PS;
        let Ports::Shell(p, host) = &mut self.p else { unreachable!("the shell's ports") };
        let m = &mut self.model;

        // Register accesses: one on CQ at a time, none while a read is outstanding.
        let read_busy = matches!(self.read, ReadState::Pending { issued: Some(_), .. });
        if !read_busy && host.bar_idle() {
            if let Some(&(due, op)) = self.regs.front() {
                if due <= now {
                    self.regs.pop_front();
                    host.bar_op(match op {
                        RegOp::Write { addr, data } => BarOp::Write { addr, data },
                        RegOp::Read { addr } => {
                            self.read = ReadState::Pending { addr, issued: Some(now) };
                            BarOp::Read { addr }
                        }
                    });
                }
            }
        }
        let in_reset = self.reset_left > 0;
        m.set(p.reset, in_reset as u64);
        self.reset_left = self.reset_left.saturating_sub(1);
        self.pcie.begin_cycle(now, &mut self.mem);
        host.drive(m, &self.pcie, in_reset);

        // The MAC: TX takes a beat when the wire can; RX has no ready. It does
        // not see the core's reset: the shell ends a frame the reset cut off.
        let tx_ready = net.tx.ready(now_ps);
        m.set(p.tx_tready, tx_ready as u64);
        let shown = present_rx(m, &mut net.rx, now_ps, [p.rx_tdata, p.rx_tkeep, p.rx_tlast]);
        self.rx_shown = shown.is_some();
        let rx_last = shown == Some(true);
        if self.rx_shown && !self.rx_mid {
            self.rx_bad = self.fcs_errors_left > 0;
            self.fcs_errors_left -= self.rx_bad as u64;
        }
        m.set(p.rx_tvalid, self.rx_shown as u64);
        m.set(p.rx_tuser, (self.rx_shown && rx_last && self.rx_bad) as u64);

        m.set(p.mac_clock, 0);
        m.clock_low();

        let reply = host.handshake(m, now, &mut self.pcie, &mut self.mem);
        let visible = (now + self.mmio).max(self.pcie.last_write_due());
        reg_reply(&mut self.read, &mut self.spurious_reg_resp, self.reg_timeout, now, visible, reply);
        if tx_ready && m.get(p.tx_tvalid) != 0 {
            m.get_bytes(p.tx_tdata, &mut self.beat);
            let keep = m.get(p.tx_tkeep);
            let last = m.get(p.tx_tlast) != 0;
            let bad = m.get(p.tx_tuser) != 0;
            net.tx.beat(now_ps, &self.beat, keep, last, bad, pool);
        }
        if self.rx_shown {
            net.rx.fired(pool);
            self.rx_mid = !rx_last;
        }
        self.shell_errors[0] += m.get(p.cpl_err);
        self.shell_errors[1] += m.get(p.bad_req);
        self.shell_errors[2] += m.get(p.rx_dropped);

        m.set(p.mac_clock, 1);
        m.clock_high();
    }
}

/// A register read's reply this cycle (or none): the outstanding read is done
/// (visible to the host at `visible`: PCIe ordering, the reply does not pass
/// the device's earlier posted writes), a reply nobody asked for is counted,
/// a read unanswered for longer than `timeout` is lost.
fn reg_reply(read: &mut ReadState, spurious: &mut u64, timeout: u64, now: u64, visible: u64, reply: Option<u64>) {
    match (reply, *read) {
        (Some(value), ReadState::Pending { issued: Some(_), .. }) => *read = ReadState::Done { value, visible },
        (Some(_), _) => *spurious += 1,
        (None, ReadState::Pending { addr, issued: Some(t) }) if now - t > timeout => {
            *read = ReadState::Lost { addr, issued: t };
        }
        (None, _) => {}
    }
}

/// Presents the RX MAC's beat of this cycle on a top's `[data, keep, last]`
/// ports (driven again only when the beat changed). `Some(last)` when a beat is shown.
#[inline]
fn present_rx(m: &mut Model, rx: &mut RxMac, now_ps: u64, [data, keep, last]: [PortId; 3]) -> Option<bool> {
    rx.begin_cycle(now_ps);
    let fresh = rx.beat_is_new();
    let shown = rx.beat().map(|b| {
        if fresh {
            m.set_bytes(data, b.data);
            m.set(keep, b.keep);
            m.set(last, b.last as u64);
        }
        b.last
    });
    if fresh {
        rx.mark_driven();
    }
    shown
}
