//! The example algorithm `linear` ranked on the smoke suite (issue 36): `coaplab-custom suite
//! run --cc linear default` finds the algorithm registered from outside, as `run` does.

use std::path::Path;
use std::process::Command;

#[test]
fn linear_is_ranked_on_the_smoke_suite() {
    let out = std::env::temp_dir().join(format!("coaplab-custom-suite-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let smoke = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites/smoke.toml");
    let o = Command::new(env!("CARGO_BIN_EXE_coaplab-custom"))
        .args(["suite", "run", smoke.to_str().unwrap(), "--jobs", "2", "--quiet"])
        .args(["--cc", "linear", "default", "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    let ranking = std::fs::read_to_string(out.join("ranking.csv"));
    let board = std::fs::read_to_string(out.join("leaderboard.csv"));
    let _ = std::fs::remove_dir_all(&out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (ranking, board) = (ranking.unwrap(), board.unwrap());
    // Both algorithms in the overall ranking, each with a rank in all three experiments.
    let lines: Vec<&str> = ranking.lines().collect();
    assert_eq!(lines.len(), 3, "{ranking}");
    for cc in ["linear", "default"] {
        let line = lines.iter().find(|l| l.starts_with(&format!("{cc},"))).unwrap();
        assert_eq!(line.split(',').count(), 3 + 3, "{line}");
    }
    assert_eq!(board.lines().filter(|l| l.contains(",linear,")).count(), 3, "{board}");
}
