//! # rnic-netsim — fabric-scale packet-level simulator
//!
//! Discrete-event simulation of thousands of NICs on leaf-spine / fat-tree
//! fabrics, running the transport state machines of [`rnic_model`]:
//! STrack (adaptive or oblivious spray), RoCEv2 (DCQCN + go-back-N + PFC) and
//! SRNIC (DCTCP + selective repeat). See `README.md` and
//! `docs/netsim-results.md`.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod endpoint;
pub mod experiments;
pub mod output;
pub mod queue;
pub mod rng;
pub mod sim;
pub mod time;
pub mod topo;
pub mod traffic;
