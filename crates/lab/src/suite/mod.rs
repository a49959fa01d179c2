//! Benchmark suites (`coaplab suite`, issue 36): a named set of experiments, each a scenario of
//! `scenarios/` with reductions, run for every algorithm under comparison, then scored and
//! ranked per experiment and overall.
//!
//! The layers, in the order `coaplab suite run` and `report` use them:
//!
//! - [`Suite::load`]: a suite file (`suites/*.toml`, docs/suite.md), checked key by key; every
//!   experiment's scenario is loaded with its reductions (`set`, the grammar of `coaplab run
//!   --set`), so a bad key fails before anything runs, naming the suite file and the key.
//! - [`Suite::cells`]: one [`Cell`] per experiment × algorithm: the scenario's path and the
//!   overrides that give it (the reductions, then `flows.K.cc=ALG` for each flow group under
//!   test). A cell is run by the machinery of `coaplab run` into `DIR/EXPERIMENT/ALG/`.
//! - [`score`]: the per-cell metrics from each cell's `flows.csv`, the rank per experiment
//!   and the overall rank aggregate; `leaderboard.csv` and the terminal table.
//! - [`run`]: the cells run one after the other into `DIR/EXPERIMENT/ALG/` (resumed,
//!   sharded), then scored: the loop of `coaplab suite run` and of the Python package's.
//! - [`page`]: `DIR/suite.html`, the leaderboard and a scatter per experiment.

pub mod page;
pub mod run;
mod run_error;
pub mod score;

use std::path::{Path, PathBuf};

use toml_edit::Item;

use crate::scenario::{Scenario, ScenarioError, Transport};

pub use run_error::SuiteRunError;

/// Keys valid at the top level of a suite file.
const TOP_KEYS: &[&str] = &["name", "description", "scenarios_dir", "experiment"];
/// Keys valid in an `[[experiment]]` table.
const EXPERIMENT_KEYS: &[&str] = &["name", "description", "scenario", "set", "under_test"];

/// Where a suite's scenarios are looked up, relative to the suite file, by default: the
/// repository's `scenarios/` next to `suites/`.
pub const DEFAULT_SCENARIOS_DIR: &str = "../scenarios";

/// Why a suite file cannot be used: always with the file and, where there is one, the line
/// and the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SuiteError {
    /// The file could not be read (or is larger than a scenario file may be).
    #[error("{file}: {message}")]
    Io {
        /// The file.
        file: String,
        /// The operating system's message.
        message: String,
    },
    /// The text is not valid TOML.
    #[error("{file}:{line}: not valid TOML: {message}")]
    Syntax {
        /// The file.
        file: String,
        /// 1-based line of the error.
        line: usize,
        /// The parser's message.
        message: String,
    },
    /// A key that the suite format does not have.
    #[error("{file}:{line}: unknown key '{key}'; allowed here: {}", allowed.join(", "))]
    UnknownKey {
        /// The file.
        file: String,
        /// 1-based line of the key.
        line: usize,
        /// The full key, e.g. `experiment[1].sett`.
        key: String,
        /// Every key valid in that table.
        allowed: Vec<&'static str>,
    },
    /// A required key is missing.
    #[error("{file}:{line}: missing required key '{key}'")]
    Missing {
        /// The file.
        file: String,
        /// 1-based line of the table that lacks it.
        line: usize,
        /// The full key.
        key: String,
    },
    /// A value of the wrong type, out of range, or clashing with another.
    #[error("{file}:{line}: bad value {value} for '{key}': expected {expected}")]
    BadValue {
        /// The file.
        file: String,
        /// 1-based line of the value.
        line: usize,
        /// The full key.
        key: String,
        /// What was given, as written.
        value: String,
        /// What would be accepted.
        expected: String,
    },
    /// An experiment's scenario, with its reductions (and, for a cell, the algorithm), is
    /// refused by the scenario reader.
    #[error("{file}: experiment '{experiment}': {source}")]
    Scenario {
        /// The suite file.
        file: String,
        /// The experiment's name.
        experiment: String,
        /// The scenario reader's error (it names the scenario file, line and key).
        source: Box<ScenarioError>,
    },
    /// An algorithm asked for (`--cc`) that the registry does not have.
    #[error("unknown algorithm '{name}': expected one of {}", valid.join(", "))]
    UnknownAlgorithm {
        /// The name as given.
        name: String,
        /// Every registered algorithm.
        valid: Vec<&'static str>,
    },
}

