//! The destinations an [`crate::Endpoint`] has talked to, each with its congestion
//! controller and NSTART gate, and the factory that builds the controllers.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::ops::{Index, IndexMut};

use coaplab_cc::time::Instant;

use crate::controller::{Controller, ControllerFactory};
use crate::exchange::Peer;

/// Every peer by slot (slots are never freed, so a slot number stays valid).
///
/// `repr(C)`: what a client reads per request (`list`, `last`) last, so that it shares
/// cache lines with the endpoint's hot fields that follow (`crate::Endpoint`'s layout).
#[repr(C)]
pub(crate) struct Peers {
    index: HashMap<SocketAddr, usize, rustc_hash::FxBuildHasher>,
    factory: ControllerFactory,
    list: Vec<Peer>,
    /// The peer [`Peers::slot`] found last (peers are never removed, so it stays right): a
    /// client asks for the one server it talks to at every request, and a probe of `index`
    /// is a cache miss when many endpoints share a core (the simulator's flows).
    last: Option<(SocketAddr, usize)>,
}

impl Peers {
    /// No peers yet; their controllers will be built by `factory`.
    pub(crate) fn new(factory: ControllerFactory) -> Peers {
        Peers {
            list: Vec::new(),
            index: HashMap::default(),
            last: None,
            factory,
        }
    }

    /// Peers known.
    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    /// The slot of `addr`, when it is known.
    pub(crate) fn find(&self, addr: SocketAddr) -> Option<usize> {
        self.index.get(&addr).copied()
    }

    /// The slot of `addr`, created on first use. Inline up to the check of the last one
    /// found, the lookup out of line (issue 35: the call cost ~20 instructions per request).
    #[inline]
    pub(crate) fn slot(&mut self, addr: SocketAddr) -> usize {
        if let Some((last, p)) = self.last {
            if last == addr {
                return p;
            }
        }
        self.look_up(addr)
    }

    /// [`Peers::slot`] of an address other than the last one found.
    #[inline(never)]
    fn look_up(&mut self, addr: SocketAddr) -> usize {
        let p = match self.index.get(&addr) {
            Some(&p) => p,
            None => {
                self.list.push(Peer::new(addr));
                self.index.insert(addr, self.list.len() - 1);
                self.list.len() - 1
            }
        };
        self.last = Some((addr, p));
        p
    }

    /// The controller of `addr`, once an exchange to it has started.
    pub(crate) fn controller(&self, addr: SocketAddr) -> Option<&Controller> {
        self.list[self.find(addr)?].ctl.as_ref()
    }

    /// [`Peers::controller`], to update.
    pub(crate) fn controller_mut(&mut self, addr: SocketAddr) -> Option<&mut Controller> {
        let p = self.find(addr)?;
        self.list[p].ctl.as_mut()
    }

    /// Builds the peer's controller when its first exchange starts.
    pub(crate) fn ensure_controller(&mut self, now: Instant, p: usize) -> &mut Controller {
        let peer = &mut self.list[p];
        if peer.ctl.is_none() {
            peer.ctl = Some((self.factory)(peer.addr, now));
        }
        peer.ctl.as_mut().expect("just built")
    }
}

impl Index<usize> for Peers {
    type Output = Peer;
    fn index(&self, p: usize) -> &Peer {
        &self.list[p]
    }
}

impl IndexMut<usize> for Peers {
    fn index_mut(&mut self, p: usize) -> &mut Peer {
        &mut self.list[p]
    }
}
