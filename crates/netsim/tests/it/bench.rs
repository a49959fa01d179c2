//! Throughput figures, not assertions: `cargo test --release -p coaplab-netsim --test it
//! bench:: -- --ignored --nocapture` prints events/s of the engine and packets/s of the star.

use std::time::Instant as WallClock;

use coaplab_base::rng::{Random, SeededRandom};
use coaplab_base::time::{Duration, Instant};
use coaplab_netsim::{client_addr, EventQueue, NetworkConfig, Preset, Star, Topology, SERVER_ADDR};

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
            &mut vec![0; 60],
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
            star.send(t, src, dst, &mut buf, d.tag).unwrap();
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "star, 400 clients ping-pong: {:.2} M packets/s ({delivered} packets in {secs:.3} s)",
        delivered as f64 / secs / 1e6
    );
}

#[test]
#[ignore = "benchmark: run with --release -- --ignored --nocapture"]
fn mesh_ch6_grid_events_per_second() {
    use coaplab_netsim::mesh::{Layout, Mesh, MeshConfig, MeshParams};
    // Ch. 6's 6×6 grid (10 m, 1 border router, 1 server, 34 clients here): every client sends
    // a PAYLOAD-B datagram to the server every 0.4 s for 18 simulated minutes; the server answers
    // each arrival with as many bytes. No endpoints: the mesh alone.
    const PAYLOAD: usize = 20;
    let config = MeshConfig {
        layout: Layout::grid(6, 6, 10.0).unwrap(),
        params: MeshParams::default(),
    };
    let mut mesh = Mesh::new(&config, 1).unwrap();
    let end = Instant::from_secs(18 * 60);
    let period = coaplab_base::time::Duration::from_millis(400);
    // Client k sends at k × 0.4 s / 34 into each period (staggered, as randomly started
    // Contiki applications are).
    let slot = period.as_nanos() / 34;
    let mut next_send = Instant::ZERO;
    let mut next_client = 0u32;
    let mut buf = Vec::new();
    let payload = [0u8; PAYLOAD];
    let (mut sent, mut got) = (0u64, 0u64);
    let start = WallClock::now();
    loop {
        let t = mesh.poll_at().map_or(next_send, |p| p.min(next_send));
        if t > end {
            break;
        }
        while let Some(d) = mesh.poll_delivery(t, &mut buf) {
            got += 1;
            if d.dst == SERVER_ADDR {
                let _ = mesh.send(t, SERVER_ADDR, d.src, &mut payload.to_vec(), 0);
            }
        }
        if t == next_send {
            let _ = mesh.send(
                t,
                client_addr(next_client),
                SERVER_ADDR,
                &mut payload.to_vec(),
                0,
            );
            sent += 1;
            next_client = (next_client + 1) % 34;
            next_send += coaplab_base::time::Duration::from_nanos(slot);
        }
    }
    let wall = start.elapsed().as_secs_f64();
    let events = mesh.events_scheduled();
    println!(
        "mesh 6x6, 34 clients, 0.4 s, 18 min: {wall:.3} s wall, {events} events, {:.2} M events/s, {sent} requests, {got} deliveries",
        events as f64 / wall / 1e6
    );
    println!("  up {:?}", mesh.stats(coaplab_netsim::Direction::Up));
    println!("  down {:?}", mesh.stats(coaplab_netsim::Direction::Down));
    println!("  medium {:?}", mesh.medium_stats());
}
