//! `link-up.pcap` and `link-down.pcap`: the packets of a simulated run as IPv4 on each
//! bottleneck direction, readable by Wireshark / tshark exactly like the emulator's captures.
//!
//! Each file holds every packet offered to that direction's FIFO (those it dropped and those
//! the loss stage lost included: a tap in front of the queue), stamped with the instant the
//! packet reached the FIFO (nanosecond pcap, epoch = the start of the run), in that order
//! (ties in send order). The packets are rebuilt from what the simulator sent: the simulated
//! addresses and ports (clients 198.18.0.x, the server 198.18.1.1:5683), an IPv4 header
//! (TTL 64, no options) and a UDP header around the CoAP bytes, or for CoAP over TCP a TCP
//! header (no options, window 65535) from the model's segment: its sequence and
//! acknowledgement numbers modulo 2^32 (ISN 0), SYN/FIN/ACK flags, PSH on data. Lengths and
//! checksums are correct. Packets still inside the network when the run ended are followed
//! to their fate first (the endpoints no longer see them), so every packet sent is in a file.

use std::fs::File;
use std::io::{self, BufWriter};
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::time::Duration as StdDuration;

use coaplab_emu::pcap::PcapWriter;
use coaplab_netsim::tcp::Segment;
use coaplab_netsim::{Direction, PacketRecord};
use etherparse::PacketBuilder;

/// What a packet carried, beyond its payload.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Udp,
    Tcp {
        seq: u32,
        ack: Option<u32>,
        syn: bool,
        fin: bool,
    },
}

/// One sent packet.
#[derive(Debug, Clone, Copy)]
struct Sent {
    flow: u32,
    kind: Kind,
    /// Its payload: `payload[start..end]` of the log.
    start: usize,
    end: usize,
}

/// Every packet a traced run sent, by packet id (the star numbers packets 0, 1, 2, … in send
/// order, and a run sends only through it).
#[derive(Debug, Default)]
pub(crate) struct PacketLog {
    sent: Vec<Sent>,
    payload: Vec<u8>,
}

impl PacketLog {
    /// The next packet sent: a UDP datagram of `flow` carrying `coap`.
    pub(crate) fn udp(&mut self, flow: u32, coap: &[u8]) {
        self.push(flow, Kind::Udp, coap);
    }

    /// The next packet sent: TCP segment `seg` of `flow`.
    pub(crate) fn tcp(&mut self, flow: u32, seg: &Segment) {
        let kind = Kind::Tcp {
            seq: seg.seq as u32,
            ack: seg.ack.map(|a| a as u32),
            syn: seg.syn,
            fin: seg.fin,
        };
        self.push(flow, kind, &seg.payload);
    }

    fn push(&mut self, flow: u32, kind: Kind, bytes: &[u8]) {
        let start = self.payload.len();
        self.payload.extend_from_slice(bytes);
        self.sent.push(Sent {
            flow,
            kind,
            start,
            end: self.payload.len(),
        });
    }

    /// The flow of packet `id`.
    pub(crate) fn flow(&self, id: u64) -> Option<u32> {
        self.sent.get(id as usize).map(|s| s.flow)
    }

    /// Packet `id` as an IPv4 packet from `src` to `dst`, or `None` for an unknown id or a
    /// non-IPv4 address.
    pub(crate) fn ip_packet(&self, id: u64, src: SocketAddr, dst: SocketAddr) -> Option<Vec<u8>> {
        let s = self.sent.get(id as usize)?;
        let (IpAddr::V4(a), IpAddr::V4(b)) = (src.ip(), dst.ip()) else {
            return None;
        };
        let payload = &self.payload[s.start..s.end];
        let ip = PacketBuilder::ipv4(a.octets(), b.octets(), 64);
        let mut out = Vec::new();
        let written = match s.kind {
            Kind::Udp => {
                let b = ip.udp(src.port(), dst.port());
                out.reserve(b.size(payload.len()));
                b.write(&mut out, payload)
            }
            Kind::Tcp { seq, ack, syn, fin } => {
                let mut b = ip.tcp(src.port(), dst.port(), seq, u16::MAX);
                if let Some(ack) = ack {
                    b = b.ack(ack);
                }
                if syn {
                    b = b.syn();
                }
                if fin {
                    b = b.fin();
                }
                if !payload.is_empty() {
                    b = b.psh();
                }
                out.reserve(b.size(payload.len()));
                b.write(&mut out, payload)
            }
        };
        written.ok().map(|()| out)
    }
}

/// Writes `link-up.pcap` and `link-down.pcap` into `dir` from the star's `records` and the
/// packets' bytes in `log`.
pub(crate) fn write_links(dir: &Path, records: &[PacketRecord], log: &PacketLog) -> io::Result<()> {
    for (direction, name) in [(Direction::Up, "link-up"), (Direction::Down, "link-down")] {
        let mut chosen: Vec<&PacketRecord> = records
            .iter()
            .filter(|r| r.direction == direction)
            .collect();
        chosen.sort_by_key(|r| (r.enqueued_at, r.id));
        let stem = dir.join(name);
        let tmp = stem.with_extension("pcap.tmp");
        let mut w = PcapWriter::new(BufWriter::new(File::create(&tmp)?))?;
        for r in chosen {
            let Some(packet) = log.ip_packet(r.id.0, r.src, r.dst) else {
                continue;
            };
            let at = StdDuration::from_nanos(r.enqueued_at.as_nanos().max(0) as u64);
            w.write_since_epoch(at, &packet)?;
        }
        w.finish()?;
        std::fs::rename(&tmp, stem.with_extension("pcap"))?;
    }
    Ok(())
}
