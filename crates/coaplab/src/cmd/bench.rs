//! `coaplab bench URI`: a closed-loop load generator. Each client has its own socket and
//! endpoint and keeps one request outstanding (stop-and-wait) for the duration; the report
//! gives requests/s, losses and latency p50/p90/p99/max. Works against any CoAP server, over
//! UDP (`coap://`) or TCP (`coap+tcp://`: one connection per client, retransmissions 0).
//!
//! Over UDP a client moves to a new socket (a new local port and endpoint) before its
//! endpoint would issue a 65,537th Message ID, so no Message ID repeats to the server within
//! EXCHANGE_LIFETIME and no request is answered from the server's duplicate cache; the old
//! port stays bound for EXCHANGE_LIFETIME (`bench_port`). The tallies continue across moves.

use std::process::ExitCode;

use coaplab_emu::emulator::stats::quantile_sorted;
use coaplab_emu::UdpDriver;
use coaplab_endpoint::{Endpoint, Event, Request, Router, MAX_BODY_BYTES};
use coaplab_wire::Code;

use super::bench_port::{ClientPort, MakeEndpoint, MESSAGE_IDS_PER_PORT};
use super::net::{self, EndpointOpts};
use super::tcp;

/// Arguments of `coaplab bench`.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "\
OUTPUT (one line each):
  requests=R failed=F retransmissions=X elapsed_s=T requests_per_s=R/T
  latency_ms p50=.. p90=.. p99=.. max=..   (completed requests; nearest rank)
A request still open when the duration ends is not counted.

Over coap:// a client moves to a new local port every 65,536 requests (Message IDs are 16
bits per port pair and must not repeat within 247 s, or the server replays a cached reply).

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
    /// Why the client stopped before the end (it could not move to a new port).
    stopped: Option<String>,
}

