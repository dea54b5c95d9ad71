"""Scaling analysis: does a metric rank larger models of a family above smaller ones?

FACE-2 (Liu et al., Findings EMNLP 2025, §5.2, Table 2). Conventions:

* a *family* maps member model names to sizes (billions of parameters, larger = better
  expected); sizes are distinct and a family has ≥ 2 members;
* a *cell* is a (family, task) where every member has a value; it is *valid* for a metric when
  the values, listed by increasing size, are strictly increasing (higher-is-better) or strictly
  decreasing (lower-is-better); ties are not valid;
* valid-cell ratio = #valid cells / #cells; the random baseline of a cell with k members is
  1/k! (one of the k! orderings is valid), the baseline of a table is its mean over the cells;
* an *ensemble* (FACE-2's Ensemble-3 and -5) is a row judged from several member metrics of
  the same evaluator: :func:`ensemble_valid` states the vote.

* :func:`is_valid` — one cell's validity; :func:`ensemble_valid` — an ensemble's;
* :func:`cell_validity` — every cell's validity per (metric or ensemble, evaluator);
* :func:`valid_cell_table` — ratio per (metric, evaluator) from a tidy score table;
* :func:`summarise_evaluators` — ratio per evaluator, mean and SD across evaluators
  (:func:`mean_and_sd`, :func:`format_mean_sd`);
* :func:`format_table` — a markdown table like FACE-2 Table 2, random baseline last;
* :func:`valid_cells` — what the valid-cell figure shows, from the workflow's table.

The paired bootstrap of the ratio over each cell's prompts is
:func:`genmetrics.studies.face2_scaling.bootstrap.bootstrap_valid_ratio`.

The workflow's analysis (score records in, metrics recomputed on resampled prompts for the
bootstrap) is :func:`genmetrics.studies.face2_scaling.job.run_scaling`; FACE-2's Table 1 layout
(per dataset and language) is :mod:`genmetrics.studies.face2_scaling.table1`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from genmetrics import GenmetricsError

SCORE_COLUMNS = ("metric", "task", "model", "value")
TABLE_COLUMNS = (
    "metric",
    "evaluator",
    "cells",
    "valid",
    "ratio",
    "baseline",
    "skipped",
    "cells_detail",
    "skipped_detail",
)
CELL_COLUMNS = ("metric", "evaluator", "family", "task", "members", "valid", "missing")
NO_EVALUATOR = "ratio"  # column name of summarise_evaluators for rows without an evaluator
VALID_MARK, INVALID_MARK = "✓", "✗"


def is_valid(values_by_size: Sequence[float], higher_is_better: bool) -> bool:
    """True when the values (listed by increasing model size) are strictly monotone.

    Valid ⇔ v_1 < v_2 < … < v_k (``higher_is_better``) or v_1 > v_2 > … > v_k (otherwise);
    any tie makes the cell invalid. Raises GenmetricsError for fewer than 2 values or a
    non-finite value.
    """
    v = np.asarray(values_by_size, dtype=float)
    if v.ndim != 1 or v.size < 2:
        raise GenmetricsError(
            f"is_valid: values_by_size needs >= 2 values in a 1-d sequence, got {values_by_size!r}"
        )
    if not np.all(np.isfinite(v)):
        raise GenmetricsError(f"is_valid: values_by_size has a non-finite value: {v.tolist()}")
    steps = np.diff(v)
    return bool(np.all(steps > 0) if higher_is_better else np.all(steps < 0))


def ensemble_valid(
    values_by_size: Sequence[Sequence[float]], higher_is_better: Sequence[bool]
) -> bool:
    """True when a majority vote of the ensemble's members ranks every larger model of the
    cell above every smaller one.

    ``values_by_size[i][c]`` is member c's value for the i-th model by increasing size (k ≥ 2
    models × m ≥ 1 members); ``higher_is_better[c]`` is member c's direction. For each pair of
    models (smaller i, larger j), member c *votes for the larger* when its value is strictly
    better for j (v[j, c] > v[i, c] if higher is better, < otherwise); equal values are a vote
    for neither. The pair is won when more than half of the m members vote for the larger
    model (a tied member counts as not in favour); the cell is valid when every one of the
    k(k-1)/2 pairs is won.

    This is our reading: FACE-2 (Liu et al. 2025) defines Ensemble-3/-5 as a majority vote
    between two systems, and the valid cell over k models, but not the two together. With one
    member it is :func:`is_valid`. Every pair, not only neighbours, is checked, so a majority
    cycle (s ≺ m, m ≺ l, l ≺ s) is invalid; a cell of four or more models can be valid with
    no member ordering all of them (with three, the two neighbouring pairs' majorities
    share a member that orders all three). :func:`genmetrics.metrics.face.judge`, the vote
    between two systems, compares the counts of votes for each side instead: the two agree
    whenever no member ties; with ties, a pair won 1–0 with two members tied is won there
    and not here. Raises GenmetricsError for fewer than 2 models, no member, directions of
    the wrong length or a non-finite value.
    """
    v = np.asarray(values_by_size, dtype=float)
    hib = np.asarray(higher_is_better, dtype=bool).ravel()
    if v.ndim != 2 or v.shape[0] < 2 or v.shape[1] < 1:
        raise GenmetricsError(
            "ensemble_valid: values_by_size needs >= 2 models × >= 1 members (a 2-d array), "
            f"got shape {v.shape}"
        )
    if hib.size != v.shape[1]:
        raise GenmetricsError(
            f"ensemble_valid: {v.shape[1]} member value(s) per model but {hib.size} direction(s)"
        )
    if not np.all(np.isfinite(v)):
        raise GenmetricsError(
            f"ensemble_valid: values_by_size has a non-finite value: {v.tolist()}"
        )
    sign = np.where(hib, 1.0, -1.0)
    k, m = v.shape
    for i in range(k):
        for j in range(i + 1, k):
            for_larger = int(np.sum((v[j] - v[i]) * sign > 0))
            if 2 * for_larger <= m:
                return False
    return True


def check_families(families: Mapping[str, Mapping[str, float]], where: str) -> dict[str, list[str]]:
    """Validate families once; return each family's members sorted by increasing size."""
    if not isinstance(families, Mapping) or not families:
        raise GenmetricsError(f"{where}: need a non-empty mapping family -> {{model: size}}")
    ordered: dict[str, list[str]] = {}
    for fam, members in families.items():
        if not isinstance(members, Mapping) or len(members) < 2:
            raise GenmetricsError(
                f"{where}: family {fam!r} needs >= 2 members as a mapping model -> size, "
                f"got {members!r}"
            )
        sizes: dict[str, float] = {}
        for model, size in members.items():
            try:
                s = float(size)
            except (TypeError, ValueError):
                s = math.nan
            if not (math.isfinite(s) and s > 0):
                raise GenmetricsError(
                    f"{where}: family {fam!r}, model {model!r}: size must be a finite number > 0, "
                    f"got {size!r}"
                )
            sizes[model] = s
        if len(set(sizes.values())) < len(sizes):
            raise GenmetricsError(
                f"{where}: family {fam!r} has models of equal size, sizes must be distinct: {sizes}"
            )
        ordered[fam] = sorted(sizes, key=sizes.__getitem__)
    return ordered


