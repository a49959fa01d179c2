//! [`TcpDriver`]: one RFC 8323 [`Session`] on one tokio TCP connection, and [`serve_tcp`],
//! an accept loop with one session per connection.
//!
//! The driver only moves bytes and time: every chunk read goes to
//! [`Session::handle_stream_bytes`], the peer's FIN (or a reset) to
//! [`Session::handle_stream_end`], and every [`Session::poll_write_into`] becomes one
//! `write_all` on a socket with `TCP_NODELAY` set (so the client's CSM and its first request
//! are two segments, spec/experiments.md §5.1). When [`Session::should_close`] turns true the
//! queued writes go out and the write half is shut down (a FIN). A session has no timers.
//! Protocol decisions all stay in the session.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use coaplab_cc::time::Instant;
use coaplab_endpoint::tcp::{Session, SessionConfig, SessionConfigError, SessionEvent, WriteKind};
use coaplab_endpoint::Router;
use tokio::io::AsyncWrite;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

/// Bytes read from the socket at most per call.
pub const READ_CHUNK_BYTES: usize = 64 * 1024;

/// Counters of what a [`TcpDriver`] moved (the session itself counts nothing).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TcpStats {
    /// Bytes read from the connection and handed to the session.
    pub bytes_in: u64,
    /// Bytes written.
    pub bytes_out: u64,
    /// Reads that returned data.
    pub reads: u64,
    /// Messages written (one `write_all` each).
    pub writes: u64,
    /// Read or write errors (e.g. a reset); each ends the session as a peer close would.
    pub io_errors: u64,
}

/// What [`TcpDriver::next_event`] returns.
#[derive(Debug, Clone, PartialEq)]
pub enum TcpEvent {
    /// Something the session emitted.
    Session(SessionEvent),
    /// A message was written (only with [`TcpDriver::log_writes`]).
    Wrote {
        /// What it carried.
        kind: WriteKind,
        /// Its frame length.
        bytes: usize,
        /// When the write completed.
        at: Instant,
    },
    /// The connection is finished: our FIN is sent after the session ended, or the peer's
    /// FIN (or an error) arrived and every event was handed out. Further calls return it again.
    Ended,
}

/// Drives one [`Session`] over one TCP connection in real time.
///
/// Session time is the wall-clock time since the driver's start instant, in integer
/// nanoseconds (a server passes one start to all its connections, so their clocks agree).
///
/// Use [`TcpDriver::session_mut`] for commands (e.g. [`Session::request`] at
/// [`TcpDriver::now`]), then [`TcpDriver::next_event`] to write what they queued and run until
/// the session has something to say.
#[derive(Debug)]
pub struct TcpDriver {
    stream: TcpStream,
    session: Session,
    start: tokio::time::Instant,
    send_buf: Vec<u8>,
    recv_buf: Vec<u8>,
    stats: TcpStats,
    log_writes: bool,
    wrote: Vec<(WriteKind, usize, Instant)>,
    /// Our FIN is sent.
    shut_down: bool,
    /// The peer's FIN (or an error) was seen.
    peer_done: bool,
    /// A read or write failed: nothing more can be written.
    broken: bool,
}

impl TcpDriver {
    /// Connects to `addr` and starts a session with `config` (our CSM is the first write);
    /// time starts now.
    pub async fn connect(
        addr: SocketAddr,
        config: SessionConfig,
        router: Router,
    ) -> io::Result<TcpDriver> {
        let session = Session::new(config, router).map_err(invalid)?;
        let stream = TcpStream::connect(addr).await?;
        TcpDriver::new(stream, session, tokio::time::Instant::now())
    }

    /// Drives `session` on a connected `stream`; session time counts from `start`. Sets
    /// `TCP_NODELAY`.
    pub fn new(
        stream: TcpStream,
        session: Session,
        start: tokio::time::Instant,
    ) -> io::Result<TcpDriver> {
        stream.set_nodelay(true)?;
        Ok(TcpDriver {
            stream,
            session,
            start,
            send_buf: Vec::new(),
            recv_buf: vec![0; READ_CHUNK_BYTES],
            stats: TcpStats::default(),
            log_writes: false,
            wrote: Vec::new(),
            shut_down: false,
            peer_done: false,
            broken: false,
        })
    }

