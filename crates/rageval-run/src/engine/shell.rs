//! The session shell every judged command's work runs in: a runtime, Ctrl-C tied to the
//! chat judges so their calls in flight abort, the work raced against the cancel token
//! (`until_cancelled`), and how the session then ends (`end`): its work done, stopped
//! resumably (the session recorded with its reason), or failed (`failed`).
//!
//! One rule for a session that fails, in every command: a run directory that holds what a
//! judge was paid for — an earlier session's journal, units this session journaled after a
//! model answered, batch jobs sent — or any journaled unit when the disk filled (the run
//! resumes once space is freed) is kept, unfinished, with the session recorded as failed
//! where the disk still allows; a directory this run made new holds nothing worth keeping
//! and is removed (only the run's own files when the directory was there before).
//!
//! The shell knows no command: what the work is and what it journals are the caller's.

use std::future::Future;

use rageval_judge::{CancelToken, Judge, Models};
use rageval_report::{Manifest, RunDir, SessionEnd};

use crate::engine::ended::Stopped;
use crate::engine::error::{Result, RunError};
use crate::engine::files::remove_if_present;
use crate::engine::judges::Stop;
use crate::engine::observe::Observer;
use crate::engine::session::SessionOpen;

/// A multi-threaded runtime for one command's judge calls.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(RunError::Runtime)
}

/// Runs `work` to its end on a fresh runtime, or until `cancel` trips: `None` when
/// cancelled. While it runs, a cancel also cancels each of `chats`, so a call in flight
/// returns at once instead of after the model's answer.
pub(crate) fn until_cancelled<T>(
    cancel: &CancelToken,
    chats: impl IntoIterator<Item = Option<Judge<Models>>>,
    work: impl Future<Output = T>,
) -> Result<Option<T>> {
    let runtime = runtime()?;
    let _cancel_chats: Vec<_> = chats
        .into_iter()
        .flatten()
        .map(|chat| runtime.spawn(cancel_on(cancel.clone(), chat)))
        .collect();
    Ok(runtime.block_on(async {
        tokio::select! {
            result = work => Some(result),
            _ = cancel.cancelled() => None,
        }
    }))
}

/// Waits for `cancel`, then cancels `chat` so its calls in flight abort.
async fn cancel_on(cancel: CancelToken, chat: Judge<Models>) {
    cancel.cancelled().await;
    chat.cancel();
}

/// A session's run directory as its ending sees it.
pub(crate) struct Books<'s, 'a> {
    pub run: &'s RunDir,
    /// The manifest the session is recorded in.
    pub manifest: &'s mut Manifest,
    pub session: &'s SessionOpen<'a>,
    /// Whether an earlier session's journal is in the directory.
    pub resumed: bool,
    /// The command's files besides the manifest, `results.jsonl` and `summary.json` (its
    /// own journals, what it writes as it goes): removed with a failed new run.
    pub own_files: &'s [&'s str],
    /// Answers paid for outside the journal: batch jobs sent (`eval --batch`).
    pub paid_elsewhere: bool,
}

/// What a session did, in units its words name.
pub(crate) struct Tally {
    /// Units journaled in this session.
    pub done: usize,
    /// Units left for the next session.
    pub left: usize,
    /// What the units are called (`cells`, `judgements`, `questions`, `items`).
    pub unit: &'static str,
}

/// Ends a session after its work, the same way in every command. `ended` is what
/// [`until_cancelled`] returned: `None` when cancelled, else the work's result — `Ok` with
/// the stop the work itself made (requests exported), or its error. `stop_now` is the stop
/// in force after the work (a cap, a halted judge, the cancel).
///
/// - done without a stop: `Ok(None)`, for the caller to finish the run;
/// - stopped: the session recorded with its reason, `Ok(Some(stopped))`. An error that
///   came back while a stop was in force is the stop's (a call the stop refused);
/// - failed: [`failed`], and the error.
pub(crate) fn end(
    ended: Option<Result<Option<Stop>>>,
    stop_now: Option<Stop>,
    books: Books<'_, '_>,
    tally: Tally,
    observer: &dyn Observer,
) -> Result<Option<Stopped>> {
    let stop = match ended {
        None => None,
        Some(Ok(own)) => match stop_now.or(own) {
            None => return Ok(None),
            stop => stop,
        },
        Some(Err(error)) if stop_now.is_none() => {
            return Err(failed(error, books, tally.done, tally.unit, observer));
        }
        Some(Err(_)) => stop_now,
    };
    let stop = stop_or_cancelled(stop);
    let (end, reason) = session_end(&stop);
    let footer = books
        .session
        .stop(books.run, books.manifest, end, reason, tally.done)?;
    Ok(Some(Stopped::new(
        stop,
        footer,
        books.run.path(),
        tally.done,
        tally.left,
        tally.unit,
    )))
}

