"""studies.pr_scale: P and R per model size, their trend, and the paper's numbers beside ours
(configs/pr_scale.yaml), on hand-built tables."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from genmetrics.analysis.paper_comparison import paper_tables
from genmetrics.studies.pr_scale.tables import (
    comparison,
    ours_table,
    size_series,
    size_trend,
    study_markdown,
)

SIZES = {"small": 1.0, "mid": 2.0, "big": 10.0}


def _scores() -> pd.DataFrame:
    """Three sizes on dataset d1 (recall grows, precision falls), two on d2; a model with no
    size (left out), and two seeds of `big` on d1."""
    rows = []

    def add(ds, model, seed, entry, name, value, lo=math.nan, hi=math.nan, n=100):
        rows.append(
            {"dataset": ds, "model": model, "seed": seed, "entry": entry, "name": name}
            | {"value": value, "lower": lo, "upper": hi, "n_candidate": n, "n_reference": 120}
        )

    for model, p, r in (("small", 0.9, 0.50), ("mid", 0.85, 0.55), ("big", 0.8, 0.70)):
        add("d1", model, 0, "precision_recall", "precision", p, p - 0.02, p + 0.02)
        add("d1", model, 0, "precision_recall", "recall", r, r - 0.03, r + 0.03)
        add("d1", model, 0, "mauve", "mauve", r / 2)
        add("d1", model, 0, "prd", "f8", r)
        add("d1", model, 0, "prd", "f1_8", p)
    add("d1", "big", 1, "precision_recall", "recall", 0.80, 0.76, 0.85, n=90)
    add("d1", "big", 1, "precision_recall", "precision", 0.8, 0.78, 0.82, n=90)
    add("d1", "nosize", 0, "precision_recall", "recall", 0.1, 0.0, 0.2)
    add("d2", "big", 0, "precision_recall", "recall", 0.60, 0.55, 0.65)
    add("d2", "small", 0, "precision_recall", "recall", 0.62, 0.58, 0.66)
    add("d2", "big", 0, "precision_recall", "precision", 0.7, 0.6, 0.8)
    add("d2", "small", 0, "precision_recall", "precision", 0.7, 0.6, 0.8)
    return pd.DataFrame(rows)


def test_size_series_orders_by_size_and_averages_seeds():
    s = size_series(_scores(), SIZES)
    assert list(zip(s.dataset, s.model, strict=True)) == [
        ("d1", "small"),
        ("d1", "mid"),
        ("d1", "big"),
        ("d2", "small"),
        ("d2", "big"),
    ]
    big = s[(s.dataset == "d1") & (s.model == "big")].iloc[0]
    assert big["recall"] == pytest.approx(0.75)  # two seeds: 0.70 and 0.80
    assert (big["recall_lower"], big["recall_upper"]) == (pytest.approx(0.67), 0.85)
    assert big["n_candidate"] == 90 and big["size_b"] == 10.0
    assert s.loc[0, "mauve"] == pytest.approx(0.25) and s.loc[0, "f1_8"] == pytest.approx(0.9)
    assert math.isnan(s[s.dataset == "d2"]["mauve"].iloc[0])


def test_size_trend_reads_growth_and_separation():
    t = size_trend(size_series(_scores(), SIZES)).set_index(["dataset", "value"])
    rec = t.loc[("d1", "recall")]
    assert rec["grows"] and rec["separated"] == 1 and rec["spearman"] == pytest.approx(1.0)
    assert rec["change"] == pytest.approx(0.25) and rec["models"] == "small < mid < big"
    prec = t.loc[("d1", "precision")]
    assert not prec["grows"] and prec["separated"] == -1 and prec["spearman"] == -1.0
    d2 = t.loc[("d2", "recall")]  # two models: no rank correlation; intervals overlap
    assert not d2["grows"] and d2["separated"] == 0 and math.isnan(d2["spearman"])


def _correlation() -> pd.DataFrame:
    names = ["precision", "recall", "mauve", "f1_8", "f8"]
    rows = []
    for i, a in enumerate(names):
        for j, b in enumerate(names[i + 1 :], start=i + 1):
            r = round(0.1 * (i + 1) + 0.01 * j, 2) * (-1 if b == "f8" else 1)
            rows.append(
                {"scope": "pooled", "method": "spearman", "metric_a": b, "metric_b": a}
                | {"r": r, "low": r - 0.1, "high": r + 0.1, "n": 11}
            )
            rows.append(
                {"scope": "d1", "method": "spearman", "metric_a": a, "metric_b": b}
                | {"r": 0.0, "low": 0.0, "high": 0.0, "n": 3}
            )
    return pd.DataFrame(rows)


def _sweep() -> pd.DataFrame:
    rows = []
    for source, top in (("webtext/gpt2-117m/seed0", 921), ("xsum/gpt-j-6B/seed0", 486)):
        for n in (100, 500, top):
            rows.append(
                {"sweep": "n", "source": source, "value": n, "precision": n / 1000}
                | {"recall": n / 2000, "runs": 5, "other": 4, "precision_min": n / 1000 - 0.01}
                | {"precision_max": n / 1000 + 0.01, "recall_min": 0.0, "recall_max": 1.0}
            )
    return pd.DataFrame(rows)


def test_comparison_puts_the_papers_cells_beside_ours():
    ours = ours_table(_correlation(), _sweep())
    side = comparison(ours).set_index(["table", "row", "column"])
    # Fig. A.5: the paper's 0.16 beside our pooled Spearman r of (precision, recall), which
    # the correlation table holds the other way round (recall, precision)
    cell = side.loc[("Fig. A.5", "Precision", "Recall")]
    assert cell["paper_value"] == 0.16 and cell["ours"] == pytest.approx(0.11)
    assert cell["lower"] == pytest.approx(0.01) and cell["n"] == 11
    assert cell["direction_agrees"]
    f8 = side.loc[("Fig. A.5", "F_{1/8}", "F_8")]  # ours negative, the paper's 0.88 positive
    assert f8["ours"] == pytest.approx(-0.44) and f8["direction_agrees"] is False
    assert len(side.loc["Fig. A.5"]) == 10
    row6 = "Llama-2 7B Chat against N (k = 4)"
    assert side.loc[("Fig. 6", row6, "N of the plateau")]["ours"] == 921
    assert side.loc[("Fig. 6", row6, "N of the plateau")]["paper_value"] == 3000
    prec = side.loc[("Fig. 6", row6, "precision")]
    assert prec["ours"] == pytest.approx(0.921) and math.isnan(prec["paper_value"])
    assert prec["upper"] == pytest.approx(0.931)
    # every cell of the paper's table is answered
    assert len(side) == len(paper_tables("pr-scale"))


def test_study_markdown_holds_every_table():
    series = size_series(_scores(), SIZES)
    side = comparison(ours_table(_correlation(), _sweep()))
    md = study_markdown(side, series, size_trend(series), _sweep())
    assert "| Fig. A.5 | Precision | Recall | 0.16 | 0.110 |" in md
    assert "| d1 | recall | small < mid < big | 0.500 < 0.550 < 0.750 |" in md
    assert "| webtext/gpt2-117m/seed0 | 921 | 0.921 | 0.461 | 5 |" in md
    assert "| Fig. 6 | Llama-2 7B Chat against N (k = 4) | N of the plateau | 3000 | 921 |" in md
