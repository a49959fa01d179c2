//! `[[flows]]`: groups of identical flows, their algorithm and workload (docs/experiments.md §6).

use coaplab_cc::params::{ParamError, Settings};
use coaplab_cc::registry;
use coaplab_cc::time::Duration;
use coaplab_endpoint::tcp::SessionConfig;
use coaplab_netsim::tcp::{BbrConfig, TcpConfig, BBR_PARAMS, TCP_PARAMS};
use toml_edit::{Item, Value};

use super::config::{FlowConfig, ProtocolConfig, SourcePort, Workload, LONG_TRANSFER_TOKEN_BYTES};
use super::reader::{choice, float, shown, uint, Reader};
use super::ScenarioError;
use super::Transport;

/// Keys valid in a `[[flows]]` table.
const FLOW_KEYS: &[&str] = &[
    "count",
    "cc",
    "params",
    "workload",
    "exchanges",
    "batch_min",
    "batch_max",
    "object_bytes",
    "block_bytes",
    "early_block2",
    "mss_bytes",
    "payload_bytes",
    "response_payload_bytes",
    "start_jitter_s",
    "random_source_port",
    "interval_s",
    "period_s",
    "duration_s",
    "con_every",
];

/// The keys of `workload = "observe"` only.
const OBSERVE_KEYS: &[&str] = &["period_s", "duration_s", "con_every"];

/// The workloads.
const WORKLOADS: &[&str] = &["continuous", "random", "long-transfer", "observe"];

/// `count = "all"` as read, before [`super::reader`] resolves it on a mesh to the client nodes
/// the other `[[flows]]` tables leave (no flow has 0 clients otherwise).
pub(super) const COUNT_ALL: u32 = 0;

/// Reads every `[[flows]]` table.
pub(super) fn read(
    r: &mut Reader<'_>,
    doc: &toml_edit::Table,
    protocol: &ProtocolConfig,
    mtu_bytes: u32,
    max_mss_bytes: u32,
) -> Result<Vec<FlowConfig>, ScenarioError> {
    let Some(item) = doc.get("flows") else {
        return Err(ScenarioError::Missing {
            file: r.file().to_string(),
            line: 1,
            key: "flows".to_string(),
        });
    };
    let Item::ArrayOfTables(tables) = item else {
        return Err(r.bad(
            item.span(),
            "flows",
            item.type_name(),
            "one or more [[flows]] tables",
        ));
    };
    let mut flows = Vec::with_capacity(tables.len());
    for (i, table) in tables.iter().enumerate() {
        let path = format!("flows[{i}]");
        let flow = read_one(r, table, &path, protocol, max_mss_bytes)?;
        check_mtu(r, table, &path, &flow, mtu_bytes)?;
        check_object(r, table, &path, &flow)?;
        check_one_resource(r, table, &path, &flow, &flows)?;
        flows.push(flow);
    }
    Ok(flows)
}

/// Every observer observes the server's one resource: its period and CON rule are the same in
/// every `workload = "observe"` group.
fn check_one_resource(
    r: &Reader<'_>,
    t: &toml_edit::Table,
    p: &str,
    flow: &FlowConfig,
    before: &[FlowConfig],
) -> Result<(), ScenarioError> {
    let Workload::Observe {
        period, con_every, ..
    } = flow.workload
    else {
        return Ok(());
    };
    let first = before
        .iter()
        .enumerate()
        .find_map(|(i, f)| match f.workload {
            Workload::Observe {
                period, con_every, ..
            } => Some((i, period, con_every)),
            _ => None,
        });
    let Some((i, p0, k0)) = first else {
        return Ok(());
    };
    let (key, value, want) = if period != p0 {
        (
            "period_s",
            period.as_secs_f64().to_string(),
            p0.as_secs_f64().to_string(),
        )
    } else if con_every != k0 {
        ("con_every", con_every.to_string(), k0.to_string())
    } else {
        return Ok(());
    };
    let span = t.get(key).and_then(Item::span).or_else(|| t.span());
    Err(r.bad(
        span,
        &format!("{p}.{key}"),
        &value,
        format!("{want}, as in flows[{i}]: every observer observes the server's one resource"),
    ))
}

