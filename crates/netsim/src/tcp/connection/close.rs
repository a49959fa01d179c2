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

#[cfg(test)]
mod tests {
    use super::*;

    /// The states each FIN event leads to, from ESTABLISHED: (fin sent, acked, received).
    fn walk(events: &[(bool, bool, bool)]) -> Vec<TcpState> {
        let mut close = Close::default();
        let mut state = TcpState::Established;
        events
            .iter()
            .map(|&(sent, acked, got)| {
                state = close.next_state(state, sent, acked, got);
                state
            })
            .collect()
    }

    #[test]
    fn active_passive_and_simultaneous_closes_follow_rfc_9293() {
        use TcpState::*;
        // Active: our FIN, its ACK, the peer's FIN.
        let active = [
            (false, false, false),
            (true, false, false),
            (true, true, false),
        ];
        assert_eq!(walk(&active), [Established, FinWait1, FinWait2]);
        assert_eq!(
            walk(&[(true, false, false), (true, true, true)]),
            [FinWait1, TimeWait]
        );
        // Passive: the peer's FIN, then ours and its ACK.
        let passive = [
            (false, false, true),
            (true, false, true),
            (true, true, true),
        ];
        assert_eq!(walk(&passive), [CloseWait, LastAck, Closed]);
        // Simultaneous after ours went first: CLOSING, then TIME-WAIT.
        let crossed = [
            (true, false, false),
            (true, false, true),
            (true, true, true),
        ];
        assert_eq!(walk(&crossed), [FinWait1, Closing, TimeWait]);
    }

    #[test]
    fn the_application_closes_once() {
        let mut close = Close::default();
        assert!(!close.closed_by_app());
        assert!(close.close());
        assert!(!close.close());
        assert!(close.closed_by_app());
    }
}
