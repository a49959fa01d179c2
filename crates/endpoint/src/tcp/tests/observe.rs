//! Observe over a session (RFC 7641, RFC 8323 §7): registration, notifications with exact
//! bytes, deregistration with Observe 1, observers gone with the connection, and a slow reader
//! holding at most one queued notification per observer.

use coaplab_cc::time::Duration;
use coaplab_wire::Code;

use super::{events, pump, t, write_bytes};
use crate::event::ObserverGone;
use crate::request::Request;
use crate::resource::Router;
use crate::tcp::{Session, SessionConfig, SessionEvent, QUEUED_MESSAGE_BYTES};

/// A client (1-B tokens, bodies kept) and a server with `counter` changing every second,
/// CSMs exchanged.
fn pair(server: SessionConfig) -> (Session, Session) {
    let mut router = Router::new();
    router.counter("counter", Duration::from_secs(1));
    let client = SessionConfig {
        keep_bodies: true,
        ..SessionConfig::client()
    };
    let mut c = Session::new(client, Router::new()).unwrap();
    let mut s = Session::new(server, router).unwrap();
    pump(&mut s, &mut c, t(0));
    pump(&mut c, &mut s, t(0));
    let _ = (events(&mut c), events(&mut s));
    (c, s)
}

/// A 2.05 notification frame: 1-B `token`, Observe `seq` (1 B), Content-Format 0, Max-Age
/// `max_age` (1 B) and the one-digit `body`.
fn notification(token: u8, seq: u8, max_age: u8, body: u8) -> Vec<u8> {
    // Options and payload: 2 + 1 + 2 + 1 + 1 = 7 B.
    vec![
        0x71, 0x45, token, 0x61, seq, 0x60, 0x21, max_age, 0xff, body,
    ]
}

/// Registers at 100 ms; returns the observation's request and its token byte.
fn register(c: &mut Session, s: &mut Session) -> (crate::event::RequestId, u8) {
    let id = c.observe(t(100), &Request::get("counter")).unwrap();
    let token = events(c)
        .into_iter()
        .find_map(|e| match e {
            SessionEvent::RequestSent { token, .. } => Some(token.as_bytes()[0]),
            _ => None,
        })
        .unwrap();
    pump(c, s, t(150));
    (id, token)
}

#[test]
fn a_registration_is_answered_with_observe_and_notified_every_period() {
    let (mut c, mut s) = pair(SessionConfig::server());
    let (id, token) = register(&mut c, &mut s);
    assert_eq!(s.observers(), 1);
    assert!(matches!(
        events(&mut s)[0],
        SessionEvent::ObserverAdded { at, .. } if at == t(150)
    ));
    // The answer: Observe 0 (empty), Content-Format 0, Max-Age 1 (0.85 s, rounded up), "0".
    let answer = write_bytes(&mut s);
    assert_eq!(
        answer,
        [vec![0x61, 0x45, token, 0x60, 0x60, 0x21, 0x01, 0xff, b'0']]
    );
    c.handle_stream_bytes(t(200), &answer[0]);
    let done = events(&mut c);
    assert!(
        matches!(&done[0], SessionEvent::RequestCompleted { request, body, .. }
            if *request == id && body == b"0"),
        "{done:?}"
    );
    assert_eq!(c.observations(), 1);
    // Every second on the second: Observe 1, 2, ... in order, each passed on.
    for k in 1..=3u8 {
        assert_eq!(s.poll_timeout(), Some(t(1000 * i64::from(k))));
        s.handle_timeout(t(1000 * i64::from(k)));
        let w = write_bytes(&mut s);
        assert_eq!(w, [notification(token, k, 1, b'0' + k)]);
        c.handle_stream_bytes(t(1000 * i64::from(k) + 40), &w[0]);
        let got = events(&mut c);
        assert_eq!(got.len(), 1, "{got:?}");
        let SessionEvent::Notification {
            request,
            code,
            sequence,
            body,
            bytes,
            at,
            ..
        } = &got[0]
        else {
            panic!("{got:?}");
        };
        assert_eq!(
            (*request, *code, *sequence, body.as_slice(), *bytes, *at),
            (
                id,
                Code::CONTENT,
                Some(u32::from(k)),
                &[b'0' + k][..],
                10,
                t(1000 * i64::from(k) + 40)
            )
        );
    }
    // Not idle while observed: an idle timeout must not close it.
    assert_eq!(s.idle_since(t(0)), None);
}

