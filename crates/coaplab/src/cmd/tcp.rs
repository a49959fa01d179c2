//! CoAP over TCP (RFC 8323, `coap+tcp://`) for the real-socket subcommands: one request
//! (`get|put|post|delete`), the server's TCP listener and the load generator's clients, all
//! on `coaplab_emu::TcpDriver` and the sans-IO `coaplab_endpoint::tcp::Session`.
//!
//! The congestion-control options (`--cc`, `--set`, `--nstart`, `--block-size`) have no effect
//! here: the kernel's TCP retransmits and controls congestion, and a session never splits a
//! body.

use std::io::Write;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use coaplab_emu::tcp_server::{
    DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_SOURCE, DEFAULT_MAX_QUEUED_BYTES_TOTAL,
    DEFAULT_MIN_RATE_BYTES_PER_S,
};
use coaplab_emu::{serve_tcp, RefuseReason, TcpDriver, TcpEvent, TcpEventSink, TcpServerLimits};
use coaplab_endpoint::tcp::{
    RequestError, Role, SessionConfig, SessionEvent, SessionFailReason, Side, WriteKind,
};
use coaplab_endpoint::{ObserverGone, Request, Router};
use tokio::net::TcpListener;

use super::net;

/// Max-Message-Size in the client's CSM: the largest frame it accepts (8 MiB; RFC 8323's
/// default is 1,152 B), or [`client_max_message_size`] when `--max-body-bytes` is smaller.
pub(crate) const MAX_MESSAGE_SIZE: u32 = 8 * 1024 * 1024;

/// A frame's bytes beyond its payload that the client's Max-Message-Size allows for: the
/// header (at most 6 B), the token (8 B) and the options (Block2, Size2, Content-Format, ETag
/// and the like), with room to spare.
pub(crate) const FRAME_HEADROOM_BYTES: u32 = 1024;

/// The Max-Message-Size a client advertises for a `max_body_bytes` limit: no frame larger
/// than the body limit and its header room is worth buffering, and never more than
/// [`MAX_MESSAGE_SIZE`].
pub(crate) fn client_max_message_size(max_body_bytes: usize) -> u32 {
    u32::try_from(max_body_bytes)
        .unwrap_or(u32::MAX)
        .saturating_add(FRAME_HEADROOM_BYTES)
        .min(MAX_MESSAGE_SIZE)
}

/// Max-Message-Size in the server's CSM: a 1-MiB body (the upload limit,
/// `coaplab_endpoint::MAX_UPLOAD_BYTES`) with its header fits.
pub(crate) const SERVER_MAX_MESSAGE_SIZE: u32 = 1024 * 1024 + 1024;

/// `coaplab server`'s TCP limits (defaults: `coaplab_emu::TcpServerLimits::default()` and
/// `coaplab_endpoint::tcp::DEFAULT_MAX_QUEUED_BYTES`).
#[derive(clap::Args, Debug)]
pub(crate) struct LimitOpts {
    /// TCP connections served at once. At the limit a new connection takes the place of the
    /// oldest one whose CSM has not arrived, else of the one idle longest (closed, counted
    /// evicted=); only when all are busy does it get a CSM and an Abort (7.05) "too many
    /// connections" and is closed, while the others are served on. With the 1-MiB message
    /// limit, at most about 256 MiB of partly received messages at the default.
    #[arg(long = "tcp-max-connections", value_name = "N", default_value_t = DEFAULT_MAX_CONNECTIONS)]
    max_connections: usize,
    /// TCP connections from one IP address at once; one more takes the place of that
    /// address's oldest connection without a CSM or idle longest, else gets an Abort "too
    /// many connections from your address" and is closed.
    #[arg(long = "tcp-max-per-source", value_name = "N", default_value_t = DEFAULT_MAX_CONNECTIONS_PER_SOURCE)]
    max_per_source: usize,
    /// Abort (7.05 "timeout") a TCP connection whose CSM is not complete this long after it
    /// opened, or whose partly received message gets no byte for this long (unlike
    /// --tcp-idle-timeout, which waits for a quiet connection). 0: never. E.g. 10s, 500ms.
    #[arg(long = "tcp-stall-timeout", value_name = "D", default_value = "10s", value_parser = net::parse_duration)]
    stall_timeout: Duration,
    /// After --tcp-stall-timeout of grace, an incomplete CSM or message must arrive at this
    /// many bytes per second on average (counted from its first byte owed), or the
    /// connection is aborted (7.05 "timeout: too slow"): a trickle of one byte every few
    /// seconds no longer holds a slot. 0: no minimum.
    #[arg(long = "tcp-min-rate", value_name = "BYTES_PER_S", default_value_t = DEFAULT_MIN_RATE_BYTES_PER_S)]
    min_rate: u64,
    /// At --tcp-max-connections (or --tcp-max-per-source), a new connection takes the place
    /// of one that has gone this long without its CSM or has been idle this long (the oldest
    /// such, else the one idle longest); younger ones are never evicted. E.g. 1s, 500ms.
    #[arg(long = "tcp-evict-after", value_name = "D", default_value = "1s", value_parser = net::parse_duration)]
    evict_after: Duration,
    /// Bytes one TCP connection may hold queued for writing (echoed payloads, signals); a
    /// response beyond it gets an empty 5.03. Generated bodies (/data/N) are produced while
    /// written, 64 KiB at a time, and do not count.
    #[arg(long = "tcp-queue-bytes", value_name = "BYTES", default_value_t = coaplab_endpoint::tcp::DEFAULT_MAX_QUEUED_BYTES)]
    queue_bytes: usize,
    /// Bytes all TCP connections together may hold queued for writing; a response beyond it
    /// gets an empty 5.03.
    #[arg(long = "tcp-queue-total-bytes", value_name = "BYTES", default_value_t = DEFAULT_MAX_QUEUED_BYTES_TOTAL)]
    queue_total_bytes: usize,
}

