//! The HTTP server: `/data/N` over HTTP/1.1 and HTTP/2 with prior knowledge (h2c, no TLS) on
//! one listener; hyper-util's auto builder tells the two apart by the h2 connection preface.
//! Which paths are `/data/N`, the limit on N and the body bytes are the CoAP server's
//! (`coaplab_endpoint::resource::data_len` and `write_pattern`), so the two servers answer the
//! same N with the same bytes and refuse the same N.

use std::collections::HashMap;
use std::convert::Infallible;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use coaplab_endpoint::resource::{data_len, DataLen};
use hyper::header::{HeaderValue, CONTENT_TYPE, SERVER};
use hyper::{Method, Response, StatusCode, Uri};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpSocket};
use tokio::sync::Semaphore;

use super::body::{BodyBudget, BodyGauge, PatternBody};
use super::tfo;

/// Connections served at once by default; further ones are accepted and closed at once.
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;
/// Connections from one IP address at once by default (as the CoAP TCP server's
/// `coaplab_emu::tcp_server::DEFAULT_MAX_CONNECTIONS_PER_SOURCE`).
pub const DEFAULT_MAX_CONNECTIONS_PER_SOURCE: usize = 16;
/// Default [`ServerConfig::header_timeout`]: the first request (HTTP/1.1 head; h2 preface,
/// SETTINGS and HEADERS) must be complete this soon after the connection opened.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Default [`ServerConfig::idle_timeout`]: a connection with no request in progress for this
/// long is closed.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// Default [`ServerConfig::h2_max_concurrent_streams`] (hyper's is 200).
pub const DEFAULT_H2_MAX_CONCURRENT_STREAMS: u32 = 16;
/// Default [`ServerConfig::max_buffered_bytes_per_connection`]: 1 MiB of body chunks made and
/// not yet written, per connection.
pub const DEFAULT_MAX_BUFFERED_BYTES_PER_CONNECTION: usize = 1 << 20;
/// Default [`ServerConfig::max_buffered_bytes`]: 64 MiB of body chunks over all connections.
pub const DEFAULT_MAX_BUFFERED_BYTES: usize = 64 << 20;
/// h2: the most hyper queues per stream above the socket (hyper's default is 400 KiB); a
/// stream asks its body for a chunk only below it. Our budgets bound the total anyway.
pub const H2_MAX_SEND_BUF_BYTES: usize = 64 << 10;
/// Longest life of one connection: then it is closed, whatever it is doing, so idle
/// keep-alive connections cannot hold every connection slot.
pub const CONNECTION_LIFETIME: Duration = Duration::from_secs(300);
/// HTTP/1.1: longest wait for a request's complete header block (hyper's header read timeout)
/// when [`ServerConfig::header_timeout`] is not set lower.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// RFC 9113 §6.9.2's initial flow-control window. The IoT variants keep it on both ends, so
/// neither sends a WINDOW_UPDATE right after its SETTINGS (hyper's default windows are larger
/// and announced with one); objects of docs/experiments.md §8e are far smaller.
pub const H2_DEFAULT_WINDOW_BYTES: u32 = 65_535;
/// Pause after a failed `accept` (e.g. EMFILE), so that a persistent failure does not spin.
pub const ACCEPT_ERROR_PAUSE: Duration = Duration::from_millis(100);
/// The `server` header of the full (non-IoT) responses.
pub const SERVER_NAME: &str = "coaplab";

