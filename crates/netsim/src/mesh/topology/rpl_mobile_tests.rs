//! RPL under mobility (docs/mesh-model.md, "RPL under mobility"): a client walks between
//! parents, leaves everyone's range and comes back; the timelines are checked against
//! Contiki 3.0's rules.

use super::*;
use crate::mesh::layout::Node;
use crate::mesh::mobility::file::{parse, Format};
use crate::mesh::mobility::MobilityConfig;
use crate::mesh::rpl::of::INFINITE_RANK;
use crate::mesh::rpl::{Objective, RplParams};
use crate::mesh::Routing;
use coaplab_base::params::Settings;

const ROOT: u16 = 0;
const A: u16 = 2;
const B: u16 = 3;
const CLIENT: u16 = 4;

/// Border router (0, 0), server (0, −6), routers A (−6, 4) and B (6, 4), 12 m apart (not
/// neighbours); the client starts at (−12, 11) (9.2 m from A, 19.3 m from B, 16.3 m from the
/// root) and moves as the BonnMotion line `client` says. 10-m range, loss-free links.
fn walking_mesh(client: &str, objective: Objective, rpl: RplParams, seed: u64) -> Mesh {
    let node = |x_m, y_m, role| Node { x_m, y_m, role };
    let layout = Layout::explicit(vec![
        node(0.0, 0.0, Role::BorderRouter),
        node(0.0, -6.0, Role::Server),
        node(-6.0, 4.0, Role::Router),
        node(6.0, 4.0, Role::Router),
        node(-12.0, 11.0, Role::Client),
    ])
    .unwrap();
    let params = MeshParams {
        routing: Routing::Rpl {
            objective,
            warmup: None,
        },
        rpl,
        ..MeshParams::default()
    };
    let mut mesh = Mesh::new(&MeshConfig { layout, params }, seed).unwrap();
    let movements = format!("0 0 0\n0 0 -6\n0 -6 4\n0 6 4\n{client}\n");
    let paths = parse(&movements, Format::BonnMotion).unwrap();
    let mobility = MobilityConfig::from_file(paths, &Settings::new(), vec![Role::Client]).unwrap();
    mesh.set_mobility(&mobility, seed, Duration::from_secs(1000))
        .unwrap();
    mesh
}

/// What the run showed, on the run's clock.
#[derive(Debug, Default)]
struct Timeline {
    /// The client's preferred parent after each change.
    parent: Vec<(Instant, Option<u16>)>,
    /// The client's link metric to A after each change.
    etx_a: Vec<(Instant, u16)>,
    /// When B entered the client's parent table.
    b_candidate: Option<Instant>,
    /// When B's DIO timer fired a DIO.
    b_dios: Vec<Instant>,
    /// The root's next hop towards the client after each change.
    root_route: Vec<(Instant, Option<u16>)>,
    /// The expiry of the root's route to the client after each change (the run's clock).
    root_expiry: Vec<(Instant, Option<Instant>)>,
    /// DIOs the client sent while its rank was infinite (poisoning).
    poison_dios: Vec<Instant>,
    /// Deliveries: (instant, up, tag).
    delivered: Vec<(Instant, bool, u64)>,
}

impl Timeline {
    /// Deliveries in `dir` (up: `true`) within [from, to).
    fn delivered(&self, up: bool, from: Instant, to: Instant) -> Vec<Instant> {
        self.delivered
            .iter()
            .filter(|d| d.1 == up && d.0 >= from && d.0 < to)
            .map(|d| d.0)
            .collect()
    }
}

