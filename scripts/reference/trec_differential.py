#!/usr/bin/env python3
"""Differential test of `rageval trec` against pytrec-eval-terrier (trec_eval's C code).

For each seed: write random qrels and a random run (graded levels -1..3, score ties, retrieved
documents missing from the qrels, topics only in the qrels, topics only in the run, topics with
no relevant document), evaluate both ways at relevance levels 1 and 2, and require every
per-topic value of every measure both tools report to agree within 1e-9.

Reference tooling only: pytrec_eval lives in a throwaway virtual environment, never in the
product or CI:

    python3 -m venv /tmp/venv-trec && /tmp/venv-trec/bin/pip install pytrec-eval-terrier
    /tmp/venv-trec/bin/python scripts/reference/trec_differential.py --seeds 200

Exit status 0 when everything agrees, 1 on any difference (listed), 2 on usage errors.
"""

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import pytrec_eval

TOLERANCE = 1e-9
# Measures pytrec_eval reports per topic in a form comparable with ours (`gm_*` are logs
# there and summary-only here; `runid`, `relstring` and `num_q` are not per-topic numbers).
SKIPPED = {"runid", "relstring", "num_q", "gm_map", "gm_bpref"}
MEASURES = sorted(set(pytrec_eval.supported_measures) - SKIPPED)
# trec_eval 10 turns a recall fraction into a count of relevant documents with lround();
# pytrec_eval-terrier 0.5.11 embeds trec_eval 9, which truncates `fraction * R + 0.9`. The
# trec_eval 10 fixtures pin the former, so these values are counted apart, not failed.
VERSION_DIFFERENCE = ("iprec_at_recall_", "11pt_avg")


def random_case(rng):
    """Return (qrels lines, run lines, qrels dict, run dict) for one random case."""
    qrels, run = {}, {}
    topics = [f"q{n}" for n in range(rng.randint(1, 12))]
    for qid in topics:
        pool = [f"d{n}" for n in range(rng.randint(1, 40))]
        judged = rng.sample(pool, rng.randint(1, len(pool)))
        no_relevant = rng.random() < 0.1
        qrels[qid] = {
            doc: (rng.choice([-1, 0, 0]) if no_relevant else rng.choice([-1, 0, 0, 0, 1, 1, 2, 3]))
            for doc in judged
        }
        if all(rel < 0 for rel in qrels[qid].values()):
            # trec_eval reads uninitialised memory for a topic with no judgment >= 0 (pytrec_eval
            # crashes or hangs on it), so there is no reference value to compare with.
            qrels[qid][judged[0]] = 0
        if rng.random() < 0.15:
            continue  # topic with judgments but no results
        retrieved = rng.sample(pool + [f"u{n}" for n in range(10)], rng.randint(1, len(pool) + 5))
        # Coarse scores force ties, which trec_eval breaks by docno, descending.
        run[qid] = {doc: round(rng.uniform(0, 3), 1) for doc in retrieved}
    if rng.random() < 0.5:
        run["only_in_run"] = {"x1": 1.0, "x2": 0.5}
    if not any(qid in qrels for qid in run):
        first = topics[0]
        run[first] = {doc: 1.0 for doc in list(qrels[first])[:3]}
    qrels_lines = [f"{qid} 0 {doc} {rel}" for qid, docs in qrels.items() for doc, rel in docs.items()]
    run_lines = []
    for qid, docs in run.items():
        for rank, (doc, score) in enumerate(docs.items(), 1):
            run_lines.append(f"{qid} Q0 {doc} {rank} {score} sys")
    rng.shuffle(run_lines)  # the rank column and line order must not matter
    return qrels_lines, run_lines, qrels, run


def ours(binary, qrels_path, run_path, level):
    command = [binary, "trec", str(qrels_path), str(run_path), "-q", "--json", f"-l{level}"]
    command += [arg for measure in MEASURES for arg in ("-m", measure)]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"rageval failed: {result.stderr.strip()}")
    return json.loads(result.stdout)["queries"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=100, help="number of random cases")
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--binary", default="target/release/rageval", help="rageval binary")
    args = parser.parse_args()

    compared, differences, version_differences, missing = 0, [], 0, set()
    with tempfile.TemporaryDirectory() as directory:
        qrels_path, run_path = Path(directory, "qrels"), Path(directory, "run")
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            rng = random.Random(seed)
            qrels_lines, run_lines, qrels, run = random_case(rng)
            qrels_path.write_text("\n".join(qrels_lines) + "\n")
            run_path.write_text("\n".join(run_lines) + "\n")
            for level in (1, 2):
                reference = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES), relevance_level=level)
                expected = reference.evaluate(run)
                actual = ours(args.binary, qrels_path, run_path, level)
                if set(expected) != set(actual):
                    differences.append(f"seed {seed} -l{level}: topics {sorted(expected)} vs {sorted(actual)}")
                    continue
                for qid, values in expected.items():
                    for name, value in values.items():
                        if name not in actual[qid]:
                            missing.add(name)
                            continue
                        compared += 1
                        if abs(actual[qid][name] - value) <= TOLERANCE:
                            continue
                        if name.startswith(VERSION_DIFFERENCE):
                            version_differences += 1
                        else:
                            differences.append(
                                f"seed {seed} -l{level} {qid} {name}: pytrec_eval {value!r}, rageval {actual[qid][name]!r}"
                            )
    print(f"{args.seeds} seeds, {compared} per-topic values compared, {len(differences)} differences")
    print(f"({version_differences} iprec_at_recall/11pt_avg values differ by the recall-cutoff rounding rule)")
    if missing:
        print(f"reported by pytrec_eval only: {sorted(missing)}")
    for line in differences[:50]:
        print(line)
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
