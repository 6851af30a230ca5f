//! The UltraScale+ PCIe block's four user interfaces (PG213: 512 bits,
//! Dword-aligned, straddle off), as the board shell (`rnic_hw::shell`, top
//! "shell") meets them, on top of the [`Pcie`] root-complex model:
//!
//! - **CQ/CC**: each register access of the host is one memory request on
//!   `m_axis_cq` (a 2-Dword write, or a 2-Dword read answered on
//!   `s_axis_cc`) to BAR0 at [`BAR0_ADDR`];
//! - **RQ**: the shell's request packets are decoded (descriptor, byte
//!   enables) and handed to the model as reads and as write TLPs, the
//!   latter cut back into address-aligned beats; every rule the model
//!   checks (MRRS, MPS, 4 KiB pages, byte enables) applies to what the RTL
//!   put on the wire;
//! - **RC**: the model's completions (split at the RCB, out of order across
//!   tags, leftover bytes in unused lanes) are packed as the block packs
//!   them: a 3-Dword descriptor, then the Dwords from the one that holds
//!   the first byte, from lane 12; presented as the shell takes them (the
//!   model's completions never wait: the queue between them is the block's
//!   completion buffer).

use std::collections::VecDeque;

use rnic_spec::params::DATA_BYTES;
use rnic_spec::regs;
use rnic_spec::usp::{self, get_field, set_field, RqDesc};

use crate::mem::HostMem;
use crate::model::{Model, ModelError, PortId};
use crate::pcie::{Pcie, RcBeat};

/// Bus address of BAR0 in the simulated host.
pub const BAR0_ADDR: u64 = 0x38_0000_0000;
/// log2 of BAR0's size (4 MiB: the register map and the doorbells of 16K QPs).
pub const BAR0_APERTURE: u64 = regs::BAR0_LOG2 as u64;
/// Write beats decoded from RQ and not yet taken by the model, before RQ is held back.
const WR_QUEUE: usize = 16;

/// The PCIe block's ports on the shell.
#[derive(Clone, Copy, Debug)]
pub struct UspPorts {
    cq_tdata: PortId,
    cq_tuser: PortId,
    cq_tlast: PortId,
    cq_tvalid: PortId,
    cq_tready: PortId,
    cc_tdata: PortId,
    cc_tvalid: PortId,
    cc_tready: PortId,
    rq_tdata: PortId,
    rq_tuser: PortId,
    rq_tkeep: PortId,
    rq_tlast: PortId,
    rq_tvalid: PortId,
    rq_tready: PortId,
    rc_tdata: PortId,
    rc_tuser: PortId,
    rc_tlast: PortId,
    rc_tvalid: PortId,
    rc_tready: PortId,
    cfg_max_payload: PortId,
    cfg_max_read_req: PortId,
}

impl UspPorts {
    /// Looks the ports up in the shell's model.
    pub fn resolve(m: &Model) -> Result<UspPorts, ModelError> {
        let p = |n: &str| m.port(n);
        Ok(UspPorts {
            cq_tdata: p("cq_tdata")?,
            cq_tuser: p("cq_tuser")?,
            cq_tlast: p("cq_tlast")?,
            cq_tvalid: p("cq_tvalid")?,
            cq_tready: p("cq_tready")?,
            cc_tdata: p("cc_tdata")?,
            cc_tvalid: p("cc_tvalid")?,
            cc_tready: p("cc_tready")?,
            rq_tdata: p("rq_tdata")?,
            rq_tuser: p("rq_tuser")?,
            rq_tkeep: p("rq_tkeep")?,
            rq_tlast: p("rq_tlast")?,
            rq_tvalid: p("rq_tvalid")?,
            rq_tready: p("rq_tready")?,
            rc_tdata: p("rc_tdata")?,
            rc_tuser: p("rc_tuser")?,
            rc_tlast: p("rc_tlast")?,
            rc_tvalid: p("rc_tvalid")?,
            rc_tready: p("rc_tready")?,
            cfg_max_payload: p("cfg_max_payload")?,
            cfg_max_read_req: p("cfg_max_read_req")?,
        })
    }
}

