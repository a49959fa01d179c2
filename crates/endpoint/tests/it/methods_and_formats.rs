//! Issue 16 items 2, 3 and 5 in the sans-IO endpoint: a client request carries further
//! options in number order among the endpoint's own; FETCH, PATCH and iPATCH on /echo
//! (RFC 8132); /echo's Content-Formats (4.15 otherwise) and Accept against the echoed
//! format (4.06); ETags on data/N with 2.03 Valid; If-Match / If-None-Match on /echo (4.12);
//! Size1 on 4.13; the /.well-known/core listing with query filtering (RFC 6690 §4.1). Both
//! servers (UDP endpoint and RFC 8323 session) where the rule is shared.

use std::net::SocketAddr;

use coaplab_cc::time::Instant;
use coaplab_cc::Settings;
use coaplab_endpoint::tcp::{Session, SessionConfig};
use coaplab_endpoint::{registry_factory, Config, Endpoint, Event, Request, Router};
use coaplab_wire::frame::{Frame, FrameBuf};
use coaplab_wire::option::{number, OptionList};
use coaplab_wire::{Code, Message, MessageBuf, MessageType, ReadOptions, Token};

fn router() -> Router {
    let mut r = Router::new();
    r.link("/echo", &[("rt", Some("echo")), ("ct", Some("0 42 50 60"))])
        .link("/counter", &[("rt", Some("count")), ("obs", None)])
        .well_known_core();
    r
}

fn endpoint(etags: bool, seed: u64) -> Endpoint {
    let factory = registry_factory("default", &Settings::new(), seed).unwrap();
    let config = Config {
        etags,
        ..Config::default()
    };
    Endpoint::new(config, factory, router()).unwrap()
}

const FROM: &str = "198.18.0.1:40000";

/// Sends one CON request with `code`, `path` and `options` (+ payload) to `server`; returns
/// the reply's bytes.
fn ask(
    server: &mut Endpoint,
    mid: u16,
    code: Code,
    path: &[&str],
    options: &[(u16, &[u8])],
    payload: &[u8],
) -> Vec<u8> {
    let mut m = MessageBuf::new(MessageType::Con, code, mid, Token::from_u64(7, 1));
    for seg in path {
        m.options.push(number::URI_PATH, seg.as_bytes());
    }
    for (n, v) in options {
        m.options.push(*n, v.to_vec());
    }
    m.payload = payload.to_vec();
    let mut buf = vec![0; m.encoded_len()];
    m.encode(&mut buf).unwrap();
    let from: SocketAddr = FROM.parse().unwrap();
    server.handle_datagram(Instant::ZERO, from, &buf);
    server.poll_transmit(Instant::ZERO).unwrap().contents
}

#[test]
fn client_options_go_in_number_order_and_response_options_come_back() {
    let mut client = endpoint(false, 1);
    let mut server = endpoint(true, 2);
    let s: SocketAddr = "198.18.0.2:5683".parse().unwrap();
    let mut options = OptionList::new();
    options
        .push_uint(number::CONTENT_FORMAT, 50)
        .push_uint(number::ACCEPT, 50)
        .push(number::IF_NONE_MATCH, vec![])
        .push_uint(number::SIZE2, 0)
        .push(2048, b"z".to_vec());
    let request = Request {
        method: Code::FETCH,
        options,
        query: vec!["q".into()],
        ..Request::post("echo", b"{}".to_vec())
    };
    let _ = client.request(Instant::ZERO, s, &request);
    let t = client.poll_transmit(Instant::ZERO).unwrap();
    // CON FETCH (0.05), MID 0, token 00 00; If-None-Match (5); Uri-Path (11, delta 6) "echo";
    // Content-Format (12, delta 1) 50; Uri-Query (15, delta 3) "q"; Accept (17, delta 2) 50;
    // Size2 (28, delta 11) empty = 0; 2048 (delta 2020: 14 + 2 bytes 0x06d7) "z"; payload.
    assert_eq!(
        t.contents,
        [
            0x42, 0x05, 0, 0, 0, 0, 0x50, 0x64, b'e', b'c', b'h', b'o', 0x11, 50, 0x31, b'q', 0x21,
            50, 0xb0, 0xe1, 0x06, 0xd7, b'z', 0xff, b'{', b'}'
        ]
    );
    let from: SocketAddr = FROM.parse().unwrap();
    server.handle_datagram(Instant::ZERO, from, &t.contents);
    let reply = server.poll_transmit(Instant::ZERO).unwrap().contents;
    client.handle_datagram(Instant::ZERO, s, &reply);
    let done = std::iter::from_fn(|| client.poll_event())
        .find_map(|e| match e {
            Event::RequestCompleted {
                code,
                body,
                options,
                ..
            } => Some((code, body, options)),
            _ => None,
        })
        .unwrap();
    // FETCH answers 2.05 with the payload and its Content-Format, Size2 as asked.
    let mut expected = OptionList::new();
    expected
        .push_uint(number::CONTENT_FORMAT, 50)
        .push_uint(number::SIZE2, 2);
    assert_eq!(done, (Code::CONTENT, b"{}".to_vec(), expected));
}

