//! Scripted traces: feed an algorithm a timeline of sends, ACKs and resets for one destination,
//! let the trace fire the timers in between, and print every transmission, expiry, completion
//! and give-up as CSV. This is the engine of `coaplab trace`.
//!
//! # Input
//!
//! One event per line, `#` starts a comment:
//!
//! ```text
//! <time_s> send              # a new exchange starts (only one is in flight at a time)
//! <time_s> ack [<n>]         # the answer to the exchange in flight arrives; n (1 = original)
//!                            # names the transmission it answers (token / Rexmit-Cnt echo)
//! <time_s> reset             # the device reboots: the algorithm forgets the destination
//! ```
//!
//! Times are seconds since the trace epoch (the destination state is created at 0), rounded to
//! the microsecond, and never decrease. Between events the trace fires the armed timer itself;
//! after the last event it keeps firing until the exchange in flight gives up. An ACK at exactly
//! the expiry instant is processed first (docs/algorithms.md, 'Conventions').
//!
//! # Output
//!
//! CSV with the header [`HEADER`]. Rows: `transmit` (`timer_s` = the timer armed), `expire`,
//! `complete` (`rto_s` = the algorithm's RTO after the update; `transmission` = the ordinal the
//! ACK named, if it named one), `giveup`, `reset`. `state` is the algorithm's state name where it
//! has one (FASOR), else empty. Times have 6 decimals (µs).
//!
//! ```
//! use coaplab_cc::{registry, rng::ConstantRandom, trace, Instant, Settings};
//! let mut alg = registry::build("default", &Settings::new(), Instant::ZERO).unwrap();
//! let csv = trace::run_text(alg.as_mut(), "0 send\n1.5 ack\n", &mut ConstantRandom(0.4)).unwrap();
//! assert_eq!(
//!     csv,
//!     "time_s,event,exchange,transmission,timer_s,rto_s,state\n\
//!      0.000000,transmit,1,1,2.400000,,\n\
//!      1.500000,complete,1,,,2.000000,\n"
//! );
//! ```

#[cfg(test)]
mod tests;

use core::fmt;
use std::fmt::Write as _;

use crate::algorithm::{Admission, Completion, Exchange, Expiry, RtoAlgorithm};
use crate::rng::Random;
use crate::time::{Duration, Instant};

/// The CSV header.
pub const HEADER: &str = "time_s,event,exchange,transmission,timer_s,rto_s,state";

/// What one input line asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// A new exchange starts; its original is sent.
    Send,
    /// The answer to the exchange in flight arrives.
    Ack {
        /// Which transmission it answers, 1 = the original (`Completion::answered` + 1).
        transmission: Option<u32>,
    },
    /// The destination state is forgotten (a rebooted device).
    Reset,
}

/// One parsed input line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// 1-based line number in the input.
    pub line: usize,
    /// When it happens.
    pub time: Instant,
    /// What happens.
    pub input: Input,
}

/// Why a trace could not be run. Every variant names the input line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TraceError {
    /// The line does not parse.
    Syntax {
        /// Line number.
        line: usize,
        /// What is wrong.
        why: String,
    },
    /// The time is earlier than the previous event's.
    Backwards {
        /// Line number.
        line: usize,
        /// This line's time.
        time: Instant,
        /// The previous event's time.
        previous: Instant,
    },
    /// `ack` while no exchange is in flight.
    AckIdle {
        /// Line number.
        line: usize,
    },
    /// `ack N` names a transmission that was not sent.
    NoSuchTransmission {
        /// Line number.
        line: usize,
        /// The ordinal given.
        ordinal: u32,
        /// Transmissions sent so far.
        sent: u32,
    },
    /// `send` while an exchange is in flight.
    SendBusy {
        /// Line number.
        line: usize,
        /// The exchange in flight.
        exchange: u32,
    },
    /// `reset` while an exchange is in flight.
    ResetBusy {
        /// Line number.
        line: usize,
        /// The exchange in flight.
        exchange: u32,
    },
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceError::Syntax { line, why } => write!(f, "line {line}: {why}"),
            TraceError::Backwards {
                line,
                time,
                previous,
            } => write!(
                f,
                "line {line}: time {} s is before the previous event at {} s",
                secs_us(time.as_micros()),
                secs_us(previous.as_micros())
            ),
            TraceError::AckIdle { line } => {
                write!(f, "line {line}: ack, but no exchange is in flight")
            }
            TraceError::NoSuchTransmission {
                line,
                ordinal,
                sent,
            } => write!(
                f,
                "line {line}: ack {ordinal}, but the exchange in flight has sent {sent} \
                 transmission(s) (1 = original)"
            ),
            TraceError::SendBusy { line, exchange } => write!(
                f,
                "line {line}: send, but exchange {exchange} is still in flight (one at a time)"
            ),
            TraceError::ResetBusy { line, exchange } => write!(
                f,
                "line {line}: reset, but exchange {exchange} is still in flight"
            ),
        }
    }
}

