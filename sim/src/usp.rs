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
use rnic_spec::usp::{self, get_field, set_field, RqDesc};

use crate::mem::HostMem;
use crate::model::{Model, ModelError, PortId};
use crate::pcie::{Pcie, RcBeat};

/// Bus address of BAR0 in the simulated host.
pub const BAR0_ADDR: u64 = 0x38_0000_0000;
/// log2 of BAR0's size (4 MiB: the register map and the doorbells of 16K QPs).
pub const BAR0_APERTURE: u64 = 22;
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

/// The completion TLP being gathered from the model's beats.
struct CplAcc {
    tag: u8,
    lower: u16,
    done: bool,
    bytes: Vec<u8>,
}

/// The PCIe block between the shell and the root-complex model.
pub struct UspHost {
    p: UspPorts,
    /// The CQ request on offer (until the shell takes it).
    cq: Option<BarOp>,
    cq_tag: u8,
    rq_beats: Vec<([u8; DATA_BYTES], u16, [u32; 5])>,
    wr: VecDeque<WrBeat>,
    cpl: Option<CplAcc>,
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
            cpl: None,
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
        self.cpl = None;
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
        let beats = std::mem::take(&mut self.rq_beats);
        let d = RqDesc::decode(&beats[0].0[..usp::RQ_DESC_BYTES]);
        let user: Vec<u8> = beats[0].2.iter().flat_map(|w| w.to_le_bytes()).collect();
        let fbe = get_field(&user, usp::RQ_USER_FIRST_BE_LSB, 4) as u32;
        let lbe = get_field(&user, usp::RQ_USER_LAST_BE_LSB, 4) as u32;
        assert!(fbe != 0, "RQ request with no first byte enabled at cycle {now}: {d:?}");
        let skip = fbe.trailing_zeros() as u64;
        let drop = if d.dwords == 1 { 3 - (31 - fbe.leading_zeros()) } else { 3 - (31 - lbe.leading_zeros()) } as u64;
        let addr = d.addr + skip;
        let len = 4 * d.dwords as u64 - skip - drop;
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
                let stream: Vec<u8> = beats.iter().flat_map(|b| b.0).collect();
                let payload = &stream[usp::RQ_DESC_BYTES + skip as usize..usp::RQ_DESC_BYTES + (skip + len) as usize];
                let (mut at, end) = (addr, addr + len);
                let mut first = true;
                while at < end {
                    let lane = (at % DATA_BYTES as u64) as usize;
                    let n = ((DATA_BYTES - lane) as u64).min(end - at) as usize;
                    let mut data = [0u8; DATA_BYTES];
                    let from = (at - addr) as usize;
                    data[lane..lane + n].copy_from_slice(&payload[from..from + n]);
                    let keep = if n == DATA_BYTES { u64::MAX } else { ((1u64 << n) - 1) << lane };
                    self.wr.push_back(WrBeat { first, last: at + n as u64 == end, addr, len: len as u32, data, keep });
                    first = false;
                    at += n as u64;
                }
            }
            t => panic!("RQ request type {t} at cycle {now}: the shell sends memory reads and writes only"),
        }
    }

    /// One beat of the model's completions: gathered into its TLP, packed when the TLP ends.
    fn completion(&mut self, b: &RcBeat) {
        if b.tlp_first {
            assert!(self.cpl.is_none(), "completion TLPs of the model interleave");
            self.cpl = Some(CplAcc { tag: b.tag, lower: b.addr, done: false, bytes: Vec::new() });
        }
        let c = self.cpl.as_mut().expect("a completion beat inside a TLP");
        let lane = (b.addr as usize) % DATA_BYTES;
        c.bytes.extend_from_slice(&b.data[lane..lane + b.bytes as usize]);
        c.done = b.done;
        if !b.tlp_last {
            return;
        }
        let c = self.cpl.take().expect("the TLP");
        let skip = (c.lower & 3) as usize;
        let dwords = (skip + c.bytes.len()).div_ceil(4);
        let mut s = vec![0u8; usp::RC_DESC_BYTES + 4 * dwords];
        set_field(&mut s, usp::RC_LOWER_ADDR_LSB, 12, c.lower as u64);
        set_field(&mut s, usp::RC_BYTE_COUNT_LSB, 13, c.bytes.len() as u64);
        set_field(&mut s, usp::RC_REQ_DONE_BIT, 1, c.done as u64);
        set_field(&mut s, usp::RC_DWORDS_LSB, 11, dwords as u64);
        set_field(&mut s, usp::RC_TAG_LSB, 8, c.tag as u64);
        let at = usp::RC_DESC_BYTES + skip;
        s[at..at + c.bytes.len()].copy_from_slice(&c.bytes);
        let n = s.len().div_ceil(DATA_BYTES);
        for (i, chunk) in s.chunks(DATA_BYTES).enumerate() {
            // Lanes past the packet carry leftovers of the previous beat, as a bus does.
            let mut beat = self.rc.back().map(|x| x.0).unwrap_or([0x5A; DATA_BYTES]);
            beat[..chunk.len()].copy_from_slice(chunk);
            self.rc.push_back((beat, i + 1 == n));
        }
    }

    /// Completion beats the shell has yet to take, and decoded write beats the model has yet to take.
    pub fn queued(&self) -> (usize, usize) {
        (self.rc.len(), self.wr.len())
    }
}
