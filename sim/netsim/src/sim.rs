//! The discrete-event, packet-level simulator.
//!
//! * **Time**: integer picoseconds; one calendar queue ([`crate::queue`]) of
//!   compact 24-byte events popped in (time, insertion sequence) order, so
//!   runs are deterministic.
//! * **Packets** live in a slab with a free list (no allocation per packet
//!   once warm); queues hold 32-bit slab indices.
//! * **Switch ports**: a strict-priority control class (ACK, NAK, CNP) and a
//!   data class; egress ECN marking on dequeue with the RED-style `Kmin/Kmax/
//!   Pmax` profile on the bytes left behind the packet; tail drop at the
//!   per-queue buffer limit; optional PFC: bytes held in a switch are
//!   accounted to the link they arrived on, and the switch pauses that link's
//!   data class above `xoff` and resumes it below `xon` (the pause frame takes
//!   the link latency to arrive).
//! * **Routing**: shortest-path ECMP on the 5-tuple (src, dst, UDP source port
//!   — the entropy —, destination port 4791, UDP), salted per switch.
//! * **Hosts (NICs)**: one uplink; control packets first, then probes, then
//!   the host's active flows round robin, each limited by its window (STrack,
//!   DCTCP) or its DCQCN rate (RoCEv2 pacing).
//! * **Faults**: random loss on delivery to a host (data and control
//!   packets), failed links (routed around), slow links (a slow receiver is
//!   its ToR down-link at a lower speed).

use std::collections::VecDeque;

use rnic_model::dcqcn::{DcqcnNp, DcqcnParams, DcqcnRp};
use rnic_model::dctcp::{Dctcp, DctcpParams};
use rnic_model::gbn::{GbnReceiver, GbnReply, GbnSender};
use rnic_model::reliability::{SrConfig, SrSender, TimerAction, TxKind};
use rnic_model::sack::{DataMeta, RxVerdict, Sack, SackReceiver};
use rnic_model::strack::cc::{StrackCc, StrackParams};
use rnic_model::strack::lb::{AdaptiveLb, ObliviousLb};
use rnic_model::{bytes_to_q8, NetParams};

use crate::endpoint::{Frame, FrameEndpoint};
use crate::queue::EventQueue;
use crate::rng::{mix64, Pcg32};
use crate::time::{ser_ps, Ps, PS_PER_NS, PS_PER_US};
use crate::topo::{NodeKind, Topology};
use crate::traffic::Workload;

/// Transport run by every flow of a simulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Transport {
    /// STrack: adaptive spray + STrack window + SACK/selective retransmission.
    Strack,
    /// STrack's window and reliability with oblivious (round-robin) spray.
    StrackOblivious,
    /// RoCEv2: DCQCN + go-back-N on one path, PFC in the fabric.
    Roce,
    /// RoCEv2 without congestion control: go-back-N on one path at line
    /// rate, PFC in the fabric (no ECN, no CNPs).
    RocePfc,
    /// SRNIC: DCTCP window + selective repeat on one path.
    Srnic,
}

impl Transport {
    /// RoCEv2 (go-back-N, PFC), with or without DCQCN.
    pub fn is_roce(&self) -> bool {
        matches!(self, Transport::Roce | Transport::RocePfc)
    }

    /// One path per flow (no spraying): RoCEv2 and SRNIC.
    pub fn single_path(&self) -> bool {
        matches!(self, Transport::Roce | Transport::RocePfc | Transport::Srnic)
    }

    /// Name as on the command line.
    pub fn name(&self) -> &'static str {
        match self {
            Transport::Strack => "strack",
            Transport::StrackOblivious => "strack-oblivious",
            Transport::Roce => "roce",
            Transport::RocePfc => "roce-pfc",
            Transport::Srnic => "srnic",
        }
    }
}

/// PFC thresholds (per ingress link, bytes held in the switch).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PfcConfig {
    /// Pause above this.
    pub xoff: u64,
    /// Resume below this.
    pub xon: u64,
}

/// Switch configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwitchConfig {
    /// Tail-drop limit per egress queue (data class), bytes.
    pub buffer_bytes: u64,
    /// ECN Kmin, bytes.
    pub kmin: u64,
    /// ECN Kmax, bytes.
    pub kmax: u64,
    /// Marking probability at Kmax, parts per million.
    pub pmax_ppm: u32,
    /// PFC (RoCEv2 baseline only).
    pub pfc: Option<PfcConfig>,
}

/// Everything a run needs besides topology and workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimConfig {
    /// Transport.
    pub transport: Transport,
    /// Payload bytes per packet.
    pub mtu: u32,
    /// Header bytes per data packet (Eth/IPv4/UDP/BTH/extensions).
    pub hdr_bytes: u32,
    /// Wire bytes of an ACK / NAK / CNP / probe.
    pub ctrl_bytes: u32,
    /// Seed (ECMP salts, ECN marking, loss).
    pub seed: u64,
    /// Switches.
    pub switch: SwitchConfig,
    /// Random loss on delivery to hosts, ppm.
    pub loss_ppm: u32,
    /// Network-wide base RTT (`net_base_rtt`), ns.
    pub base_rtt_ns: u32,
    /// Host link speed, Gbit/s.
    pub host_gbps: u32,
    /// STrack/SRNIC receiver ACK coalescing, bytes.
    pub ack_coalesce_bytes: u32,
    /// STrack max window, % of BDP.
    pub max_cwnd_pct: u32,
    /// STrack window at a flow's start, % of BDP (None: `max_cwnd_pct`,
    /// i.e. line rate as in the model's `StrackCc::new`).
    pub init_cwnd_pct: Option<u32>,
    /// STrack's out-of-order loss threshold, packets: None for the paper's
    /// `max(cwnd in packets, 5)`, Some(n) for a fixed n (a threshold above
    /// the fabric's reordering, to tell spurious resends from real losses).
    pub ooo_threshold: Option<u32>,
    /// Control packets (ACK, SACK, NAK, CNP) in a strict-priority class at
    /// every switch port (true), or FIFO behind data (false).
    pub ctrl_priority: bool,
    /// Retransmission timeout, ns.
    pub rto_ns: u64,
    /// STrack entropies.
    pub max_paths: u16,
    /// go-back-N receiver ACKs every n packets.
    pub gbn_ack_every: u32,
    /// DCQCN (RoCEv2 reaction and notification points).
    pub dcqcn: DcqcnParams,
    /// Time-series bin for queue delay / drops / pauses, ps.
    pub series_bin_ps: Ps,
    /// Throughput bin, ps.
    pub tput_bin_ps: Ps,
    /// Flows whose throughput is recorded (the first n).
    pub tput_flows: u32,
    /// Stop the simulation at this time even if flows are unfinished.
    pub stop_at_ps: Ps,
}

