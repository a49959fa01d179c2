//! The congestion-control choice of a [`super::Connection`] (docs/experiments.md §5.3:
//! `newreno | bbr`), part of its [`super::TcpConfig`]. The state that runs it lives with the
//! connection (`connection/cc_state.rs`).

use super::bbr::BbrConfig;

/// Which congestion control a connection runs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum CongestionControl {
    /// Linux `reno`, with the recovery of `TcpConfig::recovery` (PRR by default).
    #[default]
    Reno,
    /// Linux BBR v1 (`tcp_bbr.c`) with internal pacing; its every constant in [`BbrConfig`].
    Bbr(BbrConfig),
}

impl CongestionControl {
    /// The name used in scenario files (`tcp-newreno`, `tcp-bbr`).
    pub fn name(&self) -> &'static str {
        match self {
            CongestionControl::Reno => "newreno",
            CongestionControl::Bbr(_) => "bbr",
        }
    }
}
