//! The HTTP client: one GET on a fresh connection (HTTP/1.1, or HTTP/2 with prior knowledge),
//! optionally with TCP Fast Open, timed from the start of the connection to the last byte of
//! the body (docs/experiments.md §8e's object download time).

use std::io;
use std::net::SocketAddr;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use http_body_util::{BodyExt, Empty};
use hyper::header::{HeaderValue, ACCEPT, HOST, USER_AGENT};
use hyper::{HeaderMap, Request, StatusCode, Uri};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::io::BufWriter;
use tokio::net::TcpSocket;

use super::server::H2_DEFAULT_WINDOW_BYTES;
use super::tfo;

/// The `user-agent` of full (non-IoT) requests.
pub const USER_AGENT_VALUE: &str = concat!("coaplab/", env!("CARGO_PKG_VERSION"));
/// Bytes the client's write buffer holds before it writes: the h2 preface, SETTINGS and the
/// request's HEADERS are written together (so with TFO they start in the SYN).
const WRITE_BUFFER_BYTES: usize = 16 * 1024;

/// The HTTP version spoken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// HTTP/1.1.
    Http1,
    /// HTTP/2 over cleartext TCP with prior knowledge (RFC 9113 §3.3), no upgrade.
    Http2,
}

/// How to fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GetConfig {
    /// HTTP/1.1 or h2c.
    pub version: Version,
    /// Minimal request headers: HTTP/1.1 `host` only; h2 the four pseudo-headers only, and
    /// RFC 9113's default windows (no WINDOW_UPDATE). Otherwise `user-agent` and
    /// `accept: */*` are sent too, as curl does.
    pub iot: bool,
    /// `TCP_FASTOPEN_CONNECT`: with a cookie cached for the server, the request starts in the SYN.
    pub tfo: bool,
    /// Largest body accepted; a larger one fails with [`GetError::BodyTooLarge`].
    pub max_body_bytes: usize,
}

/// One response, whole.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The status.
    pub status: StatusCode,
    /// The response headers.
    pub headers: HeaderMap,
    /// The body.
    pub body: Bytes,
    /// Just before the socket was created: the instant both times count from (with
    /// `download_time`, the instant the body's last byte had been read).
    pub started: Instant,
    /// From just before the socket was created to the last byte of the body.
    pub download_time: Duration,
    /// From just before the socket was created to the response head.
    pub head_time: Duration,
}

/// Why a fetch failed.
#[derive(Debug)]
pub enum GetError {
    /// The socket could not be created or connected (e.g. refused).
    Connect(io::Error),
    /// An HTTP protocol error, or the connection broke (hyper's error).
    Protocol(hyper::Error),
    /// The body is longer than the limit.
    BodyTooLarge(usize),
    /// The request could not be built from the URI.
    BadRequest(String),
}

impl std::fmt::Display for GetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GetError::Connect(e) => write!(f, "cannot connect: {e}"),
            GetError::Protocol(e) => write!(f, "HTTP error: {e}"),
            GetError::BodyTooLarge(n) => write!(f, "response body larger than {n} bytes"),
            GetError::BadRequest(e) => write!(f, "bad request: {e}"),
        }
    }
}

impl std::error::Error for GetError {}

/// The request for `uri` (absolute, `http://`) as `config` says.
fn request(uri: &Uri, config: &GetConfig) -> Result<Request<Empty<Bytes>>, GetError> {
    let bad = |e: &dyn std::fmt::Display| GetError::BadRequest(e.to_string());
    let authority = uri.authority().ok_or_else(|| bad(&"no host in URI"))?;
    let mut builder = Request::get(match config.version {
        // HTTP/1.1: origin-form target plus Host (mandatory in 1.1).
        Version::Http1 => {
            let path = uri.path_and_query().map_or("/", |p| p.as_str());
            Uri::try_from(path).map_err(|e| bad(&e))?
        }
        // h2: hyper takes :scheme, :authority and :path from the absolute URI.
        Version::Http2 => uri.clone(),
    });
    if config.version == Version::Http1 {
        let host = HeaderValue::from_str(authority.as_str()).map_err(|e| bad(&e))?;
        builder = builder.header(HOST, host);
    }
    if !config.iot {
        builder = builder
            .header(USER_AGENT, USER_AGENT_VALUE)
            .header(ACCEPT, "*/*");
    }
    builder.body(Empty::new()).map_err(|e| bad(&e))
}

/// GETs `uri` from `addr` on a new connection, which is closed afterwards.
pub async fn get(addr: SocketAddr, uri: &Uri, config: GetConfig) -> Result<Fetched, GetError> {
    let req = request(uri, &config)?;
    let start = Instant::now();
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()
    } else {
        TcpSocket::new_v6()
    }
    .map_err(GetError::Connect)?;
    if config.tfo {
        tfo::set_connect_fastopen(socket.as_fd()).map_err(|e| {
            // Linux refuses the option (EOPNOTSUPP) while the sysctl lacks the client bit.
            GetError::Connect(io::Error::new(
                e.kind(),
                format!("TCP_FASTOPEN_CONNECT: {e} (is net.ipv4.tcp_fastopen 1 or 3?)"),
            ))
        })?;
    }
    // One request, one response: no Nagle delay for the request's last segment.
    socket.set_nodelay(true).map_err(GetError::Connect)?;
    // With a TFO cookie cached this returns at once; the SYN leaves with the first write.
    let stream = socket.connect(addr).await.map_err(GetError::Connect)?;
    let io = TokioIo::new(BufWriter::with_capacity(WRITE_BUFFER_BYTES, stream));
    let resp = match config.version {
        Version::Http1 => {
            let (mut sender, conn) = hyper::client::conn::http1::handshake(io)
                .await
                .map_err(GetError::Protocol)?;
            let response = sender.send_request(req);
            tokio::pin!(response);
            drive(response, conn).await?
        }
        Version::Http2 => {
            let mut builder = hyper::client::conn::http2::Builder::new(TokioExecutor::new());
            if config.iot {
                builder
                    .initial_stream_window_size(H2_DEFAULT_WINDOW_BYTES)
                    .initial_connection_window_size(H2_DEFAULT_WINDOW_BYTES);
            }
            let (mut sender, conn) = builder.handshake(io).await.map_err(GetError::Protocol)?;
            let response = sender.send_request(req);
            tokio::pin!(response);
            drive(response, conn).await?
        }
    };
    let head_time = start.elapsed();
    let (parts, mut body) = resp.into_parts();
    let mut got = BytesMut::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(GetError::Protocol)?;
        if let Ok(data) = frame.into_data() {
            if got.len() + data.len() > config.max_body_bytes {
                return Err(GetError::BodyTooLarge(config.max_body_bytes));
            }
            got.extend_from_slice(&data);
        }
    }
    Ok(Fetched {
        status: parts.status,
        headers: parts.headers,
        body: got.freeze(),
        started: start,
        download_time: start.elapsed(),
        head_time,
    })
}

/// Polls the connection beside the response future until the response head arrives; the
/// connection then runs on its own task (it ends when the response and sender are dropped).
async fn drive<R, C, E>(
    mut response: std::pin::Pin<&mut R>,
    conn: C,
) -> Result<hyper::Response<hyper::body::Incoming>, GetError>
where
    R: std::future::Future<Output = Result<hyper::Response<hyper::body::Incoming>, hyper::Error>>,
    C: std::future::Future<Output = Result<(), E>> + Send + 'static,
    E: Send + 'static,
{
    let task = tokio::spawn(conn);
    let r = response.as_mut().await.map_err(GetError::Protocol);
    if r.is_err() {
        task.abort();
    }
    r
}
