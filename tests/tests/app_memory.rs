//! MRs on the application's own memory (`Pd::reg_mr_on`, `Pd::reg_mr_raw`):
//! the NIC's DMA reads and writes the application's bytes in place, at bus
//! addresses the device mapped for them, and nowhere else.
//!
//! Checked: the benchmark engine on `HostBuf`s for WRITE, SEND and READ at
//! sizes of every kind, every byte verified; registrations on heap memory
//! at odd offsets, two of them sharing bytes and pages, each WRITE landing
//! exactly in its range (every other byte of the allocation untouched); a
//! WRITE past a region's end refused by the NIC with nothing written; a
//! deregistered region unreachable; the DMA shadow clean throughout.

use rnic::{AccessFlags, Mtu, SendFlags, SendWr, WcStatus, WrOpcode};
use rnic_sim::faults::RandomFaults;
use rnic_tests::{assert_no_violations, pair, stream, wait, World, SEED};
use rnic_tools::bench::{run, BenchConfig, Mode};
use rnic_tools::pattern;

#[test]
fn the_benchmark_runs_on_application_memory_with_every_byte_verified() {
    let nics = pair();
    for mode in [Mode::WriteBw, Mode::SendBw, Mode::ReadBw] {
        for (size, iters) in [(1, 40), (333, 40), (4097, 24), (65536, 8)] {
            let c = BenchConfig { size, iters, qps: 2, tx_depth: 8, app_mem: true, ..BenchConfig::new(mode) };
            let r = run(&nics.ctxs[0], &nics.ctxs[1], &c).unwrap_or_else(|e| panic!("{mode:?} {size} B: {e}"));
            assert_eq!(r.verified_bytes, size as u64 * iters, "{mode:?} {size} B");
        }
    }
    assert_no_violations(&nics);
}

#[test]
fn writes_land_exactly_in_heap_memory_registered_at_odd_offsets() {
    let nics = pair();
    let w = World::new(&nics, 2, 8, Mtu::Mtu1024);
    let (a, b) = (&w.conns[0].0, &w.conns[1].0);
    // The destination: one heap allocation, two overlapping registrations sharing bytes and pages.
    let sentinel = pattern::make(SEED, u64::MAX, 3 * 4096 + 100);
    let mut heap = sentinel.clone();
    let base = heap.as_mut_ptr();
    let rw = AccessFlags::REMOTE_WRITE | AccessFlags::LOCAL_WRITE;
    // SAFETY: `heap` outlives both registrations (dropped at the end of the test, after them).
    let (r1, r2) = unsafe {
        (w.pd_b.reg_mr_raw(base.add(10), 5000, rw).unwrap(), w.pd_b.reg_mr_raw(base.add(4000), 3000, rw).unwrap())
    };
    assert_eq!((r1.addr(), r2.addr()), (base as u64 + 10, base as u64 + 4000), "an MR's address is the memory's own");
    assert_ne!(r1.bus_addr(), r2.bus_addr());
    // The source: an owned array, moved into the MR.
    let mut bytes = [0u8; 8192];
    let (m1, m2) = (pattern::make(SEED, stream(0, 1), 5000), pattern::make(SEED, stream(0, 2), 3000));
    bytes[..5000].copy_from_slice(&m1);
    bytes[5000..8000].copy_from_slice(&m2);
    let src = w.pd_a.reg_mr_on(bytes, AccessFlags::empty()).unwrap();
    let write = |id: u64, off: u64, len: u32, to: &rnic::Mr, at: u64| SendWr {
        wr_id: id,
        send_flags: SendFlags::SIGNALED,
        opcode: WrOpcode::RdmaWrite { remote_addr: to.addr() + at, rkey: to.rkey() },
        sg_list: src.sge(off, len).into(),
    };
    a.post_send(&write(1, 0, 5000, &r1, 0)).unwrap();
    assert_eq!(wait(&w.cq_a, 1, 5000)[0].status, WcStatus::Success);
    a.post_send(&write(2, 5000, 3000, &r2, 0)).unwrap();
    assert_eq!(wait(&w.cq_a, 1, 3000)[0].status, WcStatus::Success);
    let mut want = sentinel.clone();
    want[10..5010].copy_from_slice(&m1);
    want[4000..7000].copy_from_slice(&m2);
    // SAFETY: the NIC wrote `heap` before the completions came; nothing writes it now.
    let got = unsafe { std::slice::from_raw_parts(base, want.len()) }.to_vec();
    let first_diff = got.iter().zip(&want).position(|(x, y)| x != y);
    assert_eq!(first_diff, None, "heap byte differs (seed {SEED:#x})");
    // The CPU side of an MR on the application's memory is that memory.
    let mut through_mr = vec![0u8; 3000];
    r2.read(0, &mut through_mr).unwrap();
    assert_eq!(through_mr, m2);
    // One byte past r1's end: the NIC refuses it, and nothing of the allocation changes.
    b.post_send(&write(3, 0, 100, &r1, 4901)).unwrap();
    assert_eq!(wait(&w.cq_a, 1, 100)[0].status, WcStatus::RemAccessErr);
    // Deregistered: the rkey is dead, and the bus addresses with it.
    let dead = r2.rkey();
    r2.dereg_mr().unwrap();
    a.post_send(&SendWr {
        wr_id: 4,
        send_flags: SendFlags::SIGNALED,
        opcode: WrOpcode::RdmaWrite { remote_addr: base as u64 + 4000, rkey: dead },
        sg_list: src.sge(0, 64).into(),
    })
    .unwrap();
    assert_eq!(wait(&w.cq_a, 1, 64)[0].status, WcStatus::RemAccessErr);
    // SAFETY: as above.
    let after = unsafe { std::slice::from_raw_parts(base, want.len()) }.to_vec();
    assert_eq!(after.iter().zip(&want).position(|(x, y)| x != y), None, "refused WRITEs changed nothing");
    drop(r1);
    assert_no_violations(&nics);
    drop(heap);
}

