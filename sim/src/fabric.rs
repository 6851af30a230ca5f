//! The Ethernet fabric between simulated NICs: MACs, links, a switch, faults.
//!
//! Pure Rust and cycle-stepped. Each NIC has a [`NetPort`]: a TX MAC that
//! accepts the core's beats at line rate (holding `net_tx_ready` low while the
//! wire is busy) and an RX MAC that hands arriving frames to the core beat by
//! beat. [`Fabric::route`] moves frames a TX MAC finished to their
//! destination's RX queue with their arrival time:
//!
//! * serialization: `(len + WIRE_OVERHEAD) * 8 / link_gbps` per frame
//!   (preamble before, FCS and inter-frame gap after);
//! * 2 NICs: one cable, arrival = end of serialization + `link_delay`;
//! * more NICs: an output-queued cut-through switch forwarding by destination
//!   MAC. The last byte leaves the output port at
//!   `max(port free + serialization, arrival at the switch + switch_latency)`,
//!   and arrives `link_delay` later. A frame whose output queue would exceed
//!   `switch_port_buffer` is dropped; unknown MACs are dropped and counted;
//!   optionally ECN CE is marked above a queue threshold;
//! * with [`crate::config::LeafSpine`] (any number of NICs): leaf and spine
//!   switches of that kind, a frame crossing up to three output queues
//!   (leaf uplink, spine downlink, leaf port), each serializing at its own
//!   link's rate; the spine is the leaf's ECMP hash of the five-tuple, so
//!   the UDP source port picks the path. Each queue's state is the time its
//!   last byte leaves. A frame is taken by each queue when it reaches it,
//!   in the order frames reach that queue (an event queue keyed by arrival
//!   time), so a frame from a fast path does not wait behind one from a
//!   slow path that has yet to arrive, nor see its bytes as backlog;
//! * RX: the frame is handed to the core at 64 B/cycle so that its last beat
//!   is presented when its last byte has arrived (cut-through MAC),
//!   honouring `net_rx_ready`.
//!
//! Faults act on a NIC's egress link before the switch ([`LinkFaults`],
//! in [`crate::faults`]).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use rnic_spec::params::{CLOCK_PS, DATA_BYTES};
use rnic_spec::wire::{off, WIRE_OVERHEAD};

use crate::config::SimConfig;
use crate::faults::{LinkFaults, LinkStats};
use crate::pcap::PcapSink;

/// MAC address of NIC `i` of a cluster: 02:00:00:00:00:(i+1).
pub fn mac_of(i: usize) -> [u8; 6] {
    assert!(i < 255, "at most 255 NICs");
    [0x02, 0, 0, 0, 0, (i + 1) as u8]
}

/// IPv4 address of NIC `i`: 10.0.0.(i+1).
pub fn ip_of(i: usize) -> [u8; 4] {
    assert!(i < 255, "at most 255 NICs");
    [10, 0, 0, (i + 1) as u8]
}

/// [`mac_of`] as the value of `REG_SRC_MAC` (first wire byte in bits 47:40).
pub fn mac_reg(i: usize) -> u64 {
    mac_of(i).iter().fold(0, |a, &b| a << 8 | b as u64)
}

/// [`ip_of`] as the value of `REG_SRC_IP` (first wire byte in bits 31:24).
pub fn ip_reg(i: usize) -> u64 {
    u32::from_be_bytes(ip_of(i)) as u64
}

/// Largest frame the MACs handle (jumbo).
pub const MAX_FRAME: usize = 9216;
/// Bytes of preamble + SFD (charged before a frame).
const PREAMBLE: u64 = 8;

/// Wire time of `bytes` in picoseconds at `mps_per_byte` (milli-picoseconds per byte).
#[inline]
fn wire_ps(bytes: u64, mps_per_byte: u64) -> u64 {
    (bytes * mps_per_byte).div_ceil(1000)
}

/// A frame finished by a TX MAC, waiting for [`Fabric::route`].
struct TxDone {
    data: Vec<u8>,
    /// Time the FCS's last byte left the sender.
    end_ps: u64,
}

/// A switch output queue of the fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum QueueId {
    /// Leaf uplink `up[i]`.
    Up(usize),
    /// Spine downlink `down[i]`.
    Down(usize),
    /// The switch (or leaf) port towards NIC `i`.
    Nic(usize),
}

/// A frame between switches: it reaches `path[next]` at `at_ps` (its last
/// byte, over a link of `in_mps` milli-ps per byte).
struct InFlight {
    at_ps: u64,
    /// Routing order among frames reaching queues at the same time.
    seq: u64,
    src: usize,
    dst: usize,
    path: [QueueId; 3],
    hops: u8,
    next: u8,
    in_mps: u64,
    data: Vec<u8>,
}

impl PartialEq for InFlight {
    fn eq(&self, o: &Self) -> bool {
        (self.at_ps, self.seq) == (o.at_ps, o.seq)
    }
}
impl Eq for InFlight {}
impl PartialOrd for InFlight {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for InFlight {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.at_ps, self.seq).cmp(&(o.at_ps, o.seq))
    }
}

/// A frame queued in an RX MAC.
struct RxFrame {
    data: Vec<u8>,
    /// Time the last byte arrives.
    arrive_ps: u64,
}

/// The TX half of a NIC's MAC.
pub struct TxMac {
    frame: Vec<u8>,
    in_frame: bool,
    busy_until_ps: u64,
    mps_per_byte: u64,
    done: VecDeque<TxDone>,
    /// Beats with a non-contiguous or empty `keep` (a protocol error of the core).
    pub bad_keep_beats: u64,
    /// Frames longer than [`MAX_FRAME`] (truncated).
    pub oversize_frames: u64,
    /// Beats of a frame that came after the wire had sent every byte before
    /// them: a real MAC (the CMAC) would abort the frame; this model sends
    /// it with the gap.
    pub underruns: u64,
    /// Frames cut off mid-frame: by the core's reset (the core as the top),
    /// or ended by the shell with `tx_axis_tuser`. The MAC ends such a frame
    /// with a bad FCS, so no receiver takes it (this model drops it).
    pub aborted: u64,
}

impl TxMac {
    fn new(mps_per_byte: u64) -> TxMac {
        TxMac {
            frame: Vec::new(),
            in_frame: false,
            busy_until_ps: 0,
            mps_per_byte,
            done: VecDeque::new(),
            bad_keep_beats: 0,
            oversize_frames: 0,
            underruns: 0,
            aborted: 0,
        }
    }

