//! Speed of the endpoint alone: 400 clients × 50 short-lived exchanges against one server,
//! lossless, through a minimal event queue (the shape of one FASOR-matrix run).
//! `cargo test --release -p coaplab-endpoint --test it throughput:: -- --ignored --nocapture`

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::net::SocketAddr;

use coaplab_cc::time::{Duration, Instant};
use coaplab_cc::Settings;
use coaplab_endpoint::{registry_factory, Config, Endpoint, Event, Request, Resource, Router};

/// (arrival, seq, receiving client or `usize::MAX` for the server, sending client, bytes).
type Packet = (Instant, u64, usize, usize, Vec<u8>);

fn run_once(clients: usize, exchanges: u32, cc: &str) -> (u64, Instant) {
    let server_addr: SocketAddr = "198.18.1.1:5683".parse().unwrap();
    let mut router = Router::new();
    router.route("f", Resource::experiment(102_400, 53));
    let whole_run = Config {
        dedup_lifetime: None,
        keep_bodies: false,
        ..Config::default()
    };
    let settings = Settings::parse(["preset=fasor18"]).unwrap();
    let mut server = Endpoint::new(
        whole_run.clone(),
        registry_factory("default", &settings, 1).unwrap(),
        router,
    )
    .unwrap();
    let mut eps: Vec<Endpoint> = (0..clients)
        .map(|i| {
            Endpoint::new(
                whole_run.clone(),
                registry_factory(cc, &settings, i as u64).unwrap(),
                Router::new(),
            )
            .unwrap()
        })
        .collect();
    let addrs: Vec<SocketAddr> = (0..clients)
        .map(|i| SocketAddr::from(([198, 18, 0, (i % 250) as u8], 40000 + i as u16)))
        .collect();
    let delay = Duration::from_millis(300);
    let mut q: BinaryHeap<Reverse<Packet>> = BinaryHeap::new();
    let mut seq = 0u64;
    let post = Request::post("f", vec![0; 51]);
    let mut left = vec![exchanges; clients];
    let mut events = 0u64;
    for (i, ep) in eps.iter_mut().enumerate() {
        let start = Instant::from_micros(i as i64 * 2500);
        ep.request(start, server_addr, &post);
        while let Some(t) = ep.poll_transmit(start) {
            seq += 1;
            q.push(Reverse((start + delay, seq, usize::MAX, i, t.contents)));
        }
    }
    let mut now = Instant::ZERO;
    while let Some(Reverse((t, _, to, from, bytes))) = q.pop() {
        now = t;
        if to == usize::MAX {
            server.handle_datagram(t, addrs[from], &bytes);
            while let Some(tx) = server.poll_transmit(t) {
                let c = (tx.destination.port() - 40000) as usize;
                seq += 1;
                q.push(Reverse((t + delay, seq, c, usize::MAX, tx.contents)));
            }
            while server.poll_event().is_some() {
                events += 1;
            }
        } else {
            let ep = &mut eps[to];
            ep.handle_datagram(t, server_addr, &bytes);
            while let Some(e) = ep.poll_event() {
                events += 1;
                if let Event::RequestCompleted { .. } = e {
                    left[to] -= 1;
                    if left[to] > 0 {
                        ep.request(t, server_addr, &post);
                    }
                }
            }
            while let Some(tx) = ep.poll_transmit(t) {
                seq += 1;
                q.push(Reverse((t + delay, seq, usize::MAX, to, tx.contents)));
            }
        }
    }
    assert!(left.iter().all(|&l| l == 0));
    (events, now)
}

#[test]
fn one_run_completes() {
    let (events, end) = run_once(10, 5, "fasor");
    // 10 clients x 5 exchanges, 0.6 s each, the last client starting at 22.5 ms.
    assert_eq!(end, Instant::from_micros(22_500 + 5 * 600_000));
    assert!(events > 0);
}

#[test]
#[ignore]
fn throughput_400_clients() {
    for cc in ["default", "fasor", "cocoa"] {
        let t = std::time::Instant::now();
        let runs = 20;
        let mut events = 0;
        for _ in 0..runs {
            events += run_once(400, 50, cc).0;
        }
        let per_run = t.elapsed().as_secs_f64() / runs as f64;
        println!(
            "{cc}: {:.2} ms per run of 400 x 50 exchanges ({} events/run); 600 runs = {:.1} s",
            per_run * 1e3,
            events / runs,
            per_run * 600.0
        );
    }
}
