//! Cosimulated NICs in another process: `rnic-simd` serves them over
//! vfio-user, and this process opens them as devices (`vfio-user:` device
//! strings) and runs the benchmark engine between them with every byte
//! verified in memory this process shared with the server.

use std::io::{BufRead, BufReader};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rnic::Context;
use rnic_driver::DeviceSpec;
use rnic_spec::regs;
use rnic_tools::bench::{self, BenchConfig, Mode};
use rnic_tools::devices;

/// A running `rnic-simd`, killed when dropped.
struct Simd {
    child: Child,
    dir: PathBuf,
}

impl Simd {
    fn start(name: &str, nics: u16) -> Simd {
        let dir = std::env::temp_dir().join(format!("rnic-simd-test-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let log = std::fs::File::create(dir.join("simd.log")).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_rnic-simd"))
            .args(["--nics", &nics.to_string(), "--dir"])
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("rnic-simd starts");
        let s = Simd { child, dir };
        let t = Instant::now();
        while !(0..nics).all(|i| s.sock(i as usize).exists()) {
            assert!(t.elapsed() < Duration::from_secs(60), "rnic-simd made no sockets in {}", s.dir.display());
            std::thread::sleep(Duration::from_millis(20));
        }
        s
    }

    fn sock(&self, i: usize) -> PathBuf {
        self.dir.join(format!("nic{i}.sock"))
    }

    /// What the server printed so far.
    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("simd.log")).unwrap()
    }
}

