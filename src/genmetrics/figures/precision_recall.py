"""Figures: metric-correlation heatmap, the precision–recall plane and the analyses' figures,
readable on their own."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from genmetrics.io import atomic_path  # noqa: E402

PR_VALUES = ("precision", "recall")


def _save(fig, path: str | Path) -> None:
    with atomic_path(path, suffix=".tmp.png") as tmp:
        fig.savefig(tmp, dpi=130, bbox_inches="tight")
    plt.close(fig)


def correlation_heatmap(
    table: pd.DataFrame,
    path: str | Path,
    method: str,
    cluster: bool = True,
    min_points: int | None = None,
    bold_from: int = 10,
) -> None:
    """One heatmap panel per scope of :func:`genmetrics.analysis.correlation.correlation_table`
    (each dataset, then ``pooled``) for ``method``: lower triangle, −1 blue … +1 red (RdBu,
    colour-blind safe), each cell annotated with r and, smaller, its bootstrap interval.

    Only the table's ``in_figure`` pairs (the headline scores) are drawn when there are any;
    scores with no defined correlation in any drawn panel (fewer than ``min_points`` sources
    with both scores, or constant) are listed under the figure instead. r is in bold when its
    interval excludes 0 and it rests on at least ``bold_from`` sources (with fewer, the
    bootstrap itself is unreliable: a perfect ±1 stays ±1 in every resample). ``cluster``:
    metrics ordered by hierarchical clustering on 1 − |r| (mean over the drawn panels), else
    in the table's order. A scope with fewer than ``min_points`` sources says so in words
    instead of drawing a matrix.
    """
    import textwrap
    import warnings

    from genmetrics.analysis.correlation import (
        MIN_POINTS,
        POOLED,
        cluster_order,
        correlation_matrix,
    )

    min_points = MIN_POINTS if min_points is None else min_points
    label = method.capitalize()
    t = table[table["method"] == method]
    if t["in_figure"].astype(bool).any():
        t = t[t["in_figure"].astype(bool)]
    scopes = list(dict.fromkeys(t["scope"]))
    points = {s: int(t.loc[t["scope"] == s, "n_points"].iloc[0]) for s in scopes}
    drawn = [s for s in scopes if points[s] >= min_points]
    names = list(dict.fromkeys([*t["metric_a"], *t["metric_b"]]))
    hidden: list[str] = []
    if drawn:
        stack = np.stack(
            [
                correlation_matrix(t, s, method).reindex(index=names, columns=names).to_numpy()
                for s in drawn
            ]
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # pairs undefined everywhere
            mean_abs = np.nanmean(np.abs(stack), axis=0)
        defined = np.isfinite(stack).any(axis=(0, 2))
        hidden = [m for m, ok in zip(names, defined, strict=True) if not ok]
        names = [m for m, ok in zip(names, defined, strict=True) if ok]
        mean_abs = pd.DataFrame(mean_abs[np.ix_(defined, defined)], index=names, columns=names)
        if cluster:
            names = cluster_order(mean_abs)
    k = len(names)
    n_total = sum(points[s] for s in scopes if s != POOLED)
    side = max(4.5, 1.8 + 0.8 * max(k - 1, 1))
    ncols = max(1, int(np.ceil(np.sqrt(len(scopes)))))  # panels in a near-square grid
    nrows = max(1, -(-len(scopes) // ncols))
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(side * ncols + 1.4, side * nrows + 1.2),
        squeeze=False,
        layout="constrained",
    )
    cmap = plt.get_cmap("RdBu_r")
    norm = matplotlib.colors.Normalize(vmin=-1, vmax=1)
    for ax in axes.flat[len(scopes) :]:
        ax.set_axis_off()
    if not scopes:
        axes[0, 0].text(0.5, 0.5, "no scores to correlate", ha="center", va="center")
        axes[0, 0].set_axis_off()
    for ax, scope in zip(axes.flat, scopes, strict=False):
        n = points[scope]
        what = f"{n} scored sources" if n != 1 else "1 scored source"
        if scope == POOLED:
            title = f"All datasets pooled: {what}\n(each score z-scored within its dataset)"
        else:
            title = f"Dataset {scope}: {what}"
        ax.set_title(title, fontsize=11)
        if n < min_points or k < 2:
            reason = (
                f"{what}: too few for a correlation (need ≥ {min_points})"
                if n < min_points
                else "no pair of scores with a defined correlation"
            )
            ax.text(0.5, 0.5, reason, ha="center", va="center", fontsize=11)
            ax.set_axis_off()
            continue
        r, low, high, cnt = (
            correlation_matrix(t, scope, method, c)
            .reindex(index=names, columns=names)
            .to_numpy(dtype=float)
            for c in ("r", "low", "high", "n")
        )
        rgba = np.ones((k, k, 4))
        for i in range(1, k):
            for j in range(i):
                v = r[i, j]
                if not np.isfinite(v):
                    rgba[i, j] = (0.88, 0.88, 0.88, 1.0)
                    few = np.isfinite(cnt[i, j]) and cnt[i, j] < min_points
                    note = f"n={int(cnt[i, j])}" if few else "constant"
                    ax.text(j, i, note, ha="center", va="center", fontsize=6.5, color="0.35")
                    continue
                rgba[i, j] = cmap(norm(v))
                colour = "white" if abs(v) > 0.6 else "black"
                lo, hi = low[i, j], high[i, j]
                sure = np.isfinite(lo) and (lo > 0 or hi < 0) and cnt[i, j] >= bold_from
                ax.text(
                    j,
                    i - 0.14,
                    f"{v:.2f}",
                    ha="center",
                    va="center",
                    fontsize=8.5,
                    color=colour,
                    fontweight="bold" if sure else "normal",
                )
                ci = f"[{lo:.1f}, {hi:.1f}]" if np.isfinite(lo) else "no interval"
                ax.text(j, i + 0.24, ci, ha="center", va="center", fontsize=6.2, color=colour)
        ax.imshow(rgba, interpolation="nearest")
        ax.set_xlim(-0.5, k - 1.5)
        ax.set_ylim(k - 0.5, 0.5)
        ax.set_xticks(range(k - 1), names[:-1], rotation=45, ha="right", fontsize=9)
        ax.set_yticks(range(1, k), names[1:], fontsize=9)
        ax.spines[:].set_visible(False)
    if drawn and k >= 2:
        fig.colorbar(
            matplotlib.cm.ScalarMappable(norm=norm, cmap=cmap),
            ax=axes.ravel().tolist(),
            shrink=0.5,
            label=f"{label} correlation (−1: opposite, 0: unrelated, +1: together)",
        )
    fig.suptitle(
        f"How metric scores move together across {n_total} scored sources "
        f"(model × seed points): {label} correlation\n"
        "each cell: correlation and, below, its 95% bootstrap interval; bold: interval "
        f"excludes 0 with ≥ {bold_from} sources; grey: fewer than {min_points} sources "
        "or a constant score",
        fontsize=12,
    )
    if hidden:
        note = (
            f"Not shown (fewer than {min_points} sources with both scores, or constant, "
            f"in every panel): {', '.join(hidden)}"
        )
        fig.supxlabel(textwrap.fill(note, 40 + int(14 * side * ncols)), fontsize=9)
    _save(fig, path)


#: Okabe & Ito (2008) colour-blind-safe palette (black last), cycled beyond eight models
OKABE_ITO = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#D55E00",
    "#CC79A7",
    "#56B4E9",
    "#F0E442",
    "#000000",
)
#: marker of a model's mean point by its prompt template; imported texts have none
TEMPLATE_MARKERS = {"base": "o", "chat": "s", "texts": "^"}
PR_PLANE_KEYS = ["dataset", "entry", "reference", "model"]
PR_PLANE_COLUMNS = [*PR_PLANE_KEYS, "kind", "seed", "resample", "recall", "precision"]


def pr_plane_points(scores: pd.DataFrame, spreads: Sequence[Mapping] = ()) -> pd.DataFrame:
    """The points of the precision–recall plane, one row per (dataset, entry, reference,
    model, point): columns :data:`PR_PLANE_COLUMNS`.

    * ``kind="seed"``: one per generation seed, the ``precision_recall`` scores of
      ``scores`` (the tidy ``results/scores.csv``): that seed's texts against the whole
      reference set;
    * ``kind="resample"``: one per reference resample of a spread record
      (:func:`genmetrics.analysis.distribution.spread_analysis`, the ``vary="reference"``
      runs): the model's first seed against a random ``fraction`` of the reference set
      (resample ``i`` drawn with seed ``settings.seed + i``); its reference is the entry's, as
      in ``scores``. Records of other metrics, or of no scored (dataset, entry), are skipped.
    """
    d = scores[(scores["metric"] == "precision_recall") & scores["name"].isin(PR_VALUES)]
    if d.empty:
        return pd.DataFrame(columns=PR_PLANE_COLUMNS)
    d = d.assign(reference=d["reference"].fillna("").astype(str))
    wide = d.pivot_table(
        index=[*PR_PLANE_KEYS, "seed"], columns="name", values="value", aggfunc="first"
    ).reset_index()
    wide = wide.assign(kind="seed", resample=pd.NA)
    keys = zip(d["dataset"], d["entry"], strict=True)
    refs = dict(zip(keys, d["reference"], strict=True))
    rows = []
    for rec in spreads:
        ref = refs.get((rec.get("dataset"), rec.get("entry")))
        if rec.get("metric") != "precision_recall" or ref is None:
            continue
        runs = {r["value"]: r["runs"] for r in rec["rows"] if r["vary"] == "reference"}
        if not all(n in runs for n in PR_VALUES):
            continue
        for i, (p, r) in enumerate(zip(runs["precision"], runs["recall"], strict=True)):
            key = (rec["dataset"], rec["entry"], ref, rec["model"])
            rows.append(dict(zip(PR_PLANE_KEYS, key, strict=True)))
            rows[-1].update(kind="resample", seed=pd.NA, resample=i, precision=p, recall=r)
    out = pd.concat([wide, pd.DataFrame(rows)], ignore_index=True) if rows else wide
    out["seed"] = out["seed"].astype("Int64")
    out["resample"] = out["resample"].astype("Int64")
    return out[PR_PLANE_COLUMNS].reset_index(drop=True)


@dataclass(frozen=True)
class Ellipse:
    """A covariance ellipse in the (recall, precision) plane: ``center`` (x = recall,
    y = precision), ``cov`` (2 × 2), ``semi_axes`` (major, minor) = ``n_std`` · sqrt of the
    eigenvalues of ``cov``, ``angle``: degrees from the recall axis to the major axis."""

    center: tuple[float, float]
    cov: np.ndarray
    semi_axes: tuple[float, float]
    angle: float
    n_std: float
    n_points: int


def covariance_ellipse(
    points: np.ndarray,
    center: Sequence[float] | None = None,
    n_std: float = 2.0,
    groups: Sequence[str] | None = None,
) -> Ellipse | None:
    """The ``n_std``·σ ellipse of ``points`` (n × 2: recall, precision): its shape is their
    sample covariance (``numpy.cov(points.T)``, ddof=1) or, with ``groups``, the pooled
    within-group covariance Σ_g Σ_i (x_i − x̄_g)(x_i − x̄_g)ᵀ / (n − G) (each group centred on its
    own mean; groups of one point add nothing); its semi-axes ``n_std`` · sqrt of that
    matrix's eigenvalues along its eigenvectors; centred on ``center`` (default: the points'
    mean). None without a degree of freedom (fewer than two points in every group)."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    labels = (
        np.zeros(len(pts), dtype=int)
        if groups is None
        else np.unique(groups, return_inverse=True)[1]
    )
    dev = pts.copy()
    for g in np.unique(labels):
        dev[labels == g] -= pts[labels == g].mean(axis=0)
    dof = len(pts) - len(np.unique(labels))
    if dof < 1:
        return None
    cov = dev.T @ dev / dof
    vals, vecs = np.linalg.eigh(cov)  # ascending
    vals = np.clip(vals, 0.0, None)
    major = vecs[:, 1]
    angle = float(np.degrees(np.arctan2(major[1], major[0])))
    c = pts.mean(axis=0) if center is None else np.asarray(center, dtype=np.float64)
    return Ellipse(
        center=(float(c[0]), float(c[1])),
        cov=cov,
        semi_axes=(float(n_std * np.sqrt(vals[1])), float(n_std * np.sqrt(vals[0]))),
        angle=angle,
        n_std=float(n_std),
        n_points=len(pts),
    )


