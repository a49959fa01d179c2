//! The receiving half: reassembly and the delayed-ACK policy of docs/experiments.md §5.3.
//!
//! An ACK is due at once when more than one MSS of in-order data is unacknowledged (Linux
//! `__tcp_ack_snd_check`: `rcv_nxt − rcv_wup > rcv_mss`, i.e. every second full-sized segment),
//! when a segment arrives out of order or entirely duplicate, and when in-order data arrives
//! while the out-of-order queue is non-empty (hole filling). Otherwise the delayed-ACK timer is
//! armed at the first unacknowledged arrival, for a constant `delack`, and never pushed back.
//! Like the retransmission timer it lives on the kernel's timer wheel (`icsk_delack_timer`, a
//! `timer_list` armed by `sk_reset_timer` → `mod_timer`): with `timer_wheel_hz` set (default
//! 250) it fires at the end of its wheel bucket ([`super::timer_wheel::expiry`]). At HZ 250 the
//! 200-ms timeout is 50 jiffies, below `LVL_START(1)` = 63, so level 0 (1-jiffy granularity):
//! armed in jiffy `j` it fires at the start of jiffy `j + 51`, 200–204 ms later.
//!
//! Quick-ACK (`quickack_segments`, default 16, docs/experiments.md §5.3 revised): Linux's `icsk_ack.quick`.
//! The budget is set to `quickack_segments` (never lowered) when the first in-order data
//! arrives (`tcp_event_data_recv`, `ato == 0`), when in-order data arrives more than one RTO
//! after the previous data (`tcp_event_data_recv`, idle), and when an entirely old segment
//! arrives (`tcp_data_queue`, `tcp_enter_quickack_mode` for a retransmit). While it is
//! positive every in-order segment is ACKed at once; every segment sent with the ACK field
//! (pure ACK or data) spends one (`tcp_event_ack_sent` → `tcp_dec_quickack_mode`).
//!
//! Pingpong (interactive) mode suspends quick-ACK (`tcp_in_quickack_mode`: `quick &&
//! !pingpong`), so a request/response connection ACKs its first exchanges at once and then
//! lets each reply carry the ACK, as Linux does. This end enters it when it sends new data
//! less than `ato` after the last in-order data arrived (`tcp_event_data_sent`; Linux ≥ 6.0's
//! `TCP_PINGPONG_THRESH` of 1, and 4.x's boolean, both enter on the first such reply) and
//! when the peer's FIN moves it to CLOSE-WAIT (`tcp_fin`); it leaves it when a retransmitted
//! segment forces quick-ACK (`tcp_enter_quickack_mode`) and when the delayed-ACK timer fires
//! with an ACK pending (`tcp_delack_timer_handler`: "delayed ACK missed"). `ato` follows
//! `tcp_event_data_recv`: `TCP_ATO_MIN` (40 ms) at the first data, then halved towards the
//! gaps between arrivals, at most the RTO. It decides pingpong only: the delayed-ACK timeout
//! stays the constant `delack` of the testbed. Not modelled: Linux's quick-ACK cap (16, and
//! half the receive window in MSS), the ACK a small read sends outside pingpong
//! (`tcp_cleanup_rbuf`, `ICSK_ACK_PUSHED`), and the adaptive delayed-ACK timeout.

use std::collections::{BTreeMap, VecDeque};

use coaplab_base::time::{Duration, Instant};

use super::config::TcpConfig;
use super::timer_wheel;

/// Reassembly buffer and ACK policy.
#[derive(Debug, Clone)]
pub struct Receiver {
    rcv_nxt: u64,
    /// `rcv_nxt` carried by the last ACK sent.
    rcv_wup: u64,
    readable: VecDeque<u8>,
    ooo: BTreeMap<u64, Vec<u8>>,
    ack_now: bool,
    delack_at: Option<Instant>,
    mss: u64,
    delack: Duration,
    /// Sequence number of the peer's FIN, once seen.
    fin_at: Option<u64>,
    /// The FIN was reached in order (rcv_nxt counts it).
    fin_received: bool,
    /// `quickack_segments`: the budget each quick-ACK trigger sets.
    quickack_max: u32,
    /// ACKs left to send at once (`icsk_ack.quick`).
    quick: u32,
    /// Arrival of the last in-order data (`icsk_ack.lrcvtime`); `None` before any.
    last_data_at: Option<Instant>,
    /// `timer_wheel_hz` of the delayed-ACK timer (0: exact timer).
    timer_wheel_hz: u32,
    /// Linux `icsk_ack.ato`, which decides pingpong mode; zero before any data.
    ato: Duration,
    /// Interactive mode: quick-ACK suspended (`inet_csk_in_pingpong_mode`).
    pingpong: bool,
}

