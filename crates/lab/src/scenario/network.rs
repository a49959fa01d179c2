//! `[network]`: a link preset (spec §2) and overrides of every preset value; the loss setting
//! (spec §3). The presets, profiles and types are netsim's: this module only reads keys and
//! applies them onto a [`NetworkConfig`].

use coaplab_cc::time::Duration;
use coaplab_netsim::{
    CtmcParams, GeParams, JitterMode, LossModel, NetworkConfig, Preset, PRESET_NAMES,
};
use toml_edit::{Item, Value};

use super::reader::{choice, float, millis, shown, uint, Reader, PROTOCOL_KEYS};
use super::ScenarioError;

/// Keys valid in `[network]` besides the protocol keys.
const NETWORK_KEYS: &[&str] = &[
    "preset",
    "rate_bps",
    "down_rate_bps",
    "up_rate_bps",
    "delay_ms",
    "down_delay_ms",
    "up_delay_ms",
    "jitter_ms",
    "jitter_mode",
    "mtu",
    "overhead_bytes",
    "buffer_bytes",
    "down_buffer_bytes",
    "up_buffer_bytes",
    "rest_delay_ms",
    "rest_jitter_ms",
    "rest_jitter_mode",
    "loss",
    "error_model",
];

/// The error models a profile can be realised with: `ctmc` ([`LossModel::profile`]) or
/// `gilbert-elliott` ([`LossModel::profile_gilbert_elliott`]).
const ERROR_MODELS: &[&str] = &["ctmc", "gilbert-elliott"];

/// The network of `[network]`: netsim's configuration, its preset and the loss label.
pub(super) struct Network {
    /// netsim's configuration after the overrides.
    pub(super) config: NetworkConfig,
    /// The preset it started from.
    pub(super) preset: Preset,
    /// The loss label for results.
    pub(super) loss_label: String,
}

impl Network {
    /// Preset `preset` as netsim defines it, no link errors.
    fn preset(preset: Preset) -> Network {
        Network {
            config: NetworkConfig::preset(preset),
            preset,
            loss_label: "none".to_string(),
        }
    }
}

/// Reads `[network]` (absent: the `nbiot` preset as is).
pub(super) fn read(r: &mut Reader<'_>, doc: &toml_edit::Table) -> Result<Network, ScenarioError> {
    let Some(item) = doc.get("network") else {
        return Ok(Network::preset(Preset::Nbiot));
    };
    let t = item
        .as_table_like()
        .ok_or_else(|| r.bad(item.span(), "network", item.type_name(), "a table"))?;
    let allowed: Vec<&str> = NETWORK_KEYS.iter().chain(PROTOCOL_KEYS).copied().collect();
    r.check_keys(t, "network", &allowed)?;
    let p = "network";
    let preset = r
        .scalar(t, p, "preset", |v| choice(v, &PRESET_NAMES))?
        .and_then(|name| Preset::from_name(&name))
        .unwrap_or(Preset::Nbiot);
    let mut out = Network::preset(preset);
    let net = &mut out.config;
    let rate = |v: &Value| uint(v, 1, 100_000_000_000);
    let ms = |v: &Value| float(v, 0.0, 3_600_000.0);
    let bytes = |v: &Value| uint(v, 1, 1 << 40);
    if let Some(x) = r.scalar(t, p, "rate_bps", rate)? {
        net.down.rate_bps = x;
        net.up.rate_bps = x;
    }
    if let Some(x) = r.scalar(t, p, "down_rate_bps", rate)? {
        net.down.rate_bps = x;
    }
    if let Some(x) = r.scalar(t, p, "up_rate_bps", rate)? {
        net.up.rate_bps = x;
    }
    if let Some(x) = r.scalar(t, p, "delay_ms", ms)? {
        net.down.propagation.delay = millis(x);
        net.up.propagation.delay = millis(x);
    }
    if let Some(x) = r.scalar(t, p, "down_delay_ms", ms)? {
        net.down.propagation.delay = millis(x);
    }
    if let Some(x) = r.scalar(t, p, "up_delay_ms", ms)? {
        net.up.propagation.delay = millis(x);
    }
    if let Some(x) = r.scalar(t, p, "mtu", |v| uint(v, 68, 65_535))? {
        net.mtu_bytes = x as u32;
    }
    if let Some(x) = r.scalar(t, p, "overhead_bytes", |v| uint(v, 0, 10_000))? {
        net.set_overhead_bytes(x as u32);
    }
    if let Some(x) = r.scalar(t, p, "buffer_bytes", bytes)? {
        net.set_buffer_bytes(x);
    }
    if let Some(x) = r.scalar(t, p, "down_buffer_bytes", bytes)? {
        net.down.buffer_bytes = x;
    }
    if let Some(x) = r.scalar(t, p, "up_buffer_bytes", bytes)? {
        net.up.buffer_bytes = x;
    }
    if let Some(x) = r.scalar(t, p, "rest_delay_ms", ms)? {
        net.rest_down.delay = millis(x);
        net.rest_up.delay = millis(x);
    }
    if let Some(x) = r.scalar(t, p, "rest_jitter_ms", ms)? {
        net.rest_down.jitter = millis(x);
        net.rest_up.jitter = millis(x);
        if x > 0.0 {
            net.rest_down.jitter_mode = JitterMode::Fifo;
            net.rest_up.jitter_mode = JitterMode::Fifo;
        }
    }
    let modes = &["none", "fifo", "reorder"];
    let mode_of = |x: &str| JitterMode::from_name(x).unwrap_or_default();
    if let Some(x) = r.scalar(t, p, "rest_jitter_mode", |v| choice(v, modes))? {
        net.rest_down.jitter_mode = mode_of(&x);
        net.rest_up.jitter_mode = mode_of(&x);
    }
    if let Some(x) = r.scalar(t, p, "jitter_ms", ms)? {
        net.down.propagation.jitter = millis(x);
        net.up.propagation.jitter = millis(x);
        if x > 0.0 {
            net.down.propagation.jitter_mode = JitterMode::Fifo;
            net.up.propagation.jitter_mode = JitterMode::Fifo;
        }
    }
    if let Some(x) = r.scalar(t, p, "jitter_mode", |v| choice(v, modes))? {
        net.down.propagation.jitter_mode = mode_of(&x);
        net.up.propagation.jitter_mode = mode_of(&x);
    }
    for (key, stage) in [
        ("rest_jitter_ms", &net.rest_down),
        ("jitter_ms", &net.down.propagation),
        ("rest_jitter_ms", &net.rest_up),
        ("jitter_ms", &net.up.propagation),
    ] {
        if stage.jitter > stage.delay {
            let span = t.get(key).and_then(Item::span);
            let hint = if key == "jitter_ms" {
                "at most the propagation delay of both directions (delays never go negative)"
            } else {
                "at most rest_delay_ms (delays never go negative)"
            };
            return Err(r.bad(
                span,
                &format!("network.{key}"),
                &format!("{}", stage.jitter.as_secs_f64() * 1e3),
                hint,
            ));
        }
    }
    let model = r
        .scalar(t, p, "error_model", |v| choice(v, ERROR_MODELS))?
        .unwrap_or_else(|| "ctmc".to_string());
    if let Some(item) = t.get("loss") {
        let (loss, label) = match item {
            Item::Table(table) => {
                let inline = Value::InlineTable(table.clone().into_inline_table());
                loss_value(&inline, &model)
                    .map_err(|e| r.bad(item.span(), "network.loss", "(table)", e))?
            }
            _ => r
                .scalar(t, p, "loss", |v| loss_value(v, &model))?
                .unwrap_or((LossModel::None, "none".to_string())),
        };
        net.set_loss(loss);
        out.loss_label = label;
    }
    Ok(out)
}

