//! The stateless half of the RFC 6347 §4.2.1 cookie exchange: a ClientHello is parsed here,
//! answered with a HelloVerifyRequest carrying a cookie (HMAC-SHA256 of the peer's address and
//! the ClientHello's version, random and session id, under a secret that rotates), and only a
//! ClientHello that returns a valid cookie makes the server keep anything for its peer. This is
//! what OpenSSL's `DTLSv1_listen` does; the `openssl` crate does not expose it, so the record
//! and the handshake header are read here (they are plain TLV bytes; nothing is decrypted).
//!
//! A session created for a verified ClientHello is given a [`first_hello`] first: the same
//! ClientHello without a cookie, as message 0, so OpenSSL's state machine is where it would be
//! after its own HelloVerifyRequest, and the real ClientHello (message 1, whose cookie
//! OpenSSL's callback then accepts) continues the handshake with the transcript the client
//! has.

use std::net::SocketAddr;

use coaplab_base::time::{Duration, Instant};
use thiserror::Error;

/// DTLS record header: type, version, epoch, sequence number, length.
pub const RECORD_HEADER_BYTES: usize = 13;
/// DTLS handshake header: type, length, message_seq, fragment_offset, fragment_length.
pub const HANDSHAKE_HEADER_BYTES: usize = 12;
/// The cookie's length: a whole HMAC-SHA256.
pub const COOKIE_BYTES: usize = 32;
/// The HelloVerifyRequest's size: record and handshake headers, server_version, the cookie
/// and its length byte. Smaller than any ClientHello it answers (no amplification).
pub const HELLO_VERIFY_BYTES: usize =
    RECORD_HEADER_BYTES + HANDSHAKE_HEADER_BYTES + 3 + COOKIE_BYTES;

const CONTENT_HANDSHAKE: u8 = 22;
const MSG_CLIENT_HELLO: u8 = 1;
const MSG_HELLO_VERIFY_REQUEST: u8 = 3;
/// DTLS 1.0 on the wire; what a HelloVerifyRequest carries whatever version follows
/// (RFC 6347 §4.2.1, OpenSSL's choice too).
const DTLS1_0: [u8; 2] = [0xfe, 0xff];

/// Why a datagram is not a ClientHello that the stateless exchange can answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum HelloError {
    /// Shorter than a record header.
    #[error("shorter than a DTLS record header")]
    TooShort,
    /// Not a handshake record.
    #[error("not a handshake record")]
    NotHandshake,
    /// A record version whose major byte is not DTLS's (0xfe).
    #[error("not a DTLS record version")]
    BadVersion,
    /// Epoch other than 0: not an initial ClientHello.
    #[error("epoch is not 0")]
    NotEpochZero,
    /// The record's or the message's lengths do not add up.
    #[error("lengths do not add up")]
    BadLength,
    /// A handshake message other than ClientHello.
    #[error("not a ClientHello")]
    NotClientHello,
    /// message_seq above 1 (a ClientHello is message 0, or 1 after a HelloVerifyRequest).
    #[error("message_seq above 1")]
    BadMessageSeq,
    /// Not the first fragment of the message (fragment_offset > 0).
    #[error("not the first fragment of the ClientHello")]
    NotFirstFragment,
    /// The fragment ends before the cookie.
    #[error("the first fragment ends before the cookie")]
    Truncated,
}

impl HelloError {
    /// A short label for counters.
    pub fn label(self) -> &'static str {
        match self {
            HelloError::TooShort => "too_short",
            HelloError::NotHandshake => "not_handshake",
            HelloError::BadVersion => "bad_version",
            HelloError::NotEpochZero => "not_epoch_zero",
            HelloError::BadLength => "bad_length",
            HelloError::NotClientHello => "not_client_hello",
            HelloError::BadMessageSeq => "bad_message_seq",
            HelloError::NotFirstFragment => "not_first_fragment",
            HelloError::Truncated => "truncated",
        }
    }
}

