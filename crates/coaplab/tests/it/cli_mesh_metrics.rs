//! `coaplab run` on a mesh writes the multi-hop experiments' metrics (docs/experiments.md §8f,
//! issue 13): the mesh columns of `flows.csv`, `summary.csv` and `runs.csv`, `intervals.csv` and
//! `exchanges.csv`, consistent with one another; shards merge them byte for byte; `coaplab
//! report` reads the directory.

use crate::run_support;
use run_support::{coaplab, text, TempDir};

/// 7 clients on the 3x3 grid, a 40-B request every 100 ms for 20 s, two algorithms, two runs
/// each.
const GRID: &str = "# mesh metrics\nname = \"m\"\nseed = 3\nreplications = 2\n\
                    max_sim_time_s = 20\n[topology]\nkind = \"mesh\"\n[output]\n\
                    exchanges = true\n[[flows]]\ncount = \"all\"\n\
                    cc = [\"default\", \"cocoa\"]\nexchanges = 150\ninterval_s = 0.1\n\
                    payload_bytes = 40\n";

/// `name`'s rows as fields, header first.
fn table(dir: &str, name: &str) -> Vec<Vec<String>> {
    let path = std::path::Path::new(dir).join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

fn col(header: &[String], name: &str) -> usize {
    header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name} in {header:?}"))
}

fn num(row: &[String], i: usize) -> f64 {
    row[i].parse().unwrap_or_else(|_| panic!("{row:?}[{i}]"))
}

fn run(args: &[&str]) {
    let o = coaplab(args);
    assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
}

#[test]
fn a_mesh_run_writes_consistent_thesis_metrics() {
    let tmp = TempDir::new("mesh-metrics");
    let scenario = tmp.path("grid.toml");
    std::fs::write(&scenario, GRID).unwrap();
    let out = tmp.path("out");
    run(&["run", &scenario, "--out", &out, "--quiet"]);

    let flows = table(&out, "flows.csv");
    let h = &flows[0];
    assert_eq!(flows.len(), 1 + 2 * 2 * 7);
    let intervals = table(&out, "intervals.csv");
    let exchanges = table(&out, "exchanges.csv");
    let (ih, eh) = (&intervals[0], &exchanges[0]);
    for f in &flows[1..] {
        let (run_id, flow) = (&f[col(h, "run")], &f[col(h, "flow")]);
        let ok = num(f, col(h, "exchanges"));
        let failed = num(f, col(h, "failed_exchanges"));
        let requests = num(f, col(h, "requests"));
        // Requests are the original copies; PDR the answered share of them.
        assert_eq!(
            requests,
            num(f, col(h, "transmissions")) - num(f, col(h, "retransmissions"))
        );
        assert_eq!(num(f, col(h, "coap_pdr")), ok / requests);
        // The interval series holds every answered request's 40 B, in 50-ms intervals.
        let mine = |t: &Vec<Vec<String>>, th: &Vec<String>| -> Vec<Vec<String>> {
            t[1..]
                .iter()
                .filter(|r| &r[col(th, "run")] == run_id && &r[col(th, "flow")] == flow)
                .cloned()
                .collect()
        };
        let series = mine(&intervals, ih);
        let bytes: f64 = series.iter().map(|r| num(r, col(ih, "bytes"))).sum();
        assert_eq!(bytes, 40.0 * ok);
        for r in &series {
            let k = num(r, col(ih, "interval"));
            assert_eq!(num(r, col(ih, "start_s")), k * 0.05);
            assert_eq!(
                num(r, col(ih, "throughput_bps")),
                num(r, col(ih, "bytes")) * 8.0 / 0.05
            );
        }
        // One exchanges.csv row per ended exchange: delays for the answered ones.
        let rows = mine(&exchanges, eh);
        let answered = rows.iter().filter(|r| !r[col(eh, "delay_s")].is_empty());
        assert_eq!(answered.count() as f64, ok);
        assert_eq!(rows.len() as f64, ok + failed);
        let max = rows
            .iter()
            .filter_map(|r| r[col(eh, "delay_s")].parse::<f64>().ok())
            .fold(f64::NEG_INFINITY, f64::max);
        if ok > 0.0 {
            assert_eq!(max, num(f, col(h, "delay_max_s")));
        }
        assert!(rows.iter().all(|r| !r[col(eh, "rto_base_s")].is_empty()));
    }
    // summary.csv: the medians of the mesh columns and the retransmissions per run.
    let summary = table(&out, "summary.csv");
    let sh = &summary[0];
    let per_run = num(&summary[1], col(sh, "retransmissions_per_run"));
    let default_rexmit: f64 = flows[1..]
        .iter()
        .filter(|f| f[col(h, "cc")] == "default")
        .map(|f| num(f, col(h, "retransmissions")))
        .sum();
    assert_eq!(per_run, default_rexmit / 2.0);
    col(sh, "fct50_s_median");
    // runs.csv: the channel counters and the link-level delivery ratio.
    let runs = table(&out, "runs.csv");
    let rh = &runs[0];
    for r in &runs[1..] {
        let (data, acked) = (
            num(r, col(rh, "data_frames")),
            num(r, col(rh, "data_frames_acked")),
        );
        assert_eq!(num(r, col(rh, "link_pdr")), acked / data);
        // RPL (the mesh default) keeps sending DIOs and DAOs during the run.
        assert!(num(r, col(rh, "control_frames")) > 0.0);
        assert!(num(r, col(rh, "frames_on_air")) >= data + num(r, col(rh, "ack_frames")));
    }

    // Two shards merged: the same files, byte for byte.
    for k in ["1", "2"] {
        let dir = tmp.path(&format!("shard{k}"));
        run(&[
            "run",
            &scenario,
            "--out",
            &dir,
            "--quiet",
            "--shard",
            &format!("{k}/2"),
        ]);
    }
    let merged = tmp.path("merged");
    run(&[
        "merge",
        "--out",
        &merged,
        &tmp.path("shard1"),
        &tmp.path("shard2"),
    ]);
    for name in ["flows.csv", "summary.csv", "intervals.csv", "exchanges.csv"] {
        let a = std::fs::read(std::path::Path::new(&out).join(name)).unwrap();
        let b = std::fs::read(std::path::Path::new(&merged).join(name)).unwrap();
        assert!(a == b, "{name} differs after merge");
    }
    run(&["report", &out]);
}
