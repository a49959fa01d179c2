//! A `coaplab bench` client's UDP socket, moved to a new local port before one of its
//! Message IDs could repeat.
//!
//! RFC 7252 §4.4 forbids reusing a Message ID towards the same endpoint within
//! EXCHANGE_LIFETIME (247 s), and the space is 16 bits per endpoint pair (§4.5: the server's
//! duplicate cache is keyed by source address and port plus Message ID). A closed-loop client
//! on loopback sends ~40,000 requests/s, so one socket's 65,536 Message IDs wrap within ~2 s,
//! and a conforming server answers the new request from its duplicate cache with the old
//! request's response (about a quarter of a 5-s run was so answered before this module).
//!
//! [`ClientPort`] asks its endpoint how many Message IDs it has issued
//! ([`Endpoint::message_ids_issued`]: one per request or further block, none per
//! retransmission) and, before the request that could take the 65,537th, moves to a new
//! socket with a new endpoint (continuing its Message ID and token sequences). The old socket
//! stays open, its endpoint dropped, for EXCHANGE_LIFETIME after the move, so the kernel
//! cannot give its port to a later socket of this run while the server may still remember
//! its Message IDs. Retired sockets a client holds at once: at most
//! 1 + 247 s × (Message IDs/s) / 65,536, one Message ID per request unless block-wise (about
//! 151 at 40,000 requests/s); all close when the client ends. Ports of an earlier run are not
//! tracked.

use std::collections::VecDeque;
use std::net::SocketAddr;

use coaplab_emu::UdpDriver;
use coaplab_endpoint::{Endpoint, EXCHANGE_LIFETIME};
use tokio::net::UdpSocket;

use super::net;

/// Message IDs a client uses on one socket before it moves to a new port: the whole 16-bit
/// space, so none repeats on a socket.
pub(crate) const MESSAGE_IDS_PER_PORT: u64 = 65_536;

/// How long a retired socket keeps its port after the move (its last request):
/// EXCHANGE_LIFETIME, the longest a server remembers a Message ID (RFC 7252 §4.8.2).
const RETIRED_HOLD: std::time::Duration =
    std::time::Duration::from_nanos(EXCHANGE_LIFETIME.as_nanos() as u64);

/// Builds a client's endpoint: its first (`None`) and, at each move, the next one (`Some`:
/// the endpoint it replaces, whose Message ID and token sequences it continues). An `Err`
/// is a message for stderr.
pub(crate) type MakeEndpoint = Box<dyn FnMut(Option<&Endpoint>) -> Result<Endpoint, String> + Send>;

/// Whether a client whose endpoint has issued `issued` Message IDs must move to a new port
/// before a request that may take `per_request` more, to keep within `per_port` on this
/// socket. A socket that has issued none never moves: a request larger than the whole space
/// would repeat Message IDs on any port.
pub(crate) fn must_move(issued: u64, per_request: u64, per_port: u64) -> bool {
    issued > 0 && issued.saturating_add(per_request) > per_port
}

/// A client's current socket and endpoint, and the sockets it retired.
pub(crate) struct ClientPort {
    driver: UdpDriver,
    make: MakeEndpoint,
    /// Message IDs one socket may issue ([`MESSAGE_IDS_PER_PORT`]; smaller in tests).
    per_port: u64,
    /// The most Message IDs one request of this client has taken (1 until one took more:
    /// a block-wise transfer, an Echo retry).
    per_request: u64,
    /// The endpoint's count when the current request started (`None`: none yet).
    issued_at_request: Option<u64>,
    /// Retired sockets with the instant each was retired, oldest first.
    retired: VecDeque<(tokio::time::Instant, UdpSocket)>,
}

impl ClientPort {
    /// Starts on `driver` (its endpoint from `make(None)`), moving after `per_port` Message
    /// IDs.
    pub(crate) fn new(driver: UdpDriver, make: MakeEndpoint, per_port: u64) -> ClientPort {
        ClientPort {
            driver,
            make,
            per_port,
            per_request: 1,
            issued_at_request: None,
            retired: VecDeque::new(),
        }
    }

    /// The driver to send the next request on to `dest`: the current one, or a new socket
    /// and endpoint when the request could repeat a Message ID of this one. Call once per
    /// request, after the previous one ended (stop-and-wait). An `Err` (no socket or
    /// endpoint could be made, e.g. out of file descriptors) is a message for stderr.
    pub(crate) async fn for_request(&mut self, dest: SocketAddr) -> Result<&mut UdpDriver, String> {
        let issued = self.driver.endpoint().message_ids_issued();
        if let Some(start) = self.issued_at_request {
            self.per_request = self.per_request.max(issued - start);
        }
        if must_move(issued, self.per_request, self.per_port) {
            self.move_port(dest).await?;
        }
        self.issued_at_request = Some(self.driver.endpoint().message_ids_issued());
        Ok(&mut self.driver)
    }

    /// Binds a new socket with the next endpoint and retires the current socket; closes the
    /// retired sockets whose hold has passed.
    async fn move_port(&mut self, dest: SocketAddr) -> Result<(), String> {
        let socket = UdpSocket::bind(net::any_for(dest))
            .await
            .map_err(|e| format!("cannot bind a socket for a new port: {e}"))?;
        let endpoint = (self.make)(Some(self.driver.endpoint()))?;
        let mut old = std::mem::replace(&mut self.driver, UdpDriver::new(socket, endpoint));
        // An ACK of a separate response may still be queued.
        old.flush().await;
        let now = tokio::time::Instant::now();
        while self
            .retired
            .front()
            .is_some_and(|(at, _)| *at + RETIRED_HOLD <= now)
        {
            self.retired.pop_front();
        }
        self.retired.push_back((now, old.into_socket()));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_before_the_request_that_could_exceed_the_space() {
        // One Message ID per request: the 65,536th request stays, the 65,537th moves.
        assert!(!must_move(65_535, 1, MESSAGE_IDS_PER_PORT));
        assert!(must_move(65_536, 1, MESSAGE_IDS_PER_PORT));
        // Four per request (block-wise): 65,532 issued leaves room for exactly one more.
        assert!(!must_move(65_532, 4, MESSAGE_IDS_PER_PORT));
        assert!(must_move(65_533, 4, MESSAGE_IDS_PER_PORT));
        assert!(must_move(100, 1, 100));
        assert!(!must_move(99, 1, 100));
    }

    #[test]
    fn a_fresh_socket_never_moves() {
        assert!(!must_move(0, 1, 0));
        assert!(!must_move(0, 70_000, MESSAGE_IDS_PER_PORT));
        assert!(must_move(1, 70_000, MESSAGE_IDS_PER_PORT));
        assert!(!must_move(0, u64::MAX, 1));
    }
}
