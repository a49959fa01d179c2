//! Mesh runs: several CoAP servers on one mesh, and traced mesh runs.

use coaplab_netsim::mesh::FrameKind;

use super::{run_one, run_traced};
use crate::scenario::{RunSpec, Scenario};

fn runs(text: &str) -> Vec<RunSpec> {
    Scenario::parse(text, "t.toml").unwrap().expand(None, None)
}

#[test]
fn two_grid_servers_share_the_flows_round_robin() {
    // The 3×3 grid with servers in the top-right (node 2) and bottom-left (node 6) corners,
    // border router 4; one flow on each of the 6 client nodes 0, 1, 3, 5, 7, 8.
    let spec = &runs(
        r#"name = "two-servers"
[topology]
kind = "mesh"
rows = 3
cols = 3
servers = 2
routing = "static"
[[flows]]
count = "all"
cc = "cocoa"
exchanges = 3
"#,
    )[0];
    let r = run_one(spec).unwrap();
    let servers: Vec<Option<u32>> = r
        .flows
        .iter()
        .map(|f| f.mesh.as_ref().unwrap().server_node)
        .collect();
    let s = |n| Some(n);
    assert_eq!(servers, [s(2), s(6), s(2), s(6), s(2), s(6)]);
    // Both servers answered: every flow completed all its exchanges, none lost.
    for f in &r.flows {
        assert!(f.completed, "flow {}", f.flow);
        assert_eq!((f.exchanges, f.failed_exchanges), (3, 0), "flow {}", f.flow);
    }
    // Traced, the same run; its frames show each flow's datagrams reaching and leaving its
    // own server only (flow k's server is node 2 for even k, node 6 for odd k).
    let (traced, trace) = run_traced(spec).unwrap();
    assert_eq!(traced, r);
    let mut hops_at_servers = [0; 2];
    for f in trace.frames.iter().filter(|f| f.kind == FrameKind::Data) {
        let flow = super::tag::flow(f.tag.unwrap());
        let own = [2, 6][flow as usize % 2];
        for server in [2, 6] {
            if f.node == server || f.to == Some(server) {
                assert_eq!(server, own, "flow {flow}: {f:?}");
                hops_at_servers[usize::from(server == 6)] += 1;
            }
        }
    }
    // Each server received its 9 requests and sent 9 answers, one frame each at least.
    assert!(
        hops_at_servers.iter().all(|&n| n >= 18),
        "{hops_at_servers:?}"
    );
}

#[test]
fn a_traced_mesh_run_keeps_the_coap_events_and_every_frame_on_air() {
    // Border router, server 8 m away, client 8 m beyond it (16 m from the border router,
    // out of its 10-m range): the client's one request and its answer each take one hop.
    let spec = &runs(
        r#"name = "traced"
[topology]
kind = "mesh"
shape = "nodes"
routing = "static"
[[topology.nodes]]
x_m = 0
y_m = 0
role = "border-router"
[[topology.nodes]]
x_m = 8
y_m = 0
role = "server"
[[topology.nodes]]
x_m = 16
y_m = 0
[[flows]]
count = 1
cc = "default"
exchanges = 1
"#,
    )[0];
    let (traced, trace) = run_traced(spec).unwrap();
    assert_eq!(traced, run_one(spec).unwrap());
    // Request (client 2 → server 1), its ACK, the piggybacked response, each decoded by
    // the node it was for. The response's arrival ends the run (every flow is done), before
    // the client's ACK of that frame goes on air.
    let seen: Vec<_> = trace
        .frames
        .iter()
        .map(|f| (f.node, f.to, f.kind, f.packet, f.attempt, f.decoded))
        .collect();
    assert_eq!(
        seen,
        [
            (2, Some(1), FrameKind::Data, Some(0), Some(1), true),
            (1, Some(2), FrameKind::Ack, None, None, true),
            (1, Some(2), FrameKind::Data, Some(1), Some(1), true),
        ]
    );
    for w in trace.frames.windows(2) {
        assert!(w[0].end <= w[1].start, "one frame on air at a time here");
    }
    let data = &trace.frames[0];
    // 250 kbit/s: 32 µs per octet, plus the 6 octets of SHR and PHR.
    let airtime_ns = (i64::from(data.psdu_bytes) + 6) * 32_000;
    assert_eq!((data.end - data.start).as_nanos(), airtime_ns);
    assert_eq!(data.fragment, Some((0, 1)));
    let channel = traced.network.as_ref().unwrap().mesh.as_ref().unwrap();
    assert_eq!((channel.data_frames, channel.ack_frames), (2, 1));
    // The CoAP-level rows: the client's transmission, its completion, its RTO after it.
    let events = trace.events.batch();
    let kinds = events
        .column_by_name("event")
        .unwrap()
        .as_any()
        .downcast_ref::<arrow_array::StringArray>()
        .unwrap()
        .iter()
        .map(|k| k.unwrap().to_string())
        .collect::<Vec<_>>();
    assert_eq!(kinds, ["transmit", "complete", "rto"]);
    let frames = crate::trace::frames::batch(&trace.frames);
    assert_eq!(frames.num_rows(), 3);
    // Written as a mesh run's trace: events, frames and the 802.15.4 capture, no queue table
    // or IP pcap.
    let dir = tempfile::tempdir().unwrap();
    trace
        .write(dir.path(), spec, crate::trace::TraceFormat::Csv)
        .unwrap();
    let mut files: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["events.csv", "frames.csv", "mesh.pcapng"]);
    let csv = std::fs::read_to_string(dir.path().join("frames.csv")).unwrap();
    assert_eq!(
        csv.lines().next().unwrap(),
        "start_ns,start_s,end_ns,node,to,kind,psdu_bytes,packet,flow,fragment,fragments,attempt,decoded,receivers"
    );
}

#[test]
fn the_servers_key_is_checked() {
    let err = |topology: &str| {
        let text = format!(
            "name = \"s\"\n[topology]\nkind = \"mesh\"\n{topology}\n[[flows]]\ncount = 1\ncc = \"cocoa\"\n"
        );
        Scenario::parse(&text, "s.toml").unwrap_err().to_string()
    };
    let e = err("servers = 5");
    assert!(
        e.contains("topology.servers") && e.contains("[1, 4]"),
        "{e}"
    );
    let e = err("shape = \"chain\"\nservers = 2");
    assert!(
        e.contains("topology.servers") && e.contains("only with shape = grid"),
        "{e}"
    );
    let e = err("servers = 2\nserver = 0");
    assert!(
        e.contains("topology.servers") && e.contains("either servers"),
        "{e}"
    );
    // A 1-row grid has no third corner free.
    let e = err("rows = 1\ncols = 5\nservers = 3");
    assert!(e.contains("no free corner for server 3"), "{e}");
    // Two servers on a 3x3 grid leave 6 client nodes for `count = "all"`.
    let text = "name = \"s\"\n[topology]\nkind = \"mesh\"\nservers = 2\n[[flows]]\ncount = \"all\"\ncc = \"cocoa\"\n";
    let s = Scenario::parse(text, "s.toml").unwrap();
    assert_eq!(s.config(0).unwrap().total_flows(), 6);
}
