//! Seeded random loss over a mix of requests: every request ends exactly once (completed or
//! failed), nothing livelocks, and both endpoints end idle.

use std::collections::HashMap;

use crate::common::*;
use coaplab_cc::rng::{Random, SeededRandom};
use coaplab_cc::time::Duration;
use coaplab_endpoint::{Config, Event, Request, Resource, Router};

fn run(seed: u64, name: &str, processing_ms: i64, nstart: u32) {
    let mut rng = SeededRandom::new(seed);
    let mut router = Router::new();
    router.route("f", Resource::experiment(3000, 53));
    let mut pair = Pair::with(
        Config {
            nstart,
            block_size_bytes: 64,
            response_timeout: Duration::from_secs(30),
            ..Config::default()
        },
        factory(name, &["max_retransmit=6"], 0.3),
        Config {
            block_size_bytes: 128,
            processing_delay: Duration::from_millis(processing_ms),
            dedup_lifetime: None,
            ..Config::default()
        },
        router,
    );
    pair.drop_up = (0..5000).filter(|_| rng.uniform01() < 0.3).collect();
    pair.drop_down = (0..5000).filter(|_| rng.uniform01() < 0.3).collect();
    let s = addr(SERVER);
    let mut ids = Vec::new();
    for i in 0..40 {
        let req = match i % 5 {
            0 => Request::get("f"),
            1 => Request::post("f", vec![1; 51]),
            2 => Request::put("echo", (0..300).map(|b| b as u8).collect()),
            3 => Request::get("data/10").non(),
            _ => Request::get("nothing-here"),
        };
        ids.push(pair.client.request(pair.now, s, &req));
        if i % 3 == 0 {
            pair.drive(100_000);
        }
    }
    pair.drive(100_000);
    let mut ends: HashMap<_, u32> = HashMap::new();
    let mut completed = 0;
    for (_, e) in &pair.client_events {
        match e {
            Event::RequestCompleted { request, body, .. } => {
                *ends.entry(*request).or_default() += 1;
                assert!(body.len() <= 3000);
                completed += 1;
            }
            Event::RequestFailed { request, .. } => *ends.entry(*request).or_default() += 1,
            _ => {}
        }
    }
    for id in &ids {
        assert_eq!(ends.get(id), Some(&1), "{name} seed {seed}: request {id:?}");
    }
    // 4.04s complete too; with 30 % loss each way most requests still get through.
    assert!(
        completed >= 24,
        "{name} seed {seed}: only {completed} of 40 completed"
    );
    assert_eq!(pair.client.open_requests(), 0);
    assert_eq!(pair.client.in_flight(s), 0);
    assert_eq!(pair.client.poll_timeout(), None);
    assert_eq!(pair.server.poll_timeout(), None);
}

#[test]
fn every_request_ends_exactly_once_under_random_loss() {
    for seed in 0..12 {
        for name in ["default", "fasor-token", "cocoa"] {
            run(
                seed,
                name,
                if seed % 3 == 0 { 700 } else { 0 },
                1 + (seed % 2) as u32,
            );
        }
    }
}
