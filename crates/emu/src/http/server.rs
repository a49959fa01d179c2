//! The HTTP server: `/data/N` over HTTP/1.1 and HTTP/2 with prior knowledge (h2c, no TLS) on
//! one listener; hyper-util's auto builder tells the two apart by the h2 connection preface.
//! Which paths are `/data/N`, the limit on N and the body bytes are the CoAP server's
//! (`coaplab_endpoint::resource::data_len` and `write_pattern`), so the two servers answer the
//! same N with the same bytes and refuse the same N.

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use coaplab_endpoint::resource::{data_len, DataLen};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_TYPE, SERVER};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::net::{TcpListener, TcpSocket};
use tokio::sync::Semaphore;

use super::body::PatternBody;
use super::tfo;

/// Connections served at once by default; further ones are accepted and closed at once.
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;
/// Longest life of one connection: then it is closed, whatever it is doing, so idle
/// keep-alive connections cannot hold every connection slot.
pub const CONNECTION_LIFETIME: Duration = Duration::from_secs(300);
/// HTTP/1.1: longest wait for a request's complete header block (hyper's header read timeout).
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// RFC 9113 §6.9.2's initial flow-control window. The IoT variants keep it on both ends, so
/// neither sends a WINDOW_UPDATE right after its SETTINGS (hyper's default windows are larger
/// and announced with one); objects of docs/experiments.md §8e are far smaller.
pub const H2_DEFAULT_WINDOW_BYTES: u32 = 65_535;
/// Pause after a failed `accept` (e.g. EMFILE), so that a persistent failure does not spin.
pub const ACCEPT_ERROR_PAUSE: Duration = Duration::from_millis(100);
/// The `server` header of the full (non-IoT) responses.
pub const SERVER_NAME: &str = "coaplab";

/// How the server answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerConfig {
    /// Minimal responses: status line (h2: `:status`) and `content-length` only; no `date`,
    /// `content-type` or `server`. h2: RFC 9113's default windows (no WINDOW_UPDATE).
    pub iot: bool,
    /// Connections served at once.
    pub max_connections: usize,
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
            max_data_bytes: coaplab_endpoint::MAX_DATA_BYTES,
        }
    }
}

/// What the server counted (all monotonic).
#[derive(Debug, Default)]
pub struct ServerCounters {
    /// Connections accepted and served.
    pub connections: AtomicU64,
    /// Connections closed at once because `max_connections` were being served.
    pub refused: AtomicU64,
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
}

impl ServerCounters {
    /// The counters as one `key=value` line.
    pub fn line(&self) -> String {
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
        format!(
            "http connections={} refused={} served={} not_found={} not_allowed={} errors={} \
accept_errors={} too_large={}",
            g(&self.connections),
            g(&self.refused),
            g(&self.served),
            g(&self.not_found),
            g(&self.not_allowed),
            g(&self.errors),
            g(&self.accept_errors),
            g(&self.too_large)
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

/// The answer to one request.
fn respond(
    req: &Request<Incoming>,
    config: ServerConfig,
    c: &ServerCounters,
) -> Response<PatternBody> {
    let data = data_len(req.uri().path(), config.max_data_bytes);
    let (status, body) = match (req.method(), data) {
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

/// Serves connections from `listener` until the future is dropped.
pub async fn serve(listener: TcpListener, config: ServerConfig, counters: Arc<ServerCounters>) {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .auto_date_header(!config.iot);
    let mut h2 = builder.http2();
    h2.timer(TokioTimer::new()).auto_date_header(!config.iot);
    if config.iot {
        // RFC 9113's default windows: no connection-level WINDOW_UPDATE frame at the start.
        h2.initial_stream_window_size(H2_DEFAULT_WINDOW_BYTES)
            .initial_connection_window_size(H2_DEFAULT_WINDOW_BYTES);
    }
    let builder = Arc::new(builder);
    let slots = Arc::new(Semaphore::new(config.max_connections));
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
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
        counters.connections.fetch_add(1, Ordering::Relaxed);
        // Responses go out as soon as they are written (one request, one response).
        let _ = stream.set_nodelay(true);
        let (builder, counters) = (builder.clone(), counters.clone());
        tokio::spawn(async move {
            let c = counters.clone();
            let service = hyper::service::service_fn(move |req| {
                let resp = respond(&req, config, &c);
                async move { Ok::<_, Infallible>(resp) }
            });
            let conn = builder.serve_connection(TokioIo::new(stream), service);
            match tokio::time::timeout(CONNECTION_LIFETIME, conn).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) | Err(_) => {
                    counters.errors.fetch_add(1, Ordering::Relaxed);
                }
            }
            drop(permit);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::body::collect;
    use super::*;

    use coaplab_cc::time::Instant;
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
