//! Header pack (TX) and unpack (RX) of the fixed 128-byte rnic header.
//! The byte placement is generated from `rnic_spec::wire::off`, so the RTL
//! cannot drift from the contract; both blocks are pure wiring plus the
//! IPv4 checksum adder.

use rnic_spec::wire::{
    field, off, Frame, BTH_PKEY_DEFAULT, ETHERTYPE_IPV4, HDR_LEN, ICRC_LEN, IPV4_VER_IHL, IP_ECN_ECT0,
    IP_MF_OFFSET_MASK, IP_PROTO_UDP, IP_TTL_DEFAULT, ROCE_UDP_PORT,
};
use rust_hdl::prelude::*;
use std::fmt::Write;

/// A 64-byte beat as a 512-bit value (byte i in bits 8i+7..8i).
fn beat_of(b: &[u8]) -> Bits<512> {
    let mut v: Bits<512> = 0.into();
    for (i, &x) in b.iter().enumerate() {
        v = v | (bit_cast::<512, 8>((x as u64).into()) << Bits::<16>::from(8 * i as u64));
    }
    v
}

/// Verilog assigning `n` big-endian bytes of `src` (an expression at least
/// `8n` bits wide) to header bytes `o..o+n` of the 1024-bit `h`.
fn put(v: &mut String, src: &str, o: usize, n: usize) {
    for i in 0..n {
        writeln!(v, "  h[{}:{}] = {src}[{}:{}];", 8 * (o + i) + 7, 8 * (o + i), 8 * (n - 1 - i) + 7, 8 * (n - 1 - i))
            .unwrap();
    }
}
/// Verilog placing the constant `x` as `n` big-endian bytes at header byte `o`.
fn put_const(v: &mut String, x: u64, o: usize, n: usize) {
    for i in 0..n {
        writeln!(v, "  h[{}:{}] = 8'h{:02x};", 8 * (o + i) + 7, 8 * (o + i), (x >> (8 * (n - 1 - i))) & 0xFF).unwrap();
    }
}
/// Verilog reading `n` big-endian header bytes at `o` of `h` into `dst`.
fn get(v: &mut String, dst: &str, o: usize, n: usize) {
    for i in 0..n {
        writeln!(v, "  {dst}[{}:{}] = h[{}:{}];", 8 * (n - 1 - i) + 7, 8 * (n - 1 - i), 8 * (o + i) + 7, 8 * (o + i))
            .unwrap();
    }
}

/// Builds header beats 0 and 1 of a request or an ACK/NAK.
#[derive(LogicBlock, Default)]
pub struct TxHeader {
    /// 1: ACK/NAK layout (AETH + ACK extension); 0: request layout (RETH + request extension).
    pub is_ack: Signal<In, Bit>,
    /// Destination MAC.
    pub dst_mac: Signal<In, Bits<48>>,
    /// Source MAC.
    pub src_mac: Signal<In, Bits<48>>,
    /// Source IPv4.
    pub src_ip: Signal<In, Bits<32>>,
    /// Destination IPv4.
    pub dst_ip: Signal<In, Bits<32>>,
    /// UDP source port (entropy).
    pub sport: Signal<In, Bits<16>>,
    /// BTH opcode.
    pub opcode: Signal<In, Bits<8>>,
    /// BTH destination QPN.
    pub dqpn: Signal<In, Bits<24>>,
    /// BTH AckReq.
    pub ack_req: Signal<In, Bit>,
    /// BTH PSN.
    pub psn: Signal<In, Bits<24>>,
    /// Payload bytes (0..=4096).
    pub plen: Signal<In, Bits<13>>,
    /// RETH VA (request).
    pub va: Signal<In, Bits<64>>,
    /// RETH rkey (request).
    pub rkey: Signal<In, Bits<32>>,
    /// RETH DMA length = message length (request).
    pub msg_len: Signal<In, Bits<32>>,
    /// SSN (request) / echoed SSN (ACK).
    pub ssn: Signal<In, Bits<24>>,
    /// PSN_OFFSET (request) / echoed (ACK).
    pub psn_offset: Signal<In, Bits<24>>,
    /// TX timestamp (request) / echoed (ACK).
    pub ts: Signal<In, Bits<64>>,
    /// AETH syndrome (ACK).
    pub syndrome: Signal<In, Bits<8>>,
    /// AETH MSN (ACK).
    pub msn: Signal<In, Bits<24>>,
    /// Expected PSN (ACK).
    pub epsn: Signal<In, Bits<24>>,
    /// MSN_PSN: first PSN of message MSN (ACK).
    pub msn_psn: Signal<In, Bits<24>>,
    /// ECN echo (ACK).
    pub ecn_echo: Signal<In, Bits<8>>,
    /// Request RSN (receive WQE index).
    pub rsn: Signal<In, Bits<16>>,
    /// Request immediate data.
    pub imm: Signal<In, Bits<32>>,
    /// READ request: the requester's local address.
    pub laddr: Signal<In, Bits<64>>,
    /// READ request: the requester's lkey.
    pub lkey: Signal<In, Bits<32>>,
    /// ACK extension flags (`ack_flags`).
    pub ack_flags: Signal<In, Bits<8>>,
    /// SACK base PSN (ACK).
    pub sack_base: Signal<In, Bits<24>>,
    /// SACK bitmap segment (ACK).
    pub sack_bitmap: Signal<In, Bits<64>>,
    /// Out-of-order count (ACK).
    pub ooo: Signal<In, Bits<16>>,
    /// Payload bytes received, mod 2^32 (ACK).
    pub bytes_rx: Signal<In, Bits<32>>,
    /// Header beat 0 (bytes 0..64).
    pub beat0: Signal<Out, Bits<512>>,
    /// Header beat 1 (bytes 64..128).
    pub beat1: Signal<Out, Bits<512>>,
}

