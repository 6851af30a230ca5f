//! WRITE and SEND of 1 B, 63 B, 4 KiB, 64 KiB and 1 MiB on one QP and on
//! four QPs; RDMA READ of every length around the path MTU at MTUs 256,
//! 1024 and 4096, on the lowest and the highest QPNs; WRITE then READ of
//! the same bytes, and READs between SENDs, on one QP. Every destination
//! byte checked (payload and guard bytes), and no DMA shadow violation.

use rnic::{AccessFlags, Mtu, RecvWr, SendWr, WcOpcode, WcStatus, WrOpcode};
use rnic_tests::{
    assert_no_violations, assert_same, fill_sentinel, pair, read_all, stream, transfer, transfer_in, wait, Op, World,
    SEED,
};
use rnic_tools::pattern;

macro_rules! cases {
    ($($name:ident: $op:expr, $size:expr, $qps:expr, $msgs:expr, $mtu:expr;)*) => {
        $(
            #[test]
            fn $name() {
                transfer($op, $size, $qps, $msgs, $mtu);
            }
        )*
    };
}

cases! {
    write_1b_1qp: Op::Write, 1, 1, 4, Mtu::Mtu4096;
    write_63b_1qp: Op::Write, 63, 1, 4, Mtu::Mtu4096;
    write_4k_1qp: Op::Write, 4096, 1, 4, Mtu::Mtu4096;
    write_64k_1qp: Op::Write, 65536, 1, 4, Mtu::Mtu4096;
    write_1m_1qp: Op::Write, 1 << 20, 1, 1, Mtu::Mtu4096;
    write_1b_4qp: Op::Write, 1, 4, 4, Mtu::Mtu4096;
    write_63b_4qp: Op::Write, 63, 4, 4, Mtu::Mtu4096;
    write_4k_4qp: Op::Write, 4096, 4, 4, Mtu::Mtu4096;
    write_64k_4qp: Op::Write, 65536, 4, 2, Mtu::Mtu4096;
    write_1m_4qp: Op::Write, 1 << 20, 4, 1, Mtu::Mtu4096;
    send_1b_1qp: Op::Send, 1, 1, 4, Mtu::Mtu4096;
    send_63b_1qp: Op::Send, 63, 1, 4, Mtu::Mtu4096;
    send_4k_1qp: Op::Send, 4096, 1, 4, Mtu::Mtu4096;
    send_64k_1qp: Op::Send, 65536, 1, 4, Mtu::Mtu4096;
    send_1m_1qp: Op::Send, 1 << 20, 1, 1, Mtu::Mtu4096;
    send_1b_4qp: Op::Send, 1, 4, 4, Mtu::Mtu4096;
    send_63b_4qp: Op::Send, 63, 4, 4, Mtu::Mtu4096;
    send_4k_4qp: Op::Send, 4096, 4, 4, Mtu::Mtu4096;
    send_64k_4qp: Op::Send, 65536, 4, 2, Mtu::Mtu4096;
    send_1m_4qp: Op::Send, 1 << 20, 4, 1, Mtu::Mtu4096;
    // Small MTUs: many packets per message, unaligned last packets.
    write_10000b_mtu256: Op::Write, 10000, 2, 2, Mtu::Mtu256;
    send_10000b_mtu1024: Op::Send, 10000, 2, 2, Mtu::Mtu1024;
}

/// RDMA READ of every length around the path MTU (none, one byte, one
/// beat and its neighbours, one packet and its neighbours, two packets and
/// a bit, 1 MiB), three per QP on two QPs (QPNs 2 and 3), every byte of the
/// requester's destination checked, guard bytes included; completions
/// `RdmaRead`, `Success`, in order.
macro_rules! read_lengths {
    ($($module:ident: $mtu:expr, $bytes:expr;)*) => {
        $(
            mod $module {
                use super::*;
                const MTU: Mtu = $mtu;
                const M: usize = $bytes;

                fn read(size: usize) {
                    assert_eq!(MTU.bytes() as usize, M);
                    transfer(Op::Read, size, 2, 3, MTU);
                }

                #[test]
                fn read_0b() {
                    read(0);
                }

                #[test]
                fn read_1b() {
                    read(1);
                }

                #[test]
                fn read_63b() {
                    read(63);
                }

                #[test]
                fn read_64b() {
                    read(64);
                }

                #[test]
                fn read_65b() {
                    read(65);
                }

                #[test]
                fn read_mtu_minus_1() {
                    read(M - 1);
                }

                #[test]
                fn read_mtu() {
                    read(M);
                }

                #[test]
                fn read_mtu_plus_1() {
                    read(M + 1);
                }

                #[test]
                fn read_2mtu_plus_3() {
                    read(2 * M + 3);
                }

                #[test]
                fn read_1m() {
                    transfer(Op::Read, 1 << 20, 1, 1, MTU);
                }
            }
        )*
    };
}

read_lengths! {
    read_mtu4096: Mtu::Mtu4096, 4096;
    read_mtu1024: Mtu::Mtu1024, 1024;
    read_mtu256: Mtu::Mtu256, 256;
}

