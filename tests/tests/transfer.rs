//! WRITE and SEND of 1 B, 63 B, 4 KiB, 64 KiB and 1 MiB on one QP and on
//! four QPs, every destination byte checked (payload and guard bytes), and
//! no DMA shadow violation.

use rnic::Mtu;
use rnic_tests::{transfer, Op};

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
