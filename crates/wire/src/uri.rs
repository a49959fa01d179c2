//! `coap://` and `coap+tcp://` URIs to and from request options (RFC 7252 §6.4–6.5,
//! RFC 8323 §8.1).
//!
//! ```
//! use coaplab_wire::uri::{Uri, Scheme};
//! use coaplab_wire::option::ReadOptions;
//! let uri = Uri::parse("coap://Sensor.example:61616/a%20b/c?x=1&y").unwrap();
//! assert_eq!((uri.scheme, uri.port), (Scheme::Coap, 61616));
//! let opts = uri.request_options();
//! assert_eq!(opts.uri_host().unwrap(), Some("sensor.example"));
//! assert_eq!(opts.uri_path().unwrap(), ["a b", "c"]);
//! assert_eq!(uri.to_string(), "coap://sensor.example:61616/a%20b/c?x=1&y");
//! ```

use core::fmt;
use std::net::{IpAddr, Ipv6Addr};

use crate::option::{number, OptionList, OptionValueError, ReadOptions};

/// A URI scheme for CoAP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// `coap`: UDP, default port 5683 (RFC 7252 §6.1).
    Coap,
    /// `coaps`: DTLS, default port 5684 (RFC 7252 §6.2).
    Coaps,
    /// `coap+tcp`: TCP, default port 5683 (RFC 8323 §8.1).
    CoapTcp,
    /// `coaps+tcp`: TLS, default port 5684 (RFC 8323 §8.2).
    CoapsTcp,
}

impl Scheme {
    /// The scheme name as written in URIs.
    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::Coap => "coap",
            Scheme::Coaps => "coaps",
            Scheme::CoapTcp => "coap+tcp",
            Scheme::CoapsTcp => "coaps+tcp",
        }
    }

    /// The scheme's default port.
    pub fn default_port(self) -> u16 {
        match self {
            Scheme::Coap | Scheme::CoapTcp => 5683,
            Scheme::Coaps | Scheme::CoapsTcp => 5684,
        }
    }

    /// True for the reliable transports of RFC 8323.
    pub fn is_tcp(self) -> bool {
        matches!(self, Scheme::CoapTcp | Scheme::CoapsTcp)
    }
}

/// The host part.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Host {
    /// An IPv4 address or an IPv6 literal: no Uri-Host option is sent (RFC 7252 §6.4 step 5).
    Ip(IpAddr),
    /// A registered name, lowercased and percent-decoded: sent as Uri-Host.
    Name(String),
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Ip(IpAddr::V6(a)) => write!(f, "[{a}]"),
            Host::Ip(IpAddr::V4(a)) => write!(f, "{a}"),
            Host::Name(n) => f.write_str(&percent_encode(n.as_bytes(), is_reg_name_char)),
        }
    }
}

/// A parsed CoAP URI with its path and query already split and percent-decoded.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Uri {
    /// The scheme.
    pub scheme: Scheme,
    /// The host.
    pub host: Host,
    /// The port (the scheme's default when the URI has none).
    pub port: u16,
    /// Path segments (Uri-Path values); empty for `/` or no path.
    pub path: Vec<String>,
    /// Query arguments (Uri-Query values).
    pub query: Vec<String>,
}

/// Why a string is not a usable CoAP URI (RFC 7252 §6.4 "fail this algorithm").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UriError {
    /// Not an absolute URI with `scheme://` (step 1).
    NotAbsolute,
    /// A scheme other than coap, coaps, coap+tcp, coaps+tcp (step 3).
    UnsupportedScheme(String),
    /// A `#fragment` (step 4).
    Fragment,
    /// `user@host` is not part of the CoAP URI syntax (RFC 7252 §6.1).
    Userinfo,
    /// No host.
    EmptyHost,
    /// A bracketed literal that is not an IPv6 address.
    BadIpLiteral(String),
    /// A port that is not a number in 0–65535.
    BadPort(String),
    /// `%` not followed by two hex digits.
    BadPercentEncoding,
    /// A decoded host, segment or argument that is not UTF-8.
    NotUtf8,
    /// A path segment or query argument longer than 255 bytes (RFC 7252 §5.10.1).
    ComponentTooLong(usize),
}

