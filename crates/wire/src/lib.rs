//! The CoAP wire codec: RFC 7252 messages, RFC 7959 block options, RFC 8323 framing. No I/O.
