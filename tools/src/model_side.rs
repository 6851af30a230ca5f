//! The model side of a fabric scenario: the same incast or leaf-spine run
//! as the cosimulated NICs ([`crate::scenario`]), played by `rnic-netsim`'s
//! model hosts (the transport state machines of `rnic-model`) on a netsim
//! fabric configured to match the cosimulated one (`rnic_sim::fabric`) as
//! closely as netsim allows. Every place it cannot match is spelled out in
//! [`ModelRun::notes`].
//!
//! Mapping of the cosimulated fabric onto netsim:
//!
//! * wire bytes: netsim serializes `payload + hdr_bytes` and adds nothing
//!   of its own, so `hdr_bytes` is the frame's header and ICRC plus the
//!   Ethernet overhead (128 + 4 + 24 = 156) and an ACK is 132 + 24 = 156;
//!   queues, buffers and ECN thresholds then count bytes of wire time, as
//!   the cosimulated switch's backlog does;
//! * latency: netsim has one latency per link (after serialization) and no
//!   switch latency, so a host link carries `link_delay + switch_latency / 2`
//!   and a leaf-spine link `link_delay + switch_latency`: every path's
//!   unloaded sum of delays and switch latencies is the cosimulated one;
//! * switch queues: tail drop at `switch_buffer` bytes, ECN with
//!   Kmin = Kmax = the threshold and marking probability 1, no PFC;
//! * transport: STrack with `net_base_rtt = base_rtt_ns`, the window as the
//!   NICs' (`cc_pct` of `link_gbps × base_rtt_ns`), `max_paths` entropies and a SACK for
//!   every data packet (go-back-N ACKs every packet for RoCEv2); the NIC's
//!   retransmission timeout.

use rnic_netsim::sim::{tier1_port_ids, Report, Sim, SimConfig, SwitchConfig, Transport};
use rnic_netsim::time::{ser_ps, Ps, PS_PER_NS, PS_PER_US};
use rnic_netsim::topo::{FabricSpec, Topology};
use rnic_netsim::traffic::{FlowSpec, Workload};
use rnic_spec::wire::{frame_len, WIRE_OVERHEAD};

/// Wire bytes of an ACK (and of netsim's probes): a 132-byte frame plus the
/// Ethernet overhead.
const CTRL_WIRE: u32 = frame_len(0) as u32 + WIRE_OVERHEAD as u32;

/// The fabric and the flows of a scenario.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelTopo {
    /// `fan_in` senders (hosts `0..fan_in`) and one receiver (host
    /// `fan_in`) on one switch; every sender writes to the receiver at once.
    Incast {
        /// Senders.
        fan_in: u32,
    },
    /// Two leaves joined by `spines` spines; host 0 on leaf 0 writes to
    /// host 1 on leaf 1, and the link between leaf 0 and spine `slow_spine`
    /// runs at `slow_gbps` in both directions.
    LeafSpine {
        /// Spines.
        spines: u32,
        /// The spine whose link to leaf 0 is slow.
        slow_spine: u32,
        /// That link's rate, Gb/s (netsim runs links at whole Gb/s).
        slow_gbps: f64,
    },
}

/// Transport of every flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelTransport {
    /// STrack: its window, adaptive spray over `max_paths` entropies, SACK
    /// and selective retransmission (the RTL's `strack_cc` with `max_paths`).
    Strack,
    /// STrack's window and reliability with round-robin (oblivious) spray
    /// (the RTL's `spray_oblivious`).
    StrackOblivious,
    /// RoCEv2: DCQCN rate control and go-back-N on one path.
    Roce,
    /// SRNIC: DCTCP window and selective repeat on one path.
    Srnic,
}

impl ModelTransport {
    fn netsim(self) -> Transport {
        match self {
            ModelTransport::Strack => Transport::Strack,
            ModelTransport::StrackOblivious => Transport::StrackOblivious,
            ModelTransport::Roce => Transport::Roce,
            ModelTransport::Srnic => Transport::Srnic,
        }
    }
}

