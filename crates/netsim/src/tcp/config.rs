//! Parameters of the TCP model, named as in spec/experiments.md §5.3, with its defaults.

use coaplab_cc::time::Duration;

use super::cc::CongestionControl;
use super::segment::HEADER_BYTES;

/// How fast recovery sets the congestion window after the third duplicate ACK.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoveryMode {
    /// Proportional Rate Reduction (RFC 6937) as in Linux `tcp_cwnd_reduction`: the default.
    Prr,
    /// RFC 6582 window inflation: cwnd = ssthresh + 3, +1 per duplicate ACK, deflated on partial
    /// ACKs, set to ssthresh on the full ACK.
    Rfc6582,
}

/// Every parameter of one TCP connection. [`TcpConfig::default`] gives the spec §5.3 values.
#[derive(Debug, Clone, PartialEq)]
pub struct TcpConfig {
    /// Link MTU in bytes; the MSS is `mtu_bytes − 40` (IPv4 20 + TCP 20, no options). Default 296.
    pub mtu_bytes: u32,
    /// Initial congestion window in segments (`iw`). Default 4.
    pub iw: u32,
    /// RTO of the first SYN / SYN-ACK before any sample (`rto_initial`). Default 2 s.
    pub rto_initial: Duration,
    /// RTO used when the handshake gave no valid RTT sample (RFC 6298 §5.7,
    /// Linux `TCP_TIMEOUT_FALLBACK`). Default 3 s.
    pub rto_fallback: Duration,
    /// Lower bound of the RTT variance term (`rto_min`, Linux `TCP_RTO_MIN`). Default 200 ms.
    pub rto_min: Duration,
    /// Upper bound of every RTO, backed-off ones included (`rto_max`). Default 120 s.
    pub rto_max: Duration,
    /// SYN retransmissions before the client gives up (`syn_retries`). Default 40.
    pub syn_retries: u32,
    /// SYN-ACK retransmissions (timer-driven) before the server gives up (`synack_retries`).
    /// Default 41.
    pub synack_retries: u32,
    /// Delayed-ACK timeout, a constant (`delack`). Default 200 ms.
    pub delack: Duration,
    /// Linux quick-ACK budget (`quickack_segments`, spec §10 #15): when the first data
    /// arrives, when in-order data arrives after more than an RTO without data, and when an
    /// entirely old (retransmitted) segment arrives, the receiver ACKs every segment at
    /// once for the next `quickack_segments` ACKs it sends (Linux `icsk_ack.quick`, capped
    /// there at 16 and at half the receive window in MSS). Default 0: no quick-ACK phase
    /// (spec §5.3 RESOLVED).
    pub quickack_segments: u32,
    /// Duplicate ACKs that trigger fast retransmit (`dupthresh`, Linux `tcp_reordering`).
    /// Default 3.
    pub dupthresh: u32,
    /// Recovery mode (`recovery`). Default [`RecoveryMode::Prr`].
    pub recovery: RecoveryMode,
    /// Restart from `min(cwnd, iw)` after an idle period longer than the RTO
    /// (`slow_start_after_idle`, Linux `tcp_slow_start_after_idle`). Default on.
    pub slow_start_after_idle: bool,
    /// Congestion control (`cc`, spec §5.3 `newreno | bbr`). Default Linux `reno`.
    pub cc: CongestionControl,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mtu_bytes: 296,
            iw: 4,
            rto_initial: Duration::from_secs(2),
            rto_fallback: Duration::from_secs(3),
            rto_min: Duration::from_millis(200),
            rto_max: Duration::from_secs(120),
            syn_retries: 40,
            synack_retries: 41,
            delack: Duration::from_millis(200),
            quickack_segments: 0,
            dupthresh: 3,
            recovery: RecoveryMode::Prr,
            slow_start_after_idle: true,
            cc: CongestionControl::Reno,
        }
    }
}

/// A [`TcpConfig`] value outside its range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TcpConfigError {
    /// The MTU leaves no payload room (must exceed 40 + 0 bytes, and be at most 65,535).
    Mtu(u32),
    /// `iw` or `dupthresh` is zero.
    ZeroCount(&'static str),
    /// A duration is not positive, or `rto_min > rto_max`.
    Duration(&'static str),
    /// A BBR parameter is out of range.
    Bbr(&'static str),
}

impl core::fmt::Display for TcpConfigError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            TcpConfigError::Mtu(m) => write!(f, "mtu_bytes {m} must be in 41..=65535"),
            TcpConfigError::ZeroCount(n) => write!(f, "{n} must be at least 1"),
            TcpConfigError::Duration(n) | TcpConfigError::Bbr(n) => {
                write!(f, "{n} is out of range")
            }
        }
    }
}

impl std::error::Error for TcpConfigError {}

impl TcpConfig {
    /// Maximum segment size in bytes: `mtu_bytes − 40`.
    pub fn mss(&self) -> u32 {
        self.mtu_bytes.saturating_sub(HEADER_BYTES)
    }

    /// Checks every range.
    pub fn validate(&self) -> Result<(), TcpConfigError> {
        if self.mtu_bytes <= HEADER_BYTES || self.mtu_bytes > 65_535 {
            return Err(TcpConfigError::Mtu(self.mtu_bytes));
        }
        if self.iw == 0 {
            return Err(TcpConfigError::ZeroCount("iw"));
        }
        if self.dupthresh == 0 {
            return Err(TcpConfigError::ZeroCount("dupthresh"));
        }
        let positive = [
            ("rto_initial", self.rto_initial),
            ("rto_fallback", self.rto_fallback),
            ("rto_min", self.rto_min),
            ("rto_max", self.rto_max),
            ("delack", self.delack),
        ];
        for (name, d) in positive {
            if d <= Duration::ZERO {
                return Err(TcpConfigError::Duration(name));
            }
        }
        if self.rto_min > self.rto_max {
            return Err(TcpConfigError::Duration("rto_min"));
        }
        if let CongestionControl::Bbr(b) = &self.cc {
            b.validate().map_err(TcpConfigError::Bbr)?;
        }
        Ok(())
    }
}
