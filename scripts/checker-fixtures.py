#!/usr/bin/env python3
"""Makes the tiny random-weight checker models and their reference outputs.

Run outside CI, in a throwaway virtual environment with the reference implementation:

    python3 -m venv /tmp/fixtures-venv
    /tmp/fixtures-venv/bin/pip install torch transformers tokenizers safetensors \
        sentencepiece protobuf
    /tmp/fixtures-venv/bin/python scripts/checker-fixtures.py [FAMILY ...]

FAMILY is a folder name below (all of them if none is named). Name only the ones you mean
to remake: the tokenizer trainers give a slightly different vocabulary on each run, so the
others' committed files would change.

For each family it writes, under crates/rageval-judge/tests/fixtures/checkers/<family>/:
config.json, tokenizer.json and model.safetensors (2 layers, hidden 32, seeded weights, the
family's real config fields and tokenizer kind), and reference.json: the token ids the
tokenizer gives on fixed inputs and the logits transformers computes from them, with the
versions of torch, transformers and tokenizers used. The Rust tests load the same files
with rageval's code and must match within 1e-4.

- modernbert-tokens: ModernBertForTokenClassification (LettuceDetect's shape: context and
  question as the first sequence, the answer as the second, a 0/1 label per token), with a
  byte-level BPE tokenizer like ModernBERT's.
- deberta-v2-nli: DebertaV2ForSequenceClassification (an NLI / claim checker: premise,
  hypothesis -> entailment, neutral, contradiction), with a Unigram (SentencePiece-style)
  tokenizer like DeBERTa-v3's.
- xlm-roberta-nli: XLMRobertaForSequenceClassification (a multilingual NLI cross-encoder,
  labels in XNLI checkpoints' order: contradiction, neutral, entailment), with XLM-R's
  tokenizer built the way transformers converts XLM-R's SentencePiece model: a Unigram
  model trained here by sentencepiece on a small English and Chinese corpus (NFKC rules
  compiled into the `Precompiled` normalizer), fairseq's ids for <s> <pad> </s> <unk>, and
  the pair template <s> A </s></s> B </s>. Needs `sentencepiece` besides the packages above.
- t5-minicheck: T5ForConditionalGeneration read as MiniCheck-Flan-T5 reads it ("predict: "
  + document + "</s>" + claim; the first decoder step's logits of the tokens that "0" and
  "1" begin with), with T5's tokenizer built the same way from a SentencePiece model.
"""

import json
import pathlib
import sys

import tokenizers
import torch
import transformers
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "crates" / "rageval-judge" / "tests" / "fixtures" / "checkers"
SEED = 28
# The published families' shapes, shrunk: 2 layers, hidden 32.
TINY = dict(
    hidden_size=32,
    intermediate_size=48,
    num_hidden_layers=2,
    num_attention_heads=2,
    max_position_embeddings=512,
)

CORPUS = [
    "The Eiffel Tower is in Paris and was finished in 1889.",
    "Paris is the capital of France; the tower is 330 metres tall.",
    "Marie Curie won two Nobel prizes, in physics and in chemistry.",
    "Python was created by Guido van Rossum and released in 1991.",
    "Children often start programming with Scratch or Python.",
    "The river flows north through the valley before it reaches the sea.",
    "Water boils at 100 degrees Celsius at sea level.",
    "The library opens at nine in the morning and closes at six.",
    "A claim is supported when the passage states it or implies it.",
    "The answer says the tower was finished in 1890, which is wrong.",
]

# (first sequence, second sequence): context and question, then the answer (token model);
# premise, then hypothesis (sequence model).
PAIRS = [
    (
        "The Eiffel Tower is in Paris and was finished in 1889. Question: when was it finished?",
        "It was finished in 1889.",
    ),
    (
        "Water boils at 100 degrees Celsius at sea level.",
        "Water boils at 90 degrees in the valley, says the library.",
    ),
    (
        "Marie Curie won two Nobel prizes, in physics and in chemistry.",
        "Curie won one prize.",
    ),
]


# XLM-R's corpus: CORPUS and Chinese, so that Chinese pieces are in its vocabulary.
CHINESE = [
    "埃菲尔铁塔位于巴黎，于1889年建成。",
    "巴黎是法国的首都，铁塔高330米。",
    "水在海平面的沸点是摄氏100度。",
    "居里夫人获得了两次诺贝尔奖，分别是物理学奖和化学奖。",
    "图书馆早上九点开门，下午六点关门。",
    "这条河向北流经山谷，然后流入大海。",
]

