"""The exceptions rageval raises. Their messages are the ones the ``rageval`` command prints."""

from __future__ import annotations

from pathlib import Path
from typing import Optional


class RagevalError(Exception):
    """A run could not start or failed: bad data, bad options, a file that cannot be written.

    ``str(error)`` is the CLI's message: the error, then one ``caused by:`` line per cause.
    """

    def __init__(
        self, message: str, reason: Optional[str] = None, run_dir: Optional[str] = None
    ) -> None:
        super().__init__(message)
        self.message = message
        #: Why a run stopped (``cancelled``, ``cap``, ``judge``, ``exported``); ``None`` for an
        #: error that is not a stop.
        self.reason = reason
        #: The run directory the error concerns, when there is one.
        self.run_dir = Path(run_dir) if run_dir is not None else None


class RunStopped(RagevalError):
    """The run stopped before its end and stays resumable: call ``evaluate`` again with the
    same data and ``out`` to go on (``reason`` says why: a cap, a judge that stopped
    answering)."""


class JudgeError(RunStopped):
    """The judge refused or could not answer (unreachable, 401/403/404, an unknown model), or
    every judged cell failed: the CLI's exit 4."""


class RunTerminated(SystemExit):
    """SIGTERM (a CI job's cancel, a pod's end, ``kill``) stopped ``evaluate``: the run stopped
    as on Ctrl-C, every finished cell journaled, and the same call resumes it.

    A ``SystemExit`` with code 143, the shell's code for SIGTERM and what ``rageval eval``
    exits with: uncaught, the interpreter exits quietly with 143 after its ``finally``
    blocks, as the signal asked; a program that means to go on catches it.
    """

    def __init__(
        self, message: str, reason: Optional[str] = "terminated", run_dir: Optional[str] = None
    ) -> None:
        super().__init__(143)
        self.message = message
        #: Always ``terminated``.
        self.reason = reason
        #: The run directory that stopped, when the run had started.
        self.run_dir = Path(run_dir) if run_dir is not None else None

    def __str__(self) -> str:
        return self.message
