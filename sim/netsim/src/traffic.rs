//! Traffic: htsim connection-matrix files and generators (permutation, N:1
//! incast, all-to-all with bounded parallelism, ring and double-binary-tree
//! allreduce with step dependencies as in STrack §4.3).
//!
//! A flow may depend on other flows: it starts `start` after the last of them
//! completes (at its sender), which expresses the collectives' steps.

use crate::rng::Pcg32;
use crate::time::{Ps, PS_PER_US};

/// One message (connection) to simulate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowSpec {
    /// Source host.
    pub src: u32,
    /// Destination host.
    pub dst: u32,
    /// Message bytes.
    pub bytes: u64,
    /// Start time (absolute, or after the dependencies complete).
    pub start: Ps,
    /// Flows (indices) that must complete first.
    pub deps: Vec<u32>,
}

/// A workload.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Workload {
    /// Hosts the workload needs (at least).
    pub nodes: u32,
    /// Flows.
    pub flows: Vec<FlowSpec>,
}

impl Workload {
    /// Writes the workload in htsim's connection-matrix format (dependencies
    /// as `send_done_trigger` / `trigger` pairs, one trigger per flow that
    /// others wait for, `barrier` when several flows must finish).
    pub fn to_htsim(&self) -> String {
        let mut s = format!("Nodes {}\nConnections {}\n", self.nodes, self.flows.len());
        let mut waited: Vec<bool> = vec![false; self.flows.len()];
        for f in &self.flows {
            for &d in &f.deps {
                waited[d as usize] = true;
            }
        }
        // triggers: one per dependent flow with deps, id = flow id + 1
        for (i, f) in self.flows.iter().enumerate() {
            s += &format!("{}->{} id {}", f.src, f.dst, i + 1);
            if f.deps.is_empty() {
                s += &format!(" start {}", f.start as f64 / PS_PER_US as f64);
            } else {
                s += &format!(" trigger {}", i + 1);
            }
            s += &format!(" size {}", f.bytes);
            if waited[i] {
                s += &format!(" send_done_trigger {}", 100_000_000 + i);
            }
            s += "\n";
        }
        for (i, f) in self.flows.iter().enumerate() {
            if !f.deps.is_empty() {
                // trigger i+1 fires when all of its sources finished
                s += &format!(
                    "trigger id {} barrier {}\n",
                    i + 1,
                    f.deps.iter().map(|d| (100_000_000 + d).to_string()).collect::<Vec<_>>().join(",")
                );
            }
        }
        s
    }

    /// Parses htsim's connection-matrix format:
    /// `Nodes N`, `Connections M`, then `a->b [id k] [start T_us] [size B]
    /// [send_done_trigger t] [trigger t] [priority p]` lines, and
    /// `trigger id t oneshot|multishot|barrier [src,...]` lines. `start` is in
    /// microseconds. A connection with `trigger t` waits for every connection
    /// whose `send_done_trigger` is `t` (all trigger kinds are treated as a
    /// barrier over their sources; the optional source list written by
    /// [`Workload::to_htsim`] names trigger ids to wait for instead).
    pub fn from_htsim(text: &str) -> Result<Self, String> {
        use std::collections::HashMap;
        let mut nodes = 0;
        let mut flows = Vec::new();
        let mut waits: Vec<Option<u64>> = Vec::new();
        let mut done_trig: HashMap<u64, Vec<u32>> = HashMap::new();
        let mut trig_sources: HashMap<u64, Vec<u64>> = HashMap::new();
        for (ln, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let err = |m: &str| format!("line {}: {m}: `{line}`", ln + 1);
            let toks: Vec<&str> = line.split_whitespace().collect();
            match toks[0].to_ascii_lowercase().as_str() {
                "nodes" => nodes = toks.get(1).and_then(|v| v.parse().ok()).ok_or_else(|| err("bad Nodes"))?,
                "connections" => {}
                "trigger" => {
                    let id: u64 = toks.get(2).and_then(|v| v.parse().ok()).ok_or_else(|| err("bad trigger id"))?;
                    if let Some(list) = toks.get(4) {
                        let v: Result<Vec<u64>, _> = list.split(',').map(|x| x.parse()).collect();
                        trig_sources.insert(id, v.map_err(|_| err("bad trigger source list"))?);
                    }
                }
                _ => {
                    let (a, b) = toks[0].split_once("->").ok_or_else(|| err("expected a->b"))?;
                    let src: u32 = a.parse().map_err(|_| err("bad src"))?;
                    let dst: u32 = b.parse().map_err(|_| err("bad dst"))?;
                    let mut f = FlowSpec { src, dst, bytes: 0, start: 0, deps: vec![] };
                    let mut wait = None;
                    let mut i = 1;
                    while i + 1 < toks.len() + 1 && i < toks.len() {
                        let key = toks[i];
                        let val = toks.get(i + 1).ok_or_else(|| err("key without value"))?;
                        match key {
                            "id" | "priority" => {}
                            "start" => {
                                f.start = (val.parse::<f64>().map_err(|_| err("bad start"))? * PS_PER_US as f64) as Ps
                            }
                            "size" => f.bytes = val.parse().map_err(|_| err("bad size"))?,
                            "send_done_trigger" => done_trig
                                .entry(val.parse().map_err(|_| err("bad trigger"))?)
                                .or_default()
                                .push(flows.len() as u32),
                            "trigger" => wait = Some(val.parse().map_err(|_| err("bad trigger"))?),
                            "recv_done_trigger" => return Err(err("recv_done_trigger is not supported")),
                            _ => return Err(err("unknown key")),
                        }
                        i += 2;
                    }
                    nodes = nodes.max(src.max(dst) + 1);
                    flows.push(f);
                    waits.push(wait);
                }
            }
        }
        for (i, w) in waits.iter().enumerate() {
            if let Some(t) = w {
                let srcs = trig_sources.get(t).cloned().unwrap_or_else(|| vec![*t]);
                let mut deps = Vec::new();
                for s in srcs {
                    deps.extend(done_trig.get(&s).cloned().unwrap_or_default());
                }
                if deps.is_empty() {
                    return Err(format!("connection {} waits for trigger {t} that nothing fires", i + 1));
                }
                flows[i].start = 0;
                flows[i].deps = deps;
            }
        }
        Ok(Self { nodes, flows })
    }
}

