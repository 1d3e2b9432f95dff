#!/usr/bin/env bash
# scripts/ci/download-baseline.sh — the baseline step of the rageval-gate Action
# (.github/actions/rageval-gate): the run directory that the latest successful run of the
# workflow on the default branch uploaded as an artifact, downloaded with `gh`.
#
# Environment:
#   RAGEVAL_BASELINE_DIR       where to put it (replaced)
#   RAGEVAL_BASELINE_ARTIFACT  the artifact's name (default: rageval-run)
#   RAGEVAL_BASELINE_WORKFLOW  the workflow whose runs upload it (its name or file)
#   RAGEVAL_BASELINE_BRANCH    the branch of the baseline (default: main)
#   GITHUB_REPOSITORY          owner/name (set by GitHub Actions); GH_TOKEN for gh
#   RAGEVAL_GATE_DRY=1         send nothing: write the gh commands it would run to
#                              RAGEVAL_BASELINE_DIR.request and copy the local run
#                              RAGEVAL_GATE_DRY_BASELINE in place of the download
set -euo pipefail

dir=${RAGEVAL_BASELINE_DIR:?RAGEVAL_BASELINE_DIR (where to put the baseline run) is needed}
artifact=${RAGEVAL_BASELINE_ARTIFACT:-rageval-run}
workflow=${RAGEVAL_BASELINE_WORKFLOW:?RAGEVAL_BASELINE_WORKFLOW (the workflow of main) is needed}
branch=${RAGEVAL_BASELINE_BRANCH:-main}
repo=${GITHUB_REPOSITORY:?GITHUB_REPOSITORY (owner/name) is needed}
list=(run list --repo "$repo" --branch "$branch" --workflow "$workflow" --status success
  --limit 1 --json databaseId --jq '.[0].databaseId')

rm -rf "$dir"
if [[ ${RAGEVAL_GATE_DRY:-} == 1 ]]; then
  {
    echo "gh ${list[*]}"
    echo "# then, with the run id found:"
    echo "gh run download RUN_ID --repo $repo --name $artifact --dir $dir"
  } >"$dir.request"
  baseline=${RAGEVAL_GATE_DRY_BASELINE:?RAGEVAL_GATE_DRY_BASELINE (a local run) stands for the download}
  mkdir -p "$dir"
  cp -R "$baseline"/. "$dir"
  exit 0
fi

run_id=$(gh "${list[@]}")
if [[ -z $run_id || $run_id == null ]]; then
  echo "no successful run of workflow \`$workflow\` on $branch in $repo to take the baseline" \
    "from: run it on $branch first (it uploads the artifact \`$artifact\`)" >&2
  exit 2
fi
gh run download "$run_id" --repo "$repo" --name "$artifact" --dir "$dir"
