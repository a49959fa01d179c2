//! Resource discovery (RFC 6690): the `/.well-known/core` listing is made from the link
//! descriptions a [`crate::Router`] holds ([`crate::Router::link`]), each with its target attributes (`rt`,
//! `if`, `ct`, `obs`, `sz`, `title`, …), and filtered by the request's query (§4.1): one
//! `name=value` per Uri-Query, `href` naming the target itself, a trailing `*` matching any
//! value that starts with what precedes it, and a value of the space-separated `rt`, `if`
//! and `ct` attributes matching any one of their words. A link must pass every filter given.
//! The listing is generated per request, so a resource added later (e.g. an observable one,
//! with `obs`) is listed by adding its link.

/// One link of the listing: a target path and its attributes in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The target, e.g. `/echo`.
    pub href: String,
    /// `(name, value)`; `None` for a flag such as `obs` (RFC 7641 §6).
    pub attrs: Vec<(String, Option<String>)>,
}

impl Link {
    /// Appends the link in link-format (RFC 6690 §2): `<href>;name=value;flag`. A value
    /// that is all digits (`ct=0`, `sz=1024`) is written as a token, any other quoted.
    fn write(&self, out: &mut String) {
        out.push('<');
        out.push_str(&self.href);
        out.push('>');
        for (name, value) in &self.attrs {
            out.push(';');
            out.push_str(name);
            match value {
                None => {}
                Some(v) if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => {
                    out.push('=');
                    out.push_str(v);
                }
                Some(v) => {
                    out.push_str("=\"");
                    for c in v.chars() {
                        if c == '"' || c == '\\' {
                            out.push('\\');
                        }
                        out.push(c);
                    }
                    out.push('"');
                }
            }
        }
    }

    /// Whether the link passes one query filter `name=value` (RFC 6690 §4.1); a bare `name`
    /// asks for links that have the attribute.
    fn matches(&self, filter: &str) -> bool {
        let (name, pattern) = match filter.split_once('=') {
            Some((n, p)) => (n, Some(p)),
            None => (filter, None),
        };
        let fits = |v: &str| match pattern {
            None => true,
            Some(p) => match p.strip_suffix('*') {
                Some(prefix) => v.starts_with(prefix),
                None => v == p,
            },
        };
        if name == "href" {
            return fits(&self.href);
        }
        // rt, if and ct carry space-separated lists (RFC 6690 §3.1–3.2, RFC 7252 §7.2.1).
        let listed = matches!(name, "rt" | "if" | "ct");
        self.attrs
            .iter()
            .filter(|(n, _)| n == name)
            .any(|(_, v)| match v {
                None => pattern.is_none(),
                Some(v) if listed => v.split(' ').any(fits),
                Some(v) => fits(v),
            })
    }
}

/// The link-format listing of `links` that pass every filter in `query`.
pub(crate) fn listing<'q>(
    links: &[Link],
    query: impl Iterator<Item = &'q [u8]> + Clone,
) -> Vec<u8> {
    let mut out = String::new();
    for link in links {
        let pass = query.clone().all(|q| {
            // A filter that is not UTF-8 matches nothing.
            std::str::from_utf8(q).is_ok_and(|q| link.matches(q))
        });
        if pass {
            if !out.is_empty() {
                out.push(',');
            }
            link.write(&mut out);
        }
    }
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Router;

    fn links() -> Vec<Link> {
        let mut r = Router::new();
        r.link(
            "/data/1024",
            &[
                ("rt", Some("coaplab.data")),
                ("if", Some("core.s")),
                ("sz", Some("1024")),
            ],
        )
        .link(
            "/echo",
            &[("rt", Some("coaplab.echo")), ("ct", Some("0 42 50 60"))],
        )
        .link(
            "/counter",
            &[("rt", Some("coaplab.counter")), ("obs", None)],
        );
        r.links
    }

    fn list(query: &[&str]) -> String {
        let q: Vec<&[u8]> = query.iter().map(|s| s.as_bytes()).collect();
        String::from_utf8(listing(&links(), q.into_iter())).unwrap()
    }

    #[test]
    fn every_link_with_its_attributes() {
        assert_eq!(
            list(&[]),
            "</data/1024>;rt=\"coaplab.data\";if=\"core.s\";sz=1024,\
             </echo>;rt=\"coaplab.echo\";ct=\"0 42 50 60\",\
             </counter>;rt=\"coaplab.counter\";obs"
        );
    }

    #[test]
    fn query_filters_per_rfc_6690_4_1() {
        assert_eq!(
            list(&["rt=coaplab.echo"]),
            "</echo>;rt=\"coaplab.echo\";ct=\"0 42 50 60\""
        );
        assert_eq!(list(&["href=/echo"]), list(&["rt=coaplab.echo"]));
        assert_eq!(list(&["ct=50"]), list(&["rt=coaplab.echo"]));
        assert_eq!(
            list(&["rt=coaplab.c*"]),
            "</counter>;rt=\"coaplab.counter\";obs"
        );
        assert_eq!(list(&["obs"]), list(&["rt=coaplab.c*"]));
        assert_eq!(list(&["href=/data*", "sz=1024"]).matches('<').count(), 1);
        assert_eq!(list(&["rt=coaplab"]), "");
        assert_eq!(list(&["if=core.s", "rt=coaplab.echo"]), "");
        assert_eq!(list(&["rt=*"]).matches('<').count(), 3);
    }
}
