//! `coaplab server`: a CoAP-over-UDP server on a real socket, serving `/data/N` (N bytes,
//! byte i = i mod 256, block-wise), `/echo` (POST/PUT echo the payload, Block1 accepted),
//! `/time` (Unix seconds) and `/.well-known/core` (RFC 6690). It runs until SIGINT or SIGTERM,
//! then prints its counters (requests served, datagrams rejected by cause) and exits 0.
//! With `--tcp` it also serves the same resources over TCP (RFC 8323) on the same port number,
//! each answer one message (no block-wise), and prints a `tcp sessions= served= …` line.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use coaplab_cc::time::Duration;
use coaplab_emu::UdpDriver;
use coaplab_endpoint::{Event, Router, CONTENT_FORMAT_LINK};
use tokio::net::TcpListener;
use tokio::signal::unix::{signal, SignalKind};

use super::dtls_opts::{self, DtlsOpts, DtlsServerOpts};
use super::net::{self, EndpointOpts};
use super::tcp;

/// The RFC 6690 listing of `/.well-known/core`.
pub(crate) const CORE_LINKS: &str = "</data/1024>;title=\"N bytes at /data/N\",\
</echo>;title=\"POST/PUT echo\",</time>;ct=0;title=\"Unix time in seconds\"";

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
    /// uploads are reassembled; at most 256 connections at once). --cc and --set apply to UDP
    /// only: the kernel's TCP retransmits.
    #[arg(long)]
    tcp: bool,
    /// Serve TCP on this address instead of the UDP one (implies --tcp).
    #[arg(long = "tcp-bind", value_name = "ADDR")]
    tcp_bind: Option<SocketAddr>,
    /// Close a TCP connection idle this long (nothing received, no request in progress) the
    /// RFC 8323 way: Release (7.04), then FIN. 0: never. E.g. 300s, 500ms, 5m.
    #[arg(long = "tcp-idle-timeout", value_name = "D", default_value = "300s", value_parser = net::parse_duration)]
    tcp_idle_timeout: std::time::Duration,
    #[command(flatten)]
    dtls: DtlsServerOpts,
    #[command(flatten)]
    credentials: DtlsOpts,
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
    router
        .content(
            ".well-known/core",
            CONTENT_FORMAT_LINK,
            CORE_LINKS.as_bytes().to_vec(),
        )
        .clock(
            "time",
            Duration::from_nanos(i64::try_from(unix.as_nanos()).unwrap_or(0)),
        );
    let endpoint = match args
        .opts
        .build(router.clone(), 0, |c| c.keep_bodies = false)
    {
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
    let mut driver = match UdpDriver::bind(args.bind, endpoint).await {
        Ok(d) => d,
        Err(e) => {
            eprintln!("coaplab server: cannot bind {}: {e}", args.bind);
            return net::EXIT_PROTOCOL;
        }
    };
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
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
        let listener = match TcpListener::bind(addr).await {
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
        let serving = tcp::serve(listener, router, idle, tcp_counters.clone(), args.verbose);
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
    loop {
        tokio::select! {
            _ = int.recv() => break,
            _ = term.recv() => break,
            e = driver.next_event() => count(&mut c, &e, args.verbose),
            e = dtls_next(&mut dtls_driver) => count(&mut c, &e, args.verbose),
        }
    }
    if let Some(t) = &tcp_task {
        t.abort();
    }
    let malformed: u64 = c.malformed.values().sum();
    let stats = driver.stats();
    eprintln!(
        "coaplab server: served={} duplicates={} rejected={} ignored={} malformed={malformed} \
uploads_expired={} uploads_refused={} datagrams_in={} datagrams_out={}",
        c.served,
        c.duplicates,
        c.rejected,
        c.ignored,
        c.uploads_expired,
        c.uploads_refused,
        stats.datagrams_in,
        stats.datagrams_out
    );
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
    }
    net::EXIT_OK
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
