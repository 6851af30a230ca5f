//! Structured fuzzer of the receive path.
//!
//! Two cosimulated NICs. On NIC1 a *victim* QP (its own PD, REMOTE_WRITE
//! and REMOTE_READ target MRs, a REMOTE_READ-only MR, posted receive
//! buffers) is connected to an idle peer QP on NIC0, and a *good* QP pair
//! (another PD) carries real WRITE and SEND transfers from NIC0 to NIC1
//! between the fuzzed frames (one WRITE in three gathered from two entries
//! of its source MR); every byte of those transfers is checked. A
//! third PD on NIC1 owns a REMOTE_WRITE/REMOTE_READ MR nobody may write.
//!
//! Each fuzzed frame starts as a valid frame the peer would send to the
//! victim (the next packet of a WRITE or SEND message, an ACK, or, drawn
//! from a separate generator so the other frames keep their seeds, now and
//! then an RDMA READ request between messages: a fresh one at ePSN, or the
//! last accepted one again), encoded
//! with `rnic_spec::wire::Frame`, then some fields are mutated with a seeded
//! generator (lengths, pad, PSN, PSN_OFFSET, SSN/MSN, VA, rkey, destination
//! QPN, opcode, payload length, truncation/extension, addresses, checksums,
//! random bytes). The ICRC is recomputed after the mutation, except for a
//! share of frames that keep a stale one. The frame is injected into NIC1's
//! RX MAC ([`rnic_sim::Cluster::inject_frame`]).
//!
//! A reference model of the *intended* responder judges each frame from its
//! bytes alone (whatever mutation produced it) and gives the set of allowed
//! outcomes: dropped for a bad ICRC, dropped for a bad header, duplicate,
//! PSN sequence NAK, remote access NAK, RNR NAK, invalid request NAK,
//! accepted, or (opcode ACK) processed as an ACK. Where the intended
//! behaviour is open (a non-default P_Key, bytes after the IPv4 packet, a
//! FIRST that already reaches its RETH length, a zero-length WRITE with a
//! bad key, the order of two checks that both fail), the set holds every
//! acceptable answer, and the NIC's answer (counters, ACK/NAK) tells which
//! one it took; an accepted packet's placement is always determined, so
//! every byte of every MR is known at all times. The rules follow the brief
//! of the receive-path work and `docs/hardware.md`. After an access or
//! invalid-request NAK the victim QP is reset and reconnected with a fresh
//! ePSN (IB lets the responder enter the error state there).
//!
//! RDMA READ: a READ response (0x0D..0x10) that passes the QPN/peer checks
//! is a duplicate (RX_DUP, nothing sent), as the victim never waits for
//! one. A READ request (0x0C) behind ePSN is a duplicate (RX_DUP only, no
//! ACK), answered again if it carries no payload and passes the MR check, else silently dropped;
//! ahead of ePSN it gets a PSN sequence NAK (never placed, the SR window
//! untouched); at ePSN it is invalid inside a message or with a payload,
//! then needs an MR of the victim's PD with REMOTE_READ holding
//! [VA, VA + length) (a zero-length READ is not checked) or gets an access
//! NAK; accepted, it writes nothing, moves ePSN by its max(1, ceil(length /
//! PMTU)) PSNs (the SR window as far, placed packets behind it sliding in),
//! MSN by one, is ACKed if AckReq asks, and counted by no counter. The READ
//! response packets the victim sends for an accepted or duplicate READ are
//! checked field by field (count, opcodes, PSNs, payload from the model's
//! memory, VA = local address + offset, rkey = lkey, length, SSN, PSN_OFFSET);
//! the idle peer drops them, and its RX_DUP must grow by exactly their number.
//!
//! After every frame the fuzzer checks:
//! 1. RX_FRAMES grew by exactly one, and the frame was either accepted or
//!    counted by exactly one of the RX counters (any counter added to
//!    `rnic_spec::regs::counters` after RX_* is picked up automatically);
//!    the outcome must be in the allowed set; the ACK/NAK the victim sent
//!    (captured on NIC1's egress link) must match it, its SACK fields too
//!    (OOO count, SACK base and bitmap segment, bytes received: `Victim::sack`);
//! 2. no DMA shadow violation;
//! 3. every MR of both NICs holds exactly what the model expects: bytes
//!    outside the window a valid packet of the victim could write never
//!    change, and bytes inside it hold what the accepted packets put there;
//! 4. the victim's receive completions are the expected ones;
//! 5. the READ response packets the victim sent are exactly the expected ones.
//!
//! Every `GOOD_EVERY` frames (and at the start and the end) the good pair
//! does a verified WRITE and SEND while a few frames the model says must be
//! dropped are injected between its packets (they share the RX ring), and
//! NIC1's counters must show exactly those packets and drops, nothing else.
//!
//! One `#[test]` per mutation class (one mutation per frame, 150 frames), one
//! for mutated ACK frames, and two mixed tests (up to three mutations per
//! frame, all classes, PMTU 1024 and 4096). The victim runs go-back-N there;
//! in `psn_sr`, `mixed_mtu1024_sr` and `mixed_mtu4096_sr` it runs selective
//! repeat, and the model predicts exactly which plain WRITE packets ahead of
//! ePSN (within `SR_WINDOW`, its edge included) are placed out of order (RX_OOO_PLACED, a PSN sequence NAK
//! flagged PLACED), which are duplicates of such, and how ePSN and MSN slide
//! over them once the packet at ePSN arrives (the ACK is then sent anyway);
//! the forged requester sometimes sends a later packet of a WRITE first.
//! In `psn_sw` and `mixed_mtu1024_sw` NIC1 lends no window, so the victim
//! recovers in software (its host's bitmap): the model predicts which
//! packets are placed (plain WRITEs and SENDs that do not end their message,
//! up to `SW_SR_SPAN` ahead), the NIC's run, the jump when ePSN reaches it,
//! and after each frame the host's commands (`Victim::host_commands`), each
//! of which must produce one CtrlQ answer and one ACK with the model's ePSN
//! and MSN; the forged requester there often sends consecutive packets
//! ahead, and half its messages are 4 to 12 packets long.
//!
//! Environment:
//! * `RNIC_FUZZ_FRAMES=N`: frames per selected test (soak);
//! * `RNIC_FUZZ_SEED=S`: base seed (each test derives its own from it);
//! * `RNIC_FUZZ_KEEP_GOING=1`: record failures, resynchronize, and report
//!   them all at the end instead of stopping at the first one;
//! * `RNIC_FUZZ_MEM_EVERY=K`: compare memory every K frames (default 1;
//!   comparing every MR costs far less than simulating the frame).
//!
//! Progress goes to stderr every 10 000 frames. Soak example:
//! `RNIC_FUZZ_FRAMES=100000 RNIC_FUZZ_SEED=7 cargo test --release -p rnic-tests --test fuzz -- --exact mixed_mtu1024 --nocapture`.
//!
//! A failure prints the seed, the frame index, the mutations, the decoded
//! fields and a hex dump of the frame, and the command that replays it.

use rnic::{
    AccessFlags, Cq, Mr, Mtu, Pd, Qp, QpAttr, QpInitAttr, QpState, RecvWr, SendWr, WcFlags, WcOpcode, WcStatus,
    WrOpcode,
};
use rnic_sim::{ip_of, mac_of, SimConfig};
use rnic_spec::params::{SR_WINDOW, SR_WINDOW_BITS, SW_SR_SPAN};

// The model holds a window in a u128.
const _: () = assert!(SR_WINDOW_BITS == 128);
use rnic_spec::regs::{self, counters};
use rnic_spec::wire::{self, off, opcode, Frame, HDR_LEN, ICRC_LEN};
use rnic_tests::Shared;
use rnic_tests::{pair_with, timeout_for, Nics};
use rnic_tools::bench::connect;
use rnic_tools::cosim::nic_addr;
use rnic_tools::pattern;
use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

/// The fuzzed NIC (responder of the victim QP) and the victim's real peer.
const NIC: usize = 1;
const PEER: usize = 0;
const PSN_MASK: u32 = 0xFF_FFFF;
/// Largest frame the MAC delivers (jumbo).
const MAX_FRAME: usize = rnic_sim::fabric::MAX_FRAME;
/// Default base seed.
const DEFAULT_SEED: u64 = 0xF022_5EED_0001;
/// Cycles after a frame's beats before the NIC is probed for quiescence:
/// the front end and the responder decide within them.
const SETTLE: u64 = 64;
/// The NIC is quiet once no DMA has been in flight for this many cycles (a
/// SEND's receive WQE fetch, CQE write and ACK all involve DMA or follow it).
const QUIET: u64 = 64;
/// Most cycles a frame may take before the counters are read anyway (a PCIe
/// round trip is 250 cycles by default).
const MAX_SETTLE: u64 = 3000;
/// Cycles after a host action (doorbell, QP modify) before the next frame.
const HOST_SETTLE: u64 = 300;
/// A good transfer every this many fuzzed frames.
const GOOD_EVERY: u64 = 50;
/// MTU of the good pair.
const GOOD_MTU: Mtu = Mtu::Mtu1024;
/// Percent of the frames between messages that are READ requests.
const READ_PCT: u32 = 10;
/// Most cycles to wait for the READ response packets the model expects
/// after the NIC went quiet (they leave at line rate after their DMA reads).
const READ_SETTLE: u64 = 4000;
/// Cycles after a READ request's answer (or none) for a packet too many to show up.
const READ_EXTRA: u64 = 400;

// ---------------------------------------------------------------- RNG

use rnic_sim::rng::SplitMix as Rng;

/// The fuzzer's own draws on top of the shared generator.
trait FuzzRng {
    fn nonzero8(&mut self) -> u8;
    fn unicast_mac(&mut self) -> [u8; 6];
}

impl FuzzRng for Rng {
    fn nonzero8(&mut self) -> u8 {
        self.range(1, 255) as u8
    }
    fn unicast_mac(&mut self) -> [u8; 6] {
        let mut m = [0u8; 6];
        for b in &mut m {
            *b = self.next() as u8;
        }
        m[0] &= 0xFE;
        m
    }
}

/// Picks one of the listed values; the list is built before the generator is
/// used again, so its items may draw from the generator themselves.
macro_rules! pick {
    ($r:expr, [$($x:expr),* $(,)?]) => {{
        let v = [$($x),*];
        let i = $r.below(v.len() as u64) as usize;
        v[i].clone()
    }};
}

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let t = v.trim().replace('_', "");
    let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => t.parse(),
    };
    Some(r.unwrap_or_else(|_| panic!("{name}={v}: not a number")))
}

fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
}

// ---------------------------------------------------------------- outcomes

/// What the NIC did with one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// Request accepted (placed, ePSN advanced), counted by no error counter.
    Accept,
    /// Dropped for a bad ICRC (RX_ICRC_ERR).
    Icrc,
    /// Dropped for a bad header, unknown QP, bad opcode... (RX_HDR_ERR, or a newer drop counter).
    Hdr,
    /// PSN sequence error (RX_PSN_ERR), NAK 0x60.
    Psn,
    /// Duplicate (RX_DUP), re-ACKed.
    Dup,
    /// Remote access error (RX_ACCESS_ERR), NAK 0x62.
    Access,
    /// No receive WQE (RX_RNR), RNR NAK.
    Rnr,
    /// Invalid request: NAK 0x61, counted (RX_HDR_ERR or an invalid-request counter).
    Inv,
    /// An ACK/NAK frame processed by the requester side (RX_ACKS).
    Ack,
    /// Selective repeat: a WRITE packet ahead of ePSN placed out of order
    /// (RX_PSN_ERR and RX_OOO_PLACED), NAK 0x60 with the PLACED flag.
    Placed,
    /// Selective repeat: a packet ahead of ePSN placed before (RX_DUP), NAK 0x60 with the PLACED flag.
    PlacedDup,
}

const OUTCOMES: [Outcome; 11] = [
    Outcome::Accept,
    Outcome::Icrc,
    Outcome::Hdr,
    Outcome::Psn,
    Outcome::Dup,
    Outcome::Access,
    Outcome::Rnr,
    Outcome::Inv,
    Outcome::Ack,
    Outcome::Placed,
    Outcome::PlacedDup,
];

/// A set of outcomes.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct Set(u16);

impl Set {
    fn of(v: &[Outcome]) -> Set {
        let mut s = Set(0);
        for &o in v {
            s.add(o);
        }
        s
    }
    fn add(&mut self, o: Outcome) {
        self.0 |= 1 << o as u16;
    }
    fn has(self, o: Outcome) -> bool {
        self.0 & (1 << o as u16) != 0
    }
    fn is_empty(self) -> bool {
        self.0 == 0
    }
    fn with(self, o: Set) -> Set {
        Set(self.0 | o.0)
    }
}

impl std::fmt::Debug for Set {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let v: Vec<String> = OUTCOMES.iter().filter(|&&o| self.has(o)).map(|o| format!("{o:?}")).collect();
        write!(f, "{{{}}}", v.join(", "))
    }
}

// ---------------------------------------------------------------- mutations

/// Mutation classes (one `#[test]` each, all of them in the mixed tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    /// IPv4 total length, UDP length, RETH DMA length.
    Lengths,
    /// BTH pad count.
    Pad,
    /// PSN around ePSN.
    Psn,
    /// PSN_OFFSET (including offsets whose offset x PMTU passes 2^32).
    PsnOffset,
    /// SSN of requests, MSN/syndrome of ACKs.
    SsnMsn,
    /// RETH VA around the MR bounds and near 2^64.
    Va,
    /// rkey: tag, the MR's lkey, index, other PD, no permission, stale.
    Rkey,
    /// Destination QPN: unused, >= 256.
    Dqpn,
    /// BTH opcode (valid ones out of sequence, unsupported, invalid).
    Opcode,
    /// Payload length (0, 1, PMTU-1, PMTU, PMTU+1, 58..60 mod 64, > 8192).
    PayloadLen,
    /// Frame truncated or extended.
    Resize,
    /// Destination MAC or IP of another host.
    DstAddr,
    /// Source MAC or IP other than the QP's peer.
    SrcAddr,
    /// IPv4 header checksum.
    IpChecksum,
    /// Random bytes flipped.
    FlipBytes,
    /// Other header fields (ethertype, IP version, protocol, port, fragment, P_Key, TVer...).
    HdrFields,
    /// A wrong ICRC.
    Icrc,
    /// An ACK's SACK fields (OOO count, bytes received, SACK base and bitmap, echoed entropy and ECN),
    /// random or at their extremes; a request frame gets an SSN mutation instead.
    Sack,
}

const ALL_CLASSES: [Class; 18] = [
    Class::Lengths,
    Class::Pad,
    Class::Psn,
    Class::PsnOffset,
    Class::SsnMsn,
    Class::Va,
    Class::Rkey,
    Class::Dqpn,
    Class::Opcode,
    Class::PayloadLen,
    Class::Resize,
    Class::DstAddr,
    Class::SrcAddr,
    Class::IpChecksum,
    Class::FlipBytes,
    Class::HdrFields,
    Class::Icrc,
    Class::Sack,
];

