//! Interop with libcoap 4.3 (Debian `libcoap3-bin`): our client against `coap-server-notls`
//! (with and without its `-l loss%`), and `coap-client-notls` against our server. Bytes are
//! compared exactly. Skipped with a printed reason when libcoap is absent, unless CI is set.

use crate::support;

use std::process::Command;
use std::time::Duration;

use support::{
    assert_ok, coaplab, libcoap_fetch, libcoap_server, noise, pattern, peer, peer_with_dir,
    run_bounded, verbose_get, verbose_put, OurServer,
};

const LIMIT: Duration = Duration::from_secs(60);
const ALGORITHMS: [&str; 3] = ["default", "cocoa", "fasor"];

#[test]
fn our_client_against_libcoap_server() {
    let Some(bin) = peer("coap-server-notls") else {
        return;
    };
    let (_server, port) = libcoap_server(&bin, "coap", &[]);
    let uri = |p: &str| format!("coap://127.0.0.1:{port}/{p}");
    for (i, cc) in ALGORITHMS.into_iter().enumerate() {
        // PUT then POST a 102,400-B body with Block1, each read back with Block2.
        for (j, method) in ["put", "post"].into_iter().enumerate() {
            let body = noise(102_400, (10 * i + j) as u64 + 1);
            let path = format!("{method}-{cc}");
            // libcoap re-processes a retransmitted last Block1 block of an upload it has
            // completed as a new one-block upload (the note above the loss tests). On loopback
            // that happens only when a CPU-starved host delays an answer past our RTO: then,
            // and only then (the upload's log shows a retransmission), the upload is retried.
            for attempt in 1..=3 {
                let o = run_bounded(
                    coaplab().args([method, &uri(&path), "--cc", cc, "-v", "--payload-file", "-"]),
                    Some(&body),
                    LIMIT,
                );
                assert_ok(&o, &format!("{cc} {method}"));
                let retransmitted = count(&String::from_utf8_lossy(&o.stderr), " timer ") > 0;
                let o = run_bounded(
                    coaplab().args(["get", &uri(&path), "--cc", cc]),
                    None,
                    LIMIT,
                );
                assert_ok(&o, &format!("{cc} get {path}"));
                if o.stdout == body {
                    break;
                }
                assert!(
                    retransmitted && attempt < 3,
                    "{cc}: {path} differs (attempt {attempt}, retransmitted: {retransmitted})"
                );
            }
        }
        // A small resource in one message.
        let o = run_bounded(
            coaplab().args(["get", &uri("time"), "--cc", cc]),
            None,
            LIMIT,
        );
        assert_ok(&o, &format!("{cc} get time"));
        // The URI's query reaches libcoap: /time?ticks answers Unix seconds, not a date.
        let o = run_bounded(
            coaplab().args(["get", &uri("time?ticks"), "--cc", cc]),
            None,
            LIMIT,
        );
        assert_ok(&o, &format!("{cc} get time?ticks"));
        assert!(
            o.stdout.len() >= 10 && o.stdout.iter().all(u8::is_ascii_digit),
            "{:?}",
            String::from_utf8_lossy(&o.stdout)
        );
    }
}

/// Retransmission lines (`timer`) and first answers (`answer`) in a `-v` log.
fn count(log: &str, what: &str) -> usize {
    log.lines().filter(|l| l.contains(what)).count()
}

// Why two loss tests. libcoap 4.3 re-processes a retransmitted request whose answer it lost
// (RFC 7252 §4.5 allows this for idempotent requests), even the last Block1 block of a PUT
// it has already completed. It then treats that block as a fresh one-block upload and keeps
// only its 1,024 bytes. With a random `-l 20%` this corrupted 5 of 12 block-wise uploads,
// exactly the runs in which the final 2.04 was dropped, so bytes cannot be compared after a
// randomly lossy Block1 upload. The block-wise test therefore drops a fixed list of libcoap's
// sends, never the final 2.04. The random test keeps `-l 20%` on single-message exchanges,
// where re-processing is harmless.

