//! HTTP download flows (spec §8e): `cc` = `http1`, `h2`, `iot-http1` or `iot-h2` with
//! `workload = "long-transfer"` downloads `object_bytes` once. HTTP is a sibling of the CoAP
//! session on the TCP model (DESIGN.md): the flow runs in the CoAP-over-TCP run loop
//! ([`super::tcp`]) on one connection whose ends carry [`HttpApp`] instead of RFC 8323
//! sessions; the bytes each end writes are netsim's byte-exact HTTP messages
//! ([`coaplab_netsim::http::Download`]), written when hyper would write them. The IoT variants
//! run TCP Fast Open (`Connection::connect_fast_open` / `listen_fast_open`); the cookie comes
//! from an unmeasured warm-up connection ([`WARM_UP_GAP`]).
//!
//! One flow per run (the comparison has one client). flows.csv: `fct_s` = download time from
//! the client's connect (the handshake counts, as `coaplab http-get`'s `download_ms`), not
//! from the first request as for CoAP flows; `bytes_up` / `bytes_down` = IP bytes (IPv4 +
//! TCP headers + options + payload) of the packets delivered up to and including the one
//! that completes the object — together the "total bytes on the link" of spec §8e;
//! `exchanges` 1; `transmissions` = packets counted. `start_jitter_s` does not apply (the
//! download starts at 0).

use coaplab_cc::time::{Duration, Instant};
use coaplab_netsim::http::{Download, Flight, HttpProtocol, Sender, Trigger, DEFAULT_HOST};
use coaplab_netsim::tcp::{Connection, TcpState};

use crate::metrics::FlowMetrics;
use crate::results::RunError;
use crate::scenario::{RunSpec, Workload};

/// The run's one download: its protocol, object size and flow, or why the run has none.
pub(super) fn download_of(
    spec: &RunSpec,
) -> Result<(HttpProtocol, usize, &crate::scenario::FlowConfig), RunError> {
    let [fc] = spec.config.flows.as_slice() else {
        return Err(RunError::NotAvailable(
            "an HTTP flow beside other flows (one download per run)".to_string(),
        ));
    };
    let (Some(protocol), Workload::LongTransfer { object_bytes, .. }, 1) =
        (HttpProtocol::from_name(&fc.cc), &fc.workload, fc.count)
    else {
        return Err(RunError::NotAvailable(
            "an HTTP flow must be one long-transfer download (count = 1)".to_string(),
        ));
    };
    Ok((protocol, *object_bytes as usize, fc))
}

/// What one download measured, in either mode.
pub(super) struct Measured {
    /// From the client's connect to the object's last byte.
    pub download_time: coaplab_cc::time::Duration,
    /// IP bytes up and down of the packets counted.
    pub bytes_up: u64,
    pub bytes_down: u64,
    /// Packets counted.
    pub packets: u64,
}

/// The flow record of the download `m` (`completed`: the whole object arrived).
pub(super) fn record(cc: &str, m: &Measured, completed: bool) -> crate::results::FlowRecord {
    let mut metrics = FlowMetrics::default();
    metrics.first_sent = Some(coaplab_cc::time::Instant::ZERO);
    if completed {
        metrics.finished = Some(coaplab_cc::time::Instant::ZERO + m.download_time);
        metrics.exchanges = 1;
        metrics.rtts = vec![m.download_time];
    }
    metrics.transmissions = m.packets;
    metrics.bytes_up = m.bytes_up;
    metrics.bytes_down = m.bytes_down;
    metrics.record(0, cc, "long-transfer", completed)
}

/// One end's application: the flights it still has to write and what it has read.
struct HttpEnd {
    pending: Vec<Flight>,
    read_bytes: usize,
}

impl HttpEnd {
    /// Writes every pending flight whose trigger holds, as one write (hyper flushes them
    /// together; one push with `TCP_NODELAY`).
    fn write_due(&mut self, conn: &mut Connection, connected: bool) {
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
        // A connection that failed refuses the write; the flow then never completes.
        let _ = conn.write(&bytes);
    }

    fn read_all(&mut self, conn: &mut Connection) {
        let mut buf = [0u8; 2048];
        loop {
            let n = conn.read(&mut buf);
            if n == 0 {
                break;
            }
            self.read_bytes += n;
        }
    }
}

