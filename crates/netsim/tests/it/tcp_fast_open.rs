//! TCP Fast Open in the TCP model (docs/experiments.md §8e): the request rides in the SYN, the
//! SYN-ACK acknowledges it, the server answers before the handshake's last ACK, and a SYN carries
//! at most MSS − 40 bytes (Linux `tcp_send_syn_data`). Exact timelines over an ideal path
//! (20 ms one way, no serialisation, no loss).
//!
//! On [`TcpConfig::idealised`] (exact timers, no quick-ACK, bare 40-B SYNs), the defaults
//! before docs/experiments.md §5.3's 2026-12-07 revision: these are exact timelines of one
//! mechanism, which the defaults' timer wheel, quick-ACK and SYN options would move without
//! touching it (each of those has its own tests: `tcp_timer_wheel`, `tcp_quickack`,
//! `tcp_handshake`).

use coaplab_base::time::{Duration, Instant};
use coaplab_netsim::tcp::{Connection, Segment, TcpConfig, TcpState};

const ONE_WAY: Duration = Duration::from_millis(20);

/// One log line per segment: `ms side flags seq ack payload ip_len`.
fn line(at: Instant, side: char, s: &Segment) -> String {
    let flags = match (s.syn, s.ack.is_some()) {
        (true, false) => "SYN",
        (true, true) => "SYNACK",
        _ if s.payload.is_empty() => "ACK",
        _ => "DATA",
    };
    let ack = s.ack.map_or("-".to_string(), |a| a.to_string());
    format!(
        "{} {side} {flags} {} {ack} {} {}",
        at.as_nanos() / 1_000_000,
        s.seq,
        s.payload.len(),
        s.ip_len()
    )
}

/// Runs until the client has read `response_len` bytes; the server answers with
/// `response_len` bytes once it has read `request_len`. Returns the log.
fn run(
    mut client: Connection,
    mut server: Connection,
    request: &[u8],
    response_len: usize,
) -> Vec<String> {
    let mut log = Vec::new();
    let mut now = Instant::ZERO;
    client.write(request).expect("open");
    let mut in_flight: Vec<(Instant, bool, Segment)> = Vec::new();
    let (mut server_read, mut client_read, mut answered) = (0, 0, false);
    let mut buf = [0u8; 4096];
    for _ in 0..1000 {
        while let Some(s) = client.poll_transmit(now) {
            log.push(line(now, 'C', &s));
            in_flight.push((now + ONE_WAY, true, s));
        }
        while let Some(s) = server.poll_transmit(now) {
            log.push(line(now, 'S', &s));
            in_flight.push((now + ONE_WAY, false, s));
        }
        if client_read >= response_len {
            return log;
        }
        // The next event: an arrival or a timer.
        let next_arrival = in_flight.iter().map(|(t, ..)| *t).min();
        let next = [next_arrival, client.poll_timeout(), server.poll_timeout()]
            .into_iter()
            .flatten()
            .min()
            .expect("something pending");
        now = next;
        let (due, rest): (Vec<_>, Vec<_>) = in_flight.into_iter().partition(|(t, ..)| *t <= now);
        in_flight = rest;
        for (_, to_server, s) in due {
            let dst = if to_server { &mut server } else { &mut client };
            dst.handle_segment(now, s).expect("valid segment");
        }
        client.handle_timeout(now);
        server.handle_timeout(now);
        server_read += server.read(&mut buf);
        client_read += client.read(&mut buf);
        if !answered && server_read >= request.len() {
            answered = true;
            server.write(&vec![0x5a; response_len]).expect("open");
        }
    }
    panic!("no completion: {log:?}");
}

fn zigbee_tcp() -> TcpConfig {
    TcpConfig {
        mtu_bytes: 128,
        ..TcpConfig::idealised()
    }
}

/// IoT-HTTP/1.1's 44-B request for `/data/100` in the SYN (40 + 12 option + 44 = 96 B), the
/// SYN-ACK acknowledging it (ack 45), the 140-B response right behind the SYN-ACK: one
/// round trip to the last byte, 3 packets before the client's ACKs.
#[test]
fn request_rides_in_the_syn_and_the_answer_follows_the_syn_ack() {
    let client = Connection::connect_fast_open(zigbee_tcp()).expect("config");
    let server = Connection::listen_fast_open(zigbee_tcp()).expect("config");
    let request = b"GET /data/100 HTTP/1.1\r\nhost: 198.18.0.2\r\n\r\n";
    let log = run(client, server, request, 140);
    assert_eq!(
        log,
        [
            "0 C SYN 0 - 44 96",
            "20 S SYNACK 0 45 0 40",
            "20 S DATA 1 45 88 128",
            "20 S DATA 89 45 52 92",
            "40 C ACK 45 141 0 40",
        ]
    );
}

/// Without Fast Open the same exchange takes the handshake first: 2 round trips.
#[test]
fn without_fast_open_the_request_waits_for_the_handshake() {
    let client = Connection::connect(zigbee_tcp()).expect("config");
    let server = Connection::listen(zigbee_tcp()).expect("config");
    let request = b"GET /data/100 HTTP/1.1\r\nhost: 198.18.0.2\r\n\r\n";
    let log = run(client, server, request, 140);
    assert_eq!(
        log,
        [
            "0 C SYN 0 - 0 40",
            "20 S SYNACK 0 1 0 40",
            "40 C DATA 1 1 44 84",
            "60 S DATA 1 45 88 128",
            "60 S DATA 89 45 52 92",
            "80 C ACK 45 141 0 40",
        ]
    );
}

