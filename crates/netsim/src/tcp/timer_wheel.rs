//! When Linux's TCP timers really fire: the kernel's timer wheel
//! (`kernel/time/timer.c`, `calc_wheel_index` / `calc_index`, Linux ≥ 4.8) files a timer into
//! a bucket whose granularity grows with the distance to its expiry and fires it at the
//! bucket's end, never early. TCP arms its retransmission timer and its delayed-ACK timer
//! (`sk_reset_timer` on `icsk_retransmit_timer` / `icsk_delack_timer`) and the SYN-ACK timer
//! of a request socket (`mod_timer`) on that wheel; the model applies [`expiry`] to all of them
//! when `timer_wheel_hz` is set (default 250). A delayed ACK of 200 ms (50 jiffies, level 0)
//! fires 1 jiffy after its expiry jiffy, an RTO of a few seconds up to 256 ms late and one of
//! 16–129 s up to 2.048 s late (HZ = 250) — and every
//! socket whose timer falls into the same bucket fires in the same jiffy. Many connections
//! that time out together (a burst of losses at a full bottleneck) therefore retransmit
//! together, as one burst into the queue that just dropped them (docs/calibration.md,
//! "The kernel as TCP oracle", item 3).
//!
//! The model's jiffy 0 is simulated time 0 (the kernel's phase of the lattice is arbitrary:
//! `INITIAL_JIFFIES` and boot time), and the wheel's clock is the current jiffy (the kernel's
//! `base->clk`, forwarded to `jiffies` when a timer is armed).

use crate::link::serializer::div_rem;
use coaplab_base::time::{Duration, Instant};

/// `LVL_CLK_SHIFT`: each level is 8 times coarser than the one below.
const LVL_CLK_SHIFT: u32 = 3;
/// `LVL_BITS`: 64 buckets per level.
const LVL_SIZE: u64 = 64;
/// `LVL_DEPTH` for HZ > 100 (8 levels at HZ ≤ 100).
const LVL_DEPTH: u32 = 9;

/// `LVL_START(n)`: the smallest distance (jiffies) filed at level `n` (n ≥ 1).
fn lvl_start(n: u32) -> u64 {
    (LVL_SIZE - 1) << ((n - 1) * LVL_CLK_SHIFT)
}

/// The instant a timer armed at `now` to expire `timeout` later fires on a Linux kernel with
/// `hz` jiffies per second (`CONFIG_HZ`): the expiry in jiffies is `jiffies(now)` plus the
/// timeout rounded up to whole jiffies (`usecs_to_jiffies`), filed at the level `l` whose
/// range holds that distance, and fired at `((expires >> 3l) + 1) << 3l`. `hz = 0` is an
/// exact timer: `now + timeout`.
#[inline]
pub fn expiry(now: Instant, timeout: Duration, hz: u32) -> Instant {
    if hz == 0 {
        return now + timeout;
    }
    let hz = u64::from(hz);
    let ns = 1_000_000_000u64;
    let clk = mul_div(now.as_nanos().max(0) as u64, hz, ns, false);
    let delta = mul_div(timeout.as_nanos().max(0) as u64, hz, ns, true);
    let max_depth = if hz > 100 { LVL_DEPTH } else { LVL_DEPTH - 1 };
    // The wheel's capacity: longer timeouts fire at its limit (`WHEEL_TIMEOUT_MAX`).
    let cutoff = lvl_start(max_depth);
    let mut expires = clk + delta;
    let level = (1..max_depth).find(|&n| delta < lvl_start(n)).map_or_else(
        || {
            if delta >= cutoff {
                expires = clk + cutoff - (1 << ((max_depth - 1) * LVL_CLK_SHIFT));
            }
            max_depth - 1
        },
        |n| n - 1,
    );
    let shift = level * LVL_CLK_SHIFT;
    let bucket = ((expires >> shift) + 1) << shift;
    Instant::from_nanos(mul_div(bucket, ns, hz, true) as i64)
}

