"""The precision–recall plane (Le Bronnec et al. (2024), Fig. 1) as tables: its points (a
model's seeds, its reference resamples) and, per model, the mean point with the covariance
ellipse of those points (``results/analysis/pr_plane.csv``), drawn by
:func:`genmetrics.figures.precision_recall.pr_scatter`.

The ellipse is the region holding :data:`ELLIPSE_LEVEL` (95%) of a 2-D normal fitted to the
model's generation seeds alone (as the paper's: mean and covariance of the seed points), so it
is centred on the mean over seeds that the figure marks and the headline table shows; none for
fewer than :data:`MIN_ELLIPSE_POINTS` seeds or seeds on a line. Reference resamples score the
first seed against a ``fraction`` of the references (fewer references move P and R as a
whole), or against new draws of references from the dataset's pool (texts other than those
the prompts open), so they are summarised apart (their mean,
``resample_recall``/``resample_precision``) and never pooled with the seeds."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

PR_VALUES = ("precision", "recall")
PR_PLANE_KEYS = ["dataset", "entry", "reference", "model"]
#: a seed point's interval over prompts (its score row's ``lower``/``upper``; NaN without one)
PR_PLANE_BOUNDS = ["recall_lower", "recall_upper", "precision_lower", "precision_upper"]
PR_PLANE_COLUMNS = [
    *PR_PLANE_KEYS,
    "kind",
    "seed",
    "resample",
    "recall",
    "precision",
    *PR_PLANE_BOUNDS,
    "n_candidate",
    "n_reference",
    "reference_sets",
]


def pr_plane_points(scores: pd.DataFrame, spreads: Sequence[Mapping] = ()) -> pd.DataFrame:
    """The points of the precision–recall plane, one row per (dataset, entry, reference,
    model, point): columns :data:`PR_PLANE_COLUMNS`.

    * ``kind="seed"``: one per generation seed, the ``precision_recall`` scores of
      ``scores`` (the tidy ``results/scores.csv``): that seed's texts against the whole
      reference set, with the interval over prompts of its rows (``lower``/``upper`` as
      ``recall_lower`` ... ``precision_upper``; NaN where a row has none) and its sizes
      (``n_candidate``, ``n_reference``; NaN where ``scores`` has none);
    * ``kind="resample"``: one per reference set of a spread record
      (:func:`genmetrics.analysis.distribution.spread_analysis`, the ``vary="reference"``
      runs): the model's first seed against a random ``fraction`` of the reference set, or
      with ``references: redraw`` against a new draw from the dataset's cleaned pool (set
      ``i`` drawn with seed ``settings.seed + i``); its reference is the entry's, as in
      ``scores``; ``n_reference``: the references it drew (the record's
      ``reference_size``), ``reference_sets``: ``subsample`` or ``redraw`` (NA on seed
      points), ``n_candidate`` NaN. Records of other metrics, or of no scored
      (dataset, entry), are skipped.
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
    index = [*PR_PLANE_KEYS, "seed"]
    for bound in ("lower", "upper"):
        names = {n: f"{n}_{bound}" for n in PR_VALUES}
        if bound in d.columns:
            b = d.groupby(index + ["name"])[bound].first().unstack("name")
            b = b.reindex(columns=list(PR_VALUES)).rename(columns=names).reset_index()
            b.columns.name = None
            wide = wide.merge(b, on=index, how="left")
        else:
            wide = wide.assign(**{c: np.nan for c in names.values()})
    for size in ("n_candidate", "n_reference"):
        if size in d.columns:
            n = pd.to_numeric(d[size], errors="coerce").groupby([d[k] for k in index]).min()
            wide = wide.merge(n.rename(size).reset_index(), on=index, how="left")
        else:
            wide[size] = np.nan
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
            rows[-1].update(dict.fromkeys(PR_PLANE_BOUNDS, np.nan))
            rows[-1].update(n_candidate=np.nan, n_reference=rec.get("reference_size", np.nan))
            # records written before redraw was offered are subsamples
            rows[-1].update(reference_sets=rec.get("reference_sets", "subsample"))
    out = pd.concat([wide, pd.DataFrame(rows)], ignore_index=True) if rows else wide
    if "reference_sets" not in out.columns:
        out["reference_sets"] = pd.NA
    out["seed"] = out["seed"].astype("Int64")
    out["resample"] = out["resample"].astype("Int64")
    return out[PR_PLANE_COLUMNS].reset_index(drop=True)


