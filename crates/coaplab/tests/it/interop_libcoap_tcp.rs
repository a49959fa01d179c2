//! Interop over TCP (RFC 8323, `coap+tcp://`) with libcoap 4.3 (Debian `libcoap3-bin`): our
//! client against `coap-server-notls` (which listens on TCP as well as UDP), and
//! `coap-client-notls` against `coaplab server --tcp`. Bytes are compared exactly; the `-v`
//! trace shows each body travelling as one message. Skipped with a printed reason when
//! libcoap is absent, unless CI is set.

use crate::support;

use std::time::Duration;

use support::{
    assert_ok, coaplab, libcoap_fetch, libcoap_server, noise, pattern, peer, peer_with_dir,
    run_bounded, OurServer,
};

const LIMIT: Duration = Duration::from_secs(60);

#[test]
fn our_tcp_client_against_libcoap_server() {
    let Some(bin) = peer("coap-server-notls") else {
        return;
    };
    let (_server, port) = libcoap_server(&bin, "coap+tcp", &[]);
    let uri = |p: &str| format!("coap+tcp://127.0.0.1:{port}/{p}");
    // PUT then POST 102,400 B, each read back: one message each way.
    for (j, method) in ["put", "post"].into_iter().enumerate() {
        let body = noise(102_400, j as u64 + 40);
        let path = format!("tcp-{method}");
        let o = run_bounded(
            coaplab().args([method, &uri(&path), "-v", "--payload-file", "-"]),
            Some(&body),
            LIMIT,
        );
        assert_ok(&o, method);
        let log = String::from_utf8(o.stderr).unwrap();
        // libcoap's CSM: Max-Message-Size 8 MiB + 256, Block-Wise-Transfer.
        assert!(
            log.contains("CSM max_message_size=8388864 block_wise_transfer=true"),
            "{log}"
        );
        assert_eq!(log.matches(" send request=").count(), 1, "{log}");
        let o = run_bounded(coaplab().args(["get", &uri(&path), "-v"]), None, LIMIT);
        assert_ok(&o, &format!("get {path}"));
        assert!(o.stdout == body, "{path} differs");
        let log = String::from_utf8(o.stderr).unwrap();
        assert_eq!(log.matches(" send request=").count(), 1, "{log}");
        assert!(log.contains(" payload=102400 "), "{log}");
    }
    // Small: the query reaches libcoap (/time?ticks: Unix seconds).
    let o = run_bounded(coaplab().args(["get", &uri("time?ticks")]), None, LIMIT);
    assert_ok(&o, "get time?ticks");
    assert!(
        o.stdout.len() >= 10 && o.stdout.iter().all(u8::is_ascii_digit),
        "{:?}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = run_bounded(coaplab().args(["get", &uri("nothing-here")]), None, LIMIT);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn libcoap_tcp_client_against_our_server() {
    let Some((client, dir)) = peer_with_dir("coap-client-notls", "libcoap-tcp") else {
        return;
    };
    let server = OurServer::start(&["--tcp"]);
    let out = dir.join("out.bin");
    let fetch = |args: &[&str]| libcoap_fetch(&client, &out, args, "coap-client", LIMIT);
    assert_eq!(fetch(&[&server.tcp_uri("data/10")]), pattern(10));
    assert!(fetch(&[&server.tcp_uri("data/102400")]) == pattern(102_400));
    let body = noise(102_400, 6);
    let file = dir.join("in.bin");
    std::fs::write(&file, &body).unwrap();
    let f = file.to_str().unwrap();
    for method in ["put", "post"] {
        let got = fetch(&["-m", method, "-f", f, &server.tcp_uri("echo")]);
        assert!(got == body, "{method} echo differs");
    }
    let core = fetch(&[&server.tcp_uri(".well-known/core")]);
    assert!(core.starts_with(b"</data/1024>;"), "{core:?}");
    let (status, stderr) = server.stop();
    assert!(status.success());
    // Five sessions, five requests, each answered as one message; nothing aborted.
    assert!(
        stderr.contains("tcp sessions=5 served=5 aborted=0 malformed=0 ignored=0"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
