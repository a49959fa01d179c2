//! [`TcpDriver`]: one RFC 8323 [`Session`] on one tokio TCP connection (the accept loop,
//! [`crate::serve_tcp`], is in `tcp_server`).
//!
//! The driver only moves bytes and time: every chunk read goes to
//! [`Session::handle_stream_bytes`], the peer's FIN (or a reset) to
//! [`Session::handle_stream_end`], and every message becomes `write_all`s of at most
//! [`WRITE_CHUNK_BYTES`] ([`Session::poll_write_chunk`]: a generated body is produced only as
//! it is written, so a 1-GB response holds 64 KiB here) on a socket with `TCP_NODELAY` set
//! (so the client's CSM and its first request are two segments, docs/experiments.md §5.1).
//! When [`Session::should_close`] turns true the queued writes go out and the write half is
//! shut down (a FIN). A session's only timer is Observe's ([`Session::poll_timeout`], the
//! next change of an observed resource, RFC 8323 §7); with [`TcpDriver::idle_timeout`] and
//! [`TcpDriver::stall_timeout`] the driver keeps the other clocks it needs, and the session
//! says whether it is idle ([`Session::idle_since`]) or owes bytes
//! ([`Session::stalled_since`]). Protocol decisions all stay in the session.
//!
//! Writing comes first: the driver hands the session the time again only once every queued
//! message is written, so an observer that reads slowly holds at most one notification in
//! the session (a newer state replaces it, `coaplab_endpoint::tcp`) and what the kernel's
//! socket buffer takes; one that reads nothing for the idle timeout is disconnected.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use coaplab_base::time::Instant;
use coaplab_endpoint::tcp::{Session, SessionConfig, SessionConfigError, SessionEvent, WriteKind};
use coaplab_endpoint::Router;
use tokio::io::AsyncWrite;
use tokio::net::TcpStream;

use crate::queue_budget::QueueBudget;

/// Bytes read from the socket at most per call.
pub const READ_CHUNK_BYTES: usize = 64 * 1024;

/// Bytes of a message produced and written at most per `write_all`: the most of a body the
/// driver holds at once.
pub const WRITE_CHUNK_BYTES: usize = 64 * 1024;

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
    /// The most bytes held for writing at once: the session's
    /// [`Session::queued_bytes`] plus the chunk being written.
    pub peak_queued_bytes: u64,
}

/// What [`TcpDriver::next_event`] returns.
#[derive(Debug, Clone, PartialEq)]
pub enum TcpEvent {
    /// Something the session emitted.
    Session(SessionEvent),
    /// The connection was idle for [`TcpDriver::idle_timeout`]: Release (7.04) is queued and the
    /// session closed; its `Closed` event and [`TcpEvent::Ended`] follow.
    IdleClosed {
        /// When it became idle ([`Session::idle_since`]).
        idle_since: Instant,
        /// When it was closed.
        at: Instant,
    },
    /// The peer owed bytes for [`TcpDriver::stall_timeout`] ([`Session::stalled_since`]: its
    /// CSM is not whole, or a frame stays incomplete): Abort (7.05) is queued; the session's
    /// `Aborted` event and [`TcpEvent::Ended`] follow.
    TimedOut {
        /// Since when the peer owed bytes.
        stalled_since: Instant,
        /// When the session was aborted.
        at: Instant,
    },
    /// [`crate::serve_tcp`] turned a connection away at once (after a CSM and an Abort whose
    /// diagnostic says why); no other event follows for it.
    Refused {
        /// Why.
        reason: RefuseReason,
    },
    /// [`crate::serve_tcp`] closed this connection to take a new one while at its
    /// connection limit: it was the oldest whose CSM had not arrived, or else the one idle
    /// longest. No other event follows for it.
    Evicted {
        /// Whether its CSM had arrived (false: it never proved to speak CoAP).
        csm_received: bool,
    },
    /// [`crate::serve_tcp`]: the connection's task panicked; the connection is closed and
    /// the others are served on. No other event follows for it.
    Panicked,
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

/// Why [`crate::serve_tcp`] turned a connection away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefuseReason {
    /// As many connections as [`crate::TcpServerLimits::max_connections`] are open.
    TooManyConnections,
    /// As many connections from the peer's address as
    /// [`crate::TcpServerLimits::max_connections_per_source`] are open.
    TooManyFromSource,
}

