//! `coaplab get|put|post|delete|fetch|patch|ipatch URI`: one request on a real UDP socket
//! (`coap://`) or TCP connection (`coap+tcp://`, in `tcp.rs`), with the options of
//! `coap_options.rs`, the response payload on stdout; with `-v`, every transmission, timer
//! expiry, RTT and the algorithm's RTO on stderr, then the response code and every option
//! (over TCP: every message).
//! The exit code tells success, error response, timeout and protocol error apart.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use coaplab_emu::UdpDriver;
use coaplab_endpoint::{Endpoint, Event, FailReason, Request, Router, MAX_BODY_BYTES};
use coaplab_wire::Code;

use super::coap_options::{self, OptionArgs};
use super::dtls_opts::{self, DtlsOpts};
use super::net::{self, EndpointOpts, EXIT_CODES_HELP};
use super::tcp;

/// Arguments of `coaplab get|put|post|delete|fetch|patch|ipatch`.
#[derive(clap::Args, Debug)]
#[command(after_long_help = EXIT_CODES_HELP)]
pub(crate) struct Args {
    /// The resource, e.g. `coap://127.0.0.1:5683/data/1000` or `coap+tcp://127.0.0.1/echo`.
    #[arg(value_name = "URI")]
    uri: String,
    #[command(flatten)]
    opts: EndpointOpts,
    #[command(flatten)]
    dtls: DtlsOpts,
    #[command(flatten)]
    options: OptionArgs,
    /// The token of the request, in hex (0x optional, 0–8 bytes; libcoap: -T). Later blocks
    /// of a block-wise transfer count on from it. Default: from --seed, 2 bytes.
    #[arg(short = 'T', long, value_name = "HEX", value_parser = coap_options::parse_hex)]
    token: Option<coap_options::Hex>,
    /// The request payload (PUT/POST/FETCH/PATCH/iPATCH; sent with Block1 when larger than
    /// a block). libcoap: -e.
    #[arg(
        short = 'e',
        long,
        value_name = "TEXT",
        conflicts_with = "payload_file"
    )]
    payload: Option<String>,
    /// Read the request payload from a file ('-': standard input); not for GET/DELETE. At most
    /// --max-body-bytes are read: a larger file exits 4.
    #[arg(long = "payload-file", value_name = "F")]
    payload_file: Option<PathBuf>,
    /// Send the request as NON (no retransmission).
    #[arg(long)]
    non: bool,
    /// Print each transmission, timer expiry, RTT and RTO to stderr, then the response code
    /// and every option by name (coap+tcp://: each message written and received).
    #[arg(short, long)]
    verbose: bool,
    /// Give up (exit 3) when the whole request (every block; coap+tcp://: connecting too)
    /// takes longer. Default: 60s for coap+tcp://; none for coap://, where a CON gives up
    /// after MAX_RETRANSMIT and a NON's response or a separate response is awaited 93 s.
    #[arg(long, value_name = "D", value_parser = net::parse_duration)]
    timeout: Option<std::time::Duration>,
    /// Largest response body (over all Block2/BERT blocks) and request payload, in bytes.
    /// A larger one stops the transfer and exits 4, so an endless Block2 or a payload file
    /// such as /dev/zero cannot exhaust memory.
    #[arg(long = "max-body-bytes", value_name = "N", default_value_t = MAX_BODY_BYTES)]
    max_body_bytes: usize,
    /// GET only, coap:// or coap+tcp://: observe the resource (RFC 7641, RFC 8323 §7;
    /// libcoap: -s, aiocoap: --observe): print the payload of the response and of every
    /// notification on a line of its own (-v: the Observe number on stderr first) until
    /// --count or --duration, then deregister (GET with Observe 1) and exit 0. Without
    /// either, until interrupted. Over TCP the observation ends with the connection (exit 4).
    #[arg(long)]
    observe: bool,
    /// With --observe: stop after N payloads (the registration's response is the first).
    #[arg(long, value_name = "N", requires = "observe")]
    count: Option<u64>,
    /// With --observe: stop after this long, e.g. 10s.
    #[arg(long, value_name = "D", requires = "observe", value_parser = net::parse_duration)]
    duration: Option<std::time::Duration>,
}

/// coap+tcp://'s `--timeout` when none is given.
const TCP_DEFAULT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Runs one request with `method`.
pub(crate) fn run(method: Code, args: Args) -> ExitCode {
    let rt = match net::runtime(1) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let code = rt.block_on(request(method, &args));
    ExitCode::from(code)
}

fn fail(code: u8, msg: impl std::fmt::Display) -> u8 {
    eprintln!("coaplab: {msg}");
    code
}

