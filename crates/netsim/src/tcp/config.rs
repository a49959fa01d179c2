//! Parameters of the TCP model, named as in docs/experiments.md §5.3, with its defaults.

use coaplab_base::params::{Kind, ParamError, ParamSpec, Params, Settings, Value};
use coaplab_base::time::Duration;

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

/// When a backed-off RTO (after a timeout doubled it) returns to `srtt + rttvar`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RtoBackoffReset {
    /// Only on a fresh valid (Karn-clean) RTT sample: Linux, where only `tcp_ack_update_rtt`
    /// calls `tcp_set_rto` and clears `icsk_backoff` (docs/experiments.md §5.3). The default.
    RttSample,
    /// On every ACK that advances snd_una, the RTO is recomputed from srtt and rttvar, so a
    /// backoff never survives a new ACK (ns-3 `TcpSocketBase::NewAck`).
    NewAck,
}

/// Every parameter of one TCP connection. [`TcpConfig::default`] gives the docs/experiments.md §5.3
/// values: the original hosts' settings on a stock Linux kernel, whose quick-ACK phase, HZ-250
/// timer wheel and SYN options are on (docs/experiments.md §5.3, revised 2026-12-07);
/// [`TcpConfig::idealised`] switches those three off.
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
    /// Delayed-ACK timeout, a constant (`delack`). Default 200 ms. The timer fires on the timer
    /// wheel when `timer_wheel_hz` is set (at HZ 250: 200–204 ms after it is armed).
    pub delack: Duration,
    /// Linux quick-ACK budget (`quickack_segments`, docs/experiments.md §10 #15): when the first
    /// data arrives, when in-order data arrives after more than an RTO without data, and when an
    /// entirely old (retransmitted) segment arrives, the receiver ACKs every segment at
    /// once for the next `quickack_segments` ACKs it sends (Linux `icsk_ack.quick`, capped
    /// there at 16 and at half the receive window in MSS). Default 16, the stock kernel's
    /// (docs/experiments.md §5.3 revised: a stock kernel cannot switch it off without switching
    /// delayed ACKs off); 0: no quick-ACK phase (the idealised receiver).
    pub quickack_segments: u32,
    /// Duplicate ACKs that trigger fast retransmit (`dupthresh`, Linux `tcp_reordering`).
    /// Default 3.
    pub dupthresh: u32,
    /// Recovery mode (`recovery`). Default [`RecoveryMode::Prr`].
    pub recovery: RecoveryMode,
    /// Restart from `min(cwnd, iw)` after an idle period longer than the RTO
    /// (`slow_start_after_idle`, Linux `tcp_slow_start_after_idle`). Default on.
    pub slow_start_after_idle: bool,
    /// When a backed-off RTO is recomputed (`rto_backoff_reset`). Default
    /// [`RtoBackoffReset::RttSample`] (Linux, docs/experiments.md §5.3).
    pub rto_backoff_reset: RtoBackoffReset,
    /// Jiffies per second of the Linux timer wheel that every timer the kernel keeps on it
    /// fires on — SYN, SYN-ACK and data retransmission timers and the delayed-ACK timer
    /// (`timer_wheel_hz`, Linux `CONFIG_HZ`): each expiry is rounded up to its wheel bucket
    /// ([`super::timer_wheel::expiry`]), so timers armed close together fire together.
    /// Default 250 (Debian's and Ubuntu's generic kernels, docs/experiments.md §5.3 revised); 0:
    /// exact timers. BBR's pacing timer is a high-resolution timer in Linux and stays exact.
    pub timer_wheel_hz: u32,
    /// TCP option bytes on every SYN and SYN-ACK besides Fast Open's (`syn_options_bytes`):
    /// Linux's `tcp_syn_options` / `tcp_synack_options` with the emulator's sysctls (SACK and
    /// timestamps off, window scaling on) send MSS (4) + NOP + window scale (3 + 1) = 8. They
    /// lengthen the handshake RTT that seeds BBR's min_rtt, so a small first data segment may
    /// refresh it (docs/calibration.md, item 4). Default 8 (docs/experiments.md §5.3 revised); 0:
    /// bare 40-byte SYN / SYN-ACK.
    pub syn_options_bytes: u32,
    /// Congestion control (`cc`, docs/experiments.md §5.3 `newreno | bbr`). Default Linux `reno`.
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
            quickack_segments: 16,
            dupthresh: 3,
            recovery: RecoveryMode::Prr,
            slow_start_after_idle: true,
            rto_backoff_reset: RtoBackoffReset::RttSample,
            timer_wheel_hz: 250,
            syn_options_bytes: 8,
            cc: CongestionControl::Reno,
        }
    }
}

