"""k-NN precision, recall, density and coverage of a candidate set against a reference set.

P = reference ("real", human texts), Q = candidate ("fake", model texts). For a set X and a
point x in X, the k-NN radius r_k(x) is the distance to its k-th nearest neighbour **excluding
itself** (prdc: the (k+1)-th smallest of the row of distances that includes the self distance 0).
Then (Kynkäänniemi et al. 2019; Naeem et al. 2020; clovaai/prdc 0.2; pr-4-llm ``compute_prdc``):

* precision = mean_{q in Q} 1[∃ p: d(p, q) < r_k(p)]
* recall    = mean_{p in P} 1[∃ q: d(p, q) < r_k(q)]
* density   = (1/k) mean_{q in Q} #{p: d(p, q) < r_k(p)}
* coverage  = mean_{p in P} 1[min_q d(p, q) < r_k(p)]

``strict=True`` uses ``<`` (prdc, pr-4-llm); ``strict=False`` uses ``<=`` (Kynkäänniemi's
original code). They differ only on ties, i.e. duplicate points: a point with k or more exact
duplicates in its own set has radius 0, so under ``<`` its ball is empty and under ``<=`` it
holds exactly its duplicates. Duplicates are kept as they are (no dedupe); the result's
``warnings`` count the points of each set with radius 0 (:func:`zero_radii_warnings`). What
prdc 0.2 really returns on such sets: a set scored against itself where every text appears
k + 1 times gives precision = recall = density = coverage = 0 (every ball empty under ``<``),
and so does this module under ``strict=True``; ``strict=False`` gives 1.

Before the k-NN step, ``pca`` (default 0.9) applies pr-4-llm's ``PCA_``: stack [q; p],
L2-normalise rows, keep the leading PCA components explaining 90 % of the variance, float32.
``pca=false`` (or 1) uses the features as given (prdc).

Engines (:func:`knn_engine`; the result's ``extras["knn"]``, and so the score record, names
the one that ran, :func:`knn_record`):

* ``exact-dense``: :func:`prdc_dense` below, the reference: full float64 distance matrices,
  used while (n_p + n_q)² · d <= 2²³;
* ``exact-blocked``: :mod:`._knn_exact` (``prdc_exact``): float32 GEMM blocks with a rounding
  bound, undecided pairs recomputed in float64 — the same numbers in O(block) memory. When
  :func:`genmetrics.devices.array_device` is ``cuda`` the blocks run through torch on the GPU
  (:mod:`._knn_torch`;
  candidate masks there, every decision on the CPU in float64): the same values;
  ``extras["knn"]["device"]`` says where they ran;
* ``approx-ivf`` (``approx_backend="auto"``), ``approx-faiss`` / ``approx-pynndescent``:
  :mod:`._knn_approx` (``prdc_approx``), only with ``method="approx"`` or a user-set
  ``approx_threshold``. **Not a bound**, in either direction: a missed self-neighbour makes a
  radius larger (values go up), a missed ball lowers the values. Every approximate run of the
  metric measures its error on a seeded subsample (exact vs approximate on up to 3,000 points
  per side, ``extras["knn"]["subsample_check"]``). ``method="auto"`` (default) is exact at
  every size.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.metrics._inputs import (
    as_ks,
    check_dims,
    check_pair,
    check_points,
    distribution_metric,
)
from genmetrics.metrics._knn_approx import (
    APPROX_MEASURED,
    APPROX_NOTE,
    SUBSAMPLE_N,
    prdc_approx,
    resolve_approx_backend,
    subsample_check,
)
from genmetrics.metrics._knn_exact import KnnRadii, knn_radii_sq, prdc_exact
from genmetrics.metrics._quantize import l2_pca
from genmetrics.metrics.registry import HIGHER, MetricResult, get
from genmetrics.params import BOOL, Const, Interval, Options

__all__ = [
    "ENGINES",
    "KnnRadii",
    "knn_engine",
    "knn_record",
    "knn_radii_sq",
    "prdc_approx",
    "prdc_dense",
    "prdc_exact",
    "prdc_for_ks",
    "precision_recall",
    "prepare_features",
]

#: inputs with (n_p + n_q)² · d up to this use the dense reference (a few ms); larger ones the
#: blocked engine, which is 5-10x faster from ~500 points per side on
_DENSE_MAX_WORK = 1 << 23

#: what ``knn_engine`` returns, and a score record states in ``extras["knn"]["engine"]``
ENGINES = ("exact-dense", "exact-blocked", "approx-ivf", "approx-faiss", "approx-pynndescent")


def prdc_dense(
    p: np.ndarray, q: np.ndarray, ks: Sequence[int], *, strict: bool = True
) -> dict[int, dict[str, float]]:
    """The prdc algorithm on full distance matrices: {k: {precision, recall, density, coverage}}."""
    from scipy.spatial.distance import cdist

    less = np.less if strict else np.less_equal
    d_pq = cdist(p, q, "sqeuclidean")  # exact Σ(a − b)², no GEMM shortcut
    d_pp = cdist(p, p, "sqeuclidean")  # the diagonal (self) is exactly 0
    d_qq = cdist(q, q, "sqeuclidean")
    out = {}
    for k in ks:
        # radius² = (k+1)-th smallest of the row: its k-th neighbour, the self distance 0 first
        r_p = np.partition(d_pp, k, axis=1)[:, k]
        r_q = np.partition(d_qq, k, axis=1)[:, k]
        in_p_ball = less(d_pq, r_p[:, None])  # [i, j]: q_j lies in the ball of p_i
        in_q_ball = less(d_pq, r_q[None, :])  # [i, j]: p_i lies in the ball of q_j
        out[k] = {
            "precision": float(in_p_ball.any(axis=0).mean()),
            "recall": float(in_q_ball.any(axis=1).mean()),
            "density": float(in_p_ball.sum(axis=0).mean() / k),
            "coverage": float(in_p_ball.any(axis=1).mean()),
        }
    return out


def knn_engine(
    n_p: int,
    n_q: int,
    d: int,
    *,
    method: str = "auto",
    approx_threshold: int | None = None,
    approx_backend: str = "auto",
) -> str:
    """The engine that evaluates P/R/D/C for these sizes and settings (one of ``ENGINES``).

    ``approx`` → ``approx-<backend>``; ``auto`` → the same only above ``approx_threshold``
    points per side (``None``: never); otherwise ``exact-dense`` while (n_p + n_q)² · d is
    small, else ``exact-blocked``.
    """
    above = approx_threshold is not None and max(n_p, n_q) > approx_threshold
    if method == "approx" or (method == "auto" and above):
        return "approx-" + resolve_approx_backend(approx_backend)
    if (n_p + n_q) ** 2 * d <= _DENSE_MAX_WORK:
        return "exact-dense"
    return "exact-blocked"


SUBSAMPLE_NOTE = (
    f"|approx - exact| on a seeded subsample of up to {SUBSAMPLE_N} points per side "
    "(subsample_check: same seed as the run, the same share of lists probed): an estimate "
    "for the full sets, not a bound; errors go both ways"
)


def knn_record(
    engine: str, *, reduced: bool = True, device: str = "cpu", check: dict | None = None
) -> dict[str, Any]:
    """What a score record states about the engine that ran (``extras["knn"]``).

    ``device``: where the distance blocks ran (``cpu``, or ``cuda`` for the torch path of the
    blocked engine); it is not a parameter, so it changes neither the cache key nor the values.
    Exact engines: ``{"engine", "exact": true, "max_abs_error": 0.0, "device"}`` (the float64
    values of the definition). Approximate ones: ``max_abs_error`` null (no bound holds) and
    ``measured_abs_error``, the largest |approx − exact| per value that
    benchmarks/bench_knn_approx.py measured for that backend on PCA-reduced (``reduced``, the
    default preprocessing) or raw features (``APPROX_MEASURED``), with ``error_note``; for
    ``approx-ivf`` (no table) it is the error measured on this run's own seeded subsample.
    ``check`` (:func:`subsample_check`, every approximate run of the metric): exact and
    approximate values on that subsample, its size and seed, and their |difference|.
    """
    if engine.startswith("exact"):
        return {"engine": engine, "exact": True, "max_abs_error": 0.0, "device": device}
    backend = engine.removeprefix("approx-")
    rec: dict[str, Any] = {"engine": engine, "exact": False, "max_abs_error": None}
    if backend in APPROX_MEASURED:
        rec["measured_abs_error"] = dict(APPROX_MEASURED[backend]["pca" if reduced else "raw"])
        rec["error_note"] = APPROX_NOTE
    elif check is not None:
        rec["measured_abs_error"] = dict(check["abs_error"])
        rec["error_note"] = SUBSAMPLE_NOTE
    if check is not None:
        rec["subsample_check"] = check
    rec["device"] = device
    return rec


def _prdc_torch(p, q, ks, *, strict: bool, device: str) -> dict[int, dict[str, float]]:
    """:func:`genmetrics.metrics._knn_torch.prdc_torch` (torch imported on first use)."""
    from genmetrics.metrics._knn_torch import prdc_torch

    return prdc_torch(p, q, ks, strict=strict, device=device)


def _array_device() -> str:
    """:func:`genmetrics.devices.array_device`, imported on first use."""
    from genmetrics.devices import array_device

    return array_device()


def _prdc(
    p: np.ndarray,
    q: np.ndarray,
    ks: list[int],
    *,
    strict: bool,
    method: str,
    seed: int,
    approx_threshold: int | None,
    approx_neighbors: int | None,
    approx_backend: str,
    chunk_size: int,
) -> tuple[dict[int, dict[str, float]], str, str]:
    """Dispatch on checked parameters (:func:`knn_engine`); return the values, the engine and
    the device the distance blocks ran on (the blocked engine runs through torch on a GPU
    when :func:`genmetrics.devices.array_device` says ``cuda``; the values are the same)."""
    engine = knn_engine(
        len(p),
        len(q),
        p.shape[1],
        method=method,
        approx_threshold=approx_threshold,
        approx_backend=approx_backend,
    )
    if engine.startswith("approx"):
        backend = engine.removeprefix("approx-")
        out = prdc_approx(
            p, q, ks, strict=strict, seed=seed, n_neighbors=approx_neighbors, backend=backend
        )
    elif engine == "exact-dense":
        check_points({"reference": len(p), "candidate": len(q)}, max(ks))
        out = prdc_dense(p, q, ks, strict=strict)
    else:
        if _array_device() == "cuda":
            return _prdc_torch(p, q, ks, strict=strict, device="cuda"), engine, "cuda"
        out = prdc_exact(p, q, ks, strict=strict, chunk_size=chunk_size)
    return out, engine, "cpu"


def _reduce(p: np.ndarray, q: np.ndarray, pca: float | bool, seed: int) -> tuple[np.ndarray, ...]:
    """pr-4-llm's L2 + PCA on [q; p], or the features as given (``pca`` false or 1)."""
    return (p, q) if pca is False or pca >= 1 else l2_pca(p, q, pca, seed=seed)


