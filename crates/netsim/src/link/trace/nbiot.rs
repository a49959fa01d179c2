//! A synthetic NB-IoT coverage trace: the link moves between the three coverage-enhancement
//! (CE) levels of NB-IoT and each level has its own rate (docs/link-traces.md, "The NB-IoT
//! generator", gives the sources and derivations).
//!
//! * **Classes.** NB-IoT defines up to three coverage levels, CE0-CE2, selected by RSRP
//!   thresholds (3GPP TS 36.331, `rsrp-ThresholdsPrachInfoList`), for a coupling loss up to
//!   the 164 dB MCL target of 3GPP TR 45.820, 20 dB beyond GPRS's 144 dB. coaplab's classes
//!   are 10 dB apart: CE0 ≤ 144, CE1 ≤ 154, CE2 ≤ 164 dB.
//! * **Rates.** CE0 is the `nbiot` preset (30 kbit/s down, 60 kbit/s up, docs/experiments.md
//!   §2.1). A deeper class repeats each transmission: combining N repetitions gains
//!   10·log₁₀N dB, and NB-IoT's repetition numbers are powers of two (TS 36.213, Table
//!   16.4.1.3-2 for NPDSCH, Table 16.5.1.1-3 for NPUSCH). 10 dB more coupling loss takes N ≈ 10;
//!   the nearest power of two is 8 (9.0 dB; 16 would be 12.0 dB), so each class divides the
//!   rate by 8: 3,750 / 7,500 bit/s at CE1, 469 / 938 bit/s at CE2 (rounded to whole bit/s).
//!   This is a derivation from those figures, not a measurement.
//! * **Delays.** The preset's one-way delays (400 ms down, 200 ms up) in every class: no
//!   source gives one-way delays per class, so the extra delay of CE1 and CE2 is a parameter,
//!   0 by default.
//! * **Movement.** No source gives how long a device stays in a class: the dwell time is a
//!   parameter (exponential, mean `dwell_mean_s`, 60 s by default, chosen), and the class
//!   moves to a neighbouring one (CE1 to CE0 or CE2 with equal probability), as coupling loss
//!   changes gradually. The trace starts in CE0 and loops with the period `duration_s`.
//!
//! Up and down traces from the same seed and parameters follow the same class path.

use coaplab_base::params::{Kind, ParamSpec, Value};
use coaplab_base::rng::Random;
use coaplab_base::time::Duration;

use super::{LinkTrace, TraceEnd, TraceSegment};
use crate::record::Direction;

/// One coverage class: its name and each direction's rate (bit/s) and base delay (ms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoverageClass {
    /// `CE0`, `CE1`, `CE2`.
    pub name: &'static str,
    /// Maximum coupling loss of the class, dB.
    pub mcl_db: u32,
    /// Downlink rate, bit/s.
    pub down_rate_bps: u64,
    /// Uplink rate, bit/s.
    pub up_rate_bps: u64,
    /// Downlink one-way delay before the class's extra delay, ms.
    pub down_delay_ms: u64,
    /// Uplink one-way delay before the class's extra delay, ms.
    pub up_delay_ms: u64,
}

/// The three classes (see the module documentation for every number's source).
pub const CLASSES: [CoverageClass; 3] = [
    CoverageClass {
        name: "CE0",
        mcl_db: 144,
        down_rate_bps: 30_000,
        up_rate_bps: 60_000,
        down_delay_ms: 400,
        up_delay_ms: 200,
    },
    CoverageClass {
        name: "CE1",
        mcl_db: 154,
        down_rate_bps: 3_750,
        up_rate_bps: 7_500,
        down_delay_ms: 400,
        up_delay_ms: 200,
    },
    CoverageClass {
        name: "CE2",
        mcl_db: 164,
        down_rate_bps: 469,
        up_rate_bps: 938,
        down_delay_ms: 400,
        up_delay_ms: 200,
    },
];

