//! Session tests: scripted byte streams with exact bytes and events.

mod blockwise;
mod body_limit;
mod csm;
mod exchange;
mod limits;
mod observe;
mod signals;
mod split;

use coaplab_cc::time::Instant;

use crate::resource::{Resource, Router};
use crate::tcp::{Session, SessionConfig, SessionEvent, Write};

/// `ms` milliseconds after time zero.
fn t(ms: i64) -> Instant {
    Instant::from_millis(ms)
}

/// The experiments' client (§5.1).
fn client() -> Session {
    Session::new(SessionConfig::client(), Router::new()).unwrap()
}

/// The experiments' server: `f` answers GET with 102,400 B and POST with 2.04 + 53 B.
fn server() -> Session {
    let mut r = Router::new();
    r.route("f", Resource::experiment(102_400, 53));
    Session::new(SessionConfig::server(), r).unwrap()
}

/// Every queued write.
fn writes(s: &mut Session) -> Vec<Write> {
    std::iter::from_fn(|| s.poll_write()).collect()
}

/// Every queued write's bytes.
fn write_bytes(s: &mut Session) -> Vec<Vec<u8>> {
    writes(s).into_iter().map(|w| w.bytes).collect()
}

/// Every queued event.
fn events(s: &mut Session) -> Vec<SessionEvent> {
    std::iter::from_fn(|| s.poll_event()).collect()
}

/// Feeds every queued write of `from` to `to` at `now`.
fn pump(from: &mut Session, to: &mut Session, now: Instant) {
    for w in writes(from) {
        to.handle_stream_bytes(now, &w.bytes);
    }
}
