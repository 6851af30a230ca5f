//! `rnic-tools`: the perftest-style benchmark engine behind `rnic-perf`,
//! its argument parsers, the deterministic data patterns and the cosimulation glue, also used by
//! the end-to-end tests.
#![deny(missing_docs)]

pub mod args;
pub mod bench;
pub mod cosim;
pub mod devices;
pub mod model_side;
pub mod pattern;
pub mod scenario;
pub mod twoproc;
