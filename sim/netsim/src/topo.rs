//! Fabric topologies: 2-tier leaf-spine and 3-tier fat tree (k-ary, with
//! oversubscription at the ToR), failed links, shortest-path ECMP tables, and
//! the htsim topology-file reader so one fabric description serves both
//! simulators.
//!
//! Node numbering: hosts `0..hosts`, then ToRs, then aggregation/spine, then
//! core switches. Every physical link is two unidirectional *ports*; a port
//! is the egress queue of its `from` node towards `to`.

use crate::rng::Pcg32;
use crate::time::{Ps, PS_PER_NS};

/// Kind of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// An endpoint (NIC).
    Host,
    /// Top-of-rack / leaf switch (tier 0).
    Tor,
    /// Spine (2-tier) or aggregation (3-tier) switch (tier 1).
    Agg,
    /// Core switch (tier 2).
    Core,
}

/// Shape of a fabric, independent of how it was described.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FabricSpec {
    /// Number of hosts.
    pub hosts: u32,
    /// 2 (leaf-spine) or 3 (fat tree).
    pub tiers: u8,
    /// Hosts under each ToR.
    pub hosts_per_tor: u32,
    /// Uplinks per ToR (= spines in 2-tier, = aggs per pod in 3-tier).
    pub tor_up: u32,
    /// ToRs per pod (3-tier; 2-tier: all ToRs).
    pub tors_per_pod: u32,
    /// Uplinks per aggregation switch (3-tier).
    pub agg_up: u32,
    /// Link speed per tier (host↔ToR, ToR↔agg, agg↔core), Gbit/s.
    pub gbps: [u32; 3],
    /// One-way latency per link tier incl. the switch's forwarding latency, ns.
    pub latency_ns: [u32; 3],
}

impl FabricSpec {
    /// Leaf-spine with `radix`-port ToRs: `radix/2` hosts per ToR, `radix/2 /
    /// oversub` uplinks, one to each spine.
    pub fn leaf_spine(hosts: u32, radix: u32, oversub: u32, gbps: u32, latency_ns: u32) -> Result<Self, String> {
        let hpt = radix / 2;
        if hpt == 0 || !hosts.is_multiple_of(hpt) {
            return Err(format!("{hosts} hosts is not a multiple of radix/2 = {hpt}"));
        }
        if oversub == 0 || !hpt.is_multiple_of(oversub) {
            return Err(format!("radix/2 = {hpt} not divisible by oversubscription {oversub}"));
        }
        Ok(Self {
            hosts,
            tiers: 2,
            hosts_per_tor: hpt,
            tor_up: hpt / oversub,
            tors_per_pod: hosts / hpt,
            agg_up: 0,
            gbps: [gbps; 3],
            latency_ns: [latency_ns; 3],
        })
    }

    /// k-ary 3-tier fat tree (`radix` = k): pods of k/2 ToRs × k/2 hosts; each
    /// ToR has `k/2 / oversub` uplinks, one to each of its pod's aggs; each agg
    /// has k/2 uplinks, one to each core of its group.
    pub fn fat_tree(hosts: u32, radix: u32, oversub: u32, gbps: u32, latency_ns: u32) -> Result<Self, String> {
        let h = radix / 2;
        if h == 0 || !hosts.is_multiple_of(h * h) {
            return Err(format!("{hosts} hosts is not a multiple of (k/2)² = {}", h * h));
        }
        if oversub == 0 || !h.is_multiple_of(oversub) {
            return Err(format!("k/2 = {h} not divisible by oversubscription {oversub}"));
        }
        Ok(Self {
            hosts,
            tiers: 3,
            hosts_per_tor: h,
            tor_up: h / oversub,
            tors_per_pod: h,
            agg_up: h,
            gbps: [gbps; 3],
            latency_ns: [latency_ns; 3],
        })
    }

