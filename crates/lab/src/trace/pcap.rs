//! `link-up.pcap` and `link-down.pcap`: the packets of a simulated run as IPv4 on each
//! bottleneck direction, readable by Wireshark / tshark exactly like the emulator's captures.
//!
//! Each file holds every packet offered to that direction's FIFO (those it dropped and those
//! the loss stage lost included: a tap in front of the queue), stamped with the instant the
//! packet reached the FIFO (nanosecond pcap, epoch = the start of the run), in that order
//! (ties in send order). The packets are rebuilt from what the simulator sent: the simulated
//! addresses and ports (clients 198.18.0.x, the server 198.18.1.1:5683), an IPv4 header
//! (TTL 64, no options) and a UDP header around the CoAP bytes, or for CoAP over TCP a TCP
//! header (window 65535) from the model's segment: its sequence and acknowledgement numbers
//! modulo 2^32 (ISN 0), SYN/FIN/ACK flags, PSH on data, and on a SYN or SYN-ACK the option
//! bytes the model counts, written as Linux writes them (`tcp_options_write`): MSS, NOP and
//! window scale (shift 7, a stock kernel's with the default `tcp_rmem`; the model's receive
//! window is never limiting) for `syn_options_bytes = 8`, then a Fast Open option (kind 34: a
//! cookie request, or an 8-byte cookie of zeros) padded with NOPs. Lengths and checksums are
//! correct. Packets still inside the network when the run ended are followed
//! to their fate first (the endpoints no longer see them), so every packet sent is in a file.

use std::io::{self, BufWriter};
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::time::Duration as StdDuration;

use coaplab_emu::pcap::PcapWriter;
use coaplab_netsim::tcp::{Segment, TcpConfig};
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
        options: TcpOptions,
    },
}

/// The option bytes of one TCP segment (at most 40).
#[derive(Debug, Clone, Copy)]
struct TcpOptions {
    bytes: [u8; 40],
    len: usize,
}

/// TCP option kinds (RFC 9293, RFC 7323, RFC 7413).
const NOP: u8 = 1;
const MSS: u8 = 2;
const WINDOW_SCALE: u8 = 3;
const FAST_OPEN: u8 = 34;

impl TcpOptions {
    /// The options of `seg` sent with `cfg`: none but on a SYN or SYN-ACK, where the first
    /// `syn_options_bytes` are MSS + NOP + window scale (NOPs beyond 8 B) and the rest the Fast
    /// Open option, as Linux's `tcp_options_write` orders and pads them.
    fn of(seg: &Segment, cfg: &TcpConfig) -> Self {
        let mut o = TcpOptions {
            bytes: [NOP; 40],
            len: 0,
        };
        if !seg.syn {
            return o;
        }
        let total = (seg.options_bytes as usize).min(40);
        let syn = (cfg.syn_options_bytes as usize).min(total);
        if syn >= 8 {
            let mss = u16::try_from(cfg.mss()).unwrap_or(u16::MAX).to_be_bytes();
            o.bytes[..8].copy_from_slice(&[MSS, 4, mss[0], mss[1], NOP, WINDOW_SCALE, 3, 7]);
        }
        let tfo = total - syn;
        if tfo >= 2 {
            // Kind 34, its length (2 + cookie), the cookie (zeros), NOPs to the 4-byte
            // boundary: 4 B for a request (no cookie), 12 B for an 8-byte cookie.
            let len = if tfo >= 10 { 10 } else { 2 };
            o.bytes[syn] = FAST_OPEN;
            o.bytes[syn + 1] = len as u8;
            o.bytes[syn + 2..syn + len].fill(0);
        }
        o.len = total;
        o
    }

    fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
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

    /// The next packet sent: TCP segment `seg` of `flow`, whose connection runs `cfg`.
    pub(crate) fn tcp(&mut self, flow: u32, seg: &Segment, cfg: &TcpConfig) {
        let kind = Kind::Tcp {
            seq: seg.seq as u32,
            ack: seg.ack.map(|a| a as u32),
            syn: seg.syn,
            fin: seg.fin,
            options: TcpOptions::of(seg, cfg),
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

    /// The log of a run whose packets were logged in two parts, each in send order: `self`
    /// and `other`, whose packets are those with the ids `other_ids` (increasing); `self`'s
    /// fill the other ids (a run of UDP flows beside TCP flows that a wrapper of the star
    /// sends itself).
    pub(crate) fn interleave(self, other: PacketLog, other_ids: &[u64]) -> PacketLog {
        let mut out = PacketLog::default();
        let (mut mine, mut theirs) = (self.sent.iter(), other.sent.iter());
        let mut next_other = other_ids.iter().peekable();
        for id in 0..(self.sent.len() + other.sent.len()) as u64 {
            let (s, log) = if next_other.next_if_eq(&&id).is_some() {
                (theirs.next(), &other)
            } else {
                (mine.next(), &self)
            };
            if let Some(s) = s {
                out.push(s.flow, s.kind, &log.payload[s.start..s.end]);
            }
        }
        out
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
            Kind::Tcp {
                seq,
                ack,
                syn,
                fin,
                options,
            } => {
                let mut b = ip.tcp(src.port(), dst.port(), seq, u16::MAX);
                if options.len > 0 {
                    b = b.options_raw(options.as_slice()).ok()?;
                }
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
        let mut w = PcapWriter::new(BufWriter::new(crate::files::create_new(&tmp)?))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn syn(options_bytes: u32, payload: &[u8]) -> Segment {
        Segment {
            seq: 0,
            ack: None,
            syn: true,
            fin: false,
            payload: payload.to_vec(),
            options_bytes,
        }
    }

    /// The options of the packet's TCP header, and its IP length.
    fn options(log: &PacketLog, id: u64) -> (Vec<u8>, usize) {
        let (a, b) = ("198.18.0.1:1000", "198.18.1.1:5683");
        let p = log
            .ip_packet(id, a.parse().unwrap(), b.parse().unwrap())
            .unwrap();
        let sliced = etherparse::SlicedPacket::from_ip(&p).unwrap();
        let Some(etherparse::TransportSlice::Tcp(tcp)) = sliced.transport else {
            panic!("TCP");
        };
        (tcp.options().to_vec(), p.len())
    }

    /// The model counts `syn_options_bytes` (default 8) on every SYN and SYN-ACK, and Fast
    /// Open's option on top: the capture has the same lengths, the options as Linux writes
    /// them (MSS = the config's, NOP, window scale 7; kind 34 padded with NOPs).
    #[test]
    fn syn_options_are_written_as_linux_writes_them() {
        let cfg = TcpConfig::default(); // MTU 296: MSS 256
        let mut log = PacketLog::default();
        log.tcp(0, &syn(8, &[]), &cfg);
        log.tcp(0, &syn(8 + 4, &[]), &cfg);
        log.tcp(0, &syn(8 + 12, &[7; 5]), &cfg);
        log.tcp(0, &syn(0, &[]), &TcpConfig::idealised());
        let mss = [2, 4, 1, 0, 1, 3, 3, 7];
        assert_eq!(options(&log, 0), (mss.to_vec(), 48));
        assert_eq!(options(&log, 1), ([&mss[..], &[34, 2, 1, 1]].concat(), 52));
        let cookie = [34, 10, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1];
        assert_eq!(options(&log, 2), ([&mss[..], &cookie].concat(), 65));
        assert_eq!(options(&log, 3), (Vec::new(), 40));
    }
}
