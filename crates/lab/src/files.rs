//! Reading the files coaplab is given, each kind with a size limit (issue 32).
//!
//! Every input — a scenario, a reference file, a position file, a trace script, a results
//! directory's files — is read through [`read`], [`read_text`], [`read_from`] or [`open`], with
//! the limit of its [`Input`] kind. A regular file larger than the limit is refused from its
//! size before a byte is read; anything else (a pipe, standard input, a device such as
//! `/dev/zero`) is read through [`std::io::Read::take`] of limit + 1 bytes and refused at the
//! byte past the limit, so an endless input costs at most the limit in memory and time. The
//! limits, and why each is what it is, are listed in docs/scenarios.md ("Input size limits").
//!
//! Writing is the other half: [`crate::results::store::write_atomic`] writes a whole file
//! through a temporary renamed over the target, so a symbolic link planted at the target is
//! replaced, never followed.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// One MiB.
const MIB: u64 = 1 << 20;

/// A kind of input file, which sets its size limit ([`Input::limit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// A scenario file (`coaplab run FILE`): the largest in `scenarios/` is 3.9 KB.
    Scenario,
    /// A reference file (`coaplab report --against FILE`): `scenarios/reference/` holds 2.1 KB.
    Reference,
    /// A `[mobility] file` of node positions (BonnMotion or Cooja).
    Positions,
    /// A `coaplab trace` script of sends and ACKs.
    TraceScript,
    /// A `[network]` link-trace file (`link_trace`, `down_link_trace`, `up_link_trace`).
    LinkTrace,
    /// A results directory's `manifest.json`.
    Manifest,
    /// A results directory's `flows.csv`, and each run's files under `runs/`: read whole.
    ResultsTable,
    /// A results side table read line by line (`timers.csv`, `exchanges.csv`).
    SideTable,
}

impl Input {
    /// The largest file of this kind read, in bytes.
    pub const fn limit(self) -> u64 {
        match self {
            Input::Scenario | Input::Reference => MIB,
            Input::Positions | Input::Manifest | Input::LinkTrace => 64 * MIB,
            Input::TraceScript => 16 * MIB,
            Input::ResultsTable => 256 * MIB,
            Input::SideTable => 4096 * MIB,
        }
    }

    /// What a file of this kind is, for messages.
    pub const fn what(self) -> &'static str {
        match self {
            Input::Scenario => "a scenario file",
            Input::Reference => "a reference file",
            Input::Positions => "a position file",
            Input::LinkTrace => "a link-trace file",
            Input::TraceScript => "a trace script",
            Input::Manifest => "a manifest.json",
            Input::ResultsTable => "a results table (flows.csv, runs/)",
            Input::SideTable => "a results side table (timers.csv, exchanges.csv)",
        }
    }
}

/// The longest line [`read_line`] reads from a [`Input::SideTable`] (64 KiB; the longest line
/// coaplab writes there is under 300 B).
pub const MAX_LINE_BYTES: u64 = 64 << 10;

/// A limit as text: `16 MiB`, `64 KiB`, `4 GiB`, or bytes.
pub fn size_text(bytes: u64) -> String {
    Size(bytes).to_string()
}

/// A limit as text ([`size_text`]).
struct Size(u64);

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 >= 1024 * MIB && self.0 % (1024 * MIB) == 0 {
            write!(f, "{} GiB", self.0 / (1024 * MIB))
        } else if self.0 >= MIB && self.0 % MIB == 0 {
            write!(f, "{} MiB", self.0 / MIB)
        } else if self.0 >= 1024 && self.0 % 1024 == 0 {
            write!(f, "{} KiB", self.0 >> 10)
        } else {
            write!(f, "{} B", self.0)
        }
    }
}

/// An input that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The operating system's error.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The file is larger than its kind's limit.
    #[error(
        "{} is larger than {}, the limit for {} (docs/scenarios.md, \"Input size limits\")",
        path.display(), Size(*limit), kind.what()
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its kind.
        kind: Input,
        /// The limit, in bytes.
        limit: u64,
    },
    /// A line longer than [`MAX_LINE_BYTES`].
    #[error(
        "{} has a line longer than {} (the limit for a line of {})",
        path.display(), Size(MAX_LINE_BYTES), kind.what()
    )]
    LineTooLong {
        /// The file.
        path: PathBuf,
        /// Its kind.
        kind: Input,
    },
    /// The file is not UTF-8 text.
    #[error("{} is not UTF-8 text", path.display())]
    NotText {
        /// The file.
        path: PathBuf,
    },
}

