//! The request options of `coaplab get|put|post|delete|fetch|patch|ipatch` (flags named as
//! in libcoap's coap-client, with aiocoap-client's long names), and `-v`'s printing of a
//! response's code and every option, decoded by name (kept apart from the request code so
//! that other features, e.g. Observe, can print notifications the same way).

use coaplab_wire::option::{number, OptionList, ValueFormat};
use coaplab_wire::Code;

/// Bytes given in hex on the command line (a newtype, so that clap takes one value per
/// occurrence rather than a list of bytes).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Hex(pub(crate) Vec<u8>);

/// Flags that add options to a request.
#[derive(clap::Args, Debug, Default)]
pub(crate) struct OptionArgs {
    /// Content-Format of the payload (RFC 7252 §5.10.3): a number or a name (text, octet,
    /// json, cbor, link; e.g. text/plain, application/json). libcoap: -t; aiocoap:
    /// --content-format.
    #[arg(short = 't', long = "content-format", value_name = "FMT", value_parser = parse_format)]
    content_format: Option<u16>,
    /// Accept (RFC 7252 §5.10.4): the Content-Format wanted in the response, as
    /// --content-format. The server answers 4.06 when it has no such representation.
    #[arg(short = 'A', long, value_name = "FMT", value_parser = parse_format)]
    accept: Option<u16>,
    /// Any option, as NUM,VALUE (libcoap's -O): VALUE is text, or hex after 0x (e.g.
    /// -O 2048,0x0a0b); NUM, sends an empty option. An odd NUM is critical: a server that does
    /// not know it answers 4.02. Repeatable.
    #[arg(short = 'O', long = "option", value_name = "NUM,VALUE", value_parser = parse_option)]
    option: Vec<(u16, Vec<u8>)>,
    /// If-Match (RFC 7252 §5.10.8.1), hex ETag (0x optional); an empty value ("") matches
    /// any existing representation. Repeatable. The server answers 4.12 when none match.
    #[arg(long = "if-match", value_name = "ETAG", value_parser = parse_hex)]
    if_match: Vec<Hex>,
    /// If-None-Match (RFC 7252 §5.10.8.2): only if the target has no representation yet
    /// (4.12 otherwise).
    #[arg(long = "if-none-match")]
    if_none_match: bool,
    /// ETag (RFC 7252 §5.10.6.2), hex (0x optional): a GET naming the current tag gets
    /// 2.03 Valid without the body. Repeatable.
    #[arg(long = "etag", value_name = "ETAG", value_parser = parse_hex)]
    etag: Vec<Hex>,
    /// Ask for Size2 (RFC 7959 §4: Size2 0 in the request): the server announces the
    /// body's total size.
    #[arg(long = "size2")]
    size2: bool,
}

impl OptionArgs {
    /// The options these flags ask for.
    pub(crate) fn list(&self) -> OptionList {
        let mut l = OptionList::new();
        if let Some(f) = self.content_format {
            l.push_uint(number::CONTENT_FORMAT, u32::from(f));
        }
        if let Some(f) = self.accept {
            l.push_uint(number::ACCEPT, u32::from(f));
        }
        for v in &self.if_match {
            l.push(number::IF_MATCH, v.0.clone());
        }
        if self.if_none_match {
            l.push(number::IF_NONE_MATCH, Vec::new());
        }
        for v in &self.etag {
            l.push(number::ETAG, v.0.clone());
        }
        if self.size2 {
            l.push_uint(number::SIZE2, 0);
        }
        for (n, v) in &self.option {
            l.push(*n, v.clone());
        }
        l
    }
}

/// Content-Format names (RFC 7252 §12.3, RFC 7049, RFC 6690) and their numbers.
const FORMATS: [(&str, &str, u16); 6] = [
    ("text", "text/plain", 0),
    ("link", "application/link-format", 40),
    ("xml", "application/xml", 41),
    ("octet", "application/octet-stream", 42),
    ("json", "application/json", 50),
    ("cbor", "application/cbor", 60),
];

/// A Content-Format given as a number (0–65535) or a name of [`FORMATS`].
fn parse_format(s: &str) -> Result<u16, String> {
    if let Ok(n) = s.parse::<u16>() {
        return Ok(n);
    }
    let t = s.trim_end_matches(";charset=utf-8");
    FORMATS
        .iter()
        .find(|(short, long, _)| t == *short || t == *long)
        .map(|f| f.2)
        .ok_or_else(|| {
            format!("unknown Content-Format {s:?}: a number, or text, link, xml, octet, json, cbor")
        })
}

/// The name of Content-Format `n`, if registered in [`FORMATS`].
fn format_name(n: u64) -> Option<&'static str> {
    FORMATS.iter().find(|f| u64::from(f.2) == n).map(|f| f.1)
}

