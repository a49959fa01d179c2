//! [`Tracker`]: what a running mesh asks of the movement: every node's position at an instant
//! (for the radio medium, at each transmission's start) and whether the neighbour graph has
//! changed (for static routes, looked at on a fixed grid of check instants).

use coaplab_base::time::{Duration, Instant};

use super::Motion;

/// Positions and the neighbour graph of a moving mesh, on the mesh's clock.
#[derive(Debug, Clone)]
pub struct Tracker {
    motion: Motion,
    /// The mesh instant at which movement starts (the run's start, after RPL's warm-up).
    origin: Instant,
    /// The instant `positions` holds, if any.
    positions_at: Option<Instant>,
    positions: Vec<(f64, f64)>,
    check_interval: Duration,
    /// The index `k` of the last check instant `origin + k · check_interval` looked at.
    last_check: Option<i64>,
    /// Adjacency bits of the last check, `words` u64 per node.
    graph: Vec<u64>,
    scratch: Vec<u64>,
    words: usize,
    /// Checks that found a changed graph.
    changes: u64,
}

impl Tracker {
    /// Tracks `motion` with movement starting at mesh instant `origin`.
    pub fn new(motion: Motion, origin: Instant, check_interval: Duration) -> Tracker {
        let n = motion.len();
        let words = n.div_ceil(64);
        Tracker {
            motion,
            origin,
            positions_at: None,
            positions: vec![(0.0, 0.0); n],
            check_interval,
            last_check: None,
            graph: vec![0; n * words],
            scratch: vec![0; n * words],
            words,
            changes: 0,
        }
    }

    /// The trajectories.
    pub fn motion(&self) -> &Motion {
        &self.motion
    }

    /// Checks of the neighbour graph that found it changed.
    pub fn graph_changes(&self) -> u64 {
        self.changes
    }

    fn seconds(&self, at: Instant) -> f64 {
        at.saturating_since(self.origin).as_secs_f64()
    }

    /// Every node's position at mesh instant `at` (before the origin: the start positions).
    pub fn positions(&mut self, at: Instant) -> &[(f64, f64)] {
        if self.positions_at != Some(at) {
            let t_s = self.seconds(at);
            for (i, p) in self.positions.iter_mut().enumerate() {
                *p = self.motion.position(i as u16, t_s);
            }
            self.positions_at = Some(at);
        }
        &self.positions
    }

    /// Whether the neighbour graph (`linked(a, b)` for node positions `a`, `b`) at the latest
    /// check instant not after `at` differs from the one at the check before; the first call
    /// records the graph and answers `false`. Cheap when no check instant passed since the last
    /// call (one division).
    pub fn graph_changed(
        &mut self,
        at: Instant,
        linked: impl Fn((f64, f64), (f64, f64)) -> bool,
    ) -> bool {
        let since = at.saturating_since(self.origin);
        let k = since.as_nanos() / self.check_interval.as_nanos().max(1);
        if self.last_check == Some(k) {
            return false;
        }
        let first = self.last_check.is_none();
        self.last_check = Some(k);
        let check_at = self.origin + Duration::from_nanos(k * self.check_interval.as_nanos());
        let n = self.motion.len();
        let words = self.words;
        let mut bits = std::mem::take(&mut self.scratch);
        bits.iter_mut().for_each(|w| *w = 0);
        let pos = self.positions(check_at).to_vec();
        for a in 0..n {
            for b in 0..n {
                if a != b && linked(pos[a], pos[b]) {
                    bits[a * words + b / 64] |= 1 << (b % 64);
                }
            }
        }
        let changed = !first && bits != self.graph;
        self.scratch = std::mem::replace(&mut self.graph, bits);
        if changed {
            self.changes += 1;
        }
        changed
    }

    /// The neighbours of `node` in the graph of the last check.
    pub fn neighbours(&self, node: u16) -> impl Iterator<Item = u16> + '_ {
        let row = &self.graph[node as usize * self.words..(node as usize + 1) * self.words];
        (0..self.motion.len() as u16).filter(move |&b| row[b as usize / 64] >> (b % 64) & 1 == 1)
    }
}
