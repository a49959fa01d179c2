//! Message types and codes (RFC 7252 §3, §12.1; RFC 8323 §5 signalling codes).

use core::fmt;

/// The 2-bit message type of an RFC 7252 datagram (RFC 7252 §3, §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MessageType {
    /// Confirmable (0): retransmitted until acknowledged.
    Con,
    /// Non-confirmable (1).
    Non,
    /// Acknowledgement (2).
    Ack,
    /// Reset (3).
    Rst,
}

impl MessageType {
    /// The type from the two header bits.
    pub const fn from_bits(bits: u8) -> MessageType {
        match bits & 0b11 {
            0 => MessageType::Con,
            1 => MessageType::Non,
            2 => MessageType::Ack,
            _ => MessageType::Rst,
        }
    }

    /// The two header bits.
    pub const fn bits(self) -> u8 {
        match self {
            MessageType::Con => 0,
            MessageType::Non => 1,
            MessageType::Ack => 2,
            MessageType::Rst => 3,
        }
    }

    /// The abbreviation used in RFC 7252's figures: CON, NON, ACK, RST.
    pub const fn as_str(self) -> &'static str {
        match self {
            MessageType::Con => "CON",
            MessageType::Non => "NON",
            MessageType::Ack => "ACK",
            MessageType::Rst => "RST",
        }
    }
}

impl fmt::Display for MessageType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An 8-bit code `c.dd`: a 3-bit class and a 5-bit detail (RFC 7252 §3, §12.1).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Code(pub u8);

impl Code {
    /// 0.00: an Empty message (RFC 7252 §4.1).
    pub const EMPTY: Code = Code::new(0, 0);
    /// 0.01 GET.
    pub const GET: Code = Code::new(0, 1);
    /// 0.02 POST.
    pub const POST: Code = Code::new(0, 2);
    /// 0.03 PUT.
    pub const PUT: Code = Code::new(0, 3);
    /// 0.04 DELETE.
    pub const DELETE: Code = Code::new(0, 4);
    /// 0.05 FETCH (RFC 8132).
    pub const FETCH: Code = Code::new(0, 5);
    /// 0.06 PATCH (RFC 8132).
    pub const PATCH: Code = Code::new(0, 6);
    /// 0.07 iPATCH (RFC 8132).
    pub const IPATCH: Code = Code::new(0, 7);
    /// 2.01 Created.
    pub const CREATED: Code = Code::new(2, 1);
    /// 2.02 Deleted.
    pub const DELETED: Code = Code::new(2, 2);
    /// 2.03 Valid.
    pub const VALID: Code = Code::new(2, 3);
    /// 2.04 Changed.
    pub const CHANGED: Code = Code::new(2, 4);
    /// 2.05 Content.
    pub const CONTENT: Code = Code::new(2, 5);
    /// 2.31 Continue (RFC 7959 §2.9.1).
    pub const CONTINUE: Code = Code::new(2, 31);
    /// 4.00 Bad Request.
    pub const BAD_REQUEST: Code = Code::new(4, 0);
    /// 4.01 Unauthorized.
    pub const UNAUTHORIZED: Code = Code::new(4, 1);
    /// 4.02 Bad Option.
    pub const BAD_OPTION: Code = Code::new(4, 2);
    /// 4.03 Forbidden.
    pub const FORBIDDEN: Code = Code::new(4, 3);
    /// 4.04 Not Found.
    pub const NOT_FOUND: Code = Code::new(4, 4);
    /// 4.05 Method Not Allowed.
    pub const METHOD_NOT_ALLOWED: Code = Code::new(4, 5);
    /// 4.06 Not Acceptable.
    pub const NOT_ACCEPTABLE: Code = Code::new(4, 6);
    /// 4.08 Request Entity Incomplete (RFC 7959 §2.9.2).
    pub const REQUEST_ENTITY_INCOMPLETE: Code = Code::new(4, 8);
    /// 4.12 Precondition Failed.
    pub const PRECONDITION_FAILED: Code = Code::new(4, 12);
    /// 4.13 Request Entity Too Large.
    pub const REQUEST_ENTITY_TOO_LARGE: Code = Code::new(4, 13);
    /// 4.15 Unsupported Content-Format.
    pub const UNSUPPORTED_CONTENT_FORMAT: Code = Code::new(4, 15);
    /// 5.00 Internal Server Error.
    pub const INTERNAL_SERVER_ERROR: Code = Code::new(5, 0);
    /// 5.01 Not Implemented.
    pub const NOT_IMPLEMENTED: Code = Code::new(5, 1);
    /// 5.02 Bad Gateway.
    pub const BAD_GATEWAY: Code = Code::new(5, 2);
    /// 5.03 Service Unavailable.
    pub const SERVICE_UNAVAILABLE: Code = Code::new(5, 3);
    /// 5.04 Gateway Timeout.
    pub const GATEWAY_TIMEOUT: Code = Code::new(5, 4);
    /// 5.05 Proxying Not Supported.
    pub const PROXYING_NOT_SUPPORTED: Code = Code::new(5, 5);
    /// 7.01 CSM (RFC 8323 §5.3).
    pub const CSM: Code = Code::new(7, 1);
    /// 7.02 Ping (RFC 8323 §5.4).
    pub const PING: Code = Code::new(7, 2);
    /// 7.03 Pong (RFC 8323 §5.4).
    pub const PONG: Code = Code::new(7, 3);
    /// 7.04 Release (RFC 8323 §5.5).
    pub const RELEASE: Code = Code::new(7, 4);
    /// 7.05 Abort (RFC 8323 §5.6).
    pub const ABORT: Code = Code::new(7, 5);

