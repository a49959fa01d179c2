//! From the scenario's flows to the server's routes.

use crate::scenario::{FlowConfig, Workload};

/// The server's routes and each flow group's path.
pub(super) struct Paths {
    /// `(path, resource)` to route.
    pub(super) routes: Vec<(String, coaplab_endpoint::Resource)>,
    /// The path of each flow group.
    pub(super) path_of: Vec<String>,
    /// The server's Block2 size.
    pub(super) block_bytes: usize,
}

/// One path `f` (docs/experiments.md §4) when the groups agree on the object and reply sizes;
/// otherwise one path `f<group>` per group (one byte longer, so sizes differ from
/// docs/experiments.md §4 by one byte).
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
