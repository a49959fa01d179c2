//! Issue 16 items 2, 3 and 5 against real peers: libcoap's `coap-client-notls` and aiocoap's
//! `aiocoap-client` send FETCH, PATCH and iPATCH with Content-Format and Accept to our
//! server (exact bytes and codes: 4.15, 4.06), and filter `/.well-known/core`; our client
//! sends Content-Format and Accept to libcoap's `coap-server-notls` and prints the
//! response's options with `-v`. Skipped with a printed reason when a peer is absent,
//! unless CI is set.

use crate::support;

use std::process::Command;
use std::time::Duration;

use support::{
    assert_ok, coaplab, libcoap_fetch, libcoap_server, peer, peer_with_dir, run_bounded, OurServer,
};

const LIMIT: Duration = Duration::from_secs(30);

/// stdout and stderr of an output, as text.
fn said(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
}

#[test]
fn libcoap_client_fetches_and_patches_our_echo() {
    let Some((client, dir)) = peer_with_dir("coap-client-notls", "libcoap-formats") else {
        return;
    };
    let server = OurServer::start(&[]);
    let out = dir.join("out.bin");
    let echo = server.uri("echo");
    let fetch = |args: &[&str]| libcoap_fetch(&client, &out, args, "coap-client", LIMIT);
    for method in ["fetch", "patch", "ipatch"] {
        let got = fetch(&["-m", method, "-t", "json", "-e", "{\"a\":1}", &echo]);
        assert_eq!(got, b"{\"a\":1}", "{method}");
    }
    // Accept matching the echoed format (CBOR, 60).
    let got = fetch(&["-m", "fetch", "-t", "cbor", "-A", "cbor", "-e", "xy", &echo]);
    assert_eq!(got, b"xy");
    // application/link-format is not a format /echo takes; JSON is not the echoed text.
    let refused = |args: &[&str]| {
        let o = run_bounded(Command::new(&client).args(args), None, LIMIT);
        said(&o)
    };
    let s = refused(&["-B", "20", "-m", "post", "-t", "40", "-e", "x", &echo]);
    assert!(s.contains("4.15"), "{s}");
    let s = refused(&[
        "-B", "20", "-m", "post", "-t", "0", "-A", "50", "-e", "x", &echo,
    ]);
    assert!(s.contains("4.06"), "{s}");
    // RFC 6690 §4.1 filtering.
    let core = fetch(&[&server.uri(".well-known/core?rt=coaplab.time")]);
    assert_eq!(
        String::from_utf8(core).unwrap(),
        "</time>;rt=\"coaplab.time\";if=\"core.s\";ct=0;title=\"Unix time in seconds\""
    );
    let core = fetch(&[&server.uri(".well-known/core?href=/e*")]);
    assert!(core.starts_with(b"</echo>;rt=\"coaplab.echo\""), "{core:?}");
    server.stop_clean();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn aiocoap_client_fetches_and_patches_our_echo() {
    let Some(client) = peer("aiocoap-client") else {
        return;
    };
    let server = OurServer::start(&[]);
    let echo = server.uri("echo");
    let run = |args: &[&str]| run_bounded(Command::new(&client).args(args), None, LIMIT);
    for method in ["FETCH", "PATCH", "iPATCH"] {
        let o = run(&[
            "-m",
            method,
            "--content-format",
            "0",
            "--payload",
            "hi",
            &echo,
        ]);
        assert_ok(&o, method);
        assert_eq!(o.stdout, b"hi", "{method}");
    }
    let o = run(&[
        "-m",
        "POST",
        "--content-format",
        "application/link-format",
        "--payload",
        "x",
        &echo,
    ]);
    assert!(
        said(&o).contains("4.15 Unsupported Content Format"),
        "{}",
        said(&o)
    );
    let o = run(&["--accept", "application/json", &server.uri("time")]);
    assert!(said(&o).contains("4.06 Not Acceptable"), "{}", said(&o));
    let o = run(&["--accept", "0", &server.uri("time")]);
    assert_ok(&o, "accept text/plain");
    assert!(
        o.stdout.iter().take(10).all(u8::is_ascii_digit),
        "{}",
        said(&o)
    );
    let (status, _) = server.stop();
    assert!(status.success());
}

#[test]
fn our_client_sends_formats_to_libcoap_server() {
    let Some(bin) = peer("coap-server-notls") else {
        return;
    };
    let (_server, port) = libcoap_server(&bin, "coap", &[]);
    let uri = format!("coap://127.0.0.1:{port}/formats");
    let o = run_bounded(
        coaplab().args(["put", &uri, "-t", "json", "--payload", "{\"v\":2}"]),
        None,
        LIMIT,
    );
    assert_ok(&o, "put -t json");
    // libcoap stores the Content-Format with the resource and answers it.
    let o = run_bounded(
        coaplab().args(["get", "-v", "-A", "json", &uri]),
        None,
        LIMIT,
    );
    assert_ok(&o, "get -A json");
    assert_eq!(o.stdout, b"{\"v\":2}");
    let log = String::from_utf8_lossy(&o.stderr);
    let shown: Vec<&str> = log.lines().filter(|l| !l.starts_with("t=")).collect();
    assert_eq!(
        shown,
        [
            "2.05 Content",
            "  Content-Format: 50 (application/json)",
            "  Block2: 0/0/1024"
        ]
    );
    // libcoap 4.3's example server has no FETCH on its resources: 4.05, exit 1.
    let o = run_bounded(
        coaplab().args(["fetch", "-t", "json", "--payload", "{}", &uri]),
        None,
        LIMIT,
    );
    assert_eq!(o.status.code(), Some(1), "{}", said(&o));
    assert!(said(&o).contains("4.05"), "{}", said(&o));
}
