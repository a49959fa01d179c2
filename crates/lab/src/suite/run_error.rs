//! Why running, merging or scoring a suite's results directory failed: each cause names the
//! file or directory it concerns, and the errors of the layers below pass through unchanged.

use std::path::PathBuf;

use crate::files::InputError;
use crate::results::merge::MergeError;
use crate::results::ResultsError;
use crate::scenario::ScenarioError;

use super::score::ScoreError;
use super::SuiteError;

/// An error of `coaplab suite run`, `suite merge` or of scoring a suite directory.
#[derive(Debug, thiserror::Error)]
pub enum SuiteRunError {
    /// The suite file names a cell that cannot be built.
    #[error(transparent)]
    Suite(#[from] SuiteError),
    /// A cell's scenario does not load with the suite's reductions.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// A cell's results directory cannot be used or written.
    #[error(transparent)]
    Results(#[from] ResultsError),
    /// The finished cells cannot be scored.
    #[error(transparent)]
    Score(#[from] ScoreError),
    /// A `suite.json` cannot be read.
    #[error(transparent)]
    Input(#[from] InputError),
    /// The suite's directory cannot be created.
    #[error("{}: {source}", path.display())]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A `suite.json` is not JSON.
    #[error("{}: {source}", path.display())]
    Record {
        /// The file.
        path: PathBuf,
        /// Why.
        source: serde_json::Error,
    },
    /// `--out` holds the run of another suite text.
    #[error(
        "{} holds the results of another suite file (or of an edited {file}); choose another --out",
        out.display()
    )]
    OtherSuite {
        /// The directory.
        out: PathBuf,
        /// The suite file given now.
        file: String,
    },
    /// `suite merge` was given no directory.
    #[error("no directory to merge")]
    NothingToMerge,
    /// Two directories given to `suite merge` differ in `key` of their `suite.json`.
    #[error(
        "{} and {} are not shards of one suite run: their {key} differ",
        first.display(),
        other.display()
    )]
    NotShards {
        /// The first directory.
        first: PathBuf,
        /// The one that differs from it.
        other: PathBuf,
        /// The `suite.json` key that differs (`suite_text` or `algorithms`).
        key: &'static str,
    },
    /// The merge's `--out` already holds a suite run.
    #[error("{} already holds a suite run", .0.display())]
    AlreadyMerged(PathBuf),
    /// One cell's shards do not merge.
    #[error("{experiment}/{cc}: {source}")]
    Merge {
        /// The experiment.
        experiment: String,
        /// The algorithm.
        cc: String,
        /// Why.
        source: Box<MergeError>,
    },
}