/// A scenario in the cosimulated fabric's terms.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelScenario {
    /// Fabric and flows.
    pub topo: ModelTopo,
    /// Payload bytes each flow writes.
    pub bytes_per_flow: u64,
    /// Rate of every link (but the slow one), Gb/s.
    pub link_gbps: u32,
    /// One-way delay of every link, ns.
    pub link_delay_ns: u32,
    /// Forwarding latency of every switch, ns.
    pub switch_latency_ns: u32,
    /// Payload bytes per packet.
    pub mtu: u32,
    /// Output queue of every switch port, bytes (tail drop above it).
    pub switch_buffer: u64,
    /// ECN CE on data above this many queued bytes (None: never mark).
    pub ecn_threshold: Option<u64>,
    /// STrack's `net_base_rtt` (also its target queueing delay), ns.
    pub base_rtt_ns: u32,
    /// Entropies each STrack flow sprays over (0 and 1: one path).
    pub max_paths: u16,
    /// Retransmission timeout of every sender, ns (the NIC's `REG_RTO`).
    pub rto_ns: u64,
    /// The largest and the first window, % of the BDP (`rnic::CcNetwork`'s
    /// `max_cwnd_pct`, `init_cwnd_pct`; SRNIC's DCTCP starts at the largest).
    pub cc_pct: (u32, u32),
    /// STrack's out-of-order loss threshold, packets (None: the paper's
    /// `max(window in packets, 5)`; netsim's `SimConfig::ooo_threshold`).
    pub ooo_threshold: Option<u32>,
    /// Transport of every flow.
    pub transport: ModelTransport,
    /// Seed (ECMP salts, the flows' UDP source ports).
    pub seed: u64,
    /// Width of a bin of [`ModelRun::queue_series`], ns.
    pub bin_ns: u64,
    /// With [`ModelTopo::LeafSpine`]: slow the link to the spine that
    /// this many of the flow's `max_paths` entropies take in netsim (the
    /// cosimulated fabric's count on its slow spine), so both fabrics put
    /// the same share of the entropies on their slow link whatever their
    /// ECMP hashes do; the spine with the nearest count, the lowest on a
    /// tie. None: `slow_spine` as given.
    pub slow_entropies: Option<u32>,
}

impl ModelScenario {
    /// `topo` with `bytes_per_flow` per flow on the links and switches of the
    /// cosimulated fabric `fabric` (its rate rounded to whole Gb/s), MTU 4096,
    /// STrack with the library's default base RTT on one path, the library's
    /// default retransmission timeout, seed 1 and 2 µs bins
    /// (`scenario::IncastConfig`'s 500 cycles).
    pub fn new(topo: ModelTopo, bytes_per_flow: u64, fabric: &rnic_sim::SimConfig) -> Self {
        ModelScenario {
            topo,
            bytes_per_flow,
            link_gbps: fabric.link_gbps.round() as u32,
            link_delay_ns: fabric.link_delay_ns as u32,
            switch_latency_ns: fabric.switch_latency_ns as u32,
            mtu: 4096,
            switch_buffer: fabric.switch_port_buffer,
            ecn_threshold: fabric.switch_ecn_threshold,
            base_rtt_ns: rnic::CcNetwork::default().base_rtt_ns,
            max_paths: 1,
            rto_ns: rnic::DEFAULT_RTO_CYCLES * rnic_spec::params::CLOCK_PS / 1_000,
            cc_pct: (rnic::CcNetwork::default().max_cwnd_pct, rnic::CcNetwork::default().init_cwnd_pct),
            ooo_threshold: None,
            transport: ModelTransport::Strack,
            seed: 1,
            bin_ns: 2_000,
            slow_entropies: None,
        }
    }
}

/// What the model hosts did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelRun {
    /// Per flow (sender order), its payload over its completion time, Gb/s.
    pub flow_gbps: Vec<f64>,
    /// Per flow, from its start (every flow starts at 0) to the sender's last
    /// ACK, ns.
    pub flow_fct_ns: Vec<u64>,
    /// All flows' payload over the time the last one took, Gb/s.
    pub aggregate_gbps: f64,
    /// The watched queue's deepest backlog, bytes of wire time (the
    /// cosimulated `QueueStats::max_backlog`).
    pub max_queue_bytes: u64,
    /// The cosimulated fabric's name of the watched queue: the bottleneck,
    /// `port N` (to the receiver) or `leaf 0 -> spine S` (the slow uplink).
    pub queue: String,
    /// Per bin, (end of the bin in µs, the most bytes of wire time ahead of
    /// a data packet arriving at the watched queue in the bin); 0 in a bin
    /// without arrivals.
    pub queue_series: Vec<(f64, f64)>,
    /// Frames every switch queue dropped.
    pub drops: u64,
    /// Frames every switch queue marked CE.
    pub ecn_marks: u64,
    /// Data packets sent again.
    pub retransmits: u64,
    /// Leaf-spine: frame bytes (no preamble or gap) each spine received
    /// from the leaves, both directions, as `rnic_sim::Fabric::spine_bytes`
    /// counts them. None for an incast.
    pub per_path_bytes: Option<Vec<u64>>,
    /// Every way the model's network or hosts differ from the cosimulated ones.
    pub notes: Vec<String>,
}

