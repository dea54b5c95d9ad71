"""Texts needed for a target interval width (genmetrics.analysis.sample_size): the formula by
hand, the table from a tidy score table, and on real texts (the data mirror) the width
predicted at N = 80 from runs at N = 40 against the width measured at 80."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from genmetrics.analysis.sample_size import (
    predicted_width,
    sample_sizes,
    target_width,
    texts_needed,
)
from genmetrics.io import read_jsonl
from genmetrics.metrics import get
from genmetrics.scoring.from_files import score_loaded
from genmetrics.scoring.intervals import DEFAULTS


def test_the_formula_by_hand():
    assert predicted_width(0.1, 40, 80) == pytest.approx(0.1 / math.sqrt(2))
    assert texts_needed(0.1, 40, 0.05) == 160  # 40·(0.1/0.05)² exactly
    assert texts_needed(0.1, 40, 0.03) == math.ceil(40 * (0.1 / 0.03) ** 2) == 445
    assert texts_needed(0.0, 40, 0.05) is None
    assert target_width("0–1", 0.4, 0.02) == pytest.approx(0.02)
    assert target_width("%", 40.0, 0.02) == pytest.approx(2.0)
    assert target_width("≥ 0", 250.0, 0.02) == pytest.approx(5.0)  # unbounded: of the value


def test_the_table_from_scores():
    """Two seeds of a model with widths 0.08 and 0.12 at 40 texts: width 0.10, and at the
    0.01 target 40·(0.10/0.01)² = 4,000 texts; a value without an interval is left out."""
    base = {"dataset": "d", "model": "m", "reference": "references", "metric": "distinct_n"}
    base |= {"entry": "distinct_n", "name": "distinct_1", "scale": "0–1", "n_candidate": 40}
    rows = [
        base | {"seed": 0, "value": 0.5, "lower": 0.46, "upper": 0.54},
        base | {"seed": 1, "value": 0.6, "lower": 0.54, "upper": 0.66},
        base | {"seed": 0, "model": "m2", "value": 0.6, "lower": None, "upper": None},
    ]
    t = sample_sizes(pd.DataFrame(rows))
    assert set(t["model"]) == {"m"} and list(t["target"]) == [0.01, 0.02, 0.05]
    assert t["width"].iloc[0] == pytest.approx(0.10)
    assert list(t["n_needed"]) == [4000, 1000, 160]
    assert (t["n_seeds"] == 2).all() and t["point"].iloc[0] == pytest.approx(0.55)


def hashed_features(texts: list[str], dim: int = 32) -> np.ndarray:
    """Bag-of-words features: word counts hashed (crc32) into 512 bins, L2-normalised, then
    a seeded Gaussian projection to ``dim``: a cheap, deterministic featurizer of real texts."""
    import zlib

    x = np.zeros((len(texts), 512), dtype=np.float32)
    for i, t in enumerate(texts):
        for w in t.lower().split():
            x[i, zlib.crc32(w.encode()) % 512] += 1
    x /= np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-9)
    proj = np.random.default_rng(0).normal(size=(512, dim)).astype(np.float32)
    return x @ proj


#: entry → (metric, params, input, reference)
CHECKED = {
    "precision_recall": ("precision_recall", {"k": 4}, "emb", True),
    "distinct_n": ("distinct_n", {"tokenizer": "whitespace"}, "text", False),
    "mattr": ("mattr", {"window": 10}, "text", False),
    "compression_ratio": ("compression_ratio", {}, "text", False),
}


def n_sweep(shared: Path, draws: int = 3) -> pd.DataFrame:
    """Per checked value: the mean width over ``draws`` disjoint draws of N = 40 and of N = 80
    texts per side (GPT-2 small top-k 40 samples against WebText, 50 words each, the
    references tied to the candidates by position so both sides are resampled), 200
    half-samples each."""
    model = [r["text"] for r in read_jsonl(shared / "gpt2_generations/gpt2-small_topk40.jsonl")]
    human = [r["text"] for r in read_jsonl(shared / "webtext/webtext_short.jsonl")][:817]
    cut = [" ".join(t.split()[:50]) for t in model]
    ref = [" ".join(t.split()[:50]) for t in human]
    order = np.random.default_rng(0).permutation(len(cut))
    feats = {"model": hashed_features(cut), "human": hashed_features(ref)}
    iv = {**DEFAULTS, "asked": False}
    rows = []
    start = 0
    for n in (40, 80):
        for _ in range(draws):
            idx = order[start : start + n]
            start += n
            ids = [f"u{i}" for i in range(n)]
            cand_rows = [{"id": f"c{i}", "prompt_id": u} for i, u in enumerate(ids)]
            ref_rows = [{"id": u} for u in ids]
            for entry, (metric, params, kind, with_ref) in CHECKED.items():
                cand = feats["model"][idx] if kind == "emb" else [cut[i] for i in idx]
                r = feats["human"][idx] if kind == "emb" else None
                rec = score_loaded(
                    get(metric),
                    cand,
                    cand_rows,
                    r if with_ref else None,
                    ref_rows if with_ref else None,
                    params=params,
                    interval=iv,
                )
                for v in get(metric).headline:
                    w = rec["interval"]["upper"][v] - rec["interval"]["lower"][v]
                    rows.append({"entry": entry, "value": v, "n": n, "width": w})
    return pd.DataFrame(rows).groupby(["entry", "value", "n"])["width"].mean().unstack("n")


def test_width_predicted_at_80_from_40_against_the_width_measured_at_80(shared_data):
    """For kNN precision and recall (hashed bag-of-words features), distinct-1, MATTR and
    the compression ratio: the width at 80 predicted from the mean width at 40 (÷√2) lies
    within 35 % of the mean width measured at 80 (3 disjoint draws each: the widths
    themselves vary by about 15 % from draw to draw). The docs' sample-size page gives both
    numbers of each."""
    w = n_sweep(shared_data)
    w["predicted_80"] = [predicted_width(x, 40, 80) for x in w[40]]
    print(w.to_string())
    ratio = w["predicted_80"] / w[80]
    assert len(w) == 5
    assert ((ratio > 1 / 1.35) & (ratio < 1.35)).all(), ratio
