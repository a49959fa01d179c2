//! Requests and responses: the experiments' byte sizes, pipelining, Max-Message-Size.

use coaplab_wire::frame::FrameBuf;
use coaplab_wire::{Code, Token};

use super::{client, events, pump, server, t, write_bytes, writes};
use crate::event::RequestId;
use crate::request::Request;
use crate::resource::Router;
use crate::tcp::{
    RequestError, Session, SessionConfig, SessionConfigError, SessionEvent, WriteKind,
};

#[test]
fn long_transfer_is_one_102408_byte_message_with_an_8_byte_header() {
    let (mut c, mut s) = (client(), server());
    c.request(t(0), &Request::get("f")).unwrap();
    let _ = events(&mut c);
    pump(&mut c, &mut s, t(100));
    let w = writes(&mut s);
    assert_eq!(w.len(), 2);
    assert_eq!(w[0].bytes, [0x00, 0xe1]);
    let r = &w[1].bytes;
    assert_eq!(w[1].kind, WriteKind::Response(Code::CONTENT));
    assert_eq!(r.len(), 102_408);
    // Len 15 + 32-bit length (102,401 - 65,805 = 0x8ef4), 2.05, token 0x00, marker.
    assert_eq!(r[..8], [0xf1, 0x00, 0x00, 0x8e, 0xf4, 0x45, 0x00, 0xff]);
    assert!(r[8..]
        .iter()
        .enumerate()
        .all(|(i, b)| *b == (i & 0xff) as u8));
    assert_eq!(
        events(&mut s)[1],
        SessionEvent::Served {
            token: Token::new(&[0]).unwrap(),
            method: Code::GET,
            code: Code::CONTENT,
            request_bytes: 5,
            response_bytes: 102_408,
            at: t(100),
        }
    );
    c.handle_stream_bytes(t(150), &w[0].bytes);
    c.handle_stream_bytes(t(2_000), &w[1].bytes);
    assert_eq!(
        events(&mut c),
        [
            SessionEvent::CsmReceived {
                max_message_size: 1152,
                block_wise_transfer: false,
                at: t(150),
            },
            SessionEvent::RequestCompleted {
                request: RequestId(0),
                code: Code::CONTENT,
                body_len: 102_400,
                body: Vec::new(),
                options: Default::default(),
                bytes: 102_408,
                started: t(0),
                at: t(2_000),
            },
        ]
    );
    assert_eq!(c.outstanding(), 0);
}

#[test]
fn short_exchange_messages_are_59_bytes_with_a_2_byte_token() {
    let config = SessionConfig {
        token_len: 2,
        first_token: 0x1234,
        ..SessionConfig::client()
    };
    let mut c = Session::new(config, Router::new()).unwrap();
    let mut s = server();
    c.request(t(0), &Request::post("f", vec![0; 51])).unwrap();
    let w = write_bytes(&mut c);
    let mut post = vec![0xd2, 54 - 13, 0x02, 0x12, 0x34, 0xb1, b'f', 0xff];
    post.extend_from_slice(&[0; 51]);
    assert_eq!(w[1], post);
    assert_eq!(w[1].len(), 59);
    for b in &w {
        s.handle_stream_bytes(t(40), b);
    }
    let mut changed = vec![0xd2, 54 - 13, 0x44, 0x12, 0x34, 0xff];
    changed.extend_from_slice(&[0; 53]);
    assert_eq!(write_bytes(&mut s), [vec![0x00, 0xe1], changed]);
}

