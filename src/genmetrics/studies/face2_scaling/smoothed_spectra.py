"""GAM-smoothed surprisal spectra per model size (FACE-2, Liu et al. 2025, Figure 5).

For the scaling study's spectra entry (a ``face`` entry: its params decide the spectrum, e.g.
``convention=face2, zscore=true``, the paper's z + L2), each text's surprisal sequence is
turned into its aligned spectrum again (:func:`text_spectra`, the metric's own
:func:`~genmetrics.metrics._spectra.aligned_spectra`), and per (dataset, model) and for the
human texts a generalised additive model of spectrum on frequency is fitted
(:func:`gam_smooth`):

* **model**: Gaussian GAM ``spectrum ~ 1 + s(frequency)``, ``s`` a cubic B-spline basis
  (:data:`GAM` ``df`` functions) with a second-derivative roughness penalty (statsmodels
  ``GLMGam`` with ``BSplines``);
* **data**: every text's spectrum at ``frequencies`` evenly spaced points of the 1,000-point
  grid above frequency 0 (neighbouring points of the grid are interpolated from the same FFT
  bins; ~100 points is about the FFT's own resolution for texts of ~200 tokens, so the points
  of a text are close to independent), not the mean spectrum: the fit sees the spread
  between texts. Frequency 0 (the DC term: the sequence's sum, 0 for every z-scored text) is
  left out: a level, not a fluctuation, and a jump no smooth curve follows;
* **penalty**: statsmodels' ``select_penweight_kfold`` over the ``alphas`` grid, with folds of
  whole texts (:class:`_TextFolds`: a text's points never sit on both sides of a split);
* **band**: the fit's pointwise confidence interval (``level``, default 95%) from the
  penalised fit's covariance (statsmodels ``get_prediction``).

Drawn by :func:`genmetrics.figures.scaling.smoothed_spectra_figure`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from genmetrics import GenmetricsError

#: the GAM's settings (:func:`gam_smooth`'s defaults): spectrum points per text, B-spline
#: basis functions and degree, cross-validation folds (of texts), the penalty weights tried,
#: points where the fit is evaluated, the band's level
GAM: dict[str, Any] = {
    "frequencies": 100,
    "df": 20,
    "degree": 3,
    "folds": 5,
    "alphas": tuple(float(a) for a in np.logspace(-8, 8, 9)),
    "points": 200,
    "level": 0.95,
}


@dataclass(frozen=True)
class GamFit:
    """A GAM smooth of spectra: ``fit`` and its band ``low``…``high`` at frequencies ``x``;
    the penalty weight chosen (``alpha``), the effective degrees of freedom (``edf``), and
    the texts and points fitted."""

    x: np.ndarray
    fit: np.ndarray
    low: np.ndarray
    high: np.ndarray
    alpha: float
    edf: float
    n_texts: int
    n_points: int


@dataclass(frozen=True)
class SpectrumCurve:
    """One curve of a panel: the human texts (``family`` None) or one model of a family."""

    label: str
    model: str
    family: str | None
    size: float | None
    gam: GamFit


@dataclass(frozen=True)
class SpectraPanel:
    """One dataset: the human curve first, then each family's models by increasing size."""

    dataset: str
    curves: list[SpectrumCurve]


@dataclass(frozen=True)
class SmoothedSpectra:
    """What the figure shows: the panels, the entry and evaluator whose spectra they are, the
    entry's params (what a spectrum is), the GAM's settings and the families' sizes."""

    panels: list[SpectraPanel]
    entry: str
    evaluator: str | None
    params: Mapping[str, Any]
    gam: Mapping[str, Any]
    families: Mapping[str, Mapping[str, float]] = field(default_factory=dict)


class _TextFolds:
    """Cross-validation folds of whole texts for statsmodels' GAM path: ``groups[i]`` is the
    text of observation i; texts are split in order into ``k`` folds (deterministic)."""

    def __init__(self, groups: np.ndarray, k: int):
        self.groups = np.asarray(groups)
        self.k = k

    def split(self, X: Any, y: Any = None, label: Any = None):  # noqa: N803 (statsmodels' name)
        for fold in np.array_split(np.unique(self.groups), self.k):
            test = np.isin(self.groups, fold)
            yield ~test, test


