//! `[topology]`: the star of docs/experiments.md §1.1 (the default) or a multi-hop 802.15.4 mesh
//! (netsim's [`coaplab_netsim::mesh`]): a generated shape or an explicit node list, roles, and
//! the mesh parameters in `[topology.params]` (netsim's `MESH_PARAMS`; `coaplab models mesh`),
//! and how routes form: `routing = "rpl"` (the default: RPL storing mode on the channel, with
//! `objective = "mrhof" | "of0"` and an optional fixed `warm_up_s`) or `"static"` (the
//! converged minimum-hop tree, no control traffic).

use coaplab_cc::params::Settings;
use coaplab_cc::time::Duration;
use coaplab_netsim::mesh::layout::MAX_GRID_SERVERS;
use coaplab_netsim::mesh::rpl::Objective;
use coaplab_netsim::mesh::{Layout, MeshConfig, MeshParams, Node, Role, Routing, MESH_PARAMS};
use toml_edit::{Item, TableLike, Value};

use super::config::Topology;
use super::reader::{choice, float, plain, uint, Reader};
use super::ScenarioError;

/// Keys valid in `[topology]`.
const TOPOLOGY_KEYS: &[&str] = &[
    "kind",
    "shape",
    "rows",
    "cols",
    "nodes",
    "petals",
    "petal_nodes",
    "spacing_m",
    "border_router",
    "server",
    "servers",
    "routing",
    "objective",
    "warm_up_s",
    "params",
];

/// Keys read only with `routing = "rpl"`.
const RPL_KEYS: &[&str] = &["objective", "warm_up_s"];

/// Longest fixed warm-up (s): RPL's formation limit.
const MAX_WARM_UP_S: f64 = 3600.0;

/// Keys read by some shapes only.
const SHAPE_KEYS: &[(&str, &[&str])] = &[
    ("rows", &["grid"]),
    ("cols", &["grid"]),
    ("servers", &["grid"]),
    ("nodes", &["chain", "nodes"]),
    ("petals", &["flower"]),
    ("petal_nodes", &["flower"]),
    (
        "spacing_m",
        &["grid", "chain", "flower", "dumbbell", "half-dumbbell"],
    ),
];

/// Mesh shapes.
const SHAPES: &[&str] = &[
    "grid",
    "chain",
    "flower",
    "dumbbell",
    "half-dumbbell",
    "nodes",
];

/// Keys of one explicit node.
const NODE_KEYS: &[&str] = &["x_m", "y_m", "role"];

/// Node roles.
const ROLES: &[&str] = &["border-router", "server", "client", "router"];