/// A register access as a CQ request.
#[derive(Clone, Copy, Debug)]
pub enum BarOp {
    /// A 64-bit store.
    Write {
        /// Register offset.
        addr: u32,
        /// Value.
        data: u64,
    },
    /// A 64-bit load.
    Read {
        /// Register offset.
        addr: u32,
    },
}

/// A write TLP's beat, cut back to the model's address-aligned form.
struct WrBeat {
    first: bool,
    last: bool,
    addr: u64,
    len: u32,
    data: [u8; DATA_BYTES],
    keep: u64,
}

/// The PCIe block between the shell and the root-complex model.
pub struct UspHost {
    p: UspPorts,
    /// The CQ request on offer (until the shell takes it).
    cq: Option<BarOp>,
    cq_tag: u8,
    rq_beats: Vec<([u8; DATA_BYTES], u16, [u32; 5])>,
    wr: VecDeque<WrBeat>,
    /// The completion TLP being gathered from the model's beats: its packet so
    /// far (descriptor room, then payload), whether one is open, its lower address.
    cpl: Vec<u8>,
    cpl_open: bool,
    cpl_lower: u16,
    rc: VecDeque<([u8; DATA_BYTES], bool)>,
    rq_shown: bool,
    wr_shown: bool,
}

impl UspHost {
    /// The block on the shell's ports, with the model's MPS and MRRS in its configuration space.
    pub fn new(m: &mut Model, mps: u32, mrrs: u32) -> Result<UspHost, ModelError> {
        let p = UspPorts::resolve(m)?;
        m.set(p.cfg_max_payload, rnic_spec::params::pcie_size_code(mps) as u64);
        m.set(p.cfg_max_read_req, rnic_spec::params::pcie_size_code(mrrs) as u64);
        Ok(UspHost {
            p,
            cq: None,
            cq_tag: 0,
            rq_beats: Vec::new(),
            wr: VecDeque::new(),
            cpl: Vec::with_capacity(usp::RC_DESC_BYTES + 4096),
            cpl_open: false,
            cpl_lower: 0,
            rc: VecDeque::new(),
            rq_shown: false,
            wr_shown: false,
        })
    }

    /// No register access on offer: the next may be given.
    pub fn bar_idle(&self) -> bool {
        self.cq.is_none()
    }

    /// Offers a register access on CQ from this cycle.
    pub fn bar_op(&mut self, op: BarOp) {
        debug_assert!(self.cq.is_none());
        self.cq = Some(op);
    }

    /// Drops what is in flight (a function-level reset of the block).
    pub fn reset(&mut self) {
        self.cq = None;
        self.rq_beats.clear();
        self.wr.clear();
        self.cpl_open = false;
        self.rc.clear();
    }

