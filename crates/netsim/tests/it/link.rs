//! Exact timelines of one link direction (docs/experiments.md §1.1).

use coaplab_base::rng::{Random, SeededRandom};
use coaplab_base::time::{Duration, Instant};
use coaplab_netsim::link::{Link, LinkConfig, LinkResult, LinkStreams};
use coaplab_netsim::{GeParams, LossModel, NetworkConfig, Preset};

fn ns(x: i64) -> Instant {
    Instant::from_nanos(x)
}

fn nbiot_down() -> LinkConfig {
    NetworkConfig::preset(Preset::Nbiot).down
}

fn link(config: &LinkConfig) -> Link {
    Link::new(config, LinkStreams::named(1, "down"))
}

fn delivered(ser_start: i64, ser_end: i64, at: i64) -> LinkResult {
    LinkResult::Delivered {
        ser_start: ns(ser_start),
        ser_end: ns(ser_end),
        at: ns(at),
    }
}

#[test]
fn nbiot_downlink_timeline_follows_the_netem_recurrence() {
    // tx(295 B) = 78,666,666.67 ns, tx(40 B) = 10,666,666.67 ns, D = 400 ms.
    // e_n = max(a_n + D, e_{n-1}) + tx_n, rounded up to the ns with the remainder carried.
    let mut l = link(&nbiot_down());
    let r = |o: coaplab_netsim::LinkOutcome| o.result;
    assert_eq!(
        r(l.offer(ns(0), 295)),
        delivered(0, 78_666_667, 478_666_667)
    );
    // Waits behind the first; exact end 157,333,333.33 → 157,333,334.
    assert_eq!(
        r(l.offer(ns(10_000_000), 295)),
        delivered(78_666_667, 157_333_334, 557_333_334)
    );
    // Idle link: starts at its own arrival.
    assert_eq!(
        r(l.offer(ns(500_000_000), 40)),
        delivered(500_000_000, 510_666_667, 910_666_667)
    );
    // Three back-to-back: the busy period lasts exactly 3 × 78.67 = 236 ms.
    assert_eq!(
        r(l.offer(ns(1_000_000_000), 295)),
        delivered(1_000_000_000, 1_078_666_667, 1_478_666_667)
    );
    assert_eq!(
        r(l.offer(ns(1_000_000_000), 295)),
        delivered(1_078_666_667, 1_157_333_334, 1_557_333_334)
    );
    assert_eq!(
        r(l.offer(ns(1_000_000_000), 295)),
        delivered(1_157_333_334, 1_236_000_000, 1_636_000_000)
    );
    let s = l.stats();
    assert_eq!(
        (s.sent_packets, s.sent_bytes, s.delivered_packets),
        (6, 1515, 6)
    );
    assert_eq!(s.busy_time, Duration::from_nanos(404_000_000));
}

#[test]
fn recurrence_holds_exactly_for_random_traffic() {
    // The serializer's rounding against an exact rational evaluation of the recurrence in
    // units of 1/R ns: delivery = ceil(E_n / R) where E_n = max(A_n + D, E_{n-1}) + 8·w·10^9.
    let config = nbiot_down();
    let r = i128::from(config.rate_bps);
    let d = i128::from(config.propagation.delay.as_nanos());
    let mut l = link(&LinkConfig {
        buffer_bytes: u64::MAX,
        ..config
    });
    let mut rng = SeededRandom::new(42);
    let mut a = 0i64;
    let mut e_prev = i128::MIN / 2;
    for _ in 0..20_000 {
        a += (rng.uniform01() * 150e6) as i64; // mean gap 75 ms ≈ one packet time
        let w = 28 + (rng.uniform01() * 268.0) as u32;
        let e = ((i128::from(a) + d) * r).max(e_prev) + i128::from(w) * 8_000_000_000;
        e_prev = e;
        let expected = (e + r - 1).div_euclid(r) as i64;
        match l.offer(ns(a), w).result {
            LinkResult::Delivered { at, .. } => assert_eq!(at, ns(expected)),
            other => panic!("unexpected {other:?}"),
        }
    }
}

#[test]
fn overflow_counts_the_packet_in_service() {
    // 600-B buffer, 295-B packets at t = 0: A in service (295), B waits (590), C would make 885.
    let config = LinkConfig {
        buffer_bytes: 600,
        ..nbiot_down()
    };
    let mut l = link(&config);
    let a = l.offer(ns(0), 295);
    assert_eq!((a.backlog_bytes, a.backlog_packets), (0, 0));
    let b = l.offer(ns(0), 295);
    assert_eq!((b.backlog_bytes, b.backlog_packets), (295, 1));
    let c = l.offer(ns(0), 295);
    assert_eq!((c.backlog_bytes, c.result), (590, LinkResult::Overflow));
    // One ns before A's rounded end, A still occupies the buffer.
    assert_eq!(l.offer(ns(78_666_666), 295).result, LinkResult::Overflow);
    // At A's end it has left: D is admitted behind B.
    let d = l.offer(ns(78_666_667), 295);
    assert_eq!(d.backlog_bytes, 295);
    assert_eq!(d.result, delivered(157_333_334, 236_000_000, 636_000_000));
    let s = l.stats();
    assert_eq!(
        (s.offered_packets, s.overflow_drops, s.sent_packets),
        (5, 2, 3)
    );
    assert_eq!(
        (s.queue_high_water_bytes, s.queue_high_water_packets),
        (590, 2)
    );
}