/// `s` with its slow spine chosen by [`ModelScenario::slow_entropies`]:
/// netsim's entropy-to-spine map is read from a probe simulation of the
/// same fabric (ECMP does not depend on link rates).
/// Also returns a note of the match.
fn matched_slow_spine(s: &ModelScenario) -> Result<(ModelScenario, Option<String>), String> {
    let (ModelTopo::LeafSpine { spines, slow_gbps, .. }, Some(want)) = (s.topo.clone(), s.slow_entropies) else {
        return Ok((s.clone(), None));
    };
    let probe = ModelScenario { topo: ModelTopo::LeafSpine { spines, slow_spine: 0, slow_gbps: 100.0 }, ..s.clone() };
    let fab = Fabric::build(&probe)?;
    let ports = fab.spine_ports.as_ref().ok_or("a leaf-spine fabric without spine links")?;
    let cfg = SimConfig::paper_defaults(s.transport.netsim(), &fab.topo, s.mtu, s.seed);
    let sim = Sim::new(fab.topo.clone(), cfg, &fab.workload)?;
    let leaf0 = fab.topo.tors[0];
    let mut count = vec![0u32; spines as usize];
    for e in 0..s.max_paths.max(1) {
        let port = sim.egress_of(leaf0, 0, e).ok_or("the flow has no path from leaf 0")?;
        if let Some(sp) = ports.iter().position(|p| p[0] == port) {
            count[sp] += 1;
        }
    }
    let slow_spine = (0..spines).min_by_key(|&sp| count[sp as usize].abs_diff(want)).unwrap_or(0);
    let note = format!(
        "slow link matched by entropies: netsim's leaf 0 -> spine {slow_spine} is slow, which {} of the flow's {} \
         entropies take (netsim's spines take {count:?}); the cosimulated slow spine takes {want}",
        count[slow_spine as usize],
        s.max_paths.max(1)
    );
    Ok((ModelScenario { topo: ModelTopo::LeafSpine { spines, slow_spine, slow_gbps }, ..s.clone() }, Some(note)))
}

/// Runs `s` with netsim's model hosts. Fails on a scenario netsim cannot
/// build or if a flow has not completed by a deadline long enough for every
/// flow at a tenth of the line rate, one after the other.
pub fn run_model(s: &ModelScenario) -> Result<ModelRun, String> {
    check(s)?;
    let (matched, match_note) = matched_slow_spine(s)?;
    let s = &matched;
    let fabric = Fabric::build(s)?;
    let n_flows = fabric.workload.flows.len() as u64;
    let mut cfg = SimConfig::paper_defaults(s.transport.netsim(), &fabric.topo, s.mtu, s.seed);
    cfg.hdr_bytes = CTRL_WIRE;
    cfg.ctrl_bytes = CTRL_WIRE;
    cfg.switch = SwitchConfig {
        buffer_bytes: s.switch_buffer,
        kmin: s.ecn_threshold.unwrap_or(u64::MAX),
        kmax: s.ecn_threshold.unwrap_or(u64::MAX),
        pmax_ppm: if s.ecn_threshold.is_some() { 1_000_000 } else { 0 },
        pfc: None,
    };
    cfg.base_rtt_ns = s.base_rtt_ns;
    cfg.host_gbps = s.link_gbps;
    cfg.ack_coalesce_bytes = 1;
    cfg.gbn_ack_every = 1;
    cfg.max_cwnd_pct = s.cc_pct.0;
    cfg.init_cwnd_pct = Some(s.cc_pct.1).filter(|_| s.transport != ModelTransport::Srnic);
    cfg.max_paths = s.max_paths.max(1);
    cfg.ooo_threshold = s.ooo_threshold;
    cfg.rto_ns = s.rto_ns;
    cfg.series_bin_ps = s.bin_ns * PS_PER_NS;
    cfg.tput_bin_ps = cfg.series_bin_ps;
    cfg.tput_flows = 0;
    cfg.stop_at_ps = 1_000 * PS_PER_US + n_flows * s.bytes_per_flow * 80 * PS_PER_NS / s.link_gbps as u64;
    let stop = cfg.stop_at_ps;
    let mut notes = notes(s, &fabric, &cfg);
    notes.extend(match_note);
    let r = Sim::new(fabric.topo.clone(), cfg, &fabric.workload)?.watch_port(fabric.watch).run();
    let done = r.completed();
    if done < r.flows.len() {
        return Err(format!("{done} of {} flows completed by {} us", r.flows.len(), stop / PS_PER_US));
    }
    let fct_ps: Vec<Ps> = r.flows.iter().filter_map(|f| f.fct()).collect();
    let gbps = |bytes: u64, ps: Ps| bytes as f64 * 8.0 / ps.max(1) as f64 * 1e3;
    let last_end = r.flows.iter().map(|f| f.end).max().unwrap_or(0);
    let total: u64 = r.flows.iter().map(|f| f.bytes).sum();
    let bin_us = s.bin_ns as f64 / 1e3;
    let mut backlog = r.watched_backlog.clone();
    backlog.resize(r.end_ps.div_ceil(s.bin_ns * PS_PER_NS).max(backlog.len() as u64) as usize, 0);
    Ok(ModelRun {
        flow_gbps: r.flows.iter().zip(&fct_ps).map(|(f, &t)| gbps(f.bytes, t)).collect(),
        flow_fct_ns: fct_ps.iter().map(|&t| t / PS_PER_NS).collect(),
        aggregate_gbps: gbps(total, last_end),
        max_queue_bytes: r.watched_backlog.iter().copied().max().unwrap_or(0),
        queue: fabric.queue_name.clone(),
        queue_series: backlog.iter().enumerate().map(|(b, &q)| ((b + 1) as f64 * bin_us, q as f64)).collect(),
        drops: r.drops,
        ecn_marks: r.ecn_marks,
        retransmits: r.retransmits(),
        per_path_bytes: fabric.spine_bytes(&r),
        notes,
    })
}

