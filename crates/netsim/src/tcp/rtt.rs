//! RTT estimation and the retransmission timeout: Linux `tcp_rtt_estimator` and `tcp_set_rto`
//! (RFC 6298), in integer microseconds.
//!
//! srtt is kept ×8 and mdev ×4 as in the kernel. The RTO is `srtt + rttvar`, where rttvar is
//! at least `rto_min`, capped at `rto_max`. A timeout doubles the RTO in place
//! ([`RttEstimator::back_off`]); only the next valid sample recomputes it (Karn, RFC 6298 §5).
//! The kernel rounds the RTO up to jiffies; this model keeps microseconds.

use coaplab_base::time::Duration;

/// Linux's RTT estimator and RTO.
#[derive(Debug, Clone)]
pub struct RttEstimator {
    /// Smoothed RTT ×8 in µs; 0 until the first sample.
    srtt_us8: i64,
    /// Mean deviation ×4 in µs.
    mdev_us4: i64,
    /// Largest mdev seen in the current window of data (µs ×4 scale as mdev).
    mdev_max_us: i64,
    /// RTT variance used for the RTO (µs, ×4 scale as mdev).
    rttvar_us: i64,
    /// rttvar decays once snd_una passes this sequence number (once per RTT).
    rtt_seq: u64,
    rto: Duration,
    rto_min_us: i64,
    rto_max: Duration,
}

impl RttEstimator {
    /// No sample yet; the RTO is `initial`.
    pub fn new(initial: Duration, rto_min: Duration, rto_max: Duration) -> Self {
        RttEstimator {
            srtt_us8: 0,
            mdev_us4: 0,
            mdev_max_us: 0,
            rttvar_us: 0,
            rtt_seq: 0,
            rto: initial,
            rto_min_us: rto_min.as_micros(),
            rto_max,
        }
    }

    /// Current RTO (backed off if a timeout happened since the last sample).
    pub fn rto(&self) -> Duration {
        self.rto
    }

    /// Smoothed RTT, `None` before the first sample.
    pub fn srtt(&self) -> Option<Duration> {
        (self.srtt_us8 != 0).then(|| Duration::from_micros(self.srtt_us8 >> 3))
    }

    /// The RTO's variance term `rttvar` (≥ `rto_min` after the first sample).
    pub fn rttvar(&self) -> Duration {
        Duration::from_micros(self.rttvar_us)
    }

    /// Whether any sample was taken.
    pub fn has_sample(&self) -> bool {
        self.srtt_us8 != 0
    }

    /// Feeds one valid (Karn-clean) sample taken when the cumulative ACK reached `snd_una`,
    /// with `snd_nxt` the next new sequence number; recomputes the RTO.
    pub fn sample(&mut self, rtt: Duration, snd_una: u64, snd_nxt: u64) {
        let mut m = rtt.as_micros().max(0);
        let mut srtt = self.srtt_us8;
        if srtt != 0 {
            m -= srtt >> 3; // error against the old srtt
            srtt += m; // srtt = 7/8 srtt + 1/8 new
            if m < 0 {
                m = -m;
                m -= self.mdev_us4 >> 2;
                if m > 0 {
                    m >>= 3; // falling RTT: the excess gets gain 1/32
                }
            } else {
                m -= self.mdev_us4 >> 2;
            }
            self.mdev_us4 += m; // mdev = 3/4 mdev + 1/4 |err|
            if self.mdev_us4 > self.mdev_max_us {
                self.mdev_max_us = self.mdev_us4;
                if self.mdev_max_us > self.rttvar_us {
                    self.rttvar_us = self.mdev_max_us;
                }
            }
            if snd_una > self.rtt_seq {
                if self.mdev_max_us < self.rttvar_us {
                    self.rttvar_us -= (self.rttvar_us - self.mdev_max_us) >> 2;
                }
                self.rtt_seq = snd_nxt;
                self.mdev_max_us = self.rto_min_us;
            }
        } else {
            srtt = m << 3;
            self.mdev_us4 = m << 1; // rto = 3 × rtt
            self.rttvar_us = self.mdev_us4.max(self.rto_min_us);
            self.mdev_max_us = self.rttvar_us;
            self.rtt_seq = snd_nxt;
        }
        self.srtt_us8 = srtt.max(1);
        let rto = Duration::from_micros((self.srtt_us8 >> 3) + self.rttvar_us);
        self.rto = rto.min(self.rto_max);
    }

