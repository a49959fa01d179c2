//! The server's defence against amplification (RFC 9175 §2.4, RFC 7252 §11.3): which
//! sources proved their address with an Echo value, and the over-the-factor bytes still
//! allowed to unverified ones.

use std::net::SocketAddr;

use coaplab_cc::time::Instant;
use coaplab_wire::option::number;
use coaplab_wire::{Message, MessageType, ReadOptions};

use crate::config::Amplification;
use crate::echo::{Allowance, ReplayBudget, Verified};

/// The verified sources and the unverified ones' allowances.
pub(crate) struct EchoGuard {
    /// [`crate::Config::amplification`] (`None`: no limit, nothing is ever challenged).
    amplification: Option<Amplification>,
    /// Source addresses that proved with an Echo value that they receive at their address
    /// (RFC 9175 §2.4), when [`crate::Config::amplification`] is on.
    verified: Verified,
    /// Over-the-factor bytes still allowed to unverified CON sources.
    con_allowance: Allowance,
    /// Over-the-factor bytes of replayed answers still allowed per unverified source.
    replay_budget: ReplayBudget,
}

impl EchoGuard {
    /// Nothing verified yet, under `amplification`'s limits.
    pub(crate) fn new(amplification: Option<Amplification>) -> EchoGuard {
        EchoGuard {
            amplification,
            verified: Verified::default(),
            con_allowance: Allowance::default(),
            replay_budget: ReplayBudget::default(),
        }
    }

    /// Source addresses verified.
    pub(crate) fn verified_sources(&self) -> usize {
        self.verified.len()
    }

    /// Whether a response of `response_bytes` to a request of `request_bytes` from `from`
    /// must wait for an Echo (RFC 9175 §2.4): it exceeds the amplification factor, `from`
    /// is not verified, and (for a CON) the unverified-CON allowance is used up — or, for a
    /// `duplicate` (a copy already answered, processed again), `from`'s replay budget
    /// ([`crate::Amplification::unverified_replay_bytes`]) is. A request carrying a fresh Echo
    /// value verifies `from` here.
    pub(crate) fn needs_echo(
        &mut self,
        now: Instant,
        from: SocketAddr,
        msg: &Message<'_>,
        request_bytes: usize,
        response_bytes: usize,
        duplicate: bool,
    ) -> bool {
        let Some(amp) = &self.amplification else {
            return false;
        };
        if response_bytes <= amp.factor as usize * request_bytes || self.verified.contains(from) {
            return false;
        }
        let fresh = msg
            .first(number::ECHO)
            .is_some_and(|v| crate::echo::is_fresh(&amp.key, from, now, v));
        if fresh {
            self.verified.insert(from);
            return false;
        }
        let rate = amp.unverified_con_bytes_per_s;
        let depth = amp.unverified_replay_bytes;
        let con = msg.mtype == MessageType::Con;
        if duplicate
            && !(con
                && self
                    .replay_budget
                    .take(now, from.ip(), depth, response_bytes))
        {
            return true;
        }
        !(con && self.con_allowance.take(now, rate, response_bytes))
    }
}