/// Reads `[topology]` (absent: the star).
pub(super) fn read(r: &mut Reader<'_>, doc: &toml_edit::Table) -> Result<Topology, ScenarioError> {
    let Some(item) = doc.get("topology") else {
        return Ok(Topology::Star);
    };
    let t = item
        .as_table_like()
        .ok_or_else(|| r.bad(item.span(), "topology", item.type_name(), "a table"))?;
    r.check_keys(t, "topology", TOPOLOGY_KEYS)?;
    let p = "topology";
    if let Some(Item::Value(Value::Array(list))) = t.get("kind") {
        // flows.csv and runs.csv have the mesh columns for the whole plan or not at all.
        return Err(r.bad(
            list.span(),
            "topology.kind",
            &list.to_string(),
            "one of star, mesh (not a sweep: the results' columns depend on it)",
        ));
    }
    let kind = r
        .scalar(t, p, "kind", |v| choice(v, &["star", "mesh"]))?
        .unwrap_or_else(|| "star".to_string());
    if kind == "star" {
        for key in TOPOLOGY_KEYS.iter().filter(|k| **k != "kind") {
            if let Some(span) = t.get(key).map(|i| i.span()) {
                return Err(r.bad(
                    span,
                    &format!("topology.{key}"),
                    "(set)",
                    "only with kind = \"mesh\"",
                ));
            }
        }
        return Ok(Topology::Star);
    }
    let shape = r
        .scalar(t, p, "shape", |v| choice(v, SHAPES))?
        .unwrap_or_else(|| "grid".to_string());
    // Keys that only one shape reads are refused with another, rather than silently ignored;
    // with a `shape` sweep, a key some swept shape reads is ignored by the others.
    let swept: Vec<&str> = match t.get("shape") {
        Some(Item::Value(Value::Array(list))) => list.iter().filter_map(|v| v.as_str()).collect(),
        _ => vec![shape.as_str()],
    };
    for (key, shapes) in SHAPE_KEYS {
        if !swept.iter().any(|s| shapes.contains(s)) {
            if let Some(item) = t.get(key) {
                return Err(r.bad(
                    item.span(),
                    &format!("topology.{key}"),
                    &format!("(with shape = \"{shape}\")"),
                    format!("only with shape = {}", shapes.join(" or ")),
                ));
            }
        }
    }
    let count = |v: &Value| uint(v, 1, coaplab_netsim::mesh::layout::MAX_NODES as u64);
    let spacing = r
        .scalar(t, p, "spacing_m", |v| float(v, 0.001, 1e6))?
        .unwrap_or(10.0);
    let table_span = doc.get("topology").and_then(|i| i.span());
    let layout = match shape.as_str() {
        "grid" => {
            let rows = r.scalar(t, p, "rows", count)?.unwrap_or(3) as u32;
            let cols = r.scalar(t, p, "cols", count)?.unwrap_or(3) as u32;
            let servers = |v: &Value| uint(v, 1, u64::from(MAX_GRID_SERVERS));
            let servers = r.scalar(t, p, "servers", servers)?.unwrap_or(1) as u32;
            if let (Some(a), Some(_)) = (t.get("servers"), t.get("server")) {
                return Err(r.bad(
                    a.span(),
                    "topology.servers",
                    "(with server)",
                    "either servers (how many, in the grid's corners) or server (which node)",
                ));
            }
            Layout::grid_with_servers(rows, cols, spacing, servers)
        }
        "chain" => Layout::chain(
            r.scalar(t, p, "nodes", count)?.unwrap_or(20) as u32,
            spacing,
        ),
        "flower" => {
            let petals = r.scalar(t, p, "petals", count)?.unwrap_or(5) as u32;
            let len = r.scalar(t, p, "petal_nodes", count)?.unwrap_or(7) as u32;
            Layout::flower(petals, len, spacing)
        }
        "dumbbell" => Layout::dumbbell(spacing),
        "half-dumbbell" => Layout::half_dumbbell(spacing),
        _ => explicit(r, t),
    }
    .map_err(|e| r.bad(table_span.clone(), "topology.shape", &shape, e.to_string()))?;
    let id = |v: &Value| uint(v, 0, coaplab_netsim::mesh::layout::MAX_NODES as u64 - 1);
    let br = r.scalar(t, p, "border_router", id)?;
    // A node id, or "off-mesh": the server sits behind the border router on the wired link
    // of `[network]` (no node keeps the server role).
    let server_key = |v: &Value| match v.as_str() {
        Some("off-mesh") => Ok(None),
        Some(_) => Err("a node id or \"off-mesh\"".to_string()),
        None => id(v).map(Some),
    };
    let server = r.scalar(t, p, "server", server_key)?;
    let off_mesh_server = server == Some(None);
    let servers: Option<Vec<u32>> = server.map(|s| s.map(|s| s as u32).into_iter().collect());
    let layout = layout
        .with_roles(br.map(|b| b as u32), servers.as_deref())
        .map_err(|e| {
            r.bad(
                table_span.clone(),
                "topology.border_router",
                "",
                e.to_string(),
            )
        })?;
    let mut params = params(r, t)?;
    params.routing = routing(r, t)?;
    params.off_mesh_server = off_mesh_server;
    let config = MeshConfig { layout, params };
    // Build it once (with static routes: RPL's warm-up is the run's business): a layout
    // without a route from a client to the border router fails here, with the file's line,
    // rather than when the run starts.
    let mut check = config.clone();
    check.params.routing = Routing::Static;
    coaplab_netsim::mesh::Mesh::new(&check, 0)
        .map_err(|e| r.bad(table_span, "topology", &shape, e.to_string()))?;
    Ok(Topology::Mesh(Box::new(config)))
}

