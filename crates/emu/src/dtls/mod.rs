//! DTLS 1.2 (RFC 6347) under the UDP driver, for `coaps://` (RFC 7252 §9): the endpoint sends
//! and receives plaintext datagrams as over plain UDP; this layer turns each into one DTLS
//! record and back. The cryptography and the handshake state machine are OpenSSL's (through
//! the `openssl` crate, the library libcoap's `-openssl` programs use); this module only
//! keeps sessions, moves datagrams and time, and bounds state.
//!
//! - [`DtlsConfig`]: credentials (pre-shared key or certificates) and limits.
//! - [`DtlsLayer`]: a client (one session with one server, started at once) or a server (one
//!   session per peer address, at most [`DtlsConfig::max_sessions`]).
//!
//! OpenSSL retransmits a lost handshake flight by its own timer (1 s, doubling), checked when
//! it next reads; the layer gives it that chance every [`HANDSHAKE_TICK_MS`] while a
//! handshake runs ([`DtlsLayer::poll_timeout`]).

mod config;
pub mod hello;
mod pipe;
mod session;

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;

use coaplab_base::time::{Duration, Instant};

use config::Context;
pub use config::{
    Credentials, DtlsConfig, DtlsSetupError, CERT_CIPHERS, DEFAULT_MAX_SESSIONS_PER_SOURCE,
    DTLS_MTU_BYTES, PSK_CIPHERS, PSK_CLIENT_CIPHERS,
};
use hello::CookieSecrets;
use session::{Progress, Session};

/// While a handshake runs, how often OpenSSL is let check its retransmission timer.
pub const HANDSHAKE_TICK_MS: i64 = 50;

/// How often established sessions are checked for the idle timeout.
const IDLE_SWEEP_MS: i64 = 1000;

/// What the layer counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DtlsStats {
    /// Handshakes completed.
    pub handshakes_completed: u64,
    /// Handshakes that failed (bad key or certificate, an alert, a protocol error).
    pub handshakes_failed: u64,
    /// Handshakes not completed within [`DtlsConfig::handshake_timeout`].
    pub handshakes_timed_out: u64,
    /// Server: HelloVerifyRequests sent (RFC 6347 §4.2.1), statelessly: one per ClientHello
    /// without a valid cookie.
    pub hello_verifies_sent: u64,
    /// Server: ClientHellos whose cookie was wrong or expired (answered with a fresh
    /// HelloVerifyRequest, as one without a cookie).
    pub cookies_invalid: u64,
    /// Server: epoch-0 handshake records from a peer without a session that are not a
    /// ClientHello we can answer (malformed, a later fragment, a message_seq above 1), or a
    /// valid cookie in a ClientHello that cannot follow a HelloVerifyRequest. Dropped.
    pub hellos_malformed: u64,
    /// Server: half-open sessions evicted for a new verified peer (the table, or the
    /// peer's address's share of it, was full).
    pub handshakes_evicted: u64,
    /// Server: established sessions evicted, least recently used first, for a new verified
    /// peer; each was sent close_notify.
    pub sessions_evicted: u64,
    /// Server: established sessions replaced by a new handshake from the same address and
    /// port (a client that restarted, RFC 6347 §4.2.8).
    pub sessions_replaced: u64,
    /// Server: established sessions closed after [`DtlsConfig::idle_timeout`] of silence.
    pub sessions_idle_closed: u64,
    /// Established sessions the peer ended (close_notify or a fatal alert).
    pub sessions_closed_by_peer: u64,
    /// Datagrams dropped: from a peer without a session and not a handshake record of
    /// epoch 0.
    pub datagrams_without_session: u64,
    /// Plaintext datagrams dropped: no established session to the destination (client: also
    /// past [`DtlsConfig::max_queued_datagrams`] during the handshake).
    pub sends_without_session: u64,
    /// Datagrams received while a handshake ran (the handshake's cost).
    pub handshake_datagrams_in: u64,
    /// Bytes (UDP payload) of [`DtlsStats::handshake_datagrams_in`].
    pub handshake_bytes_in: u64,
    /// Datagrams sent while a handshake ran.
    pub handshake_datagrams_out: u64,
    /// Bytes (UDP payload) of [`DtlsStats::handshake_datagrams_out`].
    pub handshake_bytes_out: u64,
}

