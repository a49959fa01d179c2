//! The Trickle timer (RFC 6206) that paces DIOs, with ContikiRPL's parameters and its way of
//! picking `t` (Contiki 3.0 `core/net/rpl/rpl-timers.c`, `new_dio_interval` and
//! `handle_dio_timer`).
//!
//! An interval of length `I` starts with `c = 0` and a transmission instant `t` drawn
//! uniformly in `[I/2, I)`. A consistent DIO heard during the interval increments `c`; at `t`
//! the node transmits unless `c ≥ k` (suppression, `k` = redundancy; `k = 0` never
//! suppresses). At the interval's end `I` doubles, up to `Imin · 2^doublings`. An
//! inconsistency resets `I` to `Imin` and starts a new interval — unless `I` is already `Imin`
//! (RFC 6206 §4.2 rule 6; Contiki's `rpl_reset_dio_timer` does the same).
//!
//! Sans-IO: [`Trickle::poll_at`] is the next instant the timer needs; at that instant
//! [`Trickle::on_timer`] says whether to transmit now. Randomness: one
//! [`Random::below`]`(I/2 in ms)` draw per interval, so `t` is a whole number of milliseconds
//! (Contiki draws in clock ticks).

use coaplab_base::rng::Random;
use coaplab_base::time::{Duration, Instant};

/// Trickle parameters (RFC 6206 §4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrickleParams {
    /// `Imin` as a power of two of milliseconds.
    pub interval_min_log2_ms: u32,
    /// How often `I` may double (`Imax = Imin · 2^doublings`).
    pub doublings: u32,
    /// Redundancy constant `k` (0: never suppress).
    pub redundancy: u32,
}

impl TrickleParams {
    /// Contiki 3.0's RPL defaults (`core/net/rpl/rpl-conf.h`): `RPL_DIO_INTERVAL_MIN` 12
    /// (4.096 s), `RPL_DIO_INTERVAL_DOUBLINGS` 8 (`Imax` = 1048.576 s), `RPL_DIO_REDUNDANCY` 10.
    pub const CONTIKI: TrickleParams = TrickleParams {
        interval_min_log2_ms: 12,
        doublings: 8,
        redundancy: 10,
    };

    /// `Imin` in milliseconds.
    pub fn interval_min_ms(&self) -> i64 {
        1i64 << self.interval_min_log2_ms.min(40)
    }
}

/// One node's Trickle timer.
#[derive(Debug, Clone)]
pub struct Trickle {
    params: TrickleParams,
    /// `I` as a power of two of milliseconds.
    interval_log2_ms: u32,
    interval_start: Instant,
    /// The transmission instant `t` of this interval (`None` once passed).
    fire_at: Option<Instant>,
    /// Consistent messages heard this interval.
    counter: u32,
    /// Transmissions made and suppressed so far.
    sent: u64,
    suppressed: u64,
}

impl Trickle {
    /// A timer whose first interval (`I = Imin`) starts at `now`.
    pub fn start(params: TrickleParams, now: Instant, rng: &mut impl Random) -> Trickle {
        let mut t = Trickle {
            params,
            interval_log2_ms: params.interval_min_log2_ms,
            interval_start: now,
            fire_at: None,
            counter: 0,
            sent: 0,
            suppressed: 0,
        };
        t.new_interval(now, rng);
        t
    }

    fn interval(&self) -> Duration {
        Duration::from_millis(1i64 << self.interval_log2_ms.min(40))
    }

    fn new_interval(&mut self, now: Instant, rng: &mut impl Random) {
        self.interval_start = now;
        self.counter = 0;
        let half_ms = (1u64 << self.interval_log2_ms.min(40)) / 2;
        let t_ms = half_ms + rng.below(half_ms.max(1));
        self.fire_at = Some(now + Duration::from_millis(t_ms as i64));
    }

    /// The current interval length `I`.
    pub fn current_interval(&self) -> Duration {
        self.interval()
    }

    /// (transmissions, suppressions) so far.
    pub fn counts(&self) -> (u64, u64) {
        (self.sent, self.suppressed)
    }

    /// The next instant the timer needs: `t`, or the interval's end.
    pub fn poll_at(&self) -> Instant {
        self.fire_at
            .unwrap_or(self.interval_start + self.interval())
    }

    /// A consistent transmission was heard (RFC 6206 §4.2 rule 3).
    pub fn hear_consistent(&mut self) {
        self.counter = self.counter.saturating_add(1);
    }

