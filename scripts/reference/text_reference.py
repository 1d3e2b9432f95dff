#!/usr/bin/env python3
"""Regenerate the text-metric fixtures from the reference libraries.

Writes crates/rageval-core/tests/fixtures/text/*.json, which
crates/rageval-core/tests/text_reference.rs compares rageval against:

- tokenizers.json  sacrebleu's 13a and zh tokenisers, token by token
- bleu.json        sacrebleu sentence_bleu / corpus_bleu (13a and zh), and sentence_bleu
                   on Python-jieba tokens (tokenize='none') for rageval's Jieba mode
- chrf.json        sacrebleu sentence_chrf / corpus_chrf
- rouge.json       rouge-score, English (use_stemmer=False), and Chinese with
                   rouge-score's scorer fed jieba (Python) tokens
- distance.json    rapidfuzz Levenshtein / Hamming / Jaro / Jaro-Winkler

Run it in a throwaway virtual environment, never in the product or CI:

    python3 -m venv /tmp/venv-text
    /tmp/venv-text/bin/pip install sacrebleu rouge-score rapidfuzz jieba
    /tmp/venv-text/bin/python scripts/reference/text_reference.py

References are stored per segment (references[i] = every reference of hypothesis i),
the layout rageval's API takes; this script transposes them into sacrebleu's streams.
"""

import itertools
import json
import re
from importlib.metadata import version
from pathlib import Path

import jieba
import sacrebleu
from rapidfuzz.distance import Hamming, Jaro, JaroWinkler, Levenshtein
from rouge_score import rouge_scorer
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh

OUT = Path(__file__).resolve().parents[2] / "crates/rageval-core/tests/fixtures/text"

# Varied texts: English, Chinese, mixed, other scripts, empty, punctuation-heavy, and
# the corner cases of the mteval rules (digits around . , -, entities, <skipped>).
TEXTS = [
    "",
    " ",
    "The capital of France is Paris.",
    "Paris is the capital of France.",
    "The cat sat on the mat.",
    "The cat sat on the big mat. Foo bar baz qux. Lorem ipsum dolor sit.",
    "The cat sat. The dog ran.",
    "It costs $3.50, i.e. 1,000 yen (approx.) -- really?!",
    "Scores went 5-3 in 2021-2022; pages 10-12.",
    "Don't stop: e-mail me at a.b@c.com/x?y=1&z=2",
    "Tom &amp; Jerry &lt;3 &quot;cartoons&quot; <skipped> fin",
    "hyphen-\nated line\nbreak",
    "...!!!???,,,;;;",
    "“Quoted” text — with dashes… and ‘single’ quotes",
    "naïve café Ångström Müller fährt",
    "Привет, мир! Как дела?",
    "日本語のテキストです。",
    "안녕하세요 세계",
    "emoji 😀🎉 and combining nai\u0308ve",
    "巴黎是法国的首都。",
    "法国的首都是巴黎。",
    "我来到北京清华大学",
    "他来到了网易杭研大厦",
    "北京是中国的首都，也是政治和文化中心。",
    "中国的首都是北京，它是文化中心。",
    "使用Python进行数据分析，效率很高！",
    "用Python做数据分析很高效",
    "Ｆｕｌｌｗｉｄｔｈ　ＡＳＣＩＩ１２３！",
    "生僻字𠀀和〇",
    "The model GPT-4 scored 86.4% on MMLU.",
    "GPT-4 got 86.4 percent on the MMLU benchmark.",
    "a a a a a",
    "a",
    "the the the cat",
]

PAIRS = [
    (2, 3), (3, 2), (4, 4), (4, 5), (5, 4), (6, 6), (6, 4), (7, 7), (7, 8), (8, 9),
    (9, 9), (10, 10), (11, 11), (12, 12), (13, 13), (13, 12), (14, 14), (15, 15),
    (16, 17), (17, 17), (18, 18), (19, 20), (20, 19), (21, 22), (22, 23), (23, 24),
    (24, 23), (25, 26), (26, 25), (27, 27), (28, 28), (29, 30), (30, 29), (31, 32),
    (32, 31), (33, 4), (4, 33), (0, 0), (0, 2), (2, 0), (1, 1), (1, 2), (2, 19),
    (19, 2), (14, 15), (3, 30), (5, 6), (12, 2), (28, 19), (16, 16), (19, 19), (23, 23),
]


def pairs():
    return [(TEXTS[i], TEXTS[j]) for i, j in PAIRS]


def bleu_record(score):
    return {
        "score": score.score,
        "precisions": list(score.precisions),
        "brevity_penalty": score.bp,
        "hyp_len": score.sys_len,
        "ref_len": score.ref_len,
    }


def streams(references):
    """Per-segment reference lists -> sacrebleu streams (None where a segment has fewer)."""
    width = max(len(refs) for refs in references)
    return [[refs[k] if k < len(refs) else None for refs in references] for k in range(width)]


CORPORA = [
    ([2, 4, 6], [[3], [5], [6]]),
    ([4, 5, 7, 8], [[4, 5], [5], [8, 7], [9]]),
    ([19, 21, 23], [[20], [22], [24, 25]]),
    ([25, 29, 14], [[26], [30], [15, 14]]),
    ([0, 2], [[2], [0]]),
    ([31, 33, 32], [[4], [33], [31]]),
    ([12, 13, 10], [[12], [2], [10]]),
]


