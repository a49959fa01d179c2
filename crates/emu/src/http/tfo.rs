//! TCP Fast Open (RFC 7413) socket options, which neither rustix nor socket2 wraps.
//!
//! - Listener: `TCP_FASTOPEN` with a queue length (pending TFO connections whose 3-way
//!   handshake is not complete yet); the kernel then accepts data in a SYN that carries a valid
//!   cookie and hands a new cookie out in the SYN-ACK of a SYN that asks for one.
//! - Client: `TCP_FASTOPEN_CONNECT` (Linux ≥ 4.11): `connect()` returns at once without sending
//!   anything when a cookie for the server is cached, and the first `write` sends SYN + data;
//!   without a cookie the SYN asks for one and the handshake is the usual one. So a first
//!   (warm-up) connection fetches the cookie and the next one carries its request in the SYN.
//!
//! Both need `net.ipv4.tcp_fastopen` = 3 (client and server bits) in the network namespace.
#![allow(unsafe_code)] // setsockopt(TCP_FASTOPEN[_CONNECT]): no safe wrapper exists.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

/// The listener's TFO queue length when none is given (pending SYN+data connections).
pub const DEFAULT_TFO_QUEUE: u32 = 16;

/// Sets an integer `IPPROTO_TCP` option.
fn set_tcp_int(fd: BorrowedFd<'_>, option: libc::c_int, value: libc::c_int) -> io::Result<()> {
    // SAFETY: the pointer and length describe `value`, which lives across the call; the fd is
    // borrowed, so it is open.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::IPPROTO_TCP,
            option,
            std::ptr::addr_of!(value).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `TCP_FASTOPEN` on a listening socket (set before or after `listen`), with at most
/// `queue` pending Fast Open connections.
pub fn set_listener_fastopen(fd: BorrowedFd<'_>, queue: u32) -> io::Result<()> {
    set_tcp_int(
        fd,
        libc::TCP_FASTOPEN,
        queue.min(i32::MAX as u32) as libc::c_int,
    )
}

/// `TCP_FASTOPEN_CONNECT` on a client socket before `connect`.
pub fn set_connect_fastopen(fd: BorrowedFd<'_>) -> io::Result<()> {
    set_tcp_int(fd, libc::TCP_FASTOPEN_CONNECT, 1)
}