fn check(s: &ModelScenario) -> Result<(), String> {
    if [s.bytes_per_flow, s.mtu as u64, s.link_gbps as u64, s.bin_ns, s.base_rtt_ns as u64, s.rto_ns].contains(&0) {
        return Err("bytes per flow, MTU, link rate, bin, base RTT and RTO must be positive".into());
    }
    if s.max_paths as usize > rnic_spec::params::MAX_PATHS {
        return Err(format!("max_paths {} above {}", s.max_paths, rnic_spec::params::MAX_PATHS));
    }
    match s.topo {
        ModelTopo::Incast { fan_in: 0 } => Err("an incast needs at least one sender".into()),
        ModelTopo::LeafSpine { spines, slow_spine, .. } if spines == 0 || slow_spine >= spines => {
            Err(format!("slow spine {slow_spine} of {spines} spines"))
        }
        ModelTopo::LeafSpine { slow_gbps, .. } if slow_gbps.is_nan() || slow_gbps.round() < 1.0 => {
            Err(format!("slow link at {slow_gbps} Gb/s: netsim runs links at 1 Gb/s or more"))
        }
        _ => Ok(()),
    }
}

/// A built netsim fabric with its flows and the queue watched.
struct Fabric {
    topo: Topology,
    workload: Workload,
    /// Netsim port id of the bottleneck queue.
    watch: u32,
    queue_name: String,
    /// Leaf-spine: per spine, the ports from both leaves to it.
    spine_ports: Option<Vec<[u32; 2]>>,
}

impl Fabric {
    fn build(s: &ModelScenario) -> Result<Fabric, String> {
        let (d, sw) = (s.link_delay_ns, s.switch_latency_ns);
        let spec = |hosts: u32, hosts_per_tor: u32, tor_up: u32| FabricSpec {
            hosts,
            tiers: 2,
            hosts_per_tor,
            tor_up,
            tors_per_pod: hosts / hosts_per_tor,
            agg_up: 0,
            gbps: [s.link_gbps; 3],
            latency_ns: [d + sw / 2, d + sw, d + sw],
        };
        let flow = |src: u32, dst: u32| FlowSpec { src, dst, bytes: s.bytes_per_flow, start: 0, deps: vec![] };
        let mut fab = match s.topo {
            ModelTopo::Incast { fan_in } => {
                let topo = Topology::build(&spec(fan_in + 1, fan_in + 1, 0))?;
                let watch = topo.host_down[fan_in as usize];
                Fabric {
                    workload: Workload { nodes: fan_in + 1, flows: (0..fan_in).map(|i| flow(i, fan_in)).collect() },
                    watch,
                    queue_name: format!("port {fan_in}"),
                    spine_ports: None,
                    topo,
                }
            }
            ModelTopo::LeafSpine { spines, slow_spine, slow_gbps } => {
                let mut topo = Topology::build(&spec(2, 1, spines))?;
                let spine_node = |sp: u32| topo.n_hosts + topo.tors.len() as u32 + sp;
                let up = |topo: &Topology, leaf: u32, sp: u32| {
                    tier1_port_ids(topo, leaf).into_iter().find(|&p| topo.ports[p as usize].to == spine_node(sp))
                };
                let spine_ports = (0..spines)
                    .map(|sp| Some([up(&topo, 0, sp)?, up(&topo, 1, sp)?]))
                    .collect::<Option<Vec<_>>>()
                    .ok_or("netsim's leaf-spine lacks a leaf-spine link")?;
                let slow = spine_ports[slow_spine as usize][0];
                let back = topo.ports[slow as usize].reverse;
                for p in [slow, back] {
                    topo.ports[p as usize].gbps = slow_gbps.round() as u32;
                }
                Fabric {
                    workload: Workload { nodes: 2, flows: vec![flow(0, 1)] },
                    watch: slow,
                    queue_name: format!("leaf 0 -> spine {slow_spine}"),
                    spine_ports: Some(spine_ports),
                    topo,
                }
            }
        };
        // Exact to the picosecond where `switch_latency / 2` is not a whole ns.
        for p in fab.topo.ports.iter_mut() {
            p.latency_ps = d as u64 * PS_PER_NS + sw as u64 * if p.tier == 0 { PS_PER_NS / 2 } else { PS_PER_NS };
        }
        Ok(fab)
    }

    /// Frame bytes each spine received from the leaves.
    fn spine_bytes(&self, r: &Report) -> Option<Vec<u64>> {
        let frame = |p: u32| r.port_tx_bytes[p as usize] - r.port_tx_frames[p as usize] * WIRE_OVERHEAD as u64;
        Some(self.spine_ports.as_ref()?.iter().map(|ps| ps.iter().map(|&p| frame(p)).sum()).collect())
    }

