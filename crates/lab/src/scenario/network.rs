//! `[network]`: a link preset (docs/experiments.md §2) and overrides of every preset value; the
//! loss setting (docs/experiments.md §3). The keys, their ranges, the presets, profiles and types
//! are netsim's ([`LINK_PARAMS`]): this module only reads keys and applies them onto a
//! [`NetworkConfig`].

use std::path::Path;
use std::sync::Arc;

use coaplab_cc::params::{Kind, ParamSpec};
use coaplab_cc::time::Duration;
use coaplab_netsim::config::params::{link_param, LINK_PARAMS};
use coaplab_netsim::link::loss::models::{
    self as loss_models, LossBuildError, LossUnit, LossValue,
};
use coaplab_netsim::link::loss::netem;
use coaplab_netsim::link::trace::{self as link_trace, LinkTrace};
use coaplab_netsim::{ErrorModel, JitterMode, LossModel, NetworkConfig, Preset, ProfileForm};
use toml_edit::{Item, Value};

use super::reader::{choice, float, millis, shown, uint, Reader, PROTOCOL_KEYS};
use super::ScenarioError;

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
    let link_keys = LINK_PARAMS.iter().map(|spec| spec.key);
    let allowed: Vec<&str> = link_keys.chain(PROTOCOL_KEYS.iter().copied()).collect();
    r.check_keys(t, "network", &allowed)?;
    let p = "network";
    let preset = r
        .scalar(t, p, "preset", name("preset"))?
        .and_then(|name| Preset::from_name(&name))
        .unwrap_or(Preset::Nbiot);
    let mut out = Network::preset(preset);
    let net = &mut out.config;
    if let Some(x) = r.scalar(t, p, "rate_bps", int("rate_bps"))? {
        net.down.rate_bps = x;
        net.up.rate_bps = x;
    }
    if let Some(x) = r.scalar(t, p, "down_rate_bps", int("down_rate_bps"))? {
        net.down.rate_bps = x;
    }
    if let Some(x) = r.scalar(t, p, "up_rate_bps", int("up_rate_bps"))? {
        net.up.rate_bps = x;
    }
    if let Some(x) = r.scalar(t, p, "delay_ms", number("delay_ms"))? {
        net.down.propagation.delay = millis(x);
        net.up.propagation.delay = millis(x);
    }
    if let Some(x) = r.scalar(t, p, "down_delay_ms", number("down_delay_ms"))? {
        net.down.propagation.delay = millis(x);
    }
    if let Some(x) = r.scalar(t, p, "up_delay_ms", number("up_delay_ms"))? {
        net.up.propagation.delay = millis(x);
    }
    if let Some(x) = r.scalar(t, p, "mtu", int("mtu"))? {
        net.mtu_bytes = x as u32;
    }
    if let Some(x) = r.scalar(t, p, "overhead_bytes", int("overhead_bytes"))? {
        net.set_overhead_bytes(x as u32);
    }
    if let Some(x) = r.scalar(t, p, "buffer_bytes", int("buffer_bytes"))? {
        net.set_buffer_bytes(x);
    }
    if let Some(x) = r.scalar(t, p, "down_buffer_bytes", int("down_buffer_bytes"))? {
        net.down.buffer_bytes = x;
    }
    if let Some(x) = r.scalar(t, p, "up_buffer_bytes", int("up_buffer_bytes"))? {
        net.up.buffer_bytes = x;
    }
    if let Some(x) = r.scalar(t, p, "rest_delay_ms", number("rest_delay_ms"))? {
        net.rest_down.delay = millis(x);
        net.rest_up.delay = millis(x);
    }
    if let Some(x) = r.scalar(t, p, "rest_jitter_ms", number("rest_jitter_ms"))? {
        net.rest_down.jitter = millis(x);
        net.rest_up.jitter = millis(x);
        if x > 0.0 {
            net.rest_down.jitter_mode = JitterMode::Fifo;
            net.rest_up.jitter_mode = JitterMode::Fifo;
        }
    }
    let mode_of = |x: &str| JitterMode::from_name(x).unwrap_or_default();
    if let Some(x) = r.scalar(t, p, "rest_jitter_mode", name("rest_jitter_mode"))? {
        net.rest_down.jitter_mode = mode_of(&x);
        net.rest_up.jitter_mode = mode_of(&x);
    }
    if let Some(x) = r.scalar(t, p, "jitter_ms", number("jitter_ms"))? {
        net.down.propagation.jitter = millis(x);
        net.up.propagation.jitter = millis(x);
        if x > 0.0 {
            net.down.propagation.jitter_mode = JitterMode::Fifo;
            net.up.propagation.jitter_mode = JitterMode::Fifo;
        }
    }
    if let Some(x) = r.scalar(t, p, "jitter_mode", name("jitter_mode"))? {
        net.down.propagation.jitter_mode = mode_of(&x);
        net.up.propagation.jitter_mode = mode_of(&x);
    }
    read_traces(r, t, net)?;
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
    // How the profile names are realised (netsim's `ProfileForm`): the family and its mean
    // burst, each burst key accepted only by the family that counts in its unit.
    let model = r
        .scalar(t, p, "error_model", name("error_model"))?
        .and_then(|name| ErrorModel::from_name(&name));
    let family = model.unwrap_or(ProfileForm::DEFAULT.model);
    let packets = number("loss_burst_packets");
    let burst_packets = r.scalar(t, p, "loss_burst_packets", |v| {
        if family.counts_packets() {
            packets(v)
        } else {
            Err("absent unless error_model is netem-state or netem-gemodel".to_string())
        }
    })?;
    let seconds = number("burst_mean_s");
    let burst_mean = r.scalar(t, p, "burst_mean_s", |v| {
        if family.counts_seconds() {
            seconds(v).map(Duration::from_secs_f64_round_us)
        } else {
            Err("absent unless error_model is ctmc".to_string())
        }
    })?;
    let form = ProfileForm::new(model, burst_packets, burst_mean)
        .expect("each burst key was checked against the family above");
    let profiles = Profiles { form };
    if let Some(item) = t.get("loss") {
        let (loss, label) = match item {
            Item::Table(table) => {
                let inline = Value::InlineTable(table.clone().into_inline_table());
                loss_value(&inline, &profiles)
                    .map_err(|e| r.bad(item.span(), "network.loss", "(table)", e))?
            }
            _ => r
                .scalar(t, p, "loss", |v| loss_value(v, &profiles))?
                .unwrap_or((LossModel::None, "none".to_string())),
        };
        net.set_loss(loss);
        out.loss_label = label;
    }
    Ok(out)
}

