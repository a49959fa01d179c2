//! [`Connection`]: one end of a TCP connection, sans-IO.
//!
//! Call order (any interleaving, `now` never decreasing): [`Connection::handle_segment`] for
//! each arriving segment, [`Connection::handle_timeout`] when [`Connection::poll_timeout`]
//! says, application [`Connection::write`] / [`Connection::read`], and after each of these
//! [`Connection::poll_transmit`] until it returns `None`. An early `handle_timeout` is a no-op.

use coaplab_base::time::{earliest, Instant};

use super::cc::CcState;
use super::config::{TcpConfig, TcpConfigError};
use super::handshake::{Handshake, HandshakeTimeout};
use super::newreno::{Prr, Reno};
use super::receiver::Receiver;
use super::rtt::RttEstimator;
use super::segment::Segment;
use super::send_buffer::Generate;
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

/// Connection state (RFC 9293 §3.3.2; TIME-WAIT has no 2MSL timer here: it is final and
/// still answers a retransmitted FIN).
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
    /// Our FIN sent, not yet acknowledged; the peer's not received.
    FinWait1,
    /// Our FIN acknowledged; waiting for the peer's.
    FinWait2,
    /// Both FINs crossed; ours not yet acknowledged.
    Closing,
    /// Active close complete.
    TimeWait,
    /// The peer's FIN received; we have not closed.
    CloseWait,
    /// Passive close: our FIN sent after the peer's, not yet acknowledged.
    LastAck,
    /// Passive close complete.
    Closed,
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
    /// The segment's sequence range runs past the 64-bit sequence space.
    SeqOverflow(u64),
}

impl core::fmt::Display for SegmentError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            SegmentError::AckBeyondSent { ack, snd_nxt } => {
                write!(f, "ack {ack} beyond snd_nxt {snd_nxt}")
            }
            SegmentError::Unexpected(s) => write!(f, "unexpected segment in state {s:?}"),
            SegmentError::SeqOverflow(seq) => write!(f, "sequence range from {seq} overflows"),
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
    /// The last `poll_transmit` found nothing to send and nothing has changed since, so the
    /// next one would find nothing either: it returns at once (the driver polls both ends
    /// after every segment and timer, and four polls in five find nothing). Cleared by every
    /// public method that changes the connection. Only for unpaced connections, whose answer
    /// depends on their state alone; a paced (BBR) one's also depends on the time.
    pub(super) quiet: bool,
    /// The application called `close`.
    pub(super) closed_by_app: bool,
    /// Our FIN went out before the peer's FIN arrived (active close).
    pub(super) active_close: Option<bool>,
    pub(super) stats: TcpStats,
    /// Delivery-rate sampling, pacing and BBR (`cc.rs`).
    pub(super) cc: CcState,
    /// TCP Fast Open (RFC 7413): a client with a cookie sends data in its SYN; a server
    /// accepts such data and may send before the handshake completes.
    pub(super) fast_open: bool,
    /// Client: data bytes the first SYN carried (0 without TFO or without data).
    pub(super) syn_data_bytes: u64,
    /// TFO without a cookie yet: a client's SYNs ask for one; a Fast Open server's SYN-ACK
    /// hands one out because the SYN asked.
    pub(super) cookie_request: bool,
    /// Client: the SYN-ACK carried a cookie (a later connection may send data in its SYN).
    pub(super) cookie_received: bool,
}

impl Connection {
    fn new(config: TcpConfig, role: Role, state: TcpState) -> Self {
        let max_timeouts = match role {
            Role::Client => config.syn_retries,
            Role::Server => config.synack_retries,
        };
        let mut hs = Handshake::new(config.rto_initial, config.rto_max, max_timeouts)
            .with_timer_wheel(config.timer_wheel_hz);
        hs.pending = u32::from(role == Role::Client);
        Connection {
            hs,
            role,
            state,
            snd: Sender::new(1, config.mss()),
            rcv: Receiver::for_config(1, &config),
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
            quiet: false,
            closed_by_app: false,
            active_close: None,
            stats: TcpStats::default(),
            cc: CcState::new(),
            fast_open: false,
            syn_data_bytes: 0,
            cookie_request: false,
            cookie_received: false,
            config,
        }
    }

