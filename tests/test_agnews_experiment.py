"""Controlled experiment on real text (AG News test set, MiniLM sentence embeddings).

P = World + Sports; Q1 = World only (drops a mode), Q2 = other World + Sports texts (matched
control), Q3 = all four topics (half the mass outside P). Expected: recall(Q1) clearly below
recall(Q2), precision(Q3) clearly below precision(Q2); MAUVE ranks the matched control first.
"""

from __future__ import annotations

import numpy as np
import pytest

from genmetrics.analysis.distribution import (
    agnews_controlled_sets,
    check_orderings,
    controlled_experiment,
)

N_PER_SET = 300


def _embed_local(texts: list[str], model_dir) -> np.ndarray:
    """Mean pooling of MiniLM's last hidden states over the attention mask."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModel.from_pretrained(model_dir).eval()
    out = []
    with torch.no_grad():
        for i in range(0, len(texts), 32):
            enc = tok(
                texts[i : i + 32],
                padding=True,
                truncation=True,
                max_length=128,
                return_tensors="pt",
            )
            h = model(**enc).last_hidden_state
            m = enc["attention_mask"].unsqueeze(-1).to(h.dtype)
            out.append(((h * m).sum(1) / m.sum(1)).numpy())
    return np.concatenate(out).astype(np.float32)


def embed(texts: list[str]) -> np.ndarray:
    from genmetrics.data.assets import minilm_dir

    model_dir = minilm_dir()
    try:
        from genmetrics.features.embed import embed_texts
    except ImportError:
        return _embed_local(texts, model_dir)
    return embed_texts(texts, model_dir, kind="sentence_encoder", batch_size=32, max_tokens=128)


@pytest.fixture(scope="module")
def agnews_embeddings(shared_data):
    from genmetrics.io import read_jsonl

    path = shared_data / "ag_news" / "test.jsonl"
    if not path.exists():
        pytest.skip(f"{path} not present")
    sets = agnews_controlled_sets(read_jsonl(path), N_PER_SET, seed=0)
    names = list(sets)
    emb = embed([t for name in names for t in sets[name]])
    out, start = {}, 0
    for name in names:
        out[name] = emb[start : start + len(sets[name])]
        start += len(sets[name])
    assert emb.shape == (4 * N_PER_SET, 384) and np.isfinite(emb).all()
    return out


def test_precision_recall_orderings(agnews_embeddings):
    """Measured at seed 0 (k=4, PCA 0.9): recall Q1 0.85 vs Q2 0.92; precision Q3 0.85 vs
    Q2 0.96; coverage Q1 0.61 vs Q2 0.94 — margins below leave room for featurizer noise."""
    rows = controlled_experiment(agnews_embeddings, {"precision_recall": None})
    s = {(r["set"], r["value"]): r["score"] for r in rows}
    # mode dropping lowers recall (and coverage); extra modes lower precision (and density)
    assert s[("Q1", "recall")] < s[("Q2", "recall")] - 0.04
    assert s[("Q3", "precision")] < s[("Q2", "precision")] - 0.05
    assert s[("Q1", "coverage")] < s[("Q2", "coverage")] - 0.2
    assert s[("Q3", "density")] < s[("Q2", "density")] - 0.15
    # the matched control is high on both; the converse effects stay small
    assert s[("Q2", "precision")] > 0.85 and s[("Q2", "recall")] > 0.85
    assert s[("Q1", "precision")] > s[("Q3", "precision")]
    assert s[("Q3", "recall")] > s[("Q1", "recall")]
    assert check_orderings(rows, margin=0.04) == []


def test_mauve_and_prd_rank_the_control_first(agnews_embeddings):
    """Seed 0: MAUVE Q1 0.40, Q2 0.99, Q3 0.52; PRD F8 Q1 0.71 vs Q2 0.99, F1/8 Q3 0.75 vs
    Q2 0.94 (20 buckets: n/10 = 30 would leave ~10 texts per bucket)."""
    rows = controlled_experiment(
        agnews_embeddings, {"mauve": {"num_buckets": 20}, "prd": {"num_buckets": 20}}
    )
    s = {(r["set"], r["value"]): r["score"] for r in rows}
    assert s[("Q2", "mauve")] > max(s[("Q1", "mauve")], s[("Q3", "mauve")]) + 0.3
    # PRD: recall-like F_8 drops for the mode-dropping Q1, precision-like F_1/8 for Q3
    assert s[("Q1", "f8")] < s[("Q2", "f8")] - 0.15
    assert s[("Q3", "f1_8")] < s[("Q2", "f1_8")] - 0.1
