#!/usr/bin/env python3
"""Writes a synthetic dataset of N samples for the scale benchmark (BENCHMARKS.md, "eval at
scale"): each sample has an id, a question, an answer, a reference, three retrieved contexts
with their ids and the gold context ids, drawn from a fixed vocabulary with a seeded RNG, so
the same N always gives the same file. About 1.2 KB per sample.

usage: generate.py N OUT.jsonl
"""

import json
import random
import sys

WORDS = (
    "account bank cheque deposit payee business tax income credit loan rate interest fund "
    "stock bond market price share dividend capital risk return yield portfolio broker "
    "trade option future index asset liability balance ledger audit invoice payment card "
    "mortgage equity debt insurance premium claim policy savings budget expense revenue "
    "profit loss margin cost value growth inflation currency exchange transfer wire fee"
).split()


def sentence(rng, words):
    text = " ".join(rng.choice(WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def sample(rng, index):
    contexts = [" ".join(sentence(rng, 12) for _ in range(3)) for _ in range(3)]
    ids = [f"d{rng.randrange(100000)}" for _ in contexts]
    gold = [ids[0]] if rng.random() < 0.6 else [f"d{rng.randrange(100000)}"]
    return {
        "id": f"s{index:07d}",
        "user_input": sentence(rng, 10)[:-1] + "?",
        "response": " ".join(sentence(rng, 12) for _ in range(3)),
        "reference": " ".join(sentence(rng, 12) for _ in range(3)),
        "retrieved_contexts": contexts,
        "retrieved_context_ids": ids,
        "reference_context_ids": gold,
    }


def main():
    count, out = int(sys.argv[1]), sys.argv[2]
    rng = random.Random(20260601)
    with open(out, "w", encoding="utf-8") as file:
        for index in range(count):
            file.write(json.dumps(sample(rng, index)) + "\n")


if __name__ == "__main__":
    main()
