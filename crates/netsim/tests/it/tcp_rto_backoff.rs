//! `rto_backoff_reset`: Linux keeps a backed-off RTO until a fresh valid RTT sample; ns-3's
//! rule ("new-ack") recomputes it from srtt and rttvar on every ACK that advances snd_una.
//!
//! On [`TcpConfig::idealised`] (exact timers, no quick-ACK, bare 40-B SYNs), the defaults
//! before docs/experiments.md §5.3's 2026-12-07 revision: these are exact timelines of one
//! mechanism, which the defaults' timer wheel, quick-ACK and SYN options would move without
//! touching it (each of those has its own tests: `tcp_timer_wheel`, `tcp_quickack`,
//! `tcp_handshake`).

use crate::tcp_util::{nbiot, transfer_observed, Pair};
use coaplab_netsim::tcp::{RtoBackoffReset, TcpConfig};

/// One step of the server's retransmission timer: (time µs, RTO µs, timer deadline µs).
type Step = (i64, i64, Option<i64>);

/// The server's RTO each time it changes, with the deadline the timer is armed for then, over
/// 60 segments on nbiot with the 11th data segment lost, then its fast retransmission and its
/// first RTO retransmission too: two timeouts in a row, then the second RTO retransmission is
/// acknowledged at 9.821997 s (no RTT sample, Karn), and new data gives a fresh sample at
/// 10.615197 s.
fn series(reset: RtoBackoffReset) -> Vec<Step> {
    let (up, mut down) = nbiot();
    down.drops = vec![11, 27, 42];
    let cfg = TcpConfig {
        rto_backoff_reset: reset,
        ..TcpConfig::idealised()
    };
    let mut p = Pair::new(cfg, up, down);
    let mut steps: Vec<Step> = Vec::new();
    transfer_observed(&mut p, 60 * 256, |p| {
        let rto = p.server.rto().as_micros();
        if steps.last().map(|s| s.1) != Some(rto) {
            let deadline = p.server.poll_timeout().map(|t| t.as_micros());
            steps.push((p.now.as_micros(), rto, deadline));
        }
    });
    assert!(p.log.contains(&"9107730 S DATA 2307 12 256".to_string()));
    steps
}

#[test]
fn new_ack_clears_the_backoff_where_linux_keeps_it_until_a_sample() {
    let linux = series(RtoBackoffReset::RttSample);
    let ns3 = series(RtoBackoffReset::NewAck);
    // Identical up to the second timeout: the RTO from the last sample (1.976199 s), doubled at
    // 5.155332 s and again at 9.107730 s.
    let common = [
        (2_701_666, 1_976_199),
        (5_155_332, 3_952_398),
        (9_107_730, 7_904_796),
    ];
    for s in [&linux, &ns3] {
        let i = s.iter().position(|x| x.0 == 2_701_666).expect("sample");
        let got: Vec<(i64, i64)> = s[i..i + 3].iter().map(|x| (x.0, x.1)).collect();
        assert_eq!(got, common);
        // The timer of each timeout is armed for now + the doubled RTO.
        assert_eq!(s[i + 1].2, Some(5_155_332 + 3_952_398));
        assert_eq!(s[i + 2].2, Some(9_107_730 + 7_904_796));
    }
    let i = linux
        .iter()
        .position(|x| x.0 == 9_107_730)
        .expect("2nd RTO");
    // Linux: the ACK of the retransmission at 9.821997 s advances snd_una but gives no sample;
    // the timer is re-armed with the backed-off 7.904796 s, which stays until the fresh
    // sample at 10.615197 s.
    assert_eq!(
        (linux[i + 1].0, linux[i + 1].1),
        (10_615_197, 1_901_128),
        "{linux:?}"
    );
    // ns-3's rule: that same ACK recomputes srtt + rttvar = 1.976199 s (the estimator has not
    // changed since the last sample), and the timer is re-armed with it.
    assert_eq!(
        ns3[i + 1],
        (9_821_997, 1_976_199, Some(9_821_997 + 1_976_199))
    );
    assert_eq!((ns3[i + 2].0, ns3[i + 2].1), (10_615_197, 1_901_128));
}

#[test]
fn linux_rearms_the_timer_with_the_backed_off_rto_on_that_ack() {
    // The deadline set by the 9.821997-s ACK under Linux's rule: observed right after it.
    let (up, mut down) = nbiot();
    down.drops = vec![11, 27, 42];
    let mut p = Pair::new(TcpConfig::idealised(), up, down);
    let mut at_ack = None;
    transfer_observed(&mut p, 60 * 256, |p| {
        if p.now.as_micros() == 9_821_997 && at_ack.is_none() {
            at_ack = Some((
                p.server.rto().as_micros(),
                p.server.poll_timeout().map(|t| t.as_micros()),
            ));
        }
    });
    assert_eq!(at_ack, Some((7_904_796, Some(9_821_997 + 7_904_796))));
}
