//! Judge ordering of retrieved contexts, retriever-versus-judge agreement, and
//! reference-answer planning: seed S3's pipeline without its sequential cost.
//!
//! - [`judges`]: the traits the typed judge tasks implement ([`Grader`], [`BatchGrader`],
//!   [`Comparator`], [`ListOrderer`], [`PromptSize`], together [`RankJudge`]; [`Answerer`])
//!   and what they answer ([`Grade`], [`Preference`], [`ContextAnswer`]).
//! - [`ranking`]: [`rank`] — grade every context 0–3 (in batches), then order the useful
//!   ones by windows ordered in two presentation orders and Bradley–Terry in ≤ 3 rounds, by
//!   both-order pairwise comparisons, or by the seed's binary insertion for comparison;
//!   [`Ranking`] keeps every answer.
//! - [`agreement`]: [`retriever_agreement`] — Spearman, Kendall τ-b, top-k overlap, RBO,
//!   nDCG@k and AP of the retriever's order against the judge's — and [`summarize`].
//! - [`gold`]: [`gold_agreement`] — AUROC, nDCG@k and AP of the judge's and the retriever's
//!   orders against gold labels, when the data has them.
//! - [`mod@reference`]: [`generate_reference`] — slow or fast reference answers that never send
//!   a prompt over the window — and the `GT_` / `FULL_` file names and shapes.
//! - [`packing`]: splitting texts and packing items into groups that fit a prompt window.
//! - [`simulation`]: a simulated judge with a known truth, to measure the algorithms.
//! - [`task_judge`]: the traits implemented by `rageval_tasks::TaskJudge` (and
//!   [`TaskAnswerer`]), so that real calls go through the judge pipeline.
//! - [`error`]: the crate's one error type, [`RankError`].
//!
//! This crate decides which judge calls to make; prompts, parsing, caching, rate limits and
//! retries belong to the tasks and `rageval-judge` underneath. It does no I/O and never
//! prints.

pub mod agreement;
mod concurrency;
pub mod error;
pub mod gold;
pub mod judges;
pub mod packing;
pub mod ranking;
pub mod reference;
mod seeded;
pub mod simulation;
pub mod task_judge;

pub use agreement::{AgreementSummary, RetrieverAgreement, retriever_agreement, summarize};
pub use concurrency::DEFAULT_MAX_IN_FLIGHT;
pub use error::RankError;
pub use gold::{GoldAgreement, GoldFigures, GoldSummary, gold_agreement, summarize_gold};
pub use judges::{
    Answerer, BatchGrader, CallError, CallRecord, Comparator, ContextAnswer, Grade, Grader,
    ListCall, ListOrderer, Preference, PromptSize, RankJudge,
};
pub use ranking::listwise::{ListwiseSettings, WindowOrder};
pub use ranking::{Algorithm, CallCounts, ContextGame, RankSettings, Ranking, rank};
pub use reference::{Reference, ReferenceMode, ReferenceSettings, generate_reference};
pub use task_judge::TaskAnswerer;
