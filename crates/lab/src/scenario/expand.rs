//! Sweep expansion: the cartesian product of the axes, times the replications, each run with
//! its own derived seed.

use super::config::RunConfig;
use super::Scenario;
use crate::seed;

/// One sweep axis: a list written where a single value was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Axis {
    /// The full key, e.g. `network.buffer_bytes` or `flows[0].cc`.
    pub key: String,
    /// The line of the list.
    pub line: usize,
    /// The values as written (strings without quotes).
    pub values: Vec<String>,
    /// The results column: the last key segment, or the full key when that is ambiguous.
    pub column: String,
}

impl Axis {
    /// Whether the axis only chooses the algorithm or its parameters. Runs that differ only in
    /// such axes share their seed, so algorithms meet the same start times and loss chains
    /// (common random numbers: comparisons between algorithms are paired).
    pub fn is_algorithm(&self) -> bool {
        self.key.ends_with(".cc")
            || self.key.contains(".params.")
            || self.key.ends_with("cc_preset")
    }
}

/// One run: a parameter combination, a replication and a seed.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSpec {
    /// Position in the expansion (combination-major): the run's id in results files.
    pub run: usize,
    /// The parameter combination (index into the product of the axes).
    pub combination: usize,
    /// Replication number, from 0.
    pub replication: u32,
    /// The run's seed; every random stream of the run derives from it.
    pub seed: u64,
    /// The scenario name.
    pub scenario: String,
    /// `(column, value)` per sweep axis, in axis order.
    pub sweep: Vec<(String, String)>,
    /// What to simulate.
    pub config: RunConfig,
}

impl Scenario {
    /// Every run: combinations × replications. `replications` and `seed` override the file's.
    pub fn expand(&self, replications: Option<u32>, base_seed: Option<u64>) -> Vec<RunSpec> {
        let reps = replications.unwrap_or(self.replications).max(1);
        let base = base_seed.unwrap_or(self.seed);
        let mut runs = Vec::with_capacity(self.combinations() * reps as usize);
        for combination in 0..self.combinations() {
            let choice = self.choice(combination);
            let config = self
                .config(combination)
                .expect("every combination was checked when the scenario was parsed");
            let sweep: Vec<(String, String)> = self
                .axes
                .iter()
                .zip(&choice)
                .map(|(a, &i)| (a.column.clone(), a.values[i].clone()))
                .collect();
            for replication in 0..reps {
                let seeded = self
                    .axes
                    .iter()
                    .zip(&choice)
                    .filter(|(a, _)| !a.is_algorithm())
                    .map(|(a, &i)| (a.key.as_str(), a.values[i].as_str()));
                runs.push(RunSpec {
                    run: runs.len(),
                    combination,
                    replication,
                    seed: seed::run_seed(base, &self.name, seeded, replication),
                    scenario: self.name.clone(),
                    sweep: sweep.clone(),
                    config: config.clone(),
                });
            }
        }
        runs
    }
}

/// Names the results column of every axis: the last key segment when unique, else the key.
pub(super) fn name_columns(axes: &mut [Axis]) {
    let last = |k: &str| k.rsplit('.').next().unwrap_or(k).to_string();
    let names: Vec<String> = axes.iter().map(|a| last(&a.key)).collect();
    for (i, axis) in axes.iter_mut().enumerate() {
        let unique = names.iter().filter(|n| **n == names[i]).count() == 1;
        axis.column = if unique {
            names[i].clone()
        } else {
            axis.key.clone()
        };
    }
}
