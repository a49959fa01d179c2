//! The data retransmission timer of a [`super::Connection`] (Linux `icsk_retransmit_timer`):
//! its deadline, on the kernel's timer wheel when `timer_wheel_hz` is set, and the expiries
//! since the oldest unacknowledged byte last advanced (`icsk_retransmits`). The RTO value
//! itself is the `RttEstimator`'s.

use coaplab_base::time::{Duration, Instant};

use crate::tcp::timer_wheel;

/// Deadline and expiry count of the retransmission timer.
#[derive(Debug, Clone)]
pub(super) struct RtoTimer {
    at: Option<Instant>,
    /// RTO expiries since snd_una last advanced (`icsk_retransmits`).
    expiries: u32,
    /// `timer_wheel_hz` (0: exact timer).
    timer_wheel_hz: u32,
}

impl RtoTimer {
    /// Not armed.
    pub(super) fn new(timer_wheel_hz: u32) -> Self {
        RtoTimer {
            at: None,
            expiries: 0,
            timer_wheel_hz,
        }
    }

    /// The deadline, if armed.
    pub(super) fn deadline(&self) -> Option<Instant> {
        self.at
    }

    /// (Re)arms the timer at `now` for `rto`: it fires at `now + rto`, or at the end of its
    /// Linux timer-wheel bucket ([`timer_wheel::expiry`]).
    pub(super) fn arm(&mut self, now: Instant, rto: Duration) {
        self.at = Some(timer_wheel::expiry(now, rto, self.timer_wheel_hz));
    }

    /// Re-arms the timer at `now` for `rto` while `outstanding`, else stops it (an ACK that
    /// acknowledged data: `tcp_rearm_rto`).
    pub(super) fn rearm_if(&mut self, outstanding: bool, now: Instant, rto: Duration) {
        self.at = outstanding.then(|| timer_wheel::expiry(now, rto, self.timer_wheel_hz));
    }

    /// Stops the timer (nothing outstanding when it fired).
    pub(super) fn stop(&mut self) {
        self.at = None;
    }

    /// snd_una advanced: the expiry count starts again.
    pub(super) fn on_progress(&mut self) {
        self.expiries = 0;
    }

    /// Expiries since snd_una last advanced.
    pub(super) fn expiries(&self) -> u32 {
        self.expiries
    }

    /// The timer fired and was served: counts the expiry.
    pub(super) fn on_expired(&mut self) {
        self.expiries += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn armed_on_the_wheel_it_fires_at_its_bucket_end_and_stops_when_nothing_is_out() {
        // HZ 250: armed at 10 ms (jiffy 2) for 1 s (250 jiffies, level 1, 8-jiffy buckets):
        // expires 252, fires at jiffy 256 = 1.024 s.
        let mut t = RtoTimer::new(250);
        assert_eq!(t.deadline(), None);
        t.arm(Instant::from_millis(10), Duration::from_secs(1));
        assert_eq!(t.deadline(), Some(Instant::from_millis(1024)));
        // An exact timer: 1.010 s.
        let mut exact = RtoTimer::new(0);
        exact.arm(Instant::from_millis(10), Duration::from_secs(1));
        assert_eq!(exact.deadline(), Some(Instant::from_millis(1010)));
        // An ACK that leaves nothing outstanding stops it; one that leaves some re-arms it.
        exact.rearm_if(false, Instant::from_millis(500), Duration::from_secs(1));
        assert_eq!(exact.deadline(), None);
        exact.rearm_if(true, Instant::from_millis(500), Duration::from_secs(1));
        assert_eq!(exact.deadline(), Some(Instant::from_millis(1500)));
        exact.stop();
        assert_eq!(exact.deadline(), None);
    }

    #[test]
    fn expiries_count_until_snd_una_advances() {
        let mut t = RtoTimer::new(0);
        t.on_expired();
        t.on_expired();
        assert_eq!(t.expiries(), 2);
        t.on_progress();
        assert_eq!(t.expiries(), 0);
    }
}
