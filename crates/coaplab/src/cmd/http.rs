//! `coaplab http-server` and `coaplab http-get URL`: HTTP/1.1 and h2c (HTTP/2 with prior
//! knowledge, no TLS) on the kernel's TCP with hyper, serving and fetching the same `/data/N`
//! as the CoAP server, for the CoAP-versus-HTTP object download comparison (docs/experiments.md
//! §8e, docs/http-vs-coap.md). `--iot` minimises headers; `--tfo` uses TCP Fast Open.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use coaplab_emu::http::client::{self, GetConfig, GetError, Version};
use coaplab_emu::http::server::{self, ServerConfig, ServerCounters, DEFAULT_MAX_CONNECTIONS};
use coaplab_emu::http::tfo::DEFAULT_TFO_QUEUE;
use coaplab_emu::http::Uri;
use tokio::signal::unix::{signal, SignalKind};

use super::net;

/// Arguments of `coaplab http-server`.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "\
RESOURCES:
  GET /data/N   N bytes, byte i = i mod 256: the CoAP server's /data/N, same paths, same bytes,
                same limit (--max-data-bytes, as `coaplab server`); a larger N gets an empty 400
  anything else 404; another method on /data/N 405. HEAD works as GET without the body.

HEADERS (response):
  default  status, content-length, content-type: application/octet-stream, server: coaplab, date
  --iot    status and content-length only: HTTP/1.1 `HTTP/1.1 200 OK\\r\\ncontent-length: N\\r\\n\\r\\n`;
           h2 a HEADERS frame with :status 200 and content-length (HPACK), see docs/http-vs-coap.md

Runs until SIGINT or SIGTERM, then prints its counters and exits 0.")]
pub(crate) struct ServerArgs {
    /// Address and port to listen on (port 0: any free port, printed at start).
    #[arg(long, value_name = "ADDR", default_value = "0.0.0.0:8080")]
    bind: SocketAddr,
    /// Minimal response headers (no date, content-type or server); h2c: also RFC 9113's
    /// default 65,535-B flow-control windows, so no WINDOW_UPDATE frame is sent.
    #[arg(long)]
    iot: bool,
    /// TCP Fast Open on the listener (TCP_FASTOPEN; needs net.ipv4.tcp_fastopen with the
    /// server bit, 2 or 3; `coaplab emulate --tcp-fastopen` sets 3).
    #[arg(long)]
    tfo: bool,
    /// With --tfo: the listener's queue of pending Fast Open connections.
    #[arg(long = "tfo-queue", value_name = "N", default_value_t = DEFAULT_TFO_QUEUE)]
    tfo_queue: u32,
    /// Connections served at once; further ones are accepted and closed at once (counted as
    /// refused). Each connection is closed after at most 300 s.
    #[arg(long = "max-connections", value_name = "N", default_value_t = DEFAULT_MAX_CONNECTIONS)]
    max_connections: usize,
    /// Connections from one IP address served at once; more are accepted and closed at once
    /// (counted as refused_source).
    #[arg(long = "max-per-source", value_name = "N", default_value_t = server::DEFAULT_MAX_CONNECTIONS_PER_SOURCE)]
    max_per_source: usize,
    /// A connection whose first request is not complete this long after it opened (silent,
    /// an h2 preface and nothing more, a partial head) is closed (header_timeouts).
    #[arg(long = "header-timeout", value_name = "D", default_value = "10s", value_parser = net::parse_duration)]
    header_timeout: std::time::Duration,
    /// A connection with no request in progress for this long is closed (idle_closed).
    #[arg(long = "idle-timeout", value_name = "D", default_value = "60s", value_parser = net::parse_duration)]
    idle_timeout: std::time::Duration,
    /// h2: streams open at once per connection (SETTINGS_MAX_CONCURRENT_STREAMS).
    #[arg(long = "h2-max-streams", value_name = "N", default_value_t = server::DEFAULT_H2_MAX_CONCURRENT_STREAMS)]
    h2_max_streams: u32,
    /// Bytes of response body made and not yet written, per connection: a body beyond waits
    /// for the client to read (backpressure).
    #[arg(long = "max-buffered-per-connection", value_name = "BYTES", default_value_t = server::DEFAULT_MAX_BUFFERED_BYTES_PER_CONNECTION)]
    max_buffered_per_connection: usize,
    /// The same over all connections.
    #[arg(long = "max-buffered-bytes", value_name = "BYTES", default_value_t = server::DEFAULT_MAX_BUFFERED_BYTES)]
    max_buffered_bytes: usize,
    /// The largest N that /data/N serves: the limit of `coaplab server --max-data-bytes`, with
    /// its default (1 GiB); a GET of a larger N gets an empty 400 Bad Request (CoAP: 4.00).
    /// The body is produced 64 KiB at a time as it is sent, never held whole.
    #[arg(long = "max-data-bytes", value_name = "N", default_value_t = coaplab_endpoint::MAX_DATA_BYTES)]
    max_data_bytes: usize,
}

