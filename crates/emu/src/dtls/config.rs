//! [`DtlsConfig`]: the credentials (pre-shared key or certificate) and the session limits of
//! a DTLS layer, and the OpenSSL context built from them.

use std::path::PathBuf;
use std::time::Duration;

use openssl::error::ErrorStack;
use openssl::ssl::{
    Ssl, SslContext, SslContextBuilder, SslFiletype, SslMethod, SslOptions, SslVerifyMode,
    SslVersion,
};

// `@SECLEVEL=0` in each list: since OpenSSL 3.2 (the `openssl` crate builds 3.6 from source,
// `vendored`) the CCM_8 suites count 64 bits of strength for their 8-byte tag, below security
// level 1, the default, so OpenSSL would never negotiate the suites that RFC 7252 mandates
// (3.0, Debian 12's, still counted 128). Level 0 lets the lists below decide; they name no
// NULL, anonymous or export suite.

/// Cipher suites a server accepts with a pre-shared key, best first:
/// TLS_PSK_WITH_AES_128_CCM_8, mandatory for CoAP (RFC 7252 §9.1.3.1), then OpenSSL's other
/// PSK suites (libcoap 4.3 asks OpenSSL for `PSK:!NULL`).
pub const PSK_CIPHERS: &str = "PSK-AES128-CCM8:PSK:!NULL:@SECLEVEL=0";

/// Cipher suites a client offers with a pre-shared key: CCM_8 first, then two common ones.
/// Few, because every suite offered is 2 B in each of the two ClientHellos (the second one
/// carries the cookie), which on a constrained link cost airtime.
pub const PSK_CLIENT_CIPHERS: &str =
    "PSK-AES128-CCM8:PSK-AES128-GCM-SHA256:PSK-AES128-CBC-SHA256:@SECLEVEL=0";

/// Cipher suites with certificates, best first: TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8, mandatory
/// for CoAP (RFC 7252 §9.1.3.3), then OpenSSL's other forward-secret suites.
pub const CERT_CIPHERS: &str =
    "ECDHE-ECDSA-AES128-CCM8:ECDHE+AESGCM:ECDHE+CHACHA20:ECDHE+AES:!aNULL:@SECLEVEL=0";

/// The largest UDP payload the DTLS handshake writes (OpenSSL fragments handshake messages to
/// fit): the IPv6 minimum MTU, 1,280 B, less 40 B of IPv6 and 8 B of UDP header.
pub const DTLS_MTU_BYTES: u32 = 1232;

/// The default [`DtlsConfig::max_sessions_per_source`].
pub const DEFAULT_MAX_SESSIONS_PER_SOURCE: usize = 32;

/// How a DTLS layer authenticates.
#[derive(Debug, Clone)]
pub enum Credentials {
    /// A pre-shared key (RFC 4279; RFC 7252 §9.1.3.1 PreSharedKey mode).
    Psk {
        /// Client: the identity sent. Server: the only identity accepted (`None`: any
        /// identity, as libcoap's `coap-server -k` accepts).
        identity: Option<Vec<u8>>,
        /// The key's bytes.
        key: Vec<u8>,
    },
    /// An X.509 certificate (RFC 7252 §9.1.3.3 Certificate mode), PEM files.
    Certificate {
        /// Our certificate (chain), PEM. Required for a server, optional for a client.
        cert: Option<PathBuf>,
        /// Our private key, PEM (the certificate file when `None`).
        key: Option<PathBuf>,
        /// Trusted CA certificates, PEM. Client: the server's certificate must chain to one
        /// (without it, to the system's trust store). Server: when given, a client
        /// certificate chaining to one is required.
        ca: Option<PathBuf>,
    },
}