/// A loss setting: a profile name or a table `{ model = .., .. }`, with its results label.
fn loss_value(v: &Value, error_model: &str) -> Result<(LossModel, String), String> {
    let expected = "one of none, low, medium, high, or a table { model = \"bernoulli\" | \
                    \"ctmc\" | \"gilbert-elliott\", ... }";
    match v {
        Value::String(s) => {
            let name = s.value().as_str();
            let profile = if error_model == "gilbert-elliott" {
                LossModel::profile_gilbert_elliott(name)
            } else {
                LossModel::profile(name)
            };
            profile
                .map(|model| (model, name.to_string()))
                .ok_or_else(|| expected.to_string())
        }
        Value::InlineTable(t) => loss_table(t).map(|m| (m, table_label(t))),
        _ => Err(expected.to_string()),
    }
}

/// The results label of a loss table: the model, then `key=value` for each other key in the
/// order written, e.g. `bernoulli p=0.05` (no quotes or commas, so CSV leaves it as is).
fn table_label(t: &toml_edit::InlineTable) -> String {
    let mut label = t
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    for (k, v) in t.iter().filter(|(k, _)| *k != "model") {
        label.push_str(&format!(" {k}={}", shown(v).trim()));
    }
    label
}

/// A loss table: `model` and that model's parameters.
fn loss_table(t: &toml_edit::InlineTable) -> Result<LossModel, String> {
    let model = t
        .get("model")
        .and_then(Value::as_str)
        .ok_or("a loss table with model = \"bernoulli\" | \"ctmc\" | \"gilbert-elliott\"")?;
    let keys: &[&str] = match model {
        "bernoulli" => &["model", "p"],
        "ctmc" => &[
            "model",
            "good_mean_s",
            "burst_mean_s",
            "loss_good",
            "loss_burst",
        ],
        "gilbert-elliott" => &["model", "p", "r", "loss_good", "loss_bad"],
        other => {
            return Err(format!(
                "loss model one of bernoulli, ctmc, gilbert-elliott (not \"{other}\")"
            ))
        }
    };
    for (k, _) in t.iter() {
        if !keys.contains(&k) {
            return Err(format!(
                "a {model} table with keys {} (not '{k}')",
                keys.join(", ")
            ));
        }
    }
    let num = |k: &str, min: f64, max: f64, default: Option<f64>| -> Result<f64, String> {
        match t.get(k) {
            Some(v) => float(v, min, max).map_err(|e| format!("'{k}' {e}")),
            None => default.ok_or_else(|| format!("a {model} table with '{k}'")),
        }
    };
    let secs = |k: &str| num(k, 1e-6, 1e7, None).map(Duration::from_secs_f64_round_us);
    Ok(match model {
        "bernoulli" => LossModel::Bernoulli {
            p: num("p", 0.0, 1.0, None)?,
        },
        "ctmc" => LossModel::Ctmc(CtmcParams {
            good_mean: secs("good_mean_s")?,
            burst_mean: secs("burst_mean_s")?,
            loss_good: num("loss_good", 0.0, 1.0, Some(0.0))?,
            loss_burst: num("loss_burst", 0.0, 1.0, Some(1.0))?,
        }),
        _ => LossModel::GilbertElliott(GeParams {
            p: num("p", 0.0, 1.0, None)?,
            r: num("r", 0.0, 1.0, None)?,
            loss_good: num("loss_good", 0.0, 1.0, Some(0.0))?,
            loss_bad: num("loss_bad", 0.0, 1.0, Some(1.0))?,
        }),
    })
}