/// How the server answers, and its limits (docs/real-sockets.md, "Limits and defences").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerConfig {
    /// Minimal responses: status line (h2: `:status`) and `content-length` only; no `date`,
    /// `content-type` or `server`. h2: RFC 9113's default windows (no WINDOW_UPDATE).
    pub iot: bool,
    /// Connections served at once.
    pub max_connections: usize,
    /// Connections from one IP address at once; one more is accepted and closed at once.
    pub max_connections_per_source: usize,
    /// The first request of a connection must be complete (its head read) this long after
    /// the connection opened, or it is closed: a silent connection, an h2 preface with no
    /// request, a partial head. HTTP/1.1: also hyper's header read timeout for every later
    /// head (at most [`HEADER_READ_TIMEOUT`]).
    pub header_timeout: Duration,
    /// A connection with no request in progress (every response body sent or dropped) for
    /// this long is closed.
    pub idle_timeout: Duration,
    /// h2: streams open at once per connection (SETTINGS_MAX_CONCURRENT_STREAMS); a stream
    /// beyond is refused (RST_STREAM REFUSED_STREAM).
    pub h2_max_concurrent_streams: u32,
    /// Bytes of response body made and not yet written to the socket, per connection; a body
    /// waits (under backpressure) for the rest of its chunks.
    pub max_buffered_bytes_per_connection: usize,
    /// The same over all connections.
    pub max_buffered_bytes: usize,
    /// Largest N served at `/data/N`; a larger N gets an empty 400 Bad Request before any body
    /// exists. The CoAP server's limit (`coaplab server --max-data-bytes`,
    /// `coaplab_endpoint::Router::max_data_bytes`), with its default
    /// `coaplab_endpoint::MAX_DATA_BYTES` (1 GiB).
    pub max_data_bytes: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            iot: false,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_connections_per_source: DEFAULT_MAX_CONNECTIONS_PER_SOURCE,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            h2_max_concurrent_streams: DEFAULT_H2_MAX_CONCURRENT_STREAMS,
            max_buffered_bytes_per_connection: DEFAULT_MAX_BUFFERED_BYTES_PER_CONNECTION,
            max_buffered_bytes: DEFAULT_MAX_BUFFERED_BYTES,
            max_data_bytes: coaplab_endpoint::MAX_DATA_BYTES,
        }
    }
}

/// What the server counted (all monotonic but the body gauge's `held`).
#[derive(Debug, Default)]
pub struct ServerCounters {
    /// Connections accepted and served.
    pub connections: AtomicU64,
    /// Connections closed at once because `max_connections` were being served.
    pub refused: AtomicU64,
    /// Connections closed at once because `max_connections_per_source` from their address
    /// were being served.
    pub refused_source: AtomicU64,
    /// Connections closed by [`ServerConfig::header_timeout`] (no complete first request).
    pub header_timeouts: AtomicU64,
    /// Connections closed by [`ServerConfig::idle_timeout`].
    pub idle_closed: AtomicU64,
    /// Requests answered 200.
    pub served: AtomicU64,
    /// Requests answered 404 (no such resource).
    pub not_found: AtomicU64,
    /// Requests answered 405 (a method other than GET or HEAD).
    pub not_allowed: AtomicU64,
    /// Connections that ended with a protocol or I/O error (hyper's), or at
    /// [`CONNECTION_LIFETIME`].
    pub errors: AtomicU64,
    /// Failed `accept` calls (e.g. out of file descriptors); the server pauses
    /// [`ACCEPT_ERROR_PAUSE`] and goes on.
    pub accept_errors: AtomicU64,
    /// GETs of `/data/N` answered 400 because N > [`ServerConfig::max_data_bytes`].
    pub too_large: AtomicU64,
    /// Response body bytes made and not yet written: now, the peak, and how often a chunk
    /// waited for budget.
    pub body: Arc<BodyGauge>,
}

impl ServerCounters {
    /// The counters as one `key=value` line.
    pub fn line(&self) -> String {
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
        format!(
            "http connections={} refused={} refused_source={} header_timeouts={} idle_closed={} \
served={} not_found={} not_allowed={} errors={} accept_errors={} too_large={} \
body_bytes_peak={} body_waits={}",
            g(&self.connections),
            g(&self.refused),
            g(&self.refused_source),
            g(&self.header_timeouts),
            g(&self.idle_closed),
            g(&self.served),
            g(&self.not_found),
            g(&self.not_allowed),
            g(&self.errors),
            g(&self.accept_errors),
            g(&self.too_large),
            g(&self.body.peak),
            g(&self.body.waits),
        )
    }
}

/// A listening socket on `addr` (`SO_REUSEADDR`), with TCP Fast Open when `tfo_queue` is given.
pub fn listen(addr: SocketAddr, tfo_queue: Option<u32>) -> io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    if let Some(q) = tfo_queue {
        tfo::set_listener_fastopen(socket.as_fd(), q)?;
    }
    socket.listen(1024)
}

