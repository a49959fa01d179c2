//! One object download as the ordered writes of both ends, each with the event that makes
//! hyper write it. A driver (the simulator's flow, on the TCP model) writes a [`Flight`] into
//! its side's connection once the [`Trigger`] holds; flights whose triggers hold at the same
//! instant go out together, as hyper flushes them together.

use super::{h1, h2, object_body};

/// The HTTP variants of docs/experiments.md §8e (SPDY replaced by HTTP/2 h2c, docs/http-vs-coap.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HttpProtocol {
    /// HTTP/1.1 with hyper's and `coaplab http-get`'s standard headers.
    Http1,
    /// HTTP/2 over cleartext TCP with prior knowledge, standard headers and windows.
    H2,
    /// HTTP/1.1 with the minimal headers (`--iot`); TFO is the transport's business.
    IotHttp1,
    /// h2c with the minimal headers and RFC 9113's default windows (`--iot`).
    IotH2,
}

impl HttpProtocol {
    /// Every variant, in the order of docs/http-vs-coap.md's tables.
    pub const ALL: [HttpProtocol; 4] = [Self::Http1, Self::H2, Self::IotHttp1, Self::IotH2];

    /// The scenario name: `http1`, `h2`, `iot-http1`, `iot-h2`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Http1 => "http1",
            Self::H2 => "h2",
            Self::IotHttp1 => "iot-http1",
            Self::IotH2 => "iot-h2",
        }
    }

    /// The variant called `name` ([`HttpProtocol::name`]).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Minimal headers (and, in docs/experiments.md §8e, TCP Fast Open).
    pub fn is_iot(self) -> bool {
        matches!(self, Self::IotHttp1 | Self::IotH2)
    }

    /// HTTP/2 framing.
    pub fn is_h2(self) -> bool {
        matches!(self, Self::H2 | Self::IotH2)
    }
}

/// Which end writes a flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sender {
    /// The HTTP client (the TCP connection's active opener).
    Client,
    /// The HTTP server.
    Server,
}

/// When hyper writes a flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// As soon as the connection exists for this end: the client at `connect` (the data
    /// rides in the SYN with TFO, else waits for the handshake), the server at `accept`.
    Connected,
    /// Once this end has read this many bytes of the peer's stream in total.
    Received(usize),
}

/// One write of one end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flight {
    /// Who writes it.
    pub sender: Sender,
    /// When.
    pub trigger: Trigger,
    /// The bytes.
    pub bytes: Vec<u8>,
}

/// Every write of one `GET /data/N` download on a fresh connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Download {
    /// The writes in order (per end, the order the bytes enter its stream).
    pub flights: Vec<Flight>,
    /// The server's stream length when the object's last byte has been sent: the client has
    /// downloaded the object once it has read this many bytes (docs/experiments.md §8e's end of the
    /// download time).
    pub complete_at_client_bytes: usize,
}

impl Download {
    /// The download of an `object_bytes` object from `host` over `protocol`.
    pub fn new(protocol: HttpProtocol, host: &str, object_bytes: usize) -> Self {
        let iot = protocol.is_iot();
        let body = object_body(object_bytes);
        if !protocol.is_h2() {
            let request = h1::request(host, object_bytes, iot);
            let mut response = h1::response_head(object_bytes, iot);
            response.extend_from_slice(&body);
            let request_len = request.len();
            let complete = response.len();
            return Download {
                flights: vec![
                    flight(Sender::Client, Trigger::Connected, request),
                    flight(Sender::Server, Trigger::Received(request_len), response),
                ],
                complete_at_client_bytes: complete,
            };
        }
        // Client: preface, SETTINGS, WINDOW_UPDATE and the request HEADERS leave in one
        // flush (docs/http-vs-coap.md); then its SETTINGS ACK once the server's SETTINGS is in.
        let mut opening = h2::PREFACE.to_vec();
        let client_settings = h2::client_settings(iot);
        let client_settings_end = opening.len() + client_settings.len();
        opening.extend_from_slice(&client_settings);
        if let Some(update) = h2::connection_window_update(true, iot) {
            opening.extend_from_slice(&update);
        }
        opening.extend_from_slice(&h2::request_headers(host, object_bytes, iot));
        let request_end = opening.len();
        // Server: SETTINGS and WINDOW_UPDATE at accept; SETTINGS ACK after the client's
        // SETTINGS; the response after the request HEADERS.
        let mut server_opening = h2::server_settings(iot);
        let server_settings_len = server_opening.len();
        if let Some(update) = h2::connection_window_update(false, iot) {
            server_opening.extend_from_slice(&update);
        }
        let response: Vec<u8> = h2::response_frames(&body, iot).concat();
        let complete = server_opening.len() + h2::settings_ack().len() + response.len();
        Download {
            flights: vec![
                flight(Sender::Client, Trigger::Connected, opening),
                flight(Sender::Server, Trigger::Connected, server_opening),
                flight(
                    Sender::Server,
                    Trigger::Received(client_settings_end),
                    h2::settings_ack(),
                ),
                flight(Sender::Server, Trigger::Received(request_end), response),
                flight(
                    Sender::Client,
                    Trigger::Received(server_settings_len),
                    h2::settings_ack(),
                ),
            ],
            complete_at_client_bytes: complete,
        }
    }

    /// Bytes `sender` writes in total (HTTP only: no TCP/IP headers).
    pub fn stream_bytes(&self, sender: Sender) -> usize {
        self.flights
            .iter()
            .filter(|f| f.sender == sender)
            .map(|f| f.bytes.len())
            .sum()
    }
}

fn flight(sender: Sender, trigger: Trigger, bytes: Vec<u8>) -> Flight {
    Flight {
        sender,
        trigger,
        bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::DEFAULT_HOST;

    /// HTTP bytes of one 100-B download, per direction, from the byte-exact messages:
    /// HTTP/1.1 84 + (134 + 100); IoT 44 + (40 + 100); h2c: preface 24, SETTINGS 33,
    /// WINDOW_UPDATE 13, HEADERS 9 + 35, SETTINGS ACK 9 from the client, SETTINGS 33,
    /// WINDOW_UPDATE 13, SETTINGS ACK 9, HEADERS 9 + 56, DATA 9 + 100 from the server;
    /// IoT-h2c without the WINDOW_UPDATEs and with 19-B / 6-B header blocks ("/data/100" and
    /// "100" Huffman-code to as many bytes as "/data/10" and "10").
    #[test]
    fn hundred_byte_download_bytes_per_protocol() {
        let bytes = |p| {
            let d = Download::new(p, DEFAULT_HOST, 100);
            (
                d.stream_bytes(Sender::Client),
                d.stream_bytes(Sender::Server),
                d.complete_at_client_bytes,
            )
        };
        assert_eq!(bytes(HttpProtocol::Http1), (84, 234, 234));
        assert_eq!(bytes(HttpProtocol::IotHttp1), (44, 140, 140));
        assert_eq!(bytes(HttpProtocol::H2), (123, 229, 229));
        assert_eq!(bytes(HttpProtocol::IotH2), (94, 166, 166));
    }

    #[test]
    fn names_round_trip() {
        for p in HttpProtocol::ALL {
            assert_eq!(HttpProtocol::from_name(p.name()), Some(p));
        }
        assert_eq!(HttpProtocol::from_name("spdy"), None);
    }
}