    /// The core is in reset: a frame it had begun is aborted (its bytes
    /// already took the wire).
    pub fn abort(&mut self, pool: &mut Vec<Vec<u8>>) {
        if self.in_frame {
            self.in_frame = false;
            self.aborted += 1;
            pool.push(std::mem::take(&mut self.frame));
        }
    }

    /// Bytes of a frame the MAC has begun and not ended (0 between frames).
    pub fn open_frame_bytes(&self) -> usize {
        if self.in_frame {
            self.frame.len()
        } else {
            0
        }
    }

    /// `net_tx_ready` for the cycle starting at `now_ps`: the wire has
    /// drained what it accepted up to the end of this cycle.
    #[inline]
    pub fn ready(&self, now_ps: u64) -> bool {
        self.busy_until_ps <= now_ps + CLOCK_PS
    }

    /// A beat fired at `now_ps`: bytes of `data` enabled by `keep`; `bad`
    /// with `last` (the CMAC's `tx_axis_tuser`) ends the frame with a bad FCS.
    #[inline]
    pub fn beat(
        &mut self,
        now_ps: u64,
        data: &[u8; DATA_BYTES],
        keep: u64,
        last: bool,
        bad: bool,
        pool: &mut Vec<Vec<u8>>,
    ) {
        if !self.in_frame {
            self.in_frame = true;
            self.frame = pool.pop().unwrap_or_else(|| Vec::with_capacity(MAX_FRAME));
            self.frame.clear();
            self.busy_until_ps = self.busy_until_ps.max(now_ps) + wire_ps(PREAMBLE, self.mps_per_byte);
        } else if self.busy_until_ps < now_ps {
            self.underruns += 1;
        }
        let n = keep.count_ones() as usize;
        let contiguous = keep == u64::MAX || (keep != 0 && keep == (1u64 << n) - 1);
        let room = MAX_FRAME - self.frame.len();
        if contiguous {
            self.frame.extend_from_slice(&data[..n.min(room)]);
        } else {
            self.bad_keep_beats += 1;
            for (i, &b) in data.iter().enumerate() {
                if keep >> i & 1 == 1 && self.frame.len() < MAX_FRAME {
                    self.frame.push(b);
                }
            }
        }
        if n > room {
            self.oversize_frames += 1;
        }
        self.busy_until_ps = self.busy_until_ps.max(now_ps) + wire_ps(n as u64, self.mps_per_byte);
        if last && bad {
            // On the wire with a bad FCS: it takes its time and no receiver keeps it.
            self.busy_until_ps += wire_ps(WIRE_OVERHEAD as u64 - PREAMBLE, self.mps_per_byte);
            self.in_frame = false;
            self.aborted += 1;
            pool.push(std::mem::take(&mut self.frame));
        } else if last {
            // FCS (4) then the inter-frame gap (12): the frame ends with its FCS.
            let fcs_end = self.busy_until_ps + wire_ps(4, self.mps_per_byte);
            self.busy_until_ps += wire_ps(WIRE_OVERHEAD as u64 - PREAMBLE, self.mps_per_byte);
            self.in_frame = false;
            let data = std::mem::take(&mut self.frame);
            self.done.push_back(TxDone { data, end_ps: fcs_end });
        }
    }
}

/// The beat an RX MAC presents to the core.
pub struct RxBeat<'a> {
    /// Frame bytes of this beat (up to 64); lanes past them are zero.
    pub data: &'a [u8],
    /// Byte enables.
    pub keep: u64,
    /// Last beat of the frame.
    pub last: bool,
}

/// The RX half of a NIC's MAC.
pub struct RxMac {
    queue: VecDeque<RxFrame>,
    off: usize,
    presenting: bool,
    fresh: bool,
    /// Frames handed to the core.
    pub frames: u64,
}

impl RxMac {
    fn new() -> RxMac {
        RxMac { queue: VecDeque::new(), off: 0, presenting: false, fresh: false, frames: 0 }
    }

    /// Start of the cycle at `now_ps`: starts presenting the next frame when its time has come.
    #[inline]
    pub fn begin_cycle(&mut self, now_ps: u64) {
        if self.presenting {
            return;
        }
        if let Some(f) = self.queue.front() {
            let beats = f.data.len().div_ceil(DATA_BYTES).max(1) as u64;
            // Present so the last beat goes out as the last byte arrives.
            if now_ps + beats.saturating_sub(1) * CLOCK_PS >= f.arrive_ps {
                self.presenting = true;
                self.fresh = true;
            }
        }
    }

    /// The beat presented this cycle, if any.
    #[inline]
    pub fn beat(&self) -> Option<RxBeat<'_>> {
        if !self.presenting {
            return None;
        }
        let f = self.queue.front()?;
        let end = (self.off + DATA_BYTES).min(f.data.len());
        let n = end - self.off;
        let keep = if n == DATA_BYTES { u64::MAX } else { (1u64 << n) - 1 };
        Some(RxBeat { data: &f.data[self.off..end], keep, last: end == f.data.len() })
    }

    /// True if the presented beat changed since [`RxMac::mark_driven`] (its data must be driven).
    #[inline]
    pub fn beat_is_new(&self) -> bool {
        self.fresh
    }

    /// The presented beat's data has been driven onto the core's inputs.
    #[inline]
    pub fn mark_driven(&mut self) {
        self.fresh = false;
    }

    /// The presented beat was accepted; the next one (if any) is presented at once.
    #[inline]
    pub fn fired(&mut self, pool: &mut Vec<Vec<u8>>) {
        let Some(f) = self.queue.front() else { return };
        self.off += DATA_BYTES;
        self.fresh = true;
        if self.off >= f.data.len() {
            let f = self.queue.pop_front().expect("front exists");
            pool.push(f.data);
            self.off = 0;
            self.presenting = false;
            self.frames += 1;
        }
    }

    /// Queues a frame in arrival order (after every frame arriving no later; never before the one being presented).
    fn insert(&mut self, f: RxFrame) {
        let first = self.presenting as usize;
        let mut at = self.queue.len();
        while at > first && self.queue[at - 1].arrive_ps > f.arrive_ps {
            at -= 1;
        }
        self.queue.insert(at, f);
    }

    /// Frames waiting (including the one being presented).
    pub fn queued(&self) -> usize {
        self.queue.len()
    }
}

/// The MAC of one NIC.
pub struct NetPort {
    /// Transmit side.
    pub tx: TxMac,
    /// Receive side.
    pub rx: RxMac,
}

/// Counters of one switch output queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueStats {
    /// Frames sent out of it.
    pub frames: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Frames dropped because it was full.
    pub drops: u64,
    /// Frames marked ECN CE in it.
    pub ecn_marked: u64,
    /// Most bytes it held when a frame arrived.
    pub max_backlog: u64,
}

