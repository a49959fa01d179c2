//! What the real-socket subcommands (`server`, `get`/`put`/`post`/`delete`, `bench`) share:
//! the algorithm and endpoint options, URI resolution, exit codes and the tokio runtime.

use std::net::{IpAddr, SocketAddr};
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use coaplab_cc::Settings;
use coaplab_endpoint::{registry_factory, Config, Endpoint, Router};
use coaplab_wire::uri::{Host, Scheme, Uri};

/// Exit code: the request succeeded (2.xx).
pub(crate) const EXIT_OK: u8 = 0;
/// Exit code: the server answered 4.xx or 5.xx.
pub(crate) const EXIT_ERROR_RESPONSE: u8 = 1;
/// Exit code: bad arguments (also clap's own usage errors).
pub(crate) const EXIT_BAD_ARGS: u8 = 2;
/// Exit code: no answer after MAX_RETRANSMIT retransmissions (or a NON's response timeout).
pub(crate) const EXIT_TIMEOUT: u8 = 3;
/// Exit code: a protocol or parse error (RST, broken block-wise transfer, local socket error,
/// an ICMP port unreachable, a body past `--max-body-bytes`; over TCP: an Abort, a bad CSM, a
/// refused or lost connection).
pub(crate) const EXIT_PROTOCOL: u8 = 4;

/// How long a coap:// request waits for the response to a NON request or for a separate
/// response after an empty ACK, unless `--timeout` says otherwise: RFC 7252 §4.8.2
/// MAX_TRANSMIT_WAIT (93 s), the longest a CON would be tried (the endpoint's own default,
/// EXCHANGE_LIFETIME, is 247 s).
pub(crate) const RESPONSE_WAIT: coaplab_cc::time::Duration =
    coaplab_cc::time::Duration::from_secs(93);

/// The exit codes, for `--help`.
pub(crate) const EXIT_CODES_HELP: &str = "\
EXIT CODES:
  0  success (2.xx response)
  1  error response (4.xx or 5.xx); the diagnostic payload is still printed
  2  bad arguments (also: a multicast or broadcast destination, a GET or DELETE payload)
  3  timeout: no answer after MAX_RETRANSMIT retransmissions, no response to a NON or no
     separate response within 93 s, or the whole request not done within --timeout
  4  protocol or parse error (RST, a broken block-wise transfer, a socket error; coap://:
     connection refused, i.e. an ICMP port unreachable; coap+tcp://: an Abort either way,
     e.g. a bad CSM, or a refused or closed connection); a response body or a payload larger
     than --max-body-bytes; coaps://: the DTLS handshake failed (an alert, e.g. an unknown
     identity or a rejected certificate; or the server answered, then fell silent for 10 s
     after our Finished, as it does on a wrong pre-shared key) or the server closed the
     session. A coaps:// handshake with no answer at all for 60 s is 3 (timeout); --observe:
     the server answered without Observe, so we are not registered (RFC 7641 §4.1: the
     resource is not observable or its observer table is full), unless --count 1

COAP OVER TCP (RFC 8323):
  coap+tcp://HOST[:PORT]/path (default port 5683): one connection with TCP_NODELAY, our CSM
  (Max-Message-Size 8 MiB, or --max-body-bytes + 1 KiB when smaller; Block-Wise-Transfer),
  the request as one message however large (sent after the peer's CSM when larger than
  1,152 B), then a FIN. --cc, --set, --nstart and --block-size have no effect over TCP: the
  kernel's TCP retransmits. -v prints every message written and received.";

/// Options of the endpoint and its algorithm, shared by the real-socket subcommands.
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct EndpointOpts {
    /// RTO algorithm (see `coaplab algorithms`).
    #[arg(long = "cc", value_name = "NAME", default_value = "default")]
    pub(crate) cc: String,
    /// Set an algorithm parameter, e.g. `--set max_retransmit=2`; repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(crate) set: Vec<String>,
    /// NSTART: outstanding interactions per destination (RFC 7252 §4.7).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub(crate) nstart: u32,
    /// Block size in bytes for Block1 uploads and requested Block2 downloads (16..1024).
    #[arg(long = "block-size", value_name = "B", default_value_t = 1024)]
    pub(crate) block_size: usize,
    /// Seed of the algorithm's random stream, Message IDs and tokens (default: from the clock).
    #[arg(long, value_name = "S")]
    pub(crate) seed: Option<u64>,
}

impl EndpointOpts {
    /// The seed given, or one from the clock (the only place that reads it).
    pub(crate) fn seed(&self) -> u64 {
        self.seed.unwrap_or_else(|| {
            let t = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default();
            t.as_nanos() as u64 ^ u64::from(std::process::id()) << 32
        })
    }

