"""The workflow's scaling analysis: FACE-2's valid-cell ratio of a run's score records.

:func:`run_scaling` reads each (entry, dataset, model) score record into the tidy table of
:func:`~genmetrics.studies.face2_scaling.valid_cells.valid_cell_table`, and for the paired bootstrap
(:func:`~genmetrics.studies.face2_scaling.bootstrap.bootstrap_valid_ratio`) recomputes each entry's metric
on resampled prompts of every cell (:class:`_Recompute`: inputs loaded once, memoised per
draw). The statistics themselves are in :mod:`genmetrics.studies.face2_scaling.valid_cells`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from genmetrics import GenmetricsError
from genmetrics.studies.face2_scaling.bootstrap import bootstrap_valid_ratio
from genmetrics.studies.face2_scaling.table1 import format_table1, table1
from genmetrics.studies.face2_scaling.table2 import (
    format_table2,
    ours_for_paper,
    paper_matches,
    table2,
)
from genmetrics.studies.face2_scaling.valid_cells import (
    cell_validity,
    format_table,
    summarise_evaluators,
    valid_cell_table,
)


def _items(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[int]]:
    """Row indices per prompt (``prompt_id``/``source_id``) of one source's rows."""
    key = next((k for k in ("prompt_id", "source_id") if rows and all(k in r for r in rows)), None)
    if key is None:
        raise GenmetricsError(
            "scaling: bootstrapping over prompts needs a prompt_id on every text "
            "(generations have one; imported texts take it from prompt_id_field)"
        )
    out: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        out.setdefault(str(r[key]), []).append(i)
    return out


class _Recompute:
    """One entry's metric recomputed on resampled prompts of one (task, model), memoised by
    the index array (every value of the entry reuses the same recomputation).

    A metric whose value is a mean of per-pair numbers, each computed from its pair alone
    (registered ``duplicates_change_value=False``, no ``idf`` over the reference set), whose
    score record holds them (``extras["per_pair"]``, one per candidate row: BERTScore, ROUGE)
    is not rerun: a resample's value is the mean of the drawn rows' per-pair numbers, what
    rerunning it gives, without loading its encoder once per draw."""

    def __init__(self, entry: Mapping[str, Any], cell: Mapping[str, Any], loaded: dict):
        from genmetrics.metrics import get
        from genmetrics.metrics.kinds import KINDS
        from genmetrics.scoring.from_files import load_input

        self.metric = get(entry["metric"])
        self.params = entry["params"]
        kind = KINDS[self.metric.input_kind(self.metric.check_params(self.params))]

        def load(path: str, role: str) -> tuple[Any, Any]:  # a file shared by entries: once
            if (kind.name, path) not in loaded:
                loaded[kind.name, path] = load_input(kind, path, role)
            return loaded[kind.name, path]

        self.cand, self.rows = load(cell["candidate"], "candidate")
        self.ref = self.ref_rows = None
        if cell.get("reference"):
            self.ref, self.ref_rows = load(cell["reference"], "reference")
        self.by_item = _items(self.rows)
        self.memo: dict[bytes, dict[str, float]] = {}
        self.per_pair = self._per_pair(cell.get("score"))

    def _per_pair(self, score: str | None) -> dict[str, np.ndarray] | None:
        if self.metric.duplicates_change_value or self.params.get("idf") or not score:
            return None
        from genmetrics.io import read_json

        pairs = (read_json(score).get("extras") or {}).get("per_pair") or {}
        judged = {v for v, d in self.metric.values.items() if d is not None}
        if not judged <= set(pairs) or any(len(v) != len(self.rows) for v in pairs.values()):
            return None  # a value without its per-pair numbers: rerun the metric
        return {k: np.asarray(v, dtype=float) for k, v in pairs.items()}

    def values(self, items: Sequence[str], idx: np.ndarray) -> dict[str, float]:
        key = idx.tobytes()
        if key not in self.memo:
            from genmetrics.scoring.from_files import _take, score_loaded

            take = [i for k in idx for i in self.by_item[items[k]]]
            if self.per_pair is not None:
                self.memo[key] = {k: float(v[take].mean()) for k, v in self.per_pair.items()}
                return self.memo[key]
            rec = score_loaded(
                self.metric.name,
                _take(self.cand, take),
                [self.rows[i] for i in take],
                self.ref,
                self.ref_rows,
                self.params,
            )
            self.memo[key] = rec["values"]
        return self.memo[key]