/// A switch output: a FIFO drained at its link's rate, kept as the time its last queued byte leaves.
#[derive(Clone, Copy, Debug, Default)]
struct OutQueue {
    busy_ps: u64,
    mps_per_byte: u64,
    stats: QueueStats,
    /// Most bytes it held when a frame arrived since [`Fabric::take_peak_backlogs`].
    peak: u64,
}

/// How the NICs are connected.
enum Topo {
    /// Two NICs on one cable.
    Cable,
    /// One switch.
    Switch,
    /// Leaves and spines: `up[leaf * spines + s]` (leaf to spine s),
    /// `down[s * leaves + leaf]` (spine s to a leaf).
    LeafSpine { leaves: usize, spines: usize, leaf_of: Vec<usize>, up: Vec<OutQueue>, down: Vec<OutQueue> },
}

/// Counters of the switch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SwitchStats {
    /// Frames forwarded.
    pub forwarded: u64,
    /// Frames to a MAC no port has (dropped).
    pub unknown_dst: u64,
    /// Frames dropped because the output queue was full.
    pub buffer_drops: u64,
    /// Frames marked ECN CE.
    pub ecn_marked: u64,
}

/// All MACs, links and the switch of a cluster.
pub struct Fabric {
    ports: Vec<NetPort>,
    faults: Vec<LinkFaults>,
    links: Vec<LinkStats>,
    pool: Vec<Vec<u8>>,
    /// Per NIC: the switch (or leaf) port towards it.
    nic_out: Vec<OutQueue>,
    mps_per_byte: u64,
    delay_ps: u64,
    switch_latency_ps: u64,
    port_buffer: u64,
    ecn_threshold: Option<u64>,
    topo: Topo,
    switch: SwitchStats,
    pcap: Option<PcapSink>,
    /// Frames between switches, earliest arrival first.
    in_flight: BinaryHeap<Reverse<InFlight>>,
    /// Per NIC, the bytes it put on its link per entropy (low byte of the UDP source port).
    entropy_bytes: Vec<[u64; 256]>,
    seq: u64,
}

impl Fabric {
    /// A fabric for `n` NICs (a cable for 2, a switch otherwise).
    pub fn new(n: usize, cfg: &SimConfig, pcap: Option<PcapSink>) -> Fabric {
        let mps_per_byte = (8.0e6 / cfg.link_gbps).round() as u64;
        let q = |gbps: f64| OutQueue { mps_per_byte: (8.0e6 / gbps).round() as u64, ..Default::default() };
        let topo = match &cfg.leaf_spine {
            Some(ls) => {
                assert!(ls.leaves >= 1 && ls.spines >= 1, "a leaf-spine fabric needs a leaf and a spine");
                let rate = |leaf: usize, s: usize| {
                    ls.link_rates.iter().rev().find(|r| r.0 == leaf && r.1 == s).map_or(cfg.link_gbps, |r| r.2)
                };
                for &(l, s, g) in &ls.link_rates {
                    assert!(l < ls.leaves && s < ls.spines && g > 0.0, "link rate ({l}, {s}, {g}) outside the fabric");
                }
                Topo::LeafSpine {
                    leaves: ls.leaves,
                    spines: ls.spines,
                    leaf_of: (0..n).map(|i| i * ls.leaves / n.max(1)).collect(),
                    up: (0..ls.leaves * ls.spines).map(|k| q(rate(k / ls.spines, k % ls.spines))).collect(),
                    down: (0..ls.spines * ls.leaves).map(|k| q(rate(k % ls.leaves, k / ls.leaves))).collect(),
                }
            }
            None if n == 2 => Topo::Cable,
            None => Topo::Switch,
        };
        if !matches!(topo, Topo::Cable) {
            // A frame is routed through its last queue `link_delay` before it
            // reaches it; the RX MAC presents its first beat up to 67 cycles
            // before its last byte arrives, which must not be earlier.
            assert!(
                2 * cfg.link_delay_ns + cfg.switch_latency_ns >= 68 * CLOCK_PS / 1000,
                "link delay {} ns and switch latency {} ns: a switched fabric needs 2 x delay + latency >= {} ns",
                cfg.link_delay_ns,
                cfg.switch_latency_ns,
                68 * CLOCK_PS / 1000
            );
        }
        Fabric {
            ports: (0..n).map(|_| NetPort { tx: TxMac::new(mps_per_byte), rx: RxMac::new() }).collect(),
            faults: (0..n).map(|_| LinkFaults::default()).collect(),
            links: vec![LinkStats::default(); n],
            pool: Vec::new(),
            nic_out: vec![q(cfg.link_gbps); n],
            mps_per_byte,
            delay_ps: cfg.link_delay_ns * 1000,
            switch_latency_ps: cfg.switch_latency_ns * 1000,
            port_buffer: cfg.switch_port_buffer,
            ecn_threshold: cfg.switch_ecn_threshold,
            topo,
            switch: SwitchStats::default(),
            pcap,
            in_flight: BinaryHeap::new(),
            seq: 0,
            entropy_bytes: vec![[0; 256]; n],
        }
    }

    /// Number of ports.
    pub fn len(&self) -> usize {
        self.ports.len()
    }

    /// True if the fabric has no ports.
    pub fn is_empty(&self) -> bool {
        self.ports.is_empty()
    }

    /// Port `i` and the frame buffer pool, for one NIC's cycle.
    #[inline]
    pub fn port_and_pool(&mut self, i: usize) -> (&mut NetPort, &mut Vec<Vec<u8>>) {
        (&mut self.ports[i], &mut self.pool)
    }

    /// Port `i`.
    pub fn port(&self, i: usize) -> &NetPort {
        &self.ports[i]
    }

    /// Fault controls of NIC `i`'s egress link.
    pub fn faults(&mut self, i: usize) -> &mut LinkFaults {
        &mut self.faults[i]
    }

    /// Counters of NIC `i`'s egress link.
    pub fn link_stats(&self, i: usize) -> LinkStats {
        self.links[i]
    }

    /// Counters of the switch (zero for a 2-NIC cable; all switches of a leaf-spine fabric).
    pub fn switch_stats(&self) -> SwitchStats {
        self.switch
    }

