//! A two-endpoint virtual-time harness (quinn-proto's `Pair` in spirit): a client and a
//! server joined by a tiny network with a fixed one-way delay and scripted per-packet loss,
//! advanced to the next wake-up, bounded against livelock.

#![allow(unreachable_pub)]

use std::net::SocketAddr;

use coaplab_cc::rng::ConstantRandom;
use coaplab_cc::time::{Duration, Instant};
use coaplab_cc::{registry, Settings};
use coaplab_endpoint::{
    AnswerKind, Config, Controller, ControllerFactory, Endpoint, Event, Request, Resource, Router,
    Transmit,
};

pub const CLIENT: &str = "198.18.0.1:40000";
pub const SERVER: &str = "198.18.1.1:5683";

/// The experiments' server: path "f" answers GET with 102,400 B and POST with 53 B
/// (docs/experiments.md §4).
pub fn router() -> Router {
    let mut r = Router::new();
    r.route("f", Resource::experiment(102_400, 53));
    r
}

/// The 60-B CON POST of the short-lived workloads (docs/experiments.md §4.2).
pub fn post() -> Request {
    Request::post("f", vec![0; 51])
}

/// The default config with `block`-byte blocks (RFC 7959).
pub fn block_config(block: usize) -> Config {
    Config {
        block_size_bytes: block,
        ..Config::default()
    }
}

/// Every answered exchange of the client: transmissions, RTT, answered copy, kind, time.
pub fn answers(pair: &Pair) -> Vec<(u32, Duration, Option<u32>, AnswerKind, Instant)> {
    pair.client(|e| match e {
        Event::ExchangeCompleted {
            transmissions,
            rtt,
            answered,
            kind,
            at,
            ..
        } => Some((*transmissions, *rtt, *answered, *kind, *at)),
        _ => None,
    })
}

pub fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

pub fn ms(v: i64) -> Instant {
    Instant::from_millis(v)
}

pub fn us(v: i64) -> Instant {
    Instant::from_micros(v)
}

/// A factory for registry algorithm `name` with `settings`, every dithering draw fixed at `u`.
pub fn factory(name: &str, settings: &[&str], u: f64) -> ControllerFactory {
    let s = Settings::parse(settings.iter().copied()).unwrap();
    let (info, params) = registry::resolve(name, &s).unwrap();
    let mut probe = coaplab_endpoint::registry_factory(name, &s, 0).unwrap();
    let marking = probe(addr(SERVER), Instant::ZERO).marking;
    Box::new(move |_, now| Controller {
        algorithm: (info.build)(&params, now),
        rng: Box::new(ConstantRandom(u)),
        marking,
    })
}

/// One datagram on the wire.
#[derive(Debug, Clone)]
pub struct Wire {
    /// Send time.
    pub at: Instant,
    /// Client to server.
    pub up: bool,
    /// The CoAP bytes.
    pub bytes: Vec<u8>,
    /// Dropped by the script.
    pub lost: bool,
}

pub struct Pair {
    pub client: Endpoint,
    pub server: Endpoint,
    pub now: Instant,
    /// One-way delay, both directions.
    pub delay: Duration,
    /// Indices (0-based, per direction, in send order) of packets to drop.
    pub drop_up: Vec<usize>,
    pub drop_down: Vec<usize>,
    pub wire: Vec<Wire>,
    pub client_events: Vec<(Instant, Event)>,
    pub server_events: Vec<(Instant, Event)>,
    in_flight: Vec<(Instant, u64, bool, Vec<u8>)>,
    seq: u64,
    sent_up: usize,
    sent_down: usize,
}

impl Pair {
    pub fn new(client: Endpoint, server: Endpoint, delay: Duration) -> Pair {
        Pair {
            client,
            server,
            now: Instant::ZERO,
            delay,
            drop_up: Vec::new(),
            drop_down: Vec::new(),
            wire: Vec::new(),
            client_events: Vec::new(),
            server_events: Vec::new(),
            in_flight: Vec::new(),
            seq: 0,
            sent_up: 0,
            sent_down: 0,
        }
    }

