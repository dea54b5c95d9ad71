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
    PR_PLANE_BOUNDS,
    PR_PLANE_COLUMNS,
    covariance_ellipse,
    ellipse_radius,
    ellipse_status,
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


def test_ellipse_is_fitted_to_the_generation_seeds_alone():
    """As the paper's: the ellipse summarises the seeds; the resamples (scored against fewer
    references) are summarised apart, by their mean."""
    pts = pr_plane_points(_scores(SEEDS), SPREADS)
    table = pr_plane(pts).set_index("model")
    radius = np.sqrt(-2 * np.log(0.05))  # χ²₂ 95% quantile: 5.991 = 2.4477²
    assert ellipse_radius(0.95) == pytest.approx(radius) and radius == pytest.approx(2.4477, 1e-4)
    a = table.loc["a"]
    a_pts = pts[pts["model"] == "a"]
    xy = a_pts[a_pts["kind"] == "seed"][["recall", "precision"]].to_numpy(float)  # 3 seeds
    cov = np.cov(xy.T)
    # by hand: seeds (0.6, 0.8), (0.7, 0.75), (0.65, 0.85): var r 0.0025, var p 0.0025,
    # cov -0.00125 (ddof=1)
    np.testing.assert_allclose(cov, [[0.0025, -0.00125], [-0.00125, 0.0025]], atol=1e-15)
    assert (a.resample_recall, a.resample_precision) == pytest.approx((0.67, 0.76))
    np.testing.assert_allclose([[a.cov_rr, a.cov_rp], [a.cov_rp, a.cov_pp]], cov, rtol=1e-12)
    eig = np.sort(np.linalg.eigvalsh(cov))[::-1]
    np.testing.assert_allclose([a.semi_major, a.semi_minor], radius * np.sqrt(eig))
    # the ellipse is centred on the seeds it summarises: the marker, the mean over seeds
    np.testing.assert_allclose([a.ellipse_recall, a.ellipse_precision], xy.mean(axis=0))
    np.testing.assert_allclose([a.ellipse_recall, a.ellipse_precision], [a.recall, a.precision])
    seeds = np.array(SEEDS["a"])
    assert (a.recall, a.precision) == pytest.approx(tuple(seeds.mean(axis=0)))
    assert (a.n_seeds, a.n_resamples, a.n_points, a.level) == (3, 2, 5, 0.95)
    assert a.ellipse == "drawn" and a.n_std == pytest.approx(radius)
    b = table.loc["b"]  # two seeds: a line segment at best, so no ellipse
    assert b.ellipse == "too few points" and np.isnan(b.semi_major) and b.n_resamples == 0
    assert np.isnan(b.resample_recall)


def test_covariance_ellipse_geometry():
    rng = np.random.default_rng(0)
    xy = rng.normal(size=(50, 2)) @ np.array([[0.05, 0.0], [0.03, 0.01]]) + [0.5, 0.6]
    e = covariance_ellipse(xy)
    np.testing.assert_allclose(e.cov, np.cov(xy.T))
    vals, vecs = np.linalg.eigh(e.cov)
    np.testing.assert_allclose(e.semi_axes, ellipse_radius(0.95) * np.sqrt(vals[::-1]))
    major = vecs[:, 1]
    # the angle points along the major eigenvector (up to its sign)
    t = np.radians(e.angle)
    assert abs(abs(np.dot([np.cos(t), np.sin(t)], major)) - 1) < 1e-9
    np.testing.assert_allclose(e.center, xy.mean(axis=0))
    assert covariance_ellipse(xy, level=0.5).semi_axes[0] == pytest.approx(
        np.sqrt(2 * np.log(2)) * np.sqrt(vals[1])
    )
    assert covariance_ellipse(xy[:2]) is None and ellipse_status(xy[:2]) == "too few points"
    line = np.array([[0.1, 0.2], [0.2, 0.4], [0.4, 0.8]])
    assert covariance_ellipse(line) is None and ellipse_status(line) == "on a line"
    same = np.array([[0.1, 0.2], [0.1, 0.2], [0.3, 0.5]])  # two equal points: on a line
    assert ellipse_status(same) == "on a line"
    assert ellipse_status(np.array([[0.5, 0.5]] * 4)) == "on a line"
    # at most 7 points: every point lies inside the 95% ellipse fitted to them
    for n in range(3, 8):
        few = rng.normal(size=(n, 2))
        assert (covariance_ellipse(few).mahalanobis2(few) <= ellipse_radius() ** 2).all()


def _drawn(monkeypatch):
    import genmetrics.figures.precision_recall as figure

    figs = []
    save = figure._save
    monkeypatch.setattr(figure, "_save", lambda fig, path: (figs.append(fig), save(fig, path)))
    return figs