/// `link_trace`, `down_link_trace`, `up_link_trace`: each file read relative to the scenario's
/// directory and parsed by netsim's [`link_trace::parse`]; a bad file is an error at the key
/// naming the file and its line. A traced direction takes no propagation jitter.
fn read_traces(
    r: &mut Reader<'_>,
    t: &dyn toml_edit::TableLike,
    net: &mut NetworkConfig,
) -> Result<(), ScenarioError> {
    let p = "network";
    let path = |v: &Value| {
        v.as_str()
            .filter(|s| !s.is_empty())
            .map(String::from)
            .ok_or_else(|| "a link-trace file path (docs/link-traces.md)".to_string())
    };
    let load = |r: &mut Reader<'_>, key: &str| -> Result<Option<Arc<LinkTrace>>, ScenarioError> {
        let Some(file) = r.scalar(t, p, key, path)? else {
            return Ok(None);
        };
        let base = Path::new(r.file()).parent().unwrap_or(Path::new(""));
        let full = base.join(&file);
        let span = t.get(key).and_then(Item::span);
        let text = crate::files::read_text(&full, crate::files::Input::LinkTrace).map_err(|e| {
            let expected = format!("a readable link-trace file (relative to the scenario); {e}");
            r.bad(span.clone(), &format!("{p}.{key}"), &file, expected)
        })?;
        let trace = link_trace::parse(&text).map_err(|e| {
            r.bad(
                span,
                &format!("{p}.{key}"),
                &file,
                format!("a valid link trace; {}: {e}", full.display()),
            )
        })?;
        Ok(Some(Arc::new(trace)))
    };
    let both = load(r, "link_trace")?;
    let down = load(r, "down_link_trace")?.or_else(|| both.clone());
    let up = load(r, "up_link_trace")?.or(both);
    for (link, trace) in [(&mut net.down, down), (&mut net.up, up)] {
        if trace.is_some() && link.propagation.jitter > Duration::ZERO {
            let span = t.get("jitter_ms").and_then(Item::span);
            return Err(r.bad(
                span,
                "network.jitter_ms",
                &format!("{}", link.propagation.jitter.as_secs_f64() * 1e3),
                "0 on a direction with a link trace (the trace gives its delay)",
            ));
        }
        link.trace = trace;
    }
    Ok(())
}

