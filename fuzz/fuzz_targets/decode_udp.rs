//! Any bytes: decoding must not panic; whatever decodes must re-encode to the same bytes and
//! every typed accessor must answer without panicking.
#![no_main]

use coaplab_wire::option::ReadOptions;
use coaplab_wire::{Message, MessageBuf};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(m) = Message::decode(data) {
        let _ = (m.uri_path(), m.uri_query(), m.uri_host(), m.block1(), m.block2());
        let _ = (m.content_format(), m.max_age_s(), m.size1(), m.size2(), m.observe());
        let owned = MessageBuf::from(m);
        assert_eq!(owned.to_bytes().expect("a decoded message encodes"), data);
    }
});
