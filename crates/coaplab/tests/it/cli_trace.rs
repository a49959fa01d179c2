//! The `coaplab trace` and `coaplab algorithms` commands, run as the built binary.

use std::path::PathBuf;
use std::process::{Command, Output};

fn coaplab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_coaplab"))
        .args(args)
        .output()
        .expect("run coaplab")
}

fn data(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
        .display()
        .to_string()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[test]
fn trace_prints_the_fb2_carry_as_csv() {
    let file = data("fb2_carry_60s.trace");
    let o = coaplab(&[
        "trace",
        "--cc",
        "default-fb2",
        "--set",
        "preset=fasor18",
        "--set",
        "ack_random_factor=1",
        &file,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        stdout(&o),
        "\
time_s,event,exchange,transmission,timer_s,rto_s,state
0.000000,transmit,1,1,2.000000,,
2.000000,expire,1,1,,,
2.000000,transmit,1,2,4.000000,,
6.000000,expire,1,2,,,
6.000000,transmit,1,3,8.000000,,
14.000000,expire,1,3,,,
14.000000,transmit,1,4,16.000000,,
30.000000,expire,1,4,,,
30.000000,transmit,1,5,32.000000,,
62.000000,expire,1,5,,,
62.000000,transmit,1,6,60.000000,,
122.000000,expire,1,6,,,
122.000000,transmit,1,7,60.000000,,
130.000000,complete,1,,,60.000000,
140.000000,transmit,2,1,60.000000,,
141.000000,complete,2,1,,30.000000,
"
    );
}

#[test]
fn trace_is_reproducible_per_seed() {
    let file = data("fb2_carry_60s.trace");
    let run = |seed: &str| {
        stdout(&coaplab(&[
            "trace",
            "--cc",
            "default",
            "--set",
            "preset=fasor18",
            "--seed",
            seed,
            &file,
        ]))
    };
    assert_eq!(run("7"), run("7"));
    assert_ne!(run("7"), run("8"));
    let first_timer = |csv: &str| -> f64 {
        let row = csv.lines().nth(1).unwrap();
        row.split(',').nth(4).unwrap().parse().unwrap()
    };
    for seed in ["1", "2", "3"] {
        let t0 = first_timer(&run(seed));
        assert!((2.0..3.0).contains(&t0), "seed {seed}: T0 = {t0}");
    }
}

#[test]
fn trace_rejects_bad_input_with_the_line_number() {
    let file = data("bad_time.trace");
    let o = coaplab(&["trace", "--cc", "default", &file]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        format!(
            "coaplab trace: {file}: line 2: 'oops' is not a time in seconds (expected e.g. 2.4)\n"
        )
    );
    assert!(o.stdout.is_empty());

    let o = coaplab(&["trace", "--cc", "nope", &file]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("unknown algorithm 'nope'; valid names: default,"));

    let o = coaplab(&["trace", "--cc", "default", "--set", "aging=false", &file]);
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("unknown parameter 'aging' for algorithm 'default'"));
}

#[test]
fn algorithms_lists_names_and_parameters() {
    let o = coaplab(&["algorithms"]);
    assert!(o.status.success());
    let list = stdout(&o);
    for name in ["default", "default-fb1", "default-fb2", "gst", "fasor18"] {
        assert!(
            list.contains(&format!("  {name} ")),
            "{name} missing from:\n{list}"
        );
    }

    let o = coaplab(&["algorithms", "gst"]);
    assert!(o.status.success());
    let text = stdout(&o);
    assert!(
        text.contains("  gst_count_max = 62    (integer in [1, 62])\n"),
        "{text}"
    );
    assert!(
        text.contains("  timer_max_s = inf    (seconds >= 0.001, or inf)\n"),
        "{text}"
    );
    assert!(
        text.contains("      source: Rathod 2022 ch. 3; docs/algorithms.md, ambiguity #3\n"),
        "{text}"
    );
    assert!(text.contains("  preset = rfc    (rfc | fasor18 | rathod-text | rathod-contiki)\n"));

    let o = coaplab(&["algorithms", "gts"]);
    assert_eq!(o.status.code(), Some(1));
}
