//! `timer_wheel_hz`: the retransmission timer fires at the end of its Linux timer-wheel bucket
//! (docs/calibration.md, "The kernel as TCP oracle", item 3), not at `now + rto`.

use crate::tcp_util::{nbiot, transfer_observed, Pair};
use coaplab_netsim::tcp::TcpConfig;

/// The instants (µs) of the server's RTO expiries over 60 segments on nbiot with segments 11,
/// 27 and 42 lost (the `tcp_rto_backoff` transfer), and every deadline its timer was armed for.
fn timeouts(hz: u32) -> (Vec<i64>, Vec<i64>) {
    let (up, mut down) = nbiot();
    down.drops = vec![11, 27, 42];
    let cfg = TcpConfig {
        timer_wheel_hz: hz,
        ..TcpConfig::default()
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
    // Every deadline the server's timer was armed for is a bucket end: 32-ms buckets below
    // 2.016 s of distance, 256-ms ones above (after the timeout doubled the RTO) — except the
    // delayed ACK of the client's request (1.072466 s), which is not on the modelled wheel.
    assert_eq!(
        deadlines,
        [
            2_240_000, 1_072_466, 2_816_000, 3_552_000, 3_744_000, 4_320_000, 4_512_000, 4_704_000,
            5_184_000, 9_216_000, 9_984_000, 10_752_000, 8_832_000, 9_024_000, 9_472_000,
            9_984_000, 10_240_000, 10_496_000
        ]
    );
    for d in deadlines.iter().filter(|&&d| d != 1_072_466) {
        assert_eq!(d % 32_000, 0, "{d}");
    }
}
