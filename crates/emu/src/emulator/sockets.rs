//! UDP sockets inside the emulator's namespaces, waited on together: what a program that
//! drives many endpoints itself (the emulated mode of `coaplab run`) needs instead of one
//! process per endpoint.
//!
//! A socket belongs to the network namespace that was current when it was created; each one
//! is created by a short-lived thread that first joins the namespace (`setns`), so the
//! caller's own namespace never changes.

use std::fs::File;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsFd;

use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::thread::{move_into_link_name_space, LinkNameSpaceType};

use super::netns::Namespace;

/// A UDP socket bound to `addr` inside `ns` (blocking; see [`UdpSocket::set_nonblocking`]).
pub fn bind_in(ns: &Namespace, addr: SocketAddr) -> io::Result<UdpSocket> {
    let path = ns.path();
    std::thread::spawn(move || {
        let f = File::open(&path)?;
        move_into_link_name_space(f.as_fd(), Some(LinkNameSpaceType::Network))?;
        UdpSocket::bind(addr)
    })
    .join()
    .map_err(|_| io::Error::other("the socket thread panicked"))?
}

/// Non-blocking UDP sockets, possibly in different namespaces, numbered in creation order.
#[derive(Debug, Default)]
pub struct UdpSet {
    sockets: Vec<UdpSocket>,
    /// Where the next [`UdpSet::recv_any`] sweep starts (round robin).
    next: usize,
}

impl UdpSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Binds a non-blocking socket to `addr` in `ns` and returns its number.
    pub fn bind(&mut self, ns: &Namespace, addr: SocketAddr) -> io::Result<usize> {
        let s = bind_in(ns, addr)?;
        s.set_nonblocking(true)?;
        self.sockets.push(s);
        Ok(self.sockets.len() - 1)
    }

    /// Socket `i`'s local address.
    pub fn local_addr(&self, i: usize) -> io::Result<SocketAddr> {
        self.socket(i)?.local_addr()
    }

    /// Sends `bytes` from socket `i` to `to`.
    pub fn send_to(&self, i: usize, bytes: &[u8], to: SocketAddr) -> io::Result<usize> {
        self.socket(i)?.send_to(bytes, to)
    }

    /// Blocks until a socket is readable or `timeout` passes; true when one is readable.
    pub fn wait(&self, timeout: std::time::Duration) -> io::Result<bool> {
        let mut fds: Vec<PollFd<'_>> = self
            .sockets
            .iter()
            .map(|s| PollFd::new(s, PollFlags::IN))
            .collect();
        let t = Timespec {
            tv_sec: timeout.as_secs() as i64,
            tv_nsec: i64::from(timeout.subsec_nanos()),
        };
        match poll(&mut fds, Some(&t)) {
            Ok(n) => Ok(n > 0),
            Err(rustix::io::Errno::INTR) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// One waiting datagram from any socket: `(socket, sender, length)` with the bytes in
    /// `buf`; `None` when every socket is empty. Sockets take turns.
    pub fn recv_any(&mut self, buf: &mut [u8]) -> io::Result<Option<(usize, SocketAddr, usize)>> {
        let n = self.sockets.len();
        for k in 0..n {
            let i = (self.next + k) % n;
            match self.sockets[i].recv_from(buf) {
                Ok((len, from)) => {
                    self.next = (i + 1) % n;
                    return Ok(Some((i, from, len)));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // An ICMP error reported on this socket (e.g. port unreachable): skip it.
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {}
                Err(e) => return Err(e),
            }
        }
        Ok(None)
    }

    fn socket(&self, i: usize) -> io::Result<&UdpSocket> {
        self.sockets
            .get(i)
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("no socket {i}")))
    }
}
