//! `coaplab get --observe URI`: registers as an observer (RFC 7641, GET with Observe 0) over
//! UDP and prints each notification's payload on a line of its own (with `-v`, its Observe
//! sequence number first), until `--count` notifications (the registration's response
//! counts as the first) or `--duration` have passed; then deregisters with a GET carrying
//! Observe 1 (waiting at most [`CANCEL_WAIT`] for its answer) and exits 0.

use std::io::Write;
use std::net::SocketAddr;

use coaplab_emu::UdpDriver;
use coaplab_endpoint::{Event, FailReason, Request};
use coaplab_wire::ReadOptions;

use super::net;

/// How long the deregistration's answer is awaited before exiting anyway.
pub(crate) const CANCEL_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// When to stop observing.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Until {
    /// After this many notifications (the registration's response included).
    pub(crate) count: Option<u64>,
    /// After this long.
    pub(crate) duration: Option<std::time::Duration>,
}

/// One payload on stdout (with `-v`, its Observe number on stderr first).
pub(crate) fn print_line(verbose: bool, sequence: Option<u32>, body: &[u8]) {
    let mut out = std::io::stdout().lock();
    if verbose {
        match sequence {
            Some(s) => eprintln!("observe={s}"),
            None => eprintln!("observe=none (observation ended)"),
        }
    }
    let _ = out
        .write_all(body)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
}

/// What an observing client does after printing a payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    /// Wait for the next notification.
    Go,
    /// Stop observing (deregister), then exit with this code.
    Deregister(u8),
    /// Exit now with this code (the observation is over).
    Exit(u8),
}

impl Until {
    /// Whether more than the registration's answer was asked for (`--count 1` asks for it
    /// alone).
    pub(crate) fn wants_notifications(&self) -> bool {
        self.count != Some(1)
    }
}

/// The registration's answer (`code`, `options`, `body`) arrived: printed (`-v`: the code and
/// every option first); an error code or an answer without Observe ends it. Without Observe
/// we are not registered (RFC 7641 §4.1: the resource is not observable, or the server would
/// not add us, e.g. its observer table is full): when `until` wants notifications, that is a
/// failure, said on stderr, exit 4; with `--count 1` the one value asked for is there, exit 0.
pub(crate) fn registration_answer(
    verbose: bool,
    until: Until,
    code: coaplab_wire::Code,
    options: &coaplab_wire::OptionList,
    body: &[u8],
) -> Next {
    let sequence = options.observe().ok().flatten();
    if verbose {
        eprintln!("{}", super::coap_options::describe(code, options));
    }
    print_line(verbose, sequence, body);
    if code.class() != 2 {
        eprintln!("coaplab: {code:?}");
        return Next::Exit(net::EXIT_ERROR_RESPONSE);
    }
    if sequence.is_none() {
        if !until.wants_notifications() {
            return Next::Exit(net::EXIT_OK);
        }
        eprintln!(
            "coaplab: not registered as an observer: the server answered without Observe \
             (RFC 7641 §4.1: the resource is not observable, or the server does not take \
             more observers, e.g. its observer table is full); no notification will come"
        );
        return Next::Exit(net::EXIT_PROTOCOL);
    }
    Next::Go
}

/// A notification arrived: printed; an error code stops the observation (exit 1), one
/// without Observe ends it (RFC 7641 §3.2, exit 0).
pub(crate) fn notification(
    verbose: bool,
    code: coaplab_wire::Code,
    sequence: Option<u32>,
    body: &[u8],
) -> Next {
    print_line(verbose, sequence, body);
    if code.class() != 2 {
        eprintln!("coaplab: {code:?}");
        return Next::Deregister(net::EXIT_ERROR_RESPONSE);
    }
    if sequence.is_none() {
        return Next::Exit(net::EXIT_OK);
    }
    Next::Go
}

/// Observes `req` at `addr` through `driver`; returns the exit code.
pub(crate) async fn observe(
    driver: &mut UdpDriver,
    addr: SocketAddr,
    req: &Request,
    until: Until,
    verbose: bool,
) -> u8 {
    let now = driver.now();
    let Some(id) = driver.endpoint_mut().observe(now, addr, req) else {
        eprintln!("coaplab: too many observations");
        return net::EXIT_PROTOCOL;
    };
    let deadline = until.duration.map(|d| tokio::time::Instant::now() + d);
    let mut seen = 0u64;
    let mut code = net::EXIT_OK;
    loop {
        if until.count.is_some_and(|n| seen >= n) {
            break;
        }
        let next = driver.try_next_event();
        let event = match deadline {
            Some(d) => match tokio::time::timeout_at(d, next).await {
                Ok(e) => e,
                Err(_) => break,
            },
            None => next.await,
        };
        let event = match event {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                eprintln!("coaplab: connection refused: nothing listens on {addr}");
                return net::EXIT_PROTOCOL;
            }
            Err(e) => {
                eprintln!("coaplab: {addr}: {e}");
                return net::EXIT_PROTOCOL;
            }
        };
        match event {
            Event::RequestCompleted {
                request,
                code: rc,
                body,
                options,
                ..
            } if request == id => {
                seen += 1;
                if let Next::Exit(c) | Next::Deregister(c) =
                    registration_answer(verbose, until, rc, &options, &body)
                {
                    return c;
                }
            }
            Event::RequestFailed {
                request, reason, ..
            } if request == id => {
                eprintln!("coaplab: registration failed ({reason:?})");
                return match reason {
                    FailReason::GiveUp | FailReason::ResponseTimeout => net::EXIT_TIMEOUT,
                    _ => net::EXIT_PROTOCOL,
                };
            }
            Event::Notification {
                request,
                code: rc,
                sequence,
                body,
                ..
            } if request == id => {
                seen += 1;
                match notification(verbose, rc, sequence, &body) {
                    Next::Go => {}
                    Next::Deregister(c) => {
                        code = c;
                        break;
                    }
                    Next::Exit(c) => return c,
                }
            }
            _ => {}
        }
    }
    // §3.6: deregister actively, so the server stops at once.
    let now = driver.now();
    let Some(cancel) = driver.endpoint_mut().cancel_observation(now, id, req) else {
        return code;
    };
    let wait = async {
        loop {
            match driver.try_next_event().await {
                Ok(Event::RequestCompleted { request, .. })
                | Ok(Event::RequestFailed { request, .. })
                    if request == cancel =>
                {
                    return;
                }
                Ok(_) => {}
                Err(_) => return,
            }
        }
    };
    let _ = tokio::time::timeout(CANCEL_WAIT, wait).await;
    code
}