impl TcpConfig {
    /// The defaults without the three stock-kernel behaviours of docs/experiments.md §5.3 (revised
    /// 2026-12-07): no quick-ACK phase (`quickack_segments = 0`), exact timers
    /// (`timer_wheel_hz = 0`) and bare 40-byte SYN / SYN-ACK (`syn_options_bytes = 0`) — the
    /// model's defaults before that revision, kept for tests of exact mechanisms and for
    /// comparison (docs/calibration.md).
    pub fn idealised() -> Self {
        TcpConfig {
            quickack_segments: 0,
            timer_wheel_hz: 0,
            syn_options_bytes: 0,
            ..TcpConfig::default()
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

/// A duration in seconds, 1 ms to one hour.
const SECS: Kind = Kind::Seconds {
    min: 0.001,
    max: 3600.0,
};

/// The [`TCP_PARAMS`] choices of `recovery`.
const RECOVERY: &[&str] = &["prr", "rfc6582"];

/// The [`TCP_PARAMS`] choices of `rto_backoff_reset`.
const BACKOFF_RESET: &[&str] = &["rtt-sample", "new-ack"];

/// Every settable [`TcpConfig`] parameter (scenario `[flows.params]` of `cc = "tcp-newreno"` /
/// `"tcp-bbr"`), named as in docs/experiments.md §5.3 with `_s` for durations in seconds.
/// The defaults are [`TcpConfig::default`]'s; `mtu_bytes` is not here (the network's MTU) and
/// neither is `cc` (the flow's `cc`); BBR's constants are [`super::BBR_PARAMS`].
pub const TCP_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        key: "iw",
        kind: Kind::Int { min: 1, max: 1000 },
        default: Value::Int(4),
        help: "initial congestion window in segments (1 after more than one SYN/SYN-ACK retransmission)",
        source: "docs/experiments.md §5.3 (original hosts' initcwnd 4); Linux TCP_INIT_CWND 10",
    },
    ParamSpec {
        key: "rto_initial_s",
        kind: SECS,
        default: Value::Float(2.0),
        help: "RTO of the first SYN / SYN-ACK, before any RTT sample",
        source: "docs/experiments.md §5.3 (original hosts 2 s); Linux TCP_TIMEOUT_INIT 1 s",
    },
    ParamSpec {
        key: "rto_fallback_s",
        kind: SECS,
        default: Value::Float(3.0),
        help: "RTO (and rttvar) when the handshake gave no valid RTT sample",
        source: "RFC 6298 §5.7; Linux TCP_TIMEOUT_FALLBACK",
    },
    ParamSpec {
        key: "rto_min_s",
        kind: SECS,
        default: Value::Float(0.2),
        help: "lower bound of the RTO's variance term rttvar (at most rto_max_s)",
        source: "docs/experiments.md §5.3; Linux TCP_RTO_MIN",
    },
    ParamSpec {
        key: "rto_max_s",
        kind: SECS,
        default: Value::Float(120.0),
        help: "upper bound of every RTO, backed-off ones included",
        source: "docs/experiments.md §5.3; Linux TCP_RTO_MAX",
    },
    ParamSpec {
        key: "syn_retries",
        kind: Kind::Int { min: 0, max: 255 },
        default: Value::Int(40),
        help: "SYN retransmissions (exponential backoff) before the client gives up",
        source: "docs/experiments.md §5.3 (original hosts); net.ipv4.tcp_syn_retries",
    },
    ParamSpec {
        key: "synack_retries",
        kind: Kind::Int { min: 0, max: 255 },
        default: Value::Int(41),
        help: "timer-driven SYN-ACK retransmissions before the server gives up",
        source: "docs/experiments.md §5.3 (original hosts); net.ipv4.tcp_synack_retries",
    },
    ParamSpec {
        key: "delack_s",
        kind: SECS,
        default: Value::Float(0.2),
        help: "delayed-ACK timeout, a constant (every 2nd full segment is ACKed at once); fires \
               on the timer wheel of timer_wheel_hz (HZ 250: 200-204 ms after arming)",
        source: "docs/experiments.md §5.3 RESOLVED; Linux TCP_DELACK_MAX (adaptive 40-200 ms there)",
    },
    ParamSpec {
        key: "quickack_segments",
        kind: Kind::Int {
            min: 0,
            max: 1_000_000,
        },
        default: Value::Int(16),
        help: "Linux quick-ACK budget: ACKs sent at once after first data, idle or old data \
               (16 = the stock kernel's; 0 = none, the idealised receiver)",
        source: "docs/experiments.md §5.3 (revised 2026-12-07), §10 #15; Linux icsk_ack.quick (at most 16 there)",
    },
    ParamSpec {
        key: "dupthresh",
        kind: Kind::Int { min: 1, max: 300 },
        default: Value::Int(3),
        help: "duplicate ACKs that trigger fast retransmit (raised by Reno reordering detection)",
        source: "docs/experiments.md §5.3 (RACK off); net.ipv4.tcp_reordering",
    },
    ParamSpec {
        key: "recovery",
        kind: Kind::Choice(RECOVERY),
        default: Value::Choice("prr"),
        help: "fast-recovery window: prr = Proportional Rate Reduction, rfc6582 = NewReno inflation",
        source: "docs/experiments.md §5.3; Linux tcp_cwnd_reduction (RFC 6937)",
    },
    ParamSpec {
        key: "slow_start_after_idle",
        kind: Kind::Bool,
        default: Value::Bool(true),
        help: "restart from min(cwnd, iw) after an idle period longer than the RTO",
        source: "docs/experiments.md §5.3 (Linux default); net.ipv4.tcp_slow_start_after_idle",
    },
    ParamSpec {
        key: "rto_backoff_reset",
        kind: Kind::Choice(BACKOFF_RESET),
        default: Value::Choice("rtt-sample"),
        help: "when a backed-off RTO returns to srtt + rttvar: rtt-sample = on a fresh valid RTT \
               sample (Linux), new-ack = on every ACK that advances snd_una (ns-3)",
        source: "docs/experiments.md §5.3; Linux tcp_ack_update_rtt; ns-3 TcpSocketBase::NewAck",
    },
    ParamSpec {
        key: "timer_wheel_hz",
        kind: Kind::Int { min: 0, max: 10_000 },
        default: Value::Int(250),
        help: "Linux CONFIG_HZ whose timer wheel rounds the retransmission and delayed-ACK \
               timers up to its buckets (250: 4 ms below 252 ms, 32 ms below 2.016 s, 256 ms \
               for 2-16 s, 2.048 s for 16-129 s); 0 = exact timers",
        source: "docs/experiments.md §5.3 (revised 2026-12-07; Debian/Ubuntu HZ 250); docs/calibration.md item \
                 3; Linux kernel/time/timer.c calc_wheel_index",
    },
    ParamSpec {
        key: "syn_options_bytes",
        kind: Kind::Int { min: 0, max: 28 },
        default: Value::Int(8),
        help: "TCP option bytes on SYN and SYN-ACK (Linux with SACK and timestamps off: MSS + \
               NOP + window scale = 8, the default); 0 = bare 40-byte SYN / SYN-ACK",
        source: "docs/experiments.md §5.3 (revised 2026-12-07); docs/calibration.md item 4; Linux tcp_output.c \
                 tcp_syn_options, tcp_synack_options",
    },
];

impl TcpConfig {
    /// Resolves the [`TCP_PARAMS`] keys of `settings` (other keys are ignored: BBR's
    /// constants, CoAP settings) over the defaults, with every range checked, `rto_min_s ≤
    /// rto_max_s` included.
    pub fn resolve_params(settings: &Settings) -> Result<Params, ParamError> {
        let mut own = Settings::new();
        for (k, v) in settings.iter() {
            if TCP_PARAMS.iter().any(|p| p.key == k) {
                own.set(k, v);
            }
        }
        let p = Params::resolve("tcp", &[TCP_PARAMS], &own)?;
        if p.secs("rto_min_s") > p.secs("rto_max_s") {
            return Err(ParamError::BadValue {
                key: "rto_min_s".to_string(),
                value: p.float("rto_min_s").to_string(),
                expected: format!("at most rto_max_s ({})", p.float("rto_max_s")),
            });
        }
        Ok(p)
    }