/// A client's handshake, as [`DtlsLayer::client_state`] reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientState {
    /// Still running.
    Handshaking,
    /// Done: the cipher suite and how long it took.
    Established {
        /// OpenSSL's name of the negotiated suite, e.g. `PSK-AES128-CCM8`.
        cipher: String,
        /// From the first ClientHello to the Finished.
        took: Duration,
    },
    /// Failed (an alert, a bad key or certificate) or closed later by the server.
    Failed(String),
    /// No completed handshake within [`DtlsConfig::handshake_timeout`].
    TimedOut,
}

/// One session and its times.
#[derive(Debug)]
struct Entry {
    session: Session,
    started: Instant,
    last_rx: Instant,
    /// The handshake completed (so a later close is the peer's, not a failed handshake).
    was_established: bool,
    /// The ClientHello's random (server; zeros for a client): a ClientHello with another one
    /// from the same address starts a new handshake.
    random: [u8; 32],
}

#[derive(Debug)]
enum Role {
    Client {
        peer: SocketAddr,
        entry: Entry,
        /// Plaintext sent before the handshake completed.
        queued: Vec<Vec<u8>>,
        state: ClientState,
    },
    Server {
        sessions: HashMap<SocketAddr, Entry>,
        secrets: CookieSecrets,
    },
}

/// DTLS under a UDP socket: [`DtlsLayer::handle_datagram`] with what the socket received
/// (plaintext comes out), [`DtlsLayer::seal`] with what the endpoint sends, then
/// [`DtlsLayer::poll_transmit`] for what to put on the socket; [`DtlsLayer::handle_timeout`]
/// at [`DtlsLayer::poll_timeout`]. Time is the driver's endpoint time, monotonic.
#[derive(Debug)]
pub struct DtlsLayer {
    ctx: Context,
    config: DtlsConfig,
    role: Role,
    stats: DtlsStats,
    out: VecDeque<(SocketAddr, Vec<u8>)>,
    next_sweep: Option<Instant>,
    scratch: Vec<u8>,
    plaintext: Vec<Vec<u8>>,
}

impl DtlsLayer {
    /// A server: sessions are created by peers' ClientHellos.
    pub fn server(config: DtlsConfig) -> Result<DtlsLayer, DtlsSetupError> {
        let ctx = config::context(&config, true)?;
        let secrets = CookieSecrets::new(Instant::ZERO, duration(config.cookie_lifetime));
        Ok(DtlsLayer::new(
            ctx,
            config,
            Role::Server {
                sessions: HashMap::new(),
                secrets,
            },
        ))
    }

    /// A client of `peer`; the ClientHello is queued at once (time `now`).
    pub fn client(
        config: DtlsConfig,
        peer: SocketAddr,
        now: Instant,
    ) -> Result<DtlsLayer, DtlsSetupError> {
        let ctx = config::context(&config, false)?;
        let session = Session::connect(&ctx).map_err(DtlsSetupError::Handshake)?;
        let entry = Entry {
            session,
            started: now,
            last_rx: now,
            was_established: false,
            random: [0; 32],
        };
        let mut layer = DtlsLayer::new(
            ctx,
            config,
            Role::Client {
                peer,
                entry,
                queued: Vec::new(),
                state: ClientState::Handshaking,
            },
        );
        layer.next_sweep = Some(now + Duration::from_millis(HANDSHAKE_TICK_MS));
        layer.collect(peer);
        Ok(layer)
    }