def pr_plane(points: pd.DataFrame, n_std: float = 2.0) -> pd.DataFrame:
    """Per (dataset, entry, reference, model) of :func:`pr_plane_points`: the mean point
    (``recall``, ``precision``: mean over the seed points, as in the headline table), the
    number of seed and resample points, and the :func:`covariance_ellipse` of its points,
    centred on that mean, whose shape is the spread of the seed points around their mean
    pooled with the spread of the resample points around theirs (a resample keeps a
    ``fraction`` of the references, which shifts P and R as a whole — kNN radii grow — so each
    kind is centred on its own mean and only its spread counts): ``cov_rr``, ``cov_rp``,
    ``cov_pp``, ``semi_major``, ``semi_minor``, ``angle`` (NaN without two points of a kind)."""
    rows = []
    for key, g in points.groupby(PR_PLANE_KEYS, sort=False):
        seeds = g[g["kind"] == "seed"]
        base = seeds if len(seeds) else g
        center = (float(base["recall"].mean()), float(base["precision"].mean()))
        e = covariance_ellipse(
            g[["recall", "precision"]].to_numpy(float), center, n_std, groups=g["kind"].tolist()
        )
        rows.append(
            {
                **dict(zip(PR_PLANE_KEYS, key, strict=True)),
                "recall": center[0],
                "precision": center[1],
                "n_seeds": len(seeds),
                "n_resamples": int((g["kind"] == "resample").sum()),
                "cov_rr": e.cov[0, 0] if e else np.nan,
                "cov_rp": e.cov[0, 1] if e else np.nan,
                "cov_pp": e.cov[1, 1] if e else np.nan,
                "semi_major": e.semi_axes[0] if e else np.nan,
                "semi_minor": e.semi_axes[1] if e else np.nan,
                "angle": e.angle if e else np.nan,
                "n_std": n_std,
            }
        )
    return pd.DataFrame(rows)


