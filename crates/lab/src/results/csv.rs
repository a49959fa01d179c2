//! CSV (RFC 4180) through the `csv` crate, set up the one way every coaplab table is written
//! and read: records end in `\n`, a field is quoted (its quotes doubled) only when it holds a
//! comma, a quote or a line break, and records may differ in length (a results directory
//! joins tables of several shapes). Floats are formatted here ([`float`]), not by the crate's
//! serializer, so a value's text is Rust's shortest round trip.

use ::csv::{ReaderBuilder, Writer, WriterBuilder};

/// The writer settings of every table: `\n` after a record, quotes only where needed, no
/// check that records have one length.
fn builder() -> WriterBuilder {
    let mut b = WriterBuilder::new();
    b.terminator(::csv::Terminator::Any(b'\n'))
        .quote_style(::csv::QuoteStyle::Necessary)
        .flexible(true);
    b
}

/// A writer with coaplab's settings around `out` (a file, say), for tables streamed to disk.
pub fn writer<W: std::io::Write>(out: W) -> Writer<W> {
    builder().from_writer(out)
}

/// CSV text being written in memory, record by record.
pub struct Text {
    out: Writer<Vec<u8>>,
}

impl Default for Text {
    fn default() -> Self {
        Text::new()
    }
}

impl Text {
    /// No records yet.
    pub fn new() -> Text {
        Text {
            out: writer(Vec::new()),
        }
    }

    /// Text starting with the record `header`.
    pub fn with_header<T: AsRef<[u8]>>(header: impl IntoIterator<Item = T>) -> Text {
        let mut text = Text::new();
        text.record(header);
        text
    }

    /// Appends one record and its `\n`.
    pub fn record<T: AsRef<[u8]>>(&mut self, fields: impl IntoIterator<Item = T>) {
        // Into memory, with records of any length allowed, the writer has no error to give.
        self.out
            .write_record(fields)
            .expect("writing CSV into memory cannot fail");
    }

    /// The text written.
    pub fn finish(self) -> String {
        let bytes = self
            .out
            .into_inner()
            .expect("flushing CSV into memory cannot fail");
        // Every field came in as text and the writer adds only ASCII.
        String::from_utf8(bytes).expect("CSV of text is text")
    }
}

/// One record without its line break (a header line, say).
pub fn line<T: AsRef<[u8]>>(fields: impl IntoIterator<Item = T>) -> String {
    let mut text = Text::with_header(fields).finish();
    text.pop();
    text
}

/// Splits CSV text into records of fields (quoted fields may hold commas, quotes, line
/// breaks; blank lines are no records).
pub fn parse(text: &str) -> Vec<Vec<String>> {
    let mut reader = ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut out = Vec::new();
    let mut record = ::csv::ByteRecord::new();
    // Reading from memory with records of any length allowed, the reader has no error to give.
    while reader.read_byte_record(&mut record).unwrap_or(false) {
        out.push(
            record
                .iter()
                .map(|f| String::from_utf8_lossy(f).into_owned())
                .collect(),
        );
    }
    out
}

/// A float as the shortest text that reads back to the same value; empty for `None`.
pub fn float(x: Option<f64>) -> String {
    x.map(|v| format!("{v}")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_with_a_comma_and_a_quote_round_trips() {
        let fields = ["a", "b,c", "say \"hi\"", "", "x\ny", "both, \"of them\""];
        let mut text = Text::with_header(fields);
        text.record(["1", "2"]);
        let text = text.finish();
        assert_eq!(
            text,
            "a,\"b,c\",\"say \"\"hi\"\"\",,\"x\ny\",\"both, \"\"of them\"\"\"\n1,2\n"
        );
        assert_eq!(
            parse(&text),
            vec![
                fields.map(String::from).to_vec(),
                vec!["1".into(), "2".into()]
            ]
        );
        assert_eq!(line(["p", "q,r"]), "p,\"q,r\"");
    }

    #[test]
    fn a_lone_empty_field_is_quoted_so_it_is_a_record() {
        let mut text = Text::new();
        text.record([""]);
        text.record(["", "x"]);
        let text = text.finish();
        assert_eq!(text, "\"\"\n,x\n");
        assert_eq!(
            parse(&text),
            vec![vec![String::new()], vec!["".into(), "x".into()]]
        );
    }

    #[test]
    fn floats_are_shortest_round_trip() {
        assert_eq!(float(Some(285.695)), "285.695");
        assert_eq!(float(Some(0.1 + 0.2)), "0.30000000000000004");
        assert_eq!(float(None), "");
    }
}
