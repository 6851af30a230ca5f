//! Receive scatter lists: SENDs into receive WRs of up to `MAX_RECV_SGE`
//! entries, the NIC placing each packet piece by piece across entries.
//!
//! Constrained-random lists against a reference: entry lengths drawn from
//! the boundaries (0, 1, 63, 64, 65, one MTU and its neighbours) and from
//! anywhere up to a few MTUs, entries in two MRs, in shuffled address order
//! with gaps of 0 and more between them, messages of every length up to the
//! list's. The reference lays the message over the entries in order;
//! every byte of both MRs is compared afterwards (so a byte written to a
//! gap, past an entry or into an empty entry fails), byte_len is checked,
//! and the DMA shadow sees no access outside registered memory. Also under
//! loss (packets placed out of order fetch the list at their RSN), and an
//! entry whose MR refuses local writes (the receive completes
//! LOC_PROT_ERR and no entry is written). Seeds are fixed; a failure names
//! the seed, the message and the byte.

use rnic::{AccessFlags, Mr, Mtu, QpState, RecvWr, SendFlags, SendWr, Sge, WcOpcode, WcStatus, WrOpcode, MAX_RECV_SGE};
use rnic_sim::faults::FrameClass;
use rnic_sim::rng::SplitMix as Rng;
use rnic_tests::{assert_no_violations, fill_sentinel, pair, read_all, stream, wait, World, SEED};
use rnic_tools::pattern;

/// Bytes of each message's region in both destination MRs.
const REGION: usize = 40 << 10;

/// One entry: which destination MR, its offset there, its length.
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
        _ => r.range(1, 3 * mtu as u64) as usize,
    }
}

/// A random list for message `m`: 1..=MAX_RECV_SGE entries, laid out in shuffled order with
/// random gaps inside the message's region of either MR.
fn random_list(r: &mut Rng, m: usize, mtu: usize) -> Vec<Entry> {
    let n = r.range(1, MAX_RECV_SGE as u64) as usize;
    let mut es: Vec<Entry> =
        (0..n).map(|_| Entry { mr: r.below(2) as usize, off: 0, len: entry_len(r, mtu) }).collect();
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        order.swap(i, r.below(i as u64 + 1) as usize);
    }
    let mut at = [m * REGION; 2];
    for &i in &order {
        let e = &mut es[i];
        at[e.mr] += if r.pct(40) { 0 } else { r.range(1, 200) as usize };
        e.off = at[e.mr];
        at[e.mr] += e.len;
    }
    assert!(at.iter().all(|&a| a <= (m + 1) * REGION), "region overflow");
    es
}

/// Sends `count` messages on one QP pair into random scatter lists and checks every byte.
/// `drops`: data packets NIC0 sends that the link loses (the k-th after `skip`, each).
fn run(seed: u64, mtu: Mtu, count: usize, drops: &[u64]) {
    let nics = pair();
    {
        let w = World::new(&nics, 1, count as u32, mtu);
        let (a, b) = &w.conns[0];
        let m = mtu.bytes() as usize;
        let mut r = Rng::new(seed);
        let dsts: Vec<Mr> = (0..2).map(|_| w.pd_b.reg_mr(count * REGION, AccessFlags::LOCAL_WRITE).unwrap()).collect();
        let mut want: Vec<Vec<u8>> = dsts.iter().map(fill_sentinel).collect();
        let src = w.pd_a.reg_mr(count * REGION, AccessFlags::empty()).unwrap();
        let lists: Vec<Vec<Entry>> = (0..count).map(|i| random_list(&mut r, i, m)).collect();
        let mut sizes = Vec::new();
        // Coverage: messages spread over two or more entries, and entry changes inside a beat.
        let (mut spread, mut mid_beat) = (0, 0);
        for (i, list) in lists.iter().enumerate() {
            let total: usize = list.iter().map(|e| e.len).sum();
            let size = if r.pct(50) { total } else { r.below(total as u64 + 1) as usize };
            let data = pattern::make(SEED ^ seed, stream(0, i as u32), size);
            src.write((i * REGION) as u64, &data).unwrap();
            // The reference: the message over the entries in order.
            let (mut o, mut used) = (0, 0);
            for e in list {
                let n = e.len.min(size - o);
                want[e.mr][e.off..e.off + n].copy_from_slice(&data[o..o + n]);
                if n > 0 {
                    used += 1;
                    mid_beat += (o % 64 != 0) as u32;
                }
                o += n;
            }
            spread += (used > 1) as u32;
            sizes.push(size);
        }
        assert!(spread >= count as u32 / 4 && mid_beat >= 4, "seed {seed:#x}: weak stimulus ({spread}, {mid_beat})");
        {
            let mut c = nics.cluster.lock();
            for &k in drops {
                c.faults(0).drop_matching(k, 1, Box::new(|f: &FrameClass| !f.opcode.is_ack()));
            }
        }
        let sges: Vec<Vec<Sge>> =
            lists.iter().map(|l| l.iter().map(|e| dsts[e.mr].sge(e.off as u64, e.len as u32)).collect()).collect();
        let recvs: Vec<RecvWr> =
            sges.iter().enumerate().map(|(i, s)| RecvWr { wr_id: 1000 + i as u64, sg_list: s }).collect();
        b.post_recv_batch(&recvs).unwrap();
        let sends: Vec<SendWr> = sizes
            .iter()
            .enumerate()
            .map(|(i, &size)| SendWr {
                wr_id: i as u64,
                send_flags: SendFlags::SIGNALED,
                opcode: WrOpcode::Send,
                sg_list: src.sge((i * REGION) as u64, size as u32).into(),
            })
            .collect();
        a.post_send_batch(&sends).unwrap();
        let bytes: u64 = sizes.iter().map(|&s| s as u64).sum();
        let wa = wait(&w.cq_a, count, 4 * bytes);
        assert!(wa.iter().all(|c| c.status == WcStatus::Success), "seed {seed:#x}: send completions {wa:?}");
        let wb = wait(&w.cq_b, count, 4 * bytes);
        for (i, c) in wb.iter().enumerate() {
            assert_eq!(
                (c.wr_id, c.status, c.opcode, c.byte_len as usize),
                (1000 + i as u64, WcStatus::Success, WcOpcode::Recv, sizes[i]),
                "seed {seed:#x}: receive completion {i} (list {:?})",
                lists[i]
            );
        }
        let dropped: u64 = nics.cluster.lock().stats().links.iter().map(|l| l.dropped).sum();
        assert_eq!(dropped, drops.len() as u64, "seed {seed:#x}: the losses asked for");
        for (k, mr) in dsts.iter().enumerate() {
            let got = read_all(mr);
            if let Some(o) = got.iter().zip(&want[k]).position(|(g, x)| g != x) {
                let i = o / REGION;
                let inside = lists[i].iter().position(|e| e.mr == k && (e.off..e.off + e.len).contains(&o));
                panic!(
                    "seed {seed:#x} ({mtu:?}, drops {drops:?}): MR {k} byte {o:#x} is {:#04x}, expected {:#04x}: \
                     message {i} of {} bytes, entry {inside:?} of its list {:?}",
                    got[o], want[k][o], sizes[i], lists[i]
                );
            }
        }
    }
    assert_no_violations(&nics);
}

