//! [`serve_tcp`]: an accept loop with one [`TcpDriver`] (one RFC 8323 session) per connection,
//! within [`TcpServerLimits`]: connections in all and per source address, the timeouts of an
//! idle or a stalled peer, and the bytes queued for writing over all connections
//! ([`QueueBudget`]). The loop never stops accepting: a connection beyond a limit is turned
//! away at once, and one whose task panics is counted and closed while the others go on.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use coaplab_endpoint::tcp::{Session, SessionConfig};
use coaplab_endpoint::Router;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{AbortHandle, Id, JoinError, JoinSet};

use crate::queue_budget::QueueBudget;
use crate::tcp::{invalid, session_time, RefuseReason, TcpDriver, TcpEvent};

/// Called with every event of every connection of [`serve_tcp`], with the peer's address.
pub type TcpEventSink = Arc<dyn Fn(SocketAddr, &TcpEvent) + Send + Sync>;

/// The default [`TcpServerLimits::max_connections`].
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;

/// The default [`TcpServerLimits::max_connections_per_source`].
pub const DEFAULT_MAX_CONNECTIONS_PER_SOURCE: usize = 16;

/// The default [`TcpServerLimits::stall_timeout`]: 10 s.
pub const DEFAULT_STALL_TIMEOUT: Duration = Duration::from_secs(10);

/// The default [`TcpServerLimits::evict_after`]: 1 s.
pub const DEFAULT_EVICT_AFTER: Duration = Duration::from_secs(1);

/// The default [`TcpServerLimits::min_rate_bytes_per_s`]: 256 B/s.
pub const DEFAULT_MIN_RATE_BYTES_PER_S: u64 = 256;

/// The default [`TcpServerLimits::max_queued_bytes`]: 64 MiB.
pub const DEFAULT_MAX_QUEUED_BYTES_TOTAL: usize = 64 << 20;

/// What [`serve_tcp`] allows; [`Default`] gives the documented defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TcpServerLimits {
    /// Connections served at once; one more is refused at once (CSM, then Abort "too many
    /// connections", then close). Default [`DEFAULT_MAX_CONNECTIONS`].
    pub max_connections: usize,
    /// Connections from one IP address at once; one more is refused the same way ("too many
    /// connections from your address"). Default [`DEFAULT_MAX_CONNECTIONS_PER_SOURCE`].
    pub max_connections_per_source: usize,
    /// [`TcpDriver::idle_timeout`] (also the longest a write may make no progress). Default
    /// `None`.
    pub idle_timeout: Option<Duration>,
    /// [`TcpDriver::stall_timeout`]: a connection whose CSM is not whole this long after it
    /// opened, or whose partly received frame gets no byte for this long, is aborted. Default
    /// [`DEFAULT_STALL_TIMEOUT`].
    pub stall_timeout: Option<Duration>,
    /// [`TcpDriver::min_rate`]: after `stall_timeout` of grace, an incomplete CSM or message
    /// must arrive at this many bytes per second on average, or the session is aborted (a
    /// 1-byte-every-8-s trickle held its slot for ever: each byte restarted the stall
    /// timeout). Default [`DEFAULT_MIN_RATE_BYTES_PER_S`]; `None` or 0: no minimum.
    pub min_rate_bytes_per_s: Option<u64>,
    /// At a connection limit, a connection may be evicted for a new one once it has gone
    /// this long without its CSM (since it opened), or has been idle this long: a client
    /// gets this long to speak, or to send its next request, before a newcomer can take its
    /// place. Default [`DEFAULT_EVICT_AFTER`].
    pub evict_after: Duration,
    /// Bytes all sessions may hold in their write queues together
    /// ([`coaplab_endpoint::tcp::Session::queued_bytes`]); a response beyond it gets 5.03.
    /// Default [`DEFAULT_MAX_QUEUED_BYTES_TOTAL`].
    pub max_queued_bytes: usize,
}

impl Default for TcpServerLimits {
    fn default() -> Self {
        TcpServerLimits {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_connections_per_source: DEFAULT_MAX_CONNECTIONS_PER_SOURCE,
            idle_timeout: None,
            stall_timeout: Some(DEFAULT_STALL_TIMEOUT),
            min_rate_bytes_per_s: Some(DEFAULT_MIN_RATE_BYTES_PER_S),
            evict_after: DEFAULT_EVICT_AFTER,
            max_queued_bytes: DEFAULT_MAX_QUEUED_BYTES_TOTAL,
        }
    }
}