impl SuiteError {
    /// The key the error is about, if any (`experiment[0].set` for a bad reduction).
    pub fn key(&self) -> Option<&str> {
        match self {
            SuiteError::UnknownKey { key, .. }
            | SuiteError::Missing { key, .. }
            | SuiteError::BadValue { key, .. } => Some(key),
            SuiteError::Scenario { source, .. } => source.key(),
            _ => None,
        }
    }
}

/// One `[[experiment]]`: a scenario, reduced, with the flow groups the algorithm under test
/// takes over.
#[derive(Debug, Clone)]
pub struct Experiment {
    /// `name`: unique in the suite; the cells' directory `DIR/NAME/`.
    pub name: String,
    /// `description`: free text.
    pub description: String,
    /// `scenario` as written (relative to the suite's scenarios directory).
    pub scenario: String,
    /// The scenario file's path (the suite's scenarios directory joined with `scenario`).
    pub path: PathBuf,
    /// `set`: `KEY=VALUE` reductions, applied as `coaplab run --set` applies them.
    pub sets: Vec<String>,
    /// The flow groups (indices of `[[flows]]`) whose `cc` the algorithm under test replaces;
    /// the others are competitors.
    pub under_test: Vec<usize>,
    /// The reduced scenario's base seed.
    pub seed: u64,
    /// The reduced scenario's replications.
    pub replications: u32,
    /// Runs per algorithm (combinations × replications of the reduced scenario).
    pub runs: usize,
}

/// A loaded, fully checked suite file.
#[derive(Debug, Clone)]
pub struct Suite {
    /// `name`.
    pub name: String,
    /// `description`.
    pub description: String,
    /// The file as named on the command line.
    pub file: String,
    /// The file's text (for `suite.json`).
    pub text: String,
    /// The experiments in file order.
    pub experiments: Vec<Experiment>,
}

/// One experiment × algorithm: what `coaplab suite run` runs into `DIR/EXPERIMENT/ALG/`.
#[derive(Debug, Clone)]
pub struct Cell {
    /// The experiment's index in [`Suite::experiments`].
    pub experiment: usize,
    /// The algorithm under test.
    pub cc: String,
    /// The scenario file.
    pub path: PathBuf,
    /// The overrides: the experiment's reductions, then `flows.K.cc=ALG` per group under test.
    pub sets: Vec<String>,
}

impl Cell {
    /// The cell's results directory below the suite's `out`.
    pub fn dir(&self, suite: &Suite, out: &Path) -> PathBuf {
        out.join(&suite.experiments[self.experiment].name)
            .join(&self.cc)
    }
}

/// The 1-based line of byte `offset` in `source`.
fn line_at(source: &str, span: Option<std::ops::Range<usize>>) -> usize {
    span.map_or(1, |s| crate::scenario::line_of(source, s.start))
}

/// A name usable as one path component: letters, digits, `.`, `_`, `-`, `+`, not starting
/// with `.`.
fn is_path_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('.')
        && s.len() <= 100
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+'))
}

