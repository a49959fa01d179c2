//! Kernel TCP sockets inside the emulator's namespaces, for programs that drive RFC 8323
//! sessions themselves (the emulated mode of `coaplab run`): a non-blocking listener and
//! non-blocking connects with a chosen congestion control (`TCP_CONGESTION`) and
//! `TCP_NODELAY`, and the kernel's own counters from `TCP_INFO`.
//!
//! As in [`super::sockets`], each socket is created by a short-lived thread that first joins
//! the namespace (`setns`); a socket stays in the namespace it was created in.
#![allow(unsafe_code)] // getsockopt(TCP_INFO) in `tcp_info`: rustix has no TCP_INFO.

use std::fs::File;
use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

use rustix::event::{poll, PollFd, PollFlags, Timespec};

use rustix::net::{sockopt, AddressFamily, SocketFlags, SocketType};
use rustix::thread::{move_into_link_name_space, LinkNameSpaceType};

use super::netns::Namespace;

/// Where the kernel lists the congestion controls sockets may ask for.
const AVAILABLE: &str = "/proc/sys/net/ipv4/tcp_available_congestion_control";

/// Whether the kernel offers congestion control `name` now (module loaded or built in).
pub fn congestion_available(name: &str) -> bool {
    std::fs::read_to_string(AVAILABLE).is_ok_and(|s| s.split_whitespace().any(|n| n == name))
}

/// Makes sure congestion control `name` is available, loading `tcp_<name>` with `modprobe`
/// when it is not; an error naming what is available otherwise.
pub fn ensure_congestion_control(name: &str) -> io::Result<()> {
    if congestion_available(name) {
        return Ok(());
    }
    if name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
        let _ = std::process::Command::new("modprobe")
            .arg("-q")
            .arg(format!("tcp_{name}"))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
    }
    if congestion_available(name) {
        return Ok(());
    }
    let offered = std::fs::read_to_string(AVAILABLE).unwrap_or_default();
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        format!(
            "the kernel has no TCP congestion control {name:?} (module tcp_{name} did not \
             load; available: {})",
            offered.trim()
        ),
    ))
}

/// Runs `f` on a thread that has joined network namespace `ns` (sockets `f` creates belong
/// to `ns`; so do the threads it starts), and returns its result.
pub fn in_namespace<T: Send + 'static>(
    ns: &Namespace,
    f: impl FnOnce() -> io::Result<T> + Send + 'static,
) -> io::Result<T> {
    let path = ns.path();
    std::thread::spawn(move || {
        let file = File::open(&path)?;
        move_into_link_name_space(file.as_fd(), Some(LinkNameSpaceType::Network))?;
        f()
    })
    .join()
    .map_err(|_| io::Error::other("the socket thread panicked"))?
}

fn family(addr: SocketAddr) -> AddressFamily {
    match addr {
        SocketAddr::V4(_) => AddressFamily::INET,
        SocketAddr::V6(_) => AddressFamily::INET6,
    }
}

/// A non-blocking, close-on-exec TCP socket with `TCP_NODELAY` and congestion control `cc`.
fn tcp_socket(addr: SocketAddr, cc: &str) -> io::Result<OwnedFd> {
    let fd = rustix::net::socket_with(
        family(addr),
        SocketType::STREAM,
        SocketFlags::NONBLOCK | SocketFlags::CLOEXEC,
        None,
    )?;
    sockopt::set_tcp_nodelay(&fd, true)?;
    sockopt::set_tcp_congestion(&fd, cc)
        .map_err(|e| io::Error::new(e.kind(), format!("TCP_CONGESTION {cc:?}: {e}")))?;
    Ok(fd)
}

/// A non-blocking listener on `addr` in `ns` whose connections use congestion control `cc`
/// (accepted sockets inherit it) and `TCP_NODELAY`.
pub fn listen_in(ns: &Namespace, addr: SocketAddr, cc: &str) -> io::Result<TcpListener> {
    let cc = cc.to_owned();
    in_namespace(ns, move || {
        let fd = tcp_socket(addr, &cc)?;
        sockopt::set_socket_reuseaddr(&fd, true)?;
        rustix::net::bind(&fd, &addr)?;
        rustix::net::listen(&fd, 1024)?;
        Ok(TcpListener::from(fd))
    })
}

/// Starts a non-blocking connect from `local` (port 0: ephemeral) in `ns` to `to` with
/// congestion control `cc` and `TCP_NODELAY`; the SYN is sent before this returns. The
/// stream becomes writable when the handshake ends; [`connect_result`] then tells how.
pub fn connect_in(
    ns: &Namespace,
    local: SocketAddr,
    to: SocketAddr,
    cc: &str,
) -> io::Result<TcpStream> {
    let cc = cc.to_owned();
    in_namespace(ns, move || {
        let fd = tcp_socket(to, &cc)?;
        rustix::net::bind(&fd, &local)?;
        match rustix::net::connect(&fd, &to) {
            Ok(()) | Err(rustix::io::Errno::INPROGRESS) => Ok(TcpStream::from(fd)),
            Err(e) => Err(e.into()),
        }
    })
}

