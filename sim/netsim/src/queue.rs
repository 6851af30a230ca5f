//! Event queue: a calendar (timing wheel) of fixed-width time buckets with a
//! binary-heap overflow for events beyond its horizon. Events pop in exact
//! (time, sequence) order — the same order as a plain binary heap, so results
//! do not depend on the queue — but pushes are O(1) for the common case (an
//! event a few µs ahead) and the working set stays in cache.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::time::Ps;

/// One event: time, insertion sequence (tie-break), opaque code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Event {
    /// Time, ps.
    pub t: Ps,
    /// Insertion sequence number.
    pub seq: u64,
    /// Payload.
    pub code: u64,
}

const SHIFT: u32 = 14; // 16.4 ns buckets
const NB: usize = 1 << 15; // horizon ≈ 537 µs

/// Calendar queue.
pub struct EventQueue {
    buckets: Vec<Vec<Event>>,
    /// Index (absolute, t >> SHIFT) of the bucket being drained.
    cur: u64,
    /// The current bucket is sorted (descending, pop from the back).
    cur_sorted: bool,
    overflow: BinaryHeap<Reverse<Event>>,
    len: usize,
    seq: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl EventQueue {
    /// Empty queue starting at time 0.
    pub fn new() -> Self {
        Self {
            buckets: (0..NB).map(|_| Vec::new()).collect(),
            cur: 0,
            cur_sorted: false,
            overflow: BinaryHeap::new(),
            len: 0,
            seq: 0,
        }
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.len
    }

    /// No pending events.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Schedules `code` at `t` (must not be earlier than the last popped time).
    pub fn push(&mut self, t: Ps, code: u64) {
        self.seq += 1;
        let e = Event { t, seq: self.seq, code };
        self.len += 1;
        let b = t >> SHIFT;
        if b < self.cur {
            // cannot happen for a causal simulation; keep it correct anyway
            self.overflow.push(Reverse(e));
            return;
        }
        if b >= self.cur + NB as u64 {
            self.overflow.push(Reverse(e));
            return;
        }
        let v = &mut self.buckets[(b as usize) & (NB - 1)];
        if b == self.cur && self.cur_sorted {
            // keep descending order: insert before the first smaller element
            let pos = v.partition_point(|x| *x > e);
            v.insert(pos, e);
        } else {
            v.push(e);
        }
    }

    /// Pops the earliest event.
    pub fn pop(&mut self) -> Option<Event> {
        if self.len == 0 {
            return None;
        }
        loop {
            // pull overflow events that now fall inside the horizon
            while let Some(Reverse(e)) = self.overflow.peek() {
                let b = e.t >> SHIFT;
                if b < self.cur + NB as u64 {
                    let e = self.overflow.pop().unwrap().0;
                    let b = (e.t >> SHIFT).max(self.cur);
                    let v = &mut self.buckets[(b as usize) & (NB - 1)];
                    if b == self.cur && self.cur_sorted {
                        let pos = v.partition_point(|x| *x > e);
                        v.insert(pos, e);
                    } else {
                        v.push(e);
                    }
                } else {
                    break;
                }
            }
            let idx = (self.cur as usize) & (NB - 1);
            if !self.buckets[idx].is_empty() {
                if !self.cur_sorted {
                    self.buckets[idx].sort_unstable_by(|a, b| b.cmp(a));
                    self.cur_sorted = true;
                }
                self.len -= 1;
                return self.buckets[idx].pop();
            }
            // advance; jump straight to the overflow's bucket if the wheel is empty
            self.cur_sorted = false;
            if self.len == self.overflow.len() {
                if let Some(Reverse(e)) = self.overflow.peek() {
                    self.cur = (e.t >> SHIFT).max(self.cur + 1);
                    continue;
                }
            }
            self.cur += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Pcg32;

    #[test]
    fn pops_in_time_then_insertion_order_like_a_heap() {
        let mut q = EventQueue::new();
        let mut h = BinaryHeap::new();
        let mut rng = Pcg32::new(3, 3);
        let mut now = 0u64;
        let mut seq = 0u64;
        let mut popped = 0;
        for step in 0..200_000u64 {
            let push = rng.below(3) != 0 || h.is_empty();
            if push {
                // mostly near future, sometimes same time, sometimes far beyond the horizon
                let dt = match rng.below(10) {
                    0 => 0,
                    1 => rng.below(u32::MAX) as u64 * 1000,
                    _ => rng.below(5_000_000) as u64,
                };
                seq += 1;
                q.push(now + dt, step);
                h.push(Reverse(Event { t: now + dt, seq, code: step }));
            } else {
                let a = q.pop().unwrap();
                let b = h.pop().unwrap().0;
                assert_eq!(a, b);
                now = a.t;
                popped += 1;
            }
            assert_eq!(q.len(), h.len());
        }
        while let Some(Reverse(b)) = h.pop() {
            assert_eq!(q.pop().unwrap(), b);
        }
        assert!(q.pop().is_none());
        assert!(popped > 10_000);
    }
}
