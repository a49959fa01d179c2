//! Uri-Query arguments of a [`Request`] go into every request datagram, after Uri-Path.

use std::net::SocketAddr;

use coaplab_cc::{time::Instant, Settings};
use coaplab_endpoint::{registry_factory, Config, Endpoint, Request, Router};

#[test]
fn query_options_follow_the_path() {
    let factory = registry_factory("default", &Settings::new(), 1).unwrap();
    let mut client = Endpoint::new(Config::default(), factory, Router::new()).unwrap();
    let server: SocketAddr = "127.0.0.1:5683".parse().unwrap();
    let request = Request {
        query: vec!["ticks".into(), "a=1".into()],
        ..Request::get("time")
    };
    let _ = client.request(Instant::ZERO, server, &request);
    let t = client.poll_transmit(Instant::ZERO).unwrap();
    // CON GET, MID 0, token 00 00; Uri-Path (11) "time"; Uri-Query (15, delta 4) "ticks";
    // Uri-Query (delta 0) "a=1".
    assert_eq!(
        t.contents,
        b"\x42\x01\x00\x00\x00\x00\xb4time\x45ticks\x03a=1".to_vec()
    );
}