/// Runs `mesh` to `until` (run clock): the client sends the server a datagram at each whole
/// second from `from`, the server the client one at each half second after; records the
/// RPL state after every event instant.
fn run(mesh: &mut Mesh, from: Instant, until: Instant) -> Timeline {
    let epoch = mesh.control_stats().warm_up_time;
    let mut tl = Timeline::default();
    let mut buf = Vec::new();
    let mut next_send = from;
    let mut tag = 0;
    let state = |m: &Mesh| {
        let r = m.rpl.as_ref().unwrap();
        let c = &r.nodes[CLIENT as usize];
        let root = &r.nodes[ROOT as usize];
        (
            c.parent(),
            c.link_metric(A),
            c.candidate_rank(B).is_some(),
            root.downward(CLIENT),
            c.rank(),
            c.dio_counts().0,
            r.nodes[B as usize].dio_counts().0,
            root.route_expiry(CLIENT).map(|t| t - epoch),
        )
    };
    let mut last = state(mesh);
    tl.parent.push((Instant::ZERO, last.0));
    tl.root_route.push((Instant::ZERO, last.3));
    tl.root_expiry.push((Instant::ZERO, last.7));
    loop {
        let t = mesh.poll_at().map_or(next_send, |p| p.min(next_send));
        if t > until {
            break;
        }
        if next_send <= t {
            tag += 1;
            let (src, dst) = if tag % 2 == 1 {
                (client_addr(0), SERVER_ADDR)
            } else {
                (SERVER_ADDR, client_addr(0))
            };
            // A client without a parent has no route: the datagram dies at once.
            let _ = mesh.send(next_send, src, dst, &mut vec![0; 11], tag);
            next_send += Duration::from_millis(500);
            continue;
        }
        while let Some(d) = mesh.poll_delivery(t, &mut buf) {
            tl.delivered
                .push((d.at, d.direction == Direction::Up, d.tag));
        }
        let now = state(mesh);
        if now.0 != last.0 {
            tl.parent.push((t, now.0));
        }
        if now.1 != last.1 {
            if let Some(m) = now.1 {
                tl.etx_a.push((t, m));
            }
        }
        if now.2 && !last.2 {
            tl.b_candidate.get_or_insert(t);
        }
        if now.3 != last.3 {
            tl.root_route.push((t, now.3));
        }
        if now.5 > last.5 && now.4 == INFINITE_RANK {
            tl.poison_dios.push(t);
        }
        if now.6 > last.6 {
            tl.b_dios.push(t);
        }
        if now.7 != last.7 {
            tl.root_expiry.push((t, now.7));
        }
        last = now;
    }
    tl
}

/// The client wanders off A's range at (−12, 12) (20.034 s: up +y at 29 m/s to (−12, 40)),
/// stays away until 200 s, and is back in A's range at 200.966 s.
const LEAVE_AND_RETURN: &str = "0 -12 11 20 -12 11 21 -12 40 200 -12 40 201 -12 11";

/// MRHOF's ETX after each of `n` lost frames from `etx` (`rpl-mrhof.c` `neighbor_link_callback`:
/// new = (old × 90 + 10 × 256 × 10) / 100).
fn etx_after_losses(mut etx: u16, n: usize) -> Vec<u16> {
    (0..n)
        .map(|_| {
            etx = ((u32::from(etx) * 90 + 2560 * 10) / 100) as u16;
            etx
        })
        .collect()
}

fn secs(s: f64) -> Instant {
    Instant::from_nanos((s * 1e9).round() as i64)
}