impl std::error::Error for TraceError {}

/// Parses a trace file (see the module documentation).
pub fn parse(text: &str) -> Result<Vec<Event>, TraceError> {
    let mut events: Vec<Event> = vec![];
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let body = raw.split('#').next().unwrap_or("");
        let fields: Vec<&str> = body.split_whitespace().collect();
        if fields.is_empty() {
            continue;
        }
        let syntax = |why: String| TraceError::Syntax { line, why };
        let time = parse_time(fields[0]).ok_or_else(|| {
            syntax(format!(
                "'{}' is not a time in seconds (expected e.g. 2.4)",
                fields[0]
            ))
        })?;
        let input = match (fields.get(1).copied(), fields.len()) {
            (Some("send"), 2) => Input::Send,
            (Some("reset"), 2) => Input::Reset,
            (Some("ack"), 2) => Input::Ack { transmission: None },
            (Some("ack"), 3) => match fields[2].parse::<u32>() {
                Ok(n) if n >= 1 => Input::Ack {
                    transmission: Some(n),
                },
                _ => {
                    return Err(syntax(format!(
                        "'{}' is not a transmission ordinal (1 = original)",
                        fields[2]
                    )))
                }
            },
            (Some(ev @ ("send" | "reset" | "ack")), _) => {
                return Err(syntax(format!("too many fields after '{ev}'")))
            }
            (Some(other), _) => {
                return Err(syntax(format!(
                    "unknown event '{other}' (expected send, ack [N] or reset)"
                )))
            }
            (None, _) => {
                return Err(syntax(
                    "missing event after the time (expected send, ack [N] or reset)".into(),
                ))
            }
        };
        if let Some(prev) = events.last() {
            if time < prev.time {
                return Err(TraceError::Backwards {
                    line,
                    time,
                    previous: prev.time,
                });
            }
        }
        events.push(Event { line, time, input });
    }
    Ok(events)
}

fn parse_time(s: &str) -> Option<Instant> {
    let v: f64 = s.parse().ok()?;
    // At most ~100 days, so the microsecond grid stays exact in f64.
    if !(0.0..=1e7).contains(&v) {
        return None;
    }
    Some(Instant::ZERO + Duration::from_secs_f64_round_us(v))
}

/// The kind of an output row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowKind {
    /// A transmission (original or retransmission) was sent and its timer armed.
    Transmit,
    /// The armed timer expired.
    Expire,
    /// The answer arrived and the algorithm was updated.
    Complete,
    /// The exchange gave up after MAX_RETRANSMIT retransmissions.
    GiveUp,
    /// The algorithm forgot the destination.
    Reset,
}

impl RowKind {
    /// The name printed in the `event` column.
    pub fn as_str(self) -> &'static str {
        match self {
            RowKind::Transmit => "transmit",
            RowKind::Expire => "expire",
            RowKind::Complete => "complete",
            RowKind::GiveUp => "giveup",
            RowKind::Reset => "reset",
        }
    }
}

/// One output row.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// When it happened.
    pub time: Instant,
    /// What happened.
    pub kind: RowKind,
    /// The exchange, numbered from 1 (None for `reset`).
    pub exchange: Option<u32>,
    /// The transmission ordinal, 1 = original (for `complete`: the one the ACK named).
    pub transmission: Option<u32>,
    /// The timer armed (`transmit` rows).
    pub timer: Option<Duration>,
    /// The RTO after the update (`complete` rows).
    pub rto: Option<Duration>,
    /// The algorithm's state name after the event, where it has states.
    pub state: Option<&'static str>,
}

impl Row {
    /// The row as one CSV line, without the newline.
    pub fn to_csv(&self) -> String {
        let num = |v: Option<u32>| v.map(|n| n.to_string()).unwrap_or_default();
        let dur = |d: Option<Duration>| d.map(|d| secs_us(d.as_micros())).unwrap_or_default();
        format!(
            "{},{},{},{},{},{},{}",
            secs_us(self.time.as_micros()),
            self.kind.as_str(),
            num(self.exchange),
            num(self.transmission),
            dur(self.timer),
            dur(self.rto),
            self.state.unwrap_or("")
        )
    }
}

/// Microseconds as seconds with 6 decimals (`Duration::MAX` prints as `inf`).
fn secs_us(micros: i64) -> String {
    if micros >= Duration::MAX.as_micros() {
        return "inf".into();
    }
    let sign = if micros < 0 { "-" } else { "" };
    let a = micros.unsigned_abs();
    format!("{sign}{}.{:06}", a / 1_000_000, a % 1_000_000)
}

/// The exchange in flight.
struct InFlight {
    id: u32,
    x: Exchange,
    tx_times: Vec<Instant>,
}

impl InFlight {
    /// When the armed timer fires; None for a timer that never fires (`Duration::MAX`).
    fn deadline(&self) -> Option<Instant> {
        (self.x.timer != Duration::MAX).then(|| *self.tx_times.last().unwrap() + self.x.timer)
    }
}