impl Logic for TxHeader {
    fn update(&mut self) {
        // Software model for rust-hdl's simulator: the spec's encoder (the
        // shipped Verilog is checked against the same encoder in Verilator).
        let ack = self.is_ack.val();
        let bytes6 = |x: u64| -> [u8; 6] { core::array::from_fn(|i| (x >> (40 - 8 * i)) as u8) };
        let f = Frame {
            dst_mac: bytes6(self.dst_mac.val().to_u64()),
            src_mac: bytes6(self.src_mac.val().to_u64()),
            src_ip: self.src_ip.val().to_u64() as u32,
            dst_ip: self.dst_ip.val().to_u64() as u32,
            ecn: IP_ECN_ECT0,
            sport: self.sport.val().to_u64() as u16,
            opcode: self.opcode.val().to_u64() as u8,
            dqpn: self.dqpn.val().to_u64() as u32,
            ack_req: self.ack_req.val(),
            psn: self.psn.val().to_u64() as u32,
            va: if ack { 0 } else { self.va.val().to_u64() },
            rkey: if ack { 0 } else { self.rkey.val().to_u64() as u32 },
            msg_len: if ack { 0 } else { self.msg_len.val().to_u64() as u32 },
            ssn: self.ssn.val().to_u64() as u32,
            psn_offset: self.psn_offset.val().to_u64() as u32,
            ts: self.ts.val().to_u64(),
            syndrome: self.syndrome.val().to_u64() as u8,
            msn: self.msn.val().to_u64() as u32,
            epsn: self.epsn.val().to_u64() as u32,
            msn_psn: if ack { self.msn_psn.val().to_u64() as u32 } else { 0 },
            echo_entropy: self.sport.val().to_u64() as u16,
            echo_ecn: self.ecn_echo.val().to_u64() as u8,
            ack_flags: if ack { self.ack_flags.val().to_u64() as u8 } else { 0 },
            sack_base: if ack { self.sack_base.val().to_u64() as u32 } else { 0 },
            sack_bitmap: if ack { self.sack_bitmap.val().to_u64() } else { 0 },
            ooo: if ack { self.ooo.val().to_u64() as u32 } else { 0 },
            bytes_rx: if ack { self.bytes_rx.val().to_u64() as u32 } else { 0 },
            rsn: if ack { 0 } else { self.rsn.val().to_u64() as u32 },
            imm: if ack { 0 } else { self.imm.val().to_u64() as u32 },
            laddr: if ack { 0 } else { self.laddr.val().to_u64() },
            lkey: if ack { 0 } else { self.lkey.val().to_u64() as u32 },
            payload: vec![0; self.plen.val().to_u64() as usize],
        };
        let bytes = f.encode();
        self.beat0.next = beat_of(&bytes[..64]);
        self.beat1.next = beat_of(&bytes[64..HDR_LEN]);
    }
    fn connect(&mut self) {
        self.beat0.connect();
        self.beat1.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut v = String::new();
        writeln!(v, "reg [1023:0] h;\nreg [15:0] ip_len, udp_len, csum;\nreg [1:0] pad;\nreg c4;\nreg [31:0] w24a, w24b, w24c, w24d, w24e, w_rsn, w_ooo;").unwrap();
        writeln!(v, "reg [15:0] t0, t1, t2, t3, t4, t5, t6, s1, k1, s2, k2, s3, k3, s4, k4, s5, k5;\nreg [16:0] f0;\nreg [17:0] f1;").unwrap();
        writeln!(v, "always @(*) begin\n  h = 1024'd0;").unwrap();
        // The IP length is the constant part plus the payload rounded up to 4
        // (BTH pad): the constant's low two bits, above them one add with the
        // round-up as its carry in.
        let c = HDR_LEN - off::IP + ICRC_LEN;
        writeln!(v, "  pad = 2'd0 - plen[1:0];\n  c4 = |plen[1:0];").unwrap();
        writeln!(v, "  ip_len = {{plen[12:2] + 14'd{} + {{13'd0, c4}}, 2'd{}}};", c >> 2, c & 3).unwrap();
        writeln!(v, "  udp_len = {{plen[12:2] + 14'd{} + {{13'd0, c4}}, 2'd{}}};", (c - 20) >> 2, (c - 20) & 3)
            .unwrap();
        // IPv4 checksum over: 4500, len, 0000, 4000, 4011, src, dst. The
        // header's constant 16-bit words: version/IHL with TOS (ECT(0)), flags (DF), TTL with protocol.
        let (w0, w3, w4) = (
            (IPV4_VER_IHL as u32) << 8 | IP_ECN_ECT0 as u32,
            field::IP_DF as u32,
            (IP_TTL_DEFAULT as u32) << 8 | IP_PROTO_UDP as u32,
        );
        // Ones'-complement sum (addition mod 0xFFFF, never 0 here): the
        // constants and the length's constant part folded into one word, the
        // seven words reduced by carry-save adders whose carry out of bit 15
        // goes round to bit 0 (2^16 = 1 mod 0xFFFF), then one end-around add:
        // x + y, or x + y + 1 when x + y carries (both computed, the carry picks).
        let mut k = w0 + w3 + w4 + c as u32;
        while k > 0xFFFF {
            k = (k & 0xFFFF) + (k >> 16);
        }
        writeln!(v, "  t0 = 16'h{k:04x}; t1 = {{3'd0, plen[12:2], 2'd0}}; t2 = {{13'd0, c4, 2'd0}};").unwrap();
        writeln!(v, "  t3 = src_ip[31:16]; t4 = src_ip[15:0]; t5 = dst_ip[31:16]; t6 = dst_ip[15:0];").unwrap();
        for (s, kk, a, b, cc) in [
            ("s1", "k1", "t3", "t4", "t5"),
            ("s2", "k2", "t6", "t1", "t0"),
            ("s3", "k3", "s1", "k1", "s2"),
            ("s4", "k4", "k2", "t2", "s3"),
            ("s5", "k5", "k3", "s4", "k4"),
        ] {
            writeln!(v, "  {s} = {a} ^ {b} ^ {cc}; {kk} = ({a} & {b}) | ({a} & {cc}) | ({b} & {cc}); {kk} = {{{kk}[14:0], {kk}[15]}};").unwrap();
        }
        writeln!(v, "  f0 = {{1'b0, s5}} + {{1'b0, k5}};\n  f1 = {{1'b0, s5, 1'b1}} + {{1'b0, k5, 1'b1}};").unwrap();
        writeln!(v, "  csum = ~(f0[16] ? f1[16:1] : f0[15:0]);").unwrap();
        put(&mut v, "dst_mac", off::ETH_DST, 6);
        put(&mut v, "src_mac", off::ETH_SRC, 6);
        put_const(&mut v, ETHERTYPE_IPV4 as u64, off::ETH_TYPE, 2);
        put_const(&mut v, IPV4_VER_IHL as u64, off::IP, 1);
        put_const(&mut v, IP_ECN_ECT0 as u64, off::IP_TOS, 1);
        put(&mut v, "ip_len", off::IP_LEN, 2);
        put_const(&mut v, field::IP_DF as u64, off::IP_FLAGS, 2);
        put_const(&mut v, IP_TTL_DEFAULT as u64, off::IP_TTL, 1);
        put_const(&mut v, IP_PROTO_UDP as u64, off::IP_PROTO, 1);
        put(&mut v, "csum", off::IP_CSUM, 2);
        put(&mut v, "src_ip", off::IP_SRC, 4);
        put(&mut v, "dst_ip", off::IP_DST, 4);
        put(&mut v, "sport", off::UDP_SPORT, 2);
        put_const(&mut v, ROCE_UDP_PORT as u64, off::UDP_DPORT, 2);
        put(&mut v, "udp_len", off::UDP_LEN, 2);
        put(&mut v, "opcode", off::BTH, 1);
        writeln!(v, "  h[{}:{}] = pad;", 8 * off::BTH_FLAGS + 5, 8 * off::BTH_FLAGS + 4).unwrap();
        put_const(&mut v, BTH_PKEY_DEFAULT as u64, off::BTH_PKEY, 2);
        put(&mut v, "dqpn", off::BTH_DQPN, 3);
        writeln!(v, "  h[{}] = ack_req;", 8 * off::BTH_ACKREQ + 7).unwrap();
        put(&mut v, "psn", off::BTH_PSN, 3);
        writeln!(v, "  w24a = {{8'd0, ssn}};\n  w24b = {{8'd0, psn_offset}};\n  w24c = {{8'd0, epsn}};\n  w24d = {{8'd0, msn_psn}};\n  w24e = {{8'd0, sack_base}};\n  w_rsn = {{16'd0, rsn}};\n  w_ooo = {{16'd0, ooo}};").unwrap();
        writeln!(v, "  if (is_ack) begin").unwrap();
        put(&mut v, "syndrome", off::AETH_SYNDROME, 1);
        put(&mut v, "msn", off::AETH_MSN, 3);
        put(&mut v, "w24a", off::AXT_SSN, 4);
        put(&mut v, "w24b", off::AXT_PSN_OFFSET, 4);
        put(&mut v, "ts", off::AXT_TS, 8);
        put(&mut v, "sport", off::AXT_ENTROPY, 2);
        put(&mut v, "ecn_echo", off::AXT_ECN, 1);
        put(&mut v, "ack_flags", off::AXT_FLAGS, 1);
        put(&mut v, "w24c", off::AXT_EPSN, 4);
        put(&mut v, "w24d", off::AXT_MSN_PSN, 4);
        put(&mut v, "w24e", off::AXT_SACK_BASE, 4);
        put(&mut v, "w_ooo", off::AXT_OOO, 4);
        put(&mut v, "sack_bitmap", off::AXT_SACK_BITMAP, 8);
        put(&mut v, "bytes_rx", off::AXT_BYTES_RX, 4);
        writeln!(v, "  end else begin").unwrap();
        put(&mut v, "va", off::RETH_VA, 8);
        put(&mut v, "rkey", off::RETH_RKEY, 4);
        put(&mut v, "msg_len", off::RETH_LEN, 4);
        put(&mut v, "w24a", off::RXT_SSN, 4);
        put(&mut v, "w24b", off::RXT_PSN_OFFSET, 4);
        put(&mut v, "ts", off::RXT_TS, 8);
        put(&mut v, "w_rsn", off::RXT_RSN, 4);
        put(&mut v, "imm", off::RXT_IMM, 4);
        put(&mut v, "laddr", off::RXT_LADDR, 8);
        put(&mut v, "lkey", off::RXT_LKEY, 4);
        writeln!(v, "  end\n  beat0 = h[511:0];\n  beat1 = h[1023:512];\nend").unwrap();
        Verilog::Custom(v)
    }
}

