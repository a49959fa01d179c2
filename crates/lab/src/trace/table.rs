//! Writes one trace table: Parquet (uncompressed, one row group per 64 Ki rows) or CSV with a
//! header line, empty fields for nulls, and text fields quoted when they hold a comma, a quote
//! or a line break (RFC 4180, written by the `csv` crate as the results files:
//! [`crate::results::csv`]).

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_cast::display::{ArrayFormatter, FormatOptions};

use crate::results::csv;
use crate::scenario::TraceFormat;
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;

/// Rows per Parquet row group.
const ROW_GROUP_ROWS: usize = 64 * 1024;

/// Writes `batch` to `stem` + the format's extension, through a temporary file renamed into
/// place (a killed run leaves no half-written table under the final name).
pub fn write(stem: &Path, batch: &RecordBatch, format: TraceFormat) -> io::Result<PathBuf> {
    let path = stem.with_extension(format.extension());
    let tmp = stem.with_extension(format!("{}.tmp", format.extension()));
    let file = BufWriter::new(crate::files::create_new(&tmp)?);
    match format {
        TraceFormat::Parquet => write_parquet(file, batch)?,
        TraceFormat::Csv => write_csv(file, batch)?,
    }
    std::fs::rename(&tmp, &path)?;
    Ok(path)
}

fn write_parquet(out: BufWriter<File>, batch: &RecordBatch) -> io::Result<()> {
    let props = WriterProperties::builder()
        .set_max_row_group_size(ROW_GROUP_ROWS)
        .build();
    let mut w = ArrowWriter::try_new(out, batch.schema(), Some(props)).map_err(io::Error::other)?;
    w.write(batch).map_err(io::Error::other)?;
    let out = w.into_inner().map_err(io::Error::other)?;
    out.into_inner().map_err(|e| e.into_error())?;
    Ok(())
}

fn write_csv(out: BufWriter<File>, batch: &RecordBatch) -> io::Result<()> {
    let schema = batch.schema();
    let mut out = csv::writer(out);
    out.write_record(schema.fields().iter().map(|f| f.name()))?;
    let options = FormatOptions::default().with_null("");
    let columns = batch
        .columns()
        .iter()
        .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
        .collect::<Result<Vec<_>, _>>()
        .map_err(io::Error::other)?;
    let mut field = String::new();
    for row in 0..batch.num_rows() {
        for c in &columns {
            field.clear();
            write!(field, "{}", c.value(row)).map_err(io::Error::other)?;
            out.write_field(&field)?;
        }
        out.write_record(None::<&[u8]>)?;
    }
    let out = out.into_inner().map_err(|e| e.into_error())?;
    out.into_inner().map_err(|e| e.into_error())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int64Array, StringArray};

    use super::*;

    #[test]
    fn csv_text_fields_with_commas_quotes_or_line_breaks_are_quoted() {
        let n: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), None, Some(-3), Some(4)]));
        let text: ArrayRef = Arc::new(StringArray::from(vec![
            Some("plain"),
            Some("a,b"),
            Some("say \"hi\""),
            Some("two\nlines"),
        ]));
        let empty: ArrayRef = Arc::new(StringArray::from(vec![None, Some(""), None, None]));
        let batch =
            RecordBatch::try_from_iter([("n", n), ("text", text), ("empty", empty)]).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = write(&dir.path().join("t"), &batch, TraceFormat::Csv).unwrap();
        let written = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            written,
            "n,text,empty\n\
             1,plain,\n\
             ,\"a,b\",\n\
             -3,\"say \"\"hi\"\"\",\n\
             4,\"two\nlines\",\n"
        );
        // Read back field by field, as written (a null and an empty text both read empty).
        let rows = csv::parse(&written);
        assert_eq!(rows.len(), 5);
        assert_eq!(rows[2], ["", "a,b", ""]);
        assert_eq!(rows[3], ["-3", "say \"hi\"", ""]);
        assert_eq!(rows[4], ["4", "two\nlines", ""]);
    }
}
