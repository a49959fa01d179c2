//! The deadlines an [`crate::Endpoint`] keeps, by name (quinn-proto's `connection/timer.rs`
//! is the model): `poll_timeout` is the earliest of them, and `handle_timeout` serves them
//! in [`Timer::ALL`]'s order.

use coaplab_cc::time::Instant;

/// One kind of deadline of the endpoint; each is owned by one component, which says when it
/// is due next (`None`: not armed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Timer {
    /// A partial Block1 upload's lifetime ends (server, `Config::upload_lifetime`).
    UploadExpiry,
    /// A Message ID becomes usable again for requests stalled waiting for one (client,
    /// `Config::message_id_lifetime`).
    StalledMessageIds,
    /// A notification is due or unacknowledged (server, RFC 7641).
    ObserveNotification,
    /// An observation's representation went stale and is re-registered (client, RFC 7641
    /// §3.3.1).
    Reregistration,
    /// Duplicate-cache entries whose lifetime ended are purged (server,
    /// `Config::dedup_purge_timer`).
    DedupPurge,
    /// An exchange retransmits, gives up or sends its delayed response (client and server).
    Retransmission,
}

impl Timer {
    /// Every timer, in the order `handle_timeout` serves them when several are due at once:
    /// bookkeeping first, the exchanges last (each expiry may arm a later deadline).
    pub(crate) const ALL: [Timer; 6] = [
        Timer::UploadExpiry,
        Timer::StalledMessageIds,
        Timer::ObserveNotification,
        Timer::Reregistration,
        Timer::DedupPurge,
        Timer::Retransmission,
    ];
}

/// The earliest armed deadline, `deadline` saying each timer's (`None`: nothing armed).
#[inline]
pub(crate) fn next_deadline(deadline: impl FnMut(Timer) -> Option<Instant>) -> Option<Instant> {
    Timer::ALL.into_iter().filter_map(deadline).min()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_deadline_is_the_earliest_armed_one() {
        let at = |t: Timer| match t {
            Timer::DedupPurge => Some(Instant::from_millis(30)),
            Timer::Reregistration => Some(Instant::from_millis(20)),
            Timer::Retransmission => Some(Instant::from_millis(40)),
            _ => None,
        };
        assert_eq!(next_deadline(at), Some(Instant::from_millis(20)));
        assert_eq!(next_deadline(|_| None), None);
    }
}