/// Parses header beats 0 and 1 of a received frame.
#[derive(LogicBlock, Default)]
pub struct RxHeader {
    /// Header beat 0.
    pub beat0: Signal<In, Bits<512>>,
    /// Header beat 1.
    pub beat1: Signal<In, Bits<512>>,
    /// Ethernet/IPv4 (no options)/UDP 4791 as rnic sends them.
    pub is_roce: Signal<Out, Bit>,
    /// IPv4 total length.
    pub ip_len: Signal<Out, Bits<16>>,
    /// IPv4 header checksum correct and the datagram not a fragment (MF clear, offset 0).
    pub ip_ok: Signal<Out, Bit>,
    /// UDP length.
    pub udp_len: Signal<Out, Bits<16>>,
    /// Destination MAC.
    pub dst_mac: Signal<Out, Bits<48>>,
    /// Destination IPv4.
    pub dst_ip: Signal<Out, Bits<32>>,
    /// Source MAC.
    pub src_mac: Signal<Out, Bits<48>>,
    /// Source IPv4.
    pub src_ip: Signal<Out, Bits<32>>,
    /// IP ECN bits.
    pub ecn: Signal<Out, Bits<8>>,
    /// UDP source port.
    pub sport: Signal<Out, Bits<16>>,
    /// BTH opcode.
    pub opcode: Signal<Out, Bits<8>>,
    /// BTH PadCnt.
    pub pad: Signal<Out, Bits<2>>,
    /// BTH destination QPN.
    pub dqpn: Signal<Out, Bits<24>>,
    /// BTH AckReq.
    pub ack_req: Signal<Out, Bit>,
    /// BTH PSN.
    pub psn: Signal<Out, Bits<24>>,
    /// RETH VA.
    pub va: Signal<Out, Bits<64>>,
    /// RETH rkey.
    pub rkey: Signal<Out, Bits<32>>,
    /// RETH DMA length.
    pub msg_len: Signal<Out, Bits<32>>,
    /// Request SSN.
    pub ssn: Signal<Out, Bits<24>>,
    /// Request PSN_OFFSET.
    pub psn_offset: Signal<Out, Bits<24>>,
    /// Request timestamp.
    pub ts: Signal<Out, Bits<64>>,
    /// AETH syndrome.
    pub syndrome: Signal<Out, Bits<8>>,
    /// AETH MSN.
    pub msn: Signal<Out, Bits<24>>,
    /// Request immediate data.
    pub imm: Signal<Out, Bits<32>>,
    /// READ request: the requester's local address.
    pub laddr: Signal<Out, Bits<64>>,
    /// READ request: the requester's lkey.
    pub lkey: Signal<Out, Bits<32>>,
    /// Request RSN: the receive WQE a SEND or WRITE with immediate consumes (low 16 bits).
    pub rsn: Signal<Out, Bits<16>>,
}

