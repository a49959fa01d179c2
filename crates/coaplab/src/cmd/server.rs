//! `coaplab server`: a CoAP-over-UDP server on a real socket, serving `/data/N` (N bytes,
//! byte i = i mod 256, block-wise), `/echo` (POST/PUT echo the payload, Block1 accepted),
//! `/time` (Unix seconds) and `/.well-known/core` (RFC 6690). It runs until SIGINT or SIGTERM,
//! then prints its counters (requests served, datagrams rejected by cause) and exits 0.
//! With `--tcp` it also serves the same resources over TCP (RFC 8323) on the same port number,
//! each answer one message (no block-wise), within limits on connections (in all and per
//! source address), stalled peers and queued bytes, and prints a `tcp sessions= served= …`
//! line.
//!
//! Plain UDP alone (no `--tcp`, `--tcp-bind`, `--dtls`, `--dtls-bind`) is served on a blocking
//! socket without the async runtime's readiness calls ([`coaplab_emu::BlockingUdpDriver`]:
//! `recvfrom` + `sendto` per request); with TCP or DTLS beside it, every socket is driven by
//! the one-thread tokio runtime.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use coaplab_cc::time::Duration;
use coaplab_emu::UdpDriver;
use coaplab_endpoint::observe::{NotifyPolicy, NotifyTimer};
use coaplab_endpoint::{
    Amplification, Event, ObserverGone, Router, ServerDuplicates, DEDUP_CAPACITY_BYTES,
    MAX_PENDING_UPLOADS_PER_SOURCE, UNVERIFIED_CON_BYTES_PER_S, UNVERIFIED_REPLAY_BYTES,
};
use tokio::net::TcpListener;
use tokio::signal::unix::{signal, Signal, SignalKind};

use super::dtls_opts::{self, DtlsOpts, DtlsServerOpts};
use super::net::{self, EndpointOpts};
use super::tcp;

/// The default `--observe-con-every`: libcoap's COAP_OBS_MAX_NON, so that an observer that went
/// away silently is found out within a few periods, not the 24 h of RFC 7641 §4.5.1.
const OBSERVE_CON_EVERY: u32 = 5;

/// Describes the served resources in `/.well-known/core` (RFC 6690 §3: rt resource type,
/// if interface, ct Content-Formats, sz size; RFC 7641 §6: obs for an observable one).
/// `/data/N` is listed by one example, /data/1024.
pub(crate) fn describe(router: &mut Router) {
    router
        .link(
            "/data/1024",
            &[
                ("rt", Some("coaplab.data")),
                ("if", Some("core.s")),
                ("ct", Some("42")),
                ("sz", Some("1024")),
                ("title", Some("N bytes at /data/N")),
            ],
        )
        .link(
            "/echo",
            &[
                ("rt", Some("coaplab.echo")),
                ("if", Some("core.p")),
                ("ct", Some("0 42 50 60")),
                ("title", Some("POST/PUT/FETCH/PATCH/iPATCH echo")),
            ],
        )
        .link(
            "/time",
            &[
                ("rt", Some("coaplab.time")),
                ("if", Some("core.s")),
                ("ct", Some("0")),
                ("title", Some("Unix time in seconds")),
            ],
        )
        .link(
            "/counter",
            &[
                ("rt", Some("coaplab.counter")),
                ("if", Some("core.s")),
                ("ct", Some("0")),
                ("obs", None),
                ("title", Some("observable counter (RFC 7641)")),
            ],
        );
}

