//! CoCoA++ (Rathod 2022, ch. 6): the CAIA Delay-Gradient (CDG) signal
//! driving a probabilistic backoff factor on the RTO.
//!
//! Samples are grouped into intervals of at least `INTERVAL_RTTS` SRTTs. When an interval
//! closes, the rise of its maximum RTT over the previous interval's (`g_max`) enters a moving
//! window of `CDG_WINDOW` gradients. With the window's mean `ḡ_max` and
//! `P = 1 − exp(−ḡ_max / CDG_G)`, one uniform draw `X` decides: the RTO grows by `PBF_UP` when the
//! delay is rising and `P > X`, otherwise it shrinks by `PBF_DOWN`; it is kept within
//! `[max(interval max RTT, RTO_FLOOR), RTO_MAX]`. A timeout backs off by `RETX_FACTOR` (×1.42),
//! replacing CoCoA's VBF. There are no strong/weak estimators, no aging and no blind rule.
//!
//! The thesis leaves several choices open; docs/algorithms.md, ambiguity #29–#34 resolves them and
//! each alternative is a parameter here.

#[cfg(test)]
mod tests;

use std::collections::VecDeque;

use crate::algorithm::{Admission, Completion, Exchange, Expiry, RtoAlgorithm, Snapshot};
use crate::cocoa::{TimerScratch, Vbf};
use crate::common::{self, dither_secs, expire_with};
use crate::params::{Kind, ParamSpec, Params, Value, FACTOR, SECS_OR_INF};
use crate::rng::Random;
use crate::time::{Duration, Instant};

