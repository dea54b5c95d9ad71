"""What a person reads of a ``genmetrics score`` record: a few lines for stderr and an
aligned table, both from the record and the metric's registered facts.

A value's direction is the registry's (:meth:`genmetrics.metrics.registry.Metric.better`):
``↑`` higher is better, ``↓`` lower is better, or "closer to the references" where the
references have a value of the same score that is best (perplexity: a perplexity below the
human texts' is not better); no direction, no mark. Numbers are shown to 4 significant
digits; the record keeps them whole.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from genmetrics.metrics.registry import CLOSER, HIGHER, LOWER, Metric

#: how each direction reads after a value
BETTER = {
    HIGHER: "↑ higher is better",
    LOWER: "↓ lower is better",
    CLOSER: "closer to the references is better",
}
#: the options naming a model that made an input's features (the record's ``inputs``)
MODEL_OPTIONS = ("featurizer", "evaluator")
ROLES = ("candidate", "reference")


def number(x: Any) -> str:
    """A value as people read it: 4 significant digits, ``—`` for none (``null``)."""
    if x is None:
        return "—"
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return str(x)
    return f"{x:.4g}"


def interval_text(rec: Mapping[str, Any], value: str) -> str:
    """``[95% interval 0.91–0.95]`` for ``value`` where the record has an interval."""
    iv = rec.get("interval")
    if not isinstance(iv, Mapping) or "lower" not in iv:
        return ""
    lo, hi = (iv.get(k, {}).get(value) for k in ("lower", "upper"))
    if lo is None or hi is None:
        return ""
    return f"[{float(iv.get('level', 0.95)):.0%} interval {number(lo)}–{number(hi)}]"


def models_used(rec: Mapping[str, Any]) -> list[str]:
    """Per model that made the inputs' features: ``featurizer minilm`` with how many texts it
    computed and read from the cache, or an evaluator of stored values and where it is
    named; one entry per model (both sides share one)."""
    seen: dict[str, dict[str, int | str]] = {}
    for role in ROLES:
        info = (rec.get("inputs") or {}).get(role) or {}
        for option in MODEL_OPTIONS:
            m = info.get(option)
            if not isinstance(m, Mapping):
                continue
            key = f"{option} {m.get('name') or '?'}"
            tally = seen.setdefault(key, {"computed": 0, "from_cache": 0, "stored": ""})
            if "named_by" in m:  # stored per-token values
                tally["stored"] = str(m["named_by"])
            for k in ("computed", "from_cache"):
                tally[k] = int(tally[k]) + int(m.get(k) or 0)
    out = []
    for key, t in seen.items():
        if t["stored"]:
            out.append(f"{key} (stored per-token values; the name from {t['stored']})")
        elif t["computed"] or t["from_cache"]:
            out.append(f"{key} ({t['computed']} texts computed, {t['from_cache']} from the cache)")
        else:
            out.append(key)
    return out


def sides(rec: Mapping[str, Any]) -> str:
    """``n: 60 candidate (gens.jsonl), 60 reference (refs.jsonl)``."""
    n = rec.get("n") or {}
    parts = []
    for role in ROLES:
        if role in n:
            path = ((rec.get("inputs") or {}).get(role) or {}).get("path")
            parts.append(f"{n[role]} {role}" + (f" ({path})" if path else ""))
    return "n: " + ", ".join(parts)


def truncation_text(rec: Mapping[str, Any]) -> list[str]:
    """The record's truncation lines (its ``warnings`` hold them); ``texts truncated: none``
    where a model read the texts and cut none."""
    lines = [w for w in rec.get("warnings") or [] if w.startswith("texts truncated")]
    if lines or not rec.get("truncation"):
        return lines
    return ["texts truncated: none"]


def summary_lines(rec: Mapping[str, Any], metric: Metric) -> list[str]:
    """The short summary of a score for stderr: each headline value with its direction and
    interval, n per side, the featurizer or evaluator, texts truncated, the other warnings,
    the wall time. Values without a headline are in the record (or ``--format table``)."""
    values = rec.get("values") or {}
    heads = [v for v in metric.headline if v in values] or [
        v for v in values if metric.better(v) is not None
    ][:1]
    lines = []
    for v in heads:
        better = BETTER.get(metric.better(v) or "", "")
        scale = metric.scale(v)
        said = ", ".join(x for x in (scale, better) if x)
        line = f"{metric.name}: {v} = {number(values[v])}" + (f"  ({said})" if said else "")
        lines.append(" ".join(x for x in (line, interval_text(rec, v)) if x))
        if metric.better(v) == CLOSER and metric.reference == "none":
            lines.append(f"  score the references the same way and compare their {v}")
    lines.append("  " + sides(rec))
    lines += [f"  {m}" for m in models_used(rec)]
    lines += [f"  {t}" for t in truncation_text(rec)]
    lines += [
        f"  warning: {w}" for w in rec.get("warnings") or [] if not w.startswith("texts truncated")
    ]
    if "wall_seconds" in rec:
        lines.append(
            f"  took {rec['wall_seconds']:.1f} s (the metric itself {number(rec.get('seconds'))} "
            "s); every value is in the record"
        )
    return lines


def table(rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows of cells, each column padded to its widest cell (left-aligned)."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def score_table(rec: Mapping[str, Any], metric: Metric) -> str:
    """``--format table``: every value of the record (headline first) with its direction,
    scale and interval, then n, the models, truncation, warnings and the times."""
    values = rec.get("values") or {}
    order = [v for v in metric.headline if v in values] + [
        v for v in values if v not in metric.headline
    ]
    marks = {HIGHER: "↑", LOWER: "↓", CLOSER: "closer to refs"}
    has_interval = any(interval_text(rec, v) for v in order)
    head = ["value", "", "better", "scale"] + (["interval"] if has_interval else [])
    rows = [head]
    for v in order:
        row = [v, number(values[v]), marks.get(metric.better(v) or "", ""), metric.scale(v) or ""]
        rows.append(row + ([interval_text(rec, v).strip("[]")] if has_interval else []))
    lines = [f"{metric.name}", *table(rows), ""]
    lines.append(sides(rec))
    lines += models_used(rec) + truncation_text(rec)
    lines += [f"warning: {w}" for w in rec.get("warnings") or [] if not w.startswith("texts tr")]
    if rec.get("params"):
        lines.append("params: " + ", ".join(f"{k}={v}" for k, v in rec["params"].items()))
    wall = rec.get("wall_seconds")
    lines.append(
        f"seconds: {number(rec.get('seconds'))} (the metric)"
        + (f", {wall:.1f} (the whole command)" if wall is not None else "")
    )
    return "\n".join(lines)
