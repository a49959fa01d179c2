//! The sending half's data structures: the send buffer with write boundaries and the
//! retransmission queue with Linux's scoreboard counters (`packets_out`, `sacked_out` as the
//! Reno duplicate-ACK count, `lost_out`, `retrans_out`).
//!
//! Segments are cut at MSS and at the end of each application write (the connection runs with
//! `TCP_NODELAY`, so a write is pushed as its own segment); a retransmission resends the same
//! segment.

use std::collections::VecDeque;
use std::sync::Arc;

use coaplab_base::time::{Duration, Instant};

use super::rate::{DeliveredSegment, RateSnapshot};
use super::send_buffer::{Generate, SendBuffer};

/// One sent, not yet cumulatively acknowledged segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxSegment {
    /// First sequence number.
    pub seq: u64,
    /// Payload length.
    pub len: u32,
    /// Last (re)transmission instant.
    pub sent_at: Instant,
    /// Ever retransmitted (Linux `TCPCB_EVER_RETRANS`): excluded from RTT samples (Karn).
    pub ever_retrans: bool,
    /// Marked lost (`TCPCB_LOST`).
    pub lost: bool,
    /// A retransmission is in flight (`TCPCB_SACKED_RETRANS`).
    pub retrans_in_flight: bool,
    /// Carries the FIN (a zero-length segment occupying one sequence number).
    pub fin: bool,
    /// Delivery counters when last (re)transmitted (`TCP_SKB_CB(skb)->tx`, `tcp_rate.c`).
    pub tx: RateSnapshot,
}

impl TxSegment {
    /// One past the last sequence number the segment occupies.
    pub fn end(&self) -> u64 {
        self.seq + u64::from(self.len) + u64::from(self.fin)
    }
}

/// A segment's worth of data to put on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    /// First sequence number.
    pub seq: u64,
    /// Payload bytes.
    pub payload: Vec<u8>,
    /// FIN flag.
    pub fin: bool,
    /// It is the head of the retransmission queue (re-arms the RTO when retransmitted).
    pub head: bool,
}

/// What a cumulative ACK removed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Acked {
    /// Segments fully acknowledged.
    pub segments: u32,
    /// Some acknowledged segment had been retransmitted (`FLAG_RETRANS_DATA_ACKED`).
    pub retrans_acked: bool,
    /// RTT sample from the oldest acknowledged segment, if none was retransmitted.
    pub rtt: Option<Duration>,
    /// RTT from the newest acknowledged segment (Linux `ca_rtt_us`, BBR's sample), under
    /// the same condition.
    pub newest_rtt: Option<Duration>,
}

/// Send buffer and retransmission queue.
#[derive(Debug, Clone)]
pub struct Sender {
    /// The written stream from the oldest unacknowledged byte on: sent-unacknowledged, then
    /// unsent; acknowledged pieces are released.
    buf: SendBuffer,
    /// Sequence number of the FIN once sent.
    fin_seq: Option<u64>,
    /// Sequence number of `buf[0]`.
    snd_una: u64,
    /// Next new sequence number to send.
    snd_nxt: u64,
    /// Ends of application writes not yet sent (segment boundaries).
    write_ends: VecDeque<u64>,
    /// Sent segments, oldest first.
    rtx: VecDeque<TxSegment>,
    /// The application closed: a FIN follows the data.
    fin_queued: bool,
    /// Reno duplicate-ACK count (`sacked_out`).
    sacked_out: u32,
    /// Segments marked lost.
    lost_out: u32,
    /// Retransmissions in flight.
    retrans_out: u32,
    /// Segments ever marked lost (`tp->lost`).
    lost_total: u64,
    /// `tp->reordering` once `tcp_check_reno_reordering` set it: more duplicate ACKs than
    /// segments the sender can account for. `None`: the sysctl value (`TcpConfig::dupthresh`).
    reno_reordering: Option<u32>,
    mss: u32,
    /// A payload buffer handed back by the driver ([`Sender::recycle`]), reused for the next
    /// segment so that a steady transfer allocates nothing per segment.
    spare: Vec<u8>,
}

/// The largest payload buffer kept for reuse.
const MAX_SPARE_BYTES: usize = 64 * 1024;

/// `net.ipv4.tcp_max_reordering` (Linux default).
pub const MAX_REORDERING: u32 = 300;

impl Sender {
    /// Empty, first data byte at `isn + 1`.
    pub fn new(first_seq: u64, mss: u32) -> Self {
        Sender {
            buf: SendBuffer::new(first_seq),
            fin_seq: None,
            snd_una: first_seq,
            snd_nxt: first_seq,
            write_ends: VecDeque::new(),
            rtx: VecDeque::new(),
            fin_queued: false,
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            lost_total: 0,
            reno_reordering: None,
            mss,
            spare: Vec::new(),
        }
    }