    /// Active open: the SYN is the first thing [`Connection::poll_transmit`] returns.
    pub fn connect(config: TcpConfig) -> Result<Self, TcpConfigError> {
        config.validate()?;
        Ok(Connection::new(config, Role::Client, TcpState::SynSent))
    }

    /// Passive open: waits for a SYN.
    pub fn listen(config: TcpConfig) -> Result<Self, TcpConfigError> {
        config.validate()?;
        Ok(Connection::new(config, Role::Server, TcpState::Listen))
    }

    /// Active open with a TCP Fast Open cookie (from an earlier, unmeasured connection,
    /// docs/experiments.md §8e): bytes written before the first [`Connection::poll_transmit`] ride
    /// in the SYN, at most MSS − 40 of them (Linux `tcp_send_syn_data`: 48 B at MTU 128); the SYN
    /// carries the cookie option ([`super::TFO_OPTION_BYTES`]). Retransmitted SYNs carry no data;
    /// data the SYN-ACK does not acknowledge is sent again after the handshake.
    pub fn connect_fast_open(config: TcpConfig) -> Result<Self, TcpConfigError> {
        let mut c = Connection::connect(config)?;
        c.fast_open = true;
        Ok(c)
    }

    /// Active open with `TCP_FASTOPEN_CONNECT` but no cookie cached yet (docs/experiments.md §8e's
    /// warm-up connection): the SYN asks for a cookie ([`super::TFO_REQUEST_OPTION_BYTES`]) and
    /// carries no data; bytes written before the handshake ends wait for it. A Fast Open
    /// server's SYN-ACK answers with a cookie ([`Connection::fast_open_cookie_received`]).
    pub fn connect_fast_open_request(config: TcpConfig) -> Result<Self, TcpConfigError> {
        let mut c = Connection::connect(config)?;
        c.cookie_request = true;
        Ok(c)
    }

    /// Whether the SYN-ACK carried a TFO cookie (asked for by
    /// [`Connection::connect_fast_open_request`]): the next connection to this server may use
    /// [`Connection::connect_fast_open`].
    pub fn fast_open_cookie_received(&self) -> bool {
        self.cookie_received
    }