impl LimitOpts {
    /// The accept loop's limits, with `idle_timeout` (from --tcp-idle-timeout).
    pub(crate) fn limits(&self, idle_timeout: Option<Duration>) -> TcpServerLimits {
        TcpServerLimits {
            max_connections: self.max_connections,
            max_connections_per_source: self.max_per_source,
            idle_timeout,
            stall_timeout: Some(self.stall_timeout).filter(|d| !d.is_zero()),
            min_rate_bytes_per_s: Some(self.min_rate).filter(|&r| r > 0),
            evict_after: self.evict_after,
            max_queued_bytes: self.queue_total_bytes,
        }
    }

    /// The server's session settings ([`config`]) with the per-connection queue limit.
    pub(crate) fn config(&self) -> SessionConfig {
        SessionConfig {
            max_queued_bytes: self.queue_bytes,
            ..config(Role::Acceptor, 0)
        }
    }
}

/// The note printed by `-v` and `--help`.
pub(crate) const CC_NOTE: &str =
    "--cc, --set, --nstart and --block-size have no effect over TCP: the kernel's TCP retransmits";

/// Our session settings: `role`, Max-Message-Size 8 MiB (client) or 1 MiB + 1 KiB (server),
/// Block-Wise-Transfer advertised (see docs/real-sockets.md: aiocoap sends a large body as one
/// message only to a peer that advertises it), 2-B tokens from `seed`, bodies kept (client).
pub(crate) fn config(role: Role, seed: u64) -> SessionConfig {
    let max = match role {
        Role::Initiator => MAX_MESSAGE_SIZE,
        Role::Acceptor => SERVER_MAX_MESSAGE_SIZE,
    };
    SessionConfig {
        role,
        max_message_size: Some(max),
        block_wise_transfer: true,
        token_len: 2,
        first_token: seed & 0xffff,
        keep_bodies: role == Role::Initiator,
        max_body_bytes: coaplab_endpoint::MAX_BODY_BYTES,
        max_queued_bytes: coaplab_endpoint::tcp::DEFAULT_MAX_QUEUED_BYTES,
    }
}

/// [`config`] of a client accepting response bodies of `max_body_bytes` at most, advertising
/// [`client_max_message_size`] of it.
pub(crate) fn client_config(seed: u64, max_body_bytes: usize) -> SessionConfig {
    SessionConfig {
        max_message_size: Some(client_max_message_size(max_body_bytes)),
        max_body_bytes,
        ..config(Role::Initiator, seed)
    }
}