def _reference_label(ref: str) -> str:
    """How a panel names its reference set."""
    if ref in ("", "references"):
        return "the human texts"
    return f"{ref}'s texts"


def pr_scatter(
    df: pd.DataFrame,
    path: str | Path,
    spreads: Sequence[Mapping] = (),
    templates: Mapping[str, str] | None = None,
    n_std: float = 2.0,
) -> pd.DataFrame:
    """The precision–recall plane (Le Bronnec et al. (2024), Fig. 1): one panel per
    (dataset, precision_recall entry, reference set); per model its mean (recall,
    precision) over seeds (large marker: circle = base template, square = chat, triangle =
    imported texts; ``templates`` maps model → template), its seed points (small dots), its
    reference-resample points (small crosses, from ``spreads``: spread records) and the
    ``n_std``·σ covariance ellipse of those points (seeds and resamples each around their own
    mean, pooled: :func:`pr_plane`), centred on the mean. A model without two points of a kind
    gets no ellipse, and its legend entry says so.
    Okabe–Ito colours, one per model. Returns :func:`pr_plane`'s table."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Ellipse as EllipsePatch

    templates = dict(templates or {})
    points = pr_plane_points(df, spreads)
    table = pr_plane(points, n_std) if len(points) else pd.DataFrame()
    cols = [table.get(c, pd.Series(dtype=object)) for c in ("dataset", "entry", "reference")]
    keys = zip(*cols, strict=True)
    # per dataset: the panels against the human texts first, then model-vs-model ones
    panels = sorted(
        dict.fromkeys(keys), key=lambda k: (k[0], k[2] not in ("", "references"), k[1], k[2])
    )
    fig, axes = plt.subplots(
        max(1, len(panels)),
        1,
        figsize=(10.5, 5.6 * max(1, len(panels))),
        squeeze=False,
        layout="constrained",
    )
    for ax in axes.flat[len(panels) :]:
        ax.set_axis_off()
    if not panels:
        axes[0, 0].text(0.5, 0.5, "no precision_recall scores configured", ha="center")
    models = list(dict.fromkeys(table["model"])) if len(table) else []
    colours = {m: OKABE_ITO[i % len(OKABE_ITO)] for i, m in enumerate(models)}
    for ax, (ds, entry, ref) in zip(axes.flat, panels, strict=False):
        sub = table[(table["dataset"] == ds) & (table["entry"] == entry)]
        sub = sub[sub["reference"] == ref]
        lo, hi = np.array([1.0, 1.0]), np.array([0.0, 0.0])
        for r in sub.itertuples(index=False):
            c = colours[r.model]
            pts = points[
                (points["dataset"] == ds)
                & (points["entry"] == entry)
                & (points["reference"] == ref)
                & (points["model"] == r.model)
            ]
            for kind, marker, size in (("seed", "o", 16), ("resample", "x", 22)):
                p = pts[pts["kind"] == kind]
                ax.scatter(
                    p["recall"],
                    p["precision"],
                    color=c,
                    marker=marker,
                    s=size,
                    alpha=0.6,
                    linewidths=1.0,
                    zorder=2,
                )
            xy = pts[["recall", "precision"]].to_numpy(float)
            lo, hi = np.minimum(lo, xy.min(axis=0)), np.maximum(hi, xy.max(axis=0))
            template = templates.get(r.model, "texts")
            n_pts = r.n_seeds + r.n_resamples
            what = f"{r.n_seeds} seed{'s' * (r.n_seeds != 1)}"
            what += f" + {r.n_resamples} resamples" if r.n_resamples else ""
            if np.isfinite(r.semi_major):
                ax.add_patch(
                    EllipsePatch(
                        (r.recall, r.precision),
                        2 * r.semi_major,
                        2 * r.semi_minor,
                        angle=r.angle,
                        facecolor=c,
                        alpha=0.15,
                        edgecolor=c,
                        lw=1.4,
                        zorder=1,
                    )
                )
                t = np.radians(r.angle)
                ext = np.hypot(
                    r.semi_major * np.array([np.cos(t), np.sin(t)]),
                    r.semi_minor * np.array([np.sin(t), np.cos(t)]),
                )
                centre = np.array([r.recall, r.precision])
                lo, hi = np.minimum(lo, centre - ext), np.maximum(hi, centre + ext)
            else:
                what += f": {n_pts} point, no ellipse"
            ax.scatter(
                r.recall,
                r.precision,
                color=c,
                marker=TEMPLATE_MARKERS.get(template, "D"),
                s=110,
                edgecolor="black",
                linewidths=1.0,
                zorder=3,
                label=f"{r.model} ({template}; {what})",
            )
        span = np.maximum(hi - lo, 0.1)
        lo, hi = np.clip(lo - 0.15 * span, 0, 1.02), np.clip(hi + 0.15 * span, 0, 1.02)
        ax.set_xlim(lo[0], hi[0])
        ax.set_ylim(lo[1], hi[1])
        ax.set_xlabel("recall: share of reference texts the model covers (diversity)")
        ax.set_ylabel("precision: share of model texts inside the reference (quality)")
        title = f"dataset {ds}, entry {entry}: against {_reference_label(ref)}"
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3)
        resample_key = "one reference resample (first seed)"
        keys = [
            Line2D([], [], color="0.3", marker="o", ls="", ms=4, label="one generation seed"),
            *(
                [Line2D([], [], color="0.3", marker="x", ls="", ms=5, label=resample_key)]
                if sub["n_resamples"].sum()
                else []
            ),
            EllipsePatch(
                (0, 0),
                1,
                1,
                facecolor="0.5",
                alpha=0.3,
                edgecolor="0.3",
                label=f"{n_std:g}σ ellipse of those points",
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
        f"mean over seeds; {n_std:g}σ ellipse over seeds and reference resamples",
        fontsize=11,
    )
    _save(fig, path)
    return table


def pr_curves(records: list[dict], path: str | Path) -> None:
    """PR-curves (Sajjadi et al. 2018): β (recall) against α (precision) over the λ grid, one
    curve per model; F8/F1/8 in the legend."""
    fig, ax = plt.subplots(figsize=(6.2, 5.2))
    cmap = plt.get_cmap("tab10")
    if not records:
        ax.text(0.5, 0.5, "no prd scores configured", ha="center", va="center")
    for i, rec in enumerate(records):
        ex = rec.get("extras") or {}
        if "alpha" not in ex:
            continue
        v = rec["values"]
        ax.plot(
            ex["beta"],
            ex["alpha"],
            color=cmap(i % 10),
            lw=1.6,
            label=f"{rec['source']}  F8={v['f8']:.2f}  F1/8={v['f1_8']:.2f}",
        )
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("recall β(λ): how much of the human distribution the model covers")
    ax.set_ylabel("precision α(λ): how much of the model's mass lies on human text")
    ax.set_title(
        "Precision–recall curves against human text\n(PRD: Sajjadi et al. 2018; Le Bronnec et al. 2024)"
    )
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower left")
    _save(fig, path)


def sweep_figure(df: pd.DataFrame, path: str | Path) -> None:
    """Precision and recall as functions of N (left) and k (right), one line per source."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4))
    cmap = plt.get_cmap("tab10")
    for ax, axis in zip(axes, ("n", "k"), strict=True):
        d = df[df["sweep"] == axis]
        for i, (src, g) in enumerate(d.groupby("source")):
            g = g.groupby(axis)[["precision", "recall"]].mean().reset_index()
            ax.plot(
                g[axis],
                g["precision"],
                color=cmap(i % 10),
                marker="o",
                ms=3,
                label=f"{src} precision",
            )
            ax.plot(
                g[axis],
                g["recall"],
                color=cmap(i % 10),
                marker="s",
                ms=3,
                ls="--",
                label=f"{src} recall",
            )
        ax.set_xlabel("number of texts per side N" if axis == "n" else "neighbours k")
        if axis == "n":
            ax.set_xscale("log")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("kNN precision (solid) / recall (dashed)")
    axes[0].set_title("P/R as N grows (k fixed)")
    axes[1].set_title("P/R as k grows (all texts)")
    axes[1].legend(fontsize=7, loc="lower right")
    _save(fig, path)


