//! Throughput figures, not assertions: `cargo test --release -p coaplab-netsim --test bench
//! -- --ignored --nocapture` prints events/s of the engine and packets/s of the star.

use std::time::Instant as WallClock;

use coaplab_cc::rng::{Random, SeededRandom};
use coaplab_cc::time::{Duration, Instant};
use coaplab_netsim::{client_addr, EventQueue, NetworkConfig, Preset, Star, SERVER_ADDR};

/// Classic hold model: a steady population of pending events; each step pops the earliest and
/// schedules one at a random later instant.
fn hold(pending: usize, steps: u64) -> f64 {
    let mut rng = SeededRandom::new(1);
    let mut q: EventQueue<(u32, u32)> = EventQueue::with_capacity(pending);
    for i in 0..pending {
        q.schedule(
            Instant::from_nanos((rng.uniform01() * 1e9) as i64),
            (i as u32, 0),
        );
    }
    let start = WallClock::now();
    let mut checksum = 0u64;
    for _ in 0..steps {
        let (now, (who, n)) = q.pop().expect("hold model never empties");
        checksum = checksum.wrapping_add(u64::from(who));
        q.schedule(
            now + Duration::from_nanos((rng.uniform01() * 1e9) as i64),
            (who, n + 1),
        );
    }
    let secs = start.elapsed().as_secs_f64();
    assert!(checksum > 0);
    // Each step is one pop and one schedule: count events handled (pops).
    steps as f64 / secs
}

#[test]
#[ignore = "benchmark: run with --release -- --ignored --nocapture"]
fn engine_events_per_second() {
    for pending in [100usize, 1_000, 10_000] {
        let rate = hold(pending, 10_000_000);
        println!(
            "engine hold model, {pending:>6} pending: {:.1} M events/s",
            rate / 1e6
        );
    }
}

#[test]
#[ignore = "benchmark: run with --release -- --ignored --nocapture"]
fn star_packets_per_second() {
    // 400 clients, each sending a 60-B request whenever its previous one was delivered, the
    // server answering every request: the FASOR continuous workload's network side.
    let mut config = NetworkConfig::preset(Preset::Nbiot);
    config.set_buffer_bytes(1_410_000);
    let mut star = Star::new(&config, 1).unwrap();
    for i in 0..400u32 {
        star.send(
            Instant::ZERO,
            client_addr(i),
            SERVER_ADDR,
            &[0; 60],
            u64::from(i),
        )
        .unwrap();
    }
    let start = WallClock::now();
    let mut buf = Vec::new();
    let mut delivered = 0u64;
    while delivered < 2_000_000 {
        let t = star.poll_at().unwrap();
        while let Some(d) = star.poll_delivery(t, &mut buf) {
            delivered += 1;
            let (src, dst) = (d.dst, d.src);
            star.send(t, src, dst, &buf, d.tag).unwrap();
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "star, 400 clients ping-pong: {:.2} M packets/s ({delivered} packets in {secs:.3} s)",
        delivered as f64 / secs / 1e6
    );
}