/// The request payload: `--payload`, or at most `--max-body-bytes` (+ 1, to tell a larger
/// one) read from `--payload-file`. Err: the exit code, its message printed.
fn payload(method: Code, args: &Args) -> Result<Vec<u8>, u8> {
    let given = args.payload.is_some() || args.payload_file.is_some();
    let bodiless = match method {
        Code::GET => Some("GET"),
        Code::DELETE => Some("DELETE"),
        _ => None,
    };
    if let (true, Some(name)) = (given, bodiless) {
        // RFC 7252 §5.5: a method not defined to have a payload MUST NOT carry one.
        return Err(fail(
            net::EXIT_BAD_ARGS,
            format!(
                "a {name} request carries no payload (RFC 7252 §5.5); use put, post, fetch, \
                 patch or ipatch"
            ),
        ));
    }
    let max = args.max_body_bytes;
    let bytes = match (&args.payload, &args.payload_file) {
        (Some(t), _) => t.as_bytes().to_vec(),
        (None, Some(f)) => {
            let (name, file): (String, Box<dyn Read>) = if f.as_os_str() == "-" {
                ("stdin".into(), Box::new(std::io::stdin()))
            } else {
                match std::fs::File::open(f) {
                    Ok(file) => (f.display().to_string(), Box::new(file)),
                    Err(e) => {
                        return Err(fail(net::EXIT_BAD_ARGS, format!("{}: {e}", f.display())))
                    }
                }
            };
            let mut b = Vec::new();
            let limit = u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1);
            if let Err(e) = file.take(limit).read_to_end(&mut b) {
                return Err(fail(net::EXIT_BAD_ARGS, format!("{name}: {e}")));
            }
            b
        }
        (None, None) => Vec::new(),
    };
    if bytes.len() > max {
        return Err(fail(
            net::EXIT_PROTOCOL,
            format!("the payload is larger than --max-body-bytes ({max} B)"),
        ));
    }
    Ok(bytes)
}

async fn request(method: Code, args: &Args) -> u8 {
    let payload = match payload(method, args) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let target = match net::resolve(&args.uri).await {
        Ok(t) => t,
        Err(e) => return fail(net::EXIT_BAD_ARGS, e),
    };
    let verbose = args.verbose;
    let max_body_bytes = args.max_body_bytes;
    let token = args.token.clone();
    let endpoint = match args.opts.build(Router::new(), 0, |c| {
        c.emit_snapshots = verbose;
        c.max_body_bytes = max_body_bytes;
        c.response_timeout = net::RESPONSE_WAIT;
        if let Some(coap_options::Hex(t)) = &token {
            // The endpoint counts tokens up from its first one (big-endian).
            c.token_len_bytes = t.len() as u8;
            c.initial_token = t.iter().fold(0, |v, b| v << 8 | u64::from(*b));
        }
    }) {
        Ok(e) => e,
        Err(e) => return fail(net::EXIT_BAD_ARGS, e),
    };
    let req = Request {
        method,
        path: target.path,
        query: target.query,
        payload,
        confirmable: !args.non,
        options: args.options.list(),
    };
    if args.observe && (method != Code::GET || target.dtls) {
        return fail(
            net::EXIT_BAD_ARGS,
            "--observe is for GET over coap:// or coap+tcp:// only",
        );
    }
    if target.tcp {
        let call = tcp::Call {
            addr: target.addr,
            request: req,
            seed: args.opts.seed(),
            timeout: args.timeout.unwrap_or(TCP_DEFAULT_TIMEOUT),
            max_body_bytes,
            verbose,
        };
        if args.observe {
            let until = super::observe::Until {
                count: args.count,
                duration: args.duration,
            };
            return super::tcp_observe::observe(&call, until).await;
        }
        return tcp::request(call).await;
    }
    if !target.dtls && args.dtls.given() {
        return fail(
            net::EXIT_BAD_ARGS,
            "-k/--psk, --cert and --ca apply to coaps:// only",
        );
    }
    let exchange = udp_request(target.addr, target.dtls, endpoint, &req, args);
    let Some(limit) = args.timeout else {
        return exchange.await;
    };
    match tokio::time::timeout(limit, exchange).await {
        Ok(code) => code,
        Err(_) => fail(
            net::EXIT_TIMEOUT,
            format!("timeout: no response within {limit:?}"),
        ),
    }
}