impl Drop for Simd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Opens the NIC at `sock` with the address the server gave it.
fn open(sock: &Path) -> Context {
    devices::open_context(&DeviceSpec::VfioUser(sock.to_path_buf())).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn writes_and_sends_between_nics_of_another_process_are_verified() {
    let s = Simd::start("bw", 2);
    let (a, b) = (open(&s.sock(0)), open(&s.sock(1)));
    // The last run sleeps on completion events: MSI-X messages to an eventfd bound over the socket.
    for (mode, size, iters, events) in [
        (Mode::WriteBw, 65536, 24, false),
        (Mode::SendBw, 4000, 40, false),
        (Mode::WriteBw, 333, 100, false),
        (Mode::WriteBw, 4096, 60, true),
    ] {
        let c = BenchConfig { size, iters, tx_depth: 16, stall_cycles: 5_000_000, events, ..BenchConfig::new(mode) };
        let r = bench::run(&a, &b, &c).unwrap_or_else(|e| panic!("{mode:?} {size} B: {e}"));
        assert_eq!(r.verified_bytes, size as u64 * iters, "{mode:?} {size} B");
        assert_eq!(r.events > 0, events, "{mode:?} {size} B: {} completion events", r.events);
        eprintln!(
            "{mode:?} {size} B x {iters}: {:.2} Gb/s in simulated time, {:.2} s of wall time",
            r.gbps(),
            r.wall.as_secs_f64()
        );
    }
    // On application memory: HostBufs, whose memfds the server maps at the pages registered.
    for mode in [Mode::WriteBw, Mode::SendBw, Mode::ReadBw] {
        let c = BenchConfig { size: 5000, iters: 16, tx_depth: 8, app_mem: true, ..BenchConfig::new(mode) };
        let r = bench::run(&a, &b, &c).unwrap_or_else(|e| panic!("{mode:?} on application memory: {e}"));
        assert_eq!(r.verified_bytes, 5000 * 16, "{mode:?} on application memory");
    }
    // Heap memory has no file to share: refused, with what to use instead.
    let pd = a.alloc_pd().unwrap();
    let e = pd.reg_mr_on(vec![0u8; 4096], rnic::AccessFlags::LOCAL_WRITE).unwrap_err();
    assert!(e.to_string().contains("HostBuf::new"), "{e}");
    let ok = pd.reg_mr_on(rnic::HostBuf::new(4096).unwrap(), rnic::AccessFlags::LOCAL_WRITE).unwrap();
    ok.dereg_mr().unwrap();
    assert!(!s.log().contains("outside any buffer"), "{}", s.log());
}

fn perf(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rnic-perf"));
    c.args(args);
    c
}

fn devs(s: &Simd, req: usize, resp: usize) -> String {
    format!("vfio-user:{},vfio-user:{}", s.sock(req).display(), s.sock(resp).display())
}

#[test]
fn a_client_killed_mid_transfer_leaves_the_server_and_the_other_clients_running() {
    let s = Simd::start("kill", 4);
    let mut doomed = perf(&["write_bw", "-s", "64K", "-n", "1000000", "--dev", &devs(&s, 0, 1)])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("rnic-perf starts");
    let other = perf(&["write_bw", "-s", "64K", "-n", "40", "--dev", &devs(&s, 2, 3)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rnic-perf starts");
    // The table's header comes once both NICs are open and the run begins; then let it transfer a while.
    let lines = BufReader::new(doomed.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    for l in lines {
        let l = l.unwrap();
        let started = l.starts_with(" #bytes");
        seen.push(l);
        if started {
            break;
        }
    }
    assert!(seen.last().is_some_and(|l| l.starts_with(" #bytes")), "the doomed client never started: {seen:?}");
    std::thread::sleep(Duration::from_secs(2));
    doomed.kill().unwrap();
    doomed.wait().unwrap();
    let out = other.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains(&format!(" verified {} bytes: OK", 40 * 65536)), "{text}");
    // The killed client's NICs were reset and take a new client.
    let out = perf(&["write_bw", "-s", "4000", "-n", "50", "--dev", &devs(&s, 0, 1)]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains(" verified 200000 bytes: OK"), "{text}");
}

#[test]
fn bad_mappings_and_accesses_are_refused_without_harm() {
    let s = Simd::start("bad", 1);
    let shm = |name: &str, len: u64| {
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(s.dir.join(name))
            .unwrap();
        f.set_len(len).unwrap();
        f
    };
    {
        let mut c = vfio_user::Client::new(&s.sock(0)).unwrap();
        let (a, b) = (shm("a", 8192), shm("b", 8192));
        let iova = 0x7f12_3400_0000u64;
        c.dma_map(0, iova, 8192, a.as_raw_fd()).unwrap();
        // Overlapping, wrapping and host-memory ranges: the server refuses them (the crate's client does not see the refusal).
        c.dma_map(0, iova + 4096, 8192, b.as_raw_fd()).unwrap();
        c.dma_map(0, u64::MAX - 4095, 8192, b.as_raw_fd()).unwrap();
        c.dma_map(0, rnic_sim::HOST_MEM_BASE, 8192, b.as_raw_fd()).unwrap();
        c.dma_unmap(iova + 1, 4096).unwrap();
        // Memory the file does not back, or a memfd that could shrink under the NIC's DMA (SIGBUS in the server).
        let small = shm("c", 4096);
        c.dma_map(0, 0x7f20_0000_0000, 65536, small.as_raw_fd()).unwrap();
        // SAFETY: memfd_create takes a NUL-terminated name; a non-negative result is a new descriptor we own.
        let fd = unsafe { libc::memfd_create(c"unsealed".as_ptr(), libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING) };
        assert!(fd >= 0);
        // SAFETY: `fd` was just created and is owned by nobody else.
        let unsealed = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fd) };
        unsealed.set_len(8192).unwrap();
        c.dma_map(0, 0x7f30_0000_0000, 8192, unsealed.as_raw_fd()).unwrap();
        // Unaligned, short and out-of-range register accesses read as all ones.
        let mut w = [0u8; 8];
        c.region_read(0, regs::REG_ID as u64, &mut w).unwrap();
        assert_eq!(u64::from_le_bytes(w) >> 32, regs::ID_MAGIC);
        for (region, off, len) in [
            (0, 4u64, 8usize),
            (0, 0, 4),
            (0, regs::BAR0_BYTES, 8),
            (0, u64::MAX - 3, 8),
            (0, u64::MAX - 7, 8),
            (7, u64::MAX - 1, 4),
        ] {
            let mut b = vec![0u8; len];
            c.region_read(region, off, &mut b).unwrap();
            assert!(b.iter().all(|&x| x == 0xff), "read of {len} at {off:#x}: {b:?}");
        }
        c.region_write(0, 3, &[1; 8]).unwrap();
        c.region_write(5, 0, &[1; 8]).unwrap();
        // MSI-X vectors the NIC does not have.
        let ev = rnic_driver::EventFd::new().unwrap();
        c.set_irqs(2, 0x24, 8, 1, &[ev.as_raw_fd()]).unwrap();
        c.region_read(0, regs::REG_ID as u64, &mut w).unwrap();
        assert_eq!(u64::from_le_bytes(w) >> 32, regs::ID_MAGIC, "still answering");
    }
    let log = s.log();
    for want in [
        "8192 bytes at 0x7f1234001000: overlaps a range already mapped",
        "8192 bytes at 0xfffffffffffff000: empty or past the end of the bus address space",
        "8192 bytes at 0x10000000: overlaps the simulated host's own memory",
        "DMA unmap of 4096 bytes at 0x7f1234000001: no such mapping",
        "DMA map of 65536 bytes at 0x7f2000000000: offset 0 + 65536 is past the end of the shared file (4096 bytes)",
        "DMA map of 8192 bytes at 0x7f3000000000: the memfd is not sealed against shrinking (F_SEAL_SHRINK)",
        "SET_IRQS: index 2, vectors 8+1: the NIC has MSI-X vectors 0..8",
    ] {
        assert!(log.contains(want), "the server's log lacks {want:?}:\n{log}");
    }
    // The client is gone; the NIC was reset and serves the next one in full.
    let ctx = open(&s.sock(0));
    let dev = ctx.device();
    let buf = dev.alloc_dma(10_000, rnic::DmaAccess { device_read: true, device_write: true }).unwrap();
    dev.write_mem(buf.bus_addr, &[7; 10_000]).unwrap();
    let mut back = vec![0; 10_000];
    dev.read_mem(buf.bus_addr, &mut back).unwrap();
    assert!(back.iter().all(|&x| x == 7));
    drop(ctx);
    // A third process sees the NIC as rnic-devinfo shows any device.
    let out = Command::new(env!("CARGO_BIN_EXE_rnic-devinfo"))
        .args(["--dev", &format!("vfio-user:{}", s.sock(0).display())])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        text.contains("status         : ready") && text.contains("source MAC, IP : 02:00:00:00:00:01, 10.0.0.1"),
        "{text}"
    );
    assert!(text.contains("read back and freed: OK"), "{text}");
}

