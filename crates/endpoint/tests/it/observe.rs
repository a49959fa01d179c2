//! Observe (RFC 7641) between two sans-IO endpoints over a lossless 10-ms link.

use coaplab_cc::time::{Duration, Instant};
use coaplab_cc::Settings;
use coaplab_endpoint::{
    registry_factory, Config, Endpoint, Event, ObserverGone, Request, RequestId, Router,
};
use coaplab_wire::{Message, MessageType, ReadOptions};
use std::net::SocketAddr;

fn endpoints() -> (Endpoint, Endpoint, SocketAddr, SocketAddr) {
    let s = Settings::new();
    let client = Endpoint::new(
        Config::default(),
        registry_factory("default", &s, 1).unwrap(),
        Router::new(),
    )
    .unwrap();
    let mut router = Router::new();
    router.counter("counter", Duration::from_secs(1));
    let server = Endpoint::new(
        Config::default(),
        registry_factory("default", &s, 2).unwrap(),
        router,
    )
    .unwrap();
    (
        client,
        server,
        "198.18.0.1:40000".parse().unwrap(),
        "198.18.1.1:5683".parse().unwrap(),
    )
}

/// Moves every queued datagram both ways until quiet; `drop_to_client` drops the server's.
/// `c` observes the server's `/counter` at instant 0 and the registration completes.
fn register(c: &mut Endpoint, s: &mut Endpoint, ca: SocketAddr, sa: SocketAddr) -> RequestId {
    let id = c
        .observe(Instant::ZERO, sa, &Request::get("counter"))
        .unwrap();
    exchange(c, s, ca, sa, Instant::ZERO);
    id
}

fn exchange(c: &mut Endpoint, s: &mut Endpoint, ca: SocketAddr, sa: SocketAddr, now: Instant) {
    for _ in 0..8 {
        let mut moved = false;
        while let Some(t) = c.poll_transmit(now) {
            s.handle_datagram(now, ca, &t.contents);
            moved = true;
        }
        while let Some(t) = s.poll_transmit(now) {
            c.handle_datagram(now, sa, &t.contents);
            moved = true;
        }
        if !moved {
            break;
        }
    }
}