impl Suite {
    /// Loads and checks the suite file at `path`: every key, and every experiment's scenario
    /// with its reductions (as `coaplab run --set` would load it).
    pub fn load(path: &Path) -> Result<Suite, SuiteError> {
        let file = path.display().to_string();
        let text = crate::files::read_text(path, crate::files::Input::Scenario).map_err(|e| {
            SuiteError::Io {
                file: file.clone(),
                message: e.to_string(),
            }
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        Suite::parse(&text, &file, base)
    }

    /// Parses and checks suite text; `file` labels errors, `base` is the directory the
    /// suite file is in (`scenarios_dir` is relative to it).
    pub fn parse(text: &str, file: &str, base: &Path) -> Result<Suite, SuiteError> {
        let doc = toml_edit::Document::parse(text).map_err(|e| SuiteError::Syntax {
            file: file.to_string(),
            line: line_at(text, e.span()),
            message: e.message().trim_end().to_string(),
        })?;
        let line = |item: &Item| line_at(text, item.span());
        let bad = |key: &str, item: &Item, expected: &str| SuiteError::BadValue {
            file: file.to_string(),
            line: line(item),
            key: key.to_string(),
            value: item.to_string().trim().to_string(),
            expected: expected.to_string(),
        };
        for (key, item) in doc.iter() {
            if !TOP_KEYS.contains(&key) {
                return Err(SuiteError::UnknownKey {
                    file: file.to_string(),
                    line: line(item),
                    key: key.to_string(),
                    allowed: TOP_KEYS.to_vec(),
                });
            }
        }
        let string = |key: &str, item: Option<&Item>, required: bool, at: usize| match item {
            None if required => Err(SuiteError::Missing {
                file: file.to_string(),
                line: at,
                key: key.to_string(),
            }),
            None => Ok(String::new()),
            Some(i) => i
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| bad(key, i, "a string")),
        };
        let name = string("name", doc.get("name"), true, 1)?;
        if !is_path_name(&name) {
            return Err(bad(
                "name",
                &doc["name"],
                "letters, digits, '.', '_', '-' or '+'",
            ));
        }
        let description = string("description", doc.get("description"), false, 1)?;
        let dir = match doc.get("scenarios_dir") {
            None => DEFAULT_SCENARIOS_DIR.to_string(),
            Some(_) => string("scenarios_dir", doc.get("scenarios_dir"), false, 1)?,
        };
        let scenarios_dir = base.join(dir);
        let tables = match doc.get("experiment") {
            None => {
                return Err(SuiteError::Missing {
                    file: file.to_string(),
                    line: 1,
                    key: "experiment".into(),
                })
            }
            Some(Item::ArrayOfTables(t)) if !t.is_empty() => t,
            Some(other) => {
                return Err(bad(
                    "experiment",
                    other,
                    "one or more [[experiment]] tables",
                ))
            }
        };
        let mut experiments: Vec<Experiment> = Vec::new();
        for (i, table) in tables.iter().enumerate() {
            let at = line_at(text, table.span());
            let key = |k: &str| format!("experiment[{i}].{k}");
            for (k, item) in table.iter() {
                if !EXPERIMENT_KEYS.contains(&k) {
                    return Err(SuiteError::UnknownKey {
                        file: file.to_string(),
                        line: line(item),
                        key: key(k),
                        allowed: EXPERIMENT_KEYS.to_vec(),
                    });
                }
            }
            let name = string(&key("name"), table.get("name"), true, at)?;
            if !is_path_name(&name) {
                return Err(bad(
                    &key("name"),
                    &table["name"],
                    "letters, digits, '.', '_', '-' or '+' (it names a directory)",
                ));
            }
            if experiments.iter().any(|e| e.name == name) {
                return Err(bad(&key("name"), &table["name"], "a name not used before"));
            }
            let description = string(&key("description"), table.get("description"), false, at)?;
            let scenario = string(&key("scenario"), table.get("scenario"), true, at)?;
            let sets = match table.get("set") {
                None => Vec::new(),
                Some(item) => {
                    let expected = "a list of \"KEY=VALUE\" strings (as coaplab run --set)";
                    let list = item
                        .as_array()
                        .ok_or_else(|| bad(&key("set"), item, expected))?;
                    list.iter()
                        .map(|v| match v.as_str() {
                            Some(s) if s.contains('=') => Ok(s.to_string()),
                            _ => Err(bad(&key("set"), item, expected)),
                        })
                        .collect::<Result<Vec<_>, _>>()?
                }
            };
            let path = scenarios_dir.join(&scenario);
            let in_scenario = |source: ScenarioError| SuiteError::Scenario {
                file: file.to_string(),
                experiment: name.clone(),
                source: Box::new(source),
            };
            let loaded = Scenario::load_with(&path, &sets).map_err(in_scenario)?;
            let config = loaded.config(0).map_err(in_scenario)?;
            let under_test = match table.get("under_test") {
                None => {
                    let udp: Vec<usize> = config
                        .flows
                        .iter()
                        .enumerate()
                        .filter(|(_, f)| matches!(f.transport, Transport::Udp { .. }))
                        .map(|(g, _)| g)
                        .collect();
                    if udp.is_empty() {
                        return Err(SuiteError::Missing {
                            file: file.to_string(),
                            line: at,
                            key: key("under_test"),
                        });
                    }
                    udp
                }
                Some(item) => {
                    let groups = config.flows.len();
                    let expected = format!(
                        "a non-empty list of distinct [[flows]] indices, 0 to {}",
                        groups - 1
                    );
                    let list = item
                        .as_array()
                        .ok_or_else(|| bad(&key("under_test"), item, &expected))?;
                    let mut out = Vec::new();
                    for v in list.iter() {
                        match v.as_integer() {
                            Some(g)
                                if (0..groups as i64).contains(&g)
                                    && !out.contains(&(g as usize)) =>
                            {
                                out.push(g as usize)
                            }
                            _ => return Err(bad(&key("under_test"), item, &expected)),
                        }
                    }
                    if out.is_empty() {
                        return Err(bad(&key("under_test"), item, &expected));
                    }
                    out
                }
            };
            // Runs per algorithm: the scenario with one algorithm in the groups under test
            // (a `cc` axis there is no longer one).
            let mut one = sets.clone();
            one.extend(
                under_test
                    .iter()
                    .map(|&g| format!("flows.{g}.cc={}", config.flows[g].cc())),
            );
            let cell = Scenario::load_with(&path, &one).map_err(in_scenario)?;
            experiments.push(Experiment {
                name,
                description,
                scenario,
                path,
                sets,
                under_test,
                seed: loaded.seed,
                replications: loaded.replications,
                runs: cell.combinations() * cell.replications as usize,
            });
        }
        Ok(Suite {
            name,
            description,
            file: file.to_string(),
            text: text.to_string(),
            experiments,
        })
    }

    /// Every experiment × algorithm of `algorithms`, experiment-major, each checked: the
    /// scenario with the cell's overrides loads (an algorithm's parameters may not suit a
    /// scenario's `[flows.params]`; that fails here, before anything runs).
    pub fn cells(&self, algorithms: &[String]) -> Result<Vec<Cell>, SuiteError> {
        for a in algorithms {
            // A name registered from outside could hold a '/': it names a directory.
            if !matches!(Transport::from_cc(a), Ok(Transport::Udp { .. })) || !is_path_name(a) {
                return Err(SuiteError::UnknownAlgorithm {
                    name: a.clone(),
                    valid: coaplab_cc::registry::names(),
                });
            }
        }
        let mut cells = Vec::new();
        for (e, exp) in self.experiments.iter().enumerate() {
            for cc in algorithms {
                let mut sets = exp.sets.clone();
                sets.extend(exp.under_test.iter().map(|g| format!("flows.{g}.cc={cc}")));
                Scenario::load_with(&exp.path, &sets).map_err(|source| SuiteError::Scenario {
                    file: self.file.clone(),
                    experiment: exp.name.clone(),
                    source: Box::new(source),
                })?;
                cells.push(Cell {
                    experiment: e,
                    cc: cc.clone(),
                    path: exp.path.clone(),
                    sets,
                });
            }
        }
        Ok(cells)
    }

    /// `suite.json` of a suite run: what makes it reproducible (the coaplab version, the
    /// suite file and its text, the algorithms, every experiment's scenario, reductions,
    /// groups under test, seed and replications).
    pub fn record(&self, algorithms: &[String]) -> serde_json::Value {
        let experiments: Vec<serde_json::Value> = self
            .experiments
            .iter()
            .map(|e| {
                serde_json::json!({
                    "name": e.name,
                    "description": e.description,
                    "scenario": e.scenario,
                    "set": e.sets,
                    "under_test": e.under_test,
                    "seed": e.seed,
                    "replications": e.replications,
                    "runs_per_algorithm": e.runs,
                })
            })
            .collect();
        serde_json::json!({
            "suite": self.name,
            "description": self.description,
            "file": self.file,
            "code_version": crate::results::manifest::code_version(),
            "algorithms": algorithms,
            "experiments": experiments,
            "suite_text": self.text,
        })
    }
}

impl Suite {
    /// Writes `out/suite.json` ([`Suite::record`]) for a run of `algorithms`, adding them to
    /// those of an earlier run into `out` of the same suite text; refuses a directory that
    /// holds the run of another suite text. Returns the algorithms recorded.
    pub fn write_record(
        &self,
        out: &Path,
        algorithms: &[String],
    ) -> Result<Vec<String>, SuiteRunError> {
        let path = out.join("suite.json");
        let mut recorded: Vec<String> = Vec::new();
        if path.exists() {
            let old = read_record(&path)?;
            if old["suite_text"].as_str() != Some(self.text.as_str()) {
                return Err(SuiteRunError::OtherSuite {
                    out: out.to_path_buf(),
                    file: self.file.clone(),
                });
            }
            recorded.extend(
                old["algorithms"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|s| s.as_str().map(str::to_string)),
            );
        }
        for a in algorithms {
            if !recorded.contains(a) {
                recorded.push(a.clone());
            }
        }
        write_record_file(&path, &self.record(&recorded))?;
        Ok(recorded)
    }
}

/// A `suite.json`.
fn read_record(path: &Path) -> Result<serde_json::Value, SuiteRunError> {
    let text = crate::files::read_text(path, crate::files::Input::Manifest)?;
    serde_json::from_str(&text).map_err(|source| SuiteRunError::Record {
        path: path.to_path_buf(),
        source,
    })
}

/// Writes `record` to the `suite.json` at `path`, atomically.
fn write_record_file(path: &Path, record: &serde_json::Value) -> Result<(), SuiteRunError> {
    // A JSON value (string keys only) always serializes.
    let text = serde_json::to_string_pretty(record).expect("a JSON value serializes");
    crate::results::store::write_atomic(path, format!("{text}\n").as_bytes())?;
    Ok(())
}

/// `coaplab suite merge`: joins the results directories of the shards of one suite run
/// (`coaplab suite run --shard K/N`) into `out`: every cell merged by
/// [`crate::results::merge::merge`] (runs verified, files identical to a single-machine
/// run's), and `suite.json`. The directories must hold the same suite text and algorithms.
/// Returns the runs merged and those that failed.
pub fn merge(out: &Path, dirs: &[PathBuf]) -> Result<(usize, usize), SuiteRunError> {
    let records = dirs
        .iter()
        .map(|d| read_record(&d.join("suite.json")))
        .collect::<Result<Vec<_>, _>>()?;
    let Some(first) = records.first() else {
        return Err(SuiteRunError::NothingToMerge);
    };
    for (d, r) in dirs.iter().zip(&records).skip(1) {
        for key in ["suite_text", "algorithms"] {
            if r[key] != first[key] {
                return Err(SuiteRunError::NotShards {
                    first: dirs[0].clone(),
                    other: d.clone(),
                    key,
                });
            }
        }
    }
    if out.join("suite.json").exists() {
        return Err(SuiteRunError::AlreadyMerged(out.to_path_buf()));
    }
    let algorithms: Vec<&str> = first["algorithms"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| a.as_str())
        .collect();
    let (mut total, mut failed) = (0, 0);
    for e in first["experiments"].as_array().into_iter().flatten() {
        let name = e["name"].as_str().unwrap_or_default();
        for cc in &algorithms {
            let cells: Vec<PathBuf> = dirs.iter().map(|d| d.join(name).join(cc)).collect();
            let merged = crate::results::merge::merge(&out.join(name).join(cc), &cells).map_err(
                |source| SuiteRunError::Merge {
                    experiment: name.to_string(),
                    cc: cc.to_string(),
                    source: Box::new(source),
                },
            )?;
            total += merged.total;
            failed += merged.failed;
        }
    }
    write_record_file(&out.join("suite.json"), first)?;
    Ok((total, failed))
}

/// Every built-in algorithm (`coaplab suite run` without `--cc`): the registry's own, not
/// those registered from outside.
pub fn builtin_algorithms() -> Vec<String> {
    coaplab_cc::registry::ALGORITHMS
        .iter()
        .map(|a| a.name.to_string())
        .collect()
}

#[cfg(test)]
mod tests;