/// Arguments of `coaplab server`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Address and port to listen on (port 0: any free port, printed at start).
    #[arg(long, value_name = "ADDR", default_value = "0.0.0.0:5683")]
    bind: SocketAddr,
    #[command(flatten)]
    opts: EndpointOpts,
    /// Also serve CoAP over TCP (RFC 8323, `coap+tcp://`) on the same address and port number
    /// as UDP (with port 0, the free UDP port chosen): the same resources, each answer one
    /// message however large (CSM: Max-Message-Size 1 MiB + 1 KiB, Block-Wise-Transfer; Block1
    /// uploads are reassembled; limits: --tcp-max-connections and the other --tcp-* options).
    /// --cc and --set apply to UDP only: the kernel's TCP retransmits.
    #[arg(long)]
    tcp: bool,
    /// Serve TCP on this address instead of the UDP one (implies --tcp).
    #[arg(long = "tcp-bind", value_name = "ADDR")]
    tcp_bind: Option<SocketAddr>,
    /// Close a TCP connection idle this long (nothing received, no request in progress) the
    /// RFC 8323 way: Release (7.04), then FIN. 0: never. E.g. 300s, 500ms, 5m.
    #[arg(long = "tcp-idle-timeout", value_name = "D", default_value = "300s", value_parser = net::parse_duration)]
    tcp_idle_timeout: std::time::Duration,
    /// Most bytes the UDP duplicate cache (RFC 7252 §4.5) allocates: its reply arena, hash
    /// tables and FIFO as allocated (capacities, keys, per-entry slots), not just the replies.
    /// When full, the oldest entries are forgotten first, down to about half (a
    /// retransmission of a forgotten request is processed again). Expired entries
    /// (EXCHANGE_LIFETIME, 247 s) are freed on a timer even when no traffic arrives.
    #[arg(long = "dedup-cache-bytes", value_name = "BYTES", default_value_t = DEDUP_CAPACITY_BYTES)]
    dedup_cache_bytes: usize,
    /// Amplification limit over UDP (RFC 7252 §11.3, RFC 9175 §2.4): a response more than N
    /// times the size of its request, to a client address not yet verified, is answered
    /// 4.01 Unauthorized with an Echo option; the client repeats the request with it
    /// (libcoap's coap-client and coaplab do so by themselves) and its address counts as
    /// verified from then on. CON requests are answered anyway within
    /// --unverified-con-bytes-per-s (for clients without Echo support, e.g. aiocoap-client).
    /// 0: off (answer everyone, as an open amplifier would).
    #[arg(long = "amplification-limit", value_name = "N", default_value_t = 3)]
    amplification_limit: u32,
    /// Bytes per second (over the whole server, bursts of 4 s) of over-the-limit responses
    /// sent to unverified clients of CON requests before those are challenged with Echo too:
    /// what a flood of spoofed CON requests can reflect at most. 0: challenge every
    /// unverified CON request.
    #[arg(long = "unverified-con-bytes-per-s", value_name = "BYTES", default_value_t = UNVERIFIED_CON_BYTES_PER_S)]
    unverified_con_bytes_per_s: u64,
    /// Bytes per minute of answers replayed to duplicates (a CON resent with the same
    /// Message ID) above the amplification limit that one unverified client IP address may
    /// be sent, besides --unverified-con-bytes-per-s; beyond, a duplicate gets 4.01 + Echo.
    /// Bounds what a spoofed source can reflect by resending one answered request. 0:
    /// challenge every such replay.
    #[arg(long = "unverified-replay-bytes", value_name = "BYTES", default_value_t = UNVERIFIED_REPLAY_BYTES)]
    unverified_replay_bytes: u64,
    /// Partial Block1 uploads one client IP address may hold at once over UDP (the whole
    /// server holds at most 64); its next new upload gets 5.03 Service Unavailable.
    #[arg(long = "uploads-per-source", value_name = "N", default_value_t = MAX_PENDING_UPLOADS_PER_SOURCE)]
    uploads_per_source: usize,
    /// The largest N that /data/N serves (UDP and TCP); a GET of a larger N gets an empty
    /// 4.00 Bad Request. The default, 1 GiB, is the most a UDP client can fetch block-wise
    /// (2^20 blocks of 1,024 B).
    #[arg(long = "max-data-bytes", value_name = "N", default_value_t = coaplab_endpoint::MAX_DATA_BYTES)]
    max_data_bytes: usize,
    #[command(flatten)]
    tcp_limits: tcp::LimitOpts,
    #[command(flatten)]
    dtls: DtlsServerOpts,
    #[command(flatten)]
    credentials: DtlsOpts,
    /// Send no ETag on /data/N and /echo responses (they carry an 8-byte ETag by default, for
    /// If-Match / If-None-Match and 2.03 Valid). For byte-exact comparisons with servers that
    /// send none, e.g. the CoAP vs HTTP object download (docs/http-vs-coap.md).
    #[arg(long = "no-etags")]
    no_etags: bool,
    /// How a duplicate CON request over UDP (a retransmission whose answer was lost) is
    /// answered: `cache` replays the first reply byte for byte (RFC 7252 §4.5); `reprocess`
    /// runs the request again and answers with this copy's token and Rexmit-Cnt, as
    /// libcoap's server does (a FASOR+token client then knows which copy was answered).
    /// Block1 blocks and separate responses are always answered from the cache.
    #[arg(long = "server-duplicates", value_name = "MODE", default_value = "cache",
          value_parser = clap::builder::PossibleValuesParser::new(ServerDuplicates::NAMES))]
    server_duplicates: String,
    /// Period of the observable `/counter` (RFC 7641): its value, the number of periods
    /// since the server started, changes this often, and every observer (a GET with
    /// Observe 0, e.g. `coap-client -s 10` or `aiocoap-client --observe`) is sent a
    /// notification (NON; CON every `--observe-con-every`). At most 256 observers. E.g. 1s,
    /// 500ms.
    #[arg(long = "observe-period", value_name = "D", default_value = "1s", value_parser = net::parse_duration)]
    observe_period: std::time::Duration,
    /// Send every K-th notification to an observer over UDP as CON (its 1st, (K+1)-th, …),
    /// the others NON, as libcoap's server does with K = 5 (COAP_OBS_MAX_NON). A CON that is
    /// never acknowledged (ACK_TIMEOUT 2 s doubling, 4 retransmissions) removes the observer,
    /// so one that vanished without deregistering (e.g. `aiocoap-client --observe` stopped
    /// with Ctrl-C) is dropped within K periods plus about a minute. 0: only the first and
    /// then one a day (RFC 7641 §4.5.1's minimum), which keeps such an observer for 24 h.
    #[arg(long = "observe-con-every", value_name = "K", default_value_t = OBSERVE_CON_EVERY)]
    observe_con_every: u32,
    /// Print every malformed datagram to stderr (TCP: every CSM, Abort and malformed frame).
    #[arg(short, long)]
    verbose: bool,
}