def _check_direction(metric: str, directions: Mapping[str, bool], where: str) -> bool:
    if metric not in directions:
        raise GenmetricsError(
            f"{where}: metric {metric!r} has no entry in directions "
            f"(known: {sorted(map(str, directions))})"
        )
    hib = directions[metric]
    if not isinstance(hib, (bool, np.bool_)):
        raise GenmetricsError(
            f"{where}: directions[{metric!r}] must be a bool (higher_is_better), got {hib!r}"
        )
    return bool(hib)


def _tidy_scores(
    scores: pd.DataFrame,
    families: Mapping[str, Mapping[str, float]],
    directions: Mapping[str, bool],
    where: str,
) -> tuple[pd.DataFrame, dict[str, list[str]], list[tuple[str, Any]]]:
    """Checked scores of family members with a value, the families by size, and the
    (metric, evaluator) groups in order of first appearance in ``scores``."""
    if not isinstance(scores, pd.DataFrame):
        raise GenmetricsError(f"{where}: scores must be a pandas DataFrame")
    missing = [c for c in SCORE_COLUMNS if c not in scores.columns]
    if missing:
        raise GenmetricsError(
            f"{where}: scores lacks column(s) {missing} (has {list(scores.columns)})"
        )
    ordered = check_families(families, where)

    df = scores.loc[:, [c for c in (*SCORE_COLUMNS, "evaluator") if c in scores.columns]].copy()
    if "evaluator" not in df.columns:
        df["evaluator"] = None
    df["evaluator"] = df["evaluator"].astype(object).where(df["evaluator"].notna(), None)
    try:
        df["value"] = pd.to_numeric(df["value"], errors="raise").astype(float)
    except (TypeError, ValueError) as exc:
        raise GenmetricsError(f"{where}: column 'value' must be numeric ({exc})") from None
    bad = df[np.isinf(df["value"])]
    if len(bad):
        r = bad.iloc[0]
        raise GenmetricsError(
            f"{where}: infinite value for metric {r['metric']!r}, task {r['task']!r}, "
            f"model {r['model']!r}"
        )
    for metric in df["metric"].drop_duplicates():
        _check_direction(metric, directions, where)

    groups = list(dict.fromkeys(df[["metric", "evaluator"]].itertuples(index=False, name=None)))
    in_family = {m for members in ordered.values() for m in members}
    df = df[df["model"].isin(in_family) & df["value"].notna()]
    keys = ["metric", "evaluator", "task", "model"]
    dup = df[df.duplicated(keys, keep=False)]
    if len(dup):
        r = dup.iloc[0]
        raise GenmetricsError(
            f"{where}: {int(dup.duplicated(keys).sum()) + 1} scores for metric {r['metric']!r}, "
            f"evaluator {r['evaluator']!r}, task {r['task']!r}, model {r['model']!r}; "
            f"expected one"
        )
    return df, ordered, groups


