//! `coaplab run --set KEY=VALUE`: scenario keys overridden from the command line (and from
//! Python), applied to the TOML document before it is checked, so a bad key or value fails
//! exactly as it would in the file.
//!
//! KEY is a dotted path: table names and keys (`network.buffer_bytes`, `protocol.nstart`,
//! `seed`), with a number selecting an element of an array of tables (`flows.0.cc` is `cc` of
//! the first `[[flows]]`). VALUE is a TOML value (`2500`, `"fasor"`, `[2500, 28200]`, `true`);
//! a bare word that is not one (`fasor`, `nbiot`) is taken as a string. A list is a sweep
//! axis, as in the file. A missing table on the way is created; a missing key is added, and
//! the reader then refuses it if the format has no such key.

use toml_edit::{DocumentMut, Item, Table, TableLike, Value};

use super::ScenarioError;

/// `source` with every `KEY=VALUE` of `sets` applied in order (a later one wins). `file`
/// labels errors.
pub fn apply_overrides(source: &str, file: &str, sets: &[String]) -> Result<String, ScenarioError> {
    let mut doc: DocumentMut =
        source
            .parse()
            .map_err(|e: toml_edit::TomlError| ScenarioError::Syntax {
                file: file.to_string(),
                line: e
                    .span()
                    .map(|s| super::line_of(source, s.start))
                    .unwrap_or(1),
                message: e.message().to_string(),
            })?;
    for set in sets {
        let bad = |message: String| ScenarioError::Override {
            set: set.clone(),
            message,
        };
        let (key, text) = set
            .split_once('=')
            .ok_or_else(|| bad("expected KEY=VALUE, e.g. network.buffer_bytes=2500".into()))?;
        let key = key.trim();
        let path: Vec<&str> = key.split('.').map(str::trim).collect();
        if path.iter().any(|s| s.is_empty()) {
            return Err(bad(format!("'{key}' is not a dotted key path")));
        }
        set_in(doc.as_table_mut(), &path, parse_value(text.trim()), "").map_err(bad)?;
    }
    Ok(doc.to_string())
}

/// A TOML value, or a bare word as a string.
fn parse_value(text: &str) -> Value {
    text.parse::<Value>()
        .map(|mut v| {
            v.decor_mut().clear();
            v
        })
        .unwrap_or_else(|_| Value::from(text))
}

/// Sets `path` below `table` (whose own path is `at`) to `value`.
fn set_in(table: &mut dyn TableLike, path: &[&str], value: Value, at: &str) -> Result<(), String> {
    let (first, rest) = path.split_first().expect("a non-empty path");
    let here = if at.is_empty() {
        first.to_string()
    } else {
        format!("{at}.{first}")
    };
    if rest.is_empty() {
        if matches!(
            table.get(first),
            Some(Item::Table(_) | Item::ArrayOfTables(_))
        ) {
            return Err(format!("'{here}' is a table, not a value"));
        }
        table.insert(first, Item::Value(value));
        return Ok(());
    }
    if !table.contains_key(first) {
        let mut new = Table::new();
        new.set_implicit(true);
        table.insert(first, Item::Table(new));
    }
    match table.get_mut(first).expect("present") {
        Item::Table(t) => set_in(t, rest, value, &here),
        Item::Value(Value::InlineTable(t)) => set_in(t, rest, value, &here),
        Item::ArrayOfTables(list) => {
            let len = list.len();
            let index: usize = rest[0].parse().map_err(|_| {
                format!("'{here}' is an array of tables: the next key is its index, from 0")
            })?;
            let element = list.get_mut(index).ok_or_else(|| {
                format!("'{here}' has {len} tables; index {index} is out of range")
            })?;
            let here = format!("{here}.{index}");
            if rest.len() == 1 {
                return Err(format!("'{here}' is a table, not a value"));
            }
            set_in(element, &rest[1..], value, &here)
        }
        _ => Err(format!("'{here}' is a value, not a table")),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Scenario, ScenarioError};
    use super::apply_overrides;

    const FILE: &str = "name = \"t\"\nseed = 1\n[network]\nbuffer_bytes = 2500 # one BDP\n\
                        [[flows]]\ncount = 2\ncc = \"default\"\n[[flows]]\ncount = 1\n";

    fn apply(sets: &[&str]) -> Result<String, ScenarioError> {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        apply_overrides(FILE, "t.toml", &sets)
    }

    #[test]
    fn overrides_replace_values_in_place_and_lists_become_axes() {
        let text = apply(&[
            "network.buffer_bytes=[2500, 28200]",
            "flows.1.cc=fasor",
            "seed = 7",
        ])
        .unwrap();
        assert_eq!(
            text,
            "name = \"t\"\nseed = 7\n[network]\nbuffer_bytes = [2500, 28200]\n[[flows]]\n\
             count = 2\ncc = \"default\"\n[[flows]]\ncount = 1\ncc = \"fasor\"\n"
        );
        let scenario = Scenario::parse(&text, "t.toml").unwrap();
        assert_eq!(scenario.axes.len(), 1);
        assert_eq!(scenario.axes[0].key, "network.buffer_bytes");
        assert_eq!(scenario.seed, 7);
    }

    #[test]
    fn bad_overrides_name_the_key() {
        let err = |sets: &[&str]| apply(sets).unwrap_err().to_string();
        assert_eq!(
            err(&["network.buffer_bytes"]),
            "--set network.buffer_bytes: expected KEY=VALUE, e.g. network.buffer_bytes=2500"
        );
        assert_eq!(
            err(&["flows.2.cc=fasor"]),
            "--set flows.2.cc=fasor: 'flows' has 2 tables; index 2 is out of range"
        );
        assert_eq!(
            err(&["flows.cc=fasor"]),
            "--set flows.cc=fasor: 'flows' is an array of tables: the next key is its index, \
             from 0"
        );
        assert_eq!(
            err(&["seed.x=1"]),
            "--set seed.x=1: 'seed' is a value, not a table"
        );
        assert_eq!(
            err(&["network=1"]),
            "--set network=1: 'network' is a table, not a value"
        );
        // A key or value the format does not accept fails as it would in the file.
        let text = apply(&["network.bufer_bytes=1"]).unwrap();
        let e = Scenario::parse(&text, "t.toml").unwrap_err();
        assert_eq!(e.key(), Some("network.bufer_bytes"));
        let text = apply(&["network.buffer_bytes=-1"]).unwrap();
        let e = Scenario::parse(&text, "t.toml").unwrap_err();
        assert_eq!((e.key(), e.line()), (Some("network.buffer_bytes"), 4));
    }
}