/// Accepts connections on `listener` until the returned future is dropped, each on its own
/// task with its own [`Session`] (`config`, a clone of `router`) and `TCP_NODELAY`; the
/// session's CSM goes out at once (RFC 8323 §5.3). Every connection's session time counts from
/// `start`. `sink` sees every event, [`TcpEvent::Ended`] last (or [`TcpEvent::Refused`] /
/// [`TcpEvent::Panicked`] alone). Dropping the future (e.g. on SIGTERM) aborts every
/// connection task.
///
/// Within `limits`: at [`TcpServerLimits::max_connections`] in all (or
/// [`TcpServerLimits::max_connections_per_source`] from the new connection's address), a
/// connection is evicted to make room ([`TcpEvent::Evicted`], its socket closed): the oldest
/// whose CSM has not arrived, else the one idle longest ([`Session::idle_since`]: nothing
/// received and no request in progress), among all connections (among that address's). Only
/// when every one is busy is the new connection refused at once; the loop goes on accepting.
/// So silent or stalled connects from many addresses cannot keep others out (issue 32 #4). Memory is thus bounded by
/// `max_connections` × ([`crate::tcp::READ_CHUNK_BYTES`] + [`crate::tcp::WRITE_CHUNK_BYTES`] +
/// the session's receive limit and Block1 uploads) plus
/// [`TcpServerLimits::max_queued_bytes`] of queued writes.
///
/// Returns only on an accept error that is not about one connection (e.g. no file descriptors
/// left is retried after a pause).
pub async fn serve_tcp(
    listener: TcpListener,
    config: SessionConfig,
    router: Router,
    start: tokio::time::Instant,
    limits: TcpServerLimits,
    sink: TcpEventSink,
) -> io::Result<()> {
    config.validate().map_err(invalid)?;
    let budget = Arc::new(QueueBudget::new(limits.max_queued_bytes));
    let mut tasks = JoinSet::new();
    let mut live = Live::default();
    loop {
        let accepted = tokio::select! {
            Some(done) = tasks.join_next_with_id(), if !tasks.is_empty() => {
                live.reap(done, &sink);
                continue;
            }
            a = listener.accept() => a,
        };
        let (stream, peer) = match accepted {
            Ok(a) => a,
            Err(e) if is_per_connection(&e) => continue,
            Err(e) if is_resource_limit(&e) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
            Err(e) => return Err(e),
        };
        // Forget connections that ended meanwhile, so the counts below are current.
        while let Some(done) = tasks.try_join_next_with_id() {
            live.reap(done, &sink);
        }
        let mut refusal = None;
        let now = session_time(start);
        let cutoff = now
            .saturating_since(coaplab_base::time::Instant::ZERO)
            .as_nanos()
            - i64::try_from(limits.evict_after.as_nanos()).unwrap_or(i64::MAX);
        if live.from(peer.ip()) >= limits.max_connections_per_source.max(1)
            && !live.evict(Some(peer.ip()), cutoff, &sink)
        {
            refusal = Some(RefuseReason::TooManyFromSource);
        }
        if refusal.is_none()
            && live.peers.len() >= limits.max_connections.max(1)
            && !live.evict(None, cutoff, &sink)
        {
            refusal = Some(RefuseReason::TooManyConnections);
        }
        if let Some(reason) = refusal {
            refuse(&stream, &config, start, reason);
            sink(peer, &TcpEvent::Refused { reason });
            continue;
        }
        let session = Session::new(config.clone(), router.clone()).map_err(invalid)?;
        let Ok(mut driver) = TcpDriver::new(stream, session, start) else {
            continue;
        };
        driver.idle_timeout(limits.idle_timeout);
        driver.stall_timeout(limits.stall_timeout);
        driver.min_rate(limits.min_rate_bytes_per_s);
        driver.queue_budget(budget.clone());
        let task_sink = sink.clone();
        let info = Arc::new(ConnInfo::new(driver.now()));
        let task_info = info.clone();
        let handle = tasks.spawn(async move {
            loop {
                let e = driver.next_event().await;
                task_info.update(driver.session());
                task_sink(peer, &e);
                if e == TcpEvent::Ended {
                    break;
                }
            }
        });
        live.add(handle, peer, info);
    }
}

/// What the accept loop knows of a connection's state, kept up to date by its task after
/// every event: whether the peer's CSM arrived, and since when (session time, ns) the
/// session has been idle (-1: not idle).
#[derive(Debug)]
struct ConnInfo {
    opened_ns: i64,
    csm_received: AtomicBool,
    idle_since_ns: AtomicI64,
}

