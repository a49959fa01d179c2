//! The results directory. Each run's rows and status are written atomically (temporary file,
//! fsync, rename) under `runs/` as soon as the run ends, so an interruption loses at most the
//! runs in progress; `flows.csv`, `summary.csv` and `manifest.json` are assembled from `runs/`
//! at the end and by every `--resume`.
//!
//! ```text
//! DIR/.lock                 flock(2)ed by the invocation writing DIR (released when it ends)
//! DIR/manifest.json         the plan and every run's status
//! DIR/flows.csv             one row per flow, finished runs in run order
//! DIR/summary.csv           one row per (combination, cc, workload)
//! DIR/runs.csv              one row per run: status, error, wall time, bottleneck counters
//! DIR/runs/000042.csv       run 42's rows (no header)
//! DIR/runs/000042.json      run 42's status: written last, it marks the run finished
//! ```
//!
//! A status file names its run, the plan (the manifest's fingerprint), the length and CRC-32 of
//! the rows file, and ends with the CRC-32 of its own text (see [`RunFiles`]); a run whose files
//! do not verify is run again, so a truncated, garbled, swapped or foreign file never reaches
//! `flows.csv`.

use std::fmt;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::manifest::{Manifest, ManifestRun, Status};
use super::record::{RunError, RunResult};
use super::summary::{self, Summarizer, SummaryRow};
use super::{csv, flows, runs};
use crate::files::{self, Input, InputError};
use crate::scenario::{Plan, RunConfig, RunSpec};

