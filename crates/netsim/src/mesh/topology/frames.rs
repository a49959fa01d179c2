//! The mesh's per-hop frame log ([`Mesh::record_frames`]): one [`FrameRecord`] per frame
//! that went on air (data fragments, RPL control frames, ACKs), for traces. Off by default;
//! recording draws nothing from any random stream, so a recorded run is the same run.

use std::net::SocketAddr;

use coaplab_base::time::Instant;

use super::Mesh;
use crate::mesh::mac::{Control, Frame, BROADCAST};
use crate::mesh::phy;

/// What a frame on air carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    /// A fragment (or the whole) of a CoAP datagram.
    Data,
    /// An 802.15.4 acknowledgement.
    Ack,
    /// RPL DIO.
    Dio,
    /// RPL DIS.
    Dis,
    /// RPL DAO.
    Dao,
}

impl FrameKind {
    /// `data`, `ack`, `dio`, `dis`, `dao`.
    pub fn name(self) -> &'static str {
        match self {
            FrameKind::Data => "data",
            FrameKind::Ack => "ack",
            FrameKind::Dio => "dio",
            FrameKind::Dis => "dis",
            FrameKind::Dao => "dao",
        }
    }
}

/// One frame on air, as [`Mesh::take_frames`] returns it (instants on the run's clock, as
/// [`Topology::poll_delivery`](crate::Topology::poll_delivery)'s).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameRecord {
    /// Transmission start (after CSMA/CA and turnaround).
    pub start: Instant,
    /// Transmission end.
    pub end: Instant,
    /// The sending node.
    pub node: u16,
    /// The addressed node; `None` for a broadcast (DIO, DIS).
    pub to: Option<u16>,
    /// What it carried.
    pub kind: FrameKind,
    /// PSDU bytes (MAC header, payload, FCS).
    pub psdu_bytes: u16,
    /// Data frames: the datagram's packet id (its send order, as a `Delivery`'s `id`).
    pub packet: Option<u64>,
    /// Data frames: the datagram's tag (the caller's, as given to [`Topology::send`](crate::Topology::send)).
    pub tag: Option<u64>,
    /// Data frames: fragment index (from 0) and count of the datagram on this hop.
    pub fragment: Option<(u16, u16)>,
    /// Data and control frames sent unicast: the attempt, 1 = first (MAC retries + 1).
    pub attempt: Option<u32>,
    /// Whether the addressed node decoded it (broadcast: whether any node did).
    pub decoded: bool,
    /// How many nodes decoded it.
    pub receivers: u32,
    /// The MAC sequence number (an ACK: the acknowledged frame's).
    pub seq: u8,
    /// RPL control frames: the message.
    pub control: Option<Control>,
}

/// A datagram sent into the mesh while recording ([`Mesh::take_datagrams`]): what a
/// [`FrameRecord`]'s `packet` refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatagramRecord {
    /// Its packet id (a `Delivery`'s `id`, a [`FrameRecord`]'s `packet`).
    pub id: u64,
    /// Its tag (the caller's, as given to [`Topology::send`](crate::Topology::send)).
    pub tag: u64,
    /// The UDP source.
    pub src: SocketAddr,
    /// The UDP destination.
    pub dst: SocketAddr,
    /// The node it starts from.
    pub src_node: u16,
    /// The node it ends at (an off-mesh server's: the border router).
    pub dst_node: u16,
    /// Towards the server (RPL: upward).
    pub up: bool,
    /// The uncompressed IPv6 length the model frames.
    pub ip_len: u32,
    /// The UDP payload (the CoAP message) as the endpoint produced it.
    pub payload: Vec<u8>,
}

impl Mesh {
    /// Starts (or stops) keeping a [`FrameRecord`] of every frame that goes on air from now
    /// on (after any RPL warm-up: the warm-up's frames are not kept).
    pub fn record_frames(&mut self, on: bool) {
        self.frame_log = on.then(Vec::new);
        self.datagram_log.clear();
    }