#[test]
fn rnic_perf_refuses_devices_it_cannot_use() {
    let cases: [(&[&str], &str); 8] = [
        (&["--dev", "vfio-user:/a,vfio-user:/b,vfio-user:/c"], "--dev takes one device string"),
        (&["--dev", "cosim"], "the two-process mode opens a NIC of another process or a board"),
        (&["-b", "--dev", "vfio-user:/a"], "-b/--bidirectional: not in the two-process mode"),
        (&["localhost"], "is for the two-process mode, which takes one --dev"),
        (&["--dev", "cosim,cosim:1"], "the in-process cosimulation is what rnic-perf runs without --dev"),
        (
            &["--dev", "vfio-user:/nonexistent/nic0.sock,vfio-user:/nonexistent/nic1.sock"],
            "does not exist: start the server first",
        ),
        (
            &["--loss", "1", "--dev", "vfio-user:/a,vfio-user:/b"],
            "--loss, --burst, --reorder-ns, --dup, --corrupt shape the in-process cosimulation",
        ),
        (&["--pcap", "x.pcap", "--dev", "vfio-user:/a,vfio-user:/b"], "--pcap shape the in-process cosimulation"),
    ];
    for (args, want) in cases {
        let out = perf(&["write_bw"]).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(want), "{args:?}: {err}");
    }
    let out = perf(&["incast", "--dev", "vfio-user:/a"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("incast and perm run on NICs cosimulated in this process"), "{err}");
}

