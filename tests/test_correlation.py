"""Metric–metric correlations with honest uncertainty (genmetrics.analysis.correlation):
point estimates against pandas/scipy per scope, pairwise-complete counts, the pooled
(within-dataset z-score) definition, bootstrap intervals, too-few handling, the figure."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau

from genmetrics.analysis.aggregate import COLUMNS
from genmetrics.analysis.correlation import (
    METHODS,
    MIN_POINTS,
    TABLE_COLUMNS,
    cluster_order,
    correlation_matrix,
    correlation_table,
    metric_correlation,
    pooled_scores,
    wide_scores,
)
from genmetrics.analysis.correlation_panels import heatmap_panels
from genmetrics.analysis.statistics import pairwise_correlation
from genmetrics.figures.correlation import correlation_heatmap
from genmetrics.metrics.registry import get


def tidy(data: dict[str, dict[str, list[float]]], metric: dict[str, str] | None = None):
    """The tidy scores table from {dataset: {score: values per source}} (NaN: not scored)."""
    rows = []
    for ds, cols in data.items():
        for name, values in cols.items():
            for i, v in enumerate(values):
                if np.isnan(v):
                    continue
                m = (metric or {}).get(name, name)
                rows.append([ds, f"model{i:03d}", 0, None, m, m, name, float(v)])
    df = pd.DataFrame(rows, columns=COLUMNS)
    df["seed"] = df["seed"].astype("Int64")
    return df


def cell(table, scope, method, a, b, col="r"):
    t = table[(table.scope == scope) & (table.method == method)]
    hit = t[((t.metric_a == a) & (t.metric_b == b)) | ((t.metric_a == b) & (t.metric_b == a))]
    assert len(hit) == 1, (scope, method, a, b)
    return hit[col].item()


NAN = np.nan
# two datasets; ties (w), a missing value (y on bbc, x on news) and a constant-ish score (c)
SMALL = {
    "bbc": {
        "x": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
        "y": [2.0, 1.0, 4.0, NAN, 5.0, 7.0, 6.0, 9.0],
        "w": [1.0, 1.0, 2.0, 2.0, 1.0, 3.0, 3.0, 2.0],
    },
    "news": {
        "x": [10.0, NAN, 30.0, 20.0, 50.0, 40.0],
        "y": [3.0, 1.0, 2.0, 6.0, 4.0, 5.0],
        "w": [0.5, 0.2, 0.9, 0.1, 0.7, 0.3],
    },
}


def test_point_estimates_match_pandas_and_scipy_per_scope():
    df = tidy(SMALL)
    table = correlation_table(df, n_boot=0, values="all")
    assert list(table.columns) == TABLE_COLUMNS
    assert set(table.scope) == {"bbc", "news", "pooled"}
    assert set(table.method) == set(METHODS)
    wide = wide_scores(df)
    pairs = [("x", "y"), ("x", "w"), ("y", "w")]
    for scope in ("bbc", "news"):
        sub = wide.xs(scope, level="dataset")
        for method in METHODS:
            expected = sub.corr(method=method)
            for a, b in pairs:
                assert cell(table, scope, method, a, b) == pytest.approx(expected.loc[a, b])
        for a, b in pairs:  # Kendall tau-b straight from scipy on the complete pairs
            ok = sub[[a, b]].dropna()
            tau = kendalltau(ok[a], ok[b]).statistic
            assert cell(table, scope, "kendall", a, b) == pytest.approx(tau)
    pooled = pooled_scores(wide)
    for method in METHODS:
        expected = pooled.corr(method=method)
        for a, b in pairs:
            assert cell(table, "pooled", method, a, b) == pytest.approx(expected.loc[a, b])
    # the estimates differ between scopes: a mix-up of scopes would fail above
    assert cell(table, "bbc", "spearman", "x", "w") != pytest.approx(
        cell(table, "news", "spearman", "x", "w")
    )


def test_n_counts_pairwise_complete_points():
    table = correlation_table(tidy(SMALL), n_boot=0, values="all")
    # bbc: y missing for one source; news: x missing for one
    assert cell(table, "bbc", "pearson", "x", "y", "n") == 7
    assert cell(table, "bbc", "pearson", "x", "w", "n") == 8
    assert cell(table, "news", "kendall", "x", "y", "n") == 5
    assert cell(table, "news", "kendall", "y", "w", "n") == 6
    assert cell(table, "pooled", "spearman", "x", "y", "n") == 12
    assert cell(table, "pooled", "spearman", "y", "w", "n") == 13
    assert table.groupby("scope").n_points.first().to_dict() == {"bbc": 8, "news": 6, "pooled": 14}


def test_pooled_is_the_correlation_of_within_dataset_z_scores():
    """Hand example: within each dataset x and y move in opposite directions, but dataset b
    has larger values of both, so the raw values pooled correlate positively."""
    data = {
        "a": {"x": [1.0, 2.0, 3.0, 4.0], "y": [4.0, 3.0, 1.0, 2.0]},
        "b": {"x": [11.0, 12.0, 13.0, 14.0], "y": [24.0, 22.0, 23.0, 21.0]},
    }
    df = tidy(data)
    # z-scores by hand: mean 2.5 / 12.5 / 2.5 / 22.5, sd (ddof=1) sqrt(5/3) in every column
    sd = np.sqrt(5 / 3)
    zx = np.array([-1.5, -0.5, 0.5, 1.5, -1.5, -0.5, 0.5, 1.5]) / sd
    zy = np.array([1.5, 0.5, -1.5, -0.5, 1.5, -0.5, 0.5, -1.5]) / sd
    z = pooled_scores(wide_scores(df))
    np.testing.assert_allclose(z["x"].to_numpy(), zx)
    np.testing.assert_allclose(z["y"].to_numpy(), zy)
    table = correlation_table(df, n_boot=0, values="all")
    # the pooled z-scores have mean 0 and sum of squares 3 + 3 (n - 1 per dataset), so
    # Pearson r = sum(zx * zy) / 6 = (-4 - 4) / (5/3) / 6
    assert cell(table, "pooled", "pearson", "x", "y") == pytest.approx(np.sum(zx * zy) / 6)
    assert cell(table, "pooled", "pearson", "x", "y") == pytest.approx(-0.8)
    raw = wide_scores(df).corr().loc["x", "y"]
    assert raw > 0.8  # what pooling raw values would have said
    # a score constant within one dataset has no z-score there
    data["b"]["y"] = [5.0, 5.0, 5.0, 5.0]
    z = pooled_scores(wide_scores(tidy(data)))
    assert z["y"].isna().sum() == 4 and z["x"].notna().all()


def test_bootstrap_replicates_use_pandas_definitions():
    """The vectorised per-replicate correlations equal pandas on data with ties, missing
    values and a constant column."""
    rng = np.random.default_rng(3)
    for trial in range(30):
        n = int(rng.integers(3, 12))
        x = rng.integers(0, 4, size=(n, 5)).astype(float)
        if trial % 2:
            x += rng.random((n, 5))
        x[rng.random((n, 5)) < 0.2] = np.nan
        x[:, 4] = 2.0
        for method in METHODS:
            got = pairwise_correlation(x, method).copy()
            want = pd.DataFrame(x).corr(method=method).to_numpy().copy()
            np.fill_diagonal(got, 0)
            np.fill_diagonal(want, 0)
            np.testing.assert_allclose(got, want, atol=1e-10, err_msg=f"{method} {trial}")


def synthetic(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    return tidy({"d": {"x": list(x), "y": list(x + 0.4 * rng.normal(size=n))}})


def test_bootstrap_intervals_contain_the_estimate_and_narrow_with_more_points():
    small = correlation_table(synthetic(10), n_boot=400, seed=1, values="all")
    large = correlation_table(synthetic(200), n_boot=400, seed=1, values="all")
    for method in METHODS:
        for t in (small, large):
            r, lo, hi = (cell(t, "d", method, "x", "y", c) for c in ("r", "low", "high"))
            assert lo <= r <= hi, method
            assert cell(t, "d", method, "x", "y", "n_boot_used") == 400
        w_small = cell(small, "d", method, "x", "y", "high") - cell(
            small, "d", method, "x", "y", "low"
        )
        w_large = cell(large, "d", method, "x", "y", "high") - cell(
            large, "d", method, "x", "y", "low"
        )
        assert w_large < w_small / 2, method
        assert cell(large, "d", method, "x", "y", "low") > 0.5  # strongly correlated


def test_same_seed_same_intervals_other_seed_other_intervals():
    df = synthetic(12)
    a = correlation_table(df, n_boot=200, seed=7, values="all")
    b = correlation_table(df, n_boot=200, seed=7, values="all")
    c = correlation_table(df, n_boot=200, seed=8, values="all")
    pd.testing.assert_frame_equal(a, b)
    assert not np.allclose(a[["low", "high"]].to_numpy(), c[["low", "high"]].to_numpy())
    np.testing.assert_array_equal(a["r"].to_numpy(), c["r"].to_numpy())  # estimates: no seed


def test_replicates_with_a_constant_column_are_skipped_and_counted():
    # z varies only through the last source: a resample that misses it (probability
    # (5/6)^6 = 0.33) has a constant z and no correlation
    df = tidy({"d": {"x": [1, 2, 3, 4, 5, 6.5], "z": [0, 0, 0, 0, 0, 1.0]}})
    t = correlation_table(df, n_boot=1000, seed=0, values="all")
    used = cell(t, "d", "spearman", "x", "z", "n_boot_used")
    assert 600 < used < 730
    assert np.isfinite(cell(t, "d", "spearman", "x", "z", "low"))
    # fewer than half usable: x and z vary only through one source each, and a resample has
    # both with probability 1 - 2 (4/5)^5 + (3/5)^5 = 0.42: no interval, the estimate stays
    df = tidy({"d": {"x": [0, 0, 0, 0, 1.0], "z": [0, 0, 0, 1.0, 0]}})
    t = correlation_table(df, n_boot=1000, seed=0, values="all")
    used = cell(t, "d", "pearson", "x", "z", "n_boot_used")
    assert 370 < used < 470
    assert np.isnan(cell(t, "d", "pearson", "x", "z", "low"))
    assert cell(t, "d", "pearson", "x", "z") == pytest.approx(-1 / 4)


def test_too_few_points_are_flagged_and_the_figure_still_written(tmp_path):
    three = tidy({"d": {"x": [1.0, 2.0, 3.0], "y": [1.0, 3.0, 2.0]}})
    t = correlation_table(three, n_boot=50, values="all")
    assert t.too_few.all() and t.r.isna().all() and t.low.isna().all()
    assert (t.n_points == 3).all()
    out = tmp_path / "fig.png"
    correlation_heatmap(heatmap_panels(t, "spearman"), out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # four points: still too few (MIN_POINTS = 5: with 4, even ρ = 1 has p = 2/4! = 0.083)
    four = tidy({"d": {"x": [1.0, 2.0, 3.0, 4.0], "y": [1.0, 3.0, 2.0, 4.0]}})
    t = correlation_table(four, n_boot=50, values="all")
    assert MIN_POINTS == 5 and t.too_few.all() and t.r.isna().all()
    five = tidy(
        {
            "d": {
                "x": [1.0, 2.0, 3.0, 4.0, 5.0],
                "y": [1.0, 3.0, 2.0, 4.0, 5.0],
                "z": [1, 2, 3, 4, NAN],
            }
        }
    )
    t = correlation_table(five, n_boot=50, values="all")
    assert not cell(t, "d", "spearman", "x", "y", "too_few")
    assert cell(t, "d", "spearman", "x", "y") == pytest.approx(0.9)
    # per cell: z is scored for 4 sources only
    assert cell(t, "d", "spearman", "x", "z", "too_few")
    assert np.isnan(cell(t, "d", "spearman", "x", "z"))
    correlation_heatmap(heatmap_panels(t, "kendall", cluster=False), out)
    assert out.stat().st_size > 0


def _heatmap_texts(monkeypatch, panels, path) -> list[str]:
    import genmetrics.figures.correlation as module

    figs = []
    save = module._save
    monkeypatch.setattr(module, "_save", lambda fig, p: (figs.append(fig), save(fig, p)))
    correlation_heatmap(panels, path)
    (fig,) = figs
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def test_heatmap_does_not_print_a_degenerate_interval(tmp_path, monkeypatch):
    """x and y rank six sources identically: every bootstrap resample gives ρ = 1 again, so
    the percentile interval is [1, 1], which is no interval: the cell says n and "no
    interval" instead; a real interval (x with z) is printed."""
    six = tidy(
        {
            "d": {
                "x": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
                "y": [2.0, 4.0, 6.0, 8.0, 10.0, 13.0],
                "z": [0.3, -1.2, 0.8, 0.1, -0.4, 1.5],
            }
        }
    )
    t = correlation_table(six, n_boot=200, seed=0, values="all")
    assert cell(t, "d", "spearman", "x", "y") == 1.0
    assert cell(t, "d", "spearman", "x", "y", "low") == cell(t, "d", "spearman", "x", "y", "high")
    assert cell(t, "d", "spearman", "x", "y", "degenerate_interval")
    assert not cell(t, "d", "spearman", "x", "z", "degenerate_interval")
    assert (t["level"] == 0.95).all()
    texts = _heatmap_texts(
        monkeypatch, heatmap_panels(t, "spearman", cluster=False), tmp_path / "h.png"
    )
    same_bounds = re.compile(r"\[\s*(-?[\d.]+),\s*\1\s*\]")  # [1.00, 1.00], [1.0, 1.0], …
    assert not any(same_bounds.search(s) for s in texts), texts
    assert "n=6, no interval" in texts
    lo, hi = cell(t, "d", "spearman", "x", "z", "low"), cell(t, "d", "spearman", "x", "z", "high")
    assert f"[{lo:.2f}, {hi:.2f}]" in texts