    /// Also report every write as [`TcpEvent::Wrote`] (for `-v` traces).
    pub fn log_writes(&mut self, on: bool) {
        self.log_writes = on;
    }

    /// The connection's local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.stream.local_addr()
    }

    /// The peer's address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.stream.peer_addr()
    }

    /// The session, for getters.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The session, for commands. Call [`TcpDriver::next_event`] afterwards so what they
    /// queued is written.
    pub fn session_mut(&mut self) -> &mut Session {
        &mut self.session
    }

    /// What was moved so far.
    pub fn stats(&self) -> TcpStats {
        self.stats
    }

    /// The current session time (wall clock since the start instant).
    pub fn now(&self) -> Instant {
        let ns = i64::try_from(self.start.elapsed().as_nanos()).unwrap_or(i64::MAX);
        Instant::ZERO + coaplab_cc::time::Duration::from_nanos(ns)
    }

    /// Writes every queued message, one `write_all` each. A write error ends the session as
    /// the peer's close would.
    pub async fn flush(&mut self) {
        while let Some(kind) = self.session.poll_write_into(&mut self.send_buf) {
            if self.shut_down || self.broken {
                continue; // nowhere to write: dropped
            }
            match write_all(&self.stream, &self.send_buf).await {
                Ok(()) => {
                    self.stats.writes += 1;
                    self.stats.bytes_out += self.send_buf.len() as u64;
                    if self.log_writes {
                        let at = self.now();
                        self.wrote.push((kind, self.send_buf.len(), at));
                    }
                }
                Err(_) => self.fail(),
            }
        }
    }

    /// Ends the session with a plain FIN (no Release, spec/experiments.md §5.1): outstanding
    /// requests fail, queued writes go out, then the write half is shut down.
    pub async fn close(&mut self) {
        let now = self.now();
        self.session.close(now);
        self.flush().await;
        self.shutdown().await;
    }

    async fn shutdown(&mut self) {
        if !self.shut_down {
            self.shut_down = true;
            let _ = shutdown(&mut self.stream).await;
        }
    }

    /// A read or write error: the stream is gone.
    fn fail(&mut self) {
        self.stats.io_errors += 1;
        self.peer_done = true;
        self.broken = true;
        let now = self.now();
        self.session.handle_stream_end(now);
    }

    /// Writes what is queued, then reads until the session emits an event, and returns it;
    /// [`TcpEvent::Ended`] once the connection is finished. Pending while the session is idle
    /// and the peer sends nothing.
    ///
    /// Cancel safety: bytes read are always handed to the session before the call can be
    /// cancelled; when cancelled while writing, part of a message may be on the wire, so the
    /// connection must then be dropped.
    pub async fn next_event(&mut self) -> TcpEvent {
        loop {
            self.flush().await;
            if !self.wrote.is_empty() {
                let (kind, bytes, at) = self.wrote.remove(0);
                return TcpEvent::Wrote { kind, bytes, at };
            }
            if let Some(e) = self.session.poll_event() {
                return TcpEvent::Session(e);
            }
            if self.session.should_close() {
                self.shutdown().await;
                return TcpEvent::Ended;
            }
            if self.peer_done {
                return TcpEvent::Ended;
            }
            match read(&self.stream, &mut self.recv_buf).await {
                Ok(0) => {
                    self.peer_done = true;
                    let now = self.now();
                    self.session.handle_stream_end(now);
                }
                Ok(n) => {
                    self.stats.reads += 1;
                    self.stats.bytes_in += n as u64;
                    let now = self.now();
                    self.session.handle_stream_bytes(now, &self.recv_buf[..n]);
                }
                Err(_) => self.fail(),
            }
        }
    }
}

