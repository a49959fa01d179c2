//! TCP Fast Open through the emulated zigbee link (MTU 128): with `coaplab emulate
//! --tcp-fastopen`, `coaplab http-get --tfo` fetches the server's cookie on an untimed warm-up
//! connection and the timed request rides in the SYN, as the link's pcap shows (tshark).
//! Without `--tcp-fastopen` (docs/experiments.md §5.3's tcp_fastopen=0) no SYN carries data.
//!
//! Needs root and /dev/net/tun, and tshark (skipped with a printed reason otherwise).

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use support::{assert_ok, coaplab, emulator_unavailable, pattern, peer, run_bounded};

const LIMIT: Duration = Duration::from_secs(60);

fn bin() -> String {
    env!("CARGO_BIN_EXE_coaplab").to_owned()
}

/// One fetch of /data/100 through the zigbee link; returns the pcap's path.
fn fetch(name: &str, h2: bool) -> PathBuf {
    let (pcap, o) = emulate(name, h2, true);
    assert_ok(&o, name);
    assert!(o.stdout == pattern(100), "{name}: body differs");
    pcap
}

/// `coaplab emulate` of `http-get --iot --tfo` (with or without the emulator's
/// --tcp-fastopen): the pcap's path and the output.
fn emulate(name: &str, h2: bool, emulator_tfo: bool) -> (PathBuf, std::process::Output) {
    let pcap = std::env::temp_dir().join(format!("coaplab-tfo-{name}-{}.pcap", std::process::id()));
    let server = format!("{} http-server --bind 0.0.0.0:80 --iot --tfo", bin());
    let version = if h2 {
        "--http2-prior-knowledge"
    } else {
        "--http1.1"
    };
    let mut cmd = coaplab();
    cmd.args(["emulate", "--preset", "zigbee", "--pcap"])
        .arg(&pcap)
        .args(["--server", &server]);
    if emulator_tfo {
        cmd.arg("--tcp-fastopen");
    }
    cmd.args([
        "--",
        &bin(),
        "http-get",
        "--iot",
        "--tfo",
        "--warm-up-gap",
        "300ms",
    ])
    .args([version, "http://$COAPLAB_SERVER_ADDR/data/100"]);
    (pcap.clone(), run_bounded(&mut cmd, None, LIMIT))
}

/// (tcp.stream, tcp.len, payload hex) of every SYN without ACK.
fn syns(tshark: &Path, pcap: &Path) -> Vec<(u32, usize, String)> {
    let o = Command::new(tshark)
        .arg("-r")
        .arg(pcap)
        .args(["-Y", "tcp.flags.syn==1 && tcp.flags.ack==0", "-T", "fields"])
        .args(["-e", "tcp.stream", "-e", "tcp.len", "-e", "tcp.payload"])
        .output()
        .expect("tshark");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let hex = f.get(2).unwrap_or(&"").replace(':', "");
            (f[0].parse().unwrap(), f[1].parse().unwrap(), hex)
        })
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn tfo_request_rides_in_the_syn() {
    if emulator_unavailable() {
        return;
    }
    let Some(tshark) = peer("tshark") else {
        return;
    };
    // HTTP/1.1: the warm-up SYN asks for a cookie and carries nothing; the timed one carries
    // the whole 44-B IoT request.
    let pcap = fetch("h1", false);
    let request = b"GET /data/100 HTTP/1.1\r\nhost: 198.18.0.2\r\n\r\n";
    assert_eq!(
        syns(&tshark, &pcap),
        vec![(0, 0, String::new()), (1, request.len(), hex(request))]
    );
    // tshark decodes both HTTP/1.1 exchanges (warm-up and timed).
    let o = Command::new(&tshark)
        .arg("-r")
        .arg(&pcap)
        .args([
            "-Y",
            "http.response.code==200",
            "-T",
            "fields",
            "-e",
            "tcp.stream",
        ])
        .output()
        .expect("tshark");
    assert_eq!(String::from_utf8_lossy(&o.stdout), "0\n1\n");
    let _ = std::fs::remove_file(&pcap);
    // h2c: the SYN carries as much as fits at MTU 128, 48 B (MSS 88 less 40 B of option
    // space): the 24-B connection preface and the first 24 B of the client's SETTINGS.
    let pcap = fetch("h2", true);
    let s = syns(&tshark, &pcap);
    assert_eq!(s.len(), 2, "{s:?}");
    assert_eq!(s[0].1, 0);
    assert_eq!((s[1].0, s[1].1), (1, 48));
    assert!(
        s[1].2
            .starts_with(&hex(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")),
        "{s:?}"
    );
    // tshark decodes both HEADERS frames (request and response) of the timed connection.
    let o = Command::new(&tshark)
        .arg("-r")
        .arg(&pcap)
        .args([
            "-d",
            "tcp.port==80,http2",
            "-Y",
            "tcp.stream==1 && http2.type==1",
        ])
        .args(["-T", "fields", "-e", "http2.header.value"])
        .output()
        .expect("tshark");
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text.contains("/data/100") && text.contains("200"), "{text}");
    let _ = std::fs::remove_file(&pcap);
    // Control: with docs/experiments.md §5.3's tcp_fastopen=0 the kernel refuses
    // TCP_FASTOPEN_CONNECT, and the client says so instead of measuring without Fast Open.
    let (pcap, o) = emulate("off", false, false);
    assert_eq!(o.status.code(), Some(4));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("is net.ipv4.tcp_fastopen 1 or 3?"), "{err}");
    let _ = std::fs::remove_file(&pcap);
}

/// CoAP beside it: `coaplab get --block-size 64` of /data/100 is two CON GETs with Block2
/// (SZX 2), and the pcap holds exactly these four datagrams: 45 + 102 + 45 + 74 = 266 B of
/// IPv4 (the figure docs/http-vs-coap.md gives).
#[test]
fn coap_blockwise_bytes_from_the_capture() {
    if emulator_unavailable() {
        return;
    }
    let Some(tshark) = peer("tshark") else {
        return;
    };
    let pcap = std::env::temp_dir().join(format!("coaplab-coap64-{}.pcap", std::process::id()));
    let server = format!("{} server --no-etags", bin());
    let o = run_bounded(
        coaplab()
            .args(["emulate", "--preset", "zigbee", "--pcap"])
            .arg(&pcap)
            .args([
                "--server",
                &server,
                "--",
                &bin(),
                "get",
                "--block-size",
                "64",
            ])
            .arg("coap://$COAPLAB_SERVER_ADDR/data/100"),
        None,
        LIMIT,
    );
    assert_ok(&o, "coap get");
    assert!(o.stdout == pattern(100));
    let o = Command::new(&tshark)
        .arg("-r")
        .arg(&pcap)
        .args([
            "-T",
            "fields",
            "-e",
            "ip.len",
            "-e",
            "coap.code",
            "-e",
            "coap.opt.block_number",
        ])
        .output()
        .expect("tshark");
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "45\t1\t0\n102\t69\t0\n45\t1\t1\n74\t69\t1\n"
    );
    let _ = std::fs::remove_file(&pcap);
}