def test_heatmap_panel_of_four_sources_says_too_few(tmp_path, monkeypatch):
    four = tidy({"d": {"x": [1.0, 2.0, 3.0, 4.0], "y": [2.0, 4.0, 6.0, 9.0]}})
    t = correlation_table(four, n_boot=50, values="all")
    texts = _heatmap_texts(monkeypatch, heatmap_panels(t, "spearman"), tmp_path / "h.png")
    assert any("too few" in s and "4 scored sources" in s for s in texts), texts
    assert not any(s.startswith("1.00") for s in texts), texts


def test_directed_values_only_and_figure_subset():
    df = tidy(
        {"d": {"precision": [0.1, 0.5, 0.3, 0.9], "mattr": [0.2, 0.4, 0.6, 0.8]}},
        metric={"precision": "precision_recall"},
    )
    extra = df[df.name == "mattr"].assign(name="mattr_std", value=[0.01, 0.03, 0.02, 0.05])
    df = pd.concat([df, extra], ignore_index=True)
    t = correlation_table(df, n_boot=0)
    names = set(t.metric_a) | set(t.metric_b)
    assert names == {"precision", "mattr"}  # mattr_std has no direction
    everything = correlation_table(df, n_boot=0, values="all")
    assert "mattr_std" in set(everything.metric_a) | set(everything.metric_b)
    assert t.in_figure.all()


