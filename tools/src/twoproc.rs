//! perftest's two-process mode: a server process and a client process,
//! each with one NIC, that exchange what connects them over TCP.
//!
//! The client is the requester, the server the responder, as with
//! `ib_write_bw`. The client connects to the server's port and sends a
//! line with the run's parameters, its NIC's MAC and IP, and its QP numbers
//! and initial PSNs; the server checks the parameters against its own
//! (both sides are started with the same flags), sets up its side and
//! answers with its address, QPs, PSNs and its buffer's address, key and
//! length. Both bring their QPs to RTS against the other's, and the client
//! runs. At the end the client sends `done` with its result row, the server
//! verifies what landed in its memory and answers `verified N` (or `error`
//! with the reason), so every byte is checked in the process that holds it:
//!
//! - WRITE: every message gets its own slot in the server's memory (filled
//!   with a sentinel first), checked there at the end against its pattern;
//! - SEND: the server checks each receive as it completes, then reposts it;
//! - READ: the server's source holds one pattern per slot; the client
//!   clears each destination slot before its READ and checks it when the
//!   READ completes.
//!
//! Either side that fails sends `error REASON` to the other, which stops
//! with that reason.

use std::collections::BTreeMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use rnic::{
    AccessFlags, Context, Cq, HostBuf, Mr, Pd, Qp, QpAttr, QpInitAttr, RecvWr, SendFlags, SendWr, WcOpcode, WcStatus,
    WorkCompletion, WrOpcode,
};

use crate::bench::{initial_psn, BenchConfig, BenchError, Mode, Report};
use crate::pattern;

/// The TCP port of the exchange when none is given (perftest's).
pub const DEFAULT_PORT: u16 = 18515;
/// First word of every hello line.
const PROTOCOL: &str = "rnic-perf/1";
/// How long a side waits for the other's hello or verdict.
const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(600);
/// How long the client retries a refused connection (the server may still be starting).
const CONNECT_RETRY: Duration = Duration::from_secs(5);
/// Pattern stream of the sentinel in buffers the NIC is to overwrite.
const SENTINEL: u64 = u64::MAX;

fn peer(what: impl std::fmt::Display) -> BenchError {
    BenchError::Peer(what.to_string())
}

/// The TCP connection, read a line at a time without blocking the run.
struct Link {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Link {
    fn new(stream: TcpStream) -> Result<Link, BenchError> {
        stream.set_nonblocking(true).map_err(peer)?;
        stream.set_nodelay(true).map_err(peer)?;
        Ok(Link { stream, buf: Vec::new() })
    }

    fn send(&mut self, line: &str) -> Result<(), BenchError> {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        let mut at = 0;
        while at < bytes.len() {
            match self.stream.write(&bytes[at..]) {
                Ok(0) => return Err(peer("the other process closed the connection")),
                Ok(n) => at += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(1)),
                Err(e) => return Err(peer(format!("sending to the other process: {e}"))),
            }
        }
        Ok(())
    }

    /// A complete line if one has arrived; an error once the other side is gone.
    fn try_recv(&mut self) -> Result<Option<String>, BenchError> {
        loop {
            if let Some(i) = self.buf.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=i).collect();
                return Ok(Some(String::from_utf8_lossy(&line[..i]).into_owned()));
            }
            let mut chunk = [0u8; 4096];
            match self.stream.read(&mut chunk) {
                Ok(0) => return Err(peer("the other process closed the connection")),
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(None),
                Err(e) => return Err(peer(format!("reading from the other process: {e}"))),
            }
        }
    }

    /// The next line, waiting at most `timeout`; an `error` line becomes the error.
    fn recv(&mut self, timeout: Duration) -> Result<String, BenchError> {
        let t = Instant::now();
        loop {
            if let Some(l) = self.try_recv()? {
                return match l.strip_prefix("error ") {
                    Some(why) => Err(peer(format!("the other process failed: {why}"))),
                    None => Ok(l),
                };
            }
            if t.elapsed() > timeout {
                return Err(peer(format!("no answer from the other process in {} s", timeout.as_secs())));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Tells the other side why this one stops (best effort), and returns the error.
    fn fail(&mut self, e: BenchError) -> BenchError {
        let _ = self.send(&format!("error {}", e.to_string().replace('\n', " ")));
        e
    }
}

/// The parameters both sides must agree on.
fn params(c: &BenchConfig) -> BTreeMap<&'static str, String> {
    let mode = match c.mode {
        Mode::WriteBw => "write_bw",
        Mode::SendBw => "send_bw",
        Mode::ReadBw => "read_bw",
    };
    BTreeMap::from([
        ("test", mode.to_string()),
        ("size", c.size.to_string()),
        ("iters", c.iters.to_string()),
        ("qps", c.qps.to_string()),
        ("tx_depth", c.tx_depth.to_string()),
        ("mtu", c.mtu.bytes().to_string()),
        ("seed", format!("{:#x}", c.seed)),
    ])
}

/// A hello line: the parameters and this side's connection facts.
fn hello(c: &BenchConfig, s: &Side, ctx: &Context) -> String {
    let a = ctx.addr();
    let mac = a.mac.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":");
    let list = |v: Vec<u32>| v.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    let mut line = PROTOCOL.to_string();
    for (k, v) in params(c) {
        line += &format!(" {k}={v}");
    }
    line += &format!(
        " mac={mac} ip={} qpn={} psn={} addr={:#x} rkey={:#x} len={}",
        a.ip,
        list(s.qps.iter().map(Qp::qp_num).collect()),
        list(s.psns.clone()),
        s.mr.addr(),
        s.mr.rkey(),
        s.mr.len()
    );
    line
}

