//! [`BlockingUdpDriver`]: one plain-UDP [`Endpoint`] on a blocking socket, without an async
//! runtime.
//!
//! Why a second driver: a server answering one closed-loop client sleeps between every two
//! requests. On tokio's readiness path each request then costs about five system calls
//! (`recvfrom`, `sendto`, a `recvfrom` returning `EAGAIN`, two `epoll_wait`, measured with
//! perf's syscall tracepoints) plus the runtime's bookkeeping; here it costs two: a blocking `recvfrom` that sleeps in the socket's own wait queue, and a
//! `sendto`. The endpoint's next deadline ([`Endpoint::poll_timeout`]) becomes the socket's
//! receive timeout (`SO_RCVTIMEO`), re-set only when it must move, so steady traffic costs no
//! `setsockopt`.
//!
//! It serves plain UDP only (no DTLS layer, no other socket on the same thread): a caller
//! that also serves TCP or DTLS keeps [`UdpDriver`](crate::UdpDriver).
//!
//! Time resolution: the kernel rounds `SO_RCVTIMEO` up to whole scheduler ticks (4 ms at
//! `CONFIG_HZ=250`), so a timer fires up to about two ticks after its deadline (tokio's timer
//! wheel: up to 1 ms). The endpoint's deadlines are soft, and a server's are retransmissions
//! (seconds), Observe periods and cache purges, for which that is well within their slack.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use coaplab_base::time::Instant;
use coaplab_endpoint::{Endpoint, Event};

use crate::datagram::{count_send, to_instant, DriverStats, MAX_DATAGRAM_BYTES};

/// The longest single wait in a receive: a stop request that arrives just before the
/// receive starts (so does not interrupt it) is seen within this bound, and a timeout this
/// short stays on the kernel timer wheel's finest levels (1-tick steps up to 63 ticks, 8-tick
/// steps up to 511), so a capped wait is never late by more than a few ticks.
pub const MAX_RECV_WAIT: Duration = Duration::from_millis(200);

/// The shortest receive timeout set (`SO_RCVTIMEO` 0 would mean "wait forever").
const MIN_RECV_WAIT: Duration = Duration::from_millis(1);

/// Drives one [`Endpoint`] over one blocking UDP socket in real time, plain UDP only.
///
/// Endpoint time is the wall-clock time elapsed since `start`, in integer nanoseconds, as
/// in [`UdpDriver`](crate::UdpDriver) (which hands its start over in
/// [`UdpDriver::into_blocking`](crate::UdpDriver::into_blocking)).
#[derive(Debug)]
pub struct BlockingUdpDriver {
    socket: UdpSocket,
    endpoint: Endpoint,
    start: std::time::Instant,
    send_buf: Vec<u8>,
    recv_buf: Vec<u8>,
    stats: DriverStats,
    /// The receive timeout the socket has now (`SO_RCVTIMEO`), so that an unchanged one is
    /// not set again.
    recv_wait: Duration,
}

impl BlockingUdpDriver {
    /// Drives `endpoint` on `socket` (switched to blocking mode), endpoint time counted from
    /// `start`.
    pub fn new(
        socket: UdpSocket,
        endpoint: Endpoint,
        start: std::time::Instant,
    ) -> io::Result<BlockingUdpDriver> {
        socket.set_nonblocking(false)?;
        socket.set_read_timeout(Some(MAX_RECV_WAIT))?;
        Ok(BlockingUdpDriver {
            socket,
            endpoint,
            start,
            send_buf: Vec::new(),
            recv_buf: vec![0; MAX_DATAGRAM_BYTES],
            stats: DriverStats::default(),
            recv_wait: MAX_RECV_WAIT,
        })
    }

    /// Starts the counters from `earlier` (a driver handed over from [`UdpDriver`](crate::UdpDriver)).
    pub(crate) fn set_stats(&mut self, earlier: DriverStats) {
        self.stats = earlier;
    }