def gam_smooth(
    freq: np.ndarray,
    spectra: np.ndarray,
    *,
    frequencies: int = GAM["frequencies"],
    df: int = GAM["df"],
    degree: int = GAM["degree"],
    folds: int = GAM["folds"],
    alphas: Sequence[float] = GAM["alphas"],
    points: int = GAM["points"],
    level: float = GAM["level"],
) -> GamFit:
    """A GAM smooth of per-text spectra (see the module docstring for the model).

    ``freq`` [G] the grid, ``spectra`` [n_texts, G] one spectrum per text (≥ 2 texts). The
    fit uses ``frequencies`` evenly spaced columns above frequency 0 (all when there are
    fewer), the penalty
    weight is the one of ``alphas`` with the least cross-validated error over
    ``min(folds, n_texts)`` folds of whole texts, and the fit and its ``level`` band are
    evaluated at ``points`` evenly spaced frequencies over the grid. Deterministic.
    Raises GenmetricsError for mismatched shapes, fewer than 2 texts or a non-finite value,
    and when statsmodels is missing.
    """
    from threadpoolctl import threadpool_limits

    try:
        from statsmodels.gam.api import BSplines, GLMGam
    except ImportError:
        raise GenmetricsError(
            "gam_smooth needs statsmodels (pip install 'genmetrics[plots]')"
        ) from None
    freq = np.asarray(freq, dtype=float)
    y = np.asarray(spectra, dtype=float)
    if freq.ndim != 1 or y.ndim != 2 or y.shape[1] != freq.size:
        raise GenmetricsError(
            f"gam_smooth: spectra must be [texts, {freq.size}] for {freq.size} frequencies, "
            f"got shape {y.shape}"
        )
    if y.shape[0] < 2:
        raise GenmetricsError(
            f"gam_smooth: {y.shape[0]} text(s); the penalty is chosen by cross-validation "
            "over texts, which needs at least 2"
        )
    if not (np.all(np.isfinite(y)) and np.all(np.isfinite(freq))):
        raise GenmetricsError("gam_smooth: a spectrum or frequency is not finite")
    if not (0 < level < 1) or min(frequencies, df, points) < 2 or not len(alphas):
        raise GenmetricsError(
            f"gam_smooth: need 0 < level < 1, frequencies, df and points >= 2 and some alphas "
            f"(got level={level}, frequencies={frequencies}, df={df}, points={points}, "
            f"alphas={list(alphas)})"
        )
    # evenly spaced columns of the grid, without frequency 0: the DC term is the sequence's
    # sum (0 for every z-scored text), a level rather than a fluctuation, whose jump to the
    # first harmonic no smooth curve follows
    positive = np.flatnonzero(freq > 0)
    if positive.size < 2:
        raise GenmetricsError("gam_smooth: need at least 2 frequencies above 0")
    pick = np.linspace(0, positive.size - 1, min(frequencies, positive.size))
    cols = positive[np.unique(pick.round().astype(int))]
    n_texts = y.shape[0]
    x = np.tile(freq[cols], n_texts)
    endog = y[:, cols].ravel()
    groups = np.repeat(np.arange(n_texts), cols.size)
    smoother = BSplines(x[:, None], df=[df], degree=[degree])
    const = np.ones((x.size, 1))
    # one BLAS thread: the fits are small (thousands × ~20) and many; threaded SVDs of such
    # matrices fight each other on a busy machine (100× slower on 2 shared cores)
    with np.errstate(all="ignore"), threadpool_limits(limits=1, user_api="blas"):
        alpha, _ = GLMGam(endog, exog=const, smoother=smoother).select_penweight_kfold(
            alphas=[np.asarray(alphas, dtype=float)],
            cv_iterator=_TextFolds(groups, min(folds, n_texts)),
        )
        res = GLMGam(endog, exog=const, smoother=smoother, alpha=np.asarray(alpha)).fit()
        grid = np.linspace(freq[cols].min(), freq[cols].max(), points)
        frame = res.get_prediction(
            exog=np.ones((points, 1)), exog_smooth=grid[:, None]
        ).summary_frame(alpha=1 - level)
    return GamFit(
        x=grid,
        fit=frame["mean"].to_numpy(),
        low=frame["mean_ci_lower"].to_numpy(),
        high=frame["mean_ci_upper"].to_numpy(),
        alpha=float(np.asarray(alpha).ravel()[0]),
        edf=float(np.sum(res.edf)),
        n_texts=n_texts,
        n_points=int(endog.size),
    )