impl Logic for RxHeader {
    fn update(&mut self) {
        // Software model for rust-hdl's simulator, placed by the spec's offsets.
        let mut h = [0u8; HDR_LEN];
        for i in 0..64 {
            h[i] = self.beat0.val().get_bits::<8>(8 * i).to_u64() as u8;
            h[64 + i] = self.beat1.val().get_bits::<8>(8 * i).to_u64() as u8;
        }
        let be = |o: usize, n: usize| h[o..o + n].iter().fold(0u64, |a, &b| a << 8 | b as u64);
        self.is_roce.next = be(off::ETH_TYPE, 2) == ETHERTYPE_IPV4 as u64
            && h[off::IP] == IPV4_VER_IHL
            && h[off::IP_PROTO] == IP_PROTO_UDP
            && be(off::UDP_DPORT, 2) == ROCE_UDP_PORT as u64;
        self.ip_len.next = be(off::IP_LEN, 2).into();
        let mut sum: u32 = (0..20).step_by(2).map(|i| be(off::IP + i, 2) as u32).sum();
        while sum > 0xFFFF {
            sum = (sum & 0xFFFF) + (sum >> 16);
        }
        self.ip_ok.next = sum == 0xFFFF && be(off::IP_FLAGS, 2) & IP_MF_OFFSET_MASK as u64 == 0;
        self.udp_len.next = be(off::UDP_LEN, 2).into();
        self.dst_mac.next = be(off::ETH_DST, 6).into();
        self.dst_ip.next = be(off::IP_DST, 4).into();
        self.src_mac.next = be(off::ETH_SRC, 6).into();
        self.src_ip.next = be(off::IP_SRC, 4).into();
        self.ecn.next = ((h[off::IP_TOS] & 3) as u64).into();
        self.sport.next = be(off::UDP_SPORT, 2).into();
        self.opcode.next = be(off::BTH, 1).into();
        self.pad.next = (((h[off::BTH_FLAGS] >> 4) & 3) as u64).into();
        self.dqpn.next = be(off::BTH_DQPN, 3).into();
        self.ack_req.next = h[off::BTH_ACKREQ] & field::BTH_ACKREQ_BIT != 0;
        self.psn.next = be(off::BTH_PSN, 3).into();
        self.va.next = be(off::RETH_VA, 8).into();
        self.rkey.next = be(off::RETH_RKEY, 4).into();
        self.msg_len.next = be(off::RETH_LEN, 4).into();
        self.ssn.next = (be(off::RXT_SSN, 4) & 0xFF_FFFF).into();
        self.psn_offset.next = (be(off::RXT_PSN_OFFSET, 4) & 0xFF_FFFF).into();
        self.ts.next = be(off::RXT_TS, 8).into();
        self.syndrome.next = be(off::AETH_SYNDROME, 1).into();
        self.msn.next = be(off::AETH_MSN, 3).into();
        self.imm.next = be(off::RXT_IMM, 4).into();
        self.laddr.next = be(off::RXT_LADDR, 8).into();
        self.lkey.next = be(off::RXT_LKEY, 4).into();
        self.rsn.next = (be(off::RXT_RSN, 4) & 0xFFFF).into();
    }
    fn connect(&mut self) {
        self.is_roce.connect();
        self.ip_len.connect();
        self.ip_ok.connect();
        self.udp_len.connect();
        self.dst_mac.connect();
        self.dst_ip.connect();
        self.src_mac.connect();
        self.src_ip.connect();
        self.ecn.connect();
        self.sport.connect();
        self.opcode.connect();
        self.pad.connect();
        self.dqpn.connect();
        self.ack_req.connect();
        self.psn.connect();
        self.va.connect();
        self.rkey.connect();
        self.msg_len.connect();
        self.ssn.connect();
        self.psn_offset.connect();
        self.ts.connect();
        self.syndrome.connect();
        self.msn.connect();
        self.imm.connect();
        self.laddr.connect();
        self.lkey.connect();
        self.rsn.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut v = String::new();
        writeln!(v, "reg [1023:0] h;\nreg [15:0] etype, dport, ipflags;\nreg [31:0] w_ssn, w_off, w_rsn;").unwrap();
        // Carry-save stages of the checksum: ten words down to two.
        for n in 0..8 {
            writeln!(v, "reg [15:0] cs{n}, cc{n};").unwrap();
        }
        writeln!(v, "always @(*) begin\n  h = {{beat1, beat0}};").unwrap();
        get(&mut v, "etype", off::ETH_TYPE, 2);
        get(&mut v, "dport", off::UDP_DPORT, 2);
        writeln!(
            v,
            "  is_roce = (etype == 16'h{:x}) && (h[{}:{}] == 8'h45) && (h[{}:{}] == 8'd17) && (dport == 16'd{});",
            ETHERTYPE_IPV4,
            8 * off::IP + 7,
            8 * off::IP,
            8 * off::IP_PROTO + 7,
            8 * off::IP_PROTO,
            ROCE_UDP_PORT
        )
        .unwrap();
        get(&mut v, "ip_len", off::IP_LEN, 2);
        // Ones'-complement sum of the ten header words; a correct header sums to 0xFFFF.
        let words: Vec<String> = (0..20)
            .step_by(2)
            .map(|i| {
                let o = off::IP + i;
                format!("{{h[{}:{}], h[{}:{}]}}", 8 * o + 7, 8 * o, 8 * o + 15, 8 * o + 8)
            })
            .collect();
        // Ones'-complement sum of the ten header words by carry-save adders
        // whose carry out of bit 15 goes round to bit 0 (2^16 = 1 mod 0xFFFF),
        // down to two words x, y. A correct header sums to 0xFFFF: x + y is
        // 0xFFFF (y = ~x) or 0x1FFFE (x = y = 0xFFFF); no carry chain.
        let mut terms: Vec<String> = words.clone();
        let mut n = 0;
        while terms.len() > 2 {
            let (a, b, c) = (terms.remove(0), terms.remove(0), terms.remove(0));
            writeln!(v, "  cs{n} = {a} ^ {b} ^ {c};\n  cc{n} = ({a} & {b}) | ({a} & {c}) | ({b} & {c});").unwrap();
            terms.push(format!("cs{n}"));
            terms.push(format!("{{cc{n}[14:0], cc{n}[15]}}"));
            n += 1;
        }
        get(&mut v, "ipflags", off::IP_FLAGS, 2);
        writeln!(
            v,
            "  ip_ok = (({x} == ~{y}) || (({x} & {y}) == 16'hffff)) && ((ipflags & 16'h{:04x}) == 16'd0);",
            IP_MF_OFFSET_MASK,
            x = terms[0],
            y = terms[1]
        )
        .unwrap();
        get(&mut v, "udp_len", off::UDP_LEN, 2);
        get(&mut v, "dst_mac", off::ETH_DST, 6);
        get(&mut v, "dst_ip", off::IP_DST, 4);
        get(&mut v, "src_mac", off::ETH_SRC, 6);
        get(&mut v, "src_ip", off::IP_SRC, 4);
        writeln!(v, "  ecn = {{6'd0, h[{}:{}]}};", 8 * off::IP_TOS + 1, 8 * off::IP_TOS).unwrap();
        get(&mut v, "sport", off::UDP_SPORT, 2);
        get(&mut v, "opcode", off::BTH, 1);
        writeln!(v, "  pad = h[{}:{}];", 8 * off::BTH_FLAGS + 5, 8 * off::BTH_FLAGS + 4).unwrap();
        get(&mut v, "dqpn", off::BTH_DQPN, 3);
        writeln!(v, "  ack_req = h[{}];", 8 * off::BTH_ACKREQ + 7).unwrap();
        get(&mut v, "psn", off::BTH_PSN, 3);
        get(&mut v, "va", off::RETH_VA, 8);
        get(&mut v, "rkey", off::RETH_RKEY, 4);
        get(&mut v, "msg_len", off::RETH_LEN, 4);
        get(&mut v, "w_ssn", off::RXT_SSN, 4);
        get(&mut v, "w_off", off::RXT_PSN_OFFSET, 4);
        writeln!(v, "  ssn = w_ssn[23:0];\n  psn_offset = w_off[23:0];").unwrap();
        get(&mut v, "ts", off::RXT_TS, 8);
        get(&mut v, "syndrome", off::AETH_SYNDROME, 1);
        get(&mut v, "msn", off::AETH_MSN, 3);
        get(&mut v, "imm", off::RXT_IMM, 4);
        get(&mut v, "laddr", off::RXT_LADDR, 8);
        get(&mut v, "lkey", off::RXT_LKEY, 4);
        get(&mut v, "w_rsn", off::RXT_RSN, 4);
        writeln!(v, "  rsn = w_rsn[15:0];").unwrap();
        writeln!(v, "end").unwrap();
        Verilog::Custom(v)
    }
}