impl RefuseReason {
    /// The Abort's diagnostic.
    pub fn diagnostic(self) -> &'static str {
        match self {
            RefuseReason::TooManyConnections => "too many connections",
            RefuseReason::TooManyFromSource => "too many connections from your address",
        }
    }
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
    /// Session time when the driver was created (the connection's set-up).
    opened: Instant,
    /// Close the session after this long idle (`None`: never); also the longest a write may
    /// make no progress.
    idle_timeout: Option<std::time::Duration>,
    /// Abort the session when the peer owes bytes this long (`None`: never).
    stall_timeout: Option<std::time::Duration>,
    /// Abort the session when, [`TcpDriver::stall_timeout`] after an incomplete CSM or
    /// message began, the peer has sent fewer than this many bytes per second of it since.
    min_rate: Option<u64>,
    /// Since when (session time) the peer has owed bytes without a break, and
    /// [`TcpStats::bytes_in`] then: the start of the current incomplete CSM or message.
    owing: Option<(Instant, u64)>,
    /// An [`TcpEvent::IdleClosed`] or [`TcpEvent::TimedOut`] to hand out.
    timer_event: Option<TcpEvent>,
    /// The budget shared with other drivers, and what this one holds of it.
    budget: Option<Arc<QueueBudget>>,
    charged: usize,
}

