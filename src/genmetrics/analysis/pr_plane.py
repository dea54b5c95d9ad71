"""The precision–recall plane (Le Bronnec et al. (2024), Fig. 1) as tables: its points (a
model's seeds, its reference resamples) and, per model, the mean point with the covariance
ellipse of those points (``results/analysis/pr_plane.csv``), drawn by
:func:`genmetrics.figures.precision_recall.pr_scatter`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

PR_VALUES = ("precision", "recall")
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
    from genmetrics.metrics.registry import metrics_feeding

    plane = metrics_feeding("pr_plane")  # metrics declaring the figure (and its values)
    d = scores[scores["metric"].isin(plane) & scores["name"].isin(PR_VALUES)]
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
        if rec.get("metric") not in plane or ref is None:
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


def plane_tables(
    scores: pd.DataFrame, spreads: Sequence[Mapping] = (), n_std: float = 2.0
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The plane's points (:func:`pr_plane_points`) and its per-model table (:func:`pr_plane`;
    empty without points), from the tidy scores and the spread records."""
    points = pr_plane_points(scores, spreads)
    return points, pr_plane(points, n_std) if len(points) else pd.DataFrame()
