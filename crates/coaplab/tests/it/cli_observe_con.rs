//! Which notifications `coaplab server` sends as CON (RFC 7641 §4.5, `--observe-con-every`),
//! seen by a hand-made observer on a raw UDP socket: every 5th by default, as libcoap's server
//! does (COAP_OBS_MAX_NON), so an observer that vanished without a word (aiocoap-client
//! 0.4.17 on Ctrl-C sends neither a GET with Observe 1 nor an RST) is found out within five
//! periods plus one CON's retransmissions instead of the 24 h of §4.5.1's minimum; and the
//! RST answering a NON notification deregisters (§3.6).

use crate::support;

use std::net::UdpSocket;
use std::time::Duration;

use support::OurServer;

/// CON, NON, ACK, RST: the 2-bit Type of a CoAP header.
const CON: u8 = 0;
const NON: u8 = 1;
const ACK: u8 = 2;

/// An observer on a raw socket: registers for `/counter` on `port` with token 0xA0B0 and
/// returns the types of the first `n` notifications (each CON acknowledged) and the last
/// NON notification's Message ID.
/// The period (100 ms) leaves the ACK time to arrive before the next notification even on a
/// loaded machine: a CON still unacknowledged then would take the next state with it (§4.5.2).
fn observe_raw(sock: &UdpSocket, port: u16, n: usize) -> (Vec<u8>, u16) {
    sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    sock.connect(("127.0.0.1", port)).unwrap();
    // CON GET, MID 0x1234, token A0 B0, Observe (6) = 0 (empty), Uri-Path (11) "counter".
    let mut get = vec![0x42, 0x01, 0x12, 0x34, 0xa0, 0xb0, 0x60, 0x57];
    get.extend_from_slice(b"counter");
    sock.send(&get).unwrap();
    let mut types = Vec::new();
    let mut last_non = 0;
    let mut buf = [0u8; 1500];
    while types.len() < n {
        let len = sock.recv(&mut buf).expect("a notification within 5 s");
        let d = &buf[..len];
        assert!(
            len >= 6 && d[0] & 0x0f == 2 && d[4..6] == [0xa0, 0xb0],
            "{d:x?}"
        );
        assert_eq!(d[1], 0x45, "2.05 Content: {d:x?}");
        let mtype = (d[0] >> 4) & 3;
        if mtype == ACK {
            continue; // the registration's answer, piggybacked
        }
        types.push(mtype);
        match mtype {
            CON => {
                sock.send(&[0x60, 0x00, d[2], d[3]]).unwrap();
            }
            NON => last_non = u16::from_be_bytes([d[2], d[3]]),
            _ => panic!("{d:x?}"),
        }
    }
    (types, last_non)
}

/// The indices of the CON entries in `types`.
fn cons(types: &[u8]) -> Vec<usize> {
    (0..types.len()).filter(|&i| types[i] == CON).collect()
}

#[test]
fn every_fifth_notification_is_con_and_an_rst_deregisters() {
    let server = OurServer::start(&["--observe-period", "100ms"]);
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let (types, last_non) = observe_raw(&sock, server.port, 12);
    assert_eq!(cons(&types), [0, 5, 10], "{types:?}");
    // §3.6: an RST to a notification ends the observation; no notification follows it.
    let [hi, lo] = last_non.to_be_bytes();
    sock.send(&[0x70, 0x00, hi, lo]).unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut buf = [0u8; 1500];
    let mut late = 0;
    // Those already sent before the RST arrived may come; then none for 500 ms (5 periods).
    while sock.recv(&mut buf).is_ok() {
        late += 1;
        assert!(late <= 3, "notified after the RST");
    }
    let (status, stderr) = server.stop();
    assert!(status.success());
    assert!(
        stderr.contains("coaplab server: observers added=1 ") && stderr.contains(" reset=1"),
        "{stderr}"
    );
}

#[test]
fn con_every_zero_keeps_only_the_first_and_daily_con() {
    let server = OurServer::start(&["--observe-period", "100ms", "--observe-con-every", "0"]);
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let (types, _) = observe_raw(&sock, server.port, 12);
    assert_eq!(cons(&types), [0], "{types:?}");
    let (status, _) = server.stop();
    assert!(status.success());
}

#[test]
fn con_every_is_checked() {
    let o = support::run_bounded(
        support::coaplab().args(["server", "--observe-con-every", "x"]),
        None,
        Duration::from_secs(10),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--observe-con-every"),
        "{o:?}"
    );
}