/// The parameters of CoCoA++ (Rathod 2022 ch. 6; docs/algorithms.md, ambiguity #29-#34).
pub const COCOA_PP: &[ParamSpec] = &[
    ParamSpec {
        key: "initial_rto_s",
        kind: Kind::Seconds {
            min: 0.001,
            max: 3600.0,
        },
        default: Value::Float(2.0),
        help: "INITIAL_RTO: the RTO before any interval closes; first timers are dithered x[1, ACK_RANDOM_FACTOR)",
        source: "Rathod 2022 ch. 6",
    },
    ParamSpec {
        key: "cdg_window",
        kind: Kind::Int { min: 1, max: 1024 },
        default: Value::Int(8),
        help: "CDG_WINDOW (a): intervals in the moving average of the gradients",
        source: "Hayes & Armitage 2011 (CDG); Rathod 2022 ch. 6",
    },
    ParamSpec {
        key: "cdg_g_s",
        kind: Kind::Seconds {
            min: 1e-6,
            max: 3600.0,
        },
        default: Value::Float(0.003),
        help: "CDG_G: scale in P = 1 - exp(-gbar/G) (3 ms: the original CDG value)",
        source: "Hayes & Armitage 2011; Rathod 2022 ch. 6; docs/algorithms.md, ambiguity #32",
    },
    ParamSpec {
        key: "pbf_up",
        kind: FACTOR,
        default: Value::Float(1.42),
        help: "PBF_UP: RTO factor when the delay gradient is positive and P > X",
        source: "Rathod 2022 ch. 6",
    },
    ParamSpec {
        key: "pbf_down",
        kind: FACTOR,
        default: Value::Float(0.7),
        help: "PBF_DOWN: RTO factor at every other interval close",
        source: "Rathod 2022 ch. 6",
    },
    ParamSpec {
        key: "interval_rtts",
        kind: FACTOR,
        default: Value::Float(2.0),
        help: "INTERVAL_RTTS: an interval closes at the first sample at least this many SRTTs after it began",
        source: "Rathod 2022 ch. 6; docs/algorithms.md, ambiguity #30",
    },
    ParamSpec {
        key: "interval",
        kind: Kind::Choice(&["srtt", "fixed"]),
        default: Value::Choice("srtt"),
        help: "srtt: intervals of INTERVAL_RTTS*SRTT; fixed: intervals of INTERVAL_FIXED",
        source: "docs/algorithms.md, ambiguity #30",
    },
    ParamSpec {
        key: "interval_fixed_s",
        kind: Kind::Seconds {
            min: 0.0,
            max: 3600.0,
        },
        default: Value::Float(5.0),
        help: "INTERVAL_FIXED: interval length when interval = fixed",
        source: "docs/algorithms.md, ambiguity #30",
    },
    ParamSpec {
        key: "rto_floor_s",
        kind: Kind::Seconds {
            min: 0.0,
            max: 3600.0,
        },
        default: Value::Float(0.1),
        help: "RTO_FLOOR: the RTO stays >= max(interval max RTT, this)",
        source: "Rathod 2022 ch. 6; docs/algorithms.md, ambiguity #33",
    },
    ParamSpec {
        key: "rto_max_s",
        kind: SECS_OR_INF,
        default: Value::Float(60.0),
        help: "RTO_MAX: upper bound of the RTO",
        source: "RFC 7252 §4.8; Rathod 2022 ch. 6",
    },
    ParamSpec {
        key: "timer_max_s",
        kind: SECS_OR_INF,
        default: Value::Float(60.0),
        help: "TIMER_MAX: ceiling on any armed timer",
        source: "RFC 7252 §4.8; Rathod 2022 ch. 6",
    },
    ParamSpec {
        key: "retx_factor",
        kind: FACTOR,
        default: Value::Float(1.42),
        help: "RETX_FACTOR: backoff on expiry (the PBF replaces the VBF; 2 gives binary backoff)",
        source: "Rathod 2022 ch. 6; docs/algorithms.md, ambiguity #34",
    },
    ParamSpec {
        key: "expiry_backoff",
        kind: Kind::Choice(&["factor", "vbf"]),
        default: Value::Choice("factor"),
        help: "factor: X.T *= RETX_FACTOR; vbf: CoCoA's variable backoff factor (3 / 2 / 1.5 at 1 s and 3 s)",
        source: "docs/algorithms.md, ambiguity #34",
    },
    ParamSpec {
        key: "samples",
        kind: Kind::Choice(&["clean", "all"]),
        default: Value::Choice("clean"),
        help: "clean: samples only from exchanges without retransmission; all: every exchange, measured from the original send",
        source: "Rathod 2022 ch. 6; docs/algorithms.md, ambiguity #29",
    },
    ParamSpec {
        key: "gradient",
        kind: Kind::Choice(&["max", "min_first"]),
        default: Value::Choice("max"),
        help: "max: decide on gbar_max; min_first: FreeBSD CDG, gbar_min when positive, gbar_max when gbar_min is 0, no backoff when negative",
        source: "Rathod 2022 ch. 6; docs/algorithms.md, ambiguity #31",
    },
    ParamSpec {
        key: "average",
        kind: Kind::Choice(&["present", "window"]),
        default: Value::Choice("present"),
        help: "present: mean over the gradients present (<= CDG_WINDOW); window: always divide by CDG_WINDOW",
        source: "Rathod 2022 ch. 6; docs/algorithms.md, ambiguity #31",
    },
];

/// The parameter groups of `cocoa++`.
pub(crate) const GROUPS: &[&[ParamSpec]] = &[common::COMMON, COCOA_PP];

#[derive(Debug, Clone)]
struct Config {
    ack_random_factor: f64,
    max_retransmit: u32,
    initial_rto_s: f64,
    window: usize,
    g_s: f64,
    pbf_up: f64,
    pbf_down: f64,
    interval_rtts: f64,
    fixed_interval_s: Option<f64>,
    rto_floor_s: f64,
    rto_max_s: f64,
    timer_max_s: f64,
    retx_factor: f64,
    vbf: Option<Vbf>,
    all_samples: bool,
    min_first: bool,
    divide_by_window: bool,
}

/// CoCoA++ (Rathod 2022 ch. 6).
#[derive(Debug, Clone)]
pub struct CocoaPp {
    cfg: Config,
    /// The RTO in seconds.
    rto_s: f64,
    /// RFC 6298 SRTT of the same samples (interval length only).
    srtt_s: Option<f64>,
    /// Start of the current interval (`D.created` at first).
    t_start: Instant,
    cur_min_s: Option<f64>,
    cur_max_s: Option<f64>,
    prev_min_s: Option<f64>,
    prev_max_s: Option<f64>,
    /// The last `CDG_WINDOW` min-RTT gradients, oldest first.
    gmin: VecDeque<f64>,
    /// The last `CDG_WINDOW` max-RTT gradients, oldest first.
    gmax: VecDeque<f64>,
    /// ḡ_min, ḡ_max and P of the last decision (for traces).
    gbar_min_s: f64,
    gbar_max_s: f64,
    p: f64,
    closes: u64,
}

