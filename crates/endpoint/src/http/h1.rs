//! HTTP/1.1 messages as hyper 1.x writes them (lower-case header names; docs/http-vs-coap.md
//! "Headers, byte by byte").

use super::{data_path, FIXED_DATE, USER_AGENT};

/// `GET /data/N` with hyper's client headers: `host`, then (standard only) `user-agent` and
/// `accept: */*` as `coaplab http-get` sets them. IoT keeps only Host, mandatory in HTTP/1.1.
pub fn request(host: &str, object_bytes: usize, iot: bool) -> Vec<u8> {
    let mut head = format!(
        "GET {} HTTP/1.1\r\nhost: {host}\r\n",
        data_path(object_bytes)
    );
    if !iot {
        head.push_str(&format!("user-agent: {USER_AGENT}\r\naccept: */*\r\n"));
    }
    head.push_str("\r\n");
    head.into_bytes()
}

/// The `200 OK` head for an `object_bytes` body. Standard: `content-type`, `server`,
/// `content-length` and hyper's `date` (fixed to [`FIXED_DATE`], always 29 B); IoT:
/// `content-length` only (`auto_date_header(false)`).
pub fn response_head(object_bytes: usize, iot: bool) -> Vec<u8> {
    let head = if iot {
        format!("HTTP/1.1 200 OK\r\ncontent-length: {object_bytes}\r\n\r\n")
    } else {
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\nserver: coaplab\r\n\
             content-length: {object_bytes}\r\ndate: {FIXED_DATE}\r\n\r\n"
        )
    };
    head.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::DEFAULT_HOST;

    /// The sizes docs/http-vs-coap.md gives for `/data/10` (from hyper's bytes in the pcap).
    #[test]
    fn sizes_for_data_10_match_hyper() {
        assert_eq!(request(DEFAULT_HOST, 10, false).len(), 83);
        assert_eq!(request(DEFAULT_HOST, 10, true).len(), 43);
        assert_eq!(response_head(10, false).len(), 133);
        assert_eq!(response_head(10, true).len(), 39);
        assert_eq!(
            request(DEFAULT_HOST, 100, true),
            b"GET /data/100 HTTP/1.1\r\nhost: 198.18.0.2\r\n\r\n"
        );
    }
}