    /// Presents this cycle's inputs: the CQ request, the RC beat, RQ's and CC's ready.
    pub fn drive(&mut self, m: &mut Model, pcie: &Pcie, in_reset: bool) {
        let p = self.p;
        // CQ: one beat per access (descriptor and, for a write, its two Dwords from lane 16).
        match self.cq {
            Some(op) if !in_reset => {
                let (off, dw, ty, data) = match op {
                    BarOp::Write { addr, data } => (addr, 2, usp::REQ_MEM_WR, Some(data)),
                    BarOp::Read { addr } => (addr, 2, usp::REQ_MEM_RD, None),
                };
                let mut b = [0u8; DATA_BYTES];
                set_field(&mut b, usp::RQ_ADDR_LSB, 64, BAR0_ADDR + off as u64);
                set_field(&mut b, usp::RQ_DWORDS_LSB, 11, dw);
                set_field(&mut b, usp::RQ_TYPE_LSB, 4, ty as u64);
                set_field(&mut b, usp::RQ_REQ_ID_LSB, 16, 0x0100);
                set_field(&mut b, usp::RQ_TAG_LSB, 8, self.cq_tag as u64);
                set_field(&mut b, usp::CQ_BAR_APERTURE_LSB, 6, BAR0_APERTURE);
                if let Some(d) = data {
                    b[usp::RQ_DESC_BYTES..usp::RQ_DESC_BYTES + 8].copy_from_slice(&d.to_le_bytes());
                }
                m.set_bytes(p.cq_tdata, &b);
                m.set_wide(p.cq_tuser, &[0xF | 0xF << 8]);
                m.set(p.cq_tlast, 1);
                m.set(p.cq_tvalid, 1);
            }
            _ => m.set(p.cq_tvalid, 0),
        }
        m.set(p.cc_tready, 0xF);
        self.rq_shown = !in_reset && pcie.rq_ready() && self.wr.len() < WR_QUEUE;
        m.set(p.rq_tready, if self.rq_shown { 0xF } else { 0 });
        match self.rc.front() {
            Some((b, last)) if !in_reset => {
                m.set_bytes(p.rc_tdata, b);
                m.set(p.rc_tlast, *last as u64);
                m.set_wide(p.rc_tuser, &[0]);
                m.set(p.rc_tvalid, 1);
            }
            _ => m.set(p.rc_tvalid, 0),
        }
        self.wr_shown = !in_reset && pcie.wr_ready() && !self.wr.is_empty();
    }

    /// After the clock's low half: the handshakes. Returns a register read's value when CC delivers it.
    pub fn handshake(&mut self, m: &Model, now: u64, pcie: &mut Pcie, mem: &mut HostMem) -> Option<u64> {
        let p = self.p;
        if self.cq.is_some() && m.get(p.cq_tvalid) != 0 && m.get(p.cq_tready) != 0 {
            self.cq = None;
            self.cq_tag = self.cq_tag.wrapping_add(1);
        }
        let mut value = None;
        if m.get(p.cc_tvalid) != 0 {
            let mut b = [0u8; DATA_BYTES];
            m.get_bytes(p.cc_tdata, &mut b);
            let dwords = get_field(&b, usp::RC_DWORDS_LSB, 11);
            let status = get_field(&b, usp::RC_STATUS_LSB, 3);
            assert!(
                dwords == 2 && status == 0,
                "the BAR adapter answered a 64-bit register read with {dwords} Dwords, status {status} (cycle {now})"
            );
            let lo = usp::RC_DESC_BYTES;
            value = Some(u64::from_le_bytes(b[lo..lo + 8].try_into().expect("8 bytes")));
        }
        if self.rq_shown && m.get(p.rq_tvalid) != 0 {
            let mut b = [0u8; DATA_BYTES];
            m.get_bytes(p.rq_tdata, &mut b);
            let mut u = [0u32; 5];
            m.get_wide(p.rq_tuser, &mut u);
            self.rq_beats.push((b, m.get(p.rq_tkeep) as u16, u));
            if m.get(p.rq_tlast) != 0 {
                self.request(now, pcie, mem);
            }
        }
        if self.wr_shown {
            let w = self.wr.pop_front().expect("a write beat was shown");
            pcie.wr_beat(now, w.first, w.last, w.addr, w.len, &w.data, w.keep, mem);
        }
        if let Some(b) = pcie.rc() {
            self.completion(b);
        }
        if m.get(p.rc_tvalid) != 0 && m.get(p.rc_tready) != 0 {
            self.rc.pop_front();
        }
        value
    }