    /// Reads an htsim fat-tree topology file (`Nodes`, `Tiers`, `Podsize`, then
    /// `Tier 0`/`Tier 1`/`Tier 2` blocks with `Downlink_speed_Gbps`,
    /// `Radix_Down`, `Radix_Up`, `Downlink_Latency_ns`, `Switch_Latency_ns`,
    /// `Oversubscribed`; `Queue_*` and `Bundle` are accepted and ignored —
    /// buffers come from the simulator's switch config, bundles must be 1).
    ///
    /// Mapping: tier 0 = ToR (`Radix_Down` hosts, `Radix_Up` uplinks, or
    /// `Radix_Down / Oversubscribed` when `Radix_Up` is absent), its
    /// `Downlink_speed_Gbps` is the host link; tier 1 = spine/agg
    /// (`Downlink_speed_Gbps` is the ToR↔agg link, `Radix_Up` the agg
    /// uplinks in 3 tiers); tier 2 = core. `Podsize` is hosts per pod. A link's
    /// latency is the `Downlink_Latency_ns` plus the `Switch_Latency_ns` of the
    /// tier that owns the downlink.
    pub fn from_htsim(text: &str) -> Result<Self, String> {
        let mut nodes = None;
        let mut tiers = None;
        let mut podsize = None;
        let mut cur: Option<usize> = None;
        #[derive(Default, Clone, Copy)]
        struct T {
            gbps: Option<u32>,
            down: Option<u32>,
            up: Option<u32>,
            lat: u32,
            sw: u32,
            oversub: Option<u32>,
        }
        let mut t = [T::default(); 3];
        for (ln, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let mut it = line.split_whitespace();
            let key = it.next().unwrap().to_ascii_lowercase();
            let val: Option<u32> = it
                .next()
                .map(|v| v.parse::<f64>().map(|x| x as u32))
                .transpose()
                .map_err(|e| format!("line {}: {e}", ln + 1))?;
            let need = |v: Option<u32>| v.ok_or_else(|| format!("line {}: `{line}` needs a value", ln + 1));
            match key.as_str() {
                "nodes" => nodes = Some(need(val)?),
                "tiers" => tiers = Some(need(val)?),
                "podsize" => podsize = Some(need(val)?),
                "tier" => {
                    let i = need(val)? as usize;
                    if i > 2 {
                        return Err(format!("line {}: tier {i} > 2", ln + 1));
                    }
                    cur = Some(i);
                }
                k => {
                    let i = cur.ok_or_else(|| format!("line {}: `{k}` outside a Tier block", ln + 1))?;
                    let v = need(val)?;
                    match k {
                        "downlink_speed_gbps" => t[i].gbps = Some(v),
                        "radix_down" => t[i].down = Some(v),
                        "radix_up" => t[i].up = Some(v),
                        "downlink_latency_ns" => t[i].lat = v,
                        "switch_latency_ns" => t[i].sw = v,
                        "oversubscribed" => t[i].oversub = Some(v),
                        "bundle" if v != 1 => return Err("Bundle > 1 is not supported".into()),
                        "bundle" | "queue_down" | "queue_up" => {}
                        other => return Err(format!("line {}: unknown key `{other}`", ln + 1)),
                    }
                }
            }
        }
        let hosts = nodes.ok_or("missing Nodes")?;
        let tiers = tiers.ok_or("missing Tiers")? as u8;
        if !(2..=3).contains(&tiers) {
            return Err("Tiers must be 2 or 3".into());
        }
        let hpt = t[0].down.ok_or("Tier 0 needs Radix_Down")?;
        let tor_up = match (t[0].up, t[0].oversub) {
            (Some(u), _) => u,
            (None, Some(o)) => hpt / o.max(1),
            (None, None) => hpt,
        };
        let g0 = t[0].gbps.ok_or("Tier 0 needs Downlink_speed_Gbps")?;
        let g1 = t[1].gbps.unwrap_or(g0);
        let g2 = t[2].gbps.unwrap_or(g1);
        let mut lat = [t[0].lat + t[0].sw, t[1].lat + t[1].sw, t[2].lat + t[2].sw];
        if tiers == 2 {
            lat[2] = lat[1];
        }
        if hosts % hpt != 0 {
            return Err(format!("Nodes {hosts} not a multiple of Radix_Down {hpt}"));
        }
        let tors = hosts / hpt;
        let (tors_per_pod, agg_up) = if tiers == 2 {
            (tors, 0)
        } else {
            let pod = podsize.ok_or("3 tiers need Podsize")?;
            if pod % hpt != 0 || hosts % pod != 0 {
                return Err("Podsize must be a multiple of Radix_Down and divide Nodes".into());
            }
            (pod / hpt, t[1].up.ok_or("Tier 1 needs Radix_Up in 3 tiers")?)
        };
        Ok(Self { hosts, tiers, hosts_per_tor: hpt, tor_up, tors_per_pod, agg_up, gbps: [g0, g1, g2], latency_ns: lat })
    }