    /// The datagrams sent since recording started, taken out (in send order).
    pub fn take_datagrams(&mut self) -> Vec<DatagramRecord> {
        std::mem::take(&mut self.datagram_log)
    }

    /// The tag of datagram `id` if it was sent while recording (ids are consecutive, so
    /// the log is indexed by id).
    fn logged_tag(&self, id: u64) -> Option<u64> {
        let first = self.datagram_log.first()?.id;
        let d = self
            .datagram_log
            .get(usize::try_from(id.checked_sub(first)?).ok()?)?;
        (d.id == id).then_some(d.tag)
    }

    /// Keeps the datagram just sent in `slot` (recording only).
    pub(super) fn log_datagram(&mut self, slot: u32) {
        let d = &self.slots[slot as usize];
        self.datagram_log.push(DatagramRecord {
            id: d.id,
            tag: d.tag,
            src: d.src.unwrap_or(crate::addr::SERVER_ADDR),
            dst: d.dst.unwrap_or(crate::addr::SERVER_ADDR),
            src_node: d.src_node,
            dst_node: d.dst_node,
            up: d.up,
            ip_len: d.ip_len,
            payload: d.payload.clone(),
        });
    }

    /// The frames recorded so far, taken out.
    pub fn take_frames(&mut self) -> Vec<FrameRecord> {
        self.frame_log
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Logs the data or control frame `frame` that `node` finished sending at `end`
    /// (internal clock), `received` the nodes that decoded it.
    pub(super) fn log_frame(&mut self, node: u16, frame: &Frame, end: Instant, received: &[u16]) {
        if self.frame_log.is_none() {
            return;
        }
        let kind = match frame.control {
            None => FrameKind::Data,
            Some(Control::Dio { .. }) => FrameKind::Dio,
            Some(Control::Dis) => FrameKind::Dis,
            Some(Control::Dao { .. }) => FrameKind::Dao,
        };
        // A control frame's `slot` names no datagram (no slot may exist yet: a traced run's
        // first frames are RPL's), so only a data frame looks its slot up.
        let data = (kind == FrameKind::Data)
            .then(|| self.slots.get(frame.slot as usize))
            .flatten()
            .filter(|d| d.id == frame.datagram);
        let broadcast = frame.to == BROADCAST;
        let record = FrameRecord {
            start: end - phy::airtime(u32::from(frame.psdu_bytes)) - self.epoch,
            end: end - self.epoch,
            node,
            to: (!broadcast).then_some(frame.to),
            kind,
            psdu_bytes: frame.psdu_bytes,
            // The datagram may be gone (delivered, or dropped, its slot reused) while a MAC
            // retry of one of its frames is on air: the frame still names it.
            packet: (kind == FrameKind::Data).then_some(frame.datagram),
            tag: data
                .map(|d| d.tag)
                .or_else(|| self.logged_tag(frame.datagram)),
            fragment: (kind == FrameKind::Data).then_some((frame.fragment, frame.fragments)),
            attempt: (!broadcast).then(|| self.macs[node as usize].attempt()),
            decoded: if broadcast {
                !received.is_empty()
            } else {
                received.contains(&frame.to)
            },
            receivers: received.len() as u32,
            seq: frame.seq,
            control: frame.control,
        };
        if let Some(log) = self.frame_log.as_mut() {
            log.push(record);
        }
    }

    /// Logs the ACK `node` finished sending to `to` at `end` (internal clock).
    pub(super) fn log_ack(&mut self, node: u16, to: u16, seq: u8, end: Instant, received: &[u16]) {
        let Some(log) = self.frame_log.as_mut() else {
            return;
        };
        log.push(FrameRecord {
            start: end - phy::airtime(crate::mesh::mac::ACK_BYTES) - self.epoch,
            end: end - self.epoch,
            node,
            to: Some(to),
            kind: FrameKind::Ack,
            psdu_bytes: crate::mesh::mac::ACK_BYTES as u16,
            packet: None,
            tag: None,
            fragment: None,
            attempt: None,
            decoded: received.contains(&to),
            receivers: received.len() as u32,
            seq,
            control: None,
        });
    }
}