    /// Every switch output queue's counters, named: `port i` (towards NIC
    /// i), and in a leaf-spine fabric `leaf l -> spine s` and `spine s -> leaf l`.
    pub fn queue_stats(&self) -> Vec<(String, QueueStats)> {
        let mut v: Vec<(String, QueueStats)> = match &self.topo {
            Topo::LeafSpine { leaves, spines, up, down, .. } => (0..leaves * spines)
                .map(|k| (format!("leaf {} -> spine {}", k / spines, k % spines), up[k].stats))
                .chain(
                    (0..spines * leaves)
                        .map(|k| (format!("spine {} -> leaf {}", k / leaves, k % leaves), down[k].stats)),
                )
                .collect(),
            _ => Vec::new(),
        };
        if !matches!(self.topo, Topo::Cable) {
            v.extend(self.nic_out.iter().enumerate().map(|(i, q)| (format!("port {i}"), q.stats)));
        }
        v
    }

    /// Every switch output queue's most bytes held since the previous call
    /// (when a frame arrived, or now at `now_ps`; named as in
    /// [`Fabric::queue_stats`]), and starts the next period: a time series
    /// of queue depth, one sample per call. Frames are taken through a
    /// queue up to one link delay ahead of the cycle the fabric is at, so a
    /// sample may include frames arriving that much later.
    pub fn take_peak_backlogs(&mut self, now_ps: u64) -> Vec<(String, u64)> {
        let take = |q: &mut OutQueue| {
            let held = q.busy_ps.saturating_sub(now_ps) * 1000 / q.mps_per_byte.max(1);
            std::mem::take(&mut q.peak).max(held)
        };
        let mut v: Vec<(String, u64)> = Vec::new();
        if let Topo::LeafSpine { leaves, spines, up, down, .. } = &mut self.topo {
            for (k, q) in up.iter_mut().enumerate() {
                v.push((format!("leaf {} -> spine {}", k / *spines, k % *spines), take(q)));
            }
            for (k, q) in down.iter_mut().enumerate() {
                v.push((format!("spine {} -> leaf {}", k / *leaves, k % *leaves), take(q)));
            }
        }
        if !matches!(self.topo, Topo::Cable) {
            for (i, q) in self.nic_out.iter_mut().enumerate() {
                v.push((format!("port {i}"), take(q)));
            }
        }
        v
    }

    /// The spine a frame from NIC `src` takes (None: no leaf-spine fabric,
    /// the destination is unknown or on the same leaf).
    pub fn spine_of(&self, src: usize, frame: &[u8]) -> Option<usize> {
        let Topo::LeafSpine { spines, leaf_of, .. } = &self.topo else { return None };
        let d = frame.get(off::ETH_DST..off::ETH_DST + 6)?;
        let dst = (d[..5] == [2, 0, 0, 0, 0] && d[5] >= 1).then(|| d[5] as usize - 1).filter(|&d| d < leaf_of.len())?;
        (leaf_of[src] != leaf_of[dst]).then(|| (ecmp_hash(leaf_of[src] as u64, frame) % *spines as u64) as usize)
    }

    /// The spine a request from NIC `src` to NIC `dst` with UDP source port
    /// `sport` takes (None: no leaf-spine fabric, or the two share a leaf).
    pub fn spine_of_port(&self, src: usize, dst: usize, sport: u16) -> Option<usize> {
        let f = rnic_spec::wire::Frame {
            dst_mac: mac_of(dst),
            src_mac: mac_of(src),
            src_ip: u32::from_be_bytes(ip_of(src)),
            dst_ip: u32::from_be_bytes(ip_of(dst)),
            sport,
            ..Default::default()
        };
        self.spine_of(src, &f.encode())
    }

    /// Bytes NIC `src` put on its link per entropy (the low byte of the
    /// frames' UDP source port), after the link's faults.
    pub fn entropy_bytes(&self, src: usize) -> &[u64; 256] {
        &self.entropy_bytes[src]
    }

    /// TX underruns of every NIC's MAC (see [`TxMac::underruns`]).
    pub fn tx_underruns(&self) -> u64 {
        self.ports.iter().map(|p| p.tx.underruns).sum()
    }

    /// Bytes each spine carried (empty without a leaf-spine fabric).
    pub fn spine_bytes(&self) -> Vec<u64> {
        match &self.topo {
            Topo::LeafSpine { leaves, spines, up, .. } => {
                (0..*spines).map(|s| (0..*leaves).map(|l| up[l * spines + s].stats.bytes).sum()).collect()
            }
            _ => Vec::new(),
        }
    }

    /// Error of the pcap writer, if writing failed.
    pub fn pcap_error(&self) -> Option<&str> {
        self.pcap.as_ref().and_then(|p| p.error())
    }

    /// Flushes the pcap file.
    pub fn flush_pcap(&mut self) {
        if let Some(p) = self.pcap.as_mut() {
            p.flush();
        }
    }

    /// Queues `frame` for NIC `dst`'s RX as if its last byte arrived at `arrive_ps`
    /// (tests of bad input from the wire). Frames are delivered in arrival order.
    pub fn inject(&mut self, dst: usize, frame: &[u8], arrive_ps: u64) {
        let mut data = self.pool.pop().unwrap_or_default();
        data.clear();
        data.extend_from_slice(frame);
        self.ports[dst].rx.insert(RxFrame { data, arrive_ps });
    }

    /// End of the cycle starting at `now_ps`: takes every frame a TX MAC
    /// finished onto the wire, and moves frames between switches up to the
    /// time no frame yet unsent can reach a queue.
    #[inline]
    pub fn route(&mut self, now_ps: u64) {
        for src in 0..self.ports.len() {
            while let Some(TxDone { mut data, end_ps }) = self.ports[src].tx.done.pop_front() {
                self.links[src].frames += 1;
                self.links[src].bytes += data.len() as u64;
                if let Some(p) = self.pcap.as_mut() {
                    p.write(end_ps, &data);
                }
                if !self.faults[src].apply(&mut data, &mut self.links[src]) {
                    self.pool.push(data);
                    continue;
                }
                self.launch(src, data, end_ps);
            }
        }
        // Frames sent from the next cycle on reach their first queue no earlier than this.
        self.advance(now_ps + CLOCK_PS + self.delay_ps);
    }

    /// A frame whose last byte left NIC `src` at `end_ps` enters the fabric.
    fn launch(&mut self, src: usize, data: Vec<u8>, end_ps: u64) {
        if let Some(&e) = data.get(off::UDP_SPORT + 1) {
            self.entropy_bytes[src][e as usize] += data.len() as u64;
        }
        if matches!(self.topo, Topo::Cable) {
            self.deliver(src, 1 - src, data, end_ps + self.delay_ps);
            return;
        }
        match self.path_of(src, &data) {
            Some((dst, path, hops)) => {
                self.seq += 1;
                self.in_flight.push(Reverse(InFlight {
                    at_ps: end_ps + self.delay_ps,
                    seq: self.seq,
                    src,
                    dst,
                    path,
                    hops,
                    next: 0,
                    in_mps: self.mps_per_byte,
                    data,
                }));
            }
            None => {
                self.switch.unknown_dst += 1;
                self.pool.push(data);
            }
        }
    }