# XLM-R's cases: PAIRS, a Chinese pair, and full-width digits and doubled spaces that the
# NFKC normalizer and the space rule rewrite.
XLMR_PAIRS = PAIRS + [
    ("水在海平面的沸点是摄氏100度。", "水的沸点是摄氏90度。"),
    ("埃菲尔铁塔位于巴黎，于１８８９年建成。", "The tower  was finished in 1889."),
]


def versions():
    return {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "tokenizers": tokenizers.__version__,
    }


def bpe_tokenizer():
    """Byte-level BPE with ModernBERT's special tokens and its pair template."""
    tok = Tokenizer(models.BPE(unk_token=None))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    specials = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(CORPUS, trainer)
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.Sequence(
        [
            processors.ByteLevel(trim_offsets=False),
            processors.TemplateProcessing(
                single="[CLS] $A [SEP]",
                pair="[CLS] $A [SEP] $B [SEP]",
                special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
            ),
        ]
    )
    return tok


def unigram_tokenizer():
    """Unigram with a Metaspace pre-tokenizer and DeBERTa-v3's pair template."""
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.Sequence(
        [normalizers.Replace("``", '"'), normalizers.Replace("''", '"')]
    )
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always")
    specials = ["[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]"]
    trainer = trainers.UnigramTrainer(
        vocab_size=300, special_tokens=specials, unk_token="[UNK]", show_progress=False
    )
    tok.train_from_iterator(CORPUS, trainer)
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS]:0 $A:0 [SEP]:0",
        pair="[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
    )
    return tok


def sentencepiece_tokenizer(dir_, corpus_lines, vocab_size, head, tail, single, pair):
    """A tokenizer.json as transformers' converters build one from a SentencePiece model:
    the model here is a tiny Unigram one trained on `corpus_lines` with the NFKC rules,
    its learned pieces between the family's own specials `head` and `tail`."""
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2

    corpus = dir_ / "spm-corpus.txt"
    corpus.write_text("\n".join(corpus_lines) + "\n")
    prefix = dir_ / "spm"
    spm.SentencePieceTrainer.train(
        input=str(corpus),
        model_prefix=str(prefix),
        model_type="unigram",
        vocab_size=vocab_size,
        character_coverage=1.0,
        normalization_rule_name="nmt_nfkc",
        num_threads=1,
        seed_sentencepiece_size=1000,
        minloglevel=2,
    )
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString((dir_ / "spm.model").read_bytes())
    for path in (corpus, dir_ / "spm.model", dir_ / "spm.vocab"):
        path.unlink()
    # SentencePiece's own three specials (<unk> <s> </s>) give way to the family's.
    vocab = [(token, 0.0) for token in head]
    vocab += [(piece.piece, piece.score) for piece in proto.pieces[3:]]
    vocab += [(token, 0.0) for token in tail]
    tok = Tokenizer(models.Unigram(vocab, unk_id=head.index("<unk>"), byte_fallback=False))
    tok.normalizer = normalizers.Sequence(
        [
            normalizers.Precompiled(proto.normalizer_spec.precompiled_charsmap),
            normalizers.Replace(tokenizers.Regex(" {2,}"), " "),
        ]
    )
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always")
    specials = sorted({t for t in (single + " " + pair).split() if not t.startswith("$")})
    tok.post_processor = processors.TemplateProcessing(
        single=single,
        pair=pair,
        special_tokens=[(t, head.index(t)) for t in specials],
    )
    tok.add_special_tokens(head + tail)
    return tok


def xlm_roberta_tokenizer(dir_):
    """XLM-R's: fairseq's dictionary (<s> <pad> </s> <unk> first, <mask> last) and the pair
    template <s> A </s></s> B </s>."""
    return sentencepiece_tokenizer(
        dir_,
        CORPUS + CHINESE,
        190,
        head=["<s>", "<pad>", "</s>", "<unk>"],
        tail=["<mask>"],
        single="<s> $A </s>",
        pair="<s> $A </s> </s> $B </s>",
    )


def t5_tokenizer(dir_):
    """T5's: <pad> </s> <unk> first, </s> after each sequence (the <extra_id_N> sentinels,
    which a checker never reads, are left out)."""
    return sentencepiece_tokenizer(
        dir_,
        CORPUS,
        110,
        head=["<pad>", "</s>", "<unk>"],
        tail=[],
        single="$A </s>",
        pair="$A </s> $B </s>",
    )


