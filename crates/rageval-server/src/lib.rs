//! `rageval serve`: a web UI and a JSON API over a directory of run directories — list the
//! runs, open one's report, filter its samples by a metric's range, compare runs — for
//! people who would rather click than read JSON.
//!
//! - [`app`]: every route as an axum `Router` over an [`AppState`] (tests call it with
//!   `oneshot`, no socket); [`Server`] binds a socket and serves it.
//! - [`RunsRoot`]: the one way a name from a request becomes a path (no `..`, no absolute
//!   paths), and the root rule every file the server opens passes (no symlinks out of the
//!   root); it reads each kind of run as what it is (`rageval-report`'s `folder_kind`).
//! - [`HostRule`]: the `Host` (and, for writes, `Origin`) every server of this crate
//!   answers: on loopback, loopback names at its own port only (no DNS rebinding).
//! - [`MAX_SAMPLES_PER_PAGE`], [`COMPARE_WORK_BUDGET`], [`READS_AT_ONCE`]: what one request
//!   may cost and how many read at once (`limits`).
//! - [`SampleFilter`]: which samples a page or the API shows.
//! - [`Token`], [`check_exposure`], [`ENV_SERVE_TOKEN`]: bearer-token access, required
//!   beyond loopback.
//! - [`label_server`]: `rageval label`, a page on loopback where a person labels a seeded
//!   sample of a run's samples into a labels file for `judge-check` and `calibrate`.
//! - [`Testset`], [`ReviewFile`], [`Rates`], [`final_rows`]: a person's review of a
//!   generated test set (`rageval label TESTSET.jsonl`): decisions, rejection rates, the
//!   final set; [`review_server`], its page, which writes only its review file.
//!
//! Pages and answers show run names and relative paths, never where the machine's files
//! lie (`public`).
//!
//! `serve` only reads: it has no route that writes (the labelling page writes its labels
//! file and nothing else, the review page its review file), and it renders with `rageval-report`'s own renderers and
//! comparison, so a page shows the same numbers as the files and `rageval compare`. It
//! knows no model and no metric formula.

mod api;
mod app;
mod auth;
mod compare;
mod error;
mod filter;
mod host;
mod label;
mod label_app;
mod label_file;
mod label_page;
mod label_sample;
mod limits;
mod pages;
mod public;
mod query;
mod review;
mod review_app;
mod review_file;
mod review_page;
mod runs;

pub use app::{AppState, Server, app};
pub use auth::{ENV_SERVE_TOKEN, Token, check_exposure};
pub use error::ServerError;
pub use filter::{SampleFilter, StatusFilter};
pub use host::HostRule;
pub use label::{LabelError, LabelOptions, LabelScale, PageLanguage, default_labels_path};
pub use label_app::{LabelServer, LabelSessionInfo, label_server};
pub use limits::{
    COMPARE_WORK_BUDGET, MAX_SAMPLES_PER_PAGE, READS_AT_ONCE, RETRY_AFTER_SECONDS, SAMPLES_PER_PAGE,
};
pub use review::{
    Decision, Rates, RejectionRate, ReviewError, ReviewFile, ReviewItem, Testset,
    default_review_path, final_rows,
};
pub use review_app::{ReviewServer, ReviewSessionInfo, review_server};
pub use runs::{RunEntry, RunState, RunsRoot, check_name};