/// What the server counted (printed at exit).
#[derive(Debug, Default)]
struct Counters {
    served: u64,
    duplicates: u64,
    rejected: u64,
    ignored: u64,
    /// Partial Block1 uploads dropped after their lifetime without a next block.
    uploads_expired: u64,
    /// First blocks refused (5.03) because the partial-upload table was full.
    uploads_refused: u64,
    /// Partial uploads dropped for a new one from a source holding fewer (full table).
    uploads_evicted: u64,
    /// Large responses replaced by 4.01 + Echo (unverified source).
    echo_challenges: u64,
    /// Observers registered (RFC 7641), and removed by cause.
    observers_added: u64,
    observers_gone: BTreeMap<&'static str, u64>,
    /// Notifications sent as datagrams of their own (NON and CON), and states that replaced
    /// an outstanding CON notification instead (RFC 7641 §4.5.2: they ride on its next
    /// retransmission, or never leave if its ACK comes first).
    notifications: u64,
    notifications_replaced: u64,
    malformed: BTreeMap<&'static str, u64>,
}

pub(crate) fn run(args: Args) -> ExitCode {
    let rt = match net::runtime(1) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    ExitCode::from(rt.block_on(serve(&args)))
}

async fn serve(args: &Args) -> u8 {
    let unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let mut router = Router::new();
    describe(&mut router);
    router
        .max_data_bytes(args.max_data_bytes)
        .well_known_core()
        .counter(
            "counter",
            Duration::from_nanos(
                i64::try_from(args.observe_period.as_nanos())
                    .unwrap_or(i64::MAX)
                    .max(1_000_000),
            ),
        )
        .clock(
            "time",
            Duration::from_nanos(i64::try_from(unix.as_nanos()).unwrap_or(0)),
        )
        .notify_policy(NotifyPolicy {
            con_every: args.observe_con_every,
            timer: NotifyTimer::Fixed,
        });
    let amplification = match args.amplification_limit {
        0 => None,
        factor => match echo_key() {
            Ok(key) => Some(Amplification {
                factor,
                unverified_con_bytes_per_s: args.unverified_con_bytes_per_s,
                unverified_replay_bytes: args.unverified_replay_bytes,
                key,
            }),
            Err(e) => {
                eprintln!("coaplab server: cannot read a random Echo key: {e}");
                return net::EXIT_PROTOCOL;
            }
        },
    };
    let endpoint = match args.opts.build(router.clone(), 0, |c| {
        c.keep_bodies = false;
        c.etags = !args.no_etags;
        c.dedup_capacity_bytes = args.dedup_cache_bytes;
        // An idle server gives the memory of expired entries back.
        c.dedup_purge_timer = true;
        c.max_pending_uploads_per_source = args.uploads_per_source;
        c.amplification = amplification;
        c.server_duplicates =
            ServerDuplicates::from_name(&args.server_duplicates).unwrap_or_default();
    }) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("coaplab server: {e}");
            return net::EXIT_BAD_ARGS;
        }
    };
    // Bound before the plain socket, so a peer that waits for any listening socket (as
    // `coaplab emulate` does) finds the DTLS one too.
    let mut dtls_driver = match dtls_driver(args, &router).await {
        Ok(d) => d,
        Err(code) => return code,
    };
    // `--tcp` on the UDP socket's port: with port 0 the kernel picks the UDP port, which another
    // program may hold over TCP; pick again until one port is free for both.
    let same_port_tcp = args.tcp && args.tcp_bind.is_none() && args.bind.port() == 0;
    let (bound, mut pre_listener) = if same_port_tcp {
        match bind_udp_and_tcp_on_one_port(args.bind).await {
            Ok((udp, listener)) => (Ok(UdpDriver::new(udp, endpoint)), Some(listener)),
            Err(e) => (Err(e), None),
        }
    } else {
        (UdpDriver::bind(args.bind, endpoint).await, None)
    };
    let mut driver = match bound {
        Ok(d) => d,
        Err(e) => {
            eprintln!("coaplab server: cannot bind {}: {e}", args.bind);
            return net::EXIT_PROTOCOL;
        }
    };
    // Plain UDP alone runs on a blocking socket (two system calls per request, see
    // `BlockingUdpDriver`); with TCP or DTLS beside it, all sockets share the async runtime.
    let blocking = !(args.tcp || args.tcp_bind.is_some()) && dtls_driver.is_none();
    // Handlers are in place before the first line is printed: a reader may signal at once.
    let Ok(stop) = StopSignals::install(blocking) else {
        eprintln!("coaplab server: cannot install signal handlers");
        return net::EXIT_PROTOCOL;
    };
    let udp_addr = match driver.local_addr() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("coaplab server: {e}");
            return net::EXIT_PROTOCOL;
        }
    };
    let tcp_counters = Arc::new(tcp::Counters::default());
    let mut tcp_task = None;
    if args.tcp || args.tcp_bind.is_some() {
        let addr = args.tcp_bind.unwrap_or(udp_addr);
        let bound = match pre_listener.take() {
            Some(l) => Ok(l),
            None => TcpListener::bind(addr).await,
        };
        let listener = match bound {
            Ok(l) => l,
            Err(e) => {
                eprintln!("coaplab server: cannot bind TCP {addr}: {e}");
                return net::EXIT_PROTOCOL;
            }
        };
        // Both sockets are bound before either line is printed, so a reader of the first
        // line can connect over both at once.
        eprintln!("coaplab server: listening on {udp_addr}");
        match listener.local_addr() {
            Ok(a) => eprintln!("coaplab server: tcp listening on {a}"),
            Err(e) => eprintln!("coaplab server: {e}"),
        }
        let idle = Some(args.tcp_idle_timeout).filter(|d| !d.is_zero());
        let limits = args.tcp_limits.limits(idle);
        let config = args.tcp_limits.config();
        let serving = tcp::serve(
            listener,
            router,
            config,
            limits,
            tcp_counters.clone(),
            args.verbose,
        );
        tcp_task = Some(tokio::spawn(serving));
    } else {
        eprintln!("coaplab server: listening on {udp_addr}");
    }
    if let Some(d) = &dtls_driver {
        match d.local_addr() {
            Ok(a) => eprintln!("coaplab server: dtls listening on {a}"),
            Err(e) => eprintln!("coaplab server: {e}"),
        }
    }
    let mut c = Counters::default();
    let stats = match stop {
        StopSignals::Flag(stop) => {
            let mut driver = match driver.into_blocking() {
                Ok(d) => d,
                Err(e) => {
                    eprintln!("coaplab server: {e}");
                    return net::EXIT_PROTOCOL;
                }
            };
            while let Some(e) = driver.next_event(&stop) {
                count(&mut c, &e, args.verbose);
            }
            driver.stats()
        }
        StopSignals::Async(mut int, mut term) => {
            loop {
                tokio::select! {
                    _ = int.recv() => break,
                    _ = term.recv() => break,
                    e = driver.next_event() => count(&mut c, &e, args.verbose),
                    e = dtls_next(&mut dtls_driver) => count(&mut c, &e, args.verbose),
                }
            }
            driver.stats()
        }
    };
    if let Some(t) = &tcp_task {
        t.abort();
    }
    let malformed: u64 = c.malformed.values().sum();
    eprintln!(
        "coaplab server: served={} duplicates={} rejected={} ignored={} malformed={malformed} \
uploads_expired={} uploads_refused={} uploads_evicted={} datagrams_in={} datagrams_out={} echo_challenges={}",
        c.served,
        c.duplicates,
        c.rejected,
        c.ignored,
        c.uploads_expired,
        c.uploads_refused,
        c.uploads_evicted,
        stats.datagrams_in,
        stats.datagrams_out,
        c.echo_challenges
    );
    if c.observers_added > 0 {
        let gone: Vec<String> = c
            .observers_gone
            .iter()
            .map(|(k, n)| format!(" {k}={n}"))
            .collect();
        eprintln!(
            "coaplab server: observers added={} notifications={} replaced={}{}",
            c.observers_added,
            c.notifications,
            c.notifications_replaced,
            gone.concat()
        );
    }
    for (label, n) in &c.malformed {
        eprintln!("coaplab server: malformed {label}={n}");
    }
    if let Some(d) = &dtls_driver {
        eprintln!("coaplab server: {}", dtls_opts::server_line(d));
    }
    if let Some(t) = tcp_task {
        if let Ok(Ok(Err(e))) = tokio::time::timeout(std::time::Duration::from_secs(1), t).await {
            eprintln!("coaplab server: tcp accept failed: {e}");
        }
        eprintln!("coaplab server: {}", tcp_counters.line());
        if let Some(line) = tcp_counters.observe_line() {
            eprintln!("coaplab server: {line}");
        }
    }
    net::EXIT_OK
}