/// What one request over TCP needs.
pub(crate) struct Call {
    pub(crate) addr: SocketAddr,
    pub(crate) request: Request,
    pub(crate) seed: u64,
    pub(crate) timeout: Duration,
    /// `--max-body-bytes`: the response body limit, also bounding our Max-Message-Size.
    pub(crate) max_body_bytes: usize,
    pub(crate) verbose: bool,
}

fn fail(code: u8, msg: impl std::fmt::Display) -> u8 {
    eprintln!("coaplab: {msg}");
    code
}

/// Connects, sends the CSM and the request (after the peer's CSM when the request is larger
/// than RFC 8323's default 1,152 B), prints the response payload and closes with a FIN.
/// Returns the exit code.
pub(crate) async fn request(call: Call) -> u8 {
    if call.verbose {
        eprintln!("coaplab: {CC_NOTE}");
    }
    match tokio::time::timeout(call.timeout, exchange(&call)).await {
        Ok(code) => code,
        Err(_) => fail(
            net::EXIT_TIMEOUT,
            format!("timeout: no response within {:?}", call.timeout),
        ),
    }
}

async fn exchange(call: &Call) -> u8 {
    let cfg = client_config(call.seed, call.max_body_bytes);
    let mut d = match TcpDriver::connect(call.addr, cfg, Router::new()).await {
        Ok(d) => d,
        Err(e) => return fail(net::EXIT_PROTOCOL, format!("connect {}: {e}", call.addr)),
    };
    d.log_writes(call.verbose);
    if call.verbose {
        if let Ok(a) = d.local_addr() {
            eprintln!("{} connected from={a} to={}", d.now(), call.addr);
        }
    }
    let mut id = None;
    loop {
        if id.is_none() {
            let now = d.now();
            match d.session_mut().request(now, &call.request) {
                Ok(r) => id = Some(r),
                // RFC 8323 §5.3.1: 1,152 B until the peer's CSM says more; wait for it.
                Err(RequestError::TooLarge { .. }) if !d.session().csm_received() => {}
                Err(e) => {
                    d.close().await;
                    return fail(net::EXIT_BAD_ARGS, e);
                }
            }
        }
        let event = d.next_event().await;
        if call.verbose {
            trace(&event);
        }
        let TcpEvent::Session(e) = event else {
            if event == TcpEvent::Ended {
                return fail(net::EXIT_PROTOCOL, "connection ended without a response");
            }
            continue;
        };
        match e {
            SessionEvent::RequestCompleted {
                request,
                code,
                body,
                options,
                ..
            } if Some(request) == id => {
                d.close().await;
                if call.verbose {
                    eprintln!("{}", super::coap_options::describe(code, &options));
                }
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(&body).and_then(|()| out.flush());
                if code.class() == 2 {
                    return net::EXIT_OK;
                }
                return fail(net::EXIT_ERROR_RESPONSE, format!("{code:?}"));
            }
            SessionEvent::Aborted {
                by,
                bad_csm_option,
                diagnostic,
                ..
            } => {
                d.close().await;
                let who = if by == Side::Local { "we" } else { "the peer" };
                let opt =
                    bad_csm_option.map_or(String::new(), |o| format!(" (bad CSM option {o})"));
                let hint = if by == Side::Local && diagnostic.contains("Max-Message-Size") {
                    let max = client_max_message_size(call.max_body_bytes);
                    format!(" ({max} B, from --max-body-bytes)")
                } else {
                    String::new()
                };
                return fail(
                    net::EXIT_PROTOCOL,
                    format!("{who} aborted the session{opt}: {diagnostic}{hint}"),
                );
            }
            // The Aborted event that follows says who and why.
            SessionEvent::RequestFailed {
                reason: SessionFailReason::Aborted(_),
                ..
            } => {}
            SessionEvent::RequestFailed {
                reason: SessionFailReason::BodyTooLarge,
                ..
            } => {
                d.close().await;
                return fail(
                    net::EXIT_PROTOCOL,
                    format!(
                        "the response body is larger than --max-body-bytes ({} B)",
                        call.max_body_bytes
                    ),
                );
            }
            SessionEvent::RequestFailed {
                reason: SessionFailReason::UnknownCriticalOption { number },
                ..
            } => {
                d.close().await;
                return fail(
                    net::EXIT_PROTOCOL,
                    format!(
                        "the response carries critical option {number}, which we do not recognise: \
                         rejected (RFC 7252 §5.4.1)"
                    ),
                );
            }
            SessionEvent::RequestFailed { reason, .. } => {
                let what = match reason {
                    SessionFailReason::Closed(Side::Peer) => "the peer closed the connection",
                    _ => "the connection was closed",
                };
                return fail(net::EXIT_PROTOCOL, format!("no response: {what}"));
            }
            SessionEvent::ReleaseReceived { .. } if id.is_none() => {
                d.close().await;
                return fail(net::EXIT_PROTOCOL, "the peer released the session");
            }
            _ => {}
        }
    }
}

