//! Position files: BonnMotion's `.movements` and the position file of Cooja's mobility plugin.
//!
//! * BonnMotion (`MobileNode.movementString`, written by `Scenario.writeParametersAndMovement`
//!   into `NAME.movements`, usually gzipped; give it unpacked): line `i` is node `i`,
//!   `t₁ x₁ y₁ t₂ x₂ y₂ …` separated by spaces, times non-decreasing; between waypoints the
//!   node moves in a straight line ([`Between::Linear`]). Only the 2-D form is read (a 3-D
//!   file's `t x y z` groups are refused: its field count is not a multiple of 3, or its times
//!   go backwards).
//! * Cooja (contiki `tools/cooja/apps/mobility/README.txt` and `java/Mobility.java`): lines
//!   `nodeid time x y`, node ids from 0 (the mote's index), time in seconds truncated to whole
//!   microseconds (`(long)(time·10⁶)`); entries are sorted by time (a stable sort, so lines need
//!   not be in order); the mote jumps to each position at its time and stays
//!   ([`Between::Hold`]); after the file's last entry the plugin replays the whole file from
//!   that instant (`WRAP_MOVES`), so positions repeat with the period of the latest entry time
//!   ([`Trajectory::repeating`]). Lines starting with `#` and blank lines are skipped in both
//!   formats.
//!
//! Limits ([`MAX_FILE_NODES`], [`MAX_FILE_ENTRIES`]) bound the memory a file can take; every
//! error names the line and column (1-based) of the bad field.

use super::trajectory::{Between, Trajectory, Waypoint};

/// Most nodes a position file may describe (the mesh's own limit).
pub const MAX_FILE_NODES: usize = crate::mesh::layout::MAX_NODES;

/// Most waypoints a position file may hold in total (24 B each: 24 MB).
pub const MAX_FILE_ENTRIES: usize = 1_000_000;

/// Which position-file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// BonnMotion `.movements`.
    BonnMotion,
    /// Cooja mobility plugin `positions.dat`.
    Cooja,
}

/// Why a position file was refused.
#[derive(Debug, Clone, PartialEq)]
pub enum FileError {
    /// A field is not a finite number.
    NotANumber {
        /// 1-based line.
        line: usize,
        /// 1-based column of the field's first character.
        column: usize,
        /// The field.
        field: String,
    },
    /// A field is out of range (negative time, node id too large, ...).
    BadValue {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What was expected.
        expected: String,
    },
    /// A line has the wrong number of fields.
    FieldCount {
        /// 1-based line.
        line: usize,
        /// Fields found.
        found: usize,
        /// What was expected.
        expected: &'static str,
    },
    /// A waypoint's time is earlier than its node's previous one.
    TimeBackwards {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
    },
    /// More nodes or waypoints than the limits allow.
    TooLarge {
        /// 1-based line where the limit was passed.
        line: usize,
        /// The limit passed.
        limit: String,
    },
    /// The file describes no node at all.
    Empty,
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileError::NotANumber {
                line,
                column,
                field,
            } => write!(f, "line {line}, column {column}: '{field}' is not a number"),
            FileError::BadValue {
                line,
                column,
                expected,
            } => write!(f, "line {line}, column {column}: expected {expected}"),
            FileError::FieldCount {
                line,
                found,
                expected,
            } => write!(f, "line {line}: {found} fields, expected {expected}"),
            FileError::TimeBackwards { line, column } => write!(
                f,
                "line {line}, column {column}: time earlier than the node's previous entry"
            ),
            FileError::TooLarge { line, limit } => write!(f, "line {line}: more than {limit}"),
            FileError::Empty => write!(f, "the file describes no node"),
        }
    }
}

impl std::error::Error for FileError {}

/// The fields of one line with their 1-based columns.
fn fields(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices() {
        match (c.is_whitespace(), start) {
            (false, None) => start = Some(i),
            (true, Some(s)) => {
                out.push((s + 1, &line[s..i]));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s + 1, &line[s..]));
    }
    out
}

fn number(line: usize, (column, field): (usize, &str)) -> Result<f64, FileError> {
    field
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| FileError::NotANumber {
            line,
            column,
            field: field.chars().take(40).collect(),
        })
}

