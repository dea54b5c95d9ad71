"""Texts needed for a target interval width (genmetrics.analysis.sample_size): the formula by
hand, the table from a tidy score table, and on real texts (the data mirror) the width
predicted at N = 80 from runs at N = 40 against the width measured at 80: for kNN precision
and recall by the P/R study's N sweep on MiniLM features (slow), for the text statistics by
disjoint draws."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from genmetrics import GenmetricsError
from genmetrics.analysis.distribution import sweep_table
from genmetrics.analysis.sample_size import (
    predicted_width,
    sample_sizes,
    sweep_check,
    sweep_widths,
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


def test_sweep_widths_by_hand():
    """Repeats 0.4, 0.5, 0.6 at N = 10: sd 0.1, width 2·1.96·0.1; the sd
    over subsamples of a pool of 28 is divided by √((28 − 10)/27) = √(2/3). The check: a width 0.2 at 10
    predicts 0.2/√2 at 20."""
    rows = pd.DataFrame({"n": [10] * 3 + [20] * 3, "repeat": [0, 1, 2] * 2})
    rows["precision"] = [0.4, 0.5, 0.6, 0.45, 0.5, 0.55]
    w = sweep_widths(rows, ("precision",))
    assert w["width"].iloc[0] == pytest.approx(2 * 1.959964 * 0.1, rel=1e-6)
    w = sweep_widths(rows, ("precision",), pool=28)
    assert w["sd"].iloc[0] == pytest.approx(0.1 / math.sqrt(2 / 3))
    c = sweep_check({"precision": 0.2}, 10, w, 20)
    assert c["predicted"].iloc[0] == pytest.approx(0.2 / math.sqrt(2))
    assert c["ratio"].iloc[0] == pytest.approx(c["predicted"].iloc[0] / w["width"].iloc[1])
    with pytest.raises(GenmetricsError, match="N = 20 is not below the pool of 20"):
        sweep_widths(rows, ("precision",), pool=20)


def real_texts(shared: Path) -> tuple[list[str], list[str]]:
    """GPT-2 small top-k 40 samples and as many WebText texts (817 each), cut to 50 words."""
    model = [r["text"] for r in read_jsonl(shared / "gpt2_generations/gpt2-small_topk40.jsonl")]
    human = [r["text"] for r in read_jsonl(shared / "webtext/webtext_short.jsonl")][: len(model)]
    return [" ".join(t.split()[:50]) for t in model], [" ".join(t.split()[:50]) for t in human]


def tied_rows(n: int) -> tuple[list[dict], list[dict]]:
    """Candidate rows tied to reference rows by position (both sides resampled together)."""
    ids = [f"u{i}" for i in range(n)]
    return [{"id": f"c{i}", "prompt_id": u} for i, u in enumerate(ids)], [{"id": u} for u in ids]


#: the P/R study's entry (configs/pr_scale.yaml): kNN precision/recall, k = 4, PCA 0.9
PR_PARAMS = {"k": 4, "pca": 0.9, "strict": True, "seed": 0}


#: the P/R studies' featurizers: configs/pr_scale.yaml's MiniLM, configs/webtext.yaml's SmolLM2
FEATURIZERS = {
    "minilm": {"kind": "sentence_encoder", "max_tokens": 128, "batch_size": 32},
    "smollm2": {"kind": "causal_lm", "layer": -1, "max_tokens": 256, "batch_size": 16},
}


def pr_sweep_check(
    shared: Path, model: Path, featurizer: str, repeats: int = 100, runs: int = 20
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The P/R study's N sweep (``sweep_table``, the sweep rule's function: N = 40 and 80,
    ``repeats`` subsamples of the 817 texts per side) on the study's LM features
    (:data:`FEATURIZERS`), its widths (:func:`sweep_widths`, finite-pool corrected), and the
    mean width of ``runs`` runs at N = 40 (disjoint draws, the candidates tied to references
    by position, 200 half-samples): predicted at 80 against the sweep's."""
    from genmetrics.features.embed import embed_texts

    cut, ref = real_texts(shared)
    enc = FEATURIZERS[featurizer]
    q, p = embed_texts(cut, model, **enc), embed_texts(ref, model, **enc)
    settings = {"ns": [40, 80], "ks": [4], "repeats": repeats, "params": PR_PARAMS}
    sweep = sweep_table(p, q, settings, source="webtext/gpt2-small_topk40")
    measured = sweep_widths(sweep[sweep["sweep"] == "n"], ("precision", "recall"), pool=len(cut))
    order = np.random.default_rng(0).permutation(len(cut))
    cand_rows, ref_rows = tied_rows(40)
    widths = {"precision": [], "recall": []}
    for r in range(runs):
        idx = order[40 * r : 40 * (r + 1)]
        rec = score_loaded(
            get("precision_recall"),
            q[idx],
            cand_rows,
            p[idx],
            ref_rows,
            params=PR_PARAMS,
            interval={**DEFAULTS, "asked": False},
        )
        for v in widths:
            widths[v].append(rec["interval"]["upper"][v] - rec["interval"]["lower"][v])
    run = {v: float(np.mean(w)) for v, w in widths.items()}
    return sweep_check(run, 40, measured, 80), measured


