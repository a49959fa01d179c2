//! Arbitrary segments never panic a connection in any state; they are taken or refused with
//! a typed error.

use coaplab_base::time::Instant;
use coaplab_netsim::tcp::{Connection, Segment, TcpConfig, TcpConfigError};
use proptest::prelude::*;

fn segment() -> impl Strategy<Value = Segment> {
    (
        prop_oneof![0u64..3000, any::<u64>()],
        proptest::option::of(prop_oneof![0u64..3000, any::<u64>()]),
        any::<bool>(),
        any::<bool>(),
        proptest::collection::vec(any::<u8>(), 0..300),
    )
        .prop_map(|(seq, ack, syn, fin, payload)| Segment {
            seq,
            ack,
            syn,
            fin,
            payload,
            options_bytes: 0,
        })
}

proptest! {
    #[test]
    fn arbitrary_segments_never_panic(
        segs in proptest::collection::vec((segment(), 0i64..3_000_000_000), 1..40),
        client in any::<bool>(),
        establish in any::<bool>(),
    ) {
        let cfg = TcpConfig::default();
        let mut c = if client {
            Connection::connect(cfg).expect("valid")
        } else {
            Connection::listen(cfg).expect("valid")
        };
        let mut now = Instant::ZERO;
        c.write(&[1; 700]).expect("open");
        while c.poll_transmit(now).is_some() {}
        if establish {
            let syn = |ack| Segment { seq: 0, ack, syn: true, fin: false, payload: Vec::new(), options_bytes: 0 };
            if client {
                c.handle_segment(now, syn(Some(1))).expect("SYN-ACK");
            } else {
                c.handle_segment(now, syn(None)).expect("SYN");
                while c.poll_transmit(now).is_some() {}
                let ack = Segment { seq: 1, ack: Some(1), syn: false, fin: false, payload: Vec::new(), options_bytes: 0 };
                c.handle_segment(now, ack).expect("ACK");
            }
            while c.poll_transmit(now).is_some() {}
        }
        for (seg, dt) in segs {
            now += coaplab_base::time::Duration::from_nanos(dt);
            let _ = c.handle_segment(now, seg);
            if c.poll_timeout().is_some_and(|t| t <= now) {
                c.handle_timeout(now);
            }
            while c.poll_transmit(now).is_some() {}
        }
    }
}

#[test]
fn invalid_configs_are_refused() {
    let cfg = TcpConfig {
        mtu_bytes: 40,
        ..TcpConfig::default()
    };
    assert_eq!(
        Connection::connect(cfg).err(),
        Some(TcpConfigError::Mtu(40))
    );
    let cfg = TcpConfig {
        rto_min: coaplab_base::time::Duration::ZERO,
        ..TcpConfig::default()
    };
    assert_eq!(
        Connection::listen(cfg).err(),
        Some(TcpConfigError::Duration("rto_min"))
    );
}
