"""The headline score table a person reads: one row per (dataset, model), one column per entry.

Built from the tidy ``results/scores.csv`` (:data:`genmetrics.analysis.aggregate.COLUMNS`).
Everything it says of a metric is read from its registration
(:mod:`genmetrics.metrics.registry`); conventions:

* the *headline values* of a metric entry are its metric's registered ``headline`` (a value
  with a direction of better, or a pair such as kNN precision and recall); ``mean_words`` and
  values without a direction (lengths, counts, ``*_std``) never are, and a metric without a
  headline (Zipf) has no column; :func:`headline_rows` keeps those rows (the correlation
  heatmap draws the same values);
* a metric that is not registered (e.g. scores of a metric since removed) keeps every value but
  ``mean_words``, under the family :data:`OTHER`, without a direction (no arrow) nor a scale:
  nothing says which of its values is the headline nor which way is better;
* families come in the registry's order (:data:`FAMILIES`, :data:`OTHER` last); within a
  family, columns follow the metric name, then the entry name, then the headline's order;
* a column is headed ``entry ↑ (scale)`` (↑ higher is better, ↓ lower, :data:`CLOSER_MARK`
  closer to the human texts' value is better: :func:`closer_to_references`; the scale is the
  value's range or unit, :data:`genmetrics.metrics.registry.SCALES`, on the tables' one
  convention: a proportion reads 0–1, so rep-n's % and BLEU's 0–100 are divided by 100,
  :mod:`genmetrics.analysis.units`), with the value name
  (``precision_recall: precision ↑ (0–1)``) unless it is the entry's name or the metric's
  only directed value (``pos_compression_ratio ↓ (≥ 0)``);
* a cell is the mean over seeds, written ``mean ± std`` (ddof=1) where ≥ 2 seeds have a value;
  the human texts (model :data:`REFERENCES`, no seed) are a row, last within their dataset, with
  cells only for the entries they were scored on (none: no row);
* the texts a value was computed on (:mod:`genmetrics.analysis.units`): in the long form the
  columns ``n_candidate`` and ``n_reference`` (the fewest over seeds); in the wide table each
  family opens with the columns :data:`N_TEXTS` and :data:`N_REFERENCES` (the latter only
  where a value of the family has a reference), the sizes most of the row's values share
  (``150–160`` where seeds differ), and a cell computed on other sizes says so in brackets
  (``0.93 [n 150 / 160]``); a value without a reference has no reference size.

* a value whose records warn (``scores.csv``'s ``warnings``: zero k-NN radii, identical
  histograms, a rank-deficient covariance, a value not finite), or for which more than
  :data:`TRUNCATED_FLAG` of a set's texts was truncated (``truncated``), has those lines in
  the long form's ``warnings`` and its cell marked :data:`WARNING_MARK`, the lines listed
  under its family's table (:func:`warning_lines`).

* a column is *saturated* (:func:`saturated_bound`) where every model's value (its mean over
  seeds, the human texts' row left out) lies within :data:`SATURATION_TOLERANCE` of the same
  bound of a two-sided scale (:data:`BOUNDED_SCALES`, on the tables' scale): it cannot tell
  the models apart there. Each model's value of it carries the line in ``warnings`` (its cell
  marked), and the lines under the table name the column once.

* :func:`headline_scores` — the long form: mean, std, number of seeds and text sizes per
  (dataset, model, entry) headline value (``results/scores_headline.csv``, columns
  :data:`LONG_COLUMNS`);
* :func:`headline_table` — the readable wide table (string cells, two-level columns: family,
  header; ``attrs["scales"]``: the scales its headers show, ``attrs["converted"]``: the
  (metric, value) pairs divided by 100);
* :func:`headline_markdown` — that table as markdown, one table per family, with a legend
  (``results/scores_headline.md``).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import pandas as pd

from genmetrics.analysis.units import (
    CONVENTION,
    INTERVAL_COLUMNS,
    SIZE_COLUMNS,
    WARNING_SEPARATOR,
    converted_text,
    interval_legend,
    on_table_scale,
    seed_intervals,
    size_text,
)
from genmetrics.metrics.registry import CLOSER, FAMILIES, OTHER, SCALES, Metric
from genmetrics.paths import REFERENCES

CLOSER_MARK = "≈"
ARROWS = {"higher": "↑", "lower": "↓", CLOSER: CLOSER_MARK}
#: a column is saturated where every model lies within this distance of one bound of its scale
SATURATION_TOLERANCE = 0.01
#: the two-sided scales, on the tables' scale (a proportion reads 0–1), and their bounds
BOUNDED_SCALES = {"0–1": (0.0, 1.0), "−1–1": (-1.0, 1.0)}
_SATURATED_PREFIX = "saturated:"
LONG_COLUMNS = [
    "dataset",
    "model",
    "family",
    "entry",
    "metric",
    "value_name",
    "direction",
    "scale",
    "mean",
    "std",
    "n_seeds",
    *SIZE_COLUMNS,
    *INTERVAL_COLUMNS,
    "truncated",
    "warnings",
]
#: an entry is flagged where more than this share of a role's texts (candidate or reference,
#: any seed) was truncated by a model's maximum length (``scores.csv``'s ``truncated``)
TRUNCATED_FLAG = 0.05
#: what marks a cell of the wide table whose value comes with warnings
WARNING_MARK = "⚠"
#: the warnings of a record about truncation (counted by share instead: :data:`TRUNCATED_FLAG`)
_TRUNCATION_PREFIX = "texts truncated:"
#: the wide table's size columns (each family's first)
N_TEXTS, N_REFERENCES = "n texts", "n references"
#: the legend of the headline tables, one short item each (:func:`legend_items`)
LEGEND_ITEMS = (
    "↑ higher is better; ↓ lower is better; "
    f"{CLOSER_MARK} closer to the human texts' value is better (perplexity and other "
    "likelihoods of one set of texts: the human row is the target, not a floor).",
    "(…) after a name: the value's range or unit.",
    "A cell: the mean over seeds, then its interval [lower, upper] where it has one, else "
    "± std over seeds (ddof=1); one seed or the human texts: the value alone; – not scored.",
    f"{WARNING_MARK}: the value comes with warnings, listed under its table (a degenerate "
    "number, more than "
    f"{TRUNCATED_FLAG:.0%} of its texts truncated, or a saturated column: every model within "
    f"{SATURATION_TOLERANCE} of a bound of its scale).",
)
LEGEND = " ".join(LEGEND_ITEMS)
SIZES_LEGEND = (
    f"{N_TEXTS}: the texts each value was computed on (per seed, the fewest over seeds); "
    f"{N_REFERENCES}: the texts they were compared with (none without a reference); a value "
    "on other sizes than its row gives them in brackets [n texts / references]."
)


@dataclass(frozen=True)
class _Info:
    """What the registry says of one metric name (see the module conventions)."""

    family: str
    order: tuple  # sort key of the metric among the columns
    headlines: dict[str, str]  # headline value(s) → direction; empty: none (all, if unregistered)
    registered: bool
    single: bool = False  # the headline is the metric's only directed value
    closer: bool = False  # its best is the human texts' value (closer_to_references)


def closer_to_references(metric: Metric) -> bool:
    """Whether a metric's headline reads "closer to the human texts is better": a headline value
    registered in ``closer_to_references`` (:meth:`genmetrics.metrics.registry.Metric.better`;
    perplexity). Human texts are not the least perplexing texts (a model that repeats itself
    scores lower), so its registered ``lower`` is a direction of the number, not of quality."""
    return any(metric.better(v) == CLOSER for v in metric.headline)


def _metric_info(metric: str) -> _Info:
    from genmetrics.metrics import all_metrics

    known = all_metrics()
    if metric not in known:
        return _Info(OTHER, (FAMILIES.index(OTHER), metric), {}, registered=False)
    m = known[metric]
    directed = [v for v, d in m.values.items() if d is not None]
    heads = {v: m.values[v] for v in m.headline}
    order = (FAMILIES.index(m.family), metric)
    closer = closer_to_references(m)
    if closer:
        heads = dict.fromkeys(heads, CLOSER)
    return _Info(m.family, order, heads, True, single=len(directed) == 1, closer=closer)


def _is_headline(info: _Info, name: str) -> bool:
    return name != "mean_words" and (name in info.headlines or not info.registered)


def is_headline(metric: str, name: str) -> bool:
    """Whether ``metric``'s value ``name`` is a column of the headline table."""
    return _is_headline(_metric_info(metric), name)


