//! CoAP over TCP and HTTP on the mesh: the star's TCP loop over 6LoWPAN.

use super::{run_one, run_traced};
use crate::scenario::{RunSpec, Scenario};

fn runs(text: &str) -> Vec<RunSpec> {
    Scenario::parse(text, "t.toml").unwrap().expand(None, None)
}

/// The 3-node chain (border router 0, server 1, client 2, 10 m apart: one hop between client
/// and server), static routes, one long transfer of `object_bytes` with the flow's `cc`.
fn chain(cc: &str, object_bytes: u32, mss: &str) -> RunSpec {
    chain_with(cc, object_bytes, mss, "")
}

/// [`chain`], with more `[topology]` keys.
fn chain_with(cc: &str, object_bytes: u32, mss: &str, topology: &str) -> RunSpec {
    runs(&format!(
        r#"name = "chain-tcp"
max_sim_time_s = 60
[topology]
kind = "mesh"
shape = "chain"
nodes = 3
routing = "static"
{topology}
[[flows]]
cc = "{cc}"
workload = "long-transfer"
object_bytes = {object_bytes}
start_jitter_s = 0
{mss}
"#
    ))
    .remove(0)
}

#[test]
fn a_tcp_flow_on_a_three_node_chain_delivers_its_object() {
    // 1000 B in 244-B segments (3 frames each on this hop, RPL's option on): the client's
    // session reads exactly the object (a flow completes only on a whole answer) 1.69488 s
    // after its request. Six RTOs inside: the server's data frames and the client's ACKs meet
    // on the one hop, whose two radios, 10 m apart at the edge of the range, cannot hear each
    // other's carrier (docs/mesh-model.md, "Consequences worth knowing"), so frames collide
    // whole and the MAC's retries fail in step. The object alone is 1000 B at 250 kbit/s:
    // 32 ms of air time, the floor no run goes under.
    let spec = chain("tcp-newreno", 1000, "mss_bytes = 244");
    let r = run_one(&spec).unwrap();
    let f = &r.flows[0];
    assert!(f.completed);
    assert_eq!(f.fct_s, Some(1.69488));
    assert!(f.fct_s.unwrap() > 1000.0 * 8.0 / 250e3);
    let tcp = f.tcp.as_ref().unwrap();
    assert_eq!(
        (f.transmissions, f.retransmissions, tcp.rto_count),
        (14, 6, 6)
    );
    // The mesh's records come with a TCP run as with a UDP one.
    let net = r.network.as_ref().unwrap();
    let mesh = net.mesh.as_ref().unwrap();
    assert_eq!((mesh.data_frames, mesh.collisions), (74, 23));
    assert_eq!((net.up.offered_packets, net.down.offered_packets), (14, 12));
    // One seed, one run; traced, the same run.
    assert_eq!(run_one(&spec).unwrap(), r);
    let (traced, trace) = run_traced(&spec).unwrap();
    assert_eq!(traced, r);
    assert!(!trace.tcp.is_empty());
}

#[test]
fn segments_longer_than_the_mac_queue_never_leave_their_node() {
    // The default MSS on the mesh, 1212 B, makes every full segment a 14-frame datagram: more
    // than the 8 frames a MAC queue holds (Contiki's QUEUEBUF_NUM), so the server's queue
    // refuses each (a datagram enters whole or not at all) and the transfer never ends.
    let spec = chain("tcp-newreno", 1000, "");
    let r = run_one(&spec).unwrap();
    assert!(!r.flows[0].completed);
    let net = r.network.unwrap();
    assert!(
        net.down.overflow_drops > 0 && net.down.sent_packets < 5,
        "{net:?}"
    );
    // A 16-frame queue takes them.
    let spec = chain_with(
        "tcp-newreno",
        1000,
        "",
        "[topology.params]\nqueue_frames = 16",
    );
    let r = run_one(&spec).unwrap();
    assert!(r.flows[0].completed);
    assert_eq!(r.flows[0].fct_s, Some(1.635072));
}

#[test]
fn an_http_download_runs_on_the_mesh_too() {
    let spec = chain("h2", 1000, "mss_bytes = 244");
    let r = run_one(&spec).unwrap();
    assert!(r.flows[0].completed);
    assert_eq!(r.flows[0].fct_s, Some(1.195392));
    assert!(r.network.unwrap().mesh.is_some());
}

#[test]
fn an_mss_the_mesh_cannot_carry_is_refused_by_name() {
    let text = "name = \"t\"\n[topology]\nkind = \"mesh\"\n[[flows]]\ncc = \"tcp-bbr\"\n\
                mss_bytes = 1213\n";
    let e = Scenario::parse(text, "t.toml").unwrap_err().to_string();
    assert!(
        e.contains("'flows[0].mss_bytes'") && e.contains("1 to 1212 bytes"),
        "{e}"
    );
    // Without RPL's hop-by-hop option, 8 B more.
    let text = text.replace(
        "[[flows]]",
        "[topology.params]\nrpl_hbh_option = false\n[[flows]]",
    );
    let text = text.replace("1213", "1220");
    assert!(Scenario::parse(&text, "t.toml").is_ok());
}