    /// Writes this fabric as an htsim topology file.
    pub fn to_htsim(&self) -> String {
        let mut s =
            format!("Nodes {}\nTiers {}\nPodsize {}\n", self.hosts, self.tiers, self.tors_per_pod * self.hosts_per_tor);
        s += &format!(
            "\nTier 0\nDownlink_speed_Gbps {}\nRadix_Down {}\nRadix_Up {}\nDownlink_Latency_ns {}\nSwitch_Latency_ns 0\n",
            self.gbps[0], self.hosts_per_tor, self.tor_up, self.latency_ns[0]
        );
        s += &format!("\nTier 1\nDownlink_speed_Gbps {}\nRadix_Down {}\n", self.gbps[1], self.tors_per_pod);
        if self.tiers == 3 {
            s += &format!("Radix_Up {}\n", self.agg_up);
        }
        s += &format!("Downlink_Latency_ns {}\nSwitch_Latency_ns 0\n", self.latency_ns[1]);
        if self.tiers == 3 {
            let pods = self.hosts / (self.tors_per_pod * self.hosts_per_tor);
            s += &format!(
                "\nTier 2\nDownlink_speed_Gbps {}\nRadix_Down {}\nDownlink_Latency_ns {}\nSwitch_Latency_ns 0\n",
                self.gbps[2], pods, self.latency_ns[2]
            );
        }
        s
    }
}

/// One unidirectional link (egress port).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortInfo {
    /// Node that transmits.
    pub from: u32,
    /// Node that receives.
    pub to: u32,
    /// Speed, Gbit/s.
    pub gbps: u32,
    /// Propagation + forwarding latency, ps.
    pub latency_ps: Ps,
    /// Link tier: 0 host↔ToR, 1 ToR↔agg/spine, 2 agg↔core.
    pub tier: u8,
    /// The opposite direction's port.
    pub reverse: u32,
    /// Link is up.
    pub up: bool,
}

/// A built fabric with its routing tables.
#[derive(Clone, Debug)]
pub struct Topology {
    /// The spec it was built from.
    pub spec: FabricSpec,
    /// Number of hosts.
    pub n_hosts: u32,
    /// Kind of every node.
    pub kind: Vec<NodeKind>,
    /// Every port.
    pub ports: Vec<PortInfo>,
    /// Egress ports of every node.
    pub node_ports: Vec<Vec<u32>>,
    /// Host → its uplink port.
    pub host_up: Vec<u32>,
    /// Host → ToR's port towards the host.
    pub host_down: Vec<u32>,
    /// Host → ToR index.
    pub host_tor: Vec<u32>,
    /// ToR node ids.
    pub tors: Vec<u32>,
    route_idx: Vec<(u32, u16)>,
    route_ports: Vec<u32>,
}

