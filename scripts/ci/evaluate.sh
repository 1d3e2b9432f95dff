#!/usr/bin/env bash
# scripts/ci/evaluate.sh — the evaluate step of the rageval-gate Action
# (.github/actions/rageval-gate): `rageval eval DATA --out RUN_DIR [--metrics M] [ARGS…]`,
# the judge taken from the RAGEVAL_JUDGE_* environment (or rageval.toml).
#
# Environment:
#   RAGEVAL_BIN         the rageval binary (default: `rageval` on PATH)
#   RAGEVAL_DATA        the pull request's data: the answers to evaluate
#   RAGEVAL_RUN_DIR     the run directory to write (default: runs/candidate)
#   RAGEVAL_METRICS     metrics, comma-separated (default: eval's choice)
#   RAGEVAL_EVAL_ARGS   more flags for eval, split on white space (e.g. `--max-cost 2`)
#
# Exits with eval's code (3: a cap stopped it, 4: the judge never answered).
set -euo pipefail

bin=${RAGEVAL_BIN:-rageval}
data=${RAGEVAL_DATA:?RAGEVAL_DATA (the data to evaluate) is needed}
args=(eval "$data" --out "${RAGEVAL_RUN_DIR:-runs/candidate}")
if [[ -n ${RAGEVAL_METRICS:-} ]]; then
  args+=(--metrics "$RAGEVAL_METRICS")
fi
read -r -a extra <<<"${RAGEVAL_EVAL_ARGS:-}"
args+=("${extra[@]}")
exec "$bin" "${args[@]}"
