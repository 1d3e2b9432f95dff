#!/usr/bin/env bash
# The trace and experiment servers teams run, from PyPI, for rageval-export's integration
# tests and for trying the integrations by hand: Arize Phoenix (traces, span annotations,
# OTLP) and an MLflow tracking server, both on SQLite, both on loopback only, with their
# telemetry switched off (no traffic leaves the machine).
#
#   scripts/setup-trace-servers.sh install           installs both into the venv (idempotent:
#                                                     a second run only checks the versions);
#                                                     prints the venv's path
#   scripts/setup-trace-servers.sh start phoenix DIR  starts Phoenix on a free loopback port
#   scripts/setup-trace-servers.sh start mlflow DIR   starts MLflow (--serve-artifacts) likewise
#
# `start` keeps its storage (SQLite, artifacts, the server's log) in DIR, prints the server's
# URL as its first line of stdout (Phoenix: then its OTLP gRPC port is unused, HTTP OTLP is
# URL/v1/traces), and then becomes the server (exec), so stopping this process stops the
# server. It does not wait for the server to answer: the caller polls URL.
#
# The venv is $RAGEVAL_TRACE_SERVERS_VENV when set, else target/trace-servers-venv. Tests that
# need the servers run when RAGEVAL_TRACE_SERVERS_VENV is set (scripts/test.sh sets it after
# `install`) and skip, saying so, when it is not.
set -euo pipefail
cd "$(dirname "$0")/.."

PHOENIX_VERSION="20.26.1"
MLFLOW_VERSION="3.17.2"
venv="${RAGEVAL_TRACE_SERVERS_VENV:-${CARGO_TARGET_DIR:-$PWD/target}/trace-servers-venv}"

installed() {
  [ -x "$venv/bin/python" ] || return 1
  local versions
  versions="$("$venv/bin/python" -c 'from importlib.metadata import version as v; print(v("arize-phoenix"), v("mlflow"))' 2>/dev/null)" || return 1
  [ "$versions" = "$PHOENIX_VERSION $MLFLOW_VERSION" ]
}

install() {
  if installed; then
    echo "$venv"
    return
  fi
  if ! command -v python3 >/dev/null 2>&1; then
    echo "error: python3 is needed to install Phoenix and MLflow (the trace-server tests)" >&2
    exit 2
  fi
  mkdir -p "$(dirname "$venv")"
  ./scripts/pip-install.sh "$venv" "arize-phoenix==$PHOENIX_VERSION" "mlflow==$MLFLOW_VERSION" >&2
  echo "$venv"
}

free_port() {
  "$venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
  local server=$1 dir=$2
  if ! installed; then
    echo "error: Phoenix $PHOENIX_VERSION and MLflow $MLFLOW_VERSION are not in $venv: run $0 install" >&2
    exit 2
  fi
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  local port
  port="$(free_port)"
  echo "http://127.0.0.1:$port"
  case "$server" in
    phoenix)
      export PHOENIX_HOST=127.0.0.1 PHOENIX_PORT="$port" PHOENIX_GRPC_PORT="$(free_port)"
      export PHOENIX_WORKING_DIR="$dir" PHOENIX_TELEMETRY_ENABLED=false
      exec "$venv/bin/phoenix" serve >"$dir/server.log" 2>&1
      ;;
    mlflow)
      # Without its job runner: MLflow 3 starts it by default (a runner and seven huey
      # consumers, each importing MLflow), for GenAI jobs rageval never submits. With it, a
      # start used 47 CPU seconds in its first minute; without it, 10.
      export MLFLOW_DISABLE_TELEMETRY=true DO_NOT_TRACK=true
      export MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false
      exec "$venv/bin/mlflow" server --host 127.0.0.1 --port "$port" --workers 1 \
        --backend-store-uri "sqlite:///$dir/mlflow.db" \
        --serve-artifacts --artifacts-destination "$dir/artifacts" >"$dir/server.log" 2>&1
      ;;
    *)
      echo "error: unknown server \`$server\` (phoenix or mlflow)" >&2
      exit 2
      ;;
  esac
}

case "${1:-}" in
  install) install ;;
  start)
    if [ $# -ne 3 ]; then
      echo "usage: $0 start phoenix|mlflow DIR" >&2
      exit 2
    fi
    start "$2" "$3"
    ;;
  *)
    echo "usage: $0 install | start phoenix|mlflow DIR" >&2
    exit 2
    ;;
esac
