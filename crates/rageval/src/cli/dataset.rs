//! How a dataset file is read, declared once for every command that reads one.

use clap::{Args, ValueEnum};

/// How a dataset file is read — its format, the columns its fields are in, the sheet —
/// declared once for every command that reads one (`eval`, `collect`'s questions, `rank`,
/// `reference`, `pipeline`).
#[derive(Debug, Args)]
pub struct DatasetArgs {
    /// Map a field to a column of the data, e.g. `--map question=prompt` (repeatable).
    #[arg(long = "map", value_name = "FIELD=COLUMN")]
    pub field_map: Vec<String>,

    /// The dataset's format, when its extension does not say it. Trace exports, one sample
    /// per trace, are read only when named: `openinference` (Phoenix spans), `langfuse`.
    #[arg(long, value_enum)]
    pub format: Option<DataFormat>,

    /// The XLSX sheet to read (default: the first).
    #[arg(long)]
    pub sheet: Option<String>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum DataFormat {
    Jsonl,
    Json,
    Csv,
    Xlsx,
    /// OpenInference spans as Phoenix exports them: one sample per trace
    #[value(name = "openinference")]
    OpenInference,
    /// A Langfuse export of traces and observations: one sample per trace
    Langfuse,
    /// Apache Parquet, streamed
    Parquet,
    /// Arrow IPC (file or stream layout; Feather v2), streamed
    Arrow,
}
