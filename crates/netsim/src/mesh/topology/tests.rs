use super::*;
use crate::mesh::layout::Node;
use coaplab_base::rng::Random;

fn chain3() -> MeshConfig {
    MeshConfig {
        layout: Layout::chain(3, 10.0).unwrap(),
        params: MeshParams::default(),
    }
}

/// Client `k` sends `coap_bytes` bytes of CoAP (zeros) to the server at `at`, with `tag`.
pub(super) fn send_up(mesh: &mut Mesh, at: Instant, k: u32, coap_bytes: usize, tag: u64) {
    mesh.send(
        at,
        client_addr(k),
        SERVER_ADDR,
        &mut vec![0; coap_bytes],
        tag,
    )
    .unwrap();
}

/// Drives the mesh until idle; returns the deliveries.
pub(super) fn drain(mesh: &mut Mesh) -> Vec<Delivery> {
    let mut out = Vec::new();
    let mut buf = Vec::new();
    let mut steps = 0;
    while let Some(t) = mesh.poll_at() {
        while let Some(d) = mesh.poll_delivery(t, &mut buf) {
            out.push(d);
        }
        steps += 1;
        assert!(steps < 1_000_000, "livelock");
    }
    out
}

#[test]
fn one_hop_frame_timeline_is_exact() {
    // Chain 0 (border router) – 1 (server) – 2 (client), 10 m apart. The client's 11-B CoAP
    // datagram (IPv6 67 B with RPL's HBH option) is one frame: IPHC 3 + 27 = 30 B payload +
    // 23 B MAC header/FCS = 53 B PSDU, 59 B on air = 1,888 µs.
    let seed = 7;
    let mut mesh = Mesh::new(&chain3(), seed).unwrap();
    let mut rng = crate::rng::stream(seed, "mesh/mac/node2");
    let _first_seq = rng.below(256);
    let slots = rng.below(8) as i64; // BE = macMinBE = 3
    let t0 = Instant::from_millis(5);
    send_up(&mut mesh, t0, 0, 11, 9);
    let cca_start = t0 + Duration::from_micros(320 * slots);
    assert_eq!(mesh.poll_at(), Some(cca_start));
    let on_air = cca_start + Duration::from_micros(128 + 192);
    let arrival = on_air + Duration::from_micros(1_888);
    let mut buf = Vec::new();
    // Nothing is delivered before the frame ends.
    assert_eq!(
        mesh.poll_delivery(arrival - Duration::from_nanos(1), &mut buf),
        None
    );
    let d = mesh.poll_delivery(arrival, &mut buf).unwrap();
    assert_eq!((d.at, d.tag, d.ip_len, buf.len()), (arrival, 9, 67, 11));
    assert_eq!(d.direction, Direction::Up);
    // The server's ACK goes on air 192 µs (aTurnaroundTime) after the frame, lasts 352 µs,
    // and ends 544 µs after it, inside the 864-µs macAckWaitDuration, whose (now stale)
    // timer is the last event: no retry.
    let mut rest = Vec::new();
    while let Some(at) = mesh.poll_at() {
        rest.push(at - arrival);
        assert_eq!(mesh.poll_delivery(at, &mut buf), None);
    }
    let us = Duration::from_micros;
    assert_eq!(rest, vec![us(192), us(544), us(864)]);
    let s = mesh.stats(Direction::Up);
    assert_eq!((s.frames_sent, s.frame_bytes, s.retries), (1, 53, 0));
    assert_eq!(s.airtime, Duration::from_micros(1_888));
    assert_eq!(mesh.medium_stats().transmissions, 2);
}