/// The parts of a ClientHello record the cookie exchange needs, borrowed from the datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientHello<'a> {
    /// The record's version bytes.
    pub record_version: [u8; 2],
    /// The record's 48-bit sequence number (epoch 0).
    pub record_seq: u64,
    /// The handshake message_seq (0 or 1).
    pub message_seq: u16,
    /// Whether the record holds the whole message (not only its first fragment).
    pub whole: bool,
    /// client_version.
    pub client_version: [u8; 2],
    /// The 32-byte random.
    pub random: &'a [u8],
    /// The session id (0–32 bytes).
    pub session_id: &'a [u8],
    /// The cookie (empty in a first ClientHello).
    pub cookie: &'a [u8],
    /// The message body after the cookie (cipher suites, compression, extensions), as far as
    /// this record holds it.
    pub rest: &'a [u8],
}

/// Parses the first record of `datagram` as an epoch-0 ClientHello (its first fragment at
/// least, up to the cookie). Never panics, whatever the bytes.
pub fn parse(datagram: &[u8]) -> Result<ClientHello<'_>, HelloError> {
    let d = datagram;
    if d.len() < RECORD_HEADER_BYTES {
        return Err(HelloError::TooShort);
    }
    if d[0] != CONTENT_HANDSHAKE {
        return Err(HelloError::NotHandshake);
    }
    if d[1] != 0xfe {
        return Err(HelloError::BadVersion);
    }
    if d[3] != 0 || d[4] != 0 {
        return Err(HelloError::NotEpochZero);
    }
    let record_seq = d[5..11]
        .iter()
        .fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
    let record_len = usize::from(u16::from_be_bytes([d[11], d[12]]));
    let fragment = d
        .get(RECORD_HEADER_BYTES..RECORD_HEADER_BYTES + record_len)
        .ok_or(HelloError::BadLength)?;
    if fragment.len() < HANDSHAKE_HEADER_BYTES {
        return Err(HelloError::BadLength);
    }
    if fragment[0] != MSG_CLIENT_HELLO {
        return Err(HelloError::NotClientHello);
    }
    let u24 = |b: &[u8]| (usize::from(b[0]) << 16) | (usize::from(b[1]) << 8) | usize::from(b[2]);
    let msg_len = u24(&fragment[1..4]);
    let message_seq = u16::from_be_bytes([fragment[4], fragment[5]]);
    let frag_off = u24(&fragment[6..9]);
    let frag_len = u24(&fragment[9..12]);
    if message_seq > 1 {
        return Err(HelloError::BadMessageSeq);
    }
    if frag_off != 0 {
        return Err(HelloError::NotFirstFragment);
    }
    if frag_len > msg_len || frag_len != fragment.len() - HANDSHAKE_HEADER_BYTES {
        return Err(HelloError::BadLength);
    }
    let body = &fragment[HANDSHAKE_HEADER_BYTES..];
    let mut r = Reader(body);
    let client_version = r.take(2).ok_or(HelloError::Truncated)?;
    let random = r.take(32).ok_or(HelloError::Truncated)?;
    let session_id = r.vec8().ok_or(HelloError::Truncated)?;
    if session_id.len() > 32 {
        return Err(HelloError::BadLength);
    }
    let cookie = r.vec8().ok_or(HelloError::Truncated)?;
    Ok(ClientHello {
        record_version: [d[1], d[2]],
        record_seq,
        message_seq,
        whole: frag_len == msg_len,
        client_version: [client_version[0], client_version[1]],
        random,
        session_id,
        cookie,
        rest: r.0,
    })
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }

    fn vec8(&mut self) -> Option<&'a [u8]> {
        let n = usize::from(*self.take(1)?.first()?);
        self.take(n)
    }
}

