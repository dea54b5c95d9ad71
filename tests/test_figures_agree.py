"""Figures that agree with their numbers, checked from the drawn artists: every figure of the
offline run (``.test/config.yaml``, the session's ``offline_run``) drawn again from that run's
own tables and records, and small synthetic tables for what the offline run does not draw
(three seeds, so ellipses; a saturated MAUVE panel; two MAUVE panels side by side). Checks:

* no two text boxes overlap (the window extents of every visible non-empty text: titles,
  axis labels, tick labels, legend entries, annotations, measured with the figure's renderer);
  rotated tick labels of one axis are laid out by matplotlib along their ticks and are not
  compared with each other (their axis-aligned boxes are not their outlines);
* each ellipse (patch ``ellipse:<model>``) contains the mean marker it belongs to
  (collection ``mean:<model>``), in data coordinates;
* every proportion axis (precision, recall, MAUVE, SO, α/β of the PR curves) stays in [0, 1].
"""

from __future__ import annotations

import glob
import json
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

#: labels that start with one of these name a proportion axis
PROPORTION_LABELS = ("precision", "recall", "mauve", "SO ", "SO (", "share", "r(z)")


def _capture(monkeypatch, module) -> list:
    """The figures ``module`` saves (its ``_save``), kept open for inspection."""
    figs: list = []
    save = module._save

    def keep(fig, path):
        fig.canvas.draw()  # lay out before the figure is saved and closed
        figs.append(fig)
        save(fig, path)

    monkeypatch.setattr(module, "_save", keep)
    return figs


def _texts(fig):
    """(text artist, window bbox) of every visible non-empty text of ``fig``."""
    from matplotlib.text import Text

    if not hasattr(fig.canvas, "get_renderer"):  # closed by its save: a canvas to measure on
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(fig)
        fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ticks, drawn = set(), set()  # tick labels, and those of ticks inside the view (drawn)
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
                ticks |= {id(tick.label1), id(tick.label2)}
            for tick in axis._update_ticks():
                drawn |= {id(tick.label1), id(tick.label2)}
    out = []
    for t in fig.findobj(Text):
        if not t.get_visible() or not t.get_text().strip():
            continue
        if id(t) in ticks and id(t) not in drawn:
            continue
        if t.axes is not None and not t.axes.get_visible():
            continue
        out.append((t, t.get_window_extent(renderer)))
    return out


def _tick_axis(t) -> object | None:
    """The axis a tick label belongs to (None: not a tick label)."""
    for ax in t.figure.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if t in axis.get_ticklabels() or t in axis.get_ticklabels(minor=True):
                return axis
    return None


def overlapping_texts(fig, slack: float = 1.0) -> list[tuple[str, str]]:
    """Pairs of texts of ``fig`` whose boxes overlap by more than ``slack`` pixels."""
    texts = _texts(fig)
    axis_of = {id(t): _tick_axis(t) for t, _ in texts}
    bad = []
    for (a, ba), (b, bb) in combinations(texts, 2):
        same_axis = axis_of[id(a)] is not None and axis_of[id(a)] is axis_of[id(b)]
        if same_axis and (a.get_rotation() % 180 or b.get_rotation() % 180):
            continue
        w = min(ba.x1, bb.x1) - max(ba.x0, bb.x0)
        h = min(ba.y1, bb.y1) - max(ba.y0, bb.y0)
        if w > slack and h > slack:
            bad.append((a.get_text()[:60], b.get_text()[:60]))
    return bad


def ellipses_without_their_marker(fig) -> list[str]:
    """Models whose ellipse does not contain their mean marker (or that have no marker)."""
    from matplotlib.patches import Ellipse

    bad = []
    for ax in fig.axes:
        means = {
            c.get_gid().split(":", 1)[1]: c.get_offsets()
            for c in ax.collections
            if (c.get_gid() or "").startswith("mean:")
        }
        for patch in ax.patches:
            gid = patch.get_gid() or ""
            if not (isinstance(patch, Ellipse) and gid.startswith("ellipse:")):
                continue
            model = gid.split(":", 1)[1]
            path = patch.get_patch_transform().transform_path(patch.get_path())
            if model not in means or not path.contains_points(np.asarray(means[model])).all():
                bad.append(model)
    return bad


def proportion_axes_outside(fig) -> list[str]:
    """Proportion axes (by label) whose limits leave [0, 1]."""
    bad = []
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        for label, lim in ((ax.get_xlabel(), ax.get_xlim()), (ax.get_ylabel(), ax.get_ylim())):
            if label.startswith(PROPORTION_LABELS) and (min(lim) < -1e-9 or max(lim) > 1 + 1e-9):
                bad.append(f"{label[:40]}: {lim}")
    return bad