fn read_one(
    r: &mut Reader<'_>,
    t: &toml_edit::Table,
    p: &str,
    protocol: &ProtocolConfig,
    max_mss_bytes: u32,
) -> Result<FlowConfig, ScenarioError> {
    r.check_keys(t, p, FLOW_KEYS)?;
    let count = r
        .scalar(t, p, "count", |v| {
            if v.as_str() == Some("all") {
                return Ok(u64::from(COUNT_ALL));
            }
            uint(v, 1, 1_000_000).map_err(|e| format!("{e}, or \"all\" (mesh: every client node)"))
        })?
        .unwrap_or(1) as u32;
    // The one place a `cc` name is read: everything downstream matches on the transport.
    let names = Transport::names();
    let transport = r.required(t, t.span(), p, "cc", |v| {
        let name = choice(v, &names)?;
        Transport::from_cc(&name).map_err(|e| e.to_string())
    })?;
    let cc = transport.cc();
    let cc_span = t.get("cc").and_then(Item::span);
    let http = transport.is_http();
    let mut settings = Settings::new();
    if let Some(preset) = &protocol.cc_preset {
        settings.set(coaplab_cc::presets::PRESET_KEY, preset.clone());
    }
    if let Some(n) = protocol.max_retransmit {
        settings.set("max_retransmit", n.to_string());
    }
    let params_path = format!("{p}.params");
    let params = match t.get("params") {
        None => None,
        Some(item) => Some(item.as_table_like().ok_or_else(|| {
            r.bad(
                item.span(),
                &params_path,
                item.type_name(),
                "a table of algorithm parameters",
            )
        })?),
    };
    if let Some(params) = params {
        let keys: Vec<String> = params.iter().map(|(k, _)| k.to_string()).collect();
        for key in keys {
            if let Some(value) = r.scalar(params, &params_path, &key, param_text)? {
                settings.set(key, value);
            }
        }
    }
    // HTTP runs on the TCP model (Linux reno): the same `[flows.params]`.
    let tcp = match transport {
        Transport::Udp { .. } => false,
        Transport::Tcp { .. } | Transport::Http { .. } => true,
    };
    if tcp {
        if let Some(params) = params {
            check_tcp_params(
                r,
                params,
                &params_path,
                &transport,
                &settings,
                cc_span.clone(),
            )?;
        }
    } else if let Err(e) = registry::resolve(cc, &settings) {
        let (key, line_span) = match &e {
            ParamError::UnknownKey { key, .. } | ParamError::BadValue { key, .. } => {
                let span = params
                    .and_then(|t| t.get(key))
                    .and_then(Item::span)
                    .or(cc_span.clone());
                (format!("{params_path}.{key}"), span)
            }
            _ => (format!("{p}.cc"), cc_span.clone()),
        };
        return Err(r.bad(
            line_span,
            &key,
            &format!("(for cc = \"{cc}\")"),
            e.to_string(),
        ));
    }
    let workload = r
        .scalar(t, p, "workload", |v| choice(v, WORKLOADS))?
        .unwrap_or_else(|| "continuous".to_string());
    let exchanges = r
        .scalar(t, p, "exchanges", |v| uint(v, 1, 100_000_000))?
        .unwrap_or(50) as u32;
    let batch_min = r
        .scalar(t, p, "batch_min", |v| uint(v, 1, 100_000_000))?
        .unwrap_or(1) as u32;
    let batch_max = r
        .scalar(t, p, "batch_max", |v| uint(v, 1, 100_000_000))?
        .unwrap_or(10) as u32;
    let object_bytes = r
        .scalar(t, p, "object_bytes", |v| uint(v, 1, 1 << 40))?
        .unwrap_or(102_400);
    let block_bytes = r
        .scalar(t, p, "block_bytes", |v| {
            let n = uint(v, 16, 1024)?;
            if n.is_power_of_two() {
                Ok(n)
            } else {
                Err("a block size of 16, 32, 64, 128, 256, 512 or 1024 (RFC 7959)".into())
            }
        })?
        .unwrap_or(256) as u32;
    let early_block2 = r
        .scalar(t, p, "early_block2", |v| {
            v.as_bool().ok_or_else(|| "true or false".to_string())
        })?
        .unwrap_or(false);
    // A sweep over `cc` may mix CoAP over UDP with TCP and HTTP flows, which have no blocks:
    // those ignore it.
    if early_block2 && workload != "long-transfer" {
        let span = t.get("early_block2").and_then(Item::span);
        return Err(r.bad(
            span,
            &format!("{p}.early_block2"),
            "true",
            format!("only with workload = \"long-transfer\" (here \"{workload}\")"),
        ));
    }
    let mss_bytes = r
        .scalar(t, p, "mss_bytes", |v| {
            uint(v, MIN_MSS_BYTES, u64::from(max_mss_bytes)).map_err(|_| {
                format!(
                    "an MSS of {MIN_MSS_BYTES} to {max_mss_bytes} bytes (the largest segment \
                     the topology carries in one IP packet)"
                )
            })
        })?
        .map(|n| n as u32);
    let request_payload_bytes = r
        .scalar(t, p, "payload_bytes", |v| uint(v, 0, 65_000))?
        .unwrap_or(51) as u32;
    let response_payload_bytes = r
        .scalar(t, p, "response_payload_bytes", |v| uint(v, 0, 65_000))?
        .unwrap_or(53) as u32;
    let start_jitter_s = r
        .scalar(t, p, "start_jitter_s", |v| float(v, 0.0, 1e6))?
        .unwrap_or(1.0);
    let random_source_port = r
        .scalar(t, p, "random_source_port", |v| {
            choice(v, &SourcePort::NAMES)
        })?
        .map_or(SourcePort::Keep, |name| {
            if name == "new" {
                SourcePort::New
            } else {
                SourcePort::Keep
            }
        });
    let interval_s = r.scalar(t, p, "interval_s", |v| float(v, 1e-6, 1e6))?;
    let period_s = r
        .scalar(t, p, "period_s", |v| float(v, 1e-3, 1e6))?
        .unwrap_or(1.0);
    let duration_s = r
        .scalar(t, p, "duration_s", |v| float(v, 1e-3, 1e7))?
        .unwrap_or(60.0);
    let con_every = r
        .scalar(t, p, "con_every", |v| uint(v, 0, 1_000_000))?
        .unwrap_or(0) as u32;
    if workload != "observe" {
        if let Some(key) = OBSERVE_KEYS.iter().find(|k| t.contains_key(k)) {
            let span = t.get(key).and_then(Item::span);
            return Err(r.bad(
                span,
                &format!("{p}.{key}"),
                &format!("(with workload = \"{workload}\")"),
                "only with workload = \"observe\"",
            ));
        }
    } else if tcp {
        let span = t.get("workload").and_then(Item::span).or(cc_span.clone());
        return Err(r.bad(
            span,
            &format!("{p}.workload"),
            &workload,
            format!("a workload other than \"observe\" for cc = \"{cc}\" (the simulator observes over CoAP over UDP only)"),
        ));
    }
    if interval_s.is_some() && (workload != "continuous" || transport.is_coap_over_tcp()) {
        let span = t.get("interval_s").and_then(Item::span);
        return Err(r.bad(
            span,
            &format!("{p}.interval_s"),
            &format!("(with workload = \"{workload}\", cc = \"{cc}\")"),
            "only with workload = \"continuous\" and a CoAP-over-UDP cc",
        ));
    }
    if http && workload != "long-transfer" {
        let span = t.get("workload").and_then(Item::span).or(cc_span.clone());
        return Err(r.bad(
            span,
            &format!("{p}.workload"),
            &workload,
            format!("\"long-transfer\" (cc = \"{cc}\" downloads one object)"),
        ));
    }
    if http && object_bytes > HTTP_MAX_OBJECT_BYTES {
        let span = t.get("object_bytes").and_then(Item::span);
        return Err(r.bad(
            span,
            &format!("{p}.object_bytes"),
            &object_bytes.to_string(),
            format!("at most {HTTP_MAX_OBJECT_BYTES} for cc = \"{cc}\" (h2's initial window; flow control is not modelled)"),
        ));
    }
    let workload = match workload.as_str() {
        "random" => {
            if batch_min > batch_max {
                let span = t.get("batch_max").and_then(Item::span);
                return Err(r.bad(
                    span,
                    &format!("{p}.batch_max"),
                    &batch_max.to_string(),
                    format!("at least batch_min ({batch_min})"),
                ));
            }
            Workload::Random {
                exchanges,
                batch_min,
                batch_max,
            }
        }
        "long-transfer" => Workload::LongTransfer {
            object_bytes,
            block_bytes,
        },
        "observe" => Workload::Observe {
            period: Duration::from_secs_f64_round_us(period_s),
            duration: Duration::from_secs_f64_round_us(duration_s),
            con_every,
        },
        _ => Workload::Continuous { exchanges },
    };
    Ok(FlowConfig {
        count,
        transport,
        settings,
        workload,
        request_payload_bytes,
        response_payload_bytes,
        start_jitter: Duration::from_secs_f64_round_us(start_jitter_s),
        random_source_port,
        interval: interval_s.map(Duration::from_secs_f64_round_us),
        early_block2,
        mss_bytes,
    })
}

