//! BBR's state machine driven hook by hook with exact inputs.

use coaplab_base::rng::SeededRandom;
use coaplab_base::time::Instant;

use super::*;
use crate::tcp::rate::RateSample;

const MSS: u32 = 256;

fn ms(t: i64) -> Instant {
    Instant::from_millis(t)
}

/// A connection right after a handshake with a 600-ms RTT, cwnd 4.
fn tp(now: Instant, delivered: u64, in_flight: u32, cwnd: u32, ca: CaState) -> Tp {
    Tp {
        now,
        delivered,
        delivered_at: now,
        lost: 0,
        in_flight,
        ca,
        wstamp: now,
        srtt_us: Some(600_000),
        cwnd,
    }
}

fn bbr(seed: u64) -> Bbr {
    let t = tp(ms(0), 1, 0, 4, CaState::Open);
    Bbr::init(
        BbrConfig::default(),
        MSS,
        SeededRandom::new(seed),
        &t,
        Some(600_000),
    )
}

/// A valid rate sample: `delivered` segments over `interval_us`, the sampled segment sent
/// when `prior_delivered` had been delivered; `acked` newly delivered.
fn sample(prior_delivered: u64, delivered: i64, interval_us: i64, acked: u32) -> RateSample {
    let mut rs = RateSample::new(0);
    rs.prior_delivered = prior_delivered;
    rs.prior_at = Some(ms(0));
    rs.delivered = delivered;
    rs.interval_us = interval_us;
    rs.acked_sacked = acked;
    rs
}

#[test]
fn constants_are_the_kernels_integers() {
    let c = BbrConfig::default();
    assert_eq!((c.high_gain_256ths, c.drain_gain_256ths), (739, 88));
    assert_eq!(
        c.pacing_gain_cycle_256ths,
        [320, 192, 256, 256, 256, 256, 256, 256]
    );
    assert_eq!((c.bw_window_rounds, c.full_bw_thresh_256ths), (10, 320));
}

#[test]
fn initial_pacing_rate_is_high_gain_times_cwnd_over_srtt() {
    // 4 segments / 600 ms = 111 seg/µs << 24 (truncated); × 256 B × 739/256 × 0.99 = 4,840 B/s.
    let b = bbr(0);
    assert_eq!(b.pacing_rate_bytes_per_s(), 4_840);
    // BDP at 12.5 seg/s and 600 ms = 7.5 → 8 segments; target cwnd at gain 2 = 15 + 3 = 18.
    let bw = 12 * BW_UNIT / 1_000_000 + (BW_UNIT / 2_000_000);
    assert_eq!(b.bdp(bw, BBR_UNIT), 8);
    assert_eq!(b.inflight(bw, 2 * BBR_UNIT), 18);
}

#[test]
fn startup_exits_after_three_rounds_without_25_percent_growth_then_drains() {
    let mut b = bbr(0);
    let mut delivered = 1;
    let mut cwnd = 4;
    // One ACK per round; each round's sample is the bandwidth below (segments per 700 ms).
    let per_round = [4, 8, 16, 18, 19, 19];
    let mut modes = Vec::new();
    for (round, segs) in per_round.into_iter().enumerate() {
        let prior = delivered;
        delivered += segs;
        let now = ms(700 * (round as i64 + 1));
        let t = tp(now, delivered, 30, cwnd, CaState::Open);
        let out = b.on_ack(&t, &sample(prior, segs as i64, 700_000, segs as u32));
        cwnd = out.cwnd;
        modes.push((b.rounds(), b.mode(), b.full_bw_reached()));
    }
    // 16 → 18 is below 1.25 × 16: rounds 4, 5, 6 count; the third ends STARTUP. In-flight
    // 30 is above one BDP, so DRAIN (not yet PROBE_BW).
    assert_eq!(modes[2], (3, Mode::Startup, false));
    assert_eq!(modes[4], (5, Mode::Startup, false));
    assert_eq!(modes[5], (6, Mode::Drain, true));
    assert_eq!(b.pacing_gain(), 88);
    // DRAIN ends once in-flight falls to the BDP-based inflight.
    let target = b.inflight(b.max_bw(), BBR_UNIT);
    let t = tp(ms(5_000), delivered, target, cwnd, CaState::Open);
    b.on_ack(&t, &RateSample::new(target));
    assert_eq!(b.mode(), Mode::ProbeBw);
}

#[test]
fn probe_bw_never_starts_in_the_drain_phase() {
    let mut seen = [0u32; CYCLE_LEN];
    for seed in 0..700 {
        let mut b = bbr(seed);
        b.full_bw_reached = true;
        b.reset_probe_bw_mode(ms(0));
        seen[b.cycle_idx()] += 1;
    }
    assert_eq!(seen[1], 0, "{seen:?}");
    assert!(
        seen.iter().enumerate().all(|(i, &n)| i == 1 || n > 60),
        "{seen:?}"
    );
}