@pytest.mark.slow
@pytest.mark.parametrize("featurizer", list(FEATURIZERS))
def test_pr_width_predicted_at_80_against_the_pr_sweep(shared_data, featurizer, request):
    """kNN precision and recall on each study's LM features: the width predicted at 80 from the mean
    width of 20 runs at 40 lies within 30 % of the width the study's N sweep measured at 80
    (100 repeats: the measured width's own standard error is about 7 %, the runs' mean about
    5 %; 30 % is three of their combined standard errors plus the bias of a set statistic's
    spread against n^−1/2). The docs' sample-size page gives the numbers."""
    model = request.getfixturevalue(featurizer)  # the conftest fixture of that model's folder
    check, measured = pr_sweep_check(shared_data, model, featurizer)
    print(measured.to_string())
    print(check.to_string())
    assert len(check) == 2
    assert ((check["ratio"] > 1 / 1.3) & (check["ratio"] < 1.3)).all(), check


#: entry → (metric, params): statistics of the texts themselves
CHECKED = {
    "distinct_n": ("distinct_n", {"tokenizer": "whitespace"}),
    "mattr": ("mattr", {"window": 10}),
    "compression_ratio": ("compression_ratio", {}),
}


def n_sweep(shared: Path, draws: int = 3) -> pd.DataFrame:
    """Per checked value: the mean width over ``draws`` disjoint draws of N = 40 and of N = 80
    GPT-2 small top-k 40 samples (50 words each), 200 half-samples each."""
    cut, _ = real_texts(shared)
    order = np.random.default_rng(0).permutation(len(cut))
    iv = {**DEFAULTS, "asked": False}
    rows = []
    start = 0
    for n in (40, 80):
        cand_rows, _ = tied_rows(n)
        for _ in range(draws):
            idx = order[start : start + n]
            start += n
            for entry, (metric, params) in CHECKED.items():
                cand = [cut[i] for i in idx]
                rec = score_loaded(
                    get(metric), cand, cand_rows, None, None, params=params, interval=iv
                )
                for v in get(metric).headline:
                    w = rec["interval"]["upper"][v] - rec["interval"]["lower"][v]
                    rows.append({"entry": entry, "value": v, "n": n, "width": w})
    return pd.DataFrame(rows).groupby(["entry", "value", "n"])["width"].mean().unstack("n")


def test_width_predicted_at_80_from_40_against_the_width_measured_at_80(shared_data):
    """For distinct-1, MATTR and the compression ratio: the width at 80 predicted from the
    mean width at 40 (÷√2) lies within 35 % of the mean width measured at 80 (3 disjoint
    draws each: the widths themselves vary by about 15 % from draw to draw). The docs'
    sample-size page gives both numbers of each."""
    w = n_sweep(shared_data)
    w["predicted_80"] = [predicted_width(x, 40, 80) for x in w[40]]
    print(w.to_string())
    ratio = w["predicted_80"] / w[80]
    assert len(w) == 3
    assert ((ratio > 1 / 1.35) & (ratio < 1.35)).all(), ratio
