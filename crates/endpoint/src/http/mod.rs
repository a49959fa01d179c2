//! Byte-exact message models of HTTP/1.1 and HTTP/2 (h2c) for the simulator, docs/experiments.md
//! §8e.
//!
//! HTTP is a sibling of the CoAP endpoint on the TCP model, and lives beside it here (it moved
//! out of netsim, which carries bytes and does not know what they say): these generators are
//! sans-IO — they return the bytes hyper 1.x puts on the wire for one `GET /data/N` download,
//! as docs/http-vs-coap.md lists them from the emulator's captures, and the TCP model carries
//! them. Nothing here touches a socket or a clock.
//!
//! * [`h1`]: HTTP/1.1 request and response head, standard and IoT (minimal headers).
//! * [`h2`]: the h2c connection preface, SETTINGS, SETTINGS ACK, WINDOW_UPDATE, HEADERS
//!   (header blocks from a real HPACK encoder, `httlib-hpack`, with h2's indexing choices)
//!   and DATA frames.
//! * [`Download`]: every message of one download in the order each side writes it.
//!
//! The lab's run loop drives a download on two TCP model connections (`coaplab_lab`'s
//! `sim::http`, beside the CoAP-over-TCP sessions).

pub mod download;
pub mod h1;
pub mod h2;

pub use download::{Download, Flight, HttpProtocol, Sender, Trigger};

/// The host the emulator's server has (`198.18.0.2`, port 80, so no `:PORT` in Host).
pub const DEFAULT_HOST: &str = "198.18.0.2";

/// The `user-agent` value of `coaplab http-get` (`coaplab/` + the crate version).
pub const USER_AGENT: &str = "coaplab/0.1.0";

/// A fixed `date` value for the standard response head. IMF-fixdate is always 29 B (the
/// HTTP/1.1 head does not depend on the instant), but its HPACK Huffman code is 22 to 24 B
/// depending on the digits; this instant codes to 23 B, as in the h2c capture of
/// docs/http-vs-coap.md (`61 97 df69…37ff`).
pub const FIXED_DATE: &str = "Tue, 24 Nov 2026 16:53:33 GMT";

/// The path of the object of `object_bytes` bytes (`/data/N`, as the CoAP server's).
pub fn data_path(object_bytes: usize) -> String {
    format!("/data/{object_bytes}")
}

/// The object body: byte i = i mod 256 (as the CoAP server's `/data/N`).
pub fn object_body(object_bytes: usize) -> Vec<u8> {
    (0..object_bytes).map(|i| (i % 256) as u8).collect()
}
