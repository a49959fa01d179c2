//! The `observe` workload (issue 16) on the star: the exact notification timeline of one
//! observer, and loss counted under a deterministic drop.

use std::net::SocketAddr;

use coaplab_cc::time::Instant;
use coaplab_netsim::{
    Delivery, Direction, DirectionStats, PacketId, SendError, Star, Topology, SERVER_ADDR,
};

use super::{run_one, Sim};
use crate::results::ObserveFlowRecord;
use crate::scenario::Scenario;

/// One observer of a counter changing every second, registering at 0 and observing 10.5 s
/// (changes at 1, 2, …, 10 s), on the default NB-IoT-like star (no loss).
const ONE: &str = "name = \"t\"\n[[flows]]\ncc = \"default\"\nworkload = \"observe\"\n\
                   period_s = 1\nduration_s = 10.5\nstart_jitter_s = 0\n";

/// A notification's path: 415 ms of delay down (400 ms link + 15 ms rest of path) and 41 B
/// at 30 kbit/s (10.9333… ms: header 4, token 2, Observe 2, Content-Format 1, Max-Age 2,
/// marker 1, one digit, IP+UDP 28), plus the serializer's 1-ns rounding.
const PATH_DELAY_S: f64 = 0.425_933_334;

/// The same for the notification of the value 10: one digit more, 42 B (11.2 ms).
const PATH_DELAY_10_S: f64 = 0.4262;

/// Checks `o`: `received` notifications, all but the last (value 10) of [`PATH_DELAY_S`].
fn assert_delays(o: &ObserveFlowRecord, received: u64) {
    let n = received as f64;
    let mean = ((n - 1.0) * PATH_DELAY_S + PATH_DELAY_10_S) / n;
    // Type-7 p95 of n − 1 equal values and one larger: between them at 0.95·(n − 1) − (n − 2).
    let h = 0.95 * (n - 1.0) - (n - 2.0);
    let p95 = PATH_DELAY_S + h * (PATH_DELAY_10_S - PATH_DELAY_S);
    assert_eq!(o.delay_p50_s, Some(PATH_DELAY_S));
    assert_eq!(o.delay_max_s, Some(PATH_DELAY_10_S));
    assert!((o.delay_mean_s.unwrap() - mean).abs() < 1e-12, "{o:?}");
    assert!((o.delay_p95_s.unwrap() - p95).abs() < 1e-12, "{o:?}");
}

#[test]
fn one_observer_gets_every_notification_after_the_path_delay() {
    let runs = Scenario::parse(ONE, "t.toml").unwrap().expand(None, None);
    let f = &run_one(&runs[0]).unwrap().flows[0];
    let o = f.observe.as_ref().unwrap();
    // Every change at 1, 2, …, 10 s reaches the observer one path delay later.
    assert_eq!(
        (o.sent, o.received, o.lost, o.retransmissions),
        (10, 10, 0, 0)
    );
    assert_delays(o, 10);
    // The registration (CON GET, 39 B up) and the deregistration at 10.5 s.
    assert_eq!((f.transmissions, f.retransmissions), (2, 0));
    assert!(f.completed);
    assert_eq!(f.fct_s, Some(10.5));
    // Down: the registration's 40-B answer and the notifications (the first CON, the rest
    // NON), 41 B each but the 42-B "10"; the run ends as the deregistration goes out.
    assert_eq!(f.bytes_down, 40 + 9 * 41 + 42);
}

/// A topology losing the server's datagrams whose ordinals (from 1, in arrival order) are
/// listed, at their arrival: a fault injector over any [`Topology`].
struct DropDown<N> {
    inner: N,
    drop: &'static [u32],
    down: u32,
}

impl<N: Topology> Topology for DropDown<N> {
    fn send(
        &mut self,
        now: Instant,
        src: SocketAddr,
        dst: SocketAddr,
        payload: &mut Vec<u8>,
        tag: u64,
    ) -> Result<PacketId, SendError> {
        self.inner.send(now, src, dst, payload, tag)
    }

    fn poll_at(&self) -> Option<Instant> {
        self.inner.poll_at()
    }

    fn poll_delivery(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Delivery> {
        while let Some(d) = self.inner.poll_delivery(now, buf) {
            if d.src == SERVER_ADDR {
                self.down += 1;
                if self.drop.contains(&self.down) {
                    continue;
                }
            }
            return Some(d);
        }
        None
    }

    fn servers(&self) -> &[SocketAddr] {
        self.inner.servers()
    }

    fn direction_stats(&self, direction: Direction) -> DirectionStats {
        self.inner.direction_stats(direction)
    }
}

#[test]
fn dropped_notifications_are_counted_lost() {
    let spec = &Scenario::parse(ONE, "t.toml").unwrap().expand(None, None)[0];
    let star = Star::new(&spec.config.network, spec.seed).unwrap();
    // Server datagrams: 1 the registration's answer, 2 the CON notification 1, 3.. the NON
    // notifications 2, 3, …: drop notifications 2 and 4 (NON, never repeated).
    let net = DropDown {
        inner: star,
        drop: &[3, 5],
        down: 0,
    };
    let mut sim = Sim::with_network(spec, net).unwrap();
    sim.run().unwrap();
    let f = &sim.finish().flows[0];
    let o = f.observe.as_ref().unwrap();
    assert_eq!(
        (o.sent, o.received, o.lost, o.retransmissions),
        (10, 8, 2, 0)
    );
    assert_delays(o, 8);
}

#[test]
fn each_observer_s_notifications_are_timed_by_its_group_s_algorithm() {
    let text = "name = \"t\"\n[[flows]]\ncc = \"default\"\nworkload = \"observe\"\n\
                period_s = 1\nduration_s = 3.5\ncon_every = 1\nstart_jitter_s = 0\n\
                [[flows]]\ncc = \"cocoa\"\nworkload = \"observe\"\nperiod_s = 1\n\
                duration_s = 3.5\ncon_every = 1\nstart_jitter_s = 0\n";
    let spec = &Scenario::parse(text, "t.toml").unwrap().expand(None, None)[0];
    let star = Star::new(&spec.config.network, spec.seed).unwrap();
    let mut sim = Sim::with_network(spec, star).unwrap();
    sim.run().unwrap();
    let name = |i: u32| {
        sim.servers[0]
            .controller(coaplab_netsim::client_addr(i))
            .map(|c| c.algorithm.name())
    };
    assert_eq!((name(0), name(1)), (Some("default"), Some("cocoa")));
    let flows = sim.finish().flows;
    for f in &flows {
        // Every notification CON, each acknowledged: nothing lost or repeated.
        let o = f.observe.as_ref().unwrap();
        assert_eq!((o.sent, o.received, o.retransmissions), (3, 3, 0));
    }
}