    /// An endpoint with these options, serving `router`, with `config` adjusted by `tune`;
    /// `salt` varies the seed (per client).
    pub(crate) fn build(
        &self,
        router: Router,
        salt: u64,
        tune: impl FnOnce(&mut Config),
    ) -> Result<Endpoint, String> {
        let settings =
            Settings::parse(self.set.iter().map(String::as_str)).map_err(|e| e.to_string())?;
        let seed = self
            .seed()
            .wrapping_add(salt.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let factory = registry_factory(&self.cc, &settings, seed).map_err(|e| e.to_string())?;
        let config = Config {
            nstart: self.nstart,
            block_size_bytes: self.block_size,
            request_block2_size_bytes: Some(self.block_size),
            initial_message_id: (seed >> 16) as u16,
            initial_token: seed >> 8,
            keep_bodies: true,
            ..Config::default()
        };
        let mut config = config;
        tune(&mut config);
        Endpoint::new(config, factory, router).map_err(|e| e.to_string())
    }
}

/// A parsed `coap://` or `coap+tcp://` URI and its resolved address.
pub(crate) struct Target {
    /// `coap+tcp://`: CoAP over TCP (RFC 8323).
    pub(crate) tcp: bool,
    /// `coaps://`: CoAP over DTLS (RFC 7252 §9).
    pub(crate) dtls: bool,
    /// The address to send to.
    pub(crate) addr: SocketAddr,
    /// Uri-Path segments joined by `/`.
    pub(crate) path: String,
    /// Uri-Query arguments.
    pub(crate) query: Vec<String>,
}

/// Parses and resolves `uri`: `coap://` (UDP), `coaps://` (DTLS, default port 5684) or
/// `coap+tcp://` (TCP); default port 5683.
pub(crate) async fn resolve(uri: &str) -> Result<Target, String> {
    let u = Uri::parse(uri).map_err(|e| format!("{uri}: {e}"))?;
    if !matches!(u.scheme, Scheme::Coap | Scheme::Coaps | Scheme::CoapTcp) {
        return Err(format!(
            "{uri}: only coap://, coaps:// and coap+tcp:// (no TLS) are supported"
        ));
    }
    if u.path.iter().any(|s| s.contains('/') || s.is_empty()) {
        return Err(format!(
            "{uri}: empty path segments or '/' inside a segment are not supported"
        ));
    }
    let addr = match &u.host {
        Host::Ip(ip) => SocketAddr::new(*ip, u.port),
        Host::Name(name) => tokio::net::lookup_host((name.as_str(), u.port))
            .await
            .map_err(|e| format!("{uri}: {e}"))?
            .next()
            .ok_or_else(|| format!("{uri}: {name} has no address"))?,
    };
    if let Some(why) = group_address(addr.ip()) {
        return Err(format!(
            "{uri}: {} is {why}: group requests (RFC 7252 §8: NON only, answers from many \
servers) are not supported; ask one server at its unicast address",
            addr.ip()
        ));
    }
    Ok(Target {
        tcp: u.scheme == Scheme::CoapTcp,
        dtls: u.scheme == Scheme::Coaps,
        addr,
        path: u.path.join("/"),
        query: u.query,
    })
}

/// Why `ip` names a group rather than one host: multicast (224.0.0.0/4, ff00::/8) or the
/// IPv4 limited broadcast; `None` for a unicast address.
pub(crate) fn group_address(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) if v4.is_broadcast() => Some("the broadcast address"),
        ip if ip.is_multicast() => Some("a multicast address"),
        _ => None,
    }
}

/// The unspecified address of `dest`'s family, port 0 (a client's local socket).
pub(crate) fn any_for(dest: SocketAddr) -> SocketAddr {
    match dest {
        SocketAddr::V4(_) => "0.0.0.0:0".parse().expect("literal"),
        SocketAddr::V6(_) => "[::]:0".parse().expect("literal"),
    }
}

/// Parses a duration: `10s`, `500ms`, `2m` or plain seconds (`1.5`).
pub(crate) fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let (num, scale) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60.0)
    } else {
        (s, 1.0)
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a duration (e.g. 10s, 500ms, 2m)"))?;
    if !(v * scale).is_finite() || v < 0.0 {
        return Err(format!("'{s}' is not a duration (e.g. 10s, 500ms, 2m)"));
    }
    Ok(std::time::Duration::from_secs_f64(v * scale))
}

/// A tokio runtime for one subcommand (`threads` = 1: current-thread).
pub(crate) fn runtime(threads: usize) -> Result<tokio::runtime::Runtime, ExitCode> {
    let built = if threads <= 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .enable_all()
            .build()
    };
    built.map_err(|e| {
        eprintln!("coaplab: cannot start the runtime: {e}");
        ExitCode::from(EXIT_PROTOCOL)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multicast_and_broadcast_are_groups() {
        let group = |s: &str| group_address(s.parse().unwrap());
        assert_eq!(group("224.0.1.187"), Some("a multicast address"));
        assert_eq!(group("239.255.255.255"), Some("a multicast address"));
        assert_eq!(group("ff02::fd"), Some("a multicast address"));
        assert_eq!(group("255.255.255.255"), Some("the broadcast address"));
        assert_eq!(group("223.255.255.255"), None);
        assert_eq!(group("127.0.0.1"), None);
        assert_eq!(group("::1"), None);
    }

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(
            parse_duration("10s"),
            Ok(std::time::Duration::from_secs(10))
        );
        assert_eq!(
            parse_duration("250ms"),
            Ok(std::time::Duration::from_millis(250))
        );
        assert_eq!(
            parse_duration("2m"),
            Ok(std::time::Duration::from_secs(120))
        );
        assert_eq!(
            parse_duration("1.5"),
            Ok(std::time::Duration::from_millis(1500))
        );
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("x").is_err());
    }
}
