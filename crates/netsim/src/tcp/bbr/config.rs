//! Every constant of Linux BBR v1 (`net/ipv4/tcp_bbr.c`, 5.x with the 5.1 additions:
//! quantization budget and ACK-aggregation cwnd) and of the kernel's pacing that BBR relies
//! on, as named parameters with the kernel's defaults. Gains are in 1/256 units
//! (`BBR_UNIT`), exactly the kernel's integers.

use coaplab_base::params::{Kind, ParamError, ParamSpec, Value};
use coaplab_base::time::Duration;

/// Gain unit: 256 = 1.0 (`BBR_UNIT`, `BBR_SCALE` = 8).
pub const BBR_UNIT: u32 = 256;

/// Phases of the PROBE_BW gain cycle (`CYCLE_LEN`).
pub const CYCLE_LEN: usize = 8;

/// BBR parameters. [`BbrConfig::default`] gives Linux's values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BbrConfig {
    /// Window of the max-bandwidth filter in packet-timed rounds (`bbr_bw_rtts` =
    /// `CYCLE_LEN + 2`). Default 10.
    pub bw_window_rounds: u32,
    /// Window of the min_rtt filter (`bbr_min_rtt_win_sec`). Default 10 s.
    pub min_rtt_window: Duration,
    /// Least time at `cwnd_min_target_segments` in PROBE_RTT (`bbr_probe_rtt_mode_ms`).
    /// Default 200 ms.
    pub probe_rtt_duration: Duration,
    /// Below this pacing rate one segment per TSO burst (`bbr_min_tso_rate`). Default
    /// 1,200,000 bit/s.
    pub min_tso_rate_bps: u64,
    /// Pacing rate this many percent below the estimate (`bbr_pacing_margin_percent`).
    /// Default 1.
    pub pacing_margin_percent: u32,
    /// STARTUP pacing and cwnd gain, 2/ln 2 (`bbr_high_gain` = 256 × 2885 / 1000 + 1).
    /// Default 739.
    pub high_gain_256ths: u32,
    /// DRAIN pacing gain, 1/high_gain (`bbr_drain_gain` = 256 × 1000 / 2885). Default 88.
    pub drain_gain_256ths: u32,
    /// PROBE_BW cwnd gain (`bbr_cwnd_gain`). Default 512 (2.0).
    pub cwnd_gain_256ths: u32,
    /// PROBE_BW pacing gain cycle (`bbr_pacing_gain[]`). Default 5/4, 3/4, then six 1.0.
    pub pacing_gain_cycle_256ths: [u32; CYCLE_LEN],
    /// The PROBE_BW start phase is drawn among this many phases, never the 3/4 one
    /// (`bbr_cycle_rand`). Default 7.
    pub cycle_rand: u32,
    /// Least cwnd, and the cwnd of PROBE_RTT, in segments (`bbr_cwnd_min_target`). Default 4.
    pub cwnd_min_target_segments: u32,
    /// Bandwidth growth that counts as "still growing" in STARTUP (`bbr_full_bw_thresh`).
    /// Default 320 (1.25).
    pub full_bw_thresh_256ths: u32,
    /// Rounds without that growth before the pipe is deemed full (`bbr_full_bw_cnt`).
    /// Default 3.
    pub full_bw_rounds: u32,
    /// Least rounds of a long-term (policer) sampling interval (`bbr_lt_intvl_min_rtts`).
    /// Default 4.
    pub lt_intvl_min_rounds: u32,
    /// Loss ratio (lost/delivered, 1/256 units) of a "lossy" interval (`bbr_lt_loss_thresh`).
    /// Default 50 (≈ 20 %).
    pub lt_loss_thresh_256ths: u32,
    /// Two intervals' rates within this ratio are consistent (`bbr_lt_bw_ratio` = 1/8).
    /// Default 32.
    pub lt_bw_ratio_256ths: u32,
    /// ... or within this difference (`bbr_lt_bw_diff` = 4000 / 8). Default 500 B/s.
    pub lt_bw_diff_bytes_per_s: u64,
    /// Rounds the policed rate is used before probing again (`bbr_lt_bw_max_rtts`).
    /// Default 48.
    pub lt_bw_max_rounds: u32,
    /// Gain on the ACK-aggregation cwnd (`bbr_extra_acked_gain`; 0 = the pre-5.1 kernel).
    /// Default 256 (1.0).
    pub extra_acked_gain_256ths: u32,
    /// Window of the extra-acked max filter in rounds (`bbr_extra_acked_win_rtts`). Default 5.
    pub extra_acked_win_rounds: u32,
    /// ACK-epoch size that resets the epoch (`bbr_ack_epoch_acked_reset_thresh`). Default
    /// 2^20 segments.
    pub ack_epoch_acked_reset_thresh: u32,
    /// Cap of the aggregation cwnd as time at the estimated rate (`bbr_extra_acked_max_us`).
    /// Default 100 ms.
    pub extra_acked_max: Duration,
    /// cwnd before any RTT sample (`TCP_INIT_CWND`). Default 10 segments.
    pub init_cwnd_segments: u32,
    /// RTT assumed for the initial pacing rate without a sample (`bbr_init_pacing_rate_from_rtt`,
    /// `USEC_PER_MSEC`). Default 1 ms.
    pub nominal_rtt: Duration,
    /// TSO autosizing shift: bytes per burst = pacing rate >> shift (`sk_pacing_shift`).
    /// Default 10 (~1 ms).
    pub pacing_shift: u32,
    /// Data segments sent before pacing starts (`tcp_update_skb_after_send`: "Original
    /// sch_fq does not pace first 10 MSS", Linux ≥ 4.20). Default 10.
    pub unpaced_segments: u64,
}