def whiskers_cut_by_the_axes(fig) -> list[str]:
    """Models whose interval whiskers (``whiskers:<model>`` line collections) run past the
    limits of their axes: a cut whisker misstates the interval it draws."""
    bad = []
    for ax in fig.axes:
        (x0, x1), (y0, y1) = sorted(ax.get_xlim()), sorted(ax.get_ylim())
        for c in ax.collections:
            gid = c.get_gid() or ""
            if not gid.startswith("whiskers:"):
                continue
            for seg in c.get_segments():
                xy = np.asarray(seg, float)
                eps = 1e-9
                if (
                    (xy[:, 0] < x0 - eps).any()
                    or (xy[:, 0] > x1 + eps).any()
                    or (xy[:, 1] < y0 - eps).any()
                    or (xy[:, 1] > y1 + eps).any()
                ):
                    bad.append(gid.split(":", 1)[1])
                    break
    return bad


def check(fig) -> dict[str, list]:
    """Every check of the module on one figure: empty lists where it agrees."""
    return {
        "overlapping texts": overlapping_texts(fig),
        "ellipses without their marker": ellipses_without_their_marker(fig),
        "proportion axes outside [0, 1]": proportion_axes_outside(fig),
        "whiskers cut by the axes": whiskers_cut_by_the_axes(fig),
    }


def _assert_agrees(figs, name: str) -> None:
    assert figs, f"{name}: nothing drawn"
    for fig in figs:
        found = {k: v for k, v in check(fig).items() if v}
        assert not found, f"{name}: {found}"


# ---------------------------------------------------------------------------- the checks can fail


def test_the_checks_find_what_they_check(tmp_path):
    """Each check fails on a figure made to break it."""
    from matplotlib.patches import Ellipse

    from genmetrics.figures._style import plt

    fig, ax = plt.subplots()
    ax.set_title("one title")
    ax.text(0.5, 1.0, "one title over it", transform=ax.transAxes, va="bottom", ha="center")
    ax.add_patch(Ellipse((0.2, 0.2), 0.1, 0.1, gid="ellipse:m"))
    ax.scatter([0.8], [0.8], gid="mean:m")
    ax.errorbar([0.5], [0.5], yerr=[[0.1], [0.9]], fmt="none", gid="whiskers:m")
    ax.set_ylabel("precision")
    ax.set_ylim(0, 1.05)
    fig.canvas.draw()
    found = check(fig)
    assert found["overlapping texts"] and found["ellipses without their marker"] == ["m"]
    assert found["proportion axes outside [0, 1]"]
    assert found["whiskers cut by the axes"] == ["m"]  # 0.5 + 0.9 = 1.4 beyond 1.05
    plt.close(fig)


# ---------------------------------------------------------------------------- the offline run


@pytest.fixture(scope="module")
def run_results(offline_run) -> Path:
    work, _, _ = offline_run
    return work / "results"


def test_offline_run_figures_agree(run_results, tmp_path, monkeypatch):
    """Every figure of the offline run this module draws, from the run's own tables."""
    import genmetrics.figures.bars as bars
    import genmetrics.figures.correlation as correlation
    import genmetrics.figures.length as length
    import genmetrics.figures.precision_recall as pr
    import genmetrics.figures.spectra as spectra
    from genmetrics.analysis.aggregate import read_scores
    from genmetrics.analysis.correlation_panels import heatmap_panels
    from genmetrics.analysis.length import length_analysis
    from genmetrics.analysis.pr_plane import plane_tables
    from genmetrics.analysis.spectra import spectra_panels

    r = run_results
    for name in (
        "precision_recall",
        "mauve_bars",
        "metric_correlation",
        "pr_curves",
        "length_correlation",
    ):
        assert (r / "figures" / f"{name}.png").exists(), name
    assert (r / "figures" / "surprisal_spectra.png").exists()
    scores = read_scores(r / "scores.csv")
    spreads = [
        json.loads(Path(p).read_text())
        for p in glob.glob(str(r / "analysis/spread/**/*.json"), recursive=True)
    ]
    features = {"precision_recall": "featurizer tiny", "mauve": "featurizer tiny"}

    figs = _capture(monkeypatch, pr)
    points, plane = plane_tables(scores, spreads)
    pr.pr_scatter(points, plane, tmp_path / "pr.png", {"tiny-pure": "base"}, features)
    _assert_agrees(figs, "precision_recall")
    title = figs[0].axes[0].get_title()
    assert "stories" in title and "featurizer tiny" in title and "n = 32" in title
    records = [json.loads(Path(p).read_text()) for p in glob.glob(str(r / "scores/*/*/*/prd.json"))]
    pr.pr_curves(records, tmp_path / "curves.png")
    _assert_agrees(figs[1:], "pr_curves")
    assert "featurizer tiny" in figs[1].axes[0].get_title()

    figs = _capture(monkeypatch, bars)
    table = pd.read_csv(r / "analysis" / "mauve_bars.csv")
    bars.value_bars(table, tmp_path / "bars.png", "mauve", features, bars.panel_sizes(scores))
    _assert_agrees(figs, "mauve_bars")

    figs = _capture(monkeypatch, correlation)
    corr = pd.read_csv(r / "analysis" / "metric_correlation.csv")
    correlation.correlation_heatmap(heatmap_panels(corr, "spearman"), tmp_path / "corr.png")
    _assert_agrees(figs, "metric_correlation")
    for png in (tmp_path / "corr.png", r / "figures" / "metric_correlation.png"):
        assert max(Image.open(png).size) <= correlation.MAX_PIXELS, png

    figs = _capture(monkeypatch, length)
    corr, n_sources = length_analysis(pd.read_csv(r / "scores.csv"))
    length.length_figure(corr, tmp_path / "length.png", n_sources)
    _assert_agrees(figs, "length_correlation")

    figs = _capture(monkeypatch, spectra)
    faces = [json.loads(Path(p).read_text()) for p in glob.glob(str(r / "scores/*/*/*/face.json"))]
    panels = spectra_panels(faces)
    spectra.surprisal_spectra(panels, tmp_path / "spectra.png")
    _assert_agrees(figs, "surprisal_spectra")
    # the right panel draws what SO averages: each source's bar is the mean of its dots
    for v in panels[0].so:
        assert v.so == pytest.approx(float(np.mean(v.values)), abs=1e-9)


