//! `coaplab bench URI`: a closed-loop load generator. Each client has its own socket and
//! endpoint and keeps one request outstanding (stop-and-wait) for the duration; the report
//! gives requests/s, losses and latency p50/p90/p99/max. Works against any CoAP server, over
//! UDP (`coap://`) or TCP (`coap+tcp://`: one connection per client, retransmissions 0).

use std::process::ExitCode;

use coaplab_emu::emulator::stats::quantile_sorted;
use coaplab_emu::UdpDriver;
use coaplab_endpoint::{Event, Request, Router, MAX_BODY_BYTES};
use coaplab_wire::Code;

use super::net::{self, EndpointOpts};
use super::tcp;

/// Arguments of `coaplab bench`.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "\
OUTPUT (one line each):
  requests=R failed=F retransmissions=X elapsed_s=T requests_per_s=R/T
  latency_ms p50=.. p90=.. p99=.. max=..   (completed requests; nearest rank)
A request still open when the duration ends is not counted.

A coap+tcp:// URI runs each client on its own TCP connection (stop-and-wait; a connection
refused, reset or closed counts one failure and the client connects again after 10 ms);
--con/--non and --cc have no effect there.

EXAMPLE:
  coaplab bench coap://127.0.0.1:5683/data/10 --clients 20 --duration 10s
  coaplab bench coap+tcp://127.0.0.1:5683/data/10 --clients 20 --duration 10s")]
pub(crate) struct Args {
    /// The resource: GET it, or POST `--payload-bytes` to it.
    #[arg(value_name = "URI")]
    uri: String,
    /// Concurrent clients, each with its own socket (TCP: its own connection).
    #[arg(long, value_name = "C", default_value_t = 1)]
    clients: u32,
    /// How long to run: `10s`, `500ms`, `2m` or seconds.
    #[arg(long, value_name = "D", default_value = "10s", value_parser = net::parse_duration)]
    duration: std::time::Duration,
    /// Confirmable requests (the default).
    #[arg(long, conflicts_with = "non")]
    con: bool,
    /// Non-confirmable requests.
    #[arg(long)]
    non: bool,
    /// POST a payload of N bytes instead of a GET (0: GET).
    #[arg(long = "payload-bytes", value_name = "N", default_value_t = 0)]
    payload_bytes: usize,
    /// Largest response body (over all Block2/BERT blocks) a request accepts, and largest
    /// --payload-bytes, in bytes; a larger response counts as a failed request, a larger
    /// payload exits 4.
    #[arg(long = "max-body-bytes", value_name = "N", default_value_t = MAX_BODY_BYTES)]
    max_body_bytes: usize,
    /// Worker threads of the load generator.
    #[arg(long, value_name = "T", default_value_t = 2)]
    threads: usize,
    #[command(flatten)]
    opts: EndpointOpts,
}

/// One client's tallies.
#[derive(Debug, Default)]
struct Tally {
    latencies_ns: Vec<i64>,
    failed: u64,
    retransmissions: u64,
}

/// A TCP client's tallies (TCP retransmissions are not counted: none).
impl From<tcp::BenchTally> for Tally {
    fn from(t: tcp::BenchTally) -> Tally {
        Tally {
            latencies_ns: t.latencies_ns,
            failed: t.failed,
            retransmissions: 0,
        }
    }
}

pub(crate) fn run(args: Args) -> ExitCode {
    let rt = match net::runtime(args.threads) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    ExitCode::from(rt.block_on(bench(&args)))
}

async fn bench(args: &Args) -> u8 {
    if args.clients == 0 {
        eprintln!("coaplab bench: --clients must be at least 1");
        return net::EXIT_BAD_ARGS;
    }
    let target = match net::resolve(&args.uri).await {
        Ok(t) => t,
        Err(e) => {
            eprintln!("coaplab bench: {e}");
            return net::EXIT_BAD_ARGS;
        }
    };
    if target.dtls {
        eprintln!("coaplab bench: coaps:// is not supported by bench (use coaplab get coaps://)");
        return net::EXIT_BAD_ARGS;
    }
    if args.payload_bytes > args.max_body_bytes {
        eprintln!(
            "coaplab bench: --payload-bytes is larger than --max-body-bytes ({} B)",
            args.max_body_bytes
        );
        return net::EXIT_PROTOCOL;
    }
    let request = Request {
        method: if args.payload_bytes > 0 {
            Code::POST
        } else {
            Code::GET
        },
        path: target.path.clone(),
        query: target.query.clone(),
        payload: (0..args.payload_bytes).map(|i| (i % 256) as u8).collect(),
        confirmable: !args.non,
        options: Default::default(),
    };
    if target.tcp {
        return bench_tcp(args, target.addr, request).await;
    }
    let mut drivers = Vec::new();
    for i in 0..args.clients {
        let max = args.max_body_bytes;
        let endpoint = match args
            .opts
            .build(Router::new(), u64::from(i), |c| c.max_body_bytes = max)
        {
            Ok(e) => e,
            Err(e) => {
                eprintln!("coaplab bench: {e}");
                return net::EXIT_BAD_ARGS;
            }
        };
        match UdpDriver::bind(net::any_for(target.addr), endpoint).await {
            Ok(d) => drivers.push(d),
            Err(e) => {
                eprintln!("coaplab bench: cannot bind a socket: {e}");
                return net::EXIT_PROTOCOL;
            }
        }
    }
    let start = tokio::time::Instant::now();
    let end = start + args.duration;
    let tasks: Vec<_> = drivers
        .into_iter()
        .map(|d| tokio::spawn(client(d, target.addr, request.clone(), end)))
        .collect();
    finish(tasks, start).await
}