/// The other side's hello, parsed.
struct PeerHello {
    addr: rnic::NetAddr,
    qpns: Vec<u32>,
    psns: Vec<u32>,
    mr_addr: u64,
    rkey: u32,
    mr_len: u64,
}

/// Parses the other side's hello; `server` says whether this side is the server.
fn parse_hello(line: &str, c: &BenchConfig, server: bool) -> Result<PeerHello, BenchError> {
    let mut words = line.split_whitespace();
    if words.next() != Some(PROTOCOL) {
        return Err(peer(format!("the other side does not speak {PROTOCOL}: {line:?}")));
    }
    let kv: BTreeMap<&str, &str> = words.filter_map(|w| w.split_once('=')).collect();
    let get = |k: &str| kv.get(k).copied().ok_or_else(|| peer(format!("its hello has no {k}: {line:?}")));
    let differ: Vec<String> = params(c)
        .into_iter()
        .filter(|(k, v)| kv.get(k) != Some(&v.as_str()))
        .map(|(k, v)| {
            let there = kv.get(k).unwrap_or(&"none");
            let (at_server, at_client) = if server { (v.as_str(), *there) } else { (*there, v.as_str()) };
            format!("{k}: {at_server} at the server, {at_client} at the client")
        })
        .collect();
    if !differ.is_empty() {
        return Err(BenchError::Config(format!(
            "the two processes were started with different parameters ({}); give both the same flags",
            differ.join(", ")
        )));
    }
    let num = |k: &str| -> Result<u64, BenchError> {
        let v = get(k)?;
        let r = match v.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16),
            None => v.parse(),
        };
        r.map_err(|_| peer(format!("its {k} is not a number: {v:?}")))
    };
    let list = |k: &str| -> Result<Vec<u32>, BenchError> {
        get(k)?.split(',').map(|x| x.parse().map_err(|_| peer(format!("its {k} list is malformed: {x:?}")))).collect()
    };
    let mac_words: Vec<u8> = get("mac")?.split(':').filter_map(|x| u8::from_str_radix(x, 16).ok()).collect();
    let mac: [u8; 6] = mac_words.try_into().map_err(|_| peer("its MAC is malformed"))?;
    let ip: Ipv4Addr = get("ip")?.parse().map_err(|_| peer("its IP is malformed"))?;
    let (qpns, psns) = (list("qpn")?, list("psn")?);
    if qpns.len() != c.qps as usize || psns.len() != c.qps as usize {
        return Err(peer(format!("it sent {} QPs and {} PSNs for a run of {}", qpns.len(), psns.len(), c.qps)));
    }
    let rkey = u32::try_from(num("rkey")?).map_err(|_| peer("its rkey is past 32 bits"))?;
    Ok(PeerHello { addr: rnic::NetAddr { mac, ip }, qpns, psns, mr_addr: num("addr")?, rkey, mr_len: num("len")? })
}

/// Slots and depths of a run (as the single-process engine lays them out).
struct Shape {
    q: u64,
    size: u64,
    /// Source slots per QP (the client's for WRITE and SEND; the server's for READ).
    src_slots: u64,
    /// Receives kept posted per QP (SEND).
    rx_depth: u64,
}