/// 0–8 hex bytes (an ETag or a token), with or without `0x`; empty for "".
pub(crate) fn parse_hex(s: &str) -> Result<Hex, String> {
    let h = s.strip_prefix("0x").unwrap_or(s);
    match hex_bytes(h) {
        Ok(v) if v.len() <= 8 => Ok(Hex(v)),
        _ => Err(format!("{s:?}: an ETag is 0–8 bytes of hex, e.g. 0x0a1b")),
    }
}

/// Bytes from an even number of hex digits.
fn hex_bytes(h: &str) -> Result<Vec<u8>, String> {
    if h.len() % 2 != 0 || !h.is_ascii() {
        return Err("an even number of hex digits expected".into());
    }
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).map_err(|e| e.to_string()))
        .collect()
}

/// `NUM,VALUE`: text, or hex after `0x`.
fn parse_option(s: &str) -> Result<(u16, Vec<u8>), String> {
    let (n, v) = s
        .split_once(',')
        .ok_or_else(|| format!("{s:?}: expected NUM,VALUE (e.g. 2049,hello or 2049,0x0a0b)"))?;
    let n: u16 = n
        .trim()
        .parse()
        .map_err(|_| format!("{s:?}: option number must be 1–65535"))?;
    if n == 0 {
        return Err(format!("{s:?}: option number 0 is reserved"));
    }
    let v = match v.strip_prefix("0x") {
        Some(h) => hex_bytes(h).map_err(|e| format!("{s:?}: {e}"))?,
        None => v.as_bytes().to_vec(),
    };
    if v.len() > 1034 {
        return Err(format!("{s:?}: an option value is at most 1034 bytes here"));
    }
    Ok((n, v))
}

/// The response's code and options, one per line, as `-v` prints them to stderr, e.g.
/// `2.05 Content` then `  Content-Format: 0 (text/plain)`, `  ETag: 0x0000000000000400`.
pub(crate) fn describe(code: Code, options: &OptionList) -> String {
    let mut s = format!(
        "{}.{:02} {}",
        code.class(),
        code.detail(),
        code.name().unwrap_or("")
    );
    for (n, v) in options.iter() {
        s.push_str("\n  ");
        s.push_str(&describe_option(n, v));
    }
    s
}

/// One option as `Name: value` (unknown numbers as `Option N`; values by their registered
/// format, opaque ones in hex).
pub(crate) fn describe_option(n: u16, v: &[u8]) -> String {
    let hex = |v: &[u8]| {
        let h: String = v.iter().map(|b| format!("{b:02x}")).collect();
        format!("0x{h}")
    };
    let Some(f) = number::format_of(n) else {
        return format!("Option {n}: {}", hex(v));
    };
    let value = match f.format {
        ValueFormat::Empty => String::new(),
        ValueFormat::Opaque => hex(v),
        ValueFormat::String => format!("{:?}", String::from_utf8_lossy(v)),
        ValueFormat::Uint => {
            let u = coaplab_wire::option::uint::decode(v);
            match n {
                number::CONTENT_FORMAT | number::ACCEPT => match format_name(u) {
                    Some(name) => format!("{u} ({name})"),
                    None => u.to_string(),
                },
                number::BLOCK1 | number::BLOCK2 => {
                    // NUM/M/SZX as a size (RFC 7959 §2.2).
                    format!("{}/{}/{}", u >> 4, (u >> 3) & 1, 16u64 << (u & 7).min(6))
                }
                _ => u.to_string(),
            }
        }
    };
    if value.is_empty() {
        f.name.to_owned()
    } else {
        format!("{}: {value}", f.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_parse_like_libcoap() {
        assert_eq!(parse_format("json"), Ok(50));
        assert_eq!(parse_format("text/plain;charset=utf-8"), Ok(0));
        assert_eq!(parse_format("11542"), Ok(11542));
        assert!(parse_format("nope").is_err());
        assert_eq!(parse_option("2049,hi"), Ok((2049, b"hi".to_vec())));
        assert_eq!(parse_option("2049,0x0a0B"), Ok((2049, vec![10, 11])));
        assert_eq!(parse_option("2049,"), Ok((2049, vec![])));
        assert!(parse_option("0,x").is_err() && parse_option("x").is_err());
        assert_eq!(parse_hex(""), Ok(Hex(vec![])));
        assert!(parse_hex("0x123456789abcdef012").is_err());
    }

    #[test]
    fn options_are_printed_by_name() {
        let mut l = OptionList::new();
        l.push(number::ETAG, vec![1, 2])
            .push_uint(number::CONTENT_FORMAT, 50)
            .push_uint(number::BLOCK2, 0x0e)
            .push(number::IF_NONE_MATCH, vec![])
            .push(2049, b"x".to_vec());
        assert_eq!(
            describe(Code::CONTENT, &l),
            "2.05 Content\n  ETag: 0x0102\n  If-None-Match\n  Content-Format: 50 (application/json)\n  \
             Block2: 0/1/1024\n  Option 2049: 0x78"
        );
    }
}
