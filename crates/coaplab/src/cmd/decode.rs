//! `coaplab decode`: print the fields of CoAP messages given in hex.

use std::process::ExitCode;

/// Arguments of `coaplab decode`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Messages in hex (spaces and colons allowed inside one argument).
    #[arg(required = true)]
    hex: Vec<String>,
}

pub(crate) fn run(_args: Args) -> ExitCode {
    ExitCode::SUCCESS
}
