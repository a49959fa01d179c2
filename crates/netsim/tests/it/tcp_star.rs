//! TCP model segments carried by netsim's star with their own IP length (`Star::send_ip`).
//!
//! On [`TcpConfig::idealised`] (exact timers, no quick-ACK, bare 40-B SYNs), the defaults
//! before docs/experiments.md §5.3's 2026-12-07 revision: these are exact timelines of one
//! mechanism, which the defaults' timer wheel, quick-ACK and SYN options would move without
//! touching it (each of those has its own tests: `tcp_timer_wheel`, `tcp_quickack`,
//! `tcp_handshake`).

use std::collections::HashMap;

use coaplab_base::time::Instant;
use coaplab_netsim::tcp::{Connection, Segment, TcpConfig, TcpState};
use coaplab_netsim::{client_addr, NetworkConfig, Preset, Star, Topology, SERVER_ADDR};

#[test]
fn a_handshake_over_the_nbiot_star() {
    let mut star = Star::new(&NetworkConfig::preset(Preset::Nbiot), 1).expect("star");
    let mut client = Connection::connect(TcpConfig::idealised()).expect("valid");
    let mut server = Connection::listen(TcpConfig::idealised()).expect("valid");
    let mut segments: HashMap<u64, Segment> = HashMap::new();
    let mut tag = 0;
    let mut now = Instant::ZERO;
    let mut buf = Vec::new();
    let mut arrivals = Vec::new();
    while client.state() != TcpState::Established || server.state() != TcpState::Established {
        for (conn, src, dst) in [
            (&mut client, client_addr(0), SERVER_ADDR),
            (&mut server, SERVER_ADDR, client_addr(0)),
        ] {
            while let Some(seg) = conn.poll_transmit(now) {
                star.send_ip(now, src, dst, &[], seg.ip_len(), tag)
                    .expect("fits the MTU");
                segments.insert(tag, seg);
                tag += 1;
            }
        }
        now = star.poll_at().expect("something in flight");
        while let Some(d) = star.poll_delivery(now, &mut buf) {
            arrivals.push((d.at.as_nanos(), d.ip_len));
            let seg = segments.remove(&d.tag).expect("sent");
            let to = if d.dst == SERVER_ADDR {
                &mut server
            } else {
                &mut client
            };
            to.handle_segment(d.at, seg).expect("accepted");
        }
    }
    // SYN 40 B up: 5.333 ms + 200 ms + 15 ms; SYN-ACK down: 15 ms + 10.667 ms + 400 ms;
    // the same instants as the tests' ideal path (rest-of-path order does not matter here).
    assert_eq!(
        arrivals,
        [(220_333_334, 40), (646_000_001, 40), (866_333_335, 40)]
    );
}