fn time(line: usize, f: (usize, &str)) -> Result<f64, FileError> {
    let t = number(line, f)?;
    if t < 0.0 {
        return Err(FileError::BadValue {
            line,
            column: f.0,
            expected: "a time of at least 0 s".into(),
        });
    }
    Ok(t)
}

/// Appends `w` to `points` if its time does not go backwards.
fn append(
    points: &mut Vec<Waypoint>,
    w: Waypoint,
    line: usize,
    column: usize,
    total: &mut usize,
) -> Result<(), FileError> {
    if points.last().is_some_and(|p| p.t_s > w.t_s) {
        return Err(FileError::TimeBackwards { line, column });
    }
    *total += 1;
    if *total > MAX_FILE_ENTRIES {
        return Err(FileError::TooLarge {
            line,
            limit: format!("{MAX_FILE_ENTRIES} waypoints"),
        });
    }
    points.push(w);
    Ok(())
}

/// Parses `text` in `format`: one trajectory per node, by node id (`None`: a Cooja node id
/// with no lines).
pub fn parse(text: &str, format: Format) -> Result<Vec<Option<Trajectory>>, FileError> {
    let mut nodes: Vec<Vec<Waypoint>> = Vec::new();
    let mut total = 0;
    let lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    for (line, text) in lines {
        let f = fields(text);
        match format {
            Format::BonnMotion => {
                if f.len() % 3 != 0 {
                    return Err(FileError::FieldCount {
                        line,
                        found: f.len(),
                        expected: "groups of 3 (t x y)",
                    });
                }
                if nodes.len() == MAX_FILE_NODES {
                    return Err(FileError::TooLarge {
                        line,
                        limit: format!("{MAX_FILE_NODES} nodes"),
                    });
                }
                let mut points = Vec::with_capacity(f.len() / 3);
                for g in f.chunks(3) {
                    let w = Waypoint {
                        t_s: time(line, g[0])?,
                        x_m: number(line, g[1])?,
                        y_m: number(line, g[2])?,
                    };
                    append(&mut points, w, line, g[0].0, &mut total)?;
                }
                nodes.push(points);
            }
            Format::Cooja => {
                if f.len() != 4 {
                    return Err(FileError::FieldCount {
                        line,
                        found: f.len(),
                        expected: "4 (node time x y)",
                    });
                }
                let id = f[0]
                    .1
                    .parse::<usize>()
                    .ok()
                    .filter(|&n| n < MAX_FILE_NODES)
                    .ok_or_else(|| FileError::BadValue {
                        line,
                        column: f[0].0,
                        expected: format!("a node id from 0 to {}", MAX_FILE_NODES - 1),
                    })?;
                if nodes.len() <= id {
                    nodes.resize(id + 1, Vec::new());
                }
                // Mobility.java: `(long) (time · 1000 · MILLISECOND)` microseconds.
                let t_s = (time(line, f[1])? * 1e6).floor() / 1e6;
                let w = Waypoint {
                    t_s,
                    x_m: number(line, f[2])?,
                    y_m: number(line, f[3])?,
                };
                // Cooja sorts the entries by time: out of order is fine here.
                nodes[id].push(Waypoint {
                    t_s: f64::NEG_INFINITY,
                    ..w
                });
                let last = nodes[id].len() - 1;
                nodes[id][last].t_s = w.t_s;
                total += 1;
                if total > MAX_FILE_ENTRIES {
                    return Err(FileError::TooLarge {
                        line,
                        limit: format!("{MAX_FILE_ENTRIES} waypoints"),
                    });
                }
            }
        }
    }
    if nodes.iter().all(Vec::is_empty) {
        return Err(FileError::Empty);
    }
    let (between, period_s) = match format {
        Format::BonnMotion => (Between::Linear, 0.0),
        Format::Cooja => {
            for p in &mut nodes {
                p.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
            }
            let last = nodes.iter().flatten().map(|w| w.t_s).fold(0.0, f64::max);
            (Between::Hold, last)
        }
    };
    Ok(nodes
        .into_iter()
        .map(|p| (!p.is_empty()).then(|| Trajectory::new(p, between).repeating(period_s)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bonnmotion_lines_are_nodes_and_move_linearly() {
        let t = parse(
            "0.0 1.0 2.0 10.0 11.0 2.0\n# comment\n0 5 5\n",
            Format::BonnMotion,
        )
        .unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].as_ref().unwrap().position_at(5.0), (6.0, 2.0));
        assert_eq!(t[1].as_ref().unwrap().position_at(99.0), (5.0, 5.0));
    }

    #[test]
    fn cooja_lines_hold_positions_per_node_id_and_repeat() {
        // The README's example, lines shuffled (Cooja sorts them by time); the last entry is
        // at 0.5 s, so the file replays every 0.5 s.
        let t = parse(
            "1 0.25 2.5 0\n0 0.00 1 0\n1 0.00 2 0\n0 0.25 1.5 0\n0 0.50 2 0\n1 0.50 3 0\n",
            Format::Cooja,
        )
        .unwrap();
        let n0 = t[0].as_ref().unwrap();
        assert_eq!(n0.position_at(0.2), (1.0, 0.0));
        assert_eq!(n0.position_at(0.25), (1.5, 0.0));
        assert_eq!(n0.position_at(0.49), (1.5, 0.0));
        // At 0.5 s the last entry and, at once, the replayed first one.
        assert_eq!(n0.position_at(0.5), (1.0, 0.0));
        assert_eq!(n0.position_at(0.8), (1.5, 0.0));
        assert_eq!(t[1].as_ref().unwrap().position_at(1.3), (2.5, 0.0));
        // A node whose first entry is late holds its last position from the previous round;
        // times are truncated to whole microseconds, as Cooja does.
        let t = parse("0 0.0000019 5 5\n1 1 0 0\n0 0.5 6 6\n", Format::Cooja).unwrap();
        let n1 = t[1].as_ref().unwrap();
        assert_eq!(n1.position_at(0.5), (0.0, 0.0));
        assert_eq!(n1.position_at(1.5), (0.0, 0.0));
        assert_eq!(t[0].as_ref().unwrap().points()[0].t_s, 0.000001);
        // Before its first entry a mote is where it was placed.
        let placed = t[1].clone().unwrap().starting_at((7.0, 7.0));
        assert_eq!(placed.position_at(0.5), (7.0, 7.0));
        assert_eq!(placed.position_at(1.0), (0.0, 0.0));
        assert_eq!(placed.position_at(1.5), (0.0, 0.0));
    }

    #[test]
    fn bad_input_names_line_and_column() {
        assert_eq!(
            parse("0 0 0 5 x 1\n", Format::BonnMotion),
            Err(FileError::NotANumber {
                line: 1,
                column: 9,
                field: "x".into()
            })
        );
        assert_eq!(
            parse("\n0 1 1 1 2 2 2\n", Format::BonnMotion),
            Err(FileError::FieldCount {
                line: 2,
                found: 7,
                expected: "groups of 3 (t x y)"
            })
        );
        assert_eq!(
            parse("0 5 0 0 3 1 1\n", Format::BonnMotion)
                .unwrap_err()
                .to_string(),
            "line 1: 7 fields, expected groups of 3 (t x y)"
        );
        assert_eq!(
            parse("5 1 1 3 2 2\n", Format::BonnMotion),
            Err(FileError::TimeBackwards { line: 1, column: 7 })
        );
        assert_eq!(
            parse("0 -1 1 1\n", Format::Cooja),
            Err(FileError::BadValue {
                line: 1,
                column: 3,
                expected: "a time of at least 0 s".into()
            })
        );
        assert!(matches!(
            parse("99999 0 1 1\n", Format::Cooja),
            Err(FileError::BadValue {
                line: 1,
                column: 1,
                ..
            })
        ));
        assert_eq!(
            parse("0 0 1\n", Format::Cooja),
            Err(FileError::FieldCount {
                line: 1,
                found: 3,
                expected: "4 (node time x y)"
            })
        );
        assert_eq!(parse("# nothing\n", Format::Cooja), Err(FileError::Empty));
        assert!(matches!(
            parse("0 inf 1 1\n", Format::Cooja),
            Err(FileError::NotANumber { column: 3, .. })
        ));
    }
}
