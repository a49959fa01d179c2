//! Loss recovery timelines: fast retransmit with PRR, RTO with Karn, the delayed-ACK timer.
//!
//! On [`TcpConfig::idealised`] (exact timers, no quick-ACK, bare SYNs) unless stated: the
//! recovery arithmetic is pinned on exact instants; the defaults' timer wheel and quick-ACK
//! change the instants, not the rules (the delayed-ACK timer on the wheel: below).

use crate::tcp_util::{nbiot, transfer, Pair};
use coaplab_netsim::tcp::TcpConfig;

#[test]
fn one_lost_segment_is_recovered_by_fast_retransmit_with_prr() {
    let (up, mut down) = nbiot();
    // Downlink packets: 0 SYN-ACK, 1 server CSM, 2.. response segments; lose the 10th segment.
    down.drops = vec![11];
    let mut p = Pair::new(TcpConfig::idealised(), up, down);
    let (get_at, done_at) = transfer(&mut p, 30 * 256);
    // Second dupack (Disorder): sacked_out 2 leaves pipe 13 < cwnd 14, new data goes out.
    // Third dupack: ssthresh = 14 / 2 = 7, PRR sndcnt = ceil(7 × 1 / 14) − 0 = 1, cwnd =
    // pipe 12 + 1 and the head is retransmitted; then one segment per two delivered (7/14)
    // until pipe reaches ssthresh, then PRR-CRB. The ACK of high_seq (6403) keeps Reno in
    // Recovery (PRR-SSRB: cwnd 5 + 2); the next ACK above it ends it with cwnd = ssthresh.
    let first = p.server_trace_index("Disorder");
    assert_eq!(
        p.server_trace[first..],
        [
            "2859533 ack=2307 cwnd=14 ssthresh=inf pipe=13 ca=Disorder",
            "3100200 ack=2307 cwnd=14 ssthresh=inf pipe=13 ca=Disorder",
            "3179133 ack=2307 cwnd=13 ssthresh=7 pipe=12 ca=Recovery",
            "3258066 ack=2307 cwnd=12 ssthresh=7 pipe=12 ca=Recovery",
            "3337000 ack=2307 cwnd=12 ssthresh=7 pipe=11 ca=Recovery",
            "3415933 ack=2307 cwnd=11 ssthresh=7 pipe=11 ca=Recovery",
            "3494866 ack=2307 cwnd=11 ssthresh=7 pipe=10 ca=Recovery",
            "3573800 ack=2307 cwnd=10 ssthresh=7 pipe=10 ca=Recovery",
            "3652733 ack=2307 cwnd=10 ssthresh=7 pipe=9 ca=Recovery",
            "3731666 ack=2307 cwnd=9 ssthresh=7 pipe=9 ca=Recovery",
            "3810600 ack=2307 cwnd=9 ssthresh=7 pipe=8 ca=Recovery",
            "3889533 ack=2307 cwnd=8 ssthresh=7 pipe=8 ca=Recovery",
            "3968466 ack=2307 cwnd=7 ssthresh=7 pipe=7 ca=Recovery",
            "4047400 ack=2307 cwnd=7 ssthresh=7 pipe=6 ca=Recovery",
            "4126333 ack=2307 cwnd=7 ssthresh=7 pipe=6 ca=Recovery",
            "4205266 ack=6403 cwnd=7 ssthresh=7 pipe=5 ca=Recovery",
            "4363133 ack=6915 cwnd=7 ssthresh=7 pipe=3 ca=Open",
            "4524866 ack=7427 cwnd=7 ssthresh=7 pipe=1 ca=Open",
            "4961666 ack=7683 cwnd=7 ssthresh=7 pipe=0 ca=Open",
        ]
    );
    let server_sends = p.server_sends(3_000_000..);
    assert_eq!(
        server_sends,
        [
            "3100200 S DATA 6147 12 256",
            "3179133 S DATA 2307 12 256",
            "3337000 S DATA 6403 12 256",
            "3494866 S DATA 6659 12 256",
            "3652733 S DATA 6915 12 256",
            "3810600 S DATA 7171 12 256",
            "4047400 S DATA 7427 12 256",
        ]
    );
    assert_eq!(get_at.as_nanos(), 646_000_001);
    assert_eq!(done_at.as_nanos(), 4_541_333_339);
    assert_eq!(p.server_recoveries(), (1, 1, 0));
}

