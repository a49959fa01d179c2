//! [`Router`]: path → resource, the content resources and link descriptions it serves, and
//! the observe settings of its observable ones; one `impl`, the pieces it holds defined by
//! their own modules (`crate::resource`, `crate::content`, `crate::links`, `crate::observe`).

use coaplab_cc::time::{Duration, Instant};

use super::{data_n, segments, DataLen, Resource, MAX_DATA_BYTES};
use crate::content::Content;
use crate::links::Link;
use crate::observe::{NotifyPolicy, MAX_OBSERVERS};

/// Path → resource. Besides the routes added, `data/N` answers N bytes to GET (N at most
/// [`Router::max_data_bytes`]; a larger N, however many digits, answers 4.00) and `echo`
/// echoes POST/PUT payloads.
#[derive(Debug, Clone)]
pub struct Router {
    routes: Vec<(Vec<String>, Resource)>,
    /// GET-only content routes (see `crate::content`), checked before `routes`.
    pub(crate) contents: Vec<(Vec<String>, Content)>,
    /// The largest N `data/N` answers.
    max_data_bytes: usize,
    /// The `/.well-known/core` descriptions (see `crate::links`).
    pub(crate) links: Vec<Link>,
    /// The most observers kept (`crate::observe`).
    pub(crate) max_observers: usize,
    /// How notifications over UDP are sent (`crate::observe`).
    pub(crate) notify: NotifyPolicy,
}

impl Default for Router {
    fn default() -> Self {
        Router {
            routes: Vec::new(),
            contents: Vec::new(),
            max_data_bytes: MAX_DATA_BYTES,
            links: Vec::new(),
            max_observers: MAX_OBSERVERS,
            notify: NotifyPolicy::default(),
        }
    }
}

impl Router {
    /// Only the built-in `data/N` and `echo`.
    pub fn new() -> Self {
        Router::default()
    }

    /// Sets the largest N the built-in `data/N` answers (default [`MAX_DATA_BYTES`]); a GET
    /// of a larger N gets 4.00 Bad Request, before any body is produced.
    pub fn max_data_bytes(&mut self, len_bytes: usize) -> &mut Self {
        self.max_data_bytes = len_bytes;
        self
    }

    /// The largest N the built-in `data/N` answers.
    pub fn data_limit_bytes(&self) -> usize {
        self.max_data_bytes
    }

    /// Adds (or replaces) the resource at `path` (segments separated by `/`).
    pub fn route(&mut self, path: &str, resource: Resource) -> &mut Self {
        let segs: Vec<String> = segments(path).map(str::to_owned).collect();
        match self.routes.iter_mut().find(|(p, _)| *p == segs) {
            Some(slot) => slot.1 = resource,
            None => self.routes.push((segs, resource)),
        }
        self
    }

    /// The resource for the Uri-Path segments given, without allocating.
    pub(crate) fn find<'a, I>(&self, path: I) -> Option<Resource>
    where
        I: Iterator<Item = &'a [u8]> + Clone,
    {
        for (segs, r) in &self.routes {
            if path.clone().eq(segs.iter().map(|s| s.as_bytes())) {
                return Some(*r);
            }
        }
        let mut it = path;
        match (it.next(), it.next(), it.next()) {
            (Some(b"data"), Some(n), None) => match data_n(n, self.max_data_bytes)? {
                DataLen::Body(n) => Some(Resource::data(n)),
                DataLen::TooLarge => Some(Resource::too_large()),
            },
            (Some(b"echo"), None, None) => Some(Resource::echo()),
            _ => None,
        }
    }

    /// GET of `path` answers an observable counter (RFC 7641) that counts `period`s since
    /// endpoint time zero (text/plain); a GET with Observe 0 registers for notifications.
    /// Add a link with `obs` ([`Router::link`]) to list it in `/.well-known/core`.
    pub fn counter(&mut self, path: &str, period: Duration) -> &mut Self {
        self.add_content(path, Content::Counter { period })
    }

    /// Sets the most observers the endpoint keeps over all observable resources (default
    /// [`MAX_OBSERVERS`]); a registration beyond it gets a plain response.
    pub fn max_observers(&mut self, observers: usize) -> &mut Self {
        self.max_observers = observers;
        self
    }

    /// Sets how notifications over UDP are sent (default [`NotifyPolicy::default`]: the
    /// first CON, then NON with a CON at least every 24 h; a fixed 2-s first timeout).
    ///
    /// [`NotifyPolicy::default`]: NotifyPolicy
    pub fn notify_policy(&mut self, policy: NotifyPolicy) -> &mut Self {
        self.notify = policy;
        self
    }

    /// The most observers kept ([`Router::max_observers`]).
    pub fn observer_limit(&self) -> usize {
        self.max_observers
    }

    /// The state of the observable content at index `resource` at `now`: Content-Format,
    /// body and period; `None` when it is not observable.
    pub(crate) fn observable_state(
        &self,
        resource: usize,
        now: Instant,
    ) -> Option<(Option<u16>, Vec<u8>, Duration)> {
        self.contents.get(resource)?.1.observable_state(now)
    }

    /// GET of `path` answers `body` with `content_format`; other methods get 4.05.
    pub fn content(&mut self, path: &str, content_format: u16, body: Vec<u8>) -> &mut Self {
        self.add_content(
            path,
            Content::Fixed {
                content_format,
                body,
            },
        )
    }

    /// GET of `path` answers the Unix time in seconds (text/plain): `unix_at_zero` plus the
    /// endpoint time of the request.
    pub fn clock(&mut self, path: &str, unix_at_zero: Duration) -> &mut Self {
        self.add_content(path, Content::Clock { unix_at_zero })
    }

    pub(crate) fn add_content(&mut self, path: &str, content: Content) -> &mut Self {
        let segs: Vec<String> = segments(path).map(str::to_owned).collect();
        match self.contents.iter_mut().find(|(p, _)| *p == segs) {
            Some(slot) => slot.1 = content,
            None => self.contents.push((segs, content)),
        }
        self
    }

    /// The content resource at the Uri-Path segments given, with its index.
    pub(crate) fn find_content<'a, I>(&self, path: I) -> Option<(usize, &Content)>
    where
        I: Iterator<Item = &'a [u8]> + Clone,
    {
        self.contents
            .iter()
            .position(|(segs, _)| path.clone().eq(segs.iter().map(|s| s.as_bytes())))
            .map(|i| (i, &self.contents[i].1))
    }

    /// Describes `href` in the `/.well-known/core` listing with `attrs` (a `None` value is a
    /// flag, e.g. `("obs", None)`); a second call for the same href replaces the first.
    /// The listing is served once [`Router::well_known_core`] is called.
    pub fn link(&mut self, href: &str, attrs: &[(&str, Option<&str>)]) -> &mut Self {
        let link = Link {
            href: href.to_owned(),
            attrs: attrs
                .iter()
                .map(|(n, v)| ((*n).to_owned(), v.map(str::to_owned)))
                .collect(),
        };
        match self.links.iter_mut().find(|l| l.href == href) {
            Some(slot) => *slot = link,
            None => self.links.push(link),
        }
        self
    }

    /// Serves `/.well-known/core` (GET, application/link-format, RFC 6690) listing every
    /// [`Router::link`], filtered by the request's query.
    pub fn well_known_core(&mut self) -> &mut Self {
        self.add_content(".well-known/core", Content::Links)
    }

    /// The links described so far.
    pub fn links(&self) -> &[Link] {
        &self.links
    }
}
