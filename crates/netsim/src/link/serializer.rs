//! Stage 2 of a link direction: the serializer at `rate_bps` (docs/experiments.md §1.1 item 2).
//!
//! **Rounding.** A packet of `w` charged bytes occupies the link for exactly `8·w/R` seconds,
//! usually not a whole number of nanoseconds (295 B at 30 kbit/s = 78,666,666.67 ns). The
//! serializer keeps the instant the link becomes free as an exact rational
//! (`free_at + rem/R` ns, `0 ≤ rem < R`) and carries the remainder across back-to-back packets,
//! so a busy period of n packets lasts exactly `Σ 8·w/R` with no drift. The instants it
//! reports are that exact value rounded **up** to the next nanosecond: a packet is never
//! released before its last bit. When the link goes idle the remainder is dropped (the next
//! packet starts at its integer arrival instant).
//!
//! **Burst.** With `burst_bytes > 0` the stage is a token bucket (tbf): tokens accrue at `R` up
//! to `burst_bytes`; a packet leaves the instant enough tokens are present, in zero time, and
//! spends `w` bytes of tokens. `burst_bytes = 0` is the pure serializer above (the default: the
//! first packet after idle pays its full transmission time).

use coaplab_base::time::{Duration, Instant};

/// Nanoseconds per second.
const NANOS_PER_SEC: u128 = 1_000_000_000;

/// Token units per byte in burst mode: one byte = 8 bits · 10^9, so tokens accrue exactly `R`
/// units per nanosecond.
const UNITS_PER_BYTE: u128 = 8 * NANOS_PER_SEC;

/// The serializer of one link direction.
#[derive(Debug, Clone)]
pub struct Serializer {
    rate_bps: u128,
    /// Token bucket depth in units (0 = pure serializer).
    bucket_units: u128,
    /// Integer part of the exact instant the link is free (pure mode) or of the last
    /// departure (burst mode).
    free_at: Instant,
    /// Fractional part of `free_at`, in units of `1/R` ns.
    rem: u128,
    /// Burst mode: tokens (in units) present at `free_at`.
    tokens: u128,
    /// Σ 8·w·10^9 over every packet: busy time × R, exact.
    busy_units: u128,
}

impl Serializer {
    /// A serializer at `rate_bps` (> 0) with a token bucket of `burst_bytes` (0 = off). The
    /// bucket starts full.
    pub fn new(rate_bps: u64, burst_bytes: u64) -> Self {
        let bucket_units = u128::from(burst_bytes) * UNITS_PER_BYTE;
        Serializer {
            rate_bps: u128::from(rate_bps.max(1)),
            bucket_units,
            free_at: Instant::from_nanos(i64::MIN),
            rem: 0,
            tokens: bucket_units,
            busy_units: 0,
        }
    }

    /// Serializes a packet of `charged_bytes` that reaches the head of the FIFO path at
    /// `arrival`; returns `(start, end)` of its transmission.
    pub fn transmit(&mut self, arrival: Instant, charged_bytes: u32) -> (Instant, Instant) {
        let cost = u128::from(charged_bytes) * UNITS_PER_BYTE;
        self.busy_units += cost;
        if self.bucket_units == 0 {
            self.transmit_paced(arrival, cost)
        } else {
            let at = self.transmit_bucket(arrival, cost);
            (at, at)
        }
    }

    /// Exact busy time so far (Σ 8·w/R, truncated to whole ns).
    pub fn busy_time(&self) -> Duration {
        Duration::from_nanos(clamp_i64(self.busy_units / self.rate_bps))
    }

    fn transmit_paced(&mut self, arrival: Instant, cost: u128) -> (Instant, Instant) {
        let idle = arrival > self.free_at || (arrival == self.free_at && self.rem == 0);
        if idle {
            self.free_at = arrival;
            self.rem = 0;
        }
        let start = ceil(self.free_at, self.rem);
        let total = self.rem + cost;
        let (whole_ns, rem) = div_rem(total, self.rate_bps);
        self.free_at += Duration::from_nanos(clamp_i64(whole_ns));
        self.rem = rem;
        (start, ceil(self.free_at, self.rem))
    }