/// One `-v` line per message written or received, and per session event.
pub(crate) fn trace(event: &TcpEvent) {
    match event {
        TcpEvent::Wrote { kind, bytes, at } => match kind {
            WriteKind::Signal(code) => eprintln!("{at} send signal={code:?} bytes={bytes}"),
            WriteKind::Request(r) => eprintln!("{at} send request={} bytes={bytes}", r.0),
            WriteKind::Response(code) => eprintln!("{at} send response={code:?} bytes={bytes}"),
        },
        TcpEvent::IdleClosed { idle_since, at } => {
            eprintln!("{at} idle since={idle_since}: release and close")
        }
        TcpEvent::TimedOut { stalled_since, at } => {
            eprintln!("{at} stalled since={stalled_since}: abort")
        }
        TcpEvent::Ended
        | TcpEvent::Refused { .. }
        | TcpEvent::Panicked
        | TcpEvent::Evicted { .. } => {}
        TcpEvent::Session(e) => match e {
            SessionEvent::CsmReceived {
                max_message_size,
                block_wise_transfer,
                at,
            } => eprintln!(
                "{at} recv signal=7.01 CSM max_message_size={max_message_size} \
block_wise_transfer={block_wise_transfer}"
            ),
            SessionEvent::RequestCompleted {
                request,
                code,
                body_len,
                bytes,
                started,
                at,
                ..
            } => eprintln!(
                "{at} recv response={code:?} request={} bytes={bytes} payload={body_len} rtt={}",
                request.0,
                at.saturating_since(*started)
            ),
            SessionEvent::RequestFailed {
                request,
                reason,
                at,
            } => {
                eprintln!("{at} fail request={} reason={reason:?}", request.0)
            }
            SessionEvent::Notification {
                request,
                code,
                sequence,
                bytes,
                at,
                ..
            } => eprintln!(
                "{at} recv notification={code:?} request={} observe={sequence:?} bytes={bytes}",
                request.0
            ),
            SessionEvent::PingAnswered { at, .. } => eprintln!("{at} recv signal=7.02 Ping"),
            SessionEvent::PongReceived { rtt, at, .. } => {
                eprintln!("{at} recv signal=7.03 Pong rtt={rtt}")
            }
            SessionEvent::ReleaseReceived { hold_off_s, at, .. } => {
                eprintln!("{at} recv signal=7.04 Release hold_off_s={hold_off_s:?}")
            }
            SessionEvent::Aborted {
                by,
                bad_csm_option,
                diagnostic,
                at,
            } => eprintln!(
                "{at} abort by={by:?} bad_csm_option={bad_csm_option:?} diagnostic={diagnostic:?}"
            ),
            SessionEvent::Closed { by, at } => eprintln!("{at} closed by={by:?}"),
            SessionEvent::Ignored { reason, at } => eprintln!("{at} ignored reason={reason:?}"),
            SessionEvent::Malformed { error, at } => {
                eprintln!("{at} malformed error={}", error.label())
            }
            _ => {}
        },
    }
}

/// What the TCP listener counted (printed at exit).
#[derive(Debug, Default)]
pub(crate) struct Counters {
    sessions: AtomicU64,
    served: AtomicU64,
    aborted: AtomicU64,
    malformed: AtomicU64,
    ignored: AtomicU64,
    idle_closed: AtomicU64,
    timed_out: AtomicU64,
    refused: AtomicU64,
    refused_source: AtomicU64,
    too_large: AtomicU64,
    queue_full: AtomicU64,
    panics: AtomicU64,
    evicted: AtomicU64,
    observers_added: AtomicU64,
    observers_refused: AtomicU64,
    deregistered: AtomicU64,
    observers_closed: AtomicU64,
    notifications: AtomicU64,
    replaced: AtomicU64,
    dropped: AtomicU64,
}

