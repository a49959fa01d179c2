//! The mesh's hooks for moving nodes ([`super::super::mobility`]): the medium judges each
//! transmission by the positions at its start, and static routes follow the neighbour graph.
//! Without [`Mesh::set_mobility`] none of this runs and a static mesh is unchanged.

use coaplab_base::time::{Duration, Instant};

use super::Mesh;
use crate::mesh::layout::Role;
use crate::mesh::mobility::{MobilityConfig, MobilityError, Motion, Tracker};
use crate::mesh::routing::Routes;

impl Mesh {
    /// Moves the nodes as `config` says from the run's start on, trajectories generated over
    /// `horizon` (the run's length) from `run_seed`'s `mesh/mobility/*` streams. Call it once,
    /// before the first [`Topology::send`](crate::Topology::send).
    pub fn set_mobility(
        &mut self,
        config: &MobilityConfig,
        run_seed: u64,
        horizon: Duration,
    ) -> Result<(), MobilityError> {
        let motion = Motion::build(config, &self.layout, run_seed, horizon)?;
        let origin = Instant::ZERO + self.epoch;
        let mut tracker = Tracker::new(motion, origin, config.route_check_interval);
        // The graph at the start. For generated models it is the layout's, on which
        // `Mesh::new` built the routes (rebuilding gives the same tree); a position file may
        // start elsewhere.
        let medium = &self.medium;
        tracker.graph_changed(origin, |a, b| medium.linked(a, b));
        self.mobility = Some(Box::new(tracker));
        self.rebuild_static_routes();
        Ok(())
    }

    /// Static routes: the minimum-hop tree over the graph of the last check.
    fn rebuild_static_routes(&mut self) {
        let (Some(t), None) = (self.mobility.as_ref(), self.rpl.as_ref()) else {
            return;
        };
        let root = self
            .layout
            .with_role(Role::BorderRouter)
            .next()
            .expect("validated: one border router");
        self.routes = Routes::tree(self.layout.nodes.len(), root, |u| t.neighbours(u));
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

    /// Whether the neighbour graph at the latest check instant not after `at` differs from
    /// the one the previous call saw (`false` without mobility, and between check instants,
    /// at the cost of one division): the routing hook. Static routes use it; RPL reacts to lost
    /// links through ETX and missing ACKs by itself, but could use it too (e.g. to reset
    /// Trickle). One consumer: each call moves the reference graph on.
    pub(super) fn graph_changed(&mut self, at: Instant) -> bool {
        let Some(t) = self.mobility.as_mut() else {
            return false;
        };
        let medium = &self.medium;
        t.graph_changed(at, |a, b| medium.linked(a, b))
    }

    /// Before a route is looked up at `at`: static routes are rebuilt when the neighbour graph
    /// changed ([`Mesh::graph_changed`]).
    pub(super) fn refresh_routes(&mut self, at: Instant) {
        if self.rpl.is_none() && self.graph_changed(at) {
            self.rebuild_static_routes();
            self.route_rebuilds += 1;
        }
    }

    /// Times static routes were rebuilt because nodes moved.
    pub fn route_rebuilds(&self) -> u64 {
        self.route_rebuilds
    }
}

#[cfg(test)]
mod tests {
    use coaplab_base::params::Settings;
    use coaplab_base::time::{Duration, Instant};

    use crate::addr::{client_addr, SERVER_ADDR};
    use crate::mesh::layout::{Layout, Node, Role};
    use crate::mesh::mobility::file::{parse, Format};
    use crate::mesh::mobility::MobilityConfig;
    use crate::mesh::{Mesh, MeshConfig, MeshParams};
    use crate::record::Direction;
    use crate::Topology;

    fn node(x_m: f64, y_m: f64, role: Role) -> Node {
        Node { x_m, y_m, role }
    }

    /// A mesh of `nodes` whose client moves as the BonnMotion `movements` say.
    fn moving_mesh(nodes: Vec<Node>, movements: &str) -> Mesh {
        let config = MeshConfig {
            layout: Layout::explicit(nodes).unwrap(),
            params: MeshParams::default(),
        };
        let mut mesh = Mesh::new(&config, 3).unwrap();
        let paths = parse(movements, Format::BonnMotion).unwrap();
        let mobility =
            MobilityConfig::from_file(paths, &Settings::new(), vec![Role::Client]).unwrap();
        mesh.set_mobility(&mobility, 3, Duration::from_secs(100))
            .unwrap();
        mesh
    }