def length_figure(corr: pd.DataFrame, path: str | Path, n_sources: int) -> None:
    """Spearman correlation of each score with mean text length across sources."""
    corr = corr.sort_values("spearman")
    fig, ax = plt.subplots(figsize=(6.5, 0.6 + 0.28 * max(len(corr), 1)))
    ax.barh(
        corr.index.astype(str),
        corr["spearman"],
        color=np.where(corr["spearman"] > 0, "#c0504d", "#4f81bd"),
    )
    ax.axvline(0, color="black", lw=0.6)
    ax.set_xlim(-1.05, 1.05)
    ax.set_xlabel("Spearman correlation with mean length in words (across sources)")
    ax.set_title(f"Which scores follow text length? ({n_sources} sources; Shaib et al. 2024)")
    _save(fig, path)


def _smooth(y: np.ndarray, width: int = 25) -> np.ndarray:
    """Centred moving average (edges reflected), for readable spectra."""
    pad = width // 2
    padded = np.pad(y, pad, mode="reflect")
    return np.convolve(padded, np.ones(width) / width, mode="valid")


def surprisal_spectra(records: list[dict], path: str | Path) -> None:
    """FACE surprisal spectra (Yang et al. 2023; Liu et al. 2025): per dataset, the mean
    aligned spectrum of the human texts and of each model, smoothed, with a 95% band for the
    mean (± 1.96 SD / √n); log-scaled when every value is positive (``value=norm``)."""
    by_ds: dict[str, list[dict]] = {}
    for rec in records:
        if "spectrum" in (rec.get("extras") or {}):
            by_ds.setdefault(rec["dataset"], []).append(rec)
    n_panels = max(1, len(by_ds))
    ncols = min(2, n_panels)
    nrows = -(-n_panels // ncols)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(6.4 * ncols, 4.6 * nrows), squeeze=False, layout="constrained"
    )
    for ax in axes.flat[n_panels:]:
        ax.set_visible(False)
    if not by_ds:
        axes[0, 0].text(0.5, 0.5, "no face scores configured", ha="center", va="center")
    cmap = plt.get_cmap("tab10")
    p: dict = {}
    entry = "face"
    for ax, (ds, recs) in zip(axes.flat, sorted(by_ds.items()), strict=False):
        recs = sorted(recs, key=lambda r: r["source"])
        first = recs[0]
        sp = first["extras"]["spectrum"]
        freq = np.asarray(sp["freq"])
        n_ref = first["n"].get("reference", 1) - first["n"].get("dropped_reference", 0)
        curves = [("human (reference)", sp["reference_mean"], sp["reference_sd"], n_ref, "k")]
        for i, rec in enumerate(recs):
            s = rec["extras"]["spectrum"]
            n_c = rec["n"].get("candidate", 1) - rec["n"].get("dropped_candidate", 0)
            label = f"{rec['source']}  SO={rec['values']['so']:.3f}"
            curves.append((label, s["candidate_mean"], s["candidate_sd"], n_c, cmap(i % 10)))
        positive = all(min(c[1]) > 0 for c in curves)
        for label, mean, sd, n, color in curves:
            mean, half = np.asarray(mean), 1.96 * np.asarray(sd) / np.sqrt(max(n, 1))
            ax.plot(freq, mean, color=color, lw=0.5, alpha=0.3)
            ax.plot(freq, _smooth(mean), color=color, lw=1.6, label=label)
            ax.fill_between(
                freq, _smooth(mean - half), _smooth(mean + half), color=color, alpha=0.15
            )
        if positive:
            ax.set_yscale("log")
        p, entry = first.get("params", {}), first.get("entry", "face")
        ax.set_title(f"dataset: {ds}", fontsize=10)
        ax.set_xlabel("frequency (cycles per token)")
        ax.set_ylabel("|X(f)|: amplitude" if p.get("value") == "norm" else "Re X(f)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(
        "Spectra of per-token surprisal (FACE, Yang et al. 2023): closer to the human curve = "
        "more human-like fluctuation; bands: 95% CI of the mean\n"
        f"score entry {entry}: value={p.get('value')}, zscore={p.get('zscore')}, "
        f"align={p.get('align')}, method={p.get('method')}, window={p.get('window')}",
        fontsize=10,
    )
    _save(fig, path)


