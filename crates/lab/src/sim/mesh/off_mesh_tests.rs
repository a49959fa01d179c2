//! The off-mesh server: client → mesh hops → border router → wired link → server and back.

use coaplab_cc::time::{Duration, Instant};
use coaplab_netsim::mesh::{Layout, Mesh, MeshConfig, MeshParams};
use coaplab_netsim::{
    client_addr, DelayConfig, Delivery, Direction, LinkConfig, LossModel, NetworkConfig, Star,
    Topology, SERVER_ADDR,
};

use super::MeshNet;

/// Chain 0 (border router) – 1 (client 0) – 2 (client 1), 10 m apart, static routes, the
/// server off the mesh.
fn chain3() -> MeshConfig {
    let layout = Layout::chain(3, 10.0)
        .unwrap()
        .with_roles(Some(0), Some(&[]))
        .unwrap();
    let params = MeshParams {
        off_mesh_server: true,
        ..MeshParams::default()
    };
    MeshConfig { layout, params }
}

/// A wired link of `rate_bps` and 10 ms each way, no rest of path, FIFO of `buffer_bytes`.
fn wired(rate_bps: u64, buffer_bytes: u64) -> NetworkConfig {
    let link = LinkConfig {
        rate_bps,
        propagation: DelayConfig::constant(Duration::from_millis(10)),
        buffer_bytes,
        overhead_bytes: 0,
        queue_counts_overhead: true,
        count_in_service: true,
        burst_bytes: 0,
        loss: LossModel::None,
        trace: None,
    };
    NetworkConfig {
        down: link.clone(),
        up: link,
        rest_down: DelayConfig::constant(Duration::ZERO),
        rest_up: DelayConfig::constant(Duration::ZERO),
        mtu_bytes: 1500,
    }
}

const SEED: u64 = 11;

fn net(rate_bps: u64, buffer_bytes: u64) -> MeshNet {
    MeshNet::new(
        Mesh::new(&chain3(), SEED).unwrap(),
        Some(Star::new(&wired(rate_bps, buffer_bytes), SEED).unwrap()),
    )
}

/// Runs until nothing is left; the deliveries with their payload lengths.
fn drain(net: &mut impl Topology) -> Vec<(Delivery, usize)> {
    let mut out = Vec::new();
    let mut buf = Vec::new();
    while let Some(t) = net.poll_at() {
        while let Some(d) = net.poll_delivery(t, &mut buf) {
            out.push((d, buf.len()));
        }
    }
    out
}

/// The same mesh alone: when a datagram sent at `at` reaches its end.
fn mesh_arrival(mesh: &mut Mesh, at: Instant, src: std::net::SocketAddr, len: usize) -> Instant {
    let dst = if src == SERVER_ADDR {
        client_addr(1)
    } else {
        SERVER_ADDR
    };
    mesh.send(at, src, dst, &mut vec![0; len], 0).unwrap();
    let mut buf = Vec::new();
    let mut arrivals = Vec::new();
    while let Some(t) = mesh.poll_at() {
        while let Some(d) = mesh.poll_delivery(t, &mut buf) {
            arrivals.push(d.at);
        }
    }
    assert_eq!(arrivals.len(), 1);
    arrivals[0]
}

#[test]
fn request_and_response_cross_mesh_and_wired_link_at_exact_instants() {
    let mut net = net(100_000, 10_000);
    // The mesh alone, same seed and the same sends: its instants at the border router and
    // at the client.
    let mut alone = Mesh::new(&chain3(), SEED).unwrap();
    let t0 = Instant::from_millis(5);
    let at_br = mesh_arrival(&mut alone, t0, client_addr(1), 11);

    net.send(t0, client_addr(1), SERVER_ADDR, &mut vec![0; 11], 1)
        .unwrap();
    let got = drain(&mut net);
    assert_eq!(got.len(), 1);
    let (request, len) = got[0];
    // Wired: IPv4+UDP 28 + 11 = 39 B at 100 kbit/s = 3,120 µs, then 10 ms.
    assert_eq!(
        (request.at, request.dst, request.tag, len, request.ip_len),
        (
            at_br + Duration::from_micros(3_120 + 10_000),
            SERVER_ADDR,
            1,
            11,
            39
        )
    );
    assert_eq!(request.direction, Direction::Up);

    // The answer at once: 28 + 20 = 48 B = 3,840 µs + 10 ms to the border router, then the
    // mesh's two hops down.
    net.send(request.at, SERVER_ADDR, client_addr(1), &mut vec![0; 20], 2)
        .unwrap();
    let at_br_down = request.at + Duration::from_micros(3_840 + 10_000);
    let at_client = mesh_arrival(&mut alone, at_br_down, SERVER_ADDR, 20);
    let got = drain(&mut net);
    assert_eq!(got.len(), 1);
    let (response, len) = got[0];
    assert_eq!(
        (response.at, response.dst, response.tag, len),
        (at_client, client_addr(1), 2, 20)
    );
    assert!(at_client > at_br_down);
    let wired = net.wired.as_ref().unwrap();
    assert_eq!(wired.stats(Direction::Up).delivered_packets, 1);
    assert_eq!(wired.stats(Direction::Down).delivered_packets, 1);
    // The mesh counts its own hops only: one datagram each way.
    assert_eq!(net.mesh.stats(Direction::Up).delivered_packets, 1);
    assert_eq!(net.mesh.stats(Direction::Down).delivered_packets, 1);
}

#[test]
fn a_full_wired_buffer_drops_at_the_border_router() {
    // The FIFO holds one 39-B datagram (the one in service counts): the second request,
    // reaching the border router while the first is still on the wire (31.2 ms at
    // 10 kbit/s), is dropped there.
    let mut net = net(10_000, 50);
    let t0 = Instant::from_millis(5);
    net.send(t0, client_addr(0), SERVER_ADDR, &mut vec![0; 11], 1)
        .unwrap();
    net.send(t0, client_addr(1), SERVER_ADDR, &mut vec![0; 11], 2)
        .unwrap();
    let got = drain(&mut net);
    let wired = net.wired.as_ref().unwrap().stats(Direction::Up);
    assert_eq!(net.mesh.stats(Direction::Up).delivered_packets, 2);
    assert_eq!((wired.offered_packets, wired.overflow_drops), (2, 1));
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0.dst, SERVER_ADDR);
}
