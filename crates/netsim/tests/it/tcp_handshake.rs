//! Handshake timelines: clean, lost SYN (retry at 2 s), lost SYN-ACK, and the Linux rules on
//! the initial cwnd and RTO after SYN retransmissions.
//!
//! The exact timelines run on [`TcpConfig::idealised`] (exact timers, bare 40-B SYNs): they pin
//! the handshake's arithmetic on round numbers; the defaults (48-B SYNs, timers on the HZ-250
//! wheel) are the last two tests.

use crate::tcp_util::{nbiot, Pair};
use coaplab_base::time::{Duration, Instant};
use coaplab_netsim::tcp::{TcpConfig, TcpState};

fn established(p: &mut Pair) -> bool {
    p.client.state() == TcpState::Established && p.server.state() == TcpState::Established
}

/// The handshake with `cfg` over nbiot, the client's uplink packets `drops` dropped, run
/// until both ends are established.
fn handshake(cfg: TcpConfig, drops: &[usize]) -> Pair {
    let (mut up, down) = nbiot();
    up.drops = drops.to_vec();
    let mut p = Pair::new(cfg, up, down);
    p.run(established);
    p
}

#[test]
fn clean_handshake_samples_the_rtt_on_both_sides() {
    let (up, down) = nbiot();
    let mut p = Pair::new(TcpConfig::idealised(), up, down);
    p.run(established);
    // SYN 40 B at 60 kbit/s = 5.333 ms + 215 ms; SYN-ACK 40 B at 30 kbit/s = 10.667 ms + 415.
    assert_eq!(
        p.log,
        [
            "0 C SYN 0 - 0",
            "220333 S SYNACK 0 1 0",
            "646000 C ACK 1 1 0",
        ]
    );
    assert_eq!(p.now, Instant::from_nanos(866_333_335));
    // Client sample 646 ms: RTO = 646 + max(1292, 200) = 1938 ms; cwnd = iw.
    assert_eq!(p.client.rto(), Duration::from_millis(1938));
    assert_eq!(p.client.cwnd(), 4);
    // Server sample 646 ms too (SYN-ACK sent at 220.333 ms, ACK in at 866.333 ms).
    assert_eq!(p.server.rto(), Duration::from_millis(1938));
    assert_eq!(p.server.cwnd(), 4);
}

#[test]
fn lost_syn_is_retried_at_two_seconds_and_rto_falls_back_to_three() {
    let p = handshake(TcpConfig::idealised(), &[0]);
    assert_eq!(
        p.log,
        [
            "0 C SYN 0 - 0 DROP",
            "2000000 C SYN 0 - 0",
            "2220333 S SYNACK 0 1 0",
            "2646000 C ACK 1 1 0",
        ]
    );
    // Karn: the SYN was retransmitted, no client sample → 3 s; one retransmission keeps iw.
    assert_eq!(p.client.rto(), Duration::from_secs(3));
    assert!(p.client.rtt().srtt().is_none());
    assert_eq!(p.client.cwnd(), 4);
    assert_eq!(p.client.stats().syn_retransmissions, 1);
    // The server's SYN-ACK was sent once: a valid sample of 646 ms.
    assert_eq!(p.server.rto(), Duration::from_millis(1938));
}

#[test]
fn two_lost_syns_back_off_exponentially_and_start_with_cwnd_one() {
    let p = handshake(TcpConfig::idealised(), &[0, 1]);
    assert_eq!(
        p.log[0..3],
        [
            "0 C SYN 0 - 0 DROP",
            "2000000 C SYN 0 - 0 DROP",
            "6000000 C SYN 0 - 0"
        ]
    );
    assert_eq!(p.client.cwnd(), 1);
    assert_eq!(p.client.stats().rto_count, 2);
}

#[test]
fn lost_synack_is_retransmitted_by_the_server_timer_and_the_syn_retry() {
    let (up, mut down) = nbiot();
    down.drops = vec![0];
    let mut p = Pair::new(TcpConfig::idealised(), up, down);
    p.run(established);
    // The client's SYN retry (2 s) reaches the server at 2.220333 s, the very instant its own
    // SYN-ACK timer (2 s after 220.333 ms) fires: one SYN-ACK for each; the client ACKs the
    // first and answers the second, old one, with a duplicate ACK.
    assert_eq!(
        p.log,
        [
            "0 C SYN 0 - 0",
            "220333 S SYNACK 0 1 0 DROP",
            "2000000 C SYN 0 - 0",
            "2220333 S SYNACK 0 1 0",
            "2220333 S SYNACK 0 1 0",
            "2646000 C ACK 1 1 0",
            "2656666 C ACK 1 1 0",
        ]
    );
    assert_eq!(p.server.cwnd(), 1, "two SYN-ACK retransmissions");
    assert_eq!(p.server.rto(), Duration::from_secs(3));
}