    /// Client with `client_config` and algorithm `name`; server with `router` and the
    /// default algorithm (u = 0) for its separate responses; 100 ms each way.
    pub fn with(
        client_config: Config,
        client_factory: ControllerFactory,
        server_config: Config,
        router: Router,
    ) -> Pair {
        let client = Endpoint::new(client_config, client_factory, Router::new()).unwrap();
        let server = Endpoint::new(server_config, factory("default", &[], 0.0), router).unwrap();
        Pair::new(client, server, Duration::from_millis(100))
    }

    /// Default configs on both sides, the experiments' [`router`] on the server, and the
    /// client on `client_factory`.
    pub fn with_factory(client_factory: ControllerFactory) -> Pair {
        Pair::with(
            Config::default(),
            client_factory,
            Config::default(),
            router(),
        )
    }

    /// Both sides with `block`-byte blocks, the client on the default algorithm (u = 0), the
    /// server with no routes but its built-in ones (`data/N`, `echo`).
    pub fn blockwise(block: usize) -> Pair {
        Pair::with(
            block_config(block),
            factory("default", &[], 0.0),
            block_config(block),
            Router::new(),
        )
    }

    /// Client with the default config and the default algorithm (u = 0); server with
    /// `server_config` and `router`.
    pub fn default_client(server_config: Config, router: Router) -> Pair {
        Pair::with(
            Config::default(),
            factory("default", &[], 0.0),
            server_config,
            router,
        )
    }

    /// Collects transmits and events of both endpoints at `now`.
    pub fn drain(&mut self) {
        while let Some(t) = self.client.poll_transmit(self.now) {
            self.send(true, t);
        }
        while let Some(t) = self.server.poll_transmit(self.now) {
            self.send(false, t);
        }
        while let Some(e) = self.client.poll_event() {
            self.client_events.push((self.now, e));
        }
        while let Some(e) = self.server.poll_event() {
            self.server_events.push((self.now, e));
        }
    }

    fn send(&mut self, up: bool, t: Transmit) {
        let index = if up {
            self.sent_up += 1;
            self.sent_up - 1
        } else {
            self.sent_down += 1;
            self.sent_down - 1
        };
        let lost = if up {
            self.drop_up.contains(&index)
        } else {
            self.drop_down.contains(&index)
        };
        self.wire.push(Wire {
            at: self.now,
            up,
            bytes: t.contents.clone(),
            lost,
        });
        if !lost {
            self.seq += 1;
            self.in_flight
                .push((self.now + self.delay, self.seq, up, t.contents));
        }
    }