def headline_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of the tidy table that hold a headline value (see the module conventions)."""
    info = {m: _metric_info(m) for m in df["metric"].unique()}
    keep = [_is_headline(info[m], n) for m, n in zip(df["metric"], df["name"], strict=True)]
    return df[keep]


def headline_scores(df: pd.DataFrame, intervals: pd.DataFrame | None = None) -> pd.DataFrame:
    """The long form: one row per (dataset, model, entry, headline value) — see the module
    conventions — with the mean and std (ddof=1, NaN below 2 seeds) on the tables' scale, the
    number of seeds with a value, the fewest texts a seed's value was computed on and the
    interval over prompts and seeds (``intervals``:
    :func:`~genmetrics.analysis.units.seed_intervals`); sorted by dataset, model (references
    last), then in column order."""
    return _long(df, intervals)[LONG_COLUMNS]


#: the wide table's extra long columns: the most texts over seeds (its ranges), and whether
#: the value was scored against a reference
_EXTRA = [f"{c}_max" for c in SIZE_COLUMNS] + ["referenced"]


def _long(df: pd.DataFrame, intervals: pd.DataFrame | None = None) -> pd.DataFrame:
    """:func:`headline_scores` with the columns :data:`_EXTRA` too and ``attrs["converted"]``:
    the (metric, value) pairs divided to the tables' scale."""
    info = {m: _metric_info(m) for m in df["metric"].unique()}
    d = headline_rows(df)
    if d.empty:
        return pd.DataFrame(columns=LONG_COLUMNS + _EXTRA)
    d = d.copy()
    for c in SIZE_COLUMNS:
        d[c] = pd.to_numeric(d[c], errors="coerce") if c in d.columns else float("nan")
    keys = ["dataset", "model", "entry", "metric", "name"]
    g = d.groupby(keys, sort=False)
    out = g["value"].agg(mean="mean", std="std", n_seeds="count")
    out["referenced"] = g["reference"].agg(lambda r: bool(r.notna().any()))
    sizes = g[SIZE_COLUMNS].agg(["min", "max"])
    for c, m in zip(SIZE_COLUMNS, _EXTRA[:2], strict=True):
        out[c] = sizes[(c, "min")].round().astype("Int64")
        out[m] = sizes[(c, "max")].round().astype("Int64")
    out["truncated"] = g["truncated"].max() if "truncated" in d.columns else float("nan")
    out["warnings"] = g["warnings"].agg(_warnings) if "warnings" in d.columns else None
    out["warnings"] = [
        _flagged(w, t) for w, t in zip(out["warnings"], out["truncated"], strict=True)
    ]
    out = out.reset_index()
    iv = seed_intervals(d) if intervals is None else intervals
    iv = iv.drop(columns="reference").drop_duplicates(keys)
    out = out.merge(iv, on=keys, how="left")
    out, converted = on_table_scale(out, ["mean", "std", "lower", "upper"])
    out = out.rename(columns={"name": "value_name"})
    out["family"] = [info[m].family for m in out["metric"]]
    pairs = list(zip(out["metric"], out["value_name"], strict=True))
    out["direction"] = [info[m].headlines.get(v) for m, v in pairs]
    sort_key = [
        (ds, model == REFERENCES, model, info[m].order, e, _position(info[m], v))
        for ds, model, m, e, v in zip(
            out["dataset"],
            out["model"],
            out["metric"],
            out["entry"],
            out["value_name"],
            strict=True,
        )
    ]
    order = sorted(range(len(out)), key=sort_key.__getitem__)
    out = out.iloc[order].reset_index(drop=True)[LONG_COLUMNS + _EXTRA]
    out["warnings"] = _with_saturation(out)
    out.attrs["converted"] = converted
    return out


