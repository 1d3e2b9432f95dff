#!/usr/bin/env python3
"""ranx side of the benchmark: load both TREC files and evaluate map, ndcg@10 and mrr."""

import sys

from ranx import Qrels, Run, evaluate

qrels = Qrels.from_file(sys.argv[1], kind="trec")
run = Run.from_file(sys.argv[2], kind="trec")
for measure, value in evaluate(qrels, run, ["map", "ndcg@10", "mrr"]).items():
    print(f"{measure:<22}\tall\t{value:.4f}")