/// A DTLS layer's credentials and limits. The defaults are documented in
/// docs/real-sockets.md ("DTLS").
#[derive(Debug, Clone)]
pub struct DtlsConfig {
    /// How we authenticate.
    pub credentials: Credentials,
    /// Server: at most this many sessions (handshaking or established) at once. A new peer
    /// whose ClientHello returns a valid cookie when the table is full evicts the least
    /// recently used session (the one that received nothing for the longest); an established
    /// one is sent close_notify.
    pub max_sessions: usize,
    /// Server: at most this many sessions from one IP address (all its ports); one more from
    /// it evicts that address's least recently used session, so one host cannot take the
    /// table from everyone else.
    pub max_sessions_per_source: usize,
    /// Server: how long a cookie secret is current (RFC 6347 §4.2.1: a rotating secret). A
    /// HelloVerifyRequest's cookie is accepted for between one and two of these.
    pub cookie_lifetime: Duration,
    /// A handshake not finished in this long fails (server: the half-open session is freed;
    /// client: exit 3).
    pub handshake_timeout: Duration,
    /// Server: an established session that received nothing for this long is closed
    /// (close_notify sent). `Duration::ZERO`: never.
    pub idle_timeout: Duration,
    /// Client: a handshake the server answered and then left silent this long fails (not a
    /// timeout): DTLS drops a record it cannot decrypt without an alert (RFC 6347 §4.1.2.7), so
    /// a wrong pre-shared key shows only as a server that stops answering after our Finished.
    pub handshake_stall: Duration,
    /// The largest UDP payload of a handshake datagram (OpenSSL fragments handshake messages
    /// to fit); default [`DTLS_MTU_BYTES`]. Application records are never fragmented.
    pub mtu_bytes: u32,
    /// Client: plaintext datagrams the endpoint sends before the handshake completes are
    /// held, at most this many (later ones are dropped and counted, as a loss).
    pub max_queued_datagrams: usize,
}

impl DtlsConfig {
    /// `credentials` with the default limits: 256 sessions, 32 per source address, cookie
    /// secrets rotated every 60 s, a 60-s handshake (RFC 6347
    /// §4.2.4.1's largest retransmission timer), a 10-s stall (OpenSSL's flight retransmitted
    /// after 1, 3 and 7 s, unanswered), a 300-s idle timeout (libcoap's
    /// COAP_DEFAULT_SESSION_TIMEOUT) and 16 queued datagrams.
    pub fn new(credentials: Credentials) -> DtlsConfig {
        DtlsConfig {
            credentials,
            max_sessions: 256,
            max_sessions_per_source: DEFAULT_MAX_SESSIONS_PER_SOURCE,
            cookie_lifetime: Duration::from_secs(60),
            handshake_timeout: Duration::from_secs(60),
            handshake_stall: Duration::from_secs(10),
            mtu_bytes: DTLS_MTU_BYTES,
            idle_timeout: Duration::from_secs(300),
            max_queued_datagrams: 16,
        }
    }
}

/// The OpenSSL context of one side, and the per-session data index the cookie callbacks use
/// (the cookie the layer verified).
pub(crate) struct Context {
    pub(crate) ctx: SslContext,
    pub(crate) mtu_bytes: u32,
    pub(crate) cookie_index: openssl::ex_data::Index<Ssl, Vec<u8>>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Context")
    }
}

