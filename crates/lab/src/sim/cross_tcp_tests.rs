//! UDP and TCP flows on one star: a TCP flow alone is the pure TCP run's, and beside a CoAP
//! flow the two share the FIFOs, exactly.

use coaplab_cc::time::Duration;
use coaplab_netsim::{Direction, PacketRecord, Topology};

use super::super::{tag, tcp, Sim};
use super::WithTcp;
use crate::scenario::{RunSpec, Scenario};

/// The first run of the scenario `text` (a name is added).
fn spec(text: &str) -> RunSpec {
    let text = format!("name = \"x\"\nseed = 7\n{text}");
    Scenario::parse(&text, "x.toml")
        .unwrap()
        .expand(Some(1), None)
        .remove(0)
}

/// A TCP flow group of `count` flows.
fn tcp_group(count: u32, cc: &str, workload: &str) -> String {
    format!("[[flows]]\ncount = {count}\ncc = \"{cc}\"\n{workload}\nstart_jitter_s = 1.0\n")
}

const DOWNLOAD: &str = "workload = \"long-transfer\"\nobject_bytes = 20480";
const EXCHANGES: &str = "workload = \"continuous\"\nexchanges = 20";

#[test]
fn tcp_flows_alone_are_the_pure_tcp_runs_field_for_field() {
    // Without UDP flows the wrapper's TCP flows meet the same star, seeds and instants as the
    // CoAP-over-TCP loop's: every record, and the link's counters, are that loop's. Medium
    // link errors and two flows exercise retransmissions and the order of flows at one
    // instant.
    for cc in ["tcp-newreno", "tcp-bbr"] {
        for workload in [DOWNLOAD, EXCHANGES] {
            let s = spec(&format!(
                "[network]\npreset = \"nbiot\"\nloss = \"medium\"\n{}",
                tcp_group(2, cc, workload)
            ));
            let pure = tcp::run(&s).unwrap();
            let mixed = super::run(&s).unwrap();
            assert!(pure.flows.iter().all(|f| f.completed), "{cc} {workload}");
            assert!(pure.flows.iter().any(|f| f.retransmissions > 0), "{cc}");
            assert_eq!(mixed.flows, pure.flows, "{cc} {workload}");
            assert_eq!(
                mixed.network.map(|n| (n.up, n.down)),
                pure.network.map(|n| (n.up, n.down))
            );
        }
    }
}

#[test]
fn udp_flows_on_the_wrapper_alone_are_the_pure_udp_runs() {
    // The other half: with no TCP flow inside, the wrapper hands the UDP loop every delivery
    // of the star and adds no instant, so the run (records, events, clock, link counters) is
    // the UDP-only run's.
    let s = spec(
        "[network]\npreset = \"nbiot\"\nloss = \"medium\"\n[[flows]]\ncount = 20\n\
         cc = \"cocoa\"\nworkload = \"random\"\n[[flows]]\ncount = 2\ncc = \"default\"\n\
         workload = \"long-transfer\"\nobject_bytes = 4096\n",
    );
    let pure = super::super::run_one(&s).unwrap();
    assert!(pure.flows.iter().any(|f| f.retransmissions > 0));
    let mut sim = Sim::assemble(&s, WithTcp::new(&s, 2, false).unwrap(), false).unwrap();
    sim.net_busy = WithTcp::busy;
    sim.run().unwrap();
    assert_eq!(sim.finish(), pure);
}

/// The time a packet waited in its FIFO before its serialisation began.
fn wait(r: &PacketRecord) -> Duration {
    r.serialized.expect("delivered").0 - r.enqueued_at
}

