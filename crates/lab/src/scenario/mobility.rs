//! `[mobility]`: moving mesh nodes (netsim's [`coaplab_netsim::mesh::mobility`]). `model` is
//! `none` (the default), one of BonnMotion's generated models (`random-waypoint`,
//! `gauss-markov`, `manhattan-grid`, `pursue`) with its parameters under BonnMotion's names in
//! snake_case (`coaplab models mobility`), or `file` with `file = "PATH"` (relative to the
//! scenario's directory) and `format = "bonnmotion" | "cooja"`. `roles` (default
//! `["client"]`) says which nodes move; the border router never does.
//!
//! `model` may be a list (a sweep axis); keys of any listed model are accepted and each run
//! reads its own model's keys. Every key is read in file order in every pass, so parameter
//! lists stay aligned with their axes.

use std::path::Path;

use coaplab_cc::params::{ParamError, Settings};
use coaplab_cc::time::Duration;
use coaplab_netsim::mesh::mobility::file::{self, Format};
use coaplab_netsim::mesh::mobility::{
    mobility_params, MobilityConfig, Motion, MOBILITY_COMMON_PARAMS,
};
use coaplab_netsim::mesh::Role;
use toml_edit::{Item, Value};

use super::config::Topology;
use super::reader::{choice, plain, Reader};
use super::ScenarioError;

/// `model` values.
const MODEL_NAMES: &[&str] = &[
    "none",
    "random-waypoint",
    "gauss-markov",
    "manhattan-grid",
    "pursue",
    "file",
];

/// Keys besides the models' parameters.
const OWN_KEYS: &[&str] = &["model", "roles", "file", "format"];

/// Roles that may move.
const MOVING_ROLES: &[&str] = &["client", "server", "router"];

