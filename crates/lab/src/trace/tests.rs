use std::fs::File;
use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type, UInt32Type, UInt64Type};
use arrow_array::RecordBatch;
use coaplab_cc::rng::ConstantRandom;
use coaplab_cc::{registry, trace as tool, Instant, Settings};
use coaplab_netsim::{Direction, Fate};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use super::{RunSelection, TraceFormat};
use crate::scenario::{RunSpec, Scenario};
use crate::sim::{run_one, run_traced};

fn spec(text: &str) -> RunSpec {
    Scenario::parse(text, "t.toml")
        .unwrap()
        .expand(None, None)
        .remove(0)
}

/// One FASOR flow, undithered, whose reply takes 7.6352 s: two expiries before the answer.
const SLOW_REPLY: &str = "name = \"t\"\n[network]\nrest_delay_ms = 3500\n[[flows]]\n\
    cc = \"fasor\"\nexchanges = 2\nstart_jitter_s = 0\n[flows.params]\ndither = false\n";

/// A small shared bottleneck with overflows: 20 Default CoAP flows, a 600-B buffer.
const CROWDED: &str = "name = \"t\"\n[network]\nbuffer_bytes = 600\n[[flows]]\ncount = 20\n\
    cc = \"default\"\nexchanges = 5\nstart_jitter_s = 0.2\n";

fn read(path: &Path) -> RecordBatch {
    let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap())
        .unwrap()
        .build()
        .unwrap();
    let mut batches: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
    assert_eq!(batches.len(), 1, "one batch in these small tables");
    batches.remove(0)
}

fn strings(b: &RecordBatch, name: &str) -> Vec<Option<String>> {
    b.column_by_name(name)
        .unwrap()
        .as_string::<i32>()
        .iter()
        .map(|s| s.map(str::to_string))
        .collect()
}

fn f64s(b: &RecordBatch, name: &str) -> Vec<Option<f64>> {
    b.column_by_name(name)
        .unwrap()
        .as_primitive::<Float64Type>()
        .iter()
        .collect()
}

#[test]
fn a_traced_run_has_the_untraced_result() {
    for text in [SLOW_REPLY, CROWDED] {
        let s = spec(text);
        let (traced, _) = run_traced(&s).unwrap();
        assert_eq!(traced, run_one(&s).unwrap());
    }
}

#[test]
fn events_parquet_holds_the_trace_tools_timer_series() {
    let s = spec(SLOW_REPLY);
    let (result, trace) = run_traced(&s).unwrap();
    let dir = tempfile::tempdir().unwrap();
    trace.write(dir.path(), &s, TraceFormat::Parquet).unwrap();
    let b = read(&dir.path().join("events.parquet"));
    let event = strings(&b, "event");
    let time_ns: Vec<i64> = b
        .column_by_name("time_ns")
        .unwrap()
        .as_primitive::<Int64Type>()
        .values()
        .to_vec();
    let transmission: Vec<Option<u32>> = b
        .column_by_name("transmission")
        .unwrap()
        .as_primitive::<UInt32Type>()
        .iter()
        .collect();
    let timer = f64s(&b, "timer_s");
    // The first exchange, as the trace tool replays it with the same settings and the
    // simulated RTT (7.6352 s: 2 × 3.5 s rest-of-path + the NB-IoT link).
    let rtt_s = result.flows[0].coap_rtt_median_s.unwrap();
    let mut settings = Settings::new();
    settings.set("dither", "false");
    let mut alg = registry::build("fasor", &settings, Instant::ZERO).unwrap();
    let csv = tool::run_text(
        alg.as_mut(),
        &format!("0 send\n{rtt_s:.6} ack\n"),
        &mut ConstantRandom(0.5),
    )
    .unwrap();
    let mut expected = Vec::new();
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        match f[1] {
            "transmit" => expected.push(format!("{} transmit {}", f[0], f[3])),
            "expire" => expected.push(format!("{} expire {}", f[0], f[3])),
            _ => {}
        }
    }
    // The transmit rows' timers expire at the next expire rows.
    let got: Vec<String> = (0..event.len())
        .filter(|&i| matches!(event[i].as_deref(), Some("transmit" | "expire")))
        .take(expected.len())
        .map(|i| {
            format!(
                "{:.6} {} {}",
                time_ns[i] as f64 * 1e-9,
                event[i].as_deref().unwrap(),
                transmission[i].unwrap()
            )
        })
        .collect();
    assert_eq!(got, expected);
    assert_eq!(
        expected,
        [
            "0.000000 transmit 1",
            "2.000000 expire 1",
            "2.000000 transmit 2",
            "6.000000 expire 2",
            "6.000000 transmit 3"
        ]
    );
    // The first exchange's expiries carry the armed timers of the trace tool's transmit
    // rows: 2 s and 4 s.
    let exchange = b
        .column_by_name("exchange")
        .unwrap()
        .as_primitive::<UInt64Type>();
    let expiries: Vec<(i64, f64)> = (0..event.len())
        .filter(|&i| event[i].as_deref() == Some("expire") && exchange.value(i) == 0)
        .map(|i| (time_ns[i], timer[i].unwrap()))
        .collect();
    assert_eq!(expiries, [(2_000_000_000, 2.0), (6_000_000_000, 4.0)]);
    // The answer: an RTT sample, then the algorithm's RTO and state (the trace tool's
    // complete row: 2 s, FAST_SLOW_FAST).
    let complete = event
        .iter()
        .position(|e| e.as_deref() == Some("complete"))
        .unwrap();
    assert_eq!(f64s(&b, "rtt_s")[complete], Some(rtt_s));
    assert_eq!(event[complete + 1].as_deref(), Some("rto"));
    assert_eq!(f64s(&b, "rto_s")[complete + 1], Some(2.0));
    assert_eq!(
        strings(&b, "state")[complete + 1].as_deref(),
        Some("FAST_SLOW_FAST")
    );
    let flows = b
        .column_by_name("flow")
        .unwrap()
        .as_primitive::<UInt32Type>();
    assert!(flows.iter().all(|f| f == Some(0)));
    // Bytes of the first transmission: the 60-B CoAP POST of the continuous workload.
    let bytes = b
        .column_by_name("bytes")
        .unwrap()
        .as_primitive::<UInt32Type>();
    assert_eq!(bytes.value(0), 60);
}

