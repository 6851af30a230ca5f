//! `rnic-perf`'s value parsers and sweep rules, kept apart from the binary
//! so they are unit-tested: message sizes with `K`/`M`/`G` suffixes,
//! durations in simulated time, and `-a`'s sizes and default iterations.

use rnic_spec::params;

/// Largest message size `rnic-perf` takes: the largest message the NIC
/// takes ([`params::MAX_MSG_LEN`], 2 GiB, bounded by the 32-bit WQE length).
pub const MAX_SIZE: u64 = params::MAX_MSG_LEN;

/// Smallest and largest sizes of `-a` (perftest's: 2 B to 8 MiB, by powers of two).
pub const SWEEP_MIN: u32 = 2;
/// See [`SWEEP_MIN`].
pub const SWEEP_MAX: u32 = 1 << 23;

/// Parses a message size: bytes, optionally with a binary suffix `K`
/// (KiB), `M` (MiB) or `G` (GiB), upper or lower case: `4096`, `4K`,
/// `64k`, `1M`. Refuses 0, overflow and anything above [`MAX_SIZE`].
pub fn parse_size(v: &str) -> Result<u32, String> {
    let too_large = || {
        format!(
            "`{v}` is too large: the largest message the NIC takes is {MAX_SIZE} bytes (2G, rnic_spec::params::MAX_MSG_LEN)"
        )
    };
    match rnic_units::parse_size(v) {
        Ok(b) if b <= MAX_SIZE => Ok(b as u32),
        Ok(_) | Err(rnic_units::SizeError::Overflow(_)) => Err(too_large()),
        Err(e) => Err(e.to_string()),
    }
}

/// Parses a duration of simulated time into device cycles (at
/// [`params::CLOCK_HZ`]): seconds (`0.001`, `1e-3`), or a number with a
/// unit `s`, `ms`, `us` or `ns` (`2ms`, `500us`). Refuses anything under
/// one cycle (4 ns) and anything not finite.
pub fn parse_duration(v: &str) -> Result<u64, String> {
    let t = v.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("ns") {
        (n, 1e-9)
    } else if let Some(n) = t.strip_suffix("us") {
        (n, 1e-6)
    } else if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else {
        (t, 1.0)
    };
    let x: f64 = num.trim().parse().map_err(|_| {
        format!(
            "`{v}` is not a duration: give seconds of simulated time (0.001) or a number with s, ms, us or ns (500us)"
        )
    })?;
    let cycles = x * scale * params::CLOCK_HZ as f64;
    if !cycles.is_finite() || cycles >= u64::MAX as f64 {
        return Err(format!("`{v}` is not a usable duration"));
    }
    if cycles < 1.0 {
        return Err(format!("`{v}` is shorter than one cycle of simulated time (4 ns)"));
    }
    Ok(cycles.round() as u64)
}

/// `-a`'s message sizes: 2, 4, 8, ..., 8 MiB.
pub fn sweep_sizes() -> Vec<u32> {
    (SWEEP_MIN.trailing_zeros()..=SWEEP_MAX.trailing_zeros()).map(|b| 1u32 << b).collect()
}

/// `-a`'s iterations per QP at `size` when neither `-n` nor `-D` is given,
/// so the whole sweep stays near a minute of cosimulation: 16 MiB of
/// payload per QP and size, between 10 and 1000 messages, for the bandwidth
/// tests; 1 MiB, between 10 and 100 messages, for the latency tests (one
/// message in flight is slower per message).
pub fn sweep_iters(size: u32, latency: bool) -> u64 {
    let (budget, max): (u64, u64) = if latency { (1 << 20, 100) } else { (16 << 20, 1000) };
    (budget / size.max(1) as u64).clamp(10, max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_with_and_without_suffixes() {
        assert_eq!(parse_size("1"), Ok(1));
        assert_eq!(parse_size("65536"), Ok(65536));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("1M"), Ok(1 << 20));
        assert_eq!(parse_size("8m"), Ok(8 << 20));
        assert_eq!(parse_size("2G"), Ok(1 << 31));
        assert_eq!(parse_size(" 512 "), Ok(512));
    }

    #[test]
    fn bad_sizes_are_refused_with_a_reason() {
        for bad in ["", "K", "abc", "4KB", "4 K", "-1", "1.5M", "0x10", "4T"] {
            let e = parse_size(bad).unwrap_err();
            assert!(e.contains("is not a size"), "{bad}: {e}");
        }
        assert!(parse_size("0").unwrap_err().contains("at least 1 byte"));
        assert!(parse_size("0K").unwrap_err().contains("at least 1 byte"));
        for big in ["2147483649", "3G", "4G", "2049M", "99999999999999999999", "18446744073709551615K"] {
            let e = parse_size(big).unwrap_err();
            assert!(e.contains("too large") && e.contains("2147483648"), "{big}: {e}");
        }
    }

    #[test]
    fn durations_in_simulated_time() {
        assert_eq!(parse_duration("1"), Ok(250_000_000));
        assert_eq!(parse_duration("0.001"), Ok(250_000));
        assert_eq!(parse_duration("1e-3"), Ok(250_000));
        assert_eq!(parse_duration("2ms"), Ok(500_000));
        assert_eq!(parse_duration("500us"), Ok(125_000));
        assert_eq!(parse_duration("40ns"), Ok(10));
        assert_eq!(parse_duration("1s"), Ok(250_000_000));
        assert!(parse_duration("1ns").unwrap_err().contains("shorter than one cycle"));
        assert!(parse_duration("0").unwrap_err().contains("shorter than one cycle"));
        assert!(parse_duration("-1").unwrap_err().contains("shorter than one cycle"));
        assert!(parse_duration("soon").unwrap_err().contains("is not a duration"));
        assert!(parse_duration("1h").unwrap_err().contains("is not a duration"));
        assert!(parse_duration("inf").unwrap_err().contains("not a usable duration"));
        assert!(parse_duration("NaN").is_err());
    }

    #[test]
    fn sweep_covers_perftest_sizes_with_bounded_iterations() {
        let s = sweep_sizes();
        assert_eq!(s.len(), 23);
        assert_eq!((s[0], s[1], s[22]), (2, 4, 1 << 23));
        assert!(s.windows(2).all(|w| w[1] == 2 * w[0]));
        assert_eq!(sweep_iters(2, false), 1000);
        assert_eq!(sweep_iters(65536, false), 256);
        assert_eq!(sweep_iters(1 << 23, false), 10);
        assert_eq!(sweep_iters(2, true), 100);
        assert_eq!(sweep_iters(65536, true), 16);
        assert_eq!(sweep_iters(1 << 23, true), 10);
    }
}
