//! `Topology::send_tcp`: what a TCP segment costs on each topology (IPv4 on the star; IPv6
//! compressed and fragmented by 6LoWPAN on the mesh), and the refusal of a topology that
//! carries UDP only.

use std::net::SocketAddr;

use coaplab_base::time::Instant;
use coaplab_netsim::mesh::{Layout, Mesh, MeshConfig, MeshParams};
use coaplab_netsim::{
    client_addr, Delivery, Direction, DirectionStats, NetworkConfig, PacketId, Preset, SendError,
    Star, Topology, SERVER_ADDR,
};

/// Every delivery of `net` until nothing is left to happen: (IP length, bytes).
fn drain(net: &mut impl Topology) -> Vec<(u32, Vec<u8>)> {
    let (mut out, mut buf) = (Vec::new(), Vec::new());
    while let Some(t) = net.poll_at() {
        while let Some(d) = net.poll_delivery(t, &mut buf) {
            out.push((d.ip_len, buf.clone()));
        }
    }
    out
}

#[test]
fn the_star_charges_ipv4_and_twenty_bytes_of_tcp_header() {
    let mut star = Star::new(&NetworkConfig::preset(Preset::Nbiot), 1).unwrap();
    // A 100-B segment: TCP 20 + 100, IPv4 20 (`Segment::ip_len`); the bytes ride along.
    star.send_tcp(
        Instant::ZERO,
        client_addr(0),
        SERVER_ADDR,
        &[1, 2, 3],
        120,
        7,
    )
    .unwrap();
    assert_eq!(drain(&mut star), [(140, vec![1, 2, 3])]);
    // Over the 296-B MTU: refused like a datagram.
    assert_eq!(
        star.send_tcp(Instant::ZERO, client_addr(0), SERVER_ADDR, &[], 277, 8),
        Err(SendError::ExceedsMtu {
            ip_len: 297,
            mtu_bytes: 296
        })
    );
}

#[test]
fn the_mesh_carries_a_segment_as_ipv6_without_a_transport_nhc() {
    // The 3-node chain: border router 0, server 1, client 2 one hop from the server; static
    // routes, 64-bit addresses, RPL's hop-by-hop option on (the defaults).
    let config = MeshConfig {
        layout: Layout::chain(3, 10.0).unwrap(),
        params: MeshParams::default(),
    };
    let mut mesh = Mesh::new(&config, 1).unwrap();
    let client = client_addr(0);
    // A 244-B segment (TCP 264 B): IPv6 40 + option 8 + 264 = 312 B. Compressed: IPHC 2 +
    // next header 1 for the IPv6 header, then 272 B inline: FRAG1 3 + 4 + 96, two FRAGNs of
    // 5 + 96 and 5 + 80, each frame with 23 B of MAC header and FCS.
    mesh.send_tcp(Instant::ZERO, client, SERVER_ADDR, &[9; 5], 264, 1)
        .unwrap();
    assert_eq!(drain(&mut mesh), [(312, vec![9; 5])]);
    let up = mesh.stats(Direction::Up);
    assert_eq!(up.frames_sent, 3);
    assert_eq!(up.frame_bytes, (23 + 103) + (23 + 101) + (23 + 85));
    // A pure ACK answers in one frame: 3 + 8 + 20 = 31 B of payload.
    mesh.send_tcp(Instant::from_secs(1), SERVER_ADDR, client, &[], 20, 2)
        .unwrap();
    assert_eq!(drain(&mut mesh), [(68, vec![])]);
    let down = mesh.stats(Direction::Down);
    assert_eq!((down.frames_sent, down.frame_bytes), (1, 23 + 31));
    // Over 6LoWPAN's 1280-B datagram: refused.
    assert_eq!(
        mesh.send_tcp(Instant::from_secs(2), client, SERVER_ADDR, &[], 1233, 3),
        Err(SendError::ExceedsMtu {
            ip_len: 1281,
            mtu_bytes: 1280
        })
    );
}

/// A network of UDP only: `send_tcp` is the trait's default.
struct UdpOnly(Star);

impl Topology for UdpOnly {
    fn send(
        &mut self,
        now: Instant,
        src: SocketAddr,
        dst: SocketAddr,
        payload: &mut Vec<u8>,
        tag: u64,
    ) -> Result<PacketId, SendError> {
        self.0.send(now, src, dst, payload, tag)
    }

    fn poll_at(&self) -> Option<Instant> {
        self.0.poll_at()
    }

    fn poll_delivery(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Delivery> {
        self.0.poll_delivery(now, buf)
    }

    fn servers(&self) -> &[SocketAddr] {
        self.0.servers()
    }

    fn direction_stats(&self, direction: Direction) -> DirectionStats {
        self.0.direction_stats(direction)
    }
}

#[test]
fn a_topology_of_udp_only_refuses_a_segment() {
    let mut net = UdpOnly(Star::new(&NetworkConfig::preset(Preset::Nbiot), 1).unwrap());
    assert_eq!(
        net.send_tcp(Instant::ZERO, client_addr(0), SERVER_ADDR, &[], 20, 1),
        Err(SendError::TcpNotCarried(client_addr(0)))
    );
    assert_eq!(net.poll_at(), None);
}