impl Counters {
    /// `tcp sessions= served= aborted= malformed= ignored= idle_closed= timed_out= refused=
    /// refused_source= too_large= queue_full= panics=` (sessions: connections whose CSM
    /// arrived; idle_closed: released and closed by the idle timeout; timed_out: aborted by
    /// the stall timeout; refused, refused_source: turned away at --tcp-max-connections,
    /// --tcp-max-per-source; too_large: 5.00 for a response beyond the client's
    /// Max-Message-Size; queue_full: 5.03 at --tcp-queue-bytes or --tcp-queue-total-bytes;
    /// panics: connection tasks that panicked, each closed while the others went on;
    /// evicted: closed at a connection limit to take a new one, issue 32 #4).
    pub(crate) fn line(&self) -> String {
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        format!(
            "tcp sessions={} served={} aborted={} malformed={} ignored={} idle_closed={} \
timed_out={} refused={} refused_source={} too_large={} queue_full={} panics={} evicted={}",
            g(&self.sessions),
            g(&self.served),
            g(&self.aborted),
            g(&self.malformed),
            g(&self.ignored),
            g(&self.idle_closed),
            g(&self.timed_out),
            g(&self.refused),
            g(&self.refused_source),
            g(&self.too_large),
            g(&self.queue_full),
            g(&self.panics),
            g(&self.evicted),
        )
    }

    /// `tcp observers added= refused= deregistered= closed= notifications= replaced=
    /// dropped=`, or `None` when nobody observed over TCP (added and refused: registrations
    /// kept and refused; deregistered: by a GET with Observe 1; closed: gone with their
    /// connection; notifications: queued; replaced: newer states that replaced a notification
    /// still queued for a slow reader; dropped: states that did not fit the queue limits).
    pub(crate) fn observe_line(&self) -> Option<String> {
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        if g(&self.observers_added) + g(&self.observers_refused) == 0 {
            return None;
        }
        Some(format!(
            "tcp observers added={} refused={} deregistered={} closed={} notifications={} \
replaced={} dropped={}",
            g(&self.observers_added),
            g(&self.observers_refused),
            g(&self.deregistered),
            g(&self.observers_closed),
            g(&self.notifications),
            g(&self.replaced),
            g(&self.dropped),
        ))
    }
}

/// Serves `router` on `listener` until dropped, with `config` and within `limits`, counting
/// into `counters`; `verbose` prints connections, aborts, malformed frames, refusals,
/// timeouts and panics.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    config: SessionConfig,
    limits: TcpServerLimits,
    counters: Arc<Counters>,
    verbose: bool,
) -> std::io::Result<()> {
    let c = counters.clone();
    let sink: TcpEventSink = Arc::new(move |peer, e| {
        let (n, what) = match e {
            TcpEvent::Session(e) => (session_counter(&c, e), None),
            TcpEvent::IdleClosed { idle_since, at } => (
                Some(&c.idle_closed),
                Some(format!("idle since {idle_since}, closed at {at}")),
            ),
            TcpEvent::TimedOut { stalled_since, at } => (
                Some(&c.timed_out),
                Some(format!("stalled since {stalled_since}, aborted at {at}")),
            ),
            TcpEvent::Refused { reason } => {
                let n = match reason {
                    RefuseReason::TooManyConnections => &c.refused,
                    RefuseReason::TooManyFromSource => &c.refused_source,
                };
                (Some(n), Some(format!("refused: {}", reason.diagnostic())))
            }
            TcpEvent::Panicked => (
                Some(&c.panics),
                Some("its task panicked; connection closed".to_owned()),
            ),
            TcpEvent::Evicted { csm_received } => (
                Some(&c.evicted),
                Some(if *csm_received {
                    "evicted at the connection limit: idle longest".to_owned()
                } else {
                    "evicted at the connection limit: no CSM yet".to_owned()
                }),
            ),
            TcpEvent::Wrote { .. } | TcpEvent::Ended => (None, None),
        };
        let Some(n) = n else {
            return;
        };
        n.fetch_add(1, Ordering::Relaxed);
        if !verbose {
            return;
        }
        match (what, e) {
            (Some(what), _) => eprintln!("coaplab server: tcp {peer}: {what}"),
            (
                None,
                TcpEvent::Session(
                    SessionEvent::Served { .. } | SessionEvent::NotificationSent { .. },
                ),
            ) => {}
            (None, TcpEvent::Session(e)) => eprintln!("coaplab server: tcp {peer}: {e:?}"),
            (None, _) => {}
        }
    });
    serve_tcp(
        listener,
        config,
        router,
        tokio::time::Instant::now(),
        limits,
        sink,
    )
    .await
}

