//! The three-way handshake's retransmission timer: SYN (client) or SYN-ACK (server), first
//! timeout `rto_initial`, doubling per timeout up to `rto_max`, given up after `syn_retries` /
//! `synack_retries` timeouts (Linux `tcp_retransmit_timer` in SYN-SENT, `reqsk_timer_handler`).

use coaplab_base::time::{Duration, Instant};

use super::timer_wheel;

/// What a handshake timeout asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandshakeTimeout {
    /// Send the SYN / SYN-ACK again.
    Retransmit,
    /// The retry budget is spent: the connection fails.
    GiveUp,
}

/// Timer and counters of the SYN or SYN-ACK.
#[derive(Debug, Clone)]
pub struct Handshake {
    rto: Duration,
    rto_max: Duration,
    max_timeouts: u32,
    /// Timer expiries so far (drives the backoff).
    timeouts: u32,
    /// Retransmissions so far (timer-driven and, on the server, answers to duplicate SYNs).
    retransmits: u32,
    /// Copies of the SYN / SYN-ACK due now (a timeout and a duplicate SYN at the same instant
    /// each ask for one).
    pending: u32,
    /// First transmission instant.
    first_sent: Option<Instant>,
    deadline: Option<Instant>,
    /// `timer_wheel_hz` (0: exact timer).
    timer_wheel_hz: u32,
}

impl Handshake {
    /// A handshake whose first segment is due now.
    pub fn new(rto_initial: Duration, rto_max: Duration, max_timeouts: u32) -> Self {
        Handshake {
            rto: rto_initial.min(rto_max),
            rto_max,
            max_timeouts,
            timeouts: 0,
            retransmits: 0,
            pending: 1,
            first_sent: None,
            deadline: None,
            timer_wheel_hz: 0,
        }
    }

    /// Fires the timer on a Linux timer wheel of `hz` jiffies per second (0: exact).
    pub fn with_timer_wheel(mut self, hz: u32) -> Self {
        self.timer_wheel_hz = hz;
        self
    }

    /// A listener's: nothing due until a SYN arrives ([`Handshake::on_syn`]).
    #[must_use]
    pub fn listening(mut self) -> Self {
        self.pending = 0;
        self
    }

    /// A listener received the SYN: the SYN-ACK is due now.
    pub fn on_syn(&mut self) {
        self.pending = 1;
    }

    /// Whether a SYN / SYN-ACK is due now.
    pub fn due(&self) -> bool {
        self.pending > 0
    }

    /// Timer expiries so far.
    pub fn timeouts(&self) -> u32 {
        self.timeouts
    }

    /// Retransmissions so far (timer-driven and, on the server, answers to duplicate SYNs).
    pub fn retransmits(&self) -> u32 {
        self.retransmits
    }

    /// First transmission instant, once sent.
    pub fn first_sent(&self) -> Option<Instant> {
        self.first_sent
    }

    /// The SYN / SYN-ACK went out at `now`; arms the timer unless it runs already.
    pub fn on_sent(&mut self, now: Instant) {
        self.pending = self.pending.saturating_sub(1);
        self.first_sent.get_or_insert(now);
        if self.deadline.is_none() {
            self.deadline = Some(timer_wheel::expiry(now, self.rto, self.timer_wheel_hz));
        }
    }

    /// The timer's current value (doubled by each expiry, up to the maximum).
    pub fn rto(&self) -> Duration {
        self.rto
    }

    /// The timer's deadline.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// The timer fired at `now` (caller checked the deadline).
    pub fn on_timeout(&mut self, now: Instant) -> HandshakeTimeout {
        if self.timeouts >= self.max_timeouts {
            self.deadline = None;
            return HandshakeTimeout::GiveUp;
        }
        self.timeouts += 1;
        self.retransmits += 1;
        self.rto = (self.rto * 2).min(self.rto_max);
        self.deadline = Some(timer_wheel::expiry(now, self.rto, self.timer_wheel_hz));
        self.pending += 1;
        HandshakeTimeout::Retransmit
    }

    /// A duplicate SYN arrived at the server: answer with the SYN-ACK at once; the timer keeps
    /// running (Linux `inet_rtx_syn_ack`).
    pub fn resend_now(&mut self) {
        self.retransmits += 1;
        self.pending += 1;
    }

    /// The handshake completed: the timer stops.
    pub fn finish(&mut self) {
        self.deadline = None;
        self.pending = 0;
    }

    /// A valid RTT sample exists: the segment was never retransmitted.
    pub fn rtt_sample(&self, now: Instant) -> Option<Duration> {
        match (self.retransmits, self.first_sent) {
            (0, Some(t)) => Some(now - t),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_a_timer_wheel_the_syn_timer_fires_at_its_bucket() {
        let mut hs = Handshake::new(Duration::from_secs(2), Duration::from_secs(120), 40)
            .with_timer_wheel(250);
        hs.on_sent(Instant::from_millis(10));
        // Jiffy 2 + 500 = 502, level 1 (8-jiffy buckets): fires at jiffy 504 = 2.016 s.
        assert_eq!(hs.deadline(), Some(Instant::from_millis(2016)));
        assert_eq!(
            hs.on_timeout(Instant::from_millis(2016)),
            HandshakeTimeout::Retransmit
        );
        // 4 s from jiffy 504: 1504, level 2 (64-jiffy buckets): jiffy 1536 = 6.144 s.
        assert_eq!(hs.deadline(), Some(Instant::from_millis(6144)));
        // Without the wheel: exactly 2 s, then 4 s after the expiry.
        let mut exact = Handshake::new(Duration::from_secs(2), Duration::from_secs(120), 40);
        exact.on_sent(Instant::from_millis(10));
        assert_eq!(exact.deadline(), Some(Instant::from_millis(2010)));
        exact.on_timeout(Instant::from_millis(2010));
        assert_eq!(exact.deadline(), Some(Instant::from_millis(6010)));
    }
}
