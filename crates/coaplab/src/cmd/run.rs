//! `coaplab run`: simulate a scenario file (all its sweeps and replications) in parallel,
//! write the results directory and print a percentile table.

use std::io::{IsTerminal, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Instant as WallClock, SystemTime, UNIX_EPOCH};

use coaplab_lab::exec::{self, Progress};
use coaplab_lab::report;
use coaplab_lab::results::{Manifest, ResultsDir};
use coaplab_lab::scenario::{self, Scenario};
use coaplab_lab::shard::Shard;
use coaplab_lab::trace::TraceOptions;

/// Arguments of `coaplab run`.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "\
Every list in the scenario file is a sweep axis; the runs are the cartesian product of all
axes times the replications, each with its own seed derived from the base seed, the parameter
values and the replication (runs that differ only in the algorithm share a seed, so algorithms
are compared on the same start times and loss patterns). Runs execute in parallel; each one's
rows are written as soon as it ends, so an interrupted sweep continues with --resume.
One invocation at a time writes a results directory: it holds an flock(2) on DIR/.lock, and a
second one into the same DIR fails at once (exit status 1).

RESULTS (in --out DIR):
  flows.csv      one row per flow: run, combination, replication, seed, flow, cc, workload,
                 clients, buffer_bytes, loss, fct_s, exchanges, failed_exchanges,
                 transmissions, retransmissions, unnecessary_retransmissions, timeouts,
                 rto_max_s, coap_rtt_median_s, bytes_up, bytes_down, completed,
                 transmission_counts (exchanges that took 1, 2, ... transmissions), the TCP
                 counters, unfinished (gave_up, time_cap or empty), elapsed_s (first request to
                 the flow's end), and one column per swept parameter (param.KEY for
                 [flows.params] keys)
  summary.csv    one row per (parameter combination, cc, workload), replications pooled:
                 flows not completed (incomplete, unfinished_gave_up, unfinished_time_cap),
                 FCT min, p10, p25, p50, p75, p90, p95, max (type-7 interpolation, an
                 unfinished flow a censored value: a percentile that reads one is unbounded
                 and left empty; fct_p50_at_least_s bounds an unbounded median), mean,
                 standard deviation, 95 % bootstrap interval of the median, the median
                 retransmissions and unnecessary retransmissions per flow and the
                 transmission counts (exchanges_tx1, exchanges_tx2, ...)
  runs.csv       one row per run: status, error, wall time, drops by cause and busy time of
                 each bottleneck direction
  manifest.json  the expanded parameters, seeds, code version, results_format (the version of
                 the files' columns), status and wall time per run
  runs/          two files per ended run, each checked by --resume (run id, plan fingerprint,
                 CRC-32); a run whose files do not verify is run again

TRACES (--trace DIR, --trace-runs, or [output] trace in the scenario; simulated runs only):
  DIR/runNNNNNN/events.parquet   per flow: every transmission, timer expiry (timer_s), CoAP
                                 RTT sample (rtt_s), failure, and the algorithm's RTO and
                                 state (rto_s, state: FASOR's FAST/FAST_SLOW_FAST/SLOW_FAST)
                                 after every exchange
  DIR/runNNNNNN/queue.parquet    each bottleneck FIFO: enqueue, dequeue, drop by cause, with
                                 queue_bytes and queue_packets after each
  DIR/runNNNNNN/tcp.parquet      CoAP over TCP: cwnd, ssthresh, pipe, RTO, SRTT per ACK
  DIR/runNNNNNN/link-up.pcap, link-down.pcap
                                 every packet offered to that bottleneck direction, as IPv4
                                 (LINKTYPE_RAW) with the simulated addresses and instants
  DIR/runNNNNNN/frames.parquet   mesh runs (no queue table or pcap there): every 802.15.4
                                 frame on air, per hop (data fragments, ACKs, RPL control)
  Tracing does not change any results file. Columns: docs/scenarios.md, Traces.

EXAMPLES:
  coaplab run scenarios/quickstart.toml
  coaplab run scenarios/fasor-globecom18.toml --reps 2 --jobs 2 --out results/fasor
  coaplab run scenarios/fasor-globecom18.toml --reps 2 --jobs 2 --out results/fasor --resume
  coaplab run scenarios/pesola-long-lived.toml --dry-run
  coaplab run scenarios/quickstart.toml --out results/qs --trace-runs 0,5   (in results/qs/trace)
  coaplab run scenarios/quickstart.toml --mode emulated --reps 1   (real time, as root)
  coaplab run scenarios/quickstart.toml --set network.buffer_bytes=2500 --set flows.0.cc=fasor
  coaplab run scenarios/quickstart.toml --shard 2/3 --out results/q2   (then coaplab merge)

The scenario format is described in docs/scenarios.md.")]
pub(crate) struct Args {
    /// The scenario file (TOML).
    #[arg(value_name = "SCENARIO.toml")]
    scenario: PathBuf,
    /// Results directory [default: results/<name>-<UTC timestamp>, with -2, -3, ... if that is taken].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Replications per parameter combination, instead of the file's `replications` (the same
    /// limits: 1 to 1000000).
    #[arg(long, value_name = "N", value_parser = scenario::check_replications)]
    reps: Option<u32>,
    /// Base seed, instead of the file's `seed` (the same limits: 0 to 2^63 - 1).
    #[arg(long, value_name = "S", value_parser = scenario::check_seed)]
    seed: Option<u64>,
    /// Runs simulated at once [default: the number of cores].
    #[arg(long, value_name = "J", value_parser = clap::value_parser!(u32).range(1..))]
    jobs: Option<u32>,
    /// Continue the sweep in --out DIR: finished runs whose files verify are kept, the others
    /// run (again), temporaries of killed invocations are removed.
    #[arg(long, requires = "out")]
    resume: bool,
    /// Check the scenario and print the sweep axes and the number of runs, without running.
    #[arg(long)]
    dry_run: bool,
    /// simulated: virtual time. emulated: real time, our endpoints on real sockets in two
    /// network namespaces joined by the link emulator (root; one run at a time; CoAP over TCP
    /// on the kernel's reno / bbr, whose unnecessary retransmissions are not measured; HTTP
    /// cells with the hyper client and server of http-get / http-server). See
    /// docs/emulation.md.
    #[arg(long, value_name = "MODE", default_value = "simulated", value_parser = ["simulated", "emulated"])]
    mode: String,
    /// Write traces of chosen runs into DIR (one directory per run: events, queue and TCP
    /// tables, a pcap per bottleneck direction; on a mesh: events and every 802.15.4 frame on
    /// air) [default with --trace-runs or the scenario's [output] trace: OUT/trace].
    #[arg(long, value_name = "DIR")]
    trace: Option<PathBuf>,
    /// The runs to trace: run ids and ranges (0,5,10-12), or `first` for the first replication
    /// of every combination [default: the scenario's [output] trace, else run 0].
    #[arg(long, value_name = "RUNS", value_parser = coaplab_lab::trace::RunSelection::parse)]
    trace_runs: Option<coaplab_lab::trace::RunSelection>,
    /// Trace tables as `parquet` (read by pandas, polars, arrow) or `csv` [default: the
    /// scenario's [output] trace_format, else parquet].
    #[arg(long, value_name = "FORMAT", value_parser = coaplab_lab::trace::TraceFormat::parse)]
    trace_format: Option<coaplab_lab::trace::TraceFormat>,
    /// Override a scenario key before the file is checked: a dotted path (a number indexes
    /// [[flows]]) and a TOML value (a bare word is a string; a list is a sweep axis), e.g.
    /// network.buffer_bytes=2500, flows.0.cc=fasor, 'network.loss=["none", "high"]'. Repeatable;
    /// recorded in manifest.json. Seeds derive from the values of the sweep axes (not those of
    /// algorithm axes), so replacing an axis by a scalar changes the runs' seeds: a one-element
    /// list ('network.buffer_bytes=[2500]') keeps the axis and the seeds of that cell.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// Python files defining algorithms the scenario may name (their `ALGORITHMS`): the run is
    /// handed over to `python3 -m coaplab run` with the same arguments (simulated runs only),
    /// which needs the coaplab Python package (`pip install ./python`; COAPLAB_PYTHON names
    /// another Python). Put SCENARIO.toml first. See docs/suite.md.
    #[arg(long, value_name = "FILE.py", num_args = 1..)]
    cc_from: Vec<PathBuf>,
    /// Run only shard K of N of the plan (the runs whose id modulo N is K-1), for running one
    /// plan on N machines; join their --out directories with `coaplab merge`.
    #[arg(long, value_name = "K/N")]
    shard: Option<Shard>,
    /// No progress output: neither the bar drawn on a terminal nor the progress lines
    /// printed every few seconds when standard error is not a terminal (errors are still
    /// printed).
    #[arg(long, short = 'q')]
    quiet: bool,
}

/// The traces asked for by the command line and the scenario's `[output]`, if any.
fn trace_options(args: &Args, scenario: &Scenario, out: &Path) -> Option<TraceOptions> {
    let on = args.trace.is_some() || args.trace_runs.is_some() || scenario.output.trace.is_some();
    on.then(|| TraceOptions {
        dir: args.trace.clone().unwrap_or_else(|| out.join("trace")),
        runs: args
            .trace_runs
            .clone()
            .or_else(|| scenario.output.trace.clone())
            .unwrap_or_default(),
        format: args
            .trace_format
            .or(scenario.output.trace_format)
            .unwrap_or_default(),
    })
}

pub(crate) fn run(args: Args) -> ExitCode {
    if !args.cc_from.is_empty() {
        return match super::python::hand_over("run", &args.cc_from) {
            Ok(code) => code,
            Err(e) => {
                eprintln!("coaplab run: {e}");
                ExitCode::FAILURE
            }
        };
    }
    match run_scenario(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("coaplab run: {e}");
            ExitCode::FAILURE
        }
    }
}

/// [`scenario::warnings`] of every parameter combination: each distinct sentence once, with
/// the combinations it holds for when not all.
fn plan_warnings(plan: &scenario::Plan<'_>) -> Vec<String> {
    let scenario = plan.scenario();
    let total = scenario.combinations();
    // Only a mesh has anything to warn about: a star scenario (every one, unless the topology
    // kind is swept) costs one combination's reading, not all of them (10^4 in a sweep test).
    let mesh_possible = scenario.axes.iter().any(|a| a.key == "topology.kind")
        || matches!(plan.config(0).topology, scenario::Topology::Mesh(_));
    if !mesh_possible {
        return Vec::new();
    }
    let mut seen: Vec<(String, Vec<usize>)> = Vec::new();
    for c in 0..total {
        for w in scenario::warnings(&plan.config(c)) {
            match seen.iter_mut().find(|(text, _)| *text == w) {
                Some((_, combos)) => combos.push(c),
                None => seen.push((w, vec![c])),
            }
        }
    }
    seen.into_iter()
        .map(|(text, combos)| {
            if combos.len() == total {
                text
            } else {
                let list: Vec<String> = combos.iter().map(|c| c.to_string()).collect();
                let noun = if combos.len() == 1 {
                    "combination"
                } else {
                    "combinations"
                };
                format!("{noun} {}: {text}", list.join(", "))
            }
        })
        .collect()
}

/// In emulated mode SIGINT, SIGTERM and SIGHUP end the running run through its normal
/// teardown (namespaces and devices removed) instead of killing the process.
fn interrupt_on_signals() {
    std::thread::spawn(|| {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return;
        };
        rt.block_on(async {
            use tokio::signal::unix::{signal, SignalKind};
            let (Ok(mut int), Ok(mut term), Ok(mut hup)) = (
                signal(SignalKind::interrupt()),
                signal(SignalKind::terminate()),
                signal(SignalKind::hangup()),
            ) else {
                return;
            };
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
                _ = hup.recv() => {}
            }
            eprintln!("coaplab run: interrupted; ending the emulated run");
            coaplab_lab::sim::emulated::interrupt();
        });
    });
}