# ---------------------------------------------------------------------------- synthetic tables


def _pr_scores(points: dict[str, list[tuple[float, float]]]) -> pd.DataFrame:
    rows = []
    for model, pts in points.items():
        for seed, (rec, prec) in enumerate(pts):
            for name, v in (("recall", rec), ("precision", prec)):
                rows.append(
                    dict(
                        dataset="ds",
                        model=model,
                        seed=seed,
                        reference="references",
                        metric="precision_recall",
                        entry="pr",
                        name=name,
                        value=v,
                        n_candidate=500,
                        n_reference=500,
                    )
                )
    return pd.DataFrame(rows)


def _spread(model: str, precision: list[float], recall: list[float]) -> dict:
    return {
        "metric": "precision_recall",
        "entry": "pr",
        "dataset": "ds",
        "model": model,
        "reference_size": 400,
        "rows": [
            {"vary": "reference", "value": "precision", "runs": precision},
            {"vary": "reference", "value": "recall", "runs": recall},
        ],
    }


def test_plane_with_three_seeds_and_a_saturated_panel(tmp_path, monkeypatch):
    """Three seeds per model: each ellipse holds its mean marker; resamples (against fewer
    references, sitting higher) are not pooled into it; a panel where every model is within
    0.01 of 1 says it is saturated and its axes still end at 1."""
    import genmetrics.figures.precision_recall as pr
    from genmetrics.analysis.pr_plane import plane_tables

    figs = _capture(monkeypatch, pr)
    seeds = {
        "gemma3": [(0.78, 0.80), (0.80, 0.76), (0.77, 0.79)],
        "qwen": [(0.70, 0.85), (0.73, 0.83), (0.69, 0.82)],
    }
    spreads = [_spread("gemma3", [0.86, 0.87, 0.85], [0.83, 0.84, 0.85])]
    points, plane = plane_tables(_pr_scores(seeds), spreads)
    pr.pr_scatter(points, plane, tmp_path / "pr.png", {}, {"pr": "featurizer gpt2"})
    _assert_agrees(figs, "precision_recall, three seeds")
    assert (
        len([p for p in figs[0].axes[0].patches if (p.get_gid() or "").startswith("ellipse:")]) == 2
    )

    saturated = {m: [(1.0, 0.9875), (0.999, 0.99), (1.0, 0.995)] for m in ("a", "b", "c")}
    points, plane = plane_tables(_pr_scores(saturated))
    pr.pr_scatter(points, plane, tmp_path / "sat.png", {}, {"pr": "featurizer minilm"})
    _assert_agrees(figs[1:], "precision_recall, saturated")
    assert "SATURATED" in figs[1].axes[0].get_title()


def test_two_mauve_panels_one_saturated(tmp_path, monkeypatch):
    """Two panels side by side with long names: their titles do not meet; the saturated one
    (every model within 0.01 of 1) says so, the other does not."""
    import genmetrics.figures.bars as bars

    rows = []
    for entry, base in (("mauve_gpt2_large", 0.6), ("mauve_minilm_l6", 0.991)):
        for i, m in enumerate(["gemma3-1b-instruct", "qwen2.5-0.5b-instruct", "smollm2-360m"]):
            mu = base + (0.003 if base > 0.9 else 0.1) * i
            rows.append(
                dict(
                    dataset="webtext",
                    entry=entry,
                    reference="references",
                    model=m,
                    name="mauve",
                    mean=mu,
                    std=0.01,
                    n_seeds=3,
                    ci_low=mu - 0.02,
                    ci_high=min(1.0, mu + 0.02),
                    interval="prompts, seeds",
                )
            )
    figs = _capture(monkeypatch, bars)
    bars.value_bars(pd.DataFrame(rows), tmp_path / "bars.png", "mauve")
    _assert_agrees(figs, "mauve_bars, two panels")
    titles = [ax.get_title() for ax in figs[0].axes if ax.get_visible()]
    assert ["SATURATED" in t for t in titles] == [False, True]