#[test]
fn a_lost_retransmission_is_recovered_by_rto_with_karn() {
    let (up, mut down) = nbiot();
    // As above, and the fast retransmission (downlink packet 27) is lost too.
    down.drops = vec![11, 27];
    let mut p = Pair::new(TcpConfig::idealised(), up, down);
    let (_, done_at) = transfer(&mut p, 30 * 256);
    // The fast retransmission at 3.179133 s re-armed the RTO (1.976199 s); PRR then runs
    // the window down as dupacks drain the pipe, and the timer fires: Loss, cwnd 1, ssthresh
    // kept (the RTO came during recovery), RTO doubled.
    assert!(p
        .log
        .contains(&"3179133 S DATA 2307 12 256 DROP".to_string()));
    let t = p.server_trace_index("timeout");
    assert_eq!(
        p.server_trace[t - 1..],
        [
            "4761666 ack=2307 cwnd=2 ssthresh=7 pipe=1 ca=Recovery",
            "5155332 timeout cwnd=1 ssthresh=7 pipe=0 ca=Loss",
            // One cumulative ACK of 22 segments: slow start to ssthresh 7, the other 15 in
            // congestion avoidance (+2, cwnd_cnt 1). snd_una = high_seq: Reno holds Loss.
            "5869599 ack=7683 cwnd=9 ssthresh=7 pipe=0 ca=Loss",
        ]
    );
    assert_eq!(
        p.log[p.log.len() - 2..],
        ["5155332 S DATA 2307 12 256", "5649265 C ACK 12 7683 0"]
    );
    // Karn: the ACK covers a retransmitted segment, no sample; the backed-off RTO stays.
    assert_eq!(p.server.rto().as_micros(), 3_952_398);
    assert_eq!(done_at.as_nanos(), 5_649_265_672);
    assert_eq!(p.server_recoveries(), (2, 1, 1));
    // New, never-retransmitted data gives a fresh sample, and the RTO is recomputed.
    p.server.write(&[9; 256]).expect("open");
    let mut buf = [0u8; 512];
    p.run(|p| p.client.read(&mut buf) == 256);
    p.run(|p| p.server.all_acked());
    assert_eq!(p.server.rto().as_micros(), 1_916_261);
    assert_eq!(p.server.ca_state(), coaplab_netsim::tcp::CaState::Open);
}

#[test]
fn delayed_ack_timer_fires_exactly_200_ms_after_the_first_unacked_segment() {
    let (up, down) = nbiot();
    let mut p = Pair::new(TcpConfig::idealised(), up, down);
    transfer(&mut p, 100);
    let client_acks: Vec<&str> = p
        .log
        .iter()
        .filter(|l| l.contains(" C ACK"))
        .map(String::as_str)
        .collect();
    // Server CSM (2 B) arrives at 1.292533 s, the 100-B response at 1.330800 s: 102 B, less
    // than one MSS, so the ACK waits for the timer armed at the first arrival.
    assert_eq!(
        client_acks,
        ["646000 C ACK 1 1 0", "1492533 C ACK 12 103 0"]
    );
    assert_eq!(p.client_rx[0].0.as_micros(), 1_292_533);
    assert_eq!(p.client_rx[1].0.as_micros(), 1_330_800);
}

#[test]
fn two_losses_in_one_window_partial_ack_retransmits_the_next_hole() {
    let (up, mut down) = nbiot();
    down.drops = vec![11, 13];
    let mut p = Pair::new(TcpConfig::idealised(), up, down);
    let (_, done_at) = transfer(&mut p, 30 * 256);
    let sends = p.server_sends(3_000_000..);
    // Fast retransmit of 2307; the ACK for it is partial (2819 < high_seq 6403): RFC 6582
    // retransmits the next hole at once and recovery continues.
    assert_eq!(
        sends,
        [
            "3179133 S DATA 6147 12 256",
            "3258066 S DATA 2307 12 256",
            "3415933 S DATA 6403 12 256",
            "3573800 S DATA 6659 12 256",
            "3731666 S DATA 6915 12 256",
            "3889533 S DATA 7171 12 256",
            "4126333 S DATA 7427 12 256",
            "4205266 S DATA 2819 12 256",
        ]
    );
    let partial = p.server_trace_index("ack=2819");
    assert_eq!(
        p.server_trace[partial..],
        [
            // Partial ACK of retransmitted data: PRR-SSRB, cwnd = pipe 5 + min(2, …) = 7.
            "4205266 ack=2819 cwnd=7 ssthresh=7 pipe=5 ca=Recovery",
            "4284200 ack=2819 cwnd=6 ssthresh=7 pipe=5 ca=Recovery",
            "4363133 ack=2819 cwnd=5 ssthresh=7 pipe=4 ca=Recovery",
            "4445933 ack=2819 cwnd=4 ssthresh=7 pipe=3 ca=Recovery",
            "4603800 ack=2819 cwnd=3 ssthresh=7 pipe=2 ca=Recovery",
            "4840600 ack=2819 cwnd=2 ssthresh=7 pipe=1 ca=Recovery",
            // Above high_seq: recovery ends with cwnd = ssthresh.
            "4919533 ack=7683 cwnd=7 ssthresh=7 pipe=0 ca=Open",
        ]
    );
    assert_eq!(done_at.as_nanos(), 4_699_200_005);
    assert_eq!(p.server_recoveries(), (2, 1, 0));
}