/// The answer to one request: the routing of `coaplab http-server` (method and path; the
/// query and the headers are ignored). The body has no budget yet.
pub fn respond(
    method: &Method,
    uri: &Uri,
    config: &ServerConfig,
    c: &ServerCounters,
) -> Response<PatternBody> {
    let data = data_len(uri.path(), config.max_data_bytes);
    let (status, body) = match (method, data) {
        (&Method::GET | &Method::HEAD, Some(DataLen::Body(n))) => {
            c.served.fetch_add(1, Ordering::Relaxed);
            (StatusCode::OK, PatternBody::new(n))
        }
        (&Method::GET | &Method::HEAD, Some(DataLen::TooLarge)) => {
            c.too_large.fetch_add(1, Ordering::Relaxed);
            (StatusCode::BAD_REQUEST, PatternBody::empty())
        }
        (_, Some(_)) => {
            c.not_allowed.fetch_add(1, Ordering::Relaxed);
            (StatusCode::METHOD_NOT_ALLOWED, PatternBody::empty())
        }
        (_, None) => {
            c.not_found.fetch_add(1, Ordering::Relaxed);
            (StatusCode::NOT_FOUND, PatternBody::empty())
        }
    };
    // hyper adds `content-length` from the exact body size (and `date` unless switched off).
    let mut resp = Response::new(body);
    *resp.status_mut() = status;
    if !config.iot {
        let h = resp.headers_mut();
        h.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("application/octet-stream"),
        );
        h.insert(SERVER, HeaderValue::from_static(SERVER_NAME));
    }
    resp
}

/// How one connection ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectionEnd {
    /// The peer closed it, or hyper finished it.
    Closed,
    /// A protocol or I/O error (hyper's).
    Error,
    /// No complete first request within [`ServerConfig::header_timeout`].
    HeaderTimeout,
    /// No request in progress for [`ServerConfig::idle_timeout`].
    Idle,
    /// [`CONNECTION_LIFETIME`] reached.
    Lifetime,
}

/// A connection's requests in progress and when the last one ended, for the timeouts.
#[derive(Debug)]
struct Activity {
    opened: tokio::time::Instant,
    in_progress: AtomicUsize,
    requests: AtomicU64,
    /// Milliseconds after `opened` when the last request ended.
    last_end_ms: AtomicU64,
    /// Woken when a request ends (its idle deadline starts then).
    ended: tokio::sync::Notify,
}

impl Activity {
    fn new() -> Activity {
        Activity {
            opened: tokio::time::Instant::now(),
            in_progress: AtomicUsize::new(0),
            requests: AtomicU64::new(0),
            last_end_ms: AtomicU64::new(0),
            ended: tokio::sync::Notify::new(),
        }
    }

    fn begin(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.in_progress.fetch_add(1, Ordering::Relaxed);
    }

    fn end(&self) {
        let ms = self.opened.elapsed().as_millis() as u64;
        self.last_end_ms.store(ms, Ordering::Relaxed);
        self.in_progress.fetch_sub(1, Ordering::Relaxed);
        self.ended.notify_one();
    }

    /// When the connection times out if nothing changes (None: a request is in progress).
    fn deadline(&self, config: &ServerConfig) -> Option<(tokio::time::Instant, ConnectionEnd)> {
        if self.in_progress.load(Ordering::Relaxed) > 0 {
            return None;
        }
        if self.requests.load(Ordering::Relaxed) == 0 {
            return Some((
                self.opened + config.header_timeout,
                ConnectionEnd::HeaderTimeout,
            ));
        }
        let last = Duration::from_millis(self.last_end_ms.load(Ordering::Relaxed));
        Some((
            self.opened + last + config.idle_timeout,
            ConnectionEnd::Idle,
        ))
    }
}

/// The shared part of a server: hyper's builder with our limits, the configuration, the
/// counters and the server-wide body budget. [`Server::serve_io`] serves one connection.
#[derive(Clone)]
pub struct Server {
    builder: Arc<auto::Builder<TokioExecutor>>,
    config: ServerConfig,
    counters: Arc<ServerCounters>,
    body_budget: Arc<Semaphore>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("config", &self.config)
            .finish()
    }
}

