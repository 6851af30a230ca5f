//! Value parsers shared by rnic's command-line tools (`rnic-perf`,
//! `rnic-netsim`), so a size means the same thing to both and neither
//! wraps a value that overflows.

#![deny(missing_docs)]

use std::fmt;

/// Why a size was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SizeError {
    /// Not digits with an optional K, M or G.
    NotASize(String),
    /// Zero bytes.
    Zero(String),
    /// More than `u64::MAX` bytes.
    Overflow(String),
}

impl fmt::Display for SizeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SizeError::NotASize(v) => write!(
                f,
                "`{v}` is not a size: give bytes, optionally with K, M or G (KiB, MiB, GiB), e.g. 4096, 4K, 64K, 1M"
            ),
            SizeError::Zero(v) => write!(f, "`{v}`: a size must be at least 1 byte"),
            SizeError::Overflow(v) => write!(f, "`{v}` is too large: more than 2^64 bytes"),
        }
    }
}

impl From<SizeError> for String {
    fn from(e: SizeError) -> String {
        e.to_string()
    }
}

/// Parses a size in bytes, optionally with a binary suffix `K` (KiB), `M`
/// (MiB) or `G` (GiB), upper or lower case: `4096`, `4K`, `64k`, `2M`.
/// Refuses an empty or non-numeric value, 0, and anything past `u64::MAX`
/// bytes (which a wrapping multiplication would turn into a small number,
/// 0 among others). Each tool checks its own upper bound on the result.
pub fn parse_size(v: &str) -> Result<u64, SizeError> {
    let t = v.trim();
    let (digits, shift) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 10),
        Some((i, 'm' | 'M')) => (&t[..i], 20),
        Some((i, 'g' | 'G')) => (&t[..i], 30),
        _ => (t, 0),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(SizeError::NotASize(v.into()));
    }
    let too_large = || SizeError::Overflow(v.into());
    let n: u64 = digits.parse().map_err(|_| too_large())?;
    let bytes = n.checked_mul(1 << shift).ok_or_else(too_large)?;
    if bytes == 0 {
        return Err(SizeError::Zero(v.into()));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn suffixes_are_binary_and_case_blind() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("64k"), Ok(65536));
        assert_eq!(parse_size("2M"), Ok(2 << 20));
        assert_eq!(parse_size(" 1g "), Ok(1 << 30));
        assert_eq!(parse_size("16777216G"), Ok(1 << 54));
    }

    #[test]
    fn zero_junk_and_overflow_are_refused() {
        for bad in [
            "",
            "K",
            "0",
            "0K",
            "-1",
            "1.5K",
            "4KB",
            "0x10",
            "17179869184G",
            "18446744073709551616",
            "18446744073709551615K",
        ] {
            assert!(parse_size(bad).is_err(), "{bad:?} was taken");
        }
        assert_eq!(parse_size("18446744073709551615"), Ok(u64::MAX));
    }
}
