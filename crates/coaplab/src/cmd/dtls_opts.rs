//! The DTLS options (`coaps://`, RFC 7252 §9) of `coaplab server` and
//! `get|put|post|delete`, named as libcoap's `coap-client`/`coap-server` name them
//! (`-k` key, `-u` identity, `-c` certificate, `-j` private key, `-C` CA file), and the
//! client's handshake before its request.

use std::net::SocketAddr;
use std::path::PathBuf;

use coaplab_emu::dtls::{ClientState, Credentials, DtlsConfig, DtlsLayer};
use coaplab_emu::UdpDriver;

use super::net;

/// Credentials for `coaps://`: a pre-shared key (`-k`, with `-u`) or a certificate (`-c`,
/// `-j`, `-C`).
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct DtlsOpts {
    /// coaps://: the pre-shared key, as its bytes (libcoap's `-k`). A client offers
    /// TLS_PSK_WITH_AES_128_CCM_8 (RFC 7252 §9.1.3.1), PSK-AES128-GCM-SHA256 and
    /// PSK-AES128-CBC-SHA256; a server accepts OpenSSL's PSK suites, preferring CCM_8.
    #[arg(short = 'k', long = "psk", value_name = "KEY")]
    pub(crate) psk: Option<String>,
    /// coaps://: the PSK identity (libcoap's `-u`). Client: the identity sent (default:
    /// empty). Server: the only identity accepted (default: any, as `coap-server -k`).
    #[arg(short = 'u', long = "psk-identity", value_name = "ID")]
    pub(crate) psk_identity: Option<String>,
    /// coaps:// with certificates: our certificate chain, PEM (libcoap's `-c`); required
    /// for a server, optional for a client (sent when the server asks for one).
    #[arg(
        short = 'c',
        long = "cert",
        value_name = "FILE",
        conflicts_with = "psk"
    )]
    pub(crate) cert: Option<PathBuf>,
    /// The private key of --cert, PEM (libcoap's `-j`; default: in the --cert file).
    #[arg(short = 'j', long = "key", value_name = "FILE", requires = "cert")]
    pub(crate) key: Option<PathBuf>,
    /// Trusted CA certificates, PEM (libcoap's `-C`). Client: the server's certificate must
    /// chain to one (default: the system's trust store; the host name is not checked).
    /// Server: clients must present a certificate chaining to one.
    #[arg(short = 'C', long = "ca", value_name = "FILE", conflicts_with = "psk")]
    pub(crate) ca: Option<PathBuf>,
    /// Client: fail the handshake (exit 4) when the server, having answered, stays silent
    /// this long: DTLS drops a Finished it cannot decrypt without an alert, so that is how a
    /// wrong pre-shared key shows.
    #[arg(long = "dtls-stall", value_name = "D", default_value = "10s", value_parser = net::parse_duration)]
    pub(crate) stall: std::time::Duration,
    /// The largest UDP payload of a DTLS handshake datagram, bytes (OpenSSL fragments larger
    /// handshake messages, e.g. certificates); e.g. 268 for the nbiot preset's 296-B MTU.
    #[arg(long = "dtls-mtu", value_name = "B", default_value_t = coaplab_emu::dtls::DTLS_MTU_BYTES)]
    pub(crate) mtu_bytes: u32,
}

impl DtlsOpts {
    /// The DTLS configuration, or why there is none (no credentials given).
    pub(crate) fn config(&self) -> Result<DtlsConfig, String> {
        let credentials = if let Some(key) = &self.psk {
            Credentials::Psk {
                identity: self.psk_identity.as_ref().map(|i| i.as_bytes().to_vec()),
                key: key.as_bytes().to_vec(),
            }
        } else if self.cert.is_some() || self.ca.is_some() {
            Credentials::Certificate {
                cert: self.cert.clone(),
                key: self.key.clone(),
                ca: self.ca.clone(),
            }
        } else {
            return Err("coaps:// needs credentials: -k/--psk KEY [-u ID], or --cert/--ca".into());
        };
        let mut config = DtlsConfig::new(credentials);
        config.handshake_stall = self.stall;
        if !(256..=65_507).contains(&self.mtu_bytes) {
            return Err("--dtls-mtu must be 256..65507 bytes".into());
        }
        config.mtu_bytes = self.mtu_bytes;
        Ok(config)
    }

    /// Client: an identity only makes sense with a key (checked by clap elsewhere).
    pub(crate) fn given(&self) -> bool {
        self.psk.is_some() || self.cert.is_some() || self.ca.is_some()
    }
}

