//! [`Connection`]: one end of a TCP connection, sans-IO.
//!
//! Call order (any interleaving, `now` never decreasing): [`Connection::handle_segment`] for
//! each arriving segment, [`Connection::handle_timeout`] when [`Connection::poll_timeout`]
//! says, application [`Connection::write`] / [`Connection::read`], and after each of these
//! [`Connection::poll_transmit`] until it returns `None`. An early `handle_timeout` is a no-op.
//!
//! One `impl Connection`, here: the public API and the glue between the components, each of
//! which owns its fields and has its own `impl` in its own file (quinn-proto's `connection/`):
//!
//! * the sending half's queue and scoreboard ([`Sender`]) and the receiving half's reassembly
//!   and delayed ACK ([`Receiver`]), the handshake timer ([`Handshake`]) and the RTT estimator
//!   ([`RttEstimator`]) — siblings in `tcp/`, used here;
//! * `recovery`: congestion state, Reno window and PRR (`tcp_fastretrans_alert`, the window
//!   half of an RTO);
//! * `cc_state`: delivery-rate sampling, the pacing clock and BBR at Linux's hook points;
//! * `rto_timer`: the retransmission timer's deadline and expiry count;
//! * `cwnd_validation`: `tcp_cwnd_validate`'s flight record;
//! * `fast_open`: TCP Fast Open's mode and cookie exchange; `close`: the closing states;
//! * `timer`: every deadline by name (`Timer`) and the one `next_deadline`;
//! * `error`: what the connection refuses.
//!
//! What an ACK does (Linux `tcp_ack`): [`Connection::handle_segment`] → `on_ack` removes the
//! acknowledged segments, samples the RTT and the delivery rate, runs `fastretrans_alert`, then
//! BBR's `cong_control` or Reno's. What `poll_transmit` sends: the SYN / SYN-ACK, lost segments
//! then new data as the window allows (`tcp_xmit_retransmit_queue`, `tcp_write_xmit`), else a
//! due pure ACK.

mod cc_state;
mod close;
mod cwnd_validation;
mod error;
mod fast_open;
mod recovery;
mod rto_timer;
mod timer;

use coaplab_base::rng::SeededRandom;
use coaplab_base::time::{Duration, Instant};

pub use super::state::{CaState, Role, TcpState};
pub use error::{ConnectionFailed, SegmentError};

use super::bbr::{Bbr, Tp};
use super::cc::CongestionControl;
use super::config::{RtoBackoffReset, TcpConfig, TcpConfigError};
use super::handshake::{Handshake, HandshakeTimeout};
use super::rate::RateSample;
use super::receiver::Receiver;
use super::rtt::RttEstimator;
use super::segment::Segment;
use super::send_buffer::Generate;
use super::sender::{Outgoing, Sender};
use super::stats::TcpStats;
use cc_state::CcState;
use close::Close;
use cwnd_validation::CwndValidation;
use fast_open::FastOpen;
use recovery::Recovery;
use rto_timer::RtoTimer;
use timer::Timer;

/// One end of a TCP connection (see the module doc for the call order).
#[derive(Debug, Clone)]
pub struct Connection {
    config: TcpConfig,
    role: Role,
    state: TcpState,
    hs: Handshake,
    snd: Sender,
    rcv: Receiver,
    rtt: RttEstimator,
    rto: RtoTimer,
    recovery: Recovery,
    cwv: CwndValidation,
    /// Delivery-rate sampling, pacing and BBR.
    cc: CcState,
    tfo: FastOpen,
    close: Close,
    /// Last instant new data was sent (`lsndtime`).
    lsndtime: Instant,
    /// The last `poll_transmit` found nothing to send and nothing has changed since, so the
    /// next one would find nothing either: it returns at once (the driver polls both ends
    /// after every segment and timer, and four polls in five find nothing). Cleared by every
    /// public method that changes what the connection sends ([`Connection::read`] does not).
    /// Only for unpaced connections, whose answer depends on their state alone; a paced (BBR)
    /// one's also depends on the time.
    quiet: bool,
    stats: TcpStats,
}