/// Which of the driver's clocks expired.
#[derive(Debug, Clone, Copy)]
enum Timer {
    Idle,
    Stall,
    /// Too slow: [`TcpDriver::min_rate`].
    Slow,
    /// The session's own timer ([`Session::poll_timeout`]: an observed resource changes).
    Session,
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
        let opened = session_time(start);
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
            opened,
            idle_timeout: None,
            stall_timeout: None,
            min_rate: None,
            owing: Some((opened, 0)),
            timer_event: None,
            budget: None,
            charged: 0,
        })
    }

    /// Closes the session the RFC 8323 §5.5 way (Release, then our FIN) once it has been idle
    /// ([`Session::idle_since`]: nothing received and no request in progress) for `timeout`,
    /// reported as [`TcpEvent::IdleClosed`]. A write that makes no progress for `timeout` (a
    /// peer that does not read) fails the connection as a reset would. `None` (the default)
    /// never times out.
    pub fn idle_timeout(&mut self, timeout: Option<std::time::Duration>) {
        self.idle_timeout = timeout;
    }

    /// Aborts the session (7.05, reported as [`TcpEvent::TimedOut`]) once the peer has owed
    /// bytes for `timeout` ([`Session::stalled_since`]: its CSM not whole since the
    /// connection opened, or a frame partly received and no byte since). `None` (the
    /// default) never times out.
    pub fn stall_timeout(&mut self, timeout: Option<std::time::Duration>) {
        self.stall_timeout = timeout;
    }

    /// Aborts the session (7.05 "timeout: too slow", reported as [`TcpEvent::TimedOut`]) when
    /// the peer sends an incomplete CSM or message slower than `bytes_per_s` on average:
    /// after the [`TcpDriver::stall_timeout`] of grace from the first byte owed (the
    /// connection's opening, for the CSM), the bytes received since must keep up with the
    /// rate. A trickle of one byte every few seconds, which the stall timeout alone never
    /// ends, is aborted at about the grace. `None` (the default), or no stall timeout: no
    /// such limit.
    pub fn min_rate(&mut self, bytes_per_s: Option<u64>) {
        self.min_rate = bytes_per_s.filter(|&r| r > 0);
    }

    /// Shares `budget` with other drivers: responses may add to this session's write queue
    /// only what the budget has left ([`Session::set_queue_budget`]).
    pub fn queue_budget(&mut self, budget: Arc<QueueBudget>) {
        self.budget = Some(budget);
        self.charge();
    }

    /// Brings the budget's count of this session's [`Session::queued_bytes`] up to date.
    fn charge(&mut self) {
        let queued = self.session.queued_bytes();
        let peak = (queued + self.send_buf.len()) as u64;
        self.stats.peak_queued_bytes = self.stats.peak_queued_bytes.max(peak);
        if let Some(b) = &self.budget {
            b.set(self.charged, queued);
            self.charged = queued;
        }
    }

    /// Hands the session what the budget leaves it, before input that may queue responses.
    fn grant(&mut self) {
        if let Some(b) = &self.budget {
            let share = b.share(self.charged);
            self.session.set_queue_budget(share);
        }
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
        session_time(self.start)
    }

    /// The session time `since` plus `timeout`, as a tokio instant.
    fn deadline(&self, since: Instant, timeout: std::time::Duration) -> tokio::time::Instant {
        let since = std::time::Duration::from_nanos(u64::try_from(since.as_nanos()).unwrap_or(0));
        self.start + since.saturating_add(timeout)
    }

    /// The earliest of the idle, stall and session deadlines, and which: `None` without
    /// timeouts or while the session is neither idle nor owed bytes nor observed.
    fn next_deadline(&self) -> Option<(tokio::time::Instant, Timer)> {
        let session = self
            .session
            .poll_timeout()
            .map(|t| (self.deadline(t, std::time::Duration::ZERO), Timer::Session));
        let idle = self
            .idle_timeout
            .zip(self.session.idle_since(self.opened))
            .map(|(t, since)| (self.deadline(since, t), Timer::Idle));
        let stall = self
            .stall_timeout
            .zip(self.session.stalled_since(self.opened))
            .map(|(t, since)| (self.deadline(since, t), Timer::Stall));
        let slow = self.min_rate.zip(self.stall_timeout).zip(self.owing).map(
            |((rate, grace), (since, base))| {
                let received = self.stats.bytes_in - base;
                let allowed = std::time::Duration::from_nanos(
                    u64::try_from(u128::from(received) * 1_000_000_000 / u128::from(rate))
                        .unwrap_or(u64::MAX),
                );
                (
                    self.deadline(since, grace.saturating_add(allowed)),
                    Timer::Slow,
                )
            },
        );
        [idle, stall, slow, session]
            .into_iter()
            .flatten()
            .min_by_key(|(at, _)| *at)
    }

    /// After input: the peer owes bytes from now if it did not already (its message is
    /// incomplete), or no more.
    fn track_owing(&mut self, before: u64) {
        let owes = self.session.stalled_since(self.opened).is_some();
        self.owing = match (owes, self.owing) {
            (false, _) => None,
            (true, Some(o)) => Some(o),
            (true, None) => Some((self.now(), before)),
        };
    }

    /// A deadline passed: the idle timeout releases and closes, the stall timeout aborts.
    fn expire(&mut self, timer: Timer) {
        let now = self.now();
        match timer {
            Timer::Session => {
                // Notifications share the queue budget as responses do.
                self.grant();
                self.session.handle_timeout(now);
                self.charge();
            }
            Timer::Idle => {
                if let Some(idle_since) = self.session.idle_since(self.opened) {
                    self.session.release(now, None);
                    self.session.close(now);
                    self.timer_event = Some(TcpEvent::IdleClosed {
                        idle_since,
                        at: now,
                    });
                }
            }
            Timer::Stall => {
                if let Some(stalled_since) = self.session.stalled_since(self.opened) {
                    self.session
                        .abort_with(now, "timeout: CSM or message incomplete");
                    self.timer_event = Some(TcpEvent::TimedOut {
                        stalled_since,
                        at: now,
                    });
                }
            }
            Timer::Slow => {
                if let (Some(_), Some((since, _))) =
                    (self.session.stalled_since(self.opened), self.owing)
                {
                    self.session
                        .abort_with(now, "timeout: too slow, CSM or message incomplete");
                    self.timer_event = Some(TcpEvent::TimedOut {
                        stalled_since: since,
                        at: now,
                    });
                }
                self.owing = None;
            }
        }
    }

    /// Writes every queued message, in `write_all`s of at most [`WRITE_CHUNK_BYTES`]. A write
    /// error, or no progress for the idle timeout, ends the session as the peer's close would.
    pub async fn flush(&mut self) {
        loop {
            if self.shut_down || self.broken {
                // Nowhere to write: what is queued is dropped unproduced.
                self.session.discard_writes();
                break;
            }
            let Some(chunk) = self
                .session
                .poll_write_chunk(&mut self.send_buf, WRITE_CHUNK_BYTES)
            else {
                break;
            };
            self.charge();
            let written = match self.idle_timeout {
                None => write_all(&self.stream, &self.send_buf).await,
                Some(t) => write_all_within(&self.stream, &self.send_buf, t).await,
            };
            match written {
                Ok(()) => {
                    self.stats.bytes_out += self.send_buf.len() as u64;
                    if chunk.last {
                        self.stats.writes += 1;
                        if self.log_writes {
                            let at = self.now();
                            self.wrote.push((chunk.kind, chunk.message_bytes, at));
                        }
                    }
                }
                Err(_) => self.fail(),
            }
        }
        self.send_buf.clear();
        if self.send_buf.capacity() > WRITE_CHUNK_BYTES {
            self.send_buf = Vec::new();
        }
        self.charge();
    }

    /// Ends the session with a plain FIN (no Release, docs/experiments.md §5.1): outstanding
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
    /// and the peer sends nothing (with [`TcpDriver::idle_timeout`], until it expires).
    ///
    /// Cancel safety: bytes read are always handed to the session before the call can be
    /// cancelled; when cancelled while writing, part of a message may be on the wire, so the
    /// connection must then be dropped.
    pub async fn next_event(&mut self) -> TcpEvent {
        loop {
            self.flush().await;
            if let Some(e) = self.timer_event.take() {
                return e;
            }
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
            let got = match self.next_deadline() {
                None => Ok(read(&self.stream, &mut self.recv_buf).await),
                Some((deadline, timer)) => tokio::select! {
                    r = read(&self.stream, &mut self.recv_buf) => Ok(r),
                    () = tokio::time::sleep_until(deadline) => Err(timer),
                },
            };
            let got = match got {
                Ok(got) => got,
                Err(timer) => {
                    self.expire(timer);
                    continue;
                }
            };
            match got {
                Ok(0) => {
                    self.peer_done = true;
                    let now = self.now();
                    self.session.handle_stream_end(now);
                }
                Ok(n) => {
                    self.stats.reads += 1;
                    self.stats.bytes_in += n as u64;
                    let now = self.now();
                    self.grant();
                    self.session.handle_stream_bytes(now, &self.recv_buf[..n]);
                    self.charge();
                    self.track_owing(self.stats.bytes_in - n as u64);
                }
                Err(_) => self.fail(),
            }
        }
    }
}

