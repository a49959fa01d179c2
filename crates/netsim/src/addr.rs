//! The address plan every topology shares: where the servers and the clients are.
//!
//! Addresses are IPv4 socket addresses from 198.18.0.0/15 (RFC 2544's benchmarking range):
//! servers on 198.18.1.x, clients on 198.18.0.x. The star knows one server, [`SERVER_ADDR`];
//! a mesh numbers its server nodes [`server_addr`]`(0..)` and its client nodes
//! [`client_addr`]`(0..)`, in node order. Lab's run loops address flow `i` from
//! [`client_addr`]`(i)`, so a flow's index can be read back from its address.

use std::net::{IpAddr, Ipv4Addr, SocketAddr, SocketAddrV4};

/// The server's address: 198.18.1.1:5683.
pub const SERVER_ADDR: SocketAddr =
    SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(198, 18, 1, 1), 5683));

/// The address of server `index` of a network with several servers (the mesh's server nodes
/// in node order): host 198.18.1.(1 + index), port 5683; `server_addr(0)` is [`SERVER_ADDR`].
/// Indices past 253 share the last host (a mesh takes at most 254 servers,
/// `mesh::layout::MAX_SERVERS`).
pub fn server_addr(index: u32) -> SocketAddr {
    let host = (1 + index.min(253)) as u8;
    SocketAddr::new(
        IpAddr::V4(Ipv4Addr::new(198, 18, 1, host)),
        SERVER_ADDR.port(),
    )
}

/// Conventional address of client `index`: host 198.18.0.(1 + index mod 254), port
/// 10000 + index div 254. Any address other than the server's is a client to the star.
pub fn client_addr(index: u32) -> SocketAddr {
    let host = (1 + index % 254) as u8;
    let port = 10_000 + (index / 254).min(u32::from(u16::MAX - 10_000)) as u16;
    SocketAddr::new(IpAddr::V4(Ipv4Addr::new(198, 18, 0, host)), port)
}