#[test]
fn a_get_with_observe_1_deregisters_and_late_notifications_are_ignored() {
    let (mut c, mut s) = pair(SessionConfig::server());
    let (id, _) = register(&mut c, &mut s);
    pump(&mut s, &mut c, t(200));
    let _ = events(&mut c);
    let cancel = c
        .cancel_observation(t(900), id, &Request::get("counter"))
        .unwrap();
    assert_eq!(c.observations(), 0);
    // The server notifies before it reads the deregistration.
    s.handle_timeout(t(1000));
    let late = write_bytes(&mut s);
    pump(&mut c, &mut s, t(1000));
    let gone = events(&mut s);
    assert!(
        gone.iter()
            .any(|e| matches!(e, SessionEvent::ObserverRemoved {
            reason: ObserverGone::Deregistered,
            at,
            ..
        } if *at == t(1000))),
        "{gone:?}"
    );
    assert_eq!((s.observers(), s.poll_timeout()), (0, None));
    for w in late {
        c.handle_stream_bytes(t(1010), &w);
    }
    pump(&mut s, &mut c, t(1020));
    let got: Vec<_> = events(&mut c)
        .into_iter()
        .filter(|e| !matches!(e, SessionEvent::RequestSent { .. }))
        .collect();
    // The late notification is ignored; the plain answer (no Observe) completes the cancel.
    assert!(matches!(
        got[0],
        SessionEvent::Ignored {
            reason: crate::tcp::StreamIgnoreReason::AfterDeregistration,
            ..
        }
    ));
    assert!(
        matches!(&got[1], SessionEvent::RequestCompleted { request, options, .. }
            if *request == cancel && !coaplab_wire::ReadOptions::has(options, 6)),
        "{got:?}"
    );
    assert_eq!(got.len(), 2);
}

#[test]
fn observers_end_with_the_connection() {
    let (mut c, mut s) = pair(SessionConfig::server());
    register(&mut c, &mut s);
    let _ = events(&mut s);
    s.handle_stream_end(t(500));
    let e = events(&mut s);
    assert!(matches!(
        e[0],
        SessionEvent::ObserverRemoved {
            reason: ObserverGone::Closed,
            ..
        }
    ));
    assert_eq!((s.observers(), s.poll_timeout()), (0, None));
    c.handle_stream_end(t(500));
    assert_eq!(c.observations(), 0);
}

#[test]
fn a_slow_reader_holds_one_notification_the_newest() {
    let (mut c, mut s) = pair(SessionConfig::server());
    let (_, token) = register(&mut c, &mut s);
    let _ = write_bytes(&mut s);
    let _ = events(&mut s);
    // Nothing is written for three periods: the queued notification is replaced twice.
    for k in 1..=3 {
        s.handle_timeout(t(1000 * k));
    }
    assert_eq!(s.queued_bytes(), 10 + QUEUED_MESSAGE_BYTES);
    let sent: Vec<_> = events(&mut s)
        .into_iter()
        .filter_map(|e| match e {
            SessionEvent::NotificationSent {
                sequence, replaced, ..
            } => Some((sequence, replaced)),
            _ => None,
        })
        .collect();
    assert_eq!(sent, [(1, false), (2, true), (3, true)]);
    assert_eq!(write_bytes(&mut s), [notification(token, 3, 1, b'3')]);
    // A queue that cannot take the notification drops it; the next state tries again.
    // 73 B: the registration's 9-B answer fits, a 10-B notification does not.
    let (mut c, mut s) = pair(SessionConfig {
        max_queued_bytes: 9 + QUEUED_MESSAGE_BYTES,
        ..SessionConfig::server()
    });
    register(&mut c, &mut s);
    let _ = write_bytes(&mut s);
    let _ = events(&mut s);
    s.handle_timeout(t(1000));
    assert!(matches!(
        events(&mut s)[..],
        [SessionEvent::NotificationDropped { sequence: 1, .. }]
    ));
    assert_eq!(s.queued_bytes(), 0);
    assert_eq!(s.poll_timeout(), Some(t(2000)));
}
