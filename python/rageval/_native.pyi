"""Type stubs of the native module (crates/rageval-py); use the functions of ``rageval``."""

from typing import Any, Callable, Dict, List, Optional

def evaluate(
    data: str,
    out: str,
    metrics: List[str],
    judge: Dict[str, Any],
    options: Dict[str, Any],
    progress: Optional[Callable[[Dict[str, Any]], Any]] = None,
) -> Dict[str, Any]: ...
def compare(runs: List[str], names: List[str] = ...) -> str: ...
def write_results_parquet(run_dir: str) -> str: ...
def log_mlflow(run_dir: str, tracking_uri: str, experiment: str) -> Dict[str, Any]: ...
def summarize(
    records: str,
    metrics: List[str],
    resamples: Optional[int] = None,
    seed: Optional[int] = None,
) -> str: ...
def cli(args: List[str]) -> int: ...