/// WRITEs and READs of every size residue mod 64 (0 to 129 bytes, and
/// around the 256-byte MTU and 4 KiB), into and out of heap memory
/// registered at an odd offset, on the highest QPN; the whole allocation is
/// compared with a model after each message, so a byte placed one off or
/// past the registration shows.
#[test]
fn every_size_residue_lands_exactly_in_application_memory_on_the_highest_qp() {
    residues(None);
}

/// The same with frames lost, duplicated and corrupted on both links: the
/// recovery's resends read and write the application's memory too.
#[test]
fn every_size_residue_lands_exactly_in_application_memory_under_link_faults() {
    residues(Some(RandomFaults { loss: 0.03, burst: 1.0, dup: 0.02, corrupt: 0.03, jitter_ns: 0, seed: SEED }));
}

fn residues(faults: Option<RandomFaults>) {
    let nics = pair();
    if let Some(f) = faults {
        for link in 0..2 {
            nics.cluster.lock().faults(link).set_random(RandomFaults { seed: f.seed ^ link as u64, ..f });
        }
    }
    let w = World::highest(&nics, 1, 4, Mtu::Mtu256);
    let (a, b) = &w.conns[0];
    assert_eq!(b.qp_num() as usize, rnic_spec::params::NUM_QPS - 1, "the highest QPN");
    const LEN: usize = 3 * 4096;
    // Side B's memory: heap at offset 13, REMOTE_WRITE and REMOTE_READ; side A's: heap at offset 5.
    let mut b_heap = pattern::make(SEED, u64::MAX, LEN + 64);
    let mut a_heap = pattern::make(SEED, u64::MAX - 1, LEN + 64);
    let rw = AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_READ | AccessFlags::LOCAL_WRITE;
    // SAFETY: both vectors outlive the registrations (dropped after them, at the end).
    let (dst, src) = unsafe {
        (
            w.pd_b.reg_mr_raw(b_heap.as_mut_ptr().add(13), LEN, rw).unwrap(),
            w.pd_a.reg_mr_raw(a_heap.as_mut_ptr().add(5), LEN, AccessFlags::LOCAL_WRITE).unwrap(),
        )
    };
    let (mut b_model, mut a_model) = (b_heap.clone(), a_heap.clone());
    let snapshot = |v: &Vec<u8>| {
        // SAFETY: the NIC has completed every message before this is read; nothing writes meanwhile.
        unsafe { std::slice::from_raw_parts(v.as_ptr(), v.len()) }.to_vec()
    };
    let sizes: Vec<usize> = (0..=129).chain([255, 256, 257, 511, 513, 4095, 4096, 4097]).collect();
    for (m, &size) in sizes.iter().enumerate() {
        let read = m % 2 == 1;
        let off = (m * 61) % (LEN - size).max(1);
        let data = pattern::make(SEED, stream(0, m as u32), size);
        let opcode = if read {
            b_model[13 + off..13 + off + size].copy_from_slice(&data);
            dst.write(off as u64, &data).unwrap();
            a_model[5 + off..5 + off + size].copy_from_slice(&data);
            WrOpcode::RdmaRead { remote_addr: dst.addr() + off as u64, rkey: dst.rkey() }
        } else {
            a_model[5 + off..5 + off + size].copy_from_slice(&data);
            src.write(off as u64, &data).unwrap();
            b_model[13 + off..13 + off + size].copy_from_slice(&data);
            WrOpcode::RdmaWrite { remote_addr: dst.addr() + off as u64, rkey: dst.rkey() }
        };
        let sg = src.sge(off as u64, size as u32);
        let sg_list = if size == 0 { Default::default() } else { sg.into() };
        a.post_send(&SendWr { wr_id: m as u64, send_flags: SendFlags::SIGNALED, opcode, sg_list }).unwrap();
        let wc = wait(&w.cq_a, 1, size as u64);
        assert_eq!((wc[0].wr_id, wc[0].status), (m as u64, WcStatus::Success), "{size} B (read {read})");
        for (side, heap, model) in [("B", &b_heap, &b_model), ("A", &a_heap, &a_model)] {
            let got = snapshot(heap);
            let d = got.iter().zip(model).position(|(x, y)| x != y);
            assert_eq!(
                d, None,
                "side {side}, {size} B at {off} (read {read}): first differing byte of the allocation (seed {SEED:#x})"
            );
        }
    }
    drop((dst, src));
    assert_no_violations(&nics);
    drop((a_heap, b_heap));
    if faults.is_some() {
        let links = nics.cluster.lock().stats().links;
        let (lost, bad) = links.iter().fold((0, 0), |(l, c), s| (l + s.dropped, c + s.corrupted));
        assert!(lost > 0 && bad > 0, "the faults happened: {lost} lost, {bad} corrupted");
    }
}
