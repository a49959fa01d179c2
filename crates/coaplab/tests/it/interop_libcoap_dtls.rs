//! coaps:// (DTLS 1.2, RFC 7252 §9) interop with libcoap 4.3's OpenSSL programs (Debian
//! `libcoap3-bin`): our client against `coap-server-openssl -k KEY`, `coap-client-openssl
//! -k KEY -u ID` against our server, with exact bytes both ways; a wrong key exits 4 on
//! both sides of ours; and certificates (a self-signed one made at test time) between our
//! own client and server. Skipped with a printed reason when libcoap is absent, unless CI
//! is set.

use crate::support;

use std::io::BufRead;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use support::{
    assert_ok, assert_wrong_psk_fails, coaplab, emulator_unavailable, first_answer, noise, pattern,
    peer, peer_with_dir, run_bounded, spawn_quiet, Guard, OurServer,
};

const LIMIT: Duration = Duration::from_secs(60);
const KEY: &str = "coaplab-secret";
const ID: &str = "coaplab-client";

/// `-k KEY -u ID`, as both libcoap's client and ours take them.
fn psk(key: &str) -> [&str; 4] {
    ["-k", key, "-u", ID]
}

/// Our server with coaps:// on a free port; returns it and the DTLS port.
fn our_dtls_server(extra: &[&str]) -> (OurServer, u16) {
    let mut server = OurServer::start(&[&["--dtls-bind", "127.0.0.1:0"], extra].concat());
    let mut line = String::new();
    server_stderr(&mut server).read_line(&mut line).unwrap();
    assert!(line.contains("dtls listening on"), "{line}");
    let port = support::listening_port(&line);
    (server, port)
}

fn server_stderr(s: &mut OurServer) -> &mut impl BufRead {
    s.stderr_mut()
}

#[test]
fn our_client_against_libcoap_dtls_server() {
    let Some(bin) = peer("coap-server-openssl") else {
        return;
    };
    let port = support::free_tcp_udp_ports(2);
    let p = port.to_string();
    let _server: Guard = spawn_quiet(&bin, &["-A", "127.0.0.1", "-p", &p, "-d", "50", "-k", KEY]);
    let uri = |path: &str| format!("coaps://127.0.0.1:{}/{path}", port + 1);
    let o = first_answer(&uri(""), &psk(KEY), "coap-server-openssl");
    assert!(o
        .stdout
        .starts_with(b"This is a test server made with libcoap"));
    // A block-wise upload, read back block-wise, exact bytes.
    let body = noise(5000, 3);
    let o = run_bounded(
        coaplab()
            .args(["put", &uri("dtls"), "--payload-file", "-"])
            .args(psk(KEY)),
        Some(&body),
        LIMIT,
    );
    assert_ok(&o, "put over DTLS");
    let o = run_bounded(
        coaplab().args(["get", &uri("dtls"), "-v"]).args(psk(KEY)),
        None,
        LIMIT,
    );
    assert_ok(&o, "get over DTLS");
    assert!(o.stdout == body, "coaps GET differs");
    let log = String::from_utf8_lossy(&o.stderr);
    assert!(log.contains("cipher=PSK-AES128-CCM8"), "{log}");
    // A wrong key: libcoap drops our undecryptable Finished silently; we fail on the stall.
    assert_wrong_psk_fails(&uri("dtls"), ID, LIMIT);
}