def _rows(
    settings: Mapping[str, Any],
) -> tuple[pd.DataFrame, dict[str, bool], dict[str, tuple], dict[str, tuple], dict[str, dict]]:
    """The tidy scores of the records, each row's direction, what each (row, evaluator)
    recomputes ((entry, value) or (entry, member values)), the ensembles' member rows, and
    each row's metric, params and value (for the Table-1 labels)."""
    from genmetrics.io import read_json
    from genmetrics.metrics import get
    from genmetrics.metrics.face import ENSEMBLES, ensemble_members
    from genmetrics.metrics.registry import HIGHER

    entries = settings["entries"]
    # a direction the study gives a value its metric declares none for (FACE-2 App. A.1:
    # a smaller Zipf coefficient "is closer to human")
    given = {k: v == "higher" for k, v in (settings.get("directions") or {}).items()}
    rows, directions, labels, meta = [], {}, {}, {}
    ensembles: dict[str, tuple[str, ...]] = {}
    for c in settings["cells"]:
        ent = entries[c["entry"]]
        declared = get(ent["metric"]).values
        values = read_json(c["score"])["values"]
        for name, value in values.items():
            if declared.get(name) is None and name not in given:
                continue  # neither direction is better (a length, a count)
            label = f"{ent['variant']}: {name}"
            directions[label] = (
                given[name] if declared.get(name) is None else declared[name] == HIGHER
            )
            labels[label, ent["evaluator"]] = (c["entry"], name)
            meta[label] = {"metric": ent["metric"], "params": ent["params"], "value": name}
            rows.append(
                {
                    "metric": label,
                    "evaluator": ent["evaluator"],
                    "task": c["dataset"],
                    "model": c["model"],
                    "value": value,
                }
            )
        if ent["metric"] != "face":
            continue
        for ens in ENSEMBLES:  # the majority votes of this entry's own values
            members = ensemble_members(ens, values)
            if members is None:
                continue
            label = f"{ent['variant']}: {ens}"
            member_rows = tuple(f"{ent['variant']}: {m}" for m in members)
            if ensembles.setdefault(label, member_rows) != member_rows:
                raise GenmetricsError(
                    f"scaling: {label!r} has members {member_rows} and {ensembles[label]} in "
                    f"different records of entry {c['entry']!r}"
                )
            labels[label, ent["evaluator"]] = (c["entry"], members)
            meta[label] = {"metric": ent["metric"], "params": ent["params"], "value": ens}
    scores = pd.DataFrame(rows, columns=["metric", "evaluator", "task", "model", "value"])
    return scores, directions, labels, ensembles, meta