#[test]
fn send_into_random_lists_mtu256() {
    run(0x5CA7_0001, Mtu::Mtu256, 48, &[]);
}

#[test]
fn send_into_random_lists_mtu1024() {
    run(0x5CA7_0002, Mtu::Mtu1024, 48, &[]);
}

#[test]
fn send_into_random_lists_mtu4096() {
    run(0x5CA7_0003, Mtu::Mtu4096, 32, &[]);
}

/// Lost packets: the ones after each loss are placed out of order, each
/// fetching its list at its RSN.
#[test]
fn send_into_random_lists_under_loss() {
    run(0x5CA7_0004, Mtu::Mtu256, 32, &[3, 20, 41]);
}

/// A list whose second entry lies in an MR without LOCAL_WRITE: every
/// entry is checked before a byte lands, so the receive completes
/// LOC_PROT_ERR, the sender REM_OP_ERR, and neither entry is written.
#[test]
fn an_entry_the_nic_may_not_write_fails_the_whole_receive() {
    let nics = pair();
    {
        let w = World::new(&nics, 1, 4, Mtu::Mtu1024);
        let (a, b) = &w.conns[0];
        let src = w.pd_a.reg_mr(8192, AccessFlags::empty()).unwrap();
        src.write(0, &pattern::make(SEED, stream(0, 7), 8192)).unwrap();
        let good = w.pd_b.reg_mr(8192, AccessFlags::LOCAL_WRITE).unwrap();
        let ro = w.pd_b.reg_mr(8192, AccessFlags::REMOTE_WRITE).unwrap();
        let (good_before, ro_before) = (fill_sentinel(&good), fill_sentinel(&ro));
        let list = [good.sge(100, 1000), ro.sge(0, 4000)];
        b.post_recv(&RecvWr { wr_id: 1, sg_list: &list }).unwrap();
        a.post_send(&SendWr {
            send_flags: SendFlags::SIGNALED,
            wr_id: 2,
            opcode: WrOpcode::Send,
            sg_list: src.sge(0, 3000).into(),
        })
        .unwrap();
        let wa = wait(&w.cq_a, 1, 8192);
        assert_eq!((wa[0].wr_id, wa[0].status), (2, WcStatus::RemOpErr), "{wa:?}");
        let wb = wait(&w.cq_b, 1, 8192);
        assert_eq!((wb[0].wr_id, wb[0].status, wb[0].opcode), (1, WcStatus::LocProtErr, WcOpcode::Recv), "{wb:?}");
        assert_eq!(b.state(), QpState::Error);
        assert!(read_all(&good) == good_before, "the first entry was written though the list was refused");
        assert!(read_all(&ro) == ro_before, "the entry without LOCAL_WRITE was written");
    }
    assert_no_violations(&nics);
}

/// The library refuses a list longer than the NIC's receive WQE holds.
#[test]
fn a_list_longer_than_the_wqe_is_refused() {
    let nics = pair();
    let w = World::new(&nics, 1, 4, Mtu::Mtu1024);
    let (_, b) = &w.conns[0];
    let mr = w.pd_b.reg_mr(4096, AccessFlags::LOCAL_WRITE).unwrap();
    let list: Vec<Sge> = (0..MAX_RECV_SGE as u64 + 1).map(|i| mr.sge(i * 100, 10)).collect();
    let e = b.post_recv(&RecvWr { wr_id: 1, sg_list: &list }).unwrap_err();
    assert!(e.to_string().contains("scatter entries"), "{e}");
}