#[test]
fn read_1m_4qp() {
    transfer(Op::Read, 1 << 20, 4, 1, Mtu::Mtu4096);
}

/// READs on the two highest QPNs of both NICs (the last one 255).
#[test]
fn read_on_the_highest_qpns() {
    let nics = pair();
    {
        let w = World::highest(&nics, 2, 4, Mtu::Mtu1024);
        transfer_in(&w, Op::Read, 3 * 1024 + 5, 4);
    }
    assert_no_violations(&nics);
}

/// Bytes per slot of the mixed tests: room for the largest message and guard bytes.
const SLOT: usize = 32 << 10;

/// Compares a region of `SLOT`-byte slots with `want`, slot `i` holding `sizes[i]` bytes of payload.
fn assert_slots(what: &str, got: &[u8], want: &[u8], sizes: &[usize]) {
    for (i, &size) in sizes.iter().enumerate() {
        let s = i * SLOT..(i + 1) * SLOT;
        assert_same(&format!("{what}, slot {i}"), &got[s.clone()], &want[s], SLOT, 1, size);
    }
}

/// One QP: WRITE a pattern over older data, then READ the same bytes back
/// without waiting, several times (one or more packets, at MTU 1024). Each
/// READ must return what the WRITE before it wrote (a QP's requests are
/// executed in order at the responder), and the completions come in
/// posting order.
/// On the board shell, the MAC reports frames with FCS errors (as a CMAC
/// does for frames damaged on the wire): the shell drops them before the
/// core and counts them in `RX_MAC_DROP`; the requester resends, and every
/// byte arrives.
#[test]
fn write_on_the_shell_survives_frames_the_mac_reports_bad() {
    let nics = rnic_tests::pair_with(rnic_sim::SimConfig { top: rnic_sim::SimTop::Shell, ..Default::default() });
    {
        let w = World::new(&nics, 2, 8, Mtu::Mtu1024);
        nics.cluster.lock().nic_mut(1).mac_fcs_errors(6);
        transfer_in(&w, Op::Write, 65536, 8);
    }
    assert_no_violations(&nics);
    let mut c = nics.cluster.lock();
    assert_eq!(c.nic(1).shell_errors()[2], 6, "the shell dropped the six frames the MAC reported bad");
    let counted = c.read_reg(1, rnic_spec::regs::counters::RX_MAC_DROP).unwrap();
    assert_eq!(counted, 6, "RX_MAC_DROP counts them");
    assert_eq!(c.read_reg(0, rnic_spec::regs::counters::RX_MAC_DROP).unwrap(), 0, "nothing dropped on the other side");
}

#[test]
fn write_then_read_of_the_same_region_on_one_qp() {
    let sizes = [1usize, 1024, 3 * 1024 + 5, 20_000];
    let n = sizes.len();
    let nics = pair();
    {
        let w = World::new(&nics, 1, 2 * n as u32, Mtu::Mtu1024);
        let (a, _) = &w.conns[0];
        let src = w.pd_a.reg_mr(n * SLOT, AccessFlags::empty()).unwrap();
        let rw = AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_READ | AccessFlags::LOCAL_WRITE;
        let remote = w.pd_b.reg_mr(n * SLOT, rw).unwrap();
        // Older data than the sentinel: a READ that overtook its WRITE would copy it.
        let mut remote_want = pattern::make(SEED, stream(9, 0), n * SLOT);
        remote.write(0, &remote_want).unwrap();
        let dst = w.pd_a.reg_mr(n * SLOT, AccessFlags::LOCAL_WRITE).unwrap();
        let mut dst_want = fill_sentinel(&dst);
        let mut wrs = Vec::new();
        for (i, &size) in sizes.iter().enumerate() {
            let off = i * SLOT;
            let data = pattern::make(SEED, stream(0, i as u32), size);
            src.write(off as u64, &data).unwrap();
            remote_want[off..off + size].copy_from_slice(&data);
            dst_want[off..off + size].copy_from_slice(&data);
            let remote_addr = remote.addr() + off as u64;
            let rkey = remote.rkey();
            wrs.push(SendWr {
                send_flags: rnic::SendFlags::SIGNALED,
                wr_id: 2 * i as u64,
                opcode: WrOpcode::RdmaWrite { remote_addr, rkey },
                sg_list: src.sge(off as u64, size as u32).into(),
            });
            wrs.push(SendWr {
                send_flags: rnic::SendFlags::SIGNALED,
                wr_id: 2 * i as u64 + 1,
                opcode: WrOpcode::RdmaRead { remote_addr, rkey },
                sg_list: dst.sge(off as u64, size as u32).into(),
            });
        }
        a.post_send_batch(&wrs).unwrap();
        let wcs = wait(&w.cq_a, 2 * n, 2 * sizes.iter().sum::<usize>() as u64);
        let got: Vec<_> = wcs.iter().map(|c| (c.wr_id, c.status, c.opcode, c.byte_len)).collect();
        let want: Vec<_> = sizes
            .iter()
            .enumerate()
            .flat_map(|(i, &size)| {
                let i = i as u64;
                [
                    (2 * i, WcStatus::Success, WcOpcode::RdmaWrite, size as u32),
                    (2 * i + 1, WcStatus::Success, WcOpcode::RdmaRead, size as u32),
                ]
            })
            .collect();
        assert_eq!(got, want);
        assert_slots("the READs' destination", &read_all(&dst), &dst_want, &sizes);
        assert_slots("the WRITEs' target", &read_all(&remote), &remote_want, &sizes);
        assert!(w.cq_a.poll_cq_vec(1).unwrap().is_empty(), "extra completions");
    }
    assert_no_violations(&nics);
}