#[test]
fn fragmented_datagrams_cross_the_three_by_three_grid() {
    // Client 8 (bottom right) to the server 2 (top right): 8→5→4→1→2, four hops, 300 B of
    // CoAP = 4 frames per hop with the HBH option (see sixlowpan tests): 16 frames.
    let config = MeshConfig {
        layout: Layout::grid(3, 3, 10.0).unwrap(),
        params: MeshParams::default(),
    };
    let mut mesh = Mesh::new(&config, 1).unwrap();
    let client8 = client_addr(6); // clients in id order: 0 1 3 5 6 7 8
    assert_eq!(mesh.node_of(client8), Some(8));
    mesh.send(Instant::ZERO, client8, SERVER_ADDR, &mut vec![1; 300], 1)
        .unwrap();
    let got = drain(&mut mesh);
    assert_eq!(got.len(), 1);
    let s = mesh.stats(Direction::Up);
    assert_eq!((s.delivered_packets, s.retries, s.mac_drops), (1, 0, 0));
    // Hop 1 (originated, IPv6 destination not the next hop): 3 + 8 = 11-B header; hops 2–3
    // (forwarded, both IIDs inline): 20 B; hop 4: 12 B. Each hop 4 frames.
    assert_eq!(s.frames_sent, 16);
    assert_eq!(mesh.in_flight(), 0);
}

#[test]
fn a_full_queue_refuses_whole_datagrams() {
    let mut mesh = Mesh::new(&chain3(), 3).unwrap();
    // 8-frame queue: two 4-frame datagrams fit, the third is refused at once.
    for tag in 0..3 {
        send_up(&mut mesh, Instant::ZERO, 0, 300, tag);
    }
    assert_eq!(mesh.stats(Direction::Up).queue_drops, 1);
    assert_eq!(drain(&mut mesh).len(), 2);
    assert!(matches!(
        mesh.send(
            Instant::ZERO,
            client_addr(5),
            SERVER_ADDR,
            &mut vec![0; 1],
            0
        ),
        Err(SendError::UnknownAddress(_))
    ));
    assert!(matches!(
        mesh.send(
            Instant::ZERO,
            client_addr(0),
            SERVER_ADDR,
            &mut vec![0; 1300],
            0
        ),
        Err(SendError::ExceedsMtu {
            mtu_bytes: 1280,
            ..
        })
    ));
}

#[test]
fn hidden_terminals_collide_and_retry() {
    // Clients 0 and 2 at ±10 m of the server 1 do not hear each other (20 m is not closer than
    // the 20-m interference range): their frames to the server overlap and are retried.
    let nodes = vec![
        Node {
            x_m: 0.0,
            y_m: 0.0,
            role: Role::Client,
        },
        Node {
            x_m: 10.0,
            y_m: 0.0,
            role: Role::Server,
        },
        Node {
            x_m: 20.0,
            y_m: 0.0,
            role: Role::Client,
        },
        Node {
            x_m: 10.0,
            y_m: 10.0,
            role: Role::BorderRouter,
        },
    ];
    let config = MeshConfig {
        layout: Layout::explicit(nodes).unwrap(),
        params: MeshParams::default(),
    };
    let (mut collisions, mut delivered, mut dropped) = (0, 0, 0);
    for seed in 0..20 {
        let mut mesh = Mesh::new(&config, seed).unwrap();
        send_up(&mut mesh, Instant::ZERO, 0, 11, 0);
        send_up(&mut mesh, Instant::ZERO, 1, 11, 1);
        delivered += drain(&mut mesh).len() as u64;
        collisions += mesh.medium_stats().collisions;
        dropped += mesh.stats(Direction::Up).mac_drops;
    }
    // Every datagram is delivered or dropped after its retries; the hidden pair collides.
    assert_eq!(delivered + dropped, 40);
    assert!(collisions > 0 && delivered > 0, "{collisions} {delivered}");
    // 60 B of CoAP make a 3,456-µs frame, longer than the whole first backoff window
    // (8 × 320 µs): the retries of two hidden senders keep colliding.
    let mut mesh = Mesh::new(&config, 0).unwrap();
    send_up(&mut mesh, Instant::ZERO, 0, 60, 0);
    send_up(&mut mesh, Instant::ZERO, 1, 60, 1);
    assert!(drain(&mut mesh).is_empty());
    let s = mesh.stats(Direction::Up);
    assert_eq!((s.frames_sent, s.retries, s.no_ack_failures), (8, 6, 2));
}