/// Server-side DTLS limits.
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct DtlsServerOpts {
    /// Also serve coaps:// (DTLS 1.2) on the --bind address's IP, port 5684 (port 0 when
    /// --bind has port 0); needs -k/--psk or --cert.
    #[arg(long)]
    pub(crate) dtls: bool,
    /// Serve coaps:// on this address (implies --dtls).
    #[arg(long = "dtls-bind", value_name = "ADDR")]
    pub(crate) dtls_bind: Option<SocketAddr>,
    /// At most this many DTLS sessions at once; a new peer (its ClientHello returned a valid
    /// cookie) evicts the least recently used session (an established one gets close_notify).
    #[arg(long = "dtls-max-sessions", value_name = "N", default_value_t = 256)]
    pub(crate) max_sessions: usize,
    /// At most this many DTLS sessions from one IP address; one more evicts that address's
    /// least recently used session.
    #[arg(long = "dtls-max-per-source", value_name = "N", default_value_t = coaplab_emu::dtls::DEFAULT_MAX_SESSIONS_PER_SOURCE)]
    pub(crate) dtls_max_per_source: usize,
    /// A DTLS handshake not done within this is dropped.
    #[arg(long = "dtls-handshake-timeout", value_name = "D", default_value = "60s", value_parser = net::parse_duration)]
    pub(crate) handshake_timeout: std::time::Duration,
    /// Close (close_notify) a DTLS session that received nothing this long; 0: never.
    #[arg(long = "dtls-idle-timeout", value_name = "D", default_value = "300s", value_parser = net::parse_duration)]
    pub(crate) idle_timeout: std::time::Duration,
}

impl DtlsServerOpts {
    /// Where to listen for DTLS, if at all.
    pub(crate) fn addr(&self, udp_bind: SocketAddr) -> Option<SocketAddr> {
        match (self.dtls_bind, self.dtls) {
            (Some(a), _) => Some(a),
            (None, true) => {
                let port = if udp_bind.port() == 0 { 0 } else { 5684 };
                Some(SocketAddr::new(udp_bind.ip(), port))
            }
            (None, false) => None,
        }
    }

    /// The server's DTLS layer.
    pub(crate) fn layer(&self, creds: &DtlsOpts) -> Result<DtlsLayer, String> {
        let mut config = creds.config()?;
        if self.max_sessions == 0 {
            return Err("--dtls-max-sessions must be at least 1".into());
        }
        config.max_sessions = self.max_sessions;
        if self.dtls_max_per_source == 0 {
            return Err("--dtls-max-per-source must be at least 1".into());
        }
        config.max_sessions_per_source = self.dtls_max_per_source;
        config.handshake_timeout = self.handshake_timeout;
        config.idle_timeout = self.idle_timeout;
        DtlsLayer::server(config).map_err(|e| e.to_string())
    }
}

/// The server's `dtls …` exit line.
pub(crate) fn server_line(driver: &UdpDriver) -> String {
    let Some(layer) = driver.dtls() else {
        return String::new();
    };
    let s = layer.stats();
    let d = driver.stats();
    format!(
        "dtls handshakes={} handshake_failures={} handshake_timeouts={} hello_verifies={} \
cookies_invalid={} hellos_malformed={} handshakes_evicted={} sessions_evicted={} \
sessions_replaced={} idle_closed={} peer_closed={} without_session={} datagrams_in={} \
datagrams_out={}",
        s.handshakes_completed,
        s.handshakes_failed,
        s.handshakes_timed_out,
        s.hello_verifies_sent,
        s.cookies_invalid,
        s.hellos_malformed,
        s.handshakes_evicted,
        s.sessions_evicted,
        s.sessions_replaced,
        s.sessions_idle_closed,
        s.sessions_closed_by_peer,
        s.datagrams_without_session,
        d.datagrams_in,
        d.datagrams_out
    )
}

/// Client: puts a DTLS layer on `driver` (connected to `addr`) and runs the handshake.
/// Err: the exit code, its message printed (4: failed or refused; 3: no answer within the
/// handshake timeout; 2: bad credentials).
pub(crate) async fn client_handshake(
    driver: &mut UdpDriver,
    addr: SocketAddr,
    opts: &DtlsOpts,
    verbose: bool,
) -> Result<(), u8> {
    let config = opts.config().map_err(|e| fail(net::EXIT_BAD_ARGS, e))?;
    let limit = config.handshake_timeout;
    let layer =
        DtlsLayer::client(config, addr, driver.now()).map_err(|e| fail(net::EXIT_BAD_ARGS, e))?;
    driver.set_dtls(layer);
    match driver.dtls_handshake().await {
        ClientState::Established { cipher, took } => {
            if verbose {
                let s = driver.dtls().map(DtlsLayer::stats).unwrap_or_default();
                eprintln!(
                    "{} dtls handshake done cipher={cipher} took={took} out={} datagrams/{} B \
in={} datagrams/{} B",
                    driver.now(),
                    s.handshake_datagrams_out,
                    s.handshake_bytes_out,
                    s.handshake_datagrams_in,
                    s.handshake_bytes_in
                );
            }
            Ok(())
        }
        ClientState::TimedOut => Err(fail(
            net::EXIT_TIMEOUT,
            format!("DTLS handshake timeout: no answer from {addr} within {limit:?}"),
        )),
        ClientState::Failed(why) => Err(fail(
            net::EXIT_PROTOCOL,
            format!("DTLS handshake with {addr} failed: {why}"),
        )),
        ClientState::Handshaking => Err(fail(net::EXIT_PROTOCOL, "DTLS handshake unfinished")),
    }
}

fn fail(code: u8, msg: impl std::fmt::Display) -> u8 {
    eprintln!("coaplab: {msg}");
    code
}