#[test]
fn without_count_in_service_the_serialized_packet_frees_its_space() {
    let config = LinkConfig {
        buffer_bytes: 600,
        count_in_service: false,
        ..nbiot_down()
    };
    let mut l = link(&config);
    l.offer(ns(0), 295); // starts at once: leaves the backlog at t = 0
    assert_eq!(l.offer(ns(0), 295).backlog_bytes, 0);
    let c = l.offer(ns(0), 295);
    assert_eq!(c.backlog_bytes, 295);
    assert_eq!(c.result, delivered(157_333_334, 236_000_000, 636_000_000));
    assert_eq!(l.offer(ns(0), 295).result, LinkResult::Overflow);
}

#[test]
fn overhead_is_charged_by_serializer_and_queue() {
    // zigbee: 88-B IP packet + 14 B = 102 B at 20 kbit/s = 40.8 ms; 20 ms propagation.
    let config = NetworkConfig::preset(Preset::Zigbee).up;
    let mut l = link(&config);
    let o = l.offer(ns(0), 88);
    assert_eq!(o.charged_bytes, 102);
    assert_eq!(o.result, delivered(0, 40_800_000, 60_800_000));
    // 512-B buffer: 102 (in service) + 4 × 102 = 510 fits, a sixth does not.
    for _ in 0..4 {
        assert_ne!(l.offer(ns(0), 88).result, LinkResult::Overflow);
    }
    assert_eq!(l.offer(ns(0), 88).result, LinkResult::Overflow);
    // Without queue_counts_overhead the queue charges 88: 6 × 88 = 528 > 512 still, 5 fit.
    let mut l = link(&LinkConfig {
        queue_counts_overhead: false,
        ..config
    });
    let results: Vec<bool> = (0..6)
        .map(|_| l.offer(ns(0), 88).result == LinkResult::Overflow)
        .collect();
    assert_eq!(results, [false, false, false, false, false, true]);
    assert_eq!(l.stats().sent_charged_bytes, 5 * 102);
}

#[test]
fn a_lost_packet_still_delays_the_next_one() {
    // Gilbert-Elliott with certain transitions: GOOD loses every packet, BAD none, and the
    // chain flips every packet — so packets alternate lost, delivered whatever the draws.
    let config = LinkConfig {
        loss: LossModel::GilbertElliott(GeParams {
            p: 1.0,
            r: 1.0,
            loss_bad: 0.0,
            loss_good: 1.0,
        }),
        ..nbiot_down()
    };
    let mut l = link(&config);
    assert_eq!(
        l.offer(ns(0), 295).result,
        LinkResult::Lost {
            ser_start: ns(0),
            ser_end: ns(78_666_667),
            at: ns(478_666_667),
        }
    );
    assert_eq!(
        l.offer(ns(0), 295).result,
        delivered(78_666_667, 157_333_334, 557_333_334)
    );
    let s = l.stats();
    assert_eq!((s.link_error_drops, s.delivered_packets), (1, 1));
    assert_eq!(s.busy_time, Duration::from_nanos(157_333_333));
}

#[test]
fn same_seed_same_outcomes_other_seed_other_losses() {
    let config = LinkConfig {
        buffer_bytes: 5_000,
        loss: LossModel::profile("high").unwrap(),
        ..nbiot_down()
    };
    let run = |seed: u64| {
        let mut l = Link::new(&config, LinkStreams::named(seed, "down"));
        (0..5_000i64)
            .map(|i| l.offer(ns(i * 50_000_000), 40 + (i % 7) as u32 * 30).result)
            .collect::<Vec<_>>()
    };
    assert_eq!(run(9), run(9));
    assert_ne!(run(9), run(10));
}

#[test]
fn ctmc_decides_with_the_state_at_loss_stage_entry() {
    // Burst loses everything, low-error nothing: the link's losses must be exactly the packets
    // whose entry instant (ser_end + 400 ms) falls in a burst of the same chain.
    use coaplab_netsim::link::loss::{Ctmc, CtmcParams};
    let params = CtmcParams {
        loss_good: 0.0,
        loss_burst: 1.0,
        ..CtmcParams::MEDIUM
    };
    let config = LinkConfig {
        buffer_bytes: u64::MAX,
        loss: LossModel::Ctmc(params),
        ..nbiot_down()
    };
    let streams = LinkStreams::named(4, "down");
    let mut reference = Ctmc::new(params, streams.loss_chain.clone(), streams.loss.clone());
    let mut l = Link::new(&config, streams);
    let (mut lost, mut kept) = (0, 0);
    for i in 0..20_000i64 {
        match l.offer(ns(i * 100_000_000), 40).result {
            LinkResult::Lost { at, .. } => {
                assert!(reference.in_burst(at));
                lost += 1;
            }
            LinkResult::Delivered { at, .. } => {
                assert!(!reference.in_burst(at));
                kept += 1;
            }
            LinkResult::Overflow => unreachable!("unlimited buffer"),
        }
    }
    // π_B = 0.2 over 2,000 s: both states were visited many times.
    assert!(lost > 2_000 && kept > 10_000, "lost {lost}, kept {kept}");
}