impl Server {
    /// A server with `config`, counting into `counters`.
    pub fn new(config: ServerConfig, counters: Arc<ServerCounters>) -> Server {
        let mut builder = auto::Builder::new(TokioExecutor::new());
        builder
            .http1()
            .timer(TokioTimer::new())
            .header_read_timeout(config.header_timeout.min(HEADER_READ_TIMEOUT))
            .auto_date_header(!config.iot);
        let mut h2 = builder.http2();
        h2.timer(TokioTimer::new())
            .auto_date_header(!config.iot)
            .max_concurrent_streams(config.h2_max_concurrent_streams.max(1))
            .max_send_buf_size(H2_MAX_SEND_BUF_BYTES);
        if config.iot {
            // RFC 9113's default windows: no connection-level WINDOW_UPDATE frame at the start.
            h2.initial_stream_window_size(H2_DEFAULT_WINDOW_BYTES)
                .initial_connection_window_size(H2_DEFAULT_WINDOW_BYTES);
        }
        let total = config.max_buffered_bytes.clamp(1, Semaphore::MAX_PERMITS);
        Server {
            builder: Arc::new(builder),
            config,
            counters,
            body_budget: Arc::new(Semaphore::new(total)),
        }
    }

    /// The counters.
    pub fn counters(&self) -> &Arc<ServerCounters> {
        &self.counters
    }

    /// Serves one connection on `io` within the per-connection limits (header and idle
    /// timeouts, lifetime, body budget) and counts how it ended.
    pub async fn serve_io<I>(&self, io: I) -> ConnectionEnd
    where
        I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let config = self.config;
        let activity = Arc::new(Activity::new());
        let budget = BodyBudget::new(
            config.max_buffered_bytes_per_connection,
            self.body_budget.clone(),
            config.max_buffered_bytes,
            self.counters.body.clone(),
        );
        let (c, a) = (self.counters.clone(), activity.clone());
        let service = hyper::service::service_fn(move |req: hyper::Request<_>| {
            a.begin();
            let done = a.clone();
            let resp = respond(req.method(), req.uri(), &config, &c).map(|b| {
                b.with_budget(budget.clone())
                    .on_done(Box::new(move || done.end()))
            });
            // The request (and any body the client sends with it) is dropped here, unread.
            async move { Ok::<_, Infallible>(resp) }
        });
        let conn = self.builder.serve_connection(TokioIo::new(io), service);
        tokio::pin!(conn);
        let lifetime = tokio::time::sleep(CONNECTION_LIFETIME);
        tokio::pin!(lifetime);
        let end = loop {
            let deadline = activity.deadline(&config);
            let check = deadline.map_or_else(
                || {
                    tokio::time::Instant::now()
                        + config.idle_timeout.max(Duration::from_millis(100))
                },
                |(t, _)| t,
            );
            tokio::select! {
                r = conn.as_mut() => break if r.is_ok() { ConnectionEnd::Closed } else { ConnectionEnd::Error },
                () = &mut lifetime => break ConnectionEnd::Lifetime,
                () = activity.ended.notified() => {}
                () = tokio::time::sleep_until(check) => {
                    // Still idle at the deadline (a request may have begun or ended meanwhile).
                    if let Some((t, why)) = activity.deadline(&config) {
                        if t <= tokio::time::Instant::now() {
                            break why;
                        }
                    }
                }
            }
        };
        let counter = match end {
            ConnectionEnd::Closed => None,
            ConnectionEnd::Error | ConnectionEnd::Lifetime => Some(&self.counters.errors),
            ConnectionEnd::HeaderTimeout => Some(&self.counters.header_timeouts),
            ConnectionEnd::Idle => Some(&self.counters.idle_closed),
        };
        if let Some(c) = counter {
            c.fetch_add(1, Ordering::Relaxed);
        }
        end
    }
}

/// Connections being served per source address.
#[derive(Debug, Default)]
struct Sources(Mutex<HashMap<IpAddr, usize>>);

