"""The workflow's scaling analysis: FACE-2's valid-cell ratio of a run's score records.

:func:`run_scaling` reads each (entry, dataset, model) score record into the tidy table of
:func:`~genmetrics.analysis.scaling.valid_cell_table`, and for the paired bootstrap
(:func:`~genmetrics.analysis.scaling.bootstrap_valid_ratio`) recomputes each entry's metric
on resampled prompts of every cell (:class:`_Recompute`: inputs loaded once, memoised per
draw). The statistics themselves are in :mod:`genmetrics.analysis.scaling`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from genmetrics import GenmetricsError
from genmetrics.analysis.scaling import (
    bootstrap_valid_ratio,
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
    the index array (every value of the entry reuses the same recomputation)."""

    def __init__(self, entry: Mapping[str, Any], cell: Mapping[str, Any], loaded: dict):
        from genmetrics.kinds import KINDS
        from genmetrics.metrics import get
        from genmetrics.scoring import load_input

        self.metric = get(entry["metric"])
        self.params = entry["params"]
        kind = KINDS[self.metric.input]

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

    def values(self, items: Sequence[str], idx: np.ndarray) -> dict[str, float]:
        key = idx.tobytes()
        if key not in self.memo:
            from genmetrics.scoring import _take, score_loaded

            take = [i for k in idx for i in self.by_item[items[k]]]
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


def run_scaling(settings: Mapping[str, Any], progress: bool = False) -> dict[str, Any]:
    """The scaling analysis of a workflow run (``settings`` from :meth:`Plan.scaling_settings`):
    the valid-cell table per (variant: value, evaluator) from the score records, a paired
    bootstrap CI per row over each cell's shared prompts (``bootstrap`` replicates; 0: none),
    the summary across evaluators and its markdown table.

    Returns ``{"table", "summary", "markdown", "baseline", "ci"}``; ``table`` has one row per
    (metric value, evaluator) with ``low``/``high``/``failed`` bootstrap columns and the
    interval of the mean over evaluators (``mean_low``/``mean_high``).
    """
    from genmetrics.io import read_json
    from genmetrics.metrics import get
    from genmetrics.metrics.registry import HIGHER

    families = settings["families"]
    entries = settings["entries"]
    rows, directions, labels = [], {}, {}
    for c in settings["cells"]:
        ent = entries[c["entry"]]
        declared = get(ent["metric"]).values
        for name, value in read_json(c["score"])["values"].items():
            if declared.get(name) is None:
                continue  # neither direction is better (a length, a count)
            label = f"{ent['variant']}: {name}"
            directions[label] = declared[name] == HIGHER
            labels[label] = (c["entry"], name)
            rows.append(
                {
                    "metric": label,
                    "evaluator": ent["evaluator"],
                    "task": c["dataset"],
                    "model": c["model"],
                    "value": value,
                }
            )
    scores = pd.DataFrame(rows, columns=["metric", "evaluator", "task", "model", "value"])
    table = valid_cell_table(scores, families, directions)
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
        for pos, row in table.iterrows():
            if not row["cells"]:
                continue
            entry, name = labels[row["metric"]]
            rec = by_entry[entry]
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
                        m: (lambda idx, r=rec[task, m], s=shared, v=name: r.values(s, idx)[v])
                        for m in members
                    }
            boot = bootstrap_valid_ratio(
                cells,
                families,
                n_items,
                directions[row["metric"]],
                n_boot,
                int(settings["seed"]),
                progress=progress,
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
    return {
        "table": table,
        "summary": summary,
        "markdown": format_table(summary, baseline, ci=ci or None),
        "baseline": baseline,
        "ci": ci,
    }