impl CocoaPp {
    /// `cocoa++` from resolved parameters, created at `now`.
    pub fn new(p: &Params, now: Instant) -> CocoaPp {
        let cfg = Config {
            ack_random_factor: p.float("ack_random_factor"),
            max_retransmit: p.int("max_retransmit") as u32,
            initial_rto_s: p.float("initial_rto_s"),
            window: p.int("cdg_window") as usize,
            g_s: p.float("cdg_g_s"),
            pbf_up: p.float("pbf_up"),
            pbf_down: p.float("pbf_down"),
            interval_rtts: p.float("interval_rtts"),
            fixed_interval_s: (p.choice("interval") == "fixed")
                .then(|| p.float("interval_fixed_s")),
            rto_floor_s: p.float("rto_floor_s"),
            rto_max_s: p.float("rto_max_s"),
            timer_max_s: p.float("timer_max_s"),
            retx_factor: p.float("retx_factor"),
            vbf: (p.choice("expiry_backoff") == "vbf").then_some(Vbf::DEFAULT),
            all_samples: p.choice("samples") == "all",
            min_first: p.choice("gradient") == "min_first",
            divide_by_window: p.choice("average") == "window",
        };
        let mut s = CocoaPp {
            rto_s: cfg.initial_rto_s,
            cfg,
            srtt_s: None,
            t_start: now,
            cur_min_s: None,
            cur_max_s: None,
            prev_min_s: None,
            prev_max_s: None,
            gmin: VecDeque::new(),
            gmax: VecDeque::new(),
            gbar_min_s: 0.0,
            gbar_max_s: 0.0,
            p: 0.0,
            closes: 0,
        };
        s.reset(now);
        s
    }

    fn mean(&self, ring: &VecDeque<f64>) -> f64 {
        let n = if self.cfg.divide_by_window {
            self.cfg.window
        } else {
            ring.len()
        };
        if n == 0 {
            0.0
        } else {
            ring.iter().sum::<f64>() / n as f64
        }
    }

    /// `P = 1 − exp(−ḡ/G)`.
    fn backoff_probability(&self, gbar_s: f64) -> f64 {
        1.0 - (-gbar_s / self.cfg.g_s).exp()
    }

    /// `on_sample(t, R)` of Rathod 2022 ch. 6.
    fn on_sample(&mut self, t: Instant, r_s: f64, rng: &mut dyn Random) {
        let srtt = match self.srtt_s {
            None => r_s,
            Some(s) => 0.875 * s + 0.125 * r_s,
        };
        self.srtt_s = Some(srtt);
        let cur_min = self.cur_min_s.map_or(r_s, |m| m.min(r_s));
        let cur_max = self.cur_max_s.map_or(r_s, |m| m.max(r_s));
        self.cur_min_s = Some(cur_min);
        self.cur_max_s = Some(cur_max);
        let length_s = self
            .cfg
            .fixed_interval_s
            .unwrap_or(self.cfg.interval_rtts * srtt);
        // This sample closes the interval it belongs to (docs/algorithms.md, ambiguity #30).
        if (t - self.t_start).as_secs_f64() < length_s {
            return;
        }
        if let (Some(prev_min), Some(prev_max)) = (self.prev_min_s, self.prev_max_s) {
            push(&mut self.gmin, cur_min - prev_min, self.cfg.window);
            push(&mut self.gmax, cur_max - prev_max, self.cfg.window);
            self.gbar_min_s = self.mean(&self.gmin);
            self.gbar_max_s = self.mean(&self.gmax);
            // One extra draw per interval close (docs/algorithms.md, 'Conventions').
            let x = rng.uniform01();
            let up = if self.cfg.min_first {
                // FreeBSD's CDG tests the min gradient first; the max one only when it is flat.
                if self.gbar_min_s > 0.0 {
                    self.p = self.backoff_probability(self.gbar_min_s);
                    self.p > x
                } else if self.gbar_min_s == 0.0 && self.gbar_max_s > 0.0 {
                    self.p = self.backoff_probability(self.gbar_max_s);
                    self.p > x
                } else {
                    self.p = 0.0;
                    false
                }
            } else {
                self.p = self.backoff_probability(self.gbar_max_s);
                self.gbar_max_s > 0.0 && self.p > x
            };
            let factor = if up {
                self.cfg.pbf_up
            } else {
                self.cfg.pbf_down
            };
            let floor_s = cur_max.max(self.cfg.rto_floor_s);
            // The floor wins over RTO_MAX if they ever cross (a sample above RTO_MAX).
            self.rto_s = (self.rto_s * factor).min(self.cfg.rto_max_s).max(floor_s);
        }
        // The first interval only establishes prev_min / prev_max.
        self.prev_min_s = Some(cur_min);
        self.prev_max_s = Some(cur_max);
        self.cur_min_s = None;
        self.cur_max_s = None;
        self.t_start = t;
        self.closes += 1;
    }
}

