"""The ``rageval`` command installed by the Python package: the Rust CLI's own ``main``."""

from __future__ import annotations

import sys

from . import _native


def main() -> None:
    """Runs ``rageval`` with this process's arguments and exits with its exit code."""
    sys.exit(_native.cli(sys.argv))
