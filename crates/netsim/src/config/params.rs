//! Every key of the star's link as a documented parameter ([`LINK_PARAMS`]): name, range,
//! default and source, printed by `coaplab models link`, read from a scenario's `[network]` and
//! set by `coaplab emulate`'s link flags (`buffer_bytes` → `--buffer-bytes`).
//!
//! Most defaults are the chosen preset's values ([`NetworkConfig::preset`], docs/experiments.md
//! §2), so they carry the marker [`FROM_PRESET`] and [`preset_value`] says what each preset
//! gives; the presets themselves stay the one place those numbers live.
//!
//! The ranges are the scenario reader's, which checks every key against them. `coaplab
//! emulate` takes the same keys and checks its delays and jitters against them too, but for
//! the other numbers still only what the link needs (an MTU of at least 28 B, rates and buffers
//! above 0, no upper bounds), so that no command line it accepted before is refused; its loss
//! values go through the same [`crate::link::loss::models::build`].

use coaplab_base::params::{Kind, ParamSpec, Value};

use crate::config::{NetworkConfig, Preset, PRESET_NAMES};
use crate::link::delay::JitterMode;
use crate::link::loss::{DEFAULT_BURST_PACKETS, ERROR_MODEL_NAMES, PROFILE_NAMES};

/// The default of a key whose value comes from the chosen preset (see [`preset_value`]).
/// It is a marker for printing, not a value of the key's kind: read link keys only when set.
pub const FROM_PRESET: Value = Value::Choice("preset");

/// A bit rate in bit/s: at least 1 bit/s, at most 100 Gbit/s.
const RATE_BPS: Kind = Kind::Int {
    min: 1,
    max: 100_000_000_000,
};

/// A delay or jitter in milliseconds (fractions allowed): at most one hour.
const DELAY_MS: Kind = Kind::Float {
    min: 0.0,
    max: 3_600_000.0,
};

/// A buffer in bytes: at least one byte, at most 1 TiB.
const BUFFER_BYTES: Kind = Kind::Int {
    min: 1,
    max: 1 << 40,
};

/// Where the preset values come from.
const PRESETS_SOURCE: &str = "docs/experiments.md §2.1 (nbiot: [P], [F]), §2.2 (zigbee: [K])";