/// Arguments of `coaplab http-get`.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "\
HEADERS (request):
  default  HTTP/1.1: Host, user-agent: coaplab/VERSION, accept: */*;  h2: the four
           pseudo-headers (:method :scheme :authority :path), user-agent, accept
  --iot    HTTP/1.1 `GET /data/N HTTP/1.1\\r\\nhost: HOST\\r\\n\\r\\n` (Host is mandatory in 1.1);
           h2 the pseudo-headers only

TIMING (-v): from just before the socket is created (so the TCP handshake counts) to the last
byte of the body; with --tfo the warm-up connection is not timed.

EXIT CODES:
  0  success (2xx)
  1  error response (4xx or 5xx); the body is still printed
  2  bad arguments (a URL that is not http://HOST[:PORT]/PATH)
  3  timeout: the whole fetch (warm-up and its gap included) not done within --timeout
  4  connection or protocol error (refused, reset, a malformed response, a body larger than
     --max-body-bytes)")]
pub(crate) struct GetArgs {
    /// The resource, e.g. `http://127.0.0.1:8080/data/1000`.
    #[arg(value_name = "URL")]
    url: String,
    /// Speak HTTP/1.1 (the default).
    #[arg(long = "http1.1", conflicts_with = "http2")]
    http1: bool,
    /// Speak HTTP/2 over cleartext TCP without upgrade (h2c with prior knowledge).
    #[arg(long = "http2-prior-knowledge")]
    http2: bool,
    /// Minimal request headers (see HEADERS below); h2c: also RFC 9113's default 65,535-B
    /// flow-control windows, so no WINDOW_UPDATE frame is sent.
    #[arg(long)]
    iot: bool,
    /// TCP Fast Open (TCP_FASTOPEN_CONNECT; needs net.ipv4.tcp_fastopen with the client bit, 1
    /// or 3). First an untimed warm-up fetch of the same URL gets the server's cookie, so
    /// the timed request rides in the SYN.
    #[arg(long)]
    tfo: bool,
    /// With --tfo: skip the warm-up fetch (a cookie is cached already).
    #[arg(long = "no-warm-up", requires = "tfo")]
    no_warm_up: bool,
    /// With --tfo: pause this long after the warm-up fetch, so that its connection has closed
    /// (FIN both ways) before the timed one starts. E.g. 500ms, 0s.
    #[arg(long = "warm-up-gap", value_name = "D", default_value = "500ms", value_parser = net::parse_duration)]
    warm_up_gap: std::time::Duration,
    /// Print the status, the response headers and the download time to stderr.
    #[arg(short, long)]
    verbose: bool,
    /// Write the body to FILE instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Give up (exit 3) when the whole fetch takes longer. E.g. 60s, 500ms.
    #[arg(long, value_name = "D", default_value = "60s", value_parser = net::parse_duration)]
    timeout: std::time::Duration,
    /// Largest response body accepted, in bytes; a larger one exits 4.
    #[arg(long = "max-body-bytes", value_name = "N", default_value_t = 8 << 20)]
    max_body_bytes: usize,
}

/// `coaplab http-server`.
pub(crate) fn run_server(args: ServerArgs) -> ExitCode {
    let rt = match net::runtime(1) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    ExitCode::from(rt.block_on(serve(&args)))
}

async fn serve(args: &ServerArgs) -> u8 {
    let zero = [
        ("--max-connections", args.max_connections == 0),
        ("--max-per-source", args.max_per_source == 0),
        ("--h2-max-streams", args.h2_max_streams == 0),
        (
            "--max-buffered-per-connection",
            args.max_buffered_per_connection == 0,
        ),
        ("--max-buffered-bytes", args.max_buffered_bytes == 0),
        ("--header-timeout", args.header_timeout.is_zero()),
        ("--idle-timeout", args.idle_timeout.is_zero()),
    ];
    if let Some((flag, _)) = zero.iter().find(|(_, z)| *z) {
        eprintln!("coaplab http-server: {flag} must be more than 0");
        return net::EXIT_BAD_ARGS;
    }
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        eprintln!("coaplab http-server: cannot install signal handlers");
        return net::EXIT_PROTOCOL;
    };
    let listener = match server::listen(args.bind, args.tfo.then_some(args.tfo_queue)) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("coaplab http-server: cannot listen on {}: {e}", args.bind);
            return net::EXIT_PROTOCOL;
        }
    };
    match listener.local_addr() {
        Ok(a) => eprintln!("coaplab http-server: listening on {a}"),
        Err(e) => eprintln!("coaplab http-server: {e}"),
    }
    let config = ServerConfig {
        iot: args.iot,
        max_connections: args.max_connections,
        max_connections_per_source: args.max_per_source,
        header_timeout: args.header_timeout,
        idle_timeout: args.idle_timeout,
        h2_max_concurrent_streams: args.h2_max_streams,
        max_buffered_bytes_per_connection: args.max_buffered_per_connection,
        max_buffered_bytes: args.max_buffered_bytes,
        max_data_bytes: args.max_data_bytes,
    };
    let counters = Arc::new(ServerCounters::default());
    tokio::select! {
        _ = int.recv() => {}
        _ = term.recv() => {}
        () = server::serve(listener, config, counters.clone()) => {}
    }
    eprintln!("coaplab http-server: {}", counters.line());
    net::EXIT_OK
}

/// `coaplab http-get`.
pub(crate) fn run_get(args: GetArgs) -> ExitCode {
    let rt = match net::runtime(1) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    ExitCode::from(rt.block_on(fetch(&args)))
}

fn fail(code: u8, msg: impl std::fmt::Display) -> u8 {
    eprintln!("coaplab http-get: {msg}");
    code
}

/// The URL and the addresses its host resolves to. Err: exit code, message printed.
async fn target(url: &str) -> Result<(Uri, Vec<SocketAddr>), u8> {
    let uri: Uri = url
        .parse()
        .map_err(|e| fail(net::EXIT_BAD_ARGS, format!("bad URL {url:?}: {e}")))?;
    match uri.scheme_str() {
        Some("http") => {}
        Some(s) => {
            return Err(fail(
                net::EXIT_BAD_ARGS,
                format!("scheme {s}: only http:// (no TLS)"),
            ))
        }
        None => {
            return Err(fail(
                net::EXIT_BAD_ARGS,
                format!("bad URL {url:?}: no http://"),
            ))
        }
    }
    let Some(auth) = uri.authority() else {
        return Err(fail(
            net::EXIT_BAD_ARGS,
            format!("bad URL {url:?}: no host"),
        ));
    };
    let hostport = format!("{}:{}", auth.host(), auth.port_u16().unwrap_or(80));
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host(&hostport)
        .await
        .map(Iterator::collect)
        .unwrap_or_default();
    if addrs.is_empty() {
        return Err(fail(
            net::EXIT_BAD_ARGS,
            format!("cannot resolve {hostport}"),
        ));
    }
    Ok((uri, addrs))
}

/// [`client::get`] from the first address that accepts the connection (as curl does for a
/// name with several addresses, e.g. localhost's ::1 and 127.0.0.1).
async fn get_any(
    addrs: &[SocketAddr],
    uri: &Uri,
    config: GetConfig,
) -> Result<client::Fetched, GetError> {
    let mut last = None;
    for &addr in addrs {
        match client::get(addr, uri, config).await {
            Err(GetError::Connect(e)) => last = Some(GetError::Connect(e)),
            done => return done,
        }
    }
    Err(last.unwrap_or_else(|| GetError::BadRequest("no address".into())))
}

async fn fetch(args: &GetArgs) -> u8 {
    let (uri, addrs) = match target(&args.url).await {
        Ok(t) => t,
        Err(code) => return code,
    };
    let config = GetConfig {
        version: if args.http2 {
            Version::Http2
        } else {
            Version::Http1
        },
        iot: args.iot,
        tfo: args.tfo,
        max_body_bytes: args.max_body_bytes,
    };
    let work = async {
        if args.tfo && !args.no_warm_up {
            let warm = get_any(&addrs, &uri, config).await?;
            if args.verbose {
                eprintln!(
                    "coaplab http-get: warm-up {} ({} B), not timed",
                    warm.status,
                    warm.body.len()
                );
            }
            drop(warm);
            tokio::time::sleep(args.warm_up_gap).await;
        }
        get_any(&addrs, &uri, config).await
    };
    let fetched = match tokio::time::timeout(args.timeout, work).await {
        Err(_) => {
            return fail(
                net::EXIT_TIMEOUT,
                format!("no response within {:?}", args.timeout),
            )
        }
        Ok(Err(e @ GetError::BadRequest(_))) => return fail(net::EXIT_BAD_ARGS, e),
        Ok(Err(e)) => return fail(net::EXIT_PROTOCOL, e),
        Ok(Ok(f)) => f,
    };
    if args.verbose {
        eprintln!("< {:?} {}", config.version, fetched.status);
        for (name, value) in &fetched.headers {
            eprintln!("< {name}: {}", String::from_utf8_lossy(value.as_bytes()));
        }
        eprintln!(
            "coaplab http-get: status={} body_bytes={} head_ms={:.3} download_ms={:.3}",
            fetched.status.as_u16(),
            fetched.body.len(),
            fetched.head_time.as_secs_f64() * 1e3,
            fetched.download_time.as_secs_f64() * 1e3
        );
    }
    let written = match &args.output {
        Some(path) => std::fs::write(path, &fetched.body)
            .map_err(|e| format!("cannot write {}: {e}", path.display())),
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(&fetched.body)
                .and_then(|()| out.flush())
                .map_err(|e| format!("cannot write the body: {e}"))
        }
    };
    if let Err(e) = written {
        return fail(net::EXIT_PROTOCOL, e);
    }
    if fetched.status.is_client_error() || fetched.status.is_server_error() {
        net::EXIT_ERROR_RESPONSE
    } else {
        net::EXIT_OK
    }
}