/// The smallest `mss_bytes`: a segment carries at least one byte (no source gives a larger
/// lower bound; RFC 9293 §3.7.1 leaves the MSS to the path).
const MIN_MSS_BYTES: u64 = 1;

/// The largest object an HTTP flow downloads: HTTP/2's initial 65,535-B window, so that no
/// WINDOW_UPDATE for the stream is needed (the model sends none).
const HTTP_MAX_OBJECT_BYTES: u64 = 65_535;

/// CoAP bytes around a request payload: header 4, token 2, Uri-Path `f` 2, marker 1.
const REQUEST_OVERHEAD_BYTES: u32 = 9;
/// CoAP bytes around a piggybacked response payload: header 4, token 2, marker 1.
const RESPONSE_OVERHEAD_BYTES: u32 = 7;
/// CoAP bytes around a Block2 response: header 4, token 2, Block2 up to 5, marker 1.
const BLOCK_OVERHEAD_BYTES: u32 = 12;
/// IPv4 + UDP.
const IP_UDP_BYTES: u32 = 28;

/// Every message of the flow must fit the link MTU (the endpoint does not fragment).
fn check_mtu(
    r: &Reader<'_>,
    t: &toml_edit::Table,
    p: &str,
    flow: &FlowConfig,
    mtu_bytes: u32,
) -> Result<(), ScenarioError> {
    if flow.transport.is_coap_over_tcp() {
        // TCP cuts the stream into MSS-sized segments: any size fits.
        return Ok(());
    }
    let (key, ip_bytes) = match flow.workload {
        Workload::LongTransfer { block_bytes, .. } => (
            "block_bytes",
            block_bytes + BLOCK_OVERHEAD_BYTES + IP_UDP_BYTES,
        ),
        _ if flow.request_payload_bytes + REQUEST_OVERHEAD_BYTES
            > flow.response_payload_bytes + RESPONSE_OVERHEAD_BYTES =>
        {
            (
                "payload_bytes",
                flow.request_payload_bytes + REQUEST_OVERHEAD_BYTES + IP_UDP_BYTES,
            )
        }
        _ => (
            "response_payload_bytes",
            flow.response_payload_bytes + RESPONSE_OVERHEAD_BYTES + IP_UDP_BYTES,
        ),
    };
    if ip_bytes <= mtu_bytes {
        return Ok(());
    }
    let span = t
        .get(key)
        .or_else(|| t.get("workload"))
        .and_then(Item::span);
    let value = match flow.workload {
        Workload::LongTransfer { block_bytes, .. } => block_bytes,
        _ if key == "payload_bytes" => flow.request_payload_bytes,
        _ => flow.response_payload_bytes,
    };
    Err(r.bad(
        span.or_else(|| t.span()),
        &format!("{p}.{key}"),
        &value.to_string(),
        format!(
            "a size whose {ip_bytes}-byte IP packet fits the {mtu_bytes}-byte MTU of the network"
        ),
    ))
}

