//! What both UDP drivers ([`crate::UdpDriver`], [`crate::BlockingUdpDriver`]) and the DTLS layer
//! share: the datagram size limit, the drivers' counters, counting a send, and the driver's
//! clock. Its own module so that none of the three imports another for it.

use std::io;

use coaplab_base::time::Instant;

/// The largest UDP payload (IPv4 datagram limit minus headers), the receive buffer's size.
pub const MAX_DATAGRAM_BYTES: usize = 65_507;

/// Counters of what the driver moved (the endpoint itself counts nothing).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DriverStats {
    /// Datagrams received and handed to the endpoint.
    pub datagrams_in: u64,
    /// Datagrams sent.
    pub datagrams_out: u64,
    /// Sends the OS refused (the datagram is lost, as on a lossy link).
    pub send_errors: u64,
    /// Receive errors (e.g. an ICMP port unreachable reported by the OS on a connected
    /// socket); ignored by [`crate::UdpDriver::next_event`].
    pub recv_errors: u64,
}

/// Whether a socket error says the destination cannot be reached: a connected UDP socket
/// reports an ICMP port unreachable as `ECONNREFUSED`, host and network unreachable as
/// `EHOSTUNREACH` and `ENETUNREACH` (Linux `ip_icmp_error`, RFC 1122 §4.1.3.3).
pub fn is_unreachable(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::ConnectionRefused
        || matches!(
            e.raw_os_error(),
            Some(libc::EHOSTUNREACH | libc::ENETUNREACH)
        )
}

/// Endpoint time of a wall-clock span since the start.
pub(crate) fn to_instant(elapsed: std::time::Duration) -> Instant {
    let ns = i64::try_from(elapsed.as_nanos()).unwrap_or(i64::MAX);
    Instant::ZERO + coaplab_base::time::Duration::from_nanos(ns)
}

/// Counts the outcome of one send (sent, or a send error); returns the error when it says
/// the destination is unreachable (ICMP, on a connected socket).
pub(crate) fn count_send(stats: &mut DriverStats, sent: io::Result<usize>) -> Option<io::Error> {
    match sent {
        Ok(_) => {
            stats.datagrams_out += 1;
            None
        }
        Err(e) => {
            stats.send_errors += 1;
            is_unreachable(&e).then_some(e)
        }
    }
}