#[test]
fn fetch_patch_and_ipatch_echo_with_their_codes() {
    let mut s = endpoint(false, 1);
    let cf = number::CONTENT_FORMAT;
    for (mid, method, code) in [
        (1, Code::FETCH, Code::CONTENT),
        (2, Code::PATCH, Code::CHANGED),
        (3, Code::IPATCH, Code::CHANGED),
    ] {
        let reply = ask(&mut s, mid, method, &["echo"], &[(cf, &[])], b"hi");
        // ACK, MID, token 07; Content-Format (12) 0 (empty value); payload.
        assert_eq!(
            reply,
            [
                0x61,
                code.class() << 5 | code.detail(),
                0,
                mid as u8,
                7,
                0xc0,
                0xff,
                b'h',
                b'i'
            ],
            "{method:?}"
        );
    }
    // data/N does not take FETCH or PATCH.
    let reply = ask(&mut s, 4, Code::FETCH, &["data", "5"], &[], b"");
    assert_eq!(
        Message::decode(&reply).unwrap().code,
        Code::METHOD_NOT_ALLOWED
    );
}

#[test]
fn echo_content_formats_and_accept() {
    let mut s = endpoint(false, 1);
    let cf = number::CONTENT_FORMAT;
    let acc = number::ACCEPT;
    let code = |s: &mut Endpoint, mid, opts: &[(u16, &[u8])]| {
        Message::decode(&ask(s, mid, Code::POST, &["echo"], opts, b"x"))
            .unwrap()
            .code
    };
    assert_eq!(
        code(&mut s, 1, &[(cf, &[40])]),
        Code::UNSUPPORTED_CONTENT_FORMAT
    );
    assert_eq!(code(&mut s, 2, &[(cf, &[0, 0, 0])]), Code::BAD_OPTION);
    for (mid, f) in [(3u16, &[][..]), (4, &[42]), (5, &[50]), (6, &[60])] {
        assert_eq!(code(&mut s, mid, &[(cf, f)]), Code::CHANGED, "{f:?}");
    }
    assert_eq!(code(&mut s, 7, &[(cf, &[50]), (acc, &[50])]), Code::CHANGED);
    assert_eq!(
        code(&mut s, 8, &[(cf, &[50]), (acc, &[])]),
        Code::NOT_ACCEPTABLE
    );
    // Without Content-Format the echo is an octet stream (42).
    assert_eq!(code(&mut s, 9, &[(acc, &[42])]), Code::CHANGED);
    assert_eq!(code(&mut s, 10, &[(acc, &[60])]), Code::NOT_ACCEPTABLE);
}