    /// A whole RQ packet: a read goes to the model, a write is cut into address-aligned beats.
    fn request(&mut self, now: u64, pcie: &mut Pcie, mem: &mut HostMem) {
        let beats = &self.rq_beats;
        let d = RqDesc::decode(&beats[0].0[..usp::RQ_DESC_BYTES]);
        let mut user = [0u8; 8];
        user[..4].copy_from_slice(&beats[0].2[0].to_le_bytes());
        user[4..].copy_from_slice(&beats[0].2[1].to_le_bytes());
        let fbe = get_field(&user, usp::RQ_USER_FIRST_BE_LSB, 4) as u8;
        let lbe = get_field(&user, usp::RQ_USER_LAST_BE_LSB, 4) as u8;
        assert!(fbe != 0, "RQ request with no first byte enabled at cycle {now}: {d:?}");
        let (addr, len) = usp::byte_range(d.addr, d.dwords, fbe, lbe);
        let dwords_in_packet: usize = beats.iter().map(|b| b.1.count_ones() as usize).sum();
        match d.req_type {
            usp::REQ_MEM_RD => {
                assert_eq!(dwords_in_packet, 4, "an RQ read of more than its descriptor (cycle {now})");
                pcie.rq(now, addr, len as u32, d.tag, mem);
            }
            usp::REQ_MEM_WR => {
                assert_eq!(
                    dwords_in_packet,
                    4 + d.dwords as usize,
                    "an RQ write whose tkeep is not its Dword count ({d:?}, cycle {now})"
                );
                // Byte i of the packet, across its beats.
                let byte = |i: usize| beats[i / DATA_BYTES].0[i % DATA_BYTES];
                let first_byte = usp::RQ_DESC_BYTES + (addr - d.addr) as usize;
                let (mut at, end) = (addr, addr + len);
                while at < end {
                    let lane = (at % DATA_BYTES as u64) as usize;
                    let n = ((DATA_BYTES - lane) as u64).min(end - at) as usize;
                    let mut data = [0u8; DATA_BYTES];
                    let from = first_byte + (at - addr) as usize;
                    for (k, x) in data[lane..lane + n].iter_mut().enumerate() {
                        *x = byte(from + k);
                    }
                    let keep = if n == DATA_BYTES { u64::MAX } else { ((1u64 << n) - 1) << lane };
                    let (first, last) = (at == addr, at + n as u64 == end);
                    self.wr.push_back(WrBeat { first, last, addr, len: len as u32, data, keep });
                    at += n as u64;
                }
            }
            t => panic!("RQ request type {t} at cycle {now}: the shell sends memory reads and writes only"),
        }
        self.rq_beats.clear();
    }

    /// One beat of the model's completions: gathered into its TLP, packed when the TLP ends.
    fn completion(&mut self, b: &RcBeat) {
        if b.tlp_first {
            assert!(!self.cpl_open, "completion TLPs of the model interleave");
            // The payload starts with the Dword that holds the first byte, after the descriptor.
            self.cpl_open = true;
            self.cpl_lower = b.addr;
            self.cpl.clear();
            self.cpl.resize(usp::RC_DESC_BYTES + (b.addr & 3) as usize, 0);
        }
        assert!(self.cpl_open, "a completion beat outside a TLP");
        let lane = (b.addr as usize) % DATA_BYTES;
        self.cpl.extend_from_slice(&b.data[lane..lane + b.bytes as usize]);
        if !b.tlp_last {
            return;
        }
        self.cpl_open = false;
        let lower = self.cpl_lower;
        let bytes = self.cpl.len() - usp::RC_DESC_BYTES - (lower & 3) as usize;
        let dwords = ((lower & 3) as usize + bytes).div_ceil(4);
        let s = &mut self.cpl;
        s.resize(usp::RC_DESC_BYTES + 4 * dwords, 0);
        set_field(s, usp::RC_LOWER_ADDR_LSB, 12, lower as u64);
        set_field(s, usp::RC_BYTE_COUNT_LSB, 13, bytes as u64);
        set_field(s, usp::RC_REQ_DONE_BIT, 1, b.done as u64);
        set_field(s, usp::RC_DWORDS_LSB, 11, dwords as u64);
        set_field(s, usp::RC_TAG_LSB, 8, b.tag as u64);
        let n = s.len().div_ceil(DATA_BYTES);
        for (i, chunk) in s.chunks(DATA_BYTES).enumerate() {
            // Lanes past the packet carry leftovers of the previous beat, as a bus does.
            let mut beat = self.rc.back().map(|x| x.0).unwrap_or([0x5A; DATA_BYTES]);
            beat[..chunk.len()].copy_from_slice(chunk);
            self.rc.push_back((beat, i + 1 == n));
        }
    }
}