    /// Rates of the links of a path from host `src` to host `dst`, through
    /// the spine of `spine` if they are on different leaves.
    fn path_rates(&self, src: u32, dst: u32, spine: u32) -> Vec<u32> {
        let t = &self.topo;
        let rate = |p: u32| t.ports[p as usize].gbps;
        let (up, down) = (t.host_up[src as usize], t.host_down[dst as usize]);
        match &self.spine_ports {
            Some(sp) if t.host_tor[src as usize] != t.host_tor[dst as usize] => {
                let leaf_up = |h: u32| sp[spine as usize][t.host_tor[h as usize] as usize];
                let spine_down = t.ports[leaf_up(dst) as usize].reverse;
                vec![rate(up), rate(leaf_up(src)), rate(spine_down), rate(down)]
            }
            _ => vec![rate(up), rate(down)],
        }
    }
}

/// Unloaded one-way time of a `wire`-byte frame over links of `rates`:
/// netsim stores and forwards (a whole serialization per link); the
/// cosimulated switch cuts through (the last byte leaves a switch its
/// latency after it arrived, or later by the difference in serialization
/// on a slower output). Both pay every link's delay and switch's latency.
fn one_way_ps(wire: u64, rates: &[u32], delay_ps: Ps, switch_ps: Ps) -> (Ps, Ps) {
    let fixed = rates.len() as u64 * delay_ps + (rates.len() as u64 - 1) * switch_ps;
    let ser: Vec<Ps> = rates.iter().map(|&g| ser_ps(wire, g)).collect();
    let netsim = ser.iter().sum::<Ps>() + fixed;
    let cosim = ser[0] + ser.windows(2).map(|w| w[1].saturating_sub(w[0])).sum::<Ps>() + fixed;
    (netsim, cosim)
}

