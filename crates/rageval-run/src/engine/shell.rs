//! The session shell every judged command's work runs in: a runtime, Ctrl-C tied to the
//! chat judges so their calls in flight abort, the work raced against the cancel token
//! ([`until_cancelled`]), and how a stop is written in the session list ([`session_end`]).
//!
//! The shell knows no command: what the work is, what it journals and how a command
//! records its session are the caller's.

use std::future::Future;

use rageval_judge::{CancelToken, Judge, Models};
use rageval_report::SessionEnd;

use crate::engine::error::Result;
use crate::engine::judges::Stop;

/// Runs `work` to its end on a fresh runtime, or until `cancel` trips: `None` when
/// cancelled. While it runs, a cancel also cancels each of `chats`, so a call in flight
/// returns at once instead of after the model's answer.
pub(crate) fn until_cancelled<T>(
    cancel: &CancelToken,
    chats: impl IntoIterator<Item = Option<Judge<Models>>>,
    work: impl Future<Output = T>,
) -> Result<Option<T>> {
    let runtime = crate::runtime()?;
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

/// How a stop is recorded in the session list.
pub(crate) fn session_end(stop: &Stop) -> (SessionEnd, String) {
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