def _ellipse_paths(fig) -> dict[str, object]:
    """Each drawn ellipse's outline in data coordinates (recall, precision), by model."""
    from matplotlib.patches import Ellipse as EllipsePatch

    out = {}
    for ax in fig.axes:
        for patch in ax.patches:
            if isinstance(patch, EllipsePatch) and (patch.get_gid() or "").startswith("ellipse:"):
                path = patch.get_patch_transform().transform_path(patch.get_path())
                out[patch.get_gid().split(":", 1)[1]] = path
    return out


def test_plotted_ellipse_holds_95_percent_of_a_normal_sample(tmp_path, monkeypatch):
    """Points from a known correlated 2-D normal (recall and precision on different scales):
    the ellipse the figure draws (its matplotlib path in data coordinates) holds ~95% of
    the points it was fitted to and of a fresh sample, as its legend says, and its outline is
    the ellipse of the table (Mahalanobis radius 2.45 everywhere)."""
    rng = np.random.default_rng(42)
    mu = np.array([0.55, 0.7])
    cov = np.array([[0.03**2, -0.6 * 0.03 * 0.01], [-0.6 * 0.03 * 0.01, 0.01**2]])
    xy = rng.multivariate_normal(mu, cov, size=2000)
    figs = _drawn(monkeypatch)
    points, table = plane_tables(_scores({"m": [tuple(p) for p in xy]}))
    pr_scatter(points, table, tmp_path / "pr.png")
    (path,) = _ellipse_paths(figs[0]).values()
    inside = path.contains_points(xy).mean()
    assert inside == pytest.approx(0.95, abs=0.015)
    fresh = rng.multivariate_normal(mu, cov, size=4000)
    assert path.contains_points(fresh).mean() == pytest.approx(0.95, abs=0.015)
    # the drawn outline is the table's ellipse: every point of its curves (matplotlib's
    # Bézier approximation of the circle, evaluated along each segment) at Mahalanobis
    # radius 2.45
    e = covariance_ellipse(xy)
    t = np.linspace(0, 1, 9)
    outline = np.vstack([seg(t) for seg, _ in path.iter_bezier() if seg.degree > 0])
    assert len(outline) > 40
    np.testing.assert_allclose(e.mahalanobis2(outline), ellipse_radius() ** 2, rtol=1e-3)
    assert inside == pytest.approx((e.mahalanobis2(xy) <= ellipse_radius() ** 2).mean(), abs=2e-3)
    texts = [
        t.get_text() for ax in figs[0].axes for leg in ax.findobj(Legend) for t in leg.get_texts()
    ]
    assert any(t.startswith("95% ellipse of a 2-D normal fitted to") for t in texts), texts


def test_resamples_are_drawn_apart_from_the_seeds_ellipse(tmp_path, monkeypatch):
    """Scoring against 80% of the references shifts P and R as a whole: the crosses sit off the
    seeds. The ellipse is the seeds' alone (it holds the seeds and the mean marker, not the
    crosses); the crosses and their mean are drawn with their own markers and the legend says
    they use fewer references."""
    seeds = {"a": [(0.6, 0.8), (0.63, 0.76), (0.65, 0.79)], "d": [(0.5, 0.55)]}
    spreads = [
        _spread("a", [0.86, 0.84, 0.88], [0.58, 0.6, 0.57]),
        _spread("d", [0.6, 0.63, 0.58], [0.48, 0.47, 0.5]),
    ]
    for rec in spreads:
        rec["reference_size"] = 26
    figs = _drawn(monkeypatch)
    points, table = plane_tables(_scores(seeds), spreads)
    pr_scatter(points, table, tmp_path / "pr.png")
    paths = _ellipse_paths(figs[0])
    assert set(paths) == {"a"}  # d has one seed: no ellipse, whatever its resamples
    a = points[points["model"] == "a"]
    seed_xy = a[a["kind"] == "seed"][["recall", "precision"]].to_numpy(float)
    res_xy = a[a["kind"] == "resample"][["recall", "precision"]].to_numpy(float)
    assert paths["a"].contains_points(seed_xy).all()
    assert paths["a"].contains_point(seed_xy.mean(axis=0))
    assert not paths["a"].contains_points(res_xy).any()  # precision 0.84–0.88: above the seeds
    ax = figs[0].axes[0]
    gids = {c.get_gid() for c in ax.collections}
    assert {"resamples:a", "resample_mean:a", "resamples:d", "mean:a"} <= gids
    texts = [t.get_text() for leg in ax.findobj(Legend) for t in leg.get_texts()]
    assert any("26 references" in t and "fewer" in t for t in texts), texts