    fn new(ctx: Context, config: DtlsConfig, role: Role) -> DtlsLayer {
        DtlsLayer {
            ctx,
            config,
            role,
            stats: DtlsStats::default(),
            out: VecDeque::new(),
            next_sweep: None,
            scratch: vec![0; crate::datagram::MAX_DATAGRAM_BYTES],
            plaintext: Vec::new(),
        }
    }

    /// What was counted so far.
    pub fn stats(&self) -> DtlsStats {
        self.stats
    }

    /// Client: where the handshake is. A server layer answers `Handshaking` (it has no single
    /// handshake; see [`DtlsLayer::stats`]).
    pub fn client_state(&self) -> ClientState {
        match &self.role {
            Role::Client { state, .. } => state.clone(),
            Role::Server { .. } => ClientState::Handshaking,
        }
    }

    /// Server: sessions now (handshaking and established).
    pub fn sessions(&self) -> usize {
        match &self.role {
            Role::Client { .. } => 1,
            Role::Server { sessions, .. } => sessions.len(),
        }
    }

    /// Sends close_notify on every established session and forgets them all (client: its
    /// one session; the server's table is emptied). Take the records with
    /// [`DtlsLayer::poll_transmit`]. A client calls it when it is done, so the server frees
    /// its slot at once instead of after its idle timeout.
    pub fn close(&mut self) {
        match &mut self.role {
            Role::Client { peer, entry, .. } => {
                let p = *peer;
                if entry.session.is_established() {
                    entry.session.close();
                    let records = entry.session.take_records();
                    self.out.extend(records.into_iter().map(|r| (p, r)));
                } else {
                    entry.session.close();
                }
            }
            Role::Server { sessions, .. } => {
                for (a, mut e) in sessions.drain() {
                    e.session.close();
                    let records = e.session.take_records();
                    self.out.extend(records.into_iter().map(|r| (a, r)));
                }
            }
        }
    }

    /// The next record to send, and where.
    pub fn poll_transmit(&mut self) -> Option<(SocketAddr, Vec<u8>)> {
        self.out.pop_front()
    }

