//! The results directory. Each run's rows and status are written atomically (temporary file,
//! fsync, rename) under `runs/` as soon as the run ends, so an interruption loses at most the
//! runs in progress; `flows.csv`, `summary.csv` and `manifest.json` are assembled from `runs/`
//! at the end and by every `--resume`.
//!
//! ```text
//! DIR/manifest.json         the plan and every run's status
//! DIR/flows.csv             one row per flow, finished runs in run order
//! DIR/summary.csv           one row per (combination, cc, workload)
//! DIR/runs.csv              one row per run: status, error, wall time, bottleneck counters
//! DIR/runs/000042.csv       run 42's rows (no header)
//! DIR/runs/000042.json      run 42's status: written last, it marks the run finished
//! ```

use std::fmt;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::manifest::{Manifest, ManifestRun, Status};
use super::record::{RunError, RunResult};
use super::summary::{self, Summarizer, SummaryRow};
use super::{csv, flows, runs};
use crate::scenario::RunSpec;

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
            ResultsError::Corrupt { path, message } => {
                write!(f, "{}: {message}", path.display())
            }
        }
    }
}

impl std::error::Error for ResultsError {}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ResultsError + '_ {
    move |source| ResultsError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Writes `bytes` to `path` so that readers see the old file or the whole new one, never a
/// part: a temporary file in the same directory, fsync, rename.
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
        let file = std::fs::File::create(&tmp).map_err(io(&tmp))?;
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

/// An open results directory.
#[derive(Debug, Clone)]
pub struct ResultsDir {
    root: PathBuf,
}

impl ResultsDir {
    /// Opens `root` for `manifest`'s plan: a new directory, or with `resume` one holding
    /// results of the same plan.
    pub fn open(root: &Path, manifest: &Manifest, resume: bool) -> Result<Self, ResultsError> {
        let existing = root.join("manifest.json");
        if existing.exists() {
            if !resume {
                return Err(ResultsError::Exists(root.to_path_buf()));
            }
            let text = std::fs::read_to_string(&existing).map_err(io(&existing))?;
            let old: Manifest = serde_json::from_str(&text).map_err(|e| ResultsError::Corrupt {
                path: existing.clone(),
                message: e.to_string(),
            })?;
            if old.fingerprint != manifest.fingerprint {
                return Err(ResultsError::Mismatch {
                    path: root.to_path_buf(),
                    found: old.fingerprint,
                    expected: manifest.fingerprint.clone(),
                });
            }
        }
        let runs = root.join("runs");
        std::fs::create_dir_all(&runs).map_err(io(&runs))?;
        let dir = ResultsDir {
            root: root.to_path_buf(),
        };
        if !existing.exists() {
            dir.write_manifest(manifest)?;
        }
        Ok(dir)
    }

    /// The directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn run_path(&self, run: usize, ext: &str) -> PathBuf {
        self.root.join("runs").join(format!("{run:06}.{ext}"))
    }

    /// The recorded status of `run`, if it ended.
    pub fn status(&self, run: usize) -> Result<Option<ManifestRun>, ResultsError> {
        let path = self.run_path(run, "json");
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text)
                .map(Some)
                .map_err(|e| ResultsError::Corrupt {
                    path,
                    message: e.to_string(),
                }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io(&path)(e)),
        }
    }

    /// Whether `run` finished successfully (failed runs are run again by `--resume`).
    pub fn is_finished(&self, run: usize) -> bool {
        matches!(self.status(run), Ok(Some(r)) if r.status == Status::Ok)
    }

    /// Records the outcome of one run: its rows first, then its status (the commit mark).
    pub fn record(
        &self,
        spec: &RunSpec,
        outcome: &Result<RunResult, RunError>,
        wall_s: f64,
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
            events: 0,
            network: None,
        };
        match outcome {
            Ok(result) => {
                let rows = flows::rows(spec, &result.flows);
                write_atomic(&self.run_path(spec.run, "csv"), rows.as_bytes())?;
                status.events = result.events;
                status.network = result.network;
            }
            Err(e) => {
                status.status = Status::Failed;
                status.error = Some(e.to_string());
            }
        }
        let json = serde_json::to_string_pretty(&status).expect("a run status serializes");
        write_atomic(&self.run_path(spec.run, "json"), json.as_bytes())
    }

    /// Writes `manifest.json`.
    pub fn write_manifest(&self, manifest: &Manifest) -> Result<(), ResultsError> {
        let json = serde_json::to_string_pretty(manifest).expect("a manifest serializes");
        write_atomic(&self.root.join("manifest.json"), json.as_bytes())
    }

    /// Assembles `flows.csv`, `summary.csv` and `manifest.json` from `runs/`, filling each
    /// run's status into `manifest`. Returns the summary rows.
    pub fn assemble(
        &self,
        manifest: &mut Manifest,
        runs: &[RunSpec],
    ) -> Result<Vec<SummaryRow>, ResultsError> {
        // flows.csv is streamed to disk and summarized run by run: only one run's rows are
        // in memory at a time, plus what each summary row needs (see `Summarizer`).
        let mut header = runs.first().map(flows::header).unwrap_or_default();
        header.push('\n');
        let mut flows_csv = AtomicFile::create(&self.root.join("flows.csv"))?;
        flows_csv.write(header.as_bytes())?;
        let mut summarizer =
            Summarizer::new(csv::parse(&header).into_iter().next().unwrap_or_default());
        for (spec, entry) in runs.iter().zip(manifest.runs.iter_mut()) {
            match self.status(spec.run)? {
                Some(status) => {
                    if status.status == Status::Ok {
                        let path = self.run_path(spec.run, "csv");
                        let text = std::fs::read_to_string(&path).map_err(io(&path))?;
                        flows_csv.write(text.as_bytes())?;
                        for row in csv::parse(&text) {
                            summarizer.add(&row);
                        }
                    }
                    *entry = status;
                }
                None => entry.status = Status::Pending,
            }
        }
        flows_csv.commit()?;
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
