//! Link options of `coaplab emulate` (and any command that builds a network from the command
//! line): a preset plus overrides with the names of the scenario file's `[network]` keys
//! (`buffer_bytes` → `--buffer-bytes`), applied onto netsim's [`NetworkConfig`] in the same
//! order and with the same meaning as docs/scenarios.md describes. The flags are netsim's
//! `LINK_PARAMS` keys (a test checks both ways), and the names each choice flag accepts are the
//! table's.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use coaplab_cc::params::Kind;
use coaplab_cc::time::Duration;
use coaplab_lab::files::{self, Input};
use coaplab_netsim::config::params::link_param;
use coaplab_netsim::link::loss::models::{
    build, loss_model_spec, LossBuildError, LossUnit, LossValue, LOSS_MODELS,
};
use coaplab_netsim::link::loss::netem;
use coaplab_netsim::link::trace::{self as link_trace, LinkTrace};
use coaplab_netsim::{
    ErrorModel, JitterMode, LossModel, NetworkConfig, ProfileForm, ERROR_MODEL_NAMES, PRESET_NAMES,
};

/// A preset and overrides of its values.
#[derive(clap::Args, Debug, Clone)]
#[command(next_help_heading = "Link (names as in a scenario's [network])")]
pub(crate) struct LinkOpts {
    /// Link preset (docs/experiments.md §2); the options below override its values.
    #[arg(long, value_name = "NAME", default_value = "nbiot", value_parser = PRESET_NAMES)]
    preset: String,
    /// Rate of both directions, bit/s.
    #[arg(long, value_name = "BPS")]
    rate_bps: Option<u64>,
    /// Downlink (server → client) rate, bit/s.
    #[arg(long, value_name = "BPS")]
    down_rate_bps: Option<u64>,
    /// Uplink (client → server) rate, bit/s.
    #[arg(long, value_name = "BPS")]
    up_rate_bps: Option<u64>,
    /// One-way propagation delay of both directions, ms.
    #[arg(long, value_name = "MS")]
    delay_ms: Option<f64>,
    /// Downlink propagation delay, ms.
    #[arg(long, value_name = "MS")]
    down_delay_ms: Option<f64>,
    /// Uplink propagation delay, ms.
    #[arg(long, value_name = "MS")]
    up_delay_ms: Option<f64>,
    /// Uniform propagation jitter ±MS (jitter mode becomes fifo unless given).
    #[arg(long, value_name = "MS")]
    jitter_ms: Option<f64>,
    /// What jitter does to packet order.
    #[arg(long, value_name = "MODE", value_parser = JitterMode::NAMES)]
    jitter_mode: Option<String>,
    /// Link-trace file giving both directions a time-varying rate and delay instead of the
    /// rate and delay flags (lines time_ms,rate_bps,delay_ms; docs/link-traces.md; no jitter
    /// with a trace). The trace's time 0 is the emulator's start.
    #[arg(long, value_name = "FILE")]
    link_trace: Option<PathBuf>,
    /// Downlink link-trace file (overrides --link-trace); `coaplab models link-trace nbiot`
    /// writes one.
    #[arg(long, value_name = "FILE")]
    down_link_trace: Option<PathBuf>,
    /// Uplink link-trace file (overrides --link-trace).
    #[arg(long, value_name = "FILE")]
    up_link_trace: Option<PathBuf>,
    /// MTU of the link and of both TUN devices, bytes.
    #[arg(long, value_name = "BYTES")]
    mtu: Option<u32>,
    /// Bytes charged per packet on top of the IP length.
    #[arg(long, value_name = "BYTES")]
    overhead_bytes: Option<u32>,
    /// Bottleneck buffer of both directions, bytes.
    #[arg(long, value_name = "BYTES")]
    buffer_bytes: Option<u64>,
    /// Downlink buffer, bytes.
    #[arg(long, value_name = "BYTES")]
    down_buffer_bytes: Option<u64>,
    /// Uplink buffer, bytes.
    #[arg(long, value_name = "BYTES")]
    up_buffer_bytes: Option<u64>,
    /// Rest-of-path delay (server side of the bottleneck), both directions, ms.
    #[arg(long, value_name = "MS")]
    rest_delay_ms: Option<f64>,
    /// Uniform rest-of-path jitter ±MS (mode becomes fifo unless given).
    #[arg(long, value_name = "MS")]
    rest_jitter_ms: Option<f64>,
    /// What rest-of-path jitter does to packet order.
    #[arg(long, value_name = "MODE", value_parser = JitterMode::NAMES)]
    rest_jitter_mode: Option<String>,
    /// Link errors (docs/experiments.md §3): none, low, medium, high (realised by --error-model),
    /// or a loss model NAME:V1,V2,.. with the values of a scenario's loss table in order
    /// (`coaplab models link` lists them; omitted trailing values take their defaults):
    /// bernoulli:p, ctmc:good_mean_s,burst_mean_s[,loss_good[,loss_burst]],
    /// gilbert-elliott:p,r[,loss_good[,loss_bad]], and Linux netem's models with tc's values in
    /// percent (optional %) and tc's defaults: netem-random:p[,correlation] (tc `loss random`),
    /// netem-state:p13[,p31[,p32[,p23[,p14]]]] (tc `loss state`), netem-gemodel:p[,r[,1-h[,1-k]]]
    /// (tc `loss gemodel`).
    #[arg(long, value_name = "PROFILE")]
    loss: Option<String>,
    /// How the medium and high profiles are realised (the same process as a scenario's
    /// `error_model`): netem-gemodel (netem's `loss gemodel`, per packet; the calibrated
    /// default, docs/calibration.md), netem-state (netem's `loss state`), ctmc (time-based
    /// chain, bursts of --burst-mean-s), gilbert-elliott (per packet, r = 0.1). `low` is
    /// `loss random 2%` under the netem models.
    #[arg(long, value_name = "MODEL", default_value = "netem-gemodel",
          value_parser = ERROR_MODEL_NAMES)]
    error_model: String,
    /// Mean burst length in packets of netem-state / netem-gemodel (default: the calibrated
    /// value, docs/calibration.md).
    #[arg(long, value_name = "PACKETS")]
    loss_burst_packets: Option<f64>,
    /// Mean burst duration in seconds of the ctmc model (default: 0.2, the calibration grid's
    /// best for ctmc, docs/calibration.md).
    #[arg(long, value_name = "S")]
    burst_mean_s: Option<f64>,
}

