//! How a judged command ends when no error stops it: complete, or stopped resumably by
//! Ctrl-C, a judge cap or a judge that does not answer. Exit codes are the binary's to
//! choose from this.

use std::path::Path;

use crate::engine::judges::Stop;

/// The end of a command.
#[derive(Debug)]
pub enum Ended<T> {
    /// Every unit is done; the run directory is complete.
    Complete(T),
    /// Stopped before its work was done; running the same command again resumes it.
    Stopped(Stopped),
}

/// A run stopped resumably.
#[derive(Debug, Clone, PartialEq)]
pub struct Stopped {
    /// Why.
    pub stop: Stop,
    /// What the judge was asked in this session (and over the whole run).
    pub footer: String,
    /// What happened and how to go on, for the person who ran it.
    pub message: String,
}

impl Stopped {
    /// The stop of a run in `path` that journaled `done` units (of `unit`, e.g. "cells")
    /// in this session and left `left` for the next.
    pub fn new(
        stop: Stop,
        footer: String,
        path: &Path,
        done: usize,
        left: usize,
        unit: &str,
    ) -> Self {
        let path = path.display();
        let journaled = crate::engine::words::counted_were(done, unit);
        let left = crate::engine::words::counted_are(left, unit);
        let message = match &stop {
            Stop::Cancelled => format!(
                "interrupted: {journaled} journaled in {path}; run the same command again \
                 to resume"
            ),
            Stop::CapReached(cap) => format!(
                "stopped: judge cap reached: {cap}. {journaled} journaled in this session; \
                 {left} left for the next one (none was started after the cap was reached, and \
                 any the cap cut short is among them). {path} stays resumable: run the same \
                 command again, with a larger cap or none, to continue."
            ),
            Stop::RequestsExported { files, requests } => {
                let files: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
                format!(
                    "stopped: the next stage's {requests} judge requests were written to {}. \
                     {journaled} journaled in this session; {left} waiting for those \
                     answers. Answer each file (e.g. `vllm run-batch -i FILE -o ANSWERS \
                     --model MODEL`), then run the same command with --import-responses \
                     ANSWERS… to go on; {path} stays resumable.",
                    files.join(", ")
                )
            }
            Stop::JudgeUnavailable(halt) => format!(
                "stopped: {halt}. {journaled} journaled in this session; {left} left for \
                 the next one; what the judge did not answer is not recorded as a finding. \
                 {path} stays resumable: once the judge answers (check the endpoint, model and \
                 credentials), run the same command again (with --retry-failed to redo any \
                 that failed before the stop)."
            ),
        };
        Stopped {
            stop,
            footer,
            message,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rageval_judge::Cap;

    /// Issue 39, item 10: a cap that stopped a run before any question was journaled said
    /// "0 questions were journaled in this session and 20 left for the next one (no further
    /// one was started; those in flight finished)": ill-formed, and the questions in flight
    /// had not finished — the cap cut them short and they are left for the next session.
    #[test]
    fn regression_issue_39_the_cap_stop_says_what_is_left_in_good_form() {
        let stopped = Stopped::new(
            Stop::CapReached(Cap::Calls(3)),
            String::new(),
            Path::new("runs/rank"),
            0,
            20,
            "questions",
        );
        assert_eq!(
            stopped.message,
            "stopped: judge cap reached: max calls 3. 0 questions were journaled in this \
             session; 20 questions are left for the next one (none was started after the cap \
             was reached, and any the cap cut short is among them). runs/rank stays \
             resumable: run the same command again, with a larger cap or none, to continue."
        );
        let one = Stopped::new(
            Stop::CapReached(Cap::Calls(3)),
            String::new(),
            Path::new("ts"),
            1,
            1,
            "items",
        );
        assert!(
            one.message
                .contains("1 item was journaled in this session; 1 item is left for the next"),
            "{}",
            one.message
        );
    }
}