def _values(df: pd.DataFrame, metric: str, evaluator: Any) -> dict[tuple[str, str], float]:
    sel = df[(df["metric"] == metric) & _same(df["evaluator"], evaluator)]
    return {(t, m): v for t, m, v in sel[["task", "model", "value"]].itertuples(index=False)}


def _judge_cells(
    ordered: Mapping[str, list[str]],
    members: Sequence[Mapping[tuple[str, str], float]],
    judge: Callable[[list[list[float]]], bool],
) -> list[dict[str, Any]]:
    """Every (family, task) cell of one row: ``members`` holds one value table per member
    metric ((task, model) → value; one table for a plain metric); a family with some but not
    all models valued by every member is a skipped cell (``valid`` None, ``missing`` names
    them); one with no model valued at all is not a cell."""
    tasks = sorted({t for vals in members for t, _ in vals}, key=str)
    out = []
    for fam, models in ordered.items():
        for task in tasks:
            absent = [m for m in models if any((task, m) not in vals for vals in members)]
            if not any((task, m) in vals for vals in members for m in models):
                continue
            cell = {"family": fam, "task": task, "members": len(models)}
            if absent:
                out.append({**cell, "valid": None, "missing": ", ".join(absent)})
                continue
            by_size = [[vals[task, m] for vals in members] for m in models]
            out.append({**cell, "valid": bool(judge(by_size)), "missing": ""})
    return out


def _cells(
    scores: pd.DataFrame,
    families: Mapping[str, Mapping[str, float]],
    directions: Mapping[str, bool],
    ensembles: Mapping[str, Sequence[str]] | None,
    where: str,
) -> tuple[list[tuple[str, Any]], list[dict[str, Any]]]:
    df, ordered, groups = _tidy_scores(scores, families, directions, where)
    rows: list[dict[str, Any]] = []
    for metric, evaluator in groups:
        hib = bool(directions[metric])
        cells = _judge_cells(
            ordered, [_values(df, metric, evaluator)], lambda v, h=hib: is_valid(_col(v), h)
        )
        rows += [{"metric": metric, "evaluator": evaluator, **c} for c in cells]
    known = {m for m, _ in groups}
    for label, members in (ensembles or {}).items():
        members = list(members)
        if label in known:
            raise GenmetricsError(f"{where}: ensemble {label!r} has the name of a scored metric")
        if not members or len(set(members)) < len(members):
            raise GenmetricsError(
                f"{where}: ensemble {label!r} needs distinct member metrics, got {members}"
            )
        absent = [m for m in members if m not in known]
        if absent:
            raise GenmetricsError(f"{where}: ensemble {label!r}: member(s) {absent} have no scores")
        hibs = [_check_direction(m, directions, where) for m in members]
        evaluators = [e for m, e in groups if m == members[0]]
        for evaluator in evaluators:
            if not all((m, evaluator) in groups for m in members):
                continue  # a member not computed with this evaluator: no ensemble row
            groups.append((label, evaluator))
            tables = [_values(df, m, evaluator) for m in members]
            cells = _judge_cells(ordered, tables, lambda v, h=hibs: ensemble_valid(v, h))
            rows += [{"metric": label, "evaluator": evaluator, **c} for c in cells]
    return groups, rows


