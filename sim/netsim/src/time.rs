//! Simulation time: integer picoseconds, and conversion to the clock cycles of
//! a cycle-accurate NIC attached as an endpoint.

/// Simulation time in picoseconds.
pub type Ps = u64;

/// Picoseconds per nanosecond.
pub const PS_PER_NS: u64 = 1_000;
/// Picoseconds per microsecond.
pub const PS_PER_US: u64 = 1_000_000;

/// Serialization time of `bytes` at `gbps` Gbit/s, in ps (rounded up).
pub fn ser_ps(bytes: u64, gbps: u32) -> Ps {
    (bytes * 8_000).div_ceil(gbps as u64)
}

/// A clock domain (e.g. the NIC core clock, 250 MHz) with exact ps↔cycle
/// conversion. Cycle `c` starts at `c · period`; a time that falls inside a
/// cycle maps to the *next* cycle edge (a frame cannot be seen before it
/// arrives).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockDomain {
    /// Frequency in Hz (must divide 10¹² for an exact period, e.g. 250 MHz → 4000 ps).
    pub hz: u64,
}

impl ClockDomain {
    /// A domain at `mhz` MHz.
    pub fn mhz(mhz: u64) -> Self {
        Self { hz: mhz * 1_000_000 }
    }
    /// Period in ps (exact when `hz` divides 10¹²).
    pub fn period_ps(&self) -> Ps {
        1_000_000_000_000 / self.hz
    }
    /// Cycle edge at or after `t`.
    pub fn ps_to_cycle_ceil(&self, t: Ps) -> u64 {
        t.div_ceil(self.period_ps())
    }
    /// Cycle containing `t`.
    pub fn ps_to_cycle_floor(&self, t: Ps) -> u64 {
        t / self.period_ps()
    }
    /// Start of cycle `c` in ps.
    pub fn cycle_to_ps(&self, c: u64) -> Ps {
        c * self.period_ps()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization() {
        assert_eq!(ser_ps(4160, 400), 83_200);
        assert_eq!(ser_ps(64, 100), 5_120);
        assert_eq!(ser_ps(1, 3), 2_667);
    }

    #[test]
    fn clock_conversion_round_trips() {
        let c = ClockDomain::mhz(250);
        assert_eq!(c.period_ps(), 4_000);
        assert_eq!(c.ps_to_cycle_ceil(0), 0);
        assert_eq!(c.ps_to_cycle_ceil(1), 1);
        assert_eq!(c.ps_to_cycle_ceil(8_000), 2);
        assert_eq!(c.ps_to_cycle_floor(7_999), 1);
        for cyc in [0u64, 1, 7, 1_000_000] {
            assert_eq!(c.ps_to_cycle_ceil(c.cycle_to_ps(cyc)), cyc);
        }
    }
}
