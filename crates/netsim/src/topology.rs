//! The one topology interface: what a run loop needs from the network between its endpoints,
//! whatever carries the packets — the [`Star`](crate::Star)'s shared bottleneck, the
//! [`Mesh`](crate::mesh::Mesh)'s 802.15.4 hops, or a wrapper composed over either (lab's
//! off-mesh server joins a mesh and a star; a test drops chosen packets).
//!
//! A [`Topology`] is sans-IO in the quinn-proto sense. Call order: [`Topology::send`] whenever
//! an endpoint transmits; ask [`Topology::poll_at`] when the network next needs attention; at
//! that instant call [`Topology::poll_delivery`] until it returns `None`. Instants passed in
//! must never decrease. Every address is from [`crate::addr`]; packets carry the caller's
//! bytes (the buffer is moved in and out, never copied) and an opaque `tag` that comes back in
//! the [`Delivery`].
//!
//! ```
//! use coaplab_base::time::Instant;
//! use coaplab_netsim::{client_addr, NetworkConfig, Preset, Star, Topology, SERVER_ADDR};
//!
//! /// Runs `net` until nothing is left to happen: the tags delivered, in arrival order.
//! fn drain(net: &mut impl Topology) -> Vec<u64> {
//!     let (mut tags, mut buf) = (Vec::new(), Vec::new());
//!     while let Some(t) = net.poll_at() {
//!         while let Some(d) = net.poll_delivery(t, &mut buf) {
//!             tags.push(d.tag);
//!         }
//!     }
//!     tags
//! }
//!
//! let mut star = Star::new(&NetworkConfig::preset(Preset::Nbiot), 1).unwrap();
//! assert_eq!(star.servers(), [SERVER_ADDR]);
//! star.send(Instant::ZERO, client_addr(0), SERVER_ADDR, &mut vec![0; 11], 7).unwrap();
//! assert_eq!(drain(&mut star), [7]);
//! ```

use std::net::SocketAddr;

use coaplab_base::time::{Duration, Instant};

use crate::link::LinkStats;
use crate::record::{Delivery, Direction, PacketId, PacketRecord};

/// A network between endpoints, in virtual time (see the [module documentation](self) for the
/// call order).
pub trait Topology {
    /// Hands the UDP payload in `payload` from `src` to `dst` at `now`, with the opaque `tag`
    /// its [`Delivery`] will carry. The network takes the buffer instead of copying it:
    /// `payload` is left holding a spare buffer of unspecified contents. On an error `payload`
    /// is untouched and nothing was sent.
    fn send(
        &mut self,
        now: Instant,
        src: SocketAddr,
        dst: SocketAddr,
        payload: &mut Vec<u8>,
        tag: u64,
    ) -> Result<PacketId, SendError>;

    /// Hands a TCP segment from `src` to `dst` at `now` as one IP packet of the topology's IP
    /// header and `tcp_bytes` of TCP (its 20-B header, options and payload), with the opaque
    /// `tag` its [`Delivery`] will carry. `bytes` travel as the packet's contents (copied;
    /// possibly empty), not counted in its length: the star charges IPv4's 20-B header
    /// ([`crate::tcp::Segment::ip_len`]), the mesh IPv6's 40 B compressed and fragmented by
    /// 6LoWPAN without a transport NHC (`mesh::sixlowpan`). A topology that carries only UDP
    /// refuses it (the default): [`SendError::TcpNotCarried`].
    fn send_tcp(
        &mut self,
        now: Instant,
        src: SocketAddr,
        dst: SocketAddr,
        bytes: &[u8],
        tcp_bytes: u32,
        tag: u64,
    ) -> Result<PacketId, SendError> {
        let _ = (now, dst, bytes, tcp_bytes, tag);
        Err(SendError::TcpNotCarried(src))
    }

    /// When the network next has something to do; `None`: nothing, until the next
    /// [`Topology::send`]. A soft deadline: calling [`Topology::poll_delivery`] earlier is
    /// harmless, later distorts nothing but the caller's view of time.
    fn poll_at(&self) -> Option<Instant>;