/// `--loss NAME:V1,V2,..`: a loss model of netsim's one loss grammar with the values of a
/// scenario's loss table in the table's order (`netem-gemodel:2.5,10,50,0` is `{ model =
/// "netem-gemodel", p = 2.5, r = 10, "1-h" = 50, "1-k" = 0 }`), or `None` when `loss` names
/// none of them.
fn positional_model(loss: &str) -> Option<Result<LossModel, String>> {
    let (name, values) = loss.split_once(':')?;
    let spec = loss_model_spec(name)?;
    let list: Vec<&str> = values.split(',').collect();
    if list.len() > spec.params.len() {
        let max = spec.params.len();
        return Some(Err(format!("--loss {loss}: at most {max} values")));
    }
    let text = |key: &str| {
        let i = spec.params.iter().position(|p| p.key == key)?;
        list.get(i).copied()
    };
    let get = |key: &'static str| {
        let unit = spec.params.iter().find(|p| p.key == key)?.unit;
        text(key).map(|v| match unit {
            LossUnit::Percent => {
                netem::parse_percent(v).map_or(LossValue::Invalid, LossValue::Netem)
            }
            _ => v.parse().map_or(LossValue::Invalid, LossValue::Number),
        })
    };
    Some(build(name, get).map_err(|e| match e {
        LossBuildError::WrongUnit {
            key,
            unit: LossUnit::Percent,
        } => format!(
            "--loss {loss}: '{}' is not a percentage in [0, 100] (tc syntax: 2.5 or 2.5%)",
            text(key).unwrap_or_default()
        ),
        LossBuildError::StateSum { .. } => {
            format!("--loss {loss}: p13 + p14 and p31 + p32 must be at most 100")
        }
        e => format!("--loss {loss}: {e}"),
    }))
}