/// The HelloVerifyRequest answering `hello` with `cookie` (RFC 6347 §4.2.1): the record
/// sequence number is the ClientHello's, message_seq 0, DTLS 1.0 versions, one record.
pub fn hello_verify_request(hello: &ClientHello<'_>, cookie: &[u8; COOKIE_BYTES]) -> Vec<u8> {
    let body_len = 3 + COOKIE_BYTES;
    let mut out = Vec::with_capacity(HELLO_VERIFY_BYTES);
    out.push(CONTENT_HANDSHAKE);
    out.extend_from_slice(&DTLS1_0);
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&hello.record_seq.to_be_bytes()[2..]);
    out.extend_from_slice(&((HANDSHAKE_HEADER_BYTES + body_len) as u16).to_be_bytes());
    out.push(MSG_HELLO_VERIFY_REQUEST);
    let len24 = (body_len as u32).to_be_bytes();
    out.extend_from_slice(&len24[1..]);
    out.extend_from_slice(&[0, 0]); // message_seq
    out.extend_from_slice(&[0, 0, 0]); // fragment_offset
    out.extend_from_slice(&len24[1..]);
    out.extend_from_slice(&DTLS1_0);
    out.push(COOKIE_BYTES as u8);
    out.extend_from_slice(cookie);
    out
}

/// The first ClientHello the client sent, as far as OpenSSL needs it: `hello` without its
/// cookie, as message 0 in the record before `hello`'s. None when `hello` is not a whole
/// message 1 in a record numbered above 0 (such a ClientHello cannot follow a
/// HelloVerifyRequest).
pub fn first_hello(hello: &ClientHello<'_>) -> Option<Vec<u8>> {
    if hello.message_seq != 1 || hello.record_seq == 0 || !hello.whole {
        return None;
    }
    let body_len = 2 + 32 + 1 + hello.session_id.len() + 1 + hello.rest.len();
    let record_len = HANDSHAKE_HEADER_BYTES + body_len;
    let record_len16 = u16::try_from(record_len).ok()?;
    let mut out = Vec::with_capacity(RECORD_HEADER_BYTES + record_len);
    out.push(CONTENT_HANDSHAKE);
    out.extend_from_slice(&hello.record_version);
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&(hello.record_seq - 1).to_be_bytes()[2..]);
    out.extend_from_slice(&record_len16.to_be_bytes());
    out.push(MSG_CLIENT_HELLO);
    let len24 = (body_len as u32).to_be_bytes();
    out.extend_from_slice(&len24[1..]);
    out.extend_from_slice(&[0, 0]); // message_seq 0
    out.extend_from_slice(&[0, 0, 0]);
    out.extend_from_slice(&len24[1..]);
    out.extend_from_slice(&hello.client_version);
    out.extend_from_slice(hello.random);
    out.push(hello.session_id.len() as u8);
    out.extend_from_slice(hello.session_id);
    out.push(0); // no cookie
    out.extend_from_slice(hello.rest);
    Some(out)
}

/// The bytes a cookie is computed over: the peer's address (IP and port) and the
/// ClientHello's version, random and session id (all within its first fragment, and equal in
/// the first and the second ClientHello, RFC 6347 §4.2.1).
pub fn cookie_input(peer: SocketAddr, hello: &ClientHello<'_>) -> Vec<u8> {
    let mut m = Vec::with_capacity(64 + hello.session_id.len());
    match peer.ip() {
        std::net::IpAddr::V4(a) => {
            m.push(4);
            m.extend_from_slice(&a.octets());
        }
        std::net::IpAddr::V6(a) => {
            m.push(6);
            m.extend_from_slice(&a.octets());
        }
    }
    m.extend_from_slice(&peer.port().to_be_bytes());
    m.extend_from_slice(&hello.client_version);
    m.extend_from_slice(hello.random);
    m.push(hello.session_id.len() as u8);
    m.extend_from_slice(hello.session_id);
    m
}

/// The cookie secrets: the current one and the one before it, each drawn from OpenSSL's
/// random generator. Every `lifetime` the current one becomes the previous one, so a cookie
/// is accepted for between one and two lifetimes after it was given.
pub(crate) struct CookieSecrets {
    current: [u8; 32],
    previous: [u8; 32],
    rotated_at: Instant,
    lifetime: Duration,
    /// Rotations so far (mixed into the next secret if the random generator fails).
    rotations: u64,
}

impl std::fmt::Debug for CookieSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CookieSecrets")
    }
}

