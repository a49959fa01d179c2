//! [`Session`]: one DTLS association (one peer) as a state machine over a [`DatagramPipe`]:
//! records in, plaintext datagrams and records out.

use openssl::ssl::{ErrorCode, HandshakeError, MidHandshakeSslStream, Ssl, SslStream};

use super::config::Context;
use super::pipe::DatagramPipe;

/// Where a session is.
#[derive(Debug)]
enum State {
    Handshaking(MidHandshakeSslStream<DatagramPipe>),
    Established(SslStream<DatagramPipe>),
    /// Failed or closed; the reason is kept for the caller.
    Closed,
}

/// What a call on a [`Session`] changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Progress {
    /// Nothing to report.
    None,
    /// The handshake completed with this cipher suite.
    Established(String),
    /// The session ended: a failed handshake (bad key, bad certificate, an alert) or a
    /// close_notify/fatal alert afterwards.
    Closed(String),
}

/// One DTLS association.
#[derive(Debug)]
pub(crate) struct Session {
    state: State,
    /// Records OpenSSL wrote that the driver has not taken yet (a copy of the pipe's outbox
    /// while the stream is borrowed).
    out: Vec<Vec<u8>>,
}

impl Session {
    /// A client session; it writes its ClientHello at once (taken with
    /// [`Session::take_records`]).
    pub(crate) fn connect(ctx: &Context) -> Result<Session, String> {
        let mut ssl = Ssl::new(&ctx.ctx).map_err(|e| e.to_string())?;
        ssl.set_mtu(ctx.mtu_bytes).map_err(|e| e.to_string())?;
        let r = ssl.connect(DatagramPipe::default());
        Session::started(r)
    }

    /// A server session for a peer whose ClientHello returned `cookie`, verified by the layer:
    /// OpenSSL is given `first_hello` (that ClientHello without its cookie, as message 0) and
    /// answers it with a HelloVerifyRequest carrying `cookie`, which is discarded (the peer
    /// had the layer's). The real ClientHello then continues the handshake.
    pub(crate) fn accept(
        ctx: &Context,
        first_hello: &[u8],
        cookie: &[u8],
    ) -> Result<Session, String> {
        let mut ssl = Ssl::new(&ctx.ctx).map_err(|e| e.to_string())?;
        ssl.set_mtu(ctx.mtu_bytes).map_err(|e| e.to_string())?;
        ssl.set_ex_data(ctx.cookie_index, cookie.to_vec());
        let mut pipe = DatagramPipe::default();
        pipe.inbox.push_back(first_hello.to_vec());
        let mut s = Session::started(ssl.accept(pipe))?;
        if !s.is_handshaking() {
            return Err("the first ClientHello did not start a handshake".into());
        }
        s.take_records();
        Ok(s)
    }

    fn started(
        r: Result<SslStream<DatagramPipe>, HandshakeError<DatagramPipe>>,
    ) -> Result<Session, String> {
        let mut s = Session {
            state: State::Closed,
            out: Vec::new(),
        };
        match s.after_handshake_step(r) {
            Progress::Closed(why) => Err(why),
            _ => Ok(s),
        }
    }

    /// Whether the handshake is done and the session is open.
    pub(crate) fn is_established(&self) -> bool {
        matches!(self.state, State::Established(_))
    }

    /// Whether the handshake is still running.
    pub(crate) fn is_handshaking(&self) -> bool {
        matches!(self.state, State::Handshaking(_))
    }

    /// Takes the records to send to the peer.
    pub(crate) fn take_records(&mut self) -> Vec<Vec<u8>> {
        match &mut self.state {
            State::Handshaking(m) => self.out.append(&mut m.get_mut().outbox),
            State::Established(s) => self.out.append(&mut s.get_mut().outbox),
            State::Closed => {}
        }
        std::mem::take(&mut self.out)
    }

