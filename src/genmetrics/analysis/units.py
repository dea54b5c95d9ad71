"""What every score table says beside a value: its scale, in the tables' one convention, and
the number of texts it was computed on.

Conventions, shared by ``results/scores.csv``, ``scores_summary.csv``, the headline table
(``scores_headline.{csv,md}``) and ``spread.csv``:

* **scale**: a value's scale is its metric's registration
  (:meth:`genmetrics.metrics.registry.Metric.scale`; ``mean_words``, which every text score
  carries, is in :data:`MEAN_WORDS_SCALE`). The tidy ``scores.csv`` keeps each metric's own
  numbers (as in its score record and its paper: SimCTG's rep-n in %, sacreBLEU 0–100) with
  that scale in a ``scale`` column; every table derived from it shows a proportion 0–1
  (:data:`genmetrics.metrics.registry.TABLE_SCALES`: ``%`` and ``0–100`` divided by 100), its
  ``scale`` column or header saying so. A value of an unregistered metric has no scale and is
  shown as it is;
* **sizes**: ``n_candidate`` = the texts a value was computed on: the record's
  ``n.candidate`` less ``n.excluded`` (texts a per-text metric could not score);
  ``n_reference`` = the reference texts they were compared with (the record's
  ``n.reference``, after pairing; the prompts for a metric against prompts), empty for a
  metric without a reference. Over seeds, a table gives the fewest (:func:`size_text` the
  range where seeds differ).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

#: the scale of ``mean_words`` (the mean length in words every text score carries)
MEAN_WORDS_SCALE = "words"
#: the columns of the text sizes, in every score table
SIZE_COLUMNS = ["n_candidate", "n_reference"]
#: the tables' scale convention, stated once per table (legends, captions)
CONVENTION = (
    "Proportions read 0–1 in every table: values a metric reports in % (SimCTG's rep-n) or "
    "0–100 (sacreBLEU) are divided by 100 here; scores.csv keeps each metric's own numbers "
    "(as its score records), with their scale in its scale column."
)


def registered_scale(metric: str, name: str) -> str | None:
    """The scale ``metric`` registers for its value ``name`` (None: unregistered or unstated)."""
    from genmetrics.metrics import all_metrics

    if name == "mean_words":
        return MEAN_WORDS_SCALE
    m = all_metrics().get(metric)
    return m.scale(name) if m is not None else None


def table_scale(metric: str, name: str) -> tuple[str | None, float]:
    """(the scale the tables show ``metric``'s value ``name`` on, the factor from its own
    numbers): :meth:`~genmetrics.metrics.registry.Metric.table_scale`."""
    from genmetrics.metrics import all_metrics

    if name == "mean_words":
        return MEAN_WORDS_SCALE, 1.0
    m = all_metrics().get(metric)
    return m.table_scale(name) if m is not None else (None, 1.0)


def on_table_scale(
    df: pd.DataFrame, columns: Sequence[str], name: str = "name"
) -> tuple[pd.DataFrame, list[tuple[str, str]]]:
    """``df`` with ``columns`` (means, stds) on the tables' scale and a ``scale`` column; also
    the (metric, value) pairs divided (their registered scale was not the table's)."""
    pairs = list(zip(df["metric"], df[name], strict=True))
    info = {p: table_scale(*p) for p in dict.fromkeys(pairs)}
    out = df.copy()
    factor = [info[p][1] for p in pairs]
    for c in columns:
        out[c] = out[c].astype(float) * factor
    out["scale"] = [info[p][0] for p in pairs]
    converted = [p for p, (_, f) in info.items() if f != 1.0]
    return out, converted


def sizes(n: Mapping[str, Any] | None) -> tuple[int | None, int | None]:
    """(n_candidate, n_reference) of a score record's ``n`` (see the module conventions)."""
    n = n or {}
    cand = n.get("candidate")
    cand = None if cand is None else int(cand) - int(n.get("excluded", 0) or 0)
    ref = n.get("reference")
    return cand, None if ref is None else int(ref)


def size_text(values: Iterable[Any]) -> str | None:
    """``160``, or ``150–160`` where the sizes differ (seeds); None without a size."""
    vals = [int(v) for v in values if not pd.isna(v)]
    if not vals:
        return None
    lo, hi = min(vals), max(vals)
    return str(lo) if lo == hi else f"{lo}–{hi}"


def converted_text(converted: Iterable[tuple[str, str]]) -> str:
    """``rep_n: rep_2, bleu`` — the values divided by 100, for a legend ("" for none)."""
    return ", ".join(m if m == v else f"{m}: {v}" for m, v in sorted(set(converted)))
