//! Reading a whole scenario document: the top-level keys, then each table through its own
//! module ([`super::network`], [`super::topology`], [`super::mobility`], [`super::flows`],
//! `[output]`), with the checks that span tables. The modules it calls share only the key
//! reader ([`super::reader`]), so none of them imports another.

use coaplab_cc::time::Duration;
use coaplab_endpoint::ServerDuplicates;
use toml_edit::{Item, TableLike, Value};

use super::config::{self, ProtocolConfig, RunConfig};
use super::reader::{choice, float, join, string, uint, Reader, PROTOCOL_KEYS};
use super::{flows, mobility, network, output, topology, ScenarioError};

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

/// The top-level values of a scenario.
pub(super) struct Top {
    pub(super) name: String,
    pub(super) seed: u64,
    pub(super) replications: u32,
    pub(super) config: RunConfig,
}

/// Reads the whole document.
pub(super) fn top(r: &mut Reader<'_>, doc: &toml_edit::Table) -> Result<Top, ScenarioError> {
    r.check_keys(doc, "", TOP_KEYS)?;
    let name = r.required(doc, Some(0..0), "", "name", string)?;
    if name.is_empty() || name.contains(['/', '\\']) {
        let span = doc.get("name").and_then(|i| i.span());
        return Err(r.bad(
            span,
            "name",
            &format!("\"{name}\""),
            "a non-empty name without '/' (it names the results directory)",
        ));
    }
    r.vars(doc)?;
    let seed = r.scalar(doc, "", "seed", |v| uint(v, 0, super::MAX_SEED))?;
    let replications = r.scalar(doc, "", "replications", |v| {
        uint(v, 1, u64::from(super::MAX_REPLICATIONS))
    })?;
    let max_sim_time_s = r.scalar(doc, "", "max_sim_time_s", |v| float(v, 0.001, 1e7))?;
    let network = network::read(r, doc)?;
    let topology = topology::read(r, doc)?;
    let mobility = mobility::read(r, doc, &topology)?;
    let protocol = protocol(r, doc)?;
    let mtu = network.config.mtu_bytes;
    let max_mss = topology.max_tcp_mss_bytes(mtu);
    let mut flows = flows::read(r, doc, &protocol, mtu, max_mss)?;
    let (mut timers, mut intervals, mut exchanges) = (None, None, None);
    if let Some(item) = doc.get("output") {
        let t = item
            .as_table_like()
            .ok_or_else(|| r.bad(item.span(), "output", item.type_name(), "a table"))?;
        r.check_keys(t, "output", output::OUTPUT_KEYS)?;
        let flag = |v: &Value| v.as_bool().ok_or_else(|| "true or false".to_string());
        timers = r.scalar(t, "output", "timers", flag)?;
        intervals = r.scalar(t, "output", "intervals", flag)?;
        exchanges = r.scalar(t, "output", "exchanges", flag)?;
    }
    let mesh = matches!(topology, config::Topology::Mesh(_));
    resolve_count_all(r, doc, &topology, &mut flows)?;
    if let config::Topology::Mesh(mesh) = &topology {
        let clients = mesh
            .layout
            .with_role(coaplab_netsim::mesh::Role::Client)
            .count() as u32;
        let total: u32 = flows.iter().map(|f| f.count).sum();
        if total > clients {
            let span = doc.get("topology").and_then(|i| i.span());
            return Err(r.bad(
                span,
                "flows.count",
                &total.to_string(),
                format!(
                    "at most the mesh's {clients} client nodes (flow k runs on the k-th client)"
                ),
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
            max_sim_time: Duration::from_secs_f64_round_us(max_sim_time_s.unwrap_or(6.0 * 3600.0)),
            topology,
            mobility,
        },
    })
}

/// Replaces `count = "all"` ([`flows::COUNT_ALL`]) of one `[[flows]]` table by the
/// mesh's client nodes the other tables leave: one flow per client node, whatever the
/// shape (a `shape` sweep then needs no per-shape count).
fn resolve_count_all(
    r: &Reader<'_>,
    doc: &toml_edit::Table,
    topology: &config::Topology,
    flows: &mut [config::FlowConfig],
) -> Result<(), ScenarioError> {
    use flows::COUNT_ALL;
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
    let config::Topology::Mesh(mesh) = topology else {
        return Err(r.bad(
            span,
            &key,
            "\"all\"",
            "a number (\"all\" needs [topology] kind = \"mesh\")",
        ));
    };
    if all.len() > 1 {
        return Err(r.bad(
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
        return Err(r.bad(
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
fn protocol(r: &mut Reader<'_>, doc: &toml_edit::Table) -> Result<ProtocolConfig, ScenarioError> {
    let mut tables: Vec<(&dyn TableLike, &str)> = vec![(doc, "")];
    if let Some(t) = doc.get("network").and_then(Item::as_table_like) {
        tables.push((t, "network"));
    }
    if let Some(item) = doc.get("protocol") {
        let t = item
            .as_table_like()
            .ok_or_else(|| r.bad(item.span(), "protocol", item.type_name(), "a table"))?;
        r.check_keys(t, "protocol", PROTOCOL_KEYS)?;
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
                return Err(r.bad(
                    span,
                    &join(path, key),
                    "(a second setting)",
                    format!("'{key}' set once, in [protocol]"),
                ));
            }
            match *key {
                "max_retransmit" => {
                    max_retransmit = r.scalar(table, path, key, |v| uint(v, 0, 100))?
                }
                "nstart" => nstart = r.scalar(table, path, key, |v| uint(v, 1, 1000))?,
                "server_duplicates" => {
                    server_duplicates = r.scalar(table, path, key, |v| {
                        let name = choice(v, &ServerDuplicates::NAMES)?;
                        Ok(ServerDuplicates::from_name(&name).unwrap_or_default())
                    })?
                }
                _ => cc_preset = r.scalar(table, path, key, |v| choice(v, preset_names()))?,
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

/// The algorithm presets of `coaplab_cc::presets`.
fn preset_names() -> &'static [&'static str] {
    match coaplab_cc::presets::PRESET_PARAM.kind {
        coaplab_cc::params::Kind::Choice(names) => names,
        _ => &[],
    }
}