    /// The next packet arriving at or before `now`, in arrival order. Its bytes replace the
    /// contents of `buf` (the two buffers are swapped, no copy).
    fn poll_delivery(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Delivery>;

    /// The servers' addresses, in order: the star has one, [`crate::SERVER_ADDR`]; a mesh one
    /// per server node ([`crate::server_addr`]`(0..)`). Packets to or from a server travel
    /// [`Direction::Up`] or [`Direction::Down`].
    fn servers(&self) -> &[SocketAddr];

    /// What one direction did with the packets offered to it so far. Like the star's own
    /// counters, these may run ahead of the caller's clock: read them at the end of a run.
    fn direction_stats(&self, direction: Direction) -> DirectionStats;

    /// Turns the per-packet record log on or off (off by default: no per-packet storage). A
    /// topology that keeps no per-packet records ignores it (the default).
    fn record_packets(&mut self, on: bool) {
        let _ = on;
    }

    /// Takes the records produced so far, one per packet whose fate is decided (empty when
    /// recording is off, and from a topology that keeps none: the default).
    fn take_records(&mut self) -> Vec<PacketRecord> {
        Vec::new()
    }
}

/// Why [`Topology::send`] refused a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// The IP packet exceeds what the topology carries: the star's configured MTU, the mesh's
    /// 1280-byte IPv6 datagrams (6LoWPAN's limit, `mesh::sixlowpan::MAX_DATAGRAM_BYTES`).
    #[error("{ip_len}-byte IP packet exceeds the {mtu_bytes}-byte MTU")]
    ExceedsMtu {
        /// IP length of the refused packet.
        ip_len: u32,
        /// The topology's limit.
        mtu_bytes: u32,
    },
    /// Neither address is the server's: the star only connects clients with the server.
    #[error("{src} -> {dst}: the star only links clients with the server")]
    NotViaServer {
        /// Sender.
        src: SocketAddr,
        /// Receiver.
        dst: SocketAddr,
    },
    /// No node of the topology has this address (a mesh, whose nodes are numbered).
    #[error("{0} is no node of the network")]
    UnknownAddress(SocketAddr),
    /// Source and destination are the same node.
    #[error("{0} sends to itself")]
    SameNode(SocketAddr),
    /// The topology carries UDP datagrams only ([`Topology::send_tcp`]'s default).
    #[error("{0} cannot send TCP: the network carries UDP only")]
    TcpNotCarried(SocketAddr),
    /// The network cannot take packets from `src` (a real network behind the link emulator:
    /// its socket could not be opened, or the emulator has stopped).
    #[error("{src} cannot send: {kind}")]
    Unavailable {
        /// Sender.
        src: SocketAddr,
        /// The operating system's reason.
        kind: std::io::ErrorKind,
    },
}

/// What one direction of a topology did with the packets offered to it: the drop counts by
/// where they happen, and the load on its bottleneck. Every topology fills every field, with
/// the meaning noted per field.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DirectionStats {
    /// Packets offered (star: to the bottleneck FIFO; mesh: datagrams handed to `send`).
    pub offered_packets: u64,
    /// Packets refused by a full queue (star: the bottleneck FIFO, `buffer_overflow`; mesh:
    /// a MAC queue that had no room for all of a datagram's frames).
    pub overflow_drops: u64,
    /// Packets lost on the way after entering it (star: the loss stage, `link_error`; mesh:
    /// a MAC failure, no route, or a reassembly that failed at the next hop).
    pub link_error_drops: u64,
    /// Packets carried (star: out of the serializer, a later loss included; mesh: datagrams
    /// delivered).
    pub sent_packets: u64,
    /// Bytes carried (star: IP bytes out of the serializer; mesh: PSDU bytes of every data
    /// frame sent, retransmissions included).
    pub sent_bytes: u64,
    /// Time the bottleneck was busy sending (star: the serializer; mesh: data frames' air time).
    pub busy_time: Duration,
    /// Largest queue backlog in bytes (star: the FIFO's, charged bytes right after an
    /// admission; mesh: most frames in one MAC queue × 127 B, the largest PSDU).
    pub queue_high_water_bytes: u64,
}

impl From<LinkStats> for DirectionStats {
    /// One direction of the star's link (or the emulator's, which runs the star).
    fn from(s: LinkStats) -> DirectionStats {
        DirectionStats {
            offered_packets: s.offered_packets,
            overflow_drops: s.overflow_drops,
            link_error_drops: s.link_error_drops,
            sent_packets: s.sent_packets,
            sent_bytes: s.sent_bytes,
            busy_time: s.busy_time,
            queue_high_water_bytes: s.queue_high_water_bytes,
        }
    }
}
