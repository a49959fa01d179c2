//! The trace-driven link inside the star (docs/link-traces.md): a constant trace is the
//! constant link packet for packet, and a rate change reaches the delivery instants exactly.

use std::sync::Arc;

use coaplab_base::rng::{Random, SeededRandom};
use coaplab_base::time::{Duration, Instant};
use coaplab_netsim::link::trace::{parse, LinkTrace};
use coaplab_netsim::{
    client_addr, Direction, LossModel, NetworkConfig, PacketRecord, Preset, Star, Topology,
    SERVER_ADDR,
};

/// Every record and both directions' counters of a run of random traffic over `config`.
fn run(config: &NetworkConfig) -> (Vec<PacketRecord>, [coaplab_netsim::LinkStats; 2]) {
    let mut star = Star::new(config, 3).unwrap();
    star.record_packets(true);
    let mut rng = SeededRandom::new(11);
    let mut buf = Vec::new();
    let mut now = Instant::ZERO;
    for i in 0..3_000u64 {
        now += Duration::from_micros((rng.uniform01() * 60_000.0) as i64);
        while let Some(t) = star.poll_at().filter(|t| *t <= now) {
            while star.poll_delivery(t, &mut buf).is_some() {}
        }
        let len = 10 + (rng.uniform01() * 250.0) as usize;
        let (src, dst) = if i % 3 == 0 {
            (client_addr(0), SERVER_ADDR)
        } else {
            (SERVER_ADDR, client_addr(0))
        };
        star.send(now, src, dst, &mut vec![0; len], i).unwrap();
    }
    while let Some(t) = star.poll_at() {
        while star.poll_delivery(t, &mut buf).is_some() {}
    }
    let stats = [star.stats(Direction::Down), star.stats(Direction::Up)];
    (star.take_records(), stats)
}

#[test]
fn a_constant_trace_is_the_constant_link_packet_for_packet() {
    let mut plain = NetworkConfig::preset(Preset::Nbiot);
    plain.set_loss(LossModel::profile("medium").unwrap());
    let mut traced = plain.clone();
    for link in [&mut traced.down, &mut traced.up] {
        link.trace = Some(Arc::new(LinkTrace::constant(
            link.rate_bps,
            link.propagation.delay,
        )));
        // Ignored under a trace: set to something else to show it.
        link.rate_bps = 1;
    }
    let (records, stats) = run(&plain);
    assert!(stats[0].overflow_drops > 0 && stats[0].link_error_drops > 0);
    assert_eq!(run(&traced), (records, stats));
}

#[test]
fn the_star_delivers_across_a_rate_change_to_the_nanosecond() {
    let mut config = NetworkConfig::preset(Preset::Nbiot);
    // Uplink at 60 kbit/s until 5 ms, then 7.5 kbit/s (CE1), delay 200 ms throughout.
    let trace = parse("time_ms,rate_bps,delay_ms\n0,60000,200\n5,7500,200\n").unwrap();
    config.up.trace = Some(Arc::new(trace));
    let mut star = Star::new(&config, 1).unwrap();
    // 11 B of CoAP = 39 B IP = 312 bit: 300 bit by 5 ms, the other 12 bit at 7.5 kbit/s take
    // 1.6 ms: serialized at 6.6 ms, + 200 ms + 15 ms rest-of-path.
    star.send(
        Instant::ZERO,
        client_addr(0),
        SERVER_ADDR,
        &mut vec![0; 11],
        1,
    )
    .unwrap();
    let mut buf = Vec::new();
    let t = star.poll_at().unwrap();
    let d = star.poll_delivery(t, &mut buf).unwrap();
    assert_eq!(d.at, Instant::from_micros(221_600));
}

#[test]
fn a_traced_link_refuses_jitter() {
    let mut config = NetworkConfig::preset(Preset::Nbiot);
    config.down.trace = Some(Arc::new(LinkTrace::constant(30_000, Duration::ZERO)));
    config.down.propagation.jitter = Duration::from_millis(1);
    config.down.propagation.jitter_mode = coaplab_netsim::JitterMode::Fifo;
    let e = Star::new(&config, 1).unwrap_err().to_string();
    assert!(e.contains("down.trace"), "{e}");
}

#[test]
fn the_committed_traces_are_the_generators() {
    use coaplab_netsim::link::trace::nbiot::{generate, NbiotTraceParams};
    // scenarios/nbiot-time-varying.toml's traces: seed 1, 600 s, dwell mean 20 s.
    let params = NbiotTraceParams {
        dwell_mean: Duration::from_secs(20),
        ..NbiotTraceParams::default()
    };
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/traces");
    for (name, direction) in [("down", Direction::Down), ("up", Direction::Up)] {
        let path = dir.join(format!("nbiot-ce-seed1-{name}.csv"));
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            parse(&text).unwrap(),
            generate(&params, 1, direction),
            "{name}"
        );
    }
}