impl Topology {
    /// Builds the fabric of `spec`.
    pub fn build(spec: &FabricSpec) -> Result<Self, String> {
        let h = spec.hosts;
        let n_tor = h / spec.hosts_per_tor;
        let mut kind = vec![NodeKind::Host; h as usize];
        let mut ports: Vec<PortInfo> = Vec::new();
        let link = |ports: &mut Vec<PortInfo>, a: u32, b: u32, tier: u8| {
            let i = ports.len() as u32;
            let lat = spec.latency_ns[tier as usize] as u64 * PS_PER_NS;
            let g = spec.gbps[tier as usize];
            ports.push(PortInfo { from: a, to: b, gbps: g, latency_ps: lat, tier, reverse: i + 1, up: true });
            ports.push(PortInfo { from: b, to: a, gbps: g, latency_ps: lat, tier, reverse: i, up: true });
        };
        let tor0 = h;
        kind.extend(std::iter::repeat_n(NodeKind::Tor, n_tor as usize));
        for host in 0..h {
            link(&mut ports, host, tor0 + host / spec.hosts_per_tor, 0);
        }
        if spec.tiers == 2 {
            let spine0 = tor0 + n_tor;
            kind.extend(std::iter::repeat_n(NodeKind::Agg, spec.tor_up as usize));
            for t in 0..n_tor {
                for s in 0..spec.tor_up {
                    link(&mut ports, tor0 + t, spine0 + s, 1);
                }
            }
        } else {
            let pods = n_tor / spec.tors_per_pod;
            let aggs_per_pod = spec.tor_up;
            let agg0 = tor0 + n_tor;
            let n_agg = pods * aggs_per_pod;
            let core0 = agg0 + n_agg;
            let n_core = aggs_per_pod * spec.agg_up;
            kind.extend(std::iter::repeat_n(NodeKind::Agg, n_agg as usize));
            kind.extend(std::iter::repeat_n(NodeKind::Core, n_core as usize));
            for t in 0..n_tor {
                let pod = t / spec.tors_per_pod;
                for a in 0..aggs_per_pod {
                    link(&mut ports, tor0 + t, agg0 + pod * aggs_per_pod + a, 1);
                }
            }
            for pod in 0..pods {
                for a in 0..aggs_per_pod {
                    for c in 0..spec.agg_up {
                        link(&mut ports, agg0 + pod * aggs_per_pod + a, core0 + a * spec.agg_up + c, 2);
                    }
                }
            }
        }
        let n = kind.len();
        let mut node_ports = vec![Vec::new(); n];
        for (i, p) in ports.iter().enumerate() {
            node_ports[p.from as usize].push(i as u32);
        }
        let host_up: Vec<u32> = (0..h).map(|x| node_ports[x as usize][0]).collect();
        let host_down: Vec<u32> = host_up.iter().map(|&p| ports[p as usize].reverse).collect();
        let host_tor: Vec<u32> = (0..h).map(|x| x / spec.hosts_per_tor).collect();
        let tors = (0..n_tor).map(|t| tor0 + t).collect();
        let mut topo = Self {
            spec: spec.clone(),
            n_hosts: h,
            kind,
            ports,
            node_ports,
            host_up,
            host_down,
            host_tor,
            tors,
            route_idx: Vec::new(),
            route_ports: Vec::new(),
        };
        topo.compute_routes()?;
        Ok(topo)
    }

    /// Number of nodes.
    pub fn n_nodes(&self) -> usize {
        self.kind.len()
    }

    /// Recomputes shortest-path ECMP next hops to every ToR over the links
    /// that are up. Fails if some ToR can no longer reach another.
    pub fn compute_routes(&mut self) -> Result<(), String> {
        let n = self.n_nodes();
        let h = self.n_hosts as usize;
        let n_sw = n - h;
        let n_tor = self.tors.len();
        self.route_idx = vec![(0, 0); n_sw * n_tor];
        self.route_ports.clear();
        let mut dist = vec![u32::MAX; n];
        let mut queue = Vec::with_capacity(n);
        for (ti, &tor) in self.tors.iter().enumerate() {
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            queue.clear();
            dist[tor as usize] = 0;
            queue.push(tor);
            let mut qi = 0;
            while qi < queue.len() {
                let u = queue[qi];
                qi += 1;
                for &p in &self.node_ports[u as usize] {
                    let pi = self.ports[p as usize];
                    if !pi.up || (pi.to as usize) < h {
                        continue;
                    }
                    if dist[pi.to as usize] == u32::MAX {
                        dist[pi.to as usize] = dist[u as usize] + 1;
                        queue.push(pi.to);
                    }
                }
            }
            for s in h..n {
                if s == tor as usize {
                    continue;
                }
                if dist[s] == u32::MAX {
                    if self.kind[s] == NodeKind::Tor {
                        return Err(format!("ToR {s} cannot reach ToR {tor} with the failed links"));
                    }
                    continue;
                }
                let start = self.route_ports.len() as u32;
                for &p in &self.node_ports[s] {
                    let pi = self.ports[p as usize];
                    if pi.up && (pi.to as usize) >= h && dist[pi.to as usize] + 1 == dist[s] {
                        self.route_ports.push(p);
                    }
                }
                let len = self.route_ports.len() as u32 - start;
                self.route_idx[(s - h) * n_tor + ti] = (start, len as u16);
            }
        }
        Ok(())
    }

