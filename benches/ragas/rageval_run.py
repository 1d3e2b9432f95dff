#!/usr/bin/env python3
"""Run `rageval eval` against an OpenAI-compatible mock (shared/bench/mock_llm.py) and print
ONE JSON line with the fields shared/bench/ragas_run.py prints, so both tools can be read
side by side. Python standard library only.

The server does the counting: requests and tokens are /stats differences over the run.
wall_s is the whole `rageval eval` process (start-up, scoring, summary and report files);
ragas's wall_s covers its evaluate() call only, so this errs against rageval.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

# ragas metric names -> rageval specs (answer_relevancy is ragas's embedding mode).
SPECS = {
    "context_precision": "context_precision",
    "context_recall": "context_recall",
    "faithfulness": "faithfulness",
    "answer_relevancy": "answer_relevance:embedding",
    "answer_correctness": "answer_correctness:ragas",
    "answer_similarity": "semantic_similarity",
    "context_entity_recall": "context_entity_recall",
    "noise_sensitivity": "noise_sensitivity",
}


def stats(root, reset=False):
    if reset:
        urllib.request.urlopen(urllib.request.Request(root + "/stats/reset", method="POST")).read()
    with urllib.request.urlopen(root + "/stats") as response:
        return json.load(response)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(os.path.dirname(here))
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--dataset", required=True)
    p.add_argument("--base-url", default="http://127.0.0.1:8089/v1")
    p.add_argument("--metrics", default="context_precision,context_recall,faithfulness,answer_relevancy")
    p.add_argument("--max-workers", type=int, default=16, help="rageval --concurrency")
    p.add_argument("--limit", type=int)
    p.add_argument("--reset-stats", action="store_true")
    p.add_argument("--model", default="mock-chat")
    p.add_argument("--embedding-model", default="mock-embed")
    p.add_argument("--binary", default=os.path.join(repo, "target", "release", "rageval"))
    p.add_argument("--keep", help="keep the run directory here instead of a temporary one")
    args = p.parse_args()

    names = [m.strip() for m in args.metrics.split(",") if m.strip()]
    specs = [SPECS.get(name, name) for name in names]
    root = args.base_url.rstrip("/")
    root = root[: -len("/v1")] if root.endswith("/v1") else root
    out_dir = args.keep or tempfile.mkdtemp(prefix="rageval-bench-")
    command = [
        args.binary, "eval", args.dataset,
        "--metrics", ",".join(specs),
        "--out", out_dir, "--overwrite", "--no-cache",
        "--judge-base-url", args.base_url,
        "--judge-model", args.model,
        "--judge-embedding-model", args.embedding_model,
        "--concurrency", str(args.max_workers),
    ]
    if args.limit:
        command += ["--samples", str(args.limit)]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAGEVAL_JUDGE_", "OPENAI_"))}
    env["NO_COLOR"] = "1"

    before = stats(root, reset=args.reset_stats)
    t0 = time.perf_counter()
    done = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    after = stats(root)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        sys.exit(f"rageval exited with {done.returncode}")
    t1 = time.perf_counter()
    subprocess.run([args.binary, "--version"], stdout=subprocess.DEVNULL, check=True)
    startup = time.perf_counter() - t1

    cells = {spec: {"score": [], "undefined": 0, "failed": 0, "nonfinite": 0} for spec in specs}
    samples = set()
    with open(os.path.join(out_dir, "results.jsonl"), encoding="utf-8") as journal:
        for line in journal:
            record = json.loads(line)
            samples.add(record["sample_id"])
            cell = cells[record["metric"]]
            if record["status"] == "score":
                value = record["value"]
                if isinstance(value, (int, float)) and value == value and abs(value) != float("inf"):
                    cell["score"].append(float(value))
                else:
                    cell["nonfinite"] += 1
            else:
                cell[record["status"]] += 1

    def delta(key):
        return after.get(key, 0) - before.get(key, 0)

    def dict_delta(key):
        b, a = before.get(key, {}), after.get(key, {})
        return {k: a.get(k, 0) - b.get(k, 0) for k in sorted(set(b) | set(a)) if a.get(k, 0) - b.get(k, 0)}

    version = subprocess.run([args.binary, "--version"], capture_output=True, text=True).stdout.split()
    n = len(samples)
    # A ragas NaN cell is a job that died; rageval's counterpart is a failed (or non-finite)
    # cell. Undefined cells (a metric that does not apply, with its reason) are listed apart.
    nan_by_metric = {name: cells[spec]["failed"] + cells[spec]["nonfinite"] for name, spec in zip(names, specs)}
    out = {
        "tool": "rageval",
        "version": version[-1] if version else None,
        "samples": n,
        "metrics": names,
        "wall_s": round(wall, 3),
        "startup_s": round(startup, 3),
        "requests": delta("requests"),
        "chat_requests": delta("chat_requests"),
        "chat_choices": delta("chat_choices"),
        "chat_n": dict(sorted(dict_delta("chat_n").items(), key=lambda kv: int(kv[0]))),
        "embedding_requests": delta("embedding_requests"),
        "prompt_tokens": delta("prompt_tokens"),
        "completion_tokens": delta("completion_tokens"),
        "embedding_tokens": delta("embedding_tokens"),
        "tokens_per_sample": round((delta("prompt_tokens") + delta("completion_tokens")) / n, 1) if n else None,
        "requests_per_sample": round(delta("requests") / n, 2) if n else None,
        "status_counts": dict_delta("status_counts"),
        "faults": dict_delta("faults"),
        "client_disconnects": delta("client_disconnects"),
        "max_in_flight": after.get("max_in_flight"),
        "max_workers": args.max_workers,
        "timeout": None,
        "client_timeout": 120,
        "nan_cells": sum(nan_by_metric.values()),
        "nan_by_metric": nan_by_metric,
        "undefined_cells": sum(cells[spec]["undefined"] for spec in specs),
        "scores": {
            name: (round(sum(cells[spec]["score"]) / len(cells[spec]["score"]), 6) if cells[spec]["score"] else None)
            for name, spec in zip(names, specs)
        },
    }
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
