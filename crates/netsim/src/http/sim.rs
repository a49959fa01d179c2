//! One HTTP object download simulated end to end: the [`Download`]'s messages on two TCP
//! model connections ([`crate::tcp::Connection`]) across the star's bottleneck links
//! ([`Star`]), spec §8e's metrics measured as docs/http-vs-coap.md defines them for the
//! emulator: **download time** from the client's connect (instant 0; the handshake counts)
//! to the arrival of the segment that completes the object, and **link bytes** = IP length
//! (IPv4 + TCP headers + options + payload) of every packet delivered in either direction up
//! to and including that segment (packets the buffer dropped never cross the link).
//!
//! The IoT variants run TCP Fast Open with a cookie already cached (spec §8e's unmeasured
//! warm-up connection is not simulated). Hyper's writes are the [`Flight`]s: those whose
//! triggers hold at one instant go out as one write (one push with `TCP_NODELAY`).

use std::collections::HashMap;

use coaplab_cc::time::{Duration, Instant};

use super::download::{Download, Flight, HttpProtocol, Sender, Trigger};
use super::DEFAULT_HOST;
use crate::config::{ConfigError, NetworkConfig};
use crate::record::Direction;
use crate::tcp::{Connection, Segment, TcpConfig, TcpConfigError, TcpState};
use crate::topology::{client_addr, Star, SERVER_ADDR};

/// How long a simulated download may take before it is given up (far beyond any §8e case).
pub const DOWNLOAD_LIMIT: Duration = Duration::from_secs(600);

/// What one simulated download measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DownloadOutcome {
    /// From connect to the object's last byte at the client.
    pub download_time: Duration,
    /// IP bytes delivered over the link, both directions, up to the completing segment.
    pub link_bytes: u64,
    /// The part of `link_bytes` that went up (client → server).
    pub link_bytes_up: u64,
    /// Packets counted in `link_bytes`.
    pub packets: u64,
    /// Packets the bottleneck buffers dropped (both directions, whole run).
    pub drops: u64,
}

/// Why a download could not be simulated.
#[derive(Debug, Clone, PartialEq)]
pub enum SimError {
    /// The network configuration is invalid.
    Network(ConfigError),
    /// The TCP configuration is invalid.
    Tcp(TcpConfigError),
    /// The object did not arrive within [`DOWNLOAD_LIMIT`] (or a connection failed).
    NotCompleted,
}

impl core::fmt::Display for SimError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            SimError::Network(e) => write!(f, "network: {e}"),
            SimError::Tcp(e) => write!(f, "tcp: {e}"),
            SimError::NotCompleted => f.write_str("the download did not complete"),
        }
    }
}

impl std::error::Error for SimError {}

/// One end: its connection, flights not yet written and bytes read so far.
struct End {
    conn: Connection,
    pending: Vec<Flight>,
    read_bytes: usize,
}

impl End {
    /// Writes every pending flight whose trigger holds, as one write.
    fn write_due(&mut self, connected: bool) {
        let read = self.read_bytes;
        let due = |f: &Flight| match f.trigger {
            Trigger::Connected => connected,
            Trigger::Received(n) => connected && read >= n,
        };
        // Flights go out in order: stop at the first one not yet due.
        let ready = self.pending.iter().take_while(|f| due(f)).count();
        if ready == 0 {
            return;
        }
        let bytes: Vec<u8> = self.pending.drain(..ready).flat_map(|f| f.bytes).collect();
        // A connection that failed refuses the write; the run then ends NotCompleted.
        let _ = self.conn.write(&bytes);
    }

    fn read_all(&mut self) {
        let mut buf = [0u8; 2048];
        loop {
            let n = self.conn.read(&mut buf);
            if n == 0 {
                break;
            }
            self.read_bytes += n;
        }
    }
}

/// Simulates one `GET /data/N` of `object_bytes` over `protocol` across `network` (one
/// client), with `tcp` (its MTU is replaced by the network's) and the run seed `seed`.
pub fn simulate_download(
    protocol: HttpProtocol,
    object_bytes: usize,
    network: &NetworkConfig,
    tcp: TcpConfig,
    seed: u64,
) -> Result<DownloadOutcome, SimError> {
    let tcp = TcpConfig {
        mtu_bytes: network.mtu_bytes,
        ..tcp
    };
    let mut star = Star::new(network, seed).map_err(SimError::Network)?;
    simulate_download_on(&mut star, protocol, object_bytes, tcp)
}