def valid_cell_figure(table: pd.DataFrame, path: str | Path) -> None:
    """FACE-2's scaling check as a figure (Liu et al. 2025, Table 2), from the scaling table
    (:func:`genmetrics.analysis.scaling.run_scaling`): per metric, the share of
    (family × dataset) cells where it orders models by size; a dot per evaluator LM, a bar for
    their mean with its 95% paired-bootstrap interval, the random baseline dashed."""
    from genmetrics.analysis.scaling import summarise_evaluators

    summary = summarise_evaluators(table).sort_values("mean", na_position="first")
    ci = {
        m: (lo, hi)
        for m, lo, hi in zip(table["metric"], table["mean_low"], table["mean_high"], strict=True)
        if np.isfinite(lo)
    }
    known = table["baseline"].dropna()
    baseline = float(known.iloc[0]) if len(known) else 0.0
    n = len(summary)
    fig, ax = plt.subplots(figsize=(8.0, 1.2 + 0.32 * max(n, 1)))
    if n == 0:
        ax.text(0.5, 0.5, "no metric has a complete (family, dataset) cell", ha="center")
    y = np.arange(n)
    ax.barh(y, summary["mean"].fillna(0), color="#9ecae1", label="mean over evaluators")
    cmap = plt.get_cmap("tab10")
    evaluators = [e for e in table["evaluator"].dropna().unique()]
    for k, ev in enumerate(evaluators):
        sub = table[table["evaluator"] == ev].set_index("metric")["ratio"]
        ax.plot(
            [sub.get(m, np.nan) for m in summary["metric"]],
            y,
            "o",
            color=cmap(k % 10),
            ms=4,
            label=f"evaluator/featurizer: {ev}",
        )
    no_eval = table[table["evaluator"].isna()].set_index("metric")["ratio"]
    if len(no_eval):
        ax.plot(
            [no_eval.get(m, np.nan) for m in summary["metric"]],
            y,
            "o",
            color="k",
            ms=4,
            label="text metric (no LM)",
        )
    for i, m in enumerate(summary["metric"]):
        lo_hi = ci.get(m)
        if lo_hi is None:
            rows = table[table["metric"] == m]
            if len(rows) == 1 and np.isfinite(rows["low"].iloc[0]):
                lo_hi = (rows["low"].iloc[0], rows["high"].iloc[0])
        if lo_hi is not None:
            ax.plot(lo_hi, [i, i], color="k", lw=1.2)
    ax.axvline(baseline, ls="--", color="grey", label=f"random ({baseline:.2f})")
    ax.set_yticks(y)
    ax.set_yticklabels(summary["metric"], fontsize=7)
    ax.set_xlim(0, 1.02)
    ax.set_xlabel("valid-cell ratio: share of (family × dataset) cells ordered larger ≻ smaller")
    cells = int(table["cells"].max()) if len(table) else 0
    ax.set_title(f"Does the metric rank bigger models higher? ({cells} cells; FACE-2 check)")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    _save(fig, path)