#[test]
fn pipelined_requests_answered_out_of_order_are_matched_by_token() {
    let mut c = client();
    for n in 1..=3 {
        let id = c
            .request(t(n as i64), &Request::get(&format!("data/{n}")))
            .unwrap();
        assert_eq!(id, RequestId(n - 1));
    }
    assert_eq!(c.outstanding(), 3);
    let _ = (writes(&mut c), events(&mut c));
    c.handle_stream_bytes(t(10), &[0x00, 0xe1]);
    // Tokens 0x00, 0x01, 0x02 answered as 0x02, 0x00, 0x01, then an unknown 0x07.
    let answer = |tok: u8, len: usize| {
        let mut f = FrameBuf::new(Code::CONTENT, Token::new(&[tok]).unwrap());
        f.payload = vec![7; len];
        f.to_bytes().unwrap()
    };
    let mut stream = Vec::new();
    for (tok, len) in [(2, 3), (0, 1), (1, 2), (7, 1)] {
        stream.extend(answer(tok, len));
    }
    c.handle_stream_bytes(t(20), &stream);
    let done = |request, body_len, started| SessionEvent::RequestCompleted {
        request: RequestId(request),
        code: Code::CONTENT,
        body_len,
        body: Vec::new(),
        options: Default::default(),
        bytes: 4 + body_len,
        started: t(started),
        at: t(20),
    };
    assert_eq!(
        events(&mut c),
        [
            SessionEvent::CsmReceived {
                max_message_size: 1152,
                block_wise_transfer: false,
                at: t(10),
            },
            done(2, 3, 3),
            done(0, 1, 1),
            done(1, 2, 2),
            SessionEvent::Ignored {
                reason: crate::tcp::StreamIgnoreReason::UnmatchedToken,
                at: t(20),
            },
        ]
    );
    assert_eq!(c.outstanding(), 0);
}

#[test]
fn the_server_answers_pipelined_requests_in_arrival_order() {
    let (mut c, mut s) = (client(), server());
    c.request(t(0), &Request::get("data/2")).unwrap();
    c.request(t(0), &Request::post("echo", vec![9])).unwrap();
    c.request(t(0), &Request::get("nothing")).unwrap();
    pump(&mut c, &mut s, t(1));
    assert_eq!(
        write_bytes(&mut s),
        [
            vec![0x00, 0xe1],
            vec![0x31, 0x45, 0x00, 0xff, 0, 1],
            vec![0x21, 0x44, 0x01, 0xff, 9],
            vec![0x01, 0x84, 0x02],
        ]
    );
}

#[test]
fn max_message_size_limits_what_we_send() {
    let mut c = client();
    // Before the peer's CSM: 1,152 B. POST /f with 1,200 B = 3 + 1 + 1 + 2 + 1 + 1,200.
    let big = Request::post("f", vec![0; 1_200]);
    assert_eq!(
        c.request(t(0), &big),
        Err(RequestError::TooLarge {
            len: 1_208,
            max: 1_152
        })
    );
    assert_eq!(c.outstanding(), 0);
    // A CSM raising it to 2,000 (option 2 = 0x07d0).
    c.handle_stream_bytes(t(1), &[0x30, 0xe1, 0x22, 0x07, 0xd0]);
    assert_eq!(c.peer_max_message_size(), 2_000);
    assert_eq!(c.request(t(2), &big), Ok(RequestId(0)));
    assert_eq!(write_bytes(&mut c)[1].len(), 1_208);

    // A response too large for the client's CSM (no option: 1,152 B) becomes a 5.00.
    let mut s = server();
    let mut small = Session::new(SessionConfig::server(), Router::new()).unwrap();
    small.request(t(0), &Request::get("data/2000")).unwrap();
    let _ = writes(&mut s);
    pump(&mut small, &mut s, t(3));
    assert_eq!(write_bytes(&mut s), [vec![0x01, 0xa0, 0x00]]);
    assert_eq!(
        events(&mut s)[1],
        SessionEvent::ResponseRefused {
            token: Token::new(&[0]).unwrap(),
            len: 2_006,
            max: 1_152,
            at: t(3),
        }
    );
}

