//! A flow's transport: what its `cc` key selects, parsed once by the scenario reader so that
//! the run loops, the results and the checks match on a type instead of comparing names.
//!
//! `cc` names three kinds of flow (docs/experiments.md §5, §8e): CoAP over UDP timed by one of
//! the registry's algorithms, CoAP over TCP (RFC 8323) with New Reno or BBR, and one HTTP
//! download on TCP. The name stays what scenario files and results say ([`Transport::cc`]).

use coaplab_cc::registry;
use coaplab_endpoint::http::HttpProtocol;

/// How a flow's requests travel, as its `cc` chose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// CoAP over UDP, its retransmissions timed by a registry algorithm.
    Udp {
        /// The algorithm's registry name (`coaplab algorithms`).
        cc: String,
    },
    /// CoAP over TCP (RFC 8323): netsim's TCP model when simulated, the kernel's TCP when
    /// emulated.
    Tcp {
        /// The TCP congestion control.
        cc: TcpCc,
    },
    /// One HTTP download on TCP (Linux reno) instead of CoAP (docs/experiments.md §8e); only
    /// with `workload = "long-transfer"`, one flow per run.
    Http {
        /// HTTP/1.1 or h2c, each standard or IoT (minimal headers, TCP Fast Open).
        protocol: HttpProtocol,
    },
}

/// The congestion control of a CoAP-over-TCP flow: Linux reno or BBR v1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TcpCc {
    /// `tcp-newreno`: Reno with New Reno's recovery (Linux `reno`).
    NewReno,
    /// `tcp-bbr`: BBR v1 (Linux `bbr`).
    Bbr,
}

impl TcpCc {
    /// Every variant, in the order scenario errors list them.
    pub const ALL: [TcpCc; 2] = [TcpCc::NewReno, TcpCc::Bbr];

    /// The `cc` name of scenario files and results.
    pub fn name(self) -> &'static str {
        match self {
            TcpCc::NewReno => "tcp-newreno",
            TcpCc::Bbr => "tcp-bbr",
        }
    }

    /// The variant called `name` ([`TcpCc::name`]).
    pub fn from_name(name: &str) -> Option<TcpCc> {
        TcpCc::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// A `cc` that names no transport: neither a registry algorithm nor a TCP or HTTP name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown cc \"{cc}\": expected one of {}", Transport::names().join(", "))]
pub struct UnknownCc {
    /// The name as given.
    pub cc: String,
}

impl Transport {
    /// The transport `cc` selects: a TCP or HTTP name, or else an algorithm of the registry
    /// (whose names never take the `tcp-` and HTTP names, so the order does not matter).
    pub fn from_cc(cc: &str) -> Result<Transport, UnknownCc> {
        if let Some(cc) = TcpCc::from_name(cc) {
            return Ok(Transport::Tcp { cc });
        }
        if let Some(protocol) = HttpProtocol::from_name(cc) {
            return Ok(Transport::Http { protocol });
        }
        if registry::lookup(cc).is_ok() {
            return Ok(Transport::Udp { cc: cc.to_string() });
        }
        Err(UnknownCc { cc: cc.to_string() })
    }

    /// Every accepted `cc`: the registry's algorithms, then the TCP and the HTTP names (the
    /// order of the scenario reader's "expected one of" list).
    pub fn names() -> Vec<&'static str> {
        let mut names = registry::names();
        names.extend(TcpCc::ALL.map(TcpCc::name));
        names.extend(HttpProtocol::ALL.map(HttpProtocol::name));
        names
    }

    /// The `cc` as scenario files and results write it.
    pub fn cc(&self) -> &str {
        match self {
            Transport::Udp { cc } => cc,
            Transport::Tcp { cc } => cc.name(),
            Transport::Http { protocol } => protocol.name(),
        }
    }

    /// Whether the flow runs CoAP over TCP (not HTTP, which runs on TCP too).
    pub fn is_coap_over_tcp(&self) -> bool {
        matches!(self, Transport::Tcp { .. })
    }

    /// Whether the flow is a CoAP-over-TCP flow with BBR (the BBR constants apply to it).
    pub fn is_bbr(&self) -> bool {
        matches!(self, Transport::Tcp { cc: TcpCc::Bbr })
    }

    /// Whether the flow is an HTTP download.
    pub fn is_http(&self) -> bool {
        matches!(self, Transport::Http { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_to_its_transport_and_back() {
        for name in Transport::names() {
            let t = Transport::from_cc(name).unwrap();
            assert_eq!(t.cc(), name);
        }
        assert_eq!(
            Transport::from_cc("cocoa"),
            Ok(Transport::Udp {
                cc: "cocoa".to_string()
            })
        );
        assert_eq!(
            Transport::from_cc("tcp-bbr"),
            Ok(Transport::Tcp { cc: TcpCc::Bbr })
        );
        assert_eq!(
            Transport::from_cc("tcp-newreno"),
            Ok(Transport::Tcp { cc: TcpCc::NewReno })
        );
        assert_eq!(
            Transport::from_cc("iot-h2"),
            Ok(Transport::Http {
                protocol: HttpProtocol::IotH2
            })
        );
    }

    #[test]
    fn an_unknown_cc_is_a_typed_error_naming_it_and_the_choices() {
        let e = Transport::from_cc("tcp-cubic").unwrap_err();
        assert_eq!(e.cc, "tcp-cubic");
        let text = e.to_string();
        assert!(
            text.starts_with("unknown cc \"tcp-cubic\": expected one of default, "),
            "{text}"
        );
        assert!(
            text.ends_with(", tcp-newreno, tcp-bbr, http1, h2, iot-http1, iot-h2"),
            "{text}"
        );
    }

    #[test]
    fn the_names_keep_the_order_of_the_scenario_errors() {
        // The registry's algorithms, then the TCP names, then the HTTP ones, as the
        // scenario reader listed them before the transport was typed.
        let mut before = registry::names();
        before.extend(["tcp-newreno", "tcp-bbr"]);
        before.extend(["http1", "h2", "iot-http1", "iot-h2"]);
        assert_eq!(Transport::names(), before);
    }
}