def _col(by_size: list[list[float]]) -> list[float]:
    return [v[0] for v in by_size]


def cell_validity(
    scores: pd.DataFrame,
    families: Mapping[str, Mapping[str, float]],
    directions: Mapping[str, bool],
    ensembles: Mapping[str, Sequence[str]] | None = None,
) -> pd.DataFrame:
    """Every (family, task) cell of every (metric, evaluator), judged: what
    :func:`valid_cell_table` counts and the Table-1 layout splits by task.

    Arguments as :func:`valid_cell_table`. One row per cell with columns ``metric,
    evaluator, family, task, members`` (the family's size k), ``valid`` (True/False; None
    for a skipped cell, whose ``missing`` names the models without a value), in the order of
    the (metric, evaluator) rows, then families, then tasks (sorted).
    """
    _, rows = _cells(scores, families, directions, ensembles, "cell_validity")
    return pd.DataFrame(rows, columns=list(CELL_COLUMNS))


def valid_cell_table(
    scores: pd.DataFrame,
    families: Mapping[str, Mapping[str, float]],
    directions: Mapping[str, bool],
    ensembles: Mapping[str, Sequence[str]] | None = None,
) -> pd.DataFrame:
    """Valid-cell ratio per (metric, evaluator): #valid cells / #cells (FACE-2 Table 2).

    ``scores`` has columns ``metric, task, model, value`` and optionally ``evaluator`` (the
    model that computes the metric, e.g. FACE's surprisal model); ``directions[metric]`` is
    higher_is_better. Rows of models outside every family are ignored; a NaN value counts as
    missing. For each (metric, evaluator) and each task it has scores for, a family whose
    members all have a value forms a cell, judged by :func:`is_valid`; a family with some but
    not all members present is counted in ``skipped`` (listed in ``skipped_detail`` with the
    missing models); a family with no member present is not counted at all.

    ``ensembles`` (optional) maps a row name to its member metrics (names in ``scores``): per
    evaluator under which every member was scored, the row judges each cell with
    :func:`ensemble_valid` from the members' values of that evaluator (a cell needs every
    member's value for every model). The baseline of an ensemble's cell is 1/k! too (the
    chance that a random ranking of the models is their size order).

    Columns: ``metric, evaluator`` (None when the column is absent or empty), ``cells,
    valid, ratio`` (NaN with 0 cells), ``baseline`` (mean of 1/k! over the cells, NaN with
    0 cells), ``skipped``, ``cells_detail`` (``family/task:✓`` or ``:✗``, ``"; "``-joined),
    ``skipped_detail``. Rows in order of first appearance in ``scores``, then the ensembles.

    Raises GenmetricsError for a missing column, a metric not in ``directions``, an invalid
    family (< 2 members, equal sizes), a non-numeric or infinite value, duplicate scores
    for the same (metric, evaluator, task, model), or an ensemble whose members are not
    distinct scored metrics.
    """
    groups, cells = _cells(scores, families, directions, ensembles, "valid_cell_table")
    rows = []
    for metric, evaluator in groups:
        mine = [c for c in cells if c["metric"] == metric and c["evaluator"] == evaluator]
        judged = [c for c in mine if c["valid"] is not None]
        skipped = [c for c in mine if c["valid"] is None]
        n_cells, n_valid = len(judged), sum(c["valid"] for c in judged)
        rows.append(
            {
                "metric": metric,
                "evaluator": evaluator,
                "cells": n_cells,
                "valid": n_valid,
                "ratio": n_valid / n_cells if n_cells else math.nan,
                "baseline": (
                    float(np.mean([1.0 / math.factorial(c["members"]) for c in judged]))
                    if n_cells
                    else math.nan
                ),
                "skipped": len(skipped),
                "cells_detail": "; ".join(
                    f"{c['family']}/{c['task']}:{VALID_MARK if c['valid'] else INVALID_MARK}"
                    for c in judged
                ),
                "skipped_detail": "; ".join(
                    f"{c['family']}/{c['task']}(missing: {c['missing']})" for c in skipped
                ),
            }
        )
    return pd.DataFrame(rows, columns=list(TABLE_COLUMNS))


def _same(col: pd.Series, evaluator: Any) -> pd.Series:
    return col.isna() if evaluator is None else col == evaluator


