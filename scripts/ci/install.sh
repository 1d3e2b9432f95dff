#!/usr/bin/env bash
# scripts/ci/install.sh — the install step of the rageval-gate Action
# (.github/actions/rageval-gate): rageval built from source with `cargo install`, from the
# repository the Action lives in (no released binary is downloaded).
#
# Environment:
#   RAGEVAL_INSTALL     `source` (default): `cargo install --locked --path
#                       RAGEVAL_SOURCE/crates/rageval --root RUNNER_TEMP/rageval`, its bin
#                       directory added to GITHUB_PATH for the steps after;
#                       `path`: use the rageval already installed (RAGEVAL_BIN, else on PATH)
#   RAGEVAL_SOURCE      the rageval repository's root (the Action's own checkout)
#   RAGEVAL_BIN         with `path`: the binary (default: `rageval` on PATH)
#   RAGEVAL_GATE_DRY=1  build nothing: say the command it would run
set -euo pipefail

mode=${RAGEVAL_INSTALL:-source}
case $mode in
  source)
    source_root=${RAGEVAL_SOURCE:?RAGEVAL_SOURCE (the rageval repository) is needed to build it}
    root=${RUNNER_TEMP:-${TMPDIR:-/tmp}}/rageval
    install=(cargo install --locked --path "$source_root/crates/rageval" --root "$root")
    if [[ ${RAGEVAL_GATE_DRY:-} == 1 ]]; then
      echo "would run: ${install[*]}"
      exit 0
    fi
    "${install[@]}"
    if [[ -n ${GITHUB_PATH:-} ]]; then
      echo "$root/bin" >>"$GITHUB_PATH"
    fi
    "$root/bin/rageval" --version
    ;;
  path)
    "${RAGEVAL_BIN:-rageval}" --version
    ;;
  *)
    echo "RAGEVAL_INSTALL is \`$mode\`: give \`source\` or \`path\`" >&2
    exit 2
    ;;
esac