impl Shape {
    fn of(c: &BenchConfig) -> Shape {
        let q = c.qps.max(1) as u64;
        let per_qp = c.iters.div_ceil(q);
        let depth = c.tx_depth as u64;
        Shape {
            q,
            size: c.size as u64,
            src_slots: depth.min(per_qp).max(1),
            rx_depth: (2 * depth).min(1 << rnic::ring::MAX_WQ_LOG2).min(per_qp).max(1),
        }
    }

    /// Messages QP index `qi` carries.
    fn count(&self, c: &BenchConfig, qi: u64) -> u64 {
        c.iters / self.q + u64::from(qi < c.iters % self.q)
    }

    fn slot(&self, qi: u64, k: u64) -> u64 {
        (qi * self.src_slots + k % self.src_slots) * self.size
    }
}

/// One process's side: its QPs, CQ and the buffer the other side reaches.
struct Side {
    _pd: Pd,
    cq: Cq,
    qps: Vec<Qp>,
    psns: Vec<u32>,
    /// The buffer named in the hello: the server's destination (WRITE),
    /// receive slots (SEND) or source (READ); the client's source, or its
    /// destination for READ.
    mr: Mr,
}

impl Side {
    fn new(ctx: &Context, c: &BenchConfig, server: bool) -> Result<Side, BenchError> {
        let sh = Shape::of(c);
        let pd = ctx.alloc_pd()?;
        let (sq, rq) =
            if server { (0, if c.mode == Mode::SendBw { sh.rx_depth as u32 } else { 0 }) } else { (c.tx_depth, 0) };
        let cq = ctx.create_cq((c.qps * (sq + rq)).max(1))?;
        let max_inline = if server { 0 } else { c.max_inline() };
        let qps = (0..c.qps)
            .map(|_| pd.create_qp(QpInitAttr { max_inline_data: max_inline, ..QpInitAttr::new(&cq, &cq, sq, rq) }))
            .collect::<Result<Vec<_>, _>>()?;
        let psns = (0..c.qps).map(|i| initial_psn(c.seed, u32::from(server), i)).collect();
        let slots = sh.q * sh.src_slots * sh.size;
        let (len, access) = match (c.mode, server) {
            (Mode::WriteBw, true) => {
                let len = sh.size.saturating_mul(c.iters);
                if len > c.own_slot_budget {
                    return Err(BenchError::Config(format!(
                        "a two-process WRITE run gives every message its own slot in the server's memory, checked there at the end: {} x {} bytes is over the {} bytes allowed; give fewer iterations (-n) or a smaller size",
                        c.iters, c.size, c.own_slot_budget
                    )));
                }
                (len, AccessFlags::REMOTE_WRITE | AccessFlags::LOCAL_WRITE)
            }
            (Mode::SendBw, true) => (sh.q * sh.rx_depth * sh.size, AccessFlags::LOCAL_WRITE),
            (Mode::ReadBw, true) => (slots, AccessFlags::REMOTE_READ),
            (Mode::ReadBw, false) => (slots, AccessFlags::LOCAL_WRITE),
            (_, false) => (slots, AccessFlags::empty()),
        };
        let len = len.max(1) as usize;
        let mr = match c.app_mem {
            true => pd.reg_mr_on(HostBuf::new(len).map_err(rnic::Error::from)?, access)?,
            false => pd.reg_mr(len, access)?,
        };
        Ok(Side { _pd: pd, cq, qps, psns, mr })
    }

    /// Brings every QP to RTS against the peer's.
    fn connect(&self, c: &BenchConfig, p: &PeerHello) -> Result<(), BenchError> {
        for (i, qp) in self.qps.iter().enumerate() {
            qp.modify(&QpAttr::init())?;
            qp.modify(&QpAttr::rtr(p.addr, p.qpns[i], p.psns[i], c.mtu))?;
            qp.modify(&QpAttr::rts(self.psns[i]))?;
        }
        Ok(())
    }
}

/// Compares `got` with message pattern `stream`.
fn check(c: &BenchConfig, qi: u64, iter: u64, stream: u64, got: &[u8]) -> Result<(), BenchError> {
    match pattern::first_mismatch(c.seed, stream, got) {
        None => Ok(()),
        Some(o) => Err(BenchError::Mismatch {
            qp_index: qi as u32,
            iter,
            offset: o,
            size: c.size,
            got: got[o],
            want: pattern::make(c.seed, stream, o + 1)[o],
            seed: c.seed,
        }),
    }
}