def _warnings(cells: pd.Series) -> list[str]:
    """The distinct warnings of a value's rows (``scores.csv`` cells joined by
    :data:`~genmetrics.analysis.units.WARNING_SEPARATOR`), in order, the truncation
    lines left out (:func:`_flagged` counts truncation by its share)."""
    out: dict[str, None] = {}
    for c in cells:
        if isinstance(c, str) and c:
            for line in c.split(WARNING_SEPARATOR):
                if not line.startswith(_TRUNCATION_PREFIX):
                    out[line] = None
    return list(out)


def _flagged(warnings: list[str] | None, truncated: float) -> str | None:
    """The headline's warnings of a value: its record's (:func:`_warnings`) and, where more
    than :data:`TRUNCATED_FLAG` of a role's texts was truncated, that share; None: none."""
    lines = list(warnings or [])
    if isinstance(truncated, float) and truncated > TRUNCATED_FLAG:
        lines.append(
            f"{_TRUNCATION_PREFIX} {truncated:.0%} of the texts of a set cut at a model's "
            f"maximum length (flagged above {TRUNCATED_FLAG:.0%})"
        )
    return WARNING_SEPARATOR.join(lines) or None


def saturated_bound(
    values, scale: str | None, tolerance: float = SATURATION_TOLERANCE
) -> float | None:
    """The bound of ``scale`` (:data:`BOUNDED_SCALES`) that every finite value lies within
    ``tolerance`` of; None: none does, the scale is not two-sided, or no value is finite."""
    bounds = BOUNDED_SCALES.get(scale or "")
    v = [float(x) for x in values if x is not None and math.isfinite(float(x))]
    if not bounds or not v:
        return None
    for b in bounds:
        if all(abs(x - b) <= tolerance + 1e-12 for x in v):
            return b
    return None


