"""The Python peer of the local-index benchmark: what a seed-S4 user would write —
LangChain's RecursiveCharacterTextSplitter (500 / 50), jieba, rank_bm25's BM25Okapi — on the
same documents and queries, timed the same way. Prints one JSON object.

Usage: bench_rank_bm25.py QUERIES.txt ROUNDS K DOCS_DIR_OR_FILE…
"""
import json
import sys
import time
from pathlib import Path

import jieba
import numpy as np
from langchain_text_splitters import RecursiveCharacterTextSplitter
from rank_bm25 import BM25Okapi


def words(text):
    return [w.lower() for w in jieba.lcut(text) if any(c.isalnum() for c in w)]


def main():
    queries_path, rounds, k, *inputs = sys.argv[1:]
    rounds, k = int(rounds), int(k)
    queries = [q for q in Path(queries_path).read_text(encoding="utf-8").splitlines() if q.strip()]
    files = []
    for item in map(Path, inputs):
        files.extend(sorted(item.rglob("*.txt")) if item.is_dir() else [item])
    jieba.initialize()  # the dictionary loads once: start-up, not indexing
    started = time.perf_counter()
    splitter = RecursiveCharacterTextSplitter(chunk_size=500, chunk_overlap=50,
                                              separators=["\n\n", "\n", " ", ""])
    chunks = []
    for f in files:
        chunks.extend(splitter.split_text(f.read_text(encoding="utf-8")))
    bm25 = BM25Okapi([words(c) for c in chunks])
    index_s = time.perf_counter() - started

    def search(query):
        scores = bm25.get_scores(words(query))
        top = np.argpartition(-scores, min(k, len(scores) - 1))[:k]
        return top[np.argsort(-scores[top])]

    for q in queries:
        search(q)
    latencies = []
    for _ in range(rounds):
        for q in queries:
            t = time.perf_counter()
            search(q)
            latencies.append((time.perf_counter() - t) * 1e3)
    latencies.sort()
    pct = lambda p: latencies[round((len(latencies) - 1) * p)]
    print(json.dumps({
        "documents": len(files), "chunks": len(chunks), "index_s": index_s,
        "docs_per_s": len(files) / index_s, "chunks_per_s": len(chunks) / index_s,
        "queries": len(latencies), "k": k,
        "latency_ms": {"mean": sum(latencies) / len(latencies), "p50": pct(0.5),
                       "p95": pct(0.95), "max": pct(1.0)},
    }))


if __name__ == "__main__":
    main()
