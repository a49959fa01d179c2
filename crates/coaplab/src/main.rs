//! The `coaplab` binary: the command line lives in the library (`src/lib.rs`), so that a crate
//! adding its own algorithms can build the same command around them.

/// mimalloc (v2) instead of glibc's malloc (issue 17, docs/BENCHMARKS.md "Fifth pass"): with
/// several jobs simulations run on worker threads, whose glibc arenas grow their heap one
/// `mprotect` call at a time and fault in every 4-KB page they touch; mimalloc maps one arena
/// at start and asks for huge pages on it, which took 10–12 % off the simulator's CPU per
/// packet (when simulations still ran on a worker thread even with one job), for about
/// 5 MiB more resident memory at start and up to 12 MiB more at 400 TCP flows. Results do not
/// depend on the allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    coaplab::main()
}
