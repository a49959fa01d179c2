//! [`UdpDriver`]: one [`Endpoint`] on one tokio UDP socket.
//!
//! The driver only moves datagrams and time: it hands every received datagram to
//! [`Endpoint::handle_datagram`], sleeps until [`Endpoint::poll_timeout`] and then calls
//! [`Endpoint::handle_timeout`], and sends everything [`Endpoint::poll_transmit_into`] yields.
//! Protocol decisions all stay in the endpoint.

use std::io;
use std::net::SocketAddr;

use coaplab_base::time::Instant;
use coaplab_endpoint::{Endpoint, Event};
use tokio::net::UdpSocket;

use crate::datagram::{count_send, is_unreachable, to_instant, DriverStats, MAX_DATAGRAM_BYTES};
use crate::dtls::DtlsLayer;
use crate::udp_blocking::BlockingUdpDriver;

/// Drives one [`Endpoint`] (client, server or both) over one UDP socket in real time.
///
/// Endpoint time is the wall-clock time elapsed since the driver was built, in integer
/// nanoseconds: `coaplab_base::time::Instant::ZERO` is the driver's start.
///
/// Use [`UdpDriver::endpoint_mut`] for commands (e.g. [`Endpoint::request`] at
/// [`UdpDriver::now`]), then [`UdpDriver::next_event`] to run until the endpoint has
/// something to say.
#[derive(Debug)]
pub struct UdpDriver {
    socket: UdpSocket,
    endpoint: Endpoint,
    start: tokio::time::Instant,
    send_buf: Vec<u8>,
    recv_buf: Vec<u8>,
    stats: DriverStats,
    /// `coaps://`: DTLS between the endpoint and the socket (`None`: plain UDP).
    dtls: Option<Box<DtlsLayer>>,
}

impl UdpDriver {
    /// Binds a UDP socket to `addr` and drives `endpoint` on it; time starts now.
    pub async fn bind(addr: SocketAddr, endpoint: Endpoint) -> io::Result<UdpDriver> {
        let socket = UdpSocket::bind(addr).await?;
        Ok(UdpDriver::new(socket, endpoint))
    }

    /// Binds a UDP socket to the unspecified address of `peer`'s family and connects it to
    /// `peer` (a client talking to one server); time starts now. The kernel then delivers only
    /// `peer`'s datagrams, and reports an ICMP port, host or network unreachable from it as
    /// an error on the socket (an unconnected socket never sees them), which
    /// [`UdpDriver::try_next_event`] returns.
    pub async fn connect(peer: SocketAddr, endpoint: Endpoint) -> io::Result<UdpDriver> {
        let any: SocketAddr = match peer {
            SocketAddr::V4(_) => (std::net::Ipv4Addr::UNSPECIFIED, 0).into(),
            SocketAddr::V6(_) => (std::net::Ipv6Addr::UNSPECIFIED, 0).into(),
        };
        let socket = UdpSocket::bind(any).await?;
        socket.connect(peer).await?;
        Ok(UdpDriver::new(socket, endpoint))
    }

    /// Drives `endpoint` on an already bound `socket`; time starts now.
    pub fn new(socket: UdpSocket, endpoint: Endpoint) -> UdpDriver {
        UdpDriver {
            socket,
            endpoint,
            start: tokio::time::Instant::now(),
            send_buf: Vec::new(),
            recv_buf: vec![0; MAX_DATAGRAM_BYTES],
            stats: DriverStats::default(),
            dtls: None,
        }
    }

