//! Run directories: where a run's results live, in a shape other tools can read, and the
//! reports people read.
//!
//! A run directory holds `manifest.json` (what ran, on which data, with which settings),
//! `results.jsonl` (the journal: one line per sample × metric, appended as results arrive)
//! and `summary.json` (per metric: mean, counts of scored / undefined / failed samples and
//! a seeded bootstrap 95% interval; an abstention metric's 2×2 table and rates; per-conversation
//! figures when the samples are turns of conversations, per-hop ones when rows are retrieval
//! hops). `summary.json` is written last and atomically, and the
//! manifest says `"status": "complete"` only then, so a directory left by a crash never looks
//! finished. Beside them, the human files: `report.html` (one self-contained page),
//! `report.md` and `results.xlsx`.
//!
//! - [`RunDir`]: creates, finishes or abandons a run directory, holding its [`RunLock`]
//!   (one writer at a time) while it lives.
//! - [`Manifest`], [`ResultRecord`], [`Summary`]: the files' contents.
//! - [`Aggregator`]: turns outcomes into a [`Summary`].
//! - [`JudgeAccount`], [`Session`]: what the judge was asked, per `eval` session (in the
//!   manifest) and summed (in the summary).
//! - [`Agreement`]: a `judge-check` run's `agreement.json` (figures with intervals, counts,
//!   one verdict per item, stability); [`AgreementDelta`] two judges on the same labels.
//! - [`RankAgreementRow`], [`RANK_AGREEMENT_FILE`]: a `rank` / `pipeline` run's
//!   retriever-versus-judge figures per question (`rank_agreement.jsonl`), shown in every
//!   human file ([`render_rank_agreement`]).
//! - [`folder_kind`], [`RunKind`]: what a folder is — a run directory of a scored run or of
//!   a `rank`, `reference`, `testset` or `pairwise` run, or a `pipeline` folder
//!   ([`PIPELINE_STAGES`]); [`locate_run`]: where a folder given as a scored run has it
//!   ([`RunFolder`]: itself, or a pipeline's `eval/`); a stage run is refused, naming its
//!   pipeline's `eval` run.
//! - [`read_run`]: any finished run read as what it is ([`AnyRun`]): a scored run, or a
//!   stage run with its figures ([`StageData`], [`StageFigures`]). Every reader takes an
//!   [`OpenCheck`], asked before each file it opens (`rageval serve`'s root rule).
//! - [`RunInfo`]: a finished run read back but its journal, which [`JournalIndex`] reads in
//!   one streamed pass; [`write_reports`] writes the human files from the two, with texts
//!   from [`ReportTexts`] (the dataset streamed, never held whole), so their memory stays
//!   flat however many samples the run has. [`RunData`]: the run with its journal held
//!   whole, for pages and comparisons.
//! - [`render_html`], [`render_markdown`], [`write_xlsx`]: each human file alone;
//!   [`render_run_summary`], [`render_agreement`], [`render_sample_table`] and
//!   [`render_compare_body`] are pieces of the pages for other HTML (`rageval serve`), and
//!   [`html_document`] their shell.
//! - [`TaskJudgeRecord`]: which judge answered each judged metric's tasks and its measured
//!   agreement ([`judge_lines`]), shown beside the metric's score in every human file.
//! - [`Gate`]: `--fail-under` thresholds; [`render_junit`] the CI report of a gate.
//! - [`RegressionGate`]: `compare BASELINE CANDIDATE --gate` — fails only where a gated
//!   metric (or the head-to-head win rate of a pairwise run) is significantly worse,
//!   Holm-corrected, by more than its minimal effect ([`GateSpec`]); says when the runs were
//!   judged differently and how old the baseline is. [`render_gate_comment`] writes it as
//!   the pull-request comment, marked for updating in place. [`dropped_cells`] are the
//!   candidate cells that drove a regression, which `--confirm` has judged again
//!   ([`ConfirmedCell`], [`GateConfirmation`]).
//! - [`PairwiseSummary`], [`PairwiseQuestion`]: a `pairwise` run's `summary.json` and its
//!   journal `pairwise.jsonl` (versions' answers judged head to head, both seat orders);
//!   [`render_pairwise_markdown`], [`render_pairwise_html`] (one list of blocks rendered
//!   twice) and [`write_pairwise_xlsx`] its human files; [`PairwiseSummary::versions_of_runs`]
//!   which of its versions is which compared run, and [`Comparison::add_head_to_head`] each
//!   version's result against the first on the version table (`compare --pairwise`).
//! - [`Comparison`]: the version table of two or more runs — system versions over the same
//!   questions, samples paired by id and question ([`Pairing`]) — with paired statistics
//!   per metric; [`write_compare_xlsx`] writes it as a workbook.
//! - [`read_run_samples`]: a finished run's dataset read back (when it still hashes as
//!   recorded) for the texts reports and comparisons show.
//! - [`render_summary_table`]: the summary as a text table for a terminal.
//! - [`write_results_parquet`]: `results.jsonl` as `results.parquet` for Spark or pandas.
//! - `testing` (hidden from the docs): writes complete run directories for tests.
//!
//! This crate knows no model and no metric formula; it stores and shows what metrics
//! return. Parsing datasets is `rageval-core`'s job: writers take the samples as given, and
//! [`read_run_samples`] only calls core's reader with the options a run recorded.