/// One concrete mutation (the strings describe it in failure reports, through `Debug`).
#[derive(Clone, Debug)]
#[allow(dead_code)]
enum Mut {
    // On the `Frame` before encoding.
    Psn(u32),
    PsnOffset(u32),
    Ssn(u32),
    Rsn(u32),
    Msn(u32),
    Syndrome(u8),
    /// An ACK's SACK field, by name, and its new value.
    Sack(&'static str, u64),
    Va(u64, &'static str),
    Rkey(u32, &'static str),
    RkeyVa(u32, u64, &'static str),
    Dqpn(u32, &'static str),
    /// New payload length, and whether the RETH length is made consistent with it.
    Payload(usize, bool),
    RethLen(u32),
    DstMac([u8; 6]),
    DstIp([u8; 4]),
    SrcMac([u8; 6]),
    SrcIp([u8; 4]),
    // On the encoded bytes.
    Opcode(u8),
    IpLen(u16),
    UdpLen(u16),
    Pad(u8),
    /// New frame length, and whether the IP/UDP lengths follow.
    Resize(usize, bool),
    IpCsumXor(u16),
    /// (offset, xor) pairs, and whether the IP checksum is recomputed afterwards.
    Flip(Vec<(usize, u8)>, bool),
    SetBytes(&'static str, usize, Vec<u8>),
    IcrcXor(u8),
    /// Leave the ICRC computed before the byte mutations.
    StaleIcrc,
}

impl Mut {
    fn on_frame(&self) -> bool {
        matches!(
            self,
            Mut::Psn(_)
                | Mut::PsnOffset(_)
                | Mut::Ssn(_)
                | Mut::Rsn(_)
                | Mut::Msn(_)
                | Mut::Syndrome(_)
                | Mut::Sack(..)
                | Mut::Va(..)
                | Mut::Rkey(..)
                | Mut::RkeyVa(..)
                | Mut::Dqpn(..)
                | Mut::Payload(..)
                | Mut::RethLen(_)
                | Mut::DstMac(_)
                | Mut::DstIp(_)
                | Mut::SrcMac(_)
                | Mut::SrcIp(_)
        )
    }

    fn apply_frame(&self, fr: &mut Frame, mtu: u32, seed: u64) {
        match *self {
            Mut::Psn(p) => fr.psn = p,
            Mut::PsnOffset(o) => fr.psn_offset = o,
            Mut::Ssn(s) => fr.ssn = s,
            Mut::Rsn(n) => fr.rsn = n,
            Mut::Msn(m) => fr.msn = m,
            Mut::Syndrome(s) => fr.syndrome = s,
            Mut::Sack(field, v) => match field {
                "ooo" => fr.ooo = v as u32,
                "bytes_rx" => fr.bytes_rx = v as u32,
                "sack_base" => fr.sack_base = v as u32,
                "sack_bitmap" => fr.sack_bitmap = v,
                "echo_entropy" => fr.echo_entropy = v as u16,
                _ => fr.echo_ecn = v as u8,
            },
            Mut::Va(va, _) => fr.va = va,
            Mut::Rkey(k, _) => fr.rkey = k,
            Mut::RkeyVa(k, va, _) => {
                fr.rkey = k;
                fr.va = va;
            }
            Mut::Dqpn(q, _) => fr.dqpn = q,
            Mut::Payload(n, fix) => {
                fr.payload = pattern::make(seed, pattern::stream(11, n as u64), n);
                if fix {
                    match fr.opcode {
                        opcode::WRITE_ONLY | opcode::SEND_ONLY => fr.msg_len = n as u32,
                        opcode::WRITE_LAST | opcode::SEND_LAST => {
                            fr.msg_len = fr.psn_offset.wrapping_mul(mtu).wrapping_add(n as u32)
                        }
                        _ => {}
                    }
                }
            }
            Mut::RethLen(l) => fr.msg_len = l,
            Mut::DstMac(m) => fr.dst_mac = m,
            Mut::DstIp(ip) => fr.dst_ip = u32::from_be_bytes(ip),
            Mut::SrcMac(m) => fr.src_mac = m,
            Mut::SrcIp(ip) => fr.src_ip = u32::from_be_bytes(ip),
            _ => unreachable!(),
        }
    }

    fn apply_bytes(&self, b: &mut Vec<u8>, rng_fill: u64) {
        match self {
            Mut::Opcode(o) => set(b, off::BTH, &[*o]),
            Mut::IpLen(v) => set(b, off::IP_LEN, &v.to_be_bytes()),
            Mut::UdpLen(v) => set(b, off::UDP_LEN, &v.to_be_bytes()),
            Mut::Pad(p) => {
                if let Some(x) = b.get_mut(off::BTH_FLAGS) {
                    *x = (*x & !0x30) | (p << 4);
                }
            }
            Mut::Resize(n, fix) => {
                let old = b.len();
                if *n < old {
                    b.truncate(*n);
                } else {
                    let fill = pattern::make(rng_fill, 3, n - old);
                    b.extend_from_slice(&fill);
                }
                if *fix && b.len() >= off::UDP_LEN + 2 {
                    let ip = (b.len() - off::IP) as u16;
                    set(b, off::IP_LEN, &ip.to_be_bytes());
                    set(b, off::UDP_LEN, &(ip.wrapping_sub(20)).to_be_bytes());
                }
            }
            Mut::IpCsumXor(x) => {
                if b.len() >= off::IP_CSUM + 2 {
                    b[off::IP_CSUM] ^= (x >> 8) as u8;
                    b[off::IP_CSUM + 1] ^= *x as u8;
                }
            }
            Mut::Flip(v, _) => {
                for &(o, x) in v {
                    if let Some(c) = b.get_mut(o) {
                        *c ^= x;
                    }
                }
            }
            Mut::SetBytes(_, o, v) => set(b, *o, v),
            Mut::IcrcXor(_) | Mut::StaleIcrc => {}
            _ => unreachable!(),
        }
    }
}

fn set(b: &mut [u8], o: usize, v: &[u8]) {
    for (i, &x) in v.iter().enumerate() {
        if let Some(c) = b.get_mut(o + i) {
            *c = x;
        }
    }
}

// ---------------------------------------------------------------- frame facts

/// What the reference model reads from a frame's bytes.
#[derive(Clone, Debug, Default)]
struct Facts {
    len: usize,
    /// IPv4 total length + 14: where the IPv4 packet ends.
    ip_end: usize,
    /// Shorter than header + ICRC, IP total length disagrees, or not a multiple of 4.
    len_bad: bool,
    not_roce: bool,
    icrc_bad: bool,
    ipcsum_bad: bool,
    dst_bad: bool,
    /// An IPv4 fragment (MF set or a fragment offset).
    frag: bool,
    /// UDP length is not the IPv4 length - 20.
    udp_len_bad: bool,
    /// Header oddities the NIC may drop (RX_HDR_ERR) or ignore.
    odd: Vec<&'static str>,
    src_ip_bad: bool,
    src_mac_bad: bool,
    opcode: u8,
    pad: usize,
    dqpn: u32,
    psn: u32,
    ack_req: bool,
    va: u64,
    rkey: u32,
    msg_len: u32,
    ssn: u32,
    psn_offset: u32,
    syndrome: u8,
    msn: u32,
    /// Immediate data field.
    imm: u32,
    /// READ request: the requester's local address and lkey.
    laddr: u64,
    lkey: u32,
    /// RSN: the receive WQE a SEND or WRITE with immediate consumes (low 16 bits used).
    rsn: u32,
    /// Payload bytes (frame - header - ICRC - pad); negative if pad is larger than what is there.
    plen: i64,
}

fn facts(f: &[u8]) -> Facts {
    let g = |o: usize, n: usize| -> u64 { (0..n).fold(0u64, |a, i| a << 8 | *f.get(o + i).unwrap_or(&0) as u64) };
    let len = f.len();
    let short = len < HDR_LEN + ICRC_LEN;
    let ip_total = g(off::IP_LEN, 2) as usize;
    let mut odd = Vec::new();
    if g(off::UDP_CSUM, 2) != 0 {
        odd.push("non-zero UDP checksum");
    }
    if g(off::BTH_PKEY, 2) != 0xFFFF {
        odd.push("P_Key is not the default 0xFFFF");
    }
    if g(off::BTH_FLAGS, 1) & 0x0F != 0 {
        odd.push("BTH TVer is not 0");
    }
    let pad = ((g(off::BTH_FLAGS, 1) >> 4) & 3) as usize;
    Facts {
        len,
        ip_end: ip_total + off::IP,
        len_bad: short || ip_total + off::IP != len || !len.is_multiple_of(4),
        not_roce: g(off::ETH_TYPE, 2) != wire::ETHERTYPE_IPV4 as u64
            || g(off::IP, 1) != 0x45
            || g(off::IP_PROTO, 1) != 17
            || g(off::UDP_DPORT, 2) != wire::ROCE_UDP_PORT as u64,
        icrc_bad: !short && u32::from_le_bytes(f[len - 4..].try_into().unwrap()) != wire::icrc(f),
        ipcsum_bad: len < off::IP + 20 || g(off::IP_CSUM, 2) as u16 != wire::ipv4_checksum(&f[off::IP..off::IP + 20]),
        dst_bad: f.get(0..6) != Some(&mac_of(NIC)[..]) || g(off::IP_DST, 4) as u32 != u32::from_be_bytes(ip_of(NIC)),
        frag: g(off::IP + 6, 2) & 0x3FFF != 0,
        udp_len_bad: g(off::UDP_LEN, 2) as usize != ip_total.wrapping_sub(20),
        odd,
        src_ip_bad: g(off::IP_SRC, 4) as u32 != u32::from_be_bytes(ip_of(PEER)),
        src_mac_bad: f.get(6..12) != Some(&mac_of(PEER)[..]),
        opcode: g(off::BTH, 1) as u8,
        pad,
        dqpn: g(off::BTH_DQPN, 3) as u32,
        psn: g(off::BTH_PSN, 3) as u32,
        ack_req: g(off::BTH_ACKREQ, 1) & 0x80 != 0,
        va: g(off::RETH_VA, 8),
        rkey: g(off::RETH_RKEY, 4) as u32,
        msg_len: g(off::RETH_LEN, 4) as u32,
        ssn: g(off::RXT_SSN, 4) as u32,
        psn_offset: g(off::RXT_PSN_OFFSET, 4) as u32,
        syndrome: g(off::AETH_SYNDROME, 1) as u8,
        msn: g(off::AETH_MSN, 3) as u32,
        imm: g(off::RXT_IMM, 4) as u32,
        laddr: g(off::RXT_LADDR, 8),
        lkey: g(off::RXT_LKEY, 4) as u32,
        rsn: g(off::RXT_RSN, 4) as u32,
        plen: len as i64 - (HDR_LEN + ICRC_LEN) as i64 - pad as i64,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Send,
    Write,
    /// An RDMA READ request (never part of a multi-packet message).
    Read,
}

/// A READ response opcode (0x0D..0x10).
fn is_read_response(op: u8) -> bool {
    wire::Opcode::from(op).is_read_response()
}

/// (kind, first, last, with immediate) of a request opcode the NIC implements.
fn classify(op: u8) -> Option<(Kind, bool, bool, bool)> {
    Some(match op {
        opcode::SEND_FIRST => (Kind::Send, true, false, false),
        opcode::SEND_MIDDLE => (Kind::Send, false, false, false),
        opcode::SEND_LAST => (Kind::Send, false, true, false),
        opcode::SEND_ONLY => (Kind::Send, true, true, false),
        opcode::SEND_LAST_IMM => (Kind::Send, false, true, true),
        opcode::SEND_ONLY_IMM => (Kind::Send, true, true, true),
        opcode::WRITE_FIRST => (Kind::Write, true, false, false),
        opcode::WRITE_MIDDLE => (Kind::Write, false, false, false),
        opcode::WRITE_LAST => (Kind::Write, false, true, false),
        opcode::WRITE_ONLY => (Kind::Write, true, true, false),
        opcode::WRITE_LAST_IMM => (Kind::Write, false, true, true),
        opcode::WRITE_ONLY_IMM => (Kind::Write, true, true, true),
        _ => return None,
    })
}

fn op_name(op: u8) -> String {
    match op {
        opcode::SEND_FIRST => "SEND_FIRST".into(),
        opcode::SEND_MIDDLE => "SEND_MIDDLE".into(),
        opcode::SEND_LAST => "SEND_LAST".into(),
        opcode::SEND_ONLY => "SEND_ONLY".into(),
        opcode::WRITE_FIRST => "WRITE_FIRST".into(),
        opcode::WRITE_MIDDLE => "WRITE_MIDDLE".into(),
        opcode::WRITE_LAST => "WRITE_LAST".into(),
        opcode::WRITE_ONLY => "WRITE_ONLY".into(),
        opcode::SEND_LAST_IMM => "SEND_LAST_IMM".into(),
        opcode::SEND_ONLY_IMM => "SEND_ONLY_IMM".into(),
        opcode::WRITE_LAST_IMM => "WRITE_LAST_IMM".into(),
        opcode::WRITE_ONLY_IMM => "WRITE_ONLY_IMM".into(),
        opcode::ACK => "ACK".into(),
        opcode::READ_REQUEST => "READ_REQUEST".into(),
        opcode::READ_RESPONSE_FIRST => "READ_RESPONSE_FIRST".into(),
        opcode::READ_RESPONSE_MIDDLE => "READ_RESPONSE_MIDDLE".into(),
        opcode::READ_RESPONSE_LAST => "READ_RESPONSE_LAST".into(),
        opcode::READ_RESPONSE_ONLY => "READ_RESPONSE_ONLY".into(),
        o => format!("opcode {o:#04x}"),
    }
}

// ---------------------------------------------------------------- model

/// Where an accepted packet's payload goes.
#[derive(Clone, Copy, Debug)]
enum Place {
    None,
    /// Exactly at `off` of region `region`.
    Exact {
        region: usize,
        off: usize,
    },
}

/// Effect of a frame if the NIC accepts it.
#[derive(Clone, Copy, Debug)]
struct Accepted {
    /// Payload bytes (from the frame's start at HDR_LEN).
    plen: usize,
    kind: Kind,
    first: bool,
    last: bool,
    place: Place,
    msg_len: u32,
    /// Byte length of the receive completion (SEND last), if determined.
    cqe_len: Option<u32>,
    /// Immediate data of a last packet with immediate.
    imm: Option<u32>,
    /// PSNs the packet uses (1; a READ: its response's packet count).
    psns: u32,
}

/// One READ response packet the victim must send.
#[derive(Clone, Debug)]
struct ReadRsp {
    opcode: u8,
    psn: u32,
    /// RETH VA: the requester's local address of this packet.
    va: u64,
    /// RETH rkey: the requester's lkey.
    rkey: u32,
    /// RETH length: the READ's length.
    msg_len: u32,
    /// The requester's SSN of the READ (24 bit).
    ssn: u32,
    psn_offset: u32,
    payload: Vec<u8>,
}

/// What a READ request asks of the victim.
#[derive(Clone, Debug)]
struct ReadExp {
    /// PSNs it uses.
    psns: u32,
    /// The response packets if it passes the MR check (outcome Accept, or a
    /// duplicate answered again); None if it fails it (a duplicate is then
    /// dropped without an answer).
    answer: Option<Vec<ReadRsp>>,
}

/// The model's verdict on a frame.
#[derive(Clone, Debug, Default)]
struct Judgement {
    allowed: Set,
    why: Vec<String>,
    accept: Option<Accepted>,
    /// Effect if placed out of order (outcome `Placed`): its window bit and the placement.
    placed: Option<(u32, Accepted)>,
    /// A READ request: what it asks (its answer if outcome Accept or Dup).
    read: Option<ReadExp>,
}

impl Judgement {
    /// The READ response packets the victim must send for outcome `o`.
    fn read_answer(&self, o: Outcome) -> &[ReadRsp] {
        match (&self.read, o) {
            (Some(ReadExp { answer: Some(a), .. }), Outcome::Accept | Outcome::Dup) => a,
            _ => &[],
        }
    }
}

/// A message the responder is in the middle of.
#[derive(Clone, Copy, Debug)]
struct Cur {
    kind: Kind,
    /// Packets accepted so far (the next packet's index).
    pkts: u32,
    /// RETH length of its first packet.
    len: u32,
}

/// A posted receive WQE.
#[derive(Clone, Copy, Debug)]
struct Rwqe {
    wr_id: u64,
    slot: usize,
    off: usize,
    len: u32,
}

/// The victim's responder state as the model sees it.
#[derive(Clone, Debug, Default)]
struct Victim {
    epsn: u32,
    msn: u32,
    cur: Option<Cur>,
    rq: VecDeque<Rwqe>,
    /// Selective repeat window: bit i = PSN ePSN + i placed out of order.
    sr_rcv: u128,
    /// Bit i = the packet placed at ePSN + i was the last of its message.
    sr_last: u128,
    /// No out-of-order placement until ePSN moves (after an error NAK).
    sr_hold: bool,
    /// What each packet placed out of order left for the slide, by PSN.
    sr_rec: BTreeMap<u32, Accepted>,
    /// Receive WQEs consumed since the QP's reset (16 bits, the RQ index of `rq`'s head).
    rq_ci: u16,
    /// Software recovery (no window): the QP is in it, its run of placed
    /// PSNs `[sw_left, sw_right]`, the messages the run ends, the position in
    /// a message after `sw_right` (packets, kind).
    sw_on: bool,
    sw_left: u32,
    sw_right: u32,
    sw_ends: u32,
    sw_rpk: u32,
    sw_rkind: Option<Kind>,
    /// The host's bitmap: packets placed in software recovery at or ahead
    /// of ePSN, with their PSN_OFFSET.
    sw_map: BTreeMap<u32, (Accepted, u32)>,
    /// SACK: payload bytes placed for the first time (mod 2^32), and the
    /// packets the window holds past ePSN as the NIC counts them (one more
    /// per packet placed out of order, one less per packet slid over, 0 when
    /// the window empties: a READ over placed packets, from a peer breaking
    /// the PSN order, leaves them counted until then).
    bytes_rx: u32,
    ooo_n: u32,
}

/// What an accepted packet and those sliding in behind it did.
#[derive(Default)]
struct Slide {
    /// Packets placed out of order before that slid in.
    slid: u32,
    /// Messages ended (MSN moves as far).
    ended: u32,
    /// Receive WQEs consumed, in order, with the completion each gets (byte length, opcode, immediate).
    consumed: Vec<(Rwqe, Option<u32>, WcOpcode, Option<u32>)>,
}

impl Victim {
    /// Software recovery: ePSN is `sw_left`; it moves past the run, MSN by
    /// the messages the run ends, and the QP leaves recovery. Returns the
    /// packets passed.
    fn jump(&mut self) -> u32 {
        let n = self.sw_right.wrapping_sub(self.sw_left).wrapping_add(1) & PSN_MASK;
        self.epsn = (self.sw_right + 1) & PSN_MASK;
        self.msn = (self.msn + self.sw_ends) & PSN_MASK;
        self.cur =
            self.sw_rkind.filter(|_| self.sw_rpk != 0).map(|kind| Cur { kind, pkts: self.sw_rpk, len: u32::MAX });
        self.sw_on = false;
        self.sw_map.clear();
        n
    }

    /// The host's commands while the QP is in software recovery: from ePSN
    /// over the placed packets of its bitmap, up to the first hole or the
    /// run's start; at the run's start the jump. Returns ePSN and MSN after
    /// each command (each is acknowledged).
    fn host_commands(&mut self) -> Vec<(u32, u32)> {
        let mut acks = Vec::new();
        while self.sw_on {
            let mut to = self.epsn;
            while self.sw_map.contains_key(&to) {
                to = (to + 1) & PSN_MASK;
            }
            let dl = self.sw_left.wrapping_sub(self.epsn) & PSN_MASK;
            if dl != 0 && dl < 1 << 23 && dl < to.wrapping_sub(self.epsn) & PSN_MASK {
                to = self.sw_left;
            }
            if to == self.epsn {
                break;
            }
            let mut p = self.epsn;
            let mut last = None;
            while p != to {
                let r = self.sw_map[&p];
                if r.0.last {
                    self.msn = (self.msn + 1) & PSN_MASK;
                }
                last = Some(r);
                p = (p + 1) & PSN_MASK;
            }
            let (a, off) = last.expect("at least one packet");
            self.epsn = to;
            self.cur = (!a.last).then_some(Cur { kind: a.kind, pkts: off + 1, len: u32::MAX });
            self.sr_hold = false;
            if to == self.sw_left {
                self.jump();
            }
            let epsn = self.epsn;
            self.sw_map.retain(|&p, _| p.wrapping_sub(epsn) & PSN_MASK < 1 << 23);
            acks.push((self.epsn, self.msn));
        }
        acks
    }

    /// Takes the receive WQE at the head of the RQ.
    fn consume(&mut self) -> Rwqe {
        self.rq_ci = self.rq_ci.wrapping_add(1);
        self.rq.pop_front().expect("a message that consumes a receive WQE has one posted")
    }

    /// Packet `a` ends its message: MSN moves, and a SEND or a WRITE with
    /// immediate consumes the receive WQE at the head for its completion.
    fn end_message(&mut self, a: &Accepted, out: &mut Slide) {
        self.msn = (self.msn + 1) & PSN_MASK;
        out.ended += 1;
        if a.kind == Kind::Send {
            let w = self.consume();
            out.consumed.push((w, a.cqe_len, WcOpcode::Recv, a.imm));
        } else if a.imm.is_some() {
            let w = self.consume();
            out.consumed.push((w, Some(a.msg_len), WcOpcode::RecvRdmaWithImm, a.imm));
        }
    }

    /// An accepted packet: ePSN moves past it (a READ: its PSNs), its
    /// message goes on or ends; then the window moves as far and the
    /// packets placed right behind it slide in, one message end at a time:
    /// one that ends a SEND or a WRITE with immediate consumes the receive
    /// WQE at the head, and with none posted (a forged RSN) the slide stops
    /// there. A message started in the slide has no RETH length on record
    /// (the lenient length checks apply to it).
    fn accept(&mut self, a: &Accepted) -> Slide {
        let mut out = Slide::default();
        self.epsn = (self.epsn + a.psns) & PSN_MASK;
        if a.first {
            self.cur = Some(Cur { kind: a.kind, pkts: 1, len: a.msg_len });
        } else if let Some(c) = &mut self.cur {
            c.pkts += 1;
        }
        if a.last {
            self.cur = None;
            self.end_message(a, &mut out);
        }
        self.sr_hold = false;
        if self.sw_on && self.epsn == self.sw_left {
            // Software recovery: ePSN reached the NIC's run, which it jumps past.
            out.slid += self.jump();
        } else if self.sw_on && self.epsn.wrapping_sub(self.sw_left) & PSN_MASK < 1 << 23 {
            // Past the run's start (a READ over placed PSNs): recovery ends, no jump.
            self.sw_on = false;
            self.sw_map.clear();
        }
        let epsn = self.epsn;
        self.sw_map.retain(|&p, _| p.wrapping_sub(epsn) & PSN_MASK < 1 << 23);
        self.bytes_rx = self.bytes_rx.wrapping_add(a.plen as u32);
        self.sr_rcv = self.sr_rcv.checked_shr(a.psns).unwrap_or(0);
        self.sr_last = self.sr_last.checked_shr(a.psns).unwrap_or(0);
        if self.sr_rcv == 0 {
            self.ooo_n = 0;
        }
        let epsn = self.epsn;
        self.sr_rec.retain(|&p, _| p.wrapping_sub(epsn) & PSN_MASK < 1 << 23);
        while self.sr_rcv & 1 != 0 {
            let r = *self.sr_rec.get(&self.epsn).expect("a packet placed out of order has its record");
            let cmp = r.last && (r.kind == Kind::Send || r.imm.is_some());
            if cmp && self.rq.is_empty() {
                break;
            }
            self.sr_rec.remove(&self.epsn);
            self.epsn = (self.epsn + 1) & PSN_MASK;
            let pkts = self.cur.map_or(1, |c| c.pkts + 1);
            let len = self.cur.map_or(u32::MAX, |c| c.len);
            self.cur = if r.last { None } else { Some(Cur { kind: r.kind, pkts, len }) };
            if r.last {
                self.end_message(&r, &mut out);
            }
            self.sr_rcv >>= 1;
            self.sr_last >>= 1;
            self.ooo_n = if self.sr_rcv == 0 { 0 } else { self.ooo_n - 1 };
            out.slid += 1;
        }
        out
    }

    /// The SACK fields the NIC's ACK or NAK of request PSN `psn` must carry
    /// in this state: OOO count, SACK base, bitmap segment, bytes received.
    fn sack(&self, psn: u32) -> (u32, u32, u64, u32) {
        let ooo =
            if self.sw_on { self.sw_right.wrapping_sub(self.sw_left).wrapping_add(1) & PSN_MASK } else { self.ooo_n };
        let rel = psn.wrapping_sub(self.epsn) & PSN_MASK;
        let seg = if (64..1 << 23).contains(&rel) { 64 } else { 0 };
        ((ooo), (self.epsn + seg) & PSN_MASK, (self.sr_rcv >> seg) as u64, self.bytes_rx)
    }
}

/// One entry of NIC1's MR table (what the model checks rkeys against).
#[derive(Clone, Copy, Debug)]
struct MrInfo {
    key: u32,
    pd: u32,
    access: AccessFlags,
    va: u64,
    len: u64,
    region: usize,
}

// ---------------------------------------------------------------- memory

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Window {
    /// Nothing may write it (or only the good pair's verified transfers).
    None,
    /// The victim may write any byte (its REMOTE_WRITE MR).
    Whole,
    /// The victim may write its posted receive buffers.
    Posted,
}

/// One MR and the bytes it must hold.
struct Region {
    name: &'static str,
    nic: usize,
    mr: Mr,
    expect: Vec<u8>,
    window: Window,
}

impl Region {
    fn put(&mut self, off: usize, data: &[u8]) {
        self.expect[off..off + data.len()].copy_from_slice(data);
    }
    /// Host write of fresh bytes.
    fn fill(&mut self, off: usize, data: &[u8]) {
        self.mr.write(off as u64, data).unwrap();
        self.put(off, data);
    }
    fn read(&self) -> Vec<u8> {
        let mut v = vec![0u8; self.mr.len()];
        self.mr.read(0, &mut v).unwrap();
        v
    }
}

// ---------------------------------------------------------------- configuration

#[derive(Clone)]
struct Cfg {
    name: &'static str,
    classes: Vec<Class>,
    /// Up to this many mutations per mutated frame.
    max_muts: u64,
    /// Percent of frames mutated.
    mutate_pct: u32,
    /// Percent of frames built from an ACK instead of a request.
    ack_pct: u32,
    /// Percent of mutated frames that keep a stale ICRC.
    stale_icrc_pct: u32,
    /// Percent of new messages that are SENDs.
    send_pct: u32,
    /// Percent of frames outside a message built from a READ request (drawn
    /// from a generator of their own; inside a message: 1 %).
    read_pct: u32,
    /// Percent of frames that abandon the message in progress and start a new one.
    restart_pct: u32,
    victim_mtu: Mtu,
    /// The victim's responder runs selective repeat (else go-back-N).
    victim_sr: bool,
    /// NIC1 lends no selective-repeat window: the victim recovers through
    /// software recovery (its host's bitmap), which the model predicts too.
    victim_sw: bool,
    frames: u64,
    /// Avoid last-packet lengths of 58..=60 mod 64 in the generated messages
    /// and the good transfers (they hit a known ring accounting defect that
    /// stalls the NIC; the payload-length class and the mixed tests still
    /// produce them).
    avoid_ring_residue: bool,
}

impl Cfg {
    fn class(name: &'static str, c: Class, frames: u64) -> Cfg {
        let send_pct = match c {
            Class::PsnOffset => 75,
            Class::Va | Class::Rkey => 10,
            _ => 40,
        };
        Cfg {
            name,
            classes: vec![c],
            max_muts: 1,
            mutate_pct: 75,
            ack_pct: 0,
            stale_icrc_pct: 0,
            send_pct,
            read_pct: READ_PCT,
            restart_pct: if c == Class::Opcode { 3 } else { 0 },
            victim_mtu: Mtu::Mtu1024,
            victim_sr: false,
            victim_sw: false,
            frames,
            avoid_ring_residue: c != Class::PayloadLen,
        }
    }
}

// ---------------------------------------------------------------- counters

/// NIC1's RX counters read after each frame.
struct Counters {
    /// (name, register offset); index 0 is RX_FRAMES.
    regs: Vec<(String, u32)>,
    last: Vec<u64>,
}

impl Counters {
    /// Names come from the library (`Context::counters`), so counters the
    /// contract adds are read and named too.
    fn new(ctx: &rnic::Context) -> Counters {
        let all = ctx.counters().unwrap_or_else(|e| panic!("reading the counters: {e}"));
        // Early-settling counters first, those that may move after a receive
        // WQE fetch last, then every counter the contract added after CQES
        // except the register-write one.
        let mut offs = vec![
            counters::RX_FRAMES,
            counters::RX_ICRC_ERR,
            counters::RX_DROP_NOBUF,
            counters::RX_DUP,
            counters::RX_PSN_ERR,
            counters::RX_ACKS,
            counters::RX_NAK,
            counters::RX_RNR,
            counters::RX_HDR_ERR,
            counters::RX_ACCESS_ERR,
        ];
        let skip = [counters::TX_PKTS, counters::TX_ACKS, counters::CQES];
        for (i, (n, _)) in all.iter().enumerate() {
            let o = counters::TX_PKTS + 8 * i as u32;
            if !offs.contains(&o) && !skip.contains(&o) && *n != "reg_err" {
                offs.push(o);
            }
        }
        let name = |o: u32| {
            all.get(((o - counters::TX_PKTS) / 8) as usize).map_or(format!("counter@{o:#x}"), |(n, _)| n.to_uppercase())
        };
        Counters { regs: offs.iter().map(|&o| (name(o), o)).collect(), last: vec![0; offs.len()] }
    }
}

// ---------------------------------------------------------------- the fuzzer

/// The message the forged requester is sending.
#[derive(Clone, Debug)]
struct Plan {
    kind: Kind,
    len: u32,
    pkts: u32,
    next: u32,
    va0: u64,
    ssn: u32,
    id: u64,
    retries: u32,
}

/// Per-frame record for failure reports.
struct FrameCtx {
    idx: u64,
    bytes: Vec<u8>,
    muts: Vec<Mut>,
    classes: Vec<Class>,
    base: String,
    facts: Facts,
    judgement: Judgement,
    victim_before: Victim,
}

struct Stats {
    frames: u64,
    by_outcome: [u64; OUTCOMES.len()],
    by_class: Vec<(Class, u64, [u64; OUTCOMES.len()])>,
    resets: u64,
    /// Packets placed out of order that slid in behind an accepted one.
    slid: u64,
    /// READ base frames: fresh ones, and the last accepted READ sent again.
    read_base: u64,
    read_resent: u64,
    /// Frames with the READ request opcode, by outcome.
    read_req: [u64; OUTCOMES.len()],
    /// Frames with a READ response opcode, by outcome.
    read_rsp_in: [u64; OUTCOMES.len()],
    /// Duplicate READs answered again.
    read_dup_answered: u64,
    /// SEND packets placed out of order.
    send_placed: u64,
    /// Packets placed through software recovery, and the host's commands applied.
    sw_placed: u64,
    sw_commands: u64,
    /// Receive completions written by a slide (a SEND or a WRITE with immediate placed out of order).
    slid_cqes: u64,
    /// Packets slid in behind an accepted READ.
    read_slid: u64,
    /// READ response packets the victim sent (each verified).
    read_rsp_out: u64,
    good_rounds: u64,
    /// Good rounds whose WRITE gathered from two entries.
    good_gathered: u64,
    good_bytes: u64,
    cycles0: u64,
    t0: Instant,
}

struct Fuzzer {
    /// NIC1's context (the victim's host: its slow path runs software recovery).
    ctx_v: rnic::Context,
    /// Software recovery: the plan and packet index last sent ahead of ePSN.
    last_ahead: Option<(u64, u32)>,
    cfg: Cfg,
    seed: u64,
    base_seed: u64,
    frames: u64,
    keep_going: bool,
    mem_every: u64,
    rng: Rng,
    mtu: u32,
    // The good pair.
    qa: Qp,
    qb: Qp,
    cq_ga: Cq,
    cq_gb: Cq,
    good_round_no: u64,
    // The victim and its idle peer.
    qv: Qp,
    cq_v: Cq,
    qp_peer: Qp,
    cq_p: Cq,
    victim_qpn: u32,
    peer_qpn: u32,
    good_b_qpn: u32,
    good_a_qpn: u32,
    pd_v: u32,
    stale_key: u32,
    unused_mr_index: u32,
    unused_qpns: Vec<u32>,
    regions: Vec<Region>,
    mrs: Vec<MrInfo>,
    slots: Vec<(usize, u32)>,
    slot_posted: Vec<bool>,
    next_wr_id: u64,
    rq_target: usize,
    v: Victim,
    /// Receive completions of the victim: (wr_id, byte_len if determined, opcode, immediate).
    expect_cqe: VecDeque<(u64, Option<u32>, WcOpcode, Option<u32>)>,
    plan: Option<Plan>,
    next_ssn: u32,
    next_plan_id: u64,
    dirty: bool,
    ctr: Counters,
    caps: Arc<Shared<Vec<Vec<u8>>>>,
    failures: Vec<String>,
    violations_seen: usize,
    /// The previous frame, for messages about a stall it may have caused.
    prev_frame: String,
    /// Receive buffer of the SEND completed by the current frame (still the victim's window).
    just_consumed: Option<(usize, usize)>,
    /// The generator of READ frames (so the other frames keep their seeds).
    rd_rng: Rng,
    /// The generator of the good WRITEs' gather lists (likewise).
    sg_rng: Rng,
    rd_ssn: u32,
    /// The last READ the victim accepted (a requester's retry sends it again).
    last_read: Option<Frame>,
    /// NIC0's RX_DUP when READ responses were last counted from zero, and
    /// the READ response packets the victim sent since: the idle peer, which
    /// waits for no READ, drops each of them as a duplicate.
    peer_dup_base: u64,
    rsp_since_base: u64,
    stats: Stats,
    _pds: Vec<Pd>,
    nics: Nics,
}

// Region indices.
const R_VW: usize = 0;
const R_VSMALL: usize = 1;
const R_VRO: usize = 2;
const R_VRECV: usize = 3;
const R_GDST: usize = 4;
const R_GRECV: usize = 5;
const R_X: usize = 6;
const R_GSRC: usize = 7;
// Region 8: the peer's REMOTE_WRITE MR on NIC0 (only compared).
const R_VRD: usize = 9;

fn packets(len: usize, mtu: usize) -> usize {
    len.div_ceil(mtu).max(1)
}

fn last_plen(len: usize, mtu: usize) -> usize {
    len - (packets(len, mtu) - 1) * mtu
}

fn residue_hit(len: usize, mtu: usize) -> bool {
    (58..=60).contains(&(last_plen(len, mtu) % 64))
}

fn hex(b: &[u8]) -> String {
    let mut s = String::new();
    let line = |s: &mut String, o: usize, c: &[u8]| {
        let _ = write!(s, "    {o:04x}:");
        for x in c {
            let _ = write!(s, " {x:02x}");
        }
        s.push('\n');
    };
    let head = b.len().min(if b.len() <= 256 { 256 } else { 160 });
    for (i, c) in b[..head].chunks(16).enumerate() {
        line(&mut s, i * 16, c);
    }
    if head < b.len() {
        let tail = b.len().saturating_sub(16).max(head);
        if tail > head {
            let _ = writeln!(s, "    ... ({} bytes not shown)", tail - head);
        }
        line(&mut s, tail, &b[tail..]);
    }
    s
}

impl Fuzzer {
    fn new(cfg: Cfg, seed: u64, base_seed: u64, frames: u64, keep_going: bool, mem_every: u64) -> Fuzzer {
        // Host register accesses take 1 ns here: the fuzzer reads the counters after
        // every frame, and the MMIO latency tells nothing about the receive path.
        let nics = pair_with(SimConfig { fail_on_violation: false, mmio_latency_ns: 1, ..Default::default() });
        let (ctx0, ctx1) = (nics.ctxs[PEER].clone(), nics.ctxs[NIC].clone());
        if cfg.victim_sw {
            ctx1.set_sr_windows(0).unwrap();
        }
        let mut rng = Rng(seed);
        let mtu = cfg.victim_mtu.bytes();
        let m = mtu as usize;
        let gm = GOOD_MTU.bytes() as usize;
        let rw = AccessFlags::REMOTE_WRITE | AccessFlags::LOCAL_WRITE;
        let rwr = rw | AccessFlags::REMOTE_READ;
        let lw = AccessFlags::LOCAL_WRITE;
        // NIC0: the good requester and the victim's idle peer, each in its own PD.
        let pd_ga = ctx0.alloc_pd().unwrap();
        let pd_p = ctx0.alloc_pd().unwrap();
        let cq_ga = ctx0.create_cq(64).unwrap();
        let cq_p = ctx0.create_cq(8).unwrap();
        // NIC1: the good responder, the victim, and a third PD.
        let pd_gb = ctx1.alloc_pd().unwrap();
        let pd_v = ctx1.alloc_pd().unwrap();
        let pd_x = ctx1.alloc_pd().unwrap();
        let cq_gb = ctx1.create_cq(64).unwrap();
        let cq_v = ctx1.create_cq(64).unwrap();
        let attr = |cq: &Cq, s: u32, r: u32| QpInitAttr::new(cq, cq, s, r);
        let qa = pd_ga.create_qp(attr(&cq_ga, 16, 1)).unwrap();
        let qp_peer = pd_p.create_qp(attr(&cq_p, 1, 1)).unwrap();
        let qb = pd_gb.create_qp(attr(&cq_gb, 1, 16)).unwrap();
        let qv = pd_v.create_qp(attr(&cq_v, 1, 16)).unwrap();
        connect(&ctx0, &qa, rng.below(1 << 24) as u32, &ctx1, &qb, rng.below(1 << 24) as u32, GOOD_MTU).unwrap();
        let epsn = Self::pick_psn(&mut rng);
        // The victim runs go-back-N, or selective repeat if the test says so.
        qv.modify(&QpAttr { selective_repeat: Some(cfg.victim_sr), ..QpAttr::init() }).unwrap();
        connect(&ctx0, &qp_peer, epsn, &ctx1, &qv, rng.below(1 << 24) as u32, cfg.victim_mtu).unwrap();

        // A deregistered MR of the victim's PD: its key must never work again.
        let stale = pd_v.reg_mr(64, rw).unwrap();
        let stale_key = stale.rkey();
        stale.dereg_mr().unwrap();
        // Receive buffers of assorted sizes, at assorted alignments, with guard bytes between them.
        let sizes = [1usize, 64, 200, m - 1, m, m + 1, 2 * m, 3 * m + 5];
        let mut slots = Vec::new();
        let mut at = 64;
        for (i, &s) in sizes.iter().enumerate() {
            at += (i * 13) % 64;
            slots.push((at, s as u32));
            at += s + 64;
        }
        let mk = |name, nic, mr: Mr, window| {
            let n = mr.len();
            Region { name, nic, mr, expect: vec![0; n], window }
        };
        let mut regions = vec![
            mk("victim WRITE/READ target", NIC, pd_v.reg_mr(3 * m + 37, rwr).unwrap(), Window::Whole),
            mk(
                "victim small WRITE/READ target",
                NIC,
                pd_v.reg_mr(200, AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_READ).unwrap(),
                Window::Whole,
            ),
            mk("victim MR without remote access", NIC, pd_v.reg_mr(512, lw).unwrap(), Window::None),
            mk("victim receive buffers", NIC, pd_v.reg_mr(at + 64, lw).unwrap(), Window::Posted),
            mk("good WRITE destination", NIC, pd_gb.reg_mr(4 * gm + 256, rw).unwrap(), Window::None),
            mk("good receive buffer", NIC, pd_gb.reg_mr(4 * gm + 256, lw).unwrap(), Window::None),
            mk("third PD's REMOTE_WRITE/READ MR", NIC, pd_x.reg_mr(4096, rwr).unwrap(), Window::None),
            // The WRITE's bytes, the SEND's, then room for a gathered WRITE's second entry.
            mk("good source (NIC0)", PEER, pd_ga.reg_mr(12 * gm, AccessFlags::empty()).unwrap(), Window::None),
            mk("peer's REMOTE_WRITE MR (NIC0)", PEER, pd_p.reg_mr(4096, rw).unwrap(), Window::None),
            mk("victim READ-only MR", NIC, pd_v.reg_mr(2 * m + 77, AccessFlags::REMOTE_READ).unwrap(), Window::None),
        ];
        for (i, r) in regions.iter_mut().enumerate() {
            let n = r.mr.len();
            r.fill(0, &pattern::make(seed, pattern::stream(1000 + i as u32, 0), n));
        }
        let mrs: Vec<MrInfo> = regions
            .iter()
            .enumerate()
            .filter(|(_, r)| r.nic == NIC)
            .map(|(i, r)| MrInfo {
                key: r.mr.rkey(),
                pd: r.mr.pdn(),
                access: r.mr.access(),
                va: r.mr.addr(),
                len: r.mr.len() as u64,
                region: i,
            })
            .collect();
        let used: Vec<u32> = mrs.iter().map(|i| i.key >> 8).collect();
        let unused_mr_index = (0..rnic_spec::params::NUM_MRS as u32).rev().find(|i| !used.contains(i)).unwrap();
        let victim_qpn = qv.qp_num();
        let good_b_qpn = qb.qp_num();
        let unused_qpns =
            (0..rnic_spec::params::NUM_QPS as u32).filter(|&q| q != victim_qpn && q != good_b_qpn).collect();

        // Capture what NIC1 sends (ACKs and NAKs only, normally).
        let caps = Arc::new(Shared::new(Vec::new()));
        let c2 = caps.clone();
        nics.cluster.lock().faults(NIC).set_hook(Box::new(move |f: &mut Vec<u8>| {
            c2.borrow_mut().push(f.clone());
            true
        }));
        let cycles0 = nics.cluster.lock().now();
        let nslots = slots.len();
        let mut fz = Fuzzer {
            mtu,
            seed,
            base_seed,
            frames,
            keep_going,
            mem_every: mem_every.max(1),
            rng,
            good_a_qpn: qa.qp_num(),
            qa,
            qb,
            cq_ga,
            cq_gb,
            good_round_no: 0,
            peer_qpn: qp_peer.qp_num(),
            qv,
            cq_v,
            qp_peer,
            cq_p,
            victim_qpn,
            good_b_qpn,
            pd_v: pd_v.pdn(),
            stale_key,
            unused_mr_index,
            unused_qpns,
            regions,
            mrs,
            slots,
            slot_posted: vec![false; nslots],
            next_wr_id: 1,
            rq_target: 2,
            v: Victim { epsn, ..Default::default() },
            expect_cqe: VecDeque::new(),
            plan: None,
            next_ssn: 0,
            next_plan_id: 0,
            dirty: true,
            ctr: Counters::new(&ctx1),
            ctx_v: ctx1.clone(),
            last_ahead: None,
            caps,
            failures: Vec::new(),
            violations_seen: 0,
            prev_frame: "none".into(),
            just_consumed: None,
            rd_rng: Rng(seed ^ 0x0C0C_5EAD_0000_0000),
            sg_rng: Rng(seed ^ 0x5C47_7E12_0000_0000),
            rd_ssn: 0,
            last_read: None,
            peer_dup_base: 0,
            rsp_since_base: 0,
            stats: Stats {
                frames: 0,
                by_outcome: [0; OUTCOMES.len()],
                by_class: cfg.classes.iter().map(|&c| (c, 0, [0; OUTCOMES.len()])).collect(),
                resets: 0,
                slid: 0,
                send_placed: 0,
                sw_placed: 0,
                sw_commands: 0,
                slid_cqes: 0,
                read_base: 0,
                read_resent: 0,
                read_req: [0; OUTCOMES.len()],
                read_rsp_in: [0; OUTCOMES.len()],
                read_dup_answered: 0,
                read_slid: 0,
                read_rsp_out: 0,
                good_rounds: 0,
                good_gathered: 0,
                good_bytes: 0,
                cycles0,
                t0: Instant::now(),
            },
            cfg,
            _pds: vec![pd_ga, pd_p, pd_gb, pd_v, pd_x],
            nics,
        };
        fz.run_cycles(HOST_SETTLE);
        fz.ctr.last = fz.read_counters().unwrap_or_else(|e| panic!("{e}"));
        fz.peer_dup_base = fz.peer_dup().unwrap_or_else(|e| panic!("{e}"));
        fz
    }

    /// NIC0's RX_DUP.
    fn peer_dup(&self) -> Result<u64, String> {
        self.nics
            .cluster
            .lock()
            .read_reg(PEER, counters::RX_DUP)
            .map_err(|e| format!("reading RX_DUP of NIC{PEER}: {e}"))
    }

    /// NIC0's RX_DUP must have grown by the READ response packets the victim sent, nothing else.
    fn check_peer_dup(&mut self) -> Option<String> {
        match self.peer_dup() {
            Ok(d) => {
                let grew = d.wrapping_sub(self.peer_dup_base);
                self.peer_dup_base = d;
                let sent = std::mem::take(&mut self.rsp_since_base);
                (grew != sent).then(|| {
                    format!(
                        "NIC{PEER}'s RX_DUP grew by {grew}, but the victim sent its idle peer {sent} READ response packets (each a duplicate there)"
                    )
                })
            }
            Err(e) => Some(e),
        }
    }

    /// An initial ePSN: anywhere, often close to the 24-bit wrap.
    fn pick_psn(rng: &mut Rng) -> u32 {
        if rng.pct(30) {
            (PSN_MASK - rng.below(6) as u32) & PSN_MASK
        } else {
            rng.below(1 << 24) as u32
        }
    }

    fn run_cycles(&self, n: u64) {
        self.nics.cluster.lock().run(n);
    }

    fn now(&self) -> u64 {
        self.nics.cluster.lock().now()
    }

    fn read_counters(&self) -> Result<Vec<u64>, String> {
        let mut c = self.nics.cluster.lock();
        self.ctr
            .regs
            .iter()
            .map(|(n, o)| c.read_reg(NIC, *o).map_err(|e| format!("reading {n} of NIC{NIC}: {e}")))
            .collect()
    }

    /// Reads the counters; returns the deltas since the last read.
    fn counter_deltas(&mut self) -> Result<Vec<u64>, String> {
        let now = self.read_counters()?;
        let d = now.iter().zip(&self.ctr.last).map(|(a, b)| a.wrapping_sub(*b)).collect();
        self.ctr.last = now;
        Ok(d)
    }

    fn deltas_line(&self, d: &[u64]) -> String {
        let v: Vec<String> =
            self.ctr.regs.iter().zip(d).filter(|(_, &x)| x != 0).map(|((n, _), x)| format!("{n}+{x}")).collect();
        if v.is_empty() {
            "no counter moved".into()
        } else {
            v.join(" ")
        }
    }

    fn take_caps(&self) -> Vec<Vec<u8>> {
        std::mem::take(&mut *self.caps.borrow_mut())
    }

    // ------------------------------------------------------------ the model

    /// Checks a WRITE packet's rkey and range against NIC1's MR table.
    fn mr_check(&self, rkey: u32, va: u64, len: u64) -> Result<(usize, usize), String> {
        self.mr_check_for(rkey, va, len, AccessFlags::REMOTE_WRITE)
    }

    /// Checks an rkey and range against NIC1's MR table for access `need`:
    /// the region and the offset of `va` in it.
    fn mr_check_for(&self, rkey: u32, va: u64, len: u64, need: AccessFlags) -> Result<(usize, usize), String> {
        if rkey >> 16 != 0 {
            return Err(format!("rkey {rkey:#x} names no MR index (bits 31:16 set)"));
        }
        let Some(mr) = self.mrs.iter().find(|m| m.key >> 8 == rkey >> 8) else {
            return Err(format!("rkey {rkey:#x}: MR index {} is not registered", rkey >> 8));
        };
        if mr.key != rkey {
            return Err(format!("rkey {rkey:#x}: tag differs from the live key {:#x}", mr.key));
        }
        if mr.pd != self.pd_v {
            return Err(format!("rkey {rkey:#x}: MR of PD {}, the victim is in PD {}", mr.pd, self.pd_v));
        }
        if !mr.access.contains(need) {
            return Err(format!("rkey {rkey:#x}: MR without {need:?}"));
        }
        if va < mr.va || (va - mr.va) as u128 + len as u128 > mr.len as u128 {
            return Err(format!(
                "VA {va:#x} + {len} is outside the MR [{:#x}, {:#x})",
                mr.va,
                mr.va as u128 + mr.len as u128
            ));
        }
        Ok((mr.region, (va - mr.va) as usize))
    }

    /// The intended responder's verdict on a frame (see the module docs).
    fn judge(&self, f: &[u8]) -> Judgement {
        use Outcome::*;
        let x = facts(f);
        if x.len > x.ip_end && x.ip_end >= HDR_LEN + ICRC_LEN {
            // Bytes after the IPv4 packet (an Ethernet trailer): the NIC may
            // drop the frame, or process the IPv4 packet and ignore them.
            let mut j = self.judge(&f[..x.ip_end]);
            j.allowed = j.allowed.with(Set::of(&[Hdr, Icrc]));
            j.why.insert(
                0,
                format!("{} bytes after the IPv4 packet: dropped, or the packet alone is judged:", x.len - x.ip_end),
            );
            return j;
        }
        if x.icrc_bad {
            // Dropped for the ICRC, or for a header error the front end may check first.
            let mut y = x.clone();
            y.icrc_bad = false;
            let rest = self.judge_facts(&y);
            let mut j = Judgement { allowed: Set::of(&[Icrc]), why: vec!["wrong ICRC".into()], ..Default::default() };
            if rest.allowed.has(Hdr) {
                j.allowed.add(Hdr);
                j.why.push(format!("may be dropped as a header error: {:?}", rest.why));
            }
            return j;
        }
        self.judge_facts(&x)
    }

    fn judge_facts(&self, x: &Facts) -> Judgement {
        use Outcome::*;
        let mut j = Judgement::default();
        // Front end: must be dropped.
        let mut strict = Set::default();
        if x.len_bad {
            strict = strict.with(Set::of(&[Hdr, Icrc]));
            j.why.push(format!(
                "frame length {} is short, not a multiple of 4, or disagrees with the IPv4 total length",
                x.len
            ));
        }
        if x.not_roce {
            strict.add(Hdr);
            j.why.push("not Ethernet/IPv4 without options/UDP 4791".into());
        }
        if x.ipcsum_bad {
            strict.add(Hdr);
            j.why.push("wrong IPv4 header checksum".into());
        }
        if x.dst_bad {
            strict.add(Hdr);
            j.why.push("destination MAC or IP is not this NIC's".into());
        }
        if x.frag {
            strict.add(Hdr);
            j.why.push("IPv4 fragment (MF or fragment offset)".into());
        }
        if x.udp_len_bad {
            strict.add(Hdr);
            j.why.push("UDP length disagrees with the IPv4 length".into());
        }
        if !strict.is_empty() {
            j.allowed = strict;
            return j;
        }
        // Oddities the NIC may drop (as a header error) or ignore.
        let mut lenient = Set::default();
        for o in &x.odd {
            lenient.add(Hdr);
            j.why.push(format!("may be dropped: {o}"));
        }
        if x.plen < 0 || x.plen > 4096 {
            // The front end may check pad and the largest payload for every frame.
            lenient.add(Hdr);
            j.why.push(format!("may be dropped: payload of {} bytes", x.plen));
        }
        let is_ack = x.opcode == opcode::ACK;
        if x.dqpn > 0xFF {
            j.allowed = Set::of(&[Hdr]);
            j.why.push(format!("destination QPN {:#x} >= 256", x.dqpn));
            return j;
        }
        if x.dqpn != self.victim_qpn {
            j.allowed = if is_ack { Set::of(&[Hdr, Ack]) } else { Set::of(&[Hdr]) };
            j.why.push(format!("QP {} does not exist", x.dqpn));
            return j;
        }
        if is_ack {
            // The victim's requester has nothing outstanding: the ACK completes nothing.
            j.allowed = Set::of(&[Ack]).with(lenient);
            if x.src_ip_bad || x.src_mac_bad {
                j.allowed.add(Hdr);
                j.why.push("may be dropped: source is not the QP's peer".into());
            }
            j.why.push("an ACK for a requester with nothing outstanding".into());
            return j;
        }
        if x.src_ip_bad {
            j.allowed = Set::of(&[Hdr]);
            j.why.push("source IP is not the QP's peer".into());
            return j;
        }
        if x.src_mac_bad {
            lenient.add(Hdr);
            j.why.push("may be dropped: source MAC is not the peer's".into());
        }
        if is_read_response(x.opcode) {
            // Handled before the responder's own checks: the victim's requester
            // never posts a READ, so it waits for no response.
            j.allowed = Set::of(&[Dup]).with(lenient);
            j.why.push(format!("{}: the victim waits for no READ response (a duplicate)", op_name(x.opcode)));
            return j;
        }
        if x.opcode == opcode::READ_REQUEST {
            return self.judge_read(x, lenient, j);
        }
        let Some((kind, first, last, imm)) = classify(x.opcode) else {
            j.allowed = Set::of(&[Hdr, Inv]);
            j.why.push(format!("{} is not a request this NIC implements", op_name(x.opcode)));
            return j;
        };
        let m = self.mtu as u64;
        let v = &self.v;
        let diff = x.psn.wrapping_sub(v.epsn) & PSN_MASK;
        let mut psn_out = Set::default();
        if diff == 1 << 23 {
            psn_out = Set::of(&[Dup, Psn]);
        } else if diff > 1 << 23 {
            psn_out.add(Dup);
        } else if diff != 0 {
            psn_out.add(Psn);
        }
        if !psn_out.is_empty() {
            j.why.push(format!("PSN {:#x} with ePSN {:#x}", x.psn, v.epsn));
        }
        let mut inv = false;
        let mut inv_l = false;
        let why = |s: String, strict: bool, j: &mut Judgement| {
            j.why.push(if strict { s } else { format!("may be rejected: {s}") });
        };
        if x.plen < 0 {
            inv = true;
            why(
                format!("pad count {} is larger than the {} bytes after the header", x.pad, x.plen + x.pad as i64),
                true,
                &mut j,
            );
        }
        if x.plen > m as i64 {
            inv = true;
            why(format!("payload of {} bytes is longer than the PMTU {m}", x.plen), true, &mut j);
        }
        if !last && x.plen >= 0 && x.plen != m as i64 {
            inv = true;
            why(format!("{} carries {} bytes, not exactly the PMTU {m}", op_name(x.opcode), x.plen), true, &mut j);
        }
        if last && !first && x.plen == 0 {
            inv_l = true;
            why("LAST packet without payload".into(), false, &mut j);
        }
        match v.cur {
            None if !first => {
                inv = true;
                why(format!("{} outside a message", op_name(x.opcode)), true, &mut j);
            }
            Some(c) if !first && c.kind != kind => {
                inv = true;
                why(format!("{} inside a {:?} message", op_name(x.opcode), c.kind), true, &mut j);
            }
            Some(c) if first => {
                inv = true;
                why(format!("{} inside an unfinished {:?} message", op_name(x.opcode), c.kind), true, &mut j);
            }
            _ => {}
        }
        let idx: u32 = if first { 0 } else { v.cur.map_or(0, |c| c.pkts) };
        // PSN_OFFSET must be the packet's index in its message; bits 31:24
        // of the field are beyond the 24-bit PSN space (ignoring them is allowed).
        if x.psn_offset & PSN_MASK != idx {
            inv = true;
            why(format!("PSN_OFFSET {:#x} is not the packet's index {idx}", x.psn_offset), true, &mut j);
        } else if x.psn_offset != idx {
            inv_l = true;
            why(format!("PSN_OFFSET {:#x} has bits 31:24 set", x.psn_offset), false, &mut j);
        }
        let plen = x.plen.max(0) as u64;
        let cum = idx as u64 * m + plen;
        // The message's bytes so far must fit its RETH length, and reach it
        // exactly on LAST/ONLY. A FIRST/MIDDLE that reaches it exactly (so
        // only an empty LAST may follow) may be rejected or not.
        let disagrees = |len: u32| if last { cum != len as u64 } else { cum > len as u64 };
        let exactly = |len: u32| !last && cum == len as u64;
        // (SENDs carry the message length in the RETH slot too.)
        let own = disagrees(x.msg_len);
        let msg = if first { own } else { v.cur.map_or(own, |c| disagrees(c.len)) };
        if own && msg {
            inv = true;
            why(
                format!("RETH length {} disagrees with the {cum} bytes of the message so far", x.msg_len),
                true,
                &mut j,
            );
        } else if own || msg || exactly(x.msg_len) {
            inv_l = true;
            why(format!("RETH length {} vs the FIRST's and {cum} bytes so far", x.msg_len), false, &mut j);
        }
        if !first && v.cur.is_some_and(|c| c.len != x.msg_len) {
            inv_l = true;
            why("RETH length differs from the FIRST's".into(), false, &mut j);
        }
        let invset = Set::of(&[Hdr, Inv]);
        if let Some(s) = self.judge_sr(x, diff, kind, first, last, imm, &mut j) {
            j.allowed = s.with(lenient);
            return j;
        }
        if !psn_out.is_empty() {
            j.allowed = psn_out.with(lenient);
            if inv || inv_l {
                j.allowed = j.allowed.with(invset);
            }
            return j;
        }
        if inv {
            j.allowed = invset;
            return j;
        }
        if inv_l {
            lenient = lenient.with(invset);
        }
        let acc = |place| Accepted {
            plen: plen as usize,
            kind,
            first,
            last,
            place,
            msg_len: x.msg_len,
            cqe_len: None,
            imm: imm.then_some(x.imm),
            psns: 1,
        };
        if kind == Kind::Write && imm && v.rq.is_empty() {
            // A WRITE with immediate consumes a receive WQE; the check comes before the key's.
            j.why.push("WRITE with immediate and no receive WQE posted".into());
            j.allowed = Set::of(&[Rnr]).with(lenient);
            return j;
        }
        match kind {
            Kind::Write => match self.mr_check(x.rkey, x.va, plen) {
                Ok((region, o)) => {
                    let start = x.va.wrapping_sub(idx as u64 * m);
                    if let Err(e) = self.mr_check(x.rkey, start, x.msg_len as u64) {
                        lenient.add(Access);
                        j.why.push(format!("may be rejected: the whole message's range: {e}"));
                    }
                    j.accept = Some(acc(if plen > 0 { Place::Exact { region, off: o } } else { Place::None }));
                    j.allowed = Set::of(&[Accept]).with(lenient);
                }
                Err(e) => {
                    j.why.push(e);
                    j.allowed = Set::of(&[Access]).with(lenient);
                    if plen == 0 {
                        j.why.push("a zero-length WRITE may skip the key check".into());
                        j.allowed.add(Accept);
                        j.accept = Some(acc(Place::None));
                    }
                }
            },
            Kind::Read => unreachable!("classify gives no READ"),
            Kind::Send => {
                if first && v.rq.is_empty() {
                    j.why.push("no receive WQE posted".into());
                    j.allowed = Set::of(&[Rnr]).with(lenient);
                    return j;
                }
                let Some(w) = v.rq.front() else {
                    j.why.push("SEND continuation without a receive WQE".into());
                    j.allowed = invset.with(lenient);
                    return j;
                };
                if x.msg_len as u64 > w.len as u64 {
                    lenient = lenient.with(invset);
                    j.why.push(format!(
                        "may be rejected: SEND length field {} exceeds the receive buffer ({})",
                        x.msg_len, w.len
                    ));
                }
                let fits = (idx as u128) * (m as u128) + plen as u128 <= w.len as u128;
                if fits {
                    let mut a = acc(Place::Exact { region: R_VRECV, off: w.off + (idx as u64 * m) as usize });
                    a.cqe_len = Some(cum as u32);
                    j.accept = Some(a);
                    j.allowed = Set::of(&[Accept]).with(lenient);
                } else {
                    j.why.push(format!(
                        "SEND bytes {}..{cum} do not fit the {}-byte receive buffer",
                        cum - plen,
                        w.len
                    ));
                    j.allowed = Set::of(&[Inv]).with(lenient);
                }
            }
        }
        j
    }

    /// An RDMA READ request to the victim (past the front end and the QPN
    /// and peer checks; `lenient`: what the front end may drop it for).
    fn judge_read(&self, x: &Facts, lenient: Set, mut j: Judgement) -> Judgement {
        use Outcome::*;
        let v = &self.v;
        let m = self.mtu as u64;
        let len = x.msg_len as u64;
        let psns = len.div_ceil(m).max(1) as u32;
        // The MR check (a zero-length READ reads nothing and is not checked)
        // and the answer it gets if it passes, from the memory as the model knows it.
        let check =
            if len == 0 { Ok(None) } else { self.mr_check_for(x.rkey, x.va, len, AccessFlags::REMOTE_READ).map(Some) };
        let answer = check.as_ref().ok().map(|at| {
            (0..psns)
                .map(|i| {
                    let o = i as u64 * m;
                    let n = len.saturating_sub(o).min(m) as usize;
                    let payload = match at {
                        Some((region, off)) => {
                            let s = off + o as usize;
                            self.regions[*region].expect[s..s + n].to_vec()
                        }
                        None => Vec::new(),
                    };
                    ReadRsp {
                        opcode: wire::Opcode::read_response(i == 0, i + 1 == psns).into(),
                        psn: x.psn.wrapping_add(i) & PSN_MASK,
                        va: x.laddr.wrapping_add(o),
                        rkey: x.lkey,
                        msg_len: x.msg_len,
                        ssn: x.ssn & PSN_MASK,
                        psn_offset: i,
                        payload,
                    }
                })
                .collect::<Vec<_>>()
        });
        let mr_why = match &check {
            Ok(None) => "a zero-length READ: no MR check, one empty response packet".to_string(),
            Ok(Some((region, off))) => {
                format!("READ of {len} B at +{off:#x} of the {}: {psns} response packet(s)", self.regions[*region].name)
            }
            Err(e) => format!("MR check fails: {e}"),
        };
        j.read = Some(ReadExp { psns, answer });
        let mut inv = Vec::new();
        if let Some(c) = v.cur {
            inv.push(format!("READ request inside an unfinished {:?} message", c.kind));
        }
        if x.plen != 0 {
            inv.push(format!("READ request with {} bytes of payload", x.plen));
        }
        let invset = Set::of(&[Hdr, Inv]);
        let diff = x.psn.wrapping_sub(v.epsn) & PSN_MASK;
        if diff != 0 {
            if diff >= 1 << 23 {
                j.allowed = Set::of(&[Dup]);
                if diff == 1 << 23 {
                    j.allowed.add(Psn);
                }
                j.why.push(format!(
                    "PSN {:#x} behind ePSN {:#x}: a duplicate READ (no ACK), answered again if it passes the MR check and carries no payload, else dropped; {mr_why}",
                    x.psn, v.epsn
                ));
                if x.plen != 0 {
                    j.read = Some(ReadExp { psns, answer: None });
                }
            } else {
                j.allowed = Set::of(&[Psn]);
                j.why
                    .push(format!("PSN {:#x} ahead of ePSN {:#x}: a READ is never placed out of order", x.psn, v.epsn));
            }
            if !inv.is_empty() {
                // As for SEND and WRITE: the order of two checks that both fail is open.
                j.allowed = j.allowed.with(invset);
                j.why.extend(inv.into_iter().map(|s| format!("may be rejected: {s}")));
            }
            j.allowed = j.allowed.with(lenient);
            return j;
        }
        if !inv.is_empty() {
            j.why.extend(inv);
            j.allowed = invset;
            return j;
        }
        j.why.push(mr_why);
        if check.is_ok() {
            j.accept = Some(Accepted {
                plen: 0,
                kind: Kind::Read,
                first: true,
                last: true,
                place: Place::None,
                msg_len: x.msg_len,
                cqe_len: None,
                imm: None,
                psns,
            });
            j.allowed = Set::of(&[Accept]).with(lenient);
        } else {
            j.allowed = Set::of(&[Access]).with(lenient);
        }
        j
    }

    /// Selective repeat: the outcome of a request ahead of ePSN that the
    /// responder may place out of order (a WRITE or SEND packet in the
    /// window that passes the checks needing no predecessor), or None if it
    /// is not one. A SEND packet, and the LAST/ONLY of a WRITE with
    /// immediate, need the receive WQE their RSN names posted; a SEND
    /// packet is placed in that WQE's buffer (if it fits), at PSN_OFFSET x
    /// PMTU. The completion it may end waits for the slide.
    #[allow(clippy::too_many_arguments)]
    fn judge_sr(
        &self,
        x: &Facts,
        diff: u32,
        kind: Kind,
        first: bool,
        last: bool,
        imm: bool,
        j: &mut Judgement,
    ) -> Option<Set> {
        let v = &self.v;
        // Software recovery (no window) places up to its span ahead, plain
        // WRITEs and SEND packets that do not end their message only.
        let sw = self.cfg.victim_sw;
        let (span, how) = if sw { (SW_SR_SPAN - 1, "software recovery") } else { (SR_WINDOW, "selective repeat") };
        let placeable = if sw {
            matches!((kind, imm, last), (Kind::Write, false, _) | (Kind::Send, _, false))
        } else {
            matches!(kind, Kind::Write | Kind::Send)
        };
        if !self.cfg.victim_sr
            || v.sr_hold
            || !(1..=span).contains(&diff)
            || !placeable
            || !(0..=4096).contains(&x.plen)
        {
            return None;
        }
        let m = self.mtu as u64;
        let plen = x.plen as u64;
        let off = (x.psn_offset & PSN_MASK) as u64 * m;
        let len = x.msg_len as u64;
        if plen > m
            || (!last && plen != m)
            || off + plen > len
            || (last && off + plen != len)
            || (first && x.psn_offset & PSN_MASK != 0)
        {
            return None;
        }
        let psn = x.psn & PSN_MASK;
        let dup = if sw {
            v.sw_on && psn.wrapping_sub(v.sw_left) & PSN_MASK <= v.sw_right.wrapping_sub(v.sw_left) & PSN_MASK
        } else {
            v.sr_rcv & (1u128 << diff) != 0
        };
        if dup {
            j.why.push(format!("{how}: PSN {psn:#x} (ePSN + {diff}) was placed before"));
            return Some(Set::of(&[Outcome::PlacedDup]));
        }
        // The receive WQE its RSN names: posted (between rq_ci and rq_pi, 16-bit indices)?
        let k = (x.rsn as u16).wrapping_sub(v.rq_ci) as usize;
        let rwqe = v.rq.get(k);
        if (kind == Kind::Send || imm) && rwqe.is_none() {
            j.why.push(format!(
                "{how}: ePSN + {diff} not placed, RSN {:#x} names no posted receive WQE (rq_ci {:#x}, {} posted)",
                x.rsn,
                v.rq_ci,
                v.rq.len()
            ));
            return Some(Set::of(&[Outcome::Psn]));
        }
        let mut a = Accepted {
            plen: plen as usize,
            kind,
            first,
            last,
            place: Place::None,
            msg_len: x.msg_len,
            cqe_len: None,
            imm: imm.then_some(x.imm),
            psns: 1,
        };
        if kind == Kind::Send {
            let w = rwqe.expect("checked above");
            if off + plen > w.len as u64 {
                j.why.push(format!(
                    "{how}: ePSN + {diff} not placed, bytes {off}..{} do not fit the {}-byte receive buffer of RSN {:#x}",
                    off + plen,
                    w.len,
                    x.rsn
                ));
                return Some(Set::of(&[Outcome::Psn]));
            }
            j.why.push(format!("{how}: SEND placed out of order at ePSN + {diff} (receive WQE {k} of the RQ)"));
            if plen > 0 {
                a.place = Place::Exact { region: R_VRECV, off: w.off + off as usize };
            }
            a.cqe_len = Some((off + plen) as u32);
            j.placed = Some((diff, a));
            return Some(Set::of(&[Outcome::Placed]));
        }
        match self.mr_check(x.rkey, x.va.wrapping_sub(off), len) {
            Ok((region, o)) => {
                j.why.push(format!("{how}: placed out of order at ePSN + {diff}"));
                if plen > 0 {
                    a.place = Place::Exact { region, off: o + off as usize };
                }
                j.placed = Some((diff, a));
                Some(Set::of(&[Outcome::Placed]))
            }
            Err(e) => {
                j.why.push(format!("{how}: ePSN + {diff} not placed, the whole message's range: {e}"));
                Some(Set::of(&[Outcome::Psn]))
            }
        }
    }

    /// Records a packet placed out of order.
    fn apply_placed(&mut self, diff: u32, a: &Accepted, frame: &[u8]) {
        if self.cfg.victim_sw {
            return self.apply_placed_sw(diff, a, frame);
        }
        if let Place::Exact { region, off } = a.place {
            self.regions[region].put(off, &frame[HDR_LEN..HDR_LEN + a.plen]);
        }
        self.v.sr_rcv |= 1 << diff;
        self.v.ooo_n += 1;
        self.v.bytes_rx = self.v.bytes_rx.wrapping_add(a.plen as u32);
        if a.last {
            self.v.sr_last |= 1 << diff;
        }
        self.v.sr_rec.insert((self.v.epsn + diff) & PSN_MASK, *a);
        self.stats.send_placed += (a.kind == Kind::Send) as u64;
    }

    /// Records a packet placed through software recovery: the host's
    /// bitmap, and the NIC's run (extended by the next PSN, replaced by a
    /// packet further ahead, unchanged by one behind it).
    fn apply_placed_sw(&mut self, diff: u32, a: &Accepted, frame: &[u8]) {
        if let Place::Exact { region, off } = a.place {
            self.regions[region].put(off, &frame[HDR_LEN..HDR_LEN + a.plen]);
        }
        let f = facts(frame);
        let v = &mut self.v;
        let psn = (v.epsn + diff) & PSN_MASK;
        let off = f.psn_offset & PSN_MASK;
        v.sw_map.insert(psn, (*a, off));
        v.bytes_rx = v.bytes_rx.wrapping_add(a.plen as u32);
        let rpk = if a.last { 0 } else { (off + 1) & PSN_MASK };
        let ahead = psn.wrapping_sub(v.sw_right.wrapping_add(1)) & PSN_MASK;
        if !v.sw_on || (ahead != 0 && ahead < 1 << 23) {
            (v.sw_left, v.sw_right, v.sw_ends) = (psn, psn, a.last as u32);
            (v.sw_rpk, v.sw_rkind) = (rpk, Some(a.kind));
        } else if ahead == 0 {
            v.sw_right = psn;
            v.sw_ends += a.last as u32;
            (v.sw_rpk, v.sw_rkind) = (rpk, Some(a.kind));
        }
        v.sw_on = true;
        self.stats.send_placed += (a.kind == Kind::Send) as u64;
        self.stats.sw_placed += 1;
    }

    /// Applies an accepted packet to the model; returns how many packets
    /// placed out of order before slid in behind it.
    fn apply_accept(&mut self, a: &Accepted, frame: &[u8]) -> u32 {
        if let Place::Exact { region, off } = a.place {
            self.regions[region].put(off, &frame[HDR_LEN..HDR_LEN + a.plen]);
        }
        let out = self.v.accept(a);
        let own = a.last && (a.kind == Kind::Send || a.imm.is_some());
        self.stats.slid_cqes += (out.consumed.len() - own as usize) as u64;
        for (w, len, op, imm) in out.consumed {
            self.slot_posted[w.slot] = false;
            if op == WcOpcode::Recv {
                // Its receive buffer stays the victim's window until checked.
                self.just_consumed = Some((w.off, w.len as usize));
            }
            self.expect_cqe.push_back((w.wr_id, len, op, imm));
        }
        out.slid
    }

    // ------------------------------------------------------------ generator

    fn new_plan(&mut self) -> Plan {
        let m = self.mtu as usize;
        let kind = if self.rng.pct(self.cfg.send_pct) { Kind::Send } else { Kind::Write };
        let cap = match kind {
            Kind::Write => self.regions[R_VW].mr.len(),
            Kind::Send => self.v.rq.front().map_or(3 * m, |w| w.len as usize),
            Kind::Read => unreachable!("a plan is a SEND or a WRITE"),
        };
        // Software recovery: a share of longer messages (4 to 12 packets), so runs form inside them.
        let long = self.cfg.victim_sw && self.rng.pct(50);
        let len = loop {
            let l = match self.rng.below(4) {
                _ if long => self.rng.range(4 * m as u64, 12 * m as u64) as usize,
                0 => self.rng.below(cap as u64 + 1) as usize,
                _ => self.rng.pick(&[
                    0,
                    1,
                    2,
                    3,
                    4,
                    5,
                    63,
                    64,
                    65,
                    m - 1,
                    m,
                    m + 1,
                    2 * m - 1,
                    2 * m,
                    2 * m + 1,
                    3 * m - 1,
                    3 * m,
                ]),
            }
            .min(cap);
            if !(self.cfg.avoid_ring_residue && residue_hit(l, m)) {
                break l;
            }
        };
        let vw = &self.regions[R_VW].mr;
        let va0 = vw.addr() + self.rng.below((vw.len() - len) as u64 + 1);
        self.next_ssn = (self.next_ssn + 1) & PSN_MASK;
        self.next_plan_id += 1;
        Plan {
            kind,
            len: len as u32,
            pkts: packets(len, m) as u32,
            next: 0,
            va0,
            ssn: self.next_ssn,
            id: self.next_plan_id,
            retries: 0,
        }
    }

    /// Packet `i` of the plan's message, with PSN `psn`.
    fn base_request(&mut self, p: &Plan, i: u32, psn: u32) -> Frame {
        let m = self.mtu;
        let (first, last) = (i == 0, i + 1 == p.pkts);
        let plen = if last { p.len - i * m } else { m } as usize;
        let write = p.kind == Kind::Write;
        Frame {
            dst_mac: mac_of(NIC),
            src_mac: mac_of(PEER),
            src_ip: u32::from_be_bytes(ip_of(PEER)),
            dst_ip: u32::from_be_bytes(ip_of(NIC)),
            sport: 0xC000 | self.peer_qpn as u16,
            opcode: opcode::request(write, first, last),
            dqpn: self.victim_qpn,
            ack_req: last || i & 15 == 15,
            psn,
            va: if write { p.va0 + (i * m) as u64 } else { (i * m) as u64 },
            rkey: if write { self.regions[R_VW].mr.rkey() } else { 0 },
            msg_len: p.len,
            ssn: p.ssn,
            psn_offset: i,
            ts: self.now(),
            rsn: self.v.rq_ci as u32,
            payload: pattern::make(self.seed, pattern::stream(9, p.id << 20 | i as u64), plen),
            ..Default::default()
        }
    }

    fn base_ack(&mut self) -> Frame {
        let r = &mut self.rng;
        Frame {
            dst_mac: mac_of(NIC),
            src_mac: mac_of(PEER),
            src_ip: u32::from_be_bytes(ip_of(PEER)),
            dst_ip: u32::from_be_bytes(ip_of(NIC)),
            sport: 0xC000 | self.peer_qpn as u16,
            opcode: opcode::ACK,
            dqpn: self.victim_qpn,
            psn: r.below(1 << 24) as u32,
            syndrome: pick!(r, [0x1F, 0x1F, 0x1F, 0x60, 0x61, 0x62, 0x63, 0x20, 0x3F, 0x00, 0xFF]),
            msn: pick!(r, [0, 0, 1, 2, PSN_MASK, r.below(1 << 24) as u32]),
            ssn: r.below(1 << 24) as u32,
            psn_offset: r.below(4) as u32,
            ts: r.next(),
            epsn: r.below(1 << 24) as u32,
            echo_entropy: r.next() as u16,
            ..Default::default()
        }
    }

    /// A READ request the peer could send the victim: a fresh one at ePSN
    /// inside a READ-able MR of the victim (local address and lkey anything),
    /// or now and then the last accepted one again (a requester's retry).
    /// Draws from `self.rng` (the caller swaps in the READ generator).
    fn base_read(&mut self) -> Frame {
        if let Some(f) = self.last_read.clone().filter(|_| self.rng.pct(20)) {
            self.stats.read_resent += 1;
            return Frame { ts: self.now(), ..f };
        }
        self.stats.read_base += 1;
        let m = self.mtu as usize;
        let reg = self.rng.pick(&[R_VW, R_VW, R_VSMALL, R_VRD]);
        let cap = self.regions[reg].mr.len();
        let len = loop {
            let l = match self.rng.below(3) {
                0 => self.rng.below(cap as u64 + 1) as usize,
                _ => self.rng.pick(&[0, 1, 4, 63, 64, m - 1, m, m + 1, 2 * m, 2 * m + 1, 3 * m, cap]),
            }
            .min(cap);
            // Its response lands in the peer's RX ring (see `avoid_ring_residue`).
            if !(self.cfg.avoid_ring_residue && residue_hit(l, m)) {
                break l;
            }
        };
        let mr = &self.regions[reg].mr;
        let va = mr.addr() + self.rng.below((cap - len) as u64 + 1);
        let rkey = mr.rkey();
        self.rd_ssn = (self.rd_ssn + 1) & PSN_MASK;
        let r = &mut self.rng;
        Frame {
            dst_mac: mac_of(NIC),
            src_mac: mac_of(PEER),
            src_ip: u32::from_be_bytes(ip_of(PEER)),
            dst_ip: u32::from_be_bytes(ip_of(NIC)),
            sport: 0xC000 | self.peer_qpn as u16,
            opcode: opcode::READ_REQUEST,
            dqpn: self.victim_qpn,
            ack_req: r.pct(75),
            psn: self.v.epsn,
            va,
            rkey,
            msg_len: len as u32,
            ssn: self.rd_ssn,
            psn_offset: 0,
            ts: self.nics.cluster.lock().now(),
            laddr: r.next(),
            lkey: r.next() as u32,
            ..Default::default()
        }
    }

    /// One concrete mutation of `class` for frame `fr`.
    fn choose(&mut self, class: Class, fr: &Frame) -> Mut {
        let m = self.mtu as u64;
        let plen = fr.payload.len();
        let pad = (4 - plen % 4) % 4;
        let flen = HDR_LEN + plen + pad + ICRC_LEN;
        let is_ack = fr.opcode == opcode::ACK;
        if class == Class::Sack && !is_ack {
            return self.choose(Class::SsnMsn, fr);
        }
        let epsn = self.v.epsn;
        let sr = self.cfg.victim_sr;
        let r = &mut self.rng;
        match class {
            Class::Sack => {
                // Random, or the field's largest value.
                let x =
                    |r: &mut Rng, max: u64| if r.pct(25) { max } else { r.below(max) + if r.pct(50) { 1 } else { 0 } };
                match r.below(6) {
                    0 => Mut::Sack("ooo", x(r, 0xFFFF_FFFF)),
                    1 => Mut::Sack("bytes_rx", x(r, 0xFFFF_FFFF)),
                    2 => Mut::Sack("sack_base", x(r, PSN_MASK as u64)),
                    3 => Mut::Sack("sack_bitmap", if r.pct(25) { u64::MAX } else { r.next() }),
                    4 => Mut::Sack("echo_entropy", x(r, 0xFFFF)),
                    _ => Mut::Sack("echo_ecn", x(r, 0xFF)),
                }
            }
            Class::Lengths => {
                let around = |r: &mut Rng, v: usize| -> u16 {
                    match r.below(3) {
                        0 => pick!(r, [0u16, 1, 20, 0xFFFF, r.next() as u16]),
                        _ => (v as i64 + pick!(r, [-64i64, -4, -3, -2, -1, 1, 2, 3, 4, 64])) as u16,
                    }
                };
                match r.below(3) {
                    0 => Mut::IpLen(around(r, flen - off::IP)),
                    1 => Mut::UdpLen(around(r, flen - off::UDP_SPORT)),
                    _ => Mut::RethLen(pick!(
                        r,
                        [
                            0,
                            (plen as u32).wrapping_sub(1),
                            plen as u32 + 1,
                            fr.msg_len.wrapping_sub(1),
                            fr.msg_len + 1,
                            m as u32,
                            m as u32 + 1,
                            2 * m as u32,
                            1 << 31,
                            u32::MAX,
                            r.next() as u32,
                        ]
                    )),
                }
            }
            Class::Pad => Mut::Pad(((pad as u64 + r.range(1, 3)) % 4) as u8),
            // Selective repeat: half of the PSNs inside the window or just past it.
            Class::Psn if sr && r.pct(50) => {
                let d = pick!(r, [1i64, 2, 3, 62, 63, 64, r.range(1, 63) as i64]);
                Mut::Psn((epsn as i64 + d) as u32 & PSN_MASK)
            }
            Class::Psn => {
                let d = pick!(
                    r,
                    [
                        0i64,
                        1,
                        -1,
                        2,
                        -2,
                        15,
                        -16,
                        SR_WINDOW as i64 - 1,
                        SR_WINDOW as i64,
                        SR_WINDOW as i64 + 1,
                        (1 << 23) - 1,
                        1 << 23,
                        (1 << 23) + 1,
                        -((1 << 23) - 1),
                        r.below(1 << 24) as i64
                    ]
                );
                Mut::Psn((epsn as i64 + d) as u32 & PSN_MASK)
            }
            Class::PsnOffset => {
                let e = fr.psn_offset;
                let wrap = ((1u64 << 32) / m) as u32;
                Mut::PsnOffset(pick!(
                    r,
                    [
                        e + 1,
                        e.wrapping_sub(1),
                        0,
                        e + 2,
                        wrap,
                        wrap + 1,
                        wrap + 2,
                        wrap - 1,
                        PSN_MASK,
                        1 << 23,
                        r.below(1 << 24) as u32,
                        (r.nonzero8() as u32) << 24 | e,
                        u32::MAX,
                    ]
                ))
            }
            Class::SsnMsn => {
                if is_ack {
                    match r.below(2) {
                        0 => Mut::Msn(pick!(
                            r,
                            [0, 1, fr.msn + 1, fr.msn.wrapping_sub(1) & PSN_MASK, PSN_MASK, r.below(1 << 24) as u32]
                        )),
                        _ => Mut::Syndrome(r.next() as u8),
                    }
                } else if sr && r.pct(50) {
                    // Selective repeat places a SEND packet ahead of ePSN in the receive WQE its RSN names.
                    let n = self.v.rq.len() as u32;
                    Mut::Rsn(pick!(
                        r,
                        [
                            fr.rsn + 1,
                            fr.rsn + n.max(1) - 1,
                            fr.rsn + n,
                            fr.rsn.wrapping_sub(1),
                            1 << 16 | fr.rsn,
                            r.next() as u32
                        ]
                    ))
                } else {
                    Mut::Ssn(pick!(r, [fr.ssn + 1, fr.ssn.wrapping_sub(1), 0, PSN_MASK, 1 << 24, r.next() as u32]))
                }
            }
            Class::Va => {
                let (base, len) = (self.regions[R_VW].mr.addr(), self.regions[R_VW].mr.len() as u64);
                let p = plen as u64;
                let x = self.regions[R_X].mr.addr();
                let small = self.regions[R_VSMALL].mr.addr();
                let (va, what) = pick!(
                    r,
                    [
                        (base.wrapping_sub(1), "one byte below the MR"),
                        (base.wrapping_sub(p), "just below the MR"),
                        (base + len - p, "last bytes of the MR"),
                        (base + len - p + 1, "one byte past the MR's end"),
                        (base + len, "at the MR's end"),
                        (base + len - 1, "last byte of the MR"),
                        (base + len + 4096, "a page past the MR"),
                        (u64::MAX, "2^64 - 1"),
                        (u64::MAX - p + 1, "ends exactly at 2^64"),
                        (u64::MAX - 63, "2^64 - 64"),
                        (0, "zero"),
                        (1 << 63, "2^63"),
                        (x, "inside the third PD's MR"),
                        (small, "inside the small MR"),
                        (r.next(), "random"),
                        (base + r.below(len), "random inside the MR"),
                    ]
                );
                Mut::Va(va, what)
            }
            Class::Rkey => {
                let key = if fr.rkey != 0 { fr.rkey } else { self.regions[R_VW].mr.rkey() };
                let inside = |r: &mut Rng, reg: &Region| reg.mr.addr() + r.below(reg.mr.len() as u64);
                match r.below(11) {
                    0 => Mut::Rkey(key ^ r.nonzero8() as u32, "tag changed"),
                    10 => Mut::Rkey(regs::rkey_of(key), "the lkey in place of the rkey"),
                    1 => Mut::Rkey(regs::mr_key(self.unused_mr_index, r.next() as u8), "unregistered MR index"),
                    2 => Mut::Rkey(self.stale_key, "key of a deregistered MR"),
                    3 => Mut::RkeyVa(
                        self.regions[R_X].mr.rkey(),
                        inside(r, &self.regions[R_X]),
                        "third PD's MR (other PD)",
                    ),
                    4 => Mut::RkeyVa(
                        self.regions[R_GDST].mr.rkey(),
                        inside(r, &self.regions[R_GDST]),
                        "good pair's MR (other PD)",
                    ),
                    5 => Mut::RkeyVa(
                        self.regions[R_VRO].mr.rkey(),
                        inside(r, &self.regions[R_VRO]),
                        "victim MR without remote access",
                    ),
                    6 => Mut::RkeyVa(
                        self.regions[R_VSMALL].mr.rkey(),
                        inside(r, &self.regions[R_VSMALL]),
                        "victim's small MR",
                    ),
                    7 => Mut::Rkey(key | (r.range(1, 0xFFFF) as u32) << 16, "bits 31:16 set"),
                    8 => Mut::Rkey(0, "zero"),
                    _ => Mut::Rkey(u32::MAX, "all ones"),
                }
            }
            Class::Dqpn => {
                let u = r.pick(&self.unused_qpns);
                let (q, what) = pick!(
                    r,
                    [
                        (u, "unused QPN"),
                        (self.victim_qpn | 0x100, "victim QPN + 256"),
                        (r.range(256, PSN_MASK as u64) as u32, "QPN >= 256"),
                        (PSN_MASK, "0xFFFFFF"),
                        (self.victim_qpn | 1 << 23, "victim QPN with bit 23"),
                        (0, "QP 0"),
                        (1, "QP 1"),
                    ]
                );
                // Never the good QP: its traffic is verified separately.
                Mut::Dqpn(if q == self.good_b_qpn { u } else { q }, what)
            }
            Class::Opcode => Mut::Opcode(pick!(
                r,
                [
                    r.next() as u8,
                    r.next() as u8,
                    opcode::SEND_FIRST,
                    opcode::SEND_MIDDLE,
                    opcode::SEND_LAST,
                    opcode::SEND_ONLY,
                    opcode::WRITE_FIRST,
                    opcode::WRITE_MIDDLE,
                    opcode::WRITE_LAST,
                    opcode::WRITE_ONLY,
                    opcode::SEND_LAST_IMM,
                    opcode::SEND_ONLY_IMM,
                    opcode::WRITE_LAST_IMM,
                    opcode::WRITE_ONLY_IMM,
                    0x0C,
                    0x0D,
                    0x0E,
                    0x0F,
                    0x10,
                    opcode::ACK,
                    0x12,
                    0x13,
                    0x14,
                    0x15,
                    0x16,
                    0x17,
                    0x18,
                    0x1F,
                    0x24,
                    0x64,
                    0x81,
                    0xFF,
                ]
            )),
            Class::PayloadLen => {
                let k = r.below(m / 64);
                let max = MAX_FRAME - HDR_LEN - ICRC_LEN;
                let n = pick!(
                    r,
                    [
                        0,
                        1,
                        2,
                        3,
                        4,
                        m as usize - 1,
                        m as usize,
                        m as usize + 1,
                        2 * m as usize,
                        (64 * k + 58) as usize,
                        (64 * k + 59) as usize,
                        (64 * k + 60) as usize,
                        8191,
                        8192,
                        8193,
                        max,
                        r.below(max as u64 + 1) as usize,
                    ]
                );
                Mut::Payload(n, r.pct(50))
            }
            Class::Resize => {
                let n = if r.pct(50) && flen > 1 {
                    let v = pick!(
                        r,
                        [
                            r.range(1, flen as u64 - 1) as usize,
                            14,
                            34,
                            42,
                            54,
                            60,
                            64,
                            127,
                            128,
                            131,
                            132,
                            flen - 4,
                            flen - 1,
                            flen.saturating_sub(64)
                        ]
                    );
                    v.clamp(1, flen - 1)
                } else {
                    (flen + pick!(r, [1, 2, 3, 4, 8, 60, 64, r.range(1, 300) as usize])).min(MAX_FRAME)
                };
                Mut::Resize(n, r.pct(60))
            }
            Class::DstAddr => {
                if r.pct(50) {
                    Mut::DstMac(pick!(r, [mac_of(PEER), mac_of(2), r.unicast_mac()]))
                } else {
                    let rnd = (r.next() as u32).to_be_bytes();
                    Mut::DstIp(pick!(r, [ip_of(PEER), ip_of(2), [0, 0, 0, 0], [255, 255, 255, 255], rnd]))
                }
            }
            Class::SrcAddr => {
                if r.pct(50) {
                    Mut::SrcMac(pick!(r, [mac_of(NIC), mac_of(2), r.unicast_mac()]))
                } else {
                    let rnd = (r.next() as u32).to_be_bytes();
                    Mut::SrcIp(pick!(r, [ip_of(NIC), ip_of(2), [0, 0, 0, 0], rnd]))
                }
            }
            Class::IpChecksum => Mut::IpCsumXor(r.range(1, 0xFFFF) as u16),
            Class::FlipBytes => {
                let n = r.range(1, 4);
                let v = (0..n)
                    .map(|_| {
                        let o = if r.pct(70) { r.below(HDR_LEN.min(flen) as u64) } else { r.below(flen as u64) };
                        (o as usize, r.nonzero8())
                    })
                    .collect();
                Mut::Flip(v, r.pct(50))
            }
            Class::HdrFields => {
                let b1 = |r: &mut Rng| vec![r.next() as u8];
                let b2 = |r: &mut Rng| (r.next() as u16).to_be_bytes().to_vec();
                let flags = (r.next() as u8 & 0xCF) | (pad as u8) << 4;
                let (what, o, v) = match r.below(17) {
                    0 => (
                        "ethertype",
                        off::ETH_TYPE,
                        pick!(r, [vec![0x86, 0xDD], vec![0x81, 0x00], vec![0x88, 0x15], b2(r)]),
                    ),
                    1 => ("IP version/IHL", off::IP, pick!(r, [vec![0x46], vec![0x65], vec![0x44], vec![0x55]])),
                    2 => ("IP TOS/ECN", off::IP_TOS, b1(r)),
                    3 => ("IP identification", off::IP + 4, b2(r)),
                    4 => (
                        "IP flags/fragment offset",
                        off::IP + 6,
                        pick!(r, [vec![0x20, 0x00], vec![0x00, 0x08], vec![0x80, 0x00], vec![0x00, 0x00]]),
                    ),
                    5 => ("IP TTL", off::IP_TTL, pick!(r, [vec![0], vec![1], vec![255]])),
                    6 => ("IP protocol", off::IP_PROTO, pick!(r, [vec![6], vec![1], b1(r)])),
                    7 => ("UDP source port", off::UDP_SPORT, b2(r)),
                    8 => {
                        ("UDP destination port", off::UDP_DPORT, pick!(r, [vec![0x12, 0xB6], vec![0x12, 0xB8], b2(r)]))
                    }
                    9 => ("UDP checksum", off::UDP_CSUM, vec![r.nonzero8(), r.next() as u8]),
                    10 => ("BTH SE/M/TVer (pad kept)", off::BTH_FLAGS, vec![flags]),
                    11 => ("BTH P_Key", off::BTH_PKEY, b2(r)),
                    12 => ("BTH FECN/BECN/resv", off::BTH_RESV8A, b1(r)),
                    13 => ("BTH AckReq/resv7", off::BTH_ACKREQ, b1(r)),
                    14 => ("timestamp", off::RXT_TS, (0..8).map(|_| r.next() as u8).collect()),
                    15 => ("reserved extension bytes", 86 + r.below(42) as usize, vec![r.nonzero8()]),
                    _ => ("BTH dest QPN high byte", off::BTH_DQPN, b1(r)),
                };
                Mut::SetBytes(what, o, v)
            }
            Class::Icrc => Mut::IcrcXor(r.nonzero8()),
        }
    }

    /// Encodes `base` with `muts` applied, then fixes the IPv4 checksum and the ICRC (unless told not to).
    fn build(&self, base: &Frame, muts: &[Mut], fill_seed: u64) -> Vec<u8> {
        let mut fr = base.clone();
        for m in muts.iter().filter(|m| m.on_frame()) {
            m.apply_frame(&mut fr, self.mtu, self.seed);
        }
        let mut b = fr.encode();
        for m in muts.iter().filter(|m| !m.on_frame()) {
            m.apply_bytes(&mut b, fill_seed);
        }
        let keep_csum = muts.iter().any(|m| matches!(m, Mut::IpCsumXor(_) | Mut::Flip(_, false)));
        if !keep_csum && b.len() >= off::IP + 20 {
            let c = wire::ipv4_checksum(&b[off::IP..off::IP + 20]);
            b[off::IP_CSUM..off::IP_CSUM + 2].copy_from_slice(&c.to_be_bytes());
        }
        let keep_icrc = muts.iter().any(|m| matches!(m, Mut::StaleIcrc | Mut::IcrcXor(_)));
        let n = b.len();
        if !keep_icrc && n >= HDR_LEN + ICRC_LEN {
            let c = wire::icrc(&b);
            b[n - 4..].copy_from_slice(&c.to_le_bytes());
        }
        for m in muts {
            if let Mut::IcrcXor(x) = m {
                if n >= 4 {
                    b[n - 4] ^= x;
                }
            }
        }
        b
    }

    // ------------------------------------------------------------ host side

    /// Keeps the victim's RQ at its target depth; re-fills each buffer with a fresh sentinel.
    fn refill_rq(&mut self) {
        while self.v.rq.len() < self.rq_target {
            let free: Vec<usize> = (0..self.slots.len()).filter(|&s| !self.slot_posted[s]).collect();
            if free.is_empty() {
                break;
            }
            let s = self.rng.pick(&free);
            let (o, l) = self.slots[s];
            let fresh = pattern::make(self.seed, pattern::stream(2000, self.next_wr_id), l as usize);
            self.regions[R_VRECV].fill(o, &fresh);
            let wr_id = self.next_wr_id;
            self.next_wr_id += 1;
            let mr = &self.regions[R_VRECV].mr;
            self.qv
                .post_recv(&RecvWr { wr_id, sg_list: &[mr.sge(o as u64, l)] })
                .unwrap_or_else(|e| panic!("post_recv on the victim: {e}"));
            self.slot_posted[s] = true;
            self.v.rq.push_back(Rwqe { wr_id, slot: s, off: o, len: l });
            self.dirty = true;
        }
    }

    /// Resets the victim QP and reconnects it with a fresh ePSN (after a
    /// fatal NAK, or to resynchronize). Completions the NIC wrote for the
    /// failed message may be errors; anything else is reported.
    fn reset_victim(&mut self, problems: &mut Vec<String>) {
        self.run_cycles(HOST_SETTLE);
        match self.cq_v.poll_cq_vec(64) {
            Ok(wcs) => {
                for wc in wcs {
                    if wc.status == WcStatus::Success
                        || wc.qp_num != self.victim_qpn
                        || !self.v.rq.iter().any(|w| w.wr_id == wc.wr_id)
                    {
                        problems.push(format!("unexpected completion on the victim's CQ around its reset: {wc:?}"));
                    }
                }
            }
            Err(e) => problems.push(format!("victim CQ: {e}")),
        }
        let epsn = Self::pick_psn(&mut self.rng);
        let sq_psn = self.rng.below(1 << 24) as u32;
        let r = (|| -> rnic::Result<()> {
            self.qv.modify(&QpAttr::to(QpState::Reset))?;
            self.qv.modify(&QpAttr { selective_repeat: Some(self.cfg.victim_sr), ..QpAttr::init() })?;
            self.qv.modify(&QpAttr::rtr(nic_addr(PEER), self.peer_qpn, epsn, self.cfg.victim_mtu))?;
            self.qv.modify(&QpAttr::rts(sq_psn))
        })();
        if let Err(e) = r {
            panic!("cannot reset the victim QP: {e}");
        }
        for w in &self.v.rq {
            self.slot_posted[w.slot] = false;
        }
        self.v = Victim { epsn, ..Default::default() };
        self.expect_cqe.clear();
        self.plan = None;
        self.last_read = None;
        self.dirty = true;
        self.stats.resets += 1;
    }

    /// Software recovery: lets the victim's host act on the reports (its
    /// commands, each applied by the NIC, answered and acknowledged) until
    /// nothing moves, and checks that exactly the model's commands happened:
    /// one CtrlQ answer and one ACK with the model's ePSN and MSN each, no
    /// other counter.
    fn settle_sw(&mut self, problems: &mut Vec<String>) {
        let epsn0 = self.v.epsn;
        let want = self.v.host_commands();
        // The forged requester's message moves on as far as ePSN did.
        let moved = self.v.epsn.wrapping_sub(epsn0) & PSN_MASK;
        if let Some(p) = &mut self.plan {
            p.next = (p.next + moved).min(p.pkts);
        }
        for _ in 0..want.len() + 2 {
            if let Err(e) = self.ctx_v.progress() {
                problems.push(format!("victim host's slow path: {e}"));
                return;
            }
            let mut c = self.nics.cluster.lock();
            c.run(SETTLE);
            let (mut quiet, mut spent) = (0, 0);
            while quiet < QUIET && spent < MAX_SETTLE {
                c.run(16);
                spent += 16;
                let busy = c.nic(NIC).dma_in_flight() + c.nic(PEER).dma_in_flight();
                quiet = if busy == 0 { quiet + 16 } else { 0 };
            }
        }
        self.stats.sw_commands += want.len() as u64;
        let d = match self.counter_deltas() {
            Ok(d) => d,
            Err(e) => {
                problems.push(e);
                return;
            }
        };
        let moved: Vec<String> = self
            .ctr
            .regs
            .iter()
            .zip(&d)
            .filter(|((_, o), &x)| x != 0 && !(*o == counters::CTRLQ_ENTRIES && x == want.len() as u64))
            .map(|((n, _), x)| format!("{n}+{x}"))
            .collect();
        let acks: Vec<(u8, u32, u32)> = self
            .take_caps()
            .iter()
            .filter_map(|f| Frame::decode(f).ok())
            .map(|a| (a.syndrome, a.epsn, a.msn))
            .collect();
        let want_acks: Vec<(u8, u32, u32)> = want.iter().map(|&(e, m)| (wire::syndrome::ACK, e, m)).collect();
        if !moved.is_empty() || acks != want_acks {
            problems.push(format!(
                "software recovery: the host's commands should give ACKs (syndrome, ePSN, MSN) {want_acks:x?} and {} CtrlQ answers; the victim sent {acks:x?}, counters {}",
                want.len(),
                if moved.is_empty() { "as expected".into() } else { moved.join(" ") }
            ));
        }
    }

    /// A verified WRITE and SEND on the good pair; NIC1's counters must show exactly their packets.
    /// Returns the problems, and whether the good pair is stuck (nothing can follow).
    fn good_round(&mut self) -> (Vec<String>, bool) {
        let mut problems = Vec::new();
        let gm = GOOD_MTU.bytes() as usize;
        self.good_round_no += 1;
        let round = self.good_round_no;
        let pick_len = |r: &mut Rng, avoid: bool| loop {
            let l = if r.pct(50) {
                pick!(r, [1, 63, 64, 65, gm - 1, gm, gm + 1, 2 * gm + 17, 3 * gm, 4 * gm])
            } else {
                r.range(1, 4 * gm as u64) as usize
            };
            if !(avoid && residue_hit(l, gm)) {
                break l;
            }
        };
        let avoid = self.cfg.avoid_ring_residue;
        let wlen = pick_len(&mut self.rng, avoid);
        let slen = pick_len(&mut self.rng, avoid);
        let woff = self.rng.below((self.regions[R_GDST].mr.len() - wlen) as u64 + 1) as usize;
        let roff = self.rng.below((self.regions[R_GRECV].mr.len() - slen) as u64 + 1) as usize;
        let wdata = pattern::make(self.seed, pattern::stream(7, 2 * round), wlen);
        let sdata = pattern::make(self.seed, pattern::stream(7, 2 * round + 1), slen);
        let half = 4 * gm;
        // One good WRITE in three gathers from two entries: its tail from past the SEND's bytes.
        let cut = (wlen > 1 && self.sg_rng.pct(33)).then(|| self.sg_rng.range(1, wlen as u64 - 1) as usize);
        let tail_at = cut.map(|c| 2 * half + self.sg_rng.below((half - (wlen - c)) as u64 + 1) as usize);
        match (cut, tail_at) {
            (Some(c), Some(t)) => {
                self.regions[R_GSRC].fill(0, &wdata[..c]);
                self.regions[R_GSRC].fill(t, &wdata[c..]);
            }
            _ => self.regions[R_GSRC].fill(0, &wdata),
        }
        self.regions[R_GSRC].fill(half, &sdata);
        // Nothing may have reached NIC1 since the last frame.
        match self.counter_deltas() {
            Ok(d) if d.iter().any(|&x| x != 0) => {
                problems.push(format!("NIC1 counters moved with no frame sent: {}", self.deltas_line(&d)))
            }
            Ok(_) => {}
            Err(e) => return (vec![e], true),
        }
        let late = self.take_caps().iter().filter(|f| f.get(off::BTH).is_some_and(|&o| is_read_response(o))).count();
        if late > 0 {
            problems.push(format!(
                "NIC1 sent {late} READ response packet(s) after the last frame was checked ({})",
                self.prev_frame
            ));
        }
        // Frames the NIC must drop, injected while the good transfers are in
        // flight: their beats share the RX ring with the good packets.
        // (None in the first round, which shows that the good pair works at all.)
        let n_drop = if round == 1 { 0 } else { self.rng.range(2, 6) };
        let (drops, drop_muts): (Vec<Vec<u8>>, Vec<Mut>) = (0..n_drop).filter_map(|_| self.drop_frame()).unzip();
        let (gdst_addr, gdst_key) = (self.regions[R_GDST].mr.addr(), self.regions[R_GDST].mr.rkey());
        let posted = (|| -> rnic::Result<()> {
            self.qb.post_recv(&RecvWr {
                wr_id: round,
                sg_list: &[self.regions[R_GRECV].mr.sge(roff as u64, slen as u32)],
            })?;
            let src = &self.regions[R_GSRC].mr;
            self.qa.post_send_batch(&[
                SendWr {
                    send_flags: rnic::SendFlags::SIGNALED,
                    wr_id: 2 * round,
                    opcode: WrOpcode::RdmaWrite { remote_addr: gdst_addr + woff as u64, rkey: gdst_key },
                    sg_list: match (cut, tail_at) {
                        (Some(c), Some(t)) => [src.sge(0, c as u32), src.sge(t as u64, (wlen - c) as u32)].into(),
                        _ => src.sge(0, wlen as u32).into(),
                    },
                },
                SendWr {
                    send_flags: rnic::SendFlags::SIGNALED,
                    wr_id: 2 * round + 1,
                    opcode: WrOpcode::Send,
                    sg_list: src.sge(half as u64, slen as u32).into(),
                },
            ])
        })();
        if let Err(e) = posted {
            return (vec![format!("good round {round}: posting failed: {e}")], true);
        }
        for f in &drops {
            let gap = self.rng.range(100, 700);
            let mut c = self.nics.cluster.lock();
            c.run(gap);
            c.inject_frame(NIC, f);
        }
        let bytes = (wlen + slen) as u64;
        let gathered = cut.map(|c| format!(" gathered {c} + {} B", wlen - c)).unwrap_or_default();
        let what = format!("good round {round} (WRITE {wlen} B{gathered} at +{woff}, SEND {slen} B into +{roff})");
        match self.cq_ga.wait_cq(2, timeout_for(bytes)) {
            Ok(wcs) => {
                let got: Vec<_> = wcs.iter().map(|c| (c.wr_id, c.status, c.opcode)).collect();
                let want = vec![
                    (2 * round, WcStatus::Success, WcOpcode::RdmaWrite),
                    (2 * round + 1, WcStatus::Success, WcOpcode::Send),
                ];
                if got != want {
                    problems.push(format!("{what}: requester completions {wcs:?}"));
                }
            }
            Err(e) => return (vec![format!("{what}: the good QP did not complete: {e}")], true),
        }
        match self.cq_gb.wait_cq(1, timeout_for(bytes)) {
            Ok(wcs) => {
                let c = wcs[0];
                if (c.wr_id, c.status, c.opcode, c.byte_len) != (round, WcStatus::Success, WcOpcode::Recv, slen as u32)
                {
                    problems.push(format!("{what}: receive completion {c:?}"));
                }
            }
            Err(e) => return (vec![format!("{what}: the good QP's receive did not complete: {e}")], true),
        }
        self.regions[R_GDST].put(woff, &wdata);
        self.regions[R_GRECV].put(roff, &sdata);
        self.run_cycles(HOST_SETTLE);
        let pk = (packets(wlen, gm) + packets(slen, gm)) as u64;
        let nd = drops.len() as u64;
        match self.counter_deltas() {
            Ok(d) => {
                let mut dropped = 0;
                let mut errs = Vec::new();
                for ((n, o), &x) in self.ctr.regs.iter().zip(&d).skip(1) {
                    if *o == counters::RX_ICRC_ERR || *o == counters::RX_HDR_ERR {
                        dropped += x;
                    } else if x != 0 {
                        errs.push(format!("{n}+{x}"));
                    }
                }
                if d[0] != pk + nd || dropped != nd || !errs.is_empty() {
                    problems.push(format!(
                        "{what} with {nd} frames to drop injected meanwhile ({drop_muts:?}): NIC1 counters {} (expected RX_FRAMES+{}, {nd} of them dropped as ICRC/header errors, nothing else)",
                        self.deltas_line(&d),
                        pk + nd
                    ));
                }
            }
            Err(e) => problems.push(e),
        }
        for f in self.take_caps() {
            match Frame::decode(&f) {
                Ok(a) if a.is_ack() && a.dqpn == self.good_a_qpn && a.syndrome == wire::syndrome::ACK => {}
                Ok(a) => problems.push(format!(
                    "{what}: NIC1 sent {} to QP {} syndrome {:#04x}",
                    op_name(a.opcode),
                    a.dqpn,
                    a.syndrome
                )),
                Err(e) => problems.push(format!("{what}: NIC1 sent a malformed frame: {e}")),
            }
        }
        problems.extend(self.check_violations());
        problems.extend(self.check_memory());
        problems.extend(self.check_peer_dup());
        self.stats.good_rounds += 1;
        self.stats.good_gathered += cut.is_some() as u64;
        self.stats.good_bytes += bytes;
        (problems, false)
    }

    /// A good round; its problems stop the run unless keep-going can resynchronize.
    fn good(&mut self, when: &str) -> Result<(), String> {
        let (p, stuck) = self.good_round();
        if p.is_empty() {
            return Ok(());
        }
        let msg = format!("good pair, {when}: {}", p.join(" | "));
        if stuck || !self.keep_going {
            return Err(msg);
        }
        eprintln!("FUZZ FAILURE in {} (base seed {:#x}): {msg}", self.cfg.name, self.base_seed);
        self.failures.push(msg);
        self.resync()
    }

    /// A frame the model says must be dropped at the RX front end or for an
    /// unknown QP (no state change, no answer), or None if none came up.
    /// Drawn from the test's own classes that can make one (unknown QPNs otherwise).
    fn drop_frame(&mut self) -> Option<(Vec<u8>, Mut)> {
        use Outcome::*;
        let able = [
            Class::DstAddr,
            Class::IpChecksum,
            Class::Icrc,
            Class::Dqpn,
            Class::Resize,
            Class::Lengths,
            Class::HdrFields,
            Class::SrcAddr,
            Class::FlipBytes,
        ];
        let mut classes: Vec<Class> = self.cfg.classes.iter().copied().filter(|c| able.contains(c)).collect();
        if classes.is_empty() {
            classes.push(Class::Dqpn);
        }
        for _ in 0..20 {
            let p = self.new_plan();
            let base = self.base_request(&p, 0, self.v.epsn);
            let c = self.rng.pick(&classes);
            let m = self.choose(c, &base);
            let fill = self.rng.next();
            let b = self.build(&base, std::slice::from_ref(&m), fill);
            let a = self.judge(&b).allowed;
            if !a.is_empty() && !OUTCOMES.iter().any(|&o| a.has(o) && o != Hdr && o != Icrc) {
                return Some((b, m));
            }
        }
        None
    }

    // ------------------------------------------------------------ checks

    fn check_memory(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for r in &self.regions {
            let got = r.read();
            let bad: Vec<usize> = (0..got.len()).filter(|&i| got[i] != r.expect[i]).collect();
            if bad.is_empty() {
                continue;
            }
            let o = bad[0];
            let posted = |o: usize| {
                self.v.rq.iter().any(|w| o >= w.off && o < w.off + w.len as usize)
                    || self.just_consumed.is_some_and(|(a, l)| o >= a && o < a + l)
            };
            let in_window = match r.window {
                Window::None => false,
                Window::Whole => true,
                Window::Posted => posted(o),
            };
            let outside = bad.iter().filter(|&&i| match r.window {
                Window::None => true,
                Window::Whole => false,
                Window::Posted => !posted(i),
            });
            let n_out = outside.count();
            let last = *bad.last().unwrap();
            problems.push(format!(
                "memory: {} (NIC{}, {} bytes): {} bytes differ in [{o:#x}, {last:#x}], {} of them OUTSIDE the victim's window; first at offset {o:#x} ({}): got {:#04x}, expected {:#04x}",
                r.name,
                r.nic,
                got.len(),
                bad.len(),
                n_out,
                if in_window { "inside the victim's window: not what the accepted packets wrote" } else { "outside any window a valid packet of the victim could write" },
                got[o],
                r.expect[o]
            ));
        }
        problems
    }

    /// DMA shadow violations not reported yet.
    fn check_violations(&mut self) -> Vec<String> {
        let v = self.nics.violations();
        let new: Vec<String> =
            v.iter().skip(self.violations_seen).map(|v| format!("DMA shadow violation: {v}")).collect();
        self.violations_seen = v.len();
        if new.len() > 4 {
            let n = new.len();
            return new.into_iter().take(4).chain([format!("... and {} more DMA shadow violations", n - 4)]).collect();
        }
        new
    }

    /// Receive completions of the victim: exactly the expected ones, in order.
    fn check_cq(&mut self, fatal: bool, problems: &mut Vec<String>) {
        let wcs = match self.cq_v.poll_cq_vec(64) {
            Ok(w) => w,
            Err(e) => {
                problems.push(format!("victim CQ: {e}"));
                return;
            }
        };
        for wc in wcs {
            match self.expect_cqe.front() {
                Some(&(id, len, op, imm))
                    if wc.wr_id == id
                        && wc.status == WcStatus::Success
                        && wc.opcode == op
                        && wc.qp_num == self.victim_qpn
                        && len.is_none_or(|l| l == wc.byte_len)
                        && wc.wc_flags.contains(WcFlags::WITH_IMM) == imm.is_some()
                        && imm.is_none_or(|i| i == wc.imm_data) =>
                {
                    self.expect_cqe.pop_front();
                }
                // After a fatal NAK the receive WQE in use may complete in error (then the library flushes the rest).
                _ if fatal && wc.status != WcStatus::Success && self.v.rq.iter().any(|w| w.wr_id == wc.wr_id) => {}
                e => problems.push(format!("unexpected victim completion {wc:?} (expected {e:?})")),
            }
        }
        if let Some(e) = self.expect_cqe.front() {
            problems.push(format!(
                "missing victim receive completion: wr_id {} byte_len {:?} {:?} imm {:?}",
                e.0, e.1, e.2, e.3
            ));
            self.expect_cqe.clear();
        }
    }

    /// The outcome the counters (and the NAK syndrome) show.
    fn observed(&self, d: &[u64], naks: &[u8]) -> Result<Outcome, String> {
        use Outcome::*;
        let moved: Vec<(String, u32, u64)> = self
            .ctr
            .regs
            .iter()
            .zip(d)
            .skip(1)
            .filter(|(_, &x)| x != 0)
            .map(|((n, o), &x)| (n.clone(), *o, x))
            .collect();
        if let Some((n, _, x)) = moved.iter().find(|m| m.2 > 1) {
            return Err(format!("{n} grew by {x} for one frame"));
        }
        let inv_nak = naks.contains(&wire::syndrome::NAK_INV_REQ);
        let offs: Vec<u32> = moved.iter().map(|m| m.1).collect();
        if offs.contains(&counters::RX_ACKS) {
            let rest: Vec<u32> = offs.iter().copied().filter(|&o| o != counters::RX_ACKS).collect();
            return match rest.as_slice() {
                [] | [counters::RX_HDR_ERR] | [counters::RX_NAK] => Ok(Ack),
                _ => Err(format!("ACK counted together with {rest:x?}")),
            };
        }
        let psn_nak = naks.contains(&wire::syndrome::NAK_PSN_SEQ);
        match offs.as_slice() {
            [counters::RX_PSN_ERR, counters::RX_OOO_PLACED] | [counters::RX_OOO_PLACED, counters::RX_PSN_ERR] => {
                Ok(Placed)
            }
            [counters::RX_DUP] if psn_nak => Ok(PlacedDup),
            [] if inv_nak => Err("NAKed INV_REQ but counted by no counter".into()),
            [] => Ok(Accept),
            [o] => match *o {
                counters::RX_ICRC_ERR => Ok(Icrc),
                counters::RX_HDR_ERR if inv_nak => Ok(Inv),
                counters::RX_HDR_ERR => Ok(Hdr),
                counters::RX_DROP_NOBUF => {
                    Err("dropped for lack of RX buffer (RX_DROP_NOBUF) while the NIC was idle".into())
                }
                counters::RX_PSN_ERR => Ok(Psn),
                counters::RX_ACCESS_ERR => Ok(Access),
                counters::RX_DUP => Ok(Dup),
                counters::RX_RNR => Ok(Rnr),
                counters::RX_NAK => Err("RX_NAK moved without RX_ACKS".into()),
                // A counter added to the contract: an invalid-request NAK or another kind of drop.
                _ if inv_nak => Ok(Inv),
                _ => Ok(Hdr),
            },
            _ => Err(format!(
                "counted by several counters: {}",
                moved.iter().map(|m| m.0.as_str()).collect::<Vec<_>>().join(", ")
            )),
        }
    }

    /// The victim's responses must fit the outcome (`vb`: the victim before
    /// the frame, `acc`: the effect of an accepted packet).
    fn check_responses(
        &self,
        o: Outcome,
        x: &Facts,
        vb: &Victim,
        acc: Option<&Accepted>,
        resp: &[Frame],
        problems: &mut Vec<String>,
    ) {
        use Outcome::*;
        let syns: Vec<u8> = resp.iter().map(|f| f.syndrome).collect();
        // Selective repeat: packets placed out of order right behind an
        // accepted one (a READ: behind its PSNs) slide in; ePSN and MSN the
        // ACK must then carry.
        let (slid, epsn, msn) = match acc {
            Some(a) => {
                let mut v = vb.clone();
                let out = v.accept(a);
                (out.slid, v.epsn, v.msn)
            }
            None => (0, (vb.epsn + 1) & PSN_MASK, vb.msn),
        };
        // A READ request or response is never re-ACKed as a duplicate.
        let no_reack = x.opcode == opcode::READ_REQUEST || is_read_response(x.opcode);
        // A NAK of a packet placed out of order: flagged, ePSN and MSN unchanged.
        let placed_nak = |f: &Frame| {
            f.syndrome == wire::syndrome::NAK_PSN_SEQ
                && f.ack_flags == wire::ack_flags::PLACED
                && f.psn == x.psn
                && f.epsn == vb.epsn
                && f.msn == vb.msn
        };
        let ok = match o {
            // Packets that slid in are acknowledged with the new ePSN and MSN, asked for or not.
            Accept if slid > 0 => {
                resp.len() == 1
                    && syns[0] == wire::syndrome::ACK
                    && resp[0].psn == x.psn
                    && resp[0].epsn == epsn
                    && resp[0].msn == msn
            }
            Accept if x.ack_req => {
                resp.len() == 1
                    && syns[0] == wire::syndrome::ACK
                    && resp[0].psn == x.psn
                    && resp[0].epsn == epsn
                    && resp[0].msn == msn
            }
            Accept => resp.is_empty(),
            Dup if no_reack => resp.is_empty(),
            Dup => resp.len() <= 1 && syns.iter().all(|&s| s == wire::syndrome::ACK),
            Psn => {
                resp.len() <= 1 && resp.iter().all(|f| f.syndrome == wire::syndrome::NAK_PSN_SEQ && f.ack_flags == 0)
            }
            Placed | PlacedDup => resp.len() == 1 && placed_nak(&resp[0]),
            Access => {
                resp.len() == 1 && (syns[0] == wire::syndrome::NAK_REM_ACCESS || syns[0] == wire::syndrome::NAK_REM_OP)
            }
            Rnr => resp.len() == 1 && syns[0] & 0xE0 == 0x20,
            Inv => resp.len() == 1 && syns[0] == wire::syndrome::NAK_INV_REQ,
            Icrc | Hdr | Ack => resp.is_empty(),
        };
        if !ok {
            let v: Vec<String> =
                resp.iter().map(|f| format!("syndrome {:#04x} psn {:#x} msn {}", f.syndrome, f.psn, f.msn)).collect();
            problems.push(format!(
                "the victim's responses do not fit outcome {o:?} (AckReq={}): [{}]",
                x.ack_req,
                v.join("; ")
            ));
        }
    }

    /// The READ response packets the victim sent must be exactly `want`, in order.
    fn check_read_responses(&self, want: &[ReadRsp], got: &[Frame], problems: &mut Vec<String>) {
        if want.len() != got.len() {
            problems.push(format!(
                "the victim sent {} READ response packet(s), the model expects {}{}",
                got.len(),
                want.len(),
                if want.is_empty() { " (this frame is not a READ it answers)" } else { "" }
            ));
            return;
        }
        let peer = (mac_of(PEER), u32::from_be_bytes(ip_of(PEER)), self.peer_qpn);
        for (i, (w, g)) in want.iter().zip(got).enumerate() {
            let mut bad = Vec::new();
            if g.opcode != w.opcode {
                bad.push(format!("opcode {} (expected {})", op_name(g.opcode), op_name(w.opcode)));
            }
            if (g.dst_mac, g.dst_ip, g.dqpn) != peer {
                bad.push(format!(
                    "sent to QP {} at {:x?}/{:#x}, not the peer QP {}",
                    g.dqpn, g.dst_mac, g.dst_ip, peer.2
                ));
            }
            if g.psn != w.psn {
                bad.push(format!("PSN {:#x} (expected {:#x})", g.psn, w.psn));
            }
            if g.va != w.va {
                bad.push(format!("RETH VA {:#x} (expected {:#x})", g.va, w.va));
            }
            if g.rkey != w.rkey {
                bad.push(format!("RETH rkey {:#x} (expected the lkey {:#x})", g.rkey, w.rkey));
            }
            if g.msg_len != w.msg_len {
                bad.push(format!("RETH length {} (expected {})", g.msg_len, w.msg_len));
            }
            if g.ssn != w.ssn {
                bad.push(format!("SSN {:#x} (expected {:#x})", g.ssn, w.ssn));
            }
            if g.psn_offset != w.psn_offset {
                bad.push(format!("PSN_OFFSET {} (expected {})", g.psn_offset, w.psn_offset));
            }
            if g.payload != w.payload {
                let at = g.payload.iter().zip(&w.payload).position(|(a, b)| a != b);
                bad.push(format!(
                    "payload of {} B differs from the {} B expected{}",
                    g.payload.len(),
                    w.payload.len(),
                    at.map_or(String::new(), |o| format!(" (first at byte {o})"))
                ));
            }
            if !bad.is_empty() {
                problems.push(format!("READ response packet {i} of {}: {}", want.len(), bad.join(", ")));
            }
        }
    }

    // ------------------------------------------------------------ one frame

    fn one_frame(&mut self, idx: u64) -> Result<(), String> {
        // Build the frame. A READ frame (between messages, rarely inside one)
        // is built and mutated with the READ generator swapped in, so the
        // other frames draw what they drew before READ existed.
        let read_pct = if self.v.cur.is_none() { self.cfg.read_pct } else { self.cfg.read_pct.min(1) };
        let is_read = self.rd_rng.pct(read_pct);
        if is_read {
            std::mem::swap(&mut self.rng, &mut self.rd_rng);
        }
        let is_ack = !is_read && self.rng.pct(self.cfg.ack_pct);
        let (base, from_plan, ahead) = if is_read {
            (self.base_read(), false, false)
        } else if is_ack {
            (self.base_ack(), false, false)
        } else {
            // A rejected packet is sent again (mutated anew) until it gets in;
            // abandoning a message halfway is an opcode-sequence test of its own.
            // A SEND not started yet is re-planned if the receive buffer now at
            // the head of the RQ is too small for it (the base traffic is valid).
            let head = self.v.rq.front().map(|w| w.len);
            let restart = self.plan.as_ref().is_none_or(|p| {
                p.next >= p.pkts
                    || p.retries > 50
                    || (p.kind == Kind::Send && p.next == 0 && head.is_some_and(|l| l < p.len))
            }) || self.rng.pct(self.cfg.restart_pct);
            if restart {
                let p = self.new_plan();
                self.plan = Some(p);
            }
            let p = self.plan.clone().unwrap();
            // Selective repeat: now and then a later packet of the message goes
            // first, with its own PSN ahead of ePSN (the plan does not move).
            let left = p.pkts - p.next - 1;
            if self.cfg.victim_sr && left > 0 && self.rng.pct(30) {
                let mut k = self.rng.range(1, left as u64) as u32;
                // Software recovery: often the packet after the previous one
                // sent ahead, so runs grow, end messages and leave holes behind.
                if self.cfg.victim_sw {
                    if let Some((id, idx)) = self.last_ahead {
                        if id == p.id && idx + 1 < p.pkts && idx + 1 > p.next && self.rng.pct(50) {
                            k = idx + 1 - p.next;
                        }
                    }
                    self.last_ahead = Some((p.id, p.next + k));
                }
                (self.base_request(&p, p.next + k, (self.v.epsn + k) & PSN_MASK), false, true)
            } else {
                (self.base_request(&p, p.next, self.v.epsn), true, false)
            }
        };
        let mut muts = Vec::new();
        let mut classes = Vec::new();
        let mut fill_seed = self.rng.next();
        let mut bytes = self.build(&base, &muts, fill_seed);
        if self.rng.pct(self.cfg.mutate_pct) {
            // A mutation that lands on the good pair's QPN (a flipped byte can)
            // is drawn again: a forged packet from the real peer's address may
            // legitimately fail that QP's transfers, which prove nothing here.
            for _ in 0..8 {
                muts.clear();
                classes.clear();
                let n = self.rng.range(1, self.cfg.max_muts);
                for _ in 0..n {
                    let c = self.rng.pick(&self.cfg.classes);
                    let m = self.choose(c, &base);
                    classes.push(c);
                    muts.push(m);
                }
                if self.cfg.stale_icrc_pct > 0 && self.rng.pct(self.cfg.stale_icrc_pct) {
                    muts.push(Mut::StaleIcrc);
                }
                fill_seed = self.rng.next();
                bytes = self.build(&base, &muts, fill_seed);
                if facts(&bytes).dqpn != self.good_b_qpn {
                    break;
                }
            }
            if facts(&bytes).dqpn == self.good_b_qpn {
                muts.clear();
                classes.clear();
                bytes = self.build(&base, &muts, fill_seed);
            }
        }
        if is_read {
            std::mem::swap(&mut self.rng, &mut self.rd_rng);
        }
        let x = facts(&bytes);
        let j = self.judge(&bytes);
        let ctx = FrameCtx {
            idx,
            base: format!(
                "{} psn {:#x} psn_offset {} len {} ({} B payload){}",
                op_name(base.opcode),
                base.psn,
                base.psn_offset,
                base.msg_len,
                base.payload.len(),
                if is_ack {
                    format!(" syndrome {:#04x} msn {}", base.syndrome, base.msn)
                } else if is_read {
                    format!(" va {:#x} rkey {:#x} laddr {:#x} lkey {:#x}", base.va, base.rkey, base.laddr, base.lkey)
                } else {
                    String::new()
                }
            ),
            bytes,
            muts,
            classes,
            facts: x.clone(),
            judgement: j.clone(),
            victim_before: self.v.clone(),
        };

        // Inject and let the NIC process it.
        if self.dirty {
            self.run_cycles(HOST_SETTLE);
            self.dirty = false;
        }
        let mut problems = Vec::new();
        let late = self.take_caps().iter().filter(|f| f.get(off::BTH).is_some_and(|&o| is_read_response(o))).count();
        if late > 0 {
            problems.push(format!(
                "NIC1 sent {late} READ response packet(s) after the previous frame was checked (previous frame: {})",
                self.prev_frame
            ));
        }
        self.just_consumed = None;
        // READ response packets the model may expect (they follow their DMA reads at line rate).
        let want_rd = [Outcome::Accept, Outcome::Dup]
            .iter()
            .filter(|&&o| j.allowed.has(o))
            .map(|&o| j.read_answer(o).len())
            .max()
            .unwrap_or(0);
        {
            let mut c = self.nics.cluster.lock();
            c.inject_frame(NIC, &ctx.bytes);
            c.run(SETTLE + ctx.bytes.len() as u64 / 64);
            // Register reads are nearly free here (1 ns MMIO), so wait for the
            // NIC to go quiet instead of a fixed time.
            let (mut quiet, mut spent) = (0, 0);
            while quiet < QUIET && spent < MAX_SETTLE {
                c.run(16);
                spent += 16;
                let busy = c.nic(NIC).dma_in_flight()
                    + c.nic(PEER).dma_in_flight()
                    + c.fabric().port(NIC).rx.queued()
                    + c.nic(NIC).rx_pending_in_shell() as usize;
                quiet = if busy == 0 { quiet + 16 } else { 0 };
            }
            if j.read.is_some() {
                let rd_sent = || {
                    self.caps.borrow().iter().filter(|f| f.get(off::BTH).is_some_and(|&o| is_read_response(o))).count()
                };
                let mut spent = 0;
                while rd_sent() < want_rd && spent < READ_SETTLE {
                    c.run(16);
                    spent += 16;
                }
                // Room for a packet too many.
                c.run(READ_EXTRA);
            }
        }
        let d = self.counter_deltas()?;
        if d[0] != 1 {
            let queued = self.nics.cluster.lock().fabric().port(NIC).rx.queued();
            let msg = format!(
                "RX_FRAMES grew by {} (expected 1); {queued} frame(s) still queued at the RX MAC (previous frame: {})",
                d[0], self.prev_frame
            );
            if queued > 0 {
                // The core stopped taking frames: nothing after this can be checked.
                self.report(&ctx, None, &d, &[], &[], std::slice::from_ref(&msg));
                return Err(format!("RX path stalled at frame {idx}: {msg}"));
            }
            problems.push(msg);
        }
        // What NIC1 sent: only ACKs/NAKs of the victim to its peer, and READ
        // response packets (checked against the model's below).
        let mut resp = Vec::new();
        let mut rd = Vec::new();
        for f in self.take_caps() {
            match Frame::decode(&f) {
                Ok(a) if a.is_ack() && a.dqpn == self.peer_qpn => resp.push(a),
                Ok(a) if is_read_response(a.opcode) => rd.push(a),
                Ok(a) => problems.push(format!(
                    "NIC1 sent {} to QP {} (only the victim's ACK/NAK or READ response to QP {} expected)",
                    op_name(a.opcode),
                    a.dqpn,
                    self.peer_qpn
                )),
                Err(e) => problems.push(format!("NIC1 sent a malformed frame ({} bytes): {e}", f.len())),
            }
        }
        self.stats.read_rsp_out += rd.len() as u64;
        self.rsp_since_base += rd.len() as u64;
        let naks: Vec<u8> = resp.iter().map(|f| f.syndrome).filter(|&s| s != wire::syndrome::ACK).collect();
        // Software recovery: the reports to the victim's host and the
        // no-window count are checked against the outcome below, not as RX counters.
        let mut d = d;
        let mut sw_counts = (0, 0);
        if self.cfg.victim_sw {
            for (i, (_, o)) in self.ctr.regs.iter().enumerate() {
                if *o == counters::CTRLQ_ENTRIES {
                    sw_counts.0 = std::mem::take(&mut d[i]);
                } else if *o == counters::RX_OOO_SW {
                    sw_counts.1 = std::mem::take(&mut d[i]);
                }
            }
        }
        let obs = self.observed(&d, &naks);
        if let (true, Ok(o)) = (self.cfg.victim_sw, &obs) {
            let placed = *o == Outcome::Placed;
            let report = placed || (*o == Outcome::Accept && ctx.victim_before.sw_on);
            if sw_counts != (report as u64, placed as u64) {
                problems.push(format!(
                    "software recovery: {} CtrlQ report(s) and {} no-window placement(s) for outcome {o:?} (expected {} and {})",
                    sw_counts.0, sw_counts.1, report as u64, placed as u64
                ));
            }
        }
        let mut fatal = false;
        match &obs {
            Ok(o) => {
                self.stats.by_outcome[*o as usize] += 1;
                if x.opcode == opcode::READ_REQUEST {
                    self.stats.read_req[*o as usize] += 1;
                    if *o == Outcome::Dup && !rd.is_empty() {
                        self.stats.read_dup_answered += 1;
                    }
                } else if is_read_response(x.opcode) {
                    self.stats.read_rsp_in[*o as usize] += 1;
                }
                for (c, n, h) in self.stats.by_class.iter_mut() {
                    if ctx.classes.contains(c) {
                        *n += 1;
                        h[*o as usize] += 1;
                    }
                }
                if !j.allowed.has(*o) {
                    problems.push(format!(
                        "outcome {o:?} ({}), but the intended outcome is one of {:?}",
                        self.deltas_line(&d),
                        j.allowed
                    ));
                }
                let acc = if *o == Outcome::Accept { j.accept.as_ref() } else { None };
                self.check_responses(*o, &x, &ctx.victim_before, acc, &resp, &mut problems);
                self.check_read_responses(j.read_answer(*o), &rd, &mut problems);
                let mut slid = 0;
                if problems.is_empty() {
                    match o {
                        Outcome::Accept => {
                            let a = j.accept.expect("Accept is allowed only with an effect");
                            slid = self.apply_accept(&a, &ctx.bytes);
                            self.stats.slid += slid as u64;
                            if a.kind == Kind::Read {
                                self.stats.read_slid += slid as u64;
                                self.last_read = Frame::decode(&ctx.bytes).ok();
                            }
                        }
                        Outcome::Placed => {
                            let (diff, a) = j.placed.expect("Placed is allowed only with an effect");
                            self.apply_placed(diff, &a, &ctx.bytes);
                        }
                        Outcome::Access | Outcome::Inv => {
                            self.v.sr_hold = true;
                            fatal = true;
                        }
                        _ => {}
                    }
                    // Every ACK or NAK carries the SACK fields of the state it leaves.
                    for f in &resp {
                        let got = (f.ooo, f.sack_base, f.sack_bitmap, f.bytes_rx);
                        let want = self.v.sack(f.psn);
                        if got != want {
                            problems.push(format!(
                                "the victim's {:#04x} for PSN {:#x} carries SACK (OOO, base, bitmap, bytes) {got:x?}, the model {want:x?}",
                                f.syndrome, f.psn
                            ));
                        }
                    }
                }
                // Advance the forged requester (past the packets that slid in too).
                if ahead && *o == Outcome::Accept {
                    self.plan = None;
                }
                if from_plan {
                    if let Some(p) = &mut self.plan {
                        if *o == Outcome::Accept && x.opcode == base.opcode {
                            p.next = (p.next + 1 + slid).min(p.pkts);
                            p.retries = 0;
                        } else if *o == Outcome::Accept {
                            self.plan = None;
                        } else {
                            p.retries += 1;
                        }
                    }
                }
            }
            Err(e) => problems.push(e.clone()),
        }
        problems.extend(self.check_violations());
        self.check_cq(fatal, &mut problems);
        if self.cfg.victim_sw && problems.is_empty() && !fatal {
            self.settle_sw(&mut problems);
        }
        if fatal {
            // The victim may be in error now (IB: the responder of an invalid or
            // access-violating request): start it over with a fresh ePSN.
            self.reset_victim(&mut problems);
        }
        if idx.is_multiple_of(self.mem_every) || !problems.is_empty() {
            problems.extend(self.check_memory());
        }
        self.stats.frames += 1;
        self.prev_frame = format!(
            "#{idx} {} bytes, {} payload {} ({:?}), {:?}",
            ctx.bytes.len(),
            op_name(x.opcode),
            x.plen,
            ctx.muts,
            obs.as_ref().map_err(|_| ())
        );
        if !problems.is_empty() {
            self.report(&ctx, obs.ok(), &d, &resp, &rd, &problems);
            self.resync()?;
        }
        Ok(())
    }

    /// Prints a failure and either panics or records it (keep-going).
    #[allow(clippy::too_many_arguments)]
    fn report(
        &mut self,
        c: &FrameCtx,
        obs: Option<Outcome>,
        d: &[u64],
        resp: &[Frame],
        rd: &[Frame],
        problems: &[String],
    ) {
        let x = &c.facts;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "FUZZ FAILURE in {} at frame {} (base seed {:#x}, test seed {:#x})",
            self.cfg.name, c.idx, self.base_seed, self.seed
        );
        for p in problems {
            let _ = writeln!(s, "  * {p}");
        }
        let _ = writeln!(s, "  base frame: {}", c.base);
        let _ = writeln!(s, "  mutations ({:?}): {:?}", c.classes, c.muts);
        let _ = writeln!(
            s,
            "  frame: {} bytes, {} dqpn {} psn {:#x} AckReq {} pad {} payload {} psn_offset {:#x} ssn {:#x} va {:#x} rkey {:#x} RETH len {} laddr {:#x} lkey {:#x} syndrome {:#04x} msn {}",
            x.len,
            op_name(x.opcode),
            x.dqpn,
            x.psn,
            x.ack_req,
            x.pad,
            x.plen,
            x.psn_offset,
            x.ssn,
            x.va,
            x.rkey,
            x.msg_len,
            x.laddr,
            x.lkey,
            x.syndrome,
            x.msn
        );
        let _ = writeln!(
            s,
            "  front end: len_bad {} not_roce {} icrc_bad {} ipcsum_bad {} dst_bad {} src_ip_bad {} src_mac_bad {} odd {:?}",
            x.len_bad, x.not_roce, x.icrc_bad, x.ipcsum_bad, x.dst_bad, x.src_ip_bad, x.src_mac_bad, x.odd
        );
        let _ = writeln!(
            s,
            "  model: allowed {:?} because {:?}; effect if accepted {:?}",
            c.judgement.allowed, c.judgement.why, c.judgement.accept
        );
        let vb = &c.victim_before;
        let _ = writeln!(
            s,
            "  victim before: QP {} ePSN {:#x} MSN {} in message {:?} RQ {:?} SR window {:#x} last {:#x} hold {}",
            self.victim_qpn,
            vb.epsn,
            vb.msn,
            vb.cur,
            vb.rq.iter().map(|w| (w.wr_id, w.len)).collect::<Vec<_>>(),
            vb.sr_rcv,
            vb.sr_last,
            vb.sr_hold
        );
        if self.cfg.victim_sw {
            let _ = writeln!(
                s,
                "  software recovery before: on {} run [{:#x}, {:#x}] ends {} position {} {:?}; host bitmap {:x?}",
                vb.sw_on,
                vb.sw_left,
                vb.sw_right,
                vb.sw_ends,
                vb.sw_rpk,
                vb.sw_rkind,
                vb.sw_map.iter().map(|(p, (a, o))| (*p, a.last, *o)).collect::<Vec<_>>()
            );
        }
        let _ = writeln!(s, "  observed: {:?}; counters: {}", obs, self.deltas_line(d));
        for r in resp {
            let _ = writeln!(
                s,
                "  victim sent: syndrome {:#04x} psn {:#x} msn {} epsn {:#x} flags {:#04x}",
                r.syndrome, r.psn, r.msn, r.epsn, r.ack_flags
            );
        }
        if let Some(r) = &c.judgement.read {
            let _ = writeln!(
                s,
                "  model: the READ uses {} PSN(s); answer if accepted or a duplicate: {}",
                r.psns,
                match &r.answer {
                    Some(a) => format!("{} packet(s)", a.len()),
                    None => "none (MR check fails)".into(),
                }
            );
        }
        for r in rd {
            let _ = writeln!(
                s,
                "  victim sent: {} to QP {} psn {:#x} va {:#x} rkey {:#x} len {} ssn {:#x} psn_offset {} payload {} B",
                op_name(r.opcode),
                r.dqpn,
                r.psn,
                r.va,
                r.rkey,
                r.msg_len,
                r.ssn,
                r.psn_offset,
                r.payload.len()
            );
        }
        let _ = write!(s, "  frame bytes:\n{}", hex(&c.bytes));
        let _ = writeln!(
            s,
            "  replay: RNIC_FUZZ_SEED={:#x} RNIC_FUZZ_FRAMES={} cargo test --release -p rnic-tests --test fuzz -- --exact {} --nocapture",
            self.base_seed,
            c.idx + 1,
            self.cfg.name
        );
        if self.keep_going {
            eprintln!("{s}");
            self.failures.push(format!("frame {} {:?} {:?}: {}", c.idx, c.classes, c.muts, problems.join(" | ")));
        } else {
            panic!("{s}");
        }
    }

    /// Keep-going mode: bring the model back in line with the NIC.
    fn resync(&mut self) -> Result<(), String> {
        self.run_cycles(3000);
        let _ = self.take_caps();
        self.peer_dup_base = self.peer_dup()?;
        self.rsp_since_base = 0;
        let mut ignore = Vec::new();
        self.reset_victim(&mut ignore);
        let _ = self.cq_v.poll_cq_vec(64);
        self.expect_cqe.clear();
        self.ctr.last = self.read_counters()?;
        for r in self.regions.iter_mut() {
            r.expect = r.read();
        }
        self.violations_seen = self.nics.violations().len();
        Ok(())
    }

    fn progress(&self, i: u64) {
        let st = &self.stats;
        let cycles = self.now() - st.cycles0;
        let secs = st.t0.elapsed().as_secs_f64();
        let hist: Vec<String> = OUTCOMES
            .iter()
            .filter(|&&o| st.by_outcome[o as usize] > 0)
            .map(|&o| format!("{o:?}={}", st.by_outcome[o as usize]))
            .collect();
        eprintln!(
            "fuzz {}: {i}/{} frames, {:.1} s, {:.0} frames/s, {:.0} cycles/frame, victim resets {}, slid in {} ({} SEND packets placed out of order, {} completions written by a slide), software recovery: {} placed, {} commands; good rounds {}, failures {}; {}",
            self.cfg.name,
            self.frames,
            secs,
            i as f64 / secs.max(1e-9),
            cycles as f64 / (i.max(1)) as f64,
            st.resets,
            st.slid,
            st.send_placed,
            st.slid_cqes,
            st.sw_placed,
            st.sw_commands,
            st.good_rounds,
            self.failures.len(),
            hist.join(" ")
        );
    }

    fn run(mut self) {
        let mut stop = None;
        let (first, _) = self.good_round();
        if !first.is_empty() {
            panic!("{}: the good pair does not work before fuzzing: {first:?}", self.cfg.name);
        }
        for i in 0..self.frames {
            if i > 0 && i % GOOD_EVERY == 0 {
                if let Err(e) = self.good(&format!("after frame {}", i - 1)) {
                    stop = Some(e);
                    break;
                }
            }
            if i % 64 == 0 {
                self.rq_target = self.rng.pick(&[0, 1, 2, 2, 3, 4, 6]);
            }
            if i % 200 == 199 {
                let n = self.regions[R_VW].mr.len();
                let fresh = pattern::make(self.seed, pattern::stream(3000, i), n);
                self.regions[R_VW].fill(0, &fresh);
            }
            self.refill_rq();
            if let Err(e) = self.one_frame(i) {
                stop = Some(e);
                break;
            }
            if (i + 1) % 10_000 == 0 {
                self.progress(i + 1);
            }
        }
        if stop.is_none() {
            if let Err(e) = self.good("at the end") {
                stop = Some(e);
            }
        }
        // The idle peer was never disturbed: still RTS, no completion.
        if stop.is_none() {
            match self.cq_p.poll_cq_vec(8) {
                Ok(w) if w.is_empty() => {}
                r => self.failures.push(format!("the victim's idle peer on NIC0 got completions: {r:?}")),
            }
            if self.qp_peer.state() != QpState::Rts {
                self.failures.push(format!("the idle peer is {:?}", self.qp_peer.state()));
            }
            let v = self.check_violations();
            self.failures.extend(v);
        }
        self.progress(self.stats.frames);
        let st = &self.stats;
        for (c, n, h) in &st.by_class {
            let hist: Vec<String> =
                OUTCOMES.iter().filter(|&&o| h[o as usize] > 0).map(|&o| format!("{o:?}={}", h[o as usize])).collect();
            eprintln!("fuzz {}:   class {c:?}: {n} mutated frames: {}", self.cfg.name, hist.join(" "));
        }
        let hist = |h: &[u64; OUTCOMES.len()]| {
            let v: Vec<String> =
                OUTCOMES.iter().filter(|&&o| h[o as usize] > 0).map(|&o| format!("{o:?}={}", h[o as usize])).collect();
            format!("{} ({})", h.iter().sum::<u64>(), v.join(" "))
        };
        eprintln!(
            "fuzz {}: READ: {} fresh and {} resent READ base frames; READ request frames {}, {} duplicates answered, {} packets slid in behind a READ; READ response frames {}; the victim sent {} READ response packets",
            self.cfg.name,
            st.read_base,
            st.read_resent,
            hist(&st.read_req),
            st.read_dup_answered,
            st.read_slid,
            hist(&st.read_rsp_in),
            st.read_rsp_out
        );
        eprintln!(
            "fuzz {}: {} good rounds ({} WRITEs gathered from two entries) verified {} bytes; simulator {}",
            self.cfg.name,
            st.good_rounds,
            st.good_gathered,
            st.good_bytes,
            self.nics.stats().to_string().replace('\n', "; ")
        );
        if let Some(s) = &stop {
            self.failures.push(s.clone());
        }
        if stop.is_none() && st.good_rounds >= 9 && st.good_gathered == 0 {
            self.failures.push(format!("stimulus: none of {} good WRITEs gathered from two entries", st.good_rounds));
        }
        if !self.failures.is_empty() {
            panic!(
                "{}: {} failure(s) (base seed {:#x}; replay with RNIC_FUZZ_SEED={:#x} RNIC_FUZZ_FRAMES={} ... -- --exact {}):\n{}",
                self.cfg.name,
                self.failures.len(),
                self.base_seed,
                self.base_seed,
                self.frames,
                self.cfg.name,
                self.failures.iter().map(|f| format!("  - {f}")).collect::<Vec<_>>().join("\n")
            );
        }
        rnic_tests::assert_no_violations(&self.nics);
    }
}

fn run(cfg: Cfg) {
    let frames = env_u64("RNIC_FUZZ_FRAMES").unwrap_or(cfg.frames);
    let base = env_u64("RNIC_FUZZ_SEED").unwrap_or(DEFAULT_SEED);
    let keep_going = env_u64("RNIC_FUZZ_KEEP_GOING").unwrap_or(0) != 0;
    let mem_every = env_u64("RNIC_FUZZ_MEM_EVERY").unwrap_or(1);
    let seed = base ^ fnv(cfg.name);
    eprintln!(
        "fuzz {}: base seed {base:#x} (test seed {seed:#x}), {frames} frames, victim PMTU {}, classes {:?}",
        cfg.name,
        cfg.victim_mtu.bytes(),
        cfg.classes
    );
    Fuzzer::new(cfg, seed, base, frames, keep_going, mem_every).run();
}

/// Frames of each per-class test by default.
const CLASS_FRAMES: u64 = 150;

macro_rules! class_test {
    ($name:ident, $class:expr) => {
        #[test]
        fn $name() {
            run(Cfg::class(stringify!($name), $class, CLASS_FRAMES));
        }
    };
}

class_test!(lengths, Class::Lengths);
class_test!(pad_count, Class::Pad);
class_test!(psn, Class::Psn);
class_test!(psn_offset, Class::PsnOffset);
class_test!(ssn, Class::SsnMsn);
class_test!(remote_va, Class::Va);
class_test!(rkey, Class::Rkey);
class_test!(dest_qpn, Class::Dqpn);
class_test!(opcode_field, Class::Opcode);
class_test!(payload_length, Class::PayloadLen);
class_test!(truncate_extend, Class::Resize);
class_test!(dest_address, Class::DstAddr);
class_test!(source_address, Class::SrcAddr);
class_test!(ip_checksum, Class::IpChecksum);
class_test!(flipped_bytes, Class::FlipBytes);
class_test!(header_fields, Class::HdrFields);
class_test!(bad_icrc, Class::Icrc);

/// ACK frames with forged SACK fields (OOO count, bytes received, SACK
/// base and bitmap, echoed entropy and ECN), random or at their extremes:
/// processed as ACKs, nothing else moves. (The victim is neither sprayed
/// nor windowed here; `spray.rs` forges the same fields into the ACKs of a
/// sprayed QP under STrack's window.)
#[test]
fn sack_fields() {
    let mut c = Cfg::class("sack_fields", Class::Sack, CLASS_FRAMES);
    c.ack_pct = 80;
    run(c);
}

/// ACK frames (opcode 0x11) addressed to the victim, mutated.
#[test]
fn ack_frames() {
    let mut c = Cfg::class("ack_frames", Class::SsnMsn, CLASS_FRAMES);
    c.classes = vec![
        Class::SsnMsn,
        Class::Psn,
        Class::Dqpn,
        Class::Opcode,
        Class::SrcAddr,
        Class::FlipBytes,
        Class::Lengths,
        Class::Icrc,
        Class::Sack,
    ];
    c.ack_pct = 60;
    run(c);
}

fn mixed(name: &'static str, mtu: Mtu, frames: u64) -> Cfg {
    Cfg {
        name,
        classes: ALL_CLASSES.to_vec(),
        max_muts: 3,
        mutate_pct: 80,
        ack_pct: 6,
        stale_icrc_pct: 5,
        send_pct: 40,
        read_pct: READ_PCT,
        restart_pct: 3,
        victim_mtu: mtu,
        victim_sr: false,
        victim_sw: false,
        frames,
        avoid_ring_residue: false,
    }
}

/// Every class, up to three mutations per frame, PMTU 1024.
#[test]
fn mixed_mtu1024() {
    run(mixed("mixed_mtu1024", Mtu::Mtu1024, 800));
}

/// Every class, up to three mutations per frame, PMTU 4096.
#[test]
fn mixed_mtu4096() {
    run(mixed("mixed_mtu4096", Mtu::Mtu4096, 400));
}

/// Every class, PMTU 1024, the victim's responder running selective repeat.
#[test]
fn mixed_mtu1024_sr() {
    run(with_sr(mixed("mixed_mtu1024_sr", Mtu::Mtu1024, 800)));
}

/// Every class, PMTU 4096, the victim's responder running selective repeat.
#[test]
fn mixed_mtu4096_sr() {
    run(with_sr(mixed("mixed_mtu4096_sr", Mtu::Mtu4096, 400)));
}

/// PSNs around ePSN, inside the window and at its edge, the victim's responder running selective repeat.
#[test]
fn psn_sr() {
    run(with_sr(Cfg::class("psn_sr", Class::Psn, CLASS_FRAMES)));
}

/// SENDs (and, through opcode mutations, SENDs and WRITEs with immediate)
/// placed out of order: later packets of a message first, PSNs in the
/// window, RSNs naming other posted receive WQEs or none; the slide writes
/// their completions.
#[test]
fn send_sr() {
    let mut c = with_sr(Cfg::class("send_sr", Class::Psn, 2 * CLASS_FRAMES));
    c.classes = vec![Class::Psn, Class::SsnMsn, Class::Opcode, Class::PsnOffset];
    c.send_pct = 85;
    run(c);
}

/// Software recovery: NIC1 lends no window, so every packet the victim
/// places out of order goes through its host's bitmap; the model predicts
/// the NIC's run, the host's commands and the jumps. PSNs around ePSN and
/// up to the span's edge, SENDs and WRITEs, mutated opcodes, offsets, SSNs.
#[test]
fn psn_sw() {
    let mut c = with_sr(Cfg::class("psn_sw", Class::Psn, 2 * CLASS_FRAMES));
    c.classes = vec![Class::Psn, Class::SsnMsn, Class::Opcode, Class::PsnOffset];
    c.victim_sw = true;
    c.send_pct = 50;
    run(c);
}

/// Every mutation class against a victim in software recovery (PMTU 1024).
#[test]
fn mixed_mtu1024_sw() {
    let mut c = with_sr(mixed("mixed_mtu1024_sw", Mtu::Mtu1024, 400));
    c.victim_sw = true;
    run(c);
}

/// `c` with the victim's responder running selective repeat, and a quarter
/// of the forged requests SENDs.
fn with_sr(mut c: Cfg) -> Cfg {
    c.victim_sr = true;
    c.send_pct = 25;
    c
}

/// The reference model on hand-made frames, without a NIC: a valid frame is
/// accepted, each single defect gets its intended outcome.
#[test]
fn model_self_check() {
    let f = facts(
        &Frame {
            dst_mac: mac_of(NIC),
            src_mac: mac_of(PEER),
            src_ip: u32::from_be_bytes(ip_of(PEER)),
            dst_ip: u32::from_be_bytes(ip_of(NIC)),
            opcode: opcode::WRITE_ONLY,
            dqpn: 3,
            psn: 5,
            msg_len: 10,
            payload: vec![1; 10],
            ..Default::default()
        }
        .encode(),
    );
    assert!(!f.len_bad && !f.not_roce && !f.icrc_bad && !f.ipcsum_bad && !f.dst_bad && f.odd.is_empty(), "{f:?}");
    assert_eq!((f.plen, f.pad, f.msg_len, f.dqpn, f.psn), (10, 2, 10, 3, 5));
    assert!(residue_hit(58, 1024) && residue_hit(1024 + 60, 1024) && !residue_hit(61, 1024) && !residue_hit(0, 1024));
    assert_eq!(packets(0, 1024), 1);
    assert_eq!(last_plen(2048, 1024), 1024);
    // A READ request: the model reads its local address and lkey, and it has no payload.
    let r = facts(
        &Frame {
            dst_mac: mac_of(NIC),
            src_mac: mac_of(PEER),
            src_ip: u32::from_be_bytes(ip_of(PEER)),
            dst_ip: u32::from_be_bytes(ip_of(NIC)),
            opcode: opcode::READ_REQUEST,
            dqpn: 3,
            psn: 5,
            va: 0x1000,
            rkey: 0x102,
            msg_len: 5000,
            laddr: 0x1122_3344_5566_7788,
            lkey: 0xAABB_CCDD,
            ..Default::default()
        }
        .encode(),
    );
    assert!(!r.len_bad && !r.icrc_bad && r.odd.is_empty(), "{r:?}");
    assert_eq!(
        (r.opcode, r.plen, r.va, r.rkey, r.msg_len, r.laddr, r.lkey),
        (opcode::READ_REQUEST, 0, 0x1000, 0x102, 5000, 0x1122_3344_5566_7788, 0xAABB_CCDD)
    );
    assert!((0x0D..=0x10).all(is_read_response) && !is_read_response(0x0C) && !is_read_response(opcode::ACK));
    assert!(classify(opcode::READ_REQUEST).is_none());
}