/// Linux `TCP_ATO_MIN` (`HZ/25`): the first `ato`.
const ATO_MIN: Duration = Duration::from_millis(40);

impl Receiver {
    /// Expects `rcv_nxt` next.
    pub fn new(rcv_nxt: u64, mss: u32, delack: Duration) -> Self {
        Receiver {
            rcv_nxt,
            rcv_wup: rcv_nxt,
            readable: VecDeque::new(),
            ooo: BTreeMap::new(),
            ack_now: false,
            delack_at: None,
            mss: u64::from(mss),
            delack,
            fin_at: None,
            fin_received: false,
            quickack_max: 0,
            quick: 0,
            last_data_at: None,
            timer_wheel_hz: 0,
            ato: Duration::ZERO,
            pingpong: false,
        }
    }

    /// Expects `rcv_nxt` next, with the MSS, `delack`, `quickack_segments` and
    /// `timer_wheel_hz` of `config`.
    pub fn for_config(rcv_nxt: u64, config: &TcpConfig) -> Self {
        Receiver::new(rcv_nxt, config.mss(), config.delack)
            .with_quickack(config.quickack_segments)
            .with_timer_wheel(config.timer_wheel_hz)
    }

    /// Sets the quick-ACK budget `quickack_segments` (0: no quick-ACK phase).
    #[must_use]
    pub fn with_quickack(mut self, segments: u32) -> Self {
        self.quickack_max = segments;
        self
    }

    /// Fires the delayed-ACK timer on a Linux timer wheel of `hz` jiffies per second (0: exact).
    #[must_use]
    pub fn with_timer_wheel(mut self, hz: u32) -> Self {
        self.timer_wheel_hz = hz;
        self
    }

    /// Arms the delayed-ACK timer at `now` unless it runs already (never pushed back).
    fn arm_delack(&mut self, now: Instant) {
        if self.delack_at.is_none() {
            self.delack_at = Some(timer_wheel::expiry(now, self.delack, self.timer_wheel_hz));
        }
    }

    fn enter_quickack(&mut self) {
        self.quick = self.quick.max(self.quickack_max);
    }

    /// `tcp_enter_quickack_mode`: quick-ACK forced (a retransmit arrived), pingpong left.
    fn force_quickack(&mut self) {
        self.enter_quickack();
        self.pingpong = false;
        self.ato = ATO_MIN;
    }

    /// Whether in-order data is ACKed at once for quick-ACK (`tcp_in_quickack_mode`).
    fn in_quickack_mode(&self) -> bool {
        self.quick > 0 && !self.pingpong
    }

    /// Whether the connection is in pingpong (interactive) mode.
    pub fn pingpong(&self) -> bool {
        self.pingpong
    }

    /// This end sent new data at `now` (`tcp_event_data_sent`): a reply within `ato` of the
    /// last data received enters pingpong mode.
    pub fn on_new_data_sent(&mut self, now: Instant) {
        if self.last_data_at.is_some_and(|t| now - t < self.ato) {
            self.pingpong = true;
        }
    }

    /// ACKs still to send at once in the current quick-ACK phase.
    pub fn quickacks_left(&self) -> u32 {
        self.quick
    }

