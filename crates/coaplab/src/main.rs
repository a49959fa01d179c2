//! The `coaplab` binary: the command line lives in the library (`src/lib.rs`), so that a crate
//! adding its own algorithms can build the same command around them.

/// mimalloc (v2) instead of glibc's malloc (issue 17, docs/BENCHMARKS.md "Fifth pass"): a
/// simulation runs on a worker thread, whose glibc arena grows its heap one `mprotect` call at
/// a time and faults in every 4-KB page it touches; mimalloc maps one arena at start and asks
/// for huge pages on it, which took 10–12 % off the simulator's CPU per packet, for about
/// 5 MiB more resident memory at start and up to 12 MiB more at 400 TCP flows. Results do not
/// depend on the allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    coaplab::main()
}
