"""The paired bootstrap of FACE-2's valid-cell ratio (Liu et al., Findings EMNLP 2025, §5.2):
its uncertainty over each cell's prompts, every family member recomputed on the same resampled
prompts (:func:`bootstrap_valid_ratio`). The cells, their validity and the point estimate are
:mod:`genmetrics.studies.face2_scaling.valid_cells`; the workflow's recomputation of metrics on resampled prompts
is :mod:`genmetrics.studies.face2_scaling.job`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from genmetrics import GenmetricsError
from genmetrics.analysis.statistics import bootstrap_indices, percentile_interval
from genmetrics.studies.face2_scaling.valid_cells import check_families, ensemble_valid, is_valid


def bootstrap_valid_ratio(
    cells: Mapping[tuple[str, str], Mapping[str, Callable[[np.ndarray], Any]]],
    sizes: Mapping[str, Mapping[str, float]],
    n_items: Mapping[tuple[str, str], int],
    higher_is_better: bool | Sequence[bool],
    n_boot: int,
    seed: int,
    *,
    level: float = 0.95,
    progress: bool = False,
) -> dict[str, Any]:
    """Paired percentile bootstrap of the valid-cell ratio over each cell's prompts.

    ``cells[(family, task)][model]`` recomputes the model's metric value from an index array
    into the cell's shared item list (the ``n_items[(family, task)]`` prompts every member
    answered); ``sizes[family]`` = {model: size}, and each cell must have exactly the
    family's members. Per replicate b = 1..n_boot, with ``rng = numpy.random.default_rng(seed)``:
    for each cell in sorted key order draw ``idx = rng.integers(0, n, n)``, all draws done
    before any recompute (so a failure does not shift later draws); call every member's
    function with the same ``idx`` (paired: the same resampled prompts for every member);
    judge the cell with :func:`is_valid`; replicate ratio = #valid / #cells. A replicate where
    some recompute raises GenmetricsError (or returns a non-finite value) is skipped and
    counted in ``failed``.

    An ensemble row: ``higher_is_better`` is a sequence (one direction per member), each
    function returns the members' values (a sequence, in that order) and the cell is judged
    by :func:`ensemble_valid`; the members recompute on the same resampled prompts.

    Returns ``replicates`` (ratios of the successful replicates, in order), ``low``/``high``
    (percentile CI at ``level``), ``mean``, ``n_boot``, ``seed``, ``level``, ``failed``,
    ``n_cells``, ``cell_valid_rate`` ({cell: fraction of successful replicates where it is
    valid}). No point estimate: that is :func:`valid_cell_table`'s ratio. With every replicate
    failed, low/high/mean are NaN. Same seed → same output.
    """
    where = "bootstrap_valid_ratio"
    if not isinstance(n_boot, (int, np.integer)) or isinstance(n_boot, bool) or n_boot < 1:
        raise GenmetricsError(f"{where}: n_boot must be an integer >= 1, got {n_boot!r}")
    if not (isinstance(level, (int, float)) and 0 < level < 1):
        raise GenmetricsError(f"{where}: level must be in (0, 1), got {level!r}")
    if isinstance(higher_is_better, (bool, np.bool_)):
        hib = bool(higher_is_better)

        def judge(vals: list[Any]) -> bool:
            return is_valid([float(v) for v in vals], hib)

    elif isinstance(higher_is_better, Sequence) and all(
        isinstance(h, (bool, np.bool_)) for h in higher_is_better
    ):
        hibs = [bool(h) for h in higher_is_better]

        def judge(vals: list[Any]) -> bool:
            return ensemble_valid([[float(x) for x in v] for v in vals], hibs)

    else:
        raise GenmetricsError(
            f"{where}: higher_is_better must be a bool (a metric) or a sequence of bools (an "
            f"ensemble's members), got {higher_is_better!r}"
        )
    if not cells:
        raise GenmetricsError(f"{where}: no cells")
    ordered = check_families(sizes, where)

    plan: list[tuple[tuple[str, str], int, list[Callable[[np.ndarray], Any]]]] = []
    for key in sorted(cells):
        if not (isinstance(key, tuple) and len(key) == 2):
            raise GenmetricsError(f"{where}: cell key {key!r} is not a (family, task) pair")
        fam = key[0]
        if fam not in ordered:
            raise GenmetricsError(f"{where}: cell {key!r}: family {fam!r} is not in sizes")
        funcs = cells[key]
        if set(funcs) != set(ordered[fam]):
            raise GenmetricsError(
                f"{where}: cell {key!r} has members {sorted(funcs)}, family {fam!r} has "
                f"{ordered[fam]}; a cell needs every member"
            )
        if key not in n_items:
            raise GenmetricsError(f"{where}: n_items has no entry for cell {key!r}")
        n = n_items[key]
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
            raise GenmetricsError(f"{where}: n_items[{key!r}] must be an integer >= 1, got {n!r}")
        plan.append((key, int(n), [funcs[m] for m in ordered[fam]]))

    rng = np.random.default_rng(seed)
    replicates: list[float] = []
    valid_counts = np.zeros(len(plan))
    failed = 0
    for _ in tqdm(range(n_boot), desc="bootstrap valid-cell ratio", disable=not progress):
        draws = [bootstrap_indices(rng, n) for _, n, _ in plan]
        try:
            ok = np.array(
                [
                    judge([f(idx) for f in funcs])
                    for (_, _, funcs), idx in zip(plan, draws, strict=True)
                ]
            )
        except GenmetricsError:
            failed += 1
            continue
        valid_counts += ok
        replicates.append(float(ok.mean()))

    reps = np.asarray(replicates, dtype=float)
    if reps.size:
        low, high = percentile_interval(reps, level)
        low, high, mean = float(low), float(high), float(reps.mean())
    else:
        low = high = mean = math.nan
    return {
        "replicates": reps,
        "low": low,
        "high": high,
        "mean": mean,
        "n_boot": int(n_boot),
        "seed": seed,
        "level": float(level),
        "failed": failed,
        "n_cells": len(plan),
        "cell_valid_rate": {
            key: (float(c / reps.size) if reps.size else math.nan)
            for (key, _, _), c in zip(plan, valid_counts, strict=True)
        },
    }
