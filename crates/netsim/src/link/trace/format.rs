//! The link-trace file format (docs/link-traces.md), one file per link direction:
//!
//! ```text
//! # NB-IoT coverage trace (comments start with '#'; blank lines are skipped)
//! time_ms,rate_bps,delay_ms
//! 0,30000,400
//! 61250,3750,400
//! 90000.5,0,400
//! 90100,30000,400
//! 120000,loop
//! ```
//!
//! * The header line `time_ms,rate_bps,delay_ms` is optional (only as the first data line).
//! * Each line `time_ms,rate_bps,delay_ms` starts a segment: from `time_ms` (milliseconds
//!   from the start of the run) the serializer runs at `rate_bps` (an integer; 0 is an outage)
//!   and the propagation delay is `delay_ms`. Times and delays are decimals with at most six
//!   fractional digits (whole nanoseconds), read exactly (no floating point).
//! * The first line is at `time_ms` 0; times strictly increase.
//! * Without an end line the last segment **holds** forever (its rate must be above 0). A last
//!   line `time_ms,loop` makes the trace **loop**: at that time it restarts from its first line
//!   (the period), so it repeats forever.
//!
//! Every error names the line (1-based) and what was expected ([`TraceError`]).

use std::fmt;

use coaplab_base::time::Duration;

use super::{LinkTrace, ShapeError, TraceEnd, TraceSegment};

/// The optional header line.
pub const HEADER: &str = "time_ms,rate_bps,delay_ms";

/// Most segments a trace may hold (40 B each in memory: 40 MB).
pub const MAX_SEGMENTS: usize = 1_000_000;

/// Largest `time_ms` (and loop time): about 116 days.
const MAX_TIME_MS: u64 = 10_000_000_000;

/// Largest `delay_ms`: one hour, as the `delay_ms` key of a scenario.
const MAX_DELAY_MS: u64 = 3_600_000;

/// Largest `rate_bps`: 100 Gbit/s, as the `rate_bps` key of a scenario.
const MAX_RATE_BPS: u64 = 100_000_000_000;

/// A refused trace file: the 1-based line and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceError {
    /// 1-based line of the file (0: the file as a whole, e.g. empty).
    pub line: usize,
    /// What was expected.
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.message)
        } else {
            write!(f, "line {}: {}", self.line, self.message)
        }
    }
}

impl std::error::Error for TraceError {}

/// Parses a trace file's text.
pub fn parse(text: &str) -> Result<LinkTrace, TraceError> {
    let mut segments: Vec<TraceSegment> = Vec::new();
    let mut lines_of: Vec<usize> = Vec::new();
    let mut end = TraceEnd::Hold;
    let mut end_line = 0;
    let mut seen_data = false;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let bad = |message: String| TraceError { line, message };
        let content = raw.trim();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        if !seen_data && content.replace(' ', "") == HEADER {
            seen_data = true;
            continue;
        }
        seen_data = true;
        if end_line != 0 {
            return Err(bad(format!(
                "nothing may follow the loop line (line {end_line})"
            )));
        }
        let fields: Vec<&str> = content.split(',').map(str::trim).collect();
        let time = millis(fields[0], MAX_TIME_MS).map_err(|e| bad(format!("time_ms: {e}")))?;
        match fields.as_slice() {
            [_, "loop"] => {
                end = TraceEnd::Loop { period: time };
                end_line = line;
            }
            [_, rate, delay] => {
                let rate_bps = rate
                    .parse::<u64>()
                    .ok()
                    .filter(|r| *r <= MAX_RATE_BPS)
                    .ok_or_else(|| {
                        bad(format!(
                            "rate_bps: '{rate}' is not an integer in [0, {MAX_RATE_BPS}]"
                        ))
                    })?;
                let delay =
                    millis(delay, MAX_DELAY_MS).map_err(|e| bad(format!("delay_ms: {e}")))?;
                if segments.len() == MAX_SEGMENTS {
                    return Err(bad(format!("more than {MAX_SEGMENTS} lines")));
                }
                segments.push(TraceSegment {
                    start: time,
                    rate_bps,
                    delay,
                });
                lines_of.push(line);
            }
            _ => {
                return Err(bad(format!(
                    "'{content}' is not time_ms,rate_bps,delay_ms or time_ms,loop"
                )))
            }
        }
    }
    LinkTrace::new(segments, end).map_err(|e| {
        let line = match e {
            ShapeError::Empty => 0,
            ShapeError::FirstNotAtZero => lines_of[0],
            ShapeError::NotIncreasing { index } => lines_of[index],
            ShapeError::PeriodTooShort => end_line,
            ShapeError::HoldsAnOutage => *lines_of.last().unwrap_or(&0),
            ShapeError::NeverSends => end_line,
        };
        TraceError {
            line,
            message: e.to_string(),
        }
    })
}

/// The file text of `trace` (with the header; `comment` lines first, each prefixed `# `).
/// [`parse`] of the text gives `trace` back.
pub fn write(trace: &LinkTrace, comment: &[String]) -> String {
    let mut out = String::new();
    for c in comment {
        out.push_str("# ");
        out.push_str(c);
        out.push('\n');
    }
    out.push_str(HEADER);
    out.push('\n');
    for s in trace.segments() {
        out.push_str(&format!(
            "{},{},{}\n",
            ms_text(s.start),
            s.rate_bps,
            ms_text(s.delay)
        ));
    }
    if let TraceEnd::Loop { period } = trace.end() {
        out.push_str(&format!("{},loop\n", ms_text(period)));
    }
    out
}

/// A duration in milliseconds as the shortest exact decimal (`61250`, `0.5`, `12.000001`).
pub fn ms_text(d: Duration) -> String {
    let ns = d.as_nanos();
    let (whole, frac) = (ns / 1_000_000, ns % 1_000_000);
    if frac == 0 {
        whole.to_string()
    } else {
        let digits = format!("{frac:06}");
        format!("{whole}.{}", digits.trim_end_matches('0'))
    }
}

/// A non-negative decimal number of milliseconds with at most six fractional digits, at most
/// `max_ms`, read exactly into nanoseconds.
fn millis(text: &str, max_ms: u64) -> Result<Duration, String> {
    let expected =
        || format!("'{text}' is not a number of ms in [0, {max_ms}] with at most 6 decimals");
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || (text.contains('.') && !digits(frac)) || frac.len() > 6 {
        return Err(expected());
    }
    let whole: u64 = whole.parse().map_err(|_| expected())?;
    let frac_ns: u64 = if frac.is_empty() {
        0
    } else {
        format!("{frac:0<6}").parse().map_err(|_| expected())?
    };
    if whole > max_ms || (whole == max_ms && frac_ns > 0) {
        return Err(expected());
    }
    Ok(Duration::from_nanos((whole * 1_000_000 + frac_ns) as i64))
}