/// What the server saw: the bytes it verified, and the client's result row.
pub struct Served {
    /// Bytes the server compared in its own memory.
    pub verified_bytes: u64,
    /// The client's result row (perftest's table line).
    pub client_row: String,
}

/// Runs the server side: takes one client from `listener`, serves its run
/// and verifies what landed here. `on_client` is told the client's address.
pub fn serve(
    ctx: &Context,
    c: &BenchConfig,
    listener: &TcpListener,
    on_client: &mut dyn FnMut(&str),
) -> Result<Served, BenchError> {
    let (stream, from) = listener.accept().map_err(|e| peer(format!("accepting the client: {e}")))?;
    on_client(&from.to_string());
    let mut link = Link::new(stream)?;
    let line = link.recv(EXCHANGE_TIMEOUT)?;
    let result = (|| {
        let p = parse_hello(&line, c, true)?;
        let s = Side::new(ctx, c, true)?;
        if c.mode == Mode::WriteBw {
            s.mr.write(0, &pattern::make(c.seed, SENTINEL, s.mr.len()))?;
        }
        if c.mode == Mode::ReadBw {
            let sh = Shape::of(c);
            for qi in 0..sh.q {
                for k in 0..sh.src_slots {
                    s.mr.write(
                        sh.slot(qi, k),
                        &pattern::make(c.seed, pattern::stream(qi as u32, k), sh.size as usize),
                    )?;
                }
            }
        }
        s.connect(c, &p)?;
        // Posted before the hello goes back: the client sends nothing before it has that.
        if c.mode == Mode::SendBw {
            let sh = Shape::of(c);
            for (qi, qp) in s.qps.iter().enumerate() {
                post_recvs(c, &s, qp, qi as u64, 0, sh.rx_depth.min(sh.count(c, qi as u64)))?;
            }
        }
        Ok::<_, BenchError>(s)
    })();
    let s = match result {
        Ok(s) => s,
        Err(e) => return Err(link.fail(e)),
    };
    link.send(&hello(c, &s, ctx))?;
    match serve_run(ctx, c, &s, &mut link) {
        Ok(served) => Ok(served),
        Err(e @ BenchError::Peer(_)) => Err(e),
        Err(e) => Err(link.fail(e)),
    }
}

/// Posts receives `from..to` of QP index `qi` (slot `k % rx_depth`; wr_id `qi << 32 | k`).
fn post_recvs(c: &BenchConfig, s: &Side, qp: &Qp, qi: u64, from: u64, to: u64) -> Result<(), BenchError> {
    let sh = Shape::of(c);
    let sges: Vec<_> = (from..to).map(|k| [s.mr.sge((qi * sh.rx_depth + k % sh.rx_depth) * sh.size, c.size)]).collect();
    let wrs: Vec<RecvWr> =
        sges.iter().zip(from..to).map(|(sg, k)| RecvWr { wr_id: qi << 32 | k, sg_list: sg }).collect();
    Ok(qp.post_recv_batch(&wrs)?)
}

