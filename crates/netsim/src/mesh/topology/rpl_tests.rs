//! RPL on the mesh's own channel (`Routing::Rpl`).

use super::*;
use crate::mesh::rpl::of::{dag_rank, MIN_HOP_RANK_INCREASE};
use crate::mesh::rpl::Objective;
use crate::mesh::Routing;

fn rpl(layout: Layout, objective: Objective) -> MeshConfig {
    let params = MeshParams {
        routing: Routing::Rpl {
            objective,
            warmup: None,
        },
        ..MeshParams::default()
    };
    MeshConfig { layout, params }
}

/// Every generator shape at its thesis size, with the warm-up it is asserted to form within:
/// the longest formation over seeds 1–30 and both objectives (measured once: grid 3×3 17.3 s,
/// 6×6 41.0 s, chain 73.3 s, flower 38.1 s, dumbbell 34.2 s, half-dumbbell 10.0 s), with
/// margin.
fn shapes() -> Vec<(Layout, Duration)> {
    vec![
        (Layout::grid(3, 3, 10.0).unwrap(), Duration::from_secs(30)),
        (Layout::grid(6, 6, 10.0).unwrap(), Duration::from_secs(60)),
        (Layout::chain(20, 10.0).unwrap(), Duration::from_secs(120)),
        (Layout::flower(5, 7, 10.0).unwrap(), Duration::from_secs(60)),
        (Layout::dumbbell(10.0).unwrap(), Duration::from_secs(60)),
        (
            Layout::half_dumbbell(10.0).unwrap(),
            Duration::from_secs(30),
        ),
    ]
}

/// The DODAG of `mesh` against the static minimum-hop tree: every node joined, its parent a
/// radio neighbour, and the root's downward routes leading to it. OF0 (hop count) gives
/// exactly the minimum-hop tree with one `MinHopRankIncrease` per hop. MRHOF (ETX) gives at
/// least as many hops — a link that lost frames during formation may make a longer path
/// cheaper (none did over seeds 1–30 on the six shapes, but nothing forbids it) — and a rank
/// of at least the
/// parent's advertised rank plus 256 (ETX ≥ 1; the rank follows the ETX only at the next 1-s
/// tick). A parent's current rank may exceed the one its child last heard until its next
/// DIO, so that is not compared.
fn check_structure(mesh: &Mesh, static_mesh: &Mesh, objective: Objective, what: &str) {
    let r = mesh.rpl.as_ref().unwrap();
    let root = r.root;
    for i in 0..mesh.layout.nodes.len() as u16 {
        let min_hops = static_mesh.routes().hops(i).unwrap();
        let hops = mesh.routes().hops(i).unwrap();
        match objective {
            Objective::Of0 => assert_eq!(hops, min_hops, "hops of node {i}, {what}"),
            Objective::Mrhof => assert!(hops >= min_hops, "hops of node {i}, {what}"),
        }
        let node = &r.nodes[i as usize];
        let rank = node.rank();
        if i == root {
            assert_eq!(rank, MIN_HOP_RANK_INCREASE);
            continue;
        }
        let p = node.parent().unwrap();
        assert!(
            mesh.medium.links(i).any(|l| l == p),
            "{what}: {i}'s parent {p}"
        );
        let heard = node.parent_rank().unwrap();
        match objective {
            Objective::Of0 => {
                assert_eq!(u32::from(dag_rank(rank)), hops + 1, "{what}: {i}");
                assert_eq!(heard, r.nodes[p as usize].rank(), "{what}: {i}");
            }
            Objective::Mrhof => {
                assert!(node.link_metric(p).unwrap() >= 256, "{what}: {i}");
                assert!(rank >= heard + 256, "{what}: rank of {i}");
            }
        }
        // Following the downward routes from the root reaches the node.
        let (mut at, mut steps) = (root, 0);
        while at != i && steps < 64 {
            at = r.nodes[at as usize].downward(i).unwrap();
            steps += 1;
        }
        assert_eq!(at, i, "{what}: downward route to {i}");
    }
}

#[test]
fn the_dodag_forms_over_the_channel_on_every_shape_within_its_warm_up() {
    for objective in [Objective::Mrhof, Objective::Of0] {
        for (layout, warm_up) in shapes() {
            let static_mesh = Mesh::new(
                &MeshConfig {
                    layout: layout.clone(),
                    params: MeshParams::default(),
                },
                1,
            )
            .unwrap();
            for seed in 1..=3 {
                let what = format!("{objective:?}, seed {seed}, {layout:?}");
                let mesh = Mesh::new(&rpl(layout.clone(), objective), seed).unwrap();
                let c = mesh.control_stats();
                let formed = c.formed_after.unwrap();
                assert!(formed <= warm_up, "{what}: formed after {formed:?}");
                assert_eq!(c.warm_up_time, formed);
                assert!(c.total.dio_frames > 0 && c.total.dao_frames > 0, "{c:?}");
                assert_eq!(c.total, c.warm_up);
                check_structure(&mesh, &static_mesh, objective, &what);
            }
        }
    }
}

