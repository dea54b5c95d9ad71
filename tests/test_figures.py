"""Every figure draws from data computed elsewhere: each analysis function's output on a
small synthetic table, drawn to a PNG (the P/R plane and the correlation heatmap have their
own tests in test_pr_plane.py and test_correlation.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from genmetrics.analysis.distribution import sweep_means
from genmetrics.analysis.spectra import smooth, spectra_panels
from genmetrics.figures.agreement import agreement_heatmap, pairwise_agreement_figure
from genmetrics.figures.length import length_figure
from genmetrics.figures.omniinput import omniinput_runs_figure
from genmetrics.figures.precision_recall import pr_curves, sweep_figure
from genmetrics.figures.scaling import valid_cell_figure
from genmetrics.figures.spectra import surprisal_spectra
from genmetrics.studies.face2_scaling.valid_cells import valid_cells


def _png(path) -> bool:
    return path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 1000


def test_sweep_means_average_seeds_and_figure(tmp_path):
    rows = [
        {"source": s, "sweep": "n", "n": n, "k": 5, "seed": seed, "precision": p, "recall": p / 2}
        for s in ("a", "b")
        for n in (10, 100)
        for seed, p in ((0, 0.4), (1, 0.6))
    ] + [  # sweep_k's rows carry both set sizes
        {"source": "a", "sweep": "k", "k": 3, "n_reference": 100, "n_candidate": 90}
        | {"seed": 0, "precision": 0.5, "recall": 0.2}
    ]
    means = sweep_means(pd.DataFrame(rows))
    assert list(means.columns)[:5] == ["sweep", "source", "value", "precision", "recall"]
    n_rows = means[means["sweep"] == "n"]
    assert len(n_rows) == 4 and np.allclose(n_rows["precision"], 0.5)
    # the range over the two seeds, their count, and the k the N sweep holds fixed
    assert np.allclose(n_rows["precision_min"], 0.4) and np.allclose(n_rows["precision_max"], 0.6)
    assert np.allclose(n_rows["recall_max"], 0.3) and (n_rows["runs"] == 2).all()
    assert (n_rows["other"] == 5).all()
    k_rows = means[means["sweep"] == "k"]
    assert k_rows["value"].tolist() == [3] and k_rows["runs"].tolist() == [1]
    assert k_rows["other"].tolist() == [90]  # the N of the k sweep: the smaller set
    sweep_figure(means, tmp_path / "sweep.png")
    assert _png(tmp_path / "sweep.png")


def _face(source: str, shift: float) -> dict:
    f = np.linspace(0, 0.5, 60)
    return {
        "dataset": "ds",
        "source": source,
        "entry": "face",
        "params": {"value": "norm"},
        "values": {"so": 0.9},
        "n": {"reference": 30, "candidate": 20},
        "extras": {
            "spectrum": {
                "freq": f.tolist(),
                "reference_mean": (1 + f).tolist(),
                "reference_sd": (0.1 + 0 * f).tolist(),
                "candidate_mean": (1 + shift + f).tolist(),
                "candidate_sd": (0.2 + 0 * f).tolist(),
            }
        },
    }


def test_spectra_panels_bands_and_figure(tmp_path):
    panels = spectra_panels([_face("m2", 0.2), _face("m1", 0.1), {"dataset": "x", "extras": {}}])
    assert len(panels) == 1 and panels[0].positive
    human, m1, m2 = panels[0].curves
    assert human.reference and m1.label.startswith("m1") and m2.label.startswith("m2")
    # each curve states the texts its mean and band rest on
    assert human.n == 30 and human.label.endswith("n=30") and m1.label.endswith("n=20")
    half = 1.96 * 0.2 / np.sqrt(20)
    np.testing.assert_allclose(m1.high - m1.smoothed, half)
    np.testing.assert_allclose(smooth(np.ones(40)), np.ones(40))
    surprisal_spectra(panels, tmp_path / "s.png")
    surprisal_spectra([], tmp_path / "none.png")
    assert _png(tmp_path / "s.png") and _png(tmp_path / "none.png")


def test_valid_cells_and_figure(tmp_path):
    nan = np.nan
    table = pd.DataFrame(
        [
            ["m1", "gpt2", 1.0, 0.6, 0.9, nan, nan, 0.5, 4],
            ["m1", "opt", 0.5, 0.6, 0.9, nan, nan, 0.5, 4],
            ["ttr", None, 0.25, nan, nan, 0.0, 0.5, 0.5, 4],
        ],
        columns=[
            "metric",
            "evaluator",
            "ratio",
            "mean_low",
            "mean_high",
            "low",
            "high",
            "baseline",
            "cells",
        ],
    )
    cells = valid_cells(table)
    assert cells.summary["metric"].tolist() == ["ttr", "m1"]  # ascending mean
    assert cells.summary["mean"].tolist() == pytest.approx([0.25, 0.75])
    assert cells.intervals == {"ttr": (0.0, 0.5), "m1": (0.6, 0.9)}
    assert [ev for ev, _ in cells.ratios] == ["gpt2", "opt", None]
    assert cells.baseline == 0.5 and cells.cells == 4
    valid_cell_figure(cells, tmp_path / "v.png")
    assert _png(tmp_path / "v.png")


def test_drawing_only_figures(tmp_path):
    length_figure(pd.DataFrame({"spearman": [0.5, -0.2]}, index=["a", "b"]), tmp_path / "l.png", 7)
    curve = {"lambda": [1.0, 2.0], "precision": [0.9, None], "recall": [0.1, 0.8]}
    omniinput_runs_figure(
        {"r": {"extras": {"curve": curve}, "values": {"aupr": 0.7}}}, tmp_path / "o.png"
    )
    pr_curves(
        [
            {
                "source": "m",
                "values": {"f8": 0.5, "f1_8": 0.4},
                "extras": {"alpha": [1, 0], "beta": [0, 1]},
            }
        ],
        tmp_path / "p.png",
    )
    corr = pd.DataFrame(
        [
            ["kendall", c, "system", m, 0.5, 0.1, 0.8, 5, 10]
            for c in ("fluency", "coherence")
            for m in ("mauve", "upstream.rouge")
        ],
        columns=["method", "criterion", "level", "metric", "value", "ci_low", "ci_high"]
        + ["n_systems", "n_items"],
    )
    agreement_heatmap(corr, "system", "kendall", tmp_path / "a.png", title="set")
    pairs = pd.DataFrame(
        [["mauve", "all", 0.7, 0.6, 0.8, 40, True]],
        columns=["metric", "group", "item_agreement", "ci_low", "ci_high"]
        + ["n_decisive_items", "higher_is_better"],
    )
    pairwise_agreement_figure(pairs, tmp_path / "w.png", title="set")
    for name in ("l", "o", "p", "a", "w"):
        assert _png(tmp_path / f"{name}.png"), name


def _capture(monkeypatch, module):
    figs = []
    save = module._save
    monkeypatch.setattr(module, "_save", lambda fig, path: (figs.append(fig), save(fig, path)))
    return figs


def test_omniinput_runs_legend_covers_no_curve(tmp_path, monkeypatch):
    """Thirteen runs: one legend under both panels (a figure legend), none inside the axes."""
    import genmetrics.figures.omniinput as module

    figs = _capture(monkeypatch, module)
    curve = {"lambda": [1.0, 2.0, 3.0], "precision": [0.9, 0.6, 0.3], "recall": [0.1, 0.5, 1.0]}
    runs = {f"run{i:02d}": {"extras": {"curve": curve}, "values": {"aupr": 0.5}} for i in range(13)}
    omniinput_runs_figure(runs, tmp_path / "o.png")
    (fig,) = figs
    assert all(ax.get_legend() is None for ax in fig.axes)
    (legend,) = fig.legends
    assert len(legend.get_texts()) == 13
    fig.canvas.draw()
    box = legend.get_window_extent()
    for ax in fig.axes:
        assert not box.overlaps(ax.get_window_extent()), "the legend covers a panel"


def test_scaling_and_agreement_figures_print_no_degenerate_interval(tmp_path, monkeypatch):
    import genmetrics.figures.agreement as agreement
    import genmetrics.figures.scaling as scaling

    nan = np.nan
    table = pd.DataFrame(
        [
            ["ttr", None, 1.0, nan, nan, 1.0, 1.0, 0.5, 1],
            ["m1", "gpt2", 0.0, nan, nan, 0.0, 0.5, 0.5, 1],
        ],
        columns=["metric", "evaluator", "ratio", "mean_low", "mean_high", "low", "high"]
        + ["baseline", "cells"],
    )
    figs = _capture(monkeypatch, scaling)
    valid_cell_figure(valid_cells(table), tmp_path / "v.png")
    ax = figs[0].axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert "ttr (no interval: every resample agrees)" in labels and "m1" in labels
    assert "n = 1 cell" in ax.get_title()
    corr = pd.DataFrame(
        [
            ["kendall", "fluency", "system", "mauve", 1.0, 1.0, 1.0, 5, 10],
            ["kendall", "fluency", "system", "rouge", 0.4, nan, nan, 5, 10],
            ["kendall", "fluency", "system", "bleu", 0.2, -0.3, 0.7, 5, 10],
        ],
        columns=["method", "criterion", "level", "metric", "value", "ci_low", "ci_high"]
        + ["n_systems", "n_items"],
    )
    figs = _capture(monkeypatch, agreement)
    agreement_heatmap(corr, "system", "kendall", tmp_path / "a.png", title="set")
    texts = [t.get_text() for t in figs[0].axes[0].texts]
    assert texts == ["1.00\nno interval", "0.40\nno interval", "0.20\n[-0.30, 0.70]"], texts


def _paired_rows(p_ab, p_ac, note=""):
    """A paired table of one dataset: a beats b (d = +1, lower is worse), a vs c, b vs c."""
    rows = []
    for (a, b), p in (
        (("a", "b"), p_ab),
        (("a", "c"), p_ac),
        (("b", "c"), float("nan")),
    ):
        rows.append(
            dict(dataset="d", value="v", model_a=a, model_b=b, difference=1.0, p=p,
                 p_holm=p, p_bh=p, direction="higher", note=note if p != p else "")
        )  # fmt: skip
    return pd.DataFrame(rows)


def test_paired_matrix_says_not_tested_instead_of_zero(tmp_path):
    """A pair with no paired p (e.g. sets drawn on other prompts) is "not tested", not a
    count of 0 (which reads as "never better"); with no pair tested the figure says why."""
    from genmetrics.figures.paired import NOT_TESTED, cell_labels, paired_matrix_figure

    t = _paired_rows(0.001, 0.5)
    models, labels, tested, why = cell_labels(t, "d")
    assert models == ["a", "b", "c"] and tested == 1 and why == ""
    assert labels[0, 1] == "1\n(BH 1)" and labels[1, 0] == "0\n(BH 0)"  # a better than b
    assert labels[0, 2] == "0\n(BH 0)"  # tested, not significant
    assert labels[1, 2] == NOT_TESTED and labels[2, 1] == NOT_TESTED
    note = "not computed: the two models' replicates were not drawn on the same prompts"
    nothing = _paired_rows(float("nan"), float("nan"), note)
    _, labels, tested, why = cell_labels(nothing, "d")
    assert tested == 0 and why == note
    assert all(labels[i, j] == NOT_TESTED for i in range(3) for j in range(3) if i != j)
    for k, table in enumerate((t, nothing)):
        path = tmp_path / f"paired{k}.png"
        paired_matrix_figure(table, "d", path)
        assert _png(path)


def test_sweep_figure_of_many_sources_keeps_its_legend_off_the_panels(tmp_path, monkeypatch):
    """pr-scale's sweep: 11 sources with N of 100–981 (243 and 246, 498 and 500 both run).
    The legend (one entry per source, one per line style) lies under the panels, the N
    labels do not print over each other, and every source has its own colour."""
    import genmetrics.figures.precision_recall as pr_module
    from genmetrics.figures.precision_recall import spaced_ticks

    # by hand: 246 is within 1.15 × 243 of it, 500 of 498; the largest (981) is kept
    ns = [100, 148, 200, 243, 246, 300, 498, 500, 700, 981]
    assert spaced_ticks(ns) == [100, 148, 200, 243, 300, 498, 700, 981]
    assert spaced_ticks([100, 200, 210]) == [100, 210]  # the largest replaces its neighbour
    sizes = [148, 243, 246, 498, 981, 148, 243, 246, 498, 981, 500]
    rows = []
    for i, top in enumerate(sizes):
        for n in [v for v in (100, 200, 300, 500, 700) if v < top] + [top]:
            rows.append(dict(sweep="n", source=f"set{i}/model{i}/seed0", value=n, other=4,
                             precision=0.9, recall=0.8, precision_min=0.85, precision_max=0.95,
                             recall_min=0.75, recall_max=0.85, runs=5))  # fmt: skip
        for k in (1, 4, 10):
            rows.append(dict(sweep="k", source=f"set{i}/model{i}/seed0", value=k, other=top,
                             precision=0.5 + k / 30, recall=0.5 + k / 25, precision_min=None,
                             precision_max=None, recall_min=None, recall_max=None, runs=1))  # fmt: skip
    figs = []

    def keep(fig, path):
        fig.canvas.draw()
        figs.append(fig)

    monkeypatch.setattr(pr_module, "_save", keep)
    pr_module.sweep_figure(pd.DataFrame(rows), tmp_path / "sweep.png")
    (fig,) = figs
    renderer = fig.canvas.get_renderer()
    (legend,) = fig.legends
    box = legend.get_window_extent(renderer)
    for ax in fig.axes:  # the legend is below every panel, its x labels included
        assert box.y1 <= ax.get_tightbbox(renderer).y0 + 1
    assert len(legend.get_texts()) == 11 + 2
    colours = {tuple(h.get_color()) for h in legend.legend_handles[:11]}
    assert len(colours) == 11
    labels = [t for t in fig.axes[0].get_xticklabels() if t.get_text()]
    boxes = sorted((t.get_window_extent(renderer) for t in labels), key=lambda b: b.x0)
    assert all(a.x1 <= b.x0 for a, b in zip(boxes, boxes[1:], strict=False))
    pr_module.plt.close(fig)