    /// A datagram from the peer: the plaintext datagrams it carried go to `plaintext`.
    pub(crate) fn handle_datagram(
        &mut self,
        datagram: &[u8],
        scratch: &mut [u8],
        plaintext: &mut Vec<Vec<u8>>,
    ) -> Progress {
        match &mut self.state {
            State::Handshaking(m) => m.get_mut().inbox.push_back(datagram.to_vec()),
            State::Established(s) => s.get_mut().inbox.push_back(datagram.to_vec()),
            State::Closed => return Progress::None,
        }
        let progress = self.drive();
        // Application data may follow the peer's Finished in the same datagram.
        if let Progress::Closed(_) = progress {
            return progress;
        }
        match self.read_plaintext(scratch, plaintext) {
            Progress::None => progress,
            closed => closed,
        }
    }

    /// Lets OpenSSL retransmit a handshake flight whose timer expired (it reads its own
    /// clock); a no-op once established.
    pub(crate) fn handle_timeout(&mut self) -> Progress {
        self.drive()
    }

    /// Encrypts one plaintext datagram into one record (taken with
    /// [`Session::take_records`]). Err: not established, or OpenSSL refused.
    pub(crate) fn send(&mut self, plaintext: &[u8]) -> Result<(), String> {
        let State::Established(s) = &mut self.state else {
            return Err("no DTLS session".into());
        };
        match s.ssl_write(plaintext) {
            Ok(_) => Ok(()),
            Err(e) => Err(e.to_string()),
        }
    }

    /// Sends close_notify and closes.
    pub(crate) fn close(&mut self) {
        if let State::Established(s) = &mut self.state {
            let _ = s.shutdown();
            self.out.append(&mut s.get_mut().outbox);
        }
        self.state = State::Closed;
    }

    /// Continues a running handshake with what the pipe holds.
    fn drive(&mut self) -> Progress {
        match std::mem::replace(&mut self.state, State::Closed) {
            State::Handshaking(m) => {
                let r = m.handshake();
                self.after_handshake_step(r)
            }
            other => {
                self.state = other;
                Progress::None
            }
        }
    }

    fn after_handshake_step(
        &mut self,
        r: Result<SslStream<DatagramPipe>, HandshakeError<DatagramPipe>>,
    ) -> Progress {
        match r {
            Ok(mut s) => {
                self.out.append(&mut s.get_mut().outbox);
                let cipher = s
                    .ssl()
                    .current_cipher()
                    .map_or("?", |c| c.name())
                    .to_owned();
                self.state = State::Established(s);
                Progress::Established(cipher)
            }
            Err(HandshakeError::WouldBlock(mut m)) => {
                self.out.append(&mut m.get_mut().outbox);
                self.state = State::Handshaking(m);
                Progress::None
            }
            Err(HandshakeError::Failure(mut m)) => {
                // The alert OpenSSL wrote still goes out.
                self.out.append(&mut m.get_mut().outbox);
                let why = describe(m.error());
                self.state = State::Closed;
                Progress::Closed(why)
            }
            Err(HandshakeError::SetupFailure(e)) => {
                self.state = State::Closed;
                Progress::Closed(e.to_string())
            }
        }
    }

    /// Reads every decrypted record (one CoAP message each, RFC 7252 §9.1) the pipe holds.
    fn read_plaintext(&mut self, buf: &mut [u8], plaintext: &mut Vec<Vec<u8>>) -> Progress {
        let State::Established(s) = &mut self.state else {
            return Progress::None;
        };
        let progress = loop {
            match s.ssl_read(buf) {
                Ok(n) => plaintext.push(buf[..n].to_vec()),
                Err(e) if e.code() == ErrorCode::WANT_READ => break Progress::None,
                Err(e) if e.code() == ErrorCode::ZERO_RETURN => {
                    break Progress::Closed("the peer closed the session (close_notify)".into())
                }
                Err(e) => break Progress::Closed(describe(&e)),
            }
        };
        self.out.append(&mut s.get_mut().outbox);
        if let Progress::Closed(_) = progress {
            self.state = State::Closed;
        }
        progress
    }
}

/// A one-line reason from an OpenSSL error (the alert or the library's reason).
fn describe(e: &openssl::ssl::Error) -> String {
    match e.ssl_error() {
        Some(stack) => stack
            .errors()
            .iter()
            .map(|x| x.reason().unwrap_or("unknown").to_owned())
            .collect::<Vec<_>>()
            .join("; "),
        None => match e.io_error() {
            Some(io) => io.to_string(),
            None => format!("{:?}", e.code()),
        },
    }
}
