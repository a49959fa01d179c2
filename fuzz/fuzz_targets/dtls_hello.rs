//! Any datagram into the DTLS server's stateless front (`coaplab_emu::dtls::hello`, issue 32):
//! the ClientHello parser must not panic; what it accepts must give a HelloVerifyRequest of
//! the fixed size and, for a second ClientHello, a first one that parses back to the same
//! parameters; and a server layer fed the bytes from a peer it never answered must keep no
//! session (no cookie can be valid) and send at most one HelloVerifyRequest.
#![no_main]

use std::cell::RefCell;
use std::net::SocketAddr;

use coaplab_cc::time::Instant;
use coaplab_emu::dtls::hello::{self, COOKIE_BYTES, HELLO_VERIFY_BYTES};
use coaplab_emu::dtls::{Credentials, DtlsConfig, DtlsLayer};
use libfuzzer_sys::fuzz_target;

thread_local! {
    static SERVER: RefCell<DtlsLayer> = RefCell::new(
        DtlsLayer::server(DtlsConfig::new(Credentials::Psk {
            identity: None,
            key: b"secret".to_vec(),
        }))
        .expect("a PSK server"),
    );
}

fuzz_target!(|data: &[u8]| {
    if let Ok(h) = hello::parse(data) {
        assert!(h.session_id.len() <= 32);
        assert_eq!(h.random.len(), 32);
        assert!(h.message_seq <= 1);
        let hvr = hello::hello_verify_request(&h, &[7; COOKIE_BYTES]);
        assert_eq!(hvr.len(), HELLO_VERIFY_BYTES);
        if let Some(first) = hello::first_hello(&h) {
            let f = hello::parse(&first).expect("the first ClientHello parses");
            assert_eq!((f.random, f.session_id, f.rest), (h.random, h.session_id, h.rest));
            assert!(f.cookie.is_empty());
            assert_eq!((f.message_seq, f.record_seq + 1), (0, h.record_seq));
        }
    }
    SERVER.with(|s| {
        let mut server = s.borrow_mut();
        let from: SocketAddr = "192.0.2.1:5000".parse().expect("address");
        server.handle_datagram(Instant::ZERO, from, data, |_| panic!("plaintext without a session"));
        let mut sent = 0;
        while let Some((to, d)) = server.poll_transmit() {
            assert_eq!(to, from);
            assert_eq!(d.len(), HELLO_VERIFY_BYTES);
            sent += 1;
        }
        assert!(sent <= 1);
        assert_eq!(server.sessions(), 0);
    });
});