/// How SIGINT and SIGTERM reach the serving loop.
enum StopSignals {
    /// The blocking UDP loop: a flag set by the handlers, which also interrupt its receive.
    Flag(Arc<AtomicBool>),
    /// The async loop: tokio's signal streams (SIGINT, SIGTERM).
    Async(Signal, Signal),
}

impl StopSignals {
    /// Installs the handlers for the blocking loop (`blocking`) or the async one.
    fn install(blocking: bool) -> std::io::Result<StopSignals> {
        if blocking {
            let stop = Arc::new(AtomicBool::new(false));
            for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
                signal_hook::flag::register(sig, stop.clone())?;
            }
            return Ok(StopSignals::Flag(stop));
        }
        Ok(StopSignals::Async(
            signal(SignalKind::interrupt())?,
            signal(SignalKind::terminate())?,
        ))
    }
}

/// A secret for the Echo values (RFC 9175 §2.4), from the OS's random source: the endpoint
/// takes its randomness injected.
fn echo_key() -> std::io::Result<[u8; 16]> {
    use std::io::Read;
    let mut key = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut key)?;
    Ok(key)
}

/// The coaps:// driver when --dtls or --dtls-bind is given: the same resources over DTLS
/// (its own endpoint), bound before it returns (announced after the UDP and TCP lines).
async fn dtls_driver(args: &Args, router: &Router) -> Result<Option<UdpDriver>, u8> {
    let Some(addr) = args.dtls.addr(args.bind) else {
        if args.credentials.given() {
            eprintln!("coaplab server: -k/--psk, --cert and --ca need --dtls or --dtls-bind");
            return Err(net::EXIT_BAD_ARGS);
        }
        return Ok(None);
    };
    let bad = |e: String| {
        eprintln!("coaplab server: {e}");
        net::EXIT_BAD_ARGS
    };
    let layer = args.dtls.layer(&args.credentials).map_err(bad)?;
    let endpoint = args
        .opts
        .build(router.clone(), 1, |c| c.keep_bodies = false)
        .map_err(bad)?;
    let mut driver = UdpDriver::bind(addr, endpoint).await.map_err(|e| {
        eprintln!("coaplab server: cannot bind DTLS {addr}: {e}");
        net::EXIT_PROTOCOL
    })?;
    driver.set_dtls(layer);
    Ok(Some(driver))
}

