//! RFC 6582 window inflation, slow start after idle, and refused segments.
//!
//! On [`TcpConfig::idealised`] (exact timers, no quick-ACK, bare 40-B SYNs), the defaults
//! before docs/experiments.md §5.3's 2026-12-07 revision: these are exact timelines of one
//! mechanism, which the defaults' timer wheel, quick-ACK and SYN options would move without
//! touching it (each of those has its own tests: `tcp_timer_wheel`, `tcp_quickack`,
//! `tcp_handshake`).

use crate::tcp_util::{nbiot, transfer, Pair};
use coaplab_base::time::{Duration, Instant};
use coaplab_netsim::tcp::{Connection, RecoveryMode, Segment, SegmentError, TcpConfig, TcpState};

#[test]
fn rfc6582_inflation_recovers_one_loss() {
    let (up, mut down) = nbiot();
    down.drops = vec![11];
    let cfg = TcpConfig {
        recovery: RecoveryMode::Rfc6582,
        ..TcpConfig::idealised()
    };
    let mut p = Pair::new(cfg, up, down);
    let (_, done_at) = transfer(&mut p, 30 * 256);
    // RFC 6582 §3.2: ssthresh = FlightSize 16 / 2 = 8, cwnd = 8 + 3, +1 per further dupack;
    // new data once packets_out (16) < cwnd; the full ACK (6403 = recover + 1) deflates to
    // ssthresh at once (no Reno hold at high_seq in this mode).
    let entry = p.server_trace_index("Recovery");
    let cwnds: Vec<&str> = p.server_trace[entry..]
        .iter()
        .map(|l| l.split(' ').nth(2).expect("cwnd"))
        .collect();
    assert_eq!(
        cwnds,
        [
            "cwnd=11", "cwnd=12", "cwnd=13", "cwnd=14", "cwnd=15", "cwnd=16", "cwnd=17", "cwnd=18",
            "cwnd=19", "cwnd=20", "cwnd=21", "cwnd=22", "cwnd=23", "cwnd=8", "cwnd=8", "cwnd=8",
            "cwnd=8",
        ]
    );
    assert_eq!(
        p.server_trace[entry + 13],
        "4205266 ack=6403 cwnd=8 ssthresh=8 pipe=5 ca=Open"
    );
    let sends = p.server_sends(3_000_000..4_000_000);
    assert_eq!(
        sends,
        [
            "3100200 S DATA 6147 12 256",
            "3179133 S DATA 2307 12 256",
            "3652733 S DATA 6403 12 256",
            "3731666 S DATA 6659 12 256",
            "3810600 S DATA 6915 12 256",
            "3889533 S DATA 7171 12 256",
            "3968466 S DATA 7427 12 256",
        ]
    );
    assert_eq!(done_at.as_nanos(), 4_462_400_005);
}

#[test]
fn slow_start_restarts_after_idle_longer_than_the_rto() {
    let (up, down) = nbiot();
    let mut p = Pair::new(TcpConfig::idealised(), up, down);
    transfer(&mut p, 30 * 256);
    let before = p.server.cwnd();
    // Slow start grows while cwnd < 2 × the largest flight (`tcp_is_cwnd_limited`): 34.
    assert_eq!(before, 34);
    p.now += Duration::from_secs(10);
    let restart_at = p.now.as_micros();
    p.server.write(&[7; 8 * 256]).expect("open");
    let mut got = 0;
    let mut buf = [0u8; 4096];
    p.run(|p| {
        got += p.client.read(&mut buf);
        got == 8 * 256
    });
    // 10 s idle > RTO: cwnd restarts at min(iw, cwnd) = 4 (halved per idle RTO, floored).
    let burst = p
        .log
        .iter()
        .filter(|l| l.starts_with(&format!("{restart_at} S DATA")))
        .count();
    assert_eq!(burst, 4);
}

#[test]
fn bad_segments_are_refused_with_typed_errors() {
    let mut listener = Connection::listen(TcpConfig::idealised()).expect("valid");
    let data = Segment {
        seq: 1,
        ack: Some(1),
        syn: false,
        fin: false,
        payload: vec![1, 2, 3],
        options_bytes: 0,
    };
    assert_eq!(
        listener.handle_segment(Instant::ZERO, data.clone()),
        Err(SegmentError::Unexpected(TcpState::Listen))
    );
    let mut client = Connection::connect(TcpConfig::idealised()).expect("valid");
    let syn = client.poll_transmit(Instant::ZERO).expect("SYN");
    let bad_synack = Segment {
        seq: 0,
        ack: Some(5),
        syn: true,
        fin: false,
        payload: Vec::new(),
        options_bytes: 0,
    };
    assert_eq!(
        client.handle_segment(Instant::ZERO, bad_synack),
        Err(SegmentError::Unexpected(TcpState::SynSent))
    );
    listener.handle_segment(Instant::ZERO, syn).expect("SYN");
    let synack = listener.poll_transmit(Instant::ZERO).expect("SYN-ACK");
    client
        .handle_segment(Instant::ZERO, synack)
        .expect("SYN-ACK");
    let beyond = Segment {
        ack: Some(99),
        ..data
    };
    assert_eq!(
        client.handle_segment(Instant::ZERO, beyond),
        Err(SegmentError::AckBeyondSent {
            ack: 99,
            snd_nxt: 1
        })
    );
    assert_eq!(client.state(), TcpState::Established);
}