def run_scaling(settings: Mapping[str, Any], progress: bool = False) -> dict[str, Any]:
    """The scaling analysis of a workflow run (``settings`` from :meth:`Plan.scaling_settings`):
    the valid-cell table per (variant: value, evaluator) from the score records, plus each
    FACE entry's Ensemble-3 and Ensemble-5 rows (``<variant>: ensemble3``: the majority vote
    of that entry's own member values, :func:`~genmetrics.studies.face2_scaling.valid_cells.ensemble_valid`),
    a paired bootstrap CI per row over each cell's shared prompts (``bootstrap`` replicates;
    0: none; an ensemble's members recompute on the same resampled prompts), the summary
    across evaluators and its markdown table, and FACE-2's Table 1 layout per dataset and
    language (:func:`~genmetrics.studies.face2_scaling.table1.table1`).

    Also FACE-2's Table 2 (best over evaluators beside the baselines,
    :func:`~genmetrics.studies.face2_scaling.table2.table2`; ``settings["notes"]`` says why a
    baseline is missing) and the paper's Table 1/2 numbers beside ours
    (:func:`genmetrics.analysis.paper_comparison.side_by_side` with
    ``resources/papers/face-scaling.csv``; ``paper``).

    Returns ``{"table", "summary", "markdown", "baseline", "ci", "cells", "table1",
    "table1_markdown", "table2", "table2_markdown", "paper"}``; ``table`` has one row per
    (metric value or ensemble, evaluator) with ``low``/``high``/``failed`` bootstrap columns and the interval of the mean over
    evaluators (``mean_low``/``mean_high``); ``cells`` every judged (family, task) cell.
    """
    families = settings["families"]
    entries = settings["entries"]
    scores, directions, labels, ensembles, meta = _rows(settings)
    table = valid_cell_table(scores, families, directions, ensembles)
    cells_table = cell_validity(scores, families, directions, ensembles)
    n_boot = int(settings["bootstrap"])
    table["low"] = table["high"] = np.nan
    table["failed"] = 0
    replicates: dict[str, list[np.ndarray]] = {}
    if n_boot > 0:
        by_entry: dict[str, dict[tuple[str, str], _Recompute]] = {}
        loaded: dict = {}  # (kind, path) -> (data, rows): references shared across entries
        for c in settings["cells"]:
            by_entry.setdefault(c["entry"], {})[(c["dataset"], c["model"])] = _Recompute(
                entries[c["entry"]], c, loaded
            )
        rows = [(pos, row) for pos, row in table.iterrows() if row["cells"]]
        for pos, row in tqdm(rows, desc="scaling bootstrap (rows)", disable=not progress):
            # the entry of this row's own evaluator (entries that differ only in their
            # evaluator share the row's label)
            evaluator = row["evaluator"] if isinstance(row["evaluator"], str) else None  # NaN
            entry, name = labels[row["metric"], evaluator]
            rec = by_entry[entry]
            if row["metric"] in ensembles:  # members' values, their own directions
                hib = [directions[m] for m in ensembles[row["metric"]]]
            else:
                hib = directions[row["metric"]]
            cells, n_items = {}, {}
            for fam, members in families.items():
                for task in sorted({t for (t, m) in rec if m in members}):
                    if not all((task, m) in rec for m in members):
                        continue
                    shared = sorted(set.intersection(*(set(rec[task, m].by_item) for m in members)))
                    if not shared:
                        raise GenmetricsError(
                            f"scaling: {fam}/{task}: the members share no prompt to resample"
                        )
                    n_items[fam, task] = len(shared)
                    cells[fam, task] = {
                        m: (
                            lambda idx, r=rec[task, m], s=shared, v=name: _pick(r.values(s, idx), v)
                        )
                        for m in members
                    }
            boot = bootstrap_valid_ratio(
                cells, families, n_items, hib, n_boot, int(settings["seed"])
            )
            table.loc[pos, ["low", "high", "failed"]] = [boot["low"], boot["high"], boot["failed"]]
            replicates.setdefault(row["metric"], []).append(boot["replicates"])
    summary = summarise_evaluators(table)
    ci = {}
    for metric, reps in replicates.items():
        if len({len(r) for r in reps}) == 1 and len(reps[0]):  # mean over evaluators, per draw
            mean = np.mean(np.stack(reps), axis=0)
            ci[metric] = tuple(np.quantile(mean, [0.025, 0.975]))
    # the CI of the mean over evaluators, on every row of its metric (for the figure)
    table["mean_low"] = [ci.get(m, (np.nan, np.nan))[0] for m in table["metric"]]
    table["mean_high"] = [ci.get(m, (np.nan, np.nan))[1] for m in table["metric"]]
    baseline = float(table["baseline"].dropna().iloc[0]) if table["baseline"].notna().any() else 0.0
    t1 = table1(
        cells_table,
        meta,
        tasks=settings.get("tasks"),
        languages=settings.get("languages"),
    )
    from genmetrics.analysis.paper_comparison import SIDE_BY_SIDE_COLUMNS, side_by_side

    t2 = table2(t1, meta)
    ours = ours_for_paper(t1, t2)
    matches = paper_matches(ours)
    paper = (
        side_by_side("face-scaling", ours, matches)
        if matches
        else pd.DataFrame(columns=SIDE_BY_SIDE_COLUMNS)
    )
    return {
        "table2": t2,
        "table2_markdown": format_table2(t2, settings.get("notes")),
        "paper": paper,
        "table": table,
        "summary": summary,
        "markdown": format_table(summary, baseline, ci=ci or None),
        "baseline": baseline,
        "ci": ci,
        "cells": cells_table,
        "table1": t1,
        "table1_markdown": format_table1(t1),
    }


def _pick(values: Mapping[str, float], name: str | tuple[str, ...]) -> Any:
    """One value of a recomputed record, or an ensemble's member values in order."""
    return values[name] if isinstance(name, str) else tuple(values[v] for v in name)