    /// Takes every frame reaching a queue before `horizon_ps` through it, in arrival order.
    fn advance(&mut self, horizon_ps: u64) {
        while self.in_flight.peek().is_some_and(|f| f.0.at_ps < horizon_ps) {
            let Reverse(mut f) = self.in_flight.pop().expect("peeked");
            let (buffer, ecn, latency) = (self.port_buffer, self.ecn_threshold, self.switch_latency_ps);
            let q = match (&mut self.topo, f.path[f.next as usize]) {
                (Topo::LeafSpine { up, .. }, QueueId::Up(i)) => &mut up[i],
                (Topo::LeafSpine { down, .. }, QueueId::Down(i)) => &mut down[i],
                (_, QueueId::Nic(i)) => &mut self.nic_out[i],
                _ => unreachable!("a leaf-spine queue outside a leaf-spine fabric"),
            };
            let mps = q.mps_per_byte;
            let Some(leave) = hop(q, &mut f.data, f.at_ps, f.in_mps, buffer, ecn, latency, &mut self.switch) else {
                self.pool.push(f.data);
                continue;
            };
            f.next += 1;
            if f.next == f.hops {
                self.switch.forwarded += 1;
                self.deliver(f.src, f.dst, f.data, leave + self.delay_ps);
            } else {
                f.at_ps = leave + self.delay_ps;
                f.in_mps = mps;
                self.in_flight.push(Reverse(f));
            }
        }
    }

    /// Hands a frame to NIC `dst`'s RX at `arrive_ps`, with the delivery
    /// faults of `src`'s link (extra delay, a duplicate).
    fn deliver(&mut self, src: usize, dst: usize, data: Vec<u8>, arrive_ps: u64) {
        let (extra, dup) = self.faults[src].take_delivery(&mut self.links[src]);
        let arrive_ps = arrive_ps + extra;
        if dup {
            let mut copy = self.pool.pop().unwrap_or_default();
            copy.clear();
            copy.extend_from_slice(&data);
            let wire = wire_ps(data.len() as u64 + WIRE_OVERHEAD as u64, self.mps_per_byte);
            self.ports[dst].rx.insert(RxFrame { data: copy, arrive_ps: arrive_ps + wire });
        }
        self.ports[dst].rx.insert(RxFrame { data, arrive_ps });
    }

    /// Destination NIC and the output queues a frame from NIC `src` crosses
    /// (None: unknown destination).
    fn path_of(&self, src: usize, frame: &[u8]) -> Option<(usize, [QueueId; 3], u8)> {
        let dst = frame
            .get(off::ETH_DST..off::ETH_DST + 6)
            .and_then(|d| (d[..5] == [2, 0, 0, 0, 0] && d[5] >= 1).then(|| d[5] as usize - 1))
            .filter(|&d| d < self.ports.len())?;
        let last = QueueId::Nic(dst);
        if let Topo::LeafSpine { leaves, spines, leaf_of, .. } = &self.topo {
            let (ls, ld) = (leaf_of[src], leaf_of[dst]);
            if ls != ld {
                let s = (ecmp_hash(ls as u64, frame) % *spines as u64) as usize;
                return Some((dst, [QueueId::Up(ls * spines + s), QueueId::Down(s * leaves + ld), last], 3));
            }
        }
        Some((dst, [last, last, last], 1))
    }
}

/// A frame whose last byte reaches a switch at `at` (over a link of
/// `in_mps` milli-ps per byte) goes out of queue `q`: the time its last
/// byte leaves, or None if the queue is full. Cut-through: an idle output
/// as fast as the input sends the last byte `latency` after it arrived; a
/// slower one takes its own serialization from the first byte on. Marks
/// the frame CE above the ECN threshold.
#[allow(clippy::too_many_arguments)]
fn hop(
    q: &mut OutQueue,
    frame: &mut [u8],
    at: u64,
    in_mps: u64,
    buffer: u64,
    ecn_threshold: Option<u64>,
    latency_ps: u64,
    sw: &mut SwitchStats,
) -> Option<u64> {
    let len = frame.len() as u64;
    let backlog = q.busy_ps.saturating_sub(at) * 1000 / q.mps_per_byte.max(1);
    q.stats.max_backlog = q.stats.max_backlog.max(backlog);
    q.peak = q.peak.max(backlog);
    if backlog + len > buffer {
        q.stats.drops += 1;
        sw.buffer_drops += 1;
        return None;
    }
    if ecn_threshold.is_some_and(|k| backlog > k) && mark_ce(frame) {
        q.stats.ecn_marked += 1;
        sw.ecn_marked += 1;
    }
    let (wire_out, wire_in) =
        (wire_ps(len + WIRE_OVERHEAD as u64, q.mps_per_byte), wire_ps(len + WIRE_OVERHEAD as u64, in_mps));
    let leave = (q.busy_ps + wire_out).max(at + latency_ps + wire_out.saturating_sub(wire_in));
    q.busy_ps = leave;
    q.stats.frames += 1;
    q.stats.bytes += len;
    Some(leave)
}

/// A switch's ECMP hash of a frame's IPv4/UDP five-tuple (source and
/// destination address, protocol, ports), salted with the switch's `salt`.
fn ecmp_hash(salt: u64, frame: &[u8]) -> u64 {
    let be = |o: usize, n: usize| frame.get(o..o + n).map_or(0, |b| b.iter().fold(0u64, |a, &x| a << 8 | x as u64));
    let mut h = salt.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ be(off::IP_SRC, 4) << 32
        ^ be(off::IP_DST, 4)
        ^ be(off::IP_PROTO, 1) << 56
        ^ be(off::UDP_SPORT, 2) << 16
        ^ be(off::UDP_DPORT, 2) << 40;
    // SplitMix64's finalizer: every input bit moves every output bit.
    h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    h ^ (h >> 31)
}

