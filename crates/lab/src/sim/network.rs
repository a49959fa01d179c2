//! From the scenario's network and flows to netsim's configuration and the server's routes.

use coaplab_netsim as netsim;
use coaplab_netsim::{CtmcParams, DelayConfig, GeParams};

use crate::scenario::{FlowConfig, LinkConfig, LossModel, NetworkConfig, Workload};

/// netsim's configuration of `net`.
pub(super) fn netsim_config(net: &NetworkConfig) -> netsim::NetworkConfig {
    let loss = match net.loss {
        LossModel::None => netsim::LossModel::None,
        LossModel::Bernoulli { p } => netsim::LossModel::Bernoulli { p },
        LossModel::Ctmc {
            good_mean,
            burst_mean,
            loss_good,
            loss_burst,
        } => netsim::LossModel::Ctmc(CtmcParams {
            burst_mean,
            good_mean,
            loss_good,
            loss_burst,
        }),
        LossModel::GilbertElliott {
            p,
            r,
            loss_good,
            loss_bad,
        } => netsim::LossModel::GilbertElliott(GeParams {
            p,
            r,
            loss_bad,
            loss_good,
        }),
    };
    let link = |l: &LinkConfig| netsim::LinkConfig {
        rate_bps: l.rate_bps,
        propagation: DelayConfig {
            delay: l.delay,
            jitter: l.delay_jitter,
            jitter_mode: mode(l.delay_jitter_mode),
        },
        buffer_bytes: l.buffer_bytes,
        overhead_bytes: net.overhead_bytes,
        queue_counts_overhead: true,
        count_in_service: true,
        burst_bytes: 0,
        loss,
    };
    let rest = |l: &LinkConfig| DelayConfig {
        delay: l.rest_delay,
        jitter: l.rest_jitter,
        jitter_mode: mode(l.rest_jitter_mode),
    };
    netsim::NetworkConfig {
        down: link(&net.down),
        up: link(&net.up),
        rest_down: rest(&net.down),
        rest_up: rest(&net.up),
        mtu_bytes: net.mtu_bytes,
    }
}

fn mode(m: crate::scenario::JitterMode) -> netsim::JitterMode {
    match m {
        crate::scenario::JitterMode::None => netsim::JitterMode::None,
        crate::scenario::JitterMode::Fifo => netsim::JitterMode::Fifo,
        crate::scenario::JitterMode::Reorder => netsim::JitterMode::Reorder,
    }
}

/// The server's routes and each flow group's path.
pub(super) struct Paths {
    /// `(path, resource)` to route.
    pub(super) routes: Vec<(String, coaplab_endpoint::Resource)>,
    /// The path of each flow group.
    pub(super) path_of: Vec<String>,
    /// The server's Block2 size.
    pub(super) block_bytes: usize,
}

/// One path `f` (spec §4) when the groups agree on the object and reply sizes; otherwise one
/// path `f<group>` per group (one byte longer, so sizes differ from spec §4 by one byte).
pub(super) fn paths(flows: &[FlowConfig]) -> Paths {
    let need = |f: &FlowConfig| match f.workload {
        Workload::LongTransfer { object_bytes, .. } => (Some(object_bytes), None),
        _ => (None, Some(f.response_payload_bytes)),
    };
    let mut objects: Vec<u64> = flows.iter().filter_map(|f| need(f).0).collect();
    let mut replies: Vec<u32> = flows.iter().filter_map(|f| need(f).1).collect();
    objects.sort_unstable();
    objects.dedup();
    replies.sort_unstable();
    replies.dedup();
    let block_bytes = flows
        .iter()
        .find_map(|f| match f.workload {
            Workload::LongTransfer { block_bytes, .. } => Some(block_bytes as usize),
            _ => None,
        })
        .unwrap_or(1024);
    if objects.len() <= 1 && replies.len() <= 1 {
        let resource = super::resource(
            objects.first().copied().unwrap_or(0),
            replies.first().copied().unwrap_or(0),
        );
        return Paths {
            routes: vec![(crate::workload::PATH.to_string(), resource)],
            path_of: vec![crate::workload::PATH.to_string(); flows.len()],
            block_bytes,
        };
    }
    let routes: Vec<(String, coaplab_endpoint::Resource)> = flows
        .iter()
        .enumerate()
        .map(|(g, f)| {
            let (o, r) = need(f);
            (
                format!("{}{g}", crate::workload::PATH),
                super::resource(o.unwrap_or(0), r.unwrap_or(0)),
            )
        })
        .collect();
    Paths {
        path_of: routes.iter().map(|(p, _)| p.clone()).collect(),
        routes,
        block_bytes,
    }
}
