"""The precision–recall plane (Le Bronnec et al. (2024), Fig. 1) and the model × model overlap
table (their Table 1) on hand-made score tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.legend import Legend

from genmetrics.analysis.overlap import (
    NO_SCORES,
    OVERLAP_COLUMNS,
    overlap_long,
    overlap_markdown,
    overlap_matrix,
)
from genmetrics.analysis.pr_plane import (
    PR_PLANE_COLUMNS,
    covariance_ellipse,
    plane_tables,
    pr_plane,
    pr_plane_points,
)
from genmetrics.figures.precision_recall import pr_scatter

COLUMNS = ["dataset", "model", "seed", "reference", "metric", "entry", "name", "value"]


def _scores(points: dict[str, list[tuple[float, float]]], reference="references") -> pd.DataFrame:
    """precision_recall rows: per model, one (recall, precision) per seed; plus noise rows."""
    rows = []
    for model, pts in points.items():
        for seed, (r, p) in enumerate(pts):
            for name, v in (("recall", r), ("precision", p), ("density", 0.5)):
                rows.append(["ds", model, seed, reference, "precision_recall", "pr", name, v])
            rows.append(["ds", model, seed, None, "distinct_n", "distinct_n", "distinct_1", 0.3])
    rows.append(["ds", "references", None, None, "distinct_n", "distinct_n", "distinct_1", 0.4])
    return pd.DataFrame(rows, columns=COLUMNS)


def _spread(model: str, precision: list[float], recall: list[float], entry="pr") -> dict:
    def row(vary, value, runs):
        return {"vary": vary, "value": value, "mean": np.mean(runs), "runs": runs}

    return {
        "metric": "precision_recall",
        "entry": entry,
        "dataset": "ds",
        "model": model,
        "rows": [
            row("candidate", "precision", [0.0, 0.0]),  # not used: seeds come from scores
            row("candidate", "recall", [0.0, 0.0]),
            row("reference", "precision", precision),
            row("reference", "recall", recall),
            row("reference", "density", [9.0] * len(recall)),
        ],
    }


SEEDS = {"a": [(0.6, 0.8), (0.7, 0.75), (0.65, 0.85)], "b": [(0.4, 0.9), (0.45, 0.88)]}
SPREADS = [_spread("a", [0.82, 0.7], [0.62, 0.72])]


def test_points_pool_seed_scores_and_reference_resamples():
    pts = pr_plane_points(_scores(SEEDS), SPREADS)
    assert list(pts.columns) == PR_PLANE_COLUMNS
    a = pts[pts["model"] == "a"]
    assert a["kind"].tolist().count("seed") == 3 and a["kind"].tolist().count("resample") == 2
    res = a[a["kind"] == "resample"].sort_values("resample")
    assert res["precision"].tolist() == [0.82, 0.7] and res["recall"].tolist() == [0.62, 0.72]
    assert set(a["reference"]) == {"references"}  # the entry's reference, from the scores
    assert (pts[pts["model"] == "b"]["kind"] == "seed").all()


def test_ellipse_covariance_pools_seeds_and_resamples_and_axes_are_2_sqrt_eigenvalues():
    pts = pr_plane_points(_scores(SEEDS), SPREADS)
    table = pr_plane(pts).set_index("model")
    for model in ("a", "b"):
        g = pts[pts["model"] == model]
        # pooled within-kind covariance: seeds around their mean, resamples around theirs
        dev = [
            k[["recall", "precision"]].to_numpy(float)
            - k[["recall", "precision"]].to_numpy(float).mean(0)
            for _, k in g.groupby("kind")
        ]
        dev = np.vstack(dev)
        cov = dev.T @ dev / (len(g) - g["kind"].nunique())
        if g["kind"].nunique() == 1:  # one kind: plain numpy.cov
            np.testing.assert_allclose(cov, np.cov(g[["recall", "precision"]].to_numpy(float).T))
        row = table.loc[model]
        got = np.array([[row.cov_rr, row.cov_rp], [row.cov_rp, row.cov_pp]])
        np.testing.assert_allclose(got, cov, rtol=1e-12)
        eig = np.sort(np.linalg.eigvalsh(cov))[::-1]
        np.testing.assert_allclose([row.semi_major, row.semi_minor], 2 * np.sqrt(eig))
        seeds = np.array(SEEDS[model])
        # centred on the mean over seeds (the headline value), not on the pooled mean
        assert row.recall == pytest.approx(seeds[:, 0].mean())
        assert row.precision == pytest.approx(seeds[:, 1].mean())
    assert table.loc["a", "n_seeds"] == 3 and table.loc["a", "n_resamples"] == 2
    assert table.loc["b", "n_resamples"] == 0


def test_covariance_ellipse_geometry():
    rng = np.random.default_rng(0)
    xy = rng.normal(size=(50, 2)) @ np.array([[0.05, 0.0], [0.03, 0.01]]) + [0.5, 0.6]
    e = covariance_ellipse(xy, n_std=2.0)
    np.testing.assert_allclose(e.cov, np.cov(xy.T))
    vals, vecs = np.linalg.eigh(e.cov)
    np.testing.assert_allclose(e.semi_axes, 2 * np.sqrt(vals[::-1]))
    major = vecs[:, 1]
    # the angle points along the major eigenvector (up to its sign)
    t = np.radians(e.angle)
    assert abs(abs(np.dot([np.cos(t), np.sin(t)], major)) - 1) < 1e-9
    np.testing.assert_allclose(e.center, xy.mean(axis=0))
    assert covariance_ellipse(xy[:1]) is None
    # a shift between two groups does not widen the pooled ellipse
    shifted = covariance_ellipse(np.vstack([xy, xy + [0.0, 0.2]]), groups=["s"] * 50 + ["r"] * 50)
    np.testing.assert_allclose(shifted.cov, np.cov(xy.T), rtol=1e-12)
    assert covariance_ellipse(xy[:2], groups=["s", "r"]) is None  # no group has two points


def test_figure_with_one_point_per_model(tmp_path, monkeypatch):
    import genmetrics.figures.precision_recall as figure

    figs = []
    save = figure._save
    monkeypatch.setattr(figure, "_save", lambda fig, path: (figs.append(fig), save(fig, path)))
    out = tmp_path / "pr.png"
    scores = _scores({"a": [(0.6, 0.8)], "b": [(0.4, 0.9)]})
    points, table = plane_tables(scores)
    pr_scatter(points, table, out, templates={"a": "chat", "b": "base"})
    assert out.stat().st_size > 1000 and out.read_bytes()[:4] == b"\x89PNG"
    assert table["semi_major"].isna().all() and set(table["model"]) == {"a", "b"}
    legends = [leg for ax in figs[0].axes for leg in ax.findobj(Legend)]
    texts = [t.get_text() for leg in legends for t in leg.get_texts()]
    assert any(t.startswith("a (chat") and "no ellipse" in t for t in texts), texts
    assert any(t.startswith("b (base") and "no ellipse" in t for t in texts), texts
    assert "Le Bronnec et al. 2024" in figs[0]._suptitle.get_text()


def test_figure_without_precision_recall_scores(tmp_path):
    scores = _scores({})
    points, table = plane_tables(scores)
    pr_scatter(points, table, tmp_path / "pr.png")
    assert points.empty and table.empty and (tmp_path / "pr.png").exists()


# ---------------------------------------------------------------------------- overlap


def _model_vs_model() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    rows = []
    # entry vs_a: everything against a/seed0 (a's other seeds included); vs_b against b/seed0
    for entry, ref in (("vs_a", "a/seed0"), ("vs_b", "b/seed0")):
        for model in ("a", "b", "c"):
            for seed in (0, 1, 2):
                if f"{model}/seed{seed}" == ref:
                    continue
                for name in ("precision", "recall", "density"):
                    v = float(rng.uniform())
                    rows.append(["ds", model, seed, ref, "precision_recall", entry, name, v])
    # human-reference and reference-free rows are left out of the table
    rows.append(["ds", "a", 0, "references", "precision_recall", "pr", "precision", 0.5])
    rows.append(["ds", "a", 0, None, "distinct_n", "distinct_n", "distinct_1", 0.5])
    return pd.DataFrame(rows, columns=COLUMNS)


def test_overlap_table_equals_a_direct_pivot():
    scores = _model_vs_model()
    long = overlap_long(scores)
    assert list(long.columns) == OVERLAP_COLUMNS
    assert set(long["reference"]) == {"a/seed0", "b/seed0"}
    mm = scores[scores["reference"].isin(["a/seed0", "b/seed0"])]
    for name in ("precision", "recall"):
        d = mm[mm["name"] == name]
        for stat, agg in (("mean", "mean"), ("std", "std"), ("n_seeds", "count")):
            want = d.pivot_table(index="model", columns="reference", values="value", aggfunc=agg)
            got = overlap_matrix(long, "ds", name, stat)
            np.testing.assert_allclose(got.to_numpy(float), want.to_numpy(float))
            assert list(got.index) == list(want.index) == ["a", "b", "c"]
            assert list(got.columns) == list(want.columns)
    assert overlap_matrix(long, "ds", "precision", "n_seeds").at["a", "a/seed0"] == 2


def test_overlap_markdown_cells_and_empty_case():
    long = overlap_long(_model_vs_model())
    md = overlap_markdown(long)
    row = next(line for line in md.splitlines() if line.startswith("| c |"))
    p = long.query("candidate == 'c' and reference == 'b/seed0' and name == 'precision'")
    assert f"{p['mean'].iloc[0]:.4g} ± {p['std'].iloc[0]:.2g}" in row
    assert "| candidate \\ reference | a/seed0 | b/seed0 |" in md
    empty = overlap_long(_scores(SEEDS))  # only human-reference scores
    assert empty.empty and list(empty.columns) == OVERLAP_COLUMNS
    assert NO_SCORES in overlap_markdown(empty)