/// At MTU 128 a SYN carries at most 48 B (MSS 88 − 40): h2c's 94-B opening for
/// `/data/100` (IoT) sends the preface and 24 B of SETTINGS in the SYN, the rest after the
/// SYN-ACK, as the emulator's capture shows.
#[test]
fn syn_data_is_limited_to_mss_less_forty() {
    let mut client = Connection::connect_fast_open(zigbee_tcp()).expect("config");
    client.write(&[1; 94]).expect("open");
    let syn = client.poll_transmit(Instant::ZERO).expect("SYN");
    assert!(syn.syn);
    assert_eq!(syn.payload.len(), 48);
    assert_eq!(syn.ip_len(), 40 + 12 + 48);
    assert_eq!(client.state(), TcpState::SynSent);
    // A retransmitted SYN carries the cookie but no data.
    let rto = client.poll_timeout().expect("SYN timer");
    client.handle_timeout(rto);
    let again = client.poll_transmit(rto).expect("SYN again");
    assert!(again.syn && again.payload.is_empty());
    assert_eq!(again.ip_len(), 52);
}

/// The warm-up connection of docs/experiments.md §8e: `TCP_FASTOPEN_CONNECT` without a cookie. The
/// SYN asks for one (4-B option: kind 34, length 2, two NOPs) and carries no data, the Fast Open
/// server's SYN-ACK hands one out (12 B), the request waits for the handshake as without
/// Fast Open; a server without `TCP_FASTOPEN` answers without a cookie.
#[test]
fn a_syn_without_a_cookie_asks_for_one() {
    let request = b"GET /data/100 HTTP/1.1\r\nhost: 198.18.0.2\r\n\r\n";
    let client = Connection::connect_fast_open_request(zigbee_tcp()).expect("config");
    let server = Connection::listen_fast_open(zigbee_tcp()).expect("config");
    let log = run(client, server, request, 140);
    assert_eq!(
        log,
        [
            "0 C SYN 0 - 0 44",
            "20 S SYNACK 0 1 0 52",
            "40 C DATA 1 1 44 84",
            "60 S DATA 1 45 88 128",
            "60 S DATA 89 45 52 92",
            "80 C ACK 45 141 0 40",
        ]
    );
    assert_eq!(cookie_request(zigbee_tcp(), true), (44, 52, true));
    assert_eq!(cookie_request(zigbee_tcp(), false), (44, 40, false));
}

/// A cookie-requesting client's SYN to a server with or without Fast Open, and the SYN-ACK
/// back: (SYN IP length, SYN-ACK IP length, whether the client took a cookie from it).
fn cookie_request(cfg: TcpConfig, fast_open_server: bool) -> (u32, u32, bool) {
    let request = b"GET /data/100 HTTP/1.1\r\nhost: 198.18.0.2\r\n\r\n";
    let mut client = Connection::connect_fast_open_request(cfg.clone()).expect("config");
    let mut server = if fast_open_server {
        Connection::listen_fast_open(cfg)
    } else {
        Connection::listen(cfg)
    }
    .expect("config");
    client.write(request).expect("open");
    let syn = client.poll_transmit(Instant::ZERO).expect("SYN");
    assert!(syn.payload.is_empty());
    let syn_len = syn.ip_len();
    server.handle_segment(Instant::ZERO, syn).expect("SYN");
    let syn_ack = server.poll_transmit(Instant::ZERO).expect("SYN-ACK");
    let syn_ack_len = syn_ack.ip_len();
    assert!(!client.fast_open_cookie_received());
    client
        .handle_segment(Instant::ZERO, syn_ack)
        .expect("SYN-ACK");
    assert_eq!(client.state(), TcpState::Established);
    (syn_len, syn_ack_len, client.fast_open_cookie_received())
}

/// With the defaults' SYN options (`syn_options_bytes = 8`, MSS and window scale) the Fast
/// Open options ride on top of them: the cookie request is 48 + 4 B, the SYN-ACK that hands
/// one out 48 + 12 B, one that does not 48 B — and only the former counts as a cookie; a
/// Fast Open SYN with data is 48 + 12 B + data, and the server takes the data.
#[test]
fn with_the_default_syn_options_the_cookie_is_told_apart() {
    let cfg = || TcpConfig {
        mtu_bytes: 128,
        ..TcpConfig::default()
    };
    let request = b"GET /data/100 HTTP/1.1\r\nhost: 198.18.0.2\r\n\r\n";
    assert_eq!(cookie_request(cfg(), true), (40 + 8 + 4, 40 + 8 + 12, true));
    assert_eq!(cookie_request(cfg(), false), (40 + 8 + 4, 40 + 8, false));
    let mut client = Connection::connect_fast_open(cfg()).expect("config");
    let mut server = Connection::listen_fast_open(cfg()).expect("config");
    client.write(request).expect("open");
    let syn = client.poll_transmit(Instant::ZERO).expect("SYN");
    assert_eq!(syn.ip_len(), 40 + 8 + 12 + 44);
    server.handle_segment(Instant::ZERO, syn).expect("SYN");
    let syn_ack = server.poll_transmit(Instant::ZERO).expect("SYN-ACK");
    assert_eq!(syn_ack.ack, Some(45), "the SYN's data acknowledged");
}
