//! What the `coaplab run`/`merge`/`report` CLI tests share: running the built binary and a
//! temporary directory that removes itself.

#![allow(dead_code)] // Each test file uses its own part.

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs the built `coaplab` with `args` to completion.
pub(crate) fn coaplab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_coaplab"))
        .args(args)
        .output()
        .expect("run coaplab")
}

/// Output bytes as text.
pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A fresh directory under the system temp dir, removed when dropped.
pub(crate) struct TempDir(pub(crate) PathBuf);

impl TempDir {
    pub(crate) fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("coaplab-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    /// `name` inside the directory, as text.
    pub(crate) fn path(&self, name: &str) -> String {
        self.0.join(name).display().to_string()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
