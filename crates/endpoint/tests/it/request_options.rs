//! Request options both servers check the same way (issue 11 #6): a repeated non-repeatable
//! critical option (two Uri-Host) gets 4.02 (RFC 7252 §5.4.5); Proxy-Uri and Proxy-Scheme
//! get 5.05 Proxying Not Supported (§5.7.2), not 4.02; Accept is understood: the
//! representation when its Content-Format matches, else 4.06 Not Acceptable (§5.10.4).

use std::net::SocketAddr;

use coaplab_cc::time::{Duration, Instant};
use coaplab_cc::Settings;
use coaplab_endpoint::tcp::{Session, SessionConfig};
use coaplab_endpoint::{registry_factory, Config, Endpoint, Router, CONTENT_FORMAT_LINK};
use coaplab_wire::frame::{Frame, FrameBuf};
use coaplab_wire::option::number;
use coaplab_wire::{Code, Message, MessageBuf, MessageType, Token};

fn router() -> Router {
    let mut r = Router::new();
    r.content(".well-known/core", CONTENT_FORMAT_LINK, b"</time>".to_vec())
        .clock("time", Duration::from_secs(1_700_000_000));
    r
}

/// One request: Uri-Path segments, further options, and the code both servers must answer.
type Case = (&'static [&'static str], Vec<(u16, Vec<u8>)>, Code);

/// Every case.
fn cases() -> Vec<Case> {
    let host = |h: &str| (number::URI_HOST, h.as_bytes().to_vec());
    let accept = |f: u8| (number::ACCEPT, if f == 0 { vec![] } else { vec![f] });
    vec![
        (&["time"], vec![], Code::CONTENT),
        (&["time"], vec![host("a")], Code::CONTENT),
        (&["time"], vec![host("a"), host("b")], Code::BAD_OPTION),
        (
            &["time"],
            vec![(number::PROXY_URI, b"coap://example.org/x".to_vec())],
            Code::PROXYING_NOT_SUPPORTED,
        ),
        (
            &["time"],
            vec![(number::PROXY_SCHEME, b"http".to_vec())],
            Code::PROXYING_NOT_SUPPORTED,
        ),
        // text/plain (0) is what /time is; application/json (50) it is not.
        (&["time"], vec![accept(0)], Code::CONTENT),
        (&["time"], vec![accept(50)], Code::NOT_ACCEPTABLE),
        (&[".well-known", "core"], vec![accept(40)], Code::CONTENT),
        (
            &[".well-known", "core"],
            vec![accept(0)],
            Code::NOT_ACCEPTABLE,
        ),
        // data/N is an octet stream (42).
        (&["data", "10"], vec![accept(42)], Code::CONTENT),
        (&["data", "10"], vec![accept(0)], Code::NOT_ACCEPTABLE),
        (&["time"], vec![accept(0), accept(40)], Code::BAD_OPTION),
        // An unknown critical option still comes first.
        (&["time"], vec![(9, vec![1]), accept(0)], Code::BAD_OPTION),
    ]
}

#[test]
fn the_udp_server_checks_request_options() {
    let factory = registry_factory("default", &Settings::new(), 1).unwrap();
    let mut s = Endpoint::new(Config::default(), factory, router()).unwrap();
    let from: SocketAddr = "198.18.0.1:40000".parse().unwrap();
    for (i, (path, options, expected)) in cases().into_iter().enumerate() {
        let mut m = MessageBuf::new(MessageType::Con, Code::GET, i as u16, Token::from_u64(1, 1));
        for seg in path {
            m.options.push(number::URI_PATH, seg.as_bytes());
        }
        for (n, v) in &options {
            m.options.push(*n, v.clone());
        }
        let mut buf = vec![0; m.encoded_len()];
        m.encode(&mut buf).unwrap();
        s.handle_datagram(Instant::ZERO, from, &buf);
        let reply = s.poll_transmit(Instant::ZERO).unwrap().contents;
        let code = Message::decode(&reply).unwrap().code;
        assert_eq!(code, expected, "UDP {path:?} {options:?}");
    }
}

#[test]
fn the_tcp_server_checks_request_options() {
    let mut s = Session::new(SessionConfig::server(), router()).unwrap();
    s.handle_stream_bytes(Instant::ZERO, &[0x00, 0xe1]);
    for (path, options, expected) in cases() {
        let mut f = FrameBuf::new(Code::GET, Token::new(&[3]).unwrap());
        for seg in path {
            f.options.push(number::URI_PATH, seg.as_bytes());
        }
        for (n, v) in &options {
            f.options.push(*n, v.clone());
        }
        s.handle_stream_bytes(Instant::ZERO, &f.to_bytes().unwrap());
        let reply = std::iter::from_fn(|| s.poll_write())
            .last()
            .expect("a response");
        let code = Frame::decode(&reply.bytes).unwrap().code;
        assert_eq!(code, expected, "TCP {path:?} {options:?}");
    }
}