def prepare_features(
    reference: Any, candidate: Any, *, pca: float | bool = 0.9, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Validate and apply pr-4-llm's preprocessing (L2 + PCA on [q; p]) unless ``pca`` is off."""
    return _reduce(*check_pair(reference, candidate), pca, seed)


def prdc_for_ks(
    reference: Any, candidate: Any, ks: Sequence[int] | int = 4, **params: Any
) -> dict[int, dict[str, float]]:
    """P/R/D/C for every k in ``ks`` after one preprocessing (used by the k and N sweeps).

    ``params`` are ``precision_recall``'s (``pca``, ``strict``, ``method``, ``seed``, …),
    checked by its declared constraints as ``compute()`` checks them.
    """
    if "k" in params:
        raise GenmetricsError("prdc_for_ks: give k through ks")
    checked = get("precision_recall").check_params(params, "prdc_for_ks")
    del checked["k"]
    pca = checked.pop("pca")
    p, q = prepare_features(reference, candidate, pca=pca, seed=checked["seed"])
    return _prdc(p, q, as_ks(ks), **checked)[0]


@distribution_metric(
    "precision_recall",
    values={"precision": HIGHER, "recall": HIGHER, "density": HIGHER, "coverage": HIGHER},
    family="quality/diversity",
    # quality and diversity (Kynkäänniemi et al. 2019; Le Bronnec et al. 2024)
    headline=("precision", "recall"),
    scale={"precision": "0–1", "recall": "0–1", "density": "≥ 0", "coverage": "0–1"},
    figures=("pr_plane",),
    sweepable=True,
    params={
        "k": (Interval(int, 1, None), "each point's ball reaches its k-th nearest neighbour"),
        "pca": (
            (Interval(float, 0, 1, closed="right"), Const(False)),
            "L2 + PCA on [q; p] keeping this variance fraction (pr-4-llm); false: raw features",
        ),
        "strict": (BOOL, "true: inside means d < radius (prdc); false: d <= radius"),
        "method": (
            Options("auto", "exact", "approx"),
            "kNN search; auto = exact unless approx_threshold is set (approx: not exact)",
        ),
        "seed": (
            Interval(int, 0, 2**32 - 1),
            "seed of the PCA solver and of the approximate index",
        ),
        "approx_threshold": (
            (Interval(int, 1, None), Const(None)),
            "points per side above which auto runs the approximate engine (null: never)",
        ),
        "approx_neighbors": (
            (Interval(int, 1, None), Const(None)),
            "ivf: lists probed per list; faiss, pynndescent: neighbours per query (null: default)",
        ),
        "approx_backend": (
            Options("auto", "ivf", "faiss", "pynndescent"),
            "approximate kNN search (auto: ivf, genmetrics' own inverted file)",
        ),
        "chunk_size": (Interval(int, 1, None), "matrix elements per block of the exact search"),
    },
    min_items=lambda params: (params["k"] + 1, "k"),
    upstream="prdc 0.2 compute_prdc; pr-4-llm preprocessing",
    citation="Kynkäänniemi et al. (2019); Naeem et al. (2020); Le Bronnec et al. (2024)",
)
def precision_recall(
    *,
    reference: np.ndarray,
    candidate: np.ndarray,
    k: int = 4,
    pca: float | bool = 0.9,
    strict: bool = True,
    method: str = "auto",
    seed: int = 0,
    approx_threshold: int | None = None,
    approx_neighbors: int | None = None,
    approx_backend: str = "auto",
    chunk_size: int = 1 << 22,
) -> MetricResult:
    """k-NN precision/recall (Kynkäänniemi 2019) and density/coverage (Naeem 2020), prdc convention.

    P = reference, Q = candidate; radius = distance to the k-th nearest neighbour excluding
    self; precision = share of Q inside some P-ball, recall = share of P inside some Q-ball,
    density = mean number of P-balls containing a q divided by k, coverage = share of P-balls
    containing some q. ``pca`` = pr-4-llm's L2 + PCA(0.9) on [q; p] (``false``: raw features);
    ``strict`` = ``<`` as prdc (``false``: ``<=`` as Kynkäänniemi); ``method`` = exact (dense
    or blocked, the same float64 numbers; on a GPU when one is present) | approx (ivf by
    default, faiss IVF or pynndescent by ``approx_backend``; neither a lower nor an upper
    bound; the error measured on a seeded subsample is recorded) | auto (exact; approximate only
    above a user-set ``approx_threshold`` points per side). ``extras["knn"]`` records the
    engine that ran and, for an approximate one, its measured error (:func:`knn_record`).
    """
    check_dims(reference, candidate)
    p, q = _reduce(reference, candidate, pca, seed)
    out, engine, device = _prdc(
        p,
        q,
        [k],
        strict=strict,
        method=method,
        seed=seed,
        approx_threshold=approx_threshold,
        approx_neighbors=approx_neighbors,
        approx_backend=approx_backend,
        chunk_size=chunk_size,
    )
    check = None
    if engine.startswith("approx"):
        check = subsample_check(
            p,
            q,
            k,
            strict=strict,
            seed=seed,
            backend=engine.removeprefix("approx-"),
            n_neighbors=approx_neighbors,
        )
    reduced = not (pca is False or pca >= 1)
    return MetricResult(
        values=out[k],
        extras={"knn": knn_record(engine, reduced=reduced, device=device, check=check)},
        n={"reference": len(reference), "candidate": len(candidate)},
        warnings=zero_radii_warnings({"reference": p, "candidate": q}, k, strict),
    )


def zero_radii(x: np.ndarray, k: int) -> int:
    """How many rows of ``x`` have a k-NN radius of 0: rows with at least ``k`` exact
    duplicates besides themselves (the k-th nearest neighbour at distance 0)."""
    _, inverse, counts = np.unique(x, axis=0, return_inverse=True, return_counts=True)
    return int((counts[inverse.ravel()] - 1 >= k).sum())


def zero_radii_warnings(sets: dict[str, np.ndarray], k: int, strict: bool) -> list[str]:
    """A warning per set (``reference``, ``candidate``) with k-NN radii of 0 (duplicated
    texts): under ``strict`` (``<``, as prdc) their balls are empty, so a set scored against
    itself with every text duplicated k times gets precision = recall = density = coverage =
    0, the number prdc 0.2 returns; under ``<=`` each ball holds its duplicates only."""
    out = []
    for role, x in sets.items():
        zero = zero_radii(x, k)
        if zero:
            inside = "empty balls (strict <, as prdc)" if strict else "balls of duplicates only"
            out.append(
                f"zero k-NN radii: {zero} of {len(x)} {role} points have k={k} or more exact "
                f"duplicates, radius 0: {inside}"
            )
    return out
