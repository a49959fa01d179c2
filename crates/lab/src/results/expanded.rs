//! The fully resolved configuration of a parameter combination, as JSON for the manifest:
//! every network value after preset and overrides, and every algorithm parameter after
//! preset, protocol settings and `[flows.params]`.

use serde_json::{json, Map, Value};

use coaplab_netsim::link::loss::netem::fraction_of;
use coaplab_netsim::link::trace::TraceEnd;
use coaplab_netsim::tcp::{TcpConfig, BBR_PARAMS};
use coaplab_netsim::{CtmcParams, DelayConfig, GeParams, LinkConfig, LossModel};

use crate::scenario::{RunConfig, SourcePort, Workload};

/// The configuration as JSON (durations in milliseconds).
pub fn config_json(config: &RunConfig) -> Value {
    let ms = |d: coaplab_cc::time::Duration| d.as_nanos() as f64 / 1e6;
    // A bottleneck direction with the rest-of-path stage on its server side.
    let link = |l: &LinkConfig, rest: &DelayConfig| {
        let mut j = json!({
            "rate_bps": l.rate_bps,
            "delay_ms": ms(l.propagation.delay),
            "jitter_ms": ms(l.propagation.jitter),
            "jitter_mode": format!("{:?}", l.propagation.jitter_mode).to_lowercase(),
            "buffer_bytes": l.buffer_bytes,
            "rest_delay_ms": ms(rest.delay),
            "rest_jitter_ms": ms(rest.jitter),
            "rest_jitter_mode": format!("{:?}", rest.jitter_mode).to_lowercase(),
        });
        // Only when set, so manifests of existing scenarios keep their exact form. The trace
        // replaces rate_bps and delay_ms; its FNV-1a 64 (of its canonical text) names it.
        if let Some(trace) = &l.trace {
            let end = match trace.end() {
                TraceEnd::Hold => json!("hold"),
                TraceEnd::Loop { period } => json!({ "loop_ms": ms(period) }),
            };
            let text = coaplab_netsim::link::trace::format::write(trace, &[]);
            j["trace"] = json!({
                "segments": trace.segments().len(),
                "end": end,
                "fnv1a64": format!("{:016x}", coaplab_netsim::rng::fnv1a64(text.as_bytes())),
            });
        }
        j
    };
    let net = &config.network;
    // Scenarios set one loss model and one overhead for both directions.
    let loss = match net.down.loss {
        LossModel::None => json!({ "model": "none" }),
        LossModel::Bernoulli { p } => json!({ "model": "bernoulli", "p": p }),
        LossModel::Ctmc(CtmcParams {
            good_mean,
            burst_mean,
            loss_good,
            loss_burst,
        }) => json!({
            "model": "ctmc",
            "good_mean_s": good_mean.as_secs_f64(),
            "burst_mean_s": burst_mean.as_secs_f64(),
            "loss_good": loss_good,
            "loss_burst": loss_burst,
        }),
        LossModel::GilbertElliott(GeParams {
            p,
            r,
            loss_good,
            loss_bad,
        }) => json!({
            "model": "gilbert-elliott", "p": p, "r": r, "loss_good": loss_good, "loss_bad": loss_bad,
        }),
        // netem's models as fractions under tc's names, with the per-packet mean they deliver.
        LossModel::NetemRandom(n) => json!({
            "model": "netem-random", "p": fraction_of(n.loss),
            "correlation": fraction_of(n.correlation), "mean_loss": net.down.loss.mean_loss(),
        }),
        LossModel::NetemState(n) => json!({
            "model": "netem-state", "p13": fraction_of(n.p13), "p31": fraction_of(n.p31),
            "p32": fraction_of(n.p32), "p23": fraction_of(n.p23), "p14": fraction_of(n.p14),
            "mean_loss": net.down.loss.mean_loss(),
        }),
        LossModel::NetemGemodel(n) => {
            let (p, r, one_minus_h, one_minus_k) = n.fractions();
            json!({
                "model": "netem-gemodel", "p": p, "r": r, "1-h": one_minus_h, "1-k": one_minus_k,
                "mean_loss": net.down.loss.mean_loss(),
            })
        }
    };
    let flows: Vec<Value> = config
        .flows
        .iter()
        .map(|f| {
            let mut params = Map::new();
            if f.transport.is_coap_over_tcp() {
                // Every TCP model parameter (netsim's TCP_PARAMS), then the BBR constants
                // the scenario sets.
                if let Ok(resolved) = TcpConfig::resolve_params(&f.settings) {
                    for (k, v) in resolved.iter() {
                        params.insert(k.to_string(), Value::String(v.to_string()));
                    }
                }
                if f.transport.is_bbr() {
                    for name in BBR_PARAMS.iter().map(|p| p.key) {
                        if let Some(v) = f.settings.get(name) {
                            params.insert(name.to_string(), Value::String(v.to_string()));
                        }
                    }
                }
            } else if let Ok((_, resolved)) = coaplab_cc::registry::resolve(f.cc(), &f.settings) {
                for (k, v) in resolved.iter() {
                    params.insert(k.to_string(), Value::String(v.to_string()));
                }
            }
            let workload = match f.workload {
                Workload::Continuous { exchanges } => {
                    let mut w = json!({ "kind": "continuous", "exchanges": exchanges });
                    // Only when set, so manifests of existing scenarios keep their exact form.
                    if let Some(interval) = f.interval {
                        w["interval_s"] = json!(interval.as_secs_f64());
                    }
                    w
                }
                Workload::Random {
                    exchanges,
                    batch_min,
                    batch_max,
                } => {
                    let mut w = json!({
                        "kind": "random", "exchanges": exchanges,
                        "batch_min": batch_min, "batch_max": batch_max,
                    });
                    // Only when not the default, so manifests of existing scenarios keep
                    // their exact form.
                    if f.random_source_port != SourcePort::Keep {
                        w["random_source_port"] = json!(f.random_source_port.name());
                    }
                    w
                }
                Workload::LongTransfer {
                    object_bytes,
                    block_bytes,
                } => {
                    let mut w = json!({
                        "kind": "long-transfer", "object_bytes": object_bytes, "block_bytes": block_bytes,
                    });
                    // Only when set, so manifests of existing scenarios keep their exact form.
                    if f.early_block2 {
                        w["early_block2"] = json!(true);
                    }
                    w
                }
                Workload::Observe {
                    period,
                    duration,
                    con_every,
                } => json!({
                    "kind": "observe", "period_s": period.as_secs_f64(),
                    "duration_s": duration.as_secs_f64(), "con_every": con_every,
                }),
            };
            let mut flow = json!({
                "count": f.count,
                "cc": f.cc(),
                "params": params,
                "workload": workload,
                "payload_bytes": f.request_payload_bytes,
                "response_payload_bytes": f.response_payload_bytes,
                "start_jitter_s": f.start_jitter.as_secs_f64(),
            });
            // Only when set, so manifests of existing scenarios keep their exact form.
            if let Some(mss) = f.mss_bytes {
                flow["mss_bytes"] = json!(mss);
            }
            flow
        })
        .collect();
    let mut out = json!({
        "network": {
            "preset": config.preset.name(),
            "down": link(&net.down, &net.rest_down),
            "up": link(&net.up, &net.rest_up),
            "mtu": net.mtu_bytes,
            "overhead_bytes": net.down.overhead_bytes,
            "loss": config.loss_label,
            "loss_model": loss,
        },
        "protocol": {
            "max_retransmit": config.protocol.max_retransmit,
            "nstart": config.protocol.nstart,
            "cc_preset": config.protocol.cc_preset,
            "server_duplicates": config.protocol.server_duplicates.name(),
        },
        "flows": flows,
        "max_sim_time_s": config.max_sim_time.as_secs_f64(),
    });
    // Only for a mesh, so manifests of star scenarios keep their exact form.
    if let crate::scenario::Topology::Mesh(mesh) = &config.topology {
        let p = &mesh.params;
        let nodes: Vec<serde_json::Value> = mesh
            .layout
            .nodes
            .iter()
            .map(|n| json!({ "x_m": n.x_m, "y_m": n.y_m, "role": n.role.name() }))
            .collect();
        out["topology"] = json!({
            "kind": "mesh",
            "nodes": nodes,
            "params": {
                "tx_range_m": p.tx_range_m,
                "interference_range_m": p.interference_range_m,
                "success_ratio_tx": p.success_ratio_tx,
                "success_ratio_rx": p.success_ratio_rx,
                "cca_threshold_dbm": p.cca_threshold_dbm,
                "mac_min_be": p.csma.min_be,
                "mac_max_be": p.csma.max_be,
                "mac_max_csma_backoffs": p.csma.max_csma_backoffs,
                "mac_max_frame_retries": p.csma.max_frame_retries,
                "mac_ack_request": p.mac_ack_request,
                "unit_backoff_s": p.csma.unit_backoff.as_secs_f64(),
                "ack_wait_s": p.csma.ack_wait.as_secs_f64(),
                "queue_frames": p.queue_frames,
                "reass_maxage_s": p.reass_maxage.as_secs_f64(),
                "short_addresses": p.short_addresses,
                "rpl_hbh_option": p.rpl_hbh_option,
            },
        });
        if p.off_mesh_server {
            // Only then, so manifests of on-mesh servers keep their exact form.
            out["topology"]["server"] = json!("off-mesh");
        }
    }
    if let Some(m) = &config.mobility {
        out["mobility"] = mobility_json(m);
    }
    out
}