/// Verilog reducing 16-bit words to `keep` words of the same ones'-complement
/// sum: carry-save adders whose carry out of bit 15 goes round to bit 0
/// (2^16 = 1 mod 0xFFFF). Declares `{p}s{n}`/`{p}c{n}`; returns (declarations, body, words left).
fn csa_ones(p: &str, words: Vec<String>, keep: usize) -> (String, String, Vec<String>) {
    let (mut d, mut v, mut terms, mut n) = (String::new(), String::new(), words, 0);
    while terms.len() > keep {
        let (a, b, c) = (terms.remove(0), terms.remove(0), terms.remove(0));
        writeln!(d, "reg [15:0] {p}s{n}, {p}c{n};").unwrap();
        writeln!(v, "  {p}s{n} = {a} ^ {b} ^ {c};\n  {p}c{n} = ({a} & {b}) | ({a} & {c}) | ({b} & {c});").unwrap();
        terms.push(format!("{p}s{n}"));
        terms.push(format!("{{{p}c{n}[14:0], {p}c{n}[15]}}"));
        n += 1;
    }
    (d, v, terms)
}

/// The ten IPv4 header words of a frame's beat 0 as Verilog expressions of `src`.
fn ip_words(src: &str) -> Vec<String> {
    (0..20)
        .step_by(2)
        .map(|i| {
            let o = off::IP + i;
            format!("{{{src}[{}:{}], {src}[{}:{}]}}", 8 * o + 7, 8 * o, 8 * o + 15, 8 * o + 8)
        })
        .collect()
}

