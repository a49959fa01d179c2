//! The example algorithm `linear`, through `coaplab-custom trace` and `run`: the command built
//! around coaplab's library with one algorithm registered from outside.

use std::process::Command;

fn custom(args: &[&str], stdin_file: Option<(&str, &str)>) -> (bool, String, String) {
    // One directory per call: the tests run in parallel and may write files of the same name.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("coaplab-custom-{}-{call}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    if let Some((name, body)) = stdin_file {
        let path = dir.join(name);
        std::fs::write(&path, body).unwrap();
        args.push(path.display().to_string());
    }
    let o = Command::new(env!("CARGO_BIN_EXE_coaplab-custom")).args(&args).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (o.status.success(), text(&o.stdout), text(&o.stderr))
}

/// A clean exchange (sample 0.8 s: SRTT 0.8, RTTVAR 0.4, RTO 2.4 s), one answered after a
/// retransmission (no sample, Karn), and one never answered: timers 2.4 · (1 + 0.5 k), the
/// last ones capped at 4 s. `ack_random_factor=1`: undithered, so every value checks by hand.
#[test]
fn linear_backoff_timers_are_exact() {
    let trace = "0 send\n0.8 ack\n1 send\n6.0 ack\n7 send\n";
    let (ok, out, err) = custom(
        &[
            "trace",
            "--cc",
            "linear",
            "--set",
            "step=0.5",
            "--set",
            "max_rto_s=4",
            "--set",
            "ack_random_factor=1",
        ],
        Some(("t.txt", trace)),
    );
    assert!(ok, "{err}");
    assert_eq!(
        out,
        "time_s,event,exchange,transmission,timer_s,rto_s,state
0.000000,transmit,1,1,2.000000,,
0.800000,complete,1,,,2.400000,
1.000000,transmit,2,1,2.400000,,
3.400000,expire,2,1,,,
3.400000,transmit,2,2,3.600000,,
6.000000,complete,2,,,2.400000,
7.000000,transmit,3,1,2.400000,,
9.400000,expire,3,1,,,
9.400000,transmit,3,2,3.600000,,
13.000000,expire,3,2,,,
13.000000,transmit,3,3,4.000000,,
17.000000,expire,3,3,,,
17.000000,transmit,3,4,4.000000,,
21.000000,expire,3,4,,,
21.000000,transmit,3,5,4.000000,,
25.000000,expire,3,5,,,
25.000000,giveup,3,5,,,
"
    );
}

#[test]
fn linear_is_listed_checked_and_simulated() {
    let (ok, out, _) = custom(&["algorithms"], None);
    assert!(ok && out.contains("  linear  "), "{out}");
    let (ok, _, err) = custom(&["trace", "--cc", "linear", "--set", "step=-1"], Some(("t.txt", "0 send\n")));
    assert!(!ok && err.contains("step"), "{err}");
    let scenario = "name = \"lin\"\nseed = 3\nreplications = 1\n[[flows]]\ncount = 2\ncc = \"linear\"\n\
                    exchanges = 3\n[flows.params]\nstep = 2\n";
    let out_dir = std::env::temp_dir().join(format!("coaplab-custom-run-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out_dir);
    let (ok, table, err) =
        custom(&["run", "--out", &out_dir.display().to_string()], Some(("lin.toml", scenario)));
    assert!(ok, "{err}");
    assert!(table.lines().nth(1).unwrap().trim_start().starts_with("linear  continuous  2 "), "{table}");
    let _ = std::fs::remove_dir_all(&out_dir);
}