    /// When to call [`DtlsLayer::handle_timeout`] next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.next_sweep
    }

    /// One datagram from `from` at `now`; each plaintext datagram it carried is passed to
    /// `deliver` (for the endpoint).
    pub fn handle_datagram(
        &mut self,
        now: Instant,
        from: SocketAddr,
        datagram: &[u8],
        mut deliver: impl FnMut(&[u8]),
    ) {
        let mut plaintext = std::mem::take(&mut self.plaintext);
        let tick = now + Duration::from_millis(HANDSHAKE_TICK_MS);
        let progress = match &mut self.role {
            Role::Client { peer, entry, .. } => {
                let open = entry.session.is_handshaking() || entry.session.is_established();
                if from != *peer || !open {
                    self.stats.datagrams_without_session += 1;
                    return;
                }
                feed(
                    &mut self.stats,
                    entry,
                    now,
                    datagram,
                    &mut self.scratch,
                    &mut plaintext,
                )
            }
            Role::Server { sessions, secrets } => {
                // No session, or a ClientHello of another handshake than the session's (the
                // client restarted on the same port, RFC 6347 §4.2.8): the stateless cookie
                // exchange decides. Anything else from a peer with a session is the session's.
                let stateless = match sessions.get(&from) {
                    None => true,
                    Some(e) => hello::parse(datagram).is_ok_and(|h| h.random != e.random),
                };
                if stateless {
                    let admitted = admit(
                        &self.ctx,
                        &self.config,
                        sessions,
                        secrets,
                        &mut self.stats,
                        &mut self.out,
                        now,
                        from,
                        datagram,
                    );
                    if !admitted {
                        return;
                    }
                    self.next_sweep = Some(self.next_sweep.map_or(tick, |t| t.min(tick)));
                }
                let Some(entry) = sessions.get_mut(&from) else {
                    return;
                };
                feed(
                    &mut self.stats,
                    entry,
                    now,
                    datagram,
                    &mut self.scratch,
                    &mut plaintext,
                )
            }
        };
        for p in plaintext.drain(..) {
            deliver(&p);
        }
        self.plaintext = plaintext;
        self.after(now, from, progress);
    }

    /// Encrypts one plaintext datagram for `to`; held (client, handshake running) or dropped
    /// and counted when there is no established session.
    pub fn seal(&mut self, to: SocketAddr, plaintext: &[u8]) {
        let entry = match &mut self.role {
            Role::Client {
                peer,
                entry,
                queued,
                state,
            } => {
                if to != *peer {
                    self.stats.sends_without_session += 1;
                    return;
                }
                if *state == ClientState::Handshaking {
                    if queued.len() < self.config.max_queued_datagrams {
                        queued.push(plaintext.to_vec());
                    } else {
                        self.stats.sends_without_session += 1;
                    }
                    return;
                }
                entry
            }
            Role::Server { sessions, .. } => match sessions.get_mut(&to) {
                Some(e) => e,
                None => {
                    self.stats.sends_without_session += 1;
                    return;
                }
            },
        };
        if entry.session.send(plaintext).is_err() {
            self.stats.sends_without_session += 1;
            return;
        }
        let records = entry.session.take_records();
        self.out.extend(records.into_iter().map(|r| (to, r)));
    }

    /// Retransmits handshake flights whose OpenSSL timer expired, fails handshakes past
    /// [`DtlsConfig::handshake_timeout`] and closes idle sessions. Early calls are harmless.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.next_sweep.map_or(true, |t| now < t) {
            return;
        }
        let handshake_limit = duration(self.config.handshake_timeout);
        let idle_limit = duration(self.config.idle_timeout);
        let stall_limit = duration(self.config.handshake_stall);
        let answered = self.stats.handshake_datagrams_in > 0;
        let mut stalled = false;
        let mut results: Vec<(SocketAddr, Progress)> = Vec::new();
        let mut any_handshaking = false;
        let mut any_established = false;
        let mut expired: Vec<SocketAddr> = Vec::new();
        let client = matches!(self.role, Role::Client { .. });
        let mut visit = |addr: SocketAddr, e: &mut Entry, stats: &mut DtlsStats| {
            if e.session.is_handshaking() {
                if now.saturating_since(e.started) >= handshake_limit {
                    stats.handshakes_timed_out += 1;
                    e.session.close();
                    expired.push(addr);
                    return;
                }
                if client && answered && now.saturating_since(e.last_rx) >= stall_limit {
                    stats.handshakes_failed += 1;
                    stalled = true;
                    e.session.close();
                    return;
                }
                any_handshaking = true;
                results.push((addr, e.session.handle_timeout()));
            } else if e.session.is_established() {
                if idle_limit > Duration::ZERO && now.saturating_since(e.last_rx) >= idle_limit {
                    stats.sessions_idle_closed += 1;
                    e.session.close();
                    expired.push(addr);
                    return;
                }
                any_established = true;
            }
        };
        match &mut self.role {
            Role::Client { peer, entry, .. } => visit(*peer, entry, &mut self.stats),
            Role::Server { sessions, .. } => {
                for (a, e) in sessions.iter_mut() {
                    visit(*a, e, &mut self.stats);
                }
            }
        }
        if stalled {
            if let Role::Client { state, .. } = &mut self.role {
                *state = ClientState::Failed(format!(
                    "the server answered, then stayed silent for {:?} after our Finished: a \
wrong pre-shared key or identity, or a certificate it rejected, is dropped without an alert",
                    self.config.handshake_stall
                ));
            }
        }
        for addr in expired {
            match &mut self.role {
                Role::Client { state, peer, .. } => {
                    if *state == ClientState::Handshaking {
                        *state = ClientState::TimedOut;
                    }
                    let p = *peer;
                    self.collect(p);
                }
                Role::Server { .. } => {
                    self.collect(addr);
                    if let Role::Server { sessions, .. } = &mut self.role {
                        sessions.remove(&addr);
                    }
                }
            }
        }
        for (addr, p) in results {
            self.after(now, addr, p);
        }
        self.next_sweep = if any_handshaking {
            Some(now + Duration::from_millis(HANDSHAKE_TICK_MS))
        } else if any_established && idle_limit > Duration::ZERO {
            Some(now + Duration::from_millis(IDLE_SWEEP_MS))
        } else {
            None
        };
    }

    /// Acts on a session's progress, then queues its records.
    fn after(&mut self, now: Instant, addr: SocketAddr, progress: Progress) {
        match progress {
            Progress::None => self.collect(addr),
            Progress::Established(cipher) => {
                self.stats.handshakes_completed += 1;
                if let Role::Client {
                    entry,
                    queued,
                    state,
                    ..
                } = &mut self.role
                {
                    *state = ClientState::Established {
                        cipher,
                        took: now.saturating_since(entry.started),
                    };
                    // The last handshake records first, then what the endpoint sent meanwhile.
                    let mut records = entry.session.take_records();
                    for r in &records {
                        self.stats.handshake_datagrams_out += 1;
                        self.stats.handshake_bytes_out += r.len() as u64;
                    }
                    for p in queued.drain(..) {
                        if entry.session.send(&p).is_ok() {
                            records.extend(entry.session.take_records());
                        }
                    }
                    self.out.extend(records.into_iter().map(|r| (addr, r)));
                    return;
                }
                if self.next_sweep.is_none() {
                    self.next_sweep = Some(now + Duration::from_millis(IDLE_SWEEP_MS));
                }
                self.collect(addr);
            }
            Progress::Closed(why) => match &mut self.role {
                Role::Client { state, .. } => {
                    if matches!(state, ClientState::Established { .. }) {
                        self.stats.sessions_closed_by_peer += 1;
                    } else {
                        self.stats.handshakes_failed += 1;
                    }
                    *state = ClientState::Failed(why);
                    self.collect(addr);
                }
                Role::Server { sessions, .. } => {
                    if let Some(mut e) = sessions.remove(&addr) {
                        if e.was_established {
                            self.stats.sessions_closed_by_peer += 1;
                        } else {
                            self.stats.handshakes_failed += 1;
                        }
                        // A fatal alert OpenSSL wrote still goes out.
                        let records = e.session.take_records();
                        self.out.extend(records.into_iter().map(|r| (addr, r)));
                    }
                }
            },
        }
    }

    /// Queues the records `addr`'s session wrote.
    fn collect(&mut self, addr: SocketAddr) {
        let entry = match &mut self.role {
            Role::Client { entry, .. } => Some(entry),
            Role::Server { sessions, .. } => sessions.get_mut(&addr),
        };
        let Some(entry) = entry else { return };
        let handshaking = entry.session.is_handshaking();
        let records = entry.session.take_records();
        if handshaking {
            self.count_handshake_out(&records);
        }
        self.out.extend(records.into_iter().map(|r| (addr, r)));
    }

    fn count_handshake_out(&mut self, records: &[Vec<u8>]) {
        for r in records {
            self.stats.handshake_datagrams_out += 1;
            self.stats.handshake_bytes_out += r.len() as u64;
        }
    }
}