/// A results directory that cannot be used.
#[derive(Debug)]
pub enum ResultsError {
    /// Reading or writing failed.
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The directory already holds results and `--resume` was not given.
    Exists(PathBuf),
    /// `--resume` on a directory of another scenario, replication count or seed.
    Mismatch {
        /// The directory.
        path: PathBuf,
        /// The fingerprint found there.
        found: String,
        /// The fingerprint of this invocation.
        expected: String,
    },
    /// Another invocation holds the directory's lock: it is writing there now.
    Locked(PathBuf),
    /// `--resume` with another `--shard` than the directory was written with.
    ShardMismatch {
        /// The directory.
        path: PathBuf,
        /// The directory's shard (`None`: the whole plan).
        found: Option<String>,
        /// This invocation's.
        expected: Option<String>,
    },
    /// A file could not be read, or is larger than its kind's limit ([`crate::files`]).
    Input(InputError),
    /// A file in the directory is not what this program writes.
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

impl fmt::Display for ResultsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResultsError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            ResultsError::Exists(p) => write!(
                f,
                "{} already holds results; pass --resume to continue them or --out for a new \
                 directory",
                p.display()
            ),
            ResultsError::Mismatch {
                path,
                found,
                expected,
            } => write!(
                f,
                "{} holds results of another plan (fingerprint {found}, this one is {expected}: \
                 scenario text, --reps or --seed differ); use another --out",
                path.display()
            ),
            ResultsError::Locked(p) => write!(
                f,
                "{} is in use by another coaplab run (it holds {}); wait for it to end or use \
                 another --out",
                p.display(),
                p.join(LOCK_FILE).display()
            ),
            ResultsError::ShardMismatch {
                path,
                found,
                expected,
            } => {
                let name = |s: &Option<String>| match s {
                    Some(s) => format!("shard {s}"),
                    None => "the whole plan".to_string(),
                };
                write!(
                    f,
                    "{} holds {} and this invocation runs {}; resume it with the same --shard",
                    path.display(),
                    name(found),
                    name(expected)
                )
            }
            ResultsError::Corrupt { path, message } => {
                write!(f, "{}: {message}", path.display())
            }
            ResultsError::Input(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ResultsError {}

impl From<InputError> for ResultsError {
    fn from(e: InputError) -> Self {
        ResultsError::Input(e)
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ResultsError + '_ {
    move |source| ResultsError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Writes `bytes` to `path` so that readers see the old file or the whole new one, never a
/// part: a temporary file in the same directory, fsync, rename. The rename replaces whatever
/// `path` is, a symbolic link included (the link, not the file it points to), and the
/// temporary is created new (`O_EXCL`: a link planted at its name is not followed either).
/// Every whole file coaplab writes in a results directory, and the page of `coaplab report`,
/// is written so.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ResultsError> {
    let mut file = AtomicFile::create(path)?;
    file.write(bytes)?;
    file.commit()
}

/// A file written piece by piece that replaces `path` only when committed, as
/// [`write_atomic`] does; dropped uncommitted (an error on the way), it removes its temporary.
struct AtomicFile {
    path: PathBuf,
    tmp: PathBuf,
    out: Option<std::io::BufWriter<std::fs::File>>,
}

impl AtomicFile {
    fn create(path: &Path) -> Result<Self, ResultsError> {
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(format!(".tmp{}", std::process::id()));
        let tmp = PathBuf::from(tmp);
        let file = files::create_new(&tmp).map_err(io(&tmp))?;
        Ok(AtomicFile {
            path: path.to_path_buf(),
            tmp,
            out: Some(std::io::BufWriter::with_capacity(1 << 16, file)),
        })
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), ResultsError> {
        let out = self.out.as_mut().expect("an uncommitted file");
        out.write_all(bytes).map_err(io(&self.tmp))
    }

    fn commit(mut self) -> Result<(), ResultsError> {
        let out = self.out.take().expect("an uncommitted file");
        let file = out
            .into_inner()
            .map_err(|e| io(&self.tmp)(e.into_error()))?;
        file.sync_all().map_err(io(&self.tmp))?;
        drop(file);
        std::fs::rename(&self.tmp, &self.path).map_err(io(&self.path))
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.out.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// The lock file inside a results directory.
pub const LOCK_FILE: &str = ".lock";

/// How long [`lock`] retries a lock found held before reporting [`ResultsError::Locked`]. A
/// child that another thread of this process is starting holds a copy of every open
/// descriptor from its fork to its exec (close-on-exec closes it only then), and with the
/// copy the flock(2): a directory that this process released and opens again can look locked
/// for that instant. The test suite's parallel tests, which start `ip` and peers while others
/// reopen results directories, hit it in 3 of 8 runs with six tests at a time. Another
/// invocation writing the directory holds the lock for its whole run and is still reported,
/// this much later.
const LOCK_RETRY_MS: u64 = 250;

/// Takes the exclusive flock(2) on `root`/[`LOCK_FILE`], retrying a held lock for up to
/// [`LOCK_RETRY_MS`]. The lock belongs to the open file: it is released when the file is
/// closed, at the latest when the process ends however it ends (even by SIGKILL), so no stale
/// lock can outlive its holder.
fn lock(root: &Path) -> Result<std::fs::File, ResultsError> {
    let path = root.join(LOCK_FILE);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(io(&path))?;
    let step = std::time::Duration::from_millis(5);
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(LOCK_RETRY_MS);
    loop {
        match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(file),
            Err(rustix::io::Errno::WOULDBLOCK) if std::time::Instant::now() < deadline => {
                std::thread::sleep(step);
            }
            Err(rustix::io::Errno::WOULDBLOCK) => {
                return Err(ResultsError::Locked(root.to_path_buf()))
            }
            Err(e) => return Err(io(&path)(e.into())),
        }
    }
}

/// Whether `name` is a temporary of [`write_atomic`] (`NAME.tmpPID`).
fn is_temporary(name: &str) -> bool {
    name.rsplit_once(".tmp")
        .is_some_and(|(_, pid)| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
}

/// Removes the temporaries of [`write_atomic`] in `dir`: under the lock no other invocation
/// writes there, so every one is left by an invocation that was killed. Returns how many.
fn remove_temporaries(dir: &Path) -> Result<usize, ResultsError> {
    let mut removed = 0;
    for entry in std::fs::read_dir(dir).map_err(io(dir))? {
        let entry = entry.map_err(io(dir))?;
        if entry.file_name().to_str().is_some_and(is_temporary) {
            std::fs::remove_file(entry.path()).map_err(io(&entry.path()))?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// The text of `runs/NNNNNN.json`: pretty JSON whose last field is the CRC-32 of the whole
/// text with that field's value written as eight zeros.
#[derive(Debug, Serialize, Deserialize)]
struct StatusFile {
    /// The run.
    run: usize,
    /// The plan's fingerprint ([`super::manifest::fingerprint`]).
    plan: String,
    /// Length of `runs/NNNNNN.csv` (0 for a failed run, which has none).
    rows_bytes: u64,
    /// CRC-32 of `runs/NNNNNN.csv`, eight hex digits.
    rows_crc32: String,
    /// The run's entry of the manifest.
    status: ManifestRun,
    /// CRC-32 of this file's text, eight hex digits (see above).
    crc32: String,
}

/// The key of [`StatusFile::crc32`] as it appears in the text.
const CRC_KEY: &str = "\"crc32\": \"";
const CRC_ZERO: &str = "00000000";

impl StatusFile {
    fn to_text(&self) -> String {
        let text = serde_json::to_string_pretty(self).expect("a run status serializes");
        let at = text.rfind(CRC_KEY).expect("crc32 is a field") + CRC_KEY.len();
        let crc = crc32fast::hash(text.as_bytes());
        format!("{}{crc:08x}{}", &text[..at], &text[at + CRC_ZERO.len()..])
    }

    /// Parses and checks the text's own checksum; `Err` says why it does not verify.
    fn from_text(text: &str) -> Result<StatusFile, String> {
        let at = text
            .rfind(CRC_KEY)
            .map(|i| i + CRC_KEY.len())
            .ok_or("status file has no checksum (truncated, or from an older coaplab)")?;
        let written = text
            .get(at..at + CRC_ZERO.len())
            .and_then(|hex| u32::from_str_radix(hex, 16).ok())
            .ok_or("status file checksum unreadable")?;
        let zeroed = format!("{}{CRC_ZERO}{}", &text[..at], &text[at + CRC_ZERO.len()..]);
        if crc32fast::hash(zeroed.as_bytes()) != written {
            return Err("status file checksum mismatch (truncated or altered)".to_string());
        }
        serde_json::from_str(text).map_err(|e| format!("status file unreadable: {e}"))
    }
}

/// What `runs/` holds for one run, after verification.
#[derive(Debug, Clone, PartialEq)]
pub enum RunFiles {
    /// No status file: the run never ended (or its invocation was killed during it).
    Missing,
    /// Finished, and both files verify: its status and its rows.
    Ok {
        /// The run's manifest entry.
        status: ManifestRun,
        /// Its rows of `flows.csv`.
        rows: String,
    },
    /// Failed, and its status file verifies: its status, with the error.
    Failed(ManifestRun),
    /// A file that does not verify, and why: the run is run again. A status file verifies
    /// when its checksum matches its text, it names this run and this plan; a rows file when
    /// its length and CRC-32 are those its status file gives.
    Unverified(String),
}

/// The runs of a plan still to run ([`ResultsDir::pending`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pending {
    /// Runs not finished, in run order: never run, failed, or with files that do not verify.
    pub runs: Vec<usize>,
    /// The runs among them whose files did not verify, and why.
    pub unverified: Vec<(usize, String)>,
}

/// Reads `path` (a file of `runs/`, at most [`Input::ResultsTable`]'s limit), or `None` when
/// it does not exist.
fn read_optional(path: &Path) -> Result<Option<Vec<u8>>, ResultsError> {
    match files::read(path, Input::ResultsTable) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// An open results directory, locked for this invocation until the last clone is dropped.
#[derive(Debug, Clone)]
pub struct ResultsDir {
    root: PathBuf,
    /// The plan's fingerprint, written into and expected in every status file.
    plan: String,
    /// Held for the flock(2) on [`LOCK_FILE`].
    _lock: Arc<std::fs::File>,
    removed_temporaries: usize,
}

impl ResultsDir {
    /// Opens `root` for `manifest`'s plan: a new directory, or with `resume` one holding
    /// results of the same plan. Takes the directory's lock first ([`ResultsError::Locked`]
    /// when another invocation holds it) and removes the temporaries of killed invocations.
    ///
    /// Without `manifest.json`, `resume` refuses a directory whose `runs/` holds a verified
    /// status file of another plan ([`ResultsError::Mismatch`]).
    pub fn open(root: &Path, manifest: &Manifest, resume: bool) -> Result<Self, ResultsError> {
        std::fs::create_dir_all(root).map_err(io(root))?;
        let lock = lock(root)?;
        let existing = root.join("manifest.json");
        let runs = root.join("runs");
        let has_runs = match std::fs::read_dir(&runs) {
            Ok(mut entries) => entries.next().is_some(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => return Err(io(&runs)(e)),
        };
        let has_manifest = existing.exists();
        if has_manifest || has_runs {
            if !resume {
                return Err(ResultsError::Exists(root.to_path_buf()));
            }
            let found = if has_manifest {
                let text = files::read_text(&existing, Input::Manifest)?;
                let old: Manifest =
                    serde_json::from_str(&text).map_err(|e| ResultsError::Corrupt {
                        path: existing.clone(),
                        message: e.to_string(),
                    })?;
                if old.results_format != manifest.results_format {
                    return Err(format_mismatch(&existing, old.results_format));
                }
                if old.fingerprint == manifest.fingerprint && old.shard != manifest.shard {
                    return Err(ResultsError::ShardMismatch {
                        path: root.to_path_buf(),
                        found: old.shard,
                        expected: manifest.shard.clone(),
                    });
                }
                Some(old.fingerprint).filter(|f| *f != manifest.fingerprint)
            } else {
                foreign_plan(&runs, &manifest.fingerprint)?
            };
            if let Some(found) = found {
                return Err(ResultsError::Mismatch {
                    path: root.to_path_buf(),
                    found,
                    expected: manifest.fingerprint.clone(),
                });
            }
        }
        std::fs::create_dir_all(&runs).map_err(io(&runs))?;
        let removed_temporaries = remove_temporaries(root)? + remove_temporaries(&runs)?;
        let dir = ResultsDir {
            root: root.to_path_buf(),
            plan: manifest.fingerprint.clone(),
            _lock: Arc::new(lock),
            removed_temporaries,
        };
        if !has_manifest {
            dir.write_manifest(manifest)?;
        }
        Ok(dir)
    }

    /// The directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// How many temporaries of killed invocations [`ResultsDir::open`] removed.
    pub fn removed_temporaries(&self) -> usize {
        self.removed_temporaries
    }

    fn run_path(&self, run: usize, ext: &str) -> PathBuf {
        run_path(&self.root, run, ext)
    }

    /// What `runs/` holds for `run`, verified (see [`RunFiles`]). `Err` only when a file
    /// exists but cannot be read.
    pub fn check(&self, run: usize) -> Result<RunFiles, ResultsError> {
        check_run(&self.root, &self.plan, run)
    }

    /// Copies run `run`'s verified files from the results directory `from` (of the same plan)
    /// into this one, rows first and status last, as [`ResultsDir::record`] writes them. The
    /// files are copied byte for byte, so the run's files verify here as they did there.
    pub(crate) fn adopt(&self, from: &Path, run: usize) -> Result<(), ResultsError> {
        let status = run_path(from, run, "json");
        let status_bytes = files::read(&status, Input::ResultsTable)?;
        // The per-run parts of the side files are written before the rows, as `record` does.
        for side in SIDE_FILES {
            let part = run_path(from, run, side.name);
            if let Some(bytes) = read_optional(&part)? {
                write_atomic(&self.run_path(run, side.name), &bytes)?;
            }
        }
        let rows = run_path(from, run, "csv");
        if let Some(rows_bytes) = read_optional(&rows)? {
            write_atomic(&self.run_path(run, "csv"), &rows_bytes)?;
        }
        write_atomic(&self.run_path(run, "json"), &status_bytes)
    }

    /// Whether `run` finished successfully and its files verify (failed runs and runs whose
    /// files do not verify are run again by `--resume`).
    pub fn is_finished(&self, run: usize) -> bool {
        matches!(self.check(run), Ok(RunFiles::Ok { .. }))
    }

    /// The runs of a plan of `total` runs that are still to run.
    pub fn pending(&self, total: usize) -> Result<Pending, ResultsError> {
        let mut pending = Pending::default();
        for run in 0..total {
            match self.check(run)? {
                RunFiles::Ok { .. } => {}
                RunFiles::Missing | RunFiles::Failed(_) => pending.runs.push(run),
                RunFiles::Unverified(why) => {
                    pending.runs.push(run);
                    pending.unverified.push((run, why));
                }
            }
        }
        Ok(pending)
    }

    /// Records the outcome of one run: its rows first, then its status (the commit mark).
    /// `wall_s` and `cpu_s` are what the run took ([`ManifestRun::wall_s`],
    /// [`ManifestRun::cpu_s`]).
    pub fn record(
        &self,
        spec: &RunSpec,
        outcome: &Result<RunResult, RunError>,
        wall_s: f64,
        cpu_s: f64,
    ) -> Result<(), ResultsError> {
        let mut status = ManifestRun {
            run: spec.run,
            combination: spec.combination,
            replication: spec.replication,
            seed: spec.seed,
            parameters: spec.sweep.iter().cloned().collect(),
            status: Status::Ok,
            error: None,
            wall_s,
            cpu_s,
            events: 0,
            network: None,
        };
        let mut rows = String::new();
        match outcome {
            Ok(result) => {
                rows = flows::rows(spec, &result.flows);
                for side in SIDE_FILES.iter().filter(|f| (f.enabled)(&spec.config)) {
                    let part = (side.rows)(spec, &result.flows);
                    write_atomic(&self.run_path(spec.run, side.name), part.as_bytes())?;
                }
                write_atomic(&self.run_path(spec.run, "csv"), rows.as_bytes())?;
                status.events = result.events;
                status.network = result.network;
            }
            Err(e) => {
                status.status = Status::Failed;
                status.error = Some(e.to_string());
            }
        }
        let file = StatusFile {
            run: spec.run,
            plan: self.plan.clone(),
            rows_bytes: rows.len() as u64,
            rows_crc32: format!("{:08x}", crc32fast::hash(rows.as_bytes())),
            status,
            crc32: CRC_ZERO.to_string(),
        };
        write_atomic(&self.run_path(spec.run, "json"), file.to_text().as_bytes())
    }

    /// Writes the side file `side` (e.g. `timers.csv` with `[output] timers`): the per-run
    /// parts of the runs that finished, in run order. A finished run's part is written before
    /// its rows file, so it exists whenever the run's files verify.
    fn assemble_side(
        &self,
        side: &SideFile,
        manifest: &Manifest,
        runs: usize,
    ) -> Result<(), ResultsError> {
        let mut out = AtomicFile::create(&self.root.join(side.name))?;
        let mut header = csv::line(side.columns.iter().copied());
        header.push('\n');
        out.write(header.as_bytes())?;
        for entry in manifest.runs.iter().take(runs) {
            if entry.status != Status::Ok {
                continue;
            }
            let path = self.run_path(entry.run, side.name);
            if let Some(bytes) = read_optional(&path)? {
                out.write(&bytes)?;
            }
        }
        out.commit()
    }

    /// Writes `manifest.json`.
    pub fn write_manifest(&self, manifest: &Manifest) -> Result<(), ResultsError> {
        let json = serde_json::to_string_pretty(manifest).expect("a manifest serializes");
        write_atomic(&self.root.join("manifest.json"), json.as_bytes())
    }

    /// Assembles `flows.csv`, `summary.csv` and `manifest.json` from the verified files of
    /// `runs/`, filling each run's status into `manifest` (runs whose files do not verify are
    /// pending). Returns the summary rows.
    pub fn assemble(
        &self,
        manifest: &mut Manifest,
        plan: &Plan<'_>,
    ) -> Result<Vec<SummaryRow>, ResultsError> {
        // flows.csv is streamed to disk and summarized run by run: only one run's rows are
        // in memory at a time, plus what each summary row needs (see `Summarizer`).
        let mesh = !plan.is_empty() && plan.config(0).is_mesh();
        let observe = !plan.is_empty() && plan.config(0).has_observe();
        let mut header = flows::header_for(&plan.sweep(0), mesh, observe);
        header.push('\n');
        let mut flows_csv = AtomicFile::create(&self.root.join("flows.csv"))?;
        flows_csv.write(header.as_bytes())?;
        let mut summarizer =
            Summarizer::new(csv::parse(&header).into_iter().next().unwrap_or_default());
        for (run, entry) in manifest.runs.iter_mut().enumerate().take(plan.len()) {
            match self.check(run)? {
                RunFiles::Ok { status, rows } => {
                    flows_csv.write(rows.as_bytes())?;
                    for row in csv::parse(&rows) {
                        summarizer.add(&row);
                    }
                    *entry = status;
                }
                RunFiles::Failed(status) => *entry = status,
                RunFiles::Missing | RunFiles::Unverified(_) => entry.status = Status::Pending,
            }
        }
        flows_csv.commit()?;
        if !plan.is_empty() {
            let config = plan.config(0);
            for side in SIDE_FILES.iter().filter(|f| (f.enabled)(&config)) {
                self.assemble_side(side, manifest, plan.len())?;
            }
        }
        let rows = summarizer.finish();
        write_atomic(
            &self.root.join("summary.csv"),
            summary::to_csv(&rows).as_bytes(),
        )?;
        let columns: Vec<String> = manifest.axes.iter().map(|a| a.column.clone()).collect();
        write_atomic(
            &self.root.join("runs.csv"),
            runs::to_csv(&manifest.runs, &columns).as_bytes(),
        )?;
        self.write_manifest(manifest)?;
        Ok(rows)
    }
}

/// A results file assembled from one part per run (`runs/NNNNNN.NAME`), written only when the
/// run configuration asks for it.
struct SideFile {
    /// The file name, also the per-run part's extension.
    name: &'static str,
    /// Its header.
    columns: &'static [&'static str],
    /// Whether a run of this configuration writes it.
    enabled: fn(&RunConfig) -> bool,
    /// A run's part: rows ending in newlines.
    rows: fn(&RunSpec, &[super::FlowRecord]) -> String,
}

/// The side files: `timers.csv` (`[output] timers`), `intervals.csv` (`[output] intervals`,
/// on by default for a mesh) and `exchanges.csv` (`[output] exchanges`).
const SIDE_FILES: &[SideFile] = &[
    SideFile {
        name: "timers.csv",
        columns: flows::TIMER_COLUMNS,
        enabled: |c| c.timers,
        rows: flows::timer_rows,
    },
    SideFile {
        name: "intervals.csv",
        columns: flows::INTERVAL_COLUMNS,
        enabled: |c| c.intervals,
        rows: flows::interval_rows,
    },
    SideFile {
        name: "exchanges.csv",
        columns: flows::EXCHANGE_COLUMNS,
        enabled: |c| c.exchanges,
        rows: flows::exchange_rows,
    },
];

/// The error for a directory whose manifest (`path`) records results format `found`, not
/// this program's: its per-run rows have other columns.
pub fn format_mismatch(path: &Path, found: u32) -> ResultsError {
    ResultsError::Corrupt {
        path: path.to_path_buf(),
        message: format!(
            "written in results format {found}, whose columns differ from this coaplab's \
             format {} (docs/scenarios.md, \"Results format versions\"); run the plan again \
             into another --out",
            super::manifest::RESULTS_FORMAT
        ),
    }
}

/// What `root/runs/` holds for `run` of the plan with fingerprint `plan`, verified (see
/// [`RunFiles`]), without taking the directory's lock: for reading another directory, as
/// `coaplab merge` does. `Err` only when a file exists but cannot be read.
pub fn check_run(root: &Path, plan: &str, run: usize) -> Result<RunFiles, ResultsError> {
    let path = run_path(root, run, "json");
    let Some(bytes) = read_optional(&path)? else {
        return Ok(RunFiles::Missing);
    };
    let unverified = |why: String| Ok(RunFiles::Unverified(why));
    let Ok(text) = String::from_utf8(bytes) else {
        return unverified("status file is not text".to_string());
    };
    let file = match StatusFile::from_text(&text) {
        Ok(file) => file,
        Err(why) => return unverified(why),
    };
    if file.run != run || file.status.run != run {
        return unverified(format!("status file is run {}'s", file.status.run));
    }
    if file.plan != plan {
        return unverified(format!("status file is of another plan ({})", file.plan));
    }
    if file.status.status != Status::Ok {
        return Ok(RunFiles::Failed(file.status));
    }
    let path = run_path(root, run, "csv");
    let Some(rows) = read_optional(&path)? else {
        return unverified("rows file missing".to_string());
    };
    if rows.len() as u64 != file.rows_bytes {
        return unverified(format!(
            "rows file has {} bytes, its status file says {}",
            rows.len(),
            file.rows_bytes
        ));
    }
    if format!("{:08x}", crc32fast::hash(&rows)) != file.rows_crc32 {
        return unverified("rows file checksum mismatch".to_string());
    }
    match String::from_utf8(rows) {
        Ok(rows) => Ok(RunFiles::Ok {
            status: file.status,
            rows,
        }),
        Err(_) => unverified("rows file is not text".to_string()),
    }
}

/// `root/runs/NNNNNN.ext`.
fn run_path(root: &Path, run: usize, ext: &str) -> PathBuf {
    root.join("runs").join(format!("{run:06}.{ext}"))
}

/// The plan of a verified status file in `runs` other than `plan`, if there is one.
fn foreign_plan(runs: &Path, plan: &str) -> Result<Option<String>, ResultsError> {
    for entry in std::fs::read_dir(runs).map_err(io(runs))? {
        let path = entry.map_err(io(runs))?.path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let Some(bytes) = read_optional(&path)? else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        if let Ok(file) = StatusFile::from_text(&text) {
            if file.plan != plan {
                return Ok(Some(file.plan));
            }
        }
    }
    Ok(None)
}
