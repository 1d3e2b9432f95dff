#!/usr/bin/env python3
"""Random-weight checker models of the published shapes, for the speed figures in
BENCHMARKS.md (never committed: about 1.3 GB). Run outside CI, in the throwaway environment of
scripts/checker-fixtures.py:

    /tmp/fixtures-venv/bin/python benches/checker/shapes.py /tmp/checker-shapes [SHAPE ...]
    RAGEVAL_CHECKER_BENCH=/tmp/checker-shapes/modernbert-base-tokens:/tmp/checker-shapes/deberta-v3-base-nli \
      cargo test --workspace --locked -- --ignored --nocapture checker_speed

SHAPE names the folders to make (all of them if none is named).

- modernbert-base-tokens: ModernBERT-base's shape (LettuceDetect-base): 22 layers, hidden
  768, 12 heads, intermediate 1152, vocabulary 50368, a global layer every third, local
  windows of 128.
- deberta-v3-base-nli: DeBERTa-v3-base's shape (as MoritzLaurer's NLI models): 12 layers,
  hidden 768, 12 heads, intermediate 3072, vocabulary 128100, relative attention.
- xlm-roberta-base-nli: XLM-RoBERTa-base's shape (multilingual NLI cross-encoders): 12
  layers, hidden 768, 12 heads, intermediate 3072, vocabulary 250002, 514 positions.

The tokenizer is the tiny fixture's (its ids are a subset of any vocabulary): speed depends on
the token count, not on which tokens.
"""
import pathlib
import shutil
import sys

import torch
import transformers

FIX = pathlib.Path(__file__).resolve().parents[2] / "crates/rageval-judge/tests/fixtures/checkers"
OUT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/checker-shapes")
WANTED = set(sys.argv[2:])
torch.manual_seed(0)


def wanted(name):
    return not WANTED or name in WANTED


def save(model, name, fixture):
    d = OUT / name
    model.eval().save_pretrained(d)
    shutil.copy(FIX / fixture / "tokenizer.json", d)


if wanted("modernbert-base-tokens"):
    mb = transformers.ModernBertConfig(vocab_size=50368, hidden_size=768, intermediate_size=1152, num_hidden_layers=22,
        num_attention_heads=12, max_position_embeddings=8192, global_attn_every_n_layers=3, local_attention=128,
        id2label={0: "LABEL_0", 1: "LABEL_1"}, label2id={"LABEL_0": 0, "LABEL_1": 1})
    mb.architectures = ["ModernBertForTokenClassification"]
    save(transformers.ModernBertForTokenClassification(mb), "modernbert-base-tokens", "modernbert-tokens")
if wanted("deberta-v3-base-nli"):
    db = transformers.DebertaV2Config(vocab_size=128100, hidden_size=768, intermediate_size=3072, num_hidden_layers=12,
        num_attention_heads=12, max_position_embeddings=512, type_vocab_size=0, relative_attention=True, max_relative_positions=-1,
        position_buckets=256, pos_att_type=["p2c", "c2p"], norm_rel_ebd="layer_norm", share_att_key=True, position_biased_input=False,
        hidden_act="gelu", pooler_hidden_size=768, pooler_dropout=0.0, pooler_hidden_act="gelu",
        id2label={0: "entailment", 1: "neutral", 2: "contradiction"}, label2id={"entailment": 0, "neutral": 1, "contradiction": 2})
    db.architectures = ["DebertaV2ForSequenceClassification"]
    save(transformers.DebertaV2ForSequenceClassification(db), "deberta-v3-base-nli", "deberta-v2-nli")
if wanted("xlm-roberta-base-nli"):
    xr = transformers.XLMRobertaConfig(vocab_size=250002, hidden_size=768, intermediate_size=3072, num_hidden_layers=12,
        num_attention_heads=12, max_position_embeddings=514, type_vocab_size=1, pad_token_id=1, bos_token_id=0, eos_token_id=2,
        id2label={0: "contradiction", 1: "neutral", 2: "entailment"}, label2id={"contradiction": 0, "neutral": 1, "entailment": 2})
    xr.architectures = ["XLMRobertaForSequenceClassification"]
    save(transformers.XLMRobertaForSequenceClassification(xr), "xlm-roberta-base-nli", "xlm-roberta-nli")
for p in sorted(OUT.rglob("*.safetensors")): print(p, p.stat().st_size)