/// The generator's parameters (`coaplab models link-trace` prints them).
pub const NBIOT_TRACE_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        key: "duration_s",
        kind: Kind::Seconds { min: 1.0, max: 1e7 },
        default: Value::Float(600.0),
        help: "length of the trace, s; it loops with this period",
        source: "chosen (any run length; the trace repeats)",
    },
    ParamSpec {
        key: "dwell_mean_s",
        kind: Kind::Seconds {
            min: 0.001,
            max: 1e7,
        },
        default: Value::Float(60.0),
        help: "mean time in a coverage class (exponential dwell), s",
        source: "no source gives dwell times: a parameter, 60 s chosen, not fitted to anything",
    },
    ParamSpec {
        key: "ce1_extra_delay_ms",
        kind: Kind::Float {
            min: 0.0,
            max: 3_600_000.0,
        },
        default: Value::Float(0.0),
        help: "one-way delay CE1 adds to the preset's delay in both directions, ms",
        source: "no source gives per-class one-way delays: a parameter, 0 by default",
    },
    ParamSpec {
        key: "ce2_extra_delay_ms",
        kind: Kind::Float {
            min: 0.0,
            max: 3_600_000.0,
        },
        default: Value::Float(0.0),
        help: "one-way delay CE2 adds to the preset's delay in both directions, ms",
        source: "no source gives per-class one-way delays: a parameter, 0 by default",
    },
];

/// Parameters of [`generate`] (defaults: [`NBIOT_TRACE_PARAMS`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NbiotTraceParams {
    /// Trace length and loop period.
    pub duration: Duration,
    /// Mean dwell time in a class.
    pub dwell_mean: Duration,
    /// Extra one-way delay of CE1 and CE2.
    pub extra_delay: [Duration; 2],
}

impl Default for NbiotTraceParams {
    fn default() -> Self {
        NbiotTraceParams {
            duration: Duration::from_secs(600),
            dwell_mean: Duration::from_secs(60),
            extra_delay: [Duration::ZERO; 2],
        }
    }
}

/// The class path: `(start, class index)` of each dwell, the first at 0 in CE0, each dwell
/// a whole number of ms (at least 1), within `duration`.
pub fn class_path(params: &NbiotTraceParams, rng: &mut impl Random) -> Vec<(Duration, usize)> {
    let end_ms = params.duration.as_millis().max(1);
    let mean_ms = params.dwell_mean.as_nanos() as f64 / 1e6;
    let mut path = vec![(Duration::ZERO, 0usize)];
    let mut t_ms = 0i64;
    let mut class = 0usize;
    loop {
        // Inverse transform of an exponential; 1 − u is in (0, 1], so the log is finite.
        let dwell = (-(1.0 - rng.uniform01()).ln() * mean_ms).round().max(1.0);
        t_ms = t_ms.saturating_add(dwell.min(i64::MAX as f64) as i64);
        if t_ms >= end_ms {
            return path;
        }
        class = match class {
            0 => 1,
            2 => 1,
            _ if rng.uniform01() < 0.5 => 0,
            _ => 2,
        };
        path.push((Duration::from_millis(t_ms), class));
    }
}

/// The trace of `direction` for `seed` (netsim stream `link-trace/nbiot`, shared by both
/// directions so their class paths agree).
pub fn generate(params: &NbiotTraceParams, seed: u64, direction: Direction) -> LinkTrace {
    let mut rng = crate::rng::stream(seed, "link-trace/nbiot");
    let segments = class_path(params, &mut rng)
        .into_iter()
        .map(|(start, class)| {
            let c = CLASSES[class];
            let (rate_bps, delay_ms) = match direction {
                Direction::Down => (c.down_rate_bps, c.down_delay_ms),
                Direction::Up => (c.up_rate_bps, c.up_delay_ms),
            };
            let extra = class
                .checked_sub(1)
                .map_or(Duration::ZERO, |i| params.extra_delay[i]);
            TraceSegment {
                start,
                rate_bps,
                delay: Duration::from_millis(delay_ms as i64) + extra,
            }
        })
        .collect();
    let period = Duration::from_millis(params.duration.as_millis().max(1));
    LinkTrace::new(segments, TraceEnd::Loop { period })
        .expect("starts at 0, increasing whole ms below the period, every rate above 0")
}