#[test]
fn a_coap_exchange_waits_behind_the_download_in_the_shared_fifo() {
    // One Default CoAP client, 20 exchanges back to back, beside one New Reno download of
    // 102,400 B on the NB-IoT link (2,500-B buffers, no errors). Alone, every exchange takes
    // the same base RTT (no queue). Beside the download, exchange k takes exactly the base
    // RTT plus the FIFO waits of its request (uplink, behind the download's ACKs) and its
    // reply (downlink, behind its data segments): the star's records give both.
    let coap = "[[flows]]\ncount = 1\ncc = \"default\"\nworkload = \"continuous\"\n\
                exchanges = 20\nstart_jitter_s = 0.0\n";
    let download = "[[flows]]\ncount = 1\ncc = \"tcp-newreno\"\n\
                    workload = \"long-transfer\"\nobject_bytes = 102400\nstart_jitter_s = 0.0\n";
    let net = "[network]\npreset = \"nbiot\"\nloss = \"none\"\n";
    let mut alone = Sim::build(&spec(&format!("{net}{coap}"))).unwrap();
    alone.run().unwrap();
    let base = alone.clients[0].metrics.rtts[0];
    assert!(alone.clients[0].metrics.rtts.iter().all(|&r| r == base));

    let s = spec(&format!("{net}{coap}{download}"));
    let mut udp = s.clone();
    udp.config.flows.truncate(1);
    let mut sim = Sim::assemble(&udp, WithTcp::new(&s, 1, false).unwrap(), false).unwrap();
    sim.net_busy = WithTcp::busy;
    sim.net.record_packets(true);
    sim.run().unwrap();
    assert!(sim.net.error.is_none());
    let rtts = sim.clients[0].metrics.rtts.clone();
    let result = sim.finish();
    let end = sim.now;
    let records = super::super::drain_records(&mut sim.net);
    let coap = &result.flows[0];
    assert!(coap.completed);
    // No copy was resent: each exchange is one request and one reply.
    assert_eq!((coap.exchanges, coap.transmissions), (20, 20));
    let coap_packet = |r: &&PacketRecord, reply: bool| {
        tag::flow(r.tag) == 0 && tag::copied(r.tag).is_some() && (r.tag & tag::REPLY != 0) == reply
    };
    let requests: Vec<_> = records.iter().filter(|r| coap_packet(r, false)).collect();
    let replies: Vec<_> = records.iter().filter(|r| coap_packet(r, true)).collect();
    assert_eq!((requests.len(), replies.len()), (20, 20));
    // Rounding: behind a busy serialiser a packet starts at the previous one's end rounded
    // up to the nanosecond (netsim's link/serializer.rs carries the sub-nanosecond
    // remainder), so its wait and its serialisation each move by less than 1 ns.
    let ns_per_byte =
        |rate_bps: i64, bytes: i64| Duration::from_nanos(bytes * 8_000_000_000 / rate_bps);
    let mut behind_download = 0;
    for (k, rtt) in rtts.iter().enumerate() {
        let exchange = |r: &&&PacketRecord| tag::copied(r.tag).map(|c| c.0) == Some(k as u64);
        let up = requests.iter().find(exchange).unwrap();
        let down = replies.iter().find(exchange).unwrap();
        let off = (*rtt - wait(up) - wait(down) - base).as_nanos();
        assert!(off.abs() <= 2, "exchange {k}: {off} ns");
        // FIFO: the reply waits for the backlog it found (the packet in service counted
        // whole), less what of that head packet (at most one 296-B MTU) was already sent;
        // here the backlog is the download's segments.
        let ahead = i64::try_from(down.backlog_bytes).unwrap();
        assert!(
            wait(down) <= ns_per_byte(30_000, ahead) + Duration::from_nanos(1),
            "{k}"
        );
        assert!(
            wait(down) + ns_per_byte(30_000, 296) >= ns_per_byte(30_000, ahead),
            "{k}"
        );
        if ahead >= 296 {
            behind_download += 1;
        }
    }
    // Alone, no reply waits; beside the download 18 of the 20 found at least one of its
    // segments in front, and the longest wait was 2,033.5 B of them (0.54 s of the 0.67 s a
    // full 2,500-B buffer takes to drain at 30 kbit/s).
    assert_eq!(behind_download, 18);
    let longest = replies.iter().map(|r| wait(r)).max().unwrap();
    assert_eq!(longest, Duration::from_nanos(542_266_666));
    assert!(rtts
        .iter()
        .all(|&r| r <= base + ns_per_byte(30_000, 2_500) + ns_per_byte(60_000, 2_500)));
    // The download finished, later than alone, and the link counted both kinds of packets.
    let tcp_alone = tcp::run(&spec(&format!("{net}{download}"))).unwrap();
    let d = &sim.net.tcp.records()[0];
    assert!(d.completed && d.fct_s > tcp_alone.flows[0].fct_s, "{d:?}");
    let network = result.network.unwrap();
    let down = network.down.offered_packets;
    let tcp_down = records
        .iter()
        .filter(|r| r.direction == Direction::Down && tag::flow(r.tag) == 1 && r.sent_at <= end)
        .count() as u64;
    assert_eq!(down, tcp_down + 20);
}

