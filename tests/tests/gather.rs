//! Send gather lists: SENDs and WRITEs whose payload comes from two
//! entries (`MAX_SEND_SGE`), the NIC reading a packet that straddles them
//! as two DMA reads and joining the pieces into one payload.
//!
//! Constrained-random lists against a reference: entry lengths drawn from
//! the boundaries (0, 1, 63, 64, 65, one MTU and its neighbours) and from
//! anywhere up to three MTUs, at any byte alignment, in two source MRs in
//! either order. The reference is the concatenation of the entries' bytes;
//! every byte of the destination MR is compared afterwards (so a byte out
//! of place, past the message or missing fails), byte_len and statuses are
//! checked, and the DMA shadow sees no access outside registered memory.
//! Also under loss, with selective repeat on (a gathered WQE's packet is
//! never resent alone: the slow path goes back to it instead), and the
//! library's refusals. Seeds are fixed; a failure names the seed, the
//! message and the byte.

use rnic::{AccessFlags, Mr, Mtu, RecvWr, SendFlags, SendWr, SgList, Sge, WcOpcode, WcStatus, WrOpcode, MAX_SEND_SGE};
use rnic_sim::faults::FrameClass;
use rnic_sim::rng::SplitMix as Rng;
use rnic_tests::{assert_no_violations, fill_sentinel, pair, read_all, stream, wait, World, SEED};
use rnic_tools::pattern;

/// Bytes of each message's region in the source and destination MRs.
const REGION: usize = 40 << 10;

/// One gather entry: which source MR, its offset there, its length.
#[derive(Clone, Copy, Debug)]
struct Entry {
    mr: usize,
    off: usize,
    len: usize,
}

/// A random entry length: a boundary around a beat or the MTU, or anything up to three MTUs.
fn entry_len(r: &mut Rng, mtu: usize) -> usize {
    match r.below(10) {
        0 => 0,
        1 => 1,
        2 => [63, 64, 65][r.below(3) as usize],
        3 => [mtu - 1, mtu, mtu + 1][r.below(3) as usize],
        4 => r.range(1, 8) as usize,
        5 => mtu * r.range(1, 3) as usize - r.below(64) as usize,
        _ => r.range(1, 3 * mtu as u64) as usize,
    }
}

/// Two entries for message `m` inside its region of either source MR, in either address order,
/// at any alignment.
fn random_list(r: &mut Rng, m: usize, mtu: usize) -> [Entry; 2] {
    let mut es = [0, 1].map(|_| Entry { mr: r.below(2) as usize, off: 0, len: entry_len(r, mtu) });
    let first = r.below(2) as usize;
    let mut at = [m * REGION; 2];
    for i in [first, 1 - first] {
        let e = &mut es[i];
        at[e.mr] += if r.pct(30) { 0 } else { r.range(1, 200) as usize };
        e.off = at[e.mr];
        at[e.mr] += e.len;
    }
    assert!(at.iter().all(|&a| a <= (m + 1) * REGION), "region overflow");
    es
}