/// A long transfer's object must be able to arrive whole: over UDP in at most 2^20 Block2
/// blocks (NUM has 20 bits, RFC 7959 §2.2), over TCP as one RFC 8323 message whose length a
/// Max-Message-Size can admit (the client raises its limit to the object's frame, the server
/// never splits a body).
fn check_object(
    r: &Reader<'_>,
    t: &toml_edit::Table,
    p: &str,
    flow: &FlowConfig,
) -> Result<(), ScenarioError> {
    let Workload::LongTransfer {
        object_bytes,
        block_bytes,
    } = flow.workload
    else {
        return Ok(());
    };
    let expected = if flow.transport.is_coap_over_tcp() {
        let client = SessionConfig {
            token_len: LONG_TRANSFER_TOKEN_BYTES,
            ..SessionConfig::client()
        };
        match client.admitting_response(object_bytes) {
            Ok(_) => return Ok(()),
            Err(e) => format!("an object that fits one message over TCP: {e}"),
        }
    } else {
        let max = u64::from(block_bytes) << 20;
        if object_bytes <= max {
            return Ok(());
        }
        format!(
            "at most {max} B: 2^20 blocks of block_bytes = {block_bytes} (Block2 NUM has 20 \
             bits, RFC 7959 §2.2)"
        )
    };
    let span = t.get("object_bytes").and_then(Item::span);
    Err(r.bad(
        span.or_else(|| t.span()),
        &format!("{p}.object_bytes"),
        &object_bytes.to_string(),
        expected,
    ))
}

