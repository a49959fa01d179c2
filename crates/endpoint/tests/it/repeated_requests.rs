//! A client endpoint re-uses the encoding of a request it asks again (issue 17): the bytes
//! after the token are copied from the previous request of its slot when the method, path,
//! query, payload and options are the same. Whatever the sequence of requests, every datagram
//! must be exactly what encoding that request afresh gives.

use std::net::SocketAddr;

use coaplab_cc::{time::Instant, Settings};
use coaplab_endpoint::{registry_factory, Config, Endpoint, Request, Router};
use coaplab_wire::option::number;
use coaplab_wire::{Code, Message, MessageBuf, MessageType};

fn server() -> SocketAddr {
    "198.18.0.1:5683".parse().unwrap()
}

/// Sends `request`, answers it with a piggybacked 2.05, and returns the datagram sent.
fn ask(client: &mut Endpoint, now: Instant, request: &Request) -> Vec<u8> {
    let _ = client.request(now, server(), request);
    let sent = client.poll_transmit(now).expect("a datagram").contents;
    let msg = Message::decode(&sent).unwrap();
    let reply = MessageBuf::new(MessageType::Ack, Code::CONTENT, msg.message_id, msg.token())
        .to_bytes()
        .unwrap();
    client.handle_datagram(now, server(), &reply);
    while client.poll_event().is_some() {}
    assert_eq!(client.open_requests(), 0);
    sent
}

/// The same request encoded by a fresh endpoint with the same Message ID and token.
fn fresh(request: &Request, sent: &[u8]) -> Vec<u8> {
    let msg = Message::decode(sent).unwrap();
    let factory = registry_factory("default", &Settings::new(), 1).unwrap();
    let config = Config {
        initial_message_id: msg.message_id,
        initial_token: msg
            .token()
            .as_bytes()
            .iter()
            .fold(0, |t, &b| t << 8 | u64::from(b)),
        ..Config::default()
    };
    let mut other = Endpoint::new(config, factory, Router::new()).unwrap();
    let _ = other.request(Instant::ZERO, server(), request);
    other.poll_transmit(Instant::ZERO).unwrap().contents
}

#[test]
fn every_request_is_encoded_as_if_afresh() {
    let factory = registry_factory("default", &Settings::new(), 1).unwrap();
    let mut client = Endpoint::new(Config::default(), factory, Router::new()).unwrap();
    let get = Request::get("sensors/temp");
    let with_query = Request {
        query: vec!["unit=C".into()],
        ..get.clone()
    };
    let mut with_accept = get.clone();
    with_accept.options.push(number::ACCEPT, vec![50]);
    let post = Request {
        method: Code::POST,
        payload: b"21.5".to_vec(),
        ..get.clone()
    };
    let non = Request {
        confirmable: false,
        ..get.clone()
    };
    let other_path = Request::get("sensors/hum");
    let sequence = [
        &get,
        &get,
        &with_query,
        &with_query,
        &get,
        &with_accept,
        &post,
        &post,
        &get,
        &other_path,
        &get,
    ];
    let mut previous: Option<Vec<u8>> = None;
    for (i, request) in sequence.into_iter().enumerate() {
        let now = Instant::from_millis(10 * i as i64);
        let sent = ask(&mut client, now, request);
        assert_eq!(sent, fresh(request, &sent), "request {i}");
        if i == 1 {
            // The second GET differs from the first in its Message ID and token only.
            let first = previous.as_ref().unwrap();
            assert_eq!(sent.len(), first.len());
            assert_ne!(sent[2..4], first[2..4]);
            assert_eq!(sent[6..], first[6..]);
        }
        previous = Some(sent);
    }
    // A NON of the same path: the header differs, the rest is the GET's.
    let _ = client.request(Instant::from_secs(1), server(), &non);
    let sent = client
        .poll_transmit(Instant::from_secs(1))
        .unwrap()
        .contents;
    assert_eq!(sent, fresh(&non, &sent));
    assert_eq!(Message::decode(&sent).unwrap().mtype, MessageType::Non);
}

/// `request_again` sends what `request` with the last request would: after a completed
/// request (its slot reused) and while the last one is still open (copied to another slot);
/// nothing before any `request`, or after an observation took the copy's slot.
#[test]
fn request_again_repeats_the_last_request() {
    let factory = registry_factory("default", &Settings::new(), 1).unwrap();
    let config = Config {
        nstart: 4,
        ..Config::default()
    };
    let mut client = Endpoint::new(config, factory, Router::new()).unwrap();
    let t = Instant::ZERO;
    assert_eq!(client.request_again(t, server()), None);
    assert_eq!(client.open_requests(), 0);
    let post = Request {
        query: vec!["unit=C".into()],
        ..Request::post("sensors/temp", b"21.5".to_vec())
    };
    let first = ask(&mut client, t, &post);
    assert_eq!(first, fresh(&post, &first));
    let again = |client: &mut Endpoint, now: Instant| {
        let id = client
            .request_again(now, server())
            .expect("a request to repeat");
        let sent = client.poll_transmit(now).expect("a datagram").contents;
        (id, sent)
    };
    // The slot of the completed request is reused.
    let (_, sent) = again(&mut client, t);
    assert_eq!(sent, fresh(&post, &sent));
    // That one is still open: the next goes from another slot.
    let (_, sent) = again(&mut client, t);
    assert_eq!(sent, fresh(&post, &sent));
    assert_eq!(client.open_requests(), 2);
    // An observation takes the copy's slot: nothing to repeat until the next `request`.
    assert!(client.cancel(t, coaplab_endpoint::RequestId(1)));
    assert!(client.cancel(t, coaplab_endpoint::RequestId(2)));
    while client.poll_event().is_some() {}
    let _ = client.observe(t, server(), &Request::get("obs"));
    let _ = client.poll_transmit(t);
    assert_eq!(client.request_again(t, server()), None);
    let _ = client.request(t, server(), &post);
    let _ = client.poll_transmit(t);
    let (id, sent) = again(&mut client, t);
    assert_eq!(sent, fresh(&post, &sent));
    assert_eq!(id, coaplab_endpoint::RequestId(5));
}