/// `--KEY MS` as a [`Duration`], in the range netsim's `LINK_PARAMS` gives `key` (every delay
/// and jitter key: [0, 3600000] ms, as in a scenario).
fn millis(key: &str, ms: f64) -> Result<Duration, String> {
    let (min, max) = match link_param(key).map(|p| p.kind) {
        Some(Kind::Float { min, max }) => (min, max),
        other => unreachable!("'{key}' is a LINK_PARAMS delay key, not {other:?}"),
    };
    if !(min..=max).contains(&ms) {
        return Err(format!("{ms} ms is not a delay in [{min}, {max}]"));
    }
    Ok(Duration::from_nanos((ms * 1e6).round() as i64))
}

/// The link trace in `path` (netsim's format), or an error naming the file and its line.
fn trace(path: &Path) -> Result<Arc<LinkTrace>, String> {
    let text = files::read_text(path, Input::LinkTrace).map_err(|e| e.to_string())?;
    link_trace::parse(&text)
        .map(Arc::new)
        .map_err(|e| format!("link trace {}: {e}", path.display()))
}

fn mode(name: &str) -> JitterMode {
    JitterMode::from_name(name).unwrap_or_default()
}

impl LinkOpts {
    /// The network these options describe (validated).
    pub(crate) fn network(&self) -> Result<NetworkConfig, String> {
        let mut net = NetworkConfig::from_preset_name(&self.preset).map_err(|e| e.to_string())?;
        if let Some(x) = self.rate_bps {
            net.down.rate_bps = x;
            net.up.rate_bps = x;
        }
        if let Some(x) = self.down_rate_bps {
            net.down.rate_bps = x;
        }
        if let Some(x) = self.up_rate_bps {
            net.up.rate_bps = x;
        }
        if let Some(x) = self.delay_ms {
            net.down.propagation.delay = millis("delay_ms", x)?;
            net.up.propagation.delay = millis("delay_ms", x)?;
        }
        if let Some(x) = self.down_delay_ms {
            net.down.propagation.delay = millis("down_delay_ms", x)?;
        }
        if let Some(x) = self.up_delay_ms {
            net.up.propagation.delay = millis("up_delay_ms", x)?;
        }
        if let Some(x) = self.mtu {
            net.mtu_bytes = x;
        }
        if let Some(x) = self.overhead_bytes {
            net.set_overhead_bytes(x);
        }
        if let Some(x) = self.buffer_bytes {
            net.set_buffer_bytes(x);
        }
        if let Some(x) = self.down_buffer_bytes {
            net.down.buffer_bytes = x;
        }
        if let Some(x) = self.up_buffer_bytes {
            net.up.buffer_bytes = x;
        }
        if let Some(x) = self.rest_delay_ms {
            net.rest_down.delay = millis("rest_delay_ms", x)?;
            net.rest_up.delay = millis("rest_delay_ms", x)?;
        }
        if let Some(x) = self.rest_jitter_ms {
            for stage in [&mut net.rest_down, &mut net.rest_up] {
                stage.jitter = millis("rest_jitter_ms", x)?;
                if x > 0.0 {
                    stage.jitter_mode = JitterMode::Fifo;
                }
            }
        }
        if let Some(m) = &self.rest_jitter_mode {
            net.rest_down.jitter_mode = mode(m);
            net.rest_up.jitter_mode = mode(m);
        }
        if let Some(x) = self.jitter_ms {
            for stage in [&mut net.down.propagation, &mut net.up.propagation] {
                stage.jitter = millis("jitter_ms", x)?;
                if x > 0.0 {
                    stage.jitter_mode = JitterMode::Fifo;
                }
            }
        }
        if let Some(m) = &self.jitter_mode {
            net.down.propagation.jitter_mode = mode(m);
            net.up.propagation.jitter_mode = mode(m);
        }
        if let Some(loss) = &self.loss {
            net.set_loss(self.loss_model(loss)?);
        }
        let both = self.link_trace.as_deref().map(trace).transpose()?;
        let down = self.down_link_trace.as_deref().map(trace).transpose()?;
        let up = self.up_link_trace.as_deref().map(trace).transpose()?;
        net.down.trace = down.or_else(|| both.clone());
        net.up.trace = up.or(both);
        if net.mtu_bytes > 65_535 {
            return Err("--mtu must be at most 65535".into());
        }
        net.validate().map_err(|e| e.to_string())?;
        Ok(net)
    }