/// The [`LINK_PARAMS`] entry of `key` (a programming error if there is none).
fn spec(key: &str) -> &'static ParamSpec {
    link_param(key).unwrap_or_else(|| panic!("'{key}' is not a LINK_PARAMS key"))
}

/// A `[network]` integer in the range [`LINK_PARAMS`] gives `key`.
fn int(key: &str) -> impl Fn(&Value) -> Result<u64, String> {
    let Kind::Int { min, max } = spec(key).kind else {
        panic!("'{key}' is not an integer key of LINK_PARAMS")
    };
    // Every link integer is a count, a size or a rate: never negative.
    let (min, max) = (min.max(0) as u64, max.max(0) as u64);
    move |v| uint(v, min, max)
}

/// A `[network]` number (integer or float) in the range [`LINK_PARAMS`] gives `key`.
fn number(key: &str) -> impl Fn(&Value) -> Result<f64, String> {
    let (Kind::Float { min, max } | Kind::Seconds { min, max }) = spec(key).kind else {
        panic!("'{key}' is not a number key of LINK_PARAMS")
    };
    move |v| float(v, min, max)
}

/// One of the names [`LINK_PARAMS`] gives `key`.
fn name(key: &str) -> impl Fn(&Value) -> Result<String, String> {
    let Kind::Choice(names) = spec(key).kind else {
        panic!("'{key}' is not a choice key of LINK_PARAMS")
    };
    move |v| choice(v, names)
}

/// How profile names are realised: `error_model`, `loss_burst_packets`, `burst_mean_s`.
struct Profiles {
    form: ProfileForm,
}

impl Profiles {
    /// Profile `name` under this error model.
    fn profile(&self, name: &str) -> Result<LossModel, String> {
        self.form.realise(name).map_err(|e| match e {
            coaplab_netsim::ProfileError::UnknownProfile => {
                let models = loss_models::names();
                format!("one of none, low, medium, high, or a table {{ model = {models} }}")
            }
            e => {
                let key = if self.form.model.counts_seconds() {
                    "burst_mean_s"
                } else {
                    "loss_burst_packets"
                };
                format!(
                    "{e} for {name} under {} (network.{key})",
                    self.form.model.name()
                )
            }
        })
    }
}