    /// The socket's local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.socket.local_addr()
    }

    /// The endpoint, for getters.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// The endpoint, for commands; [`BlockingUdpDriver::next_event`] sends what they queued.
    pub fn endpoint_mut(&mut self) -> &mut Endpoint {
        &mut self.endpoint
    }

    /// What was moved so far.
    pub fn stats(&self) -> DriverStats {
        self.stats
    }

    /// The current endpoint time (wall clock since the start).
    pub fn now(&self) -> Instant {
        to_instant(self.start.elapsed())
    }

    /// Runs the endpoint (sending, receiving, firing timers) until it emits an event, and
    /// returns it; `None` once `stop` is set. `stop` is checked before every receive, and a
    /// receive ends at the latest after [`MAX_RECV_WAIT`] (at once when a signal handler runs
    /// on this thread: the socket has a receive timeout, so `recvfrom` fails with `EINTR`
    /// instead of restarting, signal(7)). Socket errors are counted and otherwise ignored,
    /// as losses (a server must not stop because one client went away).
    pub fn next_event(&mut self, stop: &AtomicBool) -> Option<Event> {
        loop {
            self.send_queued();
            if let Some(e) = self.endpoint.poll_event() {
                return Some(e);
            }
            let now = self.now();
            let due = self.endpoint.poll_timeout();
            // A due timer goes first, so a flood of datagrams cannot starve retransmissions.
            if due.is_some_and(|d| d <= now) {
                self.endpoint.handle_timeout(now);
                continue;
            }
            if stop.load(Ordering::Relaxed) {
                return None;
            }
            let wait = due.map_or(MAX_RECV_WAIT, |d| {
                let ns = d.saturating_since(now).as_nanos().max(0) as u64;
                Duration::from_nanos(ns)
            });
            if self.arm(wait).is_err() {
                // The timeout set before stays, bounded by MAX_RECV_WAIT: a timer may fire
                // late, nothing blocks for ever.
                self.stats.recv_errors += 1;
            }
            match self.socket.recv_from(&mut self.recv_buf) {
                Ok((n, from)) => {
                    self.stats.datagrams_in += 1;
                    let now = self.now();
                    self.endpoint
                        .handle_datagram(now, from, &self.recv_buf[..n]);
                }
                // The receive timeout (EAGAIN) or a signal (EINTR): the loop looks at the
                // timers and the stop flag again.
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock
                            | io::ErrorKind::TimedOut
                            | io::ErrorKind::Interrupted
                    ) => {}
                Err(_) => self.stats.recv_errors += 1,
            }
        }
    }

    /// Sets the socket's receive timeout to end the next receive no later than `wait` from
    /// now (rounded up to whole milliseconds, at most [`MAX_RECV_WAIT`]). The timeout already
    /// set is kept when it ends no later than that and not much earlier (at least half of
    /// `wait`): an early end costs only one spurious wake-up, a `setsockopt` per request
    /// would cost a third system call.
    fn arm(&mut self, wait: Duration) -> io::Result<()> {
        let ms = wait.as_nanos().div_ceil(1_000_000);
        let want = Duration::from_millis(u64::try_from(ms).unwrap_or(u64::MAX))
            .clamp(MIN_RECV_WAIT, MAX_RECV_WAIT);
        if self.recv_wait > want || self.recv_wait * 2 < want {
            self.socket.set_read_timeout(Some(want))?;
            self.recv_wait = want;
        }
        Ok(())
    }

    /// Sends every queued datagram, counting each (sent, or a send error).
    fn send_queued(&mut self) {
        let now = self.now();
        while let Some(h) = self.endpoint.poll_transmit_into(now, &mut self.send_buf) {
            let sent = self.socket.send_to(&self.send_buf, h.destination);
            let _ = count_send(&mut self.stats, sent);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coaplab_base::Settings;
    use coaplab_endpoint::{registry_factory, Config, Request, Router};
    use std::sync::Arc;

    fn endpoint(seed: u64, config: Config) -> Endpoint {
        let factory = registry_factory("cocoa", &Settings::new(), seed).unwrap();
        Endpoint::new(config, factory, Router::new()).unwrap()
    }

    fn server(config: Config) -> BlockingUdpDriver {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        BlockingUdpDriver::new(socket, endpoint(2, config), std::time::Instant::now()).unwrap()
    }

    /// A client on a plain std socket: one CON GET, the answer back, bounded by a guard.
    fn get(server: SocketAddr, path: &str) -> Vec<u8> {
        let client = UdpSocket::bind("127.0.0.1:0").unwrap();
        client
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut ep = endpoint(1, Config::default());
        let start = std::time::Instant::now();
        ep.request(to_instant(start.elapsed()), server, &Request::get(path));
        let mut buf = Vec::new();
        while let Some(h) = ep.poll_transmit_into(to_instant(start.elapsed()), &mut buf) {
            client.send_to(&buf, h.destination).unwrap();
        }
        let mut answer = vec![0; MAX_DATAGRAM_BYTES];
        let (n, _) = client.recv_from(&mut answer).unwrap();
        answer.truncate(n);
        answer
    }

    /// A stop flag and the thread that sets it after `delay`.
    fn stop_after(delay: Duration) -> (Arc<AtomicBool>, std::thread::JoinHandle<()>) {
        let stop = Arc::new(AtomicBool::new(false));
        let setter = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                std::thread::sleep(delay);
                stop.store(true, Ordering::Relaxed);
            })
        };
        (stop, setter)
    }

    #[test]
    fn serves_a_get_and_stops_on_the_flag() {
        let mut server = server(Config::default());
        let addr = server.local_addr().unwrap();
        let stop = AtomicBool::new(false);
        let client = std::thread::spawn(move || get(addr, "data/10"));
        assert!(matches!(
            server.next_event(&stop),
            Some(Event::Served { .. })
        ));
        let answer = client.join().unwrap();
        // A piggybacked 2.05 Content ACK (RFC 7252 §3: version 1, type ACK = 2, code 2.05).
        assert_eq!(answer[0] >> 4, 0b0110);
        assert_eq!(answer[1], 0x45);
        assert!(answer.ends_with(&[0xff, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]));
        assert_eq!(server.stats().datagrams_in, 1);
        assert_eq!(server.stats().datagrams_out, 1);
        stop.store(true, Ordering::Relaxed);
        assert_eq!(server.next_event(&stop), None);
    }

    /// A stop request set while the driver waits in `recvfrom` (nothing arrives, no signal
    /// interrupts it) is seen once the receive timeout ends it: within MAX_RECV_WAIT.
    #[test]
    fn a_stop_set_during_a_receive_ends_it_within_the_bound() {
        let mut server = server(Config::default());
        let (stop, setter) = stop_after(Duration::from_millis(50));
        assert_eq!(server.next_event(&stop), None);
        setter.join().unwrap();
        assert_eq!(server.stats().recv_errors, 0);
    }

    #[test]
    fn an_idle_server_purges_its_duplicate_cache_on_the_timer() {
        let config = Config {
            dedup_lifetime: Some(coaplab_base::time::Duration::from_millis(200)),
            dedup_purge_timer: true,
            ..Config::default()
        };
        let mut server = server(config);
        let addr = server.local_addr().unwrap();
        let client = std::thread::spawn(move || get(addr, "data/10"));
        let running = AtomicBool::new(false);
        assert!(matches!(
            server.next_event(&running),
            Some(Event::Served { .. })
        ));
        client.join().unwrap();
        assert_eq!(server.endpoint().dedup_entries(), 1);
        // No more traffic: only the receive timeout can fire the purge timer. The stop flag
        // is set after 600 ms, three lifetimes.
        let (stop, setter) = stop_after(Duration::from_millis(600));
        assert_eq!(server.next_event(&stop), None);
        setter.join().unwrap();
        assert_eq!(server.endpoint().dedup_entries(), 0);
    }

    #[test]
    fn the_receive_timeout_is_set_only_when_it_must_move() {
        let mut server = server(Config::default());
        assert_eq!(server.recv_wait, MAX_RECV_WAIT);
        server.arm(Duration::from_secs(5)).unwrap();
        assert_eq!(server.recv_wait, MAX_RECV_WAIT);
        // A deadline in 30.2 ms: rounded up to 31 ms.
        server.arm(Duration::from_micros(30_200)).unwrap();
        assert_eq!(server.recv_wait, Duration::from_millis(31));
        // Later but less than twice as far: kept (ends early, one spurious wake-up).
        server.arm(Duration::from_millis(50)).unwrap();
        assert_eq!(server.recv_wait, Duration::from_millis(31));
        server.arm(Duration::from_millis(63)).unwrap();
        assert_eq!(server.recv_wait, Duration::from_millis(63));
        // Due now: the shortest timeout, never 0 (which would mean forever).
        server.arm(Duration::ZERO).unwrap();
        assert_eq!(server.recv_wait, MIN_RECV_WAIT);
        // The kernel keeps it rounded up to whole ticks (1 to 10 ms for HZ 1000 to 100).
        let kept = server.socket.read_timeout().unwrap().unwrap();
        assert!(
            (MIN_RECV_WAIT..=Duration::from_millis(10)).contains(&kept),
            "{kept:?}"
        );
    }
}