impl Sources {
    /// Takes a slot for `ip` unless it holds `max` already.
    fn take(self: &Arc<Self>, ip: IpAddr, max: usize) -> Option<SourceSlot> {
        let mut m = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let n = m.entry(ip).or_default();
        if *n >= max.max(1) {
            return None;
        }
        *n += 1;
        Some(SourceSlot(self.clone(), ip))
    }
}

/// One connection's place in [`Sources`], given back when dropped.
struct SourceSlot(Arc<Sources>, IpAddr);

impl Drop for SourceSlot {
    fn drop(&mut self) {
        let mut m = self.0 .0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = m.get_mut(&self.1) {
            *n -= 1;
            if *n == 0 {
                m.remove(&self.1);
            }
        }
    }
}

/// Serves connections from `listener` until the future is dropped.
pub async fn serve(listener: TcpListener, config: ServerConfig, counters: Arc<ServerCounters>) {
    let server = Server::new(config, counters.clone());
    let slots = Arc::new(Semaphore::new(config.max_connections.max(1)));
    let sources = Arc::new(Sources::default());
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(a) => a,
            Err(_) => {
                counters.accept_errors.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(ACCEPT_ERROR_PAUSE).await;
                continue;
            }
        };
        let Ok(permit) = slots.clone().try_acquire_owned() else {
            counters.refused.fetch_add(1, Ordering::Relaxed);
            continue; // dropping the stream closes it
        };
        let Some(source) = sources.take(peer.ip(), config.max_connections_per_source) else {
            counters.refused_source.fetch_add(1, Ordering::Relaxed);
            continue;
        };
        counters.connections.fetch_add(1, Ordering::Relaxed);
        // Responses go out as soon as they are written (one request, one response).
        let _ = stream.set_nodelay(true);
        let server = server.clone();
        tokio::spawn(async move {
            server.serve_io(stream).await;
            drop((permit, source));
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::body::collect;
    use super::*;

    use coaplab_base::time::Instant;
    use coaplab_endpoint::tcp::{Session, SessionConfig, SessionEvent};
    use coaplab_endpoint::{Request, Router};
    use coaplab_wire::Code;

    /// Feeds every queued write of `from` to `to`.
    fn pump(from: &mut Session, to: &mut Session) {
        while let Some(w) = from.poll_write() {
            to.handle_stream_bytes(Instant::from_millis(0), &w.bytes);
        }
    }

    /// The CoAP server's (over TCP, so in one message) answer to GET `path`, with its
    /// `data/N` limit set to `max_data_bytes`: code and body.
    fn coap_get(path: &str, max_data_bytes: usize) -> (Code, Vec<u8>) {
        let client = SessionConfig {
            max_message_size: Some(u32::MAX),
            keep_bodies: true,
            ..SessionConfig::client()
        };
        let mut router = Router::new();
        router.max_data_bytes(max_data_bytes);
        let mut c = Session::new(client, Router::new()).unwrap();
        let mut s = Session::new(SessionConfig::server(), router).unwrap();
        pump(&mut s, &mut c);
        pump(&mut c, &mut s);
        c.request(Instant::from_millis(0), &Request::get(path))
            .unwrap();
        pump(&mut c, &mut s);
        pump(&mut s, &mut c);
        std::iter::from_fn(|| c.poll_event())
            .find_map(|e| match e {
                SessionEvent::RequestCompleted { code, body, .. } => Some((code, body)),
                _ => None,
            })
            .unwrap()
    }

    /// The HTTP server's `/data/N` bodies are the CoAP server's, byte for byte, and both
    /// refuse the same N (HTTP 400, CoAP 4.00).
    #[test]
    fn data_bodies_equal_the_coap_servers() {
        let max = 70_000;
        for n in [0usize, 1, 255, 256, 257, 1000, 65_536, 65_537, max] {
            let path = format!("/data/{n}");
            assert_eq!(data_len(&path, max), Some(DataLen::Body(n)));
            let http = collect(PatternBody::new(n));
            assert_eq!(http.len(), n);
            assert_eq!((Code::CONTENT, http), coap_get(&path, max), "{path}");
        }
        let path = format!("/data/{}", max + 1);
        assert_eq!(data_len(&path, max), Some(DataLen::TooLarge));
        assert_eq!(coap_get(&path, max), (Code::BAD_REQUEST, Vec::new()));
    }
}