/// A loss setting: a profile name or a table `{ model = .., .. }`, with its results label.
fn loss_value(v: &Value, profiles: &Profiles) -> Result<(LossModel, String), String> {
    let models = loss_models::names();
    let expected =
        format!("one of none, low, medium, high, or a table {{ model = {models}, ... }}");
    match v {
        Value::String(s) => {
            let name = s.value().as_str();
            profiles
                .profile(name)
                .map(|model| (model, name.to_string()))
        }
        Value::InlineTable(t) => loss_table(t).map(|m| (m, table_label(t))),
        _ => Err(expected),
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

/// A loss table: `model` and that model's parameters, built by netsim's one loss grammar
/// ([`loss_models::build`]: defaults, ranges and tc's rules); only the TOML syntax is read here.
fn loss_table(t: &toml_edit::InlineTable) -> Result<LossModel, String> {
    let model = t
        .get("model")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("a loss table with model one of {}", loss_models::names()))?;
    let spec = loss_models::loss_model_spec(model)
        .ok_or_else(|| LossBuildError::UnknownModel(model.to_string()).to_string())?;
    let keys = spec.table_keys();
    for (k, _) in t.iter() {
        if !keys.contains(&k) {
            return Err(format!(
                "a {model} table with keys {} (not '{k}')",
                keys.join(", ")
            ));
        }
    }
    let get = |key: &'static str| {
        let unit = spec.params.iter().find(|p| p.key == key)?.unit;
        t.get(key).map(|v| match (unit, v) {
            // netem's values are percentages as tc reads them (a number, or a string ending
            // in %), scaled as tc's set_percent() does.
            (LossUnit::Percent, v) => percent(v).map_or(LossValue::Invalid, LossValue::Netem),
            (_, Value::Integer(i)) => LossValue::Number(*i.value() as f64),
            (_, Value::Float(x)) => LossValue::Number(*x.value()),
            _ => LossValue::Invalid,
        })
    };
    loss_models::build(model, get).map_err(|e| match e {
        LossBuildError::Missing { model, key } => format!("a {model} table with '{key}'"),
        LossBuildError::StateSum { sum, key } => {
            format!("a netem-state table with {sum} at most 100 (see '{key}')")
        }
        e => e.to_string(),
    })
}