def corpora():
    return [
        ([TEXTS[i] for i in hyps], [[TEXTS[j] for j in refs] for refs in references])
        for hyps, references in CORPORA
    ]


def tokenizers():
    t13a, tzh = Tokenizer13a(), TokenizerZh()
    return [{"text": t, "13a": t13a(t).split(), "zh": tzh(t).split()} for t in TEXTS]


def bleu():
    sentence, corpus = [], []
    for tok in ["13a", "zh"]:
        for hyp, ref in pairs():
            score = sacrebleu.sentence_bleu(hyp, [ref], tokenize=tok)
            sentence.append({"tokenizer": tok, "hypothesis": hyp, "references": [ref], **bleu_record(score)})
        # Several references per sentence.
        for i, j, k in [(2, 3, 4), (19, 20, 21), (4, 5, 6)]:
            score = sacrebleu.sentence_bleu(TEXTS[i], [TEXTS[j], TEXTS[k]], tokenize=tok)
            sentence.append({"tokenizer": tok, "hypothesis": TEXTS[i],
                             "references": [TEXTS[j], TEXTS[k]], **bleu_record(score)})
        for hyps, refs in corpora():
            score = sacrebleu.corpus_bleu(hyps, streams(refs), tokenize=tok)
            corpus.append({"tokenizer": tok, "hypotheses": hyps, "references": refs, **bleu_record(score)})
    # rageval's Jieba tokeniser: sacrebleu's BLEU on text pre-tokenised by Python jieba
    # (tokenize='none'), for texts made of Han and CJK punctuation only.
    jieba_tokens = JiebaTokenizer()
    for hyp, ref in chinese_pairs():
        score = sacrebleu.sentence_bleu(" ".join(jieba_tokens.tokenize(hyp)),
                                        [" ".join(jieba_tokens.tokenize(ref))], tokenize="none")
        sentence.append({"tokenizer": "jieba", "hypothesis": hyp, "references": [ref], **bleu_record(score)})
    return {"sentence": sentence, "corpus": corpus}


def chrf():
    sentence = [
        {"hypothesis": hyp, "references": [ref], "score": sacrebleu.sentence_chrf(hyp, [ref]).score}
        for hyp, ref in pairs()
    ]
    for i, j, k in [(2, 3, 4), (19, 20, 21), (4, 5, 6)]:
        refs = [TEXTS[j], TEXTS[k]]
        sentence.append({"hypothesis": TEXTS[i], "references": refs,
                         "score": sacrebleu.sentence_chrf(TEXTS[i], refs).score})
    corpus = [
        {"hypotheses": hyps, "references": refs,
         "score": sacrebleu.corpus_chrf(hyps, streams(refs)).score}
        for hyps, refs in corpora()
    ]
    return {"sentence": sentence, "corpus": corpus}


def chinese_pairs():
    """The pairs whose both sides are Han characters and CJK punctuation only."""
    han = re.compile(r"^[\u4e00-\u9fff，。！？]+$")
    return [(h, r) for h, r in pairs() if h and r and han.match(h) and han.match(r)]


class JiebaTokenizer:
    """rouge-score's tokenizer interface over jieba, lower-cased, pieces with a letter or digit."""

    def tokenize(self, text):
        return [w for w in jieba.lcut(text.lower()) if any(c.isalnum() for c in w) and not w.isspace()]


def rouge():
    kinds = ["rouge1", "rouge2", "rougeL"]
    english = rouge_scorer.RougeScorer(kinds, use_stemmer=False)
    chinese = rouge_scorer.RougeScorer(kinds, tokenizer=JiebaTokenizer())

    def record(scorer, hyp, ref):
        scores = scorer.score(target=ref, prediction=hyp)
        return {k: [scores[k].precision, scores[k].recall, scores[k].fmeasure] for k in kinds}

    ascii_pairs = [(h, r) for h, r in pairs() if h.isascii() and r.isascii()]
    return {
        "english": [{"hypothesis": h, "reference": r, **record(english, h, r)} for h, r in ascii_pairs],
        "chinese_jieba": [{"hypothesis": h, "reference": r, **record(chinese, h, r)} for h, r in chinese_pairs()],
        "rouge_score_on_chinese": [
            {"hypothesis": h, "reference": r, **record(english, h, r)} for h, r in chinese_pairs()
        ],
    }


def distance():
    extra = [("kitten", "sitting"), ("MARTHA", "MARHTA"), ("DIXON", "DICKSONX"), ("abc", "cba"),
             ("北京大学", "北京"), ("ab", "ba"), ("a", "ab"), ("prefix_same", "prefix_diff")]
    out = []
    for a, b in itertools.chain(pairs(), extra):
        out.append({
            "a": a, "b": b,
            "levenshtein_distance": Levenshtein.distance(a, b),
            "levenshtein": Levenshtein.normalized_similarity(a, b),
            "hamming": Hamming.normalized_similarity(a, b, pad=True),
            "jaro": Jaro.normalized_similarity(a, b),
            "jaro_winkler": JaroWinkler.normalized_similarity(a, b, prefix_weight=0.1),
        })
    return out


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    generated_by = {p: version(p) for p in ["sacrebleu", "rouge-score", "rapidfuzz", "jieba"]}
    for name, build in [("tokenizers", tokenizers), ("bleu", bleu), ("chrf", chrf),
                        ("rouge", rouge), ("distance", distance)]:
        data = {"generated_by": generated_by, "cases": build()}
        path = OUT / f"{name}.json"
        path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