#: the share of a fitted 2-D normal an ellipse encloses (its radius in σ is
#: sqrt(χ²₂ quantile): 2.45σ for 95%; a "2σ" ellipse would enclose only 1 − e⁻² = 86.5%)
ELLIPSE_LEVEL = 0.95
#: fewest points an ellipse is drawn for: three is the fewest whose covariance can have full
#: rank in two dimensions (with two points, or points on a line, it is a line segment)
MIN_ELLIPSE_POINTS = 3
#: points on a line: the smaller eigenvalue of their covariance at most this share of the larger
COLLINEAR_RATIO = 1e-9


def ellipse_radius(level: float = ELLIPSE_LEVEL) -> float:
    """Mahalanobis radius (in σ) of the ellipse enclosing ``level`` of a 2-D normal:
    sqrt of the χ² quantile with 2 degrees of freedom, sqrt(−2 ln(1 − level))."""
    if not 0 < level < 1:
        raise ValueError(f"level: expected a share in (0, 1), got {level!r}")
    return float(np.sqrt(-2.0 * np.log1p(-level)))


@dataclass(frozen=True)
class Ellipse:
    """A covariance ellipse in the (recall, precision) plane: ``center`` (x = recall,
    y = precision: the mean of the points), ``cov`` (2 × 2), ``semi_axes`` (major, minor) =
    ``n_std`` · sqrt of the eigenvalues of ``cov``, ``angle``: degrees from the recall axis to
    the major axis; ``level``: the share of a 2-D normal with that mean and covariance
    inside (``n_std`` = :func:`ellipse_radius` of it)."""

    center: tuple[float, float]
    cov: np.ndarray
    semi_axes: tuple[float, float]
    angle: float
    n_std: float
    n_points: int
    level: float = ELLIPSE_LEVEL

    def mahalanobis2(self, points: np.ndarray) -> np.ndarray:
        """Squared Mahalanobis distance of each (recall, precision) point from the centre:
        inside the ellipse where it is at most ``n_std``²."""
        d = np.asarray(points, dtype=np.float64).reshape(-1, 2) - np.asarray(self.center)
        return np.einsum("ni,ij,nj->n", d, np.linalg.inv(self.cov), d)


def ellipse_status(points: np.ndarray) -> str:
    """Whether ``points`` (n × 2) get an ellipse: ``"drawn"``; ``"too few points"`` (fewer
    than :data:`MIN_ELLIPSE_POINTS`); ``"on a line"`` (their covariance has rank < 2: every
    point equal, or all on one line; :data:`COLLINEAR_RATIO`)."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    if len(pts) < MIN_ELLIPSE_POINTS:
        return "too few points"
    vals = np.linalg.eigvalsh(np.cov(pts.T))
    if not vals[1] > 0 or vals[0] <= COLLINEAR_RATIO * vals[1]:
        return "on a line"
    return "drawn"


def covariance_ellipse(points: np.ndarray, level: float = ELLIPSE_LEVEL) -> Ellipse | None:
    """The ellipse enclosing ``level`` of the 2-D normal fitted to ``points`` (n × 2: recall,
    precision): centred on their mean, shaped by their sample covariance
    (``numpy.cov(points.T)``, ddof=1), semi-axes :func:`ellipse_radius` (2.45 for 95%) · sqrt
    of its eigenvalues along its eigenvectors. The points it summarises are the points it is
    fitted to, so about ``level`` of them lie inside for many normal points (and every one of
    them for n ≤ 7, whose Mahalanobis distances are at most (n − 1)/√n). None where
    :func:`ellipse_status` is not ``"drawn"`` (fewer than three points, or on a line: no
    ellipse rather than a line segment)."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    if ellipse_status(pts) != "drawn":
        return None
    n_std = ellipse_radius(level)
    cov = np.cov(pts.T)
    vals, vecs = np.linalg.eigh(cov)  # ascending
    major = vecs[:, 1]
    angle = float(np.degrees(np.arctan2(major[1], major[0])))
    c = pts.mean(axis=0)
    return Ellipse(
        center=(float(c[0]), float(c[1])),
        cov=cov,
        semi_axes=(float(n_std * np.sqrt(vals[1])), float(n_std * np.sqrt(vals[0]))),
        angle=angle,
        n_std=n_std,
        n_points=len(pts),
        level=float(level),
    )


