//! The transmit side of [`Connection`]: what `poll_transmit` puts on the wire — the
//! SYN / SYN-ACK, lost segments and new data as the window allows (`tcp_xmit_retransmit_queue`
//! then `tcp_write_xmit`), else a due pure ACK — and Linux's `tcp_cwnd_validate`.

use coaplab_base::time::Instant;

use super::config::RecoveryMode;
use super::connection::{CaState, Connection, Role, TcpState};
use super::segment::{Segment, MAX_TCP_OPTION_SPACE, TFO_OPTION_BYTES, TFO_REQUEST_OPTION_BYTES};
use super::sender::Outgoing;

impl Connection {
    /// The next segment to put on the wire, if any.
    #[must_use]
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Segment> {
        if self.quiet {
            // Debug builds check the claim: the state is a fixed point, so asking again finds
            // nothing and changes nothing.
            if cfg!(debug_assertions) {
                let seg = self.next_segment(now);
                debug_assert!(seg.is_none(), "a quiet connection had {seg:?} to send");
            }
            return None;
        }
        let seg = self.next_segment(now);
        match &seg {
            Some(s) => {
                self.stats.segments_sent += 1;
                self.cc_after_send(now, s.payload.len() as u32);
                if s.ack.is_some() {
                    self.rcv.on_ack_sent();
                }
                if s.fin {
                    self.update_close_state();
                }
            }
            None if self.synchronized() => {
                // The end of a `tcp_write_xmit` pass.
                let limited = self.snd.in_flight() >= self.reno.cwnd;
                if self.burst_open || limited {
                    self.cwnd_validate(limited);
                }
                self.burst_open = false;
            }
            None => {}
        }
        // Nothing to send is a fixed point of the state unless the time matters: pacing (BBR,
        // whose state exists only on a paced connection), or new data waiting on an empty
        // flight, where the restart after idle depends on `now` (a second pass of the `None`
        // branch above changes nothing either).
        self.quiet = seg.is_none()
            && !self.paced()
            && !(self.snd.has_unsent() && self.snd.packets_out() == 0);
        seg
    }

    fn next_segment(&mut self, now: Instant) -> Option<Segment> {
        let ack = Some(self.rcv.rcv_nxt());
        if self.hs.pending > 0 {
            self.hs.on_sent(now);
            let first_syn = self.stats.segments_sent == 0;
            return Some(match self.role {
                Role::Client if self.fast_open => self.fast_open_syn(now, first_syn),
                // Without a cookie the SYN asks for one (TFO_REQUEST_OPTION_BYTES) and the
                // server's SYN-ACK hands it out (TFO_OPTION_BYTES: the same option's size).
                Role::Client => Segment {
                    seq: 0,
                    ack: None,
                    syn: true,
                    fin: false,
                    payload: Vec::new(),
                    options_bytes: self.config.syn_options_bytes
                        + if self.cookie_request {
                            TFO_REQUEST_OPTION_BYTES
                        } else {
                            0
                        },
                },
                Role::Server => Segment {
                    seq: 0,
                    ack,
                    syn: true,
                    fin: false,
                    payload: Vec::new(),
                    options_bytes: self.config.syn_options_bytes
                        + if self.cookie_request {
                            TFO_OPTION_BYTES
                        } else {
                            0
                        },
                },
            });
        }
        if !self.synchronized() {
            return None;
        }
        if let Some(out) = self.next_data(now) {
            return Some(Segment {
                seq: out.seq,
                ack,
                syn: false,
                fin: out.fin,
                payload: out.payload,
                options_bytes: 0,
            });
        }
        if self.rcv.ack_due() {
            return Some(Segment {
                seq: self.snd.snd_nxt(),
                ack,
                syn: false,
                fin: false,
                payload: Vec::new(),
                options_bytes: 0,
            });
        }
        None
    }

    /// Past the handshake and not failed (a Fast Open server sends from SYN-RECV on).
    fn synchronized(&self) -> bool {
        match self.state {
            TcpState::SynReceived => self.fast_open && self.hs.first_sent.is_some(),
            s => !matches!(s, TcpState::Listen | TcpState::SynSent | TcpState::Failed),
        }
    }