#[test]
fn queue_parquet_rebuilds_the_backlog_the_fifo_saw() {
    let s = spec(CROWDED);
    let (result, trace) = run_traced(&s).unwrap();
    let dir = tempfile::tempdir().unwrap();
    trace.write(dir.path(), &s, TraceFormat::Parquet).unwrap();
    let b = read(&dir.path().join("queue.parquet"));
    let link = strings(&b, "link");
    let event = strings(&b, "event");
    let cause = strings(&b, "drop_cause");
    let packet = b
        .column_by_name("packet")
        .unwrap()
        .as_primitive::<UInt64Type>();
    let ip_bytes = b
        .column_by_name("ip_bytes")
        .unwrap()
        .as_primitive::<UInt32Type>();
    let queue_bytes = b
        .column_by_name("queue_bytes")
        .unwrap()
        .as_primitive::<UInt64Type>();
    let time_ns = b
        .column_by_name("time_ns")
        .unwrap()
        .as_primitive::<Int64Type>();
    // Every admission's backlog before it is what the FIFO reported (the star's record).
    let mut checked = 0;
    for r in &trace.records {
        let row = (0..b.num_rows())
            .find(|&i| packet.value(i) == r.id.0 && event[i].as_deref() != Some("dequeue"))
            .unwrap();
        assert_eq!(time_ns.value(row), r.enqueued_at.as_nanos());
        assert_eq!(
            link[row].as_deref(),
            Some(if r.direction == Direction::Up {
                "up"
            } else {
                "down"
            })
        );
        if r.fate == Fate::BufferOverflow {
            assert_eq!(cause[row].as_deref(), Some("buffer_overflow"));
        } else {
            // The NB-IoT preset's FIFO counts IP bytes only.
            let before = queue_bytes.value(row) - u64::from(ip_bytes.value(row));
            assert_eq!(before, r.backlog_bytes, "packet {}", r.id.0);
            checked += 1;
        }
    }
    assert!(checked > 100);
    // Drops by cause match the run's counters.
    let net = result.network.unwrap();
    let overflows = |l: &str| {
        (0..b.num_rows())
            .filter(|&i| {
                link[i].as_deref() == Some(l) && cause[i].as_deref() == Some("buffer_overflow")
            })
            .count() as u64
    };
    assert_eq!(overflows("up"), net.up.overflow_drops);
    assert_eq!(overflows("down"), net.down.overflow_drops);
    assert!(net.up.overflow_drops + net.down.overflow_drops > 0);
    // Every queue ends empty.
    let last = |l: &str| {
        (0..b.num_rows())
            .rev()
            .find(|&i| link[i].as_deref() == Some(l))
            .map(|i| queue_bytes.value(i))
    };
    assert_eq!((last("up"), last("down")), (Some(0), Some(0)));
}

#[test]
fn csv_tables_have_the_same_columns() {
    let s = spec(SLOW_REPLY);
    let (_, trace) = run_traced(&s).unwrap();
    let dir = tempfile::tempdir().unwrap();
    trace.write(dir.path(), &s, TraceFormat::Csv).unwrap();
    let events = std::fs::read_to_string(dir.path().join("events.csv")).unwrap();
    let mut lines = events.lines();
    assert_eq!(
        lines.next().unwrap(),
        "time_ns,time_s,flow,event,exchange,transmission,transmissions,bytes,timer_s,rtt_s,\
         rto_s,state,srtt_s,rttvar_s,vars,reason"
    );
    assert_eq!(lines.next().unwrap(), "0,0.0,0,transmit,0,1,,60,,,,,,,,");
    assert_eq!(
        lines.next().unwrap(),
        "2000000000,2.0,0,expire,0,1,,,2.0,,,,,,,"
    );
    let queue = std::fs::read_to_string(dir.path().join("queue.csv")).unwrap();
    assert!(queue.starts_with(
        "time_ns,time_s,link,event,drop_cause,packet,flow,ip_bytes,queue_bytes,queue_packets\n\
         0,0.0,up,enqueue,,0,0,88,88,1\n"
    ));
}