/// `routing`, `objective`, `warm_up_s` (each sweepable like any scalar).
fn routing(r: &mut Reader<'_>, t: &dyn TableLike) -> Result<Routing, ScenarioError> {
    let p = "topology";
    let routing = r
        .scalar(t, p, "routing", |v| choice(v, &["rpl", "static"]))?
        .unwrap_or_else(|| "rpl".to_string());
    if routing == "static" {
        for key in RPL_KEYS {
            if let Some(item) = t.get(key) {
                return Err(r.bad(
                    item.span(),
                    &format!("topology.{key}"),
                    "(with routing = \"static\")",
                    "only with routing = \"rpl\"",
                ));
            }
        }
        return Ok(Routing::Static);
    }
    let objective = match r
        .scalar(t, p, "objective", |v| choice(v, &["mrhof", "of0"]))?
        .as_deref()
    {
        Some("of0") => Objective::Of0,
        _ => Objective::Mrhof,
    };
    let warmup = r
        .scalar(t, p, "warm_up_s", |v| float(v, 0.0, MAX_WARM_UP_S))?
        .map(Duration::from_secs_f64_round_us);
    Ok(Routing::Rpl { objective, warmup })
}

/// `[topology.params]`: each key one of `MESH_PARAMS`, sweepable like any scalar.
fn params(r: &mut Reader<'_>, t: &dyn TableLike) -> Result<MeshParams, ScenarioError> {
    let Some(item) = t.get("params") else {
        return Ok(MeshParams::default());
    };
    let pt = item
        .as_table_like()
        .ok_or_else(|| r.bad(item.span(), "topology.params", item.type_name(), "a table"))?;
    let keys: Vec<&str> = MESH_PARAMS.iter().map(|s| s.key).collect();
    r.check_keys(pt, "topology.params", &keys)?;
    let mut settings = Settings::new();
    for key in keys {
        let one = |v: &Value| {
            let mut s = Settings::new();
            s.set(key, plain(v));
            MeshParams::resolve(&s)
                .map(|_| plain(v))
                .map_err(|e| e.to_string())
        };
        if let Some(v) = r.scalar(pt, "topology.params", key, one)? {
            settings.set(key, v);
        }
    }
    MeshParams::resolve(&settings)
        .map_err(|e| r.bad(item.span(), "topology.params", "", e.to_string()))
}

/// `nodes = [{ x_m = 0, y_m = 0, role = "border-router" }, ...]` or `[[topology.nodes]]`.
fn explicit(
    r: &mut Reader<'_>,
    t: &dyn TableLike,
) -> Result<Layout, coaplab_netsim::mesh::LayoutError> {
    let mut nodes = Vec::new();
    let tables: Vec<&dyn TableLike> = match t.get("nodes") {
        Some(Item::ArrayOfTables(a)) => a.iter().map(|x| x as &dyn TableLike).collect(),
        Some(Item::Value(Value::Array(a))) => a
            .iter()
            .filter_map(|v| v.as_inline_table().map(|x| x as &dyn TableLike))
            .collect(),
        _ => Vec::new(),
    };
    for (i, n) in tables.into_iter().enumerate() {
        let fail = |what: String| {
            coaplab_netsim::mesh::LayoutError::BadShape(format!("topology.nodes[{i}]: {what}"))
        };
        if let Some((key, _)) = n.iter().find(|(k, _)| !NODE_KEYS.contains(k)) {
            return Err(fail(format!(
                "unknown key '{key}' (allowed: {})",
                NODE_KEYS.join(", ")
            )));
        }
        let coord = |key: &str| {
            n.get(key)
                .and_then(Item::as_value)
                .ok_or_else(|| fail(format!("{key} missing")))
                .and_then(|v| float(v, -1e6, 1e6).map_err(&fail))
        };
        let role = n
            .get("role")
            .and_then(Item::as_value)
            .map(|v| choice(v, ROLES))
            .unwrap_or_else(|| Ok("client".to_string()))
            .map_err(&fail)?;
        nodes.push(Node {
            x_m: coord("x_m")?,
            y_m: coord("y_m")?,
            role: Role::from_name(&role).unwrap_or(Role::Client),
        });
    }
    let _ = r;
    Layout::explicit(nodes)
}