    /// Next expected sequence number (the cumulative ACK to send).
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// Takes in a data segment's payload at `seq`; `rto` is this end's current RTO (the
    /// idle gap after which quick-ACK is entered again).
    pub fn on_data(&mut self, now: Instant, seq: u64, payload: &[u8], rto: Duration) {
        let end = seq + payload.len() as u64;
        if payload.is_empty() {
            return;
        }
        if end <= self.rcv_nxt || seq > self.rcv_nxt {
            if seq > self.rcv_nxt {
                self.ooo.entry(seq).or_insert_with(|| payload.to_vec());
            } else {
                self.force_quickack(); // a retransmit of data we have
            }
            self.ack_now = true; // duplicate or out of order: a dupack at once
            return;
        }
        // tcp_event_data_recv: the first data starts the delayed-ACK engine; later arrivals
        // pull `ato` towards their gaps, and a gap above the RTO re-enters quick-ACK.
        match self.last_data_at {
            None => {
                self.enter_quickack();
                self.ato = ATO_MIN;
            }
            Some(t) => {
                let m = now - t;
                let half = |d: Duration| Duration::from_nanos(d.as_nanos() / 2);
                if m <= half(ATO_MIN) {
                    self.ato = half(self.ato) + half(ATO_MIN);
                } else if m < self.ato {
                    self.ato = (half(self.ato) + m).min(rto);
                } else if m > rto {
                    self.enter_quickack();
                }
            }
        }
        self.last_data_at = Some(now);
        let hole_filled = !self.ooo.is_empty();
        let skip = (self.rcv_nxt - seq) as usize;
        self.readable.extend(&payload[skip..]);
        self.rcv_nxt = end;
        while let Some((&s, _)) = self.ooo.first_key_value() {
            if s > self.rcv_nxt {
                break;
            }
            let (s, bytes) = self.ooo.pop_first().expect("peeked");
            let e = s + bytes.len() as u64;
            if e > self.rcv_nxt {
                self.readable.extend(&bytes[(self.rcv_nxt - s) as usize..]);
                self.rcv_nxt = e;
            }
        }
        // A FIN that waited behind a hole is reached by hole filling, which ACKs at once.
        self.take_fin(now, true);
        if hole_filled || self.rcv_nxt - self.rcv_wup > self.mss || self.in_quickack_mode() {
            self.ack_now = true;
        } else {
            self.arm_delack(now);
        }
    }

    /// Takes in a segment's FIN at `seq` (after its payload). Reached in order, it is ACKed
    /// at once when `closing` (our FIN is out: Linux `tcp_fin` in FIN-WAIT) and by the
    /// delayed-ACK rule otherwise (ESTABLISHED → CLOSE-WAIT, so the application's FIN can
    /// carry the ACK). Out of order or retransmitted: a duplicate ACK at once.
    pub fn on_fin(&mut self, now: Instant, seq: u64, closing: bool) {
        if self.fin_received {
            self.ack_now = true;
            return;
        }
        self.fin_at = Some(seq);
        self.take_fin(now, closing);
        if !self.fin_received {
            self.ack_now = true;
        }
    }

    fn take_fin(&mut self, now: Instant, closing: bool) {
        if !self.fin_received && self.fin_at == Some(self.rcv_nxt) {
            self.rcv_nxt += 1;
            self.fin_received = true;
            if closing {
                self.ack_now = true;
            } else {
                // tcp_fin, ESTABLISHED → CLOSE-WAIT: the application's FIN is expected soon.
                self.pingpong = true;
                self.arm_delack(now);
            }
        }
    }

    /// Whether the peer's FIN was received in order (no more data will come).
    pub fn fin_received(&self) -> bool {
        self.fin_received
    }

    /// A segment that needs an immediate ACK arrived (an old SYN-ACK, a duplicate SYN).
    pub fn request_ack(&mut self) {
        self.ack_now = true;
    }

    /// Whether a pure ACK should go out now.
    pub fn ack_due(&self) -> bool {
        self.ack_now
    }

    /// The delayed-ACK deadline, if armed.
    pub fn delack_deadline(&self) -> Option<Instant> {
        self.delack_at
    }

