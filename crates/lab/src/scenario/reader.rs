//! Reading TOML values with their lines; lists at scalar positions become sweep axes.
//!
//! The same reader runs once to discover and check the axes (`choice` empty: every list
//! element is checked, the first one is used) and once per combination (`choice[k]` picks the
//! element of the k-th axis met). Both passes read keys in the same order, so the k-th list
//! met is always the same axis.

use std::ops::Range;

use coaplab_cc::time::Duration;
use coaplab_endpoint::ServerDuplicates;
use toml_edit::{Item, TableLike, Value};

use super::config::{ProtocolConfig, RunConfig};
use super::{line_of, Axis, ScenarioError};

/// Keys valid at the top level.
const TOP_KEYS: &[&str] = &[
    "name",
    "description",
    "seed",
    "replications",
    "max_sim_time_s",
    "max_retransmit",
    "nstart",
    "network",
    "topology",
    "mobility",
    "protocol",
    "flows",
    "vars",
    "output",
];

/// Keys valid in `[protocol]` (and, for convenience, at the top level or in `[network]`).
pub(super) const PROTOCOL_KEYS: &[&str] =
    &["max_retransmit", "nstart", "cc_preset", "server_duplicates"];

/// The top-level values of a scenario.
pub(super) struct Top {
    pub(super) name: String,
    pub(super) seed: u64,
    pub(super) replications: u32,
    pub(super) config: RunConfig,
}

/// Reads one pass over a scenario document.
pub(super) struct Reader<'s> {
    source: &'s str,
    file: &'s str,
    choice: &'s [usize],
    axes: Vec<Axis>,
    /// `[vars]`: name → the value chosen for this pass.
    vars: Vec<(String, Value)>,
}

impl<'s> Reader<'s> {
    /// A reader taking element `choice[k]` of the k-th list met (0 when `choice` is short).
    pub(super) fn new(source: &'s str, file: &'s str, choice: &'s [usize]) -> Self {
        Reader {
            source,
            file,
            choice,
            axes: Vec::new(),
            vars: Vec::new(),
        }
    }

    /// The file name used in messages.
    pub(super) fn file(&self) -> &str {
        self.file
    }

    /// The axes met so far.
    pub(super) fn into_axes(self) -> Vec<Axis> {
        self.axes
    }

    /// The line of a span (1 without one).
    pub(super) fn line(&self, span: Option<Range<usize>>) -> usize {
        span.map(|s| line_of(self.source, s.start)).unwrap_or(1)
    }

    /// A bad-value error at `span`.
    pub(super) fn bad(
        &self,
        span: Option<Range<usize>>,
        key: &str,
        value: &str,
        expected: impl Into<String>,
    ) -> ScenarioError {
        ScenarioError::BadValue {
            file: self.file.to_string(),
            line: self.line(span),
            key: key.to_string(),
            value: value.to_string(),
            expected: expected.into(),
        }
    }

    /// Fails on the first key of `table` not in `allowed`.
    pub(super) fn check_keys(
        &self,
        table: &dyn TableLike,
        path: &str,
        allowed: &[&str],
    ) -> Result<(), ScenarioError> {
        for (key, _) in table.iter() {
            if !allowed.contains(&key) {
                let span = table.key(key).and_then(|k| k.span());
                return Err(ScenarioError::UnknownKey {
                    file: self.file.to_string(),
                    line: self.line(span),
                    key: join(path, key),
                    allowed: allowed.iter().map(|s| s.to_string()).collect(),
                });
            }
        }
        Ok(())
    }