def test_cluster_order_puts_correlated_metrics_together():
    names = ["a", "c", "b", "d"]
    r = pd.DataFrame(np.eye(4), index=names, columns=names)
    for p, q in (("a", "b"), ("c", "d")):
        r.loc[p, q] = r.loc[q, p] = 0.95
    r.loc["a", "c"] = r.loc["c", "a"] = 0.1
    order = cluster_order(r)
    assert sorted(order) == sorted(names)
    pos = {m: i for i, m in enumerate(order)}
    assert abs(pos["a"] - pos["b"]) == 1 and abs(pos["c"] - pos["d"]) == 1


def test_correlation_matrix_is_symmetric_and_the_old_wrapper_still_works():
    df = tidy(SMALL)
    t = correlation_table(df, n_boot=0, values="all")
    m = correlation_matrix(t, "bbc", "pearson")
    assert m.loc["x", "y"] == m.loc["y", "x"] == cell(t, "bbc", "pearson", "x", "y")
    old = metric_correlation(df, "pearson", headline_only=False)
    assert old.loc["x", "y"] == pytest.approx(wide_scores(df).corr().loc["x", "y"])


def test_figure_draws_the_registered_headline_values_only():
    pr = {"precision": [0.1, 0.5, 0.3, 0.9], "recall": [0.4, 0.2, 0.8, 0.6]}
    df = tidy(
        {"d": {**pr, "density": [1.2, 0.7, 0.9, 1.5], "mattr": [0.2, 0.4, 0.6, 0.8]}},
        metric=dict.fromkeys(["precision", "recall", "density"], "precision_recall"),
    )
    t = correlation_table(df, n_boot=0)
    assert {"density"} <= set(t.metric_a) | set(t.metric_b)  # a directed value: in the table
    drawn = t[t.in_figure]
    headline = set(get("precision_recall").headline) | set(get("mattr").headline)
    assert set(drawn.metric_a) | set(drawn.metric_b) == headline == {"precision", "recall", "mattr"}


