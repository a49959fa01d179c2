//! Minimal RFC 4180 CSV: the fields we write are numbers and short names, quoted only when
//! they contain a comma, a quote or a line break.

/// Appends `field` to `line`, quoted when needed.
pub fn push_field(line: &mut String, field: &str) {
    if !line.is_empty() {
        line.push(',');
    }
    push_escaped(line, field);
}

/// Appends `field` to `line` without a separator, quoted (its quotes doubled) when it holds a
/// comma, a quote or a line break (RFC 4180 §2); as is otherwise.
pub fn push_escaped(line: &mut String, field: &str) {
    if field.contains([',', '"', '\n', '\r']) {
        line.push('"');
        line.push_str(&field.replace('"', "\"\""));
        line.push('"');
    } else {
        line.push_str(field);
    }
}

/// One line of fields.
pub fn line<'a>(fields: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::new();
    let mut first = true;
    for f in fields {
        if first && f.is_empty() {
            // An empty first field would be indistinguishable from a missing one.
            out.push_str("\"\"");
        } else {
            push_field(&mut out, f);
        }
        first = false;
    }
    out
}

/// Splits CSV text into records of fields (quoted fields may hold commas, quotes, newlines).
pub fn parse(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    let mut any = false;
    while let Some(c) = chars.next() {
        any = true;
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => quoted = false,
                _ => field.push(c),
            }
            continue;
        }
        match c {
            '"' => quoted = true,
            ',' => record.push(std::mem::take(&mut field)),
            '\r' => {}
            '\n' => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
                any = false;
            }
            _ => field.push(c),
        }
    }
    if any {
        record.push(field);
        records.push(record);
    }
    records
}

/// A float as the shortest text that reads back to the same value; empty for `None`.
pub fn float(x: Option<f64>) -> String {
    x.map(|v| format!("{v}")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_round_trips() {
        let fields = ["a", "b,c", "say \"hi\"", "", "x\ny"];
        let text = format!("{}\n{}\n", line(fields), line(["1", "2"]));
        assert_eq!(text, "a,\"b,c\",\"say \"\"hi\"\"\",,\"x\ny\"\n1,2\n");
        let back = parse(&text);
        assert_eq!(
            back,
            vec![
                fields.map(String::from).to_vec(),
                vec!["1".into(), "2".into()]
            ]
        );
    }

    #[test]
    fn floats_are_shortest_round_trip() {
        assert_eq!(float(Some(285.695)), "285.695");
        assert_eq!(float(Some(0.1 + 0.2)), "0.30000000000000004");
        assert_eq!(float(None), "");
    }
}