impl Default for BbrConfig {
    fn default() -> Self {
        let u = BBR_UNIT;
        BbrConfig {
            bw_window_rounds: CYCLE_LEN as u32 + 2,
            min_rtt_window: Duration::from_secs(10),
            probe_rtt_duration: Duration::from_millis(200),
            min_tso_rate_bps: 1_200_000,
            pacing_margin_percent: 1,
            high_gain_256ths: u * 2885 / 1000 + 1,
            drain_gain_256ths: u * 1000 / 2885,
            cwnd_gain_256ths: u * 2,
            pacing_gain_cycle_256ths: [u * 5 / 4, u * 3 / 4, u, u, u, u, u, u],
            cycle_rand: 7,
            cwnd_min_target_segments: 4,
            full_bw_thresh_256ths: u * 5 / 4,
            full_bw_rounds: 3,
            lt_intvl_min_rounds: 4,
            lt_loss_thresh_256ths: 50,
            lt_bw_ratio_256ths: u / 8,
            lt_bw_diff_bytes_per_s: 4000 / 8,
            lt_bw_max_rounds: 48,
            extra_acked_gain_256ths: u,
            extra_acked_win_rounds: 5,
            ack_epoch_acked_reset_thresh: 1 << 20,
            extra_acked_max: Duration::from_millis(100),
            init_cwnd_segments: 10,
            nominal_rtt: Duration::from_millis(1),
            pacing_shift: 10,
            unpaced_segments: 10,
        }
    }
}

/// Any `u32`.
const U32: Kind = Kind::Int {
    min: 0,
    max: u32::MAX as i64,
};

/// A non-zero `u32`.
const U32_NONZERO: Kind = Kind::Int {
    min: 1,
    max: u32::MAX as i64,
};

/// Any `u64` that is also an `i64`.
const U64: Kind = Kind::Int {
    min: 0,
    max: i64::MAX,
};

/// A duration in whole milliseconds, at most 10^9.
const MS: Kind = Kind::Int {
    min: 0,
    max: 1_000_000_000,
};

/// A non-zero duration in whole milliseconds, at most 10^9.
const MS_NONZERO: Kind = Kind::Int {
    min: 1,
    max: 1_000_000_000,
};