    /// Advances to the next wake-up (delivery or timer); false when idle.
    pub fn step(&mut self) -> bool {
        self.drain();
        let next_delivery = self.in_flight.iter().map(|p| p.0).min();
        let next = [
            next_delivery,
            self.client.poll_timeout(),
            self.server.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min();
        let Some(t) = next else {
            return false;
        };
        assert!(t >= self.now, "time went backwards: {t:?} < {:?}", self.now);
        self.now = t;
        // Datagrams first (an ACK beats a timer of the same instant), in send order.
        while let Some(i) = self
            .in_flight
            .iter()
            .enumerate()
            .filter(|(_, p)| p.0 == t)
            .min_by_key(|(_, p)| p.1)
            .map(|(i, _)| i)
        {
            let (_, _, up, bytes) = self.in_flight.remove(i);
            let (endpoint, from) = if up {
                (&mut self.server, addr(CLIENT))
            } else {
                (&mut self.client, addr(SERVER))
            };
            let before = endpoint.poll_timeout();
            endpoint.handle_datagram(t, from, &bytes);
            assert_timeout_kept(endpoint, before);
            self.drain();
        }
        self.client.handle_timeout(t);
        self.server.handle_timeout(t);
        self.drain();
        true
    }

    /// Runs until idle; panics after `max_steps` (livelock guard).
    pub fn drive(&mut self, max_steps: usize) {
        for _ in 0..max_steps {
            if !self.step() {
                return;
            }
        }
        panic!("no quiescence after {max_steps} steps at {:?}", self.now);
    }

    /// Runs until `until` (inclusive) or idle.
    pub fn drive_until(&mut self, until: Instant) {
        for _ in 0..1_000_000 {
            self.drain();
            let next = [
                self.in_flight.iter().map(|p| p.0).min(),
                self.client.poll_timeout(),
                self.server.poll_timeout(),
            ]
            .into_iter()
            .flatten()
            .min();
            match next {
                Some(t) if t <= until => {
                    self.step();
                }
                _ => return,
            }
        }
        panic!("livelock");
    }

    /// Send times of client → server packets.
    pub fn up_times(&self) -> Vec<Instant> {
        self.wire.iter().filter(|w| w.up).map(|w| w.at).collect()
    }

    /// Send times of server → client packets.
    pub fn down_times(&self) -> Vec<Instant> {
        self.wire.iter().filter(|w| !w.up).map(|w| w.at).collect()
    }

    /// The bytes of every client → server packet, in send order.
    pub fn up_bytes(&self) -> Vec<&[u8]> {
        self.wire
            .iter()
            .filter(|w| w.up)
            .map(|w| &w.bytes[..])
            .collect()
    }

    /// The bytes of every server → client packet, in send order.
    pub fn down_bytes(&self) -> Vec<&[u8]> {
        self.wire
            .iter()
            .filter(|w| !w.up)
            .map(|w| &w.bytes[..])
            .collect()
    }

    /// The armed values of every client timer that expired, in order.
    pub fn expired_timers(&self) -> Vec<Duration> {
        self.client_events
            .iter()
            .filter_map(|(_, e)| match e {
                Event::TimerExpired { armed, .. } => Some(*armed),
                _ => None,
            })
            .collect()
    }

    /// Client events matching `f`.
    pub fn client<T>(&self, f: impl Fn(&Event) -> Option<T>) -> Vec<T> {
        self.client_events
            .iter()
            .filter_map(|(_, e)| f(e))
            .collect()
    }

    /// Server events matching `f`.
    pub fn server<T>(&self, f: impl Fn(&Event) -> Option<T>) -> Vec<T> {
        self.server_events
            .iter()
            .filter_map(|(_, e)| f(e))
            .collect()
    }
}

/// Every input of every test driven by a [`Pair`]: an endpoint that says its deadline cannot
/// have changed ([`Endpoint::timeout_may_have_changed`]) still has the one it had before.
pub fn assert_timeout_kept(endpoint: &Endpoint, before: Option<Instant>) {
    if !endpoint.timeout_may_have_changed() {
        assert_eq!(
            endpoint.poll_timeout(),
            before,
            "the deadline moved unannounced"
        );
    }
}

/// A CON PUT /echo (token 7, 1 B) carrying Block1 `num` with `more`, block size 2^(szx+4),
/// and `payload`: one block of an upload, built by hand so tests can send any block.
pub fn block1_put(mid: u16, num: u32, more: bool, szx: u8, payload: &[u8]) -> Vec<u8> {
    use coaplab_wire::option::number;
    use coaplab_wire::{Block, Code, MessageType, MessageWriter, Token};
    let mut out = vec![0; 64 + payload.len()];
    let mut w = MessageWriter::new(
        &mut out,
        MessageType::Con,
        Code::PUT,
        mid,
        Token::from_u64(7, 1),
    )
    .unwrap();
    w.option(number::URI_PATH, b"echo").unwrap();
    w.option_uint(number::BLOCK1, Block { num, more, szx }.to_uint())
        .unwrap();
    let n = w.payload(payload).unwrap();
    out.truncate(n);
    out
}
