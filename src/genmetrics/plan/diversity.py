"""``analysis.diversity`` checked: the columns of the diversity study's tables
(:mod:`genmetrics.studies.shaib_diversity.tables`; Shaib et al. (2024), Tables 2-7).

A column is one entry without length control (its metric's headline value) and its truncated
twin: the entry running the same metric with the same params, reference and datasets under
``length_control: shortest`` or ``shortest_models``. ``entries`` lists the raw entries; by
default every entry of the ``diversity`` family without length control, in config order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from genmetrics import GenmetricsError
from genmetrics.metrics.registry import get
from genmetrics.plan.objects import ScoreEntry
from genmetrics.plan.variants import resolve_names

KEY = "analysis.diversity"


def headline_value(key: str, name: str, e: ScoreEntry) -> tuple[str, str]:
    """The headline value of entry ``name`` (its metric's first) and its direction; an entry
    whose metric has none is an error naming ``key``."""
    metric = get(e.metric)
    if not metric.headline:
        raise GenmetricsError(f"{key}: {name!r} ({e.metric}) has no headline value")
    value = metric.headline[0]
    return value, metric.values[value]


def diversity_entries(entries: Mapping[str, ScoreEntry]) -> list[str]:
    """Every entry of the ``diversity`` family without length control, in config order (what
    a section that names no ``entries`` scores)."""
    return [
        n
        for n, e in entries.items()
        if get(e.metric).family == "diversity" and e.length_control == "none"
    ]


def diversity_settings(
    section: Mapping[str, Any] | None,
    entries: Mapping[str, ScoreEntry],
    groups: Mapping[str, Any],
) -> dict[str, Any] | None:
    """``{"columns": [...], "stability": {...} | None, "paper": {...} | None}`` (None without
    the section)."""
    if section is None:
        return None
    names = section.get("entries")
    if names is None:
        names = diversity_entries(entries)
    columns = []
    for i, name in enumerate(names):
        key = f"{KEY}.entries[{i}]"
        if name not in entries:
            raise GenmetricsError(f"{key}: {name!r} is not in metrics")
        e = entries[name]
        if e.length_control != "none":
            raise GenmetricsError(
                f"{key}: {name!r} uses length_control; name the entry without it (its "
                "truncated twin is found by metric and params)"
            )
        value, direction = headline_value(key, name, e)
        columns.append(
            {
                "label": name,
                "entry": name,
                "name": value,
                "direction": direction,
                "cut_entry": _twin(e, entries),
            }
        )
    if not columns:
        raise GenmetricsError(f"{KEY}: no entry of the diversity family in metrics")
    stab = section.get("stability")
    if stab is not None:
        key = f"{KEY}.stability.datasets"
        pair = resolve_names(stab["datasets"], groups, key)
        if len(pair) != 2 or pair[0] == pair[1]:
            raise GenmetricsError(f"{key}: two different datasets, got {list(pair)}")
        stab = {"datasets": list(pair), "match": dict(stab.get("match") or {})}
    paper = _paper(section.get("paper"), columns, groups)
    return {"columns": columns, "stability": stab, "paper": paper}


def _paper(
    spec: Mapping[str, Any] | None, columns: list[dict[str, Any]], groups: Mapping[str, Any]
) -> dict[str, Any] | None:
    """``analysis.diversity.paper`` checked: the paper table (``resources/papers/<table>.csv``),
    our datasets → the paper's (CNN/DM, XSUM), our column labels → the paper's columns."""
    if spec is None:
        return None
    from genmetrics.studies.shaib_diversity.side_by_side import PAPER_COLUMNS, PAPER_TABLES

    key = f"{KEY}.paper"
    datasets = dict(spec["datasets"])
    for ours, theirs in datasets.items():
        resolve_names([ours], groups, f"{key}.datasets")
        if theirs not in PAPER_TABLES:
            raise GenmetricsError(
                f"{key}.datasets.{ours}: {theirs!r} is not a dataset of the paper's tables "
                f"{list(PAPER_TABLES)}"
            )
    labels = [c["label"] for c in columns]
    cols = dict(spec["columns"])
    for ours, theirs in cols.items():
        if ours not in labels:
            raise GenmetricsError(f"{key}.columns: {ours!r} is not a column ({labels})")
        if theirs not in PAPER_COLUMNS:
            raise GenmetricsError(
                f"{key}.columns.{ours}: {theirs!r} is not a column of the paper's tables "
                f"{list(PAPER_COLUMNS)}"
            )
    table = spec["table"]
    return {
        "table": table,
        "path": f"resources/papers/{table}.csv",
        "datasets": datasets,
        "columns": cols,
    }


def _twin(e: ScoreEntry, entries: Mapping[str, ScoreEntry]) -> str | None:
    """The entry that is ``e`` with length control, if the config has one (the first)."""
    for name, other in entries.items():
        if (
            other.length_control != "none"
            and other.metric == e.metric
            and other.params == e.params
            and other.reference == e.reference
            and other.datasets == e.datasets
        ):
            return name
    return None
