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
    /// Whether the axis only chooses the algorithm or its parameters (the server's duplicate
    /// handling counts: it decides which samples the algorithm gets; so does a TCP flow's
    /// `mss_bytes`, which UDP flows ignore). Runs that differ only in
    /// such axes share their seed, so algorithms meet the same start times and loss chains
    /// (common random numbers: comparisons between algorithms are paired).
    pub fn is_algorithm(&self) -> bool {
        self.key.ends_with(".cc")
            || self.key.contains(".params.")
            || self.key.ends_with("cc_preset")
            || self.key.ends_with("server_duplicates")
            || self.key.ends_with(".mss_bytes")
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
    /// Every run: combinations × replications, built at once (tests and small plans; `coaplab
    /// run` uses the lazy [`Plan`]). `replications` and `seed` override the file's.
    pub fn expand(&self, replications: Option<u32>, base_seed: Option<u64>) -> Vec<RunSpec> {
        self.plan(replications, base_seed).specs().collect()
    }

    /// The plan of runs, built lazily: nothing is expanded until asked for, so a plan of a
    /// million runs costs nothing to count. `replications` and `seed` override the file's;
    /// check command-line values with [`super::check_replications`] and
    /// [`super::check_seed`] first (the limits of the file's keys).
    pub fn plan(&self, replications: Option<u32>, base_seed: Option<u64>) -> Plan<'_> {
        Plan {
            scenario: self,
            replications: replications.unwrap_or(self.replications).max(1),
            seed: base_seed.unwrap_or(self.seed),
        }
    }
}

/// The runs of a scenario, combination-major with replications innermost: run `r` is
/// replication `r % replications` of combination `r / replications`. Each [`RunSpec`] is
/// built when asked for.
#[derive(Debug, Clone, Copy)]
pub struct Plan<'s> {
    scenario: &'s Scenario,
    replications: u32,
    seed: u64,
}

impl<'s> Plan<'s> {
    /// The scenario.
    pub fn scenario(&self) -> &'s Scenario {
        self.scenario
    }

    /// Replications per combination.
    pub fn replications(&self) -> u32 {
        self.replications
    }

    /// The base seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The number of runs (combinations × replications; at least 1).
    pub fn len(&self) -> usize {
        self.scenario
            .combinations()
            .saturating_mul(self.replications as usize)
    }

    /// Always false: a plan has at least one run.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `(column, value)` per sweep axis of `combination`, in axis order.
    pub fn sweep(&self, combination: usize) -> Vec<(String, String)> {
        let choice = self.scenario.choice(combination);
        self.scenario
            .axes
            .iter()
            .zip(&choice)
            .map(|(a, &i)| (a.column.clone(), a.values[i].clone()))
            .collect()
    }

    /// Run `run`'s combination and replication.
    pub fn position(&self, run: usize) -> (usize, u32) {
        let reps = self.replications as usize;
        (run / reps, (run % reps) as u32)
    }

    /// Run `run`'s seed: derived from the base seed, the values of the axes that are not
    /// algorithm choices ([`Axis::is_algorithm`]) and the replication.
    pub fn run_seed(&self, run: usize) -> u64 {
        let (combination, replication) = self.position(run);
        let choice = self.scenario.choice(combination);
        let seeded = self
            .scenario
            .axes
            .iter()
            .zip(&choice)
            .filter(|(a, _)| !a.is_algorithm())
            .map(|(a, &i)| (a.key.as_str(), a.values[i].as_str()));
        seed::run_seed(self.seed, &self.scenario.name, seeded, replication)
    }

    /// The configuration of `combination`.
    pub fn config(&self, combination: usize) -> RunConfig {
        self.scenario
            .config(combination)
            .expect("every combination was checked when the scenario was parsed")
    }

    /// Run `run` with `config`, the configuration of its combination.
    pub fn spec_with(&self, run: usize, config: RunConfig) -> RunSpec {
        let (combination, replication) = self.position(run);
        RunSpec {
            run,
            combination,
            replication,
            seed: self.run_seed(run),
            scenario: self.scenario.name.clone(),
            sweep: self.sweep(combination),
            config,
        }
    }

    /// Run `run` (builds its combination's configuration).
    pub fn spec(&self, run: usize) -> RunSpec {
        self.spec_with(run, self.config(self.position(run).0))
    }

    /// Every run in order, each combination's configuration built once.
    pub fn specs(&self) -> impl Iterator<Item = RunSpec> + 's {
        let plan = *self;
        let mut cache = SpecCache::default();
        (0..plan.len()).map(move |run| cache.spec(&plan, run))
    }
}

/// The configuration of the last combination asked for, so that consecutive runs of one
/// combination build it once.
#[derive(Debug, Default)]
pub struct SpecCache {
    last: Option<(usize, RunConfig)>,
}

impl SpecCache {
    /// `plan`'s run `run`.
    pub fn spec(&mut self, plan: &Plan<'_>, run: usize) -> RunSpec {
        let combination = plan.position(run).0;
        let config = match &self.last {
            Some((c, config)) if *c == combination => config.clone(),
            _ => {
                let config = plan.config(combination);
                self.last = Some((combination, config.clone()));
                config
            }
        };
        plan.spec_with(run, config)
    }
}

/// Names the results column of every axis: the last key segment when unique, else the key.
/// An algorithm parameter (`flows[i].params.KEY`) is named `param.KEY`, so that a swept
/// parameter whose name is also a metric (`rto_max_s`) never shares that metric's column.
pub(super) fn name_columns(axes: &mut [Axis]) {
    let last = |k: &str| {
        let mut segments = k.rsplit('.');
        let name = segments.next().unwrap_or(k);
        if segments.next() == Some("params") {
            format!("param.{name}")
        } else {
            name.to_string()
        }
    };
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