#[test]
fn a_fixed_warm_up_runs_rpl_for_exactly_that_long() {
    let mut config = rpl(Layout::grid(3, 3, 10.0).unwrap(), Objective::Mrhof);
    config.params.routing = Routing::Rpl {
        objective: Objective::Mrhof,
        warmup: Some(Duration::from_secs(60)),
    };
    let mesh = Mesh::new(&config, 1).unwrap();
    let c = mesh.control_stats();
    assert_eq!(c.warm_up_time, Duration::from_secs(60));
    assert!(c.formed_after.unwrap() < Duration::from_secs(60));
    // Nothing is on the channel before the run starts that the warm-up did not count.
    assert_eq!(c.measured(), ControlCounts::default());
    // Too short a fixed warm-up is not an error: the run starts on a partial DODAG.
    config.params.routing = Routing::Rpl {
        objective: Objective::Mrhof,
        warmup: Some(Duration::from_secs(1)),
    };
    let mesh = Mesh::new(&config, 1).unwrap();
    assert_eq!(mesh.control_stats().formed_after, None);
    assert!(!mesh.rpl_formed());
}

#[test]
fn traffic_crosses_the_dodag_up_and_down_and_control_is_counted_after_the_warm_up() {
    let config = rpl(Layout::grid(3, 3, 10.0).unwrap(), Objective::Mrhof);
    let mut mesh = Mesh::new(&config, 3).unwrap();
    let formed = mesh.control_stats().formed_after.unwrap();
    // Formation takes at least one DIO interval's second half per hop and a DAO delay
    // (2 hops: ≥ 2 × 2.048 s + 2 s).
    assert!(
        formed >= Duration::from_millis(2 * 2048 + 2000),
        "{formed:?}"
    );
    let mut buf = Vec::new();
    // Let the DAO burst of formation pass, then send up (client 6 = node 8, two hops from the
    // root in the centre, to the server in the corner: up to the root, down again).
    let start = Instant::from_secs(10);
    while let Some(t) = mesh.poll_at().filter(|&t| t <= start) {
        assert!(mesh.poll_delivery(t, &mut buf).is_none());
    }
    let up = mesh
        .send(start, client_addr(6), SERVER_ADDR, &mut vec![0u8; 11], 9)
        .unwrap();
    let mut got = None;
    while let Some(t) = mesh
        .poll_at()
        .filter(|&t| t <= start + Duration::from_secs(1))
    {
        if let Some(d) = mesh.poll_delivery(t, &mut buf) {
            got = Some(d);
            break;
        }
    }
    let d = got.expect("delivered");
    assert_eq!((d.id, d.tag), (up, 9));
    assert!(
        d.at > start && d.at < start + Duration::from_millis(100),
        "{:?}",
        d.at
    );
    assert_eq!(mesh.stats(Direction::Up).delivered_packets, 1);
    // DIOs kept flowing after the warm-up and are counted apart from it.
    let c = mesh.control_stats();
    assert!(c.measured().dio_frames > 0, "{c:?}");
}

#[test]
fn static_routing_has_no_control_traffic() {
    let mesh = Mesh::new(
        &MeshConfig {
            layout: Layout::grid(3, 3, 10.0).unwrap(),
            params: MeshParams::default(),
        },
        1,
    )
    .unwrap();
    assert_eq!(mesh.control_stats(), ControlStats::default());
}

/// Frames recorded from the very start, before any datagram has a slot: RPL's first DIS/DIO
/// frames are logged (as control frames, naming no packet) instead of indexing an empty slot
/// table (a traced mesh run panicked there: issue 31, found with the Cooja oracle).
#[test]
fn frames_recorded_before_any_datagram_are_logged_without_a_slot() {
    let config = rpl(Layout::grid(3, 3, 10.0).unwrap(), Objective::Mrhof);
    let mut mesh = Mesh::new(&config, 1).unwrap();
    mesh.record_frames(true);
    let mut buf = Vec::new();
    let end = Instant::from_secs(20);
    while let Some(t) = mesh.poll_at().filter(|&t| t <= end) {
        assert!(mesh.poll_delivery(t, &mut buf).is_none());
    }
    let frames = mesh.take_frames();
    assert!(!frames.is_empty());
    assert!(frames
        .iter()
        .all(|f| f.kind != FrameKind::Data && f.packet.is_none()));
    assert!(frames.iter().any(|f| f.kind == FrameKind::Dio));
}