#[test]
fn one_byte_tokens_skip_outstanding_values_and_run_out_at_256() {
    let config = SessionConfig {
        first_token: 255,
        ..SessionConfig::client()
    };
    let mut c = Session::new(config, Router::new()).unwrap();
    for _ in 0..256 {
        c.request(t(0), &Request::get("f")).unwrap();
    }
    assert_eq!(
        c.request(t(0), &Request::get("f")),
        Err(RequestError::TokensExhausted)
    );
    let _ = (writes(&mut c), events(&mut c));
    c.handle_stream_bytes(t(1), &[0x00, 0xe1, 0x01, 0x45, 0x05]);
    assert_eq!(c.request(t(2), &Request::get("f")), Ok(RequestId(256)));
    assert_eq!(write_bytes(&mut c), [vec![0x21, 0x01, 0x05, 0xb1, b'f']]);
}

#[test]
fn content_resources_carry_their_content_format() {
    let mut router = Router::new();
    router.content("c", crate::CONTENT_FORMAT_LINK, b"</f>".to_vec());
    router.clock("time", coaplab_cc::time::Duration::from_secs(1_700_000_000));
    let mut s = Session::new(SessionConfig::server(), router).unwrap();
    let mut c = client();
    c.request(t(0), &Request::get("c")).unwrap();
    c.request(t(0), &Request::get("time")).unwrap();
    c.request(t(0), &Request::post("time", Vec::new())).unwrap();
    pump(&mut c, &mut s, t(2_500));
    let mut time = vec![0xc1, 0x45, 0x01, 0xc0, 0xff];
    time.extend_from_slice(b"1700000002");
    assert_eq!(
        write_bytes(&mut s),
        [
            vec![0x00, 0xe1],
            vec![0x71, 0x45, 0x00, 0xc1, 0x28, 0xff, b'<', b'/', b'f', b'>'],
            time,
            vec![0x01, 0x85, 0x02],
        ]
    );
}

#[test]
fn poll_write_into_swaps_buffers_and_reuses_them() {
    let (mut c, mut s) = (client(), server());
    let mut buf = vec![1, 2, 3];
    c.request(t(0), &Request::get("f")).unwrap();
    assert_eq!(
        c.poll_write_into(&mut buf),
        Some(WriteKind::Signal(Code::CSM))
    );
    s.handle_stream_bytes(t(1), &buf);
    assert_eq!(
        c.poll_write_into(&mut buf),
        Some(WriteKind::Request(RequestId(0)))
    );
    assert_eq!(buf, [0x21, 0x01, 0x00, 0xb1, b'f']);
    s.handle_stream_bytes(t(1), &buf);
    assert_eq!(c.poll_write_into(&mut buf), None);
    let mut got = Vec::new();
    while let Some(kind) = s.poll_write_into(&mut buf) {
        got.push((kind, buf.len()));
    }
    assert_eq!(
        got,
        [
            (WriteKind::Signal(Code::CSM), 2),
            (WriteKind::Response(Code::CONTENT), 102_408)
        ]
    );
}

#[test]
fn a_continuous_client_runs_50_short_exchanges_on_one_session() {
    let config = SessionConfig {
        token_len: 2,
        ..SessionConfig::client()
    };
    let mut c = Session::new(config, Router::new()).unwrap();
    let mut s = server();
    let (mut up, mut down) = (0, 0);
    for i in 0..50i64 {
        let id = c
            .request(t(100 * i), &Request::post("f", vec![0; 51]))
            .unwrap();
        for w in writes(&mut c) {
            up += w.bytes.len();
            s.handle_stream_bytes(t(100 * i + 40), &w.bytes);
        }
        for w in writes(&mut s) {
            down += w.bytes.len();
            c.handle_stream_bytes(t(100 * i + 80), &w.bytes);
        }
        let done = events(&mut c).into_iter().find_map(|e| match e {
            SessionEvent::RequestCompleted {
                request,
                code,
                bytes,
                started,
                at,
                ..
            } => Some((request, code, bytes, at - started)),
            _ => None,
        });
        assert_eq!(
            done,
            Some((
                id,
                Code::CHANGED,
                59,
                coaplab_cc::time::Duration::from_millis(80)
            ))
        );
    }
    // CSMs once, then 59 B each way per exchange; tokens 0x0000..0x0031.
    assert_eq!((up, down), (6 + 50 * 59, 2 + 50 * 59));
    assert_eq!(c.config().first_token, 0);
    c.request(t(5_000), &Request::get("f")).unwrap();
    assert_eq!(writes(&mut c)[0].bytes[..4], [0x22, 0x01, 0x00, 0x32]);
}

