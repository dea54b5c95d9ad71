"""Coherence from features: Su & Collier's log-prob definition (conditional surprisal) against a
manual loop on tiny random LMs, and the SimCSE-style cosine with the offline MiniLM encoder."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from genmetrics import GenmetricsError
from genmetrics.metrics import compute

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
WORDS = "the a cat dog sat ran on under mat rug and then quickly slowly big small".split()


def _tokenizer(with_bos: bool):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(["<unk>", "<pad>", "<eos>", "<bos>", *WORDS])}
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    kw = {"bos_token": "<bos>"} if with_bos else {}
    return PreTrainedTokenizerFast(
        tokenizer_object=tk, unk_token="<unk>", pad_token="<pad>", eos_token="<eos>", **kw
    )


def _model(kind: str, vocab: int):
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    if kind == "gpt2":
        cfg = GPT2Config(vocab_size=vocab, n_positions=64, n_embd=32, n_layer=2, n_head=2)
        return GPT2LMHeadModel(cfg).eval()
    cfg = LlamaConfig(
        vocab_size=vocab,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=64,
    )
    return LlamaForCausalLM(cfg).eval()


RECORDS = [
    {"id": "r0", "prompt": "the cat sat on the mat", "continuation": "and then the dog ran"},
    {"id": "r1", "prompt": "a big dog", "continuation": "ran quickly under a small rug and sat"},
    {"id": "r2", "prompt": "", "continuation": "the cat"},  # empty prompt: context = [BOS]
    {"id": "r3", "prompt": "the dog", "continuation": "   "},  # skipped, as upstream
    {"id": "r4", "prompt": "slowly the small cat ran on the big mat then", "continuation": "sat"},
]


def _manual(net, tok, records) -> list[float]:
    """Upstream's procedure written out: one sequence at a time, [BOS]+prompt, then the
    continuation; mean over continuation tokens of log softmax(logits[t-1])[x_t]."""
    import torch

    start = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
    out = []
    for r in records:
        if not r["continuation"].strip().split():
            continue
        ctx = [start] + tok.convert_tokens_to_ids(tok.tokenize(r["prompt"]))
        cont = tok.convert_tokens_to_ids(tok.tokenize(r["continuation"]))
        ids = torch.tensor([ctx + cont])
        with torch.no_grad():
            logp = torch.log_softmax(net(input_ids=ids).logits[0].double(), dim=-1)
        lps = [float(logp[len(ctx) + j - 1, t]) for j, t in enumerate(cont)]
        out.append(float(np.mean(lps)))
    return out


def _logprob(folder, records, batch_size, prepend):
    from genmetrics.features.surprisal import surprisal_texts
    from genmetrics.metrics.kinds import part_texts

    kept, conts = part_texts(records, "continuation", "gen")
    by_id = {r["id"]: r for r in records}
    prompts = [by_id[r["id"]]["prompt"] for r in kept]
    seqs = surprisal_texts(
        conts, str(folder), contexts=prompts, batch_size=batch_size, prepend=prepend
    )
    return compute("coherence_logprob", seqs), len(records) - len(kept)


@pytest.mark.parametrize(("kind", "with_bos"), [("gpt2", True), ("llama", True), ("gpt2", False)])
def test_logprob_matches_manual_loop(tmp_path, kind, with_bos):
    tok = _tokenizer(with_bos)
    net = _model(kind, len(tok))
    folder = tmp_path / "lm"
    net.save_pretrained(folder)
    tok.save_pretrained(folder)
    expect = _manual(net, tok, RECORDS)
    prepend = "bos" if with_bos else "eos"  # upstream: BOS when the tokenizer has one, else EOS
    for batch_size in (1, 3):
        res, skipped = _logprob(folder, RECORDS, batch_size, prepend)
        assert skipped == 1 and res.n == {"candidate": 4, "excluded": 0}
        np.testing.assert_allclose(res.extras["per_row"], expect, atol=2e-5)
        assert res.values["coherence_logprob"] == pytest.approx(np.mean(expect), abs=2e-5)
    # a random LM over V tokens is near uniform: mean log-prob ≈ -ln V
    assert abs(res.values["coherence_logprob"] + np.log(len(tok))) < 0.5


def test_logprob_errors(tmp_path):
    with pytest.raises(GenmetricsError, match="no text has a scored token"):
        compute("coherence_logprob", [np.zeros(0), np.zeros(0)])
    from genmetrics.metrics.kinds import part_texts

    with pytest.raises(GenmetricsError, match="has no string 'continuation'"):
        part_texts([{"id": "a", "prompt": "a", "text": "b"}], "continuation", "gen")
    tok = _tokenizer(True)
    net = _model("gpt2", len(tok))
    net.save_pretrained(tmp_path / "lm")
    tok.save_pretrained(tmp_path / "lm")
    from genmetrics.features.surprisal import surprisal_texts

    with pytest.raises(GenmetricsError, match="context has 81 tokens, max_tokens=64"):
        surprisal_texts(["sat"], str(tmp_path / "lm"), contexts=["the cat " * 40], max_tokens=64)


def test_simcse_cosine_matches_manual_and_orders(minilm):
    import torch
    from transformers import AutoModel, AutoTokenizer

    path = DATA / "contrastive_search" / "wikitext103.jsonl"
    if not path.exists():
        pytest.skip("shared data missing")
    with open(path, encoding="utf-8") as f:
        rows = [json.loads(line) for _, line in zip(range(24), f, strict=False)]
    matched = [{"prompt": r["prompt"], "continuation": r["reference"]} for r in rows]
    shuffled = [
        {"prompt": r["prompt"], "continuation": rows[(i + 7) % len(rows)]["reference"]}
        for i, r in enumerate(rows)
    ]
    from genmetrics.features.embed import embed_texts

    def coh(rows, pooling="mean"):
        kw = {"kind": "sentence_encoder", "pooling": pooling, "batch_size": 16, "max_tokens": 256}
        conts = embed_texts([r["continuation"] for r in rows], str(minilm), **kw)
        prompts = embed_texts([r["prompt"] for r in rows], str(minilm), **kw)
        return compute("coherence", conts, prompts)

    res = coh(matched)
    # manual: MiniLM, mean pooling over the attention mask, cosine
    tok = AutoTokenizer.from_pretrained(minilm)
    net = AutoModel.from_pretrained(minilm).eval()

    def emb(texts):
        b = tok(texts, padding=True, truncation=True, max_length=256, return_tensors="pt")
        with torch.no_grad():
            h = net(**b).last_hidden_state
        m = b["attention_mask"].unsqueeze(-1).float()
        return ((h * m).sum(1) / m.sum(1)).double().numpy()

    a, b = emb([r["prompt"] for r in matched[:8]]), emb([r["continuation"] for r in matched[:8]])
    cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    np.testing.assert_allclose(res.extras["per_row"][:8], cos, atol=1e-5)
    # the human continuation of a prompt is more coherent with it than another prompt's
    off = coh(shuffled)
    assert res.values["coherence"] > off.values["coherence"] + 0.1
    same = coh([{"prompt": "A cat sat.", "continuation": "A cat sat."}])
    assert same.values["coherence"] == pytest.approx(1.0, abs=1e-6)
    # CLS pooling (the SimCSE-style path) gives a different score
    cls = coh(matched[:8], pooling="cls")
    assert cls.values["coherence"] != pytest.approx(float(np.mean(cos)), abs=1e-4)