/// Every link key, in the order a scenario's "allowed here" list gives them. A key for one
/// direction (`down_rate_bps`) overrides the key for both (`rate_bps`).
pub const LINK_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        key: "preset",
        kind: Kind::Choice(&PRESET_NAMES),
        default: Value::Choice("nbiot"),
        help: "the link preset the other keys override: nbiot (NB-IoT-like) or zigbee",
        source: PRESETS_SOURCE,
    },
    ParamSpec {
        key: "rate_bps",
        kind: RATE_BPS,
        default: FROM_PRESET,
        help: "serializer rate of both directions, bit/s",
        source: "docs/experiments.md §2.1 rate 30 kbit/s down, 60 kbit/s up; §2.2 20 kbit/s (chosen symmetric: one rate is given)",
    },
    ParamSpec {
        key: "down_rate_bps",
        kind: RATE_BPS,
        default: FROM_PRESET,
        help: "downlink (server → clients) serializer rate, bit/s",
        source: "docs/experiments.md §2.1, §2.2 (rate)",
    },
    ParamSpec {
        key: "up_rate_bps",
        kind: RATE_BPS,
        default: FROM_PRESET,
        help: "uplink (clients → server) serializer rate, bit/s",
        source: "docs/experiments.md §2.1, §2.2 (rate)",
    },
    ParamSpec {
        key: "delay_ms",
        kind: DELAY_MS,
        default: FROM_PRESET,
        help: "one-way propagation delay of both directions, ms (fractions allowed)",
        source: "docs/experiments.md §2.1 one-way propagation delay 400 ms down, 200 ms up; §2.2 20 ms",
    },
    ParamSpec {
        key: "down_delay_ms",
        kind: DELAY_MS,
        default: FROM_PRESET,
        help: "downlink propagation delay, ms",
        source: "docs/experiments.md §2.1, §2.2 (one-way propagation delay)",
    },
    ParamSpec {
        key: "up_delay_ms",
        kind: DELAY_MS,
        default: FROM_PRESET,
        help: "uplink propagation delay, ms",
        source: "docs/experiments.md §2.1, §2.2 (one-way propagation delay)",
    },
    ParamSpec {
        key: "jitter_ms",
        kind: DELAY_MS,
        default: Value::Float(0.0),
        help: "uniform jitter half-width on the propagation delay of both directions, ms (at most the delay); above 0 the jitter mode becomes fifo unless jitter_mode is given",
        source: "docs/experiments.md §1.1 (jitter uniform on [d - j, d + j) on any delay stage); no preset jitters",
    },
    ParamSpec {
        key: "jitter_mode",
        kind: Kind::Choice(&JitterMode::NAMES),
        default: Value::Choice("none"),
        help: "what propagation jitter does to packet order: none (no jitter), fifo (never delivers before the previous packet) or reorder (netem's)",
        source: "docs/experiments.md §1.1, §1.2 (netem `delay D J` sorts by send time, so jitter reorders)",
    },
    ParamSpec {
        key: "link_trace",
        kind: Kind::Path,
        default: Value::Choice("none"),
        help: "a link-trace file (time_ms,rate_bps,delay_ms lines; docs/link-traces.md) giving both directions a time-varying rate and propagation delay instead of the rate and delay keys (no jitter with a trace); in a scenario relative to the scenario file",
        source: "Mahimahi's mm-link (Netravali et al., USENIX ATC 2015) for the idea; the format is coaplab's (docs/link-traces.md)",
    },
    ParamSpec {
        key: "down_link_trace",
        kind: Kind::Path,
        default: Value::Choice("none"),
        help: "downlink link-trace file (overrides link_trace); `coaplab models link-trace nbiot` writes one",
        source: "docs/link-traces.md",
    },
    ParamSpec {
        key: "up_link_trace",
        kind: Kind::Path,
        default: Value::Choice("none"),
        help: "uplink link-trace file (overrides link_trace)",
        source: "docs/link-traces.md",
    },
    ParamSpec {
        key: "mtu",
        kind: Kind::Int {
            min: 68,
            max: 65_535,
        },
        default: FROM_PRESET,
        help: "largest IP packet either direction carries, bytes (the TUN devices' MTU in the emulator)",
        source: "docs/experiments.md §2.1 MTU 296 B; §2.2 128 B",
    },
    ParamSpec {
        key: "overhead_bytes",
        kind: Kind::Int {
            min: 0,
            max: 10_000,
        },
        default: FROM_PRESET,
        help: "bytes charged per packet on top of the IP length (the L2 header the rate stage sees), both directions",
        source: "docs/experiments.md §2.1 0 (chosen, calibrated in §9); §2.2 14 B (chosen: netem on Ethernet)",
    },
    ParamSpec {
        key: "buffer_bytes",
        kind: BUFFER_BYTES,
        default: FROM_PRESET,
        help: "drop-tail FIFO capacity of both directions, in charged bytes (the packet in service counts)",
        source: "docs/experiments.md §2.1 bottleneck buffer 2,500 / 14,100 / 28,200 / 1,410,000 B (the same both ways, chosen); §2.2 not published, 512 B (chosen)",
    },
    ParamSpec {
        key: "down_buffer_bytes",
        kind: BUFFER_BYTES,
        default: FROM_PRESET,
        help: "downlink FIFO capacity, charged bytes",
        source: "docs/experiments.md §2.1, §2.2 (bottleneck buffer)",
    },
    ParamSpec {
        key: "up_buffer_bytes",
        kind: BUFFER_BYTES,
        default: FROM_PRESET,
        help: "uplink FIFO capacity, charged bytes",
        source: "docs/experiments.md §2.1 (uplink buffer not published: the same, chosen), §2.2",
    },
    ParamSpec {
        key: "rest_delay_ms",
        kind: DELAY_MS,
        default: FROM_PRESET,
        help: "rest-of-path delay each way, on the server side of the bottleneck, ms",
        source: "docs/experiments.md §2.1 15 ms, constant (chosen: the studies' 10-20 ms; per-packet variation of that size is ruled out); §2.2 not published, 0 ms (chosen)",
    },
    ParamSpec {
        key: "rest_jitter_ms",
        kind: DELAY_MS,
        default: Value::Float(0.0),
        help: "uniform jitter half-width on the rest-of-path, ms (at most rest_delay_ms); above 0 the mode becomes fifo unless rest_jitter_mode is given",
        source: "docs/experiments.md §1.1, §2.1 (a constant rest-of-path; jitter can be added)",
    },
    ParamSpec {
        key: "rest_jitter_mode",
        kind: Kind::Choice(&JitterMode::NAMES),
        default: Value::Choice("none"),
        help: "what rest-of-path jitter does to packet order: none, fifo or reorder",
        source: "docs/experiments.md §1.1",
    },
    ParamSpec {
        key: "loss",
        kind: Kind::Choice(&PROFILE_NAMES),
        default: Value::Choice("none"),
        help: "link errors after propagation: a profile (low: Bernoulli 2 %; medium, high: bursty, realised by error_model), or a loss model with its parameters (a table in a scenario, NAME:V1,V2 for coaplab emulate)",
        source: "docs/experiments.md §3 (the profiles of [P], [F], [K]); netem's models from Linux 6.18 net/sched/sch_netem.c",
    },
    ParamSpec {
        key: "error_model",
        kind: Kind::Choice(&ERROR_MODEL_NAMES),
        default: Value::Choice("netem-gemodel"),
        help: "how the medium and high profiles are realised: netem-gemodel or netem-state (netem's per-packet models, netem's arithmetic), ctmc (time-based chain) or gilbert-elliott (per packet, r = 0.1, f64 draws; kept for old result files)",
        source: "docs/calibration.md, \"The loss process\" (netem loss gemodel wins the calibration); docs/experiments.md §3",
    },
    ParamSpec {
        key: "loss_burst_packets",
        kind: Kind::Float {
            min: 1.0,
            max: 1e6,
        },
        default: Value::Float(DEFAULT_BURST_PACKETS),
        help: "netem-gemodel / netem-state only: mean burst length of medium and high in packets (netem-state's default is 4, the least it can give medium)",
        source: "docs/calibration.md, \"The loss process\": 1.5 packets, objective 0.287, the lowest of 35 candidates (netem-state: its best candidate, 4)",
    },
    ParamSpec {
        key: "burst_mean_s",
        kind: Kind::Seconds {
            min: 1e-3,
            max: 1e6,
        },
        // DEFAULT_BURST_MEAN, which a const cannot turn into seconds.
        default: Value::Float(0.2),
        help: "ctmc only: mean burst duration of medium and high, s (the low-error mean keeps the profile's average)",
        source: "docs/calibration.md, \"The loss process\": the time-based chain's best candidate, 0.2 s (objective 0.335)",
    },
];