#[test]
fn a_request_carries_its_query_after_its_path() {
    let mut c = client();
    let mut req = Request::get("time");
    req.query = vec!["ticks".to_owned(), "a=1".to_owned()];
    c.request(t(0), &req).unwrap();
    let w = write_bytes(&mut c);
    // 15 B of options only (Len 13 + 2), GET, token 0; Uri-Path "time" (delta 11),
    // Uri-Query "ticks" (delta 4), Uri-Query "a=1" (delta 0).
    let mut expected = vec![0xd1, 0x02, 0x01, 0x00, 0xb4];
    expected.extend_from_slice(b"time");
    expected.push(0x45);
    expected.extend_from_slice(b"ticks");
    expected.push(0x03);
    expected.extend_from_slice(b"a=1");
    assert_eq!(w[1], expected);
}

/// The body the experiments' client receives for `GET data/N` from the experiments' server
/// (after both CSMs): the response code, payload length and frame bytes.
fn get_data(client_config: SessionConfig, n: usize) -> (Code, usize, usize) {
    let mut c = Session::new(client_config, Router::new()).unwrap();
    let mut s = server();
    c.request(t(0), &Request::get(&format!("data/{n}")))
        .unwrap();
    pump(&mut c, &mut s, t(1));
    pump(&mut s, &mut c, t(2));
    events(&mut c)
        .into_iter()
        .find_map(|e| match e {
            SessionEvent::RequestCompleted {
                code,
                body_len,
                bytes,
                ..
            } => Some((code, body_len, bytes)),
            _ => None,
        })
        .unwrap()
}

#[test]
fn spec_max_message_size_admits_objects_up_to_131_064_bytes() {
    // 131,064 + 8 B of header = 131,072 B, docs/experiments.md §5.1's Max-Message-Size; one byte
    // more is refused by the server with a 5.00 (a response of 3 B, not the object).
    assert_eq!(
        get_data(SessionConfig::client(), 131_064),
        (Code::CONTENT, 131_064, 131_072)
    );
    assert_eq!(
        get_data(SessionConfig::client(), 131_065),
        (Code::INTERNAL_SERVER_ERROR, 0, 3)
    );
}

#[test]
fn admitting_response_raises_max_message_size_to_the_objects_frame() {
    let admitting = |n| SessionConfig::client().admitting_response(n).unwrap();
    // Up to 131,064 B docs/experiments.md §5.1's 131,072 B stays (so its CSM stays 6 B).
    assert_eq!(admitting(131_064), SessionConfig::client());
    assert_eq!(admitting(0), SessionConfig::client());
    // Above, exactly the response frame: 8 B of header with a 1-B token.
    assert_eq!(admitting(131_065).max_message_size, Some(131_073));
    assert_eq!(admitting(8 << 20).max_message_size, Some((8 << 20) + 8));
    for n in [131_065, 200_000, 8 << 20] {
        assert_eq!(get_data(admitting(n as u64), n), (Code::CONTENT, n, n + 8));
    }
    // A 2-B token adds one byte of header.
    let two = SessionConfig {
        token_len: 2,
        ..SessionConfig::client()
    };
    assert_eq!(
        two.admitting_response(200_000).unwrap().max_message_size,
        Some(200_009)
    );
    // The largest frame a 4-byte Max-Message-Size can say is u32::MAX bytes.
    let max_payload = u64::from(u32::MAX) - 8;
    assert_eq!(admitting(max_payload).max_message_size, Some(u32::MAX));
    assert_eq!(
        SessionConfig::client().admitting_response(max_payload + 1),
        Err(SessionConfigError::ResponseTooLarge(max_payload + 1))
    );
    assert_eq!(
        SessionConfig::client().admitting_response(u64::MAX),
        Err(SessionConfigError::ResponseTooLarge(u64::MAX))
    );
}
