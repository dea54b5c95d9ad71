"""The headline score table a person reads: one row per (dataset, model), one column per entry.

Built from the tidy ``results/scores.csv`` (:data:`genmetrics.analysis.correlation.COLUMNS`).
Conventions:

* the *headline value* of a metric entry is its registered metric's first value with a
  direction of better (``get(metric).values``, in registration order), or both values of a pair
  in :data:`PAIRED_HEADLINES` (kNN precision and recall; PRD's F8 and F1/8); ``mean_words`` and values
  without a direction (lengths, counts, ``*_std``) never are, and a metric without any directed
  value (Zipf) has no column;
* a metric that is not registered (e.g. scores of a metric since removed) keeps every value but
  ``mean_words``, under the family :data:`OTHER` and without a direction (no arrow): nothing
  says which of its values is the headline nor which way is better;
* the *family* of a metric is that of the module defining it (:data:`FAMILIES`); families come
  in the order of :data:`FAMILY_ORDER`, then any unlisted module (a family named after it,
  alphabetically), then :data:`OTHER`; within a family, columns follow the module order of
  :data:`FAMILIES`, then the entry name;
* a column is headed ``entry ↑`` (higher is better) or ``entry ↓`` (lower), with the value name
  (``precision_recall: precision ↑``) unless it is the entry's name or the metric's only directed
  value (``pos_compression_ratio ↓``);
* a cell is the mean over seeds, written ``mean ± std`` (ddof=1) where ≥ 2 seeds have a value;
  the human texts (model :data:`REFERENCES`, no seed) are a row, last within their dataset, with
  cells only for the entries they were scored on (none: no row).

* :func:`headline_scores` — the long form: mean, std and number of seeds per (dataset, model,
  entry) headline value (``results/scores_headline.csv``, columns :data:`LONG_COLUMNS`);
* :func:`headline_table` — the readable wide table (string cells, two-level columns: family,
  header);
* :func:`headline_markdown` — that table as markdown, one table per family, with a legend
  (``results/scores_headline.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

#: module of :mod:`genmetrics.metrics` → family, in display order (families and, within each,
#: modules)
FAMILIES = {
    "precision_recall": "quality/diversity",  # kNN precision/recall, density/coverage
    "prd": "quality/diversity",
    "mauve": "quality/diversity",
    "omniinput": "quality/diversity",
    "diversity": "diversity",  # compression ratio, n-gram diversity, self-repetition
    "repetition": "diversity",  # rep-n, distinct-n
    "self_bleu": "diversity",
    "homogenization": "diversity",
    "lexical": "lexical",  # TTR, MATTR, HD-D, MTLD
    "reference": "reference",  # BLEU, ROUGE
    "perplexity": "surprisal",
    "face": "surprisal",
    "zipf": "surprisal",
    "coherence": "coherence",
}
OTHER = "other"
FAMILY_ORDER = tuple(dict.fromkeys(FAMILIES.values()))
#: the model name of the human texts (as :data:`genmetrics.plan.REFERENCES`)
REFERENCES = "references"
ARROWS = {"higher": "↑", "lower": "↓"}
LONG_COLUMNS = [
    "dataset",
    "model",
    "family",
    "entry",
    "metric",
    "value_name",
    "direction",
    "mean",
    "std",
    "n_seeds",
]
LEGEND = (
    "↑ higher is better, ↓ lower is better; each cell is the mean ± std (ddof=1) over seeds "
    "(the mean alone for one seed; the human references have none); – not scored."
)


#: metrics whose finding is a pair of values, both shown: quality and diversity (Le Bronnec et
#: al. 2024: precision and recall; Sajjadi et al. 2018: F8 and F1/8)
PAIRED_HEADLINES = {"precision_recall": ("precision", "recall"), "prd": ("f8", "f1_8")}


@dataclass(frozen=True)
class _Info:
    """What the registry says of one metric name (see the module conventions)."""

    family: str
    order: tuple  # sort key of the metric's module within the families
    headlines: dict[str, str]  # headline value(s) → direction; empty: none (all, if unregistered)
    registered: bool
    single: bool = False  # the headline is the metric's only directed value


def _metric_info(metric: str) -> _Info:
    from genmetrics.metrics import all_metrics

    known = all_metrics()
    if metric not in known:
        return _Info(OTHER, (2,), {}, registered=False)
    m = known[metric]
    module = m.func.__module__.rsplit(".", 1)[-1]
    modules = list(FAMILIES)
    if module in FAMILIES:
        family = FAMILIES[module]
        order = (0, FAMILY_ORDER.index(family), modules.index(module))
    else:
        family, order = module, (1, module)
    directed = [(n, d) for n, d in m.values.items() if n != "mean_words" and d is not None]
    if not directed:
        return _Info(family, order, {}, registered=True)
    names = PAIRED_HEADLINES.get(metric, (directed[0][0],))
    heads = {n: d for n, d in directed if n in names}
    return _Info(family, order, heads, registered=True, single=len(directed) == 1)


def headline_scores(df: pd.DataFrame) -> pd.DataFrame:
    """The long form: one row per (dataset, model, entry, headline value) — see the module
    conventions — with the mean, std (ddof=1, NaN below 2 seeds) and number of seeds with a
    value; sorted by dataset, model (references last), then in column order."""
    info = {m: _metric_info(m) for m in df["metric"].unique()}
    keep = [
        name != "mean_words" and (name in info[m].headlines or not info[m].registered)
        for m, name in zip(df["metric"], df["name"], strict=True)
    ]
    d = df[keep]
    if d.empty:
        return pd.DataFrame(columns=LONG_COLUMNS)
    keys = ["dataset", "model", "entry", "metric", "name"]
    out = d.groupby(keys, sort=False)["value"].agg(mean="mean", std="std", n_seeds="count")
    out = out.reset_index().rename(columns={"name": "value_name"})
    out["family"] = [info[m].family for m in out["metric"]]
    out["direction"] = [
        info[m].headlines.get(v) for m, v in zip(out["metric"], out["value_name"], strict=True)
    ]
    sort_key = [
        (ds, model == REFERENCES, model, info[m].order, e, v)
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
    return out.iloc[order].reset_index(drop=True)[LONG_COLUMNS]


def header(entry: str, value_name: str, direction: str | None, named: bool = True) -> str:
    """``entry: value ↑``; ``entry ↑`` when not ``named`` or the value is named as the entry."""
    name = f"{entry}: {value_name}" if named and value_name != entry else entry
    arrow = ARROWS.get(direction or "")
    return f"{name} {arrow}" if arrow else name


def cell(mean: float, std: float, n_seeds: int) -> str | None:
    """``mean`` (4 significant digits), ``mean ± std`` (2) with ≥ 2 seeds; None: no value."""
    if n_seeds < 1 or math.isnan(mean):
        return None
    if n_seeds >= 2 and not math.isnan(std):
        return f"{mean:.4g} ± {std:.2g}"
    return f"{mean:.4g}"


def headline_table(df: pd.DataFrame) -> pd.DataFrame:
    """The readable table from the tidy scores: index (dataset, model), columns (family,
    header), string cells (``mean ± std``), NaN where a source was not scored on an entry."""
    long = headline_scores(df)
    if long.empty:
        return pd.DataFrame(
            index=pd.MultiIndex.from_arrays([[], []], names=["dataset", "model"]),
            columns=pd.MultiIndex.from_arrays([[], []], names=["family", "score"]),
            dtype=object,
        )
    info = {m: _metric_info(m) for m in long["metric"].unique()}
    rows, columns, cells = {}, {}, {}
    for r in long.itertuples(index=False):
        row = (r.dataset, r.model)
        named = not info[r.metric].single
        column = (r.family, header(r.entry, r.value_name, r.direction, named))
        rows.setdefault(row, None)
        columns[column] = (info[r.metric].order, r.entry, r.value_name)
        cells[row, column] = cell(r.mean, r.std, r.n_seeds)
    ordered = sorted(columns, key=columns.__getitem__)
    return pd.DataFrame(
        [[cells.get((row, c)) for c in ordered] for row in rows],
        index=pd.MultiIndex.from_tuples(list(rows), names=["dataset", "model"]),
        columns=pd.MultiIndex.from_tuples(ordered, names=["family", "score"]),
        dtype=object,
    )


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
    """Markdown of :func:`headline_table`: a title, the legend (:data:`LEGEND`) and one table
    per family (columns dataset, model, its scores); ``full_table``: where the tidy table is."""
    lines = ["# Scores", "", f"{LEGEND} The full table: [{full_table}]({full_table}).", ""]
    tables = family_tables(table)
    if not tables:
        lines += ["No score has a direction of better.", ""]
    for family, sub in tables.items():
        head = ["dataset", "model", *map(str, sub.columns)]
        lines += [f"## {family}", "", _md_row(head), _md_row(["---"] * len(head))]
        for (ds, model), row in sub.iterrows():
            lines.append(_md_row([ds, model, *("–" if pd.isna(v) else v for v in row)]))
        lines.append("")
    return "\n".join(lines)


def _md_row(cells: list) -> str:
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"