def _fmt(x: float, digits: int) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def mean_and_sd(ratios: Sequence[float], ddof: int = 1) -> tuple[float, float, int]:
    """Mean and SD of the finite ``ratios`` and how many there are: the mean (SD) over
    evaluators. ``ddof=1`` (default): the sample SD; ``ddof=0``: the population SD, which
    FACE-2's Table 1 prints (its FACE-1 SO, 0.356 (0.053), is the mean and population SD of
    the eight Table-7 ratios). The SD is NaN with fewer than 2 ratios, the mean with none."""
    if ddof not in (0, 1):
        raise GenmetricsError(f"mean_and_sd: ddof must be 0 or 1, got {ddof!r}")
    r = np.asarray(ratios, dtype=float)
    r = r[np.isfinite(r)]
    mean = float(r.mean()) if r.size else math.nan
    return mean, float(r.std(ddof=ddof)) if r.size >= 2 else math.nan, int(r.size)


def format_mean_sd(mean: float, sd: float, digits: int = 2) -> str:
    """FACE-2's appendix format: ``"0.67 (0.12)"``; ``"0.67"`` alone when the SD is NaN (one
    evaluator), ``"–"`` when the mean is NaN."""
    if not math.isfinite(sd) or not math.isfinite(mean):
        return _fmt(mean, digits)
    return f"{_fmt(mean, digits)} ({_fmt(sd, digits)})"


def summarise_evaluators(table: pd.DataFrame, *, digits: int = 2) -> pd.DataFrame:
    """Per metric: the ratio under each evaluator, and its mean and SD across evaluators.

    ``table`` is :func:`valid_cell_table`'s output. Columns: ``metric``, one column per
    evaluator (order of first appearance; rows without an evaluator go to a column named
    ``"ratio"``), ``n_evaluators`` (evaluators with a finite ratio), ``mean``, ``sd`` (sample
    SD, ddof=1, over the finite ratios; NaN with fewer than 2) and ``mean (SD)`` formatted as
    FACE-2's appendix, ``"0.67 (0.12)"`` (``"0.67"`` alone when SD is NaN, ``"–"`` when the
    mean is NaN). A metric/evaluator pair appearing twice raises GenmetricsError.
    """
    where = "summarise_evaluators"
    missing = [c for c in ("metric", "evaluator", "ratio") if c not in table.columns]
    if missing:
        raise GenmetricsError(f"{where}: table lacks column(s) {missing}")
    t = table.loc[:, ["metric", "evaluator", "ratio"]].copy()
    t["evaluator"] = [NO_EVALUATOR if e is None or e != e else str(e) for e in t["evaluator"]]
    dup = t[t.duplicated(["metric", "evaluator"], keep=False)]
    if len(dup):
        r = dup.iloc[0]
        raise GenmetricsError(
            f"{where}: metric {r['metric']!r}, evaluator {r['evaluator']!r} appears twice"
        )
    evaluators = list(dict.fromkeys(t["evaluator"]))
    metrics = list(dict.fromkeys(t["metric"]))
    wide = (
        t.pivot(index="metric", columns="evaluator", values="ratio")
        .reindex(index=metrics, columns=evaluators)
        .astype(float)
    )
    wide.columns.name = None
    ratios = wide.to_numpy()
    finite = np.isfinite(ratios)
    out = wide.reset_index()
    out["n_evaluators"] = finite.sum(axis=1)
    stats = [mean_and_sd(row) for row in ratios]
    out["mean"] = [m for m, _, _ in stats]
    out["sd"] = [sd for _, sd, _ in stats]
    out["mean (SD)"] = [format_mean_sd(m, sd, digits) for m, sd, _ in stats]
    return out


