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