    /// This configuration with the [`TCP_PARAMS`] of `settings` applied (see
    /// [`TcpConfig::resolve_params`]); `mtu_bytes` and `cc` are kept.
    pub fn with_settings(mut self, settings: &Settings) -> Result<TcpConfig, ParamError> {
        let p = Self::resolve_params(settings)?;
        let count = |k: &str| p.int(k) as u32;
        self.iw = count("iw");
        self.rto_initial = p.secs("rto_initial_s");
        self.rto_fallback = p.secs("rto_fallback_s");
        self.rto_min = p.secs("rto_min_s");
        self.rto_max = p.secs("rto_max_s");
        self.syn_retries = count("syn_retries");
        self.synack_retries = count("synack_retries");
        self.delack = p.secs("delack_s");
        self.quickack_segments = count("quickack_segments");
        self.dupthresh = count("dupthresh");
        self.recovery = match p.choice("recovery") {
            "rfc6582" => RecoveryMode::Rfc6582,
            _ => RecoveryMode::Prr,
        };
        self.slow_start_after_idle = p.flag("slow_start_after_idle");
        self.rto_backoff_reset = match p.choice("rto_backoff_reset") {
            "new-ack" => RtoBackoffReset::NewAck,
            _ => RtoBackoffReset::RttSample,
        };
        self.timer_wheel_hz = count("timer_wheel_hz");
        self.syn_options_bytes = count("syn_options_bytes");
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_defaults_are_the_config_defaults() {
        let d = TcpConfig::default();
        assert_eq!(d.clone().with_settings(&Settings::new()), Ok(d));
    }

    #[test]
    fn the_defaults_are_the_stock_kernel_and_the_idealised_tcp_is_three_settings_away() {
        // docs/experiments.md §5.3 (revised 2026-12-07): quick-ACK, the HZ-250 wheel and the SYN
        // options on.
        let d = TcpConfig::default();
        assert_eq!(
            (d.quickack_segments, d.timer_wheel_hz, d.syn_options_bytes),
            (16, 250, 8)
        );
        let s = Settings::parse([
            "quickack_segments=0",
            "timer_wheel_hz=0",
            "syn_options_bytes=0",
        ])
        .unwrap();
        assert_eq!(d.with_settings(&s), Ok(TcpConfig::idealised()));
    }

    #[test]
    fn every_key_is_applied_and_checked() {
        let s = Settings::parse([
            "iw=10",
            "rto_initial_s=1",
            "rto_fallback_s=1.5",
            "rto_min_s=0.05",
            "rto_max_s=60",
            "syn_retries=6",
            "synack_retries=5",
            "delack_s=0.04",
            "quickack_segments=2",
            "dupthresh=5",
            "recovery=rfc6582",
            "slow_start_after_idle=false",
            "rto_backoff_reset=new-ack",
            "timer_wheel_hz=1000",
            "syn_options_bytes=0",
            "high_gain_256ths=700",
        ])
        .unwrap();
        let c = TcpConfig::default().with_settings(&s).unwrap();
        assert_eq!(
            c,
            TcpConfig {
                iw: 10,
                rto_initial: Duration::from_secs(1),
                rto_fallback: Duration::from_millis(1500),
                rto_min: Duration::from_millis(50),
                rto_max: Duration::from_secs(60),
                syn_retries: 6,
                synack_retries: 5,
                delack: Duration::from_millis(40),
                quickack_segments: 2,
                dupthresh: 5,
                recovery: RecoveryMode::Rfc6582,
                slow_start_after_idle: false,
                rto_backoff_reset: RtoBackoffReset::NewAck,
                timer_wheel_hz: 1000,
                syn_options_bytes: 0,
                ..TcpConfig::default()
            }
        );
        assert!(c.validate().is_ok());
        for bad in [
            "iw=0",
            "dupthresh=0",
            "rto_min_s=0",
            "delack_s=-1",
            "recovery=sack",
            "rto_backoff_reset=never",
            "slow_start_after_idle=maybe",
            "quickack_segments=-1",
            "timer_wheel_hz=-1",
        ] {
            let s = Settings::parse([bad]).unwrap();
            assert!(TcpConfig::default().with_settings(&s).is_err(), "{bad}");
        }
        let s = Settings::parse(["rto_min_s=10", "rto_max_s=5"]).unwrap();
        let e = TcpConfig::default().with_settings(&s).unwrap_err();
        assert!(e.to_string().contains("rto_max_s"), "{e}");
    }
}