def test_few_shot_lines_proportions_stay_in_0_1(tmp_path, monkeypatch):
    """Precision, recall and the parsed share against n: axes end at 1 (a share of 1.0 sits
    on the frame, not beyond it), and no text meets another."""
    import genmetrics.figures.bars as bars

    rows = [
        dict(
            dataset="bios",
            entry="pr",
            reference="references",
            name=name,
            model=m,
            n=n,
            mean=mu,
            std=0.02,
            se=0.01,
            n_seeds=3,
            ci_low=mu - 0.03,
            ci_high=min(1.0, mu + 0.03),
            interval="prompts, seeds",
        )
        for name in ("precision", "recall")
        for m, base in (("gemma3-1b-instruct", 0.6), ("smollm2-360m", 0.9))
        for n, mu in ((0, base), (2, base + 0.05), (5, min(1.0, base + 0.1)))
    ]
    parsed = pd.DataFrame(
        [
            dict(dataset="bios", model=m, n=n, seed=0, parsed_share=share)
            for m in ("gemma3-1b-instruct", "smollm2-360m")
            for n, share in ((0, 0.2), (2, 0.9), (5, 1.0))
        ]
    )
    figs = _capture(monkeypatch, bars)
    bars.few_shot_lines(pd.DataFrame(rows), tmp_path / "fs.png", parsed)
    _assert_agrees(figs, "few_shot_lines")
    labels = [ax.get_ylabel() for ax in figs[0].axes if ax.get_visible()]
    assert [lab.split()[0] for lab in labels] == ["precision", "recall", "share"]


def test_omniinput_figures_agree(tmp_path, monkeypatch):
    """The OmniInput runs' PR curves (precision and recall, whole input space) and the toy's
    three panels (ρ, the share r(z) of valid inputs, the PR curve): proportion axes within
    [0, 1], the legends and titles apart."""
    import genmetrics.figures.omniinput as omni
    from genmetrics.omniinput.validation import ToyComparison, ToyRun

    figs = _capture(monkeypatch, omni)
    lam = np.linspace(1.0, 3.0, 8)
    runs = {}
    for i, name in enumerate(("gpt2", "gemma3-1b-instruct", "qwen2.5-0.5b-instruct")):
        precision = np.clip(1.0 - 0.1 * (i + 1) * np.linspace(0, 1, 8), 0, 1)
        recall = np.linspace(0.0, 1.0, 8)
        runs[name] = {
            "extras": {
                "curve": {
                    "lambda": lam.tolist(),
                    "precision": precision.tolist(),
                    "recall": recall.tolist(),
                },
                "sampler": {"converged": i != 2, "model_evaluations": 20000, "stages": 9},
            },
            "values": {"aupr": float(np.trapezoid(precision, recall))},
        }
    omni.omniinput_runs_figure(runs, tmp_path / "runs.png")
    _assert_agrees(figs, "omniinput_pr")

    centers = np.linspace(0.5, 3.0, 12)
    r = np.clip(1.2 - 0.4 * centers, 0, 1)
    curve = {"recall": np.linspace(0, 1, 12), "precision": np.linspace(1, 0.2, 12)}
    ln_rho = -((centers - 1.8) ** 2) + 8
    toy_runs = {
        kind: ToyRun(
            ln_rho=ln_rho + 0.1 * k,
            r_hat=np.clip(r + 0.05 * k, 0, 1),
            curve={c: np.clip(v + 0.02 * k, 0, 1) for c, v in curve.items()},
            max_abs_log_rho_error=0.1 * k,
            pr_curve_linf_error=0.02 * k,
        )
        for k, kind in enumerate(("uniform", "gradient", "monte_carlo"), start=1)
    }
    toy = ToyComparison(
        centers=centers,
        ln_rho=ln_rho,
        r=r,
        curve=curve,
        runs=toy_runs,
        spec={"length": 4, "modulus": 3},
        n_bins=12,
        space_size=10_000,
    )
    omni.omniinput_toy_figure(toy, tmp_path / "toy.png")
    _assert_agrees(figs[1:], "omniinput_toy")
    assert (
        len([ax for ax in figs[1].axes if ax.get_ylabel().startswith(("r(z)", "precision"))]) == 2
    )
