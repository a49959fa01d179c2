//! Settings that are valid but cannot work: said before a sweep runs, not found out after it.
//!
//! A scenario that passes every key check may still describe a run that can never finish.
//! The one case known today: a TCP or HTTP flow on a mesh whose full-sized segment is cut
//! into more 6LoWPAN fragments than a node's MAC queue holds. A datagram enters a Contiki
//! queue whole or not at all (docs/mesh-model.md, "Segments must fit the MAC queue"), so no
//! such segment ever leaves its sender and the transfer stalls until the time cap. That is a
//! result worth being able to produce (the mesh TCP experiment shows it on purpose), so it is
//! a warning, not an error.

use coaplab_netsim::mesh::sixlowpan::{ipv6_tcp_len, Hop, Plan};
use coaplab_netsim::mesh::{mac, MeshParams};
use coaplab_netsim::tcp::TCP_HEADER_BYTES;

use super::config::{RunConfig, Topology};
use super::transport::Transport;

/// What is wrong with `config`, one sentence per flow group (empty: nothing known).
pub fn warnings(config: &RunConfig) -> Vec<String> {
    let Topology::Mesh(mesh) = &config.topology else {
        return Vec::new();
    };
    let params = &mesh.params;
    let max_mss = config.topology.max_tcp_mss_bytes(config.network.mtu_bytes);
    let mut out = Vec::new();
    for (k, flow) in config.flows.iter().enumerate() {
        if matches!(flow.transport, Transport::Udp { .. }) {
            continue;
        }
        let (mss, key) = match flow.mss_bytes {
            Some(m) => (m, format!("mss_bytes = {m}")),
            None => (max_mss, format!("mss_bytes unset: the largest, {max_mss}")),
        };
        let frames = segment_frames(params, mss, Sender);
        if frames <= params.queue_frames {
            continue;
        }
        let fits = (1..mss)
            .rev()
            .find(|&m| segment_frames(params, m, Forwarder) <= params.queue_frames);
        let advice = match fits {
            Some(m) => format!("the largest MSS that fits on every hop is {m} B"),
            None => "no MSS fits".to_string(),
        };
        out.push(format!(
            "flows[{k}] ({cc}, {key}): a full segment is {frames} frames on this mesh, more \
             than a node's MAC queue holds (topology.params.queue_frames = {q}); a datagram \
             enters the queue whole or not at all, so no full segment can leave its sender \
             and a flow that sends one stalls until the time cap ({advice})",
            cc = flow.cc(),
            q = params.queue_frames,
        ));
    }
    out
}

/// Where a segment is fragmented: the two ends of the range of its header sizes.
#[derive(Clone, Copy)]
enum At {
    /// At its sender, both addresses elided: the fewest frames any hop cuts it into.
    Sender,
    /// At a forwarding hop, hop limit and both interface identifiers inline: the most.
    Forwarder,
}
use At::{Forwarder, Sender};

/// The frames a TCP segment of `mss` payload bytes (no TCP options) takes on `params`' mesh.
fn segment_frames(params: &MeshParams, mss: u32, at: At) -> u32 {
    let far = matches!(at, Forwarder);
    let hop = Hop {
        forwarded: far,
        src_inline: far,
        dst_inline: far,
        short_addresses: params.short_addresses,
        rpl_hbh: params.rpl_hbh_option,
        tcp: true,
    };
    let ip_len = ipv6_tcp_len(TCP_HEADER_BYTES + mss, params.rpl_hbh_option);
    Plan::new(ip_len, hop, mac::max_payload(params.short_addresses)).frames
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;

    const MESH_TCP: &str = r#"
name = "w"
seed = 1
replications = 1
max_sim_time_s = 60
[topology]
kind = "mesh"
shape = "grid"
rows = 3
cols = 3
spacing_m = 10
routing = "rpl"
[[flows]]
count = 1
cc = "tcp-newreno"
workload = "long-transfer"
object_bytes = 1000
"#;

    fn config(extra: &str) -> RunConfig {
        let text = MESH_TCP.replace(
            "object_bytes = 1000",
            &format!("object_bytes = 1000\n{extra}"),
        );
        Scenario::parse(&text, "w.toml").unwrap().config(0).unwrap()
    }

    #[test]
    fn the_default_mss_on_a_mesh_is_named_with_the_largest_that_fits() {
        let w = warnings(&config(""));
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with(
                "flows[0] (tcp-newreno, mss_bytes unset: the largest, 1212): a full segment is \
                 13 frames on this mesh, more than a node's MAC queue holds \
                 (topology.params.queue_frames = 8)"
            ),
            "{}",
            w[0]
        );
        // The largest that fits: 8 frames on a forwarding hop (14 for the default MSS there,
        // docs/mesh-model.md).
        assert!(
            w[0].ends_with("(the largest MSS that fits on every hop is 724 B)"),
            "{}",
            w[0]
        );
        let params = MeshParams::default();
        assert_eq!(segment_frames(&params, 1212, Forwarder), 14);
        assert_eq!(segment_frames(&params, 724, Forwarder), 8);
        assert_eq!(segment_frames(&params, 725, Forwarder), 9);
    }

    #[test]
    fn segments_that_fit_and_udp_flows_are_quiet() {
        assert!(warnings(&config("mss_bytes = 244")).is_empty());
        let udp = Scenario::parse(&MESH_TCP.replace("tcp-newreno", "default"), "w.toml")
            .unwrap()
            .config(0)
            .unwrap();
        assert!(warnings(&udp).is_empty());
    }

    #[test]
    fn the_star_is_quiet() {
        let start = MESH_TCP.find("[topology]").unwrap();
        let end = MESH_TCP.find("[[flows]]").unwrap();
        let star = format!("{}{}", &MESH_TCP[..start], &MESH_TCP[end..]);
        let c = Scenario::parse(&star, "w.toml").unwrap().config(0).unwrap();
        assert!(warnings(&c).is_empty());
    }
}
