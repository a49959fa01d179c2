//! RPL on the mesh's own channel (`Routing::Rpl`).

use super::*;
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

fn shapes() -> Vec<Layout> {
    vec![
        Layout::grid(3, 3, 10.0).unwrap(),
        Layout::grid(6, 6, 10.0).unwrap(),
        Layout::chain(20, 10.0).unwrap(),
        Layout::flower(5, 7, 10.0).unwrap(),
        Layout::dumbbell(10.0).unwrap(),
        Layout::half_dumbbell(10.0).unwrap(),
    ]
}

#[test]
#[ignore = "WIP: the DODAG does not yet form over the channel (NotFormed)"]
fn the_dodag_forms_over_the_channel_with_the_static_hop_counts() {
    for objective in [Objective::Mrhof, Objective::Of0] {
        for layout in shapes() {
            let config = rpl(layout.clone(), objective);
            let mesh = Mesh::new(&config, 1).unwrap();
            let static_mesh = Mesh::new(
                &MeshConfig {
                    layout: layout.clone(),
                    params: MeshParams::default(),
                },
                1,
            )
            .unwrap();
            let c = mesh.control_stats();
            assert!(c.formed_after.is_some());
            assert!(c.dio_frames > 0 && c.dao_frames > 0, "{c:?}");
            for i in 0..layout.nodes.len() as u16 {
                assert_eq!(
                    mesh.routes().hops(i),
                    static_mesh.routes().hops(i),
                    "node {i} of {layout:?} with {objective:?}"
                );
            }
        }
    }
}

#[test]
#[ignore = "WIP: the DODAG does not yet form over the channel (NotFormed)"]
fn traffic_starts_after_formation_and_crosses_the_dodag() {
    let config = rpl(Layout::grid(3, 3, 10.0).unwrap(), Objective::Mrhof);
    let mut mesh = Mesh::new(&config, 3).unwrap();
    let formed = mesh.control_stats().formed_after.unwrap();
    // Formation takes at least one DIO interval's second half per hop (2 hops, ≥ 2 × 2.048 s).
    assert!(formed >= Duration::from_millis(2 * 2048), "{formed:?}");
    let sent = mesh
        .send(Instant::ZERO, client_addr(6), SERVER_ADDR, &[0u8; 11], 9)
        .unwrap();
    let mut buf = Vec::new();
    let mut got = None;
    while let Some(t) = mesh.poll_at() {
        if t > Instant::from_secs(10) {
            break;
        }
        if let Some(d) = mesh.poll_delivery(t, &mut buf) {
            got = Some(d);
            break;
        }
    }
    let d = got.expect("delivered");
    assert_eq!(d.id, sent);
    assert_eq!(d.tag, 9);
    assert!(
        d.at > Instant::ZERO && d.at < Instant::from_secs(1),
        "{:?}",
        d.at
    );
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
