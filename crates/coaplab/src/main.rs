//! The `coaplab` binary: the command line lives in the library (`src/lib.rs`), so that a crate
//! adding its own algorithms can build the same command around them.

fn main() -> std::process::ExitCode {
    coaplab::main()
}
