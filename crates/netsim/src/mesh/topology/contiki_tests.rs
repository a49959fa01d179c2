//! Contiki 3.0's MACs on the mesh: exact timelines of `csma.c` and `nullmac.c` over NullRDC.

use super::tests::{drain, send_up};
use super::*;
use coaplab_base::params::Settings;
use coaplab_base::rng::Random;

fn chain3(settings: &[(&str, &str)]) -> MeshConfig {
    let mut s = Settings::new();
    for &(k, v) in settings {
        s.set(k, v);
    }
    MeshConfig {
        layout: Layout::chain(3, 10.0).unwrap(),
        params: MeshParams::resolve(&s).unwrap(),
    }
}

const US: fn(i64) -> Duration = Duration::from_micros;

#[test]
fn contiki_csma_sends_a_new_neighbours_first_frame_without_a_backoff() {
    // The same 53-B frame as tests::one_hop_frame_timeline_is_exact, but csma.c schedules it
    // at once (`ctimer_set(..., 0, ...)`): CCA 128 µs, turnaround 192 µs, 1,888 µs on air.
    let mut mesh = Mesh::new(&chain3(&[("mac", "contiki-csma")]), 7).unwrap();
    let t0 = Instant::from_millis(5);
    send_up(&mut mesh, t0, 0, 11, 9);
    assert_eq!(mesh.poll_at(), Some(t0));
    let arrival = t0 + US(128 + 192 + 1_888);
    let got = drain(&mut mesh);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].at, arrival);
    let s = mesh.stats(Direction::Up);
    assert_eq!((s.frames_sent, s.retries, s.mac_drops), (1, 0, 0));
}

#[test]
fn contiki_csma_retries_an_unacknowledged_frame_on_the_timebase_backoff() {
    // Nothing reaches anyone (SUCCESS_RATIO_TX 0): Sky's 5 transmissions, each retry
    // T + random % (2^min(n, 3) T) ticks after NullRDC's 397-µs ACK wait found the channel
    // silent, T = 16 ticks of 1/128 s.
    let seed = 11;
    let mut mesh = Mesh::new(
        &chain3(&[
            ("mac", "contiki-csma"),
            ("mac_max_transmissions", "5"),
            ("success_ratio_tx", "0"),
        ]),
        seed,
    )
    .unwrap();
    mesh.record_frames(true);
    let t0 = Instant::from_millis(5);
    send_up(&mut mesh, t0, 0, 11, 9);
    assert!(drain(&mut mesh).is_empty());
    let starts: Vec<Instant> = mesh.take_frames().iter().map(|f| f.start).collect();
    let mut rng = crate::rng::stream(seed, "mesh/mac/node2");
    let _first_seq = rng.below(256);
    let tick = Duration::from_nanos(7_812_500);
    let mut want = vec![t0 + US(320)];
    for n in 1..5u32 {
        let ack_timeout = *want.last().unwrap() + US(1_888 + 397);
        let window = (1u64 << n.min(3)) * 16;
        let wait = tick * (16 + rng.below(window)) as i64;
        want.push(ack_timeout + wait + US(320));
    }
    assert_eq!(starts, want);
    let s = mesh.stats(Direction::Up);
    assert_eq!(
        (s.frames_sent, s.retries, s.no_ack_failures, s.mac_drops),
        (5, 4, 1, 1)
    );
}

#[test]
fn contiki_csma_reads_the_ack_after_nullrdcs_waits_and_sends_the_next_packet_at_once() {
    // Two 53-B frames to the server. The ACK (on air 192–544 µs after the frame) is detected
    // at NullRDC's ACK_WAIT_TIME (397 µs on Sky/Z1) and read AFTER_ACK_DETECTED_WAIT_TIME
    // (641 µs) later; `send_list` then sends the second packet at once: no backoff, no IFS.
    let mut mesh = Mesh::new(&chain3(&[("mac", "contiki-csma")]), 7).unwrap();
    mesh.record_frames(true);
    for tag in 0..2 {
        send_up(&mut mesh, Instant::ZERO, 0, 11, tag);
    }
    assert_eq!(drain(&mut mesh).len(), 2);
    let data: Vec<(Instant, Instant)> = mesh
        .take_frames()
        .iter()
        .filter(|f| f.node == 2)
        .map(|f| (f.start, f.end))
        .collect();
    let first = (US(320), US(320 + 1_888));
    let second_start = first.1 + US(397 + 641) + US(128 + 192);
    assert_eq!(
        data,
        vec![
            (Instant::ZERO + first.0, Instant::ZERO + first.1),
            (
                Instant::ZERO + second_start,
                Instant::ZERO + second_start + US(1_888)
            )
        ]
    );
}

#[test]
fn contiki_nullmac_sends_each_frame_once() {
    let mut mesh = Mesh::new(
        &chain3(&[("mac", "contiki-nullmac"), ("success_ratio_tx", "0")]),
        3,
    )
    .unwrap();
    send_up(&mut mesh, Instant::ZERO, 0, 11, 1);
    drain(&mut mesh);
    let s = mesh.stats(Direction::Up);
    assert_eq!(
        (s.frames_sent, s.retries, s.no_ack_failures, s.mac_drops),
        (1, 0, 1, 1)
    );
}

#[test]
fn every_datagram_ends_under_both_contiki_macs_on_a_busy_grid() {
    // Seven clients send fragmented datagrams across the 3×3 grid, the first round at once:
    // collisions, busy CCAs, relays with two neighbour queues; each datagram is delivered or
    // counted dropped.
    for mac in ["contiki-csma", "contiki-nullmac"] {
        let mut s = Settings::new();
        s.set("mac", mac);
        let config = MeshConfig {
            layout: Layout::grid(3, 3, 10.0).unwrap(),
            params: MeshParams::resolve(&s).unwrap(),
        };
        let mut mesh = Mesh::new(&config, 5).unwrap();
        for round in 0..4u64 {
            for k in 0..7 {
                mesh.send(
                    Instant::from_millis(
                        round as i64 * 40 + i64::from(k) * 5 * (round as i64).min(1),
                    ),
                    client_addr(k),
                    SERVER_ADDR,
                    &mut vec![1; 150],
                    round * 10 + u64::from(k),
                )
                .unwrap();
            }
        }
        let got = drain(&mut mesh).len() as u64;
        let s = mesh.stats(Direction::Up);
        assert_eq!(s.offered_packets, 28, "{mac}");
        assert_eq!(
            got + s.queue_drops + s.mac_drops + s.reassembly_drops,
            28,
            "{mac}: {s:?}"
        );
        assert_eq!(mesh.in_flight(), 0, "{mac}");
        assert!(got > 0, "{mac}");
    }
}
