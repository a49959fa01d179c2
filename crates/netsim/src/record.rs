//! Ground truth: the per-packet record and the delivery handed to the receiver.

use std::net::SocketAddr;

use coaplab_base::time::Instant;

/// Which way a packet travels: towards a server (up) or from one (down).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Client → server.
    Up,
    /// Server → client.
    Down,
}

/// Identity of one sent packet: its send order in the run, from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PacketId(pub u64);

/// A packet arriving at its destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delivery {
    /// Which packet.
    pub id: PacketId,
    /// Arrival instant at the destination.
    pub at: Instant,
    /// Sender.
    pub src: SocketAddr,
    /// Receiver.
    pub dst: SocketAddr,
    /// The caller's opaque tag given to [`crate::Topology::send`].
    pub tag: u64,
    /// Direction travelled.
    pub direction: Direction,
    /// IP length (star: CoAP bytes + 28; mesh: the uncompressed IPv6 length).
    pub ip_len: u32,
}

/// How a packet's journey ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Arrived at the destination at this instant.
    Delivered(Instant),
    /// Dropped on enqueue at the bottleneck FIFO (`buffer_overflow`).
    BufferOverflow,
    /// Lost in the bottleneck's loss stage at this instant (`link_error`), after using link time.
    LinkError(Instant),
}

/// Everything the network knows about one packet (docs/experiments.md §1.1 "per-packet log").
///
/// Records are produced only when recording is on ([`crate::Topology::record_packets`]; the
/// star keeps them, the mesh not yet),
/// at the moment the fate is decided: a link-error loss is recorded when the packet is admitted,
/// so records are not sorted by any instant; sort by [`PacketId`] or a time field as needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketRecord {
    /// Which packet.
    pub id: PacketId,
    /// The caller's opaque tag.
    pub tag: u64,
    /// Direction.
    pub direction: Direction,
    /// Sender.
    pub src: SocketAddr,
    /// Receiver.
    pub dst: SocketAddr,
    /// IP length.
    pub ip_len: u32,
    /// Bytes charged by the serializer (IP length + overhead).
    pub charged_bytes: u32,
    /// When the sender handed it to the network.
    pub sent_at: Instant,
    /// When it reached the bottleneck FIFO.
    pub enqueued_at: Instant,
    /// FIFO backlog in bytes found on arrival.
    pub backlog_bytes: u64,
    /// FIFO backlog in packets found on arrival.
    pub backlog_packets: u32,
    /// Serialization interval, absent when dropped on enqueue.
    pub serialized: Option<(Instant, Instant)>,
    /// The end of the journey.
    pub fate: Fate,
}