/// Posts `count` SENDs and WRITEs with two-entry gather lists on one QP pair and checks every
/// byte. `drops`: data packets NIC0 sends that the link loses (each the k-th after the last).
fn run(seed: u64, mtu: Mtu, count: usize, drops: &[u64], sr: bool) {
    let nics = pair();
    {
        let w = World::with_selective_repeat(&nics, 1, count as u32, mtu, sr);
        let (a, b) = &w.conns[0];
        let m = mtu.bytes() as usize;
        let mut r = Rng::new(seed);
        let srcs: Vec<Mr> = (0..2).map(|_| w.pd_a.reg_mr(count * REGION, AccessFlags::empty()).unwrap()).collect();
        let src_bytes: Vec<Vec<u8>> = srcs
            .iter()
            .enumerate()
            .map(|(k, mr)| {
                let d = pattern::make(SEED ^ seed, stream(k as u32, 0xFF), count * REGION);
                mr.write(0, &d).unwrap();
                d
            })
            .collect();
        let dst = w.pd_b.reg_mr(count * REGION, AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE).unwrap();
        let mut want = fill_sentinel(&dst);
        let lists: Vec<[Entry; 2]> = (0..count).map(|i| random_list(&mut r, i, m)).collect();
        let sends: Vec<bool> = (0..count).map(|_| r.pct(50)).collect();
        let mut sizes = Vec::new();
        // Coverage: packets that straddle the two entries, with the join inside a beat.
        let (mut straddle, mut mid_beat) = (0, 0);
        for (i, list) in lists.iter().enumerate() {
            let data: Vec<u8> =
                list.iter().flat_map(|e| src_bytes[e.mr][e.off..e.off + e.len].iter().copied()).collect();
            want[i * REGION..i * REGION + data.len()].copy_from_slice(&data);
            let (l0, l1) = (list[0].len, list[1].len);
            if l0 > 0 && l1 > 0 && l0 % m != 0 {
                straddle += 1;
                mid_beat += (l0 % 64 != 0) as u32;
            }
            sizes.push(data.len());
        }
        assert!(
            straddle >= count as u32 / 4 && mid_beat >= 4,
            "seed {seed:#x}: weak stimulus ({straddle}, {mid_beat})"
        );
        {
            let mut c = nics.cluster.lock();
            for &k in drops {
                c.faults(0).drop_matching(k, 1, Box::new(|f: &FrameClass| !f.opcode.is_ack()));
            }
        }
        let recv_sges: Vec<Sge> =
            (0..count).filter(|&i| sends[i]).map(|i| dst.sge((i * REGION) as u64, REGION as u32)).collect();
        let recvs: Vec<RecvWr> = recv_sges
            .iter()
            .enumerate()
            .map(|(j, s)| RecvWr { wr_id: 1000 + j as u64, sg_list: std::slice::from_ref(s) })
            .collect();
        b.post_recv_batch(&recvs).unwrap();
        let wrs: Vec<SendWr> = lists
            .iter()
            .enumerate()
            .map(|(i, l)| SendWr {
                wr_id: i as u64,
                send_flags: SendFlags::SIGNALED,
                opcode: if sends[i] {
                    WrOpcode::Send
                } else {
                    WrOpcode::RdmaWrite { remote_addr: dst.addr() + (i * REGION) as u64, rkey: dst.rkey() }
                },
                sg_list: l.map(|e| srcs[e.mr].sge(e.off as u64, e.len as u32)).into(),
            })
            .collect();
        a.post_send_batch(&wrs).unwrap();
        let bytes: u64 = sizes.iter().map(|&s| s as u64).sum();
        let wa = wait(&w.cq_a, count, 4 * bytes);
        for (i, c) in wa.iter().enumerate() {
            assert_eq!(
                (c.wr_id, c.status, c.byte_len as usize),
                (i as u64, WcStatus::Success, sizes[i]),
                "seed {seed:#x}: send completion {i} (list {:?})",
                lists[i]
            );
        }
        let recv_of: Vec<usize> = (0..count).filter(|&i| sends[i]).collect();
        let wb = wait(&w.cq_b, recv_of.len(), 4 * bytes);
        for (j, c) in wb.iter().enumerate() {
            assert_eq!(
                (c.wr_id, c.status, c.opcode, c.byte_len as usize),
                (1000 + j as u64, WcStatus::Success, WcOpcode::Recv, sizes[recv_of[j]]),
                "seed {seed:#x}: receive completion {j} (message {})",
                recv_of[j]
            );
        }
        let dropped: u64 = nics.cluster.lock().stats().links.iter().map(|l| l.dropped).sum();
        assert_eq!(dropped, drops.len() as u64, "seed {seed:#x}: the losses asked for");
        let got = read_all(&dst);
        if let Some(o) = got.iter().zip(&want).position(|(g, x)| g != x) {
            let i = o / REGION;
            panic!(
                "seed {seed:#x} ({mtu:?}, drops {drops:?}): destination byte {o:#x} (message {i} offset {}) is \
                 {:#04x}, expected {:#04x}: {} of {} bytes from list {:?}",
                o % REGION,
                got[o],
                want[o],
                if sends[i] { "SEND" } else { "WRITE" },
                sizes[i],
                lists[i]
            );
        }
    }
    assert_no_violations(&nics);
}

#[test]
fn gather_from_two_entries_mtu256() {
    run(0x6A7E_0001, Mtu::Mtu256, 48, &[], false);
}

#[test]
fn gather_from_two_entries_mtu1024() {
    run(0x6A7E_0002, Mtu::Mtu1024, 48, &[], false);
}

#[test]
fn gather_from_two_entries_mtu4096() {
    run(0x6A7E_0003, Mtu::Mtu4096, 32, &[], false);
}

/// Lost packets with selective repeat: holes in gathered WQEs are recovered by going back.
#[test]
fn gather_under_loss_selective_repeat() {
    run(0x6A7E_0004, Mtu::Mtu256, 32, &[3, 20, 41], true);
}

/// Lost packets, go-back-N.
#[test]
fn gather_under_loss_go_back_n() {
    run(0x6A7E_0005, Mtu::Mtu1024, 32, &[5, 17], false);
}

/// The library refuses a list longer than the send WQE holds, and a READ
/// whose destination is more than one entry.
#[test]
fn lists_the_nic_cannot_gather_are_refused() {
    let nics = pair();
    let w = World::new(&nics, 1, 4, Mtu::Mtu1024);
    let (a, _) = &w.conns[0];
    let mr = w.pd_a.reg_mr(4096, AccessFlags::LOCAL_WRITE).unwrap();
    let long: Vec<Sge> = (0..MAX_SEND_SGE as u64 + 1).map(|i| mr.sge(i * 100, 10)).collect();
    let e = SgList::new(&long).err().expect("a list past MAX_SEND_SGE");
    assert!(e.to_string().contains("gather entries"), "{e}");
    let e = a
        .post_send(&SendWr {
            wr_id: 1,
            send_flags: SendFlags::SIGNALED,
            opcode: WrOpcode::RdmaRead { remote_addr: 0x1000, rkey: 0x1234 },
            sg_list: [mr.sge(0, 100), mr.sge(200, 100)].into(),
        })
        .unwrap_err();
    assert!(e.to_string().contains("RDMA READ destination"), "{e}");
    assert_eq!(a.send_outstanding(), 0);
}
