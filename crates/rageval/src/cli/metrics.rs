//! `rageval metrics` (the list, or one metric explained) and `rageval trec`.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use rageval_run::LocalJudge;

#[derive(Debug, Args)]
pub struct MetricsArgs {
    #[command(subcommand)]
    pub action: Option<MetricsAction>,
}

#[derive(Debug, Subcommand)]
pub enum MetricsAction {
    /// Print one metric's inputs, formula and source.
    Explain {
        /// A metric name or alias.
        name: String,
        /// A checker model folder (`checker:DIR`): also say which of the metric's tasks it
        /// would answer, with its family and weights' SHA-256
        #[arg(long = "judge", value_name = "checker:DIR", value_parser = str::parse::<LocalJudge>)]
        judge: Option<LocalJudge>,
    },
}

/// Arguments of `rageval trec`.
#[derive(Debug, Clone, Args)]
pub struct TrecArgs {
    /// Relevance judgments: `qid iter docno rel` per line
    pub qrels: PathBuf,
    /// Ranked results: `qid Q0 docno rank score run_id` per line
    pub run: PathBuf,
    /// Measure to compute, as in trec_eval (`map`, `P.5,10`, `ndcg_cut.10`, `all_trec`);
    /// repeatable; default `official`
    #[arg(short = 'm', long = "measure", value_name = "MEASURE")]
    pub measures: Vec<String>,
    /// Also print every measure for each topic
    #[arg(short = 'q', long = "per-query")]
    pub per_query: bool,
    /// Average over all topics in the qrels; topics without results score 0 (without -c
    /// they are skipped, as pytrec_eval does; trec_eval 10.0 stops with an error instead)
    #[arg(short = 'c', long = "complete")]
    pub complete: bool,
    /// Lowest relevance value counted as relevant
    #[arg(
        short = 'l',
        long = "level",
        value_name = "LEVEL",
        default_value_t = 1,
        allow_hyphen_values = true
    )]
    pub rel_level: i64,
    /// Keep only the top N documents of each topic
    #[arg(short = 'M', long = "max-docs", value_name = "N")]
    pub max_docs: Option<usize>,
    /// Print full-precision values as JSON (`{"queries": {qid: {measure: value}}, "summary":
    /// {…}}`) instead of trec_eval's 4-decimal text
    #[arg(long)]
    pub json: bool,
}