impl InputError {
    /// Whether the file does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, InputError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }

    /// The file.
    pub fn path(&self) -> &Path {
        match self {
            InputError::Io { path, .. }
            | InputError::TooLarge { path, .. }
            | InputError::LineTooLong { path, .. }
            | InputError::NotText { path } => path,
        }
    }
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> InputError + '_ {
    move |source| InputError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn too_large(path: &Path, kind: Input) -> InputError {
    InputError::TooLarge {
        path: path.to_path_buf(),
        kind,
        limit: kind.limit(),
    }
}

/// The bytes of `path`, at most `kind`'s limit ([`InputError::TooLarge`] beyond).
pub fn read(path: &Path, kind: Input) -> Result<Vec<u8>, InputError> {
    let file = std::fs::File::open(path).map_err(io_error(path))?;
    let meta = file.metadata().map_err(io_error(path))?;
    if meta.is_file() && meta.len() > kind.limit() {
        return Err(too_large(path, kind));
    }
    let size = if meta.is_file() { meta.len() } else { 0 };
    read_all(file, kind.limit(), size)
        .map_err(io_error(path))?
        .ok_or_else(|| too_large(path, kind))
}

/// The text of `path`, at most `kind`'s limit.
pub fn read_text(path: &Path, kind: Input) -> Result<String, InputError> {
    String::from_utf8(read(path, kind)?).map_err(|_| InputError::NotText {
        path: path.to_path_buf(),
    })
}

/// The text read from `reader` (standard input, say) to its end, at most `kind`'s limit;
/// `path` names it in errors.
pub fn read_from(reader: impl Read, path: &Path, kind: Input) -> Result<String, InputError> {
    let bytes = read_all(reader, kind.limit(), 0)
        .map_err(io_error(path))?
        .ok_or_else(|| too_large(path, kind))?;
    String::from_utf8(bytes).map_err(|_| InputError::NotText {
        path: path.to_path_buf(),
    })
}

/// Everything `reader` gives, or `None` at the byte past `limit`: read through
/// `take(limit + 1)` in 64-KiB pieces, so the bytes held never exceed `limit` (`size`: the
/// expected length, reserved at once).
fn read_all(reader: impl Read, limit: u64, size: u64) -> std::io::Result<Option<Vec<u8>>> {
    let mut reader = reader.take(limit + 1);
    let mut bytes = Vec::with_capacity(size.min(limit) as usize);
    let mut piece = vec![0u8; 64 << 10];
    loop {
        let n = match reader.read(&mut piece) {
            Ok(0) => return Ok(Some(bytes)),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if (bytes.len() + n) as u64 > limit {
            return Ok(None);
        }
        bytes.extend_from_slice(&piece[..n]);
    }
}

/// `path` opened for reading at most `kind`'s limit: refused at once when it is a regular
/// file above the limit; otherwise a read past the limit fails with an error that
/// [`Limited::error`] turns into [`InputError::TooLarge`].
pub fn open(path: &Path, kind: Input) -> Result<Limited, InputError> {
    let file = std::fs::File::open(path).map_err(io_error(path))?;
    let meta = file.metadata().map_err(io_error(path))?;
    if meta.is_file() && meta.len() > kind.limit() {
        return Err(too_large(path, kind));
    }
    Ok(Limited {
        inner: file.take(kind.limit() + 1),
        path: path.to_path_buf(),
        kind,
        over: false,
    })
}

/// A file opened by [`open`]: reads fail once more than its limit has been read.
#[derive(Debug)]
pub struct Limited {
    inner: std::io::Take<std::fs::File>,
    path: PathBuf,
    kind: Input,
    over: bool,
}

impl Limited {
    /// The [`InputError`] of an error `e` returned by a read: [`InputError::TooLarge`] when
    /// the read went past the limit.
    pub fn error(&self, e: std::io::Error) -> InputError {
        if self.over {
            too_large(&self.path, self.kind)
        } else {
            io_error(&self.path)(e)
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Read for Limited {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let left = self.inner.limit();
        if left == 0 && n > 0 {
            // The byte past the limit was read.
            self.over = true;
            return Err(std::io::Error::other(format!(
                "{} is larger than {}",
                self.path.display(),
                Size(self.kind.limit())
            )));
        }
        Ok(n)
    }
}

/// Reads one line (with its `\n`) of `reader` into `line` (cleared first), at most
/// [`MAX_LINE_BYTES`]; `Ok(false)` at the end of the file.
pub fn read_line(
    reader: &mut std::io::BufReader<Limited>,
    line: &mut String,
) -> Result<bool, InputError> {
    use std::io::BufRead as _;
    line.clear();
    let read = reader.by_ref().take(MAX_LINE_BYTES + 1).read_line(line);
    let n = read.map_err(|e| reader.get_ref().error(e))?;
    if n as u64 > MAX_LINE_BYTES {
        let inner = reader.get_ref();
        return Err(InputError::LineTooLong {
            path: inner.path.clone(),
            kind: inner.kind,
        });
    }
    Ok(n > 0)
}

/// Creates `path`, which must not exist (`O_CREAT | O_EXCL`, which does not follow a symbolic
/// link at `path`); a file or link already there, left by a killed process with the same id,
/// is removed first (removing a link removes the link). The temporaries of
/// [`crate::results::store::write_atomic`] and of the trace files are created so.
pub fn create_new(path: &Path) -> std::io::Result<std::fs::File> {
    let open = || {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
    };
    match open() {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            std::fs::remove_file(path)?;
            open()
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str, bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        (dir, path)
    }

    #[test]
    fn a_file_at_the_limit_is_read_and_one_byte_more_is_refused() {
        let limit = Input::Scenario.limit() as usize;
        let (_d, at) = temp("at.toml", &vec![b'#'; limit]);
        assert_eq!(read(&at, Input::Scenario).unwrap().len(), limit);
        let (_d, over) = temp("over.toml", &vec![b'#'; limit + 1]);
        let e = read_text(&over, Input::Scenario).unwrap_err();
        assert!(matches!(e, InputError::TooLarge { limit: l, .. } if l == limit as u64));
        let text = e.to_string();
        assert!(
            text.contains("over.toml") && text.contains("1 MiB"),
            "{text}"
        );
        assert!(text.contains("a scenario file"), "{text}");
    }

    #[test]
    fn dev_zero_is_refused_at_the_limit() {
        let start = std::time::Instant::now();
        let e = read(Path::new("/dev/zero"), Input::Scenario).unwrap_err();
        assert!(matches!(e, InputError::TooLarge { .. }), "{e}");
        let e = read_from(
            std::fs::File::open("/dev/zero").unwrap(),
            Path::new("-"),
            Input::Reference,
        )
        .unwrap_err();
        assert!(matches!(e, InputError::TooLarge { .. }), "{e}");
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn a_line_past_the_line_limit_is_refused() {
        let mut text = b"run,flow\n1,2\n".to_vec();
        text.extend(vec![b'x'; MAX_LINE_BYTES as usize + 1]);
        let (_d, path) = temp("timers.csv", &text);
        let mut r = std::io::BufReader::new(open(&path, Input::SideTable).unwrap());
        let mut line = String::new();
        assert!(read_line(&mut r, &mut line).unwrap());
        assert_eq!(line, "run,flow\n");
        assert!(read_line(&mut r, &mut line).unwrap());
        assert!(matches!(
            read_line(&mut r, &mut line),
            Err(InputError::LineTooLong { .. })
        ));
    }

    #[test]
    fn missing_and_binary_files_are_told_apart() {
        let e = read(Path::new("/nonexistent/x.toml"), Input::Scenario).unwrap_err();
        assert!(e.is_not_found());
        let (_d, path) = temp("bin", &[0xff, 0xfe]);
        assert!(matches!(
            read_text(&path, Input::Scenario),
            Err(InputError::NotText { .. })
        ));
        assert_eq!(Size(64 << 10).to_string(), "64 KiB");
        assert_eq!(Size(4096 * MIB).to_string(), "4 GiB");
    }
}
