//! `coaplab merge`: joins the results directories of the shards of one plan (`coaplab run
//! --shard K/N`, on as many machines) into one results directory, the same as a
//! single-machine run of the plan.
//!
//! Every run's files are verified where they are (status checksum, run id, plan fingerprint,
//! rows length and CRC-32, as `--resume` does), copied byte for byte into `OUT/runs/`, and the
//! results files are assembled by [`ResultsDir::assemble`], the code a single-machine run
//! ends with. So `flows.csv` and `summary.csv` are byte-identical to a single-machine run's,
//! and `manifest.json` and `runs.csv` differ from it only in wall times (`wall_s`, which no
//! two runs share; the merged `wall_s` is the longest shard's).

use std::fmt;
use std::path::{Path, PathBuf};

use super::manifest::{fingerprint, Manifest};
use super::store::{check_run, ResultsDir, ResultsError, RunFiles};
use super::summary::SummaryRow;
use crate::scenario::{Scenario, ScenarioError};
use crate::shard::Shard;

/// Why directories cannot be merged.
#[derive(Debug)]
pub enum MergeError {
    /// No directory was given.
    NoShards,
    /// A directory cannot be read, or the output directory cannot be written.
    Results(ResultsError),
    /// A directory's manifest holds a scenario that no longer parses.
    Scenario(PathBuf, Box<ScenarioError>),
    /// The directories hold results of different plans, or of different code versions.
    Mixed {
        /// What differs.
        what: &'static str,
        /// Each directory and its value.
        dirs: Vec<(PathBuf, String)>,
    },
    /// Runs that no directory holds with verified files.
    Missing {
        /// The runs in the plan.
        total: usize,
        /// Each missing run, and why (and which shard should have held it).
        runs: Vec<(usize, String)>,
    },
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MergeError::NoShards => write!(f, "no results directory to merge"),
            MergeError::Results(e) => write!(f, "{e}"),
            MergeError::Scenario(dir, e) => write!(
                f,
                "{}: the scenario of manifest.json does not parse: {e}",
                dir.display()
            ),
            MergeError::Mixed { what, dirs } => {
                write!(f, "the directories hold results of different {what}:")?;
                for (dir, value) in dirs {
                    write!(f, "\n  {}: {value}", dir.display())?;
                }
                Ok(())
            }
            MergeError::Missing { total, runs } => {
                write!(
                    f,
                    "{} of the plan's {total} runs are missing or do not verify in any \
                     directory (run the missing shards, or --resume them):",
                    runs.len()
                )?;
                for (run, why) in runs.iter().take(20) {
                    write!(f, "\n  run {run}: {why}")?;
                }
                if runs.len() > 20 {
                    write!(f, "\n  ... and {} more", runs.len() - 20)?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for MergeError {}

impl From<ResultsError> for MergeError {
    fn from(e: ResultsError) -> Self {
        MergeError::Results(e)
    }
}

/// What [`merge`] did.
#[derive(Debug, Clone)]
pub struct Merged {
    /// Runs in the plan.
    pub total: usize,
    /// Runs that failed (recorded as failed in the merged directory, as a single run would).
    pub failed: usize,
    /// The summary rows.
    pub summary: Vec<SummaryRow>,
    /// The merged manifest.
    pub manifest: Manifest,
}

/// Reads `dir/manifest.json`.
pub fn read_manifest(dir: &Path) -> Result<Manifest, ResultsError> {
    let path = dir.join("manifest.json");
    let text = crate::files::read_text(&path, crate::files::Input::Manifest)?;
    serde_json::from_str(&text).map_err(|e| ResultsError::Corrupt {
        path,
        message: e.to_string(),
    })
}

/// Fails with [`MergeError::Mixed`] unless `value` is the same for every manifest.
fn same(
    what: &'static str,
    shards: &[(PathBuf, Manifest)],
    value: impl Fn(&Manifest) -> String,
) -> Result<(), MergeError> {
    let first = value(&shards[0].1);
    if shards.iter().all(|(_, m)| value(m) == first) {
        return Ok(());
    }
    Err(MergeError::Mixed {
        what,
        dirs: shards
            .iter()
            .map(|(dir, m)| (dir.clone(), value(m)))
            .collect(),
    })
}

/// Merges the results directories `dirs` (shards of one plan, or any directories of one plan
/// that together hold every run) into the new directory `out`. Nothing is written unless every
/// run of the plan is found with verified files in some directory (a finished run is taken
/// over a failed one).
pub fn merge(out: &Path, dirs: &[PathBuf]) -> Result<Merged, MergeError> {
    if dirs.is_empty() {
        return Err(MergeError::NoShards);
    }
    let shards = dirs
        .iter()
        .map(|d| read_manifest(d).map(|m| (d.clone(), m)))
        .collect::<Result<Vec<_>, _>>()?;
    same("plans (scenario text, --reps or --seed)", &shards, |m| {
        format!("plan {} ({})", m.fingerprint, m.file)
    })?;
    same("code versions", &shards, |m| m.code_version.clone())?;
    if let Some((dir, m)) = shards
        .iter()
        .find(|(_, m)| m.results_format != super::manifest::RESULTS_FORMAT)
    {
        return Err(
            super::store::format_mismatch(&dir.join("manifest.json"), m.results_format).into(),
        );
    }
    let (first_dir, first) = &shards[0];
    let scenario = Scenario::parse(&first.scenario_text, &first.file)
        .map_err(|e| MergeError::Scenario(first_dir.clone(), Box::new(e)))?;
    if fingerprint(&scenario, first.replications, first.seed) != first.fingerprint {
        return Err(ResultsError::Corrupt {
            path: first_dir.join("manifest.json"),
            message: "the fingerprint is not that of the scenario, replications and seed it \
                      records"
                .to_string(),
        }
        .into());
    }
    let plan = scenario.plan(Some(first.replications), Some(first.seed));
    // The shard count, when every directory names one and they agree: it names the shard a
    // missing run belongs to.
    let count = shards
        .iter()
        .map(|(_, m)| m.shard.as_deref().and_then(|s| s.parse::<Shard>().ok()))
        .map(|s| s.map(|s| s.count()))
        .reduce(|a, b| if a == b { a } else { None })
        .flatten();

    // Verify first, so that nothing is written for an incomplete set.
    let mut source = Vec::with_capacity(plan.len());
    let mut missing = Vec::new();
    for run in 0..plan.len() {
        let mut found = None;
        let mut why = Vec::new();
        for (i, (dir, _)) in shards.iter().enumerate() {
            match check_run(dir, &first.fingerprint, run)? {
                RunFiles::Ok { .. } => {
                    found = Some(i);
                    break;
                }
                RunFiles::Failed(_) => {
                    found.get_or_insert(i);
                }
                RunFiles::Unverified(reason) => why.push(format!("{}: {reason}", dir.display())),
                RunFiles::Missing => {}
            }
        }
        match found {
            Some(i) => source.push(i),
            None => {
                let mut text = match count {
                    Some(n) => format!("shard {} has not run it", Shard::of_run(run, n)),
                    None => "no directory holds it".to_string(),
                };
                if !why.is_empty() {
                    text = format!("{text} ({})", why.join("; "));
                }
                missing.push((run, text));
            }
        }
    }
    if !missing.is_empty() {
        return Err(MergeError::Missing {
            total: plan.len(),
            runs: missing,
        });
    }

    let mut manifest = Manifest::new(&plan);
    manifest.overrides = first.overrides.clone();
    // The code that computed the runs, not the one merging them.
    manifest.code_version = first.code_version.clone();
    manifest.wall_s = shards.iter().map(|(_, m)| m.wall_s).fold(0.0, f64::max);
    let dir = ResultsDir::open(out, &manifest, false)?;
    for (run, &i) in source.iter().enumerate() {
        dir.adopt(&shards[i].0, run)?;
    }
    let summary = dir.assemble(&mut manifest, &plan)?;
    let failed = manifest
        .runs
        .iter()
        .filter(|r| r.status != super::Status::Ok)
        .count();
    Ok(Merged {
        total: plan.len(),
        failed,
        summary,
        manifest,
    })
}
