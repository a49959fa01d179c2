//! [`serve_tcp`]: an accept loop with one [`TcpDriver`] (one RFC 8323 session) per connection,
//! within [`TcpServerLimits`]: connections in all and per source address, the timeouts of an
//! idle or a stalled peer, and the bytes queued for writing over all connections
//! ([`QueueBudget`]). The loop never stops accepting: a connection beyond a limit is turned
//! away at once, and one whose task panics is counted and closed while the others go on.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use coaplab_endpoint::tcp::{Session, SessionConfig};
use coaplab_endpoint::Router;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{Id, JoinError, JoinSet};

use crate::tcp::{invalid, session_time, RefuseReason, TcpDriver, TcpEvent};

/// Called with every event of every connection of [`serve_tcp`], with the peer's address.
pub type TcpEventSink = Arc<dyn Fn(SocketAddr, &TcpEvent) + Send + Sync>;

/// The default [`TcpServerLimits::max_connections`].
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;

/// The default [`TcpServerLimits::max_connections_per_source`].
pub const DEFAULT_MAX_CONNECTIONS_PER_SOURCE: usize = 16;

/// The default [`TcpServerLimits::stall_timeout`]: 10 s.
pub const DEFAULT_STALL_TIMEOUT: Duration = Duration::from_secs(10);

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
            max_queued_bytes: DEFAULT_MAX_QUEUED_BYTES_TOTAL,
        }
    }
}

/// Bytes of write queues shared by many [`TcpDriver`]s ([`TcpDriver::queue_budget`]): each
/// session may add to its queue only what the others leave of `limit_bytes`.
#[derive(Debug)]
pub struct QueueBudget {
    limit_bytes: usize,
    used_bytes: AtomicUsize,
}

impl QueueBudget {
    /// A budget of `limit_bytes`, none used.
    pub fn new(limit_bytes: usize) -> QueueBudget {
        QueueBudget {
            limit_bytes,
            used_bytes: AtomicUsize::new(0),
        }
    }

    /// Bytes held now over all drivers.
    pub fn used_bytes(&self) -> usize {
        self.used_bytes.load(Ordering::Relaxed)
    }

    /// One holder's use goes from `old` to `new` bytes.
    pub(crate) fn set(&self, old: usize, new: usize) {
        if new > old {
            self.used_bytes.fetch_add(new - old, Ordering::Relaxed);
        } else {
            self.used_bytes.fetch_sub(old - new, Ordering::Relaxed);
        }
    }

    /// What a holder of `mine` bytes may hold in all: the limit less the others' use.
    pub(crate) fn share(&self, mine: usize) -> usize {
        let others = self.used_bytes().saturating_sub(mine);
        self.limit_bytes.saturating_sub(others)
    }
}

/// Accepts connections on `listener` until the returned future is dropped, each on its own
/// task with its own [`Session`] (`config`, a clone of `router`) and `TCP_NODELAY`; the
/// session's CSM goes out at once (RFC 8323 §5.3). Every connection's session time counts from
/// `start`. `sink` sees every event, [`TcpEvent::Ended`] last (or [`TcpEvent::Refused`] /
/// [`TcpEvent::Panicked`] alone). Dropping the future (e.g. on SIGTERM) aborts every
/// connection task.
///
/// Within `limits`: beyond [`TcpServerLimits::max_connections`] in all or
/// [`TcpServerLimits::max_connections_per_source`] from one address, a new connection is
/// refused at once and the loop goes on accepting. Memory is thus bounded by
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
        let refusal = if tasks.len() >= limits.max_connections.max(1) {
            Some(RefuseReason::TooManyConnections)
        } else if live.from(peer.ip()) >= limits.max_connections_per_source.max(1) {
            Some(RefuseReason::TooManyFromSource)
        } else {
            None
        };
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
        driver.queue_budget(budget.clone());
        let task_sink = sink.clone();
        let handle = tasks.spawn(async move {
            loop {
                let e = driver.next_event().await;
                task_sink(peer, &e);
                if e == TcpEvent::Ended {
                    break;
                }
            }
        });
        live.add(handle.id(), peer);
    }
}

/// The connections being served: each task's peer, and how many per source address.
#[derive(Debug, Default)]
struct Live {
    peers: HashMap<Id, SocketAddr>,
    per_source: HashMap<IpAddr, usize>,
}

impl Live {
    fn add(&mut self, id: Id, peer: SocketAddr) {
        self.peers.insert(id, peer);
        *self.per_source.entry(peer.ip()).or_default() += 1;
    }

    fn from(&self, ip: IpAddr) -> usize {
        self.per_source.get(&ip).copied().unwrap_or(0)
    }

    /// A task ended: forget it, and report it to `sink` when it panicked.
    fn reap(&mut self, done: Result<(Id, ()), JoinError>, sink: &TcpEventSink) {
        let (id, panicked) = match done {
            Ok((id, ())) => (id, false),
            Err(e) => (e.id(), e.is_panic()),
        };
        let Some(peer) = self.peers.remove(&id) else {
            return;
        };
        if let Some(n) = self.per_source.get_mut(&peer.ip()) {
            *n -= 1;
            if *n == 0 {
                self.per_source.remove(&peer.ip());
            }
        }
        if panicked {
            sink(peer, &TcpEvent::Panicked);
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