    fn loss_model(&self, loss: &str) -> Result<LossModel, String> {
        if let Some(model) = positional_model(loss) {
            return model;
        }
        let expected = || {
            let forms: Vec<String> = LOSS_MODELS.iter().map(|m| m.positional()).collect();
            format!(
                "--loss {loss}: one of none, low, medium, high, or a loss model with its values: {}",
                forms.join(", ")
            )
        };
        let model = ErrorModel::from_name(&self.error_model);
        let burst_mean = match self.burst_mean_s {
            Some(s) if !(s.is_finite() && s >= 1e-3) => {
                return Err(format!(
                    "--burst-mean-s {s}: a duration of at least 0.001 s"
                ))
            }
            s => s.map(Duration::from_secs_f64_round_us),
        };
        let form = ProfileForm::new(model, self.loss_burst_packets, burst_mean).map_err(|e| {
            let flag = match e {
                coaplab_netsim::FormError::BurstPacketsNeedNetem => "--loss-burst-packets",
                coaplab_netsim::FormError::BurstSecondsNeedCtmc => "--burst-mean-s",
            };
            format!("{flag}: {e} (--error-model {})", self.error_model)
        })?;
        form.realise(loss).map_err(|e| match e {
            coaplab_netsim::ProfileError::UnknownProfile => expected(),
            e => format!("--loss {loss} --error-model {}: {e}", self.error_model),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use coaplab_netsim::{
        CtmcParams, GeParams, NetemGeParams, NetemRandomParams, NetemStateParams,
        DEFAULT_BURST_PACKETS,
    };

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        link: LinkOpts,
    }

    fn parse(args: &[&str]) -> Result<NetworkConfig, String> {
        let t = T::try_parse_from(std::iter::once("t").chain(args.iter().copied()))
            .map_err(|e| e.to_string())?;
        t.link.network()
    }

    #[test]
    fn overrides_apply_on_the_preset() {
        let n = parse(&[
            "--preset",
            "zigbee",
            "--buffer-bytes",
            "900",
            "--up-rate-bps",
            "5000",
        ])
        .unwrap();
        assert_eq!((n.up.buffer_bytes, n.down.buffer_bytes), (900, 900));
        assert_eq!((n.up.rate_bps, n.down.rate_bps), (5_000, 20_000));
        assert_eq!(n.mtu_bytes, 128);
        let n = parse(&["--rest-jitter-ms", "2", "--loss", "bernoulli:0.25"]).unwrap();
        assert_eq!(n.rest_up.jitter_mode, JitterMode::Fifo);
        assert_eq!(n.down.loss, LossModel::Bernoulli { p: 0.25 });
        assert_eq!(
            parse(&[]).unwrap(),
            NetworkConfig::from_preset_name("nbiot").unwrap()
        );
    }

    #[test]
    fn netem_models_take_tcs_values() {
        let pct = |x: f64| netem::prob_from_percent(x).unwrap();
        let n = parse(&["--loss", "netem-gemodel:2.5,10%,50,0"]).unwrap();
        assert_eq!(
            n.up.loss,
            LossModel::NetemGemodel(NetemGeParams {
                p: pct(2.5),
                r: pct(10.0),
                h: u32::MAX - pct(50.0),
                k1: 0
            })
        );
        let n = parse(&["--loss", "netem-state:5"]).unwrap();
        assert_eq!(
            n.down.loss,
            LossModel::NetemState(NetemStateParams::tc_defaults(pct(5.0)))
        );
        let n = parse(&["--loss", "netem-random:2,25"]).unwrap();
        assert_eq!(
            n.down.loss,
            LossModel::NetemRandom(NetemRandomParams {
                loss: pct(2.0),
                correlation: pct(25.0)
            })
        );
        let n = parse(&["--loss", "high", "--error-model", "netem-gemodel"]).unwrap();
        assert_eq!(
            n.down.loss,
            LossModel::profile_netem_gemodel("high", DEFAULT_BURST_PACKETS).unwrap()
        );
        // netem's gemodel is the default realisation of the profiles (issue 12).
        assert_eq!(parse(&["--loss", "high"]).unwrap().down.loss, n.down.loss);
        let n = parse(&["--loss", "high", "--error-model", "ctmc"]).unwrap();
        assert!(matches!(n.down.loss, LossModel::Ctmc(_)));
        let args = [
            "--loss",
            "medium",
            "--error-model",
            "netem-state",
            "--loss-burst-packets",
            "20",
        ];
        assert_eq!(
            parse(&args).unwrap().down.loss,
            LossModel::profile_netem_state("medium", 20.0).unwrap()
        );
        for bad in [
            &["--loss", "netem-gemodel:120"][..],
            &["--loss", "netem-gemodel:1,2,3,4,5"],
            &["--loss", "netem-state:60,0,0,0,50"],
            &["--loss", "netem-random:x"],
            &[
                "--loss",
                "medium",
                "--error-model",
                "ctmc",
                "--loss-burst-packets",
                "20",
            ],
            &[
                "--loss",
                "medium",
                "--error-model",
                "netem-state",
                "--loss-burst-packets",
                "2",
            ],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_flags_are_the_link_keys() {
        use clap::CommandFactory;
        use coaplab_netsim::config::params::LINK_PARAMS;
        let flags: Vec<String> = T::command()
            .get_arguments()
            .filter_map(|a| a.get_long())
            .map(|l| l.replace('-', "_"))
            .collect();
        let keys: Vec<&str> = LINK_PARAMS.iter().map(|p| p.key).collect();
        assert_eq!(flags, keys);
    }

    #[test]
    fn every_loss_model_of_a_scenario_table_is_a_loss_flag_too() {
        let n = parse(&["--loss", "ctmc:4,1,0,0.5"]).unwrap();
        assert_eq!(
            n.down.loss,
            LossModel::Ctmc(CtmcParams {
                good_mean: Duration::from_secs(4),
                burst_mean: Duration::from_secs(1),
                loss_good: 0.0,
                loss_burst: 0.5
            })
        );
        let n = parse(&["--loss", "gilbert-elliott:0.025,0.1"]).unwrap();
        assert_eq!(
            n.up.loss,
            LossModel::GilbertElliott(GeParams {
                p: 0.025,
                r: 0.1,
                loss_good: 0.0,
                loss_bad: 1.0
            })
        );
        let e = parse(&["--loss", "ctmc:4"]).unwrap_err();
        assert!(e.contains("'burst_mean_s'"), "{e}");
        let e = parse(&["--loss", "lots"]).unwrap_err();
        assert!(e.contains("netem-state:p13[,p31[,p32[,p23[,p14]]]]"), "{e}");
    }

    #[test]
    fn link_trace_flags_read_the_files_and_name_a_bad_line() {
        let dir = std::env::temp_dir().join(format!("coaplab-link-opts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.csv");
        let bad = dir.join("bad.csv");
        std::fs::write(&good, "0,60000,200\n5,7500,250\n").unwrap();
        std::fs::write(&bad, "0,60000,200\n5,7500\n").unwrap();
        let g = good.to_str().unwrap();
        let n = parse(&["--link-trace", g]).unwrap();
        assert_eq!(n.down.trace, n.up.trace);
        assert_eq!(n.up.trace.unwrap().segments()[1].rate_bps, 7_500);
        let n = parse(&["--up-link-trace", g]).unwrap();
        assert!(n.down.trace.is_none() && n.up.trace.is_some());
        let e = parse(&["--down-link-trace", bad.to_str().unwrap()]).unwrap_err();
        assert!(e.contains("bad.csv: line 2:"), "{e}");
        // A traced link takes no jitter (netsim's validation).
        let e = parse(&["--link-trace", g, "--jitter-ms", "5"]).unwrap_err();
        assert!(e.contains("trace"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_values_are_refused() {
        assert!(parse(&["--loss", "bernoulli:2"]).is_err());
        assert!(parse(&["--loss", "lots"]).is_err());
        assert!(parse(&["--rate-bps", "0"]).is_err());
        assert!(parse(&["--delay-ms", "-3"]).is_err());
        assert_eq!(
            parse(&["--delay-ms=-3"]).unwrap_err(),
            "-3 ms is not a delay in [0, 3600000]"
        );
    }
}
