//! Network configuration: the presets of docs/experiments.md §2 with every value overridable.
//!
//! A [`NetworkConfig`] holds both link directions and both rest-of-path stages. Start from a
//! preset ([`NetworkConfig::preset`]), override fields (they are public) or use the setters
//! that change both directions at once, then [`NetworkConfig::validate`] before building a
//! topology. Parsing scenario files is the lab's job; this module only says what is valid.

pub mod params;

use std::fmt;

use coaplab_base::time::Duration;

use crate::link::delay::{DelayConfig, JitterMode};
use crate::link::loss::LossModel;
use crate::link::LinkConfig;

/// IPv4 (20 B) + UDP (8 B) headers added to every CoAP message.
pub const IP_UDP_HEADER_BYTES: u32 = 28;

/// A named link preset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    /// NB-IoT-like (docs/experiments.md §2.1): 30 kbit/s down / 60 kbit/s up, 400 / 200 ms, MTU 296
    /// B, 2,500-B buffers, 15 ms rest-of-path each way, no per-packet overhead.
    Nbiot,
    /// Zigbee-like (docs/experiments.md §2.2): 20 kbit/s both ways, 20 ms, MTU 128 B, 512-B
    /// buffers, no rest-of-path, 14 B overhead.
    Zigbee,
}

/// The names [`Preset::from_name`] accepts.
pub const PRESET_NAMES: [&str; 2] = ["nbiot", "zigbee"];

impl Preset {
    /// The preset named `nbiot` or `zigbee`.
    pub fn from_name(name: &str) -> Option<Preset> {
        match name {
            "nbiot" => Some(Preset::Nbiot),
            "zigbee" => Some(Preset::Zigbee),
            _ => None,
        }
    }

    /// The preset's name, as [`Preset::from_name`] accepts it.
    pub fn name(self) -> &'static str {
        match self {
            Preset::Nbiot => "nbiot",
            Preset::Zigbee => "zigbee",
        }
    }
}

/// Everything that defines the star network.
#[derive(Debug, Clone, PartialEq)]
pub struct NetworkConfig {
    /// Downlink (server → clients) bottleneck.
    pub down: LinkConfig,
    /// Uplink (clients → server) bottleneck.
    pub up: LinkConfig,
    /// Rest-of-path delay before the downlink bottleneck (server side).
    pub rest_down: DelayConfig,
    /// Rest-of-path delay after the uplink bottleneck (server side).
    pub rest_up: DelayConfig,
    /// Largest IP packet either direction carries.
    pub mtu_bytes: u32,
}

/// An invalid network configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// No preset has this name (see [`PRESET_NAMES`]).
    UnknownPreset(String),
    /// A parameter is out of range.
    Invalid {
        /// Dotted path of the parameter, e.g. `down.rate_bps`.
        field: String,
        /// What the valid range is.
        reason: &'static str,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::UnknownPreset(name) => write!(
                f,
                "unknown network preset {name:?} (allowed: {})",
                PRESET_NAMES.join(", ")
            ),
            ConfigError::Invalid { field, reason } => write!(f, "invalid {field}: {reason}"),
        }
    }
}

impl std::error::Error for ConfigError {}

fn link(rate_bps: u64, delay_ms: i64, buffer_bytes: u64, overhead_bytes: u32) -> LinkConfig {
    LinkConfig {
        rate_bps,
        propagation: DelayConfig::constant(Duration::from_millis(delay_ms)),
        buffer_bytes,
        overhead_bytes,
        queue_counts_overhead: true,
        count_in_service: true,
        burst_bytes: 0,
        loss: LossModel::None,
        trace: None,
    }
}

impl NetworkConfig {
    /// The values of `preset` (docs/experiments.md §2), error-free.
    pub fn preset(preset: Preset) -> Self {
        match preset {
            Preset::Nbiot => NetworkConfig {
                down: link(30_000, 400, 2_500, 0),
                up: link(60_000, 200, 2_500, 0),
                rest_down: DelayConfig::constant(Duration::from_millis(15)),
                rest_up: DelayConfig::constant(Duration::from_millis(15)),
                mtu_bytes: 296,
            },
            Preset::Zigbee => NetworkConfig {
                down: link(20_000, 20, 512, 14),
                up: link(20_000, 20, 512, 14),
                rest_down: DelayConfig::constant(Duration::ZERO),
                rest_up: DelayConfig::constant(Duration::ZERO),
                mtu_bytes: 128,
            },
        }
    }

    /// The preset named `name`.
    pub fn from_preset_name(name: &str) -> Result<Self, ConfigError> {
        Preset::from_name(name)
            .map(Self::preset)
            .ok_or_else(|| ConfigError::UnknownPreset(name.to_owned()))
    }

    /// Sets both bottleneck buffers.
    pub fn set_buffer_bytes(&mut self, bytes: u64) {
        self.down.buffer_bytes = bytes;
        self.up.buffer_bytes = bytes;
    }

    /// Sets the per-packet overhead of both directions.
    pub fn set_overhead_bytes(&mut self, bytes: u32) {
        self.down.overhead_bytes = bytes;
        self.up.overhead_bytes = bytes;
    }

    /// Sets the same loss model on both directions (each keeps its own independent chain).
    pub fn set_loss(&mut self, model: LossModel) {
        self.down.loss = model;
        self.up.loss = model;
    }

