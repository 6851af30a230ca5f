//! STrack (Le et al., "STrack: A Reliable Multipath Transport for AI/ML
//! Clusters"): adaptive packet spray ([`lb`]) and window congestion control
//! ([`cc`]). Reliability (SACK receiver, loss detection, selective
//! retransmission) lives in [`crate::sack`] and [`crate::reliability`] because
//! SRNIC's selective repeat reuses it on a single path.

pub mod cc;
pub mod lb;