/// The counter a session event adds to, if any.
fn session_counter<'c>(c: &'c Counters, e: &SessionEvent) -> Option<&'c AtomicU64> {
    Some(match e {
        SessionEvent::CsmReceived { .. } => &c.sessions,
        SessionEvent::Served { .. } => &c.served,
        SessionEvent::Aborted { .. } => &c.aborted,
        SessionEvent::Malformed { .. } => &c.malformed,
        SessionEvent::Ignored { .. } => &c.ignored,
        SessionEvent::ResponseRefused { .. } => &c.too_large,
        SessionEvent::QueueFull { .. } => &c.queue_full,
        SessionEvent::ObserverAdded { .. } => &c.observers_added,
        SessionEvent::ObserverRefused { .. } => &c.observers_refused,
        SessionEvent::ObserverRemoved {
            reason: ObserverGone::Deregistered,
            ..
        } => &c.deregistered,
        SessionEvent::ObserverRemoved { .. } => &c.observers_closed,
        SessionEvent::NotificationSent {
            replaced: false, ..
        } => &c.notifications,
        SessionEvent::NotificationSent { replaced: true, .. } => &c.replaced,
        SessionEvent::NotificationDropped { .. } => &c.dropped,
        _ => return None,
    })
}

/// One bench client's tallies: latencies of completed requests and failures.
#[derive(Debug, Default)]
pub(crate) struct BenchTally {
    pub(crate) latencies_ns: Vec<i64>,
    pub(crate) failed: u64,
}

/// A bench client on its own connection: stop-and-wait until `end`, accepting bodies of
/// `max_body_bytes`. A failed connection or request counts one failure, and the client
/// connects again (after 10 ms).
pub(crate) async fn bench_client(
    addr: SocketAddr,
    request: Request,
    seed: u64,
    max_body_bytes: usize,
    end: tokio::time::Instant,
) -> BenchTally {
    let mut t = BenchTally::default();
    let mut connection = 0u64;
    while tokio::time::Instant::now() < end {
        let cfg = client_config(seed.wrapping_add(connection << 16), max_body_bytes);
        connection += 1;
        let d = tokio::time::timeout_at(end, TcpDriver::connect(addr, cfg, Router::new())).await;
        let failed = match d {
            Ok(Ok(mut d)) => {
                let failed = exchanges(&mut d, &request, end, &mut t.latencies_ns).await;
                d.close().await;
                failed
            }
            Ok(Err(_)) => true,
            Err(_) => false,
        };
        if failed {
            t.failed += 1;
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    t
}

/// Stop-and-wait on one connection until `end` (false) or a failure (true).
async fn exchanges(
    d: &mut TcpDriver,
    request: &Request,
    end: tokio::time::Instant,
    latencies_ns: &mut Vec<i64>,
) -> bool {
    while tokio::time::Instant::now() < end {
        let now = d.now();
        let id = match d.session_mut().request(now, request) {
            Ok(id) => Some(id),
            Err(RequestError::TooLarge { .. }) if !d.session().csm_received() => None,
            Err(_) => return true,
        };
        let done = tokio::time::timeout_at(end, async {
            loop {
                match d.next_event().await {
                    TcpEvent::Session(SessionEvent::CsmReceived { .. }) if id.is_none() => {
                        return Some(None)
                    }
                    TcpEvent::Session(SessionEvent::RequestCompleted {
                        request,
                        started,
                        at,
                        ..
                    }) if Some(request) == id => {
                        return Some(Some(at.saturating_since(started).as_nanos()))
                    }
                    TcpEvent::Session(SessionEvent::RequestFailed { .. }) | TcpEvent::Ended => {
                        return None
                    }
                    _ => {}
                }
            }
        })
        .await;
        match done {
            Ok(Some(Some(ns))) => latencies_ns.push(ns),
            Ok(Some(None)) => {}
            Ok(None) => return true,
            Err(_) => return false,
        }
    }
    false
}
