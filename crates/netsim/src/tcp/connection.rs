//! [`Connection`]: one end of a TCP connection, sans-IO.
//!
//! Call order (any interleaving, `now` never decreasing): [`Connection::handle_segment`] for
//! each arriving segment, [`Connection::handle_timeout`] when [`Connection::poll_timeout`]
//! says, application [`Connection::write`] / [`Connection::read`], and after each of these
//! [`Connection::poll_transmit`] until it returns `None`. An early `handle_timeout` is a no-op.

use coaplab_cc::time::Instant;

use super::config::{RecoveryMode, TcpConfig};
use super::handshake::{Handshake, HandshakeTimeout};
use super::newreno::{Prr, Reno};
use super::receiver::Receiver;
use super::rtt::RttEstimator;
use super::segment::Segment;
use super::sender::Sender;
use super::stats::TcpStats;

/// Which side opened the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Active open: sends the SYN.
    Client,
    /// Passive open: answers a SYN.
    Server,
}

/// Connection state (no FIN states: the model has no close yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TcpState {
    /// Server waiting for a SYN.
    Listen,
    /// Client sent its SYN.
    SynSent,
    /// Server sent its SYN-ACK.
    SynReceived,
    /// Handshake complete.
    Established,
    /// SYN or SYN-ACK retries exhausted.
    Failed,
}

/// Linux's congestion-avoidance state (`icsk_ca_state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    /// Normal.
    Open,
    /// Duplicate ACKs seen, below the threshold.
    Disorder,
    /// Fast recovery (PRR or RFC 6582).
    Recovery,
    /// After an RTO.
    Loss,
}

/// A segment the connection refused (counted, never a panic).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SegmentError {
    /// The ACK covers data never sent.
    AckBeyondSent {
        /// The segment's ACK.
        ack: u64,
        /// Next new sequence number of this side.
        snd_nxt: u64,
    },
    /// The segment does not fit the handshake state (e.g. data to a listener, a SYN-ACK for
    /// another SYN).
    Unexpected(TcpState),
}

impl core::fmt::Display for SegmentError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            SegmentError::AckBeyondSent { ack, snd_nxt } => {
                write!(f, "ack {ack} beyond snd_nxt {snd_nxt}")
            }
            SegmentError::Unexpected(s) => write!(f, "unexpected segment in state {s:?}"),
        }
    }
}

impl std::error::Error for SegmentError {}

/// The application wrote to a connection that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionFailed;

impl core::fmt::Display for ConnectionFailed {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("the connection failed")
    }
}

impl std::error::Error for ConnectionFailed {}

/// One end of a TCP connection (see the module doc for the call order).
#[derive(Debug, Clone)]
pub struct Connection {
    pub(super) config: TcpConfig,
    pub(super) role: Role,
    pub(super) state: TcpState,
    pub(super) hs: Handshake,
    pub(super) snd: Sender,
    pub(super) rcv: Receiver,
    pub(super) reno: Reno,
    pub(super) prr: Prr,
    pub(super) ca: CaState,
    pub(super) high_seq: u64,
    pub(super) rtt: RttEstimator,
    pub(super) rto_at: Option<Instant>,
    /// RTO expiries since snd_una last advanced (`icsk_retransmits`).
    pub(super) rto_retransmits: u32,
    /// Last instant new data was sent (`lsndtime`).
    pub(super) lsndtime: Instant,
    pub(super) max_packets_out: u32,
    pub(super) max_packets_seq: u64,
    pub(super) is_cwnd_limited: bool,
    /// Something was sent or acknowledged since the last cwnd validation.
    pub(super) burst_open: bool,
    pub(super) stats: TcpStats,
}

impl Connection {
    fn new(config: TcpConfig, role: Role, state: TcpState) -> Self {
        let max_timeouts = match role {
            Role::Client => config.syn_retries,
            Role::Server => config.synack_retries,
        };
        let mut hs = Handshake::new(config.rto_initial, config.rto_max, max_timeouts);
        hs.pending = u32::from(role == Role::Client);
        Connection {
            hs,
            role,
            state,
            snd: Sender::new(1, config.mss()),
            rcv: Receiver::new(1, config.mss(), config.delack),
            reno: Reno::new(config.iw),
            prr: Prr::default(),
            ca: CaState::Open,
            high_seq: 1,
            rtt: RttEstimator::new(config.rto_initial, config.rto_min, config.rto_max),
            rto_at: None,
            rto_retransmits: 0,
            lsndtime: Instant::ZERO,
            max_packets_out: 0,
            max_packets_seq: 1,
            is_cwnd_limited: false,
            burst_open: false,
            stats: TcpStats::default(),
            config,
        }
    }