fn serve_run(ctx: &Context, c: &BenchConfig, s: &Side, link: &mut Link) -> Result<Served, BenchError> {
    let sh = Shape::of(c);
    let dev = ctx.device();
    let mut received = vec![0u64; sh.q as usize];
    let mut verified = 0u64;
    let mut wcs = vec![WorkCompletion::default(); 64];
    let mut got = vec![0u8; c.size as usize];
    let row = loop {
        // Polling also runs this host's slow path (software loss recovery) in every test.
        let n = s.cq.poll_cq(&mut wcs)?;
        for wc in &wcs[..n] {
            let (qi, k) = (wc.wr_id >> 32, wc.wr_id & 0xFFFF_FFFF);
            let g = k * sh.q + qi;
            let bad = |what: String| BenchError::Completion {
                side: "responder",
                qpn: wc.qp_num,
                qp_index: qi as u32,
                iter: g,
                what,
            };
            if c.mode != Mode::SendBw {
                return Err(bad(format!("a completion the responder of a one-sided test should not have: {wc:?}")));
            }
            if wc.status != WcStatus::Success || wc.opcode != WcOpcode::Recv || wc.byte_len != c.size {
                return Err(bad(format!("receive completion {wc:?} (expected a RECV of {} bytes)", c.size)));
            }
            if qi >= sh.q || k != received[qi as usize] || wc.qp_num != s.qps[qi as usize].qp_num() {
                return Err(bad(format!("receive completion out of order: {wc:?}")));
            }
            s.mr.read((qi * sh.rx_depth + k % sh.rx_depth) * sh.size, &mut got)?;
            check(c, qi, g, pattern::stream(qi as u32, g), &got)?;
            verified += sh.size;
            received[qi as usize] += 1;
            // Receive k's slot is free again: it takes receive k + rx_depth, if the QP gets that many.
            let next = k + sh.rx_depth;
            if next < sh.count(c, qi) {
                post_recvs(c, s, &s.qps[qi as usize], qi, next, next + 1)?;
            }
        }
        if let Some(l) = link.try_recv()? {
            match (l.strip_prefix("done "), l.strip_prefix("error ")) {
                (Some(row), _) => break row.to_string(),
                (_, Some(why)) => return Err(peer(format!("the client failed: {why}"))),
                _ => return Err(peer(format!("unexpected line from the client: {l:?}"))),
            }
        }
        if n == 0 {
            dev.wait().map_err(rnic::Error::from)?;
        }
    };
    match c.mode {
        Mode::SendBw => {
            let want: u64 = (0..sh.q).map(|qi| sh.count(c, qi)).sum();
            let have: u64 = received.iter().sum();
            if have != want {
                return Err(peer(format!("the client says it is done, but {have} of {want} messages were received")));
            }
        }
        Mode::WriteBw => {
            for g in 0..c.iters {
                s.mr.read(g * sh.size, &mut got)?;
                check(c, g % sh.q, g, pattern::stream((g % sh.q) as u32, g), &got)?;
                verified += sh.size;
            }
        }
        Mode::ReadBw => {}
    }
    link.send(&format!("verified {verified}"))?;
    Ok(Served { verified_bytes: verified, client_row: row })
}

/// Runs the client side against the server at `server` (host:port): the
/// requester's run, with the server's verification of its memory.
pub fn run_client(ctx: &Context, c: &BenchConfig, server: &str) -> Result<Report, BenchError> {
    let t = Instant::now();
    let stream = loop {
        match TcpStream::connect(server) {
            Ok(s) => break s,
            Err(e) if e.kind() == ErrorKind::ConnectionRefused && t.elapsed() < CONNECT_RETRY => {
                std::thread::sleep(Duration::from_millis(50))
            }
            Err(e) => return Err(peer(format!("cannot reach the server at {server}: {e} (is `rnic-perf` running there as the server, with the same port?)"))),
        }
    };
    let mut link = Link::new(stream)?;
    let s = Side::new(ctx, c, false)?;
    link.send(&hello(c, &s, ctx))?;
    let p = parse_hello(&link.recv(EXCHANGE_TIMEOUT)?, c, false).map_err(|e| link.fail(e))?;
    let mut r = match s.connect(c, &p).and_then(|()| client_run(ctx, c, &s, &p, &mut link)) {
        Ok(r) => r,
        Err(e @ BenchError::Peer(_)) => return Err(e),
        Err(e) => return Err(link.fail(e)),
    };
    link.send(&format!("done {}", r.row()))?;
    let verdict = link.recv(EXCHANGE_TIMEOUT)?;
    let n: u64 = verdict
        .strip_prefix("verified ")
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| peer(format!("unexpected verdict from the server: {verdict:?}")))?;
    r.verified_bytes += n;
    Ok(r)
}