    fn drain(mesh: &mut Mesh) -> usize {
        let mut buf = Vec::new();
        let mut delivered = 0;
        while let Some(t) = mesh.poll_at() {
            while mesh.poll_delivery(t, &mut buf).is_some() {
                delivered += 1;
            }
        }
        delivered
    }

    #[test]
    fn a_link_breaks_when_the_distance_passes_the_range_at_the_computed_instant() {
        // Border router (0, 0), server (10, 0), client from (10, 5) moving +y at 1 m/s: its
        // distance to the server is 5 + t m, so the 10-m link holds until exactly t = 5 s;
        // the border router is never within 10 m of it. A frame sent at 4.99 s goes on air
        // within 2.6 ms (backoff ≤ 7 × 320 µs, CCA, turnaround): 9.993 m, decoded. One sent at
        // 5 s starts at least 320 µs later: beyond 10 m, never decoded, dropped after the
        // MAC's retries.
        let mut mesh = moving_mesh(
            vec![
                node(0.0, 0.0, Role::BorderRouter),
                node(10.0, 0.0, Role::Server),
                node(10.0, 5.0, Role::Client),
            ],
            "0 0 0\n0 10 0\n0 10 5 100 10 105\n",
        );
        assert_eq!(mesh.routes().next_hop(2, 1), Some(1));
        let t = Instant::from_millis;
        mesh.send(t(4_990), client_addr(0), SERVER_ADDR, &mut vec![0; 11], 1)
            .unwrap();
        assert_eq!(drain(&mut mesh), 1);
        mesh.send(t(5_000), client_addr(0), SERVER_ADDR, &mut vec![0; 11], 2)
            .unwrap();
        assert_eq!(drain(&mut mesh), 0);
        let up = mesh.stats(Direction::Up);
        assert_eq!(
            (up.delivered_packets, up.mac_drops, up.no_ack_failures),
            (1, 1, 1)
        );
        // 1 + 1 + macMaxFrameRetries 3 transmissions of one frame.
        assert_eq!(up.frames_sent, 5);
        // The graph checked at 6 s has no link left: the client has no route, and the next
        // datagram dies at the client without a transmission.
        mesh.send(t(6_500), client_addr(0), SERVER_ADDR, &mut vec![0; 11], 3)
            .unwrap();
        assert_eq!(drain(&mut mesh), 0);
        assert_eq!(mesh.routes().hops(2), None);
        assert_eq!(mesh.stats(Direction::Up).frames_sent, 5);
        assert_eq!(mesh.route_rebuilds(), 1);
        assert_eq!(mesh.position(2, t(6_500)), (10.0, 11.5));
    }

    #[test]
    fn static_routes_follow_a_moving_client_to_its_new_parent() {
        // Border router (0, 0), server (10, 0), router (0, 10); the client goes from (20, 0)
        // to (0, 20) in 20 s. At the start its only neighbour is the server (10 m); at 15 s it
        // is at (5, 15), 7.07 m from the router and 15.8 m from the server: its parent is the
        // router and a datagram to the server takes 3 hops (client, router, border router).
        let mut mesh = moving_mesh(
            vec![
                node(0.0, 0.0, Role::BorderRouter),
                node(10.0, 0.0, Role::Server),
                node(0.0, 10.0, Role::Router),
                node(20.0, 0.0, Role::Client),
            ],
            "0 0 0\n0 10 0\n0 0 10\n0 20 0 20 0 20\n",
        );
        assert_eq!(mesh.routes().parent(3), Some(1));
        // A position file that puts the client elsewhere from the start: routes from there.
        let elsewhere = moving_mesh(
            vec![
                node(0.0, 0.0, Role::BorderRouter),
                node(10.0, 0.0, Role::Server),
                node(0.0, 10.0, Role::Router),
                node(20.0, 0.0, Role::Client),
            ],
            "0 0 0\n0 10 0\n0 0 10\n0 0 20\n",
        );
        assert_eq!(elsewhere.routes().parent(3), Some(2));
        assert_eq!(elsewhere.route_rebuilds(), 0);
        mesh.send(
            Instant::from_millis(15_500),
            client_addr(0),
            SERVER_ADDR,
            &mut vec![0; 11],
            1,
        )
        .unwrap();
        assert_eq!(mesh.routes().parent(3), Some(2));
        assert_eq!(mesh.routes().path_len(3, 1), Some(3));
        assert_eq!(drain(&mut mesh), 1);
        assert_eq!(mesh.route_rebuilds(), 1);
    }
}
