//! SimNic, Cluster and CosimDevice against the emitted core.

use rnic_driver::{Device, DmaAccess};
use rnic_sim::{Cluster, CosimDevice, SimConfig};
use rnic_spec::regs;

const RW: DmaAccess = DmaAccess { device_read: true, device_write: true };

#[test]
fn idle_cluster_moves_nothing() {
    let mut c = Cluster::new(2, SimConfig::default()).unwrap();
    c.run(2_000);
    let s = c.stats();
    assert_eq!(s.cycles, 2_000);
    assert_eq!(c.now(), 2_000);
    assert!(s.links.iter().all(|l| l.frames == 0));
    assert!(s.dma.iter().all(|d| d.rd_reqs == 0 && d.wr_beats == 0));
    assert!(c.violations().is_empty());
    assert!(s.cycles_per_sec > 0.0);
}

#[test]
fn device_memory_goes_through_the_shadowed_allocator() {
    let cluster = Cluster::shared(2, SimConfig::default()).unwrap();
    let devs = CosimDevice::all(&cluster);
    assert_eq!(devs[1].name(), "cosim:nic1");
    let b = devs[0].alloc_dma(10_000, RW).unwrap();
    assert_eq!(b.bus_addr % 4096, 0);
    assert_eq!(b.bus_addr, rnic_sim::HOST_MEM_BASE);
    devs[0].write_mem(b.bus_addr + 9_990, &[1; 10]).unwrap();
    assert!(devs[0].write_mem(b.bus_addr + 9_995, &[1; 10]).is_err(), "past the buffer");
    let mut out = [0; 10];
    devs[0].read_mem(b.bus_addr + 9_990, &mut out).unwrap();
    assert_eq!(out, [1; 10]);
    assert!(devs[1].read_mem(b.bus_addr, &mut out).is_err(), "host memories are per NIC");
    devs[0].set_dma_access(b, DmaAccess { device_read: true, device_write: false }).unwrap();
    devs[0].free_dma(b).unwrap();
    let t = devs[0].now_cycles();
    devs[1].wait().unwrap();
    assert_eq!(devs[0].now_cycles(), t + 16, "wait advances the whole cluster");
}

#[test]
fn reg_id_reads_magic_and_version() {
    let cluster = Cluster::shared(1, SimConfig::default()).unwrap();
    let dev = CosimDevice::new(&cluster, 0);
    let t0 = dev.now_cycles();
    let id = dev.read_reg(regs::REG_ID).unwrap();
    assert_eq!(id >> 32, regs::ID_MAGIC, "REG_ID = {id:#x}");
    // Two MMIO crossings of 500 ns (125 cycles each) plus the core's time.
    assert!(dev.now_cycles() - t0 >= 250);
}

#[test]
fn src_mac_and_ip_write_then_read_back() {
    let cluster = Cluster::shared(2, SimConfig::default()).unwrap();
    for (i, dev) in CosimDevice::all(&cluster).iter().enumerate() {
        dev.write_reg(regs::REG_SRC_MAC, rnic_sim::mac_reg(i)).unwrap();
        dev.write_reg(regs::REG_SRC_IP, rnic_sim::ip_reg(i)).unwrap();
        assert_eq!(dev.read_reg(regs::REG_SRC_MAC).unwrap(), rnic_sim::mac_reg(i));
        assert_eq!(dev.read_reg(regs::REG_SRC_IP).unwrap(), rnic_sim::ip_reg(i));
    }
    assert!(cluster.lock().violations().is_empty());
}

#[test]
fn reg_cycles_counts_core_cycles() {
    let mut c = Cluster::new(1, SimConfig::default()).unwrap();
    let a = c.read_reg(0, regs::REG_CYCLES).unwrap();
    c.run(1_000);
    let b = c.read_reg(0, regs::REG_CYCLES).unwrap();
    let elapsed = b - a;
    // Both reads sample the counter half an MMIO round trip before the host sees it.
    assert!((1_000..=1_000 + 2 * 260).contains(&elapsed), "REG_CYCLES advanced {elapsed}");
}

#[test]
fn garbage_frame_is_counted_not_written() {
    let mut c = Cluster::new(2, SimConfig::default()).unwrap();
    let before = c.read_reg(1, regs::counters::RX_FRAMES).unwrap();
    let hdr_before = c.read_reg(1, regs::counters::RX_HDR_ERR).unwrap();
    let mut frame = vec![0xee; 200];
    frame[..6].copy_from_slice(&rnic_sim::mac_of(1));
    c.inject_frame(1, &frame);
    c.run(1_000);
    assert_eq!(c.read_reg(1, regs::counters::RX_FRAMES).unwrap(), before + 1);
    assert_eq!(c.read_reg(1, regs::counters::RX_HDR_ERR).unwrap(), hdr_before + 1);
    assert_eq!(c.nic(1).dma_stats().wr_beats, 0, "nothing reaches host memory");
    assert!(c.violations().is_empty());
}

#[test]
fn pcap_file_is_created_for_the_cluster() {
    let path = std::env::temp_dir().join(format!("rnic-sim-cluster-{}.pcap", std::process::id()));
    {
        let mut c = Cluster::new(2, SimConfig { pcap: Some(path.clone()), ..Default::default() }).unwrap();
        c.run(100);
        c.flush();
    }
    let r = pcap_file::pcap::PcapReader::new(std::fs::File::open(&path).unwrap()).unwrap();
    assert_eq!(r.header().datalink, pcap_file::DataLink::ETHERNET);
    std::fs::remove_file(&path).unwrap();
}

#[cfg(feature = "vcd")]
#[test]
fn vcd_per_nic_is_written() {
    let path = std::env::temp_dir().join(format!("rnic-sim-waves-{}.vcd", std::process::id()));
    {
        let mut c = Cluster::new(2, SimConfig { waves: Some(path.clone()), ..Default::default() }).unwrap();
        c.run(10);
    }
    for i in 0..2 {
        let file = rnic_sim::wave_path(&path, i);
        assert!(file.to_string_lossy().ends_with(&format!(".nic{i}.vcd")));
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.contains("net_tx_valid"));
        std::fs::remove_file(&file).unwrap();
    }
}
