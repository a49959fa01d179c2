//! [`DatagramPipe`]: the byte stream OpenSSL's DTLS state machine reads records from and
//! writes records to, one datagram per `read`/`write` call, kept in memory so the driver owns
//! the socket and the session owns no I/O.

use std::collections::VecDeque;
use std::io::{self, Read, Write};

/// Datagrams queued for one DTLS session: `inbox` is what arrived from the peer (OpenSSL
/// reads it), `outbox` what OpenSSL wrote (the driver sends it). Reading an empty inbox is
/// `WouldBlock`, which OpenSSL treats as "no datagram yet" (and, during a handshake, as the
/// moment to check its retransmission timer).
#[derive(Debug, Default)]
pub(crate) struct DatagramPipe {
    pub(crate) inbox: VecDeque<Vec<u8>>,
    pub(crate) outbox: Vec<Vec<u8>>,
}

impl Read for DatagramPipe {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.inbox.pop_front() {
            // A datagram longer than OpenSSL's buffer is cut, as a UDP socket would; the
            // cut record then fails its MAC and is dropped by OpenSSL.
            Some(d) => {
                let n = d.len().min(buf.len());
                buf[..n].copy_from_slice(&d[..n]);
                Ok(n)
            }
            None => Err(io::ErrorKind::WouldBlock.into()),
        }
    }
}

impl Write for DatagramPipe {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // OpenSSL's DTLS writes one whole datagram per BIO write.
        self.outbox.push(buf.to_vec());
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_read_is_one_datagram_and_empty_would_block() {
        let mut p = DatagramPipe::default();
        p.inbox.push_back(vec![1, 2, 3]);
        p.inbox.push_back(vec![4]);
        let mut buf = [0u8; 8];
        assert_eq!(p.read(&mut buf).unwrap(), 3);
        assert_eq!(p.read(&mut buf).unwrap(), 1);
        assert_eq!(buf[0], 4);
        let e = p.read(&mut buf).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
        p.write_all(&[9, 9]).unwrap();
        assert_eq!(p.outbox, vec![vec![9, 9]]);
    }
}
