#!/usr/bin/env bash
# scripts/ci/gate.sh BASELINE_DIR CANDIDATE_DIR COMMENT_PATH — the gate step of docs/ci.md:
# `rageval compare BASELINE CANDIDATE --gate SPEC --comment COMMENT_PATH`, then the pull
# request's one gate comment upserted by its hidden marker with `gh api` (the comment whose
# body starts with `<!-- rageval-gate -->` is edited; without one, a comment is added).
#
# Environment:
#   RAGEVAL_BIN         the rageval binary (default: `rageval` on PATH)
#   RAGEVAL_GATE        the gate's SPEC: values or a TOML file (default: ci/gate.toml)
#   RAGEVAL_REPORT_URL  passed as --report-url when set
#   RAGEVAL_CONFIRM     K: passed as --confirm K (a regression's cells judged again K times
#                       before it fails), with --confirm-out RAGEVAL_CONFIRM_OUT (default:
#                       rageval-confirm); the judge comes from the RAGEVAL_JUDGE_* environment
#   GITHUB_REPOSITORY   owner/name of the repository (set by GitHub Actions)
#   PR_NUMBER           the pull request's number
#   RAGEVAL_GATE_DRY=1  send nothing: write the requests it would send to COMMENT_PATH.request
#
# Exits with compare's code: 0 passed, 1 a significant regression, 2 bad settings or a
# refused mismatch, 3 or 4 when --confirm was capped or its judge never answered (in those
# cases no comment is written and nothing is posted).
set -euo pipefail

if [[ $# -ne 3 ]]; then
  echo "usage: $0 BASELINE_DIR CANDIDATE_DIR COMMENT_PATH" >&2
  exit 2
fi
baseline=$1
candidate=$2
comment=$3
bin=${RAGEVAL_BIN:-rageval}
spec=${RAGEVAL_GATE:-ci/gate.toml}
marker='<!-- rageval-gate -->'

args=(compare "$baseline" "$candidate" --gate "$spec" --comment "$comment")
if [[ -n ${RAGEVAL_REPORT_URL:-} ]]; then
  args+=(--report-url "$RAGEVAL_REPORT_URL")
fi
if [[ -n ${RAGEVAL_CONFIRM:-} ]]; then
  args+=(--confirm "$RAGEVAL_CONFIRM" --confirm-out "${RAGEVAL_CONFIRM_OUT:-rageval-confirm}")
fi
rm -f "$comment"
set +e
"$bin" "${args[@]}"
code=$?
set -e
if [[ ! -f $comment ]]; then
  exit "$code"
fi

repo=${GITHUB_REPOSITORY:?GITHUB_REPOSITORY (owner/name) is needed to post the comment}
pr=${PR_NUMBER:?PR_NUMBER is needed to post the comment}
find_existing=(api "repos/$repo/issues/$pr/comments" --paginate
  --jq ".[] | select(.body | startswith(\"$marker\")) | .id")

if [[ ${RAGEVAL_GATE_DRY:-} == 1 ]]; then
  {
    echo "gh ${find_existing[*]}"
    echo "# then, with the id found:"
    echo "gh api --method PATCH repos/$repo/issues/comments/ID -F body=@$comment"
    echo "# or, when none carries the marker:"
    echo "gh api --method POST repos/$repo/issues/$pr/comments -F body=@$comment"
  } >"$comment.request"
  exit "$code"
fi

id=$(gh "${find_existing[@]}" | head -n 1)
if [[ -n $id ]]; then
  gh api --method PATCH "repos/$repo/issues/comments/$id" -F "body=@$comment" >/dev/null
else
  gh api --method POST "repos/$repo/issues/$pr/comments" -F "body=@$comment" >/dev/null
fi
exit "$code"