def encode(tok, first, second):
    enc = tok.encode(first, second)
    return enc.ids, enc.type_ids, enc.sequence_ids


def modernbert_tokens(dir_):
    tok = bpe_tokenizer()
    config = transformers.ModernBertConfig(
        vocab_size=tok.get_vocab_size(),
        **TINY,
        # LettuceDetect-base's base model: a global layer every third (layer 0 here), local
        # layers (layer 1 here) see 128 tokens around; a 16-token window makes the local
        # mask bite on the fixture inputs.
        global_attn_every_n_layers=3,
        local_attention=16,
        global_rope_theta=160000.0,
        local_rope_theta=10000.0,
        pad_token_id=tok.token_to_id("[PAD]"),
        cls_token_id=tok.token_to_id("[CLS]"),
        sep_token_id=tok.token_to_id("[SEP]"),
        bos_token_id=tok.token_to_id("[CLS]"),
        eos_token_id=tok.token_to_id("[SEP]"),
        # LettuceDetect's checkpoints name their labels only by number: 0 is a supported
        # token, 1 a hallucinated one.
        id2label={0: "LABEL_0", 1: "LABEL_1"},
        label2id={"LABEL_0": 0, "LABEL_1": 1},
        classifier_pooling="mean",
    )
    model = seeded(transformers.ModernBertForTokenClassification, config)
    cases = []
    for first, second in PAIRS:
        ids, _, seq = encode(tok, first, second)
        with torch.no_grad():
            logits = model(
                input_ids=torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long)
            ).logits[0]
        cases.append(
            {
                "first": first,
                "second": second,
                "ids": ids,
                "logits": logits.tolist(),
                "labels": [
                    int(l) if s == 1 else None for l, s in zip(logits.argmax(-1).tolist(), seq)
                ],
            }
        )
    save(dir_, model, tok, cases)


def deberta_v2_nli(dir_):
    tok = unigram_tokenizer()
    config = transformers.DebertaV2Config(
        vocab_size=tok.get_vocab_size(),
        **TINY,
        type_vocab_size=0,
        # DeBERTa-v3's relative attention, as in MiniCheck's and the NLI checkers' configs.
        relative_attention=True,
        max_relative_positions=-1,
        position_buckets=256,
        pos_att_type=["p2c", "c2p"],
        norm_rel_ebd="layer_norm",
        share_att_key=True,
        position_biased_input=False,
        hidden_act="gelu",
        pooler_hidden_size=32,
        pooler_dropout=0.0,
        pooler_hidden_act="gelu",
        pad_token_id=tok.token_to_id("[PAD]"),
        id2label={0: "entailment", 1: "neutral", 2: "contradiction"},
        label2id={"entailment": 0, "neutral": 1, "contradiction": 2},
    )
    model = seeded(transformers.DebertaV2ForSequenceClassification, config)
    save(dir_, model, tok, sequence_cases(model, tok, PAIRS, token_types=True))


def xlm_roberta_nli(dir_):
    dir_.mkdir(parents=True, exist_ok=True)
    tok = xlm_roberta_tokenizer(dir_)
    tiny = dict(TINY, max_position_embeddings=514)
    config = transformers.XLMRobertaConfig(
        vocab_size=tok.get_vocab_size(),
        **tiny,
        type_vocab_size=1,
        hidden_act="gelu",
        layer_norm_eps=1e-5,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        # The XNLI checkpoints' order (e.g. xlm-roberta-large-xnli): entailment is last.
        id2label={0: "contradiction", 1: "neutral", 2: "entailment"},
        label2id={"contradiction": 0, "neutral": 1, "entailment": 2},
    )
    model = seeded(transformers.XLMRobertaForSequenceClassification, config)
    # As XLM-R's tokenizer hands them over: ids and mask, no token types.
    save(dir_, model, tok, sequence_cases(model, tok, XLMR_PAIRS, token_types=False))