#[test]
fn unanswered_frames_are_retried_at_exact_instants_then_dropped() {
    // SUCCESS_RATIO_TX = 0: every transmission is lost, so the client's MAC runs its whole
    // retry sequence. Each attempt: backoff (BE = 3, a fresh attempt after a missing ACK),
    // CCA 128 µs, turnaround 192 µs, 1,888 µs on air, ACK wait 864 µs.
    let mut config = chain3();
    config.params.success_ratio_tx = 0.0;
    let seed = 11;
    let mut mesh = Mesh::new(&config, seed).unwrap();
    let mut rng = crate::rng::stream(seed, "mesh/mac/node2");
    let _first_seq = rng.below(256);
    send_up(&mut mesh, Instant::ZERO, 0, 11, 0);
    let mut expected = Vec::new();
    let mut t = Instant::ZERO;
    for _ in 0..4 {
        let cca = t + Duration::from_micros(320 * rng.below(8) as i64);
        let on_air = cca + Duration::from_micros(128 + 192);
        let end = on_air + Duration::from_micros(1_888);
        t = end + Duration::from_micros(864);
        expected.extend([cca, cca + Duration::from_micros(128), on_air, end, t]);
    }
    let mut seen = Vec::new();
    let mut buf = Vec::new();
    while let Some(at) = mesh.poll_at() {
        seen.push(at);
        assert_eq!(mesh.poll_delivery(at, &mut buf), None);
    }
    seen.dedup();
    expected.dedup();
    assert_eq!(seen, expected);
    let s = mesh.stats(Direction::Up);
    assert_eq!(
        (s.frames_sent, s.retries, s.no_ack_failures, s.mac_drops),
        (4, 3, 1, 1)
    );
    assert_eq!(mesh.in_flight(), 0);
}

#[test]
fn every_datagram_ends_delivered_or_counted_as_dropped_under_heavy_load() {
    // Conservation under collisions, queue overflow, fragmentation and both directions: for
    // every seed, offered = delivered + queue drops + MAC drops + reassembly drops, and nothing
    // is left inside once the mesh is idle.
    for (seed, bytes) in [(1u64, 11usize), (2, 120), (3, 300), (4, 60)] {
        let mut config = MeshConfig {
            layout: Layout::grid(4, 4, 10.0).unwrap(),
            params: MeshParams::default(),
        };
        config.params.success_ratio_rx = 0.7;
        let mut mesh = Mesh::new(&config, seed).unwrap();
        let mut buf = Vec::new();
        let mut t = Instant::ZERO;
        for round in 0..40 {
            for k in 0..14 {
                let _ = mesh.send(t, client_addr(k), SERVER_ADDR, &mut vec![0; bytes], 0);
            }
            let until = t + Duration::from_millis(20 + round % 7);
            while let Some(at) = mesh.poll_at().filter(|&a| a <= until) {
                while let Some(d) = mesh.poll_delivery(at, &mut buf) {
                    if d.dst == SERVER_ADDR {
                        let _ = mesh.send(at, SERVER_ADDR, d.src, &mut buf.clone(), 0);
                    }
                }
            }
            t = until;
        }
        drain(&mut mesh);
        for dir in [Direction::Up, Direction::Down] {
            let s = mesh.stats(dir);
            assert_eq!(
                s.offered_packets,
                s.delivered_packets + s.queue_drops + s.mac_drops + s.reassembly_drops,
                "seed {seed}, {bytes} B, {dir:?}: {s:?}"
            );
        }
        assert_eq!(mesh.in_flight(), 0);
        assert!(mesh.stats(Direction::Up).queue_drops > 0 || bytes < 100);
    }
}