/// Writes all of `buf` (tokio's `io-util` extension traits are not needed for this).
async fn write_all(stream: &TcpStream, buf: &[u8]) -> io::Result<()> {
    let mut off = 0;
    while off < buf.len() {
        stream.writable().await?;
        match stream.try_write(&buf[off..]) {
            Ok(n) => off += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Reads what is available (at least one byte; 0 at the peer's FIN).
async fn read(stream: &TcpStream, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        stream.readable().await?;
        match stream.try_read(buf) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
    }
}

/// Shuts the write half down (sends our FIN).
async fn shutdown(stream: &mut TcpStream) -> io::Result<()> {
    std::future::poll_fn(|cx| std::pin::Pin::new(&mut *stream).poll_shutdown(cx)).await
}

fn invalid(e: SessionConfigError) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, e)
}

/// Called with every event of every connection of [`serve_tcp`], with the peer's address.
pub type TcpEventSink = Arc<dyn Fn(SocketAddr, &TcpEvent) + Send + Sync>;

/// Accepts connections on `listener` until the returned future is dropped, each on its own
/// task with its own [`Session`] (`config`, a clone of `router`) and `TCP_NODELAY`; the
/// session's CSM goes out at once (RFC 8323 §5.3). Every connection's session time counts from
/// `start`. `sink` sees every event, [`TcpEvent::Ended`] last. Dropping the future (e.g. on
/// SIGTERM) aborts every connection task.
///
/// At most `max_connections` are served at once: beyond, accepting waits until one ends (new
/// connections wait in the kernel's backlog). Memory is thus bounded by `max_connections` ×
/// ([`READ_CHUNK_BYTES`] + the session's receive limit + its pending writes).
///
/// Returns only on an accept error that is not about one connection (e.g. no file descriptors
/// left is retried after a pause).
pub async fn serve_tcp(
    listener: TcpListener,
    config: SessionConfig,
    router: Router,
    start: tokio::time::Instant,
    max_connections: usize,
    sink: TcpEventSink,
) -> io::Result<()> {
    config.validate().map_err(invalid)?;
    let mut tasks = JoinSet::new();
    loop {
        // Reap finished connections so the set stays as large as the live ones.
        while tasks.try_join_next().is_some() {}
        while tasks.len() >= max_connections.max(1) {
            let _ = tasks.join_next().await;
        }
        let (stream, peer) = match listener.accept().await {
            Ok(a) => a,
            Err(e) if is_per_connection(&e) => continue,
            Err(e) if is_resource_limit(&e) => {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
            Err(e) => return Err(e),
        };
        let session = Session::new(config.clone(), router.clone()).map_err(invalid)?;
        let Ok(mut driver) = TcpDriver::new(stream, session, start) else {
            continue;
        };
        let sink = sink.clone();
        tasks.spawn(async move {
            loop {
                let e = driver.next_event().await;
                sink(peer, &e);
                if e == TcpEvent::Ended {
                    break;
                }
            }
        });
    }
}

/// Accept errors caused by one connection (it died before we took it).
fn is_per_connection(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
    )
}

/// Accept errors of a full process or system (EMFILE, ENFILE, ENOBUFS, ENOMEM).
fn is_resource_limit(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(23 | 24 | 105 | 12))
}

#[cfg(test)]
mod tests {
    use super::*;
    use coaplab_endpoint::Request;
    use coaplab_wire::frame::{Decoded, Frame};
    use coaplab_wire::Code;

    fn client_config() -> SessionConfig {
        SessionConfig {
            keep_bodies: true,
            ..SessionConfig::client()
        }
    }

    async fn server() -> (SocketAddr, tokio::task::JoinHandle<io::Result<()>>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(serve_tcp(
            listener,
            SessionConfig::server(),
            Router::new(),
            tokio::time::Instant::now(),
            16,
            Arc::new(|_, _| {}),
        ));
        (addr, task)
    }

    async fn completed(d: &mut TcpDriver) -> (Code, Vec<u8>) {
        loop {
            match d.next_event().await {
                TcpEvent::Session(SessionEvent::RequestCompleted { code, body, .. }) => {
                    return (code, body)
                }
                TcpEvent::Ended => panic!("ended early"),
                _ => {}
            }
        }
    }

