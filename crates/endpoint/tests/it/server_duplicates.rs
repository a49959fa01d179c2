//! `ServerDuplicates`: a duplicate CON answered from the cache (RFC 7252 §4.5) or processed
//! anew (libcoap's server on the published testbeds). FASOR+token's samples are unambiguous
//! only in the second case.

use crate::common::*;
use coaplab_endpoint::{Config, Event, ServerDuplicates};

/// FASOR+token (u = 0.5, preset fasor18), one POST whose first response is lost: copy 1
/// leaves at 2.416667 s (the first timer, draft-ietf-core-fasor-02), 100 ms each way.
fn lost_first_response(mode: ServerDuplicates) -> Pair {
    lost_first_response_with(Config {
        server_duplicates: mode,
        ..Config::default()
    })
}

/// [`lost_first_response`] with the server's whole config.
fn lost_first_response_with(server: Config) -> Pair {
    let mut pair = Pair::with(
        Config::default(),
        factory("fasor-token", &["preset=fasor18"], 0.5),
        server,
        router(),
    );
    pair.drop_down = vec![0];
    pair.client.request(pair.now, addr(SERVER), &post());
    pair.drive(1000);
    pair
}

/// The client's FASOR estimator after the exchange: (srtt_s, state).
fn estimator(pair: &Pair) -> (f64, Option<&'static str>) {
    let snap = pair
        .client
        .controller(addr(SERVER))
        .unwrap()
        .algorithm
        .snapshot();
    let srtt = snap
        .vars
        .iter()
        .find(|(k, _)| *k == "srtt_s")
        .map(|(_, v)| *v)
        .unwrap();
    (srtt, snap.state)
}

#[test]
fn reprocessed_duplicate_echoes_the_retransmissions_ordinal() {
    let pair = lost_first_response(ServerDuplicates::Reprocess);
    assert_eq!(pair.up_times(), [us(0), us(2_416_667)]);
    assert_eq!(pair.down_times(), [us(100_000), us(2_516_667)]);
    // The second reply echoes copy 1's token (base ‖ 1), so it answers copy 1.
    let downs = pair.down_bytes();
    assert_eq!((downs[0][5], downs[1][5]), (0, 1));
    let done = answers(&pair);
    assert_eq!(done.len(), 1);
    assert_eq!((done[0].0, done[0].2), (2, Some(1)));
    // The sample is copy 1's own round trip, 0.2 s, not 2.616667 s from the original.
    let (srtt, _) = estimator(&pair);
    assert!((srtt - 0.2).abs() < 1e-9, "srtt {srtt}");
    let handled = pair.server(|e| matches!(e, Event::Served { .. }).then_some(()));
    let dups = pair.server(|e| match e {
        Event::DuplicateRequest { at, .. } => Some(*at),
        _ => None,
    });
    assert_eq!((handled.len(), dups), (2, vec![us(2_516_667)]));
}

#[test]
fn cached_duplicate_echoes_the_originals_ordinal() {
    let pair = lost_first_response(ServerDuplicates::Cache);
    assert_eq!(pair.up_times(), [us(0), us(2_416_667)]);
    let downs = pair.down_bytes();
    assert_eq!(downs[0], downs[1]);
    let done = answers(&pair);
    assert_eq!((done[0].0, done[0].2), (2, Some(0)));
    // The replay names the original: the sample runs from 0 to 2.616667 s.
    let (srtt, _) = estimator(&pair);
    assert!((srtt - 2.616_667).abs() < 1e-9, "srtt {srtt}");
    assert_eq!(
        pair.server(|e| matches!(e, Event::Served { .. }).then_some(()))
            .len(),
        1
    );
}

/// Block1 blocks are replayed from the cache even with `Reprocess`: the upload already holds
/// the block, so running it again would answer 4.08 Request Entity Incomplete.
#[test]
fn a_duplicate_block1_block_is_replayed_even_when_reprocessing() {
    let config = Config {
        server_duplicates: ServerDuplicates::Reprocess,
        ..Config::default()
    };
    let mut server =
        coaplab_endpoint::Endpoint::new(config, factory("default", &[], 0.0), router()).unwrap();
    server.handle_datagram(
        ms(0),
        addr(CLIENT),
        &block1_put(0x1233, 0, true, 0, &[5; 16]),
    );
    assert!(server.poll_transmit(ms(0)).is_some());
    // Block 1 and its duplicate (its ACK was lost).
    let block = block1_put(0x1234, 1, true, 0, &[5; 16]);
    let mut replies = Vec::new();
    for _ in 0..2 {
        server.handle_datagram(ms(0), addr(CLIENT), &block);
        replies.push(server.poll_transmit(ms(0)).unwrap().contents);
    }
    // ACK 2.31 Continue (0x5f), MID 0x1234, both times byte for byte.
    assert_eq!(&replies[0][..4], [0x61, 0x5f, 0x12, 0x34]);
    assert_eq!(replies[0], replies[1]);
}

/// `emit_request_events = false` (the simulator's server without observers) leaves out the
/// per-request events and nothing else: the same packets, byte for byte, in both modes.
#[test]
fn request_events_off_changes_no_packet() {
    for mode in [ServerDuplicates::Cache, ServerDuplicates::Reprocess] {
        let on = lost_first_response(mode);
        let off = lost_first_response_with(Config {
            server_duplicates: mode,
            emit_request_events: false,
            ..Config::default()
        });
        assert_eq!(on.up_times(), off.up_times());
        assert_eq!(on.down_times(), off.down_times());
        assert_eq!(on.down_bytes(), off.down_bytes());
        let per_request =
            |e: &Event| matches!(e, Event::Served { .. } | Event::DuplicateRequest { .. });
        assert!(!on.server(|e| per_request(e).then_some(())).is_empty());
        assert!(off.server(|e| per_request(e).then_some(())).is_empty());
    }
}