/// The HTTP applications of one download's connection, both ends, and what was measured.
pub(super) struct HttpApp {
    protocol: HttpProtocol,
    client: HttpEnd,
    server: HttpEnd,
    /// The client has the object once it has read this many bytes.
    complete_at_client_bytes: usize,
    /// A segment was delivered at this instant: both applications act once every delivery
    /// of the instant is in (hyper, woken by the kernel, reads and writes after it).
    pub(super) woken_at: Option<Instant>,
    /// The packets delivered so far, with their IP bytes.
    pub(super) measured: Measured,
}

impl HttpApp {
    /// The download of `object_bytes` over `protocol`.
    pub(super) fn new(protocol: HttpProtocol, object_bytes: usize) -> HttpApp {
        let download = Download::new(protocol, DEFAULT_HOST, object_bytes);
        let of = |s: Sender| -> Vec<Flight> {
            let flights = download.flights.iter().filter(|f| f.sender == s);
            flights.cloned().collect()
        };
        HttpApp {
            protocol,
            client: HttpEnd {
                pending: of(Sender::Client),
                read_bytes: 0,
            },
            server: HttpEnd {
                pending: of(Sender::Server),
                read_bytes: 0,
            },
            complete_at_client_bytes: download.complete_at_client_bytes,
            woken_at: None,
            measured: Measured {
                download_time: Duration::ZERO,
                bytes_up: 0,
                bytes_down: 0,
                packets: 0,
            },
        }
    }

    /// TCP Fast Open on both ends (the IoT variants).
    pub(super) fn fast_open(&self) -> bool {
        self.protocol.is_iot()
    }

    /// The client's connection (TFO: `TCP_FASTOPEN_CONNECT` with the warm-up's cookie).
    pub(super) fn connect(&self, tcp: coaplab_netsim::tcp::TcpConfig) -> Result<Connection, String> {
        let c = if self.fast_open() {
            Connection::connect_fast_open(tcp)
        } else {
            Connection::connect(tcp)
        };
        c.map_err(|e| e.to_string())
    }

    /// The server's listening connection (TFO: `TCP_FASTOPEN` on the listener).
    pub(super) fn listen(&self, tcp: coaplab_netsim::tcp::TcpConfig) -> Result<Connection, String> {
        let c = if self.fast_open() {
            Connection::listen_fast_open(tcp)
        } else {
            Connection::listen(tcp)
        };
        c.map_err(|e| e.to_string())
    }

    /// Counts a packet of `ip_len` bytes delivered at `at` (`up`: to the server) after its
    /// connection took it in, lets the receiving end read, and tells whether the object is
    /// now complete at the client (the download time is then `at`).
    pub(super) fn delivered(
        &mut self,
        at: Instant,
        up: bool,
        ip_len: u32,
        conn: &mut Connection,
    ) -> bool {
        let m = &mut self.measured;
        m.packets += 1;
        if up {
            m.bytes_up += u64::from(ip_len);
            self.server.read_all(conn);
        } else {
            m.bytes_down += u64::from(ip_len);
            self.client.read_all(conn);
        }
        self.woken_at = Some(at);
        if self.client.read_bytes >= self.complete_at_client_bytes {
            m.download_time = Duration::from_nanos(at.as_nanos());
            return true;
        }
        false
    }

    /// Both applications write what is due: the client once `connect` has returned (at
    /// once with TFO: the first write makes the SYN), the server once it has accepted (with
    /// TFO already in SYN-RECEIVED when the SYN's data arrived: Linux hands the child
    /// socket to `accept` then).
    pub(super) fn write_due(&mut self, client: &mut Connection, server: &mut Connection) {
        let fast_open = self.fast_open();
        self.woken_at = None;
        let connected = fast_open || !matches!(client.state(), TcpState::SynSent);
        self.client.write_due(client, connected);
        let accepted = match server.state() {
            TcpState::Listen | TcpState::Failed => false,
            TcpState::SynReceived => fast_open && self.server.read_bytes > 0,
            _ => true,
        };
        self.server.write_due(server, accepted);
    }

    /// The client writes at `connect` (TFO: the request starts in the SYN).
    pub(super) fn write_at_connect(&mut self, client: &mut Connection) {
        let fast_open = self.fast_open();
        self.client.write_due(client, fast_open);
    }
}
