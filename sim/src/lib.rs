//! Placeholder until the harness lands.