/// Over TCP: each client on its own connection (connected when the run starts, inside the
/// duration, and again after a failure), stop-and-wait; `--con`/`--non` and the algorithm
/// options have no effect.
async fn bench_tcp(args: &Args, addr: std::net::SocketAddr, request: Request) -> u8 {
    let seed = args.opts.seed();
    let start = tokio::time::Instant::now();
    let end = start + args.duration;
    let tasks: Vec<_> = (0..args.clients)
        .map(|i| {
            let salt = u64::from(i).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            tokio::spawn(tcp::bench_client(
                addr,
                request.clone(),
                seed.wrapping_add(salt),
                args.max_body_bytes,
                end,
            ))
        })
        .collect();
    finish(tasks, start).await
}

/// Waits for every client, adds up their tallies and prints the report for the time since
/// `start`.
async fn finish<T: Into<Tally>>(
    tasks: Vec<tokio::task::JoinHandle<T>>,
    start: tokio::time::Instant,
) -> u8 {
    let mut all = Tally::default();
    for t in tasks {
        if let Ok(t) = t.await {
            let t: Tally = t.into();
            all.latencies_ns.extend(t.latencies_ns);
            all.failed += t.failed;
            all.retransmissions += t.retransmissions;
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    print!("{}", report(&mut all, elapsed));
    net::EXIT_OK
}

/// Stop-and-wait until `end`.
async fn client(
    mut d: UdpDriver,
    dest: std::net::SocketAddr,
    request: Request,
    end: tokio::time::Instant,
) -> Tally {
    let mut t = Tally::default();
    while tokio::time::Instant::now() < end {
        let now = d.now();
        let id = d.endpoint_mut().request(now, dest, &request);
        let done = tokio::time::timeout_at(end, async {
            loop {
                match d.next_event().await {
                    Event::Sent { ordinal, .. } if ordinal > 0 => t.retransmissions += 1,
                    Event::RequestCompleted {
                        request,
                        started,
                        at,
                        ..
                    } if request == id => {
                        return Some(at.saturating_since(started).as_nanos());
                    }
                    Event::RequestFailed { request, .. } if request == id => return None,
                    _ => {}
                }
            }
        })
        .await;
        match done {
            Ok(Some(ns)) => t.latencies_ns.push(ns),
            Ok(None) => t.failed += 1,
            Err(_) => break,
        }
    }
    t
}

/// The report text (see `--help`).
fn report(t: &mut Tally, elapsed_s: f64) -> String {
    t.latencies_ns.sort_unstable();
    let n = t.latencies_ns.len();
    let pct = |percent: u32| -> f64 {
        quantile_sorted(&t.latencies_ns, f64::from(percent) / 100.0)
            .map_or(0.0, |ns| ns as f64 / 1e6)
    };
    format!(
        "requests={n} failed={} retransmissions={} elapsed_s={elapsed_s:.3} requests_per_s={:.1}\n\
latency_ms p50={:.3} p90={:.3} p99={:.3} max={:.3}\n",
        t.failed,
        t.retransmissions,
        n as f64 / elapsed_s,
        pct(50),
        pct(90),
        pct(99),
        pct(100),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_uses_nearest_rank_percentiles() {
        let mut t = Tally {
            latencies_ns: (1..=200).rev().map(|i| i * 1_000_000).collect(),
            failed: 2,
            retransmissions: 3,
        };
        assert_eq!(
            report(&mut t, 2.0),
            "requests=200 failed=2 retransmissions=3 elapsed_s=2.000 requests_per_s=100.0\n\
latency_ms p50=100.000 p90=180.000 p99=198.000 max=200.000\n"
        );
    }
}