#[test]
fn gain_cycle_advances_once_per_min_rtt_in_cruise_and_probes_until_loss() {
    let mut b = bbr(0);
    b.full_bw_reached = true;
    b.bw.reset(0, 13 * BW_UNIT / 1_000_000);
    b.reset_probe_bw_mode(ms(0));
    let first = b.cycle_idx();
    let mut seq = vec![(0, first)];
    // ACKs every 100 ms; a cruise phase lasts more than min_rtt (600 ms), the 5/4 phase ends
    // at the first full-length ACK with a loss, the 3/4 phase when in-flight ≤ one BDP.
    for i in 1..=60 {
        let now = ms(100 * i);
        let mut rs = sample(0, -1, -1, 0);
        rs.losses = u32::from(b.cycle_idx() == 0);
        rs.prior_in_flight = 4;
        let t = tp(now, 100, 4, 20, CaState::Open);
        b.on_ack(&t, &rs);
        if seq.last().unwrap().1 != b.cycle_idx() {
            seq.push((100 * i, b.cycle_idx()));
        }
    }
    // Seed 0 draws the start phase 4 (a cruise phase): cruise phases last the first ACK
    // more than min_rtt after they began (700 ms); 5/4 ends at its first full-length ACK
    // with a loss; 3/4 at once, in-flight 4 being under one BDP.
    assert_eq!(
        seq,
        [
            (0, 4),
            (700, 5),
            (1400, 6),
            (2100, 7),
            (2800, 0),
            (3500, 1),
            (3600, 2),
            (4300, 3),
            (5000, 4),
            (5700, 5)
        ]
    );
}

#[test]
fn probe_rtt_after_ten_seconds_without_a_lower_sample_holds_four_for_200_ms_and_a_round() {
    let mut b = bbr(0);
    b.full_bw_reached = true;
    b.bw.reset(0, 13 * BW_UNIT / 1_000_000);
    b.reset_probe_bw_mode(ms(0));
    // Samples of 700 ms (above the 600-ms minimum) never refresh the filter.
    let ack = |b: &mut Bbr, now: Instant, delivered: u64, in_flight: u32, cwnd: u32, prior: u64| {
        let mut rs = sample(prior, 2, 700_000, 2);
        rs.rtt_us = 700_000;
        b.on_ack(&tp(now, delivered, in_flight, cwnd, CaState::Open), &rs)
    };
    let out = ack(&mut b, ms(10_000), 100, 20, 20, 98);
    assert_eq!((b.mode(), out.cwnd, b.cycle_idx()), (Mode::ProbeBw, 20, 4));
    // 10 s after init (strictly after): PROBE_RTT, cwnd capped at 4, cwnd 20 remembered; the
    // expired filter takes the 700-ms sample.
    let out = ack(&mut b, ms(10_001), 102, 20, 20, 100);
    assert_eq!(
        (b.mode(), out.cwnd, b.prior_cwnd()),
        (Mode::ProbeRtt, 4, 20)
    );
    assert_eq!(b.min_rtt_us(), 700_000);
    assert_eq!(out.app_limited, Some(122));
    // In-flight reaches 4 at 11 s: the 200-ms clock and a round start.
    ack(&mut b, ms(11_000), 118, 4, 4, 102);
    // A round ends (a segment sent after 11 s is delivered) at 11.1 s, but 200 ms have not
    // passed: still PROBE_RTT.
    ack(&mut b, ms(11_100), 120, 4, 4, 118);
    assert_eq!(b.mode(), Mode::ProbeRtt);
    // 11.201 s: both conditions hold; cwnd restored to 20, back to PROBE_BW (phase 5 drawn);
    // with min_rtt now 700 ms the target is 2 × 9.1 → 19, + 3 = 22: 20 + 2 acked.
    let out = ack(&mut b, ms(11_201), 122, 4, 4, 119);
    assert_eq!((b.mode(), b.cycle_idx(), out.cwnd), (Mode::ProbeBw, 5, 22));
}

#[test]
fn rto_saves_cwnd_then_slow_starts_from_one_and_restores_on_leaving_loss() {
    let mut b = bbr(0);
    b.full_bw_reached = true;
    b.bw.reset(0, 13 * BW_UNIT / 1_000_000);
    b.reset_probe_bw_mode(ms(0));
    // RTO with cwnd 20: bbr_ssthresh saves it, tcp_enter_loss sets cwnd 1.
    assert_eq!(b.on_ssthresh(20), INFINITE);
    b.on_loss_state(&tp(ms(1_000), 100, 0, 1, CaState::Loss));
    assert_eq!(b.prior_cwnd(), 20);
    // In Loss, each ACK slow-starts: 1 + 1, then + 2.
    let mut cwnd = 1;
    for acked in [1, 2] {
        let rs = sample(0, -1, -1, acked);
        cwnd = b
            .on_ack(&tp(ms(2_000), 101, 1, cwnd, CaState::Loss), &rs)
            .cwnd;
    }
    // The model floor is 4 segments (bbr_cwnd_min_target).
    assert_eq!(cwnd, 6);
    // Leaving Loss restores the saved 20, capped by the target (2 × BDP + 3 → 20).
    let rs = sample(0, -1, -1, 1);
    let out = b.on_ack(&tp(ms(3_000), 104, 3, cwnd, CaState::Open), &rs);
    assert_eq!(out.cwnd, 20);
}

#[test]
fn recovery_starts_with_packet_conservation() {
    let mut b = bbr(0);
    b.full_bw_reached = true;
    b.bw.reset(0, 13 * BW_UNIT / 1_000_000);
    b.reset_probe_bw_mode(ms(0));
    b.on_ssthresh(20);
    // First ACK in recovery: one segment lost, one delivered, 12 in flight → cwnd 13.
    let mut rs = sample(0, -1, -1, 1);
    rs.losses = 1;
    let out = b.on_ack(&tp(ms(1_000), 50, 12, 20, CaState::Recovery), &rs);
    assert_eq!(out.cwnd, 13);
}

const INFINITE: u32 = crate::tcp::newreno::INFINITE_SSTHRESH;
