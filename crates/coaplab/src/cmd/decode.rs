//! `coaplab decode`: print the fields of CoAP messages given in hex, e.g. copied from a
//! capture, or the exact rule a malformed one breaks.

use std::fmt::Write as _;
use std::process::ExitCode;

use coaplab_wire::frame::{Decoded, Frame};
use coaplab_wire::option::{format_of, number, uint, Block, Options, ValueFormat};
use coaplab_wire::signal::SignalMessage;
use coaplab_wire::Message;

/// Arguments of `coaplab decode`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
    coaplab decode 42017d344a1fb773656e736f727304 74656d70\n  \
    coaplab decode --tcp 40e12204 8020\n\n\
    Exit status: 0 when every message decodes, 1 when one is malformed, 2 on bad arguments.")]
pub(crate) struct Args {
    /// The message bytes in hex. Whitespace, ':' and a leading 0x are ignored, so several
    /// arguments are joined into one message.
    #[arg(required = true, value_name = "HEX")]
    hex: Vec<String>,
    /// Decode RFC 8323 frames (CoAP over TCP) instead of an RFC 7252 datagram; the bytes may
    /// hold several frames back to back.
    #[arg(long)]
    tcp: bool,
}

pub(crate) fn run(args: Args) -> ExitCode {
    let bytes = match parse_hex(&args.hex.join("")) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("coaplab decode: {e}");
            return ExitCode::from(2);
        }
    };
    let result = if args.tcp {
        describe_frames(&bytes)
    } else {
        describe_datagram(&bytes)
    };
    match result {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err((text, error)) => {
            print!("{text}");
            eprintln!("malformed: {error}");
            ExitCode::from(1)
        }
    }
}

fn parse_hex(s: &str) -> Result<Vec<u8>, String> {
    let clean: String = s
        .replace("0x", "")
        .chars()
        .filter(|c| !c.is_whitespace() && *c != ':')
        .collect();
    if clean.len() % 2 != 0 {
        return Err(format!("odd number of hex digits ({})", clean.len()));
    }
    (0..clean.len())
        .step_by(2)
        .map(|i| {
            u8::from_str_radix(&clean[i..i + 2], 16)
                .map_err(|_| format!("'{}' is not a hex byte", &clean[i..i + 2]))
        })
        .collect()
}

type Described = Result<String, (String, String)>;

fn describe_datagram(bytes: &[u8]) -> Described {
    let m = Message::decode(bytes).map_err(|e| (String::new(), e.to_string()))?;
    let mut out = format!(
        "{} {:?} mid=0x{:04x} token={} ({} bytes)\n",
        m.mtype,
        m.code,
        m.message_id,
        m.token(),
        bytes.len()
    );
    describe_body(&mut out, m.options, m.payload, false);
    Ok(out)
}

fn describe_frames(bytes: &[u8]) -> Described {
    let mut out = String::new();
    let mut at = 0;
    while at < bytes.len() {
        match Frame::decode_stream(&bytes[at..], usize::MAX) {
            Ok(Decoded::Frame { frame, consumed }) => {
                let _ = writeln!(
                    out,
                    "frame {:?} token={} ({consumed} bytes)",
                    frame.code,
                    frame.token()
                );
                if frame.code.is_signal() {
                    match SignalMessage::from_frame(&frame) {
                        Ok(s) => {
                            let _ = writeln!(out, "  signal: {:?}", s.signal);
                            if let Some(n) = s.unknown_critical {
                                let _ = writeln!(out, "  unknown critical option {n}");
                            }
                        }
                        Err(e) => return Err((out, e.to_string())),
                    }
                }
                describe_body(
                    &mut out,
                    frame.options,
                    frame.payload,
                    frame.code.is_signal(),
                );
                at += consumed;
            }
            Ok(Decoded::NeedMore(n)) => {
                return Err((out, format!("incomplete frame: {n} more bytes needed")))
            }
            Err(e) => return Err((out, e.to_string())),
        }
    }
    Ok(out)
}

fn describe_body(out: &mut String, options: Options<'_>, payload: &[u8], signal: bool) {
    for (n, v) in options.iter() {
        let _ = writeln!(out, "  {}", describe_option(n, v, signal));
    }
    if !payload.is_empty() {
        let shown = match std::str::from_utf8(payload) {
            Ok(s) if s.chars().all(|c| !c.is_control() || c == '\n') => format!("{s:?}"),
            _ => {
                hex(&payload[..payload.len().min(32)]) + if payload.len() > 32 { "…" } else { "" }
            }
        };
        let _ = writeln!(out, "  payload ({} bytes): {shown}", payload.len());
    }
}

fn describe_option(n: u16, v: &[u8], signal: bool) -> String {
    let class = format!(
        "{}{}",
        if number::is_critical(n) {
            "critical"
        } else {
            "elective"
        },
        if number::is_unsafe(n) { ", unsafe" } else { "" }
    );
    let fmt = if signal { None } else { format_of(n) };
    let Some(f) = fmt else {
        return format!("option {n} ({class}): {}", hex(v));
    };
    let value = match f.format {
        ValueFormat::Empty => "(empty)".to_string(),
        ValueFormat::Uint if n == number::BLOCK1 || n == number::BLOCK2 => match Block::decode(v) {
            Ok(b) => b.to_string(),
            Err(e) => format!("{} ({e})", hex(v)),
        },
        ValueFormat::Uint if v.len() <= 4 => uint::decode(v).to_string(),
        ValueFormat::String => match std::str::from_utf8(v) {
            Ok(s) => format!("{s:?}"),
            Err(_) => format!("{} (not UTF-8)", hex(v)),
        },
        _ => hex(v),
    };
    let bad_len = if v.len() < f.min_len || v.len() > f.max_len {
        format!(" [length {} outside {}-{}]", v.len(), f.min_len, f.max_len)
    } else {
        String::new()
    };
    format!("{} ({n}): {value}{bad_len}", f.name)
}

fn hex(b: &[u8]) -> String {
    let mut s = String::from("0x");
    for x in b {
        let _ = write!(s, "{x:02x}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datagram_description_lists_every_field() {
        let b = parse_hex("42 01 7d 34 4a 1f b7 73656e736f7273 04 74656d70").unwrap();
        assert_eq!(
            describe_datagram(&b).unwrap(),
            "CON 0.01 GET mid=0x7d34 token=0x4a1f (19 bytes)\n  Uri-Path (11): \"sensors\"\n  Uri-Path (11): \"temp\"\n"
        );
    }

    #[test]
    fn malformed_input_names_the_rule() {
        let (_, e) = describe_datagram(&[0x40, 0x01, 0, 1, 0xff]).unwrap_err();
        assert!(e.contains("RFC 7252 §3"), "{e}");
        assert_eq!(
            parse_hex("abc").unwrap_err(),
            "odd number of hex digits (3)"
        );
    }

    #[test]
    fn frames_and_signals() {
        let b = parse_hex("40e1220480 20").unwrap();
        let text = describe_frames(&b).unwrap();
        assert!(text.starts_with("frame 7.01 CSM token=0x (6 bytes)\n  signal: Csm { max_message_size: Some(1152), block_wise_transfer: true }\n"), "{text}");
    }
}