fn notes(s: &ModelScenario, fab: &Fabric, cfg: &SimConfig) -> Vec<String> {
    let mut n = Vec::new();
    let (delay, sw) = (s.link_delay_ns as u64 * PS_PER_NS, s.switch_latency_ns as u64 * PS_PER_NS);
    let data_wire = (s.mtu + CTRL_WIRE) as u64;
    let rtt = |spine: u32| {
        let (src, dst) = (fab.workload.flows[0].src, fab.workload.flows[0].dst);
        let (d, a) = (fab.path_rates(src, dst, spine), fab.path_rates(dst, src, spine));
        let (dm, dc) = one_way_ps(data_wire, &d, delay, sw);
        let (am, ac) = one_way_ps(CTRL_WIRE as u64, &a, delay, sw);
        ((dm + am) / PS_PER_NS, (dc + ac) / PS_PER_NS)
    };
    let fast_spine = match s.topo {
        ModelTopo::LeafSpine { spines, slow_spine, .. } if spines > 1 => (slow_spine + 1) % spines,
        _ => 0,
    };
    let (model_rtt, cosim_rtt) = rtt(fast_spine);
    n.push(format!(
        "store-and-forward switches: netsim serializes every frame again at each hop, the cosimulated switch cuts \
         through; the unloaded fabric RTT of a {data_wire}-byte data frame and its ACK (no NIC time) is {model_rtt} ns \
         in the model against {cosim_rtt} ns cosimulated (the NICs' base RTT is {} ns)",
        s.base_rtt_ns
    ));
    n.push(format!(
        "no switch latency in netsim: each host link carries {:.1} ns and each leaf-spine link {} ns (link delay \
         plus half a switch's latency per end), so unloaded paths sum to the cosimulated delays; but the model adds \
         the latency after queueing, where the cosimulated switch overlaps it with the queue (up to {} ns per switch \
         more in the model under load)",
        s.link_delay_ns as f64 + s.switch_latency_ns as f64 / 2.0,
        s.link_delay_ns + s.switch_latency_ns,
        s.switch_latency_ns
    ));
    n.push(format!(
        "netsim adds no wire overhead of its own: its header bytes are set to {} (header 128 + ICRC 4 + preamble, FCS \
         and gap {}) and its ACKs and probes to {CTRL_WIRE} bytes, so its queues count wire time like the cosimulated \
         backlog; the cosimulated drop test adds the arriving frame without its {} bytes of overhead",
        cfg.hdr_bytes, WIRE_OVERHEAD, WIRE_OVERHEAD
    ));
    n.push(
        "tail drop: netsim compares the queued data bytes (without the frame on the wire) plus the arriving one \
         with the buffer, the cosimulated switch includes the rest of the frame on the wire (up to one frame apart)"
            .into(),
    );
    if let Some(k) = s.ecn_threshold {
        n.push(format!(
            "ECN: netsim marks a data packet when it leaves the queue with more than {k} bytes behind it, the \
             cosimulated switch when it arrives with more than {k} bytes ahead of it: a model mark tells of the \
             queue as the packet left it, a cosimulated one of the queue a queueing delay earlier; netsim marks data and probes only, the cosimulated switch \
             any ECT frame (the RTL sends ACKs as ECT too)"
        ));
    }
    n.push(
        "ACKs (and CNPs) have a strict-priority class in netsim's switch ports; the cosimulated output queue is one \
         FIFO (here ACKs and data share no switch queue)"
            .into(),
    );
    n.push(format!(
        "model hosts: every flow is one message posted at t = 0 and sent at line rate with no PCIe, DMA, doorbell or \
         NIC pipeline time, and its FCT ends at the sender's last ACK; the cosimulated flows are WRs posted by the \
         host and end at their last completion; its queue series has {} ns bins",
        s.bin_ns
    ));
    if let ModelTopo::LeafSpine { slow_gbps, .. } = s.topo {
        n.push(format!(
            "ECMP: netsim hashes (source, destination, UDP source port) with a per-switch salt and gives entropy e the \
             port 0xC000 | (seeded base + e); the cosimulated leaves hash the IPv4/UDP five-tuple with their own salt \
             and the RTL puts the entropy in the port's low byte, so which entropies share a spine differs \
             (seed {})",
            s.seed
        ));
        if slow_gbps.fract() != 0.0 {
            n.push(format!(
                "the slow link runs at {} Gb/s, not {slow_gbps}: netsim's link rates are whole Gb/s",
                slow_gbps.round()
            ));
        }
    }
    match s.transport {
        ModelTransport::Strack | ModelTransport::StrackOblivious | ModelTransport::Srnic => n.push(format!(
            "reliability: netsim's senders keep up to 256 packets past the oldest unacknowledged one, call the \
             holes below lost once {} packets arrived past them, and probe when no ACK came for {} ns (3 base \
             RTTs); the NICs' slow path calls holes lost at max(largest window in packets, 5) (or once overtaken \
             by {} packets) and the NIC reports a probe after 3 base RTTs; the RTL's responder places packets up \
             to {} PSNs ahead and a sprayed QP sends at most {} PSNs past the latest ACK's; both time out after {} \
             us",
            s.ooo_threshold.map_or("max(window in packets, 5)".to_string(), |n| n.to_string()),
            3 * s.base_rtt_ns,
            rnic::SPRAY_REORDER_PKTS,
            rnic_spec::params::SR_WINDOW,
            rnic_spec::params::SPRAY_WINDOW_PKTS,
            cfg.rto_ns / 1_000
        )),
        ModelTransport::Roce => n.push(format!(
            "RoCEv2: the RTL has no DCQCN, so this is netsim's baseline (DCQCN at {} Gb/s, go-back-N ACKing every \
             packet, a {} us timeout) without PFC, which the cosimulated fabric lacks; it uses one path whatever \
             max_paths says",
            s.link_gbps,
            cfg.rto_ns / 1_000
        )),
    }
    if s.transport == ModelTransport::Srnic {
        n.push(
            "SRNIC: the model's DCTCP is the RTL's (--dctcp), but its selective repeat calls a packet lost at the \
             first out-of-order SACK, where the RTL's loss recovery is the library's (the NIC reports NAKs and \
             timeouts)"
                .into(),
        );
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(topo: ModelTopo, bytes: u64) -> ModelScenario {
        let fabric = rnic_sim::SimConfig { switch_ecn_threshold: Some(32 << 10), ..Default::default() };
        ModelScenario::new(topo, bytes, &fabric)
    }

    #[test]
    fn strack_incast_completes_near_line_rate_within_the_buffer() {
        let s = scenario(ModelTopo::Incast { fan_in: 8 }, 256 << 10);
        let r = run_model(&s).unwrap();
        println!(
            "8:1 incast, 256 KiB each: {:.1} Gb/s, max queue {} B, drops {}, marks {}, FCT {:?} ns",
            r.aggregate_gbps, r.max_queue_bytes, r.drops, r.ecn_marks, r.flow_fct_ns
        );
        assert_eq!(r.flow_fct_ns.len(), 8, "every flow completes");
        assert!(r.aggregate_gbps > 0.8 * s.link_gbps as f64, "aggregate {:.1} Gb/s", r.aggregate_gbps);
        assert!(r.max_queue_bytes < s.switch_buffer, "queue {} B", r.max_queue_bytes);
        assert!(r.max_queue_bytes > s.ecn_threshold.unwrap(), "eight senders at line rate must queue");
        assert!(r.ecn_marks > 0);
        let peak = r.queue_series.iter().map(|q| q.1).fold(0.0, f64::max);
        assert_eq!(peak as u64, r.max_queue_bytes);
        assert!(r.per_path_bytes.is_none());
        assert!(!r.notes.is_empty());
        for n in &r.notes {
            println!("  note: {n}");
        }
    }

    #[test]
    fn roce_incast_without_pfc_recovers_its_drops() {
        let s =
            ModelScenario { transport: ModelTransport::Roce, ..scenario(ModelTopo::Incast { fan_in: 8 }, 256 << 10) };
        let r = run_model(&s).unwrap();
        println!(
            "8:1 RoCEv2 incast, 256 KiB each: {:.1} Gb/s, max queue {} B, drops {}, marks {}, retransmits {}",
            r.aggregate_gbps, r.max_queue_bytes, r.drops, r.ecn_marks, r.retransmits
        );
        assert_eq!(r.flow_fct_ns.len(), 8);
        assert!(r.drops > 0, "eight senders starting at line rate overflow a 1 MiB queue without PFC");
        assert!(r.retransmits >= r.drops);
        assert!(r.max_queue_bytes <= s.switch_buffer + (s.mtu + CTRL_WIRE) as u64);
        assert!(r.notes.iter().any(|n| n.starts_with("RoCEv2")));
    }

    /// A 16-path STrack flow (and the same with oblivious spray) of 8 MiB
    /// from leaf 0 to leaf 1 over 4 spines, the uplink to spine 0 at
    /// `slow_gbps`, with a window that covers the path (8 µs): the run and
    /// the fraction of the spines' bytes spine 0 carried.
    fn sprayed(slow_gbps: f64, transport: ModelTransport) -> (ModelRun, f64) {
        let topo = ModelTopo::LeafSpine { spines: 4, slow_spine: 0, slow_gbps };
        let s = ModelScenario { max_paths: 16, base_rtt_ns: 8_000, transport, ..scenario(topo, 8 << 20) };
        let r = run_model(&s).unwrap();
        let paths = r.per_path_bytes.clone().unwrap();
        let share = paths[0] as f64 / paths.iter().sum::<u64>() as f64;
        println!(
            "leaf-spine, spine 0 at {slow_gbps} Gb/s, {transport:?} over 16 paths, 8 MiB: {:.1} Gb/s, spine bytes \
             {paths:?} (spine 0: {share:.3}), max queue {} B, drops {}, marks {}, retransmits {}",
            r.aggregate_gbps, r.max_queue_bytes, r.drops, r.ecn_marks, r.retransmits
        );
        assert_eq!(r.drops, 0, "{transport:?} at {slow_gbps} Gb/s");
        (r, share)
    }

    #[test]
    fn strack_spray_runs_a_quarter_rate_spine_at_its_rate_only() {
        // At 25 Gb/s the slow spine can take a quarter of the line rate: STrack
        // fills it to about its rate and moves the rest of its entropies'
        // traffic to the other spines, where oblivious spray keeps sending
        // its entropies' share through it and slows the whole flow down.
        let (a, share) = sprayed(25.0, ModelTransport::Strack);
        let (o, oblivious) = sprayed(25.0, ModelTransport::StrackOblivious);
        let carried = a.per_path_bytes.as_ref().unwrap()[0] as f64;
        let capacity = 25e9 / 8.0 * a.flow_fct_ns[0] as f64 / 1e9;
        assert!(carried < 1.1 * capacity, "spine 0 carried {carried} bytes, its link {capacity} in the flow's time");
        assert!(share < 0.9 * oblivious, "spine 0's share {share:.3} under STrack, {oblivious:.3} oblivious");
        assert!(a.aggregate_gbps > o.aggregate_gbps, "{:.1} against {:.1} Gb/s", a.aggregate_gbps, o.aggregate_gbps);
        assert!(a.notes.iter().any(|n| n.starts_with("ECMP")));
    }

    #[test]
    fn strack_spray_avoids_a_much_slower_spine() {
        let (a, share) = sprayed(5.0, ModelTransport::Strack);
        let (o, oblivious) = sprayed(5.0, ModelTransport::StrackOblivious);
        assert!(share < 0.5 / 4.0, "spine 0 carried {share:.3} of the bytes, a quarter would be its share");
        assert!(share < 0.5 * oblivious, "spine 0's share {share:.3} under STrack, {oblivious:.3} oblivious");
        assert!(a.aggregate_gbps > 0.8 * 100.0, "{:.1} Gb/s", a.aggregate_gbps);
        assert!(
            a.aggregate_gbps > 2.0 * o.aggregate_gbps,
            "{:.1} against {:.1} Gb/s",
            a.aggregate_gbps,
            o.aggregate_gbps
        );
    }

    #[test]
    fn oblivious_spray_over_a_slow_spine_resends_what_the_paper_threshold_calls_lost() {
        // rnic-perf's degraded fabric: 16 entropies, a 20 Gb/s uplink taking 5 of them, 64 KiB queues marking
        // above 16 KiB. The slow path's reordering crosses the paper's threshold (the window in packets): the
        // resends load the slow uplink until it drops. A threshold above the reordering resends nothing.
        let fabric = rnic_sim::SimConfig {
            switch_ecn_threshold: Some(16 << 10),
            switch_port_buffer: 64 << 10,
            ..Default::default()
        };
        let topo = ModelTopo::LeafSpine { spines: 4, slow_spine: 3, slow_gbps: 20.0 };
        let s = ModelScenario {
            max_paths: 16,
            base_rtt_ns: 8_000,
            transport: ModelTransport::StrackOblivious,
            slow_entropies: Some(5),
            ..ModelScenario::new(topo, 8 << 20, &fabric)
        };
        let paper = run_model(&s).unwrap();
        let fixed = run_model(&ModelScenario { ooo_threshold: Some(48), ..s.clone() }).unwrap();
        println!(
            "oblivious, 8 MiB: paper threshold {:.1} Gb/s, {} resent, {} dropped; threshold 48: {:.1} Gb/s, {} resent, {} dropped",
            paper.aggregate_gbps, paper.retransmits, paper.drops, fixed.aggregate_gbps, fixed.retransmits, fixed.drops
        );
        assert!(paper.retransmits > paper.drops, "{paper:?}");
        assert_eq!((fixed.retransmits, fixed.drops), (0, 0));
        assert!(fixed.aggregate_gbps > paper.aggregate_gbps);
        assert!(fixed.notes.iter().any(|n| n.contains("lost once 48 packets arrived")), "{:?}", fixed.notes);
    }

    #[test]
    fn the_slow_link_is_matched_by_entropy_count() {
        let topo = || ModelTopo::LeafSpine { spines: 4, slow_spine: 0, slow_gbps: 20.0 };
        let mut s = ModelScenario { max_paths: 16, ..scenario(topo(), 1 << 20) };
        assert_eq!(matched_slow_spine(&s).unwrap(), (s.clone(), None), "no count: the slow spine as given");
        for want in 0..=16u32 {
            s.slow_entropies = Some(want);
            let (m, note) = matched_slow_spine(&s).unwrap();
            let ModelTopo::LeafSpine { slow_spine, slow_gbps, .. } = m.topo else { panic!("{m:?}") };
            assert_eq!(slow_gbps, 20.0);
            // netsim's per-spine counts, as the note lists them.
            let note = note.expect("a matched run is noted");
            let list = note.split("spines take [").nth(1).and_then(|r| r.split(']').next()).expect("counts");
            let count: Vec<u32> = list.split(", ").map(|c| c.parse().unwrap()).collect();
            assert_eq!(count.iter().sum::<u32>(), 16, "{note}");
            let best = count.iter().map(|c| c.abs_diff(want)).min().unwrap();
            let first = count.iter().position(|c| c.abs_diff(want) == best).unwrap() as u32;
            assert_eq!(slow_spine, first, "asked {want}: {note}");
            assert!(note.contains(&format!("the cosimulated slow spine takes {want}")), "{note}");
        }
    }

    #[test]
    fn latencies_sum_to_the_cosimulated_paths() {
        let s = scenario(ModelTopo::LeafSpine { spines: 2, slow_spine: 1, slow_gbps: 100.0 }, 4096);
        let f = Fabric::build(&s).unwrap();
        let hops = |src: u32, dst: u32| -> Ps {
            let t = &f.topo;
            let up = t.host_up[src as usize];
            let down = t.host_down[dst as usize];
            let spine = f.spine_ports.as_ref().unwrap()[0];
            let back = t.ports[spine[1] as usize].reverse;
            [up, spine[0], back, down].iter().map(|&p| t.ports[p as usize].latency_ps).sum()
        };
        assert_eq!(hops(0, 1), (4 * 500 + 3 * 300) * PS_PER_NS);
        let i = Fabric::build(&scenario(ModelTopo::Incast { fan_in: 3 }, 4096)).unwrap();
        let one = |p: u32| i.topo.ports[p as usize].latency_ps;
        assert_eq!(one(i.topo.host_up[0]) + one(i.topo.host_down[3]), (2 * 500 + 300) * PS_PER_NS);
    }

    #[test]
    fn cut_through_is_faster_than_store_and_forward() {
        let (model, cosim) = one_way_ps(4252, &[100, 100], 500_000, 300_000);
        assert_eq!(cosim, ser_ps(4252, 100) + 1_300_000);
        assert_eq!(model, cosim + ser_ps(4252, 100));
        let (_, slow) = one_way_ps(4252, &[100, 25, 100, 100], 0, 0);
        assert_eq!(slow, ser_ps(4252, 25), "a slower hop costs its own serialization only");
    }

    #[test]
    fn bad_scenarios_are_refused() {
        let bad = [
            ModelTopo::Incast { fan_in: 0 },
            ModelTopo::LeafSpine { spines: 2, slow_spine: 2, slow_gbps: 25.0 },
            ModelTopo::LeafSpine { spines: 2, slow_spine: 0, slow_gbps: 0.2 },
        ];
        for topo in bad {
            assert!(run_model(&scenario(topo.clone(), 4096)).is_err(), "{topo:?}");
        }
    }
}