    /// Sets both rest-of-path stages.
    pub fn set_rest_of_path(&mut self, stage: DelayConfig) {
        self.rest_down = stage;
        self.rest_up = stage;
    }

    /// Checks every parameter; the error names the first bad one.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |field: &str, reason| {
            Err(ConfigError::Invalid {
                field: field.to_owned(),
                reason,
            })
        };
        if self.mtu_bytes < IP_UDP_HEADER_BYTES {
            return invalid("mtu_bytes", "must hold the 28-byte IPv4 + UDP headers");
        }
        for (side, link) in [("down", &self.down), ("up", &self.up)] {
            if link.rate_bps == 0 {
                return invalid(&format!("{side}.rate_bps"), "must be > 0");
            }
            if link.buffer_bytes == 0 {
                return invalid(&format!("{side}.buffer_bytes"), "must be > 0");
            }
            let largest = u64::from(self.mtu_bytes) + u64::from(link.overhead_bytes);
            if link.burst_bytes != 0 && link.burst_bytes < largest {
                return invalid(
                    &format!("{side}.burst_bytes"),
                    "must be 0 (off) or at least mtu_bytes + overhead_bytes",
                );
            }
            check_delay(&format!("{side}.propagation"), &link.propagation)?;
            let jittered = link.propagation.jitter > Duration::ZERO
                && link.propagation.jitter_mode != JitterMode::None;
            if link.trace.is_some() && jittered {
                return invalid(
                    &format!("{side}.trace"),
                    "a traced link takes its delay from the trace: no propagation jitter",
                );
            }
            if link.trace.is_some() && link.burst_bytes != 0 {
                return invalid(
                    &format!("{side}.trace"),
                    "a traced link is a pure serializer: burst_bytes must be 0",
                );
            }
            if let Some(param) = link.loss.invalid_parameter() {
                return invalid(
                    &format!("{side}.loss.{param}"),
                    "probabilities must be in [0, 1], means > 0",
                );
            }
        }
        check_delay("rest_down", &self.rest_down)?;
        check_delay("rest_up", &self.rest_up)
    }
}

fn check_delay(field: &str, stage: &DelayConfig) -> Result<(), ConfigError> {
    let reason = if stage.delay < Duration::ZERO {
        "delay must be ≥ 0"
    } else if stage.jitter < Duration::ZERO || stage.jitter > stage.delay {
        "jitter must be in [0, delay]"
    } else {
        return Ok(());
    };
    Err(ConfigError::Invalid {
        field: field.to_owned(),
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_have_the_spec_values() {
        let n = NetworkConfig::from_preset_name("nbiot").unwrap();
        assert_eq!((n.down.rate_bps, n.up.rate_bps), (30_000, 60_000));
        assert_eq!(n.down.propagation.delay, Duration::from_millis(400));
        assert_eq!(n.up.propagation.delay, Duration::from_millis(200));
        assert_eq!((n.down.buffer_bytes, n.up.buffer_bytes), (2_500, 2_500));
        assert_eq!((n.down.overhead_bytes, n.mtu_bytes), (0, 296));
        assert_eq!(n.rest_up.delay, Duration::from_millis(15));
        assert!(n.down.queue_counts_overhead && n.down.count_in_service);
        let z = NetworkConfig::preset(Preset::Zigbee);
        assert_eq!((z.down.rate_bps, z.up.rate_bps), (20_000, 20_000));
        assert_eq!(
            (z.down.overhead_bytes, z.mtu_bytes, z.up.buffer_bytes),
            (14, 128, 512)
        );
        assert_eq!(z.rest_down.delay, Duration::ZERO);
        assert_eq!(n.validate(), Ok(()));
        assert_eq!(z.validate(), Ok(()));
    }

    #[test]
    fn preset_names_round_trip() {
        for name in PRESET_NAMES {
            assert_eq!(Preset::from_name(name).map(Preset::name), Some(name));
        }
        assert_eq!(Preset::from_name("lora"), None);
    }

    #[test]
    fn bad_values_name_the_field() {
        assert_eq!(
            NetworkConfig::from_preset_name("lora")
                .unwrap_err()
                .to_string(),
            "unknown network preset \"lora\" (allowed: nbiot, zigbee)"
        );
        let mut n = NetworkConfig::preset(Preset::Nbiot);
        n.up.rate_bps = 0;
        assert_eq!(
            n.validate().unwrap_err().to_string(),
            "invalid up.rate_bps: must be > 0"
        );
        let mut n = NetworkConfig::preset(Preset::Nbiot);
        n.set_rest_of_path(DelayConfig {
            delay: Duration::from_millis(15),
            jitter: Duration::from_millis(20),
            jitter_mode: JitterMode::Fifo,
        });
        assert!(
            matches!(n.validate(), Err(ConfigError::Invalid { field, .. }) if field == "rest_down")
        );
        let mut n = NetworkConfig::preset(Preset::Nbiot);
        n.set_loss(LossModel::Bernoulli { p: 2.0 });
        assert!(
            matches!(n.validate(), Err(ConfigError::Invalid { field, .. }) if field == "down.loss.p")
        );
        let mut n = NetworkConfig::preset(Preset::Nbiot);
        n.down.burst_bytes = 100;
        assert!(n.validate().is_err());
    }
}