    /// A timeout fired: RTO = min(2 × RTO, rto_max), kept until the next sample.
    pub fn back_off(&mut self) {
        self.rto = (self.rto * 2).min(self.rto_max);
    }

    /// Drops any backoff: RTO = min(srtt + rttvar, rto_max) from the current estimator, without
    /// a new sample (ns-3's rule, `rto_backoff_reset = "new-ack"`). No effect before the first
    /// sample.
    pub fn clear_backoff(&mut self) {
        if self.has_sample() {
            let rto = Duration::from_micros((self.srtt_us8 >> 3) + self.rttvar_us);
            self.rto = rto.min(self.rto_max);
        }
    }

    /// No valid handshake sample (RFC 6298 §5.7, Linux `tcp_init_metrics`): variance terms and
    /// RTO set to `fallback`.
    pub fn fall_back(&mut self, fallback: Duration) {
        let us = fallback.as_micros();
        self.rttvar_us = us;
        self.mdev_us4 = us;
        self.mdev_max_us = us;
        self.rto = fallback;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est() -> RttEstimator {
        RttEstimator::new(
            Duration::from_secs(2),
            Duration::from_millis(200),
            Duration::from_secs(120),
        )
    }

    #[test]
    fn first_sample_gives_srtt_plus_max_of_two_rtt_and_rto_min() {
        let mut e = est();
        e.sample(Duration::from_millis(100), 1, 1);
        assert_eq!(e.rto(), Duration::from_millis(300));
        let mut e = est();
        e.sample(Duration::from_millis(50), 1, 1);
        assert_eq!(e.rto(), Duration::from_millis(250));
        let mut e = est();
        e.sample(Duration::from_millis(600), 1, 1);
        assert_eq!(e.rto(), Duration::from_millis(1800));
    }

    #[test]
    fn falling_rtt_excess_gets_one_thirty_second() {
        let mut e = est();
        e.sample(Duration::from_millis(600), 1, 1);
        // err = −500 ms: srtt = 600 − 62.5 = 537.5 ms; |err| − mdev = 500 − 300 = 200 ms,
        // >> 3 = 25 ms, mdev ×4 = 1200 + 25 = 1225 ms (> mdev_max 1200 → rttvar 1225 ms).
        e.sample(Duration::from_millis(100), 1, 1);
        assert_eq!(e.srtt(), Some(Duration::from_micros(537_500)));
        assert_eq!(e.rttvar(), Duration::from_millis(1225));
        assert_eq!(e.rto(), Duration::from_micros(1_762_500));
    }

    #[test]
    fn back_off_doubles_up_to_rto_max_and_a_sample_recomputes() {
        let mut e = est();
        e.sample(Duration::from_millis(100), 1, 1);
        e.back_off();
        assert_eq!(e.rto(), Duration::from_millis(600));
        for _ in 0..20 {
            e.back_off();
        }
        assert_eq!(e.rto(), Duration::from_secs(120));
        e.sample(Duration::from_millis(100), 2, 2);
        // srtt 100; mdev ×4: 200 + (0 − 50) = 150 < mdev_max; snd_una 2 > rtt_seq 1 → rttvar
        // decays toward mdev_max 200 (it is 200 already) → 200; RTO 300 ms.
        assert_eq!(e.rto(), Duration::from_millis(300));
    }

    #[test]
    fn clear_backoff_recomputes_from_the_estimator_without_a_sample() {
        let mut e = est();
        e.clear_backoff();
        assert_eq!(e.rto(), Duration::from_secs(2), "no sample: unchanged");
        e.sample(Duration::from_millis(100), 1, 1);
        e.back_off();
        e.back_off();
        assert_eq!(e.rto(), Duration::from_millis(1200));
        e.clear_backoff();
        assert_eq!(e.rto(), Duration::from_millis(300));
        assert_eq!(e.srtt(), Some(Duration::from_millis(100)));
    }

    #[test]
    fn fall_back_sets_three_seconds() {
        let mut e = est();
        e.fall_back(Duration::from_secs(3));
        assert_eq!(e.rto(), Duration::from_secs(3));
        assert!(!e.has_sample());
    }
}