/// First half of the IPv4 header check, on beat 0 as it arrives: the ten
/// header words reduced to four of the same ones'-complement sum (three
/// carry-save levels), for a register.
#[derive(LogicBlock, Default)]
pub struct IpSumA {
    /// Header beat 0.
    pub beat0: Signal<In, Bits<512>>,
    /// Four 16-bit words (word i in bits 16i+15..16i).
    pub part: Signal<Out, Bits<64>>,
}

impl Logic for IpSumA {
    fn update(&mut self) {
        // The model: the folded sum in word 0, the rest zero (same ones'-complement sum).
        let mut sum: u32 = 0;
        for i in (0..20).step_by(2) {
            let o = off::IP + i;
            let w = (self.beat0.val().get_bits::<8>(8 * o).to_u64() << 8)
                | self.beat0.val().get_bits::<8>(8 * o + 8).to_u64();
            sum += w as u32;
        }
        while sum > 0xFFFF {
            sum = (sum & 0xFFFF) + (sum >> 16);
        }
        self.part.next = (sum as u64).into();
    }
    fn connect(&mut self) {
        self.part.connect();
    }
    fn hdl(&self) -> Verilog {
        let (d, b, t) = csa_ones("a", ip_words("beat0"), 4);
        Verilog::Custom(format!("{d}always @(*) begin\n{b}  part = {{{}, {}, {}, {}}};\nend\n", t[3], t[2], t[1], t[0]))
    }
}

