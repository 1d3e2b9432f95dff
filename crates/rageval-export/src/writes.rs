//! What a writer did: how many items it wrote, how many failed (after the client's retries)
//! and why, and how many it left out. A failed write never fails the run it came from: the
//! local run directory is whole, and the same export can be run again later — every writer
//! here updates what it wrote before instead of adding it twice.
//!
//! `send_batches` is the loop every writer shares: batches go out one after another; once
//! a batch fails because nothing answers any more (the server died mid-run), the remaining
//! batches are counted as failed without waiting on each one's retries.

use std::future::Future;

use rageval_sources::SourceError;

/// Errors quoted in a [`Writes`], at most.
const MAX_ERRORS: usize = 3;

/// The tally of one export.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Writes {
    /// Items the server accepted.
    pub written: usize,
    /// Items not written: their request failed (after retries) or was never sent because
    /// the server had stopped answering.
    pub failed: usize,
    /// Items left out on purpose (a failed cell is not a score; a sample without a span id
    /// has nowhere to go), with why, per reason.
    pub skipped: Vec<(String, usize)>,
    /// The first few distinct errors, as messages with their causes.
    pub errors: Vec<String>,
}

impl Writes {
    /// Adds `count` items skipped for `reason`.
    pub fn skip(&mut self, reason: &str, count: usize) {
        if count == 0 {
            return;
        }
        match self.skipped.iter_mut().find(|(r, _)| r == reason) {
            Some((_, n)) => *n += count,
            None => self.skipped.push((reason.to_owned(), count)),
        }
    }

    /// Records `count` failed items and the error behind them.
    pub fn fail(&mut self, count: usize, error: &SourceError) {
        self.failed += count;
        let text = rageval_report::error_chain(error);
        if self.errors.len() < MAX_ERRORS && !self.errors.contains(&text) {
            self.errors.push(text);
        }
    }

    /// Items skipped, all reasons together.
    pub fn skipped_total(&self) -> usize {
        self.skipped.iter().map(|(_, n)| n).sum()
    }
}

/// What one batch's request did.
pub(crate) enum Sent {
    /// Every item written.
    All,
    /// Some items written, the others failed with the error (a batch split after a 404).
    Partly { written: usize, error: SourceError },
    /// The request failed.
    Failed(SourceError),
}

/// Sends `batches` (each with its item count) one after another through `send`.
pub(crate) async fn send_batches<T, F, Fut>(batches: Vec<(usize, T)>, mut send: F) -> Writes
where
    F: FnMut(T) -> Fut,
    Fut: Future<Output = Sent>,
{
    let mut writes = Writes::default();
    let mut gone: Option<SourceError> = None;
    for (items, batch) in batches {
        if let Some(error) = &gone {
            writes.fail(items, error);
            continue;
        }
        match send(batch).await {
            Sent::All => writes.written += items,
            Sent::Partly { written, error } => {
                writes.written += written;
                writes.fail(items - written.min(items), &error);
            }
            Sent::Failed(error) => {
                writes.fail(items, &error);
                if nothing_answers(&error) {
                    gone = Some(error);
                }
            }
        }
    }
    writes
}

/// Whether the error says the server is no longer there (as opposed to refusing one batch).
fn nothing_answers(error: &SourceError) -> bool {
    match error {
        SourceError::Transport { .. } | SourceError::Timeout { .. } => true,
        SourceError::RetriesExhausted { last, .. } => nothing_answers(last),
        SourceError::Status { status, .. } => (500..600).contains(status),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16) -> SourceError {
        SourceError::Status {
            endpoint: "http://127.0.0.1:1/x".into(),
            status: code,
            first_line: "no".into(),
            retry_after: None,
        }
    }

    #[tokio::test]
    async fn a_server_that_stops_answering_fails_the_rest_without_sending_them() {
        let mut sent = 0;
        let writes = send_batches(vec![(2, 0), (3, 1), (4, 2)], |batch| {
            sent += 1;
            async move {
                if batch == 0 {
                    Sent::All
                } else {
                    Sent::Failed(status(503))
                }
            }
        })
        .await;
        assert_eq!(sent, 2);
        assert_eq!((writes.written, writes.failed), (2, 7));
        assert_eq!(
            writes.errors,
            ["http://127.0.0.1:1/x answered http 503: no"]
        );
    }

    #[tokio::test]
    async fn a_refused_batch_does_not_stop_the_others() {
        let writes = send_batches(vec![(2, 0), (3, 1), (4, 2)], |batch| async move {
            match batch {
                1 => Sent::Failed(status(422)),
                2 => Sent::Partly {
                    written: 3,
                    error: status(404),
                },
                _ => Sent::All,
            }
        })
        .await;
        assert_eq!((writes.written, writes.failed), (5, 4));
        assert_eq!(writes.errors.len(), 2);
    }
}