/// Starts `rnic-perf ARGS` as a two-process server on any free port; returns it and the port.
fn perf_server(args: &[&str]) -> (Child, BufReader<std::process::ChildStdout>, u16) {
    let mut server = perf(args).args(["-p", "0"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut out = BufReader::new(server.stdout.take().unwrap());
    let mut line = String::new();
    let port = loop {
        line.clear();
        if out.read_line(&mut line).unwrap_or(0) == 0 {
            break None;
        }
        if let Some(p) = line.trim().strip_prefix("waiting for the client on TCP port ") {
            break p.parse().ok();
        }
    };
    match port {
        Some(p) => (server, out, p),
        None => {
            let _ = server.kill();
            let _ = server.wait();
            panic!("the server stopped before listening");
        }
    }
}

/// The rest of a server's output, and whether it succeeded.
fn finish(mut server: Child, mut out: BufReader<std::process::ChildStdout>) -> (bool, String) {
    let mut text = String::new();
    std::io::Read::read_to_string(&mut out, &mut text).unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(server.stderr.as_mut().unwrap(), &mut err).unwrap();
    (server.wait().unwrap().success(), text + &err)
}

#[test]
fn perftest_two_process_runs_verify_every_byte_where_it_lands() {
    let s = Simd::start("two", 2);
    let (srv, cli) = (format!("vfio-user:{}", s.sock(1).display()), format!("vfio-user:{}", s.sock(0).display()));
    for (test, extra) in [("write_bw", &[][..]), ("send_bw", &["-q", "3"][..]), ("read_bw", &["--app-mem"][..])] {
        let args: Vec<&str> = [test, "-s", "5000", "-n", "40"].into_iter().chain(extra.iter().copied()).collect();
        let (server, out, port) = perf_server(&[&args[..], &["--dev", &srv]].concat());
        let port = port.to_string();
        let client = perf(&[&args[..], &["--dev", &cli, "127.0.0.1", "-p", &port]].concat()).output().unwrap();
        let text = String::from_utf8_lossy(&client.stdout);
        let (ok, served) = finish(server, out);
        assert!(client.status.success(), "{test} client: {text}{}", String::from_utf8_lossy(&client.stderr));
        assert!(ok, "{test} server: {served}");
        let msgs: u64 = if test == "send_bw" { 120 } else { 40 };
        assert!(text.contains(&format!(" verified {} bytes: OK", msgs * 5000)), "{test}: {text}");
        // Where the bytes land is where they are checked: the server for WRITE and SEND, the client for READ.
        let here = if test == "read_bw" { 0 } else { msgs * 5000 };
        assert!(served.contains(&format!(" verified {here} bytes here: OK")), "{test}: {served}");
        let row = text.lines().find(|l| l.starts_with(" 5000 ")).expect("a result row");
        assert!(served.contains(row), "the server prints the client's row: {served}");
    }
    // Started with different flags: both sides stop and say which differ.
    let (server, out, port) = perf_server(&["write_bw", "-s", "4096", "--dev", &srv]);
    let port = port.to_string();
    let client = perf(&["write_bw", "-s", "8192", "--dev", &cli, "127.0.0.1", "-p", &port]).output().unwrap();
    let (ok, served) = finish(server, out);
    let err = String::from_utf8_lossy(&client.stderr);
    assert!(!client.status.success() && !ok);
    for text in [&*err, &served] {
        assert!(text.contains("different parameters (size: 4096 at the server, 8192 at the client)"), "{text}");
    }
    // No server there: the client names it (after its retries) rather than hanging.
    let client = perf(&["write_bw", "--dev", &cli, "127.0.0.1", "-p", "1"]).output().unwrap();
    assert!(!client.status.success());
    assert!(String::from_utf8_lossy(&client.stderr).contains("cannot reach the server at 127.0.0.1:1"));
}
