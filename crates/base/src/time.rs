//! Integer time, passed into every state machine as an argument.
//!
//! Both types count **nanoseconds** in an `i64` (±292 years), so virtual time never drifts the way
//! a float would and link serialization times at tens of kbit/s stay exact. The algorithm spec
//! works in integer microseconds; [`Duration::from_micros`] and [`Duration::as_micros`] are the
//! bridge. Only the real-time drivers (the `emu` crate) ever map these to the OS clock.

use core::fmt;
use core::ops::{Add, AddAssign, Mul, Sub, SubAssign};

/// A point in time: nanoseconds since an arbitrary epoch (the start of a simulation run, or the
/// moment a real-time driver started).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Instant {
    nanos: i64,
}

/// A span of time in nanoseconds. May be negative only as the result of a subtraction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration {
    nanos: i64,
}

impl Instant {
    /// The epoch.
    pub const ZERO: Instant = Instant { nanos: 0 };

    /// An instant `nanos` nanoseconds after the epoch.
    pub const fn from_nanos(nanos: i64) -> Self {
        Instant { nanos }
    }

    /// An instant `micros` microseconds after the epoch.
    pub const fn from_micros(micros: i64) -> Self {
        Instant {
            nanos: micros * 1_000,
        }
    }

    /// An instant `millis` milliseconds after the epoch.
    pub const fn from_millis(millis: i64) -> Self {
        Instant {
            nanos: millis * 1_000_000,
        }
    }

    /// An instant `secs` seconds after the epoch.
    pub const fn from_secs(secs: i64) -> Self {
        Instant {
            nanos: secs * 1_000_000_000,
        }
    }

    /// Nanoseconds since the epoch.
    pub const fn as_nanos(self) -> i64 {
        self.nanos
    }

    /// Whole microseconds since the epoch (truncated toward zero).
    pub const fn as_micros(self) -> i64 {
        self.nanos / 1_000
    }

    /// Seconds since the epoch as a float, for reports only.
    pub fn as_secs_f64(self) -> f64 {
        self.nanos as f64 / 1e9
    }

    /// `self - earlier`, saturating at zero when `earlier` is later.
    pub fn saturating_since(self, earlier: Instant) -> Duration {
        Duration::from_nanos((self.nanos - earlier.nanos).max(0))
    }
}

/// The earlier of two optional deadlines (`None`: no deadline), as
/// `[a, b].into_iter().flatten().min()` but without building an iterator: the event loops
/// call this for every event, and the array-of-options form costs a store-forwarding stall.
#[inline]
pub fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

impl Duration {
    /// Zero length.
    pub const ZERO: Duration = Duration { nanos: 0 };
    /// The longest representable span; stands for "never" in timer arithmetic.
    pub const MAX: Duration = Duration { nanos: i64::MAX };

    /// A span of `nanos` nanoseconds.
    pub const fn from_nanos(nanos: i64) -> Self {
        Duration { nanos }
    }

    /// A span of `micros` microseconds.
    pub const fn from_micros(micros: i64) -> Self {
        Duration {
            nanos: micros * 1_000,
        }
    }

    /// A span of `millis` milliseconds.
    pub const fn from_millis(millis: i64) -> Self {
        Duration {
            nanos: millis * 1_000_000,
        }
    }

    /// A span of `secs` seconds.
    pub const fn from_secs(secs: i64) -> Self {
        Duration {
            nanos: secs * 1_000_000_000,
        }
    }

    /// A span of `secs` seconds rounded to the nearest whole microsecond, half away from zero,
    /// as docs/algorithms.md, 'Conventions' rounds every timer. Saturates at [`Duration::MAX`] for
    /// infinite or huge inputs; NaN maps to zero.
    pub fn from_secs_f64_round_us(secs: f64) -> Self {
        let micros = (secs * 1e6).round();
        if micros.is_nan() {
            Duration::ZERO
        } else if micros >= (i64::MAX / 1_000) as f64 {
            Duration::MAX
        } else if micros <= (i64::MIN / 1_000) as f64 {
            Duration::from_nanos(i64::MIN)
        } else {
            Duration::from_micros(micros as i64)
        }
    }

