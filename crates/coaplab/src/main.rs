//! The `coaplab` command line: one subcommand per module in `cmd/`.

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
    /// Decode CoAP messages (RFC 7252 datagrams or RFC 8323 frames) given in hex, and print
    /// every field, or the exact rule a malformed message breaks.
    Decode(cmd::decode::Args),
    /// Run a scripted timeline of sends, ACKs and resets through one RTO algorithm and print
    /// every transmission, expiry, completion and give-up as CSV.
    Trace(cmd::trace::Args),
    /// List the RTO algorithms, or print every parameter of one (key, default, range, help,
    /// source).
    Algorithms(cmd::algorithms::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Run(args) => cmd::run::run(args),
        Command::Decode(args) => cmd::decode::run(args),
        Command::Trace(args) => cmd::trace::run(args),
        Command::Algorithms(args) => cmd::algorithms::run(args),
    }
}
