//! TCP Fast Open (RFC 7413) of a [`super::Connection`]: a client with a cookie sends data in its
//! SYN; a client without one asks for it; a Fast Open server accepts SYN data and may send
//! before the handshake completes, and hands out a cookie when asked. What each SYN's TFO
//! option costs is [`TFO_OPTION_BYTES`] / [`TFO_REQUEST_OPTION_BYTES`].

use crate::tcp::segment::{MAX_TCP_OPTION_SPACE, TFO_OPTION_BYTES, TFO_REQUEST_OPTION_BYTES};

/// One end's Fast Open mode and cookie exchange.
#[derive(Debug, Clone, Default)]
pub(super) struct FastOpen {
    /// Client: has a cookie, sends data in the SYN. Server: accepts SYN data.
    enabled: bool,
    /// Client: data bytes the first SYN carried (0 without TFO or without data).
    syn_data_bytes: u64,
    /// TFO without a cookie yet: a client's SYNs ask for one; a Fast Open server's SYN-ACK
    /// hands one out because the SYN asked.
    cookie_request: bool,
    /// Client: the SYN-ACK carried a cookie (a later connection may send data in its SYN).
    cookie_received: bool,
}

impl FastOpen {
    /// Client with a cookie, or a Fast Open server.
    pub(super) fn enable(&mut self) {
        self.enabled = true;
    }

    /// Client without a cookie: its SYN asks for one.
    pub(super) fn request_cookie(&mut self) {
        self.cookie_request = true;
    }

    /// Whether Fast Open is on (client with a cookie, or a Fast Open server).
    pub(super) fn enabled(&self) -> bool {
        self.enabled
    }

    /// Whether the SYN-ACK carried the cookie this client asked for.
    pub(super) fn cookie_received(&self) -> bool {
        self.cookie_received
    }

    /// Client: data bytes the first SYN carried.
    pub(super) fn syn_data_bytes(&self) -> u64 {
        self.syn_data_bytes
    }

    /// Client: the first SYN carried `bytes` of data.
    pub(super) fn on_syn_data_sent(&mut self, bytes: u64) {
        self.syn_data_bytes = bytes;
    }

    /// The most data bytes a SYN carries at `mss`: MSS − 40 (Linux `tcp_send_syn_data`).
    pub(super) fn max_syn_data(mss: u32) -> u32 {
        mss.saturating_sub(MAX_TCP_OPTION_SPACE).max(1)
    }

    /// A client SYN's TFO option bytes: the cookie with data, the request without a cookie.
    pub(super) fn client_syn_option_bytes(&self) -> u32 {
        if self.enabled {
            TFO_OPTION_BYTES
        } else if self.cookie_request {
            TFO_REQUEST_OPTION_BYTES
        } else {
            0
        }
    }

    /// A server SYN-ACK's TFO option bytes: a cookie when the SYN asked (the same option's
    /// size as a client's cookie).
    pub(super) fn synack_option_bytes(&self) -> u32 {
        if self.cookie_request {
            TFO_OPTION_BYTES
        } else {
            0
        }
    }

    /// Server: a SYN arrived with `tfo_bytes` of TFO option; returns whether its data is
    /// accepted. A TFO option without a cookie asks for one (RFC 7413 §4.1.2).
    pub(super) fn on_syn(&mut self, tfo_bytes: u32, has_data: bool) -> bool {
        self.cookie_request = self.enabled && tfo_bytes == TFO_REQUEST_OPTION_BYTES;
        self.enabled && tfo_bytes > 0 && has_data
    }

    /// Client: whether a SYN-ACK's `ack` fits this SYN (its data acknowledged or not).
    pub(super) fn synack_acceptable(&self, ack: u64) -> bool {
        ack == 1 || ack == 1 + self.syn_data_bytes
    }

    /// Client: the SYN-ACK arrived with `tfo_bytes` of TFO option.
    pub(super) fn on_synack(&mut self, tfo_bytes: u32) {
        self.cookie_received = self.cookie_request && tfo_bytes > 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syn_options_say_cookie_request_or_nothing() {
        let mut with_cookie = FastOpen::default();
        with_cookie.enable();
        assert_eq!(with_cookie.client_syn_option_bytes(), TFO_OPTION_BYTES);
        let mut asking = FastOpen::default();
        asking.request_cookie();
        assert_eq!(asking.client_syn_option_bytes(), TFO_REQUEST_OPTION_BYTES);
        assert_eq!(FastOpen::default().client_syn_option_bytes(), 0);
        // MTU 128: MSS 88, at most 48 B of SYN data (Linux `tcp_send_syn_data`).
        assert_eq!(FastOpen::max_syn_data(88), 48);
    }

    #[test]
    fn a_fast_open_server_accepts_syn_data_and_answers_a_cookie_request() {
        let mut server = FastOpen::default();
        server.enable();
        assert!(
            server.on_syn(TFO_OPTION_BYTES, true),
            "cookie and data: accepted"
        );
        assert_eq!(server.synack_option_bytes(), 0);
        assert!(!server.on_syn(TFO_REQUEST_OPTION_BYTES, false));
        assert_eq!(server.synack_option_bytes(), TFO_OPTION_BYTES);
        // A plain listener neither accepts data nor hands out cookies.
        let mut plain = FastOpen::default();
        assert!(!plain.on_syn(TFO_OPTION_BYTES, true));
        assert_eq!(plain.synack_option_bytes(), 0);
    }

    #[test]
    fn a_client_takes_a_synack_for_its_syn_with_or_without_its_data() {
        let mut client = FastOpen::default();
        client.enable();
        client.on_syn_data_sent(48);
        assert!(client.synack_acceptable(1) && client.synack_acceptable(49));
        assert!(!client.synack_acceptable(30));
        let mut asking = FastOpen::default();
        asking.request_cookie();
        asking.on_synack(TFO_OPTION_BYTES);
        assert!(asking.cookie_received());
    }
}