impl fmt::Display for UriError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UriError::NotAbsolute => {
                f.write_str("not an absolute URI (expected coap://host[:port]/path)")
            }
            UriError::UnsupportedScheme(s) => write!(
                f,
                "unsupported scheme '{s}' (expected coap, coaps, coap+tcp or coaps+tcp)"
            ),
            UriError::Fragment => f.write_str("CoAP URIs have no #fragment (RFC 7252 §6.4 step 4)"),
            UriError::Userinfo => f.write_str("CoAP URIs have no user@ part (RFC 7252 §6.1)"),
            UriError::EmptyHost => f.write_str("the URI has no host"),
            UriError::BadIpLiteral(s) => write!(f, "'[{s}]' is not an IPv6 address"),
            UriError::BadPort(s) => write!(f, "'{s}' is not a port number"),
            UriError::BadPercentEncoding => f.write_str("'%' must be followed by two hex digits"),
            UriError::NotUtf8 => f.write_str("a percent-decoded component is not UTF-8"),
            UriError::ComponentTooLong(n) => write!(
                f,
                "a path segment or query argument of {n} bytes exceeds 255 (RFC 7252 §5.10.1)"
            ),
        }
    }
}

impl std::error::Error for UriError {}

impl Uri {
    /// Parses and decomposes a URI (RFC 7252 §6.4 steps 1–9; RFC 8323 §8.1 for `+tcp`).
    pub fn parse(s: &str) -> Result<Uri, UriError> {
        let (scheme_str, rest) = s.split_once("://").ok_or(UriError::NotAbsolute)?;
        let scheme = match scheme_str.to_ascii_lowercase().as_str() {
            "coap" => Scheme::Coap,
            "coaps" => Scheme::Coaps,
            "coap+tcp" => Scheme::CoapTcp,
            "coaps+tcp" => Scheme::CoapsTcp,
            "" => return Err(UriError::NotAbsolute),
            _ => return Err(UriError::UnsupportedScheme(scheme_str.to_string())),
        };
        if rest.contains('#') {
            return Err(UriError::Fragment);
        }
        let auth_end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, path_query) = rest.split_at(auth_end);
        if authority.contains('@') {
            return Err(UriError::Userinfo);
        }
        let (host, port) = parse_authority(authority, scheme)?;
        let (path, query) = match path_query.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (path_query, None),
        };
        let path = remove_dot_segments(path);
        let segments = if path.is_empty() || path == "/" {
            Vec::new()
        } else {
            path[1..]
                .split('/')
                .map(decode_component)
                .collect::<Result<_, _>>()?
        };
        let query = match query {
            Some(q) if !q.is_empty() => q
                .split('&')
                .map(decode_component)
                .collect::<Result<_, _>>()?,
            _ => Vec::new(),
        };
        Ok(Uri {
            scheme,
            host,
            port,
            path: segments,
            query,
        })
    }

    /// The options of a request sent to this URI's host and port: Uri-Host for a registered
    /// name, Uri-Path and Uri-Query (RFC 7252 §6.4). No Uri-Port, since the destination port is
    /// the URI's port.
    pub fn request_options(&self) -> OptionList {
        let mut o = OptionList::new();
        self.add_request_options(&mut o, None);
        o
    }

    /// Adds this URI's options to `o`; with `destination_port` different from the URI's port,
    /// also Uri-Port (RFC 7252 §6.4 step 7).
    pub fn add_request_options(&self, o: &mut OptionList, destination_port: Option<u16>) {
        if let Host::Name(n) = &self.host {
            o.push(number::URI_HOST, n.as_bytes());
        }
        if destination_port.is_some_and(|p| p != self.port) {
            o.push_uint(number::URI_PORT, self.port as u32);
        }
        for s in &self.path {
            o.push(number::URI_PATH, s.as_bytes());
        }
        for q in &self.query {
            o.push(number::URI_QUERY, q.as_bytes());
        }
    }

    /// The URI a request denotes (RFC 7252 §6.5), given the address it was sent to.
    pub fn from_options(
        scheme: Scheme,
        destination: IpAddr,
        destination_port: u16,
        options: &impl ReadOptions,
    ) -> Result<Uri, OptionValueError> {
        let host = match options.uri_host()? {
            Some(h) => match h.parse::<IpAddr>() {
                Ok(ip) => Host::Ip(ip),
                Err(_) => Host::Name(h.to_string()),
            },
            None => Host::Ip(destination),
        };
        Ok(Uri {
            scheme,
            host,
            port: options.uri_port()?.unwrap_or(destination_port),
            path: options.uri_path()?.into_iter().map(String::from).collect(),
            query: options.uri_query()?.into_iter().map(String::from).collect(),
        })
    }

    /// The path as `/a/b`, percent-encoded (`/` when empty).
    pub fn path_string(&self) -> String {
        if self.path.is_empty() {
            return "/".to_string();
        }
        self.path
            .iter()
            .map(|s| format!("/{}", percent_encode(s.as_bytes(), is_segment_char)))
            .collect()
    }
}

