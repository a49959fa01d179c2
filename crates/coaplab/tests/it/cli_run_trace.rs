//! `coaplab run --trace` end to end: results files unchanged by tracing, and the simulated
//! pcaps decoded by tshark's CoAP dissector (over UDP, and RFC 8323 over TCP) with every
//! message the simulator sent and no malformed packet.

use std::path::Path;
use std::process::Command;

use crate::run_support;
use run_support::{coaplab, text, TempDir};

/// Whether tshark is installed; in CI (scripts/test.sh installs it) its absence fails.
fn have_tshark() -> bool {
    let found = Command::new("tshark").arg("--version").output().is_ok();
    if !found {
        assert!(std::env::var_os("CI").is_none(), "tshark is missing in CI");
        eprintln!("skipped: tshark is not installed");
    }
    found
}

/// tshark's output of `fields` for the packets of `pcap` matching `filter`, one line per
/// packet (repeated fields comma-separated).
fn tshark(pcap: &Path, filter: &str, fields: &[&str]) -> Vec<String> {
    let mut args = vec!["-r".to_string(), pcap.display().to_string()];
    if !filter.is_empty() {
        args.extend(["-Y".to_string(), filter.to_string()]);
    }
    args.extend(["-T".to_string(), "fields".to_string()]);
    for f in fields {
        args.extend(["-e".to_string(), f.to_string()]);
    }
    let o = Command::new("tshark").args(&args).output().unwrap();
    assert!(o.status.success(), "tshark {args:?}: {}", text(&o.stderr));
    text(&o.stdout).lines().map(str::to_string).collect()
}

/// Values of column `name` of the CSV rows whose `run` column is `run`.
fn column(csv: &str, run: &str, name: &str) -> Vec<String> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let (r, c) = (
        header.iter().position(|h| *h == "run").unwrap(),
        header.iter().position(|h| *h == name).unwrap(),
    );
    lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f[r] == run)
        .map(|f| f[c].to_string())
        .collect()
}

fn sum(values: &[String]) -> u64 {
    values.iter().map(|v| v.parse::<u64>().unwrap()).sum()
}

/// 20 flows on a 600-B buffer (overflows and retransmissions), Default CoAP and FASOR.
const CROWDED: &str = "name = \"crowded\"\nseed = 7\n[network]\nbuffer_bytes = 600\n\
    [[flows]]\ncount = 20\ncc = [\"default\", \"fasor\"]\nexchanges = 4\nstart_jitter_s = 0.2\n";