/// Sets ECN CE on an ECN-capable IPv4 frame and fixes the header checksum; true if marked.
pub fn mark_ce(frame: &mut [u8]) -> bool {
    if frame.len() < off::IP + 20 || frame[off::ETH_TYPE..off::ETH_TYPE + 2] != [0x08, 0x00] {
        return false;
    }
    let ecn = frame[off::IP_TOS] & 3;
    if ecn == 0 || ecn == 3 {
        return false;
    }
    frame[off::IP_TOS] |= 3;
    frame[off::IP_CSUM] = 0;
    frame[off::IP_CSUM + 1] = 0;
    let ihl = ((frame[off::IP] & 0xf) as usize * 4).clamp(20, frame.len() - off::IP);
    let mut sum: u32 = frame[off::IP..off::IP + ihl]
        .chunks(2)
        .map(|c| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32)
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    frame[off::IP_CSUM..off::IP_CSUM + 2].copy_from_slice(&(!(sum as u16)).to_be_bytes());
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Fabric {
        /// One frame through the fabric with nothing else in flight (frames
        /// offered in time order): its destination and arrival time, `f`
        /// as it arrived (ECN marks); None if dropped. Empties the RX queues.
        fn forward(&mut self, src: usize, f: &mut [u8], end_ps: u64) -> Option<(usize, u64)> {
            for p in &mut self.ports {
                p.rx.queue.clear();
            }
            self.launch(src, f.to_vec(), end_ps);
            self.advance(u64::MAX);
            let (dst, p) = self.ports.iter_mut().enumerate().find(|(_, p)| !p.rx.queue.is_empty())?;
            let got = p.rx.queue.pop_front().expect("one frame");
            f.copy_from_slice(&got.data);
            Some((dst, got.arrive_ps))
        }
    }

    /// Drives `frames` (lengths) from NIC `src` through TX as fast as `ready`
    /// allows, with the receivers always ready; returns per frame (tx first
    /// beat cycle, tx last beat cycle) and per received frame (dst, last beat cycle, bytes).
    #[allow(clippy::type_complexity)]
    fn run(
        fab: &mut Fabric,
        src: usize,
        frames: &[Vec<u8>],
        cycles: u64,
    ) -> (Vec<(u64, u64)>, Vec<(usize, u64, Vec<u8>)>) {
        let mut tx_times = Vec::new();
        let mut rx = Vec::new();
        let mut partial: Vec<Vec<u8>> = vec![Vec::new(); fab.len()];
        let (mut fi, mut off, mut first) = (0, 0, 0);
        for c in 0..cycles {
            let now = c * CLOCK_PS;
            for (d, part) in partial.iter_mut().enumerate() {
                let (port, pool) = fab.port_and_pool(d);
                port.rx.begin_cycle(now);
                if let Some(b) = port.rx.beat() {
                    part.extend_from_slice(&b.data[..b.keep.count_ones() as usize]);
                    if b.last {
                        rx.push((d, c, std::mem::take(part)));
                    }
                    port.rx.fired(pool);
                }
            }
            if fi < frames.len() {
                let (port, pool) = fab.port_and_pool(src);
                if port.tx.ready(now) {
                    let f = &frames[fi];
                    let mut beat = [0u8; DATA_BYTES];
                    let n = (f.len() - off).min(DATA_BYTES);
                    beat[..n].copy_from_slice(&f[off..off + n]);
                    let keep = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
                    if off == 0 {
                        first = c;
                    }
                    let last = off + n == f.len();
                    port.tx.beat(now, &beat, keep, last, false, pool);
                    off += n;
                    if last {
                        tx_times.push((first, c));
                        fi += 1;
                        off = 0;
                    }
                }
            }
            fab.route(now);
        }
        (tx_times, rx)
    }

    fn frame(dst: usize, len: usize, fill: u8) -> Vec<u8> {
        let mut f = vec![fill; len];
        f[..6].copy_from_slice(&mac_of(dst));
        f
    }

    #[test]
    fn addresses() {
        assert_eq!(mac_of(0), [2, 0, 0, 0, 0, 1]);
        assert_eq!(mac_reg(2), 0x0200_0000_0003);
        assert_eq!(ip_of(1), [10, 0, 0, 2]);
        assert_eq!(ip_reg(0), 0x0a00_0001);
    }

    #[test]
    fn serialization_runs_at_line_rate_with_overhead() {
        let cfg = SimConfig::default();
        let mut fab = Fabric::new(2, &cfg, None);
        let frames: Vec<_> = (0..100).map(|i| frame(1, 1024, i as u8)).collect();
        let (tx, rx) = run(&mut fab, 0, &frames, 20_000);
        assert_eq!(tx.len(), 100);
        assert_eq!(rx.len(), 100);
        // 100 frames of 1024 + 24 bytes at 100 Gb/s = 8.384 us = 2096 cycles.
        let span_ps = (tx[99].1 - tx[0].0) * CLOCK_PS;
        let expect_ps = 100 * (1024 + 24) * 80;
        assert!(span_ps.abs_diff(expect_ps) < 2 * expect_ps / 100, "span {span_ps} ps, expected {expect_ps} ps");
        for (i, (d, _, bytes)) in rx.iter().enumerate() {
            assert_eq!(*d, 1);
            assert_eq!(bytes, &frames[i], "frame {i} delivered intact and in order");
        }
        assert_eq!(fab.link_stats(0).frames, 100);
        assert_eq!(fab.link_stats(0).bytes, 102_400);
    }

    #[test]
    fn one_frame_latency_is_serialization_plus_delay() {
        let cfg = SimConfig::default();
        let mut fab = Fabric::new(2, &cfg, None);
        let (tx, rx) = run(&mut fab, 1, &[frame(0, 64 * 16, 7)], 2_000);
        // The wire finishes (8 preamble + 1024 + 4 FCS) * 80 ps after the first
        // beat; the last beat reaches the core link_delay (500 ns = 125 cycles) later.
        let fcs_end_ps = tx[0].0 * CLOCK_PS + (8 + 1024 + 4) * 80;
        let arrive_cycle = (fcs_end_ps + 500_000).div_ceil(CLOCK_PS);
        assert_eq!(rx.len(), 1);
        assert_eq!(rx[0].0, 0);
        assert_eq!(rx[0].1, arrive_cycle);
    }

    #[test]
    fn switch_forwards_by_mac_and_drops_unknown() {
        let cfg = SimConfig::default();
        let mut fab = Fabric::new(4, &cfg, None);
        let mut unknown = frame(0, 100, 1);
        unknown[5] = 9;
        let frames = vec![frame(2, 100, 1), frame(3, 200, 2), unknown, frame(1, 64, 3)];
        let (tx, rx) = run(&mut fab, 0, &frames, 2_000);
        let dsts: Vec<usize> = rx.iter().map(|r| r.0).collect();
        assert_eq!(dsts, vec![2, 3, 1]);
        assert_eq!(fab.switch_stats().unknown_dst, 1);
        assert_eq!(fab.switch_stats().forwarded, 3);
        // Two hops of 500 ns plus 300 ns of switch latency after the sender's FCS.
        let fcs_end_ps = tx[0].0 * CLOCK_PS + (8 + 100 + 4) * 80;
        assert_eq!(rx[0].1, (fcs_end_ps + 1_300_000).div_ceil(CLOCK_PS));
    }

    /// A RoCE frame from NIC `src` to NIC `dst` on UDP source port `sport`.
    fn roce(src: usize, dst: usize, sport: u16, len: usize) -> Vec<u8> {
        rnic_spec::wire::Frame {
            dst_mac: mac_of(dst),
            src_mac: mac_of(src),
            src_ip: u32::from_be_bytes(ip_of(src)),
            dst_ip: u32::from_be_bytes(ip_of(dst)),
            ecn: rnic_spec::wire::IP_ECN_ECT0,
            sport,
            opcode: rnic_spec::wire::opcode::WRITE_MIDDLE,
            payload: vec![0; len],
            ..Default::default()
        }
        .encode()
    }

    fn leaf_spine(spines: usize, link_rates: Vec<(usize, usize, f64)>) -> SimConfig {
        SimConfig {
            leaf_spine: Some(crate::config::LeafSpine { leaves: 2, spines, link_rates }),
            ..SimConfig::default()
        }
    }

    #[test]
    fn leaf_spine_ecmp_spreads_ports_and_keeps_a_port_on_one_spine() {
        let mut fab = Fabric::new(2, &leaf_spine(4, vec![]), None);
        // One frame per port, 1 us apart (no queueing): 256 ports over 4 spines.
        for (i, sport) in (0xC000u16..0xC100).enumerate() {
            let mut f = roce(0, 1, sport, 1024);
            assert!(fab.forward(0, &mut f, i as u64 * 1_000_000).is_some());
        }
        let per = fab.spine_bytes();
        let total: u64 = per.iter().sum();
        for (s, b) in per.iter().enumerate() {
            assert!(*b * 8 > total && *b * 2 < total, "spine {s} carried {b} of {total} bytes ({per:?})");
        }
        // The same port takes the same spine every time.
        for sport in [0xC000u16, 0xC0FE] {
            let before = fab.spine_bytes();
            for k in 0..10u64 {
                let mut f = roce(0, 1, sport, 1024);
                fab.forward(0, &mut f, (300 + k) * 1_000_000).unwrap();
            }
            let moved: Vec<u64> = fab.spine_bytes().iter().zip(&before).map(|(a, b)| a - b).collect();
            assert_eq!(moved.iter().filter(|&&b| b > 0).count(), 1, "port {sport:#x} used one spine: {moved:?}");
        }
    }

    #[test]
    fn leaf_spine_slow_link_serializes_at_its_rate_and_same_leaf_skips_the_spines() {
        let len = 4096;
        let arrive = |rates: Vec<(usize, usize, f64)>| {
            let mut fab = Fabric::new(2, &leaf_spine(1, rates), None);
            let mut f = roce(0, 1, 0xC000, len);
            fab.forward(0, &mut f, 0).unwrap().1
        };
        let (fast, slow) = (arrive(vec![]), arrive(vec![(0, 0, 25.0)]));
        let wire =
            |gbps: f64| wire_ps((roce(0, 1, 0, len).len() + WIRE_OVERHEAD) as u64, (8.0e6 / gbps).round() as u64);
        assert_eq!(slow - fast, wire(25.0) - wire(100.0), "the uplink at 25 Gb/s");
        // NICs 0 and 1 of four share leaf 0: their frames never reach a spine.
        let mut fab = Fabric::new(4, &leaf_spine(2, vec![]), None);
        let mut f = roce(0, 1, 0xC000, 100);
        assert_eq!(fab.forward(0, &mut f, 0).map(|x| x.0), Some(1));
        assert_eq!(fab.spine_bytes(), vec![0, 0]);
        let mut f = roce(0, 3, 0xC000, 100);
        assert_eq!(fab.forward(0, &mut f, 0).map(|x| x.0), Some(3));
        assert_eq!(fab.spine_bytes().iter().sum::<u64>(), f.len() as u64);
    }

    #[test]
    fn leaf_spine_frames_meet_at_a_queue_in_arrival_order() {
        // Two spines, the uplink to spine `slow` at 10 Gb/s; an ECN threshold of one byte.
        let mut cfg = leaf_spine(2, vec![]);
        let probe = Fabric::new(2, &cfg, None);
        let port_to = |s: usize| (0xC000u16..).find(|&p| probe.spine_of(0, &roce(0, 1, p, 0)) == Some(s)).unwrap();
        let (slow, fast) = (0, 1);
        cfg.leaf_spine.as_mut().unwrap().link_rates = vec![(0, slow, 10.0)];
        cfg.switch_ecn_threshold = Some(1);
        // A frame on the fast spine alone.
        let mut alone = Fabric::new(2, &cfg, None);
        let mut b = roce(0, 1, port_to(fast), 4096);
        let fast_alone = alone.forward(0, &mut b, 400_000).unwrap().1;
        // The same frame sent 400 ns after one on the slow spine: it reaches
        // NIC 1's port first and neither waits for nor is marked by the other.
        let mut fab = Fabric::new(2, &cfg, None);
        fab.launch(0, roce(0, 1, port_to(slow), 4096), 0);
        fab.launch(0, roce(0, 1, port_to(fast), 4096), 400_000);
        fab.advance(u64::MAX);
        let got: Vec<(u16, u64, u8)> = fab.ports[1]
            .rx
            .queue
            .iter()
            .map(|f| {
                (
                    u16::from_be_bytes([f.data[off::UDP_SPORT], f.data[off::UDP_SPORT + 1]]),
                    f.arrive_ps,
                    f.data[off::IP_TOS] & 3,
                )
            })
            .collect();
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(
            got[0],
            (port_to(fast), fast_alone, rnic_spec::wire::IP_ECN_ECT0),
            "the fast frame first, as if alone: {got:?}"
        );
        assert_eq!(got[1].0, port_to(slow), "{got:?}");
    }

    #[test]
    fn leaf_spine_queue_marks_and_drops_on_a_slow_uplink() {
        let mut cfg = leaf_spine(1, vec![(0, 0, 10.0)]);
        cfg.switch_ecn_threshold = Some(20_000);
        cfg.switch_port_buffer = 100_000;
        let mut fab = Fabric::new(2, &cfg, None);
        // 100 frames of 4 KiB offered at 100 Gb/s into a 10 Gb/s uplink.
        let (mut ok, mut marked) = (0, 0);
        for i in 0..100u64 {
            let mut f = roce(0, 1, 0xC000, 4096);
            if fab.forward(0, &mut f, i * 340_000).is_some() {
                ok += 1;
                marked += (f[off::IP_TOS] & 3 == 3) as u64;
            }
        }
        let q = fab.queue_stats().into_iter().find(|(n, _)| n == "leaf 0 -> spine 0").unwrap().1;
        assert_eq!((q.frames, q.ecn_marked, q.drops), (ok, marked, 100 - ok), "{q:?}");
        assert!(marked > 0 && ok < 100, "the slow uplink marked {marked} and passed {ok} of 100");
        assert!(q.max_backlog <= 100_000, "{q:?}");
    }

    #[test]
    fn switch_output_queue_serializes_incast() {
        let cfg = SimConfig::default();
        let mut fab = Fabric::new(3, &cfg, None);
        // NICs 0 and 1 both send 10 frames of 1500 B to NIC 2 at the same time.
        let frames: Vec<_> = (0..10).map(|_| frame(2, 1500, 0)).collect();
        let (mut f0, mut f1) = (0, 0);
        let mut last_rx = 0;
        let mut got = 0;
        for c in 0..10_000u64 {
            let now = c * CLOCK_PS;
            for (src, fi) in [(0usize, &mut f0), (1, &mut f1)] {
                let (port, pool) = fab.port_and_pool(src);
                if *fi < frames.len() * 24 && port.tx.ready(now) {
                    let k = *fi % 24;
                    let last = k == 23;
                    let keep = if last { (1u64 << 28) - 1 } else { u64::MAX };
                    let mut b = [0u8; 64];
                    if k == 0 {
                        b[..6].copy_from_slice(&mac_of(2));
                    }
                    port.tx.beat(now, &b, keep, last, false, pool);
                    *fi += 1;
                }
            }
            let (port, pool) = fab.port_and_pool(2);
            port.rx.begin_cycle(now);
            if let Some(b) = port.rx.beat() {
                if b.last {
                    got += 1;
                    last_rx = c;
                }
                port.rx.fired(pool);
            }
            fab.route(now);
        }
        assert_eq!(got, 20);
        // The output port is the bottleneck: 20 x (1500 + 24) B at 100 Gb/s = 2.438 us = 610 cycles.
        assert!(last_rx >= 610 + 250, "output port serialized the incast (last at {last_rx})");
        assert!(last_rx <= 610 + 250 + 100 + 150);
    }

    #[test]
    fn faults_drop_corrupt_and_hook() {
        let cfg = SimConfig::default();
        let mut fab = Fabric::new(2, &cfg, None);
        fab.faults(0).drop_next(1);
        fab.faults(0).corrupt_next(10, 0xff);
        fab.faults(0).set_hook(Box::new(|f: &mut Vec<u8>| f[20] != 3));
        let frames: Vec<_> = (0..4).map(|i| frame(1, 64, i as u8)).collect();
        let (_, rx) = run(&mut fab, 0, &frames, 1_000);
        assert_eq!(rx.len(), 2, "frame 0 dropped, frame 3 dropped by the hook");
        assert_eq!(rx[0].2[10], 1 ^ 0xff);
        assert_eq!(rx[0].2[11], 1);
        assert_eq!(rx[1].2, frames[2]);
        let s = fab.link_stats(0);
        assert_eq!((s.frames, s.dropped, s.corrupted), (4, 2, 1));
    }

    #[test]
    fn pcap_captures_every_transmitted_frame_before_faults() {
        use pcap_file::pcap::PcapReader;
        let path = std::env::temp_dir().join(format!("rnic-sim-fabric-{}.pcap", std::process::id()));
        let cfg = SimConfig::default();
        let mut fab = Fabric::new(2, &cfg, Some(PcapSink::create(&path).unwrap()));
        fab.faults(1).drop_next(1);
        let frames: Vec<_> = (0..3).map(|i| frame(0, 100 + i * 50, i as u8)).collect();
        let (tx, rx) = run(&mut fab, 1, &frames, 1_000);
        assert_eq!(rx.len(), 2);
        fab.flush_pcap();
        let mut r = PcapReader::new(std::fs::File::open(&path).unwrap()).unwrap();
        for (i, f) in frames.iter().enumerate() {
            let p = r.next_packet().unwrap().unwrap();
            assert_eq!(&p.data[..], &f[..], "frame {i} captured as sent");
            // Stamped when its FCS left the MAC: after its last beat, within a cycle of wire time.
            let ns = p.timestamp.as_nanos() as u64;
            assert!(ns * 1000 >= tx[i].1 * CLOCK_PS && ns * 1000 <= (tx[i].1 + 2) * CLOCK_PS, "frame {i} at {ns} ns");
        }
        assert!(r.next_packet().is_none());
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn delay_reorders_and_duplicate_repeats() {
        let cfg = SimConfig::default();
        let mut fab = Fabric::new(2, &cfg, None);
        fab.faults(0).delay_next(2_000);
        fab.faults(0).duplicate_next(1);
        let frames: Vec<_> = (0..4).map(|i| frame(1, 128, i as u8)).collect();
        let (_, rx) = run(&mut fab, 0, &frames, 3_000);
        let order: Vec<u8> = rx.iter().map(|r| r.2[20]).collect();
        assert_eq!(order, vec![1, 2, 3, 0, 0], "frame 0 delayed 2 us behind the others, then its duplicate");
        let s = fab.link_stats(0);
        assert_eq!((s.delayed, s.duplicated, s.frames), (1, 1, 4));
    }

    #[test]
    fn ecn_marking_fixes_the_ip_checksum() {
        let mut f = vec![0u8; 64];
        f[12] = 0x08;
        f[14] = 0x45;
        f[15] = 0x02;
        f[16..20].copy_from_slice(&[0, 50, 0x12, 0x34]);
        f[22] = 64;
        f[23] = 17;
        f[26..34].copy_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2]);
        assert!(mark_ce(&mut f));
        assert_eq!(f[15] & 3, 3);
        let sum: u32 = f[14..34].chunks(2).map(|c| u16::from_be_bytes([c[0], c[1]]) as u32).sum();
        assert_eq!((sum & 0xffff) + (sum >> 16), 0xffff, "checksum verifies");
        f[15] = 0;
        assert!(!mark_ce(&mut f), "not ECN-capable");
    }
}