/// Every instant the mesh asks to be polled at, and the deliveries, until it is idle.
fn timeline(mesh: &mut Mesh) -> (Vec<Instant>, Vec<Instant>) {
    let (mut seen, mut arrivals, mut buf) = (Vec::new(), Vec::new(), Vec::new());
    while let Some(at) = mesh.poll_at() {
        seen.push(at);
        while let Some(d) = mesh.poll_delivery(at, &mut buf) {
            arrivals.push(d.at);
        }
    }
    seen.dedup();
    (seen, arrivals)
}

#[test]
fn the_next_frame_waits_a_lifs_after_the_ack_of_the_last() {
    // IEEE 802.15.4-2006 §7.5.1.3: after an acknowledged frame longer than aMaxSIFSFrameSize
    // (18 B), the device's next transmission follows the ACK by at least macMinLIFSPeriod
    // (40 symbols = 640 µs). The client queues two 53-B frames (1,888 µs on air); the second
    // one's CSMA/CA starts 640 µs after the first one's ACK ends (before the fix it started
    // at the ACK's end, and the second CCA began 640 µs earlier than below).
    let seed = 5;
    let mut mesh = Mesh::new(&chain3(), seed).unwrap();
    let mut rng = crate::rng::stream(seed, "mesh/mac/node2");
    let _first_seq = rng.below(256);
    for tag in 0..2 {
        send_up(&mut mesh, Instant::ZERO, 0, 11, tag);
    }
    let us = Duration::from_micros;
    let mut expected = Vec::new();
    let mut arrivals = Vec::new();
    let mut t = Instant::ZERO;
    for _ in 0..2 {
        let cca = t + us(320 * rng.below(8) as i64);
        let on_air = cca + us(128 + 192);
        let end = on_air + us(1_888);
        // ACK on air 192 µs after the frame for 352 µs; the stale ACK-wait timer at 864 µs.
        expected.extend([cca, cca + us(128), on_air, end, end + us(192)]);
        expected.extend([end + us(544), end + us(864)]);
        arrivals.push(end);
        t = end + us(544) + mac::LIFS;
    }
    expected.sort();
    expected.dedup();
    assert_eq!(timeline(&mut mesh), (expected, arrivals));
    assert_eq!(mac::LIFS, us(640));
}

#[test]
fn a_relay_waits_a_sifs_after_its_own_ack_before_forwarding() {
    // Chain 0 (border router) – 1 (server) – 2 – 3, 10 m apart: client 3's datagram is
    // relayed by 2. Node 2 finishes receiving at `end`, ACKs it from end + 192 to end + 544 µs,
    // and its own frame follows its ACK by at least macMinSIFSPeriod (an ACK is 5 B ≤ 18:
    // 12 symbols = 192 µs): its CSMA/CA starts at end + 736 µs (before the fix: at `end`,
    // a transmission due during its ACK counting as a busy CCA, one right after it not).
    let seed = 3;
    let config = MeshConfig {
        layout: Layout::chain(4, 10.0).unwrap(),
        params: MeshParams::default(),
    };
    let mut mesh = Mesh::new(&config, seed).unwrap();
    let us = Duration::from_micros;
    let first_cca = |node: u16| {
        let mut rng = crate::rng::stream(seed, &format!("mesh/mac/node{node}"));
        let _first_seq = rng.below(256);
        us(320 * rng.below(8) as i64)
    };
    send_up(&mut mesh, Instant::ZERO, 1, 11, 0);
    let on_air = Instant::ZERO + first_cca(3) + us(128 + 192);
    let (seen, arrivals) = timeline(&mut mesh);
    // The first event after the client's frame goes on air is its end at the relay.
    let end = *seen.iter().find(|&&t| t > on_air).unwrap();
    let relay_cca = end + us(192 + 352) + mac::SIFS + first_cca(2);
    let relay_on_air = relay_cca + us(128 + 192);
    let i = seen.iter().position(|&t| t == relay_cca).unwrap();
    assert_eq!(&seen[i..i + 2], &[relay_cca, relay_cca + us(128)]);
    assert!(seen.contains(&relay_on_air));
    // The relay's frame reaches the server after its whole airtime.
    let s = mesh.stats(Direction::Up);
    let first_psdu = (end - on_air).as_micros() / 32 - 6;
    let relay_psdu = s.frame_bytes as i64 - first_psdu;
    assert_eq!(arrivals, vec![relay_on_air + us(32 * (6 + relay_psdu))]);
    assert_eq!((s.frames_sent, s.retries), (2, 0));
    assert_eq!(mac::SIFS, us(192));
}