def test_reference_draws_are_named_as_such(tmp_path, monkeypatch):
    """A spread with references: redraw scores the first seed against new sets of as many
    references: the points say so, and the legend and title call them draws (not fewer
    references); records of subsamples keep the resample wording."""
    spreads = [{**_spread("a", [0.86, 0.84, 0.88], [0.58, 0.6, 0.57]), "reference_size": 30}]
    spreads[0]["reference_sets"] = "redraw"
    figs = _drawn(monkeypatch)
    points, table = plane_tables(_scores(SEEDS), spreads)
    res = points[points["kind"] == "resample"]
    assert set(res["reference_sets"]) == {"redraw"}
    assert points[points["kind"] == "seed"]["reference_sets"].isna().all()
    pr_scatter(points, table, tmp_path / "pr.png")
    ax = figs[0].axes[0]
    texts = [t.get_text() for leg in ax.findobj(Legend) for t in leg.get_texts()]
    assert any("30 other references" in t and "new draws" in t for t in texts), texts
    assert "mean of the reference draws" in texts and not any("fewer" in t for t in texts)
    assert any("3 reference draws" in t for t in texts)
    assert "reference draws: 30 references" in ax.get_title()
    old, _ = plane_tables(_scores(SEEDS), SPREADS)  # a record without reference_sets
    assert set(old[old["kind"] == "resample"]["reference_sets"]) == {"subsample"}


def test_no_ellipse_for_two_points_or_points_on_a_line(tmp_path, monkeypatch):
    seeds = {
        "two": [(0.4, 0.9), (0.45, 0.88)],
        "line": [(0.3, 0.6), (0.32, 0.62), (0.34, 0.64)],
        "ok": [(0.5, 0.5), (0.52, 0.55), (0.55, 0.51)],
    }
    figs = _drawn(monkeypatch)
    points, table = plane_tables(_scores(seeds))
    pr_scatter(points, table, tmp_path / "pr.png")
    assert set(_ellipse_paths(figs[0])) == {"ok"}
    status = table.set_index("model")["ellipse"].to_dict()
    assert status == {"two": "too few points", "line": "on a line", "ok": "drawn"}
    texts = [
        t.get_text() for ax in figs[0].axes for leg in ax.findobj(Legend) for t in leg.get_texts()
    ]
    assert any(t.startswith("two (") and "under 3 seeds, no ellipse" in t for t in texts)
    assert any(t.startswith("line (") and "seeds on a line, no ellipse" in t for t in texts)


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


def test_seed_points_carry_their_interval_and_the_figure_draws_it(tmp_path, monkeypatch):
    """A seed's P/R rows' lower/upper (its interval over prompts) reach the points table and
    the figure draws them as whiskers through the seed point; resamples and rows without an
    interval get none (NaN, no whiskers)."""
    from matplotlib.collections import LineCollection

    scores = _scores(SEEDS)
    pr = scores["metric"] == "precision_recall"
    scores["lower"] = np.where(pr & (scores["model"] == "a"), scores["value"] - 0.05, np.nan)
    scores["upper"] = np.where(pr & (scores["model"] == "a"), scores["value"] + 0.03, np.nan)
    figs = _drawn(monkeypatch)
    points, table = plane_tables(scores, SPREADS)
    a = points[(points["model"] == "a") & (points["kind"] == "seed")].sort_values("seed")
    np.testing.assert_allclose(a["recall_lower"], [0.55, 0.65, 0.60])
    np.testing.assert_allclose(a["precision_upper"], [0.83, 0.78, 0.88])
    assert points[points["kind"] == "resample"][PR_PLANE_BOUNDS].isna().all().all()
    assert points[points["model"] == "b"][PR_PLANE_BOUNDS].isna().all().all()
    pr_scatter(points, table, tmp_path / "pr.png")
    ax = figs[0].axes[0]
    drawn = [c for c in ax.collections if isinstance(c, LineCollection) and c.get_gid()]
    assert {c.get_gid() for c in drawn} == {"whiskers:a"}
    segs = [np.asarray(s) for c in drawn for s in c.get_segments()]
    # 3 horizontal (recall) and 3 vertical (precision) segments, one pair per seed
    horizontal = np.array(sorted(tuple(s[:, 0]) for s in segs if s[0, 1] == s[1, 1]))
    vertical = np.array(sorted(tuple(s[:, 1]) for s in segs if s[0, 0] == s[1, 0]))
    np.testing.assert_allclose(horizontal, [(0.55, 0.63), (0.6, 0.68), (0.65, 0.73)])
    np.testing.assert_allclose(vertical, [(0.7, 0.78), (0.75, 0.83), (0.8, 0.88)])
    texts = [t.get_text() for leg in ax.findobj(Legend) for t in leg.get_texts()]
    assert any(t.startswith("whiskers: that seed's interval") for t in texts)
    # without lower/upper columns (scores written before intervals): no bounds, no whiskers
    figs.clear()
    points, table = plane_tables(_scores(SEEDS), SPREADS)
    assert points[PR_PLANE_BOUNDS].isna().all().all()
    pr_scatter(points, table, tmp_path / "pr2.png")
    assert not [c for c in figs[0].axes[0].collections if (c.get_gid() or "").startswith("wh")]
