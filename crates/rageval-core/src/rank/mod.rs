//! Rank metrics that need no model: the exact arithmetic behind context precision, trec-style
//! cut-off measures, nDCG, rank correlations and ranking overlap.
//!
//! - [`precision`]: average precision over judged verdicts — exact, ragas's float, seed S2's
//!   strict variant — and seed S0's mean top-k hit rate.
//! - [`cutoff`]: P@k, recall@k, hit@k, reciprocal rank and R-precision (trec_eval semantics).
//! - [`graded`]: DCG and nDCG with linear or exponential gain.
//! - [`correlation`]: Spearman's ρ and Kendall's τ-b with ties.
//! - [`overlap`]: seed S3's top-k overlap and rank-biased overlap.
//! - [`context`]: ragas's ID- and string-based context precision and recall.
//! - [`ids`]: retrieved ids judged against gold ids, a repeated id counted once.
//!
//! Every function is pure: no I/O, no model, no panic on any input. An undefined value is
//! `None`, never NaN. Sorting runs by score and averaging over queries belong to
//! [`crate::trec`] and `rageval-metrics`.

pub mod context;
pub mod correlation;
pub mod cutoff;
pub mod graded;
pub mod ids;
pub mod overlap;
pub mod precision;

pub use context::{
    StringMatch, id_context_precision, id_context_recall, string_context_precision,
    string_context_recall,
};
pub use correlation::{kendall_tau_b, spearman};
pub use cutoff::{hit_at_k, precision_at_k, r_precision, recall_at_k, reciprocal_rank};
pub use graded::{Gain, dcg_at_k, ndcg_at_k};
pub use ids::{IdRelevance, id_relevance};
pub use overlap::{Rbo, TopKOverlap, rank_biased_overlap, top_k_overlap};
pub use precision::{
    RAGAS_EPSILON, average_precision, average_precision_ragas, average_precision_strict,
    mean_hit_rate,
};