    /// Reads optional scalar `key` of `table` through `conv`. A list is a sweep axis: every
    /// element is checked, and the element chosen for this pass is returned.
    pub(super) fn scalar<T>(
        &mut self,
        table: &dyn TableLike,
        path: &str,
        key: &str,
        conv: impl Fn(&Value) -> Result<T, String>,
    ) -> Result<Option<T>, ScenarioError> {
        let full = join(path, key);
        let Some(item) = table.get(key) else {
            return Ok(None);
        };
        let value = match item {
            Item::Value(v) => v,
            other => {
                return Err(self.bad(other.span(), &full, other.type_name(), "a value"));
            }
        };
        let Value::Array(list) = value else {
            if let Some(name) = value.as_str().and_then(|s| s.strip_prefix('$')) {
                return self.variable(value, &full, name, conv).map(Some);
            }
            return conv(value)
                .map(Some)
                .map_err(|expected| self.bad(value.span(), &full, &shown(value), expected));
        };
        if list.is_empty() {
            return Err(self.bad(
                value.span(),
                &full,
                "[]",
                "a value or a non-empty list of values to sweep",
            ));
        }
        let mut chosen = None;
        let index = self.choice.get(self.axes.len()).copied().unwrap_or(0);
        if let Some(element) = list.get(index).filter(|_| !self.choice.is_empty()) {
            // A combination pass: the first pass checked every element and recorded the axis,
            // so only the chosen element is read (a million combinations stay cheap).
            let v = conv(element)
                .map_err(|expected| self.bad(element.span(), &full, &shown(element), expected))?;
            self.axes.push(Axis {
                key: full,
                line: 0,
                values: Vec::new(),
                column: String::new(),
            });
            return Ok(Some(v));
        }
        let mut values = Vec::with_capacity(list.len());
        for (i, element) in list.iter().enumerate() {
            if matches!(element, Value::Array(_)) {
                return Err(self.bad(
                    element.span(),
                    &full,
                    &shown(element),
                    "a single value (lists do not nest)",
                ));
            }
            let v = conv(element)
                .map_err(|expected| self.bad(element.span(), &full, &shown(element), expected))?;
            if i == index {
                chosen = Some(v);
            }
            values.push(plain(element));
        }
        self.axes.push(Axis {
            key: full,
            line: self.line(value.span()),
            values,
            column: String::new(),
        });
        Ok(chosen)
    }

    /// The value of `$name` (from `[vars]`) through `conv`.
    fn variable<T>(
        &self,
        reference: &Value,
        full: &str,
        name: &str,
        conv: impl Fn(&Value) -> Result<T, String>,
    ) -> Result<T, ScenarioError> {
        let Some((_, var)) = self.vars.iter().find(|(n, _)| n == name) else {
            let defined: Vec<&str> = self.vars.iter().map(|(n, _)| n.as_str()).collect();
            return Err(self.bad(
                reference.span(),
                full,
                &shown(reference),
                format!("a variable defined in [vars] ({})", defined.join(", ")),
            ));
        };
        conv(var).map_err(|expected| {
            let given = format!("{} (= {})", shown(reference), shown(var));
            self.bad(reference.span(), full, &given, expected)
        })
    }

    /// Reads `[vars]`: named values (lists are sweep axes) that other keys use as `"$name"`,
    /// so several keys can follow one axis together.
    fn vars(&mut self, doc: &toml_edit::Table) -> Result<(), ScenarioError> {
        let Some(item) = doc.get("vars") else {
            return Ok(());
        };
        let t = item
            .as_table_like()
            .ok_or_else(|| self.bad(item.span(), "vars", item.type_name(), "a table"))?;
        let names: Vec<String> = t.iter().map(|(k, _)| k.to_string()).collect();
        for name in names {
            let value = self.scalar(t, "vars", &name, |v| match v {
                Value::InlineTable(_) | Value::String(_) | Value::Integer(_) => Ok(v.clone()),
                Value::Float(_) | Value::Boolean(_) => Ok(v.clone()),
                _ => Err("a string, number, boolean or inline table".to_string()),
            })?;
            if let Some(v) = value {
                self.vars.push((name, v));
            }
        }
        Ok(())
    }

    /// Like [`Reader::scalar`], but the key must be present.
    pub(super) fn required<T>(
        &mut self,
        table: &dyn TableLike,
        table_span: Option<Range<usize>>,
        path: &str,
        key: &str,
        conv: impl Fn(&Value) -> Result<T, String>,
    ) -> Result<T, ScenarioError> {
        self.scalar(table, path, key, conv)?
            .ok_or_else(|| ScenarioError::Missing {
                file: self.file.to_string(),
                line: self.line(table_span),
                key: join(path, key),
            })
    }

