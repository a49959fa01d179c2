//! Writes one trace table: Parquet (uncompressed, one row group per 64 Ki rows) or CSV with a
//! header line, empty fields for nulls.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;

/// The file format of trace tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TraceFormat {
    /// Apache Parquet (`.parquet`), read by pandas, polars and arrow directly.
    #[default]
    Parquet,
    /// Comma-separated values (`.csv`), one header line.
    Csv,
}

impl TraceFormat {
    /// `parquet` or `csv`.
    pub fn parse(text: &str) -> Result<TraceFormat, String> {
        match text {
            "parquet" => Ok(TraceFormat::Parquet),
            "csv" => Ok(TraceFormat::Csv),
            other => Err(format!("'{other}': expected parquet or csv")),
        }
    }

    /// The file extension.
    pub fn extension(self) -> &'static str {
        match self {
            TraceFormat::Parquet => "parquet",
            TraceFormat::Csv => "csv",
        }
    }
}

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

fn write_csv(mut out: BufWriter<File>, batch: &RecordBatch) -> io::Result<()> {
    let schema = batch.schema();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    writeln!(out, "{}", names.join(","))?;
    let options = FormatOptions::default().with_null("");
    let columns = batch
        .columns()
        .iter()
        .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
        .collect::<Result<Vec<_>, _>>()
        .map_err(io::Error::other)?;
    for row in 0..batch.num_rows() {
        for (i, c) in columns.iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            write!(out, "{}", c.value(row))?;
        }
        out.write_all(b"\n")?;
    }
    out.into_inner().map_err(|e| e.into_error())?;
    Ok(())
}