/// RFC 7252 §6.5: the default port is omitted; segments and arguments are percent-encoded.
impl fmt::Display for Uri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}", self.scheme.as_str(), self.host)?;
        if self.port != self.scheme.default_port() {
            write!(f, ":{}", self.port)?;
        }
        f.write_str(&self.path_string())?;
        for (i, q) in self.query.iter().enumerate() {
            let sep = if i == 0 { '?' } else { '&' };
            write!(f, "{sep}{}", percent_encode(q.as_bytes(), is_query_char))?;
        }
        Ok(())
    }
}

fn parse_authority(authority: &str, scheme: Scheme) -> Result<(Host, u16), UriError> {
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (lit, after) = rest
            .split_once(']')
            .ok_or_else(|| UriError::BadIpLiteral(rest.to_string()))?;
        let ip: Ipv6Addr = lit
            .parse()
            .map_err(|_| UriError::BadIpLiteral(lit.to_string()))?;
        let port = match after {
            "" => None,
            p => Some(
                p.strip_prefix(':')
                    .ok_or_else(|| UriError::BadPort(p.to_string()))?,
            ),
        };
        (Host::Ip(IpAddr::V6(ip)), port)
    } else {
        let (h, p) = match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        };
        if h.is_empty() {
            return Err(UriError::EmptyHost);
        }
        let host = match h.parse::<std::net::Ipv4Addr>() {
            Ok(ip) => Host::Ip(IpAddr::V4(ip)),
            // Step 5: lowercase, then decode percent-encodings.
            Err(_) => Host::Name(decode_component(&h.to_ascii_lowercase())?),
        };
        (host, p)
    };
    let port = match port {
        None | Some("") => scheme.default_port(),
        Some(p) => p.parse().map_err(|_| UriError::BadPort(p.to_string()))?,
    };
    Ok((host, port))
}

fn decode_component(s: &str) -> Result<String, UriError> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b.get(i + 1..i + 3).ok_or(UriError::BadPercentEncoding)?;
            let hi = (hex[0] as char)
                .to_digit(16)
                .ok_or(UriError::BadPercentEncoding)?;
            let lo = (hex[1] as char)
                .to_digit(16)
                .ok_or(UriError::BadPercentEncoding)?;
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    if out.len() > 255 {
        return Err(UriError::ComponentTooLong(out.len()));
    }
    String::from_utf8(out).map_err(|_| UriError::NotUtf8)
}

/// RFC 3986 §5.2.4, applied by step 2's reference resolution.
fn remove_dot_segments(path: &str) -> String {
    let mut input = path;
    let mut out: Vec<&str> = Vec::new();
    while !input.is_empty() {
        if let Some(r) = input
            .strip_prefix("../")
            .or_else(|| input.strip_prefix("./"))
        {
            input = r;
        } else if input.starts_with("/./") {
            input = &input[2..];
        } else if input == "/." {
            input = "/";
        } else if input.starts_with("/../") || input == "/.." {
            input = if input == "/.." { "/" } else { &input[3..] };
            out.pop();
        } else if input == "." || input == ".." {
            input = "";
        } else {
            let start = usize::from(input.starts_with('/'));
            let end = input[start..].find('/').map_or(input.len(), |i| i + start);
            out.push(&input[..end]);
            input = &input[end..];
        }
    }
    out.concat()
}

fn is_unreserved(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~')
}

fn is_sub_delim(c: u8) -> bool {
    matches!(
        c,
        b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'='
    )
}

fn is_reg_name_char(c: u8) -> bool {
    is_unreserved(c) || is_sub_delim(c)
}

