//! A layer-3 TUN device opened through `/dev/net/tun` (`IFF_TUN | IFF_NO_PI`): every read
//! returns one whole IP packet, every write injects one into the kernel.
//!
//! The device exists while its file descriptor is open (it is not made persistent). Moving it
//! into another network namespace (`ip link set DEV netns NS`) keeps the descriptor working,
//! which is how one emulator process owns both ends of the emulated link (docs/experiments.md
//! §1.3). Without `IFF_VNET_HDR` the kernel hands over MTU-sized packets (no GSO/GRO).
#![allow(unsafe_code)] // TUNSETIFF, see `Tun::create` (the crate's other unsafe calls: TCP_INFO in tcp_sockets.rs, pre_exec in watchdog.rs).

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::os::unix::fs::OpenOptionsExt;

/// Longest interface name the kernel accepts (IFNAMSIZ − 1).
pub const MAX_NAME_BYTES: usize = libc::IFNAMSIZ - 1;

/// `struct ifreq` as TUNSETIFF reads it: the name, then the flags in the 24-byte union.
#[repr(C)]
struct IfReq {
    name: [libc::c_char; libc::IFNAMSIZ],
    flags: libc::c_short,
    _union_rest: [u8; 22],
}

/// An open TUN device in non-blocking mode.
#[derive(Debug)]
pub struct Tun {
    file: File,
    name: String,
}

impl Tun {
    /// Creates TUN device `name` (in the caller's network namespace) and opens it
    /// non-blocking. Needs `CAP_NET_ADMIN`. The name must be 1..=15 bytes of ASCII letters,
    /// digits, `-` or `_`, and unused.
    pub fn create(name: &str) -> io::Result<Tun> {
        let valid = |c: u8| c.is_ascii_alphanumeric() || c == b'-' || c == b'_';
        if name.is_empty() || name.len() > MAX_NAME_BYTES || !name.bytes().all(valid) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("bad TUN name {name:?} (1-{MAX_NAME_BYTES} of [A-Za-z0-9_-])"),
            ));
        }
        // std opens with O_CLOEXEC: children (ip, the client, the server) never inherit it.
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open("/dev/net/tun")?;
        let mut req = IfReq {
            name: [0; libc::IFNAMSIZ],
            flags: (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short,
            _union_rest: [0; 22],
        };
        for (dst, src) in req.name.iter_mut().zip(name.bytes()) {
            *dst = src as libc::c_char;
        }
        // SAFETY: `req` is a fully initialised, correctly laid out `struct ifreq` (40 bytes:
        // NUL-terminated name, flags at offset 16) that lives across the call; TUNSETIFF reads
        // and writes only inside it, and `file` is an open /dev/net/tun descriptor.
        let rc = unsafe { libc::ioctl(file.as_raw_fd(), libc::TUNSETIFF, &mut req as *mut IfReq) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(e.kind(), format!("TUNSETIFF {name}: {e}")));
        }
        Ok(Tun {
            file,
            name: name.to_owned(),
        })
    }

    /// The interface name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Reads one packet into `buf`; `WouldBlock` when none is waiting.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        (&self.file).read(buf)
    }

    /// Writes one packet: the kernel receives it as if it arrived on this interface.
    pub fn send(&self, packet: &[u8]) -> io::Result<usize> {
        (&self.file).write(packet)
    }
}

impl AsFd for Tun {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.file.as_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_names_are_refused_before_any_syscall() {
        for name in ["", "sixteen-chars-xx", "a/b", "sp ace"] {
            let e = Tun::create(name).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{name:?}");
        }
    }

    #[test]
    fn ifreq_has_the_kernel_layout() {
        assert_eq!(std::mem::size_of::<IfReq>(), 40);
        assert_eq!(std::mem::offset_of!(IfReq, flags), 16);
    }
}