impl SimConfig {
    /// The paper's settings for `transport` on `topo`: STrack Kmin = 25 % BDP,
    /// Kmax = 75 % BDP, drop above 5 BDP per queue; RoCEv2: ECN threshold one
    /// BDP, PFC (xoff 1 BDP, xon ½ BDP), lossless buffer (64 MB per queue).
    pub fn paper_defaults(transport: Transport, topo: &Topology, mtu: u32, seed: u64) -> Self {
        let hdr = 64;
        let rtt_ps = topo.max_base_rtt_ps((mtu + hdr) as u64, 64);
        let base_rtt_ns = rtt_ps.div_ceil(PS_PER_NS) as u32;
        let gbps = topo.spec.gbps[0];
        let bdp = gbps as u64 * base_rtt_ns as u64 / 8;
        let strack = matches!(transport, Transport::Strack | Transport::StrackOblivious);
        let switch = match transport {
            Transport::Roce => SwitchConfig {
                buffer_bytes: 64 << 20,
                kmin: bdp,
                kmax: bdp,
                pmax_ppm: 1_000_000,
                pfc: Some(PfcConfig { xoff: bdp, xon: bdp / 2 }),
            },
            Transport::RocePfc => SwitchConfig {
                buffer_bytes: 64 << 20,
                kmin: u64::MAX,
                kmax: u64::MAX,
                pmax_ppm: 0,
                pfc: Some(PfcConfig { xoff: bdp, xon: bdp / 2 }),
            },
            _ => {
                SwitchConfig { buffer_bytes: 5 * bdp, kmin: bdp / 4, kmax: bdp * 3 / 4, pmax_ppm: 1_000_000, pfc: None }
            }
        };
        Self {
            transport,
            mtu,
            hdr_bytes: hdr,
            ctrl_bytes: 64,
            seed,
            switch,
            loss_ppm: 0,
            base_rtt_ns,
            host_gbps: gbps,
            // One SACK per packet. With coalescing (e.g. 4 × MTU) the SACK stream
            // over-represents hole-filling packets (condition 2), which on a
            // degraded path are the slow ones, and Algo 3's reuse of the clean
            // ACK's entropy then steers traffic *towards* that path (see
            // docs/netsim-results.md); `--ack-coalesce` changes it.
            ack_coalesce_bytes: if transport == Transport::Srnic { 1 } else { mtu },
            // STrack: a window of up to 125 % of the BDP (headroom for the
            // queueing that hashing spray onto a 1:1 fabric cannot avoid),
            // starting at 100 % (line rate for one base RTT, which keeps an
            // incast's first burst as it was); measured in
            // docs/netsim-results.md, "Tuning STrack's window". SRNIC: 100 %.
            max_cwnd_pct: if strack { 125 } else { 100 },
            init_cwnd_pct: if strack { Some(100) } else { None },
            ooo_threshold: None,
            ctrl_priority: true,
            // STrack: "hundreds of microseconds"; RoCEv2 NICs use milliseconds
            // (a shorter RTO fires spuriously while PFC holds a flow back).
            rto_ns: if transport.is_roce() { 4_000_000 } else { 200_000 },
            max_paths: 256,
            gbn_ack_every: 4,
            // NVIDIA ConnectX defaults (α period 1 µs, 32 KB byte counter, F =
            // 1): with the DCQCN paper's 55 µs stages (and line-rate-scaled
            // steps) a flow cut by a CNP crawls back and RoCEv2 loses to PFC
            // alone (docs/netsim-results.md, "A fair RoCEv2 baseline").
            dcqcn: DcqcnParams::connectx(gbps),
            series_bin_ps: 10 * PS_PER_US,
            tput_bin_ps: 100 * PS_PER_US,
            tput_flows: 8,
            stop_at_ps: u64::MAX,
        }
    }

    /// Network parameters for the transport models.
    pub fn net(&self) -> NetParams {
        NetParams { link_gbps: self.host_gbps, base_rtt_ns: self.base_rtt_ns, mtu: self.mtu }
    }
}

const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Data,
    Probe,
    Sack,
    GbnAck,
    GbnNak,
    Cnp,
    Ext,
}

impl Kind {
    fn is_ctrl(self) -> bool {
        matches!(self, Kind::Sack | Kind::GbnAck | Kind::GbnNak | Kind::Cnp)
    }
}

#[derive(Clone, Copy, Debug)]
struct Pkt {
    kind: Kind,
    ecn: bool,
    ack_req: bool,
    #[allow(dead_code)] // carried for traces; the flow counts retransmissions
    retx: bool,
    entropy: u8,
    sport: u16,
    flow: u32,
    src: u32,
    dst: u32,
    wire: u32,
    psn: u32,
    payload: u32,
    hop_port: u32,
    in_port: u32,
    ts_ns: u64,
    enq_ps: Ps,
    sack: Sack,
}

const EV_ARRIVE: u64 = 0;
const EV_PORT_FREE: u64 = 1;
const EV_FLOW_START: u64 = 2;
const EV_FLOW_TIMER: u64 = 3;
const EV_HOST_WAKE: u64 = 4;
const EV_PAUSE_ON: u64 = 5;
const EV_PAUSE_OFF: u64 = 6;

#[derive(Clone, Debug, Default)]
struct PortState {
    ctrl: VecDeque<u32>,
    data: VecDeque<u32>,
    data_bytes: u64,
    busy_until: Ps,
    tx_pending: bool,
    paused: bool,
    paused_since: Ps,
    pfc_in_bytes: u64,
    pfc_pausing: bool,
    gbps: u32,
    latency: Ps,
    to: u32,
    tier: u8,
    switch_port: bool,
    last_hop: bool,
    host_uplink: u32,
    tx_bytes: u64,
    tx_frames: u64,
    max_q: u64,
}

enum Lb {
    Adaptive(AdaptiveLb),
    Oblivious(ObliviousLb),
    Single,
}

#[allow(clippy::large_enum_variant)] // one per flow, fixed for its life: boxing would only add a pointer chase per packet
enum Sender {
    Idle,
    Sr { sr: SrSender, cc: Cc, lb: Lb },
    Roce { rp: DcqcnRp, gbn: GbnSender, next_send: Ps },
}

enum Cc {
    Strack(StrackCc),
    Dctcp(Dctcp),
}

enum Receiver {
    Idle,
    Sack(SackReceiver),
    Gbn(GbnReceiver, DcqcnNp),
}

struct Flow {
    src: u32,
    dst: u32,
    bytes: u64,
    start_delay: Ps,
    deps_left: u32,
    started: Ps,
    finished: Ps,
    sport_base: u16,
    timer_at: Ps,
    sender: Sender,
    receiver: Receiver,
    rx_bytes: u64,
    data_lost: u64,
    retransmits: u64,
    pkts_sent: u64,
    max_reorder: u32,
    max_ooo: u32,
}

/// Per-flow result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowResult {
    /// Source host.
    pub src: u32,
    /// Destination host.
    pub dst: u32,
    /// Message bytes.
    pub bytes: u64,
    /// Start time, ps (u64::MAX if never started).
    pub start: Ps,
    /// Completion time at the sender, ps (u64::MAX if unfinished).
    pub end: Ps,
    /// Data packets sent (incl. retransmissions).
    pub pkts_sent: u64,
    /// Packets retransmitted.
    pub retransmits: u64,
    /// Data packets of this flow lost in the fabric (drops + random loss).
    pub data_lost: u64,
    /// Unique payload bytes delivered at the receiver.
    pub delivered: u64,
    /// Largest reorder span seen at the receiver: highest PSN held above
    /// EPSN minus EPSN, plus one (packets) — the on-chip reorder window that
    /// would have held every out-of-order arrival of this flow.
    pub max_reorder: u32,
    /// Largest number of packets held out of order at once.
    pub max_ooo: u32,
}

impl FlowResult {
    /// Flow completion time, ps.
    pub fn fct(&self) -> Option<Ps> {
        (self.end != u64::MAX && self.start != u64::MAX).then(|| self.end - self.start)
    }
}