/// A netem percentage as tc reads it: a number in `[0, 100]`, or a string such as `"2.5%"`.
fn percent(v: &Value) -> Option<u32> {
    match v {
        Value::Integer(i) => netem::prob_from_percent(*i.value() as f64),
        Value::Float(x) => netem::prob_from_percent(*x.value()),
        Value::String(s) => netem::parse_percent(s.value()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use coaplab_netsim::link::loss::netem::prob_from_percent;
    use coaplab_netsim::{LossModel, NetemGeParams, NetemStateParams};

    use crate::scenario::Scenario;

    fn loss_of(network: &str) -> Result<LossModel, (usize, Option<String>, String)> {
        let text = format!("name = \"x\"\n[network]\n{network}\n[[flows]]\ncc = \"default\"\n");
        Scenario::parse(&text, "t.toml")
            .and_then(|s| s.config(0))
            .map(|c| c.network.down.loss)
            .map_err(|e| (e.line(), e.key().map(str::to_string), e.to_string()))
    }

    fn pct(x: f64) -> u32 {
        prob_from_percent(x).unwrap()
    }

    #[test]
    fn link_traces_are_read_relative_to_the_scenario_and_bad_ones_name_file_and_line() {
        use coaplab_netsim::link::trace::TraceEnd;
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("traces")).unwrap();
        let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
        write("traces/down.csv", "0,30000,400\n1000,3750,450\n2000,loop\n");
        write("traces/bad.csv", "0,30000,400\n# x\n500,lots,400\n");
        let scenario = |network: &str| {
            let file = dir.path().join("s.toml");
            write(
                "s.toml",
                &format!("name = \"x\"\n[network]\n{network}\n[[flows]]\ncc = \"default\"\n"),
            );
            Scenario::load(&file).and_then(|s| s.config(0))
        };
        let c = scenario("down_link_trace = \"traces/down.csv\"").unwrap();
        let down = c.network.down.trace.unwrap();
        assert_eq!(down.segments()[1].rate_bps, 3_750);
        assert!(matches!(down.end(), TraceEnd::Loop { .. }));
        assert!(c.network.up.trace.is_none());
        // link_trace sets both; a direction's own key wins.
        let c = scenario("link_trace = \"traces/down.csv\"").unwrap();
        assert!(c.network.up.trace.is_some() && c.network.down.trace.is_some());
        let e = scenario("down_link_trace = \"traces/bad.csv\"").unwrap_err();
        assert_eq!((e.line(), e.key()), (3, Some("network.down_link_trace")));
        let msg = e.to_string();
        assert!(msg.contains("bad.csv: line 3: rate_bps: 'lots'"), "{msg}");
        let e = scenario("up_link_trace = \"traces/none.csv\"").unwrap_err();
        assert_eq!(e.key(), Some("network.up_link_trace"));
        assert!(e.to_string().contains("a readable link-trace file"), "{e}");
        let e = scenario("jitter_ms = 5\nlink_trace = \"traces/down.csv\"").unwrap_err();
        assert_eq!((e.line(), e.key()), (3, Some("network.jitter_ms")));
    }

    #[test]
    fn netem_error_models_realise_the_profiles() {
        let ge = loss_of("error_model = \"netem-gemodel\"\nloss = \"medium\"").unwrap();
        assert_eq!(
            ge,
            LossModel::profile_netem_gemodel("medium", coaplab_netsim::DEFAULT_BURST_PACKETS)
                .unwrap()
        );
        let st = loss_of("error_model = \"netem-state\"\nloss_burst_packets = 20\nloss = \"high\"");
        assert_eq!(
            st.unwrap(),
            LossModel::profile_netem_state("high", 20.0).unwrap()
        );
        // Without error_model the profiles are netem's gemodel (issue 12); ctmc stays available.
        assert_eq!(loss_of("loss = \"medium\"").unwrap(), ge);
        assert!(matches!(
            loss_of("error_model = \"ctmc\"\nloss = \"medium\"").unwrap(),
            LossModel::Ctmc(_)
        ));
        // The burst length only means something for netem's models; too short is refused.
        let e = loss_of("error_model = \"ctmc\"\nloss_burst_packets = 5\nloss = \"medium\"")
            .unwrap_err();
        assert_eq!(
            (e.0, e.1.as_deref()),
            (4, Some("network.loss_burst_packets"))
        );
        let e = loss_of("error_model = \"netem-state\"\nloss_burst_packets = 2\nloss = \"medium\"")
            .unwrap_err();
        assert_eq!((e.0, e.1.as_deref()), (5, Some("network.loss")));
        assert!(e.2.contains("at least 4 packets"), "{}", e.2);
    }

    #[test]
    fn netem_tables_take_tc_percentages_and_defaults() {
        let ge =
            loss_of("loss = { model = \"netem-gemodel\", p = 2.5, r = \"10%\", \"1-h\" = 50 }");
        assert_eq!(
            ge.unwrap(),
            LossModel::NetemGemodel(NetemGeParams {
                p: pct(2.5),
                r: pct(10.0),
                h: u32::MAX - pct(50.0),
                k1: 0
            })
        );
        // tc: gemodel p alone → r = 100 − p, 1-h = 100 %, 1-k = 0.
        let ge = loss_of("loss = { model = \"netem-gemodel\", p = 20 }").unwrap();
        assert_eq!(
            ge,
            LossModel::NetemGemodel(NetemGeParams {
                p: pct(20.0),
                r: pct(80.0),
                h: 0,
                k1: 0
            })
        );
        // tc: state p13 alone → p31 = 100 − p13, p32 = 0, p23 = 100, p14 = 0.
        let st = loss_of("loss = { model = \"netem-state\", p13 = 5, p14 = 1 }").unwrap();
        assert_eq!(
            st,
            LossModel::NetemState(NetemStateParams {
                p13: pct(5.0),
                p31: pct(95.0),
                p32: 0,
                p23: u32::MAX,
                p14: pct(1.0)
            })
        );
        let rnd = loss_of("loss = { model = \"netem-random\", p = 2, correlation = 25 }");
        assert!(matches!(rnd.unwrap(), LossModel::NetemRandom(r) if r.correlation == pct(25.0)));
        // Out of range, unknown key, wrapping sum: errors naming network.loss on its line.
        for bad in [
            "loss = { model = \"netem-gemodel\", p = 120 }",
            "loss = { model = \"netem-gemodel\", p = 1, h = 3 }",
            "loss = { model = \"netem-state\", p13 = 60, p14 = 50 }",
            "loss = { model = \"netem-random\", p = \"x%\" }",
        ] {
            let e = loss_of(bad).unwrap_err();
            assert_eq!((e.0, e.1.as_deref()), (3, Some("network.loss")), "{bad}");
        }
    }
}