    /// Reads the whole document.
    pub(super) fn top(&mut self, doc: &toml_edit::Table) -> Result<Top, ScenarioError> {
        self.check_keys(doc, "", TOP_KEYS)?;
        let name = self.required(doc, Some(0..0), "", "name", string)?;
        if name.is_empty() || name.contains(['/', '\\']) {
            let span = doc.get("name").and_then(|i| i.span());
            return Err(self.bad(
                span,
                "name",
                &format!("\"{name}\""),
                "a non-empty name without '/' (it names the results directory)",
            ));
        }
        self.vars(doc)?;
        let seed = self.scalar(doc, "", "seed", |v| uint(v, 0, super::MAX_SEED))?;
        let replications = self.scalar(doc, "", "replications", |v| {
            uint(v, 1, u64::from(super::MAX_REPLICATIONS))
        })?;
        let max_sim_time_s = self.scalar(doc, "", "max_sim_time_s", |v| float(v, 0.001, 1e7))?;
        let network = super::network::read(self, doc)?;
        let topology = super::topology::read(self, doc)?;
        let mobility = super::mobility::read(self, doc, &topology)?;
        let protocol = self.protocol(doc)?;
        let mtu = network.config.mtu_bytes;
        let max_mss = topology.max_tcp_mss_bytes(mtu);
        let mut flows = super::flows::read(self, doc, &protocol, mtu, max_mss)?;
        let (mut timers, mut intervals, mut exchanges) = (None, None, None);
        if let Some(item) = doc.get("output") {
            let t = item
                .as_table_like()
                .ok_or_else(|| self.bad(item.span(), "output", item.type_name(), "a table"))?;
            self.check_keys(t, "output", super::output::OUTPUT_KEYS)?;
            let flag = |v: &Value| v.as_bool().ok_or_else(|| "true or false".to_string());
            timers = self.scalar(t, "output", "timers", flag)?;
            intervals = self.scalar(t, "output", "intervals", flag)?;
            exchanges = self.scalar(t, "output", "exchanges", flag)?;
        }
        let mesh = matches!(topology, super::config::Topology::Mesh(_));
        self.resolve_count_all(doc, &topology, &mut flows)?;
        if let super::config::Topology::Mesh(mesh) = &topology {
            let clients = mesh
                .layout
                .with_role(coaplab_netsim::mesh::Role::Client)
                .count() as u32;
            let total: u32 = flows.iter().map(|f| f.count).sum();
            if total > clients {
                let span = doc.get("topology").and_then(|i| i.span());
                return Err(self.bad(
                    span,
                    "flows.count",
                    &total.to_string(),
                    format!("at most the mesh's {clients} client nodes (flow k runs on the k-th client)"),
                ));
            }
        }
        Ok(Top {
            name,
            seed: seed.unwrap_or(1),
            replications: replications.unwrap_or(1) as u32,
            config: RunConfig {
                network: network.config,
                preset: network.preset,
                loss_label: network.loss_label,
                protocol,
                flows,
                timers: timers.unwrap_or(false),
                intervals: intervals.unwrap_or(mesh),
                exchanges: exchanges.unwrap_or(false),
                max_sim_time: Duration::from_secs_f64_round_us(
                    max_sim_time_s.unwrap_or(6.0 * 3600.0),
                ),
                topology,
                mobility,
            },
        })
    }

    /// Replaces `count = "all"` ([`super::flows::COUNT_ALL`]) of one `[[flows]]` table by the
    /// mesh's client nodes the other tables leave: one flow per client node, whatever the
    /// shape (a `shape` sweep then needs no per-shape count).
    fn resolve_count_all(
        &self,
        doc: &toml_edit::Table,
        topology: &super::config::Topology,
        flows: &mut [super::config::FlowConfig],
    ) -> Result<(), ScenarioError> {
        use super::flows::COUNT_ALL;
        let all: Vec<usize> = (0..flows.len())
            .filter(|&i| flows[i].count == COUNT_ALL)
            .collect();
        let Some(&first) = all.first() else {
            return Ok(());
        };
        let span = doc
            .get("flows")
            .and_then(|f| f.as_array_of_tables())
            .and_then(|a| a.get(first))
            .and_then(|t| t.get("count"))
            .and_then(Item::span);
        let key = format!("flows[{first}].count");
        let super::config::Topology::Mesh(mesh) = topology else {
            return Err(self.bad(
                span,
                &key,
                "\"all\"",
                "a number (\"all\" needs [topology] kind = \"mesh\")",
            ));
        };
        if all.len() > 1 {
            return Err(self.bad(
                span,
                &key,
                "\"all\"",
                "a number (only one [[flows]] table may say \"all\")",
            ));
        }
        let clients = mesh
            .layout
            .with_role(coaplab_netsim::mesh::Role::Client)
            .count() as u32;
        let others: u32 = flows.iter().map(|f| f.count).sum();
        if others >= clients {
            return Err(self.bad(
                span,
                &key,
                "\"all\"",
                format!("a number: the other tables take all {clients} client nodes"),
            ));
        }
        flows[first].count = clients - others;
        Ok(())
    }