def text_spectra(seqs: Sequence[np.ndarray], params: Mapping[str, Any]) -> np.ndarray:
    """[texts, 1000] aligned spectra of the surprisal sequences as the ``face`` metric with
    ``params`` computes them (its convention, value, log, zscore, align, method, window,
    segment, max_length); sequences shorter than the metric's minimum after ``max_length``
    are dropped, as the metric drops them. Raises GenmetricsError when none is left."""
    from genmetrics.metrics import get
    from genmetrics.metrics._spectra import MIN_LENGTH, aligned_spectra

    p = get("face").check_params(params, "text_spectra params")
    kept = [np.asarray(s, dtype=float)[: p["max_length"]] for s in seqs]
    kept = [s for s in kept if len(s) >= MIN_LENGTH]
    if not kept:
        raise GenmetricsError(
            f"text_spectra: no sequence has {MIN_LENGTH} or more surprisal values"
        )
    return aligned_spectra(
        kept,
        value=p["value"],
        log=p["log"],
        zscore=p["zscore"],
        how=p["align"],
        method=p["method"],
        window=p["window"],
        segment=p["segment"],
        ddof=p["zscore_ddof"],
    )


def spectra_gam_panels(
    settings: Mapping[str, Any],
    progress: bool = False,
    gam: Mapping[str, Any] | None = None,
) -> SmoothedSpectra:
    """The smoothed spectra of the scaling study (``settings`` from
    :meth:`Plan.scaling_spectra_settings`): per dataset (in ``tasks`` order) the human texts'
    curve, then each family's models (families in config order, models by increasing size),
    each a :func:`gam_smooth` of its texts' :func:`text_spectra`. ``gam`` overrides
    :data:`GAM` settings."""
    from genmetrics.metrics._spectra import GRID_POINTS
    from genmetrics.metrics.kinds import KINDS
    from genmetrics.scoring.from_files import load_input

    opts = {**GAM, **(gam or {})}
    unknown = sorted(set(opts) - set(GAM))
    if unknown:
        raise GenmetricsError(f"spectra_gam_panels: unknown GAM setting(s) {unknown}")
    params = settings["params"]
    kind = KINDS["surprisal"]
    freq = np.linspace(0, 0.5, GRID_POINTS)
    families = settings["families"]
    where = {m: (fam, float(size)) for fam, ms in families.items() for m, size in ms.items()}
    by_ds: dict[str, dict[str, Mapping[str, Any]]] = {}
    for c in settings["cells"]:
        if c["model"] in where:
            by_ds.setdefault(c["dataset"], {})[c["model"]] = c
    jobs: list[tuple[str, str, str | None, float | None, str]] = []
    for ds in [t for t in settings["tasks"] if t in by_ds]:
        cells = by_ds[ds]
        refs = {c["reference"] for c in cells.values()}
        if len(refs) != 1 or None in refs:
            raise GenmetricsError(
                f"scaling spectra: dataset {ds!r} needs one human (reference) file, got "
                f"{sorted(map(str, refs))}"
            )
        jobs.append((ds, "human texts", None, None, refs.pop()))
        for fam, members in families.items():
            for m in sorted(members, key=lambda k: float(members[k])):
                if m in cells:
                    jobs.append((ds, m, fam, float(members[m]), cells[m]["candidate"]))
    panels: dict[str, list[SpectrumCurve]] = {}
    for ds, model, fam, size, path in tqdm(jobs, desc="GAM-smoothed spectra", disable=not progress):
        seqs, _ = load_input(kind, path, "reference" if fam is None else "candidate")
        try:
            fit = gam_smooth(freq, text_spectra(seqs, params), **opts)
        except GenmetricsError as e:
            raise GenmetricsError(f"scaling spectra: {ds}/{model} ({path}): {e}") from None
        label = model if fam is None else f"{model} ({fam}: {size:g})"
        panels.setdefault(ds, []).append(SpectrumCurve(label, model, fam, size, fit))
    return SmoothedSpectra(
        panels=[SpectraPanel(ds, curves) for ds, curves in panels.items()],
        entry=settings["entry"],
        evaluator=settings.get("evaluator"),
        params=dict(params),
        gam=opts,
        families={f: dict(m) for f, m in families.items()},
    )