# MiniCheck-Flan-T5's reading of a (document, claim) pair (MiniCheck's inference.py): the
# text "predict: " + document + "</s>" + claim, one decoder step from the decoder start
# token, and the softmax over the logits of the first tokens of "0" (unsupported) and "1"
# (supported), ids 3 and 209 in T5's vocabulary.
MINICHECK_PROMPT = "predict: {first}</s>{second}"
# Flan-T5's shape, shrunk (T5 v1.1: gated GELU, untied output layer, no position limit).
TINY_T5 = dict(
    d_model=32,
    d_kv=16,
    d_ff=48,
    num_layers=2,
    num_decoder_layers=2,
    num_heads=2,
    relative_attention_num_buckets=32,
    relative_attention_max_distance=128,
    feed_forward_proj="gated-gelu",
    tie_word_embeddings=False,
)


def t5_minicheck(dir_):
    dir_.mkdir(parents=True, exist_ok=True)
    tok = t5_tokenizer(dir_)
    config = transformers.T5Config(
        vocab_size=tok.get_vocab_size(),
        **TINY_T5,
        layer_norm_epsilon=1e-6,
        pad_token_id=0,
        eos_token_id=1,
        decoder_start_token_id=0,
        is_encoder_decoder=True,
    )
    model = seeded(transformers.T5ForConditionalGeneration, config)
    labels = [tok.encode(label, add_special_tokens=False).ids[0] for label in ("0", "1")]
    cases = []
    for first, second in PAIRS:
        ids = tok.encode(MINICHECK_PROMPT.format(first=first, second=second)).ids
        with torch.no_grad():
            logits = model(
                input_ids=torch.tensor([ids]),
                attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                decoder_input_ids=torch.tensor([[config.decoder_start_token_id]]),
            ).logits[0, 0]
        label_logits = logits[labels]
        cases.append(
            {
                "first": first,
                "second": second,
                "ids": ids,
                "label_ids": labels,
                "logits": label_logits.tolist(),
                "probabilities": torch.softmax(label_logits, -1).tolist(),
            }
        )
    save(dir_, model, tok, cases)


def seeded(model_class, config):
    """`model_class` over `config`, its architecture recorded, every weight drawn from SEED."""
    config.architectures = [model_class.__name__]
    torch.manual_seed(SEED)
    model = model_class._from_config(config, attn_implementation="eager")
    init_visibly(model)
    return model


def sequence_cases(model, tok, pairs, token_types):
    """A sequence head's logits and probabilities on `pairs`; with the tokenizer's token
    types when the family's tokenizer hands them to the model."""
    cases = []
    for first, second in pairs:
        ids, types, _ = encode(tok, first, second)
        inputs = {
            "input_ids": torch.tensor([ids]),
            "attention_mask": torch.ones(1, len(ids), dtype=torch.long),
        }
        case = {"first": first, "second": second, "ids": ids}
        if token_types:
            inputs["token_type_ids"] = torch.tensor([types])
            case["type_ids"] = types
        with torch.no_grad():
            logits = model(**inputs).logits[0]
        case["logits"] = logits.tolist()
        case["probabilities"] = torch.softmax(logits, -1).tolist()
        cases.append(case)
    return cases


def init_visibly(model):
    """Every weight drawn at random, norms and biases included: initialised to ones and
    zeros they would hide a missing or misplaced weight from the comparison."""
    gen = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for name, param in sorted(model.named_parameters()):
            centre = 1.0 if param.dim() == 1 and "norm" in name.lower() else 0.0
            param.copy_(torch.randn(param.shape, generator=gen) * 0.2 + centre)
    model.eval()


def save(dir_, model, tok, cases):
    dir_.mkdir(parents=True, exist_ok=True)
    # model.safetensors and config.json as transformers writes them.
    model.save_pretrained(dir_, safe_serialization=True)
    tok.save(str(dir_ / "tokenizer.json"))
    reference = {
        "made_by": "scripts/checker-fixtures.py",
        "versions": versions(),
        "seed": SEED,
        "cases": cases,
    }
    (dir_ / "reference.json").write_text(json.dumps(reference, indent=1) + "\n")


FAMILIES = {
    "modernbert-tokens": modernbert_tokens,
    "deberta-v2-nli": deberta_v2_nli,
    "xlm-roberta-nli": xlm_roberta_nli,
    "t5-minicheck": t5_minicheck,
}


def main():
    # Named fixtures only, if any are named: tokenizers' trainers are not reproducible from
    # run to run, so remaking one family would change another's committed tokenizer.
    for name in sys.argv[1:] or FAMILIES:
        FAMILIES[name](OUT / name)
    for path in sorted(OUT.rglob("*")):
        if path.is_file():
            print(f"{path.relative_to(ROOT)}\t{path.stat().st_size}")


if __name__ == "__main__":
    main()
