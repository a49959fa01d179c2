//! `--cc-from FILE.py`: algorithms written in Python run in the `coaplab` Python package, whose
//! extension calls them per event. This binary does not link libpython: it hands the whole
//! command line over to `python3 -m coaplab` (docs/suite.md, "Algorithms written in Python").

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// The Python that runs the package: `COAPLAB_PYTHON`, else `python3` on PATH.
fn python() -> OsString {
    std::env::var_os("COAPLAB_PYTHON").unwrap_or_else(|| "python3".into())
}

/// Why the command cannot be handed over.
#[derive(Debug)]
pub(crate) enum HandOverError {
    /// A `--cc-from` path that is not a Python file.
    NotPython(PathBuf),
    /// A `--cc-from` file that does not exist.
    Missing(PathBuf),
    /// The Python cannot import the package: the interpreter tried, and what it said or why
    /// it did not start.
    NoPackage { python: String, reason: String },
}

impl std::fmt::Display for HandOverError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HandOverError::NotPython(p) => write!(
                f,
                "--cc-from {}: not a Python file (.py); an algorithm written in Rust is \
                 registered in a binary of its own (examples/custom-algorithm)",
                p.display()
            ),
            HandOverError::Missing(p) => write!(f, "--cc-from {}: no such file", p.display()),
            HandOverError::NoPackage { python, reason } => write!(
                f,
                "--cc-from needs the coaplab Python package, which {python} cannot import \
                 ({reason}); install it with `pip install ./python` from the repository \
                 (docs/python.md), or set COAPLAB_PYTHON to a Python that has it"
            ),
        }
    }
}

impl std::error::Error for HandOverError {}

/// Checks the `--cc-from` files and the package, then runs `python3 -m coaplab ARGS...` with
/// this process's arguments (`coaplab suite run ...` becomes `python3 -m coaplab suite run
/// ...`) and returns its exit status. `what` names the subcommand in messages.
pub(crate) fn hand_over(
    what: &str,
    files: &[PathBuf],
) -> Result<ExitCode, Box<dyn std::error::Error>> {
    for f in files {
        let bad = if f.extension().and_then(|e| e.to_str()) != Some("py") {
            Some(HandOverError::NotPython(f.clone()))
        } else if !Path::new(f).is_file() {
            Some(HandOverError::Missing(f.clone()))
        } else {
            None
        };
        if let Some(e) = bad {
            // A bad command line: exit status 2, as clap's.
            eprintln!("coaplab {what}: {e}");
            return Ok(ExitCode::from(2));
        }
    }
    let python = python();
    let probe = Command::new(&python)
        .args(["-c", "import coaplab._native"])
        .output();
    let reason = match probe {
        Ok(o) if o.status.success() => None,
        Ok(o) => Some(
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .last()
                .unwrap_or("import failed")
                .to_string(),
        ),
        Err(e) => Some(e.to_string()),
    };
    if let Some(reason) = reason {
        return Err(HandOverError::NoPackage {
            python: python.to_string_lossy().into_owned(),
            reason,
        }
        .into());
    }
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    eprintln!(
        "coaplab {what}: --cc-from: handing over to {} -m coaplab",
        python.to_string_lossy()
    );
    let status = Command::new(&python)
        .args(["-m", "coaplab"])
        .args(&args)
        .status()
        .map_err(|e| format!("{}: {e}", python.to_string_lossy()))?;
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(c) => ExitCode::from(u8::try_from(c).unwrap_or(1)),
        None => ExitCode::FAILURE,
    })
}