/// Everything a run produced.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Per flow.
    pub flows: Vec<FlowResult>,
    /// Simulated time at the end, ps.
    pub end_ps: Ps,
    /// Events processed.
    pub events: u64,
    /// Wall-clock seconds.
    pub wall_s: f64,
    /// Packets tail-dropped in switches.
    pub drops: u64,
    /// Single-path transports (RoCEv2, SRNIC): the most flows whose ECMP
    /// path shares one switch-to-switch link (0 for sprayed transports).
    pub max_flows_per_fabric_link: u32,
    /// Single-path transports: the most flows on any one link, host links
    /// included (an incast's last hop; 0 for sprayed transports).
    pub max_flows_per_link: u32,
    /// Bytes sent on the busiest switch-to-switch link.
    pub fabric_link_max_bytes: u64,
    /// Mean bytes over the switch-to-switch links that carried any.
    pub fabric_link_mean_bytes: u64,
    /// Packets lost to injected random loss.
    pub random_losses: u64,
    /// ECN marks.
    pub ecn_marks: u64,
    /// Sum over links of paused time, ps.
    pub pause_ps: Ps,
    /// PFC pause frames sent.
    pub pauses: u64,
    /// Probes sent.
    pub probes: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// ACKs that reached a sender with ECN-echo set.
    pub ecn_echoes: u64,
    /// ECN-marked entropies skipped by STrack's path selection (Algo 3).
    pub lb_skips: u64,
    /// Time-series bin, ps.
    pub series_bin_ps: Ps,
    /// Max queueing delay of last-hop (ToR→host) queues per bin, ps.
    pub last_hop_qdelay: Vec<Ps>,
    /// Max queueing delay of fabric (switch↔switch) queues per bin, ps.
    pub fabric_qdelay: Vec<Ps>,
    /// Drops per bin.
    pub drops_series: Vec<u32>,
    /// Pause frames per bin.
    pub pause_series: Vec<u32>,
    /// Throughput bin, ps.
    pub tput_bin_ps: Ps,
    /// Delivered bytes per bin for the first `tput_flows` flows.
    pub tput: Vec<Vec<u64>>,
    /// Bytes transmitted per port (index = topology port id).
    pub port_tx_bytes: Vec<u64>,
    /// Max data-queue bytes per port.
    pub port_max_q: Vec<u64>,
    /// Packets transmitted per port (index = topology port id), so that
    /// `port_tx_bytes` can be split into frames.
    pub port_tx_frames: Vec<u64>,
    /// The port chosen with [`Sim::watch_port`], per series bin: the most
    /// bytes ahead of a data packet arriving at it (data bytes queued plus the
    /// untransmitted rest of the packet on the wire), counted before the
    /// tail-drop check. Empty without a watched port.
    pub watched_backlog: Vec<u64>,
}

impl Report {
    /// Completed flows.
    pub fn completed(&self) -> usize {
        self.flows.iter().filter(|f| f.fct().is_some()).count()
    }
    /// FCTs in µs, sorted.
    pub fn fcts_us(&self) -> Vec<f64> {
        let mut v: Vec<f64> = self.flows.iter().filter_map(|f| f.fct()).map(|p| p as f64 / PS_PER_US as f64).collect();
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v
    }
    /// Total retransmissions.
    pub fn retransmits(&self) -> u64 {
        self.flows.iter().map(|f| f.retransmits).sum()
    }
}

/// The simulator.
pub struct Sim {
    cfg: SimConfig,
    topo: Topology,
    now: Ps,
    queue: EventQueue,
    pkts: Vec<Pkt>,
    free: Vec<u32>,
    ports: Vec<PortState>,
    flows: Vec<Flow>,
    children: Vec<Vec<u32>>,
    host_flows: Vec<Vec<u32>>,
    host_rr: Vec<usize>,
    host_probes: Vec<VecDeque<u32>>,
    host_wake: Vec<Ps>,
    ext: Vec<Option<Box<dyn FrameEndpoint>>>,
    ext_frames: Vec<Option<Frame>>,
    salts: Vec<u64>,
    rng: Pcg32,
    strack_p: StrackParams,
    sr_cfg: SrConfig,
    dctcp_p: DctcpParams,
    dcqcn_p: DcqcnParams,
    rep: Report,
    events: u64,
    done_flows: usize,
    progress: Option<indicatif::ProgressBar>,
    watched: u32,
}

impl Sim {
    /// A simulator for `workload` on `topo`.
    pub fn new(topo: Topology, cfg: SimConfig, workload: &Workload) -> Result<Self, String> {
        if workload.nodes > topo.n_hosts {
            return Err(format!("workload needs {} hosts, fabric has {}", workload.nodes, topo.n_hosts));
        }
        let ports = topo
            .ports
            .iter()
            .map(|p| {
                let from_kind = topo.kind[p.from as usize];
                PortState {
                    gbps: p.gbps,
                    latency: p.latency_ps,
                    to: p.to,
                    tier: p.tier,
                    switch_port: from_kind != NodeKind::Host,
                    last_hop: from_kind == NodeKind::Tor && topo.kind[p.to as usize] == NodeKind::Host,
                    host_uplink: if from_kind == NodeKind::Host { p.from } else { NONE },
                    ..Default::default()
                }
            })
            .collect();
        let n_flows = workload.flows.len();
        let mut children = vec![Vec::new(); n_flows];
        let mut flows = Vec::with_capacity(n_flows);
        for (i, f) in workload.flows.iter().enumerate() {
            if f.src == f.dst {
                return Err(format!("flow {i}: src == dst"));
            }
            for &d in &f.deps {
                if d as usize >= n_flows || d as usize == i {
                    return Err(format!("flow {i}: bad dependency {d}"));
                }
                children[d as usize].push(i as u32);
            }
            flows.push(Flow {
                src: f.src,
                dst: f.dst,
                bytes: f.bytes.max(1),
                start_delay: f.start,
                deps_left: f.deps.len() as u32,
                started: u64::MAX,
                finished: u64::MAX,
                sport_base: (mix64(cfg.seed ^ (i as u64) << 20) & 0x3fff) as u16,
                timer_at: u64::MAX,
                sender: Sender::Idle,
                receiver: Receiver::Idle,
                rx_bytes: 0,
                data_lost: 0,
                retransmits: 0,
                pkts_sent: 0,
                max_reorder: 0,
                max_ooo: 0,
            });
        }
        let net = cfg.net();
        let strack_p = StrackParams::from_net(net, cfg.max_cwnd_pct);
        let window_pkts = 256;
        let sr_cfg = match cfg.transport {
            Transport::Srnic => SrConfig {
                mtu: cfg.mtu,
                window_pkts,
                ooo_min_threshold: 0,
                ooo_use_cwnd: false,
                probe_after_ns: 3 * cfg.base_rtt_ns as u64,
                probe_rtt_limit_ns: 3 * cfg.base_rtt_ns as u64,
                rto_ns: cfg.rto_ns,
            },
            _ => SrConfig {
                mtu: cfg.mtu,
                window_pkts,
                ooo_min_threshold: cfg.ooo_threshold.unwrap_or(5),
                ooo_use_cwnd: cfg.ooo_threshold.is_none(),
                probe_after_ns: 3 * cfg.base_rtt_ns as u64,
                probe_rtt_limit_ns: 3 * cfg.base_rtt_ns as u64,
                rto_ns: cfg.rto_ns,
            },
        };
        let bdp = net.bdp_bytes();
        let dctcp_p = DctcpParams {
            mtu: cfg.mtu,
            g_shift: 4,
            max_cwnd: bytes_to_q8(bdp * cfg.max_cwnd_pct as u64 / 100),
            min_cwnd: bytes_to_q8(cfg.mtu as u64),
        };
        let dcqcn_p = cfg.dcqcn;
        let n_hosts = topo.n_hosts as usize;
        let salts = (0..topo.n_nodes() as u64).map(|n| mix64(cfg.seed.wrapping_mul(0x100_0000_01b3) ^ n)).collect();
        let rep = Report {
            series_bin_ps: cfg.series_bin_ps,
            tput_bin_ps: cfg.tput_bin_ps,
            tput: vec![Vec::new(); (cfg.tput_flows as usize).min(n_flows)],
            ..Default::default()
        };
        let mut sim = Self {
            rng: Pcg32::new(cfg.seed, 0x5eed),
            cfg,
            now: 0,
            queue: EventQueue::new(),
            pkts: Vec::with_capacity(1 << 16),
            free: Vec::new(),
            ports,
            flows,
            children,
            host_flows: vec![Vec::new(); n_hosts],
            host_rr: vec![0; n_hosts],
            host_probes: vec![VecDeque::new(); n_hosts],
            host_wake: vec![u64::MAX; n_hosts],
            ext: (0..n_hosts).map(|_| None).collect(),
            ext_frames: Vec::new(),
            salts,
            strack_p,
            sr_cfg,
            dctcp_p,
            dcqcn_p,
            rep,
            events: 0,
            done_flows: 0,
            progress: None,
            watched: NONE,
            topo,
        };
        for i in 0..sim.flows.len() {
            if sim.flows[i].deps_left == 0 {
                let t = sim.flows[i].start_delay;
                sim.push(t, EV_FLOW_START, i as u64);
            }
        }
        Ok(sim)
    }