def format_table(
    summary: pd.DataFrame,
    baseline: float,
    *,
    ci: Mapping[str, Any] | None = None,
    digits: int = 2,
    level: float = 0.95,
) -> str:
    """Markdown table like FACE-2 Table 2: rows metrics, columns evaluators and ``mean (SD)``.

    ``summary`` is :func:`summarise_evaluators`'s output. ``ci`` (optional) maps metric →
    ``(low, high)`` or a :func:`~genmetrics.studies.face2_scaling.bootstrap.bootstrap_valid_ratio` result; it adds a column
    ``{level:.0%} CI`` written ``[low, high]`` (``–`` for metrics without one). The last row,
    ``random``, holds ``baseline`` (e.g. valid_cell_table's ``baseline``) in every ratio column.
    """
    where = "format_table"
    if "metric" not in summary.columns or "mean (SD)" not in summary.columns:
        raise GenmetricsError(f"{where}: summary must come from summarise_evaluators")
    try:
        base = float(baseline)
    except (TypeError, ValueError):
        raise GenmetricsError(f"{where}: baseline must be a number, got {baseline!r}") from None
    start = list(summary.columns).index("metric") + 1
    stop = list(summary.columns).index("n_evaluators")
    evaluators = list(summary.columns[start:stop])
    header = ["metric", *map(str, evaluators), "mean (SD)"]
    ci_col = f"{level:.0%} CI"
    if ci is not None:
        unknown = sorted(set(map(str, ci)) - set(map(str, summary["metric"])))
        if unknown:
            raise GenmetricsError(f"{where}: ci has metric(s) {unknown} not in summary")
        header.append(ci_col)

    body = []
    for _, r in summary.iterrows():
        row = [str(r["metric"]), *(_fmt(r[e], digits) for e in evaluators), r["mean (SD)"]]
        if ci is not None:
            row.append(_fmt_ci(ci.get(r["metric"]), digits, r["metric"]))
        body.append(row)
    random_row = ["random", *(_fmt(base, digits) for _ in evaluators), _fmt(base, digits)]
    if ci is not None:
        random_row.append("–")
    body.append(random_row)

    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(header)]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), sep, *(line(b) for b in body)])


def _fmt_ci(value: Any, digits: int, metric: str) -> str:
    if value is None:
        return "–"
    if isinstance(value, Mapping):
        if "low" not in value or "high" not in value:
            raise GenmetricsError(f"format_table: ci[{metric!r}] lacks 'low'/'high'")
        low, high = value["low"], value["high"]
    else:
        try:
            low, high = value
        except (TypeError, ValueError):
            raise GenmetricsError(
                f"format_table: ci[{metric!r}] must be (low, high) or a bootstrap result, "
                f"got {value!r}"
            ) from None
    return f"[{_fmt(float(low), digits)}, {_fmt(float(high), digits)}]"


@dataclass(frozen=True)
class ValidCells:
    """What the valid-cell figure shows: ``summary`` (columns ``metric``, ``mean`` over the
    evaluators; ascending, NaN first), ``ratios`` (per evaluator, None for text metrics with
    no LM: its ratio per metric of ``summary``, NaN where it has none), ``intervals`` (metric →
    the 95% interval of its mean, or of its one ratio), the random ``baseline`` and the
    number of (family × dataset) ``cells``."""

    summary: pd.DataFrame
    ratios: list[tuple[str | None, np.ndarray]]
    intervals: dict[str, tuple[float, float]]
    baseline: float
    cells: int


def valid_cells(table: pd.DataFrame) -> ValidCells:
    """:class:`ValidCells` of the scaling table (:func:`run_scaling`): the mean over
    evaluators (:func:`summarise_evaluators`) with its paired-bootstrap interval
    (``mean_low``/``mean_high``), or a lone ratio's own interval (``low``/``high``)."""
    summary = summarise_evaluators(table).sort_values("mean", na_position="first")
    metrics = list(summary["metric"])
    ci = {
        m: (float(lo), float(hi))
        for m, lo, hi in zip(table["metric"], table["mean_low"], table["mean_high"], strict=True)
        if np.isfinite(lo)
    }
    for m in metrics:
        rows = table[table["metric"] == m]
        if m not in ci and len(rows) == 1 and np.isfinite(rows["low"].iloc[0]):
            ci[m] = (float(rows["low"].iloc[0]), float(rows["high"].iloc[0]))
    ratios: list[tuple[str | None, np.ndarray]] = []
    for ev in table["evaluator"].dropna().unique():
        sub = table[table["evaluator"] == ev].set_index("metric")["ratio"]
        ratios.append((ev, np.array([sub.get(m, np.nan) for m in metrics], dtype=float)))
    no_eval = table[table["evaluator"].isna()].set_index("metric")["ratio"]
    if len(no_eval):
        ratios.append((None, np.array([no_eval.get(m, np.nan) for m in metrics], dtype=float)))
    known = table["baseline"].dropna()
    return ValidCells(
        summary=summary[["metric", "mean"]].reset_index(drop=True),
        ratios=ratios,
        intervals={m: ci[m] for m in metrics if m in ci},
        baseline=float(known.iloc[0]) if len(known) else 0.0,
        cells=int(table["cells"].max()) if len(table) else 0,
    )
