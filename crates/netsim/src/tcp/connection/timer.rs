//! The deadlines a [`super::Connection`] keeps, by name (quinn-proto's `connection/timer.rs`
//! is the model): `poll_timeout` is the earliest of them, and `handle_timeout` serves the due
//! ones in [`Timer::ALL`]'s order. Each deadline lives with the component that arms it.

use coaplab_base::time::{earliest, Instant};

/// One kind of deadline of a connection (`None` from its owner: not armed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Timer {
    /// The SYN or SYN-ACK retransmission timer (`Handshake`).
    Handshake,
    /// The data retransmission timer, the RTO (`RtoTimer`; Linux `icsk_retransmit_timer`).
    Retransmission,
    /// The delayed-ACK timer (`Receiver`; Linux `icsk_delack_timer`).
    DelayedAck,
    /// A paced segment's departure time (`CcState`'s pacing clock, BBR only).
    Pacing,
}

impl Timer {
    /// Every timer, in the order `handle_timeout` serves them when several are due at once:
    /// the handshake, the RTO (its backoff is the RTO the delayed-ACK rule then reads), the
    /// delayed ACK, the pacing wake-up.
    pub(super) const ALL: [Timer; 4] = [
        Timer::Handshake,
        Timer::Retransmission,
        Timer::DelayedAck,
        Timer::Pacing,
    ];
}

/// The earliest armed deadline, `deadline` saying each timer's (`None`: nothing armed).
///
/// Pairwise, not `ALL.into_iter().filter_map(..).min()`: the driver asks after every segment,
/// and the array form costs a store-forwarding stall (`earliest`).
#[inline]
pub(super) fn next_deadline(mut deadline: impl FnMut(Timer) -> Option<Instant>) -> Option<Instant> {
    earliest(
        earliest(deadline(Timer::Handshake), deadline(Timer::Retransmission)),
        earliest(deadline(Timer::DelayedAck), deadline(Timer::Pacing)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_deadline_is_the_earliest_armed_one() {
        let at = |t: Timer| match t {
            Timer::Retransmission => Some(Instant::from_millis(30)),
            Timer::DelayedAck => Some(Instant::from_millis(20)),
            Timer::Pacing => Some(Instant::from_millis(40)),
            Timer::Handshake => None,
        };
        assert_eq!(next_deadline(at), Some(Instant::from_millis(20)));
        assert_eq!(next_deadline(|_| None), None);
        // Every kind is asked: the only armed one is found wherever it is.
        for only in Timer::ALL {
            let at = |t: Timer| (t == only).then_some(Instant::from_millis(7));
            assert_eq!(next_deadline(at), Some(Instant::from_millis(7)));
        }
    }
}