/// A TCP client's tallies (TCP retransmissions are not counted: none).
impl From<tcp::BenchTally> for Tally {
    fn from(t: tcp::BenchTally) -> Tally {
        Tally {
            latencies_ns: t.latencies_ns,
            failed: t.failed,
            retransmissions: 0,
            stopped: None,
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
    let mut clients = Vec::new();
    for i in 0..args.clients {
        let mut make = endpoint_maker(&args.opts, i, args.max_body_bytes);
        let endpoint = match make(None) {
            Ok(e) => e,
            Err(e) => {
                eprintln!("coaplab bench: {e}");
                return net::EXIT_BAD_ARGS;
            }
        };
        match UdpDriver::bind(net::any_for(target.addr), endpoint).await {
            Ok(d) => clients.push(ClientPort::new(d, make, MESSAGE_IDS_PER_PORT)),
            Err(e) => {
                eprintln!("coaplab bench: cannot bind a socket: {e}");
                return net::EXIT_PROTOCOL;
            }
        }
    }
    let start = tokio::time::Instant::now();
    let end = start + args.duration;
    let tasks: Vec<_> = clients
        .into_iter()
        .map(|port| tokio::spawn(client(port, target.addr, request.clone(), end, u64::MAX)))
        .collect();
    finish(tasks, start).await
}

/// Client `client`'s endpoints with `opts`: on each new port the next salt (so its algorithm
/// draws a stream of its own), continuing the Message IDs and tokens of the one it replaces.
fn endpoint_maker(opts: &EndpointOpts, client: u32, max_body_bytes: usize) -> MakeEndpoint {
    let opts = opts.clone();
    let mut ports: u64 = 0;
    Box::new(move |previous: Option<&Endpoint>| {
        let salt = u64::from(client) | ports << 32;
        ports += 1;
        let next = previous.map(|e| (e.next_message_id(), e.next_token()));
        opts.build(Router::new(), salt, |c| {
            c.max_body_bytes = max_body_bytes;
            if let Some((message_id, token)) = next {
                c.initial_message_id = message_id;
                c.initial_token = token;
            }
        })
    })
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
    let mut code = net::EXIT_OK;
    for t in tasks {
        if let Ok(t) = t.await {
            let t: Tally = t.into();
            all.latencies_ns.extend(t.latencies_ns);
            all.failed += t.failed;
            all.retransmissions += t.retransmissions;
            if let Some(why) = t.stopped {
                eprintln!("coaplab bench: a client stopped early: {why}");
                code = net::EXIT_PROTOCOL;
            }
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    print!("{}", report(&mut all, elapsed));
    code
}

/// Stop-and-wait until `end` or until `max_requests` have started, moving to a new port as
/// `port` says.
async fn client(
    mut port: ClientPort,
    dest: std::net::SocketAddr,
    request: Request,
    end: tokio::time::Instant,
    max_requests: u64,
) -> Tally {
    let mut t = Tally::default();
    let mut started: u64 = 0;
    while tokio::time::Instant::now() < end && started < max_requests {
        let d = match port.for_request(dest).await {
            Ok(d) => d,
            Err(why) => {
                t.stopped = Some(why);
                break;
            }
        };
        started += 1;
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
    use std::collections::HashSet;

    use coaplab_endpoint::{registry_factory, Config};

    use super::*;

    /// Our server's view of a run: duplicates it answered and client ports it served.
    #[derive(Debug, Default)]
    struct Seen {
        duplicates: u64,
        served: u64,
        ports: HashSet<u16>,
    }

    impl Seen {
        fn count(&mut self, e: Event) {
            match e {
                Event::Served { from, .. } => {
                    self.served += 1;
                    self.ports.insert(from.port());
                }
                Event::DuplicateRequest { .. } => self.duplicates += 1,
                _ => {}
            }
        }
    }

    /// One client with endpoints from `make`, moving to a new port every `per_port` Message
    /// IDs, against our server on loopback for `requests` CON GETs of data/10: its tally and
    /// what the server saw.
    async fn against_our_server(
        mut make: MakeEndpoint,
        per_port: u64,
        requests: u64,
    ) -> (Tally, Seen) {
        let factory = registry_factory("default", &Default::default(), 1).unwrap();
        let server = Endpoint::new(Config::default(), factory, Router::new()).unwrap();
        let mut server = UdpDriver::bind("127.0.0.1:0".parse().unwrap(), server)
            .await
            .unwrap();
        let dest = server.local_addr().unwrap();
        let first = UdpDriver::bind(net::any_for(dest), make(None).unwrap())
            .await
            .unwrap();
        let port = ClientPort::new(first, make, per_port);
        let end = tokio::time::Instant::now() + std::time::Duration::from_secs(120);
        let mut seen = Seen::default();
        let serving = async {
            loop {
                seen.count(server.next_event().await);
            }
        };
        let t = tokio::select! {
            t = client(port, dest, Request::get("data/10"), end, requests) => t,
            never = serving => never,
        };
        // The last request's Served may still be queued.
        while let Some(e) = server.endpoint_mut().poll_event() {
            seen.count(e);
        }
        (t, seen)
    }

    /// A client whose every endpoint starts at Message ID 0 moves to a new port every 100:
    /// had a move kept the port, or had the kernel handed a retired port out again, the
    /// server would answer from its duplicate cache.
    #[tokio::test]
    async fn a_client_moves_to_a_new_port_every_100_message_ids() {
        let make: MakeEndpoint = Box::new(|_| {
            let factory = registry_factory("default", &Default::default(), 2).unwrap();
            Ok(Endpoint::new(Config::default(), factory, Router::new()).unwrap())
        });
        let (t, seen) = against_our_server(make, 100, 1000).await;
        let tally = (t.latencies_ns.len(), t.failed, t.retransmissions, t.stopped);
        assert_eq!(tally, (1000, 0, 0, None));
        assert_eq!(
            (seen.served, seen.duplicates, seen.ports.len()),
            (1000, 0, 10)
        );
    }

    /// The command's own endpoints and threshold: 70,000 requests take 70,000 Message IDs,
    /// on two ports. Without the move, the last 4,464 repeat the first ones' Message IDs and
    /// are answered from the duplicate cache. (About 2 s in a debug build.)
    #[tokio::test]
    async fn seventy_thousand_requests_repeat_no_message_id() {
        let opts = EndpointOpts {
            cc: "default".into(),
            set: Vec::new(),
            nstart: 1,
            block_size: 1024,
            seed: Some(3),
        };
        let make = endpoint_maker(&opts, 0, MAX_BODY_BYTES);
        let (t, seen) = against_our_server(make, MESSAGE_IDS_PER_PORT, 70_000).await;
        assert_eq!(
            (t.latencies_ns.len(), t.failed, t.stopped),
            (70_000, 0, None)
        );
        assert_eq!(
            (seen.served, seen.duplicates, seen.ports.len()),
            (70_000, 0, 2)
        );
    }

    #[test]
    fn report_uses_nearest_rank_percentiles() {
        let mut t = Tally {
            latencies_ns: (1..=200).rev().map(|i| i * 1_000_000).collect(),
            failed: 2,
            retransmissions: 3,
            stopped: None,
        };
        assert_eq!(
            report(&mut t, 2.0),
            "requests=200 failed=2 retransmissions=3 elapsed_s=2.000 requests_per_s=100.0\n\
latency_ms p50=100.000 p90=180.000 p99=198.000 max=200.000\n"
        );
    }
}