    /// The same endpoint, socket, clock and counters on a [`BlockingUdpDriver`]: plain UDP
    /// without the async runtime's readiness calls (two system calls per request instead of
    /// about five, see its doc). Call it inside the runtime that bound the socket (the socket leaves
    /// its reactor). A driver with a DTLS layer cannot move (`InvalidInput`).
    pub fn into_blocking(self) -> io::Result<BlockingUdpDriver> {
        if self.dtls.is_some() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a DTLS driver has no blocking form",
            ));
        }
        let start = self.start.into_std();
        let mut blocking = BlockingUdpDriver::new(self.socket.into_std()?, self.endpoint, start)?;
        blocking.set_stats(self.stats);
        Ok(blocking)
    }

    /// Puts `layer` between the endpoint and the socket: the endpoint's datagrams go out as
    /// DTLS records, and received records reach it as plaintext (RFC 7252 §9). Build a client
    /// layer with [`UdpDriver::now`] as its start.
    pub fn set_dtls(&mut self, layer: DtlsLayer) {
        self.dtls = Some(Box::new(layer));
    }

    /// The DTLS layer, if any (for its stats and, on a client, the handshake's state).
    pub fn dtls(&self) -> Option<&DtlsLayer> {
        self.dtls.as_deref()
    }

    /// With a DTLS layer: sends what the endpoint has queued, then close_notify on every
    /// established session ([`DtlsLayer::close`]), so the peer frees the session at once. A
    /// client calls it before it exits. Plain UDP: only the flush.
    pub async fn dtls_close(&mut self) {
        let _ = self.send_queued().await;
        if let Some(layer) = self.dtls.as_deref_mut() {
            layer.close();
        }
        let _ = self.send_queued().await;
    }

    /// Client with a DTLS layer: runs until the handshake completes, fails or times out, and
    /// returns the layer's final [`crate::dtls::ClientState`]. Plain UDP: returns at once.
    /// Socket errors saying the server is unreachable end it as a failure.
    pub async fn dtls_handshake(&mut self) -> crate::dtls::ClientState {
        use crate::dtls::ClientState;
        loop {
            let Some(layer) = self.dtls.as_deref() else {
                return ClientState::Failed("no DTLS layer".into());
            };
            let state = layer.client_state();
            if state != ClientState::Handshaking {
                return state;
            }
            if let Some(e) = self.send_queued().await {
                return ClientState::Failed(e.to_string());
            }
            let deadline = self
                .dtls
                .as_deref()
                .and_then(DtlsLayer::poll_timeout)
                .map(|d| self.deadline(d));
            let sleep = sleep_until(deadline);
            tokio::select! {
                biased;
                r = self.socket.recv_from(&mut self.recv_buf) => match r {
                    Ok((n, from)) => self.receive(n, from),
                    Err(e) => {
                        self.stats.recv_errors += 1;
                        if is_unreachable(&e) {
                            return ClientState::Failed(e.to_string());
                        }
                    }
                },
                () = sleep => {
                    let now = self.now();
                    if let Some(layer) = self.dtls.as_deref_mut() {
                        layer.handle_timeout(now);
                    }
                }
            }
        }
    }

    /// Hands the `n` bytes received from `from` to the endpoint, through DTLS if any.
    #[inline]
    fn receive(&mut self, n: usize, from: SocketAddr) {
        self.stats.datagrams_in += 1;
        let now = self.now();
        match self.dtls.as_deref_mut() {
            None => self
                .endpoint
                .handle_datagram(now, from, &self.recv_buf[..n]),
            Some(layer) => receive_dtls(layer, &mut self.endpoint, now, from, &self.recv_buf[..n]),
        }
    }

    /// The socket, dropping the endpoint (and any DTLS layer) and whatever it had not sent:
    /// call [`UdpDriver::flush`] first. Keeping it open keeps its port bound, so the kernel
    /// gives it to no new socket (`coaplab bench` retires ports so).
    pub fn into_socket(self) -> UdpSocket {
        self.socket
    }

    /// The socket's local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.socket.local_addr()
    }

    /// The endpoint, for getters.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// The endpoint, for commands. Call [`UdpDriver::next_event`] afterwards so what they
    /// queued is sent.
    pub fn endpoint_mut(&mut self) -> &mut Endpoint {
        &mut self.endpoint
    }

    /// What was moved so far.
    pub fn stats(&self) -> DriverStats {
        self.stats
    }

    /// The current endpoint time (wall clock since the driver was built).
    pub fn now(&self) -> Instant {
        to_instant(self.start.elapsed())
    }

    /// The tokio instant of endpoint time `at`.
    fn deadline(&self, at: Instant) -> tokio::time::Instant {
        let ns = at.saturating_since(Instant::ZERO).as_nanos().max(0) as u64;
        self.start + std::time::Duration::from_nanos(ns)
    }

    /// Sends every queued datagram.
    pub async fn flush(&mut self) {
        let _ = self.send_queued().await;
    }

    /// Sends every queued datagram; returns the last error that says the destination is
    /// unreachable ([`is_unreachable`]), if any. Every error is counted.
    async fn send_queued(&mut self) -> Option<io::Error> {
        if self.dtls.is_some() {
            return self.send_queued_dtls().await;
        }
        let now = self.now();
        let mut unreachable = None;
        while let Some(h) = self.endpoint.poll_transmit_into(now, &mut self.send_buf) {
            let sent = send_counted(&self.socket, &mut self.stats, &self.send_buf, h.destination);
            unreachable = sent.await.or(unreachable);
        }
        unreachable
    }

    /// [`UdpDriver::send_queued`] through the DTLS layer: the endpoint's datagrams are sealed
    /// into records, then every record the layer holds (handshake ones too) is sent.
    async fn send_queued_dtls(&mut self) -> Option<io::Error> {
        let now = self.now();
        let mut unreachable = None;
        let layer = self.dtls.as_deref_mut()?;
        while let Some(h) = self.endpoint.poll_transmit_into(now, &mut self.send_buf) {
            layer.seal(h.destination, &self.send_buf);
        }
        while let Some((to, record)) = layer.poll_transmit() {
            let sent = send_counted(&self.socket, &mut self.stats, &record, to);
            unreachable = sent.await.or(unreachable);
        }
        unreachable
    }

    /// Runs the endpoint (sending, receiving, firing timers) until it emits an event, and
    /// returns it. Pending forever when the endpoint is idle and nothing arrives. Socket
    /// errors are counted and otherwise ignored, as losses (a server must not stop because
    /// one client went away).
    ///
    /// Cancel safety: a datagram is never half-received; when cancelled while sending, the
    /// datagrams not yet sent are lost (as on a lossy link).
    pub async fn next_event(&mut self) -> Event {
        loop {
            if let Ok(e) = self.run(false).await {
                return e;
            }
        }
    }

    /// As [`UdpDriver::next_event`], but a send or receive error saying the destination is
    /// unreachable ([`is_unreachable`]: on a socket from [`UdpDriver::connect`], an ICMP port
    /// unreachable arrives as `ConnectionRefused`) is returned at once instead of being
    /// waited out as a loss, so a client aimed at a dead port fails in one round trip rather
    /// than after MAX_RETRANSMIT. The endpoint is left as it was; the caller decides.
    pub async fn try_next_event(&mut self) -> io::Result<Event> {
        self.run(true).await
    }

    /// The loop of [`UdpDriver::next_event`]; `unreachable_fails`: return an unreachable
    /// error instead of counting it only.
    async fn run(&mut self, unreachable_fails: bool) -> io::Result<Event> {
        loop {
            if let Some(e) = self.send_queued().await {
                if unreachable_fails {
                    return Err(e);
                }
            }
            if let Some(e) = self.endpoint.poll_event() {
                return Ok(e);
            }
            if self.dtls.is_some() {
                let now = self.now();
                if let Some(layer) = self.dtls.as_deref_mut() {
                    if layer.poll_timeout().is_some_and(|d| d <= now) {
                        layer.handle_timeout(now);
                        continue;
                    }
                }
            }
            // A due timer goes first, so a flood of datagrams cannot starve retransmissions.
            if let Some(due) = self.endpoint.poll_timeout() {
                let now = self.now();
                if due <= now {
                    self.endpoint.handle_timeout(now);
                    continue;
                }
            }
            let mut due = self.endpoint.poll_timeout();
            if let Some(d) = self.dtls.as_deref().and_then(DtlsLayer::poll_timeout) {
                due = Some(due.map_or(d, |e| e.min(d)));
            }
            let deadline = due.map(|d| self.deadline(d));
            let sleep = sleep_until(deadline);
            tokio::select! {
                biased;
                r = self.socket.recv_from(&mut self.recv_buf) => match r {
                    Ok((n, from)) => self.receive(n, from),
                    Err(e) => {
                        self.stats.recv_errors += 1;
                        if unreachable_fails && is_unreachable(&e) {
                            return Err(e);
                        }
                    }
                },
                () = sleep => {
                    let now = self.now();
                    if let Some(layer) = self.dtls.as_deref_mut() {
                        layer.handle_timeout(now);
                    }
                    self.endpoint.handle_timeout(now);
                }
            }
            if unreachable_fails {
                if let Some(crate::dtls::ClientState::Failed(why)) =
                    self.dtls.as_deref().map(DtlsLayer::client_state)
                {
                    return Err(io::Error::new(io::ErrorKind::ConnectionAborted, why));
                }
            }
        }
    }
}