    /// An inconsistency (rule 6): back to `Imin` unless already there.
    pub fn reset(&mut self, now: Instant, rng: &mut impl Random) {
        if self.interval_log2_ms > self.params.interval_min_log2_ms {
            self.interval_log2_ms = self.params.interval_min_log2_ms;
            self.new_interval(now, rng);
        }
    }

    /// Called at [`Trickle::poll_at`]; `true`: transmit now.
    pub fn on_timer(&mut self, now: Instant, rng: &mut impl Random) -> bool {
        if let Some(t) = self.fire_at {
            if now < t {
                return false;
            }
            self.fire_at = None;
            let k = self.params.redundancy;
            if k == 0 || self.counter < k {
                self.sent += 1;
                return true;
            }
            self.suppressed += 1;
            return false;
        }
        if now < self.interval_start + self.interval() {
            return false;
        }
        // The next interval starts where this one ended, not at `now`, so a late poll does not
        // drift the schedule.
        let end = self.interval_start + self.interval();
        let max = self.params.interval_min_log2_ms + self.params.doublings;
        if self.interval_log2_ms < max {
            self.interval_log2_ms += 1;
        }
        self.new_interval(end, rng);
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coaplab_base::rng::ScriptedRandom;

    fn ms(v: i64) -> Instant {
        Instant::from_millis(v)
    }

    #[test]
    fn contiki_intervals_double_from_4096_ms_and_t_is_in_the_second_half() {
        // u = 0.5 → t = I/2 + 0.5·I/2: 3072 ms into the first (4096-ms) interval.
        let mut rng = ScriptedRandom::new(&[0.5, 0.0, 0.999_999_9]);
        let mut t = Trickle::start(TrickleParams::CONTIKI, ms(0), &mut rng);
        assert_eq!(t.poll_at(), ms(3072));
        assert!(!t.on_timer(ms(3071), &mut rng));
        assert!(t.on_timer(ms(3072), &mut rng));
        assert_eq!(t.poll_at(), ms(4096));
        assert!(!t.on_timer(ms(4096), &mut rng));
        // Second interval 8192 ms from 4096, u = 0 → t = 4096 + 4096.
        assert_eq!(t.current_interval(), Duration::from_millis(8192));
        assert_eq!(t.poll_at(), ms(8192));
        assert!(t.on_timer(ms(8192), &mut rng));
        // Ends at 12288; third interval 16384 ms, u → 1: t = 12288 + 8192 + 8191.
        assert!(!t.on_timer(ms(12288), &mut rng));
        assert_eq!(t.poll_at(), ms(12288 + 8192 + 8191));
        assert_eq!(t.counts(), (2, 0));
    }

    #[test]
    fn the_interval_stops_doubling_at_imax() {
        let p = TrickleParams {
            interval_min_log2_ms: 12,
            doublings: 2,
            redundancy: 10,
        };
        let mut rng = ScriptedRandom::constant(0.0);
        let mut t = Trickle::start(p, ms(0), &mut rng);
        let mut now = ms(0);
        for _ in 0..20 {
            now = t.poll_at();
            t.on_timer(now, &mut rng);
        }
        assert_eq!(t.current_interval(), Duration::from_millis(16384));
        assert!(now > ms(16384 * 3));
    }

    #[test]
    fn k_consistent_messages_suppress_the_transmission() {
        let mut rng = ScriptedRandom::constant(0.0);
        let mut t = Trickle::start(TrickleParams::CONTIKI, ms(0), &mut rng);
        for _ in 0..10 {
            t.hear_consistent();
        }
        assert!(!t.on_timer(ms(2048), &mut rng));
        assert_eq!(t.counts(), (0, 1));
        // The counter restarts with the next interval: 9 heard do not suppress.
        t.on_timer(ms(4096), &mut rng);
        for _ in 0..9 {
            t.hear_consistent();
        }
        assert!(t.on_timer(ms(4096 + 4096), &mut rng));
    }

    #[test]
    fn reset_returns_to_imin_but_not_when_already_there() {
        let mut rng = ScriptedRandom::constant(0.0);
        let mut t = Trickle::start(TrickleParams::CONTIKI, ms(0), &mut rng);
        // At Imin a reset changes nothing (t stays at 2048).
        t.reset(ms(100), &mut rng);
        assert_eq!(t.poll_at(), ms(2048));
        t.on_timer(ms(2048), &mut rng);
        t.on_timer(ms(4096), &mut rng);
        assert_eq!(t.current_interval(), Duration::from_millis(8192));
        t.reset(ms(5000), &mut rng);
        assert_eq!(t.current_interval(), Duration::from_millis(4096));
        assert_eq!(t.poll_at(), ms(5000 + 2048));
    }
}