impl ConnInfo {
    fn new(opened: coaplab_base::time::Instant) -> ConnInfo {
        let opened_ns = opened
            .saturating_since(coaplab_base::time::Instant::ZERO)
            .as_nanos();
        ConnInfo {
            opened_ns,
            csm_received: AtomicBool::new(false),
            // Nothing owed yet but a CSM: not idle.
            idle_since_ns: AtomicI64::new(-1),
        }
    }

    fn update(&self, session: &Session) {
        self.csm_received
            .store(session.csm_received(), Ordering::Relaxed);
        let opened = coaplab_base::time::Instant::ZERO
            + coaplab_base::time::Duration::from_nanos(self.opened_ns);
        let idle = session.idle_since(opened).map_or(-1, |t| {
            t.saturating_since(coaplab_base::time::Instant::ZERO)
                .as_nanos()
        });
        self.idle_since_ns.store(idle, Ordering::Relaxed);
    }
}

/// One connection being served.
#[derive(Debug)]
struct Conn {
    peer: SocketAddr,
    handle: AbortHandle,
    info: Arc<ConnInfo>,
}

/// The connections being served: each task's peer and state, and how many per source
/// address.
#[derive(Debug, Default)]
struct Live {
    peers: HashMap<Id, Conn>,
    per_source: HashMap<IpAddr, usize>,
}

impl Live {
    fn add(&mut self, handle: AbortHandle, peer: SocketAddr, info: Arc<ConnInfo>) {
        self.peers.insert(handle.id(), Conn { peer, handle, info });
        *self.per_source.entry(peer.ip()).or_default() += 1;
    }

    fn from(&self, ip: IpAddr) -> usize {
        self.per_source.get(&ip).copied().unwrap_or(0)
    }

    /// Forgets connection `id`; its peer.
    fn remove(&mut self, id: Id) -> Option<Conn> {
        let conn = self.peers.remove(&id)?;
        let ip = conn.peer.ip();
        if let Some(n) = self.per_source.get_mut(&ip) {
            *n -= 1;
            if *n == 0 {
                self.per_source.remove(&ip);
            }
        }
        Some(conn)
    }

    /// Closes one connection (from `source` only, when given) to make room: the oldest
    /// whose CSM has not arrived, else the one idle longest, either since `cutoff_ns` at the
    /// latest (session time); false when there is none such.
    fn evict(&mut self, source: Option<IpAddr>, cutoff_ns: i64, sink: &TcpEventSink) -> bool {
        let candidates = || {
            self.peers
                .iter()
                .filter(move |(_, c)| source.map_or(true, |ip| c.peer.ip() == ip))
        };
        let unverified = candidates()
            .filter(|(_, c)| !c.info.csm_received.load(Ordering::Relaxed))
            .filter(|(_, c)| c.info.opened_ns <= cutoff_ns)
            .min_by_key(|(_, c)| c.info.opened_ns)
            .map(|(id, _)| *id);
        let victim = unverified.or_else(|| {
            candidates()
                .map(|(id, c)| (*id, c.info.idle_since_ns.load(Ordering::Relaxed)))
                .filter(|&(_, idle)| (0..=cutoff_ns).contains(&idle))
                .min_by_key(|&(_, idle)| idle)
                .map(|(id, _)| id)
        });
        let Some(conn) = victim.and_then(|id| self.remove(id)) else {
            return false;
        };
        conn.handle.abort();
        let csm_received = conn.info.csm_received.load(Ordering::Relaxed);
        sink(conn.peer, &TcpEvent::Evicted { csm_received });
        true
    }

    /// A task ended: forget it, and report it to `sink` when it panicked.
    fn reap(&mut self, done: Result<(Id, ()), JoinError>, sink: &TcpEventSink) {
        let (id, panicked) = match done {
            Ok((id, ())) => (id, false),
            Err(e) => (e.id(), e.is_panic()),
        };
        let Some(conn) = self.remove(id) else {
            return;
        };
        if panicked {
            sink(conn.peer, &TcpEvent::Panicked);
        }
    }
}

/// Turns a connection away: our CSM and an Abort saying `reason`, written only if the socket
/// takes them at once (the loop never waits on one connection), then close.
fn refuse(
    stream: &TcpStream,
    config: &SessionConfig,
    start: tokio::time::Instant,
    reason: RefuseReason,
) {
    let Ok(mut session) = Session::new(config.clone(), Router::new()) else {
        return;
    };
    session.abort_with(session_time(start), reason.diagnostic());
    let mut bytes = Vec::new();
    while let Some(w) = session.poll_write() {
        bytes.extend_from_slice(&w.bytes);
    }
    let _ = stream.try_write(&bytes);
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
