//! What a sweep traces, as `[output]` and `coaplab run --trace-runs/--trace-format` say it:
//! which runs ([`RunSelection`]) and in which file format ([`TraceFormat`]). The scenario
//! reads them and [`crate::trace`] writes what they ask for; they import neither.

/// Which runs a sweep traces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunSelection {
    /// These run ids (inclusive ranges).
    Runs(Vec<(usize, usize)>),
    /// The first replication of every parameter combination.
    FirstOfEach,
}

/// A run selection that [`RunSelection::parse`] cannot read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "'{text}': expected run ids and ranges such as 0,5,10-12, or 'first' (the first \
     replication of every combination)"
)]
pub struct BadRunSelection {
    /// The text given.
    pub text: String,
}

impl Default for RunSelection {
    /// Run 0 only.
    fn default() -> Self {
        RunSelection::Runs(vec![(0, 0)])
    }
}

impl RunSelection {
    /// Parses `0,5,10-12` (run ids and inclusive ranges) or `first` (the first replication of
    /// every combination).
    pub fn parse(text: &str) -> Result<RunSelection, BadRunSelection> {
        let text = text.trim();
        if text == "first" {
            return Ok(RunSelection::FirstOfEach);
        }
        let expected = || BadRunSelection {
            text: text.to_string(),
        };
        let mut ranges = Vec::new();
        for part in text.split(',') {
            let part = part.trim();
            let (a, b) = match part.split_once('-') {
                Some((a, b)) => (a.trim(), b.trim()),
                None => (part, part),
            };
            let a: usize = a.parse().map_err(|_| expected())?;
            let b: usize = b.parse().map_err(|_| expected())?;
            if b < a {
                return Err(expected());
            }
            ranges.push((a, b));
        }
        Ok(RunSelection::Runs(ranges))
    }

    /// Whether run `run` (replication `replication`) is traced.
    pub fn contains(&self, run: usize, replication: u32) -> bool {
        match self {
            RunSelection::Runs(ranges) => ranges.iter().any(|&(a, b)| (a..=b).contains(&run)),
            RunSelection::FirstOfEach => replication == 0,
        }
    }
}

impl std::fmt::Display for RunSelection {
    /// `first`, or the ids and ranges as [`RunSelection::parse`] reads them.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunSelection::FirstOfEach => f.write_str("first"),
            RunSelection::Runs(ranges) => {
                for (i, &(a, b)) in ranges.iter().enumerate() {
                    let sep = if i > 0 { "," } else { "" };
                    if a == b {
                        write!(f, "{sep}{a}")?;
                    } else {
                        write!(f, "{sep}{a}-{b}")?;
                    }
                }
                Ok(())
            }
        }
    }
}

/// The file format of trace tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TraceFormat {
    /// Apache Parquet (`.parquet`), read by pandas, polars and arrow directly.
    #[default]
    Parquet,
    /// Comma-separated values (`.csv`), one header line.
    Csv,
}

/// A trace format name that is neither `parquet` nor `csv`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}': expected parquet or csv")]
pub struct BadTraceFormat(pub String);

impl TraceFormat {
    /// `parquet` or `csv`.
    pub fn parse(text: &str) -> Result<TraceFormat, BadTraceFormat> {
        match text {
            "parquet" => Ok(TraceFormat::Parquet),
            "csv" => Ok(TraceFormat::Csv),
            other => Err(BadTraceFormat(other.to_string())),
        }
    }

    /// The file extension.
    pub fn extension(self) -> &'static str {
        match self {
            TraceFormat::Parquet => "parquet",
            TraceFormat::Csv => "csv",
        }
    }
}