#[test]
fn data_etags_validate_and_echo_preconditions_hold() {
    let mut s = endpoint(true, 1);
    let tag = 10u64.to_be_bytes();
    let reply = ask(&mut s, 1, Code::GET, &["data", "10"], &[], b"");
    // ACK 2.05; ETag (4) 8 bytes; the 10-byte body.
    assert_eq!(reply[..6], [0x61, 0x45, 0, 1, 7, 0x48]);
    assert_eq!(reply[6..14], tag);
    assert_eq!(reply[14..], [0xff, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    let reply = ask(
        &mut s,
        2,
        Code::GET,
        &["data", "10"],
        &[(number::ETAG, &tag)],
        b"",
    );
    assert_eq!(reply[..6], [0x61, 0x43, 0, 2, 7, 0x48]);
    assert_eq!(reply.len(), 14, "2.03 Valid carries the tag and no body");
    let other = 11u64.to_be_bytes();
    let reply = ask(
        &mut s,
        3,
        Code::GET,
        &["data", "10"],
        &[(number::ETAG, &other)],
        b"",
    );
    assert_eq!(Message::decode(&reply).unwrap().code, Code::CONTENT);

    let (im, inm) = (number::IF_MATCH, number::IF_NONE_MATCH);
    let put = |s: &mut Endpoint, mid, opts: &[(u16, &[u8])], body: &[u8]| {
        let reply = ask(s, mid, Code::PUT, &["echo"], opts, body);
        let m = Message::decode(&reply).unwrap();
        (m.code, m.first(number::ETAG).map(<[u8]>::to_vec))
    };
    // Nothing stored yet: If-Match fails, If-None-Match holds.
    assert_eq!(
        put(&mut s, 4, &[(im, &[])], b"a"),
        (Code::PRECONDITION_FAILED, None)
    );
    let (code, first) = put(&mut s, 5, &[(inm, &[])], b"a");
    assert_eq!(code, Code::CHANGED);
    let first = first.expect("a PUT answers the stored body's ETag");
    assert_eq!(
        put(&mut s, 6, &[(inm, &[])], b"b"),
        (Code::PRECONDITION_FAILED, None)
    );
    assert_eq!(
        put(&mut s, 7, &[(im, &[1])], b"b"),
        (Code::PRECONDITION_FAILED, None)
    );
    let (code, second) = put(&mut s, 8, &[(im, &[1]), (im, &first)], b"b");
    assert_eq!(code, Code::CHANGED);
    assert_ne!(second, Some(first.clone()));
    // The old tag no longer matches.
    assert_eq!(
        put(&mut s, 9, &[(im, &first)], b"c"),
        (Code::PRECONDITION_FAILED, None)
    );
}

#[test]
fn etags_are_off_by_default_so_experiment_sizes_stay() {
    let mut s = endpoint(false, 1);
    let reply = ask(&mut s, 1, Code::GET, &["data", "3"], &[], b"");
    assert_eq!(reply, [0x61, 0x45, 0, 1, 7, 0xff, 0, 1, 2]);
}

#[test]
fn too_large_uploads_get_size1() {
    let mut s = endpoint(false, 1);
    // Block1 NUM 1024 of 1,024 B: offset 1 MiB, over MAX_UPLOAD_BYTES with any payload.
    let b1 = [0x40, 0x00, 0x0e];
    let reply = ask(
        &mut s,
        1,
        Code::PUT,
        &["echo"],
        &[(number::BLOCK1, &b1)],
        b"x",
    );
    let m = Message::decode(&reply).unwrap();
    assert_eq!(m.code, Code::REQUEST_ENTITY_TOO_LARGE);
    assert_eq!(m.size1().unwrap(), Some(1 << 20));
}

#[test]
fn well_known_core_lists_and_filters_links() {
    let mut s = endpoint(false, 1);
    let get = |s: &mut Endpoint, mid, query: &[&str]| {
        let opts: Vec<(u16, &[u8])> = query
            .iter()
            .map(|q| (number::URI_QUERY, q.as_bytes()))
            .collect();
        let reply = ask(s, mid, Code::GET, &[".well-known", "core"], &opts, b"");
        let m = Message::decode(&reply).unwrap();
        assert_eq!(m.content_format().unwrap(), Some(40));
        String::from_utf8(m.payload.to_vec()).unwrap()
    };
    assert_eq!(
        get(&mut s, 1, &[]),
        "</echo>;rt=\"echo\";ct=\"0 42 50 60\",</counter>;rt=\"count\";obs"
    );
    assert_eq!(get(&mut s, 2, &["rt=count"]), "</counter>;rt=\"count\";obs");
    assert_eq!(
        get(&mut s, 3, &["href=/e*"]),
        "</echo>;rt=\"echo\";ct=\"0 42 50 60\""
    );
    assert_eq!(get(&mut s, 4, &["ct=60"]), get(&mut s, 5, &["href=/echo"]));
    assert_eq!(get(&mut s, 6, &["obs"]), "</counter>;rt=\"count\";obs");
    assert_eq!(get(&mut s, 7, &["rt=nothing"]), "");
}

/// A method, its further options, and the code expected.
type Case = (Code, Vec<(u16, Vec<u8>)>, Code);

#[test]
fn the_tcp_server_shares_methods_formats_and_preconditions() {
    let mut s = Session::new(SessionConfig::server(), router()).unwrap();
    s.handle_stream_bytes(Instant::ZERO, &[0x00, 0xe1]);
    let cases: [Case; 5] = [
        (Code::FETCH, vec![], Code::CONTENT),
        (
            Code::IPATCH,
            vec![(number::CONTENT_FORMAT, vec![50])],
            Code::CHANGED,
        ),
        (
            Code::PATCH,
            vec![(number::CONTENT_FORMAT, vec![40])],
            Code::UNSUPPORTED_CONTENT_FORMAT,
        ),
        (
            Code::PUT,
            vec![(number::IF_MATCH, vec![])],
            Code::PRECONDITION_FAILED,
        ),
        (
            Code::POST,
            vec![(number::CONTENT_FORMAT, vec![50]), (number::ACCEPT, vec![])],
            Code::NOT_ACCEPTABLE,
        ),
    ];
    for (method, options, expected) in cases {
        let mut f = FrameBuf::new(method, Token::new(&[3]).unwrap());
        f.options.push(number::URI_PATH, b"echo".as_slice());
        for (n, v) in &options {
            f.options.push(*n, v.clone());
        }
        f.payload = b"p".to_vec();
        s.handle_stream_bytes(Instant::ZERO, &f.to_bytes().unwrap());
        let reply = std::iter::from_fn(|| s.poll_write())
            .last()
            .expect("a response");
        let frame = Frame::decode(&reply.bytes).unwrap();
        assert_eq!(frame.code, expected, "TCP {method:?} {options:?}");
        if expected.class() == 2 {
            assert_eq!(frame.payload, b"p");
        }
    }
}