    /// ECMP candidates at switch `sw` towards ToR index `dst_tor`.
    pub fn next_hops(&self, sw: u32, dst_tor: u32) -> &[u32] {
        let (s, l) = self.route_idx[(sw - self.n_hosts) as usize * self.tors.len() + dst_tor as usize];
        &self.route_ports[s as usize..(s + l as u32) as usize]
    }

    /// All ToR↔upper links (tier 1), as the port id of the ToR's direction.
    pub fn tier1_links(&self) -> Vec<u32> {
        (0..self.ports.len() as u32)
            .filter(|&p| {
                let pi = self.ports[p as usize];
                pi.tier == 1 && self.kind[pi.from as usize] == NodeKind::Tor
            })
            .collect()
    }

    /// Takes `count` random ToR↔spine/agg links down (both directions), keeping
    /// every ToR connected; returns the ToR-side port ids of the failed links.
    pub fn fail_random_tier1_links(&mut self, count: u32, seed: u64) -> Result<Vec<u32>, String> {
        let mut cand = self.tier1_links();
        let mut rng = Pcg32::new(seed, 0xfa11);
        rng.shuffle(&mut cand);
        let mut failed = Vec::new();
        let mut per_tor_up: Vec<u32> = vec![self.spec.tor_up; self.tors.len()];
        for p in cand {
            if failed.len() as u32 >= count {
                break;
            }
            let tor = (self.ports[p as usize].from - self.n_hosts) as usize;
            if per_tor_up[tor] <= 1 {
                continue;
            }
            per_tor_up[tor] -= 1;
            self.set_link(p, false);
            failed.push(p);
        }
        if (failed.len() as u32) < count {
            return Err(format!("could only fail {} of {count} links", failed.len()));
        }
        self.compute_routes()?;
        Ok(failed)
    }

    /// Sets both directions of the link of port `p` up or down (call
    /// [`Topology::compute_routes`] afterwards).
    pub fn set_link(&mut self, p: u32, up: bool) {
        let r = self.ports[p as usize].reverse;
        self.ports[p as usize].up = up;
        self.ports[r as usize].up = up;
    }

