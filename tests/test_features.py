"""Surprisal against a manual log-softmax loop; embeddings against unbatched forwards; caching."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import build_model, build_tokenizer

from genmetrics import GenmetricsError
from genmetrics.features.embed import embed_texts
from genmetrics.features.surprisal import start_token, surprisal_texts

TEXTS = [
    "the cat sat on the mat .",
    "a dog ran",
    "the big red house and the small blue tree , then it was happy !",
    "quickly",
]


def manual_surprisal(model, ids: list[int]) -> np.ndarray:
    """One text at a time, no padding: −log softmax(logits[t−1])[x_t] for t ≥ 1."""
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0].double()
    out = []
    for t in range(1, len(ids)):
        out.append(-(logits[t - 1] - torch.logsumexp(logits[t - 1], 0))[ids[t]].item())
    return np.array(out)


@pytest.mark.parametrize("with_bos", [True, False])
def test_surprisal_matches_manual_log_softmax(with_bos):
    tok = build_tokenizer(with_bos=with_bos)
    model = build_model(len(tok))
    got = surprisal_texts(TEXTS, (model, tok), prepend="auto", batch_size=3)
    start = tok.bos_token_id if with_bos else tok.eos_token_id
    for text, s in zip(TEXTS, got, strict=True):
        ids = [start] + tok(text, add_special_tokens=False)["input_ids"]
        assert len(s) == len(ids) - 1  # every real token scored
        np.testing.assert_allclose(s, manual_surprisal(model, ids), atol=2e-5)
        assert s.dtype == np.float32


def test_surprisal_prepend_none_and_truncation():
    tok = build_tokenizer(with_bos=True)
    model = build_model(len(tok))
    got = surprisal_texts(TEXTS, (model, tok), prepend="none", max_tokens=5, batch_size=2)
    for text, s in zip(TEXTS, got, strict=True):
        ids = tok(text, add_special_tokens=False)["input_ids"][:5]
        assert len(s) == len(ids) - 1  # FACE convention: first token unscored
        np.testing.assert_allclose(s, manual_surprisal(model, ids), atol=2e-5)
    assert start_token(tok, "eos") == tok.eos_token_id
    with pytest.raises(GenmetricsError, match="prepend"):
        start_token(tok, "maybe")


def test_causal_lm_embedding_is_last_real_token_and_padding_invariant():
    tok = build_tokenizer(with_bos=True)
    model = build_model(len(tok))
    emb = embed_texts(TEXTS, (model, tok), kind="causal_lm", batch_size=4)
    assert emb.shape == (len(TEXTS), 32) and emb.dtype == np.float32
    for text, e in zip(TEXTS, emb, strict=True):
        ids = tok(text)["input_ids"]
        with torch.no_grad():
            h = model(torch.tensor([ids]), output_hidden_states=True).hidden_states[-1][0, -1]
        np.testing.assert_allclose(e, h.numpy(), atol=1e-5)


def test_sentence_encoder_mean_pooling(tiny_lm):
    tok = build_tokenizer(with_bos=False)
    model = build_model(len(tok)).model  # the bare decoder stack as an "encoder"
    emb = embed_texts(TEXTS, (model, tok), kind="sentence_encoder", batch_size=3)
    for text, e in zip(TEXTS, emb, strict=True):
        ids = tok(text)["input_ids"]
        with torch.no_grad():
            h = model(torch.tensor([ids])).last_hidden_state[0].mean(0)
        np.testing.assert_allclose(e, h.numpy(), atol=1e-5)


def test_feature_cache_reuses_texts(tmp_path, monkeypatch):
    tok = build_tokenizer()
    model = build_model(len(tok))
    calls = []
    import genmetrics.features.embed as embed_mod

    real = embed_mod._embed

    def counting(texts, *a, **k):
        calls.append(len(texts))
        return real(texts, *a, **k)

    monkeypatch.setattr(embed_mod, "_embed", counting)
    a = embed_texts(TEXTS[:3], (model, tok), cache_dir=tmp_path, cache_key="tiny")
    again = embed_texts(TEXTS[2::-1], (model, tok), cache_dir=tmp_path, cache_key="tiny")
    assert calls == [3]  # every text cached: nothing embedded, whatever the order
    np.testing.assert_array_equal(again, a[::-1])
    b = embed_texts(TEXTS, (model, tok), cache_dir=tmp_path, cache_key="tiny")
    # one chunk (of 256 sorted texts) with a text missing is computed whole, so its bytes
    # never depend on what an earlier run had cached
    assert calls == [3, 4]
    np.testing.assert_allclose(a, b[:3], rtol=0, atol=1e-6)
    c = embed_texts(TEXTS, (model, tok), max_tokens=3, cache_dir=tmp_path, cache_key="tiny")
    assert calls[-1] == 4  # other settings: other cache entries
    assert not np.allclose(c[0], b[0])


def test_empty_text_is_an_error():
    tok = build_tokenizer()
    with pytest.raises(GenmetricsError, match="text 1 is empty"):
        embed_texts(["ok", "  "], (build_model(len(tok)), tok))


def test_cache_follows_model_content_not_its_name(tmp_path):
    """Two checkpoints under one name (the folder rewritten with other weights): the second
    run recomputes instead of returning the first model's vectors."""
    from genmetrics.models.checkpoints import prepare_model

    tok = build_tokenizer()
    folder = tmp_path / "weights"
    spec = {"source": {"kind": "local", "path": str(folder)}}
    out = []
    for seed in (0, 1):
        build_model(len(tok), seed=seed).save_pretrained(folder)
        tok.save_pretrained(folder)
        manifest = prepare_model("same-name", spec, tmp_path / "models")
        out.append(embed_texts(TEXTS, manifest, cache_dir=tmp_path / "cache"))
    assert not np.allclose(out[0], out[1])
    # in place, behind the manifest's back: the stale recorded hash is not trusted either
    build_model(len(tok), seed=0).save_pretrained(folder)
    again = embed_texts(TEXTS, manifest, cache_dir=tmp_path / "cache")
    np.testing.assert_array_equal(again, out[0])