    /// Passive open that accepts Fast Open data (`TCP_FASTOPEN` on the listener, every cookie
    /// valid): the SYN-ACK acknowledges the SYN's data, which is readable at once, and this
    /// end may send data right after its SYN-ACK, before the handshake's final ACK (Linux
    /// accepts the child socket in SYN-RECV).
    pub fn listen_fast_open(config: TcpConfig) -> Result<Self, TcpConfigError> {
        let mut c = Connection::listen(config)?;
        c.fast_open = true;
        Ok(c)
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
    pub fn rto(&self) -> coaplab_base::time::Duration {
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
    /// the handshake completes wait for it; bytes written after [`Connection::close`] are
    /// refused.
    pub fn write(&mut self, bytes: &[u8]) -> Result<usize, ConnectionFailed> {
        self.write_parts(bytes, None)
    }

    /// Queues one application write of `head` then a generated `tail` (one push, as
    /// [`Connection::write`]): the tail's bytes are produced only when a segment carries
    /// them, and every written byte is released once acknowledged.
    pub fn write_parts(
        &mut self,
        head: &[u8],
        tail: Option<std::sync::Arc<dyn Generate>>,
    ) -> Result<usize, ConnectionFailed> {
        self.quiet = false;
        if self.state == TcpState::Failed || self.closed_by_app {
            return Err(ConnectionFailed);
        }
        self.cc_on_write();
        let len = head.len() + tail.as_ref().map_or(0, |t| t.len() as usize);
        self.snd.write_parts(head, tail);
        Ok(len)
    }

    /// Hands back a segment from [`Connection::poll_transmit`] once it has been sent (its
    /// bytes copied onto the wire): its payload buffer carries the next segment's bytes, so a
    /// driver that recycles allocates nothing per segment.
    pub fn recycle(&mut self, seg: Segment) {
        self.snd.recycle(seg.payload);
    }

    /// Written bytes the connection holds in memory: unacknowledged or unsent, a generated
    /// tail not counted.
    pub fn send_buffer_bytes(&self) -> usize {
        self.snd.held_bytes()
    }

    /// Closes the sending direction: a FIN follows the written data (a segment of its own).
    pub fn close(&mut self) {
        self.quiet = false;
        if !self.closed_by_app {
            self.closed_by_app = true;
            self.snd.close();
        }
    }

    /// Whether the peer closed its direction (its FIN arrived in order).
    pub fn peer_closed(&self) -> bool {
        self.rcv.fin_received()
    }

    /// Moves received in-order bytes into `buf`; returns how many.
    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        self.quiet = false;
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
        // Pairwise, not `[..].into_iter().flatten().min()`: the driver asks after every
        // segment, and the array form costs a store-forwarding stall (`earliest`).
        earliest(
            earliest(self.hs.deadline(), self.rto_at),
            earliest(self.rcv.delack_deadline(), self.cc.pacing.wait),
        )
    }

    /// Runs every timer due at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.quiet = false;
        if self.hs.deadline().is_some_and(|t| t <= now) {
            let armed = self.hs.rto();
            match self.hs.on_timeout(now) {
                HandshakeTimeout::Retransmit => {
                    self.stats.syn_retransmissions += 1;
                    self.stats.on_rto_expired(armed);
                }
                HandshakeTimeout::GiveUp => self.state = TcpState::Failed,
            }
        }
        if self.rto_at.is_some_and(|t| t <= now) {
            self.on_rto(now);
        }
        self.rcv.on_delack_timeout(now, self.rtt.rto());
        if self.cc.pacing.wait.is_some_and(|t| t <= now) {
            // The departure time came: the next `poll_transmit` sends.
            self.cc.pacing.wait = None;
        }
    }

