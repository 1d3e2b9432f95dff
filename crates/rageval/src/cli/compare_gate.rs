//! The regression gate's arguments of `rageval compare BASELINE CANDIDATE`.

use std::path::PathBuf;

use clap::Args;

use super::values::at_least_one;

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

    /// Before failing, judge again the candidate cells that drove the regression (on each
    /// regressed metric, the paired samples whose score fell) K times each, without the
    /// cache, with the judge the judge flags, the environment and rageval.toml give (the
    /// candidate's judge settings); each cell's repeats come to their median (the majority
    /// of pass/fail scores), and the gate decides again on the confirmed scores: exit 1
    /// only when it still fails. --max-calls and --max-cost cap the repeats (exit 3, the
    /// same command resumes them); a judge that never answers exits 4. Needs --confirm-out
    #[arg(
        long,
        value_name = "K",
        requires_all = ["gate", "confirm_out"],
        value_parser = at_least_one::<u32>
    )]
    pub confirm: Option<u32>,

    /// Where --confirm keeps what it asks and gets: the samples asked again
    /// (`asked.jsonl`), the repeats' eval run (`repeats/`) and each cell's repeats and
    /// confirmed score (`confirmed.jsonl`). Never inside the candidate run, which the gate
    /// does not write
    #[arg(long, value_name = "DIR", requires = "confirm")]
    pub confirm_out: Option<PathBuf>,

    /// With --confirm: gate, then say how many judge calls confirming would make, sending
    /// none and writing nothing (exit 0)
    #[arg(long, requires = "confirm")]
    pub dry_run: bool,
}