/// The link parameter `key`, if it is one.
pub fn link_param(key: &str) -> Option<&'static ParamSpec> {
    LINK_PARAMS.iter().find(|p| p.key == key)
}

/// What `preset` gives a key whose default is [`FROM_PRESET`], as printed by `coaplab models
/// link` (`30000` or, for a both-directions key whose directions differ, `30000 down / 60000
/// up`); `None` for any other key.
pub fn preset_value(preset: Preset, key: &str) -> Option<String> {
    let n = NetworkConfig::preset(preset);
    let ms = |d: coaplab_base::time::Duration| format!("{}", d.as_secs_f64() * 1e3);
    let both = |down: String, up: String| {
        if down == up {
            down
        } else {
            format!("{down} down / {up} up")
        }
    };
    Some(match key {
        "rate_bps" => both(n.down.rate_bps.to_string(), n.up.rate_bps.to_string()),
        "down_rate_bps" => n.down.rate_bps.to_string(),
        "up_rate_bps" => n.up.rate_bps.to_string(),
        "delay_ms" => both(ms(n.down.propagation.delay), ms(n.up.propagation.delay)),
        "down_delay_ms" => ms(n.down.propagation.delay),
        "up_delay_ms" => ms(n.up.propagation.delay),
        "mtu" => n.mtu_bytes.to_string(),
        "overhead_bytes" => both(
            n.down.overhead_bytes.to_string(),
            n.up.overhead_bytes.to_string(),
        ),
        "buffer_bytes" => both(
            n.down.buffer_bytes.to_string(),
            n.up.buffer_bytes.to_string(),
        ),
        "down_buffer_bytes" => n.down.buffer_bytes.to_string(),
        "up_buffer_bytes" => n.up.buffer_bytes.to_string(),
        "rest_delay_ms" => both(ms(n.rest_down.delay), ms(n.rest_up.delay)),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::loss::{DEFAULT_BURST_MEAN, DEFAULT_STATE_BURST_PACKETS};

    #[test]
    fn every_preset_gives_every_preset_key_and_nothing_else() {
        for spec in LINK_PARAMS {
            for name in PRESET_NAMES {
                let preset = Preset::from_name(name).unwrap();
                let value = preset_value(preset, spec.key);
                assert_eq!(value.is_some(), spec.default == FROM_PRESET, "{}", spec.key);
            }
        }
        assert_eq!(
            preset_value(Preset::Nbiot, "rate_bps").as_deref(),
            Some("30000 down / 60000 up")
        );
        assert_eq!(
            preset_value(Preset::Zigbee, "rate_bps").as_deref(),
            Some("20000")
        );
        assert_eq!(
            preset_value(Preset::Nbiot, "rest_delay_ms").as_deref(),
            Some("15")
        );
        assert_eq!(
            preset_value(Preset::Zigbee, "overhead_bytes").as_deref(),
            Some("14")
        );
    }

    #[test]
    fn the_preset_values_lie_in_the_ranges() {
        for name in PRESET_NAMES {
            let preset = Preset::from_name(name).unwrap();
            for spec in LINK_PARAMS.iter().filter(|s| s.default == FROM_PRESET) {
                let text = preset_value(preset, spec.key).unwrap();
                for part in text.split(' ').filter_map(|w| w.parse::<f64>().ok()) {
                    let (min, max) = match spec.kind {
                        Kind::Int { min, max } => (min as f64, max as f64),
                        Kind::Float { min, max } | Kind::Seconds { min, max } => (min, max),
                        other => panic!("{}: {other:?}", spec.key),
                    };
                    assert!((min..=max).contains(&part), "{} {name}: {part}", spec.key);
                }
            }
        }
    }

    #[test]
    fn the_loss_defaults_are_the_calibrated_ones() {
        let p = |k| link_param(k).unwrap().default;
        assert_eq!(p("loss_burst_packets"), Value::Float(DEFAULT_BURST_PACKETS));
        assert_eq!(
            p("burst_mean_s"),
            Value::Float(DEFAULT_BURST_MEAN.as_secs_f64())
        );
        let help = link_param("loss_burst_packets").unwrap().help;
        assert!(help.contains(&format!("default is {DEFAULT_STATE_BURST_PACKETS}")));
        assert_eq!(
            p("error_model"),
            Value::Choice(crate::ProfileForm::DEFAULT.model.name())
        );
        assert_eq!(p("preset"), Value::Choice("nbiot"));
        assert!(link_param("bufer_bytes").is_none());
    }
}