def saturation_line(bound: float, scale: str, tolerance: float = SATURATION_TOLERANCE) -> str:
    """The warning of a saturated column (:func:`saturated_bound`)."""
    return (
        f"{_SATURATED_PREFIX} every model within {tolerance:g} of {bound:g}, the bound of its "
        f"scale ({scale}): this value cannot tell the models apart here"
    )


def _with_saturation(out: pd.DataFrame) -> list[str | None]:
    """The long form's ``warnings`` with :func:`saturation_line` added to every model's value
    of a saturated (dataset, entry, value) (the human texts' row is not a model)."""
    # a value with no warning may be None or NaN (a CSV's empty cell)
    warnings = [w if isinstance(w, str) and w else None for w in out["warnings"]]
    position = {label: k for k, label in enumerate(out.index)}
    models = out["model"] != REFERENCES
    for _, g in out[models].groupby(["dataset", "entry", "value_name"], sort=False):
        scale = g["scale"].iloc[0]
        bound = saturated_bound(g["mean"], scale)
        if bound is None:
            continue
        for label in g.index:
            k = position[label]
            lines = [w for w in (warnings[k] or "").split(WARNING_SEPARATOR) if w]
            warnings[k] = WARNING_SEPARATOR.join([*lines, saturation_line(bound, scale)])
    return warnings


def _position(info: _Info, value: str) -> tuple:
    """Sort key of a value within its entry: the headline's order (unregistered: by name)."""
    heads = list(info.headlines)
    return (heads.index(value), "") if value in heads else (len(heads), value)


def header(
    entry: str,
    value_name: str,
    direction: str | None,
    named: bool = True,
    scale: str | None = None,
) -> str:
    """``entry: value ↑ (scale)``; ``entry ↑ (scale)`` when not ``named`` or the value is
    named as the entry; no arrow without a direction, no parentheses without a scale."""
    name = f"{entry}: {value_name}" if named and value_name != entry else entry
    arrow = ARROWS.get(direction or "")
    out = f"{name} {arrow}" if arrow else name
    return f"{out} ({scale})" if isinstance(scale, str) and scale else out


def legend_items(table: pd.DataFrame) -> list[str]:
    """The legend of :func:`headline_table`'s ``table``, one short item each:
    :data:`LEGEND_ITEMS`, the scales it shows (the tables' convention,
    :data:`genmetrics.analysis.units.CONVENTION`, naming the values divided), the sizes
    (:data:`SIZES_LEGEND`) and how its intervals are computed (which entries have none, and
    why)."""
    items = list(LEGEND_ITEMS)
    scales = table.attrs.get("scales", [])
    scale_text = "; ".join(f"({s}) {SCALES[s]}" for s in scales)
    scale_text = f"Scales: {scale_text}. " if scale_text else ""
    converted = converted_text(table.attrs.get("converted", []))
    items.append(
        f"{scale_text}{CONVENTION}"
        + (f" Divided by 100 in this table: {converted}." if converted else "")
    )
    items.append(SIZES_LEGEND)
    iv = table.attrs.get("intervals", {})
    legend = interval_legend(
        iv.get("levels", []), iv.get("resamples", []), iv.get("schemes", ["half"])
    )
    none = "; ".join(f"{e} ({why})" for e, why in sorted(iv.get("none", {}).items()))
    if legend or none:
        items.append(legend + (f" Without an interval: {none}." if none else ""))
    return [i.strip() for i in items]


