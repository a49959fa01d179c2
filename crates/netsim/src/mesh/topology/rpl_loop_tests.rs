//! RPL's loop checks on data (issue 31, item 2, finding 4): the hop-by-hop option's rank error and
//! forwarding error, as Contiki 3.0 applies them (`core/net/rpl/rpl-ext-header.c`
//! `rpl_verify_header`, `rpl_update_header_empty`, `rpl_update_header_final`), against the IPv6 hop
//! limit that was the model's only guard before.

use super::*;
use crate::mesh::layout::Node;
use crate::mesh::rpl::Objective;
use crate::mesh::Routing;

const SERVER: u16 = 0;
const ROOT: u16 = 1;
const A: u16 = 2;
const B: u16 = 3;
const CLIENT: u16 = 4;

/// A line 8 m apart (10-m range, loss-free links): server, border router, routers A and B,
/// client. Up: client → B → A → root → server; down the same way back.
fn line(rpl_hbh_option: bool) -> Mesh {
    let node = |x_m, role| Node {
        x_m,
        y_m: 0.0,
        role,
    };
    let layout = Layout::explicit(vec![
        node(-8.0, Role::Server),
        node(0.0, Role::BorderRouter),
        node(8.0, Role::Router),
        node(16.0, Role::Router),
        node(24.0, Role::Client),
    ])
    .unwrap();
    let params = MeshParams {
        routing: Routing::Rpl {
            objective: Objective::Mrhof,
            warmup: None,
        },
        rpl_hbh_option,
        ..MeshParams::default()
    };
    let mesh = Mesh::new(&MeshConfig { layout, params }, 1).unwrap();
    let r = mesh.rpl.as_ref().unwrap();
    assert_eq!(
        [SERVER, A, B, CLIENT].map(|i| r.nodes[i as usize].parent()),
        [Some(ROOT), Some(ROOT), Some(A), Some(B)]
    );
    assert_eq!(r.nodes[ROOT as usize].downward(CLIENT), Some(A));
    mesh
}

/// Runs the mesh to `until`; returns the deliveries.
fn run(mesh: &mut Mesh, until: Instant) -> Vec<Delivery> {
    let mut buf = Vec::new();
    let mut got = Vec::new();
    while let Some(t) = mesh.poll_at().filter(|&t| t <= until) {
        got.extend(mesh.poll_delivery(t, &mut buf));
    }
    got
}

/// The hops (sender, addressee) of the first data datagram recorded, first attempts only.
fn hops(mesh: &mut Mesh) -> Vec<(u16, u16)> {
    mesh.take_frames()
        .iter()
        .filter(|f| f.packet.is_some() && f.attempt == Some(1))
        .map(|f| (f.node, f.to.unwrap()))
        .collect()
}

#[test]
fn an_upward_loop_is_dropped_at_the_second_rank_error() {
    for option in [true, false] {
        let mut mesh = line(option);
        let t = Instant::from_secs(30);
        run(&mut mesh, t);
        // A takes B as its parent before its rank follows: A (rank < B's) and B point at each
        // other.
        let r = mesh.rpl.as_mut().unwrap();
        r.nodes[A as usize].force_parent(B);
        let imin = Duration::from_millis(4096);
        assert!(r.nodes[B as usize].dio_interval().unwrap() > imin);
        mesh.record_frames(true);
        mesh.send(t, client_addr(0), SERVER_ADDR, &mut vec![0u8; 11], 1)
            .unwrap();
        let got = run(&mut mesh, t + Duration::from_secs(1));
        assert!(got.is_empty());
        let h = hops(&mut mesh);
        let s = mesh.stats(Direction::Up);
        assert_eq!((s.mac_drops, s.loop_drops), (1, 1));
        if option {
            // B sees A's lower rank on a datagram going up: the first rank error sets 'R', the
            // second drops it, and B resets its DIO timer (RFC 6550 §11.2.2.2).
            assert_eq!(h, [(CLIENT, B), (B, A), (A, B), (B, A), (A, B)]);
            let b = &mesh.rpl.as_ref().unwrap().nodes[B as usize];
            assert_eq!(b.dio_interval(), Some(imin));
        } else {
            // Without the option only the hop limit (Contiki UIP_TTL 64) ends it: 32 bounces.
            assert_eq!(h.len(), 64);
            assert_eq!(h[62..], [(A, B), (B, A)]);
        }
    }
}

#[test]
fn a_datagram_going_down_where_the_route_is_gone_is_dropped_with_a_no_path_dao() {
    for option in [true, false] {
        let mut mesh = line(option);
        let t = Instant::from_secs(30);
        run(&mut mesh, t);
        // B lost its route to the client; the root's and A's still lead through B.
        let r = mesh.rpl.as_mut().unwrap();
        r.nodes[B as usize].forget_route(CLIENT);
        let lifetime = r.nodes[A as usize].route_expiry(CLIENT).unwrap();
        assert!(lifetime > t + Duration::from_secs(86_400));
        mesh.record_frames(true);
        mesh.send(t, SERVER_ADDR, client_addr(0), &mut vec![0u8; 11], 2)
            .unwrap();
        let got = run(&mut mesh, t + Duration::from_secs(1));
        assert!(got.is_empty());
        let h = hops(&mut mesh);
        let s = mesh.stats(Direction::Down);
        assert_eq!((s.mac_drops, s.loop_drops), (1, 1));
        let a = &mesh.rpl.as_ref().unwrap().nodes[A as usize];
        if option {
            // Arriving with 'O' set at a node without a route: a forwarding error. B drops it
            // and sends A a No-Path DAO for the client, which withdraws A's route (usable for
            // DAO_EXPIRATION_TIMEOUT, 60 ticks; RPL runs on the mesh's clock, `epoch` ahead).
            assert_eq!(h, [(SERVER, ROOT), (ROOT, A), (A, B)]);
            let expiry = a.route_expiry(CLIENT).unwrap();
            let now = t + mesh.epoch;
            assert!(expiry <= now + Duration::from_secs(62), "{expiry:?}");
        } else {
            // Without the option B sends it up to A, which sends it down again: 64 hops.
            assert_eq!(h.len(), 64);
            assert_eq!(h[..4], [(SERVER, ROOT), (ROOT, A), (A, B), (B, A)]);
            assert_eq!(a.route_expiry(CLIENT), Some(lifetime));
        }
    }
}