def test_heatmap_values_choose_the_pairs_the_figure_draws():
    """report.heatmap_values (Le Bronnec et al. (2024), Fig. 7: P, R, MAUVE, Self-BLEU,
    Distinct-4): the figure draws exactly the named values, here distinct_4 instead of
    distinct_n's headline distinct_1; a name that is no scored value is an error."""
    base = {
        "precision": [0.1, 0.4, 0.3, 0.8, 0.5, 0.6],
        "recall": [0.9, 0.5, 0.6, 0.2, 0.4, 0.3],
        "distinct_1": [0.5, 0.6, 0.4, 0.7, 0.5, 0.6],
        "distinct_4": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4],
    }
    metric = {"precision": "precision_recall", "recall": "precision_recall"}
    metric |= {"distinct_1": "distinct_n", "distinct_4": "distinct_n"}
    df = tidy({"bios": base}, metric)
    default = correlation_table(df, n_boot=0)
    drawn = default[default["in_figure"]]
    # the table names a value by its name alone where that is unique
    assert set(drawn["metric_a"]) | set(drawn["metric_b"]) == {"precision", "recall", "distinct_1"}
    want = ["precision_recall/precision", "precision_recall/recall", "distinct_n/distinct_4"]
    chosen = correlation_table(df, n_boot=0, figure_values=want)
    drawn = chosen[chosen["in_figure"]]
    assert set(drawn["metric_a"]) | set(drawn["metric_b"]) == {"precision", "recall", "distinct_4"}
    assert len(drawn) == 3 * len(METHODS)  # the three pairs, per method
    # every pair stays in the table either way, with the same correlations
    assert len(chosen) == len(default) and chosen["r"].equals(default["r"])
    with pytest.raises(ValueError, match="heatmap_values: 'distinct_n/distinct_9'"):
        correlation_table(df, n_boot=0, figure_values=[*want, "distinct_n/distinct_9"])