#[test]
fn walking_from_a_to_b_switches_parents_by_contikis_rules() {
    // The client waits 20 s, then walks +x at 1 m/s along y = 11 to (12, 11) at 44 s: A's
    // range ends at x = 1.14 (33.14 s), B's starts at x = −1.14 (30.86 s).
    let mut mesh = walking_mesh(
        "0 -12 11 20 -12 11 44 12 11",
        Objective::Mrhof,
        RplParams::CONTIKI,
        1,
    );
    let tl = run(&mut mesh, Instant::from_secs(1), Instant::from_secs(120));
    let (leaves_a, enters_b) = (secs(33.14), secs(30.86));
    // One parent change, to B.
    assert_eq!(tl.parent.len(), 2, "{:?}", tl.parent);
    assert_eq!(tl.parent[0].1, Some(A));
    let (switch, to) = tl.parent[1];
    assert_eq!(to, Some(B));
    // Each datagram to A after it left the range is lost after the MAC's 4 transmissions: one
    // ETX sample of 10 each, from the 256 of the loss-free link (nothing changed it before).
    let before: Vec<&(Instant, u16)> = tl.etx_a.iter().filter(|e| e.0 <= switch).collect();
    assert!(before.iter().all(|e| e.0 > leaves_a), "{before:?}");
    let values: Vec<u16> = before.iter().map(|e| e.1).collect();
    assert_eq!(values, etx_after_losses(256, values.len()));
    // B becomes a candidate at its first DIO after the client entered its range (Trickle's
    // own schedule: nothing reset B's timer), received within one frame's backoff and airtime.
    let b_dio = *tl.b_dios.iter().find(|&&t| t > enters_b).unwrap();
    assert_eq!(tl.b_candidate, Some(switch));
    assert!(switch >= b_dio && switch - b_dio < Duration::from_millis(20));
    // `rpl_process_dio` runs the parent event at once: MRHOF's best_parent switches as the
    // path through A (A's rank 512 + its ETX) is more than 0.5 ETX (128) worse than through B
    // (B's rank + RPL_INIT_LINK_METRIC 2 × 256).
    let r = mesh.rpl.as_ref().unwrap();
    let b_rank = r.nodes[CLIENT as usize].candidate_rank(B).unwrap();
    assert_eq!(b_rank, 512);
    assert!(512 + values.last().unwrap() > b_rank + 512 + 128);
    // The DAO via B leaves 2–6 s later (RPL_DAO_LATENCY 4 s: latency/2 + rand % latency) and
    // installs the root's route through B two hops later.
    assert_eq!(tl.root_route.len(), 2, "{:?}", tl.root_route);
    assert_eq!(tl.root_route[0].1, Some(A));
    let (rerouted, via) = tl.root_route[1];
    assert_eq!(via, Some(B));
    let dao_delay = rerouted - switch;
    assert!(
        dao_delay >= Duration::from_secs(2) && dao_delay < Duration::from_millis(6_050),
        "{dao_delay:?}"
    );
    // CoAP-sized datagrams: up, none between the first loss and the switch, then the next
    // one; down, none from the first loss until the root's route changed, then the next one.
    let first_loss = before[0].0;
    assert!(tl.delivered(true, first_loss, switch).is_empty());
    let up = tl.delivered(true, switch, switch + Duration::from_secs(2));
    assert!(!up.is_empty() && up[0] - switch < Duration::from_millis(1_100));
    assert!(tl.delivered(false, first_loss, rerouted).is_empty());
    let down = tl.delivered(false, rerouted, rerouted + Duration::from_secs(2));
    assert!(!down.is_empty() && down[0] - rerouted < Duration::from_millis(1_100));
}

