//! `coaplab server --tcp` under abuse (coaplab issue 11, items 1, 2 and 5), on loopback with
//! bounded counts: huge /data/N answers 4.00 over UDP and TCP and the server lives on;
//! connections that stall from one address are refused beyond --tcp-max-per-source, aborted
//! after --tcp-stall-timeout, and never keep another client waiting; the exit line counts it
//! all.

use crate::support;

use std::io::Read;
use std::time::Duration;

use support::{coaplab, run_bounded, OurServer};

const LIMIT: Duration = Duration::from_secs(30);

/// `coaplab get URI`: exit code and stderr.
fn get(uri: &str) -> (Option<i32>, String) {
    let o = run_bounded(coaplab().args(["get", uri]), None, LIMIT);
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn huge_data_n_is_a_4_00_over_udp_and_tcp_and_the_server_lives_on() {
    let server = OurServer::start(&["--tcp"]);
    for n in [
        "1099511627776",
        "18446744073709551615",
        "9223372036854775808",
    ] {
        for uri in [
            server.uri(&format!("data/{n}")),
            server.tcp_uri(&format!("data/{n}")),
        ] {
            let (code, stderr) = get(&uri);
            assert_eq!(code, Some(1), "{uri}: {stderr}");
            assert!(stderr.contains("4.00"), "{uri}: {stderr}");
        }
    }
    // Within the limit but beyond the client's Max-Message-Size (8 MiB): 5.00, nothing built.
    let (code, stderr) = get(&server.tcp_uri("data/1000000000"));
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("5.00"), "{stderr}");
    assert_eq!(get(&server.tcp_uri("data/3")).0, Some(0));
    let (status, stderr) = server.stop();
    assert!(status.success());
    assert!(
        stderr.contains(" too_large=1 queue_full=0 panics=0"),
        "{stderr}"
    );
    // The limit is a flag.
    let server = OurServer::start(&["--tcp", "--max-data-bytes", "10"]);
    assert_eq!(get(&server.tcp_uri("data/10")).0, Some(0));
    assert_eq!(get(&server.uri("data/11")).0, Some(1));
    assert_eq!(get(&server.tcp_uri("data/11")).0, Some(1));
    assert!(server.stop().0.success());
}

#[test]
fn stalled_connections_from_one_address_do_not_keep_others_waiting() {
    let help = run_bounded(coaplab().args(["server", "--help"]), None, LIMIT);
    let help = String::from_utf8(help.stdout).unwrap();
    for flag in [
        "--tcp-max-connections <N>",
        "--tcp-max-per-source <N>",
        "--tcp-stall-timeout <D>",
        "--tcp-queue-bytes <BYTES>",
        "--tcp-queue-total-bytes <BYTES>",
        "--max-data-bytes <N>",
        "--tcp-min-rate <BYTES_PER_S>",
        "--tcp-evict-after <D>",
        "--unverified-replay-bytes <BYTES>",
    ] {
        assert!(help.contains(flag), "{flag}: {help}");
    }
    let server = OurServer::start(&[
        "--tcp",
        "--tcp-max-connections",
        "8",
        "--tcp-max-per-source",
        "4",
        "--tcp-stall-timeout",
        "1s",
    ]);
    let addr: std::net::SocketAddr = format!("127.0.0.1:{}", server.port).parse().unwrap();
    // 20 connections from 127.0.0.2, each a CSM and one byte of a request, then nothing.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let stalled: Vec<std::net::TcpStream> = rt.block_on(async {
        let mut v = Vec::new();
        for _ in 0..20 {
            let s = tokio::net::TcpSocket::new_v4().unwrap();
            s.bind("127.0.0.2:0".parse().unwrap()).unwrap();
            let s = s.connect(addr).await.unwrap().into_std().unwrap();
            s.set_nonblocking(false).unwrap();
            std::io::Write::write_all(&mut &s, &[0x00, 0xe1, 0x01]).unwrap();
            v.push(s);
        }
        v
    });
    // A client from 127.0.0.1 is served while the four admitted ones still hold their slots.
    assert_eq!(get(&server.tcp_uri("data/3")).0, Some(0));
    // Every stalled connection ends: 16 refused at once, 4 aborted after the stall timeout.
    for mut s in stalled {
        s.set_read_timeout(Some(LIMIT)).unwrap();
        let mut got = Vec::new();
        let _ = s.read_to_end(&mut got);
        assert_eq!(got[1], 0xe1, "{got:?}");
    }
    let (status, stderr) = server.stop();
    assert!(status.success());
    assert!(
        stderr
            .contains("timed_out=4 refused=0 refused_source=16 too_large=0 queue_full=0 panics=0"),
        "{stderr}"
    );
}