/// One QP: READs and SENDs alternating. The requester's completions come
/// in posting order, and each READ's data is in place when its completion
/// is polled.
#[test]
fn read_then_send_complete_in_order() {
    let reads = [5000usize, 1, 0, 4096];
    let sends = [100usize, 3000, 1, 1024];
    let n = reads.len();
    let nics = pair();
    {
        let w = World::new(&nics, 1, 2 * n as u32, Mtu::Mtu1024);
        let (a, b) = &w.conns[0];
        let remote = w.pd_b.reg_mr(n * SLOT, AccessFlags::REMOTE_READ).unwrap();
        let dst = w.pd_a.reg_mr(n * SLOT, AccessFlags::LOCAL_WRITE).unwrap();
        let src = w.pd_a.reg_mr(n * SLOT, AccessFlags::empty()).unwrap();
        let rbuf = w.pd_b.reg_mr(n * SLOT, AccessFlags::LOCAL_WRITE).unwrap();
        let mut dst_want = fill_sentinel(&dst);
        let mut rbuf_want = fill_sentinel(&rbuf);
        let mut wrs = Vec::new();
        for i in 0..n {
            let off = i * SLOT;
            let read = pattern::make(SEED, stream(0, i as u32), reads[i]);
            remote.write(off as u64, &read).unwrap();
            dst_want[off..off + reads[i]].copy_from_slice(&read);
            let sent = pattern::make(SEED, stream(1, i as u32), sends[i]);
            src.write(off as u64, &sent).unwrap();
            rbuf_want[off..off + sends[i]].copy_from_slice(&sent);
            b.post_recv(&RecvWr { wr_id: i as u64, sg_list: &[rbuf.sge(off as u64, SLOT as u32)] }).unwrap();
            wrs.push(SendWr {
                send_flags: rnic::SendFlags::SIGNALED,
                wr_id: 2 * i as u64,
                opcode: WrOpcode::RdmaRead { remote_addr: remote.addr() + off as u64, rkey: remote.rkey() },
                sg_list: dst.sge(off as u64, reads[i] as u32).into(),
            });
            wrs.push(SendWr {
                send_flags: rnic::SendFlags::SIGNALED,
                wr_id: 2 * i as u64 + 1,
                opcode: WrOpcode::Send,
                sg_list: src.sge(off as u64, sends[i] as u32).into(),
            });
        }
        a.post_send_batch(&wrs).unwrap();
        let bytes = (reads.iter().sum::<usize>() + sends.iter().sum::<usize>()) as u64;
        for (k, wr) in wrs.iter().enumerate() {
            let c = wait(&w.cq_a, 1, bytes)[0];
            let (i, is_read) = (k / 2, k % 2 == 0);
            let (op, len) = if is_read { (WcOpcode::RdmaRead, reads[i]) } else { (WcOpcode::Send, sends[i]) };
            assert_eq!(
                (c.wr_id, c.status, c.opcode, c.byte_len, c.qp_num),
                (wr.wr_id, WcStatus::Success, op, len as u32, a.qp_num()),
                "completion {k}"
            );
            if is_read {
                let off = i * SLOT;
                let mut got = vec![0u8; SLOT];
                dst.read(off as u64, &mut got).unwrap();
                assert_same(
                    &format!("READ {i} at its completion"),
                    &got,
                    &dst_want[off..off + SLOT],
                    SLOT,
                    1,
                    reads[i],
                );
            }
        }
        let recvs = wait(&w.cq_b, n, bytes);
        // A receive completion names the sender: the peer QP of this RC QP.
        let peer = w.conns[0].0.qp_num();
        assert!(recvs.iter().all(|c| c.src_qp == peer && c.vendor_err == 0), "{recvs:?}");
        let got: Vec<_> = recvs.iter().map(|c| (c.wr_id, c.status, c.opcode, c.byte_len)).collect();
        let want: Vec<_> =
            sends.iter().enumerate().map(|(i, &l)| (i as u64, WcStatus::Success, WcOpcode::Recv, l as u32)).collect();
        assert_eq!(got, want);
        assert_slots("the READs' destination", &read_all(&dst), &dst_want, &reads);
        assert_slots("the receive buffers", &read_all(&rbuf), &rbuf_want, &sends);
        assert!(
            w.cq_a.poll_cq_vec(1).unwrap().is_empty() && w.cq_b.poll_cq_vec(1).unwrap().is_empty(),
            "extra completions"
        );
    }
    assert_no_violations(&nics);
}
