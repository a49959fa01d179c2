//! Closing with FINs (docs/experiments.md §5.1: the client closes with a plain FIN after the
//! response).
//!
//! On [`TcpConfig::idealised`] (exact timers, no quick-ACK, bare SYNs): these pin the FIN /
//! delayed-ACK / RTO rules on exact instants; the defaults' timer wheel and quick-ACK would
//! move every instant without touching the rules (their own tests: `tcp_timer_wheel`,
//! `tcp_quickack`).

use crate::tcp_util::{nbiot, transfer, Pair};
use coaplab_netsim::tcp::{TcpConfig, TcpState};

fn close_after_transfer(p: &mut Pair) {
    transfer(p, 100);
    p.client.close();
    assert_eq!(
        p.client.write(&[1]),
        Err(coaplab_netsim::tcp::ConnectionFailed)
    );
    let mut server_closed = false;
    p.run(|p| {
        if p.server.peer_closed() && !server_closed {
            server_closed = true;
            p.server.close();
        }
        p.client.state() == TcpState::TimeWait && p.server.state() == TcpState::Closed
    });
}

#[test]
fn client_fin_then_server_fin_carrying_the_ack() {
    let (up, down) = nbiot();
    let mut p = Pair::new(TcpConfig::idealised(), up, down);
    close_after_transfer(&mut p);
    // The server's application closes on the FIN: its FIN carries the ACK (the ACK of a FIN
    // in ESTABLISHED is delayed); the client in FIN-WAIT-2 ACKs the server's FIN at once.
    assert_eq!(
        p.log[7..],
        [
            "1492533 C ACK 12 103 0",
            "1712866 C FIN 12 103 0",
            "1933200 S FIN 103 13 0",
            "2358866 C ACK 13 104 0",
        ]
    );
    assert_eq!(p.server.state(), TcpState::Closed);
    assert_eq!(p.client.state(), TcpState::TimeWait);
}

#[test]
fn a_lost_fin_is_retransmitted_by_the_rto() {
    let (mut up, down) = nbiot();
    up.drops = vec![5]; // SYN, ACK, CSM, GET, ACK of the response, FIN
    let mut p = Pair::new(TcpConfig::idealised(), up, down);
    close_after_transfer(&mut p);
    assert_eq!(
        p.log[7..],
        [
            "1492533 C ACK 12 103 0",
            "1712866 C FIN 12 103 0 DROP",
            "3655716 C FIN 12 103 0",
            "3876050 S FIN 103 13 0",
            "4301716 C ACK 13 104 0",
        ]
    );
    let s = p.client.stats();
    assert_eq!((s.segments_retransmitted, s.rto_count), (1, 1));
    assert_eq!(p.client.rto().as_micros(), 3_885_700);
}

#[test]
fn a_lost_last_ack_gets_the_fin_again_and_time_wait_answers() {
    let (mut up, down) = nbiot();
    up.drops = vec![6];
    let mut p = Pair::new(TcpConfig::idealised(), up, down);
    close_after_transfer(&mut p);
    assert_eq!(
        p.log[9..],
        [
            "1933200 S FIN 103 13 0",
            "2358866 C ACK 13 104 0 DROP",
            "3896266 S FIN 103 13 0",
            "4321932 C ACK 13 104 0",
        ]
    );
    assert_eq!(p.server.stats().rto_count, 1);
    assert_eq!(p.client.state(), TcpState::TimeWait);
}