    /// Active open: the SYN is the first thing [`Connection::poll_transmit`] returns.
    pub fn connect(config: TcpConfig) -> Self {
        Connection::new(config, Role::Client, TcpState::SynSent)
    }

    /// Passive open: waits for a SYN.
    pub fn listen(config: TcpConfig) -> Self {
        Connection::new(config, Role::Server, TcpState::Listen)
    }

    /// Connection state.
    pub fn state(&self) -> TcpState {
        self.state
    }

    /// Which side this is.
    pub fn role(&self) -> Role {
        self.role
    }

    /// Congestion-avoidance state.
    pub fn ca_state(&self) -> CaState {
        self.ca
    }

    /// Congestion window in segments.
    pub fn cwnd(&self) -> u32 {
        self.reno.cwnd
    }

    /// Slow-start threshold in segments.
    pub fn ssthresh(&self) -> u32 {
        self.reno.ssthresh
    }

    /// Segments in flight (`tcp_packets_in_flight`, the PRR pipe).
    pub fn pipe(&self) -> u32 {
        self.snd.in_flight()
    }

    /// Current RTO (backed off after timeouts until a fresh sample).
    pub fn rto(&self) -> coaplab_cc::time::Duration {
        self.rtt.rto()
    }

    /// The RTT estimator.
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }

    /// Counters.
    pub fn stats(&self) -> &TcpStats {
        &self.stats
    }

    /// Oldest unacknowledged sequence number.
    pub fn snd_una(&self) -> u64 {
        self.snd.snd_una()
    }

    /// Queues application bytes (one write = one push, `TCP_NODELAY`). Bytes written before
    /// the handshake completes wait for it.
    pub fn write(&mut self, bytes: &[u8]) -> Result<usize, ConnectionFailed> {
        if self.state == TcpState::Failed {
            return Err(ConnectionFailed);
        }
        self.snd.write(bytes);
        Ok(bytes.len())
    }

    /// Moves received in-order bytes into `buf`; returns how many.
    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        self.rcv.read(buf)
    }

    /// In-order bytes ready for [`Connection::read`].
    pub fn readable_len(&self) -> usize {
        self.rcv.readable_len()
    }

    /// Whether every written byte has been acknowledged.
    pub fn all_acked(&self) -> bool {
        self.snd.packets_out() == 0 && !self.snd.has_unsent()
    }

    /// The earliest instant [`Connection::handle_timeout`] must be called.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        [self.hs.deadline(), self.rto_at, self.rcv.delack_deadline()]
            .into_iter()
            .flatten()
            .min()
    }

    /// Runs every timer due at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.hs.deadline().is_some_and(|t| t <= now) {
            match self.hs.on_timeout(now) {
                HandshakeTimeout::Retransmit => {
                    self.stats.syn_retransmissions += 1;
                    self.stats.rto_count += 1;
                }
                HandshakeTimeout::GiveUp => self.state = TcpState::Failed,
            }
        }
        if self.rto_at.is_some_and(|t| t <= now) {
            self.on_rto(now);
        }
        self.rcv.on_delack_timeout(now);
    }

    /// Takes in one segment from the peer.
    pub fn handle_segment(&mut self, now: Instant, seg: Segment) -> Result<(), SegmentError> {
        self.stats.segments_received += 1;
        match self.state {
            TcpState::Listen if seg.syn && seg.ack.is_none() => {
                self.rcv = Receiver::new(seg.seq + 1, self.config.mss(), self.config.delack);
                self.state = TcpState::SynReceived;
                self.hs.pending = 1;
                Ok(())
            }
            TcpState::SynSent if seg.syn && seg.ack == Some(1) => {
                self.rcv = Receiver::new(seg.seq + 1, self.config.mss(), self.config.delack);
                self.establish(now);
                self.rcv.request_ack();
                Ok(())
            }
            TcpState::SynReceived if seg.syn && seg.ack.is_none() => {
                self.hs.resend_now();
                self.stats.syn_retransmissions += 1;
                Ok(())
            }
            TcpState::SynReceived if !seg.syn && seg.ack == Some(1) => {
                self.establish(now);
                self.on_established_segment(now, seg)
            }
            TcpState::Established => self.on_established_segment(now, seg),
            s => Err(SegmentError::Unexpected(s)),
        }
    }

    fn establish(&mut self, now: Instant) {
        self.hs.finish();
        self.state = TcpState::Established;
        match self.hs.rtt_sample(now) {
            Some(r) => self.rtt.sample(r, 1, 1),
            // RFC 6298 §5.7 / Linux tcp_init_metrics: no valid handshake sample → 3 s.
            None => self.rtt.fall_back(self.config.rto_fallback),
        }
        // Linux tcp_init_metrics: cwnd 1 after more than one SYN/SYN-ACK retransmission.
        self.reno.cwnd = if self.hs.retransmits > 1 {
            1
        } else {
            self.config.iw
        };
        self.lsndtime = now;
    }

    fn on_established_segment(&mut self, now: Instant, seg: Segment) -> Result<(), SegmentError> {
        if seg.syn {
            // A retransmitted SYN-ACK (our ACK was lost): answer with an ACK.
            self.rcv.request_ack();
            return Ok(());
        }
        if let Some(ack) = seg.ack {
            if ack > self.snd.snd_nxt() {
                return Err(SegmentError::AckBeyondSent {
                    ack,
                    snd_nxt: self.snd.snd_nxt(),
                });
            }
            self.on_ack(now, ack, seg.payload.is_empty() && !seg.fin);
        }
        self.rcv.on_data(now, seg.seq, &seg.payload);
        Ok(())
    }

    /// The next segment to put on the wire, if any.
    #[must_use]
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Segment> {
        let seg = self.next_segment(now);
        match &seg {
            Some(s) => {
                self.stats.segments_sent += 1;
                if s.ack.is_some() {
                    self.rcv.on_ack_sent();
                }
            }
            None if self.state == TcpState::Established => {
                // The end of a `tcp_write_xmit` pass.
                let limited = self.snd.in_flight() >= self.reno.cwnd;
                if self.burst_open || limited {
                    self.cwnd_validate(limited);
                }
                self.burst_open = false;
            }
            None => {}
        }
        seg
    }

    fn next_segment(&mut self, now: Instant) -> Option<Segment> {
        let ack = Some(self.rcv.rcv_nxt());
        if self.hs.pending > 0 {
            self.hs.on_sent(now);
            return Some(match self.role {
                Role::Client => Segment {
                    seq: 0,
                    ack: None,
                    syn: true,
                    fin: false,
                    payload: Vec::new(),
                },
                Role::Server => Segment {
                    seq: 0,
                    ack,
                    syn: true,
                    fin: false,
                    payload: Vec::new(),
                },
            });
        }
        if self.state != TcpState::Established {
            return None;
        }
        if let Some((seq, payload)) = self.next_data(now) {
            return Some(Segment {
                seq,
                ack,
                syn: false,
                fin: false,
                payload,
            });
        }
        if self.rcv.ack_due() {
            return Some(Segment {
                seq: self.snd.snd_nxt(),
                ack,
                syn: false,
                fin: false,
                payload: Vec::new(),
            });
        }
        None
    }

    /// A lost segment's retransmission or new data, as the window allows.
    fn next_data(&mut self, now: Instant) -> Option<(u64, Vec<u8>)> {
        let inflating =
            self.config.recovery == RecoveryMode::Rfc6582 && self.ca == CaState::Recovery;
        if self.snd.has_lost_to_send() && (inflating || self.snd.in_flight() < self.reno.cwnd) {
            let (seq, payload, head) = self.snd.retransmit_lost(now)?;
            self.stats.segments_retransmitted += 1;
            self.stats.data_segments_sent += 1;
            if self.ca == CaState::Recovery {
                self.prr.out += 1;
            }
            if head {
                self.rto_at = Some(now + self.rtt.rto());
            }
            self.burst_open = true;
            return Some((seq, payload));
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
        if prior_packets == 0 && self.config.slow_start_after_idle {
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
        let (seq, payload) = self.snd.send_new(now)?;
        self.stats.data_segments_sent += 1;
        if self.ca == CaState::Recovery {
            self.prr.out += 1;
        }
        if prior_packets == 0 {
            self.rto_at = Some(now + self.rtt.rto());
        }
        self.lsndtime = now;
        self.burst_open = true;
        Some((seq, payload))
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