impl CookieSecrets {
    /// Fresh secrets at `now`.
    pub(crate) fn new(now: Instant, lifetime: Duration) -> CookieSecrets {
        let mut s = CookieSecrets {
            current: [0; 32],
            previous: [0; 32],
            rotated_at: now,
            lifetime,
            rotations: 0,
        };
        s.current = s.draw();
        s.previous = s.draw();
        s
    }

    fn draw(&mut self) -> [u8; 32] {
        self.rotations += 1;
        let mut k = [0u8; 32];
        if openssl::rand::rand_bytes(&mut k).is_err() {
            // Never seen; still a secret nobody outside knows, and a new one each time.
            let mut h = openssl::sha::Sha256::new();
            h.update(&self.current);
            h.update(&self.previous);
            h.update(&self.rotations.to_be_bytes());
            k = h.finish();
        }
        k
    }

    /// Rotates when the current secret is `lifetime` old (twice past it: both are new).
    pub(crate) fn rotate(&mut self, now: Instant) {
        let age = now.saturating_since(self.rotated_at);
        if self.lifetime <= Duration::ZERO || age < self.lifetime {
            return;
        }
        self.previous = if age >= self.lifetime.saturating_add(self.lifetime) {
            self.draw()
        } else {
            self.current
        };
        self.current = self.draw();
        self.rotated_at = now;
    }

    /// The cookie for `input` ([`cookie_input`]) under the current secret.
    pub(crate) fn cookie(&self, input: &[u8]) -> [u8; COOKIE_BYTES] {
        hmac_sha256(&self.current, input)
    }

    /// Whether `cookie` is `input`'s under either secret (constant-time comparisons).
    pub(crate) fn verify(&self, input: &[u8], cookie: &[u8]) -> bool {
        if cookie.len() != COOKIE_BYTES {
            return false;
        }
        let a = openssl::memcmp::eq(&hmac_sha256(&self.current, input), cookie);
        let b = openssl::memcmp::eq(&hmac_sha256(&self.previous, input), cookie);
        a | b
    }
}

