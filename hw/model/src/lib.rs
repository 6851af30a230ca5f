//! # rnic-model — behavioural model of rnic's transport algorithms
//!
//! Deterministic state machines for the three transports the project compares,
//! written in the integer / fixed-point arithmetic the hardware will use. They
//! are the oracle for the RTL (same inputs → same decisions) and the engines of
//! the fabric simulator `rnic-netsim`.
//!
//! | module | algorithm | source |
//! |---|---|---|
//! | [`strack::lb`] | adaptive load balancing over entropies with the ECN path bitmap (Algo 3) and oblivious spray | STrack §3.1 |
//! | [`strack::cc`] | window congestion control (Algo 4, Table 1) and achieved BDP (Algo 2) | STrack §3.2 |
//! | [`sack`] | receiver SACK generation: four ACK conditions, coalescing, 64-bit segment choice, bytes received, OOO count | STrack §3.3.1 |
//! | [`reliability`] | sender loss detection (OOO threshold, probe, timeout) and selective retransmission | STrack §3.3.2, SRNIC §4.4 |
//! | [`dctcp`] | DCTCP window (SRNIC's congestion control) | SRNIC §5 |
//! | [`dcqcn`] | DCQCN reaction point / notification point (RoCEv2 baseline) | Zhu et al. SIGCOMM'15, as used by STrack §4.1 |
//! | [`gbn`] | RoCEv2 go-back-N sender and receiver | IB spec / SRNIC §2 |
//!
//! ## Number formats (no floating point on any decision path)
//!
//! | quantity | type | unit / format | range |
//! |---|---|---|---|
//! | time, timestamps | `u64` | nanoseconds ([`Nanos`]); the hardware keeps a 32-bit ns counter and compares with wrapping subtraction (valid for differences < 2.1 s) | 0 … 2⁶⁴ ns |
//! | delays, RTTs | `u32` | nanoseconds | 0 … 4.29 s |
//! | congestion window | `u32` | bytes in Q24.8 ([`Q8`], 8 fractional bits) | 0 … 16 MiB, resolution 1/256 B |
//! | EWMA of delay | `u32` | ns in Q24.8 | 0 … 16.7 ms |
//! | scaling factors, γ, α (DCTCP / DCQCN) | `u32` | Q16.16 ([`Q16_ONE`] = 1.0) | 0 … 65535.99 |
//! | rates (DCQCN) | `u32` | Mbit/s | 0 … 4.29 Pbit/s |
//! | PSN | `u32` | packets, 24-bit on the wire (the model uses 32-bit, flows are < 2²⁴ packets) | |
//! | byte counters | `u64` | bytes | |
//!
//! Intermediate products are computed in `u64` (and `u128` where noted) and then
//! shifted; every division is an integer division that truncates toward zero.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod dcqcn;
pub mod dctcp;
pub mod gbn;
pub mod reliability;
pub mod sack;
pub mod strack;

/// Time in nanoseconds.
pub type Nanos = u64;

/// Number of fractional bits of the Q24.8 byte format used for windows.
pub const Q8_SHIFT: u32 = 8;
/// A byte quantity in Q24.8 (value × 256).
pub type Q8 = u32;
/// 1.0 in Q16.16.
pub const Q16_ONE: u32 = 1 << 16;

/// Converts whole bytes to Q24.8, saturating at the format's maximum.
pub fn bytes_to_q8(bytes: u64) -> Q8 {
    (bytes << Q8_SHIFT).min(u32::MAX as u64) as u32
}

/// Converts Q24.8 bytes to whole bytes (truncating).
pub fn q8_to_bytes(q: Q8) -> u64 {
    (q >> Q8_SHIFT) as u64
}

/// Link / path parameters shared by the transports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetParams {
    /// Line rate of the NIC's port in Gbit/s.
    pub link_gbps: u32,
    /// Network-wide base RTT (`net_base_rtt` in STrack) in ns.
    pub base_rtt_ns: u32,
    /// Maximum payload bytes per packet (MTU as the transports count it).
    pub mtu: u32,
}

impl NetParams {
    /// Bandwidth-delay product in bytes: `link_gbps × base_rtt / 8`.
    pub fn bdp_bytes(&self) -> u64 {
        self.link_gbps as u64 * self.base_rtt_ns as u64 / 8
    }
}
