"""Writes the local-index benchmark inputs (seeded):

- data/kids/: the kids-coding report text of seed S4 (one document, split by the indexer);
- data/synthetic/: 10,000 text documents of 6-14 sentences each, drawn with a fixed seed
  from the report's sentences (Chinese text with the report's vocabulary, no two alike);
- data/queries.txt: the 100 questions of qa_test_100.jsonl, one per line.
"""
import argparse
import json
import random
import re
from pathlib import Path

KIDS = Path(__file__).resolve().parents[2] / "../shared/validation/ai-learn-kids-coding-zh"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="benches/sources/data")
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=20240601)
    args = parser.parse_args()
    out = Path(args.out)
    report = (KIDS / "report_text_reconstructed.txt").read_text(encoding="utf-8")
    (out / "kids").mkdir(parents=True, exist_ok=True)
    (out / "kids" / "report.txt").write_text(report, encoding="utf-8")
    sentences = [s.strip() for s in re.split(r"(?<=[。！？；])|\n", report) if len(s.strip()) >= 8]
    rng = random.Random(args.seed)
    synthetic = out / "synthetic"
    synthetic.mkdir(parents=True, exist_ok=True)
    for i in range(args.docs):
        picked = rng.sample(sentences, rng.randint(6, 14))
        paragraphs = ["".join(picked[j:j + 3]) for j in range(0, len(picked), 3)]
        (synthetic / f"doc{i:05}.txt").write_text("\n\n".join(paragraphs) + "\n", encoding="utf-8")
    with open(KIDS / "qa_test_100.jsonl", encoding="utf-8") as f:
        questions = [json.loads(line)["question"] for line in f if line.strip()]
    (out / "queries.txt").write_text("\n".join(questions) + "\n", encoding="utf-8")
    print(f"{len(sentences)} sentences; {args.docs} synthetic documents; {len(questions)} queries")


if __name__ == "__main__":
    main()
