//! The device string: which NIC an application opens.
//!
//! - `cosim` (or `cosim:N`): NIC `N` (default 0) of a cosimulated cluster in
//!   the application's own process;
//! - `vfio:DDDD:BB:DD.F` (or `vfio:BB:DD.F`, domain 0000): a board bound to
//!   vfio-pci, by PCI address;
//! - `vfio-user:PATH`: a NIC served over a UNIX socket by a vfio-user server.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use thiserror::Error;

/// A PCI address (`domain:bus:device.function`), as `lspci -D` prints it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PciAddr {
    /// PCI domain (segment), 16 bits.
    pub domain: u16,
    /// Bus number.
    pub bus: u8,
    /// Device number, 0..=31.
    pub device: u8,
    /// Function number, 0..=7.
    pub function: u8,
}

impl fmt::Display for PciAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04x}:{:02x}:{:02x}.{:x}", self.domain, self.bus, self.device, self.function)
    }
}

/// A device string that does not parse.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("bad device string {input:?}: {why} (expected cosim, cosim:N, vfio:DDDD:BB:DD.F or vfio-user:PATH)")]
pub struct SpecError {
    /// What was given.
    pub input: String,
    /// What is wrong with it.
    pub why: String,
}

fn hex_field(s: &str, digits: usize, max: u32, what: &str) -> Result<u32, String> {
    if s.is_empty() || s.len() > digits || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!("the {what} {s:?} is not 1 to {digits} hex digits"));
    }
    let v = u32::from_str_radix(s, 16).map_err(|e| e.to_string())?;
    if v > max {
        return Err(format!("the {what} {v:#x} is above {max:#x}"));
    }
    Ok(v)
}

impl FromStr for PciAddr {
    type Err = String;

    fn from_str(s: &str) -> Result<PciAddr, String> {
        let parts: Vec<&str> = s.split(':').collect();
        let (domain, bus, devfn) = match parts[..] {
            [d, b, df] => (hex_field(d, 4, 0xffff, "domain")?, b, df),
            [b, df] => (0, b, df),
            _ => return Err(format!("{s:?} is not a PCI address like 0000:3b:00.0")),
        };
        let bus = hex_field(bus, 2, 0xff, "bus")?;
        let (dev, func) = devfn.split_once('.').ok_or_else(|| format!("{devfn:?} lacks the .function"))?;
        Ok(PciAddr {
            domain: domain as u16,
            bus: bus as u8,
            device: hex_field(dev, 2, 31, "device")? as u8,
            function: hex_field(func, 1, 7, "function")? as u8,
        })
    }
}

/// Which NIC to open, parsed from a device string (module doc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceSpec {
    /// NIC `nic` of an in-process cosimulated cluster.
    Cosim {
        /// NIC index in the cluster.
        nic: usize,
    },
    /// A PCI device bound to vfio-pci.
    Vfio(PciAddr),
    /// A NIC served by a vfio-user server on a UNIX socket.
    VfioUser(PathBuf),
}

impl FromStr for DeviceSpec {
    type Err = SpecError;

    fn from_str(s: &str) -> Result<DeviceSpec, SpecError> {
        let bad = |why: String| SpecError { input: s.to_string(), why };
        let (kind, rest) = match s.split_once(':') {
            Some((k, r)) => (k, Some(r)),
            None => (s, None),
        };
        match (kind, rest) {
            ("cosim", None) => Ok(DeviceSpec::Cosim { nic: 0 }),
            ("cosim", Some(n)) => n
                .parse::<usize>()
                .map(|nic| DeviceSpec::Cosim { nic })
                .map_err(|_| bad(format!("the NIC index {n:?} is not a number"))),
            ("vfio", Some(a)) => a.parse().map(DeviceSpec::Vfio).map_err(bad),
            ("vfio-user", Some(p)) if !p.is_empty() => Ok(DeviceSpec::VfioUser(PathBuf::from(p))),
            ("vfio" | "vfio-user", _) => Err(bad(format!("{kind} needs an address after the colon"))),
            _ => Err(bad(format!("unknown kind {kind:?}"))),
        }
    }
}

impl fmt::Display for DeviceSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceSpec::Cosim { nic } => write!(f, "cosim:{nic}"),
            DeviceSpec::Vfio(a) => write!(f, "vfio:{a}"),
            DeviceSpec::VfioUser(p) => write!(f, "vfio-user:{}", p.display()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_strings_parse_and_print_back() {
        let cases = [
            ("cosim", "cosim:0"),
            ("cosim:3", "cosim:3"),
            ("vfio:0000:3b:00.0", "vfio:0000:3b:00.0"),
            ("vfio:3b:00.1", "vfio:0000:3b:00.1"),
            ("vfio:ffff:ff:1f.7", "vfio:ffff:ff:1f.7"),
            ("vfio:1:2:3.4", "vfio:0001:02:03.4"),
            ("vfio-user:/run/rnic/nic0.sock", "vfio-user:/run/rnic/nic0.sock"),
            ("vfio-user:nic1.sock", "vfio-user:nic1.sock"),
        ];
        for (input, shown) in cases {
            let d: DeviceSpec = input.parse().unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(d.to_string(), shown, "{input}");
            assert_eq!(shown.parse::<DeviceSpec>().unwrap(), d, "{shown} round trip");
        }
        assert_eq!(
            "vfio:0000:3b:00.0".parse::<DeviceSpec>().unwrap(),
            DeviceSpec::Vfio(PciAddr { domain: 0, bus: 0x3b, device: 0, function: 0 })
        );
    }

    #[test]
    fn bad_device_strings_say_what_is_wrong() {
        let cases = [
            ("", "unknown kind"),
            ("nic0", "unknown kind"),
            ("cosim:x", "not a number"),
            ("vfio", "needs an address"),
            ("vfio:", "not a PCI address"),
            ("vfio-user:", "needs an address"),
            ("vfio:3b:00", "lacks the .function"),
            ("vfio:3b:20.0", "device 0x20 is above 0x1f"),
            ("vfio:3b:00.8", "function 0x8 is above 0x7"),
            ("vfio:3bb:00.0", "bus \"3bb\" is not 1 to 2 hex digits"),
            ("vfio:00000:3b:00.0", "domain \"00000\""),
            ("vfio:0000:3g:00.0", "bus \"3g\""),
            ("vfio:0:0:0:0.0", "not a PCI address"),
            ("vfio:3b:+1.0", "device \"+1\""),
        ];
        for (input, want) in cases {
            let e = input.parse::<DeviceSpec>().expect_err(input);
            let msg = e.to_string();
            assert!(msg.contains(want), "{input:?}: {msg}");
            assert!(msg.contains("expected cosim"), "{input:?}: {msg}");
        }
    }
}
