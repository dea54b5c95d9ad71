"""Precision and recall figures: the precision–recall plane, PR curves, the N/k sweep."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from genmetrics.analysis.headline import SATURATION_TOLERANCE, saturated_bound
from genmetrics.analysis.pr_plane import (
    ELLIPSE_LEVEL,
    MIN_ELLIPSE_POINTS,
    PR_PLANE_BOUNDS,
    ellipse_radius,
)
from genmetrics.figures._save import mark_empty
from genmetrics.figures._save import save as _save
from genmetrics.figures._style import OKABE_ITO, panel_grid, plt, record_feature, size_range

#: marker of a model's mean point by its prompt template; imported texts have none
TEMPLATE_MARKERS = {"base": "o", "chat": "s", "texts": "^"}


def _reference_label(ref: str) -> str:
    """How a panel names its reference set."""
    if ref in ("", "references"):
        return "the human texts"
    return f"{ref}'s texts"


def _size_text(values) -> str:
    return size_range(values)


def _saturation_text(sub: pd.DataFrame) -> str:
    """``saturated: every model's precision within 0.01 of 1`` for the values of a panel that
    saturate (:func:`genmetrics.analysis.headline.saturated_bound`); empty: none."""
    said = []
    for value in ("precision", "recall"):
        bound = saturated_bound(sub[value], "0–1")
        if bound is not None and len(sub):
            said.append(f"{value} within {SATURATION_TOLERANCE:g} of {bound:g}")
    if not said:
        return ""
    return "SATURATED: every model's " + " and ".join(said) + " (cannot tell them apart)"


def pr_scatter(
    points: pd.DataFrame,
    plane: pd.DataFrame,
    path: str | Path,
    templates: Mapping[str, str] | None = None,
    features: Mapping[str, str] | None = None,
) -> None:
    """The precision–recall plane (Le Bronnec et al. (2024), Fig. 1) from its tables
    (:func:`genmetrics.analysis.pr_plane.plane_tables`): one panel per (dataset,
    precision_recall entry, reference set); per model its mean (recall, precision) over seeds
    (large marker: circle = base template, square = chat, triangle = imported texts;
    ``templates`` maps model → template), its seed points (small dots, with whiskers: each
    seed's interval over prompts) and the ellipse of the plane table: the region holding
    ``level`` (95%) of a 2-D normal fitted to the **seed points alone** (as the paper's),
    centred on the mean marker. Reference resamples (the first seed against a fraction of the
    references) are drawn apart as crosses joined to their mean (a hollow marker) and never
    enter the ellipse: with fewer references P and R move as a whole. A model with fewer than
    three seeds or seeds on a line gets no ellipse, and its legend entry says why. Axes stay
    within [0, 1] (proportions); a panel whose precision or recall is saturated
    (:func:`genmetrics.analysis.headline.saturated_bound`: every model within 0.01 of a
    bound) says so in its title. Each title names the dataset, the featurizer
    (``features``: entry → "featurizer X") and n. Okabe–Ito colours, one per model."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Ellipse as EllipsePatch

    templates = dict(templates or {})
    features = dict(features or {})
    table = plane
    level = float(table["level"].iloc[0]) if len(table) else ELLIPSE_LEVEL
    n_std = float(table["n_std"].iloc[0]) if len(table) else ellipse_radius(level)
    cols = [table.get(c, pd.Series(dtype=object)) for c in ("dataset", "entry", "reference")]
    keys = zip(*cols, strict=True)
    # per dataset: the panels against the human texts first, then model-vs-model ones
    panels = sorted(
        dict.fromkeys(keys), key=lambda k: (k[0], k[2] not in ("", "references"), k[1], k[2])
    )
    fig, axes = plt.subplots(
        max(1, len(panels)),
        1,
        figsize=(11.5, 6.0 * max(1, len(panels))),
        squeeze=False,
        layout="constrained",
    )
    for ax in axes.flat[len(panels) :]:
        ax.set_axis_off()
    if not panels:
        axes[0, 0].text(0.5, 0.5, "no precision_recall scores configured", ha="center")
        mark_empty(fig, "no precision_recall scores configured")
    models = list(dict.fromkeys(table["model"])) if len(table) else []
    colours = {m: OKABE_ITO[i % len(OKABE_ITO)] for i, m in enumerate(models)}
    for ax, (ds, entry, ref) in zip(axes.flat, panels, strict=False):
        sub = table[(table["dataset"] == ds) & (table["entry"] == entry)]
        sub = sub[sub["reference"] == ref]
        here = points[
            (points["dataset"] == ds) & (points["entry"] == entry) & (points["reference"] == ref)
        ]
        lo, hi = np.array([1.0, 1.0]), np.array([0.0, 0.0])
        whiskers = False
        # the reference sets of the spread: new draws from the pool, or subsamples
        sets = set(here.loc[here["kind"] == "resample", "reference_sets"].dropna())
        resamples = "reference draws" if sets == {"redraw"} else "resamples"
        for r in sub.itertuples(index=False):
            c = colours[r.model]
            pts = here[here["model"] == r.model]
            seeds = pts[pts["kind"] == "seed"]
            bounds = seeds[PR_PLANE_BOUNDS].to_numpy(float)
            has = np.isfinite(bounds).all(axis=1)
            if has.any():  # each seed's interval over prompts (its score rows' bounds)
                x, y = seeds["recall"].to_numpy(float)[has], seeds["precision"].to_numpy(float)[has]
                rl, ru, pl, pu = bounds[has].T
                ax.errorbar(
                    x,
                    y,
                    xerr=[np.maximum(x - rl, 0), np.maximum(ru - x, 0)],
                    yerr=[np.maximum(y - pl, 0), np.maximum(pu - y, 0)],
                    fmt="none",
                    ecolor=c,
                    elinewidth=0.8,
                    alpha=0.45,
                    zorder=2,
                    gid=f"whiskers:{r.model}",
                )
                whiskers = True
                # the axes show each whisker whole (a cut whisker misstates its interval)
                lo = np.minimum(lo, [np.nanmin(rl), np.nanmin(pl)])
                hi = np.maximum(hi, [np.nanmax(ru), np.nanmax(pu)])
            ax.scatter(
                seeds["recall"],
                seeds["precision"],
                color=c,
                marker="o",
                s=18,
                alpha=0.8,
                zorder=3,
                clip_on=False,
                gid=f"seeds:{r.model}",
            )
            res = pts[pts["kind"] == "resample"]
            if len(res):
                rx, ry = res["recall"].to_numpy(float), res["precision"].to_numpy(float)
                mx, my = float(rx.mean()), float(ry.mean())
                for x1, y1 in zip(rx, ry, strict=True):  # each resample joined to their mean
                    ax.plot([mx, x1], [my, y1], color=c, lw=0.6, ls=":", alpha=0.7, zorder=2)
                ax.scatter(
                    rx,
                    ry,
                    color=c,
                    marker="x",
                    s=30,
                    linewidths=1.2,
                    zorder=3,
                    clip_on=False,
                    gid=f"resamples:{r.model}",
                )
                ax.scatter(
                    [mx],
                    [my],
                    facecolor="white",
                    edgecolor=c,
                    marker="D",
                    s=55,
                    linewidths=1.4,
                    zorder=3,
                    clip_on=False,
                    gid=f"resample_mean:{r.model}",
                )
            xy = pts[["recall", "precision"]].to_numpy(float)
            lo, hi = np.minimum(lo, xy.min(axis=0)), np.maximum(hi, xy.max(axis=0))
            template = templates.get(r.model, "texts")
            what = f"{r.n_seeds} seed{'s' * (r.n_seeds != 1)}"
            if np.isfinite(r.semi_major):
                centre = np.array([r.ellipse_recall, r.ellipse_precision])
                ax.add_patch(
                    EllipsePatch(
                        tuple(centre),
                        2 * r.semi_major,
                        2 * r.semi_minor,
                        angle=r.angle,
                        facecolor=c,
                        alpha=0.15,
                        edgecolor=c,
                        lw=1.4,
                        zorder=1,
                        gid=f"ellipse:{r.model}",
                    )
                )
                t = np.radians(r.angle)
                ext = np.hypot(
                    r.semi_major * np.array([np.cos(t), np.sin(t)]),
                    r.semi_minor * np.array([np.sin(t), np.cos(t)]),
                )
                lo, hi = np.minimum(lo, centre - ext), np.maximum(hi, centre + ext)
            elif r.ellipse == "on a line":
                what += ": seeds on a line, no ellipse"
            else:
                what += f": under {MIN_ELLIPSE_POINTS} seeds, no ellipse"
            what += f"; {r.n_resamples} {resamples}" if r.n_resamples else ""
            ax.scatter(
                r.recall,
                r.precision,
                color=c,
                marker=TEMPLATE_MARKERS.get(template, "D"),
                s=120,
                edgecolor="black",
                linewidths=1.0,
                zorder=4,
                clip_on=False,
                gid=f"mean:{r.model}",
                label=f"{r.model} ({template}; {what})",
            )
        span = np.maximum(hi - lo, 0.1)
        lo, hi = np.clip(lo - 0.12 * span, 0, 1), np.clip(hi + 0.12 * span, 0, 1)
        ax.set_xlim(lo[0], hi[0])
        ax.set_ylim(lo[1], hi[1])
        ax.set_xlabel("recall: share of reference texts the model covers (diversity)")
        ax.set_ylabel("precision: share of model texts\ninside the reference (quality)")
        seeds_here = here[here["kind"] == "seed"]
        n_res = _size_text(here.loc[here["kind"] == "resample", "n_reference"])
        title = (
            f"dataset {ds}, entry {entry} ({features.get(entry, 'featurizer not given')}): "
            f"against {_reference_label(ref)}\nn = {_size_text(seeds_here['n_candidate'])} "
            f"texts per seed, {_size_text(seeds_here['n_reference'])} references"
            + (f"; {resamples}: {n_res} references" if n_res != "?" else "")
        )
        saturated = _saturation_text(sub)
        ax.set_title(title + (f"\n{saturated}" if saturated else ""), fontsize=10)
        ax.grid(alpha=0.3)
        resample_key = (
            f"reference draw: the first seed against\n{n_res} other references "
            "(new draws from the pool)"
            if sets == {"redraw"}
            else f"reference resample: the first seed against\n{n_res} references "
            "(fewer than the seeds': sits apart)"
        )
        keys = [
            Line2D([], [], color="0.3", marker="o", ls="", ms=4, label="one generation seed"),
            *(
                [
                    Line2D(
                        [],
                        [],
                        color="0.3",
                        lw=0.8,
                        label="whiskers: that seed's interval\nover prompts (its scores' CI)",
                    )
                ]
                if whiskers
                else []
            ),
            EllipsePatch(
                (0, 0),
                1,
                1,
                facecolor="0.5",
                alpha=0.3,
                edgecolor="0.3",
                label=f"{level:.0%} ellipse of a 2-D normal fitted to\nthe model's seeds "
                f"({n_std:.2f}σ; ≥ {MIN_ELLIPSE_POINTS} seeds)",
            ),
            *(
                [
                    Line2D([], [], color="0.3", marker="x", ls="", ms=5, label=resample_key),
                    Line2D(
                        [],
                        [],
                        color="0.3",
                        marker="D",
                        ls="",
                        ms=6,
                        mfc="white",
                        label=f"mean of the reference {resamples.split()[-1]}",
                    ),
                ]
                if sub["n_resamples"].sum()
                else []
            ),
            *(
                Line2D(
                    [],
                    [],
                    color="0.3",
                    marker=mk,
                    ls="",
                    ms=8,
                    mec="black",
                    label=f"mean over seeds, {t} model"
                    if t != "texts"
                    else "mean over seeds, imported texts",
                )
                for t, mk in TEMPLATE_MARKERS.items()
                if t in {templates.get(m, "texts") for m in sub["model"]}
            ),
        ]
        handles, _ = ax.get_legend_handles_labels()
        gap = Line2D([], [], ls="", label=" ")
        ax.legend(
            handles=[*handles, gap, *keys],
            fontsize=7.5,
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            title="model (template; points)",
            title_fontsize=8,
        )
    fig.suptitle(
        "Precision vs recall of each model (Le Bronnec et al. 2024, Fig. 1)\n"
        f"large marker: mean over seeds; ellipse: {level:.0%} region of a 2-D normal fitted "
        "to the model's generation seeds",
        fontsize=11,
    )
    _save(fig, path)


def pr_curves(records: list[dict], path: str | Path) -> None:
    """PR-curves (Sajjadi et al. 2018): β (recall) against α (precision) over the λ grid, one
    curve per source (model/seed), one panel per (dataset, entry); F8/F1/8 in the legend; each
    title names the dataset, the entry, its featurizer (the records' provenance) and n (texts
    per source, references). Both axes are proportions: [0, 1]."""
    curves = [r for r in records if "alpha" in (r.get("extras") or {})]
    panels = list(dict.fromkeys((r.get("dataset", "?"), r.get("entry", "prd")) for r in curves))
    fig, axes = panel_grid(len(panels), 6.4, 5.6, "no prd scores configured")
    for ax, (ds, entry) in zip(axes.flat, panels, strict=False):
        recs = [r for r in curves if (r.get("dataset", "?"), r.get("entry", "prd")) == (ds, entry)]
        for i, rec in enumerate(recs):
            ex, v = rec["extras"], rec["values"]
            ax.plot(
                ex["beta"],
                ex["alpha"],
                color=OKABE_ITO[i % len(OKABE_ITO)],
                lw=1.6,
                ls=("-", "--", ":")[(i // len(OKABE_ITO)) % 3],
                label=f"{rec['source']}  F8={v['f8']:.2f}  F1/8={v['f1_8']:.2f}",
            )
        feats = sorted({record_feature(r) for r in recs})
        n_c = size_range((r.get("n") or {}).get("candidate") for r in recs)
        n_r = size_range((r.get("n") or {}).get("reference") for r in recs)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel("recall β(λ): share of the human distribution covered")
        ax.set_ylabel("precision α(λ): share of the model's mass on human text")
        ax.set_title(
            f"dataset {ds}, entry {entry} ({', '.join(feats)})\n"
            f"n = {n_c} texts per source, {n_r} references",
            fontsize=10,
        )
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.suptitle(
        "Precision–recall curves against human text "
        "(PRD: Sajjadi et al. 2018; Le Bronnec et al. 2024)",
        fontsize=11,
    )
    _save(fig, path)


def spaced_ticks(values, min_ratio: float = 1.15) -> list[int]:
    """The N values to label on a log axis: in increasing order, each at least ``min_ratio``
    times the last one kept (labels of nearby sizes, 243 and 246, would print over each
    other); the largest is always kept, replacing a kept neighbour too close to it."""
    vals = sorted({int(v) for v in values})
    kept: list[int] = []
    for v in vals:
        if not kept or v >= kept[-1] * min_ratio:
            kept.append(v)
    if vals and kept[-1] != vals[-1]:
        if len(kept) > 1 and vals[-1] < kept[-1] * min_ratio:
            kept.pop()
        kept.append(vals[-1])
    return kept


def sweep_figure(df: pd.DataFrame, path: str | Path) -> None:
    """Precision and recall as functions of N (left) and k (right), one line per source:
    the means over runs (seeds × subsample repeats) of
    :func:`genmetrics.analysis.distribution.sweep_means`, shaded over their range where a
    point has more than one run; the titles give the fixed k, the N of the k sweep and the
    runs per point. One colour per source (tab10, tab20 beyond 10 sources), named once in a
    legend under the panels (solid: precision, dashed: recall); the N axis labels the sizes
    run, those closer than :func:`spaced_ticks` allows left unlabelled."""
    from matplotlib.lines import Line2D

    sources = sorted(set(df["source"]))
    cmap = plt.get_cmap("tab10" if len(sources) <= 10 else "tab20")
    colour = {src: cmap(i % cmap.N) for i, src in enumerate(sources)}
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.8))
    fig.suptitle(
        "kNN precision and recall against the sample size N and the neighbourhood k "
        "(Le Bronnec et al. 2024, Fig. 6 / B.1)\nlines: the mean over the runs at each point "
        "(seeds × subsamples); shaded: their range",
        fontsize=10,
    )
    for ax, axis in zip(axes, ("n", "k"), strict=True):
        d = df[df["sweep"] == axis]
        for src, g in d.groupby("source"):
            g = g.sort_values("value")
            for value, marker, ls in (("precision", "o", "-"), ("recall", "s", "--")):
                ax.plot(g["value"], g[value], color=colour[src], marker=marker, ms=3, ls=ls)
                if (g["runs"] > 1).any():
                    lo, hi = g[f"{value}_min"], g[f"{value}_max"]
                    ax.fill_between(g["value"], lo, hi, color=colour[src], alpha=0.12, lw=0)
        ax.set_xlabel("number of texts per side N" if axis == "n" else "neighbours k")
        if axis == "n":
            ax.set_xscale("log")
            ns = spaced_ticks(d["value"])
            ax.set_xticks(ns, [str(v) for v in ns])  # the sizes run, not powers of ten
            ax.minorticks_off()
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("kNN precision (solid) / recall (dashed)")
    axes[0].set_title(f"P/R as N grows (k = {_values(df, 'n', 'other')}; {_runs(df, 'n')})")
    axes[1].set_title(f"P/R as k grows (N = {_values(df, 'k', 'other')}; {_runs(df, 'k')})")
    handles = [Line2D([], [], color=colour[s], lw=2, label=s) for s in sources]
    handles += [
        Line2D([], [], color="0.3", marker="o", ms=3, ls="-", label="precision"),
        Line2D([], [], color="0.3", marker="s", ms=3, ls="--", label="recall"),
    ]
    ncol = min(4, len(handles))
    rows = -(-len(handles) // ncol)
    fig.tight_layout(rect=(0, 0.06 * rows, 1, 0.94))  # the title above, the legend below
    fig.legend(
        handles=handles, loc="lower center", ncol=ncol, fontsize=7, frameon=False,
        bbox_to_anchor=(0.5, 0.0),
    )  # fmt: skip
    _save(fig, path)


def _values(df: pd.DataFrame, axis: str, column: str) -> str:
    """The distinct values of ``column`` on one sweep axis, as a short text."""
    vals = sorted({int(v) for v in df.loc[df["sweep"] == axis, column] if pd.notna(v)})
    return "/".join(str(v) for v in vals) if vals else "—"


def _runs(df: pd.DataFrame, axis: str) -> str:
    """'R runs per point' (or a range of R) on one sweep axis."""
    runs = sorted({int(v) for v in df.loc[df["sweep"] == axis, "runs"]})
    if not runs:
        return "no runs"
    text = str(runs[0]) if len(runs) == 1 else f"{runs[0]}–{runs[-1]}"
    return f"{text} run{'s' if runs[-1] > 1 else ''} per point"