impl Connection {
    fn new(config: TcpConfig, role: Role, state: TcpState) -> Self {
        let max_timeouts = match role {
            Role::Client => config.syn_retries,
            Role::Server => config.synack_retries,
        };
        let hs = Handshake::new(config.rto_initial, config.rto_max, max_timeouts)
            .with_timer_wheel(config.timer_wheel_hz);
        let hs = match role {
            Role::Client => hs,
            Role::Server => hs.listening(),
        };
        Connection {
            hs,
            role,
            state,
            snd: Sender::new(1, config.mss()),
            rcv: Receiver::for_config(1, &config),
            rtt: RttEstimator::new(config.rto_initial, config.rto_min, config.rto_max),
            rto: RtoTimer::new(config.timer_wheel_hz),
            recovery: Recovery::new(config.iw, config.recovery, config.dupthresh),
            cwv: CwndValidation::new(),
            cc: CcState::new(),
            tfo: FastOpen::default(),
            close: Close::default(),
            lsndtime: Instant::ZERO,
            quiet: false,
            stats: TcpStats::default(),
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
        c.tfo.enable();
        Ok(c)
    }

    /// Active open with `TCP_FASTOPEN_CONNECT` but no cookie cached yet (docs/experiments.md §8e's
    /// warm-up connection): the SYN asks for a cookie ([`super::TFO_REQUEST_OPTION_BYTES`]) and
    /// carries no data; bytes written before the handshake ends wait for it. A Fast Open
    /// server's SYN-ACK answers with a cookie ([`Connection::fast_open_cookie_received`]).
    pub fn connect_fast_open_request(config: TcpConfig) -> Result<Self, TcpConfigError> {
        let mut c = Connection::connect(config)?;
        c.tfo.request_cookie();
        Ok(c)
    }

    /// Whether the SYN-ACK carried a TFO cookie (asked for by
    /// [`Connection::connect_fast_open_request`]): the next connection to this server may use
    /// [`Connection::connect_fast_open`].
    pub fn fast_open_cookie_received(&self) -> bool {
        self.tfo.cookie_received()
    }

    /// Passive open that accepts Fast Open data (`TCP_FASTOPEN` on the listener, every cookie
    /// valid): the SYN-ACK acknowledges the SYN's data, which is readable at once, and this
    /// end may send data right after its SYN-ACK, before the handshake's final ACK (Linux
    /// accepts the child socket in SYN-RECV).
    pub fn listen_fast_open(config: TcpConfig) -> Result<Self, TcpConfigError> {
        let mut c = Connection::listen(config)?;
        c.tfo.enable();
        Ok(c)
    }

    /// Gives BBR its random stream (the PROBE_BW start phase); without one it uses
    /// `SeededRandom::new(0)`. Call before the handshake completes.
    pub fn set_random(&mut self, rng: SeededRandom) {
        self.quiet = false;
        self.cc.set_random(rng);
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
        self.recovery.ca()
    }

    /// Congestion window in segments.
    pub fn cwnd(&self) -> u32 {
        self.recovery.cwnd()
    }

    /// Slow-start threshold in segments.
    pub fn ssthresh(&self) -> u32 {
        self.recovery.ssthresh()
    }

    /// Segments in flight (`tcp_packets_in_flight`, the PRR pipe).
    pub fn pipe(&self) -> u32 {
        self.snd.in_flight()
    }

    /// Current RTO (backed off after timeouts until a fresh sample).
    pub fn rto(&self) -> Duration {
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

    /// BBR's state, when the connection runs BBR.
    pub fn bbr(&self) -> Option<&Bbr> {
        self.cc.bbr()
    }

    /// Earliest departure time of the next data segment (BBR pacing).
    pub fn pacing_time(&self) -> Instant {
        self.cc.pacing_time()
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
        if self.state == TcpState::Failed || self.close.closed_by_app() {
            return Err(ConnectionFailed);
        }
        self.cc
            .on_write(&self.snd, self.config.mss(), self.recovery.cwnd());
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
        if self.close.close() {
            self.snd.close();
        }
    }

    /// Whether the peer closed its direction (its FIN arrived in order).
    pub fn peer_closed(&self) -> bool {
        self.rcv.fin_received()
    }

    /// Moves received in-order bytes into `buf`; returns how many.
    ///
    /// Leaves a quiet connection quiet: what it sends depends on the sequence numbers and the
    /// ACK state, not on the bytes waiting to be read (the model has no receive window). The
    /// driver reads after every data segment and polls again: that poll finds it quiet.
    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        self.rcv.read(buf)
    }

    /// Hands the received in-order bytes to `f` where they lie, in one or two calls (the
    /// buffer is a ring), and drops them; returns how many. [`Connection::read`] without its
    /// copy into the caller's buffer (tcp-100 star: ~25 instructions per link packet). Leaves a
    /// quiet connection quiet, as `read` does.
    pub fn read_in_place(&mut self, f: impl FnMut(&[u8])) -> usize {
        self.rcv.read_in_place(f)
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
        timer::next_deadline(|t| self.deadline(t))
    }

    /// Each timer's deadline, asked of the component that owns it.
    #[inline(always)]
    fn deadline(&self, timer: Timer) -> Option<Instant> {
        match timer {
            Timer::Handshake => self.hs.deadline(),
            Timer::Retransmission => self.rto.deadline(),
            Timer::DelayedAck => self.rcv.delack_deadline(),
            Timer::Pacing => self.cc.pacing_deadline(),
        }
    }

    /// Runs every timer due at `now`: the handshake's, the RTO, the delayed ACK, the pacing
    /// wake-up, in this order (`Timer::ALL`).
    pub fn handle_timeout(&mut self, now: Instant) {
        self.quiet = false;
        // `Timer::ALL`'s order, unrolled by hand: a loop over it cost ~70 instructions more
        // per call (callgrind; the driver calls this at every timer event); constant kinds fold.
        let [first, second, third, fourth] = Timer::ALL;
        self.serve_if_due(first, now);
        self.serve_if_due(second, now);
        self.serve_if_due(third, now);
        self.serve_if_due(fourth, now);
    }

    /// Serves `timer` if it is due at `now`.
    #[inline(always)]
    fn serve_if_due(&mut self, timer: Timer, now: Instant) {
        if self.deadline(timer).is_some_and(|t| t <= now) {
            self.on_timer(timer, now);
        }
    }

    /// Serves `timer`, due at `now`.
    #[inline(always)]
    fn on_timer(&mut self, timer: Timer, now: Instant) {
        match timer {
            Timer::Handshake => {
                let armed = self.hs.rto();
                match self.hs.on_timeout(now) {
                    HandshakeTimeout::Retransmit => {
                        self.stats.syn_retransmissions += 1;
                        self.stats.on_rto_expired(armed);
                    }
                    HandshakeTimeout::GiveUp => self.state = TcpState::Failed,
                }
            }
            Timer::Retransmission => self.on_rto(now),
            Timer::DelayedAck => self.rcv.on_delack_timeout(now, self.rtt.rto()),
            // The departure time came: the next `poll_transmit` sends.
            Timer::Pacing => self.cc.clear_pacing_wait(),
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
                self.hs.on_syn();
                let tfo_bytes = self.tfo_option_bytes(seg);
                if self.tfo.on_syn(tfo_bytes, !seg.payload.is_empty()) {
                    // The SYN-ACK, built after this, acknowledges the data.
                    self.rcv
                        .on_data(now, seg.seq + 1, &seg.payload, self.rtt.rto());
                }
                Ok(())
            }
            TcpState::SynSent
                if seg.syn && seg.ack.is_some_and(|a| self.tfo.synack_acceptable(a)) =>
            {
                self.rcv = Receiver::for_config(seg.seq + 1, &self.config);
                self.tfo.on_synack(self.tfo_option_bytes(seg));
                self.establish(now);
                if self.tfo.syn_data_bytes() > 0 {
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
                if !seg.syn
                    && seg
                        .ack
                        .is_some_and(|a| a == 1 || (self.tfo.enabled() && a > 1)) =>
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

    /// Derives the closing states from the FINs sent, acknowledged and received.
    fn update_close_state(&mut self) {
        if self.state == TcpState::Failed || self.state == TcpState::SynSent {
            return;
        }
        self.state = self.close.next_state(
            self.state,
            self.snd.fin_sent(),
            self.snd.fin_acked(),
            self.rcv.fin_received(),
        );
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
        self.recovery.set_cwnd(if self.hs.retransmits() > 1 {
            1
        } else {
            self.config.iw
        });
        self.lsndtime = now;
        // `tcp_init_transfer`: the SYN counts as delivered, its RTT seeds `tcp_min_rtt`, and
        // BBR starts (`bbr_init`).
        self.cc.on_established(now, sample);
        if let CongestionControl::Bbr(cfg) = &self.config.cc {
            let tp = self.tp(now);
            self.cc.start_bbr(cfg.clone(), self.config.mss(), &tp);
        }
    }

    /// Inline in `handle_segment`, nearly every segment's path: its call cost ~25 instructions
    /// per link packet (tcp-100 star, callgrind).
    #[inline]
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

    /// Processes cumulative `ack` (≤ snd_nxt, checked; Linux `tcp_ack`); `pure` when the
    /// segment carried no data and no FIN (a candidate duplicate ACK).
    fn on_ack(&mut self, now: Instant, ack: u64, pure: bool) {
        let snd_una = self.snd.snd_una();
        if ack < snd_una {
            return; // old ACK
        }
        let prior_packets = self.snd.packets_out();
        if prior_packets == 0 {
            return; // nothing outstanding (`no_queue`)
        }
        let advanced = ack > snd_una;
        let is_dupack = !advanced && pure;
        let mut delivered = 0;
        let mut data_acked = false;
        let mut retrans_acked = false;
        let mut rs = RateSample::new(self.snd.in_flight());
        let (prior_lost, prior_sacked) = (self.snd.lost_total(), self.snd.sacked_out());
        let mut acked_segments = 0;
        if advanced {
            self.rto.on_progress();
            let rate = self.cc.rate_mut();
            let acked = self
                .snd
                .on_cumulative_ack(now, ack, |d| rate.on_delivered(&mut rs, d));
            acked_segments = acked.segments;
            data_acked = acked.segments > 0;
            retrans_acked = acked.retrans_acked;
            if let Some(r) = acked.rtt {
                self.rtt.sample(r, self.snd.snd_una(), self.snd.snd_nxt());
            } else if self.config.rto_backoff_reset == RtoBackoffReset::NewAck {
                // ns-3's rule: a new ACK recomputes the RTO from the estimator, so a backoff
                // does not outlive it (Linux keeps it until a valid sample).
                self.rtt.clear_backoff();
            }
            if let Some(r) = acked.newest_rtt {
                rs.rtt_us = r.as_micros();
                self.cc.rate_mut().on_rtt(rs.rtt_us);
            }
            delivered = self
                .recovery
                .on_cumulative_ack(&mut self.snd, acked.segments);
            if data_acked {
                let outstanding = self.snd.packets_out() > 0;
                self.rto.rearm_if(outstanding, now, self.rtt.rto());
            }
            self.cwv.on_activity();
        }
        if is_dupack || self.recovery.ca() != CaState::Open {
            delivered += self.recovery.fastretrans_alert(
                &mut self.snd,
                self.cc.bbr_mut(),
                &mut self.stats,
                advanced,
                is_dupack,
                delivered,
            );
        }
        let rate = self.cc.rate_mut();
        rate.delivered += u64::from(delivered);
        // `FLAG_ACK_MAYBE_DELAYED`: a lone segment acknowledged, nothing else delivered since.
        rs.is_ack_delayed = acked_segments == 1
            && prior_sacked == 0
            && rs.prior_at.is_some()
            && rs.prior_delivered + 1 == rate.delivered;
        let lost = (self.snd.lost_total() - prior_lost) as u32;
        rate.generate(now, delivered, lost, &mut rs);
        // BBR's view of the connection only when it runs BBR: Reno's ACKs skip building it.
        let bbr = match self.cc.bbr() {
            Some(_) => {
                let tp = self.tp(now);
                self.cc.bbr_on_ack(&tp, &rs)
            }
            None => None,
        };
        match bbr {
            Some(w) => self.recovery.set_window(w.cwnd, w.ssthresh),
            None => self.recovery.cong_control(
                &self.snd,
                &self.cwv,
                delivered,
                data_acked,
                retrans_acked,
            ),
        }
    }

    /// `tcp_retransmit_timer` with `tcp_enter_loss`: everything outstanding is lost, cwnd 1,
    /// RTO doubled (kept until a fresh sample).
    fn on_rto(&mut self, now: Instant) {
        if self.snd.packets_out() == 0 {
            self.rto.stop();
            return;
        }
        // The timer ran for the RTO in effect: re-armed with it on every ACK that advanced.
        self.stats.on_rto_expired(self.rtt.rto());
        self.recovery
            .enter_loss(&mut self.snd, self.cc.bbr_mut(), self.rto.expiries());
        let tp = self.tp(now);
        self.cc.on_loss(&tp);
        self.rto.on_expired();
        self.rtt.back_off();
        self.rto.arm(now, self.rtt.rto());
    }

    /// Whether data segments are paced (BBR).
    fn paced(&self) -> bool {
        matches!(self.config.cc, CongestionControl::Bbr(_))
    }

    /// What BBR reads of the connection now.
    fn tp(&self, now: Instant) -> Tp {
        let rate = self.cc.rate();
        Tp {
            now,
            delivered: rate.delivered,
            delivered_at: rate.delivered_at,
            lost: self.snd.lost_total(),
            in_flight: self.snd.in_flight(),
            ca: self.recovery.ca(),
            wstamp: self.cc.pacing_time(),
            srtt_us: self.rtt.srtt().map(|d| d.as_micros()),
            cwnd: self.recovery.cwnd(),
        }
    }

    /// Whether [`Connection::poll_transmit`] would return `None` at once: it found nothing to
    /// send and nothing that changes what it sends happened since. A driver skips such a
    /// connection without the call.
    #[inline]
    pub fn is_quiet(&self) -> bool {
        self.quiet
    }

    /// The next segment to put on the wire, if any.
    ///
    /// Inline, the rest out of line: the driver polls both ends after every segment and
    /// timer and half of the polls find the connection quiet, which then costs the caller a
    /// load and a branch instead of a call (tcp-100 star: 5.3 polls per link packet).
    #[must_use]
    #[inline]
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
        self.poll_transmit_busy(now)
    }

    /// [`Connection::poll_transmit`] of a connection not known to be quiet.
    #[inline(never)]
    fn poll_transmit_busy(&mut self, now: Instant) -> Option<Segment> {
        let seg = self.next_segment(now);
        match &seg {
            Some(s) => {
                self.stats.segments_sent += 1;
                self.cc
                    .after_send(now, s.payload.len() as u32, &self.config.cc);
                if s.ack.is_some() {
                    self.rcv.on_ack_sent();
                }
                if s.fin {
                    self.update_close_state();
                }
            }
            // The end of a `tcp_write_xmit` pass.
            None if self.synchronized() => self.cwv.end_of_pass(&self.snd, self.recovery.cwnd()),
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
        if self.hs.due() {
            self.hs.on_sent(now);
            let first_syn = self.stats.segments_sent == 0;
            return Some(match self.role {
                Role::Client => self.syn(now, first_syn),
                Role::Server => Segment {
                    seq: 0,
                    ack,
                    syn: true,
                    fin: false,
                    payload: Vec::new(),
                    options_bytes: self.config.syn_options_bytes + self.tfo.synack_option_bytes(),
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
            TcpState::SynReceived => self.tfo.enabled() && self.hs.first_sent().is_some(),
            s => !matches!(s, TcpState::Listen | TcpState::SynSent | TcpState::Failed),
        }
    }

    /// The client's SYN. With a Fast Open cookie the first one also carries up to MSS − 40
    /// written bytes, recorded as a data segment in the retransmission queue (Linux
    /// `tcp_send_syn_data`).
    fn syn(&mut self, now: Instant, first_syn: bool) -> Segment {
        let mut payload = Vec::new();
        if self.tfo.enabled() && first_syn && self.snd.unsent_bytes() > 0 {
            let max_len = FastOpen::max_syn_data(self.config.mss());
            let tx = self.cc.on_send(now, 0);
            if let Some(out) = self.snd.send_new_at_most(now, tx, max_len) {
                self.tfo.on_syn_data_sent(out.payload.len() as u64);
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
            options_bytes: self.config.syn_options_bytes + self.tfo.client_syn_option_bytes(),
        }
    }

    /// A lost segment's retransmission or new data, as the window allows.
    fn next_data(&mut self, now: Instant) -> Option<Outgoing> {
        self.cc.clear_pacing_wait();
        let inflating = self.recovery.inflating();
        let cwnd = self.recovery.cwnd();
        if self.snd.has_lost_to_send() && (inflating || self.snd.in_flight() < cwnd) {
            if self.cc.pacing_blocks(now, self.recovery.ca()) {
                return None;
            }
            self.before_data_send(now);
            let tx = self.cc.on_send(now, self.snd.packets_out());
            let out = self.snd.retransmit_lost(now, tx)?;
            self.cc.on_retransmit();
            self.stats.segments_retransmitted += 1;
            self.stats.data_segments_sent += 1;
            self.recovery.on_data_sent();
            if out.head {
                self.rto.arm(now, self.rtt.rto());
            }
            self.cwv.on_activity();
            return Some(out);
        }
        let gate = if inflating {
            self.snd.packets_out()
        } else {
            self.snd.in_flight()
        };
        if !self.snd.has_unsent() || gate >= cwnd {
            return None;
        }
        let prior_packets = self.snd.packets_out();
        // BBR (a `cong_control` module) never restarts from idle (`tcp_slow_start_after_idle_check`).
        if prior_packets == 0 && self.config.slow_start_after_idle && !self.paced() {
            let idle = now - self.lsndtime;
            let rto = self.rtt.rto();
            if idle > rto {
                let idle_rtos = ((idle.as_nanos() - 1) / rto.as_nanos()) as u64;
                self.recovery.restart_after_idle(self.config.iw, idle_rtos);
                if gate >= self.recovery.cwnd() {
                    return None;
                }
            }
        }
        if self.cc.pacing_blocks(now, self.recovery.ca()) {
            return None;
        }
        self.before_data_send(now);
        let tx = self.cc.on_send(now, prior_packets);
        let out = self.snd.send_new(now, tx)?;
        self.stats.data_segments_sent += 1;
        self.recovery.on_data_sent();
        if prior_packets == 0 {
            self.rto.arm(now, self.rtt.rto());
        }
        self.lsndtime = now;
        self.rcv.on_new_data_sent(now);
        self.cwv.on_activity();
        Some(out)
    }

    /// Before a data segment leaves at `now`: `CA_EVENT_TX_START` when nothing is in flight
    /// (BBR sets cwnd).
    fn before_data_send(&mut self, now: Instant) {
        if self.snd.in_flight() != 0 {
            return;
        }
        let tp = self.tp(now);
        if let Some(cwnd) = self.cc.on_tx_start(&tp) {
            self.recovery.set_cwnd(cwnd);
        }
    }
}
