"""One question with 200 contexts for benches/rank/run.sh: each context carries its hidden
quality (uniform, seeded) as `quality=X` for the ranking_judge mock; the retriever order is
the quality plus Gaussian noise (sd 0.2), so it agrees only roughly with the truth.

usage: generate.py DATA.jsonl TRUTH.json"""
import json
import random
import sys

N = 200
rng = random.Random(20240601)
qualities = [rng.random() for _ in range(N)]
order = sorted(range(N), key=lambda i: -(qualities[i] + rng.gauss(0, 0.2)))
filler = ("The report covers revenue, customers, products and the market for the year, "
          "with figures by region and a short outlook. ") * 3
contexts = [f"passage {i}: quality={qualities[i]:.4f}. {filler}" for i in order]
with open(sys.argv[1], "w") as f:
    f.write(json.dumps({"id": "q1", "question": "What was the company's revenue last year?",
                        "contexts": contexts}) + "\n")
with open(sys.argv[2], "w") as f:
    json.dump([qualities[i] for i in order], f)
