//! Records the git commit the crate was built from, for `manifest.json`'s `code_version`.

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let git = Path::new("../../.git");
    for file in ["HEAD", "logs/HEAD"] {
        if git.join(file).exists() {
            println!("cargo:rerun-if-changed=../../.git/{file}");
        }
    }
    let commit = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    println!("cargo:rustc-env=COAPLAB_GIT_COMMIT={commit}");
}
