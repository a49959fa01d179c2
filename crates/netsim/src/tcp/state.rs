//! The states a TCP [`super::Connection`] is in, named apart from it (a leaf: BBR reads
//! [`CaState`], the connection and its drivers all three).

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
