//! The judge behind a command's own tasks (`rank`, `reference`, `testset`, `collect`'s
//! baseline answers): the task router, and the refusal of a judge that cannot write when the
//! tasks need one.

use rageval_tasks::{TaskJudge, TaskKind};

use super::{JudgeOptions, JudgeSetup, LocalJudge};
use crate::engine::error::{Result, RunError};

/// Why a command that asks tasks itself cannot start: no judge answers them.
pub(crate) fn no_judge() -> RunError {
    RunError::Usage("no judge is configured".into())
}

impl JudgeSetup {
    /// The task router, in the run's language choice, or a usage error when no judge is
    /// configured.
    pub fn task_judge(&self) -> Result<TaskJudge> {
        self.tasks().ok_or_else(no_judge)
    }
}

/// Refuses a judge that cannot write `tasks` for `what`: the heuristic judge cannot, and
/// the embedded 135M model writes too poorly (and too slowly) to be used unasked — only an
/// endpoint model or a GGUF file named with `--judge gguf:PATH` writes.
pub fn require_writer(
    setup: &JudgeSetup,
    options: &JudgeOptions,
    what: &str,
    tasks: &[TaskKind],
) -> Result<()> {
    let named_gguf = matches!(options.local, Some(LocalJudge::Gguf(_)));
    let endpoint = matches!(setup.kind(), "endpoint" | "cascade");
    let routed = setup
        .tasks()
        .is_some_and(|judge| tasks.iter().all(|&task| judge.route(task).is_ok()));
    if (endpoint || named_gguf) && routed {
        return Ok(());
    }
    Err(RunError::NoWritingModel { what: what.into() })
}