fn notifications(c: &mut Endpoint) -> Vec<(Option<u32>, String)> {
    std::iter::from_fn(|| c.poll_event())
        .filter_map(|e| match e {
            Event::Notification { sequence, body, .. } => {
                Some((sequence, String::from_utf8(body).unwrap()))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn registration_notifications_and_deregistration() {
    let (mut c, mut s, ca, sa) = endpoints();
    let t0 = Instant::from_millis(500);
    let id = c.observe(t0, sa, &Request::get("counter")).unwrap();
    let req = c.poll_transmit(t0).unwrap();
    s.handle_datagram(t0, ca, &req.contents);
    let ack = s.poll_transmit(t0).unwrap();
    let msg = Message::decode(&ack.contents).unwrap();
    assert_eq!(msg.mtype, MessageType::Ack);
    assert_eq!(msg.observe().unwrap(), Some(0));
    assert_eq!(msg.max_age_s().unwrap(), 1);
    assert_eq!(msg.payload, b"0");
    c.handle_datagram(t0, sa, &ack.contents);
    assert_eq!(s.observers(), 1);
    assert_eq!(s.poll_timeout(), Some(Instant::from_millis(1000)));
    // Three state changes: notifications numbered 1, 2, 3; the first is CON (the client's
    // address is confirmed once, RFC 7641 §7), the others NON.
    for k in 1..=3i64 {
        let now = Instant::from_millis(1000 * k);
        s.handle_timeout(now);
        let n = s.poll_transmit(now).unwrap();
        let m = Message::decode(&n.contents).unwrap();
        let want = if k == 1 {
            MessageType::Con
        } else {
            MessageType::Non
        };
        assert_eq!(m.mtype, want);
        c.handle_datagram(now, sa, &n.contents);
        while let Some(ack) = c.poll_transmit(now) {
            s.handle_datagram(now, ca, &ack.contents);
        }
    }
    assert_eq!(
        notifications(&mut c),
        vec![
            (Some(1), "1".to_owned()),
            (Some(2), "2".to_owned()),
            (Some(3), "3".to_owned())
        ]
    );
    // Deregistration: GET with Observe 1 and the same token.
    let now = Instant::from_millis(3500);
    c.cancel_observation(now, id, &Request::get("counter"))
        .unwrap();
    exchange(&mut c, &mut s, ca, sa, now);
    assert_eq!(s.observers(), 0);
    assert_eq!(c.observations(), 0);
    s.handle_timeout(Instant::from_millis(4000));
    assert!(s.poll_transmit(Instant::from_millis(4000)).is_none());
}

#[test]
fn reordered_notification_is_not_delivered() {
    let (mut c, mut s, ca, sa) = endpoints();
    let t0 = Instant::ZERO;
    let _ = c.observe(t0, sa, &Request::get("counter")).unwrap();
    exchange(&mut c, &mut s, ca, sa, t0);
    // The first notification (CON) goes through and is acknowledged.
    let t1 = Instant::from_millis(1000);
    s.handle_timeout(t1);
    exchange(&mut c, &mut s, ca, sa, t1);
    let _ = notifications(&mut c);
    let mut held = Vec::new();
    for k in 2..=3i64 {
        let now = Instant::from_millis(1000 * k);
        s.handle_timeout(now);
        held.push(s.poll_transmit(now).unwrap().contents);
    }
    let now = Instant::from_millis(3100);
    c.handle_datagram(now, sa, &held[1]);
    c.handle_datagram(now, sa, &held[0]);
    assert_eq!(notifications(&mut c), vec![(Some(3), "3".to_owned())]);
    // (The 128-s rule of §3.4 is unit-tested in observe::client; a copy of the same
    // datagram would be a duplicate here.)
}

#[test]
fn rst_to_a_notification_removes_the_observer() {
    let (mut c, mut s, ca, sa) = endpoints();
    let id = register(&mut c, &mut s, ca, sa);
    assert_eq!(s.observers(), 1);
    // The client forgets the observation without telling the server: the next
    // notification is answered by RST (§3.6).
    let _ = id;
    let mut fresh = endpoints().0;
    let now = Instant::from_millis(1000);
    s.handle_timeout(now);
    let n = s.poll_transmit(now).unwrap();
    fresh.handle_datagram(now, sa, &n.contents);
    let _ = &mut c;
    // A NON the client cannot match is ignored, not reset (RFC 7252 §4.3); reset it by hand.
    let m = Message::decode(&n.contents).unwrap();
    let rst = [0x70, 0x00, (m.message_id >> 8) as u8, m.message_id as u8];
    s.handle_datagram(now, ca, &rst);
    assert_eq!(s.observers(), 0);
    let gone = std::iter::from_fn(|| s.poll_event()).find_map(|e| match e {
        Event::ObserverRemoved { reason, .. } => Some(reason),
        _ => None,
    });
    assert_eq!(gone, Some(ObserverGone::Reset));
}

#[test]
fn a_con_notification_every_24_hours_and_timeout_removes() {
    let (mut c, mut s, ca, sa) = endpoints();
    let _ = register(&mut c, &mut s, ca, sa);
    // Jump a day: the next notification is CON; the client ACKs it.
    let day = Instant::ZERO + Duration::from_secs(24 * 3600);
    s.handle_timeout(day);
    let n = s.poll_transmit(day).unwrap();
    assert_eq!(
        Message::decode(&n.contents).unwrap().mtype,
        MessageType::Con
    );
    c.handle_datagram(day, sa, &n.contents);
    let ack = c.poll_transmit(day).unwrap();
    assert_eq!(
        Message::decode(&ack.contents).unwrap().mtype,
        MessageType::Ack
    );
    s.handle_datagram(day, ca, &ack.contents);
    // The next second is NON again.
    let t = day + Duration::from_secs(1);
    s.handle_timeout(t);
    let n = s.poll_transmit(t).unwrap();
    assert_eq!(
        Message::decode(&n.contents).unwrap().mtype,
        MessageType::Non
    );
    // Another day, and the CON is never acknowledged: at most one outstanding (newer states
    // replace it), and after MAX_RETRANSMIT the observer is gone.
    let mut now = t + Duration::from_secs(24 * 3600);
    let mut cons = 0;
    while s.observers() > 0 && now < t + Duration::from_secs(24 * 3600 + 120) {
        s.handle_timeout(now);
        while let Some(x) = s.poll_transmit(now) {
            assert_eq!(
                Message::decode(&x.contents).unwrap().mtype,
                MessageType::Con
            );
            cons += 1;
        }
        now = s
            .poll_timeout()
            .unwrap_or(now + Duration::from_secs(1))
            .max(now);
    }
    assert_eq!(s.observers(), 0);
    // The first copy and four retransmissions (2 + 4 + 8 + 16 + 32 s).
    assert_eq!(cons, 5);
}

#[test]
fn observers_are_bounded() {
    let (mut c, mut s, ca, sa) = endpoints();
    s.router_mut().max_observers(1);
    let _ = register(&mut c, &mut s, ca, sa);
    let other: SocketAddr = "198.18.0.2:40000".parse().unwrap();
    let mut c2 = endpoints().0;
    let _ = c2
        .observe(Instant::ZERO, sa, &Request::get("counter"))
        .unwrap();
    let req = c2.poll_transmit(Instant::ZERO).unwrap();
    s.handle_datagram(Instant::ZERO, other, &req.contents);
    let ack = s.poll_transmit(Instant::ZERO).unwrap();
    assert_eq!(
        Message::decode(&ack.contents).unwrap().observe().unwrap(),
        None
    );
    assert_eq!(s.observers(), 1);
}

#[test]
fn a_new_observer_after_all_left_gets_no_stale_notification() {
    let (mut c, mut s, ca, sa) = endpoints();
    let id = register(&mut c, &mut s, ca, sa);
    let t = Instant::from_millis(200);
    c.cancel_observation(t, id, &Request::get("counter"))
        .unwrap();
    exchange(&mut c, &mut s, ca, sa, t);
    assert_eq!(s.observers(), 0);
    // Registered again at 5.5 s: the next notification is due at 6 s, not at once.
    let t = Instant::from_millis(5_500);
    let _ = c.observe(t, sa, &Request::get("counter")).unwrap();
    exchange(&mut c, &mut s, ca, sa, t);
    assert_eq!(s.poll_timeout(), Some(Instant::from_millis(6_000)));
}

#[test]
fn a_plain_answer_ends_the_observation() {
    let (mut c, mut s, ca, sa) = endpoints();
    let _ = c
        .observe(Instant::ZERO, sa, &Request::get("data/10"))
        .unwrap();
    assert_eq!(c.observations(), 1);
    exchange(&mut c, &mut s, ca, sa, Instant::ZERO);
    // data/10 is not observable: 2.05 without Observe (RFC 7641 §3.1).
    assert_eq!(c.observations(), 0);
    assert_eq!(s.observers(), 0);
}

#[test]
fn one_outstanding_con_per_client_over_its_observations() {
    let (mut c, mut s, ca, sa) = endpoints();
    let _ = register(&mut c, &mut s, ca, sa);
    let _ = register(&mut c, &mut s, ca, sa);
    assert_eq!(s.observers(), 2);
    // A day later both are due a CON; only one may be outstanding to this client.
    let day = Instant::ZERO + Duration::from_secs(24 * 3600);
    s.handle_timeout(day);
    let types: Vec<MessageType> = std::iter::from_fn(|| s.poll_transmit(day))
        .map(|t| Message::decode(&t.contents).unwrap().mtype)
        .collect();
    assert_eq!(types, [MessageType::Con, MessageType::Non]);
}

#[test]
fn a_stale_observation_is_registered_again() {
    let (mut c, mut s, ca, sa) = endpoints();
    let t0 = Instant::from_millis(100);
    let id = c.observe(t0, sa, &Request::get("counter")).unwrap();
    exchange(&mut c, &mut s, ca, sa, t0);
    let _ = notifications(&mut c);
    // Max-Age 1 s (the next change at 1 s, rounded up) + 2 s of slack.
    assert_eq!(c.poll_timeout(), Some(Instant::from_millis(3_100)));
    // Every notification is lost until then.
    for k in 1..=3i64 {
        let now = Instant::from_millis(1000 * k);
        s.handle_timeout(now);
        while s.poll_transmit(now).is_some() {}
    }
    let t = Instant::from_millis(3_100);
    c.handle_timeout(t);
    let get = c.poll_transmit(t).unwrap();
    let m = Message::decode(&get.contents).unwrap();
    assert_eq!(m.observe().unwrap(), Some(0));
    s.handle_datagram(t, ca, &get.contents);
    assert_eq!(s.observers(), 1, "the same (client, token) again");
    let ack = s.poll_transmit(t).unwrap();
    c.handle_datagram(t, sa, &ack.contents);
    let events: Vec<Event> = std::iter::from_fn(|| c.poll_event()).collect();
    let delivered: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::Notification {
                request, sequence, ..
            } => Some((*request, *sequence)),
            _ => None,
        })
        .collect();
    assert_eq!(delivered, [(id, Some(3))]);
    assert!(!events
        .iter()
        .any(|e| matches!(e, Event::RequestCompleted { .. })));
    assert_eq!(c.observations(), 1);
}

#[test]
fn a_failed_reregistration_ends_the_observation() {
    let (mut c, mut s, ca, sa) = endpoints();
    let id = register(&mut c, &mut s, ca, sa);
    // The server is gone: run the client's timers until it gives up.
    let mut failed = None;
    for _ in 0..100 {
        let Some(t) = c.poll_timeout() else { break };
        c.handle_timeout(t);
        while c.poll_transmit(t).is_some() {}
        while let Some(e) = c.poll_event() {
            if let Event::RequestFailed { request, .. } = e {
                failed = Some(request);
            }
        }
    }
    assert_eq!(failed, Some(id));
    assert_eq!(c.observations(), 0);
}

#[test]
fn a_newer_state_replaces_the_outstanding_con() {
    let (mut c, mut s, ca, sa) = endpoints();
    let _ = register(&mut c, &mut s, ca, sa);
    let day = Instant::ZERO + Duration::from_secs(24 * 3600);
    s.handle_timeout(day);
    let first_bytes = s.poll_transmit(day).unwrap().contents;
    let first = Message::decode(&first_bytes).unwrap();
    assert_eq!(first.mtype, MessageType::Con);
    // The CON is lost; one second later the state changes: nothing new is sent (one CON
    // outstanding), and the retransmission at 2 s carries the newest state.
    let t1 = day + Duration::from_secs(1);
    s.handle_timeout(t1);
    assert!(s.poll_transmit(t1).is_none());
    let t2 = day + Duration::from_secs(2);
    assert_eq!(s.poll_timeout(), Some(t2));
    s.handle_timeout(t2);
    let out: Vec<_> = std::iter::from_fn(|| s.poll_transmit(t2)).collect();
    assert_eq!(out.len(), 1);
    let m = Message::decode(&out[0].contents).unwrap();
    assert_eq!(m.mtype, MessageType::Con);
    assert_eq!(
        m.observe().unwrap(),
        Some(first.observe().unwrap().unwrap() + 2)
    );
    assert_eq!(m.payload, b"86402");
    assert_ne!(m.message_id, first.message_id);
    // The client acknowledges it; no more CONs.
    c.handle_datagram(t2, sa, &out[0].contents);
    let ack = c.poll_transmit(t2).unwrap();
    s.handle_datagram(t2, ca, &ack.contents);
    let t3 = day + Duration::from_secs(3);
    s.handle_timeout(t3);
    let m = Message::decode(&s.poll_transmit(t3).unwrap().contents)
        .unwrap()
        .mtype;
    assert_eq!(m, MessageType::Non);
}

/// A server whose `counter` notifications follow `policy`, with the RTO algorithm `cc`
/// (random factor 1: timers undithered).
fn server_with(policy: coaplab_endpoint::observe::NotifyPolicy, cc: &str) -> Endpoint {
    let mut s = Settings::new();
    s.set("ack_random_factor", "1");
    let mut router = Router::new();
    router
        .counter("counter", Duration::from_secs(1))
        .notify_policy(policy);
    Endpoint::new(
        Config::default(),
        registry_factory(cc, &s, 2).unwrap(),
        router,
    )
    .unwrap()
}

/// The message types of the notifications `s` sends at `now` (the client takes none).
fn types_at(s: &mut Endpoint, now: Instant) -> Vec<MessageType> {
    s.handle_timeout(now);
    std::iter::from_fn(|| s.poll_transmit(now))
        .map(|t| Message::decode(&t.contents).unwrap().mtype)
        .collect()
}

#[test]
fn every_kth_notification_is_con_and_the_algorithm_times_it() {
    use coaplab_endpoint::observe::{NotifyPolicy, NotifyTimer};
    let (mut c, _, ca, sa) = endpoints();
    let mut s = server_with(
        NotifyPolicy {
            con_every: 3,
            timer: NotifyTimer::Controller,
        },
        "default",
    );
    let t0 = Instant::from_millis(500);
    c.observe(t0, sa, &Request::get("counter")).unwrap();
    exchange(&mut c, &mut s, ca, sa, t0);
    let _ = notifications(&mut c);
    // Notifications 1, 4, 7 are CON, each acknowledged at once; the rest NON.
    let (con, non) = (MessageType::Con, MessageType::Non);
    let mut seen = Vec::new();
    for k in 1..=7i64 {
        let now = Instant::from_millis(1000 * k);
        s.handle_timeout(now);
        exchange(&mut c, &mut s, ca, sa, now);
        seen.extend(
            std::iter::from_fn(|| s.poll_event()).filter_map(|e| match e {
                Event::NotificationSent { confirmable, .. } => {
                    Some(if confirmable { con } else { non })
                }
                _ => None,
            }),
        );
    }
    assert_eq!(seen, [con, non, non, con, non, non, con]);
    assert_eq!(notifications(&mut c).len(), 7);
    // Unanswered, notification 10 (CON) is retransmitted by the default algorithm's timer,
    // undithered: 2 s, then 4 s; meanwhile notifications 11.. replace it and are not sent.
    assert_eq!(types_at(&mut s, Instant::from_millis(8000)), [non]);
    assert_eq!(types_at(&mut s, Instant::from_millis(9000)), [non]);
    assert_eq!(types_at(&mut s, Instant::from_millis(10_000)), [con]);
    assert_eq!(types_at(&mut s, Instant::from_millis(11_000)), []);
    assert_eq!(s.poll_timeout(), Some(Instant::from_millis(12_000)));
    // Notification 10 left as a CON of its own; 11 only replaced its state (no datagram).
    let queued: Vec<_> = std::iter::from_fn(|| s.poll_event())
        .filter_map(|e| match e {
            Event::NotificationSent {
                sequence, replaced, ..
            } => Some((sequence, replaced)),
            _ => None,
        })
        .collect();
    assert_eq!(queued[queued.len() - 2..], [(10, false), (11, true)]);
    assert_eq!(types_at(&mut s, Instant::from_millis(12_000)), [con]);
    let re: Vec<_> = std::iter::from_fn(|| s.poll_event())
        .filter_map(|e| match e {
            Event::NotificationRetransmitted {
                sequence,
                retransmission,
                ..
            } => Some((sequence, retransmission)),
            _ => None,
        })
        .collect();
    // The retransmission carries the newest state (12), its first retransmission.
    assert_eq!(re, [(12, 1)]);
    for k in 13..=15 {
        assert_eq!(types_at(&mut s, Instant::from_millis(1000 * k)), []);
    }
    assert_eq!(types_at(&mut s, Instant::from_millis(16_000)), [con]);
}
