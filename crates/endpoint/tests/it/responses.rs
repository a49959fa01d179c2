//! Responses and request outcomes through the harness: separate responses with lost ACKs and
//! the empty-ACK sample point, NON requests, cancel, unencodable requests, snapshots.

use crate::common::*;
use coaplab_cc::time::Duration;
use coaplab_endpoint::{AnswerKind, Config, Event, Request, Router};
use coaplab_wire::{Code, Message, MessageType};

/// A server that processes each request for 1 s, so it answers with separate responses.
fn slow_server() -> Config {
    Config {
        processing_delay: Duration::from_secs(1),
        ..Config::default()
    }
}

/// Separate response (server processing 1 s): the empty ACK is lost, so the CON response
/// acknowledges the request; the client's ACK of it is lost too, so the server retransmits
/// and the client answers the duplicate from its cache without a second delivery.
#[test]
fn separate_response_with_lost_acks() {
    let mut pair = Pair::default_client(slow_server(), router());
    pair.drop_down = vec![0]; // the empty ACK
    pair.drop_up = vec![1]; // the client's first ACK of the separate response
    pair.client.request(ms(0), addr(SERVER), &post());
    pair.drive(1000);
    // up: request 0, ACK 1.2 (lost), ACK again 3.2 (server's T0 = 2 s with u = 0).
    assert_eq!(pair.up_times(), [0, 1200, 3200].map(ms));
    assert_eq!(pair.down_times(), [100, 1100, 3100].map(ms));
    assert_eq!(
        answers(&pair),
        [(
            1,
            Duration::from_millis(1200),
            None,
            AnswerKind::SeparateResponse,
            ms(1200)
        )]
    );
    let done = pair.client(|e| match e {
        Event::RequestCompleted { code, at, .. } => Some((*code, *at)),
        _ => None,
    });
    assert_eq!(done, [(Code::CHANGED, ms(1200))]);
    let ups = pair.up_bytes();
    assert_eq!(ups[1], ups[2]);
    assert_eq!(ups[1].len(), 4);
    // The server's own exchange completed on the second ACK.
    let server_done = pair.server(|e| match e {
        Event::ExchangeCompleted {
            transmissions, at, ..
        } => Some((*transmissions, *at)),
        _ => None,
    });
    assert_eq!(server_done, [(2, ms(3300))]);
}

/// With the empty ACK delivered, the sample point is the empty ACK (docs/algorithms.md, ambiguity
/// #35) and the NSTART slot is free before the response arrives.
#[test]
fn empty_ack_is_the_sample_point() {
    let mut pair = Pair::default_client(slow_server(), router());
    let s = addr(SERVER);
    pair.client.request(ms(0), s, &post());
    pair.client.request(ms(0), s, &post());
    pair.drive(1000);
    let a = answers(&pair);
    assert_eq!(
        a[0],
        (
            1,
            Duration::from_millis(200),
            None,
            AnswerKind::EmptyAck,
            ms(200)
        )
    );
    // The second request left at 0.2, as soon as the first was acknowledged.
    assert_eq!(pair.up_times()[..2], [ms(0), ms(200)]);
}

/// NON requests get NON responses and no congestion control.
#[test]
fn non_request_gets_non_response() {
    let mut pair = Pair::default_client(Config::default(), Router::new());
    pair.client
        .request(ms(0), addr(SERVER), &Request::get("data/10").non());
    pair.drive(1000);
    let types: Vec<MessageType> = pair
        .wire
        .iter()
        .map(|w| Message::decode(&w.bytes).unwrap().mtype)
        .collect();
    assert_eq!(types, [MessageType::Non, MessageType::Non]);
    assert_eq!(
        answers(&pair),
        [(
            1,
            Duration::from_millis(200),
            None,
            AnswerKind::NonResponse,
            ms(200)
        )]
    );
    assert!(pair.client.controller(addr(SERVER)).is_none());
}

/// Cancelling frees the NSTART slot or the queue place; the algorithm hears `failed`.
#[test]
fn cancel_frees_the_slot_and_the_queue_place() {
    let mut pair = Pair::default_client(Config::default(), router());
    let s = addr(SERVER);
    let a = pair.client.request(ms(0), s, &post());
    let b = pair.client.request(ms(0), s, &post());
    let c = pair.client.request(ms(0), s, &post());
    assert!(pair.client.cancel(ms(0), b));
    assert_eq!(pair.client.queued(s), 1);
    pair.drain();
    pair.now = ms(10);
    assert!(pair.client.cancel(ms(10), a));
    assert!(!pair.client.cancel(ms(10), a));
    // c is admitted at once when a's slot frees.
    assert_eq!(pair.client.in_flight(s), 1);
    assert_eq!(pair.client.queued(s), 0);
    pair.drive(100);
    assert_eq!(pair.up_times(), [ms(0), ms(10)]);
    let outcome = pair.client(|e| match e {
        Event::RequestFailed {
            request, reason, ..
        } => Some((*request, format!("{reason:?}"))),
        Event::RequestCompleted { request, .. } => Some((*request, "done".into())),
        _ => None,
    });
    assert_eq!(
        outcome,
        [
            (b, "Cancelled".to_string()),
            (a, "Cancelled".to_string()),
            (c, "done".to_string())
        ]
    );
}

/// A request that cannot be encoded fails with a typed reason instead of panicking.
#[test]
fn unencodable_request_fails_cleanly() {
    let mut pair = Pair::with_factory(factory("fasor-token", &[], 0.0));
    // An option value longer than the 16-bit extended length can express (RFC 7252 §3.1).
    let long = "x".repeat(70_000);
    let r = pair
        .client
        .request(ms(0), addr(SERVER), &Request::get(&long));
    assert!(pair.client.poll_transmit(ms(0)).is_none());
    pair.drain();
    let failed = pair.client(|e| match e {
        Event::RequestFailed {
            request, reason, ..
        } => Some((*request, *reason)),
        _ => None,
    });
    assert_eq!(failed, [(r, coaplab_endpoint::FailReason::Unencodable)]);
    assert_eq!(pair.client.in_flight(addr(SERVER)), 0);
    assert_eq!(pair.client.poll_timeout(), None);
}

/// With `emit_snapshots`, every completed exchange is followed by the algorithm's view.
#[test]
fn snapshots_follow_completions_when_asked() {
    let mut pair = Pair::with(
        Config {
            emit_snapshots: true,
            ..Config::default()
        },
        factory("fasor", &["dither=false"], 0.0),
        Config::default(),
        router(),
    );
    pair.client.request(ms(0), addr(SERVER), &post());
    pair.drive(100);
    let snaps = pair.client(|e| match e {
        Event::Snapshot { snapshot, at, .. } => Some((snapshot.state, snapshot.rto, *at)),
        _ => None,
    });
    assert_eq!(snaps, [(Some("FAST"), Duration::from_millis(300), ms(200))]);
}