/// Appends `v`, keeping the last `cap` entries.
fn push(ring: &mut VecDeque<f64>, v: f64, cap: usize) {
    ring.push_back(v);
    while ring.len() > cap {
        ring.pop_front();
    }
}

impl RtoAlgorithm for CocoaPp {
    fn name(&self) -> &'static str {
        "cocoa++"
    }

    fn start(
        &mut self,
        _now: Instant,
        _admission: Admission,
        x: &mut Exchange,
        rng: &mut dyn Random,
    ) -> Duration {
        let u = rng.uniform01();
        let t0_s = dither_secs(self.rto_s, self.cfg.ack_random_factor, u).min(self.cfg.timer_max_s);
        TimerScratch::arm_first(x, t0_s)
    }

    fn expired(&mut self, _now: Instant, x: &mut Exchange, _rng: &mut dyn Random) -> Expiry {
        let cfg = &self.cfg;
        expire_with(x, cfg.max_retransmit, |x| {
            let t_s = TimerScratch::of(x).timer_s;
            let f = match cfg.vbf {
                Some(v) => v.factor(t_s),
                None => cfg.retx_factor,
            };
            TimerScratch::arm_next(x, (f * t_s).min(cfg.timer_max_s))
        })
    }

    fn completed(&mut self, c: &Completion<'_>, _x: &mut Exchange, rng: &mut dyn Random) {
        if c.transmissions() == 1 || self.cfg.all_samples {
            self.on_sample(c.ack_time, c.rtt_from_original().as_secs_f64(), rng);
        }
    }

    fn reset(&mut self, now: Instant) {
        self.rto_s = self.cfg.initial_rto_s;
        self.srtt_s = None;
        self.t_start = now;
        self.cur_min_s = None;
        self.cur_max_s = None;
        self.prev_min_s = None;
        self.prev_max_s = None;
        self.gmin.clear();
        self.gmax.clear();
        self.gbar_min_s = 0.0;
        self.gbar_max_s = 0.0;
        self.p = 0.0;
        self.closes = 0;
    }

    fn rto(&self) -> Duration {
        Duration::from_secs_f64_round_us(self.rto_s)
    }

    fn max_retransmit(&self) -> u32 {
        self.cfg.max_retransmit
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            rto: self.rto(),
            state: None,
            vars: vec![
                ("rto_s", self.rto_s),
                ("srtt_s", self.srtt_s.unwrap_or(0.0)),
                ("gbar_min_s", self.gbar_min_s),
                ("gbar_max_s", self.gbar_max_s),
                ("backoff_p", self.p),
                ("prev_min_s", self.prev_min_s.unwrap_or(0.0)),
                ("prev_max_s", self.prev_max_s.unwrap_or(0.0)),
                ("intervals_closed", self.closes as f64),
            ],
        }
    }
}

/// Registry constructor of `cocoa++`.
pub(crate) fn build(p: &Params, now: Instant) -> Box<dyn RtoAlgorithm> {
    Box::new(CocoaPp::new(p, now))
}
