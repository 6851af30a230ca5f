//! The register block (`hw/src/regs.rs`, top "regs") in Verilator: commits,
//! doorbells and counters decoded from BAR0 writes and reads.
//! The oracle is `rnic-spec`, never the RTL's own Rust model.

mod common;

use common::*;
use rnic_sim::model::Model;

#[test]
fn regs_decode_commits_doorbells_and_counters() {
    use rnic_spec::regs as r;
    let mut m = Model::new("regs").unwrap();
    let (wv, wa, wd, rv, ra, rrv, rrd) = (
        p(&m, "wr_valid"),
        p(&m, "wr_addr"),
        p(&m, "wr_data"),
        p(&m, "rd_valid"),
        p(&m, "rd_addr"),
        p(&m, "rd_resp_valid"),
        p(&m, "rd_resp_data"),
    );
    let (inc, qpc, sqdb, rqdb, dbq, dbv, stage) = (
        p(&m, "cnt_inc"),
        p(&m, "qp_commit"),
        p(&m, "sq_db"),
        p(&m, "rq_db"),
        p(&m, "db_qpn"),
        p(&m, "db_val"),
        p(&m, "stage"),
    );
    let write = |m: &mut Model, a: u32, d: u64| -> (u64, u64, u64, u64, u64) {
        m.set(wv, 1);
        m.set(wa, a as u64);
        m.set(wd, d);
        m.eval();
        let o = (m.get(qpc), m.get(sqdb), m.get(rqdb), m.get(dbq), m.get(dbv));
        m.tick();
        m.set(wv, 0);
        o
    };
    let read = |m: &mut Model, a: u32| -> u64 {
        m.set(rv, 1);
        m.set(ra, a as u64);
        m.eval();
        m.tick();
        m.set(rv, 0);
        for _ in 0..4 {
            m.eval();
            if m.get(rrv) == 1 {
                let v = m.get(rrd);
                m.tick();
                return v;
            }
            m.tick();
        }
        panic!("no read response for {a:#x}");
    };
    assert_eq!(read(&mut m, r::REG_ID) >> 32, r::ID_MAGIC);
    write(&mut m, r::REG_SRC_IP, 0x0a00_0002);
    assert_eq!(read(&mut m, r::REG_SRC_IP), 0x0a00_0002);
    write(&mut m, r::stage(2), 0xdead_beef_0000_1234);
    m.eval();
    let mut st = vec![0u32; 16];
    m.get_wide(stage, &mut st);
    assert_eq!((st[4], st[5]), (0x0000_1234, 0xdead_beef));
    assert_eq!(write(&mut m, r::REG_QP_COMMIT, 5).0, 1);
    assert_eq!(write(&mut m, r::db_sq(7), 42), (0, 1, 0, 7, 42));
    assert_eq!(write(&mut m, r::db_rq(255), 3), (0, 0, 1, 255, 3));
    // A doorbell or commit for an index the RTL does not hold is ignored and counted.
    let e0 = read(&mut m, r::counters::REG_ERR);
    assert_eq!(write(&mut m, r::db_sq(rnic_spec::params::NUM_QPS as u32), 1).1, 0);
    assert_eq!(write(&mut m, r::REG_QP_COMMIT, rnic_spec::params::NUM_QPS as u64 + 5).0, 0);
    assert_eq!(write(&mut m, r::REG_QP_COMMIT, (rnic_spec::params::NUM_QPS as u64 + 5) | r::QP_COMMIT_RESET_REQ).0, 0);
    assert_eq!(read(&mut m, r::counters::REG_ERR) - e0, 3);
    // The WQE push window: 16 words strobe `push_we` with their index; an address past them is ignored and counted.
    assert_ne!(read(&mut m, r::REG_CAPS) & r::CAPS_PUSH, 0, "REG_CAPS announces the push window");
    let (pwe, pidx) = (p(&m, "push_we"), p(&m, "push_idx"));
    let push = |m: &mut Model, a: u32| -> (u64, u64, u64) {
        m.set(wv, 1);
        m.set(wa, a as u64);
        m.set(wd, 0x1234);
        m.eval();
        let o = (m.get(pwe), m.get(pidx), m.get(sqdb));
        m.tick();
        m.set(wv, 0);
        o
    };
    for i in 0..r::PUSH_WORDS {
        assert_eq!(push(&mut m, r::push_word(i)), (1, i as u64, 0), "push word {i}");
    }
    let e0 = read(&mut m, r::counters::REG_ERR);
    for a in [r::push_word(r::PUSH_WORDS), r::PUSH_BASE + 0x4_0000, r::MSIX_TABLE - 8] {
        assert_eq!(push(&mut m, a).0, 0, "{a:#x} is past the push window");
    }
    assert_eq!(read(&mut m, r::counters::REG_ERR) - e0, 3);
    // The MSI-X table: 16 words strobe `msix_we` with their index (none of them a push word); past them, and the
    // read-only pending bits, are ignored and counted. Reads of the table, the pending bits and the armed bits
    // return the block's inputs; the read index follows the read address.
    let (mwe, midx, mridx, mrd, mpba, arm, armed, cval) = (
        p(&m, "msix_we"),
        p(&m, "msix_idx"),
        p(&m, "msix_ridx"),
        p(&m, "msix_rd"),
        p(&m, "msix_pba"),
        p(&m, "cq_arm"),
        p(&m, "cq_armed"),
        p(&m, "commit_val"),
    );
    assert_eq!(read(&mut m, r::REG_CAPS) >> r::CAPS_MSIX_SHIFT & 0xF, r::MSIX_VECTORS as u64);
    let strobe = |m: &mut Model, a: u32, d: u64| -> (u64, u64, u64, u64, u64) {
        m.set(wv, 1);
        m.set(wa, a as u64);
        m.set(wd, d);
        m.eval();
        let o = (m.get(mwe), m.get(midx), m.get(pwe), m.get(arm), m.get(cval));
        m.tick();
        m.set(wv, 0);
        o
    };
    for v in 0..r::MSIX_VECTORS {
        assert_eq!(strobe(&mut m, r::msix_addr(v), 0xFEE0_0000), (1, 2 * v as u64, 0, 0, 0xFEE0_0000), "vector {v}");
        assert_eq!(strobe(&mut m, r::msix_ctrl(v), 7), (1, 2 * v as u64 + 1, 0, 0, 7), "vector {v}");
    }
    let e0 = read(&mut m, r::counters::REG_ERR);
    for a in [r::msix_addr(r::MSIX_VECTORS), r::MSIX_PBA, r::MSIX_TABLE + 0x7_FFF8] {
        assert_eq!(strobe(&mut m, a, 1).0, 0, "{a:#x} is past the MSI-X table");
    }
    let ncq = rnic_spec::params::NUM_CQS as u64;
    let (we, _, pw, a, val) = strobe(&mut m, r::REG_CQ_ARM, ncq - 1);
    assert_eq!((we, pw, a, val), (0, 0, 1, ncq - 1), "arm the highest CQ");
    assert_eq!(strobe(&mut m, r::REG_CQ_ARM, ncq).3, 0, "no CQ {ncq}");
    assert_eq!(read(&mut m, r::counters::REG_ERR) - e0, 4);
    m.set(mrd, 0x0123_4567_89AB_CDEF);
    m.set(mpba, 0xA5);
    m.set(armed, 0x8000_0000_0000_0001);
    assert_eq!(read(&mut m, r::msix_ctrl(5)), 0x0123_4567_89AB_CDEF);
    m.set(ra, r::msix_ctrl(5) as u64);
    m.eval();
    assert_eq!(m.get(mridx), 11, "the read names table word 11");
    assert_eq!(read(&mut m, r::MSIX_PBA), 0xA5);
    assert_eq!(read(&mut m, r::REG_CQ_ARMED), 0x8000_0000_0000_0001);
    assert_eq!(read(&mut m, r::MSIX_TABLE + 0x80), 0, "past the table reads 0");
    // The last counter (IRQS) moves with the top increment bit.
    let s0 = read(&mut m, r::counters::IRQS);
    m.set(inc, 1 << (r::counters::COUNT - 1));
    m.eval();
    m.tick();
    m.set(inc, 0);
    m.eval();
    m.tick();
    assert_eq!(read(&mut m, r::counters::IRQS) - s0, 1);
    let c0 = read(&mut m, r::counters::RX_FRAMES);
    for _ in 0..3 {
        m.set(inc, 1 << 2);
        m.eval();
        m.tick();
    }
    m.set(inc, 0);
    // A counter moves the cycle after its event.
    m.eval();
    m.tick();
    assert_eq!(read(&mut m, r::counters::RX_FRAMES) - c0, 3);
    // RX_HDR_ERR has three sources (RX front end; responder and ACK
    // receiver, counted in `cnt_hdr2`): events in the same cycle all count (a
    // fuzz soak lost one when they were ORed).
    let hdr2 = p(&m, "cnt_hdr2");
    let h0 = read(&mut m, r::counters::RX_HDR_ERR);
    for (front, resp) in [(1u64, 1u64), (1, 0), (0, 1), (1, 2), (0, 2), (0, 0)] {
        m.set(inc, front << 4);
        m.set(hdr2, resp);
        m.eval();
        m.tick();
    }
    m.set(inc, 0);
    m.set(hdr2, 0);
    m.eval();
    m.tick();
    assert_eq!(read(&mut m, r::counters::RX_HDR_ERR) - h0, 9);
    assert!(read(&mut m, r::REG_CYCLES) > 0);
    // The CtrlQ registers drive the completion writer; writing the size restarts its producer index, a cycle
    // later (registered), when the size output already shows the new value.
    let (cb, cl, cc, crst) = (p(&m, "ctrlq_base"), p(&m, "ctrlq_size"), p(&m, "ctrlq_ci"), p(&m, "ctrlq_reset"));
    write(&mut m, r::REG_CTRLQ_BASE, 0xFFFF_1234_5678_9A00);
    write(&mut m, r::REG_CTRLQ_CI, 0x1_8000_0007);
    m.set(wv, 1);
    m.set(wa, r::REG_CTRLQ_LOG2 as u64);
    m.set(wd, 0x10C);
    m.eval();
    assert_eq!(m.get(crst), 0, "the CtrlQ reset is registered: no pulse in the write's cycle");
    m.tick();
    m.set(wv, 0);
    m.eval();
    assert_eq!((m.get(crst), m.get(cl)), (1, 1 << 0x0C), "the reset pulses the cycle after, with the new size");
    m.tick();
    m.eval();
    assert_eq!(m.get(crst), 0, "the reset is one cycle long");
    let mut base = [0u32; 2];
    m.get_wide(cb, &mut base);
    assert_eq!((base, m.get(cl), m.get(cc)), ([0x5678_9A00, 0xFFFF_1234], 1 << 0x0C, 0x8000_0007));
    assert_eq!(read(&mut m, r::REG_CTRLQ_BASE), 0xFFFF_1234_5678_9A00);
    assert_eq!((read(&mut m, r::REG_CTRLQ_LOG2), read(&mut m, r::REG_CTRLQ_CI)), (0x0C, 0x8000_0007));
    // The size is decoded when written: a log2 of 0 or above 16 sets up no CtrlQ (size 0).
    for (log2, size) in [(0u64, 0u64), (1, 2), (16, 1 << 16), (17, 0), (31, 0), (32, 0), (0xFF, 0), (0x103, 8)] {
        write(&mut m, r::REG_CTRLQ_LOG2, log2);
        m.eval();
        assert_eq!(m.get(cl), size, "CtrlQ size of log2 {log2:#x}");
        assert_eq!(read(&mut m, r::REG_CTRLQ_LOG2), log2 & 0xFF);
    }
    // An SQ rewind strobes with its QPN; one past the table is ignored and counted.
    let (rew, cv, rto) = (p(&m, "sq_rewind"), p(&m, "commit_val"), p(&m, "rto"));
    let strobe = |m: &mut Model, d: u64| -> (u64, u64) {
        m.set(wv, 1);
        m.set(wa, r::REG_SQ_REWIND as u64);
        m.set(wd, d);
        m.eval();
        let o = (m.get(rew), m.get(cv));
        m.tick();
        m.set(wv, 0);
        o
    };
    let top = rnic_spec::params::NUM_QPS as u64 - 1;
    assert_eq!(strobe(&mut m, top), (1, top));
    let e0 = read(&mut m, r::counters::REG_ERR);
    assert_eq!(strobe(&mut m, top + 1).0, 0);
    assert_eq!(read(&mut m, r::counters::REG_ERR) - e0, 1);
    write(&mut m, r::REG_RTO, 0x1_2345_6789);
    m.eval();
    assert_eq!((m.get(rto), read(&mut m, r::REG_RTO)), (0x2345_6789, 0x2345_6789), "REG_RTO keeps 32 bits");
    let probe = p(&m, "probe");
    write(&mut m, r::REG_PROBE, 0x9_8765_4321);
    assert_eq!((m.get(probe), read(&mut m, r::REG_PROBE)), (0x8765_4321, 0x8765_4321), "REG_PROBE keeps 32 bits");
    assert_eq!(m.get(rto), 0x2345_6789, "REG_PROBE leaves REG_RTO");
    // REG_CC_WINDOW: a write selects the QP (low QPN bits), a read returns the core's window for it.
    let (cwq, cwnd) = (p(&m, "cc_query_qpn"), p(&m, "cc_query_cwnd"));
    write(&mut m, r::REG_CC_WINDOW, 0x1FF);
    assert_eq!(m.get(cwq), 0xFF, "REG_CC_WINDOW selects QPN 255 (the low bits)");
    m.set(cwnd, 0x00F4_2400);
    assert_eq!(read(&mut m, r::REG_CC_WINDOW), 0x00F4_2400, "REG_CC_WINDOW reads the core's window");
    for (bit, reg) in [
        (15, r::counters::CTRLQ_DROP),
        (16, r::counters::CTRLQ_ENTRIES),
        (17, r::counters::SQ_REWINDS),
        (18, r::counters::SQ_REWIND_DROP),
        (19, r::counters::RTO_EXPIRED),
    ] {
        let c0 = read(&mut m, reg);
        m.set(inc, 1 << bit);
        m.eval();
        m.tick();
        m.set(inc, 0);
        m.eval();
        m.tick();
        assert_eq!(read(&mut m, reg) - c0, 1, "counter {reg:#x}");
    }
}