/// [`simulate_download`] on a star the caller built (and reads the link counters of
/// afterwards); `tcp.mtu_bytes` must be the star's MTU.
pub fn simulate_download_on(
    star: &mut Star,
    protocol: HttpProtocol,
    object_bytes: usize,
    tcp: TcpConfig,
) -> Result<DownloadOutcome, SimError> {
    let download = Download::new(protocol, DEFAULT_HOST, object_bytes);
    let fast_open = protocol.is_iot();
    let (client_conn, server_conn) = if fast_open {
        (
            Connection::connect_fast_open(tcp.clone()),
            Connection::listen_fast_open(tcp),
        )
    } else {
        (Connection::connect(tcp.clone()), Connection::listen(tcp))
    };
    let of = |s: Sender| -> Vec<Flight> {
        let flights = download.flights.iter().filter(|f| f.sender == s);
        flights.cloned().collect()
    };
    let mut client = End {
        conn: client_conn.map_err(SimError::Tcp)?,
        pending: of(Sender::Client),
        read_bytes: 0,
    };
    let mut server = End {
        conn: server_conn.map_err(SimError::Tcp)?,
        pending: of(Sender::Server),
        read_bytes: 0,
    };
    let mut segments: HashMap<u64, Segment> = HashMap::new();
    let mut next_tag = 0u64;
    let (mut link_bytes, mut link_bytes_up, mut packets) = (0u64, 0u64, 0u64);
    let mut now = Instant::ZERO;
    // With TFO the client writes at connect (`TCP_FASTOPEN_CONNECT`: the first write makes
    // the SYN); without, once `connect` returns.
    client.write_due(fast_open);
    let mut buf = Vec::new();
    while now.as_nanos() <= DOWNLOAD_LIMIT.as_nanos() {
        transmit(
            star,
            &mut segments,
            &mut next_tag,
            &mut client,
            &mut server,
            now,
        );
        let next = [
            star.poll_at(),
            client.conn.poll_timeout(),
            server.conn.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min();
        let Some(next) = next else {
            return Err(SimError::NotCompleted);
        };
        now = now.max(next);
        while let Some(d) = star.poll_delivery(now, &mut buf) {
            let Some(seg) = segments.remove(&d.tag) else {
                continue;
            };
            link_bytes += u64::from(d.ip_len);
            if d.direction == Direction::Up {
                link_bytes_up += u64::from(d.ip_len);
            }
            packets += 1;
            let end = match d.direction {
                Direction::Up => &mut server,
                Direction::Down => &mut client,
            };
            // A refused segment is the TCP model's business (counted there); go on.
            let _ = end.conn.handle_segment(d.at, seg);
            end.read_all();
            if client.read_bytes >= download.complete_at_client_bytes {
                let drops = [Direction::Up, Direction::Down]
                    .into_iter()
                    .map(|dir| star.stats(dir).overflow_drops)
                    .sum();
                return Ok(DownloadOutcome {
                    download_time: Duration::from_nanos(d.at.as_nanos()),
                    link_bytes,
                    link_bytes_up,
                    packets,
                    drops,
                });
            }
        }
        client.conn.handle_timeout(now);
        server.conn.handle_timeout(now);
        // The kernel answers a SYN-ACK at once, before hyper (woken by `connect`) writes:
        // send what is due first, then let the applications write.
        transmit(
            star,
            &mut segments,
            &mut next_tag,
            &mut client,
            &mut server,
            now,
        );
        let connected = fast_open || !matches!(client.conn.state(), TcpState::SynSent);
        client.write_due(connected);
        let accepted = match server.conn.state() {
            TcpState::Listen | TcpState::Failed => false,
            TcpState::SynReceived => fast_open && server.read_bytes > 0,
            _ => true,
        };
        server.write_due(accepted);
    }
    Err(SimError::NotCompleted)
}

/// Sends every segment both ends have due at `now` into the star.
fn transmit(
    star: &mut Star,
    segments: &mut HashMap<u64, Segment>,
    next_tag: &mut u64,
    client: &mut End,
    server: &mut End,
    now: Instant,
) {
    let client_at = client_addr(0);
    for (end, up) in [(client, true), (server, false)] {
        while let Some(seg) = end.conn.poll_transmit(now) {
            let (src, dst) = if up {
                (client_at, SERVER_ADDR)
            } else {
                (SERVER_ADDR, client_at)
            };
            let ip_len = seg.ip_len();
            segments.insert(*next_tag, seg);
            // Segments never exceed the MTU (MSS = MTU − 40; a SYN's data is ≤ MSS − 40).
            let _ = star.send_ip(now, src, dst, &[], ip_len, *next_tag);
            *next_tag += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Preset;

    fn zigbee(protocol: HttpProtocol, object_bytes: usize) -> DownloadOutcome {
        let network = NetworkConfig::preset(Preset::Zigbee);
        simulate_download(protocol, object_bytes, &network, TcpConfig::default(), 1)
            .expect("completes")
    }

    /// One 100-B download of each protocol over the zigbee preset (MTU 128, MSS 88), exact.
    /// HTTP/1.1: SYN, SYN-ACK, ACK (40 B each), request 40 + 84, response 128 + 128 + 98
    /// (234 B in segments of 88), one ACK between: 638 B, 8 packets. h2c adds the server's
    /// SETTINGS + WINDOW_UPDATE at accept (40 + 46), the client's second segment (40 + 26),
    /// both SETTINGS ACKs (2 × 49) and an ACK, and HEADERS + DATA are 174 B: 792 B.
    /// IoT-HTTP/1.1 (TFO): SYN 40 + 12 + 44, SYN-ACK, ACK, response 128 + 92: 396 B in one
    /// round trip plus serialisation. IoT-h2c: the SYN holds only 48 B (preface and 24 B of
    /// SETTINGS), the HEADERS follow the SYN-ACK: 552 B.
    #[test]
    fn hundred_byte_download_over_zigbee() {
        let got: Vec<(i64, u64, u64)> = HttpProtocol::ALL
            .into_iter()
            .map(|p| {
                let o = zigbee(p, 100);
                assert_eq!(o.drops, 0);
                (
                    o.download_time.as_nanos() / 100_000,
                    o.link_bytes,
                    o.packets,
                )
            })
            .collect();
        // (download time in 0.1 ms, link bytes, packets) for http1, h2, iot-http1, iot-h2.
        assert_eq!(
            got,
            [
                (3584, 638, 8),
                (3464, 792, 11),
                (2048, 396, 5),
                (2800, 552, 7)
            ]
        );
    }
}
