"""Fig. 7 pooled as the P/R paper pools it: correlation across runs, bootstrap over runs."""

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from genmetrics.analysis.run_correlation import run_correlation, run_points

X = [1.0, 2.0, 3.0, 4.0, 5.0]
Y = [2.0, 1.0, 4.0, 3.0, 5.0]  # ranks differ by d = (-1, 1, -1, 1, 0): sum d^2 = 4


def _tidy(rows):
    cols = ["dataset", "model", "seed", "reference", "metric", "entry", "name", "value"]
    return pd.DataFrame(rows, columns=cols)


def test_a_hand_computed_spearman_and_pearson_over_five_runs():
    points = pd.DataFrame({"a": X, "b": Y})
    t = run_correlation(points, n_boot=200, seed=0).set_index("method")
    # Spearman: 1 - 6 * 4 / (5 * (25 - 1)) = 0.8; the values are their ranks, so Pearson too
    assert t.loc["spearman", "r"] == pytest.approx(0.8)
    assert t.loc["pearson", "r"] == pytest.approx(0.8)
    assert int(t.loc["spearman", "n"]) == 5
    assert not t.loc["spearman", "too_few"]


def test_the_interval_is_the_bootstrap_over_runs_enumerated_exactly():
    """Every one of the 5^5 equally likely resamples of the runs, enumerated: the percentile
    interval of their Spearman r (constant resamples have none) against ours from 6,000
    seeded random resamples."""
    x, y = np.array(X), np.array(Y)
    rs = []
    for idx in itertools.product(range(5), repeat=5):
        xi, yi = x[list(idx)], y[list(idx)]
        if np.ptp(xi) == 0 or np.ptp(yi) == 0:
            continue
        rs.append(stats.spearmanr(xi, yi).statistic)
    low, high = np.quantile(rs, [0.025, 0.975])
    t = run_correlation(pd.DataFrame({"a": X, "b": Y}), ["a", "b"], ["spearman"], n_boot=6000)
    assert t.at[0, "low"] == pytest.approx(low, abs=0.04)
    assert t.at[0, "high"] == pytest.approx(high, abs=0.04)
    assert t.at[0, "low"] < t.at[0, "r"] <= t.at[0, "high"]
    again = run_correlation(pd.DataFrame({"a": X, "b": Y}), ["a", "b"], ["spearman"], n_boot=6000)
    assert again.at[0, "low"] == t.at[0, "low"]  # seeded


def test_a_monotone_pair_has_rank_correlation_one_in_every_resample():
    points = pd.DataFrame({"a": X, "b": np.array(X) ** 3})
    t = run_correlation(points, methods=["spearman"], n_boot=500).iloc[0]
    assert (t["r"], t["low"], t["high"]) == (pytest.approx(1.0),) * 3


def test_fewer_runs_than_five_report_nothing():
    t = run_correlation(pd.DataFrame({"a": X[:4], "b": Y[:4]}), n_boot=50)
    assert t["too_few"].all() and t["r"].isna().all()


def test_runs_are_model_and_n_with_seeds_averaged_and_no_references():
    rows = []
    for ds, n in (("bios-n0", 0), ("bios-n3", 3)):
        for model in ("chat", "base"):
            for seed in (0, 1):
                v = n + (0.5 if model == "chat" else 0.0) + seed * 0.1
                rows.append([ds, model, seed, "references", "pr", "precision_recall", "recall", v])
        rows.append([ds, "references", None, "references", "pr", "precision_recall", "recall", 9])
    variants = {"bios-n0": {"dataset": "bios", "n": 0}, "bios-n3": {"dataset": "bios", "n": 3}}
    pts = run_points(_tidy(rows), {"recall": "precision_recall/recall"}, variants)
    assert list(pts.index) == [("base", 0), ("base", 3), ("chat", 0), ("chat", 3)]
    # the mean over seeds 0 and 1: n + offset + 0.05; the references are no run
    assert pts["recall"].tolist() == pytest.approx([0.05, 3.05, 0.55, 3.55])
    assert pts["n_seeds"].tolist() == [2, 2, 2, 2]
