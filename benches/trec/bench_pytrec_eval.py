#!/usr/bin/env python3
"""pytrec_eval side of the benchmark: parse both files and evaluate map, ndcg_cut.10 and
recip_rank, averaging over topics (what `rageval trec` prints)."""

import sys

import pytrec_eval

with open(sys.argv[1]) as qrels_file:
    qrels = pytrec_eval.parse_qrel(qrels_file)
with open(sys.argv[2]) as run_file:
    run = pytrec_eval.parse_run(run_file)
evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut.10", "recip_rank"})
results = evaluator.evaluate(run)
for measure in ("map", "ndcg_cut_10", "recip_rank"):
    mean = pytrec_eval.compute_aggregated_measure(measure, [q[measure] for q in results.values()])
    print(f"{measure:<22}\tall\t{mean:.4f}")