/// Border router 8 m left of the server, the client `spacing_m` (5–10 m) right of it: the
/// client's only neighbour is the server, its parent. UDGM ratios 0.5/0.5.
fn lossy_pair(spacing_m: f64, mac_ack_request: bool) -> MeshConfig {
    let params = MeshParams {
        success_ratio_tx: 0.5,
        success_ratio_rx: 0.5,
        mac_ack_request,
        ..MeshParams::default()
    };
    let node = |x_m, role| Node {
        x_m,
        y_m: 0.0,
        role,
    };
    let nodes = vec![
        node(-8.0, Role::BorderRouter),
        node(0.0, Role::Server),
        node(spacing_m, Role::Client),
    ];
    MeshConfig {
        layout: Layout::explicit(nodes).unwrap(),
        params,
    }
}

#[test]
fn without_ack_requests_a_frame_goes_on_air_once_and_nothing_follows() {
    // Contiki 3.0 NullRDC on Sky/Z1 (NULLRDC_802154_AUTOACK 0): no ACK request, no ACK on
    // air, no ACK wait: the frame of one_hop_frame_timeline_is_exact is the last event.
    let mut config = chain3();
    config.params.mac_ack_request = false;
    let mut mesh = Mesh::new(&config, 7).unwrap();
    send_up(&mut mesh, Instant::from_millis(5), 0, 11, 9);
    let delivered = drain(&mut mesh);
    assert_eq!(delivered.len(), 1);
    assert_eq!(mesh.poll_at(), None);
    let s = mesh.stats(Direction::Up);
    assert_eq!((s.frames_sent, s.retries, s.frames_lost), (1, 0, 0));
    assert_eq!(mesh.medium_stats().transmissions, 1);
}

/// Sends `n` one-frame datagrams from the client to the server, one at a time.
fn one_at_a_time(mesh: &mut Mesh, n: u32) -> u32 {
    let mut delivered = 0;
    for k in 0..n {
        send_up(mesh, Instant::from_secs(i64::from(k)), 0, 11, 1);
        delivered += drain(mesh).len() as u32;
    }
    delivered
}

#[test]
fn with_ratios_of_one_half_at_the_range_a_frame_gets_through_with_a_quarter() {
    // UDGM.createConnections: one TX draw (0.5), then getRxSuccessProbability at d = R: 0.5.
    // Without ACK requests each frame is sent once: delivered ~ Binomial(4,000, 0.25), sd 27.
    let n = 4_000;
    let mut mesh = Mesh::new(&lossy_pair(10.0, false), 3).unwrap();
    let delivered = one_at_a_time(&mut mesh, n);
    let s = mesh.stats(Direction::Up);
    assert_eq!((s.frames_sent, s.retries, s.no_ack_failures), (4_000, 0, 0));
    assert_eq!(s.frames_lost, u64::from(n - delivered));
    assert_eq!(mesh.medium_stats().transmissions, 4_000, "no ACK on air");
    assert!((890..=1_110).contains(&delivered), "{delivered}");
}

