//! Device context, protection domains, the library's resource tables.

use crate::cq::CqInner;
use crate::qp::QpInner;
use crate::{Cq, Error, Result};
use rnic_driver::Device;
use rnic_spec::params;
use rnic_spec::regs::{self, NUM_STAGE};
use std::cell::{RefCell, RefMut};
use std::net::Ipv4Addr;
use std::rc::Rc;

/// A NIC's network identity: what it writes as source MAC/IP, and what a
/// peer QP uses as destination at RTR.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetAddr {
    /// Ethernet MAC address.
    pub mac: [u8; 6],
    /// IPv4 address.
    pub ip: Ipv4Addr,
}

impl NetAddr {
    /// The MAC as the 48-bit register value (first wire byte in bits 47:40).
    pub fn mac_u64(&self) -> u64 {
        self.mac.iter().fold(0u64, |a, &b| (a << 8) | b as u64)
    }
}

/// What the NIC reports about itself (`ibv_query_device`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceAttr {
    /// Version (low 32 bits of REG_ID).
    pub version: u32,
    /// Raw REG_CAPS.
    pub caps: u64,
    /// QPs the library may allocate.
    pub max_qp: usize,
    /// CQs the library may allocate.
    pub max_cq: usize,
    /// MR table entries.
    pub max_mr: usize,
}

/// Counter names, in register order from `regs::counters::TX_PKTS`.
pub(crate) const COUNTER_NAMES: [&str; regs::counters::COUNT] = [
    "tx_pkts",
    "tx_acks",
    "rx_frames",
    "rx_icrc_err",
    "rx_hdr_err",
    "rx_drop_nobuf",
    "rx_psn_err",
    "rx_access_err",
    "rx_dup",
    "rx_rnr",
    "rx_nak",
    "rx_acks",
    "cqes",
    "rx_inv_req",
    "reg_err",
];

/// The library's view of one NIC's tables.
pub(crate) struct CtxState {
    pub next_pd: u32,
    /// Last key tag handed out per MR index (rolls so stale keys miss).
    pub mr_tag: Vec<u8>,
    pub mr_used: Vec<bool>,
    pub cqs: Vec<Option<CqInner>>,
    pub qps: Vec<Option<QpInner>>,
}

pub(crate) struct CtxInner {
    pub dev: Rc<dyn Device>,
    pub addr: NetAddr,
    pub version: u32,
    pub caps: u64,
    pub st: RefCell<CtxState>,
}

/// An open NIC (`ibv_context`). Cheap to clone; all clones share the tables.
#[derive(Clone)]
pub struct Context {
    pub(crate) inner: Rc<CtxInner>,
}

/// Opens a NIC: checks REG_ID's magic and programs the source MAC and IP.
pub fn open_device(dev: Rc<dyn Device>, addr: NetAddr) -> Result<Context> {
    let id = dev.read_reg(regs::REG_ID)?;
    if id >> 32 != regs::ID_MAGIC {
        return Err(Error::BadDeviceId { device: dev.name(), id, magic: regs::ID_MAGIC });
    }
    let caps = dev.read_reg(regs::REG_CAPS)?;
    dev.write_reg(regs::REG_SRC_MAC, addr.mac_u64())?;
    dev.write_reg(regs::REG_SRC_IP, u32::from(addr.ip) as u64)?;
    // Tags start at a per-index value and skip 0, so no key is ever 0.
    let mr_tag = (0..params::NUM_MRS).map(|i| (i as u8).wrapping_mul(37) | 1).collect();
    Ok(Context {
        inner: Rc::new(CtxInner {
            dev,
            addr,
            version: id as u32,
            caps,
            st: RefCell::new(CtxState {
                next_pd: 1,
                mr_tag,
                mr_used: vec![false; params::NUM_MRS],
                cqs: (0..params::NUM_CQS).map(|_| None).collect(),
                qps: (0..params::NUM_QPS).map(|_| None).collect(),
            }),
        }),
    })
}

/// Opens every NIC of a list (e.g. all NICs of a cosimulated cluster).
pub fn open_devices(devs: impl IntoIterator<Item = (Rc<dyn Device>, NetAddr)>) -> Result<Vec<Context>> {
    devs.into_iter().map(|(d, a)| open_device(d, a)).collect()
}

impl Context {
    /// The device backend.
    pub fn device(&self) -> &Rc<dyn Device> {
        &self.inner.dev
    }

    /// This NIC's MAC and IP.
    pub fn addr(&self) -> NetAddr {
        self.inner.addr
    }

    /// Device attributes (`ibv_query_device`).
    pub fn query_device(&self) -> DeviceAttr {
        DeviceAttr {
            version: self.inner.version,
            caps: self.inner.caps,
            max_qp: params::NUM_QPS,
            max_cq: params::NUM_CQS,
            max_mr: params::NUM_MRS,
        }
    }

    /// The NIC's event counters, by name (`regs::counters`).
    pub fn counters(&self) -> Result<Vec<(&'static str, u64)>> {
        COUNTER_NAMES
            .iter()
            .enumerate()
            .map(|(i, &n)| Ok((n, self.inner.dev.read_reg(regs::counters::TX_PKTS + 8 * i as u32)?)))
            .collect()
    }

    /// The counters as one `name=value` line, zeros omitted (for messages).
    pub fn counters_line(&self) -> String {
        match self.counters() {
            Ok(c) => {
                let v: Vec<String> = c.iter().filter(|(_, v)| *v != 0).map(|(n, v)| format!("{n}={v}")).collect();
                if v.is_empty() {
                    "all counters 0".into()
                } else {
                    v.join(" ")
                }
            }
            Err(e) => format!("counters unreadable: {e}"),
        }
    }

    /// Allocates a protection domain (`ibv_alloc_pd`).
    pub fn alloc_pd(&self) -> Result<Pd> {
        let mut st = self.state();
        // The QPC/MR PD fields are 16 bits wide.
        if st.next_pd > 0xFFFF {
            return Err(Error::Exhausted { what: "PD", max: 0xFFFF });
        }
        let pdn = st.next_pd;
        st.next_pd += 1;
        Ok(Pd { ctx: self.clone(), pdn })
    }

    /// Creates a completion queue of at least `depth` entries (`ibv_create_cq`).
    pub fn create_cq(&self, depth: u32) -> Result<Cq> {
        Cq::create(self, depth)
    }

    pub(crate) fn state(&self) -> RefMut<'_, CtxState> {
        self.inner.st.borrow_mut()
    }

    pub(crate) fn dev(&self) -> &dyn Device {
        &*self.inner.dev
    }

    pub(crate) fn same(&self, other: &Context) -> bool {
        Rc::ptr_eq(&self.inner, &other.inner)
    }

    /// Writes the first `n` staging words, then `value` to the commit register.
    pub(crate) fn stage_commit(&self, words: &[u64; NUM_STAGE], n: usize, commit_reg: u32, value: u64) -> Result<()> {
        for (i, w) in words.iter().take(n).enumerate() {
            self.dev().write_reg(regs::stage(i), *w)?;
        }
        self.dev().write_reg(commit_reg, value)?;
        Ok(())
    }
}

/// A protection domain (`ibv_pd`): MRs and QPs of one PD may be used together.
#[derive(Clone)]
pub struct Pd {
    pub(crate) ctx: Context,
    pub(crate) pdn: u32,
}

impl Pd {
    /// The PD number written into QPC and MR entries.
    pub fn pdn(&self) -> u32 {
        self.pdn
    }

    /// The context this PD belongs to.
    pub fn context(&self) -> &Context {
        &self.ctx
    }
}
