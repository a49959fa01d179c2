//! One timed download across the link emulator, in process: hyper's server ([`serve`]) on a
//! listener in the server namespace and hyper's client ([`get`]) in the client namespace, both
//! on one tokio runtime whose thread has joined the client namespace (a socket belongs to the
//! namespace it was created in, so the listener is created by a thread in the server
//! namespace first). The same code as `coaplab http-server` / `coaplab http-get` in two
//! processes, without starting them: `coaplab run --mode emulated` uses it for the HTTP cells.
//!
//! With TCP Fast Open the measured fetch follows an untimed warm-up fetch of the same URL
//! (its SYN asks for the cookie, docs/experiments.md §8e) and a gap in which that connection
//! closes, as `coaplab http-get --tfo` does.

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::os::fd::AsFd;
use std::sync::Arc;
use std::time::Duration;

use super::client::{get, Fetched, GetConfig, GetError};
use super::server::{serve, ServerConfig, ServerCounters};
use super::tfo::{self, DEFAULT_TFO_QUEUE};
use super::Uri;
use crate::emulator::netns::Namespace;
use crate::emulator::tcp_sockets::in_namespace;

/// The gap after the warm-up fetch (`coaplab http-get --warm-up-gap`'s default): its
/// connection's FIN exchange ends well within it on every link of docs/experiments.md §8e.
pub const DEFAULT_WARM_UP_GAP: Duration = Duration::from_millis(500);

/// What to fetch, and how.
#[derive(Debug, Clone)]
pub struct Across {
    /// The server's address in the server namespace (the listener binds it).
    pub server_addr: Ipv4Addr,
    /// The server's port (80 keeps `:PORT` out of the Host header and `:authority`).
    pub port: u16,
    /// The path fetched (`/data/N`).
    pub path: String,
    /// The client's choices (`tfo` also puts `TCP_FASTOPEN` on the listener and makes a
    /// warm-up fetch first).
    pub get: GetConfig,
    /// The server's choices.
    pub server: ServerConfig,
    /// The pause between the warm-up fetch and the measured one.
    pub warm_up_gap: Duration,
    /// Longest time for everything (warm-up included); then [`io::ErrorKind::TimedOut`].
    pub timeout: Duration,
}

fn get_error(e: GetError) -> io::Error {
    match e {
        GetError::Connect(e) => e,
        other => io::Error::other(other.to_string()),
    }
}

/// Serves in `server_ns` and fetches from `client_ns` as `what` says; blocks until the
/// measured fetch is done (or failed, or timed out). The server stops when this returns.
pub fn download_across(
    client_ns: &Namespace,
    server_ns: &Namespace,
    what: Across,
) -> io::Result<Fetched> {
    let addr = SocketAddr::new(IpAddr::V4(what.server_addr), what.port);
    let tfo = what.get.tfo;
    let listener = in_namespace(server_ns, move || {
        let listener = std::net::TcpListener::bind(addr)?;
        if tfo {
            tfo::set_listener_fastopen(listener.as_fd(), DEFAULT_TFO_QUEUE)?;
        }
        listener.set_nonblocking(true)?;
        Ok(listener)
    })?;
    let uri: Uri = format!("http://{}{}", authority(addr), what.path)
        .parse()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("{e}")))?;
    in_namespace(client_ns, move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener)?;
            let counters = Arc::new(ServerCounters::default());
            let server = tokio::spawn(serve(listener, what.server, counters));
            let fetches = async {
                if tfo {
                    // Untimed: gets the cookie; its connection closes during the gap.
                    get(addr, &uri, what.get).await.map_err(get_error)?;
                    tokio::time::sleep(what.warm_up_gap).await;
                }
                get(addr, &uri, what.get).await.map_err(get_error)
            };
            let outcome = tokio::time::timeout(what.timeout, fetches).await;
            server.abort();
            outcome.unwrap_or_else(|_| {
                Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("the download took longer than {:?}", what.timeout),
                ))
            })
        })
    })
}

/// `HOST` or `HOST:PORT` (port 80 left out, as a browser writes Host).
fn authority(addr: SocketAddr) -> String {
    if addr.port() == 80 {
        addr.ip().to_string()
    } else {
        addr.to_string()
    }
}