    /// The delayed-ACK timer fired: an ACK is due if data is unacknowledged. A missed
    /// delayed ACK leaves pingpong mode; outside it `ato` doubles, at most `rto`
    /// (`tcp_delack_timer_handler`).
    pub fn on_delack_timeout(&mut self, now: Instant, rto: Duration) {
        if self.delack_at.is_some_and(|t| t <= now) {
            self.delack_at = None;
            if self.rcv_nxt > self.rcv_wup {
                self.ack_now = true;
                if self.pingpong {
                    self.pingpong = false;
                    self.ato = ATO_MIN;
                } else {
                    self.ato = (self.ato * 2).min(rto);
                }
            }
        }
    }

    /// Any segment carrying the ACK field went out: nothing is pending any more.
    pub fn on_ack_sent(&mut self) {
        self.quick = self.quick.saturating_sub(1);
        self.rcv_wup = self.rcv_nxt;
        self.ack_now = false;
        self.delack_at = None;
    }

    /// Moves up to `buf.len()` in-order bytes to `buf`; returns how many.
    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        let n = buf.len().min(self.readable.len());
        // Two slice copies (the ring's two halves), not a byte-by-byte drain.
        let (front, back) = self.readable.as_slices();
        let k = n.min(front.len());
        buf[..k].copy_from_slice(&front[..k]);
        buf[k..n].copy_from_slice(&back[..n - k]);
        self.readable.drain(..n);
        n
    }

    /// Hands the in-order bytes to `f` where they lie (the ring's two halves, each non-empty
    /// one a call) and drops them; returns how many.
    pub fn read_in_place(&mut self, mut f: impl FnMut(&[u8])) -> usize {
        let n = self.readable.len();
        let (front, back) = self.readable.as_slices();
        for half in [front, back] {
            if !half.is_empty() {
                f(half);
            }
        }
        self.readable.clear();
        n
    }

    /// In-order bytes waiting to be read.
    pub fn readable_len(&self) -> usize {
        self.readable.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RTO: Duration = Duration::from_secs(1);

    fn rx() -> Receiver {
        Receiver::new(1, 256, Duration::from_millis(200))
    }

    #[test]
    fn second_full_segment_is_acked_at_once() {
        let mut r = rx();
        let t = Instant::from_millis(10);
        r.on_data(t, 1, &[0; 256], RTO);
        assert!(!r.ack_due());
        assert_eq!(r.delack_deadline(), Some(Instant::from_millis(210)));
        r.on_data(Instant::from_millis(90), 257, &[0; 256], RTO);
        assert!(r.ack_due());
        r.on_ack_sent();
        assert_eq!(r.delack_deadline(), None);
        assert_eq!(r.rcv_nxt(), 513);
    }

    #[test]
    fn delack_timer_is_not_pushed_back() {
        let mut r = rx();
        r.on_data(Instant::from_millis(0), 1, &[1; 6], RTO);
        r.on_data(Instant::from_millis(50), 7, &[2; 5], RTO);
        assert_eq!(r.delack_deadline(), Some(Instant::from_millis(200)));
        r.on_delack_timeout(Instant::from_millis(199), RTO);
        assert!(!r.ack_due());
        r.on_delack_timeout(Instant::from_millis(200), RTO);
        assert!(r.ack_due());
        let mut buf = [0; 16];
        assert_eq!(r.read(&mut buf), 11);
        assert_eq!(&buf[..11], &[1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2]);
    }

    #[test]
    fn reading_in_place_gives_the_bytes_in_order_across_the_rings_wrap() {
        let mut r = rx();
        let t = Instant::ZERO;
        let stream: Vec<u8> = (0..400u32).map(|i| (i % 251) as u8).collect();
        r.on_data(t, 1, &stream[..200], RTO);
        // A partial read moves the ring's start, so the next bytes wrap around its end.
        let mut head = [0; 150];
        assert_eq!(r.read(&mut head), 150);
        r.on_data(t, 201, &stream[200..], RTO);
        let mut got = head.to_vec();
        let mut calls = 0;
        let n = r.read_in_place(|b| {
            calls += 1;
            got.extend_from_slice(b);
        });
        assert_eq!(n, 250);
        assert!((1..=2).contains(&calls));
        assert_eq!(got, stream);
        assert_eq!(r.readable_len(), 0);
        assert_eq!(r.read_in_place(|_| panic!("nothing to read")), 0);
    }

    #[test]
    fn out_of_order_and_hole_filling_are_acked_at_once() {
        let mut r = rx();
        r.on_data(Instant::ZERO, 257, &[0; 256], RTO);
        assert!(r.ack_due());
        assert_eq!(r.rcv_nxt(), 1);
        r.on_ack_sent();
        r.on_data(Instant::ZERO, 1, &[0; 256], RTO);
        assert!(r.ack_due());
        assert_eq!(r.rcv_nxt(), 513);
        r.on_ack_sent();
        r.on_data(Instant::ZERO, 1, &[0; 256], RTO);
        assert!(r.ack_due(), "an entirely old segment gets a dupack");
    }

    #[test]
    fn a_reply_within_ato_enters_pingpong_and_suspends_quickack() {
        let mut r = rx().with_quickack(16);
        r.on_data(Instant::from_millis(0), 1, &[0; 60], RTO);
        assert!(r.ack_due(), "first request: quick-ACK");
        r.on_ack_sent();
        // The reply leaves 39 ms after the request (ato is TCP_ATO_MIN, 40 ms): pingpong.
        r.on_new_data_sent(Instant::from_millis(39));
        assert!(r.pingpong());
        assert_eq!(r.quickacks_left(), 15);
        r.on_data(Instant::from_millis(700), 61, &[0; 60], RTO);
        assert!(
            !r.ack_due(),
            "quick-ACK budget left, but pingpong: the reply carries the ACK"
        );
        assert_eq!(r.delack_deadline(), Some(Instant::from_millis(900)));
        // The delayed ACK fired with the ACK still pending: a missed delayed ACK leaves pingpong.
        r.on_delack_timeout(Instant::from_millis(900), RTO);
        assert!(r.ack_due());
        assert!(!r.pingpong());
        r.on_ack_sent();
        r.on_data(Instant::from_millis(1_000), 121, &[0; 60], RTO);
        assert!(
            r.ack_due(),
            "out of pingpong the quick-ACK budget applies again"
        );
    }

    #[test]
    fn a_reply_after_ato_or_before_any_data_keeps_quickack() {
        let mut r = rx().with_quickack(16);
        r.on_new_data_sent(Instant::ZERO);
        assert!(!r.pingpong(), "no data received yet (ato 0)");
        r.on_data(Instant::from_millis(0), 1, &[0; 60], RTO);
        r.on_ack_sent();
        r.on_new_data_sent(Instant::from_millis(40));
        assert!(!r.pingpong(), "40 ms is not less than ato (40 ms)");
        // An arrival 30 ms after the last (more than ATO_MIN/2, less than ato) makes ato
        // 40/2 + 30 = 50 ms.
        r.on_data(Instant::from_millis(30), 61, &[0; 60], RTO);
        r.on_ack_sent();
        r.on_new_data_sent(Instant::from_millis(80));
        assert!(!r.pingpong(), "50 ms is not less than ato = 50 ms");
        r.on_new_data_sent(Instant::from_millis(79));
        assert!(r.pingpong(), "49 ms < ato = 50 ms");
        // A retransmitted segment forces quick-ACK and leaves pingpong.
        r.on_data(Instant::from_millis(200), 1, &[0; 60], RTO);
        assert!(!r.pingpong());
        assert!(r.ack_due());
    }

    #[test]
    fn quickack_acks_the_first_segments_at_once_then_delays() {
        let mut r = rx().with_quickack(2);
        r.on_data(Instant::from_millis(0), 1, &[0; 256], RTO);
        assert!(r.ack_due(), "first data: quick-ACK");
        r.on_ack_sent();
        r.on_data(Instant::from_millis(80), 257, &[0; 256], RTO);
        assert!(r.ack_due());
        r.on_ack_sent();
        assert_eq!(r.quickacks_left(), 0);
        r.on_data(Instant::from_millis(160), 513, &[0; 256], RTO);
        assert!(!r.ack_due(), "budget spent: delayed ACK again");
        assert_eq!(r.delack_deadline(), Some(Instant::from_millis(360)));
        r.on_ack_sent();
        // More than an RTO without data: quick-ACK again.
        r.on_data(Instant::from_millis(1200), 769, &[0; 256], RTO);
        assert!(r.ack_due());
        r.on_ack_sent();
        r.on_data(Instant::from_millis(1300), 1025, &[0; 256], RTO);
        assert!(r.ack_due());
        r.on_ack_sent();
        // A retransmit of old data re-enters quick-ACK.
        r.on_data(Instant::from_millis(1400), 1, &[0; 256], RTO);
        assert!(r.ack_due());
        r.on_ack_sent();
        assert_eq!(r.quickacks_left(), 1);
    }

    #[test]
    fn no_quickack_without_a_budget() {
        let mut r = rx();
        r.on_data(Instant::from_millis(0), 1, &[0; 256], RTO);
        assert!(!r.ack_due());
        assert_eq!(r.quickacks_left(), 0);
    }

    #[test]
    fn the_default_receiver_has_the_kernel_quickack_budget_and_wheel() {
        let mut r = Receiver::for_config(1, &TcpConfig::default());
        r.on_data(Instant::from_millis(0), 1, &[0; 256], RTO);
        assert!(r.ack_due(), "first data: quick-ACK (16)");
        r.on_ack_sent();
        assert_eq!(r.quickacks_left(), 15);
        let mut r = Receiver::for_config(1, &TcpConfig::idealised());
        r.on_data(Instant::from_micros(1_001), 1, &[0; 6], RTO);
        assert_eq!(r.delack_deadline(), Some(Instant::from_micros(201_001)));
    }

    /// The delayed-ACK timer on the HZ-250 wheel (`icsk_delack_timer`, `sk_reset_timer`):
    /// 200 ms = 50 jiffies < `LVL_START(1)` = 63, level 0, so armed in jiffy j (4-ms jiffies
    /// from time 0) it is filed at expires = j + 50 and fires at the bucket end j + 51.
    #[test]
    fn on_the_wheel_the_delack_timer_fires_at_its_bucket_end() {
        let wheel = |r: Receiver| r.with_timer_wheel(250);
        // Armed at 10 ms (jiffy 2): expires 52, fires at jiffy 53 = 212 ms, not 210 ms.
        let mut r = wheel(rx());
        r.on_data(Instant::from_millis(10), 1, &[0; 6], RTO);
        assert_eq!(r.delack_deadline(), Some(Instant::from_millis(212)));
        // Armed on a jiffy boundary (8 ms = jiffy 2 as well): the same bucket, 204 ms later.
        let mut r = wheel(rx());
        r.on_data(Instant::from_millis(8), 1, &[0; 6], RTO);
        assert_eq!(r.delack_deadline(), Some(Instant::from_millis(212)));
        // Armed at the last nanosecond of jiffy 2: still 212 ms, 200.000001 ms later.
        let mut r = wheel(rx());
        r.on_data(Instant::from_nanos(11_999_999), 1, &[0; 6], RTO);
        assert_eq!(r.delack_deadline(), Some(Instant::from_millis(212)));
        // It fires at the bucket end, not before, and is not pushed back by later data.
        r.on_data(Instant::from_millis(100), 7, &[0; 5], RTO);
        assert_eq!(r.delack_deadline(), Some(Instant::from_millis(212)));
        r.on_delack_timeout(Instant::from_nanos(211_999_999), RTO);
        assert!(!r.ack_due());
        r.on_delack_timeout(Instant::from_millis(212), RTO);
        assert!(r.ack_due());
        r.on_ack_sent();
        // A FIN reached in order in ESTABLISHED arms it too: 1.0005 s = jiffy 250 → 1.204 s.
        r.on_fin(Instant::from_micros(1_000_500), 12, false);
        assert_eq!(r.delack_deadline(), Some(Instant::from_millis(1204)));
        // Any timeout is rounded the same way: 40 ms = 10 jiffies from jiffy 250 → jiffy 261.
        let mut r = Receiver::new(1, 256, Duration::from_millis(40)).with_timer_wheel(250);
        r.on_data(Instant::from_millis(1001), 1, &[0; 6], RTO);
        assert_eq!(r.delack_deadline(), Some(Instant::from_millis(1044)));
    }
}
