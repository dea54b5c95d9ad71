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
  range where seeds differ);
* **intervals** (:data:`INTERVAL_COLUMNS`): ``lower`` and ``upper`` at ``level`` from
  ``resamples`` replicates, ``scheme``, how the score job drew its prompts
  (:data:`genmetrics.scoring.intervals.SCHEMES`: ``half`` or ``replacement``), and ``interval``,
  what they are over: :data:`OVER_PROMPTS` (a score of one seed: its prompts resampled in
  the score job, :mod:`genmetrics.scoring.intervals`), :data:`OVER_SEEDS` (a summary over seeds: per
  replicate the mean over seeds drawn with replacement,
  :func:`genmetrics.analysis.statistics.seed_bootstrap`), or why there is none ("not
  computed: …", also where the bounds would not hold the value they are shown with); empty
  for a record without an interval (``genmetrics score``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

#: the scale of ``mean_words`` (the mean length in words every text score carries)
MEAN_WORDS_SCALE = "words"
#: the columns of the text sizes, in every score table
SIZE_COLUMNS = ["n_candidate", "n_reference"]
#: how a score record's warnings are joined in one cell of the tables' ``warnings`` column
WARNING_SEPARATOR = " | "
#: the interval columns, after the sizes (see the module conventions)
INTERVAL_COLUMNS = ["lower", "upper", "level", "resamples", "scheme", "interval"]
#: what ``interval`` says of an interval over one seed's prompts, and over prompts and seeds
OVER_PROMPTS, OVER_SEEDS = "prompts", "prompts, seeds"
#: a row of the tidy table (:func:`row_key`) → its replicates over prompts and the seed of
#: their draws (:func:`genmetrics.analysis.aggregate.collect_scores` collects them)
Replicates = dict[tuple, tuple[np.ndarray, int]]
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


#: how each resampling scheme of the score job draws the prompts, for the legends
SCHEME_TEXT = {
    "half": "each half of the prompts without replacement, recentred on the score",
    "replacement": "all the prompts drawn with replacement",
}


def interval_legend(
    levels: Iterable[Any], resamples: Iterable[Any], schemes: Iterable[Any] = ("half",)
) -> str:
    """What ``[lower, upper]`` in a table is, with the levels, resamples and schemes it holds
    ("" for a table without intervals; a table read back without ``scheme``: ``half``, the
    one scheme before there was a choice)."""
    lv = sorted({float(x) for x in levels if not pd.isna(x)})
    bs = sorted({int(x) for x in resamples if not pd.isna(x)})
    sc = [s for s in SCHEME_TEXT if s in {x for x in schemes if isinstance(x, str)}] or ["half"]
    if not lv:
        return ""
    level = " or ".join(f"{x:.0%}" for x in lv)
    how = "; or ".join(f"{SCHEME_TEXT[s]} (scheme {s})" for s in sc)
    return (
        f"[lower, upper]: the {level} interval of the value from {'/'.join(map(str, bs))} "
        f"resamples of its prompts in the score job ({how}; genmetrics.scoring.intervals) and, over "
        "several seeds, per resample the mean over seeds drawn with replacement; the "
        "percentile interval."
    )


def row_key(row: Mapping[str, Any]) -> tuple:
    """A row of the tidy table as a key of :data:`Replicates`."""
    seed = row["seed"]
    seed = None if seed is None or pd.isna(seed) else int(seed)
    ref = row["reference"]
    ref = "" if ref is None or (isinstance(ref, float) and pd.isna(ref)) else ref
    return (row["dataset"], row["model"], seed, ref, row["metric"], row["entry"], row["name"])


def seed_intervals(df: pd.DataFrame, replicates: Replicates | None = None) -> pd.DataFrame:
    """Per (dataset, model, reference, metric, entry, name) the interval of the mean over
    seeds (on the metric's own scale): where every seed has replicates over prompts, the
    hierarchical one (:func:`genmetrics.analysis.statistics.seed_bootstrap`, seeded by the
    records' draws; ``interval`` :data:`OVER_SEEDS`, or :data:`OVER_PROMPTS` for one seed);
    one seed without replicates (a table read back), its own bounds; a seed without an
    interval, none, with its reason."""
    from genmetrics.analysis.statistics import seed_bootstrap

    keys = ["dataset", "model", "reference", "metric", "entry", "name"]
    d = df.assign(reference=df["reference"].astype(object).fillna(""))
    for c in INTERVAL_COLUMNS:  # a table without intervals: none anywhere
        d[c] = d[c] if c in d.columns else np.nan
    rows = []
    for key, g in d.groupby(keys, sort=True, dropna=False):
        row = dict(zip(keys, key, strict=True))
        labels = g["interval"].tolist()
        reasons = [x for x in labels if isinstance(x, str) and x != OVER_PROMPTS]
        reps = [(replicates or {}).get(row_key(r)) for r in g.to_dict("records")]
        lengths = {len(r[0]) for r in reps if r is not None}
        schemes = sorted({x for x in g["scheme"] if isinstance(x, str)})
        if reasons or any(x != OVER_PROMPTS for x in labels):  # none, or not on every seed
            rows.append(row | {"interval": reasons[0] if reasons else None})
        elif len(schemes) > 1:
            why = f"not computed: the seeds' intervals drew their prompts by {schemes}"
            rows.append(row | {"interval": why})
        elif all(r is not None for r in reps) and len(lengths) == 1:
            _, low, high = seed_bootstrap(np.vstack([r[0] for r in reps]), *_draw(g, reps))
            over = OVER_SEEDS if len(g) > 1 else OVER_PROMPTS
            rows.append(row | {"lower": low, "upper": high, "interval": over})
            rows[-1] |= {"level": g["level"].iloc[0], "resamples": lengths.pop()}
            rows[-1] |= {"scheme": schemes[0] if schemes else None}
            rows[-1] = _holds(rows[-1], float(g["value"].astype(float).mean()))
        elif len(g) == 1:
            one = g.iloc[0]
            rows.append(_holds(row | one[INTERVAL_COLUMNS].to_dict(), float(one["value"])))
        else:
            why = "not computed: the seeds' replicates over prompts are not at hand"
            rows.append(row | {"interval": why})
    out = pd.DataFrame(rows, columns=keys + INTERVAL_COLUMNS)
    out["resamples"] = out["resamples"].astype("Int64")
    for c in ("lower", "upper", "level"):
        out[c] = out[c].astype(float)
    return out


def _holds(row: dict[str, Any], value: float) -> dict[str, Any]:
    """``row`` as it is where its bounds hold ``value`` (what the tables show with them) or it
    has no interval, else without bounds and with the reason."""
    if row.get("interval") not in (OVER_PROMPTS, OVER_SEEDS):
        return row  # no interval, and its reason already
    low, high = row.get("lower"), row.get("upper")
    if pd.isna(low) or pd.isna(high):
        why = "not computed: no replicate gave a number"
    elif pd.isna(value) or low <= value <= high:
        return row
    else:
        why = (
            f"not computed: the value {value:.6g} lies outside the percentile interval "
            f"[{low:.6g}, {high:.6g}] of its replicates"
        )
    return row | {"lower": np.nan, "upper": np.nan, "interval": why}


def summary_intervals(summary: pd.DataFrame) -> pd.DataFrame:
    """The intervals of ``scores_summary.csv`` read back as :func:`seed_intervals` gave them:
    the bounds on the metric's own scale again (the summary shows them on the tables')."""
    keys = ["dataset", "model", "reference", "metric", "entry", "name"]
    if not set(keys + INTERVAL_COLUMNS) <= set(summary.columns):  # a summary without them
        return pd.DataFrame(columns=keys + INTERVAL_COLUMNS)
    out = summary[keys + INTERVAL_COLUMNS].copy()
    out["reference"] = out["reference"].fillna("")
    pairs = list(zip(out["metric"], out["name"], strict=True))
    factor = [table_scale(m, n)[1] for m, n in pairs]
    for c in ("lower", "upper"):
        out[c] = out[c].astype(float) / factor
    out["resamples"] = out["resamples"].astype("Int64")
    return out


def _draw(g: pd.DataFrame, reps: list) -> tuple[float, int]:
    """The level of a group's intervals and the seed of its draws over seeds (the records'
    seed of their draws over prompts: every group draws the same seeds in replicate b)."""
    return float(g["level"].iloc[0]), min(r[1] for r in reps)
