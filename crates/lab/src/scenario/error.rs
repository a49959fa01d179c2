//! Why a scenario file was refused: always with the file, the line and the key.

use std::fmt;

/// A scenario file that cannot be run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScenarioError {
    /// The file could not be read.
    Io {
        /// The file.
        file: String,
        /// The operating system's message.
        message: String,
    },
    /// The file is larger than a scenario file may be ([`crate::files::Input::Scenario`]).
    TooLarge {
        /// The file.
        file: String,
        /// The limit, in bytes.
        limit: u64,
    },
    /// The text is not valid TOML.
    Syntax {
        /// The file.
        file: String,
        /// 1-based line of the error.
        line: usize,
        /// The parser's message.
        message: String,
    },
    /// A key that the scenario format does not have.
    UnknownKey {
        /// The file.
        file: String,
        /// 1-based line of the key.
        line: usize,
        /// The full key path, e.g. `network.bufer_bytes`.
        key: String,
        /// Every key valid in that table.
        allowed: Vec<String>,
    },
    /// A required key is missing.
    Missing {
        /// The file.
        file: String,
        /// 1-based line of the table that lacks it.
        line: usize,
        /// The full key path.
        key: String,
    },
    /// A value of the wrong type or out of range.
    BadValue {
        /// The file.
        file: String,
        /// 1-based line of the value.
        line: usize,
        /// The full key path.
        key: String,
        /// What was given, as written.
        value: String,
        /// What would be accepted.
        expected: String,
    },
    /// A `--set KEY=VALUE` override that cannot be applied (the path does not lead to a
    /// value); overrides that apply are checked as the file's keys are.
    Override {
        /// The override as given.
        set: String,
        /// What is wrong.
        message: String,
    },
}

impl ScenarioError {
    /// The 1-based line the error points at (0 for I/O errors).
    pub fn line(&self) -> usize {
        match self {
            ScenarioError::Io { .. }
            | ScenarioError::TooLarge { .. }
            | ScenarioError::Override { .. } => 0,
            ScenarioError::Syntax { line, .. }
            | ScenarioError::UnknownKey { line, .. }
            | ScenarioError::Missing { line, .. }
            | ScenarioError::BadValue { line, .. } => *line,
        }
    }

    /// The key the error is about, if any.
    pub fn key(&self) -> Option<&str> {
        match self {
            ScenarioError::UnknownKey { key, .. }
            | ScenarioError::Missing { key, .. }
            | ScenarioError::BadValue { key, .. } => Some(key),
            _ => None,
        }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScenarioError::Io { file, message } => write!(f, "{file}: {message}"),
            ScenarioError::TooLarge { file, limit } => write!(
                f,
                "{file} is larger than {}, the limit for a scenario file (docs/scenarios.md, \
                 \"Input size limits\")",
                crate::files::size_text(*limit)
            ),
            ScenarioError::Override { set, message } => write!(f, "--set {set}: {message}"),
            ScenarioError::Syntax {
                file,
                line,
                message,
            } => write!(f, "{file}:{line}: not valid TOML: {}", message.trim_end()),
            ScenarioError::UnknownKey {
                file,
                line,
                key,
                allowed,
            } => write!(
                f,
                "{file}:{line}: unknown key '{key}'; allowed here: {}",
                allowed.join(", ")
            ),
            ScenarioError::Missing { file, line, key } => {
                write!(f, "{file}:{line}: missing required key '{key}'")
            }
            ScenarioError::BadValue {
                file,
                line,
                key,
                value,
                expected,
            } => write!(
                f,
                "{file}:{line}: bad value {value} for '{key}': expected {expected}"
            ),
        }
    }
}

impl std::error::Error for ScenarioError {}

impl From<crate::files::InputError> for ScenarioError {
    fn from(e: crate::files::InputError) -> Self {
        let file = e.path().display().to_string();
        match e {
            crate::files::InputError::TooLarge { limit, .. } => {
                ScenarioError::TooLarge { file, limit }
            }
            crate::files::InputError::Io { source, .. } => ScenarioError::Io {
                file,
                message: source.to_string(),
            },
            e => ScenarioError::Io {
                file,
                message: e.to_string(),
            },
        }
    }
}
