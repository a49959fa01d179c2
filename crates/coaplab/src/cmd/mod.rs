//! One module per subcommand; each exposes `Args` (clap) and `run(Args) -> ExitCode`.

pub(crate) mod algorithms;
pub(crate) mod bench;
pub(crate) mod bench_port;
pub(crate) mod coap_options;
pub(crate) mod decode;
pub(crate) mod dtls_opts;
pub(crate) mod emulate;
pub(crate) mod http;
pub(crate) mod link_opts;
pub(crate) mod link_trace_gen;
pub(crate) mod merge;
pub(crate) mod models;
pub(crate) mod net;
pub(crate) mod observe;
pub(crate) mod python;
pub(crate) mod report;
pub(crate) mod request;
pub(crate) mod run;
pub(crate) mod server;
pub(crate) mod suite;
pub(crate) mod tcp;
pub(crate) mod tcp_observe;
pub(crate) mod trace;
