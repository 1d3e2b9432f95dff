//! The regression gate's arguments of `rageval compare BASELINE CANDIDATE`.

use std::path::PathBuf;

use clap::Args;

/// `compare --gate` and what goes with it.
#[derive(Debug, Args)]
#[command(next_help_heading = "Regression gate (two runs: baseline, then candidate)")]
pub struct CompareGateArgs {
    /// Gate the candidate (the second run) against the baseline (the first): exit 1 only
    /// when a gated metric is significantly worse — its paired 95% interval entirely below
    /// zero and its p-value, Holm-corrected across the gated metrics, under the level
    /// (0.05) — and worse by more than its minimal effect; otherwise exit 0, saying "no
    /// significant change" or "improved: …". SPEC: `metric=minimal effect` values
    /// (`faithfulness=0.02,answer_relevance=0.03`) or a TOML file with `level`,
    /// `on_mismatch` ("warn" or "refuse") and a `[minimal_effect]` table. See docs/ci.md
    #[arg(long, value_name = "SPEC")]
    pub gate: Option<String>,

    /// Refuse to gate (exit 2) when the two runs were judged differently (judge model,
    /// prompt versions, settings) or on different questions. Default: say so and gate
    /// (or the file's `on_mismatch`)
    #[arg(long, requires = "gate")]
    pub gate_strict: bool,

    /// A `pairwise` run of the baseline (its first version) against the candidate (its
    /// second): the candidate's head-to-head win rate is gated too — its interval below
    /// 0.5 and its sign test, Holm-corrected with the metrics, by more than the minimal
    /// effect `head_to_head=…` (default 0)
    #[arg(long, value_name = "DIR", requires = "gate")]
    pub gate_pairwise: Option<PathBuf>,

    /// Write the gate as a Markdown pull-request comment, its first line the hidden marker
    /// `<!-- rageval-gate -->` (so a CI step updates one comment instead of adding one per
    /// push): the verdict, each gated metric's Δ with interval, p and Holm p, the
    /// head-to-head line, the samples that moved most, the candidate's judge calls and cost
    #[arg(long, value_name = "PATH", requires = "gate")]
    pub comment: Option<PathBuf>,

    /// The link the comment gives for the reports (a CI artifact's page). Default: the
    /// candidate run's report paths
    #[arg(long, value_name = "URL", requires = "comment")]
    pub report_url: Option<String>,
}