    /// The code `class.detail`; class is 0–7, detail 0–31 (higher bits are dropped).
    pub const fn new(class: u8, detail: u8) -> Code {
        Code(((class & 0x7) << 5) | (detail & 0x1f))
    }

    /// The 3-bit class.
    pub const fn class(self) -> u8 {
        self.0 >> 5
    }

    /// The 5-bit detail.
    pub const fn detail(self) -> u8 {
        self.0 & 0x1f
    }

    /// 0.00.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// A request method: class 0, detail 1–31.
    pub const fn is_request(self) -> bool {
        self.class() == 0 && self.detail() != 0
    }

    /// A response: classes 2, 4 and 5.
    pub const fn is_response(self) -> bool {
        matches!(self.class(), 2 | 4 | 5)
    }

    /// An error response: classes 4 and 5.
    pub const fn is_error(self) -> bool {
        matches!(self.class(), 4 | 5)
    }

    /// An RFC 8323 signalling code: class 7.
    pub const fn is_signal(self) -> bool {
        self.class() == 7
    }

    /// A reserved class (1, 3, 6) or a signalling code: RFC 7252 §4.2 has the recipient of
    /// such a datagram reject it.
    pub const fn is_reserved_for_udp(self) -> bool {
        matches!(self.class(), 1 | 3 | 6 | 7)
    }

    /// The registered name, when there is one (e.g. `"Content"`).
    pub fn name(self) -> Option<&'static str> {
        Some(match (self.class(), self.detail()) {
            (0, 0) => "Empty",
            (0, 1) => "GET",
            (0, 2) => "POST",
            (0, 3) => "PUT",
            (0, 4) => "DELETE",
            (0, 5) => "FETCH",
            (0, 6) => "PATCH",
            (0, 7) => "iPATCH",
            (2, 1) => "Created",
            (2, 2) => "Deleted",
            (2, 3) => "Valid",
            (2, 4) => "Changed",
            (2, 5) => "Content",
            (2, 31) => "Continue",
            (4, 0) => "Bad Request",
            (4, 1) => "Unauthorized",
            (4, 2) => "Bad Option",
            (4, 3) => "Forbidden",
            (4, 4) => "Not Found",
            (4, 5) => "Method Not Allowed",
            (4, 6) => "Not Acceptable",
            (4, 8) => "Request Entity Incomplete",
            (4, 9) => "Conflict",
            (4, 12) => "Precondition Failed",
            (4, 13) => "Request Entity Too Large",
            (4, 15) => "Unsupported Content-Format",
            (4, 22) => "Unprocessable Entity",
            (5, 0) => "Internal Server Error",
            (5, 1) => "Not Implemented",
            (5, 2) => "Bad Gateway",
            (5, 3) => "Service Unavailable",
            (5, 4) => "Gateway Timeout",
            (5, 5) => "Proxying Not Supported",
            (7, 1) => "CSM",
            (7, 2) => "Ping",
            (7, 3) => "Pong",
            (7, 4) => "Release",
            (7, 5) => "Abort",
            _ => return None,
        })
    }
}

/// `c.dd`, e.g. `2.05`.
impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:02}", self.class(), self.detail())
    }
}

/// `2.05 Content`.
impl fmt::Debug for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{self} {n}"),
            None => write!(f, "{self}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_and_detail_pack_into_one_byte() {
        // RFC 7252 §3: 2.05 is 0b010_00101 = 0x45.
        assert_eq!(Code::CONTENT.0, 0x45);
        assert_eq!(Code::CSM.0, 0xe1);
        assert_eq!(Code(0x84).to_string(), "4.04");
        assert_eq!(format!("{:?}", Code::NOT_FOUND), "4.04 Not Found");
        assert!(Code::GET.is_request() && !Code::EMPTY.is_request());
        assert!(Code::PING.is_signal() && Code::PING.is_reserved_for_udp());
    }
}
