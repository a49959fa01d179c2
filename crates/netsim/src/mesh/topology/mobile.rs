//! The mesh's hooks for moving nodes ([`super::super::mobility`]): the medium judges each
//! transmission by the positions at its start, and static routes follow the neighbour graph.
//! Without [`Mesh::set_mobility`] none of this runs and a static mesh is unchanged.

use coaplab_cc::time::{Duration, Instant};

use super::Mesh;
use crate::mesh::layout::Role;
use crate::mesh::mobility::{MobilityConfig, MobilityError, Motion, Tracker};
use crate::mesh::routing::Routes;

impl Mesh {
    /// Moves the nodes as `config` says from the run's start on, trajectories generated over
    /// `horizon` (the run's length) from `run_seed`'s `mesh/mobility/*` streams. Call it once,
    /// before the first [`Mesh::send`].
    pub fn set_mobility(
        &mut self,
        config: &MobilityConfig,
        run_seed: u64,
        horizon: Duration,
    ) -> Result<(), MobilityError> {
        let motion = Motion::build(config, &self.layout, run_seed, horizon)?;
        let origin = Instant::ZERO + self.epoch;
        let mut tracker = Tracker::new(motion, origin, config.route_check_interval);
        // The graph at the start: the one the routes of `Mesh::new` were built on.
        let medium = &self.medium;
        tracker.graph_changed(origin, |a, b| medium.linked(a, b));
        self.mobility = Some(Box::new(tracker));
        Ok(())
    }

    /// The movement, when the nodes move.
    pub fn mobility(&self) -> Option<&Tracker> {
        self.mobility.as_deref()
    }

    /// Where `node` is at run instant `run_now`.
    pub fn position(&self, node: u16, run_now: Instant) -> (f64, f64) {
        match &self.mobility {
            Some(t) => t
                .motion()
                .position(node, run_now.saturating_since(Instant::ZERO).as_secs_f64()),
            None => {
                let n = &self.layout.nodes[node as usize];
                (n.x_m, n.y_m)
            }
        }
    }

    /// Before `node` starts transmitting at `at`: its listeners from everyone's position now.
    pub(super) fn move_radio(&mut self, node: u16, at: Instant) {
        if let Some(t) = self.mobility.as_mut() {
            self.medium.relink(node, t.positions(at));
        }
    }

    /// Before a route is looked up at `at`: static routes are rebuilt when the neighbour graph
    /// at the latest check instant differs from the previous check's. RPL needs no hook: it
    /// notices lost links through its ETX and no-ACK samples.
    pub(super) fn refresh_routes(&mut self, at: Instant) {
        let (Some(t), None) = (self.mobility.as_mut(), self.rpl.as_ref()) else {
            return;
        };
        let medium = &self.medium;
        if t.graph_changed(at, |a, b| medium.linked(a, b)) {
            let root = self
                .layout
                .with_role(Role::BorderRouter)
                .next()
                .expect("validated: one border router");
            self.routes = Routes::tree(self.layout.nodes.len(), root, |u| t.neighbours(u));
            self.route_rebuilds += 1;
        }
    }

    /// Times static routes were rebuilt because nodes moved.
    pub fn route_rebuilds(&self) -> u64 {
        self.route_rebuilds
    }
}