/// An algorithm parameter as the `key=value` text the registry parses.
/// Checks the `[flows.params]` of a TCP flow: netsim's [`TCP_PARAMS`] (every `TcpConfig`
/// field but the MTU, which is the network's) and, for `tcp-bbr`, BBR's constants.
fn check_tcp_params(
    r: &Reader<'_>,
    params: &dyn toml_edit::TableLike,
    params_path: &str,
    transport: &Transport,
    settings: &Settings,
    cc_span: Option<std::ops::Range<usize>>,
) -> Result<(), ScenarioError> {
    let cc = transport.cc();
    let mut bbr = BbrConfig::default();
    let mut tcp = Settings::new();
    for (key, item) in params.iter() {
        let value = settings.get(key).unwrap_or_default();
        let why = if transport.is_bbr() && BBR_PARAMS.iter().any(|p| p.key == key) {
            // Every BBR constant (netsim's BBR_PARAMS, Linux tcp_bbr.c defaults), checked
            // against that table's range by BbrConfig::set.
            match bbr.set(key, value) {
                Ok(()) => continue,
                Err(ParamError::BadValue { expected, .. }) => expected,
                Err(e) => e.to_string(),
            }
        } else if TCP_PARAMS.iter().any(|p| p.key == key) {
            tcp.set(key, value);
            match TcpConfig::resolve_params(
                &Settings::parse([format!("{key}={value}").as_str()]).unwrap_or_default(),
            ) {
                Ok(_) => continue,
                Err(ParamError::BadValue { expected, .. }) => expected,
                Err(e) => e.to_string(),
            }
        } else {
            let bbr_keys: &[_] = if transport.is_bbr() { BBR_PARAMS } else { &[] };
            let names: Vec<&str> = TCP_PARAMS.iter().chain(bbr_keys).map(|p| p.key).collect();
            format!(
                "a TCP model parameter for cc = \"{cc}\": {}",
                names.join(", ")
            )
        };
        // Strings quoted, as the reader shows them.
        let quoted =
            item.as_str().is_some() || item.as_array().is_some_and(|a| a.iter().any(Value::is_str));
        let shown_value = if quoted {
            format!("\"{value}\"")
        } else {
            value.to_string()
        };
        return Err(r.bad(
            item.span().or(cc_span.clone()),
            &format!("{params_path}.{key}"),
            &shown_value,
            why,
        ));
    }
    // Ranges between keys (rto_min_s ≤ rto_max_s).
    if let Err(ParamError::BadValue {
        key,
        value,
        expected,
    }) = TcpConfig::resolve_params(&tcp)
    {
        let span = params.get(&key).and_then(Item::span).or(cc_span);
        return Err(r.bad(span, &format!("{params_path}.{key}"), &value, expected));
    }
    Ok(())
}

