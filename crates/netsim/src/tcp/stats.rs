//! Per-connection counters.

/// Counters of one connection (the lab's `segments_sent`, `segments_retransmitted`,
/// `rto_count` columns).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TcpStats {
    /// Every segment sent (SYN, SYN-ACK, data, pure ACKs).
    pub segments_sent: u64,
    /// Segments received (accepted or not).
    pub segments_received: u64,
    /// Data segments sent (the FIN included), retransmissions included.
    pub data_segments_sent: u64,
    /// Data segments retransmitted (fast retransmits and after RTOs).
    pub segments_retransmitted: u64,
    /// SYN or SYN-ACK retransmissions (timer-driven or answering a duplicate SYN).
    pub syn_retransmissions: u64,
    /// Retransmission-timer expiries (handshake and data).
    pub rto_count: u64,
    /// The largest RTO among those expiries: the timer's value when it fired, before the
    /// backoff it causes (the lab's `rto_max_s`); `None` before the first.
    pub rto_max: Option<coaplab_base::time::Duration>,
    /// Fast-recovery episodes entered.
    pub fast_recoveries: u64,
}

impl TcpStats {
    /// Counts one retransmission-timer expiry of an `rto` timer.
    pub(crate) fn on_rto_expired(&mut self, rto: coaplab_base::time::Duration) {
        self.rto_count += 1;
        self.rto_max = Some(self.rto_max.map_or(rto, |m| m.max(rto)));
    }
}