/// Every BBR constant (scenario `[flows.params]` of `cc = "tcp-bbr"`), by the name
/// [`BbrConfig::set`] accepts: the [`BbrConfig`] field, durations in whole milliseconds
/// (`_ms`). The defaults are [`BbrConfig::default`]'s, Linux's; the ranges are what the
/// algorithm accepts. `pacing_gain_cycle_256ths` is the one list: eight space-separated gains,
/// each in its range, its default the text of the eight.
pub const BBR_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        key: "bw_window_rounds",
        kind: U32_NONZERO,
        default: Value::Int(10),
        help: "window of the max-bandwidth filter in packet-timed rounds",
        source: "tcp_bbr.c bbr_bw_rtts = CYCLE_LEN + 2",
    },
    ParamSpec {
        key: "min_rtt_window_ms",
        kind: MS_NONZERO,
        default: Value::Int(10_000),
        help: "window of the min_rtt filter",
        source: "tcp_bbr.c bbr_min_rtt_win_sec = 10",
    },
    ParamSpec {
        key: "probe_rtt_duration_ms",
        kind: MS,
        default: Value::Int(200),
        help: "least time at cwnd_min_target_segments in PROBE_RTT",
        source: "tcp_bbr.c bbr_probe_rtt_mode_ms = 200",
    },
    ParamSpec {
        key: "min_tso_rate_bps",
        kind: U64,
        default: Value::Int(1_200_000),
        help: "below this pacing rate (bit/s) one segment per TSO burst",
        source: "tcp_bbr.c bbr_min_tso_rate = 1200000",
    },
    ParamSpec {
        key: "pacing_margin_percent",
        kind: Kind::Int { min: 0, max: 99 },
        default: Value::Int(1),
        help: "pacing rate this many percent below the bandwidth estimate",
        source: "tcp_bbr.c bbr_pacing_margin_percent = 1",
    },
    ParamSpec {
        key: "high_gain_256ths",
        kind: U32_NONZERO,
        default: Value::Int(739),
        help: "STARTUP pacing and cwnd gain in 1/256 (2/ln 2)",
        source: "tcp_bbr.c bbr_high_gain = BBR_UNIT * 2885 / 1000 + 1",
    },
    ParamSpec {
        key: "drain_gain_256ths",
        kind: U32,
        default: Value::Int(88),
        help: "DRAIN pacing gain in 1/256 (1/high_gain)",
        source: "tcp_bbr.c bbr_drain_gain = BBR_UNIT * 1000 / 2885",
    },
    ParamSpec {
        key: "cwnd_gain_256ths",
        kind: U32_NONZERO,
        default: Value::Int(512),
        help: "PROBE_BW cwnd gain in 1/256 (2.0)",
        source: "tcp_bbr.c bbr_cwnd_gain = BBR_UNIT * 2",
    },
    ParamSpec {
        key: "pacing_gain_cycle_256ths",
        kind: U32,
        default: Value::Choice("320 192 256 256 256 256 256 256"),
        help: "PROBE_BW pacing gain cycle: eight space-separated gains in 1/256 (5/4, 3/4, six 1.0), each in the range",
        source: "tcp_bbr.c bbr_pacing_gain[] (CYCLE_LEN = 8)",
    },
    ParamSpec {
        key: "cycle_rand",
        kind: Kind::Int { min: 1, max: 7 },
        default: Value::Int(7),
        help: "the PROBE_BW start phase is drawn among this many phases, never the 3/4 one",
        source: "tcp_bbr.c bbr_cycle_rand = 7",
    },
    ParamSpec {
        key: "cwnd_min_target_segments",
        kind: U32_NONZERO,
        default: Value::Int(4),
        help: "least cwnd, and the cwnd of PROBE_RTT, in segments",
        source: "tcp_bbr.c bbr_cwnd_min_target = 4",
    },
    ParamSpec {
        key: "full_bw_thresh_256ths",
        kind: U32,
        default: Value::Int(320),
        help: "bandwidth growth in 1/256 that counts as still growing in STARTUP (1.25)",
        source: "tcp_bbr.c bbr_full_bw_thresh = BBR_UNIT * 5 / 4",
    },
    ParamSpec {
        key: "full_bw_rounds",
        kind: U32_NONZERO,
        default: Value::Int(3),
        help: "rounds without that growth before the pipe is deemed full",
        source: "tcp_bbr.c bbr_full_bw_cnt = 3",
    },
    ParamSpec {
        key: "lt_intvl_min_rounds",
        kind: U32,
        default: Value::Int(4),
        help: "least rounds of a long-term (policer) sampling interval",
        source: "tcp_bbr.c bbr_lt_intvl_min_rtts = 4",
    },
    ParamSpec {
        key: "lt_loss_thresh_256ths",
        kind: U32,
        default: Value::Int(50),
        help: "loss ratio (lost/delivered, 1/256) of a lossy interval (about 20 %)",
        source: "tcp_bbr.c bbr_lt_loss_thresh = 50",
    },
    ParamSpec {
        key: "lt_bw_ratio_256ths",
        kind: U32,
        default: Value::Int(32),
        help: "two intervals' rates within this ratio (1/256) are consistent (1/8)",
        source: "tcp_bbr.c bbr_lt_bw_ratio = BBR_UNIT / 8",
    },
    ParamSpec {
        key: "lt_bw_diff_bytes_per_s",
        kind: U64,
        default: Value::Int(500),
        help: "... or within this difference in bytes/s",
        source: "tcp_bbr.c bbr_lt_bw_diff = 4000 / 8",
    },
    ParamSpec {
        key: "lt_bw_max_rounds",
        kind: U32,
        default: Value::Int(48),
        help: "rounds the policed rate is used before probing again",
        source: "tcp_bbr.c bbr_lt_bw_max_rtts = 48",
    },
    ParamSpec {
        key: "extra_acked_gain_256ths",
        kind: U32,
        default: Value::Int(256),
        help: "gain in 1/256 on the ACK-aggregation cwnd (0 = the pre-5.1 kernel)",
        source: "tcp_bbr.c bbr_extra_acked_gain = BBR_UNIT",
    },
    ParamSpec {
        key: "extra_acked_win_rounds",
        kind: U32,
        default: Value::Int(5),
        help: "window of the extra-acked max filter in rounds",
        source: "tcp_bbr.c bbr_extra_acked_win_rtts = 5",
    },
    ParamSpec {
        key: "ack_epoch_acked_reset_thresh",
        kind: U32,
        default: Value::Int(1 << 20),
        help: "ACK-epoch size in segments that resets the epoch",
        source: "tcp_bbr.c bbr_ack_epoch_acked_reset_thresh = 1U << 20",
    },
    ParamSpec {
        key: "extra_acked_max_ms",
        kind: MS,
        default: Value::Int(100),
        help: "cap of the aggregation cwnd as time at the estimated rate",
        source: "tcp_bbr.c bbr_extra_acked_max_us = 100 * 1000",
    },
    ParamSpec {
        key: "init_cwnd_segments",
        kind: U32,
        default: Value::Int(10),
        help: "cwnd before any RTT sample, in segments",
        source: "include/net/tcp.h TCP_INIT_CWND = 10",
    },
    ParamSpec {
        key: "nominal_rtt_ms",
        kind: MS_NONZERO,
        default: Value::Int(1),
        help: "RTT assumed for the initial pacing rate without a sample",
        source: "tcp_bbr.c bbr_init_pacing_rate_from_rtt (USEC_PER_MSEC)",
    },
    ParamSpec {
        key: "pacing_shift",
        kind: U32,
        default: Value::Int(10),
        help: "TSO autosizing: bytes per burst = pacing rate >> shift (about 1 ms; above 63 counts as 63)",
        source: "sk_pacing_shift = 10 (include/net/sock.h)",
    },
    ParamSpec {
        key: "unpaced_segments",
        kind: U64,
        default: Value::Int(10),
        help: "data segments sent before pacing starts",
        source: "tcp_output.c tcp_update_skb_after_send (sch_fq does not pace the first 10 MSS)",
    },
];