#[test]
fn syn_retries_are_given_up_after_the_budget() {
    let (mut up, down) = nbiot();
    up.drops = (0..10).collect();
    let cfg = TcpConfig {
        syn_retries: 3,
        ..TcpConfig::idealised()
    };
    let mut p = Pair::new(cfg, up, down);
    p.run(|p| p.client.state() == TcpState::Failed);
    // SYNs at 0, 2, 6, 14 s; given up at 30 s.
    assert_eq!(p.log.len(), 4);
    assert_eq!(p.log[3], "14000000 C SYN 0 - 0 DROP");
    assert_eq!(p.now, Instant::from_secs(30));
}

#[test]
fn syn_options_lengthen_syn_and_synack_only() {
    // `syn_options_bytes = 8` (Linux with SACK and timestamps off: MSS 4 + NOP + window scale
    // 3): SYN and SYN-ACK are 48 B. SYN at 60 kbit/s = 6.4 ms + 215 ms; SYN-ACK at 30 kbit/s
    // = 12.8 ms + 415 ms; the client's ACK stays 40 B (5.333 ms + 215 ms).
    // The default since docs/experiments.md §5.3's 2026-12-07 revision.
    let (up, down) = nbiot();
    assert_eq!(TcpConfig::default().syn_options_bytes, 8);
    let mut p = Pair::new(TcpConfig::default(), up, down);
    p.run(established);
    assert_eq!(
        p.log,
        [
            "0 C SYN 0 - 0",
            "221400 S SYNACK 0 1 0",
            "649200 C ACK 1 1 0",
        ]
    );
    assert_eq!(p.now, Instant::from_nanos(869_533_334));
    // Client sample 649.2 ms (RTO 649.2 + 2 × 649.2); server sample 869.533 − 221.4 =
    // 648.133 ms: both above the bare handshake's 646 ms, so a 42-B first data segment
    // (646.5 ms) is a new min_rtt for BBR (`bbr_update_min_rtt`), as in Linux.
    assert_eq!(p.client.rtt().srtt(), Some(Duration::from_micros(649_200)));
    assert_eq!(p.client.rto(), Duration::from_micros(1_947_600));
    assert_eq!(p.server.rtt().srtt(), Some(Duration::from_micros(648_133)));
}

#[test]
fn with_the_defaults_a_lost_syn_is_retried_at_its_wheel_bucket() {
    // Defaults: 48-B SYN / SYN-ACK, timers on the HZ-250 wheel. The SYN timer armed at 0 for
    // 2 s is 500 jiffies, level 1 (63..504, 8-jiffy buckets): it fires at jiffy 504 = 2.016 s.
    // The retry arrives 6.4 + 215 ms later, the SYN-ACK 12.8 + 415 ms after that.
    let p = handshake(TcpConfig::default(), &[0]);
    assert_eq!(
        p.log,
        [
            "0 C SYN 0 - 0 DROP",
            "2016000 C SYN 0 - 0",
            "2237400 S SYNACK 0 1 0",
            "2665200 C ACK 1 1 0",
        ]
    );
    // The Linux rules of docs/experiments.md §5.3 hold on the defaults: no valid client sample →
    // RTO 3 s, one retransmission keeps iw; the server's SYN-ACK was sent once, a sample of
    // 2.885533 − 2.2374 = 648.133 ms.
    assert_eq!(p.client.rto(), Duration::from_secs(3));
    assert_eq!(p.client.cwnd(), 4);
    assert_eq!(p.server.rtt().srtt(), Some(Duration::from_micros(648_133)));
}

#[test]
fn with_the_defaults_two_lost_syns_start_with_cwnd_one() {
    // The second SYN timer, armed at 2.016 s (jiffy 504) for 4 s (1000 jiffies, level 2,
    // 64-jiffy buckets): expires at 1504, fires at jiffy 1536 = 6.144 s.
    let p = handshake(TcpConfig::default(), &[0, 1]);
    assert_eq!(
        p.log[0..3],
        [
            "0 C SYN 0 - 0 DROP",
            "2016000 C SYN 0 - 0 DROP",
            "6144000 C SYN 0 - 0"
        ]
    );
    assert_eq!(p.client.cwnd(), 1);
    assert_eq!(p.client.rto(), Duration::from_secs(3));
}