    /// Longest shortest-path RTT between two hosts for a `data_bytes` packet
    /// answered by an `ack_bytes` packet (no queueing): the network-wide base
    /// RTT the transports are configured with.
    pub fn max_base_rtt_ps(&self, data_bytes: u64, ack_bytes: u64) -> Ps {
        let s = &self.spec;
        let one_way = |b: u64| -> Ps {
            let mut t = 0;
            let tiers: &[usize] = if s.tiers == 2 { &[0, 1, 1, 0] } else { &[0, 1, 2, 2, 1, 0] };
            for &tier in tiers {
                t += crate::time::ser_ps(b, s.gbps[tier]) + s.latency_ns[tier] as u64 * PS_PER_NS;
            }
            t
        };
        one_way(data_bytes) + one_way(ack_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaf_spine_shape_and_routes() {
        let spec = FabricSpec::leaf_spine(32, 8, 1, 100, 1000).unwrap();
        let t = Topology::build(&spec).unwrap();
        assert_eq!(t.tors.len(), 8);
        assert_eq!(t.n_nodes(), 32 + 8 + 4);
        // each ToR reaches another ToR through all 4 spines
        assert_eq!(t.next_hops(t.tors[0], 5).len(), 4);
        // a spine reaches a ToR directly
        let spine = t.tors[7] + 1;
        assert_eq!(t.next_hops(spine, 3).len(), 1);
        let os = FabricSpec::leaf_spine(32, 8, 4, 100, 1000).unwrap();
        assert_eq!(os.tor_up, 1);
    }

    #[test]
    fn fat_tree_shape_and_routes() {
        let spec = FabricSpec::fat_tree(128, 8, 1, 100, 1000).unwrap();
        let t = Topology::build(&spec).unwrap();
        // k=8: 128 hosts, 32 ToRs, 32 aggs, 16 cores
        assert_eq!(t.tors.len(), 32);
        assert_eq!(t.n_nodes(), 128 + 32 + 32 + 16);
        // same pod: 4 aggs; other pod: 4 aggs, then each agg 4 cores
        assert_eq!(t.next_hops(t.tors[0], 1).len(), 4);
        assert_eq!(t.next_hops(t.tors[0], 31).len(), 4);
        let agg0 = t.tors[31] + 1;
        assert_eq!(t.next_hops(agg0, 1).len(), 1); // down to ToR 1 in pod 0
        assert_eq!(t.next_hops(agg0, 31).len(), 4); // up to 4 cores
                                                    // base RTT: 6 links each way
        let rtt = t.max_base_rtt_ps(4160, 64);
        let ser = 6 * (crate::time::ser_ps(4160, 100) + crate::time::ser_ps(64, 100));
        assert_eq!(rtt, 12_000_000 + ser);
    }

    #[test]
    fn failed_links_are_avoided() {
        let spec = FabricSpec::leaf_spine(64, 16, 1, 100, 1000).unwrap();
        let mut t = Topology::build(&spec).unwrap();
        let failed = t.fail_random_tier1_links(5, 1).unwrap();
        assert_eq!(failed.len(), 5);
        for &p in &failed {
            let pi = t.ports[p as usize];
            let tor_idx = pi.from - t.n_hosts;
            let spine = pi.to;
            // no ToR routes to the failed ToR via that spine, and the ToR never uses the dead port
            for other in 0..t.tors.len() as u32 {
                if other == tor_idx {
                    continue;
                }
                assert!(!t.next_hops(t.tors[other as usize], tor_idx).iter().any(|&q| t.ports[q as usize].to == spine));
                assert!(!t.next_hops(pi.from, other).contains(&p));
            }
        }
    }

    #[test]
    fn htsim_file_round_trip_and_parse() {
        let text = "Nodes 32\nTiers 2\nPodsize 32\n\nTier 0\nDownlink_speed_Gbps 100\nRadix_Down 8\nRadix_Up 2\nQueue_Down 1001\nDownlink_Latency_ns 1000\nSwitch_Latency_ns 0\nOversubscribed 4\n\nTier 1\nDownlink_speed_Gbps 100\nRadix_Down 4\nDownlink_Latency_ns 1000\nSwitch_Latency_ns 0\n";
        let s = FabricSpec::from_htsim(text).unwrap();
        assert_eq!((s.hosts, s.tiers, s.hosts_per_tor, s.tor_up), (32, 2, 8, 2));
        assert_eq!(s.latency_ns[0], 1000);
        let ft = FabricSpec::fat_tree(1024, 16, 1, 400, 1000).unwrap();
        assert_eq!(FabricSpec::from_htsim(&ft.to_htsim()).unwrap(), ft);
        let ls = FabricSpec::leaf_spine(128, 16, 4, 400, 1000).unwrap();
        assert_eq!(FabricSpec::from_htsim(&ls.to_htsim()).unwrap(), ls);
        assert!(FabricSpec::from_htsim("Nodes 4\nTiers 5\n").is_err());
    }
}
