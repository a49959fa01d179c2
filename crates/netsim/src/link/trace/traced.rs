//! The serializer and propagation stage of a trace-driven link direction (the rules are in
//! [`super`]'s documentation).
//!
//! **Arithmetic.** Exactly the constant serializer's ([`crate::link::serializer`]): the
//! instant the link becomes free is kept as `free_at + rem/R` ns with `R` the rate of the
//! segment containing `free_at`; a segment boundary is a whole nanosecond, so the fractional
//! nanosecond never straddles one and the remainder is always in the current segment's units.
//! A packet costs `8·w·10⁹` units; a segment at `R` bit/s serves `R` units per nanosecond. The
//! reported instants are rounded up to the next nanosecond (never before the last bit); an idle
//! link drops the remainder.
//!
//! **Outage.** A segment at 0 bit/s serves nothing: a packet that reaches it waits (its
//! serialization starts, or resumes, at the next segment with a positive rate).

use crate::link::serializer::{ceil, clamp_i64, div_rem};
use std::sync::Arc;

use coaplab_base::time::{Duration, Instant};

use super::LinkTrace;

/// Token units per byte: 8 bits · 10⁹, so a segment at `R` bit/s serves `R` units per ns.
const UNITS_PER_BYTE: u128 = 8 * 1_000_000_000;

/// Serializer + propagation of one link direction under a trace.
#[derive(Debug, Clone)]
pub struct TracedStage {
    trace: Arc<LinkTrace>,
    /// Integer part of the exact instant the link becomes free.
    free_at: Instant,
    /// Fractional part, in units of `1/R` ns of the segment containing `free_at`.
    rem: u128,
    /// The latest delivery instant: packets never overtake.
    last_release: Instant,
    /// Units served in each segment of the trace (by index): busy time is Σ units/R.
    busy_units: Vec<u128>,
}

/// One packet through the stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Traced {
    /// First instant a bit is sent (rounded up to the ns).
    pub ser_start: Instant,
    /// Last bit sent (rounded up to the ns).
    pub ser_end: Instant,
    /// Arrival at the far end of the propagation stage.
    pub at: Instant,
}

impl TracedStage {
    /// An idle stage following `trace`.
    pub fn new(trace: Arc<LinkTrace>) -> TracedStage {
        let segments = trace.segments().len();
        TracedStage {
            trace,
            free_at: Instant::from_nanos(i64::MIN),
            rem: 0,
            last_release: Instant::from_nanos(i64::MIN),
            busy_units: vec![0; segments],
        }
    }

    /// Serializes and propagates a packet of `charged_bytes` that reaches the head of the
    /// FIFO path at `arrival`. Calls come in FIFO order with non-decreasing `arrival`.
    pub fn transmit(&mut self, arrival: Instant, charged_bytes: u32) -> Traced {
        let idle = arrival > self.free_at || (arrival == self.free_at && self.rem == 0);
        if idle {
            self.free_at = arrival;
            self.rem = 0;
        }
        let mut seg = self.trace.locate(self.free_at);
        // An outage (or several) ahead: the first bit waits for a positive rate.
        while self.rate(seg.index) == 0 {
            // A valid trace never holds an outage forever, so an outage always ends.
            let Some(end) = seg.end else { break };
            self.free_at = end;
            self.rem = 0;
            seg = self.trace.locate(end);
        }
        let ser_start = ceil(self.free_at, self.rem);
        let mut left = u128::from(charged_bytes) * UNITS_PER_BYTE;
        loop {
            let rate = self.rate(seg.index);
            let room = match seg.end {
                None => u128::MAX,
                Some(end) => (end - self.free_at).as_nanos().max(0) as u128 * rate - self.rem,
            };
            if left <= room {
                self.busy_units[seg.index] += left;
                let (whole_ns, rem) = div_rem(self.rem + left, rate);
                self.free_at += Duration::from_nanos(clamp_i64(whole_ns));
                self.rem = rem;
                break;
            }
            self.busy_units[seg.index] += room;
            left -= room;
            let end = seg.end.expect("room is unbounded without an end");
            self.free_at = end;
            self.rem = 0;
            seg = self.trace.locate(end);
        }
        let ser_end = ceil(self.free_at, self.rem);
        // The exact end lies in the segment containing its integer part (boundaries are whole
        // nanoseconds): that segment's delay applies.
        let delay = self.trace.segment_at(self.free_at).delay;
        let at = (ser_end + delay).max(self.last_release);
        self.last_release = at;
        Traced {
            ser_start,
            ser_end,
            at,
        }
    }

    /// Time spent sending so far: Σ over segments of units/R, each truncated to whole ns (so
    /// at most one ns per segment short of the exact sum; exact for a constant trace).
    pub fn busy_time(&self) -> Duration {
        let ns: u128 = self
            .busy_units
            .iter()
            .zip(self.trace.segments())
            .filter(|(_, s)| s.rate_bps > 0)
            .map(|(units, s)| units / u128::from(s.rate_bps))
            .sum();
        Duration::from_nanos(clamp_i64(ns))
    }

    fn rate(&self, index: usize) -> u128 {
        u128::from(self.trace.segments()[index].rate_bps)
    }
}
