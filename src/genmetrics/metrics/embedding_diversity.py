"""Embedding diversity of a set of texts: remote-clique and chamfer distance (Cox et al. 2021,
"Directed Diversity"), as the ``diversity`` package computes them (Shaib et al.;
``diversity/embedding.py``, 0.3.1 on PyPI = cshaib/diversity commit 25127cc).

The package embeds the texts with a sentence encoder (default Qwen3-Embedding-0.6B) and takes
``D = sklearn.metrics.pairwise.cosine_distances(E)``: D_ij = 1 − cos(e_i, e_j), clipped to
[0, 2], with D_ii = 0 exactly. Here the embeddings come from the workflow's featurizer (the
``embed`` rule: name a sentence encoder such as MiniLM for the package's setting) or any
[N, d] array, and:

* ``remote_clique`` = mean over rows of the row means of D, **self-distance included**:
  (1/n²) Σ_{i≠j} D_ij = 1 − ‖ū‖², ū the mean of the unit-norm embeddings (computed so, in
  O(n·d); the package's n × n matrix gives the same number). A mean over all n² entries, so
  a set of n mutually orthogonal vectors scores (n − 1)/n, not 1.
* ``chamfer`` = mean over i of min_{j≠i} D_ij (the package adds 1e9 to the diagonal before
  the min): the mean cosine distance to the nearest other item. Needs n ≥ 2.

Both 0 when every embedding points the same way; higher = more diverse. The package rounds
each to 3 decimals (``round=3`` gives its number; the default returns them unrounded). A row
of zeros has no cosine and is an error (sklearn would give it distance 1 to every row).
Memory O(n·d + block·n) (row blocks of about 32 MiB), time O(n²·d); deterministic.
"""

from __future__ import annotations

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.metrics._kernels import row_blocks, unit_rows
from genmetrics.metrics.registry import HIGHER, MetricResult, register
from genmetrics.params import Const, Interval

__all__ = ["chamfer_distance", "embedding_diversity", "remote_clique"]


def remote_clique(u: np.ndarray) -> float:
    """(1/n²) Σ_{i≠j} (1 − u_i · u_j) = 1 − ‖mean(u)‖² for unit rows ``u``."""
    mean = u.mean(axis=0)
    return float(min(max(1.0 - mean @ mean, 0.0), 2.0))


def chamfer_distance(u: np.ndarray) -> float:
    """mean_i min_{j≠i} (1 − u_i · u_j) for unit rows ``u`` (n ≥ 2), each distance clipped to
    [0, 2] as sklearn's ``cosine_distances``."""
    n = len(u)
    nearest = np.empty(n)
    for rows in row_blocks(n):
        sim = u[rows] @ u.T
        idx = np.arange(rows.start, rows.stop)
        sim[idx - rows.start, idx] = -np.inf  # no item is its own neighbour
        nearest[rows] = sim.max(axis=1)
    return float(np.clip(1.0 - nearest, 0.0, 2.0).mean())


@register(
    "embedding_diversity",
    input="embeddings",
    values={"remote_clique": HIGHER, "chamfer": HIGHER},
    headline=("remote_clique", "chamfer"),
    params={
        "round": ((Interval(int, 0, None), Const(None)), "decimals (3 = the package's rounding)"),
    },
    family="diversity",
    scale="≥ 0",  # cosine distances, 0 to 2
    min_items=lambda params: (2, ""),  # chamfer: a nearest other item
    upstream="diversity 0.3.1 remote_clique, chamfer_dist (embedding.py)",
    citation="Cox et al. (2021); Shaib et al. (2024)",
)
def embedding_diversity(
    candidate: np.ndarray,
    *,
    round: int | None = None,  # noqa: A002 (the parameter name of the other diversity scores)
) -> MetricResult:
    """Remote-clique (1/n²) Σ_{i,j} D_ij = 1 − ‖ū‖² and chamfer mean_i min_{j≠i} D_ij of the
    cosine distances D_ij = 1 − cos(e_i, e_j) (D_ii = 0), as ``diversity.remote_clique`` and
    ``diversity.chamfer_dist`` (which round to 3: ``round=3``). Memory O(n·d + block·n)."""
    u = unit_rows(candidate, "candidate")
    if len(u) < 2:
        raise GenmetricsError(
            f"embedding_diversity: chamfer needs a nearest other item: 2 or more embeddings, "
            f"got {len(u)}"
        )
    values = {"remote_clique": remote_clique(u), "chamfer": chamfer_distance(u)}
    if round is not None:
        values = {k: float(np.round(v, round)) for k, v in values.items()}  # numpy's, as theirs
    return MetricResult(values=values, n={"candidate": len(u)})