#[test]
fn our_block_wise_transfers_survive_libcoap_dropping_listed_sends() {
    let Some(bin) = peer("coap-server-notls") else {
        return;
    };
    // libcoap's sends: #1 answers the readiness probe, about #2-#43 the 40 Block1 blocks
    // (2 drops), #44 on the 40 Block2 blocks. Two drops land mid-upload, three mid-download
    // (60 and 61 are one block's answer twice), with slack for a shifted count.
    let (_server, port) = libcoap_server(&bin, "coap", &["-l", "10,20,60,61,70"]);
    let uri = format!("coap://127.0.0.1:{port}/lossy");
    let body = noise(40_960, 99);
    let put_err = verbose_put(&uri, &body, "lossy put", LIMIT);
    let (got, get_err) = verbose_get(&uri, "lossy get", LIMIT);
    assert!(got == body, "GET after a lossy Block1 upload differs");
    // 40 blocks each way, each answered once; both directions retransmitted.
    assert_eq!(
        (count(&put_err, " answer "), count(&get_err, " answer ")),
        (40, 40)
    );
    assert!(
        count(&put_err, " timer ") >= 1,
        "no Block1 retransmission:\n{put_err}"
    );
    assert!(
        count(&get_err, " timer ") >= 1,
        "no Block2 retransmission:\n{get_err}"
    );
}

#[test]
fn our_client_completes_identical_exchanges_through_libcoap_random_loss() {
    let Some(bin) = peer("coap-server-notls") else {
        return;
    };
    // libcoap drops 20% of what its server sends: our client must retransmit.
    let (_server, port) = libcoap_server(&bin, "coap", &["-l", "20%"]);
    let uri = format!("coap://127.0.0.1:{port}/lossy");
    let body = noise(1_000, 7);
    let mut timers = count(&verbose_put(&uri, &body, "lossy put", LIMIT), " timer ");
    // 81 exchanges at 20% loss: P(no retransmission at all) = 0.8^81 ≈ 1.4e-8.
    for i in 0..80 {
        let (got, log) = verbose_get(&uri, &format!("lossy get #{i}"), LIMIT);
        assert!(got == body, "lossy GET #{i} differs");
        timers += count(&log, " timer ");
    }
    assert!(timers > 0, "no retransmission at 20% loss");
}

