//! `timer_wheel_hz`: the retransmission and delayed-ACK timers fire at the end of their Linux
//! timer-wheel bucket (docs/calibration.md, "The kernel as TCP oracle", item 3), not at
//! `now + rto` / `now + delack`. On [`TcpConfig::idealised`] with only `timer_wheel_hz` set, so
//! that the wheel alone moves the instants.

use crate::tcp_util::{nbiot, transfer_observed, Pair};
use coaplab_netsim::tcp::TcpConfig;

/// The instants (µs) of the server's RTO expiries over 60 segments on nbiot with segments 11,
/// 27 and 42 lost (the `tcp_rto_backoff` transfer), and every deadline its timer was armed for.
fn timeouts(hz: u32) -> (Vec<i64>, Vec<i64>) {
    let (up, mut down) = nbiot();
    down.drops = vec![11, 27, 42];
    let cfg = TcpConfig {
        timer_wheel_hz: hz,
        ..TcpConfig::idealised()
    };
    let mut p = Pair::new(cfg, up, down);
    let (mut fired, mut deadlines, mut rtos) = (Vec::new(), Vec::new(), 0);
    transfer_observed(&mut p, 60 * 256, |p| {
        if p.server.stats().rto_count > rtos {
            rtos = p.server.stats().rto_count;
            fired.push(p.now.as_micros());
        }
        if let Some(t) = p.server.poll_timeout() {
            if deadlines.last() != Some(&t.as_micros()) {
                deadlines.push(t.as_micros());
            }
        }
    });
    (fired, deadlines)
}

#[test]
fn rto_deadlines_lie_on_the_hz_250_wheel() {
    // Exact timers: the RTO armed at 3.179133 s with 1.976199 s fires at 5.155332 s, a second
    // (backed off) at 9.107730 s.
    let (exact_fired, _) = timeouts(0);
    assert_eq!(exact_fired, [5_155_332, 9_107_730]);
    // HZ 250: the same timer is jiffy 794 + 495 = 1289, level 1 (8-jiffy buckets), so it fires
    // at jiffy 1296 = 5.184 s; the retransmission 28.7 ms later changes the rest of the
    // transfer, which now ends without a second timeout.
    let (wheel_fired, deadlines) = timeouts(250);
    assert_eq!(wheel_fired, [5_184_000]);
    // Every deadline the server's timers were armed for is a bucket end: the RTO's are 32-ms
    // buckets below 2.016 s of distance, 256-ms ones above (after the timeout doubled the RTO);
    // the delayed ACK of the client's request, armed at 0.872466 s (jiffy 218) for 200 ms
    // (50 jiffies, level 0), fires at jiffy 269 = 1.076 s, not at 1.072466 s as an exact
    // timer would.
    assert_eq!(
        deadlines,
        [
            2_240_000, 1_076_000, 2_816_000, 3_552_000, 3_744_000, 4_320_000, 4_512_000, 4_704_000,
            5_184_000, 9_216_000, 9_984_000, 10_752_000, 8_832_000, 9_024_000, 9_472_000,
            9_984_000, 10_240_000, 10_496_000
        ]
    );
    for d in deadlines.iter().filter(|&&d| d != 1_076_000) {
        assert_eq!(d % 32_000, 0, "{d}");
    }
    assert_eq!(1_076_000 % 4_000, 0);
}

/// The delayed-ACK timer on the wheel (`icsk_delack_timer`, `sk_reset_timer`): the 100-B
/// transfer of `tcp_loss`'s delayed-ACK test, without quick-ACK so that the timer decides.
/// The server's CSM reaches the client at 1.292533 s (jiffy 323 of 4 ms): 200 ms = 50
/// jiffies, level 0, expires at jiffy 373 and fires at its bucket end, jiffy 374 = 1.496 s
/// (an exact timer: 1.492533 s). The 100-B response (1.3308 s) does not push it back.
#[test]
fn the_delayed_ack_fires_at_its_wheel_bucket_end() {
    let client_acks = |hz: u32| {
        let (up, down) = nbiot();
        let cfg = TcpConfig {
            timer_wheel_hz: hz,
            ..TcpConfig::idealised()
        };
        let mut p = Pair::new(cfg, up, down);
        crate::tcp_util::transfer(&mut p, 100);
        assert_eq!(p.client_rx[0].0.as_micros(), 1_292_533);
        assert_eq!(p.client_rx[1].0.as_micros(), 1_330_800);
        p.log
            .iter()
            .filter(|l| l.contains(" C ACK"))
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(
        client_acks(0),
        ["646000 C ACK 1 1 0", "1492533 C ACK 12 103 0"]
    );
    assert_eq!(
        client_acks(250),
        ["646000 C ACK 1 1 0", "1496000 C ACK 12 103 0"]
    );
}