fn run_scenario(args: &Args) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let scenario = Scenario::load_with(&args.scenario, &args.sets)?;
    let shard = args.shard.unwrap_or(Shard::WHOLE);
    let reps = args.reps.unwrap_or(scenario.replications);
    let seed = args.seed.unwrap_or(scenario.seed);
    let plan = scenario.plan(Some(reps), Some(seed));
    for warning in plan_warnings(&plan) {
        eprintln!("coaplab run: warning: {warning}");
    }
    if args.dry_run {
        print!("{}", plan_text(&scenario, plan.len(), reps, seed));
        if let Some(shard) = args.shard {
            println!("  shard {shard}: {} runs", shard.len_of(plan.len()));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_out(&scenario.name));
    let trace = trace_options(args, &scenario, &out);
    if let Some(t) = &trace {
        if args.mode == "emulated" {
            return Err(
                "--trace: traces are written by simulated runs only (the emulator's \
                        own capture: coaplab emulate --pcap)"
                    .into(),
            );
        }
        if let coaplab_lab::trace::RunSelection::Runs(ranges) = &t.runs {
            if ranges.iter().all(|&(first, _)| first >= plan.len()) {
                return Err(format!(
                    "--trace-runs {}: the plan has {} runs (0 to {})",
                    t.runs,
                    plan.len(),
                    plan.len() - 1
                )
                .into());
            }
        }
    }
    let mut manifest = Manifest::new(&plan);
    manifest.shard = args.shard.map(|s| s.to_string());
    manifest.overrides = args.sets.clone();
    let dir = ResultsDir::open(&out, &manifest, args.resume)?;
    if dir.removed_temporaries() > 0 {
        eprintln!(
            "coaplab run: removed {} temporary files of a killed invocation",
            dir.removed_temporaries()
        );
    }
    let emulated = args.mode == "emulated";
    let run_fn: exec::RunFn = if emulated {
        if let Some(why) = coaplab_emu::emulator::unavailable() {
            return Err(format!("--mode emulated: {why}").into());
        }
        interrupt_on_signals();
        coaplab_lab::sim::emulated::run_one
    } else {
        coaplab_lab::sim::run_one
    };
    let jobs = if emulated {
        1 // real time: parallel runs would compete for the CPUs and distort each other
    } else {
        args.jobs.map(|j| j as usize).unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
    };
    let shard_text = match args.shard {
        Some(s) => format!(" (shard {s}: {} runs)", s.len_of(plan.len())),
        None => String::new(),
    };
    eprintln!(
        "coaplab run: {} runs ({} combinations x {reps} replications){shard_text} on {jobs} \
         threads{} -> {}",
        plan.len(),
        scenario.combinations(),
        if emulated {
            ", emulated in real time"
        } else {
            ""
        },
        out.display()
    );
    let mut bar = Bar::new(std::io::stderr().is_terminal(), args.quiet);
    if let Some(t) = &trace {
        eprintln!(
            "coaplab run: tracing runs {} into {}",
            t.runs,
            t.dir.display()
        );
    }
    let outcome = match &trace {
        None => exec::execute_shard(&plan, shard, &dir, manifest, jobs, run_fn, &mut |p| {
            bar.update(p)
        })?,
        Some(t) => exec::execute_with(
            &plan,
            shard,
            &dir,
            manifest,
            jobs,
            &|spec| t.run(spec, run_fn, coaplab_lab::sim::run_traced),
            &mut |p| bar.update(p),
        )?,
    };
    bar.finish();
    print!("{}", report::table(&outcome.summary));
    eprintln!(
        "(n: flows completed; gave_up, time_cap: unfinished flows, which gave up or were still \
         running when the run ended; min..max: flow completion time in s, replications pooled, \
         type-7 percentiles, an unfinished flow counting as at least its elapsed time, above \
         every finished one: >=X is unbounded; rexmit, unnec: median retransmissions and \
         unnecessary retransmissions per flow)"
    );
    // Unfinished flows are results, not errors: the exit status stays 0 (docs/scenarios.md).
    if let Some(warning) = report::unfinished_warning(&outcome.summary) {
        eprintln!("coaplab run: {warning}");
    }
    eprintln!(
        "coaplab run: {} finished, {} skipped (already finished), {} failed in {:.1} s; results in {}",
        outcome.ok,
        outcome.skipped,
        outcome.failed,
        outcome.manifest.wall_s,
        out.display()
    );
    if outcome.failed > 0 {
        eprintln!(
            "coaplab run: failed runs are listed with their error in {}; rerun them with \
             --out {} --resume",
            out.join("manifest.json").display(),
            out.display()
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// What `--dry-run` prints.
fn plan_text(scenario: &Scenario, runs: usize, reps: u32, seed: u64) -> String {
    let mut out = format!(
        "scenario {} ({}): seed {seed}, {} combinations x {reps} replications = {runs} runs\n",
        scenario.name,
        scenario.file(),
        scenario.combinations(),
    );
    for axis in &scenario.axes {
        out.push_str(&format!(
            "  {} (line {}): {}\n",
            axis.key,
            axis.line,
            axis.values.join(", ")
        ));
    }
    out
}

/// `results/<name>-<YYYYMMDD-HHMMSS>` in UTC, or with `-2`, `-3`, ... appended when a run
/// started in the same second already took it (two runs typed on one line would otherwise
/// meet in one directory and the second be refused).
pub(crate) fn default_out(name: &str) -> PathBuf {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let stem = format!("{name}-{}", utc_stamp(secs));
    let first = Path::new("results").join(&stem);
    if !first.exists() {
        return first;
    }
    (2..=1000)
        .map(|k| Path::new("results").join(format!("{stem}-{k}")))
        .find(|p| !p.exists())
        .unwrap_or(first)
}

/// `YYYYMMDD-HHMMSS` of a Unix time (civil-from-days, H. Hinnant).
fn utc_stamp(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let tod = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        tod / 3600,
        tod / 60 % 60,
        tod % 60
    )
}

/// How often a progress line is printed when standard error is not a terminal.
const PROGRESS_INTERVAL_DEFAULT_MS: u64 = 5_000;

/// Overrides [`PROGRESS_INTERVAL_DEFAULT_MS`] (milliseconds; 0: a line after every run), for
/// tests and for logs that want more or fewer lines.
const PROGRESS_INTERVAL_ENV: &str = "COAPLAB_PROGRESS_INTERVAL_MS";

/// Progress on stderr: a one-line bar redrawn on a terminal, otherwise (a log file, a pipe,
/// CI) a line every few seconds; nothing with `--quiet`. Errors of failed runs are printed
/// once either way.
struct Bar {
    tty: bool,
    quiet: bool,
    started: WallClock,
    shown_errors: usize,
    /// Runs ended in this invocation (each update but the one listing unverified runs
    /// follows one run): runs skipped by --resume are not counted in the rate.
    ran: usize,
    /// When the last progress line was printed (not a terminal).
    last_line: Option<WallClock>,
    interval: std::time::Duration,
}

impl Bar {
    fn new(tty: bool, quiet: bool) -> Self {
        let ms = std::env::var(PROGRESS_INTERVAL_ENV)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(PROGRESS_INTERVAL_DEFAULT_MS);
        Bar {
            tty,
            quiet,
            started: WallClock::now(),
            shown_errors: 0,
            ran: 0,
            last_line: None,
            interval: std::time::Duration::from_millis(ms),
        }
    }

    /// The line printed when stderr is not a terminal.
    fn line(&self, p: &Progress) -> String {
        let elapsed_s = self.started.elapsed().as_secs_f64();
        progress_line(p.done, p.total, p.failed, self.ran, elapsed_s)
    }

    fn update(&mut self, p: &Progress) {
        let mut err = std::io::stderr().lock();
        if !p.unverified.is_empty() {
            let list: Vec<String> = p
                .unverified
                .iter()
                .take(10)
                .map(|(run, why)| format!("run {run} ({why})"))
                .collect();
            let more = p.unverified.len().saturating_sub(list.len());
            let more = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            let _ = writeln!(
                err,
                "coaplab run: redoing {} runs whose files did not verify: {}{more}",
                p.unverified.len(),
                list.join(", ")
            );
        }
        if let Some((run, error)) = &p.error {
            // The first few errors in full; the rest are in manifest.json.
            if self.shown_errors < 3 {
                let clear = if self.tty { "\r\x1b[K" } else { "" };
                let _ = writeln!(err, "{clear}coaplab run: run {run} failed: {error}");
            }
            self.shown_errors += 1;
        }
        if p.unverified.is_empty() {
            self.ran += 1;
        }
        if self.quiet {
            return;
        }
        if !self.tty {
            // Every interval since the start or the last line; the last run always gets one.
            let since = self.last_line.unwrap_or(self.started).elapsed();
            let due = since >= self.interval || p.done == p.total;
            if due {
                let _ = writeln!(err, "{}", self.line(p));
                self.last_line = Some(WallClock::now());
            }
            return;
        }
        let width = 30;
        let filled = (p.done * width).checked_div(p.total).unwrap_or(width);
        let elapsed = self.started.elapsed().as_secs_f64();
        let eta = if p.done > 0 && p.done < p.total {
            format!(
                " ETA {:.0} s",
                elapsed / p.done as f64 * (p.total - p.done) as f64
            )
        } else {
            String::new()
        };
        let failed = if p.failed > 0 {
            format!(", {} failed", p.failed)
        } else {
            String::new()
        };
        let _ = write!(
            err,
            "\r\x1b[K[{}{}] {}/{} runs{failed}{eta}",
            "#".repeat(filled),
            ".".repeat(width - filled),
            p.done,
            p.total
        );
        let _ = err.flush();
    }

    fn finish(&self) {
        if self.tty && !self.quiet {
            eprintln!();
        }
    }
}

/// `coaplab run: 12/600 runs (1 failed), 3.4 runs/s, ETA 173 s`: `ran` runs ended in
/// `elapsed_s` seconds of this invocation give the rate and the time left.
fn progress_line(done: usize, total: usize, failed: usize, ran: usize, elapsed_s: f64) -> String {
    let failed = if failed > 0 {
        format!(" ({failed} failed)")
    } else {
        String::new()
    };
    let rate = if elapsed_s > 0.0 {
        ran as f64 / elapsed_s
    } else {
        0.0
    };
    let eta = if done >= total {
        "done".to_string()
    } else if rate > 0.0 {
        format!("ETA {:.0} s", (total - done) as f64 / rate)
    } else {
        "ETA unknown".to_string()
    };
    format!("coaplab run: {done}/{total} runs{failed}, {rate:.1} runs/s, {eta}")
}

#[cfg(test)]
mod tests {
    use super::{progress_line, utc_stamp};

    #[test]
    fn progress_lines() {
        assert_eq!(
            progress_line(12, 600, 1, 12, 4.0),
            "coaplab run: 12/600 runs (1 failed), 3.0 runs/s, ETA 196 s"
        );
        assert_eq!(
            progress_line(600, 600, 0, 590, 10.0),
            "coaplab run: 600/600 runs, 59.0 runs/s, done"
        );
        assert_eq!(
            progress_line(10, 600, 0, 0, 1.0),
            "coaplab run: 10/600 runs, 0.0 runs/s, ETA unknown"
        );
    }

    #[test]
    fn utc_stamps() {
        assert_eq!(utc_stamp(0), "19700101-000000");
        assert_eq!(utc_stamp(951_782_400), "20000229-000000");
        assert_eq!(utc_stamp(1_795_000_000), "20261118-110640");
    }
}