fn param_text(v: &Value) -> Result<String, String> {
    match v {
        Value::String(s) => Ok(s.value().clone()),
        Value::Integer(_) | Value::Float(_) | Value::Boolean(_) => Ok(shown(v)),
        _ => Err("a string, number or boolean".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::{Scenario, SourcePort, Workload};

    #[test]
    fn random_source_port_is_keep_by_default_and_checked() {
        let text = "name = \"x\"\n[[flows]]\ncc = \"default\"\nworkload = \"random\"\n";
        let flow = |text: &str| Scenario::parse(text, "t.toml").map(|s| s.config(0).unwrap());
        let c = flow(text).unwrap();
        assert_eq!(c.flows[0].random_source_port, SourcePort::Keep);
        let c = flow(&format!("{text}random_source_port = \"new\"\n")).unwrap();
        assert_eq!(c.flows[0].random_source_port, SourcePort::New);
        let e = flow(&format!("{text}random_source_port = \"fresh\"\n")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.toml:5: bad value \"fresh\" for 'flows[0].random_source_port': expected one of \
             keep, new"
        );
        // A sweep axis like any other key.
        let s = Scenario::parse(
            &format!("{text}random_source_port = [\"keep\", \"new\"]\n"),
            "t.toml",
        )
        .unwrap();
        assert_eq!(s.axes[0].column, "random_source_port");
        assert_eq!(s.combinations(), 2);
    }

    #[test]
    fn a_long_transfers_object_must_be_able_to_arrive_whole() {
        let parse = |cc: &str, rest: &str| {
            let text = format!(
                "name = \"x\"\n[[flows]]\ncc = \"{cc}\"\nworkload = \"long-transfer\"\n{rest}"
            );
            Scenario::parse(&text, "t.toml").map(|s| s.config(0).unwrap())
        };
        // Over TCP: one message of 8 B of header and the object, at most u32::MAX B.
        let max = u64::from(u32::MAX) - 8;
        for cc in ["tcp-newreno", "tcp-bbr"] {
            let c = parse(cc, &format!("object_bytes = {max}\n")).unwrap();
            assert!(
                matches!(c.flows[0].workload, Workload::LongTransfer { object_bytes, .. }
                if object_bytes == max)
            );
            let e = parse(cc, &format!("object_bytes = {}\n", max + 1)).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!(
                    "t.toml:5: bad value {} for 'flows[0].object_bytes': expected an object \
                     that fits one message over TCP: a {}-B response cannot come as one \
                     message: RFC 8323's Max-Message-Size (4 bytes) admits frames of at most \
                     4294967295 B",
                    max + 1,
                    max + 1
                )
            );
        }
        // Over UDP: at most 2^20 blocks (Block2 NUM).
        assert!(parse("default", "object_bytes = 16777216\nblock_bytes = 16\n").is_ok());
        let e = parse("default", "object_bytes = 16777217\nblock_bytes = 16\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.toml:5: bad value 16777217 for 'flows[0].object_bytes': expected at most \
             16777216 B: 2^20 blocks of block_bytes = 16 (Block2 NUM has 20 bits, RFC 7959 §2.2)"
        );
        assert!(parse("default", "object_bytes = 134217728\nblock_bytes = 128\n").is_ok());
        assert!(parse("default", "object_bytes = 134217729\nblock_bytes = 128\n").is_err());
    }

    #[test]
    fn tcp_ccs_are_checked() {
        let parse = |text: &str| Scenario::parse(text, "t.toml").map(|s| s.config(0).unwrap());
        let head = "name = \"x\"\n[[flows]]\n";
        let c = parse(&format!(
            "{head}cc = \"tcp-newreno\"\nworkload = \"long-transfer\"\n"
        ))
        .unwrap();
        assert!(c.flows[0].transport.is_coap_over_tcp());
        let c = parse(&format!(
            "{head}cc = \"tcp-bbr\"\nworkload = \"long-transfer\"\n"
        ))
        .unwrap();
        assert!(c.flows[0].transport.is_coap_over_tcp());
        assert_eq!(c.flows[0].cc(), "tcp-bbr");
        assert_eq!(
            c.flows[0].transport,
            crate::scenario::Transport::Tcp {
                cc: crate::scenario::TcpCc::Bbr
            }
        );
        let c = parse(&format!(
            "{head}cc = \"tcp-newreno\"\nworkload = \"long-transfer\"\n\
             params = {{ quickack_segments = [0, 8] }}\n"
        ))
        .unwrap();
        assert_eq!(c.flows[0].settings.get("quickack_segments"), Some("0"));
        let e = parse(&format!(
            "{head}cc = \"tcp-newreno\"\nparams = {{ quickack_segments = -1 }}\n"
        ))
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.toml:4: bad value -1 for 'flows[0].params.quickack_segments': expected an \
             integer in [0, 1000000]"
        );
        let e = parse(&format!(
            "{head}cc = \"tcp-bbr\"\nparams = {{ delack_ms = 40 }}\n"
        ))
        .unwrap_err();
        assert!(e.to_string().contains("quickack_segments"), "{e}");
        // BBR's constants are [flows.params] of tcp-bbr (not of tcp-newreno), checked.
        let c = parse(&format!(
            "{head}cc = \"tcp-bbr\"\nparams = {{ probe_rtt_duration_ms = 0 }}\n"
        ))
        .unwrap();
        assert_eq!(c.flows[0].settings.get("probe_rtt_duration_ms"), Some("0"));
        let e = parse(&format!(
            "{head}cc = \"tcp-bbr\"\nparams = {{ cycle_rand = 9 }}\n"
        ))
        .unwrap_err();
        assert_eq!(e.line(), 4);
        assert!(parse(&format!(
            "{head}cc = \"tcp-newreno\"\nparams = {{ probe_rtt_duration_ms = 0 }}\n"
        ))
        .is_err());
        // Every TcpConfig parameter but the MTU (netsim's TCP_PARAMS), checked and sweepable.
        let c = parse(&format!(
            "{head}cc = \"tcp-newreno\"\n[flows.params]\niw = 10\nrto_initial_s = 1\n\
             rto_fallback_s = 1.5\nrto_min_s = 0.05\nrto_max_s = 60\nsyn_retries = 6\n\
             synack_retries = 5\ndelack_s = 0.04\ndupthresh = 5\nrecovery = \"rfc6582\"\n\
             slow_start_after_idle = false\nrto_backoff_reset = \"new-ack\"\n"
        ))
        .unwrap();
        assert_eq!(
            c.flows[0].settings.get("slow_start_after_idle"),
            Some("false")
        );
        assert_eq!(
            c.flows[0].settings.get("rto_backoff_reset"),
            Some("new-ack")
        );
        let s = Scenario::parse(
            &format!(
                "{head}cc = \"tcp-bbr\"\n\
                 params = {{ rto_backoff_reset = [\"rtt-sample\", \"new-ack\"], iw = [4, 10] }}\n"
            ),
            "t.toml",
        )
        .unwrap();
        assert_eq!(s.combinations(), 4);
        let e = parse(&format!(
            "{head}cc = \"tcp-bbr\"\n[flows.params]\nrto_backoff_reset = \"never\"\n"
        ))
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.toml:5: bad value \"never\" for 'flows[0].params.rto_backoff_reset': expected \
             one of rtt-sample, new-ack"
        );
        let e = parse(&format!(
            "{head}cc = \"tcp-newreno\"\n[flows.params]\nrto_max_s = 1\nrto_min_s = 2\n"
        ))
        .unwrap_err();
        assert_eq!(e.line(), 6, "{e}");
        assert!(e.to_string().contains("at most rto_max_s"), "{e}");
        let e = parse(&format!(
            "{head}cc = \"tcp-newreno\"\nparams = {{ delack_s = 0 }}\n"
        ))
        .unwrap_err();
        assert!(e.to_string().contains("'flows[0].params.delack_s'"), "{e}");
        let e = parse(&format!("{head}cc = \"tcp-cubic\"\n")).unwrap_err();
        assert!(e.to_string().contains("tcp-bbr"), "{e}");
        // Every workload runs over TCP; random flows reconnect per short-lived client.
        let c = parse(&format!(
            "{head}cc = \"tcp-newreno\"\nworkload = \"random\"\n"
        ))
        .unwrap();
        assert!(matches!(c.flows[0].workload, Workload::Random { .. }));
        let e = parse(&format!(
            "{head}cc = \"tcp-newreno\"\nworkload = \"long-transfer\"\n\
             [flows.params]\nalpha = 1\n"
        ))
        .unwrap_err();
        assert_eq!(e.line(), 6);
    }
}