/// Random permutation: every host sends `bytes` to exactly one other host and
/// receives from exactly one (a derangement).
pub fn permutation(n: u32, bytes: u64, seed: u64) -> Workload {
    let mut rng = Pcg32::new(seed, 0x9e7);
    let mut p: Vec<u32> = (0..n).collect();
    loop {
        rng.shuffle(&mut p);
        if p.iter().enumerate().all(|(i, &d)| i as u32 != d) {
            break;
        }
    }
    Workload {
        nodes: n,
        flows: (0..n).map(|i| FlowSpec { src: i, dst: p[i as usize], bytes, start: 0, deps: vec![] }).collect(),
    }
}

/// N:1 incast: `fan_in` random distinct senders (not under the receiver's
/// ToR when `hosts_per_tor` allows) to host `receiver`.
pub fn incast(n: u32, fan_in: u32, receiver: u32, bytes: u64, hosts_per_tor: u32, seed: u64) -> Workload {
    let mut rng = Pcg32::new(seed, 0x1ca);
    let rtor = receiver / hosts_per_tor.max(1);
    let mut cand: Vec<u32> = (0..n).filter(|&h| h != receiver && h / hosts_per_tor.max(1) != rtor).collect();
    if (cand.len() as u32) < fan_in {
        cand = (0..n).filter(|&h| h != receiver).collect();
    }
    rng.shuffle(&mut cand);
    Workload {
        nodes: n,
        flows: cand
            .iter()
            .take(fan_in as usize)
            .map(|&s| FlowSpec { src: s, dst: receiver, bytes, start: 0, deps: vec![] })
            .collect(),
    }
}

/// All-to-all over `n` ranks: rank r's i-th message goes to (r+i) mod n
/// (i = 1..n−1); at most `parallel` messages of a rank are active: message i
/// waits for message i−parallel of the same rank.
pub fn all_to_all(n: u32, bytes: u64, parallel: u32) -> Workload {
    let mut flows = Vec::new();
    let per = n - 1;
    for r in 0..n {
        for i in 1..n {
            let idx = flows.len() as u32;
            let deps = if i > parallel { vec![idx - parallel] } else { vec![] };
            flows.push(FlowSpec { src: r, dst: (r + i) % n, bytes, start: 0, deps });
        }
    }
    debug_assert_eq!(flows.len() as u32, n * per);
    Workload { nodes: n, flows }
}

/// Ring allreduce of `bytes` over `ranks`: 2(n−1) steps of `bytes/n` chunks;
/// step s from rank i to rank i+1 waits for step s−1 from rank i−1 (the
/// chunk it forwards or reduces).
pub fn ring_allreduce(ranks: &[u32], bytes: u64) -> Workload {
    let n = ranks.len() as u32;
    let chunk = bytes.div_ceil(n as u64);
    let mut flows = Vec::new();
    for s in 0..2 * (n - 1) {
        for i in 0..n {
            let deps = if s == 0 { vec![] } else { vec![(s - 1) * n + (i + n - 1) % n] };
            flows.push(FlowSpec {
                src: ranks[i as usize],
                dst: ranks[((i + 1) % n) as usize],
                bytes: chunk,
                start: 0,
                deps,
            });
        }
    }
    Workload { nodes: ranks.iter().copied().max().unwrap_or(0) + 1, flows }
}

