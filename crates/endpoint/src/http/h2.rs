//! HTTP/2 over cleartext TCP with prior knowledge (h2c) as hyper 1.x / h2 0.4 write it
//! (docs/http-vs-coap.md "HTTP/2 (h2c)").
//!
//! Header blocks come from a real HPACK encoder (`httlib-hpack`, RFC 7541) driven with the
//! choices the `h2` crate makes: every string Huffman-coded; a field found whole in the static
//! table sent indexed; `:path` and `content-length` sent without indexing (h2's
//! `skip_value_index`, borrowed from nghttp2); every other field with incremental indexing.

use httlib_hpack::Encoder;

use super::{data_path, FIXED_DATE, USER_AGENT};

/// The client connection preface, RFC 9113 §3.4 (24 B).
pub const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Every frame's header: 24-bit length, type, flags, 31-bit stream id (RFC 9113 §4.1).
pub const FRAME_HEADER_BYTES: usize = 9;

/// The largest frame payload both hyper ends announce (`SETTINGS_MAX_FRAME_SIZE`).
pub const MAX_FRAME_BYTES: usize = 16_384;

/// The stream id of the one request (client-initiated streams are odd).
pub const STREAM_ID: u32 = 1;

const TYPE_DATA: u8 = 0x0;
const TYPE_HEADERS: u8 = 0x1;
const TYPE_SETTINGS: u8 = 0x4;
const TYPE_WINDOW_UPDATE: u8 = 0x8;
const FLAG_END_STREAM: u8 = 0x1;
const FLAG_ACK: u8 = 0x1;
const FLAG_END_HEADERS: u8 = 0x4;

const SETTINGS_ENABLE_PUSH: u16 = 0x2;
const SETTINGS_MAX_CONCURRENT_STREAMS: u16 = 0x3;
const SETTINGS_INITIAL_WINDOW_SIZE: u16 = 0x4;
const SETTINGS_MAX_FRAME_SIZE: u16 = 0x5;
const SETTINGS_MAX_HEADER_LIST_SIZE: u16 = 0x6;

/// RFC 9113's default initial window, which `--iot` announces (and then needs no
/// WINDOW_UPDATE).
const DEFAULT_WINDOW_BYTES: u32 = 65_535;