/// A received datagram through `layer` to `endpoint` (kept out of the plain path).
#[inline(never)]
fn receive_dtls(
    layer: &mut DtlsLayer,
    endpoint: &mut Endpoint,
    now: Instant,
    from: SocketAddr,
    datagram: &[u8],
) {
    layer.handle_datagram(now, from, datagram, |p| {
        endpoint.handle_datagram(now, from, p)
    });
}

/// Sends one datagram and counts it (sent, or a send error); returns the error when it says
/// the destination is unreachable (ICMP, on a connected socket).
async fn send_counted(
    socket: &UdpSocket,
    stats: &mut DriverStats,
    bytes: &[u8],
    to: SocketAddr,
) -> Option<io::Error> {
    count_send(stats, socket.send_to(bytes, to).await)
}

/// Sleeps until `deadline`; without one, forever (a `select!` arm that never fires).
async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coaplab_base::Settings;
    use coaplab_endpoint::{registry_factory, Config, Request, Router};

    fn endpoint(seed: u64) -> Endpoint {
        let factory = registry_factory("cocoa", &Settings::new(), seed).unwrap();
        let config = Config {
            keep_bodies: true,
            ..Config::default()
        };
        Endpoint::new(config, factory, Router::new()).unwrap()
    }

    #[test]
    fn elapsed_maps_to_integer_nanoseconds() {
        let t = to_instant(std::time::Duration::new(2, 5));
        assert_eq!(t.saturating_since(Instant::ZERO).as_nanos(), 2_000_000_005);
    }

    #[tokio::test]
    async fn client_gets_a_blockwise_body_from_a_server_over_loopback() {
        let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let mut server = UdpDriver::bind(any, endpoint(2)).await.unwrap();
        let server_addr = server.local_addr().unwrap();
        let task = tokio::spawn(async move {
            loop {
                let _ = server.next_event().await;
            }
        });
        let mut client = UdpDriver::bind(any, endpoint(1)).await.unwrap();
        let now = client.now();
        client
            .endpoint_mut()
            .request(now, server_addr, &Request::get("data/3000"));
        let (code, body) = loop {
            if let Event::RequestCompleted { code, body, .. } = client.next_event().await {
                break (code, body);
            }
        };
        task.abort();
        assert_eq!(code, coaplab_wire::Code::CONTENT);
        let expected: Vec<u8> = (0..3000).map(|i| (i % 256) as u8).collect();
        assert_eq!(body, expected);
        // 3000 B in 1024-B blocks: three exchanges, one datagram each way.
        assert_eq!(client.stats().datagrams_out, 3);
        assert_eq!(client.stats().datagrams_in, 3);
    }

    /// A connected client aimed at a port where nothing listens: the kernel's ICMP port
    /// unreachable comes back as `ConnectionRefused` after the first copy, not as silence
    /// until MAX_RETRANSMIT (bounded by a 10-s guard; it takes one loopback round trip).
    #[tokio::test]
    async fn a_connected_client_sees_a_dead_port_as_connection_refused() {
        let dead = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let dead_addr = dead.local_addr().unwrap();
        drop(dead);
        let mut client = UdpDriver::connect(dead_addr, endpoint(1)).await.unwrap();
        let now = client.now();
        client
            .endpoint_mut()
            .request(now, dead_addr, &Request::get("x"));
        let err = tokio::time::timeout(std::time::Duration::from_secs(10), async {
            loop {
                if let Err(e) = client.try_next_event().await {
                    break e;
                }
            }
        })
        .await
        .expect("refused within the guard");
        assert_eq!(err.kind(), io::ErrorKind::ConnectionRefused);
        assert!(is_unreachable(&err));
        assert_eq!(client.stats().datagrams_out, 1);
    }

    #[tokio::test]
    async fn an_idle_server_purges_its_duplicate_cache_on_the_timer() {
        let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let factory = registry_factory("default", &Settings::new(), 3).unwrap();
        let config = Config {
            dedup_lifetime: Some(coaplab_base::time::Duration::from_millis(200)),
            dedup_purge_timer: true,
            ..Config::default()
        };
        let purging = Endpoint::new(config, factory, Router::new()).unwrap();
        let mut server = UdpDriver::bind(any, purging).await.unwrap();
        let server_addr = server.local_addr().unwrap();
        let mut client = UdpDriver::bind(any, endpoint(4)).await.unwrap();
        let now = client.now();
        client
            .endpoint_mut()
            .request(now, server_addr, &Request::get("data/10"));
        client.flush().await;
        while !matches!(server.next_event().await, Event::Served { .. }) {}
        server.flush().await;
        assert_eq!(server.endpoint().dedup_entries(), 1);
        // No more traffic: only the driver's timer can empty the cache.
        let idle =
            tokio::time::timeout(std::time::Duration::from_millis(600), server.next_event()).await;
        assert!(idle.is_err(), "no event expected: {idle:?}");
        assert_eq!(server.endpoint().dedup_entries(), 0);
    }
}
