#!/usr/bin/env python3
"""Write the seeded benchmark inputs for `rageval trec`: a run with N topics x D documents
and qrels judging a sample of each topic's pool (graded 0..2, some retrieved documents left
unjudged). Standard library only; the same seed always gives the same bytes."""

import argparse
import random
from pathlib import Path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=100, help="retrieved documents per topic")
    parser.add_argument("--seed", type=int, default=20_240_601)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "data")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "run.txt", "w") as run, open(args.out / "qrels.txt", "w") as qrels:
        for topic in range(args.topics):
            qid = f"{100000 + topic}"
            pool = rng.sample(range(50_000_000), args.docs + args.docs // 2)
            retrieved = pool[: args.docs]
            scores = sorted((round(rng.uniform(0, 30), 4) for _ in retrieved), reverse=True)
            for rank, (doc, score) in enumerate(zip(retrieved, scores), 1):
                run.write(f"{qid} Q0 doc{doc:08d} {rank} {score} bench_run\n")
            for doc in rng.sample(pool, len(pool) // 2):
                level = rng.choices((0, 1, 2), weights=(6, 3, 1))[0]
                qrels.write(f"{qid} 0 doc{doc:08d} {level}\n")


if __name__ == "__main__":
    main()