#[test]
fn the_ready_scenario_runs_every_cell() {
    // scenarios/nbiot-competing-tcp.toml at one replication: in every cell the 10 CoAP
    // clients (flows 0-9) and the download (flow 10) complete, numbered group by group.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/nbiot-competing-tcp.toml");
    let runs = Scenario::load(&path).unwrap().expand(Some(1), None);
    assert_eq!(runs.len(), 12);
    for spec in &runs {
        let r = super::super::run_one(spec).unwrap();
        let ccs: Vec<&str> = r.flows.iter().map(|f| f.cc.as_str()).collect();
        assert_eq!(ccs[..10], [spec.config.flows[0].cc(); 10]);
        assert_eq!(ccs[10], spec.config.flows[1].cc());
        assert!(r
            .flows
            .iter()
            .enumerate()
            .all(|(i, f)| f.flow == i as u32 && f.completed));
        assert!(r.flows[10].tcp.is_some() && r.flows[..10].iter().all(|f| f.tcp.is_none()));
    }
}

#[test]
fn a_download_cut_by_the_cap_is_censored_there_and_the_run_waits_for_it() {
    // Two Default CoAP clients of 5 exchanges each, then New Reno and BBR downloads of
    // 102,400 B (about 35 s each alone): the CoAP clients finish within seconds, the run goes
    // on for the downloads and stops at the 20-s cap, where both are censored (never dropped).
    let s = spec(
        "max_sim_time_s = 20\n[network]\npreset = \"nbiot\"\nloss = \"none\"\n\
         [[flows]]\ncount = 2\ncc = \"default\"\nexchanges = 5\n\
         [[flows]]\ncc = \"tcp-newreno\"\nworkload = \"long-transfer\"\nobject_bytes = 102400\n\
         [[flows]]\ncc = \"tcp-bbr\"\nworkload = \"long-transfer\"\nobject_bytes = 102400\n",
    );
    let r = super::run(&s).unwrap();
    assert_eq!(r.flows.len(), 4);
    assert!(r.flows[..2]
        .iter()
        .all(|f| f.completed && f.fct_s < Some(10.0)));
    for (i, cc) in [(2, "tcp-newreno"), (3, "tcp-bbr")] {
        let f = &r.flows[i];
        assert_eq!((f.flow, f.cc.as_str(), f.completed), (i as u32, cc, false));
        assert_eq!(f.unfinished, Some(crate::results::Unfinished::TimeCap));
        // Censored at the cap: from its first request (after its handshake) to 20 s.
        let elapsed = f.elapsed_s.unwrap();
        assert!(elapsed > 18.0 && elapsed < 20.0, "{elapsed}");
        assert!(f.bytes_down > 0);
    }
    // The downlink carried no more than 20 s at 30 kbit/s, plus the 2,500-B backlog the star
    // serialises ahead of the clock (its stages are evaluated eagerly).
    let down = r.network.as_ref().unwrap().down;
    assert!(
        down.sent_bytes <= 20 * 30_000 / 8 + 2_500,
        "{}",
        down.sent_bytes
    );
    // The clock ran to the cap, not to the CoAP clients' end.
    assert!(
        r.sim_time_s > 19.0 && r.sim_time_s <= 20.0,
        "{}",
        r.sim_time_s
    );
}

#[test]
fn a_traced_mixed_run_logs_every_datagram_and_segment_under_its_star_id() {
    // The UDP loop and the wrapper log their packets apart; merged by the star's ids, every
    // packet record's id finds its own packet's flow (UDP tags name the client's flow, TCP
    // tags the download's), and the result is the untraced run's.
    let s = spec(
        "[network]\npreset = \"nbiot\"\nloss = \"medium\"\n\
         [[flows]]\ncount = 3\ncc = \"fasor\"\nexchanges = 10\n\
         [[flows]]\ncc = \"tcp-bbr\"\nworkload = \"long-transfer\"\nobject_bytes = 20480\n",
    );
    let (result, trace) = super::run_traced(&s).unwrap();
    assert_eq!(result, super::run(&s).unwrap());
    assert!(!trace.tcp.is_empty());
    let (mut udp, mut tcp) = (0, 0);
    for r in &trace.records {
        assert_eq!(trace.packets.flow(r.id.0), Some(tag::flow(r.tag)), "{r:?}");
        if tag::flow(r.tag) == 3 {
            tcp += 1;
        } else {
            udp += 1;
        }
    }
    let down = result.network.unwrap().down.offered_packets;
    let up = result.network.unwrap().up.offered_packets;
    assert_eq!(trace.records.len() as u64, down + up);
    assert!(udp >= 60 && tcp > 80, "{udp} {tcp}");
    assert_eq!(trace.packets.flow(down + up), None);
}
