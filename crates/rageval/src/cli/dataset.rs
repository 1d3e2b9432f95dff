//! How a dataset file is read, declared once for every command that reads one; `--format`
//! parses by [`Format`]'s own `FromStr`, the rule the Python package's `format=` follows.

use std::ffi::OsStr;

use clap::Args;
use clap::builder::{PossibleValue, StringValueParser, TypedValueParser};
use rageval_core::dataset::Format;

/// How a dataset file is read — its format, the columns its fields are in, the sheet —
/// declared once for every command that reads one (`eval`, `collect`'s questions, `rank`,
/// `reference`, `pipeline`).
#[derive(Debug, Args)]
pub struct DatasetArgs {
    /// Map a field to a column of the data, e.g. `--map question=prompt` (repeatable).
    #[arg(long = "map", value_name = "FIELD=COLUMN")]
    pub field_map: Vec<String>,

    /// The dataset's format, when its extension does not say it. Trace exports, one sample
    /// per trace and per retrieval hop, are read only when named: `openinference` (Phoenix
    /// spans), `langfuse`.
    #[arg(long, value_parser = FormatNames)]
    pub format: Option<Format>,

    /// The XLSX sheet to read (default: the first).
    #[arg(long)]
    pub sheet: Option<String>,
}

/// `--format`'s parser: [`Format`]'s `FromStr` (its error lists every name taken), with the
/// formats listed in `--help`.
#[derive(Debug, Clone, Copy)]
struct FormatNames;

impl TypedValueParser for FormatNames {
    type Value = Format;

    fn parse_ref(
        &self,
        command: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<Format, clap::Error> {
        StringValueParser::new()
            .try_map(|text| text.parse::<Format>())
            .parse_ref(command, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(Format::ALL.into_iter().map(|format| {
            PossibleValue::new(format.name()).help(what_it_reads(format))
        })))
    }
}

/// What `--help` says of a format.
fn what_it_reads(format: Format) -> &'static str {
    match format {
        Format::Jsonl => "One JSON object per line (also `ndjson`)",
        Format::Json => "A JSON array of objects",
        Format::Csv => "Comma- or tab-separated values with a header row (also `tsv`)",
        Format::Xlsx => "An Excel workbook (--sheet)",
        Format::OpenInference => {
            "OpenInference spans as Phoenix exports them: one sample per trace and per hop"
        }
        Format::Langfuse => {
            "A Langfuse export of traces and observations: one sample per trace and per hop"
        }
        Format::Parquet => "Apache Parquet, streamed",
        Format::Arrow => {
            "Arrow IPC (file or stream layout; Feather v2), streamed (also `arrows`, `feather`, \
             `ipc`)"
        }
    }
}