#[test]
fn a_client_out_of_everyones_range_detaches_once_then_sticks_to_its_parent() {
    // Contiki 3.0's sequence (rpl-dag.c) when the only parent is gone: 21 lost frames raise
    // the ETX from 256 to 2304, the rank through A (2816, DAGRank 11) becomes unacceptable
    // against min_rank 768 (DAGRank limit (768 + 1792) / 256 = 10) at the next periodic tick:
    // rpl_select_dag sends a No-Path DAO to A and returns NULL, rpl_local_repair sets rank ∞
    // and resets the DIO timer. The No-Path DAO is lost too; its MAC outcome flags A
    // (rpl_link_neighbor_callback), and at the next tick rpl_process_parent_event finds A's
    // advertised rank (512, never nullified: rpl_nullify_parent leaves parents' ranks alone)
    // acceptable: rpl_select_parent picks A again and, with no previous parent,
    // rpl_select_dag takes the new rank as min_rank. The node is attached again 1 s after it
    // detached, before its reset DIO timer fires (Imin/2 = 2.048 s): no infinite-rank DIO goes
    // out, and as the ETX cannot exceed 2560 (rank 3072 < DAGRank limit 18) it never detaches
    // again while away.
    let mut mesh = walking_mesh(LEAVE_AND_RETURN, Objective::Mrhof, RplParams::CONTIKI, 1);
    let tl = run(&mut mesh, Instant::from_secs(1), Instant::from_secs(260));
    let (leaves, returns) = (secs(20.0 + 1.0 / 29.0), secs(201.0 - 1.0 / 29.0));
    let away: Vec<&(Instant, u16)> = tl
        .etx_a
        .iter()
        .filter(|e| e.0 > leaves && e.0 < returns)
        .collect();
    let values: Vec<u16> = away.iter().take(21).map(|e| e.1).collect();
    assert_eq!(values, etx_after_losses(256, 21));
    assert_eq!(values[20], 2304);
    assert_eq!(tl.parent.len(), 3, "{:?}", tl.parent);
    let (detached, none) = tl.parent[1];
    assert_eq!(none, None);
    assert!(detached > away[20].0 && detached - away[20].0 <= Duration::from_secs(1));
    // The No-Path DAO's loss (the 22nd sample) within the next second, then re-attached.
    assert!(away[21].0 > detached && away[21].0 < detached + Duration::from_secs(1));
    assert_eq!(tl.parent[2], (detached + Duration::from_secs(1), Some(A)));
    assert!(tl.poison_dios.is_empty(), "{:?}", tl.poison_dios);
    assert!(away.iter().all(|e| e.1 < 2560));
    // The root's route keeps pointing at A (Contiki 3.0's lifetime: 0xff × 0xffff s).
    assert_eq!(tl.root_route, vec![(Instant::ZERO, Some(A))]);
    // Back in range: the first datagram gets through both ways, and every later one.
    assert!(tl
        .delivered(true, leaves + Duration::from_secs(1), returns)
        .is_empty());
    let up = tl.delivered(true, returns, secs(260.0));
    assert_eq!(up.len(), 59);
    assert!(up[0] < secs(201.1));
    assert_eq!(tl.delivered(false, returns, secs(260.0)).len(), 59);
}

#[test]
fn downward_routes_expire_after_the_route_lifetime_and_daos_refresh_them() {
    // RPL_DEFAULT_LIFETIME 1 × RPL_DEFAULT_LIFETIME_UNIT 60 s: routes last 60 ticks of the
    // periodic timer after the DAO that installed them, and each node's DAO lifetime timer
    // sends a DAO every 30 s (set_dao_lifetime_timer). The client leaves for good at 100 s.
    let rpl = RplParams {
        default_lifetime: 1,
        lifetime_unit_s: 60,
        ..RplParams::CONTIKI
    };
    let mut mesh = walking_mesh("0 -12 11 100 -12 11 101 -12 40", Objective::Mrhof, rpl, 1);
    let tl = run(&mut mesh, Instant::from_secs(1), Instant::from_secs(250));
    // Every DAO the root received while the client was in range moved the expiry to 59–60 s
    // ahead (the 60th periodic tick), and none came more than 30 s after the previous one
    // (DTSN-triggered DAOs restart the lifetime timer, so some come sooner).
    let refreshed: Vec<(Instant, Instant)> = tl
        .root_expiry
        .iter()
        .skip(1)
        .filter_map(|&(t, e)| e.map(|e| (t, e)))
        .collect();
    assert!(refreshed.len() >= 4, "{refreshed:?}");
    for w in refreshed.windows(2) {
        assert!(w[1].0 - w[0].0 < Duration::from_millis(30_050), "{w:?}");
    }
    for &(t, e) in &refreshed {
        assert!(
            e - t > Duration::from_secs(59) && e - t <= Duration::from_secs(60),
            "{t:?} {e:?}"
        );
    }
    // After the last refresh (before the client left) the route stays until its expiry
    // tick, then rpl_purge_routes removes it: the root no longer sends down a stale path.
    let &(last, expiry) = refreshed.last().unwrap();
    assert!(last < Instant::from_secs(100));
    assert_eq!(
        tl.root_route,
        vec![(Instant::ZERO, Some(A)), (expiry, None)]
    );
    assert_eq!(tl.root_expiry.last(), Some(&(expiry, None)));
}