/// Hands `datagram` to `entry`'s session, counting handshake traffic.
fn feed(
    stats: &mut DtlsStats,
    entry: &mut Entry,
    now: Instant,
    datagram: &[u8],
    scratch: &mut [u8],
    plaintext: &mut Vec<Vec<u8>>,
) -> Progress {
    entry.last_rx = now;
    if entry.session.is_handshaking() {
        stats.handshake_datagrams_in += 1;
        stats.handshake_bytes_in += datagram.len() as u64;
    }
    let p = entry.session.handle_datagram(datagram, scratch, plaintext);
    if let Progress::Established(_) = p {
        entry.was_established = true;
    }
    p
}

/// The stateless half of the cookie exchange for a datagram from `from`, which has no
/// session (or an established one and sent an epoch-0 handshake record): a ClientHello
/// without a valid cookie is answered with a HelloVerifyRequest and nothing is kept; one with
/// a valid cookie gets a new session (making room first), and true is returned so the caller
/// hands it the datagram.
#[allow(clippy::too_many_arguments)]
fn admit(
    ctx: &Context,
    config: &DtlsConfig,
    sessions: &mut HashMap<SocketAddr, Entry>,
    secrets: &mut CookieSecrets,
    stats: &mut DtlsStats,
    out: &mut VecDeque<(SocketAddr, Vec<u8>)>,
    now: Instant,
    from: SocketAddr,
    datagram: &[u8],
) -> bool {
    let h = match hello::parse(datagram) {
        Ok(h) => h,
        Err(
            hello::HelloError::TooShort
            | hello::HelloError::NotHandshake
            | hello::HelloError::NotEpochZero
            | hello::HelloError::BadVersion,
        ) => {
            stats.datagrams_without_session += 1;
            return false;
        }
        Err(_) => {
            stats.hellos_malformed += 1;
            return false;
        }
    };
    secrets.rotate(now);
    let input = hello::cookie_input(from, &h);
    if h.cookie.is_empty() || !secrets.verify(&input, h.cookie) {
        if !h.cookie.is_empty() {
            stats.cookies_invalid += 1;
        }
        let hvr = hello::hello_verify_request(&h, &secrets.cookie(&input));
        stats.hello_verifies_sent += 1;
        stats.handshake_datagrams_out += 1;
        stats.handshake_bytes_out += hvr.len() as u64;
        out.push_back((from, hvr));
        return false;
    }
    let Some(first) = hello::first_hello(&h) else {
        stats.hellos_malformed += 1;
        return false;
    };
    // A verified peer: make room, its address's share first, then the table.
    if let Some(mut old) = sessions.remove(&from) {
        stats.sessions_replaced += 1;
        old.session.close();
    }
    let ip = from.ip();
    let per_source = config.max_sessions_per_source.max(1);
    if sessions.keys().filter(|a| a.ip() == ip).count() >= per_source {
        evict_lru(sessions, stats, out, |a| a.ip() == ip);
    }
    while sessions.len() >= config.max_sessions.max(1) {
        if !evict_lru(sessions, stats, out, |_| true) {
            break;
        }
    }
    match Session::accept(ctx, &first, h.cookie) {
        Ok(session) => {
            sessions.insert(
                from,
                Entry {
                    session,
                    started: now,
                    last_rx: now,
                    was_established: false,
                    random: h.random.try_into().unwrap_or([0; 32]),
                },
            );
            true
        }
        Err(_) => {
            stats.handshakes_failed += 1;
            false
        }
    }
}

/// Evicts the least recently used session (the longest without a received datagram) whose
/// address passes `which`; an established one is sent close_notify. False when none passes.
fn evict_lru(
    sessions: &mut HashMap<SocketAddr, Entry>,
    stats: &mut DtlsStats,
    out: &mut VecDeque<(SocketAddr, Vec<u8>)>,
    which: impl Fn(&SocketAddr) -> bool,
) -> bool {
    let victim = sessions
        .iter()
        .filter(|(a, _)| which(a))
        .min_by_key(|(_, e)| (e.last_rx, e.started))
        .map(|(a, _)| *a);
    let Some(a) = victim else {
        return false;
    };
    let Some(mut e) = sessions.remove(&a) else {
        return false;
    };
    if e.session.is_established() {
        stats.sessions_evicted += 1;
        e.session.close();
        let records = e.session.take_records();
        out.extend(records.into_iter().map(|r| (a, r)));
    } else {
        stats.handshakes_evicted += 1;
    }
    true
}

/// A std duration as endpoint time (saturating).
fn duration(d: std::time::Duration) -> Duration {
    Duration::from_nanos(i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests;