#: proposal kinds of the OmniInput toy, in the figure's order, with colour-blind-safe colours
_OMNI_STYLE = {
    "exact": ("#000000", "exact (enumeration)"),
    "uniform": ("#0072B2", "Wang-Landau, uniform proposal"),
    "gradient": ("#D55E00", "Wang-Landau, gradient proposal (GWL)"),
    "monte_carlo": ("#009E73", "uniform Monte Carlo"),
}


def omniinput_toy_figure(
    exact: str | Path, results: dict[str, str | Path], validation: str | Path, path: str | Path
) -> None:
    """The OmniInput toy (Liu et al., §3.2): (a) ρ(z), the number of inputs per output bin,
    estimated vs exact on a log scale; (b) r(z), the share of valid inputs per bin, exact vs
    from each run's annotated samples; (c) the PR curves. Equal evaluation budgets."""
    from genmetrics.io import read_json
    from genmetrics.omniinput.curves import precision_recall_curve
    from genmetrics.omniinput.jobs import read_exact
    from genmetrics.omniinput.sampler import read_result
    from genmetrics.omniinput.toy import digit_sum_rule
    from genmetrics.omniinput.validation import estimated_r

    bins, ln_rho, r, extra = read_exact(exact)
    val = read_json(validation)
    m = val["toy"]["modulus"]
    centers = bins.centers
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.4), constrained_layout=True)
    ax = axes[0]
    ax.semilogy(centers, np.exp(ln_rho), "-", color="k", lw=2.5, label=_OMNI_STYLE["exact"][1])
    curves = {"exact": precision_recall_curve(ln_rho, r, bins)}
    r_hats = {}
    for kind, p in results.items():
        res = read_result(p)
        color, label = _OMNI_STYLE[kind]
        e = val["proposals"][kind]
        ax.semilogy(
            centers,
            np.exp(res.ln_rho),
            "o",
            ms=3.5,
            color=color,
            label=f"{label}: max |ln ρ̂ − ln ρ| {e['max_abs_log_rho_error']:.2f}",
        )
        r_hat = estimated_r(res.samples, lambda x: digit_sum_rule(x, m), bins.n)
        r_hats[kind] = r_hat
        reached = np.isfinite(res.ln_rho)
        curves[kind] = precision_recall_curve(
            res.ln_rho, np.where(reached, np.nan_to_num(r_hat), np.nan), bins
        )
    ax.set_xlabel("z: mean NLL of the input (nats per digit)")
    ax.set_ylabel("ρ(z): inputs in the bin (log scale)")
    ax.set_title(f"(a) Output distribution over all {int(extra['space_size']):,} inputs")
    ax.legend(fontsize=7)
    ax = axes[1]
    ax.plot(centers, r, "-", color="k", lw=2.5, label="exact share of valid inputs")
    for kind, r_hat in r_hats.items():
        color, label = _OMNI_STYLE[kind]
        ax.plot(centers, r_hat, "o", ms=3.5, color=color, label=f"{label} (annotated samples)")
    ax.set_xlabel("z: mean NLL of the input (nats per digit)")
    ax.set_ylabel(f"r(z): share with digit sum divisible by {m}")
    ax.set_title("(b) Annotation per bin")
    ax.set_ylim(-0.03, 1.03)
    ax.legend(fontsize=7)
    ax = axes[2]
    for kind, c in curves.items():
        color, label = _OMNI_STYLE[kind]
        extra_label = ""
        if kind != "exact":
            extra_label = f": L∞ error {val['proposals'][kind]['pr_curve_linf_error']:.3f}"
        ax.plot(
            c["recall"],
            c["precision"],
            "-" if kind == "exact" else "--",
            color=color,
            lw=2.5 if kind == "exact" else 1.5,
            label=label + extra_label,
        )
    ax.set_xlabel("recall: share of all valid inputs selected (z ≤ λ)")
    ax.set_ylabel("precision: share of selected inputs that are valid")
    ax.set_title("(c) Precision-recall over the input space")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.legend(fontsize=7)
    spec = val["toy"]
    fig.suptitle(
        f"OmniInput toy (Liu et al.): tiny GPT-2 on {spec['length']}-digit sequences with digit "
        f"sum divisible by {m}; {bins.n} bins; equal model-evaluation budgets",
        fontsize=11,
    )
    _save(fig, path)


