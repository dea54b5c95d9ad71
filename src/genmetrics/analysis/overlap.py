"""Model × model relative overlap (Le Bronnec et al. (2024), Table 1): kNN precision and recall
of one model's texts measured against another model's texts as the reference set.

A metric entry whose ``reference`` is a model (``metrics.<entry>.reference: {model: B, seed:
S}``) scores every other source against ``B/seedS``; its rows in ``results/scores.csv`` carry
``reference = "B/seedS"``. :func:`overlap_long` keeps those rows (the human reference,
``references``, and the prompts are left out: this is the reference-free comparison) and
summarises them over the candidate's seeds; :func:`overlap_matrix` pivots one value into a
candidate × reference table, :func:`overlap_markdown` writes every such table.

Reading it: precision(A | B) high = A's texts lie inside B's support (A says nothing B would
not); recall(A | B) high = A covers B's support (A says everything B says). A pair with high
precision and low recall means A's texts are a narrower subset of B's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import pandas as pd

from genmetrics.analysis.headline import cell

OVERLAP_COLUMNS = ["dataset", "metric", "entry", "candidate", "reference", "name"]
OVERLAP_COLUMNS += ["mean", "std", "n_seeds"]
PR_NAMES = ("precision", "recall")
NO_SCORES = (
    "No model-vs-model precision/recall scores in this run (every precision_recall entry is "
    "measured against the human texts); give an entry `reference: {model: M, seed: S}` to "
    "compare models with each other (Le Bronnec et al. 2024, Table 1)."
)
_MODEL_SOURCE = re.compile(r".+/seed\d+")


def overlap_long(
    scores: pd.DataFrame, metric: str = "precision_recall", names: Sequence[str] = PR_NAMES
) -> pd.DataFrame:
    """One row per (dataset, metric, entry, candidate model, reference source, value name):
    ``mean`` and ``std`` (ddof=1, NaN for one seed) over the candidate's seeds and their
    number, from the rows of ``scores`` (the tidy ``results/scores.csv``) whose ``reference``
    is a model's generations (``model/seedN``). Columns :data:`OVERLAP_COLUMNS`."""
    ref = scores["reference"].astype("string")
    keep = (
        (scores["metric"] == metric)
        & scores["name"].isin(list(names))
        & ref.fillna("").str.fullmatch(_MODEL_SOURCE.pattern)
    )
    d = scores[keep.fillna(False).astype(bool)]
    if d.empty:
        return pd.DataFrame(columns=OVERLAP_COLUMNS)
    d = d.rename(columns={"model": "candidate"})
    keys = ["dataset", "metric", "entry", "candidate", "reference", "name"]
    out = d.groupby(keys)["value"].agg(mean="mean", std="std", n_seeds="count").reset_index()
    return out[OVERLAP_COLUMNS]


def overlap_matrix(
    long: pd.DataFrame, dataset: str, name: str, stat: str = "mean", metric: str | None = None
) -> pd.DataFrame:
    """``stat`` (mean, std or n_seeds) of value ``name`` on one dataset: rows = candidate
    model, columns = reference source (``B/seedS``); NaN where a pair was not scored. Rows of
    several entries (e.g. one per reference model) meet in one table; ``metric``: only that
    metric's rows (default: all of :func:`overlap_long`'s, one metric)."""
    d = long[(long["dataset"] == dataset) & (long["name"] == name)]
    if metric is not None:
        d = d[d["metric"] == metric]
    m = d.pivot_table(index="candidate", columns="reference", values=stat, aggfunc="first")
    m.index.name, m.columns.name = "candidate", "reference"
    return m


def overlap_markdown(long: pd.DataFrame) -> str:
    """Markdown: per dataset, one candidate × reference table whose cells are ``precision /
    recall`` (mean ± std over the candidate's seeds); one line when there is nothing to show."""
    lines = ["# Model × model overlap (Le Bronnec et al. 2024, Table 1)", ""]
    if long.empty:
        return "\n".join([*lines, NO_SCORES, ""])
    lines += [
        "Each cell: kNN precision / recall of the row model's texts with the column's texts "
        "as the reference set, mean ± std over the row model's seeds; – not scored. "
        "Precision: share of the row model's texts inside the column's support (quality "
        "relative to it); recall: share of the column's texts inside the row model's support "
        "(how much of it the row model covers).",
        "",
    ]
    for ds in dict.fromkeys(long["dataset"]):
        sub = long[long["dataset"] == ds]
        cands = sorted(set(sub["candidate"]))
        refs = sorted(set(sub["reference"]))
        stats = {
            (n, s): overlap_matrix(long, ds, n, s).reindex(index=cands, columns=refs)
            for n in PR_NAMES
            for s in ("mean", "std", "n_seeds")
        }
        lines += [f"## {ds}", "", _md_row(["candidate \\ reference", *refs])]
        lines.append(_md_row(["---"] * (len(refs) + 1)))
        for c in cands:
            row = [c]
            for r in refs:
                parts = []
                for n in PR_NAMES:
                    mean, std = stats[n, "mean"].at[c, r], stats[n, "std"].at[c, r]
                    k = stats[n, "n_seeds"].at[c, r]
                    parts.append(cell(mean, std, 0 if pd.isna(k) else int(k)) or "–")
                row.append(" / ".join(parts))
            lines.append(_md_row(row))
        lines.append("")
    return "\n".join(lines)


def _md_row(cells: list) -> str:
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"
