//! [`Request`]: what a client asks an endpoint (UDP or an RFC 8323 session) to send.

use coaplab_wire::option::OptionList;
use coaplab_wire::Code;

/// A request to send: method, path, payload, message type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The method (GET, POST, PUT, DELETE, …).
    pub method: Code,
    /// Uri-Path segments separated by `/` (e.g. `"f"`, `"data/1000"`).
    pub path: String,
    /// Uri-Query arguments (each `key=value` or a bare word), sent with every block.
    pub query: Vec<String>,
    /// The body; sent block-wise (Block1) when larger than the block size.
    pub payload: Vec<u8>,
    /// CON (retransmitted under congestion control) or NON.
    pub confirmable: bool,
    /// Further options, sent with every block in number order among the endpoint's own
    /// (Uri-Path, Uri-Query, Block1/Block2, Size1, Echo): e.g. Content-Format, Accept,
    /// If-Match, ETag, Size2 0 (RFC 7959 §4) or an application's own number.
    pub options: OptionList,
}

impl Request {
    /// A CON GET of `path`.
    pub fn get(path: &str) -> Request {
        Request {
            method: Code::GET,
            path: path.to_owned(),
            query: Vec::new(),
            payload: Vec::new(),
            confirmable: true,
            options: OptionList::new(),
        }
    }

    /// A CON POST of `payload` to `path`.
    pub fn post(path: &str, payload: Vec<u8>) -> Request {
        Request {
            method: Code::POST,
            path: path.to_owned(),
            query: Vec::new(),
            payload,
            confirmable: true,
            options: OptionList::new(),
        }
    }

    /// A CON PUT of `payload` to `path`.
    pub fn put(path: &str, payload: Vec<u8>) -> Request {
        Request {
            method: Code::PUT,
            ..Request::post(path, payload)
        }
    }

    /// The same request as NON (no retransmission, no congestion control).
    pub fn non(mut self) -> Request {
        self.confirmable = false;
        self
    }
}
