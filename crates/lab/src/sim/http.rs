//! HTTP download flows (docs/experiments.md §8e): `cc` = `http1`, `h2`, `iot-http1` or `iot-h2` with
//! `workload = "long-transfer"` downloads `object_bytes` once. HTTP is a sibling of the CoAP
//! session on the TCP model (DESIGN.md): the flow runs in the TCP run loop ([`super::tcp`]),
//! [`HttpApp`] its [`FlowApp`] as RFC 8323 sessions are CoAP's (`super::tcp_coap`); the bytes
//! each end writes are netsim's byte-exact HTTP messages ([`coaplab_endpoint::http::Download`]),
//! written when hyper would write them: both ends read each delivered segment at once and write
//! once every delivery and timer of the instant is handled (their own wake-up,
//! [`FlowApp::next_timer`]). The run ends with the segment that completes the object. The IoT variants
//! run TCP Fast Open (`Connection::connect_fast_open` / `listen_fast_open`); the cookie comes
//! from an unmeasured warm-up connection ([`WARM_UP_GAP`]).
//!
//! One flow per run (the comparison has one client). flows.csv: `fct_s` = download time from
//! the client's connect (the handshake counts, as `coaplab http-get`'s `download_ms`), not
//! from the first request as for CoAP flows; `bytes_up` / `bytes_down` = IP bytes (IPv4 +
//! TCP headers + options + payload) of the packets delivered up to and including the one
//! that completes the object — together the "total bytes on the link" of docs/experiments.md §8e;
//! `exchanges` 1; `transmissions` = packets counted. `start_jitter_s` does not apply (the
//! download starts at 0).

use coaplab_cc::time::{earliest, Duration, Instant};
use coaplab_endpoint::http::{Download, Flight, HttpProtocol, Sender, Trigger, DEFAULT_HOST};
use coaplab_netsim::tcp::{Connection, TcpConfig, TcpState};

use super::tcp_app::{Arrival, FlowApp, OnSegment, Serviced, Shared, Wake};
use super::tcp_conns::{Conn, Flow};
use crate::metrics::FlowMetrics;
use crate::results::{FlowRecord, RunError};
use crate::scenario::{FlowConfig, RunConfig, RunSpec, Transport, Workload};