    #[tokio::test]
    async fn client_gets_102400_bytes_as_one_message_and_pipelines() {
        let (addr, task) = server().await;
        let mut c = TcpDriver::connect(addr, client_config(), Router::new())
            .await
            .unwrap();
        c.log_writes(true);
        let now = c.now();
        c.session_mut()
            .request(now, &Request::get("data/102400"))
            .unwrap();
        // The CSM and the GET: two writes of 6 and 15 B (1-B token, "data", "102400").
        let mut wrote = Vec::new();
        while wrote.len() < 2 {
            if let TcpEvent::Wrote { bytes, .. } = c.next_event().await {
                wrote.push(bytes);
            }
        }
        assert_eq!(wrote, [6, 15]);
        let (code, body) = completed(&mut c).await;
        assert_eq!(code, Code::CONTENT);
        assert_eq!(
            body,
            (0..102_400).map(|i| (i % 256) as u8).collect::<Vec<_>>()
        );
        // 2-B server CSM + 102,408-B response.
        assert_eq!(c.stats().bytes_in, 2 + 102_408);
        // Two requests in flight on one connection, answered by token.
        let now = c.now();
        let a = c
            .session_mut()
            .request(now, &Request::get("data/3"))
            .unwrap();
        let b = c
            .session_mut()
            .request(now, &Request::get("data/5"))
            .unwrap();
        let mut got = Vec::new();
        while got.len() < 2 {
            if let TcpEvent::Session(SessionEvent::RequestCompleted {
                request, body_len, ..
            }) = c.next_event().await
            {
                got.push((request, body_len));
            }
        }
        assert_eq!(got, [(a, 3), (b, 5)]);
        c.close().await;
        let e = c.next_event().await;
        assert!(
            matches!(
                e,
                TcpEvent::Session(SessionEvent::Closed {
                    by: coaplab_endpoint::tcp::Side::Local,
                    ..
                })
            ),
            "{e:?}"
        );
        assert_eq!(c.next_event().await, TcpEvent::Ended);
        task.abort();
    }

    #[tokio::test]
    async fn a_peer_that_sends_garbage_instead_of_a_csm_is_aborted() {
        let (addr, task) = server().await;
        let mut raw = TcpStream::connect(addr).await.unwrap();
        // A GET with no CSM before it.
        write_all(&raw, &[0x01, 0x01, 0x07]).await.unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 256];
        loop {
            match read(&raw, &mut buf).await.unwrap() {
                0 => break,
                n => got.extend_from_slice(&buf[..n]),
            }
        }
        let _ = shutdown(&mut raw).await;
        task.abort();
        // The server's 2-B CSM, then an Abort (7.05), then FIN.
        assert_eq!(&got[..2], &[0x00, 0xe1]);
        let Ok(Decoded::Frame { frame, consumed }) = Frame::decode_stream(&got[2..], 1152) else {
            panic!("{got:?}");
        };
        assert_eq!(frame.code, Code::ABORT);
        assert_eq!(got.len(), 2 + consumed);
    }

    #[tokio::test]
    async fn the_peer_closing_fails_outstanding_requests() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let accept = tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            // A CSM, then FIN without answering.
            write_all(&s, &[0x00, 0xe1]).await.unwrap();
            let mut b = [0u8; 64];
            let _ = read(&s, &mut b).await;
            shutdown(&mut s).await.unwrap();
        });
        let mut c = TcpDriver::connect(addr, client_config(), Router::new())
            .await
            .unwrap();
        let now = c.now();
        c.session_mut().request(now, &Request::get("x")).unwrap();
        let mut failed = false;
        loop {
            match c.next_event().await {
                TcpEvent::Session(SessionEvent::RequestFailed { .. }) => failed = true,
                TcpEvent::Ended => break,
                _ => {}
            }
        }
        accept.await.unwrap();
        assert!(failed);
    }
}