#[test]
fn libcoap_dtls_client_against_our_server() {
    let Some((client, dir)) = peer_with_dir("coap-client-openssl", "libcoap-dtls") else {
        return;
    };
    let (server, dport) = our_dtls_server(&["-k", KEY, "-u", ID]);
    let uri = |path: &str| format!("coaps://127.0.0.1:{dport}/{path}");
    let out = dir.join("out.bin");
    let fetch = |args: &[&str]| -> (Option<i32>, Vec<u8>) {
        let _ = std::fs::remove_file(&out);
        let o = run_bounded(
            Command::new(&client)
                .args(["-B", "20", "-o"])
                .arg(&out)
                .args(args),
            None,
            LIMIT,
        );
        (o.status.code(), std::fs::read(&out).unwrap_or_default())
    };
    let d = uri("data/2000");
    assert_eq!(
        fetch(&[&psk(KEY)[..], &[&d]].concat()),
        (Some(0), pattern(2000))
    );
    let body = noise(3000, 9);
    let file = dir.join("in.bin");
    std::fs::write(&file, &body).unwrap();
    let f = file.to_str().unwrap();
    let e = uri("echo");
    let (code, got) = fetch(&[&psk(KEY)[..], &["-m", "put", "-f", f, &e]].concat());
    assert_eq!(code, Some(0));
    assert!(got == body, "echo over DTLS differs");
    // A wrong key: nothing is fetched (libcoap gives up within its -B bound).
    let (code, got) = fetch(&[&psk("wrong-key")[..], &["-B", "3", &d]].concat());
    assert!(got.is_empty(), "fetched with a wrong key");
    assert_eq!(
        code,
        Some(0),
        "libcoap 4.3.1 exits 0 when the handshake fails"
    );
    let stderr = server.stop_clean();
    assert!(stderr.contains(" handshakes=2 "), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A self-signed P-256 certificate for CN=localhost: (cert.pem, key.pem) in `dir`.
fn self_signed(dir: &Path) -> (String, String) {
    use openssl::asn1::Asn1Time;
    use openssl::ec::{EcGroup, EcKey};
    use openssl::hash::MessageDigest;
    use openssl::nid::Nid;
    use openssl::pkey::PKey;
    use openssl::x509::{X509NameBuilder, X509};
    let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).unwrap();
    let key = PKey::from_ec_key(EcKey::generate(&group).unwrap()).unwrap();
    let mut name = X509NameBuilder::new().unwrap();
    name.append_entry_by_text("CN", "localhost").unwrap();
    let name = name.build();
    let mut b = X509::builder().unwrap();
    b.set_version(2).unwrap();
    b.set_subject_name(&name).unwrap();
    b.set_issuer_name(&name).unwrap();
    b.set_pubkey(&key).unwrap();
    b.set_not_before(&Asn1Time::days_from_now(0).unwrap())
        .unwrap();
    b.set_not_after(&Asn1Time::days_from_now(1).unwrap())
        .unwrap();
    b.sign(&key, MessageDigest::sha256()).unwrap();
    let cert = dir.join("cert.pem");
    let pkey = dir.join("key.pem");
    std::fs::write(&cert, b.build().to_pem().unwrap()).unwrap();
    std::fs::write(&pkey, key.private_key_to_pem_pkcs8().unwrap()).unwrap();
    (cert.display().to_string(), pkey.display().to_string())
}

#[test]
fn certificates_between_our_client_and_server() {
    let dir = std::env::temp_dir().join(format!("coaplab-dtls-cert-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (cert, key) = self_signed(&dir);
    let (server, dport) = our_dtls_server(&["--cert", &cert, "--key", &key]);
    let uri = format!("coaps://127.0.0.1:{dport}/data/3000");
    let o = run_bounded(
        coaplab().args(["get", &uri, "--ca", &cert, "-v"]),
        None,
        LIMIT,
    );
    assert_ok(&o, "get with the server's certificate trusted");
    assert_eq!(o.stdout, pattern(3000));
    let log = String::from_utf8_lossy(&o.stderr);
    // RFC 7252 §9.1.3.3's mandatory suite is the first offered and accepted.
    assert!(log.contains("cipher=ECDHE-ECDSA-AES128-CCM8"), "{log}");
    // Without --ca the self-signed certificate is not trusted: an alert, exit 4 at once.
    let o = run_bounded(
        coaplab().args(["get", &uri, "-c", &cert, "-j", &key]),
        None,
        LIMIT,
    );
    assert_eq!(
        o.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("certificate verify failed"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let (status, stderr) = server.stop();
    assert!(status.success());
    assert!(stderr.contains(" handshakes=1 "), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Exit codes of `coaplab get coaps://` without a peer program: 2 for missing or misplaced
/// credentials, 3 for a silent server (`--timeout`), 4 for a refused port and a wrong key.
#[test]
fn coaps_exit_codes() {
    let code = |args: &[&str]| {
        let o = run_bounded(coaplab().arg("get").args(args), None, LIMIT);
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (c, err) = code(&["coaps://127.0.0.1:1/x"]);
    assert_eq!(c, Some(2), "{err}");
    assert!(err.contains("needs credentials"), "{err}");
    let (c, err) = code(&["coap://127.0.0.1:1/x", "-k", KEY]);
    assert_eq!(c, Some(2), "{err}");
    // Nothing listens: the ICMP port unreachable ends the handshake.
    let dead = support::free_udp_port().to_string();
    let (c, err) = code(&[&format!("coaps://127.0.0.1:{dead}/x"), "-k", KEY]);
    assert_eq!(c, Some(4), "{err}");
    // A socket that never answers: the whole request's --timeout.
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let uri = format!("coaps://127.0.0.1:{port}/x");
    let (c, err) = code(&[&uri, "-k", KEY, "--timeout", "300ms"]);
    assert_eq!(c, Some(3), "{err}");
    // Our own server and a wrong key: the stall.
    let (server, dport) = our_dtls_server(&["-k", KEY]);
    let uri = format!("coaps://127.0.0.1:{dport}/data/10");
    let (c, err) = code(&[&uri, "-k", "wrong", "--dtls-stall", "1s"]);
    assert_eq!(c, Some(4), "{err}");
    assert!(err.contains("wrong pre-shared key"), "{err}");
    let (c, _) = code(&[&uri, "-k", KEY]);
    assert_eq!(c, Some(0));
    let (status, stderr) = server.stop();
    assert!(status.success());
    assert!(stderr.contains(" handshakes=1 "), "{stderr}");
}

/// The handshake crosses the emulated nbiot link like any other traffic: our client fetches
/// /data/100 over coaps:// from our server behind `coaplab emulate --preset nbiot`; exact
/// bytes, and the handshake's three flights each way (docs/real-sockets.md has the cost).
/// Needs root and /dev/net/tun (skipped with a printed reason otherwise).
#[test]
fn coaps_through_the_emulated_nbiot_link() {
    if emulator_unavailable() {
        return;
    }
    let bin = env!("CARGO_BIN_EXE_coaplab");
    let server = format!("{bin} server --dtls -k {KEY}");
    let o = run_bounded(
        coaplab().args([
            "emulate",
            "--preset",
            "nbiot",
            "--seed",
            "1",
            "--server",
            &server,
            "--",
            bin,
            "get",
            "coaps://$COAPLAB_SERVER_ADDR/data/100",
            "-k",
            KEY,
            "-u",
            ID,
            "-v",
        ]),
        None,
        LIMIT,
    );
    assert_ok(&o, "coaps:// through nbiot");
    assert_eq!(o.stdout, pattern(100));
    let log = String::from_utf8_lossy(&o.stderr);
    let line = log
        .lines()
        .find(|l| l.contains("dtls handshake done"))
        .unwrap_or_else(|| panic!("{log}"));
    // ClientHello, ClientHello + cookie, key exchange + Finished; HelloVerifyRequest,
    // ServerHello…Done, Finished.
    assert!(
        line.contains(" out=3 datagrams/") && line.contains(" in=3 datagrams/"),
        "{line}"
    );
    assert!(log.contains(" handshakes=1 "), "{log}");
}

/// Certificates with libcoap both ways, a self-signed P-256 certificate made at test time:
/// our client (`--ca`) → `coap-server-openssl -c -j`, and `coap-client-openssl -R` (trusted
/// CA) → our server (`--cert --key`); exact bytes.
#[test]
fn certificates_with_libcoap_both_ways() {
    let Some((server_bin, dir)) = peer_with_dir("coap-server-openssl", "libcoap-dtls-cert") else {
        return;
    };
    let Some(client_bin) = peer("coap-client-openssl") else {
        return;
    };
    let (cert, key) = self_signed(&dir);
    let port = support::free_tcp_udp_ports(2);
    let p = port.to_string();
    let _libcoap = spawn_quiet(
        &server_bin,
        &[
            "-A",
            "127.0.0.1",
            "-p",
            &p,
            "-d",
            "10",
            "-c",
            &cert,
            "-j",
            &key,
        ],
    );
    let uri = format!("coaps://127.0.0.1:{}/", port + 1);
    let o = first_answer(&uri, &["--ca", &cert], "coap-server-openssl -c");
    assert!(o
        .stdout
        .starts_with(b"This is a test server made with libcoap"));
    let (ours, dport) = our_dtls_server(&["--cert", &cert, "--key", &key]);
    let out = dir.join("out.bin");
    let o = run_bounded(
        Command::new(&client_bin)
            .args(["-B", "20", "-R", &cert, "-o"])
            .arg(&out)
            .arg(format!("coaps://127.0.0.1:{dport}/data/2000")),
        None,
        LIMIT,
    );
    assert_ok(&o, "coap-client-openssl -R");
    assert_eq!(std::fs::read(&out).unwrap(), pattern(2000));
    let (status, stderr) = ours.stop();
    assert!(status.success());
    assert!(stderr.contains(" handshakes=1 "), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
