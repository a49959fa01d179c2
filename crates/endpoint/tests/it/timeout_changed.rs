//! `Endpoint::timeout_may_have_changed`: false only after an input that left every deadline as
//! it was (a request answered at once by an idle server), true after every input that arms
//! one. (Every `Pair`-driven test also checks, after each datagram, that a false answer kept
//! the deadline: `common::assert_timeout_kept`.)

use crate::common::*;
use coaplab_cc::time::{Duration, Instant};
use coaplab_endpoint::{Config, Endpoint, Request, Router};

fn server(config: Config, router: Router) -> Endpoint {
    Endpoint::new(config, factory("default", &[], 0.0), router).unwrap()
}

fn client() -> Endpoint {
    Endpoint::new(
        Config::default(),
        factory("default", &[], 0.0),
        Router::new(),
    )
    .unwrap()
}

/// The bytes of `request` as a client sends them (Message ID 0 onwards; NON with `non`).
fn request_bytes(c: &mut Endpoint, request: &Request, observe: bool) -> Vec<u8> {
    if observe {
        c.observe(Instant::ZERO, addr(SERVER), request).unwrap();
    } else {
        c.request(Instant::ZERO, addr(SERVER), request);
    }
    assert!(c.timeout_may_have_changed(), "a command may arm a deadline");
    c.poll_transmit(Instant::ZERO).unwrap().contents
}

/// The server's flag and deadline after it takes `bytes` at 1 s.
fn serve(s: &mut Endpoint, bytes: &[u8]) -> (bool, Option<Instant>) {
    let before = s.poll_timeout();
    s.handle_datagram(ms(1_000), addr(CLIENT), bytes);
    assert_timeout_kept(s, before);
    while s.poll_transmit(ms(1_000)).is_some() {}
    while s.poll_event().is_some() {}
    (s.timeout_may_have_changed(), s.poll_timeout())
}

#[test]
fn a_request_answered_at_once_by_an_idle_server_keeps_the_deadline() {
    let mut s = server(Config::default(), Router::new());
    assert!(
        s.timeout_may_have_changed(),
        "a new endpoint was never asked"
    );
    let get = request_bytes(&mut client(), &Request::get("data/10"), false);
    assert_eq!(serve(&mut s, &get), (false, None));
    // Its duplicate is replayed from the cache: nothing armed either.
    assert_eq!(serve(&mut s, &get), (false, None));
    s.handle_timeout(ms(2_000));
    assert!(s.timeout_may_have_changed(), "a timeout may arm a deadline");
    // Garbage is never taken for a quiet input.
    s.handle_datagram(ms(2_000), addr(CLIENT), &[0xff]);
    assert!(s.timeout_may_have_changed());
}

#[test]
fn a_request_that_arms_a_deadline_says_so() {
    let get = || request_bytes(&mut client(), &Request::get("data/10"), false);
    // A separate response: its CON retransmission deadline.
    let delayed = Config {
        processing_delay: Duration::from_millis(50),
        ..Config::default()
    };
    let (changed, at) = serve(&mut server(delayed, Router::new()), &get());
    assert!(changed && at == Some(ms(1_050)), "{changed} {at:?}");
    // The duplicate cache's purge timer.
    let purged = Config {
        dedup_purge_timer: true,
        ..Config::default()
    };
    let (changed, at) = serve(&mut server(purged, Router::new()), &get());
    assert!(changed && at.is_some(), "{changed} {at:?}");
    // A NON request is answered by a NON of the server's own Message ID.
    let non = request_bytes(&mut client(), &Request::get("data/10").non(), false);
    assert!(serve(&mut server(Config::default(), Router::new()), &non).0);
    // An observer's notifications.
    let mut router = Router::new();
    router.counter("counter", Duration::from_secs(1));
    let mut s = server(Config::default(), router);
    let observe = request_bytes(&mut client(), &Request::get("counter"), true);
    let (changed, at) = serve(&mut s, &observe);
    assert!(changed && at.is_some(), "{changed} {at:?}");
    // Busy with an observer, even a plain request may have moved a deadline.
    assert!(serve(&mut s, &get()).0);
    // A partial Block1 upload's expiry.
    let mut s = server(block_config(256), Router::new());
    let (changed, at) = serve(&mut s, &block1_put(1, 0, true, 4, &[0; 256]));
    assert!(changed && at.is_some(), "{changed} {at:?}");
}
