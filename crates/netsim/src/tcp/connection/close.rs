//! Closing a [`super::Connection`]: whether the application closed, and the RFC 9293 closing
//! states derived from the FINs sent, acknowledged and received (TIME-WAIT without its 2MSL
//! timer).

use crate::tcp::state::TcpState;

/// The application's close and which side closed first.
#[derive(Debug, Clone, Default)]
pub(super) struct Close {
    /// The application called `close`.
    closed_by_app: bool,
    /// Our FIN went out before the peer's FIN arrived (active close); `None` before either.
    active_close: Option<bool>,
}

impl Close {
    /// The application closes; returns whether this is the first call.
    pub(super) fn close(&mut self) -> bool {
        !std::mem::replace(&mut self.closed_by_app, true)
    }

    /// Whether the application closed.
    pub(super) fn closed_by_app(&self) -> bool {
        self.closed_by_app
    }

    /// The state after `state` given our FIN `sent` and `acked` and the peer's `got`
    /// (in order); `state` itself while no FIN moved.
    pub(super) fn next_state(
        &mut self,
        state: TcpState,
        sent: bool,
        acked: bool,
        got: bool,
    ) -> TcpState {
        if self.active_close.is_none() && (sent || got) {
            self.active_close = Some(sent && !got);
        }
        let active = self.active_close == Some(true);
        match (sent, acked, got) {
            (false, _, false) => state,
            (false, _, true) => TcpState::CloseWait,
            (true, false, false) => TcpState::FinWait1,
            (true, true, false) => TcpState::FinWait2,
            (true, false, true) if active => TcpState::Closing,
            (true, false, true) => TcpState::LastAck,
            (true, true, true) if active => TcpState::TimeWait,
            (true, true, true) => TcpState::Closed,
        }
    }
}