struct Runner<'a> {
    alg: &'a mut dyn RtoAlgorithm,
    rng: &'a mut dyn Random,
    rows: Vec<Row>,
    cur: Option<InFlight>,
    next_id: u32,
}

impl Runner<'_> {
    fn row(
        &mut self,
        time: Instant,
        kind: RowKind,
        exchange: Option<u32>,
        transmission: Option<u32>,
    ) {
        let state = self.alg.snapshot().state;
        self.rows.push(Row {
            time,
            kind,
            exchange,
            transmission,
            timer: None,
            rto: None,
            state,
        });
    }

    /// Fires every timer that expires strictly before `limit` (None = until the exchange ends).
    fn fire_until(&mut self, limit: Option<Instant>) {
        while let Some(cur) = &mut self.cur {
            let Some(deadline) = cur.deadline() else {
                return;
            };
            if limit.is_some_and(|l| deadline >= l) {
                return;
            }
            let (id, n) = (cur.id, cur.tx_times.len() as u32);
            let expiry = self.alg.expired(deadline, &mut cur.x, self.rng);
            self.row(deadline, RowKind::Expire, Some(id), Some(n));
            match expiry {
                Expiry::Retransmit(t) => {
                    let cur = self.cur.as_mut().unwrap();
                    cur.tx_times.push(deadline);
                    self.row(deadline, RowKind::Transmit, Some(id), Some(n + 1));
                    self.rows.last_mut().unwrap().timer = Some(t);
                }
                Expiry::GiveUp => {
                    let mut cur = self.cur.take().unwrap();
                    self.alg.failed(deadline, &mut cur.x);
                    self.row(deadline, RowKind::GiveUp, Some(id), Some(n));
                }
            }
        }
    }

    fn event(&mut self, ev: &Event) -> Result<(), TraceError> {
        self.fire_until(Some(ev.time));
        let busy = self.cur.as_ref().map(|c| c.id);
        match ev.input {
            Input::Send => {
                if let Some(exchange) = busy {
                    return Err(TraceError::SendBusy {
                        line: ev.line,
                        exchange,
                    });
                }
                let mut x = Exchange::new();
                let t = self.alg.start(ev.time, Admission::ALONE, &mut x, self.rng);
                let id = self.next_id;
                self.next_id += 1;
                self.cur = Some(InFlight {
                    id,
                    x,
                    tx_times: vec![ev.time],
                });
                self.row(ev.time, RowKind::Transmit, Some(id), Some(1));
                self.rows.last_mut().unwrap().timer = Some(t);
            }
            Input::Ack { transmission } => {
                let Some(mut cur) = self.cur.take() else {
                    return Err(TraceError::AckIdle { line: ev.line });
                };
                let sent = cur.tx_times.len() as u32;
                if let Some(n) = transmission.filter(|n| *n > sent) {
                    return Err(TraceError::NoSuchTransmission {
                        line: ev.line,
                        ordinal: n,
                        sent,
                    });
                }
                let c = Completion {
                    ack_time: ev.time,
                    tx_times: &cur.tx_times,
                    answered: transmission.map(|n| n - 1),
                    timer_in_force: cur.x.timer,
                };
                self.alg.completed(&c, &mut cur.x, self.rng);
                self.row(ev.time, RowKind::Complete, Some(cur.id), transmission);
                self.rows.last_mut().unwrap().rto = Some(self.alg.rto());
            }
            Input::Reset => {
                if let Some(exchange) = busy {
                    return Err(TraceError::ResetBusy {
                        line: ev.line,
                        exchange,
                    });
                }
                self.alg.reset(ev.time);
                self.row(ev.time, RowKind::Reset, None, None);
            }
        }
        Ok(())
    }
}

/// Runs `events` through `alg`, firing timers in between and after the last event.
pub fn run(
    alg: &mut dyn RtoAlgorithm,
    events: &[Event],
    rng: &mut dyn Random,
) -> Result<Vec<Row>, TraceError> {
    let mut r = Runner {
        alg,
        rng,
        rows: vec![],
        cur: None,
        next_id: 1,
    };
    for ev in events {
        r.event(ev)?;
    }
    r.fire_until(None);
    Ok(r.rows)
}

/// Rows as CSV text with the header, one line per row.
pub fn to_csv(rows: &[Row]) -> String {
    let mut out = String::with_capacity(64 * (rows.len() + 1));
    out.push_str(HEADER);
    out.push('\n');
    for r in rows {
        let _ = writeln!(out, "{}", r.to_csv());
    }
    out
}

/// Parses `text`, runs it through `alg` and returns the CSV.
pub fn run_text(
    alg: &mut dyn RtoAlgorithm,
    text: &str,
    rng: &mut dyn Random,
) -> Result<String, TraceError> {
    let events = parse(text)?;
    Ok(to_csv(&run(alg, &events, rng)?))
}
