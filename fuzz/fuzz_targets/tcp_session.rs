//! Any byte stream into an RFC 8323 session that holds outstanding requests, split at a
//! fuzzer-chosen point: the session must not panic, must give the same events and writes
//! whether the bytes arrive whole or in two parts, and must never buffer more than one frame.
#![no_main]

use coaplab_cc::time::Instant;
use coaplab_endpoint::tcp::{Session, SessionConfig, SessionEvent, Write};
use coaplab_endpoint::{Request, Resource, Router};
use libfuzzer_sys::fuzz_target;

fn session(client: bool) -> Session {
    let mut router = Router::new();
    router.route("f", Resource::experiment(2_000, 53));
    let config = if client {
        SessionConfig::client()
    } else {
        SessionConfig::server()
    };
    let mut s = Session::new(config, router).expect("valid config");
    if client {
        for path in ["f", "data/3", "echo"] {
            s.request(Instant::ZERO, &Request::get(path)).expect("fits 1,152 B");
        }
        s.ping(Instant::ZERO, true);
    }
    s
}

fn run(client: bool, parts: &[&[u8]]) -> (Vec<SessionEvent>, Vec<Write>, bool, usize) {
    let mut s = session(client);
    for p in parts {
        s.handle_stream_bytes(Instant::from_millis(1), p);
        assert!(s.buffered_bytes() <= s.config().receive_limit());
    }
    let events = std::iter::from_fn(|| s.poll_event()).collect();
    let writes = std::iter::from_fn(|| s.poll_write()).collect();
    (events, writes, s.should_close(), s.buffered_bytes())
}

fuzz_target!(|data: &[u8]| {
    if data.is_empty() {
        return;
    }
    // Bit 7: client or server session; bit 6: prefix a valid CSM (to get past RFC 8323 §5.3's check
    // more often); bits 0-5 and the length: the split point.
    let client = data[0] & 0x80 != 0;
    let mut owned = Vec::new();
    if data[0] & 0x40 != 0 {
        owned.extend_from_slice(&[0x00, 0xe1]);
    }
    owned.extend_from_slice(&data[1..]);
    let stream = &owned[..];
    let split = (data[0] & 0x3f) as usize * 7 % (stream.len() + 1);
    let whole = run(client, &[stream]);
    let parts = run(client, &[&stream[..split], &stream[split..]]);
    assert_eq!(whole, parts);
});
