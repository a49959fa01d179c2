//! Linux's cwnd validation (`tcp_cwnd_validate`, ≥ 4.10) for a [`super::Connection`]: the
//! largest flight per window of data and whether it was cwnd-limited, which decides whether
//! Reno may grow the window (`tcp_is_cwnd_limited`).

use crate::tcp::newreno::Reno;
use crate::tcp::sender::Sender;

/// The flight record of the current window of data.
#[derive(Debug, Clone)]
pub(super) struct CwndValidation {
    /// `tp->max_packets_out`.
    max_packets_out: u32,
    /// `tp->max_packets_seq`: snd_nxt when `max_packets_out` was taken.
    max_packets_seq: u64,
    /// `tp->is_cwnd_limited`.
    is_cwnd_limited: bool,
    /// Something was sent or acknowledged since the last validation.
    burst_open: bool,
}

impl CwndValidation {
    /// Nothing sent (first data byte 1).
    pub(super) fn new() -> Self {
        CwndValidation {
            max_packets_out: 0,
            max_packets_seq: 1,
            is_cwnd_limited: false,
            burst_open: false,
        }
    }

    /// A segment was sent or data acknowledged: the next end of a transmit pass validates.
    pub(super) fn on_activity(&mut self) {
        self.burst_open = true;
    }

    /// The end of a `tcp_write_xmit` pass with nothing more to send under `cwnd`: validates
    /// when something happened since the last pass or the flight fills the window.
    pub(super) fn end_of_pass(&mut self, snd: &Sender, cwnd: u32) {
        let limited = snd.in_flight() >= cwnd;
        if self.burst_open || limited {
            self.validate(snd, limited);
        }
        self.burst_open = false;
    }

    /// `tcp_cwnd_validate`: tracks the largest flight per window of data and whether it was
    /// cwnd-limited.
    fn validate(&mut self, snd: &Sender, is_cwnd_limited: bool) {
        let packets_out = snd.packets_out();
        if snd.snd_una() >= self.max_packets_seq || packets_out > self.max_packets_out {
            self.max_packets_out = packets_out;
            self.max_packets_seq = snd.snd_nxt();
            self.is_cwnd_limited = is_cwnd_limited;
        }
    }

    /// `tcp_is_cwnd_limited`.
    pub(super) fn cwnd_limited(&self, reno: &Reno) -> bool {
        if reno.in_slow_start() {
            reno.cwnd < 2 * self.max_packets_out
        } else {
            self.is_cwnd_limited
        }
    }
}
