//! `coaplab emulate` with a link trace (docs/link-traces.md): the emulator runs netsim's traced
//! link with wall-clock instants, so its schedule is exactly what a fresh star with the same
//! trace computes from the same read instants, and the rate changes show in it.
//!
//! Needs root and /dev/net/tun; skipped with a printed reason otherwise.

use std::fs::File;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsFd;
use std::sync::Arc;
use std::time::Duration as StdDuration;

use coaplab_base::time::{Duration, Instant};
use coaplab_emu::emulator::netns::Namespace;
use coaplab_emu::emulator::{unavailable, Emulator, EmulatorConfig, CLIENT_ADDR, SERVER_ADDR};
use coaplab_netsim::link::trace::parse;
use coaplab_netsim::{Direction, Fate, NetworkConfig, Preset, Star, Topology};
use rustix::thread::{move_into_link_name_space, LinkNameSpaceType};

/// A UDP socket bound to `bind` inside namespace `ns`.
fn socket_in(ns: &Namespace, bind: SocketAddr) -> UdpSocket {
    let path = ns.path();
    std::thread::spawn(move || {
        let f = File::open(&path).expect("open netns");
        move_into_link_name_space(f.as_fd(), Some(LinkNameSpaceType::Network)).expect("setns");
        UdpSocket::bind(bind).expect("bind")
    })
    .join()
    .unwrap()
}

const PACKETS: usize = 24;
const PAYLOAD: usize = 172; // 200-B IP packets: 26.7 ms at 60 kbit/s, 266.7 ms at 6 kbit/s

#[test]
fn the_emulator_follows_the_trace_exactly() {
    if let Some(why) = unavailable() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let mut network = NetworkConfig::preset(Preset::Nbiot);
    network.set_buffer_bytes(1_000_000);
    // Uplink: 60 kbit/s and 20 ms, a tenth of the rate and 80 ms from 300 ms, back at 900 ms;
    // the trace repeats every 1.2 s.
    let trace = parse("0,60000,20\n300,6000,80\n900,60000,20\n1200,loop\n").unwrap();
    network.up.trace = Some(Arc::new(trace));
    let mut config = EmulatorConfig::new(network.clone());
    config.log_packets = true;
    let emu = Emulator::start(config).expect("start");
    let server = socket_in(
        emu.server_netns(),
        SocketAddr::new(SERVER_ADDR.into(), 9000),
    );
    let client = socket_in(
        emu.client_netns(),
        SocketAddr::new(CLIENT_ADDR.into(), 9001),
    );
    server
        .set_read_timeout(Some(StdDuration::from_secs(20)))
        .unwrap();
    let receiver = std::thread::spawn(move || {
        let mut buf = [0u8; 2048];
        (0..PACKETS)
            .map(|_| server.recv(&mut buf).expect("server recv"))
            .count()
    });
    let dest = SocketAddr::new(SERVER_ADDR.into(), 9000);
    for i in 0..PACKETS {
        client.send_to(&[i as u8; PAYLOAD], dest).unwrap();
        std::thread::sleep(StdDuration::from_millis(50));
    }
    assert_eq!(receiver.join().unwrap(), PACKETS);
    let stats = emu.finish().expect("finish");
    let up: Vec<_> = stats
        .packets
        .iter()
        .filter(|p| p.direction == Direction::Up && p.ip_len == 200)
        .collect();
    assert_eq!(up.len(), PACKETS);
    // The same schedule from a fresh star with the same trace and read instants.
    let mut star = Star::new(&network, 1).unwrap();
    star.record_packets(true);
    for (i, p) in up.iter().enumerate() {
        star.send_ip(
            p.read_at,
            coaplab_netsim::client_addr(0),
            coaplab_netsim::SERVER_ADDR,
            &[],
            p.ip_len,
            i as u64,
        )
        .unwrap();
    }
    let mut buf = Vec::new();
    while star
        .poll_delivery(Instant::from_secs(3600), &mut buf)
        .is_some()
    {}
    let mut replayed = star.take_records();
    replayed.sort_by_key(|r| r.tag);
    let mut slow = 0;
    for (p, again) in up.iter().zip(&replayed) {
        assert_eq!(p.serialized, again.serialized);
        assert!(matches!(p.fate, Fate::Delivered(_)) && p.fate == again.fate);
        let (start, end) = p.serialized.unwrap();
        // 1600 bit take 26,666,667 ns at 60 kbit/s; any longer service met the slow segment.
        if end - start > Duration::from_nanos(26_666_667) {
            slow += 1;
        }
    }
    assert!(slow > 0, "no packet met the 6-kbit/s segment");
}