/// Why a DTLS layer could not be set up (nothing was sent).
#[derive(Debug, thiserror::Error)]
pub enum DtlsSetupError {
    /// `--psk` was given an empty key.
    #[error("DTLS setup: the pre-shared key is empty")]
    EmptyPsk,
    /// A server with certificate credentials but no certificate file.
    #[error("DTLS setup: a server needs a certificate (--cert)")]
    NoCertificate,
    /// OpenSSL refused the context or the session (a bad file, key or cipher list).
    #[error("DTLS setup: {0}")]
    OpenSsl(#[from] ErrorStack),
    /// The first handshake step failed.
    #[error("DTLS setup: {0}")]
    Handshake(String),
}

/// Builds the OpenSSL context for `config`, as a server or a client.
pub(crate) fn context(config: &DtlsConfig, server: bool) -> Result<Context, DtlsSetupError> {
    let mut b = SslContextBuilder::new(SslMethod::dtls())?;
    // DTLS 1.2 only (RFC 7252 §9 names DTLS 1.2 via RFC 6347).
    b.set_min_proto_version(Some(SslVersion::DTLS1_2))?;
    b.set_max_proto_version(Some(SslVersion::DTLS1_2))?;
    // No session tickets: nothing resumes a session here, and a ticket costs ~200 B a handshake.
    b.set_options(SslOptions::NO_RENEGOTIATION | SslOptions::NO_QUERY_MTU | SslOptions::NO_TICKET);
    let cookie_index = Ssl::new_ex_index::<Vec<u8>>()?;
    match &config.credentials {
        Credentials::Psk { identity, key } => {
            if key.is_empty() {
                return Err(DtlsSetupError::EmptyPsk);
            }
            b.set_cipher_list(if server {
                PSK_CIPHERS
            } else {
                PSK_CLIENT_CIPHERS
            })?;
            let key = key.clone();
            if server {
                let wanted = identity.clone();
                b.set_psk_server_callback(move |_ssl, id, out| {
                    if wanted.as_deref().is_some_and(|w| id != Some(w)) {
                        return Ok(0); // an unknown identity: the handshake fails
                    }
                    copy_key(&key, out)
                });
            } else {
                let id = identity.clone().unwrap_or_default();
                b.set_psk_client_callback(move |_ssl, _hint, id_out, key_out| {
                    // The identity is written as a C string.
                    if id.len() + 1 > id_out.len() || id.contains(&0) {
                        return Err(ErrorStack::get());
                    }
                    id_out[..id.len()].copy_from_slice(&id);
                    id_out[id.len()] = 0;
                    copy_key(&key, key_out)
                });
            }
        }
        Credentials::Certificate { cert, key, ca } => {
            b.set_cipher_list(CERT_CIPHERS)?;
            if let Some(cert) = cert {
                b.set_certificate_chain_file(cert)?;
                b.set_private_key_file(key.as_ref().unwrap_or(cert), SslFiletype::PEM)?;
                b.check_private_key()?;
            } else if server {
                return Err(DtlsSetupError::NoCertificate);
            }
            match ca {
                Some(ca) => b.set_ca_file(ca)?,
                None if !server => b.set_default_verify_paths()?,
                None => {}
            }
            let mode = match (server, ca.is_some()) {
                (false, _) => SslVerifyMode::PEER,
                (true, true) => SslVerifyMode::PEER | SslVerifyMode::FAIL_IF_NO_PEER_CERT,
                (true, false) => SslVerifyMode::NONE,
            };
            b.set_verify(mode);
        }
    }
    if server {
        // Our order, not the client's: CCM_8 (RFC 7252's mandatory suite, the smallest
        // records) even when a client such as libcoap lists ECDHE-PSK suites first.
        b.set_options(SslOptions::CIPHER_SERVER_PREFERENCE);
        cookies(&mut b, cookie_index);
    }
    Ok(Context {
        ctx: b.build(),
        mtu_bytes: config.mtu_bytes,
        cookie_index,
    })
}

fn copy_key(key: &[u8], out: &mut [u8]) -> Result<usize, ErrorStack> {
    if key.len() > out.len() {
        return Err(ErrorStack::get());
    }
    out[..key.len()].copy_from_slice(key);
    Ok(key.len())
}

/// RFC 6347 §4.2.1 cookie exchange (HelloVerifyRequest). The layer checks cookies itself,
/// statelessly, before any session exists (`hello.rs`); a session is created only for a
/// ClientHello with a valid cookie, which is stored in the session's ex data. OpenSSL's own
/// exchange then replays that cookie: its HelloVerifyRequest (answering the synthesised first
/// ClientHello, never sent) carries it, and its check of the real ClientHello compares with it.
fn cookies(b: &mut SslContextBuilder, cookie_index: openssl::ex_data::Index<Ssl, Vec<u8>>) {
    b.set_cookie_generate_cb(move |ssl, out| {
        let Some(c) = ssl.ex_data(cookie_index) else {
            return Err(ErrorStack::get());
        };
        if c.len() > out.len() {
            return Err(ErrorStack::get());
        }
        out[..c.len()].copy_from_slice(c);
        Ok(c.len())
    });
    b.set_cookie_verify_cb(move |ssl, cookie| {
        ssl.ex_data(cookie_index).is_some_and(|c| {
            !c.is_empty() && c.len() == cookie.len() && openssl::memcmp::eq(c, cookie)
        })
    });
    b.set_options(SslOptions::COOKIE_EXCHANGE);
}