#[test]
fn run_selections() {
    let s = RunSelection::parse("0,5,10-12").unwrap();
    assert!(s.contains(0, 0) && s.contains(5, 1) && s.contains(11, 0));
    assert!(!s.contains(1, 1) && !s.contains(13, 0));
    assert!(RunSelection::parse("first").unwrap().contains(7, 0));
    assert!(!RunSelection::parse("first").unwrap().contains(7, 1));
    assert!(!RunSelection::default().contains(1, 1));
    assert_eq!(s.to_string(), "0,5,10-12");
    for bad in ["", "a", "3-1", "1,,2", "-1"] {
        assert!(RunSelection::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn the_output_table_selects_runs_and_format_without_sweeping() {
    let text = "name = \"t\"\n[[flows]]\ncc = [\"default\", \"fasor\"]\n[output]\n\
                trace = [0, 1]\ntrace_format = \"csv\"\n";
    let sc = Scenario::parse(text, "t.toml").unwrap();
    assert_eq!(
        sc.output.trace,
        Some(RunSelection::Runs(vec![(0, 0), (1, 1)]))
    );
    assert_eq!(sc.output.trace_format, Some(TraceFormat::Csv));
    assert_eq!(sc.combinations(), 2);
    let text = "name = \"t\"\n[[flows]]\ncc = \"default\"\n[output]\ntrace = \"first\"\n";
    let sc = Scenario::parse(text, "t.toml").unwrap();
    assert_eq!(sc.output.trace, Some(RunSelection::FirstOfEach));
    for (bad, key) in [
        ("trace = [-1]", "output.trace"),
        ("trace = \"0-x\"", "output.trace"),
        ("trace_format = \"xml\"", "output.trace_format"),
        ("traces = [1]", "output.traces"),
    ] {
        let text = format!("name = \"t\"\n[[flows]]\ncc = \"default\"\n[output]\n{bad}\n");
        let e = Scenario::parse(&text, "t.toml").unwrap_err().to_string();
        assert!(e.contains(key) && e.contains("t.toml:5:"), "{bad}: {e}");
    }
}

#[test]
fn tcp_parquet_starts_with_the_handshake_and_the_result_is_unchanged() {
    let s = spec(
        "name = \"t\"\n[network]\nbuffer_bytes = 1410000\n[[flows]]\ncount = 2\n\
         cc = \"tcp-newreno\"\nexchanges = 3\nstart_jitter_s = 0\n",
    );
    let (result, trace) = run_traced(&s).unwrap();
    assert_eq!(result, run_one(&s).unwrap());
    let dir = tempfile::tempdir().unwrap();
    trace.write(dir.path(), &s, TraceFormat::Parquet).unwrap();
    let b = read(&dir.path().join("tcp.parquet"));
    let side = strings(&b, "side");
    let u32s = |name: &str| -> Vec<u32> {
        b.column_by_name(name)
            .unwrap()
            .as_primitive::<UInt32Type>()
            .values()
            .to_vec()
    };
    let ack = b
        .column_by_name("ack")
        .unwrap()
        .as_primitive::<UInt64Type>();
    // First: flow 0's client receives the SYN-ACK (ack 1): the model's initial window of 4
    // segments (docs/experiments.md §5.3, `iw`), ssthresh not yet set.
    assert_eq!(side[0].as_deref(), Some("client"));
    assert_eq!(
        (u32s("flow")[0], u32s("connection")[0], ack.value(0)),
        (0, 0, 1)
    );
    assert_eq!(u32s("cwnd_segments")[0], 4);
    assert_eq!(u32s("ssthresh_segments")[0], 0x7fff_ffff);
    assert_eq!(strings(&b, "ca_state")[0].as_deref(), Some("open"));
    // The SYN-ACK gave the first RTT sample.
    assert!(f64s(&b, "srtt_s")[0].is_some());
    // Both ends of both flows appear; no loss, so never in recovery.
    assert!(side.iter().any(|s| s.as_deref() == Some("server")));
    assert!(u32s("flow").contains(&1));
    assert!(strings(&b, "ca_state")
        .iter()
        .all(|s| s.as_deref() == Some("open")));
    // Events of a TCP run: the columns, no rows.
    let events = File::open(dir.path().join("events.parquet")).unwrap();
    let events = ParquetRecordBatchReaderBuilder::try_new(events).unwrap();
    assert_eq!(events.metadata().file_metadata().num_rows(), 0);
    assert_eq!(events.schema().field(0).name(), "time_ns");
}