/// Double binary tree allreduce (NCCL's DBT, without chunk pipelining): two
/// complementary binary trees each reduce half of `bytes` to the root (a node
/// sends to its parent after receiving from all its children) and broadcast
/// it back (a node forwards to its children after receiving from its parent;
/// the root starts after its reduce). Tree 2 is tree 1 with ranks shifted by
/// one, so most leaves of one tree are interior nodes of the other.
pub fn dbt_allreduce(ranks: &[u32], bytes: u64) -> Workload {
    let n = ranks.len();
    let half = bytes.div_ceil(2);
    let mut flows: Vec<FlowSpec> = Vec::new();
    for tree in 0..2 {
        let rank = |pos: usize| ranks[(pos + tree) % n];
        // heap layout over positions 0..n: parent(p) = (p-1)/2
        let parent = |p: usize| (p - 1) / 2;
        let children = |p: usize| [2 * p + 1, 2 * p + 2].into_iter().filter(move |&c| c < n);
        // reduce: flow up[p] = p -> parent(p); created bottom-up
        let mut up = vec![u32::MAX; n];
        for p in (1..n).rev() {
            let deps: Vec<u32> = children(p).map(|c| up[c]).collect();
            up[p] = flows.len() as u32;
            flows.push(FlowSpec { src: rank(p), dst: rank(parent(p)), bytes: half, start: 0, deps });
        }
        // broadcast: down[c] = parent(c) -> c
        let mut down = vec![u32::MAX; n];
        for c in 1..n {
            let p = parent(c);
            let deps: Vec<u32> = if p == 0 { children(0).map(|x| up[x]).collect() } else { vec![down[p]] };
            down[c] = flows.len() as u32;
            flows.push(FlowSpec { src: rank(p), dst: rank(c), bytes: half, start: 0, deps });
        }
    }
    Workload { nodes: ranks.iter().copied().max().unwrap_or(0) + 1, flows }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_is_a_derangement() {
        let w = permutation(64, 1000, 3);
        let mut rx = vec![0; 64];
        for f in &w.flows {
            assert_ne!(f.src, f.dst);
            rx[f.dst as usize] += 1;
        }
        assert!(rx.iter().all(|&c| c == 1));
    }

    #[test]
    fn incast_senders_distinct_and_off_tor() {
        let w = incast(64, 8, 5, 1000, 8, 1);
        let mut s: Vec<u32> = w.flows.iter().map(|f| f.src).collect();
        s.sort();
        s.dedup();
        assert_eq!(s.len(), 8);
        assert!(w.flows.iter().all(|f| f.dst == 5 && f.src / 8 != 0));
    }

    #[test]
    fn collectives_dependencies() {
        let r: Vec<u32> = (0..4).collect();
        let ring = ring_allreduce(&r, 4000);
        assert_eq!(ring.flows.len(), 2 * 3 * 4);
        assert_eq!(ring.flows[4].deps, vec![3]); // step 1 rank 0 waits on step 0 rank 3
        let dbt = dbt_allreduce(&(0..7).collect::<Vec<_>>(), 1000);
        // per tree: 6 up + 6 down
        assert_eq!(dbt.flows.len(), 24);
        // every dependency points to an earlier flow
        for (i, f) in dbt.flows.iter().enumerate() {
            assert!(f.deps.iter().all(|&d| (d as usize) < i));
        }
        let a2a = all_to_all(4, 10, 1);
        assert_eq!(a2a.flows.len(), 12);
        assert_eq!(a2a.flows[1].deps, vec![0]);
    }

    #[test]
    fn htsim_connection_matrix_round_trip() {
        let text = "Nodes 8\nConnections 3\n0->5 id 1 start 0 size 2000000\n1->6 id 2 start 1.5 size 100 send_done_trigger 7\n2->7 id 3 trigger 7 size 10\ntrigger id 7 oneshot\n";
        let w = Workload::from_htsim(text).unwrap();
        assert_eq!(w.nodes, 8);
        assert_eq!(w.flows[0], FlowSpec { src: 0, dst: 5, bytes: 2_000_000, start: 0, deps: vec![] });
        assert_eq!(w.flows[1].start, 1_500_000);
        assert_eq!(w.flows[2].deps, vec![1]);
        let dbt = dbt_allreduce(&(0..7).collect::<Vec<_>>(), 1000);
        assert_eq!(Workload::from_htsim(&dbt.to_htsim()).unwrap(), dbt);
        assert!(Workload::from_htsim("0->1 trigger 3 size 5\n").is_err());
    }
}