/// HMAC-SHA256 (RFC 2104) with a 32-byte key.
fn hmac_sha256(key: &[u8; 32], message: &[u8]) -> [u8; 32] {
    let mut ipad = [0x36u8; 64];
    let mut opad = [0x5cu8; 64];
    for (i, k) in key.iter().enumerate() {
        ipad[i] ^= k;
        opad[i] ^= k;
    }
    let mut inner = openssl::sha::Sha256::new();
    inner.update(&ipad);
    inner.update(message);
    let inner = inner.finish();
    let mut outer = openssl::sha::Sha256::new();
    outer.update(&opad);
    outer.update(&inner);
    outer.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ClientHello record: message `seq`, record number `rseq`, `cookie`, a short tail.
    fn hello(seq: u16, rseq: u8, cookie: &[u8]) -> Vec<u8> {
        let mut body = vec![0xfe, 0xfd];
        body.extend_from_slice(&[7; 32]);
        body.push(0);
        body.push(cookie.len() as u8);
        body.extend_from_slice(cookie);
        body.extend_from_slice(&[0, 2, 0xc0, 0xa8, 1, 0]);
        let mut rec = vec![22, 0xfe, 0xfd, 0, 0, 0, 0, 0, 0, 0, rseq];
        rec.extend_from_slice(&((12 + body.len()) as u16).to_be_bytes());
        rec.push(1);
        let l = (body.len() as u32).to_be_bytes();
        rec.extend_from_slice(&l[1..]);
        rec.extend_from_slice(&seq.to_be_bytes());
        rec.extend_from_slice(&[0, 0, 0]);
        rec.extend_from_slice(&l[1..]);
        rec.extend_from_slice(&body);
        rec
    }

    #[test]
    fn a_client_hello_is_parsed_and_answered() {
        let d = hello(0, 3, &[]);
        let h = parse(&d).unwrap();
        assert_eq!((h.message_seq, h.record_seq, h.whole), (0, 3, true));
        assert!(h.cookie.is_empty());
        assert_eq!(h.rest, &[0, 2, 0xc0, 0xa8, 1, 0]);
        let hvr = hello_verify_request(&h, &[9; COOKIE_BYTES]);
        assert_eq!(hvr.len(), HELLO_VERIFY_BYTES);
        assert!(hvr.len() < d.len());
        assert_eq!(&hvr[5..11], &[0, 0, 0, 0, 0, 3]);
        assert_eq!(hvr[13], MSG_HELLO_VERIFY_REQUEST);
        assert_eq!(&hvr[hvr.len() - COOKIE_BYTES..], &[9; COOKIE_BYTES]);
    }

    #[test]
    fn the_first_hello_is_the_second_without_its_cookie() {
        let second = hello(1, 1, &[5; COOKIE_BYTES]);
        let h = parse(&second).unwrap();
        assert_eq!(h.cookie, &[5; COOKIE_BYTES]);
        let first = first_hello(&h).unwrap();
        assert_eq!(first, hello(0, 0, &[]));
        // Message 0, or record 0, cannot follow a HelloVerifyRequest.
        assert_eq!(first_hello(&parse(&hello(0, 1, &[1])).unwrap()), None);
        assert_eq!(first_hello(&parse(&hello(1, 0, &[1])).unwrap()), None);
    }

    #[test]
    fn other_records_are_told_apart() {
        let ok = hello(0, 0, &[]);
        let mut d = ok.clone();
        d[0] = 23;
        assert_eq!(parse(&d), Err(HelloError::NotHandshake));
        let mut d = ok.clone();
        d[4] = 1;
        assert_eq!(parse(&d), Err(HelloError::NotEpochZero));
        let mut d = ok.clone();
        d[13] = 2;
        assert_eq!(parse(&d), Err(HelloError::NotClientHello));
        let mut d = ok.clone();
        d[18] = 2;
        assert_eq!(parse(&d), Err(HelloError::BadMessageSeq));
        let mut d = ok.clone();
        d[21] = 1;
        assert_eq!(parse(&d), Err(HelloError::NotFirstFragment));
        assert_eq!(parse(&ok[..20]), Err(HelloError::BadLength));
        assert_eq!(parse(&ok[..5]), Err(HelloError::TooShort));
        // A fragment that stops inside the random.
        let mut d = ok[..13 + 12 + 10].to_vec();
        d[11..13].copy_from_slice(&22u16.to_be_bytes());
        d[22..25].copy_from_slice(&[0, 0, 10]);
        assert_eq!(parse(&d), Err(HelloError::Truncated));
        for n in 0..ok.len() {
            let _ = parse(&ok[..n]);
        }
    }

    #[test]
    fn hmac_matches_rfc_4231_and_cookies_live_one_to_two_lifetimes() {
        // RFC 4231 test case 2's message under a 32-byte key, checked against OpenSSL's HMAC.
        let key = [0x0b; 32];
        let msg = b"what do ya want for nothing?";
        let pkey = openssl::pkey::PKey::hmac(&key).unwrap();
        let mut s =
            openssl::sign::Signer::new(openssl::hash::MessageDigest::sha256(), &pkey).unwrap();
        s.update(msg).unwrap();
        assert_eq!(hmac_sha256(&key, msg).to_vec(), s.sign_to_vec().unwrap());

        let t = |ms| Instant::ZERO + Duration::from_millis(ms);
        let mut secrets = CookieSecrets::new(t(0), Duration::from_millis(1000));
        let c = secrets.cookie(b"peer");
        assert!(secrets.verify(b"peer", &c));
        assert!(!secrets.verify(b"other", &c));
        assert!(!secrets.verify(b"peer", &c[..31]));
        secrets.rotate(t(999));
        assert!(secrets.verify(b"peer", &c));
        secrets.rotate(t(1000));
        assert!(
            secrets.verify(b"peer", &c),
            "the previous secret still counts"
        );
        assert_ne!(secrets.cookie(b"peer"), c);
        secrets.rotate(t(2000));
        assert!(!secrets.verify(b"peer", &c));
        // A long silence replaces both.
        let c = secrets.cookie(b"peer");
        secrets.rotate(t(9000));
        assert!(!secrets.verify(b"peer", &c));
    }
}