/// One frame: header and payload.
pub fn frame(kind: u8, flags: u8, stream_id: u32, payload: &[u8]) -> Vec<u8> {
    let len = payload.len();
    let mut out = Vec::with_capacity(FRAME_HEADER_BYTES + len);
    out.extend_from_slice(&[(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags]);
    out.extend_from_slice(&(stream_id & 0x7fff_ffff).to_be_bytes());
    out.extend_from_slice(payload);
    out
}

fn settings(params: &[(u16, u32)]) -> Vec<u8> {
    let mut payload = Vec::with_capacity(6 * params.len());
    for (id, value) in params {
        payload.extend_from_slice(&id.to_be_bytes());
        payload.extend_from_slice(&value.to_be_bytes());
    }
    frame(TYPE_SETTINGS, 0, 0, &payload)
}

/// The client's SETTINGS (33 B): ENABLE_PUSH 0, INITIAL_WINDOW_SIZE (2 MiB; 65,535 with
/// `iot`), MAX_FRAME_SIZE and MAX_HEADER_LIST_SIZE 16,384, in h2's id order.
pub fn client_settings(iot: bool) -> Vec<u8> {
    let window = if iot { DEFAULT_WINDOW_BYTES } else { 2_097_152 };
    settings(&[
        (SETTINGS_ENABLE_PUSH, 0),
        (SETTINGS_INITIAL_WINDOW_SIZE, window),
        (SETTINGS_MAX_FRAME_SIZE, MAX_FRAME_BYTES as u32),
        (SETTINGS_MAX_HEADER_LIST_SIZE, 16_384),
    ])
}

/// The server's SETTINGS (33 B): MAX_CONCURRENT_STREAMS 200, INITIAL_WINDOW_SIZE (1 MiB;
/// 65,535 with `iot`), MAX_FRAME_SIZE and MAX_HEADER_LIST_SIZE 16,384.
pub fn server_settings(iot: bool) -> Vec<u8> {
    let window = if iot { DEFAULT_WINDOW_BYTES } else { 1_048_576 };
    settings(&[
        (SETTINGS_MAX_CONCURRENT_STREAMS, 200),
        (SETTINGS_INITIAL_WINDOW_SIZE, window),
        (SETTINGS_MAX_FRAME_SIZE, MAX_FRAME_BYTES as u32),
        (SETTINGS_MAX_HEADER_LIST_SIZE, 16_384),
    ])
}

/// SETTINGS with the ACK flag (9 B), each side's answer to the other's SETTINGS.
pub fn settings_ack() -> Vec<u8> {
    frame(TYPE_SETTINGS, FLAG_ACK, 0, &[])
}

/// The connection-level WINDOW_UPDATE (13 B) hyper sends after its SETTINGS to raise the
/// connection window from 65,535 to its configured size; none with `iot`.
pub fn connection_window_update(client: bool, iot: bool) -> Option<Vec<u8>> {
    if iot {
        return None;
    }
    let increment: u32 = if client { 5_177_345 } else { 983_041 };
    Some(frame(TYPE_WINDOW_UPDATE, 0, 0, &increment.to_be_bytes()))
}

/// How h2 represents one field (see the module documentation).
#[derive(Clone, Copy)]
enum Indexing {
    /// Incremental indexing (or indexed, when the static table holds name and value).
    Incremental,
    /// Literal without indexing (h2's `skip_value_index`).
    Skip,
}

/// HPACK-encodes `fields` on a fresh connection (empty dynamic table, 4,096 B).
fn header_block(fields: &[(&str, String, Indexing)]) -> Vec<u8> {
    let mut encoder = Encoder::with_dynamic_size(4_096);
    let mut block = Vec::new();
    for (name, value, indexing) in fields {
        let mut flags = Encoder::HUFFMAN_VALUE | Encoder::BEST_FORMAT;
        if let Indexing::Incremental = indexing {
            flags |= Encoder::WITH_INDEXING;
        }
        let field = (name.as_bytes().to_vec(), value.as_bytes().to_vec(), flags);
        // The names here are all in the static table and the values short ASCII: encoding
        // cannot fail.
        encoder
            .encode(field, &mut block)
            .expect("HPACK encoding of a static-named field");
    }
    block
}

/// The request's header block: `:method GET`, `:scheme http`, `:authority`, `:path`, then
/// (standard only) `user-agent` and `accept: */*` (19 B for `/data/10` IoT, 35 B standard).
pub fn request_block(host: &str, object_bytes: usize, iot: bool) -> Vec<u8> {
    use Indexing::*;
    let mut fields = vec![
        (":method", "GET".to_string(), Incremental),
        (":scheme", "http".to_string(), Incremental),
        (":authority", host.to_string(), Incremental),
        (":path", data_path(object_bytes), Skip),
    ];
    if !iot {
        fields.push(("user-agent", USER_AGENT.to_string(), Incremental));
        fields.push(("accept", "*/*".to_string(), Incremental));
    }
    header_block(&fields)
}

/// The response's header block: `:status 200`, then (standard) `content-type`, `server`,
/// `date`, and `content-length` unless the body is empty (6 B IoT for `/data/10`, 56 B
/// standard).
pub fn response_block(object_bytes: usize, iot: bool) -> Vec<u8> {
    use Indexing::*;
    let mut fields = vec![(":status", "200".to_string(), Incremental)];
    if !iot {
        fields.push((
            "content-type",
            "application/octet-stream".to_string(),
            Incremental,
        ));
        fields.push(("server", "coaplab".to_string(), Incremental));
        fields.push(("date", FIXED_DATE.to_string(), Incremental));
    }
    if object_bytes > 0 {
        fields.push(("content-length", object_bytes.to_string(), Skip));
    }
    header_block(&fields)
}

/// The request HEADERS frame (END_HEADERS | END_STREAM: a GET has no body).
pub fn request_headers(host: &str, object_bytes: usize, iot: bool) -> Vec<u8> {
    let block = request_block(host, object_bytes, iot);
    frame(
        TYPE_HEADERS,
        FLAG_END_HEADERS | FLAG_END_STREAM,
        STREAM_ID,
        &block,
    )
}

/// The response: one HEADERS frame, then DATA frames of at most [`MAX_FRAME_BYTES`] with
/// END_STREAM on the last; an empty body is END_STREAM on HEADERS (hyper's choice). Each
/// element is one frame. Bodies above the 65,535-B initial window are not modelled
/// (docs/experiments.md §8e's objects are at most 1,000 B).
pub fn response_frames(body: &[u8], iot: bool) -> Vec<Vec<u8>> {
    let block = response_block(body.len(), iot);
    if body.is_empty() {
        let flags = FLAG_END_HEADERS | FLAG_END_STREAM;
        return vec![frame(TYPE_HEADERS, flags, STREAM_ID, &block)];
    }
    let mut frames = vec![frame(TYPE_HEADERS, FLAG_END_HEADERS, STREAM_ID, &block)];
    let chunks = body.chunks(MAX_FRAME_BYTES);
    let last = chunks.len() - 1;
    for (i, chunk) in body.chunks(MAX_FRAME_BYTES).enumerate() {
        let flags = if i == last { FLAG_END_STREAM } else { 0 };
        frames.push(frame(TYPE_DATA, flags, STREAM_ID, chunk));
    }
    frames
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::DEFAULT_HOST;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// The HPACK bytes docs/http-vs-coap.md shows from the pcap of hyper's h2c.
    #[test]
    fn header_blocks_match_the_capture() {
        assert_eq!(
            request_block(DEFAULT_HOST, 10, true),
            hex("82 86 41 87 0bef2e179702e2 04 86 6241a46c041f")
        );
        assert_eq!(
            request_block(DEFAULT_HOST, 10, false),
            hex("82 86 41 87 0bef2e179702e2 04 86 6241a46c041f 7a 89 21c75d038d802e15c1 53 83 f963e7")
        );
        assert_eq!(response_block(10, true), hex("88 0f0d 82 083f"));
        let standard = response_block(10, false);
        assert_eq!(standard.len(), 56);
        assert!(standard.starts_with(&hex(
            "88 5f 90 1d75d0620d263d4c1c892a56426c28e9 76 85 21c75d038f 61 97 df69"
        )));
        assert!(standard.ends_with(&hex("37ff 0f0d 82 083f")));
    }

    #[test]
    fn control_frames_have_hypers_sizes() {
        assert_eq!(client_settings(false).len(), 33);
        assert_eq!(server_settings(true).len(), 33);
        assert_eq!(settings_ack(), hex("000000 04 01 00000000"));
        assert_eq!(
            connection_window_update(true, false).unwrap(),
            hex("000004 08 00 00000000 004f0001")
        );
        assert_eq!(connection_window_update(false, true), None);
    }

    #[test]
    fn empty_body_ends_the_stream_on_headers() {
        let frames = response_frames(&[], true);
        assert_eq!(frames.len(), 1);
        assert_eq!(frames[0][4], FLAG_END_HEADERS | FLAG_END_STREAM);
        assert_eq!(frames[0].len(), FRAME_HEADER_BYTES + 1);
    }
}