def pr_plane(points: pd.DataFrame, level: float = ELLIPSE_LEVEL) -> pd.DataFrame:
    """Per (dataset, entry, reference, model) of :func:`pr_plane_points`: the mean point
    (``recall``, ``precision``: mean over the seed points, as in the headline table), the
    number of seed and resample points (``n_points`` in all), the mean of the reference
    resamples (``resample_recall``, ``resample_precision``; NaN without any) and the
    :func:`covariance_ellipse` of the **seed points alone** (Le Bronnec et al. (2024), Fig. 1:
    the spread over generation seeds), centred on their mean (``ellipse_recall``,
    ``ellipse_precision``: the mean point itself): ``cov_rr``, ``cov_rp``, ``cov_pp``,
    ``semi_major``, ``semi_minor``, ``angle``, ``n_std`` (its radius in σ), ``level`` (the
    share of the fitted normal inside) and ``ellipse`` (:func:`ellipse_status` of the seeds:
    ``drawn``, ``too few points`` or ``on a line``; the ellipse's columns are NaN unless
    drawn). A model without seed points (resamples only) has no mean and no ellipse."""
    rows = []
    n_std = ellipse_radius(level)
    for key, g in points.groupby(PR_PLANE_KEYS, sort=False):
        seeds = g[g["kind"] == "seed"]
        resamples = g[g["kind"] == "resample"]
        xy = seeds[["recall", "precision"]].to_numpy(float)
        center = tuple(xy.mean(axis=0)) if len(xy) else (np.nan, np.nan)
        e = covariance_ellipse(xy, level) if len(xy) else None
        rows.append(
            {
                **dict(zip(PR_PLANE_KEYS, key, strict=True)),
                "recall": float(center[0]),
                "precision": float(center[1]),
                "n_seeds": len(seeds),
                "n_resamples": len(resamples),
                "resample_recall": float(resamples["recall"].mean()) if len(resamples) else np.nan,
                "resample_precision": (
                    float(resamples["precision"].mean()) if len(resamples) else np.nan
                ),
                "cov_rr": e.cov[0, 0] if e else np.nan,
                "cov_rp": e.cov[0, 1] if e else np.nan,
                "cov_pp": e.cov[1, 1] if e else np.nan,
                "semi_major": e.semi_axes[0] if e else np.nan,
                "semi_minor": e.semi_axes[1] if e else np.nan,
                "angle": e.angle if e else np.nan,
                "n_std": n_std,
                "n_points": len(g),
                "ellipse_recall": e.center[0] if e else np.nan,
                "ellipse_precision": e.center[1] if e else np.nan,
                "level": level,
                "ellipse": ellipse_status(xy),
            }
        )
    return pd.DataFrame(rows)


def plane_tables(
    scores: pd.DataFrame, spreads: Sequence[Mapping] = (), level: float = ELLIPSE_LEVEL
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The plane's points (:func:`pr_plane_points`) and its per-model table (:func:`pr_plane`,
    ellipses enclosing ``level`` of the fitted normal; empty without points), from the tidy
    scores and the spread records."""
    points = pr_plane_points(scores, spreads)
    return points, pr_plane(points, level) if len(points) else pd.DataFrame()
