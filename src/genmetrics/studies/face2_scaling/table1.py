"""FACE-2's Table 1 as a layout of the scaling analysis (Liu et al., Findings EMNLP 2025).

Table 1 of FACE-2 lists, per dataset and per language, the valid-cell ratio of each metric
(a *cell* is a (model family, dataset) pair; valid when the metric orders the family's models
by size: :mod:`genmetrics.studies.face2_scaling.valid_cells`) as mean (SD) over the evaluator LMs. Its rows, in
its order, and how a row is recognised from the entry's **resolved params** (never from the
entry's name or its variant label):

* ``FACE-1 SO``: ``face`` with ``convention=face1`` and every other param at that
  convention's default, value ``so``;
* ``FACE-2 (L2) SO, CORR, EMD, KL, JS (Eq. 6)`` (and ``JSD (true)``, the Jensen–Shannon
  divergence, beside Eq. 6): ``face`` with ``convention=face2``, ``zscore=false``, the rest at
  the convention's defaults, values ``so, corr, emd, kl_human_model, js_eq6, jsd``; the same
  with ``zscore=true`` is ``FACE-2 (z + L2) …`` (the paper's ablation rows);
* ``Ensemble-3 (L2)``, ``Ensemble-3 (z + L2)``, ``Ensemble-5 (L2)``, ``Ensemble-5 (z + L2)``:
  the majority votes (:data:`genmetrics.metrics.face.ENSEMBLES`) of those entries;
* ``Surprisal``: ``perplexity`` at its default params, value ``mean_surprisal`` (lower is
  better);
* then the other metrics (MAUVE, Self-BLEU, the other perplexity values) under their
  scaling-table labels, then this project's FACE rows that are not the paper's (other
  conventions, Hann window, Welch periodogram, FACE-1's CORR/SAM/SPEAR), then the random
  baseline.

Columns: each dataset (``task``) grouped by language (``languages``, default ``en``), the
valid ratio over the families with a cell on that dataset; after each language's datasets
``<language> (all)``, the ratio over its cells; ``overall``, over every cell. A ratio is
computed per evaluator, then reported as mean (SD) over the evaluators with a cell there
(one evaluator, or a metric computed without one: the single value). The SD is the
population SD (ddof 0), as the paper's Table 1: its English FACE-1 SO, 0.356 (0.053), is the
mean and population SD of the eight ratios of its Table 7 (the sample SD would be 0.056).
``best`` is the largest ratio over the evaluators (FACE-2's Table 2 reports that one).

* :func:`paper_row` — a row's position and label in Table 1, from the metric and its params;
* :func:`table1` — the long table (one line per row × column);
* :func:`format_table1` — its markdown.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from genmetrics import GenmetricsError
from genmetrics.studies.face2_scaling.valid_cells import CELL_COLUMNS, format_mean_sd, mean_and_sd

DEFAULT_LANGUAGE = "en"
OVERALL = "overall"
#: FACE-2's distances (the ``face2`` convention's values) and their row names
FACE2_VALUES = (
    ("so", "SO"),
    ("corr", "CORR"),
    ("emd", "EMD"),
    ("kl_human_model", "KL"),
    ("js_eq6", "JS (Eq. 6)"),
    ("jsd", "JSD (true)"),
)
#: FACE-1's values (the ``face1`` convention's) and their names; only SO is a Table-1 row
FACE1_VALUES = (("so", "SO"), ("corr", "CORR"), ("sam", "SAM"), ("spear", "SPEAR"))
ENSEMBLE_NAMES = (("ensemble3", "Ensemble-3"), ("ensemble5", "Ensemble-5"))
VARIANTS = ((False, "L2"), (True, "z + L2"))
SURPRISAL = "Surprisal"
RANDOM = "Random (1/k!)"

#: Table 1's rows in the paper's order (JSD beside JS (Eq. 6): not a paper row, but its
#: correct counterpart)
PAPER_ROWS: tuple[str, ...] = (
    "FACE-1 SO",
    *(f"FACE-2 ({v}) {name}" for _, v in VARIANTS for _, name in FACE2_VALUES),
    *(f"{e} ({v})" for _, e in ENSEMBLE_NAMES for _, v in VARIANTS),
    SURPRISAL,
)
#: sections of the table, in order
SECTIONS = ("paper", "baseline", "variant", "random")
SECTION_TITLES = {
    "baseline": "other metrics",
    "variant": "FACE rows not in FACE-2's Table 1",
}
LONG_COLUMNS = (
    "position",
    "section",
    "row",
    "metric",
    "column",
    "kind",
    "language",
    "cells",
    "n_evaluators",
    "mean",
    "sd",
    "text",
    "ratios",
    "best",
    "best_evaluator",
)
#: the SD over evaluators of Table 1: FACE-2's population SD
TABLE1_DDOF = 0


def _at_defaults(metric: str, params: Mapping[str, Any], free: Sequence[str] = ()) -> bool:
    """Whether ``params`` are the metric's defaults under their preset choices (FACE's
    convention), apart from the ``free`` ones."""
    from genmetrics.metrics import get

    defaults = get(metric).defaults_for(params)
    return all(params.get(k, v) == v for k, v in defaults.items() if k not in free)


def paper_row(metric: str, params: Mapping[str, Any], value: str) -> tuple[str, int | None]:
    """FACE-2 Table 1's label of a row and its position in :data:`PAPER_ROWS` (None for a
    row that is not the paper's), from the metric, its resolved params and the value name
    (or ensemble name, :data:`genmetrics.metrics.face.ENSEMBLES`).

    FACE rows at a paper convention's defaults get the paper's names (``FACE-1 CORR`` too,
    though only FACE-1's SO is a row of the paper); any other row gets ``""`` and None (the
    caller labels it).
    """
    if metric == "perplexity" and value == "mean_surprisal" and _at_defaults(metric, params):
        return SURPRISAL, PAPER_ROWS.index(SURPRISAL)
    if metric != "face":
        return "", None
    convention = params.get("convention")
    if convention == "face1" and _at_defaults(metric, params):
        name = dict(FACE1_VALUES).get(value)
        if name is None:
            return "", None
        label = f"FACE-1 {name}"
    elif convention == "face2" and _at_defaults(metric, params, free=("zscore",)):
        variant = dict(VARIANTS)[bool(params.get("zscore"))]
        if value in dict(ENSEMBLE_NAMES):
            label = f"{dict(ENSEMBLE_NAMES)[value]} ({variant})"
        elif value in dict(FACE2_VALUES):
            label = f"FACE-2 ({variant}) {dict(FACE2_VALUES)[value]}"
        else:
            return "", None
    else:
        return "", None
    return label, (PAPER_ROWS.index(label) if label in PAPER_ROWS else None)


def _columns(
    tasks: Sequence[str], languages: Mapping[str, str]
) -> list[tuple[str, str, str, tuple[str, ...]]]:
    """(column, kind, language, its tasks): datasets grouped by language (in order of the
    language's first dataset), each group followed by ``<language> (all)``, then overall."""
    groups: dict[str, list[str]] = {}
    for t in tasks:
        groups.setdefault(languages.get(t, DEFAULT_LANGUAGE), []).append(t)
    cols: list[tuple[str, str, str, tuple[str, ...]]] = []
    for lang, ts in groups.items():
        cols += [(t, "task", lang, (t,)) for t in ts]
        cols.append((f"{lang} (all)", "language", lang, tuple(ts)))
    cols.append((OVERALL, "overall", "", tuple(tasks)))
    return cols


def table1(
    cells: pd.DataFrame,
    rows: Mapping[str, Mapping[str, Any]],
    *,
    tasks: Sequence[str] | None = None,
    languages: Mapping[str, str] | None = None,
    digits: int = 2,
) -> pd.DataFrame:
    """FACE-2's Table 1 from the judged cells, as a long table.

    ``cells``: :func:`~genmetrics.studies.face2_scaling.valid_cells.cell_validity`'s output (skipped cells,
    ``valid`` None, are not counted). ``rows`` maps each ``metric`` of ``cells`` (a scaling
    row: a metric value or an ensemble) to ``{"metric": registered metric, "params": its
    resolved params, "value": value or ensemble name}``; :func:`paper_row` names and places
    it, the others keep their ``metric`` label. ``tasks``: the datasets in column order
    (default: their order in ``cells``); ``languages``: dataset → language (default ``en``).

    One line per (row, column) with ``position`` (row order), ``section`` (``paper``,
    ``baseline``: non-FACE rows, ``variant``: other FACE rows, ``random``), ``row`` (the
    label), ``metric`` (the scaling row), ``column``, ``kind`` (``task``, ``language``,
    ``overall``), ``language``, ``cells`` (distinct (family, dataset) cells judged there),
    ``n_evaluators``, ``mean``, ``sd`` (over evaluators, the population SD as the paper's
    Table 1, :data:`TABLE1_DDOF`; NaN with one), ``text`` (``"0.50 (0.50)"``), ``ratios``
    (each evaluator's ratio), ``best`` (the largest of them) and ``best_evaluator`` (whose it
    is, the first in evaluator order on a tie; ``no LM`` for a metric without one). The
    random row holds the mean of 1/k! over the column's cells.

    Raises GenmetricsError for a row of ``cells`` missing in ``rows``, a dataset of ``cells``
    missing in ``tasks``, or two rows with the same label.
    """
    where = "table1"
    missing = [c for c in CELL_COLUMNS if c not in cells.columns]
    if missing:
        raise GenmetricsError(f"{where}: cells lacks column(s) {missing}; use cell_validity")
    languages = dict(languages or {})
    judged = cells[cells["valid"].notna()].copy()
    judged["valid"] = judged["valid"].astype(bool)
    ev = judged["evaluator"].astype(object)
    judged["evaluator"] = ev.where(ev.notna(), None)  # no evaluator: None (read back: NaN)
    order = list(dict.fromkeys(cells["task"]))
    tasks = list(tasks) if tasks is not None else order
    unknown = [t for t in order if t not in tasks]
    if unknown:
        raise GenmetricsError(f"{where}: dataset(s) {unknown} of the cells are not in tasks")
    tasks = [t for t in tasks if t in set(order)]
    columns = _columns(tasks, languages)

    # (section, rank, label, metric, section name); rows outside the paper's keep the order
    # of their settings' first row (an entry's values, then its ensembles), then their own
    labelled: list[tuple[int, tuple[int, ...], str, str, str]] = []
    seen: dict[str, str] = {}
    first: dict[str, int] = {}
    for i, metric in enumerate(dict.fromkeys(cells["metric"])):
        if metric not in rows:
            raise GenmetricsError(f"{where}: row {metric!r} of the cells is not in rows")
        r = rows[metric]
        params = r.get("params") or {}
        label, pos = paper_row(r["metric"], params, r["value"])
        setting = first.setdefault(json.dumps([r["metric"], params], sort_keys=True), i)
        if pos is not None:
            section, rank = "paper", (pos,)
        elif r["metric"] == "face":
            section, rank, label = "variant", (setting, i), label or metric
        else:
            section, rank, label = "baseline", (setting, i), metric
        if label in seen:
            raise GenmetricsError(
                f"{where}: rows {seen[label]!r} and {metric!r} both read as {label!r} (two "
                "entries with the same params under one evaluator?)"
            )
        seen[label] = metric
        labelled.append((SECTIONS.index(section), rank, label, metric, section))
    labelled.sort(key=lambda x: (x[0], x[1]))

    out = []
    for position, (_, _, label, metric, section) in enumerate(labelled):
        mine = judged[judged["metric"] == metric]
        evaluators = list(dict.fromkeys(mine["evaluator"]))
        for col, kind, lang, col_tasks in columns:
            here = mine[mine["task"].isin(col_tasks)]
            ratios = []
            for ev in evaluators:
                sel = here[here["evaluator"].isna() if ev is None else here["evaluator"] == ev]
                ratios.append(float(sel["valid"].mean()) if len(sel) else math.nan)
            mean, sd, n = mean_and_sd(ratios, ddof=TABLE1_DDOF)
            finite = [(r, ev) for r, ev in zip(ratios, evaluators, strict=True) if r == r]
            top = max(finite, key=lambda x: x[0]) if finite else (math.nan, None)
            out.append(
                {
                    "position": position,
                    "section": section,
                    "row": label,
                    "metric": metric,
                    "column": col,
                    "kind": kind,
                    "language": lang,
                    "cells": len(here[["family", "task"]].drop_duplicates()),
                    "n_evaluators": n,
                    "mean": mean,
                    "sd": sd,
                    "text": format_mean_sd(mean, sd, digits),
                    "ratios": "; ".join(
                        f"{ev if ev is not None else 'no LM'}={r:.{digits}f}"
                        for ev, r in zip(evaluators, ratios, strict=True)
                        if math.isfinite(r)
                    ),
                    "best": top[0],
                    "best_evaluator": (top[1] if top[1] is not None else "no LM") if finite else "",
                }
            )
    distinct = judged[["family", "task", "members"]].drop_duplicates(["family", "task"])
    for col, kind, lang, col_tasks in columns:
        here = distinct[distinct["task"].isin(col_tasks)]
        base = (
            float(np.mean([1.0 / math.factorial(int(k)) for k in here["members"]]))
            if len(here)
            else math.nan
        )
        out.append(
            {
                "position": len(labelled),
                "section": "random",
                "row": RANDOM,
                "metric": "",
                "column": col,
                "kind": kind,
                "language": lang,
                "cells": len(here),
                "n_evaluators": 0,
                "mean": base,
                "sd": math.nan,
                "text": format_mean_sd(base, math.nan, digits),
                "ratios": "",
                "best": base,
                "best_evaluator": "",
            }
        )
    return pd.DataFrame(out, columns=list(LONG_COLUMNS))


def format_table1(table: pd.DataFrame) -> str:
    """Markdown of :func:`table1`: a row per Table-1 row, a column per dataset (headed
    ``dataset (language)``), per language and overall, each header with its number of
    (family × dataset) cells; a title line before each section after the paper's rows."""
    missing = [c for c in LONG_COLUMNS if c not in table.columns]
    if missing:
        raise GenmetricsError(f"format_table1: table lacks column(s) {missing}; use table1")
    random = table[table["section"] == "random"]
    cols = list(dict.fromkeys(table["column"]))
    kinds = dict(zip(table["column"], table["kind"], strict=False))
    langs = dict(zip(table["column"], table["language"], strict=False))
    n_cells = dict(zip(random["column"], random["cells"], strict=True))

    def head(c: str) -> str:
        n = n_cells.get(c, 0)
        where = f"{langs[c]}, " if kinds[c] == "task" else ""
        return f"{c} ({where}{n} cell{'s' if n != 1 else ''})"

    header = ["row", *(head(c) for c in cols)]
    body: list[list[str]] = []
    section = "paper"
    for _, g in table.sort_values("position", kind="stable").groupby("position", sort=True):
        first = g.iloc[0]
        if first["section"] != section and first["section"] in SECTION_TITLES:
            body.append([f"*{SECTION_TITLES[first['section']]}*", *("" for _ in cols)])
        section = first["section"]
        text = dict(zip(g["column"], g["text"], strict=True))
        body.append([str(first["row"]), *(text.get(c, "–") for c in cols)])
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(header)]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), sep, *(line(b) for b in body)])