def table_legend(table: pd.DataFrame) -> str:
    """:func:`legend_items` as one paragraph."""
    return " ".join(legend_items(table))


def cell(
    mean: float,
    std: float,
    n_seeds: int,
    lower: float = math.nan,
    upper: float = math.nan,
) -> str | None:
    """``mean`` (4 significant digits) with its interval ``mean [lower, upper]`` (3) where it
    has one, else ``mean ± std`` (2) with ≥ 2 seeds; None: no value."""
    if n_seeds < 1 or math.isnan(mean):
        return None
    if not (math.isnan(lower) or math.isnan(upper)):
        return f"{mean:.4g} [{lower:.3g}, {upper:.3g}]"
    if n_seeds >= 2 and not math.isnan(std):
        return f"{mean:.4g} ± {std:.2g}"
    return f"{mean:.4g}"


def headline_table(df: pd.DataFrame, intervals: pd.DataFrame | None = None) -> pd.DataFrame:
    """The readable table from the tidy scores: index (dataset, model), columns (family,
    header), string cells (``mean [lower, upper]``, else ``mean ± std``; each family's first
    columns the text sizes, see the module conventions), NaN (never None) where a source was
    not scored on an entry; ``attrs["intervals"]``: the levels and resamples of its
    intervals, and each entry without one with the reason (``intervals``:
    :func:`~genmetrics.analysis.units.seed_intervals`)."""
    long = _long(df, intervals)
    if long.empty:
        return pd.DataFrame(
            index=pd.MultiIndex.from_arrays([[], []], names=["dataset", "model"]),
            columns=pd.MultiIndex.from_arrays([[], []], names=["family", "score"]),
            dtype=object,
        )
    info = {m: _metric_info(m) for m in long["metric"].unique()}
    rows, columns, cells, sizes, warned, saturated = {}, {}, {}, {}, {}, {}
    for r in long.itertuples(index=False):
        row = (r.dataset, r.model)
        named = not info[r.metric].single
        column = (r.family, header(r.entry, r.value_name, r.direction, named, r.scale))
        rows.setdefault(row, None)
        columns[column] = (info[r.metric].order, r.entry, _position(info[r.metric], r.value_name))
        cells[row, column] = cell(r.mean, r.std, r.n_seeds, r.lower, r.upper)
        if isinstance(r.warnings, str) and r.warnings and cells[row, column] is not None:
            cells[row, column] += f" {WARNING_MARK}"
            lines = r.warnings.split(WARNING_SEPARATOR)
            own = [w for w in lines if not w.startswith(_SATURATED_PREFIX)]
            for w in lines:
                if w.startswith(_SATURATED_PREFIX):
                    saturated[(r.dataset, column)] = w
            if own:
                warned[(*row, column)] = WARNING_SEPARATOR.join(own)
        sizes[row, column] = (
            size_text([r.n_candidate, r.n_candidate_max]),
            size_text([r.n_reference, r.n_reference_max]),
        )
    ordered = sorted(columns, key=columns.__getitem__)
    families = list(dict.fromkeys(f for f, _ in ordered))
    referenced = set(long.loc[long["referenced"].astype(bool), "family"])
    for row in rows:
        for family in families:
            _row_sizes(row, family, [c for c in ordered if c[0] == family], cells, sizes)
    with_sizes = []
    for family in families:
        with_sizes.append((family, N_TEXTS))
        with_sizes += [(family, N_REFERENCES)] if family in referenced else []
        with_sizes += [c for c in ordered if c[0] == family]
    nan = float("nan")  # not None: a rendered table would print "None"
    out = pd.DataFrame(
        [[_or(cells.get((row, c)), nan) for c in with_sizes] for row in rows],
        index=pd.MultiIndex.from_tuples(list(rows), names=["dataset", "model"]),
        columns=pd.MultiIndex.from_tuples(with_sizes, names=["family", "score"]),
        dtype=object,
    )
    out.attrs["scales"] = [s for s in SCALES if s in set(long["scale"].dropna())]
    out.attrs["converted"] = long.attrs["converted"]
    reasons = long[long["lower"].isna() & long["interval"].notna()]
    out.attrs["intervals"] = {
        "levels": sorted(set(long["level"].dropna())),
        "resamples": sorted(set(long["resamples"].dropna())),
        "schemes": sorted(set(long["scheme"].dropna())),
        "none": dict(zip(reasons["entry"], reasons["interval"], strict=True)),
    }
    # (dataset, model, (family, header)) → the value's warnings (joined), the cells marked
    out.attrs["warnings"] = warned
    # (dataset, (family, header)) → the saturation line of a saturated column
    out.attrs["saturated"] = saturated
    return out


