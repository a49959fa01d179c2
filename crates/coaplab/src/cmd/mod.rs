//! One module per subcommand; each exposes `Args` (clap) and `run(Args) -> ExitCode`.

pub(crate) mod algorithms;
pub(crate) mod decode;
pub(crate) mod run;
pub(crate) mod trace;