    /// Reno duplicate-ACK count (`sacked_out`).
    pub fn sacked_out(&self) -> u32 {
        self.sacked_out
    }

    /// Segments marked lost and not yet acknowledged (`lost_out`).
    pub fn lost_out(&self) -> u32 {
        self.lost_out
    }

    /// Retransmissions in flight (`retrans_out`).
    pub fn retrans_out(&self) -> u32 {
        self.retrans_out
    }

    /// Segments ever marked lost (`tp->lost`).
    pub fn lost_total(&self) -> u64 {
        self.lost_total
    }

    /// `tp->reordering` once raised by `tcp_check_reno_reordering`; `None`: the sysctl value.
    pub fn reno_reordering(&self) -> Option<u32> {
        self.reno_reordering
    }

    /// Forgets the duplicate-ACK count (`tcp_reset_reno_sack`).
    pub fn reset_reno_sacks(&mut self) {
        self.sacked_out = 0;
    }

    /// Oldest unacknowledged sequence number.
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }

    /// Next new sequence number.
    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }

    /// Segments sent and not cumulatively acknowledged (`packets_out`).
    pub fn packets_out(&self) -> u32 {
        self.rtx.len() as u32
    }

    /// `tcp_packets_in_flight`: packets_out − (sacked_out + lost_out) + retrans_out.
    pub fn in_flight(&self) -> u32 {
        (self.packets_out() + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }

    /// One past the last data byte written.
    fn data_end(&self) -> u64 {
        self.buf.end()
    }

    /// Whether unsent bytes (or the FIN) are queued.
    pub fn has_unsent(&self) -> bool {
        self.snd_nxt < self.data_end() || (self.fin_queued && self.fin_seq.is_none())
    }

    /// Written bytes not yet sent (`write_seq − snd_nxt`).
    pub fn unsent_bytes(&self) -> u64 {
        self.data_end().saturating_sub(self.snd_nxt)
    }

    /// Queues the FIN after every written byte.
    pub fn close(&mut self) {
        self.fin_queued = true;
    }

    /// Whether the FIN was sent.
    pub fn fin_sent(&self) -> bool {
        self.fin_seq.is_some()
    }

    /// Whether the FIN was sent and acknowledged.
    pub fn fin_acked(&self) -> bool {
        self.fin_sent() && self.snd_una == self.snd_nxt
    }

    /// Appends one application write.
    pub fn write(&mut self, bytes: &[u8]) {
        self.write_parts(bytes, None);
    }

    /// Appends one application write of `head` then a generated `tail`, produced only as
    /// segments carry it.
    pub fn write_parts(&mut self, head: &[u8], tail: Option<Arc<dyn Generate>>) {
        if self.fin_queued {
            return;
        }
        let start = self.data_end();
        self.buf.push_bytes(head);
        if let Some(tail) = tail {
            self.buf.push_generated(tail);
        }
        if self.data_end() > start {
            self.write_ends.push_back(self.data_end());
        }
    }

    /// Bytes of written data held in memory (a generated tail costs none until sent).
    pub fn held_bytes(&self) -> usize {
        self.buf.held_bytes()
    }

    /// Bytes `seq .. seq + len`, in the spare buffer a driver handed back when there is one.
    fn payload(&mut self, seq: u64, len: u32) -> Vec<u8> {
        let mut out = std::mem::take(&mut self.spare);
        // Resized, not cleared: every byte is overwritten, so only what a longer segment adds
        // to the last one's length is zeroed first.
        out.resize(len as usize, 0);
        self.buf.copy_into(seq, &mut out);
        out
    }

    /// Keeps `payload` (a sent segment's, no longer needed) for the next segment's bytes.
    pub fn recycle(&mut self, payload: Vec<u8>) {
        // A pure ACK's empty buffer does not replace a used one.
        if payload.capacity() <= MAX_SPARE_BYTES && payload.capacity() > self.spare.capacity() {
            self.spare = payload;
        }
    }

    /// Cuts and records the next new segment (the FIN alone once the data is all sent), with
    /// the delivery snapshot `tx`.
    pub fn send_new(&mut self, now: Instant, tx: RateSnapshot) -> Option<Outgoing> {
        self.send_new_at_most(now, tx, self.mss)
    }

    /// As [`Sender::send_new`], with at most `max_len` payload bytes (TCP Fast Open's SYN
    /// data, whose limit is below the MSS).
    pub fn send_new_at_most(
        &mut self,
        now: Instant,
        tx: RateSnapshot,
        max_len: u32,
    ) -> Option<Outgoing> {
        if !self.has_unsent() {
            return None;
        }
        let head = self.rtx.is_empty();
        if self.snd_nxt == self.data_end() {
            let seq = self.snd_nxt;
            self.rtx.push_back(TxSegment {
                seq,
                len: 0,
                sent_at: now,
                ever_retrans: false,
                lost: false,
                retrans_in_flight: false,
                fin: true,
                tx,
            });
            self.fin_seq = Some(seq);
            self.snd_nxt += 1;
            return Some(Outgoing {
                seq,
                payload: Vec::new(),
                fin: true,
                head,
            });
        }
        while self.write_ends.front().is_some_and(|&e| e <= self.snd_nxt) {
            self.write_ends.pop_front();
        }
        let end_of_write = self.write_ends.front().copied().unwrap_or(u64::MAX);
        let end = (self.snd_nxt + u64::from(max_len.min(self.mss))).min(end_of_write);
        let len = (end - self.snd_nxt) as u32;
        let seq = self.snd_nxt;
        self.rtx.push_back(TxSegment {
            seq,
            len,
            sent_at: now,
            ever_retrans: false,
            lost: false,
            retrans_in_flight: false,
            fin: false,
            tx,
        });
        self.snd_nxt = end;
        Some(Outgoing {
            seq,
            payload: self.payload(seq, len),
            fin: false,
            head,
        })
    }

    /// Retransmits the oldest segment marked lost and not yet retransmitted, with the
    /// delivery snapshot `tx`.
    pub fn retransmit_lost(&mut self, now: Instant, tx: RateSnapshot) -> Option<Outgoing> {
        let i = self
            .rtx
            .iter()
            .position(|s| s.lost && !s.retrans_in_flight)?;
        let s = &mut self.rtx[i];
        s.retrans_in_flight = true;
        s.ever_retrans = true;
        s.sent_at = now;
        s.tx = tx;
        let (seq, len, fin) = (s.seq, s.len, s.fin);
        self.retrans_out += 1;
        Some(Outgoing {
            seq,
            payload: self.payload(seq, len),
            fin,
            head: i == 0,
        })
    }

    /// Whether some segment is marked lost and waits for retransmission.
    ///
    /// From the counters, not a scan of the queue (`poll_transmit` asks on every call, and
    /// the queue holds the whole flight): a segment whose retransmission is in flight is
    /// always one marked lost, so the lost ones still waiting number `lost_out − retrans_out`.
    pub fn has_lost_to_send(&self) -> bool {
        debug_assert_eq!(
            self.lost_out > self.retrans_out,
            self.rtx.iter().any(|s| s.lost && !s.retrans_in_flight),
            "lost_out {} retrans_out {}",
            self.lost_out,
            self.retrans_out
        );
        self.lost_out > self.retrans_out
    }

    /// Marks the head segment lost (`tcp_mark_head_lost(sk, 1, 1)` for Reno).
    pub fn mark_head_lost(&mut self) {
        if let Some(s) = self.rtx.front_mut() {
            if !s.lost {
                s.lost = true;
                self.lost_out += 1;
                self.lost_total += 1;
            }
        }
    }

    /// RTO (`tcp_enter_loss` without SACK): every outstanding segment lost, no retransmission
    /// in flight, duplicate-ACK count cleared. `tp->lost` (`lost_total`) counts, as Linux's
    /// `tcp_mark_skb_lost` (`tcp_sum_lost` before 5.10), each segment not yet marked lost and
    /// each lost segment whose retransmission was in flight (a retransmission lost again); a
    /// lost segment still waiting for its retransmission is not counted twice.
    pub fn mark_all_lost(&mut self) {
        for s in &mut self.rtx {
            if !s.lost || s.retrans_in_flight {
                self.lost_total += 1;
            }
            s.lost = true;
            s.retrans_in_flight = false;
        }
        self.lost_out = self.rtx.len() as u32;
        self.retrans_out = 0;
        self.sacked_out = 0;
    }

    /// Removes the segments acknowledged by cumulative `ack` (`snd_una < ack ≤ snd_nxt`),
    /// handing each fully acknowledged one to `delivered` (`tcp_rate_skb_delivered`).
    pub fn on_cumulative_ack(
        &mut self,
        now: Instant,
        ack: u64,
        mut delivered: impl FnMut(&DeliveredSegment),
    ) -> Acked {
        let mut out = Acked::default();
        let mut first_sent: Option<Instant> = None;
        let mut last_sent: Option<Instant> = None;
        while let Some(s) = self.rtx.front() {
            if s.end() > ack {
                break;
            }
            let s = self.rtx.pop_front().expect("peeked");
            out.segments += 1;
            delivered(&DeliveredSegment {
                tx: s.tx,
                sent_at: s.sent_at,
                retrans: s.ever_retrans,
            });
            if s.retrans_in_flight {
                self.retrans_out -= 1;
            }
            if s.lost {
                self.lost_out -= 1;
            }
            if s.ever_retrans {
                out.retrans_acked = true;
            } else {
                first_sent.get_or_insert(s.sent_at);
                last_sent = Some(s.sent_at);
            }
        }
        if let Some(s) = self.rtx.front_mut() {
            if s.seq < ack && !s.fin {
                // A partial acknowledgement of a segment: trim its head (`tcp_trim_head`).
                s.len -= (ack - s.seq) as u32;
                s.seq = ack;
            }
        }
        self.buf.release_before(ack.min(self.data_end()));
        self.snd_una = ack;
        if !out.retrans_acked {
            out.rtt = first_sent.map(|t| now - t);
            out.newest_rtt = last_sent.map(|t| now - t);
        }
        out
    }

    /// `tcp_check_reno_reordering` (Linux ≥ 4.16): `tcp_limit_reno_sacked` caps the duplicate
    /// ACK count at `packets_out − max(lost_out, 1)`; when it had to, Linux reads the excess
    /// as reordering and sets `tp->reordering = min(packets_out + addend,
    /// tcp_max_reordering)`, the duplicate-ACK threshold from then on (without SACK nothing
    /// lowers it again: `tcp_enter_loss` tests `sacked_out` after clearing it).
    fn check_reno_reordering(&mut self, addend: u32) {
        let holes = self.lost_out.max(1).min(self.packets_out());
        if self.sacked_out + holes > self.packets_out() {
            self.sacked_out = self.packets_out() - holes;
            self.reno_reordering = Some((self.packets_out() + addend).min(MAX_REORDERING));
        }
    }

    /// `tcp_add_reno_sack`: counts a duplicate ACK (`tcp_check_reno_reordering`); returns
    /// whether the count grew (one more segment delivered).
    pub fn add_reno_sack(&mut self) -> bool {
        let prior = self.sacked_out;
        self.sacked_out += 1;
        self.check_reno_reordering(0);
        self.sacked_out > prior
    }

    /// `tcp_remove_reno_sacks`: a cumulative ACK of `acked` segments; returns the segments
    /// delivered by it (the hole plus ones not yet counted by duplicate ACKs).
    pub fn remove_reno_sacks(&mut self, acked: u32) -> u32 {
        if acked == 0 {
            return 0;
        }
        let delivered = acked.saturating_sub(self.sacked_out).max(1);
        self.sacked_out -= (acked - 1).min(self.sacked_out);
        self.check_reno_reordering(acked);
        delivered
    }

    /// The retransmission queue, oldest first.
    pub fn segments(&self) -> impl Iterator<Item = &TxSegment> {
        self.rtx.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap() -> RateSnapshot {
        RateSnapshot {
            delivered: 0,
            delivered_at: Instant::ZERO,
            first_tx_at: Instant::ZERO,
            app_limited: false,
        }
    }

    #[test]
    fn an_rto_counts_a_lost_retransmission_as_lost_again() {
        let mut s = Sender::new(1, 256);
        s.write(&[0u8; 768]);
        for _ in 0..3 {
            s.send_new(Instant::ZERO, snap()).expect("data");
        }
        // First RTO: the three segments are newly lost.
        s.mark_all_lost();
        assert_eq!((s.lost_total, s.lost_out, s.retrans_out), (3, 3, 0));
        // The head is retransmitted; the other two still wait.
        let t = Instant::ZERO + Duration::from_secs(1);
        assert_eq!(s.retransmit_lost(t, snap()).map(|o| o.seq), Some(1));
        assert_eq!(s.retrans_out, 1);
        // Second RTO: the head's retransmission is lost again (counted: Linux
        // `tcp_mark_skb_lost`, LOST|SACKED_RETRANS); the two never resent are not.
        s.mark_all_lost();
        assert_eq!((s.lost_total, s.lost_out, s.retrans_out), (4, 3, 0));
    }

    #[test]
    fn more_dupacks_than_segments_out_raise_the_reordering_threshold() {
        let mut s = Sender::new(1, 256);
        s.write(&[0u8; 1024]);
        for _ in 0..4 {
            s.send_new(Instant::ZERO, snap()).expect("data");
        }
        // Three dupacks fit (4 out, one hole): no reordering.
        for _ in 0..3 {
            assert!(s.add_reno_sack());
        }
        assert_eq!((s.sacked_out, s.reno_reordering), (3, None));
        // A fourth cannot be accounted for: `tcp_limit_reno_sacked` caps it and
        // `tcp_check_reno_reordering` sets tp->reordering = packets_out.
        assert!(!s.add_reno_sack());
        assert_eq!((s.sacked_out, s.reno_reordering), (3, Some(4)));
        // An RTO clears the dupack count, not the raised threshold.
        s.mark_all_lost();
        assert_eq!((s.sacked_out, s.reno_reordering), (0, Some(4)));
    }
}