/// `a * b / c`, rounded up when `ceil`, the same value as in `u128`: the product in `u128`
/// (one multiply), the division by the link serializer's [`div_rem`], which divides in `u64`
/// when the operands fit (instants and timeouts below 2 years at 250 Hz). A `u128` division is
/// a library call (`__udivti3`); three per timer armed cost ~20 instructions per link packet
/// (tcp-100 star, callgrind).
#[inline]
fn mul_div(a: u64, b: u64, c: u64, ceil: bool) -> u64 {
    let (q, r) = div_rem(u128::from(a) * u128::from(b), u128::from(c));
    (q + u128::from(ceil && r > 0)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mul_div_is_the_wide_quotient_whether_or_not_the_product_fits() {
        let wide = |a: u64, b: u64, c: u64, ceil: bool| {
            let (p, c) = (u128::from(a) * u128::from(b), u128::from(c));
            (if ceil { p.div_ceil(c) } else { p / c }) as u64
        };
        for (a, b, c) in [
            (0, 250, 1_000_000_000),
            (1_999_999_999, 250, 1_000_000_000),
            (u64::MAX / 250, 250, 1_000_000_000),
            (u64::MAX / 250 + 1, 250, 1_000_000_000),
            (i64::MAX as u64, 1000, 1_000_000_000),
            (123_457, 1_000_000_000, 250),
        ] {
            for ceil in [false, true] {
                assert_eq!(
                    mul_div(a, b, c, ceil),
                    wide(a, b, c, ceil),
                    "{a} {b} {c} {ceil}"
                );
            }
        }
    }

    fn at(ms: i64) -> Instant {
        Instant::from_millis(ms)
    }

    #[test]
    fn zero_hz_is_an_exact_timer() {
        let t = expiry(at(1234), Duration::from_millis(1500), 0);
        assert_eq!(t, at(2734));
    }

    #[test]
    fn hz_250_levels_round_up_to_their_granularity() {
        // HZ 250: a jiffy is 4 ms. Level 0 (< 63 jiffies, 252 ms): one jiffy past the expiry.
        assert_eq!(expiry(at(0), Duration::from_millis(200), 250), at(204));
        // Level 1 (63..504 jiffies, up to 2.016 s): 8 jiffies = 32 ms buckets.
        // 1.5 s = 375 jiffies -> ((375 >> 3) + 1) << 3 = 376 -> 1.504 s.
        assert_eq!(expiry(at(0), Duration::from_millis(1500), 250), at(1504));
        // Level 2 (504..4032 jiffies, up to 16.128 s): 64 jiffies = 256 ms buckets.
        // 3 s = 750 jiffies -> 768 -> 3.072 s.
        assert_eq!(expiry(at(0), Duration::from_secs(3), 250), at(3072));
        // Level 3 (4032..32256 jiffies, up to 129.024 s): 512 jiffies = 2.048 s buckets.
        // 24 s = 6000 jiffies -> 6144 -> 24.576 s.
        assert_eq!(expiry(at(0), Duration::from_secs(24), 250), at(24_576));
        // Level 4 (from 129.024 s): 4096 jiffies = 16.384 s buckets... but 120 s is level 3.
        // 120 s = 30000 jiffies -> 30208 -> 120.832 s.
        assert_eq!(expiry(at(0), Duration::from_secs(120), 250), at(120_832));
        assert_eq!(expiry(at(0), Duration::from_secs(130), 250), at(131_072));
    }

    #[test]
    fn timers_armed_apart_fire_together() {
        // Two 3-s timers armed 60 ms apart (expiring at jiffies 1067 and 1082) share one
        // 256-ms bucket: both fire at 4.352 s (jiffy 1088 = 17 × 64), as the kernel's
        // retransmissions of item 3 do; one armed 90 ms later (jiffy 1105) fires a bucket on.
        let a = expiry(at(1270), Duration::from_secs(3), 250);
        let b = expiry(at(1330), Duration::from_secs(3), 250);
        let c = expiry(at(1420), Duration::from_secs(3), 250);
        assert_eq!(a, at(4352));
        assert_eq!(b, at(4352));
        assert_eq!(c, at(4608));
        // The fire instant is never before the exact expiry.
        for ms in (0..5000).step_by(7) {
            for rto in [200, 1000, 2900, 6000, 48_000] {
                let exact = at(ms) + Duration::from_millis(rto);
                assert!(expiry(at(ms), Duration::from_millis(rto), 250) >= exact);
            }
        }
    }

    #[test]
    fn the_phase_counts_from_the_current_jiffy() {
        // Armed mid-jiffy (1.001 s = jiffy 250 + 1 ms): the distance still counts from jiffy
        // 250; 3 s -> expires 1000, bucket ((1000 >> 6) + 1) << 6 = 1024 -> 4.096 s.
        assert_eq!(expiry(at(1001), Duration::from_secs(3), 250), at(4096));
        // HZ 1000 (1-ms jiffies): 3 s is level 2 there (512..4095 ms), 64-ms buckets.
        assert_eq!(expiry(at(1001), Duration::from_secs(3), 1000), at(4032));
    }
}