/// `[mobility]` for the manifest: the model, its parameters as resolved, who moves.
fn mobility_json(m: &coaplab_netsim::mesh::mobility::MobilityConfig) -> serde_json::Value {
    use coaplab_netsim::mesh::mobility::Model;
    let params = match &m.model {
        Model::RandomWaypoint(p) => format!("{p:?}"),
        Model::GaussMarkov(p) => format!("{p:?}"),
        Model::ManhattanGrid(p) => format!("{p:?}"),
        Model::Pursue(p) => format!("{p:?}"),
        Model::File(paths) => format!("{} trajectories", paths.iter().flatten().count()),
    };
    json!({
        "model": m.model.name(),
        "params": params,
        "roles": m.moving.iter().map(|r| r.name()).collect::<Vec<_>>(),
        "area_m": m.area.map(|a| [a.x, a.y]),
        "route_check_interval_s": m.route_check_interval.as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use coaplab_netsim::link::trace::parse;

    use crate::scenario::Scenario;

    #[test]
    fn a_traced_direction_names_its_trace_and_an_untraced_one_has_no_trace_key() {
        let text = "name = \"x\"\n[[flows]]\ncc = \"default\"\n";
        let mut config = Scenario::parse(text, "t.toml").unwrap().config(0).unwrap();
        let trace = parse("0,30000,400\n1000,3750,400\n2000,loop\n").unwrap();
        config.network.down.trace = Some(Arc::new(trace));
        let json = super::config_json(&config);
        let down = &json["network"]["down"]["trace"];
        assert_eq!(down["segments"], 2);
        assert_eq!(down["end"]["loop_ms"], 2000.0);
        assert_eq!(down["fnv1a64"].as_str().map(str::len), Some(16));
        assert!(json["network"]["up"].get("trace").is_none());
    }
}
