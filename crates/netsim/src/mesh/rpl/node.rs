//! One node's view of the DODAG (RFC 6550 §8–9, storing mode): the candidate parents heard in
//! DIOs, the preferred parent and the rank through it, the Trickle timer that paces its own
//! DIOs, and the downward routes its children's DAOs installed.
//!
//! Parent selection: the candidate giving the lowest rank under the objective function, ties
//! to the lower node id; the current parent is kept unless a candidate beats it by the
//! objective's hysteresis ([`Objective::should_switch`]). A parent change or a rank change
//! resets the Trickle timer (RFC 6550 §8.3, as Contiki's `rpl_set_preferred_parent` path
//! does) and asks for a DAO to the new parent. Not modelled: DIS, DODAG versions and
//! global repair, no-path DAOs, DTSN-triggered DAO refresh, route lifetimes.

use std::collections::BTreeMap;

use coaplab_cc::rng::Random;
use coaplab_cc::time::Instant;

use super::of::{Objective, INFINITE_RANK};
use super::trickle::{Trickle, TrickleParams};

/// What a received DIO changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DioOutcome {
    /// The preferred parent changed: send a DAO to it.
    pub parent_changed: bool,
}

/// One node's RPL state.
#[derive(Debug, Clone)]
pub struct RplNode {
    id: u16,
    objective: Objective,
    rank: u16,
    parent: Option<u16>,
    /// Candidate parents: node → (advertised rank, link ETX × 128).
    candidates: BTreeMap<u16, (u16, u32)>,
    /// Downward routes (storing mode): target → next hop (the child that advertised it).
    down: BTreeMap<u16, u16>,
    /// The DIO timer; `None` until the node joins (roots start it at once).
    trickle: Option<Trickle>,
    params: TrickleParams,
    parent_switches: u64,
}

impl RplNode {
    /// A node that has not joined yet.
    pub fn new(id: u16, objective: Objective, params: TrickleParams) -> RplNode {
        RplNode {
            id,
            objective,
            rank: INFINITE_RANK,
            parent: None,
            candidates: BTreeMap::new(),
            down: BTreeMap::new(),
            trickle: None,
            params,
            parent_switches: 0,
        }
    }

    /// The DODAG root, whose DIO timer starts at `now`.
    pub fn root(
        id: u16,
        objective: Objective,
        params: TrickleParams,
        now: Instant,
        rng: &mut impl Random,
    ) -> RplNode {
        let mut n = RplNode::new(id, objective, params);
        n.rank = objective.root_rank();
        n.trickle = Some(Trickle::start(params, now, rng));
        n
    }

    /// The node's rank ([`INFINITE_RANK`] while detached).
    pub fn rank(&self) -> u16 {
        self.rank
    }

    /// The preferred parent.
    pub fn parent(&self) -> Option<u16> {
        self.parent
    }

    /// Parent changes after the first join.
    pub fn parent_switches(&self) -> u64 {
        self.parent_switches
    }

    /// The downward routes: (target, next hop).
    pub fn downward_routes(&self) -> impl Iterator<Item = (u16, u16)> + '_ {
        self.down.iter().map(|(&t, &v)| (t, v))
    }

    /// The next instant the DIO timer needs (`None` before joining).
    pub fn poll_at(&self) -> Option<Instant> {
        self.trickle.as_ref().map(Trickle::poll_at)
    }

    /// The DIO timer's (transmissions, suppressions).
    pub fn dio_counts(&self) -> (u64, u64) {
        self.trickle.as_ref().map_or((0, 0), Trickle::counts)
    }

    /// The DIO timer at `now`; `true`: broadcast a DIO carrying [`RplNode::rank`] now.
    pub fn on_timer(&mut self, now: Instant, rng: &mut impl Random) -> bool {
        match self.trickle.as_mut() {
            Some(t) => t.on_timer(now, rng),
            None => false,
        }
    }

    /// A DIO from `from` advertising `rank`, over a link of `link_etx` (× 128).
    pub fn on_dio(
        &mut self,
        now: Instant,
        from: u16,
        rank: u16,
        link_etx: u32,
        rng: &mut impl Random,
    ) -> DioOutcome {
        let unchanged = DioOutcome {
            parent_changed: false,
        };
        if self.rank == self.objective.root_rank() && self.parent.is_none() {
            // The root: every DIO of its own DODAG is consistent.
            if let Some(t) = self.trickle.as_mut() {
                t.hear_consistent();
            }
            return unchanged;
        }
        if rank == INFINITE_RANK {
            self.candidates.remove(&from);
        } else {
            self.candidates.insert(from, (rank, link_etx));
        }
        let via = |&(r, e): &(u16, u32)| self.objective.rank_via(r, e);
        // The best candidate: lowest rank through it, ties to the lower id (BTreeMap order).
        let best = self
            .candidates
            .iter()
            .map(|(&c, v)| (via(v), c))
            .filter(|&(r, _)| r != INFINITE_RANK)
            .min();
        let current = self
            .parent
            .and_then(|p| self.candidates.get(&p))
            .map_or(INFINITE_RANK, via);
        let mut changed = false;
        if let Some((best_rank, best)) = best {
            if Some(best) != self.parent && self.objective.should_switch(current, best_rank) {
                if self.parent.is_some() {
                    self.parent_switches += 1;
                }
                self.parent = Some(best);
                changed = true;
            }
        } else if self.parent.is_some() {
            self.parent = None;
            changed = true;
        }
        let new_rank = self
            .parent
            .and_then(|p| self.candidates.get(&p))
            .map_or(INFINITE_RANK, via);
        let rank_changed = new_rank != self.rank;
        self.rank = new_rank;
        match self.trickle.as_mut() {
            None if self.parent.is_some() => {
                self.trickle = Some(Trickle::start(self.params, now, rng));
            }
            Some(t) if changed || rank_changed => t.reset(now, rng),
            Some(t) if Some(from) == self.parent || rank >= self.rank => t.hear_consistent(),
            _ => {}
        }
        DioOutcome {
            parent_changed: changed && self.parent.is_some(),
        }
    }

    /// A DAO for `target` from the child `via` (storing mode): installs the downward route.
    /// Returns the parent to forward it to (`None` at the root or while detached).
    pub fn on_dao(&mut self, target: u16, via: u16) -> Option<u16> {
        self.down.insert(target, via);
        self.parent
    }

    /// The next hop towards `target` below this node, if a DAO installed one.
    pub fn downward(&self, target: u16) -> Option<u16> {
        self.down.get(&target).copied()
    }

    /// This node's id.
    pub fn id(&self) -> u16 {
        self.id
    }
}