    fn transmit_bucket(&mut self, arrival: Instant, cost: u128) -> Instant {
        let ready = arrival.max(self.free_at);
        let elapsed = (ready - self.free_at).as_nanos().max(0) as u128;
        let cap = self.bucket_units.max(cost);
        let tokens = self
            .tokens
            .saturating_add(elapsed.saturating_mul(self.rate_bps))
            .min(cap);
        let (depart, left) = if tokens >= cost {
            (ready, tokens - cost)
        } else {
            let short = cost - tokens;
            let wait = short.div_ceil(self.rate_bps);
            (
                ready + Duration::from_nanos(clamp_i64(wait)),
                wait * self.rate_bps - short,
            )
        };
        self.free_at = depart;
        self.tokens = left;
        depart
    }
}

/// `at + rem/R` rounded up to a whole nanosecond.
pub(crate) fn ceil(at: Instant, rem: u128) -> Instant {
    if rem == 0 {
        at
    } else {
        at + Duration::from_nanos(1)
    }
}

/// `(n / d, n % d)`, in 64-bit arithmetic when both fit (every packet of a real link: a
/// 128-bit division is a library call several times slower, and this is once per packet).
pub(crate) fn div_rem(n: u128, d: u128) -> (u128, u128) {
    match (u64::try_from(n), u64::try_from(d)) {
        (Ok(n), Ok(d)) => (u128::from(n / d), u128::from(n % d)),
        _ => (n / d, n % d),
    }
}

pub(crate) fn clamp_i64(x: u128) -> i64 {
    i64::try_from(x).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(x: i64) -> Instant {
        Instant::from_nanos(x)
    }

    #[test]
    fn division_in_64_bits_or_128_agrees() {
        for (n, d) in [
            (0u128, 1u128),
            (7, 3),
            (u128::from(u64::MAX), 30_000),
            (1 << 70, 30_000),
        ] {
            assert_eq!(div_rem(n, d), (n / d, n % d));
        }
    }

    #[test]
    fn nbiot_downlink_295_byte_packets_carry_the_remainder() {
        // 8·295/30000 s = 78,666,666.67 ns: each end rounds up, the busy period does not drift.
        let mut s = Serializer::new(30_000, 0);
        assert_eq!(s.transmit(ns(0), 295), (ns(0), ns(78_666_667)));
        assert_eq!(s.transmit(ns(0), 295), (ns(78_666_667), ns(157_333_334)));
        assert_eq!(s.transmit(ns(0), 295), (ns(157_333_334), ns(236_000_000)));
        assert_eq!(s.busy_time(), Duration::from_nanos(236_000_000));
    }

    #[test]
    fn idle_link_starts_at_arrival_and_drops_the_remainder() {
        let mut s = Serializer::new(30_000, 0);
        assert_eq!(s.transmit(ns(0), 295), (ns(0), ns(78_666_667)));
        // Arrives exactly when the rounded end is reached: the exact end (…666.67) has passed.
        assert_eq!(
            s.transmit(ns(78_666_667), 295),
            (ns(78_666_667), ns(157_333_334))
        );
        // Arrival inside the fractional nanosecond of a busy link: waits for the exact end.
        let mut s = Serializer::new(30_000, 0);
        s.transmit(ns(0), 295);
        assert_eq!(
            s.transmit(ns(78_666_666), 295),
            (ns(78_666_667), ns(157_333_334))
        );
        // Idle gap: the start is the arrival itself.
        assert_eq!(
            s.transmit(ns(1_000_000_000), 40),
            (ns(1_000_000_000), ns(1_010_666_667))
        );
    }

    #[test]
    fn token_bucket_releases_a_burst_then_paces() {
        // 1000 B bucket at 8000 bit/s (1 B per ms): three 400-B packets at t = 0.
        let mut s = Serializer::new(8_000, 1000);
        assert_eq!(s.transmit(ns(0), 400), (ns(0), ns(0)));
        assert_eq!(s.transmit(ns(0), 400), (ns(0), ns(0)));
        // 200 B of tokens left: waits 200 ms for the other 200 B.
        assert_eq!(s.transmit(ns(0), 400), (ns(200_000_000), ns(200_000_000)));
        // After 2 s idle the bucket is full again (capped at 1000 B).
        assert_eq!(
            s.transmit(ns(2_200_000_000), 1000),
            (ns(2_200_000_000), ns(2_200_000_000))
        );
        assert_eq!(
            s.transmit(ns(2_200_000_000), 1),
            (ns(2_201_000_000), ns(2_201_000_000))
        );
        assert_eq!(s.busy_time(), Duration::from_nanos(2_201_000_000));
    }
}