fn client_run(ctx: &Context, c: &BenchConfig, s: &Side, p: &PeerHello, link: &mut Link) -> Result<Report, BenchError> {
    let sh = Shape::of(c);
    let dev = ctx.device();
    let need = match c.mode {
        Mode::WriteBw => sh.size * c.iters,
        Mode::SendBw => 0,
        Mode::ReadBw => sh.q * sh.src_slots * sh.size,
    };
    if p.mr_len < need {
        return Err(peer(format!("the server's buffer is {} bytes, the run needs {need}", p.mr_len)));
    }
    let counts: Vec<u64> = (0..sh.q).map(|qi| sh.count(c, qi)).collect();
    let (mut posted, mut completed) = (vec![0u64; sh.q as usize], vec![0u64; sh.q as usize]);
    let mut posted_at: Vec<std::collections::VecDeque<u64>> = vec![Default::default(); sh.q as usize];
    let (mut completions, mut posts) = (Vec::new(), Vec::new());
    let mut scratch = vec![0u8; c.size as usize];
    let sentinel = pattern::make(c.seed, SENTINEL, c.size as usize);
    let mut wcs = vec![WorkCompletion::default(); 256];
    let mut verified = 0u64;
    let start = dev.now_cycles();
    let wall = Instant::now();
    let mut last_progress = start;
    let total: u64 = c.iters;
    while completed.iter().sum::<u64>() < total {
        let mut progress = false;
        for qi in 0..sh.q {
            let i = qi as usize;
            let n = (c.tx_depth as u64 - (posted[i] - completed[i])).min(counts[i] - posted[i]);
            if n == 0 {
                continue;
            }
            let mut wrs = Vec::with_capacity(n as usize);
            for k in posted[i]..posted[i] + n {
                let g = k * sh.q + qi;
                let off = sh.slot(qi, k);
                let mut send_flags = SendFlags::SIGNALED;
                if (1..=c.max_inline()).contains(&c.size) {
                    send_flags |= SendFlags::INLINE;
                }
                let opcode = match c.mode {
                    Mode::WriteBw => WrOpcode::RdmaWrite { remote_addr: p.mr_addr + g * sh.size, rkey: p.rkey },
                    Mode::SendBw => WrOpcode::Send,
                    Mode::ReadBw => {
                        send_flags = SendFlags::SIGNALED;
                        WrOpcode::RdmaRead { remote_addr: p.mr_addr + off, rkey: p.rkey }
                    }
                };
                if c.mode == Mode::ReadBw {
                    s.mr.write(off, &sentinel)?;
                } else {
                    pattern::fill(c.seed, pattern::stream(qi as u32, g), &mut scratch);
                    s.mr.write(off, &scratch)?;
                }
                wrs.push(SendWr { wr_id: g, send_flags, opcode, sg_list: s.mr.sge(off, c.size).into() });
            }
            let now = dev.now_cycles();
            s.qps[i].post_send_batch(&wrs)?;
            posted[i] += n;
            posted_at[i].extend(std::iter::repeat_n(now, n as usize));
            progress = true;
        }
        let n = s.cq.poll_cq(&mut wcs)?;
        let now = dev.now_cycles();
        for wc in &wcs[..n] {
            let g = wc.wr_id;
            let (qi, k) = (g % sh.q, g / sh.q);
            let want = match c.mode {
                Mode::WriteBw => WcOpcode::RdmaWrite,
                Mode::SendBw => WcOpcode::Send,
                Mode::ReadBw => WcOpcode::RdmaRead,
            };
            if wc.status != WcStatus::Success
                || wc.opcode != want
                || wc.byte_len != c.size
                || k != completed[qi as usize]
                || wc.qp_num != s.qps[qi as usize].qp_num()
            {
                return Err(BenchError::Completion {
                    side: "requester",
                    qpn: wc.qp_num,
                    qp_index: qi as u32,
                    iter: g,
                    what: format!(
                        "completion {wc:?} (expected {want:?} of {} bytes, message {} of that QP)",
                        c.size, completed[qi as usize]
                    ),
                });
            }
            if c.mode == Mode::ReadBw {
                s.mr.read(sh.slot(qi, k), &mut scratch)?;
                check(c, qi, g, pattern::stream(qi as u32, k % sh.src_slots), &scratch)?;
                verified += sh.size;
            }
            completed[qi as usize] += 1;
            posts.push(posted_at[qi as usize].pop_front().unwrap_or(now));
            completions.push(now);
        }
        progress |= n > 0;
        if let Some(l) = link.try_recv()? {
            let why = l.strip_prefix("error ").unwrap_or(&l).to_string();
            return Err(peer(format!("the server failed: {why}")));
        }
        if progress {
            last_progress = now;
        } else if now - last_progress > c.stall_cycles {
            return Err(BenchError::Stall {
                cycles: now - last_progress,
                done: completed.iter().sum(),
                total,
                req: s.cq.describe(),
                resp: "in the server process".into(),
            });
        } else {
            dev.wait().map_err(rnic::Error::from)?;
        }
    }
    let last = completions.last().copied().unwrap_or(start);
    let half = completions.len() / 2;
    let half_at = if half >= 1 { completions[half - 1] } else { start };
    Ok(Report {
        size: c.size,
        iters: completions.len() as u64,
        start,
        cycles: last - start,
        second_half_cycles: last - half_at,
        wall: wall.elapsed(),
        verified_bytes: verified,
        own_slots: c.mode == Mode::WriteBw,
        recovery: s.qps.iter().map(Qp::recovery_stats).sum(),
        cc_windows: Vec::new(),
        deliveries: completions.clone(),
        completions,
        posts,
        events: 0,
    })
}