/// The run's one download: its protocol, object size and flow, or why the run has none.
pub(super) fn download_of(
    config: &RunConfig,
) -> Result<(HttpProtocol, usize, &crate::scenario::FlowConfig), RunError> {
    let [fc] = config.flows.as_slice() else {
        return Err(RunError::NotAvailable(
            "an HTTP flow beside other flows (one download per run)".to_string(),
        ));
    };
    let (Transport::Http { protocol }, Workload::LongTransfer { object_bytes, .. }, 1) =
        (&fc.transport, &fc.workload, fc.count)
    else {
        return Err(RunError::NotAvailable(
            "an HTTP flow must be one long-transfer download (count = 1)".to_string(),
        ));
    };
    Ok((*protocol, *object_bytes as usize, fc))
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

/// The flow record of the download `m` (`completed`: the whole object arrived; otherwise it
/// gave up at `gave_up_at`, or was still running when the run ended at `run_end`).
pub(super) fn record(
    cc: &str,
    m: &Measured,
    completed: bool,
    gave_up_at: Option<coaplab_cc::time::Instant>,
    run_end: coaplab_cc::time::Instant,
) -> crate::results::FlowRecord {
    let mut metrics = FlowMetrics::default();
    metrics.first_sent = Some(coaplab_cc::time::Instant::ZERO);
    metrics.gave_up_at = gave_up_at;
    if completed {
        metrics.finished = Some(coaplab_cc::time::Instant::ZERO + m.download_time);
        metrics.exchanges = 1;
        metrics.rtts = vec![m.download_time];
    }
    metrics.transmissions = m.packets;
    metrics.bytes_up = m.bytes_up;
    metrics.bytes_down = m.bytes_down;
    metrics.record(0, cc, "long-transfer", completed, run_end)
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

/// The gap between the end of the warm-up download and the measured connection's connect
/// (`coaplab http-get --warm-up-gap`'s default): the warm-up connection's FIN exchange is
/// over well before it on every link of docs/experiments.md §8e, so the measured download has the
/// link to itself.
pub(super) const WARM_UP_GAP: Duration = Duration::from_millis(500);

/// The HTTP applications of a download flow: both ends of the current connection, and what
/// was measured. The IoT variants first download the object once on an unmeasured warm-up
/// connection whose SYN asks for the TFO cookie (docs/experiments.md §8e), then, [`WARM_UP_GAP`]
/// later, on the measured connection whose SYN carries the request.
pub(super) struct HttpApp {
    protocol: HttpProtocol,
    object_bytes: usize,
    client: HttpEnd,
    server: HttpEnd,
    /// The client has the object once it has read this many bytes.
    complete_at_client_bytes: usize,
    /// The current connection is the warm-up one.
    warming_up: bool,
    /// The measured connection connects at this instant (after the warm-up).
    connect_at: Option<Instant>,
    /// When the measured connection connected (the download time's start).
    measured_from: Instant,
    /// A segment was delivered at this instant: both applications act once every delivery
    /// of the instant is in (hyper, woken by the kernel, reads and writes after it); the run
    /// loop clears it then.
    woken_at: Option<Instant>,
    /// The measured connection's packets delivered so far, with their IP bytes.
    measured: Measured,
}

impl HttpApp {
    /// The download of `object_bytes` over `protocol`.
    pub(super) fn new(protocol: HttpProtocol, object_bytes: usize) -> HttpApp {
        let (client, server, complete_at_client_bytes) = exchange(protocol, object_bytes);
        HttpApp {
            protocol,
            object_bytes,
            client,
            server,
            complete_at_client_bytes,
            warming_up: protocol.is_iot(),
            connect_at: None,
            measured_from: Instant::ZERO,
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
    fn fast_open(&self) -> bool {
        self.protocol.is_iot()
    }

    /// The client's next connection, connecting at `now`: TFO (`TCP_FASTOPEN_CONNECT`) asks
    /// for a cookie on the warm-up connection and uses it, when `cookie` came, on the
    /// measured one. The download time counts from `now` on the measured connection.
    fn connect(
        &mut self,
        tcp: TcpConfig,
        now: Instant,
        cookie: bool,
    ) -> Result<Connection, String> {
        if !self.warming_up {
            self.measured_from = now;
            self.connect_at = None;
        }
        let c = match (self.fast_open(), self.warming_up || !cookie) {
            (false, _) => Connection::connect(tcp),
            (true, true) => Connection::connect_fast_open_request(tcp),
            (true, false) => Connection::connect_fast_open(tcp),
        };
        c.map_err(|e| e.to_string())
    }

    /// The server's listening connection (TFO: `TCP_FASTOPEN` on the listener).
    fn listen_on(&self, tcp: TcpConfig) -> Result<Connection, String> {
        let c = if self.fast_open() {
            Connection::listen_fast_open(tcp)
        } else {
            Connection::listen(tcp)
        };
        c.map_err(|e| e.to_string())
    }

    /// Both applications of the current connection write what is due: the client once
    /// `connect` has returned (at once with TFO: the first write makes the SYN), the server
    /// once it has accepted (with TFO already in SYN-RECEIVED when the SYN's data arrived:
    /// Linux hands the child socket to `accept` then).
    fn write_due(&mut self, client: &mut Connection, server: &mut Connection) {
        let fast_open = self.fast_open();
        let connected = fast_open || !matches!(client.state(), TcpState::SynSent);
        self.client.write_due(client, connected);
        let accepted = match server.state() {
            TcpState::Listen | TcpState::Failed => false,
            TcpState::SynReceived => fast_open && self.server.read_bytes > 0,
            _ => true,
        };
        self.server.write_due(server, accepted);
    }

    /// The client writes at `connect` (TFO with a cookie: the request starts in the SYN;
    /// without one it waits for the handshake in the socket).
    fn write_at_connect(&mut self, client: &mut Connection) {
        let fast_open = self.fast_open();
        self.client.write_due(client, fast_open);
    }
}

impl HttpApp {
    /// Opens the flow's next connection at `now` (its first, or the measured one after the
    /// warm-up): the client connects and writes what hyper writes at once.
    fn open_next(
        &mut self,
        f: &mut Flow<()>,
        port_stride: u32,
        now: Instant,
    ) -> Result<(), RunError> {
        let index = f.index;
        let setup = |e: &dyn std::fmt::Display| RunError::Setup(format!("flow {index}: {e}"));
        let k = f.opened;
        let first = f.conns.first().and_then(|c| c.client.as_ref());
        let cookie = first.is_some_and(Connection::fast_open_cookie_received);
        if k > 0 {
            let addr = super::source_addr(f.index, k, port_stride);
            let server = self.listen(f, k).map_err(|e| setup(&e))?;
            f.conns.push(Conn::new(k, addr, server, ()));
        }
        let tcp = f.tcp.clone();
        let Some(c) = f.conns.last_mut() else {
            return Ok(());
        };
        let mut client = self.connect(tcp, now, cookie).map_err(|e| setup(&e))?;
        self.write_at_connect(&mut client);
        c.client = Some(client);
        f.opened += 1;
        f.clients.push((c.addr, 0));
        f.progress.times.syn_at = Some(now);
        Ok(())
    }
}

impl FlowApp for HttpApp {
    /// One download's applications serve both ends of the current connection.
    type Conn = ();

    /// The download starts at 0 (`start_jitter_s` does not apply).
    fn new(
        spec: &RunSpec,
        _: &FlowConfig,
        _: u32,
        _: &str,
    ) -> Result<(HttpApp, Instant), RunError> {
        let (protocol, object_bytes, _) = download_of(&spec.config)?;
        Ok((HttpApp::new(protocol, object_bytes), Instant::ZERO))
    }

    fn new_conn(&mut self) {}

    fn listen(&self, flow: &Flow<()>, _: u32) -> Result<Connection, String> {
        self.listen_on(flow.tcp.clone())
    }

    fn next_timer(&self) -> Option<Instant> {
        earliest(self.woken_at, self.connect_at)
    }

    fn open(&mut self, f: &mut Flow<()>, shared: &Shared, now: Instant) -> Result<Wake, RunError> {
        self.open_next(f, shared.port_stride, now)?;
        Ok(Wake::Send)
    }

    /// Both applications act at every wake-up of the flow (their own included).
    fn woken(&mut self, _: bool) -> Wake {
        Wake::Service { event: false }
    }

    /// Counts a packet of the measured connection, lets the receiving end read now (it
    /// writes once every delivery of this instant is in, `woken_at`), and completes the
    /// download with the object's last byte; the warm-up download's completion closes its
    /// connection and sets the measured one's connect.
    fn on_segment(&mut self, a: Arrival, conn: &mut Connection) -> OnSegment {
        self.woken_at = Some(a.at);
        // The warm-up connection's last segments (ACKs, FINs) are not measured.
        if !a.current || self.connect_at.is_some() {
            return OnSegment::Wait;
        }
        if !self.warming_up {
            let m = &mut self.measured;
            m.packets += 1;
            if a.up {
                m.bytes_up += u64::from(a.ip_len);
            } else {
                m.bytes_down += u64::from(a.ip_len);
            }
        }
        if a.up {
            self.server.read_all(conn);
            return OnSegment::Wait;
        }
        self.client.read_all(conn);
        if self.client.read_bytes < self.complete_at_client_bytes {
            return OnSegment::Wait;
        }
        if self.warming_up {
            // hyper's client drops the connection (FIN); the next fetch starts after the gap
            // on a fresh exchange.
            conn.close();
            (self.client, self.server, self.complete_at_client_bytes) =
                exchange(self.protocol, self.object_bytes);
            self.warming_up = false;
            self.connect_at = Some(a.at + WARM_UP_GAP);
            return OnSegment::Wait;
        }
        self.measured.download_time = a.at - self.measured_from;
        OnSegment::Complete
    }

    /// The measured connection connects when its time has come; otherwise the warm-up
    /// connection's server closes its side once the client has, and both ends of the current
    /// connection write what is due.
    fn service(
        &mut self,
        f: &mut Flow<()>,
        shared: &mut Shared,
        now: Instant,
    ) -> Result<Serviced, RunError> {
        if self.connect_at.is_some_and(|t| t <= now) {
            self.open_next(f, shared.port_stride, now)?;
            return Ok(Serviced::Opened);
        }
        self.woken_at = None;
        // Between the warm-up and the measured connection no connection is current.
        let live = if self.connect_at.is_some() { 0 } else { 1 };
        let done = f.conns.len().saturating_sub(live);
        let (warm_up, current) = f.conns.split_at_mut(done);
        for old in warm_up {
            // The warm-up connection's client closed: the server closes its side.
            if old.server.state() == TcpState::CloseWait {
                old.server.close();
            }
        }
        if let Some(c) = current.first_mut() {
            if let Some(client) = c.client.as_mut() {
                self.write_due(client, &mut c.server);
            }
        }
        Ok(Serviced::Done)
    }

    fn record(&self, f: &Flow<()>, run_end: Instant) -> FlowRecord {
        record(
            &f.cc,
            &self.measured,
            f.finished() && !f.failed,
            f.progress.gave_up_at,
            run_end,
        )
    }

    fn events(&self) -> Option<u64> {
        Some(self.measured.packets)
    }
}

/// Both ends of one download's exchange: their flights, and the client's byte count at
/// which the object is complete.
fn exchange(protocol: HttpProtocol, object_bytes: usize) -> (HttpEnd, HttpEnd, usize) {
    let download = Download::new(protocol, DEFAULT_HOST, object_bytes);
    let of = |s: Sender| HttpEnd {
        pending: download
            .flights
            .iter()
            .filter(|f| f.sender == s)
            .cloned()
            .collect(),
        read_bytes: 0,
    };
    (
        of(Sender::Client),
        of(Sender::Server),
        download.complete_at_client_bytes,
    )
}

#[cfg(test)]
mod tests {
    use crate::scenario::Scenario;
    /// The IoT variants' TCP Fast Open cookie comes from a simulated, unmeasured warm-up
    /// download (docs/experiments.md §8e), as on the real stack: its SYN asks for the cookie (40 +
    /// 8 + 4 B, no data), the SYN-ACK brings it (40 + 8 + 12 B); 500 ms after the warm-up's object
    /// arrived the measured connection, from a new port, sends its request in the SYN (40 + 8 +
    /// 12 + 44 B). The 8 B are Linux's MSS and window-scale options, on every SYN and SYN-ACK by
    /// default (`syn_options_bytes`, docs/experiments.md §5.3 revised 2026-12-07).
    /// The measured download is the one the 100-B test above asserts.
    #[test]
    fn the_fast_open_cookie_comes_from_a_simulated_warm_up_download() {
        let text = "name = \"t\"\nseed = 2016\n[network]\npreset = \"zigbee\"\nloss = \"none\"\n\
                    [[flows]]\ncount = 1\ncc = \"iot-http1\"\nworkload = \"long-transfer\"\n\
                    object_bytes = 100\nblock_bytes = 64\nstart_jitter_s = 0.0\n";
        let runs = Scenario::parse(text, "t.toml")
            .unwrap()
            .expand(Some(1), None);
        let (result, trace) = crate::sim::run_traced(&runs[0]).unwrap();
        let flow = &result.flows[0];
        assert!(flow.completed);
        // Up: the 104-B SYN with the request, the ACK of the SYN-ACK and the quick ACK of the
        // response (the TCP default `quickack_segments = 16` ACKs the first data at once);
        // down: the 68-B SYN-ACK and the response. On the idealised TCP (bare SYNs, no
        // quick-ACK) 136, 260 and 5: 8 B less each way and no quick ACK.
        assert_eq!(
            (flow.bytes_up, flow.bytes_down, flow.transmissions),
            (184, 268, 6)
        );
        let server = coaplab_netsim::SERVER_ADDR;
        let up: Vec<_> = trace.records.iter().filter(|r| r.dst == server).collect();
        let down: Vec<_> = trace.records.iter().filter(|r| r.src == server).collect();
        let warm_up = up[0].src;
        assert_eq!(
            up[0].ip_len,
            40 + 8 + 4,
            "the warm-up SYN asks for a cookie"
        );
        assert_eq!(
            down[0].ip_len,
            40 + 8 + 12,
            "the SYN-ACK carries the cookie"
        );
        let measured: Vec<_> = up.iter().filter(|r| r.src != warm_up).collect();
        assert_eq!(
            measured[0].ip_len,
            40 + 8 + 12 + 44,
            "the request rides in the SYN"
        );
        // The warm-up's object arrived with the last down packet to its port before the SYN.
        let warm_up_done = down
            .iter()
            .filter(|r| r.dst == warm_up && r.sent_at < measured[0].sent_at)
            .filter(|r| r.ip_len > 40)
            .map(|r| r.serialized.unwrap().1)
            .max()
            .unwrap();
        let gap = measured[0].sent_at - warm_up_done;
        // 20 ms of propagation after the serialisation, then the 500-ms gap.
        assert_eq!(gap.as_nanos(), 520_000_000, "{gap:?}");
    }
}