/// The outcome of a non-blocking connect once the socket is writable (`SO_ERROR`).
pub fn connect_result(stream: &TcpStream) -> io::Result<()> {
    match sockopt::socket_error(stream)? {
        Ok(()) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// The socket's congestion control (`TCP_CONGESTION`).
pub fn congestion(fd: impl AsFd) -> io::Result<String> {
    Ok(sockopt::tcp_congestion(fd)?)
}

/// Sets the socket's congestion control (`TCP_CONGESTION`).
pub fn set_congestion(fd: impl AsFd, cc: &str) -> io::Result<()> {
    Ok(sockopt::set_tcp_congestion(fd, cc)?)
}

/// What a socket is waited for, or was found ready for, by [`wait_ready`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ready {
    /// Readable (data, the peer's FIN or an error to read).
    pub read: bool,
    /// Writable (a non-blocking connect has ended, or there is room to write).
    pub write: bool,
    /// An error or hang-up (reported whether asked for or not).
    pub error: bool,
}

/// Blocks until one of `fds` is ready for what it is waited for, or `timeout` passes; what
/// each is ready for, in order (an interrupted wait returns all not ready).
pub fn wait_ready(
    fds: &[(BorrowedFd<'_>, Ready)],
    timeout: std::time::Duration,
) -> io::Result<Vec<Ready>> {
    let mut polled: Vec<PollFd<'_>> = fds
        .iter()
        .map(|(fd, want)| {
            let mut f = PollFlags::empty();
            if want.read {
                f |= PollFlags::IN;
            }
            if want.write {
                f |= PollFlags::OUT;
            }
            PollFd::from_borrowed_fd(*fd, f)
        })
        .collect();
    let t = Timespec {
        tv_sec: timeout.as_secs() as i64,
        tv_nsec: i64::from(timeout.subsec_nanos()),
    };
    match poll(&mut polled, Some(&t)) {
        Ok(_) => {}
        Err(rustix::io::Errno::INTR) => return Ok(vec![Ready::default(); fds.len()]),
        Err(e) => return Err(e.into()),
    }
    Ok(polled
        .iter()
        .map(|p| {
            let r = p.revents();
            Ready {
                read: r.contains(PollFlags::IN),
                write: r.contains(PollFlags::OUT),
                error: r.intersects(PollFlags::ERR | PollFlags::HUP),
            }
        })
        .collect())
}

/// The counters of `TCP_INFO` that `coaplab run --mode emulated` reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TcpInfo {
    /// `tcpi_state` (1 = ESTABLISHED, 7 = CLOSE, …).
    pub state: u8,
    /// `tcpi_total_retrans`: segments retransmitted over the connection's life, SYN and
    /// SYN-ACK retransmissions included (a passive socket starts with its request's).
    pub total_retrans: u32,
    /// `tcpi_segs_out`: every segment sent (SYN, data, pure ACKs, FIN), retransmissions
    /// included.
    pub segs_out: u32,
    /// `tcpi_data_segs_out`: segments sent that carried payload, retransmissions included.
    pub data_segs_out: u32,
    /// `tcpi_bytes_sent`: payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    /// `tcpi_bytes_retrans`: payload bytes retransmitted.
    pub bytes_retrans: u64,
    /// `tcpi_total_rto`: retransmission-timer expiries (kernel ≥ 6.7; `None` before).
    pub total_rto: Option<u16>,
}

/// Reads `TCP_INFO` of a TCP socket.
pub fn tcp_info(fd: impl AsFd) -> io::Result<TcpInfo> {
    let fd = fd.as_fd();
    // SAFETY: `tcp_info` is plain old data (integers only), so all-zero bytes are a valid
    // value; getsockopt writes at most `len` bytes into it and reports how many in `len`.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: the pointer and length describe `info`, which lives across the call.
    let rc = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            std::ptr::addr_of_mut!(info).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    let filled = |end: usize| len as usize >= end;
    let rto_end = std::mem::offset_of!(libc::tcp_info, tcpi_total_rto) + 2;
    Ok(TcpInfo {
        state: info.tcpi_state,
        total_retrans: info.tcpi_total_retrans,
        segs_out: info.tcpi_segs_out,
        data_segs_out: info.tcpi_data_segs_out,
        bytes_sent: info.tcpi_bytes_sent,
        bytes_retrans: info.tcpi_bytes_retrans,
        total_rto: filled(rto_end).then_some(info.tcpi_total_rto),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_info_counts_a_loopback_exchange() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        use std::io::{Read, Write};
        client.write_all(b"hello").unwrap();
        let mut buf = [0; 5];
        server.read_exact(&mut buf).unwrap();
        let info = tcp_info(&client).unwrap();
        assert_eq!(info.state, 1, "{info:?}");
        assert_eq!(info.data_segs_out, 1, "{info:?}");
        assert_eq!(info.bytes_sent, 5, "{info:?}");
        assert!(info.segs_out >= 2, "{info:?}");
        assert_eq!(info.total_retrans, 0);
        assert!(!congestion(&client).unwrap().is_empty());
        assert!(congestion_available("reno"));
        assert!(ensure_congestion_control("no_such_cc").is_err());
    }
}
