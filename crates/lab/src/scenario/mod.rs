//! Scenario files: a TOML description of an experiment, checked key by key and expanded into
//! runs.
//!
//! A scenario names a network (a preset plus overrides), protocol settings and one or more
//! `[[flows]]` tables. Any scalar may be a list instead: every list is a *sweep axis*, and the
//! runs are the cartesian product of all axes times `replications` ([`Scenario::expand`]).
//! Every key and every value of every list is checked when the file is loaded, so a typo fails
//! before anything runs, with the file line, the key and what would be accepted
//! ([`ScenarioError`]). The key reference is docs/scenarios.md.

mod config;
mod document;
mod error;
mod expand;
mod flows;
mod mobility;
mod network;
mod output;
mod overrides;
mod reader;
mod topology;
mod trace_choice;
mod transport;
mod warnings;

pub use config::{
    FlowConfig, ProtocolConfig, RunConfig, SourcePort, Topology, Workload,
    LONG_TRANSFER_TOKEN_BYTES,
};
pub use error::ScenarioError;
pub use expand::{Axis, Plan, RunSpec, SpecCache};
pub use output::Output;
pub use overrides::apply_overrides;
pub use trace_choice::{BadRunSelection, BadTraceFormat, RunSelection, TraceFormat};
pub use transport::{TcpCc, Transport, UnknownCc};
pub use warnings::warnings;

use std::path::Path;

use reader::Reader;

/// A loaded, fully checked scenario file.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// `name`: used for the default results directory and in the manifest.
    pub name: String,
    /// `seed`: the base seed every run seed is derived from.
    pub seed: u64,
    /// `replications`: runs per parameter combination.
    pub replications: u32,
    /// The sweep axes in file order (lists found at scalar positions).
    pub axes: Vec<Axis>,
    /// `[output]`: traces to write.
    pub output: Output,
    /// The file as read (it is re-read per combination, so spans stay exact).
    source: String,
    /// The file name used in error messages.
    file: String,
}

impl Scenario {
    /// Loads and checks the scenario file at `path`.
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let file = path.display().to_string();
        let source = crate::files::read_text(path, crate::files::Input::Scenario)?;
        Scenario::parse(&source, &file)
    }

    /// Loads the scenario file at `path` with the `KEY=VALUE` overrides of `sets` applied
    /// ([`apply_overrides`]) before it is checked. Without overrides the text is the file's,
    /// byte for byte.
    pub fn load_with(path: &Path, sets: &[String]) -> Result<Scenario, ScenarioError> {
        if sets.is_empty() {
            return Scenario::load(path);
        }
        let file = path.display().to_string();
        let source = crate::files::read_text(path, crate::files::Input::Scenario)?;
        Scenario::parse(&apply_overrides(&source, &file, sets)?, &file)
    }

    /// Parses and checks scenario text; `file` only labels error messages.
    ///
    /// Every value of every sweep list is checked, and every combination is built once, so
    /// [`Scenario::expand`] cannot fail afterwards.
    pub fn parse(source: &str, file: &str) -> Result<Scenario, ScenarioError> {
        let doc = toml_edit::Document::parse(source).map_err(|e| {
            let line = e.span().map(|s| line_of(source, s.start)).unwrap_or(1);
            ScenarioError::Syntax {
                file: file.to_string(),
                line,
                message: e.message().to_string(),
            }
        })?;
        let mut reader = Reader::new(source, file, &[]);
        let top = document::top(&mut reader, &doc)?;
        let output = output::read(&reader, &doc)?;
        let mut axes = reader.into_axes();
        expand::name_columns(&mut axes);
        let scenario = Scenario {
            name: top.name,
            seed: top.seed,
            replications: top.replications,
            axes,
            output,
            source: source.to_string(),
            file: file.to_string(),
        };
        // Build every combination once: cross-key checks (batch_min <= batch_max, algorithm
        // parameters) can depend on the values chosen on other axes.
        // The document is parsed once for all of them.
        for combination in 0..scenario.combinations() {
            scenario.config_of(&doc, combination)?;
        }
        Ok(scenario)
    }

    /// The number of parameter combinations (product of the axis lengths; 1 without axes).
    pub fn combinations(&self) -> usize {
        self.axes.iter().map(|a| a.values.len()).product()
    }

    /// The file name this scenario was read from.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The scenario text, for the manifest.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The configuration of parameter combination `combination` (mixed-radix over the axes,
    /// the last axis varying fastest).
    pub fn config(&self, combination: usize) -> Result<RunConfig, ScenarioError> {
        let doc = toml_edit::Document::parse(self.source.as_str()).map_err(|e| {
            ScenarioError::Syntax {
                file: self.file.clone(),
                line: 1,
                message: e.message().to_string(),
            }
        })?;
        self.config_of(&doc, combination)
    }

    /// [`Scenario::config`] from the parsed document.
    fn config_of(
        &self,
        doc: &toml_edit::Table,
        combination: usize,
    ) -> Result<RunConfig, ScenarioError> {
        let choice = self.choice(combination);
        let mut reader = Reader::new(&self.source, &self.file, &choice);
        document::top(&mut reader, doc).map(|t| t.config)
    }

    /// The index into each axis for `combination`.
    pub fn choice(&self, combination: usize) -> Vec<usize> {
        let mut rest = combination;
        let mut choice = vec![0; self.axes.len()];
        for (i, axis) in self.axes.iter().enumerate().rev() {
            choice[i] = rest % axis.values.len();
            rest /= axis.values.len();
        }
        choice
    }
}

/// The largest `replications`, in the file or as `coaplab run --reps`.
pub const MAX_REPLICATIONS: u32 = 1_000_000;

/// The largest `seed`, in the file or as `coaplab run --seed`: TOML integers are signed 64-bit,
/// so a larger seed could not be written back into a scenario file.
pub const MAX_SEED: u64 = i64::MAX as u64;

/// `n` if it lies in `[min, max]`, else what would be accepted: the one range check of the
/// scenario reader and of the command-line overrides.
pub(crate) fn in_range(n: Option<u64>, min: u64, max: u64) -> Result<u64, String> {
    n.filter(|n| (min..=max).contains(n))
        .ok_or_else(|| format!("an integer in [{min}, {max}]"))
}

/// Checks a replication count from outside the file (`--reps`) against the limits of the
/// file's `replications` key.
pub fn check_replications(text: &str) -> Result<u32, String> {
    in_range(text.parse().ok(), 1, u64::from(MAX_REPLICATIONS)).map(|n| n as u32)
}

/// Checks a base seed from outside the file (`--seed`) against the limits of the file's `seed`
/// key.
pub fn check_seed(text: &str) -> Result<u64, String> {
    in_range(text.parse().ok(), 0, MAX_SEED)
}

/// The 1-based line of byte `offset` in `source`.
pub(crate) fn line_of(source: &str, offset: usize) -> usize {
    let end = offset.min(source.len());
    source.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests;
