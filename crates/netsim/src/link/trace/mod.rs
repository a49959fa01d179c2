//! A trace-driven, time-varying link direction in the spirit of Mahimahi's `mm-link`: the
//! serializer rate and the propagation delay follow a schedule known in advance
//! (docs/link-traces.md).
//!
//! A [`LinkTrace`] is a list of piecewise-constant segments: from `start` (an offset from the
//! run's instant 0) until the next segment's start, the serializer runs at `rate_bps` (0 = an
//! outage: nothing is sent, packets wait in the FIFO) and the propagation delay is `delay`.
//! After the last segment the trace either **holds** the last segment forever or **loops**:
//! restarts from its first segment at `period`, `2·period`, ….
//!
//! The link honours it exactly ([`traced::TracedStage`]):
//!
//! * **Rate.** A packet's `8·w` bits are served at the rate in force at every instant: a
//!   packet whose serialization straddles a change is integrated across it, bit by bit, with
//!   the serializer's exact rational arithmetic (`free_at + rem/R` ns). A constant trace gives
//!   byte-identical results to the constant serializer ([`super::serializer`]).
//! * **Delay.** A packet's delay is the one in force at the exact instant its last bit leaves
//!   the serializer, and a packet is never delivered before the one serialized before it:
//!   `at_n = max(ser_end_n + D(ser_end_n), at_{n−1})`. With a constant delay this is the
//!   constant link's `at = ser_end + D`, i.e. netem's `e_n = max(a_n + D, e_{n−1}) + tx_n`.
//!
//! Parsing and writing the file format is [`self::format`]; the synthetic NB-IoT coverage generator
//! is [`nbiot`].

pub mod format;
pub mod nbiot;
pub mod traced;

#[cfg(test)]
mod tests;

use coaplab_base::time::{Duration, Instant};

pub use format::{parse, TraceError};

/// One piecewise-constant stretch of a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceSegment {
    /// When it takes effect, from the start of the trace (of each period when looping).
    pub start: Duration,
    /// Serializer rate in bit/s; 0 is an outage.
    pub rate_bps: u64,
    /// Propagation delay.
    pub delay: Duration,
}

/// What happens after the last segment's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceEnd {
    /// The last segment lasts forever.
    Hold,
    /// The trace restarts from its first segment every `period` (longer than the last start).
    Loop {
        /// The trace's length.
        period: Duration,
    },
}

/// A valid trace: segments in strictly increasing start order, the first at 0, a hold trace's
/// last segment with a positive rate, a looping trace with some positive rate (so every packet
/// is eventually sent). Built only by [`LinkTrace::new`] (or [`parse`]), which checks all that.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkTrace {
    segments: Vec<TraceSegment>,
    end: TraceEnd,
}

/// Why [`LinkTrace::new`] refused a segment list (the parser reports these with the line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShapeError {
    /// No segment at all.
    Empty,
    /// The first segment does not start at 0.
    FirstNotAtZero,
    /// Segment `index` does not start after the one before.
    NotIncreasing {
        /// 0-based segment index.
        index: usize,
    },
    /// The loop period is not after the last segment's start.
    PeriodTooShort,
    /// A hold trace ends in an outage: packets would wait forever.
    HoldsAnOutage,
    /// A looping trace has no positive rate.
    NeverSends,
}

impl std::fmt::Display for ShapeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ShapeError::Empty => "a trace needs at least one line",
            ShapeError::FirstNotAtZero => "the first line must be at time_ms 0",
            ShapeError::NotIncreasing { .. } => "time_ms must increase from line to line",
            ShapeError::PeriodTooShort => "the loop time must be after the last line's time",
            ShapeError::HoldsAnOutage => {
                "the last line holds forever, so its rate must be above 0 (or end with a loop line)"
            }
            ShapeError::NeverSends => "a looping trace needs a line with a rate above 0",
        })
    }
}

/// Where an instant falls in a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Located {
    /// Index of the segment in force.
    pub(crate) index: usize,
    /// When that segment (this occurrence of it) ends; `None`: never.
    pub(crate) end: Option<Instant>,
}

impl LinkTrace {
    /// A trace of `segments` ending with `end`, checked.
    pub fn new(segments: Vec<TraceSegment>, end: TraceEnd) -> Result<LinkTrace, ShapeError> {
        let first = segments.first().ok_or(ShapeError::Empty)?;
        if first.start != Duration::ZERO {
            return Err(ShapeError::FirstNotAtZero);
        }
        if let Some(i) = (1..segments.len()).find(|&i| segments[i].start <= segments[i - 1].start) {
            return Err(ShapeError::NotIncreasing { index: i });
        }
        let last = segments[segments.len() - 1];
        match end {
            TraceEnd::Hold if last.rate_bps == 0 => return Err(ShapeError::HoldsAnOutage),
            TraceEnd::Loop { period } if period <= last.start => {
                return Err(ShapeError::PeriodTooShort)
            }
            TraceEnd::Loop { .. } if segments.iter().all(|s| s.rate_bps == 0) => {
                return Err(ShapeError::NeverSends)
            }
            _ => {}
        }
        Ok(LinkTrace { segments, end })
    }

    /// A trace of one segment held forever: the constant link.
    pub fn constant(rate_bps: u64, delay: Duration) -> LinkTrace {
        LinkTrace {
            segments: vec![TraceSegment {
                start: Duration::ZERO,
                rate_bps: rate_bps.max(1),
                delay,
            }],
            end: TraceEnd::Hold,
        }
    }

    /// The segments, in time order.
    pub fn segments(&self) -> &[TraceSegment] {
        &self.segments
    }

    /// Hold or loop.
    pub fn end(&self) -> TraceEnd {
        self.end
    }

    /// The segment in force at `at` (before instant 0: the first).
    pub fn segment_at(&self, at: Instant) -> &TraceSegment {
        &self.segments[self.locate(at).index]
    }

    /// The segment in force at `at` and when it ends.
    pub(crate) fn locate(&self, at: Instant) -> Located {
        let t = at.as_nanos();
        let (base, offset) = match self.end {
            TraceEnd::Loop { period } if t >= 0 => {
                let p = period.as_nanos();
                let base = t - t % p;
                (base, t - base)
            }
            _ => (0, t),
        };
        let index = self
            .segments
            .partition_point(|s| s.start.as_nanos() <= offset)
            .saturating_sub(1);
        let next = match (self.segments.get(index + 1), self.end) {
            (Some(s), _) => Some(s.start),
            (None, TraceEnd::Loop { period }) => Some(period),
            (None, TraceEnd::Hold) => None,
        };
        Located {
            index,
            end: next.map(|d| Instant::from_nanos(base.saturating_add(d.as_nanos()))),
        }
    }
}