/// Reads `[mobility]` (absent: nothing moves).
pub(super) fn read(
    r: &mut Reader<'_>,
    doc: &toml_edit::Table,
    topology: &Topology,
) -> Result<Option<MobilityConfig>, ScenarioError> {
    let Some(item) = doc.get("mobility") else {
        return Ok(None);
    };
    let span = item.span();
    let t = item
        .as_table_like()
        .ok_or_else(|| r.bad(span.clone(), "mobility", item.type_name(), "a table"))?;
    let Topology::Mesh(mesh) = topology else {
        return Err(r.bad(
            span,
            "mobility",
            "(set)",
            "only with [topology] kind = \"mesh\"",
        ));
    };
    // The models this file names (`none` when `model` is absent; all of them when it is
    // malformed, which `model`'s own check then reports).
    let listed: Vec<String> = match t.get("model").map(Item::as_value) {
        None => vec!["none".to_string()],
        Some(Some(Value::String(s))) => vec![s.value().clone()],
        Some(Some(Value::Array(a))) => a
            .iter()
            .filter_map(|v| v.as_str().map(String::from))
            .collect(),
        Some(_) => MODEL_NAMES.iter().map(|s| s.to_string()).collect(),
    };
    let keys_of = |model: &str| -> Vec<&'static str> {
        let mut keys: Vec<&str> = match model {
            "file" => vec!["route_check_interval_s"],
            m => mobility_params(m)
                .into_iter()
                .flatten()
                .chain(MOBILITY_COMMON_PARAMS)
                .map(|s| s.key)
                .collect(),
        };
        keys.sort_unstable();
        keys.dedup();
        keys
    };
    let mut allowed: Vec<&str> = OWN_KEYS.to_vec();
    for m in &listed {
        allowed.extend(keys_of(m));
    }
    allowed.sort_unstable();
    allowed.dedup();
    r.check_keys(t, "mobility", &allowed)?;
    let p = "mobility";
    let model = r
        .scalar(t, p, "model", |v| choice(v, MODEL_NAMES))?
        .unwrap_or_else(|| "none".to_string());
    let path = r.scalar(t, p, "file", |v| {
        v.as_str()
            .map(String::from)
            .ok_or_else(|| "a file path".to_string())
    })?;
    let format = r.scalar(t, p, "format", |v| choice(v, &["bonnmotion", "cooja"]))?;
    if !listed.iter().any(|m| m == "file") {
        for key in ["file", "format"] {
            if let Some(item) = t.get(key) {
                return Err(r.bad(
                    item.span(),
                    &format!("mobility.{key}"),
                    &plain(item.as_value().unwrap_or(&Value::from(""))),
                    "only with model = \"file\"",
                ));
            }
        }
    }
    let moving = roles(r, t)?;
    let mine = keys_of(&model);
    let mut settings = Settings::new();
    let mut spans = Vec::new();
    for (key, item) in t.iter() {
        if OWN_KEYS.contains(&key) {
            continue;
        }
        let key = key.to_string();
        let value = r.scalar(t, p, &key, |v| Ok(plain(v)))?;
        if let Some(v) = value.filter(|_| mine.contains(&key.as_str())) {
            spans.push((key.clone(), item.span()));
            settings.set(key, v);
        }
    }
    let bad_param = |r: &Reader<'_>, e: ParamError| {
        let (key, expected) = match &e {
            ParamError::BadValue { key, expected, .. } => (key.clone(), expected.clone()),
            ParamError::UnknownKey { key, .. } => (key.clone(), e.to_string()),
            _ => (String::new(), e.to_string()),
        };
        let at = spans
            .iter()
            .find(|(k, _)| *k == key)
            .and_then(|(_, s)| s.clone())
            .or(span.clone());
        let value = settings.get(&key).unwrap_or("(not set)").to_string();
        r.bad(at, &format!("mobility.{key}"), &value, expected)
    };
    let config = match model.as_str() {
        "none" => return Ok(None),
        "file" => {
            let Some(path) = path else {
                return Err(r.bad(span, "mobility.file", "(missing)", "a position file path"));
            };
            let format = match format.as_deref() {
                Some("cooja") => Format::Cooja,
                _ => Format::BonnMotion,
            };
            let paths = read_positions(r, &path, format).map_err(|e| {
                r.bad(
                    t.get("file").and_then(|i| i.span()),
                    "mobility.file",
                    &path,
                    e,
                )
            })?;
            MobilityConfig::from_file(paths, &settings, moving).map_err(|e| bad_param(r, e))?
        }
        m => MobilityConfig::resolve(m, &settings, moving).map_err(|e| bad_param(r, e))?,
    };
    // Generate once over one second: a node off every street or outside the area fails here,
    // with the file's line, rather than when the run starts.
    Motion::build(&config, &mesh.layout, 0, Duration::from_secs(1))
        .map_err(|e| r.bad(span, "mobility", &model, e.to_string()))?;
    Ok(Some(config))
}

/// `roles = ["client", ...]` (a list, not a sweep axis) or one role as a string.
fn roles(r: &Reader<'_>, t: &dyn toml_edit::TableLike) -> Result<Vec<Role>, ScenarioError> {
    let Some(item) = t.get("roles") else {
        return Ok(vec![Role::Client]);
    };
    let fail = |shown: &str| {
        r.bad(
            item.span(),
            "mobility.roles",
            shown,
            format!(
                "a list of {} (the border router stays fixed)",
                MOVING_ROLES.join(", ")
            ),
        )
    };
    let values: Vec<&Value> = match item.as_value() {
        Some(Value::Array(a)) => a.iter().collect(),
        Some(v) => vec![v],
        None => return Err(fail(item.type_name())),
    };
    values
        .into_iter()
        .map(|v| {
            let name = v.as_str().ok_or_else(|| fail(&plain(v)))?;
            if !MOVING_ROLES.contains(&name) {
                return Err(fail(name));
            }
            Ok(Role::from_name(name).unwrap_or(Role::Client))
        })
        .collect()
}

/// Reads and parses a position file, relative to the scenario's directory.
fn read_positions(
    r: &Reader<'_>,
    path: &str,
    format: Format,
) -> Result<Vec<Option<coaplab_netsim::mesh::mobility::Trajectory>>, String> {
    let base = Path::new(r.file()).parent().unwrap_or(Path::new(""));
    let full = base.join(path);
    let text = crate::files::read_text(&full, crate::files::Input::Positions)
        .map_err(|e| e.to_string())?;
    file::parse(&text, format).map_err(|e| format!("{}: {e}", full.display()))
}
