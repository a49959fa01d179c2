//! `coaplab get --observe coap+tcp://…`: Observe over TCP (RFC 7641 with RFC 8323 §7). Like
//! the UDP client (`observe.rs`, same output, same `--count`/`--duration`): registers with a
//! GET carrying Observe 0, prints the answer's payload and every notification's on a line of
//! its own (`-v`: the Observe number on stderr first), then deregisters with a GET carrying
//! Observe 1 (no RST exists over TCP), waits at most [`CANCEL_WAIT`] for its answer and
//! closes the connection.
//!
//! Exit codes: 0 when the observation ran to `--count`/`--duration` or the server ended it
//! with a plain 2.xx (no Observe); 1 on an error response; 2 on a request that cannot be
//! encoded; 3 when the registration is not answered within `--timeout` (default 60 s); 4 when
//! the connection cannot be made, is aborted, or closes while observing (an observation lives
//! only as long as its connection, RFC 8323 §7).

use coaplab_emu::{TcpDriver, TcpEvent};
use coaplab_endpoint::tcp::{SessionEvent, Side};
use coaplab_endpoint::Router;

use super::net;
use super::observe::{notification, registration_answer, Next, Until, CANCEL_WAIT};
use super::tcp::{client_config, trace, Call};

fn fail(code: u8, msg: impl std::fmt::Display) -> u8 {
    eprintln!("coaplab: {msg}");
    code
}

/// Observes `call.request` at `call.addr` over TCP until `until`; returns the exit code.
pub(crate) async fn observe(call: &Call, until: Until) -> u8 {
    let cfg = client_config(call.seed, call.max_body_bytes);
    let mut d = match TcpDriver::connect(call.addr, cfg, Router::new()).await {
        Ok(d) => d,
        Err(e) => return fail(net::EXIT_PROTOCOL, format!("connect {}: {e}", call.addr)),
    };
    d.log_writes(call.verbose);
    let now = d.now();
    let id = match d.session_mut().observe(now, &call.request) {
        Ok(id) => id,
        Err(e) => {
            d.close().await;
            return fail(net::EXIT_BAD_ARGS, e);
        }
    };
    let registered_by = tokio::time::Instant::now() + call.timeout;
    let end = until.duration.map(|t| tokio::time::Instant::now() + t);
    let mut seen = 0u64;
    let mut answered = false;
    let mut code = net::EXIT_OK;
    loop {
        if until.count.is_some_and(|n| seen >= n) {
            break;
        }
        let deadline = match (answered, end) {
            (false, Some(e)) => Some(e.min(registered_by)),
            (false, None) => Some(registered_by),
            (true, e) => e,
        };
        // A timeout cancels `next_event` while it waits to read: our only writes are the CSM
        // and one GET, written at once into an empty socket buffer, so none is cut short.
        let event = match deadline {
            Some(at) => match tokio::time::timeout_at(at, d.next_event()).await {
                Ok(e) => e,
                Err(_) if answered || end.is_some_and(|e| e <= at) => break,
                Err(_) => {
                    return fail(
                        net::EXIT_TIMEOUT,
                        format!("timeout: no response within {:?}", call.timeout),
                    )
                }
            },
            None => d.next_event().await,
        };
        if call.verbose {
            trace(&event);
        }
        let e = match event {
            TcpEvent::Session(e) => e,
            TcpEvent::Ended => {
                return fail(
                    net::EXIT_PROTOCOL,
                    "the connection ended: the observation is over",
                )
            }
            _ => continue,
        };
        match e {
            SessionEvent::RequestCompleted {
                request,
                code: rc,
                body,
                options,
                ..
            } if request == id => {
                answered = true;
                seen += 1;
                if let Next::Exit(c) | Next::Deregister(c) =
                    registration_answer(call.verbose, until, rc, &options, &body)
                {
                    d.close().await;
                    return c;
                }
            }
            SessionEvent::Notification {
                request,
                code: rc,
                sequence,
                body,
                ..
            } if request == id => {
                seen += 1;
                match notification(call.verbose, rc, sequence, &body) {
                    Next::Go => {}
                    Next::Deregister(c) => {
                        code = c;
                        break;
                    }
                    Next::Exit(c) => {
                        d.close().await;
                        return c;
                    }
                }
            }
            SessionEvent::Aborted { by, diagnostic, .. } => {
                let who = if by == Side::Local { "we" } else { "the peer" };
                d.close().await;
                return fail(
                    net::EXIT_PROTOCOL,
                    format!("{who} aborted the session: {diagnostic}"),
                );
            }
            SessionEvent::Closed { .. } => {
                return fail(
                    net::EXIT_PROTOCOL,
                    "the server closed the connection: the observation is over",
                );
            }
            SessionEvent::ReleaseReceived { .. } => {
                d.close().await;
                return fail(
                    net::EXIT_PROTOCOL,
                    "the server released the session: the observation is over",
                );
            }
            _ => {}
        }
    }
    // RFC 7641 §3.6: deregister actively, so the server stops at once.
    let now = d.now();
    if let Ok(cancel) = d.session_mut().cancel_observation(now, id, &call.request) {
        let wait = async {
            loop {
                match d.next_event().await {
                    TcpEvent::Session(
                        SessionEvent::RequestCompleted { request, .. }
                        | SessionEvent::RequestFailed { request, .. },
                    ) if request == cancel => return,
                    TcpEvent::Ended => return,
                    _ => {}
                }
            }
        };
        let _ = tokio::time::timeout(CANCEL_WAIT, wait).await;
    }
    d.close().await;
    code
}