def _or(value: str | None, default: float) -> str | float:
    return default if value is None else value


def _row_sizes(row: tuple, family: str, columns: list, cells: dict, sizes: dict) -> None:
    """Fill ``cells`` with the row's sizes in ``family`` (the ones most of its values share)
    and bracket the sizes of a value that differs from them (see the module conventions)."""
    scored = [c for c in columns if cells.get((row, c)) is not None]
    if not scored:
        return
    common = Counter(sizes[row, c][0] for c in scored).most_common(1)[0][0]
    refs = [sizes[row, c][1] for c in scored if sizes[row, c][1] is not None]
    common_ref = Counter(refs).most_common(1)[0][0] if refs else None
    cells[row, (family, N_TEXTS)] = common
    cells[row, (family, N_REFERENCES)] = common_ref
    for c in scored:
        n, ref = sizes[row, c]
        if n is not None and (n != common or (ref is not None and ref != common_ref)):
            cells[row, c] += f" [n {n} / {ref}]" if ref is not None else f" [n {n}]"


def family_tables(table: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """:func:`headline_table` split by family (in column order), each without the rows that
    have no value in it."""
    out = {}
    for family in dict.fromkeys(table.columns.get_level_values(0)):
        sub = table[family].dropna(how="all")
        sub.columns.name = None
        out[family] = sub
    return out


def headline_markdown(table: pd.DataFrame, full_table: str = "scores.csv") -> str:
    """Markdown of :func:`headline_table`: a title, the legend (:func:`table_legend`) and one table
    per family (columns dataset, model, its scores); ``full_table``: where the tidy table is."""
    lines = ["# Scores", "", *(f"- {item}" for item in legend_items(table))]
    lines += [f"- The full table: [{full_table}]({full_table}).", ""]
    tables = family_tables(table)
    if not tables:
        lines += ["No score has a direction of better.", ""]
    for family, sub in tables.items():
        head = ["dataset", "model", *map(str, sub.columns)]
        lines += [f"## {family}", "", _md_row(head), _md_row(["---"] * len(head))]
        for (ds, model), row in sub.iterrows():
            lines.append(_md_row([ds, model, *("–" if pd.isna(v) else v for v in row)]))
        lines.append("")
        lines += [f"{WARNING_MARK} {line}" for line in warning_lines(table, family)]
        lines += [""] if warning_lines(table, family) else []
    return "\n".join(lines)


def warning_lines(table: pd.DataFrame, family: str) -> list[str]:
    """``dataset / header: saturated: ...`` once per saturated column, then
    ``dataset / model / header: warning; warning`` for each other marked cell of ``family`` in
    :func:`headline_table`'s ``table`` (the markdown and the HTML report list them)."""
    return [
        f"{ds} / {head}: {line}"
        for (ds, (fam, head)), line in table.attrs.get("saturated", {}).items()
        if fam == family
    ] + [
        f"{ds} / {model} / {head}: " + "; ".join(w.split(WARNING_SEPARATOR))
        for (ds, model, (fam, head)), w in table.attrs.get("warnings", {}).items()
        if fam == family
    ]


def _md_row(cells: list) -> str:
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"