    /// The client's SYN with the TFO cookie option; the first one also carries up to
    /// MSS − 40 written bytes, recorded as a data segment in the retransmission queue
    /// (Linux `tcp_send_syn_data`).
    fn fast_open_syn(&mut self, now: Instant, first_syn: bool) -> Segment {
        let mut payload = Vec::new();
        if first_syn && self.snd.unsent_bytes() > 0 {
            let max_len = self
                .config
                .mss()
                .saturating_sub(MAX_TCP_OPTION_SPACE)
                .max(1);
            let tx = self.cc.rate.on_send(now, 0);
            if let Some(out) = self.snd.send_new_at_most(now, tx, max_len) {
                self.syn_data_bytes = out.payload.len() as u64;
                self.stats.data_segments_sent += 1;
                self.lsndtime = now;
                payload = out.payload;
            }
        }
        Segment {
            seq: 0,
            ack: None,
            syn: true,
            fin: false,
            payload,
            options_bytes: self.config.syn_options_bytes + TFO_OPTION_BYTES,
        }
    }

    /// A lost segment's retransmission or new data, as the window allows.
    fn next_data(&mut self, now: Instant) -> Option<Outgoing> {
        self.cc.pacing.wait = None;
        let inflating =
            self.config.recovery == RecoveryMode::Rfc6582 && self.ca == CaState::Recovery;
        if self.snd.has_lost_to_send() && (inflating || self.snd.in_flight() < self.reno.cwnd) {
            if self.pacing_blocks(now) {
                return None;
            }
            self.cc_before_data_send(now);
            let tx = self.cc.rate.on_send(now, self.snd.packets_out());
            let out = self.snd.retransmit_lost(now, tx)?;
            self.cc.rto_unpaced = false;
            self.stats.segments_retransmitted += 1;
            self.stats.data_segments_sent += 1;
            if self.ca == CaState::Recovery {
                self.prr.out += 1;
            }
            if out.head {
                self.rto_at = Some(self.rto_deadline(now));
            }
            self.burst_open = true;
            return Some(out);
        }
        let gate = if inflating {
            self.snd.packets_out()
        } else {
            self.snd.in_flight()
        };
        if !self.snd.has_unsent() || gate >= self.reno.cwnd {
            return None;
        }
        let prior_packets = self.snd.packets_out();
        // BBR (a `cong_control` module) never restarts from idle (`tcp_slow_start_after_idle_check`).
        if prior_packets == 0 && self.config.slow_start_after_idle && !self.paced() {
            let idle = now - self.lsndtime;
            let rto = self.rtt.rto();
            if idle > rto {
                let idle_rtos = ((idle.as_nanos() - 1) / rto.as_nanos()) as u64;
                self.reno.restart_after_idle(self.config.iw, idle_rtos);
                if gate >= self.reno.cwnd {
                    return None;
                }
            }
        }
        if self.pacing_blocks(now) {
            return None;
        }
        self.cc_before_data_send(now);
        let tx = self.cc.rate.on_send(now, prior_packets);
        let out = self.snd.send_new(now, tx)?;
        self.stats.data_segments_sent += 1;
        if self.ca == CaState::Recovery {
            self.prr.out += 1;
        }
        if prior_packets == 0 {
            self.rto_at = Some(self.rto_deadline(now));
        }
        self.lsndtime = now;
        self.rcv.on_new_data_sent(now);
        self.burst_open = true;
        Some(out)
    }

    /// `tcp_cwnd_validate` (Linux ≥ 4.10): tracks the largest flight per window of data and
    /// whether it was cwnd-limited.
    fn cwnd_validate(&mut self, is_cwnd_limited: bool) {
        let packets_out = self.snd.packets_out();
        if self.snd.snd_una() >= self.max_packets_seq || packets_out > self.max_packets_out {
            self.max_packets_out = packets_out;
            self.max_packets_seq = self.snd.snd_nxt();
            self.is_cwnd_limited = is_cwnd_limited;
        }
    }

    /// `tcp_is_cwnd_limited`.
    pub(super) fn cwnd_limited(&self) -> bool {
        if self.reno.in_slow_start() {
            self.reno.cwnd < 2 * self.max_packets_out
        } else {
            self.is_cwnd_limited
        }
    }
}