#[test]
fn an_ack_passes_the_medium_like_any_frame() {
    // MSPSim's CC2420 sends its auto-ACK through the same RF listener as data, so Cooja's
    // UDGM draws TX and RX for it too: P(ACK decoded) = SUCCESS_RATIO_TX × (1 − (d/R)² (1 −
    // SUCCESS_RATIO_RX)) = 0.5 × 0.5 = 0.25 at d = R, 0.5 × 0.875 = 0.4375 at d = R/2.
    for (spacing_m, p_ack) in [(10.0, 0.25), (5.0, 0.4375)] {
        let mut mesh = Mesh::new(&lossy_pair(spacing_m, true), 5).unwrap();
        let _ = one_at_a_time(&mut mesh, 2_000);
        let s = mesh.stats(Direction::Up);
        // Every decoded data frame (duplicates too) makes the server send an ACK (it is never
        // transmitting here); an attempt ends acknowledged iff that ACK is decoded.
        let acks = mesh.medium_stats().transmissions - s.frames_sent;
        let acked = s.frames_sent - s.retries - s.no_ack_failures;
        let ratio = acked as f64 / acks as f64;
        // acks is ~1,500 at d = R, so the sd of the ratio is below 0.013.
        assert!((ratio - p_ack).abs() < 0.05, "{spacing_m} m: {ratio}");
        // The data frame itself: the same probability.
        let p_data = acks as f64 / s.frames_sent as f64;
        assert!((p_data - p_ack).abs() < 0.05, "{spacing_m} m: {p_data}");
    }
}

#[test]
fn advance_handles_the_same_events_as_polling_every_instant() {
    // A run loop that asks `advance` (the lab's mesh loop) and one that wakes at every
    // `poll_at` instant see the same deliveries at the same instants, leave the mesh in the
    // same state, and stop their clocks at the same instant: a client (in turn) sends every
    // 4 ms, the server answers each request, 3 s, both MACs with ACKs (queues, collisions,
    // retries, RPL's control traffic).
    for mac in [Discipline::Ieee802154, Discipline::ContikiCsma] {
        let mut config = MeshConfig {
            layout: Layout::grid(4, 4, 10.0).unwrap(),
            params: MeshParams::default(),
        };
        config.params.mac = mac;
        let run = |lazy: bool| {
            let mut mesh = Mesh::new(&config, 5).unwrap();
            let (mut buf, mut log) = (Vec::new(), Vec::new());
            let end = Instant::from_millis(3_000);
            let (mut now, mut next_send, mut k) = (Instant::ZERO, Instant::ZERO, 0u64);
            loop {
                let next = if lazy {
                    mesh.advance(next_send.min(end)).unwrap_or(next_send)
                } else {
                    mesh.poll_at().map_or(next_send, |t| t.min(next_send))
                };
                if next > end {
                    break;
                }
                now = next;
                while let Some(d) = mesh.poll_delivery(now, &mut buf) {
                    log.push((d.at, d.src, d.dst, d.tag));
                    if d.dst == SERVER_ADDR {
                        let _ = mesh.send(now, SERVER_ADDR, d.src, &mut buf.clone(), d.tag);
                    }
                }
                if now == next_send {
                    let _ = mesh.send(
                        now,
                        client_addr((k % 14) as u32),
                        SERVER_ADDR,
                        &mut vec![0; 60],
                        k,
                    );
                    (next_send, k) = (now + Duration::from_millis(4), k + 1);
                }
            }
            let clock = if lazy { now.max(mesh.clock()) } else { now };
            let stats = (mesh.stats(Direction::Up), mesh.stats(Direction::Down));
            (
                log,
                clock,
                mesh.events_scheduled(),
                stats,
                mesh.medium_stats(),
            )
        };
        let (polled, advanced) = (run(false), run(true));
        assert!(
            polled.0.len() > 40,
            "{mac:?}: {} deliveries",
            polled.0.len()
        );
        assert!(polled.3 .0.retries > 0, "{mac:?}: {:?}", polled.3);
        assert!(polled.1 > Instant::from_millis(2_990), "{mac:?}");
        assert_eq!(polled, advanced, "{mac:?}");
    }
}