/// Ends a session that failed with `error` after `journaled` units of `unit`, by the rule
/// of this module: kept and recorded as failed when the directory holds what a judge was
/// paid for, else removed. Returns `error`; what could not be recorded or removed is told.
pub(crate) fn failed(
    error: RunError,
    books: Books<'_, '_>,
    journaled: usize,
    unit: &str,
    observer: &dyn Observer,
) -> RunError {
    let disk_full = rageval_core::files::caused_by_disk_full(&error);
    let worth_keeping = journaled > 0 && (books.session.asked_a_model() || disk_full);
    if keeps(books.resumed, books.paid_elsewhere, worth_keeping) {
        let recorded = books.session.stop(
            books.run,
            books.manifest,
            SessionEnd::Failed,
            error.to_string(),
            journaled,
        );
        match recorded {
            Ok(_) => observer.note(format!(
                "the run stays incomplete: its finished {unit} are kept"
            )),
            Err(record) => observer.note(format!("could not record the failed session: {record}")),
        }
    } else if let Err(cleanup) = remove_new_run(books.run, books.own_files) {
        observer.note(format!("could not remove the partial run: {cleanup}"));
    }
    error
}

/// Whether a failed session's directory is kept: it was resumed (an earlier session's
/// journal is in it), batch jobs were sent, or this session journaled units worth keeping
/// (what a model answered, or anything when the disk filled).
fn keeps(resumed: bool, paid_elsewhere: bool, journaled_worth_keeping: bool) -> bool {
    resumed || paid_elsewhere || journaled_worth_keeping
}

/// Removes what a new run wrote: the directory when the run made it, else the run's files
/// and the command's `own_files`, each that can be (the first failure is returned).
fn remove_new_run(run: &RunDir, own_files: &[&str]) -> Result<()> {
    let mut first_failure = None;
    for file in own_files {
        if let Err(error) = remove_if_present(&run.path().join(file)) {
            first_failure.get_or_insert(error);
        }
    }
    run.abandon()?;
    first_failure.map_or(Ok(()), Err)
}

/// The stop that left the work unfinished: the one in force, else the caller's cancel (the
/// shell saw the cancel token trip).
fn stop_or_cancelled(stop: Option<Stop>) -> Stop {
    stop.unwrap_or(Stop::Cancelled)
}

/// How a stop is recorded in the session list.
fn session_end(stop: &Stop) -> (SessionEnd, String) {
    match stop {
        Stop::Cancelled => (SessionEnd::Interrupted, "interrupted (Ctrl-C)".into()),
        Stop::CapReached(cap) => (SessionEnd::CapReached, format!("judge cap reached: {cap}")),
        Stop::JudgeUnavailable(halt) => (SessionEnd::JudgeUnavailable, halt.to_string()),
        Stop::RequestsExported { files, requests } => (
            SessionEnd::RequestsExported,
            format!("{requests} requests written to {} file(s)", files.len()),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one rule: a failed run is kept when it holds something paid for, and only then.
    #[test]
    fn a_failed_run_is_kept_exactly_when_it_holds_what_a_judge_was_paid_for() {
        assert!(
            !keeps(false, false, false),
            "a new run with nothing paid is removed"
        );
        assert!(
            keeps(true, false, false),
            "a resumed run keeps its earlier journal"
        );
        assert!(keeps(false, true, false), "batch jobs sent are paid for");
        assert!(
            keeps(false, false, true),
            "answers journaled in this session are paid for"
        );
    }
}