#[test]
fn tracing_leaves_the_results_alone_and_tshark_reads_every_coap_message() {
    let tmp = TempDir::new("run-trace");
    let scenario = tmp.path("crowded.toml");
    std::fs::write(&scenario, CROWDED).unwrap();
    let (plain, traced, traces) = (tmp.path("plain"), tmp.path("traced"), tmp.path("traces"));
    let o = coaplab(&["run", &scenario, "--out", &plain]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = coaplab(&[
        "run",
        &scenario,
        "--out",
        &traced,
        "--trace",
        &traces,
        "--trace-runs",
        "0-1",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    for file in ["flows.csv", "summary.csv"] {
        let a = std::fs::read(Path::new(&plain).join(file)).unwrap();
        let b = std::fs::read(Path::new(&traced).join(file)).unwrap();
        assert!(a == b, "{file} differs when traced");
    }
    let flows = std::fs::read_to_string(Path::new(&traced).join("flows.csv")).unwrap();
    let runs = std::fs::read_to_string(Path::new(&traced).join("runs.csv")).unwrap();
    for run in ["0", "1"] {
        let dir = Path::new(&traces).join(format!("run00000{run}"));
        for f in [
            "events.parquet",
            "queue.parquet",
            "link-up.pcap",
            "link-down.pcap",
        ] {
            assert!(dir.join(f).is_file(), "{f}");
        }
        if !have_tshark() {
            return;
        }
        let (up, down) = (dir.join("link-up.pcap"), dir.join("link-down.pcap"));
        for pcap in [&up, &down] {
            assert_eq!(
                tshark(pcap, "_ws.malformed", &["frame.number"]),
                Vec::<String>::new()
            );
            // Every packet is one CoAP message.
            let frames = tshark(pcap, "", &["frame.number"]).len();
            assert_eq!(tshark(pcap, "coap", &["frame.number"]).len(), frames);
        }
        // Up: every copy of every request the clients sent (they send nothing else here).
        let up_msgs = tshark(&up, "coap.code == 2", &["coap.mid"]).len() as u64;
        let transmissions = sum(&column(&flows, run, "transmissions"));
        assert_eq!(up_msgs, transmissions, "run {run}");
        assert!(
            transmissions > sum(&column(&flows, run, "exchanges")),
            "retransmissions"
        );
        // Down: one piggybacked answer per request copy that reached the server (the downlink
        // capture is in front of its FIFO: answers it drops are in it).
        let lost = sum(&column(&runs, run, "up_overflow_drops"))
            + sum(&column(&runs, run, "up_link_error_drops"));
        let answers = tshark(&down, "coap.type == 2", &["coap.mid"]).len() as u64;
        assert_eq!(answers, transmissions - lost, "run {run}");
    }
}

/// Three CoAP-over-TCP flows, five exchanges each, on an error-free link with a large buffer.
const TCP: &str = "name = \"tcp\"\nseed = 3\n[network]\nbuffer_bytes = 1410000\n[[flows]]\n\
    count = 3\ncc = \"tcp-newreno\"\nexchanges = 5\nstart_jitter_s = 1.0\n";

#[test]
fn tshark_decodes_the_rfc8323_stream_of_a_simulated_tcp_run() {
    let tmp = TempDir::new("run-trace-tcp");
    let scenario = tmp.path("tcp.toml");
    std::fs::write(&scenario, TCP).unwrap();
    let (out, traces) = (tmp.path("out"), tmp.path("traces"));
    let o = coaplab(&[
        "run",
        &scenario,
        "--out",
        &out,
        "--trace",
        &traces,
        "--trace-format",
        "csv",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let dir = Path::new(&traces).join("run000000");
    for f in ["events.csv", "queue.csv", "tcp.csv"] {
        assert!(dir.join(f).is_file(), "{f}");
    }
    let tcp = std::fs::read_to_string(dir.join("tcp.csv")).unwrap();
    assert!(tcp.starts_with(
        "time_ns,time_s,flow,connection,side,ack,cwnd_segments,ssthresh_segments,\
         pipe_segments,rto_s,srtt_s,ca_state\n"
    ));
    if !have_tshark() {
        return;
    }
    let (up, down) = (dir.join("link-up.pcap"), dir.join("link-down.pcap"));
    for pcap in [&up, &down] {
        // Wireshark's CoAP dissector does not know RFC 8323's signalling options: it flags
        // the CSM's Max-Message-Size (option 2) as an invalid option. Nothing else is flagged.
        assert_eq!(
            tshark(
                pcap,
                "_ws.malformed && !(coap.code == 225)",
                &["frame.number"]
            ),
            Vec::<String>::new()
        );
        assert_eq!(
            tshark(
                pcap,
                "tcp.analysis.flags && !tcp.analysis.window_update",
                &["frame.number"]
            ),
            Vec::<String>::new()
        );
        assert_eq!(
            tshark(pcap, "tcp.checksum.status == 0", &["frame.number"]),
            Vec::<String>::new()
        );
    }
    // One CSM each way per connection, then the 15 POSTs and their 15 2.04 answers.
    let codes = |pcap: &Path| -> Vec<String> {
        tshark(pcap, "coap", &["coap.code"])
            .iter()
            .flat_map(|l| l.split(',').map(str::to_string).collect::<Vec<_>>())
            .collect()
    };
    let count = |codes: &[String], code: &str| codes.iter().filter(|c| *c == code).count();
    let (up_codes, down_codes) = (codes(&up), codes(&down));
    assert_eq!(
        (count(&up_codes, "225"), count(&up_codes, "2")),
        (3, 15),
        "{up_codes:?}"
    );
    assert_eq!(
        (count(&down_codes, "225"), count(&down_codes, "68")),
        (3, 15),
        "{down_codes:?}"
    );
    assert_eq!(up_codes.len() + down_codes.len(), 36);
}

#[test]
fn trace_options_are_checked_before_anything_runs() {
    let tmp = TempDir::new("run-trace-args");
    let scenario = tmp.path("tcp.toml");
    std::fs::write(&scenario, TCP).unwrap();
    let out = tmp.path("out");
    let o = coaplab(&["run", &scenario, "--out", &out, "--trace-runs", "3,7-9"]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.contains("--trace-runs 3,7-9: the plan has 1 runs (0 to 0)"),
        "{err}"
    );
    assert!(!Path::new(&out).exists(), "nothing is written");
    for bad in [["--trace-runs", "5-2"], ["--trace-format", "xml"]] {
        let o = coaplab(&["run", &scenario, "--out", &out, bad[0], bad[1]]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    }
    let o = coaplab(&["run", &scenario, "--mode", "emulated", "--trace", &out]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("simulated runs only"));
}

/// Two servers on the 3×3 grid, a flow on each of the 6 client nodes, default RPL.
const MESH: &str = "name = \"mesh\"\nseed = 5\n[topology]\nkind = \"mesh\"\nservers = 2\n\
    [[flows]]\ncount = \"all\"\ncc = \"cocoa\"\nexchanges = 4\n";

#[test]
fn a_traced_mesh_run_writes_its_events_and_every_frame_on_air() {
    let tmp = TempDir::new("run-trace-mesh");
    let scenario = tmp.path("mesh.toml");
    std::fs::write(&scenario, MESH).unwrap();
    let (plain, traced, traces) = (tmp.path("plain"), tmp.path("traced"), tmp.path("traces"));
    let o = coaplab(&["run", &scenario, "--reps", "1", "--out", &plain]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = coaplab(&[
        "run",
        &scenario,
        "--reps",
        "1",
        "--out",
        &traced,
        "--trace",
        &traces,
        "--trace-format",
        "csv",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    for file in ["flows.csv", "summary.csv"] {
        let a = std::fs::read(Path::new(&plain).join(file)).unwrap();
        let b = std::fs::read(Path::new(&traced).join(file)).unwrap();
        assert!(a == b, "{file} differs when traced");
    }
    let dir = Path::new(&traces).join("run000000");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["events.csv", "frames.csv", "mesh.pcapng"]);
    let flows = std::fs::read_to_string(Path::new(&traced).join("flows.csv")).unwrap();
    let runs = std::fs::read_to_string(Path::new(&traced).join("runs.csv")).unwrap();
    assert_eq!(
        column(&flows, "0", "server_node"),
        ["2", "6", "2", "6", "2", "6"]
    );
    // events.csv: one `transmit` row per CON copy each client sent.
    let events = std::fs::read_to_string(dir.join("events.csv")).unwrap();
    let transmits = events.lines().filter(|l| l.contains(",transmit,")).count() as u64;
    assert_eq!(transmits, sum(&column(&flows, "0", "transmissions")));
    // frames.csv: every data, ACK and RPL frame that ended on air during the run; those still
    // on air at the end (at most one per node) are not in it.
    let frames = std::fs::read_to_string(dir.join("frames.csv")).unwrap();
    let kind = |k: &str| {
        frames
            .lines()
            .filter(|l| l.split(',').nth(5) == Some(k))
            .count() as u64
    };
    for (k, counted) in [("data", "data_frames"), ("ack", "ack_frames")] {
        let on_air = sum(&column(&runs, "0", counted));
        assert!(
            kind(k) <= on_air && kind(k) + 9 >= on_air,
            "{k}: {} vs {on_air}",
            kind(k)
        );
    }
    let control = sum(&column(&runs, "0", "control_frames"));
    let logged = kind("dio") + kind("dis") + kind("dao");
    assert!(
        logged <= control && logged + 9 >= control,
        "{logged} vs {control}"
    );
}

/// The Rathod grid, short: 2 clients, 5 exchanges of 200-B requests (fragmented on every
/// hop: 256-B datagrams in frames of at most 104 B) under RPL with its hop-by-hop option.
const MESH_PCAP: &str = "name = \"mesh-pcap\"\nseed = 2022\nmax_sim_time_s = 120\n\
    [topology]\nkind = \"mesh\"\nshape = \"grid\"\nrows = 3\ncols = 3\nspacing_m = 10\n\
    routing = \"rpl\"\n[protocol]\ncc_preset = \"rathod-contiki\"\n\
    [[flows]]\ncount = 2\ncc = \"default\"\nworkload = \"continuous\"\nexchanges = 5\n\
    interval_s = 0.1\npayload_bytes = 200\n";

#[test]
fn tshark_decodes_every_frame_of_a_traced_mesh_runs_pcapng() {
    if !have_tshark() {
        return;
    }
    let tmp = TempDir::new("run-trace-meshpcap");
    let scenario = tmp.path("mesh.toml");
    std::fs::write(&scenario, MESH_PCAP).unwrap();
    let out = tmp.path("out");
    let o = coaplab(&[
        "run",
        &scenario,
        "--reps",
        "1",
        "--out",
        &out,
        "--trace-runs",
        "0",
        "--trace-format",
        "csv",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let dir = Path::new(&out).join("trace").join("run000000");
    let pcap = dir.join("mesh.pcapng");
    let frames = std::fs::read_to_string(dir.join("frames.csv")).unwrap();
    let header: Vec<&str> = frames.lines().next().unwrap().split(',').collect();
    let col = |n: &str| header.iter().position(|h| *h == n).unwrap();
    let rows: Vec<Vec<&str>> = frames
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    // Every data frame names its datagram and flow (MAC retries after it left included).
    for r in rows.iter().filter(|r| r[col("kind")] == "data") {
        assert!(
            !r[col("packet")].is_empty() && !r[col("flow")].is_empty(),
            "{r:?}"
        );
    }
    // One capture frame per row, in the table's order, of the model's PSDU length.
    let lens = tshark(&pcap, "", &["frame.len"]);
    let psdu: Vec<&str> = rows.iter().map(|r| r[col("psdu_bytes")]).collect();
    assert_eq!(lens, psdu);
    // Every frame decoded: nothing malformed, no expert error, checksums good.
    let bad = tshark(
        &pcap,
        "_ws.malformed || _ws.expert.severity >= 8388608 || wpan.fcs_ok == 0",
        &["frame.number"],
    );
    assert!(bad.is_empty(), "malformed or in error: frames {bad:?}");
    let o = Command::new("tshark")
        .args([
            "-r",
            pcap.to_str().unwrap(),
            "-o",
            "udp.check_checksum:TRUE",
        ])
        .args(["-Y", "udp && udp.checksum.status != 1", "-T", "fields"])
        .args(["-e", "frame.number"])
        .output()
        .unwrap();
    assert!(text(&o.stdout).trim().is_empty(), "{}", text(&o.stdout));
    // The CoAP messages, reassembled from FRAG1/FRAGN fragments, and RPL's control messages.
    let coap = tshark(&pcap, "coap && 6lowpan.reassembled.length", &["coap.mid"]);
    assert!(!coap.is_empty());
    let data = rows.iter().filter(|r| r[col("kind")] == "data").count();
    assert!(
        coap.len() * 3 <= data,
        "{} CoAP, {data} data frames",
        coap.len()
    );
    let fragments = tshark(&pcap, "6lowpan.frag.tag", &["frame.number"]);
    let fragmented = rows
        .iter()
        .filter(|r| !matches!(r[col("fragments")], "" | "1"))
        .count();
    assert!(fragmented > 0);
    assert_eq!(fragments.len(), fragmented);
    let conflicts = tshark(
        &pcap,
        "6lowpan.fragment.overlap.conflicts || 6lowpan.fragment.error",
        &["frame.number"],
    );
    assert!(conflicts.is_empty(), "{conflicts:?}");
    let dio = tshark(
        &pcap,
        "icmpv6.type == 155 && icmpv6.code == 1",
        &["frame.number"],
    );
    let dios = rows.iter().filter(|r| r[col("kind")] == "dio").count();
    assert_eq!(dio.len(), dios);
    let acks = tshark(&pcap, "wpan.frame_type == 2", &["frame.number"]);
    assert_eq!(
        acks.len(),
        rows.iter().filter(|r| r[col("kind")] == "ack").count()
    );
    // The frames no addressee decoded carry a comment naming their row.
    let commented = tshark(&pcap, "frame.comment", &["frame.number"]);
    let undecoded: Vec<String> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r[col("decoded")] == "false")
        .map(|(i, _)| (i + 1).to_string())
        .collect();
    assert_eq!(commented, undecoded);
}