def _study(n_scores: int, datasets: int = 3, sources: int = 24):
    """``n_scores`` scores (four correlated groups) and one constant score over ``datasets``
    datasets of ``sources`` sources each."""
    rng = np.random.default_rng(0)
    base = rng.normal(size=(sources, 4))
    data = {}
    for d in range(datasets):
        cols = {
            f"score_{m:02d}_long_name": list(base[:, m % 4] + 0.5 * rng.normal(size=sources))
            for m in range(n_scores)
        }
        data[f"ds{d}"] = {**cols, "flat": [1.0] * sources}
    return tidy(data)


@pytest.mark.parametrize(
    ("n_scores", "datasets", "mode"), [(5, 1, "interval"), (12, 3, "r"), (31, 3, "colour")]
)
def test_heatmap_stays_within_its_size_and_prints_what_fits(
    tmp_path, monkeypatch, n_scores, datasets, mode
):
    """However many scores, the PNG stays within MAX_PIXELS on a side, fonts keep their
    size and the cells print what fits: r with its interval (few scores), r alone, or
    colour alone with a dot for an interval excluding 0 (a study's 31 scores over four
    panels); the subtitle says which. A constant score leaves the matrix and is listed under
    it."""
    from PIL import Image

    import genmetrics.figures.correlation as module

    t = correlation_table(_study(n_scores, datasets), n_boot=40, seed=0, values="all")
    panels = heatmap_panels(t, "spearman")
    assert panels.hidden == ["flat"] and len(panels.names) == n_scores
    figs = []
    save = module._save
    monkeypatch.setattr(module, "_save", lambda fig, p: (figs.append(fig), save(fig, p)))
    out = tmp_path / "h.png"
    correlation_heatmap(panels, out)
    assert max(Image.open(out).size) <= module.MAX_PIXELS
    (fig,) = figs
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    ticks = {t.get_text() for ax in fig.axes for t in ax.get_yticklabels() + ax.get_xticklabels()}
    assert "flat" not in ticks and "score_00_long_name" in ticks
    footnote = fig._supxlabel.get_text()
    assert "Not in the matrix" in footnote and "flat" in footnote
    subtitle = fig._suptitle.get_text()
    intervals = [s for s in texts if s.startswith("[")]
    numbers = [s for s in texts if re.fullmatch(r"-?\d\.\d\d", s)]
    sizes = {t.get_fontsize() for ax in fig.axes for t in ax.texts}
    assert min(sizes, default=8) >= 7.5
    if mode == "interval":
        assert intervals and numbers and "its 95% percentile-bootstrap interval" in subtitle
    elif mode == "r":
        assert not intervals and numbers and "too many cells to print their 95%" in subtitle
    else:
        assert not texts and "colour only" in subtitle.replace("\n", " ")
        dots = [ln for ax in fig.axes for ln in ax.lines]
        assert dots  # the correlated groups' intervals exclude 0