    /// Takes in one segment from the peer, owned or borrowed (a driver that decodes segments
    /// into one reused [`Segment`] passes `&seg` and allocates nothing per segment).
    pub fn handle_segment(
        &mut self,
        now: Instant,
        seg: impl std::borrow::Borrow<Segment>,
    ) -> Result<(), SegmentError> {
        self.quiet = false;
        let seg = seg.borrow();
        self.stats.segments_received += 1;
        if seg.seq.checked_add(seg.seq_len() + 1).is_none() {
            return Err(SegmentError::SeqOverflow(seg.seq));
        }
        match self.state {
            TcpState::Listen if seg.syn && seg.ack.is_none() => {
                self.rcv = Receiver::for_config(seg.seq + 1, &self.config);
                self.state = TcpState::SynReceived;
                self.hs.pending = 1;
                // A SYN with a TFO option but no cookie asks for one (RFC 7413 §4.1.2).
                let tfo_bytes = self.tfo_option_bytes(seg);
                self.cookie_request =
                    self.fast_open && tfo_bytes == super::TFO_REQUEST_OPTION_BYTES;
                if self.fast_open && tfo_bytes > 0 && !seg.payload.is_empty() {
                    // The SYN-ACK, built after this, acknowledges the data.
                    self.rcv
                        .on_data(now, seg.seq + 1, &seg.payload, self.rtt.rto());
                }
                Ok(())
            }
            TcpState::SynSent
                if seg.syn
                    && seg
                        .ack
                        .is_some_and(|a| a == 1 || a == 1 + self.syn_data_bytes) =>
            {
                self.rcv = Receiver::for_config(seg.seq + 1, &self.config);
                self.cookie_received = self.cookie_request && self.tfo_option_bytes(seg) > 0;
                self.establish(now);
                if self.syn_data_bytes > 0 {
                    match seg.ack {
                        // The SYN's data is acknowledged with it (`tcp_rcv_fastopen_synack`).
                        // One RTT sample per ACK (`tcp_clean_rtx_queue`), and `establish`
                        // took it from the SYN already.
                        Some(a) if a > 1 => {
                            let rtt = self.rtt.clone();
                            self.on_ack(now, a, false);
                            self.rtt = rtt;
                        }
                        // Data refused: send it again now (`tcp_rcv_fastopen_synack`).
                        _ => self.snd.mark_head_lost(),
                    }
                }
                self.rcv.request_ack();
                Ok(())
            }
            TcpState::SynReceived if seg.syn && seg.ack.is_none() => {
                self.hs.resend_now();
                self.stats.syn_retransmissions += 1;
                Ok(())
            }
            TcpState::SynReceived
                if !seg.syn && seg.ack.is_some_and(|a| a == 1 || (self.fast_open && a > 1)) =>
            {
                self.establish(now);
                self.on_established_segment(now, seg)
            }
            TcpState::Established
            | TcpState::FinWait1
            | TcpState::FinWait2
            | TcpState::Closing
            | TcpState::TimeWait
            | TcpState::CloseWait
            | TcpState::LastAck => {
                let r = self.on_established_segment(now, seg);
                self.update_close_state();
                r
            }
            s => Err(SegmentError::Unexpected(s)),
        }
    }

    /// The Fast Open option bytes of a SYN or SYN-ACK: its option bytes beyond
    /// `syn_options_bytes` (MSS, window scale), which both ends are configured with alike.
    fn tfo_option_bytes(&self, seg: &Segment) -> u32 {
        seg.options_bytes
            .saturating_sub(self.config.syn_options_bytes)
    }

    /// The instant an RTO armed at `now` fires: `now + rto`, or its Linux timer-wheel bucket
    /// when `timer_wheel_hz` is set.
    pub(super) fn rto_deadline(&self, now: Instant) -> Instant {
        super::timer_wheel::expiry(now, self.rtt.rto(), self.config.timer_wheel_hz)
    }

    /// Derives the closing states from the FINs sent, acknowledged and received.
    pub(super) fn update_close_state(&mut self) {
        if self.state == TcpState::Failed || self.state == TcpState::SynSent {
            return;
        }
        let (sent, acked, got) = (
            self.snd.fin_sent(),
            self.snd.fin_acked(),
            self.rcv.fin_received(),
        );
        if self.active_close.is_none() && (sent || got) {
            self.active_close = Some(sent && !got);
        }
        let active = self.active_close == Some(true);
        self.state = match (sent, acked, got) {
            (false, _, false) => return,
            (false, _, true) => TcpState::CloseWait,
            (true, false, false) => TcpState::FinWait1,
            (true, true, false) => TcpState::FinWait2,
            (true, false, true) if active => TcpState::Closing,
            (true, false, true) => TcpState::LastAck,
            (true, true, true) if active => TcpState::TimeWait,
            (true, true, true) => TcpState::Closed,
        };
    }

    fn establish(&mut self, now: Instant) {
        self.hs.finish();
        self.state = TcpState::Established;
        let sample = self.hs.rtt_sample(now);
        match sample {
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
        self.cc_establish(now, sample);
    }

    fn on_established_segment(&mut self, now: Instant, seg: &Segment) -> Result<(), SegmentError> {
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
        self.rcv.on_data(now, seg.seq, &seg.payload, self.rtt.rto());
        if seg.fin {
            let closing = self.snd.fin_sent();
            self.rcv
                .on_fin(now, seg.seq + seg.payload.len() as u64, closing);
        }
        Ok(())
    }
}