mod abstention_render;
mod accounting;
mod agreement;
mod agreement_render;
mod blocks;
mod calibrated;
mod calibrated_render;
mod compare;
mod compare_head_to_head;
mod compare_pairing;
mod compare_positions;
mod compare_render;
mod compare_xlsx;
mod conversations;
mod error;
mod escape;
mod gate;
mod gate_comment;
mod gate_confirm;
mod gate_spec;
mod hops;
mod html;
mod journal;
mod journal_index;
mod judge_agreement;
mod judge_report;
mod manifest;
mod markdown;
mod outcome_text;
mod page;
mod pairwise;
mod pairwise_render;
mod pairwise_xlsx;
mod rank_agreement;
mod rank_agreement_render;
mod reader;
mod regression_gate;
mod report_samples;
mod report_texts;
mod reports;
mod results_parquet;
mod run_dir;
mod run_folder;
mod run_lock;
mod run_samples;
mod stage_run;
mod summary;
mod svg;
mod table;
// Compiled in every build, not behind a feature for other crates' tests: a feature the test
// build turns on and the binaries' build does not made CI compile this crate and the three
// above it twice.
#[doc(hidden)]
pub mod testing;
mod time;
mod xlsx;

pub use accounting::{
    CallTally, JudgeAccount, JudgeModel, JudgeUsage, ModelPrice, RequestFormRecord, RungTally,
    Session, SessionEnd, TaskTally,
};
pub use agreement::{
    AGREEMENT_FILE, Agreement, AgreementDelta, AgreementFigure, FigureDelta, ItemLabel, ItemResult,
    ItemVerdict, LabelShape, NOTE_CROSS_VALIDATED, NOTE_THRESHOLD, NOTE_WARNING, Stability,
    UnstableItem, VerdictChange, chance_level,
};
pub use agreement_render::render_agreement;
pub use calibrated::Calibrated;
pub use calibrated_render::{
    CALIBRATED_COLUMNS, calibrated_html, calibrated_markdown, calibrated_rows,
};
pub use compare::{
    CalibratedDelta, CompareSettings, Comparison, MetricDelta, PairComparison, Reading, RunRow,
    SampleFlip,
};
pub use compare_head_to_head::head_to_head_text;
pub use compare_pairing::{DataDifferences, Pairing, pair_datasets};
pub use compare_positions::{
    ConversationDelta, ConversationMetricDelta, ConversationMove, HopDelta, HopMetricDelta,
};
pub use compare_render::{
    compare_title, render_compare_body, render_compare_html, render_compare_markdown,
};
pub use compare_xlsx::{AGREEMENT_SHEET, VERSIONS_SHEET, write_compare_xlsx};
pub use conversations::{ConversationMetric, ConversationSummary, ConversationTally, LapseShare};
pub use error::{ReportError, error_chain};
pub use escape::{escape_html, escape_markdown_cell};
pub use gate::{FailingSample, Gate, GateCheck, GateOutcome, Threshold, render_junit};
pub use gate_comment::{
    GATE_COMMENT_MARKER, MOVED_SAMPLES_SHOWN, ReportLocation, render_gate_comment,
};
pub use gate_confirm::{
    ConfirmedCell, DroppedCell, GateConfirmation, apply_confirmed, dropped_cells,
};
pub use gate_spec::{DEFAULT_GATE_LEVEL, GateSpec, HEAD_TO_HEAD, MinimalEffect, OnMismatch};
pub use hops::{HopFigure, HopMetric, HopSummary, HopTally, HopUse};
pub use html::{render_html, render_run_summary, render_sample_table};
pub use journal::{JournalWriter, ResultRecord, SCORE_RANGE, in_score_range, shown_score};
pub use journal_index::{JournalIndex, OutcomeReader, Outcomes, SampleOutcomes};
pub use judge_agreement::{
    CHANCE, INCLUDES_CHANCE, UNMEASURED, headline, includes_chance, judge_lines, render_judge_lines,
};
pub use judge_report::cascade_line;
pub use manifest::{
    DatasetInfo, Manifest, MeasuredFigure, MetricRecord, RUN_FORMAT_VERSION, RunStatus,
    TaskJudgeRecord, ToolInfo,
};
pub use markdown::render_markdown;
pub use page::html_document;
pub use pairwise::{
    AnswerLength, PAIRWISE_COMMAND, PAIRWISE_FILE, PairVerdicts, PairwiseQuestion, PairwiseSummary,
    PairwiseVersion, SeatVerdict, VersionPair, VersionStrength, read_pairwise_questions,
};
pub use pairwise_render::{
    FLIPS_SHOWN, pairwise_line, render_pairwise_body, render_pairwise_html,
    render_pairwise_markdown,
};
pub use pairwise_xlsx::{
    HEAD_TO_HEAD_SHEET, HEAD_TO_HEAD_SHEET_COLUMNS, PairwiseAnswers, VERDICTS_SHEET,
    VERDICTS_SHEET_COLUMNS, write_pairwise_xlsx,
};
pub use rank_agreement::{
    FIGURE_NAMES, FigureMean, RANK_AGREEMENT_FILE, RankAgreementRow, RankAgreementSummary,
    read_rank_agreement,
};
pub use rank_agreement_render::{
    MEAN_ROW_LABEL, RANK_AGREEMENT_SHEET_COLUMNS, rank_figure_label, render_rank_agreement,
};
pub use reader::{OpenCheck, RunData, RunInfo, any_file, read_manifest, read_results};
pub use regression_gate::{
    BaselineAge, GateDecision, GateVerdict, GatedQuantity, GatedResult, HeadToHeadCounts,
    RegressionGate, judging_differences, result_line,
};
pub use report_samples::{EVERY_SAMPLE_UP_TO, ReportSamples, report_samples};
pub use report_texts::ReportTexts;
pub use reports::{HTML_FILE, MARKDOWN_FILE, XLSX_FILE, write_reports};
pub use results_parquet::{RESULTS_PARQUET_FILE, write_results_parquet};
pub use run_dir::{MANIFEST_FILE, RESULTS_FILE, RunDir, SUMMARY_FILE, sha256_bytes, sha256_file};
pub use run_folder::{
    FolderKind, PIPELINE_DATASET_FILE, PIPELINE_EVAL_DIR, PIPELINE_RANK_DIR,
    PIPELINE_REFERENCE_DIR, PIPELINE_STAGES, RunFolder, RunKind, folder_kind, locate_run,
    manifest_command, pipeline_of_eval,
};
pub use run_lock::{LOCK_FILE, RunLock};
pub use run_samples::{locate_dataset, open_run_dataset, read_dataset_of, read_run_samples};
pub use stage_run::{
    AnyRun, PairwiseFigures, RankFigures, ReferenceFigures, StageData, StageFigures,
    TestsetFigures, read_run, read_run_info,
};
pub use summary::{AbstentionSummary, Aggregator, MetricSummary, Summary};
pub use svg::{IntervalRow, histogram, interval_chart};
pub use table::{aligned, render_summary_table};
pub use time::{unix_now, utc_timestamp};
pub use xlsx::{REASON_SUFFIX, RESULTS_SHEET_COLUMNS, SAMPLES_SHEET_COLUMNS, write_xlsx};