/// Wall-clock time since `start` as session time.
pub(crate) fn session_time(start: tokio::time::Instant) -> Instant {
    let ns = i64::try_from(start.elapsed().as_nanos()).unwrap_or(i64::MAX);
    Instant::ZERO + coaplab_base::time::Duration::from_nanos(ns)
}

impl Drop for TcpDriver {
    fn drop(&mut self) {
        if let Some(b) = &self.budget {
            b.set(self.charged, 0);
        }
    }
}

/// Writes all of `buf`, failing with `TimedOut` when no byte can be written for `timeout`.
async fn write_all_within(
    stream: &TcpStream,
    buf: &[u8],
    timeout: std::time::Duration,
) -> io::Result<()> {
    let mut off = 0;
    while off < buf.len() {
        tokio::time::timeout(timeout, stream.writable())
            .await
            .map_err(|_| io::Error::from(io::ErrorKind::TimedOut))??;
        match stream.try_write(&buf[off..]) {
            Ok(n) => off += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Writes all of `buf` (tokio's `io-util` extension traits are not needed for this).
pub(crate) async fn write_all(stream: &TcpStream, buf: &[u8]) -> io::Result<()> {
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
pub(crate) async fn read(stream: &TcpStream, buf: &mut [u8]) -> io::Result<usize> {
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

pub(crate) fn invalid(e: SessionConfigError) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp_server::{serve_tcp, TcpEventSink, TcpServerLimits};
    use coaplab_endpoint::Request;
    use coaplab_wire::frame::{Decoded, Frame};
    use coaplab_wire::Code;
    use tokio::net::TcpListener;

    fn client_config() -> SessionConfig {
        SessionConfig {
            keep_bodies: true,
            ..SessionConfig::client()
        }
    }

    /// A server on a loopback port (16 connections at most, an empty router).
    async fn serve(
        idle_timeout: Option<std::time::Duration>,
        sink: TcpEventSink,
    ) -> (SocketAddr, tokio::task::JoinHandle<io::Result<()>>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(serve_tcp(
            listener,
            SessionConfig::server(),
            Router::new(),
            tokio::time::Instant::now(),
            TcpServerLimits {
                max_connections: 16,
                idle_timeout,
                ..TcpServerLimits::default()
            },
            sink,
        ));
        (addr, task)
    }

    async fn server() -> (SocketAddr, tokio::task::JoinHandle<io::Result<()>>) {
        serve(None, Arc::new(|_, _| {})).await
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

    /// A server with a 200-ms idle timeout; the sink collects every idle close.
    async fn idle_server() -> (
        SocketAddr,
        tokio::task::JoinHandle<io::Result<()>>,
        Arc<std::sync::Mutex<Vec<TcpEvent>>>,
    ) {
        let idle = Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = idle.clone();
        let (addr, task) = serve(
            Some(std::time::Duration::from_millis(200)),
            Arc::new(move |_, e| {
                if matches!(e, TcpEvent::IdleClosed { .. }) {
                    seen.lock().unwrap().push(e.clone());
                }
            }),
        )
        .await;
        (addr, task, idle)
    }

    /// Reads until the peer's FIN.
    async fn read_to_end(raw: &TcpStream) -> Vec<u8> {
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match read(raw, &mut buf).await.unwrap() {
                0 => return got,
                n => got.extend_from_slice(&buf[..n]),
            }
        }
    }

    /// The server's CSM, then Release (7.04, no options).
    const CSM_RELEASE: [u8; 4] = [0x00, 0xe1, 0x00, 0xe4];

    #[tokio::test]
    async fn a_silent_client_is_released_and_closed_after_the_idle_timeout() {
        let (addr, task, idle) = idle_server().await;
        let raw = TcpStream::connect(addr).await.unwrap();
        write_all(&raw, &[0x00, 0xe1]).await.unwrap();
        let t0 = tokio::time::Instant::now();
        let got = read_to_end(&raw).await;
        let waited = t0.elapsed();
        assert_eq!(got, CSM_RELEASE);
        assert!(
            waited >= std::time::Duration::from_millis(190),
            "{waited:?}"
        );
        assert!(waited < std::time::Duration::from_secs(5), "{waited:?}");
        // A client that never sends anything is closed the same way.
        let raw = TcpStream::connect(addr).await.unwrap();
        assert_eq!(read_to_end(&raw).await, CSM_RELEASE);
        task.abort();
        let idle = idle.lock().unwrap();
        assert_eq!(idle.len(), 2);
        let TcpEvent::IdleClosed { idle_since, at } = idle[0] else {
            panic!("{idle:?}");
        };
        assert!(at.saturating_since(idle_since) >= coaplab_base::time::Duration::from_millis(200));
    }

    #[tokio::test]
    async fn a_client_with_a_request_in_progress_is_not_timed_out() {
        let (addr, task, idle) = idle_server().await;
        let raw = TcpStream::connect(addr).await.unwrap();
        // A CSM (Max-Message-Size 131,072) and the first 3 B of GET /data/3 (token 0x07).
        let get = [0x71, 0x01, 0x07, 0xb4, b'd', b'a', b't', b'a', 0x01, b'3'];
        write_all(&raw, &[0x40, 0xe1, 0x23, 0x02, 0x00, 0x00])
            .await
            .unwrap();
        write_all(&raw, &get[..3]).await.unwrap();
        let mut buf = [0u8; 64];
        assert_eq!(read(&raw, &mut buf).await.unwrap(), 2); // the server's CSM
                                                            // Three timeouts later the connection is still open and silent.
        let quiet =
            tokio::time::timeout(std::time::Duration::from_millis(600), read(&raw, &mut buf)).await;
        assert!(quiet.is_err(), "{quiet:?}");
        assert!(idle.lock().unwrap().is_empty());
        // The rest of the request is answered; idle again, the session is released and closed.
        write_all(&raw, &get[3..]).await.unwrap();
        let got = read_to_end(&raw).await;
        let Ok(Decoded::Frame { frame, consumed }) = Frame::decode_stream(&got, 1152) else {
            panic!("{got:?}");
        };
        assert_eq!(frame.code, Code::CONTENT);
        assert_eq!(frame.payload, [0, 1, 2]);
        assert_eq!(got[consumed..], [0x00, 0xe4]);
        task.abort();
        assert_eq!(idle.lock().unwrap().len(), 1);
    }
}