/// RFC 7252 §6.5 step 8: a segment keeps unreserved, sub-delims, ":" and "@".
fn is_segment_char(c: u8) -> bool {
    is_unreserved(c) || is_sub_delim(c) || matches!(c, b':' | b'@')
}

/// RFC 7252 §6.5 step 9: an argument keeps pchar, "/" and "?" but not "&".
fn is_query_char(c: u8) -> bool {
    (is_segment_char(c) || matches!(c, b'/' | b'?')) && c != b'&'
}

fn percent_encode(bytes: &[u8], keep: fn(u8) -> bool) -> String {
    let mut s = String::with_capacity(bytes.len());
    for &b in bytes {
        if keep(b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7252_section_6_3_equivalent_uris_decompose_alike() {
        // RFC 7252 §6.3: these three URIs are equivalent.
        let a = Uri::parse("coap://example.com:5683/~sensors/temp.xml").unwrap();
        let b = Uri::parse("coap://EXAMPLE.com/%7Esensors/temp.xml").unwrap();
        let c = Uri::parse("coap://EXAMPLE.com:/%7esensors/temp.xml").unwrap();
        assert_eq!(a, b);
        assert_eq!(b, c);
        assert_eq!(a.path, ["~sensors", "temp.xml"]);
        assert_eq!(a.to_string(), "coap://example.com/~sensors/temp.xml");
    }

    #[test]
    fn ip_literals_send_no_uri_host() {
        let u = Uri::parse("coap://198.18.0.2/data/1000").unwrap();
        let o = u.request_options();
        assert_eq!(o.uri_host().unwrap(), None);
        assert_eq!(o.uri_path().unwrap(), ["data", "1000"]);
        let u = Uri::parse("coap+tcp://[2001:db8::1]:9999/").unwrap();
        assert_eq!(u.host, Host::Ip("2001:db8::1".parse().unwrap()));
        assert_eq!((u.scheme, u.port), (Scheme::CoapTcp, 9999));
        assert!(u.path.is_empty());
        assert_eq!(u.to_string(), "coap+tcp://[2001:db8::1]:9999/");
    }

    #[test]
    fn empty_segments_and_dot_segments() {
        // "/a/" has two segments, "a" and "" (RFC 7252 §6.4 step 8).
        assert_eq!(Uri::parse("coap://h/a/").unwrap().path, ["a", ""]);
        assert_eq!(Uri::parse("coap://h/a/./b/../c").unwrap().path, ["a", "c"]);
        assert!(Uri::parse("coap://h").unwrap().path.is_empty());
        assert!(Uri::parse("coap://h?").unwrap().query.is_empty());
    }

    #[test]
    fn failures_name_the_rule() {
        assert_eq!(Uri::parse("/relative"), Err(UriError::NotAbsolute));
        assert_eq!(
            Uri::parse("http://h/"),
            Err(UriError::UnsupportedScheme("http".into()))
        );
        assert_eq!(Uri::parse("coap://h/#frag"), Err(UriError::Fragment));
        assert_eq!(Uri::parse("coap://u@h/"), Err(UriError::Userinfo));
        assert_eq!(
            Uri::parse("coap://h/%zz"),
            Err(UriError::BadPercentEncoding)
        );
        assert_eq!(
            Uri::parse("coap://h:99999/"),
            Err(UriError::BadPort("99999".into()))
        );
        assert_eq!(Uri::parse("coap://:5683/"), Err(UriError::EmptyHost));
    }

    #[test]
    fn options_back_to_a_uri() {
        let mut o = OptionList::new();
        o.push(number::URI_HOST, "example.net")
            .push_uint(number::URI_PORT, 61616)
            .push(number::URI_PATH, ".well-known")
            .push(number::URI_PATH, "core")
            .push(number::URI_QUERY, "rt=a&b");
        let u = Uri::from_options(Scheme::Coap, "198.18.0.1".parse().unwrap(), 5683, &o).unwrap();
        assert_eq!(
            u.to_string(),
            "coap://example.net:61616/.well-known/core?rt=a%26b"
        );
        let empty = OptionList::new();
        let u = Uri::from_options(Scheme::CoapTcp, "::1".parse().unwrap(), 5683, &empty).unwrap();
        assert_eq!(u.to_string(), "coap+tcp://[::1]/");
    }
}