/// The DTLS driver's next event; pending forever without one.
async fn dtls_next(driver: &mut Option<UdpDriver>) -> Event {
    match driver {
        Some(d) => d.next_event().await,
        None => std::future::pending().await,
    }
}

fn count(c: &mut Counters, event: &Event, verbose: bool) {
    match event {
        Event::Served { .. } => c.served += 1,
        Event::DuplicateRequest { .. } => c.duplicates += 1,
        Event::Rejected { .. } => c.rejected += 1,
        Event::Ignored { .. } => c.ignored += 1,
        Event::UploadExpired {
            from,
            received_bytes,
            ..
        } => {
            c.uploads_expired += 1;
            if verbose {
                eprintln!("coaplab server: upload from {from} expired after {received_bytes} B");
            }
        }
        Event::EchoChallenged {
            from,
            request_bytes,
            response_bytes,
            ..
        } => {
            c.echo_challenges += 1;
            if verbose {
                eprintln!(
                    "coaplab server: 4.01 + Echo to unverified {from} ({response_bytes} B \
answer to {request_bytes} B)"
                );
            }
        }
        Event::ObserverAdded { .. } => c.observers_added += 1,
        Event::NotificationSent {
            replaced: false, ..
        } => c.notifications += 1,
        Event::NotificationSent { replaced: true, .. } => c.notifications_replaced += 1,
        Event::ObserverRemoved { reason, .. } => {
            let label = match reason {
                ObserverGone::Deregistered => "deregistered",
                ObserverGone::Reset => "reset",
                ObserverGone::TimedOut => "timed_out",
                ObserverGone::Closed => "closed",
            };
            *c.observers_gone.entry(label).or_default() += 1;
        }
        Event::UploadEvicted {
            from,
            received_bytes,
            ..
        } => {
            c.uploads_evicted += 1;
            if verbose {
                eprintln!(
                    "coaplab server: partial upload from {from} ({received_bytes} B) dropped \
                     for a new one from a source holding fewer"
                );
            }
        }
        Event::UploadRefused { from, .. } => {
            c.uploads_refused += 1;
            if verbose {
                eprintln!(
                    "coaplab server: upload from {from} refused (5.03: too many partial uploads)"
                );
            }
        }
        Event::Malformed { from, error, .. } => {
            *c.malformed.entry(error.label()).or_default() += 1;
            if verbose {
                eprintln!("coaplab server: malformed from {from}: {error}");
            }
        }
        _ => {}
    }
}

/// Binds a UDP socket on `addr` (port 0: a port the kernel picks) and a TCP listener on the same
/// IP and port, trying another port when the TCP one is taken (at most 64 times).
async fn bind_udp_and_tcp_on_one_port(
    addr: SocketAddr,
) -> std::io::Result<(tokio::net::UdpSocket, TcpListener)> {
    let mut last = None;
    for _ in 0..64 {
        let udp = tokio::net::UdpSocket::bind(addr).await?;
        let port = udp.local_addr()?.port();
        match TcpListener::bind(SocketAddr::new(addr.ip(), port)).await {
            Ok(listener) => return Ok((udp, listener)),
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no port free for both UDP and TCP")))
}
