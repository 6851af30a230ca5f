//! Devices named by a device string (`rnic_driver::DeviceSpec`) for the
//! tools that take `--dev`: the boards (`vfio:`) and the NICs another
//! process serves (`vfio-user:`). The in-process cosimulation is built by
//! [`crate::cosim`] instead.

use std::sync::Arc;

use rnic::{Context, Device, NetAddr};
use rnic_driver::{DeviceSpec, VfioDevice, VfioUserDevice};
use rnic_spec::regs;

/// Opens the device `spec` names (`vfio:` or `vfio-user:`).
pub fn open(spec: &DeviceSpec) -> Result<Arc<dyn Device>, String> {
    Ok(match spec {
        DeviceSpec::Cosim { .. } => {
            return Err(format!("{spec}: an in-process cosimulated NIC is not opened by a device string here"))
        }
        DeviceSpec::Vfio(addr) => Arc::new(VfioDevice::open(*addr).map_err(|e| e.to_string())?),
        DeviceSpec::VfioUser(path) => Arc::new(VfioUserDevice::open(path).map_err(|e| e.to_string())?),
    })
}

/// The address a NIC reports as its own (`REG_SRC_MAC`, `REG_SRC_IP`);
/// an error when it has none yet.
pub fn reported_addr(dev: &dyn Device) -> Result<NetAddr, String> {
    let rd = |off: u32| dev.read_reg(off).map_err(|e| format!("{}: {e}", dev.name()));
    let (mac, ip) = (rd(regs::REG_SRC_MAC)?.to_be_bytes(), rd(regs::REG_SRC_IP)? as u32);
    if ip == 0 {
        return Err(format!("{}: the NIC reports no address of its own (REG_SRC_IP is 0)", dev.name()));
    }
    Ok(NetAddr { mac: [mac[2], mac[3], mac[4], mac[5], mac[6], mac[7]], ip: std::net::Ipv4Addr::from(ip) })
}

/// Opens the device `spec` names through the host library, with the address it reports.
pub fn open_context(spec: &DeviceSpec) -> Result<Context, String> {
    let dev = open(spec)?;
    let addr = reported_addr(&*dev)?;
    rnic::open_device(dev, addr).map_err(|e| format!("{spec}: {e}"))
}