/// Second half, a cycle later: the four words' sum is 0xFFFF (two more
/// carry-save levels, then x + y is 0xFFFF or 0x1FFFE: y = ~x, or x = y = 0xFFFF)
/// and the datagram is no fragment (flags and offset of the registered beat 0).
#[derive(LogicBlock, Default)]
pub struct IpSumB {
    /// [`IpSumA`]'s words, registered.
    pub part: Signal<In, Bits<64>>,
    /// Header beat 0 (registered).
    pub beat0: Signal<In, Bits<512>>,
    /// As [`RxHeader`]'s `ip_ok`.
    pub ip_ok: Signal<Out, Bit>,
}

impl Logic for IpSumB {
    fn update(&mut self) {
        // A model that is wrong only when all ten words are zero (the model of `IpSumA` keeps one folded word).
        let mut sum: u32 = 0;
        for i in 0..4 {
            sum += self.part.val().get_bits::<16>(16 * i).to_u64() as u32;
        }
        while sum > 0xFFFF {
            sum = (sum & 0xFFFF) + (sum >> 16);
        }
        let o = off::IP_FLAGS;
        let flags =
            (self.beat0.val().get_bits::<8>(8 * o).to_u64() << 8) | self.beat0.val().get_bits::<8>(8 * o + 8).to_u64();
        self.ip_ok.next = sum == 0xFFFF && flags & IP_MF_OFFSET_MASK as u64 == 0;
    }
    fn connect(&mut self) {
        self.ip_ok.connect();
    }
    fn hdl(&self) -> Verilog {
        let words = (0..4).map(|i| format!("part[{}:{}]", 16 * i + 15, 16 * i)).collect();
        let (d, b, t) = csa_ones("b", words, 2);
        let o = off::IP_FLAGS;
        Verilog::Custom(format!(
            "{d}reg [15:0] ipflags;\nalways @(*) begin\n{b}  ipflags = {{beat0[{}:{}], beat0[{}:{}]}};\n  ip_ok = (({x} == ~{y}) || (({x} & {y}) == 16'hffff)) && ((ipflags & 16'h{:04x}) == 16'd0);\nend\n",
            8 * o + 7,
            8 * o,
            8 * o + 15,
            8 * o + 8,
            IP_MF_OFFSET_MASK,
            x = t[0],
            y = t[1]
        ))
    }
}