def omniinput_runs_figure(records: dict[str, dict], path: str | Path) -> None:
    """OmniInput precision-recall curves per language model (Liu et al.): precision = share
    of the inputs with output z ≤ λ that the annotator accepts, recall = share of all accepted
    inputs with z ≤ λ; both weighted by the Wang-Landau estimate of how many inputs each bin
    holds. Right: precision against the threshold λ."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), constrained_layout=True)
    cmap = plt.get_cmap("tab10")
    for k, (run, rec) in enumerate(sorted(records.items())):
        c = rec["extras"]["curve"]
        lam = np.asarray(c["lambda"], float)
        p = np.array([np.nan if v is None else v for v in c["precision"]], float)
        rc = np.array([np.nan if v is None else v for v in c["recall"]], float)
        label = f"{run} (AUPR {rec['values']['aupr']:.3f})"
        sampler = rec.get("extras", {}).get("sampler", {})
        if sampler and not sampler.get("converged", True):
            label += (
                f"\nnot converged: {sampler['model_evaluations']:,} evaluations, "
                f"{sampler['stages']} ln f halvings"
            )
        axes[0].plot(rc, p, "-o", ms=3, color=cmap(k % 10), label=label)
        axes[1].plot(lam, p, "-o", ms=3, color=cmap(k % 10), label=run)
    axes[0].set_xlabel("recall (share of accepted inputs selected)")
    axes[0].set_ylabel("precision (share of selected inputs accepted)")
    axes[0].set_title("PR curve over the whole input space")
    axes[0].set_xlim(-0.02, 1.02)
    axes[1].set_xlabel("λ: threshold on z, mean NLL (nats per token)")
    axes[1].set_ylabel("precision at z ≤ λ")
    axes[1].set_title("Precision by threshold")
    for ax in axes:
        ax.set_ylim(-0.02, 1.02)
        ax.legend(fontsize=8)
    fig.suptitle("OmniInput (Liu et al.): models judged over every input of a fixed length")
    _save(fig, path)


# ------------------------------------------------------------------ human agreement

LEVEL_SHORT = {
    "system": "system level",
    "item": "item level",
    "pooled": "pooled",
}
LEVEL_WORDS = {
    "system": "system level: systems' mean scores",
    "item": "item level: across the systems' texts of one item, averaged over items",
    "pooled": "pooled: every text",
}


def _metric_label(metric: str) -> str:
    if metric.startswith("upstream."):
        return f"{metric[len('upstream.') :]} (stored)"
    return metric


def agreement_heatmap(
    corr: pd.DataFrame, level: str, method: str, path: str | Path, *, title: str
) -> None:
    """Metric (rows) × human criterion (columns) correlation at one level and method, each
    cell annotated with its value and bootstrap interval, bold when the interval excludes 0;
    our scores first, the set's stored upstream scores below a line. With one criterion the
    columns are every level computed instead."""
    d = corr[corr["method"] == method]
    criteria = list(dict.fromkeys(d["criterion"]))
    if len(criteria) == 1:
        columns = [(criteria[0], lv) for lv in dict.fromkeys(d["level"])]
    else:
        columns = [(c, level) for c in criteria]
    d = d[[(c, lv) in columns for c, lv in zip(d["criterion"], d["level"], strict=True)]]
    metrics = list(dict.fromkeys(d["metric"]))
    n_ours = sum(not m.startswith("upstream.") for m in metrics)
    vals = np.full((len(metrics), len(columns)), np.nan)
    lo, hi = vals.copy(), vals.copy()
    for r in d.itertuples():
        i, j = metrics.index(r.metric), columns.index((r.criterion, r.level))
        vals[i, j] = np.nan if pd.isna(r.value) else r.value
        lo[i, j] = np.nan if pd.isna(r.ci_low) else r.ci_low
        hi[i, j] = np.nan if pd.isna(r.ci_high) else r.ci_high
    many = len(metrics) > 30
    fig_h = 2.0 + (0.22 if many else 0.42) * len(metrics)
    fig_w = max(7.5, 3.4 + (1.15 if many else 1.5) * len(columns))
    fig, ax = plt.subplots(figsize=(fig_w, fig_h))
    cmap = plt.get_cmap("RdBu_r").copy()
    cmap.set_bad("#d9d9d9")
    im = ax.imshow(np.ma.masked_invalid(vals), cmap=cmap, vmin=-1, vmax=1, aspect="auto")
    for i in range(len(metrics)):
        for j in range(len(columns)):
            v = vals[i, j]
            if np.isnan(v):
                ax.text(j, i, "n/a", ha="center", va="center", fontsize=6, color="#555555")
                continue
            sure = not np.isnan(lo[i, j]) and (lo[i, j] > 0 or hi[i, j] < 0)
            text = f"{v:.2f}" if many else f"{v:.2f}\n[{lo[i, j]:.2f}, {hi[i, j]:.2f}]"
            ax.text(
                j,
                i,
                text,
                ha="center",
                va="center",
                fontsize=6 if many else 7,
                fontweight="bold" if sure else "normal",
                color="white" if abs(v) > 0.6 else "black",
            )
    if len(criteria) == 1:
        labels = [f"{c}\n{LEVEL_SHORT[lv]}" for c, lv in columns]
    else:
        labels = criteria
    ax.set_xticks(range(len(columns)), labels, fontsize=8)
    ax.tick_params(axis="x", top=True, labeltop=True, bottom=False, labelbottom=False)
    ax.set_yticks(
        range(len(metrics)), [_metric_label(m) for m in metrics], fontsize=6 if many else 8
    )
    if 0 < n_ours < len(metrics):
        ax.axhline(n_ours - 0.5, color="black", lw=1.2)
    n = ""
    if len(d):
        first = d.iloc[0]
        n = f"{int(first.n_systems)} systems × {int(first.n_items)} items"
    how = "" if len(criteria) == 1 else f", {LEVEL_WORDS[level]}"
    ax.set_title(
        f"{title}\n{method.capitalize()} correlation of each metric with human scores{how}\n"
        f"{n}; bold: its 95% bootstrap interval excludes 0"
        + ("; below the line: scores stored with the set" if 0 < n_ours < len(metrics) else ""),
        fontsize=9,
    )
    cb = fig.colorbar(im, ax=ax, fraction=0.04, pad=0.02)
    cb.set_label(f"{method} correlation (−1 … +1)", fontsize=8)
    _save(fig, path)


def pairwise_agreement_figure(res: pd.DataFrame, path: str | Path, *, title: str) -> None:
    """Per metric (rows) and group (colours): the share of A/B items where the metric picks
    the raters' majority, with its bootstrap interval; 0.5 is chance."""
    metrics = list(dict.fromkeys(res["metric"]))
    groups = list(dict.fromkeys(res["group"]))
    fig, ax = plt.subplots(
        figsize=(7.6, 2.2 + 0.3 * len(metrics) * max(1, len(groups)) ** 0.5 + 0.15 * len(groups))
    )
    step = 0.7 / max(1, len(groups))
    for g_i, g in enumerate(groups):
        d = res[res["group"] == g].set_index("metric").reindex(metrics)
        y = np.arange(len(metrics)) + (g_i - (len(groups) - 1) / 2) * step
        x = d["item_agreement"].to_numpy(float)
        err = np.vstack([x - d["ci_low"].to_numpy(float), d["ci_high"].to_numpy(float) - x])
        n = int(d["n_decisive_items"].max())
        ax.errorbar(
            x,
            y,
            xerr=err,
            fmt="o" if g == "all" else "s",
            color=OKABE_ITO[g_i % len(OKABE_ITO)],
            ms=5,
            capsize=2,
            label=f"{g} ({n} items with a majority)",
        )
    ax.axvline(0.5, color="grey", ls="--", lw=0.8)
    ax.text(0.5, -0.9, "chance", color="grey", fontsize=7, ha="center")
    labels = []
    for m in metrics:
        higher = bool(res.loc[res["metric"] == m, "higher_is_better"].iloc[0])
        labels.append(f"{m} ({'higher' if higher else 'lower'} wins)")
    ax.set_yticks(range(len(metrics)), labels, fontsize=8)
    ax.set_xlim(0, 1)
    ax.set_ylim(len(metrics) - 0.5, -1.1)
    ax.set_xlabel("share of items where the metric picks the raters' choice")
    ax.set_title(f"{title}\nmetric choice vs raters' majority, 95% bootstrap intervals", fontsize=9)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.4, -0.16), ncol=2, frameon=False)
    _save(fig, path)
