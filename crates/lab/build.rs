//! Records the git commit the crate was built from, for `manifest.json`'s `code_version`.

use std::path::PathBuf;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    Command::new("git")
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // The repository's git directory: `.git` of a clone, `.git/worktrees/NAME` of a worktree
    // (whose `.git` is a file); HEAD and its log change with every checkout and commit.
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        let dir = PathBuf::from(dir);
        for file in ["HEAD", "logs/HEAD"] {
            let path = dir.join(file);
            if path.exists() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_default();
    println!("cargo:rustc-env=COAPLAB_GIT_COMMIT={commit}");
}