    /// Shows a progress bar (flows completed) while running.
    pub fn with_progress(mut self, show: bool) -> Self {
        if show {
            let pb = indicatif::ProgressBar::new(self.flows.len() as u64);
            pb.set_style(
                indicatif::ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} flows  {msg}")
                    .unwrap()
                    .progress_chars("=> "),
            );
            self.progress = Some(pb);
        }
        self
    }

    /// Records the backlog of port `port` (a topology port id) per series bin
    /// in [`Report::watched_backlog`].
    pub fn watch_port(mut self, port: u32) -> Self {
        self.watched = port;
        self
    }

    /// Attaches a frame-level endpoint (e.g. a cycle-accurate NIC) at `host`.
    /// The host's own model flows keep running; frames from the endpoint are
    /// forwarded like any data packet.
    pub fn attach_endpoint(&mut self, host: u32, ep: Box<dyn FrameEndpoint>) {
        let first = ep.next_wakeup_cycle().map(|c| ep.clock().cycle_to_ps(c));
        self.ext[host as usize] = Some(ep);
        if let Some(t) = first {
            self.wake_host(host, t);
        }
    }

    /// Detaches the endpoint at `host` (to inspect it after a run).
    pub fn take_endpoint(&mut self, host: u32) -> Option<Box<dyn FrameEndpoint>> {
        self.ext[host as usize].take()
    }

    fn push(&mut self, t: Ps, kind: u64, id: u64) {
        self.queue.push(t, kind << 56 | id);
    }

    fn alloc(&mut self, p: Pkt) -> u32 {
        if let Some(i) = self.free.pop() {
            self.pkts[i as usize] = p;
            i
        } else {
            self.pkts.push(p);
            (self.pkts.len() - 1) as u32
        }
    }

    fn release(&mut self, i: u32) {
        self.free.push(i);
    }

    fn now_ns(&self) -> u64 {
        self.now / PS_PER_NS
    }

    fn bin(v: &mut Vec<Ps>, i: usize, x: Ps) {
        if v.len() <= i {
            v.resize(i + 1, 0);
        }
        v[i] = v[i].max(x);
    }

    fn count(v: &mut Vec<u32>, i: usize) {
        if v.len() <= i {
            v.resize(i + 1, 0);
        }
        v[i] += 1;
    }

    /// Runs to completion (or `stop_at_ps`) and returns the report.
    pub fn run(mut self) -> Report {
        let wall = std::time::Instant::now();
        while let Some(ev) = self.queue.pop() {
            if ev.t > self.cfg.stop_at_ps {
                break;
            }
            self.now = ev.t;
            self.events += 1;
            let id = ev.code & ((1 << 56) - 1);
            match ev.code >> 56 {
                EV_ARRIVE => self.arrive(id as u32),
                EV_PORT_FREE => {
                    self.ports[id as usize].tx_pending = false;
                    self.try_tx(id as u32);
                }
                EV_FLOW_START => self.start_flow(id as u32),
                EV_FLOW_TIMER => self.flow_timer(id as u32, ev.t),
                EV_HOST_WAKE => {
                    let h = id as usize;
                    if self.host_wake[h] == ev.t {
                        self.host_wake[h] = u64::MAX;
                    }
                    self.kick_host(id as u32);
                }
                EV_PAUSE_ON => {
                    let p = &mut self.ports[id as usize];
                    if !p.paused {
                        p.paused = true;
                        p.paused_since = self.now;
                    }
                }
                EV_PAUSE_OFF => {
                    let p = &mut self.ports[id as usize];
                    if p.paused {
                        p.paused = false;
                        self.rep.pause_ps += self.now - p.paused_since;
                    }
                    let port = id as u32;
                    if !self.ports[port as usize].tx_pending {
                        self.kick_port(port);
                    }
                }
                _ => unreachable!(),
            }
            if self.done_flows == self.flows.len() && self.ext.iter().all(|e| e.is_none()) {
                break;
            }
            if self.events & 0xffff == 0 {
                if let Some(pb) = &self.progress {
                    pb.set_position(self.done_flows as u64);
                    pb.set_message(format!("t={:.1} µs, {} Mev", self.now as f64 / 1e6, self.events / 1_000_000));
                }
            }
        }
        if let Some(pb) = self.progress.take() {
            pb.finish_and_clear();
        }
        for p in self.ports.iter_mut() {
            if p.paused {
                self.rep.pause_ps += self.now - p.paused_since;
            }
        }
        let mut rep = std::mem::take(&mut self.rep);
        if self.cfg.transport.single_path() {
            (rep.max_flows_per_fabric_link, rep.max_flows_per_link) = self.single_path_load();
        }
        let fab: Vec<u64> =
            self.ports.iter().filter(|p| p.switch_port && !p.last_hop && p.tx_bytes > 0).map(|p| p.tx_bytes).collect();
        rep.fabric_link_max_bytes = fab.iter().copied().max().unwrap_or(0);
        rep.fabric_link_mean_bytes = if fab.is_empty() { 0 } else { fab.iter().sum::<u64>() / fab.len() as u64 };
        rep.end_ps = self.now;
        rep.events = self.events;
        rep.wall_s = wall.elapsed().as_secs_f64();
        rep.port_tx_bytes = self.ports.iter().map(|p| p.tx_bytes).collect();
        rep.port_max_q = self.ports.iter().map(|p| p.max_q).collect();
        rep.port_tx_frames = self.ports.iter().map(|p| p.tx_frames).collect();
        for f in &self.flows {
            if let Sender::Sr { sr, lb, .. } = &f.sender {
                rep.probes += sr.stats.probes;
                rep.timeouts += sr.stats.timeouts;
                if let Lb::Adaptive(a) = lb {
                    rep.lb_skips += a.skipped;
                }
            }
            if let Sender::Roce { gbn, .. } = &f.sender {
                rep.timeouts += gbn.timeouts;
            }
        }
        rep.flows = self
            .flows
            .iter()
            .map(|f| FlowResult {
                src: f.src,
                dst: f.dst,
                bytes: f.bytes,
                start: f.started,
                end: f.finished,
                pkts_sent: f.pkts_sent,
                retransmits: f.retransmits,
                data_lost: f.data_lost,
                delivered: f.rx_bytes,
                max_reorder: f.max_reorder,
                max_ooo: f.max_ooo,
            })
            .collect();
        rep
    }

    fn start_flow(&mut self, fi: u32) {
        let now_ns = self.now_ns();
        let cfg = &self.cfg;
        let f = &mut self.flows[fi as usize];
        f.started = self.now;
        let (sender, receiver) = match cfg.transport {
            Transport::Strack | Transport::StrackOblivious => {
                let lb = if cfg.transport == Transport::Strack {
                    Lb::Adaptive(AdaptiveLb::new(cfg.max_paths))
                } else {
                    Lb::Oblivious(ObliviousLb::new(cfg.max_paths, f.sport_base % cfg.max_paths))
                };
                let mut cc = StrackCc::new(self.strack_p, now_ns);
                if let Some(pct) = cfg.init_cwnd_pct {
                    let w = bytes_to_q8(cfg.net().bdp_bytes() * pct as u64 / 100);
                    cc.cwnd = w.clamp(self.strack_p.min_cwnd, self.strack_p.max_cwnd);
                }
                (
                    Sender::Sr { sr: SrSender::new(self.sr_cfg, f.bytes, now_ns), cc: Cc::Strack(cc), lb },
                    Receiver::Sack(SackReceiver::new(cfg.ack_coalesce_bytes)),
                )
            }
            Transport::Srnic => (
                Sender::Sr {
                    sr: SrSender::new(self.sr_cfg, f.bytes, now_ns),
                    cc: Cc::Dctcp(Dctcp::new(self.dctcp_p)),
                    lb: Lb::Single,
                },
                Receiver::Sack(SackReceiver::new(cfg.ack_coalesce_bytes)),
            ),
            Transport::Roce | Transport::RocePfc => {
                let pkts = f.bytes.div_ceil(cfg.mtu as u64) as u32;
                (
                    Sender::Roce {
                        rp: DcqcnRp::new(self.dcqcn_p, now_ns),
                        gbn: GbnSender::new(pkts, cfg.rto_ns, now_ns),
                        next_send: self.now,
                    },
                    Receiver::Gbn(GbnReceiver::new(cfg.gbn_ack_every), DcqcnNp::default()),
                )
            }
        };
        f.sender = sender;
        f.receiver = receiver;
        let src = f.src;
        self.host_flows[src as usize].push(fi);
        self.kick_host(src);
    }

    fn kick_port(&mut self, port: u32) {
        let p = &self.ports[port as usize];
        if p.tx_pending {
            return;
        }
        if p.busy_until <= self.now {
            self.try_tx(port);
        } else {
            let t = p.busy_until;
            self.ports[port as usize].tx_pending = true;
            self.push(t, EV_PORT_FREE, port as u64);
        }
    }

    fn kick_host(&mut self, h: u32) {
        let port = self.topo.host_up[h as usize];
        self.kick_port(port);
    }

    fn wake_host(&mut self, h: u32, t: Ps) {
        let t = t.max(self.now);
        if t < self.host_wake[h as usize] {
            self.host_wake[h as usize] = t;
            self.push(t, EV_HOST_WAKE, h as u64);
        }
    }

    fn enqueue(&mut self, port: u32, pi: u32) {
        let wire = self.pkts[pi as usize].wire as u64;
        let ctrl = self.pkts[pi as usize].kind.is_ctrl();
        if ctrl && (self.cfg.ctrl_priority || !self.ports[port as usize].switch_port) {
            self.ports[port as usize].ctrl.push_back(pi);
        } else if ctrl {
            // no priority class: FIFO with data, never dropped, never marked
            let ps = &mut self.ports[port as usize];
            ps.data_bytes += wire;
            ps.data.push_back(pi);
        } else {
            if port == self.watched {
                self.watch_arrival(port);
            }
            let limit = self.cfg.switch.buffer_bytes;
            let ps = &mut self.ports[port as usize];
            if ps.switch_port && ps.data_bytes + wire > limit {
                self.drop_pkt(pi, true);
                return;
            }
            ps.data_bytes += wire;
            ps.max_q = ps.max_q.max(ps.data_bytes);
            ps.data.push_back(pi);
        }
        self.pkts[pi as usize].enq_ps = self.now;
        self.kick_port(port);
    }

    fn watch_arrival(&mut self, port: u32) {
        let ps = &self.ports[port as usize];
        let on_wire = ps.busy_until.saturating_sub(self.now) * ps.gbps as u64 / 8_000;
        let (b, held) = ((self.now / self.cfg.series_bin_ps) as usize, ps.data_bytes + on_wire);
        Self::bin(&mut self.rep.watched_backlog, b, held);
    }

    fn drop_pkt(&mut self, pi: u32, congestion: bool) {
        let p = self.pkts[pi as usize];
        if congestion {
            self.rep.drops += 1;
            let b = (self.now / self.cfg.series_bin_ps) as usize;
            Self::count(&mut self.rep.drops_series, b);
        } else {
            self.rep.random_losses += 1;
        }
        if matches!(p.kind, Kind::Data) {
            self.flows[p.flow as usize].data_lost += 1;
        }
        if p.in_port != NONE {
            self.pfc_release(p.in_port, p.wire as u64);
        }
        if p.kind == Kind::Ext {
            self.ext_frames[p.psn as usize] = None;
        }
        self.release(pi);
    }

    fn pfc_release(&mut self, in_port: u32, wire: u64) {
        let Some(pfc) = self.cfg.switch.pfc else { return };
        let ps = &mut self.ports[in_port as usize];
        ps.pfc_in_bytes -= wire;
        if ps.pfc_pausing && ps.pfc_in_bytes <= pfc.xon {
            ps.pfc_pausing = false;
            let t = self.now + ps.latency;
            self.push(t, EV_PAUSE_OFF, in_port as u64);
        }
    }

    fn try_tx(&mut self, port: u32) {
        let now = self.now;
        let pi = {
            let ps = &mut self.ports[port as usize];
            if ps.busy_until > now {
                let t = ps.busy_until;
                ps.tx_pending = true;
                self.push(t, EV_PORT_FREE, port as u64);
                return;
            }
            if let Some(pi) = ps.ctrl.pop_front() {
                Some((pi, false))
            } else if ps.paused {
                None
            } else {
                ps.data.pop_front().map(|pi| (pi, true))
            }
        };
        let pi = match pi {
            Some((pi, from_data)) => {
                let kind = self.pkts[pi as usize].kind;
                if from_data && kind.is_ctrl() {
                    // a control packet queued FIFO with data (ctrl_priority off)
                    let wire = self.pkts[pi as usize].wire as u64;
                    self.ports[port as usize].data_bytes -= wire;
                } else if !kind.is_ctrl() {
                    let wire = self.pkts[pi as usize].wire as u64;
                    let ps = &mut self.ports[port as usize];
                    ps.data_bytes -= wire;
                    if ps.switch_port {
                        let behind = ps.data_bytes;
                        let delay = now - self.pkts[pi as usize].enq_ps;
                        let (last_hop, tier) = (ps.last_hop, ps.tier);
                        let b = (now / self.cfg.series_bin_ps) as usize;
                        if last_hop {
                            Self::bin(&mut self.rep.last_hop_qdelay, b, delay);
                        } else if tier > 0 {
                            Self::bin(&mut self.rep.fabric_qdelay, b, delay);
                        }
                        if self.ecn_mark(behind) {
                            self.pkts[pi as usize].ecn = true;
                            self.rep.ecn_marks += 1;
                        }
                    }
                    let inp = self.pkts[pi as usize].in_port;
                    if inp != NONE {
                        self.pkts[pi as usize].in_port = NONE;
                        self.pfc_release(inp, wire);
                    }
                }
                pi
            }
            None => {
                let h = self.ports[port as usize].host_uplink;
                if h == NONE || self.ports[port as usize].paused {
                    return;
                }
                match self.host_next(h) {
                    Some(pi) => pi,
                    None => return,
                }
            }
        };
        let (wire, gbps, lat, to) = {
            let ps = &self.ports[port as usize];
            (self.pkts[pi as usize].wire as u64, ps.gbps, ps.latency, ps.to)
        };
        let _ = to;
        let ser = ser_ps(wire, gbps);
        let ps = &mut self.ports[port as usize];
        ps.busy_until = now + ser;
        ps.tx_bytes += wire;
        ps.tx_frames += 1;
        let more = !ps.ctrl.is_empty() || (!ps.data.is_empty() && !ps.paused) || ps.host_uplink != NONE;
        self.pkts[pi as usize].hop_port = port;
        self.push(now + ser + lat, EV_ARRIVE, pi as u64);
        if more {
            self.ports[port as usize].tx_pending = true;
            self.push(now + ser, EV_PORT_FREE, port as u64);
        }
    }

    fn ecn_mark(&mut self, q: u64) -> bool {
        let s = self.cfg.switch;
        if q <= s.kmin {
            return false;
        }
        if q >= s.kmax {
            return self.rng.chance_ppm(s.pmax_ppm);
        }
        let ppm = s.pmax_ppm as u64 * (q - s.kmin) / (s.kmax - s.kmin);
        self.rng.chance_ppm(ppm as u32)
    }

    /// Next packet from host `h`'s flows, probes or external endpoint.
    fn host_next(&mut self, h: u32) -> Option<u32> {
        if let Some(fi) = self.host_probes[h as usize].pop_front() {
            return Some(self.make_probe(fi));
        }
        if self.ext[h as usize].is_some() {
            if let Some(pi) = self.ext_poll(h) {
                return Some(pi);
            }
        }
        let n = self.host_flows[h as usize].len();
        let mut wake = u64::MAX;
        for k in 0..n {
            let idx = (self.host_rr[h as usize] + k) % n;
            let fi = self.host_flows[h as usize][idx];
            match self.flow_next(fi) {
                Ok(pi) => {
                    self.host_rr[h as usize] = (idx + 1) % n;
                    return Some(pi);
                }
                Err(t) => wake = wake.min(t),
            }
        }
        if wake != u64::MAX {
            self.wake_host(h, wake);
        }
        None
    }

    fn ext_poll(&mut self, h: u32) -> Option<u32> {
        let ep = self.ext[h as usize].as_mut().unwrap();
        let clk = ep.clock();
        let cyc = clk.ps_to_cycle_ceil(self.now);
        let fr = ep.poll_tx(cyc);
        let next = ep.next_wakeup_cycle().map(|c| clk.cycle_to_ps(c));
        if let Some(t) = next {
            self.wake_host(h, t);
        }
        let fr = fr?;
        let wire = if fr.bytes.is_empty() { fr.wire_bytes } else { fr.bytes.len() as u32 };
        let slot = self.ext_frames.len() as u32;
        let p = Pkt {
            kind: Kind::Ext,
            ecn: false,
            ack_req: false,
            retx: false,
            entropy: 0,
            sport: fr.udp_sport,
            flow: NONE,
            src: h,
            dst: fr.dst,
            wire: wire.max(64),
            psn: slot,
            payload: 0,
            hop_port: NONE,
            in_port: NONE,
            ts_ns: 0,
            enq_ps: self.now,
            sack: Sack::default(),
        };
        self.ext_frames.push(Some(fr));
        Some(self.alloc(p))
    }

    fn data_pkt(&self, fi: u32, psn: u32, payload: u32, entropy: u8, retx: bool, ack_req: bool) -> Pkt {
        let f = &self.flows[fi as usize];
        Pkt {
            kind: Kind::Data,
            ecn: false,
            ack_req,
            retx,
            entropy,
            sport: 0xc000 | ((f.sport_base + entropy as u16) & 0x3fff),
            flow: fi,
            src: f.src,
            dst: f.dst,
            wire: payload + self.cfg.hdr_bytes,
            psn,
            payload,
            hop_port: NONE,
            in_port: NONE,
            ts_ns: self.now_ns(),
            enq_ps: self.now,
            sack: Sack::default(),
        }
    }

    fn make_probe(&mut self, fi: u32) -> u32 {
        let f = &mut self.flows[fi as usize];
        let (base, entropy) = match &mut f.sender {
            Sender::Sr { sr, cc, lb } => {
                let cwnd_pkts = match cc {
                    Cc::Strack(c) => c.cwnd_packets(),
                    Cc::Dctcp(d) => (d.cwnd_bytes() / self.cfg.mtu as u64) as u32,
                };
                let e = match lb {
                    Lb::Adaptive(a) => a.choose_path(cwnd_pkts),
                    Lb::Oblivious(o) => o.choose_path(),
                    Lb::Single => 0,
                };
                (sr.snd_una, e)
            }
            _ => (0, 0),
        };
        let mut p = self.data_pkt(fi, base, 0, entropy, false, false);
        p.kind = Kind::Probe;
        p.wire = self.cfg.ctrl_bytes;
        self.alloc(p)
    }

    /// Next data packet of flow `fi`, or the time it may next send (u64::MAX:
    /// only an ACK can unblock it).
    fn flow_next(&mut self, fi: u32) -> Result<u32, Ps> {
        let now = self.now;
        let mtu = self.cfg.mtu;
        let hdr = self.cfg.hdr_bytes;
        let f = &mut self.flows[fi as usize];
        let pkt = match &mut f.sender {
            Sender::Idle => return Err(u64::MAX),
            Sender::Sr { sr, cc, lb } => {
                let (cwnd, cwnd_pkts) = match cc {
                    Cc::Strack(c) => (c.cwnd_bytes(), c.cwnd_packets()),
                    Cc::Dctcp(d) => (d.cwnd_bytes(), (d.cwnd_bytes() / mtu as u64) as u32),
                };
                let Some(tx) = sr.next_tx(cwnd) else { return Err(u64::MAX) };
                let e = match lb {
                    Lb::Adaptive(a) => a.choose_path(cwnd_pkts),
                    Lb::Oblivious(o) => o.choose_path(),
                    Lb::Single => 0,
                };
                (tx.psn, tx.bytes, e, tx.kind == TxKind::Retransmit, tx.ack_req)
            }
            Sender::Roce { rp, gbn, next_send } => {
                if *next_send > now {
                    return Err(*next_send);
                }
                let Some((psn, retx)) = gbn.next_tx() else { return Err(u64::MAX) };
                let off = psn as u64 * mtu as u64;
                let bytes = (f.bytes - off).min(mtu as u64) as u32;
                let now_ns = now / PS_PER_NS;
                rp.on_sent(now_ns, bytes as u64);
                *next_send = now.max(*next_send) + rp.gap_ps((bytes + hdr) as u64);
                (psn, bytes, 0, retx, psn + 1 == gbn.total_pkts)
            }
        };
        f.pkts_sent += 1;
        if pkt.3 {
            f.retransmits += 1;
        }
        let p = self.data_pkt(fi, pkt.0, pkt.1, pkt.2, pkt.3, pkt.4);
        let pi = self.alloc(p);
        if self.flows[fi as usize].timer_at == u64::MAX {
            self.update_timer(fi);
        }
        Ok(pi)
    }

    fn arrive(&mut self, pi: u32) {
        let port = self.pkts[pi as usize].hop_port;
        let node = self.ports[port as usize].to;
        if (node as usize) < self.topo.n_hosts as usize {
            if self.cfg.loss_ppm > 0 && self.rng.chance_ppm(self.cfg.loss_ppm) {
                self.drop_pkt(pi, false);
                return;
            }
            self.deliver(node, pi);
            return;
        }
        // switch: PFC ingress accounting for the data class
        let p = self.pkts[pi as usize];
        if let Some(pfc) = self.cfg.switch.pfc {
            if !p.kind.is_ctrl() {
                self.pkts[pi as usize].in_port = port;
                let ps = &mut self.ports[port as usize];
                ps.pfc_in_bytes += p.wire as u64;
                if !ps.pfc_pausing && ps.pfc_in_bytes > pfc.xoff {
                    ps.pfc_pausing = true;
                    self.rep.pauses += 1;
                    let b = (self.now / self.cfg.series_bin_ps) as usize;
                    Self::count(&mut self.rep.pause_series, b);
                    let t = self.now + ps.latency;
                    self.push(t, EV_PAUSE_ON, port as u64);
                }
            }
        }
        let Some(out) = self.route(node, p.src, p.dst, p.sport) else {
            self.drop_pkt(pi, true);
            return;
        };
        self.enqueue(out, pi);
    }

    /// Egress port of switch `node` for a packet `src` → `dst` with UDP
    /// source port `sport` (ECMP on the 5-tuple, salted per switch); None
    /// if `dst` is unreachable from `node`.
    fn route(&self, node: u32, src: u32, dst: u32, sport: u16) -> Option<u32> {
        let dst_tor = self.topo.host_tor[dst as usize];
        if self.topo.tors[dst_tor as usize] == node {
            return Some(self.topo.host_down[dst as usize]);
        }
        let hops = self.topo.next_hops(node, dst_tor);
        match hops.len() {
            0 => None,
            1 => Some(hops[0]),
            n => {
                let key = (src as u64) << 40 ^ (dst as u64) << 16 ^ sport as u64 ^ (4791u64 << 48) ^ (17u64 << 60);
                let h = mix64(key ^ self.salts[node as usize]);
                Some(hops[(h % n as u64) as usize])
            }
        }
    }

    /// Egress port of switch `node` for flow `flow`'s packets on entropy
    /// `entropy` (its UDP source port is the flow's seeded base plus the
    /// entropy), by the same ECMP hash the simulation uses; None if the
    /// flow's destination is unreachable from `node` or there is no such flow.
    pub fn egress_of(&self, node: u32, flow: usize, entropy: u16) -> Option<u32> {
        let f = self.flows.get(flow)?;
        self.route(node, f.src, f.dst, 0xc000 | ((f.sport_base + entropy) & 0x3fff))
    }

    /// Most flows whose single path (entropy 0, as RoCEv2 and SRNIC send)
    /// crosses one switch-to-switch link, and the flows on the busiest
    /// link of any kind (a host's own links included).
    fn single_path_load(&self) -> (u32, u32) {
        let mut fabric = vec![0u32; self.ports.len()];
        let mut any = vec![0u32; self.ports.len()];
        for f in &self.flows {
            let sport = 0xc000 | (f.sport_base & 0x3fff);
            let mut port = self.topo.host_up[f.src as usize];
            for _ in 0..16 {
                any[port as usize] += 1;
                let node = self.ports[port as usize].to;
                if (node as usize) < self.topo.n_hosts as usize {
                    break;
                }
                let Some(next) = self.route(node, f.src, f.dst, sport) else { break };
                if self.ports[next as usize].switch_port && !self.ports[next as usize].last_hop {
                    fabric[next as usize] += 1;
                }
                port = next;
            }
        }
        (fabric.iter().copied().max().unwrap_or(0), any.iter().copied().max().unwrap_or(0))
    }

    fn send_ctrl(&mut self, from: u32, p: Pkt) {
        let pi = self.alloc(p);
        let port = self.topo.host_up[from as usize];
        self.enqueue(port, pi);
    }

    fn deliver(&mut self, host: u32, pi: u32) {
        let p = self.pkts[pi as usize];
        self.release(pi);
        let now_ns = self.now_ns();
        match p.kind {
            Kind::Ext => {
                let fr = self.ext_frames[p.psn as usize].take();
                if let (Some(mut fr), Some(ep)) = (fr, self.ext[host as usize].as_mut()) {
                    fr.ecn_ce |= p.ecn;
                    let clk = ep.clock();
                    ep.on_frame(clk.ps_to_cycle_ceil(self.now), fr);
                    if let Some(c) = ep.next_wakeup_cycle() {
                        self.wake_host(host, clk.cycle_to_ps(c));
                    }
                }
            }
            Kind::Data | Kind::Probe => self.on_data(host, &p, now_ns),
            Kind::Sack => self.on_sack(&p, now_ns),
            Kind::GbnAck | Kind::GbnNak => {
                let r =
                    if p.kind == Kind::GbnAck { GbnReply::Ack { epsn: p.psn } } else { GbnReply::Nak { epsn: p.psn } };
                let fi = p.flow;
                if let Sender::Roce { gbn, .. } = &mut self.flows[fi as usize].sender {
                    gbn.on_reply(now_ns, r);
                    if gbn.is_complete() {
                        self.finish(fi);
                        return;
                    }
                }
                self.update_timer(fi);
                let src = self.flows[fi as usize].src;
                self.kick_host(src);
            }
            Kind::Cnp if self.cfg.transport == Transport::Roce => {
                if let Sender::Roce { rp, .. } = &mut self.flows[p.flow as usize].sender {
                    rp.on_cnp(now_ns);
                }
            }
            Kind::Cnp => {}
        }
    }

    fn ctrl_pkt(&self, p: &Pkt, kind: Kind) -> Pkt {
        Pkt {
            kind,
            ecn: false,
            ack_req: false,
            retx: false,
            entropy: p.entropy,
            sport: p.sport,
            flow: p.flow,
            src: p.dst,
            dst: p.src,
            wire: self.cfg.ctrl_bytes,
            psn: 0,
            payload: 0,
            hop_port: NONE,
            in_port: NONE,
            ts_ns: p.ts_ns,
            enq_ps: self.now,
            sack: Sack::default(),
        }
    }

    fn on_data(&mut self, host: u32, p: &Pkt, now_ns: u64) {
        let fi = p.flow as usize;
        let cnp_interval = self.dcqcn_p.cnp_interval_ns;
        let mut new_bytes = 0;
        let mut reply: Option<Pkt> = None;
        let mut cnp = false;
        let mut reorder = (0u32, 0u32);
        match &mut self.flows[fi].receiver {
            Receiver::Idle => return,
            Receiver::Sack(r) => {
                let meta = DataMeta {
                    psn: p.psn,
                    bytes: p.payload,
                    ecn: p.ecn,
                    entropy: p.entropy,
                    ts: p.ts_ns,
                    probe: p.kind == Kind::Probe,
                    ack_req: p.ack_req,
                };
                let (v, s) = r.on_packet(&meta);
                if v == RxVerdict::New {
                    new_bytes = p.payload as u64;
                }
                reorder = (r.bitmap.highest_set().map_or(0, |h| h + 1), r.ooo_count());
                if let Some((s, _)) = s {
                    let mut a = self.ctrl_pkt(p, Kind::Sack);
                    a.sack = s;
                    reply = Some(a);
                }
            }
            Receiver::Gbn(r, np) => {
                if p.kind != Kind::Data {
                    return;
                }
                let (ok, rep) = r.on_data(p.psn, p.ack_req);
                if ok {
                    new_bytes = p.payload as u64;
                }
                cnp = np.on_data(now_ns, p.ecn, cnp_interval);
                if let Some(rep) = rep {
                    let (kind, epsn) = match rep {
                        GbnReply::Ack { epsn } => (Kind::GbnAck, epsn),
                        GbnReply::Nak { epsn } => (Kind::GbnNak, epsn),
                    };
                    let mut a = self.ctrl_pkt(p, kind);
                    a.psn = epsn;
                    reply = Some(a);
                }
            }
        }
        {
            let f = &mut self.flows[fi];
            f.max_reorder = f.max_reorder.max(reorder.0);
            f.max_ooo = f.max_ooo.max(reorder.1);
        }
        if new_bytes > 0 {
            self.flows[fi].rx_bytes += new_bytes;
            if fi < self.rep.tput.len() {
                let b = (self.now / self.cfg.tput_bin_ps) as usize;
                let v = &mut self.rep.tput[fi];
                if v.len() <= b {
                    v.resize(b + 1, 0);
                }
                v[b] += new_bytes;
            }
        }
        if cnp {
            let c = self.ctrl_pkt(p, Kind::Cnp);
            self.send_ctrl(host, c);
        }
        if let Some(a) = reply {
            self.send_ctrl(host, a);
        }
    }

    fn on_sack(&mut self, p: &Pkt, now_ns: u64) {
        let fi = p.flow;
        let f = &mut self.flows[fi as usize];
        let Sender::Sr { sr, cc, lb } = &mut f.sender else { return };
        let s = p.sack;
        if s.ecn {
            self.rep.ecn_echoes += 1;
        }
        let cwnd_pkts = match cc {
            Cc::Strack(c) => c.cwnd_packets(),
            Cc::Dctcp(d) => (d.cwnd_bytes() / self.cfg.mtu as u64) as u32,
        };
        let out = sr.on_ack(now_ns, &s, cwnd_pkts);
        match cc {
            Cc::Strack(c) => {
                let rtt = now_ns.saturating_sub(s.ts_echo).min(u32::MAX as u64) as u32;
                c.on_ack(now_ns, s.ecn, rtt, out.newly_recvd, s.probe_reply);
            }
            Cc::Dctcp(d) => {
                d.on_ack(out.newly_recvd, s.ecn, sr.snd_una, sr.snd_nxt);
            }
        }
        if let Lb::Adaptive(a) = lb {
            a.update_ecn_bitmap(s.ecn, s.entropy);
        }
        if sr.is_complete() {
            self.finish(fi);
            return;
        }
        self.update_timer(fi);
        let src = self.flows[fi as usize].src;
        self.kick_host(src);
    }

    fn update_timer(&mut self, fi: u32) {
        let f = &self.flows[fi as usize];
        let d = match &f.sender {
            Sender::Sr { sr, .. } => sr.next_deadline(),
            Sender::Roce { gbn, .. } => gbn.next_deadline(),
            Sender::Idle => None,
        };
        if let Some(d) = d {
            let t = (d * PS_PER_NS).max(self.now);
            if t < f.timer_at || f.timer_at < self.now {
                self.flows[fi as usize].timer_at = t;
                self.push(t, EV_FLOW_TIMER, fi as u64);
            }
        }
    }

    fn flow_timer(&mut self, fi: u32, t: Ps) {
        if self.flows[fi as usize].timer_at != t {
            return;
        }
        self.flows[fi as usize].timer_at = u64::MAX;
        let now_ns = self.now_ns();
        let f = &mut self.flows[fi as usize];
        let mut kick = false;
        match &mut f.sender {
            Sender::Sr { sr, .. } => match sr.on_timer(now_ns) {
                Some(TimerAction::SendProbe { .. }) => {
                    let src = f.src;
                    self.host_probes[src as usize].push_back(fi);
                    kick = true;
                }
                Some(TimerAction::Timeout) => kick = true,
                None => {}
            },
            Sender::Roce { gbn, .. } => kick = gbn.on_timer(now_ns),
            Sender::Idle => return,
        }
        if self.flows[fi as usize].finished != u64::MAX {
            return;
        }
        self.update_timer(fi);
        if kick {
            let src = self.flows[fi as usize].src;
            self.kick_host(src);
        }
    }

    fn finish(&mut self, fi: u32) {
        let f = &mut self.flows[fi as usize];
        if f.finished != u64::MAX {
            return;
        }
        f.finished = self.now;
        f.timer_at = u64::MAX;
        let src = f.src as usize;
        if let Some(pos) = self.host_flows[src].iter().position(|&x| x == fi) {
            self.host_flows[src].remove(pos);
            let n = self.host_flows[src].len();
            if n > 0 {
                self.host_rr[src] %= n;
            } else {
                self.host_rr[src] = 0;
            }
        }
        self.host_probes[src].retain(|&x| x != fi);
        self.done_flows += 1;
        let kids = std::mem::take(&mut self.children[fi as usize]);
        for &c in &kids {
            let cf = &mut self.flows[c as usize];
            cf.deps_left -= 1;
            if cf.deps_left == 0 {
                let t = self.now + cf.start_delay;
                self.push(t, EV_FLOW_START, c as u64);
            }
        }
        self.children[fi as usize] = kids;
    }
}

/// Per-port tx bytes of the links a flow could use between two ToRs (for tests).
pub fn tier1_port_ids(topo: &Topology, tor_idx: u32) -> Vec<u32> {
    topo.node_ports[topo.tors[tor_idx as usize] as usize]
        .iter()
        .copied()
        .filter(|&p| topo.ports[p as usize].tier == 1)
        .collect()
}
