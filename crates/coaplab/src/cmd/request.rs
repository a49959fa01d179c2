//! `coaplab get|put|post|delete URI`: one request on a real UDP socket (`coap://`) or TCP
//! connection (`coap+tcp://`, in `tcp.rs`), the response payload on stdout; with `-v`, every
//! transmission, timer expiry, RTT and the algorithm's RTO on stderr (over TCP: every message).
//! The exit code tells success, error response, timeout and protocol error apart.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use coaplab_emu::UdpDriver;
use coaplab_endpoint::{Event, FailReason, Request, Router};
use coaplab_wire::Code;

use super::net::{self, EndpointOpts, EXIT_CODES_HELP};
use super::tcp;

/// Arguments of `coaplab get|put|post|delete`.
#[derive(clap::Args, Debug)]
#[command(after_long_help = EXIT_CODES_HELP)]
pub(crate) struct Args {
    /// The resource, e.g. `coap://127.0.0.1:5683/data/1000` or `coap+tcp://127.0.0.1/echo`.
    #[arg(value_name = "URI")]
    uri: String,
    #[command(flatten)]
    opts: EndpointOpts,
    /// The request payload (PUT/POST; sent with Block1 when larger than a block).
    #[arg(long, value_name = "TEXT", conflicts_with = "payload_file")]
    payload: Option<String>,
    /// Read the request payload from a file ('-': standard input).
    #[arg(long = "payload-file", value_name = "F")]
    payload_file: Option<PathBuf>,
    /// Send the request as NON (no retransmission).
    #[arg(long)]
    non: bool,
    /// Print each transmission, timer expiry, RTT and RTO to stderr (coap+tcp://: each
    /// message written and received).
    #[arg(short, long)]
    verbose: bool,
    /// coap+tcp:// only: give up (exit 3) when connecting and the response take longer.
    #[arg(long, value_name = "D", default_value = "60s", value_parser = net::parse_duration)]
    timeout: std::time::Duration,
}

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

async fn request(method: Code, args: &Args) -> u8 {
    let payload = match (&args.payload, &args.payload_file) {
        (Some(t), _) => t.as_bytes().to_vec(),
        (None, Some(f)) if f.as_os_str() == "-" => {
            let mut b = Vec::new();
            match std::io::Read::read_to_end(&mut std::io::stdin(), &mut b) {
                Ok(_) => b,
                Err(e) => return fail(net::EXIT_BAD_ARGS, format!("stdin: {e}")),
            }
        }
        (None, Some(f)) => match std::fs::read(f) {
            Ok(b) => b,
            Err(e) => return fail(net::EXIT_BAD_ARGS, format!("{}: {e}", f.display())),
        },
        (None, None) => Vec::new(),
    };
    let target = match net::resolve(&args.uri).await {
        Ok(t) => t,
        Err(e) => return fail(net::EXIT_BAD_ARGS, e),
    };
    let verbose = args.verbose;
    let endpoint = match args
        .opts
        .build(Router::new(), 0, |c| c.emit_snapshots = verbose)
    {
        Ok(e) => e,
        Err(e) => return fail(net::EXIT_BAD_ARGS, e),
    };
    let req = Request {
        method,
        path: target.path,
        query: target.query,
        payload,
        confirmable: !args.non,
    };
    if target.tcp {
        return tcp::request(tcp::Call {
            addr: target.addr,
            request: req,
            seed: args.opts.seed(),
            timeout: args.timeout,
            verbose,
        })
        .await;
    }
    let mut driver = match UdpDriver::bind(net::any_for(target.addr), endpoint).await {
        Ok(d) => d,
        Err(e) => return fail(net::EXIT_PROTOCOL, format!("cannot bind a socket: {e}")),
    };
    let now = driver.now();
    driver.endpoint_mut().request(now, target.addr, &req);
    loop {
        let event = driver.next_event().await;
        if args.verbose {
            trace(&event);
        }
        match event {
            Event::RequestCompleted { code, body, .. } => {
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
        Event::Malformed { from, error, at } => {
            eprintln!("{at} malformed from={from} error={}", error.label())
        }
        _ => {}
    }
}
