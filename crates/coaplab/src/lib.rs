//! The `coaplab` command line: one subcommand per module in `cmd/`.
//!
//! The binary is `fn main() { coaplab::main() }`. A crate that adds an algorithm without
//! forking coaplab builds its own binary the same way, registering the algorithm first:
//!
//! ```no_run
//! # fn my_algorithm() -> coaplab_cc::registry::AlgorithmInfo { unimplemented!() }
//! fn main() -> std::process::ExitCode {
//!     coaplab_cc::registry::register(my_algorithm()).expect("a new name");
//!     coaplab::main()
//! }
//! ```
//!
//! Every subcommand (`trace`, `run`, `algorithms`, `get`, ...) then accepts its name; see
//! docs/algorithms.md, "Adding an algorithm", and examples/custom-algorithm.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd;

/// coaplab — a laboratory for CoAP congestion control.
///
/// Simulate the published CoAP retransmission-timeout experiments in virtual time, run a CoAP
/// client and server with any of the algorithms on real sockets, and put real programs behind
/// an emulated constrained link.
#[derive(Parser, Debug)]
#[command(name = "coaplab", version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Simulate a scenario file: every sweep combination and replication, in parallel; write
    /// flows.csv, summary.csv and manifest.json and print a percentile table.
    Run(cmd::run::Args),
    /// Join the results directories of the shards of one plan (`run --shard K/N`) into one,
    /// identical to a single-machine run: runs verified, flows.csv and summary.csv byte for
    /// byte.
    Merge(cmd::merge::Args),
    /// Benchmark suites (docs/suite.md): `suite run` runs a named set of reduced scenarios for
    /// chosen algorithms and ranks them per experiment and overall; `suite report` writes the
    /// page (leaderboard, FCT-retransmissions scatter per experiment).
    Suite(cmd::suite::Args),
    /// Decode CoAP messages (RFC 7252 datagrams or RFC 8323 frames) given in hex, and print
    /// every field, or the exact rule a malformed message breaks.
    Decode(cmd::decode::Args),
    /// Run a scripted timeline of sends, ACKs and resets through one RTO algorithm and print
    /// every transmission, expiry, completion and give-up as CSV.
    Trace(cmd::trace::Args),
    /// List the RTO algorithms, or print every parameter of one (key, default, range, help,
    /// source).
    Algorithms(cmd::algorithms::Args),
    /// List the network models with parameters, or print every parameter of one (`link`: the
    /// star's [network] keys; `mesh`: radio medium, CSMA/CA, 6LoWPAN; key, default, range,
    /// help, source).
    Models(cmd::models::Args),
    /// Serve /data/N, /echo, /time and /.well-known/core over UDP (and TCP with --tcp) until
    /// SIGINT/SIGTERM.
    Server(cmd::server::Args),
    /// GET a resource over UDP (coap://) or TCP (coap+tcp://) and print its payload.
    Get(cmd::request::Args),
    /// PUT a payload (Block1 when large) and print the response payload.
    Put(cmd::request::Args),
    /// POST a payload (Block1 when large) and print the response payload.
    Post(cmd::request::Args),
    /// DELETE a resource and print the response payload.
    Delete(cmd::request::Args),
    /// FETCH (RFC 8132): a GET whose query is the payload; print the response payload.
    Fetch(cmd::request::Args),
    /// PATCH (RFC 8132) a resource with the payload; print the response payload.
    Patch(cmd::request::Args),
    /// iPATCH (RFC 8132, idempotent PATCH) a resource with the payload.
    Ipatch(cmd::request::Args),
    /// Closed-loop load generator: requests/s, losses, latency percentiles.
    Bench(cmd::bench::Args),
    /// Run a server and a client command in two network namespaces joined by the emulated
    /// link (netsim's link model in real time, on TUN devices); print the link statistics.
    Emulate(Box<cmd::emulate::Args>),
    /// Write one self-contained HTML page of a results directory: each metric across the
    /// sweep per algorithm, expired-RTO CDFs, FCT box plots, CDFs and scatters per cell, traced
    /// timelines, the summary table, and with --against a comparison with reference numbers;
    /// or of two directories of one plan (A B), their paired differences.
    Report(cmd::report::Args),
    /// Serve /data/N over HTTP/1.1 and h2c (HTTP/2 with prior knowledge) on one TCP port,
    /// optionally with minimal headers (--iot) and TCP Fast Open (--tfo), until SIGINT/SIGTERM.
    HttpServer(cmd::http::ServerArgs),
    /// GET an http:// URL over HTTP/1.1 or h2c (curl-like flags), print the body; -v: the
    /// download time (connection start to last byte).
    HttpGet(cmd::http::GetArgs),
}

/// Runs the `coaplab` command with the process's arguments.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Run(args) => cmd::run::run(args),
        Command::Merge(args) => cmd::merge::run(args),
        Command::Suite(args) => cmd::suite::run(args),
        Command::Decode(args) => cmd::decode::run(args),
        Command::Trace(args) => cmd::trace::run(args),
        Command::Algorithms(args) => cmd::algorithms::run(args),
        Command::Models(args) => cmd::models::run(args),
        Command::Server(args) => cmd::server::run(args),
        Command::Get(args) => cmd::request::run(coaplab_wire::Code::GET, args),
        Command::Put(args) => cmd::request::run(coaplab_wire::Code::PUT, args),
        Command::Post(args) => cmd::request::run(coaplab_wire::Code::POST, args),
        Command::Delete(args) => cmd::request::run(coaplab_wire::Code::DELETE, args),
        Command::Fetch(args) => cmd::request::run(coaplab_wire::Code::FETCH, args),
        Command::Patch(args) => cmd::request::run(coaplab_wire::Code::PATCH, args),
        Command::Ipatch(args) => cmd::request::run(coaplab_wire::Code::IPATCH, args),
        Command::Bench(args) => cmd::bench::run(args),
        Command::Emulate(args) => cmd::emulate::run(*args),
        Command::Report(args) => cmd::report::run(args),
        Command::HttpServer(args) => cmd::http::run_server(args),
        Command::HttpGet(args) => cmd::http::run_get(args),
    }
}