    /// Protocol keys: from `[protocol]`, the top level or `[network]` (the example
    /// writes them after `[network]`); giving one key in two places is an error.
    fn protocol(&mut self, doc: &toml_edit::Table) -> Result<ProtocolConfig, ScenarioError> {
        let mut tables: Vec<(&dyn TableLike, &str)> = vec![(doc, "")];
        if let Some(t) = doc.get("network").and_then(Item::as_table_like) {
            tables.push((t, "network"));
        }
        if let Some(item) = doc.get("protocol") {
            let t = item
                .as_table_like()
                .ok_or_else(|| self.bad(item.span(), "protocol", item.type_name(), "a table"))?;
            self.check_keys(t, "protocol", PROTOCOL_KEYS)?;
            tables.push((t, "protocol"));
        }
        let mut max_retransmit = None;
        let mut nstart = None;
        let mut cc_preset = None;
        let mut server_duplicates = None;
        for (table, path) in tables {
            for key in PROTOCOL_KEYS {
                if table.get(key).is_none() {
                    continue;
                }
                let already = match *key {
                    "max_retransmit" => max_retransmit.is_some(),
                    "nstart" => nstart.is_some(),
                    "server_duplicates" => server_duplicates.is_some(),
                    _ => cc_preset.is_some(),
                };
                if already {
                    let span = table.get(key).and_then(|i| i.span());
                    return Err(self.bad(
                        span,
                        &join(path, key),
                        "(a second setting)",
                        format!("'{key}' set once, in [protocol]"),
                    ));
                }
                match *key {
                    "max_retransmit" => {
                        max_retransmit = self.scalar(table, path, key, |v| uint(v, 0, 100))?
                    }
                    "nstart" => nstart = self.scalar(table, path, key, |v| uint(v, 1, 1000))?,
                    "server_duplicates" => {
                        server_duplicates = self.scalar(table, path, key, |v| {
                            let name = choice(v, &ServerDuplicates::NAMES)?;
                            Ok(ServerDuplicates::from_name(&name).unwrap_or_default())
                        })?
                    }
                    _ => {
                        cc_preset = self.scalar(table, path, key, |v| choice(v, preset_names()))?
                    }
                }
            }
        }
        Ok(ProtocolConfig {
            max_retransmit: max_retransmit.map(|n| n as u32),
            nstart: nstart.unwrap_or(1) as u32,
            cc_preset,
            server_duplicates: server_duplicates.unwrap_or_default(),
        })
    }
}

/// The algorithm presets of `coaplab_cc::presets`.
fn preset_names() -> &'static [&'static str] {
    match coaplab_cc::presets::PRESET_PARAM.kind {
        coaplab_cc::params::Kind::Choice(names) => names,
        _ => &[],
    }
}

/// `path.key`, or `key` at the top level.
pub(super) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// A value as written (trimmed of decoration), for error messages.
pub(super) fn shown(v: &Value) -> String {
    v.to_string().trim().to_string()
}

/// A value for results files: strings without quotes, everything else as written.
pub(super) fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.value().clone(),
        other => shown(other),
    }
}

/// An integer in `[min, max]`.
pub(super) fn uint(v: &Value, min: u64, max: u64) -> Result<u64, String> {
    super::in_range(v.as_integer().and_then(|n| u64::try_from(n).ok()), min, max)
}

/// A number (integer or float) in `[min, max]`.
pub(super) fn float(v: &Value, min: f64, max: f64) -> Result<f64, String> {
    let expected = || format!("a number in [{min}, {max}]");
    let x = match v {
        Value::Integer(i) => *i.value() as f64,
        Value::Float(f) => *f.value(),
        _ => return Err(expected()),
    };
    if x.is_nan() || x < min || x > max {
        return Err(expected());
    }
    Ok(x)
}

/// A string.
pub(super) fn string(v: &Value) -> Result<String, String> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| "a string".to_string())
}

/// One of `names`.
pub(super) fn choice(v: &Value, names: &[&str]) -> Result<String, String> {
    let expected = || format!("one of {}", names.join(", "));
    let s = v.as_str().ok_or_else(expected)?;
    if names.contains(&s) {
        Ok(s.to_string())
    } else {
        Err(expected())
    }
}

/// Milliseconds to a [`Duration`], exact to the nanosecond for up to 6 decimals.
pub(super) fn millis(ms: f64) -> Duration {
    Duration::from_nanos((ms * 1e6).round() as i64)
}