/// `req` on a UDP socket connected to `addr` (so an ICMP port unreachable is seen), over
/// DTLS when `dtls`; the response payload on stdout. Returns the exit code.
async fn udp_request(
    addr: SocketAddr,
    dtls: bool,
    endpoint: Endpoint,
    req: &Request,
    args: &Args,
) -> u8 {
    let mut driver = match UdpDriver::connect(addr, endpoint).await {
        Ok(d) => d,
        Err(e) => {
            return fail(
                net::EXIT_PROTOCOL,
                format!("cannot open a socket to {addr}: {e}"),
            )
        }
    };
    if dtls {
        if let Err(code) =
            dtls_opts::client_handshake(&mut driver, addr, &args.dtls, args.verbose).await
        {
            return code;
        }
    }
    if args.observe {
        let until = super::observe::Until {
            count: args.count,
            duration: args.duration,
        };
        return super::observe::observe(&mut driver, addr, req, until, args.verbose).await;
    }
    let code = udp_exchange(&mut driver, addr, req, args).await;
    if dtls {
        // close_notify: the server frees our session's slot now, not after its idle timeout.
        driver.dtls_close().await;
    }
    code
}

/// `req` on `driver` (its DTLS handshake done), the response payload on stdout; the exit code.
async fn udp_exchange(driver: &mut UdpDriver, addr: SocketAddr, req: &Request, args: &Args) -> u8 {
    let now = driver.now();
    driver.endpoint_mut().request(now, addr, req);
    loop {
        let event = match driver.try_next_event().await {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                return fail(
                    net::EXIT_PROTOCOL,
                    format!(
                        "connection refused: nothing listens on {addr} (ICMP port unreachable)"
                    ),
                );
            }
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionAborted => {
                return fail(
                    net::EXIT_PROTOCOL,
                    format!("DTLS session with {addr} ended: {e}"),
                );
            }
            Err(e) => return fail(net::EXIT_PROTOCOL, format!("{addr}: {e}")),
        };
        if args.verbose {
            trace(&event);
        }
        match event {
            Event::RequestCompleted {
                code,
                body,
                options,
                ..
            } => {
                if args.verbose {
                    eprintln!("{}", coap_options::describe(code, &options));
                }
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(&body).and_then(|()| out.flush());
                if code.class() == 2 {
                    return net::EXIT_OK;
                }
                return fail(net::EXIT_ERROR_RESPONSE, format!("{code:?}"));
            }
            Event::RequestFailed { reason, .. } => {
                return match reason {
                    FailReason::GiveUp | FailReason::ResponseTimeout => {
                        fail(net::EXIT_TIMEOUT, format!("timeout ({reason:?})"))
                    }
                    FailReason::BodyTooLarge => fail(
                        net::EXIT_PROTOCOL,
                        format!(
                            "the response body is larger than --max-body-bytes ({} B): its \
                             blocks so far, or the total its Size2 announces; no further \
                             block was asked for",
                            args.max_body_bytes
                        ),
                    ),
                    FailReason::UnknownCriticalOption { number } => fail(
                        net::EXIT_PROTOCOL,
                        format!(
                            "the response carries critical option {number}, which we do not \
                             recognise: rejected (RFC 7252 §5.4.1)"
                        ),
                    ),
                    _ => fail(net::EXIT_PROTOCOL, format!("request failed: {reason:?}")),
                };
            }
            _ => {}
        }
    }
}

/// One `-v` line per transmission, timer expiry, RTT sample and RTO update.
fn trace(event: &Event) {
    match event {
        Event::Sent {
            exchange,
            ordinal,
            bytes,
            destination,
            at,
            ..
        } => eprintln!(
            "{at} send exchange={} copy={ordinal} bytes={bytes} to={destination}",
            exchange.0
        ),
        Event::TimerExpired {
            exchange,
            ordinal,
            armed,
            at,
            ..
        } => eprintln!(
            "{at} timer exchange={} copy={ordinal} armed={armed}",
            exchange.0
        ),
        Event::ExchangeCompleted {
            exchange,
            transmissions,
            rtt,
            kind,
            at,
            ..
        } => eprintln!(
            "{at} answer exchange={} transmissions={transmissions} rtt={rtt} kind={kind:?}",
            exchange.0
        ),
        Event::ExchangeFailed {
            exchange,
            transmissions,
            reason,
            at,
            ..
        } => eprintln!(
            "{at} fail exchange={} transmissions={transmissions} reason={reason:?}",
            exchange.0
        ),
        Event::Snapshot { snapshot, at, .. } => match snapshot.state {
            Some(s) => eprintln!("{at} rto {} state={s}", snapshot.rto),
            None => eprintln!("{at} rto {}", snapshot.rto),
        },
        Event::MessageIdsExhausted { until, at } => eprintln!(
            "{at} waiting for message IDs until {until} (RFC 7252 §4.4: none is reused \
             within EXCHANGE_LIFETIME)"
        ),
        Event::Malformed { from, error, at } => {
            eprintln!("{at} malformed from={from} error={}", error.label())
        }
        _ => {}
    }
}