#[test]
fn libcoap_client_against_our_server() {
    let Some((client, dir)) = peer_with_dir("coap-client-notls", "libcoap") else {
        return;
    };
    for cc in ALGORITHMS {
        let server = OurServer::start(&["--cc", cc]);
        let out = dir.join("out.bin");
        let who = format!("{cc} coap-client");
        let fetch = |args: &[&str]| libcoap_fetch(&client, &out, args, &who, LIMIT);
        assert_eq!(fetch(&[&server.uri("data/10")]), pattern(10));
        assert_eq!(fetch(&[&server.uri("data/102400")]), pattern(102_400));
        let body = noise(102_400, 5);
        let file = dir.join("in.bin");
        std::fs::write(&file, &body).unwrap();
        let f = file.to_str().unwrap();
        for method in ["put", "post"] {
            let got = fetch(&["-m", method, "-f", f, &server.uri("echo")]);
            assert!(got == body, "{cc} {method} echo differs");
        }
        server.stop_clean();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Our UDP-only server runs on a blocking socket (`BlockingUdpDriver`): it answers a
/// coap-client GET there, and SIGINT while it waits in `recvfrom` ends it cleanly and soon
/// (the signal interrupts the receive; the receive timeout bounds a missed one by 200 ms),
/// with its counters printed.
#[test]
fn libcoap_get_then_sigint_on_the_blocking_udp_server() {
    let Some((client, dir)) = peer_with_dir("coap-client-notls", "libcoap-sigint") else {
        return;
    };
    let server = OurServer::start(&[]);
    let out = dir.join("out.bin");
    let got = libcoap_fetch(
        &client,
        &out,
        &[&server.uri("data/10")],
        "coap-client",
        LIMIT,
    );
    assert_eq!(got, pattern(10));
    // Idle in recvfrom when the signal comes.
    std::thread::sleep(Duration::from_millis(300));
    let asked = std::time::Instant::now();
    let (status, stderr) = server.stop_with("-INT");
    let took = asked.elapsed();
    assert!(status.success(), "{stderr}");
    assert!(took < Duration::from_secs(2), "{took:?}");
    assert!(
        stderr.contains("served=1 duplicates=0 rejected=0 ignored=0 malformed=0 ")
            && stderr.contains(" datagrams_in=1 datagrams_out=1 "),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn libcoap_client_repeats_echo_and_sends_accept() {
    let Some((client, dir)) = peer_with_dir("coap-client-notls", "libcoap-echo") else {
        return;
    };
    // No allowance for unverified CON: every large first answer is 4.01 + Echo (RFC 9175
    // §2.4), which coap-client repeats with the value by itself.
    let server = OurServer::start(&["--unverified-con-bytes-per-s", "0"]);
    let out = dir.join("out.bin");
    let fetch = |args: &[&str]| libcoap_fetch(&client, &out, args, "coap-client", LIMIT);
    assert_eq!(fetch(&[&server.uri("data/1024")]), pattern(1024));
    assert_eq!(fetch(&[&server.uri("data/102400")]), pattern(102_400));
    assert_eq!(fetch(&["-N", &server.uri("data/1024")]), pattern(1024));
    // Issue 11 #6: `-A text/plain` (0) got 4.02; a format /time is not gets 4.06.
    let time = fetch(&["-A", "0", &server.uri("time")]);
    assert!(
        time.len() >= 10 && time.iter().all(u8::is_ascii_digit),
        "{time:?}"
    );
    let o = run_bounded(
        Command::new(&client).args(["-B", "20", "-A", "50", &server.uri("time")]),
        None,
        LIMIT,
    );
    let said =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert!(said.contains("4.06"), "{said}");
    let (status, stderr) = server.stop();
    assert!(status.success());
    // One challenge per coap-client run that drew a large answer (each on a new port).
    assert!(stderr.contains(" echo_challenges=3\n"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn libcoap_client_with_loss_against_our_server() {
    let Some((client, dir)) = peer_with_dir("coap-client-notls", "libcoap-loss") else {
        return;
    };
    let server = OurServer::start(&[]);
    let body = noise(8192, 77);
    let file = dir.join("in.bin");
    std::fs::write(&file, &body).unwrap();
    let f = file.to_str().unwrap();
    let get = server.uri("data/8192");
    let echo = server.uri("echo");
    let cases: [(&[&str], Vec<u8>); 2] = [
        (&[get.as_str()], pattern(8192)),
        (&["-m", "put", "-f", f, echo.as_str()], body.clone()),
    ];
    // The two clients wait out their retransmission timers (seconds): at once.
    std::thread::scope(|s| {
        for (i, (args, expected)) in cases.into_iter().enumerate() {
            let (client, dir) = (&client, &dir);
            s.spawn(move || {
                let out = dir.join(format!("out-{i}.bin"));
                // libcoap drops its own 1st and 3rd datagrams (`-l 1,3`): two
                // retransmissions. `-B` bounds the whole operation, so it is generous.
                let o = run_bounded(
                    Command::new(client)
                        .args(["-v", "7", "-B", "60", "-l", "1,3", "-o"])
                        .arg(&out)
                        .args(args),
                    None,
                    LIMIT,
                );
                assert_ok(&o, &format!("lossy coap-client {args:?}"));
                let log = String::from_utf8_lossy(&o.stdout).into_owned()
                    + &String::from_utf8_lossy(&o.stderr);
                assert_eq!(log.matches("retransmission #").count(), 2, "{args:?}");
                assert!(
                    std::fs::read(&out).unwrap() == expected,
                    "{args:?}: bytes differ"
                );
            });
        }
    });
    server.stop_clean();
    let _ = std::fs::remove_dir_all(&dir);
}