/// How many [`BBR_PARAMS`] there are.
const PARAM_COUNT: usize = BBR_PARAMS.len();

/// The keys of [`BBR_PARAMS`], in order.
const PARAM_KEYS: [&str; PARAM_COUNT] = {
    let mut keys = [""; PARAM_COUNT];
    let mut i = 0;
    while i < PARAM_COUNT {
        keys[i] = BBR_PARAMS[i].key;
        i += 1;
    }
    keys
};

impl BbrConfig {
    /// The names [`BbrConfig::set`] accepts: the keys of [`BBR_PARAMS`], in its order.
    pub const NAMES: &'static [&'static str] = &PARAM_KEYS;

    /// Sets parameter `name` (one of [`BBR_PARAMS`]) from its text, checked against the
    /// table's range, then checks the whole configuration.
    /// An error is [`ParamError::UnknownKey`] (algorithm `tcp-bbr`) or
    /// [`ParamError::BadValue`], whose `expected` says what would be accepted.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), ParamError> {
        let spec =
            BBR_PARAMS
                .iter()
                .find(|p| p.key == name)
                .ok_or_else(|| ParamError::UnknownKey {
                    algorithm: "tcp-bbr".into(),
                    key: name.into(),
                    valid: Self::NAMES.to_vec(),
                })?;
        let bad = |expected: String| ParamError::BadValue {
            key: name.into(),
            value: value.into(),
            expected,
        };
        self.set_checked(spec, name, value).map_err(bad)
    }

    /// [`BbrConfig::set`] for a known parameter; `Err`: what would be accepted.
    fn set_checked(&mut self, spec: &ParamSpec, name: &str, value: &str) -> Result<(), String> {
        let Kind::Int { min, max } = spec.kind else {
            unreachable!("every BBR parameter is an integer");
        };
        let int = |v: &str| -> Result<u64, String> {
            let n = v
                .trim()
                .parse::<u64>()
                .map_err(|_| format!("a whole number for bbr parameter {name}"))?;
            i64::try_from(n)
                .ok()
                .filter(|n| (min..=max).contains(n))
                .map(|_| n)
                .ok_or_else(|| format!("{name} in [{min}, {max}]"))
        };
        // The range of every u32 field is within u32.
        let small = |v: &str| int(v).map(|n| n as u32);
        let ms = |v: &str| int(v).map(|n| Duration::from_millis(n as i64));
        match name {
            "bw_window_rounds" => self.bw_window_rounds = small(value)?,
            "min_rtt_window_ms" => self.min_rtt_window = ms(value)?,
            "probe_rtt_duration_ms" => self.probe_rtt_duration = ms(value)?,
            "min_tso_rate_bps" => self.min_tso_rate_bps = int(value)?,
            "pacing_margin_percent" => self.pacing_margin_percent = small(value)?,
            "high_gain_256ths" => self.high_gain_256ths = small(value)?,
            "drain_gain_256ths" => self.drain_gain_256ths = small(value)?,
            "cwnd_gain_256ths" => self.cwnd_gain_256ths = small(value)?,
            "pacing_gain_cycle_256ths" => {
                let gains = value
                    .split_whitespace()
                    .map(small)
                    .collect::<Result<Vec<_>, _>>()?;
                self.pacing_gain_cycle_256ths = gains
                    .try_into()
                    .map_err(|_| format!("{CYCLE_LEN} space-separated gains for {name}"))?;
            }
            "cycle_rand" => self.cycle_rand = small(value)?,
            "cwnd_min_target_segments" => self.cwnd_min_target_segments = small(value)?,
            "full_bw_thresh_256ths" => self.full_bw_thresh_256ths = small(value)?,
            "full_bw_rounds" => self.full_bw_rounds = small(value)?,
            "lt_intvl_min_rounds" => self.lt_intvl_min_rounds = small(value)?,
            "lt_loss_thresh_256ths" => self.lt_loss_thresh_256ths = small(value)?,
            "lt_bw_ratio_256ths" => self.lt_bw_ratio_256ths = small(value)?,
            "lt_bw_diff_bytes_per_s" => self.lt_bw_diff_bytes_per_s = int(value)?,
            "lt_bw_max_rounds" => self.lt_bw_max_rounds = small(value)?,
            "extra_acked_gain_256ths" => self.extra_acked_gain_256ths = small(value)?,
            "extra_acked_win_rounds" => self.extra_acked_win_rounds = small(value)?,
            "ack_epoch_acked_reset_thresh" => self.ack_epoch_acked_reset_thresh = small(value)?,
            "extra_acked_max_ms" => self.extra_acked_max = ms(value)?,
            "init_cwnd_segments" => self.init_cwnd_segments = small(value)?,
            "nominal_rtt_ms" => self.nominal_rtt = ms(value)?,
            "pacing_shift" => self.pacing_shift = small(value)?.min(63),
            "unpaced_segments" => self.unpaced_segments = int(value)?,
            _ => unreachable!("{name} is in BBR_PARAMS but not set"),
        }
        self.validate().map_err(|field| format!("{field} in range"))
    }

    /// Checks the ranges the algorithm needs (non-zero windows and gains, a start phase
    /// range inside the cycle).
    pub fn validate(&self) -> Result<(), &'static str> {
        if self.bw_window_rounds == 0 {
            return Err("bbr.bw_window_rounds");
        }
        if self.min_rtt_window <= Duration::ZERO || self.nominal_rtt <= Duration::ZERO {
            return Err("bbr.min_rtt_window");
        }
        if self.cycle_rand == 0 || self.cycle_rand as usize >= CYCLE_LEN {
            return Err("bbr.cycle_rand");
        }
        if self.high_gain_256ths == 0 || self.cwnd_gain_256ths == 0 {
            return Err("bbr.high_gain_256ths");
        }
        if self.cwnd_min_target_segments == 0 || self.full_bw_rounds == 0 {
            return Err("bbr.cwnd_min_target_segments");
        }
        if self.pacing_margin_percent >= 100 {
            return Err("bbr.pacing_margin_percent");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_settable_and_bad_values_are_refused() {
        let d = BbrConfig::default();
        for name in BbrConfig::NAMES {
            let mut c = d.clone();
            let value = match *name {
                "pacing_gain_cycle_256ths" => "320 192 256 256 256 256 256 256",
                "cycle_rand" => "7",
                "pacing_margin_percent" => "1",
                _ => "10",
            };
            assert_eq!(c.set(name, value), Ok(()), "{name}");
        }
        let mut c = d.clone();
        c.set("probe_rtt_duration_ms", "0").unwrap();
        assert_eq!(c.probe_rtt_duration, Duration::ZERO);
        assert!(c.set("cycle_rand", "8").is_err());
        assert!(c.set("pacing_gain_cycle_256ths", "320 192").is_err());
        assert!(matches!(
            c.set("high_gain", "739"),
            Err(ParamError::UnknownKey { valid, .. }) if valid.contains(&"high_gain_256ths")
        ));
        assert_eq!(
            c.set("full_bw_rounds", "-1"),
            Err(ParamError::BadValue {
                key: "full_bw_rounds".into(),
                value: "-1".into(),
                expected: "a whole number for bbr parameter full_bw_rounds".into(),
            })
        );
        assert!(c.set("full_bw_rounds", "0").is_err());
        assert!(c.set("pacing_margin_percent", "100").is_err());
        assert!(c.set("min_rtt_window_ms", "1000000001").is_err());
    }

    #[test]
    fn the_table_defaults_are_the_config_defaults() {
        let d = BbrConfig::default();
        let mut c = BbrConfig {
            bw_window_rounds: 1,
            min_rtt_window: Duration::from_millis(1),
            probe_rtt_duration: Duration::ZERO,
            min_tso_rate_bps: 0,
            pacing_margin_percent: 0,
            high_gain_256ths: 1,
            drain_gain_256ths: 0,
            cwnd_gain_256ths: 1,
            pacing_gain_cycle_256ths: [0; CYCLE_LEN],
            cycle_rand: 1,
            cwnd_min_target_segments: 1,
            full_bw_thresh_256ths: 0,
            full_bw_rounds: 1,
            lt_intvl_min_rounds: 0,
            lt_loss_thresh_256ths: 0,
            lt_bw_ratio_256ths: 0,
            lt_bw_diff_bytes_per_s: 0,
            lt_bw_max_rounds: 0,
            extra_acked_gain_256ths: 0,
            extra_acked_win_rounds: 0,
            ack_epoch_acked_reset_thresh: 0,
            extra_acked_max: Duration::ZERO,
            init_cwnd_segments: 0,
            nominal_rtt: Duration::from_millis(1),
            pacing_shift: 0,
            unpaced_segments: 0,
        };
        for p in BBR_PARAMS {
            c.set(p.key, &p.default.to_string()).unwrap();
            let Kind::Int { min, max } = p.kind else {
                panic!("{} is not an integer", p.key);
            };
            for n in p.default.to_string().split_whitespace() {
                let n: i64 = n.parse().unwrap();
                assert!((min..=max).contains(&n), "{} default out of range", p.key);
            }
        }
        assert_eq!(c, d);
        assert_eq!(BbrConfig::NAMES.len(), BBR_PARAMS.len());
    }
}