    /// Length in nanoseconds.
    pub const fn as_nanos(self) -> i64 {
        self.nanos
    }

    /// Length in whole microseconds (truncated toward zero).
    pub const fn as_micros(self) -> i64 {
        self.nanos / 1_000
    }

    /// Length in whole milliseconds (truncated toward zero).
    pub const fn as_millis(self) -> i64 {
        self.nanos / 1_000_000
    }

    /// Length in seconds as a float. Exact for whole microseconds below 2^53 ns (104 days).
    pub fn as_secs_f64(self) -> f64 {
        self.nanos as f64 / 1e9
    }

    /// Sum that saturates at the bounds of `i64` instead of overflowing.
    pub const fn saturating_add(self, other: Duration) -> Duration {
        Duration {
            nanos: self.nanos.saturating_add(other.nanos),
        }
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, d: Duration) -> Instant {
        Instant {
            nanos: self.nanos.saturating_add(d.nanos),
        }
    }
}

impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}

impl Sub<Duration> for Instant {
    type Output = Instant;
    fn sub(self, d: Duration) -> Instant {
        Instant {
            nanos: self.nanos.saturating_sub(d.nanos),
        }
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;
    fn sub(self, other: Instant) -> Duration {
        Duration {
            nanos: self.nanos.saturating_sub(other.nanos),
        }
    }
}

impl Add for Duration {
    type Output = Duration;
    fn add(self, d: Duration) -> Duration {
        self.saturating_add(d)
    }
}

impl AddAssign for Duration {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}

impl Sub for Duration {
    type Output = Duration;
    fn sub(self, d: Duration) -> Duration {
        Duration {
            nanos: self.nanos.saturating_sub(d.nanos),
        }
    }
}

impl SubAssign for Duration {
    fn sub_assign(&mut self, d: Duration) {
        *self = *self - d;
    }
}

impl Mul<i64> for Duration {
    type Output = Duration;
    fn mul(self, k: i64) -> Duration {
        Duration {
            nanos: self.nanos.saturating_mul(k),
        }
    }
}

/// Seconds with microsecond precision, e.g. `2.400000s`: the unit every trace prints.
impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_secs_us(self.nanos, f)?;
        f.write_str("s")
    }
}

/// Seconds since the epoch with microsecond precision, e.g. `t=7.200000s`.
impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("t=")?;
        fmt_secs_us(self.nanos, f)?;
        f.write_str("s")
    }
}

fn fmt_secs_us(nanos: i64, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let micros = nanos / 1_000;
    let sign = if micros < 0 { "-" } else { "" };
    let abs = micros.unsigned_abs();
    write!(f, "{sign}{}.{:06}", abs / 1_000_000, abs % 1_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_is_half_away_from_zero_at_the_microsecond() {
        assert_eq!(
            Duration::from_secs_f64_round_us(2.4),
            Duration::from_micros(2_400_000)
        );
        assert_eq!(
            Duration::from_secs_f64_round_us(0.0000005),
            Duration::from_micros(1)
        );
        assert_eq!(
            Duration::from_secs_f64_round_us(-0.0000005),
            Duration::from_micros(-1)
        );
        assert_eq!(
            Duration::from_secs_f64_round_us(f64::INFINITY),
            Duration::MAX
        );
        assert_eq!(Duration::from_secs_f64_round_us(f64::NAN), Duration::ZERO);
    }

    #[test]
    fn display_prints_seconds_with_six_decimals() {
        assert_eq!(Duration::from_micros(7_200_000).to_string(), "7.200000s");
        assert_eq!(Instant::from_millis(1_250).to_string(), "t=1.250000s");
        assert_eq!(Duration::from_micros(-5).to_string(), "-0.000005s");
    }

    #[test]
    fn arithmetic_saturates_instead_of_overflowing() {
        assert_eq!(
            Instant::from_nanos(i64::MAX - 1) + Duration::from_secs(1),
            Instant::from_nanos(i64::MAX)
        );
        assert_eq!(
            Instant::from_secs(3) - Instant::from_secs(1),
            Duration::from_secs(2)
        );
        assert_eq!(
            Instant::from_secs(1).saturating_since(Instant::from_secs(3)),
            Duration::ZERO
        );
    }
}
